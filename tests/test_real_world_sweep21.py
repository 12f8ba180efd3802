"""Real users' input, twenty-first sweep: 30 inputs people typed in 2025-2026 (each cited), run offline as a user runs
them through `check` (and, for each command, `check MODEL`, `fit` and `plan`): vLLM on a DGX Spark (NGC's
vllm:26.02-py3 image with Llama-3.3-70B NVFP4, the recipes' Gemma-4-26B-A4B NVFP4 and Nemotron-3-Super NVFP4 commands,
Gemma 4 E2B at 0.27.1), Qwen3-VL-8B FP8 on an L4, a podman run of a private vllm-openai image, a vllm.md guide's
`--model <model-path> <additional flags>`, a cluster launcher's `exec vllm serve`, NVFP4 repos (a local NVFP4A16 quant of
Qwen3-VL-8B-Thinking, Qwen3.5-397B-A17B at TP 2 x PP 2 on four RTX PRO 6000s); llama.cpp paths (a GGUF path in a
publisher folder, ramalama's huggingface:// URI, LM Studio's Windows models folder, a hub URL to one file, the
projector file of a hub-cache snapshot, an old ./main command cut short); Ollama tags (gemma4:e2b on a 4 GB GTX 1650 Ti
laptop, the MLX builds qwen3.8:27b-mlx, qwen3.8:27b-mxfp8 and qwen3.6:35b-a3b-coding-nvfp4, qwen3.6:35b, ramalama's
ollama://) and two Ollama errors; MLX repos (mxfp8, an MTP build for mlx-serve, a JANG mixed quant); an LM Studio key.
None of the sources is cited by an earlier test (checked by URL and issue number under tests/).

Each expectation comes from the thread or page (the model it names, the hardware, "produces correct output",
"validated runs", "Layers on GPU 35 / 36", "GB10's unified memory can't satisfy vLLM's default 0.92 and OOMs at
startup", "starting mlx runner subprocess"), not from oomkit's output.

Measured (2026-12-07), each input as posted and offline, against the tree before this sweep's changes: right 20 (13
read as the source shows, 7 refused in one line as they should be), wrong 10, crashed 0. Fixed 8:
- ollama#17986's qwen3.8:27b-mlx was "unknown model" (with "did you mean qwen3.8:27b"), its qwen3.8:27b-mxfp8 "unknown
  quant tag 'mxfp8'" with a list of 86 names, and ollama#17246's qwen3.6:35b-a3b-coding-nvfp4 "a Hugging Face
  checkpoint format, and this engine loads GGUF files": all three are tags of Ollama's MLX builds (x/create quantizes
  to int4, int8, nvfp4, mxfp4, mxfp8; x/mlxrunner loads them; integration/reg_release_test.go pulls
  qwen3.5:2b-nvfp4). qwen3.8:27b-mxfp8 is now sized as that runner loads it (engines/ollama/mlx_runner.py: x/create's
  quantization of the BF16 checkpoint, client.go Load's check) and refused by other engines; the -mlx import, and a
  build whose base the catalog does not hold (qwen3.6:35b-a3b-coding), are refused as MLX builds, naming the GGUF
  tag of the same model where the catalog holds it (model/names.py ollama_mlx_tag / ollama_mlx_build);
- the vllm.md guide's `--model <model-path> <additional flags>` was "unknown model 'flags>'": a guide's placeholder
  (<...>, {{...}}, or a word of one a shell split) is now refused as one (model/resolve.py);
- the mmproj-F16.gguf of a hub-cache snapshot (unsloth#6682's --mmproj path) was read as the model itself, Gemma 4 E2B
  at F16: a projector file is now refused as the projector (model/names.py is_projector_file);
- ramalama's "huggingface://bartowski/granite-3.0-8b-instruct-GGUF/granite-3.0-8b-instruct-Q4_K_M.gguf" was "no such
  file": the hub's URI schemes (hf://, huggingface://; zml#702's llmd takes hf:// too) now name the repo and, for a
  file, its type (model/names.py canonical_ref);
- the dev.to post's "GTX 1650 Ti Mobile" was an unknown GPU: now in hardware/gpus.json (4 GB GDDR6, a laptop part only),
  and gemma4:e2b at Ollama 0.23.1 on it is placed 35 of 36 layers on the GPU, as the post measured.
- omlx#1281's mlx-community/Qwen3.6-35B-A3B-mxfp8: the name was read, but quant/hf_formats.py refused MLX's mxfp8
  mode; mx.quantize's mxfp8 (e4m3 values, a ue8m0 scale per 32) and nvfp4 (e2m1, an e4m3 scale per 16) are now sized
  beside mxfp4 (33.29 GiB of weights against 34.30 for the 8-bit affine build).
Still wrong 1 (a strict xfail): the Nemotron-3-Super NVFP4 at vLLM's default 0.92 on a DGX Spark,
which OOMs at startup (recipes#632) where oomkit plans the GB10 as a card with all its memory free. ollama#17246's
"model requires 20.4 GiB but only 11.3 GiB are available (after 512.0 MiB overhead)" (x/mlxrunner/client.go), which
`diagnose` did not recognise, is read since as Ollama's weights (diagnose/signatures.py ollama_mlx_load).
"""

from __future__ import annotations

import json

import pytest

from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    check_case,
    check_reading_case,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    run_cli,
    sweep_tests,
)

GH = "https://github.com/"
SPARK = ("GB10", 125081)
CARTE = "https://dev.to/mrviduus/i-put-ollama-on-a-4-gb-mobile-gpu-and-got-25-heres-the-vram-math-3mhk"
RAMA = GH + "containers/ramalama/issues/599"
REC632 = GH + "vllm-project/recipes/pull/632"

# (case, the engine a name runs with; None for a command or a log). Hardware as the source names it; None where it
# names none (no expectation then depends on it). Versions as the source states them.
CASES_AND_ENGINES = [
    # ---- vLLM ----
    (Case('v35191', GH + 'vllm-project/vllm/issues/35191', 'cmd', 'L4', None, RIGHT,
          'vllm serve Qwen/Qwen3-VL-8B-Instruct-FP8 --max-model-len 22528 --tensor-parallel-size 1 '
          '--gpu-memory-utilization 0.90 --dtype float16 --host 0.0.0.0 --port 7000 --mm-encoder-tp-mode data '
          '--max-num-batched-tokens 8192 --max-num-seqs 16 --mm-processor-cache-gb 0 --enable-prefix-caching',
          # "I am serving a qwen3-vl series on k8s pod ... L4 - 24GB": it serves; the OOM is of the pod's CPU RAM
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-8B', 'format': 'fp8', 'ctx': 22528, 'fits': True,
                     'settings': {'max_num_seqs': 16}})), None),
    (Case('spark79', GH + 'NVIDIA/dgx-spark-playbooks/issues/79', 'cmd', 'DGX Spark', '0.15.1', RIGHT,
          'docker run -d --name vllm-bench --gpus all --network host --ipc=host \\\n'
          '  --ulimit memlock=-1 --ulimit stack=67108864 \\\n  -e HF_TOKEN=$HF_TOKEN \\\n'
          '  -v $HOME/.cache/huggingface:/root/.cache/huggingface \\\n  nvcr.io/nvidia/vllm:26.02-py3 \\\n'
          '  vllm serve nvidia/Llama-3.3-70B-Instruct-NVFP4 \\\n    --port 8012 --max-model-len 16384',
          # "single Spark, produces correct output but at ~4.0-4.2 tok/s" (vLLM 0.15.1+befbc472)
          ('reads', {'engine': 'vllm', 'model': 'Llama-3.3-70B', 'format': 'nvfp4', 'ctx': 16384, 'fits': True,
                     'devices': [SPARK]})), None),
    (Case('rec916', GH + 'vllm-project/recipes/pull/916', 'cmd', 'DGX Spark', None, RIGHT,
          # the DGX Spark override's flags (its YAML list) after the model
          'vllm serve nvidia/Gemma-4-26B-A4B-NVFP4 --gpu-memory-utilization 0.8 --max-model-len 262144 '
          '--max-num-seqs 8 --max-num-batched-tokens 8192',
          # "the validated runs on the single-GPU Blackwell desktops ... DGX Spark GB10 at 0.8 memory utilization and
          # an 8-way batch ... at the full 262K context"
          ('reads', {'engine': 'vllm', 'model': 'Gemma 4 26B-A4B', 'format': 'nvfp4', 'ctx': 262144,
                     'fits': True})), None),
    (Case('rec632', REC632, 'cmd', 'DGX Spark', None, RIGHT,
          # the launch command's flags as the PR and its review give them
          'vllm serve nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4 --gpu-memory-utilization 0.85 '
          '--max-model-len 131072 --max-num-seqs 4',
          # "Marks the Nemotron-3-Super NVFP4 variant as verified on DGX Spark (GB10) ... at TP=1"
          ('reads', {'engine': 'vllm', 'model': 'Nemotron-3-Super', 'format': 'nvfp4', 'ctx': 131072,
                     'fits': True})), None),
    (Case('rec632dflt', REC632, 'model', 'DGX Spark', None, STILL,
          'nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4',
          # "--gpu-memory-utilization 0.85 is required — GB10's unified memory can't satisfy vLLM's default 0.92 and
          # OOMs at startup"
          ('reads', {'engine': 'vllm', 'model': 'Nemotron-3-Super', 'fits': False})), 'vllm'),
    (Case('loft', 'https://loftllc.dev/en/docs/tech/llm-research/qwen3-6-27b-nvfp4-mtp-vllm-benchmark/', 'cmd',
          '2x RTX PRO 6000', None, RIGHT,
          # the post's podman command up to the flag the page cuts
          'podman run --rm -it \\\n--name naughty \\\n--pull=always \\\n--publish 8001:8001 \\\n'
          '--device nvidia.com/gpu=all \\\n--shm-size=8g \\\n-v /mnt/data/models/lora-adapters:/loras:ro \\\n'
          '-v /mnt/data/models:/hf/hub:ro \\\n-e HF_HOME=/hf \\\n-e HF_HUB_CACHE=/hf/hub \\\n-e HF_HUB_OFFLINE=1 \\\n'
          '-e TRANSFORMERS_OFFLINE=1 \\\n-e TORCH_CUDA_ARCH_LIST=12.0 \\\n-e VLLM_TARGET_DEVICE=cuda \\\n'
          '-e VLLM_USE_V1=1 \\\n-e VLLM_FLASHINFER_MOE_BACKEND=throughput \\\n-e VLLM_USE_FLASHINFER_MOE_FP4=1 \\\n'
          'registry.home.arpa/vllm-openai:cu130-nightly-fe9c3d6 \\\nsakamakismile/Qwen3.6-27B-Text-NVFP4-MTP \\\n'
          '--host 0.0.0.0 \\\n--port 8001 \\\n--served-model-name Qwen3.6-27b-NVFP4 \\\n--trust-remote-code \\\n'
          '--language-model-only',
          # "I ran sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP on vLLM v0.19.2rc1 ... RTX PRO 6000 Max-Q Blackwell 96GB
          # x 2": a 27B at 4 bits fits one of them
          ('reads', {'engine': 'vllm', 'model': 'Qwen3.6-27B', 'format': 'nvfp4', 'fits': True})), None),
    (Case('rtx6kmd', 'http://www.webkkk.net/voipmonitor/rtx6kpro/blob/master/inference-engines/vllm.md', 'cmd', None,
          None, FIXED,
          'docker run --rm --gpus all \\\n--ipc=host --shm-size=16g \\\n--ulimit memlock=-1 --ulimit stack=67108864 '
          '\\\n--network host \\\n-v ~/.cache/huggingface:/root/.cache/huggingface \\\n'
          'vllm/vllm-openai:cu130-nightly \\\n--model <model-path> \\\n<additional flags>',
          # the guide's template as written, its placeholders left in (a shell splits "<additional flags>" in two)
          ('refuses', "is a placeholder, as a guide writes one")), None),
    (Case('spark75', GH + 'NVIDIA/dgx-spark-playbooks/issues/75', 'cmd', '2x DGX Spark', None, RIGHT,
          './launch-cluster.sh \\\n  -t vllm-node-tf5:latest \\\n  -e HF_HUB_OFFLINE=1 \\\n  exec vllm serve \\\n'
          '  google/gemma-4-31B-it \\\n  --port 8000 --host 0.0.0.0 \\\n  --served-model-name gemma-4-31b \\\n'
          '  --default-chat-template-kwargs \'{"enable_thinking":true}\' \\\n  --gpu-memory-utilization 0.8 \\\n'
          '  -tp 2 \\\n  --distributed-executor-backend ray',
          # the comment's command without its "# ..." notes: eugr's cluster script, which oomkit does not read
          ('refuses', "unknown engine command './launch-cluster.sh'")), None),
    (Case('murilo', 'https://fast.hugflare.com/murilonwt/Qwen3-VL-8B-Thinking-NVFP4', 'model', 'RTX 5060 Ti 16GB',
          None, RIGHT, 'murilonwt/Qwen3-VL-8B-Thinking-NVFP4',
          # "a locally quantized Qwen3-VL-8B-Thinking model using NVFP4A16 ... tested ... on RTX 5060 Ti 16GB"
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-8B-Thinking', 'format': 'nvfp4'})), 'vllm'),
    (Case('rd397', 'https://reddit.sentinel-team.org/posts/1roqkw4/snapshots/2026-03-13T23%3A00%3A09.503181Z', 'cmd',
          '4x RTX PRO 6000', '0.17.0', RIGHT,
          # the report's table as flags: "Model nvidia/Qwen3.5-397B-A17B-NVFP4 ... Parallelism TP=2 + PP=2 ...
          # KV Cache FP8 e4m3 ... Max Seq Len 32,768" (vLLM 0.17.0)
          'vllm serve nvidia/Qwen3.5-397B-A17B-NVFP4 --tensor-parallel-size 2 --pipeline-parallel-size 2 '
          '--kv-cache-dtype fp8 --max-model-len 32768',
          # the debug report's runs load (its trouble is the kernels' output, not memory)
          ('reads', {'engine': 'vllm', 'model': 'Qwen3.5 397B-A17B', 'format': 'nvfp4', 'ctx': 32768, 'fits': True,
                     'settings': {'tensor_parallel_size': 2, 'pipeline_parallel_size': 2}})), None),
    (Case('atlas14', GH + '0xBakeer/inference-atlas/pull/14', 'model', 'DGX Spark', '0.27.1', RIGHT,
          'google/gemma-4-E2B-it',
          # "vllm 0.27.1 · google/gemma-4-E2B-it · bf16 · nvidia-gb10-dgx-spark ... GPU KV cache 9,493,769 tokens"
          ('reads', {'engine': 'vllm', 'model': 'Gemma 4 E2B', 'format': 'bfloat16', 'fits': True})), 'vllm'),
    # ---- llama.cpp ----
    (Case('aip325', GH + 'intel/AI-Playground/issues/325', 'model', None, None, RIGHT,
          'gabriellarson/gpt-oss-120b-GGUF/gpt-oss-120b-Q4_0.gguf',
          # "Failed to start LLM server for model gabriellarson/gpt-oss-120b-GGUF/gpt-oss-120b-Q4_0.gguf": a file
          # of the app's models folder, not on this machine
          ('refuses', 'openai/gpt-oss-120b:Q4_0')), 'llama.cpp'),
    (Case('ramahf', RAMA, 'model', None, None, FIXED,
          'huggingface://bartowski/granite-3.0-8b-instruct-GGUF/granite-3.0-8b-instruct-Q4_K_M.gguf',
          # `ramalama list`: the file ramalama pulled from the hub, named by its URI ("4.6 GB")
          ('reads', {'engine': 'llama.cpp', 'model': 'Granite 3.0 8B', 'format': 'Q4_K_M'})), 'llama.cpp'),
    (Case('zml702', GH + 'zml/zml/issues/702', 'cmd', 'M4 Pro 48GB', None, RIGHT,
          'llmd --model=hf://google/gemma-4-26B-A4B-it',
          # "Command line: llmd --model=hf://google/gemma-4-26B-A4B-it" (zml's own server on Metal)
          ('refuses', "unknown engine command 'llmd'")), None),
    (Case('lc5236', GH + 'ggml-org/llama.cpp/issues/5236', 'cmd', None, None, RIGHT,
          './main --frequency-penalty 0.5 --frequency-penalty 0.5 --top-k 5 --top-p 0.9 -m  '
          '/Users/zhangyixin/Desktop/llama.cpp/TheBloke/Yi-34B-Chat-GGUF/yi-34b-chat.Q8_0.gguf  -p',
          # the shell history line as posted, cut after -p
          ('refuses', '-p expects a value')), None),
    (Case('lms1192', GH + 'lmstudio-ai/lmstudio-bug-tracker/issues/1192', 'model', '64GiB', None, RIGHT,
          'C:\\LMStudioModels\\lmstudio-community\\Qwen3-Coder-30B-A3B-Instruct-GGUF\\'
          'Qwen3-Coder-30B-A3B-Instruct-Q6_K.gguf',
          # the path in the log, on the poster's Windows machine
          ('refuses', 'Qwen/Qwen3-Coder-30B-A3B-Instruct:Q6_K')), 'lmstudio'),
    (Case('pguso2', GH + 'pguso/ai-product-from-scratch/issues/2', 'model', None, None, RIGHT,
          'https://huggingface.co/MaziyarPanahi/Qwen3-4B-GGUF/blob/main/Qwen3-4B.Q6_K.gguf',
          # "Model used : https://huggingface.co/MaziyarPanahi/Qwen3-4B-GGUF/blob/main/Qwen3-4B.Q6_K.gguf"
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 4B', 'format': 'Q6_K', 'params': 4.0})), 'llama.cpp'),
    (Case('uns6682', GH + 'unslothai/unsloth/issues/6682', 'model', None, None, FIXED,
          '/home/my/.cache/huggingface/hub/models--unsloth--gemma-4-E2B-it-GGUF/snapshots/'
          'ecc8b33b2c50598815e4b0f7cea6088e3ae7adb8/mmproj-F16.gguf',
          # the --mmproj path of the log's llama-server command: the projector, not Gemma 4 E2B at F16
          ('refuses', 'a multimodal projector')), 'llama.cpp'),
    # ---- Ollama ----
    (Case('mrviduus', CARTE, 'model', 'GTX 1650 Ti Mobile', '0.23.1', FIXED, 'gemma4:e2b',
          # "NVIDIA GTX 1650 Ti Mobile, 4 GB VRAM ... Ollama 0.23.1 ... Layers on GPU 35 / 36"
          ('reads', {'engine': 'ollama', 'model': 'Gemma 4 E2B', 'fits': False, 'warn': '35/36 layers'})), 'ollama'),
    (Case('o17246', GH + 'ollama/ollama/issues/17246', 'model', '11.3GiB', '0.32.1', FIXED,
          'qwen3.6:35b-a3b-coding-nvfp4',
          # "ollama run qwen3.6:35b-a3b-coding-nvfp4 ... model requires 20.4 GiB but only 11.3 GiB are available"
          # (macOS, Ollama 0.32.1): the MLX runner's check (x/mlxrunner/client.go)
          ('refuses', 'an Ollama tag of an MLX build')), 'ollama'),
    (Case('o17986', GH + 'ollama/ollama/issues/17986', 'model', None, None, FIXED, 'qwen3.8:27b-mlx',
          # "starting mlx runner subprocess model=qwen3.8:27b-mlx ... Model architecture
          # arch=Qwen3_5ForConditionalGeneration"
          ('refuses', 'qwen3.8:27b is the GGUF build')), 'ollama'),
    (Case('o17986b', GH + 'ollama/ollama/issues/17986', 'model', None, None, FIXED, 'qwen3.8:27b-mxfp8',
          # "I also initially reproduced a similar failure with: qwen3.8:27b-mxfp8": x/create's mxfp8 of the BF16
          # checkpoint, sized as Ollama's MLX runner loads it (engines/ollama/mlx_runner.py)
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.8 27B', 'format': 'ollama-mlx-mxfp8'})), 'ollama'),
    (Case('zed56511', GH + 'zed-industries/zed/issues/56511', 'model', None, None, RIGHT, 'qwen3.6:35b',
          # "Qwen3.6 (qwen3.6:35b) gives memory error but it works fine in ollama terminal"
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.6 35B-A3B'})), 'ollama'),
    (Case('ramaol', RAMA, 'model', None, None, RIGHT, 'ollama://mistral-nemo:latest',
          # `ramalama list`: "ollama://mistral-nemo:latest ... 6.59 GB"
          ('reads', {'engine': 'ollama', 'model': 'Mistral Nemo'})), 'ollama'),
    (Case('zed56511log', GH + 'zed-industries/zed/issues/56511', 'diag', None, None, RIGHT,
          'Failed to connect to Ollama API: 500 Internal Server Error {"error":"model requires more system memory '
          '(28.8 GiB) than is available (24.1 GiB)"}',
          ('reads', {'engine': 'ollama', 'stage': 'host_ram'})), None),
    (Case('o17246log', GH + 'ollama/ollama/issues/17246', 'diag', None, None, FIXED,
          'ollama run qwen3.6:35b-a3b-coding-nvfp4\nError: 500 Internal Server Error: model requires 20.4 GiB but '
          'only 11.3 GiB are available (after 512.0 MiB overhead)',
          # x/mlxrunner/client.go: the weights do not fit the memory the MLX runner may use
          ('reads', {'engine': 'ollama', 'stage': 'weights'})), None),
    # ---- MLX ----
    (Case('omlx1281', GH + 'jundot/omlx/issues/1281', 'model', 'M1 Max 64GB', None, FIXED,
          'mlx-community/Qwen3.6-35B-A3B-mxfp8',
          # "oMLX v0.3.8 ... serving mlx-community/Qwen3.6-35B-A3B-mxfp8 ... Mac Studio M1, 64GB": it loads and
          # serves (the crash is under a long prefill)
          ('reads', {'engine': 'mlx', 'model': 'Qwen3.6-35B-A3B', 'format': 'mxfp8'})), 'mlx'),
    (Case('mlxserve64', GH + 'ddalcu/mlx-serve/issues/64', 'model', None, None, RIGHT,
          'ddalcu/Qwen3.6-27B-4bit-MTP-MLX-Serve',
          # "try this one https://huggingface.co/ddalcu/Qwen3.6-27B-4bit-MTP-MLX-Serve It has MTP heads": a build
          # for mlx-serve the catalog does not hold, refused offline by name
          ('refuses', "unknown model 'ddalcu/Qwen3.6-27B-4bit-MTP-MLX-Serve'")), 'mlx'),
    (Case('mlxstudio78', GH + 'jjang-ai/mlxstudio/issues/78', 'model', 'M4 Max 64GB', None, RIGHT,
          'dealignai/Gemma-4-31B-JANG_4M-CRACK',
          # "Model: dealignai/Gemma-4-31B-JANG_4M-CRACK": JANG's own mixed quantization, which no name rule sizes
          ('refuses', "unknown model 'dealignai/Gemma-4-31B-JANG_4M-CRACK'")), 'mlx'),
    # ---- LM Studio ----
    (Case('lmsload', 'https://jmgirard.github.io/rlmstudio/reference/lms_load.html', 'model', None, None, RIGHT,
          'google/gemma-3-1b',
          # `lms_load("google/gemma-3-1b")`: LM Studio's key of Gemma 3 1B (its GGUF, on llama.cpp)
          ('reads', {'engine': 'llama.cpp', 'model': 'gemma-3-1b', 'params': 1.0})), 'lmstudio'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {
    'rec632dflt': "Nemotron-3-Super-120B-A12B-NVFP4 at vLLM's default --gpu-memory-utilization 0.92 on a DGX Spark "
                  "OOMs at startup (recipes#632: GB10's unified memory cannot give 0.92 of its total); oomkit plans the "
                  "GB10's 125,081 MiB as a card with all of it free and finds it fits (no measured figure of what the "
                  "Spark's OS holds to plan with)",
}


def check(c: Case) -> None:
    if c.kind == "diag":
        check_case(c)
    else:
        check_reading_case(c, ENGINE[c.id])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c.id for c in CASES}) == 30
    assert sum(c.status == STILL for c in CASES) == 1 and sum(c.status == FIXED for c in CASES) == 9
    assert sum(c.status == RIGHT for c in CASES) == 20
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- Ollama's MLX builds (model/names.py ollama_mlx_tag) ----

def test_an_ollama_mlx_import_is_refused_naming_the_gguf_tag():
    """"-mlx" is an import whose quantization the tag does not say (ollama#17050): refused, the GGUF tag named."""
    rc, _, err = run_cli("check", "qwen3.8:27b-mlx", "--engine", "ollama", "--vram", "24GiB")
    assert rc == 2 and "an Ollama tag of an MLX build" in err and "qwen3.8:27b is the GGUF build" in err, err


@pytest.mark.parametrize("tag,gguf", [("qwen3.5:2b-nvfp4", "qwen3.5:2b"), ("gemma4:e2b-nvfp4", "gemma4:e2b"),
                                      ("qwen3.8:27b-mxfp8", "qwen3.8:27b")])
def test_an_ollama_mlx_build_is_sized_for_its_runner_and_refused_elsewhere(tag, gguf):
    """The tags integration/reg_release_test.go and ollama#17986 pull: x/create's quantization of the BF16
    checkpoint, sized by Ollama's MLX runner (request.py refuses it to any other engine, naming --engine ollama)."""
    rc, out, err = run_cli("check", tag, "--engine", "ollama", "--gpu", "M4 Max 64GB", "--json")
    assert rc in (0, 1), err
    assert json.loads(out)["estimate"]["model"]["weights_format"] == "ollama-mlx-" + tag.rsplit("-", 1)[1]
    rc, _, err = run_cli("check", tag, "--engine", "llama.cpp", "--vram", "24GiB")
    assert rc == 2 and "only Ollama's MLX runner loads" in err and "--engine ollama" in err, err


@pytest.mark.parametrize("tag", ["qwen3:8b-q8_0", "gpt-oss:20b", "gemma3:12b-it-qat", "qwen3:30b-a3b-thinking-2507"])
def test_a_gguf_tag_is_still_read(tag):
    rc, out, err = run_cli("check", tag, "--engine", "ollama", "--vram", "24GiB", "--json")
    assert rc in (0, 1), err


# ---- a guide's placeholder (model/resolve.py) ----

@pytest.mark.parametrize("argv", [["estimate", "<model-path>"], ["estimate", "{{MODEL_NAME}}"],
                                  ["check", "--", "vllm", "serve", "<your-model>"],
                                  ["check", "--", "python3", "-m", "sglang.launch_server", "--model-path",
                                   "{{ model }}"]])
def test_a_placeholder_is_refused_as_one(argv):
    rc, _, err = run_cli(*argv, "--vram", "24GiB") if argv[0] == "estimate" else run_cli(
        argv[0], "--vram", "24GiB", *argv[1:])
    assert rc == 2 and "is a placeholder, as a guide writes one" in err, err


@pytest.mark.parametrize("ref", ["<Qwen/Qwen3-8B>", "<qwen3:8b>", "`Qwen/Qwen3-8B`"])
def test_a_name_in_brackets_or_backticks_is_still_read(ref):
    rc, out, err = run_cli("estimate", ref, "--vram", "24GiB", "--json")
    assert rc == 0 and json.loads(out)["model"]["name"] == "Qwen3 8B", err


# ---- a projector file is not the model (model/names.py is_projector_file) ----

@pytest.mark.parametrize("path", [
    "/home/my/.cache/huggingface/hub/models--unsloth--gemma-4-E2B-it-GGUF/snapshots/0/mmproj-F16.gguf",
    "~/.cache/llama.cpp/unsloth_gemma-4-E2B-it-GGUF_mmproj-F16.gguf",
    "./mmproj-Qwen3VL-4B-Instruct-F16.gguf"])
def test_a_projector_file_is_refused_as_the_projector(path):
    rc, _, err = run_cli("check", path, "--engine", "llama.cpp", "--vram", "24GiB")
    assert rc == 2 and "a multimodal projector" in err, err


def test_the_model_file_of_the_same_snapshot_is_still_read():
    rc, out, err = run_cli("check", "/home/my/.cache/huggingface/hub/models--unsloth--gemma-4-E2B-it-GGUF/snapshots/0/"
                           "gemma-4-E2B-it-Q4_K_M.gguf", "--engine", "llama.cpp", "--vram", "24GiB", "--json")
    assert rc in (0, 1), err
    assert json.loads(out)["estimate"]["model"]["weights_format"] == "Q4_K_M"


# ---- the GTX 1650 Ti (hardware/gpus.json) ----

@pytest.mark.parametrize("name", ["GTX 1650 Ti Mobile", "GTX 1650 Ti", "NVIDIA GeForce GTX 1650 Ti", "GTX 1650 Ti Max-Q"])
def test_the_gtx_1650_ti_is_a_4_gb_card(name):
    rc, out, err = run_cli("estimate", "Qwen/Qwen3-0.6B", "--gpu", name, "--json")
    assert rc in (0, 1), err
    assert [(d["name"], d["memory_bytes"] // 2**20) for d in json.loads(out)["devices"]] == [
        ("NVIDIA GeForce GTX 1650 Ti", 4096)]


# ---- MLX's floating-point modes (quant/hf_formats.py _MLX_FP_MODES) ----

@pytest.mark.parametrize("mode,bits_per_value", [("mxfp4", 4 + 8 / 32), ("mxfp8", 8 + 8 / 32), ("nvfp4", 4 + 8 / 16)])
def test_mlx_fp_modes_store_one_byte_scale_per_group(mode, bits_per_value):
    """mx.quantize's mxfp4 / mxfp8 / nvfp4 (mlx/backend/cuda/quantized dispatch_quant_types: e2m1 or e4m3 values, a
    ue8m0 scale per 32 or an e4m3 scale per 16, no biases): a 4096 x 4096 matrix holds bits_per_value x 2^24 / 8."""
    from oomkit.quant.hf_formats import linear_weight_bytes, parse_quantization_config

    fmt = parse_quantization_config({"quant_method": "mlx", "group_size": 32, "bits": 4, "mode": mode}, "bfloat16")
    assert linear_weight_bytes(fmt, 4096, 4096) == 4096 * 4096 * bits_per_value / 8


def test_plan_keeps_an_ollama_mlx_build_whole():
    """plan splits a model's :QUANT suffix (request.model_and_quant), but an MLX build's "-nvfp4" is its tag's: the
    plan sizes the build itself (was: "nvfp4: a Hugging Face checkpoint format ..." for the GGUF of qwen3.8:27b)."""
    rc, out, err = run_cli("plan", "qwen3.8:27b-nvfp4", "--engine", "ollama", "--gpu", "M4 Max 64GB", "--json")
    assert rc == 0, err
    assert "ollama run qwen3.8:27b-nvfp4" in out
