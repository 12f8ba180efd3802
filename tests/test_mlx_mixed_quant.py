"""mlx_lm.convert -q over a checkpoint that is already quantized: mlx-community's gpt-oss "-MXFP4-Q8" (mlx-lm#644:
mlx_lm.chat --model mlx-community/gpt-oss-20b-MXFP4-Q8 on a 16 GB M4 prints "[WARNING] Generating with a model that
requires 11516 MB"). mlx_lm/utils.py load_model makes the MXFP4 experts quantized layers (quant_method "mxfp4":
{group_size 32, bits 4, mode mxfp4}, class_predicate `{p}.scales in weights`); quantize_model then quantizes only the
modules that still have `to_quantized` (the float ones: attention, embeddings, lm_head) at --q-bits, affine group 64,
and the router at 8 bits (models/gpt_oss.py quant_predicate); the experts stay MXFP4 as stored."""

from __future__ import annotations

import copy

import pytest

from oomkit.engines import mlx
from oomkit.engines.cmdline import parse_command
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config


def _gpt_oss_20b():
    return spec_from_config(copy.deepcopy(dict(catalog.lookup("gpt-oss-20b").config)), name="gpt-oss-20b")


def test_the_mxfp4_q8_conversion_holds_what_mlx_lm_prints():
    spec = _gpt_oss_20b()
    assert spec.weights.format == "mxfp4"
    s = mlx.MlxSettings(q_bits=8, context_length=1024)
    by_name = {t.name: (t, b) for t, b in mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))}
    # the float Linear layers at 8 bits, group 64: in x 1 byte + in / 64 bf16 scales and biases, per output row
    assert by_name["blk.0.attn_q.weight"][1] == 4096 * (2880 + 2 * 45 * 2)
    assert by_name["blk.0.ffn_gate_inp.weight"][1] == 32 * (2880 + 2 * 45 * 2)  # the router: 8 bits too
    assert by_name["token_embd.weight"][1] == by_name["token_embd.weight"][0].shape[1] * (2880 + 2 * 45 * 2)
    # the experts as the checkpoint stores them (MXFP4)
    t, b = by_name["blk.0.ffn_gate_exps.weight"]
    assert t.dtype == "mxfp4" and b == t.nbytes
    total = sum(b for _, b in by_name.values())
    assert total // 2**20 == 11516  # generate.py: model_bytes // 2**20, as mlx_lm printed it (mlx-lm#644)


def test_without_q_bits_the_checkpoint_counts_as_stored():
    """openai/gpt-oss-20b's model.safetensors.index.json total_size (tests/test_gpt_oss_checkpoint_bytes.py)."""
    spec = _gpt_oss_20b()
    s = mlx.MlxSettings(context_length=1024)
    assert sum(b for _, b in mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))) == 13_761_264_768


@pytest.mark.parametrize("name,bits", [
    ("mlx-community/gpt-oss-20b-MXFP4-Q8", 8),
    ("mlx-community/gpt-oss-120b-MXFP4-Q4", 4),
    ("mlx-community/gpt-oss-20b-MXFP4", None),  # the MXFP4 checkpoint as it is
    ("mlx-community/Qwen3-8B-Q8", None),  # no MXFP4 before it: not read as bits
    ("mlx-community/Qwen3-8B-4bit", 4),
])
def test_the_bits_a_name_carries(name, bits):
    assert mlx.bits_from_name(name) == bits


def test_the_command_reads_the_q8_from_the_name():
    p = parse_command(["mlx_lm.chat", "--model", "mlx-community/gpt-oss-20b-MXFP4-Q8"], {})
    assert (p.model, p.settings.q_bits, p.settings.q_group_size) == ("openai/gpt-oss-20b", 8, 64)
