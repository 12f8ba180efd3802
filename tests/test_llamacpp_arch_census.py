"""Every architecture name of the llama.cpp that llama-cpp-python 0.3.36 wraps (ggml-org/llama.cpp@0c1e57098,
src/llama-arch.cpp LLM_ARCH_NAMES, read from the string table of its libllama.so: 153 names, LLM_ARCH_UNKNOWN's
"(unknown)" left out), run through oomkit's llama.cpp estimate on a synthetic GGUF of that architecture.

Census (-c 8192, f16 K/V, flash attention on, 1 sequence): 150 sized, 3 refused in one line, 0 crashes. The three
refused are the names llama.cpp itself does not run as a model: clip (src/llama-model.cpp: "CLIP cannot be used as
main model, use it with --mmproj instead"), gptj (no llama_model class in this build) and gemma4-assistant (its
context needs the target's). The newest mainline list stored here (ngxson/llama.cpp@3f545bec, b10587) has 147
names, all in the list below.

The 42 architectures that tests/test_llamacpp_archs.py holds on its two-row sweep only (tests/ggufs.py SWEEP: one
generic Llama-2-7B-like shape each) are held here on three more settings, one per knob the sweep leaves at its
default: a 32K context with q8_0 K and V, a q4_0 K cache without flash attention at 16K, and 4 unified sequences
at 16K. KV cache (cells, layers, K, V), recurrent state, model and output buffers equal llama.cpp's printed figures
(llama.cpp on this machine's CPU, tests/groundtruth/llamacpp_run.py); the compute buffer within 10% (measured
today: 0.928 to 1.100, the edges being qwen at 0.928 with 4 unified sequences and 1.090 at 32K q8_0, and mimo2 at
1.0997 with 4 unified sequences; the ungated-MLP graphs bloom, codeshell, jais2, mpt and nemotron, at 0.908 / 1.089
before, equal to the printed MiB on the flash-attention settings, and the gated FFNs at 32K q8_0 within 0.1 MiB
of 120.59 (1.066 before): tests/test_llamacpp_compute_plain_mlp.py).
"""

from __future__ import annotations

import pytest

from oomkit.errors import OomkitError
from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests import llamacpp_harness as h
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel, _attn_gqa, _embeddings, _ffn_dense, _Meta
from tests.test_llamacpp_archs import ARCHS, BASE

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

# llama.cpp@0c1e57098's LLM_ARCH_NAMES (src/llama-arch.cpp), sorted
BUILD_ARCHS = """
afmoe apertus arcee arctic arwkv7 baichuan bailingmoe bailingmoe2 bailingmoe3 bert bitnet bloom chameleon
chatglm clip codeshell cogvlm cohere2 cohere2moe command-r dbrx deci deepseek deepseek2 deepseek2-ocr
deepseek32 deepseek4 dflash dots1 dots3note dream eagle3 ernie4_5 ernie4_5-moe eurobert exaone exaone-moe
exaone4 falcon falcon-h1 gemma gemma-embedding gemma2 gemma3 gemma3n gemma4 gemma4-assistant glm-dsa glm4
glm4moe glm5-next gpt-oss gpt2 gptj gptneox granite granite_swa granitehybrid granitemoe graniteswitch grok
grovemoe hrm_text hunyuan-dense hunyuan-moe hunyuan_vl hy_v3 hy_v4 internlm2 jais jais2 jamba jina-bert-v2
jina-bert-v3 kimi-k3 kimi-linear laguna lfm2 lfm2moe llada llada-moe llama llama-embed llama4 maincoder mamba
mamba2 maple mellum mimo2 minicpm minicpm3 minimax-01 minimax-m2 minimax-m3 mistral3 mistral4 modern-bert mpt
muse-glimmer nanbeige nemotron nemotron_h nemotron_h_moe neo-bert nomic-bert nomic-bert-moe olmo olmo2 olmoe
openelm orion paddleocr pangu-embedded phi2 phi3 phimoe plamo plamo2 plamo3 plm pockettts qwen qwen2 qwen2moe
qwen2vl qwen3 qwen35 qwen35moe qwen3moe qwen3next qwen3tts qwen3vl qwen3vlmoe qwen4exp refact rnd1 rwkv6
rwkv6qwen2 rwkv7 seed_oss smallthinker smollm3 spark2_5 stablelm starcoder starcoder2 step35 t5 t5encoder
talkie wavtokenizer-dec xverse
""".split()

# the names llama.cpp does not run as a model, with the words of oomkit's one-line refusal
REFUSED = {"clip": "multimodal projector", "gptj": "not supported", "gemma4-assistant": "not supported"}

# the architectures tests/groundtruth/synth.py builds at a published checkpoint's shapes
SYNTH = {"llama": synth.llama3_8b, "qwen3": synth.qwen3_8b, "qwen3moe": synth.qwen3_30b_a3b,
         "gemma3": synth.gemma3_12b, "gemma2": synth.gemma2_9b, "gpt-oss": synth.gpt_oss_20b,
         "deepseek2": synth.deepseek_v3, "mamba2": synth.mamba2_2_7b, "qwen35": synth.qwen35_27b}


def clip_gguf() -> SynthModel:
    """A GGUF of general.architecture clip with a Llama block's tensors: enough for llama.cpp to stop on the name."""
    md = _Meta("clip").base(ctx=4096, n_embd=1024, n_layers=1, n_ff=4096, n_head=16, n_head_kv=16, rms_eps=1e-5,
                            rope_base=10000.0, n_vocab=32000)
    ts = _embeddings(1024, 32000, tied=True) + _attn_gqa(0, 1024, 1024, 1024) + _ffn_dense(0, 1024, 4096)
    return SynthModel("clip-1l", "clip", "a projector's architecture name on a Llama block", 32000, 1, tuple(md.items),
                      tuple(ts), tied_embeddings=True, dims={})


def build(arch: str) -> tuple[SynthModel, str]:
    """The synthetic file the other llama.cpp tests hold this architecture to, and its quantization."""
    if arch in ARCHS:
        return ARCHS[arch][0](n_layers=ARCHS[arch][1]), "q4_0"
    if arch in ggufs.ADDED_BUILDERS:
        return ggufs.ADDED_BUILDERS[arch](), ggufs.ADDED_QUANT.get(arch, "q4_0")
    if arch in ggufs.CRASHING_BUILDERS:
        return ggufs.CRASHING_BUILDERS[arch](), "q4_0"
    if arch in ggufs.NOT_STANDALONE:
        return ggufs.NOT_STANDALONE[arch][0](), "f16"
    if arch in ggufs.SWEEP:
        return ggufs.sweep_model(arch), "f16"
    if arch in SYNTH:
        return SYNTH[arch](n_layers=2), "q4_0"
    assert arch == "clip", f"no synthetic file for {arch}"
    return clip_gguf(), "f16"


def test_census_every_name_of_the_build_is_sized_or_refused_in_one_line():
    sized, refused = [], {}
    for arch in BUILD_ARCHS:
        model, quant = build(arch)
        path = synth.synth_path(model, quant)
        try:
            spec = read_gguf_spec(path)
            assert spec.architecture == arch
            figures = g.oomkit_figures(spec, dict(BASE, n_ctx=8192))
        except OomkitError as e:
            refused[arch] = str(e)
            continue
        assert figures["model_mib"] > 0 and figures["compute_mib"] > 0, arch
        sized.append(arch)
    assert len(BUILD_ARCHS) == 153 and len(set(BUILD_ARCHS)) == 153
    assert sorted(refused) == sorted(REFUSED), refused
    for arch, words in REFUSED.items():
        assert words in refused[arch] and "\n" not in refused[arch], (arch, refused[arch])
    assert len(sized) == 150


@needs_llama_cpp
def test_llama_cpp_does_not_load_clip_as_a_model():
    m = g.llamacpp_run.measure(synth.synth_path(clip_gguf(), "f16"), **dict(BASE, n_ctx=4096))
    assert not m["ok"] and m["stage"] == "model", (m["stage"], m["error"])
    assert "CLIP cannot be used as main model, use it with --mmproj instead" in (m["error"] or ""), m["error"]


GRID = [
    dict(BASE, n_ctx=32768, type_k="q8_0", type_v="q8_0"),
    dict(BASE, n_ctx=16384, type_k="q4_0", flash_attn="off"),
    dict(BASE, n_ctx=16384, n_seq_max=4, kv_unified=True),
]
SWEEP_ONLY = sorted(set(ggufs.SWEEP) - set(ggufs.ADDED_ON_GRID) - set(ggufs.CRASHING_BUILDERS))


def test_sweep_only_set_is_the_one_measured():
    assert len(SWEEP_ONLY) == 42, SWEEP_ONLY


@needs_llama_cpp
@pytest.mark.parametrize("arch", SWEEP_ONLY)
def test_sweep_architectures_on_three_more_settings_equal_llama_cpp(arch):
    path = synth.synth_path(ggufs.sweep_model(arch), "f16")
    spec = read_gguf_spec(path)
    rows = h.compare(arch, spec, GRID, g.llamacpp_run.measure_many(path, GRID), failures="error")
    assert len(rows) == len(GRID)
    h.assert_compute(arch, rows)
