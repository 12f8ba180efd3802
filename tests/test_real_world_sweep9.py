"""Real users' input, ninth sweep: engine commands and pastes from public GitHub issues and pull requests of 2025-2026
(each cited), favouring the kinds earlier sweeps have few of: MLX (mlx_lm.server / generate, mlx_vlm, and the MLX
servers oomkit does not read: vmlx, vllm-mlx, mlx-openai-server), Python loaders pasted as MODEL (Unsloth's
FastModel, transformers' from_pretrained, a diffusers pipeline), `lms load` / `lms get`, llama-swap configs with
macros and ${PORT}, RamaLama and KoboldCpp, multi-GPU vLLM and SGLang with TP / PP / DP / EP, llama-server's router
mode, --rpc and numactl, and quantized or derived repo names (AWQ, FP8, bnb-4bit, mlx-community, unsloth GGUF). Each
runs through `oomkit check`, the command quoted as MODEL, `fit` and `plan`, then mutated. None of their threads is
in sweeps 2 to 8, tests/fixtures/commands/real_commands.jsonl or the names held out (tests/test_names_heldout*.py).

Measured (2026-12-06), before this sweep's changes: 40 real inputs (32 commands; 4 llama-swap configs, 3 Python
snippets and 1 model name pasted as MODEL) from 38 public threads; 15 answered wrong (a refusal for the wrong
reason: a prompt, a job line, a wrapper's path or a config read as the program; a script left unread for a comment;
a hint with MODEL where the paste names the model, or transformers for a diffusers pipeline; a flag dropped; a
RamaLama command quoted as MODEL estimated as a model name): all 15 are fixed here (FIXED), none is left wrong (STILL). The fixes: engines/shell_words.py (a comment after an `export`
line of a script, zsh's `[N] abort  CMD` job line, a prompt of the folder alone `/opt/llama.cpp$`),
engines/command.py (a wrapper named by its path, `/usr/bin/numactl`; a llama-swap config read as llama-swap reads
its cmd: comment lines dropped, macros and ${PORT} put in, split without comments), engines/cmdline.py (`lms get` and
the other lms commands, Unsloth's model_name=, a diffusers pipeline, a program with a `scheme://` model after it
quoted as MODEL), engines/sglang/args.py (`--ep`, --ep-size's
third name from 0.4.10), model/resolve.py (an unexpanded shell variable as the model).
"""

from __future__ import annotations

import json
import random

import pytest

from oomkit.engines.cmdline import parse_command, python_call_hint
from oomkit.engines.command import unwrap
from oomkit.engines.pasted import compose_hint
from oomkit.engines.shell_words import split_command
from oomkit.errors import OomkitError
from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    check_case,
    hardware_args,
    mutations,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    one_line_or_answer,
    run_cli,
    sweep_tests,
    version_args,
)

# Not verbatim: swap281 is the first three models of the config posted (the rest follow the same form). Prompts,
# quote marks, `...` elisions, trailing blanks and the cut ends are kept as posted; where a thread holds two inputs,
# vllm#41695's and mlx-engine#83's, each is a case. Hardware: as the thread names it or its log shows it; where it
# names none, a card of the kind the thread implies, on which no expectation below depends. Versions: as the thread
# states or dates them.
CASES = [
    # ---- vLLM ----
    # v18156: 4x A10 (24 GB): the AWQ weights alone (the thread's answer: about 125 GB) are more than the four cards hold
    Case('v18156', 'https://github.com/vllm-project/vllm/issues/18156', 'cmd', '4x A10', '0.8.5', RIGHT,
         'VLLM_USE_V1=0 vllm serve cognitivecomputations/Qwen3-235B-A22B-AWQ --tensor-parallel-size 4  --max-model-len 8192 --gpu-memory-utilization 0.95   --distributed-executor-backend mp ',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-235B-A22B-AWQ', 'ctx': 8192, 'settings': {'tensor_parallel_size': 4}, 'fits': False})),
    # v23819: a script's `vllm serve ${MODEL_NAME}` that never sets it (was: "unknown model '${MODEL_NAME}': not a file and not in
    # the built-in catalog")
    Case('v23819', 'https://github.com/vllm-project/vllm/pull/23819', 'cmd', '2x B200', None, FIXED,
         'export VLLM_SKIP_P2P_CHECK=1\nexport VLLM_USE_FLASHINFER_MOE_FP8=1\nexport VLLM_USE_FLASHINFER_MOE_FP4=1\nexport VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1\nexport VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB=\'{"2":32,"4":32,"8":8}\'\n# ASYNC_SCHEDULING_FLAG="--async-scheduling"\nASYNC_SCHEDULING_FLAG=""\nFUSION_FLAG=\'{"pass_config":{"enable_fi_allreduce_fusion":true,"enable_attn_fusion":true,"enable_noop":true},"custom_ops":["+quant_fp8","+rms_norm"],"cudagraph_mode":"FULL_DECODE_ONLY","splitting_ops":[]}\'\n\nvllm serve ${MODEL_NAME} \\\n  --host 0.0.0.0 \\\n  --port 8000 \\\n  --kv-cache-dtype auto \\\n  --trust-remote-code \\\n  --gpu-memory-utilization 0.9 \\\n  --compilation-config ${FUSION_FLAG} \\\n  ${ASYNC_SCHEDULING_FLAG} \\\n  --enable-chunked-prefill \\\n  --no-enable-prefix-caching \\\n  --pipeline-parallel-size 1 \\\n  --tensor-parallel-size 2 --enable-expert-parallel \\\n  --max-num-seqs 128 \\\n  --max-num-batched-tokens 8192 \\\n  --max-model-len 2048 &',
         ('refuses', 'is the shell variable MODEL_NAME, which what was given does not set')),
    # v26206: a script whose `export LD_PRELOAD=...:$LD_PRELOAD # prepend ...` ends in a comment (was: "unknown engine command
    # 'export'"); `--max-model-len 10K` is 10240 as vLLM's log shows ('max_model_len': 10240)
    Case('v26206', 'https://github.com/vllm-project/vllm/issues/26206', 'cmd', '5x RTX 3090', '0.11.0', FIXED,
         '#!/bin/bash\nexport HF_HUB_CACHE="/srv/huggingface"\nexport CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0,1,2,3,4\nexport OMP_NUM_THREADS=60\nsource ~/.virtualenvs/vllm/bin/activate\nexport LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4:$LD_PRELOAD # prepend the library to LD_PRELOAD\nvllm serve Qwen/Qwen3-Next-80B-A3B-Thinking \\\n     --dtype auto \\\n     --pipeline-parallel-size 5 \\\n     -tp 1 \\\n     --cpu-offload-gb 50 \\\n     --max-model-len 10K \\\n     --max-num-seqs 16 \\\n     --no-enable-chunked-prefill \\\n     --enforce-eager \\\n     --speculative-config \'{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}\'',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next 80B-A3B Thinking', 'ctx': 10240, 'settings': {'pipeline_parallel_size': 5}})),
    # v41695: the thread's "No available memory for the cache blocks" on an RTX 5090
    Case('v41695', 'https://github.com/vllm-project/vllm/issues/41695', 'cmd', 'RTX 5090', None, RIGHT,
         'vllm serve Qwen3-Coder-30B-A3B-Instruct-FP8 \\\n  --host 0.0.0.0 \\\n  --port 8000 \\\n  --max-model-len 16384 \\\n  --dtype auto \\\n  --gpu-memory-utilization 0.95 \\\n  --served-model-name Qwen3-Coder-30B-A3B-Instruct-FP8 \\\n  --enable-auto-tool-choice \\\n  --tool-call-parser hermes \\\n  --reasoning-parser qwen3 \\\n  --language-model-only',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-Coder-30B-A3B-Instruct-FP8', 'ctx': 16384, 'fits': False, 'warn': 'No available memory for the cache blocks'})),
    # v41695b: the same thread's `lms load` that "works fine with LM Studio"
    Case('v41695b', 'https://github.com/vllm-project/vllm/issues/41695', 'cmd', 'RTX 5090', None, RIGHT,
         'lms load qwen/qwen3.5-35b-a3b --context-length 81920',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5 35B-A3B', 'ctx': 81920, 'fits': True})),
    Case('habana2214', 'https://github.com/huggingface/optimum-habana/pull/2214', 'cmd', '8x H100', None, RIGHT,
         'PT_HPU_LAZY_MODE=1 python ../gaudi_spawn.py --use_deepspeed --world_size 8 run_generation.py --model_name_or_path unsloth/gpt-oss-120b-BF16 --use_hpu_graphs --use_kv_cache --max_new_tokens 100 --do_sample --batch_size 1 --prompt "Hello world" "How are you?" --sdp_on_bf16 --parallel_strategy "ep"',
         ('refuses', "unknown engine command 'python'")),
    # ---- SGLang: TP / DP / EP / PP ----
    # sg9805: `$MODELS/...` read by the folder's name; tp 4, ep 4, dp 4 and pp 2 on eight cards
    Case('sg9805', 'https://github.com/sgl-project/sglang/issues/9805', 'cmd', '8x H100', '0.5.1', RIGHT,
         '```python -m sglang.launch_server --model-path $MODELS/Qwen/Qwen3-235B-A22B-Thinking-2507-FP8 --tp-size 4 --ep-size 4 --dp-size 4 --pp-size 2 --enable-dp-attention --port 8000 --trust-remote-code```',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-235B-A22B-Thinking-2507-FP8', 'settings': {'tp_size': 4, 'ep_size': 4, 'dp_size': 4, 'pp_size': 2}})),
    Case('sg9896', 'https://github.com/sgl-project/sglang/issues/9896', 'cmd', '8x MI300X', '0.5.0', RIGHT,
         'SGLANG_USE_AITER=1 \\\npython3 -m sglang.launch_server \\\n\t--tool-call-parser deepseekv3 \\\n\t--trust-remote-code \\\n\t--model-path /share/deepseek-r1 \\\n\t--attention-backend aiter \\\n\t--disable-radix-cache \\\n\t--disable-cuda-graph \\\n\t--tp-size 8 \\\n\t--enable-dp-attention \\\n\t--dp-size 8',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1', 'settings': {'tp_size': 8, 'dp_size': 8}})),
    # sg9359: `--ep 4`, the third name of --ep-size from 0.4.10 (was: dropped, ep_size 1)
    Case('sg9359', 'https://github.com/sgl-project/sglang/pull/9359', 'cmd', '4x B200', '0.5.1', FIXED,
         'python3 -m sglang.launch_server --model openai/gpt-oss-120b --disable-radix-cache  --attention-backend trtllm_mha --tp 4 --ep 4 --cuda-graph-max-bs 640 --enable-dp-attention --dp 4 --enable-dp-lm-head --stream-interval 10 --mem-fraction-static 0.9 --cuda-graph-bs 1 2 4 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 256 512 640 --max-running-requests 2560',
         ('reads', {'engine': 'sglang', 'model': 'gpt-oss 120B', 'settings': {'tp_size': 4, 'ep_size': 4, 'dp_size': 4}})),
    Case('sg4390', 'https://github.com/sgl-project/sglang/pull/4390', 'cmd', '8x H100', None, RIGHT,
         'python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct --trust-remote-code --tp 8 --enable-dp-attention --dp 2',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek Coder V2 Lite Instruct', 'settings': {'tp_size': 8, 'dp_size': 2}})),
    # sg5133: the guide's "H100: up to 1M tokens" for Scout on eight
    Case('sg5133', 'https://github.com/sgl-project/sglang/pull/5133', 'cmd', '8x H100', '0.4.5', RIGHT,
         'python3 -m sglang.launch_server --model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --tp 8 --context-length 1000000',
         ('reads', {'engine': 'sglang', 'model': 'Llama 4 Scout', 'ctx': 1000000, 'settings': {'tp_size': 8}, 'fits': True})),
    # ---- llama.cpp and ik_llama.cpp ----
    Case('lc18070', 'https://github.com/ggml-org/llama.cpp/pull/18070', 'cmd', '4x RTX 4090', None, RIGHT,
         '$ ./build/bin/llama-fit-params -m /usr/local/ai/models/Devstral/UD-Q8_K_XL/Devstral-2-123B-Instruct-2512-UD-Q8_K_XL-00001-of-00003.gguf ',
         ('refuses', 'its name says mistralai/Devstral-2-123B-Instruct-2512:UD-Q8_K_XL')),
    Case('ik257', 'https://github.com/ikawrakow/ik_llama.cpp/issues/257', 'cmd', '128GiB', None, RIGHT,
         '> llama-server -m /root/models/DeepSeek-R1-11446-Q2_K/DeepSeek-R1-11446-Q2_K-00001-of-00030.gguf -fa --temp 0.6 --top-p 0.95 -s 3047 -t 62 -nkvo -c 163840 -ngl 0 -mla 2 -fmoe -np 4 --mlock -a DeepSeek-R1:671B',
         ('refuses', 'no such file: /root/models/DeepSeek-R1-11446-Q2_K/')),
    # lc27456: router mode (--models-dir, no -m): the model comes from the request
    Case('lc27456', 'https://github.com/ggml-org/llama.cpp/issues/27456', 'cmd', 'RTX 5070 Ti', None, RIGHT,
         'llama-server.exe --models-dir D:\\models\\Qwen3.8_27b --models-preset D:\\llama\\qwen38_presets.ini --host 127.0.0.1 --port 8080 --jinja --no-models-autoload',
         ('refuses', 'names no model')),
    # lc23889: numactl named by its path (was: "unknown engine command '/usr/bin/numactl'"); then the elided `......`, which
    # common/arg.cpp refuses
    Case('lc23889', 'https://github.com/ggml-org/llama.cpp/issues/23889', 'cmd', '128GiB', 'b9413', FIXED,
         '/usr/bin/numactl --cpunodebind=0 --membind=0 /usr/bin/llama-server --numa numactl ......',
         ('refuses', 'invalid argument: ......')),
    # aibench21: a prompt of the folder alone, `/opt/llama.cpp$` (was: "unknown engine command '/opt/llama.cpp$'")
    Case('aibench21', 'https://github.com/geerlingguy/ai-benchmarks/issues/21', 'cmd', '128GiB', None, FIXED,
         '/opt/llama.cpp$ build/bin/llama-cli -m models/Llama-3.2-3B-Instruct-Q4_K_M.gguf -p "Hello, my name is" --rpc 10.0.2.209:50052, -ngl 99',
         ('refuses', 'its name says meta-llama/Llama-3.2-3B-Instruct:Q4_K_M')),
    Case('beowulf4', 'https://github.com/geerlingguy/beowulf-ai-cluster/issues/4', 'cmd', '128GiB', None, FIXED,
         '/opt/distributed-llama$ ./dllama chat --model models/llama3_2_1b_instruct_q40/dllama_model_llama3_2_1b_instruct_q40.m --tokenizer models/llama3_2_1b_instruct_q40/dllama_tokenizer_llama3_2_1b_instruct_q40.t --buffer-float-type q80 --nthreads 1 --max-seq-len 4096 --gpu-index 0',
         ('refuses', "unknown engine command './dllama'")),
    # ---- llama-swap configs pasted as MODEL (was: "unknown engine command 'models:'" and the like) ----
    # swap108: `cmd: >` folds its lines into one, so each `# ...` is words llama-swap passes on
    Case('swap108', 'https://github.com/mostlygeek/llama-swap/issues/108', 'model', 'RTX 3090', None, FIXED,
         '  "Qwen3-4B-Q4":\n    cmd: >\n      ./llama-server\n      -m /models/Qwen_Qwen3-4B-Q4_K_M.gguf\n      --port 9005\n      --n-gpu-layers 999 # Or your desired offload amount\n      --split-mode layer # Enable multi-GPU (if compiled with support)\n      --main-gpu 0 # Specify main GPU\n      --flash-attn # Keep Flash Attention enabled for speed\n      --ctx-size 32000 # Your desired context size\n      --batch-size 1024 # Your desired batch size\n      --ubatch-size 512 # Your desired ubatch size\n      --cache-type-k q8_0 # <--- ADD/CHANGE THIS\n      --cache-type-v q8_0 # <--- ADD/CHANGE THIS (Using a supported combination)\n      --verbose\n      --output-tokens-mean\n      --output-tokens-mean-deterministic\n      --rope-scaling yarn \n      --rope-scale 4 \n      --yarn-orig-ctx 32768\n      --temp 0.6 # Set Temperature\n      --min-p 0.0 # Set Min_P\n      --top-p 0.95 # Set Top_P\n      --top-k 20 # Set TopK\n#      --threads 12\n#      --chat-template /models/Q3_8B_ctemplate.txt\n    proxy: http://127.0.0.1:9005',
         ('refuses', "llama-swap config, not a model name: llama-swap runs a model's cmd on the first request for it; give `oomkit check -- ./llama-server -m /models/Qwen_Qwen3-4B-Q4_K_M.gguf --port 9005 --n-gpu-layers 999 '#' Or your desired offload amount")),
    Case('swap39', 'https://github.com/mostlygeek/llama-swap/issues/39', 'model', 'RTX 3090', None, FIXED,
         'models:\n  "Llama-3.1-8B-Instruct":\n    cmd: >\n      /app/llama-server --port 10000\n      --model /models/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf\n      --n-gpu-layers 99\n    proxy: http://127.0.0.1:10000\n    ttl: 600\n  "gemma-2-9b-it":\n    cmd: >\n      /app/llama-server --port 10000\n      --model /models/gemma-2-9b-it-Q8_0.gguf\n      --n-gpu-layers 99\n    proxy: http://127.0.0.1:10000\n    ttl: 600',
         ('refuses', "`oomkit check -- /app/llama-server --port 10000 --model /models/Meta-Llama-3.1-8B-Instruct-Q8_0.gguf --n-gpu-layers 99` for its model 'Llama-3.1-8B-Instruct'; 1 more models: 'gemma-2-9b-it'")),
    # swap149 / swap281: macros, and ${PORT} numbered from 5800 over the model ids in sorted order after the macros are in
    # (LFM2-1.2B gets 5800, Seed-OSS-36B 5801)
    Case('swap149', 'https://github.com/mostlygeek/llama-swap/pull/149', 'model', 'RTX 3090', None, FIXED,
         'macros: \n  llamasvr: "/path/to/llama-server/llama-server-293924"\n  quantKV: "--cache-type-k q8_0 --cache-type-v q8_0"\n  mpath: "/path/to/my/mnt/drive/models"\nmodels: \n  "llama":\n    cmd: |\n      ${llamasvr} --port ${PORT}  \n      ${quantKV}\n       -m "${mpath}/llama-8B.gguf"',
         ('refuses', '`oomkit check -- /path/to/llama-server/llama-server-293924 --port 5800 --cache-type-k q8_0 --cache-type-v q8_0 -m /path/to/my/mnt/drive/models/llama-8B.gguf`')),
    # swap281: the config's first three models, as posted
    Case('swap281', 'https://github.com/mostlygeek/llama-swap/issues/281', 'model', '2x RTX 3090', None, FIXED,
         'macros:\n  "llama": >\n    /root/llama-builds/llama.cpp/bin/llama-server\n    --port ${PORT}\n    --api-key needakey\n    -sm none -mg 1\n    -t 10\n    --swa-full\n\n  "llama-lite": >\n    /root/llama-builds/llama.cpp/bin/llama-server\n    --port ${PORT}\n    --api-key needakey\n    -sm none -mg 0\n    -t 2\n\n  "ik-llama": >\n    /root/llama-builds/ik_llama.cpp/bin/llama-server\n    --port ${PORT}\n    --api-key needakey\n    --flash-attn\n\nmodels:\n\n  ## ByteDance ##\n  "Seed-OSS-36B":\n    filters:\n      strip_params: "temperature, top_p"\n    ttl: 300\n    cmd: |\n      ${llama}\n      --model /mnt/models/unsloth/Seed-OSS-36B-Instruct-UD-Q3_K_XL.gguf\n      --jinja\n      -ngl 99\n      --temp 1.1\n      --top_p 0.95\n\n  ## Misc ##\n  "LFM2-1.2B":\n    unlisted: true\n    filters:\n      strip_params: "temperature, min_p"\n    ttl: 0\n    cmd: |\n      ${llama-lite}\n      -m /mnt/models/unsloth/LFM2-1.2B-UD-Q8_K_XL.gguf\n      --n-gpu-layers 99\n      --jinja\n      --ctx-size 128000\n      --temp 0.3\n      --min_p 0.15\n      --repeat_penalty 1.05\n\n  "xLAM-2-3B":\n    unlisted: true\n    ttl: 0\n    cmd: |\n      ${llama-lite}\n      -m /mnt/models/xLAM-2-3B-fc-r-Q4_K_M.gguf\n      --n-gpu-layers 99\n      --jinja\n      --ctx-size 16000',
         ('refuses', '`oomkit check -- /root/llama-builds/llama.cpp/bin/llama-server --port 5801 --api-key needakey -sm none -mg 1 -t 10 --swa-full --model /mnt/models/unsloth/Seed-OSS-36B-Instruct-UD-Q3_K_XL.gguf --jinja -ngl 99 --temp 1.1 --top_p 0.95` for its model')),
    # ---- RamaLama, KoboldCpp, Ollama names ----
    # rama807: quoted as MODEL, RamaLama's `ollama://` after the program made it a path, read by its last part as
    # DeepSeek-R1-Distill-Qwen-32B on llama.cpp's defaults (`check -- ...` refused it): now a command line both ways
    Case('rama807', 'https://github.com/containers/ramalama/issues/807', 'cmd', 'RTX 4090', None, FIXED,
         'ramalama serve ollama://deepseek-r1:32b',
         ('refuses', "unknown engine command 'ramalama'")),
    Case('rama1289', 'https://github.com/containers/ramalama/issues/1289', 'cmd', 'RTX 4090', None, RIGHT,
         'ramalama --debug --image quay.io/ramalama/ramalama:latest serve --port 11434 mistral:latest',
         ('refuses', "unknown engine command 'ramalama'")),
    Case('kcpp1364', 'https://github.com/LostRuins/koboldcpp/issues/1364', 'cmd', 'RTX 4060', None, RIGHT,
         '$ /usr/local/bin/koboldcpp --model DeepSeek-R1-Distill-Qwen-7B-Q5_K_M.gguf --usevulkan --gpulayers -1 --skiplauncher --contextsize 12288 --quiet',
         ('refuses', "unknown engine command '/usr/local/bin/koboldcpp'")),
    Case('ol10994', 'https://github.com/ollama/ollama/issues/10994', 'model', 'RTX 3090', None, RIGHT,
         'hf.co/unsloth/Qwen3-14B-GGUF:Q4_K_M',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 14B'})),
    # ---- MLX ----
    Case('mlxlm883', 'https://github.com/ml-explore/mlx-lm/issues/883', 'cmd', 'M3 Ultra 96GB', None, RIGHT,
         'mlx_lm.server --model mlx-community/Qwen3-Coder-30B-A3B-Instruct-8bit --port 8080 --max-tokens 64000',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3-Coder 30B-A3B Instruct'})),
    Case('mlx3564', 'https://github.com/ml-explore/mlx/issues/3564', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'mlx_lm.server --model mlx-community/Qwen3.5-27B-4bit --port 8080',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3.5 27B'})),
    Case('mlxvlm1096', 'https://github.com/Blaizzy/mlx-vlm/issues/1096', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'mlx_vlm.server \\\n  --model mlx-community/Qwen3.5-9B-MLX-4bit \\\n  --draft-model z-lab/Qwen3.5-9B-DFlash \\\n  --kv-bits 3.5 \\\n  --kv-quant-scheme turboquant',
         ('refuses', "unknown engine command 'mlx_vlm.server'")),
    Case('vmlx58', 'https://github.com/jjang-ai/vmlx/issues/58', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'Applications/vMLX.app/Contents/Resources/bundled-python/python/bin/python3 -s -m vmlx_engine.cli serve /Users/nekilc/.lmstudio/models/JANGQ-AI/Qwen3.5-35B-A3B-JANG_4K --host 127.0.0.1 --port 1234 --timeout 86400 --max-num-seqs 256 --is-mllm --tool-call-parser qwen --enable-auto-tool-choice --reasoning-parser qwen3 --disable-prefix-cache --stream-interval 1 --max-tokens 1000000 --enable-jit --log-level DEBUG',
         ('refuses', "unknown engine module 'python -m vmlx_engine.cli'")),
    # vmlx5: zsh's line for a background job a signal ended, `[1] abort  CMD` (was: "unknown engine command '[1]'")
    Case('vmlx5', 'https://github.com/jjang-ai/vmlx/issues/5', 'cmd', 'M4 Max 64GB', None, FIXED,
         '[1] abort  vmlx serve mlx-community/Qwen3.5-35B-A3B-4bit ...',
         ('refuses', "unknown engine command 'vmlx'")),
    # mlxlm104: `\\` then blanks then a newline: bash ends the command there with a word of one blank, which argparse refuses
    Case('mlxlm104', 'https://github.com/ml-explore/mlx-lm/issues/104', 'cmd', 'M3 Max 64GB', None, RIGHT,
         'mlx_lm.generate \\\n    --model "./models/mlx-community/gemma-3-27b-it-qat-4bit" \\\n    --prompt "Why sky is not red?" \\            \n    --max-tokens 3000 --temp 1',
         ('refuses', 'mlx_lm.generate: error: unrecognized arguments:')),
    # mlxlm24: a path with escaped blanks, not on this machine and not a catalog model
    Case('mlxlm24', 'https://github.com/ml-explore/mlx-lm/pull/24', 'cmd', 'M1 16GB', None, RIGHT,
         '(mlx-dev) (base) gokdenizgulmez@M1-MacBook-Air-von-Gokdeniz mlx-lm % python -m mlx_lm.generate --model /Users/gokdenizgulmez/Library/Mobile\\ Documents/com\\~apple\\~CloudDocs/Datastes/MLX/MiniCPM3-4bit --prompt "what\'s your name"',
         ('refuses', "unknown model '/Users/gokdenizgulmez/Library/Mobile Documents/com~apple~CloudDocs/Datastes/MLX/MiniCPM3-4bit'")),
    Case('mlxoai58', 'https://github.com/cubist38/mlx-openai-server/pull/58', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'mlx-openai-server launch --model-path <model> --model-type lm --context-length 4096',
         ('refuses', "unknown engine command 'mlx-openai-server'")),
    # mlxengine83: `lms get` downloads and loads nothing (was: "lms load: unexpected argument")
    Case('mlxengine83', 'https://github.com/lmstudio-ai/mlx-engine/pull/83', 'cmd', 'M4 Max 64GB', None, FIXED,
         'lms get mlx-community/Qwen2.5-7B-Instruct-4bit',
         ('refuses', 'lms get downloads a model and loads none')),
    Case('mlxengine83b', 'https://github.com/lmstudio-ai/mlx-engine/pull/83', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'python demo.py \\\n    --model ~/.lmstudio/models/mlx-community/Qwen2.5-7B-Instruct-4bit \\\n    --draft-model ~/.lmstudio/models/lmstudio-community/Qwen2.5-0.5B-Instruct-MLX-8bit \\\n    --prompt "<|im_start|>system"',
         ('refuses', "unknown engine command 'python'")),
    Case('vllmmlx45', 'https://github.com/waybarrios/vllm-mlx/pull/45', 'cmd', 'M3 Ultra 256GB', None, RIGHT,
         'vllm-mlx serve mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit \\\n    --draft-model mlx-community/Qwen3-0.6B-4bit \\\n    --num-draft-tokens 5',
         ('refuses', "unknown engine command 'vllm-mlx'")),
    Case('rapidmlx353', 'https://github.com/raullenchai/Rapid-MLX/issues/353', 'cmd', 'M4 Pro 48GB', None, RIGHT,
         'vllm-mlx serve mlx-community/Qwen3.6-35B-A3B-4bit-DWQ --port 8000 --cache-memory-mb 10240 --kv-cache-quantization --kv-cache-quantization-bits 8 --max-num-seqs 4 --max-tokens 131072 --pin-system-prompt --prefill-step-size 2048 --no-thinking --enable-auto-tool-choice --tool-call-parser qwen3_coder',
         ('refuses', "unknown engine command 'vllm-mlx'")),
    # ---- Python pasted as MODEL ----
    # unsloth2590: Unsloth's FastModel.from_pretrained names the model model_name= (was: the hint said MODEL)
    Case('unsloth2590', 'https://github.com/unslothai/unsloth/issues/2590', 'model', '64GiB', None, FIXED,
         'vlm, processor = FastModel.from_pretrained(\n    model_name = \n    "unsloth/Llama-3.3-70B-Instruct-bnb-4bit",\n    max_seq_length = any, # Choose any for long context!\n    load_in_4bit = True,  # 4 bit quantization to reduce memory\n    load_in_8bit = False, # [NEW!] A bit more accurate, uses 2x memory\n    #fast_inference = True,\n    full_finetuning = False, # [NEW!] We have full finetuning now!\n    device_map="cuda",# token = "hf_...", # use one if using gated models\n    dtype=dtype\n)',
         ('refuses', '`oomkit check unsloth/Llama-3.3-70B-Instruct-bnb-4bit --engine transformers --device-map cuda --load-in-4bit`')),
    Case('qwen3vl966', 'https://github.com/QwenLM/Qwen3-VL/issues/966', 'model', 'RTX 4090', None, RIGHT,
         'model = Qwen2_5_VLForConditionalGeneration.from_pretrained("./models/Qwen/Qwen2.5-VL-3B-Instruct", torch_dtype=torch.float16, device_map=\'cuda\',max_memory={0: "1GiB", "cpu": "28GiB"})',
         ('refuses', '`oomkit check ./models/Qwen/Qwen2.5-VL-3B-Instruct --engine transformers --device-map cuda --dtype float16`')),
    # diffusers12900: a diffusers pipeline, Qwen-Image (was: "transformers' from_pretrained ... give `oomkit check MODEL
    # --engine transformers`")
    Case('diffusers12900', 'https://github.com/huggingface/diffusers/issues/12900', 'model', 'H100', None, FIXED,
         '>>> from diffusers import DiffusionPipeline\n>>> \n>>> pipeline = DiffusionPipeline.from_pretrained(\n...   "/workspace/models/Qwen/Qwen-Image", torch_dtype=torch.bfloat16, device_map="cuda"\n... )',
         ('refuses', 'diffusers pipeline (DiffusionPipeline.from_pretrained)')),
]

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


def check(c: Case) -> None:
    """The harness's check, and for a model name pasted as MODEL that reads (ollama#10994's), the same reading with
    --json."""
    what, want = c.expect
    if c.kind != "model" or what != "reads":
        check_case(c)
        return
    rc, out, err = run_cli("check", c.text, *hardware_args(c), "--json")
    one_line_or_answer(rc, err, c.id)
    e = json.loads(out)["estimate"]
    assert e["engine"] == want["engine"] and want["model"] in e["model"]["name"], (c.url, e["engine"], e["model"])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 40 and len({c.url for c in CASES}) == 38 and len({c.id for c in CASES}) == 40
    assert sum(c.kind == "cmd" for c in CASES) == 32 and sum(c.kind == "model" for c in CASES) == 8
    assert sum(c.status == FIXED for c in CASES) == 15 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 25
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- the mutation pass: each real input cut, with a word dropped, doubled or garbled ----

GARBLES = ("[1]", "/usr/bin/numactl", "/opt/x$", "${MODEL}", "--ep", "get", "#")  # a word garbled also to these


def _text_mutations(text: str, rng: random.Random) -> list[str]:
    """The paste itself: cut anywhere, a line dropped, a job line, a folder prompt or a comment put around it."""
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    lines = text.split("\n")
    dropped = ["\n".join(lines[:k] + lines[k + 1:]) for k in range(min(len(lines), 2))] if len(lines) > 1 else []
    return [*cuts, *dropped, "[1]  + 4242 killed     " + text, "/opt/x$ " + text, "export A=1 # a\n" + text,
            "models:\n  m:\n    cmd: " + text.replace("\n", " ")]


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"][::3], ids=lambda c: c.id)
def test_mutated_real_commands_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for m in mutations(split_command(c.text), rng, GARBLES):
        rc, _, err = run_cli("check", *hardware_args(c), *version_args(c), "--", *m)
        one_line_or_answer(rc, err, (c.id, m))
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c), *version_args(c))
        one_line_or_answer(rc, err, (c.id, t[:80]))


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "model"], ids=lambda c: c.id)
def test_mutated_real_pastes_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c))
        one_line_or_answer(rc, err, (c.id, t[:80]))


# ---- the text around a command (engines/shell_words.py) and wrappers (engines/command.py) ----

@pytest.mark.parametrize("text,argv", [
    # zsh Src/jobs.c printjob, a job's line: [N], the current-job mark, with -l the pid, the message, the command
    ("[1] abort  vmlx serve m", ["vmlx", "serve", "m"]),
    ("[1]  + 4242 killed     mlx_lm.server --model m", ["mlx_lm.server", "--model", "m"]),
    ("[2]  - segmentation fault (core dumped)  llama-server -m a.gguf", ["llama-server", "-m", "a.gguf"]),
    # PS1='\\w\\$ ': the folder alone before the mark
    ("/opt/llama.cpp$ build/bin/llama-cli -m a.gguf", ["build/bin/llama-cli", "-m", "a.gguf"]),
    ("~$ vllm serve q", ["vllm", "serve", "q"]),
    # a comment after a script's assignment (bash manual, "Comments"); a `#` inside a word or quotes stays, and an
    # unquoted expansion is split into words, its `#` one of them
    ("export A=1 # the first\nB='x # y'\nvllm serve $B --port ${A}", ["A=1", "vllm", "serve", "x", "#", "y", "--port",
                                                                      "1"]),
    ("export A=1 # the first\nB='x # y'\nvllm serve \"$B\"", ["A=1", "vllm", "serve", "x # y"]),
    ("export A=x#y\nvllm serve $A", ["A=x#y", "vllm", "serve", "x#y"]),
])
def test_the_text_around_a_pasted_command(text, argv):
    assert split_command(text) == argv


@pytest.mark.parametrize("text", ["[1] foo vllm serve q", "/opt/x$y vllm serve q", "/usr/bin/vllm serve q"])
def test_words_that_only_look_like_the_new_forms_stay(text):
    assert split_command(text) == text.split()


@pytest.mark.parametrize("argv,engine", [
    (["/usr/bin/numactl", "--cpunodebind=0", "--membind=0", "/usr/bin/llama-server", "-m", "a.gguf"], ["/usr/bin/llama-server", "-m", "a.gguf"]),
    (["/usr/bin/env", "A=1", "/usr/bin/nice", "-n", "5", "vllm", "serve", "q"], ["vllm", "serve", "q"]),
    (["/usr/bin/sudo", "-u", "me", "ollama", "serve"], ["ollama", "serve"]),
])
def test_a_wrapper_named_by_its_path_is_that_wrapper(argv, engine):
    assert list(unwrap(argv).engine_argv) == engine


# ---- llama-swap configs (engines/command.py) ----

def test_a_llama_swap_config_gives_the_command_llama_swap_runs():
    text = ("startPort: 9000\nmacros:\n  srv: /app/llama-server --port ${PORT}\nmodels:\n  b:\n    cmd: |\n      ${srv}\n"
            "      # -c 4096\n      -m /m/${MODEL_ID}.gguf \\\n      -c 8192\n  a:\n    macros:\n      srv: /x/llama-server\n"
            "    cmd: ${srv} --port ${PORT} -m /m/a.gguf\n")
    hint = compose_hint(text)
    # b is second in id order: 9001; its `# -c 4096` line dropped, the backslash line joined; a's own macro wins
    assert "`oomkit check -- /app/llama-server --port 9001 -m /m/b.gguf -c 8192` for its model 'b'" in hint, hint
    assert "1 more models: 'a'" in hint, hint


def test_a_folded_cmd_keeps_its_hashes_as_words():
    hint = compose_hint("models:\n  m:\n    cmd: >\n      llama-server -m /m/a.gguf # the model\n      -c 4096\n")
    assert "'#' the model -c 4096" in hint and "no comment" in hint, hint


def test_a_compose_service_is_still_a_compose_service():
    hint = compose_hint("services:\n  v:\n    image: vllm/vllm-openai:latest\n    command: --model q\n")
    assert "Docker Compose service" in hint, hint


# ---- the lms program's other commands, Python pasted as MODEL (engines/cmdline.py) ----

@pytest.mark.parametrize("sub,said", [("get", "downloads a model and loads none"), ("ls", "lists the downloaded"),
                                      ("server", "starts or stops the API server")])
def test_lms_commands_besides_load_are_refused_for_what_they_are(sub, said):
    with pytest.raises(OomkitError, match=said):
        parse_command(["lms", sub, "qwen/qwen3-8b"])
    assert parse_command(["lms", "load", "qwen/qwen3-8b", "-c", "8192"]).settings.n_ctx == 8192


def test_python_loaders_pasted_as_model():
    hint = python_call_hint('m, t = FastLanguageModel.from_pretrained(model_name="unsloth/Qwen3-8B", load_in_4bit=True)')
    assert "`oomkit check unsloth/Qwen3-8B --engine transformers --load-in-4bit`" in hint, hint
    hint = python_call_hint('pipe = FluxPipeline.from_pretrained("black-forest-labs/FLUX.1-dev")')
    assert "diffusers pipeline (FluxPipeline.from_pretrained)" in hint, hint
    hint = python_call_hint('m = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-8B", device_map="auto")')
    assert "transformers' from_pretrained" in hint and "Qwen/Qwen3-8B" in hint, hint


# ---- SGLang's --ep (engines/sglang/args.py), a shell variable as the model (model/resolve.py) ----

@pytest.mark.parametrize("version,ep", [("0.4.10", 4), ("0.5.23", 4)])
def test_sglang_ep_is_ep_size(version, ep):
    rc, out, err = run_cli("check", "--json", "--gpu", "4x H100", "--engine-version", version, "--",
                           "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-30B-A3B", "--tp", "4",
                           "--ep", str(ep))
    assert rc in (0, 1), err
    assert json.loads(out)["estimate"]["settings"]["ep_size"] == ep


@pytest.mark.parametrize("name", ["$MODEL", "${MODEL_NAME}"])
def test_an_unexpanded_shell_variable_is_no_model(name):
    rc, _, err = run_cli("check", name, "--gpu", "H100")
    assert rc == 2 and "is the shell variable" in err, err
    rc, _, err = run_cli("check", "--gpu", "H100", "--", "vllm", "serve", name)
    assert rc == 2 and "is the shell variable" in err, err
