"""Real users' input, twelfth sweep: derived and quantized repo names (bartowski, lmstudio-community, mlx-community 4-,
6- and 8-bit, OsaurusAI MXFP4, RedHatAI W4A16 / FP8-dynamic, NVIDIA FP4, Qwen GPTQ-Int4, unsloth and Google QAT GGUF
repos, bitsandbytes), Ollama tags and hf.co/ pulls (one with the docs' `{username}` placeholder left in), and commands
as posted or pasted from READMEs and model cards (`python -m sglang.launch_server` with a ModelScope folder name and
`nohup`, `vllm serve` of a card's recipe, `llama-cli -hf ...:Q4_K_XL` from unsloth's docs, `llama-server --hf-repo
--hf-file`, `mlx_lm.generate` with no --model, `lms load`, `ollama run`, a shell script that runs mlx_lm), on the cards
people name (4090, 2x3090, 2x4090, RTX 5090 32GB, M4 Max 128GB, MI300X, 8x MI355X, Arc B580, Arc A770, H20). None of
their threads or texts is in an earlier sweep (checked by URL and by text before use).

Each expectation was written from the thread, the card or the engine before oomkit was run on it. Some were
restated after reading oomkit's answer because the first draft was wrong about the world or only phrased too
narrowly, not because oomkit said otherwise: a derived repo is named by its own id (18 names: "Meta-Llama-3-8B",
not "Llama 3 8B"); `lms load` and LM Studio's GGUF keys run llama.cpp, and say so (lms258, lmsload); llama.cpp pads
n_ctx to 256 cells, so unsloth's --ctx-size 32684 is 32768 (uns2507; llamacpp/kv.py, llama_context GGML_PAD);
two "fits" were dropped, the cases' runs being shorter than the whole trained context an MLX name with no --ctx is
estimated at (osa2211, mlx70b8); the catalog holds neither Mistral Medium 3.5
(rec490) nor AMD's Quark "-MXFP4-Preview" checkpoints (v32238), and oomkit refuses both in one line naming the
input, which is the promise for a model it cannot read offline.

Measured (2026-12-06), before this sweep's change: 40 real inputs (18 commands, 22 names) from 21 threads and 17
READMEs, cards and docs; 2 wrong. llama.cpp#7619's `llama-server --hf-repo microsoft/Phi-3-mini-4k-instruct-gguf
--hf-file Phi-3-mini-4k-instruct-q4.gguf` was refused as "unknown quant tag 'Q4'" (a tag nobody typed: the file
name's "q4" names no GGUF type); now refused naming the cause, that the file name carries no file type to size the
weights by (model/names.py gguf_file_quant keeps only real types). `mlx_lm.generate --prompt ...` with no --model
(mlx-lm's README) is refused as naming no model, where mlx_lm loads its DEFAULT_MODEL
(mlx-community/Llama-3.2-3B-Instruct-4bit, from mlx-lm 0.21.0); engines/mlx/args.py now loads it too.
FIXED 2, STILL 0, RIGHT 38. The mutation pass (every form of each command under check, fit and plan)
answered or refused in one line before the change too.
"""

from __future__ import annotations

from tests.sweep_harness import (
    FIXED,  # noqa: F401
    RIGHT,
    STILL,  # noqa: F401
    Case,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    sweep_tests,
)
from tests.test_real_world_sweep11 import checker

# (case, the engine its thread ran, for a name; None for a command). Hardware as the thread names it, else a card of
# the kind it implies, on which no expectation depends unless the case says `fits`.
CASES_AND_ENGINES = [
    # ---- public threads ----
    (Case('sg12496', 'https://github.com/sgl-project/sglang/issues/12496', 'model', '2x4090', None, RIGHT,
          'google/gemma-3-12b-it',
          ('reads', {'engine': 'sglang', 'model': 'Gemma 3 12B', 'arch': 'gemma3', 'params': 12.2})), 'sglang'),
    (Case('sg1030', 'https://github.com/sgl-project/sglang/issues/1030', 'cmd', 'RTX 4090', None, RIGHT,
          'python -m sglang.launch_server --model-path NousResearch/Meta-Llama-3-8B-Instruct  --host 0.0.0.0  --port 8000 --context-length 4096 --dtype bfloat16  --chat-template llama-3',
          ('reads', {'engine': 'sglang', 'model': 'Meta-Llama-3-8B', 'ctx': 4096})), None),
    (Case('sg12373', 'https://github.com/sgl-project/sglang/issues/12373', 'cmd', '8x H20', '0.5.4.post1', RIGHT,
          'export SGL_ENABLE_JIT_DEEPGEMM=1\nexport TORCHINDUCTOR_CACHE_DIR=/home/admin/inductor_root_cache\nexport SGLANG_TORCH_PROFILER_DIR=/home/admin/torch_profiler\nmodel_path=/home/models/DeepSeek-V3___2-Exp/\n\nnohup python3 -m sglang.launch_server --model-path $model_path \\\n--host 0.0.0.0 --port 8000 --trust-remote-code \\\n--enable-cache-report --quantization fp8 --log-level info --max-running-requests 32 \\\n--mem-fraction-static 0.92 --chunked-prefill-size 8192 --context-length 65535 \\\n--chat-template /home/r1.jinja \\\n--tp-size 8 --enable-metrics --cuda-graph-max-bs 32 \\\n--page-size 64 \\\n--nsa-prefill fa3 \\\n--nsa-decode fa3',
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3.2', 'ctx': 65535, 'settings': {'tp_size': 8, 'mem_fraction_static': 0.92}, 'fits': True, 'warn': 'is not on this machine'})), None),
    (Case('llsc371', 'https://github.com/intel/llm-scaler/issues/371', 'cmd', '2x Arc Pro B60', None, RIGHT,
          'vllm serve /home/intel/LLM/Qwen3.5-27b-GPTQ-Int4 \\\n  --served-model-name Qwen3.5-27b-GPTQ-Int4 \\\n  --enforce-eager \\\n  --port 8000 \\\n  --host 0.0.0.0 \\\n  --trust-remote-code \\\n  --disable-sliding-window \\\n  --gpu-memory-util 0.70 \\\n  --block-size 32 \\\n  --max-model-len 16384 \\\n  --max-num-batched-tokens 8192 \\\n  --enable-auto-tool-choice \\\n  --tool-call-parser qwen3_xml \\\n  --reasoning-parser qwen3 \\\n  --allow-deprecated-quantization \\\n  --dtype float16 \\\n  --tensor-parallel-size 2',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3.5-27b', 'format': 'gptq', 'ctx': 16384, 'settings': {'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.7}, 'warn': 'is not on this machine'})), None),
    (Case('vl13344', 'https://github.com/vllm-project/vllm/issues/13344', 'cmd', '4x RTX 4090', '0.7.2', RIGHT,
          'CUDA_VISIBLE_DEVICES=4,5,6,7 vllm serve unsloth/Qwen2.5-VL-72B-Instruct-bnb-4bit \\\n    --quantization bitsandbytes \\\n    --dtype half \\\n    --load-format bitsandbytes \\\n    --max-model-len 32768 \\\n    --max_num_batched_tokens 32768 \\\n    --max_num_seqs 20 \\\n    --pipeline_parallel_size 4 \\\n    --swap_space 10 \\\n    --num_scheduler_steps 6',
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-VL-72B', 'format': 'bnb', 'ctx': 32768, 'settings': {'pipeline_parallel_size': 4}})), None),
    (Case('mlx836', 'https://github.com/ml-explore/mlx-examples/issues/836', 'cmd', 'M1 Ultra 128GB', None, RIGHT,
          'python3 -m mlx_lm.generate --model ../mlx_models/Mixtral-8x22B-Instruct-v0.1-4bit --prompt "Hi! Tell a long story"',
          ('reads', {'engine': 'mlx', 'model': 'Mixtral-8x22B', 'fits': True, 'warn': 'is not on this machine'})), None),
    (Case('mlx492a', 'https://github.com/ml-explore/mlx-lm/issues/492', 'model', 'M2 Ultra 192GB', None, RIGHT,
          'mlx-community/Qwen3-Next-80B-A3B-Instruct-8bit',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-Next-80B-A3B', 'params': 80, 'format': 'mlx', 'fits': True})), 'mlx'),
    (Case('mlx492b', 'https://github.com/ml-explore/mlx-lm/issues/492', 'model', 'M2 Ultra 192GB', None, RIGHT,
          'lmstudio-community/Qwen3-Next-80B-A3B-Instruct-MLX-8bit',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-Next-80B-A3B', 'params': 80, 'format': 'mlx', 'fits': True})), 'mlx'),
    (Case('osa2211', 'https://github.com/osaurus-ai/osaurus/issues/2211', 'model', 'M3 Max 48GB', None, RIGHT,
          'OsaurusAI/Qwen3.6-35B-A3B-mxfp4',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3.6-35B-A3B', 'params': 35, 'format': 'mxfp4'})), 'mlx'),
    (Case('ol14861', 'https://github.com/ollama/ollama/issues/14861', 'model', '48GiB', None, RIGHT,
          'qwen3.5:35b-a3b-q8_0',
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.5 35B-A3B', 'params': 35, 'format': 'Q8_0'})), 'ollama'),
    (Case('ipex13128', 'https://github.com/intel/ipex-llm/issues/13128', 'model', 'Arc B580', None, RIGHT,
          'qwen3:30b-a3b',
          ('reads', {'engine': 'ollama', 'model': 'Qwen3 30B-A3B', 'arch': 'qwen3moe', 'params': 30.5, 'format': 'Q4_K_M'})), 'ollama'),
    (Case('l20338', 'https://github.com/ggml-org/llama.cpp/issues/20338', 'model', 'Arc A770', None, RIGHT,
          'Qwen3.5-27B-GGUF/BF16/Qwen3.5-27B-BF16-00001-of-00002.gguf',
          ('refuses', 'no such file: Qwen3.5-27B-GGUF/BF16/Qwen3.5-27B-BF16-00001-of-00002.gguf')), 'llama.cpp'),
    (Case('hd1447', 'https://github.com/huggingface/hub-docs/pull/1447', 'model', '4090', None, RIGHT,
          'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF',
          ('reads', {'engine': 'ollama', 'model': 'Llama 3.2 1B', 'params': 1.24, 'format': 'Q4_K_M', 'fits': True})), 'ollama'),
    (Case('hd1447b', 'https://github.com/huggingface/hub-docs/pull/1447', 'cmd', '4090', None, RIGHT,
          'ollama run hf.co/{username}/{repository}',
          ('refuses', '{username}')), None),
    (Case('rec490', 'https://github.com/vllm-project/recipes/pull/490', 'model', 'MI300X', None, RIGHT,
          'mistralai/Mistral-Medium-3.5-128B',
          ('refuses', "unknown model 'mistralai/Mistral-Medium-3.5-128B'")), 'vllm'),
    (Case('lms258', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/258', 'model', 'M4 Max 128GB', None, RIGHT,
          'lmstudio-community/llama-3.3-70b-instruct',
          ('reads', {'engine': 'llama.cpp', 'model': 'llama-3.3-70b', 'params': 70.6})), 'lmstudio'),
    (Case('acli128', 'https://github.com/basnijholt/agent-cli/pull/128', 'cmd', 'M4 Max 128GB', None, RIGHT,
          'MLX_MODEL=mlx-community/Qwen3-8B-4bit ./scripts/run-mlx-lm.sh',
          ('refuses', 'run-mlx-lm.sh')), None),
    (Case('anyl5486', 'https://github.com/Mintplex-Labs/anything-llm/issues/5486', 'model', 'M4 Max 128GB', None, RIGHT,
          'mlx-community/Qwen3.6-35B-A3B-6bit',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3.6-35B-A3B', 'params': 35, 'fits': True})), 'mlx'),
    (Case('lms136', 'https://github.com/lmstudio-ai/lms/issues/136', 'model', '8GiB', None, RIGHT,
          'hugging-quants/Llama-3.2-1B-Instruct-Q8_0-GGUF/llama-3.2-1b-instruct-q8_0.gguf',
          ('refuses', 'no such file')), 'lmstudio'),
    (Case('v7724', 'https://github.com/vllm-project/vllm/issues/7724', 'cmd', 'H100', None, RIGHT,
          'vllm serve nm-testing/MiniCPM-V-2_6-FP8-dynamic --trust-remote-code',
          ('refuses', 'nm-testing/MiniCPM-V-2_6-FP8-dynamic')), None),
    (Case('v32238', 'https://github.com/vllm-project/vllm/pull/32238', 'cmd', '8x MI355X', None, RIGHT,
          'VLLM_ROCM_USE_AITER=1 VLLM_ROCM_USE_AITER_FP4BMM=1 VLLM_ROCM_USE_AITER_MHA=0 VLLM_ROCM_USE_AITER_MLA=1 AMDGCN_USE_BUFFER_OPS=1 SAFETENSORS_FAST_GPU=1 vllm serve /data/models/DeepSeek-R1-0528-MXFP4-Preview --host localhost --port 8000 --tensor-parallel-size 8 --max-num-batched-tokens 32768 --trust-remote-code --no-enable-prefix-caching --disable-log-requests --gpu_memory_utilization 0.8 --async-scheduling --block-size 16 --load-format fastsafetensors --seed 123 --enforce-eager',
          ('refuses', "unknown model '/data/models/DeepSeek-R1-0528-MXFP4-Preview'")), None),
    (Case('cline6257', 'https://github.com/cline/cline/issues/6257', 'model', '2x RTX 3090', None, RIGHT,
          'Qwen3-30B-A3B-Instruct-Coder-480B-Distill-v2-Q8_0.gguf',
          ('refuses', 'no such file: Qwen3-30B-A3B-Instruct-Coder-480B-Distill-v2-Q8_0.gguf')), 'llama.cpp'),
    (Case('l7619', 'https://github.com/ggml-org/llama.cpp/issues/7619', 'cmd', '4090', None, FIXED,
          'llama-server --hf-repo microsoft/Phi-3-mini-4k-instruct-gguf --hf-file Phi-3-mini-4k-instruct-q4.gguf -c 2048',
          ('refuses', "--hf-file 'Phi-3-mini-4k-instruct-q4.gguf': no GGUF file type")), None),
    # ---- READMEs, model cards and docs, pasted as they stand ----
    (Case('q235fp8', 'https://huggingface.co/Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', 'cmd', '4x H20', None, RIGHT,
          'vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --tensor-parallel-size 4 --max-model-len 262144',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-235B-A22B', 'format': 'fp8', 'ctx': 262144, 'settings': {'tensor_parallel_size': 4}, 'fits': True})), None),
    (Case('uns2507', 'https://docs.unsloth.ai/models/qwen3-how-to-run-and-fine-tune/qwen3-2507', 'cmd', 'RTX 5090 32GB', None, RIGHT,
          './llama.cpp/llama-cli \\\n    -hf unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF:Q4_K_XL \\\n    --jinja -ngl 99 --threads -1 --ctx-size 32684 \\\n    --temp 0.7 --min-p 0.0 --top-p 0.80 --top-k 20 --presence-penalty 1.0',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 30B-A3B', 'format': 'Q4_K_XL', 'ctx': 32768, 'fits': True})), None),
    (Case('mlxdef', 'https://github.com/ml-explore/mlx-lm/blob/main/README.md', 'cmd', 'M4 Max 128GB', None, FIXED,
          'mlx_lm.generate --prompt "How tall is Mt Everest?"',
          ('reads', {'engine': 'mlx', 'model': 'Llama 3.2 3B', 'fits': True})), None),
    (Case('sgdocs', 'https://docs.sglang.ai/basic_usage/send_request.html', 'cmd', 'H20', None, RIGHT,
          'python3 -m sglang.launch_server --model-path qwen/qwen2.5-0.5b-instruct --host 0.0.0.0',
          ('reads', {'engine': 'sglang', 'model': 'Qwen2.5 0.5B', 'fits': True})), None),
    (Case('ollq3', 'https://ollama.com/library/qwen3:30b-a3b-q4_K_M', 'cmd', 'M4 Max 128GB', None, RIGHT,
          'ollama run qwen3:30b-a3b-q4_K_M',
          ('reads', {'engine': 'ollama', 'model': 'Qwen3 30B-A3B', 'format': 'Q4_K_M', 'fits': True})), None),
    (Case('q72gptq', 'https://huggingface.co/Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4', 'model', '2x3090', None, RIGHT,
          'Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4',
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-72B', 'format': 'gptq', 'fits': False})), 'vllm'),
    (Case('rhw4a16', 'https://huggingface.co/RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16', 'model', 'H20', None, RIGHT,
          'RedHatAI/Llama-3.3-70B-Instruct-quantized.w4a16',
          ('reads', {'engine': 'vllm', 'model': 'Llama-3.3-70B', 'params': 70.6})), 'vllm'),
    (Case('nvfp4', 'https://huggingface.co/nvidia/Llama-3.3-70B-Instruct-FP4', 'model', 'RTX 5090 32GB', None, RIGHT,
          'nvidia/Llama-3.3-70B-Instruct-FP4',
          ('reads', {'engine': 'vllm', 'model': 'Llama-3.3-70B', 'format': 'fp4', 'fits': False})), 'vllm'),
    (Case('g3qat', 'https://huggingface.co/google/gemma-3-27b-it-qat-q4_0-gguf', 'model', '4090', None, RIGHT,
          'google/gemma-3-27b-it-qat-q4_0-gguf',
          ('reads', {'engine': 'llama.cpp', 'model': 'gemma-3-27b', 'format': 'Q4_0'})), 'llama.cpp'),
    (Case('olgptoss', 'https://ollama.com/library/gpt-oss', 'cmd', '4090', None, RIGHT,
          'ollama run gpt-oss:20b',
          ('reads', {'engine': 'ollama', 'model': 'gpt-oss 20B', 'format': 'MXFP4', 'fits': True})), None),
    (Case('lmsload', 'https://lmstudio.ai/docs/cli/load', 'cmd', '4090', None, RIGHT,
          'lms load openai/gpt-oss-20b --gpu max --context-length 16384',
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'ctx': 16384, 'fits': True})), None),
    (Case('bart14', 'https://huggingface.co/bartowski/Qwen_Qwen3-14B-GGUF', 'model', 'RTX 5090 32GB', None, RIGHT,
          'bartowski/Qwen_Qwen3-14B-GGUF',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 14B', 'params': 14.8, 'fits': True})), 'llama.cpp'),
    (Case('mlx70b8', 'https://huggingface.co/mlx-community/Llama-3.3-70B-Instruct-8bit', 'model', 'M4 Max 128GB', None, RIGHT,
          'mlx-community/Llama-3.3-70B-Instruct-8bit',
          ('reads', {'engine': 'mlx', 'model': 'Llama-3.3-70B', 'params': 70.6})), 'mlx'),
    (Case('rhfp8', 'https://huggingface.co/RedHatAI/Qwen3-32B-FP8-dynamic', 'model', '4090', None, RIGHT,
          'RedHatAI/Qwen3-32B-FP8-dynamic',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-32B', 'format': 'ct-float', 'fits': False})), 'vllm'),
    (Case('unsol', 'https://docs.unsloth.ai/models/qwen3-how-to-run-and-fine-tune', 'cmd', 'Arc B580', None, RIGHT,
          'ollama run hf.co/unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL',
          ('reads', {'engine': 'ollama', 'model': 'Qwen3 8B', 'format': 'UD-Q4_K_XL', 'fits': True})), None),
    (Case('dsq8b', 'https://huggingface.co/deepseek-ai/DeepSeek-R1-0528-Qwen3-8B', 'model', 'H20', None, RIGHT,
          'deepseek-ai/DeepSeek-R1-0528-Qwen3-8B',
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek-R1-0528-Qwen3-8B', 'params': 8.2, 'fits': True})), 'sglang'),
    (Case('q3gptq', 'https://huggingface.co/Qwen/Qwen3-30B-A3B-GPTQ-Int4', 'model', '2x3090', None, RIGHT,
          'Qwen/Qwen3-30B-A3B-GPTQ-Int4',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-30B-A3B', 'format': 'gptq', 'params': 30.5})), 'vllm'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


check = checker(ENGINE)  # sweep 11's reading and refusal checks, with this sweep's engines


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 40 and len({c.url for c in CASES}) == 38 and len({c.id for c in CASES}) == 40
