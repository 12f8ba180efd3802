"""A sixth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout6/, each with its
source): HilbertraumAI/HilbertRaum's hardware legs the earlier sets did not take, on the machines they had least of:
--fit leaving layers on the host (a GTX 1070 Ti, an RTX 3060 Laptop GPU beside its Radeon iGPU, an RTX 3080 Ti
beside a UHD 770 with --fit-target 4096), an integrated UHD 620 alone, the CPU with REPACK, -np 2 / 4 / auto slots,
and Qwen3.8-27B's MTP draft (n_rs_seq = 2) at b9849 and at b11146, the newest build any held-out set has. Read
through oomkit with the log's own flags, build and free memory (the fit's own reading), nothing tuned, by the
held-out harness (tests/test_llamacpp_heldout_logs.py): model, KV, recurrent state and output buffers exact, compute
within 10%, the context and layers --fit keeps; a figure oomkit misses stays a strict xfail with its measured error
(the fixture's known_miss).

As it stood, before any change (60 figures of 12 logs): KV, recurrent state, output exact wherever the layer split
was; compute within 10% on every device but one (the MTP + --fit-target 512 run's Vulkan_Host, 0.486); the fit's
context always, its layer count in 10 of 12. What misses is each fixture's known_miss: unsloth's UD files are their
publisher's own mixes (the log's tensor-type counts), so the weights, and with them the --fit layer count and the
recurrent state's host / device split, follow the recipe oomkit reads from the file name, not the file.

Mirrored since: compute.host_recurrent_stores keeps a recurrent layer's K = n_rs_seq + 1 conv-state copies live
together on the host (one split input per rollback slot, allocated at the split's start): the MTP + --fit-target 512
run's Vulkan_Host 313.41 MiB against 313.47 printed (152.47 before, one copy)."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, held_out_estimate, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout6").glob("*.json"))
MiB = 1 << 20


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 12)


def test_rollback_slots_each_copy_the_conv_input_to_the_host():
    """With n_rs_seq = 2 a gated delta net layer left on the CPU stores K = 3 conv states, each ggml_cpy from its own
    view of the conv input (src/models/delta-net-base.cpp build_conv_state, [TAG_RECURRENT_ROLLBACK_SPLITS]); each view
    is a split input the scheduler copies to the host, and a split's input copies are allocated together at its start
    (ggml-backend.cpp ggml_backend_sched_split_graph). Qwen3.8-27B, 4 slots of 512 tokens: each copy spans
    (3 + 512) x 4 B x 10240 channels x 4 sequences = 80.47 MiB; the host buffer is the inputs' 72.00 plus three."""
    fx = json.loads((FIXTURES[0].parent / "qwen3.8-27b-ud-q5km-rtx3090-vulkan-mtp-n2-fit-target-512-np-auto-b9849.json")
                    .read_text())
    host = held_out_estimate(fx).engine_view["compute_buffer_bytes"]["Vulkan_Host"] / MiB
    assert host == pytest.approx(fx["printed"]["buffers"]["compute_mib"]["Vulkan_Host"], abs=0.1)


MTP_FIXTURES = [p for p in FIXTURES if "mtp" in json.loads(p.read_text())["printed"]]


@pytest.mark.parametrize("path", MTP_FIXTURES, ids=[p.stem for p in MTP_FIXTURES])
def test_the_mtp_draft_context_beside_the_target(path):
    """The MTP draft context llama-server creates against the target (common_speculative_init_result: the
    target's n_ctx and sequences, n_rs_seq 0, n_outputs_max = n_parallel; its cache the next-n layer alone):
    its KV buffer to the 0.01 MiB, its compute buffers within 10%, under the names the log prints (the CPU side
    the first device's host buffer type, Vulkan_Host)."""
    fx = json.loads(path.read_text())
    v = held_out_estimate(fx).engine_view
    want = fx["printed"]["mtp"]
    assert {k: round(b / MiB, 2) for k, b in v["mtp_kv_buffer_bytes"].items()} == want["kv_mib"]
    got = {k: b / MiB for k, b in v["mtp_compute_buffer_bytes"].items()}
    assert set(got) == set(want["compute_mib"])
    for dev, printed in want["compute_mib"].items():
        assert 0.9 <= got[dev] / printed <= 1.1, (dev, got[dev], printed)
