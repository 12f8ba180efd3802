"""vLLM's KV cache: one spec per layer (v1/kv_cache_interface.py *Spec), their grouping into pools
(v1/core/kv_cache_utils.py, step by step under vLLM's names), the blocks a budget holds and the check that one
request fits."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import OomkitError
from ...model.archs import DSV4_ARCHS, refuse_llamacpp_only_caches
from ...model.spec import LayerKind, LayerSpec, ModelSpec
from ...quant.dtypes import FLOAT_BYTES
from ...units import cdiv
from ..versions import Version
from .config import (
    DSV4_FIRST,
    KV_DTYPE_BYTES,
    MLA_PACKED_BYTES,
    NVFP4,
    PER_TOKEN_HEAD,
    Resolved,
    dsv4_indexer_mxfp4,
)
from .drafter import drafter_of, kv_heads, mtp_layers_loaded
from .settings import ERAS, VllmSettings, format_gib


@dataclass(frozen=True)
class KvSpec:
    """One layer's KV cache spec on one rank. kind: full | sliding | chunked | mla | mamba."""

    kind: str
    block_size: int
    bytes_per_token: int = 0  # attention: page_size / block_size
    window: int = 0  # sliding window or attention chunk size
    state_bytes: int = 0  # mamba: one page holds one request's state
    padded_page: int = 0
    mamba_mode: str = "none"  # cache_config.mamba_cache_mode
    spec_blocks: int = 0  # MambaSpec.num_speculative_blocks

    @property
    def page_bytes(self) -> int:
        if self.padded_page:
            return self.padded_page
        return self.state_bytes if self.kind == "mamba" else self.block_size * self.bytes_per_token

    def max_memory_usage(self, max_model_len: int, max_num_batched_tokens: int) -> int:
        """The KV one request at max_model_len needs in this layer (*Spec.max_memory_usage_bytes)."""
        if self.kind in ("full", "mla"):
            return cdiv(max_model_len, self.block_size) * self.page_bytes
        if self.kind == "sliding":  # SlidingWindowSpec: window-1 + in-flight tokens, +1 for misalignment
            n = min(self.window - 1 + max_num_batched_tokens, max_model_len)
            return (cdiv(n, self.block_size) + 1) * self.page_bytes
        if self.kind == "chunked":  # ChunkedLocalAttentionSpec
            n = min(self.window + max_num_batched_tokens, max_model_len)
            return cdiv(n, self.block_size) * self.page_bytes
        if self.kind == "mamba":  # MambaSpec: one page per request (two in "align" mode), + speculative slots
            if self.mamba_mode == "all":
                return cdiv(max_model_len, self.block_size) * self.page_bytes
            return self.page_bytes * ((2 if self.mamba_mode == "align" else 1) + self.spec_blocks)
        raise AssertionError(self.kind)


@dataclass(frozen=True)
class KvPlan:
    """How vLLM lays out the KV cache of one rank: groups of layers sharing block tables and memory pools."""

    layers: dict[int, KvSpec]  # layer index -> spec (this rank's layers)
    groups: tuple[tuple[KvSpec, tuple[int, ...]], ...]  # (group spec, layer indices); padding not listed
    group_size: int  # layers per group = tensors in the pool; bytes per block = page * group_size
    page_bytes: int
    block_size: int
    label: str = ""

    @property
    def bytes_per_block(self) -> int:
        return self.page_bytes * self.group_size

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def needed(self, max_len: int, batched: int) -> int:
        """check_enough_kv_cache_memory: sum over this rank's layers of max_memory_usage_bytes."""
        return sum(sp.max_memory_usage(max_len, batched) for sp in self.layers.values())

    def blocks_per_request(self, max_len: int, batched: int) -> int:
        """get_max_concurrency_for_kv_cache_config: cdiv(group_size * sum over groups of max usage,
        page * group_size), i.e. the blocks one max_model_len request draws from the shared pool."""
        per_group = sum(spec.max_memory_usage(max_len, batched) for spec, _ in self.groups)
        return cdiv(self.group_size * per_group, self.bytes_per_block)


# ---------------------------------------------------------------------------------------------------------
# Per layer: the spec each attention / Mamba layer reports (v1/kv_cache_interface.py)


def _kv_bytes(r: Resolved) -> int:
    return KV_DTYPE_BYTES.get(r.kv_dtype, FLOAT_BYTES.get(r.kv_dtype, 2))


# models/deepseek_v2.py (0.5.1, where DeepseekV2ForCausalLM arrived, -> 0.6.6) and deepseek_v3.py (0.6.6)
# DeepseekV2Attention / DeepseekV3Attention: "# TODO, support head_size 192", Attention(num_local_heads, 256, ...,
# num_kv_heads=num_local_heads) with q, k and v zero-padded to 256 (F.pad(..., [0, 256 - qk_head_dim])): every
# head's K and V cached at 256. 0.7.0 builds Attention(num_local_heads, qk_head_dim, ...) and pads v to qk_head_dim
# alone; 0.7.1 caches the latent (mla_latent). Read in the 0.5.1-0.7.1 sdists.
MLA_HEAD_PADDED_BEFORE = (0, 7, 0)
MLA_PADDED_HEAD = 256


def _attention_bytes_per_token(layer: LayerSpec, r: Resolved) -> tuple[str, int]:
    """(kind, page bytes per token) of an attention layer on one TP rank (AttentionSpec.page_size_bytes)."""
    a = layer.attention
    if layer.kind is LayerKind.LATENT and (not r.at_least("mla_latent") or r.mla_off):
        # settings.py ERAS mla_latent: every head's K and V, V padded to the K head (qk_nope + qk_rope) in 0.7.0,
        # and from 0.7.1 where use_mla is off (Resolved.mla_off: get_head_size qk_rope + qk_nope, Attention(
        # num_local_heads, qk_head_dim); 0.7.1-0.8.3 deepseek_v2.py); up to 0.6.6 both padded to 256
        head = a.qk_nope_head_dim + a.qk_rope_head_dim
        if r.version < MLA_HEAD_PADDED_BEFORE:
            head = max(head, MLA_PADDED_HEAD)
        return "full", max(1, a.n_heads // r.tp) * head_bytes_per_token(head, head, r.kv_dtype, _kv_bytes(r))
    if layer.kind is LayerKind.LATENT:
        # MLAAttentionSpec: one latent row (kv_lora_rank + qk_rope_head_dim), no V, 1 head, never TP-split
        if r.kv_dtype in MLA_PACKED_BYTES:
            # fp8_ds_mla also where a sparse-MLA model's fp8 (or, on SM 12.x, auto) cache becomes it
            # (config.py sparse_mla_kv_dtype)
            latent = MLA_PACKED_BYTES[r.kv_dtype]
        else:
            latent = (a.kv_lora_rank + a.qk_rope_head_dim) * _kv_bytes(r)
        # models/deepseek_v2.py DeepseekV2MLAAttention: the Indexer (and with it its DeepseekV32IndexerCache) is built
        # only where the IndexCache schedule keeps the top-k ("if self.is_v32 and (not _skip_topk or is_mtp_layer)",
        # vLLM 002d6073): GLM-5.2's shared layers cache the latent alone
        return "mla", latent + (0 if a.indexer_shared else indexer_bytes_per_token(a.index_head_dim))
    # ModelConfig.get_num_kv_heads: max(1, total // tp): heads are replicated when fewer than the ranks
    heads = max(1, a.n_kv_heads // r.tp)
    kind = {LayerKind.SLIDING: "sliding", LayerKind.CHUNKED: "chunked"}.get(layer.kind, "full")
    return kind, heads * head_bytes_per_token(a.head_dim_k, a.head_dim_v, r.kv_dtype, _kv_bytes(r))


def nvfp4_kv_cache_full_dim(head_size: int) -> int:
    """utils/torch_utils.py nvfp4_kv_cache_full_dim: the packed last dim of one K or V row in an nvfp4 cache (uint8):
    two fp4 values a byte and one fp8 block scale per 16 values (0.20+)."""
    return head_size // 2 + head_size // 16


def head_bytes_per_token(head_k: int, head_v: int, kv_dtype: str, elem: int) -> int:
    """One KV head's K and V bytes per token (AttentionSpec.page_size_bytes / block_size / num_kv_heads):
    - nvfp4 / nvfp4_4over6 (0.20+): the packed K and V rows, nvfp4_kv_cache_full_dim each (FullAttentionSpec
      .real_page_size_bytes up to 0.27, FlashInferBackend.customize_spec from 0.28: 2 x num_kv_heads slots of
      full_dim bytes; the per-tensor global scales are layer parameters, not pages). Head 128: 144 B against 512 in
      bfloat16;
    - int8 / fp8_per_token_head (0.20+), int4_per_token_head (0.25+, two values a byte): the values and one float32
      scale per K and V side (AttentionSpec.page_size_bytes' 2 * block_size * num_kv_heads * 4 up to 0.27,
      TritonAttentionBackend.customize_spec from 0.28), read in the 0.20.0-0.34.0 wheels;
    - else (head_k + head_v) elements of the cache dtype."""
    if kv_dtype in NVFP4:
        return nvfp4_kv_cache_full_dim(head_k) + nvfp4_kv_cache_full_dim(head_v)
    if kv_dtype in PER_TOKEN_HEAD:
        if kv_dtype == "int4_per_token_head":
            return head_k // 2 + head_v // 2 + 2 * 4
        return head_k + head_v + 2 * 4
    return (head_k + head_v) * elem


INDEXER_QUANT_BLOCK = 128  # models/deepseek_v2.py Indexer.quant_block_size


def indexer_bytes_per_token(index_head_dim: int) -> int:
    """DeepSeek V3.2's lightning-indexer key cache per token and layer (models/deepseek_v2.py Indexer:
    DeepseekV32IndexerCache(head_dim=head_dim + head_dim // quant_block_size * 4, dtype=torch.uint8), an
    MLAAttentionSpec of 1 head: the fp8 key and one float32 scale per 128 values, whatever --kv-cache-dtype says;
    0.11+). The indexer layer shares the MLA layer's block table: v1/kv_cache_interface.py UniformTypeKVCacheSpecs
    puts both specs in one group whose page is the sum of theirs, so a token costs latent + indexer in every
    layer."""
    return index_head_dim + index_head_dim // INDEXER_QUANT_BLOCK * 4 if index_head_dim else 0


# Qwen3.5 / 3.6 configs declare mamba_ssm_dtype "float32", which vLLM applies to the temporal state
# (model_executor/models/config.py Qwen3_5ForConditionalGenerationConfig). ModelSpec does not carry the field, so
# the architecture stands for it (every published Qwen3.5/3.6 config sets it).
_SSM_FP32_ARCHS = frozenset({"qwen35", "qwen35moe"})
# Kimi-Linear (vLLM 0.11+, KimiLinearForCausalLM) and Kimi K3 (0.27+, KimiK3ForConditionalGeneration, its decoder
# models/kimi_linear.py's): their KDA layers are RecurrentState("gated_delta_net") in the spec with llama.cpp's sizes
_KDA_ARCHS = frozenset({"kimi-linear", "kimi-k3"})


def _mamba_state_bytes(layer: LayerSpec, r: Resolved, s: VllmSettings, spec_arch: str = "") -> int:
    """model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator (shapes per TP rank) and
    MambaStateDtypeCalculator (conv and temporal state in the model dtype unless mamba_*_cache_dtype)."""
    st = layer.recurrent
    tp = r.tp
    conv_b = FLOAT_BYTES.get(s.mamba_cache_dtype, r.dtype_bytes) if s.mamba_cache_dtype != "auto" else r.dtype_bytes
    ssm_dtype = s.mamba_ssm_cache_dtype
    if ssm_dtype == "auto" and spec_arch in _SSM_FP32_ARCHS:
        ssm_dtype = "float32"
    ssm_b = FLOAT_BYTES.get(ssm_dtype, conv_b) if ssm_dtype != "auto" else conv_b
    k1 = max(st.d_conv - 1, 0) + (r.num_spec if st.kind != "mamba" else 0)
    if st.kind == "short_conv":
        # LFM2 / LFM2-MoE ShortConv (layers/mamba/short_conv.py, a MambaBase layer): short_conv_state_shape is one
        # conv state (conv_kernel - 1, conv_dim // tp) in short_conv_state_dtype (the conv dtype), no temporal
        # state (read in 0.21-0.34). conv_dim: models/lfm2.py passes hf_config.conv_dim, lfm2_moe.py hidden_size; LFM2
        # configs carry conv_dim == hidden_size, which the spec reads. From 0.29 the layer adds num_spec rows but
        # get_mamba_state_shape_from_config, which sizes the page, does not: not modelled.
        if r.num_spec:
            raise OomkitError(f"{layer.index}: vLLM's short-convolution (LFM2) state with speculative decoding is "
                              "not modelled")
        k1 = max(st.d_conv - 1, 0)
        return k1 * (st.d_inner // tp) * conv_b
    if st.kind == "gated_delta_net" and spec_arch in _KDA_ARCHS:
        # Kimi Delta Attention (models/kimi_linear.py KimiDeltaAttention; layers/mamba/mamba_utils.py
        # kda_state_shape / kda_state_dtype): short-convolution states of q, k and v, (conv_kernel_size - 1) x
        # num_heads x head_dim / tp each in the conv dtype (mamba_cache_dtype, else the model's), and a num_heads / tp
        # x head_dim x head_dim recurrent state always in float32; num_spec does not widen the conv state there
        hd, n_h = st.d_state, st.n_heads
        return max(st.d_conv - 1, 0) * 3 * (n_h * hd // tp) * conv_b + (n_h // tp) * hd * hd * 4
    if st.kind == "gated_delta_net":  # gated_delta_net_state_shape
        n_v = st.n_heads
        d_v = st.d_inner // n_v
        d_k = st.d_state
        conv_dim = d_k * st.n_group * 2 + d_v * n_v
        return k1 * (conv_dim // tp) * conv_b + (n_v // tp) * d_v * d_k * ssm_b
    if st.kind == "mamba2":  # mamba2_state_shape (groups extended so each rank holds whole groups)
        n_group = st.n_group if st.n_group % tp == 0 or st.n_group >= tp else tp
        conv_dim = st.d_inner + 2 * n_group * st.d_state
        head_dim = st.d_inner // max(st.n_heads, 1)
        return k1 * (conv_dim // tp) * conv_b + (st.n_heads // tp) * head_dim * st.d_state * ssm_b
    if st.kind == "mamba":  # mamba1_state_shape
        return k1 * (st.d_inner // tp) * conv_b + (st.d_inner // tp) * st.d_state * ssm_b
    raise OomkitError(f"{layer.index}: vLLM state layout for recurrent kind {st.kind!r} is not modelled")


SPARSE_BLOCK_BY_BACKEND = (0, 18, 0)  # platforms/interface.py update_block_size_for_backend (absent in 0.17.1)


def block_size_for(spec: ModelSpec, s: VllmSettings, r: Resolved) -> tuple[int, str]:
    """The KV block size in tokens and why (platforms/cuda.py, v1/attention/backends/*)."""
    # platforms/cuda.py check_and_update_config reads model_config.use_mla: per-head K/V keep the default block
    mla = any(layer.kind is LayerKind.LATENT for layer in spec.trunk_layers) and not r.mla_off
    backend = (s.attention_backend or "").upper()
    sparse = any(layer.attention is not None and layer.attention.index_head_dim for layer in spec.trunk_layers)
    if sparse and (not r.cc or r.cc[0] >= 9):
        if r.version >= SPARSE_BLOCK_BY_BACKEND:
            # platforms/interface.py update_block_size_for_backend (0.18+): a --block-size is kept; else the
            # preferred size of the first attention layer's backend (0.18-0.30 _find_non_ssm_backend), from 0.31 the
            # smallest size every backend takes (_preferred_block_size_for_backends, the lcm of one size each). The
            # first layer is the indexer's key cache (models/deepseek_v2.py DeepseekV2MLAAttention builds its
            # Indexer, and with it DeepseekV32IndexerCache, before the MLA layer), whose DEEPSEEK_V32_INDEXER
            # backend takes 64 only on CUDA (v1/attention/backends/mla/indexer.py get_supported_kernel_block_sizes).
            # So 64, whichever sparse MLA backend runs: FLASHMLA_SPARSE [64], FLASHINFER_MLA_SPARSE [32, 64] (0.33+
            # MultipleOf(32); the SM 10.x choice for an fp8 cache and, up to 0.32, for bf16 at <= 16 heads per rank,
            # platforms/cuda.py _get_backend_priorities), FLASH_ATTN_MLA_SPARSE_FA4 MultipleOf(64) (0.33+, bf16 at
            # <= 16 heads), FLASHINFER_MLA_SPARSE_SM120 [64, 256] (read in the 0.18.1-0.34.0 wheels)
            if s.block_size is not None:
                return s.block_size, "--block-size"
            return 64, "64-token blocks: the DeepSeek V3.2 indexer cache's backend takes 64 only"
        if backend == "FLASHINFER_MLA_SPARSE" and s.block_size in (32, 64):
            # platforms/cuda.py check_and_update_config (0.11-0.17): FLASHINFER_MLA_SPARSE named keeps 32 or 64
            return s.block_size, "--block-size (FLASHINFER_MLA_SPARSE: 32 or 64)"
        # platforms/cuda.py check_and_update_config (0.11-0.17): "Forcing kv cache block size to 64 for
        # FlashMLASparse backend." (the default sparse backend; FLASHINFER_MLA_SPARSE named: 64 unless 32 or 64)
        return 64, "FlashMLA-sparse forces 64-token blocks (DeepSeek V3.2)"
    if mla and r.version >= (0, 7, 3):
        if r.version < ERAS["mla_preferred_block"]:
            # platforms/cuda.py check_and_update_config (<= 0.11): the MLA backend forces its block size
            if backend == "CUTLASS_MLA" or (not backend and r.cc and r.cc[0] == 10):
                return 128, "CUTLASS_MLA forces 128-token blocks"
            if backend == "FLASHINFER_MLA":
                return (s.block_size if s.block_size in (32, 64) else 64), "FLASHINFER_MLA: 32 or 64"
            if backend in ("", "FLASHMLA") and r.cc and r.cc[0] == 9:
                return 64, "FlashMLA forces 64-token blocks (Hopper)"
        else:
            # 0.12+: the first valid backend's preferred size (FLASH_ATTN_MLA on Hopper: multiples of 16;
            # FLASHINFER_MLA first on Blackwell: 32/64; TRITON_MLA elsewhere)
            if s.block_size is not None:
                return s.block_size, "--block-size"
            if backend == "FLASHMLA":
                return 64, "FLASHMLA backend: 64-token blocks"
            if backend == "CUTLASS_MLA":
                return 128, "CUTLASS_MLA backend: 128-token blocks"
            if backend == "FLASHINFER_MLA" or (not backend and r.cc and r.cc[0] == 10):
                return 32, "FLASHINFER_MLA backend: 32-token blocks"
    if s.block_size is not None:
        return s.block_size, "--block-size"
    return 16, "default"


def get_kv_cache_spec(spec: ModelSpec, s: VllmSettings, r: Resolved, block: int) -> dict[int, KvSpec]:
    """v1/worker/gpu_model_runner.py get_kv_cache_spec: each layer's spec (layer index -> spec); MTP / next-n
    layers are loaded only for speculative decoding, and then their attention layers take KV cache beside the
    target's (the drafter's layers are in the same forward context). nvidia/Qwen3.6-35B-A3B-NVFP4 with MTP 2 on
    0.22.1: 10 full-attention layers + the MTP layer's, "Add 3 padding layers", 74.76 GiB -> 6,455,296 tokens
    (99sono/DockerBuildFiles log)."""
    refuse_llamacpp_only_caches(spec, "vLLM")
    specs: dict[int, KvSpec] = {}
    for layer in (spec.layers if mtp_layers_loaded(s, r) else spec.trunk_layers):
        if layer.kind is LayerKind.NONE and layer.cross_attention and layer.attention is not None and not r.v1:
            # mllama on V0: worker/cache_engine.py sizes a block over every attention layer (num_hidden_layers,
            # the cross-attention ones included); their blocks hold the encoder tokens (the cross block table of
            # core/block_manager.py), the self-attention layers' the sequence's tokens
            specs[layer.index] = KvSpec("full", block, bytes_per_token=_attention_bytes_per_token(layer, r)[1])
            continue
        if layer.kind is LayerKind.NONE:
            continue
        if layer.attention is not None and not layer.attention.n_kv_heads and layer.kind is not LayerKind.LATENT:
            continue  # models/nemotron_nas.py DeciLMDecoderLayer: a no-op (or linear) attention has no Attention module
        if layer.attention is not None and layer.kind is not LayerKind.RECURRENT:
            kind, bpt = _attention_bytes_per_token(layer, r)
            win = layer.attention.window or 0
            if kind in ("sliding", "chunked") and not r.v1:
                kind, win = "full", 0  # V0's block manager allocates every layer for the whole sequence
            specs[layer.index] = KvSpec(kind, block, bytes_per_token=bpt, window=win)
        if layer.recurrent is not None and (layer.kind is LayerKind.RECURRENT or layer.parallel_recurrent):
            if layer.parallel_recurrent:
                raise OomkitError(f"{spec.name}: vLLM's layout for parallel attention+Mamba layers (Falcon-H1) is "
                                  "not modelled")
            specs[layer.index] = KvSpec("mamba", block, state_bytes=_mamba_state_bytes(layer, r, s, spec.architecture),
                                        mamba_mode=r.mamba_cache_mode, spec_blocks=r.num_spec)
    return specs


def verify_and_update_config(name: str, specs: dict[int, KvSpec], block: int, why: str, r: Resolved
                             ) -> tuple[dict[int, KvSpec], int, str]:
    """model_executor/models/config.py HybridAttentionMambaModelConfig.verify_and_update_config: the attention
    block grows until its page holds a Mamba state (in multiples of 16; 64 for MLA), then the Mamba page is padded
    to match -> (specs, block size, why)."""
    mamba = [k for k, v in specs.items() if v.kind == "mamba"]
    if not mamba:
        return specs, block, why
    if not r.v1:
        # V0: the KV blocks hold the attention layers alone (worker/cache_engine.py CacheEngine.get_cache_block_size:
        # num_attention_layers = model_config.get_num_layers_by_block_type(parallel_config, "attention"), 0.5.1 ->
        # 0.10.2); the Mamba state is MambaCacheManager's, outside the blocks (v0_mamba_cache_bytes). An
        # attention-free model (Mamba, Mamba-2) gets 0 blocks (worker.py determine_num_available_blocks:
        # cache_block_size == 0)
        return {k: v for k, v in specs.items() if v.kind != "mamba"}, block, why
    state = max(specs[i].state_bytes for i in mamba)
    attn_bpt = [v.bytes_per_token for v in specs.values() if v.kind != "mamba"]
    label = why
    if attn_bpt:
        align = 64 if any(v.kind == "mla" for v in specs.values()) else 16
        per_tok = max(attn_bpt)
        need = align * cdiv(state, align * per_tok)
        block = max(block, need)
        page = block * per_tok
        label = f"attention block size raised to {block} tokens so a page holds one Mamba state"
    else:
        page = state
    specs = {k: (replace(v, block_size=block, padded_page=page) if v.kind == "mamba"
                 else replace(v, block_size=block)) for k, v in specs.items()}
    return specs, block, label



# V0's Mamba state (model_executor/models/mamba_cache.py MambaCacheManager; before 0.6.3 models/jamba.py
# _prepare_mamba_cache): one conv and one temporal state tensor of (Mamba layers of the stage, max_batch_size) +
# the layer's state shape, in the model's dtype (lm_head.weight.dtype up to 0.10.0; 0.10.1-0.10.2 take
# MambaStateDtypeCalculator's, the model's unless --mamba-*-cache-dtype). The model builds it in its first forward
# (`if self.mamba_cache is None` / `if not self.mamba_cache`), which is the profile run: the tensors are inside the
# profiled torch peak, stay allocated, and the KV budget is what is left after them (worker.py
# determine_num_available_blocks). Shapes: the V1 shape calculators' (mamba_utils.py MambaStateShapeCalculator were
# lifted from the models' _get_mamba_cache_shape: Jamba / Mamba (d_inner/tp, d_conv - 1) + (d_inner/tp, d_state);
# Mamba-2, Bamba, Nemotron-H, GraniteMoeHybrid (conv_dim/tp, d_conv - 1) + (heads/tp, head_dim, d_state), read in
# 0.6.3, 0.7.3, 0.9.1, 0.9.2 and 0.10.2); Jamba's conv state before 0.6.3 is (d_inner/tp, d_conv) (models/jamba.py
# _get_mamba_cache_shape, 0.5.1-0.6.2).
V0_MAMBA_KINDS = frozenset({"mamba", "mamba2"})
V0_CONV_FULL_BEFORE: Version = (0, 6, 3)


def v0_graph_batch_size(n: int) -> int:
    """worker/model_runner.py _get_graph_batch_size (and from 0.6.5 VllmConfig.pad_for_cudagraph over V0's capture
    list [1, 2, 4] + multiples of 8 up to the first >= max_num_seqs): n up to 2, 4 up to 4, else n rounded up to 8."""
    if n <= 2:
        return n
    return 4 if n <= 4 else cdiv(n, 8) * 8


def v0_mamba_batch(s: VllmSettings, r: Resolved) -> int:
    """MambaCacheManager's max_batch_size, by release: 0.5.1-0.5.2 _BATCH_SIZES_TO_CAPTURE[-1] + 10 = 266 (jamba.py);
    0.5.3-0.6.4 _get_graph_batch_size(max_num_seqs), eager or not; 0.6.5-0.7.2 pad_for_cudagraph(max_num_seqs) (the
    largest capture size where max_num_seqs is above it), and 8192 + 2 with --enforce-eager (jamba.py / mamba.py
    __init__); 0.7.3-0.10.2 pad_for_cudagraph(max_num_seqs), max_num_seqs itself with --enforce-eager
    (mamba_cache.py MambaCacheManager.__init__)."""
    n = r.max_num_seqs
    if r.version < (0, 5, 3):
        return 256 + 10
    if r.version < (0, 6, 5):
        return v0_graph_batch_size(n)
    if s.enforce_eager:
        return 8192 + 2 if r.version < (0, 7, 3) else n
    return v0_graph_batch_size(n)


def v0_mamba_cache_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, layer_range: tuple[int, int]) -> int:
    """The bytes of V0's MambaCacheManager on one rank (see V0_MAMBA_KINDS); 0 on V1 or for a model without Mamba
    layers. Raises OomkitError for a recurrent layer V0 keeps in another cache (MiniMax's linear attention)."""
    if r.v1:
        return 0
    lo, hi = layer_range
    layers = [la for la in spec.trunk_layers if lo <= la.index < hi and la.recurrent is not None
              and (la.kind is LayerKind.RECURRENT or la.parallel_recurrent)]
    if not layers:
        return 0
    per_seq = 0
    for la in layers:
        st = la.recurrent
        if st.kind not in V0_MAMBA_KINDS:
            raise OomkitError(f"{spec.name}: vLLM {'.'.join(map(str, r.version))} runs it on V0, whose "
                              f"{st.kind} state cache is not modelled")
        per_seq += _mamba_state_bytes(la, r, s, spec.architecture)
        if r.version < V0_CONV_FULL_BEFORE:
            per_seq += (st.d_inner // r.tp) * r.dtype_bytes  # the d_conv-th column of the conv state
    return per_seq * v0_mamba_batch(s, r)

# ---------------------------------------------------------------------------------------------------------
# One rank's specs -> its groups (v1/core/kv_cache_utils.py get_kv_cache_groups and the steps it calls)


def unify_hybrid_kv_cache_specs(specs: dict[int, KvSpec], s: VllmSettings, r: Resolved) -> dict[int, KvSpec]:
    """kv_cache_utils.py unify_hybrid_kv_cache_specs: without the hybrid allocator, sliding/chunked layers become
    full attention (all tokens kept)."""
    hybrid_ok = r.v1 and r.at_least("hybrid_allocator") and not s.disable_hybrid_kv_cache_manager
    if any(v.kind == "chunked" for v in specs.values()) and not r.at_least("chunked_hybrid"):
        hybrid_ok = False  # VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE was 0 by default
    kinds = {v.kind for v in specs.values()}
    if len(kinds) <= 1 or hybrid_ok:
        return specs
    if "mamba" in kinds:
        raise OomkitError("Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one "
                          "unified type.")
    return {k: (replace(v, kind="full", window=0) if v.kind in ("sliding", "chunked") else v)
            for k, v in specs.items()}


def unify_kv_cache_spec_page_size(name: str, specs: dict[int, KvSpec]) -> dict[int, KvSpec]:
    """kv_cache_utils.py unify_kv_cache_spec_page_size: layers with a smaller page get a proportionally larger
    block (a Mamba page is padded)."""
    pages = {v.page_bytes for v in specs.values()}
    if len(pages) <= 1:
        return specs
    biggest = max(pages)
    unified = {}
    for k, v in specs.items():
        if v.page_bytes == biggest:
            unified[k] = v
        elif v.kind == "mamba":
            unified[k] = replace(v, padded_page=biggest)
        elif biggest % v.page_bytes == 0:
            unified[k] = replace(v, block_size=v.block_size * (biggest // v.page_bytes))
        else:
            raise OomkitError(f"{name}: vLLM cannot unify the KV page sizes of its layers "
                              "(NotImplementedError in unify_kv_cache_spec_page_size)")
    return unified


def get_kv_cache_groups(specs: dict[int, KvSpec], r: Resolved, label: str) -> KvPlan:
    """kv_cache_utils.py get_kv_cache_groups: layers of the same spec grouped; uniform models: one group holding
    every layer (_get_kv_cache_groups_uniform_spec)."""
    page = next(iter(specs.values())).page_bytes
    buckets: dict[KvSpec, list[int]] = {}
    for k in sorted(specs):
        buckets.setdefault(specs[k], []).append(k)
    block_size = min(v.block_size for v in specs.values())
    if len(buckets) == 1:
        sp, idx = next(iter(buckets.items()))
        return KvPlan(layers=specs, groups=((sp, tuple(idx)),), group_size=len(idx), page_bytes=page,
                      block_size=block_size, label=label)
    # _get_kv_cache_config_uniform_page_size: groups of group_size layers (the smallest type's count; the
    # largest when it is under 1.5x the smallest, in the newest releases)
    counts = [len(v) for v in buckets.values()]
    group_size = min(counts)
    if r.at_least("null_block") and max(counts) < group_size * 1.5:
        group_size = max(counts)
    groups = []
    for sp, idx in buckets.items():
        n = cdiv(len(idx), group_size)
        for i in range(n):
            groups.append((sp, tuple(idx[i::n])))
    return KvPlan(layers=specs, groups=tuple(groups), group_size=group_size, page_bytes=page,
                  block_size=block_size, label=label)


def kv_plan(spec: ModelSpec, s: VllmSettings, r: Resolved, layer_range: tuple[int, int] | None = None) -> KvPlan:
    """The KV layout of one rank (the layers in layer_range, default all)."""
    lo, hi = layer_range or (0, spec.n_trunk_layers)
    if spec.architecture in DSV4_ARCHS and r.version >= DSV4_FIRST:
        # DeepseekV4ForCausalLM (0.20.0+): the fp8_ds_mla cache (config.py dsv4_kv_dtype: only fp8 is taken, and
        # "auto" is fp8 from 0.30.0)
        if r.version >= DSV4_LAST:
            raise OomkitError(f"{spec.name}: vLLM {'.'.join(map(str, r.version))}'s DeepSeek-V4 cache layout is not "
                              "modelled (releases after 0.34.0 not read); --engine-version 0.34.0 gives the newest "
                              "modelled layout")
        layers = [la for la in (spec.layers if mtp_layers_loaded(s, r) else spec.trunk_layers) if la.attention is not None
                  and (lo <= la.index < hi or (hi == spec.n_trunk_layers and la.index >= hi))]
        fp4 = dsv4_indexer_mxfp4(s, r.version, r.cc)
        if r.kv_dtype != "fp8_ds_mla":
            # config.py dsv4_kv_dtype: FLASHINFER_MLA_SPARSE_DSV4 on SM 10.x, 0.29+: the plain-row layout
            elem = 1 if r.kv_dtype.startswith("fp8") else 2
            return deepseek_v4_plan(layers, f"DeepSeek-V4: FlashInfer sparse 256-token blocks (plain {r.kv_dtype} "
                                    f"rows of {512 * elem} B, 512 B alignment"
                                    + (", MXFP4 indexer keys)" if fp4 else ")"), r.version, indexer_mxfp4=fp4,
                                    plain_elem=elem)
        return deepseek_v4_plan(layers, "DeepSeek-V4: FlashMLA-sparse 256-token blocks (fp8_ds_mla, 584 B rows"
                                + (", MXFP4 indexer keys)" if fp4 else ")"), r.version, indexer_mxfp4=fp4)
    block, why = block_size_for(spec, s, r)
    specs = get_kv_cache_spec(spec, s, r, block)
    if hi == spec.n_trunk_layers and (d := drafter_of(s, r)) is not None:
        # the EAGLE head's attention layers (drafter.py): full attention, the draft config's KV heads, the target's
        # cache dtype; keyed past every target layer so they run beside the last stage
        base = max((la.index for la in spec.layers), default=0) + 1
        bpt = kv_heads(d, r) * head_bytes_per_token(d.head_dim, d.head_dim, r.kv_dtype, _kv_bytes(r))
        for i in range(d.n_layers):
            specs[base + i] = KvSpec("full", block, bytes_per_token=bpt)
    specs, block, label = verify_and_update_config(spec.name, specs, block, why, r)
    # the MTP drafter's layers (index >= n_trunk_layers) run beside the last stage
    own = {k: v for k, v in specs.items() if lo <= k < hi or (hi == spec.n_trunk_layers and k >= hi)}
    if not own:
        return KvPlan(layers={}, groups=(), group_size=1, page_bytes=0, block_size=block, label="no KV cache")
    own = unify_hybrid_kv_cache_specs(own, s, r)
    uniform = _uniform_type_plan(own, label)
    if uniform is not None:
        return uniform
    own = unify_kv_cache_spec_page_size(spec.name, own)
    return get_kv_cache_groups(own, r, label)


def _uniform_type_plan(specs: dict[int, KvSpec], label: str) -> KvPlan | None:
    """kv_cache_utils.py get_kv_cache_groups: MLA layers (with their indexer caches) of one block size but of
    different page sizes form one group (v1/kv_cache_interface.py UniformTypeKVCacheSpecs.from_specs: same spec
    type and block size; the group's page is the sum of its layers'), not the page-size unification: GLM-5.2's 21
    layers with an indexer key beside the 57 without (indexer_bytes_per_token). None where the pages agree or the
    types differ."""
    kinds = {v.kind for v in specs.values()}
    pages = {v.page_bytes for v in specs.values()}
    blocks = {v.block_size for v in specs.values()}
    if kinds != {"mla"} or len(pages) <= 1 or len(blocks) != 1:
        return None
    block = blocks.pop()
    combined = KvSpec("mla", block, bytes_per_token=sum(v.bytes_per_token for v in specs.values()))
    return KvPlan(layers=specs, groups=((combined, tuple(sorted(specs))),), group_size=1,
                  page_bytes=combined.page_bytes, block_size=block, label=label)


# ---------------------------------------------------------------------------------------------------------
# Blocks from a budget, and the check that one request fits (kv_cache_utils.py get_kv_cache_configs)


def kv_tokens_in_flight(r: Resolved) -> int:
    """The tokens a sliding-window or chunked-local layer holds beyond its window for one request
    (v1/kv_cache_interface.py SlidingWindowSpec / ChunkedLocalAttentionSpec.max_admission_blocks_per_request).
    Before 0.26 max_num_batched_tokens; from 0.26 config/vllm.py VllmConfig.max_in_flight_tokens =
    max_concurrent_batches x max_num_batched_tokens ("every concurrent batch may hold up to a full
    max_num_batched_tokens"). max_concurrent_batches (read in the 0.26.0-0.34.0 wheels): pp without async
    scheduling; with it pp + 1 on the V2 model runner (and in 0.34.0, which has no V1 runner), 2 on the V1 runner
    without pipeline parallelism, pp with it ("V1 Model Runner does not fully support async scheduling with PP").
    Async scheduling as config.py _async_scheduling settles it (--async-scheduling / --no-async-scheduling, else
    VllmConfig.__post_init__'s default). Full-attention and MLA layers do not read it. Only what
    max_memory_usage_bytes counts (the one-request check, the concurrency report) takes it: the profile run and the
    scheduler's batch stay max_num_batched_tokens."""
    if not r.v1 or not r.at_least("in_flight_tokens"):
        return r.max_num_batched_tokens
    if not r.async_scheduling:
        batches = r.pp
    elif r.runner_v2 or r.at_least("async_v1_gone"):
        batches = r.pp + 1
    else:
        batches = 2 if r.pp <= 1 else r.pp
    return batches * r.max_num_batched_tokens


def get_num_blocks(plan: KvPlan, available: int, r: Resolved) -> int:
    """kv_cache_utils.py get_num_blocks: whole blocks of the rank's pool; V0 CacheEngine.get_cache_block_size:
    block_size * per-token bytes of every layer."""
    if r.v1:
        return max(int(available // plan.bytes_per_block), 0)
    return max(int(available // (plan.block_size * sum(sp.bytes_per_token for sp in plan.layers.values()))), 0)


def estimate_max_model_len(plan: KvPlan, available: int, max_len: int, batched: int) -> int:
    """kv_cache_utils.py estimate_max_model_len: binary search 1..max_model_len on the per-request need."""
    if plan.needed(1, batched) > available:
        return 0
    lo, hi, best = 1, max_len, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if plan.needed(mid, batched) <= available:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


@dataclass(frozen=True)
class KvCheck:
    """What the request-fits check settles: vLLM's error (None: it starts), the max_model_len it estimates when
    it refuses, the max_model_len it runs with (auto-fit may shorten it) and the warnings it logs."""

    error: str | None
    estimated_len: int | None
    max_len: int
    warnings: tuple[str, ...] = ()


_NO_MEMORY = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing " \
             "the engine."


def check_enough_kv_cache_memory(pools: list[tuple[KvPlan, int]], s: VllmSettings, r: Resolved) -> KvCheck:
    """kv_cache_utils.py _check_enough_kv_cache_memory (check_enough_kv_cache_memory before 0.11) on every worker:
    pools are (plan, available bytes) per rank. From 0.30 one block is held back (the null block); with
    --max-model-len -1 (0.19+) max_model_len is shortened to what fits instead."""
    max_len = r.max_model_len
    batched = kv_tokens_in_flight(r)
    warnings: list[str] = []
    for plan, available in pools:
        if not plan.layers:
            continue
        check = available - (plan.bytes_per_block if r.at_least("null_block") else 0)
        if s.num_gpu_blocks_override is not None:
            check = s.num_gpu_blocks_override * plan.bytes_per_block
        if check <= 0:
            error = _NO_MEMORY
            if r.at_least("msg_fixed"):
                error = error[:-1] + " (this flag also controls CPU memory reservation on the CPU backend, despite " \
                    "its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
            return KvCheck(error, None, max_len, tuple(warnings))
        need = plan.needed(max_len, batched)
        if need > check:
            fit = estimate_max_model_len(plan, check, max_len, batched)
            if s.max_model_len == -1 and r.version >= (0, 19, 0) and fit > 0:
                auto_fit_from, max_len = max_len, min(max_len, fit)
                warnings.append(f"Auto-fit max_model_len: reduced from {auto_fit_from} to {max_len} to fit "
                                f"in available KV cache memory ({format_gib(check, r.version)} GiB)")
                continue
            return KvCheck(_too_long_message(r, max_len, need, check, fit), fit, max_len, tuple(warnings))
    return KvCheck(None, None, max_len, tuple(warnings))


def _too_long_message(r: Resolved, max_len: int, need: int, available: int, fit: int) -> str:
    """kv_cache_utils.py check_enough_kv_cache_memory's ValueError, in the chosen release's words."""
    model = "model's" if r.at_least("msg_fixed") else "models's"
    est = (f"Based on the available memory, the estimated maximum model length is {fit}. " if fit > 0 else "")
    msg = (f"To serve at least one request with the {model} max seq len ({max_len}), "
           f"({format_gib(need, r.version)} GiB KV cache is needed, which is larger than the available KV cache "
           f"memory ({format_gib(available, r.version)} GiB). {est}")
    if r.at_least("msg_fixed"):
        msg += ("Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
                "decreasing `max_model_len` when initializing the engine. ")
    else:
        msg += "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. "
    if r.at_least("format_gib"):
        msg += "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return msg.strip()


def raise_if_cache_size_invalid(pools: list[tuple[int | None, KvPlan]], max_len: int, pp: int = 1) -> KvCheck:
    """V0 worker/worker.py raise_if_cache_size_invalid on the rank with the fewest blocks: pools are
    (num_blocks, plan) per rank. V0 prints its block counts before it refuses. Under pipeline parallelism each
    stage's virtual engine gets num_gpu_blocks // pp of them (max_seq_len = block_size x (num_gpu_blocks //
    pipeline_parallel_size); worker/cache_engine.py CacheEngine.__init__ the same; read in 0.8.5 and 0.9.2)."""
    num_blocks, plan = min(pools, key=lambda x: x[0] or 0)
    if not num_blocks:
        return KvCheck(_NO_MEMORY, None, max_len)
    cap = num_blocks // max(pp, 1) * plan.block_size
    if cap < max_len:
        return KvCheck(f"The model's max seq len ({max_len}) is larger than the maximum number of tokens that can be "
                       f"stored in KV cache ({cap}). Try increasing `gpu_memory_utilization` or decreasing "
                       "`max_model_len` when initializing the engine.", cap, max_len)
    return KvCheck(None, None, max_len)


# ---------------------------------------------------------------------------------------------------------
# DeepSeek-V4 (DeepseekV4ForCausalLM, 0.20.0+): compressed attention, read in the 0.20.0 wheel
# (model_executor/layers/deepseek_v4_attention.py, deepseek_compressor.py, v1/attention/backends/mla/sparse_swa.py,
# v1/kv_cache_interface.py, v1/core/kv_cache_utils.py) and the same layout in 0.22.0 / 0.34.0 (models/deepseek_v4/)

DSV4_ROW = 584  # MLAAttentionSpec / SlidingWindowMLASpec.real_page_size_bytes: 448 B NoPE + 128 B RoPE + 8 B scale
DSV4_ALIGN = 576  # alignment=576 on every DeepSeek-V4 spec ("FlashMLA requires 576B alignment")
DSV4_BLOCK = 256  # FlashMLASparse's DeepSeek-V4 kernel block size (get_supported_kernel_block_sizes: [256])
DSV4_SWA_BLOCK = 64  # DeepseekV4SWACache.block_size: the C4A page [256 // 4, 584] shared with the SWA cache


MXFP4_BLOCK = 32  # models/deepseek_v4/common/ops/fused_indexer_q.py MXFP4_BLOCK_SIZE: one UE8M0 scale per 32 values


DSV4_PLAIN_ALIGN = 512  # alignment=512 on every spec of the plain-row layout ("512B for FlashInfer sparse (#44577)")


def _aligned(n: int, align: int = DSV4_ALIGN) -> int:
    return cdiv(n, align) * align  # kv_cache_interface.py _apply_alignment_padding


def deepseek_v4_layer_caches(layer: LayerSpec, indexer_mxfp4: bool = False,
                             plain_elem: int = 0) -> tuple[tuple[str, KvSpec], ...]:
    """The caches one DeepSeek-V4 layer registers (name, spec; pages before the groups' padding):
    - swa: DeepseekV4SWACache.get_kv_cache_spec, SlidingWindowMLASpec(block_size=64, sliding_window=128,
      model_version="deepseek_v4"): 64 x 584 = 37,376 B, aligned to 37,440;
    - kv (compress_ratio 4 / 128): DeepseekV4MLAAttention.get_kv_cache_spec, MLAAttentionSpec(block_size=256,
      dtype=uint8, compress_ratio, fp8_ds_mla): storage_block_size = 256 // ratio rows of 584 B (64 x 584 -> 37,440;
      2 x 584 = 1,168 -> 1,728);
    - state: CompressorStateCache.get_kv_cache_spec, SlidingWindowMLASpec(block_size 4 (C4) / 8 (C128),
      head_size = 2 x coff x head_dim float32 (coff = 2 for ratio 4, else 1), sliding_window = coff x ratio):
      4 x 2,048 x 4 = 8 x 1,024 x 4 = 32,768 -> 32,832;
    - indexer (ratio 4): DeepseekV4IndexerCache, MLAAttentionSpec(block_size=256, compress_ratio=4,
      head_size = index_head_dim + index_head_dim // 128 x 4 uint8 (fp8 key + fp32 scale): 64 x 132 = 8,448 ->
      8,640), and its compressor's state (4 x 2 x 2 x 128 x 4 = 8,192 -> 8,640, window 8). MXFP4 indexer keys
      (config.py dsv4_indexer_mxfp4, 0.27+): 128 // 2 + 128 // 32 = 68 B rows, 64 x 68 = 4,352 -> 4,608; the
      compressor's float32 state unchanged (state_dim = 2 x coff x head_dim).
    plain_elem (the plain-row layout of DeepseekV4FlashInferMLAAttention, use_fp8_ds_mla_layout False; 2 for bf16, 1
    for per-tensor fp8): the same specs and block sizes with the SWA and compressed rows head_dim (512) x plain_elem
    bytes (dtype = the element type, state_content_bytes None) and alignment 512 on every cache, the indexer's and
    the compressor states' included (their alignment reads cache_dtype == "fp8_ds_mla"): 64 x 1,024 = 65,536 B,
    C128 2 x 1,024 = 2,048 B in bf16; the indexer 64 x 132 = 8,448 -> 8,704 (models/deepseek_v4/attention.py
    DeepseekV4MLAAttention / DeepseekV4IndexerCache.get_kv_cache_spec, compressor.py CompressorStateCache, v1/attention/
    backends/mla/sparse_swa.py DeepseekV4SWACache, read in the 0.29.0-0.34.0 wheels)."""
    a = layer.attention
    ratio = max(1, a.compress_ratio or 1)
    align = DSV4_PLAIN_ALIGN if plain_elem else DSV4_ALIGN
    kv_row = a.head_dim_k * plain_elem if plain_elem else DSV4_ROW
    out = [("swa", KvSpec("sliding", DSV4_SWA_BLOCK, window=a.window or 128,
                          padded_page=_aligned(DSV4_SWA_BLOCK * kv_row, align)))]
    if ratio > 1:
        coff = 2 if ratio == 4 else 1
        sb = 4 if ratio == 4 else 8
        out.append(("kv", KvSpec("mla", DSV4_BLOCK, padded_page=_aligned(DSV4_BLOCK // ratio * kv_row, align))))
        out.append(("state", KvSpec("sliding", sb, window=coff * ratio,
                                    padded_page=_aligned(sb * 2 * coff * a.head_dim_k * 4, align))))
        if ratio == 4 and a.index_head_dim:
            ik = a.index_head_dim
            row = ik // 2 + ik // MXFP4_BLOCK if indexer_mxfp4 else ik + ik // INDEXER_QUANT_BLOCK * 4
            out.append(("indexer", KvSpec("mla", DSV4_BLOCK, padded_page=_aligned(DSV4_BLOCK // ratio * row, align))))
            out.append(("indexer_state", KvSpec("sliding", sb, window=coff * ratio,
                                                padded_page=_aligned(sb * 2 * coff * ik * 4, align))))
    return tuple(out)


def _approximate_gcd(values: list[int], lower_bound: int) -> int:
    """kv_cache_utils.py _approximate_gcd: the chunk in [lower_bound, max] with the least upward padding (ties:
    the larger)."""
    best_d, best_pad = lower_bound, None
    for d in range(lower_bound, max(values) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad <= best_pad:
            best_d, best_pad = d, pad
    return best_d


@dataclass(frozen=True)
class DeepseekV4KvPlan(KvPlan):
    """kv_cache_utils.py group_and_unify_kv_cache_specs / _get_kv_cache_groups_uniform_groups /
    _get_kv_cache_config_deepseek_v4: the full-MLA group (every compressed and indexer cache), then one
    UniformTypeKVCacheSpecs group per (block_size, sliding_window) of the sliding caches, split into sub-groups of at
    most n_tuples layers per page size, each sliding page padded to the nearest full-MLA page at or above it. A block
    is one page of every distinct full-MLA page size in each of n_tuples layer tuples."""

    tuple_bytes: int = 0  # sum of the full-MLA group's distinct page sizes
    n_tuples: int = 1
    block_bytes: int = 0  # one block over every KV tensor (see deepseek_v4_plan)
    packed: bool = False  # 0.29+: the generic packed planner (_get_packed_kv_cache_groups)

    @property
    def bytes_per_block(self) -> int:
        return self.block_bytes

    def needed(self, max_len: int, batched: int) -> int:
        """_max_memory_usage_bytes_from_groups (the DeepseekV4 branch): n_tuples x tuple bytes x the pages each
        group needs (UniformTypeKVCacheSpecs.max_memory_usage_pages), summed over the groups. 0.29+: the bytes of
        one block (_pool_bytes_per_block, the widest group's page) x the same pages summed over the groups."""
        pages = sum(cdiv(sp.max_memory_usage(max_len, batched), sp.page_bytes) for sp, _ in self.groups)
        return self.block_bytes * pages if self.packed else self.n_tuples * self.tuple_bytes * pages

    def blocks_per_request(self, max_len: int, batched: int) -> int:
        """get_max_concurrency_for_kv_cache_config: each group's pages x its summed page, over the full-MLA
        group's summed page; 0.29+: each group's pages, summed (one shared pool of blocks)."""
        if self.packed:
            return sum(cdiv(sp.max_memory_usage(max_len, batched), sp.page_bytes) for sp, _ in self.groups)
        return cdiv(sum(sp.max_memory_usage(max_len, batched) for sp, _ in self.groups), self.groups[0][0].page_bytes)


DSV4_SLOTS = (0, 23, 0)  # 0.23.0: _get_kv_cache_config_deepseek_v4 buckets the layers by page size
DSV4_UNPADDED = (0, 27, 0)  # 0.27: "The packed block planner overlays groups, so their page sizes do not need to match"
# 0.28.0 rebuilds AttentionSpec's page on state_content_bytes (kv_cache_interface.py AttentionSpec
# .unpadded_page_size_bytes = num_heads x storage_block_size x state_content_size_bytes) and the DeepSeek-V4 specs
# pass state_content_bytes=584 for the fp8_ds_mla layout (models/deepseek_v4/attention.py DeepseekV4MLAAttention
# .get_kv_cache_spec, v1/attention/backends/mla/sparse_swa.py DeepseekV4SWACache.get_kv_cache_spec, block_size still
# 64): the same 64 x 584 / 2 x 584 rows as 0.27's real_page_size_bytes, the same _apply_alignment_padding(576), the
# same compressor-state (compressor.py, block 4 / 8) and indexer (DeepseekV4IndexerCache, unchanged) specs, the same
# 256-token kernel block (sparse_mla.py get_supported_kernel_block_sizes), DeepseekV4ForCausalLMConfig unchanged
# (model_executor/models/config.py) and the same DeepseekV4 path through get_kv_cache_groups ->
# _get_kv_cache_groups_uniform_groups / the packed planner / _max_memory_usage_bytes_from_groups (kv_cache_utils.py;
# 0.27.0 -> 0.28.0 only refactors the sliding-window promotion, unused here) and _resolve_dsv4_kv_cache_dtype
# (fp8 only for the fp8_ds_mla layout) unchanged: 0.28 is sized as 0.27, read in the 0.27.0 and 0.28.0 wheels.
# 0.29.0 keeps every per-layer spec (compress_ratio renamed tokens_per_state, AttentionSpec.num_states = block_size //
# tokens_per_state, the same 584 B rows, 576 B alignment, SWA block 64) but drops the DeepseekV4 grouping: the
# layers go through kv_cache_utils.py get_kv_cache_groups -> _get_packed_kv_cache_groups (greedy buckets of
# UniformTypeKVCacheSpecs.is_uniform_type: one block size, one window; a bucket is "balanced" when every page size
# in it has as many layers; repeats_per_group = _approximate_gcd(the balanced buckets' get_max_layers_per_page_size,
# lower_bound = the largest of those mixing page sizes); a balanced bucket splits into cdiv(layers, repeats) groups of
# pattern_repeats[i::n], an unbalanced one stays whole), one block is _get_kv_cache_bytes_per_block = the widest
# group's summed page (get_kv_cache_config_from_groups: num_blocks = available // it), the request check
# _max_memory_usage_bytes_from_groups = that x the pages of every group summed, get_max_concurrency_for_kv_cache_config
# num_blocks / the summed pages (read in the 0.29.0 wheel).
DSV4_PACKED = (0, 29, 0)
# 0.30.0 sizes Flash as 0.29: DeepseekV4SWACache takes block_size / packed_bytes_per_token / packed_page_alignment
# arguments but DeepseekV4MLAAttention builds it with the defaults 64 / 584 / 576 (models/deepseek_v4/attention.py),
# the compressed, compressor-state and indexer specs are unchanged (the indexer's MXFP4 68 B rows only when
# attention_config.indexer_kv_dtype="mxfp4": dsa_indexer_uses_fp4 resolves "auto" to "fp8", as in 0.29),
# _get_packed_kv_cache_groups only widens its state-bucket cap to unsplit sliding buckets when no balanced bucket
# sets repeats (DeepSeek-V4's does), and the new GLM-5 / HiSparse paths of get_kv_cache_groups,
# _get_kv_cache_bytes_per_block and _max_memory_usage_bytes_from_groups need mamba groups / a hisparse_config
# (read in the 0.30.0 wheel).
# 0.31.0 sizes Flash as 0.30: every DeepSeek-V4 spec gains max_tp_shards=1 (read only by the offloading connector,
# kv_cache_groups_tp_replicas), the SWA cache keeps block 64 (DeepseekSparseSWABackend.get_preferred_block_size 256
# only sets cache_config.block_size when it is the sole backend, and DeepseekV4SWACache is built with block_size
# left at 64) and bounded_replay=False (CacheConfig.swa_bounded_replay is wired to DeepSeek-V4.1 only),
# _get_kv_cache_bytes_per_block rounds up to the lcm of the specs' block_stride_alignment (unset here: 1), and
# the indexer stays FP8 by default (read in the 0.31.0 wheel).
# 0.32.0 sizes Flash as 0.31: the same get_kv_cache_spec of the SWA, compressed, compressor-state and indexer
# caches, block_stride_alignment may now be MultipleOf(n) (KVCacheSpec.get_block_stride_alignment; unset on every
# DeepSeek-V4 spec: 1), _get_kv_cache_bytes_per_block takes the layout (the indexer still declares BLHNC,
# block-outermost, so the widest-group rule holds), the GLM-5 special case is gone, _get_packed_kv_cache_groups and
# the request check unchanged, the indexer FP8 unless indexer_kv_dtype="mxfp4" (read in the 0.32.0 wheel).
# 0.33.0 sizes Flash as 0.32: _get_packed_kv_cache_groups, _get_kv_cache_bytes_per_block, get_kv_cache_groups,
# _approximate_gcd and _max_memory_usage_bytes_from_groups move to v1/core/kv_cache_planning.py unchanged but for
# the eagle annotation; the block is now probed from DefaultKVCacheConfigBuilder (the platform's default builder: no
# model declares SupportsKVCacheGrouping for DeepSeek-V4), one device backing of the widest group's page;
# DeepseekV4SWACache gains packed_block_stride_alignment (None unless passed, and the V4 attention passes only
# head_dim / window / dtype / prefix / cache_config / backend: only models/deepseek_v41 sets it), the V4 backends keep
# AttentionBackend.customize_spec (identity; FlashMLASparseBackend's MultipleOf(64) is the V3.2 one), the
# indexer FP8 by default (read in the 0.33.0 wheel).
# 0.34.0 (the newest release) sizes Flash as 0.33: _get_kv_cache_bytes_per_block drops the HiSparse page term
# (the lcm of the specs' block_stride_alignment alone: 1 here), get_kv_cache_config_from_groups reads each
# layer's own spec, AttentionSpec gains kv_head_major_slots (False), SlidingWindowMLASpec.merge checks the quant
# mode and alignment; the V4 specs, the SWA cache's construction (block 64), the compressor states, the
# FP8-by-default indexer (the sparse-logits indexer is V4.1's: needs candidate_block_size) and the planner
# (kv_cache_planning.py) unchanged (read in the 0.34.0 wheel).
DSV4_LAST = (0, 35, 0)  # releases after 0.34 not read


def _deepseek_v4_packed_plan(caches, full, swa, label: str) -> KvPlan:
    """0.29+ kv_cache_utils.py _get_packed_kv_cache_groups (see DSV4_PACKED): the full-MLA bucket (block 256) and
    one sliding bucket per (block_size, sliding_window)."""
    buckets = [("mla", DSV4_BLOCK, 0, full)] + [("sliding", blk, win, m) for (blk, win), m in swa.items()]

    def by_size(members):
        out: dict[int, list[tuple[int, KvSpec]]] = {}
        for i, sp in members:
            out.setdefault(sp.page_bytes, []).append((i, sp))
        return out

    info = []
    for kind, blk, win, members in buckets:
        sizes = by_size(members)
        balanced = len({len(v) for v in sizes.values()}) == 1
        info.append((kind, blk, win, members, sizes, balanced, max(len(v) for v in sizes.values())))
    floor = max((most for *_, sizes, bal, most in info if bal and len(sizes) > 1), default=0)
    repeats = _approximate_gcd([most for *_, bal, most in info if bal], floor) if floor else None
    groups = []
    for kind, blk, win, members, sizes, balanced, most in info:
        n = cdiv(most, repeats) if balanced and repeats is not None else 1
        if n == 1:
            subs = [members]
        else:
            tuples = list(zip(*sizes.values(), strict=True))
            subs = [[m for t in tuples[k::n] for m in t] for k in range(n)]
        for sub in subs:
            groups.append((KvSpec(kind, blk, window=win, padded_page=sum(sp.page_bytes for _, sp in sub)),
                           tuple(sorted({i for i, _ in sub}))))
    block_bytes = max(g.page_bytes for g, _ in groups)  # _get_kv_cache_bytes_per_block
    per_layer = {i: KvSpec("dsv4", DSV4_BLOCK, padded_page=sum(sp.page_bytes for _, sp in cs)) for i, cs in caches.items()}
    full_pages = sorted({sp.page_bytes for _, sp in full})
    return DeepseekV4KvPlan(layers=per_layer, groups=tuple(groups), group_size=repeats or 1,
                            page_bytes=sum(full_pages), block_size=DSV4_BLOCK, label=label,
                            tuple_bytes=block_bytes, n_tuples=1, block_bytes=block_bytes, packed=True)


def deepseek_v4_plan(layers: list[LayerSpec], label: str, version: tuple[int, int, int] = DSV4_FIRST,
                     indexer_mxfp4: bool = False, plain_elem: int = 0) -> KvPlan:
    """One rank's DeepSeek-V4 layers -> its groups (see DeepseekV4KvPlan). Bytes of one block over all KV tensors:
    0.20-0.22 _get_kv_cache_config_deepseek_v4: available // (layer_tuple_page_bytes x num_layer_tuples), n_tuples x
    the full-MLA group's distinct pages; 0.23-0.26 (_bucket_layers_by_page_size, packed from 0.24): the sum over
    page sizes of the page x the most layers of that page in any one group; 0.27.x the same without padding the
    sliding pages up to the full-MLA pages, 0.28.x as 0.27 (read in the 0.20.0-0.28.0 wheels)."""
    if not layers:
        return KvPlan(layers={}, groups=(), group_size=1, page_bytes=0, block_size=DSV4_BLOCK, label="no KV cache")
    caches = {la.index: deepseek_v4_layer_caches(la, indexer_mxfp4, plain_elem) for la in layers}
    full = [(i, sp) for i, cs in caches.items() for _, sp in cs if sp.kind == "mla"]
    if not full:
        raise OomkitError("DeepSeek-V4 without compressed layers: vLLM's DeepseekV4 grouping needs the full-MLA "
                          "group (kv_cache_utils.py _get_kv_cache_groups_uniform_groups)")
    full_pages = sorted({sp.page_bytes for _, sp in full})
    swa: dict[tuple[int, int], list[tuple[int, KvSpec]]] = {}
    for i, cs in caches.items():
        for _, sp in cs:
            if sp.kind == "sliding":
                swa.setdefault((sp.block_size, sp.window), []).append((i, sp))

    def most_common(members):  # UniformTypeKVCacheSpecs.get_num_layer_tuples
        counts: dict[int, int] = {}
        for _, sp in members:
            counts[sp.page_bytes] = counts.get(sp.page_bytes, 0) + 1
        return max(counts.values())

    if version >= DSV4_PACKED:
        return _deepseek_v4_packed_plan(caches, full, swa, label)
    n0 = most_common(full)
    d = _approximate_gcd([n0] + [most_common(m) for m in swa.values()], n0)
    groups = [(KvSpec("mla", DSV4_BLOCK, padded_page=sum(sp.page_bytes for _, sp in full)),
               tuple(sorted({i for i, _ in full})))]
    n_tuples = n0
    slots: dict[int, int] = {}
    for _, sp in full:
        slots[sp.page_bytes] = slots.get(sp.page_bytes, 0) + 1
    for (blk, win), members in swa.items():
        by_size: dict[int, list[tuple[int, KvSpec]]] = {}
        for i, sp in members:
            target = (sp.page_bytes if version >= DSV4_UNPADDED
                      else min(p for p in full_pages if p >= sp.page_bytes))
            by_size.setdefault(target, []).append((i, replace(sp, padded_page=target)))
        per_size = len(next(iter(by_size.values())))
        n_sub = cdiv(per_size, d)
        tuples = list(zip(*by_size.values(), strict=True))  # vLLM asserts one count per page size
        for k in range(n_sub):
            sub = [m for t in tuples[k::n_sub] for m in t]
            n_tuples = max(n_tuples, len(tuples[k::n_sub]))
            for ps in by_size:
                slots[ps] = max(slots.get(ps, 0), len(tuples[k::n_sub]))
            groups.append((KvSpec("sliding", blk, window=win, padded_page=sum(sp.page_bytes for _, sp in sub)),
                           tuple(sorted({i for i, _ in sub}))))
    per_layer = {i: KvSpec("dsv4", DSV4_BLOCK, padded_page=sum(sp.page_bytes for _, sp in cs)) for i, cs in caches.items()}
    block_bytes = (sum(ps * n for ps, n in slots.items()) if version >= DSV4_SLOTS
                   else n_tuples * sum(full_pages))
    return DeepseekV4KvPlan(layers=per_layer, groups=tuple(groups), group_size=n_tuples,
                            page_bytes=sum(full_pages), block_size=DSV4_BLOCK, label=label,
                            tuple_bytes=sum(full_pages), n_tuples=n_tuples, block_bytes=block_bytes)
