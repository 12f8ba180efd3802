"""vLLM's LoRA adapter slots (engines/vllm/lora.py): the flags that size them, and the bytes the create_lora_weights
shapes give, worked out here by hand from the torch.zeros calls of lora/layers.py (0.8.2) and lora/layers/*.py
(0.11.1-0.34.0), not from oomkit. The load figure of a real start (hiyouga/LlamaFactory#7658, 0.8.2) is asserted in
tests/test_vllm_heldout19.py (test_lora_load)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import format_command, parse_args
from oomkit.errors import OomkitError
from oomkit.request import resolve_model
from tests.startup_heldout import first, gpus
from tests.sweep_harness import offline  # noqa: F401  (offline: autouse, no hub)


def _run(model: str, argv: list[str], version: str, gpu: str = "H100", n: int = 1, **changes):
    _, _, s = parse_args(["serve", model, *argv])
    s = replace(s, engine_version=version, **changes)
    return ENGINE.estimate(resolve_model(ENGINE, model), gpus(gpu, n), s)


def _load(model: str, argv: list[str], version: str, gpu: str = "H100", n: int = 1, **changes) -> int:
    return first(_run(model, argv, version, gpu, n, **changes).engine_view, "model_loading_bytes")


def _slots(model: str, argv: list[str], version: str, **kw) -> int:
    """What --enable-lora (with argv) adds to one rank's "Model loading took"."""
    return _load(model, ["--enable-lora", *argv], version, **kw) - _load(model, [], version, **kw)


def test_flags_parse():
    _, _, s = parse_args(["serve", "m", "--enable-lora", "--max-loras", "4", "--max_lora_rank", "64",
                          "--lora-dtype", "bfloat16", "--fully-sharded-loras", "--lora-modules", "a=/x"])
    assert (s.enable_lora, s.max_loras, s.max_lora_rank, s.lora_dtype, s.fully_sharded_loras) == (
        True, 4, 64, "bfloat16", True)
    assert not any("lora" in u.lower() for u in s.unmodelled)
    _, _, plain = parse_args(["serve", "m"])
    assert (plain.enable_lora, plain.max_loras, plain.max_lora_rank, plain.lora_dtype) == (False, 1, 16, "auto")


@pytest.mark.parametrize("argv", [["--max-lora-rank", "24"], ["--max-lora-rank", "x"], ["--max-loras", "0"],
                                  ["--lora-dtype", "int8"]])
def test_bad_values_refused(argv):
    """LoRAConfig: max_lora_rank one of (1,) 8 ... 512 (possible_max_ranks / MaxLoRARanks), max_loras ge=1, lora_dtype
    a float type: vLLM's error, oomkit's one line."""
    with pytest.raises(OomkitError):
        _, _, s = parse_args(["serve", "m", "--enable-lora", *argv])
        from oomkit.flags import check_settings  # local: only this refusal reads the settings' bounds
        check_settings(s)


def test_command_keeps_lora():
    _, _, s = parse_args(["serve", "m", "--enable-lora", "--max-loras", "2", "--max-lora-rank", "32"])
    cmd = format_command("m", s)
    assert "--enable-lora" in cmd and cmd[cmd.index("--max-loras") + 1] == "2"
    assert cmd[cmd.index("--max-lora-rank") + 1] == "32"


# Qwen2.5-32B (hidden 5120, 40 heads, 8 KV heads of 128, intermediate 27648, 64 layers) at TP 2, rank 16, one slot,
# float16: per layer, qkv_proj (MergedQKVParallelLinearWithLoRA, 3 slices) A 3 x 16 x 5120, B 16 x (2560 + 512 + 512);
# o_proj (RowParallelLinearWithLoRA) A 16 x 2560, B 5120 x 16; gate_up_proj (2 slices) A 2 x 16 x 5120,
# B 2 x 13824 x 16; down_proj A 16 x 13824, B 5120 x 16.
QWEN32_LAYER = (3 * 16 * 5120 + 16 * (2560 + 512 + 512) + 16 * 2560 + 5120 * 16
                + 2 * 16 * 5120 + 2 * 13824 * 16 + 16 * 13824 + 5120 * 16)
QWEN32_TP2 = 64 * QWEN32_LAYER * 2  # 170,917,888 bytes


@pytest.mark.parametrize("version", ["0.8.0", "0.8.2", "0.10.1", "0.11.2", "0.34.0"])
def test_dense_slots_by_hand(version):
    got = _slots("Qwen/Qwen2.5-32B-Instruct", ["--dtype", "float16"], version, n=2,
                 tensor_parallel_size=2)
    assert got == QWEN32_TP2 == 170_917_888


def test_slots_scale_with_loras_rank_and_dtype():
    kw = dict(n=2, tensor_parallel_size=2)
    model, v = "Qwen/Qwen2.5-32B-Instruct", "0.8.2"
    assert _slots(model, ["--dtype", "float16", "--max-loras", "4"], v, **kw) == 4 * QWEN32_TP2
    assert _slots(model, ["--dtype", "float16", "--max-lora-rank", "64"], v, **kw) == 4 * QWEN32_TP2
    assert _slots(model, ["--dtype", "float16", "--lora-dtype", "float32"], v, **kw) == 2 * QWEN32_TP2


def test_fully_sharded():
    """--fully-sharded-loras (ColumnParallelLinearWithShardedLoRA / RowParallelLinearWithShardedLoRA): the column
    layers' A rows are rank / tp, the row layers' B rows output / tp."""
    layer = (3 * 8 * 5120 + 16 * (2560 + 512 + 512) + 16 * 2560 + 2560 * 16
             + 2 * 8 * 5120 + 2 * 13824 * 16 + 16 * 13824 + 2560 * 16)
    got = _slots("Qwen/Qwen2.5-32B-Instruct", ["--dtype", "float16", "--fully-sharded-loras"], "0.8.2",
                 n=2, tensor_parallel_size=2)
    assert got == 64 * layer * 2


def test_fused_moe_experts_from_0_11_1():
    """Qwen3-30B-A3B (hidden 2048, 32 heads, 4 KV heads of 128, 128 experts of 768, 48 layers), one GPU, bf16: the
    attention's slots always; the experts' (FusedMoEWithLoRA: w1, w3 A [128, 16, 2048] B [128, 768, 16]; w2 A
    [128, 16, 768] B [128, 2048, 16]) from 0.11.1 only."""
    attn = 3 * 16 * 2048 + 16 * (4096 + 512 + 512) + 16 * 4096 + 2048 * 16
    experts = 128 * (2 * (16 * 2048 + 768 * 16) + 16 * 768 + 2048 * 16)
    model = "Qwen/Qwen3-30B-A3B"
    assert _slots(model, [], "0.11.0") == 48 * attn * 2
    assert _slots(model, [], "0.11.2") == 48 * (attn + experts) * 2


@pytest.mark.parametrize("version", ["0.6.5", "0.7.3"])
def test_before_0_8_the_slots_are_outside_the_budget(version):
    """0.6.5-0.7.3 (V0): create_lora_manager runs after load_model's DeviceMemoryProfiler block, and
    memory_profiling's non_kv_cache_memory has no term for it (vllm#14450): the printed weights and the KV budget are
    those of a start without LoRA, and the estimate says how much the GPU holds beyond them."""
    model, kw = "Qwen/Qwen2.5-32B-Instruct", dict(n=2, tensor_parallel_size=2)
    est = _run(model, ["--enable-lora", "--dtype", "float16"], version, **kw)
    plain = _run(model, ["--dtype", "float16"], version, **kw)
    for key in ("model_loading_bytes", "available_kv_cache_bytes"):
        assert first(est.engine_view, key) == first(plain.engine_view, key), key
    assert any("adapter slots (0.16 GiB a rank)" in w and "vllm#14450" in w for w in est.warnings), est.warnings


def test_up_to_0_6_4_the_profile_peak_counts_them():
    """0.6.1 (worker.py determine_num_available_blocks: init free memory less the free memory after the profile
    run): the slots come off the budget, not through the printed weights."""
    model, kw = "Qwen/Qwen2.5-32B-Instruct", dict(n=2, tensor_parallel_size=2)
    est = _run(model, ["--enable-lora", "--dtype", "float16"], "0.6.1", **kw)
    plain = _run(model, ["--dtype", "float16"], "0.6.1", **kw)
    assert first(est.engine_view, "model_loading_bytes") == first(plain.engine_view, "model_loading_bytes")
    drop = first(plain.engine_view, "available_kv_cache_bytes") - first(est.engine_view, "available_kv_cache_bytes")
    assert drop == QWEN32_TP2
