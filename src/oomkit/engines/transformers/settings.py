"""`from_pretrained` / `generate` arguments by their own names, the releases whose rules oomkit models, and what
transformers settles on from them (dtype, prompt and new tokens, the Cache class generate builds)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...flags import INT32_MAX, Limit
from ...model.spec import ModelSpec
from ...model.weights import is_gguf_format
from ...quant.dtypes import FLOAT_BYTES, canonical, unquantized_dtype
from ..versions import NEWEST_WORDS, Eras, Version, parse_release
from .archs import check_model_release

NEWEST = "5.24.0"
OLDEST = (4, 36, 0)
_VERSION_EXAMPLE = "a release such as 4.57.6"

# Release boundaries (the first release with the new rule), placed by reading the wheels listed in __init__.py.
ERAS = Eras({
    # generation/utils.py GenerationMixin.generate: model_kwargs["logits_to_keep"] = 1 ("num_logits_to_keep" when
    # added by PR #31292, released in 4.45.0); before it the models computed the logits of every prompt token and
    # upcast them (`logits = logits.float()`, transformers #30860)
    "logits_to_keep": (4, 45, 0),
    # cache_utils.py: DynamicSlidingWindowLayer, and StaticCache taking each layer's type from the config
    # (not in 4.55.4, present in 4.57.6; the cache refactor released in 4.56.0). Before: DynamicCache keeps every
    # token on sliding layers; StaticCache is full everywhere ("hybrid"/"sliding_window" caches window them)
    "sliding_layers": (4, 56, 0),
    # modeling_utils.py PreTrainedModel.from_pretrained: `dtype` defaults to "auto" (the checkpoint's dtype);
    # before v5 it defaulted to torch's default dtype, float32
    "auto_dtype": (5, 0, 0),
    # models/deepseek_v3/modeling_deepseek_v3.py DeepseekV3Attention.forward: the cache holds the compressed
    # latents (cache.update(kv_nope, k_rot)), PR #47761; 5.14.0 still caches per-head K and V
    "mla_latent": (5, 15, 0),
    # models/lfm2/modeling_lfm2.py Lfm2Model.forward: DynamicCache(config=...), the short-convolution state in its
    # LinearAttentionLayer (update_conv_state); before, its own Lfm2HybridConvCache (wheels 4.54.0, 4.57.6, 5.0.0,
    # 5.2.0-5.4.0 read; 5.5.0 is the first with DynamicCache, as are 5.8.0, 5.10.0, 5.14.0, 5.17.0 and 5.18.0)
    "lfm2_linear_layer": (5, 5, 0),
    # models/qwen2/modeling_qwen2.py Qwen2Model.forward: `position_embeddings = self.rotary_emb(hidden_states,
    # position_ids)` once for all layers (4.45.0; LlamaModel already in 4.44.2); before, each attention layer computed
    # its own cos / sin (4.44.2 Qwen2Attention.forward: `cos, sin = self.rotary_emb(value_states, seq_len=...)`)
    "rotary_model_level": (4, 45, 0),
    # generation/utils.py GenerationMixin.generate: `model_kwargs["past_key_values"] = DynamicCache()` for models
    # with _supports_cache_class (4.42.0; not in 4.41.2). Before, generate carried the legacy tuple of per-layer
    # (key, value) tensors from one step to the next (_update_model_kwargs_for_generation), and the model rebuilt a
    # DynamicCache around it (4.38.2 Qwen2Model.forward `DynamicCache.from_legacy_cache(past_key_values)`), whose
    # update `self.key_cache[layer_idx] = torch.cat([...])` made new tensors while the tuple held the old ones until
    # the step returned: two whole caches at the end of each decode step (transformers PR #30536's description)
    "cache_object_in_generate": (4, 42, 0),
})

# generation/configuration_utils.py STATIC_CACHE_IMPLEMENTATIONS, DEPRECATED_STATIC_CACHE_IMPLEMENTATIONS,
# DYNAMIC_CACHE_IMPLEMENTATIONS
STATIC_IMPLEMENTATIONS = ("static", "offloaded_static")
DEPRECATED_STATIC = ("sliding_window", "hybrid", "hybrid_chunked", "offloaded_hybrid", "offloaded_hybrid_chunked")
DYNAMIC_IMPLEMENTATIONS = ("dynamic", "offloaded", "quantized")
CACHE_IMPLEMENTATIONS = STATIC_IMPLEMENTATIONS + DEPRECATED_STATIC + DYNAMIC_IMPLEMENTATIONS
QUANT_BACKENDS = ("quanto", "hqq", "fp8")
# --kv-type words: the model dtype, or a quantized cache
KV_TYPES = ("auto", "fp8", "int4", "int2", "bf16", "bfloat16", "fp16", "float16", "f16")

# The engine-neutral CLI options -> these fields (commands/_model_args.py reads a module's NEUTRAL).
NEUTRAL = {"ctx": "max_length", "parallel": "batch_size", "kv_type": "kv_cache_dtype",
           "engine_version": "engine_version"}


def parse_version(version: str | None) -> Version:
    """"4.57.6", "v5.0", "4.57.0.dev0" -> (major, minor, patch); None, "", "newest", "latest" -> NEWEST."""
    # only the exact words: "Newest" or a blank string are refused, as transformers' version reader always did
    if version and str(version) not in NEWEST_WORDS and (
            not str(version).strip() or str(version).strip().lower() in NEWEST_WORDS):
        raise OomkitError(f"cannot read transformers version {version!r}: expected {_VERSION_EXAMPLE}")
    v = parse_release(version, NEWEST, "transformers", _VERSION_EXAMPLE)
    if v < OLDEST:
        raise OomkitError(f"transformers {version} predates the Cache classes (4.36); oomkit models 4.36 and later")
    return v


@dataclass(frozen=True)
class TransformersSettings:
    """`from_pretrained` and `generate` arguments by their own names (GenerationConfig defaults).

    prompt_tokens is oomkit's: the length of `input_ids` (transformers takes the tensor, not a number).
    kv_cache_dtype is oomkit's shorthand for the engine-neutral --kv-type: "auto" (the model dtype), "fp8"
    (cache_implementation="quantized", backend fp8), "int4"/"int2" (quantized, backend quanto with that nbits).
    """

    PROGRAM = "transformers"  # class attributes, not fields (no annotation)
    # What transformers accepts, held by flags.check_settings (flags and API arguments alike): counts from 1
    # (GenerationConfig.validate), logits_to_keep and residual_length from 0; no upper bounds of its own, so
    # oomkit's: 2^31 - 1 tokens, 2^20 sequences.
    LIMITS = {
        "max_length": Limit(1, INT32_MAX, "--max-length"),
        "max_new_tokens": Limit(1, INT32_MAX, "--max-new-tokens"),
        "prompt_tokens": Limit(1, INT32_MAX, "--prompt-tokens"),
        "batch_size": Limit(1, 1 << 20, "--batch-size"),
        "num_beams": Limit(1, 1 << 16, "--num-beams"),
        "num_return_sequences": Limit(1, 1 << 16, "--num-return-sequences"),
        "max_cache_len": Limit(1, INT32_MAX, "--max-cache-len"),
        "cache_nbits": Limit(1, 8, "--cache-nbits"),
        "q_group_size": Limit(1, 1 << 16, "--q-group-size"),
        "residual_length": Limit(0, INT32_MAX, "--residual-length"),
        "logits_to_keep": Limit(0, INT32_MAX, "--logits-to-keep"),
        "prefill_chunk_size": Limit(1, INT32_MAX, "--prefill-chunk-size"),
        "exllama_version": Limit(0, 2, "--exllama-version"),
    }

    max_length: int | None = None  # prompt + max_new_tokens (GenerationConfig.max_length); None: the trained context
    max_new_tokens: int = 20  # GenerationConfig: max_length=20 -> 20 new tokens when nothing is set
    prompt_tokens: int | None = None  # None: max_length - max_new_tokens
    batch_size: int = 1  # input_ids.shape[0]
    num_beams: int = 1
    num_return_sequences: int = 1
    torch_dtype: str | None = None  # from_pretrained(dtype=...); None: "auto" from 5.0, float32 before
    cache_implementation: str = "dynamic"  # GenerationConfig.cache_implementation (None = dynamic)
    max_cache_len: int | None = None  # GenerationConfig.max_cache_len (static caches)
    cache_backend: str = "quanto"  # cache_config["backend"] for cache_implementation="quantized"
    cache_nbits: int | None = None  # cache_config["nbits"]: quanto 2/4, hqq 1/2/3/4/8 (QuantizedLayer default 4)
    q_group_size: int = 64  # cache_config["q_group_size"] (QuantizedLayer default)
    residual_length: int = 128  # cache_config["residual_length"] (QuantizedLayer default)
    kv_cache_dtype: str = "auto"
    logits_to_keep: int | None = None  # None: generate's 1 (from 4.45); 0 = the logits of every prompt token
    attn_implementation: str = "sdpa"  # "eager" materialises B x H x T x T scores
    prefill_chunk_size: int | None = None  # GenerationConfig.prefill_chunk_size
    device_map: str | None = None  # None: model.to("cuda"); "auto" | "balanced" | "sequential" | "cpu" | "cuda:N"
    max_memory: tuple[tuple[str, int], ...] = ()  # from_pretrained(max_memory={0: "20GiB", "cpu": "64GiB"})
    load_in_4bit: bool = False  # BitsAndBytesConfig(load_in_4bit=True)
    load_in_8bit: bool = False
    bnb_4bit_quant_type: str = "fp4"  # BitsAndBytesConfig default
    bnb_4bit_use_double_quant: bool = False
    expandable_segments: bool = False  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    # a GPTQ checkpoint's ExLlama kernel, from_pretrained(quantization_config=GPTQConfig(exllama_config={"version":
    # N})); 0: use_exllama=False. None: what the checkpoint's quantization_config names (use_exllama,
    # exllama_config.version, disable_exllama), else version 1, GPTQConfig's default (weights.exllama_version)
    exllama_version: int | None = None
    # the checkpoint stores a tied model's lm_head.weight as a tensor of its own (not a from_pretrained argument: how
    # the files were written). AutoAWQ 0.2.6 and earlier save_quantized (awq/models/base.py: shard_checkpoint of the
    # whole `self.model.state_dict()`, each tensor `v.clone().contiguous()`) and auto-gptq 0.7.1 save_quantized
    # (modeling/_base.py, the same clone) write both tied names; transformers' save_pretrained, and AutoAWQ 0.2.7 on
    # (huggingface_hub save_torch_state_dict, shared tensors dropped), write one. layout.py _load_phase.
    stored_tied_head: bool = False
    engine_version: str = NEWEST

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["max_memory"] = {k: v for k, v in self.max_memory}
        return d


def with_context(s: TransformersSettings, n_ctx: int) -> TransformersSettings:
    """The same generate call at another total length; the new tokens shrink only when the total is smaller."""
    return replace(s, max_length=n_ctx, prompt_tokens=None, max_new_tokens=max(1, min(s.max_new_tokens, n_ctx - 1)))


# ---------------------------------------------------------------------------------------------------------
# What transformers settles on


@dataclass(frozen=True)
class Resolved:
    version: Version
    dtype: str
    dtype_bytes: int
    prompt: int  # P: input_ids.shape[1]
    new: int  # max_new_tokens
    max_length: int  # P + new
    batch: int  # the cache batch: batch_size x max(num_beams, num_return_sequences)
    impl: str  # cache_implementation
    backend: str | None  # quantized cache backend
    nbits: int
    static: bool
    offload: bool
    max_cache_len: int  # StaticCache length (prompt + new - 1, or GenerationConfig.max_cache_len)
    keep: int  # logits rows kept in prefill
    # the prefill's logits upcast to float32 in the forward (every model before 4.45; FORWARD_WITHOUT_LOGITS_TO_KEEP)
    logits_float: bool = False
    group_size: int = 64  # quantized cache q_group_size
    residual_length: int = 128  # quantized cache residual_length
    labels: tuple[str, ...] = ()

    @property
    def end_tokens(self) -> int:
        """Tokens in the cache when generate returns: the last generated token is never fed back
        (generation/utils.py: max_cache_length = generation_config.max_length - 1)."""
        return self.prompt + self.new - 1


def is_gguf(spec: ModelSpec) -> bool:
    return is_gguf_format(spec.weights.format)


def is_plain_dtype(name: str) -> bool:
    """A float dtype in any spelling (float32, float16, bfloat16)."""
    return canonical(name) in FLOAT_BYTES


def checkpoint_dtype(spec: ModelSpec) -> str:
    """The dtype the checkpoint's unquantized tensors carry (config torch_dtype); bfloat16 when unsure.
    A GGUF is dequantized to float32 on load (transformers docs, "GGUF": "The GGUF checkpoint is dequantized to
    fp32"; modeling_gguf_pytorch_utils.py converts to `dtype` right after dequantizing when one is given)."""
    if is_gguf(spec):
        return "float32"
    return unquantized_dtype(spec.weights.format, ((t.name, t.dtype) for t in spec.weights.tensors))


def _dtype_name(name: str) -> str:
    """from_pretrained(dtype=...): a float dtype in any spelling, torch's "torch.float16" included."""
    key = str(name).strip().lower()
    key = key.removeprefix("torch.") if key in ("torch.float32", "torch.float16", "torch.bfloat16") else canonical(key)
    if key not in FLOAT_BYTES:
        raise OomkitError(f"dtype {name!r}: transformers loads float32, float16 or bfloat16 (or 'auto')")
    return key


def _resolve_dtype(spec: ModelSpec, s: TransformersSettings, v: Version) -> str:
    # modeling_utils.py from_pretrained (dtype "auto" from 5.0; torch's default float32 before)
    want = s.torch_dtype
    if want is None and v < ERAS["auto_dtype"] and (s.load_in_4bit or s.load_in_8bit):
        # quantizers/quantizer_bnb_8bit.py / quantizer_bnb_4bit.py update_torch_dtype: "Overriding torch_dtype=None
        # with `torch_dtype=torch.float16` due to requirements of `bitsandbytes`" (v4; from 5.0 the "auto" default
        # reaches the quantizer as the checkpoint's dtype)
        want = "float16"
    if want is None and v < ERAS["auto_dtype"] and spec.weights.format in ("awq", "gptq"):
        # quantizers/quantizer_awq.py / quantizer_gptq.py update_torch_dtype (4.38.2, 4.46.0, 4.51.3): `if
        # torch_dtype is None: torch_dtype = torch.float16`; from 5.0 the "auto" default reaches it as the
        # checkpoint's dtype
        want = "float16"
    if want is None:
        want = "auto" if v >= ERAS["auto_dtype"] else "float32"
    return checkpoint_dtype(spec) if str(want).lower() == "auto" else _dtype_name(want)


def _resolve_lengths(spec: ModelSpec, s: TransformersSettings, labels: list[str]) -> tuple[int, int]:
    """(prompt, new tokens): generation/utils.py _prepare_generated_length (max_length = max_new_tokens + input
    length)."""
    if s.max_new_tokens < 1:
        raise OomkitError("max_new_tokens must be at least 1")
    if s.batch_size < 1 or s.num_beams < 1 or s.num_return_sequences < 1:
        raise OomkitError("batch_size, num_beams and num_return_sequences must be at least 1")
    if s.prompt_tokens is not None:
        if s.prompt_tokens < 1:
            raise OomkitError("prompt_tokens must be at least 1")
        prompt = s.prompt_tokens
        new = s.max_length - prompt if s.max_length is not None else s.max_new_tokens
        if new < 1:
            raise OomkitError(f"max_length {s.max_length} leaves no room for new tokens after a prompt of {prompt}")
        return prompt, new
    total = s.max_length or spec.n_ctx_train
    if not total:
        raise OomkitError(f"{spec.name}: the model declares no trained context; give --ctx (prompt + new tokens)")
    if s.max_length is None:
        labels.append(f"no --ctx given: prompt + new tokens = the trained context ({total})")
    new = s.max_new_tokens
    prompt = total - new
    if prompt < 1:
        raise OomkitError(f"max_length {total} must exceed max_new_tokens {new} (the prompt needs a token)")
    return prompt, new


def _resolve_cache(s: TransformersSettings) -> tuple[str, str | None, int]:
    """(cache_implementation, quantized backend, nbits), --kv-type folded in."""
    impl = (s.cache_implementation or "dynamic").lower()
    backend = None
    nbits = s.cache_nbits or 4
    kvd = (s.kv_cache_dtype or "auto").lower()
    if kvd not in KV_TYPES:
        raise OomkitError(f"--kv-type {s.kv_cache_dtype}: transformers caches in the model dtype, or quantized "
                          "(fp8, int4, int2)")
    if kvd in ("fp8", "int4", "int2"):
        if impl not in ("dynamic", "quantized"):
            raise OomkitError(f"--kv-type {kvd} needs cache_implementation='quantized', not {impl!r}")
        impl = "quantized"
        backend = "fp8" if kvd == "fp8" else "quanto"
        nbits = 8 if kvd == "fp8" else int(kvd[3:])
    if impl not in CACHE_IMPLEMENTATIONS:
        raise OomkitError(f"Invalid `cache_implementation` ({s.cache_implementation}). Choose one of: "
                          f"{', '.join(CACHE_IMPLEMENTATIONS)}")
    if impl == "quantized":
        backend = backend or s.cache_backend.lower()
        if backend not in QUANT_BACKENDS:
            raise OomkitError(f"Unknown quantization backend `{backend}` (quanto, hqq or fp8)")
        # cache_utils.py QuantoQuantizedLayer / HQQQuantizedLayer __init__
        if backend == "quanto" and nbits not in (2, 4):
            raise OomkitError(f"`nbits` for `quanto` backend has to be one of [`2`, `4`] but got {nbits}")
        if backend == "hqq" and nbits not in (1, 2, 3, 4, 8):
            raise OomkitError(f"`nbits` for `HQQ` backend has to be one of [`1`, `2`, `3`, `4`, `8`] but got {nbits}")
    return impl, backend, nbits


# Models whose forward() names no logits_to_keep, so generate() passes them none (generation/utils.py
# GenerationMixin._supports_num_logits_to_keep, 4.45-4.49, and _supports_logits_to_keep from 4.50: `"logits_to_keep" in
# set(inspect.signature(self.forward).parameters.keys())`) and their prefill computes the logits of every prompt token.
# HF model_type -> (the first release whose forward takes logits_to_keep, the first whose forward no longer upcasts
# them all to float32), read in the sdists 4.45.0, 4.46.0, 4.47.0, 4.48.0, 4.49.0, 4.50.0, 4.51.0, 4.52.0, 4.53.0,
# 4.54.0, 4.55.4, 4.57.0 and 5.0.0 (models/<type>/modeling_<type>.py, the forward of each *ForCausalLM,
# *ForConditionalGeneration and *LMHeadModel class; every model of the catalog that names it in all of them is left out):
#   qwen2_vl    `logits = self.lm_head(hidden_states)` to 4.57.x, then `logits = logits.float()` unconditionally in
#               4.45.0, under `if labels is not None` from 4.46.0; 5.0.0 takes logits_to_keep
#   qwen2_5_vl  the same from its first release, 4.49.0 (upcast under labels only), to 4.53.x; 4.54.0 takes it
#   mamba, mamba2  `logits = self.lm_head(hidden_states.to(self.lm_head.weight.dtype)).float()` to 4.57.x; 5.0.0 takes it
#   opt         `logits = self.lm_head(outputs[0]).contiguous()` to 4.57.x; 5.0.0 takes it
#   gpt2        GPT2LMHeadModel `lm_logits = self.lm_head(hidden_states)` to 4.52.x; 4.53.0 takes it
#   granite     upcast unconditionally in 4.45.0, not from 4.46.0; 4.48.0 takes it
#   granitemoe  upcast unconditionally in 4.45.0, not from 4.46.0; 4.52.0 takes it
#   glm4v       its first release, 4.53.0; 4.54.0 takes it
FORWARD_WITHOUT_LOGITS_TO_KEEP: dict[str, tuple[Version, Version]] = {
    "qwen2_vl": ((5, 0, 0), (4, 46, 0)),
    "qwen2_5_vl": ((4, 54, 0), (4, 45, 0)),
    "mamba": ((5, 0, 0), (5, 0, 0)),
    "mamba2": ((5, 0, 0), (5, 0, 0)),
    "opt": ((5, 0, 0), (4, 45, 0)),
    "gpt2": ((4, 53, 0), (4, 45, 0)),
    "granite": ((4, 48, 0), (4, 46, 0)),
    "granitemoe": ((4, 52, 0), (4, 46, 0)),
    "glm4v": ((4, 54, 0), (4, 45, 0)),
}


def _forward_keeps_all(spec: ModelSpec, v: Version) -> tuple[bool, bool]:
    """(the model's forward takes no logits_to_keep at this release, it upcasts all of them to float32) for the
    models of FORWARD_WITHOUT_LOGITS_TO_KEEP."""
    row = FORWARD_WITHOUT_LOGITS_TO_KEEP.get(spec.hf_model_type or "")
    if row is None or v >= row[0]:
        return False, False
    return True, v < row[1]


def _logits_kept(s: TransformersSettings, v: Version, prompt: int, forward_keeps_all: bool = False) -> int:
    """Logits rows the prefill computes (generate's logits_to_keep; all of them where the forward takes none)."""
    if s.logits_to_keep is not None and s.logits_to_keep < 0:
        raise OomkitError("logits_to_keep must be 0 (all) or positive")
    if v < ERAS["logits_to_keep"] or forward_keeps_all:
        return prompt
    if s.logits_to_keep is None:
        return 1
    return prompt if s.logits_to_keep == 0 else min(s.logits_to_keep, prompt)


def resolve(spec: ModelSpec, s: TransformersSettings) -> Resolved:
    v = parse_version(s.engine_version)
    check_model_release(spec, v)  # archs.py FIRST_RELEASES: a release without the model's modeling file
    labels: list[str] = []
    dtype = _resolve_dtype(spec, s, v)
    prompt, new = _resolve_lengths(spec, s, labels)
    impl, backend, nbits = _resolve_cache(s)
    static = impl in STATIC_IMPLEMENTATIONS + DEPRECATED_STATIC
    max_cache_len = prompt + new - 1
    if static and s.max_cache_len:
        # generation/utils.py _prepare_cache_for_generation: max(max_cache_length, generation_config.max_cache_len)
        max_cache_len = max(max_cache_len, s.max_cache_len)
    batch = s.batch_size * max(s.num_beams, s.num_return_sequences)
    keeps_all, upcast = _forward_keeps_all(spec, v)
    keep = _logits_kept(s, v, prompt, keeps_all)
    if s.load_in_4bit and s.load_in_8bit:
        raise OomkitError("You can't pass `load_in_4bit`and `load_in_8bit` as True at the same time")
    return Resolved(version=v, dtype=dtype, dtype_bytes=FLOAT_BYTES[dtype], prompt=prompt, new=new,
                    max_length=prompt + new, batch=batch, impl=impl, backend=backend, nbits=nbits, static=static,
                    offload=impl.startswith("offloaded"), max_cache_len=max_cache_len, keep=keep,
                    logits_float=v < ERAS["logits_to_keep"] or upcast,
                    group_size=s.q_group_size, residual_length=s.residual_length, labels=tuple(labels))
