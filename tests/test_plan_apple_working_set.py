"""`oomkit plan` on an Apple GPU counts against the memory `oomkit check` weighs: Metal's working set
(recommendedMaxWorkingSetSize), not all the unified memory, for every engine that runs there (MLX, llama.cpp Metal,
Ollama Metal); and MLX launch commands name the Hugging Face repo mlx_lm loads, not an Ollama tag."""

from __future__ import annotations

import pytest

from oomkit.check import check
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.plan.options import HOST, UNIFIED, Goals, budgets
from oomkit.plan.search import plan
from oomkit.request import devices_from

# recommendedMaxWorkingSetSize as macOS 26 gives it on Macs of these sizes (MB = 10^6 bytes; the threads in
# tests/fixtures/metal_working_set/logs.jsonl): 128 GB M5 Max "115.4 GB Metal working set" (slotstream#6, 115448.73
# MB), 64 GB M4 Max "55.7 GB" (slotstream#22, 55662.79 MB); macOS 13-15 gave 3/4 (103079.22, 51539.61 MB)
WORKING_SET_128GB = 115_448_725_504  # 110,100 MiB, as llama.cpp's --fit prints it ("110100 MiB of free device memory")
WORKING_SET_64GB = 55_662_788_608  # 53,084 MiB
M4_MAX_128 = "M4 Max 128GB"


@pytest.mark.parametrize(("gpu", "working_set"), [(M4_MAX_128, WORKING_SET_128GB), ("M4 Max 64GB", WORKING_SET_64GB)])
def test_plan_budget_of_an_apple_gpu_is_metals_working_set(gpu, working_set):
    devices = devices_from(gpu=gpu)
    assert [d.memory_bytes for d in devices] == [int(gpu.split()[-1][:-2]) << 30]  # the catalog: the unified RAM
    ram = int(gpu.split()[-1][:-2]) << 30
    # and the unified RAM, which the GPU's buffers and the CPU's layers share (options.UNIFIED)
    assert budgets(devices, Goals()) == {devices[0].id: working_set, HOST: None, UNIFIED: ram}
    # what other programs hold and the headroom asked come off the working set, not off the RAM
    held = budgets(devices, Goals(reserve_bytes=1 << 30, headroom_bytes=2 << 30))
    assert held[devices[0].id] == working_set - (3 << 30)


@pytest.mark.parametrize("engine", ["mlx", "llama.cpp", "ollama"])
def test_plan_headroom_on_an_apple_gpu_is_what_check_leaves(engine):
    """Each option's headroom equals check's "left" for its launch command (qwen3:8b on an M4 Max 128GB: check
    weighs 110,100 MiB, the working set), and no option uses more than the working set."""
    devices = devices_from(gpu=M4_MAX_128)
    p = plan("qwen3:8b", engine, devices=devices, limit=4)
    assert p.options
    for o in p.options:
        parsed = parse_command(list(o.argv))
        r = check(parsed.model, parsed.engine, quant=parsed.quant, settings=parsed.settings, gpu=M4_MAX_128)
        assert [d.budget_bytes for d in r.devices] == [WORKING_SET_128GB]
        assert r.fits is True
        assert o.headroom_bytes == r.margin_bytes, (o.label, o.headroom_bytes, r.margin_bytes)
        assert sum(u.total_bytes for u in o.estimate.devices) + o.headroom_bytes == WORKING_SET_128GB


@pytest.mark.parametrize("engine", ["mlx", "llama.cpp"])
def test_plan_on_an_apple_gpu_offers_nothing_past_the_working_set(engine):
    """Llama 3.1 70B on an M4 Max 128GB: the options that reach the most context fill the working set (107.52 GiB),
    not the 128 GiB of RAM: none needs more than 110,100 MiB and every headroom is what the working set leaves."""
    devices = devices_from(gpu=M4_MAX_128)
    p = plan("llama3.1:70b", engine, devices=devices, limit=6)
    assert p.options
    for o in p.options:
        used = sum(u.total_bytes for u in o.estimate.devices)
        assert o.tier == 1 and used <= WORKING_SET_128GB, (o.label, used)
        assert 0 <= o.headroom_bytes == WORKING_SET_128GB - used


def test_mlx_plan_commands_name_the_repo_mlx_lm_loads():
    """mlx_lm.generate --model takes a Hugging Face repo or a local path (mlx_lm/utils.py load): an Ollama tag is
    written as the checkpoint the estimate read (qwen3:8b -> Qwen/Qwen3-8B, as vLLM and SGLang commands name it),
    and the command parses back through check to the same estimate; a repo the user named stays as named."""
    devices = devices_from(gpu=M4_MAX_128)
    p = plan("qwen3:8b", "mlx", devices=devices, limit=3)
    assert p.options
    for o in p.options:
        # the checkpoint as published, or the mlx-community conversion holding other bits (mlx_lm.generate has no
        # --q-bits: args.quantized_repo); what else sizes it (the prompt's length) rides apart (o.sizing)
        assert o.argv[:3] in (("mlx_lm.generate", "--model", "Qwen/Qwen3-8B"),
                              ("mlx_lm.generate", "--model", "mlx-community/Qwen3-8B-8bit"),
                              ("mlx_lm.generate", "--model", "mlx-community/Qwen3-8B-4bit")), o.argv
        parsed = parse_command([*o.argv, *o.sizing])
        r = check(parsed.model, "mlx", settings=parsed.settings, gpu=M4_MAX_128)
        assert r.estimate.to_dict()["devices"] == o.estimate.to_dict()["devices"]
        assert r.estimate.to_dict()["total_bytes"] == o.estimate.to_dict()["total_bytes"]
    named = plan("mlx-community/Qwen3-8B-4bit", "mlx", devices=devices, limit=2)
    assert named.options and all(o.argv[2] in ("mlx-community/Qwen3-8B-4bit", "mlx-community/Qwen3-8B-8bit")
                                 for o in named.options)
    assert get_engine("mlx").command("qwen3:8b", get_engine("mlx").settings())[2] == "qwen3:8b"  # as asked, outside plan
