"""What `fit` says of each setting it turns: the engine's own meaning of that setting, never another's. A vLLM
`--tensor-parallel-size 1 -> 2` was explained as "a smaller weight format" (every field a weight choice moved got
that line); each field any engine's knob space may set now has its own line, and a new knob without one fails here."""

from __future__ import annotations

from dataclasses import fields

import pytest

from oomkit.engines.base import get_engine
from oomkit.plan.fit import _WHY, FIELD_WHY, explain, fit
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
