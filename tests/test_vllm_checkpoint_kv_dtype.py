"""The checkpoint's own KV-cache quantization and vLLM's --kv-cache-dtype auto.

Reading (model/hf_config.py checkpoint_kv_cache) follows vLLM's utils/torch_utils.py get_kv_cache_quant_algo_string
(0.14.0-0.34.0 sdists): quantization_config's "quantization" section before the config itself, kv_cache_scheme before
kv_cache_quant_algo; a scheme {dynamic: false, num_bits: 8, type: float} is fp8, {num_bits: 4, type: float} nvfp4.
The engine (engines/vllm/config.py auto_kv_dtype) applies it by release: resolve_kv_cache_dtype_string first in
0.14.0 (absent in 0.13.0, whose attention/layer.py keeps cache_config.cache_dtype "auto" as the model dtype and only
loads a ModelOpt checkpoint's k/v scales), ModelOpt only, MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP "fp8" -> "fp8_e4m3"
from 0.14.0 and "nvfp4" -> "nvfp4" from 0.20.0 (absent in 0.17.0, 0.18.0, 0.19.0 and 0.19.1).

The engine figure: GLM-4.7 ModelOpt NVFP4 (kv_cache_quant_algo FP8) at TP 4 on four RTX PRO 6000 Max-Q, vLLM 0.15.1
with auto, prints 729,248 KV tokens (tests/fixtures/engine_logs/vllm/heldout15/, AlexGS74/glm47-nvfp4-sm120;
asserted in tests/test_vllm_heldout15.py): the FP8 cache, half the model dtype's 47,104 B a token a rank x 2.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE
from oomkit.engines.vllm.args import parse_args
from oomkit.engines.vllm.config import auto_kv_dtype
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import checkpoint_kv_cache, spec_from_config
from tests.startup_heldout import fixture_loader, gpus
from tests.test_vllm_heldout15 import GLM47, GLM47_KV_BYTES_RANK, GLM47_NVFP4, HERE
from tests.test_vllm_startup import spec_of

fixture = fixture_loader(HERE)

MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
# the newer ModelOpt producer writes the cache as a scheme (catalog: nvidia/Qwen3.5-397B-A17B-NVFP4 and others)
MODELOPT_SCHEME = {"quant_method": "modelopt", "quant_algo": "NVFP4",
                   "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"}}
# hf_quant_config.json's layout: the algorithms in a "quantization" section
MODELOPT_NESTED = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
                   "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}}
COMPRESSED_FP8 = {"quant_method": "compressed-tensors", "format": "float-quantized",
                  "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float", "strategy": "tensor"}}
COMPRESSED_NULL = {"quant_method": "compressed-tensors", "format": "pack-quantized", "kv_cache_scheme": None}


@pytest.mark.parametrize("qc, want", [
    (MODELOPT_FP8, ("fp8", "modelopt")),
    (MODELOPT_SCHEME, ("fp8", "modelopt")),
    (MODELOPT_NESTED, ("fp8", "modelopt")),
    ({"quant_method": "modelopt_fp4", "kv_cache_quant_algo": "NVFP4"}, ("nvfp4", "modelopt_fp4")),
    ({"quant_method": "modelopt", "kv_cache_scheme": {"num_bits": 4, "type": "float"}}, ("nvfp4", "modelopt")),
    ({"quant_method": "modelopt", "kv_cache_scheme": {"dynamic": True, "num_bits": 8, "type": "float"}},
     ("unrecognized", "modelopt")),
    (COMPRESSED_FP8, ("fp8", "compressed-tensors")),
    (COMPRESSED_NULL, (None, "")),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": None}, (None, "")),
    ({"quant_method": "awq", "bits": 4}, (None, "")),
    (None, (None, "")),
])
def test_reading(qc, want):
    got = checkpoint_kv_cache({} if qc is None else {"quantization_config": qc}, {})
    assert (got.get("checkpoint_kv_cache_dtype"), got.get("checkpoint_kv_cache_method", "")) == want


@pytest.mark.parametrize("qc, want", [
    (MODELOPT_FP8, ("fp8", "modelopt")), (GLM47_NVFP4, ("fp8", "modelopt")), (None, (None, ""))])
def test_reading_on_the_spec(qc, want):
    spec = spec_of("zai-org/GLM-4.7", qc)
    assert (spec.checkpoint_kv_cache_dtype, spec.checkpoint_kv_cache_method) == want


def test_reading_prefers_the_outer_config():
    """vLLM reads hf_config.quantization_config, the wrapper's; the text config's is the fallback."""
    outer = {"quantization_config": MODELOPT_FP8, "text_config": {"quantization_config": COMPRESSED_NULL}}
    assert checkpoint_kv_cache(outer, outer["text_config"]) == {"checkpoint_kv_cache_dtype": "fp8",
                                                               "checkpoint_kv_cache_method": "modelopt"}
    inner = {"quantization_config": MODELOPT_SCHEME}
    assert checkpoint_kv_cache({}, inner)["checkpoint_kv_cache_dtype"] == "fp8"


def test_gguf_format_drops_it():
    """A GGUF of the model carries no quantization_config for vLLM to read."""
    config = {**lookup("zai-org/GLM-4.7").config, "quantization_config": MODELOPT_FP8}
    spec = spec_from_config(config, name="GLM-4.7", weight_format="Q4_K_M")
    assert spec.checkpoint_kv_cache_dtype is None


@pytest.mark.parametrize("repo, want", [
    ("nvidia/Qwen3-235B-A22B-NVFP4", ("fp8", "modelopt")),  # kv_cache_quant_algo "FP8"
    ("nvidia/Gemma-4-26B-A4B-NVFP4", ("fp8", "modelopt")),  # kv_cache_scheme, 8-bit float, static
    ("poolside/Laguna-XS.2-FP8", ("fp8", "compressed-tensors")),
    ("moonshotai/Kimi-K2-Thinking", (None, "")),  # compressed-tensors, kv_cache_scheme null
    ("Qwen/Qwen3-235B-A22B-FP8", (None, "")),  # fp8 block weights, no KV cache quantization
])
def test_catalog_entries_carry_it(repo, want):
    """Catalog entries and variants are config.json copies: read the same way."""
    entry = lookup(repo)
    spec = spec_from_config(entry.config, name=entry.name)
    assert (spec.checkpoint_kv_cache_dtype, spec.checkpoint_kv_cache_method) == want


def _spec(qc):
    return replace(spec_of("zai-org/GLM-4.7"), **checkpoint_kv_cache({"quantization_config": qc}, {}))


@pytest.mark.parametrize("version, qc, want", [
    ((0, 13, 0), MODELOPT_FP8, None),  # no resolve_kv_cache_dtype_string: the model dtype
    ((0, 14, 0), MODELOPT_FP8, "fp8_e4m3"),
    ((0, 14, 0), MODELOPT_SCHEME, "fp8_e4m3"),
    ((0, 15, 1), MODELOPT_NESTED, "fp8_e4m3"),
    ((0, 34, 0), MODELOPT_FP8, "fp8_e4m3"),
    ((0, 19, 1), {"quant_method": "modelopt", "kv_cache_quant_algo": "NVFP4"}, None),  # unmapped: "auto"
    ((0, 20, 0), {"quant_method": "modelopt", "kv_cache_quant_algo": "NVFP4"}, "nvfp4"),
    ((0, 34, 0), {"quant_method": "modelopt", "kv_cache_quant_algo": "INT8"}, None),  # "Unknown ...": "auto"
    ((0, 16, 0), COMPRESSED_FP8, None),  # quant_method not modelopt: get_kv_cache_quant_algo_string -> None
    ((0, 16, 0), COMPRESSED_NULL, None),
])
def test_release_rule(version, qc, want):
    taken, reason = auto_kv_dtype(_spec(qc), version)
    assert taken == want, reason
    if qc.get("kv_cache_quant_algo") or qc.get("kv_cache_scheme") or qc.get("quantization"):
        assert reason  # the estimate says why auto took what it took


def _glm47(version: str, kv: str = "auto"):
    _, _, s = parse_args(fixture(GLM47)["argv"])
    s = replace(s, engine_version=version, kv_cache_dtype=kv)
    return ENGINE.estimate(spec_of("zai-org/GLM-4.7", GLM47_NVFP4), gpus("RTX PRO 6000 Max-Q", 4), s)


def test_boundary_on_the_engine():
    """The logged run (0.15.1) prints 729,248 tokens with auto; at 0.13.0 auto is the bf16 cache (twice the bytes a
    token), at 0.14.0 the checkpoint's fp8, as an explicit --kv-cache-dtype fp8 is at either release."""
    printed = fixture(GLM47)["printed"]["kv_cache_tokens"]
    at_14 = _glm47("0.14.0")
    assert at_14.engine_view["kv_cache_dtype"] == "fp8_e4m3"
    assert at_14.kv_bytes_per_token == 4 * GLM47_KV_BYTES_RANK
    assert "checkpoint" in at_14.engine_view["kv_cache_dtype_reason"]
    assert any(w.startswith("--kv-cache-dtype auto is fp8_e4m3 here") for w in at_14.warnings), at_14.warnings
    logged = _glm47("0.15.1").engine_view["kv_cache_tokens"]
    assert abs(logged - printed) / printed < 0.03, logged
    at_13 = _glm47("0.13.0")
    assert at_13.engine_view["kv_cache_dtype"] == at_13.engine_view["dtype"]
    assert at_13.kv_bytes_per_token == 2 * 4 * GLM47_KV_BYTES_RANK
    assert "0.14.0" in at_13.engine_view["kv_cache_dtype_reason"]
    assert not any(w.startswith("--kv-cache-dtype auto") for w in at_13.warnings), at_13.warnings
    assert _glm47("0.13.0", "fp8").kv_bytes_per_token == 4 * GLM47_KV_BYTES_RANK


def test_explicit_flag_wins():
    """resolve_kv_cache_dtype_string returns a dtype given on the command line unchanged."""
    est = _glm47("0.15.1", "bfloat16")
    assert est.engine_view["kv_cache_dtype"] == "bfloat16"
    assert est.kv_bytes_per_token == 2 * 4 * GLM47_KV_BYTES_RANK
