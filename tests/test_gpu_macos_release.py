"""--gpu names a Mac's macOS release, which picks Metal's default working set (memory.py apple_default_gpu_share:
macOS 13-15 give 2/3 of the RAM up to 32 GiB and 3/4 above, macOS 26 0.74-0.84, tests/test_metal_working_set.py).

Written after the chip, in brackets or as its own part: "M3 Ultra 512GB (macOS 15)", "M3 Ultra 512GB macOS 15.4",
"M3 Ultra 512GB, macOS Sequoia". An unknown or garbled release is a one-line error, exit 2.
"""

from __future__ import annotations

import json

import pytest

from oomkit.engines.shell_words import split_command
from oomkit.errors import HardwareError
from oomkit.hardware.catalog import devices_for_names
from oomkit.units import GiB
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)


@pytest.mark.parametrize("text", ["M3 Ultra 512GB (macOS 15)", "M3 Ultra 512GB macOS 15.4", "M3 Ultra 512GB, macOS 15",
                                  "Apple M3 Ultra 512GB (MacOS Sequoia)", "M3 Ultra 512GB (macos 14)"])
def test_a_release_of_macos_13_to_15_rides_on_the_mac(text):
    (dev,) = devices_for_names(text)
    assert dev.id == "MTL0" and dev.memory_bytes == 512 * GiB and dev.macos in (14, 15)


def test_no_release_is_the_newest_rule_and_tahoe_is_26():
    assert devices_for_names("M3 Ultra 512GB")[0].macos is None
    assert devices_for_names("M3 Ultra 512GB (macOS 26.1)")[0].macos == 26
    assert devices_for_names("M3 Ultra 512GB (macOS Tahoe)")[0].macos == 26


@pytest.mark.parametrize("text", ["M3 Ultra 512GB (macOS 16)", "M3 Ultra 512GB (macOS banana)", "M3 Ultra 512GB (macOS)",
                                  "M3 Ultra 512GB (macOS 15 26)", "macOS 15", "RTX 4090 (macOS 15)"])
def test_an_unknown_or_misplaced_release_is_refused(text):
    with pytest.raises(HardwareError):
        devices_for_names(text)


def test_the_cli_refuses_a_garbled_release_in_one_line():
    rc, out, err = run_cli("check", "--json", "--gpu", "M3 Ultra 512GB (macOS 15x)", "--",
                           *split_command("mlx_lm.server --model mlx-community/DeepSeek-v3-0324-4bit"))
    assert rc == 2 and "macOS" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_mlx98_macos_15_working_set_and_warning():
    # mlx-lm#98 (M3 Ultra 512GB, macOS 15.4): mlx_lm warned "Generating with a model that requires ... close to the
    # maximum recommended size" for DeepSeek-V3-0324-4bit. macOS 15's working set on 512 GiB is 3/4, 393,216 MiB
    # (412.32 GB), the rule read off the 32-96 GiB logs of tests/fixtures/metal_working_set/logs.jsonl; unnamed, the
    # newest macOS's 464 GiB leaves the model under 0.9 of it and no warning
    rc, out, err = run_cli("check", "--json", "--gpu", "M3 Ultra 512GB (macOS 15)", "--",
                           *split_command("mlx_lm.server --model mlx-community/DeepSeek-v3-0324-4bit"))
    assert rc in (0, 1), err
    d = json.loads(out)
    assert d["devices"][0]["budget_bytes"] == 393_216 * 2**20
    assert "maximum recommended size of 393216 MB" in out
