"""A seventh held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout7/, each with its
source), found in files committed to public repositories and issue threads: TOSUKUi's Strix Halo post (Ryzen AI Max+
395, Radeon 8060S gfx1151) at b5398, Qwen3-0.6B Q8_0 through Vulkan (RADV, uma) and through ROCm on the same iGPU and
Qwen3-235B-A22B Q3_K_S through Vulkan with -ngl 93 (93 of 95 layers, layer 0 and the output on the host); ROCm issue
#6227's RX 9070 XT chosen by -dev ROCm1 beside the iGPU at b9106 (granite-4.1-8b UD-Q8_K_XL, --no-mmap, -np auto,
--fit cutting 131072 to 31488); alekseybb197's MacBook Pro M4 Pro write-ups: Qwen3.5-9B Q4_K_S at b8999 (-c 262144,
q8_0 K and V, -fa on) and Qwen3.5-9B-MTP UD-Q4_K_XL at b9222 with the MTP draft (n-max 6: six recurrent rollback
slots) in --fit's dry-run table. Read through oomkit with the log's own flags, build and free memory, nothing tuned,
by the held-out harness (tests/test_llamacpp_heldout_logs.py): model, KV, recurrent state and output buffers exact,
compute within 10%, the fit's context and layers; a figure oomkit misses stays a strict xfail with its measured error
(the fixture's known_miss).

As it stood, before any change (28 figures of 7 logs): KV and recurrent state exact in all 7 but the granite run (the
fit's context, from its weights), output exact in all 5 that print it, compute within 10% on every device of 4 logs
(worst: the Qwen3.5-9B M4 run's MTL0, 0.951), the fit right in 1 of 2. What misses: publishers' mixes read from the
file name (granite UD-Q8_K_XL -1078 MiB, and through it the fit's context 38144 against 31488, the KV and the host
compute; unsloth's Q4_K_S of Qwen3.5-9B -40.50 MiB); the dry-run table of the MTP runs (its device model is the
tensor bytes, not the mapped buffer; its Host compute counts the CPU buffer type twice); and Metal's flash attention
with K q5_1 beside V q8_0, run on the CPU (Host 264 against 1320). No engine rule changed: the harness now keeps a
device's own mapped buffer (MTL0_Mapped) in its breakdown row, where it had put it in Host.

Then two rules from llama.cpp's source: ggml-metal refuses flash attention with K and V of different types, so the
attention runs on the CPU with the layer's K / V views in the host's compute buffer (compute.metal_fa_supported,
device_fa_on_host; before PR #23764 the F32 mask's freed block placed as ggml-alloc does), and --fit's no_alloc dry
run counts the CPU compute buffer the BLAS backend shares twice (fit.blas_shares_cpu_buffer); a fixture whose table
is that dry run's ("table": "fit_dry_run") is read from oomkit's own dry-run table. Both MTP logs' compute is now
exact in Host (544 and 1320) and within 5% on MTL0; their model stays a miss (+21 MiB, the UD-Q4_K_XL stand-in)."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout7").glob("*.json"))


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 7)


def test_granite_fit_keeps_the_printed_context_at_the_files_weight():
    """ROCm issue #6227's b9106 --fit run (granite-4.1-8b UD-Q8_K_XL): oomkit's context (38144 cells) misses the
    printed 31488 only through the weights it reads from the file name, 1078.12 MiB below the printed ROCm1 model
    buffer (the fixture's known_miss). With that much less free memory on ROCm1, the fit (common_params_fit_impl:
    dry runs at the trained context and at -fitc, the straight line between them to the 1024 MiB target, rounded
    down to a multiple of 256) keeps 31488 cells, as printed, and the host's compute (the n_ctx-wide inputs and the
    small ones, compute.token_index_inputs) is 77.51 MiB as printed (77.50 without the small ones)."""
    from tests.test_llamacpp_heldout_logs import held_out_estimate

    path = next(p for p in FIXTURES if p.name.startswith("granite-4.1-8b-ud-q8kxl-rx9070xt"))
    fx = json.loads(path.read_text())
    est = held_out_estimate(fx).engine_view
    gap = fx["printed"]["buffers"]["model_mib"]["ROCm1"] - est["model_buffer_bytes"]["ROCm1"] / (1 << 20)
    assert round(gap, 2) == 1078.12
    devices = [dict(d, free_mib=d["free_mib"] - gap) if d["id"] == "ROCm1" else d for d in fx["devices"]]
    view = held_out_estimate({**fx, "devices": devices}).engine_view
    assert view["n_ctx"] == fx["printed"]["fit"]["n_ctx"] == 31488
    assert round(view["compute_buffer_bytes"]["ROCm_Host"] / (1 << 20), 2) == 77.51
