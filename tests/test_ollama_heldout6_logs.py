"""A sixth held-out set of Ollama logs (tests/fixtures/engine_logs/ollama_heldout6/, each with its issue URL, the
model, the GPU and the release the source lines pin down), read through oomkit with nothing tuned on them. Every
field the excerpts print is compared: the msg=offload line of llm/memory.go (memory.* and layers.*), the runner's
per-device lines (ml/backend.go, v0.11.5-v0.12.3: "model weights" / "kv cache" / "compute graph" per device and
"total memory"), the layers offloaded, the cache size the runner is asked for and the runner's command line.
Measured before -> after (oomkit - log; "exact" = within the printed rounding):

- ROCm/ROCm#4909, gpt-oss:120b on a Ryzen AI Max+ 395 iGPU (gfx1151, ROCm, 63.8 GiB available), the Ollama
  engine, v0.11.10, 8192 cells, flash attention: the msg=offload line identical to the log's (every figure, 37/37
  layers, layers.split=[37]) and the per-device lines exact (ROCm0 weights 59.8 GiB, CPU 1.1 GiB, kv 450.0 MiB,
  graph ROCm0 121.8 MiB / CPU 5.6 MiB, total 61.4 GiB), before and after: no code change. v0.11.10's graph has no
  HIP pool in it (patch 0022 from v0.12.4), which the gpt-oss graph replay alone gives to the byte.
- ollama/ollama#10916, qwen3:32b-q8_0 over two RTX 3090s (22.8 / 22.7 GiB free), llama runner, v0.9.0 (the line
  numbers of v0.7.1-v0.9.1 alike, each giving the same line), 2 slots x 4096: the msg=offload line identical to the
  log's (layers.split=33,32, allocations [21.0 GiB 20.2 GiB], kv 2.0 GiB, graph 2.7 / 2.7 GiB, required 41.2 GiB)
  and the runner's --ctx-size 8192 --batch-size 512 --n-gpu-layers 65 --parallel 2 --tensor-split 33,32, before
  and after.

Searched (the issues corpus, the code index's issue mirrors) and not found in a form these tests can use: Ollama
0.12+ on Metal with its per-device lines in an issue thread (one README log of codegeex4 on an M4, 0.17.0, cites no
issue), qwen3-vl on CUDA, ROCm or Vulkan (#12847, #12849, #12854, #13118, #13585, #14548: the excerpts stop at the
load request), gpt-oss:120b over three V100s (#11744: the fit request's 15/11/11 split without the GPUs' free
memory), qwen3.5:122b on Strix Halo (#15709: only the CPU graph and the total), llama4:scout (#10739: the offload
line without the context size), CPU-only 0.12+ logs in issue threads (those found are READMEs without a source).
Several others were already held: #11982, #12752, #13343, #14774, #11162, #12088, deep-research-at-home#14."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout6"
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB}


def _load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text())


def _within(got: int, printed: str) -> bool:
    """format.HumanBytes2: one decimal (none for bytes); within half of the last digit."""
    n, unit = printed.split()
    scale = _UNITS[unit]
    return abs(got - float(n) * scale) <= (scale // 20 if unit != "B" else 0)


def _field(line: str, key: str) -> str:
    """The value of key= in a logfmt line (quoted or bare)."""
    rest = line.split(f" {key}=", 1)[1]
    return rest[1:rest.index('"', 1)] if rest.startswith('"') else rest.split(" ", 1)[0]


# ---------------------------------------------------------------------------------------------------------------
# ROCm/ROCm#4909: gpt-oss:120b on a gfx1151 iGPU (ROCm), the Ollama engine, v0.11.10

_GPTOSS_ROCM = "gpt-oss-120b-rocm-gfx1151-ctx8192-0.11.10"


def _gptoss_rocm(env: tuple = ()):
    fx = _load(_GPTOSS_ROCM)
    s = fx["settings"]
    gpu = Device(id="ROCm0", name="AMD Radeon Graphics", memory_bytes=64 * GiB, free_bytes=int(63.8 * GiB))
    est = ol.ENGINE.estimate(resolve("gpt-oss:120b", "MXFP4_MOE"), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], library=s["library"], env=env,
                                               engine_version=fx["engine_version"]))
    return fx, est


def test_gptoss_rocm_offload_line_to_the_character():
    """server.go:543 msg=offload: every memory.* field, layers.offload=37 and layers.split=[37] (a Go slice,
    d5a0d8d90, v0.11.5+), identical to the log's line from msg= on."""
    fx, est = _gptoss_rocm()
    line = next(x for x in fx["quoted"].splitlines() if "msg=offload" in x)
    assert est.engine_view["ollama_log"].splitlines()[0] == line[line.index("msg=offload"):]
    for key, printed in fx["printed"].items():
        if key.startswith("memory."):
            assert _field(line, key) == printed, key


def test_gptoss_rocm_runner_lines():
    """The runner's ml/backend.go lines after its load (they are printed whatever layout the scheduler chose; with
    OLLAMA_NEW_ESTIMATES=1, v0.11.5-v0.11.11's opt-in, the scheduler lays out from them and the layout is the same
    37/37 on ROCm0): weights 59.8 GiB on ROCm0 and the input layer's 1.1 GiB token_embd on the CPU, the cache of 18
    full layers x 8192 cells and 18 sliding ones x (4096 + 512) cells (the SWA cache's 4096 cells of memory a
    sequence and the batch) at 2 KiB a cell = 450.0 MiB, graph ROCm0 121.8 MiB (the gpt-oss graph replayed with
    the split inputs, no HIP pool before v0.12.4), CPU 5.6 MiB, total 61.4 GiB."""
    fx, est = _gptoss_rocm(env=(("OLLAMA_NEW_ESTIMATES", "1"),))
    p, mine = fx["printed"], est.engine_view["ollama_memory"]
    for line in ("model weights", "kv cache", "compute graph"):
        assert set(mine[line]) == set(p[line]), line
        for dev, printed in p[line].items():
            assert _within(mine[line][dev], printed), (line, dev, mine[line][dev] / MiB)
    assert _within(mine["total memory"], p["total memory"])
    assert est.engine_view["ollama_layers"] == p["layers"] and est.engine_view["n_ctx"] == p["KvSize"]
    assert est.engine_view["ollama_runner"] == "Ollama engine" and est.settings["flash_attention"] == "on"


def test_gptoss_rocm_gpu_named_in_the_log():
    fx = _load(_GPTOSS_ROCM)
    assert "gfx1151" in fx["gpus"][0]["log_line"] and fx["gpus"][0]["log_line"] in fx["quoted"]
    assert "architecture=gptoss file_type=MXFP4" in fx["quoted"] and "num_tensors=471" in fx["quoted"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#10916: qwen3:32b-q8_0 over two RTX 3090s, llama runner, v0.9.0, 2 slots

_QWEN3_2GPU = "qwen3-32b-q8-2x3090-np2-0.9.0"


@pytest.mark.parametrize("version", ["0.7.1", "0.8.0", "0.9.0", "0.9.1"])
def test_qwen3_two_gpu_offload_line(version):
    """The msg=offload line identical to the log's at every release whose line numbers the log shows: 65 layers
    split 33,32 over 22.8 and 22.7 GiB, allocations [21.0 GiB 20.2 GiB] (the first GPU holds the graph's 2.7 GiB
    and the one-layer buffer, the second the output layer), kv 2.0 GiB = 64 layers x 2 x 1024 x 2 B x 8192."""
    fx = _load(_QWEN3_2GPU)
    s = fx["settings"]
    gpus = tuple(Device(id=f"GPU{i}", name="NVIDIA GeForce RTX 3090", memory_bytes=24 * GiB, free_bytes=int(f * GiB))
                 for i, f in enumerate((22.8, 22.7)))
    est = ol.ENGINE.estimate(resolve("qwen3:32b", s["weights_quant"]), gpus,
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               library=s["library"], engine_version=version))
    line = next(x for x in fx["quoted"].splitlines() if "msg=offload" in x)
    assert est.engine_view["ollama_log"].splitlines()[0] == line[line.index("msg=offload"):]
    launch = est.engine_view["ollama_launch"].split()
    logged = fx["printed"]["launch"].split()
    for flag in ("--ctx-size", "--batch-size", "--n-gpu-layers", "--parallel", "--tensor-split"):
        assert launch[launch.index(flag) + 1] == logged[logged.index(flag) + 1], flag
    assert est.engine_view["ollama_runner"] != "Ollama engine"


def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/") and "/issues/" in fx["source"], path.name
        p, q = fx["printed"], fx["quoted"]
        for key, value in p.items():
            if key.startswith("memory."):
                assert f'{key}="{value}"' in q or f"{key}={value}" in q, (path.name, key)
            elif key.startswith("layers."):
                assert f"{key}={value}" in q, (path.name, key)
        for line in ("model weights", "kv cache", "compute graph"):
            for dev, printed in (p.get(line) or {}).items():
                assert f'msg="{line}" device={dev} size="{printed}"' in q, (path.name, line, dev)
        if "total memory" in p:
            assert f'msg="total memory" size="{p["total memory"]}"' in q, path.name
        if "layers" in p:
            assert f'msg="offloaded {p["layers"]} layers to GPU"' in q, path.name
        if "KvSize" in p:
            assert f'KvSize:{p["KvSize"]} ' in q, path.name
        if "launch" in p:
            assert p["launch"] in q, path.name
