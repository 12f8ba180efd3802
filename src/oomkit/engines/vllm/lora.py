"""The LoRA adapter slots vLLM allocates with --enable-lora, inside "Model loading took".

The worker's load_model builds the model, then (lora_config set) wraps it in the LoRA manager in the same
DeviceMemoryProfiler block (worker/model_runner.py GPUModelRunnerBase.load_model of 0.6.5-0.10; the V1 runner's
LoRAModelRunnerMixin.load_lora_model, v1/worker/gpu_model_runner.py load_model, 0.8-0.34): LoRAModelManager
._create_lora_modules replaces every adapted layer with its *WithLoRA twin, whose create_lora_weights preallocates
`max_loras` stacked A and B matrices of rank `max_lora_rank` in the LoRA dtype (--lora-dtype; "auto" is the model's
dtype, config LoRAConfig.verify_with_model_config). So the slots count in the weights and come off the KV budget.

Shapes, read in lora/layers.py (0.6.5, 0.8.2) and lora/layers/base_linear.py, column_parallel_linear.py,
row_parallel_linear.py, fused_moe.py (0.11.1, 0.11.2, 0.12.0, 0.19.0, 0.34.0), one TP rank, each slot:
- a column-parallel layer (qkv_proj with 3 slices, gate_up_proj with 2, q_b_proj, kv_b_proj; BaseLinearLayerWithLoRA /
  MergedColumnParallelLinearWithLoRA.create_lora_weights): A [rank, input] per slice, B [output slice / tp, rank];
  --fully-sharded-loras shards A's rank by tp (divide(max_lora_rank, tp_size));
- a row-parallel layer (o_proj, down_proj; RowParallelLinearWithLoRA): A [rank, input / tp], B [output, rank];
  --fully-sharded-loras shards B's output by tp;
- a replicated layer (MLA's q_a_proj, kv_a_proj_with_mqa): A [rank, input], B [output, rank], whole on every rank;
- with --enable-lora-bias (0.6.4.post1-0.11.0; LoRAConfig.bias_enabled) one [output] bias row per slice as well;
- routed experts from 0.11.1 (FusedMoEWithLoRA, absent in 0.11.0's lora/layers): w1 and w3 A [experts, rank, hidden],
  B [experts, intermediate / tp, rank]; w2 A [experts, rank, intermediate / tp], B [experts, hidden, rank], the
  local experts of the rank under expert parallelism; before 0.11.1 a fused MoE layer gets no adapter.
Where they count, by release (worker/model_runner.py load_model; worker/worker.py determine_num_available_blocks;
utils.py memory_profiling), read in the 0.6.1, 0.6.5, 0.7.3, 0.8.0 and 0.8.2 sdists:
- from 0.8.0 create_lora_manager (V0) and load_lora_model (V1; V1's already in 0.7.3's v1/worker/gpu_model_runner.py)
  run inside load_model's DeviceMemoryProfiler block: in "Model loading took" and so off the KV budget (weights);
- 0.6.5-0.7.3 (V0) it runs after the block ("Loading model weights took" excludes it), before the profile's
  before_profile snapshot, and memory_profiling's non_kv_cache_memory (weights + the profile's torch peak increase +
  non-torch increase) has no term for it: the slots sit outside the budget, the GPU holds that much beyond
  gpu_memory_utilization (vllm#14450, "LoRA is not taken into account when determining the number of KV cache
  blocks", answered "a bug"; said as a warning, outside_budget_note);
- up to 0.6.4 the budget's peak is absolute (init free memory less free memory after the profile, 0.6.4 the torch
  peak): the slots count there, not in the printed weights (added to the profiled peak).
Which layers: 0.6.x the model class's supported_lora_modules (qkv_proj, o_proj, gate_up_proj, down_proj in the
decoders); from 0.7 lora/utils.py get_supported_lora_modules: every LinearBase of the model, by suffix.

Not counted (each well under 1 % of a rank's weights for the decoders read): the router gate's adapter (a
ReplicatedLinear, [experts, rank]), the embedding and lm_head adapters and the lora_extra_vocab_size rows (256, up
to 0.11.x) of the model classes that list embedding_modules (Llama, Mistral; Qwen2 lists none), recurrent layers'
projections, and the punica wrapper's index buffers (punica_wrapper/punica_base.py PunicaWrapperBase.__init__:
five int64 vectors of max_num_batched_tokens and three of max_num_seqs).
"""

from __future__ import annotations

from ...model.spec import ModelSpec
from .config import Resolved
from .settings import VllmSettings

LORA_DTYPES = {"auto": 0, "float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4}
# LoRAConfig.lora_dtype: None / "auto" -> the model's dtype; torch dtype names otherwise
FUSED_MOE_LORA = (0, 11, 1)  # lora/layers/fused_moe.py FusedMoEWithLoRA: in 0.11.1, not in 0.11.0
LORA_BIAS = ((0, 6, 4), (0, 11, 1))  # --enable-lora-bias: 0.6.4.post1 to 0.11.0 (engines/data/vllm_flags.json)
IN_LOAD = (0, 8, 0)  # the slots inside load_model's DeviceMemoryProfiler block (V0 and V1)
ABSOLUTE_PEAK_UNTIL = (0, 6, 5)  # settings.ERAS profile_increase: before it the budget's peak counts the slots
ALL_LINEAR = (0, 7, 0)  # lora/utils.py get_supported_lora_modules (0.7+); before, supported_lora_modules


def _column(rank: int, d_in: int, outs: list[int], tp: int, sharded: bool, bias: bool) -> int:
    """Elements of one slot of a column-parallel layer of output slices `outs` (whole sizes)."""
    a_rows = -(-rank // tp) if sharded else rank
    return sum(a_rows * d_in + (o // tp) * rank + ((o // tp) if bias else 0) for o in outs)


def _row(rank: int, d_in: int, d_out: int, tp: int, sharded: bool, bias: bool) -> int:
    b_rows = d_out // tp if sharded else d_out
    return rank * (d_in // tp) + b_rows * rank + (b_rows if bias else 0)


def _replicated(rank: int, d_in: int, d_out: int, bias: bool) -> int:
    return rank * d_in + d_out * rank + (d_out if bias else 0)


def slot_bytes(spec: ModelSpec, s: VllmSettings, r: Resolved, layers: tuple[int, int], ep: int = 1) -> int:
    """Bytes of the LoRA stacks one TP rank of the stage holding decoder layers [lo, hi) allocates (0 without
    --enable-lora)."""
    if not s.enable_lora:
        return 0
    rank, tp, h = s.max_lora_rank, r.tp, spec.n_embd
    sharded = s.fully_sharded_loras
    bias = s.enable_lora_bias and LORA_BIAS[0] <= r.version[:3] < LORA_BIAS[1]
    all_linear = r.version[:3] >= ALL_LINEAR
    moe_lora = r.version[:3] >= FUSED_MOE_LORA
    n = 0
    for layer in spec.layers[layers[0]:layers[1]]:
        a = layer.attention
        if a is not None and a.kv_lora_rank:
            heads, qk = a.n_heads, a.qk_nope_head_dim + a.qk_rope_head_dim
            if all_linear:  # 0.6's DeepSeek-V2 class adapts no MLA projection (supported_lora_modules)
                if a.q_lora_rank:
                    n += _replicated(rank, h, a.q_lora_rank, bias)
                    n += _column(rank, a.q_lora_rank, [heads * qk], tp, sharded, bias)
                else:
                    n += _column(rank, h, [heads * qk], tp, sharded, bias)
                n += _replicated(rank, h, a.kv_lora_rank + a.qk_rope_head_dim, bias)
                n += _column(rank, a.kv_lora_rank, [heads * (a.qk_nope_head_dim + a.v_head_dim)], tp, sharded, bias)
                n += _row(rank, heads * a.v_head_dim, h, tp, sharded, bias)
        elif a is not None:
            # QKVParallelLinear: the KV heads of a rank are max(1, kv / tp), replicated below one a rank
            kv = max(1, a.n_kv_heads // tp) * tp
            n += _column(rank, h, [a.n_heads * a.head_dim_k, kv * a.head_dim_k, kv * a.head_dim_v], tp, sharded, bias)
            n += _row(rank, a.n_heads * a.head_dim_v, h, tp, sharded, bias)
        f = layer.ffn
        if f.n_ff:
            n += _column(rank, h, [f.n_ff, f.n_ff], tp, sharded, bias)
            n += _row(rank, f.n_ff, h, tp, sharded, bias)
        if f.n_ff_shared and all_linear:
            n += _column(rank, h, [f.n_ff_shared, f.n_ff_shared], tp, sharded, bias)
            n += _row(rank, f.n_ff_shared, h, tp, sharded, bias)
        if f.is_moe and moe_lora:
            experts = -(-f.n_experts // ep)
            inter = f.n_ff_expert if ep > 1 else f.n_ff_expert // tp
            a_rank = -(-rank // tp) if sharded else rank
            out = h // tp if sharded else h
            n += experts * (2 * (a_rank * h + inter * rank) + rank * inter + out * rank)
    dtype = LORA_DTYPES.get(s.lora_dtype, 0) or r.dtype_bytes
    return s.max_loras * n * dtype


def where(r: Resolved) -> str:
    """Where a release counts the slots: "weights" (0.8.0+, V1), "peak" (up to 0.6.4), "outside" (V0 0.6.5-0.7.3)."""
    if r.v1 or r.version[:3] >= IN_LOAD:
        return "weights"
    return "peak" if r.version[:3] < ABSOLUTE_PEAK_UNTIL else "outside"


def outside_budget_note(r: Resolved, slots: int) -> str:
    return (f"vLLM {'.'.join(map(str, r.version[:3]))} allocates the --enable-lora adapter slots ({slots / 2**30:.2f} "
            "GiB a rank) after \"Loading model weights took\" and leaves them out of the KV cache budget (vllm#14450, "
            "fixed in 0.8.0): each GPU holds that much beyond --gpu-memory-utilization")
