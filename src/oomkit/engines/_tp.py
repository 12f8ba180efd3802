"""Tensor parallelism: which weights each rank of a TP group holds. Shared by the vLLM and SGLang modules.

Both engines build their layers from the same parallel primitives (vLLM
`vllm/model_executor/layers/{linear,vocab_parallel_embedding}.py`, SGLang `python/sglang/srt/layers/{linear,
vocab_parallel_embedding}.py`, a copy of vLLM's):

- `VocabParallelEmbedding` / `ParallelLMHead`: the vocabulary is padded to a multiple of 64
  (`DEFAULT_VOCAB_PADDING_SIZE`, `pad_vocab_size`) and split in equal slices; a tied lm_head shares the
  embedding's slice;
- `QKVParallelLinear`: query heads split (`divide(total_num_heads, tp_size)`), KV heads split when there are at
  least as many as ranks, otherwise each rank keeps one replica (`num_kv_head_replicas = divide(tp_size,
  total_num_kv_heads)`);
- `ColumnParallelLinear` / `MergedColumnParallelLinear` (gate/up, MLA q_b / kv_b, linear-attention in_proj) and
  `RowParallelLinear` (o_proj, down_proj, out_proj): split by tp; a row-parallel bias is added once, so every
  rank keeps it whole;
- MoE experts (`FusedMoE` with expert parallelism off): every expert's intermediate dimension split by tp;
- `ReplicatedLinear` and norms: whole on every rank (MoE routers, MLA q_a / kv_a_proj_with_mqa, RMSNorm
  weights, q/k norms).

Tensors are named the GGUF way (model/tensors.py, `blk.N.attn_k.weight`); a quantized checkpoint's companion
tensors (`...weight_scale`, `...qweight`, `...scales`) follow their module.
"""

from __future__ import annotations

import re

from ..errors import OomkitError
from ..model.spec import ModelSpec, TensorSpec

VOCAB_PADDING = 64  # vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE

# Module names (the part after "blk.N.") kept whole on every rank.
_REPLICATED = {
    "attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm", "attn_q_norm", "attn_k_norm",
    "attn_output_norm", "layer_output_norm",  # BERT's post-LayerNorms (model/tensors.py names them as bert.cpp)
    "ssm_dt_norm", "ssm_b_norm", "ssm_c_norm",  # Jamba's Mamba RMSNorms over dt_rank / d_state (not sharded)
    "attn_q_a", "attn_q_a_norm", "attn_kv_a_mqa", "attn_kv_a_norm",  # MLA low-rank projections (ReplicatedLinear)
    "ffn_gate_inp", "ffn_gate_inp_shexp", "exp_probs_b",  # MoE routers and their correction bias
    "ssm_norm",  # gated RMSNorm over one head's width
    "indexer",  # DeepSeek V3.2's lightning indexer: ReplicatedLinear wq_b / wk / weights_proj and its LayerNorm
}
_KV = {"attn_k", "attn_v"}
_ROW_PARALLEL = {"attn_output", "ffn_down", "ffn_down_exps", "ffn_down_shexp", "ssm_out"}
_NAME = re.compile(r"^blk\.(?P<layer>\d+)\.(?P<module>[a-z_0-9]+?)(?:\.(?P<part>.+))?$")


def pad_vocab(n_vocab: int, pad: int = VOCAB_PADDING) -> int:
    return -(-n_vocab // pad) * pad


def check_tp(spec: ModelSpec, tp: int) -> None:
    """QKVParallelLinear's divisibility asserts (`divide()` in distributed/utils.py), as the engine words them."""
    if tp < 1:
        raise OomkitError(f"tensor parallel size must be at least 1, got {tp}")
    for layer in spec.layers:
        r = layer.recurrent
        for what, n in (("linear-attention value heads", r.n_heads if r else 0),
                        ("linear-attention key heads", r.n_group if r and r.kind == "gated_delta_net" else 0)):
            if n and n % tp:
                raise OomkitError(f"AssertionError: {n} is not divisible by {tp} ({what}={n} must divide evenly "
                                  f"over tensor parallel size {tp})")
        a = layer.attention
        if a is None or not a.n_kv_heads and not a.kv_lora_rank:
            continue  # DeciLM's no-op (or linear) attention: no QKVParallelLinear in the layer (vLLM nemotron_nas.py)
        if a.n_heads % tp:
            raise OomkitError(f"AssertionError: {a.n_heads} is not divisible by {tp} (num_attention_heads="
                              f"{a.n_heads} must divide evenly over tensor parallel size {tp})")
        if a.kv_lora_rank:
            continue
        if a.n_kv_heads >= tp and a.n_kv_heads % tp:
            raise OomkitError(f"AssertionError: {a.n_kv_heads} is not divisible by {tp} (num_key_value_heads="
                              f"{a.n_kv_heads} must divide evenly over tensor parallel size {tp})")
        if a.n_kv_heads < tp and tp % a.n_kv_heads:
            raise OomkitError(f"AssertionError: {tp} is not divisible by {a.n_kv_heads} (tensor parallel size "
                              f"{tp} must be a multiple of num_key_value_heads={a.n_kv_heads})")


def kv_heads_per_rank(n_kv_heads: int, tp: int) -> int:
    """ModelConfig.get_num_kv_heads: max(1, total // tp) (a replica per rank when there are fewer heads)."""
    return max(1, n_kv_heads // tp)


def tensor_bytes_per_rank(t: TensorSpec, spec: ModelSpec, tp: int) -> int:
    """Bytes of tensor `t` one TP rank holds."""
    if tp == 1:
        return t.nbytes
    if t.name.startswith(("token_embd", "output.")) or t.name == "output":
        padded = pad_vocab(spec.n_vocab)
        per_rank = -(-padded // tp)
        return t.nbytes * per_rank // spec.n_vocab  # the padded slice, in the tensor's own bytes per row
    if t.name.startswith(("output_norm", "rope_freqs")):
        return t.nbytes
    m = _NAME.match(t.name)
    if m is None:
        return -(-t.nbytes // tp)
    module, part = m.group("module"), m.group("part") or ""
    if module in _REPLICATED:
        return t.nbytes
    if module in _ROW_PARALLEL and part.startswith("bias"):
        return t.nbytes  # RowParallelLinear adds its bias once: every rank keeps it
    if module in _KV:
        layer = spec.layers[int(m.group("layer"))] if int(m.group("layer")) < spec.n_layers else None
        a = layer.attention if layer is not None else None
        if a is not None and a.n_kv_heads:
            return t.nbytes * kv_heads_per_rank(a.n_kv_heads, tp) // a.n_kv_heads
    return -(-t.nbytes // tp)


def weights_per_rank(spec: ModelSpec, tp: int, tensors: tuple[TensorSpec, ...] | None = None) -> int:
    """Weight bytes one rank of a TP group loads (all of `spec`'s tensors, or `tensors`)."""
    return sum(tensor_bytes_per_rank(t, spec, tp) for t in (spec.weights.tensors if tensors is None else tensors))


# ---------------------------------------------------------------------------------------------------------
# Beyond one TP group: data-parallel attention and expert parallelism


def module_group(t: TensorSpec) -> str:
    """Which parallel group a tensor's module is sharded over: "embed", "head", "attn" (attention and
    linear-attention projections), "experts" (routed experts, FusedMoE), "mlp" (dense and shared-expert FFN) or
    "other" (norms and the rest, whole or split by the TP rules above)."""
    if t.name.startswith("token_embd"):
        return "embed"
    if t.name == "output" or t.name.startswith("output."):
        return "head"
    m = _NAME.match(t.name)
    if m is None:
        return "other"
    module = m.group("module")
    if "_exps" in module:
        return "experts"
    if module.startswith(("attn_", "ssm_", "indexer")):
        return "attn"
    if module.startswith("ffn_"):
        return "mlp"
    return "other"


def local_experts(n_experts: int, ep_size: int, ep_rank: int, balanced: bool = True) -> int:
    """vLLM fused_moe/layer.py determine_expert_map (linear placement): base = E // ep_size, the first
    E % ep_size ranks take one more (vLLM PR #21497, "More balanced expert sharding"); before it the last rank
    took the whole remainder (balanced=False: 30 experts over 8 ranks were 3 x 7 + 9). SGLang's EP MoE
    (num_local_experts = E // ep_size) divides evenly."""
    base, rem = divmod(n_experts, ep_size)
    if not balanced:
        return base + rem if ep_rank == ep_size - 1 else base
    return base + 1 if ep_rank < rem else base


def expert_bytes_per_rank(t: TensorSpec, spec: ModelSpec, ep_size: int, ep_rank: int, moe_tp: int,
                          balanced: bool = True) -> int:
    """Bytes of a routed-expert tensor on one rank: its local experts whole over the EP group, each expert's
    intermediate dimension split by the MoE TP size left (SGLang moe_tp_size = tp // ep; vLLM's EP is pure EP,
    moe_tp 1)."""
    n = t.shape[-1] if len(t.shape) == 3 else _layer_experts(spec, t)  # GGUF order: ne2 is the expert count
    held = t.nbytes * local_experts(n, ep_size, ep_rank, balanced) // n if ep_size > 1 else t.nbytes
    return held if moe_tp == 1 else -(-held // moe_tp)


def _layer_experts(spec: ModelSpec, t: TensorSpec) -> int:
    layer = spec.layers[t.layer] if t.layer is not None and t.layer < spec.n_layers else None
    return (layer.ffn.n_experts if layer is not None and layer.ffn is not None else 0) or 1
