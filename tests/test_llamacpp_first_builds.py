"""A llama.cpp build that predates a model's architecture is refused (src/llama-arch.cpp llm_arch_from_string:
"unknown model architecture"), the first build that has it accepted. Each boundary below is read from the PR that
added the name to LLM_ARCH_NAMES: its squash-merge commit on ggml-org/llama.cpp's master and that commit's count on
master, which is the build number (cmake/build-info.cmake; checked on issue #23527's "version: 9272 (1d7ab2b94)").
Ollama runs the same check on the llama.cpp it runs, unless its own engine runs the architecture."""

import subprocess
import sys

import pytest

from oomkit.engines.llamacpp.first_builds import check_model_build, gguf_architecture
from oomkit.engines.llamacpp.settings import NEWEST
from oomkit.engines.ollama.launch import check_architecture
from oomkit.errors import OomkitError
from oomkit.model.resolve import resolve

NEWEST_BUILD = int(NEWEST[1:])

# (catalog model, llama.cpp architecture, first build, PR, merge commit, merge date)
BOUNDARIES = [
    ("gemma-2-9b", "gemma2", 3259, 8156, "e57dc6205", "2024-06-28"),  # "llama: Add support for Gemma2ForCausalLM"
    ("deepseek-coder-v2-lite", "deepseek2", 3023, 7519, "ee3dff6b8", "2024-05-28"),
    ("c4ai-command-r7b-12-2024", "cohere2", 4415, 10900, "46be94221", "2025-01-04"),
    ("phi-3.5-moe-instruct", "phimoe", 4453, 11003, "f8feb4b01", "2025-01-09"),
    ("gemma-3-12b-it", "gemma3", 4875, 12343, "7841fc723", "2025-03-12"),  # "llama : Add Gemma 3 support"
    ("llama-4-scout-17b-16e", "llama4", 5074, 12791, "1466621e7", "2025-04-07"),  # "Support llama 4 text-only"
    ("qwen3-8b", "qwen3", 5092, 12828, "d3bd7193b", "2025-04-09"),  # "llama : Support Qwen3 and Qwen3MoE"
    ("qwen3-30b-a3b", "qwen3moe", 5092, 12828, "d3bd7193b", "2025-04-09"),
    ("glm-4-9b-0414", "glm4", 5115, 12867, "06bb53ad9", "2025-04-11"),
    ("gemma-3n-e4b-it", "gemma3n", 5763, 14400, "8846aace4", "2025-06-26"),  # "model : gemma3n text-only"
    ("ernie-4.5-0.3b-pt", "ernie4_5", 5771, 14408, "566c16fcc", "2025-06-28"),
    ("mamba-codestral-7b-v0.1", "mamba2", 5812, 9126, "5d46babdc", "2025-07-02"),
    ("hunyuan-a13b-instruct", "hunyuan-moe", 5843, 14425, "8f22dc0a5", "2025-07-08"),
    ("smollm3-3b", "smollm3", 5847, 14581, "08382869a", "2025-07-08"),
    ("falcon-h1-1.5b-instruct", "falcon-h1", 5851, 14534, "04655063c", "2025-07-09"),
    ("ai21-jamba-mini-1.5", "jamba", 5856, 7531, "4a5686da2", "2025-07-09"),
    ("granite-4.0-h-tiny", "granitehybrid", 5868, 13550, "0aedae00e", "2025-07-10"),  # "model : Granite Four"
    ("lfm2-1.2b", "lfm2", 5873, 14620, "f5e96b368", "2025-07-11"),
    ("ernie-4.5-21b-a3b-pt", "ernie4_5-moe", 5924, 14658, "cb887f1bc", "2025-07-17"),
    ("hunyuan-7b-instruct", "hunyuan-dense", 6058, 14878, "0f5ccd6fd", "2025-08-01"),
    ("glm-4.5-air", "glm4moe", 6085, 14939, "ef0144c08", "2025-08-05"),  # "model: support GLM 4.5 family"
    ("gpt-oss-20b", "gpt-oss", 6096, 15091, "fd1234cb4", "2025-08-05"),  # "llama : add gpt-oss"
    ("seed-oss-36b-instruct", "seed_oss", 6257, 15490, "b1afcab80", "2025-08-23"),
    ("nvidia-nemotron-nano-9b-v2", "nemotron_h", 6315, 15507, "e8d99dd0b", "2025-08-28"),
    ("lfm2-8b-a1b", "lfm2moe", 6709, 16464, "aeaf8a36f", "2025-10-07"),
    ("ling-mini-2.0", "bailingmoe2", 6810, 16063, "84bf3c677", "2025-10-20"),
    ("qwen3-vl-8b-instruct", "qwen3vl", 6887, 16780, "d261223d2", "2025-10-30"),
    ("minimax-m2", "minimax-m2", 6906, 16831, "0de0a0157", "2025-10-31"),  # "model : Minimax M2"
    ("qwen3-next-80b-a3b-instruct", "qwen3next", 7186, 16095, "ff55414c4", "2025-11-28"),  # "model : Qwen3 Next"
    ("ministral-3-3b-instruct-2512", "mistral3", 7216, 17644, "cd3c11890", "2025-12-01"),
    # "llama : add support for NVIDIA Nemotron 3 Nano": the MoE Nemotron-H (conversion/nemotron.py NemotronHModel
    # writes nemotron_h_moe when the config has num_experts_per_tok)
    ("nemotron-3-nano-30b-a3b", "nemotron_h_moe", 7418, 18058, "299534173", "2025-12-16"),
    ("mimo-v2-flash", "mimo2", 7534, 18328, "4cbafad4f", "2025-12-24"),
    ("kimi-linear-48b-a3b-instruct", "kimi-linear", 7957, 18755, "3688c4f50", "2026-02-06"),
    ("qwen3.5-9b", "qwen35", 7990, 19468, "fc0fe4004", "2026-02-11"),  # "models : support qwen3.5 series"
    ("qwen3.5-35b-a3b", "qwen35moe", 7990, 19468, "fc0fe4004", "2026-02-11"),
    ("glm-5", "glm-dsa", 8036, 19460, "752584d5f", "2026-02-13"),  # "model: support GLM MoE DSA arch"
    # PR #21309's squash title is "model, mtmd: fix gguf conversion for audio/vision mmproj"; it adds
    # LLM_ARCH_GEMMA4 and src/models/gemma4-iswa.cpp
    ("gemma-4-31b-it", "gemma4", 8637, 21309, "63f8fe0ef", "2026-04-02"),
    ("deepseek-v3.2", "deepseek32", 9411, 23346, "1f0aa2a69", "2026-05-29"),  # DeepseekV32ForCausalLM with DSA
    ("deepseek-v4-flash", "deepseek4", 9840, 24162, "8c146a836", "2026-06-29"),  # "DeepSeek V4"
]


@pytest.mark.parametrize("model,arch,first,pr,commit,date", BOUNDARIES, ids=[b[0] for b in BOUNDARIES])
def test_refused_before_the_pr_accepted_from_it(model, arch, first, pr, commit, date):
    spec = resolve(model)
    assert gguf_architecture(spec) == arch
    with pytest.raises(OomkitError) as e:
        check_model_build(spec, first - 1, NEWEST_BUILD)
    assert str(e.value) == (f"{spec.name}: llama.cpp b{first - 1} has no {arch} architecture (added in b{first}, "
                            f"PR #{pr}); use --engine-version b{first} or newer")
    check_model_build(spec, first, NEWEST_BUILD)
    check_model_build(spec, NEWEST_BUILD, NEWEST_BUILD)


def test_an_architecture_of_every_build_is_never_refused():
    # llama and qwen2 predate any build worth sizing (b1041, b1923)
    for model in ("llama-3.1-8b", "qwen2.5-7b-instruct"):
        check_model_build(resolve(model), 1100 if "llama" in model else 2000, NEWEST_BUILD)


def test_after_newest_the_default_build_stands_for_the_newest_source():
    # Kimi-K3: PR #26185 "model: add Kimi-K3 text model" (ad1de39e0, 2026-08-15) is master's 10448th commit, after
    # the newest build oomkit models; the default --engine-version is not refused, an older or in-between one is
    spec = resolve("kimi-k3")
    check_model_build(spec, NEWEST_BUILD, NEWEST_BUILD)
    for build in (NEWEST_BUILD - 1, 10447):
        with pytest.raises(OomkitError, match=r"no kimi-k3 architecture \(added in b10448, PR #26185\)"):
            check_model_build(spec, build, NEWEST_BUILD)
    check_model_build(spec, 10448, NEWEST_BUILD)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True)


def test_the_cli_refuses_in_one_line_with_exit_2():
    r = _cli("check", "qwen3.5:9b", "--gpu", "RTX 4090", "--engine-version", "b5000")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("oomkit: error: Qwen3.5 9B: llama.cpp b5000 has no qwen35 architecture (added in b7990, "
                                "PR #19468); use --engine-version b7990 or newer")
    assert _cli("check", "qwen3.5:9b", "--gpu", "RTX 4090", "--engine-version", "b7990").returncode == 0
    assert _cli("check", "qwen3.5:9b", "--gpu", "RTX 4090").returncode == 0  # no --engine-version: the newest


# Ollama: the llama.cpp it vendors (eras A-C: Makefile.sync FETCH_HEAD; v0.5.13 d7cfe1ffe = b4779, v0.13.5-v0.2x
# ec98e2002 = b7437) or the llama-server it runs (era D: LLAMA_CPP_VERSION, v0.30.0 b9452, v0.31.0 b9840), unless its
# own engine runs the architecture (fs/ggml/ggml.go KV.OllamaEngineRequired: qwen35 / qwen35moe from v0.17.1,
# gemma4 from v0.20.0; git show <tag>:fs/ggml/ggml.go)
OLLAMA = [
    ("qwen3.5-9b", "0.17.0", "0.17.1"),
    ("gemma-4-31b-it", "0.19.0", "0.20.0"),
    ("deepseek-v4-flash", "0.30.11", "0.31.0"),  # b9781 < b9840 (PR #24162) = v0.31.0's llama-server
]


@pytest.mark.parametrize("model,before,first", OLLAMA, ids=[o[0] for o in OLLAMA])
def test_ollama_refuses_a_release_that_runs_neither(model, before, first):
    from oomkit.engines.ollama.settings import parse_version

    spec = resolve(model)
    with pytest.raises(OomkitError, match=rf"Ollama {before} .* use --engine-version {first} or newer"):
        check_architecture(spec, parse_version(before), "llama" if parse_version(before) < (0, 30) else "llama-server")
    check_architecture(spec, parse_version(first), "ollama" if parse_version(first) < (0, 30) else "llama-server")


def test_ollama_cli():
    r = _cli("check", "qwen3.5:9b", "--gpu", "RTX 4090", "--engine", "ollama", "--engine-version", "0.6.0")
    assert r.returncode == 2 and "no qwen35 architecture (added in b7990, PR #19468)" in r.stderr
    assert "use --engine-version 0.17.1 or newer" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    for v in ("0.17.1", "0.19.0", "0.30.0"):  # its own engine, then llama-server b9452
        assert _cli("check", "qwen3.5:9b", "--gpu", "RTX 4090", "--engine", "ollama", "--engine-version", v
                    ).returncode == 0, v


def test_nemotron_h_with_routed_experts_is_nemotron_h_moe():
    # conversion/nemotron.py NemotronHModel.__init__: num_experts_per_tok in the config -> MODEL_ARCH.NEMOTRON_H_MOE
    for model in ("nemotron-3-nano-30b-a3b", "nemotron-3-super-120b-a12b", "nemotron-3-ultra-550b-a55b",
                  "nemotron-3.5-lightning-30b-a3b"):
        assert resolve(model).architecture == "nemotron_h_moe", model
    for model in ("nvidia-nemotron-nano-9b-v2", "nvidia-nemotron-nano-12b-v2", "nemotron-h-56b-base-8k"):
        assert resolve(model).architecture == "nemotron_h", model


def test_ollama_vendored_build_loads_nemotron_3_nano_from_0_13_4():
    # v0.13.5's Makefile.sync FETCH_HEAD ec98e2002 is master's 7437th commit, after PR #18058 (b7418); v0.13.3's
    # 17f7f4baa is the 7345th, and v0.13.4 carries llama/patches/0032-llama-add-support-for-NVIDIA-Nemotron-Nano-3.patch
    # on that same base
    from oomkit.engines.ollama.settings import parse_version

    spec = resolve("nemotron-3-nano-30b-a3b")
    with pytest.raises(OomkitError, match=r"Ollama 0\.13\.3 runs llama\.cpp b7345, .* no nemotron_h_moe .* 0\.13\.4 or"):
        check_architecture(spec, parse_version("0.13.3"), "llama")
    check_architecture(spec, parse_version("0.13.4"), "llama")
    check_architecture(spec, parse_version("0.13.5"), "llama")


@pytest.mark.parametrize("model, before, first", [
    # Ollama's llm/patches/07-gemma.diff adds gemma2 to the vendored b3171 from v0.1.47 (llama.cpp has it from b3259)
    ("gemma-2-27b-it", "0.1.46", "0.1.47"),
    # Mistral Nemo's 32 heads x 128 in 5120: llama.cpp loads it from PR #8604 (b3436); v0.2.0's runner is b3337,
    # v0.2.8's b3440 (llm/llama.cpp submodule d94c6e0cc), as ollama#6116's "You need Ollama 0.2.8 or newer" says
    ("mistral-nemo", "0.1.37", "0.2.8"),
])
def test_ollama_old_runners_by_their_submodule_and_patches(model, before, first):
    from oomkit.engines.ollama.settings import parse_version  # the release reader

    spec = resolve(model)
    with pytest.raises(OomkitError, match=rf"Ollama {before} .* use --engine-version {first} or newer"):
        check_architecture(spec, parse_version(before), "llama")
    check_architecture(spec, parse_version(first), "llama")


def test_llama_heads_apart_from_the_hidden_size_need_pr_8604():
    # src/llama.cpp before PR #8604 (b3436): wq {n_embd, n_embd}, so Mistral Nemo's {5120, 4096} had the wrong shape
    spec = resolve("mistral-nemo")
    with pytest.raises(OomkitError, match=r"b3435 .* \(added in b3436, PR #8604\)"):
        check_model_build(spec, 3435, int(NEWEST[1:]))
    check_model_build(spec, 3436, int(NEWEST[1:]))
    check_model_build(resolve("llama3.1:8b"), 3000, int(NEWEST[1:]))  # 32 x 128 = 4096: every build
