"""SGLang flags held against the release that runs them: engines/data/sglang_flags.json (tools/build_sglang_flags.py,
from the wheels' sglang/srt/server_args.py and arg_groups/fields) keeps, per flag, the releases read whose parser
has it; a flag the chosen release does not define is refused as its argparse refuses it.

Each boundary was read in the two wheels named (pip download --no-deps sglang==X): the flag is defined in the first
and not in the second."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.cmdline import parse_command
from oomkit.engines.sglang.kv import check_release_flags
from oomkit.engines.sglang.settings import NEWEST
from oomkit.errors import OomkitError

TABLE = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "engines" / "data" / "sglang_flags.json"


def _settings(*flags: str, version: str | None = None):
    s = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *flags],
                      env={}).settings
    return s if version is None else replace(s, engine_version=version)


REMOVED = [
    (["--enable-ep-moe"], "0.5.4", "0.5.4.post1"),
    (["--enable-deepep-moe"], "0.5.4", "0.5.4.post1"),
    (["--disable-flashinfer"], "0.4.1", "0.4.2"),
    # 0.5.20 moved the CUDA graph options to arg_groups/fields/exec_.py: --cuda-graph-max-bs-{decode,prefill}
    (["--cuda-graph-max-bs", "8"], "0.5.19", "0.5.20"),
]


@pytest.mark.parametrize("argv,last,gone", REMOVED, ids=[r[0][0] for r in REMOVED])
def test_a_removed_flag_is_refused_from_the_release_that_dropped_it(argv, last, gone):
    check_release_flags(_settings(*argv, version=last))
    with pytest.raises(OomkitError) as e:
        check_release_flags(_settings(*argv, version=gone))
    err = str(e.value)
    assert err.startswith(f"launch_server.py: error: unrecognized arguments: {argv[0]} (SGLang {gone} has no such "
                          "flag"), err
    assert f"last read in the {last} wheel" in err, err


ADDED = [
    (["--enable-dp-lm-head"], "0.4.6.post4", "0.4.6.post3"),
    (["--pp-size", "2"], "0.4.6.post2", "0.4.6.post1"),
    (["--max-mamba-cache-size", "64"], "0.5.2", "0.5.1"),
]


@pytest.mark.parametrize("argv,first,before", ADDED, ids=[a[0][0] for a in ADDED])
def test_a_new_flag_is_refused_by_older_releases(argv, first, before):
    check_release_flags(_settings(*argv, version=first))
    with pytest.raises(OomkitError, match=rf"unrecognized arguments: {argv[0]} \(SGLang {before} has no such flag: "
                                          rf"{argv[0]}: first in {first}"):
        check_release_flags(_settings(*argv, version=before))


def test_newest_release_and_the_table():
    s = _settings("--tp-size", "2", "--mem-fraction-static", "0.8", "--enable-dp-attention")
    assert s.engine_version == NEWEST
    check_release_flags(s)
    with pytest.raises(OomkitError, match="unrecognized arguments: --enable-ep-moe"):
        check_release_flags(_settings("--enable-ep-moe"))
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    for rel in ("0.4.0", "0.4.6", "0.5.0rc2", "0.5.5", "0.5.23"):
        assert rel in data["releases"], rel
    assert set(data["spans"]) == set(data["flags"])
