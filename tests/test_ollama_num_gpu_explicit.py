"""An explicit num_gpu as each Ollama release hands it to its runner: a demand for N layers, not a cap at the count
Ollama's own estimate fits.

- v0.9.3 (llm/server.go NewLlamaServer) replaces num_gpu by its estimate's layers only when it is -1 (`case
  opts.NumGPU < 0 && estimate.Layers > 0 ...: opts.NumGPU = estimate.Layers`); an explicit N goes to the runner as
  `--n-gpu-layers N` with the estimate's own layer counts as `--tensor-split` (llm/memory.go EstimateGPULayers
  stops at N or at what fits, whichever comes first). The llama.cpp runner then puts min(N, block_count + 1)
  layers on the GPUs in those proportions; so does the Ollama engine (ml/backend/ggml New: gpuRangeStop =
  min(gpuRangeStart + NumGPULayers, blocks + 1)). v0.11.5-v0.12.10's llamaServer.Load has the same switch and
  createGPULayers(estimate, ..., NumGPU).
- From v0.12.11 every runner is laid out by llm/server.go createLayout -> assignLayers: with num_gpu set the last
  try is forced (findBestFit: "pretend we have almost infinite VRAM"), so N layers again.
- From v0.30 (llm/llama_server.go, v0.32.15) `-ngl N` only for an explicit num_gpu; otherwise llama-server's --fit.

The case is ollama/ollama#11202 (int13h82, 2025-06-25): deepseek-r1:671b on 2 x MI50 32GB, Ollama 0.9.x. Ollama's
own 8 layers ran out of memory ("ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 5274339328");
the fix was a Modelfile with "PARAMETER num_gpu 6": "resulting in correct launch and 78% mem load @ GPU0 and 87%
load at GPU1". A num_gpu of 20 puts 20 layers on two 32 GB cards, about 130 GiB of DeepSeek-R1 Q4_K_M blocks.
"""

from __future__ import annotations

import json

from oomkit.engines.shell_words import split_command
from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)

GPU = ["--gpu", "2x MI50 32GB"]
MODEL = "ollama run deepseek-r1:671b"
GiB = 1 << 30


def _check(version: str, *lines: str) -> dict:
    command = "\n".join([MODEL, *lines])
    rc, out, err = run_cli("check", "--json", *GPU, "--engine-version", version, "--", *split_command(command))
    assert rc in (0, 1), err
    return json.loads(out)


def _runs(r: dict) -> bool:
    """Every GPU within its memory (the rest of the model in system RAM, as the user chose)."""
    return all(d["total_bytes"] <= d["memory_bytes"] for d in r["estimate"]["devices"])


def _gpu_weights(r: dict) -> int:
    return sum(d["weights_bytes"] for d in r["estimate"]["devices"])


def _layers(r: dict) -> int:
    return r["estimate"]["settings"]["num_gpu"]


def test_v093_num_gpu_20_puts_20_layers_on_the_gpus_and_does_not_fit():
    r = _check("0.9.3", "/set parameter num_gpu 20")
    view = r["estimate"]["engine_view"]
    # Ollama's own estimate still stops at the 8 that it thinks fit (its log's layers.offload) ...
    assert view["ollama_layers"] == "8/62" and view["ollama_layers_split"] == "4,4"
    # ... but the runner is told 20, split 4:4 as the estimate's counts
    assert "--n-gpu-layers 20 " in view["ollama_launch"] and view["ollama_launch"].endswith("--tensor-split 4,4")
    assert _layers(r) == 20
    # 19 blocks and the output layer, about 131 GiB: neither 32 GB card holds its half
    assert _gpu_weights(r) > 120 * GiB
    assert r["fits"] is False and not _runs(r)
    # the same 20 layers as the release that lays them out itself (v0.12.11 createLayout, split 10,10)
    assert _gpu_weights(r) == _gpu_weights(_check("0.12.11", "/set parameter num_gpu 20"))


def test_v093_num_gpu_above_the_layer_count_is_every_layer():
    # "num_gpu 999 to force the GPU": llama.cpp takes at most n_layer + 1; the command carries 999 as given
    r = _check("0.9.3", "/set parameter num_gpu 999")
    assert _layers(r) == 62 and "--n-gpu-layers 999 " in r["estimate"]["engine_view"]["ollama_launch"]
    assert not _runs(r)


def test_v093_num_gpu_6_runs_as_in_the_thread():
    r = _check("0.9.3", "/set parameter num_gpu 6")
    assert _layers(r) == 6 and "--n-gpu-layers 6 " in r["estimate"]["engine_view"]["ollama_launch"]
    assert _runs(r)


def test_v093_default_keeps_ollamas_own_8():
    r = _check("0.9.3")
    assert _layers(r) == 8 and "--n-gpu-layers 8 " in r["estimate"]["engine_view"]["ollama_launch"]
    assert not _runs(r)  # the thread's out-of-memory on ROCm0


def test_v0_12_11_create_layout_takes_num_gpu_as_a_demand():
    r = _check("0.12.11", "/set parameter num_gpu 20")
    assert _layers(r) == 20 and r["estimate"]["engine_view"]["ollama_layers_split"] == "10,10"
    assert not _runs(r)
    assert _layers(six := _check("0.12.11", "/set parameter num_gpu 6")) == 6 and _runs(six)
    assert _layers(default := _check("0.12.11")) == 8 and not _runs(default)


def test_newest_llama_server_takes_num_gpu_as_ngl():
    # v0.32.15 llm/llama_server.go: -ngl N for num_gpu > 0, nothing (llama-server's --fit) for -1
    ctx = "/set parameter num_ctx 4096"
    r = _check("0.32.15", ctx, "/set parameter num_gpu 20")
    assert r["estimate"]["engine_view"]["ollama_launch"].endswith("-ngl 20")
    assert _gpu_weights(r) > 120 * GiB and not _runs(r)
    six = _check("0.32.15", ctx, "/set parameter num_gpu 6")
    assert six["estimate"]["engine_view"]["ollama_launch"].endswith("-ngl 6") and _runs(six)
    assert _check("0.32.15", ctx)["estimate"]["settings"]["num_gpu"] == -1
