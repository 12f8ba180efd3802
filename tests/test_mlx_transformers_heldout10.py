"""MLX and transformers held out, set 10: public figures no earlier set asserts, checked against oomkit.

A. mlx-lm PR #780 ("Update glm4_moe_lite To Store KV Latent in Cache", N8python, 2026-01-20): `mlx_lm.benchmark` of
   GLM-4.7-Flash 6-bit on an M3 Max, old (the per-head cache of v0.30.4) and new (the latent cache, first in v0.30.5)
   peak_memory at 256, 8192 and 16384 prompt tokens with 256 generated. Nothing in tests/ cites it.
B. mlx-lm PR #839 ("DSV3 MLA", awni, 2026-02-03): DeepSeek-V3 4-bit on an M3 Ultra 512GB, the "memory GB pre" column
   (v0.30.5, per-head cache) at 4096, 8192 and 16384 tokens. tests/test_mlx_heldout.py asserts the thread's "post"
   column only; the pre column is asserted here for the first time.
C. mlx-examples#1281 (2025-04-04): `mlx_lm.generate` of Qwen2.5-72B-Instruct-6bit on an M4 Max, 34 prompt and 642
   generated tokens, Peak memory 59.349 GB. Nothing in tests/ cites it.
D. mlx-lm#790 (2026-01-21): GLM-4.7-Flash 4-bit on "32GB hosts" holds "about 10000 tokens of context" (v0.30.4). The
   largest context of oomkit's check on a 32 GB M2 Max: 43,264 before (4.3x), 8,704 after (0.87). Nothing in tests/
   cites it.

The band is the earlier sets' for mlx-lm: oomkit's total / the printed peak in [0.93, 1.05].

    figure                                        printed GB   before         after
    GLM-4.7-Flash 6bit  v0.30.4  256 + 256         24.863      24.954 1.004   25.424 1.023
                                 8192 + 256        34.163      26.817 0.785   33.996 0.995
                                 16384 + 256       43.574      28.612 0.657   42.737 0.981
                        v0.30.5  256 + 256         24.636      24.954 1.013   24.954 1.013
                                 8192 + 256        27.073      26.817 0.991   26.817 0.991
                                 16384 + 256       29.287      28.612 0.977   28.612 0.977
    DeepSeek-V3 4bit    v0.30.5  4096 + 128       401.668     383.081 0.954  402.716 1.003
                                 8192 + 128       424.215     387.667 0.914  425.675 1.003
                                 16384 + 128      469.906     396.837 0.845  471.592 1.004
    Qwen2.5-72B 6bit    0.22.3   34 + 642          59.349      59.919 1.010   59.919 1.010

    6 of 10 figures in the band before, 10 of 10 after; with #790's context, 6 of 11 before, 11 of 11 after. (The #1281 command as typed, `oomkit estimate --gpu "M4 Max
    128GB" --engine-version 0.22.3 -- mlx_lm.generate ... -m 1000`, bounds the prompt at 283 tokens and takes the
    1000 tokens asked: 56.12 GiB = 60.26 GB, 1.015.)

The rule (engines/mlx/kv.py MLA_LATENT_FROM, latent_cache): oomkit cached every MLA model's latent (kv_lora_rank + the
rope part, one head) in every mlx-lm release. Read in ml-explore/mlx-lm's history, the model files cache the
decompressed per-head keys and values (`keys, values = cache.update_and_fetch(mx.concatenate([k_nope, k_pe],
axis=-1), values)`) until the latent change of each: glm4_moe_lite PR #780 (14237020, v0.30.5), deepseek_v3 and
deepseek_v32 PR #839 (f18526f8, v0.30.6), kimi_linear PR #853 and longcat_flash PR #868 (v0.30.7); deepseek_v2.py,
minicpm3.py and youtu_llm.py cache the heads in every release to main (d78bf58e, 2026-08-22). GLM-4.7-Flash's
per-head cache is 47 layers x 20 heads x (256 + 256) x 2 bytes = 0.96 MB a token against 54 KB for the latent, the
15 GB the old column holds above the new at 16384 tokens. Before the latent the decompressed heads run the model's
plain scaled_dot_product_attention (the unfused fallback for GLM's 256-wide and DeepSeek's 192/128 heads: one score
array and the causal mask, mlx/layout.py _scores_bytes), not MLA's two score arrays.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from oomkit.engines import mlx
from oomkit.engines.mlx.kv import MLA_LATENT_FROM, MLA_PER_HEAD, latent_cache
from oomkit.engines.mlx.settings import parse_version
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05
M3_MAX = (Device("MTL0", "Apple M3 Max 128GB", 128 * GiB),)
M3_ULTRA = (Device("MTL0", "Apple M3 Ultra 512GB", 512 * GiB),)


def _spec(slug: str):
    return spec_from_config(dict(catalog.lookup(slug).config), name=slug)


def _total_gb(slug: str, devices, bits: int, prompt: int, generated: int, version: str) -> float:
    est = mlx.ENGINE.estimate(_spec(slug), devices, mlx.MlxSettings(
        q_bits=bits, prompt_tokens=prompt, max_tokens=generated, engine_version=version))
    return est.total_bytes / 1e9


# ---------------------------------------------------------------------------------------------------------
# A. mlx-lm PR #780: "Tested w/ 6-bit version of model ... Benches below (M3 Max, Low Power Mode)". The PR was merged
# on 2026-01-20 and is first in v0.30.5 (v0.30.4, 2026-01-19, is the first release with glm4_moe_lite, PR #776):
# the "Old" columns are v0.30.4's model file, the "New" ones v0.30.5's. mlx_lm.benchmark (benchmark.py) runs
# stream_generate on random prompt tokens and prints the last trial's peak_memory (mx.get_peak_memory() / 1e9).
URL_780 = "https://github.com/ml-explore/mlx-lm/pull/780"
TABLE_780 = """
| Prompt/Gen | Trials | New prompt_tps | New generation_tps | New peak_memory (GB) | Old prompt_tps | Old generation_tps | Old peak_memory (GB) |
| --- | --- | --- | --- | --- | --- | --- | --- |
| 256/256 | 5 | 417.558 | 34.120 | 24.636 | 447.922 | 35.137 | 24.863 |
| 8192/256 | 1 | 339.855 | 25.228 | 27.073 | 430.655 | 14.470 | 34.163 |
| 16384/256 | 1 | 208.088 | 20.098 | 29.287 | 291.520 | 8.626 | 43.574 |
"""  # noqa: E501
LINE_780_SIZE = ("Most important: Peak memory at 16384 prompt is down from 43.574 GB to 29.287 GB. Given model size is "
                 "22.68GB, Peak went from 20.89400 GB over model size to 6.607 GB over model size.")
GLM = "zai-org/GLM-4.7-Flash"


def _rows_780():
    out = []
    for line in TABLE_780.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        prompt, gen = (int(x) for x in cells[0].split("/"))
        out.append(pytest.param(prompt, gen, "0.30.5", float(cells[4]), id=f"new-{prompt}"))
        out.append(pytest.param(prompt, gen, "0.30.4", float(cells[7]), id=f"old-{prompt}"))
    return out


def test_780_rows_as_printed():
    rows = [p.values for p in _rows_780()]
    assert len(rows) == 6
    assert (16384, 256, "0.30.4", 43.574) in rows and (16384, 256, "0.30.5", 29.287) in rows
    assert "43.574 GB to 29.287 GB" in LINE_780_SIZE


@pytest.mark.parametrize("prompt,generated,version,printed", _rows_780())
def test_780_glm47_flash_peak(prompt, generated, version, printed):
    ours = _total_gb(GLM, M3_MAX, 6, prompt, generated, version)
    assert LOW <= ours / printed <= HIGH, (f"GLM-4.7-Flash 6bit {prompt}/{generated}, mlx-lm {version}: "
                                           f"{ours:.3f} GB vs {printed} printed ({URL_780})")


def test_780_model_size_is_the_weights_in_gib():
    """The PR's "model size is 22.68GB" is the 6-bit conversion's weights in GiB (22.68 GiB = 24.35 GB): oomkit's
    weights are within 0.2 % of it. (The PR's "20.894 GB over model size" subtracts the GiB figure from a GB one.)"""
    est = mlx.ENGINE.estimate(_spec(GLM), M3_MAX, mlx.MlxSettings(q_bits=6, prompt_tokens=256, max_tokens=256,
                                                                  engine_version="0.30.5"))
    assert abs(est.weights_bytes / GiB / 22.68 - 1) < 0.002


def test_780_old_and_new_caches():
    """v0.30.4 caches 20 heads of 256-wide keys and values a layer; v0.30.5 the 512 latent and the 64 rope dims."""
    spec = _spec(GLM)

    def kv(version: str) -> int:
        s = mlx.MlxSettings(q_bits=6, prompt_tokens=16384, max_tokens=256, engine_version=version)
        return mlx.ENGINE.estimate(spec, M3_MAX, s).kv_cache_bytes

    tokens = 16384 + 256  # 65 steps of 256: the buffers end exactly full
    assert kv("0.30.4") == 47 * tokens * 20 * (256 + 256) * 2
    assert kv("0.30.5") == 47 * tokens * (512 + 64) * 2
    assert spec.hf_model_type == "glm4_moe_lite" and MLA_LATENT_FROM["glm4_moe_lite"] == (0, 30, 5)


# ---------------------------------------------------------------------------------------------------------
# B. mlx-lm PR #839, the pre column (v0.30.5's deepseek_v3.py, per-head cache); 128 generated tokens, the 4-bit
# conversion and the M3 Ultra 512GB as tests/test_mlx_heldout.py takes them for the post column.
URL_839 = "https://github.com/ml-explore/mlx-lm/pull/839"
TABLE_839 = """
4096 | 199.149 | 213.337 |  13.592 | 20.647 | 401.668 | 383.213
8192 | 176.519 | 187.632 | 9.750 | 18.852 | 424.215 | 388.343
16384 | 139.040 | 147.876 | 6.520 | 16.772 | 469.906 | 398.605
"""


def _rows_839():
    out = []
    for line in TABLE_839.strip().splitlines():
        cells = [c.strip() for c in line.split("|")]
        out.append(pytest.param(int(cells[0]), float(cells[5]), id=f"pre-{cells[0]}"))
    return out


@pytest.mark.parametrize("prompt,printed", _rows_839())
def test_839_dsv3_pre_peak(prompt, printed):
    ours = _total_gb("deepseek-v3-0324", M3_ULTRA, 4, prompt, 128, "0.30.5")
    assert LOW <= ours / printed <= HIGH, f"DeepSeek-V3 4bit at {prompt}, mlx-lm 0.30.5: {ours:.3f} vs {printed} ({URL_839})"


def test_839_pre_minus_post_is_the_per_head_cache():
    """What the pre column holds above the post one grows from 18.455 GB at 4096 tokens to 71.301 GB at 16384
    (52.846 GB); oomkit's from 19.635 to 74.754 (55.119, 1.043): the per-head cache less the latent, 61 layers x
    (128 x (192 + 128) - 576) x 2 bytes = 4.93 MB a token (60.54 GB over the 12,288 tokens), less the second score
    array the latent attention holds (5.42 GB)."""
    spec = _spec("deepseek-v3-0324")
    printed = (469.906 - 398.605) - (401.668 - 383.213)  # the gap's growth from 4096 to 16384 tokens

    def gap(prompt: int) -> float:
        def tot(version):
            s = mlx.MlxSettings(q_bits=4, prompt_tokens=prompt, max_tokens=128, engine_version=version)
            return mlx.ENGINE.estimate(spec, M3_ULTRA, s).total_bytes / 1e9
        return tot("0.30.5") - tot("0.30.6")

    ours = gap(16384) - gap(4096)
    assert abs(ours / printed - 1) < 0.05, f"{ours:.2f} GB vs {printed:.2f}"


# ---------------------------------------------------------------------------------------------------------
# The rule's table


@pytest.mark.parametrize("model_type,version,latent", [
    ("glm4_moe_lite", "0.30.4", False), ("glm4_moe_lite", "0.30.5", True),
    ("deepseek_v3", "0.30.5", False), ("deepseek_v3", "0.30.6", True), ("kimi_k2", "0.30.6", True),
    ("deepseek_v32", "0.30.5", False), ("kimi_linear", "0.30.6", False), ("kimi_linear", "0.30.7", True),
    ("longcat_flash", "0.30.6", False), ("longcat_flash", "0.30.7", True),
    ("deepseek_v2", "0.32.0", False), ("minicpm3", "0.32.0", False),
])
def test_mla_latent_from(model_type, version, latent):
    """models/<type>.py at each release: `kv_latent, k_pe = cache.update_and_fetch(kv_latent, k_pe)` from the release
    in MLA_LATENT_FROM, the decompressed heads before; deepseek_v2 / minicpm3 / youtu_llm never (MLA_PER_HEAD)."""
    spec = replace(_spec("deepseek-v2-lite"), hf_model_type=model_type)
    assert latent_cache(spec, parse_version(version)) is latent
    assert MLA_PER_HEAD.isdisjoint(MLA_LATENT_FROM)


def test_models_without_mla_are_untouched():
    assert latent_cache(_spec("Qwen/Qwen3-8B"), parse_version("0.30.4")) is False


# ---------------------------------------------------------------------------------------------------------
# C. mlx-examples#1281 (dave-fl, 2025-04-04, "Poor Speculative Decoding Performance on M2 Ultra"): the run without a
# draft model on an M4 Max, mlx-lm of that week (0.22.3, "Update logits to new mlx + version bump", #63,
# 2025-04-03). Nothing in tests/ cites the thread. In the band before and after: 59.919 GB, 1.010.
URL_1281 = "https://github.com/ml-explore/mlx-examples/issues/1281"
LINES_1281 = """M4 Max

mlx_lm.generate --model mlx-community/Qwen2.5-72B-Instruct-6bit --prompt "Write a quicksort algorithm" -m 1000 --temp 0

Prompt: 34 tokens, 39.482 tokens-per-sec
Generation: 642 tokens, 7.919 tokens-per-sec
Peak memory: 59.349 GB"""
M4_MAX = (Device("MTL0", "Apple M4 Max 128GB", 128 * GiB),)


def test_1281_qwen25_72b_6bit_m4_max():
    assert "Peak memory: 59.349 GB" in LINES_1281 and "Generation: 642 tokens" in LINES_1281
    ours = _total_gb("Qwen/Qwen2.5-72B-Instruct", M4_MAX, 6, 34, 642, "0.22.3")
    assert LOW <= ours / 59.349 <= HIGH, f"{ours:.3f} GB vs 59.349 printed ({URL_1281})"


# ---------------------------------------------------------------------------------------------------------
# D. mlx-lm#790 (TrajansRow, 2026-01-21, the day after #780 was opened, v0.30.4 the release of that week): "GLM 4.7
# Flash performs great in MLX, but the KV Cache seems to be several times larger per token than I would expect for
# this model. This prevents 32GB hosts from using more than about 10000 tokens of context, even with a 4-bit
# quantized model." The Mac is not named: oomkit's `check` of mlx_lm.server with the 4-bit conversion on a 32 GB
# M2 Max. Before the rule the largest context that fits was 43,264 tokens (4.3 times the report's); with it 8,704 at
# v0.30.4 (0.87 of it), and 43,264 again from v0.30.5, the latent cache #780 brought in. Nothing in tests/ cites it.
URL_790 = "https://github.com/ml-explore/mlx-lm/issues/790"
LINE_790 = ("This prevents 32GB hosts from using more than about 10000 tokens of context, even with a 4-bit quantized "
            "model.")


def _largest_context(version: str) -> int:
    args = ["check", "--json", "--gpu", "M2 Max 32GB", "--engine-version", version, "--",
            "mlx_lm.server", "--model", "mlx-community/GLM-4.7-Flash-4bit"]
    rc, out, err = run_cli(*args)
    assert rc in (0, 1), err
    return json.loads(out)["max_context"]


def test_790_glm47_flash_context_on_32gb():
    assert "about 10000 tokens" in LINE_790
    old = _largest_context("0.30.4")
    assert 0.7 <= old / 10000 <= 1.3, f"{old} tokens vs about 10000 ({URL_790})"
    assert _largest_context("0.30.5") > 4 * old
