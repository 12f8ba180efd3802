"""The Ollama engine (runner/ollamarunner, ml/backend/ggml) laid out from its own allocations, v0.11.5+: the
per-device "model weights" / "kv cache" / "compute graph" / "total memory" lines (ml/backend.go, from v0.12.4
ml/device.go BackendMemory.Log) held against public logs.

What the engine allocates, per the source (ollama/ollama, tags cited):
- weights: each block's tensors on the device its layer is assigned to, the output layer (output_norm, output
  or the tied token_embd) with the last; token_embd itself in the input buffer type, always the CPU
  (ml/backend/ggml/ggml.go New: requiredMemory.InputWeights);
- KV cache: kvcache/causal.go, per layer on the layer's device, PAD(np x num_ctx, 256) cells for full layers
  and PAD(np x SWA memory + batch, 256) for sliding-window ones (engines/ollama/kv.py);
- compute graph: runner/ollamarunner/runner.go reserveWorstCaseGraph (v0.7.0+): one batch of num_batch tokens
  whose batch.Outputs has `parallel` rows, so the logits are parallel x n_vocab; ml/backend/ggml Context.Reserve
  records ggml_backend_sched_get_attempted_buffer_size per backend. With every layer on a GPU the CPU keeps only
  the input layer's get_rows output (num_batch x n_embd F32); with layers left on the CPU it computes them.
  From v0.12.4 a CUDA GPU's figure also holds the backend's scratch pool (patch 0022: engines/ollama/cuda_pool.py).

Ground truth: tests/fixtures/engine_logs/ollama/*.json with settings.engine == "ollama-engine" (source in each).
KV and weights must land on the printed figure (HumanBytes2: one decimal); compute within 10%, else a strict
xfail carrying the measured error."""

from __future__ import annotations

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama import projector as ol_projector
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests import test_ollama as tl
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)
from tests.test_ollama_releases import _load

MiB, GiB = 1 << 20, 1 << 30
COMPUTE_TOLERANCE = 0.10


def _within(got: int, printed: str, want: int) -> bool:
    """Equal to the printed figure within its rounding (half of the last printed digit)."""
    return abs(got - want) <= tl._unit(printed)


def _gpt_oss_cpu():
    fx = _load("gpt-oss-20b-cpu-only-0.13-ctx16000")
    s = fx["settings"]
    est = ol.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), (),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               num_batch=s["num_batch"], engine_version=tl._log_version(fx)))
    return fx, est


def test_gpt_oss_20b_cpu_only_weights_kv_and_layers():
    """ollama/ollama#13320 (0.12.11-0.13.2, gpt-oss:20b, KvSize 16000, no GPU): "offloaded 0/25 layers",
    "model weights" CPU 12.8 GiB (the MXFP4 blob, token_embd included), "kv cache" CPU 486.0 MiB = 12 full
    layers x 16128 cells + 12 sliding-window layers x 4608 cells (4096 SWA memory + 512 batch) x 2048 B, and
    "total memory" 13.4 GiB."""
    fx, est = _gpt_oss_cpu()
    p = fx["printed"]
    mine = est.engine_view["ollama_memory"]
    assert est.engine_view["ollama_runner"] == "Ollama engine"
    assert est.engine_view["ollama_layers"] == f"{p['layers.offload']}/{p['layers.model']}"
    for line in ("model weights", "kv cache"):
        assert set(mine[line]) == set(p[line]) == {"CPU"}
        assert _within(mine[line]["CPU"], p[line]["CPU"], p[line + "_bytes"]["CPU"]), (line, mine[line])
    assert mine["kv cache"]["CPU"] == 486 * MiB  # no rounding left: 12 x 16128 x 2048 + 12 x 4608 x 2048
    assert ol.human_bytes2(mine["total memory"]) == p["total memory"]


def test_gpt_oss_20b_cpu_only_graph_on_the_cpu():
    """With no layer on a GPU the CPU buffer holds the whole worst-case graph, not the input rows alone
    (512 x 2880 x 4 = 5.6 MiB); the printed 139.5 MiB is far from both."""
    fx, est = _gpt_oss_cpu()
    got = est.engine_view["ollama_memory"]["compute graph"]["CPU"]
    assert got > 512 * 2880 * 4 * 10
    assert set(fx["printed"]["compute graph"]) == {"CPU"}


def test_gpt_oss_20b_cpu_only_graph_is_ollamas_own():
    """Ollama's own gpt-oss graph (model/models/gptoss, engines/ollama/graph.py): the F16 casts of the two masks
    (16128 and 4608 cells x 512 rows x 2 B = 20.25 MiB), the MoE block's fused gate_up rows, its contiguous gate
    and up halves, the residual, attention output and one hidden row (512 x 55936 floats = 109.25 MiB) and, the
    full mask being larger than the hole the qkv and hidden rows leave, the qkv rows (10 MiB): 139.50 MiB, the
    printed "139.5 MiB" (it was 110.2 MiB with llama.cpp's graph, -21%)."""
    fx, est = _gpt_oss_cpu()
    mine = est.engine_view["ollama_memory"]
    got = mine["compute graph"]["CPU"]
    assert got == 146276352
    assert ol.human_bytes2(got) == fx["printed"]["compute graph"]["CPU"]
    assert ol.human_bytes2(mine["total memory"]) == fx["printed"]["total memory"]


def test_gpt_oss_20b_cpu_only_0_11_graph_without_masks():
    """ollama/ollama#12147 (2025-09-02: 0.11.8-0.11.9, gpt-oss:20b, 0/25 layers, 8192 cells): "kv cache" 300.0 MiB
    and "compute graph" device=CPU 109.2 MiB. Before v0.12.7 the reserve mask was an F16 input of its own
    (kvcache/causal.go buildMask), so the buffer holds the MoE rows alone: 512 x 55936 x 4 B = 109.25 MiB. The
    runner's allocations do not depend on the estimator; OLLAMA_NEW_ESTIMATES makes oomkit lay them out."""
    fx = _load("gpt-oss-20b-cpu-only-0.11-ctx8192")
    s, p = fx["settings"], fx["printed"]
    est = ol.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), (),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               num_batch=s["num_batch"], engine_version=tl._log_version(fx),
                                               env=(("OLLAMA_NEW_ESTIMATES", "1"),)))
    mine = est.engine_view["ollama_memory"]
    assert mine["compute graph"]["CPU"] == 512 * 55936 * 4
    for line in ("model weights", "kv cache", "compute graph"):
        assert ol.human_bytes2(mine[line]["CPU"]) == p[line]["CPU"], line


@pytest.mark.parametrize("version", ["0.13.5", "0.14.0"])
def test_gpt_oss_cpu_graph_only_in_the_mirrored_releases(version):
    """After v0.13.4 (no mask padding, the graph not checked) the llama.cpp stand-in stays."""
    fx = _load("gpt-oss-20b-cpu-only-0.13-ctx16000")
    s = fx["settings"]
    est = ol.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), (),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               num_batch=s["num_batch"], engine_version=version))
    assert est.engine_view["ollama_memory"]["compute graph"]["CPU"] != 146276352


def _qwen3_32b(version: str, name: str = "GPU"):
    dev = with_facts(Device(id="CUDA2", name=name, memory_bytes=48 * GiB, free_bytes=48 * GiB))
    return ol.ENGINE.estimate(resolve("qwen3:32b", "Q4_K_M"), (dev,),
                              ol.OllamaSettings(num_ctx=16384, num_parallel=1, engine_version=version))


@pytest.mark.parametrize("version", ["0.12.4", "0.13.2"])
def test_qwen3_32b_all_layers_on_one_gpu(version):
    """ollama/ollama#13372 (qwen3:32b, OLLAMA_DEBUG, one of 0.12.4-0.13.2): every block and the output layer on
    CUDA2 (the 65 Weights entries), the token embeddings and the get_rows rows on the CPU."""
    p = _load("qwen3-32b-multi-gpu-0.13-debug-memory")["printed"]
    est = _qwen3_32b(version)
    mine = est.engine_view["ollama_memory"]
    assert est.engine_view["ollama_layers"] == f"{len(p['required.CUDA2.Weights'])}/65"
    assert mine["model weights"] == {"CUDA2": p["required.CUDA2.Weights_sum_bytes"], "CPU": p["required.InputWeights"]}
    assert mine["kv cache"] == {"CUDA2": 64 * p["required.CUDA2.Cache_per_layer"]}
    assert mine["compute graph"]["CPU"] == p["required.CPU.Graph"]


@pytest.mark.parametrize("version", ["0.12.4"])
def test_qwen3_32b_graph_from_the_total(version):
    """ollama/ollama#13372 on an A800 (108 SMs, compute 8.0), v0.12.4 (its device.go:233/238 and server.go:720 are
    v0.12.4-v0.12.5's, and v0.12.5 ran qwen3 on the llama.cpp runner, not ollamaServer.Load): the printed total (23.1 GiB, everything else in it exact) leaves 237.5-339.9 MiB for CUDA2's
    compute graph. That is ggml-alloc's buffer for Ollama's qwen3 graph, 202.0 MiB (graph.py qwen3_gpu_graph, the
    reserve mask an F16 input before v0.12.7), plus the CUDA pool Ollama's patch 0022 adds to it from v0.12.4
    (cuda_pool.py): the mma flash-attention kernel's dst_tmp_meta for 512 tiles, 132 MiB. 334.0 MiB; without the
    pool 202.0 (total 23.0 GiB), the llama.cpp stand-in 212.0 and with the pool 344.0 (23.2 GiB)."""
    p = _load("qwen3-32b-multi-gpu-0.13-debug-memory")["printed"]
    mine = _qwen3_32b(version, "NVIDIA A800-SXM4-80GB").engine_view["ollama_memory"]
    graph = mine["compute graph"]["CUDA2"]
    assert graph == 4 * 512 * (3 * 25600 + 2 * 5120 + 64 * 128) + 2 * 16384 * 512 + 4 * 512 + 128 + 132 * MiB
    rest = p["total_memory_bytes"] - (mine["total memory"] - graph)
    assert abs(graph - rest) <= tl._unit(p["total_memory"])
    assert ol.human_bytes2(mine["total memory"]) == p["total_memory"]


def test_qwen3_32b_graph_without_the_pool_misses_the_total():
    """The same load on a GPU oomkit knows no SM count for: no pool term, 202.0 MiB, and the total (23.0 GiB) is
    not the printed 23.1 GiB."""
    p = _load("qwen3-32b-multi-gpu-0.13-debug-memory")["printed"]
    mine = _qwen3_32b("0.12.4").engine_view["ollama_memory"]
    assert ol.human_bytes2(mine["total memory"]) != p["total_memory"]
    assert mine["compute graph"]["CUDA2"] < 237.5 * MiB


def _gpt_oss_vulkan():
    """ollama/ollama#12913 (0.12.8-0.12.9, Vulkan0, DEBUG): the free memory is not in the excerpt, so the split is
    the one the KV lines give (10 blocks on Vulkan0: 5 full x 256 MiB + 5 sliding-window x 9 MiB = 1.3 GiB),
    passed as num_gpu; flash attention off, as the 16.6 GiB graph shows."""
    fx = _load("gpt-oss-20b-vulkan-partial-ctx131072-no-fa-0.12.9")
    s = fx["settings"]
    dev = Device(id="Vulkan0", name="GPU", memory_bytes=24 * GiB, free_bytes=24 * GiB)
    est = ol.ENGINE.estimate(resolve("gpt-oss:20b", "MXFP4_MOE"), (dev,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               num_gpu=s["gpu_layers_inferred"], flash_attention="0",
                                               library="vulkan", engine_version=tl._log_version(fx)))
    return fx, est


def test_gpt_oss_20b_vulkan_split_weights_and_kv_per_device():
    """Blocks 14-23 and their caches on Vulkan0, the rest and the input layer on the CPU: "model weights" 4.4 /
    8.4 GiB and "kv cache" 1.3 / 1.8 GiB, each device on its printed figure."""
    fx, est = _gpt_oss_vulkan()
    p = fx["printed"]
    mine = est.engine_view["ollama_memory"]
    assert est.engine_view["ollama_era"] == "B" and est.settings["flash_attention"] == "off"
    for line in ("model weights", "kv cache"):
        assert set(mine[line]) == set(p[line]), line
        for d in p[line]:
            assert _within(mine[line][d], p[line][d], p[line + "_bytes"][d]), (line, d, mine[line][d] / MiB)


def test_gpt_oss_20b_vulkan_graph_on_the_gpu():
    """Vulkan0 "compute graph" 16.6 GiB: the F32 KQ scores of 64 heads x 512 tokens x 131072 cells (16 GiB) above
    block 0's sliding-window scores (576 MiB), its mask and the rows under them (graph.py gptoss_vulkan_gpu_graph):
    16988.27 MiB, as Ollama's own scheduler and ggml-alloc size this graph; within 10%."""
    fx, est = _gpt_oss_vulkan()
    got = est.engine_view["ollama_memory"]["compute graph"]["Vulkan0"]
    want = fx["printed"]["compute graph_bytes"]["Vulkan0"]
    assert abs(got - want) / want <= COMPUTE_TOLERANCE, (got / GiB, want / GiB)


def test_gpt_oss_20b_vulkan_graph_on_the_cpu():
    """CPU "compute graph" 45.1 MiB with 14 blocks left on the CPU: Vulkan's offload_op takes every op of those
    blocks but the expert biases' add_id (ne[1] = 4 experts < 32), so the CPU holds the gate_up rows copied in for
    it (512 x 5760 x 4 x 4 B = 45 MiB, written in place) and the selected-expert ids view (64 KiB): 45.06 MiB
    (5.6 MiB, the input rows alone, before)."""
    fx, est = _gpt_oss_vulkan()
    mine = est.engine_view["ollama_memory"]
    got = mine["compute graph"]["CPU"]
    assert got == 512 * 5760 * 4 * 4 + 65440
    assert ol.human_bytes2(got) == fx["printed"]["compute graph"]["CPU"]


def test_gpt_oss_20b_vulkan_total():
    """"total memory" 32.6 GiB: Vulkan0's graph is the full layers' 16 GiB of KQ scores above block 0's (graph.py
    gptoss_vulkan_gpu_graph, 16988.27 MiB; 16941.88 with the closed forms gave 32.5 GiB)."""
    fx, est = _gpt_oss_vulkan()
    assert ol.human_bytes2(est.engine_view["ollama_memory"]["total memory"]) == fx["printed"]["total memory"]


def _gemma3_cpu():
    fx = _load("gemma3-4b-cpu-only-ctx8192-0.12.3")
    s = fx["settings"]
    est = ol.ENGINE.estimate(resolve("gemma3:4b", "Q4_K_M"), (),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               engine_version=tl._log_version(fx)))
    return fx, est


def test_gemma3_4b_cpu_only_weights_kv_and_layers():
    """ollama/ollama#12303 (0.12.3, gemma3:4b, nothing offloaded): "model weights" CPU 3.6 GiB (the tied
    token_embd a second time as the output), "kv cache" 334.0 MiB (5 global layers x 8192 cells + 29
    sliding-window layers x 1536 cells), 0/35 layers."""
    fx, est = _gemma3_cpu()
    p = fx["printed"]
    mine = est.engine_view["ollama_memory"]
    assert est.engine_view["ollama_layers"] == f"{p['layers.offload']}/{p['layers.model']}"
    for line in ("model weights", "kv cache"):
        assert set(mine[line]) == {"CPU"}
        assert _within(mine[line]["CPU"], p[line]["CPU"], p[line + "_bytes"]["CPU"]), (line, mine[line])
    assert mine["kv cache"]["CPU"] == 334 * MiB


def test_gemma3_4b_cpu_only_graph_is_the_vision_encoders():
    """The CPU "compute graph" 1.1 GiB is the vision encoder's worst case (a 2048 x 2048 image, reserved before the
    text batch: runner/ollamarunner multimodal.go getTensor), not the 8192-token text batch (about 174 MiB): Ollama's
    own SigLIP encoder and projector replayed (graph.py siglip_vision_graph_bytes, equal to ggml-alloc in
    test_ollama_graph_ggml.py; 972 nodes as the log's "compute graph" nodes=972, v0.12.3 having no patch
    convolution bias): 1174011904 B, printed as the log's 1.1 GiB; total memory 5.0 GiB as printed. Before:
    VisionGraphSize's 1.0 GiB (1033.2 MiB, -8.3%)."""
    from oomkit.engines.ollama.graph import siglip_vision_graph

    assert len(siglip_vision_graph(896, 14, 1152, 16, 4304, 27, 256, 2560, False, conv_bias=False).nodes) == 972
    fx, est = _gemma3_cpu()
    mine = est.engine_view["ollama_memory"]
    assert mine["compute graph"]["CPU"] == 1174011904
    assert ol.human_bytes2(mine["compute graph"]["CPU"]) == fx["printed"]["compute graph"]["CPU"]
    assert ol.human_bytes2(mine["total memory"]) == fx["printed"]["total memory"]


def test_gemma3_vision_reserve_with_flash_attention_from_0_13_2():
    """v0.13.2 (1108d8b34, "ggml: Enable flash attention for vision encoders"): with flash attention, on by default
    for gemma3, the SigLIP encoder's reserve has no scores (ggml_flash_attn_ext on the permuted q, k, v; head dim 72
    takes ggml-cuda's tile kernel), so on a GPU it is no longer the 1 GiB of scores the CPU log above shows: the
    encoder's reserve at v0.13.2 is 142688256 B on CUDA (graph.py, equal to ggml-alloc in test_ollama_graph_ggml.py
    on the CPU), and gemma3:4b's CUDA0 compute graph falls under 256 MiB; without flash attention the scores
    stay."""
    gpu = Device(id="CUDA0", name="NVIDIA GeForce RTX 3060", memory_bytes=12 * GiB, free_bytes=11 * GiB)

    def graph(version: str, fa: str = "") -> int:
        est = ol.ENGINE.estimate(resolve("gemma3:4b", "Q4_K_M"), (gpu,),
                                 ol.OllamaSettings(num_ctx=4096, flash_attention=fa, engine_version=version))
        return est.engine_view["ollama_memory"]["compute graph"]["CUDA0"]

    assert graph("0.13.1") > GiB and graph("0.13.2", "false") > GiB
    assert 142688256 <= graph("0.13.2") < 256 * MiB


# ---------------------------------------------------------------------------------------------------------
# Per log, per printed line: the figure and oomkit's (bench/accuracy_ollama.py prints them)

CASES = {"gpt-oss-20b-cpu-only-0.13-ctx16000": _gpt_oss_cpu,
         "gpt-oss-20b-vulkan-partial-ctx131072-no-fa-0.12.9": _gpt_oss_vulkan,
         "gemma3-4b-cpu-only-ctx8192-0.12.3": _gemma3_cpu}


def device_rows() -> list[tuple[str, str, str, str, int, int]]:
    """(log, line, device, printed, printed bytes, oomkit bytes) for every per-device line of the Ollama-engine
    logs, the qwen3:32b OLLAMA_DEBUG log's exact requirements included."""
    rows = []
    for stem, case in CASES.items():
        fx, est = case()
        p, mine = fx["printed"], est.engine_view["ollama_memory"]
        for line in ("model weights", "kv cache", "compute graph"):
            for d, printed in p[line].items():
                rows.append((stem, line, d, printed, p[line + "_bytes"][d], mine[line].get(d, 0)))
        rows.append((stem, "total memory", "", p["total memory"], p["total memory_bytes"], mine["total memory"]))
    stem = "qwen3-32b-multi-gpu-0.13-debug-memory"
    p = _load(stem)["printed"]
    mine = _qwen3_32b("0.13.2").engine_view["ollama_memory"]
    rows += [(stem, "model weights", "CUDA2", "(exact bytes)", p["required.CUDA2.Weights_sum_bytes"],
              mine["model weights"]["CUDA2"]),
             (stem, "model weights", "CPU", "(exact bytes)", p["required.InputWeights"], mine["model weights"]["CPU"]),
             (stem, "kv cache", "CUDA2", "(exact bytes)", 64 * p["required.CUDA2.Cache_per_layer"],
              mine["kv cache"]["CUDA2"]),
             (stem, "compute graph", "CPU", p["compute_graph_CPU"], p["compute_graph_CPU_bytes"],
              mine["compute graph"]["CPU"]),
             (stem, "total memory", "", p["total_memory"], p["total_memory_bytes"], mine["total memory"])]
    return rows


def test_device_rows_cover_the_logs():
    rows = device_rows()
    assert {r[0] for r in rows} == set(CASES) | {"qwen3-32b-multi-gpu-0.13-debug-memory"}
    exact = [r for r in rows if r[1] in ("model weights", "kv cache")]
    assert all(abs(got - want) <= (tl._unit(printed) if printed != "(exact bytes)" else 0)
               for _, _, _, printed, want, got in exact)


# ---------------------------------------------------------------------------------------------------------
# Which runner a model gets, by release (fs/ggml OllamaEngineRequired, model/models' model.Register)

def _runner(name: str, quant: str, version: str, env: tuple = ()) -> str:
    est = ol.ENGINE.estimate(resolve(name, quant), (), ol.OllamaSettings(num_ctx=4096, engine_version=version, env=env))
    return est.engine_view["ollama_runner"]


@pytest.mark.parametrize("name,quant,version,want", [
    ("qwen2.5vl:7b", "Q4_K_M", "0.7.0", "Ollama engine"),   # qwen25vl required from v0.7.0
    ("qwen2.5vl:7b", "Q4_K_M", "0.13.2", "Ollama engine"),
    ("gemma3:4b", "Q4_K_M", "0.6.0", "Ollama engine"),
    ("qwen3:8b", "Q4_K_M", "0.11.10", "llama.cpp runner"),  # qwen3 required from v0.12.0
    ("qwen3:8b", "Q4_K_M", "0.12.0", "Ollama engine"),
    ("gpt-oss:20b", "MXFP4_MOE", "0.11.0", "Ollama engine"),
    ("llama3.1:8b", "Q4_K_M", "0.13.2", "llama.cpp runner"),
])
def test_runner_by_release(name, quant, version, want):
    assert _runner(name, quant, version) == want


@pytest.mark.parametrize("name,version,want", [
    ("llama3.1:8b", "0.6.0", "Ollama engine"),     # llama registered from v0.5.12
    ("qwen2.5:7b", "0.7.0", "llama.cpp runner"),   # qwen2 registered from v0.7.1: NewTextProcessor fails, fallback
    ("qwen2.5:7b", "0.7.1", "Ollama engine"),
    ("phi3:mini", "0.13.2", "llama.cpp runner"),   # never registered
])
def test_new_engine_env_falls_back_for_unregistered_architectures(name, version, want):
    """llm/server.go NewLlamaServer with OLLAMA_NEW_ENGINE=1 (off by default in every release): the Ollama engine
    where model.NewTextProcessor knows the architecture, else "switching to compatibility mode"."""
    assert _runner(name, "Q4_K_M", version, (("OLLAMA_NEW_ENGINE", "1"),)) == want


def test_qwen25vl_needs_the_ollama_engine():
    """Ollama's qwen2.5vl GGUF (architecture qwen25vl, its own converter's name): no runner before v0.7.0 loads it."""
    with pytest.raises(OomkitError, match="0.7.0"):
        _runner("qwen2.5vl:7b", "Q4_K_M", "0.6.8")


def test_qwen25vl_cpu_weights_include_the_vision_tower():
    """qwen2.5vl:7b on the CPU with the new engine: "model weights" device=CPU "5.6 GiB" (the text weights 4.1 GiB
    and the vision tower's v.* and mm.* tensors; Ollama 0.19.0, "offloaded 0/29 layers to GPU", quoted in
    https://github.com/akitaonrails/FrankSherlock/issues/6, 2026-04-15). The llama.cpp-runner reading gave 4.1 GiB."""
    est = ol.ENGINE.estimate(resolve("qwen2.5vl:7b", "Q4_K_M"), (), ol.OllamaSettings(engine_version="0.19.0"))
    mine = est.engine_view["ollama_memory"]
    assert est.engine_view["ollama_layers"] == "0/29"
    assert ol.human_bytes2(mine["model weights"]["CPU"]) == "5.6 GiB"


def _qwen25vl_3b(version: str, devices: tuple = ()):
    return ol.ENGINE.estimate(resolve("qwen2.5vl:3b"), devices,
                              ol.OllamaSettings(engine_version=version, flash_attention="0"))


def _report(stem: str) -> dict:
    import json  # lazy: only the reports need it
    from pathlib import Path

    return json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "ollama" / "reports" / f"{stem}.json")
                      .read_text())


def test_qwen25vl_3b_0_13_4_vision_graph_on_the_cpu():
    """ollama/ollama#13687 (qwen2.5vl:3b, flash attention off): from v0.13.4 the required memory is "~6.7 GiB" and
    the load falls back to the CPU. 971d62595 raised the reserve image to 2 << 20 pixels (102 x 102 patches): Ollama's
    own encoder graph on the CPU is 7,193,918,656 B (graph.py, equal to ggml-alloc: test_ollama_graph_ggml.py),
    printed 6.7 GiB, the reporter's figure within its one decimal."""
    p = _report("qwen2.5vl-3b-8gb-0.13.4-no-fa")["printed"]
    mine = _qwen25vl_3b("0.13.4").engine_view["ollama_memory"]
    assert mine["compute graph"]["CPU"] == 7193918656
    assert ol.human_bytes2(mine["compute graph"]["CPU"]) == p["required_memory_0.13.4_gib"].lstrip("~")


def test_qwen25vl_3b_no_longer_fits_8gb_from_0_13_4():
    """The same load on an 8 GiB GPU (7.5 GiB free: the report gives neither the card nor its free memory): every
    layer on the GPU at v0.13.3 (VisionGraphSize's 1.6 GiB for the encoder), none at v0.13.4, where the encoder's
    graph alone is 7.15 GiB on a GPU (its 10404 x 10404 f32 mask copied in)."""
    dev = with_facts(Device(id="CUDA0", name="NVIDIA GeForce RTX 3070", memory_bytes=8 * GiB,
                            free_bytes=int(7.5 * GiB)))
    assert _qwen25vl_3b("0.13.3", (dev,)).engine_view["ollama_layers"] == "37/37"
    assert _qwen25vl_3b("0.13.4", (dev,)).engine_view["ollama_layers"] == "0/37"


def test_qwen25vl_3b_0_13_4_falls_back_to_the_cpu_graph_beside_the_gpu():
    """The reporter's load at v0.13.4: the 8 GiB GPU gets no layer, and ml/backend/ggml New (v0.11.5+, d5a0d8d90)
    leaves a GPU without layers out of the scheduler, so the CPU reserves the whole encoder graph: "~6.7 GiB"
    with the GPU present too. Before: the input layer's token rows only (20.3 MiB), as if the GPU ran the rest."""
    p = _report("qwen2.5vl-3b-8gb-0.13.4-no-fa")["printed"]
    dev = with_facts(Device(id="CUDA0", name="NVIDIA GeForce RTX 3070", memory_bytes=8 * GiB,
                            free_bytes=int(7.5 * GiB)))
    est = _qwen25vl_3b("0.13.4", (dev,))
    mine = est.engine_view["ollama_memory"]["compute graph"]
    assert est.engine_view["ollama_layers"] == "0/37" and set(mine) == {"CPU"}
    assert ol.human_bytes2(mine["CPU"]) == p["required_memory_0.13.4_gib"].lstrip("~")


def test_qwen25vl_3b_0_13_3_vision_graph():
    """ollama/ollama#13687's "~1.8 GiB" at v0.13.3: 0.13.3's own encoder (graph.py
    qwen25vl_rotate_half_vision_graph_bytes, equal to ggml-alloc: test_ollama_graph_ggml.py), 1,781,219,584 B on
    the 70 x 70 patches of the 1 MP reserve image, plus the CUDA pool of the text batch the runner reserves after
    it: reserveWorstCaseGraph keeps the image token's 1 + SameBatch inputs together, 1226 tokens > num_batch 512
    (layout.py _reserve_batch), so cuBLAS's F16 copy of the scores is 2 B x 4096 cells x 1226 x 16 heads: 160 MiB
    of pool on the stand-in RTX 3070. 1,948,991,744 B, printed 1.8 GiB. Before: the 512-token batch's 68 MiB pool,
    1,852,522,752 B, printed 1.7 GiB (-4%)."""
    p = _report("qwen2.5vl-3b-8gb-0.13.4-no-fa")["printed"]
    dev = with_facts(Device(id="CUDA0", name="NVIDIA GeForce RTX 3070", memory_bytes=8 * GiB,
                            free_bytes=int(7.5 * GiB)))
    mine = _qwen25vl_3b("0.13.3", (dev,)).engine_view["ollama_memory"]
    # the pool by hand: 2 B x 4096 x 1226 x 16 scores + 2 B x 128 x 1226 x 16 + the 768 B of pointers -> 2 MiB
    pool = -(-(2 * 4096 * 1226 * 16 + 2 * 128 * 1226 * 16 + 768) // (2 << 20)) * (2 << 20)
    assert pool == 160 << 20
    assert mine["compute graph"]["CUDA0"] == ol_projector.own_vision_graph(resolve("qwen2.5vl:3b"), True, False,
                                                                          True) + pool
    assert ol.human_bytes2(mine["compute graph"]["CUDA0"]) == p["required_memory_0.13.3_gib"].lstrip("~")
