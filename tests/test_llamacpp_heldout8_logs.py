"""An eighth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout8/, each with its
source), chosen for what the earlier sets had least of: AMD (HIP) builds of 2026, --fit filling dense layers
back-to-front on a ROCm card, and two ROCm cards splitting a Qwen3.5 hybrid MoE by layer with pipeline parallelism.
KlimtechRAG's session transcript (a Radeon Pro VII, gfx906, b7972): unsloth's Qwen2.5-VL-7B UD-Q6_K_XL at 65536 x 4
unified, q8_0 K and V, first with 7188 MiB free (--fit keeps 21 of 29 layers) then with the card free (all 29);
llama.cpp issue #20024 (two MI60s, b8184): Qwen3.5-35B-A3B Q8_0 with -sm layer at 262144 x 4 unified, q8_0 K and V,
-ub 1024. Read through oomkit with the log's own flags, build and free memory, nothing tuned, by the held-out harness
(tests/test_llamacpp_heldout_logs.py): model, KV, recurrent state and output buffers exact, compute within 10%, the
fit's context and layers; a figure oomkit misses stays a strict xfail with its measured error (the fixture's
known_miss).

As it stood, before any change (3 logs): KV, recurrent state and output exact wherever the layer split was (the two
MI60s' 1360.00 / 1360.00 KV and 134.00 / 117.25 MiB recurrent state to the 0.01 MiB); compute within 10% on every
device but two: the second MI60's ROCm1 4688.01 MiB against 3066.14 printed (1.529) and the Pro VII's fully offloaded
ROCm0 311.00 against 422.00 (0.737). The fit's context always, its layer count in 1 of 2.

Mirrored since, from llama.cpp's source: before PR #23764 (ERAS kq_mask_f16) the F32 KQ mask is cast to F16 by one
node (llm_graph_context::build_attn_inp_kv: self_kq_mask_cnv = ggml_cast(...)), which the scheduler places with the
first attention layer's flash attention; a device whose layers come later copies that F16 cast as its split input,
not the F32 mask (compute.mask_cast_device). With pipeline parallelism each split input copy is marked input and
output (ggml-backend.cpp ggml_backend_sched_split_graph, n_copies > 1), so a hybrid's logits on the last device sit
above its mask copy instead of taking the freed block. ROCm1 3090.01 MiB against 3066.14 (1.008); ROCm0 and the host
unchanged (0.962, 1.000). Since a device's output phase leaves build_inp_embd's unread embeddings input (PR #18550,
b7774) with the host's graph inputs (compute.compute_bytes), the Pro VII's fitted ROCm0 311.00 -> 304.00 exact,
the fully offloaded one 311.00 -> 304.00 against 422.00.

What misses is each fixture's known_miss: unsloth's UD-Q6_K_XL is its publisher's own mix (106 q8_0 beside 92 q6_K
tensors, the token embeddings among the q8_0 ones), so the weights, and through them --fit's layer count and the KV
split, follow the stand-in oomkit reads from the name; and the fully offloaded Pro VII's ROCm0 buffer, whose logits
(512 rows: every token of the ubatch before PR #23861) sit 125 MiB up, above tensors the F32-mask graph of that era
leaves below them. Placing them needs a node-by-node replay of the Qwen2-VL graph with the F32 mask and its cast
(compute_graphs has none; phi3_graph is the one dense replay and reads F16 masks only), not a constant."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, held_out_estimate, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout8").glob("*.json"))
MiB = 1 << 20


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 3)


def test_a_later_device_copies_the_f16_cast_of_the_mask():
    """#20024 at b8184: the F32 mask (262144 cells x 1024 tokens, 1 GiB) is cast to F16 (512 MiB) on ROCm0, where the
    first attention layer runs; ROCm1 copies the cast, four times under pipeline parallelism. So ROCm1's buffer is the
    logits above its mask copy plus three more F16 copies, not four F32 ones: within 2% of the printed 3066.14 MiB,
    and ROCm0 still holds the F32 copies (4840.13 printed)."""
    fx = json.loads((FIXTURES[0].parent / "qwen3.5-35b-a3b-q8_0-2x-mi60-rocm-sm-layer-262144-q8kv-ub1024-b8184.json")
                    .read_text())
    compute = held_out_estimate(fx).engine_view["compute_buffer_bytes"]
    printed = fx["printed"]["buffers"]["compute_mib"]
    assert compute["ROCm1"] / MiB == pytest.approx(printed["ROCm1"], rel=0.02)
    assert compute["ROCm0"] - compute["ROCm1"] > 1024 * MiB  # the F32 copies stay on the casting device
