"""Real users' input, fifth sweep: engine commands copied from public GitHub issues and pull requests of 2025-2026
(each cited), run through `oomkit check`, the command quoted as MODEL, `fit`, `plan` and the web API, then mutated
(cut, words dropped, doubled, garbled; the paste cut, a line dropped, markdown or a loop put around it). None of
their threads is in sweeps 2 to 4; the two whose thread tests/fixtures/commands/real_commands.jsonl also cites are
another form of it there (sglang#8362's docker line; turboquant-mlx#11's command without the loop around it).
What they brought out: an abbreviation refused as ambiguous over every release's flags where the release was given
(--engine-version, an image tag) and that release's parser reads it as one flag (`--speculative-draft` at SGLang
0.4.3, `--sw` at vLLM 0.8.4), `numactl` in front of the engine, a `while true; do ...; done` loop around it,
markdown around a paste (a fenced block, an inline code span, a `> ` blockquote, nested), `❯` and
`[user@host dir]$` prompts, two llama-bench commands on two lines, `llama-bench -m a,b,c` sized as its last model,
`--hf-overrides {"text_config": {"rope_parameters": ...}}` refused as a reshaping override, and a Docker Compose
service pasted as MODEL. Beside them: `python sglang.launch_server` without -m (real_commands.jsonl's
sglang-5212) refused for what CPython does with it, and a typed `-c 0` read as the trained context where the
build's default is 4096 (llama.cpp#15077, below).

Measured (2026-12-05): 53 real invocations (51 commands, 2 Compose services pasted as MODEL) from 52 public threads;
19 answered wrong before (a wrong refusal or one for the wrong reason, a model or a flag read wrong): all 19 are
fixed here (FIXED; the last, sglang#16708, by tools/build_sglang_flags.py reading SGLang's DeprecatedAliasStoreAction
as the one-value action it is, where it had read every Deprecated* action as a switch). None is still wrong (STILL,
a strict xfail with its reason).
No crash in the 204 runs of the commands' four forms, nor in 1,071 mutated argument lists, 507 mutated pastes and
88 mutated fit / plan runs.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

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
    version_args,
)

# Not verbatim: none (the reply quotes, prompts, fences and loops are kept as posted). Hardware: as the thread names
# it or its log shows it; where it names none, a card of the kind the thread implies, on which no expectation below
# depends (llama.cpp#11397, #14939, #15263, #18354's seven mixed cards, #18570's "R9 200 series", sglang#5873 and
# #7883, vllm-gfx906#9's four gfx906 cards, mlx-lm#112 and #844, turboquant-mlx#11, vllm-mlx#516, mlxstudio#91,
# GenerelSchwerz/llama.cpp#101, ollama#14426). Versions: as the thread states them; where a flag's reading depends on
# it and the thread gives a date only, the release of that date (vLLM 0.11.0 for ROCm's guide, 0.10.2 for
# Qwen3-VL#1493's nightly, SGLang 0.4.3 for #3582, 0.5.7 for #16708).
CASES = [
    # ---- llama.cpp ----
    Case('lc19232', 'https://github.com/ggml-org/llama.cpp/issues/19232', 'cmd', '10GiB,8GiB', 'b7895', RIGHT,
         'llama-server --host 192.168.100.248 --port 8086 -m /llm/unsloth_gpt-oss-20b-GGUF_gpt-oss-20b-F16.gguf --jinja --mmap --spec-type ngram-mod --spec-ngram-size-n 24 --draft-min 48 --draft-max 64 --ctx-size 8192 --flash-attn on --cache-ram 16384 --main-gpu 0 -ngl 999 --fit off',
         # P102-100 (10 GB) and GTX 1070 (8 GB); "which fit my vram", then an OOM on a prompt: it loads
         ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'ctx': 8192})),
    Case('lc24436', 'https://github.com/ggml-org/llama.cpp/issues/24436', 'cmd', '4x RTX 3090', 'b8780', RIGHT,
         'llama-bench -m llama-3.1-70b-instruct-Q4_K_M.gguf -dev CUDA1 -v',
         ('refuses', 'its name says meta-llama/Llama-3.1-70B-Instruct:Q4_K_M')),
    Case('lc28506', 'https://github.com/ggml-org/llama.cpp/issues/28506', 'cmd', '2x RTX 5070 Ti', 'b10825', RIGHT,
         'llama-server --host 0.0.0.0 --port 11080 \\\n  -dev CUDA0,CUDA1 \\\n  -m unsloth-qwen3.8-27b/Qwen3.8-27B-Q5_K_M.gguf \\\n  -ngl 999 \\\n  -sm tensor \\\n  -ts 0.49,0.51 \\\n  -c 190000 \\\n  --cache-type-k q8_0 \\\n  --cache-type-v q8_0 \\\n  --spec-type draft-mtp \\\n  --spec-draft-n-max 3 \\\n  -fa on \\\n  -np 1 \\\n  --reasoning-preserve \\\n  --jinja',
         ('refuses', 'its name says Qwen/Qwen3.8-27B:Q5_K_M')),
    Case('lc11397', 'https://github.com/ggml-org/llama.cpp/pull/11397', 'cmd', '2x RTX 3090', None, FIXED,
         'numactl --interleave=all ./llama.cpp/build/bin/llama-server --host 192.168.1.111 --port 8080 \\\n  --model ./DeepSeek-R1-mla-Q5_K_XL.gguf --chat-template deepseek3 --alias "DeepSeek-R1-mla-Q5_K_XL" --ctx_size 32768 \\\n  --n-gpu-layers 62 --numa distribute --threads 30 \\\n  --temp 0.6 --min-p 0.0 --top-p 1.0 --top-k 0 --rpc 192.168.1.112:50050,192.168.1.112:50051,192.168.1.113:50050,192.168.1.113:50051 \\\n  --device "RPC[192.168.1.112:50050],RPC[192.168.1.112:50051],RPC[192.168.1.113:50050],RPC[192.168.1.113:50051],CUDA0,CUDA1" \\\n  --tensor-split 0,0,0,0,31,31 \\\n  --override-tensor \'blk\\.([3-8])\\..*_exps\\.=RPC[192.168.1.112:50050]\' \\\n  --override-tensor \'blk\\.([9]|1[0-4])\\..*_exps\\.=RPC[192.168.1.112:50051]\' \\\n  --override-tensor \'blk\\.(1[5-9]|20)\\..*_exps\\.=RPC[192.168.1.113:50050]\' \\\n  --override-tensor \'blk\\.(2[1-6])\\..*_exps\\.=RPC[192.168.1.113:50051]\' \\\n  --override-tensor \'blk\\.(2[7-9]|[3-5][0-9]|60)\\..*_exps\\.=CPU\'',
         ('refuses', 'no such file: ./DeepSeek-R1-mla-Q5_K_XL.gguf')),
    Case('lc21404', 'https://github.com/ggml-org/llama.cpp/issues/21404', 'cmd', '2x RTX 2080 Ti 22GB', 'b8895', RIGHT,
         'llama-server -m Qwen3.6-27B-Q8_0.gguf --mmproj mmproj-F16.gguf  -ngl 99 --ctx-size 160000 -t 8 --host 0.0.0.0 --port 10240 --temp 1.0 --top-p 0.95 --top-k 20 --min-p 0.0 --reasoning-budget 8192 --no-mmap --mlock --split-mode row --flash-attn on --spec-type ngram-mod --spec-ngram-size-n 4 --draft-min 8 --draft-max 64',
         ('refuses', 'its name says Qwen/Qwen3.6-27B:Q8_0')),
    Case('lc11435', 'https://github.com/ggml-org/llama.cpp/issues/11435', 'cmd', 'RTX 3090, RTX 3060', 'b4561', RIGHT,
         './llama-server -m ../../models/70B-IQ3_M.gguf -c 8192 -ngl 999 --rpc localhost:50052,localhost:50053,192.168.0.21:50052',
         ('refuses', 'no such file: ../../models/70B-IQ3_M.gguf')),
    Case('lc27953', 'https://github.com/ggml-org/llama.cpp/issues/27953', 'cmd', '4x RTX 5060 Ti 16GB', None, FIXED,
         'echo 0 | sudo tee /proc/sys/kernel/numa_balancing\nCUDA_VISIBLE_DEVICES=2,3,0,1 \\\nnumactl --interleave=all \\\n~/llama.cpp/build/bin/llama-server \\\n    --model /mnt/nvme/Qwen3.8-Flash-Next-Q8_0-00001-of-00006.gguf \\\n    --chat-template-kwargs \'{"reasoning_effort":"xhigh"}\' \\\n    --tensor-split 2,2,0,0 \\\n    -cmoe \\\n    --numa distribute \\\n    --reasoning-preserve \\\n    --load-mode none \\\n    -c 150000 \\\n    --batch-size 2800 \\\n    --ubatch-size 2800 \\\n    --temp 1.0 \\\n    --top-p 0.95 \\\n    --top-k 20 \\\n    --min-p 0.0 \\\n    --presence-penalty 0.0 \\\n    --repeat-penalty 1.0 \\\n    --parallel 1 \\\n    --threads 42 \\\n    --threads-batch 42 \\\n    -ngl 100 \\\n    --host 127.0.0.1 \\\n    --port 8082 \\\n    --jinja',
         ('refuses', 'no such file: /mnt/nvme/Qwen3.8-Flash-Next-Q8_0-00001-of-00006.gguf')),
    Case('lc21801', 'https://github.com/ggml-org/llama.cpp/issues/21801', 'cmd', '2x Radeon 8060S', 'b8763', RIGHT,
         'llama-server --models-dir /opt/models -ngl all --no-mmap --host 0.0.0.0 --port 61327 --rpc 192.168.231.2:50052 -fit on --jinja -np 2 --models-max 1 --verbose',
         ('refuses', 'the llama-server command names no model')),
    Case('lc18354', 'https://github.com/ggml-org/llama.cpp/pull/18354', 'cmd', '7x RTX 3090', None, RIGHT,
         "./llama-server \\\n  -m '/run/media/pancho/MyDrive/models_llm_2tb/GLM-4.7-UD-Q4_K_XL.gguf' \\\n  -c 32768 \\\n  --no-mmap \\\n  -ngl 999 \\\n  -mg 0 \\\n  -ub 2048 -b 2048 -fitc 32768",
         ('refuses', 'its name says zai-org/GLM-4.7:UD-Q4_K_XL')),
    Case('lc14939', 'https://github.com/ggml-org/llama.cpp/pull/14939', 'cmd', 'RTX PRO 6000', None, FIXED,
         '> ```\n> ./llama.cpp/build/bin/llama-server \\\n>     --n-gpu-layers 999 --threads 48 --batch-size 4096 --ubatch-size 4096 --jinja \\\n>     --override-tensor "blk\\..*_exps\\.=CPU" \\\n>     --ctx-size 65536 --flash-attn --port 10000 --host 0.0.0.0 --verbose-prompt --log-prefix --log-timestamps --no-webui \\\n>     --model /mnt/srv/slush/gguf/GLM-4.5-Air-GGUF/GLM-4.5-Air-Q6_K.gguf\n> ```',
         ('refuses', 'its name says zai-org/GLM-4.5-Air:Q6_K')),
    Case('lc15263', 'https://github.com/ggml-org/llama.cpp/issues/15263', 'cmd', '2x RTX 3090', None, FIXED,
         '> > ```\n> > llama-server --model ~/models/gpt-oss-120b/gpt-oss-120b-MXFP4-00001-of-00002.gguf \\\n> >   --host 0.0.0.0 \\\n> >   --port 8052 \\\n> >   --jinja \\\n> >   --ctx-size 65536 \\\n> >   --threads 1 \\\n> >   --batch-size 4096 \\\n> >   --ubatch-size 2048 \\\n> >   -ot ".ffn_(up|down)_exps.=CPU" \\\n> >   --flash-attn \\\n> >   --temp 1.0 \\\n> >   --top-p 1.0 \\\n> >   --top-k 0 \\\n> >   --n-gpu-layers 999 \\\n> >   --chat-template-kwargs \'{"builtin_tools":["python", "browser"], "reasoning_effort":"high"}\'\n> > ```',
         ('refuses', 'its name says openai/gpt-oss-120b:MXFP4')),
    Case('lc18764', 'https://github.com/ggml-org/llama.cpp/issues/18764', 'cmd', 'Iris Xe', 'b7668', FIXED,
         'llama-bench.exe --mmap 1 --n-gpu-layers 0 --flash-attn 1 --model "gpt-oss-20b-UD-Q8_K_XL.gguf"\nllama-bench.exe --mmap 1 --n-gpu-layers 0 --flash-attn 0 --model "gpt-oss-20b-UD-Q8_K_XL.gguf"',
         ('refuses', 'a second command (llama-bench.exe ...) follows the first')),
    Case('lc22462', 'https://github.com/ggml-org/llama.cpp/pull/22462', 'cmd', 'Radeon 890M', 'b8966', FIXED,
         '❯ llama-bench -m ~/model/gemma-4-26B-A4B-it-GGUF/gemma-4-26B-A4B-it-UD-Q4_K_XL.gguf -ngl 100 --ubatch-size 1088 --batch-size 2048 --mmap 0 -fa 1 -d 0,8096 -r 3',
         ('refuses', 'its name says google/gemma-4-26B-A4B:UD-Q4_K_XL')),
    Case('lc16301', 'https://github.com/ggml-org/llama.cpp/issues/16301', 'cmd', '2x Radeon PRO W6800X', None, FIXED,
         './build/bin/llama-bench -ngl 99 -fa 0 -p 2048 -n 128 --mmap 0 -m ~/Models/Qwen3-0.6B-F16.gguf,~/Models/llama-2-7b-q8_0.gguf,~/Models/Qwen3.6-35B-A3B-Q8_0.gguf,~/Models/Qwen3.6-35B-A3B-Q6_K.gguf,~/Models/Qwen3.6-27B-Q4_0.gguf,~/Models/llama-2-7b-q4_0.gguf,~/Models/llama-2-7b-chat-f16.gguf -ub 32',
         ('refuses', 'llama-bench -m lists 7 models, benchmarked one after another')),
    Case('lc17366', 'https://github.com/ggml-org/llama.cpp/issues/17366', 'cmd', 'Iris Xe', 'b7091', RIGHT,
         './llama-bench -m gemma-3-1b-it-Q8_0.gguf -fa 1',
         ('refuses', 'its name says google/gemma-3-1b-it:Q8_0')),
    Case('lc18570', 'https://github.com/ggml-org/llama.cpp/issues/18570', 'cmd', 'Radeon R9 290', 'b7600', RIGHT,
         '$ ./llama_vk_7600/llama-bench -m /download/llama/Ministral-3-3B-Instruct-2512-Q5_K_M.gguf -d 0,5000,10000 -fa 0,1,0,1,0,1 -r 1',
         ('refuses', 'its name says mistralai/Ministral-3-3B-Instruct-2512:Q5_K_M')),
    Case('lc18203', 'https://github.com/ggml-org/llama.cpp/issues/18203', 'cmd', 'Arc Pro B50, Radeon PRO V620', 'b7480', RIGHT,
         '/root/llama-builds/llama.cpp/bin/llama-bench -m /mnt/models/unsloth/Devstral-Small-2-24B-Instruct-2512-UD-Q4_K_XL.gguf \\\n    -ngl 999 -sm layer,none -mg 1 -fa 1 -t 10 \\\n    -p 512',
         ('refuses', 'its name says mistralai/Devstral-Small-2-24B-Instruct-2512:UD-Q4_K_XL')),
    Case('lc12139', 'https://github.com/ggml-org/llama.cpp/issues/12139', 'cmd', 'Adreno 732', 'b4798', RIGHT,
         'llama-bench  -m lb-reranker-0.5B-v1.0-Q4_0.gguf   -v --progress',
         ('refuses', 'no such file: lb-reranker-0.5B-v1.0-Q4_0.gguf')),
    Case('buun59', 'https://github.com/spiritbuun/buun-llama-cpp/issues/59', 'cmd', '2x RTX 2080 Ti', None, FIXED,
         '[shrisha@gforce buun-llama-cpp]$ build/bin/llama-server   -m /home/shrisha/models/Qwopus3.5-9B-Coder-MTP-Q8_0.gguf   -a Qwopus-9B   --host 0.0.0.0   --port 8080   --api-key shrisha   -sm tensor   -ngl 999   -c 262144   -np 1   --jinja   --flash-attn on   -b 4096   -ub 1024   -tb 8   -t 4   --spec-type draft-mtp   --spec-draft-n-max 2   -ctk turbo4 -ctv turbo4   --tensor-split 60,40  --no-webui ',
         ('refuses', 'no such file: /home/shrisha/models/Qwopus3.5-9B-Coder-MTP-Q8_0.gguf')),
    Case('gs101', 'https://github.com/GenerelSchwerz/llama.cpp/issues/101', 'cmd', 'RTX 4090', None, RIGHT,
         '& "$LlamaDir\\llama-server.exe" `\n    -m $Model `\n    --host 0.0.0.0 `\n    --port 8888 `\n    --no-ui `\n    --sleep-idle-seconds 14400 `\n    --timeout 900 `\n    --reasoning-preserve `\n    --threads 4 `\n    --threads-batch 4 `\n    --lazy-mode on `\n    --load-mode mmap `\n    --fit off `\n    --n-gpu-layers all `\n    --ctx-checkpoints 0 `\n    --n-cpu-moe 999 `\n    --ctx-size 65535 `\n    --parallel 1 `\n    --flash-attn on `\n    --cache-type-k q8_0 `\n    --cache-type-v q8_0 `\n    --batch-size 512 `\n    --ubatch-size 512 `\n    --cache-ram 0 `\n    --moe-expert-cache-size 19 `\n    --moe-expert-cache-host-pinned-mb 23000 `\n    --jinja',
         ('refuses', 'invalid argument: --moe-expert-cache-size')),
    Case('lc23929', 'https://github.com/ggml-org/llama.cpp/issues/23929', 'cmd', 'RTX 5060 Ti 16GB, RTX 2060 SUPER', 'b9438', RIGHT,
         './build/bin/llama-server \\\n      --verbosity 4 \\\n      -m /home/abdulrahman/Personal/Programs/llama/models/Qwen/Qwen3.6-27B-Q4_K_S.gguf \\\n      --chat_template_kwargs \'{"preserve_thinking": "True"}\' \\\n      --jinja \\\n      --host 0.0.0.0 --port 8080 \\\n      --spec-type draft-mtp,ngram-mod --spec-draft-n-max 2 --spec-ngram-mod-n-match 24 --spec-ngram-mod-n-min 2 --spec-ngram-mod-n-max 48 \\\n      -c 64000 \\\n      -sm tensor --tensor-split 66,24 -ub 48',
         ('refuses', 'its name says Qwen/Qwen3.6-27B:Q4_K_S')),
    Case('lc22206', 'https://github.com/ggml-org/llama.cpp/issues/22206', 'cmd', 'RTX 4090', 'b8860', RIGHT,
         'llama.cpp/build/bin/llama-server -fa on --host 0.0.0.0 -a default_model --port 8087 -m  ./unsloth/Qwen3___6-35B-A3B-GGUF/Qwen3.6-35B-A3B-Q8_0.gguf  -ctk q4_0  -ctv q4_0  --no-mmap  --jinja  -c 128000 -b 1024',
         ('refuses', 'its name says Qwen/Qwen3.6-35B-A3B:Q8_0')),
    # ---- LM Studio ----
    Case('lms2318a', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2318', 'cmd', 'M4 Pro 48GB', None, RIGHT,
         '$ lms load qwen/qwen3.8-27b -c 8192 --parallel 1 --estimate-only -y',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.8 27B', 'ctx': 8192, 'settings': {'n_parallel': 1}})),
    Case('lms2318b', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2318', 'cmd', 'M4 Pro 48GB', None, FIXED,
         '`lms load google/gemma-4-e4b -c 4096 --parallel 1`',
         ('refuses', "unknown model 'google/gemma-4-e4b'")),
    # ---- vLLM ----
    Case('v49011', 'https://github.com/vllm-project/vllm/issues/49011', 'cmd', 'RTX 5090', '0.25.1', FIXED,
         """vllm serve unsloth/Qwen3.6-27B-NVFP4   --host 0.0.0.0   --port 8000   --served-model-name qwen3.6   --tensor-parallel-size 1   --gpu-memory-utilization 0.7   --max-model-len 1048576   --max-num-seqs 1   --max-num-batched-tokens 32768   --enable-prefix-caching   --enable-chunked-prefill   --async-scheduling   --trust-remote-code   --load-format fastsafetensors   --reasoning-parser qwen3   --tool-call-parser qwen3_xml   --enable-auto-tool-choice   --kv-cache-dtype nvfp4   --compilation-config '{"cudagraph_mode":"PIECEWISE"}'   --attention-backend FLASHINFER   --enable-flashinfer-autotune   --speculative-config '{"method":"mtp","num_speculative_tokens":2}'   --hf-overrides '{"text_config":{"rope_parameters":{"mrope_interleaved": true, "mrope_section": [11, 11, 10], "rope_type": "yarn", "rope_theta": 10000000, "partial_rotary_factor": 0.25, "factor": 4.0,"original_max_position_embeddings": 262144}}}'""",
         # the issue's own subject: stock vLLM has no nvfp4 KV cache on SM 12.0 (its prototype wires FlashInfer's)
         ('refuses', 'No valid attention backend found for cuda with kv_cache_dtype=nvfp4')),
    Case('rocm5554', 'https://github.com/ROCm/legacy-rocm-build/pull/5554', 'cmd', 'MI300X', '0.11.0', RIGHT,
         'vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n      --kv-cache-dtype fp8 \\\n      --calculate-kv-scales \\\n      --gpu-memory-utilization 0.90',
         ('reads', {'engine': 'vllm', 'model': 'Llama 3.1 8B', 'ctx': 131072, 'settings': {'kv_cache_dtype': 'fp8'}})),
    Case('v16777', 'https://github.com/vllm-project/vllm/issues/16777', 'cmd', '4x A100 80GB', '0.8.4', FIXED,
         'CUDA_VISIBLE_DEVICES=1,2,3  vllm serve /root/llm/cohere/c4ai-command-a-03-2025 -tp=2 --gpu-memory-utilization 0.95 --sw\nap-space 8 --max-num-seqs=1 ',
         # the line the terminal wrapped: 0.8.4's parser reads --sw as --swap-space, then 'ap-space' as its float
         ('refuses', "argument --swap-space: invalid float value: 'ap-space'")),
    Case('gfx906-9', 'https://github.com/nlzy/vllm-gfx906/issues/9', 'cmd', '4x MI50', None, RIGHT,
         'docker run -it --rm -e HIP_VISIBLE_DEVICES=0,1,2,3 --shm-size=2g --name=Qwen3-30B-A3B --device=/dev/kfd --device=/dev/dri --group-add video -p 8001:8001 -v /opt:/model nalanzeyu/vllm-gfx906 vllm serve /model/Qwen3-30B-A3B --block-size 16 --max-model-len 20000 --tensor-parallel-size 4 --served-model-name="Qwen3-30B-A3B" --port 8001  --max-num-seqs 2048 --dtype float16',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3 30B-A3B', 'ctx': 20000, 'settings': {'tensor_parallel_size': 4}})),
    Case('v17327', 'https://github.com/vllm-project/vllm/issues/17327', 'cmd', '8x RTX 4090 48GB', '0.8.5', RIGHT,
         'docker run --runtime nvidia --gpus all \\\n        -d \\\n        -v /root/models:/models \\\n        -p 5536:8000 \\\n        --env "HF_HUB_OFFLINE=1" \\\n        --ipc=host \\\n        vllm/vllm-openai:latest \\\n        --model /models/Qwen/Qwen3-235B-A22B-FP8 \\\n        --tokenizer /models/Qwen/Qwen3-235B-A22B-FP8 \\\n        --generation-config /models/Qwen/Qwen3-235B-A22B-FP8 \\\n        --served_model_name Qwen3-235B-A22B-FP8 \\\n        --gpu_memory_utilization 0.9 \\\n        --enable-reasoning --reasoning-parser deepseek_r1 \\\n        --enable-auto-tool-choice --tool-call-parser hermes \\\n        --host 0.0.0.0 \\\n        --port 8000 \\\n        --enable-expert-parallel \\\n        --tensor-parallel-size 8',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-235B-A22B-FP8', 'settings': {'tensor_parallel_size': 8}})),
    Case('v14120', 'https://github.com/vllm-project/vllm/issues/14120', 'cmd', '16x H800', '0.7.3', RIGHT,
         'vllm serve /root/.cache/huggingface/ --enable-reasoning --reasoning-parser deepseek_r1 --pipeline-parallel-size 16 --trust-remote-code --gpu-memory-utilization 0.9 --dtype    bfloat16',
         # a folder without config.json where the machine has one (huggingface_hub writes hub/version.txt there)
         ('refuses', "no config.json and no .gguf file" if Path('/root/.cache/huggingface').is_dir()
          else "unknown model '/root/.cache/huggingface/'")),
    Case('qvl1684', 'https://github.com/QwenLM/Qwen3-VL/issues/1684', 'cmd', '8x A100 80GB', '0.11.0', RIGHT,
         'vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct \\\n  --tensor-parallel-size 8 \\\n  --max-model-len 128000 \\\n  --async-scheduling \\\n  --enable-expert-parallel',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL 235B-A22B', 'ctx': 128000})),
    Case('qvl1493', 'https://github.com/QwenLM/Qwen3-VL/issues/1493', 'cmd', '8x H20', '0.10.2', RIGHT,
         'python3 -m vllm.entrypoints.openai.api_server --model /data/models/Qwen3-VL-235B-A22B-Instruct --host 0.0.0.0 --port=80 --disable-log-requests --seed 0 --tensor_parallel_size=8 --trust-remote-code --gpu-memory-utilization 0.70 --mm-encoder-tp-mode data --enable-expert-paralle --distributed-executor-backend mp --dtype bfloat16 --quantization fp8 --max_model_len 8192',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL 235B-A22B', 'ctx': 8192, 'settings': {'tensor_parallel_size': 8}})),
    Case('v17470', 'https://github.com/vllm-project/vllm/issues/17470', 'cmd', '16x H20', '0.7.3', RIGHT,
         'nohup python -m vllm.entrypoints.openai.api_server \\\n  --model /models/DeepSeek-R1-BF16 \\\n  --port 2000 \\\n  --dtype bfloat16 \\\n  --tensor-parallel-size 16 \\\n  --trust-remote-code \\\n  --gpu-memory-utilization 0.975 \\\n  --distributed-executor-backend=mp \\\n  --max-model-len 80000 \\\n  --swap-size 80 \\\n  --enforce-eager \\\n  --block-size 16 \\\n  --served-model-name dsr1bf16 &> /models/start.log &',
         ('refuses', 'unrecognized arguments: --swap-size 80')),
    Case('v22306', 'https://github.com/vllm-project/vllm/issues/22306', 'cmd', '2x A100 80GB', '0.9.2', RIGHT,
         'export  CUDA_VISIBLE_DEVICES=1,2\n\nvllm serve /mnt/general/models/Qwen3-30B-A3B-Instruct-2507-FP8  \\\n--served-model-name Qwen3-30B-A3B-Instruct-2507-FP8 \\\n--tensor-parallel-size 2 \\\n--pipeline-parallel-size 1 \\\n--gpu-memory-utilization  0.9 \\\n--port 8011 \\\n--trust-remote-code \\\n--max-model-len 64000 \\\n--enforce_eager true ',
         # --enforce-eager is a switch: the `true` after it is a second positional, which vllm serve refuses
         ('refuses', 'unrecognized arguments: true')),
    Case('vmlx516', 'https://github.com/waybarrios/vllm-mlx/issues/516', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'vllm-mlx serve Qwen/Qwen3-32B --reasoning-parser qwen3 --port 8000',
         ('refuses', "unknown engine command 'vllm-mlx'")),
    Case('v12308', 'https://github.com/vllm-project/vllm/issues/12308', 'model', 'RTX 4060 Ti 16GB', None, FIXED,
         '  embeddings:\n    image: vllm/vllm-openai:v0.6.4\n    command: \n      - "--task"\n      - "embedding"\n      - "--model"\n      - "intfloat/multilingual-e5-large"\n      - "--dtype"\n      - "auto"\n      - "--tensor-parallel-size"\n      - "1"\n      - "--host"\n      - "0.0.0.0"\n      - "--port"\n      - "9000"\n      - "--gpu-memory-utilization"\n      - "0.25"\n      - "--trust-remote-code"\n    environment:\n      - HF_TOKEN=$HF_TOKEN\n      - CUDA_VISIBLE_DEVICES=0\n    volumes:\n      - /home/ubuntu/.cache/huggingface/:/root/.cache/huggingface/\n    ports:\n      - "9010:9000"',
         ('refuses', 'give `oomkit check -- docker run -e CUDA_VISIBLE_DEVICES=0 vllm/vllm-openai:v0.6.4 --task embedding --model intfloat/multilingual-e5-large')),
    # ---- SGLang ----
    Case('sg16708', 'https://github.com/sgl-project/sglang/pull/16708', 'cmd', '4x H100', '0.5.7', FIXED,
         'unset SGLANG_PP_LAYER_PARTITION\npython -m sglang.launch_server --model-path /work/models/Qwen3-Next-80B-A3B-Instruct --port 30000 --trust-remote --host [0.0.0.0](http://0.0.0.0/) --enable-metrics --tp 4 --mem-fraction-static 0.8 --torch-compile-max-bs 8  --context-length 32768 --served-model-name xop3qwen80bnexttest --speculative-algo NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --tool-call-parser qwen25 --mamba-scheduler-strategy extra_buffer --preferred-sampling-params \'{"temperature":0.7,"top_p":0.8,"top_k":20,"min_p":0}\' --chunked-prefill-size 4096 --enable-request-time-stats-logging --decode-log-interval 10  --disaggregation-ib-device  mlx5_bond_0,mlx5_bond_1,mlx5_bond_2,mlx5_bond_3  --disaggregation-mode prefill',
         # its flags read (--mamba-scheduler-strategy extra_buffer included), the refusal is oomkit's own limit
         # (NEXTN speculation on a hybrid linear-attention model), no longer "unrecognized arguments: extra_buffer"
         ('refuses', 'speculative decoding with a hybrid Mamba/linear-attention model is not modelled')),
    Case('sg3582', 'https://github.com/sgl-project/sglang/pull/3582', 'cmd', '8x H20', '0.4.3', FIXED,
         'python -m sglang.launch_server --model-path /ossfs/workspace/DeepSeek-R1  --served-model-name mozz --port  8188  --tensor-parallel-size 8  --mem-fraction-static 0.96 --max-running-requests 32 --trust-remote-code --enable-cache-report --quantization fp8 --context-length 32768 --chunked-prefill-size 2048 --speculative-algo NEXTN --speculative-draft /mntfn/open_model/deepseek/deepseek-nextn --speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 2',
         # 0.4.3's parser has one flag so spelled: --speculative-draft-model-path
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1', 'ctx': 32768, 'settings': {'speculative_algorithm': 'NEXTN'},
                    'warn': '--speculative-draft-model-path /mntfn/open_model/deepseek/deepseek-nextn'})),
    Case('sg5513', 'https://github.com/sgl-project/sglang/issues/5513', 'cmd', '8x H20', '0.4.5', RIGHT,
         'python -m sglang.launch_server --served-model-name=ds-r1-671b --model-path=$models/DeepSeek-R1 \\\n--enable-p2p-check --reasoning-parser=deepseek-r1 --trust-remote-code --host=0.0.0.0 --port=38001 \\\n--mem-fraction-static=0.9 \\\n--tp=8 --max-total-tokens=65000 --max-running-requests=64 \\\n--enable-ep-moe \\\n--disable-radix-cache \\\n--speculative-algorithm EAGLE3 \\\n--speculative-draft-model-path $moddels/DeepSeek-R1-NextN \\\n--speculative-num-steps 3 \\\n--speculative-eagle-topk 1 \\\n--speculative-num-draft-tokens 4',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1', 'settings': {'tp_size': 8, 'speculative_algorithm': 'EAGLE3'}})),
    Case('atom743', 'https://github.com/ROCm/ATOM/pull/743', 'cmd', '4x MI355X', None, RIGHT,
         'export AITER_QUICK_REDUCE_QUANTIZATION=INT4\nexport SGLANG_AITER_FP8_PREFILL_ATTN=0\nexport SGLANG_USE_AITER=1\nexport ATOM_ENABLE_DS_QKNORM_QUANT_FUSION=1\n\nexport MORI_SHMEM_MODE=ISOLATION\n\nmodel_path=/models/DeepSeek-R1-0528-MXFP4/\nexport PYTHONPATH=/workspace/dpsk-fp4/sglang/python:/workspace/dpsk-fp4/ATOM_PR/ATOM_main/ATOM\n\nexport SGLANG_EXTERNAL_MODEL_PACKAGE=atom.plugin.sglang.models\n\nexport SGLANG_ENABLE_TORCH_COMPILE=128\n\npython3 -m sglang.launch_server \\\n    --model-path $model_path \\\n    --host localhost \\\n    --port 8000 \\\n    --trust-remote-code \\\n    --tensor-parallel-size 4 \\\n    --data-parallel-size 4 \\\n    --expert-parallel-size 4 \\\n    --enable-dp-attention \\\n    --kv-cache-dtype fp8_e4m3 \\\n    --mem-fraction-static 0.9 \\\n    --page-size 1 \\\n    --decode-log-interval 1000 \\\n    --disable-radix-cache',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1-0528-MXFP4', 'settings': {'tp_size': 4, 'dp_size': 4, 'kv_cache_dtype': 'fp8_e4m3'}})),
    Case('sg8362', 'https://github.com/sgl-project/sglang/issues/8362', 'cmd', '4x RTX 4090 48GB', None, FIXED,
         '`docker run -d --gpus all \\\n  --shm-size 32g \\\n  -p 30000:30000 \\\n  --env "SGLANG_USE_MODELSCOPE=true" \\\n  --ipc=host \\\n  lmsysorg/sglang:latest \\\n  python3 -m sglang.launch_server \\\n    --model-path Qwen/Qwen3-235B-A22B-GPTQ-Int4 \\\n    --host 0.0.0.0 --port 30000 --tp 4 --enable-p2p-check --tool-call-parser qwen25 --reasoning-parser qwen3 --mem-fraction-static 0.85\n`',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-235B-A22B-GPTQ-Int4', 'settings': {'tp_size': 4}})),
    Case('sg10736', 'https://github.com/sgl-project/sglang/issues/10736', 'cmd', 'H20', None, RIGHT,
         'docker run --gpus all -d  --shm-size 96g --restart always -e NVIDIA_DISABLE_REQUIRE=1     -p 30000:30000     -v /data/hugface:/root/.cache/huggingface         --ipc=host     lmsysorg/sglang:latest     python3 -m sglang.launch_server --model-path qwen3-next-80b --host 0.0.0.0 --trust-remote-code --port 30000 --torchao-config int8dq --disable-cuda-graph',
         ('refuses', "unknown model 'qwen3-next-80b'")),
    Case('sg12002', 'https://github.com/sgl-project/sglang/pull/12002', 'cmd', '8x H100', None, RIGHT,
         'python3 -m sglang.launch_server --model-path ~/models/Qwen3-235B-A22B --trust-remote-code --disable-radix-cache --tp-size 8 --dp-size 2 --mem-fraction-static 0.85 --context-length 32768 --enable-dp-attention --enable-dp-lm-head --moe-dense-tp-size 1 --speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 3 --speculative-num-draft-tokens 8 --speculative-draft-model-path ~/models/lmsys/Qwen3-235B-A22B-EAGLE3 --attention-backend fa3',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3 235B-A22B', 'ctx': 32768, 'settings': {'tp_size': 8, 'dp_size': 2}})),
    Case('sg7883', 'https://github.com/sgl-project/sglang/issues/7883', 'cmd', 'H100', None, RIGHT,
         'python -m sglang.launch_server --model-path /home/zigzagcai/downloaded_huggingface/models--Qwen--Qwen3-8B/snapshots/2069b3fae1114555f3c020c81410e51fa0f656f2',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3 8B', 'ctx': 40960})),
    Case('sg6817', 'https://github.com/sgl-project/sglang/issues/6817', 'cmd', '8x H200', '0.4.6.post5', FIXED,
         '`python -m sglang.launch_server --model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --port 30000 --tp 8 --context-length 1000000 --mem-fraction-static 0.8\n`',
         ('reads', {'engine': 'sglang', 'model': 'Llama 4 Scout', 'ctx': 1000000, 'settings': {'tp_size': 8}})),
    Case('sg4547', 'https://github.com/sgl-project/sglang/issues/4547', 'model', 'A100', None, FIXED,
         'services:\n  sglang:\n    image: lmsysorg/sglang:latest\n    container_name: sglang\n    volumes:\n      - ${HOME}/.cache/huggingface:/root/.cache/huggingface\n      - /mnt/disks/sglang/data:/sglang/data\n    restart: always\n    ports:\n       - 80:30000\n    entrypoint: python3 -m sglang.launch_server\n    command: --model-path allenai/olmOCR-7B-0225-preview\n      --host 0.0.0.0\n      --port 30000\n      --chat-template qwen2-vl\n      --file-storage-path /sglang/data\n    ulimits:\n      memlock: -1\n      stack: 67108864\n    ipc: host',
         ('refuses', 'give `oomkit check -- python3 -m sglang.launch_server --model-path allenai/olmOCR-7B-0225-preview')),
    Case('sg5873', 'https://github.com/sgl-project/sglang/issues/5873', 'cmd', '4x H100', None, RIGHT,
         'ssh -o StrictHostKeyChecking=no  ytn0 "PS1=[] source ~/.bashrc  && ( CUDA_VISIBLE_DEVICES=0,1,2,3 UCX_TLS=rc,gdr_copy,rc_x,cuda_copy,cuda_ipc UCX_NET_DEVICES=mlx5_bond_1:1,mlx5_bond_2:1,mlx5_bond_3:1,mlx5_bond_4:1,mlx5_bond_5:1,mlx5_bond_6:1,mlx5_bond_7:1,mlx5_bond_8:1 UCX_LOG_LEVEL=info NCCL_DEBUG=WARN SGLANG_PD_NIXL_DEBUG_TRANSFER_TIME=1 SGL_ENABLE_JIT_DEEPGEMM=0 python3.10 -m sglang.launch_server --host 0.0.0.0 --nnodes 2 --node-rank 0 --dist-init-addr ytn0:2363 --tp 8 --model-path /mnt/gemininjceph2/geminicephfs/mm-base-plt2/user_yongtongwu/dpsk-r1-4layers/ --trust-remote-code --disable-radix-cache --schedule-policy fcfs --mem-fraction-static 0.70 --disable-overlap-schedule --chunked-prefill-size 32768  --log-level debug --enable-metrics --page-size 64 --disable-cuda-graph --disaggregation-mode prefill --disaggregation-transfer-backend nixl --disaggregation-bootstrap-port 13167 --max-running-requests 1024 --port 40129 \n)"',
         ('refuses', "unknown engine command 'ssh'")),
    # ---- Ollama ----
    Case('ol15634', 'https://github.com/ollama/ollama/issues/15634', 'cmd', 'RTX 3090', None, FIXED,
         'while true; do   OLLAMA_KEEP_ALIVE="-1"   OLLAMA_MODELS=/usr/share/ollama/.ollama/models OLLAMA_FLASH_ATTENTION=1  OLLAMA_HOST=0.0.0.0:11434   ollama serve;    echo "ollama crashed, restarting in 2 seconds...";   sleep 2; done',
         ('refuses', 'the ollama serve command names no model')),
    Case('ol14426', 'https://github.com/ollama/ollama/issues/14426', 'cmd', 'RTX 4090', None, RIGHT,
         '> OLLAMA_NUM_GPU=0 ollama run glm-4.7-flash:UD-Q3_K_XL',
         ('reads', {'engine': 'ollama', 'model': 'GLM-4.7-Flash', 'warn': 'OLLAMA_NUM_GPU: no Ollama release reads this variable'})),
    # ---- MLX ----
    Case('mlx112', 'https://github.com/ml-explore/mlx-lm/issues/112', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'mlx_lm.server --port 8070 --log-level DEBUG',
         ('refuses', 'the mlx_lm.server command names no model')),
    Case('mlx844', 'https://github.com/ml-explore/mlx-lm/issues/844', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'python -m mlx_lm generate --prompt "write a todo list as a single html page with js and css included" --max-tokens 1500 --model mlx-community/Qwen3-Coder-Next-4bit --temp 1.0 --top-p 0.95 --top-k 40',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3 Coder Next'})),
    Case('tq11', 'https://github.com/arozanov/turboquant-mlx/issues/11', 'cmd', 'M3 Ultra 512GB', None, FIXED,
         'while true; do\n  echo "Starting MLX Server..."\n  /Users/a1/miniconda3/bin/mlx_lm.server \\\n    --model "/Users/a1/.lmstudio/models/catalystsec/GLM-5.1-4bit" \\\n    --trust-remote-code \\\n    --host 127.0.0.1 \\\n    --port 1234 \\\n    --max-tokens 205536 \\\n    --prompt-cache-bytes 70G \\\n    --prompt-cache-size 20 \\\n    --prompt-concurrency 2 \\\n    --decode-concurrency 2\n  echo "Server stopped. Restarting in 3 seconds..."\n  sleep 3\ndone',
         ('reads', {'engine': 'mlx', 'model': 'GLM-5.1-4bit', 'warn': '--prompt-cache-bytes 70G'})),
    Case('mlxstudio91', 'https://github.com/jjang-ai/mlxstudio/issues/91', 'cmd', 'M4 Max 128GB', None, RIGHT,
         'vmlx serve\n        /models/unsloth/Qwen3.6-35B-A3B-MLX-8bit\n        --served-model-name qwen3.6\n        --host 127.0.0.1 --port ${PORT}\n        --timeout 300\n        --max-num-seqs 6\n        --prefill-batch-size 1024\n        --prefill-step-size 1024\n        --completion-batch-size 1024\n        --is-mllm\n        --continuous-batching\n        --cache-memory-percent 0.25\n        --use-paged-cache\n        --paged-cache-block-size 513\n        --stream-interval 1\n        --max-tokens 16384\n        --tool-call-parser qwen\n        --enable-auto-tool-choice\n        --reasoning-parser qwen3\n        --default-temperature 0.60\n        --default-top-p 0.95',
         ('refuses', "unknown engine command 'vmlx'")),
]

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG)


def test_the_sweep_counts():
    assert len(CASES) == 53 and len({c.url for c in CASES}) == 52 and len({c.id for c in CASES}) == 53
    assert sum(c.status == FIXED for c in CASES) == 19 and sum(c.status == STILL for c in CASES) == 0
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- an abbreviation read by the parser of the release given (were: argparse's "ambiguous option" over every
# release's flags, where --engine-version or the image's tag named a release whose parser has one of them) ----

@pytest.mark.parametrize("version,argv,said", [
    # vLLM 0.8.4 has --swap-space and not yet --swa-bounded-replay (0.31.0): --sw is --swap-space there
    ("0.8.4", ["vllm", "serve", "Qwen/Qwen3-8B", "--sw", "8"], None),
    # 0.34.0 has --swa-bounded-replay (a switch) and no --swap-space: the 8 is left over, as its parser leaves it
    ("0.34.0", ["vllm", "serve", "Qwen/Qwen3-8B", "--sw", "8"], "unrecognized arguments: 8"),
    # SGLang 0.4.3's parser has one --speculative-draft* flag, --speculative-draft-model-path
    ("0.4.3", ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--speculative-algo", "EAGLE",
               "--speculative-draft", "x/y-eagle"], None),
])
def test_an_abbreviation_is_read_at_the_release_given(version, argv, said):
    rc, _, err = run_cli("check", "--gpu", "H100", "--engine-version", version, "--", *argv)
    one_line_or_answer(rc, err, argv)
    if said is None:
        assert rc in (0, 1), err
    else:
        assert rc == 2 and said in err, err


def test_an_image_tag_is_the_release_its_abbreviations_are_read_at():
    # vllm/vllm-openai:v0.8.4 is vLLM 0.8.4 (cmdline.image_version): its parser reads --sw as --swap-space
    p = parse_command(["docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.8.4", "--model", "Qwen/Qwen3-8B", "--sw",
                       "8"], {})
    assert p.settings.engine_version == "0.8.4"
    with pytest.raises(OomkitError, match="ambiguous option: --sw"):
        parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--sw", "8"], {})  # no release known: refused over all


# ---- the wrappers and the text around a paste (were: "unknown engine command 'numactl'" / "'while'" / "'`docker'" /
# "'``'" / "'❯'" / "'[shrisha@gforce'", and "invalid argument: \\" for a quoted reply) ----

@pytest.mark.parametrize("text,argv", [
    ("numactl --interleave=all ./llama-server -m m.gguf", ["numactl", "--interleave=all", "./llama-server", "-m",
                                                           "m.gguf"]),
    ("while true; do OLLAMA_X=1 ollama serve; echo restarting; sleep 2; done", ["OLLAMA_X=1", "ollama", "serve"]),
    ("while true; do\n  echo a\n  mlx_lm.server \\\n    --model m \\\n    --port 1\n  sleep 3\ndone",
     ["mlx_lm.server", "--model", "m", "--port", "1"]),
    ("for i in 1 2; do vllm serve q; done", ["vllm", "serve", "q"]),
    ("```bash\nvllm serve q --max-model-len 4096\n```", ["vllm", "serve", "q", "--max-model-len", "4096"]),
    ("`vllm serve q`", ["vllm", "serve", "q"]),
    ("`vllm serve q\n`", ["vllm", "serve", "q"]),
    ("> vllm serve q \\\n>   --tp 2", ["vllm", "serve", "q", "--tp", "2"]),
    ("> > ```\n> > vllm serve q\n> > ```", ["vllm", "serve", "q"]),
    ("❯ llama-bench -m m.gguf", ["llama-bench", "-m", "m.gguf"]),
    ("➜ llama-bench -m m.gguf", ["llama-bench", "-m", "m.gguf"]),
    ("me@box:~/llama.cpp$ ./llama-server -m m.gguf", ["./llama-server", "-m", "m.gguf"]),
    ("[me@box llama.cpp]$ ./llama-server -m m.gguf", ["./llama-server", "-m", "m.gguf"]),
    ("[x] vllm", ["[x]", "vllm"]),  # no prompt: kept
    ("vllm serve q --x `date`", ["vllm", "serve", "q", "--x", "`date`"]),  # backticks inside a command: kept
])
def test_the_text_around_a_pasted_command(text, argv):
    assert split_command(text) == argv


def test_numactl_runs_the_engine_command():
    p = parse_command(["numactl", "--interleave=all", "-N", "0", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M",
                       "-c", "4096"], {})
    assert (p.engine, p.model, p.settings.n_ctx) == ("llama.cpp", "unsloth/Qwen3-8B-GGUF", 4096)


# ---- refusals that say what is true (were: "unknown engine command 'python'", "invalid parameter for argument:
# llama-bench.exe", llama-bench -m a,b sized as its last model) ----

@pytest.mark.parametrize("argv,said", [
    (["python", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"],
     "python sglang.launch_server: python runs a file of that name"),
    (["python3", "-u", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-8B"],
     "give python -m vllm.entrypoints.openai.api_server"),
    (["llama-bench", "-m", "a.gguf", "llama-bench", "-m", "b.gguf"], "a second command (llama-bench ...) follows"),
    (["llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "./llama-server", "-c", "4096"],
     "a second command (./llama-server ...) follows"),
    (["llama-bench", "-m", "a.gguf,b.gguf", "-m", "c.gguf"], "llama-bench -m lists 3 models"),
])
def test_refusals_that_say_what_is_true(argv, said):
    rc, _, err = run_cli("check", "--gpu", "RTX 4090", "--", *argv)
    one_line_or_answer(rc, err, argv)
    assert rc == 2 and said in err, err


def test_llama_bench_one_model_listed_twice_is_one_model():
    p = parse_command(["llama-bench", "-m", "unsloth/Qwen3-8B-GGUF,unsloth/Qwen3-8B-GGUF", "-p", "512"], {})
    assert p.model == "unsloth/Qwen3-8B-GGUF"


# ---- llama.cpp: a typed -c 0 is the trained context in every build (was: the 4096 default of the builds between
# PR #10136 and PR #16653, with a note saying so) ----

def test_a_typed_ctx_0_is_the_trained_context():
    # llama.cpp#15077 (g0t4, 2025-08-07, b6100 era): gpt-oss-120b with --ctx-size 0 -> n_ctx_train 131072
    argv = split_command("llama-server -hf ggml-org/gpt-oss-120b-GGUF --ctx-size 0 --jinja --flash-attn "
                         "--n-gpu-layers 99 --reasoning-format none --n-cpu-moe 3")
    rc, out, err = run_cli("check", "--gpu", "2x RTX 5090", "--engine-version", "b6100", "--json", "--", *argv)
    assert rc in (0, 1), err
    assert json.loads(out)["estimate"]["settings"]["n_ctx"] == 131072
    # -c left out at that build: its 4096 default
    rc, out, err = run_cli("check", "--gpu", "2x RTX 5090", "--engine-version", "b6100", "--json", "--", "llama-server",
                        "-hf", "ggml-org/gpt-oss-120b-GGUF")
    assert rc in (0, 1) and json.loads(out)["estimate"]["settings"]["n_ctx"] == 4096, err


# ---- vLLM --hf-overrides of a multimodal model's text config (was: "--hf-overrides text_config: oomkit does not
# rebuild the model's layers") ----

def test_a_text_config_rope_override_extends_the_derived_length():
    # the Qwen3.6 model card's YaRN x4 (vllm#49011, recipes#398): 262144 x 4 = 1048576 is the derived max_model_len
    yarn = ('{"text_config":{"rope_parameters":{"mrope_interleaved": true, "mrope_section": [11, 11, 10], '
            '"rope_type": "yarn", "rope_theta": 10000000, "partial_rotary_factor": 0.25, "factor": 4.0,'
            '"original_max_position_embeddings": 262144}}}')
    base = ["vllm", "serve", "Qwen/Qwen3.6-27B", "--max-model-len", "1048576"]
    rc, _, err = run_cli("check", "--gpu", "8x H100", "--engine-version", "0.25.1", "--", *base)
    assert rc == 2 and "is greater than the derived max_model_len" in err, err
    rc, out, err = run_cli("check", "--gpu", "8x H100", "--engine-version", "0.25.1", "--json", "--", *base,
                        "--tensor-parallel-size", "8", "--hf-overrides", yarn)
    assert rc in (0, 1) and json.loads(out)["estimate"]["settings"]["max_model_len"] == 1048576, err
    rc, _, err = run_cli("check", "--gpu", "H100", "--", "vllm", "serve", "Qwen/Qwen3.6-27B", "--hf-overrides",
                      '{"text_config": {"num_hidden_layers": 4}}')
    assert rc == 2 and "--hf-overrides text_config: oomkit does not rebuild" in err, err  # a reshaping one: refused


# ---- a Docker Compose service pasted as MODEL (was: "unknown engine command 'services:'") ----

@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "model"], ids=lambda c: c.id)
def test_the_compose_form_given_answers(c):
    rc, _, err = run_cli("check", c.text, *hardware_args(c))
    assert rc == 2 and "Docker Compose service" in err, err
    form = err.split("give `oomkit check -- ", 1)[1].rsplit("`", 1)[0]
    p = parse_command(split_command(form), {})  # the form given is the service's engine command, as oomkit reads it
    assert (p.engine, p.model) == {"sg4547": ("sglang", "allenai/olmOCR-7B-0225-preview"),
                                   "v12308": ("vllm", "intfloat/multilingual-e5-large")}[c.id]


# a Kubernetes container likewise (kubernetes.io, "Define a Command and Arguments for a Container": `command`
# replaces the image's ENTRYPOINT, `args` its CMD; `env` a list of name / value). Constructed in the form of
# vllm#52656's Deployment (whose stored manifest is cut inside its args), not a thread's text
@pytest.mark.parametrize("text,form", [
    ("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - args:\n"
     "        - Qwen/Qwen3-8B\n        - --max-model-len\n        - \"8192\"\n        env:\n        - name: VLLM_USE_V1\n"
     "          value: \"1\"\n        image: vllm/vllm-openai:v0.11.0\n        name: vllm",
     "docker run -e VLLM_USE_V1=1 vllm/vllm-openai:v0.11.0 Qwen/Qwen3-8B --max-model-len 8192"),
    ("spec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.11.0\n    command: [\"vllm\", \"serve\", "
     "\"Qwen/Qwen3-8B\", \"--max-model-len\", \"8192\"]", "vllm serve Qwen/Qwen3-8B --max-model-len 8192"),
])
def test_a_kubernetes_container_names_its_command(text, form):
    rc, _, err = run_cli("check", text, "--gpu", "H100")
    assert rc == 2 and "this is a Kubernetes container, not a model name" in err, err
    assert f"`oomkit check -- {form}`" in err, err
    rc, out, err = run_cli("check", "--gpu", "H100", "--json", "--", *split_command(form))
    assert rc in (0, 1) and json.loads(out)["estimate"]["settings"]["max_model_len"] == 8192, err


@pytest.mark.parametrize("text", ["model: Qwen/Qwen3-8B\ntensor-parallel-size: 2", "FROM qwen3:8b\nPARAMETER num_ctx 8",
                                  "command: [unclosed\nentrypoint: x", "services:\n  web:\n    image: nginx"])
def test_text_that_is_no_compose_service_is_read_as_before(text):
    rc, _, err = run_cli("check", text, "--gpu", "RTX 4090")
    assert rc == 2 and "Docker Compose" not in err, err


# ---- the mutation pass: each real command cut, with a word dropped, doubled or garbled ----

def _text_mutations(text: str, rng: random.Random) -> list[str]:
    """The paste itself: cut anywhere, a line dropped, markdown or a loop put around it."""
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    lines = text.split("\n")
    dropped = ["\n".join(lines[:k] + lines[k + 1:]) for k in range(min(len(lines), 2))] if len(lines) > 1 else []
    return [*cuts, *dropped, f"`{text}`", f"```\n{text}\n```", "> " + text.replace("\n", "\n> "),
            f"while true; do {text}; done", text + "\n" + text, "❯ " + text]


GARBLES = ("`", "> ")  # a word garbled also to a backtick and to a blockquote marker


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"], ids=lambda c: c.id)
def test_mutated_real_commands_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for m in mutations(split_command(c.text), rng, GARBLES):
        rc, _, err = run_cli("check", *hardware_args(c), *version_args(c), "--", *m)
        one_line_or_answer(rc, err, (c.id, m))
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c), *version_args(c))
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
        r = client.get("/api/check", params={"command": "numactl --interleave=all llama-server -hf "
                                                        "unsloth/Qwen3-8B-GGUF:Q4_K_M -c 8192", "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["n_ctx"] == 8192, r.text
        r = client.get("/api/check", params={"command": "`vllm serve Qwen/Qwen3-8B --sw 8 --max-model-len 4096`",
                                             "gpu": "RTX 4090", "engine_version": "0.8.4"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["max_model_len"] == 4096, r.text
        r = client.post("/api/fit", json={"command": "while true; do vllm serve Qwen/Qwen3-8B --max-model-len 40960; "
                                                     "sleep 2; done", "gpu": "RTX 4090"})
        assert r.status_code == 200, r.text
        r = client.get("/api/check", params={"command": "llama-bench -m a.gguf,b.gguf", "gpu": "RTX 4090"})
        assert r.status_code == 400 and "lists 2 models" in r.json()["error"], r.text
