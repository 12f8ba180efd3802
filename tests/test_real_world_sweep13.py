"""Real users' input, thirteenth sweep: the forms people paste that are not a bare command line. `docker run` of
vllm/vllm-openai, lmsysorg/sglang, ghcr.io/ggml-org/llama.cpp:server and ollama/ollama with OLLAMA_* variables;
Docker Compose services (one with no command, one not under `services:`, one pinned by digest) and a Kubernetes
Deployment; Python that loads a model (vLLM's LLM(...), TensorRT-LLM's LLM(...), llama-cpp-python's Llama(...),
transformers' and Unsloth's from_pretrained, BitsAndBytesConfig, AutoAWQ, sgl.Engine(...), mlx_lm's load(...));
Ollama Modelfiles; llama-server --models-preset INI files and the router command; a vLLM --config YAML and the
command naming it; cmd.exe lines (a prompt glued to the program, `^` continuations, a batch file's
`set NAME="..."` read back as %NAME%, `echo` and `pause` around the command), a PowerShell prompt; `lms load --gpu
max` from a Makefile and a batch file. None of their threads or texts is in an earlier sweep (checked by URL and
by text in tests/test_real_world_sweep*.py and tests/fixtures/commands/real_commands.jsonl before use).

Each expectation was written from the thread, the README or the engine before oomkit was run on it: a correct
reading from the built-in catalog offline, or one `oomkit: error:` line naming what to give instead. Restated after
reading oomkit's answer, where the first draft was wrong about the world or phrased too narrowly: AutoAWQ's
from_pretrained loads the checkpoint through transformers (the maintainer's reply in casper-hansen/AutoAWQ#261), so
`--engine transformers` is the form (awq261); a GGUF file below a bind's mount point keeps the engine's path, the
project's rule since sweep 8's v27251 (ldock); names are the catalog's ("Llama 3.1 8B", "GLM-4 9B"); llama.cpp
pads n_ctx to 256 cells, so LM Studio's --context-length=10000 is 10240 (lmsmk). Ollama's docs-only issue
ollama/ollama#14027 (`ollama ps` shows 4096 for gpt-oss:20b) was dropped: its card is not named, and Ollama's
gpt-oss minimum of 8192 applies only above 20 GiB of VRAM, so no expectation follows from the thread.

Measured (2026-12-06), before this sweep's change: 40 real inputs (19 commands, 21 pastes given as MODEL) from 23
threads and 14 READMEs, docs and scripts; 14 wrong. A compose service of ollama/ollama with no command (#9814) was
"unknown model 'services: ...'", one with `command: serve` (#4102) was sent to a command that is refused in turn, and
a service not under `services:` pinned by digest (llama.cpp#9556) was "no such file: llamacpp-server: image: ..."
(engines/pasted.py compose_hint: the image's own command, MODEL named for `ollama serve`, the digest dropped before
the tag is read). Python: an indented `llm = LLM(...)` (vllm#7352) lost its arguments, TensorRT-LLM's LLM(...)
(TensorRT-LLM#7818) was read as vLLM's, Unsloth's script (unsloth#1238) was taken for a command because a comment
holds a URL, BitsAndBytesConfig(load_in_4bit=True) was dropped (transformers' docs), sgl.Engine(...) and mlx_lm's
load(...) were "no such file: import ..." (engines/cmdline.py python_call_hint). cmd.exe's prompt glued to llama-server.exe
(llama.cpp#27374, #18546), `%LMS% load` after `set LMS="...lms.exe"` and a batch file's `echo` lines were unknown
engine commands (engines/shell_words.py). FIXED 14, STILL 0, RIGHT 26: llama.cpp#27162's
`C:\\...\\Qwen3.8-27B-Q8_0_MTP.gguf` was refused as "unknown quant tag 'Q8_0_MTP'" (model/resolve.py split_quant
read the drive letter's colon as a quant separator); a path after the colon is no tag now, and the file is refused
as not on this machine. The mutation pass (every form of each command under
check, fit and plan) answers or refuses in one line after the change; it was not run before it. `llama-server
--models-preset models.ini` (l24439c) was refused as naming no model, right as sweep 6's lc25333 holds; its refusal
now also says the router loads the preset's models on request.
"""

from __future__ import annotations

from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    sweep_tests,
)
from tests.test_real_world_sweep11 import checker

# (case, the engine its thread ran, for a paste given as MODEL; None for a command). Hardware as the thread names
# it, else a card of the kind it implies, on which no expectation depends unless the case says `fits`.
CASES_AND_ENGINES = [
    # ---- docker run, Docker Compose and Kubernetes ----
    (Case('v7581', 'https://github.com/vllm-project/vllm/issues/7581', 'cmd', 'A100 80GB', None, RIGHT,
          'docker run --gpus all \\\n    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n    --env "HUGGING_FACE_HUB_TOKEN=HUGGING_FACE_HUB_TOKEN" \\\n    -p 8000:8000 \\\n    --ipc=host \\\n    vllm/vllm-openai:latest \\\n--model meta-llama/Meta-Llama-3.1-8B-Instruct',
          ('reads', {'engine': 'vllm', 'model': 'Llama 3.1 8B', 'fits': True})), None),
    (Case('glm117', 'https://github.com/zai-org/GLM-4/issues/117', 'cmd', 'L4', None, RIGHT,
          'docker run -d --runtime nvidia --gpus 1 --name vllm \\\n    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n    --env "HUGGING_FACE_HUB_TOKEN=ttt" \\\n    -p 8000:8000 \\\n    --ipc=host \\\n    vllm/vllm-openai:latest \\\n    --model=THUDM/glm-4-9b-chat \n--gpu-memory-utilization=0.9 \n--enable-prefix-caching\n--trust-remote-code\n--enforce-eager\n--max-model-len=4000',
          ('reads', {'engine': 'vllm', 'model': 'GLM-4 9B', 'ctx': 4000})), None),
    (Case('glm19', 'https://github.com/zai-org/GLM-4/issues/19', 'model', 'A30', None, RIGHT,
          'version: \'3.8\'\nservices:\n  vllm_server_aiorder:\n    image: jjck_vllm:20240523\n    runtime: nvidia\n    ipc: host\n    restart: always\n    ports:\n      - "8100:8000"\n    volumes:\n      - "/etc/localtime:/etc/localtime:ro"\n      - "/home/**/**/**/glm-4-9b-chat:/aioder/llm_model"\n    command: --model /aioder/llm_model --trust-remote-codec\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              device_ids: [\'0\']\n              capabilities: [gpu]',
          ('refuses', 'Docker Compose service')), 'vllm'),
    (Case('v4462', 'https://github.com/vllm-project/vllm/issues/4462', 'model', '2x A100 80GB', None, RIGHT,
          'apiVersion: apps/v1 \nkind: Deployment\nmetadata:\n  name: vllm\n  labels:\n    app: vllm\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: vllm\n  template:\n    metadata:\n      labels:\n        app: vllm\n    spec:\n      volumes:\n      - name: model\n        persistentVolumeClaim:\n          claimName: llm-model\n      - name: dshm\n        emptyDir:\n          medium: Memory\n          sizeLimit: "2Gi"\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:0.4.1\n        command:\n        - "python3 -m vllm.entrypoints.openai.api_server  --port 8080  --trust-remote-code --served-model-name qwen --model /mnt/models/Qwen-14B-Chat --gpu-memory-utilization 0.95 --tensor-parallel-size 2"\n        ports:\n        - containerPort: 8080\n        resources:\n          limits:\n            nvidia.com/gpu: "2"\n        volumeMounts:\n        - mountPath: /mnt/models\n          name: model\n        - name: dshm\n          mountPath: /dev/shm',
          ('refuses', 'Kubernetes container')), 'vllm'),
    (Case('ol6799', 'https://github.com/ollama/ollama/issues/6799', 'cmd', 'RTX 4090', None, RIGHT,
          'docker run -d -v ollama:/root/.ollama -p 11434:11434 -e OLLAMA_NUM_PARALLEL=2 --name ollama ollama/ollama',
          ('refuses', 'the ollama serve command names no model')), None),
    (Case('ol9814', 'https://github.com/ollama/ollama/issues/9814', 'model', 'RTX 4090', None, FIXED,
          'services:\n  ollama:\n    image: ollama/ollama:latest\n    environment:\n      - OLLAMA_NUM_PARALLEL=5\n      - OLLAMA_CONTEXT_LENGTH=5678',
          ('refuses', 'give `oomkit check MODEL -- docker run -e OLLAMA_NUM_PARALLEL=5 -e OLLAMA_CONTEXT_LENGTH=5678 ollama/ollama:latest`')), 'ollama'),
    (Case('ol4102', 'https://github.com/ollama/ollama/issues/4102', 'model', 'RTX 4090', None, FIXED,
          'services:\n  ollama:\n    image: ollama/ollama:0.1.33-rc6\n    container_name: ollama\n    ports:\n      - "11434:11434"\n    volumes:\n      - ollama:/root/.ollama\n    environment:\n      OLLAMA_NUM_PARALLEL: "4"\n      OLLAMA_MAX_LOADED_MODELS: "4"\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - capabilities: [gpu]\n    command: serve\nvolumes:\n  ollama:',
          ('refuses', 'give `oomkit check MODEL -- docker run -e OLLAMA_NUM_PARALLEL=4')), 'ollama'),
    (Case('ol9327', 'https://github.com/ollama/ollama/issues/9327', 'cmd', 'RTX 4090', None, RIGHT,
          'docker run -e OLLAMA_FLASH_ATTENTION=1 ollama/ollama',
          ('refuses', 'the ollama serve command names no model')), None),
    (Case('l9556y', 'https://github.com/ggml-org/llama.cpp/issues/9556', 'model', 'RTX 4090', None, FIXED,
          'llamacpp-server:\n  image: ghcr.io/ggerganov/llama.cpp:server-cuda@sha256:fe887bd3debd1a55ddd95f067435a38166f15a058bf50fee173517b9831081c8\n  ports:\n    - 8080:8080\n  volumes:\n    # TODO: change\n    - ./model:/model\n  environment:\n    # alternatively, you can use "LLAMA_ARG_MODEL_URL" to download the model\n    LLAMA_ARG_MODEL: /model/path-to-model.gguf\n    LLAMA_ARG_N_GPU_LAYERS: -1',
          ('refuses', 'docker run -e LLAMA_ARG_MODEL=/model/path-to-model.gguf -e LLAMA_ARG_N_GPU_LAYERS=-1 ghcr.io/ggerganov/llama.cpp:server-cuda')), 'llama.cpp'),
    (Case('sgdock', 'https://github.com/sgl-project/sglang/blob/main/docs/get_started/install.md', 'cmd', 'H100', None, RIGHT,
          'docker run --gpus all \\\n    --shm-size 32g \\\n    -p 30000:30000 \\\n    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n    --env "HF_TOKEN=<secret>" \\\n    --ipc=host \\\n    lmsysorg/sglang:latest \\\n    python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000',
          ('reads', {'engine': 'sglang', 'model': 'Llama 3.1 8B', 'fits': True})), None),
    (Case('vdock', 'https://github.com/vllm-project/vllm/blob/main/docs/deployment/docker.md', 'cmd', 'RTX 4090', None, RIGHT,
          'docker run --runtime nvidia --gpus all \\\n    -v ~/.cache/huggingface:/root/.cache/huggingface \\\n    --env "HUGGING_FACE_HUB_TOKEN=$HF_TOKEN" \\\n    -p 8000:8000 \\\n    --ipc=host \\\n    vllm/vllm-openai:latest \\\n    --model mistralai/Mistral-7B-v0.1',
          ('reads', {'engine': 'vllm', 'model': 'Mistral 7B', 'fits': True})), None),
    (Case('ldock', 'https://github.com/ggml-org/llama.cpp/blob/master/docs/docker.md', 'cmd', 'RTX 4090', None, RIGHT,
          'docker run --gpus all -v /path/to/models:/models -p 8080:8080 ghcr.io/ggml-org/llama.cpp:server-cuda -m /models/7B/ggml-model-q4_0.gguf --port 8080 --host 0.0.0.0 -n 512 --n-gpu-layers 1',
          ('refuses', 'no such file: /models/7B/ggml-model-q4_0.gguf')), None),
    (Case('odock', 'https://github.com/ollama/ollama/blob/main/docs/docker.md', 'cmd', 'RTX 4090', None, RIGHT,
          'docker exec -it ollama ollama run llama3.2',
          ('reads', {'engine': 'ollama', 'model': 'Llama 3.2 3B', 'fits': True})), None),
    # ---- Python ----
    (Case('v783', 'https://github.com/vllm-project/vllm/issues/783', 'model', 'A40', None, RIGHT,
          '\nfrom vllm import LLM\nimport torch\nimport os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nfrom vllm import LLM, SamplingParams\n\nif __name__ == \'__main__\':\n\n    device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")\n\n    prompts = [\n        "Hello, my name is",\n        "The president of the United States is",\n        "The capital of France is",\n        "The future of AI is",\n    ]\n    sampling_params = SamplingParams(temperature=0.8, top_p=0.95)\n    llm = LLM(model="facebook/opt-125m",tensor_parallel_size=1)\n\n    outputs = llm.generate(prompts, sampling_params)\n',
          ('refuses', 'vllm serve facebook/opt-125m --tensor-parallel-size 1')), 'vllm'),
    (Case('v7352', 'https://github.com/vllm-project/vllm/issues/7352', 'model', 'RTX A6000', None, FIXED,
          'import os\nfrom vllm import LLM, SamplingParams\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0" # to be sure using only A6000 and not GT1030\n\nprompts = [\n    "Hello, my name is"\n]\nsampling_params = SamplingParams(temperature=0.8, top_p=0.95)\n\n# llm = LLM(model="shuyuej/Meta-Llama-3.1-70B-Instruct-GPTQ", gpu_memory_utilization=0.9, dtype=\'float16\', quantization=\'gptq\') # does not load\n llm = LLM(model="TechxGenus/Meta-Llama-3-70B-Instruct-GPTQ", gpu_memory_utilization=0.9, dtype=\'float16\', quantization=\'gptq\')',
          ('refuses', 'vllm serve TechxGenus/Meta-Llama-3-70B-Instruct-GPTQ --gpu-memory-utilization 0.9 --dtype float16 --quantization gptq')), 'vllm'),
    (Case('trt7818', 'https://github.com/NVIDIA/TensorRT-LLM/issues/7818', 'model', '8x A10G', None, FIXED,
          "from tensorrt_llm import LLM\n\ndef main():\n    model_dir = './model5'\n    llm = LLM(model=model_dir,tensor_parallel_size=8,dtype='bfloat16')\n\n\nif __name__ == '__main__':\n    main()\n",
          ('refuses', "TensorRT-LLM's LLM(...)")), 'vllm'),
    (Case('l9556p', 'https://github.com/ggml-org/llama.cpp/issues/9556', 'model', 'RTX 4090', None, RIGHT,
          'from llama_cpp import Llama\n\nLlama(\'path/to/model\', chat_format="llama-3", n_ctx=1024, n_gpu_layers=-1, verbose=False)',
          ('refuses', 'llama-server -m path/to/model -c 1024 -ngl -1')), 'llama.cpp'),
    (Case('uns1238', 'https://github.com/unslothai/unsloth/issues/1238', 'model', 'T4', None, FIXED,
          'from unsloth import FastLanguageModel\nimport torch\nmax_seq_length = 2048 # Choose any! We auto support RoPE Scaling internally!\ndtype = None # None for auto detection. Float16 for Tesla T4, V100, Bfloat16 for Ampere+\nload_in_4bit = True # Use 4bit quantization to reduce memory usage. Can be False.\n\n# 4bit pre quantized models we support for 4x faster downloading + no OOMs.\nfourbit_models = [\n\n    "unsloth/Meta-Llama-3.1-70B-bnb-4bit",\n\n] # More models at https://huggingface.co/unsloth\n\nmodel, tokenizer = FastLanguageModel.from_pretrained(\n    model_name = "unsloth/Meta-Llama-3.1-70B-bnb-4bit",\n    max_seq_length = max_seq_length,\n    dtype = dtype,\n    load_in_4bit = load_in_4bit,\n    # token = "hf_...", # use one if using gated models like meta-llama/Llama-2-7b-hf\n)',
          ('refuses', 'oomkit check unsloth/Meta-Llama-3.1-70B-bnb-4bit --engine transformers')), 'transformers'),
    (Case('awq261', 'https://github.com/casper-hansen/AutoAWQ/issues/261', 'model', '4x A100 40GB', None, RIGHT,
          'model =AutoAWQForCausalLM.from_pretrained(\n        model_dir, trust_remote_code=True, safetensors=True,device_map="balanced_low_0").eval().cuda()',
          ('refuses', 'oomkit check MODEL --engine transformers --device-map balanced_low_0')), 'transformers'),
    (Case('tfbnb', 'https://github.com/huggingface/transformers/blob/main/docs/source/en/quantization/bitsandbytes.md', 'model', 'T4', None, FIXED,
          'from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n\nquantization_config = BitsAndBytesConfig(load_in_4bit=True)\n\nmodel_4bit = AutoModelForCausalLM.from_pretrained(\n    "bigscience/bloom-1b7",\n    device_map="auto",\n    quantization_config=quantization_config\n)',
          ('refuses', 'oomkit check bigscience/bloom-1b7 --engine transformers --device-map auto --load-in-4bit')), 'transformers'),
    (Case('sgeng', 'https://github.com/sgl-project/sglang/blob/main/docs/basic_usage/offline_engine_api.ipynb', 'model', 'H100', None, FIXED,
          'import sglang as sgl\n\nllm = sgl.Engine(model_path="qwen/qwen2.5-0.5b-instruct")',
          ('refuses', 'oomkit check -- python -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct')), 'sglang'),
    (Case('mlxload', 'https://github.com/ml-explore/mlx-lm/blob/main/README.md', 'model', 'M2 Max 32GB', None, FIXED,
          'from mlx_lm import load, generate\n\nmodel, tokenizer = load("mlx-community/Mistral-7B-Instruct-v0.3-4bit")\n\nprompt = "Write a story about Einstein"\n\nmessages = [{"role": "user", "content": prompt}]\nprompt = tokenizer.apply_chat_template(\n    messages, add_generation_prompt=True\n)\n\ntext = generate(model, tokenizer, prompt=prompt, verbose=True)',
          ('refuses', 'oomkit check -- mlx_lm.generate --model mlx-community/Mistral-7B-Instruct-v0.3-4bit')), 'mlx'),
    (Case('lcpyrd', 'https://github.com/abetlen/llama-cpp-python/blob/main/README.md', 'model', 'RTX 3060', None, RIGHT,
          'from llama_cpp import Llama\n\nllm = Llama(\n      model_path="./models/7B/llama-model.gguf",\n      # n_gpu_layers=-1, # Uncomment to use GPU acceleration\n      # seed=1337, # Uncomment to set a specific seed\n      # n_ctx=2048, # Uncomment to increase the context window\n)',
          ('refuses', 'llama-server -m ./models/7B/llama-model.gguf')), 'llama.cpp'),
    # ---- Modelfiles, llama-server presets, vLLM --config ----
    (Case('bolt313', 'https://github.com/stackblitz-labs/bolt.diy/issues/313', 'model', '2x RTX 3090', None, RIGHT,
          'FROM qwen2.5-coder:32b\nPARAMETER num_ctx 13108',
          ('refuses', 'oomkit check qwen2.5-coder:32b --engine ollama --num-ctx 13108')), 'ollama'),
    (Case('mem6857', 'https://github.com/mem0ai/mem0/issues/6857', 'model', 'RTX 4090', None, RIGHT,
          'FROM llama3.1:8b\nPARAMETER num_ctx 16384',
          ('refuses', 'oomkit check llama3.1:8b --engine ollama --num-ctx 16384')), 'ollama'),
    (Case('olmf', 'https://github.com/ollama/ollama/blob/main/docs/modelfile.md', 'model', 'RTX 4090', None, RIGHT,
          'FROM llama3.2\n# sets the temperature to 1 [higher is more creative, lower is more coherent]\nPARAMETER temperature 1\n# sets the context window size to 4096, this controls how many tokens the LLM can use as context to generate the next token\nPARAMETER num_ctx 4096\n\n# sets a custom system message to specify the behavior of the chat assistant\nSYSTEM You are Mario from super mario bros, acting as an assistant.',
          ('refuses', 'oomkit check llama3.2 --engine ollama --num-ctx 4096')), 'ollama'),
    (Case('l24439', 'https://github.com/ggml-org/llama.cpp/issues/24439', 'model', 'RTX 4090', 'b9592', RIGHT,
          '[unsloth/gemma-4-31B-it-qat-GGUF:Q4_K_XL]\nmodel = <path>\\gemma-4-31B-it-qat-UD-Q4_K_XL.gguf',
          ('refuses', 'its [unsloth/gemma-4-31B-it-qat-GGUF:Q4_K_XL] runs as')), 'llama.cpp'),
    (Case('l24439c', 'https://github.com/ggml-org/llama.cpp/issues/24439', 'cmd', 'RTX 4090', 'b9592', RIGHT,
          'llama-server --models-preset models.ini',
          ('refuses', 'with --models-preset models.ini it runs the router')), None),
    (Case('l23502', 'https://github.com/ggml-org/llama.cpp/issues/23502', 'model', '2x RTX 3090', None, RIGHT,
          '[MoE-Vision-Qwen3-Omni-30B-A3B-Thinking]\nm = ggml-org/Qwen3-Omni-30B-A3B-Thinking-GGUF/Qwen3-Omni-30B-A3B-Thinking-Q8_0.gguf\nmm = ggml-org/Qwen3-Omni-30B-A3B-Thinking-GGUF/mmproj-Qwen3-Omni-30B-A3B-Thinking-bf16.gguf\nc = 32768\n\n[Dense-Devstral-2-123B-Instruct-2512]\nm = unsloth/Devstral-2-123B-Instruct-2512-GGUF/Devstral-2-123B-Instruct-2512-UD-Q4_K_XL-00001-of-00002.gguf\nc = 131072',
          ('refuses', 'its [MoE-Vision-Qwen3-Omni-30B-A3B-Thinking] runs as')), 'llama.cpp'),
    (Case('vcfg', 'https://github.com/vllm-project/vllm/blob/main/docs/configuration/serve_args.md', 'model', 'RTX 4090', None, RIGHT,
          '# config.yaml\n\nmodel: meta-llama/Llama-3.1-8B-Instruct\nhost: "127.0.0.1"\nport: 6379\nuvicorn-log-level: "info"',
          ('refuses', 'oomkit check -- vllm serve meta-llama/Llama-3.1-8B-Instruct')), 'vllm'),
    (Case('vcfgc', 'https://github.com/vllm-project/vllm/blob/main/docs/configuration/serve_args.md', 'cmd', 'RTX 4090', None, RIGHT,
          'vllm serve --config config.yaml',
          ('refuses', 'no such file: config.yaml')), None),
    # ---- Windows cmd.exe / PowerShell and LM Studio ----
    (Case('l27162', 'https://github.com/ggml-org/llama.cpp/issues/27162', 'cmd', '2x RTX 3090', 'b10437', FIXED,
          'C:\\llama-cpp\\llama-cuda\\llama-server.exe -m C:\\llama-cpp\\models\\27b_MTP\\Qwen3.8-27B-Q8_0_MTP.gguf --batch-size 2048 --ubatch-size 512 --cache-type-k q8_0 --cache-type-v q8_0 --ctx-size 250000 --spec-type draft-mtp --spec-draft-n-max 2 --temp 1 --top-p 0.95 --top-k 20 --split-mode layer --kv-unified -fa on --reasoning-preserve --cache-ram 16384 --host 0.0.0.0 --port 8080',
          ('refuses', 'no such file: C:\\llama-cpp\\models\\27b_MTP\\Qwen3.8-27B-Q8_0_MTP.gguf')), None),
    (Case('l27374', 'https://github.com/ggml-org/llama.cpp/issues/27374', 'cmd', 'RTX 4090', 'b10488', FIXED,
          'C:\\Users\\sovf>llama-server.exe  -m "E:\\LLM\\AgentWorld\\Qwen-AgentWorld-35B-A3B-UD-Q6_K_XL.gguf" --host 0.0.0.0 --port 8084',
          ('refuses', 'no such file: E:\\LLM\\AgentWorld\\Qwen-AgentWorld-35B-A3B-UD-Q6_K_XL.gguf')), None),
    (Case('l18546', 'https://github.com/ggml-org/llama.cpp/issues/18546', 'cmd', 'RTX 4090', 'b6945', FIXED,
          'C:\\Users\\lavan\\win-x64\\External\\Server>llama-server.exe -m "C:\\Users\\lavan\\win-x64\\External\\Models\\phi-3.5-mini-instruct.gguf"',
          ('refuses', 'no such file: C:\\Users\\lavan\\win-x64\\External\\Models\\phi-3.5-mini-instruct.gguf')), None),
    (Case('caret13', 'https://github.com/jacoblee93/fully-local-pdf-chatbot/issues/11', 'cmd', 'RTX 4090', None, RIGHT,
          'PS C:\\Users\\chalu> OLLAMA_ORIGINS=https://webml-demo.vercel.app OLLAMA_HOST=127.0.0.1:11435 ollama serve',
          ('refuses', 'the ollama serve command names no model')), None),
    (Case('s2s', 'https://github.com/bentay85/speech2speech_ai/blob/main/README.md', 'cmd', 'RTX 4090', None, RIGHT,
          '.\\bin\\llama-server.exe ^\n -m .\\models\\gemma-4-E4B-it-gguf\\gemma-4-E4B-it-Q4_K_M.gguf ^\n --mmproj .\\models\\gemma-4-E4B-it-gguf\\mmproj-F16.gguf ^\n -ngl 99 ^\n -c 32768 ^\n -b 1024 ^\n -ub 1024 ^\n --reasoning off ^\n --reasoning-budget 0 ^\n --host 0.0.0.0 ^\n --port 8080',
          ('refuses', 'no such file: .\\models\\gemma-4-E4B-it-gguf\\gemma-4-E4B-it-Q4_K_M.gguf')), None),
    (Case('stock3', 'https://github.com/redchoeng/stock-recommendation_3.0/blob/main/scripts/start_llama_server.bat', 'cmd', 'RX 9070 XT', None, FIXED,
          '@echo off\nREM llama-server Vulkan GPU 가속 실행 스크립트\nREM RX 9070 XT + Vulkan 백엔드\n\nset SCRIPT_DIR=%~dp0\nset TOOLS_DIR=%SCRIPT_DIR%..\\tools\\llama-vulkan\nset MODEL_PATH=%SCRIPT_DIR%..\\models\\phi-4-Q4_K_M.gguf\n\necho ============================================\necho   llama-server (Vulkan GPU)\necho   Model: phi-4 Q4_K_M (14B)\necho   Port: 8080\necho ============================================\n\n"%TOOLS_DIR%\\llama-server.exe" ^\n    -m "%MODEL_PATH%" ^\n    --host 0.0.0.0 ^\n    --port 8080 ^\n    -ngl 99 ^\n    -c 4096 ^\n    --flash-attn\n\npause\n',
          ('refuses', 'phi-4-Q4_K_M.gguf')), None),
    (Case('turbo', 'https://github.com/Turbo31150/turbo/blob/main/scripts/startup_m1.bat', 'cmd', '43GiB', None, FIXED,
          'set LMS="C:\\Users\\franc\\.lmstudio\\bin\\lms.exe"\n%LMS% load "qwen/qwen3-8b" --gpu max -c 8192 --parallel 4 -y',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 8B', 'ctx': 8192, 'fits': True})), None),
    (Case('lmsmk', 'https://github.com/dvinet-idemys/boondmanager-multiagent/blob/main/Makefile', 'cmd', 'RTX 4090', None, RIGHT,
          'lms load openai/gpt-oss-20b --gpu=max --context-length=10000',
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'ctx': 10240, 'fits': True})), None),
    (Case('ol14191', 'https://github.com/ollama/ollama/pull/14191', 'cmd', 'RTX 4090', None, RIGHT,
          'OLLAMA_CONTEXT_LENGTH=64000 ollama run gpt-oss:20b',
          ('reads', {'engine': 'ollama', 'model': 'gpt-oss 20B', 'warn': 'OLLAMA_CONTEXT_LENGTH'})), None),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


check = checker(ENGINE)  # sweep 11's reading and refusal checks, with this sweep's engines


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 40 and len({c.id for c in CASES}) == 40
    assert sum(c.kind == "cmd" for c in CASES) == 19 and sum(c.kind == "model" for c in CASES) == 21
    assert sum(c.status == FIXED for c in CASES) == 14 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 26
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
