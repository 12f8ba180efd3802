"""MLX held out, set 5: public reports no earlier set cites, checked against oomkit.

Each report's lines are kept verbatim below with its URL. Figures and bands are those of the earlier sets: mlx-lm's
peak memory against the estimate's total, est / printed in [0.93, 1.05]; a run that completed or died against
oomkit's verdict. No transformers / accelerate report with a printed figure was found that an earlier set does not
cite (the threads searched, transformers#28651, #30536, #37920 and bitsandbytes#1141, show their figures only in
images or in parts of the thread not stored).

Before -> after this set's rule (oomkit's figure / the report's; a verdict as oomkit's):

    report                                                              before          after
    mlx#828 Mistral 7B, 1k generated tokens, fp16    13.659 GiB (pre)   0.9997          0.9997
                                                     13.627 GiB (post)  1.002           1.002
                                             4-bit    4.112 GiB (pre)   0.963           1.006
                                                      4.108 GiB (post)  0.964           1.007
    omlx#1789 Gemma 4 E4B 8-bit, oMLX 0.4.0  pp1024    8.95 GB           0.966           0.966
                                             pp4096    9.05 GB           0.984           0.984
                                             pp8192    9.13 GB           1.000           1.000
    omlx#1303 Qwen3.6-35B-A3B oQ4, 8k                 21.05 GB           0.995           0.995
              Qwen3.6-27B OptiQ-4bit, 8k              19.15 GB           0.907           0.907 (strict xfail)
    Rapid-MLX#1634 Qwen3.5-35B-A3B 4-bit 8K, M2 Pro 32GB   ran           fits (20.83)    fits (20.83)
    mlx-lm#74 Llama 4 Scout text-4bit, "about 60GB"   64 GB Mac no       weights 60.62 GB, does not fit
                                                      96 / 128 GB fit    fits / fits     (same)

    8 of 9 figures in the band before and after (the two 4-bit rows of mlx#828 stay in it, from 0.963 / 0.964 to
    1.006 / 1.007); the 4 verdicts agree before and after.

The rule, from the engine's source (settings.py ERAS "quantize_embeddings", weights.py _float_before_0_10): until
mlx-lm 0.10.0 utils.py quantize_model ran nn.QuantizedLinear.quantize_module with linear_class_predicate
(`isinstance(m, nn.Linear) and m.weight.shape[0] != 8`), so `mlx_lm.convert -q` quantized Linear layers only and
embeddings stayed in float16; 0.10.0 switched to nn.quantize(model, q_group_size, q_bits), which takes Embedding
too (read in the 0.1.0, 0.2.0, 0.4.0, 0.8.0, 0.9.0 and 0.10.0 wheels). Mistral 7B's 32000 x 4096 token table is
262.1 MB in float16 against 73.7 MB at 4 bits, group 64: 0.175 GiB more, against the 4-bit rows' 0.152 GiB gap.
"""

from __future__ import annotations

import pytest

from oomkit.engines import mlx
from oomkit.engines.mlx.settings import resolve
from oomkit.engines.mlx.weights import tensor_bytes
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05


def _spec(slug: str):
    return spec_from_config(dict(catalog.lookup(slug).config), name=slug)


def _mlx(slug: str, mac: str, ram_gib: int, **settings):
    return mlx.ENGINE.estimate(_spec(slug), (Device("MTL0", mac, ram_gib * GiB),), mlx.MlxSettings(**settings))


# ---------------------------------------------------------------------------------------------------------
# mlx#828: fp16 and 4-bit Mistral 7B before mlx-lm quantized embeddings

URL_828 = "https://github.com/ml-explore/mlx/pull/828"
LINES_828 = (
    "awni, 2024-03-13: 'Generating 1k tokens with Mistral 7B (fp16 and 4bit) / # Pre / Dtype | Prompt | Generation "
    "| Memory (GB) / --- | --- | --- | --- / fp16 | 494.712 | 26.333 | 13.659 / q4 | 428.942 | 69.636 | 4.112 / "
    "# Post / MLX version: `0.6.0.dev20240313+5632c61b` / Dtype | Prompt | Generation | Memory (GB) / --- | --- | "
    "--- | --- / fp16 | 495.820 | 28.868 | 13.627 / q4 | 430.477 | 72.699 | 4.108'")
NOTE_828 = ("the 'GB' are GiB: 13.659e9 bytes would be under the 14.48e9 bytes of Mistral 7B's float16 weights "
            "alone (7,241,732,096 x 2). The script is not in the thread (mlx-lm printed no peak memory until after "
            "0.12.0); mlx-lm 0.2.0, released the same day, is read for the generation and for the 4-bit "
            "conversion (every mlx-lm up to 0.9.0 quantizes the same layers). The prompt is not given: 10 tokens "
            "taken, and 1,000 generated")
PRINTED_828 = {("fp16", "pre"): 13.659, ("fp16", "post"): 13.627, ("q4", "pre"): 4.112, ("q4", "post"): 4.108}
Q_BITS_828 = {"fp16": None, "q4": 4}


def _mistral(dtype: str, version: str = "0.2.0"):
    return _mlx("mistral-7b-instruct-v0.2", "Apple M2 Ultra 192GB", 192, q_bits=Q_BITS_828[dtype],
                prompt_tokens=10, max_tokens=1000, engine_version=version)


@pytest.mark.parametrize("dtype,when", list(PRINTED_828))
def test_mlx_828_mistral_7b_peak(dtype, when):
    printed = PRINTED_828[(dtype, when)]
    ratio = _mistral(dtype).total_bytes / GiB / printed
    assert LOW <= ratio <= HIGH, f"{dtype} {when}: {ratio * printed:.3f} vs {printed} GiB ({URL_828})"


def test_embeddings_stay_float16_before_mlx_lm_0_10():
    """The 4-bit rows' difference between mlx-lm 0.9.0 and 0.10.0 is the token table alone: 32000 x 4096 in float16
    against its 4-bit, group 64 form (uint32 words plus a float16 scale and bias per 64 values)."""
    table = 32000 * 4096
    quantized = 32000 * (4096 // 2 + 2 * (4096 // 64) * 2)
    assert _mistral("q4", "0.9.0").weights_bytes - _mistral("q4", "0.10.0").weights_bytes == 2 * table - quantized
    assert _mistral("fp16", "0.9.0").weights_bytes == _mistral("fp16", "0.10.0").weights_bytes


def test_mixtral_gate_stays_float_before_mlx_lm_0_10():
    """linear_class_predicate's `m.weight.shape[0] != 8`: Mixtral's router (8 output rows) is left a float Linear by
    -q before 0.10.0; from 0.10.0 nn.quantize takes it (oomkit's 8 bits, the later quant_predicate's)."""
    spec = _spec("mixtral-8x7b-instruct-v0.1")
    for version, quantized in (("0.9.0", False), ("0.10.0", True)):
        s = mlx.MlxSettings(q_bits=4, prompt_tokens=10, max_tokens=10, engine_version=version)
        sizes = {t.name: b for t, b in tensor_bytes(spec, s, resolve(spec, s))}
        gate = sizes["blk.0.ffn_gate_inp.weight"]
        assert (gate < 4096 * 8 * 2) is quantized, version
        assert sizes["blk.0.attn_q.weight"] < 4096 * 4096


# ---------------------------------------------------------------------------------------------------------
# oMLX's benchmark (pp N / tg 128, mlx-lm's generation at its default prefill step 2048, as set 3 reads omlx#1397)

URL_1789 = "https://github.com/jundot/omlx/issues/1789"
LINES_1789 = (
    "Skjz, 2026-06-10: 'Before v0.4.0, running the gemma-4-E4B-it-MLX-8bit model performed excellently ... / v0.4.0 "
    "benchmark: / Benchmark Model: gemma-4-E4B-it-MLX-8bit / Test TTFT(ms) TPOT(ms) pp TPS tg TPS E2E(s) Throughput "
    "Peak Mem / pp1024/tg128 161.6 12.51 6336.4 tok/s 80.6 tok/s 1.750 658.3 tok/s 8.95 GB / pp4096/tg128 598.6 "
    "12.86 6843.1 tok/s 78.4 tok/s 2.232 1892.3 tok/s 9.05 GB / pp8192/tg128 1177.1 13.44 6959.4 tok/s 75.0 tok/s "
    "2.884 2884.7 tok/s 9.13 GB'")
NOTE_1789 = ("8-bit affine, group 64 taken; the Mac is not named (a 128 GB one assumed: the ratio does not depend on "
             "it). Not asserted: the rows grow 0.18 GB from pp1024 to pp8192 where oomkit's grow 0.48 GB (0.12 GB "
             "of KV on the 4 full-attention layers with their own cache, the rest the unfused SDPA's scores of the "
             "512-wide global heads), so oMLX's prefill may take smaller chunks than the 2048 assumed")
PRINTED_1789 = {1024: 8.95, 4096: 9.05, 8192: 9.13}


@pytest.mark.parametrize("prompt", list(PRINTED_1789))
def test_omlx_1789_gemma_4_e4b_8bit_peak(prompt):
    est = _mlx("gemma-4-e4b-it", "Apple M4 Max 128GB", 128, program="mlx_lm.server", q_bits=8,
               prompt_tokens=prompt, max_tokens=128, engine_version="0.31.3")
    ratio = est.total_bytes / 1e9 / PRINTED_1789[prompt]
    assert LOW <= ratio <= HIGH, f"pp{prompt}: {est.total_bytes / 1e9:.2f} vs {PRINTED_1789[prompt]} GB ({URL_1789})"


URL_1303 = "https://github.com/jundot/omlx/issues/1303"
LINES_1303 = (
    "beamivalice, 2026-05-19: 'I run Jundot/Qwen3.6-35B-A3B-oQ4-fp16-mtp - without mtp on to try turboquant kv "
    "cache. Then I hit the benchmark, 8k context. With 4 bits turboquant and without (fp16) - both yield 21.05 GB "
    "peak memory. Which shouldn't be happening. / Then I try other model Qwen3.6-27B-OptiQ-4bits from mlx community. "
    "fp16 - 19.15GB, 4 bits tq - 19.15GB.' / sdiamanEXUS, 2026-06-06: '### 1. TurboQuant only quantizes at "
    "*decode* — prefill runs in fp16'")
NOTE_1303 = ("oQ4 taken as 4-bit affine, group 64, as set 4 takes oQ6 (omlx#1018); the MTP block is dropped by "
             "qwen3_5's sanitize; '8k' read as pp8192/tg128; the Mac is not named (the ratio does not depend on it)")
URL_OPTIQ = "https://github.com/SharpAI/SwiftLM/issues/118"
LINES_OPTIQ = (
    "solderzzc, 2026-08-06: '`config.json` describes mixed-precision quantization — 498 per-layer entries alongside "
    "the global defaults: / \"quantization\": { \"group_size\": 64, \"bits\": 4, \"mode\": \"affine\", "
    "\"language_model.model.embed_tokens\": { \"bits\": 8, \"group_size\": 64 }, "
    "\"language_model.model.layers.0.linear_attn.in_proj_qkv\": { \"bits\": 8, \"group_size\": 64 }, ...'")


def _omlx_1303(slug: str):
    return _mlx(slug, "Apple M4 Max 64GB", 64, program="mlx_lm.server", q_bits=4, prompt_tokens=8192,
                max_tokens=128, engine_version="0.31.3")


def test_omlx_1303_qwen3_6_35b_a3b_oq4_8k_peak():
    est = _omlx_1303("qwen3.6-35b-a3b")
    ratio = est.total_bytes / 1e9 / 21.05
    assert LOW <= ratio <= HIGH, f"{est.total_bytes / 1e9:.2f} vs 21.05 GB ({URL_1303})"


@pytest.mark.xfail(strict=True, reason=(
    "omlx#1303: Qwen3.6-27B-OptiQ-4bit peaks at 19.15 GB at 8k; oomkit gives 17.37 GB (0.907) for plain 4-bit, "
    "group 64 (15.13 GB of weights). OptiQ is a mixed-precision conversion whose config lists 498 per-layer "
    "entries, the token table and the linear-attention in_proj_qkv among those at 8 bits (SwiftLM#118); the full "
    "list is not in either thread, so the weights cannot be counted and the 1.78 GB gap is not attributed"))
def test_omlx_1303_qwen3_6_27b_optiq_8k_peak():
    est = _omlx_1303("qwen3.6-27b")
    ratio = est.total_bytes / 1e9 / 19.15
    assert LOW <= ratio <= HIGH, f"{est.total_bytes / 1e9:.2f} vs 19.15 GB ({URL_1303})"


# ---------------------------------------------------------------------------------------------------------
# Verdicts

URL_RAPID1634 = "https://github.com/raullenchai/Rapid-MLX/issues/1634"
LINES_RAPID1634 = (
    "raullenchai, 2026-08-07: '- Host: Mac14,12 (32 GB) / - macOS: 26.5.2 (25F84) / - Rapid-MLX: 0.12.5 from main "
    "`1bc6244be3d7e49c7f91a195175e5167244a0e1f` / - MLX: 0.31.2 / - mlx-lm: 0.31.3 / - Model: `qwen3.5-35b-4bit` / "
    "- Command path: `python -m vllm_mlx.cli serve` / ... The probe loads the model, generates 96 tokens from a "
    "short prompt, then sends an ~8K-token prompt and reads macOS `phys_footprint` plus `vm.swapusage`. / - "
    "Idle/load footprint: 19.0 GB / - 8K peak footprint: 22.0 GB / ... / - New swap during this model run: "
    "**988.8 MB**'")
NOTE_RAPID1634 = ("Rapid-MLX's alias qwen3.5-35b-4bit pulls mlx-community/Qwen3.5-35B-A3B-4bit (its GUI tests: "
                  "`pullModel(alias: \"qwen3.5-35b-4bit\", hfRepo: \"mlx-community/Qwen3.5-35B-A3B-4bit\")`); "
                  "modelled as mlx_lm.server, as set 3 models Rapid-MLX#1636")


def test_rapid_mlx_1634_qwen3_5_35b_a3b_8k_runs_on_a_32gb_m2_pro():
    """The 8K probe completed (with 0.99 GB of new swap): oomkit fits it, 20.83 GB of the 26.80 GB working set. The
    thread's 22.0 GB is the process footprint (phys_footprint: Metal's free buffer cache and the Python process
    included), not mx.get_peak_memory(), so only the verdict and that bound are compared."""
    est = _mlx("qwen3.5-35b-a3b", "Apple M2 Pro 32GB", 32, program="mlx_lm.server", q_bits=4, prompt_tokens=8192,
               max_tokens=96, engine_version="0.31.3")
    assert est.devices[0].fits and est.total_bytes < 22.0e9


URL_74 = "https://github.com/ml-explore/mlx-lm/pull/74"
LINES_74 = (
    "awni, 2025-04-05: '```mlx_lm.convert --hf-path meta-llama/Llama-4-Scout-17B-16E-Instruct -q --upload-repo "
    "mlx-community/Llama-4-Scout-17B-16E-Instruct-text-4bit``` / To run: / ```mlx_lm.generate --model "
    "<repo_or_path> --prompt \"Write a story about Einstein\" -m 2048```' / awni, 2025-04-06: 'The model needs "
    "about 60GB in 4bit. So a 64GB machine is not quite enough. Should fit easily in 96 or 128.'")
NOTE_74 = ("mlx-lm 0.22.4 (2025-04-06) the first release with llama4.py; 'Write a story about Einstein' taken as 20 "
           "tokens with the chat template; the Macs as the comment names them, at macOS's default working set")


@pytest.mark.parametrize("mac,ram,fits", [("Apple M4 Max 64GB", 64, False), ("Apple M2 Max 96GB", 96, True),
                                          ("Apple M4 Max 128GB", 128, True)])
def test_mlx_lm_74_llama_4_scout_text_4bit(mac, ram, fits):
    est = _mlx("llama-4-scout-17b-16e-instruct", mac, ram, q_bits=4, prompt_tokens=20, max_tokens=2048,
               engine_version="0.22.4")
    assert abs(est.weights_bytes / 60e9 - 1) <= 0.05, f"{est.weights_bytes / 1e9:.2f} GB vs about 60 GB ({URL_74})"
    assert est.devices[0].fits is fits, f"{mac}: {est.total_bytes / 1e9:.2f} GB ({URL_74})"
