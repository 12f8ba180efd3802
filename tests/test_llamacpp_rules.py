"""llama.cpp's allocation rules on real models' published dimensions, each expected figure worked out by hand
from the model card's dims and llama.cpp's formulas (src/llama-kv-cache.cpp, llama-kv-cache-iswa.cpp,
llama-memory-recurrent.cpp, llama-context.cpp), and, where quoted, equal to a real llama.cpp log line."""

import pytest

import oomkit
from oomkit.errors import OomkitError
from oomkit.model.resolve import resolve

MiB = 1 << 20


def view(model, **kw):
    kw.setdefault("cpu_only", True)
    return oomkit.estimate(model, **kw).engine_view


@pytest.mark.parametrize("ctk,mib", [("f16", 224), ("q8_0", 119), ("q4_0", 63), ("q4_1", 70), ("q5_0", 77),
                                     ("q5_1", 84)])
def test_llama32_3b_k_cache_by_type(ctk, mib):
    # 28 layers x 8 KV heads x 128 dims x 4096 cells; q8_0 = 34 bytes per 32 elements, q4_0 18/32, ...
    # The same six figures appear in llama.cpp logs of Llama-3.2-3B at n_ctx 4096.
    v = view("llama3.2:3b", n_ctx=4096, n_parallel=1, cache_type_k=ctk, flash_attn="on")
    assert v["k_bytes"] == mib * MiB


def test_context_is_padded_to_256_and_split_between_sequences():
    v = view("llama3.1:8b", n_ctx=5000, n_parallel=3, flash_attn="on")
    # not unified: n_ctx_seq = PAD(5000/3, 256) = 1792, n_ctx = 3 * 1792
    assert (v["n_ctx_seq"], v["n_ctx"], v["kv_caches"][0]["streams"]) == (1792, 5376, 3)
    assert v["k_bytes"] == 32 * 8 * 128 * 1792 * 3 * 2


def test_llama_server_auto_parallel_is_four_unified_slots():
    v = view("llama3.1:8b", n_ctx=8192)
    assert (v["n_seq_max"], v["kv_unified"], v["n_ctx"]) == (4, True, 8192)
    assert v["output_buffer_bytes"] == 128256 * 4 * 4  # n_vocab floats per sequence


def test_older_builds_pad_to_32_without_flash_attention():
    v = view("llama3.1:8b", n_ctx=5000, n_parallel=1, flash_attn="off", engine_version="b6500")
    assert v["n_ctx"] == 5024
    v = view("llama3.1:8b", n_ctx=5000, n_parallel=1, flash_attn="off")
    assert v["n_ctx"] == 5120


def test_gpt_oss_sliding_cache_cells():
    # gpt-oss-20b: 24 layers alternating SWA (window 128) / full; 8 KV heads x 64.
    # Logged: 768 SWA cells at -ub 512, 2304 at -ub 2048 (PAD(128 + ub, 256)).
    for ub, cells in ((512, 768), (2048, 2304)):
        v = view("gpt-oss:20b", n_ctx=32768, n_parallel=1, n_ubatch=ub)
        swa = next(c for c in v["kv_caches"] if c["name"] == "SWA")
        assert (swa["cells"], swa["layers"]) == (cells, 12)
    v = view("gpt-oss:20b", n_ctx=32768, n_parallel=1, swa_full=True)
    assert {c["cells"] for c in v["kv_caches"]} == {32768}


def test_gemma3_swa_with_four_unified_slots():
    # Gemma-3-27B: 62 layers, 5 local (window 1024) : 1 global -> 52 SWA + 10 full; 16 KV heads x 128.
    v = view("gemma3:27b", n_ctx=32768)
    caches = {c["name"]: c for c in v["kv_caches"]}
    assert (caches["SWA"]["layers"], caches["non-SWA"]["layers"]) == (52, 10)
    assert caches["SWA"]["cells"] == 4 * 1024 + 512
    assert caches["non-SWA"]["k_bytes"] == 10 * 16 * 128 * 32768 * 2


def test_deepseek_v3_mla_eras():
    # MLA row = kv_lora_rank 512 + rope 64 = 576 per layer and token; 61 layers.
    new = view("deepseek-v3:Q4_K_M", n_ctx=16384, n_parallel=1)
    assert (new["k_bytes"], new["v_bytes"]) == (61 * 576 * 16384 * 2, 0)
    # Apr 2025 - Jan 2026: K 576 + V 512; logged for DeepSeek-V3 @16384: K 1098 MiB, V 976 MiB.
    mid = view("deepseek-v3:Q4_K_M", n_ctx=16384, n_parallel=1, engine_version="b6000")
    assert (mid["k_bytes"], mid["v_bytes"]) == (1098 * MiB, 976 * MiB)
    old = view("deepseek-v3:Q4_K_M", n_ctx=16384, n_parallel=1, engine_version="b4000")
    assert (old["k_bytes"], old["v_bytes"]) == (61 * 128 * 192 * 16384 * 2, 61 * 128 * 128 * 16384 * 2)


def test_mla_needs_equal_k_and_v_types():
    with pytest.raises(OomkitError, match="different K"):
        view("deepseek-v3:Q4_K_M", n_ctx=4096, cache_type_k="q8_0", cache_type_v="f16")


def test_qwen35_recurrent_state_scales_with_sequences_not_context():
    # Qwen3.5-35B-A3B: 30 gated-delta-net layers; per layer (3*8192 + 128*4096) f32 per sequence.
    per_seq = 30 * (3 * 8192 + 128 * 4096) * 4
    for np_, ctx in ((4, 4096), (4, 65536), (2, 4096)):
        v = view("qwen3.5:35b-a3b", n_ctx=ctx, n_parallel=np_, kv_unified=True)
        assert v["recurrent_state_bytes"] == np_ * per_seq
    assert 4 * per_seq == 251.25 * MiB  # the figure llama.cpp logs for 4 sequences


def test_quantized_v_needs_flash_attention():
    with pytest.raises(OomkitError, match="flash_attn"):
        view("llama3.1:8b", cache_type_v="q8_0", flash_attn="off")
    # auto turns flash attention on
    assert view("llama3.1:8b", n_ctx=4096, cache_type_v="q8_0")["flash_attn"] is True


def test_v_rows_padded_to_widest_layer_without_flash_attention():
    spec = resolve("gemma3:27b", "Q4_K_M")
    on = oomkit.estimate(spec, cpu_only=True, n_ctx=4096, n_parallel=1, flash_attn="on").engine_view
    off = oomkit.estimate(spec, cpu_only=True, n_ctx=4096, n_parallel=1, flash_attn="off").engine_view
    assert on["v_bytes"] == off["v_bytes"]  # all layers share one V width: no padding


def test_unknown_cache_type_and_bad_context():
    with pytest.raises(OomkitError, match="ctk"):
        view("llama3.1:8b", cache_type_k="q3_K")
    with pytest.raises(OomkitError, match="positive"):
        view("llama3.1:8b", n_ctx=-5)


def test_ngl_places_last_layers_and_output_on_gpu():
    est = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=4096, n_parallel=1, n_gpu_layers=10)
    # since PR #18148 the output layer is offloaded first: -ngl 10 = output + the last 9 repeating layers
    on_gpu = [lu.index for lu in est.layers if lu.device == "CUDA0"]
    assert on_gpu == list(range(23, 32))
    assert est.engine_view["offloaded_layers"] == "10/33"
    assert est.engine_view["kv_buffer_bytes"]["CUDA0"] == 9 * 8 * 128 * 4096 * 2 * 2  # KV follows its layer
    old = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=4096, n_parallel=1, n_gpu_layers=10,
                          engine_version="b6000")
    assert [lu.index for lu in old.layers if lu.device == "CUDA0"] == list(range(22, 32))
    assert "CUDA0" not in {k for k in old.engine_view["model_buffer_bytes"] if "output" in k}
    full = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=4096, n_parallel=1)
    assert full.engine_view["offloaded_layers"] == "33/33"
    assert full.engine_view["model_buffer_bytes"]["CPU_Mapped"] == 128256 * 4096 * 144 // 256  # token_embd q4_K


def test_tensor_split_and_expert_offload():
    est = oomkit.estimate("qwen3:30b-a3b:Q4_K_M", vram="24GiB,24GiB", n_ctx=4096, n_parallel=1,
                          tensor_split=(1.0, 3.0))
    # split points 0.25, 1.0 over 48 + 1 (output) layers: layer il -> CUDA0 while il / 49 < 0.25, i.e. 0..12
    devs = [lu.device for lu in est.layers]
    assert devs.count("CUDA0") == 13 and devs.count("CUDA1") == 35
    moe = oomkit.estimate("qwen3:30b-a3b:Q4_K_M", vram="24GiB", n_ctx=4096, n_parallel=1, n_cpu_moe=48)
    assert moe.host.weights_bytes > 15 * (1 << 30)  # the routed experts now live in RAM
    assert moe.devices[0].weights_bytes < 2 * (1 << 30)


def test_no_kv_offload_and_override_tensor():
    est = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=8192, n_parallel=1, no_kv_offload=True)
    # -nkvo: every layer's K and V in host memory (llama_kv_cache: offload=false -> CPU buffer type)
    assert est.engine_view["kv_buffer_bytes"] == {"CPU": 32 * 8 * 128 * 8192 * 2 * 2}
    assert est.devices[0].kv_cache_bytes == 0
    # -ot "ffn_down=CPU": every layer's ffn_down (Q4_K_M: q6_K in the more-bits layers, q4_K elsewhere) in RAM
    ot = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=8192, n_parallel=1,
                         override_tensor=(("ffn_down", "CPU"),))
    downs = [t for t in ot.model.weights.tensors if "ffn_down" in t.name]
    base = oomkit.estimate("llama3.1:8b:Q4_K_M", vram="24GiB", n_ctx=8192, n_parallel=1)
    assert ot.host.weights_bytes - base.host.weights_bytes == sum(t.nbytes for t in downs)


def test_command_line_flags_reach_the_settings():
    from oomkit.engines.cmdline import parse_command

    p = parse_command(["llama-server", "-m", "x.gguf", "-c", "16384", "-ngl", "20", "-fa", "-ctk", "q8_0",
                       "--n-cpu-moe", "4", "-ts", "3,1", "-np", "2", "-kvu", "--swa-full", "-ot", "exps=CPU",
                       "--no-mmap", "--jinja", "--port", "8080", "-t", "8"])
    s = p.settings
    assert (p.engine, p.model, s.n_ctx, s.n_gpu_layers, s.flash_attn, s.cache_type_k) == \
        ("llama.cpp", "x.gguf", 16384, 20, "on", "q8_0")
    assert (s.n_cpu_moe, s.tensor_split, s.n_parallel, s.kv_unified, s.swa_full, s.mmap) == \
        (4, (3.0, 1.0), 2, True, True, False)
    assert s.override_tensor == (("exps", "CPU"),)
    with pytest.raises(OomkitError, match="--bogus"):
        parse_command(["llama-server", "-m", "x.gguf", "--bogus"])


def test_ngl_words_and_load_mode():
    from oomkit.engines.llamacpp import parse_args

    assert parse_args(["-ngl", "auto"])[2].n_gpu_layers == -1
    assert parse_args(["-ngl", "all"])[2].n_gpu_layers == 10**6
    assert parse_args(["-ngl", "0"])[2].n_gpu_layers == 0
    assert parse_args(["--load-mode", "none"])[2].mmap is False and parse_args(["-lm", "mmap"])[2].mmap is True
    assert parse_args(["-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"])[:2] == ("unsloth/Qwen3-8B-GGUF", "Q4_K_M")
