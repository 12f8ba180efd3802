"""GLM-5.3-Flash (model_type glm5_next, text_config glm5_next_text) read from its config.json as llama.cpp's glm5-next.

llama.cpp: conversion/glm5next.py Glm5NextModel (Glm5NextForConditionalGeneration / Glm5NextForCausalLM, GlmMoeDsaModel's
MLA / MoE / NextN half, kimi-linear's KDA tensors, deepseek4's hyper-connection and k-pool compressor tensors; the
vision tower dropped) and src/models/glm5-next.cpp load_arch_hparams / load_arch_tensors (is_recr(i) = n_head_kv(i)
== 0; mHC weights on trunk blocks only; the indexer's compressor gate / ape on MLA layers; the NextN block an MLA +
MoE block). Before, oomkit read the model only from a GGUF; a config.json was read generically.

Held here: (a) the parameter count and llama.cpp's KV bytes per token worked by hand from the config's fields;
(b) a config written with the synthetic glm5-next GGUF's dims (tests/ggufs.py glm5_next, the tensor set as
llama.cpp@0c1e57098's loader asks for it) gives the spec oomkit reads from that GGUF, layer by layer and tensor by
tensor.
"""

from __future__ import annotations

import copy
import json

import pytest

from oomkit import estimate
from oomkit.errors import OomkitError
from oomkit.model.catalog import DATA_DIR
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import LayerKind
from tests import ggufs
from tests.groundtruth import synth


def catalog_config() -> dict:
    return json.loads((DATA_DIR / "glm-5.3-flash.json").read_text())["config"]


def test_parameter_count_by_hand():
    t = catalog_config()["text_config"]
    E, V, H = t["hidden_size"], t["vocab_size"], t["num_attention_heads"]
    lac = t["linear_attn_config"]
    hd, conv, p = lac["head_dim"], lac["short_conv_kernel_size"], lac["head_dim"] * H
    hc = t["hc_mult"]
    mix = (2 + hc) * hc
    ql, kvl, nope, v = t["q_lora_rank"], t["kv_lora_rank"], t["qk_nope_head_dim"], t["v_head_dim"]
    ih, ik, kpool = t["index_n_heads"], t["index_head_dim"], t["index_kpool"]
    n_exp, ffe, ff = t["n_routed_experts"], t["moe_intermediate_size"], t["intermediate_size"]
    n_mla = len(lac["full_attn_layers"])
    n_kda = t["num_hidden_layers"] - n_mla
    n_dense = t["first_k_dense_replace"]
    n_moe = t["num_hidden_layers"] - n_dense + t["num_nextn_predict_layers"]
    kda = 3 * conv * p + 3 * E * p + 2 * (E * hd + hd * p) + E * H + H + p + hd + p * E
    mla = ql + kvl + E * ql + ql * H * nope + E * kvl + 2 * kvl * nope * H + H * v * E
    indexer = ql * ih * ik + E * ik + 2 * ik + E * ih + E * ik + ik * kpool
    moe = E * n_exp + n_exp + 3 * E * ffe * n_exp + 3 * E * ffe
    trunk_block = 2 * E + 2 * (hc * E * mix + mix + 3)
    mtp = 2 * E + 2 * E * E + 3 * E  # norms, eh_proj, enorm / hnorm / shared_head_norm
    total = (2 * V * E + E + 45 * trunk_block + n_kda * kda + (n_mla + 1) * (mla + indexer) + n_dense * 3 * E * ff
             + n_moe * moe + mtp)
    assert (n_kda, n_mla, n_moe) == (34, 11, 43)
    assert total == 320_759_404_382
    spec = spec_from_config(catalog_config(), "glm-5.3-flash")
    assert spec.architecture == "glm5-next" and not spec.labels
    assert spec.params_total == total
    assert abs(total / 320e9 - 1) < 0.005  # the model card's 320B total


def test_layer_kinds_and_the_mtp_block():
    spec = spec_from_config(catalog_config(), "glm-5.3-flash")
    latent = [la.index for la in spec.layers if la.kind is LayerKind.LATENT]
    assert latent == [*range(3, 45, 4), 45]
    assert all(la.recurrent.d_inner == 64 * 128 for la in spec.layers if la.kind is LayerKind.RECURRENT)
    names = {t.name for t in spec.weights.tensors}
    assert "blk.44.hc_ffn_fn.weight" in names and "blk.45.hc_attn_fn.weight" not in names
    assert "blk.45.indexer_compressor_ape.weight" in names and "blk.44.indexer_compressor_ape.weight" not in names
    cfg = catalog_config()
    del cfg["text_config"]["layer_types"]  # linear_attn_config.full_attn_layers, 0-based, says the same
    assert [la.kind for la in spec_from_config(cfg, "g").layers] == [la.kind for la in spec.layers]


def test_llamacpp_kv_bytes_per_token_and_state():
    # K-only latent of kv_lora_rank (no rope part) on the 11 MLA layers, and the k-pool indexer's row (key | gate |
    # pooled, 3 x index_head_dim) beside it, f16; the MTP block is not cached. KDA: (d_conv - 1) x head_dim x n_head
    # conv rows for each of q, k, v and a head_dim^2 state per head, f32, per sequence (one slot with -np 1)
    r = estimate("zai-org/GLM-5.3-Flash", "llama.cpp", gpu="8x H200", n_ctx=8192, n_parallel=1,
                 find_max_context=False).to_dict()
    assert r["kv_bytes_per_token"] == 11 * 512 * 2 + 11 * 3 * 128 * 2 == 19_712
    assert r["recurrent_state_bytes"] == 34 * (3 * 3 * 128 * 64 + 128 * 128 * 64) * 4 == 152_633_344


def _synthetic_config(nextn: int) -> dict:
    """tests/ggufs.py glm5_next's dims as a GLM-5.3-Flash-style config.json."""
    return {"architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next", "text_config": {
        "model_type": "glm5_next_text", "hidden_size": 2304, "num_hidden_layers": 4, "vocab_size": 32000,
        "num_attention_heads": 32, "num_key_value_heads": 32, "q_lora_rank": 1536, "kv_lora_rank": 512,
        "qk_nope_head_dim": 192, "qk_rope_head_dim": 0, "v_head_dim": 128, "intermediate_size": 9216,
        "first_k_dense_replace": 1, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1024,
        "n_shared_experts": 1, "topk_method": "noaux_tc", "index_n_heads": 32, "index_head_dim": 128,
        "index_topk": 2048, "index_kpool": 4, "hc_mult": 4,
        "layer_types": ["linear_attention"] * 3 + ["deepseek_sparse_attention"],
        "linear_attn_config": {"num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4, "full_attn_layers": [3],
                               "kda_layers": [0, 1, 2]},
        "max_position_embeddings": 8192, "tie_word_embeddings": False, "num_nextn_predict_layers": nextn}}


def test_config_spec_equals_the_gguf_spec():
    gguf = read_gguf_spec(synth.synth_path(ggufs.glm5_next(), "f16"))
    ours = spec_from_config(_synthetic_config(0), "glm5-next", weight_format="F16")
    assert ours.architecture == gguf.architecture == "glm5-next"
    assert ours.layers == gguf.layers
    assert {t.name: t.shape for t in ours.weights.tensors} == {t.name: t.shape for t in gguf.weights.tensors}
    assert ours.params_total == gguf.params_total == 558_442_192


def test_mtp_block_as_the_gguf_has_it():
    # the synthetic file's NextN block carries no shared_head_norm (glm5-next.cpp: TENSOR_NOT_REQUIRED); the
    # config's gets it, as GLM-5's checkpoint has model.layers.<last>.shared_head.norm
    gguf = read_gguf_spec(synth.synth_path(ggufs.NEXTN_VARIANTS["glm5-next"](), "f16"))
    ours = spec_from_config(_synthetic_config(1), "glm5-next", weight_format="F16")
    assert ours.layers == gguf.layers
    a, b = ({t.name: t.shape for t in s.weights.tensors} for s in (ours, gguf))
    assert set(a) - set(b) == {"blk.4.nextn.shared_head_norm.weight"} and not set(b) - set(a)
    assert ours.params_total - gguf.params_total == 2304


@pytest.mark.parametrize("edit, match", [
    (dict(hc_mult=2), "hc_mult"),
    (dict(layer_types=["linear_attention"] * 3 + ["full_attention"]), "layer_types"),
])
def test_bad_fields_are_one_line_errors(edit, match):
    cfg = copy.deepcopy(_synthetic_config(0))
    cfg["text_config"].update(edit)
    with pytest.raises(OomkitError, match=match):
        spec_from_config(cfg, "g")
