"""The context-length keys of config.json, as each engine reads them: vLLM the smallest of its release's
possible_keys (config/model.py _get_and_verify_max_len; model_arch_config_convertor.py derive_max_model_len_and_key
from 0.14), a config's model_max_length over it from 0.8.3; SGLang the first of its CONTEXT_LENGTH_KEYS
(hf_transformers_utils.py get_context_length); llama.cpp the converter's n_ctx_train, unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from oomkit.engines.sglang.layout import model_context_length
from oomkit.engines.sglang.settings import parse_version as sglang_version
from oomkit.engines.vllm import VllmSettings
from oomkit.engines.vllm.config import derived_max_model_len, resolve, with_hf_overrides
from oomkit.engines.vllm.settings import parse_version
from oomkit.errors import OomkitError
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import CONTEXT_LENGTH_KEYS, spec_from_config

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 512, "num_hidden_layers": 2,
         "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 1024, "vocab_size": 1000,
         "max_position_embeddings": 8192}


def _spec(**edit):
    return spec_from_config({**LLAMA, **edit}, name="t")


def _vllm(spec, version: str) -> int:
    return derived_max_model_len(spec, parse_version(version))


def _vllm_default(spec, version: str, **kw) -> int:
    return resolve(spec, (), VllmSettings(engine_version=version, **kw)).max_model_len


def _sglang(spec, version: str = "0.5.23") -> int:
    return model_context_length(spec, sglang_version(version))


def test_config_lengths_are_read_as_written():
    spec = _spec(seq_length=4096, model_max_length=16384)
    assert spec.config_lengths == (("max_position_embeddings", 8192), ("seq_length", 4096),
                                   ("model_max_length", 16384))
    assert spec.n_ctx_train == 8192  # llama.cpp's converter: max_position_embeddings first
    assert _spec().config_lengths == (("max_position_embeddings", 8192),)
    # a tokenizer-style "no limit" is kept as written; a non-number is passed over
    assert dict(_spec(model_max_length=1e30).config_lengths)["model_max_length"] == int(1e30)
    assert "seq_len" not in dict(_spec(seq_len="long").config_lengths)
    # GPT-2's class reads max_position_embeddings as n_positions (attribute_map)
    gpt2 = spec_from_config(dict(lookup("gpt2").config), name="gpt2")
    assert dict(gpt2.config_lengths) == {"max_position_embeddings": 1024, "n_positions": 1024}


@pytest.mark.parametrize("key", [k for k in CONTEXT_LENGTH_KEYS if k != "max_position_embeddings"])
def test_vllm_takes_the_smallest_key(key):
    first = {"model_max_length": "0.4.1", "max_target_positions": "0.7.0"}.get(key)
    spec = _spec(**{key: 4096})
    assert _vllm(spec, "0.34.0") == 4096
    assert _vllm(spec, "0.8.2") == 4096
    if first:  # not read before the release that added it: the other key stands
        assert _vllm(spec, first) == 4096
        before = {"0.4.1": "0.3.3", "0.7.0": "0.6.6.post1"}[first]
        assert _vllm(spec, before) == 8192
    # a larger one changes nothing (only model_max_length, from 0.8.3)
    big = _spec(**{key: 65536})
    assert _vllm(big, "0.8.2") == 8192
    assert _vllm(big, "0.34.0") == (65536 if key == "model_max_length" else 8192)


def test_vllm_model_max_length_replaces_the_minimum_from_0_8_3():
    # "For Command-R / Cohere, Cohere2 / Aya Vision models": derived_max_model_len = model_max_length
    spec = _spec(model_max_length=131072)
    assert _vllm(spec, "0.8.2") == 8192
    assert _vllm(spec, "0.8.3") == 131072
    assert _vllm_default(spec, "0.34.0") == 131072
    # before 0.8.3 a --max-model-len up to model_max_length still passes the check
    assert _vllm_default(spec, "0.8.2", max_model_len=100000) == 100000
    with pytest.raises(OomkitError, match=r"max_position_embeddings=8192 or model_max_length=131072"):
        _vllm_default(spec, "0.8.2", max_model_len=200000)
    with pytest.raises(OomkitError, match=r"\(max_position_embeddings=8192 or model_max_length=None"):
        _vllm_default(_spec(), "0.8.2", max_model_len=9000)


def test_vllm_error_names_the_smallest_key():
    with pytest.raises(OomkitError, match=r"\(max_seq_len=4096 or model_max_length=None"):
        _vllm_default(_spec(max_seq_len=4096), "0.34.0", max_model_len=8192)


def test_vllm_no_key_takes_the_users_length():
    spec = dataclasses.replace(_spec(), n_ctx_train=0, config_lengths=())
    assert _vllm_default(spec, "0.34.0") == 2048  # "Assuming the model's maximum length is 2048"
    assert _vllm_default(spec, "0.34.0", max_model_len=32768) == 32768  # "If max_model_len is specified, we use it"


def test_gguf_spec_keeps_its_context_length():
    spec = dataclasses.replace(_spec(max_seq_len=4096), config_lengths=())
    assert _vllm(spec, "0.34.0") == 8192
    assert _sglang(spec) == 8192


def test_sglang_takes_the_first_key_in_its_order():
    assert _sglang(_spec(max_seq_len=4096)) == 4096
    assert _sglang(_spec(max_seq_len=65536)) == 65536  # first found, not the smallest
    assert _sglang(_spec(model_max_length=131072), "0.4.10") == 131072
    assert _sglang(_spec(seq_length=2048, max_sequence_length=4096)) == 4096
    assert _sglang(_spec(n_positions=1024)) == 8192  # n_positions is not in SGLang's list
    assert _sglang(spec_from_config(dict(lookup("gpt2").config), name="gpt2")) == 1024


def test_rope_factor_applies_to_the_chosen_key():
    spec = _spec(max_seq_len=4096, rope_scaling={"type": "linear", "factor": 2.0})
    assert _vllm(spec, "0.34.0") == 8192
    assert _sglang(spec) == 8192


def test_mistral_large_3():
    # params.json: max_position_embeddings 294,912 (8192 x yarn 36) and max_seq_len 262,144; vLLM serves 262,144 by
    # default (vllm-project/recipes Mistral-Large-3.md), YaRN's factor not applied from 0.30
    entry = lookup("mistral-large-3")
    spec = spec_from_config(dict(entry.config), name=entry.slug)
    assert spec.n_ctx_train == 294912  # llama.cpp's GGUF context_length
    assert _vllm(spec, "0.34.0") == 262144
    assert _vllm_default(spec, "0.34.0") == 262144
    assert _vllm(spec, "0.29.0") == 294912  # yarn: original_max_position_embeddings x factor before 0.30
    assert _sglang(spec) == 262144


def test_roberta_positions():
    # XLM-R: max_position_embeddings 8194, two rows never a token's; vLLM's sentence_bert_config / tokenizer_config
    # give 8192, SGLang's get_context_length the config's 8194
    entry = lookup("bge-m3")
    spec = spec_from_config(dict(entry.config), name=entry.slug)
    assert spec.n_ctx_train == 8192
    assert _vllm(spec, "0.34.0") == 8192
    assert _sglang(spec) == 8194


def test_hf_overrides_length_keys():
    spec, warnings = with_hf_overrides(_spec(), '{"max_seq_len": 4096}')
    assert not warnings
    assert _vllm(spec, "0.34.0") == 4096
    spec, _ = with_hf_overrides(_spec(max_seq_len=4096), '{"max_position_embeddings": 2048}')
    assert spec.n_ctx_train == 2048 and _vllm(spec, "0.34.0") == 2048
    gguf = dataclasses.replace(_spec(), config_lengths=())
    spec, _ = with_hf_overrides(gguf, '{"max_seq_len": 4096}')
    assert dict(spec.config_lengths) == {"max_position_embeddings": 8192, "max_seq_len": 4096}
    with pytest.raises(OomkitError, match="max_seq_len"):
        with_hf_overrides(_spec(), '{"max_seq_len": -1}')
