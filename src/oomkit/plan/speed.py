"""An upper bound on decode speed: how many tokens per second the memory can feed.

Generating one token of one sequence reads every weight the token passes through and the whole KV cache of its
context once, while the arithmetic per byte is small; at batch 1 decode is bound by memory bandwidth, not compute
(Pope et al., "Efficiently Scaling Transformer Inference", https://arxiv.org/abs/2211.05102, section 2; Databricks,
"LLM Inference Performance Engineering: Best Practices", https://www.databricks.com/blog/llm-inference-performance-
engineering-best-practices, "memory bandwidth utilization"). So

    seconds per token >= sum over the places that run one after another of (bytes read there / their bandwidth)

and its inverse is an upper bound on tokens per second; real engines reach a fraction of it (kernel efficiency,
synchronisation, sampling). Prefill is compute-bound and not bounded here.

Bytes read per token, per place (each GPU and the host):

- weights: what the estimate puts there, less what one token does not touch: of a MoE layer's routed experts only
  n_experts_used / n_experts (``ModelSpec.params_active`` counts the same way); of the input embedding table
  (``token_embd``) one row. A tied table that also serves as the output matrix is read whole, except where the
  engine keeps a second copy for the output (llama.cpp: the table on the host, a duplicate on the output GPU).
  Experts an engine moved to the host (llama.cpp ``--n-cpu-moe`` / ``-ot exps=CPU``) are found as the weight bytes
  the host holds beyond its own layers and the embedding table, taken from the GPUs whose layers are short of them;
- the KV cache of one sequence at the context: ``kv_bytes_per_token`` times the context, plus the sliding-window
  layers' caches up to their window, shared over the places by the KV cache bytes each holds. Recurrent state
  (Mamba, gated delta net) is a fixed few MB per sequence and not counted.

Places run in the order of the layer split and their times add; the GPUs of one tensor-parallel group read their
shares at the same time, so the group takes as long as its slowest member. A group is a GPU the estimate's layer
map names, with the GPUs after it that hold weights but no layer of their own (vLLM / SGLang tensor-parallel
ranks, llama.cpp ``-sm row``).

GPU bandwidth comes from the GPU catalog (``hardware/gpus.json``, on each ``Device`` as ``bandwidth_gbs``); a GPU
the catalog does not know (a bare ``--vram`` size) leaves the bound unknown unless ``gpu_bandwidth_gbs`` is given.
The host's RAM bandwidth is assumed (``DEFAULT_RAM_BANDWIDTH_GBS``) unless ``ram_bandwidth_gbs`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..engines.base import get_engine
from ..errors import OomkitError
from ..hardware.catalog import lookup
from ..memory import Device, MemoryEstimate, Usage
from ..model.spec import LayerKind, ModelSpec

# Dual-channel DDR5-5600, the common desktop configuration: 2 channels x 64 bit (8 bytes) x 5600 MT/s
# = 89.6 GB/s theoretical peak (JEDEC JESD79-5 DDR5 data rates; 64-bit channel per DIMM slot). Assumed, not measured:
# pass ram_bandwidth_gbs for the machine at hand (servers with 8-12 channels read 300-600 GB/s).
DEFAULT_RAM_BANDWIDTH_GBS = 89.6
RAM_BANDWIDTH_BASIS = "assumed: dual-channel DDR5-5600, 2 x 8 bytes x 5600 MT/s = 89.6 GB/s theoretical"

PREFILL_NOTE = ("prefill (prompt processing) is compute-bound: its speed follows the GPU's matrix throughput, "
                "not this bound")
LABEL = "upper bound"

_BOUNDED_KINDS = (LayerKind.SLIDING.value, LayerKind.CHUNKED.value)


@dataclass(frozen=True)
class SpeedBound:
    """Decode tokens per second at most (None: a device's bandwidth is unknown; basis says which), the bytes one
    token reads, and the seconds each place (device id, or the host's id) takes per token."""

    tokens_per_s: float | None
    bytes_per_token: int
    seconds_by_place: dict[str, float]
    basis: str
    bytes_by_place: dict[str, int] = field(default_factory=dict)
    context: int = 0
    label: str = LABEL
    note: str = PREFILL_NOTE

    @property
    def text(self) -> str:
        return "unknown" if self.tokens_per_s is None else f"≤ {tps_number(self.tokens_per_s)} tok/s"

    def to_dict(self) -> dict[str, object]:
        return {"tokens_per_s": self.tokens_per_s, "bytes_per_token": self.bytes_per_token,
                "seconds_by_place": dict(self.seconds_by_place), "bytes_by_place": dict(self.bytes_by_place),
                "context": self.context, "label": self.label, "basis": self.basis, "note": self.note}


def tps_number(t: float) -> str:
    """A decode bound as shown: whole tokens/s from 1 up; below 1 (layers read from system RAM: 0.11 tok/s for
    810 GB of BF16 weights at 89.6 GB/s) two significant digits, never "0". The bound is always above 0: 1 / the
    seconds a token takes, None (unknown) where no second is counted."""
    return f"{t:,.0f}" if t >= 1 else f"{t:.2g}"


@dataclass(frozen=True)
class _Model:
    """The per-token reading facts of a model's weights."""

    layer_bytes: dict[int, int]  # layer -> all its tensors' bytes
    expert_bytes: dict[int, int]  # layer -> its routed experts' bytes
    active_expert_bytes: dict[int, float]  # layer -> the part of those one token reads
    embed_bytes: int  # the input embedding table
    n_vocab: int
    tied: bool


def _model_facts(spec: ModelSpec) -> _Model:
    layer_bytes: dict[int, int] = {}
    expert: dict[int, int] = {}
    active: dict[int, float] = {}
    embed = 0
    for t in spec.weights.tensors:
        if t.name == "token_embd.weight":
            embed = t.nbytes
        if t.layer is None:
            continue
        layer_bytes[t.layer] = layer_bytes.get(t.layer, 0) + t.nbytes
        ffn = spec.layers[t.layer].ffn if t.layer < len(spec.layers) else None
        if t.is_expert and ffn is not None and ffn.n_experts:  # as ModelSpec.params_active counts
            expert[t.layer] = expert.get(t.layer, 0) + t.nbytes
            active[t.layer] = active.get(t.layer, 0.0) + t.nbytes * ffn.n_experts_used / ffn.n_experts
    return _Model(layer_bytes, expert, active, embed, max(spec.n_vocab, 1), spec.tied_embeddings)


def _as_held(facts: _Model, est: MemoryEstimate, groups: list[list[Usage]], layer_place: dict[int, str]) -> _Model:
    """The model's bytes as the engine holds them. The tensors are the checkpoint's; an engine that converts the
    weights at load (mlx_lm `--q-bits`: utils.py quantize_model; vLLM / SGLang `--quantization fp8` or
    `bitsandbytes`) holds fewer bytes than they say, so a GPU group holds less than its layers while the host does
    not hold the rest. Then each layer's figures are scaled by what the engine holds of it over what the checkpoint
    stores (a MoE model's unread experts are a share of the converted bytes, not of the checkpoint's: 54 GiB of bf16
    experts are 15 GiB at 4 bits): by layer where the estimate's layer map gives the bytes held (mlx/layout.py
    LayerUse), and the embedding table by what the tensors outside the layers keep (mlx_lm quantizes it too: an
    nn.Embedding has to_quantized); else by the whole estimate's bytes over the checkpoint's, the embedding table
    as stored, and the layers the rest (vLLM's Fp8Config and BitsAndBytesConfig get_quant_method quantize LinearBase /
    FusedMoE layers, not VocabParallelEmbedding or ParallelLMHead). Weights moved to the host (llama.cpp
    --n-cpu-moe, vLLM --cpu-offload-gb) are held there and change nothing here."""
    stored = sum(t.nbytes for t in est.model.weights.tensors)
    held = sum(u.weights_bytes for u in (*est.devices, est.host))
    if not stored or held >= stored:
        return facts
    host_layers = sum(v for il, v in facts.layer_bytes.items() if layer_place.get(il) == est.host.id)
    short = 0
    for g in groups:
        ids = {u.id for u in g}
        mapped = sum(v for il, v in facts.layer_bytes.items() if layer_place.get(il) in ids)
        short += max(0, mapped - sum(u.weights_bytes for u in g))
    if short <= max(0, est.host.weights_bytes - host_layers):
        return facts  # what the GPUs lack is on the host: the weights are held as stored
    held_by_layer: dict[int, int] = {}
    for lu in est.layers:
        if lu.index in facts.layer_bytes:
            held_by_layer[lu.index] = held_by_layer.get(lu.index, 0) + lu.weights_bytes
    stored_layers = sum(facts.layer_bytes.values())
    held_layers = sum(held_by_layer.values())
    outside = stored - stored_layers  # the tensors outside the layers: embedding, output head, final norm
    if held_by_layer and held_layers < stored_layers:
        ratio = {il: min(1.0, held_by_layer.get(il, v) / v) if v else 1.0 for il, v in facts.layer_bytes.items()}
        embed = min(1.0, max(0.0, (held - held_layers) / outside)) if outside > 0 else 1.0
    else:  # those outside as stored, the layers the rest
        ratio = dict.fromkeys(facts.layer_bytes, min(1.0, max(0.0, (held - outside) / stored_layers))
                              if stored_layers else 1.0)
        embed = 1.0

    def scaled(table: dict[int, int] | dict[int, float]) -> dict[int, Any]:
        return {k: v * ratio.get(k, 1.0) for k, v in table.items()}

    return replace(facts, layer_bytes=scaled(facts.layer_bytes), expert_bytes=scaled(facts.expert_bytes),
                   active_expert_bytes=scaled(facts.active_expert_bytes), embed_bytes=round(facts.embed_bytes * embed))


def _groups(est: MemoryEstimate) -> list[list[Usage]]:
    """The devices in layer-split order, each group the GPUs that read one stage's layers at the same time."""
    mapped = {lu.device for lu in est.layers}
    groups: list[list[Usage]] = []
    for u in est.devices:
        if u.id in mapped or not groups:
            groups.append([u])
        elif u.weights_bytes or u.kv_cache_bytes:
            groups[-1].append(u)
        else:
            groups.append([u])
    return groups


def _context(est: MemoryEstimate) -> int | None:
    try:
        return get_engine(est.engine).effective_context(est)
    except OomkitError:
        return None


def decode_bound(est: MemoryEstimate, context: int | None = None, *, devices: tuple[Device, ...] | None = None,
                 ram_bandwidth_gbs: float | None = None, gpu_bandwidth_gbs: float | None = None) -> SpeedBound:
    """The decode tokens/s upper bound of `est` for one sequence at `context` tokens (default: the context the
    engine runs with). devices: the Devices the estimate was made for (their bandwidth_gbs); without them each
    GPU's bandwidth is looked up in the GPU catalog by its name. ram_bandwidth_gbs: the host's memory bandwidth
    (default DEFAULT_RAM_BANDWIDTH_GBS, assumed); gpu_bandwidth_gbs: for GPUs whose bandwidth is not known."""
    if ram_bandwidth_gbs is not None and ram_bandwidth_gbs <= 0:
        raise OomkitError(f"RAM bandwidth must be positive, got {ram_bandwidth_gbs} GB/s")
    if gpu_bandwidth_gbs is not None and gpu_bandwidth_gbs <= 0:
        raise OomkitError(f"GPU bandwidth must be positive, got {gpu_bandwidth_gbs} GB/s")
    ctx_basis = "the given context"
    if context is None:
        context, ctx_basis = _context(est), "the engine's context"
        if context is None:
            context, ctx_basis = 0, "no context known: KV cache not counted"
    context = max(int(context), 0)

    groups = _groups(est)
    host = est.host
    layer_place = {lu.index: lu.device for lu in est.layers}
    facts = _as_held(_model_facts(est.model), est, groups, layer_place)

    def mapped(ids: set[str], table: dict[int, int] | dict[int, float]) -> float:
        return sum(v for il, v in table.items() if layer_place.get(il) in ids)

    # -- the input embedding table: on the host when the host holds that many bytes beyond its own layers
    host_layers = mapped({host.id}, facts.layer_bytes)
    embed_on_host = facts.embed_bytes > 0 and host.weights_bytes - host_layers >= facts.embed_bytes * 0.99
    any_gpu_weights = any(u.weights_bytes for u in est.devices)
    second_copy = embed_on_host and any_gpu_weights  # llama.cpp: a tied output is duplicated on the output GPU
    embed_unread = facts.embed_bytes * (1 - 1 / facts.n_vocab) if (not facts.tied or second_copy) else 0.0

    # -- experts moved to the host: the host's bytes beyond its layers and the table, taken from short GPU groups
    host_extra = max(0.0, host.weights_bytes - host_layers - (facts.embed_bytes if embed_on_host else 0))
    shortfalls = []
    for g in groups:
        ids = {u.id for u in g}
        short = mapped(ids, facts.layer_bytes) - sum(u.weights_bytes for u in g)
        shortfalls.append(min(max(short, 0.0), mapped(ids, facts.expert_bytes)))
    scale = min(1.0, host_extra / sum(shortfalls)) if sum(shortfalls) > 0 else 0.0

    read: dict[str, float] = {}
    unread_host = embed_unread if embed_on_host else 0.0
    host_ids = {host.id}
    x_host, a_host = mapped(host_ids, facts.expert_bytes), mapped(host_ids, facts.active_expert_bytes)
    unread_host += x_host - a_host
    for k, g in enumerate(groups):
        ids = {u.id for u in g}
        x, a = mapped(ids, facts.expert_bytes), mapped(ids, facts.active_expert_bytes)
        moved = shortfalls[k] * scale
        skip_fraction = (1 - a / x) if x else 0.0
        unread = (x - moved) * skip_fraction + (embed_unread if (k == 0 and not embed_on_host) else 0.0)
        unread_host += moved * skip_fraction
        w_group = sum(u.weights_bytes for u in g)
        for u in g:
            share = u.weights_bytes / w_group if w_group else 1 / len(g)
            read[u.id] = max(0.0, u.weights_bytes - unread * share)
    read[host.id] = max(0.0, host.weights_bytes - unread_host)
    weights_read = sum(read.values())

    # -- the KV cache of one sequence at the context, shared over the places by the cache bytes they hold
    marginal = est.kv_bytes_per_token_marginal
    kv_per_token = marginal if marginal is not None else est.kv_bytes_per_token
    kv_read = (kv_per_token or 0) * context
    for lu in est.layers:  # a window's worth of one sequence: the cache's bytes per cell times min(context, window)
        # where the engine gives no bytes per token (MLX's QuantizedKVCache, or a RotatingKVCache beside full
        # layers: mlx/layout.py _kv_bytes_per_token), the full layers' caches are read the same way, per cell
        bounded = lu.kind in _BOUNDED_KINDS
        if (bounded or not kv_per_token) and lu.cells and lu.kv_bytes and lu.index < est.model.n_layers:
            att = est.model.layers[lu.index].attention
            window = att.window if bounded and att is not None and att.window else lu.cells
            group = next((g for g in groups if any(u.id == lu.device for u in g)), None)
            kv_read += lu.kv_bytes / lu.cells * min(context, window, lu.cells) * (len(group) if group else 1)
    places = [*est.devices, host]
    kv_total = sum(u.kv_cache_bytes for u in places)
    if kv_read and kv_total:
        for u in places:
            read[u.id] += kv_read * u.kv_cache_bytes / kv_total
    elif kv_read:  # no cache bytes placed (a budget not laid out): with the weights
        for u in places:
            read[u.id] += kv_read * (read[u.id] / weights_read if weights_read else 1 / len(places))

    # -- seconds: groups one after another, the slowest member of each; the host after them
    ram = ram_bandwidth_gbs if ram_bandwidth_gbs is not None else DEFAULT_RAM_BANDWIDTH_GBS
    ram_basis = f"{ram:g} GB/s (given)" if ram_bandwidth_gbs is not None else f"{ram:g} GB/s ({RAM_BANDWIDTH_BASIS})"
    seconds: dict[str, float] = {}
    missing: list[str] = []
    bw_text: list[str] = []
    total = 0.0
    for g in groups:
        slowest = 0.0
        for u in g:
            if read[u.id] <= 0:
                continue
            bw, label = _bandwidth(u, devices), "catalog"
            if bw is None and gpu_bandwidth_gbs is not None:
                bw, label = gpu_bandwidth_gbs, "given"
            if bw is None:
                missing.append(u.id)
                continue
            seconds[u.id] = read[u.id] / (bw * 1e9)
            slowest = max(slowest, seconds[u.id])
            bw_text.append(f"{u.id} {bw:g} GB/s ({label})")
        total += slowest
    if read[host.id] > 0:
        seconds[host.id] = read[host.id] / (ram * 1e9)
        total += seconds[host.id]
        bw_text.append(f"{host.id} {ram_basis}")

    bytes_by_place = {k: round(v) for k, v in read.items()}
    per_token = sum(bytes_by_place.values())
    parallel = [",".join(u.id for u in g) for g in groups if len(g) > 1]
    basis = (f"{LABEL}: decode is memory-bound; one token reads {per_token / 1e9:.3f} GB "
             f"({weights_read / 1e9:.3f} GB of weights it passes through, {kv_read / 1e9:.3f} GB of KV cache at "
             f"{context} tokens, {ctx_basis})")
    if parallel:
        basis += f"; tensor-parallel groups read at once: {'; '.join(parallel)}"
    if not est.layers and len(est.devices) > 1:
        basis += "; no layer map: the GPUs counted as reading at once"
    if bw_text:
        basis += "; bandwidth " + ", ".join(bw_text)
    if missing:
        basis += f"; bandwidth of {', '.join(missing)} unknown (not in the GPU catalog): no bound"
        return SpeedBound(None, per_token, seconds, basis, bytes_by_place, context)
    return SpeedBound(1 / total if total > 0 else None, per_token, seconds, basis, bytes_by_place, context)



def _bandwidth(u: Usage, devices: tuple[Device, ...] | None) -> float | None:
    """The GPU's memory bandwidth in GB/s: its Device's (hardware/catalog.py with_facts), else the GPU catalog's
    entry for its name."""
    if devices is not None:
        dev = next((d for d in devices if d.id == u.id), None)
        if dev is not None and dev.bandwidth_gbs:
            return dev.bandwidth_gbs
    spec = lookup(u.name) if u.name else None
    return spec.bandwidth_gbs if spec is not None else None
