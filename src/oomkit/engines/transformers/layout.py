"""The layout: where `device_map` puts each module, and the assembly of the MemoryEstimate per device (weights,
cache and working set per phase, the allocator's reserved bytes, engine_view, warnings)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import OomkitError
from ...memory import Device, LayerUse, MemoryEstimate, Usage
from ...model.spec import ModelSpec, TensorSpec
from ...model.weights import per_layer_sum
from ...units import round_up
from ..versions import version_str
from .kv import LayerCache, cache_tensors, kv_per_token, layer_caches
from .settings import DEPRECATED_STATIC, Resolved, TransformersSettings, is_gguf, resolve
from .transients import (
    CUDA_CONTEXT,
    K_ROUND_LARGE,
    Transients,
    allocation_size,
    legacy_tuple,
    reserved_for,
    transients,
)
from .weights import (
    BUFFER_SUFFIX,
    TOWER_PREFIX,
    exllama_scratch,
    exllama_version,
    placement_bytes,
    tensor_bytes,
)

# ---------------------------------------------------------------------------------------------------------
# device_map placement (integrations/accelerate.py _get_device_map, get_balanced_memory, infer_auto_device_map)


@dataclass(frozen=True)
class Placement:
    layer_device: tuple[int, ...]  # per trunk layer: GPU index, -1 = CPU
    embed_device: int
    head_device: int  # final norm + lm_head (the logits)
    note: str = ""


def _module_sizes(n: int, weights: list[tuple[TensorSpec, int]]) -> tuple[int, list[int], int]:
    """(embed, each decoder layer (a no-split module), norm + lm_head) bytes."""
    layer_bytes = [0] * n
    embed = head = 0
    for t, b in weights:
        if t.layer is not None:
            layer_bytes[t.layer] += b
        elif t.name.startswith(("token_embd", TOWER_PREFIX)):  # the tower precedes the decoder's modules
            embed += b
        else:
            head += b
    return embed, layer_bytes, head


def _max_memory(devices: tuple[Device, ...], s: TransformersSettings, dm: str, total: int,
                biggest: int) -> tuple[list[float], float]:
    """The per-GPU budgets infer_auto_device_map is given, and the CPU's."""
    user = {k: v for k, v in s.max_memory}
    free = []
    for i, d in enumerate(devices):
        # accelerate get_max_memory: torch.cuda.mem_get_info free memory (the CUDA context already taken)
        have = None if d.memory_bytes is None else max((d.free_bytes or d.memory_bytes) - CUDA_CONTEXT, 0)
        lim = user.get(str(i), user.get(f"cuda:{i}"))
        if lim is not None:
            have = lim if have is None else min(lim, have)
        free.append(have if have is not None else float("inf"))
    cpu_max = user.get("cpu", float("inf"))
    max_mem = list(free)
    n_gpu = len(devices)
    if dm != "sequential":
        # get_balanced_memory
        if n_gpu == 1:
            if not user:
                max_mem[0] = max_mem[0] * 0.9  # "We will use 90% of the memory on device 0 ..."
        else:
            low_zero = dm == "balanced_low_0"
            per_gpu = total // (n_gpu - 1 if low_zero else n_gpu)
            per_gpu += int(1.25 * biggest)
            for i in range(n_gpu - 1):
                max_mem[i] = min(max_mem[0] if low_zero and i == 0 else per_gpu, max_mem[i])
            if low_zero:
                max_mem[0] = min(max(0, total - sum(max_mem[1:])), max_mem[0])
    if s.load_in_4bit or s.load_in_8bit:
        # bitsandbytes takes a tenth of every budget (quantizers/quantizer_bnb_4bit.py / quantizer_bnb_8bit.py
        # adjust_max_memory: "need more space for buffers that are created during quantization", applied by
        # integrations/accelerate.py _get_device_map after get_balanced_memory / get_max_memory; before the quantizer
        # classes, modeling_utils.py did the same for QuantizationMethod.BITS_AND_BYTES)
        max_mem = [m * 0.9 for m in max_mem]
        cpu_max = cpu_max * 0.9
    return max_mem, cpu_max


def place(spec: ModelSpec, devices: tuple[Device, ...], s: TransformersSettings,
          weights: list[tuple[TensorSpec, int]]) -> Placement:
    n = len(spec.trunk_layers)
    dm = (s.device_map or "").strip().lower()
    if not devices or dm == "cpu":
        return Placement(tuple([-1] * n), -1, -1)
    if dm in ("", "cuda", "cuda:0", "0"):
        return Placement(tuple([0] * n), 0, 0)
    m = re.fullmatch(r"(?:cuda:)?(\d+)", dm)
    if m:
        idx = int(m.group(1))
        if idx >= len(devices):
            raise OomkitError(f"device_map={s.device_map!r}: there are {len(devices)} GPUs")
        return Placement(tuple([idx] * n), idx, idx)
    if dm not in ("auto", "balanced", "balanced_low_0", "sequential"):
        raise OomkitError(f"device_map {s.device_map!r}: oomkit reads 'auto', 'balanced', 'balanced_low_0', "
                          "'sequential', 'cpu' or 'cuda:N'")
    embed, layer_bytes, head = _module_sizes(n, placement_bytes(spec, s, weights))
    total = embed + head + sum(layer_bytes)
    max_mem, cpu_max = _max_memory(devices, s, dm, total, max(layer_bytes + [embed, head]))
    n_gpu = len(devices)
    # infer_auto_device_map (transformers integrations/accelerate.py, 5.x): modules in order onto GPU 0, 1, ..., then
    # the CPU; on the "main devices" (GPU 0 and the CPU) a module must leave room for the largest "layer" still to
    # place (get_max_layer_size over the untreated modules: the no-split decoder layers and the leaf modules, the
    # embedding and lm_head included; recomputed once the largest is placed), so while an untied lm_head waits at the
    # end GPU 0 keeps its size free. A tied lm_head has no bytes of its own (compute_module_sizes skips tied weights)
    # and goes with the embedding (get_module_size_with_ties), so its logits are computed on the embedding's device.
    mods = [embed, *layer_bytes, head]
    after = [0] * len(mods)  # the largest module after each one
    biggest_after = 0
    for j in range(len(mods) - 1, -1, -1):
        after[j] = biggest_after
        biggest_after = max(biggest_after, mods[j])
    caps = max_mem + [cpu_max]
    used = [0.0] * len(caps)
    cur = 0

    def put(j: int) -> int:
        nonlocal cur
        size = mods[j]
        while cur < len(caps) - 1:
            cap = caps[cur] - (after[j] if cur == 0 else 0)
            if used[cur] + size <= cap:
                break
            cur += 1
        used[cur] += size
        return cur

    to_dev = [put(j) for j in range(len(mods))]
    if used[-1] > cpu_max:
        raise OomkitError("device_map: the model does not fit on the GPUs and in max_memory['cpu'] (disk offload "
                          "is not modelled)")

    def as_dev(i: int) -> int:
        return -1 if i == n_gpu else i

    head_dev = to_dev[0] if spec.tied_embeddings else to_dev[-1]
    return Placement(tuple(as_dev(d) for d in to_dev[1:-1]), as_dev(to_dev[0]), as_dev(head_dev),
                     note="device_map placement modelled on accelerate's infer_auto_device_map (module sizes, "
                          "90% / balanced budgets); not measured")


# ---------------------------------------------------------------------------------------------------------
# Bytes per device (index; -1: the host)


@dataclass(frozen=True)
class PhaseBytes:
    """One phase's cache, recurrent state, cache tensors (for the allocator) and working set, per device."""

    kv: dict[int, int]
    rs: dict[int, int]
    parts: dict[int, list[int]]
    comp: dict[int, int]


def _weights_on(weights: list[tuple[TensorSpec, int]], placement: Placement
                ) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Weight bytes per device, and the tensors making them up (for the allocator rounding)."""
    w_by: dict[int, int] = {}
    w_tensors: dict[int, list[int]] = {}
    for t, b in weights:
        if t.layer is not None:
            d = placement.layer_device[t.layer]
        elif t.name.startswith(("token_embd", TOWER_PREFIX)):
            d = placement.embed_device
        else:
            d = placement.head_device
        w_by[d] = w_by.get(d, 0) + b
        w_tensors.setdefault(d, []).append(b)
    return w_by, w_tensors


def _cache_on(caches: list[LayerCache], placement: Placement, phase: str
              ) -> tuple[dict[int, int], dict[int, int], dict[int, list[int]]]:
    """Cache per device at a phase ("prefill" | "end"); offloaded layers live on the host, with the layer being
    updated and the prefetched next one on the GPU (cache_utils.py Cache.update: prefetch(layer_idx + 1),
    offload(layer_idx))."""
    kv: dict[int, int] = {}
    rs: dict[int, int] = {}
    parts: dict[int, list[int]] = {}
    offl: dict[int, list[int]] = {}
    for c in caches:
        d = placement.layer_device[c.index]
        total = c.storage_prefill if phase == "prefill" else c.storage_end
        state = c.conv_bytes + c.ssm_bytes
        if c.offloaded and d >= 0:
            kv[-1] = kv.get(-1, 0) + total - state
            offl.setdefault(d, []).append(total - state)
            if state:
                rs[d] = rs.get(d, 0) + state
            continue
        kv[d] = kv.get(d, 0) + total - state
        rs[d] = rs.get(d, 0) + state
        parts.setdefault(d, []).extend(cache_tensors(c, phase))
    for d, sizes in offl.items():
        top = sorted(sizes, reverse=True)[:2]
        kv[d] = kv.get(d, 0) + sum(top)
        parts.setdefault(d, []).extend(top)
    return kv, rs, parts


def _compute_on(tr: Transients, placement: Placement, phase: str) -> dict[int, int]:
    """The working set: prefill on every device with layers, logits on the lm_head's device.

    With the lm_head on another device than the input, the model's output comes back to the input's device:
    accelerate's dispatch_model gives the whole model an AlignDevicesHook(io_same_device=True)
    (hooks.py attach_align_device_hook_on_blocks, module_name == ""; 0.27.2 to 1.x), whose post_forward
    `send_to_device(output, self.input_device, skip_keys=...)` copies the logits there (past_key_values skipped:
    the models' _skip_keys_device_placement). So at the end of the prefill the input's device (the embedding's,
    where generate's input_ids live) holds the returned logits beside its layers' cache."""
    out: dict[int, int] = {}
    layer_part = tr.prefill_layer if phase == "prefill" else tr.decode_layer
    far_part = tr.prefill_layer_far if phase == "prefill" else tr.decode_layer
    logit_part = tr.prefill_logits if phase == "prefill" else tr.decode_logits
    for d in set(placement.layer_device):
        # inputs_embeds stays on the embedding's device (transients.py)
        out[d] = max(out.get(d, 0), layer_part if d == placement.embed_device else far_part)
    out[placement.head_device] = max(out.get(placement.head_device, 0), logit_part)
    src = placement.embed_device
    if phase == "prefill" and src >= 0 and src != placement.head_device:
        out[src] = max(out.get(src, 0), tr.returned_logits)
    return out


def _phase_on(caches: list[LayerCache], placement: Placement, tr: Transients, phase: str,
              r: Resolved, w_by: dict[int, int]) -> PhaseBytes:
    kv, rs, parts = _cache_on(caches, placement, "prefill" if phase == "prefill" else "end")
    comp = _compute_on(tr, placement, phase)
    if phase != "decode" or not any(legacy_tuple(r, c) for c in caches):
        return PhaseBytes(kv, rs, parts, comp)
    # Before 4.42 the previous step's legacy tuple (generate's model_kwargs["past_key_values"]) is alive until the
    # step returns, beside the caches the step's torch.cat made (transients.legacy_tuple): the last step holds the
    # whole cache twice; the first step the prompt's cache twice and the prefill's float32 logits (first_step_logits).
    end = PhaseBytes(kv, rs, parts, comp)
    kv1, rs1, parts1 = _cache_on(caches, placement, "prefill")
    first = PhaseBytes(kv1, rs1, parts1, dict(comp))
    # the prefill's output lives on the input's device (_compute_on: accelerate sends it there)
    first.comp[placement.embed_device] = first.comp.get(placement.embed_device, 0) + tr.first_step_logits
    for c in caches:
        if legacy_tuple(r, c):
            d = placement.layer_device[c.index]
            end.comp[d] = end.comp.get(d, 0) + c.storage_end - c.conv_bytes - c.ssm_bytes
            first.comp[d] = first.comp.get(d, 0) + c.storage_prefill - c.conv_bytes - c.ssm_bytes
    return _per_device_peak((end, first), w_by)


def _load_phase(spec: ModelSpec, s: TransformersSettings, weights: list[tuple[TensorSpec, int]],
                placement: Placement, w_by: dict[int, int], scratch: dict[int, int]) -> PhaseBytes | None:
    """The end of from_pretrained's loading, for a tied-embedding checkpoint that stores lm_head.weight as its own
    tensor (TransformersSettings.stored_tied_head). modeling_utils.py _load_state_dict_into_meta_model (4.38.2,
    4.46.0, 4.51.3) loads every stored key that `model.state_dict()` names, and a tied model names both
    (model.embed_tokens.weight, lm_head.weight): each becomes a new tensor on its device_map device
    (set_module_tensor_to_device; _load_parameter_into_model from 4.50), so the lm_head holds a copy of the
    embedding until from_pretrained's `model.tie_weights()` after _load_pretrained_model points it back at the
    embedding. At that moment the GPU holds the parameters and that copy; not yet the non-persistent buffers (built
    on the CPU under init_empty_weights(include_buffers=False), moved by dispatch_model after the tie) nor the
    ExLlama scratch (post_init_model, after loading). The copy is the embedding's loaded size on the lm_head's
    device (the embedding's, when tied). None where it does not apply. As a phase, the bytes above the resident
    weights (the copy less the buffers and scratch) count as its working set."""
    if not (s.stored_tied_head and spec.tied_embeddings) or is_gguf(spec):
        return None
    copy = sum(b for t, b in weights if t.name == "token_embd.weight")
    later: dict[int, int] = dict(scratch)
    for t, b in weights:
        if t.name.endswith(BUFFER_SUFFIX):
            d = placement.layer_device[t.layer] if t.layer is not None else placement.embed_device
            later[d] = later.get(d, 0) + b
        elif t.name == "token_embd.causal_mask_buffer":
            later[placement.embed_device] = later.get(placement.embed_device, 0) + b
    above = copy - later.get(placement.head_device, 0)
    if copy <= 0 or above <= 0:
        return None
    return PhaseBytes({}, {}, {}, {placement.head_device: above})


def _per_device_peak(phases: tuple[PhaseBytes, ...], w_by: dict[int, int]) -> PhaseBytes:
    """Each device at its own largest moment: torch.cuda.max_memory_allocated(i) peaks per device, and a device whose
    layers' cache peaks at the end of generation need not peak when the lm_head's device holds the logits."""
    ids = set(w_by).union(*(set(p.kv) | set(p.rs) | set(p.comp) | set(p.parts) for p in phases))
    out = PhaseBytes({}, {}, {}, {})
    for d in ids:
        best = max(phases, key=lambda p: _device_total(p, w_by, d))
        for mine, theirs in ((out.kv, best.kv), (out.rs, best.rs), (out.parts, best.parts), (out.comp, best.comp)):
            if d in theirs:
                mine[d] = theirs[d]
    return out


def _device_total(p: PhaseBytes, w_by: dict[int, int], d: int) -> int:
    return w_by.get(d, 0) + p.kv.get(d, 0) + p.rs.get(d, 0) + p.comp.get(d, 0)


def _peak_phase(phases: dict[str, PhaseBytes], w_by: dict[int, int], n_dev: int) -> str:
    """The peak phase (the GPU that fills first decides; one phase for all keeps the parts consistent): prefill,
    decode, or the end of loading where _load_phase gives one."""
    ids = list(range(n_dev)) or [-1]
    return max(phases, key=lambda p: max(_device_total(phases[p], w_by, d) for d in ids))


def _device_usages(devices: tuple[Device, ...], s: TransformersSettings, w_by: dict[int, int],
                   w_tensors: dict[int, list[int]], p: PhaseBytes
                   ) -> tuple[list[Usage], dict[str, int], dict[str, int]]:
    """Usage per GPU, with torch's allocated and reserved bytes."""
    allocated: dict[str, int] = {}
    reserved: dict[str, int] = {}
    usages = []
    for i, dev in enumerate(devices):
        # caching_allocator_warmup (modeling_utils.py) reserves the device's weights in one block (capped at
        # total - 1.2 GiB), then the tensors are carved out of it
        w_res = round_up(w_by.get(i, 0), K_ROUND_LARGE) if w_by.get(i) else 0
        live = p.parts.get(i, []) + ([p.comp[i]] if p.comp.get(i) else [])
        alloc = sum(allocation_size(b) for b in w_tensors.get(i, [])) + sum(allocation_size(b) for b in live)
        res = w_res + reserved_for(live, s.expandable_segments)
        allocated[dev.id] = alloc
        reserved[dev.id] = max(res, alloc)
        gap = reserved[dev.id] - _device_total(p, w_by, i)
        # torch opens a context where it works
        used = bool(w_by.get(i) or p.kv.get(i) or p.rs.get(i) or p.comp.get(i))
        usages.append(Usage(id=dev.id, name=dev.name, memory_bytes=dev.memory_bytes, weights_bytes=w_by.get(i, 0),
                            kv_cache_bytes=p.kv.get(i, 0), recurrent_state_bytes=p.rs.get(i, 0),
                            compute_bytes=p.comp.get(i, 0),
                            overhead_bytes=(CUDA_CONTEXT + max(gap, 0)) if used else 0))
    return usages, allocated, reserved


# ---------------------------------------------------------------------------------------------------------
# Warnings, engine_view, the estimate


def _warnings(spec: ModelSpec, devices: tuple[Device, ...], s: TransformersSettings, r: Resolved,
              placement: Placement) -> list[str]:
    warnings: list[str] = list(r.labels)
    if not devices:
        warnings.append("no GPU: transformers runs on the CPU (torch's CPU allocator, no caching)")
    for t in spec.towers if not is_gguf(spec) else ():
        warnings.append(f"{t.kind} tower ({t.family}, {t.params / 1e9:.2f} B parameters) loaded with the checkpoint "
                        f"in {r.dtype}" + ("; load_in_4bit/8bit would quantize its nn.Linear layers too, not modelled"
                                           if s.load_in_4bit or s.load_in_8bit else ""))
    cross = [la for la in spec.trunk_layers if la.cross_attention and la.attention is not None]
    if cross:
        # modeling_mllama.py MllamaTextModel.forward skips a cross-attention layer while no image came (its cache
        # stays empty); MllamaTextCrossAttention caches k_proj / v_proj of the vision tokens, num_tiles x 1601
        # (MllamaVisionModel slices the 8-padded patches back to num_patches) per image
        tc = spec.towers[0].config.get("vision_config", {}) if spec.towers else {}
        tiles = int(tc.get("max_num_tiles", 4))
        patches = (int(tc.get("image_size", 560)) // int(tc.get("patch_size", 14))) ** 2 + 1
        per_image = sum(sum(kv_per_token(la, r)) for la in cross) * tiles * patches
        warnings.append(f"a text prompt: the {len(cross)} cross-attention layers cache nothing; each image adds their "
                        f"K and V of {tiles} x {patches} vision tokens, {per_image / 2**20:,.0f} MiB per image and "
                        "sequence (not counted here)")
    if is_gguf(spec):
        warnings.append(f"{spec.weights.format} GGUF weights: transformers dequantizes a GGUF on load "
                        f"(to {r.dtype}); name the Hugging Face model for its own checkpoint")
    if placement.note and devices and any(d != 0 for d in placement.layer_device):
        warnings.append(placement.note)
    if s.max_length and spec.n_ctx_train and r.max_length > spec.n_ctx_train:
        warnings.append(f"max_length {r.max_length} > the model's max_position_embeddings {spec.n_ctx_train}")
    if r.impl == "quantized" and r.backend != "fp8":
        warnings.append(f"QuantizedCache {r.backend}: packed layout from the backend's source, not measured here")
    if r.offload:
        warnings.append("offloaded cache: two offloaded layers on the GPU at a time (the updated one and the "
                        "prefetched next), the rest on the host; modelled from cache_utils.py, not measured")
    if r.impl in DEPRECATED_STATIC:
        warnings.append(f"cache_implementation={r.impl!r} is deprecated (transformers: removed in v5.13); "
                        "the layer types come from the config")
    return warnings


def _cache_bytes_by_kind(caches: list[LayerCache]) -> dict[str, int]:
    by_kind: dict[str, int] = {}
    for c in caches:
        if c.kind == "none":
            continue
        if c.conv_bytes or c.ssm_bytes:
            by_kind["recurrent_conv"] = by_kind.get("recurrent_conv", 0) + c.conv_bytes
            by_kind["recurrent_ssm"] = by_kind.get("recurrent_ssm", 0) + c.ssm_bytes
        kv_b = c.nbytes_end - c.conv_bytes - c.ssm_bytes
        if kv_b:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + kv_b
    return by_kind


def _cache_tokens_by_kind(caches: list[LayerCache]) -> dict[str, int]:
    """Tokens the K/V tensors of each layer kind hold when generate returns."""
    tokens_by_kind: dict[str, int] = {}
    for c in caches:
        if c.k_per_token:
            key = f"cache_tokens_{c.kind}"
            tokens_by_kind[key] = max(tokens_by_kind.get(key, 0), c.tokens_end)
    return tokens_by_kind


def _ranges(devs: tuple[int, ...], name: Callable[[int], str]) -> dict[str, str]:
    """{"0-15": "CUDA0", "16-31": "CUDA1"}"""
    out: dict[str, str] = {}
    start = 0
    for i in range(1, len(devs) + 1):
        if i == len(devs) or devs[i] != devs[start]:
            key = f"{start}" if i - 1 == start else f"{start}-{i - 1}"
            out[key] = name(devs[start])
            start = i
    return out


def _engine_view(devices: tuple[Device, ...], r: Resolved, caches: list[LayerCache], tr: Transients,
                 placement: Placement, w_by: dict[int, int], peak_phase: str, allocated: dict[str, int],
                 reserved: dict[str, int], dn: Callable[[int], str]) -> dict[str, Any]:
    cache_class = ("QuantizedCache" if r.impl == "quantized" else "StaticCache" if r.static else "DynamicCache")
    own = next((c.cls for c in caches if c.cls.startswith("Lfm2")), None)  # LFM2 before 5.5 keeps its own cache
    cache_class = own or cache_class
    return {
        "cache_class": cache_class,
        "cache_implementation": r.impl,
        "dtype": r.dtype,
        "prompt_tokens": r.prompt,
        "max_new_tokens": r.new,
        "max_length": r.max_length,
        "cache_batch_size": r.batch,
        "max_cache_len": r.max_cache_len if r.static else None,
        **_cache_tokens_by_kind(caches),
        "weights_bytes": {dn(d): b for d, b in sorted(w_by.items())},
        "cache_bytes": _cache_bytes_by_kind(caches),
        "cache_nbytes": sum(c.nbytes_end for c in caches),
        "cache_storage_bytes": {"after_prefill": sum(c.storage_prefill for c in caches),
                                "end": sum(c.storage_end for c in caches)},
        "logits_peak_bytes": tr.prefill_logits,
        "activation_peak_bytes": {"prefill": tr.prefill_layer, "decode": tr.decode_layer},
        "peak_phase": peak_phase,
        "torch_allocated_bytes": allocated,
        "torch_reserved_bytes": reserved,
        "cuda_context_bytes": CUDA_CONTEXT if devices else 0,
        "device_map": {"embed": dn(placement.embed_device), "lm_head": dn(placement.head_device),
                       "layers": _ranges(placement.layer_device, dn)},
    }


def _kv_bytes_per_token(caches: list[LayerCache], r: Resolved) -> int | None:
    """Marginal bytes per context token, one sequence: the layers that keep every token (none for a static or
    quantized cache)."""
    if r.static or r.impl == "quantized":
        return None
    return sum((c.k_per_token + c.v_per_token) for c in caches if c.k_per_token and not c.window) or None


def _effective_settings(s: TransformersSettings, r: Resolved) -> dict[str, Any]:
    eff = s.to_dict()
    eff.update(torch_dtype=r.dtype, max_length=r.max_length, prompt_tokens=r.prompt, max_new_tokens=r.new,
               cache_implementation=r.impl, engine_version=version_str(r.version))
    if r.impl == "quantized":
        eff.update(cache_backend=r.backend, cache_nbits=r.nbits)
    return eff


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: TransformersSettings) -> MemoryEstimate:
    r = resolve(spec, s)
    caches = layer_caches(spec, r)
    weights = tensor_bytes(spec, s, r)
    placement = place(spec, devices, s, weights)
    tr = transients(spec, s, r, caches)

    w_by, w_tensors = _weights_on(weights, placement)
    # the GPTQ kernels' scratch: one set of buffers per GPU, allocated after loading and kept (weights.exllama_scratch)
    scratch = exllama_scratch(spec, s, r, placement.layer_device)
    for d, b in scratch.items():
        w_by[d] = w_by.get(d, 0) + b
        w_tensors.setdefault(d, []).append(b)
    phases = {phase: _phase_on(caches, placement, tr, phase, r, w_by) for phase in ("prefill", "decode")}
    load = _load_phase(spec, s, weights, placement, w_by, scratch)
    if load is not None:
        phases["load"] = load
    peak_phase = _peak_phase(phases, w_by, len(devices))
    p = _per_device_peak((phases[peak_phase], *(v for k, v in phases.items() if k != peak_phase)), w_by)
    usages, allocated, reserved = _device_usages(devices, s, w_by, w_tensors, p)
    host = Usage(id="CPU", name="host", weights_bytes=w_by.get(-1, 0), kv_cache_bytes=p.kv.get(-1, 0),
                 recurrent_state_bytes=p.rs.get(-1, 0), compute_bytes=p.comp.get(-1, 0))
    warnings = _warnings(spec, devices, s, r, placement)
    if scratch:
        version, source = exllama_version(spec, s)
        warnings.append(f"GPTQ ExLlama v{version} kernel buffers: {max(scratch.values()) / 2**20:,.0f} MiB on each GPU "
                        f"with GPTQ layers (counted with the weights); version {version} from {source}")

    def dn(d: int) -> str:
        return "cpu" if d < 0 else devices[d].id

    view = _engine_view(devices, r, caches, tr, placement, w_by, peak_phase, allocated, reserved, dn)
    if scratch:
        view["exllama_scratch_bytes"] = {dn(d): b for d, b in sorted(scratch.items())}
    if load is not None:
        copy = sum(b for t, b in weights if t.name == "token_embd.weight")
        view["stored_head_copy_bytes"] = {dn(placement.head_device): copy}
        warnings.append(f"the checkpoint's own lm_head.weight: {copy / 2**20:,.0f} MiB on "
                        f"{dn(placement.head_device)} while from_pretrained loads, until it re-ties the lm_head to "
                        "the embedding (counted at the end of loading)")
    w_by_layer = per_layer_sum((t.layer, b) for t, b in weights)
    layer_uses = tuple(
        LayerUse(index=c.index, kind=c.kind, device=dn(placement.layer_device[c.index]),
                 weights_bytes=w_by_layer.get(c.index, 0),
                 kv_bytes=c.storage_end - c.conv_bytes - c.ssm_bytes, recurrent_bytes=c.conv_bytes + c.ssm_bytes,
                 cells=c.tokens_end or None)
        for c in caches
    )
    error = _bnb_dispatch_error(s, placement)
    if error:
        view["error"] = error
    return TransformersEstimate(model=spec, engine="transformers", settings=_effective_settings(s, r),
                                devices=tuple(usages), host=host, engine_view=view,
                                kv_bytes_per_token=_kv_bytes_per_token(caches, r), layers=layer_uses,
                                warnings=tuple(warnings), error=error)


@dataclass(frozen=True)
class TransformersEstimate(MemoryEstimate):
    """A MemoryEstimate that also knows when from_pretrained refuses the load (then it does not fit)."""

    error: str | None = None

    @property
    def fits(self) -> bool | None:
        if self.error is not None:
            return False
        return super().fits


def _bnb_dispatch_error(s: TransformersSettings, placement: Placement) -> str | None:
    """bitsandbytes refuses a device_map that sends part of the model to the CPU: quantizers/quantizer_bnb_4bit.py /
    quantizer_bnb_8bit.py validate_environment (called by integrations/accelerate.py _get_device_map on the inferred
    map, transformers 5.x): any module on "cpu" or "disk" unless all of it is, and llm_int8_enable_fp32_cpu_offload
    is off (its default; oomkit takes no such flag). Before the quantizer classes, from_pretrained raised the same
    for the quantized modules only (an lm_head alone on the CPU passed): not modelled."""
    if not (s.load_in_4bit or s.load_in_8bit):
        return None
    devs = {*placement.layer_device, placement.embed_device, placement.head_device}
    if -1 in devs and devs != {-1}:
        return ("ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to "
                "fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these "
                "modules in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom "
                "`device_map` to `from_pretrained`.")
    return None
