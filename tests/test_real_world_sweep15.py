"""Real users' input, fifteenth sweep: 30 names and commands as they are typed from Hugging Face model pages, the
Ollama library and the engines' docs, offline (the built-in catalog answers), with the GPU as people write it.
Derived and quantized repos (unsloth's UD-Q4_K_XL, bartowski's, TheBloke's AWQ / GPTQ, mlx-community's -4bit and
gpt-oss -MXFP4-Q8, RedHatAI's FP8-dynamic, nvidia's FP4, QuantTrio's AWQ, an Ollama hf.co/ pull, -Instruct-2507,
an -abliterated fine-tune's shapes), Ollama tags (qwen3:30b-a3b-instruct-2507-q4_K_M, gpt-oss:20b,
gemma3:27b-it-qat, gemma3n:e4b, granite4, qwen3.6:27b, a deepseek-r1 distill), pasted commands (llama-server -hf,
vllm serve with tensor parallelism, python -m sglang.launch_server, ollama run, mlx_lm.server / generate, a docker
run of vllm/vllm-openai), the newest models (Qwen3-Next, Qwen3.6, gpt-oss, GLM-4.6, Kimi K2, DeepSeek V3.2,
Llama 4, Gemma 3n, Granite 4, Nemotron Nano 2) and GPUs written "4090", "RTX 5090 32GB", "M3 Max 64GB", "2x3090",
"H100 SXM", "8x MI300X", "Arc B580", "2x H100 80GB SXM5", "2x RTX 3090 (48GB)". None of the names or commands is
in an earlier sweep (checked by text in tests/test_real_world_sweep*.py).

Each expectation comes from the model's config (shared/reference/model_configs.jsonl) and the engine's rules, not
from oomkit's output: KV bytes a token = layers holding KV x KV heads x head size x 2 (K and V) x 2 bytes (f16),
only the full-attention layers of a hybrid (Qwen3-Next / Qwen3.5 / Qwen3.6: every 4th, full_attention_interval 4;
Gemma 3n E4B: the 4 global layers among the 20 that do not share KV, num_kv_shared_layers 15; gemma 3 27B: 10 of
62), MLA's 576-element latent at 2 bytes on every tensor-parallel rank (vLLM keeps it whole per rank: DeepSeek /
Kimi K2, 61 layers; DeepSeek V3.2 adds its indexer's 128 fp8 bytes + a 4-byte scale per token and layer,
vLLM DeepseekV32IndexerCache), the MTP layer with none (GLM-4.6: 92 of 93). Ollama's default num_ctx by total VRAM
(server/routes.go: >= 47 GiB 262144, >= 23 GiB 32768, else 4096), capped at the trained context. vLLM's
max_model_len is the config's unless typed; gpt-oss-120b with vLLM's defaults on one H100 is refused at the KV
check (vllm-project/vllm#27508: 1.71 GiB available). mlx-community/gpt-oss-*-MXFP4-Q8 is openai's MXFP4
checkpoint converted with mlx_lm.convert -q --q-bits 8 (ml-explore/mlx-lm#605 asks what -Q4 and -Q8 differ in).

Measured (2026-12-07), before this sweep's change: right 26, wrong 1, refused wrongly 3, crashed 0 (of 30).
`--gpu "2x H100 80GB SXM5"` was "unknown GPU 'H100 80GB SXM5'" (a size between the model and its form factor;
hardware/catalog.py resolve now reads it after it). `--gpu "2x RTX 3090 (48GB)"` was two modified 48 GB cards,
so Ollama's 131072-token deepseek-r1:32b fit (96 GiB); the bracketed size after a count is now the cards' memory
together when it is N times a size they are sold with and none itself (hardware/catalog.py _bracketed_total),
and it does not fit (18.5 GiB of weights + 32 GiB of KV on 48 GiB). `oomkit check
mlx-community/gpt-oss-120b-MXFP4-Q8 --engine mlx` was "unknown model" while `mlx_lm.server --model` of the same
name was read: MODEL for mlx-lm that neither the catalog nor the name rules read is now read as mlx_lm's --model
(commands/_model_args.py). After: right 29, refused wrongly 1: granite4:micro-h (Granite 4.0 H-Micro) is not in
the catalog and no copy of its config.json was found to add it (STILL).

Not counted wrong: vLLM on an AMD GPU warned "GPU model 'AMD Instinct MI300X' is not in the GPU catalog" (MI300X is
in it; engines/vllm/config.py guesses a compute capability for any GPU without one); it now names the part and says
vLLM's ROCm attention backends are not modelled. The figures asserted here (KV a token) do not depend on it.
"""

from __future__ import annotations

import json

from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    check_reading_case,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    sweep_tests,
)


# KV bytes a token at 2 bytes an element: layers x KV heads x head size x 2 (K and V) x 2
def _kv(layers: int, heads: int, dim: int) -> int:
    return layers * heads * dim * 2 * 2


MLA = 61 * 576 * 2  # DeepSeek V3 / R1 / Kimi K2: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64, per rank

# (case, the engine a name runs with; None for a command)
CASES_AND_ENGINES = [
    (Case('u1', 'https://huggingface.co/unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF', 'model', '4090', None, RIGHT,
          'unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF:UD-Q4_K_XL',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 30B-A3B Instruct 2507', 'arch': 'qwen3moe', 'params': 30.5,
                     'format': 'UD-Q4_K_XL', 'kv_tok': _kv(48, 4, 128), 'fits': True,
                     'warn': "llama.cpp's --fit (on by default) reduces the context from 262144"})), 'llama.cpp'),
    (Case('c2', 'https://huggingface.co/unsloth/gpt-oss-20b-GGUF', 'cmd', 'RTX 5090 32GB', None, RIGHT,
          'llama-server -hf unsloth/gpt-oss-20b-GGUF:F16 -c 32768 -ngl 99 -fa on --jinja',
          # 12 full-attention layers of 24 (the others slide over 128 tokens), 8 KV heads of 64
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'arch': 'gpt-oss', 'params': 20.9, 'format': 'F16',
                     'ctx': 32768, 'kv_tok': _kv(12, 8, 64), 'fits': True})), None),
    (Case('c3', 'https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct', 'cmd', '2x H100 80GB SXM5', None, FIXED,
          'vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 2 --max-model-len 131072',
          # 81.3B bfloat16 = 162.6 GB, 75.7 GiB a rank: more than 0.9 x 80 GB (the card's page serves it on 4 GPUs)
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next 80B-A3B', 'arch': 'qwen3next', 'params': 81.3, 'ctx': 131072,
                     'settings': {'tensor_parallel_size': 2}, 'fits': False,
                     'devices': [('H100', 81559)] * 2})), None),
    (Case('m4', 'https://ollama.com/library/qwen3:30b-a3b-instruct-2507-q4_K_M', 'model', 'M3 Max 64GB', None, RIGHT,
          'qwen3:30b-a3b-instruct-2507-q4_K_M',
          # Metal's working set of a 64 GB M3 Max is over 47 GiB: num_ctx 262144, the model's own
          ('reads', {'engine': 'ollama', 'model': 'Qwen3 30B-A3B Instruct 2507', 'params': 30.5, 'format': 'Q4_K_M',
                     'ctx': 262144, 'kv_tok': _kv(48, 4, 128), 'fits': True})), 'ollama'),
    (Case('m5', 'https://ollama.com/library/gpt-oss:20b', 'model', 'RTX 4060 Ti 16GB', None, RIGHT,
          'gpt-oss:20b',
          ('reads', {'engine': 'ollama', 'model': 'gpt-oss 20B', 'params': 20.9, 'format': 'MXFP4', 'ctx': 4096,
                     'fits': True})), 'ollama'),
    (Case('m6', 'https://ollama.com/library/gemma3:27b-it-qat', 'model', '3090', None, RIGHT,
          'gemma3:27b-it-qat',
          # 24 GiB: num_ctx 32768; the KV of the 10 global layers of 62 (16 KV heads of 128)
          ('reads', {'engine': 'ollama', 'model': 'Gemma 3 27B', 'arch': 'gemma3', 'params': 27.0, 'format': 'Q4_0',
                     'ctx': 32768, 'kv_tok': _kv(10, 16, 128), 'fits': True})), 'ollama'),
    (Case('m7', 'https://huggingface.co/bartowski/Qwen_Qwen3-32B-GGUF', 'model', '4090', None, RIGHT,
          'bartowski/Qwen_Qwen3-32B-GGUF:Q4_K_M',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 32B', 'arch': 'qwen3', 'params': 32.8, 'format': 'Q4_K_M',
                     'kv_tok': _kv(64, 8, 128), 'fits': True})), 'llama.cpp'),
    (Case('m8', 'https://huggingface.co/TheBloke/Mistral-7B-Instruct-v0.2-AWQ', 'model', 'RTX 3060 12GB', None, RIGHT,
          'TheBloke/Mistral-7B-Instruct-v0.2-AWQ',
          ('reads', {'engine': 'vllm', 'model': 'Mistral-7B-Instruct-v0.2-AWQ', 'params': 7.2, 'format': 'awq',
                     'ctx': 32768, 'kv_tok': _kv(32, 8, 128), 'fits': True})), 'vllm'),
    (Case('r9', 'https://huggingface.co/mlx-community/Qwen3-Coder-30B-A3B-Instruct-4bit', 'cmd', 'M3 Max 64GB', None,
          RIGHT, 'mlx_lm.server --model mlx-community/Qwen3-Coder-30B-A3B-Instruct-4bit --port 8080',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-Coder 30B-A3B', 'arch': 'qwen3moe', 'params': 30.5,
                     'kv_tok': _kv(48, 4, 128), 'fits': True})), None),
    (Case('c10', 'https://huggingface.co/RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8-dynamic', 'cmd', '2x H100', None,
          RIGHT, 'vllm serve RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8-dynamic --tensor-parallel-size 2 --max-model-len 32768',
          ('reads', {'engine': 'vllm', 'model': 'Meta-Llama-3.1-70B-Instruct-FP8-dynamic', 'params': 70.6,
                     'ctx': 32768, 'kv_tok': _kv(80, 8, 128), 'settings': {'tensor_parallel_size': 2},
                     'fits': True})), None),
    (Case('r11', 'https://huggingface.co/nvidia/Qwen3-235B-A22B-FP4', 'model', 'B200', None, RIGHT,
          'nvidia/Qwen3-235B-A22B-FP4',
          # Qwen3-235B-A22B's max_position_embeddings 40960; 94 layers, 4 KV heads of 128, in the FP8 cache its
          # ModelOpt kv_cache_quant_algo asks for (vLLM 0.14+ resolve_kv_cache_dtype_string: auto -> fp8_e4m3)
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-235B-A22B-FP4', 'arch': 'qwen3moe', 'params': 235,
                     'format': 'nvfp4', 'ctx': 40960, 'kv_tok': _kv(94, 4, 128) // 2, 'fits': True})), 'vllm'),
    (Case('r12', 'https://huggingface.co/QuantTrio/GLM-4.6-AWQ', 'cmd', '4x H100', None, RIGHT,
          'vllm serve QuantTrio/GLM-4.6-AWQ --tensor-parallel-size 4 --max-model-len 65536 --enable-expert-parallel',
          # 92 attention layers hold KV, the MTP layer none
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.6-AWQ', 'arch': 'glm4moe', 'params': 358, 'format': 'awq',
                     'ctx': 65536, 'kv_tok': _kv(92, 8, 128), 'settings': {'tensor_parallel_size': 4},
                     'fits': True})), None),
    (Case('c13', 'https://ollama.com/library/gemma3n:e4b', 'cmd', 'Arc B580', None, RIGHT,
          'ollama run gemma3n:e4b',
          ('reads', {'engine': 'ollama', 'model': 'Gemma 3n E4B', 'arch': 'gemma3n', 'ctx': 4096,
                     'kv_tok': _kv(4, 2, 256), 'fits': True, 'devices': [('Arc B580', 12288)]})), None),
    (Case('c14', 'https://huggingface.co/moonshotai/Kimi-K2-Instruct', 'cmd', '16x H200', None, RIGHT,
          'vllm serve moonshotai/Kimi-K2-Instruct --tensor-parallel-size 16 --trust-remote-code',
          ('reads', {'engine': 'vllm', 'model': 'Kimi K2 Instruct', 'params': 1026, 'format': 'fp8', 'ctx': 131072,
                     'kv_tok': 16 * MLA, 'settings': {'tensor_parallel_size': 16}, 'fits': True})), None),
    (Case('c15', 'https://huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp', 'cmd', '8x H200', None, RIGHT,
          'vllm serve deepseek-ai/DeepSeek-V3.2-Exp -tp 8',
          ('reads', {'engine': 'vllm', 'model': 'DeepSeek V3.2 Exp', 'params': 685, 'ctx': 163840,
                     'kv_tok': 8 * (MLA + 61 * (128 + 4)), 'settings': {'tensor_parallel_size': 8},
                     'fits': True})), None),
    (Case('c16', 'https://blog.vllm.ai/2025/04/05/llama4.html', 'cmd', '8x H100', None, RIGHT,
          'vllm serve meta-llama/Llama-4-Scout-17B-16E-Instruct --tensor-parallel-size 8 --max-model-len 1000000',
          # the post: Scout on 8x H100 up to 1M tokens
          ('reads', {'engine': 'vllm', 'model': 'Llama 4 Scout', 'arch': 'llama4', 'params': 108, 'ctx': 1000000,
                     'fits': True})), None),
    (Case('m17', 'https://huggingface.co/ibm-granite/granite-4.0-h-small', 'model', 'A100 80GB', None, RIGHT,
          'ibm-granite/granite-4.0-h-small',
          ('reads', {'engine': 'vllm', 'model': 'Granite 4.0 H-Small', 'arch': 'granitehybrid', 'params': 32.2,
                     'ctx': 131072, 'fits': True})), 'vllm'),
    (Case('r19', 'https://ollama.com/library/qwen3.6:27b', 'cmd', '2x3090', None, RIGHT,
          'ollama run qwen3.6:27b',
          # 48 GiB: num_ctx 262144; 16 full-attention layers of 64, 4 KV heads of 256
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.6 27B', 'params': 27.3, 'ctx': 262144,
                     'kv_tok': _kv(16, 4, 256), 'devices': [('RTX 3090', 24576)] * 2})), None),
    (Case('c20', 'https://huggingface.co/deepseek-ai/DeepSeek-R1-0528', 'cmd', '8x MI300X', None, RIGHT,
          'vllm serve deepseek-ai/DeepSeek-R1-0528 --tensor-parallel-size 8',
          ('reads', {'engine': 'vllm', 'model': 'DeepSeek R1 0528', 'params': 684, 'ctx': 163840, 'kv_tok': 8 * MLA,
                     'fits': True, 'devices': [('MI300X', 196592)] * 8})), None),
    (Case('c21', 'https://github.com/vllm-project/vllm/issues/27508', 'cmd', 'H100 SXM', None, RIGHT,
          'docker run --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:latest --model openai/gpt-oss-120b',
          ('reads', {'engine': 'vllm', 'model': 'gpt-oss 120B', 'params': 116.8, 'format': 'mxfp4', 'ctx': 131072,
                     'fits': False, 'warn': 'vLLM refuses to start'})), None),
    (Case('c22', 'https://huggingface.co/ggml-org/gpt-oss-120b-GGUF', 'cmd', 'RTX 5090 32GB', None, RIGHT,
          'llama-server -hf ggml-org/gpt-oss-120b-GGUF -c 0 -fa on --jinja --n-cpu-moe 24 -ngl 99',
          # -c 0: the trained context; 18 full-attention layers of 36
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 120B', 'format': 'MXFP4', 'ctx': 131072,
                     'kv_tok': _kv(18, 8, 64), 'fits': True})), None),
    (Case('r24', 'https://huggingface.co/mlx-community/Qwen3-Next-80B-A3B-Thinking-4bit', 'cmd', 'M4 Max 128GB', None,
          RIGHT, 'mlx_lm.generate --model mlx-community/Qwen3-Next-80B-A3B-Thinking-4bit --prompt hello',
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-Next 80B-A3B Thinking', 'arch': 'qwen3next', 'params': 81.3,
                     'kv_tok': _kv(12, 2, 256), 'fits': True})), None),
    (Case('c26', 'https://huggingface.co/nvidia/NVIDIA-Nemotron-Nano-9B-v2', 'cmd', 'L4', None, RIGHT,
          'vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --trust-remote-code --max-num-seqs 64 --mamba_ssm_cache_dtype float32',
          ('reads', {'engine': 'vllm', 'model': 'Nemotron Nano 9B v2', 'arch': 'nemotron_h', 'params': 8.9,
                     'ctx': 131072, 'settings': {'max_num_seqs': 64, 'mamba_ssm_cache_dtype': 'float32'}})), None),
    (Case('c27', 'https://huggingface.co/unsloth/Qwen3.6-35B-A3B-GGUF', 'cmd', 'RTX 4080 16GB', None, RIGHT,
          'llama-server -hf unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q4_K_XL -c 65536 -ngl 99 -fa on --n-cpu-moe 20',
          # 10 full-attention layers of 40, 2 KV heads of 256
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.6 35B-A3B', 'arch': 'qwen35moe', 'params': 35.5,
                     'format': 'UD-Q4_K_XL', 'ctx': 65536, 'kv_tok': _kv(10, 2, 256)})), None),
    (Case('m28', 'https://huggingface.co/TheBloke/Llama-2-13B-chat-GPTQ', 'model', 'T4', None, RIGHT,
          'TheBloke/Llama-2-13B-chat-GPTQ',
          ('reads', {'engine': 'vllm', 'model': 'Llama-2-13B-chat-GPTQ', 'arch': 'llama', 'params': 13.0,
                     'format': 'gptq', 'ctx': 4096, 'kv_tok': _kv(40, 40, 128), 'fits': True})), 'vllm'),
    (Case('c29', 'https://huggingface.co/Qwen/Qwen3-VL-30B-A3B-Instruct-FP8', 'cmd', 'L40S', None, RIGHT,
          'python -m sglang.launch_server --model-path Qwen/Qwen3-VL-30B-A3B-Instruct-FP8 --context-length 32768',
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-VL-30B-A3B-Instruct-FP8', 'arch': 'qwen3vlmoe',
                     'params': 30.5, 'format': 'fp8', 'ctx': 32768, 'kv_tok': _kv(48, 4, 128)})), None),
    (Case('c30', 'https://huggingface.co/unsloth/gemma-3-27b-it-GGUF', 'cmd', 'RTX 3090', None, RIGHT,
          'ollama run hf.co/unsloth/gemma-3-27b-it-GGUF:Q4_K_M',
          ('reads', {'engine': 'ollama', 'model': 'Gemma 3 27B', 'format': 'Q4_K_M', 'ctx': 32768,
                     'kv_tok': _kv(10, 16, 128)})), None),
    (Case('x31', 'https://github.com/ml-explore/mlx-lm/issues/605', 'model', 'M3 Ultra 256GB', None, FIXED,
          'mlx-community/gpt-oss-120b-MXFP4-Q8',
          ('reads', {'engine': 'mlx', 'model': 'gpt-oss 120B', 'arch': 'gpt-oss', 'params': 116.8, 'format': 'mxfp4',
                     'settings': {'q_bits': 8}, 'fits': True})), 'mlx'),
    (Case('x32', 'https://ollama.com/library/deepseek-r1:32b-qwen-distill-q4_K_M', 'cmd', '2x RTX 3090 (48GB)', None,
          FIXED, 'ollama run deepseek-r1:32b-qwen-distill-q4_K_M',
          # 48 GiB: num_ctx 262144 capped at 131072; 64 layers x 8 KV heads of 128 = 32 GiB of KV
          ('reads', {'engine': 'ollama', 'model': 'DeepSeek-R1-Distill-Qwen 32B', 'arch': 'qwen2', 'params': 32.8,
                     'ctx': 131072, 'kv_tok': _kv(64, 8, 128), 'fits': False,
                     'devices': [('RTX 3090', 24576)] * 2})), None),
    (Case('ogm', 'https://ollama.com/library/granite4:micro-h', 'model', 'RTX 3060', None, STILL,
          'granite4:micro-h',
          ('reads', {'engine': 'ollama', 'model': 'Granite 4.0 H-Micro', 'arch': 'granitehybrid'})), 'ollama'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG = {
    'ogm': "Granite 4.0 H-Micro (Ollama's granite4:micro-h) is not in the built-in catalog, and no copy of its "
           "config.json was found to add it: refused as an unknown model",
}


def check(c: Case) -> None:
    check_reading_case(c, ENGINE[c.id])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c.id for c in CASES}) == 30 and len({c.url for c in CASES}) == 30
    assert sum(c.kind == "cmd" for c in CASES) == 19 and sum(c.kind == "model" for c in CASES) == 11
    assert sum(c.status == FIXED for c in CASES) == 3 and sum(c.status == STILL for c in CASES) == 1
    assert sum(c.status == RIGHT for c in CASES) == 26
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- the GPU words of this sweep, as the catalog reads them (hardware/catalog.py) ----

def test_a_size_between_the_model_and_its_form_factor_names_the_card():
    from oomkit.hardware.catalog import devices_for_names  # the catalog, as --gpu reads it

    for text, name, mib in (("H100 80GB SXM5", "H100 80GB HBM3", 81559), ("H100 80GB PCIe", "H100 PCIe", 81559),
                            ("A100 80GB SXM", "A100-SXM4-80GB", 81920), ("H200 141GB SXM", "H200", 143771)):
        (d,) = devices_for_names(text)
        assert name in d.name and d.memory_bytes == mib * 2**20, (text, d)


def test_a_bracketed_size_after_a_count_is_the_cards_together_only_where_it_must_be():
    from oomkit.hardware.catalog import devices_for_names, size_notes  # the catalog, as --gpu reads it

    for text, n, gb in (("2x RTX 3090 (48GB)", 2, 24), ("2x RTX 3090 (48 GB total)", 2, 24),
                        ("4x A100 (320GB)", 4, 80), ("2x H100 (160GB)", 2, 80)):
        devs = devices_for_names(text)
        assert len(devs) == n and {d.memory_bytes for d in devs} <= {gb * 2**30, 81559 * 2**20}, (text, devs)
        assert any("read as the" in note for note in size_notes(text)), text
    # a size one card is sold with stays each card's; one that no N of them make is a modified card, as before
    assert {d.memory_bytes for d in devices_for_names("2x RTX 4090 (24GB)")} == {24564 * 2**20}
    assert {d.memory_bytes for d in devices_for_names("2x A100 (100GB)")} == {100 * 2**30}
    assert {d.memory_bytes for d in devices_for_names("2x RTX 4090 48GB")} == {48 * 2**30}


def test_an_alias_number_that_is_not_the_cards_memory_is_no_size_it_is_sold_with():
    from oomkit.hardware.catalog import devices_for_names, size_notes  # the catalog, as --gpu reads it

    # nvidia-smi names the 96 GB HBM3 GH200 after its Grace CPU's LPDDR5X ("NVIDIA GH200 480GB" / "120GB"): the
    # note said "sold with 96, 120 or 480 GB" and offered 'GH200 480GB', the same 96 GB device
    assert not any("sold with" in note for note in size_notes("GH200")), size_notes("GH200")
    assert {d.memory_bytes for d in devices_for_names("GH200 480GB")} == {97871 * 2**20}
    assert any("sold with 40 or 80 GB" in note for note in size_notes("A100"))


def test_vllm_on_a_catalogued_amd_part_is_not_called_uncatalogued():
    """MI300X is in the GPU catalog (gfx942): the note says the ROCm backends are not modelled, not that the part is
    unknown."""
    import contextlib
    import io

    from oomkit.cli import main  # the CLI in-process, for its JSON

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["check", "deepseek-ai/DeepSeek-R1-0528", "--engine", "vllm", "--gpu", "8x MI300X", "-tp", "8", "--json"])
    warnings = " ".join(json.loads(buf.getvalue())["estimate"]["warnings"])
    assert "not in the GPU catalog" not in warnings and "gfx942" in warnings and "ROCm" in warnings, warnings
