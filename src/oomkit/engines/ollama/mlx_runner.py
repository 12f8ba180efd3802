"""Ollama's MLX runner (x/mlxrunner): the library tags of MLX builds ("qwen3.6:35b-a3b-coding-nvfp4",
"qwen3.8:27b-mxfp8") and the one memory check it makes before it starts.

Read at ollama/ollama fb3076099 (2026-08-21); x/mlxrunner first shipped in v0.16.0 (44bdd9a2e, "Add MLX runner with
GLM4-MoE-Lite model support", 2026-02-10), its load check in v0.18.2 (bbbad9768, "sched: Model eviction for MLX").

- x/mlxrunner/client.go NewClient: the runner's size is the manifest's TotalTensorSize (x/imagegen/manifest
  manifest.go: the bytes of every "application/vnd.ollama.image.tensor" layer, each a safetensors blob).
  checkPlatformSupport: macOS on arm64 only; Linux and Windows pass (an MLX CUDA library must be present: "MLX not
  available: failed to load MLX dynamic library", ollama#16340).
- client.go Load: the first GPU only. available = FreeMemory - (MinimumMemory() + OLLAMA_GPU_OVERHEAD) (0 when the
  overhead is larger; ml/device.go MinimumMemory: 512 MiB on Metal, 457 MiB elsewhere); modelSize > available is
  refused "model requires X but only Y are available (after Z overhead)", each figure format.HumanBytes2. Nothing
  else is checked: the KV cache is not in modelSize.
- After load (runner.go configureWiredMemory, v0.32.4+, 9eef4a719): the wired limit is min(active, recommendedMaxWorkingSet),
  and server.go reports status.Memory = mlx.ActiveMemory() + mlx.CacheMemory(), which `ollama ps` shows as the size.
- The KV cache grows as tokens arrive (x/mlxrunner/cache/kvcache.go KVCache: step 256, buffers (1, H, steps*256, D)
  in the activations' dtype; rotating.go RotatingKVCache: step 256 up to maxSize; recurrent.go RecurrentCache: the
  conv tail in the input dtype and the delta state in float32), as mlx-lm's cache.py does.

What x/create writes for `ollama create --quantize Q` (x/create/create.go GetTensorQuantization, x/quant/quant.go):
see tensor_quantization and QUANT.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...memory import Device, MemoryEstimate, Usage
from ...model.names import OLLAMA_MLX_FORMAT
from ...model.spec import LayerKind, ModelSpec, TensorSpec
from ...units import MiB, round_up
from ..llamacpp.backends import is_metal, metal_devices
from ..mlx.kv import kv_dims
from ..mlx.layout import _scores_bytes, _scores_tokens
from .launch import default_num_ctx
from .memory import human_bytes2
from .settings import OllamaSettings, env_uint, parse_version

# x/quant/quant.go byType: (group size, bits, mode)
QUANT = {
    "nvfp4": (16, 4, "nvfp4"),
    "mxfp4": (32, 4, "mxfp4"),
    "int4": (64, 4, "affine"),
    "mxfp8": (32, 8, "mxfp8"),
    "int8": (64, 8, "affine"),
}

# The quantizations a library tag's last word names: x/create/client/create.go --quantize (quant.Canonical: int4,
# int8, nvfp4, mxfp4, mxfp8). "-mlx" is an MLX checkpoint imported as it was quantized (its config.json's own
# "quantization", ollama#17050), which the tag does not say: not sized here.
TAG_QUANT = {"nvfp4": "nvfp4", "mxfp4": "mxfp4", "mxfp8": "mxfp8", "int4": "int4", "int8": "int8"}

# ml/device.go DeviceInfo.MinimumMemory
MINIMUM_MEMORY_METAL = 512 * MiB
MINIMUM_MEMORY_OTHER = 457 * MiB

# x/mlxrunner/cache/kvcache.go NewKVCache / rotating.go NewRotatingKVCache: step 256
KV_STEP = 256

# x/mlxrunner/pipeline.go prefillChunkSize: the prompt is run 2 << 10 tokens a forward (read at fb3076099)
PREFILL_CHUNK = 2 << 10

# The KV cache types the runner offers: none. OLLAMA_KV_CACHE_TYPE (envconfig.KvCacheType) is read by no file under
# x/ (fb3076099: llm/server.go's GGUF runners only); kvcache.go appendKV allocates mlx.Zeros(keys.DType(), ...), the
# activations' dtype. "" and "f16" are the setting's default, which the GGUF runners also read as f16.
KV_TYPES_ACCEPTED = ("", "f16")

# x/create/qwen35.go: architectures whose import keeps the gated-delta net's low-rank in_proj_a / in_proj_b at source
# precision (create.go's registry: Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration, Qwen3_5Moe*)
_QWEN35 = frozenset({"qwen35", "qwen35moe"})


def tag_quantization(tag: str) -> str | None:
    """The x/create quantization an Ollama library tag's last word names ("35b-a3b-coding-nvfp4" -> "nvfp4");
    None for "-mlx" (imported as quantized) and any other tag."""
    return TAG_QUANT.get(tag.rsplit("-", 1)[-1].lower())


def _eight_bit(base: str) -> str:
    """x/create/quantpolicy.go eightBit: int8 for the affine family, mxfp8 for the fp4 family."""
    return "int8" if base in ("int4", "int8") else "mxfp8"


def _aligned(t: TensorSpec, q: str) -> bool:
    """create.go isAligned: the last dimension (GGUF ne0) divisible by the group size (16 nvfp4, 64 int4/int8, 32
    else)."""
    return t.shape[0] % QUANT[q][0] == 0


def tensor_quantization(t: TensorSpec, quantize: str, architecture: str) -> str:
    """The type x/create gives one tensor ("" = source precision), named the GGUF way, for --quantize `quantize`.

    create.go GetTensorQuantization (fb3076099; the lm_head rule from 83d4311ff, v0.32.4 -- before it nvfp4 /
    mxfp4 / mxfp8 kept lm_head at source, but the library's qwen3.6:35b-a3b-coding-nvfp4 printed 20.4 GiB on
    0.32.1, which the 8-bit head gives and a bf16 head (20.9 GiB) does not; vision towers at source in qwen35.go
    through v0.32.6, in every policy from 8713570d3, v0.32.7): ShouldQuantize skips
    embeddings, norms and biases; only 2-D weights and stacked experts (3-D) of >= 1024 elements; routing gates
    (mlp.gate, shared_expert_gate) at source; lm_head at the 8-bit type of the family (int8 / mxfp8) where aligned,
    else source; vision towers at source; a tensor whose last dimension the group size does not divide at source;
    k_proj, v_proj and down_proj promoted to the 8-bit type for int4 (experts too) and nvfp4 / mxfp4 (not experts:
    "fp4 skips experts since their kernels take a single mode"). qwen35.go keeps in_proj_a / in_proj_b at source."""
    name = t.name
    if name == "output.weight":
        e = _eight_bit(quantize)
        return e if _aligned(t, e) else ""
    if "embd" in name or "norm" in name or not name.endswith(".weight"):
        return ""
    if len(t.shape) < 2 or t.n_elements < 1024:
        return ""
    # the conv1d of a gated-delta net / Mamba is 3-D in the checkpoint; ffn_gate_inp(_shexp) are the routing gates
    if "ssm_conv1d" in name or "ffn_gate_inp" in name:
        return ""
    if architecture in _QWEN35 and ("ssm_alpha" in name or "ssm_beta" in name):
        return ""
    if not _aligned(t, quantize):
        return ""
    stacked = "_exps" in name
    if quantize == "int4" or (quantize in ("nvfp4", "mxfp4") and not stacked):
        if ".attn_k." in name or ".attn_v." in name or ".ffn_down" in name:
            e = _eight_bit(quantize)
            if _aligned(t, e):
                return e
    return quantize


def quantized_bytes(n_elements: int, q: str, source_bytes: int = 2) -> int:
    """Bytes of one tensor after mx.quantize in mode q (what x/create saves: weight, scale, bias): packed values of
    `bits` each; a scale per group, e4m3 (nvfp4) or e8m0 (mxfp4, mxfp8) one byte, affine a scale and a bias in the
    source dtype."""
    group, bits, mode = QUANT[q]
    per_group = 2 * source_bytes if mode == "affine" else 1
    return n_elements * bits // 8 + (n_elements // group) * per_group


@dataclass(frozen=True)
class TensorSize:
    total: int  # TotalTensorSize: every tensor layer of the manifest
    text: int  # the decoder's tensors (the MTP / nextn layer included: the import keeps it, the runner frees it)
    towers: int  # vision / audio towers, at source precision
    by_type: dict[str, int]


def total_tensor_size(spec: ModelSpec, quantize: str, source_bytes: int = 2) -> TensorSize:
    """The manifest's TotalTensorSize of `ollama create --quantize <quantize>` from the model's bf16 checkpoint:
    each tensor as tensor_quantization types it, the towers (isVision / isAudioTower) at source precision. The
    safetensors headers of the blobs (a few hundred bytes a tensor) are left out."""
    if quantize not in QUANT:
        raise ValueError(f"unknown MLX quantization {quantize!r}: one of {', '.join(QUANT)}")
    by_type: dict[str, int] = {}
    text = 0
    for t in spec.weights.tensors:
        q = tensor_quantization(t, quantize, spec.architecture)
        b = t.n_elements * source_bytes if q == "" else quantized_bytes(t.n_elements, q, source_bytes)
        by_type[q or "source"] = by_type.get(q or "source", 0) + b
        text += b
    towers = sum(tw.params for tw in spec.towers) * source_bytes
    return TensorSize(text + towers, text, towers, by_type)


@dataclass(frozen=True)
class LoadCheck:
    model_size: int
    free: int
    overhead: int
    available: int

    @property
    def fits(self) -> bool:
        return self.model_size <= self.available

    @property
    def error(self) -> str | None:
        """client.go Load's refusal, as Ollama prints it; None when it loads."""
        if self.fits:
            return None
        return (f"model requires {human_bytes2(self.model_size)} but only {human_bytes2(self.available)} are "
                f"available (after {human_bytes2(self.overhead)} overhead)")


def load_check(model_size: int, free: int, metal: bool, gpu_overhead: int = 0) -> LoadCheck:
    """x/mlxrunner/client.go Load (v0.18.2+): the first GPU's free memory less MinimumMemory() + OLLAMA_GPU_OVERHEAD
    against TotalTensorSize."""
    overhead = (MINIMUM_MEMORY_METAL if metal else MINIMUM_MEMORY_OTHER) + gpu_overhead
    available = free - overhead if free > overhead else 0
    return LoadCheck(model_size, free, overhead, available)


def kv_cache_bytes(spec: ModelSpec, tokens: int, dtype_bytes: int = 2) -> int:
    """The runner's caches after `tokens` tokens of one sequence: full-attention layers a KVCache of
    round_up(tokens, 256) slots (kvcache.go appendKV grows by whole steps), sliding layers a RotatingKVCache of
    min(round_up(tokens, 256), window), recurrent layers the conv tail (input dtype) and the delta state (float32;
    recurrent.go Get). The MTP layer's cache is left out (a draft cache exists only with a draft model)."""
    total = 0
    for layer in spec.trunk_layers:
        if layer.kind is LayerKind.NONE or layer.kv_source is not None:
            continue
        if layer.attention is None:
            st = layer.recurrent
            if st is not None:
                total += (st.d_conv - 1) * (st.d_inner + 2 * st.n_group * st.d_state) * dtype_bytes + st.ssm * 4
            continue
        heads, kw, vw = kv_dims(layer)
        slots = round_up(max(tokens, 1), KV_STEP)
        if layer.kind is LayerKind.SLIDING and layer.attention.window:
            slots = min(slots, layer.attention.window)
        total += heads * (kw + vw) * slots * dtype_bytes
    return total


def prefill_chunks(num_ctx: int) -> list[int]:
    """The forwards of a prompt that fills num_ctx: pipeline.go prefill runs `total - 1` tokens (one is left for
    decode to seed from) min(prefillChunkSize, remaining) at a time."""
    n = max(num_ctx - 1, 1)
    full, rest = divmod(n, PREFILL_CHUNK)
    return [PREFILL_CHUNK] * full + ([rest] if rest else [])


def compute_bytes(spec: ModelSpec, num_ctx: int, dtype_bytes: int = 2) -> int:
    """What one prompt forward holds beyond the weights and caches, at its largest (the runner calls mlx.ClearCache()
    after every chunk, pipeline.go prefill, so MLX's buffer cache does not carry one chunk's buffers to the next).

    - A layer's working set at S = PREFILL_CHUNK tokens: two hidden rows and the larger of attention (Q, K, V and
      its output) and the MLP (gate, up and their product; the routed experts' of S tokens for MoE), as MLX's own
      engine counts it (engines/mlx/layout.py compute_bytes).
    - The attention scores where the fast SDPA takes its unfused fallback (x/models/nn/sdpa.go
      ScaledDotProductAttention calls mlx.FastScaledDotProductAttention; MLX at Ollama's MLX_VERSION 27fec909a,
      backend/metal/scaled_dot_product_attention.cpp use_fallback: a query of more than 8 tokens runs unfused for
      head dims 192 and 256, and for any head dim without a fused kernel): one n_heads x S x L array of the dtype
      and the S x L bool causal mask (engines/mlx/layout.py _scores_bytes), L the keys after the chunk.
    - The growing cache: kvcache.go appendKV concatenates the old keys and values with the next steps of zeros
      (c.keys.Concatenate(2, newKeys)), so the old buffers are alive beside the new ones: one layer's K and V at the
      slots before the last chunk, the largest layer's.
    - No logits over the chunk: prefill discards the forward's hidden state (`_, auxHidden := r.Model.Forward`);
      decode unembeds the last token only (pipeline.go: logits := r.Model.Unembed(hidden)), vocab logits of the
      dtype and their float32 copy for the sampler."""
    chunks = prefill_chunks(num_ctx)
    S = max(chunks)
    dt = dtype_bytes
    resid = S * spec.n_embd * dt
    memo: dict[int | None, int] = {}
    work = 0
    grow = 0
    before_last = round_up(max(sum(chunks) - chunks[-1], 1), KV_STEP)
    for layer in spec.trunk_layers:
        a = layer.attention
        attn = 0
        if a is not None and layer.kind is not LayerKind.NONE and layer.kv_source is None:
            heads, kw, vw = kv_dims(layer)
            slots = before_last if layer.kind is not LayerKind.SLIDING or not a.window else min(before_last, a.window)
            grow = max(grow, heads * (kw + vw) * slots * dt)
            attn = S * (a.n_heads + a.n_kv_heads) * (a.head_dim_k + a.head_dim_v) * dt
            window = a.window if layer.kind is LayerKind.SLIDING and a.window else None
            if window not in memo:
                memo[window] = _scores_tokens(chunks, window, None)[0]
            attn += _scores_bytes(a, 1, memo[window], 0, dt, latent=False)
        f = layer.ffn
        mlp = 0
        if f is not None:
            mlp = 3 * S * (f.n_ff_expert * f.n_experts_used + f.n_ff_shared if f.is_moe else f.n_ff) * dt
        work = max(work, 2 * resid + max(attn, mlp))
    return max(work, spec.n_vocab * (dt + 4)) + grow


# ---------------------------------------------------------------------------------------------------------
# The estimate of an MLX library tag: the runner's tensors, its check, and its caches at num_ctx

# the releases: x/mlxrunner first in v0.16.0 (44bdd9a2e), client.go Load's check from v0.18.2 (bbbad9768)
V_MLX_RUNNER = (0, 16, 0)
V_LOAD_CHECK = (0, 18, 2)

# the weights format a spec carries for an Ollama MLX library tag: "ollama-mlx-nvfp4", ... (model/names.py)
FORMAT_PREFIX = OLLAMA_MLX_FORMAT


def mlx_format(quantize: str) -> str:
    return FORMAT_PREFIX + quantize


def format_quantization(weights_format: str) -> str | None:
    """"ollama-mlx-nvfp4" -> "nvfp4"; None for any other format."""
    if weights_format.lower().startswith(FORMAT_PREFIX):
        q = weights_format[len(FORMAT_PREFIX):].lower()
        return q if q in QUANT else None
    return None


def kv_types_for(spec: ModelSpec) -> tuple[str, ...]:
    """The KV cache types Ollama offers for `spec`: the GGUF runners' three, an MLX build's runner f16 alone."""
    return ("f16",) if format_quantization(spec.weights.format) is not None else ("f16", "q8_0", "q4_0")


def estimate_mlx(spec: ModelSpec, devices: tuple[Device, ...], s: OllamaSettings, quantize: str) -> MemoryEstimate:
    """An MLX library tag under Ollama: server/sched.go load starts mlxrunner.NewClient for a model with no GGUF;
    client.go Load checks TotalTensorSize against the first GPU (load_check); the runner then holds the tensors
    (the MTP layer's freed: x/models/qwen3_5 LoadWeights freeTensorKeys "mtp.") and grows its caches as the
    conversation does, up to num_ctx (kv_cache_bytes), which no check covers."""
    v = parse_version(s.engine_version)
    ignored_kv = s.kv_cache_type.strip().lower() not in KV_TYPES_ACCEPTED
    if v < V_MLX_RUNNER:
        raise OomkitError(f"Ollama {s.engine_version} has no MLX runner (x/mlxrunner, first in v0.16.0): an MLX "
                          "library tag does not load")
    devices = metal_devices(devices)
    gpu = devices[0] if devices else None
    metal = gpu is not None and is_metal(gpu)
    size = total_tensor_size(spec, quantize)
    overhead_env = s.gpu_overhead if s.gpu_overhead >= 0 else (env_uint(dict(s.env), "OLLAMA_GPU_OVERHEAD") or 0)
    num_ctx = s.num_ctx or (env_uint(dict(s.env), "OLLAMA_CONTEXT_LENGTH") or 0)
    labels: list[str] = []
    if not num_ctx:
        num_ctx, why = default_num_ctx(v, devices, overhead_env)
        if why:
            labels.append(why)
    if spec.n_ctx_train:
        num_ctx = min(num_ctx, spec.n_ctx_train)
    kv = kv_cache_bytes(spec, num_ctx)
    compute = compute_bytes(spec, num_ctx)
    mtp_size = sum(_one_size(t, quantize, spec.architecture) for t in spec.weights.tensors
                   if t.layer is not None and t.layer >= spec.n_trunk_layers)
    held = size.total - mtp_size
    warnings: list[str] = []
    view: dict[str, Any] = {"runner": "mlx", "quantization": quantize, "total_tensor_size": size.total,
                            "tensor_bytes_by_type": size.by_type, "tower_bytes": size.towers, "num_ctx": num_ctx,
                            "n_ctx": num_ctx, "prefill_chunk": PREFILL_CHUNK, "compute": compute}
    if gpu is not None and v >= V_LOAD_CHECK:
        free = gpu.free_bytes if gpu.free_bytes is not None else gpu.memory_bytes
        if free is not None:
            check = load_check(size.total, free, metal, overhead_env)
            view["load_check"] = {"model_size": check.model_size, "free": free, "overhead": check.overhead,
                                  "available": check.available, "fits": check.fits}
            if check.error:
                warnings.append(f"Ollama refuses to load it (x/mlxrunner/client.go Load): {check.error}")
    if ignored_kv:  # Ollama runs it all the same: the setting is the GGUF runners' only
        warnings.append(f"OLLAMA_KV_CACHE_TYPE={s.kv_cache_type} is ignored by Ollama's MLX runner (no file under x/ "
                        "reads it; its caches take the activations' dtype): the KV cache is counted at 16 bits")
    if gpu is not None and not metal:
        warnings.append("Ollama's MLX runner outside macOS needs Ollama's MLX CUDA library (\"MLX not available: "
                        "failed to load MLX dynamic library\", ollama#16340), and ollama.com may refuse the pull "
                        "(\"412: this model requires macOS\", ollama#16056)")
    labels.append(f"an MLX build: x/create --quantize {quantize} of the model's bf16 checkpoint, "
                  f"TotalTensorSize {human_bytes2(size.total)}; the KV cache grows 256 tokens at a time up to "
                  f"num_ctx {num_ctx} (x/mlxrunner/cache)")
    per_token = kv_cache_bytes(spec, KV_STEP * 2) - kv_cache_bytes(spec, KV_STEP)
    state = kv_cache_bytes(spec, KV_STEP) - per_token
    dev = Usage(id=gpu.id if gpu else "host", name=gpu.name if gpu else "host",
                memory_bytes=gpu.memory_bytes if gpu else None, weights_bytes=held,
                kv_cache_bytes=kv - state, recurrent_state_bytes=state, compute_bytes=compute,
                overhead_bytes=(MINIMUM_MEMORY_METAL if metal else MINIMUM_MEMORY_OTHER) if gpu else 0)
    host = Usage(id="host", name="host")
    return MemoryEstimate(model=_with_tower_label(spec, v), engine="ollama", settings={**s.to_dict(), "num_ctx": num_ctx, "num_parallel": 1},
                          devices=(dev,) if gpu else (), host=host if gpu else replace(dev, id="host"),
                          engine_view=view, kv_bytes_per_token=per_token // KV_STEP,
                          warnings=tuple(warnings), notes=tuple(labels))


# x/models/qwen3_5/vision.go loadVisionWeights, from v0.32.7 (1e85fe8e9, "qwen3_5: image input support"): the
# runner builds the vision tower from the manifest's own safetensors
V_TOWER_LOADED = (0, 32, 7)


def _with_tower_label(spec: ModelSpec, v: tuple[int, ...]) -> ModelSpec:
    """The model's vision-tower note in the MLX build's terms: x/create writes the tower into the build's
    safetensors at source precision (no mmproj file), so TotalTensorSize and these weights count it."""
    if not spec.towers:
        return spec
    size_gib = sum(tw.params for tw in spec.towers) * 2 / 2**30
    if spec.architecture not in _QWEN35:
        loads = "whether this architecture's runner model reads it is not modelled"
    elif v >= V_TOWER_LOADED:
        loads = "the runner loads it with the model (x/models/qwen3_5/vision.go loadVisionWeights, v0.32.7+)"
    else:
        loads = "this release's runner takes no image input (x/models/qwen3_5 loads the tower from v0.32.7)"
    note = (f"vision tower: {size_gib:.2f} GiB at 16 bits, inside the MLX build's safetensors (no mmproj file), "
            f"counted in TotalTensorSize and the weights; {loads}")
    labels = tuple(note if lb.startswith("vision tower:") else lb for lb in spec.labels)
    return replace(spec, labels=labels)


def _one_size(t: TensorSpec, quantize: str, architecture: str) -> int:
    q = tensor_quantization(t, quantize, architecture)
    return t.n_elements * 2 if q == "" else quantized_bytes(t.n_elements, q)
