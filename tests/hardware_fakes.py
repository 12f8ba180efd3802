"""Helpers for the hardware tests: the fake pynvml, a Probe that replays recorded tool outputs, subprocess env."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from oomkit.hardware.detect import Probe

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hardware"
FAKE_NVML_DIR = FIXTURES / "fake_nvml"
MiB, GiB = 1 << 20, 1 << 30


def fake_nvml(spec: dict):
    """A fresh copy of the fake pynvml module, answering from `spec`."""
    s = importlib.util.spec_from_file_location(f"fake_pynvml_{id(spec)}", FAKE_NVML_DIR / "pynvml.py")
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    mod.configure(spec)
    return mod


NO_NVML = {"init_error": 12}  # NVML_ERROR_LIBRARY_NOT_FOUND: no driver


def recorded(name: str) -> str:
    return (FIXTURES / name).read_text()


def replay(outputs: dict[str, tuple[int, str] | BaseException], **kw) -> Probe:
    """A Probe whose commands answer from `outputs` (keyed by the program name, or "program arg" for the first
    argument); programs not in it are not installed. Modules default to: no NVML, no amdsmi, a fixed psutil."""

    def which(name: str):
        return f"/usr/bin/{name}" if any(k.split()[0] == name for k in outputs) else None

    def run_fn(argv, **_):
        prog = Path(argv[0]).name
        key = next((k for k in (f"{prog} {argv[1]}" if len(argv) > 1 else prog, prog) if k in outputs), None)
        out = outputs[key]
        if isinstance(out, BaseException):
            raise out
        rc, text = out
        return subprocess.CompletedProcess(argv, rc, stdout=text, stderr="")

    modules = {"pynvml": fake_nvml(NO_NVML), "psutil": FakePsutil()}
    modules.update(kw.pop("modules", {}))
    return Probe(which=which, run_fn=run_fn, modules=modules, **kw)


class FakePsutil:
    """psutil's virtual_memory / swap_memory for a 64 GiB machine with 40 GiB available and 8 GiB swap."""

    class _VM:
        total, available = 64 * GiB, 40 * GiB

    class _SW:
        total, free = 8 * GiB, 7 * GiB

    def virtual_memory(self):
        return self._VM()

    def swap_memory(self):
        return self._SW()


def amd_sysfs(root: Path, cards: list[dict]) -> Path:
    """A /sys tree with AMD cards: [{"total": bytes, "used": bytes, "device": "0x744c"}]."""
    for i, c in enumerate(cards):
        dev = root / "class" / "drm" / f"card{i}" / "device"
        dev.mkdir(parents=True)
        (dev / "vendor").write_text(c.get("vendor", "0x1002") + "\n")
        (dev / "device").write_text(c.get("device", "0x744c") + "\n")
        if "total" in c:
            (dev / "mem_info_vram_total").write_text(f"{c['total']}\n")
            (dev / "mem_info_vram_used").write_text(f"{c['used']}\n")
    return root


def oomkit_env(tmp_path: Path, nvml: dict | None = None, tools: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for `python -m oomkit` with the fake NVML (nvml=None: NVML absent) and, on PATH, only the
    given fake tools (name -> shell script body)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name, body in (tools or {}).items():
        p = bindir / name
        p.write_text("#!/bin/sh\n" + body + "\n")
        p.chmod(0o755)
    env = dict(os.environ)
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(FAKE_NVML_DIR), str(repo / "src"), env.get("PYTHONPATH", "")])
    env["OOMKIT_FAKE_NVML"] = json.dumps(nvml if nvml is not None else NO_NVML)
    env["PATH"] = str(bindir)
    return env


def run_oomkit(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def rtx4090(free: int | list[int], used: int | list[int], processes=()) -> dict:
    """One RTX 4090 as NVML reports it: 24564 MiB total (the catalog's driver-reported figure)."""
    return {"name": "NVIDIA GeForce RTX 4090", "total": 24564 * MiB, "free": free, "used": used,
            "processes": list(processes)}
