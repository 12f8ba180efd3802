"""Real users' input, seventh sweep: engine commands, model names and hub URLs copied from public GitHub issues and
pull requests (each cited), favouring derived and quantized repos (AWQ, GPTQ, AutoRound, NVFP4, FP8-dynamic,
bnb-4bit, MLX -4bit/-8bit, unsloth's GGUF) and the newest models, run through `oomkit check`, the command quoted as
MODEL, `fit`, `plan`, then mutated. None of their threads is in sweeps 1 to 6 or the held-out name sets.

Measured (2026-12-06), before this sweep's changes: 60 real inputs (34 commands; 25 model names, folders or hub URLs
and 1 Modelfile pasted as MODEL) from 56 public threads; 14 answered wrong (a wrong refusal, one for the wrong
reason, a hint that leads to another refusal, a file type the name does not say, a folder's publisher dropped). 7 are
in the model-name readers (model/names.py, model/resolve.py) and are fixed here (FIXED); 7 need the command
splitter, vLLM's flag table or the Ollama Modelfile reader: the Modelfile's (ol13101: its projector FROM named as
the model) is fixed in engines/ollama/args.py modelfile_hint, vLLM's dotted -cc keys (v40955) and vllm-ascend's
`-q ascend` (ascend6481) in engines/vllm, and four prompts copied with the command in engines/shell_words.py (bash's
PS2 `> ` before continued lines, v37858; a reply's `> ` before a root prompt, sg8344; `user@host:` with its `$` lost,
gfx906pr45; a `$` glued to the program, lc23398) (FIXED): none is left wrong.
"""

from __future__ import annotations

import json
import random

import pytest

from oomkit.engines.shell_words import split_command
from oomkit.model import names
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

# Not verbatim: none (prompts, quote marks and the cut ends are kept as posted; where a thread holds two inputs,
# sglang#3194's commands, ollama#13366's, sglang#7482's and omlx#592's names, each is a case). Hardware: as the thread
# names it or its log shows it; where it names none, a card of the kind the thread implies, on which no expectation
# below depends. Versions: as the thread states them; where a flag's reading depends on it and the thread gives a date
# only, the release of that date (vLLM 0.7.0 for sglang#3194, 0.10.2 for vllm-gfx906#45's "0.10.2.dev756+gfx906").
CASES = [
    # ---- vLLM ----
    # v37858: bash's continuation prompt `> ` before each line (was: "unrecognized arguments: qwen3 hermes": the
    # `> ` lines are dropped, their values kept); --served-model-name names no weights
    Case('v37858', 'https://github.com/vllm-project/vllm/issues/37858', 'cmd', '2x RTX 4090', '0.18.0', FIXED,
         'root@b20654c00b62:/app# python -m vllm.entrypoints.openai.api_server \\\n>     --model=/app/model \\\n>     --block-size=32 \\\n>     --max-model-len=120000 \\\n>     --gpu-memory-utilization 0.85 \\\n>     --served-model-name=Qwen3.5-27B-FP8 \\\n>     --port=10105 \\\n>     --host=0.0.0.0 \\\n>     --tensor-parallel-size=2 \\\n>     --reasoning-parser qwen3 \\\n>     --enable-auto-tool-choice \\\n>     --tool-call-parser hermes \\\n>     --api-key=K7mP9xQ2vR4n',
         ('refuses', "unknown model '/app/model'")),
    # v40955: vLLM's dotted `-cc.pass_config.X=...` (--compilation-config's -cc alias, FlexibleArgumentParser's
    # dot notation) was refused as an unknown flag before the model was read
    Case('v40955', 'https://github.com/vllm-project/vllm/issues/40955', 'cmd', '8x H200', None, FIXED,
         'export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1\nvllm serve /model \\\n--host 0.0.0.0 \\\n  --port 8100 \\\n  --trust-remote-code \\\n  --kv-cache-dtype fp8 \\\n  --block-size 256 \\\n  --enable-expert-parallel \\\n  -cc.pass_config.fuse_allreduce_rms=False \\\n  --tensor-parallel-size 8 \\\n  --data-parallel-size 2 \\\n  --data-parallel-size-local 1 \\\n  --nnodes 2 \\\n  --node-rank 0 \\\n  --master-addr  $master_ip \\\n  --max-model-len 800000 \\\n  --gpu-memory-utilization 0.95 \\\n  --max-num-seqs 512 \\\n  --max-num-batched-tokens 512 \\\n  --no-enable-flashinfer-autotune \\\n  --compilation-config \'{"mode": 0, "cudagraph_mode": "FULL_DECODE_ONLY"}\' \\\n  --tokenizer-mode deepseek_v4 \\\n  --tool-call-parser deepseek_v4 \\\n  --enable-auto-tool-choice \\\n  --reasoning-parser deepseek_v4',
         ('refuses', "unknown model '/model'")),
    # v22303: --enforce_eager is a BooleanOptionalAction (vllm 0.9.2 arg_utils): `true` is one positional too
    # many, as vLLM's own argparse says
    Case('v22303', 'https://github.com/vllm-project/vllm/issues/22303', 'cmd', '2x A100', '0.9.2', RIGHT,
         'export  CUDA_VISIBLE_DEVICES=1,2\n\nvllm serve /mnt/general/models/Qwen3-30B-A3B-Instruct-2507-FP8  \\\n--served-model-name Qwen3-30B-A3B-Instruct-2507-FP8 \\\n--tensor-parallel-size 2 \\\n--pipeline-parallel-size 1 \\\n--gpu-memory-utilization  0.9 \\\n--port 8011 \\\n--trust-remote-code \\\n--max-model-len 64000 \\\n--enforce_eager true ',
         ('refuses', 'unrecognized arguments: true')),
    # v16128: OPEA's "-int4-AutoRound-awq-sym" (was: unknown model)
    Case('v16128', 'https://github.com/vllm-project/vllm/issues/16128', 'cmd', 'A10', '0.8.3', FIXED,
         'HF_TOKEN=XX  VLLM_USE_V1=0 vllm serve OPEA/Mistral-Small-3.1-24B-Instruct-2503-int4-AutoRound-awq-sym \\\n--tensor-parallel-size 1  --max-model-len 128 --gpu-memory-utilization 0.95   --distributed-executor-backend ray \\\n--hf-config-path mistralai/Mistral-Small-3.1-24B-Instruct-2503   --tokenizer mistralai/Mistral-Small-3.1-24B-Instruct-2503  \\\n --served-model-name mistral  ',
         ('reads', {'engine': 'vllm', 'model': 'OPEA/Mistral-Small-3.1-24B-Instruct-2503-int4-AutoRound-awq-sym', 'ctx': 128, 'settings': {'tensor_parallel_size': 1}})),
    Case('v13284', 'https://github.com/vllm-project/vllm/issues/13284', 'cmd', 'RTX 4090', '0.7.2', RIGHT,
         'VLLM_USE_V1=1 python3 -m vllm.entrypoints.openai.api_server --model  Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4  --tokenizer Qwen/Qwen2.5-14B-Instruct --host "0.0.0.0" --port 5000 --gpu-memory-utilization 0.98 --served-model-name "Qwen2.5-14B-VLLM" --max-num-batched-tokens 32768 --max-num-seqs 256 --max_model_len 32768 --generation-config config',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-14B-Instruct-GPTQ-Int4', 'ctx': 32768, 'settings': {'max_num_seqs': 256}})),
    Case('v53836', 'https://github.com/vllm-project/vllm/issues/53836', 'cmd', 'DGX Spark', '0.27.1', RIGHT,
         '(vllm) raymondlo84@spark-ray:~/spark_serving/vllm$ vllm serve nvidia/Gemma-4-26B-A4B-NVFP4   --kv-cache-dtype fp8   --gpu-memory-utilization 0.8   --max-num-seqs 8   --load-format fastsafetensors   --enable-prefix-caching   --max-num-batched-tokens 8192   --tensor-parallel-size 1   --enable-auto-tool-choice   --tool-call-parser gemma4   --chat-template examples/tool_chat_template_gemma4.jinja   --reasoning-parser gemma4   --speculative-config \'{"model":"google/gemma-4-26B-A4B-it-assistant","num_speculative_tokens":4}\'',
         ('reads', {'engine': 'vllm', 'model': 'Gemma-4-26B-A4B-NVFP4', 'settings': {'kv_cache_dtype': 'fp8', 'max_num_seqs': 8}})),
    # rocm832: no version given: the newest, where --swap-space and --max-seq-len-to-capture are gone
    Case('rocm832', 'https://github.com/ROCm/vllm/pull/832', 'cmd', '8x MI300X', None, RIGHT,
         'VLLM_ROCM_USE_AITER_PAGED_ATTN=1 TRITON_HIP_PRESHUFFLE_SCALES=1 vllm serve /data/models/Llama-4-Maverick-17B-128E-Instruct-FP8 --host localhost --port 8000 --tensor-parallel-size 8 --swap-space 64 --max-model-len 12000 --max-num-seqs 1024 --kv-cache-dtype fp8 --gpu-memory-utilization 0.97 --max-seq-len-to-capture 12000 --max-num-batched-tokens 131072 --no-enable-prefix-caching --async-scheduling --compilation-config \'{"cudagraph_mode":"FULL"}\'',
         ('refuses', '--max-seq-len-to-capture: last read in the 0.10.2 wheel')),
    # ascend6481: `-q ascend` is vllm-ascend's quantization (an Ascend NPU plugin), was refused as upstream vLLM would
    # refuse it rather than as a device oomkit does not model
    Case('ascend6481', 'https://github.com/vllm-project/vllm-ascend/issues/6481', 'cmd', '8x 64GiB', None, FIXED,
         'vllm serve /mnt/models/Qwen2.5-72B-Instruct-W4A16  --served-model-name Qwen2.5-72B-Instruct-W4A16  -q ascend --trust_remote_code',
         ('refuses', 'vllm-ascend')),
    # v42147: the thread: "always go out of memory" on the 4090
    Case('v42147', 'https://github.com/vllm-project/vllm/issues/42147', 'cmd', 'RTX 4090', '0.20.1', RIGHT,
         '(z3) z@z3:~$ VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit --gpu-memory-utilization 0.6 --kv-cache-dtype fp8 --max-model-len 65536 --enable-prefix-caching --reasoning-parser qwen3 --enable-auto-tool-choice --tool-call-parser qwen3_coder --language-model-only --cpu-offload-gb 6',
         ('reads', {'engine': 'vllm', 'model': 'cyankiwi/Qwen3.6-35B-A3B-AWQ-4bit', 'ctx': 65536, 'settings': {'kv_cache_dtype': 'fp8'}, 'fits': False})),
    # gfx906pr45: the conda environment and a prompt ending in `: ` with no `$` (was: "unknown engine command
    # '(base)'")
    Case('gfx906pr45', 'https://github.com/nlzy/vllm-gfx906/pull/45', 'cmd', '4x MI50', '0.10.2', FIXED,
         "(base) eddie@eddie-Standard-PC-Q35-ICH9-2009: vllm serve '/mnt/models/vllm_models/Qwen3-Next-80B-A3B-Thinking-AWQ-8bit/' --tensor-parallel-size 4 --max-model-len 131072 --max-num-batched-tokens 7168 --max-num-seqs 80 --gpu-memory-utilization 0.95 -O 3",
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next-80B-A3B-Thinking-AWQ-8bit', 'ctx': 131072, 'settings': {'tensor_parallel_size': 4}})),
    # backport36: Qwen3.8-Flash-Next is not in the catalog
    Case('backport36', 'https://github.com/wtdcode/vllm-backport/issues/36', 'cmd', '8x RTX 4090', None, RIGHT,
         'vllm serve /models/wtdcode/Qwen3.8-Flash-Next-AWQ-W4A16 \\\n    --served-model-name Qwen/Qwen3.8-flash-next \\\n    --max-num-seqs 32 \\\n    --max-model-len 262144 \\\n    --gpu-memory-utilization 0.92 \\\n    --tensor-parallel-size 4 \\\n    --pipeline-parallel-size 2 \\\n    --enable-auto-tool-choice \\\n    --tool-call-parser qwen3_coder \\\n    --reasoning-parser qwen3 \\\n    --trust-remote-code \\\n    --enable-expert-parallel \\\n    --compilation-config \'{"mode": 0, "cudagraph_mode": "FULL_DECODE_ONLY"}\' \\\n    --speculative-config \'{"method":"mtp","num_speculative_tokens":3}\' \\\n    --block-size 800 \\\n    --distributed-executor-backend ray \\\n    --port 18100',
         ('refuses', 'no such file: /models/wtdcode/Qwen3.8-Flash-Next-AWQ-W4A16')),
    # qvl1492: `--enable-expert-paralle`: argparse's allow_abbrev, which vLLM's FlexibleArgumentParser keeps
    Case('qvl1492', 'https://github.com/QwenLM/Qwen3-VL/issues/1492', 'cmd', '8x H100', None, RIGHT,
         '# FP8 requires NVIDIA H100+ and CUDA 12+\npython -m vllm.entrypoints.openai.api_server \\\n  --model Qwen/Qwen3-VL-235B-A22B-Instruct\\\n  --served-model-name Qwen/Qwen3-VL-235B-A22B-Instruct \\\n  --tensor-parallel-size 8 \\\n  --mm-encoder-tp-mode data \\\n  --enable-expert-paralle \\\n  --host 0.0.0.0 \\\n  --port 22002 \\\n  --dtype bfloat16 \\\n  --gpu-memory-utilization 0.70 \\\n  --quantization fp8 \\\n  --distributed-executor-backend mp',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL 235B-A22B Instruct', 'settings': {'tensor_parallel_size': 8, 'quantization': 'fp8'}})),
    # qvl1353: a folder in the working directory named without ./ (was: unknown model)
    Case('qvl1353', 'https://github.com/QwenLM/Qwen3-VL/issues/1353', 'cmd', '8x A100', None, FIXED,
         'CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 vllm serve "Qwen2.5-VL-72B-Instruct-AWQ" --port 8080 --dtype float16 --tensor-parallel-size 8 --cpu-offload-gb 0 --gpu-memory-utilization 0.80 --max-model-len 128000 --api-key abc123 --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser hermes --trust-remote-code',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-VL-72B-Instruct-AWQ', 'ctx': 128000, 'settings': {'tensor_parallel_size': 8}})),
    # sg3194b: vLLM 0.7.0 (the thread's date) still reads --num-scheduler-steps
    Case('sg3194b', 'https://github.com/sgl-project/sglang/issues/3194', 'cmd', 'A10', '0.7.0', RIGHT,
         'python -m vllm.entrypoints.openai.api_server --model unsloth/phi-4-unsloth-bnb-4bit --disable-log-requests --num-scheduler-steps 10 --max_model_len 4096',
         ('reads', {'engine': 'vllm', 'model': 'unsloth/phi-4-unsloth-bnb-4bit', 'ctx': 4096, 'quant': 'bnb-nf4'})),
    # ---- SGLang ----
    # sg5858: --model: argparse's prefix of --model-path
    Case('sg5858', 'https://github.com/sgl-project/sglang/issues/5858', 'cmd', '4x H100', '0.4.6.post2', RIGHT,
         'python3 -m sglang.launch_server --model Qwen/Qwen3-235B-A22B-FP8 --tp 4 --reasoning-parser qwen3',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-235B-A22B-FP8', 'settings': {'tp_size': 4}})),
    # sg36664: MODEL_PATH set on the line before, a placeholder
    Case('sg36664', 'https://github.com/sgl-project/sglang/pull/36664', 'cmd', '8x B200', None, RIGHT,
         'MODEL_PATH=/path/to/qwen3.8-max\n\nPYTHONUNBUFFERED=1 python3 -m sglang.launch_server \\\n  --model-path "${MODEL_PATH}" \\\n  --served-model-name qwen-max \\\n  --host 0.0.0.0 \\\n  --port 10000 \\\n  --tp-size 8 \\\n  --ep-size 1 \\\n  --trust-remote-code \\\n  --quantization modelopt_mixed \\\n  --dtype bfloat16 \\\n  --kv-cache-dtype bfloat16 \\\n  --context-length 262144 \\\n  --attention-backend trtllm_mha \\\n  --fp4-gemm-backend flashinfer_cutlass \\\n  --moe-runner-backend flashinfer_cutlass \\\n  --mem-fraction-static 0.8 \\\n  --max-running-requests 128 \\\n  --chunked-prefill-size 8192',
         ('refuses', 'no such file: /path/to/qwen3.8-max')),
    # sg8344: a reply's `> ` quote before a root prompt (was: "unknown engine command 'root@ad0cfc852c36:/sgl-
    # workspace/sglang#'")
    Case('sg8344', 'https://github.com/sgl-project/sglang/pull/8344', 'cmd', '8x H20-3e', '0.4.9.post3', FIXED,
         '> root@ad0cfc852c36:/sgl-workspace/sglang# python3 -m sglang.launch_server --model /data/Qwen3-Coder-480B-A35B-Instruct-FP8  --tp 8 --trust-remote-code --port 30003  --host 0.0.0.0 --mem-fraction-static 0.7',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-Coder-480B-A35B-Instruct-FP8', 'settings': {'tp_size': 8}})),
    Case('sg3194a', 'https://github.com/sgl-project/sglang/issues/3194', 'cmd', 'A10', None, RIGHT,
         'python -m sglang.launch_server --model-path unsloth/phi-4-unsloth-bnb-4bit --mem-fraction-static 0.5 --load-format bitsandbytes',
         ('reads', {'engine': 'sglang', 'model': 'unsloth/phi-4-unsloth-bnb-4bit', 'quant': 'bnb-nf4'})),
    # sg18216: a script's variables, set outside the excerpt
    Case('sg18216', 'https://github.com/sgl-project/sglang/issues/18216', 'cmd', '8x H100', None, RIGHT,
         'nohup python -m sglang.launch_server \\\n    --model-path ./$model_name \\\n    --served-model-name $model_name \\\n    --api-key xxx \\\n    --host 0.0.0.0 \\\n    --port ${SERVICE_PORT} \\\n    --context-length 131072 \\\n    --max-running-requests 64 \\\n    --tp-size $gpu_count \\\n    --mem-fraction-static 0.9 \\\n    --chunked-prefill-size 4096 \\\n    --stream-interval 10 \\\n    --reasoning-parser qwen3 \\\n    --speculative-algorithm EAGLE3 \\\n    --speculative-draft-model-path ./Qwen3-235B-A22B-Thinking-2507-Speculator-Eagle3 \\\n    --speculative-num-steps 5 \\\n    --speculative-eagle-topk 1 \\\n    --speculative-num-draft-tokens 6 \\\n    --log-requests \\\n    --log-requests-level 1 \\\n    --log-level info \\\n    --decode-log-interval 1000 \\\n    --show-time-cost \\\n    > $log_file 2>&1 &',
         ('refuses', "argument --tp-size: invalid int value: '$gpu_count'")),
    Case('sg5402', 'https://github.com/sgl-project/sglang/issues/5402', 'cmd', '2x MI300X', '0.4.5', RIGHT,
         'python3 -m sglang.launch_server --model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --tp 2 --context-length 65536 --port 8000 --mem-fraction-static 0.8\n',
         ('reads', {'engine': 'sglang', 'model': 'Llama 4 Scout', 'ctx': 65536, 'settings': {'tp_size': 2}})),
    # sg4848: run in the background (a trailing `&`)
    Case('sg4848', 'https://github.com/sgl-project/sglang/pull/4848', 'cmd', 'H100', '0.4.4.post3', RIGHT,
         'python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct &',
         ('reads', {'engine': 'sglang', 'model': 'Llama 3.1 8B Instruct', 'settings': {'tp_size': 1}})),
    # recall43: a folder named after the catalog model
    Case('recall43', 'https://github.com/Agent-RL/ReCall/issues/43', 'cmd', '4x A100', None, RIGHT,
         'python3 -m sglang.launch_server \\\n        --served-model-name ReSearch \\\n        --model-path xxx/Models/Qwen/Qwen2.5-1.5B-Instruct \\\n        --tp 4 \\\n        --context-length 6000 \\\n        --enable-metrics \\\n        --dtype bfloat16 \\\n        --host 127.0.0.1 \\\n        --port 80 \\\n        --trust-remote-code \\\n        --disable-overlap \\\n        --disable-radix-cache \\\n        --disable-cuda-graph \\\n        --mem-fraction-static 0.7',
         ('reads', {'engine': 'sglang', 'model': 'Qwen2.5 1.5B Instruct', 'ctx': 6000, 'settings': {'tp_size': 4}})),
    # ---- llama.cpp ----
    # ik675: ik_llama.cpp's IQ4_K file (was: "its name says zai-org/GLM-4.5-Air:IQ4_K: give that", which is then
    # refused as ik_llama.cpp's)
    Case('ik675', 'https://github.com/ikawrakow/ik_llama.cpp/issues/675', 'cmd', 'RTX 3090', None, FIXED,
         './llama-server -m /xxx/GLM-4.5-Air/IQ4_K/GLM-4.5-Air-IQ4_K-00001-of-00002.gguf --no-mmap -b 2048 -ub 1024 -ngl 22 --n-cpu-moe 29 -rtr -c 8192 -fmoe -fa --jinja',
         ('refuses', "is ik_llama.cpp's")),
    # mistralrs1137: an Ollama blob copied out by its digest: nothing in the name
    Case('mistralrs1137', 'https://github.com/EricLBuehler/mistral.rs/issues/1137', 'cmd', 'RTX 4080', 'b4702', RIGHT,
         'llama-cli -ngl 99 -m sha256-6e9f90f02bb3b39b59e81916e8cfce9deb45aeaeb9a54a5be4414486b907dc1e -cnv',
         ('refuses', "unknown model 'sha256-6e9f90f0")),
    # lc23398: a `$` prompt with no space after it (was: "unknown engine command '$llama-server'")
    Case('lc23398', 'https://github.com/ggml-org/llama.cpp/pull/23398', 'cmd', '128GiB', None, FIXED,
         '$llama-server -m models/Gemma4-31B-Q8_0.gguf -md models/mtp-gemma-4-31B-it.gguf -c 16384 --spec-type draft-mtp --spec-draft-n-max 4 --port 18080',
         ('refuses', 'no such file: models/Gemma4-31B-Q8_0.gguf')),
    # ---- Ollama ----
    # ol13366a: unsloth's 1M-context YaRN variant: not the catalog's config
    Case('ol13366a', 'https://github.com/ollama/ollama/issues/13366', 'model', 'RTX 4090', None, RIGHT,
         'hf.co/unsloth/Qwen3-VL-30B-A3B-Thinking-1M-GGUF:Q4_K_M',
         ('refuses', "unknown model 'unsloth/Qwen3-VL-30B-A3B-Thinking-1M-GGUF'")),
    Case('ol13366b', 'https://github.com/ollama/ollama/issues/13366', 'model', 'RTX 4090', None, RIGHT,
         'hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-1M-GGUF:Q4_K_M',
         ('refuses', "unknown model 'unsloth/Qwen3-Coder-30B-A3B-Instruct-1M-GGUF'")),
    Case('glmedge7', 'https://github.com/zai-org/GLM-Edge/issues/7', 'cmd', 'RTX 4090', None, RIGHT,
         '# ollama run hf.co/THUDM/glm-edge-1.5b-chat-gguf:Q4_0',
         ('refuses', "unknown model 'THUDM/glm-edge-1.5b-chat-gguf'")),
    # ol14631: a fine-tune: its base is not read from its name
    Case('ol14631', 'https://github.com/ollama/ollama/issues/14631', 'model', 'RTX 4090', None, RIGHT,
         'hf.co/HauhauCS/Qwen3.5-4B-Uncensored-HauhauCS-Aggressive:Q4_K_M',
         ('refuses', "unknown model 'HauhauCS/Qwen3.5-4B-Uncensored-HauhauCS-Aggressive'")),
    Case('ol14732', 'https://github.com/ollama/ollama/issues/14732', 'cmd', 'M4 Max 64GB', None, RIGHT,
         '$ ollama run hf.co/unsloth/Qwen3.5-35B-A3B-GGUF:Q8_0',
         ('reads', {'engine': 'ollama', 'model': 'Qwen3.5 35B-A3B'})),
    # ol13101: a Modelfile's two FROM lines: the model, then its vision projector (was: the hint names the mmproj
    # file)
    Case('ol13101', 'https://github.com/ollama/ollama/issues/13101', 'model', 'RTX 4090', None, FIXED,
         'FROM ./Qwen3VL-4B-Instruct-F16.gguf\nFROM ./mmproj-Qwen3VL-4B-Instruct-F16.gguf',
         ('refuses', 'oomkit check ./Qwen3VL-4B-Instruct-F16.gguf --engine ollama')),
    Case('ol18078', 'https://github.com/ollama/ollama/pull/18078', 'model', 'M4 Max 128GB', None, RIGHT,
         'qwen3.8-flash-next:125b-mlx',
         ('refuses', "unknown model 'qwen3.8-flash-next:125b-mlx'")),
    # ---- LM Studio ----
    Case('neo12117', 'https://github.com/neomjs/neo/issues/12117', 'cmd', 'M3 Max 128GB', None, RIGHT,
         'lms load gemma-4-31b-it --context-length 262144',
         ('reads', {'engine': 'llama.cpp', 'model': 'Gemma 4 31B', 'ctx': 262144})),
    # ---- MLX ----
    Case('mlxex1436', 'https://github.com/ml-explore/mlx-examples/issues/1436', 'cmd', 'M2 16GB', None, RIGHT,
         'mlx_lm.generate  --model mlx-community/Qwen2.5-7B-Instruct-4bit  --adapter-path ./weclone_adapters  --prompt "你是谁"',
         ('reads', {'engine': 'mlx', 'model': 'Qwen2.5 7B Instruct'})),
    # lotti3108: mlx_vlm's server is not modelled
    Case('lotti3108', 'https://github.com/matthiasn/lotti/pull/3108', 'cmd', 'M4 Max 64GB', None, RIGHT,
         '$ python -m mlx_vlm.server --model mlx-community/Qwen3.6-35B-A3B-8bit --port 8000',
         ('refuses', "unknown engine module 'python -m mlx_vlm.server'")),
    Case('mlx1304', 'https://github.com/ml-explore/mlx-lm/issues/1304', 'model', 'M4 Pro 48GB', None, RIGHT,
         'zaydiscold/Qwopus3.6-35B-A3B-v1-MLX-4bit',
         ('refuses', "unknown model 'zaydiscold/Qwopus3.6-35B-A3B-v1-MLX-4bit'")),
    # mlxserve120: "oQ4e": no known convention
    Case('mlxserve120', 'https://github.com/ddalcu/mlx-serve/issues/120', 'model', 'M5 Max 128GB', None, RIGHT,
         'https://huggingface.co/Jundot/Qwen3.6-35B-A3B-oQ4e-mtp',
         ('refuses', "unknown model 'Jundot/Qwen3.6-35B-A3B-oQ4e-mtp'")),
    # jan7722: Jan's MLX model folder name, no org (was: unknown model)
    Case('jan7722', 'https://github.com/janhq/jan/issues/7722', 'model', 'M4 24GB', None, FIXED,
         'Qwen3.5-9B-MLX-4bit',
         ('reads', {'model': 'Qwen3.5-9B-MLX-4bit'})),
    Case('exo1909', 'https://github.com/exo-explore/exo/pull/1909', 'model', 'M4 Max 64GB', None, RIGHT,
         'mlx-community/Qwen3.6-35B-A3B-8bit',
         ('reads', {'model': 'mlx-community/Qwen3.6-35B-A3B-8bit'})),
    Case('ccl38', 'https://github.com/nicedreamzapp/claude-code-local/pull/38', 'model', 'M4 Max 128GB', None, RIGHT,
         'divinetribe/Huihui-Qwen3-Coder-Next-Opus-4.6-Reasoning-Distilled-abliterated-4bit-mlx',
         ('refuses', "unknown model 'divinetribe/Huihui-Qwen3-Coder-Next-Opus-4.6-Reasoning-Distilled-abliterated-4bit-mlx'")),
    # ---- transformers / unsloth, names ----
    Case('unsloth3542', 'https://github.com/unslothai/unsloth/issues/3542', 'model', 'RTX 4090', None, RIGHT,
         'model, tokenizer = FastLanguageModel.from_pretrained(\n        model_name="unsloth/Qwen3-4B-Thinking-2507",\n        max_seq_length=2000,\n        load_in_4bit=True,\n        load_in_8bit=False,\n        fast_inference=True,\n        full_finetuning=False,\n        gpu_memory_utilization=0.8,\n    )',
         ('refuses', "this is Python code (transformers' from_pretrained(...))")),
    Case('unsloth4032', 'https://github.com/unslothai/unsloth/issues/4032', 'model', '48GiB', None, RIGHT,
         'Bahadir26/Qwen3-30B-A3B-Thinking-2507-bnb-4bit',
         ('reads', {'model': 'Bahadir26/Qwen3-30B-A3B-Thinking-2507-bnb-4bit'})),
    # hygon69: a Hygon DCU cookbook's local name (slimquant), no repo of Qwen's
    Case('hygon69', 'https://github.com/HYGON-AI/inference-cookbook-das/pull/69', 'model', '64GiB', None, RIGHT,
         'Qwen/Qwen3.5-35B-A3B-W8A8-INT8',
         ('refuses', "unknown model 'Qwen/Qwen3.5-35B-A3B-W8A8-INT8'")),
    Case('sg7482a', 'https://github.com/sgl-project/sglang/issues/7482', 'model', '2x RTX 3090', None, RIGHT,
         'https://huggingface.co/RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic',
         ('reads', {'model': 'RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic'})),
    Case('sg7482b', 'https://github.com/sgl-project/sglang/issues/7482', 'model', '2x RTX 3090', None, RIGHT,
         'https://huggingface.co/RedHatAI/gemma-3-27b-it-FP8-dynamic',
         ('reads', {'model': 'RedHatAI/gemma-3-27b-it-FP8-dynamic'})),
    Case('sg32156', 'https://github.com/sgl-project/sglang/issues/32156', 'model', 'RTX 5090', None, RIGHT,
         'unsloth/Qwen3.6-35B-A3B-NVFP4',
         ('reads', {'model': 'unsloth/Qwen3.6-35B-A3B-NVFP4'})),
    # ---- a second pass: MLX repos, LM Studio folders, llama.cpp files ----
    # omlx592a: unsloth's dynamic MLX mix: which layers keep more bits is not in the name, so the base model at N
    # bits is read, said to be a lower bound (names.py -UD-MLX-Nbit; sweep 20 holds its figures)
    Case('omlx592a', 'https://github.com/jundot/omlx/issues/592', 'model', 'M4 Pro 48GB', None, RIGHT,
         'unsloth/gemma-4-E4B-it-UD-MLX-4bit',
         ('reads', {'model': 'unsloth/gemma-4-E4B-it-UD-MLX-4bit'})),
    Case('omlx592b', 'https://github.com/jundot/omlx/issues/592', 'model', 'M4 Pro 48GB', None, RIGHT,
         'mlx-community/gemma-4-26b-a4b-6bit',
         ('reads', {'model': 'mlx-community/gemma-4-26b-a4b-6bit'})),
    Case('lms1803', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1803', 'model', 'M4 Max 64GB', None, RIGHT,
         'mlx-community/gemma-4-26b-a4b-it-mxfp4',
         ('reads', {'model': 'mlx-community/gemma-4-26b-a4b-it-mxfp4'})),
    Case('lms664', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/664', 'model', 'M4 Max 64GB', None, RIGHT,
         'https://huggingface.co/mlx-community/gemma-3-27b-it-4bit-DWQ',
         ('reads', {'model': 'mlx-community/gemma-3-27b-it-4bit-DWQ'})),
    Case('mlx729', 'https://github.com/ml-explore/mlx-lm/issues/729', 'model', 'M3 Ultra 512GB', None, RIGHT,
         'mlx-community/DeepSeek-V3.2-4bit',
         ('reads', {'model': 'mlx-community/DeepSeek-V3.2-4bit'})),
    # lms1556: LM Studio's catalog key
    Case('lms1556', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1556', 'model', 'M4 Max 36GB', None, RIGHT,
         'liquid/lfm2-24b-a2b',
         ('reads', {'model': 'liquid/lfm2-24b-a2b'})),
    # omlx327: mlx_lm.convert --q-mode mxfp8, read as the other MLX names are, and sized on --engine mlx
    # (was: unknown model, "unset HF_HUB_OFFLINE to look it up", though the catalog holds Qwen3-Embedding-8B)
    Case('omlx327', 'https://github.com/jundot/omlx/issues/327', 'model', 'M4 Max 64GB', None, FIXED,
         'mlx-community/Qwen3-Embedding-8B-mxfp8',
         ('reads', {'model': 'mlx-community/Qwen3-Embedding-8B-mxfp8'})),
    # mlx2309: LM Studio's models folder names the publisher (was: read as "Qwen/Qwen3-Embedding-8B-4bit-DWQ", a
    # repo that is not there)
    Case('mlx2309', 'https://github.com/ml-explore/mlx/issues/2309', 'model', 'M4 Max 64GB', None, FIXED,
         '/Users/guy/.lmstudio/models/mlx-community/Qwen3-Embedding-8B-4bit-DWQ',
         ('reads', {'model': 'mlx-community/Qwen3-Embedding-8B-4bit-DWQ'})),
    Case('mlx1242', 'https://github.com/ml-explore/mlx-lm/issues/1242', 'model', 'M4 Pro 24GB', None, RIGHT,
         'mlx-community/gemma-4-e4b-it-4bit',
         ('reads', {'model': 'mlx-community/gemma-4-e4b-it-4bit'})),
    Case('lc14915', 'https://github.com/ggml-org/llama.cpp/issues/14915', 'cmd', '4x RTX 4060', 'b5967', RIGHT,
         './llama.cpp/build/bin/llama-server     --model unsloth/Qwen3-Coder-480B-A35B-Instruct-GGUF/UD-Q2_K_XL/Qwen3-Coder-480B-A35B-Instruct-UD-Q2_K_XL-00001-of-00004.gguf   \\\n --threads -1     --ctx-size 20000          --temp 0.7     --min-p 0.0     --top-p 0.8     --top-k 20  \\\n   --repeat-penalty 1.05 --n-gpu-layers 200 -ot ".ffn_(up|down)_exps.=CPU" --jinja',
         ('refuses', 'its name says Qwen/Qwen3-Coder-480B-A35B-Instruct:UD-Q2_K_XL')),
    Case('lc12729', 'https://github.com/ggml-org/llama.cpp/issues/12729', 'cmd', 'A800 80GB', 'b5002', RIGHT,
         '$ ~/llama.cpp/build/bin/llama-server -m /models/Llama-3.3-70B-Instruct-Q8_0.gguf --port 8000 -t 8 -ngl 81 -c 15360 --jinja',
         ('refuses', 'its name says meta-llama/Llama-3.3-70B-Instruct:Q8_0')),
    # lc18446: a GGUF file of the user's own conversion, named without its file type (was: sized as Q4_K_M, a type
    # the name does not say)
    Case('lc18446', 'https://github.com/ggml-org/llama.cpp/issues/18446', 'cmd', 'RTX 3070', 'b7149', FIXED,
         'llama-cli -m ./qwen2.5-1.5b-instruct.gguf --lora ./qwen-lora.gguf',
         ('refuses', 'no such file: ./qwen2.5-1.5b-instruct.gguf')),
    Case('aeon4', 'https://github.com/AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-DFlash/issues/4', 'model', 'L40S', None, RIGHT,
         'https://huggingface.co/AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored',
         ('refuses', "unknown model 'AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored'")),
    # qvl719: the arguments without the program
    Case('qvl719', 'https://github.com/QwenLM/Qwen3-VL/issues/719', 'cmd', '2x RTX 4090', '0.7.2', RIGHT,
         '--model PointerHQ/Qwen2.5-VL-72B-Instruct-Pointer-AWQ --gpu_memory_utilization .95 --limit-mm-per-prompt',
         ('refuses', "unknown engine command '--model'")),
]

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


def _check(c: Case) -> None:
    """The harness's check (an engine command; a name's refusal), a name's reading (the model and its weight
    format) with --json."""
    what, want = c.expect
    if what != "reads" or c.kind != "model":
        check_case(c)
    if what != "reads":
        return
    args = ["check", c.text, "--json"] if c.kind == "model" else ["check", "--json", *version_args(c), "--",
                                                                   *split_command(c.text)]
    rc, out, err = run_cli(*args[:2], *hardware_args(c), *args[2:])
    one_line_or_answer(rc, err, c.id)
    assert rc in (0, 1), (c.url, err)
    e = json.loads(out)["estimate"]
    assert want["model"] in e["model"]["name"] and want.get("engine", e["engine"]) == e["engine"], (c.url, e["model"])
    if "quant" in want:
        assert e["model"]["weights_format"].upper() == want["quant"].upper(), (c.url, e["model"])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, _check)


def test_the_sweep_counts():
    assert len(CASES) == 60 and len({c.url for c in CASES}) == 56 and len({c.id for c in CASES}) == 60
    assert sum(c.kind == "cmd" for c in CASES) == 34
    assert sum(c.status == FIXED for c in CASES) == 14 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 46
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- the mutation pass: each real input cut, with a word dropped, doubled or garbled ----

def _text_mutations(text: str, rng: random.Random) -> list[str]:
    """The paste itself: cut anywhere, a line dropped, markdown or a prompt put around it."""
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    lines = text.split("\n")
    dropped = ["\n".join(lines[:k] + lines[k + 1:]) for k in range(min(len(lines), 2))] if len(lines) > 1 else []
    return [*cuts, *dropped, f"`{text}`", f"```\n{text}\n```", "> " + text.replace("\n", "\n> "),
            "(env) me@host:~$ " + text, "# " + text, text + " \\"]


GARBLES = ("`", "> ", "\\", "(env)", "-AWQ", ":UD-Q4_K_XL")  # a word garbled also to these


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"][::2], ids=lambda c: c.id)
def test_mutated_real_commands_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for m in mutations(split_command(c.text), rng, GARBLES):
        rc, _, err = run_cli("check", *hardware_args(c), *version_args(c), "--", *m)
        one_line_or_answer(rc, err, (c.id, m))
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c), *version_args(c))
        one_line_or_answer(rc, err, (c.id, t[:80]))


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "model"], ids=lambda c: c.id)
def test_mutated_real_names_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c))
        one_line_or_answer(rc, err, (c.id, t[:80]))


# ---- the name readers (model/names.py, model/resolve.py) ----

def test_opea_autoround_names_its_symmetry():
    # vllm#16128: OPEA's "-int4-AutoRound-awq-sym", auto-round's int4 group 128 packed for AWQ kernels
    d = names.derive("OPEA/Mistral-Small-3.1-24B-Instruct-2503-int4-AutoRound-awq-sym")
    assert d is not None and d.base_hf_id == "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
    assert (d.quantization_config["quant_method"], d.quantization_config["bits"]) == ("awq", 4)


@pytest.mark.parametrize("name,read", [
    ("Qwen2.5-VL-72B-Instruct-AWQ", "Qwen/Qwen2.5-VL-72B-Instruct-AWQ"),  # QwenLM/Qwen3-VL#1353
    ("Qwen3-30B-A3B-quantized.w4a16", "Qwen/Qwen3-30B-A3B-quantized.w4a16"),
])
def test_a_folder_named_without_its_path_is_read_by_its_name(name, read):
    rc, out, err = run_cli("check", name, "--engine", "vllm", "--gpu", "H100", "--json")
    assert rc in (0, 1), err
    e = json.loads(out)["estimate"]
    assert e["model"]["name"] == read and any("has no owner, so it is a folder" in w for w in e["warnings"])


@pytest.mark.parametrize("name", ["foo-AWQ", "Llama-3.3-70B-Instruct-abliterated", "qwen3.8-flash-next:125b-mlx"])
def test_a_bare_name_that_says_no_catalog_model_is_still_refused(name):
    rc, _, err = run_cli("check", name, "--gpu", "H100")
    assert rc == 2 and "unknown model" in err, err


def test_an_ik_llama_file_that_is_not_here_is_refused_for_its_type():
    # ik_llama.cpp#675: the hint no longer offers a name that is then refused
    rc, _, err = run_cli("check", "/xxx/GLM-4.5-Air/IQ4_K/GLM-4.5-Air-IQ4_K-00001-of-00002.gguf", "--gpu", "RTX 3090")
    assert rc == 2 and "is ik_llama.cpp's" in err and "give that to estimate it" not in err, err


def test_an_mlx_mxfp8_name_is_read_and_sized_on_mlx():
    # jundot/omlx#327: the name is read (mlx_lm.convert --q-mode mxfp8), and the mode sized as mx.quantize stores it
    # (e4m3 values, a ue8m0 scale per 32: 8.25 bits a weight, below the 8-bit affine build's 8.5)
    d = names.derive("mlx-community/Qwen3-Embedding-8B-mxfp8")
    assert d is not None and d.base_hf_id == "Qwen/Qwen3-Embedding-8B"
    assert (d.quantization_config["bits"], d.quantization_config["mode"]) == (8, "mxfp8")
    weights = {}
    for q in ("mxfp8", "8bit"):
        rc, out, err = run_cli("check", f"mlx-community/Qwen3-Embedding-8B-{q}", "--engine", "mlx", "--gpu",
                               "M4 Max 64GB", "--json")
        assert rc in (0, 1), err
        weights[q] = sum(u["weights_bytes"] for u in json.loads(out)["estimate"]["devices"])
    assert 0.95 < weights["mxfp8"] / weights["8bit"] < 1.0


def test_a_gguf_file_named_without_its_type_is_not_given_one():
    # llama.cpp#18446: `llama-cli -m ./qwen2.5-1.5b-instruct.gguf`, not on this machine
    rc, _, err = run_cli("check", "--gpu", "RTX 3070", "--", "llama-cli", "-m", "./qwen2.5-1.5b-instruct.gguf")
    assert rc == 2 and "but not the file's type: give Qwen/Qwen2.5-1.5B-Instruct:QUANT" in err, err
    rc, out, err = run_cli("check", "./qwen2.5-1.5b-instruct.gguf", "--quant", "F16", "--gpu", "RTX 3070", "--json")
    assert rc in (0, 1) and json.loads(out)["estimate"]["model"]["weights_format"] == "F16", err


def test_an_lm_studio_folder_keeps_its_publisher():
    rc, out, err = run_cli("check", "/Users/guy/.lmstudio/models/mlx-community/Qwen3-Embedding-8B-4bit-DWQ", "--engine",
                           "mlx", "--gpu", "M4 Max 64GB", "--json")
    assert rc in (0, 1), err
    assert json.loads(out)["estimate"]["model"]["name"] == "mlx-community/Qwen3-Embedding-8B-4bit-DWQ"
