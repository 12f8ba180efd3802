"""Ollama on other ground than one CUDA GPU: the vision projector (projector.weights / projector.graph), Metal's
512 MiB minimum and the library read from the devices, CPU-only machines, embedding models, and releases.

Expected figures are Ollama's own log lines in the cited fixtures (tests/fixtures/engine_logs/ollama/)."""

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.projector import projector, vision_graph
from oomkit.errors import OomkitError
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
    # the weights: VisionGraphSize sums the "v" tensors only -- the encoder, matrices F16, norms and biases F32 --
    # not the multimodal projector (mm.*): gemma3's SigLIP 795.9 MiB, mistral3's Pixtral 769.3 MiB, to the digit
    assert _rounds_to(g3.weights, _printed("gemma3-12b-11gib-gpu-ctx8192-partial")["projector.weights"])
    assert _rounds_to(ms.weights, _printed("mistral-small3.1-24b-3090-ctx4096-fa")["projector.weights"])
    assert g3.weights == 2 * 416_866_032 + 2 * 399_600  # 27 x (2 LayerNorms + 4 + 2 biases) + post LN + patch bias
    assert vision_graph("llama", {"image_size": 896, "patch_size": 14}) == 0  # no projector graph for text archs


def test_projector_on_the_first_gpu_and_in_the_log():
    est = ol.ENGINE.estimate(resolve("mistral-small3.1"), (Device("CUDA0", memory_bytes=24 * GiB),),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.6.6"))
    mem = est.engine_view["ollama_memory"]
    assert mem["projector.graph"] == 9_398_756_544
    assert 'projector.graph="8.8 GiB"' in est.engine_view["ollama_log"]
    # before v0.6.5 nothing runs the library's mistral3 GGUF (Ollama's own converter's name): not its engine
    # (KV.OllamaEngineRequired gains mistral3 in v0.6.5), not its vendored llama.cpp (b4779 at v0.5.13; llama.cpp's
    # mistral3 is PR #17644, b7216), so 0.5.13 is refused rather than sized
    with pytest.raises(OomkitError, match=r"Ollama 0\.5\.13 .* no mistral3 architecture .* --engine-version 0\.6\.5"):
        ol.ENGINE.estimate(resolve("mistral-small3.1"), (Device("CUDA0", memory_bytes=24 * GiB),),
                           ol.OllamaSettings(num_ctx=4096, engine_version="0.5.13"))


def test_library_from_the_devices_and_metals_minimum():
    # an Apple chip runs Metal: 512 MiB minimum (ollama PR #4068 "metal: add 512MiB to minimum memory, no partial
    # offloading overhead"), the memory Metal's working set: a 16 GiB Mac's on macOS 26, 12713.12 MB (slotstream#5's
    # 12.7 GB; #12912's log of macOS 15 printed 11453.25 MB, 2/3: tests/test_metal_working_set.py)
    est = ol.ENGINE.estimate(resolve("qwen3:8b"), (Device("MTL0", name="Apple M1", memory_bytes=16 * GiB),),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.9.0"))
    assert est.settings["library"] == "metal"
    assert est.devices[0].overhead_bytes == 512 * MiB
    assert round(est.devices[0].memory_bytes / 1e6, 2) == 12713.12
    assert 'memory.available="[11.8 GiB]"' in est.engine_view["ollama_log"]  # 12713.12 MB = 11.84 GiB
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


@pytest.mark.parametrize("version,num_ctx,parallel", [
    ("0.1.46", 2048, 1),  # before 17b7186cd (v0.2.0) one slot
    ("0.3.11", 2048, 4),  # gemma2-9b-q4_0-cpu-parallel4-0.3.11: --ctx-size 8192 --parallel 4 on a CPU
    ("0.9.0", 4096, 2),  # gemma3-12b-cpu-parallel2-ctx8192: --ctx-size 8192 --parallel 2 (defaultParallel 2)
    ("0.10.0", 4096, 1),  # 20c3266e9 "Reduce default parallelism to 1" (v0.9.7-rc0; first release 0.10.0)
    ("0.15.5", 4096, 1),  # the VRAM tier counts GPUs only (discover.GPUDevices): a CPU gets 4096
])
def test_cpu_only_defaults(version, num_ctx, parallel):
    """server/sched.go on a CPU-only machine: "simplifying assumption of defaultParallel when in CPU mode" (the
    automatic slots are not tried down to 1), and the default num_ctx of the release."""
    est = ol.ENGINE.estimate(resolve("llama3.1:8b", "Q4_K_M"), (), ol.OllamaSettings(engine_version=version))
    assert est.settings["library"] == "cpu"
    assert (est.settings["num_ctx"], est.settings["num_parallel"]) == (num_ctx, parallel)
    assert est.engine_view["n_ctx"] == num_ctx * parallel


def test_cpu_only_graph_only_when_layers_are_placed():
    """llm/memory.go: the CPU device gets the graph only when it holds layers (layerCounts > 0): num_gpu 0 adds
    none (ollama/ollama#10986, 0.9.0: memory.required.full 4.4 GiB, no graph); the default adds the full one."""
    spec = resolve("gemma3:4b", "Q4_K_M")
    env = (("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0"))  # as in the log's warnings
    s = ol.OllamaSettings(engine_version="0.9.0", num_ctx=4096, num_parallel=2, env=env)
    none = ol.ENGINE.estimate(spec, (), replace(s, num_gpu=0)).engine_view["ollama_memory"]
    full = ol.ENGINE.estimate(spec, (), s).engine_view["ollama_memory"]
    assert full["memory.required.full"] - none["memory.required.full"] == full["memory.graph.full"]
    assert _rounds_to(none["memory.required.full"], _printed("gemma3-4b-macos-num-gpu-0-cpu-0.9.0")["memory.required.full"])


def test_embedding_kv_one_head_per_layer():
    """A BERT GGUF has no head_count_kv: Ollama charges 1 head of n_embd / heads per layer (fs/ggml HeadCountKV
    default 1); bge-m3 at 8192 tokens: 24 x 8192 x 128 x 2 B = 48.0 MiB, graph 16 x 48 / 6 = 128.0 MiB, the
    figures of ollama/ollama#12938 (fixture bge-m3-metal-m3-ultra-0.13-layout)."""
    g = ol.gguf_view(resolve("bge-m3", "F16"))
    assert (g.heads_kv_max, g.key_length, g.value_length) == (1, 64, 64)
    gr = ol.graph_size(g, (0, 13, 0), num_ctx=8192, num_batch=512, num_parallel=1, kvct="", flash_attention=False)
    assert gr.kv_total == 48 * MiB and gr.full == gr.partial == 128 * MiB
    # a decoder-based embedding model keeps its GQA heads (qwen3-embedding: 8 KV heads x 128)
    q = ol.gguf_view(resolve("qwen3-embedding:4b", "Q4_K_M"))
    assert (q.heads_kv_max, q.key_length) == (8, 128)


def test_metal_minimum_is_in_the_printed_total():
    """ggml-org/llama.cpp#8886 (Ollama 0.3 on Metal, llama3.1:8b Q4_0, num_ctx 2048 x 4 slots): the printed
    memory.required.full "6.3 GiB" holds Metal's 512 MiB minimum (discover/gpu_darwin.go); with the 457 MiB of
    the other libraries the same estimate prints "6.2 GiB"."""
    spec = resolve("llama3.1:8b", "Q4_0")
    dev = (Device("GPU0", memory_bytes=16 * GiB, free_bytes=16 * GiB),)
    s = ol.OllamaSettings(engine_version="0.3.4", num_ctx=2048, num_parallel=4)
    metal = ol.ENGINE.estimate(spec, dev, replace(s, library="metal")).engine_view["ollama_memory"]
    cuda = ol.ENGINE.estimate(spec, dev, replace(s, library="cuda")).engine_view["ollama_memory"]
    printed = _printed("llama3.1-8b-q4_0-metal-16gib-0.3")
    assert _rounds_to(metal["memory.required.full"], printed["memory.required.full"])  # 6.3 GiB
    assert not _rounds_to(cuda["memory.required.full"], printed["memory.required.full"])  # 6.2 GiB
    assert metal["memory.required.full"] - cuda["memory.required.full"] == (512 - 457) * MiB
    assert metal["memory.graph.partial"] == metal["memory.graph.full"]  # no partial-offload graph on Metal
    assert _rounds_to(metal["memory.graph.full"], printed["memory.graph.partial"])  # "560.0 MiB"


def test_num_ctx_clamped_to_the_trained_context_from_0_9_3():
    """10a8e04a8 "avoid context overflow" (v0.9.3) caps num_ctx at the model's trained context; before, the runner
    got what was asked: nomic-embed-text (trained 2048) at num_ctx 8192 x 4 slots in 0.3.6 is what makes its
    printed 1.0 GiB (fixture nomic-embed-text-4070-parallel4-0.3)."""
    spec = resolve("nomic-embed-text", "F16")
    old = ol.ENGINE.estimate(spec, (), ol.OllamaSettings(engine_version="0.9.2", num_ctx=8192, num_parallel=1))
    new = ol.ENGINE.estimate(spec, (), ol.OllamaSettings(engine_version="0.9.3", num_ctx=8192, num_parallel=1))
    assert (old.settings["num_ctx"], new.settings["num_ctx"]) == (8192, spec.n_ctx_train) == (8192, 2048)
