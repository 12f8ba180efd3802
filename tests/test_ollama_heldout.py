"""Held-out Ollama logs: public logs found after the estimate was built, run through oomkit as it stood before
anything was changed for them (the figures in each test's docstring), then fixed by rule where the engine's source
says why. The release-by-release checks of tests/test_ollama.py hold the ones from released builds too.

- ollama/ollama#10810 (qwen3:235b, five 24 GB GPUs, 0.7.1): every figure within its printed rounding as it stood
  (test_ollama.py test_real_logs);
- ollama/ollama#9181 (llama3.3:70b Q8_0 at num_ctx 64000 on four 22 GiB GPUs, 0.5.11): the whole line digit for
  digit as it stood (test_ollama.py test_real_logs);
- ollama/ollama#8922 (deepseek-r1:70b Q4_K_M, num_ctx 2048 x 4 slots on three 23.5 GiB GPUs, 0.5.7): the whole line
  digit for digit as it stood, per-GPU allocations included (test_ollama.py test_real_logs);
- ollama/ollama#8430 (gemma3:12b-it-qat with its projector on 11.5 + 4.6 GiB): KV, graph and projector graph exact
  as it stood, the split 35,14 against 37,0 printed (memory.required.partial +21%) until the log was dated v0.7.0
  (its largest-layer buffer) and the QAT file's F16 token_embd was mirrored (engines/ollama/weights.py): now the
  whole line but projector.weights (795.9 MiB against 806.2) digit for digit;
- ollama/ollama PR #5117 (deepseek-coder-v2:16b on Metal, a build of the PR's branch between v0.1.44 and v0.1.45):
  KV 540.0 MiB and graph 212.0 MiB against 432.0 and 72.0 printed until the two v0.1.45 rules below were dated
  (settings.py V_ASYM_KV, V_DEEPSEEK2_GRAPH);
- ollama/ollama#11162 (gemma3:27b-it-fp16 on two RTX 5090 with 30.9 and 30.8 GiB free, 0.9.2, num_gpu 256): the
  stored line is cut inside memory.required.full; layers.offload 62, layers.split 31,31 and the cut text "58.6"
  all as printed as it stood (test_gemma3_fp16_split_two_5090s)."""

from __future__ import annotations

import re

import pytest

from oomkit.engines import ollama as ol
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests import test_ollama as tl
from tests.test_ollama import _no_ollama_env  # noqa: F401 (autouse: no OLLAMA_* / LLAMA_ARG_FIT* here either)
from tests.test_ollama_releases import _load

GiB, MiB = 1 << 30, 1 << 20



def _deepseek_v2_metal(version: str):
    fx = _load("deepseek-coder-v2-16b-q4_0-metal-96gib-pr5117")
    s, p = fx["settings"], fx["printed"]
    free = p["memory.available_bytes"][0]
    est = ol.ENGINE.estimate(tl._spec(fx), (Device("Metal", "Apple", memory_bytes=free, free_bytes=free),),
                             ol.OllamaSettings(num_ctx=s["num_ctx"], num_parallel=s["num_parallel"], library="metal",
                                               engine_version=version))
    return fx, est.engine_view["ollama_memory"]


def _within(fx: dict, mine: dict, field: str) -> bool:
    return abs(mine[field] - fx["printed"][field + "_bytes"]) <= tl._unit(fx["printed"][field])


@pytest.mark.parametrize("field", ["memory.required.kv", "memory.graph.full", "memory.graph.partial",
                                   "memory.required.full", "memory.weights.nonrepeating"])
def test_deepseek_v2_metal_before_asymmetric_kv(field):
    """PR #5117's log (dhiltgen, 2024-06-18 11:02, the branch at 359b15a59): 432.0 MiB of KV at num_ctx 2048 is
    v0.1.44's llm/memory.go, 2 x 2 x 2048 x 27 layers x n_embd / n_head (128) x 16 KV heads: key_length 192 and
    value_length 128 are read only from 8e0641a9b ("handle asymmetric embedding KVs", 2024-06-20, v0.1.45). GraphSize
    had no deepseek2 branch before e873841cb ("deepseek v2 graph", 2024-06-18 12:42, v0.1.45), so both graphs are
    estimateGPULayers' fallback, GQA() x kv / 6 = 1 x 432 / 6 = 72.0 MiB. oomkit before these rules were dated:
    540.0 MiB (+25%) and 212.0 MiB (+194%)."""
    fx, mine = _deepseek_v2_metal("0.1.44")
    assert _within(fx, mine, field), (field, mine[field])


def test_deepseek_v2_from_0_1_45_reads_key_and_value_length():
    """The same model at v0.1.45: 2 x 2048 x 27 x 16 x (192 + 128) x 2 B = 540.0 MiB (v0.1.46's log of this model,
    deepseek-coder-v2-16b-rocm-16gib-parallel2-0.1.46, prints 4.2 GiB at 2 x 8192 by the same rule)."""
    _, mine = _deepseek_v2_metal("0.1.45")
    assert mine["memory.required.kv"] == 2048 * 27 * 16 * (192 + 128) * 2


def test_deepseek_v2_metal_weights_split_of_the_branch():
    """memory.weights.total / .repeating of the branch (8.4 / 8.3 GiB printed). At 359b15a59 llm/memory.go
    EstimateGPULayers sums memoryWeights += blk.size() + kv / BlockCount() layer by layer (as v0.1.45 does; v0.1.44
    derived it as memoryRequiredTotal - memoryMinimum - graphFullOffload - kv: 8.2 GiB, -2.4%), while the kv in
    that sum is still v0.1.44's formula (8e0641a9b, key_length / value_length, came after the branch). So the
    branch is v0.1.45's weights with its kv (540.0 MiB) swapped for v0.1.44's (432.0 MiB): 8.44 GiB, repeating
    (total - output) 8.28 GiB. oomkit has no release number for the branch; the two releases' own figures are
    composed here, no constant is fitted."""
    fx, old = _deepseek_v2_metal("0.1.44")
    _, new = _deepseek_v2_metal("0.1.45")
    branch = new["memory.weights.total"] - new["memory.required.kv"] + old["memory.required.kv"]
    mine = {"memory.weights.total": branch,
            "memory.weights.repeating": branch - new["memory.weights.nonrepeating"]}
    assert not _within(fx, old, "memory.weights.total")  # v0.1.44's own derivation: 8.2 GiB
    assert _within(fx, mine, "memory.weights.total") and _within(fx, mine, "memory.weights.repeating")


def test_gemma3_qat_split_0_7_0_largest_layer_buffer():
    """ollama/ollama#8430 (johnquix, 2025-05-23): gemma3:12b-it-qat on 11.5 + 4.6 GiB prints layers.split=37,0. The
    log is v0.7.0 (sched.go:472 "loaded runners"; v0.7.1 prints it from :483). v0.7.0's llm/memory.go
    EstimateGPULayers (0478d440f) takes as its one-layer buffer the largest GroupLayers() group, here the QAT file's
    F16 token_embd (262144 x 3840 x 2 B) + kv[0] (12.0 MiB, a sliding layer), and admits a GPU only if its free memory
    covers graph (1.3 GiB) + MinimumMemory (457 MiB) + 2 x that buffer = 5.5 GiB: the 4.6 GiB card holds nothing.
    v0.7.1 (3fe74fba4) went back to blk.0, which admits it. The projector (weights + graph, 1.8 GiB) is v0.7.0's
    gpuZeroOverhead on GPU 0 (d75557747 moved it to the output layer in v0.7.1). oomkit before this: the v0.7.1 rules
    and the Q4_0 recipe's Q6_K token_embd, 35,14 with memory.required.partial 13.9 GiB (+21%)."""
    fx = _load("gemma3-12b-qat-2gpu-split-ctx24576-0.7")
    est = tl._run_fixture(fx)
    line = fx["quoted"].splitlines()[1]
    mine = est.engine_view["ollama_log"]
    for key in ("layers.offload", "layers.split", "memory.required.full", "memory.required.partial",
                "memory.required.kv", "memory.required.allocations", "memory.weights.total",
                "memory.weights.repeating", "memory.weights.nonrepeating", "memory.graph.full",
                "memory.graph.partial", "projector.graph"):
        pattern = rf'{re.escape(key)}=("[^"]*"|\S+)'
        assert re.search(pattern, mine).group(1) == re.search(pattern, line).group(1), key


def test_gemma3_qat_file_keeps_token_embd_f16():
    """Google's QAT Q4_0 GGUF of gemma-3-12b-it: llama.cpp maps it whole on the CPU as 7694.17 MiB
    (ggml-org/llama.cpp#13004, leizhu1989, 2025-04-18, build 5149: "CPU_Mapped model buffer size = 7694.17 MiB" for
    gemma-3-12b-it-q4_0.gguf, 0 layers offloaded): Q4_0 throughout with token_embd F16 (Ollama's -it-qat tag, the
    same file with its vision tower, prints memory.weights.nonrepeating 1.9 GiB in ollama/ollama#8430)."""
    spec = ol.ollama_gguf(resolve("gemma3:12b-it-qat"))
    assert f"{sum(t.nbytes for t in spec.weights.tensors) / MiB:.2f}" == "7694.17"
    assert f"{sum(t.nbytes for t in ol.ollama_gguf(resolve('gemma3:12b', 'Q4_0')).weights.tensors) / MiB:.2f}" != \
        "7694.17"  # the plain Q4_0 tag is llama-quantize's (token_embd as the output, Q6_K)


def test_gemma3_fp16_split_two_5090s():
    """ollama/ollama#11162 (GevatterGaul, 2025-06-22, Ollama 0.9.2): gemma3:27b-it-fp16 with num_gpu 256 on two RTX
    5090 prints layers.offload=62 of 63, layers.split=31,31 and memory.required.full="58.6 (the stored copy ends
    there). v0.9.2's llm/memory.go EstimateGPULayers fills the GPUs layer by layer by free memory (30.9 / 30.8 GiB)
    after graph, projector and MinimumMemory; the output layer (F16 token_embd again, 2.6 GiB) no longer fits, so 62.
    num_ctx and num_parallel are not in the excerpt: v0.9.2's defaults (OLLAMA_CONTEXT_LENGTH 4096, parallel
    auto). oomkit as it stood, before any change: 62, 31,31 and 58.6 GiB, all as printed."""
    fx = _load("gemma3-27b-fp16-2x5090-split-0.9.2")
    p = fx["printed"]
    devices = tuple(Device(id=f"GPU{i}", name="GPU", memory_bytes=f, free_bytes=f)
                    for i, f in enumerate(p["memory.available_bytes"]))
    est = ol.ENGINE.estimate(tl._spec(fx), devices,
                             ol.OllamaSettings(num_gpu=p["layers.requested"], library="cuda", engine_version="0.9.2"))
    mine = est.engine_view["ollama_log"]
    line = fx["quoted"].splitlines()[-1]
    for key in ("layers.requested", "layers.model", "layers.offload", "layers.split", "memory.available",
                "memory.gpu_overhead"):
        pattern = rf'{re.escape(key)}=("[^"]*"|\S+)'
        assert re.search(pattern, mine).group(1) == re.search(pattern, line).group(1), key
    assert re.search(r'memory\.required\.full="([^"]*)"', mine).group(1).startswith(p["memory.required.full_cut"] + " ")
