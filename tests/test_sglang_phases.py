"""SGLang's start-up phases, the lines it prints for them, and its per-token figures, against the published logs in
tests/fixtures/engine_logs/sglang/ (each cites its URL) and hand-worked pool arithmetic."""

from __future__ import annotations

import re

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.phases import capture_bs
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import GiB, MiB
from tests.sglang_cases import load, qwen3_14b

H100 = with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB))


def _lines(fixture: str, pattern: str) -> list[str]:
    return [line for line in load(fixture)["quoted"].split("\n") if re.search(pattern, line)]


def test_capture_batch_sizes_are_the_logged_lists():
    # qwen3-14b-single-48gb (0.4.6, cuda_graph_max_bs 160) and qwen3-30b-a3b-ktransformers-3090 (0.5.x, 24)
    for fixture, version, max_bs in (("qwen3-14b-single-48gb", (0, 4, 6), 160),
                                     ("qwen3-30b-a3b-ktransformers-3090", (0, 5, 8), 24)):
        logged = _lines(fixture, r"Capture cuda graph bs \[")[0]
        sizes = [int(x) for x in re.search(r"bs \[([^\]]*)\]", logged).group(1).split(",")]
        assert list(capture_bs(max_bs, version)) == sizes


def test_printed_lines_have_sglangs_shape():
    est = sg.ENGINE.estimate(qwen3_14b(), (H100,), sg.SGLangSettings(engine_version="0.4.6.post5"))
    log = est.engine_view["log"].split("\n")
    shapes = {
        r"Load weight begin\. avail mem=\d+\.\d\d GB": None,
        r"Load weight end\. type=.*, dtype=torch\.bfloat16, avail mem=\d+\.\d\d GB, mem usage=\d+\.\d\d GB\.":
            ("qwen3-14b-single-48gb", r"Load weight end"),
        r"KV Cache is allocated\. #tokens: \d+, K size: \d+\.\d\d GB, V size: \d+\.\d\d GB":
            ("qwen3-14b-single-48gb", r"KV Cache is allocated"),
        r"Memory pool end\. avail mem=\d+\.\d\d GB": ("qwen3-14b-single-48gb", r"Memory pool end"),
        r"Capture cuda graph begin\. This can take up to several minutes\. avail mem=\d+\.\d\d GB":
            ("qwen3-14b-single-48gb", r"Capture cuda graph begin"),
        r"Capture cuda graph end\. Time elapsed: N s\. mem usage=\d+\.\d\d GB\. avail mem=\d+\.\d\d GB\.": None,
        r"max_total_num_tokens=\d+, chunked_prefill_size=\d+, max_prefill_tokens=\d+, max_running_requests=\d+, "
        r"context_len=\d+, available_gpu_mem=\d+\.\d\d GB": ("qwen3.5-moe-ktransformers-2x4090-tp2-hybrid",
                                                            r"max_total_num_tokens="),
    }
    for shape, real in shapes.items():
        assert any(re.fullmatch(shape, line) for line in log), shape
        if real is not None:  # the same shape matches the engine's own line in a published log
            assert any(re.search(shape, line) for line in _lines(*real)), (shape, real)


def test_phases_and_the_budget():
    est = sg.ENGINE.estimate(qwen3_14b(), (H100,), sg.SGLangSettings(engine_version="0.5.23"))
    by = {p["phase"]: p for p in est.engine_view["phases"]}
    assert by["weights"]["in_budget"] and by["KV cache pool"]["in_budget"]
    assert not by["req_to_token pool"]["in_budget"] and not by["CUDA graph capture"]["in_budget"]
    assert by["CUDA graph capture"]["free_after_bytes"] > 0
    eager = sg.ENGINE.estimate(qwen3_14b(), (H100,), sg.SGLangSettings(engine_version="0.5.23",
                                                                        disable_cuda_graph=True))
    assert {p["phase"]: p for p in eager.engine_view["phases"]}["CUDA graph capture"]["bytes"] == 0


def test_kv_bytes_per_token_gives_max_total_num_tokens():
    # gpt-oss-20b (hybrid SWA in SGLang): one token of max_total_num_tokens takes the 12 full layers plus
    # swa_full_tokens_ratio (0.8) x the 12 sliding ones: 8 KV heads x 64 x (K, V) x 2 B per layer
    entry = lookup("gpt-oss-20b")
    spec = spec_from_config(entry.config, name=entry.name)
    est = sg.ENGINE.estimate(spec, (H100,), sg.SGLangSettings(kv_cache_memory_bytes=10 * GiB, context_length=8192))
    per_layer = 8 * 64 * 2 * 2
    assert est.kv_bytes_per_token == round(12 * per_layer + 0.8 * 12 * per_layer)
    assert est.kv_bytes_per_token_marginal == 12 * per_layer
    tokens = est.engine_view["max_total_num_tokens"]
    assert abs(10 * GiB / est.kv_bytes_per_token - tokens) <= 1
    # Gemma 3 is no hybrid-SWA architecture to SGLang: every layer in the full pool, charge = marginal
    g = lookup("gemma-3-27b-it")
    gest = sg.ENGINE.estimate(spec_from_config(g.config, name=g.name), (H100,),
                              sg.SGLangSettings(kv_cache_memory_bytes=10 * GiB, context_length=8192))
    assert gest.kv_bytes_per_token == gest.kv_bytes_per_token_marginal == 62 * 16 * 128 * 2 * 2


def test_pipeline_stages_charge_their_own_layers():
    # PP2: each stage holds half the layers, so a token costs the whole model once (not once per stage)
    one = sg.ENGINE.estimate(qwen3_14b(), (H100,), sg.SGLangSettings(kv_cache_memory_bytes=10 * GiB))
    pp2 = sg.ENGINE.estimate(qwen3_14b(), (H100, H100), sg.SGLangSettings(kv_cache_memory_bytes=10 * GiB, pp_size=2))
    assert one.kv_bytes_per_token == pp2.kv_bytes_per_token == 40 * 8 * 128 * 2 * 2


def test_capture_past_the_pool_is_a_death_after_the_kv_cache():
    # --mem-fraction-static 0.99 on a 24 GB card leaves about 0.23 GiB after the pool: the capture of 36 sizes (about
    # 0.84 GiB) cannot fit, so the run starts, allocates its pool and dies; 0.88 leaves room
    gpu = with_facts(Device("CUDA0", "NVIDIA GeForce RTX 4090", 24564 * MiB))
    spec = spec_from_config(lookup("qwen3-8b").config, name="Qwen3-8B")
    tight = sg.ENGINE.estimate(spec, (gpu,), sg.SGLangSettings(mem_fraction_static=0.99, context_length=8192,
                                                               cuda_graph_max_bs=256))
    assert tight.fits is False
    v = tight.engine_view
    assert v["failed_phase"]["phase"] == "CUDA graph capture"
    assert v["error"].startswith("KV pool allocated, then CUDA-graph capture needs ")
    fix = float(v["error"].split("lower --mem-fraction-static to ")[1].split(",")[0])
    fixed = sg.ENGINE.estimate(spec, (gpu,), sg.SGLangSettings(mem_fraction_static=fix, context_length=8192,
                                                               cuda_graph_max_bs=256))
    assert fixed.fits is True  # the fraction it names does start
    ok = sg.ENGINE.estimate(spec, (gpu,), sg.SGLangSettings(mem_fraction_static=0.88, context_length=8192))
    assert ok.fits is True and "failed_phase" not in ok.engine_view


def _olmo3_estimate():
    from oomkit.hardware.catalog import devices_for_names
    from tests.sglang_cases import olmo3_32b

    s = sg.SGLangSettings(mem_fraction_static=0.8, attention_backend="trtllm_mha", engine_version="0.5.5")
    return sg.ENGINE.estimate(olmo3_32b(), devices_for_names("B200"), s)


def test_olmo3_on_a_b200_starts_as_its_log_does():
    # sglang#13666: the pool is allocated and "Capture cuda graph end ... avail mem=25.09 GB" is printed: it started
    est = _olmo3_estimate()
    assert est.fits is True and "failed_phase" not in est.engine_view


@pytest.mark.xfail(strict=True, reason="CUDA-graph capture of Olmo-3-32B on a B200 (sglang#13666, held out): 8.60 GiB "
                                       "printed for 52 sizes to 512; oomkit gives 0.87 GiB (-90%): one shared "
                                       "512 x 100,278 float32 logits buffer (0.19), trtllm_mha's page table and the "
                                       "constant rest (0.68). The 7.7 GiB left is about 2 x sum(sizes) x vocab x 4 B, "
                                       "as if that build kept per-graph logits. Not from the source read: "
                                       "server_args.py picks trtllm_mha for Olmo2ForCausalLM on sm100, whose "
                                       "init_cuda_graph_state holds one (max_bs, pages) int32 table and whose "
                                       "per-size capture metadata are slices of it (no per-size FlashInfer "
                                       "wrapper, so flashinfer#2046's 72 MB a wrapper does not apply)")
def test_olmo3_capture_memory():
    est = _olmo3_estimate()
    by = {p["phase"]: p for p in est.engine_view["phases"]}
    printed = float(load("olmo-3-32b-think-b200-mfs08-pr13666")["printed"]["capture_end_mem_usage_gb"]) * GiB
    assert abs(by["CUDA graph capture"]["bytes"] - printed) / printed <= 0.2


def test_capture_logits_and_index_tables_by_release():
    # 0.4.6, sizes to 160 (1, 2, 4, 8, 16..160 step 8: 15 + 1,672 = 1,687 rows): every graph keeps its float32 logits;
    # 0.4.10+: one (160, vocab) buffer (cuda_graph_runner.py next_token_logits_buffer, PR #8579)
    from oomkit.engines.sglang.phases import cuda_graph_parts

    vocab, ctx = 151936, 40960
    old = cuda_graph_parts(160, sg.SGLangSettings(), (0, 4, 6), vocab, ctx, 1)
    new = cuda_graph_parts(160, sg.SGLangSettings(), (0, 4, 10), vocab, ctx, 1)
    assert old.logits == 1687 * vocab * 4 and new.logits == 160 * vocab * 4
    # the backend's int32 index table, 160 rows x 40,960 slots; FA3 before #8567 adds a copy per captured size
    assert old.index_tables == new.index_tables == 160 * 40960 * 4
    fa3 = cuda_graph_parts(160, sg.SGLangSettings(attention_backend="fa3"), (0, 4, 6), vocab, ctx, 1)
    assert fa3.index_tables == (160 + 1687) * 40960 * 4
    # trtllm_mha's pages of 64
    assert cuda_graph_parts(160, sg.SGLangSettings(), (0, 5, 5), vocab, ctx, 64).index_tables == 160 * 640 * 4
    off = cuda_graph_parts(160, sg.SGLangSettings(disable_cuda_graph=True), (0, 5, 5), vocab, ctx, 1)
    assert off.total == 0


def test_qwen3_06b_rocm_capture_memory():
    from oomkit.engines.sglang.phases import cuda_graph_bytes

    d = load("qwen3-0.6b-mi300x-rocm-capture-gpustack4424")
    # held out: the 52 sizes to 512 on ROCm take 0.96 GiB; one (512, 151,936) float32 logits buffer, a 512 x 40,960
    # int32 index table and the constant rest (fitted on a 7B and GLM-4.5-Air TP4) give 1.05 GiB, +9%
    pred = cuda_graph_bytes(512, sg.SGLangSettings(), (0, 5, 8), 151936, 40960, 1)
    printed = d["printed"]["capture_end_mem_usage_bytes"]
    assert abs(pred - printed) / printed <= 0.10


def test_flashinfer_builds_decode_wrappers_per_captured_size():
    # 0.5.x sizes to 160: 1, 2, 4, 8, 12 and 16..160 step 8 = 24 graphs, each with a new decode wrapper holding an
    # 8 MiB int workspace; sliding-window models use two wrappers, each with its own index table
    from oomkit.engines.sglang.phases import cuda_graph_parts

    s = sg.SGLangSettings(attention_backend="flashinfer")
    one = cuda_graph_parts(160, s, (0, 5, 5), 151936, 40960, 1)
    assert one.index_tables == 160 * 40960 * 4 + 24 * 8 * MiB
    two = cuda_graph_parts(160, s, (0, 5, 5), 151936, 40960, 1, sliding=True)
    assert two.index_tables == 2 * one.index_tables
