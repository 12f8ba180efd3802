"""A tenth held-out set of Ollama logs, from v0.3.4 to v0.11.3 (tests/fixtures/engine_logs/ollama_heldout10/, each
with its thread's URL, the model, the device and the release the source lines pin down), read through oomkit with
nothing tuned on them. The printed figures were recorded from the threads before oomkit ran. Compared: the
msg=offload / msg="offload to cuda" line of llm/memory.go, the runner command's flags, the llama.cpp runner's own
buffers and context, and the Ollama engine's per-device lines. Measured before -> after:

- ollama/ollama#6348, mistral:7b Q4_0 on a Windows CUDA GPU with 2.2 GiB available, v0.3.4: every field of the
  line identical (12/33, full 4.8 GiB, partial 2.2 GiB, kv 256.0 MiB, weights 3.9 / 3.8 GiB / 105.0 MiB, graph
  164.0 / 185.0 MiB) from 2.22 GiB free on (11 layers and partial 2.1 GiB below: the printed 2.2 covers 2.15-2.25);
  --ctx-size 2048 --batch-size 512 --n-gpu-layers 12 --parallel 1 alike, before and after.
- ollama/ollama#11723, gpt-oss:20b on a 78.7 GiB GPU, v0.11.3: the line identical (25/25, kv 300.0 MiB, 14.9 GiB,
  weights 11.7 / 10.7 / 1.1 GiB, graph 2.0 / 2.0 GiB), before and after; v0.11.0-v0.11.2 print graph.partial 4.0.
- ollama/ollama#7606, deepseek-r1:32b on ROCm with flash attention and a q4_0 cache at 8192, v0.6.5: KV 576.00 MiB
  and the ROCm_Host output buffer 0.60 MiB exact; ROCm0 compute 317.00 vs 306.22 MiB off, before and after (strict
  xfail: llama.cpp's graph, not an Ollama rule); ROCm_Host compute 26.00 -> 26.01 MiB, exact (the small graph inputs,
  compute.token_index_inputs).
- ollama/ollama#8164, llama3.2:3b on the CPU, 4 slots x 2048, v0.4.0-v0.5.1: CPU model buffer 1918.35 MiB, KV
  896.00 MiB, output 2.00 MiB, n_ctx 8192 exact; n_batch 512 -> 2048 (settings.py V_GO_RUNNER: the Go runner's
  batch x parallel from v0.4.0, was v0.5.8); CPU compute 424.00 -> 424.01 MiB, exact (compute.token_index_inputs).
- ollama/ollama#7323, deepseek-r1:1.5b, 4 slots, v0.5.x, a runner on the CPU whose scheduler saw a GPU (the
  thread: "ollama ps reporting 100% GPU while model is running on CPU only"): CPU_Mapped 1059.89 MiB (the bytes of
  the GPU load's buffers; mmap kept: no --no-mmap while the GPU list is not "cpu"), n_seq_max 4, n_ctx 8192,
  n_ctx_per_seq 2048 exact, before and after.
- ollama/ollama#11628, llama3:8b Q4_0 at 4096, v0.10.x, likewise ("Detects GPU but Runs on CPU Only"):
  CPU_Mapped 4437.80 MiB and the output buffer 0.50 MiB exact; a CPU_AARCH64 buffer of 3744.00 MiB the log does
  not have -> none (layout.py V_CPU_REPACK: Ollama's CMake build of v0.5.8 on never sets GGML_CPU_AARCH64 /
  GGML_CPU_REPACK). Both were set up as GPU-less loads, which Ollama (v0.1.49-v0.30) gives --no-mmap and an
  allocated "CPU" buffer (layout.V_CPU_NO_MMAP): the thread titles name the GPU the scheduler saw.
- ollama/ollama#10833, mistral-small3.1:24b with its vision tower, 40 of 41 layers, the Ollama engine of v0.7.1:
  "model weights" buffer=CUDA0 12.7 GiB and buffer=CPU 1.7 GiB: none -> both identical (layout.py _engine_weights:
  ml/backend/ggml New's placement, where oomkit had only llama.cpp's buffers, the mapped file 13497.42 MiB on the
  CPU); the compute graphs (CUDA0 167.7 MiB, CPU 9.0 GiB: the vision encoder's on the CPU) against llama.cpp's
  626.00 / 18.00 MiB: strict xfail.

Searched (the issues corpus) and not used: #7575 (W7900 + 7900 XTX, 73/81 layers of a 70B F16: ROCm0 42486.07 /
ROCm1 20809.51 MiB, but the excerpt has no offload line to split the layers with), #12908 (ROCm gfx1201, cut before
the weights), #13235 (three GPUs, a backoff loop of a model the excerpt does not name), #13002 (RX 7900 XT, cut
before the device lines), #12754 (CPU fallback, the model not named), #11852, #7606's embedding load (12 layers at
8192 cells, KV 288.00 MiB: nomic-embed-text would give 1152 MiB at its num_ctx 8192 x 4 slots, so the thread's
settings are not known); #12088, #12913, #13763, #14509, #12000, #10553, #10810, #11499, #9517, #12303, #5913 (held
already)."""

from __future__ import annotations

import json
import re

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama import layout as olayout
from oomkit.engines.ollama.launch import resolve_launch
from oomkit.engines.ollama.weights import gguf_view
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.ollama_heldout import ENGINE_LOGS, loader
from tests.ollama_heldout import flag as _flag
from tests.ollama_heldout import mib as _mib
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = ENGINE_LOGS / "ollama_heldout10"
_load = loader("ollama_heldout10")


def _line(quoted: str, marker: str) -> str:
    line = next(x for x in quoted.splitlines() if marker in x)
    return line[line.index(marker):]


def _gpu(dev: str, free_gib: float, total_gib: int, name: str) -> Device:
    return Device(id=dev, name=name, memory_bytes=total_gib * GiB, free_bytes=int(free_gib * GiB))


def _estimate(model: str, quant: str, gpus: tuple[Device, ...], version: str, **kw):
    return ol.ENGINE.estimate(resolve(model, quant), gpus, ol.OllamaSettings(engine_version=version, **kw))


def _mibs(d: dict[str, int]) -> dict[str, float]:
    return {k: round(v / MiB, 2) for k, v in d.items()}


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#6348: v0.3.4, mistral:7b on 2.2 GiB

MISTRAL = "mistral-7b-q4_0-cuda-2.2gib-0.3.4"


def _mistral(free_gib: float):
    return _estimate("mistral:7b", "Q4_0", (_gpu("CUDA0", free_gib, 4, "NVIDIA GPU"),), "0.3.4", library="cuda")


def test_mistral_offload_line_to_the_character():
    """12 of 33 layers, partial 2.2 GiB: Ollama's own arithmetic from 2.22 GiB free (the printed 2.2 GiB)."""
    mine = _mistral(2.24).engine_view["ollama_log"].splitlines()[0]
    assert mine == _line(_load(MISTRAL)["quoted"], 'msg="offload to cuda"')


def test_mistral_layers_follow_the_free_memory_inside_the_printed_rounding():
    """The printed 2.2 GiB is any of 2.15-2.25 GiB: 11 layers below 2.22 GiB, 12 from there (the log's)."""
    layers = {f: _mistral(f).engine_view["ollama_log"].split("layers.offload=")[1].split()[0] for f in (2.15, 2.24)}
    assert layers == {2.15: "11", 2.24: _load(MISTRAL)["printed"]["layers.offload"]}


def test_mistral_runner_flags():
    mine, logged = _mistral(2.24).engine_view["ollama_launch"], _load(MISTRAL)["printed"]["launch"]
    for name in ("--ctx-size", "--batch-size", "--n-gpu-layers", "--parallel"):
        assert _flag(mine, name) == _flag(logged, name), name


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#11723: v0.11.3, gpt-oss:20b on 78.7 GiB

GPTOSS = "gpt-oss-20b-cuda-78.7gib-0.11.3"


def _gptoss(version: str):
    gpu = _gpu("CUDA0", 78.7, 80, "NVIDIA GPU (80 GB)")
    return _estimate("gpt-oss:20b", "MXFP4", (gpu,), version, library="cuda")


def test_gptoss_offload_line_to_the_character():
    """25/25, kv 300.0 MiB, weights 11.7 / 10.7 / 1.1 GiB, graph 2.0 / 2.0 GiB, 14.9 GiB in all."""
    mine = _gptoss("0.11.3").engine_view["ollama_log"].splitlines()[0]
    assert mine == _line(_load(GPTOSS)["quoted"], "msg=offload")


@pytest.mark.parametrize("version", ["0.11.0", "0.11.2"])
def test_gptoss_line_pins_v0113(version):
    """v0.11.0-v0.11.2 print memory.graph.partial 4.0 GiB for the same load."""
    mine = _gptoss(version).engine_view["ollama_log"].splitlines()[0]
    assert 'memory.graph.partial="4.0 GiB"' in mine and mine != _line(_load(GPTOSS)["quoted"], "msg=offload")


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#7606: v0.6.5, deepseek-r1:32b on ROCm, flash attention, q4_0 cache

DEEPSEEK = "deepseek-r1-32b-rocm-fa-q4_0-8192-0.6.5-runner"


def _deepseek():
    gpu = _gpu("ROCm0", 23.5, 24, "AMD Radeon GPU")
    return _estimate("deepseek-r1:32b", "Q4_K_M", (gpu,), "0.6.5", library="rocm", num_ctx=8192,
                     flash_attention="1", kv_cache_type="q4_0").engine_view


def test_deepseek_kv_and_output_buffer():
    """KV 576.00 MiB = 64 x 8192 x 1024 x 2 x 18/32 B; the output buffer 0.60 MiB = (152064 + 5120) x 4 B."""
    p, ev = _load(DEEPSEEK)["printed"], _deepseek()
    assert _mibs(ev["kv_buffer_bytes"]) == {"ROCm0": _mib(p["ROCm0 KV buffer size ="])}
    assert ev["output_buffer_name"] == "ROCm_Host"
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["ROCm_Host  output buffer size ="])


@pytest.mark.xfail(strict=True, reason="llama.cpp's reserved graph (flash attention, q4_0 cache, 512-token batch, "
                   "the logits 297.00 MiB): ROCm0 306.22 MiB printed, oomkit 307.00 (was 317.00 with two hidden "
                   "rows beside the logits; the older graph keeps one, compute.OLD_GRAPH_LAST_BUILD: 10 MiB "
                   "against 9.22, the 0.78 MiB not traced)")
def test_deepseek_rocm_compute_buffer():
    assert _mibs(_deepseek()["compute_buffer_bytes"])["ROCm0"] == \
        _mib(_load(DEEPSEEK)["printed"]["ROCm0 compute buffer size ="])


def test_deepseek_host_compute_buffer():
    """ROCm_Host 26.01 MiB = the token rows 10 MiB + the F32 mask 16 MiB + inp_tokens, inp_pos and inp_out_ids (512
    int32 each: compute.token_index_inputs); was 26.00 without the three."""
    assert _mibs(_deepseek()["compute_buffer_bytes"])["ROCm_Host"] == \
        _mib(_load(DEEPSEEK)["printed"]["ROCm_Host compute buffer size ="])


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#8164: v0.4.0-v0.5.1, llama3.2:3b on the CPU, 4 slots

LLAMA32 = "llama3.2-3b-cpu-np4-0.5.1-runner"


@pytest.mark.parametrize("version", ["0.4.0", "0.5.1"])
def test_llama32_cpu_buffers(version):
    """CPU model buffer 1918.35 MiB, KV 896.00 MiB (28 x 8192 x 1024 x 4 B), output 2.00 MiB = (128256 + 3072) x
    4 slots x 4 B, n_ctx 8192."""
    p, ev = _load(LLAMA32)["printed"], _estimate("llama3.2:3b", "Q4_K_M", (), version).engine_view
    assert _mibs(ev["model_buffer_bytes"]) == {"CPU": _mib(p["CPU buffer size ="])}
    assert _mibs(ev["kv_buffer_bytes"]) == {"CPU": _mib(p["CPU KV buffer size ="])}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size ="])
    assert ev["n_ctx"] == int(p["n_ctx      ="]) and ev["n_ubatch"] == int(p["n_ubatch   ="])


@pytest.mark.parametrize("version", ["0.4.0", "0.5.1"])
def test_llama32_go_runner_batch(version):
    """n_batch 2048 = --batch-size 512 x 4 slots: the Go runner (llama/runner/runner.go, v0.4.0 on) passes
    s.batchSize*s.parallel to NewContextParams (V_GO_RUNNER; was v0.5.8, which gave 512)."""
    spec, s = resolve("llama3.2:3b", "Q4_K_M"), ol.OllamaSettings(engine_version=version)
    launch = resolve_launch(spec, gguf_view(spec), (), s)
    ls = olayout._runner_settings(spec, launch, 4, 0, ())
    assert ls.n_batch == int(_load(LLAMA32)["printed"]["n_batch    ="])


def test_llama32_cpu_compute_buffer():
    """CPU 424.01 MiB = the layer workspace 424.00 + the token ids, positions and out_ids (3 x 2 KiB); was 424.00."""
    ev = _estimate("llama3.2:3b", "Q4_K_M", (), "0.5.1").engine_view
    assert _mibs(ev["compute_buffer_bytes"]) == {"CPU": _mib(_load(LLAMA32)["printed"]["CPU compute buffer size ="])}


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#7323: v0.5.x, deepseek-r1:1.5b, 4 slots: the scheduler saw a GPU, the runner ran on the CPU

R1 = "deepseek-r1-1.5b-cpu-np4-0.5.7-runner"
# Both threads are a machine whose scheduler detected a GPU while the runner, without a working GPU backend, ran
# on the CPU ("ollama ps reporting 100% GPU while model is running on CPU only"; "Ollama on Linux Detects GPU but
# Runs on CPU Only"). The GPU is not named in the excerpts: any that holds the model whole gives these figures.
_SEEN = _gpu("CUDA0", 11.0, 12, "a GPU the scheduler detected (not named in the excerpt)")


def _mapped_on_the_cpu(model: str, quant: str, version: str, printed_mib: float, **kw):
    """The log's CPU_Mapped buffer is the scheduler's GPU at work: llm/server.go NewLlamaServer (v0.1.49-v0.11.4;
    llamaServer.Load to v0.12.6) adds --no-mmap for `gpus[0].Library == "cpu"`, a list that held the GPU here, so
    the runner mapped the file; and, its GPU backend missing, it put every weight in that one mapped buffer: the
    bytes of all oomkit's model buffers for the GPU load. Without the GPU the same load is allocated, "CPU"."""
    seen = _estimate(model, quant, (_SEEN,), version, **kw).engine_view
    assert "--no-mmap" not in seen["ollama_launch"] and "CPU_Mapped" in seen["model_buffer_bytes"]
    assert round(sum(seen["model_buffer_bytes"].values()) / MiB, 2) == printed_mib
    cpu = _estimate(model, quant, (), version, **kw).engine_view
    assert "--no-mmap" in cpu["ollama_launch"] and set(cpu["model_buffer_bytes"]) == {"CPU"}
    return seen, cpu


@pytest.mark.parametrize("version", ["0.5.7", "0.5.11"])
def test_deepseek_r1_context_and_mapped_weights(version):
    """CPU_Mapped 1059.89 MiB, n_seq_max 4, n_ctx 8192; the vendored llama.cpp prints n_ctx_per_seq = n_ctx /
    n_seq_max (2048) for a cache that stays one unified buffer of 8192 cells."""
    p = _load(R1)["printed"]
    ev, _ = _mapped_on_the_cpu("deepseek-r1:1.5b", "Q4_K_M", version, _mib(p["CPU_Mapped model buffer size ="]))
    assert (ev["n_seq_max"], ev["n_ctx"], ev["n_ctx"] // ev["n_seq_max"]) == \
        (int(p["n_seq_max     ="]), int(p["n_ctx         ="]), int(p["n_ctx_per_seq ="]))


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#11628: v0.10.x, llama3:8b Q4_0, the scheduler saw a GPU, the runner ran on the CPU

LLAMA3 = "llama3-8b-q4_0-cpu-4096-0.10.1-runner"


@pytest.mark.parametrize("version", ["0.10.0", "0.10.1"])
def test_llama3_q4_0_cpu_is_not_repacked(version):
    """CPU_Mapped 4437.80 MiB and no repacked buffer: Ollama's ggml build leaves the CPU backend's repacking buffer
    type off from v0.5.8 (oomkit gave a CPU_AARCH64 buffer of 3744.00 MiB); the output buffer 0.50 MiB."""
    p = _load(LLAMA3)["printed"]
    seen, cpu = _mapped_on_the_cpu("llama3:8b", "Q4_0", version, _mib(p["CPU_Mapped model buffer size ="]),
                                   num_ctx=4096)
    assert _mibs(cpu["model_buffer_bytes"]) == {"CPU": _mib(p["CPU_Mapped model buffer size ="])}
    assert "CPU_REPACK" not in _load(LLAMA3)["quoted"] and "CPU_AARCH64" not in _load(LLAMA3)["quoted"]
    assert round(cpu["output_buffer_bytes"] / MiB, 2) == _mib(p["CPU  output buffer size ="])
    assert seen["n_ctx"] == cpu["n_ctx"] == int(p["n_ctx         ="])


def test_cgo_builds_of_v052_to_v057_repack():
    """llama/llama.go of v0.5.2-v0.5.7 compiles with -DGGML_USE_CPU_AARCH64: the same load repacks its Q4_0
    matrices there (the rest allocated: a load without GPUs gets --no-mmap)."""
    ev = _estimate("llama3:8b", "Q4_0", (), "0.5.7", num_ctx=4096).engine_view
    assert set(ev["model_buffer_bytes"]) == {"CPU", "CPU_AARCH64"}


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#10833: v0.7.1, mistral-small3.1 on the Ollama engine, 40 of 41 layers

MS31 = "mistral-small3.1-24b-cuda-40of41-0.7.1-engine"


def _ms31():
    gpu = _gpu("CUDA0", 20.0, 24, "NVIDIA GPU")
    return _estimate("mistral-small3.1:24b", "Q4_K_M", (gpu,), "0.7.1", library="cuda").engine_view


def test_ms31_engine_weights_by_buffer():
    """40 of 41 layers: "model weights" buffer=CUDA0 12.7 GiB (the 40 blocks) and buffer=CPU 1.7 GiB (token_embd,
    the output layer and the vision tower it carries): layout.py _engine_weights (before: llama.cpp's buffers only,
    the mapped file on the CPU, 13497.42 MiB)."""
    ev, p = _ms31(), _load(MS31)["printed"]
    assert "layers.model=41 layers.offload=40" in ev["ollama_log"]
    mine = ev["ollama_memory"]["model weights"]
    assert {k: ol.human_bytes2(v) for k, v in mine.items()} == \
        {"CUDA0": p["model weights CUDA0"], "CPU": p["model weights CPU"]}


@pytest.mark.xfail(strict=True, reason="the Ollama engine's reserved graphs of v0.7.x: CUDA0 167.7 MiB and CPU "
                   "9.0 GiB (the vision encoder's graph on the CPU with its layer) printed; oomkit gives llama.cpp's, "
                   "626.00 / 18.00 MiB")
def test_ms31_compute_graphs():
    cb = _ms31()["compute_buffer_bytes"]
    p = _load(MS31)["printed"]
    assert (f"{cb['CUDA0'] / MiB:.1f} MiB", f"{sum(v for k, v in cb.items() if k != 'CUDA0') / GiB:.1f} GiB") == \
        (p["compute graph CUDA0"], p["compute graph CPU"])


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
            elif key == "launch":
                assert value in q, path.name
            elif key.startswith(("model weights ", "compute graph ")):  # the Ollama engine's ggml.go lines
                what, dev = key.rsplit(" ", 1)
                line = next(x for x in q.splitlines() if f'msg="{what}"' in x and f"buffer={dev} " in x
                            or f'msg="{what}"' in x and f"buffer_type={dev} " in x)
                assert f'size="{value}"' in line, (path.name, key)
            else:  # a llama.cpp line, its column padding collapsed (the key's last occurrence)
                k = re.sub(" +", " ", key)
                assert k in flat and value in flat.rsplit(k, 1)[1].splitlines()[0], (path.name, key)
