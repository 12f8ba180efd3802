"""The decode batch sizes SGLang captures CUDA graphs for, by release (phases.py capture_bs, settings.py
capacity_defaults), against the lists its published logs print (tests/fixtures/engine_logs/sglang/, each with its URL)
and the rules of cuda_graph_runner.py get_batch_sizes_to_capture / server_args.py as each wheel has them (0.4.0 to
0.5.10, 0.5.14, 0.5.18, 0.5.23 read). The expected lists below are written out from the source, not from oomkit."""

from __future__ import annotations

import re

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.phases import capture_alignment, capture_bs, cuda_graph_parts, prefill_graph_bytes
from oomkit.engines.sglang.settings import capacity_defaults, parse_version
from oomkit.hardware.catalog import devices_for_names
from oomkit.units import MiB
from tests.sglang_cases import load

# nvidia-smi memory.total (MiB) as get_device_memory_capacity reads it: the catalog's figures
H100, H200, B200, GH200, L4, MI300X, RTX3090, L40S = 81559, 143771, 183359, 97871, 23034, 196592, 24576, 46068

# 0.4.x: 1, 2, 4, 8..160 step 8 (23 sizes); 0.5.3+: with 12, then 16..256 step 8, 272..496 step 16, 512.. step 32
TO_160 = [1, 2, 4] + list(range(8, 161, 8))
TO_256_05 = [1, 2, 4, 8, 12] + list(range(16, 257, 8))
TO_512_05 = TO_256_05 + list(range(272, 512, 16)) + [512]


def _printed(fixture: str) -> list[int]:
    line = next(x for x in load(fixture)["quoted"].split("\n") if re.search(r"Capture cuda graph bs \[", x))
    return [int(x) for x in re.search(r"bs \[([^\]]*)\]", line).group(1).split(",")]


def _default_bs(gpu_mib: int | None, version: str, **kw) -> int:
    s = sg.SGLangSettings(engine_version=version, **kw)
    return capacity_defaults(gpu_mib, s, parse_version(version))[1]


# ---------------------------------------------------------------------------------------------------------
# The printed lists: the default cuda_graph_max_bs for the log's GPU, TP and release, then the list


@pytest.mark.parametrize(("fixture", "version", "gpu_mib", "kw", "pool"), [
    # sglang#11716 (main of 2025-10-16, 0.5.3/0.5.4 rules), H200 at TP8: the default 512 (tp >= 4)
    ("llama-3.1-70b-tp8-h200-pr11716", "0.5.4", H200, {"tp_size": 8}, None),
    # sglang#13666 (0.5.5 rules), B200: 512
    ("olmo-3-32b-think-b200-mfs08-pr13666", "0.5.5", B200, {"mem_fraction_static": 0.8}, None),
    # sglang#11830 (main of 2025-11-30), B200: 512
    ("unnamed-qwen2-7b-b200-capture-pr11830", "0.5.5", B200, {}, None),
    # gpustack#4424 (0.5.8 on ROCm), MI300X: 512, --max-running-requests 4096
    ("qwen3-0.6b-mi300x-rocm-capture-gpustack4424", "0.5.8", MI300X, {"max_running_requests": 4096}, 4096),
    # ktransformers on an RTX 3090 (0.5.8 rules): the < 35 GiB class at tp < 4, 24 (0.5.5+)
    ("qwen3-30b-a3b-ktransformers-3090", "0.5.8", RTX3090, {}, None),
    # a 48 GB-class card, May 2025 (~0.4.6): cuda_graph_max_bs left None, the list's end below 81,920 MiB: 160
    ("qwen3-14b-single-48gb", "0.4.6", L40S, {}, None),
    # servekit, Apertus-8B TP4 on GH200 (0.5.10): --cuda-graph-max-bs 512 kept to the pool's 256 rows
    ("apertus-8b-tp4-gh200-servekit", "0.5.10", GH200, {"tp_size": 4, "cuda_graph_max_bs": 512}, 256),
])
def test_printed_capture_lists(fixture, version, gpu_mib, kw, pool):
    v = parse_version(version)
    s = sg.SGLangSettings(engine_version=version, **kw)
    max_bs = capacity_defaults(gpu_mib, s, v)[1]
    assert list(capture_bs(max_bs, v, pool, s=s, gpu_mib=gpu_mib)) == _printed(fixture)


def test_printed_capture_counts():
    # qwq-32b-tp4-4xl4-capture-bs80 (0.4.3.post4, 4x L4): "13/13"; gemma-3-4b-it-vlm-h200-pr4826 (0.4.4 rules, an
    # H200): "0/23", the list ending at 160 although the GPU holds 141 GB (the GPU-memory rule came in 0.4.5.post3)
    qwq = sg.SGLangSettings(tp_size=4, engine_version="0.4.3.post4")
    assert "| 13/13 [" in load("qwq-32b-tp4-4xl4-capture-bs80")["quoted"]
    assert len(capture_bs(_default_bs(L4, "0.4.3.post4", tp_size=4), (0, 4, 3, 4), s=qwq, gpu_mib=L4)) == 13
    assert "| 0/23 [" in load("gemma-3-4b-it-vlm-h200-pr4826")["quoted"]
    bs = _default_bs(H200, "0.4.4.post1")
    assert bs == 160 and len(capture_bs(bs, (0, 4, 4, 1), gpu_mib=H200)) == 23
    # the same H200 from 0.4.6 (dp_size 1): 160..256 step 8 join, 36 sizes
    assert list(capture_bs(_default_bs(H200, "0.4.6"), (0, 4, 6), gpu_mib=H200)) == TO_160 + list(range(168, 257, 8))


def test_full_estimate_prints_the_logged_list():
    # the estimate's own list (engine_view cuda_graph_bs, "Capture cuda graph bs [...]"), Olmo 3 on a B200 (0.5.5)
    from tests.sglang_cases import olmo3_32b

    est = sg.ENGINE.estimate(olmo3_32b(), devices_for_names("B200"),
                             sg.SGLangSettings(mem_fraction_static=0.8, engine_version="0.5.5"))
    assert est.engine_view["cuda_graph_bs"] == _printed("olmo-3-32b-think-b200-mfs08-pr13666")
    assert f"Capture cuda graph bs {TO_512_05}" in est.engine_view["log"]


# ---------------------------------------------------------------------------------------------------------
# The rules by release (written out from each wheel's source)


def test_0_4_lists_stop_at_160_on_cuda_whatever_max_bs():
    # 0.4.3.post4 get_batch_sizes_to_capture: [1, 2, 4] + [i * 8 for i in range(1, 21)], then `bs <= cuda_graph_max_bs`:
    # --cuda-graph-max-bs 256 still stops at 160 on CUDA; ROCm (is_hip) adds 168..256
    assert list(capture_bs(256, (0, 4, 3, 4), gpu_mib=H100)) == TO_160
    assert list(capture_bs(256, (0, 4, 3, 4), hip=True)) == TO_160 + list(range(168, 257, 8))
    # 0.4.5.post3: above 81,920 MiB the list runs to 256 (an H100's 81,559 MiB does not)
    assert list(capture_bs(256, (0, 4, 5, 3), gpu_mib=H100)) == TO_160
    assert list(capture_bs(256, (0, 4, 5, 3), gpu_mib=H200))[-1] == 256
    # 0.4.6-0.4.6.post1 only at dp_size 1; 0.4.6.post2 any dp_size, above 96 GiB (a GH200's 97,871 MiB is below)
    dp2 = sg.SGLangSettings(dp_size=2)
    assert capture_bs(256, (0, 4, 6), gpu_mib=H200, s=dp2)[-1] == 160
    assert capture_bs(256, (0, 4, 6, 2), gpu_mib=H200, s=dp2)[-1] == 256
    assert capture_bs(256, (0, 4, 6, 2), gpu_mib=GH200)[-1] == 160
    assert capture_bs(256, (0, 4, 8), gpu_mib=GH200)[-1] == 256  # 0.4.8: above 90 GiB


def test_max_bs_past_the_list_extends_it_by_16_from_0_4_6_post5():
    # 0.4.6.post5-0.5.2: `if max(capture_bs) < cuda_graph_max_bs: capture_bs += range(max, cuda_graph_max_bs + 1, 16)`
    assert list(capture_bs(512, (0, 4, 6, 5), gpu_mib=H100)) == TO_160 + list(range(176, 513, 16))
    assert list(capture_bs(300, (0, 5, 2), gpu_mib=H200)) == TO_160 + list(range(168, 257, 8)) + [272, 288]
    # 0.4.8 on a B200 with cuda_graph_max_bs left None: 160..256 step 8 and 256..512 step 16, 52 sizes
    top = _default_bs(B200, "0.4.8")
    assert top == 512
    assert list(capture_bs(top, (0, 4, 8), gpu_mib=B200)) == TO_160 + list(range(168, 257, 8)) + list(
        range(272, 513, 16))
    # 0.4.7: 256..512 only above 180,000 MiB (a B200's 183,359); 0.4.5 sets 160 itself
    assert _default_bs(B200, "0.4.7") == 512 and _default_bs(H200, "0.4.7") == 256
    assert _default_bs(H200, "0.4.5") == 160


def test_0_5_lists_are_built_from_max_bs():
    # 0.5.3+ server_args.py _generate_cuda_graph_batch_sizes: 512.. step 32; 0.5.10 appends max_bs itself
    assert list(capture_bs(600, (0, 5, 6))) == TO_512_05 + [544, 576]
    assert list(capture_bs(600, (0, 5, 10))) == TO_512_05 + [544, 576, 600]
    assert list(capture_bs(100, (0, 5, 10))) == [x for x in TO_256_05 if x <= 100] + [100]
    assert list(capture_bs(100, (0, 5, 9))) == [x for x in TO_256_05 if x <= 100]
    # speculative decoding: 1..8, 10..32 step 2, 40..64 step 4 (0.5.5; 60 before), 72..256 step 8
    spec = sg.SGLangSettings(speculative_algorithm="EAGLE")
    assert capture_bs(72, (0, 5, 5), s=spec) == tuple(
        list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + [72])
    assert 64 not in capture_bs(72, (0, 5, 4), s=spec)
    # --disable-cuda-graph-padding: every size
    assert capture_bs(20, (0, 5, 10), s=sg.SGLangSettings(disable_cuda_graph_padding=True)) == tuple(range(1, 21))


def test_given_list():
    # --cuda-graph-bs (0.4.2+): the list as given; from 0.5.3 cuda_graph_max_bs = max(cuda_graph_bs)
    s = sg.SGLangSettings(cuda_graph_bs=(1, 3, 48, 200), engine_version="0.5.10")
    assert _default_bs(H100, "0.5.10", cuda_graph_bs=(1, 3, 48, 200)) == 200
    assert capture_bs(200, (0, 5, 10), s=s) == (1, 3, 48, 200)
    # up to 0.5.2 cuda_graph_max_bs still filters it (160 set by 0.4.5 on this GPU)
    old = sg.SGLangSettings(cuda_graph_bs=(1, 3, 48, 200), engine_version="0.4.5")
    assert capture_bs(_default_bs(H200, "0.4.5"), (0, 4, 5), s=old, gpu_mib=H200) == (1, 3, 48)


def test_dp_attention_aligns_sizes_to_the_attention_tp_size():
    # 0.4.10+: mul_base = attn_tp_size (tp / dp) where require_gathered_buffer (DP attention, moe_dense_tp_size None)
    tp8dp2 = sg.SGLangSettings(tp_size=8, dp_size=2, enable_dp_attention=True)
    assert capture_alignment(tp8dp2, (0, 4, 10)) == 4
    assert list(capture_bs(64, (0, 5, 10), s=tp8dp2)) == [4, 8, 12, 16, 24, 32, 40, 48, 56, 64]
    assert list(capture_bs(64, (0, 4, 9), s=tp8dp2)) == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]  # not before
    # DP 8 of TP 8: one attention rank each, no alignment
    assert capture_alignment(sg.SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True), (0, 5, 10)) == 1
    # two-batch overlap: >= 2 (0.4.7), even (0.4.9), x 2 on the attention-TP alignment (0.4.10+)
    tbo = sg.SGLangSettings(enable_two_batch_overlap=True)
    assert capture_bs(8, (0, 4, 7), s=tbo) == (2, 4, 8)
    assert capture_bs(12, (0, 5, 10), s=tbo) == (2, 4, 8, 12)
    assert capture_bs(32, (0, 5, 10), s=sg.SGLangSettings(tp_size=8, dp_size=2, enable_dp_attention=True,
                                                          enable_two_batch_overlap=True)) == (8, 16, 24, 32)
    # speculative decoding (0.5.8+): bs x num_tokens_per_bs must be the multiple; 4 draft tokens pass every size
    spec = sg.SGLangSettings(tp_size=8, dp_size=2, enable_dp_attention=True, speculative_algorithm="EAGLE",
                             speculative_num_draft_tokens=4)
    assert capture_bs(12, (0, 5, 8), s=spec) == tuple(range(1, 9)) + (10, 12)
    assert capture_bs(12, (0, 5, 7), s=spec) == (4, 8, 12)
    # 0.5.10: the pool's size is rounded up to the alignment before it joins the list (30 rows -> 32)
    assert capture_bs(64, (0, 5, 10), 30, s=tp8dp2)[-2:] == (24, 32)
    assert capture_bs(64, (0, 5, 9), 30, s=tp8dp2)[-1] == 24


def test_small_gpu_and_dp_attention_defaults():
    # 0.4.8 moved the small-GPU line from 25,000 MiB to 35 GiB: a 30 GiB card gets 8 and 2,048 from 0.4.8
    v047, v048 = parse_version("0.4.7"), parse_version("0.4.8")
    assert capacity_defaults(30 * 1024, sg.SGLangSettings(), v047) == (8192, 160)
    assert capacity_defaults(30 * 1024, sg.SGLangSettings(), v048) == (2048, 8)
    # chunked_prefill_size 16,384: above 180,000 MiB in 0.4.7, from 160 GiB in 0.4.8 (8,192 before)
    assert capacity_defaults(B200, sg.SGLangSettings(), v047)[0] == 16384
    assert capacity_defaults(B200, sg.SGLangSettings(), parse_version("0.4.6.post5"))[0] == 8192
    # 0.4.0: 8 on small GPUs at any TP, and at most 96 under --enable-dp-attention
    v040 = parse_version("0.4.0")
    assert capacity_defaults(L4, sg.SGLangSettings(tp_size=4), v040)[1] == 8
    assert capacity_defaults(H100, sg.SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True), v040)[1] == 96


def test_the_estimate_costs_the_longer_list():
    # Qwen3-8B on an H200 at 0.5.2 (cuda_graph_max_bs left None): 36 sizes to 256, so one (256, vocab) logits buffer
    # and a 256-row index table, not 160
    from oomkit.model.catalog import lookup
    from oomkit.model.hf_config import spec_from_config

    spec = spec_from_config(lookup("qwen3-8b").config, name="Qwen3-8B")
    view = sg.ENGINE.estimate(spec, devices_for_names("H200"),
                              sg.SGLangSettings(context_length=8192, engine_version="0.5.2")).engine_view
    assert view["cuda_graph_bs"] == TO_160 + list(range(168, 257, 8))
    assert view["cuda_graph_parts_bytes"]["logits"] == 256 * spec.n_vocab * 4
    parts = cuda_graph_parts(160, sg.SGLangSettings(), (0, 5, 2), spec.n_vocab, 8192, 1, layers=36, gpu_mib=H100)
    assert parts.logits == 160 * spec.n_vocab * 4
    assert H200 == devices_for_names("H200")[0].memory_bytes // MiB


def test_breakable_prefill_graphs_add_their_output_buffer():
    # 0.5.18 breakable_cuda_graph_backend.py capture_one: one shared output buffer of the largest size's rows
    # (num_tokens x hidden, bf16) beside the segments, allocated once; 0.5.14 (tc_piecewise) has none. From 0.5.15 the
    # decode graphs' float32 logits buffer (largest decode size x vocab) is allocated in this window too
    # (prefill_cuda_graph_runner.py capture_prepare; tests/test_sglang_capture_reuse.py)
    from oomkit.model.catalog import lookup
    from oomkit.model.hf_config import spec_from_config

    spec = spec_from_config(lookup("qwen3-8b").config, name="Qwen3-8B")

    def view(version):
        s = sg.SGLangSettings(context_length=8192, chunked_prefill_size=8192, engine_version=version)
        return sg.ENGINE.estimate(spec, devices_for_names("H100"), s).engine_view

    old, new = view("0.5.14"), view("0.5.18")
    assert old["prefill_cuda_graph_tokens"] == new["prefill_cuda_graph_tokens"]
    assert max(new["prefill_cuda_graph_tokens"]) == 8192
    sizes = tuple(new["prefill_cuda_graph_tokens"])
    segments = prefill_graph_bytes(sizes, 4096, breakable=True)  # the segments keep vLLM's coefficients
    logits = max(new["cuda_graph_bs"]) * spec.n_vocab * 4
    assert new["prefill_cuda_graph_bytes"] - segments == 8192 * 4096 * 2 + logits
    assert old["prefill_cuda_graph_bytes"] == prefill_graph_bytes(sizes, 4096)  # the 0.5.10 pieces' refit


def test_prefill_graph_sizes_follow_the_chunk():
    # the largest prefill graph: --chunked-prefill-size; an MLA backend 2,048 (server_args.py 0.5.10-0.5.18), then
    # min(8,192, chunk) (0.5.23 arg_groups/memory_hook.py); a model path naming llama-2 at most 4,096
    from oomkit.engines.sglang.phases import prefill_graph_tokens

    def top(version, mla=False, cps=16384, **kw):
        s = sg.SGLangSettings(**kw)
        return max(prefill_graph_tokens(s, parse_version(version), chunked_prefill_size=cps, mla=mla,
                                        multimodal=False, hip=False, disabled_arch=False))

    assert top("0.5.18", mla=True) == 2048 and top("0.5.23", mla=True) == 8192
    assert top("0.5.23", mla=True, cps=4096) == 4096
    assert top("0.5.10") == 16384 and top("0.5.10", max_total_tokens=6000) == 5632
    assert top("0.5.10", model_path="meta-llama/Llama-2-7b-hf") == 4096


def test_capture_lines_in_the_releases_words():
    # qwq-32b-tp4-4xl4-capture-bs80 (0.4.3.post4): "Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB.
    # mem usage=0.93 GB." (avail first, no bs line); 0.4.6.post2+ print the bs list and mem usage first; 0.4.2 neither
    from tests.sglang_cases import qwq_32b

    quoted = load("qwq-32b-tp4-4xl4-capture-bs80")["quoted"]
    assert re.search(r"Capture cuda graph end\. Time elapsed: [\d.]+ s\. avail mem=[\d.]+ GB\. mem usage=[\d.]+ GB\.",
                     quoted) and "Capture cuda graph bs" not in quoted

    def log(version):
        s = sg.SGLangSettings(tp_size=4, chunked_prefill_size=2048, engine_version=version)
        return sg.ENGINE.estimate(qwq_32b(), devices_for_names("L4") * 4, s).engine_view["log"]

    old = log("0.4.3.post4")
    assert re.search(r"Capture cuda graph end\. Time elapsed: N s\. avail mem=\d+\.\d\d GB\. mem usage=\d+\.\d\d GB\.",
                     old) and "Capture cuda graph bs" not in old
    new = log("0.4.6.post2")
    assert "Capture cuda graph bs [1, 2, 4, 8, 16," in new and re.search(r"mem usage=\d+\.\d\d GB\. avail mem=", new)
    assert re.search(r"Capture cuda graph begin\. This can take up to several minutes\.\nCapture cuda graph end\. "
                     r"Time elapsed: N s\n", log("0.4.2"))


def test_reserve_counts_the_prefill_sizes_captured():
    # server_args.py 0.5.10: reserved_mem += len(piecewise_cuda_graph_tokens) * 8, the list after its caps: 58 sizes to
    # 8,192, 50 to Llama 2's 4,096
    from oomkit.engines.sglang.settings import default_mem_fraction_static

    def n(**kw):
        return default_mem_fraction_static(H100, sg.SGLangSettings(engine_version="0.5.10", **kw)).prefill_graph_sizes

    assert n() == 58 and n(model_path="meta-llama/Llama-2-13b-chat-hf") == 50


def test_target_verify_graphs_hold_draft_token_rows_of_logits():
    # cuda_graph_runner.py (0.4.10, 0.5.10): max_num_token = max_bs x speculative_num_draft_tokens rows of float32
    # logits in next_token_logits_buffer; the speculative list to 48 ends 1..8, 10..32 step 2, 40, 44, 48
    spec = sg.SGLangSettings(speculative_algorithm="EAGLE", speculative_num_draft_tokens=4)
    parts = cuda_graph_parts(48, spec, (0, 5, 10), 151936, 8192, 1, layers=28)
    assert capture_bs(48, (0, 5, 10), s=spec)[-3:] == (40, 44, 48)
    assert parts.logits == 48 * 4 * 151936 * 4
