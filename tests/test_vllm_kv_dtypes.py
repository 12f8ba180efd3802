"""vLLM's --kv-cache-dtype choices by release and the bytes each puts in a KV page (engines/vllm/config.py
CACHE_DTYPES / nvfp4_kv_support, kv.py head_bytes_per_token), read in the 0.9.0-0.34.0 wheels:

| choice | first release | bytes per token, one KV head (K + V) | backend |
|---|---|---|---|
| fp8_inc | 0.10.0 | 2 x head x 1 | |
| bfloat16 | 0.11.0 | 2 x head x 2 | |
| fp8_ds_mla | 0.12.0 | MLA only | FlashMLA-sparse |
| float16 | 0.18.0 | 2 x head x 2 | |
| nvfp4 | 0.20.0 | 2 x (head / 2 + head / 16) | FlashInfer: refused in 0.20.0, SM 10.x only 0.22-0.31, + SM 8/9/12 from 0.32 |
| int8 / fp8_per_token_head | 0.20.0 | 2 x head + 2 x 4 | Triton |
| turboquant_* | 0.20.0 | not modelled (refused) | TurboQuant |
| int4_per_token_head | 0.25.0 | head + 2 x 4 | Triton |
| nvfp4_4over6 | 0.28.0 | as nvfp4 | FlashInfer, SM 10.x |
| nvfp4_ds_mla | 0.30.0 | MLA only | FlashMLA-sparse |
| (sparse MLA fp8) | 0.19.0 on SM 10.x | standard fp8 latent row | FLASHINFER_MLA_SPARSE (FlashMLA-sparse: fp8_ds_mla) |
| ultraquant_4bit / octave_* | 0.32.0 / 0.33.0 | not modelled (refused) | |

Held out: vllm#57475 (tests/fixtures/engine_logs/vllm/deaths/heldout/, main 0.29.1rc1.dev339, Qwen3.8-27B NVFP4 on a
24 GB RTX 5090 Laptop GPU, nvfp4 KV cache, 124,000 tokens, one sequence): "Available KV cache memory: 2.97 GiB",
"GPU KV cache size: 150,745 tokens". oomkit before: refused ('nvfp4' not a choice; with an fp8 cache the same budget
refuses the 124,000-token request: 4.12 GiB needed). After, on the printed budget: 150,745 tokens, as printed.
The budget itself and the verdict (0.98 dies in the capture, 0.97 starts) are not checked: the thread names no
checkpoint, and its weights set the budget. Read as a modelopt NVFP4 Qwen/Qwen3.8-27B (lm_head and the vision tower
left in bfloat16, an assumption), oomkit loads 18.51 GiB and leaves 1.36 GiB at 0.98 (2.97 printed), refusing the
124,000-token request; the checkpoint the user ran is smaller or the gap is elsewhere, not resolved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.engines.vllm import CUDA_DRIVER_RESERVED, ENGINE, VllmSettings
from oomkit.engines.vllm.args import KV_CACHE_DTYPES
from oomkit.engines.vllm.config import CACHE_DTYPES
from oomkit.engines.vllm.kv import head_bytes_per_token, nvfp4_kv_cache_full_dim
from oomkit.errors import OomkitError
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.units import GiB

HELDOUT = (Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" / "deaths" / "heldout"
           / "qwen3.8-27b-nvfp4-rtx5090-laptop-kv-nvfp4-util098-capture-oom-issue57475.json")


def _spec(name: str):
    entry = lookup(name)
    assert entry is not None, name
    return spec_from_config(dict(entry.config), name=entry.name)


def _gpu(name: str, gib: float, cc: tuple[int, int]) -> tuple[Device, ...]:
    return (Device("CUDA0", name, int(gib * GiB), compute_capability=cc),)


B200 = _gpu("NVIDIA B200", 180, (10, 0))
H100 = _gpu("NVIDIA H100 80GB HBM3", 80, (9, 0))
RTX5090 = _gpu("NVIDIA GeForce RTX 5090", 32, (12, 0))


def _run(devices, **kw):
    s = VllmSettings(max_model_len=4096, **kw)
    return ENGINE.estimate(_spec("Qwen/Qwen2.5-0.5B-Instruct"), devices, s)


def _choices(version: str) -> list[str]:
    with pytest.raises(OomkitError) as e:
        _run(B200, engine_version=version, kv_cache_dtype="q4_0")
    listed = str(e.value).split("(choose from ", 1)[1].rstrip(")")
    return [c.strip().strip("'") for c in listed.split(",")]


def test_choices_by_release_as_the_wheels_list_them():
    # config/cache.py CacheDType in each wheel, in the Literal's order
    assert _choices("0.9.0") == ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]
    assert _choices("0.10.2") == ["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"]
    assert _choices("0.11.0") == ["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"]
    assert _choices("0.17.1") == ["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"]
    assert _choices("0.19.1") == ["auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc",
                                  "fp8_ds_mla"]
    assert _choices("0.20.0")[8:] == ["turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
                                      "turboquant_3bit_nc", "int8_per_token_head", "fp8_per_token_head", "nvfp4"]
    assert "int4_per_token_head" in _choices("0.25.0") and "int4_per_token_head" not in _choices("0.24.0")
    assert _choices("0.28.0")[-1] == "nvfp4_4over6"
    assert "nvfp4_ds_mla" in _choices("0.30.0") and "nvfp4_ds_mla" not in _choices("0.29.0")
    assert "ultraquant_4bit" in _choices("0.32.0") and "octave_k3v4" not in _choices("0.32.0")
    assert _choices("0.34.0") == list(KV_CACHE_DTYPES) == [c for c, _ in CACHE_DTYPES]


def test_nvfp4_is_refused_before_020_in_vllms_words():
    with pytest.raises(OomkitError, match=r"^vllm serve: error: argument --kv-cache-dtype: invalid choice: 'nvfp4' "
                                          r"\(choose from 'auto', 'float16', 'bfloat16', 'fp8', 'fp8_e4m3', "
                                          r"'fp8_e5m2', 'fp8_inc', 'fp8_ds_mla'\)$"):
        _run(B200, engine_version="0.19.1", kv_cache_dtype="nvfp4")
    # 0.20.0 lists it, but FlashInferMetadataBuilder.__init__ raises
    with pytest.raises(OomkitError, match=r"^NotImplementedError: nvfp4 KV cache is not yet supported"):
        _run(B200, engine_version="0.20.0", kv_cache_dtype="nvfp4")


def test_nvfp4_by_gpu_and_release():
    # 0.21.0 runs it without a capability check; 0.22-0.24 the builder wants SM 10.x; 0.25-0.31 the selector finds
    # no backend off SM 10.x; 0.32 adds SM 8.x / 9.x / 12.x (plain nvfp4 through FlashAttention 2)
    est = _run(RTX5090, engine_version="0.21.0", kv_cache_dtype="nvfp4")
    assert est.engine_view["kv_cache_tokens"]
    assert any("trtllm-gen FP4 attention kernels exist only for SM 10.x" in w for w in est.warnings)
    assert not any("trtllm-gen" in w for w in _run(B200, engine_version="0.21.0", kv_cache_dtype="nvfp4").warnings)
    with pytest.raises(OomkitError, match=r"^ValueError: --kv-cache-dtype nvfp4 requires sm100f"):
        _run(RTX5090, engine_version="0.24.0", kv_cache_dtype="nvfp4")
    for version in ("0.25.0", "0.29.0", "0.31.0"):
        with pytest.raises(OomkitError, match=r"^No valid attention backend found for cuda with kv_cache_dtype=nvfp4. "
                                              r"Reasons: \{FLASHINFER: \[kv_cache_dtype not supported\]\}"):
            _run(H100, engine_version=version, kv_cache_dtype="nvfp4")
        assert _run(B200, engine_version=version, kv_cache_dtype="nvfp4").engine_view["kv_cache_tokens"]
    for gpu in (H100, RTX5090, B200):
        assert _run(gpu, engine_version="0.32.0", kv_cache_dtype="nvfp4").engine_view["kv_cache_tokens"]
    with pytest.raises(OomkitError, match="kv_cache_dtype not supported"):  # its scale search: SM 10.x only
        _run(RTX5090, engine_version="0.33.0", kv_cache_dtype="nvfp4_4over6")
    assert _run(B200, engine_version="0.33.0", kv_cache_dtype="nvfp4_4over6").engine_view["kv_cache_tokens"]
    # neither FlashInfer nor Triton attention is an MLA backend
    with pytest.raises(OomkitError, match=r"^No valid attention backend found .* kv_cache_dtype=nvfp4: the MLA"):
        ENGINE.estimate(_spec("deepseek-ai/DeepSeek-V2-Lite"), B200,
                        VllmSettings(engine_version="0.33.0", max_model_len=4096, kv_cache_dtype="nvfp4"))


def test_packed_formats_not_modelled_are_refused_not_guessed():
    for name in ("turboquant_k8v4", "octave_k3v4", "ultraquant_4bit"):
        with pytest.raises(OomkitError, match=f"--kv-cache-dtype {name}: .* not modelled"):
            _run(H100, engine_version="0.34.0", kv_cache_dtype=name)


def test_bytes_per_token_by_hand_from_the_source():
    # utils/torch_utils.py nvfp4_kv_cache_full_dim: head // 2 (two fp4 a byte) + head // 16 (an fp8 scale per 16)
    assert nvfp4_kv_cache_full_dim(128) == 72 and nvfp4_kv_cache_full_dim(64) == 36
    assert head_bytes_per_token(128, 128, "nvfp4", 1) == 144  # against 512 in bfloat16
    # triton_attn.py customize_spec: the values plus one float32 scale per K and V side
    assert head_bytes_per_token(128, 128, "int8_per_token_head", 1) == 264
    assert head_bytes_per_token(128, 128, "int4_per_token_head", 1) == 136
    # Qwen2.5-0.5B: 24 layers, 2 KV heads of 64, 16-token blocks
    per_token = {"auto": 24 * 2 * 2 * 64 * 2, "fp8": 24 * 2 * 2 * 64, "nvfp4": 24 * 2 * 2 * (32 + 4),
                 "fp8_per_token_head": 24 * 2 * (2 * 64 + 8), "int4_per_token_head": 24 * 2 * (64 + 8)}
    budget = 8 * GiB
    for kv, b in per_token.items():
        view = _run(B200, engine_version="0.33.0", kv_cache_dtype=kv, kv_cache_memory_bytes=budget).engine_view
        assert view["kv_block_bytes"] == 16 * b, kv
        assert view["kv_cache_tokens"] == budget // (16 * b) * 16, kv  # whole blocks of the budget


def test_per_token_head_runs_on_triton_attention():
    from oomkit.engines.vllm.config import resolve
    from oomkit.engines.vllm.phases import attention_backend
    spec = _spec("Qwen/Qwen2.5-0.5B-Instruct")
    for kv, backend in (("int8_per_token_head", "TRITON_ATTN"), ("nvfp4", "FLASHINFER")):
        s = VllmSettings(engine_version="0.33.0", max_model_len=4096, kv_cache_dtype=kv)
        assert attention_backend(s, resolve(spec, B200, s), spec) == backend


def test_heldout_issue57475_kv_tokens_on_its_printed_budget():
    fx = json.loads(HELDOUT.read_text(encoding="utf-8"))
    assert fx["source"] == "https://github.com/vllm-project/vllm/issues/57475"
    printed, st = fx["printed"], fx["settings"]
    total = int(printed["total_gpu_memory_gib"] * GiB) + CUDA_DRIVER_RESERVED
    dev = (Device("CUDA0", fx["gpus"][0]["name"], total, compute_capability=(12, 0)),)

    def tokens(budget_gib: float) -> int:
        s = VllmSettings(engine_version="0.32.0", kv_cache_memory_bytes=int(budget_gib * GiB), **st)
        return ENGINE.estimate(_spec("Qwen/Qwen3.8-27B"), dev, s).engine_view["kv_cache_tokens"]

    # "Available KV cache memory: 2.97 GiB" is rounded to 0.01 GiB: the printed count lies within the counts of the
    # budgets it stands for, and 2.97 GiB itself gives it exactly
    assert tokens(2.965) <= printed["kv_cache_tokens"] <= tokens(2.975)
    assert tokens(2.97) == printed["kv_cache_tokens"]


# Sparse MLA (DeepSeek V3.2, GLM-5): the latent row by the sparse backend vLLM picks (config.py sparse_mla_kv_dtype).
# DeepSeek-V3.2 at TP8: 61 layers of (latent + the indexer's 128 fp8 + 4 B scale = 132) on each of the 8 ranks.


@pytest.mark.parametrize("gpu,version,kv,extra,latent", [
    ("8x H200", "0.30.0", "fp8", (), 656),  # SM 9.x: FLASHMLA_SPARSE, fp8_ds_mla (512 fp8 + 4 x 4 scales + 64 x 2 rope)
    ("8x B200", "0.18.1", "fp8", (), 656),  # SM 10.x before FlashInfer was preferred for fp8
    ("8x B200", "0.19.0", "fp8", (), 576),  # FLASHINFER_MLA_SPARSE: the standard fp8 row, (512 + 64) x 1
    ("8x B200", "0.30.0", "fp8", (), 576),
    ("8x B200", "0.30.0", "fp8", ("--attention-backend", "FLASHMLA_SPARSE"), 656),
    ("8x B200", "0.30.0", "auto", (), 1152),  # bf16 (512 + 64) x 2
    ("8x RTX PRO 6000", "0.30.0", "auto", (), 656)])  # SM 12.x: FLASHINFER_MLA_SPARSE_SM120 makes auto fp8_ds_mla
def test_sparse_mla_latent_row_by_backend(gpu, version, kv, extra, latent):
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", gpu, "--json", "--engine-version", version,
                        "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "-tp", "8", "--kv-cache-dtype", kv,
                        "--max-model-len", "32768", *extra], capture_output=True, text=True, timeout=180)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert json.loads(p.stdout)["kv_bytes_per_token"] == 8 * 61 * (latent + 132)


@pytest.mark.parametrize("gpu,version,kv,latent", [
    ("8x B200", "0.31.0", "auto", 1152), ("8x B200", "0.32.0", "auto", 576), ("8x B200", "0.34.0", "auto", 576),
    ("8x H200", "0.34.0", "auto", 1152), ("8x B200", "0.34.0", "bfloat16", 1152)])
def test_glm5_auto_is_fp8_on_sm100_from_032(gpu, version, kv, latent):
    """models/config.py GlmMoeDsaForCausalLM.verify_and_update_config (0.32+): "auto" becomes fp8_e4m3 on SM 10.x,
    which FLASHINFER_MLA_SPARSE keeps as the standard fp8 row (512 + 64 B); GLM-5's 78 layers, indexer 132 B each."""
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", gpu, "--json", "--engine-version", version,
                        "--", "vllm", "serve", "zai-org/GLM-5", "-tp", "8", "--kv-cache-dtype", kv,
                        "--max-model-len", "32768"], capture_output=True, text=True, timeout=180)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert json.loads(p.stdout)["kv_bytes_per_token"] == 8 * 78 * (latent + 132)


def test_diagnose_reads_glm5_fp8_default(tmp_path):
    """"Using fp8 kv-cache for GlmMoeDsaForCausalLM on SM10x" (0.32+) is the cache in force after kv_cache_dtype=auto:
    no --kv-cache-dtype fp8 fix."""
    log = tmp_path / "glm5.log"
    log.write_text(
        "INFO 06-03 10:00:01 [core.py:1] Initializing a V1 LLM engine (v0.32.0) with config: model='zai-org/GLM-5', "
        "max_seq_len=202752, tensor_parallel_size=8, kv_cache_dtype=auto\n"
        "INFO 06-03 10:00:02 [config.py:55] Using fp8 kv-cache for GlmMoeDsaForCausalLM on SM10x\n"
        "(EngineCore pid=1) ValueError: To serve at least one request with the model's max seq len (202752), (20.00 GiB "
        "KV cache is needed, which is larger than the available KV cache memory (5.44 GiB). Based on the available "
        "memory, the estimated maximum model length is 55000. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.\n")
    p = subprocess.run([sys.executable, "-m", "oomkit", "diagnose", "--json", str(log)], capture_output=True,
                       text=True, timeout=120)
    d = json.loads(p.stdout)
    assert d["settings"]["kv_cache_dtype"] == "fp8"
    assert not any("--kv-cache-dtype" in (f.get("flags") or ()) for f in d["fixes"]), d["fixes"]


@pytest.mark.parametrize("gpu,version,runs", [
    ("8x A100 80GB", "0.30.0", False), ("8x L40S", "0.20.0", False), ("8x RTX PRO 6000", "0.23.0", False),
    ("8x RTX PRO 6000", "0.24.0", True), ("8x H100", "0.30.0", True), ("8x B200", "0.20.0", True)])
def test_sparse_mla_gpus(gpu, version, runs):
    """The sparse-MLA backends' supports_compute_capability: FLASHMLA_SPARSE 9.x / 10.x, FLASHINFER_MLA_SPARSE 10.x,
    FLASHINFER_MLA_SPARSE_SM120 12.x from 0.24; no backend on SM 8.x, nor on SM 12.x before 0.24."""
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", gpu, "--json", "--engine-version", version,
                        "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "-tp", "8", "--max-model-len", "32768"],
                       capture_output=True, text=True, timeout=180)
    if runs:
        assert p.returncode in (0, 1), p.stdout + p.stderr
    else:
        assert p.returncode == 2 and "No valid attention backend found for cuda" in p.stderr, p.stdout + p.stderr


def test_diagnose_reads_the_sparse_mla_cache_format_note(tmp_path):
    """0.24+ mla_attention.py: "Using fp8_ds_mla KV cache format for FLASHINFER_MLA_SPARSE_SM120 backend." after
    kv_cache_dtype=auto is the cache in force (DeepSeek V3.2 on SM 12.x): no --kv-cache-dtype fp8 fix."""
    log = tmp_path / "v32.log"
    log.write_text(
        "INFO 06-03 10:00:01 [core.py:1] Initializing a V1 LLM engine (v0.30.0) with config: "
        "model='deepseek-ai/DeepSeek-V3.2', max_seq_len=163840, tensor_parallel_size=8, kv_cache_dtype=auto\n"
        "(Worker_TP0 pid=1) INFO 06-03 10:00:05 [mla_attention.py:441] Using fp8_ds_mla KV cache format for "
        "FLASHINFER_MLA_SPARSE_SM120 backend.\n"
        "(EngineCore pid=1) ValueError: To serve at least one request with the model's max seq len (163840), (20.00 GiB "
        "KV cache is needed, which is larger than the available KV cache memory (5.44 GiB). Based on the available "
        "memory, the estimated maximum model length is 44000. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.\n")
    p = subprocess.run([sys.executable, "-m", "oomkit", "diagnose", "--json", str(log)], capture_output=True,
                       text=True, timeout=120)
    d = json.loads(p.stdout)
    assert d["settings"]["kv_cache_dtype"] == "fp8_ds_mla"
    assert not any("--kv-cache-dtype" in (f.get("flags") or ()) for f in d["fixes"]), d["fixes"]


@pytest.mark.parametrize("gpu,kv,extra,latent", [
    ("8x B200", "fp8", (), 576), ("8x H200", "fp8", (), 656), ("8x B200", "auto", (), 1152),
    ("8x B200", "auto", ("--attention-backend", "FLASHINFER_MLA_SPARSE"), 1152),
    ("8x B200", "fp8", ("--attention-backend", "FLASHINFER_MLA_SPARSE"), 576),
    ("8x RTX PRO 6000", "auto", (), 656)])
@pytest.mark.parametrize("version", ["0.19.0", "0.30.0", "0.33.0"])
def test_sparse_mla_block_size_is_the_indexer_cache_s(gpu, kv, extra, latent, version):
    """platforms/interface.py update_block_size_for_backend (0.18+): the preferred size of the first attention
    layer's backend (0.18-0.30), from 0.31 the smallest size every backend takes. DeepSeek-V3.2's first layer is the
    indexer's key cache (models/deepseek_v2.py: DeepseekV2MLAAttention builds its Indexer, and the
    DeepseekV32IndexerCache in it, before the MLA layer), whose DEEPSEEK_V32_INDEXER backend takes 64 only
    (indexer.py get_supported_kernel_block_sizes): 64-token blocks whichever sparse MLA backend runs, FLASHINFER_MLA_SPARSE
    ([32, 64]: the SM 10.x pick for an fp8 cache, and for bf16 at <= 16 heads a rank as here at TP8, 128 / 8),
    FLASH_ATTN_MLA_SPARSE_FA4 (0.33+, bf16 at <= 16 heads, MultipleOf(64)), FLASHMLA_SPARSE [64] or
    FLASHINFER_MLA_SPARSE_SM120 [64, 256]. A block is 64 x 61 x (latent + the indexer's 132) on every rank: the
    standard fp8 row (576) on FLASHINFER_MLA_SPARSE, fp8_ds_mla (656) on FLASHMLA_SPARSE and SM120, bf16 1152."""
    if gpu == "8x RTX PRO 6000" and version == "0.19.0":
        pytest.skip("no SM 12.x sparse MLA backend before 0.24")
    p = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "--gpu", gpu, "--json", "--engine-version",
                        version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "-tp", "8", "--kv-cache-dtype",
                        kv, "--max-model-len", "32768", *extra], capture_output=True, text=True, timeout=180)
    d = json.loads(p.stdout)
    ev = d.get("engine_view") or d["estimate"]["engine_view"]
    assert (ev["block_size"], ev["kv_block_bytes"]) == (64, 64 * 61 * (latent + 132))


@pytest.mark.parametrize("version,block_flag,block", [("0.30.0", "32", 32), ("0.17.1", "32", 64)])
def test_sparse_mla_block_size_flag(version, block_flag, block):
    """A --block-size is kept from 0.18 (update_block_size_for_backend returns on user_specified_block_size); up to
    0.17 platforms/cuda.py check_and_update_config forces FlashMLA-sparse's 64 ("Forcing kv cache block size to 64
    for FlashMLASparse backend.") unless FLASHINFER_MLA_SPARSE is named (then 32 or 64 stay)."""
    p = subprocess.run([sys.executable, "-m", "oomkit", "estimate", "--gpu", "8x H200", "--json", "--engine-version",
                        version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3.2", "-tp", "8", "--block-size",
                        block_flag, "--max-model-len", "32768"], capture_output=True, text=True, timeout=180)
    d = json.loads(p.stdout)
    ev = d.get("engine_view") or d["estimate"]["engine_view"]
    assert ev["block_size"] == block
