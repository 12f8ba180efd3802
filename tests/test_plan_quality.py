"""Quality costs of weight formats and KV types: the published figures come back as published, spellings
normalise, unknown stays unknown, and the ordering follows the figures."""

from __future__ import annotations

import json
import math

import pytest

from oomkit.plan import quality
from oomkit.plan.quality import Quality, expected_ppl_delta, kv_quality, rank_key, weight_quality

SCOREBOARD = "https://github.com/ggml-org/llama.cpp/blob/master/tools/perplexity/README.md"
# The scoreboard's full-precision PPL: its f16 row (6.233160) minus that row's own ΔPPL (0.001524).
BASE_PPL = 6.233160 - 0.001524


@pytest.mark.parametrize(("name", "dppl", "kld"), [
    # llama.cpp tools/perplexity/README.md, "LLaMA 3 8b Scoreboard" (imatrix None rows)
    ("Q8_0", 0.002650, 0.001355),
    ("Q6_K", 0.021748, 0.005452),
    ("Q5_K_M", 0.056974, 0.010762),
    ("Q4_K_M", 0.175482, 0.031273),
    ("Q4_0", 0.468514, 0.071940),
    ("Q3_K_M", 0.656864, 0.101913),
    ("Q2_K", 3.519934, 0.445132),
])
def test_gguf_types_return_the_scoreboard_figures(name, dppl, kld):
    q = weight_quality(name)
    assert q.name == name
    assert q.source == SCOREBOARD
    assert q.kld == kld
    assert q.ppl_delta_pct == pytest.approx(100 * dppl / BASE_PPL, abs=5e-4)
    assert q.model.startswith("LLaMA-3-8B")


def test_q4_k_m_text_and_numbers():
    q = weight_quality("Q4_K_M")
    assert q.ppl_delta_pct == pytest.approx(2.816, abs=1e-3)  # 0.175482 / 6.231636
    assert q.text == "Q4_K_M: +2.8 % ppl (LLaMA-3-8B)"
    assert q.bits_per_weight == 4.8944  # tools/quantize/README.md, Llama-3.1-8B table


@pytest.mark.parametrize("spelling", ["Q4_K_M", "q4_k_m", "Q4_K", "q4_k", "MOSTLY_Q4_K_M", " q4_K_M "])
def test_gguf_spellings_normalise(spelling):
    assert weight_quality(spelling).name == "Q4_K_M"


@pytest.mark.parametrize(("spelling", "entry"), [
    ("fp8", "fp8"), ("FP8", "fp8"), ("fp8-block", "fp8"), ("modelopt-fp8", "fp8"),
    ("awq", "awq"), ("awq-w4-g128", "awq"), ("gptq", "gptq"), ("gptq-w4-g128", "gptq"), ("w4a16", "gptq"),
    ("nvfp4", "nvfp4"), ("modelopt-nvfp4", "nvfp4"), ("ct-nvfp4-pack-quantized", "nvfp4"),
    ("nf4", "nf4"), ("bnb-nf4", "nf4"), ("bnb-nf4-w4-g64", "nf4"),
    ("bf16", "bf16"), ("safetensors BF16", "bf16"), ("int8", "int8"), ("w8a8", "int8"),
])
def test_hf_spellings_normalise(spelling, entry):
    assert weight_quality(spelling).name == entry


def test_hf_published_figures():
    fp8 = weight_quality("fp8")
    # pytorch/ao PR #3394: Llama-3.1-8B wikitext word perplexity 7.5472 (bf16) -> 7.62 (float8 rowwise)
    assert fp8.ppl_delta_pct == pytest.approx(100 * (7.62 / 7.5472105433748435 - 1), abs=5e-3)
    # neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8: OpenLLM v1 73.44 vs 73.79
    assert fp8.accuracy_delta_pct == pytest.approx(100 * (73.44 / 73.79 - 1), abs=5e-3)
    nvfp4 = weight_quality("nvfp4")
    assert nvfp4.ppl_delta_pct == pytest.approx(100 * (8.44 / 7.5472105433748435 - 1), abs=5e-3)
    assert nvfp4.source == "https://github.com/pytorch/ao/pull/3394"
    gptq = weight_quality("gptq")
    assert gptq.ppl_delta_pct is None and gptq.accuracy_delta_pct == -1.1  # RedHatAI ...-quantized.w4a16: 98.9 %
    assert gptq.text == "gptq: -1.1 % accuracy (Meta-Llama-3.1-8B-Instruct)"
    assert weight_quality("bf16").text == "bf16: baseline"


@pytest.mark.parametrize("fmt", ["bnb-nf4", "mlx-4bit", "mxfp4", "bnb-int8", "TQ1_0", "no-such-format", ""])
def test_unknown_formats_are_null(fmt):
    q = weight_quality(fmt)
    assert (q.ppl_delta_pct, q.kld, q.accuracy_delta_pct) == (None, None, None)
    assert not q.known
    assert q.text == "unknown"
    assert q.note.startswith("unknown")


def test_a_four_bit_figure_does_not_stand_for_eight_bits():
    assert not weight_quality("gptq-w8-g128").known
    assert weight_quality("gptq-w4-g128").known


@pytest.mark.parametrize(("kv", "entry"), [
    ("f16", "f16"), ("auto", "f16"), ("bfloat16", "f16"), (None, "f16"),
    ("q8_0", "q8_0"), ("Q8_0", "q8_0"), ("q4_0", "q4_0"),
    ("fp8", "fp8"), ("fp8_e4m3", "fp8"), ("fp8_e5m2", "fp8_e5m2"), ("8bit", "mlx-8bit"), (4, "mlx-4bit"),
])
def test_kv_spellings(kv, entry):
    q = kv_quality(kv)
    assert q.name == (entry if entry != "f16" else ("auto" if kv is None else kv))
    if entry == "f16":
        assert (q.ppl_delta_pct, q.kld) == (0.0, 0.0) and q.text.endswith("baseline")


def test_kv_published_figures():
    q8 = kv_quality("q8_0")
    # llama.cpp PR #7412, LLaMA-3-8B, row f16/q8_0/q8_0: PPL 6.234369, ΔPPL 0.004616, KLD 0.000980
    assert q8.kld == 0.000980
    assert q8.ppl_delta_pct == pytest.approx(100 * 0.004616 / (6.234369 - 0.004616), abs=5e-4)
    assert q8.source == "https://github.com/ggml-org/llama.cpp/pull/7412"
    q4 = kv_quality("q4_0")
    # llama.cpp PR #21551, gemma-3-4b-pt: f16 7.8551 -> q4_0/q4_0 rotated 7.9506
    assert q4.ppl_delta_pct == pytest.approx(100 * (7.9506 / 7.8551 - 1), abs=5e-4)
    assert q4.ppl_delta_pct > q8.ppl_delta_pct


@pytest.mark.parametrize("kv", ["fp8", "fp8_e5m2", "8bit", "4bit", "q5_1", "iq4_nl"])
def test_unmeasured_kv_types_are_unknown(kv):
    q = kv_quality(kv)
    assert not q.known and q.text == "unknown"


def test_rank_orders_by_measured_cost():
    names = ["Q2_K", "Q8_0", "Q4_K_M", "BF16", "IQ3_M", "Q6_K", "Q5_K_M"]
    ranked = sorted(names, key=lambda n: rank_key(weight_quality(n)))
    assert ranked == ["BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ3_M", "Q2_K"]


def test_unknown_falls_back_to_bits_per_weight_labelled():
    nf4 = weight_quality("bnb-nf4")  # 4.5 bits per weight by its layout
    value, basis = expected_ppl_delta(nf4)
    assert basis.startswith("assumed from 4.50 bits per weight")
    # between the scoreboard's best types around 4.5 bits: IQ4_XS (4.4597) and IQ4_NL (4.6818)
    lo, hi = weight_quality("IQ4_NL").ppl_delta_pct, weight_quality("IQ4_XS").ppl_delta_pct
    assert lo <= value <= hi
    # an unknown format sorts after a measured one of the same cost, and after every measured 8-bit one
    assert rank_key(weight_quality("Q8_0")) < rank_key(nf4) < rank_key(weight_quality("Q2_K"))
    # more bits, less assumed cost; nothing known at all sorts last
    assert rank_key(nf4, 8.5) < rank_key(nf4, 3.0) < rank_key(weight_quality("no-such-format"))
    assert rank_key(weight_quality("no-such-format"))[0] == math.inf


def test_every_entry_has_the_fields_and_a_source_when_measured():
    table = json.loads(quality.DATA_PATH.read_text(encoding="utf-8"))
    for section in ("weights", "hf_weights", "kv"):
        for name, row in table[section].items():
            assert {"ppl_delta_pct", "kld", "model", "source", "note"} <= set(row), name
            figures = [row.get(k) for k in ("ppl_delta_pct", "kld", "accuracy_delta_pct")]
            baseline = all(f in (0, 0.0, None) for f in figures) and row["ppl_delta_pct"] == 0.0
            if any(f is not None for f in figures) and not baseline:
                assert row["source"] and row["source"].startswith("https://"), name
                assert row["model"], name
            if all(f is None for f in figures):
                assert row["note"].startswith("unknown"), name


def test_quality_is_frozen_and_serialises():
    q = weight_quality("Q6_K")
    with pytest.raises(AttributeError):
        q.kld = 0  # type: ignore[misc]
    d = q.to_dict()
    assert d["kld"] == 0.005452 and d["text"] == q.text and d["source"] == SCOREBOARD
    assert isinstance(q, Quality)
