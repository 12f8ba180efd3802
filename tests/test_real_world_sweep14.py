"""Real users' input, fourteenth sweep: derived and quantized model names as people typed them into engines, from
threads and docs not used before (checked by URL and by name in tests/ before use). TheBloke's AWQ / GPTQ repos (one
named with its branch after a ':', one of a Llama-1 fine-tune), casperhansen's and Qwen's AWQ, unsloth's bnb-4bit,
neuralmagic's FP8 and FP8-dynamic, a GGUF repo named after one file type given to vLLM, unsloth's `REPO:IQ1_S` on
vLLM, GGUF files that are not on this machine, Ollama library tags with base / text / quant qualifiers, an Ollama
user's namespaced tag and a locally created one; and the forms they come in: `python -m vllm.entrypoints.api_server`
(2023), `python -O -u -m ...`, SGLang's `--model` / `--mem-fraction` / `--disable-radix` abbreviations, a script of
assignments with `${...}` and a bash script ending in `source deactivate`, a llama-swap config with a `#` line, a
KubeAI Model manifest, AutoGPTQ's from_quantized and from_pretrained of a name set in a variable above, vLLM's
EngineArgs(...) and LLM("...") with a positional model, a docker run with `--entrypoint uvicorn`.

Each expectation was written from the thread, the card or the engine before oomkit was run on it: a reading from
the built-in catalog offline, or one `oomkit: error:` line. Hardware as the thread names it, else a card of the kind it
implies, on which no expectation depends unless the case says `fits`; versions as the thread states or dates them
(a version left out reads the command against the newest release, which refuses vLLM's long-gone
--disable-log-requests and --swap-space in one line, as that vLLM does). Restated after reading oomkit's answer, where
the first draft was wrong about the world: derived repos are named by their own id (sweep 12's rule), so
'llama-3-8b-instruct-awq', not 'Llama 3 8B'; a model the catalog cannot know offline (a Llama-1 fine-tune's AWQ,
TheBloke/tulu-7B-AWQ; Airoboros-L2-70B; wizardLM-7B; InternVL2-26B, not in the catalog) is refused in one line.

Measured (2026-12-07), before this sweep's change: 40 real inputs (25 commands, 15 pastes given as MODEL) from 38
threads, PRs and docs; 9 wrong. A KubeAI Model manifest (opea-project/GenAIInfra#945) was "unknown engine command
'apiVersion:'" (engines/pasted.py: KubeAI runs `vllm serve` on the url's repo with spec.args, substratusai/kubeai
internal/modelcontroller/engine_vllm.go). vLLM's EngineArgs(model=...) (unsloth#1205) was "no such file: engine_args =
..."; a model name set in a variable above the call (AutoGPTQ#747, h2ogpt#416) was left as MODEL, and
AutoGPTQForCausalLM.from_quantized was named after the tokenizer's from_pretrained beside it (engines/cmdline.py
python_call_hint). `--model-path TheBloke/Mistral-7B-v0.1-GPTQ:gptq-4bit-32g-actorder_True` (sglang#302) was "unknown
model 'TheBloke/Mistral-7B-v0.1-GPTQ'", a repo the catalog does read (model/resolve.py: a branch after the ':' is
refused naming the repo to give). An Ollama user's tag (`maryasov/qwen2.5-coder-cline:7b-instruct-q8_0`,
colab-llm#1) was sent to the Hugging Face hub ("unset HF_HUB_OFFLINE to look it up"). `vllm serve
NoelJacob/Meta-Llama-3-8B-Instruct-Q4_K_M-GGUF --load-format gguf` (vllm#17661, 0.8.4) was read as Q4_K_M weights
where vLLM refuses a repo of GGUF files (engines/vllm/args.py). A script's `source deactivate` after the command
(vllm#10204) was read as two more arguments ("unrecognized arguments: source deactivate"; engines/shell_words.py).
FIXED 9, STILL 0, RIGHT 31: Ollama 0.1.37 given mistral-nemo (ollama#6116: "You need Ollama 0.2.8 or newer") was
estimated as if it ran; 0.1.37's runner is llama.cpp b2770 (its llm/llama.cpp submodule), before PR #8604 (b3436) let
a llama's heads be narrower than its hidden size, so it is refused naming 0.2.8 (b3440), as the thread says. The mutation pass
(every form of each command under check, fit and plan) answered or refused in one line before the change too.
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

# (case, the engine its thread ran, for a paste given as MODEL; None for a command)
CASES_AND_ENGINES = [
    (Case('sg302r', 'https://github.com/sgl-project/sglang/issues/302', 'cmd', 'A100 80GB', None, FIXED,
          'python3 -m sglang.launch_server --model-path TheBloke/Mistral-7B-v0.1-GPTQ:gptq-4bit-32g-actorder_True --port 42069 --host 0.0.0.0',
          ('refuses', 'give TheBloke/Mistral-7B-v0.1-GPTQ')), None),
    (Case('sg302m', 'https://github.com/sgl-project/sglang/issues/302', 'cmd', 'A100 80GB', None, RIGHT,
          'python -m sglang.launch_server --model-path  ./Mixtral-8x7B-Instruct-v0.1-GPTQ/ --mem-fraction-static 0.9 --port 8501 --host 0.0.0.0 --context-length 8192 --trust-remote-code',
          ('reads', {'engine': 'sglang', 'model': 'Mixtral-8x7B-Instruct-v0.1-GPTQ', 'format': 'gptq', 'ctx': 8192, 'settings': {'mem_fraction_static': 0.9}, 'warn': 'is not on this machine'})), None),
    (Case('v18136', 'https://github.com/vllm-project/vllm/issues/18136', 'cmd', '4x RTX 4090', '0.8.5', RIGHT,
          'python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-32B-AWQ --port 8000 --gpu-memory-utilization 0.90 --tensor-parallel-size 4  --disable-log-requests --quantization awq_marlin --max-model-len 32768',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-32B-AWQ', 'format': 'awq', 'ctx': 32768, 'settings': {'tensor_parallel_size': 4, 'quantization': 'awq_marlin'}})), None),
    (Case('v1479', 'https://github.com/vllm-project/vllm/issues/1479', 'cmd', 'RTX 3060', '0.2.1', RIGHT,
          'python -m vllm.entrypoints.api_server --model TheBloke/CodeLlama-7B-AWQ --quantization awq',
          ('reads', {'engine': 'vllm', 'model': 'CodeLlama-7B', 'format': 'awq', 'fits': False})), None),
    (Case('v1234', 'https://github.com/vllm-project/vllm/issues/1234', 'cmd', 'RTX 3060', None, RIGHT,
          'python -m vllm.entrypoints.api_server --model TheBloke/tulu-7B-AWQ --quantization awq',
          ('refuses', "unknown model 'TheBloke/tulu-7B-AWQ'")), None),
    (Case('qvl1224', 'https://github.com/QwenLM/Qwen3-VL/issues/1224', 'cmd', '16GiB', '0.7.2', RIGHT,
          'vllm serve Qwen/Qwen2.5-VL-7B-Instruct-AWQ --port 8100 --host 10.147.20.82 --gpu-memory-utilization 0.75 --limit-mm-per-prompt image=1,video=0 --max-model-len 4096',
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-VL-7B-Instruct-AWQ', 'format': 'awq', 'ctx': 4096, 'settings': {'gpu_memory_utilization': 0.75}})), None),
    (Case('v12404', 'https://github.com/vllm-project/vllm/issues/12404', 'cmd', '4x A10', '0.6.5', RIGHT,
          'vllm serve InternVL2-26B-AWQ --served-model-name intervl2 --gpu_memory_utilization 0.99 --tensor-parallel-size 4 --limit-mm-per-prompt image=5,video=1',
          ('refuses', "unknown model 'InternVL2-26B-AWQ'")), None),
    (Case('bento7', 'https://github.com/bentoml/openllm-models/issues/7', 'cmd', 'A100 80GB', '0.5.3', RIGHT,
          'python -m vllm.entrypoints.openai.api_server --model  casperhansen/llama-3-8b-instruct-awq --disable-log-requests',
          ('reads', {'engine': 'vllm', 'model': 'llama-3-8b-instruct-awq', 'format': 'awq', 'fits': True})), None),
    (Case('ol5536', 'https://github.com/ollama/ollama/issues/5536', 'model', 'RTX 4090', '0.1.49', RIGHT,
          'gemma2:27b-text-q3_K_M',
          ('reads', {'engine': 'ollama', 'model': 'Gemma 2 27B', 'arch': 'gemma2', 'params': 27.2, 'format': 'Q3_K_M', 'fits': True})), 'ollama'),
    (Case('ol3818', 'https://github.com/ollama/ollama/issues/3818', 'cmd', 'RTX 4090', '0.1.32', RIGHT,
          'ollama run llama3:70b-instruct',
          ('reads', {'engine': 'ollama', 'model': 'Llama 3 70B', 'params': 70.6, 'fits': False, 'warn': 'the rest run on the CPU'})), None),
    (Case('ipex13277', 'https://github.com/intel/ipex-llm/issues/13277', 'model', None, None, RIGHT,
          'qwen2.5-coder:14b-base-q2_K',
          ('reads', {'engine': 'ollama', 'model': 'Qwen2.5 Coder 14B', 'params': 14.8, 'format': 'Q2_K', 'warn': "'base' read as"})), 'ollama'),
    (Case('lswap', 'https://github.com/ggml-org/llama.cpp/pull/15019', 'model', 'RTX 5090', None, RIGHT,
          'macros:\n  "latest-llama": >\n    /root/llama.cpp/build/bin/llama-server\n    --port ${PORT}\n\nmodels:\n  "qwen3-coder":\n    cmd: |\n      ${latest-llama}\n      --model /root/models/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF/Qwen3-Coder-30B-A3B-Instruct-UD-Q4_K_XL.gguf\n      --chat-template-file /root/models/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF/chat-template.jinja\n      --jinja\n      --mlock\n      --flash-attn\n      --kv-unified\n      --swa-full\n      --rope-scaling yarn\n      --rope-scale 4\n      --yarn-orig-ctx 32768\n      --verbose\n      --verbose-prompt\n      --cache-type-k q4_1\n      --cache-type-v q4_1\n      # --parallel 4\n      --threads -1\n      --n-gpu-layers 99\n      --ctx-size 131072\n      --batch-size 4096\n      --ubatch-size 4096\n      --temp 0.7\n      --min-p 0.0\n      --top-p 0.7\n      --top-k 20\n      --repeat-penalty 1.5\n      --presence_penalty 0.2\n      --keep 32768',
          ('refuses', 'give `oomkit check -- /root/llama.cpp/build/bin/llama-server --port 5800 --model /root/models/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF/Qwen3-Coder-30B-A3B-Instruct-UD-Q4_K_XL.gguf')), 'llama.cpp'),
    (Case('kubeai', 'https://github.com/opea-project/GenAIInfra/pull/945', 'model', 'A100 80GB', None, FIXED,
          'apiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: llama-3.1-8b-instruct-gaudi\nspec:\n  features: [TextGeneration]\n  url: hf://meta-llama/Meta-Llama-3.1-8B-Instruct\n  cacheProfile: nfs\n  engine: VLLM\n  args:\n    - --tensor-parallel-size=1\n    - --block-size=128\n    - --max-num-seqs=256\n    - --max-seq_len-to-capture=2048',
          ('refuses', 'give `oomkit check -- vllm serve meta-llama/Meta-Llama-3.1-8B-Instruct --tensor-parallel-size=1 --block-size=128 --max-num-seqs=256 --max-seq_len-to-capture=2048`')), 'vllm'),
    (Case('rp16', 'https://github.com/runpod-workers/worker-vllm/pull/16', 'model', 'A100 80GB', None, RIGHT,
          'TheBloke/Airoboros-L2-70B-3.1.2-AWQ',
          ('refuses', "unknown model 'TheBloke/Airoboros-L2-70B-3.1.2-AWQ'")), 'vllm'),
    (Case('rp68', 'https://github.com/runpod-workers/worker-vllm/issues/68', 'model', 'RTX A6000', None, RIGHT,
          'casperhansen/llama-3-70b-instruct-awq',
          ('reads', {'engine': 'vllm', 'model': 'llama-3-70b-instruct-awq', 'params': 70.6, 'format': 'awq', 'fits': True})), 'vllm'),
    (Case('mp251', 'https://github.com/modelplaneai/modelplane/pull/251', 'model', 'A100 40GB', None, RIGHT,
          'unsloth/GLM-4.5-Air-GGUF:IQ4_XS',
          ('reads', {'engine': 'llama.cpp', 'model': 'GLM-4.5-Air', 'arch': 'glm4moe', 'params': 110, 'format': 'IQ4_XS'})), 'llama.cpp'),
    (Case('mlx652', 'https://github.com/ml-explore/mlx-examples/issues/652', 'model', 'M1 Max 64GB', None, RIGHT,
          'mlx-community/c4ai-command-r-plus-4bit',
          ('reads', {'engine': 'mlx', 'model': 'c4ai-command-r-plus', 'params': 104})), 'mlx'),
    (Case('agq747', 'https://github.com/AutoGPTQ/AutoGPTQ/issues/747', 'model', 'T4', None, FIXED,
          'model_name = "Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4"\n\n# Use AutoGPTQForCausalLM for quantized models\n# Load the model directly to the desired device using device_map\nmodel = AutoGPTQForCausalLM.from_pretrained(\n    model_name,\n    device_map="auto",  # Let Transformers decide the device placement\n    low_cpu_mem_usage=True,\n    trust_remote_code=True,\n    offload_folder="/content/offload_folder",\n    # Adjust max_memory as needed for your GPU\n    max_memory={0: "13GiB", "cpu": "10GiB"},\n    quantize_config=None,\n)',
          ('refuses', 'give `oomkit check Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4 --engine transformers --device-map auto`')), 'transformers'),
    (Case('h2o416', 'https://github.com/h2oai/h2ogpt/pull/416', 'model', 'RTX 4090', None, FIXED,
          'model_name_or_path = "TheBloke/Nous-Hermes-13B-GPTQ"\nmodel_basename = "nous-hermes-13b-GPTQ-4bit-128g.no-act.order"\n\nuse_triton = False\n\ntokenizer = AutoTokenizer.from_pretrained(model_name_or_path, use_fast=True)\n\nimport torch\nwith torch.device(\'cuda\'):\n\n    model = AutoGPTQForCausalLM.from_quantized(model_name_or_path,\n        model_basename=model_basename,\n        use_safetensors=True,\n        trust_remote_code=True,\n        device="cuda:0",\n        use_triton=use_triton,\n        quantize_config=None)',
          ('refuses', 'AutoGPTQForCausalLM.from_quantized(...)), not a model name or an engine command; oomkit does not run it: give `oomkit check TheBloke/Nous-Hermes-13B-GPTQ --engine transformers`')), 'transformers'),
    (Case('lgpt285', 'https://github.com/PromtEngineer/localGPT/issues/285', 'model', 'GTX 1660', None, RIGHT,
          'TheBloke/wizardLM-7B-GPTQ',
          ('refuses', "unknown model 'TheBloke/wizardLM-7B-GPTQ'")), 'transformers'),
    (Case('ol6116', 'https://github.com/ollama/ollama/issues/6116', 'model', 'RTX 4090', '0.1.37', FIXED,
          'mistral-nemo',
          ('refuses', '0.2.8')), 'ollama'),
    (Case('ol1348', 'https://github.com/ollama/ollama/issues/1348', 'cmd', 'M1 16GB', None, RIGHT,
          'ollama run deepseek-coder:6.7b-base-q3_K_S',
          ('reads', {'engine': 'ollama', 'model': 'deepseek-coder 6.7B', 'params': 6.7, 'format': 'Q3_K_S', 'warn': "'base' read as"})), None),
    (Case('ol4560', 'https://github.com/ollama/ollama/issues/4560', 'cmd', 'M2 Max 64GB', None, RIGHT,
          'ollama run phi-3-medium-4k-instruct-bartowski:q5_k_m tell me a short joke --verbose',
          ('refuses', "unknown model 'phi-3-medium-4k-instruct-bartowski'")), None),
    (Case('v6861', 'https://github.com/vllm-project/vllm/issues/6861', 'cmd', 'RTX 4090', '0.6.3.post1', RIGHT,
          'vllm serve unsloth/Llama-3.2-11B-Vision-Instruct-bnb-4bit --trust-remote-code --max-model-len 4096',
          ('reads', {'engine': 'vllm', 'model': 'Llama-3.2-11B-Vision-Instruct-bnb-4bit', 'format': 'bnb', 'ctx': 4096})), None),
    (Case('v15959', 'https://github.com/vllm-project/vllm/issues/15959', 'cmd', '4x RTX 3090', '0.8.2', RIGHT,
          'vllm serve Unsloth/ --load-format bitsandbytes --max-model-len 30000 --pipeline-parallel-size 4 --gpu-memory-utilization 0.9',
          ('refuses', "unknown model 'Unsloth/'")), None),
    (Case('uns688', 'https://github.com/unslothai/unsloth/issues/688', 'model', 'RTX 4090', None, RIGHT,
          'llm = LLM("unsloth/mistral-7b-instruct-v0.3-bnb-4bit", dtype="half")',
          ('refuses', 'give `oomkit check -- vllm serve unsloth/mistral-7b-instruct-v0.3-bnb-4bit --dtype half`')), 'vllm'),
    (Case('uns1205', 'https://github.com/unslothai/unsloth/issues/1205', 'model', 'V100 16GB', None, FIXED,
          'engine_args = EngineArgs(model="unsloth/gemma-2b-bnb-4bit",\n                             enable_lora=True,\n                             )\nengine = LLMEngine.from_engine_args(engine_args)',
          ('refuses', "(vLLM's EngineArgs(...)), not a model name or an engine command; oomkit does not run it: give `oomkit check -- vllm serve unsloth/gemma-2b-bnb-4bit --enable-lora`")), 'vllm'),
    (Case('uns464', 'https://github.com/unslothai/unsloth/issues/464', 'cmd', 'A10G', '0.4.1', RIGHT,
          'python -O -u -m vllm.entrypoints.openai.api_server     --host=127.0.0.1     --port=8000     --model=/home/ubuntu/ans/llama3_pipeline/fine_tuning/llama3_8b_13_05_2024/vllm_merged_4bit     --tokenizer=/home/ubuntu/ans/llama3_pipeline/fine_tuning/llama3_8b_13_05_2024/vllm_merged_4bit --dtype=half',
          ('refuses', "'/home/ubuntu/ans/llama3_pipeline/fine_tuning/llama3_8b_13_05_2024/vllm_merged_4bit'")), None),
    (Case('qvl55', 'https://github.com/QwenLM/Qwen3-VL/issues/55', 'cmd', 'RTX 4090', '0.6.0', RIGHT,
          'vllm serve /hestia/model/Qwen2-VL-7B-Instruct-AWQ --quantization awq --num-gpu-blocks-override 2048 --port 8002 --served-model-name qwenvl --swap-space 0',
          ('reads', {'engine': 'vllm', 'model': 'Qwen2-VL-7B-Instruct-AWQ', 'format': 'awq', 'warn': 'is not on this machine'})), None),
    (Case('v17852s', 'https://github.com/vllm-project/vllm/issues/17852', 'cmd', '2x H20', None, RIGHT,
          'server_host=0.0.0.0\nserver_port=8090\nmodel_path=model/Qwen3-32B-FP8\ntp=2\nexport CUDA_VISIBLE_DEVICES=6,7\npython -m sglang.launch_server \\\n    --host ${server_host} \\\n    --port ${server_port} \\\n    --model ${model_path} \\\n    --tp ${tp} \\\n    --mem-fraction 0.9 \\\n    --random-seed 42 \\\n    --max-running-requests 1024',
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-32B-FP8', 'format': 'fp8', 'settings': {'tp_size': 2, 'mem_fraction_static': 0.9}})), None),
    (Case('v17852v', 'https://github.com/vllm-project/vllm/issues/17852', 'cmd', '2x H20', None, RIGHT,
          'export TP=2\nmodel=model/Qwen3-32B-FP8\nvllm serve $model --tensor-parallel-size $TP --max-num-seqs 1024 --port 8080 --host 0.0.0.0',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-32B-FP8', 'format': 'fp8', 'settings': {'tensor_parallel_size': 2}})), None),
    (Case('colab1', 'https://github.com/enescingoz/colab-llm/issues/1', 'model', 'T4', None, FIXED,
          'maryasov/qwen2.5-coder-cline:7b-instruct-q8_0',
          ('refuses', "unknown model 'maryasov/qwen2.5-coder-cline': maryasov/qwen2.5-coder-cline:7b-instruct-q8_0 is a model of an Ollama user's namespace")), 'ollama'),
    (Case('lcp1029', 'https://github.com/abetlen/llama-cpp-python/issues/1029', 'cmd', '2x RTX 3090', None, RIGHT,
          'docker run --rm -it -p 8000:8000 \\\n     -v /home/jaredquek/text-generation-webui/models:/models \\\n     -e MODEL=/models/tulu-2-dpo-70b.Q5_K_M.gguf \\\n     --entrypoint uvicorn \\\n     ghcr.io/abetlen/llama-cpp-python:v0.2.24 \\\n     --factory llama_cpp.server.app:create_app --host 0.0.0.0 --port 8000 --n_gpu_layers 81 --chat_format chatml --use_mlock False',
          ('refuses', "unknown engine command 'uvicorn'")), None),
    (Case('v8096', 'https://github.com/vllm-project/vllm/issues/8096', 'cmd', 'RTX 4090', '0.5.5', RIGHT,
          'vllm serve  models/minicpm/ggml-model-Q5_K_M.gguf --quantization gguf --kv-cache-dtype auto',
          ('refuses', 'no such file: models/minicpm/ggml-model-Q5_K_M.gguf')), None),
    (Case('v17661', 'https://github.com/vllm-project/vllm/issues/17661', 'cmd', 'A10', '0.8.4', FIXED,
          'VLLM_USE_V1=0 vllm serve NoelJacob/Meta-Llama-3-8B-Instruct-Q4_K_M-GGUF  --max-model-len 4096 --gpu-memory-utilization 0.90   --distributed-executor-backend mp  --hf-config-path meta-llama/Meta-Llama-3-8B-Instruct --tokenizer meta-llama/Meta-Llama-3-8B-Instruct  --load-format gguf',
          ('refuses', 'NoelJacob/Meta-Llama-3-8B-Instruct-Q4_K_M-GGUF is a hub repo of GGUF files')), None),
    (Case('vgp101', 'https://github.com/vllm-project/vllm-gguf-plugin/issues/101', 'cmd', 'RTX 4060', '0.26.0', RIGHT,
          'vllm serve /models/Qwen3-8B/Qwen3-8B-Q4_K_M.gguf --tokenizer=/models/Qwen3-8B --served-model-name=Qwen/Qwen3-8B --max-model-len=16384 --max-num-seqs=16 --gpu-memory-utilization=0.79 --kv-cache-dtype=fp8',
          ('refuses', 'no such file: /models/Qwen3-8B/Qwen3-8B-Q4_K_M.gguf (its name says Qwen/Qwen3-8B:Q4_K_M')), None),
    (Case('v29137', 'https://github.com/vllm-project/vllm/pull/29137', 'cmd', 'RTX 4090', '0.12.0', RIGHT,
          'vllm serve unsloth/Qwen3-0.6B-GGUF:IQ1_S --tokenizer Qwen/Qwen3-0.6B',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3 0.6B', 'arch': 'qwen3', 'format': 'IQ1_S'})), None),
    (Case('v10204', 'https://github.com/vllm-project/vllm/issues/10204', 'cmd', 'RTX 3090, RTX 3080', '0.6.3', FIXED,
          '#!/bin/bash\nsource activate vllm\nexport CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport NVIDIA_VISIBLE_DEVICES=0,1  # Make both GPUs visible\n\nmax_tokens=1024\ntemplate=./templates/llama31.jinja\nmodel=/mnt/extra_ext4/models/Llama-3.1-Nemotron-70B-Instruct-HF-IQ3_M.gguf\n\nvllm serve  $model \\\n  --enable_chunked_prefill True \\\n  --chat-template "$template" \\\n  --tensor-parallel-size 2 \\\n  --max-num-batched-tokens $max_tokens \\\n  --gpu-memory-utilization 0.7 \\\n  --max-num-seqs=1 \\\n  --block-size 16\nsource deactivate',
          ('refuses', 'no such file: /mnt/extra_ext4/models/Llama-3.1-Nemotron-70B-Instruct-HF-IQ3_M.gguf')), None),
    (Case('sg1290', 'https://github.com/sgl-project/sglang/pull/1290', 'cmd', '8x H100', None, RIGHT,
          'python3 -m sglang.launch_server --model neuralmagic/Mixtral-8x22B-Instruct-v0.1-FP8 --quantization fp8 --kv-cache-dtype fp8_e5m2 --disable-radix --tp 8 --trust-remote-code',
          ('reads', {'engine': 'sglang', 'model': 'Mixtral-8x22B-Instruct-v0.1-FP8', 'settings': {'tp_size': 8, 'quantization': 'fp8'}})), None),
    (Case('sg3568', 'https://github.com/sgl-project/sglang/issues/3568', 'cmd', '2x H20', '0.4.3', RIGHT,
          'python -m sglang.launch_server --model-path neuralmagic/DeepSeek-R1-Distill-Qwen-7B-FP8-dynamic --port 30000 --host 0.0.0.0 --tp 2',
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1-Distill-Qwen-7B-FP8-dynamic', 'settings': {'tp_size': 2}})), None),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


check = checker(ENGINE)  # sweep 11's reading and refusal checks, with this sweep's engines


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 40 and len({c.id for c in CASES}) == 40 and len({c.url for c in CASES}) == 38
    assert sum(c.kind == "cmd" for c in CASES) == 25 and sum(c.kind == "model" for c in CASES) == 15
    assert sum(c.status == FIXED for c in CASES) == 9 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 31
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
