"""The checkpoint's own KV-cache quantization and SGLang's --kv-cache-dtype auto (engines/sglang/checkpoint_kv.py).

SGLang's rule (model_runner.py init_memory_pool 0.5.3-0.5.6, configure_kv_cache_dtype 0.5.7-0.5.15,
mem_cache/kv_cache_dtype.py configure_kv_cache_dtype 0.5.16-0.5.23; absent in 0.4.6.post5 to 0.5.2 and 0.5.3rc0):
"auto" with quant_config.kv_cache_quant_algo "FP8" is torch.float8_e4m3fn, one byte a value; otherwise the model
dtype, an NVFP4 declaration included. What kv_cache_quant_algo holds comes from layers/quantization/
modelopt_quant.py from_config by layout and release (0.5.3-0.5.10 sdists, 0.5.14-0.5.23 wheels read): config.json's
flat layout (a top-level quant_algo) reads kv_cache_scheme, and a bare kv_cache_quant_algo only in
ModelOptFp4Config up to 0.5.8 and in every ModelOpt config from 0.5.15; hf_quant_config.json's nested "quantization"
section is read for its kv_cache_quant_algo; ModelOptFp8Config exposes the value from 0.5.4. Which layout a repo
gives the engine: config.json's quantization_config when it has one, else hf_quant_config.json as it is
(model_loader/weight_utils.py get_quant_config, 0.4.6.post5-0.5.23), so the catalog keeps ModelOpt repos without a
config.json quantization_config nested (ai-dynamo/aiconfigurator's copies of both files).

The engine's own figures: littlecedar/sparkrun-recipe-registry's Qwen3 guide quotes two SGLang allocation lines of
RadixArk/Qwen3.8-27B-NVFP4 (a ModelOpt export whose hf_quant_config.json declares kv_cache_quant_algo FP8) served with
--kv-cache-dtype auto on one DGX Spark (test_auto_fp8_printed_by_sglang). The other figures are SGLang's cell
(model_runner.py profile_max_num_token: layers x KV heads a rank x (K + V head dims) x the element size) worked by
hand from the checkpoints' configs.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.sglang.checkpoint_kv import checkpoint_kv_dtype
from oomkit.engines.sglang.settings import parse_version
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import checkpoint_kv_cache, checkpoint_kv_cache_layout, spec_from_config
from oomkit.model.resolve import resolve
from oomkit.units import GiB, MiB

B200 = with_facts(Device("CUDA0", "NVIDIA B200", 183359 * MiB))
SCHEME8 = {"dynamic": False, "num_bits": 8, "type": "float"}

# config.json's flat layouts
FP8_FLAT_ALGO = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
FP4_FLAT_ALGO = {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}
FP8_SCHEME = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": SCHEME8}
FP4_SCHEME = {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_scheme": SCHEME8}
FP4_SCHEME_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4",
                    "kv_cache_scheme": {"dynamic": False, "num_bits": 4, "type": "float"}}
MIXED_SCHEME = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "kv_cache_scheme": SCHEME8}
MIXED_FLAT_ALGO = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": "FP8"}
# hf_quant_config.json's nested layout
FP8_NESTED = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
              "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
FP4_NESTED = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
              "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}}
CT_FP8 = {"quant_method": "compressed-tensors", "kv_cache_scheme": {**SCHEME8, "strategy": "tensor"}}
FP8_METHOD_ALGO = {"quant_method": "fp8", "kv_cache_quant_algo": "FP8"}


@pytest.mark.parametrize("qc, want", [
    (FP8_FLAT_ALGO, ("kv_cache_quant_algo", "FP8")),
    (FP4_SCHEME, ("kv_cache_scheme", "NVFP4")),
    (FP4_NESTED, ("quantization.kv_cache_quant_algo", "NVFP4")),
    ({**FP4_SCHEME, "kv_cache_quant_algo": "FP8"}, ("kv_cache_scheme", "NVFP4")),
    (CT_FP8, ("kv_cache_scheme", "")),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, None),
])
def test_layout_reading(qc, want):
    got = checkpoint_kv_cache_layout({"quantization_config": qc}, {})
    assert ((got["checkpoint_kv_cache_key"], got["checkpoint_quant_algo"]) if got else None) == want


def _spec(qc):
    spec = spec_from_config(lookup("llama-3.1-8b-instruct").config, name="Llama-3.1-8B-Instruct")
    cfg = {"quantization_config": qc}
    return replace(spec, **checkpoint_kv_cache(cfg, {}), **checkpoint_kv_cache_layout(cfg, {}))


FP8 = "fp8_e4m3"


@pytest.mark.parametrize("qc, version, want", [
    # before 0.5.3: auto is the model dtype whatever the checkpoint says
    (FP4_NESTED, "0.4.6.post5", None), (FP4_SCHEME, "0.5.2", None),
    # config.json flat, a bare kv_cache_quant_algo: the FP4 config reads it in 0.5.3-0.5.8, every ModelOpt config
    # from 0.5.15; 0.5.9-0.5.14 read kv_cache_scheme only
    (FP4_FLAT_ALGO, "0.5.3", FP8), (FP4_FLAT_ALGO, "0.5.8", FP8), (FP4_FLAT_ALGO, "0.5.9", None),
    (FP4_FLAT_ALGO, "0.5.10", None), (FP4_FLAT_ALGO, "0.5.14", None), (FP4_FLAT_ALGO, "0.5.15", FP8),
    (FP8_FLAT_ALGO, "0.5.4", None), (FP8_FLAT_ALGO, "0.5.10", None), (FP8_FLAT_ALGO, "0.5.15", FP8),
    (FP8_FLAT_ALGO, "0.5.23", FP8),
    # config.json flat, an 8-bit float kv_cache_scheme: FP8 (ModelOptFp8Config's value reaches the attribute from 0.5.4)
    (FP4_SCHEME, "0.5.3", FP8), (FP4_SCHEME, "0.5.10", FP8), (FP8_SCHEME, "0.5.3", None), (FP8_SCHEME, "0.5.4", FP8),
    (FP8_SCHEME, "0.5.10", FP8),
    # an NVFP4 cache declared: auto stays the model dtype
    (FP4_SCHEME_NVFP4, "0.5.10", None), (FP4_SCHEME_NVFP4, "0.5.23", None),
    # hf_quant_config.json's nested section: its kv_cache_quant_algo is read in every release
    (FP4_NESTED, "0.5.3", FP8), (FP4_NESTED, "0.5.10", FP8), (FP8_NESTED, "0.5.3", None), (FP8_NESTED, "0.5.4", FP8),
    (FP8_NESTED, "0.5.10", FP8),
    # MIXED_PRECISION on a dense bf16 Llama: W4AFp8Config (no kv_cache_quant_algo) in every release, as it is neither
    # Nemotron-H (0.5.10-0.5.14) nor has NVFP4 layers (0.5.15+); see test_mixed_precision_class below
    (MIXED_SCHEME, "0.5.9", None), (MIXED_SCHEME, "0.5.10", None), (MIXED_FLAT_ALGO, "0.5.15", None),
    # other methods: CompressedTensorsConfig's kv_cache_quant_algo from 0.5.19, Fp8Config's from 0.5.18
    (CT_FP8, "0.5.18", None), (CT_FP8, "0.5.19", FP8), (FP8_METHOD_ALGO, "0.5.17", None),
    (FP8_METHOD_ALGO, "0.5.18", FP8),
])
def test_auto_by_layout_and_release(qc, version, want):
    taken, why = checkpoint_kv_dtype(_spec(qc), parse_version(version))
    assert taken == want
    assert why.startswith("--kv-cache-dtype auto is " + ("fp8_e4m3" if want else "the model dtype"))


def test_nothing_declared_nothing_said():
    assert checkpoint_kv_dtype(_spec({"quant_method": "modelopt", "quant_algo": "FP8"}), (0, 5, 10, 0)) == (None, "")


# nvidia/MiniMax-M2.5-NVFP4 (catalog; config.json's quantization_config: quant_algo NVFP4, kv_cache_scheme 8-bit
# float): 62 layers, 8 KV heads of 128 for K and V. At TP4 a rank holds 2 heads: the cell is
# 62 x 2 x (128 + 128) x 1 B = 31,744 B in FP8 and 63,488 B in BF16; with 10 GiB of KV, 10 GiB // cell tokens.
MINIMAX_FP8_CELL = 62 * 2 * (128 + 128) * 1
MINIMAX_BF16_CELL = 62 * 2 * (128 + 128) * 2


def _minimax(version: str, kv: str = "auto"):
    spec = spec_from_config(lookup("nvidia/MiniMax-M2.5-NVFP4").config, name="MiniMax-M2.5-NVFP4")
    s = sg.SGLangSettings(engine_version=version, kv_cache_dtype=kv, kv_cache_memory_bytes=10 * GiB,
                          context_length=8192, tp_size=4)
    return sg.ENGINE.estimate(spec, (B200,) * 4, s)


def test_catalog_modelopt_fp8_kv_end_to_end():
    assert (MINIMAX_FP8_CELL, MINIMAX_BF16_CELL) == (31744, 63488)
    old, new = _minimax("0.5.2"), _minimax("0.5.3")
    assert old.engine_view["kv_cache_dtype"] == "bfloat16"
    assert old.engine_view["cell_size_bytes"] == MINIMAX_BF16_CELL
    assert old.engine_view["max_total_num_tokens"] == 10 * GiB // MINIMAX_BF16_CELL == 169125
    assert new.engine_view["kv_cache_dtype"] == "fp8_e4m3"
    assert new.engine_view["cell_size_bytes"] == MINIMAX_FP8_CELL
    assert new.engine_view["max_total_num_tokens"] == 10 * GiB // MINIMAX_FP8_CELL == 338250
    assert new.kv_bytes_per_token == 4 * MINIMAX_FP8_CELL
    assert "kv_cache_scheme (fp8)" in new.engine_view["kv_cache_dtype_reason"]
    assert new.engine_view["kv_cache_dtype_reason"] in new.warnings
    # the newest release resolves it the same way (mem_cache/kv_cache_dtype.py)
    assert _minimax("0.5.23").engine_view["cell_size_bytes"] == MINIMAX_FP8_CELL


def test_given_dtype_is_kept():
    est = _minimax("0.5.10", kv="bf16")
    assert est.engine_view["cell_size_bytes"] == MINIMAX_BF16_CELL
    assert "kv_cache_dtype_reason" not in est.engine_view


# nvidia/Llama-3.1-70B-Instruct-FP8 ships no quantization_config in config.json: SGLang reads hf_quant_config.json,
# {"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", ...}}, the nested layout, so from 0.5.4 its
# cache is FP8: 80 layers x 8 KV heads x (128 + 128) x 1 B = 163,840 B a token (327,680 B in BF16).
LLAMA70_FP8 = 80 * 8 * 256
LLAMA70_BF16 = 2 * LLAMA70_FP8


def _llama70(qc, version: str):
    entry = lookup("nvidia/Llama-3.1-70B-Instruct-FP8")
    config = dict(entry.config)
    if qc is not None:
        config["quantization_config"] = qc
    spec = spec_from_config(config, name="Llama-3.1-70B-Instruct-FP8")
    s = sg.SGLangSettings(engine_version=version, kv_cache_memory_bytes=10 * GiB, context_length=8192, tp_size=2)
    return sg.ENGINE.estimate(spec, (B200,) * 2, s)


def test_hf_quant_config_layout_end_to_end():
    nested = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
              "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
    assert _llama70(nested, "0.5.3").kv_bytes_per_token == LLAMA70_BF16 == 327680
    assert _llama70(nested, "0.5.10").kv_bytes_per_token == LLAMA70_FP8 == 163840


# The catalog keeps the variant as the repo carries it: config.json without quantization_config, hf_quant_config.json's
# nested section ({"producer": ..., "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", ...}}), which
# SGLang's model_loader/weight_utils.py get_quant_config passes as it is to ModelOptFp8Config.from_config
# (0.4.6.post5-0.5.23): FP8 from 0.5.4, when ModelOptFp8Config's value reaches kv_cache_quant_algo.
@pytest.mark.parametrize("version, want", [
    ("0.5.3", LLAMA70_BF16), ("0.5.4", LLAMA70_FP8), ("0.5.10", LLAMA70_FP8), ("0.5.14", LLAMA70_FP8),
    ("0.5.15", LLAMA70_FP8), ("0.5.23", LLAMA70_FP8),
])
def test_catalog_hf_quant_config(version, want):
    qc = lookup("nvidia/Llama-3.1-70B-Instruct-FP8").config["quantization_config"]
    assert qc["quantization"]["kv_cache_quant_algo"] == "FP8" and "quant_algo" not in qc
    assert _llama70(None, version).kv_bytes_per_token == want


@pytest.mark.parametrize("ref, version, want", [
    # a ModelOpt repo named but not in the catalog: the name's layout is hf_quant_config.json's (model/names.py)
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "0.5.3", "bfloat16"), ("nvidia/Llama-3.1-8B-Instruct-FP8", "0.5.10", FP8),
    ("nvidia/Llama-3.3-70B-Instruct-FP4", "0.5.3", FP8), ("nvidia/Llama-3.3-70B-Instruct-FP4", "0.5.10", FP8),
])
def test_name_derived_modelopt(ref, version, want):
    spec = resolve(ref, tag_formats=False)
    s = sg.SGLangSettings(engine_version=version, kv_cache_memory_bytes=10 * GiB, context_length=8192)
    assert sg.ENGINE.estimate(spec, (B200,), s).engine_view["kv_cache_dtype"] == want


# MIXED_PRECISION's config class (configs/model_config.py _parse_modelopt_quant_config): W4AFp8Config, which has no
# kv_cache_quant_algo, before 0.5.10; ModelOptMixedPrecisionConfig in 0.5.10-0.5.14 only for model_type nemotron_h
# (0.5.10 sdist, 0.5.14 wheel), from 0.5.15 for a checkpoint whose quantized_layers hold an NVFP4 / W4A16_NVFP4 layer
# (0.5.15-0.5.23 wheels). Both catalog checkpoints have NVFP4 MLP layers; Nemotron 3.5 Lightning is Nemotron-H
# (hf_quant_config.json nested, kv_cache_quant_algo FP8), Qwen3.6-27B is qwen3_5 (config.json flat, an 8-bit float
# kv_cache_scheme).
@pytest.mark.parametrize("ref, version, want", [
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "0.5.9", "bfloat16"),
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "0.5.10", FP8),
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "0.5.14", FP8),
    ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "0.5.15", FP8),
    ("nvidia/Qwen3.6-27B-NVFP4", "0.5.10", "bfloat16"), ("nvidia/Qwen3.6-27B-NVFP4", "0.5.14", "bfloat16"),
    ("nvidia/Qwen3.6-27B-NVFP4", "0.5.15", FP8), ("nvidia/Qwen3.6-27B-NVFP4", "0.5.23", FP8),
])
def test_mixed_precision_class(ref, version, want):
    spec = resolve(ref, tag_formats=False)
    s = sg.SGLangSettings(engine_version=version, kv_cache_memory_bytes=10 * GiB, context_length=8192)
    est = sg.ENGINE.estimate(spec, (B200,), s)
    assert est.engine_view["kv_cache_dtype"] == want
    if want == "bfloat16" and version != "0.5.9":
        assert "W4AFp8Config" in est.engine_view["kv_cache_dtype_reason"]


# nvidia/Qwen3.6-35B-A3B-NVFP4: config.json's quantization_config (MIXED_PRECISION) declares no KV cache, its
# hf_quant_config.json declares kv_cache_quant_algo FP8 (ai-dynamo/aiconfigurator copies of both). From 0.5.15
# get_quant_config takes such a modelopt_mixed config as incomplete and reads hf_quant_config.json instead
# (model_loader/weight_utils.py modelopt_mixed_config_incomplete), so the cache is FP8: 10 full-attention layers x 2
# KV heads x (256 + 256) x 1 B = 10,240 B a token. The catalog variant carries hf_quant_config.json's section beside
# config.json's, and the spec its declaration (ModelSpec.hf_quant_config_*), which engines/sglang/checkpoint_kv.py
# reads from 0.5.15.
def test_the_spec_carries_hf_quant_config_beside_config_json():
    spec = resolve("nvidia/Qwen3.6-35B-A3B-NVFP4", tag_formats=False)
    assert spec.checkpoint_kv_cache_dtype is None  # config.json's MIXED_PRECISION section declares no KV cache
    assert (spec.hf_quant_config_kv_cache_dtype, spec.hf_quant_config_quant_algo) == ("fp8", "MIXED_PRECISION")
    base = resolve("Qwen/Qwen3.6-35B-A3B", tag_formats=False)
    assert (base.hf_quant_config_kv_cache_dtype, base.hf_quant_config_quant_algo) == (None, "")


# 0.5.14's weight_utils.py has no modelopt_mixed_config_incomplete (wheel read): config.json's section stays, no KV
# cache declared, bf16: 10 x 2 x 512 x 2 B = 20,480 B; 0.5.15-0.5.23 read hf_quant_config.json: FP8, 10,240 B.
@pytest.mark.parametrize("version, want", [
    ("0.5.14", 10 * 2 * 512 * 2), ("0.5.15", 10 * 2 * 512), ("0.5.23", 10 * 2 * 512),
])
def test_mixed_precision_incomplete_config_reads_hf_quant_config(version, want):
    spec = resolve("nvidia/Qwen3.6-35B-A3B-NVFP4", tag_formats=False)
    s = sg.SGLangSettings(engine_version=version, kv_cache_memory_bytes=10 * GiB, context_length=8192)
    est = sg.ENGINE.estimate(spec, (B200,), s)
    assert est.kv_bytes_per_token == want
    if want == 10240:
        assert est.engine_view["kv_cache_dtype"] == FP8
        assert "modelopt_mixed_config_incomplete" in est.engine_view["kv_cache_dtype_reason"]
    # a kv dtype given on the command line is kept
    given = replace(s, kv_cache_dtype="bf16")
    assert sg.ENGINE.estimate(spec, (B200,), given).kv_bytes_per_token == 20480


# https://github.com/littlecedar/sparkrun-recipe-registry/blob/6b40cf6cdc7910b0efd2d8efba2c5882bee23795/recipes/qwen3/AGENTS.md
# (section 5.6, "kv_cache_dtype: auto"): RadixArk/Qwen3.8-27B-NVFP4 at TP1 on a DGX Spark, lmsysorg/sglang:dev-cu13
# measured 2026-09-19 (taken as 0.5.19, the release of that month; the auto rule is the same in 0.5.15-0.5.23), the
# DFlash2 boot verbatim and the no-spec control's figures as the guide quotes them:
RADIXARK_DFLASH_LINE = ("KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 117125,\n"
                        "                     K size: 1.79 GB, V size: 1.79 GB")
RADIXARK_NOSPEC = (268343, "4.09")  # "#tokens: 268343, K 4.09 GB"


def test_auto_fp8_printed_by_sglang():
    # the name reads as ModelOpt NVFP4 with hf_quant_config.json's kv_cache_quant_algo FP8 (model/names.py); 16
    # full-attention layers x 4 KV heads x 256 x 1 B = 16,384 B of K a token: 117,125 tokens are 1.79 GiB of K and
    # 268,343 are 4.09 (bf16 would print 3.57 and 8.19)
    spec = resolve("RadixArk/Qwen3.8-27B-NVFP4", tag_formats=False)
    est = sg.ENGINE.estimate(spec, (B200,), sg.SGLangSettings(engine_version="0.5.19", context_length=8192))
    ev = est.engine_view
    assert "dtype: torch.float8_e4m3fn" in RADIXARK_DFLASH_LINE and ev["kv_cache_dtype"] == FP8
    k_per_token = ev["cell_size_bytes"] // 2
    assert f"K size: {117125 * k_per_token / GiB:.2f} GB" in RADIXARK_DFLASH_LINE
    tokens, k_gb = RADIXARK_NOSPEC
    assert f"{tokens * k_per_token / GiB:.2f}" == k_gb
