"""MLX on Apple silicon (`mlx_lm.generate`, `mlx_lm.server`, `python -m mlx_lm ...`): what it allocates.

Each rule mirrors the source of mlx-lm 0.32.0 (ml-explore/mlx-lm, mlx_lm/models/cache.py, generate.py, utils.py,
the models' make_cache) and mlx 0.32.2 (mlx/backend/metal/allocator.cpp), cited as `file:function`. MLX does not
run here: the tests check figures worked by hand from those lines.

Memory is unified: one Metal device whose budget is the GPU working set macOS allows (Metal's
recommendedMaxWorkingSetSize, raised by `sudo sysctl iogpu.wired_limit_mb=N`). mlx_lm wires up to that much while
it generates (generate.py wired_limit); a single Metal buffer may not exceed maxBufferLength
(allocator.cpp MetalAllocator::malloc: "[metal::malloc] Attempting to allocate ... greater than the maximum
allowed buffer size").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import OomkitError
from ..flags import flag_value
from ..memory import Device, LayerUse, MemoryEstimate, Usage
from ..model.spec import LayerKind, LayerSpec, ModelSpec, TensorSpec
from ..units import GiB, KiB, MiB
from .base import EngineModule

NEWEST = "0.32.0"  # mlx-lm

# cache.py KVCache.step / RotatingKVCache.step / QuantizedKVCache.step: buffers grow 256 tokens at a time
STEP = 256
# generate.py: DEFAULT_MAX_TOKENS (mlx_lm.generate --max-tokens), DEFAULT_QUANTIZED_KV_START
GENERATE_MAX_TOKENS = 100
DEFAULT_QUANTIZED_KV_START = 5000
# server.py: --max-tokens default 512, --decode-concurrency 32
SERVER_MAX_TOKENS = 512
# Apple silicon pages are 16 KiB: MetalAllocator::malloc rounds buffers above a page up to whole pages
VM_PAGE = 16 * KiB

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
_DTYPE_ALIASES = {"fp32": "float32", "f32": "float32", "fp16": "float16", "f16": "float16", "bf16": "bfloat16"}

# Architectures (oomkit's names: hf_config.ARCH_BY_MODEL_TYPE of the model_type, after mlx-lm's
# utils.py MODEL_REMAPPING, e.g. mistral -> llama) whose mlx-lm model file defines make_cache, so that
# cache.py make_prompt_cache uses it and ignores --max-kv-size (every `def make_cache` in mlx_lm/models of 0.32.0).
MAKE_CACHE_ARCHS = frozenset({
    "afm7", "afmoe", "baichuan_m1", "bailing_moe_linear", "cohere2", "deepseek_v32", "exaone4", "exaone_moe",
    "falcon-h1", "gemma3", "gemma3n", "gemma4", "gemma4_text", "gpt-oss", "granitehybrid", "iquestloopcoder",
    "jamba", "kimi_linear", "laguna", "lfm2", "lfm2-vl", "lfm2_moe", "llama", "llama4", "longcat_flash",
    "longcat_flash_ngram", "mamba", "mamba2", "mellum", "mimo_v2_flash", "ministral3", "nemotron-nas",
    "nemotron_h", "olmo3", "plamo2", "qwen35", "qwen35moe", "qwen3next", "recurrent_gemma", "rwkv7", "step3p5",
})
# ... of which these give sliding layers a RotatingKVCache(max_size=sliding_window) (models/gemma3_text.py,
# gpt_oss.py, cohere2.py, exaone4.py, olmo3.py, gemma3n.py, gemma4_text.py, mimo_v2_flash.py, afmoe.py,
# step3p5.py, laguna.py, mellum.py, ministral3.py, baichuan_m1.py, exaone_moe.py). models/llama.py windows only the
# layers its config lists in `layer_types`: a Mistral v0.1 config lists none, so its sliding_window is ignored and
# every token is cached; models/gemma2.py has no make_cache at all.
ROTATING_ARCHS = frozenset({"gemma3", "gemma3n", "gemma4", "gemma4_text", "gpt-oss", "cohere2", "exaone4",
                            "exaone_moe", "olmo3", "mimo_v2_flash", "afmoe", "step3p5", "laguna", "mellum",
                            "ministral3", "baichuan_m1"})

# The engine-neutral CLI options -> these fields (commands/_model_args.py reads a module's NEUTRAL).
NEUTRAL = {"ctx": "context_length", "parallel": "batch", "engine_version": "engine_version"}


@dataclass(frozen=True)
class MlxSettings:
    """mlx_lm's options by their own names (generate.py / server.py argparse defaults; generate_step's for
    prefill_step_size). context_length and prompt_tokens are oomkit's: prompt + generated tokens, and the prompt."""

    program: str = "mlx_lm.generate"  # mlx_lm.generate | mlx_lm.server
    max_tokens: int | None = None  # --max-tokens / -m; None: 100 (generate), 512 (server)
    prompt_tokens: int | None = None  # None: context_length - max_tokens
    context_length: int | None = None  # prompt + max_tokens; None: the model's trained context
    max_kv_size: int | None = None  # --max-kv-size: RotatingKVCache(max_size, keep=4) on models without make_cache
    kv_bits: int | None = None  # --kv-bits
    kv_group_size: int = 64  # --kv-group-size
    quantized_kv_start: int = DEFAULT_QUANTIZED_KV_START  # --quantized-kv-start
    prefill_step_size: int = 2048  # generate_step / server --prefill-step-size
    batch: int = 1  # sequences decoded together (server: up to --decode-concurrency 32)
    q_bits: int | None = None  # weights from mlx_lm.convert -q --q-bits (4 by default): None = as the checkpoint
    q_group_size: int = 64  # mlx_lm.convert --q-group-size
    wired_limit_mb: int = 0  # sysctl iogpu.wired_limit_mb; 0 = macOS's default
    max_buffer_length: int | None = None  # mx.device_info()["max_buffer_length"]; None: estimated from the RAM
    engine_version: str = NEWEST

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# ---------------------------------------------------------------------------------------------------------
# The Metal device: unified memory, the working set, the largest buffer


def default_working_set(ram: int) -> int:
    """Metal's recommendedMaxWorkingSetSize with iogpu.wired_limit_mb=0, as macOS 14/15 report it: two thirds of the
    RAM up to 32 GiB, three quarters above. Read from published start-up logs (llama.cpp prints it): 16 GiB ->
    10922.67 MiB (llama-cpp-python#687), 32 GiB -> 21845.34 MiB (ollama#434), 36 GiB -> 28991.03 MB, 64 GiB ->
    51539.61 MB = 48 GiB (llama.cpp issues on an M2 Max 64GB). Newer macOS reports more (107.52 GiB of 128 GiB on
    macOS 26, antirez/ds4#893): pass --wired-limit-mb or the value from mx.device_info() when you know it."""
    return ram * 2 // 3 if ram <= 32 * GiB else ram * 3 // 4


def default_max_buffer(ram: int) -> int:
    """MTLDevice.maxBufferLength: reported as 9,534,832,640 bytes on a 16 GB Mac and 14,302,248,960 on a 24 GB Mac
    (both 0.555 x RAM; mlx "[metal::malloc] ... maximum allowed buffer size" messages); larger Macs report
    relatively more (86,586,540,032 on 128 GB). An approximation: pass --max-buffer-length from mx.device_info()."""
    return int(ram * 0.555)


# ---------------------------------------------------------------------------------------------------------
# Cache simulation: the exact buffer sizes cache.py reaches for a sequence of updates


def updates_for(prompt: int, max_tokens: int, prefill_step: int) -> list[int]:
    """Token counts of each model call generate_step makes (generate.py generate_step): the prompt in chunks of
    prefill_step_size while more than one token is left, the rest in the first _step, then max_tokens calls of one
    token each (the loop computes one token ahead, so the cache ends with prompt + max_tokens tokens)."""
    out = []
    done = 0
    while prompt - done > 1:
        n = min(prefill_step, prompt - done - 1)
        out.append(n)
        done += n
    out.append(prompt - done)
    out.extend([1] * max_tokens)
    return out


@dataclass(frozen=True)
class Sim:
    """Tokens of buffer a cache holds when generation ends, and the largest concat transient (old + new tokens)."""

    capacity: int
    transient: int
    offset: int
    quantized_from: int | None = None  # the offset at which a KVCache became a QuantizedKVCache


def simulate_kv(updates: list[int], quantize_at: int | None = None) -> Sim:
    """cache.py KVCache.update_and_fetch (and QuantizedKVCache's, which grows the same way): when an update does not
    fit, the buffer is cut to the used length if that is not a multiple of 256 and grows by ceil(S / 256) * 256.
    quantize_at: generate.py maybe_quantize_kv_cache converts the cache after the first call that leaves
    offset >= quantized_kv_start; to_quantized quantizes the whole buffer, unused tail included."""
    cap = prev = transient = 0
    qfrom = None
    i = 0
    n = len(updates)
    while i < n:
        S = updates[i]
        if S == 1 and cap:
            # a run of single-token steps: grows by one step each time the buffer is full
            run = 1
            while i + run < n and updates[i + run] == 1:
                run += 1
            if quantize_at is not None and qfrom is None and prev + run >= quantize_at:
                run = max(quantize_at - prev, 1)  # stop where the cache turns quantized
            end = prev + run
            if end > cap:
                grow = -(-(end - cap) // STEP) * STEP
                cap += grow
                transient = max(transient, 2 * cap - STEP)  # the last concatenate: old + new buffer
            prev = end
            i += run
        else:
            if not cap or prev + S > cap:
                chunk = -(-S // STEP) * STEP
                if cap:
                    if prev % STEP:
                        cap = prev
                    transient = max(transient, 2 * cap + chunk)
                    cap += chunk
                else:
                    cap = chunk
            prev += S
            i += 1
        if quantize_at is not None and qfrom is None and prev >= quantize_at:
            qfrom = prev
    return Sim(capacity=cap, transient=transient, offset=prev, quantized_from=qfrom)


def simulate_rotating(updates: list[int], max_size: int, keep: int = 0) -> Sim:
    """cache.py RotatingKVCache: multi-token updates concatenate (_update_concat: the buffer becomes
    min(used, max_size - 1) + S tokens, so a prefill chunk may exceed max_size), single tokens go in place
    (_update_in_place: grow by min(256, max_size - offset) while below max_size, trim back to max_size, rotate)."""
    size = idx = offset = transient = 0
    have = False
    i, n = 0, len(updates)
    while i < n:
        S = updates[i]
        if S > 1:
            if not have:
                size, have = S, True
            else:
                cur = size if (idx == size or idx < offset) else idx  # _temporal_order
                new = min(cur, max_size - 1) + S
                transient = max(transient, size + new)
                size = new
            offset += S
            idx = size
            i += 1
            continue
        # single-token steps
        if have and offset < size < max_size and idx == offset:
            # room left in the growing buffer: steps until it is full (or the updates end) change nothing else
            run = 0
            while i + run < n and updates[i + run] == 1 and run < size - offset:
                run += 1
            offset += run
            idx += run
            i += run
            continue
        if not have or (offset >= size and size < max_size):
            grow = min(STEP, max_size - offset)
            transient = max(transient, 2 * size + grow)
            size += grow
            idx = offset
            have = True
        if size > max_size:
            transient = max(transient, size + max_size)
            size = idx = max_size
        if idx == max_size:
            idx = keep
        offset += 1
        idx += 1
        i += 1
        if size >= max_size:  # full: nothing changes size any more
            rest = 1
            while i < n and updates[i] == 1:
                i += 1
                rest += 1
            offset += rest - 1
            # idx position no longer matters for sizes; keep it consistent with a full ring
            idx = keep + ((idx - keep + rest - 1) % max(max_size - keep, 1))
    return Sim(capacity=size, transient=transient, offset=offset)


# ---------------------------------------------------------------------------------------------------------
# What mlx_lm settles on


@dataclass(frozen=True)
class Resolved:
    prompt: int
    max_tokens: int
    total: int  # prompt + max_tokens: tokens in the cache at the end
    dtype: str
    dtype_bytes: int
    updates: tuple[int, ...]
    labels: tuple[str, ...] = ()


def checkpoint_dtype(spec: ModelSpec) -> str:
    fmt = spec.weights.format.lower()
    fmt = _DTYPE_ALIASES.get(fmt, fmt)
    if fmt in DTYPE_BYTES:
        return fmt
    for t in spec.weights.tensors:
        d = _DTYPE_ALIASES.get(t.dtype.lower(), t.dtype.lower())
        if t.name.endswith("norm.weight") and d in ("float16", "bfloat16"):
            return d
    return "bfloat16"


def resolve(spec: ModelSpec, s: MlxSettings) -> Resolved:
    labels = []
    max_tokens = s.max_tokens
    if max_tokens is None:
        max_tokens = SERVER_MAX_TOKENS if s.program.endswith("server") else GENERATE_MAX_TOKENS
    if max_tokens < 0:
        raise OomkitError("--max-tokens must not be negative (mlx_lm's -1, no limit, has no end to size)")
    if s.batch < 1:
        raise OomkitError("batch must be at least 1")
    if s.prefill_step_size < 1:
        raise OomkitError("--prefill-step-size must be positive")
    if s.kv_bits is not None and s.kv_bits not in (2, 3, 4, 5, 6, 8):
        raise OomkitError(f"--kv-bits {s.kv_bits}: mx.quantize takes 2, 3, 4, 5, 6 or 8 bits")
    if s.q_bits is not None and s.q_bits not in (2, 3, 4, 5, 6, 8):
        raise OomkitError(f"--q-bits {s.q_bits}: mx.quantize takes 2, 3, 4, 5, 6 or 8 bits")
    if s.max_kv_size is not None and s.max_kv_size < 1:
        raise OomkitError("--max-kv-size must be positive")
    if s.prompt_tokens is not None:
        if s.prompt_tokens < 1:
            raise OomkitError("the prompt needs at least one token")
        prompt = s.prompt_tokens
        if s.context_length is not None:
            max_tokens = s.context_length - prompt
            if max_tokens < 0:
                raise OomkitError(f"context {s.context_length} is shorter than the prompt ({prompt})")
    else:
        total = s.context_length or spec.n_ctx_train
        if not total:
            raise OomkitError(f"{spec.name}: the model declares no trained context; give --ctx")
        if s.context_length is None:
            labels.append(f"no --ctx given: prompt + generated tokens = the trained context ({total})")
        if total <= max_tokens:
            max_tokens = total - 1
        prompt = total - max_tokens
    dtype = checkpoint_dtype(spec)
    return Resolved(prompt=prompt, max_tokens=max_tokens, total=prompt + max_tokens, dtype=dtype,
                    dtype_bytes=DTYPE_BYTES[dtype],
                    updates=tuple(updates_for(prompt, max_tokens, s.prefill_step_size)), labels=tuple(labels))


# ---------------------------------------------------------------------------------------------------------
# The cache per layer


@dataclass(frozen=True)
class LayerCache:
    index: int
    kind: str
    cls: str  # KVCache | RotatingKVCache | QuantizedKVCache | ArraysCache | none
    tokens: int  # buffer length (tokens) at the end
    k_bytes: int  # the K buffer (all of its parts), batch included
    v_bytes: int
    state_bytes: int = 0  # ArraysCache: conv + recurrent state
    transient: int = 0  # the largest extra bytes while the buffer grows (old + new alive)
    quantized_from: int | None = None

    @property
    def nbytes(self) -> int:
        return self.k_bytes + self.v_bytes + self.state_bytes


def _kv_dims(layer: LayerSpec) -> tuple[int, int, int]:
    """(heads, K width, V width) as mlx-lm caches them. MLA (models/deepseek_v3.py DeepseekV3Attention): the
    latent kv_lora_rank as keys and the rope part k_pe as values, one head."""
    a = layer.attention
    if a.kv_lora_rank:
        return 1, a.kv_lora_rank, a.qk_rope_head_dim
    return a.n_kv_heads, a.head_dim_k, a.head_dim_v


def _quant_row(width: int, bits: int, group: int, dtype_bytes: int) -> int:
    """Bytes of one row of `width` values after mx.quantize (affine): uint32 words of 32/bits values, plus a scale
    and a bias per group in the input dtype (QuantizedKVCache.update_and_fetch init_quant: dim // el_per_int uint32,
    dim // group_size scales and biases)."""
    return width * bits // 8 + 2 * (width // group) * dtype_bytes


def layer_caches(spec: ModelSpec, s: MlxSettings, r: Resolved) -> tuple[list[LayerCache], list[str]]:
    """cache.py make_prompt_cache: the model's own make_cache when it has one, else a KVCache per layer (a
    RotatingKVCache(max_kv_size, keep=4) with --max-kv-size)."""
    notes: list[str] = []
    B, dt = s.batch, r.dtype_bytes
    trunk = spec.layers[: spec.n_layers - spec.n_nextn_layers]
    has_make_cache = spec.architecture in MAKE_CACHE_ARCHS or any(layer.recurrent is not None for layer in trunk)
    if s.max_kv_size is not None and has_make_cache:
        notes.append("--max-kv-size is ignored: this model builds its own cache (make_cache)")
    rotating_all = s.max_kv_size is not None and not has_make_cache
    upd = list(r.updates)
    quant_at = None
    if s.kv_bits is not None:
        quant_at = s.quantized_kv_start
    out: list[LayerCache] = []
    sims: dict[tuple, Sim] = {}
    for layer in trunk:
        kind = layer.kind.value
        if layer.kind is LayerKind.NONE or layer.kv_source is not None:
            out.append(LayerCache(layer.index, "none", "none", 0, 0, 0))
            continue
        if layer.attention is None:
            st = layer.recurrent
            if st is None:
                out.append(LayerCache(layer.index, "none", "none", 0, 0, 0))
                continue
            # models/qwen3_next.py Qwen3NextGatedDeltaNet: ArraysCache(size=2): conv state (B, kernel - 1, conv_dim)
            # in the input dtype, recurrent state float32 (models/gated_delta.py: mx.zeros(..., dtype=float32))
            conv = B * (st.d_conv - 1) * (st.d_inner + 2 * st.n_group * st.d_state) * dt
            ssm = B * st.ssm * 4
            out.append(LayerCache(layer.index, "recurrent", "ArraysCache", 0, 0, 0, state_bytes=conv + ssm))
            continue
        heads, kw, vw = _kv_dims(layer)
        window = layer.attention.window if layer.kind is LayerKind.SLIDING else None
        rotating = window if (window and spec.architecture in ROTATING_ARCHS) else None
        if rotating_all:
            rotating = s.max_kv_size
        keep = 4 if rotating_all else 0
        if rotating:
            if quant_at is not None and max(r.total, 0) >= quant_at:
                raise OomkitError("RotatingKVCache Quantization NYI (mlx-lm cache.py RotatingKVCache.to_quantized): "
                                  "--kv-bits cannot quantize a rotating cache (--max-kv-size or sliding layers)")
            key = ("rot", rotating, keep)
            if key not in sims:
                sims[key] = simulate_rotating(upd, rotating, keep)
            sim = sims[key]
            cls = "RotatingKVCache"
        else:
            key = ("kv", quant_at)
            if key not in sims:
                sims[key] = simulate_kv(upd, quant_at)
            sim = sims[key]
            cls = "KVCache"
        if layer.kind is LayerKind.CHUNKED:
            notes.append("chunked-attention layers (ChunkedKVCache) sized as a KVCache: an upper bound")
        if sim.quantized_from is not None and cls == "KVCache":
            bits, g = s.kv_bits, s.kv_group_size
            if kw % g or vw % g:
                raise OomkitError(f"--kv-group-size {g} does not divide the head sizes {kw}/{vw}")
            kb = B * heads * sim.capacity * _quant_row(kw, bits, g, dt)
            vb = B * heads * sim.capacity * _quant_row(vw, bits, g, dt)
            cls = "QuantizedKVCache"
        else:
            kb = B * heads * sim.capacity * kw * dt
            vb = B * heads * sim.capacity * vw * dt
        per_tok = B * heads * (kw + vw) * dt
        trans = max(sim.transient - sim.capacity, 0) * per_tok
        out.append(LayerCache(layer.index, kind, cls, sim.capacity, kb, vb, transient=trans,
                              quantized_from=sim.quantized_from if cls == "QuantizedKVCache" else None))
    return out, sorted(set(notes))


# ---------------------------------------------------------------------------------------------------------
# Weights


_NOT_QUANTIZED = ("norm.weight", "ssm_conv1d.weight", "ssm_a", "ssm_d", "ssm_dt.bias", "attn_sinks", "exp_probs_b",
                  ".bias")


def tensor_bytes(spec: ModelSpec, s: MlxSettings, r: Resolved) -> list[tuple[TensorSpec, int]]:
    """Bytes of each weight as mlx-lm holds it.

    q_bits (an mlx_lm.convert -q model): utils.py quantize_model quantizes every module with `to_quantized`
    (Linear, Embedding, SwitchLinear experts) whose input width divides by the group size, mode "affine": packed
    uint32 data of bits/32 per value plus a scale and a bias per group in the model dtype; MoE routers at 8 bits
    (the models' quant_predicate, e.g. qwen3_moe.py `mlp.gate` -> bits 8, gpt_oss.py `router`). Norms, biases and
    conv weights stay in the dtype. Without q_bits: float checkpoints in their dtype, others as stored."""
    n_trunk = spec.n_layers - spec.n_nextn_layers
    out = []
    fmt = _DTYPE_ALIASES.get(spec.weights.format.lower(), spec.weights.format.lower())
    plain = fmt in DTYPE_BYTES
    for t in spec.weights.tensors:
        if t.layer is not None and t.layer >= n_trunk:
            continue  # MTP / next-n blocks: models' sanitize() drops them (e.g. qwen3_next.py "mtp.")
        if s.q_bits is not None and len(t.shape) >= 2 and not t.name.endswith(_NOT_QUANTIZED):
            in_dim = t.shape[0]
            bits = 8 if t.name.endswith("ffn_gate_inp.weight") else s.q_bits
            g = 64 if t.name.endswith("ffn_gate_inp.weight") else s.q_group_size
            if in_dim % g == 0:
                rows = t.n_elements // in_dim
                out.append((t, rows * _quant_row(in_dim, bits, g, r.dtype_bytes)))
                continue
        if plain or t.dtype.lower() in DTYPE_BYTES or t.dtype.lower() in _DTYPE_ALIASES:
            out.append((t, t.n_elements * r.dtype_bytes))
        else:
            out.append((t, t.nbytes))
    return out


# ---------------------------------------------------------------------------------------------------------
# The estimate


def estimate(spec: ModelSpec, devices: tuple[Device, ...], s: MlxSettings) -> MemoryEstimate:
    r = resolve(spec, s)
    warnings = list(r.labels)
    caches, notes = layer_caches(spec, s, r)
    warnings += notes
    weights = tensor_bytes(spec, s, r)
    w_total = sum(b for _, b in weights)
    if s.q_bits is None and spec.weights.format.lower() not in DTYPE_BYTES and \
            spec.weights.format.lower() not in _DTYPE_ALIASES:
        warnings.append(f"{spec.weights.format} weights counted as stored; mlx-lm loads MLX safetensors (give "
                        "--q-bits for an mlx_lm.convert -q model)")
    if len(devices) > 1:
        raise OomkitError("MLX runs on one Metal device (unified memory); give one --gpu / --vram")
    dev = devices[0] if devices else None
    ram = dev.memory_bytes if dev else None
    if s.wired_limit_mb:
        working_set = s.wired_limit_mb * MiB
    else:
        working_set = default_working_set(ram) if ram else None
    max_buffer = s.max_buffer_length or (default_max_buffer(ram) if ram else None)

    kv = sum(c.k_bytes + c.v_bytes for c in caches)
    state = sum(c.state_bytes for c in caches)
    # working set of one forward (modelled, not measured): a prefill chunk of S tokens holds two hidden rows plus
    # the larger of attention (Q, K, V, output; mx.fast.scaled_dot_product_attention materialises no T x T scores)
    # and the MLP (gate, up and their product); plus the largest cache buffer's growth (old and new alive during
    # mx.concatenate); the logits of the last token only (generate_step takes logits[:, -1, :])
    S = max(r.updates[: len(r.updates) - r.max_tokens])  # the largest prompt chunk
    B, dt = s.batch, r.dtype_bytes
    resid = B * S * spec.n_embd * dt
    work = 0
    for layer in spec.layers[: spec.n_layers - spec.n_nextn_layers]:
        a = layer.attention
        attn = 0
        if a is not None:
            attn = B * S * (a.n_heads * (a.head_dim_k + a.head_dim_v) + a.n_kv_heads * (a.head_dim_k + a.head_dim_v)) * dt
        f = layer.ffn
        mlp = 3 * B * S * (f.n_ff_expert * f.n_experts_used + f.n_ff_shared if f.is_moe else f.n_ff) * dt
        work = max(work, 2 * resid + max(attn, mlp))
    grow = max((c.transient for c in caches), default=0)
    logits = B * spec.n_vocab * (dt + 4)
    compute = work + grow + logits

    if dev is not None:
        usage = (Usage(id=dev.id if dev.id.startswith("MTL") else "MTL0", name=dev.name, memory_bytes=working_set,
                       weights_bytes=w_total, kv_cache_bytes=kv, recurrent_state_bytes=state, compute_bytes=compute),)
        host = Usage(id="CPU", name="host")
    else:
        usage = ()
        host = Usage(id="CPU", name="unified memory", weights_bytes=w_total, kv_cache_bytes=kv,
                     recurrent_state_bytes=state, compute_bytes=compute)
        warnings.append("no Mac given: give --gpu \"M3 Max 128GB\" (or --vram with the RAM size) to check the fit")

    # the largest single buffers (each must stay under maxBufferLength)
    biggest = sorted(((b, t.name) for t, b in weights), reverse=True)[:1]
    big_kv = max(((max(c.k_bytes, c.v_bytes), f"layer {c.index} {'K' if c.k_bytes >= c.v_bytes else 'V'} cache")
                  for c in caches if c.k_bytes), default=None)
    if max_buffer:
        for b, what in [*biggest, *([big_kv] if big_kv else [])]:
            if b > max_buffer:
                warnings.append(f"{what} is one buffer of {b / GiB:.2f} GiB, over Metal's maximum buffer length "
                                f"{max_buffer / GiB:.2f} GiB: mlx fails with \"[metal::malloc] Attempting to allocate "
                                f"{b} bytes which is greater than the maximum allowed buffer size of {max_buffer} "
                                "bytes\"")
    if working_set and w_total > 0.9 * working_set:
        # generate.py wired_limit prints this warning when the model is over 90% of the working set
        warnings.append(f"[WARNING] Generating with a model that requires {w_total // MiB} MB which is close to the "
                        f"maximum recommended size of {working_set // MiB} MB. This can be slow.")

    view = {
        "program": s.program,
        "prompt_tokens": r.prompt,
        "max_tokens": r.max_tokens,
        "dtype": r.dtype,
        "kv_cache_bytes": kv,
        "kv_cache_tokens": max((c.tokens for c in caches if c.cls != "ArraysCache"), default=0),
        "cache_layers": ", ".join(f"{n} {k}" for k, n in _count(c.cls for c in caches).items()),
        "kv_bytes_by_class": _sum_by((c.cls, c.k_bytes + c.v_bytes) for c in caches if c.k_bytes),
        "arrays_cache_bytes": state,
        "weights_bytes": w_total,
        "largest_weight": biggest[0][1] if biggest else None,
        "largest_weight_bytes": biggest[0][0] if biggest else 0,
        "unified_memory_bytes": ram,
        "recommended_working_set_bytes": working_set,
        "max_buffer_bytes": max_buffer,
        # allocator.cpp MetalAllocator: memory limit min(1.5 x working set, 0.95 x RAM), the cache is trimmed above
        # 0.95 x the working set
        "memory_limit_bytes": int(min(1.5 * working_set, 0.95 * ram)) if working_set and ram else None,
        "quantized_kv_from_token": next((c.quantized_from for c in caches if c.quantized_from), None),
    }
    per_token = None
    if not any(c.cls == "RotatingKVCache" for c in caches) and s.kv_bits is None:
        per_token = sum(B * (h * (kw + vw)) * r.dtype_bytes for h, kw, vw in
                        (_kv_dims(layer) for layer in spec.layers[: spec.n_layers - spec.n_nextn_layers]
                         if layer.attention is not None and layer.kind is not LayerKind.NONE
                         and layer.kv_source is None)) // B or None
    layer_uses = tuple(
        LayerUse(index=c.index, kind=c.kind, device=usage[0].id if usage else "CPU",
                 weights_bytes=sum(b for t, b in weights if t.layer == c.index), kv_bytes=c.k_bytes + c.v_bytes,
                 recurrent_bytes=c.state_bytes, cells=c.tokens or None)
        for c in caches
    )
    eff = s.to_dict()
    eff.update(max_tokens=r.max_tokens, prompt_tokens=r.prompt, context_length=r.total)
    return MemoryEstimate(model=spec, engine="mlx", settings=eff, devices=usage, host=host, engine_view=view,
                          kv_bytes_per_token=per_token, layers=layer_uses, warnings=tuple(warnings))


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        if x != "none":
            out[x] = out.get(x, 0) + 1
    return out


def _sum_by(pairs) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, v in pairs:
        out[k] = out.get(k, 0) + v
    return out


# ---------------------------------------------------------------------------------------------------------
# Command lines: mlx_lm.generate / mlx_lm.server / python -m mlx_lm generate|server ...

# flag -> (field or None to ignore, takes a value, kind)
_GENERATE_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--extra-eos-token": (None, True, ""), "--system-prompt": (None, True, ""), "--prompt": (None, True, ""),
    "-p": (None, True, ""), "--prefill-response": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "-m": ("max_tokens", True, "int"), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--min-p": (None, True, ""), "--top-k": (None, True, ""), "--xtc-probability": (None, True, ""),
    "--xtc-threshold": (None, True, ""), "--min-tokens-to-keep": (None, True, ""), "--seed": (None, True, ""),
    "--ignore-chat-template": (None, False, ""), "--use-default-chat-template": (None, False, ""),
    "--chat-template-config": (None, True, ""), "--verbose": (None, True, ""),
    "--max-kv-size": ("max_kv_size", True, "int"), "--prompt-cache-file": (None, True, ""),
    "--quantize-activations": (None, False, ""), "-qa": (None, False, ""), "--kv-bits": ("kv_bits", True, "int"),
    "--kv-group-size": ("kv_group_size", True, "int"), "--quantized-kv-start": ("quantized_kv_start", True, "int"),
    "--draft-model": (None, True, ""), "--num-draft-tokens": (None, True, ""),
}
_SERVER_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--model": ("model", True, "str"), "--adapter-path": (None, True, ""), "--host": (None, True, ""),
    "--port": (None, True, ""), "--allowed-origins": (None, True, ""), "--draft-model": (None, True, ""),
    "--num-draft-tokens": (None, True, ""), "--trust-remote-code": (None, False, ""),
    "--log-level": (None, True, ""), "--chat-template": (None, True, ""),
    "--use-default-chat-template": (None, False, ""), "--temp": (None, True, ""), "--top-p": (None, True, ""),
    "--top-k": (None, True, ""), "--min-p": (None, True, ""), "--max-tokens": ("max_tokens", True, "int"),
    "--chat-template-args": (None, True, ""), "--decode-concurrency": (None, True, ""),
    "--prompt-concurrency": (None, True, ""), "--prefill-step-size": ("prefill_step_size", True, "int"),
    "--prompt-cache-size": (None, True, ""), "--prompt-cache-bytes": (None, True, ""),
    "--pipeline": (None, False, ""),
}
# oomkit's own (options form and after an engine command): what mlx_lm learns from the model or the machine
_OOMKIT_FLAGS: dict[str, tuple[str | None, bool, str]] = {
    "--prompt-tokens": ("prompt_tokens", True, "int"), "--batch": ("batch", True, "int"),
    "--q-bits": ("q_bits", True, "int"), "--q-group-size": ("q_group_size", True, "int"),
    "--wired-limit-mb": ("wired_limit_mb", True, "int"), "--max-buffer-length": ("max_buffer_length", True, "int"),
    "--prefill-step-size": ("prefill_step_size", True, "int"), "--program": ("program", True, "str"),
}
_SUBCOMMANDS = {"generate": "mlx_lm.generate", "server": "mlx_lm.server", "chat": "mlx_lm.generate"}


def _flags(program: str) -> dict[str, tuple[str | None, bool, str]]:
    base = _SERVER_FLAGS if program.endswith("server") else _GENERATE_FLAGS
    return {**_OOMKIT_FLAGS, **base}


def bits_from_name(model: str | None) -> int | None:
    """mlx-community names carry the bits of mlx_lm.convert -q: "...-4bit", "...-8bit" (a labelled guess)."""
    if not model:
        return None
    m = re.search(r"[-_](\d)-?bits?(?:$|[-_])", model, re.IGNORECASE)
    return int(m.group(1)) if m else None


_QUANT_SUFFIX = re.compile(r"[-_](?:\d-?bits?|bf16|fp16|mxfp4|nvfp4|mxfp8|dwq|awq|dq)(?:[-_].*)?$", re.IGNORECASE)
_ORGS = ("meta-llama", "Qwen", "google", "mistralai", "openai", "deepseek-ai", "microsoft", "ibm-granite",
         "HuggingFaceTB", "allenai", "nvidia", "zai-org", "moonshotai")


def base_model(model: str | None) -> str | None:
    """An mlx-community conversion ("mlx-community/Qwen3-8B-4bit") -> its base model in the catalog
    ("Qwen/Qwen3-8B"), so it resolves offline; the repo name is kept when the catalog does not know the base."""
    from pathlib import Path

    if not model or "/" not in model or Path(model).expanduser().exists():
        return model
    org, name = model.split("/", 1)
    if org.lower() != "mlx-community":
        return model
    from ..model import catalog

    base = _QUANT_SUFFIX.sub("", name)
    for cand in (base, *(f"{o}/{base}" for o in _ORGS)):
        entry = catalog.lookup(cand)
        if entry is not None:
            return entry.hf_id
    return model


def parse_args(argv: list[str], env: dict[str, str] | None = None, program: str | None = None
               ) -> tuple[str | None, str | None, MlxSettings]:
    args = list(argv)
    if program is None:
        program = "mlx_lm.generate"
        if args and args[0] in _SUBCOMMANDS:  # python -m mlx_lm generate ... / mlx_lm server ...
            program = _SUBCOMMANDS[args.pop(0)]
    flags = _flags(program)
    opts: dict[str, Any] = {"program": program}
    model = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in flags:
            raise OomkitError(f"{program}: error: unrecognized arguments: {arg}")
        fld, takes, kind = flags[name]
        value = None
        if takes:
            value, i = flag_value(args, i, inline if eq else None,
                                  f"{program}: error: argument {name}: expected one argument")
        i += 1
        if fld is None:
            continue
        if fld == "model":
            model = value
        elif kind == "int":
            try:
                opts[fld] = int(value)
            except ValueError:
                raise OomkitError(f"{program}: error: argument {name}: invalid int value: {value!r}") from None
        else:
            opts[fld] = value
    if "q_bits" not in opts:
        bits = bits_from_name(model)
        if bits:
            opts["q_bits"] = bits
    return base_model(model), None, MlxSettings(**opts)


def flag_takes_value(name: str, following: str | None) -> bool:
    spec = {**_GENERATE_FLAGS, **_SERVER_FLAGS, **_OOMKIT_FLAGS}.get(name.partition("=")[0])
    return bool(spec and spec[1])


# mlx-lm loads MLX safetensors as published (float weights as the config says; an MLX-quantized model's bits
# come from --q-bits or the repo name): no default weight format.
ENGINE = EngineModule(
    "mlx", MlxSettings, estimate, parse_args, flag_takes_value,
    context_field="context_length", neutral=NEUTRAL,
    aliases=("mlx-lm", "mlx_lm"),
    programs={"mlx_lm.server": "mlx_lm.server", "mlx_lm.generate": "mlx_lm.generate", "mlx_lm": None},
    python_modules={"mlx_lm.server": "mlx_lm.server", "mlx_lm.generate": "mlx_lm.generate", "mlx_lm": None},
    newest=NEWEST, with_context_fn=lambda s, n: replace(s, context_length=n, prompt_tokens=None),
)
