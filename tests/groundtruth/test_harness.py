"""The ground-truth harness itself: synthetic GGUFs load in llama.cpp and the parsed figures are right.

Expected figures are worked out by hand from the models' published dimensions (see synth.py for sources).
"""

from __future__ import annotations

import pytest

from . import llamacpp_run as lr
from . import synth

pytest.importorskip("llama_cpp")

MiB = 2**20

# layer counts that keep every layer kind present (gemma3: 5 SWA + 1 global; qwen3.5: 3 recurrent + 1 full;
# deepseek: 3 dense + 1 MoE) while keeping the files small
SMALL = {
    "llama-3.1-8b": {"n_layers": 2},
    "qwen3-4b": {"n_layers": 2},
    "qwen3-8b": {"n_layers": 2},
    "qwen3-30b-a3b": {"n_layers": 2, "n_experts": 16},
    "gemma-3-12b": {"n_layers": 6},
    "gemma-2-9b": {"n_layers": 2},
    "gpt-oss-20b": {"n_layers": 2},
    "deepseek-v3": {"n_layers": 4, "n_experts": 8},
    "deepseek-v3-legacy": {"n_layers": 4, "n_experts": 8},
    "mamba2-2.7b": {"n_layers": 2},
    "qwen3.5-27b": {"n_layers": 4},
}


def small(key: str) -> synth.SynthModel:
    return synth.MODELS[key](**SMALL[key])


def path_of(key: str, recipe: str = "q4_0"):
    return synth.synth_path(small(key), recipe)


@pytest.mark.parametrize("key", sorted(synth.MODELS))
def test_every_model_loads_and_logs_its_memory(key: str) -> None:
    # dry run (no_alloc): the loader still checks every tensor's name, shape, type and file bounds, the
    # hparams and the vocabulary, and the context reserves its compute graph
    r = lr.measure(path_of(key), n_ctx=4096, flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    m = small(key)
    assert r["arch"] == m.arch
    assert r["n_layer"] == m.n_layers
    assert r["n_vocab"] == m.n_vocab
    assert r["n_ctx"] == 4096
    assert r["compute_buffer_mib"].get("CPU", 0) > 0
    assert r["output_buffer_mib"]["CPU"] == pytest.approx(m.n_vocab * 4 / MiB, abs=0.006)  # n_vocab f32 logits
    if key == "mamba2-2.7b":
        assert r["kv_caches"] == [] and r["recurrent"] is not None
    else:
        assert r["kv_caches"], "no llama_kv_cache size line"


def test_llama3_f16_kv_by_hand() -> None:
    # Llama-3.1-8B: 8 KV heads x head_dim 128; f16 = 2 bytes; K and V each n_layers * 8*128 * n_ctx * 2 bytes
    n_layers, n_ctx = 2, 4096
    r = lr.measure(path_of("llama-3.1-8b"), n_ctx=n_ctx, type_k="f16", type_v="f16", flash_attn="on")
    assert r["ok"], r["error"]
    (kv,) = r["kv_caches"]
    assert (kv["cells"], kv["layers"], kv["seqs"], kv["type_k"], kv["type_v"]) == (n_ctx, n_layers, 1, "f16", "f16")
    one = n_layers * 8 * 128 * n_ctx * 2
    assert kv["k_mib"] * MiB == one
    assert kv["v_mib"] * MiB == one
    assert r["kv_size_mib"] * MiB == n_layers * 2 * 8 * 128 * n_ctx * 2  # = 32 MiB
    assert r["kv_buffer_mib"] == {"CPU": 32.0}
    # the mapped model buffer is the file's whole tensor-data region (GGUFWriter layout, 32-byte aligned)
    p = path_of("llama-3.1-8b")
    data_start = -(-len(lr.gguf_header(p)) // 32) * 32
    assert r["model_buffer_mib"]["CPU_Mapped"] == pytest.approx((p.stat().st_size - data_start) / MiB, abs=0.006)


def test_llama3_q8_0_kv_and_streams_by_hand() -> None:
    # q8_0: 34 bytes per 32 elements; 4 sequences, not unified: n_ctx_seq = 8192/4 = 2048 cells x 4 streams
    n_layers = 2
    r = lr.measure(path_of("llama-3.1-8b"), n_ctx=8192, n_seq_max=4, kv_unified=False,
                   type_k="q8_0", type_v="q8_0", flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    assert (r["n_ctx"], r["n_ctx_seq"], r["n_seq_max"]) == (8192, 2048, 4)
    (kv,) = r["kv_caches"]
    assert (kv["cells"], kv["seqs"], kv["streams"]) == (2048, 4, 4)
    assert kv["k_mib"] * MiB == n_layers * 8 * 128 * 2048 * 4 * 34 // 32


def test_gpt_oss_swa_cells_by_hand() -> None:
    # sliding window 128 on every other layer: SWA cache = PAD(min(n_ctx, n_swa + n_ubatch), 256) = 768 cells
    # (llama-kv-cache-iswa.cpp); the full layers get n_ctx cells. 8 KV heads x 64, f16.
    r = lr.measure(path_of("gpt-oss-20b"), n_ctx=4096, n_ubatch=512, flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    caches = {c["kind"]: c for c in r["kv_caches"]}
    assert caches["non-SWA"]["cells"] == 4096 and caches["non-SWA"]["layers"] == 1
    assert caches["SWA"]["cells"] == 768 and caches["SWA"]["layers"] == 1
    assert caches["SWA"]["k_mib"] * MiB == 1 * 8 * 64 * 768 * 2


def test_gemma3_swa_pattern_by_hand() -> None:
    # 6 layers, pattern 6: layers 0-4 sliding (window 1024), layer 5 global; 8 KV heads x 256
    r = lr.measure(path_of("gemma-3-12b"), n_ctx=8192, n_ubatch=512, flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    caches = {c["kind"]: c for c in r["kv_caches"]}
    assert (caches["non-SWA"]["layers"], caches["non-SWA"]["cells"]) == (1, 8192)
    assert (caches["SWA"]["layers"], caches["SWA"]["cells"]) == (5, 1536)  # PAD(1024 + 512, 256)
    assert caches["SWA"]["v_mib"] * MiB == 5 * 8 * 256 * 1536 * 2


def test_deepseek_mla_k_only_by_hand() -> None:
    # MLA (is_mla): one latent row of kv_lora_rank + qk_rope = 512 + 64 = 576 per layer and token, K only
    r = lr.measure(path_of("deepseek-v3"), n_ctx=4096, flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    (kv,) = r["kv_caches"]
    assert kv["k_mib"] * MiB == 4 * 576 * 4096 * 2
    assert kv["v_mib"] == 0.0


def test_mamba2_recurrent_state_by_hand() -> None:
    # one cell per sequence; R = (d_conv-1)(d_inner + 2 n_group d_state), S = d_state d_inner, f32, per layer
    n_layers, n_seq = 2, 3
    r = lr.measure(path_of("mamba2-2.7b"), n_ctx=4096, n_seq_max=n_seq, no_alloc=True)
    assert r["ok"], r["error"]
    rs = r["recurrent"]
    assert (rs["cells"], rs["layers"], rs["seqs"]) == (n_seq, n_layers, n_seq)
    assert rs["r_mib"] * MiB == pytest.approx(n_layers * 3 * (5120 + 2 * 128) * 4 * n_seq, abs=0.005 * MiB)
    assert rs["s_mib"] * MiB == n_layers * 128 * 5120 * 4 * n_seq


def test_qwen35_hybrid_by_hand() -> None:
    # 4 layers: 3 gated-delta-net layers (state only) + 1 full-attention layer (KV only)
    r = lr.measure(path_of("qwen3.5-27b"), n_ctx=4096, flash_attn="on", no_alloc=True)
    assert r["ok"], r["error"]
    (kv,) = r["kv_caches"]
    assert kv["layers"] == 1 and kv["k_mib"] * MiB == 4 * 256 * 4096 * 2
    rs = r["recurrent"]
    assert rs["s_mib"] * MiB == 3 * 128 * 6144 * 4  # d_state x d_inner, f32, 3 recurrent layers
    assert rs["r_mib"] * MiB == pytest.approx(3 * 3 * (6144 + 2 * 16 * 128) * 4, abs=0.005 * MiB)


def test_quantized_v_without_flash_attention_is_a_structured_error() -> None:
    r = lr.measure(path_of("llama-3.1-8b"), n_ctx=4096, type_k="q8_0", type_v="q8_0", flash_attn="off",
                   no_alloc=True)
    assert r["ok"] is False
    assert r["stage"] == "context"
    assert "requires flash_attn" in r["error"]
    assert "quantized V cache" in r["log"]


def test_broken_file_is_a_structured_error(tmp_path) -> None:
    p = synth.write_gguf(small("mamba2-2.7b"), tmp_path / "m.gguf")
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size // 2)  # the tensor data no longer fits in the file
    r = lr.measure(p, n_ctx=256, cache=False)
    assert r["ok"] is False and r["stage"] == "model"
    assert "file bounds" in r["error"] or "data is not within" in r["error"], r["error"]


def test_no_alloc_matches_a_real_allocation() -> None:
    # llama.cpp's dry run reports the same KV, recurrent, output and compute figures as a real allocation;
    # only the model/KV "buffer size" lines read 0.00 there (dummy buffers)
    same = ("n_ctx", "n_ctx_seq", "kv_caches", "kv_size_mib", "recurrent", "rs_buffer_mib", "output_buffer_mib",
            "compute_buffer_mib", "flash_attn")
    grid = [dict(n_ctx=8192, n_seq_max=2, flash_attn=fa, type_k="q8_0", type_v="f16") for fa in ("on", "off")]
    for key in ("llama-3.1-8b", "gemma-2-9b", "mamba2-2.7b"):
        reals = lr.measure_many(path_of(key), grid)
        drys = lr.measure_many(path_of(key), [dict(s, no_alloc=True) for s in grid])
        for s, real, dry in zip(grid, reals, drys, strict=True):
            assert real["ok"] and dry["ok"], (real["error"], dry["error"])
            for f in same:
                a, b = real[f], dry[f]
                if f == "kv_caches":
                    a = [{k: v for k, v in c.items() if k != "buffer_mib"} for c in a]
                    b = [{k: v for k, v in c.items() if k != "buffer_mib"} for c in b]
                assert a == b, (key, s, f)
            assert sum(real["kv_buffer_mib"].values()) == pytest.approx(real["kv_size_mib"], abs=0.02)
            assert "CPU_Mapped" in real["model_buffer_mib"] and dry["model_buffer_mib"] == {"CPU": 0.0}


def test_measure_many_loads_once_and_caches() -> None:
    settings = [dict(n_ctx=c, flash_attn="on", no_alloc=True) for c in (1000, 2048, 3000)]
    rs = lr.measure_many(path_of("qwen3-4b"), settings)
    assert [r["n_ctx"] for r in rs] == [1024, 2048, 3072]  # llama.cpp pads n_ctx to 256
    again = lr.measure_many(path_of("qwen3-4b"), settings)
    assert all(r["cached"] for r in again)
    assert [r["kv_size_mib"] for r in again] == [r["kv_size_mib"] for r in rs]
