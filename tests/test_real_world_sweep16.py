"""Real users' input, sixteenth sweep: 30 names and commands as they are typed from Hugging Face model pages, the
Ollama library, LM Studio and the engines' docs, offline (the built-in catalog answers), with the GPU as people write
it. Derived and quantized repos (unsloth's UD-Q3_K_XL, bartowski's and lmstudio-community's GGUFs, TheBloke's GGUF,
mlx-community's -6bit and -qat-4bit, cpatonn's AWQ-4bit, Qwen's FP8, RedHatAI's NVFP4), Ollama tags with size and
quant suffixes (qwen3-coder:30b-a3b-q4_K_M, gemma3:12b-it-q8_0, llama3.2:3b-instruct-q4_K_M, a deepseek-r1 Qwen3
distill, qwen3-next:80b), pasted commands (llama-server -hf with a quantized KV cache, llama-cli -hf, vllm serve
with --gpu-memory-utilization / --max-num-seqs / tensor parallelism, python3 -m sglang.launch_server, sglang serve,
ollama run, lms load, mlx_lm.generate with a literal prompt, mlx_lm.server), the newest models (Qwen3.5 / Qwen3-Next,
GLM-4.7 and GLM-4.7-Flash, Kimi K2.5, MiniMax M2, Devstral Small 2, Nemotron 3 Nano, Qwen3-VL) and GPUs written
"4090 24gb", "RTX 4070 Laptop", "RTX 3050 4GB Laptop GPU", "M4 Max 128GB", "RX 7900 XTX", "Arc A770 16GB",
"GTX 1650 4GB", "A10G 24GB", "M2 16GB", "M1 8GB", "RX 6800", "H100 NVL", "8x B200", "Framework Desktop 128GB". None of
the names or commands is in an earlier sweep (checked by text in tests/test_real_world_sweep*.py).

Each expectation comes from the model's config (shared/reference/model_configs.jsonl, else the catalog entry's cited
source) and the engine's rules, not from oomkit's output: KV bytes a token = layers holding KV x KV heads x head size
x 2 (K and V) x 2 bytes (f16); only the full-attention layers of a hybrid (Qwen3.5 / Qwen3-Next: every 4th,
full_attention_interval 4) or of Gemma 3 (every 6th, sliding_window_pattern 6: 8 of 48 for 12B, 5 of 34 for 4B);
llama.cpp's q8_0 cache 34 bytes a 32-element block; GLM-4.7-Flash's MLA latent (kv_lora_rank 512 + qk_rope_head_dim
64) K-only in llama.cpp on its 47 layers; vLLM's MLA latent whole on each tensor-parallel rank (Kimi K2.5, 61 layers).
Ollama's default num_ctx by total VRAM (server/routes.go: >= 47 GiB 262144, >= 23 GiB 32768, else 4096), capped at
the trained context; vLLM's and SGLang's context the config's unless typed. Apple devices: Metal's default working
set (memory.py apple_default_gpu_share: 16 GiB -> 12713.12 MB on macOS 26, antirez/ds4#893). The A10G: 23028 MiB as
nvidia-smi prints it (the GPU catalog's cited figure).

Measured (2026-12-07), before this sweep's change: right 27, wrong 2, refused without saying what to give 1, crashed
0 (of 30). `--gpu "A10G 24GB"` was a modified card "NVIDIA A 24GB" of 24576 MiB ("NVIDIA A is sold with 24 GB, not 24
GB"): the "10G" of the model name was read as a size of 10 GB (hardware/catalog.py _split_size; a number written onto
a letter is now the model's own). `--gpu "Framework Desktop 128GB"` (a machine, not a GPU) was refused as "unknown GPU
'Framework Desktop 128GB'" with nothing to give instead; an unknown GPU's refusal now says to give its memory with
--vram (since read as the machine's chip, the Ryzen AI Max+ 395 with 128 GB; the refusal's example is now a machine
the catalog lacks, "Minisforum MS-A2 96GB"). After: right 29, wrong 1: `mlx_lm.generate --prompt "hi" --max-tokens 256` was sized at the model's trained context
(40,960 tokens: the prompt taken as filling it) and said not to fit an 8 GB M1, where mlx_lm's cache holds the few
prompt tokens and 256 generated ones. Since fixed (engines/mlx/args.py prompt_bound): the prompt's UTF-8 bytes plus
256 tokens for the chat template, 258 prompt tokens at most, a context of 514: right 30.

Also here (from review): the Python API reads a mlx-community name that only mlx_lm's --model reads (gpt-oss-20b
-MXFP4-Q8) as the CLI does (engines/cmdline.py read_as_model_flag, used by both).
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
    run_cli,
    sweep_tests,
)


# KV bytes a token at 2 bytes an element: layers x KV heads x head size x 2 (K and V) x 2
def _kv(layers: int, heads: int, dim: int) -> int:
    return layers * heads * dim * 2 * 2


MLA = 61 * 576 * 2  # Kimi K2.5: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64, per rank

# (case, the engine a name runs with; None for a command)
CASES_AND_ENGINES = [
    (Case('u1', 'https://huggingface.co/unsloth/Qwen3.5-122B-A10B-GGUF', 'model', '4090 24gb', None, RIGHT,
          'unsloth/Qwen3.5-122B-A10B-GGUF:UD-Q3_K_XL',
          # ~3.5 bits a weight of 122B: some 50 GB, twice the card; 12 full-attention layers of 48, 2 KV heads of 256
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5 122B-A10B', 'arch': 'qwen35moe', 'params': 122,
                     'format': 'UD-Q3_K_XL', 'kv_tok': _kv(12, 2, 256), 'fits': False, 'warn': '--fit',
                     'devices': [('RTX 4090', 24564)]})), 'llama.cpp'),
    (Case('b2', 'https://huggingface.co/bartowski/google_gemma-3-12b-it-GGUF', 'model', 'RTX 4070 Laptop', None, RIGHT,
          'bartowski/google_gemma-3-12b-it-GGUF:Q5_K_M',
          # Q5_K_M of 11.8B is ~8.4 GB, more than the laptop card's 8 GB
          ('reads', {'engine': 'llama.cpp', 'model': 'Gemma 3 12B', 'arch': 'gemma3', 'params': 11.8,
                     'format': 'Q5_K_M', 'kv_tok': _kv(8, 8, 256), 'fits': False,
                     'devices': [('RTX 4070 Laptop', 8192)]})), 'llama.cpp'),
    (Case('t3', 'https://huggingface.co/TheBloke/Llama-2-7B-Chat-GGUF', 'model', 'RTX 3050 4GB Laptop GPU', None,
          RIGHT, 'TheBloke/Llama-2-7B-Chat-GGUF:Q4_K_M',
          # 3.8 GiB of weights and 2 GiB of KV at 4096 tokens (32 layers, 32 KV heads of 128) on 4 GiB
          ('reads', {'engine': 'llama.cpp', 'model': 'Llama 2 7B Chat', 'arch': 'llama', 'params': 6.7,
                     'format': 'Q4_K_M', 'ctx': 4096, 'kv_tok': _kv(32, 32, 128), 'fits': False,
                     'devices': [('RTX 3050', 4096)]})), 'llama.cpp'),
    (Case('x4', 'https://huggingface.co/mlx-community/Qwen3.5-27B-6bit', 'model', 'M4 Max 128GB', None, RIGHT,
          'mlx-community/Qwen3.5-27B-6bit',
          # 16 full-attention layers of 64, 4 KV heads of 256; the trained 262,144 tokens
          ('reads', {'engine': 'mlx', 'model': 'Qwen3.5-27B', 'arch': 'qwen35', 'params': 27.3, 'format': 'mlx',
                     'ctx': 262144, 'kv_tok': _kv(16, 4, 256), 'fits': True})), 'mlx'),
    (Case('l5', 'https://huggingface.co/lmstudio-community/Qwen3-Coder-30B-A3B-Instruct-GGUF', 'model', 'RX 7900 XTX',
          None, RIGHT, 'lmstudio-community/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3-Coder 30B-A3B', 'arch': 'qwen3moe', 'params': 30.5,
                     'format': 'Q4_K_M', 'kv_tok': _kv(48, 4, 128), 'fits': True,
                     'devices': [('RX 7900 XTX', 24560)]})), 'llama.cpp'),
    (Case('a6', 'https://huggingface.co/cpatonn/Qwen3-Next-80B-A3B-Instruct-AWQ-4bit', 'model', 'RTX A6000', None,
          RIGHT, 'cpatonn/Qwen3-Next-80B-A3B-Instruct-AWQ-4bit',
          # 4-bit experts of 81.3B (~43 GB) in 0.9 x 48 GB: too little KV for the config's 262,144 tokens
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next-80B-A3B-Instruct-AWQ', 'arch': 'qwen3next', 'params': 81.3,
                     'ctx': 262144, 'fits': False, 'warn': 'vLLM refuses to start'})), 'vllm'),
    (Case('f7', 'https://huggingface.co/Qwen/Qwen3-8B-FP8', 'model', 'L4', None, RIGHT,
          'Qwen/Qwen3-8B-FP8',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3 8B', 'arch': 'qwen3', 'params': 8.2, 'format': 'fp8',
                     'ctx': 40960, 'kv_tok': _kv(36, 8, 128), 'fits': True})), 'vllm'),
    (Case('n8', 'https://huggingface.co/RedHatAI/Qwen3-32B-NVFP4', 'model', 'RTX PRO 6000 Blackwell', None, RIGHT,
          'RedHatAI/Qwen3-32B-NVFP4',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-32B-NVFP4', 'arch': 'qwen3', 'params': 32.8, 'format': 'nvfp4',
                     'ctx': 40960, 'kv_tok': _kv(64, 8, 128), 'fits': True,
                     'devices': [('RTX PRO 6000', 97887)]})), 'vllm'),
    (Case('o9', 'https://ollama.com/library/qwen3-coder:30b-a3b-q4_K_M', 'model', 'RTX 3090', None, RIGHT,
          'qwen3-coder:30b-a3b-q4_K_M',
          # 24 GiB: num_ctx 32768
          ('reads', {'engine': 'ollama', 'model': 'Qwen3-Coder 30B-A3B', 'arch': 'qwen3moe', 'format': 'Q4_K_M',
                     'ctx': 32768, 'kv_tok': _kv(48, 4, 128), 'fits': True})), 'ollama'),
    (Case('o10', 'https://ollama.com/library/gemma3:12b-it-q8_0', 'model', 'Arc A770 16GB', None, RIGHT,
          'gemma3:12b-it-q8_0',
          ('reads', {'engine': 'ollama', 'model': 'Gemma 3 12B', 'arch': 'gemma3', 'format': 'Q8_0', 'ctx': 4096,
                     'kv_tok': _kv(8, 8, 256), 'fits': True, 'devices': [('Arc A770', 16384)]})), 'ollama'),
    (Case('o11', 'https://ollama.com/library/llama3.2:3b-instruct-q4_K_M', 'model', 'GTX 1650 4GB', None, RIGHT,
          'llama3.2:3b-instruct-q4_K_M',
          ('reads', {'engine': 'ollama', 'model': 'Llama 3.2 3B', 'arch': 'llama', 'format': 'Q4_K_M', 'ctx': 4096,
                     'kv_tok': _kv(28, 8, 128), 'fits': True, 'devices': [('GTX 1650', 4096)]})), 'ollama'),
    (Case('o12', 'https://ollama.com/library/deepseek-r1:8b-0528-qwen3-q4_K_M', 'model', 'RTX 4060 Laptop 8GB', None,
          RIGHT, 'deepseek-r1:8b-0528-qwen3-q4_K_M',
          ('reads', {'engine': 'ollama', 'model': 'DeepSeek-R1-0528-Qwen3-8B', 'arch': 'qwen3', 'format': 'Q4_K_M',
                     'ctx': 4096, 'kv_tok': _kv(36, 8, 128), 'fits': True,
                     'devices': [('RTX 4060 Laptop', 8192)]})), 'ollama'),
    (Case('o13', 'https://ollama.com/library/qwen3-next:80b', 'model', 'M3 Ultra 512GB', None, RIGHT,
          'qwen3-next:80b',
          # Metal's working set of 512 GB is over 47 GiB: num_ctx 262144, the model's own; 12 of 48 layers hold KV
          ('reads', {'engine': 'ollama', 'model': 'Qwen3-Next 80B-A3B', 'arch': 'qwen3next', 'ctx': 262144,
                     'kv_tok': _kv(12, 2, 256), 'fits': True})), 'ollama'),
    (Case('b14', 'https://huggingface.co/bartowski/mistralai_Devstral-Small-2-24B-Instruct-2512-GGUF', 'model',
          'RTX 5080 16GB', None, RIGHT, 'bartowski/mistralai_Devstral-Small-2-24B-Instruct-2512-GGUF:Q4_K_M',
          # 40 layers, 8 KV heads of 128: the 262,144 trained tokens do not fit 16 GB beside ~14 GB of weights
          ('reads', {'engine': 'llama.cpp', 'model': 'Devstral Small 2', 'arch': 'mistral3', 'params': 24,
                     'format': 'Q4_K_M', 'kv_tok': _kv(40, 8, 128), 'warn': '--fit'})), 'llama.cpp'),
    (Case('v15', 'https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct-FP8', 'model', 'H100 80GB', None, RIGHT,
          'Qwen/Qwen3-VL-8B-Instruct-FP8',
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-8B', 'arch': 'qwen3vl', 'format': 'fp8', 'ctx': 262144,
                     'kv_tok': _kv(36, 8, 128), 'fits': True})), 'vllm'),
    (Case('c16', 'https://huggingface.co/bartowski/Qwen_Qwen3-14B-GGUF', 'cmd', 'RTX 4070 Ti Super', None, RIGHT,
          'llama-server -hf bartowski/Qwen_Qwen3-14B-GGUF:Q5_K_M -c 16384 -ngl 99 -fa on -ctk q8_0 -ctv q8_0',
          # q8_0: 34 bytes a block of 32 elements; 40 layers, 8 KV heads of 128
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 14B', 'arch': 'qwen3', 'format': 'Q5_K_M', 'ctx': 16384,
                     'kv_tok': 40 * 8 * 128 * 2 * 34 // 32, 'fits': True,
                     'devices': [('RTX 4070 Ti SUPER', 16376)]})), None),
    (Case('c17', 'https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8', 'cmd', 'RTX 5090', None, RIGHT,
          'vllm serve Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8 --max-model-len 65536 --gpu-memory-utilization 0.92',
          # 30.5B at a byte each is 28.4 GiB; 0.92 x 31.8 GiB leaves under 1 GiB for activations and KV
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Coder-30B-A3B-Instruct-FP8', 'arch': 'qwen3moe',
                     'format': 'fp8', 'ctx': 65536, 'settings': {'gpu_memory_utilization': 0.92},
                     'fits': False})), None),
    (Case('c18', 'https://docs.vllm.ai/projects/recipes/en/latest/OpenAI/GPT-OSS.html', 'cmd', 'RTX 4090', None, RIGHT,
          'vllm serve openai/gpt-oss-20b --max-num-seqs 16 --max-model-len 32768',
          ('reads', {'engine': 'vllm', 'model': 'gpt-oss 20B', 'format': 'mxfp4', 'ctx': 32768,
                     'settings': {'max_num_seqs': 16}, 'fits': True})), None),
    (Case('c19', 'https://huggingface.co/Qwen/Qwen3-4B-Instruct-2507', 'cmd', 'A10G 24GB', None, FIXED,
          'python3 -m sglang.launch_server --model-path Qwen/Qwen3-4B-Instruct-2507 --mem-fraction-static 0.8 '
          '--context-length 32768',
          # AWS g5's A10G: 23028 MiB as nvidia-smi prints it (24 GB is the size it is sold with)
          ('reads', {'engine': 'sglang', 'model': 'Qwen3 4B Instruct 2507', 'arch': 'qwen3', 'ctx': 32768,
                     'settings': {'mem_fraction_static': 0.8}, 'kv_tok': _kv(36, 8, 128), 'fits': True,
                     'devices': [('A10G', 23028)], 'no_warn': 'modified'})), None),
    (Case('c20', 'https://huggingface.co/zai-org/GLM-4.7', 'cmd', '8x H200', None, RIGHT,
          'sglang serve --model-path zai-org/GLM-4.7 --tp 8 --trust-remote-code',
          # 92 layers hold KV (the MTP layer none), 8 KV heads of 128 over 8 ranks
          ('reads', {'engine': 'sglang', 'model': 'GLM-4.7', 'arch': 'glm4moe', 'params': 358, 'ctx': 202752,
                     'settings': {'tp_size': 8}, 'kv_tok': _kv(92, 8, 128), 'fits': True})), None),
    (Case('c21', 'https://ollama.com/library/gemma3:4b', 'cmd', 'M2 16GB', None, RIGHT,
          'ollama run gemma3:4b',
          # 16 GiB: Metal's 12713.12 MB = 12124 MiB, num_ctx 4096; 5 global layers of 34, 4 KV heads of 256
          ('reads', {'engine': 'ollama', 'model': 'Gemma 3 4B', 'arch': 'gemma3', 'ctx': 4096,
                     'kv_tok': _kv(5, 4, 256), 'fits': True, 'devices': [('M2 16GB', 12124)]})), None),
    (Case('c22', 'https://lmstudio.ai/docs/cli/load', 'cmd', 'RTX 3060 12GB', None, RIGHT,
          'lms load qwen/qwen3-14b --context-length 8192 --gpu max',
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 14B', 'arch': 'qwen3', 'ctx': 8192,
                     'kv_tok': _kv(40, 8, 128), 'devices': [('RTX 3060', 12288)]})), None),
    (Case('c23', 'https://huggingface.co/mlx-community/Qwen3-1.7B-4bit', 'cmd', 'M1 8GB', None, FIXED,
          'mlx_lm.generate --model mlx-community/Qwen3-1.7B-4bit --prompt "hi" --max-tokens 256',
          # a two-letter prompt and 256 tokens: a few hundred tokens of KV (28 layers, 8 KV heads of 128) beside
          # ~1 GB of 4-bit weights
          ('reads', {'engine': 'mlx', 'model': 'Qwen3 1.7B', 'arch': 'qwen3', 'kv_tok': _kv(28, 8, 128),
                     'ctx_at_most': 1024, 'fits': True})), None),
    (Case('c24', 'https://huggingface.co/mlx-community/gemma-3-12b-it-qat-4bit', 'cmd', 'M3 Max 36GB', None, RIGHT,
          'mlx_lm.server --model mlx-community/gemma-3-12b-it-qat-4bit',
          ('reads', {'engine': 'mlx', 'model': 'gemma-3-12b-it', 'arch': 'gemma3', 'ctx': 131072,
                     'settings': {'q_bits': 4}, 'fits': True})), None),
    (Case('c25', 'https://huggingface.co/ggml-org/gemma-3-12b-it-GGUF', 'cmd', 'RX 6800', None, RIGHT,
          'llama-cli -hf ggml-org/gemma-3-12b-it-GGUF -ngl 99',
          # -hf without a tag: llama.cpp's default Q4_K_M; --fit trims the 131,072 trained tokens to the 16 GB card
          ('reads', {'engine': 'llama.cpp', 'model': 'Gemma 3 12B', 'arch': 'gemma3', 'format': 'Q4_K_M',
                     'kv_tok': _kv(8, 8, 256), 'fits': True, 'warn': '--fit',
                     'devices': [('RX 6800', 16384)]})), None),
    (Case('c26', 'https://huggingface.co/MiniMaxAI/MiniMax-M2', 'cmd', '2x RTX PRO 6000', None, RIGHT,
          'vllm serve MiniMaxAI/MiniMax-M2 --tensor-parallel-size 2 --trust-remote-code',
          # 229B in FP8: ~107 GiB a rank on 96 GB cards
          ('reads', {'engine': 'vllm', 'model': 'MiniMax M2', 'params': 229, 'format': 'fp8', 'ctx': 196608,
                     'settings': {'tensor_parallel_size': 2}, 'fits': False,
                     'warn': 'CUDA out of memory while loading the model'})), None),
    (Case('c27', 'https://huggingface.co/unsloth/GLM-4.7-Flash-GGUF', 'cmd', '3090 Ti', None, RIGHT,
          'llama-server -hf unsloth/GLM-4.7-Flash-GGUF:Q4_K_M -c 32768 -ngl 99',
          ('reads', {'engine': 'llama.cpp', 'model': 'GLM-4.7-Flash', 'arch': 'deepseek2', 'format': 'Q4_K_M',
                     'ctx': 32768, 'kv_tok': 47 * 576 * 2, 'fits': True})), None),
    (Case('c28', 'https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', 'cmd', 'H100 NVL', None, RIGHT,
          'vllm serve nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 --trust-remote-code --max-model-len 262144',
          # 63 GB of bfloat16 and 6 attention layers' KV on a 94 GB card
          ('reads', {'engine': 'vllm', 'model': 'Nemotron 3 Nano', 'arch': 'nemotron_h_moe', 'params': 31.6,
                     'ctx': 262144, 'fits': True, 'devices': [('H100 NVL', 95830)]})), None),
    (Case('c30', 'https://huggingface.co/moonshotai/Kimi-K2.5', 'cmd', '8x B200', None, RIGHT,
          'vllm serve moonshotai/Kimi-K2.5 -tp 8 --trust-remote-code',
          ('reads', {'engine': 'vllm', 'model': 'Kimi K2.5', 'params': 1026, 'ctx': 262144, 'kv_tok': 8 * MLA,
                     'settings': {'tensor_parallel_size': 8}, 'fits': True})), None),
    (Case('g31', 'https://frame.work/desktop', 'cmd', 'Framework Desktop 128GB', None, FIXED,
          'llama-server -hf unsloth/Qwen3.5-35B-A3B-GGUF:Q8_0 -c 131072 -ngl 99',
          # a machine's name: Framework sells the 128 GB Desktop with the Ryzen AI Max+ 395 (frame.work/desktop), read
          # as that chip with 128 GB (131072 MiB); a machine the catalog lacks is refused below
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3.5', 'ctx': 131072,
                     'devices': [('AMD Ryzen AI Max+ 395 128GB', 128 * 1024)]})), None),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}


def check(c: Case) -> None:
    check_reading_case(c, ENGINE[c.id])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c.id for c in CASES}) == 30 and len({c.url for c in CASES}) == 30
    assert sum(c.kind == "cmd" for c in CASES) == 15 and sum(c.kind == "model" for c in CASES) == 15
    assert sum(c.status == FIXED for c in CASES) == 3 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 27
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- the GPU words of this sweep, as the catalog reads them (hardware/catalog.py) ----

def test_a_number_written_onto_a_letter_is_the_models_own():
    from oomkit.hardware.catalog import devices_for_names, size_notes  # the catalog, as --gpu reads it

    # "A10G" is NVIDIA's A10G (AWS g5), not an "A" of 10 GB: with its size written after it, the same card
    for text in ("A10G", "A10G 24GB", "a10g 24gb", "NVIDIA A10G"):
        (d,) = devices_for_names(text)
        assert d.name == "NVIDIA A10G" and d.memory_bytes == 23028 * 2**20 and not size_notes(text), (text, d)
    assert [d.name for d in devices_for_names("4x A10G 24GB")] == ["NVIDIA A10G"] * 4
    # a size it is not sold with is still a modified card, named after the whole model
    (d,) = devices_for_names("A10G 48GB")
    assert d.name == "NVIDIA A10G 48GB" and d.memory_bytes == 48 * 2**30
    # sizes written after a separator are read as before
    assert devices_for_names("RTX 3060 12G")[0].memory_bytes == 12 * 2**30
    assert devices_for_names("H100-80GB")[0].memory_bytes == 81559 * 2**20


def test_an_unknown_gpu_refusal_says_what_to_give():
    import pytest

    from oomkit.errors import OomkitError
    from oomkit.hardware.catalog import devices_for_names  # the catalog, as --gpu reads it

    with pytest.raises(OomkitError, match=r"^unknown GPU 'Minisforum MS-A2 96GB': not in the catalog; give its "
                                          r"memory with --vram SIZE$"):
        devices_for_names("Minisforum MS-A2 96GB")
    with pytest.raises(OomkitError, match=r"did you mean .*\? If it is none of these, give its memory with --vram"):
        devices_for_names("Quadro RTX 3000")
    rc, _, err = run_cli("check", "qwen3:8b", "--gpu", "Minisforum MS-A2 96GB")
    assert rc == 2 and "--vram SIZE" in err, err


# ---- the Python API reads an mlx-community name as the CLI does (engines/cmdline.py read_as_model_flag) ----

def test_the_python_api_reads_an_mlx_name_only_mlx_lm_reads_as_the_cli_does():
    """mlx-community/gpt-oss-20b-MXFP4-Q8: openai's MXFP4 checkpoint converted with mlx_lm.convert -q --q-bits 8
    (ml-explore/mlx-lm#605). `oomkit check NAME --engine mlx` read it as mlx_lm's --model; oomkit.estimate(NAME,
    "mlx") was "unknown model"."""
    import oomkit

    name = "mlx-community/gpt-oss-20b-MXFP4-Q8"
    rc, out, err = run_cli("estimate", name, "--engine", "mlx", "--vram", "48GiB", "--json")
    assert rc == 0, err
    cli = json.loads(out)
    api = oomkit.estimate(name, "mlx", vram="48GiB").to_dict()
    assert api["model"]["name"] == cli["model"]["name"] == "gpt-oss 20B"
    assert api["settings"]["q_bits"] == cli["settings"]["q_bits"] == 8
    assert api["weights_bytes"] == cli["weights_bytes"] and api["total_bytes"] == cli["total_bytes"]
    # an option says the bits over the name, as --q-bits does after the name in the command form
    assert oomkit.estimate(name, "mlx", vram="48GiB", q_bits=4).to_dict()["settings"]["q_bits"] == 4
    rc, out, err = run_cli("estimate", "--vram", "48GiB", "--json", "--", "mlx_lm.generate", "--model", name,
                           "--q-bits", "4")
    assert rc == 0 and json.loads(out)["weights_bytes"] == oomkit.estimate(
        name, "mlx", vram="48GiB", q_bits=4).to_dict()["weights_bytes"], err
    # a name the catalog reads is kept as typed
    assert oomkit.estimate("openai/gpt-oss-20b", "mlx", vram="48GiB").to_dict()["settings"]["q_bits"] is None
