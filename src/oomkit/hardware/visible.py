"""The visible-devices variables: which of the machine's GPUs the engine's process sees (CUDA_VISIBLE_DEVICES,
HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES), applied to the planned devices (request.py devices_from) and to the
detected ones (hardware/detect.py detect) while a command runs within engine_sees.

CUDA (CUDA C++ Programming Guide, "CUDA Environment Variables"; NVIDIA MPS docs 5.2.1): CUDA_VISIBLE_DEVICES is
a comma-separated sequence of GPU indices or UUIDs ("GPU-...", a prefix of one will do; "MIG-..." a MIG
instance); only the devices named are visible, enumerated in the order of the sequence (2,1: the process's
device 0 is GPU 2); the list is read up to its first invalid entry (0,2,-1,1: GPUs 0 and 2), so an empty value
or -1 leaves no device. ROCm's HIP runtime reads HIP_VISIBLE_DEVICES (or, for CUDA compatibility,
CUDA_VISIBLE_DEVICES) by the same rule, on top of ROCR_VISIBLE_DEVICES, which the ROCr runtime applies first
(ROCm docs, "GPU isolation techniques"). What the engines do with what is left:
- vLLM and SGLang need a CUDA (or ROCm) device: with none, startup fails in torch ("RuntimeError: No CUDA GPUs
  are available", diagnose/signatures.py no_gpu_visible);
- llama.cpp's CUDA / HIP backend finds no device (ggml-cuda.cu ggml_cuda_info: cudaGetDeviceCount fails, "failed
  to initialize CUDA", device_count 0) and the model runs on the CPU;
- Ollama on the server: "If you want to ignore the GPUs and force CPU usage, use an invalid GPU ID (e.g., "-1")"
  (docs/gpu.mdx, "GPU Selection", NVIDIA: CUDA_VISIBLE_DEVICES, AMD: ROCR_VISIBLE_DEVICES).

Planned GPUs (--gpu, --vram) as many as the variable names, with an index past them (--gpu "4x RTX 4090" and
CUDA_VISIBLE_DEVICES=4,5,6,7), describe the GPUs it shows on a larger machine: they are kept, in its order, with a
note; otherwise CUDA's rule applies to the planned list as the whole machine (5 on two GPUs: none).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TypeVar

from ..errors import OomkitError
from ..memory import Device

VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
_NEEDS_A_GPU = {"vllm": "vLLM", "sglang": "SGLang"}
_INDEX = re.compile(r"[0-9]{1,9}")  # a device index (longer: no device, and past int()'s digit limit)
_SHOWN = 40  # the most of a variable's value a message repeats
T = TypeVar("T")


@dataclass
class _Seen:
    """The visible-devices variables the engine's environment sets, the engine, and the warnings applying them
    gave."""

    variables: dict[str, str]
    engine: str
    needed: int = 0  # the GPUs the engine's settings start workers on (vLLM, SGLang: TP x PP x DP); 0: not said
    warnings: list[str] = field(default_factory=list)
    hid_all: bool = False  # devices were there and the variables left none of them


_SEEN: ContextVar[_Seen | None] = ContextVar("oomkit_visible_devices", default=None)


def visible_variables(env: Mapping[str, str] | None) -> dict[str, str]:
    """The visible-devices variables `env` sets (VISIBLE_VARS), by name."""
    return {k: env[k] for k in VISIBLE_VARS if env is not None and k in env}


@contextmanager
def engine_sees(variables: Mapping[str, str], engine: str, needed: int = 0) -> Iterator[list[str]]:
    """Within: the planned devices (request.devices_from) and the detected GPUs (detect.detect) are the ones
    `variables` leave visible to `engine`, renumbered; yields the list the warnings of applying them go to (a form
    that cannot be applied, a list cut short). `needed`: the GPUs vLLM's or SGLang's parallel settings start workers
    on, refused where fewer stay visible. No variable: nothing changes."""
    seen = _Seen(dict(variables), engine, needed) if variables else None
    token = _SEEN.set(seen)
    try:
        yield seen.warnings if seen is not None else []
    finally:
        _SEEN.reset(token)


def shown(variables: Mapping[str, str]) -> str:
    """The variables as a message repeats them: NAME=value, a value that is empty or holds a comma, a space or a
    character that prints otherwise quoted (repr), each cut to its first 40 characters."""
    out = []
    for k, v in variables.items():
        cut = _clip(v)
        out.append(f"{k}={cut}" if cut and cut.isprintable() and not any(c in cut for c in ", '\"") else f"{k}={cut!r}")
    return ", ".join(out)


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}..."


def active() -> bool:
    """Whether a command runs within engine_sees with a variable set."""
    return _SEEN.get() is not None


def warn(text: str) -> None:
    """A warning of applying the variables, within engine_sees (else dropped)."""
    seen = _SEEN.get()
    if seen is not None and text not in seen.warnings:
        seen.warnings.append(text)


def hides_any_count() -> bool:
    """Within engine_sees: whether CUDA_VISIBLE_DEVICES leaves no GPU however many there are (empty, or its first
    entry no index and no UUID: -1)."""
    seen = _SEEN.get()
    value = seen.variables.get("CUDA_VISIBLE_DEVICES") if seen is not None else None
    if value is None:
        return False
    first = value.split(",")[0]
    return not _INDEX.fullmatch(first) and first[:4].upper() not in ("GPU-", "MIG-")


def hid_every_gpu() -> bool:
    """Within engine_sees: whether the variables left none of the devices there were (llama.cpp and Ollama then
    run on the CPU)."""
    seen = _SEEN.get()
    return seen is not None and seen.hid_all


def select(items: list[T], prefix_of: Callable[[T], str], renumber: Callable[[T, str, int], T],
           what: str = "planned") -> list[T]:
    """The devices (`items`, each vendor's in its index order: prefix_of gives "CUDA", "ROCm", ...) the engine's
    variables leave it, renumbered (renumber(item, prefix, new index)); unchanged outside engine_sees. vLLM and
    SGLang with none left, or fewer than their parallel settings start workers on, are refused (their startup
    fails)."""
    seen = _SEEN.get()
    if seen is None:
        return items
    out = _apply(items, prefix_of, renumber, seen.variables, seen.warnings, what)
    ids = [f"{p}{i}" for p, n in _counts(items, prefix_of).items() for i in range(n)]
    seen.hid_all = seen.hid_all or bool(items and not out)
    if items and not out and seen.engine in _NEEDS_A_GPU:
        said = shown(seen.variables)
        which = ("no GPU" if what == "assumed" else
                 f"none of the {len(items)} {what} GPU{'s' if len(items) > 1 else ''} ({_numbered(ids)})")
        raise OomkitError(f"{said} leaves {which} visible: {_NEEDS_A_GPU[seen.engine]} fails at startup "
                          "(RuntimeError: No CUDA GPUs are available); name a GPU that exists, or leave the variable "
                          "out")
    if seen.engine in _NEEDS_A_GPU and 0 < len(out) < min(seen.needed, len(items)):
        # vLLM (config/parallel.py ParallelConfig.__post_init__, 0.10 to 0.17 read): fewer CUDA devices than
        # world_size on the node selects the Ray backend, which looks for the rest in a Ray cluster ("Unable to load
        # Ray" without it); SGLang starts one worker per GPU id, and a hidden one is no device for torch
        said = shown(seen.variables)
        kept = [f"{prefix_of(x)}{i}" for i, x in enumerate(out)]
        raise OomkitError(f"{said} leaves {len(out)} of the {len(items)} {what} GPUs visible "
                          f"({_numbered(kept)}), and {_NEEDS_A_GPU[seen.engine]}'s parallel settings start workers on "
                          f"{seen.needed}: name {seen.needed} GPUs in the variable, or lower the tensor / pipeline / "
                          "data parallel size")
    return out


def device_prefix(d: Device) -> str:
    """A planned device's backend prefix, its id without the index ("CUDA" of "CUDA1")."""
    return d.id.rstrip("0123456789")


def renumbered(d: Device, prefix: str, index: int) -> Device:
    """A planned device as the engine's process numbers it."""
    return replace(d, id=f"{prefix}{index}")


def visible_devices(devices: tuple[Device, ...], variables: Mapping[str, str],
                    warnings: list[str] | None = None) -> tuple[Device, ...]:
    """The devices a process whose environment sets `variables` sees, each vendor's renumbered from 0 in the order
    the variable names them (CUDA0, CUDA1 for NVIDIA; ROCm0, ... for AMD). NVIDIA devices read
    CUDA_VISIBLE_DEVICES; AMD ones ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES where
    that is unset); other devices (Apple, Intel) none of them. A form that names GPUs by UUID or MIG instance
    cannot be matched to planned devices: that vendor's devices are kept whole and a warning says so."""
    return tuple(_apply(list(devices), device_prefix, renumbered, variables,
                        warnings if warnings is not None else [], "planned"))


def _counts(items: list[T], prefix_of: Callable[[T], str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[prefix_of(x)] = out.get(prefix_of(x), 0) + 1
    return out


def _apply(items: list[T], prefix_of: Callable[[T], str], renumber: Callable[[T, str, int], T],
           variables: Mapping[str, str], notes: list[str], what: str) -> list[T]:
    groups: dict[str, list[T]] = {}
    for x in items:
        groups.setdefault(prefix_of(x), []).append(x)
    out: list[T] = []
    for prefix, group in groups.items():
        if prefix == "CUDA":
            chain = [k for k in ("CUDA_VISIBLE_DEVICES",) if k in variables]
        elif prefix == "ROCm":
            hip = "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in variables else "CUDA_VISIBLE_DEVICES"
            chain = [k for k in ("ROCR_VISIBLE_DEVICES", hip) if k in variables]
        else:
            chain = []
        for name in chain:
            ids = [f"{prefix}{i}" for i in range(len(group))]
            picked = _pick(ids, name, variables[name], notes, what)
            group = group if picked is None else [group[i] for i in picked]
        out += [renumber(x, prefix, i) if chain else x for i, x in enumerate(group)]
    return out


def _numbered(ids: list[str]) -> str:
    return ids[0] if len(ids) == 1 else f"{ids[0]}-{ids[-1]}" if len(ids) > 2 else f"{ids[0]} and {ids[1]}"


def _pick(ids: list[str], name: str, value: str, notes: list[str], what: str) -> list[int] | None:
    """The positions in `ids` that `name`=`value` names, in its order, read by CUDA's rule (up to the first entry
    that is no index of a device here, or names one twice); None where it names GPUs by UUID or MIG instance."""
    kept: list[int] = []
    entries = value.split(",")
    named = [int(e) for e in entries if _INDEX.fullmatch(e)]
    if what != "detected" and len(named) == len(entries) == len(set(named)) == len(ids) and max(named) >= len(ids):
        # CUDA_VISIBLE_DEVICES=4,5,6,7 with --gpu "4x RTX 4090": as many GPUs planned as the variable names, past
        # their count: the planned ones are those the variable shows (the machine has more), in its order
        notes.append(f"{shown({name: value})}: GPUs {', '.join(entries[:8])}{'...' if len(entries) > 8 else ''} of a "
                     f"larger machine; the {len(ids)} {what} are read as those, in that order")
        return list(range(len(ids)))
    for k, entry in enumerate(entries):
        if entry[:4].upper() in ("GPU-", "MIG-"):
            form = "a MIG instance" if entry[:4].upper() == "MIG-" else "a GPU UUID"
            notes.append(f"{shown({name: value})}: {_clip(entry)!r} is {form}, which cannot be matched to the {what} devices "
                         f"({_numbered(ids)}); all {len(ids)} are kept: give the index of each GPU to see the subset")
            return None
        if not _INDEX.fullmatch(entry) or int(entry) >= len(ids) or int(entry) in kept:
            if kept or entries[k:] not in ([""], ["-1"]):
                why = ("names a device twice" if _INDEX.fullmatch(entry) and int(entry) in kept else
                       f"is no device of the {len(ids)} {what}" if _INDEX.fullmatch(entry) else "is no device index")
                left = ", ".join(ids[i] for i in kept) if kept else "none"
                notes.append(f"{shown({name: value})}: {_clip(entry)!r} {why}; the runtime reads the list up to it: visible: "
                             f"{left} of {_numbered(ids)}")
            break
        kept.append(int(entry))
    return kept
