"""ollama/ollama#15749 (tests/fixtures/engine_logs/ollama_heldout8/gemma4-e4b-rocm-rx6600xt-0.21.0.json):
gemma4:e4b on an 8 GB RX 6600 XT through ROCm, Ollama 0.21.0 (the Ollama engine): "model weights" device=ROCm0
2.8 GiB and device=CPU 6.6 GiB, "offloaded 42/43 layers to GPU". The figures were recorded from the thread before
oomkit ran; oomkit gave ROCm0 2784.11 MiB (2.7 GiB) + CPU 2730.00 MiB (2.7 GiB), 43/43, before the fix.

What the engine does (ollama/ollama v0.21.0):
- the library file is Ollama's own conversion (convert/convert_gemma4.go) quantized by its Go quantizer
  (server/quantization.go): per_layer_token_embd is never quantized (BF16, 262144 x 10752 x 2 B = 5376 MiB),
  per_layer_model_proj is Q4_K, and the vision (F16) and audio (BF16) towers are in the file;
- ml/backend/ggml/ggml.go New creates per_layer_token_embd / per_layer_model_proj / per_layer_proj_norm, the tied
  output and v.* / mm.* on the output layer's device, the audio tower's a.blk.N.* on text block N's, token_embd and
  v.position_embd in the input buffer (the CPU). The output layer (about 6.1 GiB) does not fit beside the blocks in
  7.5 GiB, so it stays on the CPU: 42/43.

Known, not read: the vision tower's intermediate_size (3072 assumed: engines/ollama/weights.py GEMMA4_E_VISION).
The CPU figure is 6806.35 MiB against the 6809.6 MiB where HumanBytes2 would print 6.7 GiB."""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURE = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout8" / "gemma4-e4b-rocm-rx6600xt-0.21.0.json"


def _estimate():
    fx = json.loads(FIXTURE.read_text())
    dev = Device(id="ROCm0", name="AMD Radeon RX 6600 XT", memory_bytes=8 * GiB, free_bytes=8 * GiB)
    est = ol.ENGINE.estimate(resolve("gemma4:e4b", None), (dev,),
                             ol.OllamaSettings(library=fx["settings"]["library"],
                                               engine_version=fx["engine_version"]))
    return fx, est


def test_gemma4_e4b_weights_per_device():
    """ROCm0 2.8 GiB (the 42 text blocks Q4_K_M + the 12 audio conformer blocks, BF16, on blocks 0-11) and CPU
    6.6 GiB (token_embd Q6_K, its tied copy as the output, per_layer_token_embd BF16, the vision tower): each
    printed as HumanBytes2 prints it, and within 3% of the printed value."""
    fx, est = _estimate()
    p = fx["printed"]
    mine = est.engine_view["ollama_memory"]["model weights"]
    assert set(mine) == {"ROCm0", "CPU"}
    for dev in mine:
        key = f"model weights device={dev}"
        assert ol.human_bytes2(mine[dev]) == p[key], (dev, mine[dev] / MiB)
        want = fx["printed_bytes"][key]
        assert abs(mine[dev] - want) / want <= 0.03, (dev, mine[dev] / MiB, want / MiB)


def test_gemma4_e4b_output_layer_left_on_the_cpu():
    """"offloaded 42/43 layers to GPU": the output layer, with the per-layer embeddings in it, does not fit."""
    fx, est = _estimate()
    assert est.engine_view["ollama_layers"] == fx["printed"]["offloaded"]
