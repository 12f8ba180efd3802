"""A twelfth held-out set of Ollama logs from outside Ollama's issue tracker (a Docker image's README, notebooks of
Windows and Mac setups, a blog post), v0.3.7 to v0.17.0 on the CPU, Windows CUDA, Windows ROCm and Metal
(tests/fixtures/engine_logs/ollama_heldout12/, each with its page's URL, the model, the device and the release the
source lines pin down), read through oomkit with nothing tuned on them. The printed figures were recorded from the
pages before oomkit ran. Compared: the msg=offload / "offload to" line of llm/memory.go, the runner command, the
llama runner's "model weights" / "kv cache" / "compute graph" / "total memory" estimate (v0.17.0) and the runner's
context and buffers. Measured before -> after:

- didier-durand/llms-in-clouds docs/openmanus-smollm.md, smollm2:1.7b Q8_0 without a GPU, v0.6.0, 4 slots x 2048:
  the offload line 14 of 15 (memory.available is the machine's free RAM, an input oomkit is not given); the
  runner's n_seq_max 4, n_ctx 8192, n_ctx_per_seq 2048, n_ubatch 512, CPU KV 1536.00, output 0.78, compute 544.01
  and model 1734.38 MiB exact, 8 of 8; the weights' buffer "CPU_Mapped" -> "CPU" as printed (--no-mmap);
  the command's --n-gpu-layers 0 -> absent (the log has none: llm/server.go appends it only for opts.NumGPU >= 0).
- jazzwang/snippet md/genai/llm/phi.md, phi-4 Q4_K_M on Windows, an RTX 4060 Laptop GPU with 6.9 GiB, v0.5.2-v0.5.4:
  the "offload to cuda" line to the character (29/41, 9.6 / 6.8 GiB, 15 of 15); n_ctx 2048, one slot, KV CPU 110.00
  / CUDA0 290.00 and the output buffer 0.40 MiB exact (5 of 5); the model buffers 0 of 3: Windows' --no-mmap (CPU
  275.62 + CUDA_Host 2622.81 MiB printed, one CPU_Mapped range of 2914.55 in oomkit, which is not told the OS) and
  CUDA0 5721.64 against 5731.89 under the Hugging Face name (oomkit's recipe for microsoft/phi-4-gguf; the library's
  phi4:14b, whose GGUF has this file's Q4_K 101 / Q5_K 40 / Q6_K 21 tensors, gives 5731.89). Strict xfails.
- hsiangjenli/blog source/_posts/tutorial_ollama_opencommit.md, mistral:7b Q4_0 on the CPU in Docker, v0.3.7-v0.3.9,
  4 slots x 2048: the "offload to cpu" line 13 of 13 before and after (memory.available, the free RAM, not given);
  the command's --n-gpu-layers 0 -> absent.
- YYC-Cube/yyc3-ai-family scripts/iMac-M4.md, phi3 mini 128k Q4_0 on an Apple M4 (25.0 GiB, 24.5 available), the
  llama runner of v0.17.0 at the VRAM-tiered default context (32768): "model weights" 2.0, "kv cache" 12.0,
  "compute graph" 2.0, "total memory" 16.0 GiB, 4 of 4; n_ctx 32768, one slot, CPU_Mapped 52.84, output 0.13 and
  Metal KV 12288.00 MiB exact (5 of 5); Metal_Mapped 2021.82 (oomkit 2074.66: the mapping's range, llama.cpp's
  get_mapping_range), a strict xfail; the load request's FlashAttention:Auto (v0.13.4+), which the runner's
  llama.cpp resolves to enabled: CPU compute 82.01 -> 70.01 MiB (exact), Metal compute 2154.00 -> 114.00 MiB
  (108.01 printed, a strict xfail).

- take0a/mcp docs/ollama.md, gemma3:27b Q4_K_M on a Radeon 780M (gfx1103 iGPU, ROCm on Windows, 33.6 GiB), the
  Ollama engine of v0.9.6, OLLAMA_CONTEXT_LENGTH 4096 x 2 slots: the offload line to the character with its
  projector (17 of 17), "model weights" ROCm0 16.2 / CPU 1.1 GiB (2 of 2); "compute graph" ROCm0 565.0 MiB -> 1.1
  GiB as printed (the vision encoder's reserve, layout._siglip_reserve) and CPU ROCm_Host 26.51 -> CPU 10.5 MiB as
  printed (the input layer's rows, layout._engine_host_graph): 19 -> 21 of 21.

84 -> 86 -> 87 of 94 printed figures agree (2 more are the free RAM of CPU loads, which oomkit is not given; 5 are
off: phi-4's three model buffers, phi3's Metal mapping and Metal compute buffer); the runner commands' layer flag
now matches the two CPU logs.

The rules changed:
- layout._launch_command leaves out --n-gpu-layers where llm/server.go NewLlamaServer (v0.1.32-v0.11.4) does:
  opts.NumGPU is -1 and no layer goes to a GPU (V_NGL_FLAG);
- layout._siglip_reserve: in the Ollama engine's runner (v0.7.1 on) the GPU holding gemma3's vision tower reserves
  the larger of the text batch's graph and the SigLIP encoder's on the 2048 x 2048 reserve image
  (runner/ollamarunner/runner.go reserveWorstCaseGraph, mmStore.getMultimodal(reserve=true));
- layout._engine_host_graph: where the scheduler's old estimate decided (v0.7.1 on) and every layer is on the
  GPUs, the Ollama engine's CPU compute buffer is the input layer's rows (num_batch x n_embd x 4 B), not llama.cpp's
  <GPU>_Host buffer (ml/backend/ggml New: the CPU's own buffer type, no op offload).

- the llama runner's flash attention on auto from v0.13.4 (launch.V_FA_AUTO_LLAMA; bd6c1d6b4, #13052:
  llm/server.go NewLlamaServer loadRequest.FlashAttention = ml.FlashAttentionAuto unless OLLAMA_FLASH_ATTENTION is
  set; fs/ggml GraphSize keeps the non-flash graph for the estimate): phi3's CPU compute 82.01 -> 70.01 (exact),
  Metal compute 2154.00 -> 114.00 MiB (108.01 printed). ollama_heldout7's phi4 log, pinned to v0.13.5 before, is
  v0.13.2's by its own lines (server.go:1332, "flash_attn = disabled"), and test_ollama_releases' lfm2 at 0.14.2
  (the llama runner) is "auto", not "off".
- --no-mmap for a load without GPUs (layout.V_CPU_NO_MMAP; llm/server.go, 17b7186cd, v0.1.49 until v0.30: "For
  CPU loads we want the memory to be allocated, not FS cache"): smollm2's "CPU" buffer and the command's --no-mmap.
  ollama_heldout10's deepseek-r1 (ollama/ollama#7323) and llama3 (#11628), which print CPU_Mapped, were set up as
  GPU-less loads; their threads' schedulers saw a GPU ("100% GPU", "Detects GPU but Runs on CPU Only"), which keeps
  the mapping, and they are now read that way.

Searched and not used: a Termux log of llama3 on v0.1.48 and a granite-code Metal log of v0.4 (their repositories
not found in the stored index), the codegeex4:9b half of the M4 log (not in oomkit's catalog), a Kaggle T4 notebook
of llama3.1:8b (repository not found), ROCm/ROCm#4909 (held already)."""

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
FIXTURES = ENGINE_LOGS / "ollama_heldout12"
_load = loader("ollama_heldout12")


def _fields(line: str) -> dict[str, str]:
    """The key=value fields of an offload line (quoted values unquoted)."""
    return {k: v.strip('"') for k, v in re.findall(r'((?:layers|memory)\.[a-z_.]+)=("[^"]*"|\S+)', line)}


def _printed_offload(stem: str, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {k: v for k, v in _load(stem)["printed"].items() if k.startswith(("layers.", "memory.")) and k not in skip}


def _mibs(table: dict) -> dict[str, float]:
    return {k: round(v / MiB, 2) for k, v in table.items()}


def _estimate(model: str, quant: str, gpus: tuple[Device, ...], version: str, **kw):
    return ol.ENGINE.estimate(resolve(model, quant), gpus, ol.OllamaSettings(engine_version=version, **kw)).engine_view


# ---------------------------------------------------------------------------------------------------------------
# didier-durand/llms-in-clouds: smollm2:1.7b on the CPU, v0.6.0

SMOL = "smollm2-1.7b-q8_0-cpu-np4-0.6.0"


def _smol():
    return _estimate("smollm2:1.7b", "Q8_0", (), "0.6.0", library="cpu")


def test_smollm2_offload_line():
    """0/25 layers, full 3.9 GiB (allocations the same: the system memory is the one device), kv 1.5 GiB (4 x 2048
    cells x 24 layers x 32 heads x 64 x 2 x 2 B), weights 3.1 / 3.0 / 102.0 MiB, graph 544.0 / 602.3 MiB. The
    printed memory.available ("[6.9 GiB]") is the free RAM, which oomkit is not given."""
    mine = _fields(_smol()["ollama_log"].splitlines()[0])
    printed = _printed_offload(SMOL, skip=("memory.available",))
    assert {k: mine.get(k) for k in printed} == printed


def test_smollm2_runner_context_and_buffers():
    p, ev = _load(SMOL)["printed"], _smol()
    assert (ev["n_seq_max"], ev["n_ctx"], ev["n_ctx"] // ev["n_seq_max"], ev["n_ubatch"]) == \
        (int(p["n_seq_max     ="]), int(p["n_ctx         ="]), int(p["n_ctx_per_seq ="]), int(p["n_ubatch      ="]))
    assert _mibs(ev["kv_buffer_bytes"]) == {"CPU": _mib(p["CPU KV buffer size ="])}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size ="])
    assert _mibs(ev["compute_buffer_bytes"]) == {"CPU": _mib(p["CPU compute buffer size ="])}
    assert list(_mibs(ev["model_buffer_bytes"]).values()) == [_mib(p["CPU model buffer size ="])]


def test_smollm2_model_buffer_is_allocated():
    """'CPU model buffer size = 1734.38 MiB' after a command with --no-mmap: llm/server.go NewLlamaServer gives a
    load without GPUs --no-mmap (v0.1.49-v0.30, layout.V_CPU_NO_MMAP), so the weights are allocated, not mapped
    (CPU_Mapped before)."""
    ev = _smol()
    assert set(ev["model_buffer_bytes"]) == {"CPU"} and "--no-mmap" in ev["ollama_launch"]
    assert "--no-mmap" in _load(SMOL)["quoted"]


def test_smollm2_runner_command():
    """--ctx-size 8192 --parallel 4 and no --n-gpu-layers: NewLlamaServer appends it only for opts.NumGPU >= 0, and
    without GPUs the -1 stays (it was --n-gpu-layers 0)."""
    mine = _smol()["ollama_launch"]
    assert (_flag(mine, "--ctx-size"), _flag(mine, "--parallel"), _flag(mine, "--n-gpu-layers")) == ("8192", "4", None)
    assert "--ctx-size 8192 --batch-size 512 --threads 12 --no-mmap --parallel 4" in _load(SMOL)["quoted"]


# ---------------------------------------------------------------------------------------------------------------
# jazzwang/snippet: phi-4 Q4_K_M on Windows, RTX 4060 Laptop GPU (6.9 GiB), v0.5.2-v0.5.4

PHI4 = "phi-4-q4km-windows-cuda-6.9gib-partial29-0.5.4"
_LAPTOP = Device(id="CUDA0", name="NVIDIA GeForce RTX 4060 Laptop GPU", memory_bytes=8 * GiB, free_bytes=7099 * MiB)


def _phi4(version: str = "0.5.4", model: str = "microsoft/phi-4-gguf"):
    return _estimate(model, "Q4_K_M", (_LAPTOP,), version, library="cuda", num_ctx=2048)


@pytest.mark.parametrize("version", ["0.5.2", "0.5.4"])
def test_phi4_offload_line_to_the_character(version):
    """29/41 layers, 6.8 of 9.6 GiB, kv 400.0 MiB, weights 8.2 / 7.8 GiB / 402.0 MiB, graph 266.7 MiB."""
    line = next(x for x in _load(PHI4)["quoted"].splitlines() if "offload to cuda" in x)
    assert _phi4(version)["ollama_log"].splitlines()[0] == line[line.index('msg="offload to cuda"'):]


def test_phi4_runner_context_kv_and_output():
    """One slot of 2048 cells; the KV of the 11 CPU layers (110.00 MiB) and of the 29 on CUDA0 (290.00)."""
    p, ev = _load(PHI4)["printed"], _phi4()
    assert (ev["n_seq_max"], ev["n_ctx"]) == (int(p["n_seq_max     ="]), int(p["n_ctx         ="]))
    assert _mibs(ev["kv_buffer_bytes"]) == {"CPU": _mib(p["CPU KV buffer size ="]),
                                            "CUDA0": _mib(p["CUDA0 KV buffer size ="])}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size ="])
    mine = ev["ollama_launch"]
    assert (_flag(mine, "--ctx-size"), _flag(mine, "--n-gpu-layers"), _flag(mine, "--parallel")) == ("2048", "29", "1")


def test_phi4_gpu_weights_of_the_library_gguf():
    """CUDA0 model buffer 5731.89 MiB printed: layers 11-39 of a GGUF typed Q4_K 101 / Q5_K 40 / Q6_K 21, as the
    library's phi4:14b is (attn_qkv at Q5_K by llama-quantize's own rule)."""
    ev = _phi4(model="phi4:14b")
    assert round(ev["model_buffer_bytes"]["CUDA0"] / MiB, 2) == _mib(_load(PHI4)["printed"]["CUDA0 model buffer size ="])


@pytest.mark.xfail(strict=True, reason="CUDA0 model buffer 5731.89 MiB printed, oomkit 5721.64 for "
                   "microsoft/phi-4-gguf: its Q4_K_M recipe for the Hugging Face file, not the file's own types "
                   "(the library's phi4:14b, with the same Q4_K/Q5_K/Q6_K counts, gives 5731.89)")
def test_phi4_gpu_weights_of_the_hugging_face_name():
    ev = _phi4()
    assert round(ev["model_buffer_bytes"]["CUDA0"] / MiB, 2) == _mib(_load(PHI4)["printed"]["CUDA0 model buffer size ="])


@pytest.mark.xfail(strict=True, reason="CPU 275.62 + CUDA_Host 2622.81 MiB printed, oomkit one CPU_Mapped range of "
                   "2914.55: Windows' CUDA rule in llm/server.go (runtime.GOOS == windows -> --no-mmap) needs the OS, "
                   "which the estimate is not given")
def test_phi4_host_weights_without_mmap():
    p, ev = _load(PHI4)["printed"], _phi4(model="phi4:14b")
    assert {k: v for k, v in _mibs(ev["model_buffer_bytes"]).items() if k != "CUDA0"} == \
        {"CPU": _mib(p["CPU model buffer size ="]), "CUDA_Host": _mib(p["CUDA_Host model buffer size ="])}


# ---------------------------------------------------------------------------------------------------------------
# hsiangjenli/blog: mistral:7b Q4_0 on the CPU (Docker), v0.3.7-v0.3.9

MISTRAL = "mistral-7b-q4_0-cpu-docker-np4-0.3.7"


@pytest.mark.parametrize("version", ["0.3.7", "0.3.9"])
def test_mistral_cpu_offload_line(version):
    """0/33, full 5.5 GiB, kv 1.0 GiB (4 x 2048 cells), weights 4.7 GiB with each layer's KV (before v0.6.1) /
    4.6 GiB / 105.0 MiB, graph 560.0 / 585.0 MiB; no memory.gpu_overhead before v0.3.10."""
    ev = _estimate("mistral:7b", "Q4_0", (), version, library="cpu")
    mine = _fields(ev["ollama_log"].splitlines()[0])
    printed = _printed_offload(MISTRAL, skip=("memory.available",))
    assert {k: mine.get(k) for k in printed} == printed and "memory.gpu_overhead" not in mine
    launch = ev["ollama_launch"]
    assert (_flag(launch, "--ctx-size"), _flag(launch, "--parallel"), _flag(launch, "--n-gpu-layers")) == \
        ("8192", "4", None)
    assert "--ctx-size 8192 --batch-size 512 --embedding --log-disable --no-mmap --parallel 4" in \
        _load(MISTRAL)["quoted"]


# ---------------------------------------------------------------------------------------------------------------
# YYC-Cube/yyc3-ai-family: phi3 mini 128k Q4_0 on an Apple M4, the llama runner of v0.17.0

PHI3 = "phi3-mini-128k-q4_0-metal-m4-ctx32768-0.17.0"
_M4 = Device(id="Metal", name="Apple M4", memory_bytes=25 * GiB, free_bytes=int(24.5 * GiB))


def _phi3():
    return _estimate("phi3:3.8b-mini-128k-instruct-q4_0", "Q4_0", (_M4,), "0.17.0", library="metal")


def test_phi3_estimate_lines():
    """The VRAM tier of 25.0 GiB: num_ctx 32768 (server/routes.go "vram-based default context"); weights 2.0 GiB,
    kv 12.0 GiB (32768 x 32 x 3072 x 2 x 2 B), graph 2.0 GiB (without flash attention: the load request's Auto
    is not FlashAttentionEnabled), 16.0 GiB."""
    mine = _phi3()["ollama_log"].splitlines()
    printed = [f"{k}{v}" for k, v in _load(PHI3)["printed"].items() if k.startswith("msg=")]
    assert mine == printed


def test_phi3_runner_context_kv_output_and_host_weights():
    p, ev = _load(PHI3)["printed"], _phi3()
    assert (ev["n_seq_max"], ev["n_ctx"]) == (int(p["n_seq_max     ="]), int(p["n_ctx         ="]))
    assert ev["n_ctx"] == int(p["default_num_ctx="])
    assert _mibs(ev["kv_buffer_bytes"]) == {"Metal": _mib(p["Metal KV buffer size ="])}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size ="])
    assert round(ev["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2) == _mib(p["CPU_Mapped model buffer size ="])


@pytest.mark.xfail(strict=True, reason="Metal_Mapped 2021.82 MiB printed, oomkit 2074.66 (the file less nothing): "
                   "llama.cpp maps the range from the first to the last tensor the Metal buffer holds "
                   "(llama-model-loader get_mapping_range), token_embd's 52.84 MiB at the file's start left out "
                   "(engines/llamacpp weights)")
def test_phi3_metal_mapping():
    ev = _phi3()
    assert round(ev["model_buffer_bytes"]["Metal_Mapped"] / MiB, 2) == \
        _mib(_load(PHI3)["printed"]["Metal_Mapped model buffer size ="])


def test_phi3_runner_cpu_compute_with_auto_flash_attention():
    """From v0.13.4 (bd6c1d6b4) the llama runner gets FlashAttention:Auto unless OLLAMA_FLASH_ATTENTION is set
    (llm/server.go NewLlamaServer) and llama.cpp enables it on Metal: CPU compute 70.01 MiB as printed (82.01 with
    the runner's flash attention taken as off)."""
    p, ev = _load(PHI3)["printed"], _phi3()
    assert ev["flash_attn"] is True
    assert _mibs(ev["compute_buffer_bytes"])["CPU"] == _mib(p["CPU compute buffer size ="])


@pytest.mark.xfail(strict=True, reason="Metal compute 108.01 MiB printed, oomkit 114.00 with the flash-attention "
                   "graph the runner's auto resolves to (2154.00 without)")
def test_phi3_runner_metal_compute():
    p, ev = _load(PHI3)["printed"], _phi3()
    assert _mibs(ev["compute_buffer_bytes"])["Metal"] == _mib(p["Metal compute buffer size ="])


# ---------------------------------------------------------------------------------------------------------------
# take0a/mcp: gemma3:27b on a Radeon 780M (ROCm, Windows), the Ollama engine of v0.9.6

G27 = "gemma3-27b-q4km-rocm-780m-np2-0.9.6"
_780M = Device(id="ROCm0", name="AMD Radeon 780M Graphics", memory_bytes=int(33.7 * GiB), free_bytes=36083236864)


def _g27(version: str = "0.9.6"):
    return _estimate("gemma3:27b", "Q4_K_M", (_780M,), version, library="rocm",
                     env=(("OLLAMA_CONTEXT_LENGTH", "4096"),))


def test_gemma3_780m_offload_line_to_the_character():
    """63/63, 20.1 GiB with the projector (795.9 MiB, graph 1.0 GiB), kv 1.6 GiB (2 x 4096 cells), weights 15.4 /
    14.3 / 1.1 GiB, graph 565.0 MiB / 1.6 GiB; --ctx-size 8192 --parallel 2 --n-gpu-layers 63."""
    line = next(x for x in _load(G27)["quoted"].splitlines() if "msg=offload" in x)
    ev = _g27()
    assert ev["ollama_log"].splitlines()[0] == line[line.index("msg=offload"):]
    launch = ev["ollama_launch"]
    assert (_flag(launch, "--ctx-size"), _flag(launch, "--parallel"), _flag(launch, "--n-gpu-layers")) == \
        ("8192", "2", "63")


def test_gemma3_780m_engine_weights():
    """"model weights" ROCm0 16.2 GiB (the 62 blocks, the output layer and the vision tower with it) and CPU 1.1 GiB
    (token_embd, the input layer)."""
    p, w = _load(G27)["printed"], _g27()["ollama_memory"]["model weights"]
    assert {d: f'"{ol.human_bytes2(b)}"' for d, b in w.items()} == \
        {"ROCm0": p['msg="model weights" buffer=ROCm0 size='], "CPU": p['msg="model weights" buffer=CPU size=']}


def test_gemma3_780m_gpu_graph_is_the_vision_reserve():
    """"compute graph" ROCm0 1.1 GiB: reserveWorstCaseGraph's SigLIP graph of the 2048 x 2048 image (1135.02 MiB),
    above the text batch's 565.0 MiB that oomkit gave before (layout._siglip_reserve)."""
    got = _g27()["compute_buffer_bytes"]["ROCm0"]
    assert f'"{ol.human_bytes2(got)}"' == _load(G27)["printed"]['msg="compute graph" backend=ROCm0 buffer_type=ROCm0 size=']
    assert ol.human_bytes2(got) != _load(G27)["printed"]["memory.graph.full"]


def test_gemma3_780m_cpu_graph():
    """"compute graph" backend=CPU 10.5 MiB = the input layer's get_rows, 512 x 5376 x 4 (layout._engine_host_graph;
    it was llama.cpp's ROCm_Host compute buffer, 26.51 MiB)."""
    got = _g27()["compute_buffer_bytes"].get("CPU", 0)
    assert "ROCm_Host" not in _g27()["compute_buffer_bytes"]
    assert f'"{ol.human_bytes2(got)}"' == _load(G27)["printed"]['msg="compute graph" backend=CPU buffer_type=CPU size=']


# ---------------------------------------------------------------------------------------------------------------

def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/"), path.name
        p, q = fx["printed"], fx["quoted"]
        flat = re.sub(" +", " ", q)
        for key, value in p.items():
            if key.startswith("memory."):
                assert f'{key}="{value}"' in q, (path.name, key)
            elif key.startswith("layers."):
                assert f"{key}={value if value != '' else chr(34) * 2}" in q, (path.name, key)
            else:  # a runner or estimate line, its column padding collapsed (the key's last occurrence)
                k = re.sub(" +", " ", key)
                assert k in flat and value in flat.rsplit(k, 1)[1].splitlines()[0], (path.name, key)
