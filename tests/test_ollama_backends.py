"""Ollama on other ground than one CUDA GPU: the vision projector (projector.weights / projector.graph), Metal's
512 MiB minimum and the library read from the devices, CPU-only machines, embedding models, and releases.

Expected figures are Ollama's own log lines in the cited fixtures (tests/fixtures/engine_logs/ollama/)."""

import json
import os
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.projector import projector, vision_graph
from oomkit.memory import Device
from oomkit.model.resolve import resolve

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama"
MiB, GiB = 1 << 20, 1 << 30


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith("OLLAMA_"):
            monkeypatch.delenv(k, raising=False)


def _printed(stem):
    return json.loads((FIXTURES / f"{stem}.json").read_text())["printed"]


def _rounds_to(value: int, printed: str) -> bool:
    return ol.human_bytes2(value) == printed


def test_projector_graph_equals_the_printed_figures():
    # fs/ggml/ggml.go VisionGraphSize: gemma3 896/14 px, 3 channels, 16 heads, 1152 wide -> 1,083,440,128 bytes;
    # mistral3 (Pixtral) 1540/14 px, 16 heads, 1024 wide -> 9,398,756,544 bytes
    g3 = projector(resolve("gemma3:4b"))
    ms = projector(resolve("mistral-small3.1"))
    assert (g3.graph, ms.graph) == (1_083_440_128, 9_398_756_544)
    assert _rounds_to(g3.graph, _printed("gemma3-12b-11gib-gpu-ctx8192-partial")["projector.graph"])  # "1.0 GiB"
    assert _rounds_to(ms.graph, _printed("mistral-small3.1-24b-3090-ctx4096-fa")["projector.graph"])  # "8.8 GiB"
    # the weights: gemma3's SigLIP tower in F16 (800.7 MiB) against the file's v.* tensors, 795.9 MiB (0.6%)
    printed = _printed("gemma3-12b-11gib-gpu-ctx8192-partial")["projector.weights_bytes"]
    assert abs(g3.weights - printed) / printed < 0.01
    assert vision_graph("llama", {"image_size": 896, "patch_size": 14}) == 0  # no projector graph for text archs


def test_projector_on_the_first_gpu_and_in_the_log():
    est = ol.ENGINE.estimate(resolve("mistral-small3.1"), (Device("CUDA0", memory_bytes=24 * GiB),),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.6.6"))
    mem = est.engine_view["ollama_memory"]
    assert mem["projector.graph"] == 9_398_756_544
    assert 'projector.graph="8.8 GiB"' in est.engine_view["ollama_log"]
    # before gemma3's support (v0.6.0) no VisionGraphSize
    old = ol.ENGINE.estimate(resolve("mistral-small3.1"), (Device("CUDA0", memory_bytes=24 * GiB),),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.5.13"))
    assert "projector.graph" not in old.engine_view["ollama_memory"]


def test_library_from_the_devices_and_metals_minimum():
    # an Apple chip runs Metal: 512 MiB minimum (ollama PR #4068 "metal: add 512MiB to minimum memory, no partial
    # offloading overhead"), the memory Metal's working set (16 GiB Mac: 11453.25 MB in #12912's log)
    est = ol.ENGINE.estimate(resolve("qwen3:8b"), (Device("MTL0", name="Apple M1", memory_bytes=16 * GiB),),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.9.0"))
    assert est.settings["library"] == "metal"
    assert est.devices[0].overhead_bytes == 512 * MiB
    assert est.devices[0].memory_bytes == 16 * GiB * 2 // 3
    assert 'memory.available="[10.7 GiB]"' in est.engine_view["ollama_log"]  # 11453.25 MB = 10.67 GiB
    mem = est.engine_view["ollama_memory"]
    assert mem["memory.graph.partial"] == mem["memory.graph.full"]  # "no partial offloading overhead" on Metal
    rocm = ol.ENGINE.estimate(resolve("qwen3:8b"), (Device("ROCm0", memory_bytes=16 * GiB),),
                              ol.OllamaSettings(num_ctx=4096, engine_version="0.9.0"))
    assert (rocm.settings["library"], rocm.devices[0].overhead_bytes) == ("rocm", 457 * MiB)
    sycl = ol.ENGINE.estimate(resolve("qwen3:8b"), (Device("CUDA0", memory_bytes=16 * GiB),),
                              ol.OllamaSettings(num_ctx=4096, engine_version="0.9.0", library="sycl"))
    assert sycl.settings["library"] == "oneapi"


def test_backend_option_for_ollama():
    from oomkit.commands._model_args import parse_model_request

    req = parse_model_request(["qwen3:8b", "--engine", "ollama", "--vram", "16GiB", "--backend", "vulkan"])
    assert req.settings.library == "vulkan"
