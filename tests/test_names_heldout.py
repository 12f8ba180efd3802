"""A held-out sweep of model names as users type them (vLLM / llama.cpp / Ollama / MLX commands seen in public
issues), resolved offline (HF_HUB_OFFLINE=1: the hub is never asked). Each expected figure is the model's own, read
from its config.json as /work/shared/reference/model_configs.jsonl copies it (the source named per model below),
never from oomkit's output. A name that cannot be read offline is a one-line error with exit 2.

Base configs the figures come from:
  Qwen/Qwen3-30B-A3B: 48 layers, 32 Q / 4 KV heads, head_dim 128, 128 experts, 8 active (ai-dynamo/aiconfigurator
    aic-core/src/aiconfigurator_core/model_configs/Qwen--Qwen3-30B-A3B_config.json); the 2507 Instruct's 262,144
    context from its model card
  openai/gpt-oss-20b: 24 layers, 64 Q / 8 KV heads, head_dim 64, 32 local experts, 4 per token (aiconfigurator
    openai--gpt-oss-20b_config.json); experts published in MXFP4 (its quantization_config: quant_method mxfp4)
  google/gemma-3-27b-it: 62 layers, 32 Q / 16 KV heads, head_dim 128 (AI-Hypercomputer/maxtext
    hf_model_configs.py gemma3_27b_config)
  zai-org/GLM-4.5-Air: 96 Q / 8 KV heads, head_dim 128, 128 routed experts, 8 per token (AlexsJones/llmfit
    llmfit-core/data/hf_models.json)
  meta-llama/Llama-3.1-405B: 126 layers, 128 Q / 8 KV heads, hidden 16384 (aiconfigurator
    meta-llama--Meta-Llama-3.1-405B_config.json)
  meta-llama/Llama-4-Maverick-17B-128E-Instruct: 48 layers, 40 Q / 8 KV heads, head_dim 128, 128 local experts,
    1 per token (aiconfigurator meta-llama--Llama-4-Maverick-17B-128E-Instruct_config.json)
"""

from __future__ import annotations

import json

import pytest

from oomkit.errors import OomkitError
from oomkit.model import names
from oomkit.model.resolve import resolve
from tests.hardware_fakes import run_oomkit


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _shape(spec):
    att = {(a.n_heads, a.n_kv_heads, a.head_dim_k) for a in (lay.attention for lay in spec.layers) if a is not None}
    ffn = {(f.n_experts, f.n_experts_used) for f in (lay.ffn for lay in spec.layers) if f.n_experts}
    return att, ffn


QWEN3_30B_A3B = ({(32, 4, 128)}, {(128, 8)})
GPT_OSS_20B = ({(64, 8, 64)}, {(32, 4)})
GEMMA3_27B = ({(32, 16, 128)}, set())


# ---- re-uploads and fine-tunes under the base's own name (were: "unknown model" offline) ----

SAME_NAME = [
    # unsloth's re-uploads (vllm serve unsloth/..., the repos its notebooks load)
    ("unsloth/Qwen3-30B-A3B-Instruct-2507", "qwen3moe", 48, QWEN3_30B_A3B, "bfloat16", 262144),
    ("unsloth/gpt-oss-20b", "gpt-oss", 24, GPT_OSS_20B, "mxfp4", 131072),
    # abliterated fine-tunes: same shapes, the word dropped and said so
    ("huihui-ai/Qwen3-30B-A3B-Instruct-2507-abliterated", "qwen3moe", 48, QWEN3_30B_A3B, "bfloat16", 262144),
    ("mlabonne/gemma-3-27b-it-abliterated", "gemma3", 62, GEMMA3_27B, "bfloat16", 131072),
    # the publisher's name before the model's, the format before the fine-tune's word: BF16, not gpt-oss's MXFP4
    ("huihui-ai/Huihui-gpt-oss-20b-BF16-abliterated", "gpt-oss", 24, GPT_OSS_20B, "bfloat16", 131072),
]


@pytest.mark.parametrize("name,arch,n_layers,shape,fmt,ctx", SAME_NAME)
def test_reuploads_and_finetunes_read_as_their_base(name, arch, n_layers, shape, fmt, ctx):
    spec = resolve(name, tag_formats=False)
    assert (spec.architecture, spec.n_layers, _shape(spec), spec.weights.format, spec.n_ctx_train) == \
        (arch, n_layers, shape, fmt, ctx)
    # a guess, and said so: the repo's own config.json was not read
    assert any("inferred from the name" in label and "config.json was not read" in label for label in spec.labels)


def test_abliterated_word_is_named_as_dropped():
    spec = resolve("mlabonne/gemma-3-27b-it-abliterated", tag_formats=False)
    assert any("'abliterated' read as the same-shaped google/gemma-3-27b-it" in label for label in spec.labels)


@pytest.mark.parametrize("name", [
    "NousResearch/Hermes-4.3-36B",  # a fine-tune under its own name: its base is not in the name
    "acme/Qwen3-30B-A3B-ft",  # a word that may change the model is never dropped
    "mlx-community/gpt-oss-20b-MXFP4-Q8",  # MXFP4 experts, 8-bit others: one format cannot say it
])
def test_names_that_cannot_be_read_offline_stay_errors(name):
    assert names.derive(name) is None
    with pytest.raises(OomkitError, match="unknown model"):
        resolve(name, tag_formats=False)


# ---- cpatonn's -AWQ-4bit: compressed-tensors (vLLM PR #29732's log of cpatonn/Qwen3-VL-32B-Instruct-AWQ-4bit:
# "quantization=compressed-tensors"), llm-compressor's AWQ (compressed-tensors quant_scheme.py W4A16_ASYM: int4,
# group 128, symmetric False) ----

@pytest.mark.parametrize("name,arch,shape", [
    ("cpatonn/Qwen3-30B-A3B-Instruct-2507-AWQ-4bit", "qwen3moe", QWEN3_30B_A3B),
    ("cpatonn/GLM-4.5-Air-AWQ-4bit", "glm4moe", ({(96, 8, 128)}, {(128, 8)})),
])
def test_cpatonn_awq_4bit_is_compressed_tensors_int4(name, arch, shape):
    q = names.derive(name).quantization_config
    w = q["config_groups"]["group_0"]["weights"]
    assert (q["quant_method"], w["num_bits"], w["group_size"], w["symmetric"]) == ("compressed-tensors", 4, 128, False)
    spec = resolve(name, tag_formats=False)
    assert (spec.architecture, _shape(spec), spec.weights.format) == (arch, shape, "ct-pack-quantized")


# Intel's AutoRound: auto-round's defaults bits 4, group_size 128, sym True (intel/auto-round AutoRound docstring)

@pytest.mark.parametrize("name,method,arch,shape", [
    ("Intel/Qwen3-30B-A3B-Instruct-2507-int4-AutoRound", "gptq", "qwen3moe", QWEN3_30B_A3B),
    ("OPEA/Qwen2.5-72B-Instruct-int4-AutoRound-awq-inc", "awq", "qwen2", ({(64, 8, 128)}, set())),
])
def test_intel_autoround(name, method, arch, shape):
    q = names.derive(name).quantization_config
    assert (q["quant_method"], q["bits"], q["group_size"]) == (method, 4, 128)
    spec = resolve(name, tag_formats=False)
    assert (spec.architecture, _shape(spec), spec.weights.format) == (arch, shape, method)


def test_awq_4bit_of_another_publisher_is_autoawq():
    d = names.derive("someone/Qwen3-30B-A3B-Instruct-2507-AWQ-4bit")
    assert (d.quantization_config["quant_method"], d.quantization_config["bits"]) == ("awq", 4)


# ---- Meta's own -FP8 repos: not block FP8 ----

def test_meta_llama_3_1_fp8_is_fbgemm_of_the_ffn_but_first_and_last():
    # FBGEMM FP8 row-wise (aphrodite-engine PR #601 loads meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 through
    # fbgemm_fp8); the Llama 3 paper (section 6.2) leaves self-attention and the first and last layers unquantized
    spec = resolve("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", tag_formats=False)
    assert (spec.architecture, spec.n_layers, spec.weights.format) == ("llama", 126, "fbgemm-fp8")
    assert _shape(spec) == ({(128, 8, 128)}, set())
    dtype = {t.name: t.dtype for t in spec.weights.tensors}
    assert dtype["blk.1.attn_q.weight"] == "bfloat16" and dtype["blk.1.ffn_down.weight"] == "fbgemm-fp8"
    assert dtype["blk.0.ffn_down.weight"] == dtype["blk.125.ffn_up.weight"] == "bfloat16"
    assert dtype["blk.124.ffn_gate.weight"] == "fbgemm-fp8"


def test_meta_llama_4_fp8_is_compressed_tensors():
    # SGLang issue #5134: Llama-4-Maverick-17B-128E-Instruct-FP8 loads through compressed-tensors FP8 schemes
    spec = resolve("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", tag_formats=False)
    assert (spec.architecture, spec.n_layers, spec.weights.format) == ("llama4", 48, "ct-float-quantized")
    assert _shape(spec) == ({(40, 8, 128)}, {(128, 1)})


def test_other_makers_fp8_stays_block_fp8():
    assert resolve("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", tag_formats=False).weights.format == "fp8-block"


# ---- Ollama cloud tags: nothing is loaded here ----

@pytest.mark.parametrize("tag,local", [("gpt-oss:120b-cloud", "gpt-oss:120b"), ("kimi-k2:1t-cloud", "kimi-k2:1t"),
                                       ("glm-4.6:cloud", "glm-4.6")])
def test_ollama_cloud_tags_say_so(tag, local):
    assert names.ollama_cloud(tag) == local
    with pytest.raises(OomkitError, match=r"Ollama cloud model: it runs on ollama\.com") as e:
        resolve(tag)
    assert f"({local})" in str(e.value)


def test_ollama_cloud_tag_through_the_cli_is_exit_2_in_one_line():
    p = run_oomkit("check", "gpt-oss:120b-cloud", "--engine", "ollama", "--json",
                   env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "cloud" in p.stderr


def test_reupload_through_the_cli():
    p = run_oomkit("check", "unsloth/Qwen3-30B-A3B-Instruct-2507", "--engine", "vllm", "--gpu", "H100 SXM", "--json",
                   env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert p.returncode in (0, 1), p.stderr
    m = json.loads(p.stdout)["estimate"]["model"]
    assert (m["architecture"], m["n_layers"], m["weights_format"]) == ("qwen3moe", 48, "bfloat16")


# ---- a local folder named after a derivative repo, not on this machine (a command pasted from a server) ----
# Qwen/Qwen2.5-72B-Instruct: 80 layers, 64 Q / 8 KV heads, hidden 8192 (head_dim 128) (litgpt config.py
# "Qwen2.5-72B{}")

@pytest.mark.parametrize("path,arch,n_layers,shape,fmt", [
    ("/models/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen3moe", 48, QWEN3_30B_A3B, "fp8-block"),
    ("/data/Qwen2.5-72B-Instruct-AWQ", "qwen2", 80, ({(64, 8, 128)}, set()), "awq"),
    ("~/.cache/huggingface/hub/models--cpatonn--Qwen3-30B-A3B-Instruct-2507-AWQ-4bit/snapshots/0123abc", "qwen3moe",
     48, QWEN3_30B_A3B, "ct-pack-quantized"),
])
def test_folder_named_after_a_derivative_repo(path, arch, n_layers, shape, fmt):
    spec = resolve(path, tag_formats=False)
    assert (spec.architecture, spec.n_layers, _shape(spec), spec.weights.format) == (arch, n_layers, shape, fmt)
    assert any("is not on this machine" in label for label in spec.labels)


def test_folder_of_a_finetune_is_not_guessed():
    # no maker's repo of that name to stand for it: a clear error, not the base presented as the folder's model
    with pytest.raises(OomkitError, match="^no such file|^unknown model"):
        resolve("/models/Llama-3.3-70B-Instruct-abliterated", tag_formats=False)


# ---- Ollama's devstral / magistral tags name the Mistral Small they are ----
# mistralai/Mistral-Small-3.1-24B-Instruct-2503 (Devstral Small 2505's base, its model card): 40 layers, 32 Q / 8 KV
# heads, head_dim 128 (huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503/blob/main/config.json)

def test_ollama_devstral_small_tag():
    spec = resolve("devstral:24b-small-2505-q8_0")
    assert (spec.n_layers, _shape(spec), spec.weights.format) == (40, ({(32, 8, 128)}, set()), "Q8_0")
    with pytest.raises(OomkitError, match="unknown model"):
        resolve("mistral:7b-small")  # not a word of that library's tags


# ---- an HF quantized repo on a GGUF engine: the GGUF assumed says why ----

def test_fp8_repo_on_llama_cpp_says_the_gguf_is_assumed():
    from oomkit.engines.base import get_engine
    from oomkit.request import resolve_model

    spec = resolve_model(get_engine("llama.cpp"), "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8")
    assert spec.weights.format == "Q4_K_M"
    assert any("the name's format is no GGUF file" in label for label in spec.labels)


# ---- llama.cpp's older flat -hf cache ("<owner>_<repo>_<file>" in ~/.cache/llama.cpp), as its logs print the path ----

@pytest.mark.parametrize("path,repo", [
    ("/root/.cache/llama.cpp/unsloth_Qwen3-30B-A3B-Instruct-2507-GGUF_Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf",
     "unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF:Q4_K_M"),
    ("C:\\Users\\me\\AppData\\Local\\llama.cpp\\bartowski_Qwen_Qwen3-8B-GGUF_Qwen_Qwen3-8B-Q6_K_L.gguf",
     "bartowski/Qwen_Qwen3-8B-GGUF:Q6_K_L"),
])
def test_llama_cpp_flat_cache_path_names_its_repo(path, repo):
    assert names.hub_cache_gguf(path) == repo


def test_llama_cpp_flat_cache_path_not_on_this_machine():
    spec = resolve("~/.cache/llama.cpp/unsloth_Qwen3-30B-A3B-Instruct-2507-GGUF_Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf")
    assert (spec.architecture, spec.n_layers, _shape(spec), spec.weights.format, spec.n_ctx_train) == \
        ("qwen3moe", 48, QWEN3_30B_A3B, "Q4_K_M", 262144)


# ---- a model of an Ollama user's namespace (ollama run huihui_ai/qwen3-abliterated:30b) ----
# deepseek-ai/DeepSeek-R1-Distill-Qwen-32B (Ollama's deepseek-r1:32b): 64 layers, 40 Q / 8 KV heads, hidden 5120
# (head_dim 128) (the repo's config.json, as /work/shared/reference/model_configs.jsonl copies it)

@pytest.mark.parametrize("tag,n_layers,shape,ctx", [
    ("huihui_ai/qwen3-abliterated:30b", 48, QWEN3_30B_A3B, 40960),
    ("huihui_ai/qwen3-abliterated:30b-a3b-instruct-2507-q4_K_M", 48, QWEN3_30B_A3B, 262144),
    ("huihui_ai/deepseek-r1-abliterated:32b", 64, ({(40, 8, 128)}, set()), 131072),
])
def test_ollama_namespace_tag_read_as_the_library_tag(tag, n_layers, shape, ctx):
    spec = resolve(tag)
    assert (spec.n_layers, _shape(spec), spec.weights.format, spec.n_ctx_train) == (n_layers, shape, "Q4_K_M", ctx)
    assert any("an Ollama user's namespace" in label and "'abliterated'" in label for label in spec.labels)


def test_ollama_namespace_tag_of_no_library_model_stays_unknown():
    with pytest.raises(OomkitError, match="unknown model"):
        resolve("someuser/nonsense:7b")


# ---- LM Studio's models folder and Ollama's blob store, as pasted from another machine ----

def test_lm_studio_path_names_its_repo():
    path = "~/.lmstudio/models/lmstudio-community/Qwen3-30B-A3B-Instruct-2507-GGUF/Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf"
    assert names.hub_cache_gguf(path) == "lmstudio-community/Qwen3-30B-A3B-Instruct-2507-GGUF:Q4_K_M"
    spec = resolve(path)
    assert (spec.architecture, spec.n_layers, _shape(spec), spec.weights.format) == \
        ("qwen3moe", 48, QWEN3_30B_A3B, "Q4_K_M")


def test_ollama_blob_path_says_to_name_the_tag():
    with pytest.raises(OomkitError, match="an Ollama model blob .* name its tag"):
        resolve("/root/.ollama/models/blobs/sha256-" + "3291abe70f16ee96" * 4)


# ---- with the hub asked: unreachable, the name stands; "no such repo", it is believed ----

def test_reupload_with_the_hub_unreachable(tmp_path, monkeypatch):
    import socket

    import huggingface_hub.constants as hf_constants

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))
    spec = resolve("unsloth/Qwen3-30B-A3B-Instruct-2507", tag_formats=False)
    assert (spec.architecture, spec.n_layers, spec.weights.format) == ("qwen3moe", 48, "bfloat16")
    hub = next(label for label in spec.labels if label.startswith("hub not read: "))
    assert "unreachable" in hub and "did you mean" not in hub


# ---- gguf-my-repo's repos name their one file type ("{username}/{model_name}-{q_method}-GGUF", ggml-org's
# gguf-my-repo space app.py create_repo); were: only Q<n>_<n> / Q<n>_K_<S|M|L> read ----

@pytest.mark.parametrize("name,fmt", [("someone/Qwen3-8B-Q6_K-GGUF", "Q6_K"), ("someone/Qwen3-8B-IQ4_NL-GGUF", "IQ4_NL"),
                                      ("someone/Qwen3-8B-F16-GGUF", "F16"), ("someone/Qwen3-8B-Q5_K_S-GGUF", "Q5_K_S")])
def test_gguf_my_repo_names(name, fmt):
    # Qwen/Qwen3-8B: 36 layers, 32 Q / 8 KV heads, head_dim 128 (aiconfigurator Qwen--Qwen3-8B_config.json)
    spec = resolve(name)
    assert (spec.architecture, spec.n_layers, _shape(spec), spec.weights.format) == \
        ("qwen3", 36, ({(32, 8, 128)}, set()), fmt)
    with pytest.raises(OomkitError, match="unknown quant tag 'Q9_Z'"):
        resolve("someone/Qwen3-8B-Q9_Z-GGUF")
