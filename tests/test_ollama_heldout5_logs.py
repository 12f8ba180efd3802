"""A fifth held-out set of Ollama logs (tests/fixtures/engine_logs/ollama_heldout5/, each with its issue URL, the
model, the GPU and the release the source lines pin down), read through oomkit with nothing tuned on them: Ollama
0.13+ on its own engine, with the per-device lines of ml/device.go. Measured before -> after (oomkit - log; "exact" =
within the printed rounding):

- ollama/ollama#14273, glm-4.7-flash (the library's Q4_K_M glm4moelite blob) with 24 of 48 layers on one CUDA GPU,
  the Ollama engine, v0.15.6-v0.16.1, 4096 cells. Before: the blob read as llama.cpp's deepseek2 conversion, 49
  layers with the next-n block, DeepSeek's per-head cache (ollama_gguf) and flash attention off: "model weights"
  CUDA0 8.9 GiB / CPU 8.7 GiB, "kv cache" 1920.0 / 1920.0 MiB (x 9.4 / x 9.8), "compute graph" CUDA0 386.0 MiB,
  total 21.7 GiB, 24/49 layers. After (weights.py library_arch, _go_quantizer_glm4moelite): 47 blocks (its
  converter skips the next-n block), the latent cache (576 + 512 a token and layer), the Go quantizer's types (the
  MLA tensors Q8_0, ffn_down counted over the shared experts too): "model weights" 9.3 / 8.4 GiB, "kv cache" 204.0
  / 195.5 MiB, "compute graph" CPU 4.0 MiB and 24/48 layers exact; CUDA0 170.5 MiB against 272.0 (-37%: llama.cpp's
  deepseek2 graph standing in for the Ollama engine's glm4moelite one) and so "total memory" 18.3 GiB against 18.4.
  After (graph.py glm4moelite_sched_graph, on the RTX 4070 Ti the log names): CUDA0 272.00 MiB
  (the CPU blocks' expert weights copied in one at a time, the MLA flash-attention kernel's pool) and 18.4 GiB:
  exact.
- ollama/ollama#13789, glm-4.7-flash:latest (blob ff14144f31df, v0.14.3's conversion) at 8192 cells, v0.14.3: "kv
  cache" CUDA0 800.0 MiB and CPU 6.6 GiB = 5 and 42 layers of 20 heads x (256 + 256) x 2 B x 8192, the per-head
  cache of v0.14.3's model/models/glm4moelite. Before: 800.0 MiB / 6.7 GiB (49 layers, the next-n block's cache
  counted); after: exact (weights.py glm4moelite_per_head on the 47-block blob), and `ollama ps`'s 88%/12% CPU/GPU
  split gives 12% on the GPU.
- ollama/ollama#13805, glm-4.7-flash on v0.14.3-rc3 at 32768 cells, the launch decisions: "model layers"=48, the
  Ollama engine, FlashAttention:Enabled. Before: 49 layers (the next-n block counted) and flash attention off (the
  blob read as deepseek2, which GGML.FlashAttention does not list); after: as logged. Its num_tensors=797 is
  v0.14.3's conversion with attn_kv_b whole (weights.py glm4moelite_per_head; 844 with the v0.15.0 split).

Searched and not found in a form these tests can use (no per-device lines in the retrievable excerpts): Ollama 0.12+
on Metal with its per-device lines, gpt-oss on Ollama 0.13+, Ollama 0.13+ over several GPUs.
"""

from __future__ import annotations

import json
from pathlib import Path

from oomkit.engines import ollama as ol
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)

MiB, GiB = 1 << 20, 1 << 30
FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "ollama_heldout5"


def _load(stem: str) -> dict:
    return json.loads((FIXTURES / f"{stem}.json").read_text())


def _within(got: int, printed: str) -> bool:
    """format.HumanBytes2: one decimal; within half of the last digit."""
    n, unit = printed.split()
    scale = {"GiB": GiB, "MiB": MiB}[unit]
    return abs(got - float(n) * scale) <= scale // 20


def _run(stem: str, num_gpu: int, gpu_name: str, mem_mib: int):
    """The layout with the log's layer count given as num_gpu (the GPU's size and free memory are not in the
    excerpts; the split they led to is)."""
    fx = _load(stem)
    s = fx["settings"]
    gpu = with_facts(Device(id="CUDA0", name=gpu_name, memory_bytes=mem_mib * MiB, free_bytes=(mem_mib - 600) * MiB))
    est = ol.ENGINE.estimate(resolve("glm-4.7-flash", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"], num_gpu=num_gpu,
                                               engine_version=fx["engine_version_run"]))
    return fx, est, est.engine_view["ollama_memory"]


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#14273: glm-4.7-flash, 24 of 48 layers on CUDA0, the Ollama engine, v0.15.6-v0.16.1

_GLM_016 = "glm-4.7-flash-q4km-cuda-partial24-ctx4096-0.16"


def _glm_016():
    # the GPU the same log names (types.go "inference compute": RTX 4070 Ti, compute 8.9, 12.0 GiB)
    return _run(_GLM_016, 24, "NVIDIA GeForce RTX 4070 Ti", 12282)


def test_glm_flash_partial_weights_and_kv():
    """"model weights" CUDA0 9.3 GiB / CPU 8.4 GiB, "kv cache" 204.0 / 195.5 MiB, 24/48 layers: the latent cache of
    v0.15.0+ (24 and 23 layers of (576 + 512) x 2 B x 4096) and the Go quantizer's types."""
    fx, est, mine = _glm_016()
    p = fx["printed"]
    assert est.engine_view["ollama_layers"] == p["layers"] and est.engine_view["n_ctx"] == 4096
    assert est.engine_view["ollama_runner"] == "Ollama engine"
    for line in ("model weights", "kv cache"):
        for dev, printed in p[line].items():
            assert _within(mine[line][dev], printed), (line, dev, mine[line][dev] / MiB)


def test_glm_flash_partial_cpu_graph():
    fx, _, mine = _glm_016()
    assert _within(mine["compute graph"]["CPU"], fx["printed"]["compute graph"]["CPU"])


def test_glm_flash_partial_gpu_graph():
    """"compute graph" CUDA0 272.0 MiB: Ollama's own glm4moelite graph with blocks 0-22 and the output on the CPU
    (graph.py glm4moelite_sched_graph, the scheduler replayed): 210.00 MiB of ggml-alloc, the 157.5 MiB q6_K
    ffn_down_exps of a CPU block copied in beside its expert rows, + the CUDA pool's 62 MiB, the MLA flash-attention
    kernel's stream-k meta buffer over the 4070 Ti's 60 SMs (cuda_pool.py fattn_mla_meta_bytes: 60 x 64 columns x
    516 x 32 B = 60.47 MiB). Total memory 18.4 GiB."""
    fx, _, mine = _glm_016()
    p = fx["printed"]
    assert _within(mine["compute graph"]["CUDA0"], p["compute graph"]["CUDA0"]), mine["compute graph"]["CUDA0"] / MiB
    assert _within(mine["total memory"], p["total memory"])


def test_glm_flash_gpu_named_in_the_log():
    fx = _load(_GLM_016)
    line = fx["gpus"][0]["log_line"]
    assert 'description="NVIDIA GeForce RTX 4070 Ti"' in line and "compute=8.9" in line


def test_glm_flash_mla_pool_and_host_blocks():
    """The MLA flash-attention kernel's meta buffer (fattn_mla_meta_bytes): stream-k on Ada over the SMs (one block
    a SM), the tiles on Ampere where they fill 75% of a wave (160 tiles over 28 SMs: 95%); the graph replayed with
    only the dense block 0 on the CPU stays well under the sparse blocks' expert copies."""
    from oomkit.engines.ollama.cuda_pool import fattn_mla_meta_bytes
    from oomkit.engines.ollama.graph import glm4moelite_gpu_graph_replayed
    from oomkit.engines.ollama.weights import ollama_gguf

    assert fattn_mla_meta_bytes(512, 20, 1, 512, 60, (8, 9)) == 60 * 64 * 516 * 32
    assert fattn_mla_meta_bytes(512, 20, 1, 512, 28, (8, 6)) == 160 * 64 * 516 * 32
    spec = ollama_gguf(resolve("glm-4.7-flash", "Q4_K_M"))
    sparse = glm4moelite_gpu_graph_replayed(spec, 512, 4096, 1, frozenset(range(23)), True)
    dense = glm4moelite_gpu_graph_replayed(spec, 512, 4096, 1, frozenset({0}), False)
    full = glm4moelite_gpu_graph_replayed(spec, 512, 4096, 1, frozenset(), False)
    copy = next(t.nbytes for t in spec.weights.tensors if t.name == "blk.1.ffn_down_exps.weight")
    assert full < dense < sparse and sparse > copy


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13789: glm-4.7-flash:latest at 8192 cells, v0.14.3, K/V cached per head

_GLM_0143 = "glm-4.7-flash-q4km-kv-per-head-ctx8192-0.14.3"


def test_glm_flash_0_14_3_per_head_kv():
    """"kv cache" CUDA0 800.0 MiB, CPU 6.6 GiB: 160 MiB a layer (8192 x 20 x (256 + 256) x 2 B), 5 layers on the
    GPU and 42 on the CPU; `ollama ps` 88%/12% CPU/GPU."""
    fx, est, mine = _run(_GLM_0143, 5, "NVIDIA GeForce RTX 4060", 8188)
    p = fx["printed"]
    for dev, printed in p["kv cache"].items():
        assert _within(mine["kv cache"][dev], printed), (dev, mine["kv cache"][dev] / MiB)
    assert mine["kv cache"]["CUDA0"] == 5 * 160 * MiB
    on_gpu = sum(mine[k].get("CUDA0", 0) for k in ("model weights", "kv cache", "compute graph"))
    assert round(100 * on_gpu / mine["total memory"]) == 12


def test_held_out_logs_are_cited_and_verbatim():
    for path in sorted(FIXTURES.glob("*.json")):
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/ollama/ollama/issues/"), path.name
        p = fx["printed"]
        for line in ("model weights", "kv cache", "compute graph"):
            for dev, printed in (p.get(line) or {}).items():
                assert f'msg="{line}" device={dev} size="{printed}"' in fx["quoted"], (path.name, line, dev)
        if "total memory" in p:
            assert f'msg="total memory" size="{p["total memory"]}"' in fx["quoted"], path.name
        if "layers" in p:
            assert f'msg="offloaded {p["layers"]} layers to GPU"' in fx["quoted"], path.name


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13805: glm-4.7-flash on v0.14.3-rc3, the launch decisions

_GLM_0143_LAUNCH = "glm-4.7-flash-launch-ctx32768-0.14.3-rc3"


def test_glm_flash_0_14_3_launch():
    """"model layers"=48 (47 blocks and the output: convert_glm4moelite.go skips the next-n block), "starting ollama
    engine" (glm4moelite in OllamaEngineRequired from v0.14.3), FlashAttention:Enabled (in GGML.FlashAttention's
    list from v0.14.3; the per-head K and V of 256 are equal), KvSize:32768. Before: 49 layers, flash attention off
    (deepseek2 is not in the list)."""
    fx = _load(_GLM_0143_LAUNCH)
    p, s = fx["printed"], fx["settings"]
    gpu = with_facts(Device(id="CUDA0", name="NVIDIA GeForce RTX 4090", memory_bytes=24564 * MiB,
                            free_bytes=24000 * MiB))
    est = ol.ENGINE.estimate(resolve("glm-4.7-flash", s["weights_quant"]), (gpu,),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], engine_version=fx["engine_version_run"]))
    ev = est.engine_view
    assert ev["ollama_runner"] == "Ollama engine" and est.settings["flash_attention"] == "on"
    assert ev["ollama_layers"].split("/")[1] == str(p["model layers"]) and ev["n_ctx"] == p["KvSize"]
    assert f'"model layers"={p["model layers"]}' in fx["quoted"] and "FlashAttention:Enabled" in fx["quoted"]


def test_glm_flash_0_14_3_blob_tensors():
    """num_tensors=797: v0.14.3's conversion keeps attn_kv_b whole, one tensor a block fewer than the 844 of the
    MLA-split conversion the library ships from v0.15.0 (llama-ollama-compat.cpp handle_glm4moelite's count)."""
    from oomkit.engines.ollama.weights import glm4moelite_per_head, ollama_gguf

    fx = _load(_GLM_0143_LAUNCH)
    spec = ollama_gguf(resolve("glm-4.7-flash", fx["settings"]["weights_quant"]))
    assert len(spec.weights.tensors) == 844
    old = glm4moelite_per_head(spec)
    assert len(old.weights.tensors) == fx["printed"]["num_tensors"]
    assert f'num_tensors={fx["printed"]["num_tensors"]}' in fx["quoted"]
    kv_b = next(t for t in old.weights.tensors if t.name == "blk.1.attn_kv_b.weight")
    assert kv_b.shape == (512, 20 * (192 + 256)) and kv_b.dtype == "q4_K"
