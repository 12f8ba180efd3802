"""Hostile environment variables: Ollama's OLLAMA_* and the LLAMA_ARG_* it hands its llama-server, set to what a
careless shell or a hostile config gives ('²', '-1', '1e99', 'nan', '', blanks, huge numbers).

Ollama reads its numbers with envconfig.Uint (strconv.ParseUint(s, 10, 64)); one it cannot read is logged
("invalid environment variable, using default") and the default used (ollama envconfig/config.go), so oomkit
estimates with the default too and says so in the output. llama-server will not start on a LLAMA_ARG_* it cannot
read with std::stoi (common/arg.cpp: "error while handling environment variable"), so oomkit refuses it: exit 2,
one line. Never a traceback, never a hang.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.cli import main
from oomkit.flags import go_uint

TRIED: Counter[str] = Counter()
HYPO = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NASTY = ["²", "-1", "1e99", "nan", "", " ", "0", "1", "8192", "+8", "0x10", "1_024", "١٠٢٤", "inf", "\"8192\"",
         "'4096'", " 4096 ", "18446744073709551615", "18446744073709551616", "9" * 200, "true", "yes", "12abc",
         "\t", "4096\n", "NaN", "-0"]
values = st.one_of(st.sampled_from(NASTY), st.text(max_size=10).filter(lambda s: "\x00" not in s),
                   st.integers(min_value=-(2**70), max_value=2**70).map(str))
COMMAND = ["--", "ollama", "run", "llama3.1:8b"]


def run(argv: list[str]) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue(), time.perf_counter() - t


def ollama(var: str, value: str, *extra: str) -> tuple[int, dict | None, str]:
    """`oomkit estimate --vram 24GiB --env VAR=value --json -- ollama run llama3.1:8b`: (rc, JSON, stderr)."""
    TRIED[var] += 1
    rc, out, err, secs = run(["estimate", "--vram", "24GiB", "--json", "--env", f"{var}={value}", *extra, *COMMAND])
    assert "Traceback" not in out + err and "internal error" not in err, (var, value, err)
    assert rc in (0, 2) and secs < 3.0, (var, value, rc, secs)
    if rc == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("oomkit: error: "), err
    return rc, (json.loads(out) if rc == 0 else None), err


def _trimmed(value: str) -> str:
    """envconfig.Var: surrounding blanks, then quotes, trimmed."""
    return value.strip().strip("\"'")


@pytest.mark.parametrize("var", ["OLLAMA_CONTEXT_LENGTH", "OLLAMA_NUM_PARALLEL", "OLLAMA_GPU_OVERHEAD"])
@given(value=values)
@HYPO
def test_ollama_uint_variables_fall_back_to_the_default_with_a_warning(var, value):
    rc, est, err = ollama(var, value)
    s = _trimmed(value)
    n = go_uint(s) if s else None
    if var == "OLLAMA_NUM_PARALLEL" and n is not None and n > 1024:
        assert rc == 2 and "OLLAMA_NUM_PARALLEL" in err
        return
    assert rc == 0, (var, value, err)
    warned = any(var in w and "invalid environment variable" in w for w in est["warnings"])
    assert warned == (bool(s) and n is None), (var, value, est["warnings"])
    if bool(s) and n is None:  # the default, as Ollama uses it: the same estimate as without the variable
        assert est["total_bytes"] == _baseline()["total_bytes"], (var, value)


_BASE: dict = {}


def _baseline() -> dict:
    if not _BASE:
        rc, out, err, _ = run(["estimate", "--vram", "24GiB", "--json", *COMMAND])
        assert rc == 0, err
        _BASE.update(json.loads(out))
    return _BASE


@pytest.mark.parametrize("value,used", [("8192", 8192), (" 8192 ", 8192), ("'8192'", 8192)])
def test_ollama_context_length_read_as_ollama_reads_it(value, used):
    rc, est, err = ollama("OLLAMA_CONTEXT_LENGTH", value)
    assert rc == 0 and est["settings"]["num_ctx"] == used, err


@pytest.mark.parametrize("var", ["OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_SCHED_SPREAD",
                                 "OLLAMA_NEW_ENGINE"])
@given(value=values)
@settings(HYPO, max_examples=10)
def test_ollama_string_and_switch_variables_hold_the_promise(var, value):
    ollama(var, value)


@given(value=values)
@settings(HYPO, max_examples=25)
def test_llama_arg_fit_target_refused_where_llama_server_would_not_start(value):
    rc, est, err = ollama("LLAMA_ARG_FIT_TARGET", value)
    import re

    parts = value.split(",")
    readable = all(re.fullmatch(r"[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*", p)
                                          and -(2**31) <= int(p) < 2**31 and int(p) >= 0 for p in parts)
    assert (rc == 0) == readable, (value, err)


@pytest.mark.parametrize("var,value", [("OLLAMA_CONTEXT_LENGTH", "²"), ("OLLAMA_NUM_PARALLEL", "²"),
                                       ("OLLAMA_GPU_OVERHEAD", "²"), ("LLAMA_ARG_FIT_TARGET", "²"),
                                       ("OLLAMA_NUM_PARALLEL", "1e99"), ("OLLAMA_CONTEXT_LENGTH", "nan")])
def test_issue_examples_in_a_real_environment(var, value):
    """The variables as a shell sets them (not --env): a child `python -m oomkit`, no traceback, under a second of
    work beyond start-up."""
    TRIED[var] += 1
    env = {**os.environ, var: value}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "--vram", "24GiB", *COMMAND], env=env,
                       capture_output=True, text=True, timeout=30)
    assert "Traceback" not in r.stderr and r.returncode in (0, 2), r.stderr
    if var == "LLAMA_ARG_FIT_TARGET":
        assert r.returncode == 2 and "LLAMA_ARG_FIT_TARGET" in r.stderr
    else:
        assert r.returncode == 0 and "invalid environment variable" in r.stdout
    assert time.perf_counter() - t < 5.0


_C_INT = r"[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*"


@pytest.mark.parametrize("var,field,lo", [("LLAMA_ARG_CTX_SIZE", "n_ctx", 0), ("LLAMA_ARG_N_CPU_MOE", "n_cpu_moe", 0),
                                          ("LLAMA_ARG_UBATCH", "n_ubatch", 1)])
@given(value=values)
@settings(HYPO, max_examples=20)
def test_llama_arg_variables_read_as_llama_server_reads_them(var, field, lo, value):
    """`VAR=value llama-server -m MODEL`: read with std::stoi before the arguments; a value it cannot read whole
    stops llama-server, and oomkit; a readable one out of range is refused with the range."""
    TRIED[var] += 1
    rc, out, err, secs = run(["estimate", "--vram", "24GiB", "--json", "--env", f"{var}={value}", "--",
                              "llama-server", "-m", "llama3.1:8b"])
    assert "Traceback" not in err and rc in (0, 2) and secs < 3.0, (value, err)
    import re

    readable = re.fullmatch(_C_INT, value) is not None and -(2**31) <= int(value) < 2**31
    if not readable or int(value) < lo:
        assert rc == 2 and len(err.strip().splitlines()) == 1, (value, err)
    else:
        assert rc == 0, (value, err)
        flag = {"LLAMA_ARG_CTX_SIZE": "-c", "LLAMA_ARG_N_CPU_MOE": "-ncmoe", "LLAMA_ARG_UBATCH": "-ub"}[var]
        rc2, out2, err2, _ = run(["estimate", "--vram", "24GiB", "--json", "--", "llama-server", "-m", "llama3.1:8b",
                                  flag, value.strip()])
        assert rc2 == 0 and json.loads(out)["settings"][field] == json.loads(out2)["settings"][field], err2


def test_llama_arg_variables_under_the_arguments():
    """The command's own flag wins over its variable, as in llama.cpp; LLAMA_ARG_NO_* turns a pair off."""
    rc, out, err, _ = run(["estimate", "--vram", "24GiB", "--json", "--env", "LLAMA_ARG_CTX_SIZE=8192", "--env",
                           "LLAMA_ARG_NO_KV_OFFLOAD=1", "--", "llama-server", "-m", "llama3.1:8b", "-c", "4096"])
    assert rc == 0, err
    s = json.loads(out)["settings"]
    assert s["n_ctx"] == 4096 and s["no_kv_offload"] is True


def test_zz_report_counts(capsys):
    with capsys.disabled():
        print("\nhostile environment values tried:", dict(sorted(TRIED.items())), "total", sum(TRIED.values()))
    assert sum(TRIED.values()) > 0
