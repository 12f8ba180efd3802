"""An eleventh held-out set of Ollama logs, embedding models from v0.3.6 to v0.9.6 on CUDA and Metal
(tests/fixtures/engine_logs/ollama_heldout11/, each with its thread's URL, the model, the device and the release the
source lines pin down), read through oomkit with nothing tuned on them. The printed figures were recorded from the
threads before oomkit ran. Compared: the msg=offload / msg="offload to cuda" line of llm/memory.go, the runner's
context and buffers. Measured before -> after:

- MemTensor/MemOS#103, nomic-embed-text on a Tesla P100 with 4.6 GiB available, v0.9.3-v0.9.6, num_ctx 8192 clamped
  to n_ctx_train 2048: full / partial / allocations 772.9 -> 754.4 MiB, kv 12.0 -> 6.0 MiB, graph 24.0 -> 12.0 MiB,
  --ctx-size 4096 -> 2048, --parallel 2 -> 1 (the log's scheduler line: parallel=1); weights 260.9 / 216.1 / 44.7
  MiB and 13/13 layers identical before and after. 13 of 17 fields before, 17 of 17 after. The scheduler's
  required="809.9 MiB" is the estimate before the clamp (sched.go estimates at the asked num_ctx): v0.9.2's line.
- ollama/ollama#11017, nomic-embed-text:v1.5 on Metal (10.7 GiB, 9.0 available), v0.7.1-v0.9.0, num_ctx 8192:
  full / partial / allocations 938.9 -> 864.9 MiB (the 512 MiB Metal minimum inside), kv 48.0 -> 24.0 MiB,
  --ctx-size 16384 -> 8192, --parallel 2 -> 1 (the scheduler's line: parallel=1); 13/13 layers, weights 260.9 /
  216.1 MiB identical before and after. 9 of 13 printed fields before, 13 of 13 after.
- ggml-org/llama.cpp#9636, nomic-embed-text on CUDA with 11.1 GiB available, v0.3.3-v0.3.6, 4 slots: the line
  identical (13/13, full 1.0 GiB, kv 96.0 MiB = 32768 cells, weights 312.1 / 267.4 / 44.7 MiB) before and after:
  the release before embedding models got one slot.
- ollama/ollama#9994, bge-m3 on CUDA, v0.6.1 (OLLAMA_NUM_PARALLEL automatic): n_seq_max 4 -> 1, n_ctx 8192 -> 2048,
  KV 768.00 -> 192.00 MiB (printed 192.00), the output buffer 0.00 MiB before and after, the CUDA0 model buffer
  1097.52 -> 577.22 MiB (printed 577.22: no output copy of token_embd, position_embd on the CPU with the input
  layer); CUDA_Host compute 3.01 -> 5.01 MiB (printed 5.01: BERT's gathered position rows on the host), CUDA0
  compute 28.00 -> 25.00 against 25.01 printed (build_bert before PR #12181: four rows beside the scores, and the
  mask the device copies).

The rule: settings.V_EMBED_PARALLEL_ONE 0.12.0 -> 0.3.7. server/sched.go processPending sets numParallel = 1 for a
model without the completion capability ("Embedding models should always be loaded with parallel=1", 90ca84172, #6467,
first in v0.3.7; v0.3.6 has none: llama.cpp#9636's parallel=4).

Not modelled: the library model's parameters layer (nomic-embed-text's num_ctx 8192); the tests pass num_ctx 8192 as
the logs' scheduler and warning lines print it.

Searched (the issues corpus) and not used: #3029 and #3727 (nomic-embed-text, v0.1.28 / v0.1.32: the stored copies
stop in the metadata), #10811 (nomic-embed-text, 0.7.1 on a Mac: the stored copy has no offload line), #9029 (four
GPUs, 11344.01 MiB compute buffers each: the model and settings not in the stored copy), #8068 (0.5.2 on the CPU:
the model not named), #12938 / #13085 / #12247 / #10114 / #9181 / #8995 / #11819 (held already)."""

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
FIXTURES = ENGINE_LOGS / "ollama_heldout11"
_load = loader("ollama_heldout11")


def _line(quoted: str, marker: str) -> str:
    line = next(x for x in quoted.splitlines() if marker in x)
    return line[line.index(marker):]


def _fields(line: str) -> dict[str, str]:
    """The key=value fields of an offload line (quoted values unquoted)."""
    return {k: v.strip('"') for k, v in re.findall(r'((?:layers|memory)\.[a-z_.]+)=("[^"]*"|\S+)', line)}


def _gpu(dev: str, free_gib: float, total_gib: float, name: str) -> Device:
    return Device(id=dev, name=name, memory_bytes=int(total_gib * GiB), free_bytes=int(free_gib * GiB))


def _estimate(model: str, quant: str, gpus: tuple[Device, ...], version: str, **kw):
    return ol.ENGINE.estimate(resolve(model, quant), gpus, ol.OllamaSettings(engine_version=version, **kw))


def _printed_fields_agree(stem: str, ev) -> None:
    mine, printed = _fields(ev["ollama_log"].splitlines()[0]), _load(stem)["printed"]
    assert {k: mine.get(k) for k in printed if k.startswith(("layers.", "memory."))} == \
        {k: v for k, v in printed.items() if k.startswith(("layers.", "memory."))}


# ---------------------------------------------------------------------------------------------------------------
# MemTensor/MemOS#103: v0.9.3-v0.9.6, nomic-embed-text on a P100 with 4.6 GiB, num_ctx 8192 -> 2048

P100 = "nomic-embed-text-cuda-p100-4.6gib-0.9.6"


def _p100(version: str):
    gpu = _gpu("CUDA0", 4.6, 16, "Tesla P100-PCIE-16GB")
    return _estimate("nomic-embed-text", "F16", (gpu,), version, library="cuda", num_ctx=8192).engine_view


@pytest.mark.parametrize("version", ["0.9.3", "0.9.6"])
def test_p100_offload_line_to_the_character(version):
    """One slot (an embedding model), 2048 cells (n_ctx_train): kv 6.0 MiB, graph 12.0 MiB, 754.4 MiB in all (was
    two slots, 12.0 / 24.0 / 772.9 MiB)."""
    assert _p100(version)["ollama_log"].splitlines()[0] == _line(_load(P100)["quoted"], "msg=offload")


def test_p100_runner_gets_one_slot_of_n_ctx_train():
    mine = _p100("0.9.6")["ollama_launch"]
    assert (_flag(mine, "--ctx-size"), _flag(mine, "--parallel")) == ("2048", "1")
    assert "num_parallel=1 n_ctx_train=2048" in _load(P100)["quoted"]


def test_p100_scheduler_estimates_before_the_clamp():
    """The scheduler's required="809.9 MiB": server/sched.go pickBestFullFitByLibrary calls PredictServerFit with the
    asked num_ctx (8192), and only llm/server.go NewLlamaServer clamps it to n_ctx_train (v0.9.3+). The unclamped
    estimate is v0.9.2's line for the same load (llm/memory.go unchanged for a model with scalar head counts): kv
    24.0, graph 48.0, 809.9 MiB."""
    line = _p100("0.9.2")["ollama_log"].splitlines()[0]
    assert 'memory.required.full="809.9 MiB"' in line and 'memory.required.kv="24.0 MiB"' in line
    assert 'parallel=1 available=4954652672 required="809.9 MiB"' in _load(P100)["quoted"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#11017: v0.7.1-v0.9.0, nomic-embed-text:v1.5 on Metal, 9.0 GiB available

METAL = "nomic-embed-text-metal-9.0gib-0.9.0"


def _metal(version: str):
    gpu = _gpu("Metal", 9.0, 10.7, "Apple GPU")
    return _estimate("nomic-embed-text", "F16", (gpu,), version, library="metal", num_ctx=8192).engine_view


@pytest.mark.parametrize("version", ["0.7.1", "0.9.0"])
def test_metal_offload_line(version):
    """13/13, 864.9 MiB = 512 MiB (Metal's minimum) + weights 260.9 + kv 24.0 + graph 48.0 MiB, 8192 cells (no
    clamp to n_ctx_train before v0.9.3); the stored line stops inside memory.weights.nonrepeating."""
    _printed_fields_agree(METAL, _metal(version))


def test_metal_runner_gets_one_slot():
    """The scheduler's line: parallel=1 (was --parallel 2 x 8192, v0.7.1-v0.9.6's automatic first try)."""
    mine = _metal("0.9.0")["ollama_launch"]
    assert (_flag(mine, "--ctx-size"), _flag(mine, "--parallel")) == ("8192", "1")
    assert " parallel=1 " in _load(METAL)["quoted"]


# ---------------------------------------------------------------------------------------------------------------
# ggml-org/llama.cpp#9636: v0.3.3-v0.3.6, nomic-embed-text on 11.1 GiB, 4 slots

NP4 = "nomic-embed-text-cuda-11.1gib-np4-0.3.6"


@pytest.mark.parametrize("version", ["0.3.3", "0.3.6"])
def test_before_v037_embedding_models_take_four_slots(version):
    """parallel=4 x 8192: kv 96.0 MiB, 1.0 GiB, weights 312.1 / 267.4 / 44.7 MiB; the stored line stops inside
    memory.graph.full."""
    gpu = _gpu("CUDA0", 11.1, 12, "NVIDIA GPU")
    ev = _estimate("nomic-embed-text", "F16", (gpu,), version, library="cuda", num_ctx=8192).engine_view
    _printed_fields_agree(NP4, ev)
    assert _flag(ev["ollama_launch"], "--parallel") == "4" and " parallel=4 " in _load(NP4)["quoted"]


def test_v037_gives_embedding_models_one_slot():
    """90ca84172 (#6467), first in v0.3.7: the same load gets one slot, kv 24.0 MiB."""
    gpu = _gpu("CUDA0", 11.1, 12, "NVIDIA GPU")
    ev = _estimate("nomic-embed-text", "F16", (gpu,), "0.3.7", library="cuda", num_ctx=8192).engine_view
    assert _flag(ev["ollama_launch"], "--parallel") == "1" and 'memory.required.kv="24.0 MiB"' in ev["ollama_log"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#9994: v0.6.1, bge-m3 on CUDA, the runner's context and buffers

BGE = "bge-m3-cuda-0.6.1-runner"


def _bge():
    gpu = _gpu("CUDA0", 20.0, 24, "NVIDIA GPU")
    return _estimate("bge-m3", "F16", (gpu,), "0.6.1", library="cuda").engine_view


def test_bge_context_kv_and_output():
    """n_seq_max 1, n_ctx 2048 (OLLAMA_CONTEXT_LENGTH's 2048 x one slot; was 4 slots, 8192), KV 192.00 MiB = 2048 x
    24 x 1024 x 2 x 2 B (was 768.00), the output buffer 0.00 MiB (an embedding context keeps no logits)."""
    p, ev = _load(BGE)["printed"], _bge()
    assert (ev["n_seq_max"], ev["n_ctx"], ev["n_ctx"] // ev["n_seq_max"], ev["n_ubatch"]) == \
        (int(p["n_seq_max     ="]), int(p["n_ctx         ="]), int(p["n_ctx_per_seq ="]), int(p["n_ubatch      ="]))
    assert {k: round(v / MiB, 2) for k, v in ev["kv_buffer_bytes"].items()} == {"CUDA0": _mib(p["CUDA0 KV buffer size ="])}
    assert round(ev["output_buffer_bytes"] / MiB, 2) == _mib(p["CUDA_Host  output buffer size ="])


def test_bge_model_buffer():
    """CUDA0 model buffer 577.22 MiB printed: the 24 blocks alone. BERT's loader creates no output tensor
    (weights.NO_OUTPUT_TENSOR_ARCHS; was 1097.52 with a copy of token_embd), and position_embd (8194 x 1024 f32,
    32.01 MiB) and token_types are input-layer tensors (llama-arch.cpp LLM_TENSOR_INFOS: LLM_TENSOR_LAYER_INPUT),
    kept on the CPU with token_embd (weights.INPUT_LAYER_TENSORS; was 609.23 with position_embd on the GPU)."""
    ev = _bge()
    assert round(ev["model_buffer_bytes"]["CUDA0"] / MiB, 2) == _mib(_load(BGE)["printed"]["CUDA0 model buffer size ="])


def test_bge_host_compute_buffer():
    """CUDA_Host compute 5.01 MiB printed: the graph inputs (the 512 x 512 F32 mask, 1 MiB; tokens, positions,
    out_ids) and two rows of 1024 x 512 floats the CPU gathers, the token rows and BERT's learned position rows
    (ggml_get_rows(position_embd, inp_pos) on the input layer's table, no offload: compute.position_rows; was
    3.01 without them)."""
    p, cb = _load(BGE)["printed"], _bge()["compute_buffer_bytes"]
    assert round(cb["CUDA_Host"] / MiB, 2) == _mib(p["CUDA_Host compute buffer size ="])


def test_bge_device_compute_buffer():
    """CUDA0 compute 25.01 MiB printed (was 28.00): the vendored llama.cpp (b4779, d7cfe1ff) is before PR #12181, whose
    build_bert (src/llama.cpp) makes V and its transposed copy, then K and its permuted copy, then Q, so at the
    16 MiB of scores (16 heads x 512 x 512 floats) only the layer input, Q and the two copies (4 x 2 MiB) are alive
    (compute.EARLY_BERT_GRAPHS), beside the 1 MiB mask the device's split copies (an encoder's layers read it:
    compute_by_device). 25.00 MiB; the 0.01 left is the split's small input copies, not modelled."""
    p, cb = _load(BGE)["printed"], _bge()["compute_buffer_bytes"]
    assert round(abs(cb["CUDA0"] / MiB - _mib(p["CUDA0 compute buffer size ="])), 2) <= 0.01
    assert round(cb["CUDA0"] / MiB, 2) == 25.00


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
            else:  # a llama.cpp line, its column padding collapsed (the key's last occurrence)
                k = re.sub(" +", " ", key)
                assert k in flat and value in flat.rsplit(k, 1)[1].splitlines()[0], (path.name, key)
