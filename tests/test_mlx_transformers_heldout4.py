"""MLX and transformers held out, set 4: public reports no earlier set cites, checked against oomkit.

Each report's lines are kept verbatim below with its URL. Figures and bands are those of the earlier sets: mlx-lm's
`mx.get_peak_memory() / 1e9` against the estimate's total, est / printed in [0.93, 1.05]; transformers'
`torch.cuda.max_memory_allocated()` against the sum of oomkit's torch-allocated bytes, within 5 % either way; a run
that completed or died against oomkit's verdict.

Before -> after this set's rule (oomkit's figure / the report's; a verdict as oomkit's):

    report                                                          before            after
    omlx#1018 Qwen3.6-27B oQ6, pp200000/tg128        54.51 GB       1.038             1.038
    local-ai-registry#43 Qwen3.5-9B 4-bit, M1 Max 32GB, 64,022     ran        fits              fits
                                                     128,022       metal::malloc  fits (strict xfail)  fits
    claude-code-local#31 Qwen3.6-35B-A3B UD 4-bit, p512 -> p1024   +0.517 GB  +0.051 GB         +0.051 GB (xfail)
    transformers llm_tutorial_optimization, OctoCoder 15.5B, A100
        bfloat16, device_map="auto", 20 + 60 tokens   29.026 GiB   0.996             0.996
        load_in_8bit                                   15.219 GiB   0.972             0.972
        load_in_4bit                                    9.544 GiB   0.902             0.991

    4 of 7 agree before, 5 of 7 after.

The rule, from the engine's source (transients.py bnb_4bit_dequant): a bitsandbytes Linear4bit given more than one
input row dequantizes its whole weight (autograd/_functions.py matmul_4bit -> MatMul4Bit.forward,
`F.dequantize_4bit(B, quant_state).to(A.dtype)`), and BitsAndBytesConfig's default bnb_4bit_compute_dtype is float32
(utils/quantization_config.py), which Linear4bit.set_compute_type keeps for a float16 input: OctoCoder's 20-token
prefill holds its 6144 x 24576 MLP weight in float16 and again in float32, 150,994,944 x 6 bytes = 0.84 GiB beside
the 8.60 GiB of 4-bit weights.
"""

from __future__ import annotations

import pytest

from oomkit.engines import mlx
from oomkit.engines import transformers as tfe
from oomkit.engines.transformers.settings import resolve
from oomkit.engines.transformers.transients import bnb_4bit_dequant
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from tests.test_gpt_bigcode import STARCODER

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05


def _spec(slug: str):
    return spec_from_config(dict(catalog.lookup(slug).config), name=slug)


def _mlx(slug: str, mac: str, ram_gib: int, **settings):
    return mlx.ENGINE.estimate(_spec(slug), (Device("MTL0", mac, ram_gib * GiB),), mlx.MlxSettings(**settings))


# ---------------------------------------------------------------------------------------------------------
# mlx-lm peaks and verdicts

URL_OMLX1018 = "https://github.com/jundot/omlx/issues/1018"
LINES_OMLX1018 = (
    "jundot, 2026-04-30: 'I ran pp200000/tg128 on Qwen3.6-27B-oQ6 on both 0.3.6 and 0.3.8 and peak memory came out "
    "the same on my end: / | version | peak mem | pp t/s | tg t/s | TPOT | / | 0.3.6 | 54.51 GB | 199.0 | 9.3 | "
    "108.2 ms | / | 0.3.8 | 54.51 GB | 199.1 | 13.0 | 77.6 ms |'")
NOTE_OMLX1018 = ("oMLX 0.3.6 / 0.3.8 serve through mlx-lm's generation at the default prefill step 2048, as set 3 reads "
                 "omlx#1397 (the same model, a month later); oQ6 taken as 6-bit affine, group 64; the Mac is not named "
                 "(a 64 GB Mac's working set is under the 54.51 GB peak: a 128 GB one assumed)")


def test_omlx_1018_qwen3_6_27b_oq6_200k_peak():
    est = _mlx("qwen3.6-27b", "Apple M4 Max 128GB", 128, program="mlx_lm.server", q_bits=6, prompt_tokens=200_000,
               max_tokens=128, engine_version="0.31.3")
    ratio = est.total_bytes / 1e9 / 54.51
    assert LOW <= ratio <= HIGH, f"{est.total_bytes / 1e9:.2f} GB vs 54.51 GB ({URL_OMLX1018})"
    assert est.devices[0].fits


URL_LAR43 = "https://github.com/0xSero/local-ai-registry/pull/43"
LINES_LAR43 = (
    "0xSero, 2026-09-03: '## Addendum: mlx-lm qwen3.5 ceiling folded (commit e9ca3f23) / "
    "`qwen35-9b-q4-k-m-apple-m1-max-32gb-mlxml-tp1` carries: / - `metadata.ctx_ceiling.max_ok_ctx`: **64022** "
    "(largest passing prompt, re-verified on fresh server) / - `metadata.ctx_ceiling.oom_ctx`: **128022** - hard "
    "`metal::malloc` OOM (22.01GB > 20.10GB max buffer), reproduced 2x / - Full `observed_ladder` (1062->64022 pass, "
    "128022 fail)'")
SETTINGS_LAR43 = dict(program="mlx_lm.server", q_bits=4, engine_version="0.31.3")


def test_local_ai_registry_43_qwen3_5_9b_64k_runs_on_a_32gb_m1_max():
    est = _mlx("qwen3.5-9b", "Apple M1 Max 32GB", 32, prompt_tokens=64_022, **SETTINGS_LAR43)
    assert est.devices[0].fits


@pytest.mark.xfail(strict=True, reason=(
    "local-ai-registry#43: at a 128,022-token prompt mlx-lm fails to allocate one buffer of 22.01 GB (the M1 Max "
    "32GB's maximum buffer 20.10 GB as reported; oomkit's default_max_buffer gives 19.07e9 bytes). oomkit checks only "
    "the weights and the KV caches against the maximum buffer length; its largest modelled transient here, the "
    "unfused SDPA's scores of a 2048-token chunk on the 8 full-attention layers (16 heads x 2048 x 128,022 x 2 bytes "
    "= 8.39 GB), is far under 22.01 GB and no source line read (mlx-lm 0.31.3 qwen3_5.py, server.py, mlx "
    "fast.cpp) gives that buffer, so the run fits at 19.06 GB of a 22.9 GB working set"))
def test_local_ai_registry_43_qwen3_5_9b_128k_dies_on_a_32gb_m1_max():
    est = _mlx("qwen3.5-9b", "Apple M1 Max 32GB", 32, prompt_tokens=128_022, **SETTINGS_LAR43)
    assert not est.fits


URL_CC31 = "https://github.com/nicedreamzapp/claude-code-local/issues/31"
LINES_CC31 = (
    "jhouse1989, 2026-05-15: 'mlx_lm.benchmark --model ~/llm-stack/models/Qwen3.6-35B-A3B-UD-MLX-4bit "
    "--prompt-tokens $p --generation-tokens $g --num-trials 1 / === prompt=512 gen=1000 === / Trial 1:  "
    "prompt_tps=1518.240, generation_tps=101.587, peak_memory=21.408, total_time=10.267 / === prompt=512 gen=6000 "
    "=== / ... peak_memory=21.408 / === prompt=1024 gen=1000 === / Trial 1:  prompt_tps=1777.361, generation_tps="
    "101.416, peak_memory=21.925, total_time=10.524'")


@pytest.mark.xfail(strict=True, reason=(
    "claude-code-local#31: the 512 -> 1024-token prompt rows of mlx_lm.benchmark (one prefill chunk each) differ by "
    "0.517 GB (21.408 -> 21.925 GB); oomkit's differ by 0.051 GB, its working set of a chunk (hidden rows, MoE "
    "gather, the 10 attention layers' scores, in-flight command buffers up to 11 x 50 MiB) growing about a tenth "
    "as fast. The absolute rows are not compared: the UD conversion's per-tensor bits are not in the thread "
    "(lmstudio-bug-tracker#2191 logs 20.15 GiB of baseline for a qwen3.6-35b-a3b-ud-mlx, where oomkit's plain "
    "4-bit weights are 19.51 GB)"))
def test_claude_code_local_31_prefill_growth_per_prompt_token():
    base = dict(q_bits=4, max_tokens=1000, engine_version="0.31.3")
    small = _mlx("qwen3.6-35b-a3b", "Apple M4 Max 128GB", 128, prompt_tokens=512, **base)
    big = _mlx("qwen3.6-35b-a3b", "Apple M4 Max 128GB", 128, prompt_tokens=1024, **base)
    grown = (big.total_bytes - small.total_bytes) / 1e9
    assert 0.5 <= grown / (21.925 - 21.408) <= 1.5, f"{grown:.3f} GB vs 0.517 GB ({URL_CC31})"


# ---------------------------------------------------------------------------------------------------------
# transformers: torch.cuda.max_memory_allocated() in the transformers docs' "Optimizing LLMs for Speed and Memory"

URL_OPT = "https://github.com/huggingface/transformers/blob/main/docs/source/en/llm_tutorial_optimization.md"
LINES_OPT = {
    "bf16": ('model = AutoModelForCausalLM.from_pretrained("bigcode/octocoder", torch_dtype=torch.bfloat16, '
             'device_map="auto", pad_token_id=0) / result = pipe(prompt, max_new_tokens=60) / '
             'bytes_to_giga_bytes(torch.cuda.max_memory_allocated()) / **Output**: 29.0260648727417'),
    "8bit": ('model = AutoModelForCausalLM.from_pretrained("bigcode/octocoder", load_in_8bit=True, pad_token_id=0) / '
             '... **Output**: 15.219234466552734'),
    "4bit": ('model = AutoModelForCausalLM.from_pretrained("bigcode/octocoder", load_in_4bit=True, '
             'low_cpu_mem_usage=True, pad_token_id=0) / ... **Output**: 9.543574333190918'),
}
# bytes_to_giga_bytes divides by 1024 three times: GiB. The prompt is 20 tokens (the guide's own loop prints
# "shape of input_ids torch.Size([1, 21])" after one token). flush() resets the peak before each load.
# OctoCoder is StarCoder fine-tuned: bigcode/starcoder's config.json (tests/test_gpt_bigcode.py STARCODER).
# The guide (2023-09) predates oomkit's oldest modelled transformers, 4.36, which is read instead: the v4 rules it
# needs (float16 under bitsandbytes when no dtype is given, the logits of every prompt token) hold there.
PRINTED_OPT = {"bf16": 29.0260648727417, "8bit": 15.219234466552734, "4bit": 9.543574333190918}
SETTINGS_OPT = {
    "bf16": dict(torch_dtype="bfloat16", device_map="auto"),
    "8bit": dict(load_in_8bit=True),
    "4bit": dict(load_in_4bit=True),
}
A100 = (Device("CUDA0", "NVIDIA A100-SXM4-80GB", 80 * GiB),)
OCTOCODER = spec_from_config(dict(STARCODER), "bigcode/octocoder")


def _octocoder(**settings):
    return tfe.ENGINE.estimate(OCTOCODER, A100, tfe.TransformersSettings(
        prompt_tokens=20, max_new_tokens=60, engine_version="4.36.0", **settings))


@pytest.mark.parametrize("case", list(PRINTED_OPT))
def test_octocoder_peak_allocated(case):
    est = _octocoder(**SETTINGS_OPT[case])
    allocated = sum(est.engine_view["torch_allocated_bytes"].values()) / GiB
    assert abs(allocated / PRINTED_OPT[case] - 1) <= 0.05, f"{case}: {allocated:.3f} vs {PRINTED_OPT[case]} GiB"
    assert est.fits


def test_octocoder_4bit_prefill_holds_the_mlp_weight_in_float16_and_float32():
    """What the 4-bit run holds beyond its weights is the largest Linear4bit's dequantized weight: 6144 x 24576 in
    float16 and its float32 copy (plus the 20 rows' float32 input and output), not its 0.14 GiB of packed nibbles."""
    est = _octocoder(**SETTINGS_OPT["4bit"])
    extra = sum(est.engine_view["torch_allocated_bytes"].values()) - est.weights_bytes
    assert 6144 * 24576 * 6 < extra < 6144 * 24576 * 6 + 64 * (1 << 20)


def test_bnb_4bit_dequant_follows_the_compute_dtype():
    """A bfloat16 input becomes the compute dtype (Linear4bit.set_compute_type): the weight is dequantized in
    bfloat16 and `.to(A.dtype)` copies nothing; float16 keeps the float32 default and its copy; one row (a decode step
    of one sequence) takes gemv_4bit, no dequantized weight."""
    for dtype, per in (("bfloat16", 2), ("float16", 6)):
        s = tfe.TransformersSettings(prompt_tokens=20, max_new_tokens=4, load_in_4bit=True, torch_dtype=dtype,
                                     engine_version="4.36.0")
        r = resolve(OCTOCODER, s)
        attn, mlp = bnb_4bit_dequant(OCTOCODER, s, r, 20)[0]
        up = 4 if per == 6 else 0
        assert mlp == 6144 * 24576 * per + 20 * (6144 + 24576) * up
        assert attn == 6144 * 6400 * per + 20 * (6144 + 6400) * up
        assert bnb_4bit_dequant(OCTOCODER, s, r, 1) == {}
