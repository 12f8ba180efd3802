"""macOS's default Metal working set (MTLDevice.recommendedMaxWorkingSetSize with iogpu.wired_limit_mb at 0):
memory.py apple_default_gpu_share against the figures public threads print (tests/fixtures/metal_working_set/
logs.jsonl, one line per report with its URL and the line quoted). IOGPU, which sets the figure, is closed source,
so the rule is the one these figures give:

    RAM      macOS      printed                               share   source
    16 GiB   26.6.2     12.7 GB Metal working set             0.74    carloslfu/slotstream#5
    16 GiB   -          11.84 GB (GiB) GPU-available          0.74    AlexsJones/llmfit#754
    24 GiB   -          19069.67 MB                           0.74    ontouchstart/rabbit-holes (a repository log)
    36 GiB   -          30.2 GB Metal working set             0.78    carloslfu/slotstream#26
    48 GiB   -          40,200,896,512 bytes (automatic)      0.78    utensils/mold#1542
    48 GiB   -          38,338 MB (MiB) as VRAM               0.78    secondlife/viewer#6034
    48 GiB*  -          40200.90 MB (M5 Max)                  0.78    ggml-org/llama.cpp#16634
    64 GiB   27.0       55.7 GB Metal working set             0.81    carloslfu/slotstream#22
    96 GiB   -          83,494,174,720 bytes (M3 Ultra)       0.81    RedesignedRobot/openmm-metal-lab (a repository log)
    96 GiB   -          working set 77.76 GiB (M3 Ultra)      0.81    seabit-ai/lmk (a repository log)
    128 GiB  26.6.2     115.4 GB Metal working set            0.84    carloslfu/slotstream#6
    128 GiB  26.x       107.52 GiB (stock)                    0.84    antirez/ds4#893
    128 GiB  26         ~84% (~107.5 GiB)                     0.84    osaurus-ai/osaurus#1958
    192 GiB* -          165150 MiB (M2 Ultra, January 2026)   0.84    ggml-org/llama.cpp#18919
    256 GiB  27.0       228065 MiB (M3 Ultra)                 0.87    mindmonkey-ai/chekov (a repository document)
    256 GiB  -          239 GB max_recommended (M3 Ultra)     0.87    raullenchai/Rapid-MLX#183
    512 GiB  -          498216.21 MB (464 GiB)                29/32   jjang-ai/vmlx#50's Mac
    512 GiB  -          498216.21 MB (April 2026)             29/32   omar16100/llm-benchmark (a repository write-up)
    16 GiB*  15.x       11453.25 MB (M4, January 2025)        2/3     ggml-org/llama.cpp#11083
    16 GiB   15.6       ~10.67 GB (GiB)                       2/3     exo-explore/exo#1672
    16 GiB   (2023)     10922.67 MiB                          2/3     ise-uiuc/magicoder#19, llama-cpp-python#687
    32 GiB   (2023)     21845.34 MiB                          2/3     ollama/ollama#434
    32 GiB*  (2025)     22906.50 MB                           2/3     ollama/ollama#10395
    48 GiB   (2026)     working_set=36.00GiB                  3/4     lmstudio-ai/lmstudio-bug-tracker#2191
    64 GiB   (2023-24)  49152.00 MiB, 51539.61 MB             3/4     ggml-org/llama.cpp#1870, #9112
    96 GiB   (2023)     73728,00 MB (MiB)                     3/4     ggml-org/llama.cpp#3213
    (* the RAM read off the chip's sizes, not stated)

Every figure is the fraction rounded up to a whole 16 KiB page: 2/3 of 32 GiB prints 21845.34 MiB, not .33. No
macOS 26 figure was found for an 8 GiB Mac (it takes 16 GiB's 0.74). 512 GiB's 464 GiB is a whole number of MiB, so
neither of its logs rules out a limit set by hand to it; a third, a 464.00 GiB "Recommended working set" on an M3
Ultra in neobundy/CWK-Deep-Dive-Into-AI-Reboot, dates from May 2025 (macOS 15, whose rule gives 3/4 there, mlx-lm#98)
and is not counted.
Three figures are limits set by hand, not the default (kind "set"): 60 GiB on a 64 GB M3 Max on macOS 27.0 where
the 64 GB M4 Max on the same release prints 55.7 GB (slotstream#20), 180000 MiB on an M2 Ultra (mlx#1060) and
16 GiB + one page on a 24 GB M4 Pro (alekseybb197/local-llm).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from oomkit.hardware.detect import detect, macos_major
from oomkit.memory import APPLE_PAGE, MACOS_NEWEST, apple_default_gpu_share
from tests.hardware_fakes import GiB, MiB, replay

LOGS = [json.loads(line) for line in
        (Path(__file__).parent / "fixtures" / "metal_working_set" / "logs.jsonl").read_text().splitlines()]
UNIT = {"bytes": 1, "MB": 10**6, "GB": 10**9, "MiB": MiB, "GiB": GiB}


def _as_printed(nbytes: int, log: dict) -> float:
    x = nbytes / UNIT[log["unit"]]
    return math.floor(x) if log["rounding"] == "floor" else round(x, log["decimals"])


def _id(log: dict) -> str:
    return f"{log['source'].split('github.com/')[1]}-{log['ram_gib']}GiB"


def test_every_line_cites_its_thread_and_quotes_the_figure():
    assert len(LOGS) >= 12
    for log in LOGS:
        assert log["source"].startswith("https://github.com/"), log
        assert log["kind"] in ("default", "set") and log["unit"] in UNIT
        printed = f"{log['value']:,.{log['decimals']}f}"
        plain = f"{log['value']:.{log['decimals']}f}"
        assert any(p in log["printed"] for p in (printed, plain, plain.replace(".", ","))), log
    issues = [log for log in LOGS if log["kind"] == "default" and "/blob/" not in log["source"]]
    assert len(issues) >= 12


@pytest.mark.parametrize("log", [x for x in LOGS if x["kind"] == "default"], ids=_id)
def test_default_working_set_as_printed(log):
    share = apple_default_gpu_share(log["ram_gib"] * GiB, log["rule_macos"])
    assert _as_printed(share, log) == pytest.approx(log["value"], abs=10 ** -log["decimals"] / 2), log["notes"]


@pytest.mark.parametrize("log", [x for x in LOGS if x["kind"] == "set"], ids=_id)
def test_limits_set_by_hand_are_no_default(log):
    """A set iogpu.wired_limit_mb: the figure is neither rule's default, and is whole MiB (or one page more)."""
    value = log["value"] * UNIT[log["unit"]]
    slack = UNIT[log["unit"]] * 10 ** -log["decimals"]  # one unit of the last printed digit
    for macos in (15, MACOS_NEWEST):
        assert abs(apple_default_gpu_share(log["ram_gib"] * GiB, macos) - value) > slack / 2, macos
    assert any(abs(round(value / MiB) * MiB + page - value) <= slack for page in (0, APPLE_PAGE))


def test_the_newest_rule_is_the_default():
    for ram in (8, 16, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512):
        assert apple_default_gpu_share(ram * GiB) == apple_default_gpu_share(ram * GiB, MACOS_NEWEST)
        assert apple_default_gpu_share(ram * GiB, 27) == apple_default_gpu_share(ram * GiB, 26)  # slotstream#22
        assert apple_default_gpu_share(ram * GiB, 13) == apple_default_gpu_share(ram * GiB, 15)
        assert apple_default_gpu_share(ram * GiB) % APPLE_PAGE == 0
    # macOS 26 gives more than 13-15 at every size: the old figure is the lower one
    assert all(apple_default_gpu_share(r * GiB) > apple_default_gpu_share(r * GiB, 15) for r in (16, 32, 64, 128))


def test_steps_between_the_sizes_seen_take_the_lower_one():
    # 96 and 192 GiB, once read as the next smaller size's step, print it (0.81, 0.84: the M3 Ultra's 83,494,174,720
    # bytes and llama.cpp#18919's 165150 MiB); 256 GiB has a step of its own, 0.87 (chekov's 228065 MiB on macOS 27.0,
    # Rapid-MLX#183's 239 GB), where 0.84 gave 215.04 GiB. 8 GiB, still with no log, takes 16 GiB's 0.74
    def at(ram, share):
        return math.ceil(ram * GiB * share / APPLE_PAGE) * APPLE_PAGE

    assert apple_default_gpu_share(96 * GiB) == at(96, 0.81) == 83494174720
    assert apple_default_gpu_share(192 * GiB) == at(192, 0.84)
    assert apple_default_gpu_share(256 * GiB) == at(256, 0.87) == 239143780352  # chekov's budget, to the byte
    assert apple_default_gpu_share(256 * GiB) > at(256, 0.84)
    assert apple_default_gpu_share(8 * GiB) == at(8, 0.74)
    # the steps never fall as the RAM grows (to the page rounding)
    shares = [round(apple_default_gpu_share(r * GiB) / (r * GiB), 4) for r in (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512)]
    assert shares == sorted(shares)


def test_detect_reads_the_macos_release(monkeypatch):
    """hardware/detect.py apple_gpus asks sysctl for kern.osproductversion with the memory size and uses that
    release's rule; a sysctl that prints no version gets the newest rule. (The sysctl lines are the shape `sysctl a b
    c` prints, "name: value"; the sizes are those of the reports above.)"""
    def probe(version: str | None):
        lines = ["hw.memsize: 17179869184", "machdep.cpu.brand_string: Apple M4"]
        if version:
            lines.append(f"kern.osproductversion: {version}")
        return replay({"sysctl hw.memsize": (0, "\n".join(lines) + "\n"), "sysctl -n": (0, "0\n")},
                      platform="darwin")

    by_release = {v: detect(probe(v)).gpus[0] for v in ("15.6", "26.6.2", None)}
    assert round(by_release["15.6"].total_bytes / 1e6, 2) == 11453.25  # llama.cpp#11083's M4 16 GB
    assert round(by_release["26.6.2"].total_bytes / 1e6, 2) == 12713.12  # slotstream#5's 12.7 GB
    assert by_release[None].total_bytes == by_release["26.6.2"].total_bytes
    assert any("macOS 15" in n for n in by_release["15.6"].notes)
    assert any("unread" in n for n in by_release[None].notes)
    assert [macos_major(v) for v in ("15.6", "26.6.2", "27.0", "", "x")] == [15, 26, 27, None, None]
