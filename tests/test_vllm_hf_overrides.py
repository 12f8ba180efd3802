"""vLLM --hf-overrides (and 0.6-0.9's --rope-scaling): the JSON merged into the model's config before vLLM derives
max_model_len (config/model.py _get_and_verify_max_len). Qwen3-8B declares 40960 positions and no scaling; Qwen's
model card runs it at 131072 with YaRN factor 4 over 32768 (rope_scaling in config.json, or --hf-overrides)."""

from __future__ import annotations

import pytest

from oomkit.check import check
from oomkit.engines.vllm.args import format_command, parse_args
from oomkit.errors import OomkitError

YARN = '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'


def _settings(*argv: str):
    return parse_args(["serve", "Qwen/Qwen3-8B", *argv], env={})[2]


def _check(version: str, *argv: str):
    return check("Qwen/Qwen3-8B", "vllm", gpu="H100", settings=_settings(*argv), engine_version=version)


def test_yarn_override_raises_the_derived_length_where_vllm_scales_yarn():
    # 0.8-0.29: yarn's derived length is original_max_position_embeddings x factor
    r = _check("0.10.1", "--hf-overrides", YARN)
    assert r.n_ctx == 32768 * 4 and r.max_context == 131072
    assert any("32768 times the declared RoPE factor (yarn, 4)" in n for n in r.notes)


def test_without_the_override_the_model_stays_at_its_40960():
    assert _check("0.10.1").n_ctx == 40960


def test_max_position_embeddings_override_is_the_new_maximum():
    r = _check("0.10.1", "--hf-overrides", '{"max_position_embeddings": 65536}')
    assert r.n_ctx == 65536 and not any("trained maximum" in n for n in r.notes)


def test_rope_scaling_flag_of_older_releases_is_the_same_override():
    a, b = _settings("--rope-scaling", YARN[len('{"rope_scaling": '):-1]), _settings("--hf-overrides", YARN)
    assert a.hf_overrides == b.hf_overrides
    assert _check("0.8.5", "--rope-scaling", YARN[len('{"rope_scaling": '):-1]).n_ctx == 131072


def test_an_override_that_reshapes_the_layers_is_refused_not_ignored():
    with pytest.raises(OomkitError, match="num_hidden_layers"):
        _check("0.10.1", "--hf-overrides", '{"num_hidden_layers": 2}')


def test_an_override_oomkit_does_not_count_is_named():
    r = _check("0.10.1", "--hf-overrides", '{"foo": 1}')
    assert any("--hf-overrides foo: not counted" in w for w in r.estimate.warnings)


@pytest.mark.parametrize("bad", ["[1]", "{not json", '{"max_position_embeddings": -5}'])
def test_malformed_overrides_are_refused(bad):
    with pytest.raises(OomkitError):
        _check("0.10.1", "--hf-overrides", bad)


def test_the_override_survives_the_command_round_trip():
    s = _settings("--hf-overrides", YARN)
    cmd = format_command("Qwen/Qwen3-8B", s)
    assert "--hf-overrides" in cmd and parse_args(cmd[2:], env={})[2].hf_overrides == s.hf_overrides
