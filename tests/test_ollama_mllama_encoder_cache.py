"""mllama's encoder cache on the Ollama engine (model/models/mllama + kvcache/encoder.go, v0.7.0+): the
cross-attention layers hold their K and V in an EncoderCache the reserve's image creates (ctx.Layer(i).Empty, so
ml/backend/ggml counts it in the layer's Cache), F32 [128, 8, 1601 x 4] each, beside the causal cache of the
self-attention layers."""

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.kv import mllama_encoder_cache
from oomkit.memory import Device
from oomkit.model.resolve import resolve

GiB = 1 << 30
MiB = 1 << 20


def _kv(tag: str, version: str, num_ctx: int) -> dict:
    gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24 * GiB, free_bytes=23 * GiB)
    est = ol.ENGINE.estimate(resolve(tag), (gpu,), ol.OllamaSettings(num_ctx=num_ctx, engine_version=version))
    return est.engine_view


def test_encoder_cache_by_layer():
    """TextCrossAttention.Forward: K and V [head_dim 128, kv heads 8, 1601 x 4 tiles], F32 (the products of the F32
    cross-attention states), on the 8 cross-attention layers of 11b and the 20 of 90b."""
    per_layer = 2 * 128 * 8 * 1601 * 4 * 4
    enc = mllama_encoder_cache(resolve("llama3.2-vision:11b"))
    assert sorted(enc) == [3, 8, 13, 18, 23, 28, 33, 38] and set(enc.values()) == {per_layer}
    assert sum(enc.values()) == 419692544  # 400.25 MiB
    assert len(mllama_encoder_cache(resolve("llama3.2-vision:90b"))) == 20
    assert mllama_encoder_cache(resolve("ministral-3:3b")) == {}


@pytest.mark.parametrize("version", ["0.7.0", "0.12.6", "0.13.1"])
def test_runner_kv_counts_the_encoder_cache(version):
    """ollama/ollama#9311 (llama3.2-vision:11b at num_ctx 2048, v0.5.11) prints memory.required.kv="656.2 MiB":
    GraphSize's mllama branch, the cross-attention layers at 4 B x 1601 x 4. The Ollama engine allocates the same
    bytes: 32 self-attention layers x 2048 cells x 2 x 1024 x 2 B (256 MiB) + the 400.25 MiB encoder cache. At 4096
    cells: 512 MiB + 400.25 MiB."""
    view = _kv("llama3.2-vision:11b", version, 2048)
    assert view["kv_bytes_total"] == 688128000
    assert round(view["kv_bytes_total"] / MiB, 1) == 656.2
    assert _kv("llama3.2-vision:11b", version, 4096)["kv_bytes_total"] == 512 * MiB + 419692544


def test_runner_kv_cache_on_the_gpu_holds_it():
    view = _kv("llama3.2-vision:11b", "0.12.6", 4096)
    assert view["ollama_memory"]["kv cache"] == {"CUDA0": 512 * MiB + 419692544}
