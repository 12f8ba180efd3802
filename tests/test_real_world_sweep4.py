"""Real users' input, fourth sweep: commands and error messages copied from public threads of 2024-2026 (each cited),
run through `oomkit check`, the command quoted as MODEL, `fit`, `plan` and `diagnose` the way the docs say, then
mutated (cut, words dropped, doubled, garbled). What they brought out: scripts pasted whole (`MODEL=...`, `export
VAR=...`, `cd` / `source` / `conda activate` lines before the command that reads `$MODEL`, `$((85 * 1024))`), `docker
exec` / `kubectl exec` / `hf jobs run` in front of the engine, the lines typed into `ollama run` (`/set parameter
num_ctx 1024`), an Ollama Modelfile or a vLLM config YAML pasted as MODEL, vLLM's dotted JSON options
(`--speculative_config.method mtp`), llama.cpp's `-sm tensor`, `ollama runner` lines copied from the server log,
ModelScope's `Qwen2___5` folders, SGLang's KTransformers experts (--kt-method), vLLM before 0.7.1 caching DeepSeek's
MLA as full K/V of every head, three ggml / Ollama messages diagnose did not know, and one crash (a name with a ':'
before its '/').

Measured (2026-12-05): 81 real inputs (63 commands, 4 texts pasted as MODEL, 14 error messages) from 73 public
threads and pages, run 270 ways;
27 answered wrong before (a wrong refusal or one for the wrong reason, a flag dropped without a word, a number the
thread contradicts, a message left unplaced): 23 are fixed here (FIXED), glm45-3 by the SGLang next-n draft sizing
that landed beside this sweep, recall43, lc24714 and mlx644b since (an abbreviation matched against the chosen
release's flags, engines/release_flags.resolve_abbreviations; a repo name's -MTP read as the model with its next-n
block, names._PACKAGING_WORDS; mlx-community's -MXFP4-Q8 read as mlx_lm.convert -q --q-bits 8 over the MXFP4
checkpoint, engines/mlx/weights.tensor_bytes), and none was still wrong; mlx98's Mac ran macOS 15.4 and
oomkit's Metal working set follows the macOS release, so its --gpu names it ("M3 Ultra 512GB (macOS 15)": 3/4 of
512 GiB, 412.32 GB, where 377 GB is past 0.9 of it and mlx_lm warns). No crash in the 270
runs; one in 4,219 mutations of fit / plan / the quoted form (names.ollama_namespaced, fixed; none in the 4,560 of
the final run), none in 6,264 mutated check runs.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.engines.shell_words import split_command
from oomkit.errors import OomkitError
from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    hardware_args,
    mutations,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    one_line_or_answer,
    run_cli,
    sweep_tests,
)

# Not verbatim: v17649 and v4650 join the image the thread names ("vllm/vllm-openai:v0.8.5" in its compose file; "the
# vllm openai docker container v0.5.4") with the engine arguments it lists; dockerode811 is the container's Path and
# Args; gen1 is the compose command list without its fork's --kv-cache-dtype turboquant_k8v4 and with the image's
# `vllm serve` in front; v28923 is the Kubernetes command and args, cut before the manifest's truncated last flag;
# lc26185 stops where the stored comment is cut. Everything else is as posted (comments and blank lines included).
CASES = [
    Case('lc22616', 'https://github.com/ggml-org/llama.cpp/pull/22616', 'cmd', '2x RTX PRO 6000', None, FIXED,
         'llama-server -hf unsloth/Qwen3.5-397B-A17B-GGUF:Q3_K_XL --port ${PORT} --jinja --temp 1.0 --top-p 0.95 --top-k 20 --min_p 0 --presence-penalty 1.0 --repeat-penalty 1.0 --split-mode tensor --no-mmproj --ctx-size 64000',
         ('refuses', "-sm tensor (llama.cpp's tensor parallelism")),
    Case('v33155a', 'https://github.com/vllm-project/vllm/issues/33155', 'cmd', 'H100', '0.11.2', RIGHT,
         'model_name="openai/gpt-oss-120b"\nmax_model_len=$((85 * 1024))\n\nVLLM_LOGGING_LEVEL=DEBUG CUDA_VISIBLE_DEVICES=1 uv run vllm serve \\\n    $model_name \\\n    --host 0.0.0.0 --port $port \\\n    --gpu-memory-utilization 0.97 \\\n    -O3 \\\n    --enable-chunked-prefill --enable-prefix-caching \\\n    --async-scheduling \\\n    --max_num_seqs 100 \\\n    --tool-call-parser openai --enable-auto-tool-choice \\\n    --tensor-parallel-size 1 --max-model-len $max_model_len >> "$LOG_FILE" 2>&1 &',
         ('reads', {'engine': 'vllm', 'model': 'gpt-oss 120B', 'ctx': 87040})),
    Case('v33155script', 'https://github.com/vllm-project/vllm/issues/33155', 'cmd', 'H100', '0.14.1', FIXED,
         'model_name="openai/gpt-oss-120b"\nmax_model_len=$((5 * 1024)) \n\nCUDA_VISIBLE_DEVICES=1 uv run vllm serve \\\n    $model_name \\\n    --host 0.0.0.0 --port $port \\\n    --gpu-memory-utilization 0.97 \\\n    -O3 \\\n    --enable-chunked-prefill --enable-prefix-caching \\\n    --async-scheduling \\\n    --max_num_seqs 1 \\\n    --tool-call-parser openai --enable-auto-tool-choice \\\n    --tensor-parallel-size 1 --max-model-len $max_model_len >> "$LOG_FILE" 2>&1 &',
         ('reads', {'engine': 'vllm', 'model': 'gpt-oss 120B', 'ctx': 5120})),
    Case('v2140', 'https://github.com/vllm-project/vllm/issues/2140', 'cmd', '2080 Ti 22GB', '0.4.0', RIGHT,
         'python -m vllm.entrypoints.openai.api_server --model /home/jovyan/qwen/Qwen2-7B-Instruct  --served-model-name Qwen2-7B-Instruct --max-model-len=512 --dtype=float --enforce-eager',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2 7B', 'ctx': 512, 'fits': False, 'warn': 'CUDA out of memory while loading the model'})),
    Case('v13267', 'https://github.com/vllm-project/vllm/issues/13267', 'cmd', '8x H100', '0.7.2', RIGHT,
         'python -m vllm.entrypoints.openai.api_server --host 0.0.0.0 --port 12345 --max-model-len 65536 --trust-remote-code --tensor-parallel-size 8 --quantization moe_wna16 --gpu-memory-utilization 0.97 --kv-cache-dtype fp8_e5m2 --calculate-kv-scales --served-model-name deepseek-reasoner --model cognitivecomputations/DeepSeek-R1-AWQ',
         ('reads', {'engine': 'vllm', 'model': 'DeepSeek-R1-AWQ', 'ctx': 65536})),
    Case('glm45-3', 'https://github.com/zai-org/GLM-4.5/issues/3', 'cmd', '4x H100', None, RIGHT,
         'python3 -m sglang.launch_server \\\n  --model-path zai-org/GLM-4.5-Air-FP8 \\\n  --tp-size 4 \\\n  --tool-call-parser glm45  \\\n  --reasoning-parser glm45  \\\n  --speculative-algorithm EAGLE \\\n  --speculative-num-steps 3  \\\n  --speculative-eagle-topk 1  \\\n  --speculative-num-draft-tokens 4 \\\n  --mem-fraction-static 0.7 \\\n  --disable-shared-experts-fusion \\\n  --served-model-name glm-4.5-air-fp8 \\\n  --host 0.0.0.0 \\\n  --port 8000',
         ('reads', {'engine': 'sglang', 'model': 'GLM-4.5-Air-FP8'})),
    Case('lc19308', 'https://github.com/ggml-org/llama.cpp/issues/19308', 'cmd', '3x RTX PRO 6000', 'b7929', RIGHT,
         './llama-server -hf unsloth/Llama-4-Scout-17B-16E-Instruct-GGUF:Q4_K_XL -np 128 -c 262144 --cache-ram 0 --log-verbosity 3 --port 8080',
         ('reads', {'engine': 'llama.cpp', 'model': 'Llama 4 Scout', 'ctx': 262144})),
    Case('lc19169', 'https://github.com/ggml-org/llama.cpp/issues/19169', 'cmd', 'RTX 3060 Laptop', 'b7865', RIGHT,
         './llama-server --model ../GLM-4.7-Flash-UD-Q4_K_XL.gguf --port 10101 --threads 8 --n-gpu-layers 8 --ctx-size 8192 --temp 1.0 --top-p 0.95 --repeat-penalty 1.0 --min-p 0.01  --log-timestamps --jinja',
         ('refuses', 'its name says zai-org/GLM-4.7-Flash:UD-Q4_K_XL')),
    Case('gen1', 'https://github.com/Sandermage/genesis-vllm-patches/issues/1', 'cmd', 'RTX 5090', None, RIGHT,
         'vllm serve /models/cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit --gpu-memory-utilization 0.95 --max-model-len -1 --max-num-seqs 12 --reasoning-parser qwen3 --enable-auto-tool-choice --enable-prefix-caching --tool-call-parser qwen3_coder --served-model-name Qwen3.5-27B --trust-remote-code --async-scheduling',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.6-35B-A3B-AWQ-4bit', 'ctx': 262144})),
    Case('v17649', 'https://github.com/vllm-project/vllm/issues/17649', 'cmd', 'RTX 3090', '0.8.5', RIGHT,
         'docker run --gpus all vllm/vllm-openai:v0.8.5 --model JunHowie/Qwen3-14B-GPTQ-Int4 --max-model-len 40960',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-14B-GPTQ-Int4', 'ctx': 40960})),
    Case('v17739', 'https://github.com/vllm-project/vllm/issues/17739', 'cmd', 'RTX 3090 Ti', None, RIGHT,
         'sudo docker run --ipc=host --log-opt max-size=10m --log-opt max-file=1 --rm -it --gpus \'"device=0"\' --env "VLLM_USE_MODELSCOPE=True" --env "VLLM_USE_V1=0" -p 8000:8000 --mount type=bind,source=/home/me/.cache,target=/root/.cache vllm/vllm-openai:v0.8.5 --model swift/Qwen3-30B-A3B-AWQ --max-model-len 4000 --dtype half --gpu-memory-utilization 0.92 --disable-log-requests --no-enable-prefix-caching -q awq --tensor-parallel-size 1',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-30B-A3B-AWQ', 'ctx': 4000})),
    Case('dockerode811', 'https://github.com/apocas/dockerode/issues/811', 'cmd', '2x RTX 3090', '0.9.1', RIGHT,
         'python3 -m vllm.entrypoints.openai.api_server --max-model-len 1024 --gpu-memory-utilization 0.95 --max-num-seqs 1 --tensor-parallel-size 2 --model deepseek-ai/DeepSeek-R1-Distill-Llama-8B',
         ('reads', {'engine': 'vllm', 'model': 'DeepSeek-R1-Distill-Llama-8B', 'ctx': 1024})),
    Case('uns4971', 'https://github.com/unslothai/unsloth/issues/4971', 'cmd', 'RTX 4090', None, RIGHT,
         '/home/yk/.unsloth/llama.cpp/llama-server -m /mnt/Data/lmstudio/models/unsloth/gemma-4-26B-A4B-it-GGUF/gemma-4-26B-A4B-it-UD-IQ4_NL.gguf --port 58769 -c 8960 --parallel 1 --flash-attn on -ngl -1 --jinja --cache-type-k q8_0 --cache-type-v q8_0 --spec-type ngram-mod --spec-ngram-size-n 24 --draft-min 48 --draft-max 64 --chat-template-kwargs {\\"enable_thinking\\": true}',
         ('refuses', 'invalid argument: true}')),
    Case('ol9876', 'https://github.com/ollama/ollama/issues/9876', 'cmd', 'RTX 4090', '0.6.0', FIXED,
         'ollama run deepseek-r1:32b\n/set parameter num_ctx 1024',
         ('reads', {'engine': 'ollama', 'model': 'DeepSeek-R1-Distill-Qwen 32B', 'n_ctx': 4096})),
    Case('mlx98', 'https://github.com/ml-explore/mlx-lm/issues/98', 'cmd', 'M3 Ultra 512GB (macOS 15)', None, FIXED,
         'mlx_lm.server --model mlx-community/DeepSeek-v3-0324-4bit --host 192.168.100.101 --log-level DEBUG',
         ('reads', {'engine': 'mlx', 'model': 'DeepSeek V3 0324', 'warn': '[WARNING] Generating with a model that requires'})),
    Case('ol7673', 'https://github.com/ollama/ollama/issues/7673', 'cmd', '6GiB', None, FIXED,
         'export GGML_CUDA_ENABLE_UNIFIED_MEMORY=1\nexport OLLAMA_GPU_OVERHEAD=0\nollama serve',
         ('refuses', 'the ollama serve command names no model')),
    Case('ol12927', 'https://github.com/ollama/ollama/issues/12927', 'model', 'H100', None, FIXED,
         'FROM /usr/share/ollama/.ollama/models/sqlcoder-7b-2.fp16.gguf\nPARAMETER num_thread 8\nPARAMETER num_ctx 4096\nPARAMETER top_k 10\nPARAMETER top_p 0.3',
         ('refuses', 'give `oomkit check /usr/share/ollama/.ollama/models/sqlcoder-7b-2.fp16.gguf --engine ollama --num-ctx 4096`')),
    Case('ol10974', 'https://github.com/ollama/ollama/issues/10974', 'model', '32GiB', None, FIXED,
         'FROM llama3.2:3b\nPARAMETER num_ctx 32768',
         ('refuses', 'give `oomkit check llama3.2:3b --engine ollama --num-ctx 32768`')),
    Case('d-xorb1202', 'https://github.com/xorbitsai/inference/issues/1202', 'diag', None, None, RIGHT,
         'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 41984.00 MiB on device 0: cudaMalloc failed: out of memory\nllama_kv_cache_init: failed to allocate buffer for kv cache\nllama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache',
         ('diagnoses', {'engine': 'llama.cpp', 'stage': 'kv_cache'})),
    Case('d-ol10588', 'https://github.com/ollama/ollama/issues/10588', 'diag', None, None, FIXED,
         'source=memory.go:194 msg="gpu has too little memory to allocate any layers" id=GPU-152ad784-f966-afea-c7eb-3ef56b5c7522 library=cuda variant=v12 compute=8.9 driver=12.8 name="NVIDIA RTX 2000 Ada Generation Laptop GPU" total="8.0 GiB" available="6.9 GiB" minimum_memory=479199232 layer_size="375.6 MiB" gpu_zer_overhead="0 B" partial_offload="6.0 GiB" full_offload="6.0 GiB"',
         ('diagnoses', {'engine': 'ollama', 'stage': 'compute'})),
    Case('d-lc24758', 'https://github.com/ggml-org/llama.cpp/issues/24758', 'diag', None, None, RIGHT,
         '0.05.672.381 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 2611253376\n0.05.672.381 E graph_reserve: failed to allocate compute buffers\n0.05.672.424 E llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers',
         ('diagnoses', {'engine': 'llama.cpp', 'stage': 'compute'})),
    Case('d-lsg7', 'https://github.com/guqiong96/Lsglang/issues/7', 'diag', None, None, RIGHT,
         '[2026-04-16 01:02:09 TP1] Failed to initialize lk_moe: CUDA out of memory. Tried to allocate 24.00 MiB. GPU 1 has a total capacity of 47.37 GiB of                              which 4.31 MiB is free. Including non-PyTorch memory, this process has 47.35 GiB memory in use. Of the allocated memory 45.63 GiB is allocated by P                             yTorch, with 24.00 MiB allocated in private pools (e.g., CUDA Graphs), and 1.10 GiB is reserved by PyTorch but unallocated.',
         ('diagnoses', {'engine': 'pytorch', 'stage': 'fragmentation'})),
    Case('recipes335', 'https://github.com/vllm-project/recipes/pull/335', 'cmd', '8x H200', None, RIGHT,
         'vllm serve Qwen/Qwen3.6-35B-A3B \\\n  --tensor-parallel-size 8 \\\n  --max-model-len 262144 \\\n  --reasoning-parser qwen3',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.6 35B-A3B', 'ctx': 262144})),
    Case('qvl1489', 'https://github.com/QwenLM/Qwen3-VL/issues/1489', 'cmd', '8x A100 80GB', None, RIGHT,
         'python -m vllm.entrypoints.openai.api_server \\\n  --model Qwen/Qwen3-VL-235B-A22B-Instruct\\\n  --served-model-name Qwen/Qwen3-VL-235B-A22B-Instruct \\\n  --tensor-parallel-size 8 \\\n  --mm-encoder-tp-mode data \\\n  --enable-expert-parallel \\\n  --host 0.0.0.0 \\\n  --port 22002 \\\n  --dtype bfloat16 \\\n  --gpu-memory-utilization 0.70 \\\n  --quantization fp8 \\\n  --distributed-executor-backend mp',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL 235B-A22B'})),
    Case('qvl1492', 'https://github.com/QwenLM/Qwen3-VL/issues/1492', 'cmd', '8x H100', None, RIGHT,
         'python -m vllm.entrypoints.openai.api_server \\\n  --model Qwen/Qwen3-VL-235B-A22B-Instruct\\\n  --served-model-name Qwen/Qwen3-VL-235B-A22B-Instruct \\\n  --tensor-parallel-size 8 \\\n  --mm-encoder-tp-mode data \\\n  --enable-expert-paralle \\\n  --host 0.0.0.0 \\\n  --port 22002 \\\n  --dtype bfloat16 \\\n  --gpu-memory-utilization 0.70 \\\n  --quantization fp8 \\\n  --distributed-executor-backend mp',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL 235B-A22B'})),
    Case('spark237', 'https://github.com/eugr/spark-vllm-docker/issues/237', 'cmd', '2x DGX Spark', None, RIGHT,
         'vllm serve /home/lzrcb/ai-mode/Qwen3.6-35B-A3B-FP8 \\\n    --speculative-config \'{"method": "qwen3_next_mtp", "num_speculative_tokens": 5}\' \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 262144 \\\n    --max-num-batched-tokens 131072 \\\n    --enable-chunked-prefill \\\n    --max-num-seqs 16 \\\n    --gpu-memory-utilization 0.7 \\\n    --quantization fp8 \\\n    --load-format fastsafetensors \\\n    --attention-backend flash_attn \\\n    --enable-prefix-caching \\\n    --enable-auto-tool-choice \\\n    --tool-call-parser qwen3_coder \\\n    --reasoning-parser qwen3 \\\n    --served-model-name lzrcb \\\n    --port 8000 --host 0.0.0.0',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.6-35B-A3B-FP8', 'ctx': 262144})),
    Case('ascend8818', 'https://github.com/vllm-project/vllm-ascend/issues/8818', 'cmd', 'H100', None, FIXED,
         'export VLLM_USE_MODELSCOPE=True\n# Optional: pin to a specific NPU device.\nexport ASCEND_RT_VISIBLE_DEVICES=0\nexport VLLM_ASCEND_ENABLE_NZ=0\nexport MODEL_PATH=vllm-ascend/Qwen3-8B-W4A8\nvllm serve ${MODEL_PATH} --served-model-name "qwen3-8b-w4a8" --max-model-len 4096 --quantization ascend',
         ('refuses', "unknown model 'vllm-ascend/Qwen3-8B-W4A8'")),
    Case('xorb4112', 'https://github.com/xorbitsai/inference/pull/4112', 'cmd', '2x A100 80GB', None, RIGHT,
         'vllm serve \\\n    ./Qwen3-VL-235B-A22B-Instruct-AWQ \\\n    --enable-expert-parallel \\\n    --max-model-len 32768 \\\n    --tensor-parallel-size 2',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-235B-A22B-Instruct-AWQ', 'ctx': 32768})),
    Case('sg2587', 'https://github.com/sgl-project/sglang/issues/2587', 'cmd', '8x H200', None, RIGHT,
         'docker run --gpus all \\\n    --shm-size 32g \\\n    -p 30000:30000 \\\n    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n    --env “HF_TOKEN=<secret>” \\\n    --ipc=host \\\n    lmsysorg/sglang:latest \\\n    python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3-Base --enable-dp-attention --tp 8 --trust-remote-code --port 30000',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3 Base'})),
    Case('sg2591', 'https://github.com/sgl-project/sglang/issues/2591', 'cmd', '4x H100', None, RIGHT,
         'python3 -m sglang.launch_server --model-path /models/dsv3 --tp 14 --dist-init-addr 10.21.99.116:5000 --nnodes 4 --node-rank 0 --trust-remote-code --enable-torch-compile --host 0.0.0.0 --port 30000 --grammar-backend xgrammar',
         ('refuses', "unknown model '/models/dsv3'")),
    Case('sg9590', 'https://github.com/sgl-project/sglang/issues/9590', 'cmd', '8x H20', '0.4.10.post2', RIGHT,
         'python -m sglang.launch_server \\\n    --model /deepseek/deepseek-ai/DeepSeek-V3.1/ \\\n    --host 127.0.0.1 \\\n    --served-model-name mozz \\\n    --port 9122 \\\n    --tensor-parallel-size 8 \\\n    --mem-fraction-static 0.88 \\\n    --dtype auto \\\n    --max-running-requests 12 \\\n    --trust-remote-code \\\n    --context-length 15000',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-V3.1', 'ctx': 15000})),
    Case('hip66', 'https://github.com/DeepAuto-AI/hip-attention/pull/66', 'cmd', '4x A100 40GB', None, FIXED,
         'export SRT_PORT=8921;\nexport CONTEXT_LENGTH=1048576;\nexport CHUNK_SIZE=32768;\nexport SRT_MODEL_PATH="Qwen/QwQ-32B";\nexport SRT_SERVED_MODEL_NAME="deepauto/qwq-32b-1m-ctx";\n\nHIP_HEAD_REDUCE=2 \\\nPASSKEY_LEN=1000 \\\npython -m sglang.launch_server \\\n--host 0.0.0.0 \\\n--port $SRT_PORT \\\n--model-path $SRT_MODEL_PATH \\\n--served-model-name $SRT_SERVED_MODEL_NAME \\\n--kv-cache-dtype auto \\\n--tp-size 4 \\\n--chunked-prefill-size $CHUNK_SIZE \\\n--max-prefill-tokens $CHUNK_SIZE \\\n--cuda-graph-bs 1 2 4 8 16 24 32  \\\n--context-length $CONTEXT_LENGTH \\\n--max-total-tokens $CONTEXT_LENGTH \\\n--max-running-requests 32 \\\n--attention-backend hip_attention \\\n--hip-attention-config-path ./configs/llama33_70b_1m.json \\\n--enable-hip-kv-cache-offload \\\n--hip-max-sa-cache-size 8000 \\\n--hip-max-mask-cache-size 64000',
         ('refuses', 'unrecognized arguments: --hip-attention-config-path')),
    Case('ik693', 'https://github.com/ikawrakow/ik_llama.cpp/issues/693', 'cmd', 'RTX 3090', None, RIGHT,
         'CUDA_VISIBLE_DEVICES="0" ./bin/llama-server \\\n  --model "/home/gopi/gpt-oss-120b-mxfp4-00001-of-00003.gguf" \\\n  --ctx-size 101072 \\\n  -ngl 99 \\\n  --override-tensor ".*_exps\\..*=CPU" \\\n  --override-tensor ".*\\.ffn_.*_exps.*=CPU" \\\n  --threads 28 \\\n  --threads-batch 28 \\\n  --host 127.0.0.1 \\\n  -fa \\\n  -ser 30,1 \\\n  -fmoe \\\n  --jinja \\\n  --temp 0.6 \\\n  --top-p 1.0 \\\n  --chat-template-kwargs \'{"reasoning_effort": "high"}\' \\\n  --port 8080',
         ('refuses', 'no such file: /home/gopi/gpt-oss-120b-mxfp4-00001-of-00003.gguf')),
    Case('froggeric', 'https://huggingface-proxy-6ci.pages.dev/froggeric/Qwen3.6-27B-MTP-GGUF', 'cmd', 'M4 Max 48GB', None, RIGHT,
         'llama-server -m Qwen3.6-27B-Q5_K_M-mtp.gguf \\\n  --spec-type draft-mtp --spec-draft-n-max 3 \\\n  --cache-type-k q8_0 --cache-type-v q8_0 \\\n  -np 1 -c 262144 --temp 0.7 --top-k 20 -ngl 99 --port 8081',
         ('refuses', 'no such file: Qwen3.6-27B-Q5_K_M-mtp.gguf')),
    Case('aguea', 'https://asia.aguea.com/above_spec', 'cmd', '2x RTX 3090', None, RIGHT,
         './llama-server \\\n-m Qwen3.6-27B-Q4_K_M.gguf \\\n-ngl 99 --split-mode layer --tensor-split 58,42 \\\n-c 102400 \\\n-fa on -ctk q4_0 -ctv q4_0 \\\n--spec-type draft-mtp --spec-draft-n-max 3 --spec-draft-p-min 0.75 \\\n-ub 256 \\\n-np 1 --jinja -t 8 \\\n--host 127.0.0.1 --port 8080',
         ('refuses', 'its name says Qwen/Qwen3.6-27B:Q4_K_M')),
    Case('hfblog3432', 'https://github.com/huggingface/blog/pull/3432', 'cmd', '2x H200', None, FIXED,
         'hf jobs run --flavor h200x2 --expose 8000 --timeout 2h \\\n  vllm/vllm-openai:latest \\\n  vllm serve Qwen/Qwen3.5-122B-A10B \\\n  --host 0.0.0.0 --port 8000 --tensor-parallel-size 2 \\\n  --max-model-len 32768 --max-num-seqs 256',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.5 122B-A10B', 'ctx': 32768})),
    Case('gpustack3835', 'https://github.com/gpustack/gpustack/issues/3835', 'cmd', '4x RTX A5000', '0.11.2', RIGHT,
         'vllm serve /var/lib/gpustack/cache/huggingface/openai/gpt-oss-120b --max-model-len 8192 --tensor-parallel-size 2 --pipeline-parallel-size 2 --distributed-executor-backend ray --max-model-len=32768 --tool-call-parser=openai --enable-auto-tool-choice --async-scheduling --host 192.168.8.141 --port 40044 --served-model-name',
         ('refuses', 'argument --served-model-name: expected at least one argument')),
    Case('nomad675', 'https://github.com/Crosstalk-Solutions/project-nomad/issues/675', 'cmd', 'RTX 3090 Ti', None, RIGHT,
         'docker run -d \\\n  --name nomad_ollama \\\n  --restart unless-stopped \\\n  --network project-nomad_default \\\n  --runtime nvidia \\\n  -e OLLAMA_NO_CLOUD=1 \\\n  -e OLLAMA_FLASH_ATTENTION=1 \\\n  -e OLLAMA_HOST=0.0.0.0:11434 \\\n  -e OLLAMA_CONTEXT_LENGTH=32768 \\\n  -e NVIDIA_VISIBLE_DEVICES=all \\\n  -e NVIDIA_DRIVER_CAPABILITIES=compute,utility \\\n  -p 11434:11434 \\\n  -v /opt/project-nomad/storage/ollama:/root/.ollama \\\n  ollama/ollama:0.20.2 \\\n  serve',
         ('refuses', 'the ollama serve command names no model')),
    Case('nomad675b', 'https://github.com/Crosstalk-Solutions/project-nomad/issues/675', 'cmd', 'RTX 3090 Ti', None, FIXED,
         'docker exec -it nomad_ollama ollama run --verbose gemma4:26b "I am going to paste a long text and I want you to summarize it."',
         ('reads', {'engine': 'ollama', 'model': 'Gemma 4 26B-A4B'})),
    Case('ol4530', 'https://github.com/ollama/ollama/issues/4530', 'cmd', 'RTX 4090', None, RIGHT,
         'docker run -d --gpus=all -v ollama:/root/.ollama -p 11434:11434 -e OLLAMA_NUM_PARALLEL=10  --name ollama ollama/ollama',
         ('refuses', 'the ollama serve command names no model')),
    Case('lc26185', 'https://github.com/ggml-org/llama.cpp/pull/26185', 'cmd', '2x RTX PRO 6000', None, FIXED,
         'MODEL_NAME="Kimi-K3"\nMODEL_FILE="${HOME}/models/gguf/Kimi-K3-MXFP4.gguf"\nJINJA_FILE="${HOME}/models/${MODEL_NAME}.jinja"\nALIAS="$(hostname):${MODEL_NAME}"\n\nexport GGML_OP_OFFLOAD_MIN_BATCH=3584\n\nexport CUDA_VISIBLE_DEVICES=0,1\n~/llama.cpp/build/bin/llama-server \\\n    --host $(hostname -I) \\\n    --port "$PORT_NUMBER" \\\n    --alias "$ALIAS" \\\n    --model "$MODEL_FILE" \\\n    --jinja \\\n    --chat-template-file "$JINJA_FILE" \\\n    --n-gpu-layers 99 \\\n    --flash-attn on \\\n    --numa distribute \\\n    --load-mode mmap \\\n    --threads "$(nproc)" \\\n    --override-tensor "exps=CPU" \\\n    --ctx_size 131072 \\\n    --parallel 1 \\\n    --no-cont-batching \\\n    --temp 1.0 \\\n    --top-p 0.95 \\\n    --min-p 0.01',
         ('refuses', 'its name says moonshotai/Kimi-K3:MXFP4')),
    Case('lc20490', 'https://github.com/ggml-org/llama.cpp/issues/20490', 'cmd', 'RTX 3050 8GB', 'b8301', RIGHT,
         '~/tools/llama-b8301-vulkan/bin/llama-server -m Qwen3-Coder-Next-UD-Q4_K_M.gguf --ctx-size 32768 -ngl 0 -ot ".ffn_.*_exps.=CPU" --jinja --temp 1.0 --top-p 0.95 --min-p 0.01 --top-k 40 --repeat-penalty 1.05 --cpu-moe',
         ('refuses', 'its name says Qwen/Qwen3-Coder-Next:UD-Q4_K_M')),
    Case('lc14642', 'https://github.com/ggml-org/llama.cpp/issues/14642', 'cmd', 'RTX PRO 6000', None, FIXED,
         './build/bin/llama-batched-bench \\\n    --model /data/Kimi-K2-Instruct-GGUF/UD-Q4_K_XL/Kimi-K2-Instruct-UD-Q4_K_XL-00001-of-00013.gguf \\\n    --numa numactl \\\n    --threads 32 \\\n    --ctx-size 131072 \\\n    --n-gpu-layers 62 \\\n    -ot "blk\\.(3|4|5|6|7|8)\\.ffn_.*=CUDA0" \\\n    -ot exps=CPU \\\n    -ub 4096 -b 4096 \\\n    --seed 3407 \\\n    --temp 0.6 \\\n    --min-p 0.01 \\\n    --flash-attn \\\n    -npp 4096 \\\n    -ntg 1024 \\\n    -npl 1',
         ('refuses', 'llama-batched-bench is a llama.cpp program oomkit does not read')),
    Case('recipes509', 'https://github.com/vllm-project/recipes/pull/509', 'cmd', '4x B200', '0.22.0', FIXED,
         'export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1\n\nvllm serve /lustre/fsw/coreai_prod_infbench/common/cache/hub/models--nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4/snapshots/de9a6761980f24b8d05a3db1017784c43fcacf38/ \\\n  --served-model-name nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B \\\n  --host 0.0.0.0 \\\n  --port 8000 \\\n  --trust-remote-code \\\n  --tensor-parallel-size 4 \\\n  --kv-cache-dtype fp8 \\\n  --max-num-seqs 16 \\\n  --max-model-len 262144 \\\n  --gpu-memory-utilization 0.90 \\\n  --max-num-batched-tokens 32768 \\\n  --enable-flashinfer-autotune \\\n  --async-scheduling \\\n  --speculative_config.method mtp \\\n  --speculative_config.num_speculative_tokens 5 \\\n  --mamba-backend triton \\\n  --mamba-ssm-cache-dtype float32 \\\n  --reasoning-parser nemotron_v3 \\\n  --enable-auto-tool-choice \\\n  --tool-call-parser qwen3_coder',
         ('reads', {'engine': 'vllm', 'model': 'NVIDIA-Nemotron-3-Ultra-550B-A55B', 'ctx': 262144})),
    Case('d-sg5576', 'https://github.com/sgl-project/sglang/issues/5576', 'diag', None, None, RIGHT,
         'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 226.00 MiB. GPU 0 has a total capacity of 15.58 GiB of which 71.25 MiB is free. Including non-PyTorch memory, this process has 13.94 GiB memory in use. Of the allocated memory 13.64 GiB is allocated by PyTorch, and 67.23 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n\n[2025-04-20 16:41:57] Received sigquit from a child process. It usually means the child failed.',
         ('diagnoses', {'engine': 'pytorch', 'stage': 'unknown'})),
    Case('d-qvl26', 'https://github.com/QwenLM/Qwen-VL/issues/26', 'diag', None, None, RIGHT,
         '发生异常: OutOfMemoryError\nCUDA out of memory. Tried to allocate 26.00 MiB (GPU 0; 15.99 GiB total capacity; 15.09 GiB already allocated; 0 bytes free; 15.14 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n  File "D:\\Python\\Qwen-VL\\debug.py", line 8, in <module>\n    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen-VL-Chat", device_map="cuda", trust_remote_code=True, bf16=True).eval()\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB (GPU 0; 15.99 GiB total capacity; 15.09 GiB already allocated; 0 bytes free; 15.14 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF',
         ('diagnoses', {'engine': 'pytorch', 'stage': 'weights'})),
    Case('m-qvl26', 'https://github.com/QwenLM/Qwen-VL/issues/26', 'model', '16GiB', None, RIGHT,
         'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen-VL-Chat", device_map="cuda", trust_remote_code=True, bf16=True).eval()',
         ('refuses', 'give `oomkit check Qwen/Qwen-VL-Chat --engine transformers --device-map cuda`')),
    Case('d-strix65', 'https://github.com/kyuz0/amd-strix-halo-toolboxes/pull/65', 'diag', None, None, RIGHT,
         'Segmentation fault         (core dumped) llama-cli --no-mmap -ngl 999 -fa 1 -m models/qwen3-coder-30B-A3B/BF16/Qwen3-Coder-30B-A3B-Instruct-BF16-00001-of-00002.gguf -p "Write a Strix Halo toolkit haiku."',
         ('diagnoses', {'engine': None, 'stage': 'unknown'})),
    Case('v8879', 'https://github.com/vllm-project/vllm/issues/8879', 'cmd', '4x A10', '0.8.3', RIGHT,
         'vllm serve  unsloth/Llama-3.2-11B-Vision-Instruct  --tensor-parallel-size 4   --enforce-eager --max-num-seqs 16',
         ('reads', {'engine': 'vllm', 'model': 'Llama-3.2-11B-Vision-Instruct'})),
    Case('ol9934', 'https://github.com/ollama/ollama/issues/9934', 'cmd', 'RTX 4090', '0.6.2', RIGHT,
         'OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ./ollama serve',
         ('refuses', 'the ./ollama serve command names no model')),
    Case('v16749', 'https://github.com/vllm-project/vllm/issues/16749', 'cmd', '8x A100 40GB', '0.8.4', RIGHT,
         'CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve /data/ps/pretrained_model/OpenGVLab/InternVL3-78B/ --dtype bfloat16 --port 8009 --trust-remote-c\node --served-model-name qwen2vl --tensor-parallel-size 4 --gpu-memory-utilization 0.95 --max-num-seqs 2 --max-model-len 4096 --limit-mm-per-prompt image=1,video=0 --mm_processo\nr_kwargs \'{"max_pixels":1024}\' --enforce-eager',
         # vLLM 0.8.4's own parser reads --mm-processo as --mm-processor-kwargs (its one flag so spelled), whose
         # JSON value is then the line's 'r_kwargs' (sweep 5 matches abbreviations against the release given)
         ('refuses', "argument --mm-processor-kwargs: invalid loads value: 'r_kwargs'")),
    Case('apx', 'https://www.1apx.com/apps/r/systems/portal/article-display?p2_post_id=101362324712860824141692646759245841255', 'cmd', 'H100', None, RIGHT,
         '/usr/local/bin/llama-server \\\n  --device CUDA0 \\\n  --model /usr/local/models/openai/gpt-oss-120b-mxfp4-00001-of-00003.gguf \\\n  --host 0.0.0.0 --port 10000 \\\n  --n-gpu-layers 99 \\\n  --ctx-size 16384 \\\n  --batch-size 1024 \\\n  --ubatch-size 256 \\\n  --no-mmap',
         ('refuses', 'its name says openai/gpt-oss-120b:MXFP4')),
    Case('kimivl54', 'https://github.com/MoonshotAI/Kimi-VL/issues/54', 'cmd', '8x A100 80GB', None, RIGHT,
         'vllm serve /root/model/kimi --served-model-name kimi-vl-thinking-2506 --trust-remote-code --tensor-parallel-size 8 --max-num-batched-tokens 32768 --max-model-len 32768 --limit-mm-per-prompt image=64',
         ('refuses', "unknown model '/root/model/kimi'")),
    Case('d-kimivl54', 'https://github.com/MoonshotAI/Kimi-VL/issues/54', 'diag', None, None, RIGHT,
         "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 1029.51 GiB. GPU 0 has a total capacity of 79.35 GiB of which 19.23 GiB is free. Process 145882 has 60.12 GiB memory in use. Of the allocated memory 58.52 GiB is allocated by PyTorch, and 310.01 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)', please check the stack trace above for the root cause",
         ('diagnoses', {'engine': 'pytorch', 'stage': 'buffer_limit'})),
    Case('v28923', 'https://github.com/vllm-project/vllm/issues/28923', 'cmd', '4x MI300X', '0.11.1', RIGHT,
         "/bin/sh -c 'python3 -m vllm.entrypoints.openai.api_server \\\n  --port 8080 \\\n  --served-model-name kimi-k2 \\\n  --model /models/moonshotai/Kimi-K2-Thinking \\\n  --trust-remote-code \\\n  --enable-auto-tool-choice \\\n  --tool-call-parser kimi_k2 \\\n  --reasoning-parser kimi_k2 \\\n  --max-model-len 100K \\\n  --max-num-seqs 16 \\\n  --disable-log-requests \\\n  --tensor-parallel-size 4'",
         ('reads', {'engine': 'vllm', 'model': 'Kimi K2 Thinking', 'ctx': 102400})),
    Case('v16570', 'https://github.com/vllm-project/vllm/issues/16570', 'cmd', '4x A100 80GB', '0.7.3', RIGHT,
         'VLLM_USE_V1=0 CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve /data/ps/pretrained_model/Qwen/Qwen2.5-VL-72B-Instruct/ --dtype bfloat16 --port 80\n09 --trust-remote-code --served-model-name qwen2vl --tensor-parallel-size 4 --gpu-memory-utilization 0.95 --max-num-seqs 2 --max-model-len 4096 --limit-mm-per-prompt image=1,vi\ndeo=0',
         ('refuses', "invalid loads value: 'image=1,vi'")),
    Case('v40778', 'https://github.com/vllm-project/vllm/issues/40778', 'cmd', '8x L20', None, FIXED,
         'VLLM_LOGGING_LEVEL=DEBUG vllm serve /data/pretrained/DeepSeek-V4-Flash \\\n--served-model-name DeepSeek-V4-Flash \\\n--trust-remote-code \\\n--kv-cache-dtype fp8 \\\n--block-size 256 \\\n--enable-expert-parallel \\\n--data-parallel-size 8 \\\n--gpu-memory-utilization 0.85 \\\n--compilation-config \'{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}\' \\\n--attention_config.use_fp4_indexer_cache=True \\\n--tokenizer-mode deepseek_v4 \\\n--tool-call-parser deepseek_v4 \\\n--enable-auto-tool-choice \\\n--reasoning-parser deepseek_v4',
         ('refuses', 'no DeepSeek-V4 attention kernel for compute capability 8.9')),
    Case('v4650', 'https://github.com/vllm-project/vllm/pull/4650', 'cmd', '8x H100', '0.5.4', FIXED,
         'docker run --gpus all vllm/vllm-openai:v0.5.4 --model deepseek-ai/DeepSeek-Coder-V2-Instruct --trust-remote-code --max-seq-len-to-capture 64000 --max-model-len 64000 --device cuda --gpu-memory-utilization 0.95 --tensor-parallel-size 8 --distributed-executor-backend ray --enforce-eager',
         ('reads', {'engine': 'vllm', 'model': 'DeepSeek Coder V2', 'ctx': 64000, 'fits': False, 'warn': 'larger than the maximum number of tokens that can be stored in KV cache'})),
    Case('ol9791', 'https://github.com/ollama/ollama/issues/9791', 'cmd', 'RTX 3090, RTX 3090', None, FIXED,
         '/usr/bin/ollama runner --ollama-engine --model /root/.ollama/models/blobs/sha256-afa0ea2ef463c87a1eebb9af070e76a353107493b5d9a62e5e66f65a65409541 --ctx-size 2048 --batch-size 512 --n-gpu-layers 99 --verbose --threads 8 --no-mmap --parallel 1 --tensor-split 22,30 --port 34497',
         ('refuses', "'ollama runner' is the process the Ollama server starts itself")),
    Case('lc23210', 'https://github.com/ggml-org/llama.cpp/issues/23210', 'cmd', '2x RTX 5060 Ti 16GB', 'b9186', RIGHT,
         'llama-server.exe ^\n  -m c:\\models\\unsloth\\Qwen3.6-27B-MTP-GGUF\\Qwen3.6-27B-Q5_K_M.gguf ^\n  --port 35762 ^\n  -c 65536 ^\n  --parallel 1 ^\n  --flash-attn on ^\n  --no-context-shift ^\n  -ngl -1 ^\n  --threads -1 ^\n  --jinja ^\n  --reasoning on ^\n  --no-mmap ^\n  --mlock ^\n  --spec-type draft-mtp ^\n  --spec-draft-n-max 3 ^\n  -lv 4 ^\n  --cache-type-k q8_0 ^\n  --cache-type-v q8_0 ^\n  --metrics',
         ('refuses', 'its name says Qwen/Qwen3.6-27B:Q5_K_M')),
    Case('lc28728', 'https://github.com/ggml-org/llama.cpp/issues/28728', 'cmd', 'Arc B580', None, RIGHT,
         './llama-server --host 0.0.0.0 --port 8080 --model /models/Qwen3.6-35B-A3B-UD-Q5_K_XL.gguf --n-gpu-layers 99 --n-cpu-moe 99 --load-mode none --flash-attn on --cache-type-k q8_0 --cache-type-v q8_0 --batch-size 9000 --ubatch-size 9000 --ctx-size 262144 --no-cache-prompt --ctx-checkpoints 0 --parallel 1',
         ('refuses', 'its name says Qwen/Qwen3.6-35B-A3B:UD-Q5_K_XL')),
    Case('lc24714', 'https://github.com/ggml-org/llama.cpp/issues/24714', 'cmd', 'RTX 3060 12GB', 'b9642', FIXED,
         './llama-server -hf unsloth/Qwen3.5-2B-MTP-GGUF:Q4_K_XL --no-mmproj --reasoning off',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5-2B-MTP-GGUF',
                    'warn': "inferred from the name as Qwen/Qwen3.5-2B + GGUF repo"})),
    Case('sg7227', 'https://github.com/sgl-project/sglang/issues/7227', 'cmd', 'RTX 5090', None, RIGHT,
         'docker run \\\n    --gpus all \\\n    -p 8000:8000 \\\n    --ipc=host \\\n    lmsysorg/sglang:blackwell \\\n    python -m sglang.launch_server \\\n    --model-path Qwen/Qwen3-4B-FP8 \\\n    --port 8000 \\\n    --context-length 60000',
         ('refuses', 'User-specified context_length (60000) is greater than the derived context_length (40960)')),
    Case('qnext-card', 'https://github.com/Sumanth077/Hands-On-AI-Engineering/pull/128', 'cmd', '4x H100', None, RIGHT,
         'python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Thinking --port 30000 --tp-size 4 --context-length 262144 --reasoning-parser deepseek-r1 --mem-fraction-static 0.8',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-Next 80B-A3B', 'ctx': 262144})),
    Case('kt1806', 'https://github.com/kvcache-ai/ktransformers/issues/1806', 'cmd', 'RTX 4090', None, FIXED,
         'python -m sglang.launch_server   --host 0.0.0.0   --port 8000   --model /mnt/data/Qwen3-Coder-30B-A3B-Instruct/   --trust-remote-code   --mem-fraction-static 0.92   --chunked-prefill-size 4096   --served-model-name Qwen3-30B-A3B   --enable-mixed-chunk   --kt-method AMXINT8   --kt-weight-path /mnt/data/Qwen3-Coder-30B-A3B-INT8/   --kt-cpuinfer 64   --kt-threadpool-count 4   --kt-max-deferred-experts-per-token 2',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-Coder 30B-A3B', 'warn': '--kt-method AMXINT8 (the MoE experts run on the CPU'})),
    Case('recall43', 'https://github.com/Agent-RL/ReCall/issues/43', 'cmd', '4x A100 80GB', '0.4.5', FIXED,
         'python3 -m sglang.launch_server \\\n        --served-model-name ReSearch \\\n        --model-path xxx/Models/Qwen/Qwen2.5-1.5B-Instruct \\\n        --tp 4 \\\n        --context-length 6000 \\\n        --enable-metrics \\\n        --dtype bfloat16 \\\n        --host 127.0.0.1 \\\n        --port 80 \\\n        --trust-remote-code \\\n        --disable-overlap \\\n        --disable-radix-cache \\\n        --disable-cuda-graph \\\n        --mem-fraction-static 0.7',
         ('reads', {'engine': 'sglang', 'model': 'Qwen2.5 1.5B', 'ctx': 6000})),
    Case('mlx1025', 'https://github.com/ml-explore/mlx-examples/issues/1025', 'cmd', 'M2 Max 64GB', None, RIGHT,
         "mlx_lm.generate --model 'mlx-community/meta-llama-3.1-8b-instruct-4bit' --prompt '{10k tokens long prompt}' --max-kv-size-12000",
         ('refuses', 'unrecognized arguments: --max-kv-size-12000')),
    Case('mlx1808', 'https://github.com/ml-explore/mlx-lm/issues/1808', 'cmd', 'M5 16GB', None, RIGHT,
         'mlx_lm.evaluate --model mlx-community/Qwen3-4B-Instruct-2507-4bit \\\n  --task mmlu_pro --limit 2 --batch-size 1',
         ('refuses', "unknown engine command 'mlx_lm.evaluate'")),
    Case('d-mlx1808', 'https://github.com/ml-explore/mlx-lm/issues/1808', 'diag', None, None, RIGHT,
         'RuntimeError: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)',
         ('diagnoses', {'engine': 'mlx', 'stage': 'host_ram'})),
    Case('mlx644a', 'https://github.com/ml-explore/mlx-lm/issues/644', 'cmd', 'M4 16GB', None, RIGHT,
         'llama-cli -hf ggml-org/gpt-oss-20b-GGUF --n-cpu-moe 12 -fa on -c 32768 --jinja --no-mmap',
         ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'ctx': 32768, 'fits': True})),
    Case('mlx644b', 'https://github.com/ml-explore/mlx-lm/issues/644', 'cmd', 'M4 16GB', None, FIXED,
         'mlx_lm.chat --model mlx-community/gpt-oss-20b-MXFP4-Q8',
         ('reads', {'engine': 'mlx', 'model': 'gpt-oss 20B', 'warn': 'requires 11516 MB'})),
    Case('v13124', 'https://github.com/vllm-project/vllm/issues/13124', 'cmd', '4x A100 80GB', '0.7.2', FIXED,
         'vllm serve /home/lzh/llm_model/Qwen/Qwen2___5-VL-72B-Instruct --dtype auto --host 127.0.0.1 --port 6006 --tensor-parallel-size 4',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-VL 72B', 'warn': 'by its folder name'})),
    Case('v1395', 'https://github.com/vllm-project/vllm/pull/1395', 'cmd', '8x A100 80GB', '0.2.0', RIGHT,
         'python -m vllm.entrypoints.api_server --model /root/WizardLM--WizardCoder-15B-V1.0/ --tensor-parallel-size 8',
         ('refuses', 'no such file: /root/WizardLM--WizardCoder-15B-V1.0/')),
    Case('lmdeploy3036', 'https://github.com/InternLM/lmdeploy/issues/3036', 'cmd', 'RTX 4090', None, RIGHT,
         'lmdeploy serve api_server --server-name 0.0.0.0 --server-port 8000 --backend turbomind --dtype auto --tp 1 --cache-max-entry-count 0.3 --model-name glm-4-9b-chat --disable-fastapi-docs --log-level INFO /models/glm-4-9b-chat',
         ('refuses', "unknown engine command 'lmdeploy'")),
    Case('v15676', 'https://github.com/vllm-project/vllm/issues/15676', 'model', '2x RTX 3090', None, FIXED,
         'model: "google/gemma-3-27b-it"\ntensor-parallel-size: 2\nmax-model-len: 16384\nmax-num-seqs: 4\nlimit-mm-per-prompt: image=3',
         ('refuses', 'give `oomkit check -- vllm serve google/gemma-3-27b-it --tensor-parallel-size 2 --max-model-len 16384')),
    Case('qvl1489b', 'https://github.com/QwenLM/Qwen3-VL/issues/1489', 'cmd', '8x A100 80GB', None, RIGHT,
         'docker run --gpus all --ipc=host --network=host --rm --name qwen3vl -it qwenllm/qwenvl:qwen3vl-cu128 bash',
         ('refuses', "unknown engine command 'bash'")),
    Case('d-h2o932', 'https://github.com/h2oai/h2ogpt/issues/932', 'diag', None, None, FIXED,
         'ggml_allocr_alloc: not enough space in the buffer (needed 442368000, largest block available 290848800)\nGGML_ASSERT: /tmp/pip-install/llama.cpp/ggml-alloc.c:139: !"not enough space in the buffer"',
         ('diagnoses', {'engine': 'llama.cpp', 'stage': 'not_oom'})),
    Case('d-localgpt438', 'https://github.com/PromtEngineer/localGPT/issues/438', 'diag', None, None, FIXED,
         "ggml_new_object: not enough space in the context's memory pool (needed 18503312, available 10650320)",
         ('diagnoses', {'engine': 'llama.cpp', 'stage': 'not_oom'})),
    Case('d-lc22616', 'https://github.com/ggml-org/llama.cpp/pull/22616', 'diag', None, None, FIXED,
         "ggml_new_object: not enough space in the context's memory pool (needed 44528, available 44160)",
         ('diagnoses', {'engine': 'llama.cpp', 'stage': 'not_oom'})),
    Case('d-v12030', 'https://github.com/vllm-project/vllm/issues/12030', 'diag', None, None, RIGHT,
         '[Bug]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacity of 11.53 GiB of which 187.75 MiB is free. Including non-PyTorch memory, this process has 11.',
         ('diagnoses', {'engine': 'pytorch', 'stage': 'unknown'})),
    Case('d-swift9191', 'https://github.com/modelscope/ms-swift/issues/9191', 'diag', None, None, RIGHT,
         '[rank97]:     torch.empty(\n[rank97]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 48.00 MiB. GPU 1 has a total capacity of 139.81 GiB of which 22.44 MiB is free. Including non-PyTorch memory, this process has 139.78 GiB memory in use. Of the allocated memory 138.20 GiB is allocated by PyTorch, and 40.42 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)',
         ('diagnoses', {'engine': 'pytorch', 'stage': 'unknown'})),
]

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG)


def test_the_sweep_counts():
    assert len(CASES) == 81 and len({c.url for c in CASES}) == 73
    assert sum(c.status == FIXED for c in CASES) == 27 and sum(c.status == STILL for c in CASES) == 0
    assert all(c.url.startswith("https://") for c in CASES)


# ---- a script pasted whole: assignments and exports before the command that reads them (were: "unknown engine
# command 'export'" / "unknown engine command '*'", the `$((5 * 1024))` split into words) ----

@pytest.mark.parametrize("text,argv", [
    ('model_name="openai/gpt-oss-120b"\nmax_model_len=$((5 * 1024)) \n\nvllm serve $model_name --max-model-len '
     '$max_model_len', ["vllm", "serve", "openai/gpt-oss-120b", "--max-model-len", "5120"]),
    ("export A=1\nexport B=0\nollama serve", ["A=1", "B=0", "ollama", "serve"]),  # exported: the command's env
    ("M=Qwen/Qwen3-8B\nvllm serve $M", ["vllm", "serve", "Qwen/Qwen3-8B"]),  # not exported: expanded only
    ("# a comment\nexport P=8921;\nexport M=\"Qwen/QwQ-32B\";\n\nHIP=2 \\\npython -m sglang.launch_server --port $P "
     "--model-path ${M} --x '$M'", ["P=8921", "M=Qwen/QwQ-32B", "HIP=2", "python", "-m", "sglang.launch_server",
                                    "--port", "8921", "--model-path", "Qwen/QwQ-32B", "--x", "$M"]),
    ('A="x y"\nB=${A}/z\nvllm serve $B "$B"', ["vllm", "serve", "x", "y/z", "x y/z"]),  # unquoted: split into words
    ('F="${HOME}/m.gguf"\nH="$(hostname):1"\nllama-server -m "$F" --host $(hostname -I) -a "$H"',
     ["llama-server", "-m", "${HOME}/m.gguf", "--host", "$(hostname -I)", "-a", "$(hostname):1"]),
    ("N=4\nM=$((N*1024))\nvllm serve q --max-model-len $(($M + 1))", ["vllm", "serve", "q", "--max-model-len", "4097"]),
    ("vllm serve q --max-model-len $((1/0))", ["vllm", "serve", "q", "--max-model-len", "$((1/0))"]),
    # lines that change only the shell's state are passed over; `export NAME` exports a value set before; unset
    ("cd /app\nsource .venv/bin/activate\nconda activate vllm\nM=Qwen/Qwen3-8B\nexport M\nvllm serve $M",
     ["M=Qwen/Qwen3-8B", "vllm", "serve", "Qwen/Qwen3-8B"]),
    ("cd /app && M=Qwen/Qwen3-8B; vllm serve $M", ["vllm", "serve", "Qwen/Qwen3-8B"]),
    ("M=x\nunset M\nvllm serve $M", ["vllm", "serve", "$M"]),
    ("A='$B'\nB=1\nvllm serve $A", ["vllm", "serve", "$B"]),  # single quotes: no expansion, then or later
    ("X=$(hostname -I)\nllama-server --host $X", ["llama-server", "--host", "$(hostname -I)"]),
    ("export OLLAMA_NUM_PARALLEL=2\nollama serve; ollama run qwen3:8b", ["OLLAMA_NUM_PARALLEL=2", "ollama", "serve",
                                                                           ";", "ollama", "run", "qwen3:8b"]),
])
def test_a_pasted_script_sets_what_its_command_reads(text, argv):
    # bash: a line of assignments only sets shell variables, `export` puts them in the later commands' environment;
    # $NAME / ${NAME} / $((...)) expand in the command; a variable the paste does not set stays as typed
    assert split_command(text) == argv


def test_a_script_with_exports_reaches_the_engine_with_them():
    p = parse_command(split_command("export OLLAMA_CONTEXT_LENGTH=8192\nexport OLLAMA_NUM_PARALLEL=2\nollama serve; "
                                    "ollama run qwen3:8b"), {})
    assert (p.model, dict(p.settings.env)["OLLAMA_CONTEXT_LENGTH"], dict(p.settings.env)["OLLAMA_NUM_PARALLEL"]) == (
        "qwen3:8b", "8192", "2")


# ---- the engine command inside a running container or a job (were: "unknown engine command 'docker'" / 'hf') ----

@pytest.mark.parametrize("argv,model", [
    (["docker", "exec", "-it", "nomad_ollama", "ollama", "run", "--verbose", "gemma4:26b", "hi"], "gemma4:26b"),
    (["podman", "exec", "-e", "X=1", "--workdir", "/", "box", "vllm", "serve", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),
    (["kubectl", "exec", "-it", "-n", "ai", "ollama-0", "--", "ollama", "run", "qwen3:8b"], "qwen3:8b"),
    (["hf", "jobs", "run", "--flavor", "h200x2", "--expose", "8000", "--timeout", "2h", "vllm/vllm-openai:latest",
      "vllm", "serve", "Qwen/Qwen3.5-122B-A10B", "-tp", "2"], "Qwen/Qwen3.5-122B-A10B"),
    (["hf", "jobs", "run", "-d", "--flavor", "a100-large", "vllm/vllm-openai:v0.11.0", "--model", "Qwen/Qwen3-8B"],
     None),  # no command after the image: the image's own entrypoint... which needs one
])
def test_exec_and_jobs_run_the_command_after_the_container(argv, model):
    if model is None:
        with pytest.raises(OomkitError):
            parse_command(argv, {})
        return
    assert parse_command(argv, {}).model == model


@pytest.mark.parametrize("argv,said", [
    (["docker", "exec", "box"], "docker exec: no command given after the container"),
    (["kubectl", "exec", "pod", "ollama", "run", "x"], "kubectl exec: give the command after --"),
    (["hf", "jobs", "run", "--flavor"], "hf jobs run: no image given"),
])
def test_exec_without_a_command_is_one_line(argv, said):
    with pytest.raises(OomkitError, match=said):
        parse_command(argv, {})


# ---- the lines typed into `ollama run` (was: "/set parameter num_ctx 1024" read as the prompt, the default context
# estimated: 8192 where the thread's log shows n_ctx = 4096) ----

def test_set_parameter_lines_of_an_ollama_session():
    # ollama#9876 (0.6.0): 4 parallel slots x num_ctx 1024 = n_ctx 4096 (cmd/interactive.go `/set parameter`)
    rc, out, err = run_cli("check", "--gpu", "RTX 4090", "--engine-version", "0.6.0", "--json", "--", "ollama", "run",
                        "deepseek-r1:32b", "/set", "parameter", "num_ctx", "1024")
    assert rc == 0 and json.loads(out)["estimate"]["engine_view"]["n_ctx"] == 4096, err
    p = parse_command(split_command("ollama run qwen3:8b\n/set parameter temperature 0.2\n/set parameter num_gpu 10\n"
                                    "/set parameter num_ctx 8192"), {})
    assert (p.settings.num_ctx, p.settings.num_gpu) == (8192, 10)
    with pytest.raises(OomkitError, match="Couldn't set parameter"):
        parse_command(["ollama", "run", "qwen3:8b", "/set", "parameter", "num_ctx", "8k"], {})


def test_fit_edits_the_set_parameter_line():
    argv = ["ollama", "run", "qwen3:8b", "/set", "parameter", "num_ctx", "40000"]
    old = parse_command(argv, {}).settings
    out = get_engine("ollama").rewrite_command(argv, old, replace(old, num_ctx=16384))
    assert out == ["ollama", "run", "qwen3:8b", "/set", "parameter", "num_ctx", "16384"]
    assert parse_command(out, {}).settings.num_ctx == 16384


def test_an_ollama_runner_line_names_what_to_give():
    # ollama#9791: the runner command of the server's log, on a blob
    with pytest.raises(OomkitError, match="'ollama runner' is the process the Ollama server starts itself"):
        parse_command(["/usr/bin/ollama", "runner", "--ollama-engine", "--model", "/root/.ollama/models/blobs/sha256-"
                       "afa0", "--ctx-size", "2048"], {})


# ---- a Modelfile or a vLLM config file pasted as MODEL (were: "no such file: FROM ...", "unknown model 'model: ...'")

@pytest.mark.parametrize("text,form", [
    ("FROM qwen3:8b\n# long context\nparameter num_ctx 32768\nPARAMETER temperature 0.6\nPARAMETER num_gpu 20",
     "give `oomkit check qwen3:8b --engine ollama --num-ctx 32768 --num-gpu 20`"),
    ("FROM ./my model.gguf\nADAPTER ./lora.gguf", "give `oomkit check './my model.gguf' --engine ollama` (its ADAPTER"),
    ('model: "google/gemma-3-27b-it"\ntensor-parallel-size: 2\nenforce-eager: true\nenable-prefix-caching: false',
     "give `oomkit check -- vllm serve google/gemma-3-27b-it --tensor-parallel-size 2 --enforce-eager`"),
])
def test_a_config_text_as_model_names_the_oomkit_form(text, form):
    rc, _, err = run_cli("check", text, "--gpu", "RTX 4090")
    one_line_or_answer(rc, err, text)
    assert rc == 2 and form in err, err


@pytest.mark.parametrize("text", ["FROM qwen3:8b", "model: x", "PARAMETER num_ctx 4", "from: here\nto: there"])
def test_text_that_is_no_config_is_still_a_name(text):
    rc, _, err = run_cli("check", text, "--gpu", "RTX 4090")
    assert rc == 2 and "Modelfile" not in err and "config file" not in err, err


# ---- vLLM's dotted JSON options (were: "unrecognized arguments: --speculative_config.method mtp") ----

def test_vllm_dotted_options_are_their_json_object():
    # vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (recipes#509, vllm#40778)
    s = parse_command(["vllm", "serve", "Qwen/Qwen3.6-27B", "--speculative_config.method", "mtp",
                       "--speculative-config.num_speculative_tokens=3"], {}).settings
    assert s.num_speculative_tokens == 3
    with pytest.raises(OomkitError, match="argument --speculative-config.method: expected one argument"):
        parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config.method"], {})
    with pytest.raises(OomkitError, match='unrecognized arguments: --no-such {"thing": 1}'):
        parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--no-such.thing", "1"], {})


# ---- vLLM before 0.7.1 caches DeepSeek's MLA as every head's K and V (was: the latent row of 0.7.1+ at every
# release, so vllm#4650's 64,000-token DeepSeek-Coder-V2 on 8 x H100 at 0.5.4 "fitted"; it reported "not enough
# memory for cache blocks") ----

def test_vllm_mla_before_0_7_1_caches_full_heads():
    argv = ["vllm", "serve", "deepseek-ai/DeepSeek-Coder-V2-Instruct", "--trust-remote-code", "--max-model-len",
            "64000", "--gpu-memory-utilization", "0.95", "--tensor-parallel-size", "8", "--enforce-eager"]
    per_token = {}
    for version in ("0.5.4", "0.7.1"):
        rc, out, err = run_cli("check", "--gpu", "8x H100 80GB", "--engine-version", version, "--json", "--", *argv)
        assert rc in (0, 1), err
        per_token[version] = json.loads(out)["estimate"]["kv_bytes_per_token"]
    # over the 8 ranks: DeepseekV2Attention's 16 heads a rank x (K and V each padded to 256: 0.5.4's
    # Attention(num_local_heads, 256, ...)) x 2 bytes x 60 layers; MLA's latent row (512 + 64) x 2 bytes x 60
    # layers, the same on every rank
    assert per_token == {"0.5.4": 8 * 60 * 16 * 512 * 2, "0.7.1": 8 * 60 * 576 * 2}


# ---- refusals that say what is true (were: "-sm tensor: llama.cpp takes none, layer or row", which llama.cpp's
# LLAMA_SPLIT_MODE_TENSOR contradicts; "unknown engine command './build/bin/llama-batched-bench'") ----

@pytest.mark.parametrize("argv,said", [
    (["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-sm", "tensor"], "-sm tensor (llama.cpp's tensor "
     "parallelism, LLAMA_SPLIT_MODE_TENSOR) is not modelled by oomkit"),
    (["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-sm", "rows"], "-sm rows: llama.cpp takes none, layer, "
     "row or tensor"),
    (["./build/bin/llama-batched-bench", "-m", "m.gguf", "-npl", "1"], "llama-batched-bench is a llama.cpp program "
     "oomkit does not read"),
])
def test_refusals_that_say_what_is_true(argv, said):
    rc, _, err = run_cli("check", "--gpu", "2x RTX 3090", "--", *argv)
    one_line_or_answer(rc, err, argv)
    assert rc == 2 and said in err, err


# ---- a name whose ':' comes before its '/' (was: internal error "not enough values to unpack" in
# names.ollama_namespaced, met by the mutation pass) ----

@pytest.mark.parametrize("name", ["qwen3:8b/x", "llama run deepseek-r1:32b\n/set parameter num_ctx 1024", "a:/b"])
def test_a_colon_before_the_slash_is_no_crash(name):
    rc, _, err = run_cli("check", name, "--gpu", "RTX 4090")
    one_line_or_answer(rc, err, name)


# ---- the mutation pass: each real command cut, with a word dropped, doubled or garbled ----

@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"], ids=lambda c: c.id)
def test_mutated_real_commands_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for m in mutations(split_command(c.text), rng):
        rc, _, err = run_cli("check", *hardware_args(c), "--", *m)
        one_line_or_answer(rc, err, (c.id, m))


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "diag"], ids=lambda c: c.id)
def test_cut_real_messages_are_diagnosed_or_refused_in_one_line(c):
    step = max(1, len(c.text) // 8)
    for cut in [c.text[:k] for k in range(0, len(c.text), step)] + [c.text[::-1], c.text * 3]:
        rc, _, err = run_cli("diagnose", "--json", "-", stdin=cut)
        one_line_or_answer(rc, err, (c.id, cut[:60]))


# ---- the web API reads the new forms as the CLI does ----

def test_the_web_api_reads_scripts_exec_and_dotted_options():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    with TestClient(create_app()) as c:
        r = c.get("/api/check", params={"command": 'M="Qwen/Qwen3-8B"\nN=$((8 * 1024))\nvllm serve $M '
                                                  "--max-model-len $N", "gpu": "H100"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["max_model_len"] == 8192, r.text
        r = c.get("/api/check", params={"command": "docker exec -it box ollama run qwen3:8b\n/set parameter num_ctx "
                                                  "4096", "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["engine_view"]["n_ctx"] == 4096, r.text
        r = c.post("/api/fit", json={"command": "vllm serve Qwen/Qwen3-8B --speculative_config.method ngram "
                                                "--speculative_config.num_speculative_tokens 3 --max-model-len 40960",
                                     "gpu": "RTX 4090"})
        assert r.status_code == 200, r.text
        r = c.get("/api/check", params={"command": "hf jobs run --flavor", "gpu": "H100"})
        assert r.status_code == 400 and "hf jobs run" in r.json()["error"], r.text
