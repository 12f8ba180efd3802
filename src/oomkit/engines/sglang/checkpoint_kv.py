"""SGLang's --kv-cache-dtype auto and the checkpoint's own KV-cache quantization.

model_runner.py ModelRunner.init_memory_pool (0.5.3-0.5.6), ModelRunner.configure_kv_cache_dtype (0.5.7-0.5.15),
mem_cache/kv_cache_dtype.py configure_kv_cache_dtype (0.5.16-0.5.23, the newest read): with "auto", `kv_cache_quant_algo =
getattr(quant_config, "kv_cache_quant_algo", None)`, and a string equal to "FP8" (upper-cased) makes the pool
torch.float8_e4m3fn (float8_e4m3fnuz on ROCm); anything else, an NVFP4 declaration included, leaves the model
dtype. Before 0.5.3 (0.4.6.post5 to 0.5.2 and 0.5.3rc0 read) "auto" is always the model dtype.

What quant_config.kv_cache_quant_algo holds depends on the quantization config class and the layout it reads
(layers/quantization/modelopt_quant.py from_config, 0.5.3-0.5.23 read). A config with a top-level quant_algo is
config.json's flat layout; one without is hf_quant_config.json's, whose "quantization" section's
kv_cache_quant_algo is taken as is (a nested kv_cache_scheme is not read). Flat:
- kv_cache_scheme {type: float, num_bits: 8} is "FP8" (every release; ModelOptFp8Config's value reaches the
  attribute from 0.5.4, settings.py ERAS kv_modelopt_fp8_attr; 4 bits is "NVFP4" or "auto", never FP8);
- a bare kv_cache_quant_algo: ModelOptFp4Config reads it before the scheme in 0.5.3-0.5.8, not in 0.5.9-0.5.14,
  and from 0.5.15 every ModelOpt config reads it when kv_cache_scheme is not a dict (ERAS
  kv_modelopt_fp4_flat_algo_dropped, kv_modelopt_flat_algo).
The class is configs/model_config.py _parse_modelopt_quant_config's by quant_algo: "MIXED_PRECISION" is
ModelOptMixedPrecisionConfig for a Nemotron-H model in 0.5.10-0.5.14 and for a checkpoint with NVFP4 layers from
0.5.15, else W4AFp8Config, no kv_cache_quant_algo (ERAS kv_modelopt_mixed, kv_modelopt_mixed_by_layers),
one naming FP4 ModelOptFp4Config, "FP8" ModelOptFp8Config. Other methods: Fp8Config (quant_method "fp8") reads a
kv_cache_quant_algo from 0.5.18, CompressedTensorsConfig gives "FP8" for a static symmetric per-tensor 8-bit float
kv_cache_scheme from 0.5.19 (ERAS kv_fp8_config_algo, kv_compressed_tensors_scheme; the spec carries no scheme
strategy: llm-compressor's per-tensor default is assumed). A MIXED_PRECISION config.json section that declares no KV
cache is "incomplete" from 0.5.15 and hf_quant_config.json's nested section is read instead (model_loader/
weight_utils.py get_quant_config modelopt_mixed_config_incomplete; ERAS kv_modelopt_mixed_incomplete).
"""

from __future__ import annotations

from ...model.spec import ModelSpec
from ..versions import Version
from .settings import reached


def _modelopt_class(spec: ModelSpec, quant_algo: str, v: Version) -> str | None:
    """_parse_modelopt_quant_config / weight_utils.py get_quant_config: the config class SGLang builds."""
    if quant_algo == "MIXED_PRECISION":
        if not reached(v, "kv_modelopt_mixed"):
            return None
        if reached(v, "kv_modelopt_mixed_by_layers"):
            # quantized_layers with an NVFP4 / W4A16_NVFP4 layer: such layers are read as modelopt-nvfp4 tensors
            mixed = any(t.dtype == "modelopt-nvfp4" for t in spec.weights.tensors)
        else:
            mixed = spec.hf_model_type == "nemotron_h"
        return "ModelOptMixedPrecisionConfig" if mixed else None
    if "FP4" in quant_algo:
        return "ModelOptFp4Config"
    if quant_algo == "FP8":
        return "ModelOptFp8Config"
    return None


def _read_value(spec: ModelSpec, v: Version) -> tuple[bool, str]:
    """Whether SGLang's quant_config carries the declared value as kv_cache_quant_algo; -> (read, why not)."""
    method, key, qa = spec.checkpoint_kv_cache_method, spec.checkpoint_kv_cache_key, spec.checkpoint_quant_algo
    if method.startswith("modelopt"):
        cls = _modelopt_class(spec, qa, v)
        if cls is None:
            if qa == "MIXED_PRECISION" and reached(v, "kv_modelopt_mixed"):
                return False, ("quant_algo MIXED_PRECISION builds W4AFp8Config, which has no kv_cache_quant_algo, "
                               "for this checkpoint at this release (ModelOptMixedPrecisionConfig for a Nemotron-H "
                               "model in 0.5.10-0.5.14, for one with NVFP4 layers from 0.5.15)")
            return False, (f"quant_algo {qa or '(none)'} builds no ModelOpt config with a kv_cache_quant_algo at "
                           "this release")
        if cls == "ModelOptFp8Config" and not reached(v, "kv_modelopt_fp8_attr"):
            return False, ("ModelOptFp8Config keeps it as kv_cache_quant_method, which init_memory_pool does not "
                           "read (kv_cache_quant_algo from 0.5.4)")
        if key.startswith("quantization."):
            return (key == "quantization.kv_cache_quant_algo",
                    "the nested section's kv_cache_scheme is not read (only its kv_cache_quant_algo)")
        if not qa:
            return False, "a config without quant_algo is read as the nested layout, which has no section here"
        if key == "kv_cache_scheme":
            return True, ""
        if reached(v, "kv_modelopt_flat_algo"):
            return True, ""
        if cls == "ModelOptFp4Config" and not reached(v, "kv_modelopt_fp4_flat_algo_dropped"):
            return True, ""
        return False, (f"{cls}.from_config reads only kv_cache_scheme from config.json's flat layout at this "
                       "release (a bare kv_cache_quant_algo is read there in ModelOptFp4Config up to 0.5.8 and in "
                       "every ModelOpt config from 0.5.15; hf_quant_config.json's nested section always)")
    if method == "compressed-tensors":
        if key == "kv_cache_scheme" and reached(v, "kv_compressed_tensors_scheme"):
            return True, ""
        return False, "CompressedTensorsConfig exposes kv_cache_quant_algo from 0.5.19"
    if method == "fp8":
        if key == "kv_cache_quant_algo" and reached(v, "kv_fp8_config_algo"):
            return True, ""
        return False, "Fp8Config reads kv_cache_quant_algo from 0.5.18"
    return False, f"the {method or 'checkpoint'} quantization config has no kv_cache_quant_algo"


def _incomplete_mixed(spec: ModelSpec, v: Version) -> tuple[str | None, str]:
    """config.json's modelopt MIXED_PRECISION section declares no KV cache: from 0.5.15 get_quant_config takes it as
    incomplete (model_loader/weight_utils.py modelopt_mixed_config_incomplete) and builds the config from
    hf_quant_config.json, whose nested quantization.kv_cache_quant_algo ModelOptMixedPrecisionConfig.from_config reads
    (0.5.15-0.5.23 wheels); 0.5.14 and before keep config.json's section, no kv_cache_quant_algo."""
    hf_algo = spec.hf_quant_config_kv_cache_dtype
    if (hf_algo is None or spec.hf_quant_config_quant_algo != "MIXED_PRECISION"
            or not reached(v, "kv_modelopt_mixed_incomplete")
            or _modelopt_class(spec, "MIXED_PRECISION", v) != "ModelOptMixedPrecisionConfig"):
        return None, ""
    declared = f"hf_quant_config.json's quantization.kv_cache_quant_algo ({hf_algo})"
    return _auto_is(hf_algo, declared, "config.json's MIXED_PRECISION quantization_config declares no KV cache, so "
                    f"SGLang reads {declared} instead from 0.5.15 (weight_utils.py get_quant_config, "
                    "modelopt_mixed_config_incomplete)")


def _auto_is(algo: str, declared: str, taken: str) -> tuple[str | None, str]:
    """--kv-cache-dtype auto with `declared` read (configure_kv_cache_dtype): FP8 only, else the model dtype;
    `taken` says where SGLang reads it."""
    if algo != "fp8":
        return None, (f"--kv-cache-dtype auto is the model dtype: SGLang takes only an FP8 kv_cache_quant_algo for "
                      f"auto, not {declared} (configure_kv_cache_dtype)")
    return "fp8_e4m3", f"--kv-cache-dtype auto is fp8_e4m3 (float8_e4m3fn, 1 byte a value): {taken}"


def checkpoint_kv_dtype(spec: ModelSpec, v: Version) -> tuple[str | None, str]:
    """--kv-cache-dtype auto against the checkpoint's declared KV cache (ModelSpec.checkpoint_kv_cache_*): ->
    ("fp8_e4m3", why) where SGLang takes FP8, else (None, why the model dtype stays; "" where nothing is declared)."""
    algo = spec.checkpoint_kv_cache_dtype
    if algo is None:
        return _incomplete_mixed(spec, v)
    where = spec.checkpoint_kv_cache_key or "quantization_config"
    declared = f"the checkpoint's {spec.checkpoint_kv_cache_method or 'quantization_config'} {where} ({algo})"
    if not reached(v, "kv_auto_checkpoint"):
        return None, (f"--kv-cache-dtype auto is the model dtype: SGLang takes {declared} for auto from 0.5.3 "
                      "(model_runner.py init_memory_pool); give --kv-cache-dtype fp8_e4m3 before")
    read, why = _read_value(spec, v)
    if not read:
        return None, f"--kv-cache-dtype auto is the model dtype: {declared} is not taken ({why})"
    return _auto_is(algo, declared, f"{declared}, which SGLang takes for auto from 0.5.3 "
                    "(quant_config.kv_cache_quant_algo \"FP8\", configure_kv_cache_dtype)")
