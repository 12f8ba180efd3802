"""SGLang's LoRA memory pool (--enable-lora / --lora-paths), where the command fixes its size.

model_runner.py ModelRunner.initialize runs init_lora_manager after load_model and before init_memory_pool (read in
0.4.3 and 0.5.9), so the pool's buffers are already allocated when profile_max_num_token reads the free memory: they
come off the KV pool byte for byte (rest_memory = available - total x (1 - mem_fraction_static)). The buffers
(lora/mem_pool.py LoRAMemoryPool.init_buffers, get_lora_A_shape / get_lora_B_shape, read in 0.5.1, 0.5.2, 0.5.9 and
0.5.10), for each of config.num_hidden_layers layers (every layer, whatever the pipeline stage) and each normalized
target module (lora/utils.py get_normalized_target_modules: q/k/v_proj -> qkv_proj, gate/up_proj -> gate_up_proj),
in the model dtype:
    A [max_loras_per_batch, max_lora_rank x stacked, input], input / tp for o_proj and down_proj
      (ROW_PARALLELISM_LINEAR_LORA_NAMES); stacked 3 for qkv_proj, 2 for gate_up_proj (get_stacked_multiply);
    B [max_loras_per_batch, output / tp, max_lora_rank], output whole for o_proj and down_proj;
with get_hidden_dim's default dims: qkv_proj hidden -> head_dim x (heads + 2 x kv_heads), o_proj head_dim x heads ->
hidden, gate_up_proj hidden -> 2 x intermediate, down_proj intermediate -> hidden. 0.4.10-0.5.0rc0 (the first with
--max-lora-rank and --lora-target-modules) keep B as [stacked, n, output / tp, rank] with kv_proj apart: the same
bytes.

Sized only where the command gives both --max-lora-rank and --lora-target-modules (ServerArgs: otherwise the rank and
the modules are the adapters' own, from their adapter_config.json, lora_manager.py init_lora_shapes) and the model is
a dense decoder with plain attention (MoE layers and MLA have other shapes); elsewhere the flags stay a "not counted"
note. Not counted: embed_tokens / lm_head targets (their buffers, 0.5.x, are whole on every rank; `all` drops them with
the default csgmv backend, server_args.py 0.5.9) and the added-token embeddings of adapters that add tokens.
"""

from __future__ import annotations

from ...model.spec import ModelSpec
from ...quant.dtypes import FLOAT_BYTES

# server_args.py SUPPORTED_LORA_TARGET_MODULES (0.5.1: the linear ones; later embed_tokens and lm_head too)
LINEAR_TARGETS = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj", "qkv_proj": "qkv_proj",
                  "o_proj": "o_proj", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj",
                  "gate_up_proj": "gate_up_proj", "down_proj": "down_proj"}
EMBEDDING_TARGETS = ("embed_tokens", "lm_head")


def normalized_targets(targets: tuple[str, ...]) -> set[str] | None:
    """The pool's module names, or None where a target is one this module does not size."""
    names = set(LINEAR_TARGETS.values()) if "all" in targets else set()
    for t in targets:
        if t == "all" or t in EMBEDDING_TARGETS:
            continue
        if t not in LINEAR_TARGETS:
            return None
        names.add(LINEAR_TARGETS[t])
    return names


def sized(spec: ModelSpec, rank: int | None, targets: tuple[str, ...]) -> bool:
    """Whether the command fixes the pool and the model's layers have the shapes read."""
    if not rank or not targets or normalized_targets(targets) is None:
        return False
    return all(layer.attention is not None and not layer.attention.kv_lora_rank and not layer.ffn.is_moe
               for layer in spec.layers)


def pool_bytes(spec: ModelSpec, n_slots: int, rank: int | None, targets: tuple[str, ...], tp: int,
               model_dtype: str) -> int:
    """Bytes of one rank's LoRA buffers (0 where the pool is not sized here)."""
    if not sized(spec, rank, targets):
        return 0
    assert rank is not None
    names = normalized_targets(targets) or set()
    h, n = spec.n_embd, 0
    for layer in spec.layers:
        a, ff = layer.attention, layer.ffn.n_ff
        assert a is not None
        if "qkv_proj" in names:
            n += 3 * rank * h + a.head_dim_k * (a.n_heads + 2 * a.n_kv_heads) // tp * rank
        if "o_proj" in names:
            n += rank * (a.head_dim_v * a.n_heads // tp) + h * rank
        if "gate_up_proj" in names:
            n += 2 * rank * h + 2 * ff // tp * rank
        if "down_proj" in names:
            n += rank * (ff // tp) + h * rank
    return n_slots * n * FLOAT_BYTES[model_dtype]
