"""llama.cpp's MoE offload (common/arg.cpp --cpu-moe / --n-cpu-moe: the ffn_*_exps tensors kept on the CPU) is
offered only where the log's model has experts: llama.cpp's own print (print_info / llm_load_print_meta
"n_expert = N"), else the catalog's entry of the model the log names (the GGUF file of a failed load, -m of a quoted
command). A dense model has no expert tensors: the flag moves nothing.

The logs are the diagnose fixtures of the threads (tests/fixtures/diagnose/*.jsonl, each with its URL):
- dense: raspberry-pi-pcie-devices#706 (mistral-7b-instruct-v0.2.Q8_0.gguf, "unable to allocate Vulkan0 buffer"),
  llama.cpp#24436 (llama-bench -m llama-3.1-70b-instruct-Q4_K_M.gguf, "allocating 39979.48 MiB on device 1");
- MoE: llama.cpp#15974 (Qwen3-Coder-30B-A3B ... Distill, "unable to allocate Vulkan0 buffer"), llama.cpp#18642
  (Qwen3-Next-80B-A3B, "vk::Queue::submit: ErrorOutOfDeviceMemory"), llama.cpp#4495 (mixtral-8x7b-instruct-v0.1:
  8 experts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.predict import expert_count

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"


def _case(case_id: str) -> dict:
    for f in sorted(FIXTURES.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line)["id"] == case_id:
                return json.loads(line)
    raise KeyError(case_id)


def _moe_fixes(d) -> list[str]:
    return [f.summary for f in d.fixes if "cpu-moe" in f.summary]


@pytest.mark.parametrize("case_id,model_file,requested", [
    ("rpi-pcie-706-radv-vulkan-q8-7b-weights-4g-buffer", "models/mistral-7b-instruct-v0.2.Q8_0.gguf", 4248715264),
    ("llama-cpp-24436-llama-bench-one-gpu-weights", "llama-3.1-70b-instruct-Q4_K_M.gguf", round(39979.48 * 2**20)),
])
def test_a_dense_models_weights_failure_offers_no_moe_offload(case_id, model_file, requested):
    c = _case(case_id)
    d = diagnose(c["text"])
    assert d.engine == "llama.cpp" and d.stage == "weights"
    assert d.numbers["requested_bytes"] == requested
    assert d.settings["model_file"] == model_file
    assert expert_count(d) == 0
    assert not _moe_fixes(d), [f.summary for f in d.fixes]
    assert any(f.summary.startswith("-ngl fewer") for f in d.fixes)  # the layer offload stays


@pytest.mark.parametrize("case_id", ["llama-cpp-15974-vulkan-split-third-device",
                                     "llama-cpp-18642-vulkan-queue-submit-load"])
def test_an_moe_models_weights_failure_keeps_the_moe_offload(case_id):
    d = diagnose(_case(case_id)["text"])
    assert d.engine == "llama.cpp" and d.stage == "weights"
    assert "A3B" in d.settings["model_file"]
    assert _moe_fixes(d) == ["--n-cpu-moe N / --cpu-moe for MoE models"]


def test_the_catalog_gives_mixtrals_eight_experts():
    # llama.cpp#4495: ./main -m models/mixtral-8x7b-instruct-v0.1.Q3_K_M.gguf
    d = diagnose(_case("llamacpp-4495-mixtral-q3km-m1-air-16gb-metal-status5-weights-over-ram")["text"])
    assert d.settings["model_file"] == "models/mixtral-8x7b-instruct-v0.1.Q3_K_M.gguf"
    assert expert_count(d) == 8


@pytest.mark.parametrize("url,text,n", [
    # abetlen/llama-cpp-python#1901 (DeepSeek R1 Distill Qwen 32B, a dense Qwen2)
    ("https://github.com/abetlen/llama-cpp-python/pull/1901",
     "print_info: n_ff             = 27648\nprint_info: n_expert         = 0\nprint_info: n_expert_used    = 0\n", 0),
    # ikawrakow/ik_llama.cpp#822 (gpt-oss-20b: 32 experts, 4 used)
    ("https://github.com/ikawrakow/ik_llama.cpp/issues/822",
     "llm_load_print_meta: n_ff             = 2880\nllm_load_print_meta: n_expert         = 32\n"
     "llm_load_print_meta: n_expert_used    = 4\n", 32),
])
def test_llamacpps_own_expert_count_is_read(url, text, n):
    """Each thread's print lines as posted, followed by the weights failure as llama.cpp#20431 printed it."""
    d = diagnose(text + "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n")
    assert d.settings["n_expert"] == n, url
    assert expert_count(d) == n
    assert bool(_moe_fixes(d)) == (n > 0), url
