"""A third held-out set of Ollama logs (tests/fixtures/engine_logs/ollama_heldout3/, each with its issue URL, the model,
the GPU and the release the source lines pin down), read through oomkit with nothing tuned on them.

- ollama/ollama#15388, gemma4:26b (Q4_K_M library blob) on an NVIDIA L40, every layer on the GPU, the Ollama engine
  (v0.20.0-v0.20.3: the log, 04:09 PDT on 2026-04-07, precedes v0.20.4-rc0), 32768 cells, flash attention on,
  OLLAMA_DEBUG bytes. Measured before -> after (oomkit - log):
  layers 31/31 and the KV cache 25 x 37748736 + 5 x 134217728 = 1614807040 B exact before and after;
  InputWeights 605552640 (-94371840 B) -> 699924480 exact; the output layer 605564160 (-1098669312 B) -> 1704233472
  exact (projector.py _gemma4_projector: the gemma4 encoder as Ollama's converter writes it, v.position_embd with
  the input tensors and the rest on the output layer, ml/backend/ggml/ggml.go New); the 30 text blocks
  16174706944 B (+1463808 B: -768 B in each block, the attn_v Q6_K blocks off by +-1486848 B) -> 16173243136 exact,
  block by block (weights.py: _go_quantizer_attn_v, server/quantization.go counting the tower's attn_v with the
  text's; runner_layer_weights creating rope_freqs.weight in every block; _runner_tensors fusing gemma4's gate and
  up experts as convert_gemma4.go does); compute graph CPU 5767168 -> 201326592 exact (layout.py
  _cpu_flash_attention: before v0.20.4 ggml-cuda's flash attention had no head dim 512, so the global layers' FA ran
  on the CPU); CUDA0 144703488 B (-57%) -> 339613696 exact: ggml-alloc's buffer of the Ollama engine's own gemma4
  text batch (graph.py gemma4_text_graph_bytes: 186521600 B, its f32 masks copied in at the first GPU split's start
  and the MoE rows above them; it outgrows the vision encoder's reserve, gemma4_vision_graph_bytes, 156174336 B)
  plus the CUDA pool (cuda_pool.py: 146 MiB, the sliding-window flash attention's stream-k meta on compute 8.9),
  which the Device without the catalog's SMs had left out.
- ollama/ollama#15634, gemma4:26b on an RTX 3090, the Ollama engine (v0.20.0-v0.20.3 by its server.go line, logged
  2026-04-17), 32768 cells, flash attention on, the INFO lines: "model weights" CUDA0 15.6 GiB / CPU 577.5 MiB ->
  16.6 GiB / 667.5 MiB as printed; "kv cache" 1.5 GiB as printed before and after; "compute graph" CPU 5.5 -> 192.0
  MiB as printed; CUDA0 138.0 -> 243.9 MiB as printed (the same text graph, a 66 MiB pool: no stream-k on compute
  8.6) and "total memory" 19.1 -> 19.2 GiB as printed. The two logs differ by exactly 80.0 MiB, the pools'.
- ollama/ollama#16416, gpt-oss:120b on a Ryzen AI Max+ 395 (ROCm, UMA), v0.30.0, llama-server (era D), 2 slots,
  flash attention on, the --fit dry run's breakdown table; the command Ollama built is the same machine's 0.30.2 log
  (ollama/ollama#16480): -c 262144 -np 2 --flash-attn on -b 1024 -ub 1024, as oomkit builds it. Measured before ->
  after: ROCm0 model 61147 (-76 MiB) -> 61223 exact (weights.py llama_server_gguf: the library blob llama-server
  loads is the split-gate/up conversion whose convert/reader.go writes every *.bias F32); context 9306, Host
  1104 / 0 / 281 exact before and after; compute 808 against 796 (+1.5%).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.weights import gguf_view, ollama_gguf, runner_layer_weights
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB = 1 << 20
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout3"


def _load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text())


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#15388: gemma4:26b on an NVIDIA L40, the Ollama engine, v0.20.0-v0.20.3, OLLAMA_DEBUG bytes

_L40 = "gemma4-26b-q4km-cuda-l40-ctx32768-fa-0.20-debug"


def _l40():
    fx = _load(_L40)
    s = fx["settings"]
    # 46068 MiB total (an L40); the free memory is not in the excerpt: the layout's "available layer vram" 40.4 GiB
    # plus its 457 MiB minimum stands in (every layer was placed on the GPU either way); the SMs and compute
    # capability the CUDA pool is sized by are the GPU catalog's, as the CLI gives them (catalog.with_facts)
    gpu = with_facts(Device(id="CUDA0", name="NVIDIA L40", memory_bytes=46068 * MiB,
                            free_bytes=(int(40.4 * 1024) + 457) * MiB))
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
    """The 30 text blocks of required.CUDA0.Weights summed, to the byte."""
    p = _load(_L40)["printed"]
    assert sum(_blocks()[:-1]) == sum(p["required.CUDA0.Weights"][:-1])


def test_l40_gemma4_blocks_to_the_byte():
    """required.CUDA0.Weights block by block, to the byte: attn_v Q6_K in blocks 0-4, 6, 9, 13, 16, 20, 24, 27 (Ollama's
    quantizer counts the vision tower's 27 attn_v with the text's 25: weights.py _go_quantizer_attn_v; llama-quantize
    over the text alone gives 0-2, 6, 9, 13, 16, 20, 24-28, +-1486848 B), the global rope_freqs.weight in every block
    (1024 B) and the experts' gate and up one fused tensor (256 B less CUDA padding). Before: -768 B in every block
    and the five attn_v blocks off by +-1486848 B."""
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


def test_l40_gemma4_cpu_graph_is_the_global_layers_flash_attention():
    """required.CPU.Graph=201326592 (192 MiB): before v0.20.4 ggml-cuda's flash attention knew no head dim 512, so the
    FLASH_ATTN_EXT of gemma4's five global layers runs on the CPU, whose buffer holds its Q (16 MiB), the layer's K
    and V views (64 + 64 MiB at 32768 cells), the F16 mask (32 MiB) and its output (16 MiB): layout.py
    _cpu_flash_attention. Before: 5767168 B (the input rows only)."""
    fx, _, mine = _l40()
    assert mine["compute graph"]["CPU"] == fx["printed"]["required.CPU.Graph"]


def test_l40_gemma4_gpu_graph():
    """required.CUDA0.Graph 339613696, to the byte: ggml-alloc's buffer for the Ollama engine's own gemma4 text batch
    (graph.py gemma4_text_graph_bytes, model/models/gemma4/model_text.go replayed: 186521600 B; 512 tokens with the
    reserve image's 256 embeddings, the 64 MiB f32 full-cache mask and the 9 MiB SWA mask copied into the GPU's
    buffer at the first split's start, the first blocks' MoE rows above them), larger than the vision encoder's
    reserve (gemma4_vision_graph_bytes, 156174336 B: runner/ollamarunner multimodal.go getTensor, a 2048 x 2048
    image resized to 768 x 768), plus the CUDA pool patch 0022 counts (cuda_pool.py: the sliding-window flash
    attention, head dim 256, on the mma kernel with stream-k on compute 8.9, 2 blocks x 142 SMs of dst_tmp_meta =
    151224320 B -> 146 MiB). Before: 144703488 (-57%: the llama.cpp graph standing in, and no pool, the Device
    lacking the catalog's SMs and compute capability)."""
    fx, _, mine = _l40()
    assert mine["compute graph"]["CUDA0"] == fx["printed"]["required.CUDA0.Graph"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#15634: gemma4:26b on an RTX 3090, the Ollama engine, v0.20.0-v0.20.3, the per-device INFO lines

_RTX3090 = "gemma4-26b-q4km-cuda-rtx3090-ctx32768-fa-0.20"


def _rtx3090():
    fx = _load(_RTX3090)
    s = fx["settings"]
    # 24 GiB; the free memory is not in the excerpt (every layer was placed on the GPU)
    gpu = with_facts(Device(id="CUDA0", name="NVIDIA GeForce RTX 3090", memory_bytes=24576 * MiB,
                            free_bytes=24000 * MiB))
    est = ol.ENGINE.estimate(resolve("gemma4:26b", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"],
                                               flash_attention=s["flash_attention"],
                                               engine_version=fx["engine_version_run"]))
    return fx, est, est.engine_view["ollama_memory"]


def _within(got: int, printed: str) -> bool:
    """format.HumanBytes2: one decimal; within half of the last digit."""
    n, unit = printed.split()
    scale = {"GiB": 1 << 30, "MiB": MiB}[unit]
    return abs(got - float(n) * scale) <= scale // 20


def test_rtx3090_gemma4_weights_and_kv():
    """"model weights" CUDA0 16.6 GiB (the blocks and the output layer with the vision tower) and CPU 667.5 MiB
    (token_embd and v.position_embd), "kv cache" 1.5 GiB, 31/31 layers at 32768 cells. Before: CUDA0 15.6 GiB and
    CPU 577.5 MiB (the tower not counted)."""
    fx, est, mine = _rtx3090()
    p = fx["printed"]
    assert est.engine_view["ollama_layers"] == p["layers"] and est.engine_view["n_ctx"] == 32768
    for line in ("model weights", "kv cache"):
        for dev, printed in p[line].items():
            assert _within(mine[line][dev], printed), (line, dev, mine[line][dev] / MiB)


def test_rtx3090_gemma4_cpu_graph():
    """"compute graph" device=CPU 192.0 MiB: the global layers' flash attention on the CPU (v0.20.0-v0.20.3), as on
    the L40. Before: 5.5 MiB."""
    fx, _, mine = _rtx3090()
    assert _within(mine["compute graph"]["CPU"], fx["printed"]["compute graph"]["CPU"])


def test_rtx3090_gemma4_gpu_graph_and_total():
    """"compute graph" device=CUDA0 243.9 MiB and "total memory" 19.2 GiB as printed: the same text graph as the L40's
    (186521600 B) and a 66 MiB pool: on compute 8.6 the 128 tiles fill 78% of a wave of 2 x 82 blocks, so no
    stream-k and the meta buffer is 128 tiles' (68157440 B). The two logs differ by exactly the pools' 80.0 MiB.
    Before: 138.0 MiB (-43%) and 19.1 GiB."""
    fx, _, mine = _rtx3090()
    p = fx["printed"]
    assert _within(mine["compute graph"]["CUDA0"], p["compute graph"]["CUDA0"]), mine["compute graph"]["CUDA0"] / MiB
    assert _within(mine["total memory"], p["total memory"])


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#16416: gpt-oss:120b on a Ryzen AI Max+ 395 (ROCm), llama-server (era D), v0.30.0, 2 slots

_STRIX = "gpt-oss-120b-rocm-strix-halo-np2-ctx262144-0.30.0-llama-server"
_ROW = re.compile(r"\|\s+- (\S+) \(.*?\)\s*\|\s*\S+ =\s*\S+ \+ \(\s*\d+ =\s*(\d+) \+\s*(\d+) \+\s*(\d+)\)")
_HOST = re.compile(r"\|\s+- Host\s*\|\s*\d+ =\s*(\d+) \+\s*(\d+) \+\s*(\d+)")


def _table(text: str) -> dict[str, dict[str, int]]:
    rows = {}
    for line in text.splitlines():
        if m := _ROW.search(line):
            rows[m[1]] = dict(zip(("model", "context", "compute"), map(int, m.groups()[1:]), strict=True))
        elif m := _HOST.search(line):
            rows["Host"] = dict(zip(("model", "context", "compute"), map(int, m.groups()), strict=True))
    return rows


def _strix(version: str | None = None):
    fx = _load(_STRIX)
    p, s = fx["printed"], fx["settings"]
    gpu = Device(id="ROCm0", name="AMD Radeon 8060S Graphics", memory_bytes=p["total_mib"] * MiB,
                 free_bytes=p["free_mib"] * MiB, integrated=True)
    est = ol.ENGINE.estimate(resolve("gpt-oss:120b", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(library=s["library"], num_parallel=s["num_parallel"],
                                               flash_attention=s["flash_attention"],
                                               engine_version=version or fx["engine_version_run"]))
    return fx, est


def test_strix_halo_gpt_oss_llama_server_command():
    """OLLAMA_NUM_PARALLEL=2, OLLAMA_CONTEXT_LENGTH=0 (131072 a slot), flash attention on: llm/llama_server.go
    startLlamaServer's -c num_ctx x np -np np, and server/sched.go's automatic batch of 1024, as the same machine's
    0.30.2 log prints the command (ollama/ollama#16480)."""
    fx, est = _strix("0.30.2")
    launch = est.engine_view["ollama_launch"].split()
    want = fx["printed"]["llama_server_args_0.30.2"]
    assert all(launch[launch.index(flag) + 1] == want[want.index(flag) + 1] for flag in ("-c", "-np", "-b", "-ub"))
    assert launch[launch.index("--flash-attn") + 1] == "on"


def test_strix_halo_gpt_oss_breakdown():
    """llama-server's --fit dry run, its memory breakdown table: model, context and Host columns to the MiB,
    compute within 10%. ROCm0 model 61223 MiB: the library blob llama-server reads keeps the expert biases F32
    (weights.py llama_server_gguf; 61147 MiB, -76, with the BF16 biases of the first conversion); context 9306 =
    18 full layers x 262144 cells + 18 SWA layers x 2 streams x 1280 cells (pad(128 + 1024, 256)) x 2048 B;
    compute 808 against 796 (+1.5%)."""
    fx, est = _strix()
    got = _table(est.engine_view["memory_breakdown"])
    got = {("ROCm0" if k.startswith("ROCm0") else k): v for k, v in got.items()}
    for dev, cols in fx["printed"]["breakdown_mib"].items():
        for col, want in cols.items():
            tol = max(1, 0.10 * want) if col == "compute" else 0
            assert abs(got[dev][col] - want) <= tol, (dev, col, got[dev][col], want)


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
        for line in ("model weights", "kv cache", "compute graph"):
            for dev, printed in (p.get(line) or {}).items():
                assert f'msg="{line}" device={dev} size="{printed}"' in fx["quoted"], (path.name, line, dev)
        if "breakdown_mib" in p:
            assert _table(fx["quoted"]) == p["breakdown_mib"], path.name
        if "llama_server_args_0.30.2" in p:
            args = p["llama_server_args_0.30.2"]
            assert all(f"{a} {b}" in fx["quoted_also"] for a, b in zip(args[::2], args[1::2], strict=True)), path.name
