"""SGLang's KV cache and recurrent state: what each rank caches (the full, sliding-window and Mamba pools), the
bytes per token (cell_size), and how the memory left after the weights becomes max_total_num_tokens.

The steps keep SGLang's names: `profile_max_num_token` (model_runner.py; 0.5.3-0.5.13
model_runner_kv_cache_mixin.py; 0.5.14+ pool_configurator.py and kv_cache_configurator.py
`KVCacheConfigurator._profile_available_bytes`), `set_num_tokens_hybrid_swa`, `handle_max_mamba_cache`, and
`init_memory_pool`, whose buffers are memory_pool.py `_create_buffers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ...errors import OomkitError
from ...model.archs import NO_ATTENTION_LAYERS_OK, refuse_llamacpp_only_caches
from ...model.spec import LayerKind, LayerSpec, ModelSpec
from ...quant.dtypes import FLOAT_BYTES
from ...units import GiB, MiB, cdiv
from .. import _tp
from ..release_flags import deprecation_notes, refuse_unknown, release_key, resolve_abbreviations
from ..versions import Version
from .archs import check_model_release
from .checkpoint_kv import checkpoint_kv_dtype
from .settings import (
    EAGLE_FAMILY,
    FP4_KV_DTYPES,
    FP4_SCALE_BLOCK,
    KV_CACHE_DTYPES,
    SGLangSettings,
    aiter_fraction,
    algorithm,
    default_mem_fraction_static,
    model_dtype,
    multimodal_off,
    parse_version,
    reached,
    runner_fraction,
    speculative_params,
)

# model_config.py is_hybrid_swa_model: only these architectures get the two-pool sliding-window cache; other
# sliding-window models (Gemma 2/3, Mistral v0.1) cache every layer in full. Names as oomkit's ModelSpec
# (llama.cpp) spells them.
HYBRID_SWA_ARCHS = frozenset({"llama4", "gpt-oss", "gemma4", "mimo2", "mimo_v2_flash", "step35", "granite_swa"})

# server_args.py: FlashMLA forces page_size 64, CUTLASS MLA 128, TRT-LLM MLA/MHA 64, Ascend 128; otherwise 1. FA4 for a
# non-MLA model on SM100: 128 (_fa4_page_constraint, 0.5.18 read; 0.5.10-0.5.14 only for --prefill-attention-backend
# fa4); oomkit's default picks fa4 only on SM100, a given fa4 is taken to run there too
_BACKEND_PAGE_SIZE = {"flashmla": 64, "cutlass_mla": 128, "trtllm_mla": 64, "trtllm_mha": 64, "ascend": 128,
                      "fa4": 128}


@dataclass(frozen=True)
class CacheLayout:
    """How SGLang caches this model on one rank."""

    mla: bool
    full_layers: tuple[LayerSpec, ...]  # layers in the full pool (all attention layers unless hybrid SWA)
    swa_layers: tuple[LayerSpec, ...]  # layers in the sliding-window pool (hybrid-SWA architectures only)
    mamba_layers: tuple[LayerSpec, ...]
    kv_bytes: float  # bytes per element of the KV cache
    kv_dtype: str
    model_dtype: str
    attn_tp: int
    page_size: int
    labels: tuple[str, ...] = ()
    # a multimodal checkpoint's vision_config (num_hidden_layers, hidden_size): the default fraction is lowered
    vit: tuple[int | None, int | None] | None = None
    # its multimodal path off by default in this release and no --enable-multimodal (settings.py multimodal_off): no
    # fraction cut, chunked prefill kept, Llama 4's vision tower not built from 0.4.10
    mm_off: bool = False
    # bytes a token adds to the full pool's cell once, whatever the layers (FP4's FP8 dequant workspace, 0.5.16-0.5.20)
    token_extra: int = 0
    # why --kv-cache-dtype auto took kv_dtype where the checkpoint declares a KV cache (checkpoint_kv.py)
    kv_dtype_reason: str = ""


def _hybrid_swa_disabled(spec: ModelSpec, s: SGLangSettings) -> str | None:
    """server_args.py _handle_model_specific_adjustments, GptOssForCausalLM: `self.disable_hybrid_swa_memory = True`
    always up to 0.5.7 (0.5.2, 0.5.6, 0.5.7 read), in 0.5.8-0.5.9 only with the trtllm_mha backend or speculative
    decoding, not from 0.5.10: every layer then sits in the full pool. Llama 4 before 0.5.8 (ERAS llama4_swa_pool):
    every layer in the full pool unless --hybrid-kvcache-ratio (not taken by oomkit). -> the label saying so, or
    None."""
    v = parse_version(s.engine_version)
    if s.disable_hybrid_swa_memory:
        # configs/model_config.py _derive_hybrid_model (0.5.16, 0.5.23; 0.5.3-0.5.15 model_runner.py): is_hybrid_swa =
        # is_hybrid_swa_model(...) and not disable_hybrid_swa_memory, so kv_cache_configurator.py (0.5.16-0.5.23) skips
        # _build_hybrid_swa_kv_pool and builds the plain MHA pool over num_effective_layers, FP4's quant_method included
        return "--disable-hybrid-swa-memory: no hybrid SWA pool, every layer in the full pool"
    if spec.architecture == "llama4" and not reached(v, "llama4_swa_pool"):
        return ("llama4 on SGLang before 0.5.8: no hybrid SWA pool by default (--hybrid-kvcache-ratio opts in from "
                "0.4.9, not estimated here), every layer in the full pool")
    if spec.architecture != "gpt-oss":
        return None
    if not reached(v, "gpt_oss_swa_pool"):
        return "gpt-oss on SGLang before 0.5.8: hybrid SWA memory disabled, every layer in the full pool"
    if not reached(v, "gpt_oss_swa_always") and ((s.attention_backend or "") == "trtllm_mha" or s.speculative_algorithm):
        return ("gpt-oss on SGLang 0.5.8-0.5.9 with trtllm_mha or speculative decoding: hybrid SWA memory disabled, "
                "every layer in the full pool")
    return None


def _check_index_share_release(spec: ModelSpec, version: str) -> None:
    """GLM-5.2's IndexShare (layers that reuse an earlier layer's indexer top-k): SGLang derives which layers skip
    the top-k from index_topk_freq and index_skip_topk_offset from 0.5.13 (ERAS glm_dsa_index_share); 0.5.12 ignores
    the offset and puts the indexers on other layers than the checkpoint's, older releases have no skip_topk at all."""
    if any(la.attention is not None and la.attention.indexer_shared for la in spec.layers) \
            and not reached(parse_version(version), "glm_dsa_index_share"):
        raise OomkitError(f"{spec.name}: SGLang {version} does not run shared (IndexShare) indexers "
                          "as the checkpoint lays them out: models/deepseek_v2.py reads index_skip_topk_offset from "
                          "0.5.13 on (use --engine-version 0.5.13 or newer)")


def _one_kv_head_count(layers: tuple[LayerSpec, ...]) -> tuple[LayerSpec, ...]:
    """DeciLM (nemotron-nas): configs/model_config.py get_total_num_kv_heads takes one KV head count for the whole
    model from block_configs ("Variable GQA (VGQA) is not yet supported for nemotron-nas in sglang" otherwise), and
    the MHA pool keeps it for every one of num_hidden_layers, the layers whose attention is a no-op included."""
    counts = {la.attention.n_kv_heads for la in layers if la.attention is not None and la.attention.n_kv_heads}
    if len(counts) > 1:
        raise OomkitError("ValueError: Variable GQA (VGQA) is not yet supported for nemotron-nas in sglang")
    if not counts:
        raise OomkitError("RuntimeError: Couldn't determine number of kv heads")
    n = counts.pop()
    return tuple(replace(la, attention=replace(la.attention, n_kv_heads=n))
                 if la.attention is not None and not la.attention.n_kv_heads else la for la in layers)


def cache_layout(spec: ModelSpec, s: SGLangSettings, layers: tuple[LayerSpec, ...] | None = None) -> CacheLayout:
    """The pools `layers` (default: the trunk; next-n / MTP layers belong to the draft worker) go into."""
    refuse_llamacpp_only_caches(spec, "SGLang")
    if s.kv_cache_dtype not in KV_CACHE_DTYPES:
        raise OomkitError(f"launch_server.py: error: argument --kv-cache-dtype: invalid choice: {s.kv_cache_dtype!r} (choose from "
                          + ", ".join(repr(k) for k in KV_CACHE_DTYPES) + ")")
    dtype = model_dtype(spec, s)
    kv_reason = ""
    if s.kv_cache_dtype == "auto":
        kv_bytes, kv_dtype = FLOAT_BYTES[dtype], dtype  # model_runner init_memory_pool: auto = self.dtype
        # from 0.5.3 a checkpoint's FP8 kv_cache_quant_algo makes it float8_e4m3fn (checkpoint_kv.py)
        taken, kv_reason = checkpoint_kv_dtype(spec, parse_version(s.engine_version))
        if taken is not None:
            kv_bytes, kv_dtype = KV_CACHE_DTYPES[taken], taken
    else:
        kv_bytes, kv_dtype = KV_CACHE_DTYPES[s.kv_cache_dtype], s.kv_cache_dtype
    layers = spec.trunk_layers if layers is None else layers
    check_model_release(spec, parse_version(s.engine_version))
    flag_notes = check_release_flags(s)  # a deprecated flag's note first among the labels
    _check_index_share_release(spec, s.engine_version)
    if spec.architecture in NO_ATTENTION_LAYERS_OK:
        layers = _one_kv_head_count(layers)
    # mllama (Llama 3.2 Vision, MllamaForConditionalGeneration, models/mllama.py from 0.3.4.post1 through 0.5.23):
    # the pool spans the text model's num_hidden_layers (model_config.py hf_text_config), the cross-attention layers
    # included (their RadixAttention(layer_id, is_cross_attention=True) writes the image tokens' K and V into the
    # same MHATokenToKVPool at encoder_out_cache_loc), and cell_size takes every one of them
    # Gemma 4's KV-shared layers (the last num_kv_shared_layers: E2B 20, E4B 18) keep their rows in SGLang's pools:
    # configs/model_config.py get_hybrid_layer_ids lists every layer of layer_types as full or SWA and
    # models/gemma4_causal.py only points the shared layers' reads at kv_shared_layer_index (0.5.11, 0.5.14, 0.5.16
    # and 0.5.23 wheels read; sglang PR #28171's E2B pool: 7 full and 28 SWA layers)
    keeps_shared = spec.architecture == "gemma4"
    attn = [la for la in layers if la.attention is not None and (la.kv_source is None or keeps_shared)
            and (la.kind is not LayerKind.NONE or la.cross_attention)]
    cross = any(la.cross_attention for la in attn)
    if cross and s.attention_backend == "triton":
        # model_runner.py init_attention_backend (0.4.x), layers/attention/attention_registry.py
        # create_triton_backend (0.5.x): assert not model_config.is_encoder_decoder
        raise OomkitError("AssertionError: Cross attention is not supported in the triton attention backend. "
                          "Please use `--attention-backend flashinfer`.")
    mamba = tuple(la for la in layers if la.recurrent is not None
                  and (la.kind is LayerKind.RECURRENT or la.parallel_recurrent))
    mla = any(la.kind is LayerKind.LATENT for la in attn)
    labels: list[str] = list(flag_notes)
    if kv_reason:
        labels.append(kv_reason)
    if cross:
        labels.append("mllama: the pool holds all the text model's layers, the cross-attention ones included; a "
                      "request's image adds its tiles x 1601 tokens (4 x 1601 = 6,404 for one image: models/mllama.py "
                      "pad_input_ids) to its length, their K and V in the same pool; chunked prefill is off for "
                      "it (0.4.x: every multimodal model; then is_multimodal_chunked_prefill_supported)")
    windowed = [la for la in attn if la.kind in (LayerKind.SLIDING, LayerKind.CHUNKED)]
    swa_off = _hybrid_swa_disabled(spec, s)
    if swa_off:
        labels.append(swa_off)
    if windowed and spec.architecture in HYBRID_SWA_ARCHS and not swa_off:
        full = tuple(la for la in attn if la not in windowed)
        swa = tuple(windowed)
    else:
        full, swa = tuple(attn), ()
        if windowed and not swa_off:
            labels.append(f"{spec.architecture}: SGLang keeps sliding-window layers in the full pool "
                          "(not a hybrid-SWA architecture in model_config.py is_hybrid_swa_model)")
    if s.page_size is not None:
        if s.page_size < 1:
            raise OomkitError(f"--page-size must be at least 1, got {s.page_size}")
        page = s.page_size
    elif any(la.attention.index_head_dim for la in attn if la.attention is not None):
        # server_args.py _handle_model_specific_adjustments, DeepseekV32ForCausalLM on CUDA: "Setting page size to
        # 64 for DeepSeek NSA." (the indexer's DeepGEMM kernels read 64-token pages)
        page = 64
    else:
        page = _BACKEND_PAGE_SIZE.get(s.attention_backend or "", 1)
        if s.attention_backend == "fa4" and any(la.kind is LayerKind.LATENT for la in attn):
            page = 1  # the 128 rule is for non-MLA models
    if not s.enable_dp_attention and any(la.attention.index_head_dim for la in attn if la.attention is not None):
        # the same function, in the releases that added DeepSeek V3.2 (autumn 2025, sglang#11358), also forces DP
        # attention: "DP attention is enabled for DeepSeek NSA." (enable_dp_attention = True, dp_size = tp_size);
        # which later releases dropped that is not known here, so it is said, not applied
        labels.append("DeepSeek NSA: the SGLang releases that added DeepSeek V3.2 turn on --enable-dp-attention with "
                      "--dp equal to --tp (attention weights whole on every rank); add both flags to estimate that "
                      "layout")
    attn_tp = s.tp_size // s.dp_size if s.enable_dp_attention else s.tp_size
    if attn_tp < 1:
        raise OomkitError(f"--dp-size {s.dp_size} must not exceed --tp-size {s.tp_size} with --enable-dp-attention")
    tower = next((t for t in spec.towers if t.kind == "vision"), None)
    vit = _vit_dims(tower) if tower is not None else None
    mm_off = (vit is not None and not s.enable_multimodal
              and multimodal_off(spec.architecture, parse_version(s.engine_version)))
    token_extra = 0
    if s.kv_cache_dtype in FP4_KV_DTYPES:
        token_extra = fp4_kv_layout(s, parse_version(s.engine_version), mla=mla, full=full, swa=swa, mamba=mamba,
                                    nsa=any(_nsa(la) for la in attn), attn_tp=attn_tp)
    return CacheLayout(mla=mla, full_layers=full, swa_layers=swa, mamba_layers=mamba, kv_bytes=kv_bytes,
                       kv_dtype=kv_dtype, model_dtype=dtype, attn_tp=attn_tp, page_size=page, labels=tuple(labels),
                       vit=vit, mm_off=mm_off, token_extra=token_extra, kv_dtype_reason=kv_reason)


# FP4 KV caches (settings.py ERAS kv4_*; 0.5.3-0.5.23 wheels read). The pools: MLATokenToKVPool's FP4 branch (0.5.5;
# MLATokenToKVPoolFP4 from 0.5.6) keeps the latent as uint8 (size + page, 1, dim // 2) and a uint8 kv_scale_buffer (size
# + page, dim // 16); MHATokenToKVPoolFP4 (0.5.6+) K and V as uint8 (size + page, heads, head_dim // 2) and uint8 scales
# (size + page, heads x head_dim // 16) (mem_cache/memory_pool.py). The cell profile_max_num_token divides the rest by
# (model_runner.py profile_max_num_token 0.5.5-0.5.9, model_runner_kv_cache_mixin.py 0.5.10, pool_configurator.py
# _compute_cell_size 0.5.14-0.5.20): with kv_size = element_size(torch.float4_e2m1fn_x2) = 1, MLA (dim x layers) // 2 +
# (dim // 16) x layers, MHA (heads x (k + v) x layers) // 2 + (heads x k x layers x 2) // 16 (0.5.6: heads x head_dim x
# layers x 2 for the first term) -- 9/16 of a byte a value (elem_bytes); from 0.5.16 the MHA cell adds "one shared FP8
# dequant workspace across layers", heads x k x 2 bytes a token once (token_extra; charged, and allocated only by the
# nvfp4 recipe's FlashInfer prefill); from 0.5.21 the MHA cell is the recipe's compute_cell_size
# (fp4_kv_cache_quant_method.py): packed data, the scale layouts the selected backends read and the workspace only where
# a backend dequantizes into it (FlashInfer prefill for nvfp4), so with one --attention-backend from the KV4 list no
# workspace and one scale layout. Mamba / linear-attention hybrids size their full-attention layers by the same cell
# from 0.5.16; NSA pools, 0.5.5-0.5.15's hybrid linear pool and the draft worker's pool take the FP4 dtype through
# other classes (HybridLinearKVPool, NSATokenToKVPool), not modelled. The hybrid sliding-window pool (SWAKVPool,
# mem_cache/swa_memory_pool.py; 0.5.5-0.5.9 memory_pool.py) builds its full and SWA sub-pools as plain
# MHATokenToKVPool of the FP4 dtype in every release (model_runner*.py, kv_cache_configurator.py
# _build_hybrid_swa_kv_pool 0.5.16-0.5.23: no MHATokenToKVPoolFP4, no quant_method): store_dtype = float4_e2m1fn_x2,
# (size + page, heads, head_dim) a layer at 1 B a value and no scales (HybridSWAPoolConfigurator's per-token bytes
# take element_size = 1, no FP4 branch), and set_kv_buffer's cache_k.to(self.dtype) at the first forward is a cast
# torch does not implement (torch 2.13: NotImplementedError "copy_" not implemented for 'Float4_e2m1fn_x2').
def fp4_kv_layout(s: SGLangSettings, v: Version, *, mla: bool, full: tuple[LayerSpec, ...],
                  swa: tuple[LayerSpec, ...], mamba: tuple[LayerSpec, ...], nsa: bool, attn_tp: int) -> int:
    """Refuse the FP4 KV caches this release's parser or pools do not take (one line each); -> token_extra."""
    name = s.kv_cache_dtype
    recipes = reached(v, "kv4_recipes")
    if not reached(v, "kv4_mla") or (name != "fp4_e2m1" and not recipes) or (
            name == "fp4_e2m1" and reached(v, "kv4_e2m1_dropped")):
        first = "0.5.5" if name == "fp4_e2m1" else "0.5.16"
        last = ", up to 0.5.20" if name == "fp4_e2m1" else ""
        raise OomkitError(f"launch_server.py: error: argument --kv-cache-dtype: invalid choice: {name!r} in SGLang {s.engine_version} "
                          f"(the choice exists from {first}{last})")
    if name == "fp4_e2m1" and recipes:
        raise OomkitError("ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16. "
                          f"(SGLang {s.engine_version}, mem_cache/kv_cache_dtype.py)")
    # HybridLinearKVPool takes the FP4 recipe for its full-attention layers from 0.5.16 (kv_cache_configurator.py
    # _build_fp4_quant_method -> quant_method=; 0.5.15 and before build a plain MHATokenToKVPool of the FP4 dtype)
    if swa:
        raise OomkitError("NotImplementedError: \"copy_\" not implemented for 'Float4_e2m1fn_x2' (SGLang "
                          f"{s.engine_version}: --kv-cache-dtype {name} on a hybrid sliding-window model builds SWAKVPool "
                          "as plain MHATokenToKVPool of the FP4 dtype, no FP4 pool or scales, and its first KV write "
                          "casts to it; --disable-hybrid-swa-memory puts every layer in the FP4 pool)")
    if (mamba and not recipes) or nsa or s.speculative_algorithm:
        what = ("a Mamba / linear-attention state pool" if mamba
                else "DeepSeek sparse attention's pool" if nsa else "speculative decoding's draft pool")
        raise OomkitError(f"--kv-cache-dtype {name} with {what} is not modelled by oomkit (its FP4 sizing covers "
                          "plain MHA and MLA pools)")
    if not mla and not reached(v, "kv4_mha"):
        raise OomkitError(f"--kv-cache-dtype {name}: SGLang {s.engine_version} has an FP4 pool for MLA models only "
                          "(MHATokenToKVPoolFP4 arrives in 0.5.6); not modelled for this MHA model")
    if mla and name == "nvfp4":
        raise OomkitError("--kv-cache-dtype nvfp4 with an MLA model is not modelled by oomkit (the NVFP4 recipe's "
                          "attention access rules name MHA backends only; --kv-cache-dtype fp4_mx_block16 is modelled)")
    if mla or not recipes or not full:
        return 0
    first = full[0]
    heads = _tp.kv_heads_per_rank(first.attention.n_kv_heads, attn_tp)
    k = first.attention.head_dim_k
    if not reached(v, "kv4_e2m1_dropped"):
        return heads * k * 2  # the FP8 dequant workspace, K and V, 1 byte a value
    if name != "nvfp4" or s.decode_attention_backend is None:
        return 0  # one backend from the KV4 list: no workspace, one scale layout (in the cell already)
    # 0.5.21-0.5.23 NVFP4KVCacheMethod.compute_cell_size over the accesses configure_attention_backends selects for
    # the (prefill, decode) pair resolve_nvfp4_backends gives: FlashInfer prefill reads an FP8 dequant workspace
    # (heads x head_dim x K, V x 1 B a token, shared across layers) and the token-linear scales; trtllm_mha reads the
    # packed cache natively, with trtllm-gen's own scale layout on SM100 (use_trtllm_gen_native_scale_layout =
    # is_sm100) and the linear one elsewhere (SM120's XQA). One layout is the cell's already; "Mixed mode
    # intentionally owns both".
    dq = s.prefill_attention_backend == "flashinfer"
    native = "trtllm_mha" in (s.prefill_attention_backend, s.decode_attention_backend)
    layouts = int(dq or (native and not s.platform_sm100)) + int(native and s.platform_sm100)
    one_layout = heads * (k // 16) * len(full) * 2
    return (layouts - 1) * one_layout + (heads * k * 2 if dq else 0)


# 0.5.21-0.5.23 arg_groups/kv_cache_hook.py _NVFP4_PREFILL_BACKEND: the prefill backend each
# --prefill-kv-cache-dequant-dtype reads the NVFP4 cache with
NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}


def resolve_nvfp4_backends(s: SGLangSettings, v: Version, given_backend: str | None,
                           cc: tuple[int, int] | None) -> tuple[str, str] | None:
    """--kv-cache-dtype nvfp4 from 0.5.21: the (prefill, decode) attention backends SGLang resolves before it picks
    a default backend (arg_groups/kv_cache_hook.py handle_nvfp4_prefill_kv_dequant_dtype, 0.5.21-0.5.23 read):
    --prefill-kv-cache-dequant-dtype auto takes the typed prefill backend, else the typed --attention-backend
    (flashinfer: an FP8 workspace, trtllm_mha: native NVFP4), else nvfp4 on SM100 and fp8_e4m3 elsewhere; decode is
    always trtllm_mha. given_backend: --attention-backend as typed (a model's own default backend is not seen here).
    None for any other cache or release."""
    if s.kv_cache_dtype != "nvfp4" and s.prefill_kv_cache_dequant_dtype != "auto":
        raise OomkitError("ValueError: --prefill-kv-cache-dequant-dtype applies only with --kv-cache-dtype=nvfp4.")
    if s.kv_cache_dtype != "nvfp4" or not reached(v, "kv4_e2m1_dropped"):
        return None
    sm100 = cc is not None and cc[0] == 10
    requested = s.prefill_kv_cache_dequant_dtype
    if requested == "auto":
        explicit = s.prefill_attention_backend or given_backend
        by_backend = {b: d for d, b in NVFP4_PREFILL_BACKEND.items()}
        if explicit in by_backend:
            requested = by_backend[explicit]
        elif explicit is not None:
            raise OomkitError("ValueError: NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend "
                              f"{explicit!r} provides neither. (SGLang {s.engine_version}, --kv-cache-dtype nvfp4)")
        else:
            requested = "nvfp4" if sm100 else "fp8_e4m3"
    if requested == "nvfp4" and cc is not None and not sm100:
        raise OomkitError("ValueError: Native NVFP4 prefill currently requires SM100; use "
                          "--prefill-kv-cache-dequant-dtype=fp8_e4m3 on this platform. (SGLang "
                          f"{s.engine_version}, compute capability {cc[0]}.{cc[1]})")
    target = NVFP4_PREFILL_BACKEND[requested]
    if s.prefill_attention_backend is not None and s.prefill_attention_backend != target:
        raise OomkitError(f"ValueError: --prefill-kv-cache-dequant-dtype={requested} requires prefill backend "
                          f"{target!r}, but --prefill-attention-backend={s.prefill_attention_backend!r} was set. "
                          "Remove the backend option and select the KV dtype only.")
    if s.decode_attention_backend not in (None, "trtllm_mha"):
        raise OomkitError("ValueError: NVFP4 decode requires --decode-attention-backend=trtllm_mha; got "
                          f"{s.decode_attention_backend!r}. Remove the backend option; NVFP4 selects the supported "
                          "decode implementation automatically.")
    return target, "trtllm_mha"


KV4_MHA_BACKENDS = ("triton", "torch_native", "flex_attention", "trtllm_mha")


def kv4_mla_backends(v: Version) -> tuple[str, ...]:
    """server_args.py _handle_kv4_compatibility KV4_ATTENTION_MLA_BACKEND_CHOICES (0.5.20+: arg_groups/
    kv_cache_hook.py handle_kv4_compatibility)."""
    if reached(v, "kv4_mla_no_cutlass"):
        return ("flashinfer", "trtllm_mla")
    if reached(v, "kv4_recipes"):
        return ("cutlass_mla", "flashinfer", "trtllm_mla")
    return ("cutlass_mla", "flashinfer", "trtllm_mla", "flashmla")


def check_fp4_kv(lay: CacheLayout, s: SGLangSettings, backend: str, cc: tuple[int, int] | None, hip: bool) -> None:
    """The start-up checks of an FP4 KV cache that need the GPU and the attention backend: _handle_kv4_compatibility
    (0.5.7+; 0.5.20+ kv_cache_hook.py handle_kv4_compatibility): not on ROCm ("KV4 is not tested on non-CUDA
    platforms", and up to 0.5.6 is_float4_e2m1fn_x2 is false off CUDA: no FP4 pool), nvfp4 on SM100 / SM120 only,
    one backend for prefill and decode from the KV4 list: the one in force, given or the default
    _handle_attention_backend_compatibility picked just before. nvfp4 up to 0.5.20 reads FlashInfer prefill and
    trtllm_mha decode (_NVFP4_PREFILL_BACKENDS / _NVFP4_DECODE_BACKENDS), a split oomkit does not take; from 0.5.21
    the pair resolve_nvfp4_backends gives is taken (a split pair is not held to the list)."""
    if s.kv_cache_dtype not in FP4_KV_DTYPES:
        return
    v = parse_version(s.engine_version)
    name = s.kv_cache_dtype
    # SGLang takes a split pair with an FP4 cache (server_args.py _handle_kv4_compatibility 0.5.7-0.5.18,
    # arg_groups/kv_cache_hook.py 0.5.19-0.5.23: "Attention: Using KV4 with PREFILL = ... and DECODE = ..." warning,
    # none for nvfp4's FlashInfer prefill + trtllm_mha decode) and runs both (layers/attention/hybrid_attn_backend.py);
    # from 0.5.21 the cell is the recipe's over both phases' accesses (fp4_kv_cache_quant_method.py compute_cell_size:
    # nvfp4 with FlashInfer prefill holds the FP8 workspace and the linear scales, on SM100 the trtllm_mha native
    # scales too). Taken for nvfp4 from 0.5.21 (resolve_nvfp4_backends, fp4_kv_layout); any other split: refused.
    split = [f for f in ("--prefill-attention-backend", "--decode-attention-backend") if f in s.release_flags]
    recipe_pair = name == "nvfp4" and reached(v, "kv4_e2m1_dropped")  # resolve_nvfp4_backends took them
    if split and not recipe_pair:
        raise OomkitError(f"--kv-cache-dtype {name} with {' / '.join(split)} is not modelled by oomkit: SGLang "
                          "runs both backends and sizes the FP4 cell by both phases' reads (a FlashInfer prefill "
                          "adds a dequant workspace and its own scale layout); give one --attention-backend")
    if hip:
        raise OomkitError(f"RuntimeError: KV4 is not tested on non-CUDA platforms. (--kv-cache-dtype {name} on ROCm)")
    if name == "nvfp4" and cc is not None and cc[0] not in (10, 12):
        raise OomkitError("RuntimeError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use "
                          f"--kv-cache-dtype=fp4_mx_block16 for the block-size-16 FP4 recipe. (compute capability "
                          f"{cc[0]}.{cc[1]})")
    if not reached(v, "kv4_backend_check"):
        return
    seen = backend
    allowed = kv4_mla_backends(v) if lay.mla else KV4_MHA_BACKENDS
    if recipe_pair and s.prefill_attention_backend != s.decode_attention_backend:
        return  # kv_cache_hook.py handle_kv4_compatibility: a prefill / decode pair is not held to the list
    if seen not in allowed:
        kind = "MLA" if lay.mla else "MHA"
        raise OomkitError(f"AssertionError: KV4 {kind} expects attention_backend to be one of {list(allowed)}, but got "
                          f"{seen} (--kv-cache-dtype {name}; give --attention-backend)")
    if name == "nvfp4" and not reached(v, "kv4_e2m1_dropped"):
        raise OomkitError(f"--kv-cache-dtype nvfp4 in SGLang {s.engine_version} prefills with FlashInfer and decodes "
                          "with trtllm_mha (--prefill-attention-backend / --decode-attention-backend), a split oomkit "
                          "does not model")


def _vit_dims(tower) -> tuple[int | None, int | None]:
    """The vision_config figures adjust_mem_fraction_for_vlm reads: getattr(vision_config, "num_hidden_layers", 24)
    and "hidden_size" (server_args.py 0.4.10-0.5.18; arg_groups/memory_hook.py 0.5.20+). The object is transformers'
    config class, which keeps the checkpoint's keys and maps no `depth` to num_hidden_layers in the releases SGLang
    pins (4.54.1 for 0.4.10 to 5.19.0 for 0.5.23; Qwen2VL-, Qwen2_5_VL-, Qwen3VL- and Glm4vVisionConfig read in
    4.57.6, 5.18.0 and 5.19.0: attribute_map {"num_attention_heads": "num_heads"} only). So a vision_config that
    names its blocks `depth` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5) is priced as 24 layers. sglang#13075:
    Qwen2.5-VL-7B (depth 32, hidden 1280) prints a pool that needs 0.95 x 0.944 of the default, not 0.95 x 0.892."""
    vc = tower.config.get("vision_config") if isinstance(tower.config, Mapping) else None
    if isinstance(vc, Mapping) and "num_hidden_layers" not in vc and "depth" in vc:
        return None, tower.config_hidden
    return tower.config_layers, tower.config_hidden


# ---------------------------------------------------------------------------------------------------------
# Bytes per token


def kv_row(la: LayerSpec, lay: CacheLayout) -> tuple[int, int]:
    """(K, V) elements per token of one layer on one rank (memory_pool.py MHATokenToKVPool / MLATokenToKVPool)."""
    a = la.attention
    if la.kind is LayerKind.LATENT:
        return a.kv_lora_rank + a.qk_rope_head_dim, 0  # one latent row, replicated on every TP rank
    heads = _tp.kv_heads_per_rank(a.n_kv_heads, lay.attn_tp)
    return heads * a.head_dim_k, heads * a.head_dim_v


def cell_row(la: LayerSpec, lay: CacheLayout, v: Version) -> int:
    """Elements per token one layer adds to SGLang's cell_size. Before 0.5.7 the cell took head_dim twice."""
    k, vv = kv_row(la, lay)
    if la.kind is LayerKind.LATENT:
        return k
    if not reached(v, "cell_k_plus_v"):
        return 2 * k
    return k + vv


def elem_bytes(n_elements: int, lay: CacheLayout, s: SGLangSettings) -> float:
    b = n_elements * lay.kv_bytes
    if s.kv_cache_dtype in FP4_KV_DTYPES:
        b += n_elements / FP4_SCALE_BLOCK  # the FP4 pools' uint8 scales, one per 16 values (fp4_kv_layout)
    if s.kv_cache_dtype == "mxfp8":
        b += n_elements // 32  # MHATokenToKVPoolMXFP8: one scale byte per 32 elements
    return b


def cell_size(lay: CacheLayout, s: SGLangSettings, v: Version, layers: tuple[LayerSpec, ...]) -> float:
    """profile_max_num_token's cell_size (pool_configurator.py _compute_cell_size): KV bytes per token of `layers`,
    with DeepSeek V3.2's indexer keys ("Add indexer KV cache overhead for NSA models")."""
    return sum(elem_bytes(cell_row(la, lay, v), lay, s) + indexer_bytes(la, v) for la in layers)


NSA_QUANT_BLOCK = 128  # mem_cache/memory_pool.py NSATokenToKVPool.quant_block_size


def indexer_bytes(la: LayerSpec, v: Version) -> int:
    """DeepSeek V3.2 (NSA / DSA) index-key bytes per token and layer: memory_pool.py NSATokenToKVPool (DSATokenToKVPool
    from 0.5.13) index_k_with_scale_buffer, uint8, index_head_dim fp8 values + one float32 scale per 128 (128 + 4 =
    132); every rank of the attention group keeps the whole key, like the latent. A layer that reuses an earlier
    layer's indexer (GLM-5.2's IndexShare, LayerSpec indexer_shared) keeps none from 0.5.18 (ERAS
    dsa_shared_index_k_elided: DSATokenToKVPool skip_topk_layers, IndexKeyCache._layer_num_pages "0 if
    self.pool.skip_topk_layers[layer_idx]", pool_configurator.py _compute_dsa_indexer_cell_size num_indexer_layers);
    0.5.13-0.5.17 allocate it on every layer. SGLang keeps every layer's key under --enable-hisparse,
    --enable-hierarchical-cache, PD disaggregation and in the draft worker (kv_cache_configurator.py
    _should_elide_dsa_index_k), options oomkit does not model."""
    a = la.attention
    d = a.index_head_dim if a is not None else 0
    if not d or (a.indexer_shared and reached(v, "dsa_shared_index_k_elided")):
        return 0
    return d + d // NSA_QUANT_BLOCK * 4


def _nsa(la: LayerSpec) -> bool:
    """A layer of a DeepSeek NSA / DSA model, whose pool is NSATokenToKVPool (DSATokenToKVPool), with or without an
    index key of its own."""
    return bool(la.attention is not None and la.attention.index_head_dim)


def dsa_raw_latent(v: Version, cc: tuple[int, int] | None, hip: bool, architecture: str) -> bool:
    """Whether the DSA backends SGLang picks by default keep an fp8 latent row unscaled: kv_lora_rank +
    qk_rope_head_dim bytes (calculate_mla_kv_cache_dim returns the plain MLA dimension for the trtllm backends, and
    on ROCm for tilelang: model_runner_kv_cache_mixin.py 0.5.10, mem_cache/kv_cache_configurator.py 0.5.17). From
    0.5.10 an fp8_e4m3 DSA cache gets trtllm on compute capability major >= 10 (server_args.py
    _set_default_nsa_backends; arg_groups/overrides.py from 0.5.13) and tilelang on ROCm; from 0.5.17 GLM-5's
    GlmMoeDsaForCausalLM on 12.x gets flashinfer_sparse_mla instead (overrides.py is_glm_sm12_fp8), as Hopper gets
    flashmla_kv: the scaled row. --nsa-*/--dsa-*-backend and --enable-hisparse, which change the pick, are not read."""
    if not reached(v, "dsa_raw_latent_default"):
        return False
    if hip:
        return True
    if cc is None or cc[0] < 10:
        return False
    return not (cc[0] == 12 and architecture == "glm_moe_dsa" and reached(v, "glm_dsa_sm12_flashinfer"))


def row_bytes(la: LayerSpec, lay: CacheLayout, s: SGLangSettings) -> float:
    """Bytes one token physically takes in one layer's pool: K and V (or the latent) as allocated, and the NSA
    index key. An fp8 NSA latent is stored as 512 fp8 + 4 float32 scales + the 64 rope values in bf16 = 656 bytes
    (layers/attention/nsa/utils.py override kv_cache_dim), though cell_size prices it at 576; the trtllm and
    tilelang backends keep the 576 (dsa_raw_latent)."""
    ke, ve = kv_row(la, lay)
    if _nsa(la) and lay.mla and lay.kv_bytes == 1 and not s.dsa_raw_latent:
        a = la.attention
        main = a.kv_lora_rank + a.kv_lora_rank // NSA_QUANT_BLOCK * 4 + a.qk_rope_head_dim * 2
    else:
        main = elem_bytes(ke + ve, lay, s)
    return main + indexer_bytes(la, parse_version(s.engine_version))


def swa_window(lay: CacheLayout) -> int:
    return max((la.attention.window or 0) for la in lay.swa_layers) if lay.swa_layers else 0


def mamba_cache_per_req(lay: CacheLayout, s: SGLangSettings, spec: ModelSpec) -> tuple[int, int]:
    """(conv, ssm) bytes of one request's state on one rank (configs/mamba_utils.py Mamba2CacheParams
    .mamba_cache_per_req: conv (conv_dim/tp, d_conv-1) in the model dtype, temporal (heads/tp, head_dim,
    state) in mamba_ssm_dtype, float32 by default)."""
    conv_b = FLOAT_BYTES[lay.model_dtype]
    ssm_b = FLOAT_BYTES.get(s.mamba_ssm_dtype)  # --mamba-ssm-dtype takes torch's names only
    if ssm_b is None:
        raise OomkitError(f"--mamba-ssm-dtype {s.mamba_ssm_dtype}: expected float32, bfloat16 or float16")
    conv = ssm = 0
    tp = lay.attn_tp
    for la in lay.mamba_layers:
        r = la.recurrent
        if r.kind == "short_conv":
            # LFM2 / LFM2-MoE (configs/lfm2.py, configs/lfm2_moe.py mamba2_cache_params): Mamba2StateShape.create(
            # intermediate_size=hidden_size, n_groups=1, num_heads=tp, head_dim=hidden_size, state_size=0) -> conv
            # (hidden/tp, conv_L_cache - 1), an empty temporal state; conv dtype from mamba2_state_dtype
            # (SGLANG_MAMBA_CONV_DTYPE, default bfloat16), whatever the model dtype
            conv += cdiv(r.d_inner, tp) * (r.d_conv - 1) * FLOAT_BYTES["bfloat16"]
            continue
        if r.kind not in ("gated_delta_net", "mamba2"):
            raise OomkitError(f"{spec.name}: SGLang's state pool for {r.kind} layers is not modelled by oomkit")
        conv_dim = r.d_inner + 2 * r.n_group * r.d_state
        conv += cdiv(conv_dim, tp) * (r.d_conv - 1) * conv_b
        ssm += r.d_inner * r.d_state // tp * ssm_b  # (heads/tp) x head_dim x state
    return conv, ssm


# ---------------------------------------------------------------------------------------------------------
# The token pool


class NotEnoughMemory(OomkitError):
    """SGLang refuses to start: the weights leave nothing for the KV pool."""


@dataclass(frozen=True)
class SubPool:
    name: str  # "full", "swa", "mla"
    tokens: int
    n_layers: int
    k_bytes: int
    v_bytes: int


@dataclass(frozen=True)
class Pool:
    max_total_num_tokens: int
    cell_bytes: float  # bytes per token of max_total_num_tokens (SWA: full + ratio x swa)
    rest_bytes: int  # what the KV (and state) pool may take
    mem_fraction_static: float | None
    pools: tuple[SubPool, ...]
    full_tokens: int | None = None
    swa_tokens: int | None = None
    max_mamba_cache_size: int | None = None
    conv_state_bytes: int = 0
    ssm_state_bytes: int = 0
    # speculative decoding: the per-draft-token intermediate states as handle_max_mamba_cache charges them
    spec_state_bytes: int = 0
    mamba_ratio: int = 3  # _calculate_mamba_ratio: state slots per running request (mamba_running_ratio)

    @property
    def k_bytes(self) -> int:
        return sum(p.k_bytes for p in self.pools)

    @property
    def v_bytes(self) -> int:
        return sum(p.v_bytes for p in self.pools)

    @property
    def kv_bytes(self) -> int:
        return self.k_bytes + self.v_bytes

    @property
    def state_bytes(self) -> int:
        return self.conv_state_bytes + self.ssm_state_bytes + self.spec_state_bytes


def kv_pools(lay: CacheLayout, s: SGLangSettings, tokens: int, swa_tokens: int | None = None
             ) -> tuple[SubPool, ...]:
    """The buffers SGLang allocates for `tokens` (memory_pool.py _create_buffers: (size + page_size) rows per
    layer for K and for V, or one latent row for MLA; the SWA pool holds swa_tokens)."""

    def sub(name: str, layers: tuple[LayerSpec, ...], n: int) -> SubPool:
        k = vb = 0.0
        for la in layers:
            ke, ve = kv_row(la, lay)
            if _nsa(la):
                # NSATokenToKVPool: the latent (packed when fp8) and the index keys, logged together as "KV size"
                k += (n + lay.page_size) * row_bytes(la, lay, s)
                continue
            k += elem_bytes((n + lay.page_size) * ke, lay, s)
            vb += elem_bytes((n + lay.page_size) * ve, lay, s)
        return SubPool(name, n, len(layers), int(k), int(vb))

    out = []
    if lay.full_layers:
        out.append(sub("mla" if lay.mla else "full", lay.full_layers, tokens))
    if lay.swa_layers:
        out.append(sub("swa", lay.swa_layers, tokens if swa_tokens is None else swa_tokens))
    return tuple(out)


MM_KV_RESERVATION_MIB = 100  # environ.py SGLANG_VLM_CACHE_SIZE_MB (0.5.14-0.5.23)


def profile_available_bytes(s: SGLangSettings, lay: CacheLayout, avail_after_load: float | None,
                            pre_load_free: float | None, kv_budget: int | None, gpu_mib: int | None,
                            context_len: int = 0) -> tuple[float, float | None]:
    """kv_cache_configurator.py KVCacheConfigurator._profile_available_bytes (profile_max_num_token before 0.5.14):
    -> (the rest for the pools in GiB, the mem_fraction_static used; None with a --kv-memory budget).
    context_len: the served context (settings.py aiter_fraction); 0: not known, no cut."""
    if kv_budget is not None:
        return kv_budget / GiB, None
    if avail_after_load is None or pre_load_free is None:
        raise OomkitError("SGLang sizes its KV pool from free GPU memory: give the GPU memory or --kv-memory")
    mfs = s.mem_fraction_static
    if mfs is not None:
        mfs = runner_fraction(mfs, lay.vit, parse_version(s.engine_version), mm_off=lay.mm_off)
    if mfs is None:
        # the default SGLang derives, taken as it is even at or below 0 (what it keeps back for activations and
        # CUDA graphs exceeds a small GPU): server_args.py does not clamp it, so the rest comes out negative and the
        # pool check refuses the run, a verdict rather than an input error
        mfs = default_mem_fraction_static(gpu_mib, s, mla=lay.mla, vit=lay.vit, mm_off=lay.mm_off).mem_fraction_static
    elif not 0 < mfs <= 1:
        raise OomkitError(f"--mem-fraction-static must be in (0, 1], got {mfs}")
    mfs = aiter_fraction(mfs, s.attention_backend, context_len, parse_version(s.engine_version))
    # profile_max_num_token: rest_memory = available_gpu_memory - total_gpu_memory * (1 - mem_fraction_static),
    # both in GiB as floats
    rest = avail_after_load / GiB - pre_load_free / GiB * (1 - mfs)
    if lay.vit is not None and not lay.mm_off and reached(parse_version(s.engine_version), "mm_kv_reservation"):
        # _profile_available_bytes: rest_memory -= mm_runtime_reservation_gb, model_config.is_multimodal only
        # (SGLANG_VLM_CACHE_SIZE_MB, environ.py: 100; the 1,024 MiB SGLANG_MM_FEATURE_CACHE_MB joins it only with
        # --mm-feature-transport cuda_ipc / cuda_vmm, opt-in on one node: arg_groups/serving_hook.py, not taken)
        rest -= MM_KV_RESERVATION_MIB / 1024
    return rest, mfs


def _check_lfm2_release(spec: ModelSpec, v: Version) -> None:
    if spec.architecture not in ("lfm2", "lfm2moe"):
        raise OomkitError(f"{spec.name}: SGLang's state pool for short-convolution layers is modelled for LFM2 / "
                          f"LFM2-MoE only, not {spec.architecture!r}")
    check_model_release(spec, v)  # archs.py FIRST_RELEASES: models/lfm2.py, lfm2_moe.py from 0.5.9


def handle_max_mamba_cache(spec: ModelSpec, lay: CacheLayout, s: SGLangSettings, v: Version, rest_gib: float
                           ) -> tuple[float, int, int, int]:
    """handle_max_mamba_cache: the state pool takes mamba_full_memory_ratio / (1 + ratio) of the rest (0.5.4+).
    -> (rest left for KV in GiB, max_mamba_cache_size, conv bytes, ssm bytes) of the allocated pool (size + 1
    slots: memory_pool.py MambaPool keeps a padding slot)."""
    if any(la.recurrent.kind == "short_conv" for la in lay.mamba_layers):
        _check_lfm2_release(spec, v)
    conv, ssm = mamba_cache_per_req(lay, s, spec)
    per_req = conv + ssm
    if s.speculative_algorithm:
        return _handle_max_mamba_cache_spec(spec, s, v, rest_gib, conv, ssm)[:4]
    padded = reached(v, "mamba_padding_slot")
    if s.max_mamba_cache_size is not None:
        size = s.max_mamba_cache_size // (s.dp_size if s.enable_dp_attention else 1)
    else:
        if not reached(v, "mamba_ratio"):
            # 0.5.2-0.5.3 ModelRunner.__init__ (both wheels read): max_mamba_cache_size = --max-running-requests if
            # given, else 512, over dp_size under DP attention; profile_max_num_token then takes
            # max_mamba_cache_size x mamba_cache_per_req off the rest before the KV cells
            size = (s.max_running_requests if s.max_running_requests is not None else 512) \
                // (s.dp_size if s.enable_dp_attention else 1)
            if size <= 0:
                raise NotEnoughMemory("RuntimeError: max_mamba_cache_size must be positive")
            return rest_gib - size * per_req / GiB, size, (size + 1) * conv, (size + 1) * ssm
        r = s.mamba_full_memory_ratio
        budget = rest_gib * r / (1 + r) * GiB
        size = int((budget - per_req) // per_req) if padded else int(budget // per_req)
    if size <= 0:
        raise _mamba_cache_too_small(size, rest_gib, per_req)
    charged = (size + 1) * per_req if padded else size * per_req
    return rest_gib - charged / GiB, size, (size + 1) * conv, (size + 1) * ssm


def _mamba_cache_too_small(size: int, rest_gib: float, per_req: int) -> NotEnoughMemory:
    """SGLang's refusal when the state pool gets no slot (handle_max_mamba_cache, with and without speculation)."""
    return NotEnoughMemory(
        f"RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
        f"max_mamba_cache_size={size} (total_rest_memory={rest_gib:.2f} GB, mamba_cache_per_req="
        f"{per_req / MiB:.2f} MB). Try: (1) reduce --max-running-requests, (2) increase --mem-fraction-static, "
        "(3) reduce --speculative-num-draft-tokens, or (4) use GPUs with more memory.")


# server_args.py _support_mamba_cache_extra_buffer (0.5.14) / arg_groups/overrides.py _MAMBA_EXTRA_BUFFER_ARCHS
# (0.5.15-0.5.23), by oomkit's architecture names; KimiLinear (0.5.19's list, not 0.5.14's) is left out
_EXTRA_BUFFER_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe", "nemotron_h", "nemotron_h_moe", "falcon-h1",
                                 "falcon_h1", "granitehybrid", "granitemoehybrid", "bailingmoe2.5"})


def mamba_running_ratio(spec: ModelSpec, s: SGLangSettings, v: Version) -> int:
    """State slots held per running request (_calculate_mamba_ratio: MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO 3,
    + 2 under the extra_buffer radix strategy with the overlap scheduler, its ping-pong buffer). From 0.5.14
    _handle_mamba_radix_cache resolves --mamba-radix-cache-strategy auto to extra_buffer when the overlap scheduler
    is on (the default; speculative decoding keeps it) and the architecture supports it with the triton linear-
    attention backend (the default); 0.5.10 resolves auto to no_buffer (0.5.11-0.5.13 not read). Not modelled:
    --disable-radix-cache (ratio 1), --disable-overlap-schedule, --mamba-radix-cache-strategy and
    --linear-attn-backend, pipeline parallelism's overlap switch."""
    if not reached(v, "mamba_ratio"):
        return 1
    if reached(v, "mamba_extra_buffer_auto") and spec.architecture in _EXTRA_BUFFER_ARCHS:
        return 3 + 2  # MAMBA_CACHE_V2_ADDITIONAL_RATIO_OVERLAP
    return 3


def _handle_max_mamba_cache_spec(spec: ModelSpec, s: SGLangSettings, v: Version, rest_gib: float, conv: int,
                                 ssm: int) -> tuple[float, int, int, int, int]:
    """handle_max_mamba_cache with speculative decoding (kv_cache_configurator.py _handle_max_mamba_cache, 0.5.16-
    0.5.23 read; model_runner_kv_cache_mixin.py handle_max_mamba_cache, 0.5.14-0.5.15): the verify pass keeps one
    intermediate SSM state and conv window per draft token for up to capped = min(max_running_requests,
    K // 3) requests, (capped + 1) x D x mamba_cache_per_req, taken from the mamba budget with the K state slots:
    K = (budget - per_req x (1 + D)) // (per_req x (1 + D / 3)) (0.5.17+; 0.5.14-0.5.16: budget // (per_req x
    (1 + D / 3)), no padding slot). -> (rest left for KV in GiB, K, conv bytes, ssm bytes, intermediate bytes).
    The intermediate is charged as the configurator charges it; memory_pool.py MambaPool allocates the ssm part so
    and, from 0.5.19, a deduplicated conv window (D + d_conv - 2 columns), a few MiB less. ReplaySSM
    (--enable-linear-replayssm-spec) and 0.5.23's extra_per_slot are not modelled."""
    if not reached(v, "mamba_spec_joint"):
        raise OomkitError(f"speculative decoding with a hybrid Mamba/linear-attention model is not modelled by "
                          f"oomkit on SGLang {s.engine_version} (from 0.5.14 only)")
    d = s.speculative_num_draft_tokens
    if d is None:
        if algorithm(s) not in EAGLE_FAMILY:
            raise OomkitError("give --speculative-num-draft-tokens: SGLang sizes the hybrid state pool's speculative "
                              "buffers from it")
        d = speculative_params(spec, s, v)[2]
    dp = s.dp_size if s.enable_dp_attention else 1
    # server_args.py: "Max running requests is reset to 48 for speculative decoding" (layout.py sets it)
    running = (s.max_running_requests if s.max_running_requests is not None else 48) // dp
    pad = 1 if reached(v, "mamba_spec_padding") else 0
    per_req = conv + ssm
    ratio = mamba_running_ratio(spec, s, v)
    if s.max_mamba_cache_size is not None:
        size = s.max_mamba_cache_size // dp
    else:
        r = s.mamba_full_memory_ratio
        budget = rest_gib * r / (1 + r) * GiB
        size = int((budget - pad * per_req * (1 + d)) // (per_req * (1 + d / ratio)))
    if size <= 0:
        raise _mamba_cache_too_small(size, rest_gib, per_req)
    capped = min(running, size // ratio)
    inter = (capped + pad) * d * per_req
    slots = size + pad
    rest = rest_gib - inter / GiB - slots * per_req / GiB
    return rest, size, (size + 1) * conv, (size + 1) * ssm, inter


def token_charge_swa(lay: CacheLayout, s: SGLangSettings, v: Version) -> float:
    """Bytes of the rest one token of max_total_num_tokens takes with the two hybrid-SWA pools (the cell of
    set_num_tokens_hybrid_swa, per token of the full pool)."""
    ratio = s.swa_full_tokens_ratio
    if reached(v, "swa_split_by_bytes"):
        return cell_size(lay, s, v, lay.full_layers) + ratio * cell_size(lay, s, v, lay.swa_layers)
    # <= 0.5.8: tokens = rest // (first layer's cell x all layers), full = tokens x layers / (ratio x swa + full)
    n_all = len(lay.full_layers) + len(lay.swa_layers)
    first = lay.full_layers[0] if lay.full_layers else lay.swa_layers[0]
    cell = elem_bytes(cell_row(first, lay, v), lay, s) * n_all
    return cell * (ratio * len(lay.swa_layers) + len(lay.full_layers)) / n_all


def set_num_tokens_hybrid_swa(lay: CacheLayout, s: SGLangSettings, v: Version, rest_bytes: int
                              ) -> tuple[int, int, int, float]:
    """Hybrid sliding-window pools: (max_total_num_tokens, full_tokens, swa_tokens, cell)."""
    page, ratio = lay.page_size, s.swa_full_tokens_ratio
    full_cell = cell_size(lay, s, v, lay.full_layers)
    swa_cell = cell_size(lay, s, v, lay.swa_layers)
    if reached(v, "swa_split_by_bytes"):
        # pool_configurator.py HybridSWAPoolConfigurator: cell = full + ratio * swa (each with its own heads/dims)
        cell = full_cell + ratio * swa_cell
        tokens = int(rest_bytes // cell)
        if s.max_total_tokens is not None:
            tokens = min(tokens, s.max_total_tokens)
        full = tokens // page * page
        swa = int(full * ratio) // page * page
        if 0 < swa <= swa_window(lay) + page:
            raise OomkitError(f"ValueError: SWA pool ({swa} tokens) cannot hold even one request: the prefill "
                              f"admission floor is sliding_window_size ({swa_window(lay)}) + page_size ({page}). "
                              "Increase --swa-full-tokens-ratio or the total KV budget.")
        return full, full, swa, cell
    # <= 0.5.8 model_runner_kv_cache_mixin.py set_num_tokens_hybrid_swa: a cell of every layer priced like a full
    # layer; the tokens of all layers are then shared out with swa = ratio x full
    all_layers = lay.full_layers + lay.swa_layers
    first = lay.full_layers[0] if lay.full_layers else lay.swa_layers[0]
    cell = elem_bytes(cell_row(first, lay, v), lay, s) * len(all_layers)
    tokens = int(rest_bytes // cell)
    if s.max_total_tokens is not None:
        tokens = min(tokens, s.max_total_tokens)
    tokens = tokens // page * page
    total = tokens * len(all_layers)
    full = int(total / (ratio * len(lay.swa_layers) + len(lay.full_layers)))
    swa = int(full * ratio)
    full, swa = full // page * page, swa // page * page
    return full, full, swa, cell


def profile_max_num_token(spec: ModelSpec, lay: CacheLayout, s: SGLangSettings, v: Version, rest_bytes: int,
                          draft_layers: int = 0) -> tuple[int, float]:
    """One full pool: (max_total_num_tokens, cell_size). rest // cell_size, capped by --max-total-tokens and
    page-aligned (init_memory_pool). draft_layers: an EAGLE draft's layers priced at the target's per-layer size
    (0.5.14+ pool_configurator.py DefaultPoolConfigurator: cell += int(cell x eagle_draft_num_layers / num_layers);
    draft.py)."""
    cell = cell_size(lay, s, v, lay.full_layers)
    if draft_layers and lay.full_layers:
        cell += int(cell * draft_layers / len(lay.full_layers))
    cell += lay.token_extra
    if cell <= 0:
        max_tokens = s.max_total_tokens or spec.n_ctx_train
    else:
        max_tokens = int(rest_bytes // cell)
    if s.max_total_tokens is not None:
        max_tokens = min(max_tokens, s.max_total_tokens)
    return max_tokens // lay.page_size * lay.page_size, cell


def size_pool(spec: ModelSpec, s: SGLangSettings, *, avail_after_load: float | None = None,
              pre_load_free: float | None = None, kv_budget: int | None = None, gpu_mib: int | None = None,
              lay: CacheLayout | None = None, draft_layers: int = 0, context_len: int = 0) -> Pool:
    """The KV (and Mamba state) pool of one rank (model_runner.py init_memory_pool).

    avail_after_load / pre_load_free: free bytes after and before the weights loaded (the "Load weight end/begin.
    avail mem" lines; SGLang takes the minimum over ranks). kv_budget: size from this many bytes instead
    (oomkit's --kv-memory). gpu_mib: memory.total for the mem_fraction_static default.
    """
    v = parse_version(s.engine_version)
    lay = lay or cache_layout(spec, s)
    rest_gib, mfs = profile_available_bytes(s, lay, avail_after_load, pre_load_free, kv_budget, gpu_mib, context_len)
    max_mamba = None
    conv_state = ssm_state = 0
    spec_state = 0
    if lay.mamba_layers and s.speculative_algorithm:
        if any(la.recurrent.kind == "short_conv" for la in lay.mamba_layers):
            _check_lfm2_release(spec, v)
        rest_gib, max_mamba, conv_state, ssm_state, spec_state = _handle_max_mamba_cache_spec(
            spec, s, v, rest_gib, *mamba_cache_per_req(lay, s, spec))
    elif lay.mamba_layers:
        rest_gib, max_mamba, conv_state, ssm_state = handle_max_mamba_cache(spec, lay, s, v, rest_gib)
    if rest_gib <= 0:
        raise NotEnoughMemory(_no_memory_message(v, mfs, avail_after_load, pre_load_free))
    rest_bytes = int(rest_gib * GiB)
    full_tokens = swa_tokens = None
    if lay.swa_layers:
        max_tokens, full_tokens, swa_tokens, cell = set_num_tokens_hybrid_swa(lay, s, v, rest_bytes)
    else:
        max_tokens, cell = profile_max_num_token(spec, lay, s, v, rest_bytes, draft_layers)
    if max_tokens <= 0:
        raise NotEnoughMemory(_no_memory_message(v, mfs, avail_after_load, pre_load_free, tokens=True))
    pools = kv_pools(lay, s, full_tokens if full_tokens is not None else max_tokens, swa_tokens)
    return Pool(max_total_num_tokens=max_tokens, cell_bytes=cell, rest_bytes=rest_bytes, mem_fraction_static=mfs,
                pools=pools, full_tokens=full_tokens, swa_tokens=swa_tokens, max_mamba_cache_size=max_mamba,
                conv_state_bytes=conv_state, ssm_state_bytes=ssm_state, spec_state_bytes=spec_state,
                mamba_ratio=mamba_running_ratio(spec, s, v))


def _no_memory_message(v: Version, mfs: float | None, avail: float | None, pre: float | None,
                       tokens: bool = False) -> str:
    if reached(v, "no_memory_message") and not tokens and avail is not None and pre:
        # model_runner_kv_cache_mixin.py profile_max_num_token (0.5.14), kv_cache_configurator.py (0.5.20+)
        minimum = 1 - avail / pre
        return (f"ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={mfs}. "
                f"Raise --mem-fraction-static above {-(-minimum * 1000 // 1) / 1000:.3f} (minimum viable = "
                f"1 - available/pre = {minimum:.4f}). If using speculative decoding, draft weights are now counted.")
    # 0.5.8+ appends the fraction in force
    return ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
            + (f" Current value: self.server_args.mem_fraction_static={mfs}" if v[:3] >= (0, 5, 8) else ""))


def resize_pool(p: Pool, s: SGLangSettings, lay: CacheLayout, tokens: int) -> Pool:
    """The same pool cut to `tokens` (init_memory_pool: pipeline ranks agree on the smallest token count)."""
    swa = None if p.swa_tokens is None else int(tokens * s.swa_full_tokens_ratio) // lay.page_size * lay.page_size
    return replace(p, max_total_num_tokens=tokens, full_tokens=tokens if p.full_tokens is not None else None,
                   swa_tokens=swa, pools=kv_pools(lay, s, tokens, swa))


def max_running_requests(pool: Pool, s: SGLangSettings, context_len: int, v: Version) -> tuple[int, int]:
    """(max_running_requests, req_to_token rows). init_memory_pool / kv_cache_configurator.py
    resolve_max_num_reqs: min(max(int(tokens / context_len * 512), 2048), 4096) unless --max-running-requests,
    then at most tokens // 2 (tp_worker.py), at most max_mamba_cache_size // ratio for hybrid models."""
    tokens = pool.max_total_num_tokens
    estimated = min(max(int(tokens / context_len * 512), 2048), 4096)
    user = s.max_running_requests
    if user is not None:
        user = max(1, user // (s.dp_size if s.enable_dp_attention else 1))
    max_num_reqs = user if user is not None else estimated
    if pool.max_mamba_cache_size is not None:
        # MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO 3 from 0.5.4 (0.5.4.post1 read), 5 with extra_buffer
        # (mamba_running_ratio); 0.5.2-0.5.3 cap at the pool itself, min(max_num_reqs, max_mamba_cache_size) (0.5.2
        # and 0.5.3.post1 model_runner.py read)
        max_num_reqs = min(max_num_reqs, pool.max_mamba_cache_size // pool.mamba_ratio)
    rows = max_num_reqs + (0 if reached(v, "req_to_token_unpadded") else 1)  # 0.4.6: ReqToTokenPool(size + 1)
    running = min(tokens // 2 if user is None else user, rows)
    if pool.max_mamba_cache_size is not None:
        running = min(running, max_num_reqs)
    return max(running, 0), rows


def check_release_flags(s: SGLangSettings) -> list[str]:
    """The typed flags that only some releases' parsers have (args.parse_args), held against s.engine_version: one
    its server_args.py does not define is refused as its argparse refuses it, naming the releases that have it
    (engines/release_flags.py, read from the wheels by tools/build_sglang_flags.py); an abbreviation kept with its
    candidates is matched against that parser's flags (release_flags.resolve_abbreviations). -> the notes of the
    flags that parser takes but marks deprecated (release_flags.deprecation_notes: 0.5.14's --nsa-prefill-backend,
    a DeprecatedAliasStoreAction that logs its warning at launch)."""
    refuse_unknown("sglang_flags.json", s.release_flags, parse_version(s.engine_version), "launch_server.py",
                   f"SGLang {s.engine_version}")
    resolve_abbreviations("sglang_flags.json", s.abbreviations, parse_version(s.engine_version), "launch_server.py",
                          f"SGLang {s.engine_version}")
    # the release's own number, its post release included (0.4.6.post5 deprecates --enable-flashmla)
    return deprecation_notes("sglang_flags.json", s.release_flags, release_key(str(s.engine_version)),
                             f"SGLang {s.engine_version}")
