"""A twenty-second held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout22/), read
through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: the SYCL CI that NeoZhangJianyu publishes
(github.com/NeoZhangJianyu/ci_log: llama.cpp master built for SYCL at each commit and run with one command,
`-m llama-2-7b.Q4_0.gguf -n 400 -e -ngl 33 -s 0`, on an Arc A770 and on Intel iGPUs). Six runs first: b9145 on the
A770 (--fit's memory breakdown, flash attention auto -> enabled), b8205 on an i5-1250P's Iris Xe and b7867 on an
i5-13400's UHD Graphics 730 (--fit, flash attention auto -> disabled), b6378 (the first -fa auto builds) and b5652
(no flash attention) on the A770, b4127 on an i7-13700K's UHD Graphics 770. A sweep of the CI's 900 runs with buffer
lines (b2222-b9145) then located four era boundaries, each read from its merge commit, and four more runs at them
were added: b3086 (main with no -c), b6070, b7818 and b8234 on the A770.

Before -> after (oomkit's figures recorded before any rule was looked at). 62 figures (model, KV, output, SYCL0 and
SYCL_Host compute; --fit's context and layers in the three fit logs; model where printed under today's names):
before 47 exact, 7 more within 10%, 8 off; after 55 exact, 7 within 10%, none off:
- b4127: SYCL_Host 16.01 -> 8.01 MiB against 8.01 (was 2.0x), SYCL0 296.00 -> 366.31 against 342.32 (0.865 ->
  1.070): from PR #10133 (b4040) to PR #10432 (b4220) ggml-sycl's offload_op took the token embeddings' GET_ROWS, so
  the rows are gathered on the device beside a copy of the 70.31 MiB token_embd table ("graph splits = 1 (with
  bs=512)"; compute.sycl_offloaded_token_rows); ggml-alloc's reuse of the table's block is not replayed.
- b3086 (main, no -c): 4096 -> 512 cells (PR #7675, b3087, changed gpt_params' n_ctx from 512 to 0: programs.
  COMMON_CTX_ERAS), KV 2048.00 -> 256.00, SYCL0 296.00 -> 70.50, SYCL_Host 16.01 -> 9.01, all exact.
- b5652 and b6070: SYCL0 320.00 -> 296.00 exact (was 1.081): the older graph's attention without flash attention
  (K and V copied into views of the cache) lasts until PR #14959's ggml_set_rows stores (compute.OLD_ATTN_LAST_BUILD
  = b6070; it ended at b5380 before); the CI prints 296.00 in every build from b3091 to b6070.
- b6070: SYCL_Host 32.01 -> 16.01 exact: ERAS set_rows is PR #14959's merge, b6071 (was dated 2025-08-02: b6056).
- b7818: SYCL_Host 24.01 -> 16.01 exact: the unread embeddings input came with PR #18898 (b7819), not with PR
  #18550's select op (b7774): ERAS embd_input.
- b8234: SYCL0 344.00 -> 96.50 against 92.51 (3.72 -> 1.043): PR #20190's SYCL flash attention merged at b8234
  (compute.SYCL_FA_BUILD; was dated from the PR's opening day, b8254).
- exact before and after: model (3577.56 + 70.31), KV (2048.00), output (0.12) MiB, the other SYCL_Host figures and
  --fit's 4096 cells, 33/33 layers. Within 10% before and after: SYCL0 b9145 96.50 against 92.51 (1.043), b8205 /
  b7867 344.00 against 328.01 (1.049), b6378 / b7818 352.00 against 328.01 (1.073; flash attention auto -> disabled,
  the cache made for it). The closed-form phases count the CPU graph's rows; the device graphs replayed tensor by
  tensor are ggml-cuda's and the newest build's.
- Heldout15's Gemma 3 run at b5902 (2 x A770, no flash attention) moves with the older graph's end: SYCL0 675.01 ->
  656.51 against 667.01 (1.012 -> 0.984), SYCL1 717.01 -> 698.51 against 709.02.

Not in the set: the CI's UHD 730 runs at b4282-b4877 (SYCL0 352.01, SYCL_Host 40.02 against 296.00 / 16.01 on the
A770 at the same builds: a device difference not located) and its A770 runs at b4069-b4086 and b5281-b5305
(SYCL_Host 304.01: not located). Searched and not used: ggml-org/llama.cpp#8119, #8743, #18208, #22275 and
lemonade-sdk/llamacpp-rocm#79 (only a failed allocation, a lemonade build); ggml-org/ci's mac-m4 runs (bge-small,
jina reranker: not in the catalog); ikawrakow/ik_llama.cpp#822 (a fork's log); HilbertraumAI/HilbertRaum's logs
(held by earlier sets)."""

import json
from dataclasses import replace

import pytest

import oomkit
from oomkit.engines.llamacpp import compute, programs
from oomkit.engines.llamacpp.settings import ERAS, build_number
from oomkit.memory import Device
from tests.llamacpp_heldout import MiB, assert_cited_and_quoted, fixture_from, mib, set_fixtures
from tests.test_llamacpp_heldout_logs import check, held_out_estimate, params

FIXTURES = set_fixtures("llamacpp_heldout22")
B4127 = "llama-2-7b-q4_0-sycl-uhd770-igpu-4096-get-rows-offload-b4127"
B5652 = "llama-2-7b-q4_0-sycl-arc-a770-4096-no-fa-b5652"


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed."""
    assert_cited_and_quoted(FIXTURES, 10)


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


def test_main_default_context_before_pr_7675():
    """The main example with no -c: gpt_params' 512 cells to b3086 (KV 256.00 MiB, SYCL0 compute 70.50, SYCL_Host
    9.01 printed), the trained 4096 from PR #7675 (b3087; the b3091+ runs of this CI print n_ctx = 4096)."""
    fx = fixture_from(FIXTURES, "llama-2-7b-q4_0-sycl-arc-a770-main-default-512-b3086")
    assert "n_ctx      = 512" in fx["quoted"]
    _, _, s = programs.parse(["-m", "llama-2-7b.Q4_0.gguf", *fx["argv"]], "main")
    dev = fx["devices"][0]
    devices = (Device(id=dev["id"], name=dev["name"], memory_bytes=dev["total_mib"] * MiB,
                      free_bytes=dev["free_mib"] * MiB),)
    v = oomkit.estimate(fx["catalog_model"], "llama.cpp", quant="Q4_0", devices=devices, backend="sycl",
                        settings=replace(s, engine_version="b3086"), find_max_context=False).engine_view
    assert v["n_ctx"] == 512 and mib(v["kv_buffer_bytes"]["SYCL0"]) == 256.0
    assert mib(v["output_buffer_bytes"]) == 0.12
    assert {k: mib(b) for k, b in v["compute_buffer_bytes"].items()} == fx["printed"]["buffers"]["compute_mib"]
    newer = oomkit.estimate(fx["catalog_model"], "llama.cpp", quant="Q4_0", devices=devices, backend="sycl",
                            settings=replace(s, engine_version="b3091"), find_max_context=False).engine_view
    assert newer["n_ctx"] == 4096
    assert [programs.common_default_ctx(b) for b in (3086, 3087)] == [512, 0]


@pytest.mark.parametrize(("name", "build"), [("set_rows", 6071), ("embd_input", 7819)])
def test_eras_read_from_the_merge_commits(name, build):
    """PR #14959 (a4569c41f: b6071) and PR #18898 (557515be1: b7819), each the merge commit's count on master; the
    SYCL CI's SYCL_Host 16.01 -> 32.01 MiB between b6070 and b6093 and 16.01 -> 24.01 between b7818 and b7862."""
    assert ERAS[name] == build
    assert compute.SYCL_FA_BUILD == 8234 and compute.OLD_ATTN_LAST_BUILD == 6070
