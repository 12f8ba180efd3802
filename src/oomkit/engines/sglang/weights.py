"""Which weight bytes each SGLang rank loads ("Load weight end. ... mem usage"): the tensors of its pipeline stage,
split over tensor parallelism (engines/_tp.py) by each module's own group (attention over the attention-TP group
under --enable-dp-attention, the MLP and MoE over the whole TP group, experts over --ep-size), converted to
--dtype, optionally quantized online."""

from __future__ import annotations

from dataclasses import replace

from ...errors import SettingsError
from ...memo import ByObject
from ...model.hf_config import ST_DENSE_TENSORS
from ...model.spec import LayerSpec, ModelSpec, TensorSpec
from ...model.weights import per_layer_sum
from ...quant.dtypes import FLOAT_BYTES, float_bytes
from ...units import cdiv, round_up
from .. import _tp
from ..vllm.allocator import reserved_for
from ..vllm.weights import param_key
from .kv import CacheLayout
from .settings import SGLangSettings, parse_version, reached

# --quantization methods that quantize an unquantized checkpoint's linear weights at load -> bytes per weight
_ONLINE_QUANT = {"fp8": 1, "w8a8_fp8": 1, "w8a8_int8": 1}


# EmbeddingGemma's sentence-transformers Dense modules (model/hf_config.py ST_DENSE_TENSORS) are left out, as
# before the spec held them: they sit in 2_Dense/ and 3_Dense/ beside the checkpoint, and no SGLang code that loads
# them was found (vLLM's pooling adapter does: engines/vllm/weights.py). Unverified either way.
_NOT_LOADED = ST_DENSE_TENSORS


def stage_tensors(spec: ModelSpec, stage: tuple[LayerSpec, ...], first: bool, last: bool) -> tuple[TensorSpec, ...]:
    """The tensors one pipeline stage loads: its layers', the embedding on the first (and, tied, the last), the
    final norm and lm_head on the last."""
    ids = {la.index for la in stage}
    n_trunk = spec.n_trunk_layers
    out = []
    for t in spec.weights.tensors:
        if t.name in _NOT_LOADED:
            continue
        if t.layer is not None:
            if t.layer in ids:
                out.append(t)
            elif t.layer >= n_trunk and last:
                continue  # next-n / MTP weights are loaded by the draft worker only
        elif t.name.startswith("token_embd"):
            if first or (last and spec.tied_embeddings):
                out.append(t)
        elif last:
            out.append(t)
    return tuple(out)


def _param_order(key: tuple) -> tuple:
    """Creation order: the embedding first, the decoder layers in order (each by param_key), the rest last."""
    layer, k = key
    if layer is None:
        return (0 if "embd" in k else 2, 0, str(k))
    return (1, layer, k)


def rope_cache_bytes(spec: ModelSpec, s: SGLangSettings, layers: tuple[LayerSpec, ...], dtype_bytes: int,
                     hip: bool = False) -> int:
    """The rotary embedding's cos_sin_cache (layers/rotary_embedding.py RotaryEmbedding, a buffer built with the model,
    inside "Load weight end ... mem usage"): max_position_embeddings x rotary_dim, one per distinct rotary width
    (get_rope caches the instances), float32 on CUDA from 0.4.3 (settings.ERAS rope_cache_fp32), the model dtype
    before and on ROCm."""
    dims = {(a.qk_rope_head_dim if a.kv_lora_rank else a.head_dim_k) for layer in layers
            if (a := layer.attention) is not None}
    if not dims or not spec.n_ctx_train:
        return 0
    copies = 1
    if spec.architecture == "gemma3":
        # models/gemma3_causal.py: up to 0.5.9 Gemma3TextModel builds two transformers-style Gemma3RotaryEmbedding
        # modules (rotary_emb, rotary_emb_local: an inv_freq buffer, cos / sin computed in each forward), no
        # cos_sin_cache (the March 2025 port, 0.5.3, 0.5.8, 0.5.9 read); from 0.5.10 each Gemma3Attention calls
        # get_rope with rope_type default and its own base (rope_local_base_freq on the sliding layers, rope_theta on
        # the global ones), so two cached instances of max_position x head_dim (0.5.10, 0.5.14, 0.5.23 read)
        if not reached(parse_version(s.engine_version), "gemma3_get_rope"):
            return 0
        copies = len({layer.attention.window is not None for layer in layers if layer.attention is not None})
    elif spec.architecture == "olmo2":
        # models/olmo2.py (Olmo 3, 0.5.5-0.5.23 read): the sliding layers pass rope_scaling {"rope_type": "default"},
        # the full ones config.rope_scaling, and get_rope keys its cache on them: two instances when both kinds are
        # present. Olmo 3's YaRN cache is original_max_position_embeddings x factor rows (8,192 x 8), its
        # max_position_embeddings
        copies = len({layer.attention.window is not None for layer in layers if layer.attention is not None})
    factor = spec.partial_rotary_factor or (spec.rope_scaling.partial_rotary_factor if spec.rope_scaling else None)
    width = sum(int(d * (factor or 1.0)) for d in dims)
    fp32 = not hip and reached(parse_version(s.engine_version), "rope_cache_fp32")
    return copies * spec.n_ctx_train * width * (4 if fp32 else dtype_bytes)


def rank_weights(spec: ModelSpec, s: SGLangSettings, lay: CacheLayout, tensors: tuple[TensorSpec, ...] | None = None,
                 towers: bool = True, cc: tuple[int, int] | None = None, shared_whole: bool = False,
                 rope: int = 0, hip: bool = False) -> tuple[int, list[str]]:
    """Bytes one TP rank loads ("Load weight end. ... mem usage"), and labels; `towers`: this rank holds the
    multimodal encoders (the first pipeline stage); `cc`: the GPUs' compute capability (MXFP4 expert padding);
    `shared_whole`: the shared experts are fused into the routed ones as tp_size replicas (shared_experts_replicated);
    `hip`: a ROCm GPU (aiter_shuffled_experts_held)."""
    labels: list[str] = []
    tensors = tuple(t for t in spec.weights.tensors if t.name not in _NOT_LOADED) if tensors is None else tensors
    src = float_bytes(spec.weights.format)  # None: a quantized checkpoint, loaded as stored
    dst = FLOAT_BYTES[lay.model_dtype]
    quant = (s.quantization or "").lower() or None
    total = 0
    if shared_whole:
        labels.append(f"the shared expert fused into the MoE as {s.tp_size} replicas (n_share_experts_fusion)")
    held = src is not None and quant == "fp8" and experts_held_before_quantization(spec, s)
    if held:
        labels.append(f"--quantization fp8: the {lay.model_dtype} routed experts stay referenced "
                      "(routed_experts_weights_of_layer) beside their fp8 copies")
    shuffled = src is not None and quant is None and aiter_shuffled_experts_held(spec, s, hip)
    if shuffled:
        labels.append("ROCm, AITER MoE: the routed experts stay referenced (routed_experts_weights_of_layer) beside "
                      "their shuffled copies")
    params: dict[tuple, int] = {}  # the fused parameter (qkv_proj, gate_up_proj, w13 ...) -> one rank's bytes
    indexer: dict[int, int] = {}  # a layer -> its DSA indexer's bytes on one rank
    for t in tensors:
        b = tensor_rank_bytes(t, spec, s, lay.attn_tp, shared_whole)
        if t.dtype.lower() == "mxfp4" and "_exps" in t.name and len(t.shape) == 3:
            b = b * mxfp4_padded(t, s, cc) // (t.shape[0] * t.shape[1])
        if src is not None and src != dst:
            b = b * dst // src  # loaded in --dtype (float32 checkpoints load as float16 with auto)
        if src is not None and quant in _ONLINE_QUANT and _online_quantized(t):
            if held and "_exps" in t.name:
                total += b  # the unquantized parameter, still referenced
            b = b * _ONLINE_QUANT[quant] // dst
        if shuffled and "_exps" in t.name:
            total += b  # the unshuffled parameter, still referenced
        total += b + mla_absorbed_bytes(t, spec, s, lay, src is None, quant)
        if t.layer is not None and ".indexer." in t.name:
            indexer[t.layer] = indexer.get(t.layer, 0) + b
        key = (t.layer, param_key(t.name)) if t.layer is not None else (None, t.name)
        params[key] = params.get(key, 0) + b
    # "mem usage" is the free memory lost over the load after torch.cuda.empty_cache() (utils.py
    # get_available_gpu_memory, 0.3 -> 0.5.x): the caching allocator's segments, each parameter over 10 MiB in its own
    # rounded up to 2 MiB, the smaller ones packed in 20 MiB and 2 MiB segments (vllm/allocator.py reserved_for).
    # Walked for a float checkpoint loaded as stored, whose parameters are its tensors' bytes exactly; a quantized
    # one's byte counts carry its scales (separate, smaller parameters) and its repacking frees and reallocates
    if src is not None and quant is None:
        sizes = [params[k] for k in sorted(params, key=_param_order)]
        total += reserved_for(sizes) - sum(sizes)
    total += _shared_indexers(spec, s, tensors, indexer, labels)
    index = wna16_rocm_index_bytes(spec, s, tensors, hip)
    if index:
        total += index
        labels.append("ROCm, compressed-tensors weight-only int MoE (CompressedTensorsWNA16TritonMoE): the g_idx and "
                      "sort-index int32 parameters stay beside the experts")
    total += rope  # rope_cache_bytes, the caller's
    if towers:
        total += tower_rank_bytes(spec, s, lay)
    if quant and src is not None and quant not in _ONLINE_QUANT:
        labels.append(f"--quantization {quant} on an unquantized checkpoint: weights counted as stored")
    elif quant in _ONLINE_QUANT and src is not None:
        labels.append(f"--quantization {quant}: linear weights quantized online to 1 byte (scales not counted)")
    return total, labels


def _shared_indexers(spec: ModelSpec, s: SGLangSettings, tensors: tuple[TensorSpec, ...], indexer: dict[int, int],
                     labels: list[str]) -> int:
    """Before 0.5.18 SGLang builds the DSA Indexer module in every attention layer (models/deepseek_v2.py
    DeepseekV2AttentionMLA: "if self.use_dsa: self.indexer = Indexer(...)", 0.5.17 wheel), so the layers of GLM-5.2's
    IndexShare that reuse an earlier layer's top-k, whose checkpoint carries no indexer (LayerSpec indexer_shared),
    hold one allocated but not loaded; from 0.5.18 it is built only where "not self.skip_topk or is_nextn" (ERAS
    dsa_shared_index_k_elided, the same release that stops allocating their index keys). Each is priced as an
    owning layer's indexer on this rank (the same Indexer, quant_config and exclusions)."""
    if reached(parse_version(s.engine_version), "dsa_shared_index_k_elided") or not indexer:
        return 0
    held = {t.layer for t in tensors if t.layer is not None}
    shared = [i for i, la in enumerate(spec.layers) if i in held and la.attention is not None
              and la.attention.index_head_dim and la.attention.indexer_shared]
    if not shared:
        return 0
    labels.append(f"{len(shared)} shared-indexer layers built with an Indexer of their own (not loaded)")
    return indexer[min(indexer)] * len(shared)


def mxfp4_padded(t: TensorSpec, s: SGLangSettings, cc: tuple[int, int] | None) -> int:
    """The (row x column) area one MXFP4 expert matrix takes as SGLang lays it out for its MoE kernel
    (layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights): on SM100 (B200) FlashInfer's kernel, the default
    for gpt-oss there (server_args.py: "Detected SM100 and MXFP4 quantization format ... enabling FlashInfer MXFP4
    MOE kernel"), pads the per-rank intermediate size and the hidden size to 256 (128 from 0.5.18); Hopper's
    triton_kernels pad the intermediate size to 32 only (gpt-oss's 2880 is a multiple). Unknown GPUs: unpadded."""
    k, n, _ = t.shape  # GGUF order: the row (reduction) dimension first
    down = "ffn_down_exps" in t.name
    hidden, inter = (n, k) if down else (k, n)
    if cc is not None and cc[0] == 10:
        align = 128 if reached(parse_version(s.engine_version), "mxfp4_sm100_pad_128") else 256
        moe_tp = max(1, s.tp_size // max(1, moe_ep_size(s)))
        hidden = round_up(hidden, align)
        inter = round_up(cdiv(inter, moe_tp), align) * moe_tp
    return hidden * inter


def tower_rank_bytes(spec: ModelSpec, s: SGLangSettings, lay: CacheLayout) -> int:
    """The multimodal encoders one rank loads (model/towers.py), in the model dtype: SGLang builds the vision tower
    beside the language model and shards its linear layers over the TP group (models/qwen2_5_vl.py
    Qwen2_5_VisionBlock, gemma3_mm.py SiglipVisionModel, mllama4.py: ColumnParallelLinear / RowParallelLinear /
    QKVParallelLinear), whole on every rank with --mm-enable-dp-encoder (use_data_parallel: parallel_group
    "replicated"); --language-only loads no encoder. Llama 4 (ERAS llama4_vision_gated): up to 0.4.9 mllama4.py
    builds transformers' Llama4VisionModel and Llama4MultiModalProjector (plain nn modules, whole on every rank) in
    Llama4ForConditionalGeneration.__init__ whatever enable_multimodal says (0.4.5.post3, 0.4.6.post5, 0.4.7-0.4.9
    read); from 0.4.10 it builds them only when server_args.enable_multimodal is set (has_vision: None by default, so
    none; 0.4.10, 0.5.10 read), so none unless --enable-multimodal (then sharded as above)."""
    if s.language_only or not spec.towers:
        return 0
    dtype_bytes = FLOAT_BYTES[lay.model_dtype]
    tp = 1 if s.mm_enable_dp_encoder else s.tp_size
    if spec.architecture == "llama4":
        if reached(parse_version(s.engine_version), "llama4_vision_gated"):
            if lay.mm_off:
                return 0
        else:
            tp = 1
    return sum(_moonvit_rank_bytes(t, dtype_bytes, tp) if t.family == "moonvit" else -(-t.nbytes(dtype_bytes) // tp)
               for t in spec.towers)


def _moonvit_rank_bytes(t, dtype_bytes: int, tp: int) -> int:
    """MoonViT on one rank. Kimi-K2.5 (models/kimi_k25.py, 0.5.9, 0.5.10 read): MoonViTEncoderLayer's VisionAttention
    (QKVParallelLinear + RowParallelLinear) is split over the TP group, while its MLP2 (models/kimi_vl_moonvit.py:
    two nn.Linear), the patch embedding, position grid and norms and K2VLMultiModalProjector (ReplicatedLinear) are
    whole on every rank. Kimi-VL (models/kimi_vl_moonvit.py MoonVitEncoderLayer wqkv / wo, kimi_vl.py
    KimiVLMultiModalProjector): every Linear is a plain nn.Linear, the whole tower on every rank."""
    if tp <= 1 or t.config.get("model_type") != "kimi_k25":
        return t.nbytes(dtype_bytes)
    vc = t.config.get("vision_config") or {}
    h = int(vc.get("vt_hidden_size", vc.get("hidden_size", 0)) or 0)
    n = int(vc.get("vt_num_hidden_layers", vc.get("num_hidden_layers", 0)) or 0)
    attn = n * 4 * (h * h + h)  # q, k, v, proj with bias, as model/towers.py _moonvit counts them
    return (t.params - attn) * dtype_bytes + -(-attn * dtype_bytes // tp)


# The MLA up-projection (kv_b_proj; the inventory's attn_k_b / attn_v_b halves, or attn_kv_b whole)
_KV_B = ("attn_k_b", "attn_v_b", "attn_kv_b")


def mla_absorbed_bytes(t: TensorSpec, spec: ModelSpec, s: SGLangSettings, lay: CacheLayout, quantized: bool,
                       quant: str | None) -> int:
    """The absorbed-MLA copies SGLang keeps beside kv_b_proj (models/deepseek_v2.py DeepseekV2ForCausalLM
    .post_load_weights, 0.4.x-0.5.2; models/deepseek_common/deepseek_weight_loader.py from 0.5.x to 0.5.23): the
    weight is split into w_kc [heads, qk_nope, kv_lora] and w_vc [heads, kv_lora, v_head], each made contiguous
    (two new tensors, as large as kv_b_proj together), while kv_b_proj itself stays for the MHA prefill path. An FP8
    128x128 block checkpoint is first dequantized to bfloat16 (block_quant_dequant; SGL_USE_DEEPGEMM_BMM, off by
    default, keeps fp8), int8 and AWQ likewise; per-tensor / per-channel fp8 and other block sizes are requantized
    per tensor and stay 1 byte. The heads are those of the rank's attention-TP group."""
    if not any(f".{k}." in t.name for k in _KV_B) or t.layer is None:
        return 0
    la = spec.layers[t.layer] if t.layer < spec.n_layers else None
    if la is None or la.attention is None or not la.attention.kv_lora_rank:
        return 0
    fmt = spec.weights.format.lower()
    # "fp8-block": the inventory keeps no block size; every MLA checkpoint published in it uses [128, 128]
    one_byte = (quantized and fmt.startswith("fp8") and fmt != "fp8-block") or (not quantized and quant in _ONLINE_QUANT)
    dst = 1 if one_byte else FLOAT_BYTES[lay.model_dtype]
    return _tp.tensor_bytes_per_rank(replace(t, nbytes=t.n_elements * dst), spec, lay.attn_tp)


def all_to_all_moe(s: SGLangSettings) -> bool:
    """An all-to-all MoE dispatcher: --moe-a2a-backend deepep / mooncake / flashinfer (0.4.x --enable-deepep-moe)."""
    return s.enable_deepep_moe or (s.moe_a2a_backend or "").lower() in ("deepep", "mooncake", "flashinfer")


def moe_ep_size(s: SGLangSettings) -> int:
    """server_args.py: --ep-size, or tp_size when an all-to-all MoE backend is chosen (`if self.moe_a2a_backend
    == "deepep"` / "mooncake" / "flashinfer": self.ep_size = self.tp_size; 0.4.x --enable-ep-moe did the same)."""
    if s.enable_ep_moe or all_to_all_moe(s):
        return s.tp_size
    return s.ep_size


def wna16_rocm_index_bytes(spec: ModelSpec, s: SGLangSettings, tensors: tuple[TensorSpec, ...], hip: bool) -> int:
    """On ROCm a compressed-tensors weight-only int MoE ("pack-quantized", _is_wNa16_group_channel) gets
    CompressedTensorsWNA16TritonMoE (compressed_tensors.py get_moe_scheme, from 0.5.9): it inherits
    CompressedTensorsWNA16MoE.create_weights, which registers w13_weight_g_idx and w13_g_idx_sort_indices
    [num_experts, hidden_size] and w2_weight_g_idx and w2_g_idx_sort_indices [num_experts,
    intermediate_size_per_partition], all int32 (schemes/compressed_tensors_wNa16_moe.py), and its
    process_weights_after_loading only repacks the weights and scales, so the four stay allocated (the Marlin path
    of CUDA replaces them by empty tensors when there is no act-order). 0.5.9, 0.5.10, 0.5.14, 0.5.17, 0.5.22 read.
    Per MoE layer and rank: 2 x local experts x (hidden + intermediate / moe-TP) x 4 B."""
    if not hip or spec.weights.format.lower() != "ct-pack-quantized" \
            or not reached(parse_version(s.engine_version), "wna16_rocm_triton_moe"):
        return 0
    ep = moe_ep_size(s)
    moe_tp = max(1, s.tp_size // ep)
    total = 0
    for t in tensors:
        if t.layer is None or len(t.shape) != 3 or not t.name.endswith(("ffn_down_exps.weight",)):
            continue
        inter, hidden, experts = t.shape  # down: [n_ff_expert, n_embd, n_experts] in the inventory's order
        total += 2 * (experts // ep) * (hidden + inter // moe_tp) * 4
    return total


def experts_held_before_quantization(spec: ModelSpec, s: SGLangSettings) -> bool:
    """The model's load_weights ends by keeping `x.data` of every routed-expert parameter
    (`self.routed_experts_weights_of_layer = {layer_id: mlp.get_moe_weights() ...}`, for the expert-location
    recorder), and model_loader/loader.py load_weights_and_postprocess runs quant_method.process_weights_after_loading
    only after it: with --quantization fp8 on an unquantized checkpoint, Fp8MoEMethod then replaces w13_weight /
    w2_weight by new fp8 tensors while the dict still holds the originals, so both stay in GPU memory. Eager in
    models/qwen3_moe.py from 0.4.6.post5 to 0.5.8 (a LazyValue from 0.5.9) and in models/deepseek_v2.py
    post_load_weights in 0.4.6.post5 only (a LazyValue from 0.4.7); 0.4.6.post4 and before keep no such dict."""
    v = parse_version(s.engine_version)
    if not reached(v, "experts_dict_eager"):
        return False
    if spec.architecture == "qwen3moe":
        return not reached(v, "experts_dict_lazy_qwen3")
    if spec.architecture == "deepseek2":
        return not reached(v, "experts_dict_lazy_deepseek")
    return False


def aiter_shuffled_experts_held(spec: ModelSpec, s: SGLangSettings, hip: bool) -> bool:
    """On ROCm with SGLANG_USE_AITER (the ROCm images' default) UnquantizedFusedMoEMethod.process_weights_after_loading
    (layers/quantization/unquant.py, 0.5.3-0.5.9 read) replaces w13_weight / w2_weight by aiter shuffle_weight copies
    and empties the cache; the originals stay referenced where the model keeps them eagerly
    (experts_held_before_quantization: routed_experts_weights_of_layer holds their `x.data`, filled in load_weights,
    which model_loader/loader.py runs before process_weights_after_loading), so a bf16 MoE holds its routed experts
    twice. sglang#18262 (5 layers of Qwen3-30B-A3B on an MI355X, 0.5.7 image): mem usage=12.79 GB against 7.03 GiB
    without them. Unquantized checkpoints only: the fp8 MoE methods' ROCm paths were not read for this."""
    return hip and reached(parse_version(s.engine_version), "aiter_moe_shuffle") \
        and experts_held_before_quantization(spec, s)


def shared_experts_replicated(spec: ModelSpec, s: SGLangSettings, cc: tuple[int, int] | None, hip: bool) -> bool:
    """0.4.5.post2-0.4.6.post5 models/deepseek_v2.py DeepseekV2ForCausalLM.determine_n_share_experts_fusion: with
    --n-share-experts-fusion left at 0, DeepSeek V3/R1 (DeepseekV3ForCausalLM with 256 routed experts) without DeepEP
    on a device whose torch.cuda.get_device_capability() is at least (9, 0) sets n_share_experts_fusion = tp_size
    (0.4.6.post4 adds `_is_cuda`: ROCm keeps the shared MLP; ROCm's gfx9 parts report (9, x) before that).
    DeepseekV2MoE then builds its FusedMoE / EPMoE with n_routed_experts + tp_size experts and no shared_experts MLP,
    and load_weights clones the shared expert into experts 256..256 + tp_size - 1 ("Cloning N replicas of the shared
    expert into MoE"): split like the routed experts (their intermediate over the MoE-TP ranks, or whole experts over
    EP ranks), the tp_size replicas put one whole shared expert on every rank where the MLP held 1 / tp of it. From
    0.4.7 one replica is fused (num_fused_shared_experts = n_shared_experts), as large a share per rank as the MLP."""
    v = parse_version(s.engine_version)
    if not reached(v, "shared_fusion_tp_replicas") or reached(v, "shared_fusion_one_replica"):
        return False
    if s.enable_deepep_moe or s.tp_size <= 1 or spec.architecture != "deepseek2":
        return False
    experts = max((la.ffn.n_experts for la in spec.trunk_layers if la.ffn is not None), default=0)
    if experts != 256 or not any("_shexp" in t.name for t in spec.weights.tensors):
        return False
    if hip:
        return not reached(v, "shared_fusion_cuda_only")
    return cc is not None and tuple(cc) >= (9, 0)


def tensor_rank_bytes(t: TensorSpec, spec: ModelSpec, s: SGLangSettings, attn_tp: int,
                      shared_whole: bool = False) -> int:
    """Bytes of tensor t on one rank, by the group its module is sharded over (layers/dp_attention.py:
    attn_tp_size = tp_size // dp_size under --enable-dp-attention):
    - attention projections: the attention-TP group (each DP-attention rank holds its group's share);
    - the embedding: whole on every rank under DP attention (models/deepseek_v2.py, llama.py, qwen2_moe.py ...
      VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled())), else split by tp;
    - lm_head: ParallelLMHead over the whole TP group, the attention-TP group with --enable-dp-lm-head
      (use_attn_tp_group);
    - dense MLP and shared experts: the whole TP group (--moe-dense-tp-size overrides);
    - routed experts: num_experts // ep_size whole experts, each split by moe_tp_size = tp_size // ep_size
      (distributed/parallel_state.py initialize_model_parallel)."""
    group = _tp.module_group(t)
    tp = s.tp_size
    if group == "attn" or group == "other":
        return _tp.tensor_bytes_per_rank(t, spec, attn_tp if group == "attn" else tp)
    if group == "embed":
        return t.nbytes if s.enable_dp_attention else _tp.tensor_bytes_per_rank(t, spec, tp)
    if group == "head":
        return _tp.tensor_bytes_per_rank(t, spec, attn_tp if s.enable_dp_lm_head else tp)
    if group == "mlp":
        if "_shexp" in t.name and shared_whole:
            return t.nbytes  # tp_size fused replicas, 1 / tp of each on every rank (shared_experts_replicated)
        if "_shexp" in t.name and all_to_all_moe(s):
            # models/deepseek_v2.py DeepseekV2MoE: shared_experts built with tp_rank=0, tp_size=1 "when enable
            # deepep moe" (and mooncake / flashinfer a2a): DeepEP all-gathers, so the shared MLP is whole
            return t.nbytes
        return _tp.tensor_bytes_per_rank(t, spec, s.moe_dense_tp_size or tp)
    ep = moe_ep_size(s)
    if ep <= 1:
        return _tp.tensor_bytes_per_rank(t, spec, tp)
    if tp % ep:
        raise SettingsError(f"--ep-size {ep} must divide --tp-size {tp}")
    if s.ep_num_redundant_experts:
        # eplb/expert_location.py: num_physical_experts = num_logical + ep_num_redundant_experts, spread evenly
        n = t.shape[-1] if len(t.shape) == 3 else 0
        if n:
            physical = n + s.ep_num_redundant_experts
            if physical % ep:
                raise SettingsError(f"{n} experts + --ep-num-redundant-experts {s.ep_num_redundant_experts} do not "
                                    f"divide over --ep-size {ep}")
            return -(-t.nbytes * (physical // ep) // n // (tp // ep))
    return _tp.expert_bytes_per_rank(t, spec, ep, 0, tp // ep)


def _online_quantized(t: TensorSpec) -> bool:
    """Linear layers inside the blocks (not norms, routers, embeddings or the lm_head) get online fp8."""
    if t.layer is None or len(t.shape) < 2:
        return False
    return not any(x in t.name for x in ("norm", "ffn_gate_inp", "ssm_conv1d", "attn_sinks"))


def layer_rank_bytes(spec: ModelSpec, index: int, s: SGLangSettings, attn_tp: int, lay: CacheLayout | None = None,
                     shared_whole: bool = False) -> int:
    """Bytes of layer `index`'s tensors on one rank (the table of every layer built once per spec and parallel
    layout, not a pass over all tensors per layer); with `lay`, the absorbed-MLA copies too."""
    quant = (s.quantization or "").lower() or None
    key = (attn_tp, s.tp_size, s.enable_dp_attention, moe_ep_size(s), s.moe_dense_tp_size,
           s.ep_num_redundant_experts, s.enable_dp_lm_head, all_to_all_moe(s), lay is None, quant, shared_whole)

    def table() -> dict[int, int]:
        quantized = float_bytes(spec.weights.format) is None
        return per_layer_sum((t.layer, tensor_rank_bytes(t, spec, s, attn_tp, shared_whole) + (
            0 if lay is None else mla_absorbed_bytes(t, spec, s, lay, quantized, quant))) for t in spec.weights.tensors)

    return _LAYER_TABLES.get(spec, key, table).get(index, 0)


_LAYER_TABLES = ByObject[dict[int, int]](1)  # the last spec and parallel layout's table: every layer asks it
