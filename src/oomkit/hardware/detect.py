"""This machine's devices: GPUs with their total and FREE memory, and the host's RAM and swap.

    detect() -> Hardware(gpus, host, notes, errors)

Each vendor is read by a chain of methods, best first; a method that does not apply here (library or tool not
installed, no driver) is skipped quietly, one that fails (crash, timeout, output it cannot read) is noted and the
next one is tried:

    NVIDIA  NVML through nvidia-ml-py (`pynvml`)  ->  `nvidia-smi --query-gpu=... --format=csv`
    AMD     `amdsmi` (ROCm's Python library)  ->  `rocm-smi --showmeminfo vram --json`  ->  sysfs
            (/sys/class/drm/card*/device/mem_info_vram_total, mem_info_vram_used); tried only where sysfs shows an
            AMD device (PCI vendor 0x1002), so a stray rocm-smi on a machine without one is not an error
    Apple   `sysctl hw.memsize machdep.cpu.brand_string kern.osproductversion`, `sysctl -n iogpu.wired_limit_mb`
    host    psutil (virtual_memory, swap_memory), else /proc/meminfo

Nothing here is imported by `oomkit estimate`; `pynvml`, `psutil` and `amdsmi` are imported only when a probe
runs. No GPU is a normal answer (an empty `gpus`), not an error: `Hardware.failed` is true only when a method
that applied failed and no later one answered. Everything outside Python (commands, files, the NVML module)
goes through `Probe`, so tests replay recorded outputs (tests/fixtures/hardware/).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..memory import Device, apple_default_gpu_share
from ..units import GiB, MiB
from .catalog import lookup, with_facts
from .visible import active, select, warn

TIMEOUT_S = 4.0  # nvidia-smi takes about a second to answer when persistence mode is off; rocm-smi similar
NVIDIA_SMI_QUERY = ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.used,memory.free",
                    "--format=csv,noheader,nounits"]
ROCM_SMI_QUERY = ["rocm-smi", "--showmeminfo", "vram", "--showproductname", "--json"]
AMD_PCI_VENDOR = "0x1002"
# The device ids an estimate gives each vendor's GPUs (llama.cpp's backend device names).
ID_PREFIX = {"nvidia": "CUDA", "amd": "ROCm", "apple": "MTL"}


# ---------------------------------------------------------------------------------------------------------
# What detection answers


@dataclass(frozen=True)
class GpuProcess:
    """A process holding memory on a GPU (NVML's running compute and graphics processes)."""

    pid: int
    name: str
    used_bytes: int | None  # None: the driver does not say (Windows WDDM, containers without the PID namespace)
    gpu_index: int = 0


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    vendor: str  # nvidia | amd | apple
    total_bytes: int | None  # None: the driver does not report it (e.g. "[N/A]")
    free_bytes: int | None
    used_bytes: int | None  # held by processes (other than the driver's own reserve)
    source: str  # nvml | nvidia-smi | amdsmi | rocm-smi | sysfs | sysctl
    unified_memory: bool = False
    bandwidth_gbs: float | None = None  # from the GPU catalog, None when the card is not in it
    catalog_name: str | None = None
    processes: tuple[GpuProcess, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{ID_PREFIX.get(self.vendor, 'GPU')}{self.index}"

    @property
    def reserved_bytes(self) -> int | None:
        """What the driver keeps for itself: total − used − free (NVML v2 / recent nvidia-smi report used
        without it; e.g. 410 MiB on an A10G, 598 MiB on an RTX A6000)."""
        if None in (self.total_bytes, self.used_bytes, self.free_bytes):
            return None
        return max(0, self.total_bytes - self.used_bytes - self.free_bytes)

    @property
    def budget_bytes(self) -> int | None:
        """What a new process can have: the free memory, else the total."""
        return self.free_bytes if self.free_bytes is not None else self.total_bytes

    def device(self) -> Device:
        """The device an estimate checks against: its FREE memory (what a new engine can really have)."""
        return with_facts(Device(id=self.id, name=self.name, memory_bytes=self.budget_bytes,
                                 free_bytes=self.free_bytes, integrated=True if self.unified_memory else None))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["id"] = self.id
        d["reserved_bytes"] = self.reserved_bytes
        d["processes"] = [asdict(p) for p in self.processes]
        d["notes"] = list(self.notes)
        return d


@dataclass(frozen=True)
class HostMemory:
    total_bytes: int
    available_bytes: int
    swap_total_bytes: int = 0
    swap_free_bytes: int = 0
    source: str = "psutil"


@dataclass(frozen=True)
class Hardware:
    gpus: tuple[Gpu, ...]
    host: HostMemory | None
    notes: tuple[str, ...] = ()  # fallbacks taken ("NVML failed: ...; used nvidia-smi")
    errors: tuple[str, ...] = ()  # methods that applied and failed with nothing after them answering

    @property
    def failed(self) -> bool:
        """Detection broke (a tool crashed or printed garbage) and found nothing: not the same as no GPU."""
        return not self.gpus and bool(self.errors)

    def devices(self) -> tuple[Device, ...]:
        return tuple(g.device() for g in self.gpus if g.budget_bytes is not None)

    def to_dict(self) -> dict[str, Any]:
        return {"gpus": [g.to_dict() for g in self.gpus], "host": asdict(self.host) if self.host else None,
                "notes": list(self.notes), "errors": list(self.errors)}


class NotPresent(Exception):
    """The method does not apply on this machine (not installed, no driver, no such device)."""


class ProbeFailed(Exception):
    """The method applies but did not give a usable answer (crash, timeout, unreadable output)."""


# ---------------------------------------------------------------------------------------------------------
# The boundary to the outside: commands, files, modules (replaced in tests)


@dataclass
class Probe:
    platform: str = sys.platform
    sysfs: Path = Path("/sys")
    proc: Path = Path("/proc")
    timeout_s: float = TIMEOUT_S
    which: Callable[[str], str | None] = shutil.which
    run_fn: Callable[..., subprocess.CompletedProcess] | None = None
    modules: dict[str, Any] = field(default_factory=dict)  # name -> module, instead of importing it

    def run(self, argv: list[str]) -> tuple[int, str]:
        """(exit status, stdout + stderr). Raises NotPresent when the program is not installed, ProbeFailed on
        a timeout or when it cannot be started."""
        exe = self.which(argv[0])
        if exe is None:
            raise NotPresent(f"{argv[0]} not found")
        runner = self.run_fn or subprocess.run
        try:
            r = runner([exe, *argv[1:]], capture_output=True, text=True, timeout=self.timeout_s,
                       stdin=subprocess.DEVNULL, errors="replace")
        except subprocess.TimeoutExpired:
            raise ProbeFailed(f"{argv[0]} did not answer within {self.timeout_s:g} s") from None
        except OSError as e:
            raise ProbeFailed(f"{argv[0]} could not be started ({e.strerror or e})") from None
        out = (r.stdout or "") + (("\n" + r.stderr) if r.stderr else "")
        return r.returncode, out

    def module(self, name: str) -> Any:
        if name in self.modules:
            return self.modules[name]
        import importlib  # lazy: the probe imports the vendor library it is asked for

        try:
            return importlib.import_module(name)
        except ImportError as e:
            raise NotPresent(f"Python module {name} not installed ({e})") from None


# ---------------------------------------------------------------------------------------------------------
# Detection


def detect(probe: Probe | None = None, *, processes: bool = False) -> Hardware:
    """This machine's GPUs and host memory. processes: also list the processes on each NVIDIA GPU (NVML)."""
    probe = probe or Probe()
    notes: list[str] = []
    errors: list[str] = []
    host = host_memory(probe)
    gpus: list[Gpu] = []
    gpus += _chain("NVIDIA", [("NVML", lambda: nvml_gpus(probe, processes)),
                              ("nvidia-smi", lambda: nvidia_smi_gpus(probe))], notes, errors)
    amd_cards = _amd_sysfs_cards(probe)
    if amd_cards:
        gpus += _chain("AMD", [("amdsmi", lambda: amdsmi_gpus(probe)),
                               ("rocm-smi", lambda: rocm_smi_gpus(probe)),
                               ("sysfs", lambda: sysfs_amd_gpus(probe, amd_cards))], notes, errors)
    if probe.platform == "darwin":
        gpus += _chain("Apple", [("sysctl", lambda: apple_gpus(probe, host))], notes, errors)
    gpus = [_with_catalog(g) for g in gpus]
    if active():  # within a command whose engine sets CUDA_VISIBLE_DEVICES and the like: the GPUs it sees
        nvidia = {g.name for g in gpus if g.vendor == "nvidia"}
        if len(nvidia) > 1:
            # NVML and nvidia-smi number the GPUs by PCI bus; CUDA, unless CUDA_DEVICE_ORDER=PCI_BUS_ID, fastest first
            # (CUDA C++ Programming Guide, "CUDA Environment Variables": CUDA_DEVICE_ORDER, default FASTEST_FIRST)
            warn("the variable's indices are read in nvidia-smi's order (PCI bus); CUDA numbers different GPUs "
                 "fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID is set")
        gpus = select(gpus, lambda g: ID_PREFIX.get(g.vendor, "GPU"), lambda g, prefix, i: replace(g, index=i),
                      "detected")
    return Hardware(gpus=tuple(gpus), host=host, notes=tuple(notes), errors=tuple(errors))


def _chain(vendor: str, methods: list[tuple[str, Callable[[], list[Gpu]]]], notes: list[str],
           errors: list[str]) -> list[Gpu]:
    failures: list[str] = []
    for name, method in methods:
        try:
            gpus = method()
        except NotPresent:
            continue
        except ProbeFailed as e:
            failures.append(f"{name}: {e}")
            continue
        except Exception as e:  # a library raising something of its own: a failure of that method, not ours
            failures.append(f"{name}: {type(e).__name__}: {_first_line(str(e))}")
            continue
        if failures:
            notes.append(f"{vendor}: {'; '.join(failures)}; used {name} instead")
        return gpus
    errors += [f"{vendor} {f}" for f in failures]
    return []


def _first_line(text: str, limit: int = 120) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _with_catalog(g: Gpu) -> Gpu:
    """Bandwidth (and the catalog's name) for a detected card: its name with its size first ("RTX 3060 12GB"),
    then the name alone."""
    spec = None
    if g.total_bytes:
        spec = lookup(f"{g.name} {round(g.total_bytes / GiB)}GB") if not g.unified_memory else None
    spec = spec or lookup(g.name)
    if spec is None and g.unified_memory and g.total_bytes:
        spec = lookup(f"{g.name} {round(g.total_bytes / GiB)}GB")
    if spec is None:
        return g
    return replace(g, bandwidth_gbs=spec.bandwidth_gbs, catalog_name=spec.name)


# ---------------------------------------------------------------------------------------------------------
# NVIDIA


class NvmlSession:
    """An open NVML handle, for one reading (detect) or many (watch). Raises NotPresent / ProbeFailed."""

    def __init__(self, probe: Probe | None = None):
        self.nv = (probe or Probe()).module("pynvml")
        nv = self.nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as e:
            code = getattr(e, "value", None)
            if code in (getattr(nv, "NVML_ERROR_LIBRARY_NOT_FOUND", 12), getattr(nv, "NVML_ERROR_DRIVER_NOT_LOADED", 9)):
                raise NotPresent(f"NVML: {e}") from None
            raise ProbeFailed(f"nvmlInit failed: {e}") from None

    def close(self) -> None:
        try:
            self.nv.nvmlShutdown()
        except Exception:  # shutting down a library that half-works: nothing to report
            pass

    def read(self, processes: bool = False) -> list[Gpu]:
        nv = self.nv
        try:
            count = int(nv.nvmlDeviceGetCount())
            gpus = []
            for i in range(count):
                h = nv.nvmlDeviceGetHandleByIndex(i)
                name = nv.nvmlDeviceGetName(h)
                name = name.decode() if isinstance(name, bytes) else str(name)
                total, free, used = self._memory(h)
                procs = self._processes(h, i) if processes else ()
                gpus.append(Gpu(index=i, name=name, vendor="nvidia", total_bytes=total, free_bytes=free,
                                used_bytes=used, source="nvml", processes=procs))
        except nv.NVMLError as e:
            raise ProbeFailed(f"NVML: {e}") from None
        return gpus

    def _memory(self, h: Any) -> tuple[int | None, int | None, int | None]:
        nv = self.nv
        # nvmlDeviceGetMemoryInfo_v2 reports `used` without the driver's reserve (as nvidia-smi >= 510 prints
        # it); v1 folds the reserve into `used`. Older drivers lack v2: fall back.
        version = getattr(nv, "nvmlMemory_v2", None)
        mem = None
        if version is not None:
            try:
                mem = nv.nvmlDeviceGetMemoryInfo(h, version=version)
            except (nv.NVMLError, TypeError, AttributeError):
                mem = None
        if mem is None:
            mem = nv.nvmlDeviceGetMemoryInfo(h)
        return _nonneg(mem.total), _nonneg(mem.free), _nonneg(mem.used)

    def _processes(self, h: Any, index: int) -> tuple[GpuProcess, ...]:
        nv = self.nv
        seen: dict[int, GpuProcess] = {}
        for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            try:
                plist = getattr(nv, fn)(h)
            except (nv.NVMLError, AttributeError):
                continue
            for p in plist:
                used = getattr(p, "usedGpuMemory", None)
                if used is not None and (used < 0 or used >= 1 << 62):  # NVML_VALUE_NOT_AVAILABLE
                    used = None
                pid = int(p.pid)
                if pid not in seen or (used or 0) > (seen[pid].used_bytes or 0):
                    seen[pid] = GpuProcess(pid=pid, name=process_name(pid), used_bytes=used, gpu_index=index)
        return tuple(sorted(seen.values(), key=lambda p: -(p.used_bytes or 0)))


def _nonneg(x: Any) -> int | None:
    try:
        v = int(x)
    except (TypeError, ValueError):
        return None
    return v if v >= 0 else None


def process_name(pid: int) -> str:
    try:
        import psutil  # optional: only when a GPU process is named

        return psutil.Process(pid).name()
    except Exception:  # gone, not ours to read, psutil missing: the pid still identifies it
        return "?"


def nvml_gpus(probe: Probe, processes: bool = False) -> list[Gpu]:
    session = NvmlSession(probe)
    try:
        return session.read(processes)
    finally:
        session.close()


def nvidia_smi_gpus(probe: Probe) -> list[Gpu]:
    rc, out = probe.run(NVIDIA_SMI_QUERY)
    if rc != 0:
        if "No devices were found" in out:
            return []
        if "couldn't communicate with the NVIDIA driver" in out:
            raise NotPresent(_first_line(out))
        how = f"crashed (signal {-rc})" if rc < 0 else f"exited with status {rc}"
        raise ProbeFailed(f"nvidia-smi {how}: {_first_line(out) or 'no output'}")
    return parse_nvidia_smi_csv(out)


def parse_nvidia_smi_csv(text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free --format=csv[,noheader][,nounits]`
    -> GPUs. Values in MiB; "[N/A]" / "[Not Supported]" (unified-memory boards such as GB10) become None.
    Anything else unreadable raises ProbeFailed naming the line."""
    rows = [r for r in csv.reader(text.splitlines(), skipinitialspace=True) if any(c.strip() for c in r)]
    if rows and rows[0] and rows[0][0].strip().lower() == "index":
        rows = rows[1:]
    if not rows:
        raise ProbeFailed("nvidia-smi printed no GPU rows")
    gpus = []
    for r in rows:
        line = ", ".join(r)
        if len(r) != 5:
            raise ProbeFailed(f"nvidia-smi printed a line oomkit cannot read: {_first_line(line, 80)!r}")
        try:
            index = int(r[0])
            total, used, free = (_mib_field(x) for x in r[2:5])
        except ValueError:
            raise ProbeFailed(f"nvidia-smi printed a line oomkit cannot read: {_first_line(line, 80)!r}") from None
        name = r[1].strip()
        if not name:
            raise ProbeFailed(f"nvidia-smi printed a GPU without a name: {line!r}")
        gpus.append(Gpu(index=index, name=name, vendor="nvidia", total_bytes=total, free_bytes=free,
                        used_bytes=used, source="nvidia-smi"))
    return gpus


def _mib_field(text: str) -> int | None:
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):  # [N/A], [Not Supported], [Unknown Error]
        return None
    t = t.removesuffix("MiB").strip()
    value = float(t)  # ValueError for garbage
    if value < 0:
        raise ValueError(t)
    return int(round(value * MiB))


# ---------------------------------------------------------------------------------------------------------
# AMD


def _amd_sysfs_cards(probe: Probe) -> list[Path]:
    """/sys/class/drm/cardN/device of each AMD GPU (PCI vendor 0x1002), in card order."""
    drm = probe.sysfs / "class" / "drm"
    try:
        cards = sorted((p for p in drm.iterdir() if p.name.startswith("card") and p.name[4:].isdigit()),
                       key=lambda p: int(p.name[4:]))
    except OSError:
        return []
    out = []
    for card in cards:
        try:
            vendor = (card / "device" / "vendor").read_text().strip().lower()
        except OSError:
            continue
        if vendor == AMD_PCI_VENDOR:
            out.append(card / "device")
    return out


def amdsmi_gpus(probe: Probe) -> list[Gpu]:
    amdsmi = probe.module("amdsmi")
    amdsmi.amdsmi_init()
    try:
        gpus = []
        for i, h in enumerate(amdsmi.amdsmi_get_processor_handles()):
            vram = amdsmi.AmdSmiMemoryType.VRAM
            total = int(amdsmi.amdsmi_get_gpu_memory_total(h, vram))
            used = int(amdsmi.amdsmi_get_gpu_memory_usage(h, vram))
            try:
                name = amdsmi.amdsmi_get_gpu_asic_info(h).get("market_name") or "AMD GPU"
            except Exception:  # name only; the memory figures above are what matters
                name = "AMD GPU"
            gpus.append(Gpu(index=i, name=str(name), vendor="amd", total_bytes=total,
                            free_bytes=max(0, total - used), used_bytes=used, source="amdsmi"))
        return gpus
    finally:
        try:
            amdsmi.amdsmi_shut_down()
        except Exception:  # nothing to report about a shutdown
            pass


def rocm_smi_gpus(probe: Probe) -> list[Gpu]:
    rc, out = probe.run(ROCM_SMI_QUERY)
    if rc != 0:
        how = f"crashed (signal {-rc})" if rc < 0 else f"exited with status {rc}"
        raise ProbeFailed(f"rocm-smi {how}: {_first_line(out) or 'no output'}")
    return parse_rocm_smi_json(out)


def parse_rocm_smi_json(text: str) -> list[Gpu]:
    """`rocm-smi --showmeminfo vram [--showproductname] --json` -> GPUs. rocm-smi may print warnings before
    the JSON object; the object starts at the first "{"."""
    start = text.find("{")
    try:
        data = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise ProbeFailed(f"rocm-smi printed something oomkit cannot read: {_first_line(text, 80)!r}")
    gpus = []
    cards = sorted((k for k in data if k.lower().startswith("card") and k[4:].isdigit()), key=lambda k: int(k[4:]))
    for i, key in enumerate(cards):
        card = data[key]
        if not isinstance(card, dict):
            raise ProbeFailed(f"rocm-smi: {key} is not an object")
        fields = {k.lower(): v for k, v in card.items()}
        try:
            total = int(fields["vram total memory (b)"])
            used = int(fields["vram total used memory (b)"])
        except (KeyError, TypeError, ValueError):
            raise ProbeFailed(f"rocm-smi: {key} has no readable VRAM Total Memory (B) / VRAM Total Used Memory (B)"
                              ) from None
        name = fields.get("card series") or fields.get("card model") or "AMD GPU"
        gpus.append(Gpu(index=i, name=str(name).strip(), vendor="amd", total_bytes=total,
                        free_bytes=max(0, total - used), used_bytes=used, source="rocm-smi"))
    if not gpus:
        raise ProbeFailed("rocm-smi listed no cards")
    return gpus


def sysfs_amd_gpus(probe: Probe, cards: list[Path]) -> list[Gpu]:
    """amdgpu's sysfs files (drivers/gpu/drm/amd/amdgpu/amdgpu_vram_mgr.c): mem_info_vram_total and
    mem_info_vram_used, in bytes."""
    gpus = []
    for i, dev in enumerate(cards):
        try:
            total = int((dev / "mem_info_vram_total").read_text().strip())
            used = int((dev / "mem_info_vram_used").read_text().strip())
        except FileNotFoundError:
            raise NotPresent(f"{dev} has no mem_info_vram_* files") from None
        except (OSError, ValueError) as e:
            raise ProbeFailed(f"{dev}/mem_info_vram_*: {e}") from None
        name = _read(dev / "product_name")
        if not name:
            device_id = _read(dev / "device") or "?"
            name = f"AMD GPU (device {device_id})"
        gpus.append(Gpu(index=i, name=name, vendor="amd", total_bytes=total, free_bytes=max(0, total - used),
                        used_bytes=used, source="sysfs"))
    return gpus


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------------------
# Apple silicon


def apple_gpus(probe: Probe, host: HostMemory | None) -> list[Gpu]:
    rc, out = probe.run(["sysctl", "hw.memsize", "machdep.cpu.brand_string", "kern.osproductversion"])
    if rc != 0:
        raise ProbeFailed(f"sysctl exited with status {rc}: {_first_line(out) or 'no output'}")
    values = parse_sysctl(out)
    chip = values.get("machdep.cpu.brand_string", "")
    if not chip.startswith("Apple"):
        raise NotPresent(f"not Apple silicon ({chip or 'unknown CPU'})")
    try:
        memsize = int(values["hw.memsize"])
    except (KeyError, ValueError):
        raise ProbeFailed(f"sysctl printed no readable hw.memsize: {_first_line(out, 80)!r}") from None
    limit_mb, key_known = 0, False
    try:
        rc, out = probe.run(["sysctl", "-n", "iogpu.wired_limit_mb"])  # macOS 14+; unknown key before
        if rc == 0:
            key_known = True
            limit_mb = int(out.strip().splitlines()[0])
    except (NotPresent, ProbeFailed, ValueError, IndexError):
        limit_mb = 0
    notes = []
    if limit_mb > 0:
        gpu_total = min(limit_mb * MiB, memsize)
        notes.append(f"GPU limit iogpu.wired_limit_mb = {limit_mb}")
    else:
        # the release picks the rule (memory.py apple_default_gpu_share); unread, a Mac without the key is older
        # than macOS 14 (2/3 and 3/4 held to 15), one with it takes the newest rule
        macos = read = macos_major(values.get("kern.osproductversion", ""))
        if read is None and not key_known:
            macos = 13
        gpu_total = apple_default_gpu_share(memsize, macos)
        rule = (f"macOS {read}" if read is not None else "macOS version unread, no iogpu.wired_limit_mb: before 14"
                if not key_known else "macOS version unread: the newest macOS's rule")
        notes.append(f"GPU limit: macOS's default share of RAM ({rule}; estimated, set iogpu.wired_limit_mb to fix "
                     "it, `llama-server --list-devices` prints the exact figure)")
    free = gpu_total if host is None else min(gpu_total, host.available_bytes)
    return [Gpu(index=0, name=chip, vendor="apple", total_bytes=gpu_total, free_bytes=free,
                used_bytes=None, source="sysctl", unified_memory=True,
                notes=(*notes, f"unified memory: {memsize / GiB:.0f} GiB RAM shared by CPU and GPU"))]


def macos_major(version: str) -> int | None:
    """kern.osproductversion ("15.6", "26.1") -> 15, 26: the macOS whose default working set applies
    (memory.py apple_default_gpu_share); None when unread."""
    head = version.strip().split(".")[0]
    return int(head) if head.isdigit() else None


def parse_sysctl(text: str) -> dict[str, str]:
    """`sysctl a b` prints "a: value" lines."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and " " not in key.strip():
            out[key.strip()] = value.strip()
    return out


# ---------------------------------------------------------------------------------------------------------
# Host memory


def host_memory(probe: Probe | None = None) -> HostMemory | None:
    probe = probe or Probe()
    try:
        psutil = probe.module("psutil")
        vm, sw = psutil.virtual_memory(), psutil.swap_memory()
        return HostMemory(total_bytes=int(vm.total), available_bytes=int(vm.available),
                          swap_total_bytes=int(sw.total), swap_free_bytes=int(sw.free), source="psutil")
    except Exception:  # psutil missing or failing: /proc/meminfo on Linux, else unknown
        pass
    return _proc_meminfo(probe.proc / "meminfo")


def _proc_meminfo(path: Path) -> HostMemory | None:
    try:
        fields = {}
        for line in path.read_text().splitlines():
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts:
                fields[key] = int(parts[0]) * 1024  # kB
        return HostMemory(total_bytes=fields["MemTotal"], available_bytes=fields.get("MemAvailable", fields["MemFree"]),
                          swap_total_bytes=fields.get("SwapTotal", 0), swap_free_bytes=fields.get("SwapFree", 0),
                          source="/proc/meminfo")
    except (OSError, KeyError, ValueError):
        return None
