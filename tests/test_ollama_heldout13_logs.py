"""A thirteenth held-out set of Ollama logs from outside Ollama's issue tracker (a Kubernetes deployment report, a
Raspberry Pi notebook, a model-evaluation repository, a ROCm status report), the Ollama engine of v0.12.6 to v0.18.2
on the CPU, a Vulkan iGPU and a ROCm iGPU (tests/fixtures/engine_logs/ollama_heldout13/, each with its page's URL
pinned to a commit, the model, the device and the release the source lines pin down), read through oomkit with
nothing tuned on them. The printed figures were recorded from the pages before oomkit ran. Compared: the Ollama
engine's memory lines (ml/device.go "model weights" / "kv cache" / "compute graph" by device, "total memory") and
the load request's KvSize and GPULayers. Measured before -> after:

- Ka0s-Klaus/ka0s audit/deploy/deployment-report-ollama-23549700941.md, nomic-embed-text v1.5 F16 on the CPU in a
  Kubernetes pod, v0.18.2, num_ctx 8192 clamped to the trained 2048, OLLAMA_FLASH_ATTENTION=1 and
  OLLAMA_KV_CACHE_TYPE=q8_0 (refused for an embedding model): "model weights" CPU 305.6 MiB and KvSize 2048 before
  and after; "compute graph" CPU 22.0 -> 234.0 MiB and "total memory" 327.6 -> 539.6 MiB as printed. 2 -> 4 of 4.
- josheeg/Game-Note- README.md at two commits, byteshape's Qwen3-Coder-30B-A3B IQ3_S-2.83bpw (qwen3moe) on a
  Raspberry Pi 5, v0.16.1, OLLAMA_CONTEXT_LENGTH 16384 and 4096: "kv cache" 1.5 GiB / 384.0 MiB and KvSize exact
  (4 of 10 before and after); "compute graph" 96.0 / 88.0 MiB printed, oomkit 104.0 / 92.0 (matched since: the
  qwen3moe graph replayed on the CPU, graph.py qwen3_dense_graph_bytes with the sparse MLP); the
  weights 10.1 GiB and the totals are byteshape's own tensor mix, which no llama-quantize recipe oomkit has gives
  (strict xfail).
- ueni/mcp-coding-experiment evaluation/qwen3.6-35b-a3b/results/results-docker-ollama-smoke-2026-05-09.log,
  unsloth's Qwen3.6-35B-A3B UD-IQ1_M (qwen35moe: 30 gated delta-net and 10 attention blocks) on a Renoir iGPU
  through Vulkan, v0.18.2, the VRAM tier's num_ctx 4096: "kv cache" Vulkan0 88.0 MiB -> 1.6 GiB as printed (the
  delta-net states with their 24 checkpoints), "compute graph" CPU 4.0 MiB and KvSize 4096 exact; 41 layers
  since (the file has no MTP block: weights.py _NO_NEXTN_ARCHS; the catalog checkpoint's made 42); 9.1 GiB / 272.8
  MiB of weights and 11.1 GiB total (unsloth's UD mix) and the Vulkan graph (98.0 MiB printed, 76.0) are strict
  xfails. 2 -> 3 of 8, 4 since.
- Peuqui/AIfred-Intelligence docs/infrastructure/OLLAMA_ROCM_GPU_STATUS.md, qwen3:1.7b Q4_K_M at v0.12.6 on a Ryzen
  9 7940HS, first on the CPU (ROCm discovery crashed), then on its Radeon 780M (HSA_OVERRIDE_GFX_VERSION=11.0.2,
  11.6 GiB): weights and "kv cache" 448.0 MiB exact on both (4 of 4); "compute graph" CPU 56.0 -> 48.0 MiB as
  printed; ROCm0 89.8 MiB printed, 52.0 (matched since: the HIP legacy pool's F16 copies of the quantized
  products, which RDNA3 sends to cuBLAS from 64 columns, cuda_pool.py hip_rdna_dense_pool_bytes). 4 -> 5 of 6.

12 -> 16 of 28 printed figures agree; 20 since (the Pi's two CPU graphs, the 780M's graph, the UD file's 41 layers).

The rules changed:
- layout._reserve_batch: a model without a cache (bert, nomic-bert) has its batch raised to the context from
  v0.13.3 (3475d915c, #13429: runner/ollamarunner/runner.go allocModel, "setting batch size to context length");
  graph.py nomicbert_graph_bytes replays model/models/nomicbert's graph through ggml-alloc on that batch (v0.13.2+,
  the cache-less ScaledDotProductAttention without flash attention), layout._encoder_graph puts it in the runner.
- layout._own_graph: the dense qwen3 graph with flash attention (graph.py qwen3_dense_graph_bytes, v0.12.4-v0.13.4)
  is replayed on the CPU too when no GPU holds a layer (the inputs in buffers of their own, 32 B alignment).
- kv.py recurrent_cache: the Ollama engine's recurrent layers hold their F32 conv and delta-net states per slot,
  and the worst-case reserve allocates every checkpoint entry of every slot: 24 from v0.17.1 (kvcache/recurrent.go
  DefaultCheckpointCount: lfm2, nemotronh, qwen3next/qwen35/qwen35moe), 32 in qwen3next's own cache
  (v0.15.5-v0.17.0); they were left out of the layout and the "kv cache" line before.

Searched and not used (no repository found for the log's text): a qwen3-coder-next KV-quantization study at
v0.20.x (its "kv cache" CUDA0 1.1 GiB / 955.2 MiB for f16 / q8_0 follow the same checkpoint rule), a gemma2:2b
ROCm RX 6600 log of v0.18.2, a llama3:8b CPU log of v0.13.5 on Windows and a qwen2.5-coder:7b RTX 3060 log of
v0.20.2."""

from __future__ import annotations

import json
import re

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.kv import recurrent_cache
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.ollama_heldout import ENGINE_LOGS, device_lines, loader
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = ENGINE_LOGS / "ollama_heldout13"
_load = loader("ollama_heldout13")


def _estimate(model: str, quant: str, gpus: tuple[Device, ...], version: str, **kw):
    return ol.ENGINE.estimate(resolve(model, quant), gpus, ol.OllamaSettings(engine_version=version, **kw)).engine_view


def _lines(stem: str) -> dict[str, str]:
    return {k: v for k, v in _load(stem)["printed"].items() if k.startswith("msg=")}


def _kv_size(launch: str) -> str:
    return launch.split("--ctx-size ")[1].split()[0]


# ---------------------------------------------------------------------------------------------------------------
# Ka0s-Klaus/ka0s: nomic-embed-text on the CPU, v0.18.2

NOMIC = "nomic-embed-text-f16-cpu-k8s-ctx2048-0.18.2"


def _nomic():
    return _estimate("nomic-embed-text", "F16", (), "0.18.2", library="cpu", num_ctx=8192,
                     env=(("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0"),
                          ("OLLAMA_NUM_PARALLEL", "1")))


def test_nomic_memory_lines():
    """"model weights" CPU 305.6 MiB, "compute graph" CPU 234.0 MiB (the 2048-token batch: 12 heads x 2048^2 x 4 B
    of scores, replayed through ggml-alloc), "total memory" 539.6 MiB; no "kv cache" line (no cache)."""
    assert device_lines(_nomic()["ollama_log"]) == _lines(NOMIC)


def test_nomic_context_clamped_to_training():
    """num_ctx 8192 -> KvSize 2048 ("requested context size too large for model" n_ctx_train=2048)."""
    assert _kv_size(_nomic()["ollama_launch"]) == _load(NOMIC)["printed"]["KvSize:"]


def test_nomic_runner_graph_is_the_context_batch():
    """The runner allocates that graph too: the CPU compute buffer is the replayed 234.0 MiB, not llama.cpp's graph
    at the 512-token micro-batch (22.0 MiB); at v0.13.2, before allocModel raised the batch, the replay at 512
    tokens stays small."""
    assert round(_nomic()["compute_buffer_bytes"]["CPU"] / MiB, 1) == 234.0
    old = _estimate("nomic-embed-text", "F16", (), "0.13.2", library="cpu", num_ctx=2048)
    assert old["compute_buffer_bytes"]["CPU"] < 32 * MiB


# ---------------------------------------------------------------------------------------------------------------
# josheeg/Game-Note-: byteshape's Qwen3-Coder-30B-A3B on a Raspberry Pi 5, v0.16.1

PI = {"16384": "qwen3-coder-30b-a3b-byteshape-cpu-rpi5-ctx16384-0.16.1",
      "4096": "qwen3-coder-30b-a3b-byteshape-cpu-rpi5-ctx4096-0.16.1"}


def _pi(ctx: str):
    env = tuple(_load(PI[ctx])["settings"]["env"].items())
    return _estimate("Qwen/Qwen3-Coder-30B-A3B-Instruct", "IQ3_S", (), "0.16.1", library="cpu", env=env)


@pytest.mark.parametrize("ctx", ["16384", "4096"])
def test_pi_kv_cache_and_context(ctx):
    """48 blocks x 4 KV heads x 128 x (K + V) x F16 x OLLAMA_CONTEXT_LENGTH cells: 1.5 GiB / 384.0 MiB."""
    ev, printed = _pi(ctx), _lines(PI[ctx])
    key = 'msg="kv cache" device=CPU size='
    assert device_lines(ev["ollama_log"])[key] == printed[key]
    assert _kv_size(ev["ollama_launch"]) == _load(PI[ctx])["printed"]["KvSize:"] == ctx


@pytest.mark.parametrize("ctx", ["16384", "4096"])
def test_pi_cpu_graph(ctx):
    """"compute graph" CPU 96.0 / 88.0 MiB: model/models/qwen3's sparse MLP replayed through ggml-alloc with every
    block on the CPU (graph.py qwen3_dense_graph_bytes with n_expert, layout._own_graph v0.13.5-v0.24.0); the
    llama.cpp graph with Ollama's cells that stood in said 104.0 / 92.0."""
    key = 'msg="compute graph" device=CPU size='
    assert device_lines(_pi(ctx)["ollama_log"])[key] == _lines(PI[ctx])[key]


@pytest.mark.xfail(strict=True, reason="model weights CPU 10.1 GiB and total 11.7 / 10.5 GiB printed: byteshape's "
                   "IQ3_S-2.83bpw per-tensor mix, which oomkit's IQ3_S recipe (12.4 GiB) is not")
@pytest.mark.parametrize("ctx", ["16384", "4096"])
def test_pi_weights_and_total(ctx):
    mine, printed = device_lines(_pi(ctx)["ollama_log"]), _lines(PI[ctx])
    keys = ('msg="model weights" device=CPU size=', 'msg="total memory" size=')
    assert {k: mine[k] for k in keys} == {k: printed[k] for k in keys}


# ---------------------------------------------------------------------------------------------------------------
# ueni/mcp-coding-experiment: Qwen3.6-35B-A3B UD-IQ1_M on a Renoir iGPU through Vulkan, v0.18.2

Q36 = "qwen3.6-35b-a3b-ud-iq1m-vulkan-renoir-ctx4096-0.18.2"
_RENOIR = Device(id="Vulkan0", name="AMD Radeon Graphics (RADV RENOIR)", memory_bytes=int(16.3 * GiB),
                 free_bytes=int(15.1 * GiB))


def _q36():
    return _estimate("Qwen/Qwen3.6-35B-A3B", "IQ1_M", (_RENOIR,), "0.18.2", library="vulkan", num_ctx=4096)


def test_qwen36_kv_cache_holds_the_recurrent_checkpoints():
    """"kv cache" Vulkan0 1.6 GiB: the attention layers' 4096 cells (80 MiB) and, per delta-net layer, the F32
    conv state (3 x 8192 floats) and delta state (128 x 128 x 32 floats) of the one slot with its 24 checkpoints
    (kvcache/recurrent.go): 30 x 2.09 MiB x 25 = 1570.3 MiB. Without the states the line said 88.0 MiB."""
    ev = _q36()
    key = 'msg="kv cache" device=Vulkan0 size='
    assert device_lines(ev["ollama_log"])[key] == _lines(Q36)[key]
    assert round(ev["rs_buffer_bytes"]["Vulkan0"] / MiB, 2) == 1570.31


def test_qwen36_cpu_graph_and_context():
    ev = _q36()
    key = 'msg="compute graph" device=CPU size='
    assert device_lines(ev["ollama_log"])[key] == _lines(Q36)[key]
    assert _kv_size(ev["ollama_launch"]) == _load(Q36)["printed"]["KvSize:"]


def test_qwen36_layers_without_the_mtp_block():
    """GPULayers 41: the 40 blocks and the output. The file has no next-n (MTP) block (llama.cpp's converter
    skipped mtp.* for qwen3.5 until 255582687, Ollama's convert_qwen3next.go writes block_count =
    num_hidden_layers: weights.py _NO_NEXTN_ARCHS); the catalog checkpoint's MTP block gave 42."""
    ev = _q36()
    assert ev["ollama_launch"].split("--n-gpu-layers ")[1].split()[0] == _load(Q36)["printed"]["GPULayers:"]


@pytest.mark.xfail(strict=True, reason="model weights Vulkan0 9.1 GiB / CPU 272.8 MiB and total 11.1 GiB printed: "
                   "unsloth's UD-IQ1_M mix, where oomkit's IQ1_M recipe on the catalog checkpoint (without its MTP "
                   "block) gives 7.5 GiB / 159.1 MiB and 9.4 GiB")
def test_qwen36_weights_and_total():
    ev = _q36()
    mine, printed = device_lines(ev["ollama_log"]), _lines(Q36)
    keys = ('msg="model weights" device=Vulkan0 size=', 'msg="model weights" device=CPU size=',
            'msg="total memory" size=')
    assert {k: mine[k] for k in keys} == {k: printed[k] for k in keys}


@pytest.mark.xfail(strict=True, reason="compute graph Vulkan0 98.0 MiB printed, oomkit 76.0: the llama.cpp graph "
                   "stands in for model/models/qwen3next's delta-net graph on Vulkan, which is not replayed")
def test_qwen36_gpu_graph():
    key = 'msg="compute graph" device=Vulkan0 size='
    assert device_lines(_q36()["ollama_log"])[key] == _lines(Q36)[key]


def test_recurrent_checkpoints_by_release():
    """The same load's delta-net states by release: qwen3next's own cache kept 32 checkpoints a slot
    (v0.15.5-v0.17.0), the shared kvcache.Recurrent 24 (v0.17.1+)."""
    spec = resolve("Qwen/Qwen3.6-35B-A3B", "IQ1_M")
    one = sum(4 * (la.recurrent.conv + la.recurrent.ssm) for la in spec.layers if la.recurrent is not None)
    assert sum(recurrent_cache(spec, (0, 17, 0), 1).values()) == 33 * one
    assert sum(recurrent_cache(spec, (0, 17, 1), 1).values()) == 25 * one
    assert sum(recurrent_cache(spec, (0, 17, 1), 2).values()) == 50 * one


# ---------------------------------------------------------------------------------------------------------------
# Peuqui/AIfred-Intelligence: qwen3:1.7b on a Ryzen 9 7940HS, the CPU and then its Radeon 780M (ROCm), v0.12.6

AIFRED = {"cpu": "qwen3-1.7b-q4km-cpu-7940hs-ctx4096-0.12.6", "rocm": "qwen3-1.7b-q4km-rocm-780m-ctx4096-0.12.6"}
# the Radeon 780M's 12 compute units (AMD's specification: 768 stream processors), and the target ROCm reported
_780M = Device(id="ROCm0", name="AMD Radeon Graphics", memory_bytes=int(11.6 * GiB), free_bytes=int(11.6 * GiB),
               sm_count=12, gfx_target="gfx1102")


def _aifred(where: str):
    gpus = (_780M,) if where == "rocm" else ()
    return _estimate("qwen3:1.7b", "Q4_K_M", gpus, "0.12.6", library=where, env=(("OLLAMA_NUM_PARALLEL", "1"),))


def test_aifred_cpu_lines():
    """"model weights" CPU 1.3 GiB, "kv cache" 448.0 MiB (4096 cells) and "compute graph" CPU 48.0 MiB: Ollama's
    dense qwen3 graph with flash attention replayed on the CPU (graph.py qwen3_dense_graph_bytes, the v0.12.6 mask an
    F16 input of its own; llama.cpp's graph gave 56.0 MiB)."""
    mine, printed = device_lines(_aifred("cpu")["ollama_log"]), _lines(AIFRED["cpu"])
    assert {k: mine.get(k) for k in printed} == printed  # the page quotes no "total memory" line


def test_aifred_rocm_weights_and_cache():
    mine, printed = device_lines(_aifred("rocm")["ollama_log"]), _lines(AIFRED["rocm"])
    keys = ('msg="model weights" device=ROCm0 size=', 'msg="kv cache" device=ROCm0 size=')
    assert {k: mine[k] for k in keys} == {k: printed[k] for k in keys}


def test_aifred_rocm_graph():
    """"compute graph" ROCm0 89.8 MiB: the replayed graph's 52.0 MiB and the HIP legacy pool's 37.8 MiB, the F16
    copies ggml_cuda_op_mul_mat_cublas takes for the 512-column quantized products on RDNA3
    (cuda_pool.py hip_rdna_dense_pool_bytes)."""
    key = 'msg="compute graph" device=ROCm0 size='
    assert device_lines(_aifred("rocm")["ollama_log"])[key] == _lines(AIFRED["rocm"])[key]


# ---------------------------------------------------------------------------------------------------------------

def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert re.match(r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/", fx["source"]), path.name
        for key, value in fx["printed"].items():
            assert f"{key}{value}" in fx["quoted"], (path.name, key)
