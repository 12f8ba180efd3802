"""A ninth held-out set of Ollama logs, from v0.2.8 to v0.13.5 (tests/fixtures/engine_logs/ollama_heldout9/, each
with its thread's URL, the model, the GPU and the release the source lines pin down), read through oomkit with
nothing tuned on them. The printed figures were recorded from the threads before oomkit ran. Compared: the
msg=offload / msg="offload to cuda" line of llm/memory.go, the per-device lines of the Ollama engine's layout
(v0.12+), the runner command's flags and the llama.cpp runner's own buffers. Measured before -> after:

- ollama/ollama#5821, llama3.1:8b Q8_0 at num_ctx 80000 with flash attention on a 24 GB NVIDIA GPU (22.7 GiB
  free), v0.2.8-v0.3.0: the line identical before and after (31/33, kv 9.8 GiB, weights 16.7 GiB with the KV
  counted in each layer, graph 5.1 / 5.4 GiB); --ctx-size 80000 --n-gpu-layers 31 --flash-attn --parallel 1.
- ollama/ollama#9362, deepseek-r1:1.5b on 15.7 GiB, v0.5.12-v0.5.13, 4 slots x 2048: every field up to where the
  stored copy cuts it identical (29/29, kv 224.0 MiB, weights 976.1 / 793.5 / 182.6 MiB, graph.full 299.8 MiB);
  the runner's n_ctx 8192, n_ctx_per_seq 2048, n_ubatch 512, flash_attn 0 alike, before and after.
- ollama/ollama#9818, gemma3:27b (the Ollama engine) on an RTX 3060 with 11.0 GiB free and OLLAMA_GPU_OVERHEAD=1024,
  v0.6.1-v0.6.2: the line identical (28/63, kv 496.0 MiB, partial 10.8 GiB, projector 795.9 MiB / 1.0 GiB) for
  both settings that give its kv (num_ctx 1024, or 2048 with a q8_0 cache), before and after; v0.6.0 and v0.6.3
  print other weights or kv, so the line pins v0.6.1-v0.6.2.
- ollama/ollama#11162, gemma3:27b-it-fp16 over two RTX 5090 with num_gpu 256, v0.9.2: every field the cut line
  shows identical (layers.requested=256, 62/63, split 31,31, memory.required.full 58.6 GiB); the runner command
  --n-gpu-layers 63 -> 256: llm/server.go (v0.9.2 NewLlamaServer) replaces num_gpu by its estimate only when it is
  -1 and passes opts.NumGPU as given (layout.py _launch_command); the runner takes at most 63 of them.
- ollama/ollama#11627, an 80-block Llama-3 70B on Apple Metal (64 GB), v0.10.1 llama runner, 4096 x 2 slots: Metal
  KV 2560.00 MiB and the CPU output buffer 1.04 MiB exact, before and after.
- ollama/ollama#13536, qwen2.5vl:7b (the Ollama engine) on the CPU (the RTX 4050 not detected), num_ctx 4096,
  v0.13.4-v0.13.5: "offloaded 0/29", model weights 5.6 GiB, kv cache 224.0 MiB, compute graph 6.7 GiB and total
  memory 12.5 GiB identical, before and after (v0.13.3's smaller image reserve gives a 1.6 GiB graph).
- ollama/ollama#12574, gpt-oss:20b on the CPU, v0.12.5: kv cache 192.0 MiB, compute graph 109.2 MiB, total memory
  13.1 GiB identical, before and after.

Searched (the issues corpus) and not used: ollama/ollama#8995 (qwen2.5:14b over two GPUs, 37/49 with CUDA0
2845.92 / 2920.17 MiB and CPU_Mapped 8566.04 MiB: the stored copy has no offload line, so no free memory to place
the layers with), likelovewant/ollama-for-amd#105 (ROCm gfx1035, v0.12.5: the excerpt stops at the server
config), #13108 (Vulkan, stops at the load request), #10341 (gemma3:12b, v0.6.5: only the CPU weights line),
#14312 (qwen2.5vl:7b at 128000, v0.16.3: only fit requests), #9457 (a vision model the excerpt does not name),
#9245, #9031, #7622, #12847, #11090, #3940, #9678, #12303, #12912, #5117, #1016 (held already); no AMD log with
memory lines that no test holds was found."""

from __future__ import annotations

import json
import re

import pytest

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.ollama_heldout import ENGINE_LOGS, loader
from tests.ollama_heldout import flag as _flag
from tests.ollama_heldout import mib as _mib
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = ENGINE_LOGS / "ollama_heldout9"
_load = loader("ollama_heldout9")


def _from_msg(quoted: str, marker: str) -> str:
    """The line holding `marker`, from it on; a line wrapped in the thread (newline + one space) is joined back."""
    joined = quoted.replace("\n ", " ")
    line = next(x for x in joined.splitlines() if marker in x)
    return line[line.index(marker):]


def _gpu(i: int, free_gib: float, total_gib: int, name: str) -> Device:
    return Device(id=f"CUDA{i}", name=name, memory_bytes=total_gib * GiB, free_bytes=int(free_gib * GiB))


def _estimate(model: str, quant: str, gpus: tuple[Device, ...], version: str, **kw):
    return ol.ENGINE.estimate(resolve(model, quant), gpus, ol.OllamaSettings(engine_version=version, **kw))


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#5821: v0.2.8-v0.3.0, flash attention at 80000

LLAMA = "llama3.1-8b-q8-cuda-22.7gib-ctx80000-fa-0.3.0"


def _llama(version: str):
    gpu = _gpu(0, 22.7, 24, "NVIDIA GPU")
    return _estimate("llama3.1:8b", "Q8_0", (gpu,), version, library="cuda", num_ctx=80000, flash_attention="1")


@pytest.mark.parametrize("version", ["0.2.8", "0.3.0"])
def test_llama31_offload_line_to_the_character(version):
    """31 of 33 layers, kv 9.8 GiB, memory.weights.total 16.7 GiB (llm/memory.go of that release adds kv /
    blockCount to each layer's size), graph 5.1 / 5.4 GiB."""
    q = _load(LLAMA)["quoted"]
    mine = _llama(version).engine_view["ollama_log"].splitlines()[0]
    assert mine == _from_msg(q, 'msg="offload to cuda"')


def test_llama31_runner_flags():
    mine, logged = _llama("0.3.0").engine_view["ollama_launch"], _load(LLAMA)["printed"]["launch"]
    for flag in ("--ctx-size", "--batch-size", "--n-gpu-layers", "--parallel"):
        assert _flag(mine, flag) == _flag(logged, flag), flag
    assert "--flash-attn" in mine.split()


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#9362: v0.5.12-v0.5.13, 4 slots

DEEPSEEK = "deepseek-r1-1.5b-cuda-15.7gib-np4-0.5.12"


def _deepseek(version: str):
    return _estimate("deepseek-r1:1.5b", "Q4_K_M", (_gpu(0, 15.7, 16, "NVIDIA GPU"),), version, library="cuda")


@pytest.mark.parametrize("version", ["0.5.12", "0.5.13"])
def test_deepseek_offload_line_up_to_the_cut(version):
    """The stored copy stops inside memory.graph.full ("299.8 Mi"): everything from msg= to there is compared."""
    logged = _from_msg(_load(DEEPSEEK)["quoted"], "msg=offload")
    assert _deepseek(version).engine_view["ollama_log"].splitlines()[0].startswith(logged)


def test_deepseek_runner_context():
    """llama_new_context_with_model: n_ctx 8192 (num_ctx x 4 slots), n_ctx_per_seq 2048, n_ubatch 512, flash_attn 0;
    the Go runner's n_batch 2048 is --batch-size 512 x 4 (llama/llama.go NewContextParams). The vendored llama.cpp
    prints n_ctx_per_seq = cparams.n_ctx / cparams.n_seq_max (v0.5.12 llama/llama.cpp/src/llama.cpp) for a cache
    that stays one unified 8192-cell buffer (kv_size = 8192)."""
    p, ev = _load(DEEPSEEK)["printed"], _deepseek("0.5.12").engine_view
    assert ev["n_ctx"] == int(p["n_ctx ="]) and ev["n_ctx"] // ev["n_seq_max"] == int(p["n_ctx_per_seq ="])
    assert ev["n_ubatch"] == int(p["n_ubatch ="]) and not ev["flash_attn"] and p["flash_attn ="] == "0"
    launch = ev["ollama_launch"]
    assert int(_flag(launch, "--batch-size")) * int(_flag(launch, "--parallel")) == int(p["n_batch ="])


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#9818: v0.6.1-v0.6.2, the Ollama engine on an RTX 3060

GEMMA = "gemma3-27b-rtx3060-11gib-0.6.2"
KV_HALF = {"ctx 1024": dict(num_ctx=1024), "q8_0 cache": dict(flash_attention="1", kv_cache_type="q8_0")}


def _gemma(version: str, **kw):
    gpu = _gpu(0, 11.0, 12, "NVIDIA GeForce RTX 3060")
    return _estimate("gemma3:27b", "Q4_K_M", (gpu,), version, library="cuda", gpu_overhead=1024, **kw)


@pytest.mark.parametrize("version", ["0.6.1", "0.6.2"])
@pytest.mark.parametrize("kv", list(KV_HALF))
def test_gemma3_offload_line_to_the_character(version, kv):
    """kv 496.0 MiB = 62 x 16 x (128 + 128) x 1024 x 2 B: GraphSize of v0.6.2 (fs/ggml/ggml.go, one size for every
    layer) gives it for num_ctx 1024 or for 2048 with an 8-bit cache; the excerpt does not say which."""
    mine = _gemma(version, **KV_HALF[kv]).engine_view["ollama_log"].splitlines()[0]
    assert mine == _from_msg(_load(GEMMA)["quoted"], "msg=offload")


@pytest.mark.parametrize("version", ["0.6.0", "0.6.3"])
def test_gemma3_line_pins_v061_to_v062(version):
    """v0.6.0 sums the layers otherwise (14.8 / 13.7 GiB) and v0.6.3 sizes the sliding-window layers' cache on their
    window (f66216e39): neither prints the log's line."""
    mine = _gemma(version, num_ctx=1024).engine_view["ollama_log"].splitlines()[0]
    assert mine != _from_msg(_load(GEMMA)["quoted"], "msg=offload")


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#11162: v0.9.2, F16 over two RTX 5090 with num_gpu 256

FP16 = "gemma3-27b-fp16-2x-rtx5090-num-gpu-256-0.9.2"


def _fp16():
    gpus = (_gpu(0, 30.9, 32, "NVIDIA GeForce RTX 5090"), _gpu(1, 30.8, 32, "NVIDIA GeForce RTX 5090"))
    return _estimate("gemma3:27b", "F16", gpus, "0.9.2", library="cuda", num_gpu=256)


def test_gemma3_fp16_two_gpus_up_to_the_cut():
    """layers.requested=256, 62 of 63 layers, split 31,31 over [30.9 GiB 30.8 GiB], memory.required.full 58.6 GiB
    (the stored copy stops after "58.6")."""
    logged = _from_msg(_load(FP16)["quoted"], "msg=offload")
    assert _fp16().engine_view["ollama_log"].splitlines()[0].startswith(logged)


def test_gemma3_fp16_runner_command_carries_num_gpu_as_given():
    """llm/server.go (v0.9.2 NewLlamaServer) sets opts.NumGPU = estimate.Layers only when it is -1, then appends
    "--n-gpu-layers", strconv.Itoa(opts.NumGPU) and the estimate's split: --n-gpu-layers 256 --tensor-split 31,31
    (63 before), the runner taking at most the 63 layers there are."""
    ev = _fp16().engine_view
    requested = _load(FP16)["printed"]["layers.requested"]
    assert _flag(ev["ollama_launch"], "--n-gpu-layers") == requested
    assert _flag(ev["ollama_launch"], "--tensor-split") == _load(FP16)["printed"]["layers.split"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#11627: v0.10.1, the llama runner on Metal

METAL = "llama-70b-metal-ctx4096-np2-0.10.1-runner"


def test_llama70b_metal_kv_and_output_buffer():
    """Metal KV 2560.00 MiB (8192 cells x 80 layers x 1024 x 2 x 2 B) and the CPU output buffer 1.04 MiB = (128256 +
    8192) x 4 B x 2 slots (Ollama's embeddings patch keeps the logits rows beside the embeddings ones)."""
    p = _load(METAL)["printed"]
    mac = Device(id="Metal", name="Apple M-series (64 GB)", memory_bytes=64 * GiB, free_bytes=int(55662.79e6))
    ev = _estimate("llama3.3:70b", "Q4_K_M", (mac,), "0.10.1", library="metal", num_ctx=4096,
                   num_parallel=2).engine_view
    assert ev["kv_buffer_bytes"] == {"Metal": int(_mib(p["Metal KV buffer size"]) * MiB)}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size"])


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13536 and #12574: the Ollama engine's per-device lines on the CPU

VL, OSS = "qwen2.5vl-7b-cpu-gpu-undetected-0.13.5", "gpt-oss-20b-cpu-0.12.5"


def _device_lines(quoted: str) -> list[str]:
    return [x[x.index("msg="):] for x in quoted.splitlines() if 'msg="model weights"' in x or
            'msg="kv cache"' in x or 'msg="compute graph"' in x or 'msg="total memory"' in x]


@pytest.mark.parametrize("version", ["0.13.4", "0.13.5"])
def test_qwen25vl_cpu_device_lines(version):
    """offloaded 0/29; model weights 5.6 GiB, kv cache 224.0 MiB, compute graph 6.7 GiB (the 2602-token image
    reserve of v0.13.4+), total memory 12.5 GiB."""
    ev = _estimate("qwen2.5vl:7b", "Q4_K_M", (), version, num_ctx=4096).engine_view
    assert ev["offloaded_layers"] == _load(VL)["printed"]["offloaded"]
    assert ev["ollama_log"].splitlines() == _device_lines(_load(VL)["quoted"])


def test_gpt_oss_cpu_device_lines():
    """kv cache 192.0 MiB, compute graph 109.2 MiB, total memory 13.1 GiB (the excerpt starts after the weights)."""
    mine = _estimate("gpt-oss:20b", "MXFP4", (), "0.12.5").engine_view["ollama_log"].splitlines()
    assert mine[-3:] == _device_lines(_load(OSS)["quoted"])


# ---------------------------------------------------------------------------------------------------------------

def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/"), path.name
        p, q = fx["printed"], fx["quoted"].replace("\n ", " ")
        for key, value in p.items():
            if key.startswith(("memory.", "projector.")):
                assert f'{key}="{value}"' in q, (path.name, key)
            elif key.startswith("layers."):
                assert f"{key}={value if value != '' else chr(34) * 2}" in q, (path.name, key)
            elif key == "launch":
                assert value in q, path.name
            elif key == "offloaded":
                assert f"offloaded {value} layers" in q, path.name
            elif key.endswith((" CPU", "total memory")):  # the Ollama engine's per-device lines
                what, _, dev = key.rpartition(" ") if key != "total memory" else (key, "", "")
                line = next(x for x in q.splitlines() if f'msg="{what}"' in x and (not dev or f"device={dev}" in x))
                assert f'size="{value}"' in line, (path.name, key)
            else:  # a llama.cpp line, its column padding collapsed (the key's last occurrence)
                flat, k = re.sub(" +", " ", q), re.sub(" +", " ", key)
                assert k in flat and value in flat.rsplit(k, 1)[1].splitlines()[0], (path.name, key)
