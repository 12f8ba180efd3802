"""Held-out SGLang start-up logs, fifth set (tests/fixtures/engine_logs/sglang/heldout5/, each with its URL, the lines
kept verbatim and the release read from the log or its date). No constant in oomkit was fitted on any of them; the
figures below are the logs', never oomkit's. "before" is oomkit at the commit before the rules below, "after" with
them.

| log | release | GPUs | model | figure | printed | before | after |
|---|---|---|---|---|---|---|---|
| sglang#10407 | 0.5.2 era | 4 x H20 (inferred), TP4 | Qwen3-Next-80B-A3B (hybrid GDN) | K / V size at 2,896,645 tokens | 16.57 GB | 16.57 GiB | same |
| | | | | tokens at the 0.5.2 defaults | 2,896,645 | refused ("give --max-mamba-cache-size") | 2,891,728 (-0.17 %) |
| | | | | free memory at "Memory pool end" | 13.12 GB | refused | 13.41 GiB (+0.3 % of the GPU) |
| sglang#8336 | 0.4.9.x | 2 x 46,068 MiB class, TP2 | Qwen3-32B (inferred) | weights per rank | 30.59 GB | 30.51 GiB (-0.3 %) | same |
| | | | | free after the weights, end to end | 13.47 GB | 13.55 GiB (+0.2 % of the GPU) | same |
| | | | | K / V size at 42,632 tokens | 2.60 GB | 2.60 GiB | same |
| sglang#5576 | 0.4.5.post1 era | one 16 GB GPU | gemma-3-12b-it (multimodal) | verdict | does not start | does not start | same |
| | | | | the phase that fails | load_model (CUDA OOM) | none (a "Not enough memory" pool refusal) | weights |
| docs CI 2025-06-17 | main after 0.4.7.post1 | H100 80GB | DeepSeek-R1-Distill-Qwen-7B | default mem_fraction_static | 0.874 | 0.880 | 0.874 |
| | | | | K / V size at 20,480 tokens | 0.55 GB | 0.55 GiB | same |
| docs CI 2025-06-17 | main after 0.4.7.post1 | H100 80GB | Llama-2-7b-chat + EAGLE draft | default mem_fraction_static | 0.849 | 0.880 | 0.849 |
| | | | | target K / V size at 20,480 tokens | 5.00 GB | 5.00 GiB | same |
| docs CI 2025-06-17 | main after 0.4.7.post1 | H100 80GB | Qwen2.5-VL-7B-Instruct | fraction after ModelRunner's multimodal cut | 0.787 | 0.792 | 0.787 |
| | | | | K / V size at 20,480 tokens | 0.55 GB | 0.55 GiB | same |

The rules these logs led to, read in the wheels:
- settings.ERAS reserve_by_gpu_class: 0.4.7.post1, not 0.4.8. server_args.py __post_init__ in the 0.4.7.post1 wheel
  (built 2025-06-16) already computes mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3) with
  reserved_mem by GPU class (9.5 + tp*pp/2 GiB below 90 GiB, + 2 GiB with speculative decoding); the 0.4.7 wheel still
  has the 0.88/0.87/0.85/0.81/0.79 table. (81,559 - 10,240) / 81,559 = 0.874 and (81,559 - 12,288) / 81,559 = 0.849 on
  an H100, as printed; ModelRunner then multiplies a multimodal model's fraction by 0.90 (0.7866, printed 0.787).
- settings.ERAS req_to_token_unpadded (0.4.7): model_runner.py init_memory_pool passes ReqToTokenPool(size=max_num_reqs)
  in the 0.4.7 and 0.4.7.post1 wheels, size=max_num_reqs + 1 in 0.4.6.post5 (the row count was tied to the 0.4.8 era).
- kv.py handle_max_mamba_cache, 0.5.2-0.5.3: ModelRunner.__init__ sets max_mamba_cache_size to --max-running-requests,
  else 512 (over dp_size with DP attention), and profile_max_num_token takes max_mamba_cache_size x mamba_cache_per_req
  off the rest (0.5.2 and 0.5.3.post1 model_runner.py); oomkit refused these releases without the flag. The running
  requests are capped at the pool itself there, at a third of it from 0.5.4 (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO,
  0.5.4.post1 read).
- layout.py init_memory_pool: weights larger than the memory free before them die in load_model (the parameters are
  created on the GPU in _initialize_model: torch.OutOfMemoryError, the traceback of sglang#5576), before any pool, so
  the failing phase is "weights", not profile_max_num_token's "Not enough memory" refusal.

What is not held, and why: the docs-CI "mem usage" figures (the notebooks share one GPU in parallel: 43.12 GB for a 7B
model), sglang#8336's token count (the flags are not in the excerpt), sglang#10407's mamba pool and weights lines (not in
the excerpt; its GPU is read from "Load weight begin. avail mem=93.46 GB", which only the 96 GB H20 class gives: oomkit
93.08 GiB there, 77.15 on an H100, 137.90 on an H200), the EAGLE draft's pool (oomkit does not size the draft worker).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import sglang as sg
from oomkit.hardware.catalog import lookup as gpu_lookup
from oomkit.memory import Device
from oomkit.units import GiB
from tests.test_sglang_heldout4 import H100, WEIGHTS_LIMIT, gpus, pool_at, two
from tests.test_vllm_startup import spec_of

HERE = Path(__file__).parent / "fixtures" / "engine_logs" / "sglang" / "heldout5"


def fixture(stem: str) -> dict:
    return json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))


def catalog_gpus(name: str, n: int) -> tuple[Device, ...]:
    d = gpu_lookup(name)
    return gpus((d.name, d.memory_bytes), n)


# ---------------------------------------------------------------------------------------------------------
# sglang#10407: Qwen3-Next-80B-A3B, TP4 (0.5.2 era)


def test_qwen3_next_pool_at_the_printed_tokens():
    # 12 full-attention layers of 48 (the other 36 Gated DeltaNet, in the mamba pool), 2 KV heads of 256 -> 1 a rank
    p = fixture("qwen3-next-80b-a3b-tp4-issue10407")["printed"]
    pool = pool_at("qwen3-next-80b-a3b-instruct", p["kv_cache_tokens"], tp_size=4, engine_version="0.5.2")
    assert (two(pool.k_bytes), two(pool.v_bytes)) == (p["k_size_gb"], p["v_size_gb"])


def _q3n():
    return sg.ENGINE.estimate(spec_of("qwen3-next-80b-a3b-instruct"), catalog_gpus("H20", 4),
                              sg.SGLangSettings(tp_size=4, engine_version="0.5.2"))


def test_qwen3_next_tokens_at_the_0_5_2_defaults():
    # 0.5.2: a 512-slot mamba pool (max_mamba_cache_size's default) off the rest, then the 12 full-attention layers'
    # cells: 2,891,728 tokens against the printed 2,896,645
    est = _q3n()
    printed = fixture("qwen3-next-80b-a3b-tp4-issue10407")["printed"]["kv_cache_tokens"]
    err = (est.engine_view["max_total_num_tokens"] - printed) / printed
    assert abs(err) < 0.03, f"{err:+.2%}"
    assert est.engine_view["max_mamba_cache_size"] == 512 and est.engine_view["max_running_requests"] == 512


def test_qwen3_next_free_memory_after_the_pools():
    est = _q3n()
    printed = float(fixture("qwen3-next-80b-a3b-tp4-issue10407")["printed"]["pool_end_avail_gb"]) * GiB
    err = (est.engine_view["memory_pool_end_avail_bytes"] - printed) / est.devices[0].memory_bytes
    assert abs(err) < 0.03, f"{err:+.2%}"


# ---------------------------------------------------------------------------------------------------------
# sglang#8336: Qwen3-32B, TP2 on a 46,068 MiB card (July 2025)

Q32 = "qwen3-32b-tp2-46gib-class-issue8336"


def _q32():
    return sg.ENGINE.estimate(spec_of("qwen3-32b"), catalog_gpus("L20", 2),
                              sg.SGLangSettings(tp_size=2, engine_version="0.4.9"))


def test_qwen3_32b_weights_per_rank():
    err = (_q32().devices[0].weights_bytes - fixture(Q32)["printed"]["weights_mem_bytes"]) \
        / fixture(Q32)["printed"]["weights_mem_bytes"]
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def test_qwen3_32b_free_memory_after_the_weights():
    # the card less the pre-load overhead and the weights, against "Load weight end. ... avail mem=13.47 GB"
    est = _q32()
    line = next(x for x in est.engine_view["log"].split("\n") if x.startswith("Load weight end."))
    after = float(line.split("avail mem=")[1].split(" GB")[0]) * GiB
    err = (after - fixture(Q32)["printed"]["weights_avail_after_bytes"]) / est.devices[0].memory_bytes
    assert abs(err) < 0.03, f"{err:+.2%}"


def test_qwen3_32b_pool_at_the_printed_tokens():
    p = fixture(Q32)["printed"]
    pool = pool_at("qwen3-32b", p["kv_cache_tokens"], tp_size=2, engine_version="0.4.9")
    assert (two(pool.k_bytes), two(pool.v_bytes)) == (p["k_size_gb"], p["v_size_gb"])


# ---------------------------------------------------------------------------------------------------------
# sglang#5576: gemma-3-12b-it on a 16 GB GPU (0.4.5.post1 era): dies creating the parameters


@pytest.mark.parametrize("gpu", ["RTX 4080", "V100", "A4000"])  # the card is only "16GB Vram": any 16 GB part
def test_gemma3_12b_dies_loading_its_weights_on_16gb(gpu):
    est = sg.ENGINE.estimate(spec_of("gemma-3-12b-it"), catalog_gpus(gpu, 1),
                             sg.SGLangSettings(engine_version="0.4.5.post1"))
    assert est.fits is False
    failed = est.engine_view.get("failed_phase")
    assert failed is not None and failed["phase"] == "weights" and not failed["after_kv"]
    assert failed["needed_bytes"] > failed["left_bytes"]
    assert "OutOfMemoryError" in est.engine_view["error"]


# ---------------------------------------------------------------------------------------------------------
# The docs CI notebooks of 2025-06-17 (H100 80GB, main one day after 0.4.7.post1)

CI = dict(engine_version="0.4.7.post1", max_running_requests=200, max_total_tokens=20480, disable_cuda_graph=True)
EAGLE = dict(speculative_algorithm="EAGLE", speculative_num_draft_tokens=16, cuda_graph_max_bs=8)


@pytest.mark.parametrize(("stem", "model", "extra", "key"), [
    ("deepseek-r1-distill-qwen-7b-h100-docs-ci-2025-06-17", "deepseek-r1-distill-qwen-7b", {}, "mem_fraction_static"),
    # + 2 GiB kept back for the draft model and its graphs
    ("llama-2-7b-chat-eagle-h100-docs-ci-2025-06-17", "llama-2-7b-chat", EAGLE, "mem_fraction_static"),
    # ModelRunner: "Automatically reduce --mem-fraction-static to 0.787 because this is a multimodal model."
    ("qwen2.5-vl-7b-instruct-h100-docs-ci-2025-06-17", "qwen2.5-vl-7b-instruct", {}, "mem_fraction_static_runner"),
])
def test_docs_ci_default_fraction(stem, model, extra, key):
    est = sg.ENGINE.estimate(spec_of(model), gpus(H100, 1), sg.SGLangSettings(**CI, **extra))
    assert f"{est.engine_view['mem_fraction_static']:.3f}" == f"{fixture(stem)['printed'][key]:.3f}"


def test_docs_ci_fraction_before_the_multimodal_cut():
    # the server_args line prints the fraction before ModelRunner lowers it: the text model's 0.874
    from oomkit.engines.sglang.settings import default_mem_fraction_static

    d = default_mem_fraction_static(81559, sg.SGLangSettings(**CI))
    assert f"{d.mem_fraction_static:.3f}" == "0.874"


def test_reserve_by_gpu_class_from_0_4_7_post1():
    # the 0.4.7 wheel still has the by-tp table (0.88 at tp 1 on an 80 GB GPU)
    from oomkit.engines.sglang.settings import default_mem_fraction_static

    assert default_mem_fraction_static(81559, sg.SGLangSettings(engine_version="0.4.7")).mem_fraction_static == 0.88
    assert default_mem_fraction_static(81559, sg.SGLangSettings(engine_version="0.4.7.post1")).mem_fraction_static \
        == 0.874


@pytest.mark.parametrize(("stem", "model", "extra"), [
    ("deepseek-r1-distill-qwen-7b-h100-docs-ci-2025-06-17", "deepseek-r1-distill-qwen-7b", {}),
    ("llama-2-7b-chat-eagle-h100-docs-ci-2025-06-17", "llama-2-7b-chat", EAGLE),
    ("qwen2.5-vl-7b-instruct-h100-docs-ci-2025-06-17", "qwen2.5-vl-7b-instruct", {}),
])
def test_docs_ci_pool_at_the_printed_tokens(stem, model, extra):
    p = fixture(stem)["printed"]
    est = sg.ENGINE.estimate(spec_of(model), gpus(H100, 1), sg.SGLangSettings(**CI, **extra))
    assert est.engine_view["max_total_num_tokens"] == p["kv_cache_tokens"]  # --max-total-tokens 20480 caps the pool
    assert (two(est.engine_view["k_bytes"]), two(est.engine_view["v_bytes"])) == (p["k_size_gb"], p["v_size_gb"])


def test_req_to_token_rows_by_release():
    # ReqToTokenPool(size=max_num_reqs + 1) in 0.4.6.post5, size=max_num_reqs from 0.4.7 (model_runner.py)
    from oomkit.engines.sglang.kv import max_running_requests
    from oomkit.engines.sglang.settings import parse_version

    s = sg.SGLangSettings(max_running_requests=64)
    pool = sg.size_pool(spec_of("qwen3-32b"), s, kv_budget=10 * GiB)
    assert max_running_requests(pool, s, 40960, parse_version("0.4.6.post5"))[1] == 65
    assert max_running_requests(pool, s, 40960, parse_version("0.4.7"))[1] == 64
