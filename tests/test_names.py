"""Model names as users type them: quantized derivatives, GGUF repos, URLs, Ollama tags with qualifiers, quant tags.

Every repo name below is a real Hugging Face repo (https://huggingface.co/<name>), each also found named in public
code (vllm serve / llama-server -hf / mlx_lm commands, download scripts); every Ollama tag is listed on its library
page (https://ollama.com/library/<name>/tags). They resolve offline (HF_HUB_OFFLINE=1, an empty cache) to
their catalog base and the format their name stands for, labelled as inferred.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import oomkit
from oomkit.errors import OomkitError
from oomkit.model import catalog, names
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import explain, known_quant_tags, resolve, split_quant


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def _bytes(spec) -> int:
    return sum(t.nbytes for t in spec.weights.tensors)


def _layers(spec):
    return tuple((layer.kind, layer.attention, layer.recurrent) for layer in spec.layers)


# ---- item 7: the three defects ---------------------------------------------------------------------------


def test_gpt_oss_mxfp4_tag_on_gguf_engines():
    # was: "unknown ggml type 'bfloat16'" (the HF mxfp4 layout handed to llama.cpp)
    for ref in ("gpt-oss:20b", "openai/gpt-oss-20b:MXFP4", "gpt-oss:20b-mxfp4"):
        for engine in ("llama.cpp", "ollama"):
            est = oomkit.estimate(ref, engine=engine)
            assert est.weights_bytes > 11e9, (ref, engine)
    spec = resolve("openai/gpt-oss-20b:MXFP4")
    assert spec.weights.format == "MXFP4_MOE"
    types = {t.name: t.dtype for t in spec.weights.tensors}
    assert types["blk.0.ffn_down_exps.weight"] == "mxfp4" and types["blk.0.attn_q.weight"] == "q8_0"
    # an engine that loads the checkpoint reads MXFP4 as the HF mxfp4 layout (experts only)
    hf = resolve("openai/gpt-oss-20b:MXFP4", tag_formats=False)
    assert hf.weights.format == "mxfp4"
    assert oomkit.estimate("openai/gpt-oss-20b:MXFP4", engine="vllm").weights_bytes > 12e9


@pytest.mark.parametrize("ref,tag", [("Qwen/Qwen3-8B:Q4_K_XXL", "Q4_K_XXL"), ("qwen3:8b-q4_K_XXL", "q4_K_XXL"),
                                     ("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XXL", "UD-Q4_K_XXL"),
                                     ("hf.co/bartowski/Qwen_Qwen3-8B-GGUF:IQ5_XXS", "IQ5_XXS")])
def test_unknown_quant_tag_is_not_an_unknown_model(ref, tag):
    with pytest.raises(OomkitError) as e:
        resolve(ref)
    msg = str(e.value)
    assert msg.startswith(f"unknown quant tag {tag!r}; known: F32, F16, ")
    assert "Q4_K_M" in msg and "UD-Q4_K_XL" in msg and "IQ4_XS" in msg and "unknown model" not in msg


def test_unknown_quant_tag_cli_exit_2():
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "Qwen/Qwen3-8B:Q4_K_XXL", "--json"],
                       capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=60)
    assert r.returncode == 2 and "unknown quant tag 'Q4_K_XXL'; known:" in r.stderr and "Traceback" not in r.stderr


def test_tags_that_are_not_quants_stay_model_names():
    assert split_quant("qwen3:30b-a3b") == ("qwen3:30b-a3b", None)
    assert split_quant("gemma3:27b-it-qat") == ("gemma3:27b-it-qat", None)
    assert split_quant("phi3:3.8b-mini-128k-instruct-q4_0") == ("phi3:3.8b-mini-128k-instruct", "q4_0")
    assert split_quant("hf.co/mradermacher/Qwen3-8B-i1-GGUF:i1-Q4_K_M")[1] == "Q4_K_M"


# state-spaces/mamba-2.8b-hf config.json, verbatim as quoted in confucianfighter/mamba-2.8b-hf-breakdown@acf7dc4e
# README.md ("Here's the config").
MAMBA_28B_HF = {
    "architectures": ["MambaForCausalLM"], "bos_token_id": 0, "conv_kernel": 4, "eos_token_id": 0, "expand": 2,
    "fused_add_norm": True, "hidden_act": "silu", "hidden_size": 2560, "initializer_range": 0.1,
    "intermediate_size": 5120, "layer_norm_epsilon": 1e-05, "model_type": "mamba", "n_layer": 64,
    "num_hidden_layers": 64, "pad_token_id": 0, "pad_vocab_size_multiple": 8, "rescale_prenorm_residual": False,
    "residual_in_fp32": True, "rms_norm": True, "state_size": 16, "time_step_floor": 0.0001,
    "time_step_init_scheme": "random", "time_step_max": 0.1, "time_step_min": 0.001, "time_step_rank": 160,
    "time_step_scale": 1.0, "torch_dtype": "float32", "transformers_version": "4.39.0.dev0", "use_bias": False,
    "use_cache": True, "use_conv_bias": True, "vocab_size": 50280,
}


def test_mamba_hf_config_counts_2_8b_not_5_4b():
    # was 5.4 B: intermediate_size (the mixer's inner width, expand x hidden) was read as an MLP in every layer,
    # and the untied lm_head counted although MambaConfig ties it (tie_word_embeddings=True by default).
    spec = spec_from_config(MAMBA_28B_HF, name="state-spaces/mamba-2.8b-hf")
    # 2,768,345,600: the count of transformers' MambaForCausalLM built from this config (meta device)
    assert spec.params_total == 2_768_345_600
    assert spec.tied_embeddings and all(layer.ffn.n_ff == 0 and not layer.ffn.is_moe for layer in spec.layers)
    assert spec.layers[0].recurrent.d_inner == 5120 and spec.layers[0].recurrent.d_state == 16
    assert _bytes(spec) == 4 * 2_768_345_600  # float32 checkpoint
    assert not any("ffn" in t.name for t in spec.weights.tensors)


def test_mamba_hf_catalog_entry():
    spec = resolve("state-spaces/mamba-2.8b-hf", "bf16")
    assert spec.params_total == 2_768_345_600 and spec.n_ctx_train == 0
    assert spec.source.startswith("catalog: state-spaces/mamba-2.8b-hf")


# ---- items 1 and 3: derivatives, by convention ----------------------------------------------------------

# (repo as published, catalog base slug, weights.format, bits per weight of the quantized linears: low, high)
DERIVATIVES = [
    # model makers' own quantized repos
    ("Qwen/Qwen3-8B-AWQ", "qwen3-8b", "awq", 4.1, 4.3),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b-instruct", "awq", 4.1, 4.3),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "qwen2.5-7b-instruct", "gptq", 4.1, 4.4),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "qwen2.5-7b-instruct", "gptq", 8.1, 8.4),
    ("Qwen/Qwen2.5-Coder-7B-Instruct-AWQ", "qwen2.5-coder-7b-instruct", "awq", 4.1, 4.3),
    ("Qwen/Qwen3-30B-A3B-GPTQ-Int4", "qwen3-30b-a3b", "gptq", 4.1, 4.5),
    ("Qwen/Qwen3-32B-AWQ", "qwen3-32b", "awq", 4.1, 4.3),
    # RedHatAI / neuralmagic (llm-compressor)
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "llama-3.1-8b-instruct", "ct-pack-quantized", 4.1, 4.3),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "llama-3.1-8b-instruct", "ct-int-quantized", 8.0, 8.1),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "llama-3.1-8b-instruct", "ct-float-quantized", 8.0, 8.1),
    ("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b-instruct", "ct-float-quantized", 8.0, 8.01),
    ("RedHatAI/Qwen3-8B-FP8-dynamic", "qwen3-8b", "ct-float-quantized", 8.0, 8.1),
    ("RedHatAI/Qwen3-32B-NVFP4", "qwen3-32b", "ct-nvfp4-pack-quantized", 4.5, 4.6),
    # NVIDIA ModelOpt
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b-instruct", "modelopt-fp8", 8.0, 8.01),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b-instruct", "modelopt-nvfp4", 4.5, 4.6),
    ("nvidia/Qwen3-30B-A3B-FP4", "qwen3-30b-a3b", "modelopt-nvfp4", 4.5, 4.6),
    # hugging-quants
    ("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "llama-3.1-8b-instruct", "awq", 4.1, 4.3),
    ("hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4", "llama-3.1-8b-instruct", "gptq", 4.1, 4.4),
    # TheBloke
    ("TheBloke/Llama-2-7B-Chat-GPTQ", "llama-2-7b-chat", "gptq", 4.1, 4.4),
    ("TheBloke/Llama-2-7B-Chat-AWQ", "llama-2-7b-chat", "awq", 4.1, 4.3),
    ("TheBloke/Mistral-7B-Instruct-v0.2-AWQ", "mistral-7b-instruct-v0.2", "awq", 4.1, 4.3),
    # unsloth bitsandbytes
    ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", "llama-3.2-1b-instruct", "bnb-nf4", 4.1, 4.2),
    ("unsloth/Qwen3-8B-unsloth-bnb-4bit", "qwen3-8b", "bnb-nf4", 4.1, 4.2),
    ("unsloth/gemma-3-12b-it-unsloth-bnb-4bit", "gemma-3-12b-it", "bnb-nf4", 4.1, 4.2),
    # mlx-community / lmstudio-community MLX
    ("mlx-community/Qwen3-8B-4bit", "qwen3-8b", "mlx-affine", 4.5, 4.5),
    ("mlx-community/Qwen3-8B-8bit", "qwen3-8b", "mlx-affine", 8.5, 8.5),
    ("mlx-community/Qwen3-30B-A3B-6bit", "qwen3-30b-a3b", "mlx-affine", 6.5, 6.5),
    ("mlx-community/Qwen3-30B-A3B-3bit", "qwen3-30b-a3b", "mlx-affine", 3.5, 3.5),
    ("mlx-community/Qwen3-30B-A3B-4bit-DWQ", "qwen3-30b-a3b", "mlx-affine", 4.5, 4.5),
    ("mlx-community/Meta-Llama-3.1-8B-Instruct-4bit", "llama-3.1-8b-instruct", "mlx-affine", 4.5, 4.5),
    ("lmstudio-community/Qwen3-8B-MLX-4bit", "qwen3-8b", "mlx-affine", 4.5, 4.5),
    # a bare -Nbit from anyone else is the same MLX naming (people upload their own mlx_lm.convert output)
    ("catalystsec/GLM-5.1-4bit", "glm-5.1", "mlx-affine", 4.5, 4.5),
    ("someone/Qwen3-8B-8bit", "qwen3-8b", "mlx-affine", 8.5, 8.5),
]


@pytest.mark.parametrize("ref,slug,fmt,lo,hi", DERIVATIVES)
def test_derivative_resolves_offline_to_base_plus_format(ref, slug, fmt, lo, hi):
    if catalog.lookup(slug) is None:
        pytest.skip(f"{slug} not in the catalog")
    spec = resolve(ref, tag_formats=False)
    base = resolve(slug, "bf16", tag_formats=False)
    assert spec.weights.format == fmt
    assert any("inferred from the name" in label for label in spec.labels), spec.labels
    assert _layers(spec) == _layers(base)  # the same per-layer cache: the same KV per token
    quantized = [t for t in spec.weights.tensors if t.dtype == fmt]
    n = sum(t.n_elements for t in quantized)
    bpw = 8 * sum(t.nbytes for t in quantized) / n
    assert lo - 0.01 <= bpw <= hi + 0.01, bpw
    # what the format leaves unquantized is in the checkpoint's dtype, and said so by its dtype
    emb = next(t for t in spec.weights.tensors if t.name == "token_embd.weight")
    if fmt.startswith("mlx"):
        assert emb.dtype == fmt  # mlx-lm quantizes the embedding too
    else:
        assert emb.dtype in ("bfloat16", "float16") and emb.nbytes == 2 * emb.n_elements
        out = next((t for t in spec.weights.tensors if t.name == "output.weight"), None)
        assert out is None or out.dtype == emb.dtype  # lm_head stays 16-bit in every HF format here
    assert _bytes(spec) < _bytes(base)


@pytest.mark.parametrize("ref", ["Qwen/Qwen3-8B-AWQ", "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16",
                                 "mlx-community/Qwen3-8B-4bit", "nvidia/Llama-3.1-8B-Instruct-FP8"])
def test_derivative_kv_per_token_equals_base(ref):
    d = names.derive(ref)
    # an MLX conversion loads in mlx-lm only (vLLM and transformers refuse it: request.resolve_model)
    for engine in ("mlx",) if ref.startswith("mlx-community/") else ("vllm", "transformers"):
        a = oomkit.estimate(ref, engine=engine)
        b = oomkit.estimate(d.base_hf_id, engine=engine)
        # a ModelOpt checkpoint declares an FP8 KV cache (kv_cache_quant_algo), which vLLM takes for
        # --kv-cache-dtype auto from 0.14.0 (utils/torch_utils.py resolve_kv_cache_dtype_string): half the bf16 bytes
        fp8_kv = engine == "vllm" and a.model.checkpoint_kv_cache_dtype == "fp8"
        assert a.kv_bytes_per_token == (b.kv_bytes_per_token // 2 if fp8_kv else b.kv_bytes_per_token)
        assert a.weights_bytes < b.weights_bytes
    # ModelOpt's hf_quant_config.json keeps it in its nested "quantization" section
    kv = d.quantization_config.get("quantization", {}).get("kv_cache_quant_algo")
    assert ref.startswith("nvidia/") == (kv == "FP8")


def test_moe_router_and_vlm_keep_their_rules():
    # a GPTQ MoE: the router (ffn_gate_inp) is not a quantized linear in any of these layouts
    spec = resolve("Qwen/Qwen3-30B-A3B-GPTQ-Int4", tag_formats=False)
    router = next(t for t in spec.weights.tensors if t.name == "blk.0.ffn_gate_inp.weight")
    assert router.dtype != "gptq"


def test_maker_fp8_is_block_fp8_and_listed_variant_wins():
    # a variant the catalog lists carries its verbatim quantization_config, not a guess
    spec = resolve("Qwen/Qwen3-32B-FP8", tag_formats=False)
    assert spec.weights.format == "fp8-block" and not any("inferred" in label for label in spec.labels)
    guessed = resolve("Qwen/Qwen3-8B-Base-FP8", tag_formats=False) if catalog.match_tail("qwen3-8b") else None
    assert guessed is None or guessed.weights.format == "fp8-block"


# ---- GGUF repos of every publisher ----

GGUF_REPOS = [
    ("ggml-org/gpt-oss-20b-GGUF", "gpt-oss-20b"),
    ("ggml-org/Qwen3-8B-GGUF", "qwen3-8b"),
    ("unsloth/Qwen3-30B-A3B-GGUF", "qwen3-30b-a3b"),
    ("unsloth/Llama-3.2-3B-Instruct-GGUF", "llama-3.2-3b-instruct"),
    ("bartowski/Qwen_Qwen3-8B-GGUF", "qwen3-8b"),
    ("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF", "llama-3.1-8b-instruct"),
    ("bartowski/Llama-3.2-3B-Instruct-GGUF", "llama-3.2-3b-instruct"),
    ("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF", "llama-3.1-8b-instruct"),
    ("lmstudio-community/Qwen3-8B-GGUF", "qwen3-8b"),
    ("QuantFactory/Meta-Llama-3-8B-Instruct-GGUF", "llama-3-8b-instruct"),
    ("mradermacher/Qwen3-8B-i1-GGUF", "qwen3-8b"),
    ("mradermacher/Qwen3-8B-GGUF", "qwen3-8b"),
    ("TheBloke/Llama-2-7B-Chat-GGUF", "llama-2-7b-chat"),
]


@pytest.mark.parametrize("repo,slug", GGUF_REPOS)
def test_gguf_repos_resolve_to_their_base(repo, slug):
    if catalog.lookup(slug) is None:
        pytest.skip(f"{slug} not in the catalog")
    assert catalog.resolve_slug(repo) == slug
    spec = resolve(f"{repo}:Q4_K_M")
    assert spec.weights.format == "Q4_K_M" and _layers(spec) == _layers(resolve(slug, "Q4_K_M"))
    assert _bytes(spec) == _bytes(resolve(slug, "Q4_K_M"))


# ---- item 3: names as users write them ----

SAME_AS = [
    ("qwen/qwen2.5-coder-7b-instruct", "Qwen/Qwen2.5-Coder-7B-Instruct"),
    ("QWEN/QWEN3-8B", "Qwen/Qwen3-8B"),
    ("https://huggingface.co/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
    ("https://huggingface.co/Qwen/Qwen3-8B/tree/main", "Qwen/Qwen3-8B"),
    ("huggingface.co/Qwen/Qwen3-8B/", "Qwen/Qwen3-8B"),
    ("hf.co/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
]


@pytest.mark.parametrize("typed,canonical", SAME_AS)
def test_any_case_and_urls(typed, canonical):
    assert _bytes(resolve(typed)) == _bytes(resolve(canonical))


@pytest.mark.parametrize("typed,repo,quant", [
    ("hf.co/unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", "unsloth/Qwen3-8B-GGUF", "UD-Q4_K_XL"),
    ("hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", "bartowski/Llama-3.2-3B-Instruct-GGUF", "Q4_K_M"),
    ("hf.co/bartowski/Qwen_Qwen3-8B-GGUF:q8_0", "bartowski/Qwen_Qwen3-8B-GGUF", "Q8_0"),
    ("hf.co/mradermacher/Qwen3-8B-i1-GGUF:i1-Q4_K_M", "mradermacher/Qwen3-8B-i1-GGUF", "Q4_K_M"),
    ("https://huggingface.co/unsloth/Qwen3-8B-GGUF/blob/main/Qwen3-8B-UD-Q4_K_XL.gguf", "unsloth/Qwen3-8B-GGUF",
     "UD-Q4_K_XL"),
    ("https://huggingface.co/bartowski/Qwen_Qwen3-8B-GGUF/resolve/main/Qwen_Qwen3-8B-Q6_K_L.gguf",
     "bartowski/Qwen_Qwen3-8B-GGUF", "Q6_K_L"),
])
def test_ollama_hf_form_and_file_urls(typed, repo, quant):
    spec = resolve(typed)
    assert spec.weights.format.upper() == quant.upper()
    assert _bytes(spec) == _bytes(resolve(f"{repo}:{quant}"))


OLLAMA_TAGS = [
    # (tag as published, catalog alias of the same model, weights.format)
    ("qwen3:30b-a3b-thinking-2507-q4_K_M", "qwen3:30b-a3b", "Q4_K_M"),
    ("qwen3:30b-a3b-thinking-2507-q4_K_M", "Qwen/Qwen3-30B-A3B-Instruct-2507", "Q4_K_M"),
    ("qwen3:30b-a3b-instruct-2507-q8_0", "qwen3:30b-a3b", "Q8_0"),
    ("llama3.2:1b-instruct-q8_0", "llama3.2:1b", "Q8_0"),
    ("llama3.2:3b-instruct-fp16", "llama3.2:3b", "F16"),
    ("llama3.1:8b-instruct-q4_K_M", "llama3.1:8b", "Q4_K_M"),
    ("gemma3:27b-it-qat", "gemma3:27b", "Q4_0"),
    ("gemma3:12b-it-q4_K_M", "gemma3:12b", "Q4_K_M"),
    ("deepseek-r1:14b-qwen-distill-q4_K_M", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "Q4_K_M"),
    ("deepseek-r1:8b-llama-distill-q4_K_M", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "Q4_K_M"),
    ("deepseek-r1:70b-llama-distill-q8_0", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "Q8_0"),
    ("qwen2.5:7b-instruct-q4_K_M", "qwen2.5:7b", "Q4_K_M"),
    ("qwen2.5-coder:7b-instruct-q8_0", "qwen2.5-coder:7b", "Q8_0"),
    ("phi3:3.8b-mini-128k-instruct-q4_0", "microsoft/Phi-3-mini-128k-instruct", "Q4_0"),
    ("mistral:7b-instruct-v0.3-q4_K_M", "mistral:7b", "Q4_K_M"),
    ("gpt-oss:20b", "openai/gpt-oss-20b", "MXFP4_MOE"),
    ("gpt-oss:120b", "openai/gpt-oss-120b", "MXFP4_MOE"),
    ("olmo2:13b-1124-instruct-q4_K_M", "olmo2:13b", "Q4_K_M"),
    ("mistral:7b-instruct-v0.2-q4_K_M", "mistralai/Mistral-7B-Instruct-v0.2", "Q4_K_M"),
    ("qwen3:4b-instruct-2507-q4_K_M", "qwen3:4b", "Q4_K_M"),
    ("qwen3:235b-a22b-instruct-2507-q4_K_M", "qwen3:235b", "Q4_K_M"),
    ("mistral-nemo:12b-instruct-2407-q4_K_M", "mistral-nemo:12b", "Q4_K_M"),
    ("gemma3n:e4b-it-q4_K_M", "gemma3n:e4b", "Q4_K_M"),
    ("bge-m3:567m-fp16", "bge-m3:567m", "F16"),
]


@pytest.mark.parametrize("tag,same,fmt", OLLAMA_TAGS)
def test_ollama_tags_with_qualifiers(tag, same, fmt):
    if catalog.lookup(same) is None:
        pytest.skip(f"{same} not in the catalog")
    spec = resolve(tag)
    assert spec.weights.format == fmt
    ref = resolve(same, fmt if fmt not in ("F16",) else "MOSTLY_F16")
    assert _layers(spec) == _layers(ref) and _bytes(spec) == _bytes(ref)


def test_a_qualifier_that_may_change_the_model_is_not_dropped():
    with pytest.raises(OomkitError, match="unknown model"):
        resolve("qwen3:8b-frankenmerge-q4_K_M")
    with pytest.raises(OomkitError, match="unknown model"):
        resolve("mistral:7b-instruct-v0.9-q4_K_M")  # versions (v0.1 / v0.2 / v0.3 differ in vocabulary) never dropped


# ---- item 2: GGUF quant tags of every kind ----


def test_every_llama_quantize_type_and_named_mix_resolves():
    for tag in known_quant_tags():
        if tag in ("NVFP4", "bf16", "fp16", "fp32", "int8", "int4", "w8a8", "w4a16", "fp8", "awq", "gptq", "nf4",
                   "mxfp4", "nvfp4"):
            continue  # HF formats, and NVFP4 GGUFs that only convert_hf_to_gguf writes
        spec = resolve(f"Qwen/Qwen3-8B:{tag}")
        assert _bytes(spec) > 0, tag


def test_unsloth_dynamic_quants_are_labelled_approximations():
    base = _bytes(resolve("Qwen/Qwen3-8B:Q4_K_M"))
    ud = resolve("unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL")
    assert ud.weights.format == "UD-Q4_K_XL"
    assert any("approximated" in label and "unsloth" in label for label in ud.labels)
    assert base < _bytes(ud) < 1.06 * base  # a few percent above Q4_K_M (docs.unsloth.ai: "2% of disk space")
    out = next(t for t in ud.weights.tensors if t.name == "output.weight")
    assert out.dtype == "q8_0"
    for tag in ("UD-IQ1_S", "UD-IQ1_M", "UD-IQ2_XXS", "UD-IQ2_M", "UD-IQ3_XXS", "UD-Q2_K_XL", "UD-Q3_K_XL",
                "UD-Q5_K_XL", "UD-Q6_K_XL", "UD-Q8_K_XL", "UD-TQ1_0"):
        spec = resolve(f"unsloth/Qwen3-30B-A3B-GGUF:{tag}")
        assert spec.weights.format == tag and any("approximated" in label for label in spec.labels), tag
    assert resolve("unsloth/Qwen3-30B-A3B-GGUF:Q4_K_XL").weights.format == "UD-Q4_K_XL"


def test_bartowski_l_quants_use_q8_0_embed_and_output():
    spec = resolve("bartowski/Qwen_Qwen3-8B-GGUF:Q6_K_L")
    types = {t.name: t.dtype for t in spec.weights.tensors}
    assert types["token_embd.weight"] == "q8_0" and types["output.weight"] == "q8_0"
    assert types["blk.0.ffn_up.weight"] == "q6_K"
    assert not any("approximated" in label for label in spec.labels)


# ---- item 6: --explain ----


def test_explain_walks_the_steps():
    rows = dict(explain("https://huggingface.co/RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16"))
    assert rows["URL read as"] == "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16"
    assert rows["derivative of"].startswith("meta-llama/Llama-3.1-8B-Instruct")
    assert "w4a16" in rows["convention"] and "pack-quantized" in rows["quantization_config"]
    rows = dict(explain("qwen3:30b-a3b-thinking-2507-q4_K_M"))  # a catalog alias of its own (the 2507 release)
    assert rows["quant tag"] == "q4_K_M" and rows["catalog"].startswith("qwen3-30b-a3b-thinking-2507")
    rows = dict(explain("qwen3:32b-instruct-q8_0"))
    assert rows["quant tag"] == "q8_0" and rows["Ollama tag"].startswith("qwen3:32b (qualifiers instruct")
    assert dict(explain("llama3.1:8b"))["catalog"].startswith("llama-3.1-8b-instruct (Ollama tag")
    assert dict(explain("Qwen/Qwen3-8B:Q4_K_XXL"))["quant tag"].startswith("unknown quant tag")


# ---- speed: a derivative name costs what a catalog name costs ----


def test_derivative_estimate_is_fast_cold():
    code = ("import time, oomkit\n"
            "t = time.perf_counter()\n"
            "oomkit.estimate('RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16', engine='vllm')\n"
            "a = time.perf_counter() - t\n"
            "print(a)\n")
    # offline (HF_HUB_OFFLINE=1: resolve.py asks the hub only when it may answer; online, the repo's own config wins)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "HF_HUB_OFFLINE": "1"}
    runs = sorted(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       env=env, timeout=60).stdout) for _ in range(3))
    assert runs[0] < 0.1 * 3, runs  # 100 ms on a quiet machine; 3x for a loaded test runner
    # offline and uncached, the name is all there is: the hub client is not even imported
    probe = ("import sys, oomkit; oomkit.estimate('mlx-community/Qwen3-8B-4bit', engine='mlx'); "
             "print(sorted(m for m in ('oomkit.model.hub', 'huggingface_hub', 'difflib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env, timeout=60)
    assert out.stdout.strip() == "[]"


def test_gpt_oss_unquantized_gguf_keeps_mxfp4_experts():
    # unsloth/gpt-oss-20b-GGUF's F16 file: convert_hf_to_gguf writes the MXFP4 expert blocks as they are
    spec = resolve("unsloth/gpt-oss-20b-GGUF:F16")
    types = {t.name: t.dtype for t in spec.weights.tensors}
    assert types["blk.0.ffn_down_exps.weight"] == "mxfp4" and types["blk.0.attn_q.weight"] == "f16"
    assert 13e9 < _bytes(spec) < 14.5e9


def test_google_qat_gguf_repo_names_its_file_type():
    spec = resolve("google/gemma-3-27b-it-qat-q4_0-gguf")
    assert spec.weights.format == "Q4_0" and any("inferred from the name" in label for label in spec.labels)
    assert _bytes(spec) == _bytes(resolve("gemma3:27b-it-qat"))


@pytest.mark.parametrize("quant,gguf", [("bf16", "BF16"), ("fp16", "F16"), ("f16", "F16")])
def test_plain_dtype_given_as_quant_option_names_the_gguf_for_llama_cpp(quant, gguf):
    """`--quant bf16` with llama.cpp is the BF16 GGUF, as the `:bf16` suffix is; with vLLM it stays the dtype."""
    from oomkit import estimate

    by_option = estimate("qwen3:8b", "llama.cpp", quant=quant, vram="24GiB", find_max_context=False)
    by_suffix = estimate(f"qwen3:8b:{quant}", "llama.cpp", vram="24GiB", find_max_context=False)
    assert by_option.model.weights.format == gguf
    assert by_option.weights_bytes == by_suffix.weights_bytes
    # 8.19 B parameters at 2 bytes, the F32 norms aside
    assert 2 * 8.1e9 < by_option.weights_bytes < 2 * 8.3e9


@pytest.mark.parametrize("path, hf_id", [
    ("/models/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),  # vllm serve /models/<name>
    ("./Llama-3.3-70B-Instruct/", "meta-llama/Llama-3.3-70B-Instruct"),
    ("C:\\models\\Qwen3-8B", "Qwen/Qwen3-8B"),
    ("/root/.cache/huggingface/hub/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a",
     "openai/gpt-oss-120b"),
])
def test_a_checkpoint_folder_elsewhere_is_read_by_its_name(path, hf_id, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing of that name here
    spec = resolve(path)
    assert spec.source.startswith(f"catalog: {hf_id} ")
    assert any(label.startswith(f"{path} is not on this machine: read as the catalog's {hf_id}")
               for label in spec.labels)


def test_a_hub_url_is_no_folder():
    for url in ("https://huggingface.co/Qwen/Qwen3-8B", "hf.co/Qwen/Qwen3-8B"):
        assert not any("not on this machine" in label for label in resolve(url).labels)


def test_a_missing_file_or_unknown_folder_is_still_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for ref, said in (("/models/qwen3-8b-q4_k_m.gguf", "no such file"), ("/models/no-such-model", "unknown model")):
        with pytest.raises(OomkitError, match=said):
            resolve(ref)
