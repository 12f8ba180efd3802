"""The moves `oomkit fit` and `plan` may make for SGLang without costing context, in the order SGLang's own CUDA-graph
capture failure lists them (python/sglang/srt/model_executor/cuda_graph_runner.py, 0.4-0.5: "1. set
--mem-fraction-static to a smaller value (e.g., 0.8 or 0.7) 2. set --cuda-graph-max-bs to a smaller value (e.g.,
16) ... 4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)")."""

from __future__ import annotations

from oomkit.engines.sglang import SGLangSettings
from oomkit.engines.sglang.knobs import relief
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)


def test_the_order_follows_sglangs_capture_failure():
    moves = list(relief(SGLangSettings(mem_fraction_static=0.95), {"cuda_graph_max_bs": 512}))
    fields = [f for f, _, _ in moves]
    assert fields == ["mem_fraction_static"] * 4 + ["cuda_graph_max_bs"] * 5 + ["disable_cuda_graph"], moves
    assert [v for f, v, _ in moves if f == "mem_fraction_static"] == [0.94, 0.93, 0.92, 0.9]
    assert [v for f, v, _ in moves if f == "cuda_graph_max_bs"] == [256, 128, 64, 32, 16]


def test_a_default_fraction_is_raised_first_and_lowered_from_what_sglang_picks():
    moves = list(relief(SGLangSettings(), {"mem_fraction_static": 0.85, "cuda_graph_max_bs": 24}))
    assert moves[0][:2] == ("mem_fraction_static", 0.9)
    assert [v for f, v, _ in moves[1:] if f == "mem_fraction_static"] == [0.84, 0.83, 0.82, 0.8]
    # 24 halves to 12, below the 16 SGLang's message gives as its example: no smaller capture is offered
    assert [f for f, _, _ in moves][-1] == "disable_cuda_graph" and "cuda_graph_max_bs" not in [f for f, _, _ in moves]


def test_srt_slurm_172_fit_lowers_the_typed_fraction_instead_of_no_graphs():
    """NVIDIA/srt-slurm#172: DeepSeek-R1 FP4 at TP 4 on GB200 with --mem-fraction-static 0.95 and --enable-symm-mem
    died allocating the 4 GiB symmetric pool after the CUDA graphs (tests/test_fit_outcomes2.py). fit lowers the
    fraction the command types, SGLang's first listed move and the reporter's fix (a typed fraction is a ceiling:
    plan/fit.py _within_typed_budget), and keeps the CUDA graphs (was: --cuda-graph-max-bs 256; before that
    --disable-cuda-graph)."""
    rc, out, err = run_cli("fit", "--gpu", "4x GB200", "--engine-version", "0.5.11", "--", "python", "-m",
                           "sglang.launch_server", "--model-path", "nvidia/DeepSeek-R1-FP4", "--tp", "4",
                           "--mem-fraction-static", "0.95", "--moe-runner-backend", "flashinfer_trtllm",
                           "--fp4-gemm-backend", "flashinfer_trtllm", "--enable-symm-mem")
    assert rc == 0, err
    assert "mem_fraction_static: 0.95 -> 0.94" in out and "--disable-cuda-graph" not in out, out
    assert "--cuda-graph-max-bs" not in out.rstrip().splitlines()[-1], out
    assert "--mem-fraction-static 0.94 " in out.rstrip().splitlines()[-1], out
