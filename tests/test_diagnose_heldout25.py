"""diagnose() on a twenty-fifth held-out set of public crash logs (tests/fixtures/diagnose/heldout25.jsonl), 8 logs
new to every test fixture, 2023-2026, in kinds the earlier sets held little of: ROCm / HIP (PyTorch under ComfyUI on
Radeon cards and an AI MAX+ 395, vLLM's EngineCore on a 64 GiB APU) and Metal (llama.cpp's weights over a 16 GiB
MacBook Air's working set, ds4 under mlx-serve failing its warm-up on a 96 GiB M2 Max, MLX's buffer-count limit).
Each case is cited with the lines kept verbatim and the fix its thread gives (where the thread confirms none, the
answer is held to what the log shows and the program's own rule); `before` records what oomkit answered before:
before: 3 of 8 right (pytorch#138002, ComfyUI#10435, mlx#3849), 1 half (vllm#6512); after: 8 right.
The rules, each from the program's own source or figures: the model's own Metal buffers (ggml-metal's running total
after the weights' 'data' buffer, ds4's mapped views) over the working set macOS keeps resident
(recommendedMaxWorkingSetSize: 2/3 of RAM up to 32 GiB, 3/4 above, as ggml-metal prints it) are the weights, not the
context: a wired limit above the model where the RAM leaves macOS room, else a smaller quant; a PyTorch
fragmentation in a vLLM log gets vLLM's own budget beside the allocator's setting (the KV cache is sized to total x
gpu_memory_utilization less the profiled peak); ComfyUI's --gpu-only (comfy/cli_args.py: everything stays on the
GPU) is the first thing to drop; one PyTorch allocation of half the device or more outside a serving engine and
transformers' loading warm-up is one activation (an attention matrix), not weights.
The checks: tests/diagnose_heldout.py check_case; the garble pass as in sets 6 to 24."""

from __future__ import annotations

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.fixes import metal_budget
from tests.diagnose_heldout import garble_tests, heldout_tests

CASES, test_cases_are_cited_and_new, test_heldout_case = heldout_tests("heldout25.jsonl", minimum=8, fix_required=True)
test_garbled_log_exits_cleanly, test_readable_garbles_keep_the_reading = garble_tests(CASES)

MiB = 1 << 20
GiB = 1 << 30


def _case(prefix: str) -> dict:
    return next(c for c in CASES if c["id"].startswith(prefix))


def _texts(d) -> list[str]:
    return [" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes]


def test_metal_figures_are_read():
    """ggml-metal's running total after the weights' buffer (19626.77 MiB) and its working set (11453.25 MB); ds4's
    mapped views (82697.67 MiB) and the Mac's RAM (96.00 GiB), as the two logs print them."""
    b = diagnose(_case("llamacpp-4495")["text"]).buffers
    assert b["metal_model_bytes"] == round(19626.77 * MiB) and b["metal_working_set_bytes"] == 11_453_250_000, b
    b = diagnose(_case("mlx-serve-13")["text"]).buffers
    assert b["metal_model_bytes"] == round(82697.67 * MiB) and b["metal_ram_bytes"] == 96 * GiB, b


def test_model_under_the_working_set_stays_unified_memory():
    """A model whose buffers are under the working set is not read as the weights: the status line's own reading."""
    text = _case("llamacpp-4495")["text"].replace("(19626.77 / 10922.67)", "(9626.77 / 10922.67)")
    d = diagnose(text)
    assert d.stage == "host_ram", d.to_dict()


def test_wired_limit_where_the_model_fits_in_ram():
    """The same log on a 64 GiB Mac (working set 51539.61 MB, 3/4 of RAM) with 52000 MiB of weights: the wired limit
    above the model (52000 MiB and 2 GiB, rounded up to a GiB: 54272 MiB; the 2 GiB is a rule of thumb inside
    mlx-lm's README range, over the model and under the RAM) comes first."""
    text = (_case("llamacpp-4495")["text"].replace("11453.25 MB", "51539.61 MB")
            .replace("(19626.77 / 10922.67)", "(52000.00 / 49152.00)"))
    d = diagnose(text)
    assert d.stage == "weights" and _texts(d)[0].startswith("sudo sysctl iogpu.wired_limit_mb=54272"), _texts(d)


def test_utilization_advice_needs_a_vllm_log():
    """The same HIP message without vLLM's EngineCore prefix is PyTorch's alone: no vLLM flag."""
    text = _case("vllm-6512")["text"].replace("(EngineCore_0 pid=94) ", "")
    d = diagnose(text)
    assert d.stage == "fragmentation" and not any("--gpu-memory-utilization" in t for t in _texts(d)), _texts(d)


def test_gpu_only_advice_needs_the_flag():
    """ComfyUI started without --gpu-only: no advice to drop it, and the small request stays unplaced."""
    text = _case("comfyui-gguf-208")["text"].replace(" --gpu-only", "")
    d = diagnose(text)
    assert not any("--gpu-only" in t for t in _texts(d)) and d.stage != "weights", (d.stage, _texts(d))


def test_a_request_under_half_the_device_is_not_read_as_one_activation():
    """20.00 GiB of a 64 GiB device is under half: no single-activation reading."""
    text = _case("comfyui-9801")["text"].replace("Tried to allocate 47.98 GiB", "Tried to allocate 20.00 GiB")
    d = diagnose(text)
    assert not any("half the device or more" in c for c in d.causes), d.causes


def test_half_the_device_in_a_serving_engine_is_not_read_as_one_activation():
    """A serving engine's KV pool is one tensor of half the device or more (vLLM, SGLang): in their logs the rule
    does not apply."""
    msg = _case("comfyui-9801")["text"].split("\n")[-2]
    d = diagnose("(EngineCore_0 pid=94) ERROR 08-22 10:00:00 [core.py:700] " + msg + "\n")
    assert not any("half the device or more" in c for c in d.causes), d.causes


@pytest.mark.parametrize(("printed_mb", "ram_gib"), [
    (11453.25, 16),   # llama.cpp#4495, macOS 13-15 on a 16 GiB M1
    (22906.50, 32),   # recommendedMaxWorkingSetSize on 32 GiB (memory.py apple_default_gpu_share's sources)
    (51539.61, 64),
    (12713.12, 16),   # macOS 26 on 16 GiB (antirez/ds4#893)
])
def test_a_printed_working_set_names_the_macs_ram(printed_mb, ram_gib):
    _, ws, ram = metal_budget({"metal_working_set_bytes": int(printed_mb * 1e6)})
    assert ram == ram_gib * GiB


def test_a_raised_wired_limit_names_no_ram():
    assert metal_budget({"metal_working_set_bytes": 84992 * 2**20})[2] is None
