"""Real users' input, second sweep: GPUs as people write them (the Mac they bought, "dual 3090", "3090 + 3060", a
card with its memory modified), a size taken from several sold that every command now says, contexts in millions
("--ctx 1M"), a llama.cpp command that uses no GPU (--device none), the error message given to diagnose as its
argument, and a check whose weights alone overflow. The promise: exit 0 / 1 with the right answer and what was
assumed said, or exit 2 with one line; never a traceback, never a negative amount of memory left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.errors import HardwareError
from oomkit.hardware.catalog import devices_for_names, size_notes


def _run(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OOMKIT_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, env=env, cwd=cwd,
                          input=stdin, timeout=120)


# ---- GPUs as people write them (was: "unknown GPU 'Mac Studio M3 Ultra 512GB'", "unknown GPU 'dual 3090'") ----

@pytest.mark.parametrize("text,names", [
    ("Mac Studio M3 Ultra 512GB", ["Apple M3 Ultra 512GB"]),
    ("MacBook Pro M4 Pro 48GB", ["Apple M4 Pro 48GB"]),
    ("Mac mini M4 16GB", ["Apple M4 16GB"]),
    ("Apple Mac Studio M2 Ultra 192GB", ["Apple M2 Ultra 192GB"]),
    ("dual 3090", ["NVIDIA GeForce RTX 3090"] * 2),
    ("quad A100 80GB", ["NVIDIA A100-SXM4-80GB"] * 4),
    ("3090 + 3060 12GB", ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3060 12GB"]),
    ("Ryzen AI Max+ 395 128GB", ["AMD Ryzen AI Max+ 395 128GB"]),  # a plus inside a name stays the name
])
def test_gpu_names_as_people_write_them(text, names):
    assert [d.name for d in devices_for_names(text)] == names


@pytest.mark.parametrize("text,gib", [("4090 48GB", 48), ("2x 2080 Ti 22GB", 22)])
def test_a_card_with_its_memory_modified_is_taken_as_stated_and_said(text, gib):
    devs = devices_for_names(text)
    assert {d.memory_bytes for d in devs} == {gib << 30}
    assert devs[0].bandwidth_gbs  # the card as sold: its bandwidth
    (note,) = size_notes(text)
    assert "taken as stated" in note and f"not {gib} GB" in note


def test_a_chip_at_a_size_it_is_not_sold_with_is_refused_with_the_sizes():
    with pytest.raises(HardwareError, match="M3 Max is sold with 36, 48, 64, 96, 128 GB"):
        devices_for_names("M3 Max 40GB")


@pytest.mark.parametrize("command", [
    ["estimate", "qwen3:8b", "--gpu", "5060ti"],
    ["plan", "qwen3:8b", "--gpu", "5060ti", "--limit", "1"],
    ["fit", "--gpu", "5060ti", "--", "llama-server", "-m", "qwen3:8b"],
    ["table", "qwen3:8b", "--gpu", "5060ti", "--kind", "limits"],
    ["check", "qwen3:8b", "--gpu", "5060ti"],
])
def test_every_command_says_which_size_it_took(command, tmp_path):
    # was: only check said that "5060ti" (sold with 8 or 16 GB) was taken as 8 GB; plan, fit, table and estimate
    # planned for 8 GB silently
    r = _run(*command, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()
    said = (r.stdout + r.stderr).decode()
    assert said.count("is sold with 8 or 16 GB: taken as 8 GB") == 1, said


# ---- contexts in millions, as "32k" already was (was: "--ctx takes an integer, got '1M'") ----

@pytest.mark.parametrize("ctx,tokens", [("1M", 1 << 20), ("1m", 1 << 20), ("128K", 131072)])
def test_ctx_in_millions(ctx, tokens, tmp_path):
    r = _run("estimate", "qwen3:8b", "--ctx", ctx, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["engine_view"]["n_ctx"] == tokens


def test_plan_min_ctx_in_millions_is_capped_and_said(tmp_path):
    r = _run("plan", "qwen3:8b", "--gpu", "H100 80GB", "--min-ctx", "1M", "--limit", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert "1048576 tokens asked; Qwen3 8B is trained for 40960" in r.stdout.decode()


# ---- a llama.cpp command that uses no GPU (was: internal error, min() arg is an empty sequence) ----

def test_device_none_is_checked_against_the_ram(tmp_path):
    # common/arg.cpp parse_device_list: "-dev none" is an empty device list, everything runs on the CPU
    r = _run("check", "--gpu", "2x 3090", "--ram", "64GB", "--", "llama-server", "-m", "qwen3:32b", "--device",
             "none", "-c", "4096", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0 and "Traceback" not in r.stderr.decode(), r.stderr.decode()
    assert "checked against this machine's RAM" in out and "CUDA0" not in out, out
    r = _run("check", "--gpu", "3090", "--ram", "8GB", "--json", "--", "llama-server", "-m", "qwen3:32b", "-dev",
             "none", cwd=tmp_path)
    assert r.returncode == 1 and json.loads(r.stdout)["hardware"] == "cpu", r.stderr.decode()


# ---- no negative memory left (was: "memory after weights  -28,148 MiB") ----

def test_weights_past_the_memory_leave_none_not_a_negative_amount(tmp_path):
    r = _run("check", "--gpu", "3060 12GB", "--", "llama-server", "-m", "llama3.1:70b", "-ngl", "99", "--fit",
             "off", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 1, r.stderr.decode()
    line = next(x for x in out.splitlines() if "memory after weights" in x)
    assert " -" not in line and "0 MiB" in line and "alone are" in line and "over" in line, line


# ---- the error message as diagnose's argument (was: "CUDA out of memory. ...: no such file") ----

def test_diagnose_takes_the_message_as_its_argument(tmp_path):
    msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a total capacity "
           "of 7.79 GiB of which 57.06 MiB is free.")
    r = _run("diagnose", msg, "--json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["engine"] == "pytorch" and doc["numbers"]["requested_bytes"] == 172 << 20
    assert "diagnosing the argument as the error text" in r.stderr.decode()
    # the same text from stdin is read the same
    r2 = _run("diagnose", "--json", cwd=tmp_path, stdin=msg.encode())
    assert json.loads(r2.stdout) == doc
    # unquoted, word by word
    r3 = _run("diagnose", *msg.split(), "--json", cwd=tmp_path)
    assert json.loads(r3.stdout)["numbers"] == doc["numbers"]


@pytest.mark.parametrize("name", ["missing.log", "logs/server.txt", "nohup.out"])
def test_a_missing_log_file_is_still_no_such_file(name, tmp_path):
    r = _run("diagnose", name, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.strip().splitlines() == [f"oomkit: error: {name}: no such file"], err
