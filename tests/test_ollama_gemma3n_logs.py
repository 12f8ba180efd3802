"""ollama/ollama#11640 (tests/fixtures/engine_logs/ollama_heldout8/gemma3n-e2b-cuda-rtx3050laptop-0.10.1.json):
gemma3n:e2b on an RTX 3050 Laptop GPU, Ollama 0.10.x (the Ollama engine): "offloaded 0/31 layers to GPU" and
"model weights" buffer=CPU 5.6 GiB. The figures were recorded from the thread before oomkit ran; oomkit gave
3.48 GiB (3.5 GiB) for that buffer before the fix: its library file had per_layer_token_embd at Q6_K.

What the engine does:
- the library file is Ollama's own conversion quantized by its Go quantizer (server/quantization.go newType,
  v0.9.4+): per_layer_token_embd is never quantized (d0b32def6), so it stays BF16 (262144 x 7680 x 2 B = 3840 MiB);
  the other F16 matrices whose rows divide by 256 take Q4_K (getTensorNewType);
- ml/backend/ggml/ggml.go New (v0.10.1, unchanged for these tensors through v0.12.x) creates token_embd in the
  input buffer (the CPU), token_embd again as output.weight and the per-layer-embedding groups on the output layer's
  device; at 0 layers offloaded that is the CPU too, so the CPU buffer holds the whole file plus the tied copy.

oomkit prints the Ollama engine's per-device "model weights" line from v0.12.0 on (its era B); the test reads it
there with num_gpu 0 (the 0/31 of the log; the card's free VRAM is not in the excerpt), the placement New gives at
0 layers in v0.10.1 as in v0.12.0."""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

GiB = 1 << 30
FIXTURE = (Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout8"
           / "gemma3n-e2b-cuda-rtx3050laptop-0.10.1.json")


def test_gemma3n_e2b_all_weights_on_the_cpu():
    """0/31 layers: "model weights" buffer=CPU 5.6 GiB, printed as HumanBytes2 prints it and within 3%."""
    fx = json.loads(FIXTURE.read_text())
    dev = Device(id="CUDA0", name="NVIDIA GeForce RTX 3050 Laptop GPU", memory_bytes=4 * GiB, free_bytes=4 * GiB)
    est = ol.ENGINE.estimate(resolve("gemma3n:e2b", None), (dev,),
                             ol.OllamaSettings(library="cuda", engine_version="0.12.0", num_gpu=0))
    assert est.engine_view["ollama_layers"] == fx["printed"]["offloaded"]
    mine = est.engine_view["ollama_memory"]["model weights"]
    assert set(mine) == {"CPU"}
    key = 'msg="model weights" buffer=CPU size='
    assert ol.human_bytes2(mine["CPU"]) == fx["printed"][key], mine["CPU"] / GiB
    want = fx["printed_bytes"][key]
    assert abs(mine["CPU"] - want) / want <= 0.03, mine["CPU"] / GiB
