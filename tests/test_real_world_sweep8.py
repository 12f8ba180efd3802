"""Real users' input, eighth sweep: engine commands copied from public GitHub issues and pull requests of 2025-2026
(each cited), favouring the text around a command (a zsh crash report, a `ps -ef` line, toolbx's prompt, a numbered
step, a lone backtick), containers (`docker run -v HOST:CONTAINER`, an image whose entrypoint is the engine, a
registry mirror), Docker Compose `command:` lists and a Kubernetes args array with `$(VAR)`, a cmd.exe batch file, a
vLLM `--config` file and SGLang's `sglang generate`, run through `oomkit check`, the command quoted as MODEL, `fit`,
`plan` and the web API, then mutated. None of their threads is in sweeps 2 to 7, tests/fixtures/commands/
real_commands.jsonl or the names held out (tests/test_names_heldout*.py).

Measured (2026-12-06), before this sweep's changes: 47 real inputs (40 commands; 6 compose services or manifests and
1 llama-server preset pasted as MODEL) from 44 public threads; 17 answered wrong (a wrong refusal or one for the
wrong reason, a hint that leads to another refusal, a setting file left unread, a model path read inside the
container): all 17 are fixed here (FIXED), none is left wrong (STILL). The fixes: engines/shell_words.py (zsh's
signal report, a `ps` line, toolbx's and a clocked theme's prompt, a numbered step, a lone backtick, a cmd.exe batch
file's preamble and `start`), engines/command.py (the compose hint for a list with no image or program, a YAML
null item, a tab PyYAML refuses, Kubernetes' `$(VAR)`, the host folder bound at a model path that is a mount point),
engines/cmdline.py (`sglang generate` / `render` / `version`), engines/vllm/args.py (`--config FILE`),
engines/llamacpp/args.py (a preset section that names no model).
"""

from __future__ import annotations

import random

import pytest

from oomkit.engines.command import on_the_host
from oomkit.engines.llamacpp.args import preset_hint
from oomkit.engines.pasted import compose_hint
from oomkit.engines.shell_words import split_command
from oomkit.engines.vllm.args import parse_args as vllm_args
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

# Not verbatim: none (prompts, quote marks, a trailing `=> error` and the cut ends are kept as posted; where a thread
# holds two inputs, sglang#6418's, sglang#17454's and ollama#9803's, each is a case). Hardware: as the thread names it
# or its log shows it; where it names none, a card of the kind the thread implies, on which no expectation below
# depends. Versions: as the thread states them.
CASES = [
    # ---- vLLM ----
    # v37133: `vllm serve MODEL` after an image whose entrypoint is `vllm serve` (vLLM: "unrecognized arguments: serve /models/...")
    Case('v37133', 'https://github.com/vllm-project/vllm/issues/37133', 'cmd', 'RTX 4090', '0.17.1', RIGHT,
         'sudo docker run --name qwen3 --rm --gpus all --security-opt seccomp=unconfined \\\n    --network=host --ipc=host \\\n    -v /data/ai_models/GLM-4.7-Flash-AWQ-4bit:/models/GLM-4.7-Flash-AWQ-4bit \\\n    -v ~/.cache:/root/.cache\\\n    vllm/vllm-openai:latest vllm serve /models/GLM-4.7-Flash-AWQ-4bit \\\n    --served-model-name GLM-4.7-Flash-AWQ-4bit \\\n    --trust-remote-code \\\n    --port 9527 \\\n    --gpu-memory-utilization 0.90 \\\n    --enable-prefix-caching \\\n    --enable-chunked-prefill \\\n    --max-model-len 4096 \\\n    --enable-auto-tool-choice --tool-call-parser hermes \\\n    --api-key tipray.123 --max_num_batched_tokens 4096 --swap_space 16',
         ('refuses', 'runs `vllm serve` itself')),
    # v18999: `--config FILE` read as vLLM reads it (FlexibleArgumentParser._pull_args_from_config): a file not here is refused
    # (was: ignored, the estimate made without the settings the file holds)
    Case('v18999', 'https://github.com/vllm-project/vllm/pull/18999', 'cmd', 'H100', '0.9.0', FIXED,
         'vllm serve meta-llama/Meta-Llama-3-8B-Instruct --config /tmp/config.yaml',
         ('refuses', 'no such file: /tmp/config.yaml')),
    # v14819: vLLM opens the config before it asks for the model (was: "names no model", the wrong reason)
    Case('v14819', 'https://github.com/vllm-project/vllm/issues/14819', 'cmd', 'RTX 4090', '0.7.3', FIXED,
         'vllm serve --config scenario.yaml',
         ('refuses', 'no such file: scenario.yaml')),
    Case('v36861', 'https://github.com/vllm-project/vllm/issues/36861', 'cmd', '4x A10', None, RIGHT,
         'python3 -m vllm.entrypoints.openai.api_server --served-model-name Qwen3.5-35B-A3B --model /athena/Qwen3.5-35B-A3B --gpu-memory-utilization 0.9 --tensor-parallel-size 4 --pipeline-parallel-size 1 --max-model-len 160000 --max-num-batched-tokens 4096 --max-num-seqs 32 --distributed-executor-backend ray --enable-log-requests --enable-log-outputs --enable-auto-tool-choice --tool-call-parser qwen3_coder --enable-prefix-caching --reasoning-parser qwen3',
         ('reads', {'engine': 'vllm', 'model': 'Qwen3.5 35B-A3B', 'ctx': 160000, 'settings': {'tensor_parallel_size': 4}})),
    # v19148: the same variable set twice before the command: the last wins, as bash's environment has it
    Case('v19148', 'https://github.com/vllm-project/vllm/issues/19148', 'cmd', '2x H100', None, RIGHT,
         'VLLM_ATTENTION_BACKEND=FLASHINFER CUDA_VISIBLE_DEVICES=1,2 VLLM_ATTENTION_BACKEND=DUAL_CHUNK_FLASH_ATTN vllm serve  Qwen/Qwen2.5-7B-Instruct-1M   --max-model-len 70000    --max-num-seqs 1 --port 2483 --enforce-eager',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2.5 7B Instruct 1M', 'ctx': 70000, 'settings': {'max_num_seqs': 1}})),
    # v29469: a reply's `> ` before four variables and a folder named without its path
    Case('v29469', 'https://github.com/vllm-project/vllm/issues/29469', 'cmd', 'DGX Spark', '0.11.2', RIGHT,
         '> TORCHINDUCTOR_DISABLE=1 VLLM_TORCH_COMPILE_LEVEL=0 VLLM_TEST_DYNAMO=0 VLLM_USE_V1=1 vllm serve "Qwen2.5-7B-Instruct" --host 0.0.0.0 --port 8006 --tensor-parallel-size 1 --gpu-memory-utilization 0.85 --max-model-len 8192 --max-num-seqs 256 --trust-remote-code',
         ('reads', {'engine': 'vllm', 'model': 'Qwen2.5 7B Instruct', 'ctx': 8192})),
    # v17366: `--gpus='"device=0"'` and the folder bound at /data/model/: its host name says no catalog model
    Case('v17366', 'https://github.com/vllm-project/vllm/issues/17366', 'cmd', 'A100 80GB', '0.8.5', RIGHT,
         'docker run -itd --gpus=\'"device=0"\' --name vllm_qwen_first -e VLLM_USE_V1=1 \\\n    --shm-size 10g -v /data/model/qwen2_5_14b_w8a8/:/data/model/ --network=host \\\n    vllm/vllm-openai:v0.8.5  \\\n    --model /data/model/ --max-model-len 4096 --gpu-memory-utilization 0.3 --port 8900',
         ('refuses', "unknown model '/data/model/qwen2_5_14b_w8a8/'")),
    # v27251: vllm/vllm-openai through a registry mirror's path; a GGUF file below the mount point keeps the engine's path
    Case('v27251', 'https://github.com/vllm-project/vllm/issues/27251', 'cmd', '8x L20', '0.10.2', RIGHT,
         'docker run -d   --name Qwen3-Coder-480B-A35B-Instruct-GGUF   --runtime nvidia   --gpus \'"device=0,1,2,3,4,5,6,7"\'   -v /xinference/my_model/Qwen3-Coder-480B-A35B-Instruct-GGUF:/root/.cache/modelscope/Qwen3-Coder-480B-A35B-Instruct-GGUF   -p 8056:8081   --ipc=host   swr.cn-north-4.myhuaweicloud.com/ddn-k8s/docker.io/vllm/vllm-openai:v0.10.2   --api-key qwen3coder480b     --model /root/.cache/modelscope/Qwen3-Coder-480B-A35B-Instruct-GGUF/Qwen3-Coder-480B-A35B-Instruct-Q4_K_M-Merge.gguf   --served-model-name Qwen3-Coder-480B-A35B-Instruct   --enable-auto-tool-choice   --tool-call-parser qwen3_coder   --gpu-memory-utilization 0.85   --tensor-parallel-size 8 --reasoning-parser qwen3   --max-model-len 50000   --port 8081',
         ('refuses', 'no such file: /root/.cache/modelscope/Qwen3-Coder-480B-A35B-Instruct-GGUF/')),
    # gfx906i15: `-v HOST:/model ... vllm serve /model`: a folder bound whole at a mount point is the host folder (was: "unknown model '/model';
    # did you mean olmoe?"); its lines lost their backslashes in the issue's <summary>
    Case('gfx906i15', 'https://github.com/nlzy/vllm-gfx906/issues/15', 'cmd', '4x MI50', None, FIXED,
         'sudo docker run -it --rm --shm-size=2g \n--device=/dev/kfd --device=/dev/dri     \n--group-add video -p 8000:8000 -v /home/andyzhou/Documents/models/Qwen/qwq-32b-gptq-int8:/model     nalanzeyu/vllm-gfx906 vllm serve /model    \n--served-model-name "QwQ-32B-AWQ-GPTQ-INT8"     \n--max_num_seqs=50     \n--tensor-parallel-size 4     \n--pipeline_parallel_size 1\n',
         ('reads', {'engine': 'vllm', 'model': 'qwq-32b-gptq-int8', 'settings': {'tensor_parallel_size': 4}})),
    # v22072: a compose list cut after a dash: YAML's null is no word (was: the hint ended in `None`)
    Case('v22072', 'https://github.com/vllm-project/vllm/issues/22072', 'model', 'RTX 3060 Ti', None, FIXED,
         'services:\n  vllm:\n    container_name: vllm\n    image: vllm/vllm-openai:latest\n    restart: unless-stopped\n    ipc: host\n    ports:\n    - 10200:8000\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n    pull_policy: always\n    volumes:\n    - ./vllm/huggingface:/root/.cache/huggingface\n    command:\n    - serve\n    - HuggingFaceTB/SmolLM3-3B\n    - --dtype auto\n    -',
         ('refuses', "`oomkit check -- docker run vllm/vllm-openai:latest serve HuggingFaceTB/SmolLM3-3B '--dtype auto'`")),
    # v40872 / v40874: a compose `command:` list alone, for vllm/vllm-openai whose entrypoint is `vllm serve` (was: a hint
    # `oomkit check -- openai/gpt-oss-120b ...`, then refused as an unknown engine command)
    Case('v40872', 'https://github.com/vllm-project/vllm/issues/40872', 'model', 'H100', None, FIXED,
         'command:\n  - openai/gpt-oss-120b\n  - --compilation-config\n  - \'{"mode": 3}\'',
         ('refuses', 'names no image and its command no program')),
    Case('v40874', 'https://github.com/vllm-project/vllm/pull/40874', 'model', 'H100', None, FIXED,
         'command:\n  - Qwen/Qwen3-0.6B\n  - --compilation-config.mode=3',
         ('refuses', 'docker run IMAGE Qwen/Qwen3-0.6B --compilation-config.mode=3')),
    # v20726: `ipc: host` and a tab after it, which PyYAML refuses and Docker Compose reads (was: "unknown engine command
    # 'services:'")
    Case('v20726', 'https://github.com/vllm-project/vllm/issues/20726', 'model', 'RTX 5060 Ti 16GB', None, FIXED,
         'services:\n  vllm:\n    container_name: vllm\n    restart: no\n    image: vllm/vllm-openai:latest\n    runtime: nvidia\n    ipc: host\t \n    #environment:\n     # - HF_HUB_OFFLINE = 1\n     # - CUDA_VISIBLE_DEVICES = 0\n    volumes:\n      - D:\\vllm\\models\\qwen2.5:/models\n    command: [\n      "--model", "/models/Qwen2.5-7B",\n      "--served_model_name", "Qwen2.5-7B",\n      "--gpu_memory_utilization", "0.90",\n      "--max_model_len", "1024 ",\n      "--tensor-parallel-size", "1"\n    ]\n    ports:\n      - 8010:8000\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              capabilities: [ gpu ]\n              count: all\n',
         ('refuses', 'docker run vllm/vllm-openai:latest --model /models/Qwen2.5-7B')),
    # lmcache906: an entrypoint string and a folded `command:`
    Case('lmcache906', 'https://github.com/LMCache/LMCache/issues/906', 'model', '2x RTX 4090', None, RIGHT,
         '  vllm-lmcache:\n    image: lmcache/vllm-openai:nightly-2025-06-24\n    container_name: vllm-lmcache-llm\n    restart: always\n    network_mode: host\n    volumes:\n      - /root/sdb2/model/DeepSeek-R1-Distill:/model\n      - /etc/localtime:/etc/localtime:ro\n      - /usr/share/zoneinfo/Asia/Shanghai:/usr/share/zoneinfo/Asia/Shanghai:ro\n    environment:\n      - CUDA_VISIBLE_DEVICES=0,1\n      - LMCACHE_CONFIG_FILE="/root/sdb2/LMcache_file/cpu-offload.yaml"\n      - LMCACHE_USE_EXPERIMENTAL=True\n    entrypoint: vllm serve /model/DeepSeek-R1-Distill-Qwen-32B\n    command:\n      --host xxx\n      --port xxx\n      --tensor-parallel-size 2 \n      --gpu-memory-utilization 0.80\n      --max-model-len 81920\n      --enable_chunked_prefill\n      --disable-log-requests\n      --kv-transfer-config \'{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}\' ',
         ('refuses', 'vllm serve /model/DeepSeek-R1-Distill-Qwen-32B --host xxx')),
    # wgserving72: Kubernetes' `$(MODEL_ID)` in args is the container's variable (was: the hint kept `$(MODEL_ID)`)
    Case('wgserving72', 'https://github.com/kubernetes-sigs/wg-serving/pull/72', 'model', 'L4', None, FIXED,
         'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    app: tinyllama-1b-vllm-inference-server\n  name: tinyllama-1b-vllm-deployment\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: tinyllama-1b-vllm-inference-server\n      deployment: tinyllama-1b-vllm-deployment\n  template:\n    metadata:\n      labels:\n        ai.gke.io/inference-server: vllm\n        ai.gke.io/model: tinyllama-1b\n        app: tinyllama-1b-vllm-inference-server\n        deployment: tinyllama-1b-vllm-deployment\n        examples.ai.gke.io/source: blueprints\n    spec:\n      containers:\n      - args:\n        - --model=$(MODEL_ID)\n        - --tensor-parallel-size=$(TENSOR_PARALLEL_SIZE)\n        command:\n        - python3\n        - -m\n        - vllm.entrypoints.openai.api_server\n        env:\n        - name: MODEL_ID\n          value: TinyLlama/TinyLlama-1.1b-Chat-v1.0\n        - name: HUGGING_FACE_HUB_TOKEN\n          valueFrom:\n            secretKeyRef:\n              key: hf_api_token\n              name: hf-secret\n        - name: TENSOR_PARALLEL_SIZE\n          value: "1"\n        image: vllm/vllm-openai:v0.8.5\n        name: inference-server\n        ports:\n        - containerPort: 8000\n          name: metrics\n        readinessProbe:',
         ('refuses', '--model=TinyLlama/TinyLlama-1.1b-Chat-v1.0 --tensor-parallel-size=1')),
    # ---- SGLang ----
    Case('sg3817', 'https://github.com/sgl-project/sglang/issues/3817', 'cmd', '8x H20', None, RIGHT,
         'nohup python3 -m sglang.launch_server --model /export/dp/DeepSeek-R1 --tp 8 --trust-remote-code --enable-dp-attention --disable-overlap-schedule --max-running-requests 512 --context-length 8192 > /export/sglang_serve.log 2>&1 &',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1', 'ctx': 8192, 'settings': {'tp_size': 8}})),
    Case('sg6418', 'https://github.com/sgl-project/sglang/issues/6418', 'cmd', '8x H20', '0.4.6.post4', RIGHT,
         'python3 -m sglang.launch_server --quantization fp8 --kv-cache-dtype fp8_e5m2 --model /export/model/deepseek/DeepSeek-V3-0324 --tp 8 --port 80 --host 0.0.0.0 --mem-fraction-static 0.9 --disable-cuda-graph --tool-call-parser deepseekv3 --chat-template /export/model/deepseek/DeepSeek-V3-0324/tool_chat_template_deepseekv3.jinja',
         ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3 0324', 'settings': {'tp_size': 8, 'kv_cache_dtype': 'fp8_e5m2'}})),
    # sg6418b: the container started on `--entrypoint sleep`, the server launched inside it later
    Case('sg6418b', 'https://github.com/sgl-project/sglang/issues/6418', 'cmd', '8x H20', None, RIGHT,
         'docker run --name sglang -v /export:/export -d --gpus all --shm-size 128g -p 80:80 --privileged --entrypoint "sleep" 65be730e0d41 infinity',
         ('refuses', "unknown engine command 'sleep'")),
    # sg5765: the paste cut after `--port`
    Case('sg5765', 'https://github.com/sgl-project/sglang/issues/5765', 'cmd', '8x H100', '0.4.5.post3', RIGHT,
         'docker run --gpus all --shm-size 200g --network=host -v /data/nfs-clientdata/models:/models --name sglang_multinode1 --env "NCCL_SOCKET_IFNAME=ib_2_1" --env "GLOO_SOCKET_IFNAME=ib_2_1" --env "NCCL_DEBUG=INFO" --env "NCCL_IB_DISABLE=0" --env "GLOO_DEBUG=1" -itd --ipc=host lmsysorg/sglang:v0.4.5.post3-cu124 python3 -m sglang.launch_server --model-path /models/deepseek-r1 --mem-fraction-static 0.9 --tp 16 --dist-init-addr 10.16.135.11:20000 --nnodes 2 --node-rank 0 --trust-remote-code --enable-torch-compile --attention-backend flashinfer --torch-compile-max-bs 8 --host 0.0.0.0 --port',
         ('refuses', 'argument --port: expected one argument')),
    # sg3855: lmsysorg/sglang has no entrypoint: `--host` is the command the container runs
    Case('sg3855', 'https://github.com/sgl-project/sglang/issues/3855', 'cmd', 'RTX 4090', None, RIGHT,
         'docker run --privileged --gpus all   -it --rm  --shm-size 32g     -p 30000:30000     -v ~/.cache/huggingface:/root/.cache/huggingface     --env "HF_TOKEN=xxxx"     --ipc=host     lmsysorg/sglang:dev     --host 0.0.0.0 --port 30000',
         ('refuses', "unknown engine command '--host'")),
    Case('sg7547', 'https://github.com/sgl-project/sglang/issues/7547', 'cmd', 'RTX 4090', None, RIGHT,
         '(1) m@m:~/sglang$ python3 -m sglang.launch_server --model-path distilgpt2 --device cpu',
         ('refuses', '--device cpu')),
    Case('sg14527', 'https://github.com/sgl-project/sglang/issues/14527', 'cmd', '8x H100', None, RIGHT,
         'python -m sglang.launch_server \\\n  --model Qwen/Qwen3-Next-80B-A3B-Instruct \\\n  --tp 8 \\\n  --host 0.0.0.0 \\\n  --port 8000',
         ('reads', {'engine': 'sglang', 'model': 'Qwen3-Next 80B-A3B Instruct', 'settings': {'tp_size': 8}})),
    # sg28431: three MOONCAKE_ variables continued before the command, a JSON value in escaped double quotes
    Case('sg28431', 'https://github.com/sgl-project/sglang/issues/28431', 'cmd', '8x H100', '0.5.13.post1', RIGHT,
         'MOONCAKE_GLOBAL_SEGMENT_SIZE=550gb \\\nMOONCAKE_MASTER=master:50051 \\\nMOONCAKE_TE_META_DATA_SERVER=master:8080/metadata \\\npython3 -m sglang.launch_server \\\n    --enable-metrics --log-level-http=warning --enable-cache-report \\\n    --model=/models/Qwen3.5-397B-A17B-FP8 --served-model-name=Qwen3.5-397B-A17B-FP8 \\\n    --host=0.0.0.0 --port=8000  \\\n    --tp=8 --tool-call-parser=qwen3_coder \\\n    --speculative-algorithm=EAGLE --speculative-num-steps=3 --speculative-eagle-topk=1 --speculative-num-draft-tokens=4 \\\n    --mem-fraction-static=0.8 --mamba-full-memory-ratio=0.3 \\\n    --mamba-scheduler-strategy=extra_buffer --page-size=64 --attention-backend=fa3 \\\n    --enable-hierarchical-cache --hicache-storage-prefetch-policy=timeout --hicache-storage-backend=mooncake \\\n    --hicache-io-backend=direct --hicache-mem-layout=page_first_direct --hicache-write-policy=write_through \\\n    --kv-cache-dtype=fp8_e4m3 --enable-flashinfer-allreduce-fusion --enable-tokenizer-batch-encode \\\n    --model-loader-extra-config="{\\"enable_multithread_load\\":\\"true\\",\\"num_threads\\":64}" --weight-loader-prefetch-checkpoints --weight-loader-prefetch-num-threads=8',
         ('refuses', 'speculative decoding with a hybrid Mamba/linear-attention model is not modelled')),
    # recall24: a comma after the last flag, as argparse reads it (the thread says it ran)
    Case('recall24', 'https://github.com/Agent-RL/ReCall/issues/24', 'cmd', '2x A100', None, RIGHT,
         'python3 -m sglang.launch_server \\\n    --served-model-name qwen-judge \\\n    --model-path /mnt/pfs-guan-ssai/nlu/hyx/flashrag/FlashRAG/models/ReSearch-Qwen-7B \\\n    --tp 2 \\\n    --context-length 8192 \\\n    --enable-metrics \\\n    --dtype bfloat16 \\\n    --host 172.24.168.56 \\\n    --port 80 \\\n    --trust-remote-code \\\n    --disable-overlap \\\n    --disable-radix-cache \\\n    --disable-custom-all-reduce,',
         ('refuses', 'unrecognized arguments: --disable-custom-all-reduce,')),
    # sg17454: `sglang serve` on a diffusion model's folder
    Case('sg17454', 'https://github.com/sgl-project/sglang/issues/17454', 'cmd', '2x H100', '0.5.6.post2', RIGHT,
         'sglang serve --tp-size 2 --attention-backend torch_sdpa --model-path /data/Qwen-Image-2512 --host xxxxxxx --port 40040',
         ('refuses', "unknown model '/data/Qwen-Image-2512'")),
    # sg17454b: `sglang generate` (python/sglang/cli/main.py) is the diffusion generator (was: "launch_server.py: error:
    # unrecognized arguments: generate ...")
    Case('sg17454b', 'https://github.com/sgl-project/sglang/issues/17454', 'cmd', '5x H100', None, FIXED,
         'CUDA_VISIBLE_DEVICES=1,2,3,4,5 sglang generate --model-path /workspace/models/Qwen/Qwen-Image-2512 --text-encoder-cpu-offload --prompt "A logo With Bold Large text: SGL Diffusion" --dit-layerwise-offload --save-output --num-gpus 5 --tp-size 5',
         ('refuses', 'sglang generate runs SGLang Diffusion')),
    # ---- llama.cpp ----
    # lc19955: `<redacted>` in the path (bash would read redirections) and -c 100000, padded to 256 as llama-context.cpp does
    Case('lc19955', 'https://github.com/ggml-org/llama.cpp/issues/19955', 'cmd', 'RTX 5080', 'b8173', RIGHT,
         '/llama-server \\\n  -m /home/<redacted>/.lmstudio/models/unsloth/Qwen3-Coder-Next-GGUF/Qwen3-Coder-Next-Q4_K_M.gguf \\\n  --port 1234 --host 0.0.0.0 -fa on --no-mmap \\\n  -b 2048 -ub 2048 -c 100000 --cache-ram 0 \\\n  --temp 1 --top-k 40 --top-p 0.95 --repeat-penalty 1 --min-p 0.01',
         ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 Coder Next', 'ctx': 100096})),
    Case('lc14826', 'https://github.com/ggml-org/llama.cpp/issues/14826', 'cmd', 'RTX 3060', 'b5966', RIGHT,
         'llama-server -m any_model.gguf -c 8192 -ngl 99  --port 8081',
         ('refuses', 'no such file: any_model.gguf')),
    Case('lc18175', 'https://github.com/ggml-org/llama.cpp/issues/18175', 'cmd', '2x RTX 3090', None, RIGHT,
         './build-rpc-cuda/bin/llama-server --rpc 192.168.1.139:50054 -m /dataset/model/zai-org_GLM-4.6V-Q6_K-00001-of-00003.gguf -ngl 999 -c 32768 --port 5001 --host 0.0.0.0 -ts 23,24,64 --api-key <key> --no-mmap -dev CUDA0,CUDA1,RPC0 --chat-template-kwargs \'{"enable_thinking": false}\' --mmproj /dataset/model/mmproj-zai-org_GLM-4.6V-f16.gguf -fit on --verbose',
         ('refuses', 'its name says zai-org/GLM-4.6V:Q6_K')),
    Case('lc24343', 'https://github.com/ggml-org/llama.cpp/issues/24343', 'cmd', 'RTX 3080 Ti', 'b9110', RIGHT,
         '~/projects/llama.cpp/build/bin/llama-server   -m ./models/gemma-4-12B-it-qat-UD-Q4_K_XL.gguf   --model-draft ./models/gemma-4-12B-it-qat-assistant-MTP-Q8_0.gguf   --spec-type draft-mtp   --spec-draft-n-max 4   --parallel 1 --ctx-size 131072   --temp 1.0   --top-p 0.95   --top-k 64 --tools all --webui-mcp-proxy --jinja --chat-template-file ~/AI/models/jinja_templates/custom_pub_chat_template_gemma4.jinja',
         ('refuses', 'its name says google/gemma-4-12B-it:UD-Q4_K_XL')),
    Case('lc24684', 'https://github.com/ggml-org/llama.cpp/issues/24684', 'cmd', 'RTX 3090', 'b9611', RIGHT,
         './llama.cpp/bin/llama-server \\\n  --model ./GGUF/Qwen3.6-27B-MTP-Q4_K_M.gguf \\\n  --ctx-size 262144 \\\n  --fit on \\\n  --sleep-idle-seconds 60 \\\n  --no-mmap',
         ('refuses', 'its name says Qwen/Qwen3.6-27B:Q4_K_M')),
    Case('llmaix7', 'https://github.com/KatherLab/LLMAIx/issues/7', 'cmd', 'RTX 4090', None, RIGHT,
         'Training/llama.cpp/llama-server -m ../AIEngine/Llama-3.1-SauerkrautLM-70b-Instruct.Q4_K_S.gguf -ngl 30 --port 2929',
         ('refuses', 'no such file: ../AIEngine/Llama-3.1-SauerkrautLM-70b-Instruct.Q4_K_S.gguf')),
    # qwenpaw2595: `--model ...` as the issue wrote it
    Case('qwenpaw2595', 'https://github.com/agentscope-ai/QwenPaw/issues/2595', 'cmd', 'RTX 5070 Ti', None, RIGHT,
         'llama-server.exe --host 127.0.0.1 --port 59570 --model ... --alias agentscope-ai/CoPaw-Flash-4B-Q8_0',
         ('refuses', "unknown model '...'")),
    # chatllm103: chatllm.cpp's server.exe on its own .bin
    Case('chatllm103', 'https://github.com/foldl/chatllm.cpp/issues/103', 'cmd', 'RTX 4090', None, RIGHT,
         'C:\\L\\chatllm_win_x64\\bin\\server.exe -m C:\\L\\dots.ocr-3b.bin',
         ('refuses', 'unknown model')),
    # llamaswap1036: the Windows `llama.exe serve` behind a `> ` quote
    Case('llamaswap1036', 'https://github.com/mostlygeek/llama-swap/issues/1036', 'cmd', 'RTX 4090', None, RIGHT,
         '> llama.exe serve -m "model.gguf"',
         ('refuses', 'no such file: model.gguf')),
    # lc24350: a batch file (`@echo off`, `set VAR=...`, `start /affinity FFF0 /b /wait PROGRAM ^`) read as cmd.exe runs it
    # (was: "unknown engine command '@echo'"); then its `---fit`, which common/arg.cpp refuses (the thread's log shows the
    # server loading, which this does not explain)
    Case('lc24350', 'https://github.com/ggml-org/llama.cpp/issues/24350', 'cmd', '2x RTX 3060', 'b9573', FIXED,
         '@echo off\nset CUDA_DEVICE_ORDER=PCI_BUS_ID\n\nstart /affinity FFF0 /b /wait F:\\ai_system\\llama-cpp-cuda\\llama-server.exe ^\n  -m F:\\ai_models\\gemma4\\12B\\gemma-4-12B-it-heretic-QAT-UD-Q4_K_XL.gguf ^\n  --spec-draft-model F:\\ai_models\\gemma4\\12B\\MTP\\gemma-4-12B-it-qat-assistant-MTP-ONLY_Q4_0.gguf ^\n  --spec-type draft-mtp ^\n  --spec-draft-n-max 2 ^\n  -ngl 99 ^\n  -ts 50,50 ^\n  --threads 12 ^\n  -c 204800 ^\n  -b 1024 ^\n  -ub 128 ^\n  -np 1 ^\n  -ctk q8_0 ^\n  -ctv q8_0 ^\n  -fa on ^\n  --temp 1 ^\n  --top-k 64 ^\n  --top-p 0.95 ^\n  --min-p 0.00 ^\n  --presence_penalty 1.0 ^\n  --repeat-penalty 1.0^\n  --frequency-penalty 0.05 ^\n  --xtc-probability 0 ^\n  --mirostat 0 ^\n  --samplers "top_k;top_p;min_p;temperature" ^\n  --reasoning on ^\n  --seed -1 ^\n  --host 0.0.0.0 ^\n  --port 8000 ^\n  --jinja ^\n  --chat-template-file F:\\ai_models\\gemma4\\12B\\custom_pub_chat_template_gemma4.jinja ^\n  --ctx-checkpoints 2 ^\n  --warmup ^\n  --mlock ^\n  --no-mmap ^\n  ---fit on ^\n  -v',
         ('refuses', 'invalid argument: ---fit')),
    # lc18317: an inline code span's opening backtick left before `$ ` (was: "unknown engine command '`$'")
    Case('lc18317', 'https://github.com/ggml-org/llama.cpp/issues/18317', 'cmd', '2x RX 7900 XTX', 'b7651', FIXED,
         '`$ ./llama-server -m /media/dani/gry/LLM/models/Skyfall-31B-v4r-Q8_0.gguf -ngl 100 -fa on -ub 256 --jinja --special -c 24576 -dev Vulkan0,Vulkan1 -t 7 --no-mmap',
         ('refuses', 'no such file: /media/dani/gry/LLM/models/Skyfall-31B-v4r-Q8_0.gguf')),
    # strix41: toolbx's `⬢ [user@toolbx ~]$` prompt (was: "unknown engine command '⬢'")
    Case('strix41', 'https://github.com/kyuz0/amd-strix-halo-toolboxes/issues/41', 'cmd', '128GiB', 'b7643', FIXED,
         '⬢ [johannes@toolbx ~]$ llama-server -m ~/models/unsloth/MiniMax-M2.1-GGUF/UD-IQ2_M/MiniMax-M2.1-UD-IQ2_M-00001-of-00002.gguf -ngl 99 -fa on --no-mmap -c 60000 -fit off',
         ('refuses', 'its name says MiniMaxAI/MiniMax-M2.1:UD-IQ2_M')),
    # lc18143: a router preset section with no model key (was: the whole INI as an unknown model's name)
    Case('lc18143', 'https://github.com/ggml-org/llama.cpp/issues/18143', 'model', 'RTX 4090', 'b7444', FIXED,
         '[local-GLM4.6V-106b]\njinja = true\nctx-size=131072\ntop_p=0.6\ntop_k=2\ntemperature=0.8\nrepetition_penalty=1.1\nn-cpu-moe=30',
         ('refuses', 'names no model file')),
    # ---- Ollama ----
    # ol11964: a `ps -ef` line: the command after its TIME column (was: "unknown engine command 'localai'")
    Case('ol11964', 'https://github.com/ollama/ollama/issues/11964', 'cmd', '2x RTX 5060 Ti', None, FIXED,
         'localai  3573918 3102624 99 11:46 ?        00:03:17 /home/localai/bin/ollama runner --ollama-engine --model /home/localai/.ollama/models/blobs/sha256-b112e727c6f18875636c56a779790a590d705aec9e1c0eb5a97d51fc2a778583 --ctx-size 40960 --batch-size 512 --n-gpu-layers 17 --threads 20 --parallel 5 --tensor-split 9,8 --port 34017',
         ('refuses', "'ollama runner' is the process the Ollama server starts itself")),
    # ol9803a: a numbered step `2、` glued to the program; `run run`: the model is 'run', as Ollama reads it (was:
    # "unknown engine command '2、ollama.exe'")
    Case('ol9803a', 'https://github.com/ollama/ollama/issues/9803', 'cmd', 'RTX 4060', '0.5.7', FIXED,
         '2、ollama.exe run run deepseek-r1:1.5b  => error',
         ('refuses', "unknown model 'run'")),
    # ol9803b: cmd.exe's `set VAR=value && ollama.exe serve`
    Case('ol9803b', 'https://github.com/ollama/ollama/issues/9803', 'cmd', 'RTX 4060', '0.5.7', RIGHT,
         'set OLLAMA_DEBUG=true && ollama.exe serve',
         ('refuses', 'names no model')),
    # ---- MLX ----
    # mlxlm64 / mlxlm1390: zsh's report of the crash, `zsh: segmentation fault  CMD` (was: "unknown engine command 'zsh:'")
    Case('mlxlm64', 'https://github.com/ml-explore/mlx-lm/issues/64', 'cmd', 'M3 Max 128GB', None, FIXED,
         'zsh: segmentation fault  mlx_lm.server --model /Users/USER/LLM/MLX/Google/Gemma-3-27B-it-8bit',
         ('reads', {'engine': 'mlx', 'model': 'Gemma-3-27B-it-8bit'})),
    Case('mlxlm1390', 'https://github.com/ml-explore/mlx-lm/issues/1390', 'cmd', 'M4 Pro 48GB', None, FIXED,
         'zsh: abort      mlx_lm.server --model mlx-community/Qwen3.5-4B-MLX-8bit',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3.5-4B-MLX-8bit'})),
    Case('mlxlm233', 'https://github.com/ml-explore/mlx-lm/issues/233', 'cmd', 'M4 Max 64GB', None, RIGHT,
         'mlx_lm.server --model /Volumes/models/Qwen3-30B-A3B-MLX-bf16',
         ('reads', {'engine': 'mlx', 'model': 'Qwen3-30B-A3B-MLX-bf16'})),
    Case('mlxvlm1263', 'https://github.com/Blaizzy/mlx-vlm/issues/1263', 'cmd', 'M4 Max 64GB', None, RIGHT,
         '> mlx_vlm.server --host 0.0.0.0 --port 9002 --model tyh-carl/chandra-bf16 --trust-remote-code',
         ('refuses', "unknown engine command 'mlx_vlm.server'")),
    Case('rapidmlx166', 'https://github.com/raullenchai/Rapid-MLX/issues/166', 'cmd', 'M1 Max 64GB', None, RIGHT,
         'rapid-mlx serve ~/.cluster/MLX_Models/qwen36-27b-local --host 127.0.0.1 --port 8081 --max-tokens 2048 --prefill-step-size 2048 --no-thinking',
         ('refuses', "unknown engine command 'rapid-mlx'")),
]

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG)


def test_the_sweep_counts():
    assert len(CASES) == 47 and len({c.url for c in CASES}) == 44 and len({c.id for c in CASES}) == 47
    assert sum(c.kind == "cmd" for c in CASES) == 40
    assert sum(c.status == FIXED for c in CASES) == 17 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 30
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- the mutation pass: each real input cut, with a word dropped, doubled or garbled ----

def _text_mutations(text: str, rng: random.Random) -> list[str]:
    """The paste itself: cut anywhere, a line dropped, markdown, a prompt, a crash report or a list mark put
    around it."""
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    lines = text.split("\n")
    dropped = ["\n".join(lines[:k] + lines[k + 1:]) for k in range(min(len(lines), 2))] if len(lines) > 1 else []
    return [*cuts, *dropped, f"`{text}`", "`" + text, f"```\n{text}\n```", "> " + text.replace("\n", "\n> "),
            "zsh: killed     " + text, "⬢ [me@toolbx ~]$ " + text, "1. " + text, "@echo off\n" + text,
            "me  101 1 0 10:00 pts/0 00:00:01 " + text, text + " \\"]


GARBLES = ("`", "zsh:", "⬢", "--config", "/model", "generate")  # a word garbled also to these


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
def test_mutated_real_pastes_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for t in _text_mutations(c.text, rng):
        rc, _, err = run_cli("check", t, *hardware_args(c))
        one_line_or_answer(rc, err, (c.id, t[:80]))


@pytest.mark.parametrize("c", [c for c in CASES if c.kind == "cmd"][1::8], ids=lambda c: c.id)
def test_mutated_real_commands_through_fit_and_plan(c):
    rng = random.Random("fit" + c.id)
    for m in rng.sample(mutations(split_command(c.text), rng, GARBLES), 4):
        for cmd in (["fit", "--json"], ["plan", "--limit", "1", "--json"]):
            rc, _, err = run_cli(*cmd, *hardware_args(c), *version_args(c), "--", *m)
            one_line_or_answer(rc, err, (c.id, cmd[0], m))


# ---- the text around a command (engines/shell_words.py) ----

@pytest.mark.parametrize("text,argv", [
    # zsh Src/jobs.c printjob: "zsh: " and the signal's message, then the command line (ml-explore/mlx-lm#64, #1390)
    ("zsh: segmentation fault  mlx_lm.server --model m", ["mlx_lm.server", "--model", "m"]),
    ("zsh: killed     vllm serve Qwen/Qwen3-8B", ["vllm", "serve", "Qwen/Qwen3-8B"]),
    ("zsh: abort (core dumped)  llama-server -m a.gguf", ["llama-server", "-m", "a.gguf"]),
    # procps ps(1): `ps -ef` and `ps aux` columns before the command (ollama/ollama#11964)
    ("me  3573918 3102624 99 11:46 ?        00:03:17 /usr/bin/ollama serve", ["/usr/bin/ollama", "serve"]),
    ("root 1234 0.0 0.1 123456 7890 ? Sl 10:00 0:05 vllm serve q", ["vllm", "serve", "q"]),
    # toolbx (kyuz0/amd-strix-halo-toolboxes#41), glued or not
    ("⬢ [me@toolbx ~]$ llama-server -m a.gguf", ["llama-server", "-m", "a.gguf"]),
    ("⬢[me@toolbx ~]$ llama-server -m a.gguf", ["llama-server", "-m", "a.gguf"]),
    # a theme's clock, user and folder before `❯`, on a restart loop's first line (arozanov/turboquant-mlx#11's prompt)
    ("21:36:33 a1 ~ ❯ while true; do\n  mlx_lm.server --model m\n  sleep 3\ndone", ["mlx_lm.server", "--model", "m"]),
    ("me ~ ❯ vllm serve q", ["vllm", "serve", "q"]),
    # numbered steps (ollama/ollama#9803) and an inline span's lone backtick (ggml-org/llama.cpp#18317)
    ("2、ollama.exe run qwen3", ["ollama.exe", "run", "qwen3"]),
    ("1. vllm serve q", ["vllm", "serve", "q"]),
    ("`$ ./llama-server -m a.gguf", ["./llama-server", "-m", "a.gguf"]),
    ("vllm serve q --port 8000`", ["vllm", "serve", "q", "--port", "8000"]),
    # cmd.exe batch file (ggml-org/llama.cpp#24350) and PowerShell's $env:
    ("@echo off\nset CUDA_DEVICE_ORDER=PCI_BUS_ID\nstart /affinity FFF0 /b /wait C:\\l\\llama-server.exe ^\n  -c 4096",
     ["CUDA_DEVICE_ORDER=PCI_BUS_ID", "C:\\l\\llama-server.exe", "-c", "4096"]),
    ('rem the server\nset "GGML_CUDA_NO_PINNED=1"\nstart "" C:\\l\\llama-server.exe -c 4096',
     ["GGML_CUDA_NO_PINNED=1", "C:\\l\\llama-server.exe", "-c", "4096"]),
    ('$env:CUDA_VISIBLE_DEVICES = "0"\n.\\llama-server.exe -m C:\\m\\x.gguf',
     ["CUDA_VISIBLE_DEVICES=0", ".\\llama-server.exe", "-m", "C:\\m\\x.gguf"]),
])
def test_the_text_around_a_pasted_command(text, argv):
    assert split_command(text) == argv


@pytest.mark.parametrize("text", ["vllm serve a b c 1 2 3", "zsh: vllm serve q", "llama-server -m 1.gguf"])
def test_words_that_only_look_like_the_new_forms_stay(text):
    assert split_command(text) == text.split()


# ---- vLLM's --config file (engines/vllm/args.py) ----

def test_a_vllm_config_file_is_read_where_it_stands(tmp_path):
    cfg = tmp_path / "serve.yaml"
    cfg.write_text("max-model-len: 4096\ntensor-parallel-size: 2\nenforce-eager: true\ntrust-remote-code: false\n")
    model, _, s = vllm_args(["serve", "Qwen/Qwen3-8B", "--config", str(cfg), "--max-model-len", "8192"], env={})
    # the command line's own flags come after the file's and win (_pull_args_from_config's order)
    assert (model, s.max_model_len, s.tensor_parallel_size, s.enforce_eager) == ("Qwen/Qwen3-8B", 8192, 2, True)
    cfg.write_text("model: Qwen/Qwen3-8B\nmax_model_len: 2048\n")
    model, _, s = vllm_args(["serve", "--config", str(cfg)], env={})
    assert (model, s.max_model_len) == ("Qwen/Qwen3-8B", 2048)


@pytest.mark.parametrize("argv,refused", [
    (["serve", "q", "--config", "/nowhere/serve.yaml"], "no such file: /nowhere/serve.yaml"),
    (["serve", "q", "--config", "serve.json"], "Config file must be of a yaml/yml type"),
    (["serve", "q", "--config"], "No config file specified"),
    (["serve", "q", "--config", "a.yaml", "--config", "b.yaml"], "More than one config file"),
])
def test_a_vllm_config_file_that_cannot_be_read_is_refused(argv, refused):
    with pytest.raises(OomkitError, match=refused):
        vllm_args(argv, env={})


# ---- containers, compose files, manifests, presets (engines/command.py, engines/llamacpp/args.py) ----

@pytest.mark.parametrize("prefix,path,host", [
    (["docker", "run", "-v", "/home/me/qwq-32b-gptq-int8:/model", "img"], "/model", "/home/me/qwq-32b-gptq-int8"),
    (["docker", "run", "-v", "/data/m/qwen2_5_14b_w8a8/:/data/model/:ro", "img"], "/data/model/",
     "/data/m/qwen2_5_14b_w8a8/"),
    (["docker", "run", "--volume=/srv/llm/q:/models", "img"], "/models", "/srv/llm/q"),
    (["podman", "run", "--mount", "type=bind,source=/srv/w,target=/w", "img"], "/w/", "/srv/w"),
    (["docker", "run", "-v", "/data/m:/models", "img"], "/models/a/b.gguf", None),  # below the mount point: named
    (["docker", "run", "-v", "hf:/root/.cache/huggingface", "img"], "/root/.cache/huggingface", None),  # a volume
    (["docker", "run", "-v", "/a:/m", "-v", "/b:/m", "img"], "/m", "/b"),  # the last bind there
])
def test_a_model_folder_bound_at_a_mount_point_is_the_host_folder(prefix, path, host):
    assert on_the_host(path, prefix) == (host or path)


def test_kubernetes_variables_in_args_are_the_containers():
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.8.5\n    command: [vllm, serve]\n"
            "    args: ['$(M)', --max-model-len=$(L), '$$(M)', '$(T)', '$(NONE)']\n    env:\n    - name: M\n"
            "      value: Qwen/Qwen3-8B\n    - name: L\n      value: '4096'\n    - name: T\n      valueFrom: {secretKeyRef: {name: s, key: k}}\n")
    hint = compose_hint(text)
    assert "vllm serve Qwen/Qwen3-8B --max-model-len=4096 '$(M)' '$(T)' '$(NONE)'" in hint, hint


def test_a_compose_command_with_no_image_or_program_asks_for_the_image():
    hint = compose_hint("command:\n  - --model\n  - Qwen/Qwen3-8B\n")
    assert "docker run IMAGE --model Qwen/Qwen3-8B" in hint, hint
    hint = compose_hint("command:\n  - vllm\n  - serve\n  - Qwen/Qwen3-8B\n")
    assert "`oomkit check -- vllm serve Qwen/Qwen3-8B`" in hint, hint


def test_a_preset_section_without_a_model_is_refused_in_one_line():
    assert "names no model file" in preset_hint("[qwen]\nctx-size = 8192\n")
    assert "runs as" in preset_hint("[qwen]\nm = /m/q.gguf\nctx-size = 8192\n")
    assert preset_hint("[*]\nctx-size = 8192\n") is None


# ---- the sglang program's other commands (engines/cmdline.py) ----

@pytest.mark.parametrize("sub,said", [("generate", "SGLang Diffusion"), ("render", "Rust OpenAI frontend"),
                                      ("version", "prints the release")])
def test_the_sglang_programs_other_commands_are_refused_for_what_they_are(sub, said):
    rc, _, err = run_cli("check", "--gpu", "H100", "--", "sglang", sub, "--model-path", "Qwen/Qwen3-8B")
    assert rc == 2 and said in err and "unrecognized arguments" not in err, err
    rc, _, err = run_cli("check", "--gpu", "H100", "--", "python", "-m", "sglang.launch_server", sub, "--model-path",
                         "Qwen/Qwen3-8B")
    assert rc == 2 and "unrecognized arguments: generate" in err if sub == "generate" else rc == 2, err


# ---- the web API reads the new forms as the CLI does ----

def test_the_web_api_reads_the_new_forms():
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    with TestClient(create_app()) as client:
        r = client.get("/api/check", params={"command": "zsh: killed     vllm serve Qwen/Qwen3-8B --max-model-len 4096",
                                             "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["max_model_len"] == 4096, r.text
        r = client.get("/api/check", params={"command": "⬢ [me@toolbx ~]$ llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M "
                                                        "-c 8192", "gpu": "RTX 4090"})
        assert r.status_code == 200 and r.json()["estimate"]["settings"]["n_ctx"] == 8192, r.text
        r = client.get("/api/check", params={"command": "sglang generate --model-path Qwen/Qwen3-8B", "gpu": "H100"})
        assert r.status_code == 400 and "sglang generate" in r.json()["error"], r.text
