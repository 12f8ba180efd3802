"""The cache, per layer: the class cache.py make_prompt_cache gives each layer (KVCache, RotatingKVCache,
QuantizedKVCache, ArraysCache) and the exact buffer sizes it reaches for the updates generate_step makes."""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import OomkitError
from ...model.archs import refuse_llamacpp_only_caches
from ...model.spec import LayerKind, LayerSpec, ModelSpec
from ...units import round_up
from .quantize import quant_row
from .settings import ERAS, MlxSettings, Resolved, parse_version

# cache.py KVCache.step / RotatingKVCache.step / QuantizedKVCache.step: buffers grow 256 tokens at a time
STEP = 256

# Architectures (oomkit's names: hf_config.ARCH_BY_MODEL_TYPE of the model_type, after mlx-lm's
# utils.py MODEL_REMAPPING, e.g. mistral -> llama) whose mlx-lm model file defines make_cache, so that
# cache.py make_prompt_cache uses it and ignores --max-kv-size (every `def make_cache` in mlx_lm/models of 0.32.0).
MAKE_CACHE_ARCHS = frozenset({
    "afm7", "afmoe", "baichuan_m1", "bailing_moe_linear", "cohere2", "deepseek_v32", "exaone4", "exaone_moe",
    "falcon-h1", "gemma3", "gemma3n", "gemma4", "gemma4_text", "gpt-oss", "granitehybrid", "iquestloopcoder",
    "jamba", "kimi_linear", "laguna", "lfm2", "lfm2-vl", "lfm2_moe", "llama", "llama4", "longcat_flash",
    "longcat_flash_ngram", "mamba", "mamba2", "mellum", "mimo_v2_flash", "ministral3", "nemotron-nas",
    "nemotron_h", "nemotron_h_moe", "olmo3", "plamo2", "qwen35", "qwen35moe", "qwen3next", "recurrent_gemma", "rwkv7", "step3p5",
})
# ... of which these give sliding layers a RotatingKVCache(max_size=sliding_window) (models/gemma3_text.py,
# gpt_oss.py, cohere2.py, exaone4.py, olmo3.py, gemma3n.py, gemma4_text.py, mimo_v2_flash.py, afmoe.py,
# step3p5.py, laguna.py, mellum.py, ministral3.py, baichuan_m1.py, exaone_moe.py). models/llama.py windows only the
# layers its config lists in `layer_types`: a Mistral v0.1 config lists none, so its sliding_window is ignored and
# every token is cached; models/gemma2.py has no make_cache at all.
ROTATING_ARCHS = frozenset({"gemma3", "gemma3n", "gemma4", "gemma4_text", "gpt-oss", "cohere2", "exaone4",
                            "exaone_moe", "olmo3", "mimo_v2_flash", "afmoe", "step3p5", "laguna", "mellum",
                            "ministral3", "baichuan_m1"})


# ---------------------------------------------------------------------------------------------------------
# Cache simulation: the exact buffer sizes cache.py reaches for a sequence of updates


@dataclass(frozen=True)
class Sim:
    """Tokens of buffer a cache holds when generation ends, and the largest concat transient (old + new tokens)."""

    capacity: int
    transient: int
    offset: int
    quantized_from: int | None = None  # the offset at which a KVCache became a QuantizedKVCache
    prefill_peak: int = 0  # RotatingKVCache: the most tokens its buffer holds between prompt chunks
    float_capacity: int = 0  # QuantizedKVCache: the float buffer's tokens when to_quantized converted it


def simulate_kv(updates: list[int], quantize_at: int | None = None, first_check: int = 0,
                strict: bool = False) -> Sim:
    """cache.py KVCache.update_and_fetch (and QuantizedKVCache's, which grows the same way): when an update does not
    fit, the buffer is cut to the used length if that is not a multiple of 256 and grows by ceil(S / 256) * 256.
    quantize_at: generate.py maybe_quantize_kv_cache converts the cache after the first call that leaves
    offset >= quantized_kv_start (offset > it before mlx-lm 0.28.1: strict); to_quantized quantizes the whole buffer,
    unused tail included. first_check: the index of the first call after which it is asked (before mlx-lm 0.20.4 the
    first _step, the prefill loop's chunks never convert: settings.ERAS "quantize_in_prefill")."""
    cap = prev = transient = 0
    qfrom = None
    fcap = 0
    if quantize_at is not None and strict:
        quantize_at += 1  # offset > start: the first offset that converts is start + 1
    i = 0
    n = len(updates)
    while i < n:
        S = updates[i]
        if S == 1 and cap:
            # a run of single-token steps: grows by one step each time the buffer is full
            run = 1
            while i + run < n and updates[i + run] == 1:
                run += 1
            if quantize_at is not None and qfrom is None and prev + run >= quantize_at and i >= first_check:
                run = max(quantize_at - prev, 1)  # stop where the cache turns quantized
            end = prev + run
            if end > cap:
                grow = round_up(end - cap, STEP)
                cap += grow
                transient = max(transient, 2 * cap - STEP)  # the last concatenate: old + new buffer
            prev = end
            i += run
        else:
            if not cap or prev + S > cap:
                chunk = round_up(S, STEP)
                if cap:
                    if prev % STEP:
                        cap = prev
                    transient = max(transient, 2 * cap + chunk)
                    cap += chunk
                else:
                    cap = chunk
            prev += S
            i += 1
        if quantize_at is not None and qfrom is None and prev >= quantize_at and i > first_check:
            qfrom, fcap = prev, cap
    return Sim(capacity=cap, transient=transient, offset=prev, quantized_from=qfrom, float_capacity=fcap)


def simulate_rotating(updates: list[int], max_size: int, keep: int = 0) -> Sim:
    """cache.py RotatingKVCache: multi-token updates concatenate (_update_concat: the buffer becomes
    min(used, max_size - 1) + S tokens, so a prefill chunk may exceed max_size), single tokens go in place
    (_update_in_place: grow by min(256, max_size - offset) while below max_size, trim back to max_size, rotate)."""
    size = idx = offset = transient = peak = 0
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
            peak = max(peak, size)
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
    return Sim(capacity=size, transient=transient, offset=offset, prefill_peak=peak)


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
    # RotatingKVCache: bytes beyond the end-of-generation buffer that the layer holds between prompt chunks
    # (_update_concat leaves min(used, max_size - 1) + S tokens until the next update), all such layers at once
    prefill_extra: int = 0

    @property
    def nbytes(self) -> int:
        return self.k_bytes + self.v_bytes + self.state_bytes


# MLA models (config.json's model_type, after utils.py MODEL_REMAPPING: kimi_k2 and joyai_llm_flash -> deepseek_v3)
# and the first mlx-lm release whose attention caches the compressed latent: `kv_latent, k_pe =
# cache.update_and_fetch(kv_latent, k_pe)`, kv_lora_rank + qk_rope_head_dim a token, one head. Before it each model
# file decompresses with kv_b_proj and caches the per-head keys (qk_nope_head_dim + qk_rope_head_dim) and values
# (v_head_dim): `keys, values = cache.update_and_fetch(mx.concatenate([k_nope, k_pe], axis=-1), values)`.
#   glm4_moe_lite       PR #780 (14237020, first in v0.30.5; keys = concat(latent, k_pe), values zero-width there,
#                       the same bytes; the kv_latent / k_pe pair from v0.30.6)
#   deepseek_v3, v32    PR #839 "DSV3 MLA" (f18526f8, v0.30.6); kimi_vl and kimi_k25 run models/deepseek_v3's
#                       model, glm_moe_dsa models/deepseek_v32's (added in v0.30.7)
#   kimi_linear         PR #853 (fd6959dc, v0.30.7)
#   longcat_flash       PR #868 (ca0d1c96, v0.30.7; longcat_flash_ngram subclasses it)
# models/deepseek_v2.py, minicpm3.py and youtu_llm.py cache the per-head keys and values in every release to main at
# d78bf58e (2026-08-22). A model_type named in neither (or none read) keeps the latent.
MLA_LATENT_FROM = {
    "glm4_moe_lite": (0, 30, 5),
    "deepseek_v3": (0, 30, 6), "kimi_k2": (0, 30, 6), "joyai_llm_flash": (0, 30, 6), "kimi_vl": (0, 30, 6),
    "kimi_k25": (0, 30, 6), "deepseek_v32": (0, 30, 6), "glm_moe_dsa": (0, 30, 6),
    "kimi_linear": (0, 30, 7), "longcat_flash": (0, 30, 7), "longcat_flash_ngram": (0, 30, 7),
}
MLA_PER_HEAD = frozenset({"deepseek_v2", "minicpm3", "youtu_llm"})


def latent_cache(spec: ModelSpec, version: tuple[int, int, int]) -> bool:
    """Whether mlx-lm at this release caches an MLA model's latent rather than its decompressed heads
    (MLA_LATENT_FROM); False for a model without MLA."""
    if not any(layer.attention is not None and layer.attention.kv_lora_rank for layer in spec.trunk_layers):
        return False
    model_type = spec.hf_model_type
    if model_type in MLA_PER_HEAD:
        return False
    first = MLA_LATENT_FROM.get(model_type)
    return first is None or version >= first


def kv_dims(layer: LayerSpec, latent: bool = True) -> tuple[int, int, int]:
    """(heads, K width, V width) as mlx-lm caches them. MLA with the latent cache (models/deepseek_v3.py
    DeepseekV3Attention from v0.30.6, latent_cache): the latent kv_lora_rank as keys and the rope part k_pe as
    values, one head; before it, the decompressed heads (n_heads x qk_head_dim keys, n_heads x v_head_dim values)."""
    a = layer.attention
    if a.kv_lora_rank and latent:
        return 1, a.kv_lora_rank, a.qk_rope_head_dim
    return a.n_kv_heads, a.head_dim_k, a.head_dim_v


def layer_caches(spec: ModelSpec, s: MlxSettings, r: Resolved) -> tuple[list[LayerCache], list[str]]:
    """cache.py make_prompt_cache: the model's own make_cache when it has one, else a KVCache per layer (a
    RotatingKVCache(max_kv_size, keep=4) with --max-kv-size, or at the context under lms load)."""
    refuse_llamacpp_only_caches(spec, "MLX")
    notes: list[str] = []
    B, dt = s.batch, r.dtype_bytes
    trunk = spec.trunk_layers
    has_make_cache = spec.architecture in MAKE_CACHE_ARCHS or any(layer.recurrent is not None for layer in trunk)
    # under lms load, mlx-engine's cache cap is the context (server/__main__.py: max_kv_size=args.context_length)
    cap = s.context_length if s.program == "lmstudio" and s.max_kv_size is None else s.max_kv_size
    if s.max_kv_size is not None and has_make_cache:
        notes.append("--max-kv-size is ignored: this model builds its own cache (make_cache)")
    rotating_all = cap is not None and not has_make_cache
    upd = list(r.updates)
    quant_at = None
    version = parse_version(s.engine_version)
    # before mlx-lm 0.20.4 the cache is converted only after a _step call: the first is the prompt's last chunk, the
    # call after the prefill loop's (settings.ERAS "quantize_in_prefill")
    first_check = 0 if ERAS.reached(version, "quantize_in_prefill") else len(upd) - r.max_tokens - 1
    strict = not ERAS.reached(version, "quantize_at_start")
    if s.kv_bits is not None:
        quant_at = s.quantized_kv_start
    latent = latent_cache(spec, version)
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
        heads, kw, vw = kv_dims(layer, latent)
        window = layer.attention.window if layer.kind is LayerKind.SLIDING else None
        rotating = window if (window and spec.architecture in ROTATING_ARCHS) else None
        if rotating_all:
            rotating = cap
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
                sims[key] = simulate_kv(upd, quant_at, first_check, strict)
            sim = sims[key]
            cls = "KVCache"
        if layer.kind is LayerKind.CHUNKED:
            notes.append("chunked-attention layers (ChunkedKVCache) sized as a KVCache: an upper bound")
        if sim.quantized_from is not None and cls == "KVCache":
            bits, g = s.kv_bits, s.kv_group_size
            if kw % g or vw % g:
                raise OomkitError(f"--kv-group-size {g} does not divide the head sizes {kw}/{vw}")
            kb = B * heads * sim.capacity * quant_row(kw, bits, g, dt)
            vb = B * heads * sim.capacity * quant_row(vw, bits, g, dt)
            cls = "QuantizedKVCache"
        else:
            kb = B * heads * sim.capacity * kw * dt
            vb = B * heads * sim.capacity * vw * dt
        per_tok = B * heads * (kw + vw) * dt
        held = max(sim.prefill_peak, sim.capacity)
        trans = max(sim.transient - held, 0) * per_tok
        extra = (held - sim.capacity) * per_tok
        if cls == "QuantizedKVCache":
            # the float buffer to_quantized converts is held until the conversion, all layers' at once (the prefill
            # loop fills them first): what it holds beyond the quantized buffer's end size
            extra = max(sim.float_capacity * per_tok - kb - vb, 0)
        out.append(LayerCache(layer.index, kind, cls, sim.capacity, kb, vb, transient=trans,
                              quantized_from=sim.quantized_from if cls == "QuantizedKVCache" else None,
                              prefill_extra=extra))
    return out, sorted(set(notes))
