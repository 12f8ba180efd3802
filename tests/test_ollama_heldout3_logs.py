"""A third held-out set of Ollama logs (tests/fixtures/engine_logs/ollama_heldout3/, each with its issue URL, the model,
the GPU and the release the source lines pin down), read through oomkit with nothing tuned on them.

- ollama/ollama#15388, gemma4:26b (Q4_K_M library blob) on an NVIDIA L40, every layer on the GPU, the Ollama engine
  (v0.20.0-v0.20.3: the log, 04:09 PDT on 2026-04-07, precedes v0.20.4-rc0), 32768 cells, flash attention on,
  OLLAMA_DEBUG bytes. Measured before -> after (oomkit - log):
  layers 31/31 and the KV cache 25 x 37748736 + 5 x 134217728 = 1614807040 B exact before and after;
  InputWeights 605552640 (-94371840 B) -> 699924480 exact; the output layer 605564160 (-1098669312 B) -> 1704233472
  exact (projector.py _gemma4_projector: the gemma4 encoder as Ollama's converter writes it, v.position_embd with
  the input tensors and the rest on the output layer, ml/backend/ggml/ggml.go New); the 30 text blocks' weights
  16174706944 -> 16174737664 B against 16173243136, within 0.01% (+1463808 -> +1494528 B, the per-block -768 B -> +256 B with
  rope_freqs.weight created in every block, weights.py runner_layer_weights), block by block off by +-1486848 B
  (attn_v Q6_K against Q4_K) where the blob's Q6_K attn_v blocks (0-4, 6, 9, 13, 16, 20, 24, 27) differ from
  llama-quantize's use_more_bits over the 25 blocks with an attn_v (0-2, 6, 9, 13, 16, 20, 24-28): strict xfail;
  compute graph CUDA0 144703488 B against 339613696 (-57%) and CPU 5767168 against 201326592: the Ollama engine's
  reserve of the gemma4 vision encoder's graph is not modelled: strict xfail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.weights import gguf_view, ollama_gguf, runner_layer_weights
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB = 1 << 20
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout3"


def _load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text())


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#15388: gemma4:26b on an NVIDIA L40, the Ollama engine, v0.20.x, OLLAMA_DEBUG bytes

_L40 = "gemma4-26b-q4km-cuda-l40-ctx32768-fa-0.20-debug"


def _l40():
    fx = _load(_L40)
    s = fx["settings"]
    # 46068 MiB total (an L40); the free memory is not in the excerpt: the layout's "available layer vram" 40.4 GiB
    # plus its 457 MiB minimum stands in (every layer was placed on the GPU either way)
    gpu = Device(id="CUDA0", name="NVIDIA L40", memory_bytes=46068 * MiB, free_bytes=(int(40.4 * 1024) + 457) * MiB)
    est = ol.ENGINE.estimate(resolve("gemma4:26b", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(flash_attention=s["flash_attention"], num_parallel=s["num_parallel"],
                                               engine_version=fx["engine_version_run"]))
    return fx, est, est.engine_view["ollama_memory"]


def _blocks():
    spec = ollama_gguf(resolve("gemma4:26b", "Q4_K_M"))
    return runner_layer_weights(spec, gguf_view(spec), cuda=True)


def test_l40_gemma4_layers_context_and_kv_cache():
    """OLLAMA_CONTEXT_LENGTH=0 on a 46 GiB GPU: 32768 cells; 31/31 layers; required.CUDA0.Cache summed, to the
    byte: the 25 sliding-window blocks and the 5 full-attention blocks."""
    fx, est, mine = _l40()
    p = fx["printed"]
    assert est.engine_view["n_ctx"] == 32768 and est.engine_view["ollama_layers"] == p["layers"]
    assert mine["kv cache"] == {"CUDA0": sum(p["required.CUDA0.Cache"])}


def test_l40_gemma4_text_blocks_total():
    """The 30 text blocks of required.CUDA0.Weights summed: within 0.01% (the Q6_K attn_v blocks of the blob differ,
    their count is the same)."""
    p = _load(_L40)["printed"]
    got, want = sum(_blocks()[:-1]), sum(p["required.CUDA0.Weights"][:-1])
    assert abs(got - want) <= 1e-4 * want, (got, want)


@pytest.mark.xfail(strict=True, reason=(
    "block by block: +256 B in each block (rope_freqs.weight repeated per block counted; a tensor of oomkit's "
    "gemma4 block the blob lacks or sizes smaller), and attn_v Q6_K in blocks 0-4, 6, 9, 13, 16, 20, 24, 27 of the "
    "library blob where llama-quantize's use_more_bits over the 25 blocks with an attn_v gives 0-2, 6, 9, 13, 16, "
    "20, 24-28 (+-1486848 B); the blob's quantizer not read"))
def test_l40_gemma4_blocks_to_the_byte():
    p = _load(_L40)["printed"]
    assert _blocks()[:-1] == p["required.CUDA0.Weights"][:-1]


def test_l40_gemma4_vision_tower_weights_to_the_byte():
    """ml/backend/ggml/ggml.go New: v.position_embd.weight (F32 [1152, 10240, 2] = 94371840 B) is an input tensor,
    so required.InputWeights = token_embd + it = 699924480; every other v.* and mm.* tensor (F16 matrices, F32
    vectors, each padded to 128 B in the CUDA buffer type) goes with the output layer: the output layer
    (output_norm + the tied token_embd as output.weight) + 1098669312 B = 1704233472, to the byte. Before: 605552640
    and 605564160 (the tower not counted)."""
    fx, _, mine = _l40()
    p = fx["printed"]
    assert mine["model weights"]["CPU"] == p["required.InputWeights"]
    output_layer = mine["model weights"]["CUDA0"] - sum(_blocks()[:-1])
    assert output_layer == p["required.CUDA0.Weights"][-1]


@pytest.mark.xfail(strict=True, reason=(
    "compute graph CUDA0 144703488 B against 339613696 (-57%) and CPU 5767168 against 201326592: the Ollama "
    "engine's reserve of the gemma4 vision encoder's graph is not modelled"))
def test_l40_gemma4_compute_graph():
    fx, _, mine = _l40()
    p = fx["printed"]
    got, want = mine["compute graph"]["CUDA0"], p["required.CUDA0.Graph"]
    assert abs(got - want) <= 0.10 * want
    assert abs(mine["compute graph"]["CPU"] - p["required.CPU.Graph"]) <= 0.10 * p["required.CPU.Graph"]


def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/ollama/ollama/issues/"), path.name
        p = fx["printed"]
        for key in ("required.InputWeights", "required.CPU.Graph", "required.CUDA0.Graph"):
            if key in p:
                assert f"{key}={p[key]}" in fx["quoted"], (path.name, key)
        for key in ("required.CUDA0.Weights", "required.CUDA0.Cache"):
            if key in p:
                assert f'{key}="[{" ".join(map(str, p[key]))}]"' in fx["quoted"], (path.name, key)
