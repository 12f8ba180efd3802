"""Ollama's MLX runner (engines/ollama/mlx_runner.py) against the figures Ollama printed for an MLX library tag.

ollama/ollama#17246 (https://github.com/ollama/ollama/issues/17246, macOS, Apple GPU, Ollama 0.32.1):

    ollama run qwen3.6:35b-a3b-coding-nvfp4
    Error: 500 Internal Server Error: model requires 20.4 GiB but only 11.3 GiB are available (after 512.0 MiB overhead)

"model requires" is x/mlxrunner/client.go Load's modelSize, the manifest's TotalTensorSize: the bytes x/create wrote
for Qwen3.6-35B-A3B at --quantize nvfp4; "512.0 MiB" is Metal's MinimumMemory with OLLAMA_GPU_OVERHEAD unset.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.ollama import ENGINE, OllamaSettings
from oomkit.engines.ollama.memory import human_bytes2
from oomkit.engines.ollama.mlx_runner import (
    QUANT,
    load_check,
    quantized_bytes,
    tag_quantization,
    tensor_quantization,
    total_tensor_size,
)
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from oomkit.model.spec import TensorSpec
from oomkit.units import GiB, MiB

O17246 = "https://github.com/ollama/ollama/issues/17246"
O17246_ERROR = ("model requires 20.4 GiB but only 11.3 GiB are available (after 512.0 MiB overhead)")


@pytest.fixture(scope="module")
def qwen36_35b():
    # the GGUF tag of the same model: the library name without "-coding-nvfp4" (its checkpoint's architecture)
    return resolve("qwen3.6:35b-a3b", "bf16", None)


def test_total_tensor_size_of_the_nvfp4_build_is_what_the_runner_printed(qwen36_35b):
    # O17246: "model requires 20.4 GiB"
    size = total_tensor_size(qwen36_35b, "nvfp4")
    assert human_bytes2(size.total) == "20.4 GiB"


def test_the_load_check_refuses_as_the_thread_shows(qwen36_35b):
    # O17246: 11.3 GiB left after Metal's 512 MiB; the free memory is what that leaves plus the overhead
    size = total_tensor_size(qwen36_35b, "nvfp4").total
    check = load_check(size, free=int(11.3 * GiB) + 512 * MiB, metal=True)
    assert not check.fits
    assert check.error == O17246_ERROR


def test_the_check_passes_where_the_tensors_fit_and_counts_ollama_gpu_overhead():
    # client.go Load: modelSize > available refuses, equal loads; OLLAMA_GPU_OVERHEAD adds to MinimumMemory
    assert load_check(10 * GiB, 10 * GiB + 512 * MiB, metal=True).fits
    assert not load_check(10 * GiB, 10 * GiB + 512 * MiB, metal=True, gpu_overhead=1).fits
    other = load_check(10 * GiB, 10 * GiB, metal=False)
    assert other.overhead == 457 * MiB and not other.fits
    assert load_check(1, 100 * MiB, metal=True).available == 0  # free below the overhead: nothing available


def test_tag_words_name_x_create_quantizations():
    # x/quant/quant.go byType; x/create/client/create.go --quantize; "-mlx" is an import as quantized
    assert tag_quantization("35b-a3b-coding-nvfp4") == "nvfp4"
    assert tag_quantization("27b-mxfp8") == "mxfp8"
    assert tag_quantization("27b-coding-int4") == "int4"
    assert tag_quantization("27b-mlx") is None
    assert QUANT["nvfp4"] == (16, 4, "nvfp4") and QUANT["int4"] == (64, 4, "affine")


def test_the_quantization_policy_of_x_create():
    # create.go GetTensorQuantization: fp4 promotes k/v/down of dense layers to mxfp8, never the experts' down_exps;
    # int4 promotes both; lm_head at the family's 8-bit type; routing gates, norms, embeddings at source
    def t(name, shape):
        n = 1
        for d in shape:
            n *= d
        return TensorSpec(name, shape, "bf16", 2 * n)
    assert tensor_quantization(t("blk.3.attn_v.weight", (2048, 512)), "nvfp4", "qwen35moe") == "mxfp8"
    assert tensor_quantization(t("blk.3.ffn_down_exps.weight", (512, 2048, 256)), "nvfp4", "qwen35moe") == "nvfp4"
    assert tensor_quantization(t("blk.3.ffn_down_exps.weight", (512, 2048, 256)), "int4", "qwen35moe") == "int8"
    assert tensor_quantization(t("blk.3.attn_q.weight", (2048, 8192)), "nvfp4", "qwen35moe") == "nvfp4"
    assert tensor_quantization(t("output.weight", (2048, 248320)), "nvfp4", "qwen35moe") == "mxfp8"
    assert tensor_quantization(t("blk.3.ffn_gate_inp.weight", (2048, 256)), "nvfp4", "qwen35moe") == ""
    assert tensor_quantization(t("token_embd.weight", (2048, 248320)), "nvfp4", "qwen35moe") == ""
    assert tensor_quantization(t("blk.0.ssm_alpha.weight", (2048, 32)), "int8", "qwen35moe") == ""
    # mx.quantize nvfp4: 4-bit values and an e4m3 scale per 16; affine int4: a bf16 scale and bias per 64
    assert quantized_bytes(1024, "nvfp4") == 512 + 64
    assert quantized_bytes(1024, "int4") == 512 + 16 * 4


def test_the_engine_estimates_an_mlx_build_with_the_runners_check(qwen36_35b):
    # engines/ollama/layout.py estimate: a spec whose weights are an MLX build goes to x/mlxrunner's model; the
    # refusal is Ollama's own text (O17246) where the free memory leaves 11.3 GiB after Metal's 512 MiB
    spec = replace(qwen36_35b, weights=replace(qwen36_35b.weights, format="ollama-mlx-nvfp4"))
    gpu = Device("MTL0", "Apple GPU", memory_bytes=16 * GiB, free_bytes=int(11.3 * GiB) + 512 * MiB)
    est = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings())
    assert est.engine_view["load_check"]["fits"] is False
    assert est.warnings == (f"Ollama refuses to load it (x/mlxrunner/client.go Load): {O17246_ERROR}",)
    assert human_bytes2(est.engine_view["total_tensor_size"]) == "20.4 GiB"


# ---------------------------------------------------------------------------------------------------------------
# The runner's compute, its KV cache types and the vision tower (ollama/ollama fb3076099, MLX_VERSION 27fec909a)

def test_prefill_runs_2048_tokens_a_forward_leaving_one_for_decode():
    # x/mlxrunner/pipeline.go prefillChunkSize: 2 << 10; prefill: `for total-processed > 1`, n = min(chunk, ...)
    from oomkit.engines.ollama.mlx_runner import PREFILL_CHUNK, prefill_chunks
    assert PREFILL_CHUNK == 2048
    assert prefill_chunks(8192) == [2048, 2048, 2048, 2047]
    assert prefill_chunks(2049) == [2048]


def test_compute_holds_the_unfused_attention_scores_of_the_last_chunk(qwen36_35b):
    # Qwen3.6-35B-A3B: 16 query heads of 256 (config.json num_attention_heads, head_dim). MLX 27fec909a
    # scaled_dot_product_attention.cpp use_fallback: a query of > 8 tokens with head dim 256 runs unfused; fast.cpp's
    # fallback holds scores = matmul(q, k^T) of 16 x S x L bf16 and the S x L bool causal mask. The largest S x L of
    # an 8,192 prompt is its last chunk: 2,047 queries against 8,191 keys.
    from oomkit.engines.ollama.mlx_runner import compute_bytes
    scores = 16 * 2047 * 8191 * 2 + 2047 * 8191
    c = compute_bytes(qwen36_35b, 8192)
    assert scores < c < scores + 128 * MiB
    # no vocab x chunk logits: prefill discards the forward's hidden state, decode unembeds one token
    assert compute_bytes(qwen36_35b, 2) < 128 * MiB


def test_the_estimate_carries_the_compute(qwen36_35b):
    spec = replace(qwen36_35b, weights=replace(qwen36_35b.weights, format="ollama-mlx-nvfp4"))
    gpu = Device("MTL0", "Apple GPU", memory_bytes=64 * GiB)
    est = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings(num_ctx=8192))
    assert est.devices[0].compute_bytes > 16 * 2047 * 8191 * 2


def test_the_mlx_runner_has_no_kv_cache_type(qwen36_35b):
    # OLLAMA_KV_CACHE_TYPE is read by no file under x/ (envconfig.KvCacheType; llm/server.go only); kvcache.go
    # appendKV allocates mlx.Zeros(keys.DType(), ...): the check lists f16 alone
    from oomkit.check import check
    spec = replace(qwen36_35b, weights=replace(qwen36_35b.weights, format="ollama-mlx-nvfp4"))
    gpu = Device("MTL0", "Apple GPU", memory_bytes=64 * GiB)
    q8 = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings(kv_cache_type="q8_0"))  # set, and ignored as Ollama does
    f16 = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings(kv_cache_type="f16"))
    assert q8.devices[0].kv_cache_bytes == f16.devices[0].kv_cache_bytes
    assert any("OLLAMA_KV_CACHE_TYPE=q8_0 is ignored by Ollama's MLX runner" in w for w in q8.warnings)
    r = check(spec, "ollama", vram="48GiB", num_ctx=8192)
    assert list(r.max_context_by_kv) == ["f16"]


def test_the_vision_tower_is_in_the_builds_safetensors(qwen36_35b):
    # x/create keeps the tower in the build's safetensors (no mmproj); x/models/qwen3_5/vision.go loadVisionWeights
    # (1e85fe8e9) builds it from v0.32.7
    spec = replace(qwen36_35b, weights=replace(qwen36_35b.weights, format="ollama-mlx-nvfp4"))
    assert spec.towers
    gpu = Device("MTL0", "Apple GPU", memory_bytes=64 * GiB)
    new = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings(engine_version="0.32.7")).model.labels
    old = ENGINE.estimate_fn(spec, (gpu,), OllamaSettings(engine_version="0.32.6")).model.labels
    assert not any("mmproj" in lb and "load it from the mmproj file" in lb for lb in new)
    assert any("inside the MLX build's safetensors" in lb and "runner loads it" in lb for lb in new)
    assert any("takes no image input" in lb for lb in old)
