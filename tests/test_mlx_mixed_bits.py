"""Per-module quantization in an MLX checkpoint's config.json, as mlx-lm loads it.

mlx_lm/utils.py load_model (mlx-lm 0.20.3 on, ml-explore/mlx-examples#1132) quantizes the model with a class_predicate
that returns `config["quantization"][path]` for every module path the block lists: a dict of to_quantized's own
group_size / bits / mode, True (the block's settings) or False (left in the dtype). quantize_model writes those
entries from a quant_predicate: convert.py --quant-predicate mixed_3_6 / mixed_2_6 (0.21.5 on, every leaf module's
answer up to 0.26.1), and the models' own predicates (qwen3_moe.py: `mlp.gate` at 8 bits, 0.26.2 on, #349; gemma4
names its modules under `language_model.model.`, tests/test_utils.py test_load_model_gemma4_with_per_layer_
projection_quantization). It also writes the block a second time as "quantization_config" with no quant_method
(#957, 0.18.1 on), which is what config.json holds for every conversion since.

The bytes asserted are mx.quantize's affine layout (mlx python/mlx/nn/layers/quantized.py QuantizedLinear: uint32
weight [out, in * bits / 32], scales and biases [out, in / group] in the model dtype), worked out by hand here.
"""

from __future__ import annotations

import copy

import pytest

from oomkit.engines import mlx
from oomkit.errors import OomkitError
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config


def _config(name: str, quantization: dict) -> dict:
    cfg = copy.deepcopy(dict(catalog.lookup(name).config))
    cfg["quantization"] = quantization
    cfg["quantization_config"] = copy.deepcopy(quantization)  # mlx_lm/utils.py quantize_model's copy (#957)
    return cfg


def _tensors(cfg: dict) -> dict:
    spec = spec_from_config(cfg, name="m")
    return {t.name: t for t in spec.weights.tensors}


def _affine(rows: int, width: int, bits: int, group: int, dtype_bytes: int = 2) -> int:
    return rows * (width * bits // 8 + 2 * (width // group) * dtype_bytes)


def test_the_block_mlx_lm_writes_twice_is_read():
    """Every config.json mlx_lm.convert writes since 0.18.1 carries the block as "quantization_config" too, without
    a quant_method: it was refused as an unknown quant_method."""
    t = _tensors(_config("Qwen/Qwen3-8B", {"group_size": 64, "bits": 4}))
    assert t["blk.0.attn_q.weight"].dtype == "mlx-affine"
    assert t["blk.0.attn_q.weight"].nbytes == _affine(4096, 4096, 4, 64)


def test_a_module_with_its_own_bits_and_one_left_in_the_dtype():
    t = _tensors(_config("Qwen/Qwen3-8B", {
        "group_size": 64, "bits": 4,
        "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 8},
        "model.layers.1.self_attn.v_proj": {"group_size": 32, "bits": 6},
        "lm_head": False,
        "model.norm": False,  # 0.20.3-0.26.1 wrote every leaf module's answer, norms included
    }))
    assert t["blk.0.ffn_down.weight"].nbytes == _affine(4096, 12288, 8, 64)  # 53,477,376
    assert t["blk.1.ffn_down.weight"].nbytes == _affine(4096, 12288, 4, 64)  # the block's own
    assert t["blk.1.attn_v.weight"].nbytes == _affine(1024, 4096, 6, 32)
    assert t["blk.0.attn_v.weight"].nbytes == _affine(1024, 4096, 4, 64)
    assert t["output.weight"].dtype == "bfloat16"
    assert t["output.weight"].nbytes == 151936 * 4096 * 2
    assert t["token_embd.weight"].nbytes == _affine(151936, 4096, 4, 64)  # nn.Embedding quantized too


def test_a_model_s_own_predicate_the_moe_router_at_8_bits_and_the_switch_mlp():
    """qwen3_moe.py quant_predicate: `mlp.gate` -> {group_size 64, bits 8}; the experts are mlp.switch_mlp.*."""
    t = _tensors(_config("Qwen/Qwen3-30B-A3B", {
        "group_size": 64, "bits": 4, "mode": "affine",
        "model.layers.0.mlp.gate": {"group_size": 64, "bits": 8},
        "model.layers.0.mlp.switch_mlp.down_proj": {"group_size": 64, "bits": 6},
    }))
    assert t["blk.0.ffn_gate_inp.weight"].nbytes == _affine(128, 2048, 8, 64)
    assert t["blk.1.ffn_gate_inp.weight"].nbytes == _affine(128, 2048, 4, 64)
    assert t["blk.0.ffn_down_exps.weight"].nbytes == 128 * _affine(2048, 768, 6, 64)
    assert t["blk.0.ffn_up_exps.weight"].nbytes == 128 * _affine(768, 2048, 4, 64)


def test_a_wrapper_s_paths_match_the_decoder_s():
    """gemma3.py / gemma4.py hold the text model as language_model: its paths are language_model.model.layers.N."""
    t = _tensors(_config("Qwen/Qwen3-8B", {
        "group_size": 64, "bits": 4,
        "language_model.model.layers.2.mlp.down_proj": {"group_size": 64, "bits": 8},
        "language_model.lm_head": False,
    }))
    assert t["blk.2.ffn_down.weight"].nbytes == _affine(4096, 12288, 8, 64)
    assert t["blk.12.ffn_down.weight"].nbytes == _affine(4096, 12288, 4, 64)  # not layer 2's entry
    assert t["output.weight"].dtype == "bfloat16"


def _mixed_3_6(n_layers: int) -> dict:
    """mlx_lm/utils.py mixed_quant_predicate_builder(low_bits=3) as 0.21.5 wrote it (group 64): v_proj and down_proj
    at 6 bits in the first and last eighth and every third layer between, lm_head at 6, the rest at 3."""
    q: dict = {"group_size": 64, "bits": 3}
    for i in range(n_layers):
        more = i < n_layers // 8 or i >= 7 * n_layers // 8 or (i - n_layers // 8) % 3 == 2
        for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                  "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
            six = more and m in ("self_attn.v_proj", "mlp.down_proj")
            q[f"model.layers.{i}.{m}"] = {"group_size": 64, "bits": 6 if six else 3}
        q[f"model.layers.{i}.input_layernorm"] = False
    q["model.embed_tokens"] = {"group_size": 64, "bits": 3}
    q["lm_head"] = {"group_size": 64, "bits": 6}
    return q


def test_the_mixed_3_6_recipe_counts_each_module_at_its_bits():
    cfg = _config("Qwen/Qwen3-8B", _mixed_3_6(36))
    t = _tensors(cfg)
    six = [i for i in range(36) if i < 4 or i >= 31 or (i - 4) % 3 == 2]
    assert six == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 31, 32, 33, 34, 35]
    for i in range(36):
        bits = 6 if i in six else 3
        assert t[f"blk.{i}.ffn_down.weight"].nbytes == _affine(4096, 12288, bits, 64)
        assert t[f"blk.{i}.attn_v.weight"].nbytes == _affine(1024, 4096, bits, 64)
        assert t[f"blk.{i}.ffn_up.weight"].nbytes == _affine(12288, 4096, 3, 64)
    assert t["output.weight"].nbytes == _affine(151936, 4096, 6, 64)
    assert t["token_embd.weight"].nbytes == _affine(151936, 4096, 3, 64)


def test_mlx_lm_holds_the_checkpoint_as_stored():
    """Without -q the MLX engine counts the stored modules as the inventory sized them."""
    cfg = _config("Qwen/Qwen3-8B", {"group_size": 64, "bits": 4,
                                    "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 8}})
    spec = spec_from_config(cfg, name="m")
    s = mlx.MlxSettings(context_length=1024)
    by_name = {t.name: b for t, b in mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))}
    assert by_name["blk.0.ffn_down.weight"] == _affine(4096, 12288, 8, 64)
    assert by_name["blk.1.ffn_down.weight"] == _affine(4096, 12288, 4, 64)


def test_a_module_entry_mlx_cannot_quantize_is_refused_in_one_line():
    with pytest.raises(OomkitError, match=r"^MLX quantization of model\.layers\.0\.mlp\.down_proj: .*2-8 bits$"):
        _tensors(_config("Qwen/Qwen3-8B", {"group_size": 64, "bits": 4,
                                           "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 9}}))


def _q(name: str, version: str, bits: int = 4) -> dict:
    spec = spec_from_config(copy.deepcopy(dict(catalog.lookup(name).config)), name=name)
    s = mlx.MlxSettings(q_bits=bits, context_length=1024, engine_version=version)
    return {t.name: b for t, b in mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))}


@pytest.mark.parametrize("version,router_bits", [("0.26.2", 4), ("0.26.3", 8), ("0.31.3", 8)])
def test_convert_q_keeps_the_qwen3_moe_router_at_8_bits_from_0_26_3(version, router_bits):
    """qwen3_moe.py quant_predicate (`mlp.gate` -> group 64, bits 8) came with PR #349 (cbfba0a9), first in v0.26.3;
    before it -q quantized the router at --q-bits like any Linear."""
    b = _q("Qwen/Qwen3-30B-A3B", version)
    assert b["blk.0.ffn_gate_inp.weight"] == _affine(128, 2048, router_bits, 64)
    assert b["blk.0.attn_q.weight"] == _affine(4096, 2048, 4, 64)


def test_convert_q_quantizes_mixtral_s_router_at_q_bits():
    """mixtral.py defines no quant_predicate (nor do deepseek_v3.py, qwen2_moe.py, glm4_moe.py): its 8-expert gate
    goes to --q-bits with everything else (8 rows x 4096 inputs at 4 bits, group 64)."""
    assert _q("mistralai/Mixtral-8x7B-Instruct-v0.1", "0.31.3")["blk.0.ffn_gate_inp.weight"] == _affine(8, 4096, 4, 64)
