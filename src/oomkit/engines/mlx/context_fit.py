"""LM Studio's MLX runtime fits the context to the memory itself: `lms load` of an MLX model that mlx-engine loads
with BatchedVisionModelKit gets the context that calculate_context_fit gives, in place of the one asked (-c).

Mirrors lmstudio-ai/mlx-engine mlx_engine/model_kit/batched_vision/context_fit.py as #345 (commit 464fd25,
2026-07-14, "Context length auto fit") wrote it and it stood until #367 (bc4bd41, 2026-08-21, which plans the
prefill step per request and fits at the smallest step: not mirrored here); LM Studio's MLX runtime 1.10.1 logs
this rule (lmstudio-bug-tracker#2191: "Model context auto-fit: family=qwen3_5 ... fitted=152,576").

Which loads it touches (mlx_engine/generate.py load_model): a model whose config.json has vision_config always
loads BatchedVisionModelKit (from #345, at any --parallel); a text model does so only with --parallel 2 or more, no
KV quantization and a cache every layer of which can merge, from #352 (3ff8b81, 2026-07-24; before it, text batches
went to BatchedModelKit, which does not fit). BatchedVisionModelKit._load_model skips the fit for a model that
needs unchunked prefill, and from #355 (c7a963d) when LM Studio's AutoFit toggle is off (on by default).

    fit_batched_vlm_context: a one-token probe of mlx_vlm's make_prompt_cache gives per layer
        KVCache          full KV bytes per token (K + V at the activation dtype)
        RotatingKVCache  bytes per token x (max_size + prefill_step - 1)   (fixed)
        ArraysCache      its state                                       (fixed)
        any other cache class: no fit, the context stays the one asked
      prompt inputs per token: inputs_embeds of one token (hidden x dtype bytes)
      attention scores per token: query heads x prefill step x dtype bytes (none for GPT-OSS's 64-wide heads, which
      MLX 0.32 runs fused)
      baseline: mx.get_active_memory() + mx.get_cache_memory() after the load (the weights, encoder included)
    calculate_context_fit:
      reserve = max(3 GiB, working set // 20); ceiling = working set - reserve
      tokens = max(0, ceiling - baseline - rotating - SSM state) // per-token peak, rounded up to the cache step
      (256), at least 4,096, at most the model's max_position_embeddings
    Families other than gemma4 / qwen3_5 / qwen3_6 ("best effort"): no fit when the model's maximum or the fit is
    4,096 tokens or fewer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.spec import ModelSpec

GiB = 1 << 30
MIN_FITTED_CONTEXT_TOKENS = 4_096  # context_fit.py MIN_FITTED_CONTEXT_TOKENS
MIN_RUNTIME_RESERVE_BYTES = 3 * GiB  # context_fit.py MIN_RUNTIME_RESERVE_BYTES
ALLOCATION_STEP = 256  # mlx_vlm / mlx_lm KVCache.step, the block the fit rounds to
PROMPT_PROCESSING_CHUNK_SIZE = 2048  # mlx_engine/cache_wrapper.py: the prefill step LM Studio passes
_VALIDATED = ("gemma4", "qwen3_5", "qwen3_6")
_CACHES = ("KVCache", "RotatingKVCache", "ArraysCache")


@dataclass(frozen=True)
class ContextFit:
    context_length: int
    family: str
    working_set: int
    reserve: int
    baseline: int
    full_kv: int  # bytes per token
    prompt_inputs: int
    attention: int
    rotating_peak: int
    fixed_ssm: int

    @property
    def estimated_peak(self) -> int:
        """context_fit.py's estimated_peak line: baseline + fixed + per-token peak x the fitted context."""
        per = self.full_kv + self.prompt_inputs + self.attention
        return self.baseline + self.rotating_peak + self.fixed_ssm + per * self.context_length

    def describe(self) -> str:
        return (f"LM Studio's MLX runtime fits the context to {self.context_length:,} tokens (mlx-engine "
                "context_fit.py calculate_context_fit, mlx-engine#345: family="
                f"{self.family} working_set={self.working_set / GiB:.2f}GiB reserve={self.reserve / GiB:.2f}GiB "
                f"baseline={self.baseline / GiB:.2f}GiB full_kv={self.full_kv}B/token "
                f"prompt_inputs={self.prompt_inputs}B/token attention={self.attention}B/token "
                f"rotating_peak={self.rotating_peak / GiB:.2f}GiB fixed_ssm={self.fixed_ssm / GiB:.2f}GiB "
                f"estimated_peak={self.estimated_peak / GiB:.2f}GiB), in place of the one asked")


def family_of(spec: ModelSpec) -> tuple[str, bool]:
    """fit_batched_vlm_context's family: gemma4* and qwen3_5* / qwen3_6* are validated, the rest best effort."""
    model_type = (spec.architecture or "unknown").lower()
    plain = model_type.replace("_", "").replace("-", "")  # oomkit's names: qwen35moe, gpt-oss
    if plain.startswith("gemma4"):
        return "gemma4", True
    if plain.startswith(("qwen35", "qwen36")):
        return "qwen3_5", True
    if plain.startswith("gptoss"):
        return "gpt_oss", False
    return model_type, False


def calculate_context_fit(*, working_set: int, baseline: int, full_kv: int, prompt_inputs: int, attention: int,
                          rotating_peak: int, fixed_ssm: int, max_context: int, step: int = ALLOCATION_STEP
                          ) -> tuple[int, int]:
    """context_fit.py calculate_context_fit -> (context length, runtime reserve)."""
    reserve = max(MIN_RUNTIME_RESERVE_BYTES, working_set // 20)
    available = max(0, working_set - reserve - (baseline + rotating_peak + fixed_ssm))
    tokens = available // (full_kv + prompt_inputs + attention)
    context = (tokens + step - 1) // step * step
    context = max(context, MIN_FITTED_CONTEXT_TOKENS)
    return min(max_context, context), reserve


def fit(spec: ModelSpec, caches: list, *, working_set: int, baseline: int, dtype_bytes: int,
        prefill_step: int) -> ContextFit | None:
    """fit_batched_vlm_context on oomkit's cache of one sequence (kv.layer_caches at batch 1): None where mlx-engine
    leaves the context unchanged."""
    family, validated = family_of(spec)
    max_context = spec.n_ctx_train
    if not max_context or (not validated and max_context <= MIN_FITTED_CONTEXT_TOKENS):
        return None
    attn_layers = [layer.attention for layer in spec.trunk_layers if layer.attention is not None]
    if not attn_layers:
        return None
    heads = attn_layers[0].n_heads
    scores = not (family == "gpt_oss" and attn_layers[0].head_dim_k == 64)
    full_kv = rotating = ssm = 0
    by_index = {layer.index: layer for layer in spec.trunk_layers}
    for c in caches:
        if c.cls == "none":
            continue
        if c.cls not in _CACHES:
            return None  # "Unsupported ... cache topology; skipping context auto-fit"
        if c.cls == "ArraysCache":
            ssm += c.state_bytes
            continue
        per_token = (c.k_bytes + c.v_bytes) // c.tokens if c.tokens else 0
        if c.cls == "KVCache":
            full_kv += per_token
        else:
            window = by_index[c.index].attention.window or c.tokens
            rotating += per_token * (window + prefill_step - 1)
    if full_kv == 0:
        return None  # "has no full KV layers; skipping context auto-fit"
    prompt_inputs = spec.n_embd * dtype_bytes
    attention = heads * prefill_step * dtype_bytes if scores else 0
    context, reserve = calculate_context_fit(
        working_set=working_set, baseline=baseline, full_kv=full_kv, prompt_inputs=prompt_inputs,
        attention=attention, rotating_peak=rotating, fixed_ssm=ssm, max_context=max_context)
    if not validated and context <= MIN_FITTED_CONTEXT_TOKENS:
        return None
    return ContextFit(context, family, working_set, reserve, baseline, full_kv, prompt_inputs, attention, rotating,
                      ssm)
