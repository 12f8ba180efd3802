"""Real users' input, seventeenth sweep: 30 names and commands as they are typed from Hugging Face model pages, the
Ollama library, the unsloth docs, project READMEs and issue threads, offline (the built-in catalog answers), with the
GPU as people write it. Derived and quantized repos (bartowski's, unsloth's UD-Q2_K_XL and UD-Q4_K_XL,
lmstudio-community's GGUF, mlx-community's -4bit, Qwen's -AWQ and -FP8, hugging-quants' AWQ-INT4, huihui-ai's and
mlabonne's -abliterated, Z.ai's -FP8), Ollama tags (magistral, nemotron-3-nano, devstral-small-2, qwen3-vl,
ministral-3:8b, qwen3.6:latest, qwen3.5:4b, glm-4.7-flash:q8_0), pasted commands (./llama.cpp/llama-cli -hf from the
unsloth docs, vllm serve with the Mistral loaders and tensor parallelism, python -m sglang.launch_server, ollama run),
the newest models (Qwen3.6, Qwen3.5, Qwen3-Next, GLM-4.5-Air / GLM-4.5V FP8, Magistral Small 2509, Nemotron 3 Nano,
Devstral Small 2, Ministral 3, GLM-4.7-Flash, DeepSeek-V3.1) and GPUs written "7900XTX", "2x3090", "M4 Pro 64GB",
"M2 Ultra 192GB", "4090", "3090", "H200", "RTX PRO 6000", "4060 Ti 16GB", "Strix Halo 128GB", "DGX Spark", "R9700",
"2x 4090", "2x H100", "Jetson AGX Thor", "Jetson Orin NX 16GB", "Apple M5 MacBook Air 16GB", "m5 32g". None of the
names, commands or sources is in an earlier test (checked by text in tests/).

Each expectation comes from the model's config (shared/reference/model_configs.jsonl, else the catalog entry's cited
source), the engine's rules and the thread, not from oomkit's output: KV bytes a token = layers holding KV x KV heads x
head size x 2 (K and V) x 2 bytes (f16); only the full-attention layers of a hybrid (Qwen3.5 / 3.6 / Qwen3-Next: every
4th) or of Gemma 3 (every 6th: 10 of 62 for 27B) or of gpt-oss (every 2nd: 18 of 36), the 6 attention layers of
Nemotron 3 Nano; GLM-4.7-Flash's MLA latent (kv_lora_rank 512 + qk_rope_head_dim 64) K-only on its 47 layers. Ollama's
default num_ctx by total VRAM (server/routes.go: >= 47 GiB 262144, >= 23 GiB 32768, else 4096), capped at the trained
context; vLLM's and SGLang's context the config's unless typed. Apple devices: Metal's default working set (16 GB ->
12124 MiB, 32 GB -> 25559 MiB on macOS 26).

Measured (2026-12-07), before this sweep's change: right 25, wrong 0, refused a right input 5, crashed 0 (of 30).
- `vllm serve zai-org/GLM-4.5-Air-FP8 --tensor-parallel-size 2` on 2 H100 (the README's GLM-4.5-Air FP8 H100 x 2) and
  `vllm serve zai-org/GLM-4.5V-FP8 --tensor-parallel-size 2` (zai-org/GLM-V#116: two H100 can serve it, "可以") were
  refused with vLLM's block-FP8 check ("Weight output_partition_size = 5472 is not divisible by weight quantization
  block_n = 128"): the name's "-FP8" was read as 128 x 128 block FP8, as Qwen's and DeepSeek's are. Z.ai's GLM-4.x FP8
  releases are llm-compressor's compressed-tensors FP8 per output channel (HabanaAI/vllm-hpu-extension#350,
  HabanaAI/vllm-fork#1837, zai-org/GLM-V#178's traceback through compressed_tensors.py): no block, no such check
  (model/names.py _fp8). GLM-5's FP8 stays block (catalog variant zai-org/GLM-5.1-FP8).
- `--gpu R9700` (AMD Radeon AI PRO R9700, 32 GB, gfx1201) and `--gpu "Jetson AGX Thor"` (128 GB unified, sm_110)
  were unknown GPUs: added to the GPU catalog with the RTX PRO 4000 / 4500 / 5000 Blackwell (the 4500 at the 32623
  MiB a driver prints, 0xSero/local-ai-registry#56).
- `--gpu "Apple M5 MacBook Air 16GB"` (ollama/ollama#17452 writes "an Apple M5 MacBook Air") was unknown: the Mac
  written after its chip is now dropped as the Mac written before it was (hardware/catalog.py _MACS_AFTER).
After: right 30.
"""

from __future__ import annotations

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


HF = "https://huggingface.co/"

# (case, the engine a name runs with; None for a command)
CASES_AND_ENGINES = [
    (Case('m1', HF + 'bartowski/Qwen_Qwen3-30B-A3B-Thinking-2507-GGUF', 'model', '7900XTX', None, RIGHT,
          'bartowski/Qwen_Qwen3-30B-A3B-Thinking-2507-GGUF',
          # no tag: Q4_K_M, ~18.6 GB of 30.5B, fits 24 GB; the trained 262,144 tokens' KV (24 GiB) does not: --fit trims
          ('reads', {'engine': 'llama.cpp', 'model': 'Qwen3 30B-A3B Thinking 2507', 'arch': 'qwen3moe', 'params': 30.5,
                     'format': 'Q4_K_M', 'kv_tok': _kv(48, 4, 128), 'fits': True, 'warn': '--fit',
                     'devices': [('RX 7900 XTX', 24560)]})), 'llama.cpp'),
    (Case('m2', HF + 'bartowski/Llama-3.3-70B-Instruct-GGUF', 'model', '2x3090', None, RIGHT,
          'bartowski/Llama-3.3-70B-Instruct-GGUF:Q4_K_M',
          # 42.5 GB of Q4_K_M split over two 24 GB cards; 131,072 tokens (40 GiB of KV) trimmed by --fit
          ('reads', {'engine': 'llama.cpp', 'model': 'Llama 3.3 70B', 'arch': 'llama', 'params': 70.6,
                     'format': 'Q4_K_M', 'kv_tok': _kv(80, 8, 128), 'fits': True, 'warn': '--fit',
                     'devices': [('RTX 3090', 24576), ('RTX 3090', 24576)]})), 'llama.cpp'),
    (Case('m3', HF + 'mlx-community/Qwen3-30B-A3B-Instruct-2507-4bit', 'model', 'M4 Pro 64GB', None, RIGHT,
          'mlx-community/Qwen3-30B-A3B-Instruct-2507-4bit',
          # ~17 GB of 4-bit weights and 24 GiB of KV at 262,144 tokens in Metal's working set of 64 GB
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-30B-A3B-Instruct-2507', 'arch': 'qwen3moe', 'params': 30.5,
                     'ctx': 262144, 'kv_tok': _kv(48, 4, 128), 'fits': True})), 'mlx'),
    (Case('m4', HF + 'mlx-community/Llama-3.3-70B-Instruct-4bit', 'model', 'M2 Ultra 192GB', None, RIGHT,
          'mlx-community/Llama-3.3-70B-Instruct-4bit',
          # ~40 GB of 4-bit weights and 40 GiB of KV at 131,072 tokens in Metal's working set of 192 GB
          ('reads', {'engine': 'mlx', 'model': 'Llama-3.3-70B-Instruct', 'arch': 'llama', 'params': 70.6,
                     'ctx': 131072, 'kv_tok': _kv(80, 8, 128), 'fits': True})), 'mlx'),
    (Case('m5', HF + 'Qwen/Qwen2.5-32B-Instruct-AWQ', 'model', '4090', None, RIGHT,
          'Qwen/Qwen2.5-32B-Instruct-AWQ',
          # ~19 GB of int4 weights in 0.9 x 24 GiB: one request of the config's 32,768 tokens needs 8 GiB of KV
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-32B-Instruct-AWQ', 'arch': 'qwen2', 'params': 32.8,
                     'format': 'awq', 'ctx': 32768, 'kv_tok': _kv(64, 8, 128), 'fits': False,
                     'warn': 'vLLM refuses to start'})), 'vllm'),
    (Case('m6', HF + 'huihui-ai/Qwen3-8B-abliterated', 'model', 'RTX 3060 12GB', None, RIGHT,
          'huihui-ai/Qwen3-8B-abliterated',
          # Qwen3-8B's shapes in bfloat16: 16.4 GB of weights on a 12 GB card
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-8B-abliterated', 'arch': 'qwen3', 'params': 8.2,
                     'format': 'bfloat16', 'fits': False, 'warn': 'CUDA out of memory while loading'})), 'vllm'),
    (Case('m7', HF + 'mlabonne/gemma-3-27b-it-abliterated-GGUF', 'model', '3090', None, RIGHT,
          'mlabonne/gemma-3-27b-it-abliterated-GGUF',
          # Q4_K_M ~16.5 GB fits 24 GB; 10 global layers of 62, 16 KV heads of 128; --fit trims 131,072 tokens
          ('reads', {'engine': 'llama.cpp', 'model': 'gemma-3-27b-it', 'arch': 'gemma3', 'params': 27.4,
                     'format': 'Q4_K_M', 'kv_tok': _kv(10, 16, 128), 'fits': True, 'warn': '--fit'})), 'llama.cpp'),
    (Case('m8', HF + 'hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4', 'model', 'H100 80GB', None, RIGHT,
          'hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4',
          # one request of 131,072 tokens needs 40 GiB of KV; ~37 GiB of int4 weights in 0.9 x 79 GiB leave about 30
          ('reads', {'engine': 'vllm', 'model': 'Meta-Llama-3.1-70B-Instruct-AWQ', 'arch': 'llama', 'params': 70.6,
                     'format': 'awq', 'ctx': 131072, 'kv_tok': _kv(80, 8, 128), 'fits': False,
                     'warn': 'vLLM refuses to start'})), 'vllm'),
    (Case('m9', HF + 'Qwen/Qwen3-Next-80B-A3B-Instruct-FP8', 'model', 'H200', None, RIGHT,
          'Qwen/Qwen3-Next-80B-A3B-Instruct-FP8',
          # ~81 GB of FP8 in 0.9 x 141 GB; 12 full-attention layers of 48 hold KV
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next-80B-A3B-Instruct-FP8', 'arch': 'qwen3next',
                     'params': 81.3, 'format': 'fp8', 'ctx': 262144, 'fits': True})), 'vllm'),
    (Case('m10', HF + 'unsloth/DeepSeek-V3.1-GGUF', 'model', 'RTX PRO 6000', None, RIGHT,
          'unsloth/DeepSeek-V3.1-GGUF:UD-Q2_K_XL',
          # ~250 GB of 2-bit-ish weights on a 96 GB card: --fit moves experts to the CPU, no fit on the GPU
          ('reads', {'engine': 'llama.cpp', 'model': 'DeepSeek-V3.1', 'arch': 'deepseek2', 'params': 671,
                     'format': 'UD-Q2_K_XL', 'fits': False, 'warn': 'split with the CPU'})), 'llama.cpp'),
    (Case('m11', HF + 'unsloth/Mistral-Small-3.2-24B-Instruct-2506-GGUF', 'model', '4060 Ti 16GB', None, RIGHT,
          'unsloth/Mistral-Small-3.2-24B-Instruct-2506-GGUF:Q4_K_M',
          # 14.3 GB of Q4_K_M on 16 GB: a few thousand tokens of 40 layers x 8 KV heads x 128 (--fit trims 131,072)
          ('reads', {'engine': 'llama.cpp', 'model': 'Mistral Small 3.2', 'params': 24, 'format': 'Q4_K_M',
                     'kv_tok': _kv(40, 8, 128), 'fits': True, 'warn': '--fit',
                     'devices': [('RTX 4060 Ti 16GB', 16380)]})), 'llama.cpp'),
    (Case('m12', HF + 'unsloth/GLM-4.5-Air-GGUF', 'model', 'Strix Halo 128GB', None, RIGHT,
          'unsloth/GLM-4.5-Air-GGUF:Q4_K_M',
          # ~70 GB of Q4_K_M and 23 GiB of KV at 131,072 tokens (46 layers, the MTP one none) in 128 GB
          ('reads', {'engine': 'llama.cpp', 'model': 'GLM-4.5-Air', 'arch': 'glm4moe', 'params': 110,
                     'format': 'Q4_K_M', 'ctx': 131072, 'kv_tok': _kv(46, 8, 128), 'fits': True,
                     'devices': [('Ryzen AI Max+ 395 128GB', 131072)]})), 'llama.cpp'),
    (Case('m13', HF + 'mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit', 'model', 'M4 Max 128GB', None, RIGHT,
          'mlx-community/Qwen3-Next-80B-A3B-Instruct-4bit',
          # ~45 GB of 4-bit weights; 12 full-attention layers of 48, 2 KV heads of 256
          ('reads', {'engine': 'mlx', 'model': 'Qwen3-Next-80B-A3B-Instruct', 'arch': 'qwen3next', 'params': 81.3,
                     'ctx': 262144, 'kv_tok': _kv(12, 2, 256), 'fits': True})), 'mlx'),
    (Case('m14', HF + 'lmstudio-community/gpt-oss-120b-GGUF', 'model', 'DGX Spark', None, RIGHT,
          'lmstudio-community/gpt-oss-120b-GGUF',
          # MXFP4 experts, ~63 GB, and 131,072 tokens on 18 full-attention layers of 36 (8 KV heads of 64) in 128 GB
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 120B', 'arch': 'gpt-oss', 'params': 116.8,
                     'format': 'MXFP4', 'ctx': 131072, 'kv_tok': _kv(18, 8, 64), 'fits': True,
                     'devices': [('GB10', 125081)]})), 'llama.cpp'),
    (Case('m15', 'https://github.com/Tanguille/cluster/pull/3177', 'model', 'R9700', None, FIXED,
          'Qwen/Qwen3.6-27B-FP8',
          # "on 32 GB, FP8 weights (30.9 GB) leave no room for the KV pool" (the PR, on a Radeon AI PRO R9700)
          ('reads', {'engine': 'vllm', 'model': 'Qwen3.6-27B-FP8', 'arch': 'qwen35', 'params': 27.3, 'format': 'fp8',
                     'fits': False, 'devices': [('Radeon AI PRO R9700', 32768)]})), 'vllm'),
    (Case('c1', 'https://docs.unsloth.ai/models/magistral-how-to-run-and-fine-tune', 'cmd', 'RTX 4090', None, RIGHT,
          './llama.cpp/llama-cli -hf unsloth/Magistral-Small-2509-GGUF:UD-Q4_K_XL --jinja --temp 0.7 --top-k -1 '
          '--top-p 0.95 -ngl 99',
          # ~14 GB of 4-bit weights; 131,072 tokens of 40 layers x 8 KV heads x 128 (20 GiB) trimmed by --fit
          ('reads', {'engine': 'llama.cpp', 'model': 'Magistral Small 2509', 'params': 24, 'format': 'UD-Q4_K_XL',
                     'kv_tok': _kv(40, 8, 128), 'fits': True, 'warn': '--fit',
                     'devices': [('RTX 4090', 24564)]})), None),
    (Case('c2', 'https://docs.unsloth.ai/basics/gpt-oss-how-to-run-and-fine-tune', 'cmd', 'RTX 4070 12GB', None,
          RIGHT, './llama.cpp/llama-cli -hf unsloth/gpt-oss-20b-GGUF:F16 --jinja -ngl 99 --threads -1 --ctx-size 16384 '
          '--temp 1.0 --top-p 1.0 --top-k 0',
          # the F16 file (MXFP4 experts, the rest 16-bit) is 13.8 GB, over 12 GB with every layer on the GPU
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 20B', 'arch': 'gpt-oss', 'params': 20.9, 'format': 'F16',
                     'ctx': 16384, 'kv_tok': _kv(12, 8, 64), 'fits': False})), None),
    (Case('c3', HF + 'mistralai/Magistral-Small-2509', 'cmd', '2x 4090', None, RIGHT,
          'vllm serve mistralai/Magistral-Small-2509 --reasoning-parser mistral --tokenizer_mode mistral '
          '--config_format mistral --load_format mistral --tool-call-parser mistral --enable-auto-tool-choice '
          '--tensor-parallel-size 2',
          # 24B in bfloat16 (the card: "~55 GB of GPU RAM"): 22.4 GiB a rank on 24 GB cards, out of memory by the
          # profile run at the latest (the card names no phase; GeForce cards keep NCCL's buffers in host memory)
          ('reads', {'engine': 'vllm', 'model': 'Magistral Small 2509', 'params': 24, 'format': 'bfloat16',
                     'ctx': 131072, 'settings': {'tensor_parallel_size': 2}, 'fits': False,
                     'warn': 'vLLM runs out of memory'})), None),
    (Case('c4', HF + 'Qwen/Qwen3-30B-A3B-Instruct-2507-FP8', 'cmd', '4090', None, RIGHT,
          'python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 --context-length 262144',
          # 30.5B at a byte each (~31 GB) on a 24 GB card
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-30B-A3B-Instruct-2507-FP8', 'arch': 'qwen3moe',
                     'params': 30.5, 'format': 'fp8', 'ctx': 262144, 'fits': False,
                     'warn': 'CUDA out of memory'})), None),
    (Case('c5', 'https://github.com/zai-org/GLM-4.5/blob/main/README.md', 'cmd', '2x H100', None, FIXED,
          'vllm serve zai-org/GLM-4.5-Air-FP8 --tensor-parallel-size 2 --tool-call-parser glm45 --reasoning-parser '
          'glm45 --enable-auto-tool-choice --served-model-name glm-4.5-air',
          # the README's vLLM line ("Both BF16 and FP8 can be started with the following code") with the FP8 repo on
          # the two H100 its table gives GLM-4.5-Air FP8; ~110 GB of channel FP8, 55 GB a rank
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.5-Air-FP8', 'arch': 'glm4moe', 'params': 106,
                     'format': 'ct-float', 'ctx': 131072, 'settings': {'tensor_parallel_size': 2},
                     'kv_tok': _kv(46, 8, 128), 'fits': True})), None),
    (Case('c6', 'https://github.com/zai-org/GLM-V/issues/116', 'cmd', '2x H100', None, FIXED,
          'vllm serve zai-org/GLM-4.5V-FP8 --tensor-parallel-size 2',
          # "两张h100能部署glm-4.5V的fp8版本不" (can two H100 serve GLM-4.5V FP8?), a maintainer: "可以" (yes)
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.5V-FP8', 'arch': 'glm4moe', 'format': 'ct-float',
                     'ctx': 65536, 'settings': {'tensor_parallel_size': 2}, 'fits': True})), None),
    (Case('c7', 'https://github.com/NVIDIA-AI-IOT/jetson-ai-lab/pull/420', 'cmd', 'Jetson AGX Thor', None, FIXED,
          'vllm serve Qwen/Qwen3.5-0.8B --gpu-memory-utilization 0.8 --enable-prefix-caching --reasoning-parser qwen3 '
          '--enable-auto-tool-choice',
          # verified on a Jetson AGX Thor developer kit (the PR): 0.8B on 128 GB of unified memory
          ('reads', {'engine': 'vllm', 'model': 'Qwen3.5 0.8B', 'arch': 'qwen35', 'ctx': 262144,
                     'settings': {'gpu_memory_utilization': 0.8}, 'fits': True,
                     'devices': [('Jetson AGX Thor', 131072)]})), None),
    (Case('c8', 'https://ollama.com/library/magistral', 'cmd', 'RTX 3090', None, RIGHT,
          'ollama run magistral',
          # 24 GiB: num_ctx 32768; 40 layers, 8 KV heads of 128
          ('reads', {'engine': 'ollama', 'model': 'Magistral Small', 'ctx': 32768, 'kv_tok': _kv(40, 8, 128),
                     'fits': True})), None),
    (Case('c9', 'https://ollama.com/library/nemotron-3-nano', 'cmd', 'RTX 5090', None, RIGHT,
          'ollama run nemotron-3-nano',
          # 32 GB: num_ctx 32768; 6 attention layers of 52, 2 KV heads of 128
          ('reads', {'engine': 'ollama', 'model': 'Nemotron 3 Nano', 'arch': 'nemotron_h_moe', 'ctx': 32768,
                     'kv_tok': _kv(6, 2, 128), 'fits': True})), None),
    (Case('c10', 'https://ollama.com/library/devstral-small-2', 'cmd', '5060 Ti 16GB', None, RIGHT,
          'ollama run devstral-small-2',
          # under 23 GiB: num_ctx 4096; ~14 GB of Q4_K_M on 16 GB
          ('reads', {'engine': 'ollama', 'model': 'Devstral Small 2', 'arch': 'mistral3', 'ctx': 4096,
                     'kv_tok': _kv(40, 8, 128), 'fits': True})), None),
    (Case('c11', 'https://ollama.com/library/qwen3-vl', 'cmd', 'RTX 4070 12GB', None, RIGHT,
          'ollama run qwen3-vl',
          # latest is the 8B: 36 layers, 8 KV heads of 128, num_ctx 4096
          ('reads', {'engine': 'ollama', 'model': 'Qwen3-VL 8B', 'arch': 'qwen3vl', 'ctx': 4096,
                     'kv_tok': _kv(36, 8, 128), 'fits': True})), None),
    (Case('c12', 'https://github.com/NVIDIA-AI-IOT/jetson-generative-ai-playground/blob/main/src/content/models/'
                 'ministral3-8b-reasoning.md', 'cmd', 'Jetson Orin NX 16GB', None, RIGHT,
          'ollama run ministral-3:8b',
          # the page's run_command on its minimum Jetson, Orin NX ("8GB RAM"); 34 layers, 8 KV heads of 128
          ('reads', {'engine': 'ollama', 'model': 'Ministral 3 8B', 'arch': 'mistral3', 'ctx': 4096,
                     'kv_tok': _kv(34, 8, 128), 'fits': True, 'devices': [('Jetson Orin NX 16GB', 16384)]})), None),
    (Case('c13', 'https://github.com/ollama/ollama/issues/17452', 'cmd', 'Apple M5 MacBook Air 16GB', None, FIXED,
          'ollama run qwen3.6:latest',
          # "qwen3.6:latest 23 GB" on a 16 GB M5 MacBook Air: the machine freezes; Metal's 16 GB working set is
          # 12124 MiB; 10 full-attention layers of 40, 2 KV heads of 256
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.6 35B-A3B', 'arch': 'qwen35moe', 'ctx': 4096,
                     'kv_tok': _kv(10, 2, 256), 'fits': False, 'devices': [('M5 16GB', 12124)]})), None),
    (Case('c14', 'https://github.com/jundot/omlx/issues/114', 'cmd', 'm5 32g', None, RIGHT,
          'ollama run qwen3.5:4b',
          # "m5 32g 机型上运行 qwen3.5 4b" (the thread compares with Ollama): Metal's 32 GB working set 25559 MiB is
          # over 23 GiB, num_ctx 32768; 8 full-attention layers of 32, 4 KV heads of 256
          ('reads', {'engine': 'ollama', 'model': 'Qwen3.5 4B', 'arch': 'qwen35', 'ctx': 32768,
                     'kv_tok': _kv(8, 4, 256), 'fits': True, 'devices': [('M5 32GB', 25559)]})), None),
    (Case('c15', 'https://ollama.com/library/glm-4.7-flash', 'cmd', 'M4 Max 128GB', None, RIGHT,
          'ollama run glm-4.7-flash:q8_0',
          # over 47 GiB: num_ctx 262144, capped at the trained 202,752; the MLA latent K-only on 47 layers
          ('reads', {'engine': 'ollama', 'model': 'GLM-4.7-Flash', 'arch': 'deepseek2', 'format': 'Q8_0',
                     'ctx': 202752, 'kv_tok': 47 * 576 * 2, 'fits': True})), None),
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
    assert sum(c.status == FIXED for c in CASES) == 5 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 25
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- Z.ai's GLM-4.x "-FP8": compressed-tensors FP8 per channel (model/names.py _fp8) ----

def test_zai_glm4_fp8_names_read_as_channel_fp8():
    from oomkit.model import names  # the name conventions, as `check NAME` reads them

    for name in ("zai-org/GLM-4.5-Air-FP8", "zai-org/GLM-4.5-FP8", "zai-org/GLM-4.6-FP8", "zai-org/GLM-4.7-FP8",
                 "zai-org/GLM-4.5V-FP8", "zai-org/GLM-4.6V-FP8"):
        q = names.derive(name).quantization_config
        w = q["config_groups"]["group_0"]["weights"]
        assert (q["quant_method"], w["type"], w["num_bits"], w["strategy"]) == (
            "compressed-tensors", "float", 8, "channel"), name
        assert "weight_block_size" not in q, name
    # the other makers' "-FP8" stay 128 x 128 blocks (Qwen/Qwen3-32B-FP8's config)
    q = names.derive("Qwen/Qwen3-32B-FP8").quantization_config
    assert (q["quant_method"], q["weight_block_size"]) == ("fp8", [128, 128])


def test_glm5_fp8_is_still_block_fp8():
    from oomkit.model.resolve import resolve  # the resolver, as `check NAME` calls it

    # the catalog variant's own config.json: weight_block_size [128, 128]
    assert resolve("zai-org/GLM-5.1-FP8").weights.format == "fp8-block"


def test_glm45_air_fp8_splits_over_two_ranks_without_a_block_refusal():
    # 10944 / 2 = 5472 rows a rank, no multiple of 128: only a block checkpoint is refused
    rc, out, err = run_cli("check", "--gpu", "2x H100", "--json", "--", "vllm", "serve", "zai-org/GLM-4.5-Air-FP8",
                           "--tensor-parallel-size", "2")
    assert rc == 0 and "not divisible" not in out + err, err
    rc, _, err = run_cli("check", "--gpu", "2x H100", "--", "vllm", "serve", "Qwen/Qwen3-30B-A3B-FP8",
                         "--tensor-parallel-size", "8")
    # Qwen's block FP8 is still checked: moe_intermediate_size 768 / 8 = 96 rows, not a multiple of 128
    assert rc == 2 and "not divisible by weight quantization block_n = 128" in err, err


# ---- the GPU words of this sweep, as the catalog reads them (hardware/catalog.py, gpus.json) ----

def test_new_cards_are_in_the_catalog():
    from oomkit.hardware.catalog import devices_for_names  # the catalog, as --gpu reads it

    for text, name, mib in (("R9700", "AMD Radeon AI PRO R9700", 32768),
                            ("Radeon AI PRO R9700", "AMD Radeon AI PRO R9700", 32768),
                            ("Jetson AGX Thor", "NVIDIA Jetson AGX Thor", 131072),
                            ("Jetson Thor", "NVIDIA Jetson AGX Thor", 131072),
                            ("RTX PRO 4000 Blackwell", "NVIDIA RTX PRO 4000 Blackwell", 24576),
                            # nvidia-smi's 32623 MiB (0xSero/local-ai-registry#56)
                            ("RTX PRO 4500", "NVIDIA RTX PRO 4500 Blackwell", 32623),
                            ("RTX PRO 5000 Blackwell", "NVIDIA RTX PRO 5000 Blackwell", 49152)):
        (d,) = devices_for_names(text)
        assert (d.name, d.memory_bytes // 2**20) == (name, mib), text
    assert [d.name for d in devices_for_names("2x R9700")] == ["AMD Radeon AI PRO R9700"] * 2
    # Thor: Blackwell sm_110, 20 SMs (antirez/ds4#716), memory shared with the CPU
    (thor,) = devices_for_names("Jetson AGX Thor")
    assert thor.compute_capability == (11, 0) and thor.sm_count == 20 and thor.integrated is True


def test_the_mac_written_after_its_chip_is_dropped():
    from oomkit.hardware.catalog import devices_for_names, size_notes  # the catalog, as --gpu reads it

    for text, name in (("M5 MacBook Pro 32GB", "Apple M5 32GB"), ("Apple M5 MacBook Air 16GB", "Apple M5 16GB"),
                       ("M3 Ultra Mac Studio 512GB", "Apple M3 Ultra 512GB"), ("M4 Mac mini 16GB", "Apple M4 16GB"),
                       ("M4 Max MacBook Pro 128GB", "Apple M4 Max 128GB"),
                       ("MacBook Pro M4 Pro 48GB", "Apple M4 Pro 48GB")):
        (d,) = devices_for_names(text)
        assert d.name == name and not size_notes(text), text
    # without a size: the chip's smallest, said in a note
    (d,) = devices_for_names("M5 MacBook Pro")
    assert d.name == "Apple M5 16GB" and size_notes("M5 MacBook Pro")
