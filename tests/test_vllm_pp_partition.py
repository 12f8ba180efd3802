"""VLLM_PP_LAYER_PARTITION: the decoder layers of each pipeline stage as vLLM reads them (distributed/utils.py
get_pp_indices, read in the 0.29.0 wheel: `[int(layer) for layer in s.split(",")]`, "Invalid partition string",
"len(partitions)=... does not match pp_size=...", "sum(partitions)=... does not match num_hidden_layers=...")."""

from __future__ import annotations

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.config import pp_partition
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import devices_for_names
from oomkit.model.resolve import resolve


def test_partition_per_stage():
    assert pp_partition(48, 2, None, "16,32") == [(0, 16), (16, 48)]
    assert pp_partition(48, 2) == [(0, 24), (24, 48)]
    # vLLM's own split of 61 layers over 3 stages (0.8+): the remainder before the last stage
    assert pp_partition(61, 3, (0, 8, 0)) == [(0, 20), (20, 41), (41, 61)]


@pytest.mark.parametrize("text, message", [
    ("16,30", "sum(partitions)=46 does not match num_hidden_layers=48."),
    ("16,16,16", "len(partitions)=3 does not match pp_size=2."),
    ("16;32", "Invalid partition string: 16;32"),
])
def test_partition_refused_as_vllm_refuses(text, message):
    with pytest.raises(OomkitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pp_partition(48, 2, None, text)


def test_read_from_the_environment_and_weights_follow():
    """Qwen3-Coder-30B-A3B's 48 layers at 16 / 32 put a third of the experts on the first stage."""
    _, _, s = parse_args(["Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "-pp", "2"],
                         env={"VLLM_PP_LAYER_PARTITION": "16,32"})
    assert s.pp_layer_partition == "16,32"
    spec = resolve("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8")
    devs = devices_for_names("2x H100")
    even = ENGINE.estimate(spec, devs, VllmSettings(pipeline_parallel_size=2, max_model_len=8192))
    split = ENGINE.estimate(spec, devs, s.__class__(**{**s.__dict__, "max_model_len": 8192}))
    w_even = [d.weights_bytes for d in even.devices]
    w_split = [d.weights_bytes for d in split.devices]
    assert sum(w_split) == pytest.approx(sum(w_even), rel=0.001)
    assert w_split[0] < w_even[0] <= w_even[1] < w_split[1]
    assert 0.45 < w_split[0] / w_split[1] < 0.55  # 16 of 48 layers against 32 (embedding and head aside)
