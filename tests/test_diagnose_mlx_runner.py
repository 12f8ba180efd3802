"""diagnose on Ollama's MLX runner's refusal (x/mlxrunner/client.go Load, v0.18.2+), the figures from the thread.

ollama/ollama#17246 (https://github.com/ollama/ollama/issues/17246, macOS, Apple GPU, Ollama 0.32.1):

    ollama run qwen3.6:35b-a3b-coding-nvfp4
    Error: 500 Internal Server Error: model requires 20.4 GiB but only 11.3 GiB are available (after 512.0 MiB overhead)

client.go Load: modelSize (the manifest's TotalTensorSize) against the first GPU's free memory less MinimumMemory()
(512 MiB on Metal) and OLLAMA_GPU_OVERHEAD; each figure format.HumanBytes2. The runner keeps every tensor on that
GPU: num_gpu / num_ctx are no fix; a smaller quantization, the GGUF tag, or more free memory are.
"""

from __future__ import annotations

from oomkit.diagnose import diagnose
from oomkit.units import GiB, MiB

O17246 = "https://github.com/ollama/ollama/issues/17246"
O17246_TEXT = ("ollama run qwen3.6:35b-a3b-coding-nvfp4\n"
               "Error: 500 Internal Server Error: model requires 20.4 GiB but only 11.3 GiB are available "
               "(after 512.0 MiB overhead)\n")


def test_the_refusal_is_read_as_ollamas_weights_with_its_three_figures():
    d = diagnose(O17246_TEXT)
    assert (d.engine, d.stage, d.signature) == ("ollama", "weights", "ollama_mlx_load")
    assert d.numbers["model_required_bytes"] == round(20.4 * GiB)
    assert d.numbers["available_bytes"] == round(11.3 * GiB)
    assert d.numbers["overhead_bytes"] == 512 * MiB
    assert d.settings["ollama_model"] == "qwen3.6:35b-a3b-coding-nvfp4"


def test_the_fixes_are_the_runners_not_the_llamacpp_runners():
    d = diagnose(O17246_TEXT)
    text = "\n".join(f.summary for f in d.fixes)
    # 20.4 - 11.3 = 9.1 GiB short; the GPU had 11.3 + 0.5 = 11.8 GiB free
    assert "9.10 GiB" in text and "11.80 GiB free" in text, text
    assert "nvfp4 / int4 instead of mxfp8 / int8" in text and "GGUF tag" in text, text
    assert "num_gpu" not in text and "num_ctx" not in text, text  # no layer split, no KV cache in the check
    # 512.0 MiB is Metal's MinimumMemory alone: OLLAMA_GPU_OVERHEAD is not set, so no fix offers lowering it
    assert not any(k == "OLLAMA_GPU_OVERHEAD" for f in d.fixes for k, _ in f.env), text


def test_a_set_gpu_overhead_is_offered_back_with_its_share():
    # the same refusal with OLLAMA_GPU_OVERHEAD=1GiB: the overhead printed is MinimumMemory() + the variable
    d = diagnose(O17246_TEXT.replace("512.0 MiB", "1.5 GiB"))
    fix = next(f for f in d.fixes if ("OLLAMA_GPU_OVERHEAD", "0") in f.env)
    assert fix.saves_bytes == GiB and "not enough alone (9.10 GiB short)" in fix.summary, fix.summary


def test_a_tag_whose_model_the_catalog_holds_gets_each_quantizations_size():
    """qwen3.6:35b-a3b-nvfp4 is sized as the runner sizes it (engines/ollama/mlx_runner.py total_tensor_size, which
    gives the thread's 20.4 GiB for nvfp4); none of x/create's quantizations fits the thread's 11.3 GiB, the GGUF tag
    is named instead."""
    d = diagnose(O17246_TEXT.replace("-coding-nvfp4", "-nvfp4"))
    text = "\n".join(f.summary for f in d.fixes)
    assert "nvfp4 is 20.40 GiB" in text and "no MLX quantization of this model fits the 11.30 GiB" in text, text
    assert "qwen3.6:35b-a3b, the GGUF tag of the same model" in text, text
