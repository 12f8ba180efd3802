"""The GPU catalog: plan for hardware you do not have (``--gpu "RTX 4090"``, ``--gpu "2x H100 SXM"``).

Data: ``gpus.json`` next to this module (json only, read once, lazily). Each entry's ``memory_mib`` is what the
driver reports (``nvidia-smi --query-gpu=memory.total``, rocm-smi's VRAM total) where a real reading is
published, cited in ``memory_source``; otherwise the marketed size in MiB, marked ``memory_source_kind:
"nominal"``. ``source`` is the vendor spec page the bandwidth and size come from.

Matching ignores case, spaces, dashes, the brand words in front and the marks drivers print ("NVIDIA GeForce RTX
4090" = "rtx4090" = "RTX-4090"; "Intel(R) Arc(TM) A770 Graphics" = "Arc A770"); a trailing size ("3060 12GB", "M3
Max 128GB", Windows' "(16GB)") picks that variant. A Mac's macOS release may follow its name ("M3 Ultra 512GB
(macOS 15)", "M3 Ultra 512GB, macOS 15.4"): it picks Metal's default working set (memory.py apple_default_gpu_share).

Each --gpu name is resolved once (``resolve``: a pure function of the name, returning a frozen ``Resolution``);
a --gpu list is parsed once per text (``_parse``), for its devices and for its notes alike.

A machine whose GPU is its chip's, named with its memory ("Framework Desktop 128GB": ``machines`` in the data), is
that chip in the configuration the machine is sold with (AMD Ryzen AI Max+ 395 128GB), with a note saying so.

Integrated GPUs whose memory is the machine's (Radeon 780M, 890M, Arc 140V: ``integrated`` in the data) are
recognised and refused with what to give instead: the memory llama.cpp can use on them is what their driver maps,
not a property of the name (see ``_integrated_refusal``).
"""

from __future__ import annotations

import functools
import json
import os
import re
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import HardwareError, OomkitError
from ..memory import Device
from ..units import MiB

DATA_PATH = Path(__file__).resolve().parent / "gpus.json"

# Brand words a user may put in front of a model name or leave out; dropped from the front before matching.
_BRANDS = re.compile(r"^(?:nvidia|geforce|amd|radeon|apple|intel)+(?=.)")
# The Mac a chip is sold in, written before it ("Mac Studio M3 Ultra 512GB", "MacBook Pro M4 Max"): the chip
# and its memory are what the catalog knows; dropped from the front with the brand words.
_MACS = re.compile(r"^(?:macstudio|macbookpro|macbookair|macbook|macmini|macpro|imac)(?=m\d)")
# ... or after it ("M5 MacBook Pro 32GB", "M3 Ultra Mac Studio 512GB"): the chip is kept
_MACS_AFTER = re.compile(r"^(?P<chip>m\d+(?:pro|max|ultra)?)(?:macstudio|macbookpro|macbookair|macbook|macmini|macpro|imac)$")
# Counts in words ("dual 3090", "quad A100"), read as "2x 3090", "4x A100".
_COUNT_WORDS = {"dual": 2, "twin": 2, "two": 2, "triple": 3, "three": 3, "quad": 4, "four": 4, "eight": 8}
_COUNT_WORD = re.compile(r"^(?P<word>" + "|".join(_COUNT_WORDS) + r")\s+(?P<name>.+)$", re.IGNORECASE)
# "3090 + 3060": a plus between spaces joins two GPUs like a comma (a plus in a name, "AI Max+ 395", has none)
_PLUS = re.compile(r"\s+\+\s+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]")
# The device id prefix each vendor's devices get in an estimate (llama.cpp's backend device names).
_ID_PREFIX = {"nvidia": "CUDA", "amd": "ROCm", "apple": "MTL", "intel": "SYCL"}
_SIZE = re.compile(r"^(?P<base>.*?)[\s_-]*(?P<gb>\d+(?:\.\d+)?)\s*(?:gb|gib|g)$", re.IGNORECASE)
# "2x H100", "2 x H100", "2*H100" (the space after x keeps "7900 XTX" a name)
_NEGATIVE_SIZE = re.compile(r"\s-$")
_COUNT = re.compile(r"^(?P<n>\d+)\s*(?:[x×]\s+|\*\s*)(?P<name>.+)$", re.IGNORECASE)
# the tighter forms "8xH100", "H100x8", "H100 x 8", tried only when the whole text is no catalog name, and the
# accelerator spec of SkyPilot and Modal, NAME:COUNT ("A100-80GB:8" and "L4:1" in vllm-project/vllm#6689, written by
# a SkyPilot maintainer; `sky launch --gpus H100:8`)
_COUNT_LOOSE = (re.compile(r"^(?P<n>\d+)\s*[x×](?P<name>.+)$", re.IGNORECASE),
                re.compile(r"^(?P<name>.+?)\s*[x×*]\s*(?P<n>\d+)$", re.IGNORECASE),
                re.compile(r"^(?P<name>.+?)\s*:\s*(?P<n>\d+)$"))
# Data-centre parts that come with NVLink (NVIDIA: SXM boards, H100/H200/H800/H20, Grace-Hopper and Blackwell
# systems, A100/A800) or Infinity Fabric links (AMD Instinct MI200/MI300): what SGLang's distributed start-up
# costs depends on it (NCCL's NVLS/NVLink buffers).
_NVLINK_NAMES = re.compile(r"\b(?:H100|H200|H800|H20|GH200|B200|B300|GB200|GB300|A100|A800|MI2\d\d|MI3\d\d)\b|SXM",
                           re.IGNORECASE)


@dataclass(frozen=True)
class MemoryOption:
    """One configuration a device is sold with (Apple chips, Strix Halo, Jetson, cards with two sizes)."""

    memory_gb: float
    bandwidth_gbs: float | None = None  # None: the entry's bandwidth


@dataclass(frozen=True)
class GpuSpec:
    """One catalog device. ``memory_mib`` is the driver-reported or nominal capacity (see ``memory_source_kind``)."""

    name: str
    vendor: str  # nvidia | amd | apple | intel
    memory_mib: int
    memory_source_kind: str  # "driver" | "nominal"
    memory_gb: float  # the marketed size
    bandwidth_gbs: float | None  # None only for a device built from its family's rules (_family_device): unknown
    source: str
    aliases: tuple[str, ...] = ()
    memory_source: str | None = None  # where a driver-reported memory_mib was read
    cuda_total_mib: int | None = None  # CUDA's own total (totalGlobalMem) where a reading is published
    unified_memory: bool = False
    compute_capability: str | None = None  # NVIDIA only, e.g. "8.9"
    sm_count: int | None = None  # NVIDIA only: streaming multiprocessors (datasheets, whitepapers)
    memory_options: tuple[MemoryOption, ...] = ()
    devices_per_board: int = 1
    notes: str = ""

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MiB

    def with_memory(self, gb: float) -> GpuSpec:
        """This device in its ``gb`` configuration (a memory option); nominal size, the option's bandwidth."""
        option = next((o for o in self.memory_options if o.memory_gb == gb), None)
        if option is None:
            raise OomkitError(f"{self.name} is not sold with {gb:g} GB")
        return replace(self, name=f"{_strip_size(self.name)} {gb:g}GB", memory_gb=gb, memory_mib=int(gb * 1024),
                       memory_source_kind="nominal", memory_source=None,
                       bandwidth_gbs=option.bandwidth_gbs or self.bandwidth_gbs)


# The ways a GeForce laptop GPU is written after its number ("RTX 4090 Laptop GPU" as nvidia-smi names it, "4090
# laptop", "RTX 4090 Mobile", "4090M", "4090 Max-Q"), read as one "laptop" so each finds the laptop entry; the
# laptop parts are other chips with other memory than the desktop cards of the same number, so a laptop name the
# catalog lacks stays unknown rather than becoming the desktop card. The RTX 20 laptop parts' driver names end "with
# Max-Q Design" ("NVIDIA GeForce RTX 2070 with Max-Q Design", as the 440.44 driver's supported-GPU list names them).
_LAPTOP = re.compile(r"^(?P<card>(?:rtx)?[2-5]0[5-9]0(?:ti|super)?)"
                     r"(?:laptopgpu|laptop|notebook|mobile|(?:with)?maxq(?:design)?|maxp|m)$")


# What drivers and tools print around a GPU's name, dropped before matching: the trademark marks ("Intel(R) Arc(TM)
# A770 Graphics", "AMD Radeon(TM) 860M Graphics"), the CPU a Ryzen iGPU is named after ("AMD Ryzen 7 8845H w/ Radeon
# 780M Graphics", rocminfo's marketing name), the LLVM target after an AMD card (vLLM's collect_env: "AMD Radeon RX
# 7900 XT (gfx1100)") and a trailing "Graphics" or "GPU". A name nvidia-smi cut short ("NVIDIA A800-SXM...",
# "NVIDIA GeForce RTX 4070 ...": a 4070, 4070 Ti or 4070 Ti SUPER) is refused, never completed (_TRUNCATED).
_MARKS = re.compile(r"\((?:r|tm)\)|[®™]", re.IGNORECASE)
# (not before "w/ NVLink": "RTX 3090 w/ NVLink" is the card and its bridge, which _NVLINK drops)
_CPU_WITH = re.compile(r"^.*?\s+w/(?!\s*nv\s*link)\s*", re.IGNORECASE)
_TRAILERS = re.compile(r"\s*\(gfx[0-9a-f]+[^)]*\)\s*$", re.IGNORECASE)
_TRUNCATED = re.compile(r"(?:\.\.\.|…)\s*$")
# the core counts Apple sells each chip with, written between the chip and its memory ("M2 Max 38-core 96GB", "M3
# Max (40-core GPU) 128GB"): which binning of the chip, not another device; the memory is what sizes it
_CORES = re.compile(r"\s*\(?\b\d+[\s-]*core(?:\s*[gc]pu)?\)?(?=\s|$)", re.IGNORECASE)
# "2x 3090s", "dual P40s": a plural after a model number, read as the card when the name itself is none
_PLURAL = re.compile(r"(?<=\d)s$", re.IGNORECASE)
# Windows names the Lunar Lake iGPU with its memory in brackets: "Intel(R) Arc(TM) 140V GPU (16GB)"
_BRACKET_SIZE = re.compile(r"\s*\((?P<size>\d+(?:\.\d+)?\s*(?:gb|gib|g))\)\s*$", re.IGNORECASE)
_GRAPHICS = re.compile(r"(?<=.)(?:graphics|gpu)$")
# the bridge written after the cards ("2x RTX 3090 NVLink", "RTX 3090 with NVLink", "2x A6000 NVLink bridge"; the
# r/LocalLLaMA post 1t6susj's "4x RTX 3090 with NVLink bonded between GPU pairs"): how the cards talk, not a card;
# each card keeps its own memory (NVLink pools nothing for the engines: vLLM and SGLang shard by
# --tensor-parallel-size, llama.cpp by --tensor-split), so the words are dropped and the device's NVLink fact stays
# the card's own (_nvlink: unknown for a GeForce card). "H100 NVL" / "H200 NVL" are cards of their own ("nvl", not
# "nvlink").
_NVLINK = re.compile(r"(?<=.)(?:with|w|over|via|and|plus)?nvlink(?:ed|bridged?|bridge)?$")
# the memory size written between the model and its form factor ("H100 80GB SXM5", "A100 80GB PCIe", as the
# datasheets title them): read as written after it ("H100 SXM5 80GB")
_MID_SIZE = re.compile(r"^(?P<head>.*?\S)\s+(?P<size>\d+(?:\.\d+)?\s*(?:gb|gib))\s+(?P<tail>[a-z].*)$", re.IGNORECASE)
# a bracketed size after a count ("2x RTX 3090 (48GB)", "4x A100 (320 GB total)"): the GPUs' memory together
_BRACKET_TOTAL = re.compile(r"^(?P<name>.*?\S)\s*\((?P<gb>\d+(?:\.\d+)?)\s*(?:gb|gib|g)(?:\s+total)?\)\s*$",
                            re.IGNORECASE)


def _clean(text: str) -> str:
    """The name without the marks, the CPU before "w/", a trailing LLVM target and core counts ("38-core"), a
    bracketed size unbracketed:
    "Intel(R) Arc(TM) 140V GPU (16GB)" -> "Intel Arc 140V GPU 16GB"."""
    text = _CORES.sub("", _TRAILERS.sub("", _CPU_WITH.sub("", _MARKS.sub("", str(text))))).strip()
    return _BRACKET_SIZE.sub(lambda m: " " + m.group("size"), text)


def _key(text: str) -> str:
    """Lowercase alphanumerics, brand words dropped from the front: "NVIDIA GeForce RTX-4090" -> "rtx4090"; a
    GeForce laptop suffix written as "laptop" ("RTX 4090 Mobile", "4090M" -> "rtx4090laptop", "4090laptop")."""
    key = _MACS.sub("", _BRANDS.sub("", _NOT_ALNUM.sub("", _clean(text).lower())))
    key = _MACS_AFTER.sub(r"\g<chip>", key)
    key = _GRAPHICS.sub("", _NVLINK.sub("", key))
    laptop = _LAPTOP.match(key)
    return f"{laptop.group('card')}laptop" if laptop else key


def _split_size(text: str) -> tuple[str, float | None]:
    """("RTX 3060 12GB") -> ("RTX 3060", 12.0); no trailing size -> (text, None)."""
    text = _clean(text)
    m = _SIZE.match(text) if text[-1:] in ("b", "B", "g", "G") else None
    if not m or not m.group("base").strip() or text[m.start("gb") - 1].isalpha():
        # a number written onto a letter is the model's own ("A10G": NVIDIA's A10G, not an "A" of 10 GB)
        return text, None
    if _NEGATIVE_SIZE.search(text[:m.start("gb")]):  # "H100 -5GB": a sign, not a "RTX-3060-12GB" separator
        raise OomkitError(f"GPU '{text}': its memory size cannot be negative")
    return m.group("base"), float(m.group("gb"))


def _strip_size(name: str) -> str:
    return _split_size(name)[0].strip()


def _spec(row: dict) -> GpuSpec:
    return GpuSpec(
        name=row["name"], vendor=row["vendor"], memory_mib=int(row["memory_mib"]),
        memory_source_kind=row["memory_source_kind"], memory_gb=float(row["memory_gb"]),
        bandwidth_gbs=float(row["bandwidth_gbs"]), source=row["source"], aliases=tuple(row.get("aliases", ())),
        memory_source=row.get("memory_source"),
        cuda_total_mib=int(row["cuda_total_mib"]) if row.get("cuda_total_mib") is not None else None,
        unified_memory=bool(row.get("unified_memory", False)),
        compute_capability=row.get("compute_capability"),
        sm_count=int(row["sm_count"]) if row.get("sm_count") is not None else None,
        memory_options=tuple(
            MemoryOption(float(o["memory_gb"]), float(o["bandwidth_gbs"]) if "bandwidth_gbs" in o else None)
            for o in row.get("memory_options", ())),
        devices_per_board=int(row.get("devices_per_board", 1)), notes=row.get("notes", ""),
    )


@dataclass(frozen=True)
class Integrated:
    """An integrated GPU whose memory is the machine's RAM, sold in many machines (Radeon 780M, Arc 140V): no size
    follows from its name (``integrated`` in gpus.json)."""

    name: str
    vendor: str
    chips: str  # the processors it is part of
    source: str


@dataclass(frozen=True)
class Machine:
    """A machine sold under its own name whose GPU is its chip's ("Framework Desktop": a Ryzen AI Max with 32, 64 or
    128 GB): each configuration is a memory size and the catalog chip it comes with (``machines`` in gpus.json)."""

    name: str
    chips: tuple[tuple[float, str], ...]  # (GB, the catalog chip of that configuration), ascending
    source: str


@dataclass(frozen=True)
class _Catalog:
    gpus: tuple[GpuSpec, ...]
    by_key: dict[str, GpuSpec]  # normalised name or alias -> entry
    by_size: dict[tuple[str, float], GpuSpec]  # (normalised name without size, GB) -> entry
    sizes: dict[str, tuple[float, ...]]  # normalised name without size -> the sizes it is sold with, ascending
    integrated: dict[str, Integrated]  # normalised name or alias -> integrated GPU
    architectures: dict[str, tuple[str, ...]]  # AMD LLVM target ("gfx1100") -> the catalog cards of it
    machines: dict[str, Machine]  # normalised machine name or alias -> machine


@functools.cache
def _catalog() -> _Catalog:
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    rows = data["gpus"]
    gpus = tuple(_spec(r) for r in rows)
    by_key: dict[str, GpuSpec] = {}
    by_size: dict[tuple[str, float], GpuSpec] = {}
    for g in gpus:
        for text in (g.name, *g.aliases):
            key = _key(text)
            by_key.setdefault(key, g)
            base, gb = _split_size(text)
            base_key = key if gb is None else _key(base)
            for size in {g.memory_gb if gb is None else gb, *(o.memory_gb for o in g.memory_options)}:
                by_size.setdefault((base_key, size), g)
    sizes: dict[str, set[float]] = {}
    for (key, gb), g in by_size.items():
        # an alias's number that is not the entry's memory ("GH200 480GB": the Grace CPU's LPDDR5X, nvidia-smi's name
        # of the 96 GB part) is no size the card is sold with
        sold = gb == g.memory_gb or any(o.memory_gb == gb for o in g.memory_options)
        sizes.setdefault(key, set()).add(gb if sold else g.memory_gb)
    integrated: dict[str, Integrated] = {}
    for row in data.get("integrated", ()):
        igpu = Integrated(row["name"], row["vendor"], row["chips"], row["source"])
        for text in (row["name"], *row.get("aliases", ())):
            integrated.setdefault(_key(text), igpu)
    architectures = {k: tuple(v) for k, v in data.get("architectures", {}).items() if k.startswith("gfx")}
    machines: dict[str, Machine] = {}
    for row in data.get("machines", ()):
        machine = Machine(row["name"], tuple(sorted((float(c["memory_gb"]), c["chip"]) for c in row["configurations"])),
                          row["source"])
        for text in (row["name"], *row.get("aliases", ())):
            machines.setdefault(_key(text), machine)
    return _Catalog(gpus, by_key, by_size, {k: tuple(sorted(v)) for k, v in sizes.items()}, integrated,
                    architectures, machines)


def all_gpus() -> tuple[GpuSpec, ...]:
    """Every catalog entry, in file order (each at its default memory configuration)."""
    return _catalog().gpus


def lookup(name: str) -> GpuSpec | None:
    """The entry for a name or alias ("RTX 4090", "nvidia geforce rtx-4090", "3060 12GB", "M3 Max 128GB")."""
    cat = _catalog()
    hit = cat.by_key.get(_key(name))
    if hit is not None:
        # a device sold in several sizes answers in its default (smallest) one, named with its size
        return hit.with_memory(hit.memory_gb) if hit.memory_options else hit
    base, gb = _split_size(name)
    hit = None if gb is None else cat.by_size.get((_key(base), gb))
    if hit is None or not hit.memory_options:
        return hit
    return hit.with_memory(gb)


def size_notes(text: str) -> tuple[str, ...]:
    """For each name in a --gpu list that gives no size but is sold in several ("A100": 40 and 80 GB; "RTX 4060 Ti":
    8 and 16 GB), a line saying which size the estimate takes and how to name another; for a discrete card named
    with a size it is not sold with ("RTX 4090 48GB", a card with its memory modified), a line saying the size is
    taken as stated; for a known family's chip the catalog lacks, what was assumed. A list that names no GPU the
    catalog can size has no notes (devices_for_names refuses it)."""
    return tuple(dict.fromkeys(p.resolution.note for p in _parse(str(text)) if p.resolution.note))


# A chip the catalog lacks of a family it knows, named with its memory ("M5 Max 128GB", "RTX 5070 Ti Laptop 12GB"):
# the device is built from the family's rules and the stated size; what only a datasheet gives (bandwidth, SMs)
# stays unknown. Apple: a tier (Pro, Max, Ultra) of an M-series generation whose base chip is in the catalog ("M5");
# GeForce laptop: an RTX number of a series with laptop entries in the catalog, all of one compute capability.
_APPLE_TIER = re.compile(r"^m(?P<gen>\d+)(?P<tier>pro|max|ultra)$")
_LAPTOP_KEY = re.compile(r"^(?:rtx)?(?P<num>[2-5]0[5-9]0)(?P<ti>ti)?laptop$")
_LAPTOP_NUMBER = re.compile(r"\bRTX (?P<series>[2-5]0)[5-9]0\b")


def _family_device(name: str) -> tuple[GpuSpec, str] | None:
    """A device of a known family that the catalog lacks, named with its memory ("M5 Max 128GB" with "M5" in the
    catalog; "RTX 5070 Ti Laptop 12GB" with RTX 50 laptop entries): (the device, the note saying what was assumed).
    None for anything else: a catalog name, a name without a size, a family the catalog does not know."""
    base, gb = _split_size(name)
    if gb is None or gb < 1 or not base.strip() or lookup(base) is not None:
        return None
    cat = _catalog()
    key = _key(base)
    apple = _APPLE_TIER.match(key)
    if apple:
        chip = cat.by_key.get(f"m{apple.group('gen')}")
        if chip is None or chip.vendor != "apple" or not chip.unified_memory:
            return None
        short = f"M{apple.group('gen')} {apple.group('tier').capitalize()}"
        spec = GpuSpec(name=f"Apple {short} {gb:g}GB", vendor="apple", memory_mib=int(gb * 1024),
                       memory_source_kind="nominal", memory_gb=gb, bandwidth_gbs=None, source="",
                       unified_memory=True)
        # Metal's working set is the llama.cpp backend's rule for every Apple device (llamacpp/backends.py
        # metal_working_set, applied to the MTL devices by metal_devices; mlx/layout.py default_working_set)
        return spec, (f"{short} is not in the catalog: taken as an Apple M-series chip with the {gb:g} GB you gave "
                      f"(unified memory, Metal's working-set share of it); bandwidth unknown")
    laptop = _LAPTOP_KEY.match(key)
    if laptop:
        series = laptop.group("num")[:2]
        ccs = {g.compute_capability for g in cat.gpus if g.vendor == "nvidia" and g.name.endswith("Laptop GPU")
               and (m := _LAPTOP_NUMBER.search(g.name)) and m.group("series") == series}
        if len(ccs) != 1 or None in ccs:
            return None
        cc = ccs.pop()
        short = f"RTX {laptop.group('num')}{' Ti' if laptop.group('ti') else ''} Laptop"
        spec = GpuSpec(name=f"NVIDIA GeForce {short} GPU {gb:g}GB", vendor="nvidia", memory_mib=int(gb * 1024),
                       memory_source_kind="nominal", memory_gb=gb, bandwidth_gbs=None, source="",
                       compute_capability=cc)
        return spec, (f"{short} is not in the catalog: taken as a GeForce RTX {series} laptop GPU (CUDA, compute "
                      f"capability {cc}) with the {gb:g} GB you gave; bandwidth and SM count unknown")
    return None


def _stated_size(name: str) -> tuple[GpuSpec, tuple[float, ...]] | None:
    """A discrete card the catalog knows, named with a size it is not sold with ("RTX 4090 48GB", "2080 Ti 22GB":
    boards with their memory chips replaced): (the card as sold, the sizes it is sold with). None for anything
    else, a unified-memory chip included (its memory is one of the configurations sold)."""
    base, gb = _split_size(name)
    if gb is None or gb <= 0 or not base.strip():
        return None
    spec = lookup(base)
    if spec is None or spec.unified_memory:
        return None
    return spec, _sold_sizes(base, spec)


def _sold_sizes(name: str, spec: GpuSpec) -> tuple[float, ...]:
    """The sizes a card is sold with: its own options and those of the entries its name also names ("A100": the
    40 GB and the 80 GB boards, two entries)."""
    return tuple(sorted({spec.memory_gb, *(o.memory_gb for o in spec.memory_options),
                         *_catalog().sizes.get(_key(name), ())}))


# a key's model: the letters in front and the first number ("rtx5090" of "rtx5090tisuper"), and what follows it
_MODEL = re.compile(r"^(?P<letters>[a-z]*)(?P<number>\d+)(?P<rest>.*)$")


def suggest(name: str, n: int = 3) -> list[str]:
    """Up to ``n`` catalog names close to ``name``, best first ("RTX 4900" -> RTX 4090, RTX 4080, RTX 4070).

    difflib's ratio on the normalised keys; ties go to the same letters in another order (a transposed digit),
    then the longer common start, then the nearer model number. A name that goes on past a model the catalog
    knows ("RTX 5090 Ti Super": an RTX 5090 with a variant never sold) is that model's first: the catalog name it
    begins with (RTX 5090), then the model's other variants (RTX 5090 D), then the cards of its series (the same
    letters and the same first two digits of four: RTX 5080), each group by ratio; the words after the model
    alone ("Ti Super") make no card of another series nearer.
    """
    cat = _catalog()
    want = _key(_split_size(name)[0]) or _key(name)
    import difflib  # only a miss pays for it

    model = _MODEL.match(want)
    if model is not None and not model.group("rest"):
        model = None  # a bare model number ("RTX 4900", "RTX 6000"): the ratio alone
    matcher = difflib.SequenceMatcher(b=want)
    scored = []
    for key, spec in cat.by_key.items():
        matcher.set_seq1(key)
        tier = _model_tier(key, want, model)
        if tier == 3 and (matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5 or matcher.ratio() < 0.5):
            continue
        letters = difflib.SequenceMatcher(None, sorted(key), sorted(want)).ratio()
        prefix = len(os.path.commonprefix([key, want]))
        scored.append((tier, -matcher.ratio(), -letters, -prefix, _number_distance(key, want), key,
                       _short_name(spec)))
    names: list[str] = []
    for *_, short in sorted(scored):
        if short not in names:
            names.append(short)
    return names[:n]


def _model_tier(key: str, want: str, model: re.Match | None) -> int:
    """How near a catalog key is to the model a name goes on past (``model``, _MODEL of the name's key): 0 the
    catalog name it begins with, 1 another variant of that model, 2 a card of its series, 3 none of these."""
    if model is None:
        return 3
    if want.startswith(key) and _MODEL.match(key) and _MODEL.match(key).group("number") == model.group("number"):
        return 0
    other = _MODEL.match(key)
    if other is None or other.group("letters") != model.group("letters"):
        return 3
    number = model.group("number")
    if other.group("number") == number:
        return 1
    return 2 if len(number) == 4 and len(other.group("number")) == 4 and other.group("number")[:2] == number[:2] else 3


def _number_distance(a: str, b: str) -> int:
    """How far apart the first numbers in two keys are (4080 vs 4900: 820); large when either has none."""
    na, nb = re.search(r"\d+", a), re.search(r"\d+", b)
    return abs(int(na.group()) - int(nb.group())) if na and nb else 1 << 30


def _short_name(g: GpuSpec) -> str:
    """What a user would type: the first alias ("RTX 4090"), else the name."""
    return g.aliases[0] if g.aliases else g.name


# oomkit's ceiling on the devices of one estimate: llama.cpp takes 16 (LLAMA_MAX_DEVICES), a vLLM or SGLang
# deployment a few hundred; per-device work is linear, so 1,024 stays well under a second
MAX_DEVICES = 1024


@dataclass(frozen=True)
class Resolution:
    """What one --gpu name is, worked out once (``resolve``): the device it names, with the note the estimate
    prints beside it (which size a bare name sold in several was taken as, a size taken as stated, what a family
    device assumes), or no device (``spec`` None: ``refusal`` says why)."""

    name: str
    spec: GpuSpec | None = None
    note: str | None = None

    @property
    def known(self) -> bool:
        return self.spec is not None


def resolve(name: str) -> Resolution:
    """The one resolution of a --gpu name ("RTX 4090", "3060 12GB", "RTX 4090 48GB", "M5 Max 128GB"), in this order:
    a catalog name or alias (at a size it is sold with), a catalog card at a size it is not sold with (taken as
    stated), a known family's chip named with its memory, any of these with its size written before its form factor
    ("H100 80GB SXM5"). Pure: a function of the name and the catalog data."""
    if _TRUNCATED.search(name):
        return Resolution(name)
    looked = name
    spec = lookup(name)
    base, gb = _split_size(name)
    if spec is None and gb is None and _PLURAL.search(name.strip()):
        looked = name.strip()[:-1]
        spec = lookup(looked)
    if spec is not None:
        return Resolution(name, spec, _sizes_note(name, spec, looked) if gb is None else None)
    stated = _stated_size(name)
    if stated is not None:
        sold_as, sold = stated
        shown = " or ".join(f"{x:g} GB" for x in sold)
        spec = replace(sold_as, name=f"{_strip_size(sold_as.name)} {gb:g}GB", memory_gb=gb,
                       memory_mib=int(gb * 1024), memory_source_kind="nominal", memory_source=None,
                       memory_options=())
        return Resolution(name, spec, f"--gpu {name!r}: {_strip_size(sold_as.name)} is sold with {shown}, not "
                                      f"{gb:g} GB: taken as stated (a card with its memory modified), with the "
                                      f"bandwidth of the card as sold")
    family = _family_device(name)
    if family is not None:
        return Resolution(name, family[0], f"--gpu {name!r}: {family[1]}")
    machine = _machine(name)
    if machine is not None:
        return machine
    mid = _MID_SIZE.match(_clean(name))
    if mid is not None:
        moved = resolve(f"{mid.group('head')} {mid.group('tail')} {mid.group('size')}")
        if moved.known:
            return replace(moved, name=name)
    return Resolution(name)


def _machine(name: str) -> Resolution | None:
    """A machine the catalog knows named with a memory size it is sold with ("Framework Desktop 128GB"): its chip
    in that configuration (AMD Ryzen AI Max+ 395 128GB), with a note saying so. None for anything else."""
    base, gb = _split_size(name)
    machine = _catalog().machines.get(_key(base)) if gb is not None and base.strip() else None
    chip = next((c for size, c in machine.chips if size == gb), None) if machine else None
    spec = lookup(f"{chip} {gb:g}GB") if chip else None
    if spec is None:
        return None
    return Resolution(name, spec, f"--gpu {name!r}: a {machine.name} with {gb:g} GB, read as its chip, the {spec.name}; "
                                  f"{_configurations(machine)}")


def _configurations(machine: Machine) -> str:
    """"sold with 32 GB (AMD Ryzen AI Max 385), 64 or 128 GB (AMD Ryzen AI Max+ 395)": each chip with its sizes."""
    chips: dict[str, list[str]] = {}
    for gb, chip in machine.chips:
        chips.setdefault(chip, []).append(f"{gb:g}")
    shown = [f"{' or '.join(sizes)} GB ({chip})" for chip, sizes in chips.items()]
    return f"the {machine.name} is sold with " + ", ".join(shown)


def _sizes_note(name: str, spec: GpuSpec, looked: str) -> str | None:
    """For a bare name sold in several sizes (``looked``: the name as looked up, "A100" for "A100s"): which one the
    estimate takes, and how to name another."""
    sizes = _catalog().sizes.get(_key(looked), ())
    if len(sizes) < 2:
        return None
    bigger = next(gb for gb in reversed(sizes) if gb != spec.memory_gb)
    shown = [f"{gb:g}" for gb in sizes]
    return (f"--gpu {name!r} is sold with {', '.join(shown[:-1])} or {shown[-1]} GB: taken as {spec.memory_gb:g} GB "
            f"({spec.name}); for another size name it ('{looked} {bigger:g}GB')")


def refusal(name: str) -> str:
    """Why a --gpu name that resolves to no device is refused, in one line: the reason and what to give instead."""
    if _TRUNCATED.search(name):
        return (f"--gpu {name!r} is a name cut short (nvidia-smi's table truncates long names): give the whole name, "
                f"as `nvidia-smi --query-gpu=name --format=csv` prints it")
    base, gb = _split_size(name)
    chip = lookup(base) if gb is not None and base.strip() else None
    if chip is not None:  # a unified-memory chip at a size it is not sold with: its memory is one of those
        sold = sorted({chip.memory_gb, *(o.memory_gb for o in chip.memory_options)})
        return f"unknown GPU {name!r}: {_strip_size(chip.name)} is sold with {', '.join(f'{x:g}' for x in sold)} GB"
    # a chip of a known family the catalog lacks, named without its memory: the size is what it needs
    sized = gb is None and _family_device(f"{name} 16GB") is not None
    laptop = _LAPTOP.match(_key(base))
    if sized and not laptop:
        return (f"unknown GPU {name!r}: not in the catalog; name it with its memory, '{name} <size>GB' (the size "
                f"your machine has), to plan for it")
    if laptop:  # a laptop part the catalog lacks ("4050M" too)
        return (f"unknown GPU {name!r}: a laptop GPU has other memory than the desktop card of its number, and this "
                f"one is not in the catalog; give its memory with --vram"
                + (f" or in the name ('{name} <size>GB')" if sized else ""))
    cat = _catalog()
    machine = cat.machines.get(_key(base))
    if machine is not None:  # a machine without its memory, or with a size it is not sold with
        sized = machine.chips[-1][0]
        if gb is not None:  # "Framework Desktop 96GB": the size named is none it is sold with
            return (f"--gpu {name!r} is a machine whose GPU is its chip's: {_configurations(machine)}, not "
                    f"{gb:g} GB; name the machine as sold "
                    f"('{_strip_size(name)} {sized:g}GB'), or give the GPU's share of its memory, as set in firmware, "
                    f"with --vram (e.g. --vram {gb:g}GB)")
        return (f"--gpu {name!r} is a machine whose GPU is its chip's: {_configurations(machine)}; name it with its "
                f"memory ('{name} {sized:g}GB')")
    igpu = cat.integrated.get(_key(base))
    if igpu is not None:
        return _integrated_refusal(name, igpu, gb)
    cards = cat.architectures.get(_key(base))
    if cards is not None:
        shown = ", ".join(f"{c} ({_sold_with(lookup(c))} GB)" if lookup(c) else c for c in cards)
        return (f"--gpu {name!r} is an AMD GPU architecture (an LLVM target, as rocminfo prints it), not one card: "
                f"{_key(base)} is {shown}; name the card")
    if re.fullmatch(r"\d+(?:\.\d+)?\s*(?:[gmt]i?b?|[gmt]i?b)", name.strip(), re.IGNORECASE):
        return f"--gpu {name!r} is a memory size, not a GPU name: give --vram {name}"
    hint = suggest(name)
    # the device's memory is what an estimate needs of it: --vram gives it where the catalog has no entry
    return f"unknown GPU {name!r}" + (f": did you mean {', '.join(hint)}? If it is none of these, give" if hint else
                                      ": not in the catalog; give") + " its memory with --vram SIZE"


def _sold_with(spec: GpuSpec) -> str:
    """The sizes a device is sold with, "24" or "32/64/128"."""
    return "/".join(f"{gb:g}" for gb in sorted({spec.memory_gb, *(o.memory_gb for o in spec.memory_options)}))


def _integrated_refusal(name: str, igpu: Integrated, gb: float | None) -> str:
    """An integrated GPU sharing the machine's RAM: what llama.cpp can use on it is what its driver maps, set by the
    machine (BIOS carve-out, the driver's share of the RAM), never by the name or the RAM alone. ggml-vulkan's
    ggml_backend_vk_get_device_memory (ggml/src/ggml-vulkan/ggml-vulkan.cpp of the build measured, llama.cpp
    0c1e570) sums every memory heap of a device of type eIntegratedGpu, device-local or not, as its total (and each
    heap's budget less its usage as its free memory, with VK_EXT_memory_budget), where a discrete card counts only
    its eDeviceLocal heaps: the Radeon 8060S of a 128 GB machine shows "using device Vulkan0 (Radeon 8060S Graphics)
    - 85720 MiB free" (GPUOpen-Drivers/AMDVLK#413). ggml-cuda's UMA rule (ggml_backend_cuda_device_get_memory: free
    = MemAvailable of /proc/meminfo for an integrated device, PR #17368) is CUDA's on Linux alone, not HIP's. So the
    size is asked for, as llama.cpp lists the device."""
    backend = "SYCL or Vulkan" if igpu.vendor == "intel" else "Vulkan"
    stated = f" (nor the {gb:g} GB named)" if gb is not None else ""
    return (f"--gpu {name!r} is an integrated GPU ({igpu.name}: {igpu.chips}) sharing the machine's RAM: llama.cpp "
            f"({backend}) counts every memory heap its driver maps, which the machine sets, not the name{stated}; "
            f"give that size with --vram (`llama-cli --list-devices` prints it)")


@dataclass(frozen=True)
class _Part:
    count: int
    name: str
    resolution: Resolution
    macos: int | None = None  # the macOS release named after an Apple chip ("M3 Ultra 512GB (macOS 15)")


# A Mac's macOS release after its name, which picks the default GPU working set (memory.py apple_default_gpu_share):
# "M3 Ultra 512GB (macOS 15)", "M3 Ultra 512GB macOS 15.4", or its own part "M3 Ultra 512GB, macOS 15".
_MACOS = re.compile(r"[\s(]*\bmac\s*os\b\s*(?P<rel>[^()]*?)\s*\)?\s*$", re.IGNORECASE)
# The releases whose rule is known (apple_default_gpu_share's logs), by number or name; 27.0 prints 26's steps.
_MACOS_NAMES = {"ventura": 13, "sonoma": 14, "sequoia": 15, "tahoe": 26}
_MACOS_KNOWN = (13, 14, 15, 26, 27)


def _macos_release(text: str, words: str) -> int:
    """"15", "15.4", "Sequoia", "26 Tahoe" -> the major release; anything else a HardwareError."""
    tokens = text.lower().split()
    majors = {_MACOS_NAMES[t] if t in _MACOS_NAMES else int(t.split(".")[0]) if re.fullmatch(r"\d+(?:\.\d+)*", t)
              else -1 for t in tokens}
    if len(majors) != 1 or (major := majors.pop()) not in _MACOS_KNOWN:
        raise HardwareError(f"--gpu {words[:60]!r}: unknown macOS release {text.strip()[:30]!r}; name one of "
                            f"{', '.join(map(str, _MACOS_KNOWN))} (or Ventura, Sonoma, Sequoia, Tahoe), e.g. "
                            f"\"M3 Ultra 512GB (macOS 15)\"")
    return major


# The fullwidth forms of ASCII (U+FF01-U+FF5E) and the ideographic space, as a CJK input method types "２x H１００":
# the characters they stand for (their NFKC forms)
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> tuple[_Part, ...]:
    """A --gpu list -> its parts, each name resolved once: parts split at commas and at a plus between spaces
    ("3090 + 3060"); a count written "2x H100", "2 x H100", "2*H100", "dual 3090", or, where the whole part is no
    catalog name, "8xH100", "H100x8", "H100 x 8" ("5090 x 2": two RTX 5090, not 5090 of a GPU named "2"). A part
    that names no GPU but whose pieces between "+", "/", ";", "&" or "and" each do ("3090+3060", "3090 and 3060")
    is those GPUs. Cached per text: check, estimate and the notes parse a --gpu once."""
    text = text.translate(_FULLWIDTH)
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if bad is not None:  # a NUL or other control character names no GPU; _key would drop it and read the rest
        raise HardwareError(f"--gpu {text[:60]!r}: a GPU name cannot hold the control character {bad!r}")
    # A bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) makes the name show in another
    # order than it reads ("H\u202e100" shows as "H001"): _key would drop it and read a GPU the user never saw
    bidi = next((c for c in text if "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069"), None)
    if bidi is not None:
        raise HardwareError(f"--gpu {text[:60]!r}: a GPU name cannot hold the bidirectional control {bidi!r}, which "
                            "shows the name in another order than it reads")
    # a numeral that is no decimal digit ("²⁴GB", "Ⅱx"; int() and \d read the digits of every script): _key would
    # drop it as punctuation and read another size or count
    numeral = next((c for c in text if unicodedata.category(c) in ("No", "Nl")), None)
    if numeral is not None:
        raise HardwareError(f"--gpu {text[:60]!r}: a GPU name cannot hold the numeral {numeral!r}; write its digits "
                            "as 0-9")
    parts: list[_Part] = []
    for part in (p.strip() for p in _PLUS.sub(",", text).split(",")):
        if not part:
            continue
        if len(part) > MAX_NAME:  # the name patterns backtrack over a long text (20,000 digits took 19 s)
            raise HardwareError(f"--gpu {part[:60]!r}...: a GPU name of {len(part):,} characters; a GPU's name is "
                                f"at most {MAX_NAME} (as nvidia-smi or the vendor writes it, with its count and size)")
        release = _MACOS.search(part)
        if release:
            macos = _macos_release(release.group("rel"), text)
            part = part[:release.start()].strip()
            if not part and not parts:
                raise HardwareError(f"--gpu {text[:60]!r}: a macOS release names no Mac; write it after the chip, "
                                    "e.g. \"M3 Ultra 512GB (macOS 15)\"")
            target = _part(part) if part else parts.pop()
            if target.resolution.spec is not None and target.resolution.spec.vendor != "apple":
                raise HardwareError(f"--gpu {text[:60]!r}: a macOS release goes with an Apple chip, not "
                                    f"{target.resolution.spec.name}")
            parts.append(replace(target, macos=macos))
            continue
        one = _part(part)
        if not one.resolution.known:
            pieces = [p.strip() for p in _JOINERS.split(part)]
            if len(pieces) > 1 and all(pieces):
                each = [_part(p) for p in pieces]
                if all(x.resolution.known for x in each):
                    parts += each
                    continue
        parts.append(one)
    return tuple(parts)


# the longest text one GPU of a --gpu list may be: the longest names ("NVIDIA RTX PRO 6000 Blackwell Max-Q
# Workstation Edition", "Mac Studio M3 Ultra 512GB (macOS 15.4)") with a count and a size are under 80
MAX_NAME = 200
# the joiners of "3090+3060", "3090/3060", "3090; 3060", "3090 & 3060", "3090 and 3060"
_JOINERS = re.compile(r"\s*(?:[+/;&]|\band\b)\s*", re.IGNORECASE)


def _part(part: str) -> _Part:
    """One part of a --gpu list -> (count, name, its resolution); the count as the first form that leaves a known
    name, else the strict "2x NAME" form (its name then reported unknown), else count 1."""
    whole = resolve(part)
    if whole.known:
        return _Part(1, part, whole)
    word = _COUNT_WORD.match(part)
    if word:
        name = word.group("name").strip()
        return _Part(_COUNT_WORDS[word.group("word").lower()], name, resolve(name))
    strict = _COUNT.match(part)
    total = _bracketed_total(_count(strict.group("n")), strict.group("name").strip()) if strict else None
    if total is not None:
        return total
    strict_name = strict.group("name").strip() if strict else None
    strict_res = resolve(strict_name) if strict_name else None
    for m in (strict, *(p.match(part) for p in _COUNT_LOOSE)):
        if not m:
            continue
        name = m.group("name").strip()
        res = strict_res if m is strict else resolve(name)
        if res.known:
            return _Part(_count(m.group("n")), name, res)
    if strict:
        return _Part(_count(strict.group("n")), strict_name, strict_res)
    return _Part(1, part, whole)


def _bracketed_total(n: int, name: str) -> _Part | None:
    """"2x RTX 3090 (48GB)": N cards and, in brackets, a size that is N times one they are sold with and none
    itself: the cards' memory together, each card at its share. None for any other name (a bracketed size one card
    is sold with, or that no N of them make, stays the card's own)."""
    m = _BRACKET_TOTAL.match(name)
    if m is None or n < 2:
        return None
    spec = lookup(m.group("name"))
    if spec is None or spec.unified_memory:
        return None
    gb, sold = float(m.group("gb")), _sold_sizes(m.group("name"), spec)
    each = next((x for x in sorted(sold) if abs(n * x - gb) < 0.5), None)
    if gb in sold or each is None:
        return None
    res = resolve(f"{m.group('name')} {each:g}GB")
    if not res.known:
        return None
    note = f"--gpu '{n}x {name}': {gb:g} GB read as the {n} cards together, {each:g} GB each"
    return _Part(n, m.group("name"), replace(res, note=res.note or note))


def _count(digits: str) -> int:
    return int(digits) if len(digits) <= 9 else MAX_DEVICES + 1  # counted before any list is built


def devices_for_names(text: str) -> tuple[Device, ...]:
    """Devices for a comma list of catalog names: "RTX 4090,RTX 4090", "2x H100 SXM", "M3 Max 128GB".

    Ids follow llama.cpp's backend names, numbered per vendor: CUDA0, CUDA1 (NVIDIA), ROCm0 (AMD), MTL0
    (Apple), SYCL0 (Intel). A board with several GPUs (MI250X: two GCDs) gives one device per GPU.
    """
    specs: list[tuple[GpuSpec, int | None]] = []
    for part in _parse(str(text)):
        count, name, spec = part.count, part.name, part.resolution.spec
        if count < 1:
            raise HardwareError(f"GPU count must be at least 1: {count}x {name!r}")
        if spec is None:
            raise HardwareError(refusal(name))
        if len(specs) + count * spec.devices_per_board > MAX_DEVICES:
            raise HardwareError(f"--gpu {str(text)[:60]!r}: more than {MAX_DEVICES:,} devices; oomkit takes 1 to "
                                f"{MAX_DEVICES:,}")
        specs += [(spec, part.macos)] * (count * spec.devices_per_board)
    if not specs:
        raise OomkitError(f"no GPU named in {text!r}")
    counters: dict[str, int] = {}
    devices = []
    for spec, macos in specs:
        prefix = _ID_PREFIX.get(spec.vendor, "GPU")
        index = counters.get(prefix, 0)
        counters[prefix] = index + 1
        devices.append(Device(id=f"{prefix}{index}", name=spec.name, memory_bytes=spec.memory_bytes,
                              compute_capability=_capability(spec), nvlink=_nvlink(spec.name),
                              bandwidth_gbs=spec.bandwidth_gbs, sm_count=spec.sm_count,
                              integrated=spec.unified_memory, gfx_target=_gfx_target(spec),
                              cuda_total_bytes=_cuda_total(spec), macos=macos))
    return tuple(devices)


def with_facts(device: Device) -> Device:
    """`device` with the GPU facts the catalog knows for its name (compute capability, NVLink, memory bandwidth, SM
    count, whether it is an integrated GPU), where it has none of its own. A device without a name the catalog knows
    keeps what it has."""
    if (device.compute_capability is not None and device.nvlink is not None and device.bandwidth_gbs is not None
            and device.sm_count is not None and device.integrated is not None and device.gfx_target is not None):
        return device
    spec = lookup(device.name) if device.name else None
    cc = device.compute_capability if device.compute_capability is not None else _capability(spec)
    nvlink = device.nvlink if device.nvlink is not None else _nvlink(device.name)
    bandwidth = device.bandwidth_gbs if device.bandwidth_gbs is not None else (spec.bandwidth_gbs if spec else None)
    sms = device.sm_count if device.sm_count is not None else (spec.sm_count if spec else None)
    integrated = device.integrated if device.integrated is not None else (spec.unified_memory if spec else None)
    gfx = device.gfx_target if device.gfx_target is not None else _gfx_target(spec)
    cuda_total = device.cuda_total_bytes
    if cuda_total is None and spec is not None and device.memory_bytes == spec.memory_bytes:
        cuda_total = _cuda_total(spec)  # the catalog's reading is of its own size, not of another memory option
    return replace(device, compute_capability=cc, nvlink=nvlink, bandwidth_gbs=bandwidth, sm_count=sms,
                   integrated=integrated, gfx_target=gfx, cuda_total_bytes=cuda_total)


def _cuda_total(spec: GpuSpec | None) -> int | None:
    return spec.cuda_total_mib * MiB if spec is not None and spec.cuda_total_mib is not None else None


def _gfx_target(spec: GpuSpec | None) -> str | None:
    """The AMD LLVM target whose cards (the catalog's architectures) name this entry or one of its aliases."""
    if spec is None or spec.vendor != "amd":
        return None
    names = {spec.name, *spec.aliases}
    return next((t for t, cards in _catalog().architectures.items() if names.intersection(cards)), None)


def _capability(spec: GpuSpec | None) -> tuple[int, int] | None:
    if spec is None or not spec.compute_capability:
        return None
    major, _, minor = spec.compute_capability.partition(".")
    return int(major), int(minor or 0)


def _nvlink(name: str | None) -> bool | None:
    """True for the data-centre parts with NVLink; None (unknown) otherwise."""
    return True if name and _NVLINK_NAMES.search(name) else None
