"""Real users' input, nineteenth sweep: 30 inputs people typed in 2025-2026 (each cited), run offline as a user runs
them through `check` (and, for each command, `check MODEL`, `fit` and `plan`): `vllm serve` of DeepSeek-V4-Flash on
RTX PRO 6000s and of a local Qwen2.5-VL folder; LMCache's `docker run` of Qwen3-Coder-480B FP8 with DP 8;
`python -m sglang.launch_server` with a local FP8 folder on a B200, with --device npu, and look-alike launchers
(sglang-omni's run_qwen3_omni_server.py, mini-sglang's `python -m minisgl`); LM Studio keys of Gemma 4
(google/gemma-4-31b, google/gemma-4-26b-a4b), an hf.co QAT GGUF URL, mlx-community/gemma-4-31b-it-bf16 on an "M5 Max";
Ollama tags (gemma4:26b, qwen3.5:35b-a3b, qwen3.5:9b, mixtral, nemotron-3-nano:4b) and an unsloth repo; a bartowski
blob URL; unsloth UD GGUF repos with their quant (UD-Q8_K_XL, UD-Q4_K_XL, UD-Q4_K_M, UD-Q6_K_XL); an MLX mixed 4.5-bit
repo and a local MLX folder; GGUF file names on Windows and in a config's `<path to model>` placeholder, with custom
quant types (Q8_K_P, APEX-I-Quality); an Ascend W8A8C8 folder. None of the sources is cited by an earlier test
(checked by URL and issue number under tests/).

Each expectation comes from the thread or page (the model it names, the hardware, whether it ran on the GPU alone,
"does not fit 12GB on its own", "requires partial CPU offload"), not from oomkit's output.

Measured (2026-12-07), each input as posted and offline: right 28 (19 read as the thread shows, 9 refused in one line
as they should be: a kernel the card lacks, an NPU, launchers oomkit does not model, a GPU named without its memory,
files not on this machine, quant mixes their names do not spell out), wrong 2, crashed 0. The two wrong were refusals
of real models the catalog does not know offline:
- ollama#10832's unsloth/Qwen3-32B-128K-GGUF: Qwen3-32B with YaRN to 131072 tokens (the thread's header:
  qwen3.context_length 131072, 64 blocks, 8 KV heads); the "-128K" suffix was not read as the base model. Now read
  (model/names.py, the catalog's context_extension of Qwen3-32B from its model card): Qwen3-32B with YaRN factor 4
  from 32,768, 131,072 tokens of trained context;
- kgptalkie's nemotron-3-nano:4b (Ollama's library: 4B, hybrid Mamba, 2.8 GB): no such catalog entry (still).

Found beside the sweep, in its model names: a folder named after a publisher was read as a model. `Qwen/` (a repo id
cut after its owner, not on this machine) and `/models/Qwen`, `/Qwen`, `C:\\models\\Qwen` were read as Qwen1.5 4B Chat
(the folder name "Qwen" is Ollama's tag `qwen`); they are now refused, while a folder of that name on this machine is
read first, and a folder named after a model (`/data/Qwen3-8B`, `Qwen3-8B/`) is still read by its name
(model/resolve.py _catalog_folder, _is_owner). A model name holding a bidirectional control ("\\u202eQwen/Qwen3-8B",
shown reversed) was read as Qwen3-8B: now refused, as --gpu refuses one (hostile sweep 17).
"""

from __future__ import annotations

import json

import pytest

from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    check_reading_case,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    one_line_or_answer,
    run_cli,
    sweep_tests,
)

GH = "https://github.com/"
LMS = GH + "lmstudio-ai/lmstudio-bug-tracker/issues/"
KGP = "https://kgptalkie.com/tutorials/generative-ai/local-llms-2026-technical-reference-guide"
B200, H200 = ("B200", 183359), ("H200", 143771)

# (case, the engine a name runs with; None for a command). Hardware as the thread names it; None where it names none
# (no expectation then depends on it). Versions as the thread states them.
CASES_AND_ENGINES = [
    # ---- vLLM ----
    (Case('v40821', GH + 'vllm-project/vllm/issues/40821', 'cmd', '2x RTX PRO 6000', '0.22.1', RIGHT,
          'CUDA_VISIBLE_DEVICES=0,1 \\\nvllm serve deepseek-ai/DeepSeek-V4-Flash \\\n  --served-model-name model \\\n'
          '  --trust-remote-code \\\n  --tensor-parallel-size 2 \\\n  --enable-expert-parallel \\\n'
          '  --max-model-len 131072 \\\n  --max-num-seqs 4 \\\n  --max-num-batched-tokens 32768 \\\n'
          '  --gpu-memory-utilization 0.95 \\\n  --kv-cache-dtype fp8 \\\n  --block-size 256 \\\n'
          '  --enable-prefix-caching \\\n  --port 8000 \\\n  --attention_config.use_fp4_indexer_cache=True \\\n'
          '  --compilation-config \'{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}\' \\\n'
          '  --reasoning-parser deepseek_v4 \\\n  --tokenizer-mode deepseek_v4 \\\n  --enable-auto-tool-choice \\\n'
          '  --tool-call-parser deepseek_v4',
          # "Deepseek V4 failed to load on RTX PRO 6000" (vLLM v0.22.1, 2x RTX 6000 Pro Blackwell, compute
          # capability 12.0): V4's sparse attention kernels of that release are for 9.x / 10.x
          ('refuses', 'no DeepSeek-V4 attention kernel for compute capability 12.0')), None),
    (Case('v15469', GH + 'vllm-project/vllm/issues/15469', 'cmd', None, '0.7.2', RIGHT,
          'CUDA_VISIBLE_DEVICES=0,1 VLLM_USE_V1=1 VLLM_WORKER_MULTIPROC_METHOD=spawn vllm serve '
          '/home/work/anyujie/Qwen/Qwen2.5-VL-3B-Instruct --gpu-memory-utilization 0.9 --swap-space 16 '
          '--max-model-len 4096 --tensor-parallel-size 2 --port 8091 --disable-custom-all-reduce',
          # a local folder named after the repo, TP 2, 4096 tokens (vllm 0.7.2)
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-VL 3B', 'ctx': 4096,
                     'settings': {'tensor_parallel_size': 2}})), None),
    (Case('lmc1435', GH + 'LMCache/LMCache/issues/1435', 'cmd', '8x H200', '0.10.1.1', RIGHT,
          'docker run --gpus all     --env "LMCACHE_CHUNK_SIZE=256"     --env "LMCACHE_LOCAL_CPU=True"     '
          '--env "LMCACHE_MAX_LOCAL_CPU_SIZE=400"     --volume '
          '/mnt/fast-disks/nfs/gmi-inference-engine/model_garden/models:/root/models     --network=host     '
          '--ipc=host     lmcache/vllm-openai:latest-nightly     /root/models/Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 '
          '--max-model-len 131072 --enable-expert-parallel --data-parallel-size 8 --served-model-name '
          'Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 --enable-auto-tool-choice --tool-call-parser qwen3_coder '
          '--disable-hybrid-kv-cache-manager --gpu-memory-utilization 0.75 --kv-transfer-config '
          '\'{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}\'',
          # "vllm LMcache serve Qwen3-Coder-480B-A35B-Instruct-FP8 ... in H200*8" (vLLM 0.10.1.1): DP 8 with EP
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Coder-480B-A35B', 'format': 'fp8', 'ctx': 131072,
                     'settings': {'data_parallel_size': 8}, 'devices': [H200] * 8})), None),
    (Case('asc7742', GH + 'vllm-project/vllm-ascend/pull/7742', 'cmd', None, None, RIGHT,
          'vllm serve /mnt/share/InferenceSolutionAutoTest/weight/GLM-5.1-W8A8C8-MTP --tensor-parallel-size 16 '
          '--enable-expert-parallel --quantization ascend --max-model-len 18432',
          # an Ascend W8A8C8 folder on the poster's NPU machine: not on this machine, and its name is no repo
          ('refuses', 'no such file: /mnt/share/InferenceSolutionAutoTest/weight/GLM-5.1-W8A8C8-MTP')), None),
    # ---- SGLang and look-alikes ----
    (Case('sg10138', GH + 'sgl-project/sglang/issues/10138', 'cmd', 'B200', None, RIGHT,
          'SGLANG_CUTLASS_MOE=0 SGL_ENABLE_JIT_DEEPGEMM=0 TORCH_CUDA_ARCH_LIST=10.0  CUDA_VISIBLE_DEVICES=2 python3 -m '
          'sglang.launch_server --model-path /data00/models/Qwen3-30B-A3B-Instruct-2507-FP8 --trust-remote-code  '
          '--port 28000 --mem-fraction-static 0.9  --tp 1 --disable-radix-cache --moe-runner-backend triton',
          # TORCH_CUDA_ARCH_LIST=10.0 (a B200); the server ran and answered (its output was the bug)
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-30B-A3B-Instruct-2507', 'format': 'fp8',
                     'settings': {'tp_size': 1, 'mem_fraction_static': 0.9}, 'fits': True, 'devices': [B200]})),
     None),
    (Case('sg7495', GH + 'sgl-project/sglang/issues/7495', 'cmd', None, None, RIGHT,
          'python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B-FP8 --tp 1 --reasoning-parser qwen3',
          ('reads', {'engine': 'sglang', 'model': 'Qwen3 0.6B', 'format': 'fp8', 'settings': {'tp_size': 1}})), None),
    (Case('sg17883', GH + 'sgl-project/sglang/pull/17883', 'cmd', '2x H100', None, RIGHT,
          'python3 -m sglang.launch_server --model-path /root/.cache/Qwen3-30B-A3B-GGUF/Qwen3-30B-A3B-Q4_K_M.gguf '
          '--device npu --attention-backend ascend --host 0.0.0.0 --port 30000 --mem-fraction-static 0.8 --tp-size 2',
          # SGLang on an Ascend NPU
          ('refuses', '--device npu')), None),
    (Case('omni266', GH + 'sgl-project/sglang-omni/pull/266', 'cmd', '4x H100', None, RIGHT,
          'python3 examples/run_qwen3_omni_server.py     --model-path Qwen/Qwen3-Omni-30B-A3B-Instruct     '
          '--tp-size 4     --quantization fp8     --host 0.0.0.0     --port 8000 --mem-fraction-static 0.9',
          # sglang-omni's own script, not SGLang's server
          ('refuses', "unknown engine command 'python3'")), None),
    (Case('minisgl59', GH + 'sgl-project/mini-sglang/pull/59', 'cmd', '2x H100', None, RIGHT,
          'python -m minisgl --model /mnt/models/Qwen/qwen3_30b_moe  --tp 2 --disable-pynccl   '
          '--cuda-graph-max-bs 256',
          ('refuses', "unknown engine module 'python -m minisgl'")), None),
    # ---- LM Studio ----
    (Case('lms1728', LMS + '1728', 'model', 'M1 Max 64GB', None, RIGHT, 'google/gemma-4-31b',
          # "The models easily fit within my 64GB of Unified Memory, so it is not an Out-Of-Memory (OOM) error"
          ('reads', {'engine': 'llama.cpp', 'model': 'Gemma 4 31B', 'fits': True})), 'lmstudio'),
    (Case('lms1745', LMS + '1745', 'model', 'RTX 3070', None, RIGHT, 'google/gemma-4-26b-a4b',
          # LM Studio's own estimate: "Model: 18.53 GB" on an 8.59 GB RTX 3070; offload "adjusted from 'max' to '9'"
          ('reads', {'engine': 'llama.cpp', 'model': 'Gemma 4 26B-A4B', 'fits': False})), 'lmstudio'),
    (Case('lms2169', LMS + '2169', 'model', 'RTX 4080 Laptop', None, RIGHT,
          'https://hf.co/google/gemma-4-26B-A4B-it-qat-q4_0-gguf/',
          # Google's QAT Q4_0 GGUF, as the thread links it (with its trailing slash)
          ('reads', {'engine': 'llama.cpp', 'model': 'gemma-4-26B-A4B', 'format': 'q4_0',
                     'devices': [('RTX 4080 Laptop', 12288)]})), 'lmstudio'),
    (Case('lms1791', LMS + '1791', 'model', 'M5 Max', None, RIGHT, 'mlx-community/gemma-4-31b-it-bf16',
          # "macOS (M5 Max)": the chip without its memory, which the M5 Max comes with in more than one size
          ('refuses', "unknown GPU 'M5 Max'")), 'mlx'),
    (Case('apex25', GH + 'KLL535/ComfyUI_Simple_Qwen3-VL-gguf/issues/25', 'model', None, None, RIGHT,
          'Qwen3.6-35B-A3B-APEX-I-Quality',
          # "tuning n_cpu_moe in LM Studio ... Qwen3.6-35B-A3B-APEX-I-Quality": a custom per-tensor mix the name
          # does not spell out
          ('refuses', "unknown model 'Qwen3.6-35B-A3B-APEX-I-Quality'")), 'lmstudio'),
    # ---- Ollama ----
    (Case('obuddy21', GH + 'captainflasmr/ollama-buddy/issues/21', 'model', '16GiB', None, RIGHT, 'gemma4:26b',
          # 'offloaded 17/31 layers to GPU', "model weights" ROCm0 8.5 GiB and CPU 8.8 GiB on a 16 GB card
          ('reads', {'engine': 'ollama', 'model': 'Gemma 4 26B-A4B', 'fits': False})), 'ollama'),
    (Case('o10832', GH + 'ollama/ollama/issues/10832', 'model', '2x RTX 3090', None, FIXED,
          'unsloth/Qwen3-32B-128K-GGUF',
          # its header: general.name Qwen3-32B-128K, qwen3.context_length 131072, block_count 64, head_count_kv 8
          # (Qwen3-32B with YaRN x4)
          ('reads', {'engine': 'ollama', 'model': 'Qwen3-32B-128K'})), 'ollama'),
    (Case('kgp-qwen35moe', KGP, 'model', 'RTX 4090', None, RIGHT, 'qwen3.5:35b-a3b',
          # "Qwen 3.5 35B-A3B and Nemotron 30B ... load successfully" on 24 GB cards
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.5 35B-A3B', 'fits': True})), 'ollama'),
    (Case('kgp-qwen359b', KGP, 'model', 'RTX 4090', None, RIGHT, 'qwen3.5:9b',
          # 6.6 GB on a 24 GB card
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.5 9B', 'fits': True})), 'ollama'),
    (Case('kgp-mixtral', KGP, 'model', 'RTX 4090', None, RIGHT, 'mixtral',
          # "Mixtral 8x7B at 26GB will require partial CPU offload on a 24GB card"
          ('reads', {'engine': 'ollama', 'model': 'Mixtral 8x7B', 'format': 'q4_0', 'fits': False})), 'ollama'),
    (Case('kgp-nemo4b', KGP, 'model', 'RTX 4090', None, STILL, 'nemotron-3-nano:4b',
          # "Nemotron 3 Nano 4B | nemotron-3-nano:4b | 4B | Hybrid Mamba | 2.8 GB"
          ('reads', {'engine': 'ollama', 'model': 'Nemotron 3 Nano 4B', 'fits': True})), 'ollama'),
    # ---- llama.cpp GGUF names ----
    (Case('memoir108', GH + 'brucepro/Memoir/issues/108', 'model', None, None, RIGHT,
          'https://huggingface.co/bartowski/Qwen_Qwen3-1.7B-GGUF/blob/main/Qwen_Qwen3-1.7B-Q4_K_M.gguf',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 1.7B', 'format': 'Q4_K_M'})), 'llama.cpp'),
    (Case('pi-qwen36', 'https://forcewake.me/pi-qwen36-llamacpp-self-healing-local-agent/', 'cmd', None, None, RIGHT,
          'llama-server -hf unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q8_K_XL --jinja',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.6 35B-A3B'})), None),
    (Case('smelt4070', 'https://smeltcore.com/recipes/qwen3-6-35b-a3b-mtp-ud-q4-k-xl-gguf-rtx-4070/', 'model',
          'RTX 4070', None, RIGHT, 'unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q4_K_XL',
          # "This model does not fit 12GB on its own. The UD-Q4_K_XL GGUF is ~22.85GB on disk"
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.6 35B-A3B', 'fits': False})), 'llama.cpp'),
    (Case('zenn5090', 'https://zenn.dev/toki_mwc/articles/rtx5090-qwen36-35b-a3b-llmacpp-bench', 'model',
          'RTX 5090', 'b8870', RIGHT, 'unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q4_K_M',
          # llama.cpp b8870 on an RTX 5090 (32 GB): UD-Q4_K_M 20.6 GB, "Estimated VRAM ~23 GB"
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.6 35B-A3B', 'fits': True})), 'llama.cpp'),
    (Case('garage122', 'https://llmgarage.ai/qwen-3.5-122b-q6-k-xl-sextet-3090/', 'model', '6x RTX 3090', None,
          RIGHT, 'unsloth/Qwen3.5-122B-A10B-GGUF:UD-Q6_K_XL',
          # "Q6_K_XL format (~105GB) leaves plenty of headroom for KV cache" on six 3090s
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5 122B-A10B', 'fits': True})), 'llama.cpp'),
    (Case('prosi4b', 'https://www.prositronic.eu/en/deploy/qwen3-5-4b/q5_k_m/nvidia-rtx3090', 'model', 'RTX 3090',
          None, RIGHT, 'Qwen/Qwen3.5-4B:Q5_K_M',
          # "This fits within the 24 GB of VRAM on NVIDIA RTX 3090, enabling full GPU inference"
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5 4B', 'format': 'Q5_K_M', 'fits': True})),
     'llama.cpp'),
    (Case('hauhau34', GH + 'KLL535/ComfyUI_Simple_Qwen3-VL-gguf/issues/34', 'model', 'RTX 4070', None, RIGHT,
          'D:\\AI\\Models\\LLM\\Gemma4\\HauhauCS\\Gemma4-26B-A4B-Uncensored-HauhauCS-Balanced\\'
          'Gemma4-26B-A4B-Uncensored-HauhauCS-Balanced-Q8_K_P.gguf',
          # the poster's own file (a custom Q8_K_P mix), not on this machine
          ('refuses', 'no such file: D:\\AI\\Models')), 'llama.cpp'),
    (Case('godot87', GH + 'FlamxGames/godot-ai-assistant-hub/pull/87', 'model', None, None, RIGHT,
          '<path to model>/Qwen3.6-35B-A3B-UD-Q4_K_M.gguf',
          # the preset's `model = <path to model>/...`: refused with the repo and type the name says
          ('refuses', 'Qwen/Qwen3.6-35B-A3B:UD-Q4_K_M')), 'llama.cpp'),
    # ---- MLX ----
    (Case('spicy45', 'https://huggingface.co/spicyneuron/Qwen3-Next-Coder-MLX-4.5bit', 'cmd', 'M4 Max 36GB', None,
          RIGHT, 'uvx --from mlx-lm mlx_lm.server --host 127.0.0.1 --port 8080 \\\n'
          '  --model spicyneuron/Qwen3-Next-Coder-MLX-4.5bit',
          # "Uses MXFP4 for some module paths" (and Q8 edge experts): bits the name does not give
          ('refuses', "unknown model 'spicyneuron/Qwen3-Next-Coder-MLX-4.5bit'")), None),
    (Case('emlx-loader', 'https://hexdocs.pm/emlx_axon/EMLXAxon.Qwen3.Loader.html', 'model', None, None, RIGHT,
          '~/models/Qwen3-0.6B-MLX-4bit',
          # `Loader.load("~/models/Qwen3-0.6B-MLX-4bit")`: a local MLX 4-bit folder of Qwen3-0.6B
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-0.6B'})), 'mlx'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {
    'kgp-nemo4b': "nemotron-3-nano:4b (Ollama's 2.8 GB 4B hybrid-Mamba tag) is refused as an unknown model: the "
                  "catalog holds no Nemotron 3 Nano 4B",
}


def check(c: Case) -> None:
    check_reading_case(c, ENGINE[c.id])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c.id for c in CASES}) == 30
    assert sum(c.status == STILL for c in CASES) == 1 and sum(c.status == RIGHT for c in CASES) == 28
    assert sum(c.status == FIXED for c in CASES) == 1
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- a folder named after a publisher (model/resolve.py _catalog_folder, _is_owner) ----

@pytest.mark.parametrize("ref", ["Qwen/", "qwen/", "TinyLlama/", "mlx-community/"])
def test_a_repo_id_cut_after_its_owner_is_refused(ref, tmp_path, monkeypatch):
    """`Qwen/` was read as Qwen1.5 4B Chat: its folder name "Qwen" is Ollama's tag `qwen`."""
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("estimate", ref, "--vram", "24GiB")
    one_line_or_answer(rc, err, ref)
    assert rc == 2 and "as a repo id it names only its owner" in err, err
    for cmd in (["vllm", "serve", ref], ["llama-server", "-hf", ref]):
        rc, _, err = run_cli("check", "--vram", "24GiB", "--", *cmd)
        assert rc == 2 and "names only its owner" in err, (cmd, err)


@pytest.mark.parametrize("ref,sep", [("/models/Qwen", "/"), ("/Qwen", "/"), ("./Qwen/", "/"),
                                     ("C:\\models\\Qwen", "\\")])
def test_a_folder_named_after_a_publisher_is_no_model(ref, sep, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("estimate", ref, "--vram", "24GiB")
    one_line_or_answer(rc, err, ref)
    assert rc == 2 and f"no such folder: {ref}" in err and f"{ref.rstrip(sep)}{sep}<model>" in err, err


def test_a_local_folder_named_after_a_publisher_is_read_first(tmp_path, monkeypatch):
    from tests import hostile as H  # the config.json writer of the hostile tests

    H.write_config(tmp_path / "Qwen", H.llama_config())
    monkeypatch.chdir(tmp_path)
    for ref in ("Qwen/", "./Qwen", str(tmp_path / "Qwen")):
        rc, out, err = run_cli("estimate", ref, "--vram", "24GiB", "--json")
        assert rc == 0, err
        m = json.loads(out)["model"]
        assert m["n_layers"] == 2 and m["architecture"] == "llama", (ref, m)


@pytest.mark.parametrize("ref,hf_id", [("/data/Qwen3-8B", "Qwen3 8B"), ("Qwen3-8B/", "Qwen3 8B"),
                                       ("/models/Qwen/Qwen3-8B", "Qwen3 8B")])
def test_a_folder_named_after_a_model_is_still_read_by_its_name(ref, hf_id, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("check", ref, "--vram", "24GiB", "--json")
    assert rc in (0, 1), err
    e = json.loads(out)["estimate"]
    assert e["model"]["name"] == hf_id and any("by its folder name" in w for w in e["warnings"]), e["warnings"]


def test_a_128k_repo_reads_as_its_base_with_the_documented_yarn():
    """ollama#10832's header: qwen3.context_length 131072, 64 blocks, 8 KV heads; Qwen3-32B's card: YaRN factor 4 from
    32,768. A context word the base's card does not document is not read (Qwen3-0.6B's card gives no YaRN; 1M is no
    Qwen3 extension)."""
    rc, out, err = run_cli("estimate", "unsloth/Qwen3-32B-128K-GGUF", "--engine", "ollama", "--vram", "48GiB", "--json")
    assert rc in (0, 1), err
    e = json.loads(out)
    assert (e["model"]["n_ctx_train"], e["model"]["n_layers"]) == (131072, 64)
    assert any("YaRN factor 4 from 32,768 to 131,072" in w for w in e["warnings"]), e["warnings"]
    for ref in ("unsloth/Qwen3-0.6B-128K-GGUF", "unsloth/Qwen3-32B-1M-GGUF"):
        rc, _, err = run_cli("estimate", ref, "--engine", "ollama", "--vram", "48GiB")
        assert rc == 2 and "unknown model" in err, (ref, err)
