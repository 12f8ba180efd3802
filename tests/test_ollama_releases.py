"""Ollama by release family, on Metal and CPU-only machines, for embedding models and with the vision projector.

tests/test_ollama.py holds every real-log fixture to the memory.* figures it prints; this file checks what those
fixtures cover (each release family, each kind of machine and model), the layout lines of v0.12.11+ ("model
weights" / "kv cache" / "compute graph" / "total memory" per device: llm/server.go createLayout with fs/ggml
GraphSize), and the exact per-layer byte requirements the Ollama engine prints at OLLAMA_DEBUG.

Ground truth: tests/fixtures/engine_logs/ollama/*.json (public logs, the thread cited in each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oomkit
from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.archs import NO_CACHE_ARCHS
from oomkit.model.resolve import resolve
from tests import test_ollama as tl
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama"
MiB, GiB = 1 << 20, 1 << 30
LAYOUT_LINES = ("model weights", "kv cache", "compute graph")


def _load(stem: str) -> dict:
    return tl._load(FIXTURES / f"{stem}.json")


def _family(version: str) -> str:
    """The release families the issue names (the memory arithmetic changed between them: settings.py V_*)."""
    v = ol.parse_version(version)
    if v < (0, 4, 0):
        return "0.1-0.3"
    if v < (0, 6, 0):
        return "0.4-0.5"
    if v < (0, 9, 0):
        return "0.6-0.8"
    if v < (0, 12, 11):
        return "0.9-0.12.10"
    return "0.12.11+ (layout)"


# ---------------------------------------------------------------------------------------------------------
# v0.12.11+: the per-device layout lines


def _layout_fixtures() -> list[Path]:
    """The llama engine's layout logs (the Ollama engine's are tests/test_ollama_new_engine.py's)."""
    out = []
    for p in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(p.read_text())
        if "total memory" in fx["printed"] and "model weights" in fx["printed"] \
                and fx["settings"].get("engine") != "ollama-engine":
            out.append(p)
    return out


def _layout_estimate(fx: dict):
    s, p = fx["settings"], fx["printed"]
    free = p["gpu_memory.available_bytes"]
    dev = Device(id="GPU0", name="GPU", memory_bytes=free, free_bytes=free)
    settings = ol.OllamaSettings(num_ctx=s.get("num_ctx") or 0, num_parallel=s.get("num_parallel") or 0,
                                 library=s.get("library") or "", engine_version=tl._log_version(fx))
    return ol.ENGINE.estimate(tl._spec(fx), (dev,), settings)


@pytest.mark.parametrize("path", _layout_fixtures(), ids=lambda p: p.stem)
def test_layout_lines(path):
    """Each printed per-device line, summed over the devices, within its printed rounding (KV and graph are
    GraphSize's closed formulas; weights the file's layer groups)."""
    fx = tl._load(path)
    est = _layout_estimate(fx)
    assert est.engine_view["ollama_era"] == "C"
    mine = est.engine_view["ollama_memory"]
    p = fx["printed"]
    for line in LAYOUT_LINES:
        printed = list(p[line].values())[0]
        want = sum(p[line + "_bytes"].values())
        got = sum(v for k, v in mine[line].items() if k != "CPU")
        assert abs(got - want) <= tl._unit(printed), (line, ol.human_bytes2(got), printed)
    assert abs(mine["total memory"] - p["total memory_bytes"]) <= tl._unit(p["total memory"])


# ---------------------------------------------------------------------------------------------------------
# The Ollama engine's exact per-layer requirements (OLLAMA_DEBUG "msg=memory" line, v0.12.x)


def test_ollama_engine_per_layer_bytes():
    """qwen3:32b Q4_K_M (ollama/ollama#13372): the runner's KV per layer, the token embeddings kept on the CPU,
    the output layer and all 64 blocks, byte for byte. The library file was quantized by the llama.cpp Ollama
    vendored in v0.6.2-v0.6.8, which left every attn_v at F16 (its `name.find("v.")` vision filter): blocks of
    315,638,784 B (ffn_down Q6_K, use_more_bits) and 281,846,784 B (ffn_down Q4_K); the plain Q4_K_M recipe
    (attn_v Q6_K / Q4_K) would give 309,453,824 / 274,310,144 B, 2.30% short. The same file's tensor counts in
    ollama/ollama#14774 (f32 257, f16 64, q4_K 353, q6_K 33; 18.81 GiB) are checked too."""
    fx = _load("qwen3-32b-multi-gpu-0.13-debug-memory")
    p = fx["printed"]
    spec = ol.ollama_gguf(resolve("qwen3:32b", "Q4_K_M"))
    g = ol.gguf_view(spec)
    weights = ol.per_layer_weights(g)
    printed = p["required.CUDA2.Weights"]
    assert len(weights) == len(printed) == 65
    assert weights == printed  # 64 blocks + output_norm/output.weight (Q6_K) 638,151,680
    assert sum(weights) == p["required.CUDA2.Weights_sum_bytes"] == 19_757_689_856
    token_embd = sum(t.nbytes for t in spec.weights.tensors if t.name.startswith("token_embd"))
    assert token_embd == p["required.InputWeights"] == 437_575_680
    cache = ol.causal_cache(spec, (0, 13, 0), 16384, 1, 512, "f16", True)
    assert set(cache.bytes_by_layer.values()) == {p["required.CUDA2.Cache_per_layer"]} == {67_108_864}
    counts: dict[str, int] = {}
    for t in spec.weights.tensors:
        counts[t.dtype] = counts.get(t.dtype, 0) + 1
    assert counts == {"f32": 257, "f16": 64, "q4_K": 353, "q6_K": 33}  # ollama/ollama#14774
    assert f"{spec.weights.nbytes / GiB:.2f}" == "18.81"


# ---------------------------------------------------------------------------------------------------------
# What the real logs cover


def _checked() -> list[tuple[str, dict, str]]:
    """(stem, fixture, release) of every fixture a test above or tests/test_ollama.py holds to its figures."""
    out = []
    layout = {p.stem for p in _layout_fixtures()}
    for path in tl._fixtures():
        fx = tl._load(path)
        p = fx["printed"]
        engine_lines = fx["settings"].get("engine") == "ollama-engine" and "total memory" in p  # test_ollama_new_engine
        if path.stem in layout or path.stem == "qwen3-32b-multi-gpu-0.13-debug-memory" or engine_lines \
                or any(k in p for k in tl.TOLERANCE):
            out.append((path.stem, fx, tl._log_version(fx)))
    return out


def _is_embedding(fx: dict) -> bool:
    spec = tl._spec(fx)
    return spec.architecture in NO_CACHE_ARCHS or "embed" in fx["model"].split()[0]


def _library(fx: dict) -> str:
    return str(fx["settings"].get("library") or fx["printed"].get("library") or "").lower()


def _new_engine(fx: dict) -> bool:
    return "--ollama-engine" in fx.get("quoted", "") or "--ollama-engine" in fx.get("command", "") \
        or fx["settings"].get("engine") == "ollama-engine" or "total memory" in fx["printed"]


def test_every_release_family_has_two_logs():
    families: dict[str, list[str]] = {}
    for stem, _, version in _checked():
        families.setdefault(_family(version), []).append(stem)
    for family in ("0.1-0.3", "0.4-0.5", "0.6-0.8", "0.9-0.12.10", "0.12.11+ (layout)"):
        assert len(families.get(family, [])) >= 2, (family, families.get(family))
    for minor in (1, 9):  # the 0.1 series and 0.9 themselves, not only their families
        logs = [s for s, _, v in _checked() if ol.parse_version(v)[:2] == (0, minor)]
        assert len(logs) >= 1 + (minor == 9), (minor, logs)
    assert sum(_new_engine(fx) for _, fx, _ in _checked()) >= 2


def test_machines_and_models_covered():
    checked = _checked()
    assert sum(_library(fx) == "metal" for _, fx, _ in checked) >= 3
    assert sum(_library(fx) == "cpu" for _, fx, _ in checked) >= 2
    assert sum(_is_embedding(fx) for _, fx, _ in checked) >= 3
    assert sum("projector.weights" in fx["printed"] for _, fx, _ in checked) >= 2


@pytest.mark.parametrize("stem", ["gemma3-12b-11gib-gpu-ctx8192-partial", "gemma3-12b-num-gpu-49-11gib-ctx2048-0.11",
                                  "gemma3-12b-cpu-parallel2-ctx8192"])
def test_projector_goes_with_the_output_layer_from_0_7_1(stem):
    """gemma3:12b, three logs of one blob: ollama/ollama#12000 (0.11.7, 11.1 GiB free: 48 of 49 layers,
    memory.required.partial 8.9 GiB, full 11.4 GiB = 8.9 + the last layer that did not fit: output 787.5 MiB +
    projector 795.9 MiB + its graph 1.0 GiB), #11819 (0.11.4, num_gpu 49 on 10.9 GiB: 8.5 / 11.0 GiB) and
    atineiatte/deep-research-at-home#14 (0.9.0, CPU only, 2 slots: 10.5 GiB). From v0.7.1 (d75557747) the Ollama
    engine's projector rides with the output layer instead of being reserved on the first GPU. The catalog's
    gemma3:12b carries its own SigLIP tower (projector.weights 795.9 MiB, as in the 4b logs)."""
    from oomkit.engines.ollama.projector import projector

    siglip = projector(resolve("gemma3:12b", "Q4_K_M"))
    fx = _load(stem)
    p = fx["printed"]
    est = tl._run_fixture(fx)
    mine = est.engine_view["ollama_memory"]
    assert tl._logged_offload(est) == p["layers.offload"]
    for field in ("memory.required.full", "memory.required.partial", "memory.required.kv", "memory.graph.full",
                  "memory.graph.partial", "projector.graph"):
        assert ol.human_bytes2(mine[field]) == p[field], field
    assert ol.human_bytes2(mine["projector.weights"]) == p["projector.weights"]  # the SigLIP encoder's v.* tensors
    if stem == "gemma3-12b-11gib-gpu-ctx8192-partial":
        # the pre-v0.7.1 rule (projector reserved on the first GPU) puts the same 48 layers there but charges
        # the GPU the projector too: 10.6 GiB, not the printed 8.9
        old = ol.estimate_gpu_layers(ol.gguf_view(ol.ollama_gguf(tl._spec(fx))), (0, 11, 7),
                                     [ol.OGpu(id="GPU0", free=p["memory.available_bytes"][0], minimum=457 * MiB,
                                              library="cuda")], 8192, 512, 1, "", False, -1, 0,
                                     projector_weights=siglip.weights + siglip.graph)
        assert old.layers == 48 and ol.human_bytes2(old.vram) == "10.6 GiB" != p["memory.required.partial"]


def test_pooled_estimator_of_0_1_33_to_0_1_44():
    """v0.1.39 (ollama/ollama#4636, aya:35b-23-q8_0 on 7.8 GiB): llm/memory.go EstimateGPULayers before v0.1.45
    pools the GPUs' free memory and prints msg="offload to gpu" with layers.real; every printed figure is
    reproduced to the digit (5 layers, full 38.9 GiB, partial 7.7 GiB). The v0.1.45 per-GPU estimator would
    print 4 layers and 40.5 GiB for the same load."""
    fx = _load("aya-35b-q8-cuda-7.8gib-0.1.39-offload-to-gpu")
    p = fx["printed"]
    est = tl._run_fixture(fx)
    line = est.engine_view["ollama_log"]
    assert line.startswith('msg="offload to gpu" layers.requested=-1 layers.real=5 ')
    for field, printed in p.items():
        if field.startswith("memory.") and isinstance(printed, str):
            assert f'{field}="{printed}"' in line, field
    assert 'memory.available="7.8 GiB"' in line
    newer = tl._run_fixture({**fx, "engine_version": "0.1.45"})
    assert tl._logged_offload(newer) == 4 and 'memory.required.full="40.5 GiB"' in newer.engine_view["ollama_log"]


def test_ollama_engine_weights_by_device_with_the_vision_encoder():
    """ollama/ollama#11090 (a build of "New Memory Management", July 2025; mistral3 Q8_0, 41/41 layers on two GPUs):
    "model weights" CPU 680.0 MiB is the input layer (token_embd Q8_0), exactly; the GPUs' 11.5 + 11.9 GiB hold
    the text layers and the vision tower (v.* encoder and mm.* projector ride with the output layer): oomkit's
    measured layout puts 23.48 GiB there. Mistral Small 3.1's library Q8_0 (attn_v F16) would be 23.66 GiB,
    outside the printed sum."""
    fx = _load("mistral-small3.2-24b-q8-2gpu-new-memory-pr11090")
    p = fx["printed"]
    dev = Device(id="CUDA0", name="GPU", memory_bytes=48 * GiB, free_bytes=48 * GiB)
    est = ol.ENGINE.estimate(resolve("mistral-small3.2", "Q8_0"), (dev,),
                             ol.OllamaSettings(num_ctx=4096, engine_version="0.11.5",
                                               env=(("OLLAMA_NEW_ESTIMATES", "1"),)))
    mine = est.engine_view["ollama_memory"]["model weights"]
    assert ol.human_bytes2(mine["CPU"]) == p["model_weights_CPU"] and mine["CPU"] == p["model_weights_CPU_bytes"]
    gpus = sum(v for k, v in mine.items() if k != "CPU")
    printed = p["model_weights_CUDA0_bytes"] + p["model_weights_CUDA1_bytes"]
    assert abs(gpus - printed) <= 2 * tl._unit(p["model_weights_CUDA0"])
    old = ol.ollama_gguf(resolve("mistral-small3.1", "Q8_0"))
    old_gpus = sum(ol.per_layer_weights(ol.gguf_view(old))) + (gpus - sum(ol.per_layer_weights(
        ol.gguf_view(ol.ollama_gguf(resolve("mistral-small3.2", "Q8_0"))))))
    assert abs(old_gpus - printed) > 2 * tl._unit(p["model_weights_CUDA0"])


def test_llama_server_runner_of_0_30():
    """Ollama 0.30 (ollama/ollama#16031, a release candidate; llama-server runner): qwen3:4b-thinking-2507 Q4_K_M
    on two GPUs gets llama-server's n_ctx 262144 (the trained context: Ollama's default with >= 47 GiB of VRAM) and
    n_batch = n_ubatch 2048; the GPUs' model buffers hold the whole file (974.88 + 1401.03 MiB, the tied
    token_embd duplicated as the output) and the CPU the input copy (304.28 MiB). The free memory per GPU is not
    in the excerpt (32 + 24 GiB assumed), so the split between them is not compared."""
    fx = _load("qwen3-4b-2507-llama-server-0.30-2gpu-262k")
    p = fx["printed"]
    devs = (Device(id="CUDA0", name="GPU", memory_bytes=32 * GiB, free_bytes=30 * GiB),
            Device(id="CUDA1", name="GPU", memory_bytes=24 * GiB, free_bytes=22 * GiB))
    est = ol.ENGINE.estimate(resolve("Qwen/Qwen3-4B-Thinking-2507", "Q4_K_M"), devs,
                             ol.OllamaSettings(engine_version="0.30.0"))
    v = est.engine_view
    assert v["ollama_era"] == "D"
    assert (v["n_ctx"], v["n_ubatch"]) == (p["n_ctx"], p["n_ubatch"])
    assert v["offloaded_layers"] == p["offloaded"]
    buf = v["model_buffer_bytes"]
    gpus = sum(b for k, b in buf.items() if k.startswith("CUDA"))
    cpu = sum(b for k, b in buf.items() if k.startswith("CPU"))
    assert abs(gpus - p["model_buffer_CUDA0_bytes"] - p["model_buffer_CUDA1_bytes"]) <= 0.01 * MiB
    assert abs(cpu - p["model_buffer_CPU_bytes"]) <= 0.005 * MiB


@pytest.mark.parametrize("stem", ["gemma3-12b-cpu-parallel2-ctx8192", "gemma3-4b-macos-num-gpu-0-cpu-0.9.0",
                                  "gemma2-9b-q4_0-cpu-parallel4-0.3.11", "llama3-8b-q4_0-intel-mac-cpu-parallel4-0.2"])
def test_cpu_only_allocation(stem):
    """CPU only, Ollama counts the system RAM as one device: its memory.required.allocations is the whole load
    (10.5 / 8.4 / 5.8 GiB, = memory.required.full) or, with num_gpu 0, only the one-layer buffer (62.8 MiB,
    ollama/ollama#10986); layers.split is the empty string before v0.11.5."""
    fx = _load(stem)
    est = tl._run_fixture(fx)
    line = est.engine_view["ollama_log"]
    assert f'memory.required.allocations="[{fx["printed"]["memory.required.allocations"][0]}]"' in line
    assert 'layers.split="" ' in line


def test_cpu_only_split_from_0_11_5():
    """From v0.11.5 (d5a0d8d90) layers.split is a Go slice; CPU only it stays nil, so Ollama prints
    `layers.split=[]` with layers.offload=0 (llm/memory.go v0.11.5-v0.12.10: estimateGPULayers returns before
    TensorSplit is set when gpus[0].Library == "cpu" / there are no GPUs), not a layer count."""
    fx = _load("gemma3-12b-cpu-parallel2-ctx8192")
    est = tl._run_fixture({**fx, "engine_version": "0.12.3"})
    line = est.engine_view["ollama_log"]
    assert "library=cpu" in line and "layers.offload=0 layers.split=[] " in line
    assert 'memory.required.allocations="[' + fx["printed"]["memory.required.allocations"][0] + ']"' in line


def test_ollama_engine_runner_weights_of_mistral_small_3_1():
    """The 0.6.6 log of mistral-small3.1 (ollama/ollama#10417): the Ollama engine's "model weights" buffer=CUDA0
    13.9 GiB with all 41 layers there = the library file's blocks (attn_v F16: 12.73 GiB) + output.weight Q4_K
    (360.0 MiB) + the vision encoder (769.3 MiB) + its mm.* projector (68.0 MiB) = 13.90 GiB; the token
    embeddings stay on the CPU. With the recipe's attn_v Q6_K/Q4_K it would be 13.65 GiB ("13.6 GiB")."""
    from oomkit.engines.ollama.projector import projector

    fx = _load("mistral-small3.1-24b-3090-ctx4096-fa")
    p = fx["printed"]
    spec = ol.ollama_gguf(resolve("mistral-small3.1", "Q4_K_M"))
    on_gpu = sum(ol.per_layer_weights(ol.gguf_view(spec))) + projector(spec).allocated
    assert ol.human_bytes2(on_gpu) == p["model_weights_CUDA0"]


def test_the_runners_build_note_names_the_ollama_release():
    """Ollama 0.32.15 runs llama.cpp b10488 (its LLAMA_CPP_VERSION), past the builds oomkit dates by number: the
    note says which release chose that build, in place of the plain llama.cpp note (settings.version_warning)."""
    est = oomkit.estimate("qwen3:8b", "ollama", vram="24GiB", engine_version="0.32.15", find_max_context=False)
    notes = [w for w in est.warnings if "newer than the newest build oomkit models" in w]
    assert len(notes) == 1 and notes[0].startswith("Ollama 0.32.15 runs llama.cpp build b10488, newer than")


# ---------------------------------------------------------------------------------------------------------
# Which runner, flash-attention default and parallel slots each release gives an architecture: the lists of
# fs/ggml/ggml.go (KV.OllamaEngineRequired, GGML.FlashAttention) and server/sched.go (the one-slot list) read at
# every tag (`git show vX.Y.Z:fs/ggml/ggml.go`); each pair is the last tag without the name and the first with it


@pytest.mark.parametrize("arch,before,first", [
    ("gptoss", "0.10.1", "0.11.0"), ("gpt-oss", "0.11.4", "0.11.5"),
    ("qwen3", "0.11.11", "0.12.0"), ("qwen3moe", "0.12.1", "0.12.2"),
    ("qwen3vl", "0.12.6", "0.12.7"), ("deepseek2", "0.12.11", "0.13.0"), ("deepseekocr", "0.12.11", "0.13.0"),
    ("nomic-bert", "0.13.0", "0.13.1"), ("olmo3", "0.13.3", "0.13.4"), ("bert", "0.13.4", "0.13.5"),
    ("glm4moelite", "0.14.2", "0.14.3"), ("lfm2", "0.14.2", "0.14.3"),
    ("glmocr", "0.15.4", "0.15.5"), ("qwen3next", "0.15.4", "0.15.5"),
    ("qwen35", "0.17.0", "0.17.1"), ("nemotron_h", "0.17.0", "0.17.1"), ("nemotron_h_moe", "0.17.0", "0.17.1"),
    ("lfm2moe", "0.17.0", "0.17.1"), ("gemma4", "0.19.0", "0.20.0"),
    ("laguna", "0.21.2", "0.22.0"), ("nemotron_h_omni", "0.21.2", "0.22.0"),
])
def test_ollama_engine_required_first_tag(arch, before, first):
    from oomkit.engines.ollama.launch import own_engine_archs

    assert arch not in own_engine_archs(ol.parse_version(before))
    assert arch in own_engine_archs(ol.parse_version(first))


def test_qwen3_left_the_ollama_engine_in_0_12_5_only():
    """v0.12.5's list lacks qwen3 (3d32249c7, #12556 "use llama runner for qwen3"), v0.12.6 has it again
    (18087f2ec, the revert); qwen3moe, listed from v0.12.2, stayed."""
    from oomkit.engines.ollama.launch import own_engine_archs

    assert [("qwen3" in own_engine_archs(ol.parse_version(v))) for v in ("0.12.4", "0.12.5", "0.12.6")] == \
        [True, False, True]
    assert "qwen3moe" in own_engine_archs((0, 12, 5))


def _launch(name: str, version: str, num_parallel: int = 0):
    gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24 * GiB, free_bytes=24 * GiB)
    est = ol.ENGINE.estimate(resolve(name, "Q4_K_M"), (gpu,),
                             ol.OllamaSettings(num_ctx=4096, num_parallel=num_parallel, engine_version=version))
    return est.engine_view["ollama_runner"], est.settings["flash_attention"]


@pytest.mark.parametrize("name,version,runner", [
    ("qwen3:8b", "0.12.4", "Ollama engine"), ("qwen3:8b", "0.12.5", "llama.cpp runner"),
    ("qwen3:8b", "0.12.6", "Ollama engine"),
    ("qwen3:30b", "0.12.1", "llama.cpp runner"), ("qwen3:30b", "0.12.2", "Ollama engine"),
    ("qwen3:30b", "0.12.5", "Ollama engine"),
    ("nomic-embed-text", "0.13.0", "llama.cpp runner"), ("nomic-embed-text", "0.13.1", "Ollama engine"),
    ("bge-m3", "0.13.4", "llama.cpp runner"), ("bge-m3", "0.13.5", "Ollama engine"),
    ("lfm2:1.2b", "0.14.2", "llama.cpp runner"), ("lfm2:1.2b", "0.14.3", "Ollama engine"),
    ("qwen3-next:80b", "0.15.4", "llama.cpp runner"), ("qwen3-next:80b", "0.15.5", "Ollama engine"),
    ("gpt-oss:20b", "0.11.0", "Ollama engine"),  # the library's GGUF is "gptoss" (convert/convert_gptoss.go)
])
def test_runner_around_each_boundary(name, version, runner):
    assert _launch(name, version)[0] == runner


@pytest.mark.parametrize("arch,before,first", [
    ("mistral3", "0.13.1", "0.13.2"), ("olmo3", "0.13.3", "0.13.4"), ("bert", "0.13.4", "0.13.5"),
    ("lfm2", "0.14.2", "0.14.3"), ("glm4moelite", "0.14.2", "0.14.3"), ("qwen3next", "0.15.4", "0.15.5"),
    ("qwen35", "0.17.0", "0.17.1"), ("nemotron_h", "0.17.0", "0.17.1"), ("gemma4", "0.20.3", "0.20.4"),
    ("nemotron_h_omni", "0.21.2", "0.22.0"),
])
def test_flash_attention_default_first_tag(arch, before, first):
    from oomkit.engines.ollama.launch import _fa_default_archs

    assert arch not in _fa_default_archs(ol.parse_version(before))
    assert arch in _fa_default_archs(ol.parse_version(first))


def test_lfm2_flash_attention_on_from_0_14_3():
    """lfm2 (no OLLAMA_FLASH_ATTENTION) on the llama runner until v0.14.2: fs/ggml OllamaEngineRequired and
    model/models/models.go lack it, so llm/server.go NewLlamaServer has no textProcessor and sends the load request
    the llama runner's flash attention: Disabled at v0.13.3 (f.FlashAttention() does not list lfm2), Auto from
    bd6c1d6b4 (v0.13.4, faUserSet false -> ml.FlashAttentionAuto). v0.14.3 lists lfm2 in OllamaEngineRequired and
    in FlashAttention(): the Ollama engine's own rule turns it on."""
    assert [_launch("lfm2:1.2b", v)[1] for v in ("0.13.3", "0.13.4", "0.14.2", "0.14.3")] == \
        ["off", "auto", "auto", "on"]


@pytest.mark.parametrize("name,version,slots", [
    ("lfm2:1.2b", "0.15.4", 2), ("lfm2:1.2b", "0.15.5", 1),  # server/sched.go's one-slot list has lfm2 from v0.15.5
    ("qwen3-next:80b", "0.15.5", 1),
])
def test_one_slot_architectures_by_release(name, version, slots):
    gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24 * GiB, free_bytes=24 * GiB)
    est = ol.ENGINE.estimate(resolve(name, "Q4_K_M"), (gpu,),
                             ol.OllamaSettings(num_ctx=4096, num_parallel=2, engine_version=version))
    assert est.settings["num_parallel"] == slots


@pytest.mark.parametrize("version,allocated", [("0.1.48", False), ("0.1.49", True), ("0.12.6", True),
                                               ("0.12.7", True), ("0.24.0", True), ("0.30.0", False)])
def test_gpu_less_load_allocates_its_weights(version, allocated):
    """llm/server.go: "For CPU loads we want the memory to be allocated, not FS cache" -- --no-mmap where the GPU
    list is the CPU (17b7186cd, first in v0.1.49: gpus[0].Library == "cpu"; v0.12.7 on: len(gpus) == 0) until
    llama-server replaced the runner (v0.30.0); a GPU in the list keeps the file mapped (CPU_Mapped)."""
    spec = resolve("llama3:8b", "Q4_0")
    cpu = ol.ENGINE.estimate(spec, (), ol.OllamaSettings(num_ctx=4096, engine_version=version)).engine_view
    assert ("--no-mmap" in cpu["ollama_launch"]) is allocated
    if allocated:
        assert set(cpu["model_buffer_bytes"]) == {"CPU"}
        gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24 * GiB, free_bytes=24 * GiB)
        on_gpu = ol.ENGINE.estimate(spec, (gpu,), ol.OllamaSettings(num_ctx=4096, engine_version=version))
        assert "--no-mmap" not in on_gpu.engine_view["ollama_launch"]
        if version != "0.1.49":  # the llama.cpp it vendors names a mapped buffer "CPU" too
            assert "CPU_Mapped" in on_gpu.engine_view["model_buffer_bytes"]
