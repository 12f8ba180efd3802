"""Llama 3.2 Vision (mllama): the text model's self- and cross-attention layers, the vision tower, and the engines
that run it, every figure derived here by hand from the config and the engines' source formulas."""

from __future__ import annotations

import pytest

from oomkit.engines.ollama.memory import graph_size
from oomkit.engines.ollama.projector import mmproj_projector, projector
from oomkit.engines.ollama.weights import gguf_view
from oomkit.errors import OomkitError
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind

CROSS_11B = [3, 8, 13, 18, 23, 28, 33, 38]


def test_11b_layers_self_and_cross():
    """text_config: 40 layers, cross_attention_layers [3, 8, ..., 38]: those are MllamaCrossAttentionDecoderLayer
    (no self-attention cache), the other 32 full attention."""
    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    assert spec.architecture == "mllama" and spec.n_layers == 40
    cross = [la.index for la in spec.layers if la.cross_attention]
    assert cross == CROSS_11B
    assert all(spec.layers[i].kind is LayerKind.NONE for i in cross)
    assert sum(la.kind is LayerKind.FULL for la in spec.layers) == 32
    a = spec.layers[3].attention
    assert (a.n_heads, a.n_kv_heads, a.head_dim_k) == (32, 8, 128)


def test_11b_decoder_parameters():
    """embed_tokens (vocab + 8 rows) + 32 self-attention layers + 8 cross-attention layers (the same projections
    plus q/k norms of one head and two gates) + norm + lm_head."""
    h, ff, v = 4096, 14336, 128256
    attn = h * h + 2 * h * 1024 + h * h
    layer = attn + 3 * h * ff + 2 * h
    cross = layer + 2 * 128 + 2
    total = (v + 8) * h + 32 * layer + 8 * cross + h + v * h
    assert total == 9_775_192_080
    assert resolve("llama3.2-vision:11b").params_total == total


def test_vision_tower_parameters():
    """MllamaVisionModel at image 560 / patch 14 (1601 positions), 4 tiles, 8 aspect ratios, 32 + 8 gated layers of
    width 1280 / 5120, and the 7680 -> 4096 projector."""
    h, ff, n = 1280, 5120, 1601
    emb = 3 * 14 * 14 * h + h + 1 + n * h + 9 * 4 * n * h + 2 * (9 * 4 * h + 1) + 2 * 2 * h
    layer = 4 * h * h + (h * ff + ff) + (ff * h + h) + 2 * 2 * h
    enc = emb + 32 * layer + 8 * (layer + 2)
    assert enc == 863_567_379
    tower = resolve("llama3.2-vision").towers[0]
    assert (tower.encoder_params, tower.projector_params) == (enc, 7680 * 4096 + 4096)


def test_ollama_graphsize_kv_by_release():
    """GraphSize's mllama branch at 2048 cells: v0.5.11 one total, headsKV x (K + V) x (2 x 32 x 2048 + 4 x 8 x
    1601 x 4); v0.6.3+ per layer, a self-attention layer 2048 x 256 x 8 x 2 B and a cross-attention layer
    8 x 256 x 4 x 1601 x 4 B."""
    g = gguf_view(resolve("llama3.2-vision", "Q4_K_M"))
    old = graph_size(g, (0, 5, 11), 2048, 512, 1, "f16", False)
    assert old.kv_total == 8 * 256 * (2 * 32 * 2048 + 4 * 8 * 1601 * 4) == 688_128_000
    new = graph_size(g, (0, 6, 3), 2048, 512, 1, "q8_0", False)
    assert new.kv[0] == 2048 * 256 * 8 * 1 and new.kv[3] == 8 * 256 * 4 * 1601 * 4
    assert new.kv_total == 32 * 2048 * 256 * 8 + 8 * 8 * 256 * 4 * 1601 * 4
    # full = max(4b(2 + 3e + ehk h + ctx(1 + h)), 4b(e + V)), partial = max(..., 4b(e + V) + e V 105/128)
    b, e, V = 512, 4096, 128256
    assert old.full == max(4 * b * (2 + 3 * e + 128 * 32 + 2048 * 33), 4 * b * (e + V))
    assert old.partial == 4 * b * (e + V) + e * V * 105 // 128


def test_ollama_projector_file_and_graph():
    """projectorMemoryRequirements of the F16 projector GGUF: matrices F16, the vectors and the three tile
    embeddings F32, one duplicated gate; its mllama graph 4 x (8 + 560^2 x 3 x 4 + 1280 x 1601 x 4 + 9 x 1280 x
    1608 x 4 + (1608 x 4)^2 x 16)."""
    spec = resolve("llama3.2-vision", "Q4_K_M")
    h, ff = 1280, 5120
    f32 = 9 * 4 * 1601 * h + 2 * 9 * 4 * h + h + 4 + 2 * 2 * h + 40 * (ff + h + 2 * 2 * h) + 2 * 8
    v_bytes = 2 * (863_567_379 + 1 - f32) + 4 * f32
    mm_bytes = 2 * 7680 * 4096 + 4 * 4096
    graph = 4 * (8 + 560 * 560 * 3 * 4 + h * 1601 * 4 + 9 * h * 1608 * 4 + (1608 * 4) ** 2 * 16)
    old = mmproj_projector(spec)
    assert (old.weights, old.graph) == (v_bytes + mm_bytes, graph)
    new = projector(spec)  # VisionGraphSize (v0.7.0+, the encoder inside the model GGUF): the v.* group only
    assert (new.weights, new.graph, new.runner_weights) == (v_bytes, graph, v_bytes + mm_bytes)


def test_llamacpp_refuses_mllama():
    from oomkit.engines import llamacpp
    from oomkit.memory import Device

    gpu = Device(id="CUDA0", name="GPU", memory_bytes=24 << 30, free_bytes=24 << 30)
    with pytest.raises(OomkitError, match="llama.cpp has no mllama architecture"):
        llamacpp.ENGINE.estimate(resolve("llama3.2-vision", "Q4_K_M"), (gpu,), llamacpp.LlamaCppSettings())


def _h100():
    from oomkit.memory import Device

    return Device(id="CUDA0", name="NVIDIA H100 80GB HBM3", memory_bytes=80 << 30, free_bytes=80 << 30)


def test_vllm_v0_block_holds_every_layer():
    """vLLM 0.6.2-0.10.2 run mllama on V0 (the V1 oracle falls back for an encoder-decoder model): CacheEngine's
    block covers all 40 layers, the cross-attention ones included: 16 x 40 x 2 x (8 x 128) x 2 B."""
    from oomkit.engines import vllm
    from oomkit.engines.vllm.config import resolve as vllm_resolve
    from oomkit.engines.vllm.kv import kv_plan

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    s = vllm.VllmSettings(engine_version="0.10.2", max_model_len=8192)
    r = vllm_resolve(spec, (_h100(),), s)
    assert not r.v1
    assert kv_plan(spec, s, r).bytes_per_block == 16 * 40 * 2 * 8 * 128 * 2


@pytest.mark.parametrize(("version", "words"), [
    ("0.11.0", "Model architecture MllamaForConditionalGeneration was supported in vLLM until v0.10.2, and is not "
               "supported anymore."),
    ("0.6.1", "MllamaForConditionalGeneration"),
])
def test_vllm_releases_without_mllama(version, words):
    from oomkit.engines import vllm

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    with pytest.raises(OomkitError) as e:
        vllm.ENGINE.estimate(spec, (_h100(),), vllm.VllmSettings(engine_version=version, max_model_len=8192))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_transformers_cross_attention_cache_per_image():
    """A text prompt leaves the cross-attention layers' cache empty (MllamaTextModel skips them); an image adds
    8 layers x 4 x 1601 tokens x 2 x 1024 x 2 B = 200 MiB per sequence, said in a note."""
    from oomkit.engines import transformers as tf

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    est = tf.ENGINE.estimate(spec, (_h100(),), tf.TransformersSettings())
    assert 8 * 4 * 1601 * 2 * 1024 * 2 == 209_846_272
    assert any("4 x 1601 vision tokens, 200 MiB per image" in w for w in est.warnings)


def _sglang_layout(version: str, **kw):
    from oomkit.engines.sglang.kv import cache_layout, cell_size
    from oomkit.engines.sglang.settings import SGLangSettings, parse_version

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    s = SGLangSettings(engine_version=version, **kw)
    lay = cache_layout(spec, s)
    return lay, cell_size(lay, s, parse_version(version), lay.full_layers)


@pytest.mark.parametrize("version", ["0.4.0", "0.4.6", "0.5.5", "0.5.23"])
def test_sglang_pool_spans_cross_attention_layers(version):
    """SGLang's cell_size and MHATokenToKVPool take the text config's num_hidden_layers (40), the 8 cross-attention
    layers included (models/mllama.py RadixAttention(layer_id, is_cross_attention=True) writes into the same pool):
    40 x 2 x (8 x 128) x 2 B = 160 KiB per token, not the 32 self-attention layers' 128 KiB."""
    from oomkit.engines.sglang.kv import kv_pools

    lay, cell = _sglang_layout(version)
    assert len(lay.full_layers) == 40
    assert cell == 40 * 2 * 8 * 128 * 2 == 163_840
    (pool,) = kv_pools(lay, _sglang_settings(version), 1000)
    # memory_pool.py _create_buffers: (size + page_size) rows per layer for K and for V (page size 1 here)
    assert (pool.n_layers, pool.k_bytes, pool.v_bytes) == (40, 1001 * 40 * 1024 * 2, 1001 * 40 * 1024 * 2)
    _, cell_tp2 = _sglang_layout(version, tp_size=2)
    assert cell_tp2 == 40 * 2 * 4 * 128 * 2


def _sglang_settings(version: str):
    from oomkit.engines.sglang.settings import SGLangSettings

    return SGLangSettings(engine_version=version)


def test_sglang_triton_refuses_cross_attention():
    with pytest.raises(OomkitError) as e:
        _sglang_layout("0.5.23", attention_backend="triton")
    assert "Cross attention is not supported in the triton attention backend" in str(e.value)
    assert "\n" not in str(e.value)


def test_mlx_lm_refuses_mllama():
    """mlx-lm has no models/mllama.py at any release (0.19.0, 0.24.0, 0.28.0, 0.32.2 read) nor a MODEL_REMAPPING
    entry: utils.py _get_classes raises "Model type mllama not supported." oomkit does not model mlx-vlm."""
    from oomkit.engines import mlx

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    with pytest.raises(OomkitError) as e:
        mlx.ENGINE.estimate(spec, (), mlx.MlxSettings())
    assert "Model type mllama not supported." in str(e.value) and "mlx-vlm" in str(e.value)
    assert "\n" not in str(e.value)


def test_sglang_estimate_turns_chunked_prefill_off():
    """ModelRunner (0.4.0-0.5.x) / handle_model_capability_adjustments (0.5.23) set chunked_prefill_size = -1 for
    mllama after mem_fraction_static is chosen; the estimate's KV per token is the 40-layer cell."""
    from oomkit.engines import sglang

    spec = resolve("meta-llama/Llama-3.2-11B-Vision-Instruct", "bf16")
    for version in ("0.4.6", "0.5.5", "0.5.23"):
        est = sglang.ENGINE.estimate(spec, (_h100(),), sglang.SGLangSettings(engine_version=version))
        assert est.engine_view["chunked_prefill_size"] == -1
        assert est.kv_bytes_per_token == 40 * 2 * 8 * 128 * 2
