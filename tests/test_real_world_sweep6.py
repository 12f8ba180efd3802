"""Real users' input, sixth sweep: engine commands and model names copied from public GitHub issues and pull requests
of 2025-2026 (each cited), run through `oomkit check`, the command quoted as MODEL, `fit`, `plan` and the web API,
then mutated (cut, words dropped, doubled, garbled; the paste cut, a line dropped, markdown or a loop put around it).
None of their threads is in sweeps 2 to 5 or the names held out (tests/test_names_heldout*.py).
What they brought out: the text people paste around a command (a conda environment before bash's prompt, macOS
zsh's `user@host dir %` prompt, a root shell's `# `, an issue template's "command line:" / "cmd:" label, a ``` span
on one line, an excerpt cut after a continuation backslash), llama.cpp's unified `llama serve` executable, a
llama-server `--models-preset` INI section pasted as MODEL, `-dio` (--direct-io), SGLang's `--device cpu` sized on a
GPU, a model folder typed with its trailing slash, and the names `-int4-mixed-AutoRound`, `-W4A16-AutoRound`,
`-4bit-GPTQ` and ExLlamaV3's `-exl3`.

Measured (2026-12-06): 61 real invocations (40 commands; 19 model names or hub URLs and 2 llama-server presets pasted
as MODEL) from 57 public threads; 22 answered wrong before (a wrong refusal or one for the wrong reason, a model or a
flag read wrong, a CPU run sized on a GPU): 20 are fixed here (FIXED), 2 are still wrong (STILL, a strict xfail with
its reason). vllm#15664's folder with its trailing slash, found on the way, is tests/fixtures/commands/
real_commands.jsonl's row, now read (a verdict, not "unknown model").
"""

from __future__ import annotations

import json
import random

import pytest

from oomkit.engines.cmdline import parse_command
from oomkit.engines.shell_words import split_command
from oomkit.errors import OomkitError
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

# Not verbatim: none (prompts, labels, quote marks, fences and the cut ends are kept as posted). Hardware: as the
# thread names it or its log shows it; where it names none, a card of the kind the thread implies, on which no
# expectation below depends (--vram where the thread's machine shares its RAM: Strix Halo, the Radeon
# 780M). Versions: as the thread states them; where a flag's reading depends on it and the thread gives a date only,
# the release of that date (vLLM 0.11.2 for vllm#29240, 0.10.1 for recipes#12's "v0.10.1.dev101", 0.9.2 for
# vllm-gfx906#18's "0.9.3.dev3", SGLang 0.4.10 for sglang#8552, 0.5.9 for sglang#20348's second command).
CASES = [
    # ---- llama.cpp ----
    # lc19906: a reply quoting a cmd.exe command: `> ` before every line, `^` continuing each
    Case('lc19906', 'https://github.com/ggml-org/llama.cpp/issues/19906', 'cmd', 'RTX 5090', 'b8157', RIGHT,
         '> .\\llama\\llama-server.exe ^\n>     --model .\\models\\unsloth\\Qwen3.5-35B-A3B\\Qwen3.5-35B-A3B-UD-Q4_K_XL.gguf ^\n>     --alias "Qwen3.5-35B" ^\n>     --jinja ^\n>     --ctx-size 229376 ^\n>     --parallel 1 ^\n>     -fa on ^\n>     -ub 2048 ^\n>     -b 2048 ^\n>     -ngl 99 ^\n>     --temp 0.7 ^\n>     --top-p 0.8 ^\n>     --top-k 20 ^\n>     --min-p 0.01 ^\n>     --presence-penalty 1.5 ^\n>     --repeat-penalty 1.0 ^\n>     --fit off ^\n>     -ot "\\.([3-9][0-9])\\.ffn_.*_exps.=CPU" ^\n>     -Cb 0xFF ^\n>     --cpu-strict 1 ^\n>     --threads 16 ^\n>     --cpu-range 0-15 ^\n>     --no-mmap ^\n>     --host 0.0.0.0 ^\n>     --port 9090 ^\n>     --verbose-prompt ^\n>     --log-verbosity 4 ^\n>     --chat-template-kwargs "{\\"enable_thinking\\": false}"',
         ('refuses', 'its name says Qwen/Qwen3.5-35B-A3B:UD-Q4_K_XL')),
    # lc19355: the issue template's "command line:" label before it (was: "unknown engine command 'command'"); -dio is common/arg.cpp's --direct-io
    Case('lc19355', 'https://github.com/ggml-org/llama.cpp/issues/19355', 'cmd', '96GiB', None, FIXED,
         'command line: /home/mark/App/llama.cpp/llamacpp/llama.cpp-rocm-master/llama-server -m /home/mark/Models/Q8/Qwen3-Coder-Next-UD-Q8_K_XL/Qwen3-Coder-Next-UD-Q8_K_XL-00001-of-00003.gguf --port 8090 --ctx-size 262144 --flash-attn on --no-mmap --temp 1 --top-p 0.95 --top-k 40 --min-p 0.01 --presence-penalty 0.0 --repeat-penalty 1.0 --frequency-penalty 0.0 --batch-size 2048 --ubatch-size 2048 --parallel 4 --cache-ram -1 --cache-type-k f16 --cache-type-v f16 --threads -1 --seed -1 -dio --no-webui --metrics --slot-save-path /home/mark/App/llama.cpp/cache --alias Qwen3-Coder-Next-UD-Q8_K_XL',
         ('refuses', 'its name says Qwen/Qwen3-Coder-Next:UD-Q8_K_XL')),
    Case('lc13329', 'https://github.com/ggml-org/llama.cpp/issues/13329', 'cmd', '2x MI100', 'b5287', RIGHT,
         './build/bin/llama-server -m models/gguf/Qwen3-30B-A3B-Q8_0.gguf -a Qwen3-30B-A3B-Q8_0.gguf -ngl 100 -sm layer -b 4096 -c 16384 --host [IP] --port [port] --api-key [key]',
         ('refuses', 'its name says Qwen/Qwen3-30B-A3B:Q8_0')),
    # lemonade32: bash's user@host:dir$ prompt; the -hf download's hub-cache path names unsloth/Qwen3-0.6B-GGUF's Q4_0
    Case('lemonade32', 'https://github.com/lemonade-sdk/llamacpp-rocm/issues/32', 'cmd', '16GiB', None, RIGHT,
         'x@x-box:~/Downloads/llama-b1066-ubuntu-rocm-gfx110X-x64$ ./llama-server -m /home/x/.cache/huggingface/hub/models--unsloth--Qwen3-0.6B-GGUF/snapshots/50968a4468ef4233ed78cd7c3de230dd1d61a56b/Qwen3-0.6B-Q4_0.gguf -ngl 55',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 0.6B', 'quant': 'Q4_0'})),
    # lc18035: router mode: the models come from --models-dir / --models-preset
    Case('lc18035', 'https://github.com/ggml-org/llama.cpp/issues/18035', 'cmd', 'Jetson AGX Orin 64GB', 'b7389', RIGHT,
         '/opt/llama.cpp/bin/llama-server --models-dir /opt/llama-models --models-autoload --models-max 0 --models-preset /opt/llama.cpp/etc/models.ini --host 127.0.0.1 --port 8087 --threads-http 4 --parallel 2 --no-webui --flash-attn on',
         ('refuses', 'command names no model')),
    Case('lc22364', 'https://github.com/ggml-org/llama.cpp/issues/22364', 'cmd', 'RTX 4090', 'b8931', RIGHT,
         '/opt/llama.cpp/bin/llama-server \\\n--host 127.0.0.1 \\\n--port 8080 \\\n--models-preset /etc/llama.cpp/models.ini \\\n--models-max 1 \\\n--models-autoload \\\n--api-key-file /etc/llama.cpp/api_keys \\\n--metrics',
         ('refuses', 'command names no model')),
    Case('lc25333', 'https://github.com/ggml-org/llama.cpp/issues/25333', 'cmd', 'RTX 4090', None, RIGHT,
         'llama-server.exe --models-preset models.ini --port 8085 --tools all',
         ('refuses', 'command names no model')),
    # pi8479: a --models-preset section pasted as MODEL (was: "unknown quant tag 'IQ4_XS\nb = 256...'")
    Case('pi8479', 'https://github.com/earendil-works/pi/pull/8479', 'model', 'RTX 4090', None, FIXED,
         '[qwen-27b]\nhf = unsloth/Qwen3.8-27B-GGUF:IQ4_XS\nb = 256\nub = 256\nctk = q8_0\nctv = q8_0\ntemp = 1.0\ntop-p = 0.95\ntop-k = 20\nmin-p = 0.0\nfitt = 128\nfa = 1\nngl = all\nno-mmap = true\nno-mmproj-offload = true',
         ('refuses', 'this is a llama-server models preset (--models-preset), not a model name: its [qwen-27b] runs as `oomkit check -- llama-server -hf unsloth/Qwen3.8-27B-GGUF:IQ4_XS -b 256 -ub 256 -ctk q8_0 -ctv q8_0')),
    # arandu5: [*] holds what every preset inherits (was: "no such file: version = 1 [*] ...")
    Case('arandu5', 'https://github.com/fredconex/Arandu/issues/5', 'model', 'RTX 5090', None, FIXED,
         'version = 1\n\n[*]\nflash-attn = on\nn-gpu-layers = 99\nc = 32768\njinja = true\nt = -1\nb = 2048\nub = 2048\n\n[Qwen3.5-35B-A3B]\nm = /models/unsloth_Qwen3.5-35B-A3B-GGUF_Qwen3.5-35B-A3B-UD-Q8_K_XL/unsloth_Qwen3.5-35B-A3B-GGUF_Qwen3.5-35B-A3B-UD-Q8_K_XL.gguf\nmmproj = /models/unsloth_Qwen3.5-35B-A3B-GGUF_Qwen3.5-35B-A3B-UD-Q8_K_XL/mmproj-BF16.gguf\nctx-size = 65536\ntemp = 1.0\ntop-p = 0.95\ntop-k = 20\nmin-p = 0.00',
         ('refuses', 'its [Qwen3.5-35B-A3B] runs as `oomkit check -- llama-server --flash-attn on --n-gpu-layers 99 -c 32768 --jinja')),
    # meta25: llama.cpp's unified `llama` executable (PR #23296): `llama serve` is llama-server (was: "unknown engine command 'llama'")
    Case('meta25', 'https://github.com/meta-models/meta-oss-cookbook/pull/25', 'cmd', 'RTX 5090', None, FIXED,
         'llama serve -hf meta-models/Muse-Glimmer-30B-GGUF --chat-template-kwargs \'{"reasoning_strength":"high"}\' -np 1 -a muse-glimmer',
         ('refuses', "unknown model 'meta-models/Muse-Glimmer-30B-GGUF'")),
    # hubdocs1580: -c left out: common_params n_ctx 0, the trained context (PR #16653)
    Case('hubdocs1580', 'https://github.com/huggingface/hub-docs/pull/1580', 'cmd', 'RTX 4090', None, RIGHT,
         ' llama-cli -hf bartowski/Llama-3.2-3B-Instruct-GGUF:Q8_0',
         ('reads', {'engine': 'llama.cpp', 'model': 'Llama 3.2 3B', 'ctx': 131072, 'quant': 'Q8_0'})),
    Case('ol9453', 'https://github.com/ollama/ollama/issues/9453', 'cmd', 'RTX 3060 Ti', 'b4798', RIGHT,
         'llama-cli.exe -m .\\Phi-4-mini-instruct-F16.gguf',
         ('refuses', 'its name says microsoft/Phi-4-mini-instruct:F16')),
    Case('unsloth5636', 'https://github.com/unslothai/unsloth/issues/5636', 'model', 'M5 Max 128GB', None, RIGHT,
         'unsloth/Qwen3.6-27B-MTP-GGUF:UD-Q4_K_XL',
         ('reads', {'engine': 'llama.cpp', 'model': 'unsloth/Qwen3.6-27B-MTP-GGUF', 'quant': 'UD-Q4_K_XL'})),
    # ---- LM Studio ----
    # lms2398: a file imported under a name of the user's
    Case('lms2398', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2398', 'cmd', 'M2 16GB', None, RIGHT,
         'lms load qwen3.5-4b-ollama --context-length 8192 --parallel 1 --identifier shared-qwen4-eval --ttl 600 -y',
         ('refuses', "unknown model 'qwen3.5-4b-ollama'")),
    # lms2301: LM Studio's catalog key, no hub repo
    Case('lms2301', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2301', 'model', 'RTX 5070 Ti', None, RIGHT,
         'google/gemma-4-12b-qat',
         ('refuses', "unknown model 'google/gemma-4-12b-qat'")),
    # ---- vLLM ----
    # v22140: a one-line ``` span around it (was: "unknown engine command '```CUDA_DEVICE_ORDER=PCI_BUS_ID'")
    Case('v22140', 'https://github.com/vllm-project/vllm/issues/22140', 'cmd', '3x RTX PRO 6000', '0.10.0', FIXED,
         '```CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1,2 vllm serve /mnt/2king/llama-models/zai-org/GLM-4.5-Air-FP8 --gpu-memory-utilization 0.94  --port 8001 --served-model-name GLM-4.5-Air --kv-cache-dtype fp8 --pipeline-parallel-size 3 --tensor-parallel-size 1```',
         ('reads', {'engine': 'vllm', 'model': 'GLM-4.5-Air-FP8', 'ctx': 131072, 'settings': {'pipeline_parallel_size': 3, 'tensor_parallel_size': 1, 'kv_cache_dtype': 'fp8'}})),
    # v28910: the conda environment before bash's prompt (was: "unknown engine command '(vllm)'")
    Case('v28910', 'https://github.com/vllm-project/vllm/issues/28910', 'cmd', '4x RTX 4090', '0.11.0', FIXED,
         '(vllm) cheng@cheng:~$ python -m vllm.entrypoints.openai.api_server \\\n--model /home/cheng/model/Qwen3-30B-A3B-Instruct-2507-FP8 \\\n--port 8000 \\\n--served-model-name Qwen3-30B-A3B-Instruct-2507 \\\n--tensor-parallel-size 4 \\\n--pipeline-parallel-size 1 \\\n--dtype auto \\\n--trust-remote-code \\\n--gpu-memory-utilization 0.90 \\\n--max-model-len 131072 \\\n--max-num-batched-tokens 32768 \\\n--enable-auto-tool-choice \\\n--tool-call-parser hermes \\\n--max-num-seqs 10',
         # read through the prompt, then refused as vLLM refused it: the thread's workers die building
         # Qwen3MoeDecoderLayer (moe_intermediate_size 768 / 4 = 192 against the 128-wide FP8 block, fp8.py
         # Fp8MoEMethod.create_weights; engines/vllm/quantization.py)
         ('refuses', "The output_size of gate's and up's weight = 192 is not divisible by weight quantization "
                     "block_n = 128")),
    # v17734: the same prompt; InternVL3 is not in the catalog
    Case('v17734', 'https://github.com/vllm-project/vllm/issues/17734', 'cmd', 'RTX 4090', '0.8.5.post1', FIXED,
         '(vllm) cheng@CHENG:~$ vllm serve OpenGVLab/InternVL3-38B-AWQ',
         ('refuses', "unknown model 'OpenGVLab/InternVL3-38B-AWQ'")),
    Case('v29240', 'https://github.com/vllm-project/vllm/pull/29240', 'cmd', '8x RTX PRO 6000', '0.11.2', RIGHT,
         'vllm serve \\\n  "zai-org/GLM-4.6-FP8" \\\n  --tensor-parallel-size 8 \\\n  --tool-call-parser glm45 \\\n  --enable-auto-tool-choice \\\n  --enable-expert-parallel \\\n  --reasoning-parser glm45 \\\n  --max-model-len 32768',
         ('reads', {'engine': 'vllm', 'model': 'GLM-4.6-FP8', 'ctx': 32768, 'settings': {'tensor_parallel_size': 8}})),
    # gpustack3836: --max-model-len given twice: argparse keeps the last
    Case('gpustack3836', 'https://github.com/gpustack/gpustack/issues/3836', 'cmd', '4x RTX PRO 6000', '0.11.2', RIGHT,
         'vllm serve /var/lib/gpustack/cache/huggingface/openai/gpt-oss-120b --max-model-len 8192 --tensor-parallel-size 2 --pipeline-parallel-size 2 --distributed-executor-backend ray --max-model-len=32768 --tool-call-parser=openai --enable-auto-tool-choice --async-scheduling --host 192.168.8.141 --port 40044 --served-model-name gpt-oss-120b',
         ('reads', {'engine': 'vllm', 'model': 'gpt-oss 120B', 'ctx': 32768, 'settings': {'tensor_parallel_size': 2, 'pipeline_parallel_size': 2}})),
    # euroeval1120: a root prompt (`...# `)
    Case('euroeval1120', 'https://github.com/EuroEval/EuroEval/issues/1120', 'cmd', '2x H100', '0.10.1.1', RIGHT,
         'mike@euroeval:/project# python3 -m vllm.entrypoints.openai.api_server \\\n    --model openai/gpt-oss-120b \\\n    --host 0.0.0.0 \\\n    --port 8000 \\\n    --tensor-parallel-size 2 \\\n    --gpu-memory-utilization 0.9',
         ('reads', {'engine': 'vllm', 'model': 'gpt-oss 120B', 'ctx': 131072, 'settings': {'tensor_parallel_size': 2}})),
    # recipes657: the review's excerpt ends on a continuation backslash (was: "No escaped character")
    Case('recipes657', 'https://github.com/vllm-project/recipes/pull/657', 'cmd', 'B300', '0.24.0', FIXED,
         '  vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 \\\n    --tensor-parallel-size 1 \\\n    --trust-remote-code \\\n    --kv-cache-dtype fp8 \\\n    --attention-backend flashinfer \\\n    --moe-backend marlin \\\n    --gpu-memory-utilization 0.92 \\\n    --max-model-len 262144 \\\n    --max-num-batched-tokens 8192 \\\n    --enable-chunked-prefill \\\n    --async-scheduling \\',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.6 35B-A3B', 'ctx': 262144, 'settings': {'kv_cache_dtype': 'fp8'}})),
    # recipes648: likewise cut after a backslash
    Case('recipes648', 'https://github.com/vllm-project/recipes/pull/648', 'cmd', 'RTX PRO 6000', '0.24.0', FIXED,
         '  vllm serve nvidia/Qwen3.6-27B-NVFP4 \\\n    --host 0.0.0.0 \\\n    --port 8000 \\',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.6 27B', 'ctx': 262144})),
    # recipes12: a root shell's `# ` prompt (was: "empty engine command after --"); the thread's own ValueError follows
    Case('recipes12', 'https://github.com/vllm-project/recipes/pull/12', 'cmd', '8x H20', '0.10.1', FIXED,
         '# vllm serve /tmp/model/Qwen3-Coder-480B-A35B-Instruct-FP8 --served-model-name Qwen3-Coder-480B-A35B-FP8 -dp=8  --enable-expert-parallel --enable-auto-tool-choice --tool-call-parser qwen3_coder --gpu-memory-utilization 0.95',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-Coder-480B-A35B-Instruct-FP8', 'ctx': 262144, 'settings': {'data_parallel_size': 8}, 'fits': False, 'warn': 'To serve at least one request'})),
    # kyuz5: an inline code span holding a line break inside --download-dir's value
    Case('kyuz5', 'https://github.com/kyuz0/amd-strix-halo-vllm-toolboxes/pull/5', 'cmd', 'Radeon 8060S', None, RIGHT,
         '`VLLM_USE_TRITON_AWQ=1 vllm serve Eslzzyl/Qwen3-4B-Instruct-2507-AWQ --host 0.0.0.0 --port 8000 --download-dir\nhome/matt/vllm-models --served-model-name qwen3-4b --gpu-memory-utilization 0.25 --max-model-len 131000 --quantization awq --dtype float16 --enforce-eager`',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-4B-Instruct-2507-AWQ', 'ctx': 131000, 'settings': {'quantization': 'awq'}})),
    # gfx906_18: the conda environment before the prompt (was: "unknown engine command '(ai)'"); its log: "Using max model len 40960"
    Case('gfx906_18', 'https://github.com/nlzy/vllm-gfx906/issues/18', 'cmd', 'MI50', '0.9.2', FIXED,
         "(ai) eddie@eddie-Standard-PC-Q35-ICH9-2009:~/vllm-gfx906$ vllm serve '/mnt/models/vllm_models/Qwen3-30B-A3B-quantized.w4a16/' ",
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-30B-A3B-quantized.w4a16', 'ctx': 40960})),
    # ---- SGLang ----
    Case('sg21601', 'https://github.com/sgl-project/sglang/pull/21601', 'cmd', 'RTX PRO 6000', None, RIGHT,
         'python3 -m sglang.launch_server \\\n      --model-path Qwen/Qwen3.5-35B-A3B-FP8 \\\n      --kv-cache-dtype nvfp4 \\\n      --prefill-attention-backend flashinfer \\\n      --decode-attention-backend trtllm_mha \\\n      --disable-radix-cache \\\n      --port 8005',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3.5-35B-A3B-FP8', 'settings': {'kv_cache_dtype': 'nvfp4'}})),
    Case('sg8552', 'https://github.com/sgl-project/sglang/pull/8552', 'cmd', '4x B200', '0.4.10', RIGHT,
         '`python3 -m sglang.launch_server --model-path /dev/shm/DeepSeek-R1-FP4 --trust-remote-code --tp-size 4 --quantization modelopt_fp4 --enable-flashinfer-cutlass-moe`',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1-FP4', 'settings': {'tp_size': 4, 'quantization': 'modelopt_fp4'}})),
    # sg20348a: `sglang serve`, the entry point launch_server.py now recommends
    Case('sg20348a', 'https://github.com/sgl-project/sglang/pull/20348', 'cmd', '8x B200', None, RIGHT,
         'sglang serve --model-path nvidia/Llama-3.1-8B-Instruct-NVFP4 --tensor-parallel-size 8 --attention-backend trtllm_mha --fp4-gemm-backend pytorch --quantization modelopt_fp4 --trust-remote-code',
         ('reads', {'engine': 'sglang', 'model': 'Llama-3.1-8B-Instruct-NVFP4', 'settings': {'tp_size': 8, 'quantization': 'modelopt_fp4'}})),
    Case('sg20348b', 'https://github.com/sgl-project/sglang/pull/20348', 'cmd', '8x B200', '0.5.9', RIGHT,
         'sglang serve --model-path nvidia/DeepSeek-V3.2-NVFP4 --tensor-parallel-size 8 --data-parallel-size 8 --enable-dp-attention --kv-cache-dtype fp8_e4m3 --attention-backend nsa --nsa-prefill-backend trtllm --nsa-decode-backend trtllm --reasoning-parser deepseek-v3 --tool-call-parser deepseekv32 --moe-runner-backend flashinfer_trtllm --fp4-gemm-backend pytorch --quantization modelopt_fp4',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-V3.2', 'settings': {'tp_size': 8, 'dp_size': 8, 'kv_cache_dtype': 'fp8_e4m3'}})),
    Case('sg3450', 'https://github.com/sgl-project/sglang/pull/3450', 'cmd', '8x H100', '0.4.2.post4', RIGHT,
         'python -m sglang.launch_server --model-path cognitivecomputations/DeepSeek-V3-AWQ --tp-size 8 --trust-remote --disable-mla',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-V3-AWQ', 'settings': {'tp_size': 8}})),
    # sg5324: SGLang on the CPU (was: sized on a GPU as "CUDA out of memory while loading the weights")
    Case('sg5324', 'https://github.com/sgl-project/sglang/issues/5324', 'cmd', None, '0.4.5', FIXED,
         'SGLANG_CPU_OMP_THREADS_BIND="0-55" python -m sglang.launch_server --device cpu --tp 1 --disable-overlap-schedule --trust-remote-code --model /root/sglang/DeepSeek-V3-awq --dtype bfloat16',
         ('refuses', '--device cpu: SGLang on cpu is not modelled')),
    Case('awq751', 'https://github.com/casper-hansen/AutoAWQ/pull/751', 'cmd', 'RTX 3090', '0.4.6', RIGHT,
         ' python -m sglang.launch_server --model-path /mnt/llms/models/Qwen3-30B-A3B-awq/ --tp 1 --context-length 8000 --port 5001 --host 0.0.0.0',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-30B-A3B-awq', 'ctx': 8000, 'settings': {'tp_size': 1}})),
    # ixx915: a benchmark script's lines, cut after a backslash (was: "No escaped character"); $TP is set outside the excerpt
    Case('ixx915', 'https://github.com/SemiAnalysisAI/InferenceX/pull/915', 'cmd', '8x B200', None, FIXED,
         'PYTHONNOUSERSITE=1 python3 -m sglang.launch_server --model-path=$MODEL --host=0.0.0.0 --port=$PORT \\\n--trust-remote-code \\\n--tensor-parallel-size=$TP \\\n$DP_FLAGS \\\n--kv-cache-dtype fp8_e4m3 --quantization fp8 \\\n--nsa-decode-backend trtllm --nsa-prefill-backend trtllm \\\n--moe-runner-backend flashinfer_trtllm \\',
         ('refuses', "argument --tensor-parallel-size: invalid int value: '$TP'")),
    # ---- Ollama ----
    Case('glm752', 'https://github.com/zai-org/GLM-4/issues/752', 'cmd', 'RTX 4090', None, RIGHT,
         'ollama run modelscope.cn/lmstudio-community/GLM-Z1-32B-0414-GGUF:Q8_0',
         ('reads', {'engine': 'ollama', 'model': 'GLM-Z1 32B'})),
    # glm752b: an ollama.com user model (namespace/name, tag latest)
    Case('glm752b', 'https://github.com/zai-org/GLM-4/issues/752', 'cmd', 'RTX 4090', None, STILL,
         'ollama run JollyLlama/GLM-4-32B-0414-Q4_K_M',
         ('reads', {'engine': 'ollama', 'model': 'GLM-4 32B'})),
    Case('ol14545', 'https://github.com/ollama/ollama/issues/14545', 'model', '3x RTX 3060, RTX 2060 12GB', '0.17.4', RIGHT,
         'hf.co/bartowski/Qwen_Qwen3.5-27B-GGUF:Q6_K_L',
         ('reads', {'model': 'Qwen3.5 27B', 'quant': 'Q6_K_L'})),
    Case('ol14545b', 'https://github.com/ollama/ollama/issues/14545', 'model', '3x RTX 3060, RTX 2060 12GB', '0.17.4', RIGHT,
         'qwen3.5:27b-q8_0',
         ('reads', {'model': 'Qwen3.5 27B', 'quant': 'Q8_0'})),
    Case('ol14189', 'https://github.com/ollama/ollama/issues/14189', 'model', 'RTX 4090', '0.15.6', RIGHT,
         'hf.co/unsloth/Qwen3-Coder-Next-GGUF',
         ('reads', {'model': 'Qwen3 Coder Next'})),
    Case('ol12897', 'https://github.com/ollama/ollama/issues/12897', 'cmd', 'RTX 4090', None, RIGHT,
         'ollama run modelscope.cn/unsloth/Qwen3-VL-8B-Instruct-GGUF',
         ('reads', {'engine': 'ollama', 'model': 'Qwen3-VL 8B'})),
    # ol14443: macOS zsh's default prompt `user@host dir % ` (was: "unknown engine command 'taozhiyu@Mac'"); the tag is one the user created
    Case('ol14443', 'https://github.com/ollama/ollama/issues/14443', 'cmd', 'M4 Max 128GB', '0.17.4', FIXED,
         'taozhiyu@Mac ~ % ollama run qwen35-35b-a3b:q8_0',
         ('refuses', "unknown model 'qwen35-35b-a3b'")),
    Case('qwen1464', 'https://github.com/QwenLM/Qwen3/issues/1464', 'model', '8x A10', None, RIGHT,
         'qwen3:32b-fp16',
         ('reads', {'model': 'Qwen3 32B', 'quant': 'F16'})),
    Case('ramalama2390', 'https://github.com/containers/ramalama/issues/2390', 'cmd', 'RTX 4090', None, RIGHT,
         'ramalama run qwen3-vl:8b-thinking-q4_K_M',
         ('refuses', "unknown engine command 'ramalama'")),
    Case('ol13423', 'https://github.com/ollama/ollama/issues/13423', 'model', 'RTX 5070 Ti', '0.13.1', RIGHT,
         'qwen3:30b',
         ('reads', {'model': 'Qwen3 30B-A3B'})),
    # ol15264: an issue's "cmd:" label (was: "unknown engine command 'cmd:'")
    Case('ol15264', 'https://github.com/ollama/ollama/issues/15264', 'cmd', 'RTX PRO 6000', None, FIXED,
         'cmd: ollama run gemma4:26b',
         ('reads', {'engine': 'ollama', 'model': 'Gemma 4 26B'})),
    # ---- MLX ----
    Case('mlx624', 'https://github.com/ml-explore/mlx-lm/issues/624', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'mlx_lm.generate --model mlx-community/Qwen3-32B-4bit --prompt "Tell me a story" -m 1024',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3 32B'})),
    # mlxvlm1191: a zsh prompt's `%`
    Case('mlxvlm1191', 'https://github.com/Blaizzy/mlx-vlm/issues/1191', 'cmd', 'M4 Max 128GB', None, RIGHT,
         ' % python -m mlx_lm generate \\\n  --model mlx-community/Ministral-3-3B-Instruct-2512-4bit \\\n  --prompt "Say hello in five words." \\\n  --max-tokens 30 \\\n  --temp 0.0',
         ('reads', {'engine': 'mlx', 'model': 'Ministral 3 3B'})),
    Case('mlx1637', 'https://github.com/ml-explore/mlx-lm/issues/1637', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'mlx_lm.generate --model mlx-community/Falcon3-Mamba-7B-Instruct-8bits \\\n  --prompt "<~1900 token prompt>" --max-tokens 50 --temp 0',
         ('refuses', "unknown model 'mlx-community/Falcon3-Mamba-7B-Instruct-8bits'")),
    # mlx58: mlx_lm.convert's output folder, not on this machine
    Case('mlx58', 'https://github.com/ml-explore/mlx-lm/issues/58', 'cmd', 'M2 Ultra 192GB', None, RIGHT,
         'mlx_lm.generate --model mlx_model --prompt "Write an epic poem" -m 2048',
         ('refuses', "unknown model 'mlx_model'")),
    Case('mlxengine314', 'https://github.com/lmstudio-ai/mlx-engine/issues/314', 'model', 'M4 32GB', None, RIGHT,
         'mlx-community/Qwen3.6-35B-A3B-4bit',
         ('reads', {'model': 'mlx-community/Qwen3.6-35B-A3B-4bit'})),
    Case('mlxstudio65', 'https://github.com/jjang-ai/mlxstudio/issues/65', 'model', 'M1 Max 64GB', None, RIGHT,
         'mlx-community/Qwen3.5-27B-Claude-4.6-Opus-Distilled-MLX-4bit',
         ('refuses', "unknown model 'mlx-community/Qwen3.5-27B-Claude-4.6-Opus-Distilled-MLX-4bit'")),
    Case('unsloth4893', 'https://github.com/unslothai/unsloth/issues/4893', 'model', 'M4 Max 128GB', None, RIGHT,
         'lmstudio-community/gpt-oss-120b-mlx-8bit',
         ('reads', {'model': 'lmstudio-community/gpt-oss-120b-mlx-8bit'})),
    # ---- names ----
    Case('ar728', 'https://github.com/intel/auto-round/issues/728', 'model', 'RTX 4090', None, RIGHT,
         'Intel/Qwen3-30B-A3B-Instruct-2507-int4-AutoRound',
         ('reads', {'model': 'Intel/Qwen3-30B-A3B-Instruct-2507-int4-AutoRound'})),
    Case('ar728b', 'https://github.com/intel/auto-round/issues/728', 'model', 'RTX 4090', None, RIGHT,
         'Intel/gpt-oss-20b-int4-AutoRound',
         ('reads', {'model': 'Intel/gpt-oss-20b-int4-AutoRound'})),
    # scaler210: was: unknown model
    Case('scaler210', 'https://github.com/intel/llm-scaler/issues/210', 'model', 'RTX 4090', None, FIXED,
         'Intel/Qwen3.6-35B-A3B-int4-mixed-AutoRound',
         ('reads', {'model': 'Intel/Qwen3.6-35B-A3B-int4-mixed-AutoRound'})),
    # v43484: was: unknown model ("did you mean deepseek-ai/DeepSeek-V4-Pro?")
    Case('v43484', 'https://github.com/vllm-project/vllm/issues/43484', 'model', '8x H200', None, FIXED,
         'Intel/DeepSeek-V4-Pro-W4A16-AutoRound',
         ('reads', {'model': 'Intel/DeepSeek-V4-Pro-W4A16-AutoRound'})),
    # ft362: was: unknown model, "unset HF_HUB_OFFLINE to look it up"
    Case('ft362', 'https://github.com/FlashML-org/FreeToken/issues/362', 'model', 'RTX 3090', None, FIXED,
         'turboderp/Qwen3.8-Flash-Next-exl3',
         ('refuses', "an EXL3 quant, ExLlamaV3's own format")),
    # ar1799: a hub URL
    Case('ar1799', 'https://github.com/intel/auto-round/issues/1799', 'model', 'RTX 4090', None, RIGHT,
         'https://huggingface.co/Intel/Qwen3.5-4B-int4-AutoRound',
         ('reads', {'model': 'Intel/Qwen3.5-4B-int4-AutoRound'})),
    # ar860: a hub URL (was: unknown model)
    Case('ar860', 'https://github.com/intel/auto-round/issues/860', 'model', '8x H100', None, FIXED,
         'https://huggingface.co/Intel/Qwen3-VL-235B-A22B-Thinking-int4-mixed-AutoRound',
         ('reads', {'model': 'Intel/Qwen3-VL-235B-A22B-Thinking-int4-mixed-AutoRound'})),
    # recipes560: cyankiwi's mixed AWQ
    Case('recipes560', 'https://github.com/vllm-project/recipes/issues/560', 'model', 'RTX 4090', None, STILL,
         'cyankiwi/Qwen3.5-4B-AWQ-INT8-INT4',
         ('reads', {'model': 'cyankiwi/Qwen3.5-4B-AWQ-INT8-INT4'})),
    # exl3_39: was: unknown model, "did you mean gemma-3-27b-it"
    Case('exl3_39', 'https://github.com/turboderp-org/exllamav3/issues/39', 'model', 'RTX 4090', None, FIXED,
         'turboderp/gemma-3-27b-it-exl3',
         ('refuses', "an EXL3 quant, ExLlamaV3's own format")),
]

STILL_WRONG: dict[str, str] = {  # the case id -> why it still answers wrong
    "recipes560": "cyankiwi's '-AWQ-INT8-INT4' (llm-compressor AWQ, some layers int8 and the rest int4) is no known name "
                  "convention: which layers are int8 is not in the name, and the repo's config.json is not read "
                  "offline; refused as an unknown model",
    "glm752b": "an ollama.com user model (`ollama run JollyLlama/GLM-4-32B-0414-Q4_K_M`, namespace/name, tag latest) is "
               "looked up as a Hugging Face repo; Ollama's registry manifest is not read, and the GLM-4-32B-0414 + "
               "Q4_K_M its name says is not inferred",
}


def _check(c: Case) -> None:
    """The harness's check (an engine command; a name's refusal), a name's reading (the engine, the model and its
    weight format) with --json, and the weight format the name or file says (a GGUF file type) where given."""
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
    assert len(CASES) == 61 and len({c.url for c in CASES}) == 57 and len({c.id for c in CASES}) == 61
    assert sum(c.kind == "cmd" for c in CASES) == 40
    assert sum(c.status == FIXED for c in CASES) == 20 and sum(c.status == STILL for c in CASES) == 2
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- the text around a pasted command (were: "unknown engine command '(vllm)'" / "'taozhiyu@Mac'" / "'command'" /
# "'cmd:'" / "'```CUDA_DEVICE_ORDER=PCI_BUS_ID'", "empty engine command after --", "No escaped character") ----

@pytest.mark.parametrize("text,argv", [
    ("(vllm) me@box:~$ vllm serve q --tp 2", ["vllm", "serve", "q", "--tp", "2"]),  # conda env + bash prompt
    ("(base) a1@MacStudio-1 Kimi-K2.5-3bit % mlx_lm.server --model m", ["mlx_lm.server", "--model", "m"]),
    ("me@Mac ~ % ollama run qwen3:8b", ["ollama", "run", "qwen3:8b"]),  # zsh's %n@%m %1~ %#
    ("me@Mac ~ $ ollama run qwen3:8b", ["ollama", "run", "qwen3:8b"]),
    ("(venv) [me@box dir]$ vllm serve q", ["vllm", "serve", "q"]),
    ("(x) vllm", ["(x)", "vllm"]),  # no prompt after it: kept
    ("command line: ./llama-server -m m.gguf", ["./llama-server", "-m", "m.gguf"]),
    ("Command line: ./llama-server -m m.gguf", ["./llama-server", "-m", "m.gguf"]),
    ("cmd: ollama run gemma4:26b", ["ollama", "run", "gemma4:26b"]),
    ("```A=1 vllm serve q --tp 2```", ["A=1", "vllm", "serve", "q", "--tp", "2"]),
    ("vllm serve q \\", ["vllm", "serve", "q"]),  # cut after a continuation: bash drops the final backslash
    ("  vllm serve q \\\n    --port 8000 \\\n", ["vllm", "serve", "q", "--port", "8000"]),
    ("vllm serve q 'a \\'", ["vllm", "serve", "q", "a \\"]),  # inside single quotes a backslash is literal
    ("# vllm serve q -dp=8", ["vllm", "serve", "q", "-dp=8"]),  # a root shell's prompt
    ("# a comment\nvllm serve q", ["vllm", "serve", "q"]),  # a comment line before the command: still a comment
])
def test_the_text_around_a_pasted_command(text, argv):
    assert split_command(text) == argv


# ---- llama.cpp's unified executable (was: "unknown engine command 'llama'") ----

@pytest.mark.parametrize("argv,program", [
    (["llama", "serve", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "8192"], "llama-server"),
    (["llama", "server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "8192"], "llama-server"),  # its alias
    (["/usr/local/bin/llama", "cli", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "8192"], "llama-cli"),
    (["llama.exe", "client", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "8192"], "llama-cli"),
    (["llama", "bench", "-m", "unsloth/Qwen3-8B-GGUF:Q4_K_M"], "llama-bench"),
])
def test_the_llama_executable_runs_its_command(argv, program):
    p = parse_command(argv, {})
    assert (p.engine, p.settings.program) == ("llama.cpp", program) and p.model.startswith("unsloth/Qwen3-8B-GGUF")
    if program != "llama-bench":
        assert p.settings.n_ctx == 8192


def test_the_llama_executable_without_a_command_is_refused():
    # app/llama.cpp main: "error: unknown command '%s'"
    with pytest.raises(OomkitError, match="the llama executable runs one of its commands"):
        parse_command(["llama", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"], {})


def test_fit_keeps_the_llama_serve_form():
    rc, out, err = run_cli("fit", "--gpu", "RTX 3060 12GB", "--json", "--", "llama", "serve", "-hf",
                           "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "131072", "-np", "4")
    assert rc in (0, 1), err
    fit = json.loads(out)["fit"]
    assert fit["command"].startswith("llama serve -hf unsloth/Qwen3-8B-GGUF:Q4_K_M"), fit["command"]


# ---- a llama-server models preset pasted as MODEL (were: "unknown quant tag 'IQ4_XS\nb = 256...'", "no such file:
# version = 1 [*] ...") ----

_PRESET = ("version = 1\n[*]\nngl = 99\nc = 4096\n\n[q8]\nhf = unsloth/Qwen3-8B-GGUF:Q4_K_M ; the repo\nctx-size = 8192\n"
           "ctk = q8_0\nmmap = false\njinja = true\nLLAMA_ARG_N_PARALLEL = 2\n[no-model]\nc = 512\n")


def test_a_preset_gives_the_command_its_section_runs():
    rc, _, err = run_cli("check", _PRESET, "--gpu", "RTX 4090")
    assert rc == 2 and "this is a llama-server models preset (--models-preset), not a model name: its [q8]" in err, err
    form = err.split("`oomkit check -- ", 1)[1].rsplit("`", 1)[0]
    # common/preset.cpp: [*] first, the preset's own keys over it; `mmap = false` the negative form, an env key its flag
    assert form == ("llama-server -ngl 99 -c 4096 -hf unsloth/Qwen3-8B-GGUF:Q4_K_M --ctx-size 8192 -ctk q8_0 "
                    "--no-mmap --jinja -np 2")
    p = parse_command(split_command(form), {})
    s = p.settings
    assert (p.model, p.quant, s.n_ctx, s.cache_type_k, s.n_gpu_layers, s.mmap, s.n_parallel) == \
        ("unsloth/Qwen3-8B-GGUF", "Q4_K_M", 8192, "q8_0", 99, False, 2)


def test_a_preset_llama_server_refuses_is_refused_so():
    rc, _, err = run_cli("check", "[m]\nhf = unsloth/Qwen3-8B-GGUF:Q4_K_M\nnot-a-flag = 1", "--gpu", "RTX 4090")
    assert rc == 2 and "option 'not-a-flag' not recognized in preset 'm'" in err, err


@pytest.mark.parametrize("c", [c for c in CASES if c.id in ("pi8479", "arandu5")], ids=lambda c: c.id)
def test_the_real_presets_forms_read(c):
    rc, _, err = run_cli("check", c.text, *hardware_args(c))
    form = err.split("`oomkit check -- ", 1)[1].rsplit("`", 1)[0]
    p = parse_command(split_command(form), {})
    want = {"pi8479": ("unsloth/Qwen3.8-27B-GGUF", 256, "q8_0"), "arandu5": (None, 2048, "f16")}[c.id]
    assert (p.settings.n_batch, p.settings.cache_type_k) == want[1:]
    if want[0]:
        assert p.model == want[0]
    else:  # [*]'s -c 32768, then the preset's own ctx-size 65536: the last one
        assert p.settings.n_ctx == 65536 and p.model.endswith("Qwen3.5-35B-A3B-UD-Q8_K_XL.gguf")


# ---- llama.cpp's -dio (was: "invalid argument: -dio"), SGLang's --device (was: a CPU run sized on a GPU) ----

@pytest.mark.parametrize("flag", ["-dio", "--direct-io", "-ndio", "--no-direct-io"])
def test_direct_io_is_a_llama_cpp_switch(flag):
    p = parse_command(["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", flag, "-c", "4096"], {})
    assert p.settings.n_ctx == 4096


@pytest.mark.parametrize("device,refused", [("cpu", True), ("npu", True), ("xpu", True), ("cuda", False)])
def test_sglang_on_another_device_is_refused(device, refused):
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--device", device]
    if refused:
        with pytest.raises(OomkitError, match=f"--device {device}: SGLang on {device} is not modelled"):
            parse_command(argv, {})
    else:
        assert parse_command(argv, {}).engine == "sglang"


# ---- names (were: unknown model) ----

@pytest.mark.parametrize("name,bits,base", [
    ("Intel/DeepSeek-V4-Pro-W4A16-AutoRound", 4, "deepseek-ai/DeepSeek-V4-Pro"),
    ("Intel/Qwen3.6-35B-A3B-int4-mixed-AutoRound", 4, "Qwen/Qwen3.6-35B-A3B"),
    ("x/Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ", 4, "nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    ("x/Llama-3_3-Nemotron-Super-49B-v1-8bit-GPTQ", 8, "nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
])
def test_the_new_name_conventions(name, bits, base):
    d = names.derive(name)
    assert d is not None and d.base_hf_id == base
    assert (d.quantization_config["bits"], d.quantization_config["group_size"]) == (bits, 128)


def test_a_mixed_autoround_says_it_is_a_lower_bound():
    d = names.derive("Intel/Qwen3.6-35B-A3B-int4-mixed-AutoRound")
    assert "a lower bound" in d.convention


@pytest.mark.parametrize("name", ["turboderp/gemma-3-27b-it-exl3", "turboderp/Qwen3-8B-exl3-4.0bpw",
                                  "bullerwins/Llama-3.1-8B-Instruct-exl2_6.5bpw"])
def test_an_exllama_quant_is_refused_for_its_format(name):
    rc, _, err = run_cli("check", name, "--gpu", "RTX 4090")
    assert rc == 2 and ("an EXL3 quant" in err or "an EXL2 quant" in err) and "unknown model" not in err, err


def test_a_folder_with_its_trailing_slash_is_a_folder():
    # vllm#15664: `vllm serve Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ/`, not on this machine: read by its name
    p = parse_command(["vllm", "serve", "Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ/", "--max-model-len", "4096"], {})
    rc, out, err = run_cli("check", "--gpu", "L40S", "--json", "--", "vllm", "serve",
                           "Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ/", "--max-model-len", "4096")
    assert p.engine == "vllm" and rc in (0, 1), err
    assert any("is not on this machine: read as the catalog's" in w for w in json.loads(out)["estimate"]["warnings"])


# ---- the mutation pass: each real command cut, with a word dropped, doubled or garbled ----

def _text_mutations(text: str, rng: random.Random) -> list[str]:
    """The paste itself: cut anywhere, a line dropped, markdown or a loop put around it, a prompt or label before it."""
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    lines = text.split("\n")
    dropped = ["\n".join(lines[:k] + lines[k + 1:]) for k in range(min(len(lines), 2))] if len(lines) > 1 else []
    return [*cuts, *dropped, f"`{text}`", f"```{text}```", f"```\n{text}\n```", "> " + text.replace("\n", "\n> "),
            f"while true; do {text}; done", text + "\n" + text, "(env) me@host:~$ " + text, "me@Mac ~ % " + text,
            "# " + text, "command line: " + text, text + " \\", "llama " + text]


GARBLES = ("`", "> ", "\\", "(env)", "serve")  # a word garbled also to these


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"], ids=lambda c: c.id)
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


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"][::5], ids=lambda c: c.id)
def test_mutated_real_commands_through_fit_and_plan(c):
    rng = random.Random("fit" + c.id)
    for m in rng.sample(mutations(split_command(c.text), rng, GARBLES), 4):
        for cmd in (["fit", "--json"], ["plan", "--limit", "1", "--json"]):
            rc, _, err = run_cli(*cmd, *hardware_args(c), *version_args(c), "--", *m)
            one_line_or_answer(rc, err, (c.id, cmd[0], m))


# ---- the web API reads the new forms as the CLI does ----

def test_the_web_api_reads_the_new_forms():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    with TestClient(create_app()) as client:
        r = client.get("/api/check", params={"command": "(vllm) me@box:~$ vllm serve Qwen/Qwen3-8B --max-model-len 4096",
                                             "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["max_model_len"] == 4096, r.text
        r = client.get("/api/check", params={"command": "llama serve -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 8192 \\",
                                             "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["n_ctx"] == 8192, r.text
        r = client.get("/api/check", params={"command": "python -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                                                        "--device cpu", "gpu": "RTX 4090"})
        assert r.status_code == 400 and "--device cpu" in r.json()["error"], r.text
