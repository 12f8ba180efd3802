"""SGLang's FP4 KV caches (--kv-cache-dtype fp4_e2m1, nvfp4, fp4_mx_block16): the releases and GPUs that take them
and the bytes a token costs, worked by hand from the source (0.5.3-0.5.23 wheels read; engines/sglang/kv.py
fp4_kv_layout, check_fp4_kv).

No public log prints a pool with an FP4 cache; the ratios the MHA pool's own PR gives (sglang#12612: "≈1.78x" the
tokens of an FP8 cache, "≈3.56x" of a BF16 one, block size 16) are the 9/16 byte a value checked below."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from oomkit.engines import sglang as sg
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import devices_for_names, with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import GiB, MiB

H100 = with_facts(Device("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB))


def _qwen3_8b():
    return spec_from_config(lookup("qwen3-8b").config, name="Qwen3-8B")


def _est(kv: str, version: str, devices=(H100,), spec=None, **kw):
    s = sg.SGLangSettings(kv_cache_dtype=kv, engine_version=version, kv_cache_memory_bytes=10 * GiB,
                          context_length=8192, **kw)
    return sg.ENGINE.estimate(spec or _qwen3_8b(), tuple(devices), s)


# Qwen3-8B: 36 layers, 8 KV heads, head_dim 128. BF16: 36 x 8 x (128 + 128) x 2 B = 147,456 B a token.
# FP4 (model_runner.py / pool_configurator.py, kv_size = element_size(float4_e2m1fn_x2) = 1):
#   (8 x 256 x 36) // 2 + (8 x 128 x 36 x 2) // 16 = 36,864 + 4,608 = 41,472 B
BF16_CELL = 36 * 8 * 256 * 2
FP4_CELL = 8 * 256 * 36 // 2 + 8 * 128 * 36 * 2 // 16


def test_fp4_e2m1_mha_cell_is_nine_sixteenths_of_a_byte():
    assert FP4_CELL == 41472
    est = _est("fp4_e2m1", "0.5.10", attention_backend="triton")
    assert est.kv_bytes_per_token == FP4_CELL
    # sglang#12612's ratios: 3.56x the tokens of BF16, 1.78x of FP8
    assert round(BF16_CELL / FP4_CELL, 2) == 3.56 and round(BF16_CELL / 2 / FP4_CELL, 2) == 1.78
    assert est.engine_view["max_total_num_tokens"] == 10 * GiB // FP4_CELL
    # the pool holds the packed values and the uint8 scales: (tokens + 1) x 36 x 8 x (64 + 8) for K, the same for V
    n = est.engine_view["max_total_num_tokens"]
    assert est.engine_view["k_bytes"] == (n + 1) * 36 * 8 * (64 + 8)


def test_fp4_e2m1_mha_from_0_5_6():
    # 0.5.6 (MHATokenToKVPoolFP4, no backend check yet): head_dim taken twice, the same bytes for Qwen3
    assert _est("fp4_e2m1", "0.5.6").kv_bytes_per_token == FP4_CELL
    # 0.5.5 has the FP4 pool for MLA only
    with pytest.raises(OomkitError, match="FP4 pool for MLA models only"):
        _est("fp4_e2m1", "0.5.5")


def test_fp4_e2m1_mla_from_0_5_5():
    # DeepSeek-Coder-V2-Lite: 27 layers of a 512 + 64 latent. (576 x 27) // 2 + (576 // 16) x 27 = 7,776 + 972
    entry = lookup("deepseek-coder-v2-lite-instruct")
    spec = spec_from_config(entry.config, name=entry.name)
    est = _est("fp4_e2m1", "0.5.5", spec=spec)
    assert est.kv_bytes_per_token == 576 * 27 // 2 + 576 // 16 * 27 == 8748


def test_fp4_releases_and_spellings():
    with pytest.raises(OomkitError, match="invalid choice: 'fp4_e2m1' in SGLang 0.5.4"):
        _est("fp4_e2m1", "0.5.4", attention_backend="triton")
    # 0.5.16-0.5.20: mem_cache/kv_cache_dtype.py refuses the old name
    with pytest.raises(OomkitError, match=r"fp4_e2m1 is deprecated\. Use --kv-cache-dtype=fp4_mx_block16"):
        _est("fp4_e2m1", "0.5.18", attention_backend="triton")
    with pytest.raises(OomkitError, match="invalid choice: 'fp4_e2m1' in SGLang 0.5.23"):
        _est("fp4_e2m1", "0.5.23", attention_backend="triton")
    with pytest.raises(OomkitError, match="invalid choice: 'fp4_mx_block16' in SGLang 0.5.15"):
        _est("fp4_mx_block16", "0.5.15", attention_backend="triton")


def test_fp4_mx_block16_cell_by_release():
    # 0.5.16-0.5.20 pool_configurator.py: + one shared FP8 dequant workspace, 8 x 128 x 2 B a token
    assert _est("fp4_mx_block16", "0.5.18", attention_backend="triton").kv_bytes_per_token == FP4_CELL + 2048
    # 0.5.21+: FP4MXBlock16KVCacheMethod.compute_cell_size, no workspace for a PLAIN (dequantize-on-read) backend
    assert _est("fp4_mx_block16", "0.5.23", attention_backend="triton").kv_bytes_per_token == FP4_CELL


def test_kv4_backend_check():
    # 0.5.7+: the backend in force (the default is picked just before) must be in KV4_ATTENTION_MHA_BACKEND_CHOICES;
    # FA3, the Hopper default, is not
    for version in ("0.5.7", "0.5.10"):
        with pytest.raises(OomkitError, match=r"KV4 MHA expects attention_backend to be one of .*but got fa3"):
            _est("fp4_e2m1", version)
    assert _est("fp4_e2m1", "0.5.8", attention_backend="triton").kv_bytes_per_token == FP4_CELL
    # 0.5.6 has no such check: the Hopper default runs the FP4 pool
    assert _est("fp4_e2m1", "0.5.6").engine_view["attention_backend"] == "fa3"
    # not on ROCm
    mi300 = with_facts(Device("ROCm0", "AMD Instinct MI300X", 192 * 1024 * MiB))
    with pytest.raises(OomkitError, match="KV4 is not tested on non-CUDA platforms"):
        _est("fp4_e2m1", "0.5.10", devices=(mi300,), attention_backend="triton")


def test_nvfp4_needs_blackwell_and_trtllm_mha():
    # 0.5.21-0.5.23 arg_groups/kv_cache_hook.py: handle_nvfp4_prefill_kv_dequant_dtype runs first (the prefill
    # backend typed picks the dequant dtype: trtllm_mha native NVFP4, SM100 only), then handle_kv4_compatibility
    with pytest.raises(OomkitError, match="nvfp4 requires Blackwell SM100 or SM120"):
        _est("nvfp4", "0.5.23")
    with pytest.raises(OomkitError, match="Native NVFP4 prefill currently requires SM100"):
        _est("nvfp4", "0.5.23", attention_backend="trtllm_mha")
    b200 = devices_for_names("B200")
    # SM100: trtllm_mha reads the packed cache natively in both phases (one scale layout, no workspace)
    assert _est("nvfp4", "0.5.23", devices=b200, attention_backend="trtllm_mha").kv_bytes_per_token == FP4_CELL
    # no backend typed: --prefill-kv-cache-dequant-dtype auto is nvfp4 on SM100, so trtllm_mha for both phases
    assert _est("nvfp4", "0.5.23", devices=b200).kv_bytes_per_token == FP4_CELL
    with pytest.raises(OomkitError, match="NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but "
                                          "backend 'triton' provides neither"):
        _est("nvfp4", "0.5.23", devices=b200, attention_backend="triton")
    # --attention-backend flashinfer: FlashInfer prefill from an FP8 workspace, trtllm_mha decode, and on SM100 both
    # scale layouts (NVFP4KVCacheMethod.compute_cell_size: "Mixed mode intentionally owns both"):
    # FP4_CELL + 8 x (128 // 16) x 36 x 2 + 8 x 128 x 2 x 1
    assert _est("nvfp4", "0.5.23", devices=b200, attention_backend="flashinfer").kv_bytes_per_token == \
        FP4_CELL + 4608 + 2048
    with pytest.raises(OomkitError, match="requires prefill backend 'flashinfer'"):
        _est("nvfp4", "0.5.23", devices=b200, prefill_kv_cache_dequant_dtype="fp8_e4m3",
             prefill_attention_backend="trtllm_mha")
    with pytest.raises(OomkitError, match="NVFP4 decode requires --decode-attention-backend=trtllm_mha"):
        _est("nvfp4", "0.5.23", devices=b200, decode_attention_backend="triton")
    with pytest.raises(OomkitError, match="applies only with --kv-cache-dtype=nvfp4"):
        _est("fp4_mx_block16", "0.5.23", attention_backend="triton", prefill_kv_cache_dequant_dtype="fp8_e4m3")
    # up to 0.5.20 the recipe prefills with FlashInfer and decodes with trtllm_mha: a split not modelled
    with pytest.raises(OomkitError, match="split oomkit does not model"):
        _est("nvfp4", "0.5.18", devices=b200, attention_backend="trtllm_mha")


def test_fp4_with_hybrid_pools():
    g = lookup("gpt-oss-20b")
    spec = spec_from_config(g.config, name=g.name)
    # SWAKVPool builds plain MHATokenToKVPool sub-pools of torch.float4_e2m1fn_x2 (no FP4 class, no recipe), whose
    # set_kv_buffer casts the BF16 K and V to that dtype: torch has no such cast (2.13 on this CPU, checked below)
    for kv, version in (("fp4_e2m1", "0.5.10"), ("fp4_mx_block16", "0.5.23")):
        with pytest.raises(OomkitError, match=r"^NotImplementedError: \"copy_\" not implemented for "
                                              r"'Float4_e2m1fn_x2' \(SGLang " + version):
            _est(kv, version, spec=spec, attention_backend="triton")
    torch = pytest.importorskip("torch")
    if hasattr(torch, "float4_e2m1fn_x2"):
        with pytest.raises(NotImplementedError, match="\"copy_\" not implemented for 'Float4_e2m1fn_x2'"):
            torch.zeros((2, 8, 64), dtype=torch.bfloat16).to(torch.float4_e2m1fn_x2)
    # Qwen3.5-35B-A3B (sglang#21601's model): 10 full-attention layers of 2 KV heads x 256 beside linear attention.
    # From 0.5.16 HybridLinearKVPool takes the recipe: 0.5.23 nvfp4 with trtllm_mha on SM100 (one native scale
    # layout): 2 x (256 // 2) x 10 x 2 + 2 x (256 // 16) x 10 x 2 = 5,120 + 640
    q = lookup("qwen3.5-35b-a3b")
    spec = spec_from_config(q.config, name=q.name)
    pro6000 = devices_for_names("RTX PRO 6000")
    est = _est("nvfp4", "0.5.23", devices=devices_for_names("B200"), spec=spec, attention_backend="trtllm_mha")
    assert est.kv_bytes_per_token == 5760
    # on SM120 the recipe prefills from the FP8 workspace (sglang#21601's cell, below): + 2 x 256 x 2
    assert _est("nvfp4", "0.5.23", devices=pro6000, spec=spec).kv_bytes_per_token == 5760 + 1024
    # 0.5.18 fp4_mx_block16: + the FP8 dequant workspace, 2 x 256 x 2 B
    assert _est("fp4_mx_block16", "0.5.18", devices=pro6000, spec=spec,
                attention_backend="triton").kv_bytes_per_token == 5760 + 1024
    with pytest.raises(OomkitError, match="Mamba / linear-attention state pool is not modelled"):
        _est("fp4_e2m1", "0.5.15", devices=pro6000, spec=spec, attention_backend="triton")


# gpt-oss-20b with --disable-hybrid-swa-memory: configs/model_config.py _derive_hybrid_model (0.5.16, 0.5.23; 0.5.3-0.5.15
# model_runner.py) sets is_hybrid_swa = is_hybrid_swa_model(...) and not disable_hybrid_swa_memory, so no SWAKVPool:
# the plain MHA pool holds all 24 layers (kv_cache_configurator.py 0.5.16-0.5.23 _build_mha_kv_pool with the FP4
# quant_method over num_effective_layers; 0.5.10 model_runner_kv_cache_mixin.py MHATokenToKVPoolFP4). 8 KV heads x 64:
#   (8 x (64 + 64) x 24) // 2 + (8 x 64 x 24 x 2) // 16 = 12,288 + 1,536 = 13,824 B a token
# 0.5.16-0.5.20 pool_configurator.py _compute_cell_size adds the shared FP8 dequant workspace, 8 x 64 x 2 = 1,024 B
GPT_OSS_20B_FP4_CELL = 8 * (64 + 64) * 24 // 2 + 8 * 64 * 24 * 2 // 16


def test_fp4_gpt_oss_with_hybrid_swa_memory_disabled():
    assert GPT_OSS_20B_FP4_CELL == 13824
    g = lookup("gpt-oss-20b")
    spec = spec_from_config(g.config, name=g.name)
    for kv, version, cell in (("fp4_e2m1", "0.5.10", 13824), ("fp4_mx_block16", "0.5.18", 13824 + 1024),
                              ("fp4_mx_block16", "0.5.23", 13824)):
        est = _est(kv, version, spec=spec, attention_backend="triton", disable_hybrid_swa_memory=True)
        assert est.kv_bytes_per_token == cell, (kv, version)
        assert est.engine_view["max_total_num_tokens"] == 10 * GiB // cell
    # the flag as typed: parsed as a setting, no longer an "unmodelled" note
    _, _, s = sg.parse_args(["--disable-hybrid-swa-memory", "--kv-cache-dtype", "fp4_mx_block16"])
    assert s.disable_hybrid_swa_memory and not s.unmodelled
    assert "--disable-hybrid-swa-memory" in sg.format_command("m", replace(s, engine_version="0.5.23"))
    # BF16 the same way: 24 layers x 8 x (64 + 64) x 2 B = 49,152 B a token, every layer full size
    assert _est("auto", "0.5.23", spec=spec, attention_backend="triton",
                disable_hybrid_swa_memory=True).kv_bytes_per_token == 24 * 8 * 128 * 2
    # without it the refusal stays
    with pytest.raises(OomkitError, match=r"^NotImplementedError: \"copy_\" not implemented"):
        _est("fp4_mx_block16", "0.5.23", spec=spec, attention_backend="triton")


def test_split_backends_cell_of_sglang_21601():
    # NVFP4KVCacheMethod.compute_cell_size (0.5.23) over the selected accesses: FlashInfer prefill -> the FP8
    # dequant workspace and linear scales, trtllm_mha decode -> native FP4 (on SM120 use_trtllm_gen_native_scale_layout
    # is is_sm100 = False: no second scale layout). Qwen3.5-35B-A3B's 10 full-attention layers, 2 KV heads x 256:
    # 2 x (256 // 2) x 10 x 2 + 2 x (256 // 16) x 10 x 2 + 2 x 256 x 2 x 1 = 5,120 + 640 + 1,024
    _, _, s = sg.parse_args(["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--prefill-attention-backend",
                             "flashinfer", "--decode-attention-backend", "trtllm_mha"], {})
    s = replace(s, engine_version="0.5.23", kv_cache_memory_bytes=10 * GiB, context_length=8192)
    q = lookup("qwen3.5-35b-a3b")
    est = sg.ENGINE.estimate(spec_from_config(q.config, name=q.name), tuple(devices_for_names("RTX PRO 6000")), s)
    assert est.kv_bytes_per_token == 6784
    # the decode backend (trtllm_mha) holds the CUDA-graph state and forces pages of 64
    assert est.engine_view["attention_backend"] == "trtllm_mha"
    assert "flashinfer prefill, trtllm_mha decode" in est.engine_view["attention_backend_reason"]
    assert (est.engine_view["prefill_attention_backend"], est.engine_view["decode_attention_backend"]) == \
        ("flashinfer", "trtllm_mha")
    assert "--prefill-attention-backend" in sg.format_command("m", s)


def test_split_backends():
    # sglang#21601's flags on a B200 (SM100): the FP8 workspace and both scale layouts, 8 KV heads x 128 x 36 layers:
    # FP4_CELL + 8 x 8 x 36 x 2 + 8 x 128 x 2 = 41,472 + 4,608 + 2,048
    _, _, s = sg.parse_args(["--model-path", "m", "--kv-cache-dtype", "nvfp4", "--prefill-attention-backend",
                             "flashinfer", "--decode-attention-backend", "trtllm_mha"], {})
    s = replace(s, engine_version="0.5.23", kv_cache_memory_bytes=10 * GiB, context_length=8192)
    assert sg.ENGINE.estimate(_qwen3_8b(), tuple(devices_for_names("B200")), s).kv_bytes_per_token == 48128
    # up to 0.5.20, and for fp4_mx_block16, a split pair stays refused
    for kv, version in (("nvfp4", "0.5.18"), ("fp4_mx_block16", "0.5.23")):
        with pytest.raises(OomkitError, match="prefill-attention-backend / --decode-attention-backend is not modelled"):
            sg.ENGINE.estimate(_qwen3_8b(), tuple(devices_for_names("B200")),
                               replace(s, kv_cache_dtype=kv, engine_version=version))


def test_cli_refusal_is_one_line(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OOMKIT_CACHE": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "--vram", "80GiB", "--json", "--", "python", "-m",
                        "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "fp4_e2m1"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "invalid choice: 'fp4_e2m1' in SGLang 0.5.23" in r.stderr
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "--vram", "80GiB", "--json", "--", "python", "-m",
                        "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--kv-cache-dtype", "fp4_mx_block16",
                        "--attention-backend", "triton", "--context-length", "8192"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["kv_bytes_per_token"] == FP4_CELL
