"""`--fit` (on by default since PR #16653): llama.cpp fits the command to the free memory before it loads.

Mirrors common/fit.cpp common_params_fit_impl (ggml-org/llama.cpp@08033df0, the newest read, with load_mode and
n_streams; @6d0892ba, an earlier version with the same steps; before the move to common it was src/llama.cpp
llama_params_fit_impl). Every "dry run" of the source (a no_alloc load and
context whose buffers llama_get_memory_breakdown reports per device) is oomkit's own figure for the same
command: model, context (KV cache + recurrent state) and compute per device, as memory_breakdown() gives them.

1. If every device keeps its margin (--fit-target, 1024 MiB each) with the command as given: nothing changes.
2. Context: only when the user gave no -c and the trained context is above -fitc (4096). A second dry run at
   -fitc and a straight line between the two; the context is rounded down to a multiple of 256. With one
   device that is the end when the total fits, with no dry run at the context picked: a cache capped between
   the two contexts (SWA or chunked attention, min(n_ctx, n_swa x n_seq + n_ubatch) cells) holds more there
   than the line between its two sizes, which under-reads the load by that much (Llama 4 Scout with four
   sequences: 3.5 GiB at 1391872; tests/test_llamacpp_fit_consistency.py). Several devices reserve (nd + 1) x a
   layer's share first.
3. Layers, only when -ngl, -ts and -ot were not given: devices are filled back to front with whole layers by
   false position (the last device holds the output layer); for MoE models with every expert tensor on the CPU
   first ("dense-only" layers), then those are turned into full layers front to back, and one more layer may
   go on the device with only its attention (ATTN), or its up (UP) or up + gate (GATE) projections.
   The result is -ngl, -ts (layers per device) and -ot PATTERN=CPU overrides.
A refusal (-ngl typed, -sm row, too many layers) keeps what was changed before it (the context) and llama.cpp
loads the rest as typed; the engine logs the reason.

Later rules, by build (FIT_ERAS; the newest read is common/fit.cpp at ggml-org/llama.cpp@08033df0):
- a -md draft model: its dry-run memory added to each device's target (PR #23485, b9304), then measured beside the
  main model in every dry run at the same context (common_fit_extra_model, the newest source: NEWEST);
- the --mmproj projector's memory (weights + its warmup compute buffer) is added to the target of the device it
  loads on (PR #21489);
- with no device (a CPU build) the host buffers are held against the host's total memory and only the context is
  reduced (PR #21568, common_params_fit_impl's nd == 0 branches);
- with a KV cache that is not unified (-np N without -kvu) the context is per stream: the trained and the least
  context are taken N times and the fitted context is a multiple of 256 x N (PR #27496, the newest source: NEWEST);
- a false-position step whose upper bound uses no more memory than the lower one is delta - 1 (the `headroom > 0`
  guard of the same file).
No source read re-checks the devices after the one step 4 fills, nor retries with larger margins (common/fit.cpp
at 08033df0 and 6d0892ba, the llama_params_fit_impl form before PR #22171 alike; Ollama 0.32.15's b10488 lies
between): the last device's one full layer is its first block (set_ngl_tensor_split_tbo), a MoE block with all its
experts once blocks move to the devices before it, and that device may end over its target, as llama.cpp's own last
line prints (tests/test_llamacpp_fit_retry.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import SettingsError
from ...memo import SEARCHING, ByObject
from ...memory import Device
from ...model.spec import ModelSpec
from ...units import MiB
from ..versions import Eras
from .backends import cpu_repack, is_metal, metal_devices, opencl_buffers, vulkan_unpadded
from .compute import compute_by_device, device_auto_fa_off
from .kv import Cache, kv_caches, recurrent_bytes_by_layer, resolve_context
from .mtp import mtp_context_on, mtp_dry_run
from .projector import projector_memory
from .settings import ERAS, LlamaCppSettings, build_number
from .split import model_devices
from .weights import ModelBuffers, Placement, default_weight_format, model_buffers, place_layers

# Builds at which the fit's own rules changed: each PR's merge commit counted on master (the build number), or
# NEWEST for rules past the builds oomkit dates by number.
FIT_ERAS = Eras({
    # PR #21489 "mtmd: fit_params now take into account mmproj" (opened 2026-04-05, merged as e2b129e1b on
    # 2026-05-20: b9251, its count on master): llama-server and llama-cli add
    # mtmd_get_memory_usage (the projector's weights and compute buffer) to fit_params_target of its device
    # (tools/server/server-context.cpp load_model)
    "mmproj_margin": 9251,
    # PR #21568 "llama: fit ctx size for CPU only" (fd1c0ec3f, 2026-04-18, b8834): no device -> the host
    # buffer types against the total system memory; before it a CPU build kept the trained context (issue #19646)
    "host_fit": 8834,
    # PR #27496 "fit: also take into account n_streams" (2fb989b9e, 2026-08-22, b10584): past the builds oomkit
    # dates by number, so the newest source's rule at settings.NEWEST (b9999); issue
    # #25408's b9893 (2026-07-07) still fits without it
    "fit_streams": 9999,
    # PR #23485 "server: add margin for draft model for `fit`" (opened 2026-05-21, issue #23472): before the fit,
    # llama-server dry-runs the draft model (common_get_device_memory_data with -md, -devd, -ngld, -ctkd / -ctvd and
    # the main command's context parameters, its -c included) and adds its model + context + compute per device to
    # fit_params_target (tools/server/server-context.cpp load_model, "[spec] estimated memory usage of draft
    # model"). Merged as 83eebe9d0 (2026-05-24, b9304: its count on master); b9297 lacks it, b9305, the release
    # built from it, has it (PR #23801's table; issue #23872: "all new builds since and including release b9305")
    "draft_margin": 9304,
    # common_fit_extra_model (common/fit.h): the draft is no margin any more but a second model measured beside the
    # main one in every dry run at the candidate context ("its memory is measured again whenever that context
    # changes"; server-context.cpp: "the draft / MTP context is fitted together with the target model"). After PR
    # #27496 (2026-08-21, whose thread still finds "the draft memory ... folded into fit_params_target"); a fork's
    # patch list rebasing onto b10636 drops the margin block as "master's common_fit_extra_model already accounts for
    # it". That is past the builds oomkit dates by number (settings.NEWEST, b9999, stands for the newest source and
    # every later build runs its rules, version_warning): the rule of the newest source, placed at NEWEST. Issue
    # #25408 (b9893: the draft's context sized at its trained one beside a fitted main context) is the margin era's
    # known flaw, mirrored before it.
    "draft_joint": 9999,
    # the fit moved from src/llama.cpp (llama_params_fit_impl, llama_params_fit) to common/fit.cpp
    # (common_params_fit_impl, common_fit_params) with PR #22171 "fit-params : refactor + add option to output
    # estimated memory per device" (cfe9838d2, 2026-04-21, b8865, the first commit with common/fit.cpp); b8763
    # (issue #21801) still prints the former, b9036 (PR #22546's log) the latter
    "fit_in_common": 8865,
    # PR #20910 "llama-fit: fix regex pattern for gate_up tensors" (merged 2026-03-23; fixes issues #20492, #20703,
    # #20883; PR #20758, "gate_up is missing from the tensor patterns", was its first try): the overflow patterns
    # and pattern_moe_all name the merged ffn_gate_up_exps. Its count on master is not in the history read here
    # (the mirror ends at 2025-11-23): b8480, the build of its merge day by versions.llamacpp_build_on (between
    # b8351, PR #20549, and b8639, 2026-04-02). lmstudio-bug-tracker#1673 (2026-03-20) prints the older form
    "fit_gate_up": 8480,
})


def log_names(s: LlamaCppSettings) -> tuple[str, str]:
    """The function names the fit's lines start with in the build's log: (the decisions, the closing line)."""
    if FIT_ERAS.reached(build_number(s.engine_version), "fit_in_common"):
        return "common_params_fit_impl", "common_fit_params"
    return "llama_params_fit_impl", "llama_params_fit"

# Not printed by llama.cpp: the CUDA context and cuBLAS workspace each GPU carries. Ollama reserves 457 MiB per
# CUDA/ROCm GPU for it (ollama discover/types.go MinimumMemory); oomkit counts the same so totals are comparable.
# It is already taken when llama.cpp reads the free memory (ggml_backend_dev_memory after the backend's init), so
# a device of known size but no free figure is read as its size less this.
GPU_RUNTIME_RESERVE = 457 * MiB
UINT32_MAX = 2**32 - 1

# common_layer_fraction_t: which part of a layer stays on its device when the rest overflows
ATTN, UP, GATE, MOE = 1, 2, 3, 4
_OVERFLOW = {
    ATTN: r"blk\.{}\.ffn_(gate|up|gate_up|down).*",
    UP: r"blk\.{}\.ffn_(gate|gate_up|down).*",
    GATE: r"blk\.{}\.ffn_down.*",
    MOE: r"blk\.{}\.ffn_(up|down|gate_up|gate)_(ch|)exps",
}
MOE_ALL = r"blk\.\d+\.ffn_(up|down|gate_up|gate)_(ch|)exps"  # pattern_moe_all
# before PR #20910 (FIT_ERAS fit_gate_up): the same fractions without gate_up, so a merged ffn_gate_up_exps matches
# no MOE pattern and stays on its device (the ATTN and UP forms still catch it through their trailing .*); the
# fit-params README's b6895 output and lmstudio-bug-tracker#1673's print these
_OVERFLOW_BEFORE_GATE_UP = {
    ATTN: r"blk\.{}\.ffn_(up|gate|down).*",
    UP: r"blk\.{}\.ffn_(gate|down).*",
    GATE: r"blk\.{}\.ffn_down.*",
    MOE: r"blk\.{}\.ffn_(up|down|gate)_(ch|)exps",
}
_MOE_ALL_BEFORE_GATE_UP = r"blk\.\d+\.ffn_(up|down|gate)_(ch|)exps"


def overflow_patterns(s: LlamaCppSettings) -> tuple[dict[int, str], str]:
    """The build's overflow pattern per layer fraction and its pattern_moe_all (llama_get_overflow_pattern)."""
    if FIT_ERAS.reached(build_number(s.engine_version), "fit_gate_up"):
        return _OVERFLOW, MOE_ALL
    return _OVERFLOW_BEFORE_GATE_UP, _MOE_ALL_BEFORE_GATE_UP


@dataclass(frozen=True)
class StateByDevice:
    """KV cache and recurrent state per backend (-1 = the CPU): they follow their layer's device unless -nkvo."""

    kv: dict[int, int]
    rs: dict[int, int]
    layer_kv: dict[int, int]  # layer -> its K + V bytes
    layer_cells: dict[int, int]  # layer -> the cells of its cache


def state_by_device(caches: list[Cache], rs: dict[int, tuple[int, int]], placement: Placement,
                    s: LlamaCppSettings) -> StateByDevice:
    kv_by_dev: dict[int, int] = {}
    layer_kv: dict[int, int] = {}
    layer_cells: dict[int, int] = {}
    for c in caches:
        for il in c.layers:
            b = c.k_bytes_by_layer[il] + c.v_bytes_by_layer[il]
            d = -1 if s.no_kv_offload else placement.layer_device[il]
            kv_by_dev[d] = kv_by_dev.get(d, 0) + b
            layer_kv[il] = layer_kv.get(il, 0) + b  # a layer may sit in two caches (DSA: latent + indexer)
            layer_cells[il] = c.cells
    rs_by_dev: dict[int, int] = {}
    for il, (r, st) in rs.items():
        d = -1 if s.no_kv_offload else placement.layer_device[il]
        rs_by_dev[d] = rs_by_dev.get(d, 0) + r + st
    return StateByDevice(kv_by_dev, rs_by_dev, layer_kv, layer_cells)


@dataclass(frozen=True)
class Breakdown:
    """llama_memory_breakdown_data of one device: what the memory breakdown table prints as model, context,
    compute (self = their sum)."""

    model: int = 0
    context: int = 0
    compute: int = 0

    @property
    def total(self) -> int:
        return self.model + self.context + self.compute


def memory_breakdown(weights: ModelBuffers, state: StateByDevice, compute: dict[int, int],
                     n_devices: int, cpu_twice: bool = False) -> tuple[Breakdown, ...]:
    """Per device, then the host last (llama_context::memory_breakdown: the model's buffers, the memory
    module's (KV cache, recurrent state) and the scheduler's compute buffers). cpu_twice: the CPU backend's
    compute buffer counted once more, as a no_alloc dry run counts it where the BLAS backend shares it
    (blas_shares_cpu_buffer)."""
    out = [Breakdown(weights.by_device.get(i, 0), state.kv.get(i, 0) + state.rs.get(i, 0), compute.get(i, 0))
           for i in range(n_devices)]
    host_compute = sum(b for d, b in compute.items() if d < 0)  # the CPU backend's, and BLAS's (BLAS_KEY)
    out.append(Breakdown(weights.host_buffer_bytes, state.kv.get(-1, 0) + state.rs.get(-1, 0),
                         host_compute + (compute.get(-1, 0) if cpu_twice else 0)))
    return tuple(out)


def blas_shares_cpu_buffer(devices: tuple[Device, ...], s: LlamaCppSettings) -> bool:
    """Whether the BLAS backend and the CPU backend share one compute buffer, which a no_alloc dry run (--fit's)
    counts twice in the host's compute. A build with ggml-blas (-DGGML_BLAS=ON: s.blas; on by default on Apple,
    ggml/CMakeLists.txt: "if (APPLE) ... set(GGML_BLAS_DEFAULT ON)", Accelerate, so a Metal build has it) adds the
    BLAS backend to every context (src/llama-context.cpp, "add ACCEL backends"); its buffer type is the CPU's
    (ggml-blas.cpp ggml_backend_blas_device_get_buffer_type), and so is the CPU backend's where the first device has
    no host buffer type (ggml-metal.cpp: get_host_buffer_type NULL; no device at all). ggml_gallocr_new_n then
    gives both backends one allocator, and ggml_gallocr_reserve_n_size (ggml-alloc.c), which the no_alloc reserve
    calls, reports that allocator's size under each backend; llama_context::memory_breakdown adds
    backend_buf_exp_size per backend to its buffer type's compute, so the CPU buffer type's row holds it twice. An
    allocating reserve counts it once (ggml_gallocr_get_buffer_size: "only return the buffer size the first time it
    appears to avoid double counting"). Where the CPU backend takes a device's host buffer type (CUDA_Host) the two
    are separate buffers (compute.BLAS_KEY)."""
    metal = bool(devices) and all(is_metal(d) for d in devices)
    if not (s.blas or metal) or s.backend == "cpu":
        return False
    return not devices or metal


# the last dry runs: a plan or a fit asks the same load again (each option's own command, the same layer split at
# another try); keyed by the spec object (kept, so that its id is not reused), the devices and the settings
_DRY_RUNS = ByObject[tuple[Breakdown, ...]](4096)


# the searches whose fits may weigh a layout roughly (memo.SEARCHING); "least" (check's smallest requirement) reads
# only the fitted layout's figures, exact, and not how many dry runs the fit took to find it
ROUGH_SEARCHES = frozenset({"fit", "offload"})


def dry_run(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[Breakdown, ...]:
    """_dry_run, memoised (the arguments are frozen; the same ones give the same rows)."""
    rough = SEARCHING.get() in ROUGH_SEARCHES  # a search's rough rows are kept apart from the exact ones
    return _DRY_RUNS.get(spec, (devices, s, rough), lambda: _dry_run(spec, devices, s, rough))


def dry_run_floor(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> tuple[Breakdown, ...]:
    """A dry run's rows without their compute buffers (weights, KV cache and recurrent state): no less than the
    rows any dry run of the same settings gives, without a scheduler replay."""
    return _dry_run(spec, devices, s, floor=True)


def _dry_run(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
             rough: bool = False, floor: bool = False) -> tuple[Breakdown, ...]:
    """common_get_device_memory_data: the breakdown a no_alloc load and context would report.

    Without a device the host row is what the host fit weighs: the dry run loads without a mapping
    (LLAMA_LOAD_MODE_NONE, before it use_mmap = false), so the CPU weights are one allocated buffer; repacked
    weights are left out, since CPU_REPACK is not a host buffer type (repack.cpp: is_host = nullptr) and the CPU is
    none of the model's devices, so common_get_device_memory_data_impl adds them to no row."""
    ctx = resolve_context(spec, s)
    caches = kv_caches(spec, ctx, s.swa_full)
    rs = recurrent_bytes_by_layer(spec, ctx, s)
    placement = place_layers(spec, devices, s)
    unmapped = replace(s, mmap=False)
    if devices:
        # each device buffer type's own tensor sizes, as the load takes them (Vulkan's unpadded ggml_nbytes,
        # backends.vulkan_unpadded). The dry run maps nothing, so a Metal device's weights sit in its own MTL0
        # buffer type with or without --no-mmap: ggml_nbytes at 32-byte alignment, no row padding
        # (ggml-metal.cpp ggml_backend_metal_buffer_type_get_alloc_size, b7140), as the --no-mmap load takes them
        weights = vulkan_unpadded(spec, devices, unmapped, model_buffers(spec, devices, s, placement), placement)
        weights = opencl_buffers(spec, devices, s, placement, weights)
    else:
        weights, _ = cpu_repack(spec, devices, unmapped, model_buffers(spec, devices, unmapped, placement), placement)
    state = state_by_device(caches, rs, placement, s)
    # the dry run's context resolves -fa auto as the load's does (llama_context's constructor in both)
    ctx = device_auto_fa_off(spec, ctx, placement, devices, s)
    # in a search only whether the whole model fits matters: the layer splits the fit tries after that take no replay
    compute = {} if floor else compute_by_device(spec, ctx, caches, placement, devices, s, rough=rough)
    return memory_breakdown(weights, state, compute, len(devices), cpu_twice=blas_shares_cpu_buffer(devices, s))


def free_memory(d: Device) -> int | None:
    """What ggml_backend_dev_memory reports free: the measured figure, else the size less the runtime.

    An Apple GPU (its size the Metal working set, backends.metal_devices) is read whole: ggml-metal gives free =
    recommendedMaxWorkingSetSize - MTLDevice.currentAllocatedSize (ggml-metal-device.m ggml_metal_device_get_memory,
    b7140), and the Metal runtime's own memory is not in that allocated size. The fit's logs print the working set
    less a few MiB, not less a runtime: "18185 MiB of free device memory" on an Apple M5 whose working set is
    19069.67 MB = 18186 MiB (github.com/ontouchstart/rabbit-holes ggml-gpt-oss-20b-GGUF-curl.md, b8164); 9822 MiB
    self and "will leave 6510" on an M4 Pro of 17179.89 MB = 16384 MiB, 51 less (github.com/alekseybb197/local-llm
    macbook-pro-m4-24.md, b8999). The layout counts the runtime beside the buffers all the same
    (programs.with_runtime_reserve, 512 MiB), so a command fitted there keeps the margin less that."""
    if d.free_bytes is not None:
        return d.free_bytes
    if d.memory_bytes is None:
        return None
    if is_metal(d):
        return d.memory_bytes
    return max(d.memory_bytes - GPU_RUNTIME_RESERVE, 0)


# programs that load without common_init_from_params: the Python binding (llama_model_load_from_file) and llama-bench
# (its own loop over test rows). LM Studio's runtime fits: lmstudio-bug-tracker#2138's log prints the fit's own
# "n_gpu_layers already set by user to 999999, abort" (GPU offload max, lmstudio.py)
NO_FIT_PROGRAMS = ("llama-cpp-python", "llama-bench")


def applies(s: LlamaCppSettings, devices: tuple[Device, ...]) -> bool:
    """common_init_from_params runs the fit when -fit is on (the default) for every program built on common
    (llama-server, llama-cli, llama-mtmd-cli, llama-perplexity, llama-imatrix, llama-embedding, llama-fit-params).
    Devices of unknown size are not fitted ("did not report memory; --fit will not use it"); without devices the
    host fit (PR #21568) weighs the host's total memory (settings.host_memory: oomkit's --ram, or the machine's)."""
    if not (s.fit and s.program not in NO_FIT_PROGRAMS and ERAS.reached(build_number(s.engine_version), "params_fit")):
        return False
    if not devices:
        return s.host_memory is not None and FIT_ERAS.reached(build_number(s.engine_version), "host_fit")
    return all(free_memory(d) is not None for d in devices)


@dataclass(frozen=True)
class FitResult:
    """What the fit changed, and the lines it logs (common_params_fit_impl's LOG_TRC / LOG_WRN)."""

    settings: LlamaCppSettings
    status: str  # "unchanged" | "fitted" | "failed"
    lines: tuple[str, ...]
    n_ctx: int | None = None  # the context it chose (None: as given)
    n_gpu_layers: int | None = None
    layers_per_device: tuple[int, ...] = ()
    overflowing_per_device: tuple[int, ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()
    margins: tuple[int, ...] = ()
    free: tuple[int, ...] = ()
    dry_runs: int = 0
    table: tuple[str, ...] = ()  # common_memory_breakdown_print of the first dry run (the command as given)
    draft: tuple[int, ...] = ()  # the -md draft's dry-run bytes per device (then the host) counted in the fit

    def to_dict(self) -> dict:
        return {"status": self.status, "n_ctx": self.n_ctx, "n_gpu_layers": self.n_gpu_layers,
                "layers_per_device": list(self.layers_per_device),
                "overflowing_per_device": list(self.overflowing_per_device),
                "override_tensor": [f"{p}={b}" for p, b in self.overrides],
                "target_mib": [m // MiB for m in self.margins], "free_mib": [f // MiB for f in self.free],
                "dry_runs": self.dry_runs, "lines": list(self.lines), "table": list(self.table),
                **({"draft_mib": [b // MiB for b in self.draft]} if self.draft else {})}


class _Refused(Exception):
    """common_params_fit_exception: the fit stops; what it changed so far stays."""


@dataclass
class _Ngl:
    n_layer: int = 0  # layers on the device (the output layer counts as one)
    n_part: int = 0  # of them, layers whose expert (or FFN) tensors overflow
    overflow: int = MOE

    @property
    def n_full(self) -> int:
        return self.n_layer - self.n_part


def _copy(ngl: list[_Ngl]) -> list[_Ngl]:
    return [_Ngl(n.n_layer, n.n_part, n.overflow) for n in ngl]


def params_fit(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
               host_total: int | None = None, given: tuple[Device, ...] | None = None) -> FitResult:
    """The settings llama.cpp runs with after --fit, and what it logged deciding them. host_total: the host's
    total memory (ggml_backend_dev_memory of the CPU device), which the host fit weighs when there is no device;
    by default the settings' host_memory. given: every device before -dev narrows them (a -devd draft picks its
    own from these; default `devices`)."""
    nd = len(devices)
    build = build_number(s.engine_version)
    host_total = s.host_memory if host_total is None else host_total
    if not nd:
        if host_total is None:
            return FitResult(s, "off", ("no device: the host fit needs the host's total memory",))
        if not FIT_ERAS.reached(build, "host_fit"):
            return FitResult(s, "off", (f"no device: builds before b{FIT_ERAS['host_fit']} (PR #21568) keep the "
                                        "command as typed on the host",))
    free = [free_memory(d) or 0 for d in devices] if nd else [host_total or 0]
    if len(s.fit_target) not in (1, max(nd, 1)):
        raise SettingsError(f"--fit-target has {len(s.fit_target)} values for {nd} devices")
    margins = [(s.fit_target[0] if len(s.fit_target) == 1 else s.fit_target[i]) * MiB for i in range(max(nd, 1))]
    # the projector's device index: the first GPU, or with --no-mmproj-offload the CPU, whose registry index comes
    # after the GPUs (no target of the fit's devices) and is 0 only on a build without any
    margins[0] += mmproj_margin(spec, s) if (s.mmproj_offload or not nd) else 0
    lines: list[str] = []
    runs = [0]
    cur = s

    def log(text: str) -> None:
        lines.append(text)

    draft = draft_model(s)
    # --spec-type draft-mtp without -md: the MTP context is the extra model, on the main model's weights (common.cpp:
    # shares_model = !has_draft, its model rows zeroed; the next-n weights are in the main dry runs, load_mtp)
    mtp = draft is None and mtp_context_on(s) and FIT_ERAS.reached(build, "draft_margin")
    joint = (draft is not None or mtp) and FIT_ERAS.reached(build, "draft_joint")
    drafts: dict[int, tuple[Breakdown, ...]] = {}
    draft_totals: dict[int, int] = {}

    def draft_at(n_ctx: int) -> tuple[Breakdown, ...]:
        """The draft's own dry run at a context (the extra model's context follows the main one's), its rows laid on
        the main model's devices: a -devd device the main model does not use is measured but counted on none
        (add_extra_memory and the margin block match the devices one by one; the host row is kept)."""
        if n_ctx not in drafts:
            if mtp:
                drafts[n_ctx] = tuple(Breakdown(0, c, k) for c, k in mtp_dry_run(spec, devices, s, n_ctx))
                draft_totals[n_ctx] = sum(b.total for b in drafts[n_ctx][:nd])
            else:
                ddevs = draft_devices(given if given is not None else devices, draft[1])
                rows = dry_run(draft[0], ddevs, replace(draft[1], n_ctx=n_ctx))
                at = {d.id: rows[j] for j, d in enumerate(ddevs)}
                drafts[n_ctx] = (*(at.get(d.id, Breakdown()) for d in devices), rows[-1])
                draft_totals[n_ctx] = sum(b.total for b in rows[:-1])
        return drafts[n_ctx]

    if (draft is not None or mtp) and not joint and nd:
        # PR #23485: the draft's model + context + compute on each of its devices, added to that device's target
        extra = draft_at(s.n_ctx)
        for i in range(nd):
            margins[i] += extra[i].total
        log(f"[spec] estimated memory usage of {'MTP context' if mtp else 'draft model'} is "
            f"{draft_totals[s.n_ctx] / MiB:.2f} MiB")

    def measure(st: LlamaCppSettings) -> tuple[Breakdown, ...]:
        runs[0] += 1
        b = dry_run(spec, devices, st)
        if not joint:
            return b
        # common_fit_params_impl add_extra_memory: the extra model's rows (the host's too) added to every measurement
        e = draft_at(st.n_ctx)
        return tuple(Breakdown(x.model + y.model, x.context + y.context, x.compute + y.compute) for x, y in zip(b, e, strict=True))

    def used_of(b: tuple[Breakdown, ...]) -> list[int]:
        return [b[i].total for i in range(nd)] if nd else [b[-1].total]

    names = [f"{d.id} ({d.name})" for d in devices]
    width = max((len(n) for n in names), default=0)
    names = [n.ljust(width) for n in names]

    def result(status: str, st: LlamaCppSettings, **kw) -> FitResult:
        counted = () if (draft is None and not mtp) or not (joint or nd) else tuple(
            b.total for b in draft_at(st.n_ctx if joint else s.n_ctx))
        return FitResult(st, status, tuple(lines), margins=tuple(margins), free=tuple(free), dry_runs=runs[0],
                         n_ctx=(st.n_ctx if st.n_ctx != s.n_ctx else None), table=tuple(table), draft=counted, **kw)

    n_layer = spec.n_layers
    n_ctx_train = spec.n_ctx_train
    n_expert = max((lay.ffn.n_experts for lay in spec.layers if lay.ffn is not None), default=0)
    # PR #27496: with a KV cache per sequence (-np N, no -kvu) the context is N streams; an unset context becomes
    # N x the trained one before anything is measured, and the least context is N x -fitc
    streams = 1
    if FIT_ERAS.reached(build, "fit_streams"):
        ctx0 = resolve_context(spec, s)
        streams = 1 if ctx0.kv_unified else max(1, ctx0.n_seq_max)
    n_ctx_max = min(n_ctx_train * streams, UINT32_MAX)
    n_ctx_min = min(s.fit_ctx * streams, UINT32_MAX)
    if s.n_ctx == 0 and streams > 1:
        log(f"context size unset and KV cache not unified -> using {n_ctx_max} for {streams} sequences:")
        cur = replace(cur, n_ctx=n_ctx_max)

    # step 1: the command as given
    full = measure(cur)
    table = breakdown_table(devices, full, list(free) if nd else None, as_reported=True)
    used = used_of(full)
    proj_free = [free[i] - used[i] for i in range(len(free))]
    if not nd:
        log(f"projected to use {used[0] // MiB} MiB of host memory vs. {free[0] // MiB} MiB of total host memory")
        if proj_free[0] >= margins[0]:
            log(f"will leave {proj_free[0] // MiB} >= {margins[0] // MiB} MiB of system memory, no changes needed")
            return result("unchanged", cur)
    else:
        if nd > 1:
            log("projected memory use with initial parameters [MiB]:")
            for i in range(nd):
                log(f"  - {names[i]}: {(devices[i].memory_bytes or free[i]) // MiB:6d} total, "
                    f"{used[i] // MiB:6d} used, {proj_free[i] // MiB:6d} free vs. target of {margins[i] // MiB:6d}")
        log(f"projected to use {sum(used) // MiB} MiB of device memory vs. {sum(free) // MiB} MiB of free device "
            "memory")
        if all(proj_free[i] >= margins[i] for i in range(nd)):
            if nd == 1:
                log(f"will leave {proj_free[0] // MiB} >= {margins[0] // MiB} MiB of free device memory, no changes "
                    "needed")
            else:
                log("targets for free memory can be met on all devices, no changes needed")
            return result("unchanged", cur)

    # step 2: the context
    surplus = sum(proj_free) - sum(margins)
    if surplus < 0:
        if nd <= 1:
            log(f"cannot meet free memory target of {margins[0] // MiB} MiB, need to reduce device memory by "
                f"{-surplus // MiB} MiB")
        else:
            log(f"cannot meet free memory targets on all devices, need to use {-surplus // MiB} MiB less in total")
        if s.n_ctx == 0:
            if n_ctx_max > n_ctx_min:
                target = sum(free) - sum(margins)
                if nd > 1:
                    # whole layers (dense) or whole tensors (MoE, <= 1/3 of a layer) per device: about half a
                    # layer wasted per device; (nd + 1) halves (or sixths) to be safe
                    ngl = n_layer + 1 if s.n_gpu_layers < 0 else s.n_gpu_layers
                    per_layer = sum(full[i].model for i in range(nd)) // max(1, min(ngl, n_layer))
                    target -= (nd + 1) * per_layer // (2 if n_expert == 0 else 6)
                at_min = replace(cur, n_ctx=n_ctx_min)
                used_min = sum(used_of(measure(at_min)))
                span = sum(used) - used_min
                if target > used_min and span > 0:
                    n_ctx = n_ctx_min + (n_ctx_max - n_ctx_min) * (target - used_min) // span
                    align = 256 * streams  # round down (CUDA), a multiple of the streams
                    n_ctx = max(n_ctx - n_ctx % align, n_ctx_min)
                    per_ctx = span // (n_ctx_max - n_ctx_min)
                    log(f"context size reduced from {n_ctx_max} to {n_ctx} -> need "
                        f"{(n_ctx_max - n_ctx) * per_ctx // MiB} MiB less memory in total")
                    cur = replace(cur, n_ctx=n_ctx)
                    if nd <= 1:
                        log("entire model can be fit by reducing context")
                        return result("fitted", cur)
                    log("entire model should be fit across devices by reducing context")
                else:
                    log(f"context size reduced from {n_ctx_max} to {n_ctx_min} -> need {span // MiB} MiB less "
                        "memory in total")
                    cur = at_min
            elif s.fit_ctx == UINT32_MAX:
                log(f"user has requested full context size of {n_ctx_max} -> no change")
            else:
                log(f"default model context size is {n_ctx_max} which is <= the min. context size of "
                    f"{n_ctx_min} -> no change")
        else:
            log(f"context size set by user to {s.n_ctx} -> no change")
    if not nd:
        log("failed to fit params to free device memory: was unable to fit model into system memory by reducing "
            "context, abort")
        return result("failed", cur)

    try:
        return _fit_layers(spec, devices, cur, free, margins, full, n_layer, n_expert, names, log, measure, result)
    except _Refused as e:
        log(f"failed to fit params to free device memory: {e}")
        return result("failed", cur)


def mmproj_margin(spec: ModelSpec, s: LlamaCppSettings) -> int:
    """PR #21489 (b9251 on): llama-server (and llama-cli, built on it) adds the projector's memory to the fit target
    of the device it loads on (tools/server/server-context.cpp load_model: fit_params_target[i] of the device's
    index in the registry, where the GPUs come before the CPU): the first GPU (mmproj_use_gpu), the host (index 0 of
    a CPU build) without one. What it adds is mtmd_get_memory_usage, "the sum of: memory needed by mmproj weight,
    ref: clip_model_loader::load_tensors; compute buffer, ref: clip_model_loader::alloc_compute_meta" (the PR's
    description; clip.cpp clip_get_mem_usage = the weight buffer + the scheduler's buffer reserved for the warmup
    image, with -fa handed to the projector). projector.projector_memory gives both: the compute buffer for the
    graphs it models (gemma3, held to mtmd_get_memory_usage on this CPU), else the weights alone, which the
    estimate's note then says (layout._fit_note). Since PR #24867 (2026-06-21) the weights are not read for it;
    the figure is the same."""
    if (s.program not in ("llama-server", "llama-cli") or not s.mmproj or s.no_mmproj
            or not FIT_ERAS.reached(build_number(s.engine_version), "mmproj_margin")):
        return 0
    got = projector_memory(spec, s)
    return got.total if got else 0


def read_draft(s: LlamaCppSettings) -> tuple[ModelSpec, LlamaCppSettings] | None:
    """The -md draft model and the settings it loads with: the main command's (params_dft = params_base) with the
    draft's -ngld and -ctkd / -ctvd and no overrides of its own (tools/server/server-context.cpp load_model). None
    without -md or for a draft oomkit cannot read (a GGUF file is needed)."""
    import os  # lazy: only a -md needs the file system

    from ...errors import OomkitError  # lazy: only a -md is read
    from ...model.gguf_file import read_gguf_spec  # lazy: only a -md is read

    try:
        if s.model_draft and os.path.isfile(s.model_draft):
            spec = read_gguf_spec(s.model_draft)
        elif s.hf_repo_draft and not s.model_draft:
            # -hfd REPO[:QUANT]: common_params_handle_models resolves the draft's repo as -hf does the model's
            from ...model.resolve import resolve  # lazy: only a -hfd draft is resolved

            spec = resolve(s.hf_repo_draft, None, default_format=default_weight_format, tag_formats=True)
        else:
            return None
    except (OomkitError, OSError, ValueError):
        return None
    # common/speculative.cpp common_base_params_to_speculative (params_dft = params_base with the draft's fields):
    # the draft's devices are -devd ("default to global devices value": -dev, else every device), a single one
    # loading with -sm layer; its own -ngld, -ctkd / -ctvd and tensor overrides (-otd, -cmoed, -ncmoed; none of the
    # main command's); -ts is the main command's (result = params), its first entries for the draft's devices
    devs = s.device_draft or s.device
    named = [d for d in devs if d.lower() != "none"]
    ts = s.tensor_split[:len(named)] if s.device_draft and named else s.tensor_split
    return spec, replace(s, n_gpu_layers=s.n_gpu_layers_draft, cache_type_k=s.cache_type_k_draft,
                         cache_type_v=s.cache_type_v_draft, override_tensor=s.override_tensor_draft,
                         cpu_moe=s.cpu_moe_draft, n_cpu_moe=s.n_cpu_moe_draft,
                         tensor_split=ts if any(ts) else (), mmproj=None, model_draft=None, hf_repo_draft=None,
                         spec_type=(), fit=False, device=tuple(devs), device_draft=(),
                         split_mode="layer" if len(named) == 1 else s.split_mode)


def draft_devices(given: tuple[Device, ...], ds: LlamaCppSettings) -> tuple[Device, ...]:
    """The devices the draft loads on, from every device given (split.model_devices with the draft's -devd)."""
    return metal_devices(model_devices(given, ds))


def draft_model(s: LlamaCppSettings) -> tuple[ModelSpec, LlamaCppSettings] | None:
    """The draft llama-server fits beside the main model (PR #23485 on; llama-cli shares the server context), or
    None: before b9304, other programs, no -md, or a draft oomkit cannot read (common/fit.cpp likewise fits without
    an extra model it fails to measure). The MTP context of --spec-type draft-mtp without -md (context and compute
    on the target's weights) is not modelled."""
    if s.program not in ("llama-server", "llama-cli") or not FIT_ERAS.reached(build_number(s.engine_version),
                                                                            "draft_margin"):
        return None
    return read_draft(s)


def draft_context(s: LlamaCppSettings, n_ctx_main: int, n_ctx_seq: int | None = None) -> int:
    """The context the draft is created with at run time: the main one's once the draft is fitted beside it
    (common_fit_extra_model); before that params_dft kept the command's -c, so with none the draft took its own
    trained context beside a fitted main one (issue #25408, b9893). Before PR #22838 (b9109) every slot had a draft
    context of its own (draft_contexts) sized by tools/server/server.cpp load_model: params_dft.n_ctx =
    speculative.n_ctx (-cd) when not 0, else the main context's per-slot size: llama_n_ctx_seq(ctx) from PR #16736
    (b6925), the command's -c / -np before it (0: the draft's trained context)."""
    build = build_number(s.engine_version)
    if not ERAS.reached(build, "no_ctx_size_draft"):
        if s.n_ctx_draft:
            return s.n_ctx_draft
        if ERAS.reached(build, "np_auto"):
            return n_ctx_seq or n_ctx_main
        return s.n_ctx // max(1, s.n_parallel)
    return n_ctx_main if FIT_ERAS.reached(build, "draft_joint") else s.n_ctx


def draft_contexts(s: LlamaCppSettings, n_seq_max: int) -> int:
    """How many draft contexts llama-server creates: one per slot before PR #22838 (b9109: server.cpp init slots,
    slot.ctx_dft = llama_init_from_model(model_dft, cparams_dft); later common_speculative_init per slot), one
    shared by every slot from it."""
    return 1 if ERAS.reached(build_number(s.engine_version), "no_ctx_size_draft") else max(1, n_seq_max)


def mmproj_compute_known(spec: ModelSpec, s: LlamaCppSettings) -> bool:
    """Whether the projector's compute buffer is in the margin (a graph projector.py models)."""
    got = projector_memory(spec, s)
    return got is not None and got.compute is not None


def _fit_layers(spec, devices, cur, free, margins, full, n_layer, n_expert, names, log, measure, result):
    nd = len(devices)
    if cur.n_gpu_layers != -1:
        raise _Refused(f"n_gpu_layers already set by user to {cur.n_gpu_layers}, abort")
    if nd > 1 and cur.tensor_split and any(cur.tensor_split):
        raise _Refused("model_params::tensor_split already set by user, abort")
    if nd > 1 and cur.split_mode == "row":
        raise _Refused("changing weight allocation for LLAMA_SPLIT_MODE_ROW not implemented, abort")
    if cur.override_tensor or cur.cpu_moe or cur.n_cpu_moe:
        raise _Refused("model_params::tensor_buft_overrides already set by user, abort")
    if n_layer >= 1000:
        raise _Refused("at most 1000 model layers are supported")
    patterns, moe_all = overflow_patterns(cur)

    def settings_for(ngl: list[_Ngl], overflow_to: list[str]) -> LlamaCppSettings:
        """set_ngl_tensor_split_tbo: -ngl, -ts in layers per device, -ot for the partial layers. Each device's full
        layers come first: on the last device the one full layer meant for the output is its first block, and the
        last override names the output index (hp_ngl), which no tensor matches."""
        total = sum(n.n_layer for n in ngl)
        il0 = n_layer + 1 - total
        overrides: list[tuple[str, str]] = []
        for i in range(nd):
            il0 += ngl[i].n_full
            for il in range(il0, il0 + ngl[i].n_part):
                first = il == il0
                overrides.append((patterns[ngl[i].overflow if first else MOE].format(il),
                                  overflow_to[i] if first else "CPU"))
            il0 += ngl[i].n_part
        split = tuple(float(n.n_layer) for n in ngl) if nd > 1 else ()
        return replace(cur, n_gpu_layers=total, tensor_split=split, override_tensor=tuple(overrides),
                       cpu_moe=False, n_cpu_moe=0)

    def mem_for(ngl: list[_Ngl], overflow_to: list[str]) -> list[int]:
        b = measure(settings_for(ngl, overflow_to))
        return [b[i].total for i in range(nd)]

    def with_step(ngl: list[_Ngl], i: int, step: int) -> list[_Ngl]:
        """The layer split the false position tries next: `step` more layers on device i."""
        test = _copy(ngl)
        test[i].n_layer += step
        if n_expert:
            test[i].n_part += step - 1 if i == nd - 1 and test[i].n_part == 0 else step
        return test

    def all_fail(ngl: list[_Ngl], i: int, delta: int) -> bool:
        """Whether every split the search could try on device i (1 to delta - 1 more layers) is over its target
        by its weights and state alone: then no try succeeds and the split stays, whatever the steps. Only where
        the count of dry runs is not read (check's smallest requirement), since the tries skipped are not run."""
        if SEARCHING.get() != "least":
            return False
        return all(dry_run_floor(spec, devices, settings_for(with_step(ngl, i, k), overflow_to))[i].total
                   > targets[i] for k in range(1, delta))

    surplus_cpu_moe = 0
    if n_expert > 0:
        cpu_moe = measure(replace(cur, override_tensor=((moe_all, "CPU"),)))
        surplus_cpu_moe = sum(free[i] - cpu_moe[i].total - margins[i] for i in range(nd))
        if surplus_cpu_moe > 0:
            log(f"with only dense weights in device memory there is a total surplus of {surplus_cpu_moe // MiB} MiB")
        else:
            log(f"with only dense weights in device memory there is still a total deficit of "
                f"{-surplus_cpu_moe // MiB} MiB")

    targets = [free[i] - margins[i] for i in range(nd)]
    overflow_to = ["CPU"] * nd
    ngl = [_Ngl() for _ in range(nd)]
    mem = mem_for(ngl, overflow_to)
    log("filling dense layers back-to-front:" if n_expert == 0 else "filling dense-only layers back-to-front:")
    for i in range(nd - 1, -1, -1):
        unassigned = n_layer + 1 - sum(ngl[j].n_layer for j in range(i + 1, nd))
        high = _copy(ngl)
        high[i].n_layer = unassigned
        if n_expert > 0:
            high[i].n_part = high[i].n_layer if i < nd - 1 else high[i].n_layer - 1
        if high[i].n_layer > 0:
            mem_high = mem_for(high, overflow_to)
            if mem_high[i] > targets[i]:
                delta = high[i].n_layer - ngl[i].n_layer
                if all_fail(ngl, i, delta):
                    delta = 0
                while delta > 1:
                    test = with_step(ngl, i, _step(delta, targets[i] - mem[i], mem_high[i] - mem[i]))
                    mem_test = mem_for(test, overflow_to)
                    if mem_test[i] <= targets[i]:
                        ngl, mem = test, mem_test
                    else:
                        high, mem_high = test, mem_test
                    delta = high[i].n_layer - ngl[i].n_layer
            else:
                ngl, mem = high, mem_high
        log(f"  - {names[i]}: {ngl[i].n_layer:2d} layers, {mem[i] // MiB:6d} MiB used, "
            f"{(free[i] - mem[i]) // MiB:6d} MiB free")

    if n_expert == 0 or surplus_cpu_moe <= 0:
        return _done(settings_for(ngl, overflow_to), ngl, result)

    # step 4: dense-only layers at the back become full layers at the front
    dense_start = nd
    for i in range(nd - 1, -1, -1):
        if ngl[i].n_layer > 0:
            dense_start = i
            continue
        break
    log("converting dense-only layers to full layers and filling them front-to-back with overflow to next "
        "device/system memory:")
    i = 0
    while i <= dense_start and dense_start < nd:
        high = _copy(ngl)
        for j in range(dense_start, nd):
            move = high[j].n_layer if j < nd - 1 else high[j].n_layer - 1
            high[i].n_layer += move
            high[j].n_layer -= move
            high[j].n_part = 0
        dense_start_high = nd - 1
        mem_high = mem_for(high, overflow_to)
        if mem_high[i] > targets[i]:
            delta = high[i].n_full - ngl[i].n_full
            while delta > 1:
                step = _step(delta, targets[i] - mem[i], mem_high[i] - mem[i])
                test = _copy(ngl)
                ds_test = dense_start
                converted = 0
                while ds_test < nd:
                    n = min(step - converted, test[ds_test].n_part)
                    test[ds_test].n_layer -= n
                    test[ds_test].n_part -= n
                    test[i].n_layer += n
                    converted += n
                    if test[ds_test].n_part > 0:
                        break
                    ds_test += 1
                mem_test = mem_for(test, overflow_to)
                # only device i is compared, not the last device, whose first (full) block is now a later one
                if mem_test[i] <= targets[i]:
                    ngl, mem, dense_start = test, mem_test, ds_test
                else:
                    high, mem_high, dense_start_high = test, mem_test, ds_test
                delta = high[i].n_full - ngl[i].n_full
        else:
            ngl, mem, dense_start = high, mem_high, dense_start_high

        # one more layer, at least its attention
        if dense_start < nd and ngl[dense_start].n_layer > (0 if i < nd - 1 else 1):
            test = _copy(ngl)
            ds_test = dense_start
            test[ds_test].n_layer -= 1
            test[ds_test].n_part -= 1
            test[i].n_layer += 1
            test[i].n_part += 1
            if test[ds_test].n_part == 0:
                ds_test += 1
            test[i].overflow = UP
            overflow_test = list(overflow_to)
            if i < nd - 1:
                overflow_test[i] = devices[i + 1].id
            mem_test = mem_for(test, overflow_test)

            def ok(m: list[int], i: int = i) -> bool:
                return m[i] < targets[i] and (i + 1 == nd or m[i + 1] < targets[i + 1])

            if ok(mem_test):
                ngl, overflow_to, mem, dense_start = test, overflow_test, mem_test, ds_test
                test = _copy(test)
                test[i].overflow = GATE
                mem_test = mem_for(test, overflow_test)
                if ok(mem_test):
                    ngl, overflow_to, mem, dense_start = test, overflow_test, mem_test, ds_test
            else:
                test = _copy(test)
                test[i].overflow = ATTN
                mem_test = mem_for(test, overflow_test)
                if ok(mem_test):
                    ngl, overflow_to, mem, dense_start = test, overflow_test, mem_test, ds_test
        log(f"  - {names[i]}: {ngl[i].n_layer:2d} layers ({ngl[i].n_part:2d} overflowing), {mem[i] // MiB:6d} MiB "
            f"used, {(free[i] - mem[i]) // MiB:6d} MiB free")
        i += 1
    for j in range(dense_start + 1, nd):
        log(f"  - {names[j]}: {ngl[j].n_layer:2d} layers ({ngl[j].n_part:2d} overflowing), {mem[j] // MiB:6d} MiB "
            f"used, {(free[j] - mem[j]) // MiB:6d} MiB free")
    return _done(settings_for(ngl, overflow_to), ngl, result)


def _step(delta: int, room: int, span: int) -> int:
    """The false-position step as the source computes it: `uint32_t step_size = int64_t(delta) * room / span`
    (C++ division truncates toward zero; a negative result wraps as uint32), then clamped to [1, delta - 1]. An
    upper bound that uses no more memory than the lower one (an already-full device) steps delta - 1
    (common/fit.cpp@08033df0: `headroom > 0 ? ... : delta - 1`)."""
    if span <= 0:
        return max(delta - 1, 1)
    num = delta * room
    q = abs(num) // abs(span) if span else 0
    q = q if (num >= 0) == (span > 0) else -q
    return min(max(q % 2**32, 1), delta - 1)


def _done(st: LlamaCppSettings, ngl: list[_Ngl], result) -> FitResult:
    return result("fitted", st, n_gpu_layers=st.n_gpu_layers, layers_per_device=tuple(n.n_layer for n in ngl),
                  overflowing_per_device=tuple(n.n_part for n in ngl), overrides=st.override_tensor)


def _mib(x: int) -> int:
    """std::to_string(bytes / MiB) on int64: the quotient truncated toward zero (a negative unaccounted too)."""
    return -(-x // MiB) if x < 0 else x // MiB


def breakdown_table(devices: tuple[Device, ...], bd: tuple[Breakdown, ...],
                    free: list[int | None] | None = None, as_reported: bool = False,
                    others: tuple[tuple[str, Breakdown], ...] = ()) -> list[str]:
    """common_memory_breakdown_print: | name | total = free + (self = model + context + compute) + unaccounted |
    per device, then the host. total and free are the device's; unaccounted is what neither llama.cpp's buffers
    nor the free memory explain (the CUDA context, other processes). After a load the free memory is what the
    buffers left; as_reported: the free memory as given (the table of a --fit dry run, which allocates nothing).
    others: the buffer types that are neither a host type nor one of the model's devices, printed after the host
    in the form of its row ("print memory breakdown for all remaining buffer types": CPU_REPACK, whose is_host is
    unset and whose CPU device is none of the model's)."""
    rows = [["memory breakdown [MiB]", "total", "free", "self", "model", "context", "compute", "unaccounted"]]
    for i, d in enumerate(devices):
        b = bd[i]
        total = d.memory_bytes or 0
        f = (free[i] if free else None)
        f = free_memory(d) if f is None else f
        f = f or 0
        # llama.cpp prints the free memory after the load (its own buffers taken); oomkit's free is before it
        after = f if as_reported else max(f - b.total, 0)
        known = d.memory_bytes is not None
        rows.append([f"  - {d.id} ({d.name})", str(total // MiB) if known else "?", str(after // MiB) if known else "?",
                     str(b.total // MiB), str(b.model // MiB), str(b.context // MiB), str(b.compute // MiB),
                     str(_mib(total - after - b.total)) if known else "?"])
    for name, h in (("Host", bd[-1]), *others):
        rows.append([f"  - {name}", "", "", str(h.total // MiB), str(h.model // MiB), str(h.context // MiB),
                     str(h.compute // MiB), ""])
    n_dev = len(devices)
    widths = [max(len(r[j]) for r in rows) for j in range(8)]
    out = []
    for k, r in enumerate(rows):
        c = [r[0].ljust(widths[0])] + [r[j].rjust(widths[j]) for j in range(1, 8)]
        if k == 0:
            out.append(f"| {c[0]} | {c[1]}   {c[2]}    {c[3]}   {c[4]}   {c[5]}   {c[6]}    {c[7]} |")
        elif k <= n_dev:
            out.append(f"| {c[0]} | {c[1]} = {c[2]} + ({c[3]} = {c[4]} + {c[5]} + {c[6]}) + {c[7]} |")
        else:
            out.append(f"| {c[0]} | {c[1]}   {c[2]}    {c[3]} = {c[4]} + {c[5]} + {c[6]}    {c[7]} |")
    return out
