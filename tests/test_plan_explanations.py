"""What `fit` says of each setting it turns: the engine's own meaning of that setting, never another's. A vLLM
`--tensor-parallel-size 1 -> 2` was explained as "a smaller weight format" (every field a weight choice moved got
that line); each field any engine's knob space may set now has its own line, and a new knob without one fails here."""

from __future__ import annotations

from dataclasses import fields

import pytest

from oomkit.engines.base import get_engine
from oomkit.plan.fit import _WHY, FIELD_WHY, explain, fit
from oomkit.plan.options import Goals
from oomkit.plan.search import plan
from oomkit.plan.speed import SpeedBound, tps_number
from oomkit.request import devices_from, resolve_model

GiB = 1 << 30

# one model each engine loads, resolved from the test cache as the other plan tests do
MODELS = {
    "llama.cpp": "qwen3:8b",
    "ollama": "qwen3:8b",
    "vllm": "Qwen/Qwen2.5-32B-Instruct",
    "sglang": "Qwen/Qwen2.5-32B-Instruct",
    "transformers": "Qwen/Qwen2.5-32B-Instruct",
    "mlx": "mlx-community/Qwen3-8B-4bit",
}

# hardware that makes each knob move: one GPU; two unequal GPUs (llama.cpp -ts); two equal ones (-tp); two nodes
# (-pp); other programs' memory (--gpu-memory-utilization); several sequences (-np, --max-num-seqs, ...)
SCENARIOS = [
    (devices_from(gpu="RTX 4090"), 1, 0, 1),
    (devices_from(gpu="RTX 4090"), 8, GiB, 1),
    (devices_from(gpu="2x RTX 4090"), 1, 0, 1),
    (devices_from(gpu="RTX 4090,RTX 3060"), 4, GiB, 1),
    (devices_from(gpu="4x H100"), 4096, GiB, 2),
]


@pytest.mark.parametrize("engine", sorted(MODELS))
def test_every_field_a_choice_sets_has_its_own_explanation(engine):
    eng = get_engine(engine)
    model = MODELS[engine]
    spec = resolve_model(eng, model)
    base = eng.settings()
    moved: set[str] = set()
    offload: set[str] = set()
    for devs, conc, reserve, nodes in SCENARIOS:
        for c in eng.knobs(model, spec, devs, base, concurrency=conc, reserve_bytes=reserve, nodes=nodes):
            moved |= {f.name for f in fields(c.settings) if getattr(c.settings, f.name) != getattr(base, f.name)}
            if c.offload is not None:
                offload.add(c.offload[0])
    # said by _WHY: the KV cache type, the context, the offload field; "env" is no setting of its own
    said_elsewhere = {*eng.kv_fields, eng.context_field, *offload, "env"}
    if engine == "mlx":
        said_elsewhere.add("kv_bits")  # mlx_lm --kv-bits: the KV cache's own knob
    missing = sorted(moved - said_elsewhere - set(FIELD_WHY))
    assert not missing, f"{engine}: fields a choice sets with no explanation in plan/fit.py FIELD_WHY: {missing}"
    assert moved, engine


def test_explanations_say_what_the_setting_does():
    # vLLM EngineArgs / SGLang ServerArgs: -tp N shards each layer's weights and KV heads over N ranks
    assert explain("tensor_parallel_size", 2).startswith("tensor parallel") and "2 GPUs" in explain(
        "tensor_parallel_size", 2)
    assert explain("tp_size", 4) == explain("tensor_parallel_size", 4)
    assert "stages" in explain("pipeline_parallel_size", 2)
    assert "weight format" not in explain("tensor_parallel_size", 2)
    assert "weight format" not in explain("gpu_memory_utilization", 0.9)
    assert "weight format" in explain("quantization", "fp8") and "fp8" in explain("quantization", "fp8")
    assert "-ts 24,12" in explain("tensor_split", (24, 12))
    assert explain("no_such_field", 1) is None
    assert _WHY["weights"] == "a smaller weight format"


def test_fit_says_tensor_parallel_for_tensor_parallel():
    """Qwen2.5-32B-Instruct in BF16 is 2 x 32.8 B = 65.5 GB: on two 24 GiB RTX 4090s it needs both GPUs (-tp 2) and
    8-bit weights (--quantization fp8, 32.8 GB over two GPUs); fit turns both, and says each for what it does."""
    f = fit(["vllm", "serve", "Qwen/Qwen2.5-32B-Instruct"], devices_from(gpu="2x RTX 4090"))
    by_flag = {c.flag: c for c in f.changes}
    assert by_flag["tensor_parallel_size"].after == 2
    assert by_flag["tensor_parallel_size"].why.startswith("tensor parallel") and "2 GPUs" in by_flag[
        "tensor_parallel_size"].why
    assert by_flag["quantization"].after == "fp8" and "weight format" in by_flag["quantization"].why


# ---------------------------------------------------------------------------------------------------------
# plan with part of the model in a system RAM nobody gave


def test_a_decode_bound_below_one_token_per_second_is_never_shown_as_zero():
    """810 GB of BF16 weights read from dual-channel DDR5-5600 (89.6 GB/s, speed.py's stated default) is 0.11
    tokens/s: shown as that, not rounded to "≤ 0"."""
    assert tps_number(89.6e9 / 810e9) == "0.11"
    assert tps_number(12.4) == "12" and tps_number(1234.0) == "1,234"
    assert SpeedBound(0.004, 0, {}, "").text == "≤ 0.004 tok/s"
    assert SpeedBound(None, 0, {}, "").text == "unknown"


def test_plan_with_unknown_ram_ranks_offloaded_options_by_the_ram_they_need():
    """Llama 3.1 405B in BF16 is 2 bytes x 405.9 B parameters = 812 GB; beside one 24 GiB RTX 4090 nearly all of it
    sits in system RAM, which --gpu alone does not give. The option was ranked first at a bound printed "≤ 0 tok/s"
    with nothing said of the ~750 GiB of RAM it needs. The bound is now shown (one token reads >= 750 GB at 89.6
    GB/s: below 0.12 tok/s), the note says how much RAM the options need, and those too slow to read along (every
    one here) go least RAM first."""
    p = plan("meta-llama/Llama-3.1-405B-Instruct", "llama.cpp", devices=devices_from(gpu="RTX 4090"),
             goals=Goals(), quant="BF16", limit=None)
    assert p.options and all(o.tier == 2 for o in p.options)
    best = p.best
    ram = best.estimate.host.total_bytes
    assert 700 * GiB < ram < 812e9  # the weights less the few layers the GPU holds
    assert 0 < best.rating.tokens_per_s < 89.6e9 / 700e9
    assert best.rating.bound.text.startswith("≤ 0.") and best.rating.bound.text != "≤ 0 tok/s"
    note = next(n for n in p.notes if n.startswith("system RAM not checked"))
    assert f"{ram / GiB:,.1f} GiB of system RAM" in note and "give --ram SIZE" in note

    q = plan("meta-llama/Llama-3.1-405B-Instruct", "llama.cpp", devices=devices_from(gpu="RTX 4090"),
             goals=Goals(), limit=None)
    tier2 = [o.estimate.host.total_bytes for o in q.options if o.tier == 2]
    assert tier2 == sorted(tier2)  # the least RAM first: the one most likely to run where RAM is not known
    assert q.options[0].rating.weight_bits < 3  # a 2-bit format, not the BF16 of 750 GiB in RAM


def test_plan_with_64gib_of_ram_finds_no_option_and_names_eight_rtx_5090():
    """With --ram 64GiB no option fits one RTX 4090 (405 B parameters at even 2 bits are ~100 GB). The smallest
    catalog hardware: Q4_K_M of Llama 3.1 405B is 243 GB (226 GiB) of weights, more than seven 31.84 GiB RTX 5090s
    hold (222.9 GiB) and less than eight (254.7 GiB)."""
    p = plan("meta-llama/Llama-3.1-405B-Instruct", "llama.cpp", devices=devices_from(gpu="RTX 4090"),
             goals=Goals(ram_bytes=64 * GiB), limit=None)
    assert not p.options and p.tier == 3
    hw = p.smallest_hardware
    assert hw is not None and hw.count == 8 and "RTX 5090" in hw.gpu
    assert 7 * 31.84 * GiB < hw.needed_bytes < 8 * 31.84 * GiB


def test_the_json_bound_below_one_token_per_second_is_not_zero():
    """A bound of 0.004 tok/s (a 2 TB model's weights read from 89.6 GB/s of RAM: 89.6 / 22,400) was 0.0 in plan
    --json; it keeps two significant digits. One decimal from 1 tok/s up, as before."""
    from oomkit.plan.rating import _tps_figure  # a private helper of the JSON rating

    assert _tps_figure(89.6 / 22400) == 0.004 and _tps_figure(0.11) == 0.11 and _tps_figure(12.34) == 12.3


def test_fit_turns_tensor_parallel_alone_where_it_is_enough():
    """Qwen2.5-14B-Instruct in BF16 is 2 x 14.77 B = 29.5 GB, more than one 24 GiB RTX 4090 and 14.8 GB a GPU at -tp
    2 (vLLM shards each linear layer over the ranks): -tp 2 is the whole fix, without converting the weights to fp8,
    which fit added when the layout came only with a weight format."""
    f = fit(["vllm", "serve", "Qwen/Qwen2.5-14B-Instruct"], devices_from(gpu="2x RTX 4090"))
    assert [(c.flag, c.after) for c in f.changes] == [("tensor_parallel_size", 2)]
    assert f.changes[0].why.startswith("tensor parallel") and "weights" not in f.knobs
