"""RoPE context scaling: read from config.json / GGUF into the ModelSpec, and the default context vLLM and SGLang
derive from it, release by release.

Ground truth is the engines' own source, read per release: vLLM config.py (config/model.py from 0.11)
_get_and_verify_max_len in the sdists 0.3.3-0.20.0 and the wheels 0.21.0-0.34.0; SGLang hf_transformers_utils.py
(utils/hf_transformers/common.py from 0.5.14) get_context_length in the wheels 0.4.0-0.5.23. The models are catalog
entries whose config.json was read verbatim (verified), except deepseek-coder-6.7b (see its filled_source).
"""

from __future__ import annotations

import dataclasses

import gguf
import pytest

from oomkit.engines.sglang.layout import model_context_length
from oomkit.engines.sglang.settings import parse_version as sglang_version
from oomkit.engines.vllm import VllmSettings
from oomkit.engines.vllm.config import derived_max_model_len, resolve
from oomkit.engines.vllm.settings import parse_version
from oomkit.errors import OomkitError
from oomkit.model.catalog import lookup
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import RopeScaling
from tests.groundtruth import synth
from tests.groundtruth.synth import VT


def _spec(hf_id: str, **edit):
    entry = lookup(hf_id)
    assert entry is not None, hf_id
    config = dict(entry.config)
    config.update(edit)
    return spec_from_config(config, name=hf_id)


def _sglang(spec, version: str = "0.5.23") -> int:
    return model_context_length(spec, sglang_version(version))


def _vllm(spec, version: str) -> int:
    return derived_max_model_len(spec, parse_version(version))


def _vllm_default(spec, version: str, **kw) -> int:
    return resolve(spec, (), VllmSettings(engine_version=version, **kw)).max_model_len


# ---------------------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------------------

def test_config_rope_scaling_is_read_as_written():
    # legacy "type" key (Llama 2 era), the "rope_type" key (Llama 3.1), YaRN with its original length (gpt-oss),
    # LongRoPE with the length beside the dict (Phi-3.5), a model without scaling
    assert _spec("deepseek-ai/deepseek-coder-6.7b-instruct").rope_scaling == RopeScaling("linear", 4.0)
    assert _spec("meta-llama/Llama-3.1-405B-Instruct").rope_scaling == RopeScaling("llama3", 8.0, 8192)
    assert _spec("openai/gpt-oss-120b").rope_scaling == RopeScaling("yarn", 32.0, 4096)
    assert _spec("microsoft/Phi-3.5-mini-instruct").rope_scaling == RopeScaling("longrope", None, None, 4096)
    assert _spec("Qwen/Qwen2.5-7B-Instruct").rope_scaling is None


def test_rope_parameters_per_layer_type():
    # transformers v5's rope_parameters, one dict per layer type (Gemma 4): none has a factor, the first is kept
    rope = _spec("google/gemma-4-26b-a4b").rope_scaling
    assert rope is not None and rope.factor is None
    # with a factor in one of them, that one (vLLM's loop keeps the last factor it meets, config/model.py 0.12+)
    spec = spec_from_config({
        "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
        "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096,
        "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    assert spec.rope_scaling == RopeScaling("linear", 2.0, per_layer_type=True)
    # vLLM 0.12+ multiplies by it; SGLang's get_context_length looks for "factor" in the outer dict and finds none
    assert _vllm(spec, "0.33.0") == 8192
    assert _sglang(spec) == 4096


def test_bad_rope_factor_is_a_model_error():
    with pytest.raises(OomkitError, match="rope_scaling.factor"):
        _spec("deepseek-ai/deepseek-coder-6.7b-instruct", rope_scaling={"type": "linear", "factor": "four"})


def test_gguf_rope_scaling_keys(tmp_path):
    # the keys convert_hf_to_gguf.py writes from rope_scaling (gguf-py Keys.Rope: rope.scaling.type / .factor /
    # .original_context_length); a GGUF without them has none
    arch = "llama"
    model = synth.llama3_8b(n_layers=2)
    plain = read_gguf_spec(synth.write_gguf(model, tmp_path / "plain.gguf", "q4_0"))
    assert plain.rope_scaling is None
    yarn = dataclasses.replace(model, metadata=model.metadata + (
        (gguf.Keys.Rope.SCALING_TYPE.format(arch=arch), "yarn", VT.STRING),
        (gguf.Keys.Rope.SCALING_FACTOR.format(arch=arch), 4.0, VT.FLOAT32),
        (gguf.Keys.Rope.SCALING_ORIG_CTX_LEN.format(arch=arch), 32768, VT.UINT32)))
    spec = read_gguf_spec(synth.write_gguf(yarn, tmp_path / "yarn.gguf", "q4_0"))
    assert spec.rope_scaling == RopeScaling("yarn", 4.0, 32768)


# ---------------------------------------------------------------------------------------------------------------
# vLLM: config/model.py _get_and_verify_max_len
# ---------------------------------------------------------------------------------------------------------------

def test_vllm_linear_factor_every_release():
    # deepseek-coder-6.7b, linear x 4 on 16,384 (vllm#5248 on 0.4.2: 65,536); no release skips "linear"
    spec = _spec("deepseek-ai/deepseek-coder-6.7b-instruct")
    for version in ("0.3.3", "0.4.2", "0.5.4", "0.6.3", "0.8.0", "0.11.0", "0.19.0", "0.30.0", "0.33.0"):
        assert _vllm(spec, version) == 65536, version
    # SGLang multiplies it too (get_context_length: no original_max_position_embeddings in the dict)
    assert _sglang(spec, "0.4.0") == _sglang(spec) == 65536


def test_vllm_dynamic_factor():
    # InternLM2.5-7B-chat: max_position_embeddings 32,768, rope_scaling dynamic x 2.0 -> 65,536 (vLLM and SGLang)
    spec = _spec("internlm/internlm2_5-7b-chat")
    assert (spec.n_ctx_train, spec.rope_scaling) == (32768, RopeScaling("dynamic", 2.0))
    assert _vllm(spec, "0.6.3") == _vllm(spec, "0.33.0") == 65536
    assert _sglang(spec, "0.4.0") == _sglang(spec) == 65536


def test_vllm_yarn_from_original_length_until_0_30():
    # up to 0.29: original_max_position_embeddings x factor; 0.30.0 adds yarn / deepseek_yarn /
    # deepseek_llama_scaling to the skipped kinds ("YaRN variants leave max_position_embeddings already scaled").
    # A Qwen2.5 config with the YaRN block its model card suggests (32,768, yarn x 4 from 32,768):
    qwen = _spec("Qwen/Qwen2.5-7B-Instruct", rope_scaling={
        "type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    assert _vllm(qwen, "0.6.3") == _vllm(qwen, "0.29.0") == 131072
    assert _vllm(qwen, "0.30.0") == _vllm(qwen, "0.33.0") == 32768
    # SGLang: the dict names an original length, so the factor counts 1 (every release read)
    assert _sglang(qwen, "0.4.0") == _sglang(qwen) == 32768
    # without it, transformers 4.x leaves the factor to count (SGLang up to 0.5.9); transformers 5 (0.5.10+) fills
    # original_max_position_embeddings in (standardize_rope_params), so it counts 1
    bare = _spec("Qwen/Qwen2.5-7B-Instruct", rope_scaling={"type": "yarn", "factor": 4.0})
    assert _sglang(bare, "0.5.9") == 131072
    assert _sglang(bare, "0.5.10") == 32768
    # DeepSeek-V2-Lite: 4,096 x 40 = 163,840 = max_position_embeddings, the same either way
    lite = _spec("deepseek-ai/DeepSeek-Coder-V2-Lite-Base")
    assert _vllm(lite, "0.5.4") == _vllm(lite, "0.33.0") == _sglang(lite) == 163840


def test_vllm_llama3_skipped_from_0_5_3_post1():
    # Llama 3.1 (rope_type llama3, x 8): skipped from 0.5.3.post1 (0.5.3 itself skipped "extended"; release
    # numbers cannot tell a .post1 apart, so 0.5.3 takes the later rule); SGLang skips llama3 by name
    spec = _spec("meta-llama/Llama-3.1-405B-Instruct")
    assert _vllm(spec, "0.5.3") == _vllm(spec, "0.33.0") == 131072
    assert _sglang(spec, "0.4.0") == _sglang(spec) == 131072


def test_vllm_longrope():
    # Phi-3.5-mini: 131,072 with LongRoPE ("su" skipped from 0.4.2, "longrope" from 0.5.1: no factor either way).
    # From 0.11.1 a run without --max-model-len defaults to the config's top-level original_max_position_embeddings
    # (4,096), while 131,072 stays the ceiling a user may ask for
    spec = _spec("microsoft/Phi-3.5-mini-instruct")
    assert _vllm(spec, "0.5.1") == _vllm(spec, "0.33.0") == 131072
    assert _vllm_default(spec, "0.11.0") == 131072
    assert _vllm_default(spec, "0.11.1") == _vllm_default(spec, "0.33.0") == 4096
    assert _vllm_default(spec, "0.33.0", max_model_len=-1) == 4096
    assert _vllm_default(spec, "0.33.0", max_model_len=131072) == 131072
    with pytest.raises(OomkitError, match=r"max_model_len \(131073\) is greater than the derived max_model_len"):
        _vllm_default(spec, "0.33.0", max_model_len=131073)


def test_vllm_gemma3_already_scaled():
    # Gemma 3 (linear x 8 on 131,072): "Gemma3's max_model_len (128K) is already scaled by RoPE scaling", skipped
    # from 0.8.0, its first release. SGLang has no such exception (its PR #20387, closed unmerged): 8 x 131,072 under
    # transformers 4.x (up to 0.5.9); transformers 5 (0.5.10+) moves the dict under "full_attention", where
    # get_context_length finds no factor
    spec = _spec("google/gemma-3-4b-it")
    assert spec.rope_scaling == RopeScaling("linear", 8.0)
    assert _vllm(spec, "0.8.0") == _vllm(spec, "0.33.0") == 131072
    assert _sglang(spec, "0.4.6") == _sglang(spec, "0.5.9") == 1048576
    assert _sglang(spec, "0.5.10") == _sglang(spec) == 131072


def test_dicts_without_a_factor_count_one():
    # Qwen2-VL's {"type": "mrope"} (0.6.1: factor 1 for mrope; 0.6.4: mrope renamed "default" and
    # rope_scaling.get("factor", 1.0)); Qwen3-VL's {"rope_type": "default", ...}; a null factor (0.18: 1.0)
    for hf_id in ("Qwen/Qwen2-VL-7B-Instruct", "Qwen/Qwen3-VL-32B-Instruct"):
        spec = _spec(hf_id)
        assert spec.rope_scaling is not None and spec.rope_scaling.factor is None, hf_id
        assert _vllm(spec, "0.33.0") == _sglang(spec) == spec.n_ctx_train, hf_id
    null = _spec("deepseek-ai/deepseek-coder-6.7b-instruct", rope_scaling={"type": "linear", "factor": None})
    assert _vllm(null, "0.18.0") == 16384


def test_vllm_su_multiplied_before_0_4_2():
    # 0.3.3-0.4.1 skip nothing: a dict with "su" and a factor is multiplied; 0.4.2 skips "su"
    spec = _spec("deepseek-ai/deepseek-coder-6.7b-instruct", rope_scaling={"type": "su", "factor": 2.0})
    assert _vllm(spec, "0.4.1") == 32768
    assert _vllm(spec, "0.4.2") == 16384
