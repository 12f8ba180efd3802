"""A quantization_config whose kv_cache_quant_algo is not a name (a number, a list, an object) was read as declaring
no KV-cache quantization without a word. The engines part ways on it, and the estimate now says how:

- SGLang takes the checkpoint's KV cache as FP8 only for the string "FP8" (`isinstance(kv_cache_quant_algo, str) and
  kv_cache_quant_algo.upper() == "FP8"`: model_executor/model_runner.py init_memory_pool, 0.5.3 and 0.5.10 sdists;
  mem_cache/kv_cache_dtype.py by 0.5.23) and keeps the model's dtype otherwise;
- vLLM's ModelOptQuantConfigBase.from_config (layers/quantization/modelopt.py, 0.10.0-0.34.0 sdists) raises
  `ValueError(f"kv_cache_quant_algo must be a string, got {type(kv_cache_quant_method)}")` for one in hf_quant_config's
  nested "quantization" section; from config.json's flat layout it reads the value in
  utils/torch_utils.py get_kv_cache_quant_algo_string: an object as a kv_cache_scheme, anything else as none.
"""

from __future__ import annotations

import json

import pytest

from oomkit.model.hf_config import spec_from_config
from tests import hostile as H
from tests.sweep_harness import offline, run_cli  # noqa: F401 (autouse: no network, a fresh cache)


def _config(value, nested: bool) -> dict:
    q = {"quant_algo": "FP8", "kv_cache_quant_algo": value}
    return H.llama_config(quantization_config={"quant_method": "modelopt", "quantization": q} if nested
                          else {"quant_method": "modelopt", **q})


def _notes(spec) -> list[str]:
    return [x for x in spec.labels if "kv_cache_quant_algo" in x]


@pytest.mark.parametrize("value", [8, 1.5, ["FP8"], True])
@pytest.mark.parametrize("nested", [False, True])
def test_a_value_that_is_no_name_is_read_as_none_and_said(value, nested):
    spec = spec_from_config(_config(value, nested), name="m")
    assert spec.checkpoint_kv_cache_dtype is None
    (note,) = _notes(spec)
    where = "quantization_config.quantization." if nested else "quantization_config."
    assert note.startswith(f"{where}kv_cache_quant_algo = {json.dumps(value)} is not a name"), note
    assert "no KV-cache quantization" in note and "SGLang keeps the model's dtype" in note
    assert ("kv_cache_quant_algo must be a string" in note) == nested, note


def test_an_object_is_read_as_a_scheme_as_vllm_reads_it_and_said():
    scheme = {"dynamic": False, "num_bits": 8, "type": "float"}
    spec = spec_from_config(_config(scheme, nested=False), name="m")
    assert spec.checkpoint_kv_cache_dtype == "fp8"
    (note,) = _notes(spec)
    assert "read as a kv_cache_scheme (fp8)" in note and "SGLang keeps the model's dtype" in note, note


def test_a_name_says_nothing_more():
    spec = spec_from_config(_config("FP8", nested=True), name="m")
    assert spec.checkpoint_kv_cache_dtype == "fp8" and not _notes(spec)


def test_the_estimate_shows_the_note(tmp_path):
    H.write_config(tmp_path / "m", _config([8], nested=True))
    rc, out, err = run_cli("estimate", str(tmp_path / "m"), "--engine", "vllm", "--vram", "24GiB", "--json")
    assert rc in (0, 1), err
    assert any("kv_cache_quant_algo = [8] is not a name" in w for w in json.loads(out)["warnings"]), out
