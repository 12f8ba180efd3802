"""Which weight bytes each vLLM rank loads (the "Model loading took" figure): pipeline stages by layer, tensor
parallel shards (engines/_tp.py), expert parallel, online fp8, MXFP4 expert padding, the rotary cache."""

from __future__ import annotations

from dataclasses import replace

from ...memo import ByObject
from ...model.archs import DSV4_ARCHS
from ...model.hf_config import DSV4_CONFIG_LABEL, ST_DENSE_TENSORS
from ...model.names import derive
from ...model.spec import LayerKind, ModelSpec, TensorSpec
from ...model.towers import Tower
from ...quant.dtypes import FLOAT_BYTES
from ...units import cdiv, round_up
from .. import _tp
from .config import DTYPE_ALIASES, Resolved, pp_partition
from .drafter import mtp_layers_loaded
from .profile import TRITON_KERNELS_FROM, dsv4_hc_mult
from .quantization import load_layout
from .settings import ERAS, VllmSettings

# The next-n block's vocabulary-sized copies (model/tensors.py _NEXTN_VOCAB_COPIES: the checkpoint's
# model.layers.<last>.embed_tokens / shared_head.head) that the drafter does not load: llm_base_proposer.py
# load_model shares the target's ("Detected MTP model. Sharing target model embedding weights", and its lm_head)
_MTP_SHARED = (".nextn.embed_tokens.weight", ".nextn.shared_head_head.weight")


def _linear_weight(t: TensorSpec) -> bool:
    """Weights an online fp8 quantization (-q fp8) converts: the decoder's Linear / FusedMoE weights."""
    return (t.layer is not None and t.name.endswith(".weight") and len(t.shape) >= 2
            and not t.name.endswith(("norm.weight", "ffn_gate_inp.weight", "ssm_conv1d.weight")))


def rank_bytes(t: TensorSpec, spec: ModelSpec, r: Resolved, nbytes: int, ep: int, ep_rank: int = 0) -> int:
    """Bytes of tensor t one rank holds: FusedMoE experts placed whole over the EP group when expert parallelism
    is on (determine_expert_map, engines/_tp.py local_experts), everything else by vLLM's tensor-parallel layer
    classes (engines/_tp.py): with -dp every DP rank holds the whole attention / dense part of its TP group."""
    if nbytes != t.nbytes:  # a copy only when the bytes differ: dataclasses.replace was most of a vLLM fit's time
        t = replace(t, nbytes=nbytes)
    if ep > 1 and "_exps." in t.name:
        return _tp.expert_bytes_per_rank(t, spec, ep, ep_rank, 1, r.at_least("ep_balanced"))
    return _tp.tensor_bytes_per_rank(t, spec, r.tp)


def ep_size(s: VllmSettings, r: Resolved) -> int:
    """config/parallel.py: with --enable-expert-parallel the MoE layers' EP group is every DP x TP rank of a
    pipeline stage (FusedMoEParallelConfig.make: ep_size = dp_size x tp_size, tp_size 1 for the experts)."""
    return r.tp * r.dp if s.enable_expert_parallel else 1


def ep_rank_of(g: int, r: Resolved) -> int:
    """A global rank's place in its stage's EP group: ranks are ordered (dp, pp, tp) (distributed/parallel_state.py
    initialize_model_parallel), the EP group of a stage is its dp x tp ranks, ep_rank = dp_rank x tp + tp_rank."""
    return (g // (r.pp * r.tp)) * r.tp + g % r.tp


# weights_by_global_rank by what it reads: a fit or plan estimates one model at many contexts, utilisations and
# batch sizes, none of which moves a weight. The key is the spec object (by identity: hashing a whole spec costs
# more than the sums; the entry keeps the spec alive so that its id stays its own) and every field of the
# settings and the resolved config that weights_by_rank and the functions it calls read (keep it so when they
# read another)
_WEIGHTS = ByObject[tuple[int, ...]](64)


def weights_by_global_rank(spec: ModelSpec, s: VllmSettings, r: Resolved) -> list[int]:
    """Bytes of weights each global rank (dp x pp x tp) loads: its stage's, with its own share of the experts
    under expert parallelism (the first E % ep ranks hold one expert more; before 0.10.1 the last rank holds
    the whole remainder)."""
    key = (s.enable_expert_parallel, s.quantization, s.mm_encoder_tp_mode, r.tp, r.pp, r.dp, r.version, r.dtype_bytes,
           r.cc, r.num_spec, s.limit_mm_per_prompt, r.max_num_batched_tokens, r.runner_v2, r.pp_layer_partition,
           s.speculative_method, s.speculative_model)
    return list(_WEIGHTS.get(spec, key, lambda: tuple(_weights_by_global_rank(spec, s, r))))


def _weights_by_global_rank(spec: ModelSpec, s: VllmSettings, r: Resolved) -> list[int]:
    # weights_by_rank walks every stage at once: one walk per distinct expert share, not one per stage (a walk
    # per stage made -pp N quadratic: ~37 s for -pp 1000 on an 8B model)
    cache: dict[int, list[int]] = {}
    ep = ep_size(s, r)
    out = []
    for g in range(r.tp * r.pp * r.dp):
        stage = (g // r.tp) % r.pp
        key = (_tp.local_experts(_max_experts(spec), ep, ep_rank_of(g, r), r.at_least("ep_balanced"))
               if ep > 1 else 0)
        if key not in cache:
            cache[key] = weights_by_rank(spec, s, r, ep_rank_of(g, r))
        out.append(cache[key][stage])
    return out


def _max_experts(spec: ModelSpec) -> int:
    return max((la.ffn.n_experts for la in spec.layers if la.ffn is not None), default=0) or 1


# vLLM model classes that build the embedding and / or the lm_head on every pipeline stage: no is_first_rank /
# is_last_rank guard with PPMissingLayer, so each stage's ranks hold their TP share of both whatever their layers.
# architecture -> (embed_tokens on every stage, lm_head on every stage).
#   qwen3moe: models/qwen3_moe.py Qwen3MoeModel.__init__ builds VocabParallelEmbedding and Qwen3MoeForCausalLM
#     ParallelLMHead unconditionally (read at vLLM commits 002456df, mid-2025, and 2e0831b0, late 2025). The
#     Qwen3-30B-A3B-2507 -pp 2 -tp 4 Ray log on 0.10.1 (rwood-97/multi_node_inference) loads 7.3272 GiB on both
#     stages: the layers' share plus one embedding and one lm_head each (151,936 x 2048 x 2 B / 4).
#   qwen2moe: models/qwen2_moe.py the same (read at vLLM commit 002fb907: Qwen2MoeModel.embed_tokens and
#     Qwen2MoeForCausalLM.lm_head unconditional).
#   qwen3next, qwen35 / qwen35moe: vllm#36861 (Qwen3.5 -pp on A10s: "No available memory for the cache blocks")
#     and PR #36904 (closed unmerged, March 2026): Qwen3NextModel / Qwen3_5Model build embed_tokens on all ranks,
#     Qwen3NextForCausalLM its lm_head too; Qwen3_5ForCausalLMBase.lm_head is guarded.
_UNGUARDED_UNDER_PP = {"qwen3moe": (True, True), "qwen2moe": (True, True), "qwen3next": (True, True),
                       "qwen35": (True, False), "qwen35moe": (True, False)}


# DeepSeek-V4's own checkpoint as vLLM loads it (0.20.0 model_executor/models/deepseek_v4.py DeepseekV4FP8Config, the
# quant_method "fp8" of a deepseek_v4 config overridden to "deepseek_v4_fp8", models/config.py
# DeepseekV4ForCausalLMConfig): FusedMoE experts through Mxfp4MoEMethod (e2m1 packed two a byte + one e8m0 scale per
# 32), the other Linear layers through Fp8Config's block method (one byte + a float32 weight_scale_inv per 128 x 128
# block); the compressors' fused_wkv_wgate is built with quant_config=None (deepseek_compressor.py), as are the
# embedding, the head and the small hyper-connection / router / norm tensors (model dtype)
_DSV4_FP8 = ("attn_q_a.weight", "attn_q_b.weight", "attn_kv.weight", "attn_output_a.weight", "attn_output_b.weight",
             "_shexp.weight", "indexer.attn_q_b.weight")


def dsv4_gptq_int(spec: ModelSpec) -> tuple[int, int] | None:
    """(bits, group size) of a DeepSeek-V4 checkpoint packed for the GPTQ kernels (symmetric int, grouped: GPTQ, or
    auto-round, which vLLM loads as "inc", quantization/inc/inc.py INCConfig.override_quantization_method), as its
    name gives it (model/names.py derive: -W4A16-AutoRound, -GPTQ-Int4); None otherwise. The config.json that
    model/hf_config.py reads for DeepSeek-V4 keeps no quantization_config, so the name is what is left to read."""
    d = derive(spec.name)
    q = d.quantization_config if d is not None else None
    if not q or q.get("quant_method") not in ("gptq", "auto-round") or not q.get("sym", True):
        return None
    bits, group = q.get("bits"), q.get("group_size")
    if bits not in (4, 8) or not isinstance(group, int) or group <= 0:
        return None
    return bits, group


def dsv4_moe_nvfp4(spec: ModelSpec, r: Resolved | None) -> bool:
    """A DeepSeek-V4 checkpoint whose routed experts are NVFP4 (nvidia/DeepSeek-V4-Flash-NVFP4: experts NVFP4, the
    linear layers block FP8 as DeepSeek's own), as vLLM loads it from 0.22.0 on (ERAS dsv4_moe_nvfp4):
    models/deepseek_v4/quant_config.py DeepseekV4FP8Config.get_quant_method gives the RoutedExperts
    ModelOptNvFp4FusedMoE (group_size 16) when the checkpoint's quantization_config names moe_quant_algo "NVFP4",
    Mxfp4MoEMethod otherwise; 0.21.0's deepseek_v4 quant config has no such branch. The checkpoint's config.json
    is not what model/hf_config.py reads for DeepSeek-V4, so the name is (model/names.py derive: -NVFP4, ModelOpt
    NVFP4 group 16), as for dsv4_gptq_int."""
    if r is not None and not r.at_least("dsv4_moe_nvfp4"):
        return False
    d = derive(spec.name)
    q = (d.quantization_config if d is not None else None) or {}
    algo = (q.get("quantization") or {}).get("quant_algo") or q.get("quant_algo") or q.get("moe_quant_algo")
    return str(algo or "").upper() == "NVFP4"


def _nvfp4_expert_bytes(t: TensorSpec) -> int:
    """One routed expert tensor [E, ...] as ModelOptNvFp4FusedMoE.create_weights holds it (quantization/modelopt.py,
    read in 0.25.1): e2m1 packed two a byte, one float8_e4m3 weight_scale per 16 values (group_size), and per expert
    a float32 weight_scale_2 and input_scale (w13's two shards keep one each, w2 one)."""
    n = t.n_elements
    experts = t.shape[-1] if len(t.shape) == 3 else 1  # GGUF order: ne0 (K), ne1 (N), ne2 (experts)
    return n // 2 + n // 16 + experts * 2 * 4


def _gptq_bytes(n: int, bits: int, group: int, moe: bool) -> int:
    """A GPTQ-packed tensor of n values as vLLM keeps it: the int32-packed weight and a 16-bit scale a group (the
    Marlin linear kernel swaps qzeros and g_idx for empty tensors, the comment in _tensor_bytes); the MoE method
    (quantization/auto_gptq.py AutoGPTQMoEMethod.create_weights, read in 0.25.1) also keeps its w13 / w2 qzeros, [E,
    groups, N / pack_factor] in the model dtype, which process_weights_after_loading replaces only when the kernel
    hands new ones back (fused_moe/oracle/int_wna16.py convert_to_wna16_moe_kernel_format: None for GPTQ), and
    empties the g_idx tensors without act-order (_process_weights_marlin)."""
    groups = cdiv(n, group)
    return n * bits // 8 + 2 * groups + (2 * cdiv(groups, 32 // bits) if moe else 0)


def _deepseek_v4_checkpoint(spec: ModelSpec, r: Resolved | None = None) -> tuple[TensorSpec, ...]:
    """The tensors of a DeepSeek-V4 spec read from its config.json (no GGUF file type named) as the checkpoint holds
    them for vLLM; a GGUF's own tensors are kept. A GPTQ-packed int checkpoint (dsv4_gptq_int: Intel's W4A16
    AutoRound) holds the routed experts and the linear layers the FP8 checkpoint keeps at FP8 as int, except wo_a
    (attn_output_a), which stays 16-bit: vLLM never runs wo_a as a linear layer, the output projection reads its
    weight tensor itself as an einsum operand (models/deepseek_v4/nvidia/ops/o_proj.py, 0.25.1: fp8_einsum over
    (wo_a.weight, wo_a.weight_scale_inv)), so a checkpoint that is not block FP8 has to keep it whole (Intel's
    extra_config {"wo_a": {"bits": 16}}, kaitakuai/experiments 2026-07 deepseek-v4-int4-b300; INCConfig.get_quant_method
    gives it UnquantizedLinearMethod)."""
    if spec.architecture != "deepseek4" or DSV4_CONFIG_LABEL not in spec.labels:
        return spec.weights.tensors
    gptq = dsv4_gptq_int(spec)
    nvfp4 = gptq is None and dsv4_moe_nvfp4(spec, r)
    out = []
    for t in spec.weights.tensors:
        n = t.n_elements
        if gptq is not None and len(t.shape) >= 2 and (
                ("_exps." in t.name and len(t.shape) == 3) or t.name.endswith(_DSV4_FP8)):
            if t.name.endswith("attn_output_a.weight"):
                t = replace(t, dtype="bf16", nbytes=2 * n)
            else:
                t = replace(t, dtype=f"gptq-int{gptq[0]}",
                            nbytes=_gptq_bytes(n, *gptq, moe="_exps." in t.name))
        elif "_exps." in t.name and len(t.shape) == 3 and nvfp4:
            t = replace(t, dtype="nvfp4", nbytes=_nvfp4_expert_bytes(t))
        elif "_exps." in t.name and len(t.shape) == 3:
            t = replace(t, dtype="mxfp4", nbytes=n // 2 + n // 32)
        elif t.name.endswith(_DSV4_FP8) and len(t.shape) == 2:
            k, m = t.shape
            t = replace(t, dtype="fp8-block", nbytes=n + cdiv(k, 128) * cdiv(m, 128) * 4)
        elif t.dtype.upper() != "I32":
            t = replace(t, dtype="bf16", nbytes=2 * n)
        out.append(t)
    return tuple(out)


def weights_by_rank(spec: ModelSpec, s: VllmSettings, r: Resolved, ep_rank: int = 0) -> list[int]:
    """Bytes of weights each pipeline stage's ranks load (TP ranks of a stage hold the same amount; under expert
    parallelism, the rank `ep_rank` of the EP group). With --speculative-config the checkpoint's own MTP (next-n)
    layers load as the drafter (v1/spec_decode/llm_base_proposer.py load_model: "Loading drafter model...", the
    target's embedding and lm_head shared, "Detected MTP model. Sharing target model embedding weights"), in the
    format the checkpoint stores them (ModelOpt's NVFP4 Qwen3.6 leaves mtp* unquantized); the drafter runs beside
    the last stage. nvidia/Qwen3.6-35B-A3B-NVFP4 with MTP 2 on a DGX Spark (99sono/DockerBuildFiles, vLLM
    0.22.1rc1): 21.93 GiB, of which the bf16 MTP layer is 1.56 GiB."""
    trunk_n = spec.n_trunk_layers
    parts = pp_partition(trunk_n, r.pp, r.version, r.pp_layer_partition)
    ep = ep_size(s, r)
    plain = spec.weights.format.lower() in FLOAT_BYTES or spec.weights.format.lower() in DTYPE_ALIASES
    online = load_layout(s.quantization, plain)
    embed_everywhere, head_everywhere = _UNGUARDED_UNDER_PP.get(spec.architecture, (False, False))
    tensors = _deepseek_v4_checkpoint(spec, r)
    out = []
    for stage, (lo, hi) in enumerate(parts):
        first, last = stage == 0, stage == r.pp - 1
        total = 0
        params: dict[tuple, tuple[int, int]] = {}  # vLLM parameter -> (one rank's bytes, copies)
        for t in tensors:
            if t.name in ST_DENSE_TENSORS:
                # EmbeddingGemma's sentence-transformers Dense modules: the pooling adapter's ST projector
                # (model_executor/models/adapters.py _load_st_projector: one plain nn.Linear per Dense module of
                # modules.json at model_config.head_dtype, float32 for a pooling runner by default, config/model.py
                # _get_head_dtype) built with the model, whole on every rank (not a tensor-parallel layer). An earlier
                # revision (code search id 30951592646: torch.float32 outright) loaded the first Dense module only, not
                # modelled.
                total += t.n_elements * FLOAT_BYTES["float32"]
                continue
            if t.layer is not None:
                if t.layer >= trunk_n:
                    if not (mtp_layers_loaded(s, r) and last):
                        continue  # an MTP layer: loaded only as the drafter of speculative decoding
                    if t.name.endswith(_MTP_SHARED):
                        continue  # the MTP block's own embedding / head copies: the target's are shared instead
                elif not lo <= t.layer < hi:
                    continue  # another stage's layer
                copies = 1
            elif t.name == "token_embd.weight":
                # the embedding lives on the first stage; with tied embeddings the last stage builds its own
                # lm_head from it when PP > 1 (PPMissingLayer elsewhere)
                copies = (1 if first else 0) + (1 if spec.tied_embeddings and last and not first else 0)
                if embed_everywhere:
                    copies = 1
            else:
                copies = 1 if last else 0  # output_norm, output: last stage
                if t.name == "output.weight" and head_everywhere:
                    copies = 1
            if copies:
                nbytes = _tensor_bytes(t, r, plain, online if _linear_weight(t) else None, ep,
                                      spec.architecture)
                b = rank_bytes(t, spec, r, nbytes, ep, ep_rank)
                total += copies * b
                key = (t.layer, _vllm_param(t.name)) if t.layer is not None else (None, t.name)
                size, n = params.get(key, (0, copies))
                params[key] = (size + b, n)
        rope = _rope_cache_bytes(spec, r)
        # each parameter is one allocation of the caching allocator, which counts its unsplit segment tail; walked
        # for a float checkpoint loaded as stored (a quantized one's byte counts carry its scales, which are
        # separate, smaller parameters)
        if plain and online is None:
            total += sum(n * segment_tail(size) for size, n in params.values()) + segment_tail(rope)
        params.clear()
        total += rope + _deepstack_bytes(spec, s, r, first) + mla_dequant_bytes(spec, r, online, (lo, hi))
        total += dsv4_model_buffers(spec, s, r, last)
        if tower_on_stage(r, first):
            total += _tower_bytes(spec, s, r)
        out.append(int(total))
    return out


# MLA's 16-bit copy of a quantized kv_b_proj (attention/backends/mla/common.py and v1/attention/backends/mla/common.py
# MLACommonImpl.process_weights_after_loading, read in the 0.8.3, 0.8.4 and 0.8.5 wheels): where kv_b_proj's
# quant_method is not UnquantizedLinearMethod, get_and_maybe_dequant_weights runs it over an identity matrix and
# keeps the product, [kv_lora_rank, heads of the rank x (qk_nope_head_dim + v_head_dim)] in the model dtype, as the
# W_UK_T / W_UV views, beside the quantized weight the prefill still uses; the loader calls it inside load_model
# (model_loader/loader.py _process_weights_after_loading), so "model weights take" counts it. An unquantized
# kv_b_proj gives views of its own weight (no copy). Other releases not read: 0.7.x's matrix absorption differs.
MLA_DEQUANT_COPY = ((0, 8, 3), (0, 8, 6))


def mla_dequant_bytes(spec: ModelSpec, r: Resolved, online: str | None, layers: tuple[int, int]) -> int:
    """Bytes of MLA's dequantized kv_b_proj copies on a rank of the stage holding trunk layers [lo, hi)."""
    if not MLA_DEQUANT_COPY[0] <= r.version < MLA_DEQUANT_COPY[1]:
        return 0
    lo, hi = layers
    quantized = {t.layer for t in spec.weights.tensors if t.layer is not None and lo <= t.layer < hi
                 and ".attn_k_b." in t.name and (online is not None or t.dtype.lower() not in FLOAT_BYTES)}
    total = 0
    for i, layer in enumerate(spec.trunk_layers):
        a = layer.attention
        if i in quantized and a is not None and a.kv_lora_rank:
            heads = cdiv(a.n_heads, r.tp)  # kv_b_proj is a ColumnParallelLinear over the heads
            total += a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim) * r.dtype_bytes
    return total


# Encoders that --mm-encoder-tp-mode data runs data-parallel, each TP rank holding the whole encoder (PR #23190,
# August 2025, from 0.10.2; the model classes with supports_encoder_tp_data = True in 0.21-0.29's
# model_executor/models: qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py (and Qwen3-VL-MoE, Qwen3.5's classes built on it),
# mllama4.py, internvl.py, kimi_vl.py, kimi_k25.py), by the tower family oomkit reads (model/towers.py). Any other
# model falls back to "weights" (config/model.py: "This model does not support `--mm-encoder-tp-mode data`").
ENCODER_TP_DATA = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe",
                             "qwen3_5_vision", "qwen3_5_moe_vision", "llama4_vision_model", "intern_vit_6b",
                             "moonvit"})


def tower_on_stage(r: Resolved, first: bool) -> bool:
    """Whether a pipeline stage builds the multimodal tower (and loads its weights). Every stage does until
    models/interfaces.py _mark_tower_model turns the tower into a StageMissingLayer on the stages after the first
    (`not get_pp_group().is_first_rank`): in 0.33 only under model runner V2 (`vllm_config.use_v2_model_runner and
    ...`), from 0.34 under every runner (settings.ERAS tower_first_stage_v2, tower_first_stage). Before, no class
    oomkit reads a tower of guards it by the stage: up to 0.14 each model's __init__ builds it unconditionally or on
    the --limit-mm-per-prompt values alone (gemma3_mm.py, qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, qwen3_vl_moe.py,
    qwen3_omni_moe_thinker.py, mllama4.py, llava.py, mistral3.py, pixtral.py, internvl.py, kimi_vl.py, glm4_1v.py;
    read in the 0.8.5, 0.10.1, 0.11.0, 0.13.0 and 0.14.0 wheels; their is_first_rank tests guard the embedding and
    the deepstack addition, not the tower), and from 0.15 to 0.32 _mark_tower_model skips a tower for the limits
    only (kimi_k25.py builds it unmarked in 0.15.1, inside the mark from 0.16.0; qwen3_5.py and gemma4_mm.py inside
    it from their first wheels, 0.17.0 and 0.19.0; read in the 0.15.1, 0.16.0, 0.17.0, 0.19.0, 0.20.0, 0.27.0, 0.28.0
    and 0.32.0 wheels). A built tower's weights load on every stage: the loaders skip only PPMissingLayer /
    StageMissingLayer modules (models/utils.py AutoWeightsLoader._load_module, is_pp_missing_parameter), and its
    parameters are allocated while the model is built, inside "Model loading took", whether or not the stage ever
    runs it. Every projector sits inside the same mark (gemma3_mm.py multi_modal_projector, internvl.py mlp1,
    pixtral.py patch_merger and vision_language_adapter, ... in 0.34), so it follows the tower."""
    return first or not (r.at_least("tower_first_stage") or (r.runner_v2 and r.at_least("tower_first_stage_v2")))


# The modalities each tower family (model/towers.py) serves in vLLM, as its class passes them to _mark_tower_model
# (0.15.1, 0.20.0, 0.28.0, 0.34.0 wheels), and whether the class's own __init__ already skipped the tower on the
# limits from 0.10.1 to 0.14 (ERAS tower_limits_guard: `if multimodal_config.get_limit_per_prompt("image") or ...`,
# else self.visual / self.vision_tower = None; none in the 0.10.0 wheel). The others build it whatever the limits
# until _mark_tower_model (tower_marked).
#   qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, qwen3_vl_moe.py: image and video, guarded (qwen3_vl's from 0.11.0)
#   qwen3_5.py (0.17.0 on), gemma4_mm.py (0.19.0 on): image and video, marked from their first wheel
#   qwen3_omni_moe_thinker.py, internvl.py, interns1.py, glm4_1v.py: image and video, unguarded up to 0.14
#   mllama4.py, llava.py and mistral3.py (pixtral's HF checkpoints): image, guarded
#   gemma3_mm.py, kimi_vl.py: image, unguarded up to 0.14
#   kimi_k25.py (model_type kimi_k25): vision_chunk, built unconditionally in 0.15.x, marked from 0.16.0
_IMAGE_VIDEO = ("image", "video")
_TOWER_MODALITIES: dict[str, tuple[tuple[str, ...], bool]] = {
    "qwen2_vl": (_IMAGE_VIDEO, True), "qwen2_5_vl": (_IMAGE_VIDEO, True), "qwen3_vl": (_IMAGE_VIDEO, True),
    "qwen3_vl_moe": (_IMAGE_VIDEO, True), "llama4_vision_model": (("image",), True),
    "clip_vision_model": (("image",), True), "pixtral": (("image",), True),
    "siglip_vision_model": (("image",), False), "moonvit": (("image",), False)}


def tower_built(tower: Tower, s: VllmSettings, r: Resolved) -> bool:
    """Whether vLLM builds a tower at the --limit-mm-per-prompt values (an unnamed modality: 999, config/multimodal.py
    get_limit_per_prompt): skipped when every modality it serves is limited to 0, by its class's own test from
    0.10.1 where it has one (tower_limits_guard), by models/interfaces.py _mark_tower_model for every class from 0.15
    (tower_marked: meta device, then StageMissingLayer), never before."""
    modalities, guarded = _TOWER_MODALITIES.get(tower.family, (_IMAGE_VIDEO, False))
    kimi_k25 = (tower.config or {}).get("model_type") == "kimi_k25"
    if kimi_k25:
        modalities = ("vision_chunk",)
    limits = dict(s.limit_mm_per_prompt or ())
    if not all(limits.get(m, 999) == 0 for m in modalities):
        return True
    if r.at_least("tower_marked"):
        return kimi_k25 and r.version < (0, 16, 0)  # kimi_k25.py 0.15.x builds its tower outside the mark
    return not (guarded and r.at_least("tower_limits_guard"))


def _tower_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved) -> int:
    """Multimodal encoders (model/towers.py) load with the checkpoint, in the model dtype, on the stages that build
    them (tower_on_stage: every pipeline stage up to 0.32, the first only from 0.34 or 0.33 with runner V2;
    model_executor/models/gemma3_mm.py, qwen2_5_vl.py: the vision tower and projector are built beside the language
    model); their linear layers are tensor-parallel (vision/siglip.py QKVParallelLinear, RowParallelLinear), so
    each rank holds its share, unless --mm-encoder-tp-mode data replicates an encoder that supports it."""
    whole = s.mm_encoder_tp_mode == "data"
    return sum(t.nbytes(r.dtype_bytes) if whole and t.family in ENCODER_TP_DATA else cdiv(t.nbytes(r.dtype_bytes), r.tp)
               for t in spec.towers if tower_built(t, s, r))


# The vision towers (model/towers.py families) of the vLLM classes that keep deepstack input buffers:
# Qwen3VLForConditionalGeneration (Qwen3.5 / 3.6 inherit it, with no deepstack levels),
# Qwen3VLMoeForConditionalGeneration and Qwen3OmniMoeThinkerForConditionalGeneration
DEEPSTACK_TOWERS = frozenset({"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_vision",
                              "qwen3_5_moe_vision", "qwen3_omni_moe_vision_encoder"})


def _deepstack_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, first: bool) -> int:
    """models/qwen3_vl.py __init__ (qwen3_vl_moe.py, qwen3_omni_moe_thinker.py the same): deepstack_input_embeds,
    one torch.zeros(scheduler_config.max_num_batched_tokens, text_config.hidden_size) per entry of the vision
    config's deepstack_visual_indexes, in the loader's default dtype (the model's) on the GPU, while the model is
    built: counted in "Model loading took", the same on every TP rank (not sharded). Qwen3-VL-30B-A3B: 3 x 2,048 x
    2,048 x 2 B = 0.023 GiB at vllm serve's default on a GPU under 70 GiB, 0.094 GiB at 8,192 (settings.ERAS
    deepstack_buffers, tower_first_stage_v2, tower_first_stage)."""
    if not r.at_least("deepstack_buffers"):
        return 0
    tower = next((t for t in spec.towers if t.kind == "vision" and t.family in DEEPSTACK_TOWERS), None)
    if tower is None:
        return 0
    levels = len((tower.config.get("vision_config") or {}).get("deepstack_visual_indexes") or ())
    if not levels:
        return 0
    if not tower_built(tower, s, r):
        return 0  # the tower is not built (self.visual None / meta device / StageMissingLayer)
    if not tower_on_stage(r, first):
        return 0  # _mark_tower_model: no tower after the first pipeline stage
    return levels * r.max_num_batched_tokens * spec.n_embd * r.dtype_bytes


def _tensor_bytes(t: TensorSpec, r: Resolved, plain: bool, online: str | None, ep: int = 1, arch: str = "") -> int:
    if online == "one byte":
        return t.n_elements  # fp8 / int8: one byte per weight (per-tensor, row or block scales are negligible)
    if online == "nf4":
        # in-flight bitsandbytes (model_loader/bitsandbytes_loader.py _unquantized_generator: quantize_4bit(...,
        # compress_statistics=True, quant_type="nf4") on every LinearBase weight): packed 4-bit, a uint8 absmax
        # per 64 values, an fp32 absmax per 256 of those, the 16- and 256-entry code books
        n, blocks = t.n_elements, cdiv(t.n_elements, 64)
        return cdiv(n, 2) + blocks + cdiv(blocks, 256) * 4 + (16 + 256) * 4
    if plain or t.dtype.lower() in FLOAT_BYTES:
        return t.n_elements * r.dtype_bytes  # loaded (and cast) to the model dtype
    if t.dtype.lower() == "mxfp4" and "_exps" in t.name and len(t.shape) == 3:
        if arch in DSV4_ARCHS and on_gfx942(r):
            return _dsv4_mxfp4_gfx942_bytes(t, r, r.tp if ep == 1 else 1)
        return _mxfp4_expert_bytes(t, r, r.tp if ep == 1 else 1)
    if t.dtype.lower() == "fp8-block" and fp8_block_on_marlin(r) and len(t.shape) >= 2:
        # Marlin's repack keeps the FP8 weight at one byte and turns the block scales into group scales of
        # [K/128, N] in the model dtype for each matrix (settings.ERAS fp8_block_marlin); GGUF order: ne0 (K) first
        k, n = t.shape[0], t.shape[1]
        matrices = t.n_elements // (k * n)
        return t.n_elements + matrices * cdiv(k, 128) * n * r.dtype_bytes
    # a quantized format: as stored. Marlin's repack (quantization/kernels/mixed_precision/marlin.py
    # MarlinLinearKernel.process_weights_after_loading) keeps the packed weight and scales at their size and
    # AWQ's zero points too (marlin_zero_points: [groups, out x bits / 32] int32); GPTQ-Marlin (symmetric only)
    # swaps qzeros for an empty tensor, and g_idx too without act-order (with act-order it adds
    # g_idx_sort_indices, int32 [in]). Not modelled: about 1 % of a GPTQ checkpoint (4-bit, group 128, 3584 x
    # 3584: qzeros + g_idx 64,512 of 6,687,744 bytes); no public GPTQ start-up log with its config is at hand.
    return t.nbytes


def fp8_block_on_marlin(r: Resolved) -> bool:
    """Block-quantized FP8 runs on Marlin: a known GPU below compute capability 8.9 (no FP8 units; an unnamed GPU is
    taken for a Hopper part, config.py), from the release whose Marlin takes block scales (ERAS fp8_block_marlin)."""
    return r.cc is not None and not r.cc_guessed and r.cc < (8, 9) and r.at_least("fp8_block_marlin")


def _mxfp4_expert_bytes(t: TensorSpec, r: Resolved, moe_tp: int = 1) -> int:
    """MXFP4 MoE experts (gpt-oss) as vLLM lays them out for its kernel (quantization/mxfp4.py,
    fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size): Marlin (before Hopper, and on
    Hopper without triton_kernels: before 0.10.2, and in the 0.10.2-0.11.x wheels, which do not ship it,
    profile.py TRITON_KERNELS_FROM) pads the intermediate size to 128 and the hidden size to 256;
    the Triton kernels on Hopper store each matrix with its reduction dimension padded to 256 (fitted: gpt-oss-120b
    64.38 GiB on v0.14.1, vllm#33155); FlashInfer on Blackwell pads both to 256.
    Marlin pads each rank's slice: Mxfp4MoEMethod.create_weights receives intermediate_size_per_partition (the
    experts' intermediate over the MoE's TP ranks, `moe_tp`; whole under expert parallelism) and rounds that up to
    128 (0.10.1's mxfp4.py "round_up(intermediate_size_per_partition, 128)", the 0.19.0 oracle's MARLIN branch the
    same on the per-partition size it is handed): gpt-oss-120b's 2,880 is 720 a rank at TP4, stored as 768."""
    k, n, experts = t.shape  # GGUF order: ne0 (the row, reduction dim) first
    down = "ffn_down_exps" in t.name
    hidden, inter = (n, k) if down else (k, n)
    cc = r.cc or (9, 0)
    if cc[0] < 9 and not r.at_least("mxfp4_marlin"):
        # the gpt-oss launch build (settings.py GPTOSS_BUILD_VERSION), vllm#22259's mxfp4.py: triton_kernels on every
        # GPU, "intermediate_size_per_partition_after_pad = round_up(intermediate_size_per_partition, 64)", the
        # hidden size as it is; before Hopper swizzle_mxfp4 keeps the strided layout (no further padding)
        inter = round_up(cdiv(inter, moe_tp), 64) * moe_tp
    elif cc[0] >= 10:
        hidden, inter = round_up(hidden, 256), round_up(inter, 256)
    elif cc[0] == 9 and r.version >= TRITON_KERNELS_FROM:
        if down:
            inter = round_up(inter, 256)
        else:
            hidden = round_up(hidden, 256)
            if r.version >= (0, 19, 0):
                # each rank's gate/up intermediate slice padded to 128 (fitted: gpt-oss-20b on 0.19.0 loads
                # 13.64 GiB at TP1 and 7.01 GiB per rank at TP2, llm-d sweep; 0.14.1's gpt-oss-120b shows none)
                inter = round_up(cdiv(inter, r.tp), 128) * r.tp
    else:
        hidden, inter = round_up(hidden, 256), round_up(cdiv(inter, moe_tp), 128) * moe_tp
    return t.nbytes * (hidden * inter) // (k * n)


def on_gfx942(r: Resolved) -> bool:
    """The first GPU is a CDNA3 part (gfx942: MI300X, MI325X, the target the GPU catalog gives its Device): vLLM's
    platforms/rocm.py on_gfx950() is false there."""
    return r.gfx_target == "gfx942"


# DeepSeek-V4's routed experts on ROCm (fused_moe/oracle/mxfp4.py select_deepseek_v4_mxfp4_moe_backend, the
# RoutingMethodType.DeepseekV4 branch): AITER_MXFP4_BF16 or TRITON_UNFUSED (0.22.0 lists TRITON_UNFUSED first,
# 0.23.0-0.29.0 AITER first), and AITER's MXFP4 experts need gfx950 (experts/rocm_aiter_moe.py
# _supports_quant_scheme: "CK MXFP4 MoE kernels are only supported on gfx950"), so a gfx942 card runs
# TRITON_UNFUSED, whose ROCm branch of mxfp4_round_up_hidden_size_and_intermediate_size rounds the hidden size and
# each rank's intermediate slice up to 256 (only AITER_MXFP4_BF16 with SiLU / SiTU keeps 128, 0.29.0): DeepSeek-V4-Pro's
# 3,072 at TP8 is 384 a rank, stored as 512 (+33 % on every routed expert). Read in the 0.22.0-0.29.0 wheels.
DSV4_ROCM_MXFP4_PAD = (0, 22, 0)


def _dsv4_mxfp4_gfx942_bytes(t: TensorSpec, r: Resolved, moe_tp: int) -> int:
    """One DeepSeek-V4 routed-expert tensor on a gfx942 rank (see DSV4_ROCM_MXFP4_PAD), in the rank's whole-model
    units (rank_bytes divides by the MoE's TP ranks after)."""
    if r.version < DSV4_ROCM_MXFP4_PAD:
        return _mxfp4_expert_bytes(t, r, moe_tp)
    k, n, experts = t.shape  # GGUF order: ne0 (the row, reduction dim) first
    hidden, inter = (n, k) if "ffn_down_exps" in t.name else (k, n)
    return t.nbytes * (round_up(hidden, 256) * round_up(cdiv(inter, moe_tp), 256) * moe_tp) // (k * n)


# PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, every release vLLM 0.4 -> 0.34 pins; vLLM leaves
# expandable_segments off): a request over 10 MiB gets a new segment rounded up to 2 MiB (get_allocation_size,
# kRoundLarge), and the rest of the block is split off only when over 1 MiB (should_split, kSmallSize); below that
# the allocated block is the whole segment, and "Model loading took" (utils/mem_utils.py DeviceMemoryProfiler:
# platforms/cuda.py get_current_memory_usage, torch.cuda.max_memory_allocated, the block sizes) counts it.
# Qwen3-1.7B's 151,936 x 2,048 bf16 embedding (593.5 MiB) is held as 594: "Model loading took 3.22 GiB" on 0.27.1
# (tests/test_vllm_more_logs.py, a strict xfail at 3.2146 GiB); requests of 1-10 MiB come from 20 MiB segments
# whose tails are split off (not counted).
_SEGMENT_ROUND = 2 << 20
_SEGMENT_MIN = 10 << 20
_SPLIT_OVER = 1 << 20


# DeepSeek-V4's device buffers built with the model (models/deepseek_v4/nvidia/model.py DeepseekV4Model.__init__, amd/
# and xpu/model.py alike; read in 0.24.0, 0.25.1 and 0.27.0), inside load_model, so "Model loading took" counts them:
# topk_indices_buffer, [max_num_batched_tokens, index_topk] int32, on every rank ("Reserved topk indices buffer for all
# Indexer layers to reuse"), and on the last pipeline stage _mtp_hidden_buffer, [max_num_batched_tokens, hc_mult x
# hidden] in the model dtype, the pre-hc_head residual stream for an MTP draft: unconditional in 0.24.0 and 0.25.1,
# only with a speculative config that uses EAGLE / a draft model in 0.27.0 (needs_mtp_hidden_states; 0.26 not read,
# taken as 0.27). Both absent before 0.24 (0.20-0.23's DeepSeek-V4 not read for them).
DSV4_MODEL_BUFFERS_FROM = (0, 24, 0)
DSV4_MTP_BUFFER_ALWAYS_BEFORE = (0, 26, 0)
# 0.27.0 config/speculative.py use_eagle ("eagle", "eagle3", "mtp", "dflash", "dspark") and uses_draft_model
DSV4_HIDDEN_STATE_DRAFTS = ("eagle", "eagle3", "mtp", "dflash", "dspark", "draft_model")


def dsv4_model_buffers(spec: ModelSpec, s: VllmSettings, r: Resolved, last: bool) -> int:
    """Bytes of DeepSeek-V4's model-built buffers on a rank of a stage (the comment above DSV4_MODEL_BUFFERS_FROM):
    DeepSeek-V4-Flash at 32,768 batched tokens holds 32,768 x 512 x 4 B = 64 MiB of top-k indices and 32,768 x
    4 x 4,096 x 2 B = 1 GiB of MTP hidden states."""
    if spec.architecture not in DSV4_ARCHS or r.version < DSV4_MODEL_BUFFERS_FROM:
        return 0
    tokens = r.max_num_batched_tokens
    topk = max((la.attention.index_topk for la in spec.layers if la.attention is not None), default=0)
    total = tokens * topk * 4
    method = (s.speculative_method or "").lower()
    drafts = method in DSV4_HIDDEN_STATE_DRAFTS or "mtp" in method
    if last and (r.version < DSV4_MTP_BUFFER_ALWAYS_BEFORE or drafts):
        total += tokens * dsv4_hc_mult(spec) * spec.n_embd * r.dtype_bytes
    return total


def segment_tail(size: int) -> int:
    """What the caching allocator adds to a fresh allocation of `size` bytes: the unsplit tail of its segment."""
    size = -(-size // 512) * 512
    if size < _SEGMENT_MIN:
        return 0
    tail = -size % _SEGMENT_ROUND
    return tail if tail <= _SPLIT_OVER else 0


def _rope_cache_bytes(spec: ModelSpec, r: Resolved) -> int:
    """model_executor/layers/rotary_embedding: cos_sin_cache of max_position x rotary_dim in the model dtype, one
    per distinct rope (get_rope caches them by head size and parameters): Gemma 4's sliding layers (head_dim 256)
    and its full layers (global_head_dim 512, Gemma4RotaryEmbedding: the non-rotated dims get zero frequencies,
    so the cache spans the whole head) hold one each. Linear scaling (LinearScalingRotaryEmbedding
    _compute_cos_sin_cache: max_position_embeddings * scaling_factor rows, "the maximum length after applying the
    rope scaling") multiplies the rows; Gemma 3's sliding layers take a rope of their own (LOCAL_ROPE_ARCHS)."""
    dims = {(a.qk_rope_head_dim if a.kv_lora_rank else a.head_dim_k) for layer in spec.layers
            if (a := layer.attention) is not None}
    if not dims or not spec.n_ctx_train:
        return 0
    rs = spec.rope_scaling
    if rs is not None and rs.mrope and ERAS.reached(r.version, "mrope_cache_x4"):
        # MRotaryEmbedding: max_position_embeddings * positions_factor rows of rotary_dim (head_size *
        # partial_rotary_factor, get_rope) in the model dtype (settings.ERAS mrope_cache_x4, mrope_factor_per_model)
        factor = 1 if (ERAS.reached(r.version, "mrope_factor_per_model")
                       and spec.architecture in MROPE_FACTOR_ONE) else MROPE_POSITIONS_FACTOR
        return spec.n_ctx_train * factor * sum(int(d * (rs.partial_rotary_factor or 1.0)) for d in dims) \
            * r.dtype_bytes
    rows = spec.n_ctx_train
    if rs is not None and rs.type == "linear" and rs.factor and rs.factor > 1:
        rows = int(spec.n_ctx_train * rs.factor)
    local = 0
    if spec.architecture in LOCAL_ROPE_ARCHS:
        local = spec.n_ctx_train * sum({a.head_dim_k for layer in spec.layers if layer.kind is LayerKind.SLIDING
                                        and (a := layer.attention) is not None})
    return (rows * sum(dims) + local) * r.dtype_bytes


# models/gemma3.py Gemma3Attention (0.8.0 -> 0.18.0 read in the 0.10.0 and 0.18.0 wheels): a sliding layer builds
# its rope with rope_local_base_freq and rope_scaling {"rope_type": "default"}, the full layers with the config's
# rope_theta and rope_scaling (linear, factor 8, on the 4B / 12B / 27B checkpoints), so get_rope's cache key differs
# and each holds a cos_sin_cache: the sliding one of max_position_embeddings rows beside the scaled one
LOCAL_ROPE_ARCHS = frozenset({"gemma3"})


# rotary_embedding/mrope.py MRotaryEmbedding: max_position_embeddings * 4 cache rows (0.8.0-0.31.0; from 0.32 the
# default of get_rope's mrope_positions_factor); the architectures whose decoder layers pass models/qwen3_vl.py
# mrope_positions_factor from 0.32 (Qwen3VLDecoderLayer, qwen3_vl_moe.py, qwen3_5.py): 1 without video pruning
MROPE_POSITIONS_FACTOR = 4
MROPE_FACTOR_ONE = frozenset({"qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe"})


def offloaded_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, layers: tuple[int, int], budget: int,
                    ep_rank: int = 0) -> int:
    """Bytes of one rank's weights --cpu-offload-gb moves to host memory. make_layers wraps each decoder layer of
    the stage (models/utils.py maybe_offload_to_cpu in the releases before the offloader package;
    model_executor/offloader/uva.py UVAOffloader._maybe_offload_to_cpu, read at 0.21.0; the same per-parameter
    rule in both): the layer's parameters move in registration order
    while the bytes moved are below the budget ("we use per-parameter offloading"), so the parameter that crosses
    it moves whole, and the embedding, the final norm and the lm_head never move. vLLM's parameters are its fused
    ones (qkv_proj, gate_up_proj, the experts' w13 / w2), registered attention first, then the MLP, then the two
    norms (LlamaDecoderLayer, Qwen2DecoderLayer __init__). RTX 3090, vLLM 0.17.1, --cpu-offload-gb 12
    (TheBuccaneer/vllm-offload-profiles): Llama-3.1-8B moves 29 layers and layer 29's qkv, o and gate_up (12.08
    GiB), oomkit 3,124,813,824 B left on the GPU where 2.91 GiB is printed; Qwen2.5-7B 27 layers and layer 27's
    qkv, o and gate_up (12.03 GiB), oomkit 2,324,190,208 B where 2.17 GiB is printed (-0.25 %)."""
    if budget <= 0 or offload_ignored(r):
        return 0
    moved = tails = 0  # the budget counts the parameters' bytes; the GPU gives back their blocks (segment_tail)
    for size in _params_in_order(spec, s, r, layers, ep_rank):
        if moved >= budget:
            return moved + tails
        moved += size
        tails += segment_tail(size)
    return moved + tails


def _params_in_order(spec: ModelSpec, s: VllmSettings, r: Resolved, layers: tuple[int, int],
                     ep_rank: int) -> tuple[int, ...]:
    """One rank's bytes of each fused parameter of the stage's layers, in the order the offloader meets them;
    memoised like weights_by_global_rank (a fit tries many budgets on one layout)."""
    key = (s.enable_expert_parallel, s.quantization, r.tp, r.pp, r.dp, r.version, r.dtype_bytes, r.cc, r.num_spec,
           layers, ep_rank)
    return _WEIGHTS.get(spec, key, lambda: tuple(_param_sizes(spec, s, r, layers, ep_rank)))


def _param_sizes(spec: ModelSpec, s: VllmSettings, r: Resolved, layers: tuple[int, int], ep_rank: int) -> list[int]:
    plain = spec.weights.format.lower() in FLOAT_BYTES or spec.weights.format.lower() in DTYPE_ALIASES
    online = load_layout(s.quantization, plain)
    ep = ep_size(s, r)
    lo, hi = layers
    by_layer: dict[int, dict[tuple, int]] = {}
    for t in spec.weights.tensors:
        if t.layer is not None and lo <= t.layer < hi:
            nbytes = _tensor_bytes(t, r, plain, online if _linear_weight(t) else None, ep, spec.architecture)
            params = by_layer.setdefault(t.layer, {})
            param = _vllm_param(t.name)
            params[param] = params.get(param, 0) + rank_bytes(t, spec, r, nbytes, ep, ep_rank)
    return [by_layer[layer][param] for layer in sorted(by_layer) for param in sorted(by_layer[layer])]


def offload_ignored(r: Resolved) -> bool:
    """Model runner V2 before 0.28 never installs an offloader (settings.ERAS runner_v2_offload): make_layers then
    wraps the layers with the NoopOffloader (model_executor/offloader/base.py), so every weight stays on the GPU."""
    return r.runner_v2 and not ERAS.reached(r.version, "runner_v2_offload")


# GGUF tensor part -> (block, order in the block, vLLM parameter): the fused parameters vLLM registers
_FUSED = {"attn_q": (0, 0, "qkv"), "attn_k": (0, 0, "qkv"), "attn_v": (0, 0, "qkv"), "attn_qkv": (0, 0, "qkv"),
          "attn_output": (0, 1, "o"), "ffn_gate": (1, 0, "gate_up"), "ffn_up": (1, 0, "gate_up"),
          "ffn_down": (1, 1, "down"), "ffn_gate_exps": (1, 2, "w13"), "ffn_up_exps": (1, 2, "w13"),
          "ffn_down_exps": (1, 3, "w2"), "attn_norm": (2, 0, "input_layernorm"),
          "ffn_norm": (2, 1, "post_attention_layernorm")}


def _vllm_param(name: str) -> tuple:
    """The vLLM parameter a GGUF-named tensor ("blk.3.attn_q.weight") is part of, as a key that sorts in the
    decoder layer's registration order: the weight before its bias; other attention tensors after o_proj, other MLP
    tensors (router, shared experts) after the experts, anything else last."""
    parts = name.split(".")
    part, suffix = (parts[2], ".".join(parts[3:])) if len(parts) > 2 else (name, "")
    rank = 0 if suffix == "weight" else 1
    if part in _FUSED:
        block, order, param = _FUSED[part]
    elif part.startswith("attn_") and (not part.endswith("norm") or part in ("attn_q_norm", "attn_k_norm")):
        block, order, param = 0, 2, part  # Qwen3Attention registers q_norm / k_norm after o_proj
    elif part.startswith("ffn_") and not part.endswith("norm"):
        block, order, param = 1, 4, part
    elif part.endswith("norm"):
        block, order, param = 2, 2, part  # Gemma's extra pre / post norms
    else:
        block, order, param = 3, 0, part
    return block, order, param, rank, suffix


# the fused parameter a GGUF-named tensor belongs to, in registration order (SGLang fuses the same ones)
param_key = _vllm_param
