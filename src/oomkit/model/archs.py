"""How llama.cpp names and lays out each architecture: which have sliding windows (and their default
patterns), which are recurrent or hybrid, which have no KV cache. Read from llama.cpp@0c1e57098
src/llama-arch.cpp and src/models/<arch>.cpp; shared by the GGUF reader and the llama.cpp engine.
"""

from ..errors import OomkitError

# Architectures with sliding-window layers in llama.cpp, with the pattern each uses when the GGUF gives none
# (load_swa_pattern(ml, n) / set_swa_pattern(n) in src/models/gemma2.cpp, gemma3.cpp, gemma3n.cpp,
# openai-moe.cpp, cohere2.cpp, llama4.cpp) and the window each assumes when the GGUF has none (gemma2: 4096;
# llama4: its chunk, 8192, whatever the GGUF says unless it says 0).
# olmo2 (src/models/olmo2.cpp load_arch_hparams): sliding only when the GGUF names a window (OLMo 3, whose
# converter writes sliding_window), then load_swa_pattern(ml, 4): the GGUF's pattern array, else 3 sliding : 1 full
# The same load_swa_pattern(ml, n[, dense_first]) with no array in the file: muse-glimmer.cpp, exaone-moe.cpp (4),
# cohere2moe.cpp (4, dense first), afmoe.cpp, mellum.cpp (4, when the GGUF names a window), plamo3.cpp (8, likewise)
# and exaone4.cpp (4, on the 64-layer EXAONE 4.0 32B only: SWA_BY_LAYER_COUNT)
SWA_PATTERN_DEFAULT = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "gpt-oss": 2, "cohere2": 4, "llama4": 4,
                       "smallthinker": 4, "laguna": 4, "olmo2": 4, "muse-glimmer": 4, "exaone-moe": 4, "cohere2moe": 4,
                       "afmoe": 4, "mellum": 4, "plamo3": 8, "exaone4": 4}
# exaone4.cpp load_arch_hparams: only a 64-layer file (EXAONE 4.0 32B) slides, with n_swa = 4096 whatever the GGUF
# says; other depths (the 1.2B) have no sliding layers even where the GGUF names a window
SWA_BY_LAYER_COUNT = {"exaone4": {64: 4096}}
SWA_WINDOW_DEFAULT = {"gemma2": 4096, "llama4": 8192}
# Patterns whose first layer of each group is the full one (set_swa_pattern(n, dense_first=true)), and windows
# the loader sets over the GGUF's value once the GGUF names any window (llama-model.cpp load_hparams,
# LLM_ARCH_SMALLTHINKER: n_swa = 4096, set_swa_pattern(4, true); measured: 6 layers give 2 full caches, and a
# GGUF window of 2048 still gets 4096 + n_ubatch cells)
# laguna (src/models/laguna.cpp load_arch_hparams): sliding only when the GGUF names a window, then
# set_swa_pattern(4, dense_first=true) (Laguna-XS.2: full, SWA, SWA, SWA); per-layer head counts from the GGUF
SWA_DENSE_FIRST = {"smallthinker", "laguna", "cohere2moe"}
SWA_WINDOW_FORCED = {"smallthinker": 4096}
# Sliding-window architectures that take the per-layer pattern from the GGUF's sliding_window_pattern array
# (a required ml.get_arr(LLM_KV_ATTENTION_SLIDING_WINDOW_PATTERN, ...) in src/models/granite-swa.cpp, spark2-5.cpp,
# step35.cpp, mimo2.cpp, gemma4.cpp, maple.cpp); oomkit reads them only when the file carries the array.
SWA_PATTERN_FROM_GGUF = {"granite_swa", "spark2_5", "step35", "mimo2", "gemma4", "maple"}
# Windowed layers that attend within fixed chunks (LLAMA_SWA_TYPE_CHUNKED, src/models/llama4.cpp); their cache
# is sized like a sliding window's (llama_kv_cache_iswa: min(n_ctx_seq, n_swa + n_ubatch) cells).
CHUNKED_ARCHS = {"llama4"}
# Layers from this index on reuse an earlier layer's KV and own no cache (hparams.n_layer_kv_from_start, set to
# 20 in src/models/gemma3n.cpp load_arch_hparams: Gemma 3n E2B / E4B both keep 20 KV layers).
KV_FROM_START = {"gemma3n": 20}
# ... or n_layer - attention.shared_kv_layers, read from the GGUF (src/models/gemma4.cpp load_arch_hparams:
# n_layer_kv_from_start = n_layer_all - n_kv_shared_layers)
KV_SHARED_FROM_GGUF = {"gemma4"}
# Looped trunks: {arch}.num_loops runs the physical blocks that many times, each pass a logical layer with its own KV
# cache (src/models/nanbeige.cpp load_arch_hparams: n_layer_all = n_layer x num_loops)
LOOPED_ARCHS = {"nanbeige"}
# Architectures whose next-n (MTP) blocks llama.cpp does not load (TENSOR_SKIP in load_arch_tensors,
# src/models/glm4-moe.cpp, glm-dsa.cpp, glm5-next.cpp, dots3note.cpp, qwen4exp.cpp unless a draft head is asked
# for; deepseek4: measured, "model has unused tensor blk.N.nextn..."): the file holds them, the model buffer does not.
# qwen35, qwen35moe, qwen3next, deepseek32: measured with llama-cpp-python 0.3.36 on files with an appended block
# ("model has unused tensor blk.4.nextn.eh_proj.weight ... -- ignoring" unless llama_model_params.load_mtp)
# deepseek2: GLM-4.7-Flash's conversion keeps its MTP block (conversion/glm.py Glm4MoeLiteModel skip_mtp False);
# src/models/deepseek2.cpp load_arch_tensors marks it TENSOR_SKIP unless load_mtp (measured with 0.3.36 on a 2-layer
# GLM-4.7-Flash-shaped file + the block: model buffer 805.01 MiB, the block's 345 MiB out; its layer not cached);
# mimo2 the same (src/models/mimo2.cpp; measured on 6 MiMo-V2-Flash layers + the 3 MTP blocks: 18530.49 MiB)
NEXTN_SKIPPED = {"glm4moe", "glm-dsa", "glm5-next", "dots3note", "qwen4exp", "deepseek4", "qwen35", "qwen35moe",
                 "qwen3next", "deepseek32", "deepseek2", "mimo2"}
# Architectures llama.cpp runs as pure recurrent (src/llama-arch.cpp llm_arch_is_recurrent).
RECURRENT_ARCHS = {"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"}
# Hybrids whose recurrent layers follow full_attention_interval (src/models/qwen3next.cpp, qwen35*.cpp).
INTERVAL_HYBRIDS = {"qwen3next", "qwen35", "qwen35moe", "minimax-01", "qwen4exp"}
# Hybrids whose recurrent layers are those with head_count_kv == 0 (granite-hybrid.cpp, jamba.cpp, lfm2.cpp...).
KV_ZERO_HYBRIDS = {"granitehybrid", "jamba", "lfm2", "lfm2moe", "plamo2", "nemotron_h", "nemotron_h_moe",
                   "kimi-linear", "kimi-k3", "bailingmoe3", "glm5-next"}
# Kimi Delta Attention layers (src/models/kimi-linear.cpp: recurrent where head_count_kv is 0, MLA elsewhere):
# per layer and sequence, the last ssm.conv_kernel - 1 inputs of the q, k and v short convolutions
# (3 x kda.head_dim x n_head each) and one kda.head_dim^2 state per head; measured: 2 cells x 3 KDA layers of
# 32 heads of 128 with a kernel of 4 hold R 0.84 MiB and S 12.00 MiB
KDA_ARCHS = {"kimi-linear", "kimi-k3", "bailingmoe3", "glm5-next"}  # kimi-k3, bailingmoe3: the same layer kinds (measured alike)
# Lightning-attention layers (src/models/minimax-01.cpp): no convolution state, one head_dim^2 state per head
# (measured: 2 cells x 1 layer of 32 heads of 128 = S 4.00 MiB, R 0)
LIGHTNING_ARCHS = {"minimax-01"}
# Hybrids whose recurrent layers are short convolutions (src/models/lfm2.cpp): the state is the last
# shortconv.l_cache - 1 inputs of width n_embd (llama_hparams::n_embd_r), no SSM state.
SHORTCONV_ARCHS = {"lfm2", "lfm2moe"}
# Encoder-only models get no KV cache at all (llama_model::create_memory returns nullptr).
# The diffusion decoders (LLaDA, LLaDA-MoE, Dream, RND1) attend without a causal cache: llama_model::create_memory gives them none.
# t5encoder is not among them: llama.cpp@0c1e57098 gives it a full KV cache of every layer (measured: 8192 cells x 2
# layers of 32 x 128 in f16 = 128 + 128 MiB)
NO_CACHE_ARCHS = {"wavtokenizer-dec", "bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe", "neo-bert", "eurobert",
                  "modern-bert", "gemma-embedding", "dream", "llada", "llada-moe", "rnd1"}
# Decoders whose per-layer head_count may be 0 for a layer without attention (src/models/deci.cpp): the layer
# stays in the KV cache's layer count with 0-byte rows.
NO_ATTENTION_LAYERS_OK = {"deci"}
# DeepSeek-V4 (src/models/deepseek4.cpp, llama_kv_cache_dsv4): every trunk layer slides (set_swa_pattern(0)) over
# one shared K-only head of key_length; layers with attention.compress_ratios 4 / 128 also sit in a compressed
# cache (CSA / HCA) of one row per 4 / 128 cells, the ratio-4 layers with a lightning-indexer cache beside it
DSV4_ARCHS = {"deepseek4"}
# Architectures whose loader adds a single-head attention layer past the GGUF's blocks that the KV cache holds
# (src/models/granite-switch.cpp: the adapter router at index n_layer, n_layer_all = n_layer + 1); otherwise
# plain GQA decoders with per-slot LoRA stacks in every block (weights from the tensors)
ROUTER_LAYER_ARCHS = {"graniteswitch"}
# Architectures llama.cpp runs without flash attention whatever -fa says (llama_init_from_model in
# src/llama-context.cpp: "flash_attn is not compatible with Grok - forcing off"); a quantized V cache is then refused
FLASH_ATTN_FORCED_OFF = {"grok"}
# Plain decoders whose cache and weights follow the shared rules (standard GQA attention, one cache, weights
# from the tensors), each loaded by llama.cpp@0c1e57098 and checked against it (tests/test_llamacpp_archs.py).
PLAIN_DECODERS = {"ernie4_5", "ernie4_5-moe", "seed_oss", "minimax-m2", "hunyuan-moe", "hunyuan-dense",
                  "xverse", "exaone", "qwen", "mpt", "bloom", "refact", "codeshell", "olmo", "nemotron", "arcee", "jais",
                  "jais2", "maincoder", "nanbeige", "pangu-embedded", "gptneox", "apertus", "talkie", "chameleon",
                  "cogvlm", "hrm_text", "openelm", "plamo", "plamo3", "bailingmoe", "mellum", "grovemoe", "bailingmoe2", "hunyuan_vl",
                  "llama-embed", "deci", "grok", "dots1", "paddleocr", "hy_v3",
                  "deepseek2-ocr", "minimax-m3", "eagle3", "dflash", "t5", "qwen3tts", "pockettts"}
# MLA decoders loaded with deepseek2's tensors (kv_lora_rank in the GGUF makes their layers latent)
MLA_DECODERS = {"mistral4", "deepseek32", "glm-dsa", "hy_v4"}
# DeepSeek sparse attention (DSA): beside the latent cache, llama_kv_cache_dsa keeps a second cache of one
# indexer key (attention.indexer.key_length, of -ctk's type) per token and layer (src/models/deepseek32.cpp:
# mctx_lid->cpy_k of indexer_k; measured: 8192 cells x 2 layers x 128 in q8_0 = 2.12 MiB)
DSA_INDEXER_ARCHS = {"deepseek32", "glm-dsa", "dots3note", "glm5-next"}
# k-pool indexers (llama_memory_hybrid_idx, src/llama-memory-hybrid-idx.cpp): the indexer cache's row holds the
# per-token key and the pooled key side by side, indexer_head_size x indexer_kpool_row elements (glm5-next: key |
# gate | pooled; measured: 8192 cells x 1 layer, key 128 -> 6.00 MiB of f16, key 64 -> 3.00 MiB). GLM5-Next
# (src/models/glm5-next.cpp): KDA recurrent layers where head_count_kv is 0 (as kimi-linear), nope-only MLA layers
# (rope.dimension_count 0: the latent row is kv_lora_rank) with that indexer, hyper-connection weights per block
INDEXER_KPOOL_ROW = {"glm5-next": 3}
# MLA layers beside sliding MLA layers (src/models/dots3note.cpp: build_attn_inp_k_dsa_iswa; the window and the
# per-layer pattern from the GGUF, the indexer on the layers attention.indexer.types marks): a latent K-only
# cache for the full layers, the DSA indexer cache beside it, and a latent K-only SWA cache (measured: 8192
# cells x 1 full layer of 576 f16 = 9.00 MiB, indexer 2.00 MiB, 4608 cells x 3 sliding layers = 15.19 MiB)
LATENT_SWA_ARCHS = {"dots3note"}
# MiniMax sparse attention (llama_kv_cache_msa, src/models/minimax-m3.cpp): GQA layers with an indexer cache that
# holds a key of attention.indexer.key_length (-ctk's type) and a value of one head (-ctv's type) per cell and
# layer (measured: 8192 cells x 2 layers, indexer key 64 -> K 2.00 MiB, V 4.00 MiB of 128-wide f16 rows)
MSA_INDEXER_ARCHS = {"minimax-m3"}
# GQA layers with a K-only DSA indexer cache beside them (src/models/qwen4exp.cpp: gated delta-net layers by
# full_attention_interval, full layers of q|gate GQA with indexer.q_proj / k_proj; llama_memory_hybrid_idx's
# indexer row is the indexer key_length when the GGUF names no kpool; measured: 8192 cells x 1 layer, key 128 ->
# 2.00 MiB of f16); hyper-connection and PLE weights come from the tensors
GQA_DSA_INDEXER_ARCHS = {"qwen4exp"}
# Low-rank attention whose cache holds the decompressed per-head K and V (src/models/minicpm3.cpp: build_attn
# gets k_states = [k_nope, k_pe] of key_length and v_states of value_length per head; no latent cache; plm.cpp
# the same), so
# kv_lora_rank in the GGUF does not make their layers latent
MLA_DECOMPRESSED = {"minicpm3", "plm"}
# GGUF architectures written by converters llama.cpp never merged: its loader stops on them ("unknown model
# architecture", measured with llama-cpp-python 0.3.36's build on a phi4flash file) and so does oomkit, saying why
NO_LLAMACPP_ARCHS = {
    # Phi-4-mini-flash-reasoning (SambaY): conversion/phi4flash.py and src/models/phi4flash.cpp of
    # ggml-org/llama.cpp#20880, closed unmerged; src/llama-arch.cpp's LLM_ARCH_NAMES names no phi4flash
    "phi4flash": "Phi-4-mini-flash-reasoning's SambaY layers, from the converter of ggml-org/llama.cpp#20880, which "
                 "was closed unmerged",
}
KNOWN_ARCHS = (
    {"llama", "llama4", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3vl", "qwen3vlmoe", "gemma",
     "gemma3n", "deepseek2", "phi2", "phi3", "phimoe", "granite", "granitemoe", "falcon-h1", "command-r", "olmo2",
     "olmoe", "glm4", "glm4moe", "starcoder2", "internlm2", "mistral3", "smollm3", "exaone4", "deepseek", "minicpm",
     "stablelm", "gpt2", "falcon", "starcoder", "baichuan", "orion", "chatglm", "dbrx", "arctic", "bitnet", "t5encoder"}
    | SWA_PATTERN_DEFAULT.keys() | SWA_PATTERN_FROM_GGUF | RECURRENT_ARCHS | INTERVAL_HYBRIDS | KV_ZERO_HYBRIDS | NO_CACHE_ARCHS
    | PLAIN_DECODERS | MLA_DECODERS | MLA_DECOMPRESSED | ROUTER_LAYER_ARCHS | LATENT_SWA_ARCHS | DSV4_ARCHS
)


# config.json model types kept as the architecture's name (hf_config.py): the engines key on them as written; their
# GGUF names are deepseek32 / glm-dsa / minimax-m2 (llamacpp/first_builds.py _GGUF_NAME)
HF_NAMED_ARCHS = {"deepseek_v32", "glm_moe_dsa", "minimax_m2"}


_VLLM_FIRST = {("dsv4", "vLLM"): " (vLLM runs DeepseekV4ForCausalLM from 0.20.0)",
               # models/minimax_m3/nvidia/model.py, common/indexer.py (read in the 0.24.0, 0.28.0, 0.34.0 wheels):
               # a FullAttentionSpec K and V on every layer (the generic Attention on the full_attention layers,
               # MiniMaxM3SparseAttention.get_kv_cache_spec on the minimax_m3_sparse ones) and, on the sparse layers,
               # MiniMaxM3IndexerCache's key-only MLAAttentionSpec (index_head_dim per token, bf16 by default), the
               # sparse and indexer backends on 128-token kernel blocks (get_supported_kernel_block_sizes)
               ("msa", "vLLM"): " (vLLM runs MiniMaxM3SparseForCausalLM from 0.24.0: K and V on every layer plus a "
                                "key-only indexer cache on the sparse layers, in 128-token pages, loaded from the "
                                "safetensors checkpoint whose config.json oomkit does not read; not sized)"}


def refuse_llamacpp_only_caches(spec, engine: str) -> None:
    """Caches oomkit models for llama.cpp only, refused by the other engines' KV sizing rather than sized as the
    plain layers they resemble: DeepSeek-V4's compressed attention (DSV4_ARCHS; a layer with k_only /
    compress_ratio: one shared K-only head over a 128-token window beside the ratio-4 / ratio-128 compressed caches
    and the ratio-4 layers' indexer) and MiniMax-M3's sparse attention (MSA_INDEXER_ARCHS: an indexer key and value
    per token beside each GQA layer's K and V). Sized as sliding or full GQA layers they came out as caches these
    engines do not build (DeepSeek-V4's config.json is read as its GGUF, hf_config._deepseek_v4_spec, and refused
    here the same way). vLLM's
    own support, read in the released wheels' model_executor/models/registry.py: DeepseekV4ForCausalLM from 0.20.0
    (absent in 0.19.1), MiniMaxM3SparseForCausalLM from 0.24.0 (absent in 0.23.0); the message names it. From 0.20.0
    vLLM's own DeepSeek-V4 caches are sized (engines/vllm/kv.py deepseek_v4_plan) and this refusal is what older
    releases get."""
    if spec.architecture in DSV4_ARCHS or any(
            la.attention is not None and (la.attention.k_only or la.attention.compress_ratio) for la in spec.layers):
        raise OomkitError(f"{spec.name}: DeepSeek-V4's compressed attention caches (a K-only sliding head, the "
                          f"ratio-4 / ratio-128 compressed caches and their indexer) are modelled for llama.cpp "
                          f"only, not for {engine}{_VLLM_FIRST.get(('dsv4', engine), '')}; use --engine llama.cpp")
    if spec.architecture in MSA_INDEXER_ARCHS:
        raise OomkitError(f"{spec.name}: MiniMax-M3's sparse-attention indexer cache is modelled for llama.cpp "
                          f"only, not for {engine}{_VLLM_FIRST.get(('msa', engine), '')}; use --engine llama.cpp")
