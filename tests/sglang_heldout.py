"""Shared checks of the SGLang held-out start-up sets (7 and later): fixture loading, the printed "GB" figures
(GiB in SGLang's log, utils.get_available_gpu_memory), and the bands those sets hold oomkit to."""
from __future__ import annotations

import json
from pathlib import Path

from oomkit.units import GiB

WEIGHTS_LIMIT = 0.03  # weights per rank, relative to the printed load
GPU_BAND = 0.03  # free memory end to end, as a share of the GPU (the earlier sets' band)


def load(here: Path, stem: str) -> dict:
    return json.loads((here / f"{stem}.json").read_text(encoding="utf-8"))


def gb(text: str) -> int:
    return int(round(float(text) * GiB))


def line_value(est, prefix: str, key: str) -> float:
    line = next(x for x in est.engine_view["log"].split("\n") if x.startswith(prefix))
    return float(line.split(key)[1].split(" GB")[0])


def assert_avail_mem(est, prefix: str, printed: str, key: str = "avail mem=") -> None:
    """The `key` figure of oomkit's log line starting with `prefix` against the printed one, within GPU_BAND of
    the GPU."""
    err = (line_value(est, prefix, key) * GiB - gb(printed)) / est.devices[0].memory_bytes
    assert abs(err) < GPU_BAND, (prefix, f"{err:+.2%}")


def assert_weights(est, printed: str) -> None:
    """The first rank's weights against the printed load, within WEIGHTS_LIMIT of it."""
    err = (est.devices[0].weights_bytes - gb(printed)) / gb(printed)
    assert abs(err) < WEIGHTS_LIMIT, f"{err:+.2%}"


def assert_every_fixture_cites_its_thread(here: Path) -> None:
    paths = sorted(here.glob("*.json"))
    assert paths, here
    for path in paths:
        fx = json.loads(path.read_text(encoding="utf-8"))
        assert fx["source"].startswith("https://github.com/"), path.name
        assert fx["quoted"] and fx["printed"], path.name
