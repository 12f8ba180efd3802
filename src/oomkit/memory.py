"""The plain types every floor speaks: a device in, the memory an engine lays out on it out.

`Device` is one accelerator (with the GPU facts the hardware catalog knows of it); `Usage` the bytes one place
holds by component; `LayerUse` one layer's placement; `MemoryEstimate` one engine's whole answer. Imports nothing
of the project at run time, so every floor above may use them.

`MemoryEstimate.engine_view` holds the figures the engine itself prints at start-up, by these keys (bytes as
integers; per device as {device id: bytes}):

- llama.cpp and Ollama's runner: n_ctx, kv_buffer_bytes, k_bytes, v_bytes, swa_kv_bytes, recurrent_state_bytes,
  model_buffer_bytes, compute_buffer_bytes, output_buffer_bytes;
- Ollama's own estimate: ollama_memory ({its memory.* field names: bytes});
- vLLM: model_loading_bytes, available_kv_cache_bytes, kv_cache_tokens, num_gpu_blocks, block_size,
  max_concurrency;
- SGLang: max_total_num_tokens, k_bytes, v_bytes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .accuracy import error_band
from .units import GiB

if TYPE_CHECKING:  # for annotations only: the model floor sits above this one
    from .model.spec import ModelSpec


@dataclass(frozen=True)
class Device:
    """One accelerator. memory_bytes None: size unknown (nothing to check the estimate against).

    The GPU facts (compute capability, NVLink, memory bandwidth, SM count) come from the hardware catalog
    (hardware/catalog.py with_facts); None where the device is not in it (a bare --vram size)."""

    id: str  # "CUDA0", "CUDA1", ...
    name: str = "GPU"
    memory_bytes: int | None = None
    free_bytes: int | None = None
    compute_capability: tuple[int, int] | None = None  # NVIDIA only, e.g. (8, 9)
    nvlink: bool | None = None  # a data-centre part with NVLink / xGMI between cards; None: unknown
    bandwidth_gbs: float | None = None  # memory bandwidth, GB/s (10^9 bytes/s), the vendor's figure; None: unknown
    sm_count: int | None = None  # streaming multiprocessors (NVIDIA), the datasheet's; None: unknown
    integrated: bool | None = None  # an integrated GPU sharing system memory (an iGPU); None: unknown
    gfx_target: str | None = None  # AMD: the LLVM target ("gfx942"), the catalog's architectures; None: unknown
    cuda_total_bytes: int | None = None  # NVIDIA: CUDA's own total (totalGlobalMem), the catalog's reading; None: unknown
    macos: int | None = None  # Apple: the macOS major release named with --gpu ("(macOS 15)"); None: the newest's rule


@dataclass(frozen=True)
class Usage:
    """Bytes one place (a GPU, or the host) holds, by component."""

    id: str
    name: str = ""
    memory_bytes: int | None = None
    weights_bytes: int = 0
    kv_cache_bytes: int = 0
    recurrent_state_bytes: int = 0
    compute_bytes: int = 0
    overhead_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return (self.weights_bytes + self.kv_cache_bytes + self.recurrent_state_bytes + self.compute_bytes
                + self.overhead_bytes)

    @property
    def fits(self) -> bool | None:
        return None if self.memory_bytes is None else self.total_bytes <= self.memory_bytes

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total_bytes"] = self.total_bytes
        return d


@dataclass(frozen=True)
class LayerUse:
    """Where one layer lives and what it costs there (for --explain)."""

    index: int
    kind: str
    device: str
    weights_bytes: int
    kv_bytes: int
    recurrent_bytes: int
    cells: int | None = None  # KV cells this layer's cache holds (per stream)


@dataclass(frozen=True)
class MemoryEstimate:
    model: ModelSpec
    engine: str
    settings: dict[str, Any]
    devices: tuple[Usage, ...]
    host: Usage
    engine_view: dict[str, Any]
    kv_bytes_per_token: int | None
    layers: tuple[LayerUse, ...] = ()
    warnings: tuple[str, ...] = ()
    max_context: int | None = None
    notes: tuple[str, ...] = field(default=())
    # bytes one more token of one sequence physically adds, where it differs from kv_bytes_per_token (what one
    # token of the engine's own capacity costs: vLLM / SGLang charge every KV group or pool per token)
    kv_bytes_per_token_marginal: int | None = None

    def _total(self, attr: str) -> int:
        return sum(getattr(u, attr) for u in (*self.devices, self.host))

    @property
    def weights_bytes(self) -> int:
        return self._total("weights_bytes")

    @property
    def kv_cache_bytes(self) -> int:
        return self._total("kv_cache_bytes")

    @property
    def recurrent_state_bytes(self) -> int:
        return self._total("recurrent_state_bytes")

    @property
    def compute_bytes(self) -> int:
        return self._total("compute_bytes")

    @property
    def overhead_bytes(self) -> int:
        return self._total("overhead_bytes")

    @property
    def total_bytes(self) -> int:
        return self._total("total_bytes")

    @property
    def fits(self) -> bool | None:
        """All devices within their memory; None when no device has a known size."""
        verdicts = [u.fits for u in self.devices if u.fits is not None]
        if not verdicts:
            return None
        return all(verdicts)

    @property
    def verdict(self) -> bool | None:
        """The JSON's fits: the devices' verdict, or without a device the host's (host.memory_bytes: --ram, this
        machine's memory with --cpu-only, check's budget); None when no memory being checked is known."""
        return self.host.fits if not self.devices else self.fits

    def with_max_context(self, n: int | None) -> MemoryEstimate:
        return replace(self, max_context=n)

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        return {
            "model": {
                "name": m.name, "architecture": m.architecture, "n_layers": m.n_layers,
                "params_total": m.params_total, "params_active": m.params_active,
                "weights_format": m.weights.format, "weights_exact": m.weights.exact,
                "layer_kinds": m.kinds(), "n_ctx_train": m.n_ctx_train, "source": m.source,
            },
            "engine": self.engine,
            "settings": self.settings,
            "weights_bytes": self.weights_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "recurrent_state_bytes": self.recurrent_state_bytes,
            "compute_bytes": self.compute_bytes,
            "overhead_bytes": self.overhead_bytes,
            "total_bytes": self.total_bytes,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_bytes_per_token_marginal": (self.kv_bytes_per_token_marginal
                                            if self.kv_bytes_per_token_marginal is not None
                                            else self.kv_bytes_per_token),
            "devices": [u.to_dict() for u in self.devices],
            "host": self.host.to_dict(),  # memory_bytes: the host memory the verdict weighs (null: unknown)
            "engine_view": self.engine_view,
            "fits": self.verdict,
            "max_context": self.max_context,
            "warnings": list(self.warnings) + list(m.labels),
            "error_band": error_band(self),
        }


# macOS's default GPU working set (MTLDevice.recommendedMaxWorkingSetSize with iogpu.wired_limit_mb at 0). IOGPU, which
# sets it, is closed source: the rule below is read off printed values (tests/fixtures/metal_working_set/logs.jsonl,
# each line with its issue; MB = 10^6 bytes), and every value is a fraction of hw.memsize rounded up to a whole
# 16 KiB page (32 GiB at 2/3 prints 22906.50 MB, ollama#434's 21845.34 MiB; 16 GiB at 0.74 is 12,713,115,648 bytes).
APPLE_PAGE = 16 * 1024
# The macOS whose rule apple_default_gpu_share gives when none is named: the newest one seen in logs.
MACOS_NEWEST = 26
MACOS_STEPPED = 26  # the first macOS seen with the steps below; 13-15 print 2/3 and 3/4
# macOS 26 (Tahoe, also 27.0): a step per RAM size, (RAM from, fraction). Seen: 16 and 24 GiB 0.74 (12713.12 and
# 19069.67 MB), 32, 36 and 48 GiB 0.78 (26800.60, 30150.67, 40200.90 MB), 64 and 96 GiB 0.81 (55662.79 MB;
# 83,494,174,720 bytes on a 96 GiB M3 Ultra), 128 and 192 GiB 0.84 (115448.73 MB, 107.52 GiB; 165150 MiB on
# ggml-org/llama.cpp#18919's M2 Ultra), 256 GiB 0.87 (228065 MiB on an M3 Ultra on macOS 27.0,
# mindmonkey-ai/chekov docs/capability-spec.md; 239 GB, Rapid-MLX#183), 512 GiB 29/32 (498216.21 MB = 464 GiB on two
# M3 Ultras, vmlx#50's and omar16100/llm-benchmark's of April 2026; their macOS not named). 8 GiB, with no log, takes the 16 GiB step (0.74), the lower figure.
MACOS26_STEPS: tuple[tuple[int, int, int], ...] = (
    (512 * GiB, 29, 32),
    (256 * GiB, 87, 100),
    (128 * GiB, 84, 100),
    (64 * GiB, 81, 100),
    (32 * GiB, 78, 100),
    (0, 74, 100),
)


def apple_default_gpu_share(memsize: int, macos: int | None = None) -> int:
    """macOS's default GPU working-set limit, MTLDevice.recommendedMaxWorkingSetSize with iogpu.wired_limit_mb at 0:
    what ggml-metal takes as the device's memory (ggml-metal-device.m ggml_metal_device_get_memory), Ollama as the
    GPU's (discover/gpu_darwin.go) and mlx as its limit. `macos` is the major version (None: MACOS_NEWEST).
    macOS 13-15: 2/3 of the RAM up to 32 GiB, 3/4 above (16 GiB 11453.25 MB on an M4 of January 2025, llama.cpp
    #11083; 10.67 GiB on macOS 15.6, exo#1672; 32 GiB 22906.50 MB, 64 GiB 51539.61 MB, 96 GiB 73728 MiB).
    macOS 26 and later: MACOS26_STEPS, 0.74 to 29/32 of the RAM (16 GiB 12713.12 MB, 128 GiB 107.52 GiB on 26.6.2,
    antirez/ds4#893; 256 GiB 222.72 GiB on 27.0). Either way a page-rounded estimate: `sudo sysctl
    iogpu.wired_limit_mb=N` sets the limit, and --vram (llama.cpp) or --wired-limit-mb (mlx) gives it."""
    if (MACOS_NEWEST if macos is None else macos) < MACOS_STEPPED:
        num, den = (2, 3) if memsize <= 32 * GiB else (3, 4)
    else:
        num, den = next((n, d) for floor, n, d in MACOS26_STEPS if memsize >= floor)
    pages = -(-memsize * num // (den * APPLE_PAGE))
    return pages * APPLE_PAGE
