"""The CUDA backend's memory pool inside each GPU's "compute graph" line of the Ollama engine, v0.12.4+.

Ollama's patch 0022 (llama/patches/0022-ggml-No-alloc-mode.patch, in the vendored ggml from v0.12.4) runs every
split of the reserved graph through ggml_backend_cuda_graph_reserve, which evaluates it against a pool that
allocates nothing, and ggml_backend_sched_get_attempted_buffer_size adds that pool's size
(backend->iface.buffer_size = ggml_cuda_pool_vmm alloc_size) to ggml-alloc's buffer. ml/backend/ggml Context.Reserve
reports the sum as the device's Graph. Scratch a kernel takes from the pool is freed when the op ends, so the pool is
the largest single op's scratch, rounded up to the VMM granularity (2 MiB, cuMemGetAllocationGranularity RECOMMENDED).

With flash attention on an NVIDIA GPU with tensor cores (compute 7.5+), the largest is the mma kernel's
dst_tmp_meta (ggml-cuda/fattn-common.cuh launch_fattn, v0.12.4-v0.13.5 alike): ggml_cuda_pool_alloc<float2>
.alloc(blocks x ncols x (2*2 + DV) x sizeof(float)) counts elements of 8 B, so the buffer is 32 B x blocks x ncols
x (4 + DV). blocks is the number of tiles, ceil(T / ncols1) x n_head / ncols2, unless stream-k is used (compute
8.9+, or the tiles fill under 75% of their waves), where it is blocks-per-SM x SMs. The mma kernel for
DKQ = DV = 128 and 64 columns uses 186-215 registers a thread (ptxas of nvcc 13.0 on Ollama v0.12.4's template
instances: ncols1_8-ncols2_8 213 for sm_80, 215 for sm_89, 210-211 for sm_90; ncols1_16-ncols2_4 208 and
ncols1_64-ncols2_1 186 for sm_80), four warps a block: two blocks a SM (any count from 171 to 255 gives two; the
other head sizes are assumed alike).
Without flash attention the largest is the cuBLAS attention's F16 copy of the softmaxed scores
(cublas_attention_bytes; from the source only, no public log checks it). Next comes MMQ's (mmq.cu
ggml_cuda_mul_mat_q): the q8_1 copy of the activations plus the stream-k fixup tiles.

ollama/ollama#13372 (v0.12.4-v0.12.5, qwen3:32b on one A800, 108 SMs, compute 8.0; 16384 cells, 512 tokens): 512
tiles, 79% of three waves of 216, no stream-k: 32 x 512 x 64 x 132 B = 132 MiB on top of the graph's buffer."""

from __future__ import annotations

from ...model.spec import ModelSpec
from ...units import MiB, round_up
from .graph import gptoss_moe_layer

V_CUDA_POOL_IN_GRAPH = (0, 12, 4)  # patch 0022's graph_reserve + buffer_size in the vendored ggml (not in v0.12.3)
VMM_GRANULARITY = 2 * MiB
MMA_BLOCKS_PER_SM = 2  # 186-215 registers x 128 threads (see above) against 65,536 registers a SM
_ADA = (8, 9)  # GGML_CUDA_CC_ADA_LOVELACE: stream-k always from here
_TURING = (7, 5)  # turing_mma_available: the mma flash-attention kernel
MMQ_Y, MMQ_X_MAX, MATRIX_ROW_PADDING = 128, 128, 512  # mmq.cuh get_mmq_y_host / get_mmq_x_max_host (mma GPUs)
_MMQ_TYPES = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "mxfp4", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq2_xxs",
              "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq4_xs", "iq4_nl"}  # ggml_cuda_should_use_mmq


def fattn_meta_bytes(n_tokens: int, n_head: int, n_head_kv: int, dv: int, sms: int, cc: tuple[int, int]) -> int:
    """dst_tmp_meta of the mma flash-attention kernel (fattn.cu ggml_cuda_flash_attn_ext_mma_f16_switch_ncols2 /
    _switch_ncols1, fattn-common.cuh launch_fattn with stream_k = true), for a causal mask (use_gqa_opt)."""
    gqa = n_head // max(n_head_kv, 1)
    ncols2 = next(c for c in (8, 4, 2, 1) if gqa % c == 0)
    T = n_tokens
    # a Turing GPU runs the 32-column kernel at most (ggml_cuda_highest_compiled_arch(cc) == GGML_CUDA_CC_TURING)
    widest = 32 if cc == _TURING else 64
    ncols1 = next((c // ncols2 for c in (8, 16, 32) if c >= ncols2 and T <= c // ncols2), widest // ncols2)
    ntiles = -(-T // ncols1) * (n_head // ncols2)
    max_blocks = MMA_BLOCKS_PER_SM * sms
    waves = -(-ntiles // max_blocks)
    stream_k = cc >= _ADA or 100 * ntiles // (max_blocks * waves) < 75
    blocks = max_blocks if stream_k else ntiles
    return 8 * blocks * ncols1 * ncols2 * (2 * 2 + dv) * 4


def mmq_bytes(n_tokens: int, ne10: int, nrows: int, sms: int) -> int:
    """mmq.cu ggml_cuda_mul_mat_q (no ids): the q8_1 activations (36 B a 32 values, rows padded to 512, plus one
    block_q8_1_mmq of 144 B a column of the widest tile) and, when the tiles do not split evenly over the SMs,
    mmq.cuh launch_mul_mat_q's stream-k fixup (SMs x mmq_x x mmq_y floats), each rounded to the pool's 128 B."""
    q8 = n_tokens * round_up(ne10, MATRIX_ROW_PADDING) * 36 // 32 + MMQ_X_MAX * 144
    mmq_x = next(x for x in range(8, MMQ_X_MAX + 1, 8) if -(-n_tokens // x) == -(-n_tokens // MMQ_X_MAX))
    tiles = -(-nrows // MMQ_Y) * -(-n_tokens // mmq_x)
    fixup = 4 * sms * mmq_x * MMQ_Y if tiles % sms else 0
    return round_up(q8, 128) + round_up(fixup, 128)


def cublas_attention_bytes(n_tokens: int, n_head: int, n_head_kv: int, dk: int, dv: int, cells: int) -> int:
    """Without flash attention (ml/backend/ggml ScaledDotProductAttention: kq = key.MulmatFullPrec(query), softmax,
    kqv = value.Mulmat(kq)) both products run as batched cuBLAS with the F16 cache as src0
    (ggml-cuda.cu ggml_cuda_mul_mat_batched_cublas_impl): the F32 src1 is converted to F16 in the pool, and KQV's
    result (default precision) goes through an F16 temporary there too; with grouped heads (or strided views) the
    cublasGemmBatchedEx pointer arrays (3 pointers a head) join them. The larger is KQV: 2 B x cells x T x heads
    of softmaxed scores + 2 B x head_dim_v x T x heads."""
    T, H = n_tokens, n_head
    ptrs = round_up(16 * H, 128) + round_up(8 * H, 128) if n_head != n_head_kv else 0
    kq = round_up(2 * dk * T * H, 128) + ptrs
    kqv = round_up(2 * cells * T * H, 128) + round_up(2 * dv * T * H, 128) + ptrs
    return max(kq, kqv)


_MMA_HEAD_DIMS = (64, 80, 96, 112, 128, 256)  # fattn.cu ggml_cuda_flash_attn_ext_mma_f16 (DKQ == DV); 576/512 not here
MLA_BLOCKS_PER_SM = 1  # the 576 / 512 mma kernel at 32-64 columns: one block a SM (fattn_mla_meta_bytes)


def fattn_mla_meta_bytes(n_tokens: int, n_head: int, n_head_kv: int, dv: int, sms: int, cc: tuple[int, int]) -> int:
    """dst_tmp_meta of the mma flash-attention kernel over an MLA latent cache (DKQ 576, DV 512: the K of each cell
    the rope part and the latent, V the latent), as the ggml Ollama vendors from v0.15.0 runs it (fattn.cu
    ggml_cuda_flash_attn_ext_mma_f16 case 576: ncols2 16 where the query heads a KV head are a multiple of 16,
    else 4; ggml_cuda_flash_attn_ext_mma_f16_switch_ncols1: 8 / ncols2 columns (ncols2 <= 8) for a batch up to
    that, 16 / ncols2, 32 / ncols2 on Turing or up to that, else 64 / ncols2; fattn-common.cuh launch_fattn with
    stream_k). fattn-mma-f16.cuh's config for 576 / 512 at 64 columns (Ampere, Ada) is 256 threads with a
    targeted occupancy of 1 and 97,024 B of shared memory (the Q tile not kept in registers: 64 x (288 + 4) x 4 +
    32 x (160 + 4) x 4 + 16 x (16 + 4) x 4), at 32 columns on Turing 59,008 B: one block a SM on every GPU up to
    compute 8.9 (100 KiB of shared memory a SM at most), so the stream-k grid is the SMs' count."""
    gqa = n_head // max(n_head_kv, 1)
    ncols2 = 16 if gqa % 16 == 0 else 4
    T = n_tokens
    if ncols2 <= 8 and T <= 8 // ncols2:
        ncols1 = 8 // ncols2
    elif T <= 16 // ncols2:
        ncols1 = 16 // ncols2
    elif cc == _TURING or T <= 32 // ncols2:
        ncols1 = 32 // ncols2
    else:
        ncols1 = 64 // ncols2
    ntiles = -(-T // ncols1) * (n_head // ncols2)
    max_blocks = MLA_BLOCKS_PER_SM * sms
    waves = -(-ntiles // max_blocks)
    stream_k = cc >= _ADA or 100 * ntiles // (max_blocks * waves) < 75
    blocks = max_blocks if stream_k else ntiles
    return 8 * blocks * ncols1 * ncols2 * (2 * 2 + dv) * 4


def cuda_pool_bytes(spec: ModelSpec, n_tokens: int, flash_attention: bool, sms: int, cc: tuple[int, int],
                    cells: int = 0, kv_type: str = "f16", mla: bool = False) -> int:
    """The pool Ollama adds to a CUDA GPU's compute graph for the worst-case batch of n_tokens: the largest of
    the attention's scratch (flash attention's, else cuBLAS's) and the widest quantized matmul's MMQ scratch,
    rounded up to 2 MiB. With a
    quantized cache the flash-attention kernel first converts K and V to F16 in the pool (launch_fattn K_f16,
    V_f16: 2 B x head_dim x cells x KV heads each), beside its meta buffer. 0 where the mma kernels do not run
    (compute under 7.5). mla: the attention runs over the MLA latent cache (Ollama's glm4moelite from v0.15.0:
    one KV head of kv_lora_rank + rope, fattn_mla_meta_bytes), flash attention on."""
    if cc < _TURING:
        return 0
    peak = 0
    layer = next((la for la in spec.layers if la.attention is not None), None)
    if mla and flash_attention and layer is not None:
        at = layer.attention
        peak = fattn_mla_meta_bytes(n_tokens, at.n_heads, 1, at.kv_lora_rank, sms, cc)
    elif flash_attention and layer is not None and layer.attention.head_dim_k == layer.attention.head_dim_v \
            and layer.attention.head_dim_v in _MMA_HEAD_DIMS:
        at = layer.attention
        peak = fattn_meta_bytes(n_tokens, at.n_heads, at.n_kv_heads, at.head_dim_v, sms, cc)
        if kv_type not in ("", "f16"):
            peak += 2 * round_up(2 * at.head_dim_k * cells * at.n_kv_heads, 128)
    elif layer is not None:
        at = layer.attention
        peak = cublas_attention_bytes(n_tokens, at.n_heads, at.n_kv_heads, at.head_dim_k, at.head_dim_v, cells)
    for t in spec.weights.tensors:
        if t.dtype.lower() in _MMQ_TYPES and t.name.startswith("blk.") and len(t.shape) == 2:
            peak = max(peak, mmq_bytes(n_tokens, t.shape[0], t.shape[1], sms))
    return round_up(peak, VMM_GRANULARITY)


# ---------------------------------------------------------------------------------------------------------
# ROCm: the same patch 0022 counts the HIP build's pool, which Ollama builds without VMM (CMakeLists.txt:
# target_compile_definitions(ggml-hip PRIVATE GGML_HIP_NO_VMM)), so it is ggml_cuda_pool_leg: every scratch request
# takes the best-fitting free buffer (the smallest at least as large), else a new one of 1.05 x the request rounded
# up to 256 B; freed buffers stay in the pool, and alloc_size() is the sum of all of them.

V_HIP_TILE_RDNA = (0, 12, 6)  # the vendored fattn-tile.cuh with ggml_cuda_fattn_tile_get_config_amd_rdna (v0.12.6+)
LDS_PER_CU = 64 * 1024  # RDNA's local data share a compute unit, what HIP's occupancy query divides
_HIP_CPY_NE = 4  # fattn-tile.cuh cpy_ne = ggml_cuda_get_max_cpy_bytes() / 4: 16 B on HIP
# ggml_cuda_fattn_tile_get_config_amd_rdna (v0.12.6), by DKQ = DV: columns -> (threads, nbatch_fa, nbatch_K)
_RDNA_TILE = {64: {64: (128, 64, 64), 32: (128, 64, 64)}, 128: {64: (256, 64, 64), 32: (256, 128, 64)}}


class _LegacyPool:
    """ggml-cuda.cu ggml_cuda_pool_leg as patch 0022 leaves it in a reserve (allocate = false): alloc_size()."""

    def __init__(self):
        self.free: list[int] = []
        self.size = 0

    def alloc(self, n: int) -> int:
        fits = [b for b in self.free if b >= n]
        if fits:
            best = min(fits)
            self.free.remove(best)
            return best
        look_ahead = -(-int(1.05 * n) // 256) * 256
        self.size += look_ahead
        return look_ahead

    def release(self, *bufs: int) -> None:
        self.free.extend(bufs)


def _tile_parallel_blocks(n_tokens: int, n_head: int, n_head_kv: int, cells: int, cus: int,
                          dkq: int = 64) -> tuple[int, int]:
    """fattn-tile.cuh launch_fattn_tile_switch_ncols2 / _ncols1 on HIP and fattn-common.cuh launch_fattn (no
    stream-k) for head size dkq (64 or 128): (parallel_blocks, columns a block). The occupancy HIP reports for the kernel is the
    local data share's bound: Q_tmp, KV_tmp and KQ (half2 / half, FAST_FP16_AVAILABLE) and KQ_max_new_shared of the
    block against a compute unit's 64 KiB (the launch bounds' 5 waves a SIMD allow more)."""
    gqa = n_head // n_head_kv
    ncols2 = next(c for c in (8, 4, 2, 1) if gqa % c == 0)  # use_gqa_opt: a mask, cells a multiple of 256
    cols = 64 if n_tokens > 32 // ncols2 else 32
    threads, nbatch_fa, nbatch_k = _RDNA_TILE[dkq][cols]
    lds = cols * dkq // 2 * 4 + nbatch_fa * (nbatch_k // 2 + _HIP_CPY_NE) * 4 + cols * nbatch_fa * 2 + threads // 32 * 4
    per_cu = max(LDS_PER_CU // lds, 1)
    ncols1 = cols // ncols2
    ntiles = -(-n_tokens // ncols1) * (n_head // ncols2)
    pb = min(per_cu, -(-cells // nbatch_fa))
    per_wave = cus * per_cu
    best_waves = best_eff = 0
    for test in range(pb, -(-cells // nbatch_fa) + 1):
        total = ntiles * test
        waves = -(-total // per_wave)
        eff = 100 * total // (waves * per_wave)
        if best_eff >= 95 and waves > best_waves:
            break
        if eff > best_eff:
            best_waves, best_eff, pb = waves, eff, test
    return pb, cols


def hip_gptoss_pool_bytes(spec: ModelSpec, n_tokens: int, n_outputs: int, full_cells: int, swa_cells: int,
                          cus: int) -> int | None:
    """The HIP pool patch 0022 adds to an RDNA GPU's compute graph for Ollama's gpt-oss graph with flash attention
    and every block on it (graph.gptoss_graph_bytes), v0.12.6-v0.12.11; None for other models or head sizes.

    The reserve evaluates the GPU's split op by op (ggml_backend_cuda_graph_reserve), skipping MUL_MAT_ID whose
    ne[2] is not 1 (the experts' products, patch 0022), so what takes scratch from the pool, block by block, is:
    - the BF16 attention products (attn_qkv, attn_out) of n_tokens columns, which ggml_cuda_mul_mat sends to
      ggml_cuda_op_mul_mat_cublas (not quantized; mmf and mmvf take few columns): src1 converted to BF16 and the
      BF16 result, 2 B x rows x columns each;
    - flash attention: on RDNA without rocWMMA (ggml_cuda_should_use_wmma_fattn) the tile kernel, 64 columns a block
      (8 of them grouped heads), without stream-k, so launch_fattn splits the cells over parallel_blocks and takes
      parallel_blocks x head_dim x heads x tokens floats (dst_tmp) and parallel_blocks x heads x tokens float2
      (dst_tmp_meta) from the pool;
    - the output rows' BF16 product, through cuBLAS too beyond 3 rows (ggml_cuda_should_use_mmvf on RDNA3+).
    cus: the GPU's compute units (multiProcessorCount)."""
    layer = gptoss_moe_layer(spec) if cus else None
    if layer is None or layer.attention.head_dim_k != 64 or layer.attention.head_dim_v != 64:
        return None
    at, T, E = layer.attention, n_tokens, spec.n_embd
    H, KV, D = at.n_heads, at.n_kv_heads, at.head_dim_v
    pool = _LegacyPool()

    def bf16_product(rows_in: int, rows_out: int, cols: int) -> None:
        a = pool.alloc(2 * rows_in * cols)
        pool.release(pool.alloc(2 * rows_out * cols), a)

    for il in range(spec.n_trunk_layers):
        bf16_product(E, (H + 2 * KV) * D, T)
        pb, _ = _tile_parallel_blocks(T, H, KV, swa_cells if il % 2 == 0 else full_cells, cus)
        if pb > 1:
            d = pool.alloc(4 * pb * D * H * T)
            pool.release(pool.alloc(8 * pb * H * T), d)
        bf16_product(H * D, E, T)
    if n_outputs > 3:
        bf16_product(E, spec.n_vocab, n_outputs)
    return pool.size


# the last release whose vendored mmq.cu ggml_cuda_should_use_mmq keeps RDNA3 / RDNA4 off MMQ from
# MMQ_DP4A_MAX_BATCH_SIZE (64) columns ("(!GGML_CUDA_CC_IS_RDNA4(cc) && !GGML_CUDA_CC_IS_RDNA3(cc) &&
# !GGML_CUDA_CC_IS_CDNA(cc)) || ne11 < MMQ_DP4A_MAX_BATCH_SIZE"; v0.13.3's ggml takes MMQ there)
V_HIP_RDNA3_CUBLAS_LAST = (0, 13, 2)
MMQ_DP4A_MAX_BATCH = 64
_DENSE_ORDER = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


def hip_rdna_dense_pool_bytes(spec: ModelSpec, n_tokens: int, n_outputs: int, cells: int, cus: int,
                              rdna4: bool = False) -> int | None:
    """The HIP pool patch 0022 adds to an RDNA3 / RDNA4 GPU's compute graph for Ollama's dense qwen3 graph with
    flash attention and every block on it (graph.qwen3_dense_graph_bytes), v0.12.6-v0.13.2; None where a block is
    not seven separate quantized or F16 products (attn_q/k/v/output, ffn_gate/up/down) or the batch goes to MMQ.

    ggml_cuda_mul_mat sends a quantized product of 64+ columns on RDNA3 / RDNA4 to ggml_cuda_op_mul_mat_cublas
    (ggml_cuda_should_use_mmq, above), whose F16 branch (GGML_CUDA_CC_IS_AMD) takes from the legacy pool the F16
    copy of the weight (src0_as_f16), the F16 copy of src1 and, except on RDNA4 / CDNA (F32 results there), the F16
    result (dst_f16); an F16 weight (ollama.com's qwen3 files keep attn_v in F16) of a 2-D product goes there too,
    without the weight's copy. Block by block: q, k, v, the tile flash-attention kernel (dst_tmp and dst_tmp_meta where it
    splits the cells, _tile_parallel_blocks), attn_output, gate, up, down; the output rows take mmvq up to 8 and
    MMQ below 64 (a q8_1 copy that fits in the freed buffers). cus: the GPU's compute units.

    Peuqui/AIfred-Intelligence (v0.12.6, qwen3:1.7b Q4_K_M on a Radeon 780M reporting gfx1102, 12 CUs, 512
    tokens): the first attn_q takes 8808192 + 2 x 2202112 B, the first ffn_gate 26424320 B more; 37.8 MiB, and
    the compute graph line 52.0 + 37.8 = 89.8 MiB as printed."""
    if not cus or n_tokens < MMQ_DP4A_MAX_BATCH:
        return None
    by_layer: dict[int, dict[str, tuple[str, tuple[int, ...]]]] = {}
    output = None
    for t in spec.weights.tensors:
        if t.name in ("output.weight", "token_embd.weight") and len(t.shape) == 2:
            if output is None or t.name == "output.weight":
                output = (t.dtype.lower(), t.shape)
        if t.layer is None or not t.name.startswith("blk."):
            continue
        if "_exps" in t.name or "attn_qkv" in t.name:
            return None
        part = t.name.split(".")[2]
        if part in _DENSE_ORDER and len(t.shape) == 2:
            by_layer.setdefault(t.layer, {})[part] = (t.dtype.lower(), t.shape)
    pool = _LegacyPool()
    T = n_tokens

    def product(weight: tuple[str, tuple[int, ...]], cols: int) -> None:
        dtype, (n_in, n_out) = weight
        a = pool.alloc(2 * n_in * n_out) if dtype != "f16" else 0
        b = pool.alloc(2 * n_in * cols)
        c = 0 if rdna4 else pool.alloc(2 * n_out * cols)
        pool.release(*(x for x in (c, b, a) if x))

    for il in range(spec.n_trunk_layers):
        w = by_layer.get(il, {})
        la = spec.layers[il] if il < len(spec.layers) else None
        at = la.attention if la is not None else None
        if (at is None or set(w) != set(_DENSE_ORDER) or at.head_dim_k != at.head_dim_v
                or at.head_dim_k not in _RDNA_TILE or any(d not in _MMQ_TYPES and d != "f16" for d, _ in w.values())):
            return None
        for name in ("attn_q", "attn_k", "attn_v"):
            product(w[name], T)
        pb, _ = _tile_parallel_blocks(T, at.n_heads, at.n_kv_heads, cells, cus, at.head_dim_k)
        if pb > 1:
            d = pool.alloc(4 * pb * at.head_dim_v * at.n_heads * T)
            pool.release(pool.alloc(8 * pb * at.n_heads * T), d)
        for name in ("attn_output", "ffn_gate", "ffn_up", "ffn_down"):
            product(w[name], T)
    if output is not None and n_outputs >= MMQ_DP4A_MAX_BATCH and output[0] in _MMQ_TYPES:
        product(output, n_outputs)
    return pool.size


# ---------------------------------------------------------------------------------------------------------
# The llama runner on ROCm, v0.1.29-v0.1.48 (vendored llama.cpp ceca1aef0 ... 7c26775ad, ggml-cuda.cu alike): the
# HIP build has no VMM pool (ggml_cuda_pool_vmm sits in #if !defined(GGML_USE_HIPBLAS)), so every scratch request
# goes to ggml_cuda_pool_leg::alloc, which hipMallocs 1.05 x the request rounded up to 256 B when no free buffer
# fits and keeps what it got until the context ends. None of it is in the compute buffer llama.cpp reserves.
# ggml_cuda_mul_mat on RDNA3+ (cc >= CC_RDNA3, gfx11xx; CUDA_USE_TENSOR_CORES is defined) never takes MMQ, so a
# batch of more than MMVQ_MAX_BATCH_SIZE (8) columns goes to ggml_cuda_op_mul_mat_cublas, whose cc >= CC_VOLTA
# branch (every AMD cc, CC_OFFSET_AMD + ...) takes from the pool a F16 copy of the quantized weight, the F16 copy
# of src1 and the F16 result; the attention products (ggml_cuda_mul_mat_batched_cublas) the F16 copy of src1 and
# the F16 result, plus the pointer arrays when the heads are grouped (r2 > 1).
V_HIP_CUBLAS_POOL, V_HIP_CUBLAS_POOL_END = (0, 1, 29), (0, 2, 0)
_MMVQ_MAX_BATCH = 8
_WEIGHT_ORDER = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_gate", "ffn_down")


def hip_cublas_pool_bytes(spec: ModelSpec, gpu_layers: list[int], n_tokens: int, n_kv: int) -> int:
    """The legacy pool's size after the prompt's batches on one RDNA3 GPU (0 where the layer is not a dense
    attention block of separate Q/K/V, or the batch goes to mmvq). gpu_layers: the blocks on this GPU, in order;
    n_tokens: the batch (n_ubatch); n_kv: the cells the attention reads (the context, the worst case)."""
    if n_tokens <= _MMVQ_MAX_BATCH or not gpu_layers:
        return 0
    by_layer: dict[int, dict[str, tuple[str, tuple[int, ...]]]] = {}
    for t in spec.weights.tensors:
        if t.layer is None or not t.name.startswith("blk."):
            continue
        if "_exps" in t.name or "attn_qkv" in t.name:
            return 0  # MUL_MAT_ID / a fused QKV: another path, not modelled
        part = t.name.split(".")[2]
        if part in _WEIGHT_ORDER and len(t.shape) == 2:
            by_layer.setdefault(t.layer, {})[part] = (t.dtype.lower(), t.shape)
    pool = _LegacyPool()
    for il in gpu_layers:
        w = by_layer.get(il)
        la = spec.layers[il] if il < len(spec.layers) else None
        if not w or la is None or la.attention is None:
            return 0
        at, T = la.attention, n_tokens
        for name in ("attn_q", "attn_k", "attn_v"):
            _cublas_f16(pool, w.get(name), T)
        grouped = at.n_heads if at.n_heads != at.n_kv_heads else 0
        _batched_f16(pool, at.head_dim_k * T * at.n_heads, n_kv * T * at.n_heads, grouped)  # KQ
        _batched_f16(pool, n_kv * T * at.n_heads, at.head_dim_v * T * at.n_heads, grouped)  # KQV
        for name in ("attn_output", "ffn_up", "ffn_gate", "ffn_down"):
            _cublas_f16(pool, w.get(name), T)
    return pool.size


def _cublas_f16(pool: _LegacyPool, weight: tuple[str, tuple[int, ...]] | None, n_tokens: int) -> None:
    """ggml_cuda_op_mul_mat_cublas, the F16 branch: src0_as_f16 (a quantized weight), src1_as_f16, dst_f16."""
    if weight is None:
        return
    dtype, (n_in, n_out) = weight
    a = pool.alloc(2 * n_in * n_out) if dtype != "f16" else 0
    b = pool.alloc(2 * n_in * n_tokens)
    c = pool.alloc(2 * n_out * n_tokens)
    pool.release(*(x for x in (c, b, a) if x))


def _batched_f16(pool: _LegacyPool, n_src1: int, n_dst: int, grouped_heads: int) -> None:
    """ggml_cuda_mul_mat_batched_cublas: src1_f16_alloc, dst_f16, and with grouped heads (r2 > 1) ptrs_src
    (2 x ne23 pointers) and ptrs_dst (ne23)."""
    b = pool.alloc(2 * n_src1)
    c = pool.alloc(2 * n_dst)
    ptrs = [pool.alloc(8 * 2 * grouped_heads), pool.alloc(8 * grouped_heads)] if grouped_heads else []
    pool.release(*reversed(ptrs), c, b)
