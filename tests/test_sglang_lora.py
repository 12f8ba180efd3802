"""SGLang's LoRA memory pool (engines/sglang/lora.py): the buffers lora/mem_pool.py LoRAMemoryPool.init_buffers
allocates between load_model and the KV pool's profile (model_runner.py initialize: init_lora_manager before
init_memory_pool), worked out here by hand from get_lora_A_shape / get_lora_B_shape (0.5.1-0.5.10), not from oomkit.
No public SGLang log with a LoRA pool and its KV figures was found to hold it against."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.sglang import ENGINE
from oomkit.engines.sglang.args import format_command, parse_args
from oomkit.errors import OomkitError
from oomkit.request import resolve_model
from tests.startup_heldout import gpus
from tests.sweep_harness import offline  # noqa: F401  (offline: autouse, no hub)

QWEN7 = "Qwen/Qwen2.5-7B-Instruct"


def _est(model: str, argv: list[str], version: str = "0.5.9"):
    _, _, s = parse_args(["--model-path", model, *argv])
    return ENGINE.estimate(resolve_model(ENGINE, model), gpus("H100", 1), replace(s, engine_version=version))


def _kv(est) -> int:
    return sum(p["k_bytes"] + p["v_bytes"] for p in est.engine_view["kv_pools"])


# Qwen2.5-7B (hidden 3584, 28 heads and 4 KV heads of 128, intermediate 18944, 28 layers), one GPU, bf16, rank 16,
# max_loras_per_batch 8 (the default): per layer qkv_proj A [8, 48, 3584] B [8, 128 x 36, 16]; o_proj A [8, 16, 3584]
# B [8, 3584, 16]; gate_up_proj A [8, 32, 3584] B [8, 37888, 16]; down_proj A [8, 16, 18944] B [8, 3584, 16]
QWEN7_LAYER = (3 * 16 * 3584 + 128 * 36 * 16 + 16 * 3584 + 3584 * 16 + 2 * 16 * 3584 + 2 * 18944 * 16
               + 16 * 18944 + 3584 * 16)
QWEN7_POOL = 8 * 28 * QWEN7_LAYER * 2  # 645,922,816 bytes


@pytest.mark.parametrize("version", ["0.5.2", "0.5.9"])
def test_pool_comes_off_the_kv_cache(version):
    plain = _est(QWEN7, [], version)
    lora = _est(QWEN7, ["--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "all"], version)
    assert QWEN7_POOL == 645_922_816
    drop = _kv(plain) - _kv(lora)
    per_token = _kv(plain) // plain.engine_view["max_total_num_tokens"]
    assert 0 <= drop - QWEN7_POOL < per_token  # whole tokens of the pool
    assert not any("LoRA" in w for w in lora.warnings)


def test_attention_targets_only():
    """--lora-target-modules q_proj v_proj: one qkv_proj buffer pair (get_normalized_target_modules), x 4 slots."""
    lora = _est(QWEN7, ["--lora-paths", "a=/x", "--max-lora-rank", "8", "--lora-target-modules", "q_proj", "v_proj",
                        "--max-loras-per-batch", "4"])
    want = 4 * 28 * (3 * 8 * 3584 + 128 * 36 * 8) * 2
    drop = _kv(_est(QWEN7, [])) - _kv(lora)
    assert 0 <= drop - want < _kv(lora) // lora.engine_view["max_total_num_tokens"]


def test_adapters_own_shapes_stay_a_note():
    """--lora-paths alone: the rank and modules are the adapters' (lora_manager.py init_lora_shapes), not counted."""
    _, _, s = parse_args(["--model-path", QWEN7, "--lora-paths", "a=/x"])
    assert s.enable_lora and any(u.startswith("--lora-paths") for u in s.unmodelled)
    assert _kv(_est(QWEN7, ["--lora-paths", "a=/x"])) == _kv(_est(QWEN7, []))


def test_moe_model_says_not_sized():
    est = _est("Qwen/Qwen3-30B-A3B", ["--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "all"])
    assert any("LoRA memory pool is not sized" in w for w in est.warnings), est.warnings


def test_command_keeps_the_flags():
    _, _, s = parse_args(["--model-path", QWEN7, "--enable-lora", "--max-lora-rank", "32", "--lora-target-modules",
                          "q_proj", "o_proj", "--max-loras-per-batch", "2"])
    cmd = format_command(QWEN7, s)
    i = cmd.index("--lora-target-modules")
    assert cmd[i + 1:i + 3] == ["q_proj", "o_proj"] and "--enable-lora" in cmd
    assert cmd[cmd.index("--max-lora-rank") + 1] == "32" and cmd[cmd.index("--max-loras-per-batch") + 1] == "2"


def test_bad_count_refused():
    with pytest.raises(OomkitError):
        parse_args(["--model-path", QWEN7, "--enable-lora", "--max-loras-per-batch", "0"])
