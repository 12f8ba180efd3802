"""Held-out set 5 of `oomkit fit` / `oomkit plan` outcomes, in the style of test_fit_outcomes4.py: public reports that
name the hardware, the model and its format, the engine and its release (or the week that dates it), and what the
settings they tried did: a split that ran out of memory and a smaller format that ran, a context that ran and a
longer one that did not, the layers llama.cpp's own fit kept on the GPU, the layers Ollama offloaded before the
runner died. For each the report's outcome was written down, then `oomkit check` / `oomkit fit` run on it, before
any test was written. None of the threads is cited elsewhere in tests/.

Agreement (fit's or check's setting on the side of what the report says ran or failed; for llama.cpp's own --fit,
the layers and patterns it prints): 3 of 8 before, 3 of 8 after. The change (engines/llamacpp/fit.py FIT_ERAS
fit_gate_up): builds before PR #20910 print and apply overflow patterns without gate_up, as lmstudio#1673's output
shows (was: the newest source's form at every build); its layer count stays a strict xfail. The other
disagreements lie in engine files this set does not own (vLLM's V0 profile of DeepSeek-V3 before MLA and of
Qwen2.5-VL's encoder, Ollama 0.4.0's mllama estimate) or in what fit weighs (a serving-time batch short of memory,
which the vLLM estimate gives only as a warning): strict xfails with the figures. Later, engines/vllm/encoder.py
(QWEN_V0_PIXEL_COPIES) turned gpustack#1800's verdict to the refusal the thread shows (4 of 8); its count stays a
strict xfail. Then engines/ollama/layout.py _mllama_projector put the mllama projector on the llama runner's GPU 0
(llama/mllama.cpp mllama_model_load: its 1.8 GiB of weights and at least a global layer's 2,525 MiB KQ), which
turns ollama#7440's verdict at 31/41 to the OOM the thread shows (5 of 8).

| report | engine, release, GPUs | what it shows | oomkit before | after | agrees |
|---|---|---|---|---|---|
| lmstudio-bug-tracker#1673 Qwen3.5-35B-A3B Q4_K_M, -c 65536 | llama.cpp (2026-03-20: b8438), RTX 4070 Ti SUPER 16GB | --fit: -ngl 41, blk.22 UP, experts of 23-39 on the CPU, patterns without gate_up | -ngl 41, blk.25 UP, patterns with gate_up | patterns as printed; blk.25 | no (layer: strict xfail) |
| ggml-org/llama.cpp#6668 command-r-plus Q5_K_S, -ngl 65 -ts 499,524,523 | llama.cpp b2647, 3 x RTX 4090 | OOM at every split; IQ4_XS runs | typed split 35 MiB short on CUDA1; IQ4_XS fits; fit -ngl 61 | same | yes |
| vllm-project/vllm#7553 Yi-1.5-34B-Chat TP4, 0.9 | vLLM 0.5.4, 4 x RTX 4090 | graphs 2,464 MiB a card; OOM at a batch of 4 x 2k | graphs 2,466 MiB; warns the 4,096-token batch; fit unchanged | same | check yes, fit no (strict xfail) |
| vllm-project/vllm#12890 DeepSeek-V3 FP8 TP8, 0.98 | vLLM 0.7.0 (before MLA, 0.7.1), 8 x H20 96GB | at most 6,500 tokens | 13,568 (15,248 in the pool at 6,500) | same | no (strict xfail) |
| gpustack/gpustack#1800 Qwen2.5-VL-7B-Instruct, 8,192 | vLLM 0.8.4 V0, RTX 3090 | refused: 2,400 tokens of KV cache | fits, 80,848 tokens (15,600 once V0's dummy prompt was read) | refused, 4,848 tokens (the pixels' second copy) | yes (the count: strict xfail) |
| ollama/ollama#7440 x/llama3.2-vision:11b-instruct | Ollama 0.4.0-rc6, RTX 3080 Ti, 9.5 GiB free | 31/41 layers offloaded, CUDA OOM | 26/41 (0.4.0's rules), runs split; fit unchanged | at 0.4.0-rc6 the offload line to the character (31/41) below 9.5 GiB free; with the projector on GPU 0, 124 MiB over at 31; fit num_gpu 31 -> 30 | yes |
| AlexsJones/llmfit#755 Qwen3-30B-A3B-Instruct-2507 Q4_K_M, -ngl 99 --n-cpu-moe 36 | llama.cpp (2026-07-16: b9986), RTX 2080 8GB | runs | runs (--fit shortens the unset context to 14,592) | same | yes |
| QwenLM/Qwen3#389 Qwen1.5-32B-Chat-GPTQ-Int4, 0.99 | vLLM 0.4.2, RTX 2080 Ti 22GB (22,356 MB) | fails; lower utilizations did not help | fails at 0.99, 0.9, 0.8 (the profile run of 32,768 tokens); fit --max-model-len 9728 + fp8 KV | same | yes |

Excerpts are verbatim from the stored threads (the search corpus of public GitHub issues); a local model path is
written as the repository the thread names (or the base checkpoint the file was converted from).

Reports searched and left out (already in tests/, no outcome stated, hardware not named, or a fork): vllm#10517,
vllm#13882, ollama#9181, ollama#3078 (two reports in one thread, layer counts of different quants), ollama#13863
(GPU not named), llama.cpp#18097 and llama.cpp#18337 (no fit figures in the stored excerpts), llama.cpp#27872 and
janhq/jan#8236 (in tests/), vllm#13282, vllm#14102, vllm#6774 (the command not in the stored excerpts),
ik_llama.cpp#1916 (a fork's own fit), noonghunna/club-3090 threads (patched vLLM).
"""

from __future__ import annotations

import re

import pytest

from oomkit.units import MiB
from tests.sweep_harness import offline  # noqa: F401 (the autouse fixture: no network, a fresh cache)
from tests.test_fit_outcomes2 import _changes, _check, _fit, _refusal, _runs

# ---------------------------------------------------------------------------------------------------------------
# lmstudio-ai/lmstudio-bug-tracker#1673 (eronez, 2026-03-20): llama-fit-params on an RTX 4070 Ti SUPER 16GB

R1673 = {
    "url": "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1673",
    "excerpt": ("llama.cpp now ships `llama-fit-params`, a tool that solves this automatically. Example run on my "
                "system (RTX 4070 Ti SUPER, 16GB VRAM, Qwen3.5-35B-A3B-Q4_K_M):\n\n```\n$ ./llama-fit-params -m "
                "Qwen3.5-35B-A3B-Q4_K_M.gguf -c 65536\n...\nllama_params_fit: successfully fit params to free device "
                "memory\n-c 65536 -ngl 41 -ot \"blk\\.22\\.ffn_(gate|down).*=CPU,blk\\.23\\.ffn_(up|down|gate)_(ch|)"
                "exps=CPU,...\"\n```"),
    "command": "llama-fit-params -hf unsloth/Qwen3.5-35B-A3B-GGUF:Q4_K_M -c 65536",
    # the thread names no build: its date (b8438 by versions.llamacpp_build_on); its output's patterns lack
    # gate_up, so the build predates PR #20910 (2026-03-23, b8480)
    "gpu": ["--gpu", "RTX 4070 Ti SUPER"], "version": "2026-03-20",
}

_UP_BEFORE = r"blk\\\.(\d+)\\\.ffn_\(gate\|down\)\.\*=CPU"
_MOE_BEFORE = r"blk\\\.(\d+)\\\.ffn_\(up\|down\|gate\)_\(ch\|\)exps=CPU"


def _fit_view(gpu: list[str], version: str, command: str) -> dict:
    return _check(gpu, version, command)["estimate"]["engine_view"]


def test_1673_fit_keeps_all_41_layers_and_prints_the_builds_patterns():
    """llama.cpp's --fit keeps -c 65536 as typed, offloads 41 layers (40 + output) and moves expert tensors to the
    CPU: one layer keeps its attention and up projection (ffn_(gate|down) overflows, LAYER_FRACTION_UP), every later
    one its experts (ffn_(up|down|gate)_(ch|)exps). The patterns are those the thread's build printed, without the
    gate_up alternatives PR #20910 added (was: the newest source's form at every build)."""
    v = _fit_view(R1673["gpu"], R1673["version"], R1673["command"])
    assert v["fit"] == "fitted" and v["fit_n_ctx"] is None and v["fit_n_gpu_layers"] == 41
    pats = v["fit_override_tensor"].split(",")
    first = re.fullmatch(_UP_BEFORE, pats[0])
    assert first, pats[0]
    rest = [re.fullmatch(_MOE_BEFORE, p) for p in pats[1:]]
    assert all(rest), pats[1:]
    # consecutive layers after the partial one, up to the output's index (40), which no tensor matches
    assert [int(m.group(1)) for m in rest] == list(range(int(first.group(1)) + 1, 41))
    # from PR #20910 on, the same decisions carry gate_up
    after = _fit_view(R1673["gpu"], "b8480", R1673["command"])["fit_override_tensor"].split(",")
    assert after[0].endswith(r"\.ffn_(gate|gate_up|down).*=CPU") and "gate_up|gate)_(ch|)exps" in after[1]


@pytest.mark.xfail(strict=True, reason="lmstudio#1673: llama.cpp kept layers 0-21 whole and layer 22's attention "
                   "and up projection on the card; oomkit's fit, on the catalog's 16,376 MiB less the 457 MiB runtime "
                   "(free 15,919 MiB, the 1,024 MiB target kept), keeps three layers more (blk.25 partial, 14,805 MiB "
                   "projected): about 1.4 GiB, three layers of Q4_K_M experts, which the reporter's desktop may have "
                   "held (oomkit gives blk.22 for a card of 15,000 MiB); the thread prints no free memory")
def test_1673_the_partial_layer_is_22():
    v = _fit_view(R1673["gpu"], R1673["version"], R1673["command"])
    assert re.fullmatch(_UP_BEFORE, v["fit_override_tensor"].split(",")[0]).group(1) == "22"


# ---------------------------------------------------------------------------------------------------------------
# ggml-org/llama.cpp#6668 (Marcophono2, 2024-04-13): command-r-plus 104B Q5_K_S over 3 x RTX 4090, build 2647

R6668 = {
    "url": "https://github.com/ggml-org/llama.cpp/issues/6668",
    "excerpt": ("I can use command-r-plus-104b-iq4_xs on my Ubuntu computer with 3x RTX 4090 successfully. But I fail "
                "to bring the next larger model, command-r-plus-104b-q5_k_s, to run. There are 3x24 GB VRAM (minus 2 GB "
                "which are used by system processes), so all together 70 GB VRAM available. The model's size is <67 "
                "GB. I tried to split the model to the three VRAMs via\n\n`./main -m /model/ggml-c4ai-command-r-plus-"
                "104b-q5_k_s.gguf --n-gpu-layers 65 --tensor-split 499,524,523  -n 256 --keep 48 --repeat_penalty 1.0 "
                "--temp 1.0 --color -i -r \"User:\" -f prompts/chat-with-bob.txt`\n\nBut whatever splitting factors I "
                "am using, always any other device (0, 1 or 2) says OOM. Here is one of my logs:\n\n```\nLog start\n"
                "main: build = 2647 (8228b66d)"),
    "command": "./main -m CohereForAI/c4ai-command-r-plus:Q5_K_S --n-gpu-layers 65 -n 256",
    "gpu": ["--gpu", "3x RTX 4090"], "version": "b2647",
    # "3x24 GB VRAM (minus 2 GB which are used by system processes)": the 2 GiB taken from the first GPU (assumed:
    # the one that drives the desktop)
    "held": ["--vram", "22516MiB,24564MiB,24564MiB"],
}


def test_6668_the_typed_split_runs_out_even_on_full_cards():
    """-ts 499,524,523 leaves CUDA1 35 MiB short on three whole 24,564 MiB cards (64 layers + output; the default
    512-token context)."""
    r = _check(R6668["gpu"], R6668["version"], R6668["command"] + " --tensor-split 499,524,523")
    assert r["fits"] is False and not _runs(r)


@pytest.mark.parametrize("split", ["", " --tensor-split 499,524,523", " --tensor-split 1,1,1",
                                   " --tensor-split 22,24,24"])
def test_6668_no_split_runs_with_the_2_gb_the_desktop_holds(split):
    r = _check(R6668["held"], R6668["version"], R6668["command"] + split)
    assert r["fits"] is False


def test_6668_iq4_xs_runs_and_fit_takes_layers_off():
    iq4 = R6668["command"].replace(":Q5_K_S", ":IQ4_XS")
    assert _check(R6668["held"], R6668["version"], iq4)["fits"] is True
    f = _fit(R6668["gpu"], R6668["version"], R6668["command"] + " --tensor-split 499,524,523")
    ch = _changes(f)
    assert set(ch) == {"n_gpu_layers"} and ch["n_gpu_layers"][0] == 65 and ch["n_gpu_layers"][1] < 65, f["changes"]
    assert _runs(_check(R6668["gpu"], R6668["version"], f["command"]))


# ---------------------------------------------------------------------------------------------------------------
# vllm-project/vllm#7553 (ChuanhongLi, 2024-08-15): Yi-1.5-34B-Chat over 4 x RTX 4090, vLLM 0.5.4

R7553 = {
    "url": "https://github.com/vllm-project/vllm/issues/7553",
    "excerpt": ("I run the model on the server with 4 x NVIDIA GeForce RTX 4090 cards： \nCUDA_VISIBLE_DEVICES=4,5,6,7 "
                "python -m vllm.entrypoints.openai.api_server --served-model-name Yi-1.5-34B-Chat --model /workspace/"
                "sdb/models/Yi/Yi-1.5-34B-Chat/ --port 8001 --gpu-memory-utilization 0.9 --swap-space 0  "
                "--tensor-parallel-size 4\n\nMemory-Usage showed by nvidia-smi is  23859MiB / 24564MiB on each card;  "
                "when I disable the cuda grapy by --enforce-eager， the memory-usage is changed to 21395MiB / 24564MiB "
                "(close to the value 24564 * 0.9).  \n\n**23859 -  21395 =  2464 MiB  is consumed by the cuda grapy.  "
                "Too much!  Is this normal？**\n\nWhen inference，batch size = 4(input length = 2k for each query)，"
                "**oom occurs**.  \n\nBTW, when we set gpu-memory-utilization = 0.9,  it means that 24564(for RTX "
                "4090) * 0.9 can be used for model and kv cache? \n\nvllm version: 0.5.4;"),
    "command": ("python -m vllm.entrypoints.openai.api_server --served-model-name Yi-1.5-34B-Chat --model "
                "01-ai/Yi-1.5-34B-Chat --port 8001 --gpu-memory-utilization 0.9 --swap-space 0 --tensor-parallel-size 4"),
    "gpu": ["--gpu", "4x RTX 4090"], "version": "0.5.4",
}


def test_7553_cuda_graphs_take_what_nvidia_smi_showed():
    """2,464 MiB a card between the two runs; oomkit 2,466 MiB of graphs (engine_view cudagraph_bytes), and the
    totals 24,226 / 21,760 MiB where nvidia-smi printed 23,859 / 21,395 (1.5 % above both)."""
    graphs = _check(R7553["gpu"], R7553["version"], R7553["command"])
    eager = _check(R7553["gpu"], R7553["version"], R7553["command"] + " --enforce-eager")
    for b in graphs["estimate"]["engine_view"]["cudagraph_bytes"].values():
        assert abs(b - 2464 * MiB) <= 32 * MiB, b / MiB
    for g, e, seen_g, seen_e in zip(graphs["estimate"]["devices"], eager["estimate"]["devices"],
                                    [23859] * 4, [21395] * 4, strict=True):
        assert abs(g["total_bytes"] - seen_g * MiB) <= 0.02 * seen_g * MiB
        assert abs(e["total_bytes"] - seen_e * MiB) <= 0.02 * seen_e * MiB
        assert abs((g["total_bytes"] - e["total_bytes"]) - 2464 * MiB) <= 32 * MiB


def test_7553_starts_but_a_full_batch_finds_no_memory_beside_the_graphs():
    """The thread's OOM came at inference (4 prompts of 2k: the 4,096-token batches of 0.5.4's default,
    max(max_model_len, 2048)); oomkit: vLLM starts, and a 4,096-token batch needs the profile run's 0.82 GiB again
    beside the graphs with 0.33 GiB left. In eager mode nothing is warned."""
    r = _check(R7553["gpu"], R7553["version"], R7553["command"])
    assert r["fits"] is True
    assert _refusal(r, r"vLLM starts, but a batch of 4,096 tokens needs the profile run's")
    eager = _check(R7553["gpu"], R7553["version"], R7553["command"] + " --enforce-eager")
    assert not _refusal(eager, r"vLLM starts, but")


@pytest.mark.xfail(strict=True, reason="vllm#7553: the command starts and dies at the first full batch (oomkit warns "
                   "so: 0.82 GiB needed beside the graphs, 0.33 GiB left), but fit returns it unchanged: plan/fit.py "
                   "weighs the start-up totals (options.py slack), and the vLLM estimate gives the serving-time "
                   "shortfall only as a warning, no figure fit could weigh (engines/vllm/layout.py _usages)")
def test_7553_fit_turns_a_knob():
    f = _fit(R7553["gpu"], R7553["version"], R7553["command"])
    assert set(_changes(f)) & {"enforce_eager", "gpu_memory_utilization", "max_num_seqs", "max_model_len"}


# ---------------------------------------------------------------------------------------------------------------
# vllm-project/vllm#12890 (zhaotyer, 2025-02-07): DeepSeek-V3 on 8 x H20 96GB, vLLM before 0.7.1

R12890 = {
    "url": "https://github.com/vllm-project/vllm/issues/12890",
    "excerpt": ("When deployed DeepSeek-V3 on 8*H20(96GB), maximum model length only reaches 6500 using vllm, but "
                "with sglang can achieve 163840.\n...\nvllm command\n`python3 -m vllm.entrypoints.openai.api_server "
                "--model  ${model_path} --port 8108 --max-model-len 6500 --gpu-memory-utilization 0.98 "
                "--tensor-parallel-size 8  --trust-remote-code --quantization fp8`\n...\nmgoin: What version of vLLM "
                "are you using? With `vllm==0.7.1` we fully implement MLA to get full context length"),
    "command": ("python3 -m vllm.entrypoints.openai.api_server --model deepseek-ai/DeepSeek-V3 --port 8108 "
                "--gpu-memory-utilization 0.98 --tensor-parallel-size 8 --trust-remote-code --quantization fp8"),
    # 0.7.0 (2025-01-27): the release before MLA's latent cache (0.7.1), as the maintainer's reply places it
    "gpu": ["--gpu", "8x H20"], "version": "0.7.0",
}


def test_12890_6500_tokens_run_and_mla_multiplies_the_pool():
    assert _check(R12890["gpu"], R12890["version"], R12890["command"] + " --max-model-len 6500")["fits"] is True
    # 0.7.1 caches the latent (576 values a token and layer, not 128 heads of K 192 + V 128): the pool grows by
    # the ratio the reply promises (oomkit 15,248 tokens at 0.7.0, 163,616 at 0.7.1)
    before = _check(R12890["gpu"], "0.7.0", R12890["command"])["estimate"]["engine_view"]["kv_cache_tokens"]
    after = _check(R12890["gpu"], "0.7.1", R12890["command"])["estimate"]["engine_view"]["kv_cache_tokens"]
    assert after >= 10 * before


@pytest.mark.xfail(strict=True, reason="vllm#12890: 6,500 tokens was the most vLLM 0.7.0 held on 8 x H20 at 0.98; "
                   "oomkit fits 13,568 (fit writes --max-model-len 13568) with 15,248 tokens in the pool at 6,500: "
                   "85.05 GB of weights, 1.15 GB of profile peak, 2.45 GB non-torch and 0.41 GB of graphs a GPU leave "
                   "11.43 GB for 749,568 B a token (61 layers x 16 heads x (K 192 + V padded to 192) x bf16); 6,500 "
                   "tokens take 4.87 GB, so if that was the pool's edge some 6.5 GB a GPU that 0.7.0 held is not "
                   "modelled (engines/vllm); the thread prints no figure to place it")
def test_12890_8192_tokens_do_not_fit_before_mla():
    assert _check(R12890["gpu"], R12890["version"], R12890["command"] + " --max-model-len 8192")["fits"] is False


# ---------------------------------------------------------------------------------------------------------------
# gpustack/gpustack#1800 (pengjiang80, 2025-04-17): Qwen2.5-VL-7B-Instruct on an RTX 3090, vLLM 0.8.4 with V0

R1800 = {
    "url": "https://github.com/gpustack/gpustack/issues/1800",
    "excerpt": ("Qwen2.5-VL-7B failed to start with 3090 24GB with V0 engine by default\n\nGPUStack v0.6.0 dev version "
                "build 6de0e9c. Tried to deploy Qwen2.5-VL-7B with default config, model failed to start with error as "
                "below:\n...\nINFO 04-17 15:09:15 [api_server.py:1034] vLLM API server version 0.8.4\n...\nERROR "
                "04-17 15:10:09 [engine.py:448] ValueError: The model's max seq len (8192) is larger than the maximum "
                "number of tokens that can be stored in KV cache (2400). Try increasing `gpu_memory_utilization` or "
                "decreasing `max_model_len` when initializing the engine."),
    # GPUStack's default for the model: V0 (the title), 8,192 tokens (the error's max seq len)
    "command": "env VLLM_USE_V1=0 vllm serve Qwen/Qwen2.5-VL-7B-Instruct --max-model-len 8192",
    "gpu": ["--gpu", "RTX 3090"], "version": "0.8.4",
}


_R1800_REFUSAL = (r"The model's max seq len \(8192\) is larger than the maximum number of tokens that can be stored "
                  r"in KV cache \((\d+)\)")


def test_1800_v0_refuses_8192():
    """V0 at 0.8.4 refused 8,192 on the RTX 3090. The dummy prompt (one image and one video of 16,384 tokens each,
    run whole through the decoder: 32,768 tokens) holds its float32 pixels twice through the decoder's forward: the
    batch execute_model moved to the GPU and qwen2_5_vl.py _validate_and_reshape_mm_tensor's torch.concat copy in
    the forward's image_input / video_input (encoder.py QWEN_V0_PIXEL_COPIES): 0.57 GiB more than one copy, 15,600
    -> 4,848 tokens."""
    r = _check(R1800["gpu"], R1800["version"], R1800["command"])
    m = _refusal(r, _R1800_REFUSAL)
    assert r["fits"] is False and m and int(m.group(1)) < 8192


@pytest.mark.xfail(strict=True, reason="gpustack#1800: V0 at 0.8.4 kept 2,400 tokens of KV cache; oomkit 4,848 "
                   "(15,600 before the pixels' second copy, 80,848 before V0's multimodal dummy prompt was read): "
                   "2,448 tokens of 56 KiB, 0.13 GiB more KV pool than vLLM found, not placed (the vision pass, with "
                   "all four float32 pixel buffers and the bf16 cast, reads below the decoder's 32,768-token peak)")
def test_1800_v0_kv_tokens_near_2400():
    r = _check(R1800["gpu"], R1800["version"], R1800["command"])
    m = _refusal(r, _R1800_REFUSAL)
    assert m and int(m.group(1)) <= 4800


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#7440 (thatjpk, 2024-10-31): x/llama3.2-vision:11b-instruct on an RTX 3080 Ti, Ollama v0.4.0-rc6

R7440 = {
    "url": "https://github.com/ollama/ollama/issues/7440",
    "excerpt": ("  Device 0: NVIDIA GeForce RTX 3080 Ti, compute capability 8.6, VMM: yes\n...\nllm_load_tensors: "
                "offloaded 31/41 layers to GPU\nllm_load_tensors:        CPU buffer size =  5679.33 MiB\n"
                "llm_load_tensors:      CUDA0 buffer size =  3841.45 MiB\n...\nllama_new_context_with_model: KV self "
                "size  =  656.25 MiB, K (f16):  328.12 MiB, V (f16):  328.12 MiB\n...\nrick-github: msg=\"offload to "
                "cuda\" projector.weights=\"1.8 GiB\" projector.graph=\"2.8 GiB\" layers.requested=-1 layers.model=41 "
                "layers.offload=31 layers.split=\"\" memory.available=\"[9.5 GiB]\" memory.gpu_overhead=\"0 B\" "
                "memory.required.full=\"11.0 GiB\" memory.required.partial=\"9.4 GiB\" memory.required.kv=\"320.0 "
                "MiB\" memory.required.allocations=\"[9.4 GiB]\" memory.weights.total=\"5.2 GiB\" "
                "memory.weights.repeating=\"4.8 GiB\" memory.weights.nonrepeating=\"411.0 MiB\" "
                "memory.graph.full=\"213.3 MiB\" memory.graph.partial=\"213.3 MiB\"\n```\nYou might have 10G "
                "available on your GPU, but the model requires 11G, and so only 31 of 41 layers are allocated to the "
                "GPU ... Reduce the number of layers offloaded to the GPU by explicitly setting `num_gpu`."),
    "command": "ollama run x/llama3.2-vision:11b-instruct",
    # the 9.5 GiB Ollama found free on the 12 GiB card; 0.4.0 is the release the rc became
    "gpu": ["--vram", "9.5GiB"], "version": "0.4.0",
}


def test_7440_ollamas_projector_and_runner_cache_match_the_log():
    """projector.weights 1.8 GiB, projector.graph 2.8 GiB, weights.nonrepeating 411.0 MiB as printed; oomkit's
    memory.required.kv is the runner's real 656.25 MiB ("KV self size"), where 0.4.0-rc6's estimate printed 320.0."""
    line = _check(R7440["gpu"], R7440["version"], R7440["command"])["estimate"]["engine_view"]["ollama_log"]
    for field in ('projector.weights="1.8 GiB"', 'projector.graph="2.8 GiB"', 'memory.available="[9.5 GiB]"',
                  'memory.weights.nonrepeating="411.0 MiB"', 'memory.required.partial="9.4 GiB"'):
        assert field in line, line


def _line_7440() -> str:
    ex = R7440["excerpt"]
    return ex[ex.index('msg="offload to cuda"'):ex.index("\n```")]


@pytest.mark.parametrize("free", ["9.46GiB", "9.48GiB", "9.49GiB"])
def test_7440_rc6_prints_the_logs_offload_line(free):
    """The log is v0.4.0-rc6's: its GraphSize has no mllama case and its KV is llm/memory.go's generic 2 B x 2048 x
    40 blocks x (128 + 128) x 8 = 320.0 MiB (the cross-attention layers counted as self-attention), so both graphs
    fall back to h/hkv x kv / 6 = 213.3 MiB; the mllama branch and GraphSize's kv (8c238e70a, d07cf41a9) were
    first tagged in v0.4.0-rc7. With those rules the line is the log's to the character wherever the free memory
    prints as "9.5 GiB" and is below 9.5 GiB (from 9.5 GiB on, 32 layers and partial "9.5 GiB"); at 0.4.0
    itself oomkit prints kv 656.2 MiB and 26 layers (was: the rc read as 0.4.0)."""
    line = _check(["--vram", free], "0.4.0-rc6", R7440["command"])["estimate"]["engine_view"]["ollama_log"]
    assert line == _line_7440()
    final = _check(["--vram", free], "0.4.0", R7440["command"])["estimate"]["engine_view"]["ollama_log"]
    assert 'memory.required.kv="656.2 MiB"' in final and "layers.offload=26" in final


def test_7440_the_runners_cache_and_gpu_weights_are_the_logs():
    """The runner at 31/41: "CUDA0 buffer size = 3841.45 MiB" (3841.44) and "KV self size = 656.25 MiB": 32 self-attention
    layers x 2048 cells x 8 MiB / 1024 + each of the 8 cross-attention layers' F32 K and V of 128 x 6404 x 8
    (llama/patches/0010-add-mllama-support.patch llama_kv_cache_init, 50.03 MiB a layer; 256.00 MiB before)."""
    view = _check(["--vram", "9.49GiB"], "0.4.0-rc6", R7440["command"])["estimate"]["engine_view"]
    assert abs(view["model_buffer_bytes"]["CUDA0"] / MiB - 3841.45) < 0.02  # 3841.44: the file computed, not read
    assert round(sum(view["kv_buffer_bytes"].values()) / MiB, 2) == 656.25


def test_7440_ollama_offloads_31_layers_and_fit_lowers_num_gpu():
    """At 0.4.0-rc6 with 9.49 GiB free: the log's 31/41, and the runner out of CUDA memory there: llama/mllama.cpp
    mllama_model_load puts the projector file (projector.weights="1.8 GiB") on CUDA device 0 and reserves its
    vision graph there, a global layer's KQ alone 16 heads x 6432^2 x 4 B (4 tiles x 1608 positions: (560/14)^2 + 1
    padded to 8); fit lowers num_gpu, as the thread's answer says to."""
    gpu, version = ["--vram", "9.49GiB"], "0.4.0-rc6"
    r = _check(gpu, version, R7440["command"])
    assert r["estimate"]["engine_view"]["ollama_layers"] == "31/41"
    proj = r["estimate"]["engine_view"]["mllama_projector"]
    assert proj["device"] == "CUDA0" and proj["graph"] == 16 * 6432 * 6432 * 4
    assert r["fits"] is False and r["estimate"]["devices"][0]["total_bytes"] > r["estimate"]["devices"][0]["memory_bytes"]
    assert _changes(_fit(gpu, version, R7440["command"])).get("num_gpu", (0, 99))[1] < 31


# ---------------------------------------------------------------------------------------------------------------
# AlexsJones/llmfit#755 (Akciali, 2026-07-16): Qwen3-30B-A3B-Instruct-2507 Q4_K_M on an RTX 2080 8GB, llama-server

R755 = {
    "url": "https://github.com/AlexsJones/llmfit/pull/755",
    "excerpt": ("Community benchmark for the NVIDIA GeForce RTX 2080 (8 GB) + i9-10900X ... Numbers come from `llmfit "
                "bench --runs 3` (v1.0.0) against a llama.cpp server running Qwen3-30B-A3B-Instruct-2507 Q4_K_M with "
                "MoE expert offload (`-ngl 99 --n-cpu-moe 36`, single request)."),
    "command": "llama-server -hf unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF:Q4_K_M -ngl 99 --n-cpu-moe 36",
    # the PR names no build: b9986 is the release of its week (containers/ramalama#2842, 2026-07-14)
    "gpu": ["--gpu", "RTX 2080"], "version": "b9986",
}


def test_755_the_benchmarked_offload_runs():
    """The experts of layers 36-47 on the 8 GB card, every other weight on it too; llama.cpp's --fit keeps -ngl and
    the overrides as typed and, with no -c, shortens the trained 262,144 tokens to what fits (oomkit 14,592)."""
    r = _check(R755["gpu"], R755["version"], R755["command"])
    v = r["estimate"]["engine_view"]
    assert r["fits"] is True and v["fit"] == "fitted"
    assert 4096 <= v["fit_n_ctx"] < 262144 and v["fit_n_gpu_layers"] is None
    f = _fit(R755["gpu"], R755["version"], R755["command"])
    assert f["changes"] == [] and f["tier"] == 1


# ---------------------------------------------------------------------------------------------------------------
# QwenLM/Qwen3#389 (zhuyang2356, 2024-05-09): Qwen1.5-32B-Chat-GPTQ-Int4 on an RTX 2080 Ti 22G, vLLM 0.4.2

R389 = {
    "url": "https://github.com/QwenLM/Qwen3/issues/389",
    "excerpt": ("用2080TI 22G单张显卡跑 qwen 1.5 32B-INT4模型没有成功\n\n总是报显存过小问题，设置了一些（比如 "
                "gpu_memory_utilzation, quantization）也没有用。请大伙帮忙看看\n顺带提一下，2080TI 22G显卡是有22356MB的总显存。\n"
                "#环境\nubuntu 20.04\ncuda 12.1\npytorch 2.3.0+cu121\ntransformers 4.40.2\nvllm 0.4.2\n...\nllm = "
                "LLM(model=\"../QwenModel/qwen15/Qwen1.5-32B-Chat-GPTQ-Int4\",\n          gpu_memory_utilization=0.99,\n"
                "          quantization=\"gptq\")"),
    # LLM(...) is the engine with its defaults, as the OpenAI server builds it
    "command": ("python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen1.5-32B-Chat-GPTQ-Int4 "
                "--gpu-memory-utilization 0.99 --quantization gptq"),
    "gpu": ["--vram", "22356MiB"], "version": "0.4.2",
}


@pytest.mark.parametrize("util", ["0.99", "0.9", "0.8"])
def test_389_fails_at_any_utilization(util):
    """The reporter changed the utilization without effect: 0.4.2's profile run pushes max_model_len = 32,768
    tokens through the model (oomkit: a 6,864 MiB activation peak beside 17.9 GiB of weights), whatever share the
    pool is given."""
    r = _check(R389["gpu"], R389["version"], R389["command"].replace("0.99", util))
    assert r["fits"] is False and _refusal(r, r"runs out of memory: the profile run")


def test_389_fit_shortens_the_context():
    f = _fit(R389["gpu"], R389["version"], R389["command"])
    ch = _changes(f)
    assert "max_model_len" in ch and ch["max_model_len"] == (32768, ch["max_model_len"][1]) and f["tier"] == 1
    assert ch["max_model_len"][1] < 32768 and "gpu_memory_utilization" not in ch
    assert _check(R389["gpu"], R389["version"], f["command"])["fits"] is True

