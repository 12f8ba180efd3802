"""The derived catalog entries tools/catalog_derive.py writes: one Row per published model, built from a sibling
whose config was read. ``why`` says what the model is relative to that sibling and where that statement comes from
(the model card of the repo, the family's table); every changed value is listed in the entry it produces.

Values marked "model card" come from the repo's README (architecture tables: layers, heads, KV heads, context,
parameter counts); values marked "family" are those every member of the family shares (tokenizer size, head_dim,
norms) and are taken from the sibling. None of them was read from the repo's own config.json.
"""

from __future__ import annotations

from catalog_derive import Row

_SAME_BASE = "The pretrained (base) checkpoint of the same model; the instruct release is fine-tuned from it with the " \
             "same architecture (model card)."
_SAME_INSTRUCT = "The instruction-tuned release of the same model; fine-tuned from the base with the same architecture " \
                 "(model card)."


def _base(slug: str, base: str, hf: str, *aliases: str, **kw) -> Row:
    return Row(slug, base, hf, kw.pop("why", _SAME_BASE), aliases, **kw)


def _inst(slug: str, base: str, hf: str, *aliases: str, **kw) -> Row:
    return Row(slug, base, hf, kw.pop("why", _SAME_INSTRUCT), aliases, **kw)


def _bases(slug: str, base: str, hf: str, name: str, sizes: str) -> list[Row]:
    """A family's base releases, one per size: the patterns take {s}, the size as the repo writes it, and {l}, the
    same lower-cased."""
    return [_base(slug.format(s=s, l=s.lower()), base.format(s=s, l=s.lower()), hf.format(s=s, l=s.lower()),
                  name=name.format(s=s, l=s.lower())) for s in sizes.split()]


def _tune(slug: str, base: str, hf: str, of: str, *aliases: str, **kw) -> Row:
    why = kw.pop("why", f"A fine-tune of {of} with its architecture unchanged (model card: 'fine-tuned from {of}').")
    return Row(slug, base, hf, why, aliases, **kw)


def _decoder(hidden: int, layers: int, heads: int, kv_heads: int, ff: int, **more) -> dict:
    """A decoder's shape as a model card's table gives it, with the keys in the order HF configs list them
    (the derived entry names its changed values in this order)."""
    return {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "intermediate_size": ff, **more}


def _qwen3_base(size: str, why: str = "") -> Row:
    """A pretrained Qwen3: the post-trained model's shapes at 32,768 positions (model card)."""
    return Row(f"qwen3-{size.lower()}-base", f"qwen3-{size.lower()}", f"Qwen/Qwen3-{size}-Base",
               why or f"The pretrained Qwen3 {size} (model card: 32,768 context).", name=f"Qwen3 {size} Base",
               text={"max_position_embeddings": 32768})


def _qwen2_vl(size: str, hidden: int, layers: int, heads: int, kv_heads: int, ff: int, why: str, **more) -> Row:
    """A Qwen2-VL size: the Qwen2 decoder of that size (vocabulary 152,064, untied output) under the 2B's vision
    tower, its merger out to the decoder's width."""
    return Row(f"qwen2-vl-{size.lower()}-instruct", "qwen2-vl-2b-instruct", f"Qwen/Qwen2-VL-{size}-Instruct", why,
               text=_decoder(hidden, layers, heads, kv_heads, ff, vocab_size=152064, tie_word_embeddings=False, **more,
                             vision_config={"hidden_size": hidden, "in_chans": 3, "model_type": "qwen2_vl",
                                            "spatial_patch_size": 14}),
               name=f"Qwen2-VL {size} Instruct")


def _thinking(family: str, size: str, *aliases: str, tag: str = "") -> Row:
    """A Qwen thinking release: the Instruct release's architecture (model card)."""
    slug, suffix = f"{family}-{size}".lower(), f"-{tag}" if tag else ""
    return Row(f"{slug}-thinking{suffix}", f"{slug}-instruct{suffix}", f"Qwen/{family}-{size}-Thinking{suffix}",
               f"The thinking{f'-mode {tag}' if tag else ''} release of {family} {size}, the same architecture as "
               f"the Instruct{suffix} release (model card).", aliases,
               name=f"{family} {size} Thinking{f' {tag}' if tag else ''}")


def _granitemoe(size: str, layers: int, hidden: int, heads: int, experts: int) -> list[Row]:
    """A Granite 3.1 MoE size from its model card (8 KV heads, experts of width 512 with 8 active, vocabulary 49,155,
    128K context, tied embeddings) and its base twin."""
    slug = f"granite-3.1-{size.lower()}"
    inst = Row(f"{slug}-instruct", "granite-3.1-8b-instruct", f"ibm-granite/{slug}-instruct",
               f"Granite 3.1 {size} (model card): a GraniteMoE with {layers} layers, hidden {hidden}, {heads} query / 8 "
               f"KV heads, {experts} experts of width 512 (8 active), vocabulary 49,155, 128K context, tied embeddings.",
               (f"granite3.1-moe:{size.split('-')[0].lower()}",
         # ollama.com/library/granite3.1-moe: latest is the 3b
         *(("granite3.1-moe",) if size.startswith("3B") else ())),
               config={"architectures": ["GraniteMoeForCausalLM"], "model_type": "granitemoe", "hidden_size": hidden,
                       "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": 8,
                       "intermediate_size": 512, "num_local_experts": experts, "num_experts_per_tok": 8,
                       "vocab_size": 49155, "max_position_embeddings": 131072, "tie_word_embeddings": True,
                       "torch_dtype": "bfloat16"},
               name=f"Granite 3.1 {size} Instruct")
    return [inst, _base(f"{slug}-base", f"{slug}-instruct", f"ibm-granite/{slug}-base", name=f"Granite 3.1 {size} Base")]


ROWS: list[Row] = [
    # ---- Llama -------------------------------------------------------------------------------------------------
    _base("llama-2-7b", "llama-2-7b-chat", "meta-llama/Llama-2-7b-hf", "llama2:7b-text", name="Llama 2 7B"),
    _base("llama-2-13b", "llama-2-13b-chat", "meta-llama/Llama-2-13b-hf", "llama2:13b-text", name="Llama 2 13B"),
    _inst("llama-2-70b-chat", "llama-2-70b", "meta-llama/Llama-2-70b-chat-hf", "llama2:70b-chat", "llama2:70b",
          name="Llama 2 70B Chat"),
    _base("llama-3-8b", "llama-3-8b-instruct", "meta-llama/Meta-Llama-3-8B", "llama3:8b-text", name="Llama 3 8B"),
    Row("llama-3-70b-instruct", "llama-3.1-70b-instruct", "meta-llama/Meta-Llama-3-70B-Instruct",
        "Llama 3 70B: the Llama 3.1 70B architecture at the first release's 8,192-token context without the llama3 "
        "RoPE scaling (model card: 70B, GQA, 8K context; Llama 3.1 kept the shapes and extended the context).",
        ("llama3:70b", "llama3:70b-instruct"), name="Llama 3 70B Instruct",
        text={"max_position_embeddings": 8192, "rope_scaling": None}),
    _base("llama-3-70b", "llama-3-70b-instruct", "meta-llama/Meta-Llama-3-70B", "llama3:70b-text",
          name="Llama 3 70B"),
    _base("llama-3.2-1b", "llama-3.2-1b-instruct", "meta-llama/Llama-3.2-1B", "llama3.2:1b-text",
          name="Llama 3.2 1B"),
    _base("llama-4-scout-17b-16e", "llama-4-scout-17b-16e-instruct", "meta-llama/Llama-4-Scout-17B-16E",
          name="Llama 4 Scout 17B-16E"),
    _base("llama-4-maverick-17b-128e", "llama-4-maverick-17b-128e-instruct", "meta-llama/Llama-4-Maverick-17B-128E",
          name="Llama 4 Maverick 17B-128E"),
    _tune("llama-guard-3-8b", "llama-3.1-8b", "meta-llama/Llama-Guard-3-8B", "Llama-3.1-8B", "llama-guard3:8b", "llama-guard3"),
    _tune("llama-3.1-nemotron-70b-instruct", "llama-3.1-70b-instruct", "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF",
          "Llama-3.1-70B-Instruct", "nemotron:70b", "nemotron", family="nemotron"),
    _tune("llama-3.1-nemotron-nano-8b-v1", "llama-3.1-8b-instruct", "nvidia/Llama-3.1-Nemotron-Nano-8B-v1",
          "Llama-3.1-8B-Instruct", family="nemotron"),
    _tune("hermes-3-llama-3.1-8b", "llama-3.1-8b", "NousResearch/Hermes-3-Llama-3.1-8B", "Llama-3.1-8B",
          "hermes3:8b", "hermes3", family="llama"),  # ollama.com/library/hermes3: latest is the 8b
    _tune("hermes-3-llama-3.1-70b", "llama-3.1-70b", "NousResearch/Hermes-3-Llama-3.1-70B", "Llama-3.1-70B",
          "hermes3:70b", family="llama"),
    _tune("hermes-3-llama-3.1-405b", "llama-3.1-405b", "NousResearch/Hermes-3-Llama-3.1-405B", "Llama-3.1-405B",
          "hermes3:405b", family="llama"),
    # ollama.com/library/dolphin3: one tag, 8b (latest, Q4_K_M): Dolphin 3.0 Llama 3.1 8B, a fine-tune of Llama-3.1-8B
    # (model card); its f16 GGUF is Llama-3.1-8B's 16.1 GB
    _tune("dolphin3.0-llama3.1-8b", "llama-3.1-8b", "cognitivecomputations/Dolphin3.0-Llama3.1-8B", "Llama-3.1-8B",
          "dolphin3", "dolphin3:8b", "dolphin3:8b-llama3.1", "dphn/dolphin3.0-llama3.1-8b", name="Dolphin 3.0 Llama 3.1 8B", family="llama"),
    _tune("llama-3.1-tulu-3-8b", "llama-3.1-8b", "allenai/Llama-3.1-Tulu-3-8B", "Llama-3.1-8B", "tulu3:8b", "tulu3"),
    _tune("llama-3.1-tulu-3-70b", "llama-3.1-70b", "allenai/Llama-3.1-Tulu-3-70B", "Llama-3.1-70B", "tulu3:70b"),
    _tune("cogito-v1-preview-llama-3b", "llama-3.2-3b", "deepcogito/cogito-v1-preview-llama-3B", "Llama-3.2-3B",
          "cogito:3b"),
    _tune("cogito-v1-preview-llama-8b", "llama-3.1-8b", "deepcogito/cogito-v1-preview-llama-8B", "Llama-3.1-8B",
          "cogito:8b", "cogito"),  # ollama.com/library/cogito: latest is the 8b
    _tune("cogito-v1-preview-qwen-14b", "qwen2.5-14b", "deepcogito/cogito-v1-preview-qwen-14B", "Qwen2.5-14B",
          "cogito:14b", family="qwen"),
    _tune("cogito-v1-preview-qwen-32b", "qwen2.5-32b", "deepcogito/cogito-v1-preview-qwen-32B", "Qwen2.5-32B",
          "cogito:32b", family="qwen"),
    _tune("cogito-v1-preview-llama-70b", "llama-3.1-70b", "deepcogito/cogito-v1-preview-llama-70B",
          "Llama-3.3-70B (Llama 3.1 70B shapes)", "cogito:70b"),
    _tune("vicuna-7b-v1.5", "llama-2-7b", "lmsys/vicuna-7b-v1.5", "Llama-2-7b", "vicuna:7b", "vicuna"),
    _tune("vicuna-13b-v1.5", "llama-2-13b", "lmsys/vicuna-13b-v1.5", "Llama-2-13b", "vicuna:13b"),
    # Code Llama
    # ollama.com/library/codellama: the size tags (and latest, the 7b) are the instruct models; "-code" the base
    _inst("codellama-7b-instruct", "codellama-7b", "codellama/CodeLlama-7b-Instruct-hf", "codellama:7b-instruct",
          "codellama", "codellama:7b",
          name="Code Llama 7B Instruct"),
    _inst("codellama-13b-instruct", "codellama-13b", "codellama/CodeLlama-13b-Instruct-hf", "codellama:13b",
          "codellama:13b-instruct", name="Code Llama 13B Instruct"),
    _inst("codellama-34b-instruct", "codellama-34b", "codellama/CodeLlama-34b-Instruct-hf", "codellama:34b",
          "codellama:34b-instruct", name="Code Llama 34B Instruct"),
    Row("codellama-7b-python", "codellama-7b", "codellama/CodeLlama-7b-Python-hf",
        "The Python specialisation of Code Llama 7B; the Python models drop the 16 infilling tokens (vocabulary "
        "32,000 instead of 32,016; model card / paper, Table 'Code Llama - Python').", ("codellama:7b-python",),
        text={"vocab_size": 32000}, name="Code Llama 7B Python"),
    Row("codellama-13b-python", "codellama-13b", "codellama/CodeLlama-13b-Python-hf",
        "The Python specialisation of Code Llama 13B (vocabulary 32,000: no infilling tokens).", ("codellama:13b-python",),
        text={"vocab_size": 32000}, name="Code Llama 13B Python"),
    Row("codellama-34b-python", "codellama-34b", "codellama/CodeLlama-34b-Python-hf",
        "The Python specialisation of Code Llama 34B (its vocabulary is 32,000 like every 34B Code Llama).",
        ("codellama:34b-python",), name="Code Llama 34B Python"),
    Row("codellama-70b", "llama-2-70b", "codellama/CodeLlama-70b-hf",
        "Code Llama 70B: Llama 2 70B shapes trained from Llama 2 70B, 16,384-token context with rope_theta 1e6, "
        "vocabulary 32,016 (model card; Code Llama paper).", ("codellama:70b-code",),
        text={"max_position_embeddings": 16384, "rope_theta": 1000000, "vocab_size": 32016}, name="Code Llama 70B"),
    _inst("codellama-70b-instruct", "codellama-70b", "codellama/CodeLlama-70b-Instruct-hf", "codellama:70b-instruct",
          "codellama:70b",
          name="Code Llama 70B Instruct"),
    # ---- Qwen 1.5 / 2 / 2.5 --------------------------------------------------------------------------------------
    Row("qwen1.5-14b-chat", "qwen1.5-7b-chat", "Qwen/Qwen1.5-14B-Chat",
        "Qwen1.5 14B: 40 layers, hidden 5120, 40 heads (no GQA), FFN 13,696, vocabulary 152,064, 32K context (Qwen1.5 "
        "model cards and blog table).", ("qwen/qwen1.5-14b", "qwen:14b"),
        text=_decoder(5120, 40, 40, 40, 13696, vocab_size=152064), name="Qwen1.5 14B Chat"),
    Row("qwen1.5-32b-chat", "qwen1.5-7b-chat", "Qwen/Qwen1.5-32B-Chat",
        "Qwen1.5 32B: 64 layers, hidden 5120, 40 query / 8 KV heads (the first Qwen1.5 with GQA), FFN 27,392, "
        "vocabulary 152,064 (model card).", ("qwen/qwen1.5-32b", "qwen:32b"),
        text=_decoder(5120, 64, 40, 8, 27392, vocab_size=152064), name="Qwen1.5 32B Chat"),
    Row("qwen1.5-72b-chat", "qwen1.5-7b-chat", "Qwen/Qwen1.5-72B-Chat",
        "Qwen1.5 72B: 80 layers, hidden 8192, 64 heads (no GQA), FFN 24,576, vocabulary 152,064 (model card).",
        ("qwen/qwen1.5-72b", "qwen:72b"),
        text=_decoder(8192, 80, 64, 64, 24576, vocab_size=152064), name="Qwen1.5 72B Chat"),
    Row("qwen1.5-110b-chat", "qwen1.5-7b-chat", "Qwen/Qwen1.5-110B-Chat",
        "Qwen1.5 110B: 80 layers, hidden 8192, 64 query / 8 KV heads, FFN 49,152, vocabulary 152,064 (model card).",
        ("qwen/qwen1.5-110b", "qwen:110b"),
        text=_decoder(8192, 80, 64, 8, 49152, vocab_size=152064), name="Qwen1.5 110B Chat"),
    *_bases("qwen2-{l}", "qwen2-{l}-instruct", "Qwen/Qwen2-{s}", "Qwen2 {s}", "0.5B 1.5B 7B 72B"),
    *_bases("qwen2.5-{l}", "qwen2.5-{l}-instruct", "Qwen/Qwen2.5-{s}", "Qwen2.5 {s}", "0.5B 1.5B 72B"),
    Row("qwen2.5-coder-0.5b-instruct", "qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-Coder-0.5B-Instruct",
        "Qwen2.5-Coder 0.5B: the Qwen2.5 0.5B architecture (model card: 0.49B, 24 layers, 14/2 heads, tied "
        "embeddings, 32,768 context).", ("qwen2.5-coder:0.5b",), name="Qwen2.5 Coder 0.5B Instruct"),
    Row("qwen2.5-coder-1.5b-instruct", "qwen2.5-1.5b-instruct", "Qwen/Qwen2.5-Coder-1.5B-Instruct",
        "Qwen2.5-Coder 1.5B: the Qwen2.5 1.5B architecture (model card: 1.54B, 28 layers, 12/2 heads, tied "
        "embeddings); 32,768 context (131,072 with YaRN).", ("qwen2.5-coder:1.5b",),
        name="Qwen2.5 Coder 1.5B Instruct"),
    Row("qwen2.5-coder-3b-instruct", "qwen2.5-3b-instruct", "Qwen/Qwen2.5-Coder-3B-Instruct",
        "Qwen2.5-Coder 3B: the Qwen2.5 3B architecture (model card: 3.09B, 36 layers, 16/2 heads, tied embeddings).",
        ("qwen2.5-coder:3b",), name="Qwen2.5 Coder 3B Instruct"),
    Row("qwen2.5-coder-14b-instruct", "qwen2.5-14b-instruct", "Qwen/Qwen2.5-Coder-14B-Instruct",
        "Qwen2.5-Coder 14B: the Qwen2.5 14B architecture (model card: 14.7B, 48 layers, 40/8 heads).",
        ("qwen2.5-coder:14b",), name="Qwen2.5 Coder 14B Instruct"),
    *_bases("qwen2.5-coder-{l}", "qwen2.5-coder-{l}-instruct", "Qwen/Qwen2.5-Coder-{s}", "Qwen2.5 Coder {s}",
            "0.5B 1.5B 3B 7B 14B 32B"),
    Row("qwen2.5-math-1.5b-instruct", "qwen2.5-1.5b-instruct", "Qwen/Qwen2.5-Math-1.5B-Instruct",
        "Qwen2.5-Math 1.5B: the Qwen2.5 1.5B architecture with a 4,096-token context (model card: 'supports 4K').",
        ("qwen2-math:1.5b",), text={"max_position_embeddings": 4096}, name="Qwen2.5 Math 1.5B Instruct"),
    Row("qwen2.5-math-7b-instruct", "qwen2.5-7b-instruct", "Qwen/Qwen2.5-Math-7B-Instruct",
        "Qwen2.5-Math 7B: the Qwen2.5 7B architecture with a 4,096-token context (model card).", ("qwen2-math:7b", "qwen2-math"),
        text={"max_position_embeddings": 4096}, name="Qwen2.5 Math 7B Instruct"),
    Row("qwen2.5-math-72b-instruct", "qwen2.5-72b-instruct", "Qwen/Qwen2.5-Math-72B-Instruct",
        "Qwen2.5-Math 72B: the Qwen2.5 72B architecture with a 4,096-token context (model card).", ("qwen2-math:72b",),
        text={"max_position_embeddings": 4096}, name="Qwen2.5 Math 72B Instruct"),
    Row("qwen2.5-7b-instruct-1m", "qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct-1M",
        "The 1M-context Qwen2.5 7B: same shapes, 1,010,000 positions (model card: context length 1,010,000 tokens).",
        ("qwen2.5:7b-instruct-1m",), text={"max_position_embeddings": 1010000}, name="Qwen2.5 7B Instruct 1M"),
    Row("qwen2.5-14b-instruct-1m", "qwen2.5-14b-instruct", "Qwen/Qwen2.5-14B-Instruct-1M",
        "The 1M-context Qwen2.5 14B: same shapes, 1,010,000 positions (model card).", ("qwen2.5:14b-instruct-1m",),
        text={"max_position_embeddings": 1010000}, name="Qwen2.5 14B Instruct 1M"),
    _tune("qwq-32b-preview", "qwen2.5-32b-instruct", "Qwen/QwQ-32B-Preview", "Qwen2.5-32B-Instruct",
          name="QwQ 32B Preview"),
    _tune("openreasoning-nemotron-7b", "qwen2.5-7b-instruct", "nvidia/OpenReasoning-Nemotron-7B", "Qwen2.5-7B-Instruct",
          family="nemotron"),
    _tune("openreasoning-nemotron-14b", "qwen2.5-14b-instruct", "nvidia/OpenReasoning-Nemotron-14B",
          "Qwen2.5-14B-Instruct", family="nemotron"),
    _tune("openreasoning-nemotron-32b", "qwen2.5-32b-instruct", "nvidia/OpenReasoning-Nemotron-32B",
          "Qwen2.5-32B-Instruct", family="nemotron"),
    # ---- Qwen 3 ---------------------------------------------------------------------------------------------------
    _qwen3_base("0.6B", "The pretrained Qwen3 0.6B; the base releases keep the post-trained model's shapes with "
                "32,768 positions (model card: 'Context Length: 32,768')."),
    *(_qwen3_base(size) for size in ("1.7B", "4B", "8B", "14B", "32B", "30B-A3B")),
    _thinking("Qwen3", "4B", "qwen3:4b-thinking-2507", tag="2507"),
    _thinking("Qwen3", "30B-A3B", "qwen3:30b-a3b-thinking-2507", tag="2507"),
    _thinking("Qwen3", "235B-A22B", "qwen3:235b-a22b-thinking-2507", tag="2507"),
    _thinking("Qwen3-Next", "80B-A3B"),
    Row("qwen3-coder-next", "qwen3-next-80b-a3b-instruct", "Qwen/Qwen3-Coder-Next",
        "Qwen3-Coder-Next: the coding model built on Qwen3-Next 80B-A3B (hybrid Gated DeltaNet / gated attention, "
        "512 experts, 3B active), 262,144-token native context (model card).", ("qwen3-coder-next",),
        name="Qwen3 Coder Next"),
    *(_thinking("Qwen3-VL", size) for size in ("2B", "4B", "8B", "30B-A3B", "235B-A22B")),
    Row("qwen3-embedding-0.6b", "qwen3-0.6b-base", "Qwen/Qwen3-Embedding-0.6B",
        "Qwen3 Embedding 0.6B: built on Qwen3-0.6B-Base (model card: 28 layers, 32K context, 1024-dim embeddings); "
        "tied embeddings, so the missing LM head changes no count. Its embedding has 151,669 rows, not the base's "
        "151,936: the checkpoint printed as a module "
        "(code search id 36906153470, the 0.6B embedding model: embed_tokens Embedding(151669, 1024)) and a test "
        "fixture holding its published config.json's vocab_size 151669 (id 70255335171), as the 0.6B reranker's "
        "verbatim config.json has it; llama.cpp's converter writes token_embd with the checkpoint's rows "
        "(conversion/qwen.py Qwen3Model.modify_tensors passes embed_tokens through).",
        ("qwen3-embedding:0.6b",), family="embedding", name="Qwen3 Embedding 0.6B", text={"vocab_size": 151669}),
    Row("qwen3-embedding-4b", "qwen3-4b-base", "Qwen/Qwen3-Embedding-4B",
        "Qwen3 Embedding 4B: built on Qwen3-4B-Base (model card: 36 layers, 32K context, 2560-dim embeddings); tied "
        "embeddings.", ("qwen3-embedding:4b",), family="embedding", name="Qwen3 Embedding 4B"),
    Row("qwen3-reranker-4b", "qwen3-4b-base", "Qwen/Qwen3-Reranker-4B",
        "Qwen3 Reranker 4B: Qwen3-4B-Base scored through its LM head (model card: 36 layers, 32K context).",
        family="embedding", name="Qwen3 Reranker 4B"),
    Row("gte-qwen2-1.5b-instruct", "qwen2-1.5b-instruct", "Alibaba-NLP/gte-Qwen2-1.5B-instruct",
        "gte-Qwen2 1.5B: an embedding model trained from Qwen2-1.5B (model card: 28 layers, 1536-dim embeddings, "
        "32K context); tied embeddings, so the missing LM head changes no count.", family="embedding",
        name="gte-Qwen2 1.5B Instruct"),
    # ---- DeepSeek -------------------------------------------------------------------------------------------------
    Row("deepseek-v2", "deepseek-v2.5-1210", "deepseek-ai/DeepSeek-V2",
        "DeepSeek-V2 (236B, 21B active): the architecture V2.5 kept (model card; DeepSeek-V2.5 merges V2-Chat and "
        "Coder-V2 with the same shapes).", ("deepseek-v2:236b",), name="DeepSeek V2"),
    _inst("deepseek-v2-chat", "deepseek-v2", "deepseek-ai/DeepSeek-V2-Chat", name="DeepSeek V2 Chat"),
    _inst("deepseek-v2-chat-0628", "deepseek-v2", "deepseek-ai/DeepSeek-V2-Chat-0628", name="DeepSeek V2 Chat 0628"),
    Row("deepseek-v2.5", "deepseek-v2.5-1210", "deepseek-ai/DeepSeek-V2.5", "The first DeepSeek-V2.5 release; "
        "V2.5-1210 updated its weights with the same architecture (model card).", ("deepseek-v2.5",),
        name="DeepSeek V2.5"),
    Row("deepseek-coder-v2-instruct", "deepseek-v2", "deepseek-ai/DeepSeek-Coder-V2-Instruct",
        "DeepSeek-Coder-V2 (236B, 21B active): continued pretraining of DeepSeek-V2 with the same architecture, "
        "128K context (model card).", ("deepseek-coder-v2:236b",), name="DeepSeek Coder V2 Instruct"),
    _base("deepseek-coder-v2-base", "deepseek-coder-v2-instruct", "deepseek-ai/DeepSeek-Coder-V2-Base",
          name="DeepSeek Coder V2 Base"),
    _inst("deepseek-v2-lite-chat", "deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite-Chat",
          name="DeepSeek V2 Lite Chat"),
    # ollama.com/library/deepseek-coder-v2: latest is the 16b, "16b-lite-instruct"
    _inst("deepseek-coder-v2-lite-instruct", "deepseek-coder-v2-lite", "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct",
          "deepseek-coder-v2", "deepseek-coder-v2:16b", "deepseek-coder-v2:16b-lite-instruct",
          name="DeepSeek Coder V2 Lite Instruct"),
    Row("deepseek-v3-0324", "deepseek-v3", "deepseek-ai/DeepSeek-V3-0324", "An updated DeepSeek-V3 checkpoint with "
        "the V3 architecture unchanged (model card).", ("deepseek-v3:671b-0324",), name="DeepSeek V3 0324"),
    _base("deepseek-v3-base", "deepseek-v3", "deepseek-ai/DeepSeek-V3-Base", name="DeepSeek V3 Base"),
    Row("deepseek-r1-0528", "deepseek-r1", "deepseek-ai/DeepSeek-R1-0528", "The May 2025 update of DeepSeek-R1, "
        "same architecture (model card).", ("deepseek-r1:671b-0528",), name="DeepSeek R1 0528"),
    Row("deepseek-r1-zero", "deepseek-r1", "deepseek-ai/DeepSeek-R1-Zero", "DeepSeek-R1-Zero: RL from "
        "DeepSeek-V3-Base without SFT, the same architecture as R1 (model card).", name="DeepSeek R1 Zero"),
    Row("deepseek-v3.1-terminus", "deepseek-v3.1", "deepseek-ai/DeepSeek-V3.1-Terminus", "An update of DeepSeek-V3.1 "
        "with the same architecture (model card).", ("deepseek-v3.1:671b-terminus",), name="DeepSeek V3.1 Terminus"),
    _base("deepseek-v3.1-base", "deepseek-v3.1", "deepseek-ai/DeepSeek-V3.1-Base", name="DeepSeek V3.1 Base"),
    Row("deepseek-v3.2-exp", "deepseek-v3.2", "deepseek-ai/DeepSeek-V3.2-Exp", "The experimental release that "
        "introduced DeepSeek Sparse Attention, the architecture V3.2 kept (model card).", name="DeepSeek V3.2 Exp"),
    Row("deepseek-v3.2-speciale", "deepseek-v3.2", "deepseek-ai/DeepSeek-V3.2-Speciale", "The high-compute "
        "reasoning variant of DeepSeek-V3.2, same architecture (model card).", name="DeepSeek V3.2 Speciale"),
    Row("deepseek-prover-v2-671b", "deepseek-v3", "deepseek-ai/DeepSeek-Prover-V2-671B", "DeepSeek-Prover-V2 671B: "
        "built on DeepSeek-V3-Base with its architecture (model card).", name="DeepSeek Prover V2 671B"),
    _base("deepseek-coder-6.7b-base", "deepseek-coder-6.7b-instruct", "deepseek-ai/deepseek-coder-6.7b-base",
          name="DeepSeek Coder 6.7B Base"),
    # ollama.com/library/deepseek-coder: "1.3 billion parameter model: ollama run deepseek-coder" (latest is the 1.3b)
    Row("deepseek-coder-1.3b-instruct", "deepseek-coder-6.7b-instruct", "deepseek-ai/deepseek-coder-1.3b-instruct",
        "DeepSeek-Coder 1.3B: 24 layers, hidden 2048, 16 heads, FFN 5,504, the family's 32,256-token vocabulary and "
        "16K context (model card / paper Table 2).", ("deepseek-coder:1.3b", "deepseek-coder"),
        text=_decoder(2048, 24, 16, 16, 5504), name="DeepSeek Coder 1.3B Instruct"),
    Row("deepseek-coder-33b-instruct", "deepseek-coder-6.7b-instruct", "deepseek-ai/deepseek-coder-33b-instruct",
        "DeepSeek-Coder 33B: 62 layers, hidden 7168, 56 query / 8 KV heads, FFN 19,200, vocabulary 32,256 (paper "
        "Table 2).", ("deepseek-coder:33b",),
        text=_decoder(7168, 62, 56, 8, 19200), name="DeepSeek Coder 33B Instruct"),
    Row("deepseek-llm-7b-chat", "llama-2-7b-chat", "deepseek-ai/deepseek-llm-7b-chat",
        "DeepSeek LLM 7B: a Llama-architecture model, 30 layers, hidden 4096, 32 heads, FFN 11,008, vocabulary "
        "102,400, 4K context (DeepSeek LLM paper Table 2).", ("deepseek-llm:7b", "deepseek-llm"),
        text={"num_hidden_layers": 30, "vocab_size": 102400, "torch_dtype": "bfloat16"},
        family="deepseek", name="DeepSeek LLM 7B Chat"),
    Row("deepseek-llm-67b-chat", "llama-2-70b", "deepseek-ai/deepseek-llm-67b-chat",
        "DeepSeek LLM 67B: a Llama-architecture model, 95 layers, hidden 8192, 64 query / 8 KV heads, FFN 22,016, "
        "vocabulary 102,400, 4K context (DeepSeek LLM paper Table 2).", ("deepseek-llm:67b",),
        text={"num_hidden_layers": 95, "intermediate_size": 22016, "vocab_size": 102400,
              "max_position_embeddings": 4096, "torch_dtype": "bfloat16"},
        family="deepseek", name="DeepSeek LLM 67B Chat"),
    Row("deepseek-math-7b-instruct", "deepseek-llm-7b-chat", "deepseek-ai/deepseek-math-7b-instruct",
        "DeepSeekMath 7B: initialised from DeepSeek-Coder-v1.5 7B, the DeepSeek LLM 7B architecture (paper).",
        name="DeepSeek Math 7B Instruct"),
    # ---- Kimi / Moonshot ------------------------------------------------------------------------------------------
    _base("kimi-k2-base", "kimi-k2-instruct", "moonshotai/Kimi-K2-Base", name="Kimi K2 Base"),
    Row("kimi-k2-instruct-0905", "kimi-k2-instruct", "moonshotai/Kimi-K2-Instruct-0905",
        "The September 2025 Kimi K2 Instruct: same architecture, context extended to 256K (model card: 'context "
        "length 256K').", text={"max_position_embeddings": 262144}, name="Kimi K2 Instruct 0905"),
    Row("kimi-k2-thinking", "kimi-k2-instruct-0905", "moonshotai/Kimi-K2-Thinking",
        "Kimi K2 Thinking: the K2 architecture with 256K context, released natively INT4 (QAT) on the routed "
        "experts (model card); its quantization_config is taken as Kimi-K2.5's verbatim one (INT4 group 32; "
        "attention, shared experts, dense MLP and lm_head unquantized), which the two releases share by their model "
        "cards' description.", ("kimi-k2-thinking",),
        top={"quantization_config": {"config_groups": {"group_0": {"input_activations": None, "output_activations": None,
             "targets": ["Linear"], "weights": {"actorder": None, "block_structure": None, "dynamic": False,
             "group_size": 32, "num_bits": 4, "observer": "minmax", "observer_kwargs": {}, "strategy": "group",
             "symmetric": True, "type": "int"}}}, "format": "pack-quantized", "ignore": ["lm_head",
             "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
             "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}},
        params=1026408232448, params_source="Kimi K2's published total (the architecture is K2's; the INT4 "
        "packing does not change the parameter count): 1,026,408,232,448", name="Kimi K2 Thinking"),
    Row("kimi-k2.6", "kimi-k2.5", "moonshotai/Kimi-K2.6",
        "Kimi K2.6: nvidia/Kimi-K2.6-NVFP4's config.json (ai-dynamo/aiconfigurator@095f58a51c4c "
        "model_configs/nvidia--Kimi-K2.6-NVFP4_config.json) carries the K2.5 architecture (kimi_k25, 61 layers, "
        "384 experts, MoonViT), so the original is taken as K2.5's.", ("kimi-k2.6",), name="Kimi K2.6"),
    # ---- GLM -----------------------------------------------------------------------------------------------------
    Row("glm-4.5", "glm-4.7", "zai-org/GLM-4.5", "GLM-4.5 (355B, 32B active): the architecture GLM-4.6 and 4.7 kept; "
        "128K context (model card).", ("glm-4.5",), text={"max_position_embeddings": 131072}, name="GLM 4.5"),
    Row("glm-4.6", "glm-4.7", "zai-org/GLM-4.6", "GLM-4.6: the GLM-4.5 architecture with the context extended to "
        "200K (model card).", ("glm-4.6", "glm-4.6:355b"), name="GLM 4.6"),
    _base("glm-4.5-air-base", "glm-4.5-air", "zai-org/GLM-4.5-Air-Base", name="GLM 4.5 Air Base"),
    _base("glm-4-9b", "glm-4-9b-chat", "THUDM/glm-4-9b", name="GLM-4 9B"),
    Row("glm-4-9b-chat-1m", "glm-4-9b-chat", "THUDM/glm-4-9b-chat-1m", "GLM-4-9B-Chat-1M: the GLM-4-9B-Chat "
        "architecture with a 1M-token context (model card).", text={"seq_length": 1048576},
        name="GLM-4 9B Chat 1M"),
    # ---- MiniMax -------------------------------------------------------------------------------------------------
    Row("minimax-m2", "minimax-m2.5", "MiniMaxAI/MiniMax-M2", "MiniMax-M2 (230B, 10B active): the architecture M2.1 "
        "and M2.5 kept (model cards).", ("minimax-m2",), name="MiniMax M2"),
    Row("minimax-m2.1", "minimax-m2.5", "MiniMaxAI/MiniMax-M2.1", "MiniMax-M2.1: the M2 architecture (model card).",
        name="MiniMax M2.1"),
    # ---- Mistral -------------------------------------------------------------------------------------------------
    _inst("mistral-7b-instruct-v0.1", "mistral-7b-v0.1", "mistralai/Mistral-7B-Instruct-v0.1",
          name="Mistral 7B Instruct v0.1"),
    _base("mistral-7b-v0.3", "mistral-7b-instruct-v0.3", "mistralai/Mistral-7B-v0.3", "mistral:7b-text-v0.3",
          name="Mistral 7B v0.3"),
    _tune("zephyr-7b-beta", "mistral-7b-v0.1", "HuggingFaceH4/zephyr-7b-beta", "Mistral-7B-v0.1", "zephyr:7b", "zephyr"),
    _tune("openhermes-2.5-mistral-7b", "mistral-7b-v0.1", "teknium/OpenHermes-2.5-Mistral-7B", "Mistral-7B-v0.1",
          "openhermes:7b", "openhermes", why="A fine-tune of Mistral-7B-v0.1 (model card); the ChatML tokens extend the "
          "vocabulary to 32,002.", text={"vocab_size": 32002}),
    Row("mathstral-7b-v0.1", "mistral-7b-instruct-v0.3", "mistralai/Mathstral-7B-v0.1",
        "Mathstral 7B: built on Mistral 7B with the v0.3 tokenizer (32,768) and 32K context (model card).",
        ("mathstral:7b", "mathstral"), name="Mathstral 7B v0.1"),
    Row("codestral-22b-v0.1", "mistral-small-instruct-2409", "mistralai/Codestral-22B-v0.1",
        "Codestral 22B: 56 layers, hidden 6144, 48/8 heads, vocabulary 32,768, 32K context: the shapes Mistral Small "
        "2409 (22B) shares (model cards).", ("codestral:22b", "codestral"), name="Codestral 22B v0.1"),
    Row("mistral-small-24b-instruct-2501", "mistral-small-3.1-24b-instruct-2503",
        "mistralai/Mistral-Small-24B-Instruct-2501", "Mistral Small 3 (2501): the text-only model whose decoder "
        "Mistral Small 3.1 kept (same 23,572,403,200 decoder; model card: 24B, 32K context, Tekken 131K vocabulary).",
        # ollama.com/library/mistral-small: tags 22b and 24b (latest); Mistral Small 3.1 is its own library
        ("mistral-small:24b", "mistral-small"), flat=True,
        text={"architectures": ["MistralForCausalLM"], "max_position_embeddings": 32768},
        name="Mistral Small 24B Instruct 2501"),
    _base("mistral-small-24b-base-2501", "mistral-small-24b-instruct-2501", "mistralai/Mistral-Small-24B-Base-2501",
          name="Mistral Small 24B Base 2501"),
    _base("mistral-small-3.1-24b-base-2503", "mistral-small-3.1-24b-instruct-2503",
          "mistralai/Mistral-Small-3.1-24B-Base-2503", name="Mistral Small 3.1 24B Base 2503"),
    Row("mistral-small-3.2-24b-instruct-2506", "mistral-small-3.1-24b-instruct-2503",
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506", "Mistral Small 3.2: a minor update of Small 3.1 with the same "
        "architecture, vision encoder included (model card).", ("mistral-small3.2:24b", "mistral-small3.2",
        # LM Studio's key (its /api/v1/models: "key": "mistralai/mistral-small-3.2", lmstudio-bug-tracker#1462)
        "mistralai/mistral-small-3.2"),
        name="Mistral Small 3.2 24B Instruct 2506"),
    Row("magistral-small-2506", "mistral-small-24b-instruct-2501", "mistralai/Magistral-Small-2506",
        "Magistral Small 2506: a reasoning model built on Mistral Small 3.1 (text only), 128K context window, "
        "recommended up to 40K (model card); max_position_embeddings as the card's 40K recommendation.",
        ("magistral:24b", "magistral"), text={"max_position_embeddings": 40960}, name="Magistral Small 2506"),
    Row("magistral-small-2507", "magistral-small-2506", "mistralai/Magistral-Small-2507", "The July 2025 update of "
        "Magistral Small, same architecture (model card).", name="Magistral Small 2507"),
    Row("magistral-small-2509", "mistral-small-3.2-24b-instruct-2506", "mistralai/Magistral-Small-2509",
        "Magistral Small 1.2 (2509): built on Mistral Small 3.2 with its vision encoder (model card: 'now with a "
        "vision encoder').", name="Magistral Small 2509"),
    Row("devstral-small-2505", "mistral-small-24b-instruct-2501", "mistralai/Devstral-Small-2505",
        "Devstral Small 2505: fine-tuned from Mistral-Small-3.1 with the vision encoder removed, 128K context "
        "(model card).", ("devstral:24b", "devstral"), text={"max_position_embeddings": 131072},
        name="Devstral Small 2505"),
    Row("devstral-small-2507", "devstral-small-2505", "mistralai/Devstral-Small-2507", "The July 2025 update of "
        "Devstral Small, same architecture (model card).", name="Devstral Small 2507"),
    Row("devstral-small-2-24b-instruct-2512", "magistral-small-2509", "mistralai/Devstral-Small-2-24B-Instruct-2512",
        "Devstral Small 2 (24B, December 2025): the Mistral Small 3.x decoder (40 layers, hidden 5,120, 32 query / 8 "
        "KV heads of 128, FFN 32,768, vocabulary 131,072) with its Pixtral vision encoder, 256K context. The text "
        "values are those a public test fixture copies from the repo's config.json (code search id 69428305514, "
        "'verified' against the real model: text_config model_type ministral3, max_position_embeddings 262,144, "
        "rope_parameters yarn factor 48 over 8,192 original positions, rope_theta 1e8, llama_4_scaling_beta 0.1); "
        "second-hand, the repo's own file was not read.",
        ("devstral-small-2", "devstral-small-2:24b", "mistralai/devstral-small-2-24b-instruct-2512"),
        text={"model_type": "ministral3", "max_position_embeddings": 262144,
              "rope_parameters": {"type": "yarn", "rope_type": "yarn", "rope_theta": 100000000.0, "factor": 48.0,
                                  "original_max_position_embeddings": 8192, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1}},
        name="Devstral Small 2 24B Instruct 2512"),
    Row("devstral-2-123b-instruct-2512", "mistral-large-instruct-2411", "mistralai/Devstral-2-123B-Instruct-2512",
        "Devstral 2 (123B, December 2025): a dense decoder of Mistral Large 2's shape (88 layers, hidden 12,288, 96 "
        "query / 8 KV heads of 128, FFN 28,672, no sliding window) with the 131,072-token Tekken vocabulary and 256K "
        "context (model card). The shape values are those a public sharding analysis reads from the repo's "
        "config.json (code search id 60894986745: architectures Ministral3ForCausalLM, hidden_size 12288, "
        "num_attention_heads 96, num_key_value_heads 8, head_dim 128, intermediate_size 28672, vocab_size 131072, "
        "num_hidden_layers 88, sliding_window null); second-hand, the repo's own file was not read.",
        ("devstral-2", "devstral-2:123b", "mistralai/devstral-2-123b-instruct-2512"),
        top={"architectures": ["Ministral3ForCausalLM"], "model_type": "ministral3", "head_dim": 128,
             "vocab_size": 131072, "max_position_embeddings": 262144},
        name="Devstral 2 123B Instruct 2512"),
    _inst("mistral-large-instruct-2411", "mistral-large-instruct-2407", "mistralai/Mistral-Large-Instruct-2411",
          why="The November 2024 update of Mistral Large 2 (123B), same architecture (model card).",
          name="Mistral Large Instruct 2411"),
    _base("mistral-nemo-base-2407", "mistral-nemo-instruct-2407", "mistralai/Mistral-Nemo-Base-2407",
          name="Mistral Nemo Base 2407"),
    _inst("mixtral-8x22b-instruct-v0.1", "mixtral-8x22b-v0.1", "mistralai/Mixtral-8x22B-Instruct-v0.1",
          "mixtral:8x22b", "mixtral:8x22b-instruct", why="The instruction-tuned Mixtral 8x22B; the v3 tokenizer's vocabulary is "
          "32,768 (model card).", text={"vocab_size": 32768}, name="Mixtral 8x22B Instruct v0.1"),
    _tune("nous-hermes-2-mixtral-8x7b-dpo", "mixtral-8x7b-v0.1", "NousResearch/Nous-Hermes-2-Mixtral-8x7B-DPO",
          "Mixtral-8x7B-v0.1", "nous-hermes2-mixtral:8x7b", "nous-hermes2-mixtral", why="A fine-tune of Mixtral-8x7B-v0.1 (model card); the "
          "ChatML tokens extend the vocabulary to 32,002.", text={"vocab_size": 32002}),
    _tune("wizardlm-2-8x22b", "mixtral-8x22b-v0.1", "alpindale/WizardLM-2-8x22B", "Mixtral-8x22B-v0.1",
          "wizardlm2:8x22b", family="mistral"),
    # ollama.com/library/wizardlm2: latest is the 7b (Q4_0), Microsoft's WizardLM-2 7B, whose base is Mistral-7B-v0.1
    # (WizardLM-2 release card's table: "WizardLM-2 7B | base model Mistral-7B-v0.1"); mirrored after Microsoft's
    # repo was withdrawn
    _tune("wizardlm-2-7b", "mistral-7b-v0.1", "dreamgen/WizardLM-2-7B", "Mistral-7B-v0.1", "wizardlm2",
          "wizardlm2:7b", "microsoft/wizardlm-2-7b", name="WizardLM-2 7B", family="mistral"),
    # ollama.com/library/openchat: latest is the 7b, OpenChat 3.5 0106 (Q4_0); a fine-tune of Mistral-7B-v0.1 with an
    # 8,192-token context and <|end_of_turn|> / <|pad_0|> added to the vocabulary (model card)
    _tune("openchat-3.5-0106", "mistral-7b-v0.1", "openchat/openchat-3.5-0106", "Mistral-7B-v0.1", "openchat",
          "openchat:7b", "openchat:7b-v3.5", "openchat:7b-v3.5-0106", name="OpenChat 3.5 0106", family="mistral",
          why="A fine-tune of Mistral-7B-v0.1 (model card); trained and served at 8,192 tokens (model card: "
          "'8192 context') and its two added tokens (<|end_of_turn|>, <|pad_0|>) extend the vocabulary to 32,002.",
          text={"max_position_embeddings": 8192, "vocab_size": 32002}),
    # ollama.com/library/nous-hermes2: tags 10.7b (latest, Q4_0) and 34b: Nous-Hermes-2 on SOLAR 10.7B and on Yi-34B
    _tune("nous-hermes-2-solar-10.7b", "solar-10.7b-v1.0", "NousResearch/Nous-Hermes-2-SOLAR-10.7B", "SOLAR-10.7B-v1.0",
          "nous-hermes2", "nous-hermes2:10.7b", "nous-hermes2:10.7b-solar", name="Nous Hermes 2 SOLAR 10.7B", family="solar",
          why="A fine-tune of SOLAR-10.7B-v1.0 (model card); the ChatML tokens extend the vocabulary to 32,002.",
          text={"vocab_size": 32002}),
    _tune("nous-hermes-2-yi-34b", "yi-34b", "NousResearch/Nous-Hermes-2-Yi-34B", "Yi-34B", "nous-hermes2:34b", "nous-hermes2:34b-yi",
          name="Nous Hermes 2 Yi 34B", family="yi"),
    # ---- Gemma ---------------------------------------------------------------------------------------------------
    _base("gemma-2-2b", "gemma-2-2b-it", "google/gemma-2-2b", "gemma2:2b-text", name="Gemma 2 2B"),
    _base("gemma-2-9b", "gemma-2-9b-it", "google/gemma-2-9b", "gemma2:9b-text", name="Gemma 2 9B"),
    _base("gemma-2-27b", "gemma-2-27b-it", "google/gemma-2-27b", "gemma2:27b-text", name="Gemma 2 27B"),
    *_bases("gemma-3-{l}-pt", "gemma-3-{l}-it", "google/gemma-3-{l}-pt", "Gemma 3 {s} PT", "1B 4B 12B 27B"),
    _inst("gemma-2b-it", "gemma-2b", "google/gemma-2b-it", name="Gemma 2B IT"),
    _inst("gemma-7b-it", "gemma-7b", "google/gemma-7b-it", name="Gemma 7B IT"),
    # ollama.com/library/gemma ("updated to version 1.1"): 2b and 7b (latest) are the 1.1 instruct models
    _inst("gemma-1.1-2b-it", "gemma-2b", "google/gemma-1.1-2b-it", "gemma:2b", "gemma:2b-instruct-v1.1",
          why="Gemma 1.1: an RLHF update of Gemma 2B IT "
          "with the same architecture (model card).", name="Gemma 1.1 2B IT"),
    _inst("gemma-1.1-7b-it", "gemma-7b", "google/gemma-1.1-7b-it", "gemma", "gemma:7b", "gemma:7b-instruct-v1.1",
          why="Gemma 1.1: an RLHF update of Gemma 7B IT "
          "with the same architecture (model card).", name="Gemma 1.1 7B IT"),
    _tune("codegemma-7b", "gemma-7b", "google/codegemma-7b", "Gemma 7B", "codegemma:7b-code"),
    _tune("codegemma-7b-it", "gemma-7b", "google/codegemma-7b-it", "Gemma 7B", "codegemma:7b", "codegemma"),
    _tune("codegemma-2b", "gemma-2b", "google/codegemma-2b", "Gemma 2B", "codegemma:2b"),
    _tune("shieldgemma-2b", "gemma-2-2b", "google/shieldgemma-2b", "Gemma 2 2B", "shieldgemma:2b"),
    _tune("shieldgemma-9b", "gemma-2-9b", "google/shieldgemma-9b", "Gemma 2 9B", "shieldgemma:9b", "shieldgemma"),
    _tune("shieldgemma-27b", "gemma-2-27b", "google/shieldgemma-27b", "Gemma 2 27B", "shieldgemma:27b"),
    _tune("medgemma-4b-it", "gemma-3-4b-it", "google/medgemma-4b-it", "Gemma 3 4B (with its SigLIP encoder)"),
    _tune("medgemma-27b-it", "gemma-3-27b-it", "google/medgemma-27b-it", "Gemma 3 27B (multimodal)"),
    # ---- Phi -----------------------------------------------------------------------------------------------------
    Row("phi-3-medium-4k-instruct", "phi-3-mini-4k-instruct", "microsoft/Phi-3-medium-4k-instruct",
        "Phi-3 medium (14B): 40 layers, hidden 5120, 40 query / 10 KV heads, FFN 17,920, the family's 32,064 "
        "vocabulary, 4K context (Phi-3 technical report, model card).", ("phi3:14b", "phi3:medium"),
        text=_decoder(5120, 40, 40, 10, 17920), name="Phi-3 Medium 4K Instruct"),
    Row("phi-3-medium-128k-instruct", "phi-3-mini-128k-instruct", "microsoft/Phi-3-medium-128k-instruct",
        "Phi-3 medium (14B) with the 128K LongRoPE context: the medium shapes (40 layers, hidden 5120, 40/10 heads, "
        "FFN 17,920) on the mini-128k's context settings (model card).", ("phi3:14b-medium-128k-instruct",),
        text=_decoder(5120, 40, 40, 10, 17920), name="Phi-3 Medium 128K Instruct"),
    _tune("phi-4-reasoning", "phi-4", "microsoft/Phi-4-reasoning", "Phi-4", "phi4-reasoning:14b", "phi4-reasoning",
          why="Phi-4-reasoning: Phi-4 fine-tuned for reasoning, 32K context (model card).",
          text={"max_position_embeddings": 32768}),
    _tune("phi-4-reasoning-plus", "phi-4-reasoning", "microsoft/Phi-4-reasoning-plus", "Phi-4 (via Phi-4-reasoning)",
          "phi4-reasoning:plus"),
    _tune("phi-4-mini-reasoning", "phi-4-mini-instruct", "microsoft/Phi-4-mini-reasoning", "Phi-4-mini",
          "phi4-mini-reasoning:3.8b", "phi4-mini-reasoning"),
    # ---- gpt-oss -------------------------------------------------------------------------------------------------
    _tune("gpt-oss-safeguard-20b", "gpt-oss-20b", "openai/gpt-oss-safeguard-20b", "gpt-oss-20b",
          "gpt-oss-safeguard:20b", "gpt-oss-safeguard"),
    _tune("gpt-oss-safeguard-120b", "gpt-oss-120b", "openai/gpt-oss-safeguard-120b", "gpt-oss-120b",
          "gpt-oss-safeguard:120b"),
    # ---- Granite -------------------------------------------------------------------------------------------------
    _base("granite-3.1-8b-base", "granite-3.1-8b-instruct", "ibm-granite/granite-3.1-8b-base",
          name="Granite 3.1 8B Base"),
    _base("granite-3.3-2b-base", "granite-3.3-2b-instruct", "ibm-granite/granite-3.3-2b-base",
          name="Granite 3.3 2B Base"),
    _base("granite-3.3-8b-base", "granite-3.3-8b-instruct", "ibm-granite/granite-3.3-8b-base",
          name="Granite 3.3 8B Base"),
    Row("granite-3.1-2b-instruct", "granite-3.3-2b-instruct", "ibm-granite/granite-3.1-2b-instruct",
        "Granite 3.1 2B: the dense 2B architecture Granite 3.3 kept (40 layers, hidden 2048, 32/8 heads, 128K "
        "context; model card); its vocabulary is 49,155 (3.3 added 4 tokens).", ("granite3.1-dense:2b",),
        text={"vocab_size": 49155}, name="Granite 3.1 2B Instruct"),
    _base("granite-3.1-2b-base", "granite-3.1-2b-instruct", "ibm-granite/granite-3.1-2b-base",
          name="Granite 3.1 2B Base"),
    Row("granite-3.0-2b-instruct", "granite-3.1-2b-instruct", "ibm-granite/granite-3.0-2b-instruct",
        "Granite 3.0 2B: the dense 2B architecture with a 4,096-token context (model card: 'context length 4K'; "
        "3.1 extended it to 128K).", ("granite3-dense:2b", "granite3-dense"), text={"max_position_embeddings": 4096},
        name="Granite 3.0 2B Instruct"),
    Row("granite-3.0-8b-instruct", "granite-3.1-8b-instruct", "ibm-granite/granite-3.0-8b-instruct",
        "Granite 3.0 8B: the dense 8B architecture with a 4,096-token context (model card).", ("granite3-dense:8b",),
        text={"max_position_embeddings": 4096}, name="Granite 3.0 8B Instruct"),
    _base("granite-3.0-2b-base", "granite-3.0-2b-instruct", "ibm-granite/granite-3.0-2b-base",
          name="Granite 3.0 2B Base"),
    _base("granite-3.0-8b-base", "granite-3.0-8b-instruct", "ibm-granite/granite-3.0-8b-base",
          name="Granite 3.0 8B Base"),
    Row("granite-3.2-2b-instruct", "granite-3.1-2b-instruct", "ibm-granite/granite-3.2-2b-instruct",
        "Granite 3.2 2B: fine-tuned from Granite 3.1 2B with its architecture (model card).", ("granite3.2:2b",),
        name="Granite 3.2 2B Instruct"),
    Row("granite-3.2-8b-instruct", "granite-3.1-8b-instruct", "ibm-granite/granite-3.2-8b-instruct",
        "Granite 3.2 8B: fine-tuned from Granite 3.1 8B with its architecture (model card).", ("granite3.2:8b", "granite3.2"),
        name="Granite 3.2 8B Instruct"),
    _base("granite-4.0-h-tiny-base", "granite-4.0-h-tiny", "ibm-granite/granite-4.0-h-tiny-base",
          name="Granite 4.0 H Tiny Base"),
    # ---- OLMo ----------------------------------------------------------------------------------------------------
    # ollama.com/library/olmo2: the 7b (latest) and 13b tags are the instruct models ("7b-1124-instruct")
    _inst("olmo-2-1124-7b-instruct", "olmo-2-1124-7b", "allenai/OLMo-2-1124-7B-Instruct", "olmo2:7b-instruct", "olmo2",
          "olmo2:7b",
          name="OLMo 2 7B Instruct"),
    _inst("olmo-2-1124-13b-instruct", "olmo-2-1124-13b", "allenai/OLMo-2-1124-13B-Instruct", "olmo2:13b-instruct",
          "olmo2:13b",
          name="OLMo 2 13B Instruct"),
    _inst("olmo-2-0325-32b-instruct", "olmo-2-0325-32b", "allenai/OLMo-2-0325-32B-Instruct", name="OLMo 2 32B Instruct"),
    _inst("olmoe-1b-7b-0924-instruct", "olmoe-1b-7b-0924", "allenai/OLMoE-1B-7B-0924-Instruct",
          name="OLMoE 1B-7B 0924 Instruct"),
    Row("olmoe-1b-7b-0125", "olmoe-1b-7b-0924", "allenai/OLMoE-1B-7B-0125", "The January 2025 OLMoE: the same "
        "1B-active / 7B MoE architecture retrained (model card).", name="OLMoE 1B-7B 0125"),
    _inst("olmoe-1b-7b-0125-instruct", "olmoe-1b-7b-0125", "allenai/OLMoE-1B-7B-0125-Instruct",
          name="OLMoE 1B-7B 0125 Instruct"),
    # ---- Falcon --------------------------------------------------------------------------------------------------
    *_bases("falcon-h1-{l}-base", "falcon-h1-{l}-instruct", "tiiuae/Falcon-H1-{s}-Base", "Falcon-H1 {s} Base",
            "0.5B 1.5B 3B 7B 34B"),
    # ---- Jamba ---------------------------------------------------------------------------------------------------
    Row("ai21-jamba-mini-1.5", "jamba-v0.1", "ai21labs/AI21-Jamba-Mini-1.5",
        "Jamba 1.5 Mini (52B, 12B active): the Jamba v0.1 architecture (32 layers, attention every 8th, MoE every "
        "2nd, 16 experts, 2 active), 256K context (model card; Jamba-1.5 paper Table 1).", ("jamba-mini-1.5",),
        name="Jamba 1.5 Mini", family="jamba"),
    Row("ai21-jamba-mini-1.6", "ai21-jamba-mini-1.5", "ai21labs/AI21-Jamba-Mini-1.6", "Jamba Mini 1.6: the Jamba 1.5 "
        "Mini architecture (model card).", name="Jamba Mini 1.6"),
    Row("ai21-jamba-mini-1.7", "ai21-jamba-mini-1.5", "ai21labs/AI21-Jamba-Mini-1.7", "Jamba Mini 1.7: the Jamba 1.5 "
        "Mini architecture (model card).", name="Jamba Mini 1.7"),
    # ---- Nemotron ------------------------------------------------------------------------------------------------
    _inst("nemotron-h-56b-instruct-8k", "nemotron-h-56b-base-8k", "nvidia/Nemotron-H-56B-Instruct-8K",
          name="Nemotron-H 56B Instruct 8K"),
    _base("nemotron-3-nano-30b-a3b-base", "nemotron-3-nano-30b-a3b", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-Base-BF16",
          name="Nemotron 3 Nano 30B-A3B Base"),
    # ---- Cohere --------------------------------------------------------------------------------------------------
    Row("c4ai-command-r-08-2024", "c4ai-command-r-v01", "CohereForAI/c4ai-command-r-08-2024",
        "Command R 08-2024 (32B): 40 layers, hidden 8192, 64 query / 8 KV heads (GQA replaced v01's full MHA), FFN "
        "24,576, vocabulary 256,000, 128K context (model card).",
        # Ollama's library: command-r / command-r:35b have been the 08-2024 release since August 2024 (the
        # earlier weights moved to the -v0.1 tags: command-r:35b-v0.1-q4_K_M, -fp16 in public scripts; library
        # sizes: command-r:latest 18 GB, command-r:35b-08-2024-q4_K_M 18.4 GB, v0.1 about 20 GB)
        ("command-r:35b-08-2024", "command-r:35b", "command-r"),
        text={"num_key_value_heads": 8, "intermediate_size": 24576}, name="Command R 08-2024"),
    Row("aya-expanse-32b", "c4ai-command-r-08-2024", "CohereForAI/aya-expanse-32b",
        "Aya Expanse 32B: built on Command R 08-2024's 32B architecture, 128K context (model card).",
        ("aya-expanse:32b", "coherelabs/aya-expanse-32b"), name="Aya Expanse 32B"),
    Row("aya-expanse-8b", "aya-23-8b", "CohereForAI/aya-expanse-8b", "Aya Expanse 8B: the Aya 23 8B architecture "
        "(Command R family, 8K context; model card).", ("aya-expanse:8b", "aya-expanse", "coherelabs/aya-expanse-8b"),
        name="Aya Expanse 8B"),
    # ---- SmolLM --------------------------------------------------------------------------------------------------
    *_bases("smollm-{l}", "smollm-{l}-instruct", "HuggingFaceTB/SmolLM-{s}", "SmolLM {s}", "135M 360M 1.7B"),
    *_bases("smollm2-{l}", "smollm2-{l}-instruct", "HuggingFaceTB/SmolLM2-{s}", "SmolLM2 {s}", "135M 360M 1.7B"),
    # ---- embeddings and rerankers --------------------------------------------------------------------------------
    Row("mxbai-embed-large-v1", "bge-large-en-v1.5", "mixedbread-ai/mxbai-embed-large-v1",
        "mxbai-embed-large-v1: a BERT-large encoder (24 layers, 1024 wide, 335M parameters, 512 tokens; model card), "
        "the shapes of bge-large-en-v1.5.", ("mxbai-embed-large", "mxbai-embed-large:335m"), family="embedding",
        name="mxbai-embed-large v1"),
    Row("snowflake-arctic-embed-l", "bge-large-en-v1.5", "Snowflake/snowflake-arctic-embed-l",
        "snowflake-arctic-embed-l: a BERT-large encoder (335M, 1024-dim; model card), the shapes of bge-large.",
        ("snowflake-arctic-embed:335m", "snowflake-arctic-embed"), family="embedding", name="snowflake-arctic-embed-l"),
    Row("e5-large-v2", "bge-large-en-v1.5", "intfloat/e5-large-v2", "e5-large-v2: a BERT-large encoder (24 layers, "
        "1024 wide, 335M; model card).", family="embedding", name="E5 large v2"),
    Row("gte-large", "bge-large-en-v1.5", "thenlper/gte-large", "gte-large: a BERT-large encoder (335M, 1024-dim, "
        "512 tokens; model card).", family="embedding", name="GTE large"),
    Row("bge-base-en-v1.5", "bge-large-en-v1.5", "BAAI/bge-base-en-v1.5", "bge-base-en-v1.5: a BERT-base encoder (12 "
        "layers, 768 wide, 12 heads, FFN 3072; 109M; model card).", family="embedding", name="BGE base en v1.5",
        text={"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}),
    Row("e5-base-v2", "bge-base-en-v1.5", "intfloat/e5-base-v2", "e5-base-v2: a BERT-base encoder (109M; model "
        "card).", family="embedding", name="E5 base v2"),
    Row("gte-base", "bge-base-en-v1.5", "thenlper/gte-base", "gte-base: a BERT-base encoder (109M; model card).",
        family="embedding", name="GTE base"),
    Row("snowflake-arctic-embed-m-v1.5", "snowflake-arctic-embed-m", "Snowflake/snowflake-arctic-embed-m-v1.5",
        "snowflake-arctic-embed-m v1.5: the arctic-embed-m encoder retrained (model card).", family="embedding",
        name="snowflake-arctic-embed-m v1.5"),
    Row("nomic-embed-text-v1", "nomic-embed-text-v1.5", "nomic-ai/nomic-embed-text-v1", "nomic-embed-text v1: the "
        "nomic-bert encoder v1.5 was trained from (model card).", family="embedding", name="nomic-embed-text v1"),
    Row("multilingual-e5-large-instruct", "multilingual-e5-large", "intfloat/multilingual-e5-large-instruct",
        "multilingual-e5-large-instruct: the XLM-RoBERTa-large encoder of multilingual-e5-large (model card).",
        family="embedding", name="multilingual E5 large instruct"),
    Row("multilingual-e5-base", "multilingual-e5-large", "intfloat/multilingual-e5-base", "multilingual-e5-base: an "
        "XLM-RoBERTa-base encoder (12 layers, 768 wide, 278M; model card).", family="embedding",
        name="multilingual E5 base",
        text={"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}),
    Row("granite-embedding-278m-multilingual", "multilingual-e5-base", "ibm-granite/granite-embedding-278m-multilingual",
        "Granite Embedding 278M multilingual: an XLM-RoBERTa-base encoder (278M, 768-dim; model card).",
        ("granite-embedding:278m",), family="embedding", name="Granite Embedding 278M multilingual"),
    Row("bge-reranker-v2-m3", "bge-m3", "BAAI/bge-reranker-v2-m3", "bge-reranker-v2-m3: a cross-encoder "
        "initialised from bge-m3 (XLM-RoBERTa-large, 568M; model card); the one-logit classifier head is not counted.",
        family="embedding", name="BGE reranker v2 m3"),
    Row("bge-reranker-large", "multilingual-e5-large", "BAAI/bge-reranker-large", "bge-reranker-large: an "
        "XLM-RoBERTa-large cross-encoder (560M; model card); the classifier head is not counted.",
        family="embedding", name="BGE reranker large"),
    Row("bge-reranker-base", "multilingual-e5-base", "BAAI/bge-reranker-base", "bge-reranker-base: an XLM-RoBERTa-base "
        "cross-encoder (278M; model card); the classifier head is not counted.", family="embedding",
        name="BGE reranker base"),
    # ---- others --------------------------------------------------------------------------------------------------
    # LLaVA 1.6 (LLaVA-NeXT) Mistral 7B: Ollama's llava / llava:7b. ollama/ollama's demo READMEs name one model blob,
    # sha256-170370233dd5..., for both `ollama pull llava` (llama/llava/README.md @ce82d7c6) and `ollama pull
    # llava:7b-v1.6-mistral-q4_0` (llama/example/README.md @ba6502fc)
    Row("llava-v1.6-mistral-7b-hf", "llava-1.5-7b-hf", "llava-hf/llava-v1.6-mistral-7b-hf",
        "LLaVA 1.6 Mistral 7B: LLaVA 1.5's CLIP ViT-L/14-336 tower and two-layer MLP projector over "
        "Mistral-7B-Instruct-v0.2 (the LLaVA author in haotian-liu/LLaVA#1061: 'Base LLM: "
        "mistralai/Mistral-7B-Instruct-v0.2'), whose decoder is 32 layers of 4096, FFN 14336, 32 query / 8 KV heads, "
        "rope_theta 1e6, 32,768 positions, no sliding window (the catalog's mistral-7b-instruct-v0.2). The same "
        "values, with the llava-hf conversion's 32,064-row vocabulary and the CLIP tower's, are the arguments a public "
        "fine-tuning script passes for llava-hf/llava-v1.6-mistral-7b-hf, citing its config.json (code search id "
        "31194183862). LLaVA-NeXT's image_newline (4,096 values) is not counted.",
        ("llava", "llava:7b", "llava:7b-v1.6", "llava:7b-v1.6-mistral", "liuhaotian/llava-v1.6-mistral-7b"),
        name="LLaVA 1.6 Mistral 7B (HF)", family="llava",
        top={"architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next"},
        text={"architectures": ["MistralForCausalLM"], "model_type": "mistral", "intermediate_size": 14336,
              "num_key_value_heads": 8, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
              "sliding_window": None}),
    # ollama.com/library/llava: 7b (latest), 13b and 34b, each LLaVA 1.6 (13b-v1.6 / 34b-v1.6, Q4_0): the same CLIP
    # tower and projector over Vicuna-13B-v1.5 / Nous-Hermes-2-Yi-34B (LLaVA-NeXT model cards: 'Base LLM'), their
    # vocabularies padded to a multiple of 64 after the <image> and <pad> tokens as llava-hf's conversion does
    # (convert_llava_next_weights_to_hf.py: resize_token_embeddings(vocab + 2, pad_shape=64))
    Row("llava-v1.6-vicuna-13b-hf", "llava-v1.6-mistral-7b-hf", "llava-hf/llava-v1.6-vicuna-13b-hf",
        "LLaVA 1.6 Vicuna 13B: LLaVA 1.6's CLIP ViT-L/14-336 tower and projector over Vicuna-13B-v1.5 (model card: "
        "'Base LLM: lmsys/vicuna-13b-v1.5'): 40 layers of 5120, FFN 13,824, 40 heads without GQA, 4,096 positions; "
        "vocabulary 32,064.", ("llava:13b", "llava:13b-v1.6", "llava:13b-v1.6-vicuna", "liuhaotian/llava-v1.6-vicuna-13b"),
        name="LLaVA 1.6 Vicuna 13B (HF)", family="llava",
        text={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 5120,
              "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 40, "intermediate_size": 13824,
              "max_position_embeddings": 4096, "rope_theta": 10000.0}),
    Row("llava-v1.6-34b-hf", "llava-v1.6-mistral-7b-hf", "llava-hf/llava-v1.6-34b-hf",
        "LLaVA 1.6 34B: LLaVA 1.6's CLIP ViT-L/14-336 tower and projector over Nous-Hermes-2-Yi-34B (model card: "
        "'Base LLM: NousResearch/Nous-Hermes-2-Yi-34B'): Yi-34B's 60 layers of 7168, FFN 20,480, 56 query / 8 KV "
        "heads, 4,096 positions, rope_theta 5e6; vocabulary 64,000 + 2 padded to 64,064.",
        ("llava:34b", "llava:34b-v1.6", "liuhaotian/llava-v1.6-34b"), name="LLaVA 1.6 34B (HF)", family="llava",
        top={"vocab_size": 64064},
        text={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 7168,
              "num_hidden_layers": 60, "num_attention_heads": 56, "num_key_value_heads": 8, "intermediate_size": 20480,
              "max_position_embeddings": 4096, "rope_theta": 5000000.0, "vocab_size": 64064}),
    _base("yi-6b", "yi-6b-chat", "01-ai/Yi-6B", name="Yi 6B"),
    _inst("yi-34b-chat", "yi-34b", "01-ai/Yi-34B-Chat", name="Yi 34B Chat"),
    Row("yi-1.5-6b-chat", "yi-6b-chat", "01-ai/Yi-1.5-6B-Chat", "Yi-1.5 6B: continued pretraining of Yi 6B with its "
        "architecture (model card).", ("yi:6b-v1.5", "yi", "yi:6b"), name="Yi 1.5 6B Chat"),
    Row("yi-1.5-34b-chat", "yi-34b", "01-ai/Yi-1.5-34B-Chat", "Yi-1.5 34B: continued pretraining of Yi 34B with its "
        "architecture (model card).", ("yi:34b-v1.5", "yi:34b"), name="Yi 1.5 34B Chat"),
    # ollama.com/library/exaone3.5: tags 2.4b, 7.8b (latest), 32b
    Row("exaone-3.5-7.8b-instruct", "exaone-3.0-7.8b-instruct", "LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct",
        "EXAONE 3.5 7.8B: the EXAONE 3.0 7.8B shapes (model card: 6.98B parameters without embeddings, 32 layers, GQA "
        "of 32 query / 8 KV heads, vocabulary 102,400, untied embeddings) with a 32,768-token context (model card).",
        ("exaone3.5", "exaone3.5:7.8b"), text={"max_position_embeddings": 32768}, name="EXAONE 3.5 7.8B Instruct"),
    # the 2.4b and 32b tags: the model card's table (layers, GQA heads, vocabulary 102,400, 32,768 context, tied
    # embeddings for the 2.4B) with the widths whose non-embedding totals are the card's "2.14B" / "30.95B"
    # (2,143,183,360 and 30,954,624,000 computed from these configs)
    Row("exaone-3.5-2.4b-instruct", "exaone-3.5-7.8b-instruct", "LGAI-EXAONE/EXAONE-3.5-2.4B-Instruct",
        "EXAONE 3.5 2.4B (model card: 2.14B parameters without embeddings, 30 layers, GQA of 32 query / 8 KV heads, "
        "vocabulary 102,400, 32,768 context, tied word embeddings): hidden 2560 (heads of 80) and FFN 7,168, the "
        "widths that give the card's 2.14B.", ("exaone3.5:2.4b",), name="EXAONE 3.5 2.4B Instruct",
        text={"hidden_size": 2560, "intermediate_size": 7168, "num_layers": 30, "tie_word_embeddings": True}),
    Row("exaone-3.5-32b-instruct", "exaone-3.5-7.8b-instruct", "LGAI-EXAONE/EXAONE-3.5-32B-Instruct",
        "EXAONE 3.5 32B (model card: 30.95B parameters without embeddings, 64 layers, GQA of 40 query / 8 KV heads, "
        "vocabulary 102,400, 32,768 context): hidden 5120 (heads of 128) and FFN 27,392, the widths that give the "
        "card's 30.95B.", ("exaone3.5:32b",), name="EXAONE 3.5 32B Instruct",
        text={"hidden_size": 5120, "intermediate_size": 27392, "num_attention_heads": 40, "num_layers": 64}),
    _base("internlm2-7b", "internlm2-chat-7b", "internlm/internlm2-7b", name="InternLM2 7B"),
    _base("internlm2.5-7b", "internlm2.5-7b-chat", "internlm/internlm2_5-7b", name="InternLM2.5 7B"),
    _base("baichuan2-7b-base", "baichuan2-7b-chat", "baichuan-inc/Baichuan2-7B-Base", name="Baichuan2 7B Base"),
    _base("orion-14b-base", "orion-14b-chat", "OrionStarAI/Orion-14B-Base", name="Orion 14B Base"),
    Row("mimo-7b-rl", "mimo-7b-base", "XiaomiMiMo/MiMo-7B-RL", "MiMo-7B-RL: RL-tuned from MiMo-7B-SFT, the "
        "MiMo-7B-Base architecture (model card).", name="MiMo 7B RL"),
    Row("mimo-7b-sft", "mimo-7b-base", "XiaomiMiMo/MiMo-7B-SFT", "MiMo-7B-SFT: supervised fine-tune of "
        "MiMo-7B-Base (model card).", name="MiMo 7B SFT"),
    _base("stablelm-2-1.6b", "stablelm-2-zephyr-1.6b", "stabilityai/stablelm-2-1_6b", name="StableLM 2 1.6B"),
]

# ---- batch 2: other sizes and families, values from the model cards ------------------------------------------------

_FALCON3 = "Falcon3 (TII): a Llama-architecture family with a 131,072-token vocabulary and head_dim 256 (model card " \
           "architecture table: layers, heads, GQA groups, context); rope_theta 1,000,042 as the family uses."


_FALCON3_LATEST = {"7B": ("falcon3",)}  # ollama.com/library/falcon3: latest is the 7b


def _falcon3(size: str, layers: int, hidden: int, heads: int, ff: int, ctx: int) -> list[Row]:
    hf = f"tiiuae/Falcon3-{size}-Instruct"
    text = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
            "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": 4, "head_dim": 256,
            "intermediate_size": ff, "vocab_size": 131072, "max_position_embeddings": ctx, "rope_scaling": None,
            "rope_theta": 1000042.0, "tie_word_embeddings": False}
    slug = f"falcon3-{size.lower()}-instruct"
    return [Row(slug, "llama-3.1-8b-instruct", hf, f"{_FALCON3} {size}: {layers} layers, hidden {hidden}, {heads} "
                f"query / 4 KV heads, FFN {ff}, {ctx:,} context.", (f"falcon3:{size.lower()}", *_FALCON3_LATEST.get(size, ())),
                text=text, family="falcon", name=f"Falcon3 {size} Instruct"),
            _base(f"falcon3-{size.lower()}-base", slug, f"tiiuae/Falcon3-{size}-Base", name=f"Falcon3 {size} Base")]


ROWS += [
    *_falcon3("1B", 18, 2048, 8, 8192, 8192),
    *_falcon3("3B", 22, 3072, 12, 9216, 32768),
    *_falcon3("7B", 28, 3072, 12, 23040, 32768),
    *_falcon3("10B", 40, 3072, 12, 23040, 32768),
    Row("solar-10.7b-v1.0", "llama-2-7b", "upstage/SOLAR-10.7B-v1.0",
        "SOLAR 10.7B: depth up-scaling of a Mistral-7B-shaped Llama (48 layers, hidden 4096, 32 query / 8 KV heads, "
        "FFN 14,336, vocabulary 32,000, 4K context; model card and paper).",
        text={"num_hidden_layers": 48, "num_key_value_heads": 8, "intermediate_size": 14336,
              "torch_dtype": "float16"}, family="solar", name="SOLAR 10.7B v1.0"),
    _inst("solar-10.7b-instruct-v1.0", "solar-10.7b-v1.0", "upstage/SOLAR-10.7B-Instruct-v1.0", "solar:10.7b", "solar",
          name="SOLAR 10.7B Instruct v1.0"),
    Row("starcoder2-3b", "starcoder2-7b", "bigcode/starcoder2-3b", "StarCoder2 3B: 30 layers, hidden 3072, 24 query "
        "/ 2 KV heads, FFN 12,288, sliding window 4,096, 16K context, tied embeddings (model card, StarCoder2 paper "
        "Table 9).", ("starcoder2:3b", "starcoder2"), text=_decoder(3072, 30, 24, 2, 12288), name="StarCoder2 3B"),
    Row("starcoder2-15b", "starcoder2-7b", "bigcode/starcoder2-15b", "StarCoder2 15B: 40 layers, hidden 6144, 48 "
        "query / 4 KV heads, FFN 24,576, sliding window 4,096, 16K context, untied output (model card, paper Table "
        "9).", ("starcoder2:15b",), text=_decoder(6144, 40, 48, 4, 24576, tie_word_embeddings=False),
        name="StarCoder2 15B"),
    Row("yi-1.5-9b-chat", "yi-6b-chat", "01-ai/Yi-1.5-9B-Chat", "Yi-1.5 9B: 48 layers, hidden 4096, 32 query / 4 KV "
        "heads, FFN 11,008, vocabulary 64,000, 4K context (model card; Yi-9B is Yi-6B depth-upscaled).",
        ("yi:9b-v1.5", "yi:9b"), text={"num_hidden_layers": 48}, name="Yi 1.5 9B Chat"),
    _base("yi-1.5-9b", "yi-1.5-9b-chat", "01-ai/Yi-1.5-9B", name="Yi 1.5 9B"),
    Row("internlm2.5-20b-chat", "internlm2.5-7b-chat", "internlm/internlm2_5-20b-chat",
        "InternLM2.5 20B: 48 layers, hidden 6144, 48 query / 8 KV heads, FFN 16,384, vocabulary 92,544, 32K context "
        "(model card).", ("internlm2:20b",), text={"hidden_size": 6144, "num_hidden_layers": 48,
        "num_attention_heads": 48, "intermediate_size": 16384}, name="InternLM2.5 20B Chat"),
    _base("internlm2.5-20b", "internlm2.5-20b-chat", "internlm/internlm2_5-20b", name="InternLM2.5 20B"),
    Row("qwen2-57b-a14b-instruct", "qwen1.5-moe-a2.7b-chat", "Qwen/Qwen2-57B-A14B-Instruct",
        "Qwen2 57B-A14B: 28 layers, hidden 3584, 28 query / 4 KV heads, 64 routed experts (8 active) of width 2,560 "
        "plus a 20,480-wide shared expert, vocabulary 151,936 (Qwen2 technical report Table 1, model card).",
        ("qwen2:57b",), text=_decoder(3584, 28, 28, 4, 18944, moe_intermediate_size=2560,
                                      shared_expert_intermediate_size=20480, num_experts=64, num_experts_per_tok=8,
                                      max_window_layers=28), name="Qwen2 57B-A14B Instruct"),
    _base("qwen2-57b-a14b", "qwen2-57b-a14b-instruct", "Qwen/Qwen2-57B-A14B", name="Qwen2 57B-A14B"),
    Row("qwen2.5-vl-32b-instruct", "qwen2.5-vl-72b-instruct", "Qwen/Qwen2.5-VL-32B-Instruct",
        "Qwen2.5-VL 32B: the Qwen2.5-32B decoder (64 layers, hidden 5120, 40/8 heads, FFN 27,648) with the Qwen2.5-VL "
        "vision encoder merged to the 5,120-wide text (model card); the tower is the 72B sibling's (SwiGLU width "
        "3456) with its merger's output at 5120, as pytorch/torchtune@49698b248e5a "
        "torchtune/models/qwen2_5_vision/_model_builders.py qwen2_5_vl_32b builds it (out_hidden_size 5120).",
        ("qwen2.5vl:32b",),
        text=_decoder(5120, 64, 40, 8, 27648,
                      vision_config={"depth": 32, "hidden_size": 1280, "intermediate_size": 3456, "num_heads": 16,
                                     "in_chans": 3, "out_hidden_size": 5120, "patch_size": 14,
                                     "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 112,
                                     "fullatt_block_indexes": [7, 15, 23, 31]}),
        name="Qwen2.5-VL 32B Instruct"),
    _qwen2_vl("7B", 3584, 28, 28, 4, 18944,
              "Qwen2-VL 7B: the Qwen2-7B decoder (28 layers, hidden 3584, 28 query / 4 KV heads, FFN 18,944, "
              "vocabulary 152,064) with the 2B's Qwen2-VL vision tower merged to the 3,584-wide text, as the printed "
              "Qwen2VLForConditionalGeneration module tree of zhenhua32/Qwen2-VL@bec99eb7106e READ.md shows it "
              "(Embedding(152064, 3584), 28 decoder layers, k/v_proj 3584->512, MLP 3584->18944; merger "
              "5120->5120->3584); untied output as Qwen2-7B's (this catalog's qwen2-7b-instruct). Published 8.29B "
              "(HF page, rounded)."),
    _qwen2_vl("72B", 8192, 80, 64, 8, 29568,
              "Qwen2-VL 72B: the Qwen2-72B decoder (this catalog's qwen2-72b-instruct, read from its config.json: 80 "
              "layers, hidden 8192, 64 query / 8 KV heads, FFN 29,568, vocabulary 152,064, untied) with the one 675M "
              "Qwen2-VL ViT every size shares (Qwen2-VL report, arXiv 2409.12191, Table 1), its merger out to the "
              "8,192-wide text; the BF16 FFN stays 29,568 (the AWQ / GPTQ repos were re-packed to 29,696 for tensor "
              "parallelism, QwenLM/Qwen3-VL#230). Published 73.4B (HF page, rounded).", max_window_layers=80),
    Row("olmo-2-0425-1b", "olmo-2-1124-7b", "allenai/OLMo-2-0425-1B", "OLMo 2 1B: 16 layers, hidden 2048, 16 heads, "
        "FFN 8,192, vocabulary 100,352, 4K context (model card table).", ("olmo2:1b",),
        text=_decoder(2048, 16, 16, 16, 8192), name="OLMo 2 1B"),
    _inst("olmo-2-0425-1b-instruct", "olmo-2-0425-1b", "allenai/OLMo-2-0425-1B-Instruct", name="OLMo 2 1B Instruct"),
    Row("phi-1.5", "phi-2", "microsoft/phi-1_5", "phi-1.5: 24 layers, hidden 2048, 32 heads, FFN 8,192, rotary on "
        "32 of 64 head dims, vocabulary 51,200, 2K context: the values of its phi-msft config.json as "
        "mlc-ai/mlc-llm@79d603f085f5 python/mlc_llm/model/model_preset.py (MODEL_PRESETS['phi-1_5']) copies it "
        "(n_embd, n_layer, n_head, rotary_dim, n_positions), mapped to the HF phi keys phi-2 uses.",
        ("phi:1.5b",), text={"hidden_size": 2048, "num_hidden_layers": 24, "intermediate_size": 8192,
                             "partial_rotary_factor": 0.5}, name="phi-1.5"),
    Row("phi-1", "phi-1.5", "microsoft/phi-1", "phi-1: the phi-1.5 architecture (1.3B; model card).",
        name="phi-1"),
    Row("c4ai-command-r-plus", "c4ai-command-r-v01", "CohereForAI/c4ai-command-r-plus",
        "Command R+ (104B): 64 layers, hidden 12,288, 96 query / 8 KV heads, FFN 33,792, vocabulary 256,000, 128K "
        "context, QK layer norm (model card).", ("command-r-plus:104b", "command-r-plus"),
        text=_decoder(12288, 64, 96, 8, 33792, use_qk_norm=True), name="Command R+"),
    Row("c4ai-command-r-plus-08-2024", "c4ai-command-r-plus", "CohereForAI/c4ai-command-r-plus-08-2024",
        "The August 2024 Command R+ update, same architecture (model card).", ("command-r-plus:104b-08-2024",),
        name="Command R+ 08-2024"),
    Row("aya-23-35b", "c4ai-command-r-v01", "CohereForAI/aya-23-35B", "Aya 23 35B: built on Command R (35B, 40 "
        "layers, hidden 8192, 64 heads), 8K context (model card).", ("aya:35b", "coherelabs/aya-23-35b"),
        text={"max_position_embeddings": 8192}, name="Aya 23 35B"),
    Row("gemma-3-270m-it", "gemma-3-1b-it", "google/gemma-3-270m-it",
        "Gemma 3 270M: 18 layers, hidden 640, 4 query / 1 KV heads of 256, FFN 2,048, the 262,144-token vocabulary, "
        "sliding window 512 with every 6th layer global, 32K context (model card; 170M embedding + 100M transformer "
        "parameters).", ("gemma3:270m",),
        text={"hidden_size": 640, "num_hidden_layers": 18, "intermediate_size": 2048,
              "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 3}, name="Gemma 3 270M IT"),
    _base("gemma-3-270m", "gemma-3-270m-it", "google/gemma-3-270m", name="Gemma 3 270M"),
    Row("smollm3-3b", "smollm2-1.7b-instruct", "HuggingFaceTB/SmolLM3-3B", "SmolLM3 3B (model card): 36 layers, "
        "hidden 2048, 16 query / 4 KV heads, FFN 11,008, the Llama 3 vocabulary (128,256), 64K context, tied "
        "embeddings; NoPE on every 4th layer (no effect on memory).",
        config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "hidden_size": 2048,
                "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
                "intermediate_size": 11008, "vocab_size": 128256, "max_position_embeddings": 65536,
                "tie_word_embeddings": True, "torch_dtype": "bfloat16", "no_rope_layer_interval": 4},
        name="SmolLM3 3B"),
    _base("smollm3-3b-base", "smollm3-3b", "HuggingFaceTB/SmolLM3-3B-Base", name="SmolLM3 3B Base"),
    Row("seed-oss-36b-instruct", "yi-34b", "ByteDance-Seed/Seed-OSS-36B-Instruct", "Seed-OSS 36B (model card "
        "architecture table): 64 layers, hidden 5120, 80 query / 8 KV heads of 128, FFN 27,648, vocabulary 155,136, "
        "512K native context, QKV bias, untied output. seed_oss is read as a generic Llama-style decoder.",
        ("seed-oss:36b", "seed-oss"),
        config={"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss", "hidden_size": 5120,
                "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128,
                "intermediate_size": 27648, "vocab_size": 155136, "max_position_embeddings": 524288,
                "attention_bias": True, "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
        family="seed", name="Seed-OSS 36B Instruct"),
    _base("seed-oss-36b-base", "seed-oss-36b-instruct", "ByteDance-Seed/Seed-OSS-36B-Base", name="Seed-OSS 36B Base"),
    Row("hunyuan-7b-instruct", "yi-34b", "tencent/Hunyuan-7B-Instruct", "Hunyuan 7B (model card): 32 layers, hidden "
        "4096, 32 query / 8 KV heads of 128, FFN 14,336, vocabulary 128,167, 256K context, tied embeddings; "
        "hunyuan_v1_dense is read as a generic Llama-style decoder (its QK norm weights are not counted).",
        config={"architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense", "hidden_size": 4096,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                "intermediate_size": 14336, "vocab_size": 128167, "max_position_embeddings": 262144,
                "tie_word_embeddings": True, "torch_dtype": "bfloat16"}, family="hunyuan", name="Hunyuan 7B Instruct"),
    _base("hunyuan-7b-pretrain", "hunyuan-7b-instruct", "tencent/Hunyuan-7B-Pretrain", name="Hunyuan 7B Pretrain"),
    Row("mamba-codestral-7b-v0.1", "mamba-2.8b-hf", "mistralai/Mamba-Codestral-7B-v0.1", "Mamba-Codestral 7B: a "
        "Mamba-2 model (model card): 64 layers, hidden 4096, state 128, 8 groups, 128 heads of 64 (expand 2), conv "
        "4, vocabulary 32,768, untied output; HF-format config as transformers' Mamba2Config names the keys.",
        config={"architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "hidden_size": 4096,
                "num_hidden_layers": 64, "state_size": 128, "n_groups": 8, "num_heads": 128, "head_dim": 64,
                "expand": 2, "conv_kernel": 4, "vocab_size": 32768, "tie_word_embeddings": False,
                "torch_dtype": "bfloat16"}, family="mamba", name="Mamba-Codestral 7B v0.1"),
    *_granitemoe("1B-A400M", 24, 1024, 16, 32),
    *_granitemoe("3B-A800M", 32, 1536, 24, 40),
]


_GLM4_0414 = ("GLM-4-0414 (THUDM): the Glm4ForCausalLM decoder (model_type glm4; post-attention and post-MLP norms, half "
              "the head dims rotary), vocabulary 151,552, 32K context (model card).")
# The 32B files carry no q/k/v bias: bartowski's GLM-Z1-32B-0414 GGUF (the llama.cpp b5192 log in ik_llama.cpp
# PR #344, tests/fixtures/engine_logs/llamacpp_heldout3) holds 245 f32 tensors, the 4 norms of each of 61 blocks and
# output_norm; llama.cpp's glm4 loads q/k/v biases whenever the converter writes them (create_tensor_qkv).
_GLM4_32B_NO_BIAS = (" No QKV bias: the GLM-Z1-32B-0414 GGUF's 245 F32 tensors are 4 norms a block and output_norm "
                     "(llama.cpp b5192 log, ik_llama.cpp PR #344).")


def _glm4(slug: str, hf: str, name: str, layers: int, hidden: int, heads: int, ff: int, *aliases: str,
          bias: bool) -> Row:
    return Row(slug, "glm-4-9b-chat", hf, f"{_GLM4_0414} {name}: {layers} layers, hidden {hidden}, {heads} query / 2 "
               f"KV heads of 128, FFN {ff:,}." + ("" if bias else _GLM4_32B_NO_BIAS), aliases,
               config={"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "hidden_size": hidden,
                       "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": 2,
                       "head_dim": 128, "intermediate_size": ff, "vocab_size": 151552,
                       "max_position_embeddings": 32768, "partial_rotary_factor": 0.5, "attention_bias": bias,
                       "tie_word_embeddings": False, "torch_dtype": "bfloat16"}, name=name)


ROWS += [
    _glm4("glm-4-32b-0414", "THUDM/GLM-4-32B-0414", "GLM-4 32B 0414", 61, 6144, 48, 23040, "zai-org/glm-4-32b-0414",
          bias=False),
    _glm4("glm-4-9b-0414", "THUDM/GLM-4-9B-0414", "GLM-4 9B 0414", 40, 4096, 32, 13696, "zai-org/glm-4-9b-0414",
          bias=True),
    Row("glm-z1-32b-0414", "glm-4-32b-0414", "THUDM/GLM-Z1-32B-0414", "GLM-Z1 32B: the reasoning model trained from "
        "GLM-4-32B-0414 with its architecture (model card).", ("zai-org/glm-z1-32b-0414",), name="GLM-Z1 32B 0414"),
    Row("glm-z1-9b-0414", "glm-4-9b-0414", "THUDM/GLM-Z1-9B-0414", "GLM-Z1 9B: the reasoning model trained from "
        "GLM-4-9B-0414 with its architecture (model card).", ("zai-org/glm-z1-9b-0414",), name="GLM-Z1 9B 0414"),
    Row("glm-z1-rumination-32b-0414", "glm-4-32b-0414", "THUDM/GLM-Z1-Rumination-32B-0414", "GLM-Z1-Rumination 32B: "
        "the deep-research model built on GLM-4-32B-0414 (model card).", name="GLM-Z1 Rumination 32B 0414"),
    _base("glm-4-32b-base-0414", "glm-4-32b-0414", "THUDM/GLM-4-32B-Base-0414", name="GLM-4 32B Base 0414"),
]


def _cohere2(slug: str, hf: str, name: str, layers: int, hidden: int, heads: int, ff: int, ctx: int, *aliases: str,
             why: str) -> Row:
    return Row(slug, "c4ai-command-r-v01", hf, f"{why} Cohere2 (model card): three sliding-window layers (4,096) to one "
               f"global layer, {layers} layers, hidden {hidden}, {heads} query / 8 KV heads, FFN {ff:,}, vocabulary "
               f"256,000, {ctx:,} context, tied embeddings.", aliases,
               config={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": hidden,
                       "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": 8,
                       "intermediate_size": ff, "vocab_size": 256000, "max_position_embeddings": ctx,
                       "sliding_window": 4096, "sliding_window_pattern": 4, "tie_word_embeddings": True,
                       "torch_dtype": "bfloat16"}, name=name)


ROWS += [
    _cohere2("c4ai-command-r7b-12-2024", "CohereForAI/c4ai-command-r7b-12-2024", "Command R7B 12-2024", 32, 4096, 32,
             14336, 131072, "command-r7b:7b", "command-r7b", "coherelabs/c4ai-command-r7b-12-2024",
             why="Command R7B (8B)."),
    _cohere2("command-a-03-2025", "CohereForAI/c4ai-command-a-03-2025", "Command A 03-2025", 64, 12288, 96, 36864,
             262144, "command-a:111b", "command-a", "coherelabs/c4ai-command-a-03-2025", why="Command A (111B)."),
]

def _olmo3(slug: str, base: str, hf: str, name: str, *aliases: str, what: str) -> Row:
    layers = 32 if base.startswith("olmo-2-1124-7b") else 64
    return Row(slug, base, hf, f"{what} OLMo 3 keeps OLMo 2's decoder (model card table: {layers} layers, hidden "
               f"{4096 if layers == 32 else 5120}, {'32 query / 32 KV' if layers == 32 else '40 query / 8 KV'} heads, "
               "65,536 context) and adds sliding-window attention: three 4,096-token sliding layers to one full layer "
               "(layer_types as in the verbatim config.json of the mlx-community/Olmo-3-7B-RLZero-Code-4bit conversion "
               "and in the GGUF metadata of ollama.com/library/olmo-3 and olmo-3.1: sliding_window 4096, "
               "sliding_window_pattern [true, true, true, false, ...], feed_forward_length as OLMo 2, YaRN factor 8 "
               "over 8,192 original positions); vocab_size 100278 as the tiny-random/olmo-3 config.json and public "
               "OLMo 3 test fixtures give it (code search ids 58039711440, 69694500967). Second-hand: the repo's own "
               "config.json was not read.", aliases,
               top={"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "max_position_embeddings": 65536,
                    "sliding_window": 4096, "vocab_size": 100278,
                    "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention"
                                    for i in range(layers)],
                    "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192,
                                     "attention_factor": 1.2079441541679836, "beta_fast": 32.0, "beta_slow": 1.0},
                    "torch_dtype": "bfloat16"},
               family="olmo", name=name)


ROWS += [
    _olmo3("olmo-3-1025-7b", "olmo-2-1124-7b", "allenai/Olmo-3-1025-7B", "Olmo 3 7B (base)",
           "allenai/olmo-3-1025-7b", "allenai/olmo-3-7b", what="Olmo 3 7B, the base model (model card)."),
    _olmo3("olmo-3-7b-instruct", "olmo-2-1124-7b", "allenai/Olmo-3-7B-Instruct", "Olmo 3 7B Instruct",
           "allenai/olmo-3-7b-instruct", "olmo-3:7b-instruct",
           what="Olmo 3 7B Instruct, post-trained from Olmo-3-1025-7B with its architecture (model card)."),
    _olmo3("olmo-3-7b-think", "olmo-2-1124-7b", "allenai/Olmo-3-7B-Think", "Olmo 3 7B Think",
           "allenai/olmo-3-7b-think", "olmo-3:7b-think", "olmo-3", "olmo-3:7b",
           what="Olmo 3 7B Think, post-trained from Olmo-3-1025-7B with its architecture (model card). Ollama's "
                "library olmo-3 (tags 7b, 7b-think, 7b-instruct, 32b, 32b-think): the bare name and 7b are a 7B of "
                "this architecture, Think and Instruct sharing every shape; its GGUF is Ollama's own conversion, "
                "general.architecture olmo3 (convert/convert_olmo.go, Ollama 0.13.4+)."),
    _olmo3("olmo-3-1125-32b", "olmo-2-0325-32b", "allenai/Olmo-3-1125-32B", "Olmo 3 32B (base)",
           "allenai/olmo-3-1125-32b", "allenai/olmo-3-32b", what="Olmo 3 32B, the base model (model card)."),
    _olmo3("olmo-3-32b-think", "olmo-2-0325-32b", "allenai/Olmo-3-32B-Think", "Olmo 3 32B Think",
           "allenai/olmo-3-32b-think", "olmo-3:32b-think", "olmo-3:32b",
           what="Olmo 3 32B Think, post-trained from Olmo-3-1125-32B with its architecture (model card)."),
    _olmo3("olmo-3.1-32b-instruct", "olmo-2-0325-32b", "allenai/Olmo-3.1-32B-Instruct", "Olmo 3.1 32B Instruct",
           "allenai/olmo-3.1-32b-instruct", "olmo-3.1:32b-instruct",
           what="Olmo 3.1 32B Instruct, the refreshed 32B instruct release of the same architecture (ollama.com "
                "olmo-3.1:32b-instruct GGUF metadata: 64 blocks, 40 heads, 8 KV heads, embedding 5120, FFN 27648, "
                "sliding window 4096)."),
    _olmo3("olmo-3.1-32b-think", "olmo-2-0325-32b", "allenai/Olmo-3.1-32B-Think", "Olmo 3.1 32B Think",
           "allenai/olmo-3.1-32b-think", "olmo-3.1", "olmo-3.1:32b", "olmo-3.1:32b-think",
           what="Olmo 3.1 32B Think, the refreshed 32B reasoning release of the same architecture (model card)."),
]

ROWS += [
    Row("granite-4.0-h-small", "granite-4.0-h-tiny", "ibm-granite/granite-4.0-h-small",
        "Granite 4.0 H-Small (IBM: hybrid Mamba-2/attention MoE, 32B total / 9B active). The shape values are the "
        "GGUF metadata of IBM's own Ollama upload (https://ollama.com/ibm/granite4:small-h-q6_K/blobs/a15d0868faf9: "
        "40 blocks, 32 heads, embedding 4096, 72 experts with 10 used, feed_forward_length 768, "
        "expert_shared_feed_forward_length 1536, ssm.inner_size 8192, ssm.time_step_rank 128 (the Mamba-2 head "
        "count), ssm.state_size 128, ssm.group_count 1, ssm.conv_kernel 4, vocab 100352; shared/reference "
        "model_configs.jsonl); num_key_value_heads 8 and the 36 Mamba / 4 attention split as a public write-up "
        "quotes the repo's config.json (code search id 57624389648). The attention layers are taken at H-Tiny's "
        "positions (5, 15, 25, 35), as a third-party GGUF card lists for H-Small; only their count matters for "
        "memory. Second-hand: the repo's own config.json was not read.",
        ("granite4:small-h", "ibm-granite/granite-4.0-h-small", "ibm/granite4:small-h"),
        text={"hidden_size": 4096, "intermediate_size": 768, "shared_intermediate_size": 1536,
              "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 72,
              "num_experts_per_tok": 10, "mamba_n_heads": 128, "mamba_d_head": 64},
        name="Granite 4.0 H-Small"),
]

# Gemma 3n E2B: the E4B decoder cut to 30 layers. Shapes from get_model_config_e2b in ai-edge-torch's Gemma 3n
# example (Kuba-csproj/ai-edge-torch@c772ceb5fbb7, a fork of google-ai-edge/ai-edge-torch:
# ai_edge_torch/generative/examples/gemma3n/gemma3n.py): 30 layers, intermediate_size 8192, 8 heads / 2 KV heads of
# 256, embedding 2048, every 5th layer global, num_kv_shared_layers 10; llama.cpp agrees (src/models/gemma3n.cpp:
# n_layer_kv_from_start = 20, and 30 layers is LLM_TYPE_E2B).
_GEMMA3N_E2B_LAYERS = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(30)]
_GEMMA3N_E2B_WHY = (
    "Gemma 3n E2B: the E4B architecture cut to 30 layers (MatFormer), per get_model_config_e2b in ai-edge-torch's "
    "Gemma 3n example (Kuba-csproj/ai-edge-torch@c772ceb5fbb7, fork of google-ai-edge/ai-edge-torch: "
    "ai_edge_torch/generative/examples/gemma3n/gemma3n.py): num_layers 30, intermediate_size 8192, 8 heads, 2 query "
    "groups, head_dim 256, embedding_dim 2048, vocab 262400, sliding window 512 with every 5th layer global, "
    "num_kv_shared_layers 10; llama.cpp src/models/gemma3n.cpp maps 30 layers to E2B and caches the first 20 "
    "(n_layer_kv_from_start = 20), the same 10 shared layers. Not read from the repo's config.json.")

ROWS += [
    _tune("hermes-4-70b", "llama-3.1-70b", "NousResearch/Hermes-4-70B", "Llama-3.1-70B", family="llama",
          name="Hermes 4 70B",
          why="Hermes 4 70B, a hybrid-reasoning fine-tune of Llama-3.1-70B with its architecture unchanged (model "
              "card: based on Llama-3.1-70B)."),
    _tune("hermes-4-405b", "llama-3.1-405b", "NousResearch/Hermes-4-405B", "Llama-3.1-405B", family="llama",
          name="Hermes 4 405B",
          why="Hermes 4 405B, a hybrid-reasoning fine-tune of Llama-3.1-405B with its architecture unchanged (model "
              "card: based on Llama-3.1-405B)."),
    _tune("hermes-4-14b", "qwen3-14b", "NousResearch/Hermes-4-14B", "Qwen3-14B", family="qwen",
          name="Hermes 4 14B",
          why="Hermes 4 14B, a hybrid-reasoning fine-tune of Qwen3-14B with its architecture unchanged (model card: "
              "based on Qwen3-14B)."),
    Row("qwen3-embedding-8b", "qwen3-8b-base", "Qwen/Qwen3-Embedding-8B",
        "Qwen3 Embedding 8B: built on Qwen3-8B-Base (model card: 36 layers, 32K context, 4096-dim embeddings). "
        "An embedding checkpoint has no LM head (the last hidden state is pooled; its GGUFs carry no output.weight): "
        "tie_word_embeddings true here, so that no head of vocab x hidden is counted beside the embeddings. Its "
        "embedding has 151,665 rows, not the base's 151,936: a module print of the checkpoint (code search id "
        "62160028882: Qwen3ForCausalLM, 36 layers, embed_tokens Embedding(151665, 4096)), a Trainium port's config "
        "of Qwen/Qwen3-Embedding-8B (id 15467466393: vocab_size 151665) and a table of the published config.json "
        "values (id 26539802567); llama.cpp's output buffer for it agrees (ggml-org/llama.cpp#14829, b5920: 0.59 MiB "
        "of output buffer, (151,665 + 4,096) x 4 B; 151,936 rows would print 0.60). Its context is 40,960 "
        "positions, not the 32,768 the model card rounds to 32K: the GGUF of the checkpoint carries "
        "qwen3.context_length 40960 (llama.cpp's converter writes config.json's max_position_embeddings there), and "
        "llama-server -c 0 sizes its cache to it (ROCm/ROCm#4903, b5618: n_ctx_train 40960, 40960 cells, 5760.00 MiB "
        "of KV).",
        ("qwen3-embedding:8b", "qwen3-embedding"), family="embedding", name="Qwen3 Embedding 8B",
        text={"tie_word_embeddings": True, "vocab_size": 151665, "max_position_embeddings": 40960}),
    Row("gemma-3n-e2b-it", "gemma-3n-e4b-it", "google/gemma-3n-E2B-it", _GEMMA3N_E2B_WHY,
        ("gemma3n:e2b", "google/gemma-3n-e2b", "google/gemma-3n-e2b-it"),
        text={"num_hidden_layers": 30, "intermediate_size": 8192, "num_kv_shared_layers": 10,
              "layer_types": _GEMMA3N_E2B_LAYERS},
        family="gemma", name="Gemma 3n E2B IT"),
    # ERNIE 4.5: the configs transformers' classes default to, which its docs name as the PT checkpoints' (huggingface/
    # transformers@008e5743: src/transformers/models/ernie4_5/configuration_ernie4_5.py, auto_docstring checkpoint
    # baidu/ERNIE-4.5-0.3B-PT; @001f85b3: src/transformers/models/ernie4_5_moe/configuration_ernie4_5_moe.py, "the
    # defaults will yield a similar configuration to that of baidu/ERNIE-4.5-21B-A3B-PT").
    Row("ernie-4.5-0.3b-pt", "yi-34b", "baidu/ERNIE-4.5-0.3B-PT",
        "ERNIE 4.5 0.3B: the Ernie4_5Config defaults transformers documents for baidu/ERNIE-4.5-0.3B-PT "
        "(huggingface/transformers@008e57439125: src/transformers/models/ernie4_5/configuration_ernie4_5.py): "
        "vocabulary 103,424, hidden 1024, FFN 3072, 18 layers, 16 query / 2 KV heads of head_dim 128, 131,072 "
        "positions, tied embeddings, no biases; the model card's table agrees (18 layers, 16/2 heads, 131,072 "
        "context). A third-party copy of the repo's config.json (code search id 28060091361, repository not "
        "identified) has the same values.",
        ("baidu/ernie-4.5-0.3b-base-pt", "baidu/ernie-4.5-0.3b-paddle"),
        config={"architectures": ["Ernie4_5_ForCausalLM"], "model_type": "ernie4_5", "hidden_size": 1024,
                "intermediate_size": 3072, "num_hidden_layers": 18, "num_attention_heads": 16,
                "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 103424, "max_position_embeddings": 131072,
                "use_bias": False, "tie_word_embeddings": True, "torch_dtype": "bfloat16"},
        family="ernie", name="ERNIE 4.5 0.3B PT"),
    Row("ernie-4.5-21b-a3b-pt", "yi-34b", "baidu/ERNIE-4.5-21B-A3B-PT",
        "ERNIE 4.5 21B-A3B: the Ernie4_5_MoeConfig defaults transformers documents as baidu/ERNIE-4.5-21B-A3B-PT's "
        "configuration (huggingface/transformers@001f85b38fb4: "
        "src/transformers/models/ernie4_5_moe/configuration_ernie4_5_moe.py): vocabulary 103,424, hidden 2560, "
        "dense FFN 12,288 (layer 0), 28 layers, 20 query / 4 KV heads (head_dim 2560/20 = 128), 131,072 positions, "
        "tied embeddings; MoE from layer 1 to 27 (moe_layer_end_index -1 = num_hidden_layers - 1), 64 routed "
        "experts of width 1536 with 6 active, 2 shared experts. The model card's table agrees (28 layers, 20/4 "
        "heads, 64 experts with 6 active, 2 shared, 131,072 context); two third-party test fixtures quoting the "
        "repo's config (code search ids 70957858900, 20538025444) have the same values. The MTP block the repo may "
        "carry is dropped by llama.cpp's converter (conversion/ernie.py).",
        ("baidu/ernie-4.5-21b-a3b-base-pt", "baidu/ernie-4.5-21b-a3b-paddle"),
        config={"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe", "hidden_size": 2560,
                "intermediate_size": 12288, "num_hidden_layers": 28, "num_attention_heads": 20,
                "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 103424, "max_position_embeddings": 131072,
                "moe_intermediate_size": 1536, "moe_k": 6, "moe_num_experts": 64, "moe_num_shared_experts": 2,
                "moe_layer_start_index": 1, "moe_layer_end_index": 27, "moe_layer_interval": 1, "use_bias": False,
                "tie_word_embeddings": True, "torch_dtype": "bfloat16"},
        family="ernie", name="ERNIE 4.5 21B A3B PT"),
    # LFM2 (Liquid AI): hybrid short-convolution / GQA decoders; the configs third-party code keeps of the repos'
    # config.json (repositories not identified by the code search), the same values tests/hf_config_recent.py holds
    Row("lfm2-1.2b", "yi-34b", "LiquidAI/LFM2-1.2B",
        "LFM2 1.2B: the repo's config.json as third-party code quotes it (code search id 59124207504, 'the REAL "
        "LiquidAI/LFM2-1.2B/config.json, read from the Hub', trimmed of keys that do not shape the model; the same "
        "values in ids 51937556719 and 68303452161): 16 layers with attention at 2, 5, 8, 10, 12, 14 "
        "(full_attn_idxs) and short convolutions elsewhere (conv_L_cache 3), hidden 2048, 32 query / 8 KV heads, "
        "block_ff_dim 12288 auto-adjusted (2/3, multiple of 256: 8192), vocabulary 65,536, 128,000 positions, tied "
        "embeddings (tie_embedding). Written with transformers' key names (configuration_lfm2.py: intermediate_size "
        "= block_ff_dim, tie_word_embeddings = tie_embedding, layer_types from full_attn_idxs). Model card: 1.17B parameters, 16 layers (10 convolution + 6 GQA blocks), vocabulary 65,536.",
        config={"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "hidden_size": 2048,
                "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536,
                "max_position_embeddings": 128000, "block_ff_dim": 12288, "block_auto_adjust_ff_dim": True,
                "intermediate_size": 12288, "block_ffn_dim_multiplier": 1.0, "block_multiple_of": 256,
                "conv_L_cache": 3, "norm_eps": 1e-05, "tie_word_embeddings": True,
                "layer_types": ["full_attention" if i in (2, 5, 8, 10, 12, 14) else "conv" for i in range(16)],
                "torch_dtype": "bfloat16"},
        aliases=("lfm2:1.2b",), family="lfm2", name="LFM2 1.2B"),
    Row("lfm2-8b-a1b", "yi-34b", "LiquidAI/LFM2-8B-A1B",
        "LFM2 8B-A1B: the config third-party tests keep of the repo's config.json (code search id 54855040938, "
        "'LFM2_8B_MOE_CONFIG'; the same values in id 58787885414): 24 layers with attention at 2, 6, 10, 14, 18, 21 "
        "and short convolutions elsewhere (conv_L_cache 3), hidden 2048, 32 query / 8 KV heads, the first 2 layers "
        "dense (intermediate_size 7168), then 32 experts of 1792 with 4 active, vocabulary 65,536, 128,000 positions. "
        "Published: 8.3B total, 1.5B active (LFM2 technical report). Tied embeddings: transformers "
        "configuration_lfm2_moe.py's default (tie_word_embeddings / tie_embedding True); the quoted config does not "
        "say. Written with transformers' key name tie_word_embeddings.",
        config={"architectures": ["Lfm2MoeForCausalLM"], "model_type": "lfm2_moe", "hidden_size": 2048,
                "intermediate_size": 7168, "moe_intermediate_size": 1792, "num_hidden_layers": 24,
                "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536,
                "max_position_embeddings": 128000, "norm_eps": 1e-05, "conv_bias": False, "conv_L_cache": 3,
                "num_dense_layers": 2, "num_experts": 32, "num_experts_per_tok": 4, "norm_topk_prob": True,
                "use_expert_bias": True,
                "layer_types": ["full_attention" if i in (2, 6, 10, 14, 18, 21) else "conv" for i in range(24)],
                "tie_word_embeddings": True, "torch_dtype": "bfloat16"},
        family="lfm2", name="LFM2 8B A1B"),
    Row("hunyuan-a13b-instruct", "hunyuan-7b-instruct", "tencent/Hunyuan-A13B-Instruct",
        "Hunyuan-A13B Instruct: the config a third-party test keeps of the repo's config.json ('HUNYUAN_MOE_LIST_CONFIG', "
        "code search id 57609511449): 32 layers, hidden 4096, 32 query / 8 KV heads of 128, every layer MoE with 64 "
        "experts of 3072 (moe_intermediate_size per layer), 8 active (moe_topk per layer) beside 1 shared expert "
        "of intermediate_size 3072 (num_shared_expert per layer), vocabulary 128,167; with QK norms, tied embeddings "
        "and 262,144 positions as tests/ggufs.py hunyuan_a13b carries them from the same config. Model card: 80B "
        "total, 13B active, 256K context.",
        ("tencent/hunyuan-a13b-pretrain",),
        config={"architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan_v1_moe", "hidden_size": 4096,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                "intermediate_size": 3072, "vocab_size": 128167, "num_experts": 64,
                "moe_intermediate_size": [3072] * 32, "moe_topk": [8] * 32, "num_shared_expert": [1] * 32,
                "use_qk_norm": True, "use_mixed_mlp_moe": True, "tie_word_embeddings": True,
                "max_position_embeddings": 262144, "torch_dtype": "bfloat16"},
        family="hunyuan", name="Hunyuan A13B Instruct"),
    Row("nvidia-nemotron-nano-9b-v2", "nemotron-h-56b-instruct-8k", "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
        "NVIDIA Nemotron Nano 9B v2: a Nemotron-H hybrid (Mamba-2 / attention / MLP layers) with the shape public test "
        "code quotes from the repo's config.json, the same values in four independent files (code search ids "
        "58647227636 and 58509742523: the thinker config of a voice-chat model built on it; 60558215653 and "
        "70988719928, 'NEMOTRON_H'; 69055529906: 'NVIDIA-Nemotron-Nano-9B-v2: 56 entries, 4 of them *'; 71072035201: "
        "the Mamba-2 state): 56 layers of pattern M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M- (27 "
        "Mamba-2, 25 MLP, 4 attention: the Jetson AI Lab card's count), hidden 4480, MLP 15680, 40 query / 8 KV heads "
        "of 128, Mamba-2 128 heads x 80 with 8 groups, state 128, conv kernel 4, vocabulary 131,072, 131,072 "
        "positions (128K context, model card). Untied embeddings and bfloat16: the Nemotron-H family's (the 56B's "
        "config.json). Repositories of the quoting files not identified; not read from the repo's config.json.",
        ("nvidia/nvidia-nemotron-nano-9b-v2-base",),
        config={"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4480,
                "intermediate_size": 15680, "num_hidden_layers": 56, "num_attention_heads": 40,
                "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 131072,
                "max_position_embeddings": 131072,
                "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
                "mamba_num_heads": 128, "mamba_head_dim": 80, "n_groups": 8, "ssm_state_size": 128,
                "conv_kernel": 4, "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
        family="nemotron", name="NVIDIA Nemotron Nano 9B v2"),
]

# ---- 2026 releases whose shapes a public llama.cpp log prints (every GGUF metadata key the entry needs) ------------
_HR = "https://github.com/HilbertraumAI/HilbertRaum/blob/{}/eval/results/hardware/i9-9900x-rtx-3090-24gb-128gb/{}"
_HR_QWEN35_9B = _HR.format("175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4", "issue399-arch-sweep-qwen3.5-9b-ud-q4kxl.stderr.log")
_HR_QWEN35_4B = _HR.format("175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4", "issue399-arch-sweep-qwen3.5-4b-ud-q4kxl.stderr.log")
_HR_QWEN35_2B = _HR.format("9c72f774e5a633b1db2000d25c98fee1dd705517", "issue399-arch-sweep-qwen3.5-2b-ud-q4kxl.stderr.log")
_HR_GRANITE41_8B = _HR.format("3ea1d3a12eae631d10bf385c8e9edfacfc80cf6e",
                              "issue446-arch-sweep-granite-4.1-8b-q4.stderr.log")
# the Pixtral tower of Ministral 3 8B / 14B: second-hand, no copy of either repo's config.json was read
_MINISTRAL3_TOWER = (
    "Vision tower: the checkpoint is a Mistral3ForConditionalGeneration whose Pixtral encoder the card and NVIDIA "
    "Megatron-Bridge's Ministral 3 page (docs/models/vlm/ministral3.md: 'Vision encoder: ~0.4B parameters' for the "
    "3B, the 8B and the 14B alike) give as the 3B's; its vision_config (24 layers of 1024, 16 heads of 64, MLP "
    "4096, patches of 14, images of 1540, spatial merge 2, a bias-free projector) is the 3B's verbatim copy, taken "
    "as the same encoder (second-hand), the projector's two linears sized by this decoder's hidden width as "
    "transformers' Mistral3MultiModalProjector builds them. The tensor count agrees: 24 x 9 encoder tensors + "
    "patch_conv + encoder_norm + the projector's norm, patch merger and two linears = 222, the vision tensors of "
    "Ollama's ministral-3:14b blob (ollama/ollama#13303: num_tensors=585 = 363 decoder + 222).")
_HR_MINISTRAL3_8B = _HR.format("a47bc62da409587ff0b49f5ef3611b45754277b5",
                               "issue399-arch-sweep-ministral3-8b-instruct-2512-q4.stderr.log")
_TIMM_QWEN3_VIT = ("huggingface/pytorch-image-models#2765 (qwen3_vit: the Qwen3.5 vision towers, patch 16, a learned "
                   "48x48 position grid, 2x2 merger)")


def _qwen35_small(size: str, log: str, hidden: int, layers: int, heads: int, kv: int, ff: int, v_heads: int,
                  tied: bool, tower: tuple[int, int, int], **kw) -> Row:
    """A dense Qwen3.5: the decoder as the unsloth GGUF's metadata prints it in a llama.cpp log (block_count,
    embedding_length, feed_forward_length, head_count(_kv), key_length 256, ssm.* = linear_* (conv_kernel 4,
    state_size 128 = the linear head dims, group_count 16 = linear key heads, time_step_rank = linear value heads),
    full_attention_interval 4, rope.dimension_count 64 of 256 = partial_rotary_factor 0.25, freq_base 1e7,
    dimension_sections [11, 11, 10], 248,320 tokens, context 262,144); tied embeddings read from the tensor count
    (an output.weight is one tensor more); the vision tower of the qwen3_vit table; one MTP layer."""
    vh, vdepth, vff = tower
    text = {"attention_bias": False, "attn_output_gate": True, "dtype": "bfloat16", "full_attention_interval": 4,
            "head_dim": 256, "hidden_act": "silu", "hidden_size": hidden, "intermediate_size": ff,
            "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(layers)],
            "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
            "linear_num_value_heads": v_heads, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
            "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_5_text",
            "mtp_num_hidden_layers": 1, "mtp_use_dedicated_embeddings": False, "num_attention_heads": heads,
            "num_hidden_layers": layers, "num_key_value_heads": kv, "rms_norm_eps": 1e-06,
            "rope_parameters": {"mrope_interleaved": True, "mrope_section": [11, 11, 10], "rope_type": "default",
                                "rope_theta": 10000000, "partial_rotary_factor": 0.25},
            "tie_word_embeddings": tied, "vocab_size": 248320}
    vision = {"deepstack_visual_indexes": [], "depth": vdepth, "hidden_act": "gelu_pytorch_tanh", "hidden_size": vh,
              "in_channels": 3, "intermediate_size": vff, "model_type": "qwen3_5", "num_heads": 16,
              "num_position_embeddings": 2304, "out_hidden_size": hidden, "patch_size": 16, "spatial_merge_size": 2,
              "temporal_patch_size": 2}
    return Row(f"qwen3.5-{size.lower()}", "qwen3.5-0.8b", f"Qwen/Qwen3.5-{size}", kw.pop("why"),
               (f"qwen3.5:{size.lower()}",),
               config={"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
                       "text_config": text, "tie_word_embeddings": tied, "vision_config": vision},
               family="qwen", name=f"Qwen3.5 {size}",
               source=f"the decoder's shapes from the complete GGUF metadata a llama.cpp b9849 log prints ({log}); "
                      f"the vision tower from {_TIMM_QWEN3_VIT}; see notes", **kw)


ROWS += [
    _qwen35_small(
        "9B", _HR_QWEN35_9B, 4096, 32, 16, 4, 12288, 32, False, (1152, 27, 4304),
        why="Qwen3.5 9B (dense, vision-language). Decoder from the unsloth Qwen3.5-9B-GGUF metadata a llama-server "
            "b9849 log prints (HilbertraumAI/HilbertRaum arch sweep): qwen35.block_count 32, embedding_length 4096, "
            "feed_forward_length 12288, head_count 16, head_count_kv 4, key/value_length 256, ssm.conv_kernel 4, "
            "ssm.state_size 128, ssm.group_count 16, ssm.time_step_rank 32 (ssm.inner_size 4096 = 32 x 128), "
            "full_attention_interval 4, rope.dimension_count 64, freq_base 1e7, tokenizer 248,320 tokens, context "
            "262,144; 427 tensors (an untied output.weight: 426 when tied), print_info 'model params = 8.95 B'. Vision "
            "tower: qwen3_vit_416m (1152 wide, 27 blocks, 16 heads, MLP 4304; .qwen3_5_9b) of "
            + _TIMM_QWEN3_VIT + ". One MTP layer (the converter drops it from the GGUF). Checked exactly: decoder + "
            "MTP 9,197,093,888 + tower 456,010,480 = 9,653,104,368, the general.parameter_count Ollama's qwen3.5:9b "
            "GGUF (decoder, MTP block and tower in one file) carries (ollama/ollama#16685).",
        params=9653104368,
        params_source="general.parameter_count = 9653104368 of Ollama's qwen3.5:9b GGUF, as its llama.cpp log prints "
                      "it (https://github.com/ollama/ollama/issues/16685): decoder + MTP layer + vision tower; equal "
                      "to the count of this config"),
    _qwen35_small(
        "4B", _HR_QWEN35_4B, 2560, 32, 16, 4, 9216, 32, True, (1024, 24, 4096),
        why="Qwen3.5 4B (dense, vision-language). Decoder from the unsloth Qwen3.5-4B-GGUF metadata a llama-server "
            "b9849 log prints (HilbertraumAI/HilbertRaum arch sweep): qwen35.block_count 32, embedding_length 2560, "
            "feed_forward_length 9216, head_count 16, head_count_kv 4, key/value_length 256, ssm.conv_kernel 4, "
            "ssm.state_size 128, ssm.group_count 16, ssm.time_step_rank 32 (ssm.inner_size 4096), "
            "full_attention_interval 4, rope.dimension_count 64, freq_base 1e7, 248,320 tokens, context 262,144; "
            "426 tensors (tied embeddings: no output.weight; the 9B's untied file has 427), print_info 'model params "
            "= 4.21 B' (this decoder without MTP: 4,205,751,296). Vision tower: qwen3_vit_306m (1024 wide, 24 blocks, "
            "16 heads, MLP 4096; .qwen3_5_4b) of " + _TIMM_QWEN3_VIT + ". One MTP layer: as every Qwen3.5 config "
            "read (0.8B, 27B, 35B-A3B, 122B-A10B, 397B-A17B, and the 9B by its exact count); no published total "
            "of this checkpoint was read."),
    _qwen35_small(
        "2B", _HR_QWEN35_2B, 2048, 24, 8, 2, 6144, 16, True, (1024, 24, 4096),
        why="Qwen3.5 2B (dense, vision-language). Decoder from the unsloth Qwen3.5-2B-GGUF metadata a llama-server "
            "b9849 log prints (HilbertraumAI/HilbertRaum arch sweep): qwen35.block_count 24, embedding_length 2048, "
            "feed_forward_length 6144, head_count 8, head_count_kv 2, key/value_length 256, ssm.conv_kernel 4, "
            "ssm.state_size 128, ssm.group_count 16, ssm.time_step_rank 16 (ssm.inner_size 2048), "
            "full_attention_interval 4, rope.dimension_count 64, freq_base 1e7, 248,320 tokens, context 262,144; "
            "320 tensors (tied embeddings), print_info 'model params = 1.88 B' (this decoder without MTP: "
            "1,881,825,088). The model card (Qwen/Qwen3.5-2B README as a public transcript quotes it) agrees: 24 "
            "layers, hidden 2048, 6 x (3 Gated DeltaNet + 1 Gated Attention), 16 V / 16 QK linear heads of 128, 8 Q / "
            "2 KV heads of 256, RoPE dimension 64, FFN 6144, 248,320 tokens tied, MTP trained, 262,144 context. "
            "Vision tower: qwen3_vit_306m (1024 wide, 24 blocks, 16 heads, MLP 4096; .qwen3_5_2b) of "
            + _TIMM_QWEN3_VIT + ". One MTP layer: as every Qwen3.5 config read; no published total of this "
            "checkpoint was read."),
    Row("granite-4.1-8b", "granite-3.3-8b-instruct", "ibm-granite/granite-4.1-8b",
        "Granite 4.1 8B: a dense granite decoder (GraniteForCausalLM; no Mamba layers, unlike the Granite 4.0 H "
        "models). Every shape from the GGUF metadata a llama-server b9849 log prints (" + _HR_GRANITE41_8B + "): "
        "granite.block_count 40, embedding_length 4096, feed_forward_length 12800, head_count 32, head_count_kv 8, "
        "rope.dimension_count 128, freq_base 1e7, vocab_size 100,352, context_length 131,072 (the scales: embedding "
        "12, residual 0.22, attention 0.0078125, logit 16); 363 tensors = 40 x 9 + token_embd + output_norm + an "
        "untied output.weight; print_info 'model params = 8.79 B' (this config: 8,791,592,960). The same "
        "architecture as Granite 3.3 8B but for the vocabulary and the untied output.",
        ("ibm-granite/granite-4.1-8b-gguf",),
        text={"vocab_size": 100352, "tie_word_embeddings": False}, name="Granite 4.1 8B"),
    Row("ministral-3-8b-instruct-2512", "ministral-3-3b-instruct-2512", "mistralai/Ministral-3-8B-Instruct-2512",
        "Ministral 3 8B Instruct 2512: the decoder as the GGUF's metadata prints it in a llama-server b9849 log ("
        + _HR_MINISTRAL3_8B + "): mistral3.block_count 34, embedding_length 4096, feed_forward_length 14336, "
        "head_count 32, head_count_kv 8, key/value_length 128, vocab_size 131,072, context_length 262,144, rope "
        "freq_base 1e6 with YaRN factor 16 over 16,384, beta_fast 32, beta_slow 1, attention.temperature_scale 0.1 "
        "(llama_4_scaling_beta); 309 tensors = 34 x 9 + token_embd + output_norm + an untied output.weight; "
        "print_info 'model params = 8.49 B' (the decoder of this config: 8,489,553,920). " + _MINISTRAL3_TOWER,
        ("ministral-3:8b", "mistralai/ministral-3-8b-base-2512"),
        text={"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 34, "tie_word_embeddings": False},
        name="Ministral 3 8B Instruct 2512"),
    Row("ministral-3-14b-instruct-2512", "ministral-3-8b-instruct-2512", "mistralai/Ministral-3-14B-Instruct-2512",
        "Ministral 3 14B Instruct 2512: the 8B's decoder (GQA 32 / 8 heads of 128, vocabulary 131,072, 262,144 "
        "positions by YaRN x16, untied) at the 14B's size: 40 layers of 5120 (NVIDIA Megatron-Bridge's Ministral 3 "
        "page, https://docs.nvidia.com/nemo/megatron-bridge/nightly/models/vlm/ministral3.html: '40 layers, 5120 "
        "hidden size', '32 attention heads, 8 query groups (GQA)', 256K context by YaRN) with an FFN of 16,384 and "
        "heads of 128 (https://apxml.com/models/ministral-3-14b: 'FFN Intermediate Size (Dense) 16,384', 'Attention "
        "Head Dimension 128', 'Vocabulary Size 131,072'). Mistral's card: a 13.5B language model and a 0.4B vision "
        "encoder (the decoder of this config: 13,506,073,600). Ollama's ministral-3:14b blob (ollama/ollama#13303, "
        "0.13.1: architecture=mistral3 num_tensors=585) holds 40 x 9 + 3 = 363 decoder tensors and 222 vision ones. "
        + _MINISTRAL3_TOWER + " Second-hand throughout: no copy of the repo's config.json was read.",
        ("ministral-3:14b", "mistralai/ministral-3-14b-base-2512"),
        text={"hidden_size": 5120, "intermediate_size": 16384, "num_hidden_layers": 40},
        name="Ministral 3 14B Instruct 2512"),
]

_HR_GEMMA4_E4B = _HR.format("a47bc62da409587ff0b49f5ef3611b45754277b5", "issue399-arch-sweep-gemma4-e4b-it-qat-q4.stderr.log")
_HR_GEMMA4_12B = _HR.format("175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4", "issue399-arch-sweep-gemma4-12b-it-qat-q4.stderr.log")

ROWS += [
    Row("gemma-4-e4b-it", "gemma-4-e2b-it", "google/gemma-4-E4B-it",
        "Gemma 4 E4B it: the E2B's architecture (per-layer embeddings, KV-shared last layers, 512-token sliding "
        "window, global head 512 / sliding head 256) at the size the Google QAT Q4_0 GGUF's metadata prints in a "
        "llama-server b9849 log (" + _HR_GEMMA4_E4B + "; general.base_model.0.name 'Gemma 4 E4B It'): "
        "gemma4.block_count 42, embedding_length 2560, feed_forward_length 10240 for every layer (a scalar: the "
        "E2B's file, whose KV-shared layers run a double-wide MLP, prints a per-layer array), head_count 8, "
        "head_count_kv 2, key_length 512 / key_length_swa 256, sliding_window 512, sliding_window_pattern 5 "
        "sliding then 1 full (n_embd_k_gqa 512 / 1024), shared_kv_layers 18, embedding_length_per_layer_input "
        "256, 262,144 tokens, context 131,072, final_logit_softcapping 30; 666 tensors and print_info 'model "
        "params = 7.46 B', which this config gives (7,463,013,674). The vision and audio encoders are not in the "
        "GGUF and their shapes were not read: not counted. Ollama's gemma4:latest is its e4b tag: ochyai/vibe-local#21 "
        "lists 'gemma4:e4b (= gemma4:latest)', 9.6GB, pulled with Ollama 0.20.2; kryptobaseddev/cleo#1080's table "
        "read off ollama.com/library/gemma4 gives e4b 9.6 GB Q4_K_M.",
        ("gemma4", "gemma4:e4b"),
        text={"hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 42, "num_key_value_heads": 2,
              "num_kv_shared_layers": 18, "use_double_wide_mlp": False,
              "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 7},
        name="Gemma 4 E4B it"),
    Row("gemma-4-12b-it", "gemma-4-31b-it", "google/gemma-4-12B-it",
        "Gemma 4 12B it: the 31B's architecture (K = V on the global layers, 1,024-token sliding window, global head "
        "512 / sliding head 256, no per-layer embeddings) at the size the GGUF's metadata prints in a llama-server "
        "b9849 log (" + _HR_GEMMA4_12B + "; a Q4_0 of the 12B QAT checkpoint, general.name "
        "'12B_qat_it_dequant_safetensors'): gemma4.block_count 48, embedding_length 3840, feed_forward_length 15360, "
        "head_count 16, head_count_kv 8 on the sliding and 1 on the global layers (sliding_window_pattern 5 "
        "sliding then 1 full), key_length 512 / key_length_swa 256, sliding_window 1024, shared_kv_layers 0, "
        "embedding_length_per_layer_input 0, 262,144 tokens, context 262,144. K = V on the global layers and tied "
        "embeddings read from the file's 667 tensors and print_info 'model params = 11.91 B': this config gives "
        "667 and 11,907,350,576 (separate V: 675 tensors, 12.14B; untied: 668, 12.91B). The vision and audio "
        "encoders are not in the GGUF and their shapes were not read: not counted.",
        ("gemma4:12b",),
        text={"hidden_size": 3840, "intermediate_size": 15360, "num_hidden_layers": 48, "num_attention_heads": 16,
              "num_key_value_heads": 8, "num_global_key_value_heads": 1,
              "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 8},
        drop=("vision_config",), name="Gemma 4 12B it"),
]

_HR_QWEN38_27B = _HR.format("175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4", "issue399-arch-sweep-qwen3.8-27b-q4.stderr.log")

ROWS += [
    Row("qwen3.8-27b", "qwen3.5-27b", "Qwen/Qwen3.8-27B",
        "Qwen3.8 27B: the Qwen3.5 27B architecture unchanged. The unsloth Qwen3.8-27B-GGUF's metadata a llama-server "
        "b9849 log prints (" + _HR_QWEN38_27B + "; general.base_model.0.repo_url "
        "https://huggingface.co/Qwen/Qwen3.8-27B) gives every shape of it: qwen35.block_count 65 with "
        "nextn_predict_layers 1 (64 layers + the MTP block), embedding_length 5120, feed_forward_length 17408, "
        "head_count 24, head_count_kv 4, key/value_length 256, ssm.conv_kernel 4, ssm.state_size 128, "
        "ssm.group_count 16, ssm.time_step_rank 48, full_attention_interval 4, rope.dimension_count 64, freq_base "
        "1e7, 248,320 tokens, context 262,144; 866 tensors and print_info 'model params = 27.32 B', both what "
        "the Qwen3.5 27B config gives with its MTP layer (27,320,697,856). Its vision tower is the Qwen3.5 27B's "
        "by " + _TIMM_QWEN3_VIT + " (qwen3_vit_416m, .qwen3_8_27b and .qwen3_5_27b, 5120 out). Ollama's "
        "qwen3.8:latest is its 27b tag: both are the manifest sha256:22130167c4c2... (an ollama list in public code, "
        "code search id 70869428268: qwen3.8:27b 22130167c4c2 17 GB; qwen3.8:latest@sha256:22130167c4c2..., 27.3B "
        "Q4_K_M, ids 69029149579, 69725392278).",
        ("qwen3.8", "qwen3.8:27b"), name="Qwen3.8 27B"),
]

ROWS += [
    Row("kimi-k2.7-code", "kimi-k2.5", "moonshotai/Kimi-K2.7-Code",
        "Kimi K2.7 Code: nvidia/Kimi-K2.7-Code-NVFP4's config.json (ai-dynamo/aiconfigurator@095f58a51c4c "
        "aic-core/src/aiconfigurator_core/model_configs/nvidia--Kimi-K2.7-Code-NVFP4_config.json) carries the K2.5 "
        "architecture: kimi_k25 with a deepseek_v3 text_config of 61 layers (the first dense), hidden 7168, 64 "
        "heads, MLA (q_lora_rank 1536, kv_lora_rank 512, qk 128 + 64, v 128), 384 experts of 2048 with 8 active "
        "and 1 shared, vocabulary 163,840, YaRN x64 over 4,096 (262,144 positions), and the MoonViT tower; every "
        "memory-relevant value equals K2.5's (only metadata keys differ), so the original is taken as K2.5's.",
        ("kimi-k2.7-code",), name="Kimi K2.7 Code"),
]

# ---- Ollama library fine-tunes ----------------------------------------------------------------------------------
# Models of ollama.com/library that are a named base's fine-tune with its architecture (each model card names the
# base); the alias is the library name and the size tag its page lists (the bare name is the latest tag).
ROWS += [
    _tune("llama2-7b-chat-uncensored", "llama-2-7b", "georgesung/llama2_7b_chat_uncensored", "Llama-2-7b",
          "llama2-uncensored", "llama2-uncensored:7b", name="Llama 2 7B Chat Uncensored", family="llama"),
    _tune("nous-hermes-llama-2-7b", "llama-2-7b", "NousResearch/Nous-Hermes-llama-2-7b", "Llama-2-7b", "nous-hermes",
          "nous-hermes:7b", name="Nous Hermes Llama 2 7B", family="llama"),
    _tune("stablebeluga-7b", "llama-2-7b", "stabilityai/StableBeluga-7B", "Llama-2-7b", "stable-beluga",
          "stable-beluga:7b", name="Stable Beluga 7B", family="llama"),
    _tune("neural-chat-7b-v3-3", "mistral-7b-v0.1", "Intel/neural-chat-7b-v3-3", "Mistral-7B-v0.1", "neural-chat",
          "neural-chat:7b", "neural-chat:7b-v3.3", name="Neural Chat 7B v3.3", family="mistral"),
    _tune("mistral-7b-openorca", "mistral-7b-v0.1", "Open-Orca/Mistral-7B-OpenOrca", "Mistral-7B-v0.1",
          "mistral-openorca", "mistral-openorca:7b", name="Mistral 7B OpenOrca", family="mistral",
          why="A fine-tune of Mistral-7B-v0.1 (model card); the ChatML tokens extend the vocabulary to 32,002.",
          text={"vocab_size": 32002}),
    _tune("notus-7b-v1", "zephyr-7b-beta", "argilla/notus-7b-v1", "zephyr-7b-sft-full (Mistral-7B-v0.1)", "notus",
          "notus:7b", name="Notus 7B v1", family="mistral"),
    # Starling-LM-7B-beta is fine-tuned from OpenChat 3.5 0106 (model card): its 8K context and 32,002-token vocabulary
    _tune("starling-lm-7b-beta", "openchat-3.5-0106", "Nexusflow/Starling-LM-7B-beta", "Openchat-3.5-0106",
          "starling-lm", "starling-lm:7b", "starling-lm:7b-beta", name="Starling LM 7B beta", family="mistral"),
    _tune("dolphin-2.7-mixtral-8x7b", "mixtral-8x7b-v0.1", "cognitivecomputations/dolphin-2.7-mixtral-8x7b",
          "Mixtral-8x7B-v0.1", "dolphin-mixtral", "dolphin-mixtral:8x7b", "dolphin-mixtral:8x7b-v2.7",
          name="Dolphin 2.7 Mixtral 8x7B",
          family="mistral", why="A fine-tune of Mixtral-8x7B-v0.1 (model card); the ChatML tokens extend the "
          "vocabulary to 32,002.", text={"vocab_size": 32002}),
    _tune("notux-8x7b-v1", "mixtral-8x7b-instruct-v0.1", "argilla/notux-8x7b-v1", "Mixtral-8x7B-Instruct-v0.1",
          "notux", "notux:8x7b", name="Notux 8x7B v1", family="mistral"),
    _tune("dolphin-2.6-phi-2", "phi-2", "cognitivecomputations/dolphin-2_6-phi-2", "phi-2", "dolphin-phi",
          "dolphin-phi:2.7b", name="Dolphin 2.6 Phi-2", family="phi"),
    _tune("nuextract-3.8b", "phi-3-mini-4k-instruct", "numind/NuExtract", "Phi-3-mini-4k-instruct", "nuextract",
          "nuextract:3.8b", name="NuExtract", family="phi"),
    _tune("phind-codellama-34b-v2", "codellama-34b", "Phind/Phind-CodeLlama-34B-v2", "CodeLlama-34B",
          "phind-codellama", "phind-codellama:34b", "phind-codellama:34b-v2",
          name="Phind CodeLlama 34B v2", family="codellama"),
    _tune("llama3-chatqa-1.5-8b", "llama-3-8b", "nvidia/Llama3-ChatQA-1.5-8B", "Llama-3-8B", "llama3-chatqa",
          "llama3-chatqa:8b", name="Llama3 ChatQA 1.5 8B", family="llama"),
    _tune("llama-3-firefunction-v2", "llama-3-70b-instruct", "fireworks-ai/llama-3-firefunction-v2",
          "Llama-3-70B-Instruct", "firefunction-v2", "firefunction-v2:70b", name="Llama 3 FireFunction v2",
          family="llama"),
    # Yi-Coder 9B: Yi-1.5 9B's shapes with a 128K context (model card: 'a maximum context length of 128K tokens')
    _tune("yi-coder-9b-chat", "yi-1.5-9b-chat", "01-ai/Yi-Coder-9B-Chat", "Yi-1.5-9B", "yi-coder", "yi-coder:9b",
          name="Yi Coder 9B Chat", family="yi", why="Continued pretraining of Yi-1.5-9B with its architecture and a "
          "131,072-token context (model card: 128K).", text={"max_position_embeddings": 131072}),
    _tune("openthinker-7b", "qwen2.5-7b-instruct", "open-thoughts/OpenThinker-7B", "Qwen2.5-7B-Instruct",
          "openthinker", "openthinker:7b", name="OpenThinker 7B", family="qwen"),
    _tune("marco-o1-7b", "qwen2-7b-instruct", "AIDC-AI/Marco-o1", "Qwen2-7B-Instruct", "marco-o1", "marco-o1:7b",
          name="Marco-o1", family="qwen"),
    _tune("smallthinker-3b-preview", "qwen2.5-3b-instruct", "PowerInfer/SmallThinker-3B-Preview",
          "Qwen2.5-3B-Instruct", "smallthinker", "smallthinker:3b", "smallthinker:3b-preview",
          name="SmallThinker 3B Preview", family="qwen"),
    _tune("athene-v2-chat", "qwen2.5-72b-instruct", "Nexusflow/Athene-V2-Chat", "Qwen2.5-72B-Instruct", "athene-v2",
          "athene-v2:72b", name="Athene V2 Chat", family="qwen"),
    _tune("deepscaler-1.5b-preview", "deepseek-r1-distill-qwen-1.5b", "agentica-org/DeepScaleR-1.5B-Preview",
          "DeepSeek-R1-Distill-Qwen-1.5B", "deepscaler", "deepscaler:1.5b", "deepscaler:1.5b-preview",
          name="DeepScaleR 1.5B Preview",
          family="qwen"),
    _tune("deepcoder-14b-preview", "deepseek-r1-distill-qwen-14b", "agentica-org/DeepCoder-14B-Preview",
          "DeepSeek-R1-Distill-Qwen-14B", "deepcoder", "deepcoder:14b", "deepcoder:14b-preview",
          name="DeepCoder 14B Preview", family="qwen"),
    _tune("r1-1776-distill-llama-70b", "deepseek-r1-distill-llama-70b", "perplexity-ai/r1-1776-distill-llama-70b",
          "DeepSeek-R1-Distill-Llama-70B", "r1-1776", "r1-1776:70b", "r1-1776:70b-distill-llama",
          name="R1 1776 Distill Llama 70B", family="llama"),
    # EXAONE Deep 7.8B: the model card's table is EXAONE 3.5 7.8B's (6.98B without embeddings, 32 layers, GQA 32/8,
    # vocabulary 102,400, 32,768 context)
    _tune("exaone-deep-7.8b", "exaone-3.5-7.8b-instruct", "LGAI-EXAONE/EXAONE-Deep-7.8B", "EXAONE-3.5-7.8B-Instruct",
          "exaone-deep", "exaone-deep:7.8b", name="EXAONE Deep 7.8B", family="exaone"),
    # embedding models: paraphrase-multilingual-mpnet-base-v2 is an XLM-RoBERTa base (278M, model card), the shapes of
    # granite-embedding-278m-multilingual; snowflake-arctic-embed-l-v2.0 is built on bge-m3-retromae (model card):
    # bge-m3's XLM-RoBERTa large with 8,192 positions
    _tune("paraphrase-multilingual-mpnet-base-v2", "granite-embedding-278m-multilingual",
          "sentence-transformers/paraphrase-multilingual-mpnet-base-v2", "xlm-roberta-base",
          "paraphrase-multilingual", "paraphrase-multilingual:278m", name="paraphrase-multilingual-mpnet-base-v2",
          family="embedding"),
    _tune("snowflake-arctic-embed-l-v2.0", "bge-m3", "Snowflake/snowflake-arctic-embed-l-v2.0", "bge-m3-retromae",
          "snowflake-arctic-embed2", "snowflake-arctic-embed2:568m", name="snowflake-arctic-embed-l-v2.0",
          family="embedding"),
]
