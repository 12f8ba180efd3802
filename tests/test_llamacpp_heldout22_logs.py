"""A twenty-second held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout22/), read
through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: the SYCL CI that NeoZhangJianyu publishes
(github.com/NeoZhangJianyu/ci_log: llama.cpp master built for SYCL at each commit and run with one command,
`-m llama-2-7b.Q4_0.gguf -n 400 -e -ngl 33 -s 0`, on an Arc A770 and on Intel iGPUs), six of its runs across two
years of builds: b9145 on the A770 (--fit's memory breakdown, flash attention auto -> enabled), b8205 on an i5-1250P's
Iris Xe and b7867 on an i5-13400's UHD Graphics 730 (--fit, flash attention auto -> disabled: no SYCL FLASH_ATTN_EXT
before PR #20190), b6378 on the A770 (the first -fa auto builds), b5652 on the A770 (no flash attention) and b4127 on
an i7-13700K's UHD Graphics 770.

Before -> after (oomkit's figures recorded before any rule was looked at). 42 figures (per log: SYCL0 and
CPU_Mapped model, KV, output, SYCL0 and SYCL_Host compute; --fit's context and layers in the three fit logs): before
35 exact, 5 more within 10%, 2 off; after 36 exact, 6 within 10%, none off:
- b4127 (UHD 770): SYCL_Host compute 16.01 -> 8.01 MiB against 8.01 printed (was 2.0x), SYCL0 296.00 -> 366.31
  against 342.32 (was 0.865, now 1.070): from PR #10133 (b4040) to PR #10432 (b4220) ggml-sycl's offload_op took
  the token embeddings' GET_ROWS (get_op_batch_size: ne[1] for GET_ROWS), so the gathered rows are made on the
  device and the whole token_embd table (70.31 MiB) is copied into its compute buffer ("graph splits = 1 (with
  bs=512)"; compute.sycl_offloaded_token_rows). ggml-alloc's reuse of the table's block once the rows are gathered
  is not replayed: 342.32 = 70.31 + 272.01 printed, the table above the workspace here.
- model (3577.56 + 70.31), KV (2048.00), output (0.12) MiB exact in all six before and after; --fit's 4096 cells and
  33/33 layers exact in the three fit logs.
- SYCL_Host compute exact in the other five (24.01 from b7867 on, 16.01 before), before and after.
- SYCL0 compute within 10% before and after: b9145 96.50 against 92.51 (1.043; flash attention on), b8205 and
  b7867 344.00 against 328.01 (1.049), b6378 352.00 against 328.01 (1.073; flash attention auto -> disabled, the
  cache made for it, V untransposed), b5652 320.00 against 296.00 (1.081). The closed-form phases count the CPU
  graph's rows; the device graphs replayed tensor by tensor are ggml-cuda's and the newest build's.

Searched and not used: ggml-org/llama.cpp#8119, #8743, #18208, #22275 and lemonade-sdk/llamacpp-rocm#79 (only a
failed allocation, a lemonade build); ggml-org/ci's mac-m4 runs (bge-small, jina reranker: not in the catalog);
ikawrakow/ik_llama.cpp#822 (a fork's log); HilbertraumAI/HilbertRaum's logs (held by earlier sets)."""

import json

import pytest

from oomkit.engines.llamacpp import compute
from oomkit.engines.llamacpp.settings import build_number
from tests.llamacpp_heldout import assert_cited_and_quoted, fixture_from, mib, set_fixtures
from tests.test_llamacpp_heldout_logs import check, held_out_estimate, params

FIXTURES = set_fixtures("llamacpp_heldout22")
B4127 = "llama-2-7b-q4_0-sycl-uhd770-igpu-4096-get-rows-offload-b4127"
B5652 = "llama-2-7b-q4_0-sycl-arc-a770-4096-no-fa-b5652"


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed."""
    assert_cited_and_quoted(FIXTURES, 6)


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_estimates_without_error(path):
    """Every fixture's run goes through oomkit's estimate with its own flags and build."""
    held_out_estimate(json.loads(path.read_text()))


@pytest.mark.parametrize(("build", "offloaded"), [(4039, False), (4040, True), (4127, True), (4219, True),
                                                  (4220, False), (5652, False)])
def test_sycl_get_rows_offload_builds(build, offloaded):
    """ggml-sycl's offload_op took GET_ROWS from PR #10133 (b4040) to PR #10432 (b4220)."""
    lo, hi = compute.SYCL_GET_ROWS_OFFLOAD
    assert (lo <= build < hi) is offloaded


def test_token_table_copied_to_the_sycl_device():
    """b4127: the gathered rows leave SYCL_Host (8.01 MiB printed: the F32 mask; 16.01 at b5652 with the rows on the
    host) and the 70.31 MiB token_embd table is copied into SYCL0's buffer."""
    old, new = fixture_from(FIXTURES, B4127), fixture_from(FIXTURES, B5652)
    v_old, v_new = held_out_estimate(old).engine_view, held_out_estimate(new).engine_view
    assert "graph splits = 1 (with bs=512)" in old["quoted"]
    assert mib(v_old["compute_buffer_bytes"]["SYCL_Host"]) == 8.01
    assert mib(v_new["compute_buffer_bytes"]["SYCL_Host"]) == 16.01
    table = 32000 * 4096 // 32 * 18  # q4_0: 18 bytes a block of 32
    assert round(table / (1 << 20), 2) == 70.31 == old["printed"]["buffers"]["model_mib"]["CPU_Mapped"]
    assert build_number(old["engine_version"]) == 4127
