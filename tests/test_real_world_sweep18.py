"""Real users' input, eighteenth sweep: 30 complete engine commands copied from model cards, engine recipes, READMEs,
blog posts and issue threads, offline (the built-in catalog answers), on server and workstation hardware written as
people write it ("8xH200", "8x MI300X", "4xH100", "4x L40S", "8x B200", "2x RTX 3090 NVLink", "RTX 6000 Ada",
"A100 80GB"-class "L4", "RTX 6000 48G"). The commands: `python -m sglang.launch_server` with --tp / --dp /
--enable-dp-attention / --ep / --mem-fraction-static / --kv-cache-dtype / --quantization modelopt_fp4, the NSA and
Qwen3-VL flags of the SGLang release a page was written for; `vllm serve` with --tensor-parallel-size / -tp,
--data-parallel-size with --enable-expert-parallel, --limit-mm-per-prompt.video 0, --speculative-config.method mtp,
--speculative-config JSON, --kv-cache-dtype fp8_e4m3 / fp8_e5m2, --quantization fp8 / awq_marlin / modelopt_fp4,
--mm-encoder-tp-mode; `python -m vllm.entrypoints.openai.api_server` with exports in front; `docker run` of
vllm/vllm-openai:v0.10.2; a llama-server.exe line with a Windows LM Studio path, -fa and --n-cpu-moe; mlx_lm.server;
Ollama Modelfiles. The models are the newest (DeepSeek-V3.2-Exp, Qwen3-Next, MiniMax-M2, Qwen3-VL-235B FP8,
GLM-4.6V / GLM-4.5 / GLM-4.5-Air FP8, GLM-4.6 NVFP4, Qwen3.6-27B AWQ, gpt-oss, Qwen3-235B-2507). None of the
sources is cited by an earlier test (checked by URL and issue number in tests/).

Each expectation comes from the model's config (shared/reference/model_configs.jsonl, else the catalog entry's cited
source), the engine's rules and the page, not from oomkit's output: KV bytes a token = layers holding KV x KV heads x
head size x 2 (K and V) x bytes an element (2 for bf16, 1 for an fp8 cache); GLM-4.5's 92 layers plus its MTP layer
(93) when --speculative-config.method mtp runs it; DeepSeek-V3.2's MLA latent (kv_lora_rank 512 + qk_rope_head_dim
64, 2 bytes) and SGLang's NSA indexer key (index_head_dim 128 fp8 bytes + a 4-byte scale) on its 61 layers. The
context is the config's max_position_embeddings unless typed (vLLM max_model_len, SGLang context_length). A page's
"runs on N x GPU" is taken as fits; a command whose flag the current release no longer takes is refused by the
engine's own argument parser (the release that took it is named with --engine-version where the page dates it).

Measured (2026-12-07), before this sweep's change: right 30, wrong 0, refused a right input 0, crashed 0 (of 30),
each as posted and offline. One defect was found behind a case, where the model's refusal hides it offline:
- The r/LocalLLaMA post 1t6susj (4x RTX 3090 "with NVLink bonded between GPU pairs", TP 2 pinned to an NVLinked
  pair, vLLM 0.20.1) names its cards "2x RTX 3090 NVLink"; `--gpu "2x RTX 3090 NVLink"` was refused as an unknown
  GPU ("RTX 3090 NVLink") once the model is read (its base model, or the checkpoint from the hub). The bridge words
  after a card are now dropped (hardware/catalog.py _NVLINK; "H100 NVL" stays a card): the two 3090s are read
  (test_nvlink_after_a_card_is_dropped). Offline the command stays refused for its model, as it should be:
  cyankiwi/Qwen3.6-27B-AWQ-BF16-INT4 mixes BF16 and INT4 modules its name does not list (tests/test_names_heldout2.py).
After: right 30.

Read as right and kept so: "RTX 6000 48G" (vllm-project/vllm#10102) is refused with "did you mean RTX A6000, RTX 6000
Ada": both 48 GB cards answer to it; the same command is checked on the RTX 6000 Ada. The Modelfiles are refused
with the `oomkit check TAG --engine ollama --num-ctx N` they mean (as sweep 13's are). An unsloth-style mixed MLX
repo (Brooooooklyn's UD-MXFP4_K_XL) is unknown offline: its per-tensor bits are not in its name.
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


# KV bytes a token: layers x KV heads x head size x 2 (K and V) x bytes an element
def _kv(layers: int, heads: int, dim: int, nbytes: int = 2) -> int:
    return layers * heads * dim * 2 * nbytes


# DeepSeek-V3.2 on SGLang: the MLA latent (512 + 64) at 2 bytes, and the NSA indexer key, 128 fp8 bytes and a 4-byte
# scale (NSATokenToKVPool: index_head_dim + index_head_dim // quant_block_size * 4), on each of the 61 layers
_DSV32_SGLANG = 61 * (512 + 64) * 2 + 61 * (128 + 4)

HF = "https://huggingface.co/"
SGL_DSV32 = "https://docs.sglang.io/basic_usage/deepseek_v32.html"
VLLM_MINIMAX = "https://docs.vllm.ai/projects/recipes/en/latest/MiniMax/MiniMax-M2.html"
VLLM_QWEN3VL = "https://docs.vllm.ai/projects/recipes/en/latest/Qwen/Qwen3-VL.html"
VLLM_GLM45 = "https://recipes.vllm.ai/zai-org/GLM-4.5"
GLM46_NVFP4 = HF + "ahanley22/GLM-4.6-NVFP4"
V10102 = "https://github.com/vllm-project/vllm/issues/10102"
V10102_CMD = ('export VLLM_ATTENTION_BACKEND=FLASHINFER\nCUDA_VISIBLE_DEVICES=1 python -m vllm.entrypoints.openai.api_server \\\n'
              '    --host 0.0.0.0 --port 11500 \\\n    --gpu_memory_utilization 0.98 \\\n'
              '    --model Qwen/Qwen2.5-72B-Instruct-AWQ --enforce-eager \\\n'
              '    --max_model_len 15360 --kv-cache-dtype fp8_e5m2 \\\n    --quantization awq_marlin \\\n'
              '    --enable-auto-tool-choice --tool-call-parser hermes')
H200, MI300X, B200, H100 = ("H200", 143771), ("MI300X", 196592), ("B200", 183359), ("H100 80GB HBM3", 81559)

# (case, the engine a name runs with; None for a command)
CASES_AND_ENGINES = [
    # ---- SGLang: DeepSeek-V3.2-Exp, Qwen3-Next, Qwen3-VL, Qwen3-235B ----
    (Case('s1', SGL_DSV32, 'cmd', '8xH200', None, RIGHT,
          'python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --dp 8 --enable-dp-attention',
          # "To serve DeepSeek-V3.2-Exp on 8xH200/B200 GPUs: # Launch with TP + DP (Recommended)"; 690 GB of block
          # FP8 over 8 x 141 GB
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3.2', 'params': 685, 'format': 'fp8',
                     'ctx': 163840, 'settings': {'tp_size': 8, 'dp_size': 8, 'enable_dp_attention': True},
                     'kv_tok': _DSV32_SGLANG, 'fits': True, 'devices': [H200] * 8})), None),
    (Case('s2', SGL_DSV32 + '#launch-with-ep-dp', 'cmd', '8xH200', None, RIGHT,
          'python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --ep 8 --dp 8 '
          '--enable-dp-attention',
          # "# Launch with EP + DP" on the same 8 H200
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3.2', 'ctx': 163840,
                     'settings': {'tp_size': 8, 'dp_size': 8}, 'kv_tok': _DSV32_SGLANG, 'fits': True})), None),
    (Case('s3', SGL_DSV32 + '#launch-with-tp-on-mi30x', 'cmd', '8x MI300X', '0.5.8', RIGHT,
          'python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8 --nsa-prefill-backend tilelang '
          '--nsa-decode-backend tilelang',
          # "# Launch with TP on MI30x/MI35x", with the page's MI300 image lmsysorg/sglang:v0.5.8-rocm700-mi30x (the
          # NSA backend flags are gone from SGLang 0.5.20's parser); 8 x 192 GB
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3.2', 'ctx': 163840, 'settings': {'tp_size': 8},
                     'fits': True, 'devices': [MI300X] * 8})), None),
    (Case('s4', 'https://sgl-project.github.io/_sources/basic_usage/deepseek_v32.md', 'cmd', '8x B200', None, RIGHT,
          'python -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2-Exp --tp 8',
          # "# Launch with Pure TP" on B200; the releases that added V3.2 turn DP attention on themselves (the warning)
          ('reads', {'engine': 'sglang', 'model': 'DeepSeek V3.2', 'ctx': 163840, 'settings': {'tp_size': 8},
                     'fits': True, 'warn': '--enable-dp-attention', 'devices': [B200] * 8})), None),
    (Case('s5', 'https://docs.sglang.ai/basic_usage/qwen3.html', 'cmd', '4xH200', None, RIGHT,
          'python3 -m sglang.launch_server --model Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4',
          # "To serve Qwen3-Next models on 4xH100/H200 GPUs": 163 GB of bfloat16 over four ranks
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-Next 80B-A3B', 'arch': 'qwen3next', 'params': 81.3,
                     'format': 'bfloat16', 'ctx': 262144, 'settings': {'tp_size': 4}, 'fits': True})), None),
    (Case('s6', 'https://docs.sglang.ai/basic_usage/qwen3_vl.html', 'cmd', '8x H100', '0.5.4', RIGHT,
          'python3 -m sglang.launch_server \\\n  --model-path Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 \\\n  --tp 8 \\\n'
          '  --ep 8 \\\n  --host 0.0.0.0 \\\n  --port 30000 \\\n  --keep-mm-feature-on-device',
          # "FP8 (quantised) mode ... (e.g., on H100, H200)", written for SGLang 0.5.4 (--keep-mm-feature-on-device
          # left the parser in 0.5.21); ~236 GB of FP8 over 8 x 80 GB
          ('reads', {'engine': 'sglang', 'model': 'Qwen3-VL-235B-A22B', 'arch': 'qwen3vlmoe', 'params': 235,
                     'format': 'fp8', 'ctx': 262144, 'settings': {'tp_size': 8}, 'fits': True,
                     'devices': [H100] * 8})), None),
    (Case('s7', HF + 'Qwen/Qwen3-235B-A22B-Instruct-2507', 'cmd', '8x H200', None, RIGHT,
          'python -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B-Instruct-2507 --tp 8 --context-length 262144',
          # the card's SGLang line: 470 GB of bfloat16 over 8 x 141 GB, the native 262,144 tokens
          ('reads', {'engine': 'sglang', 'model': 'Qwen3 235B-A22B', 'arch': 'qwen3moe', 'params': 235,
                     'format': 'bfloat16', 'ctx': 262144, 'fits': True})), None),
    (Case('s8', GLM46_NVFP4, 'cmd', '8x B200', None, RIGHT,
          'python3 -m sglang.launch_server \\\n  --model ahanley22/GLM-4.6-NVFP4 \\\n  --trust-remote-code \\\n  --tp 8 \\\n'
          '  --quantization modelopt_fp4 \\\n  --attention-backend flashinfer \\\n  --moe-runner-backend flashinfer_cutlass '
          '\\\n  --kv-cache-dtype fp8_e4m3 \\\n  --mem-fraction-static 0.88 \\\n  --host 0.0.0.0 \\\n  --port 8000',
          # "CUDA SM 100a (B200) Tested": ~200 GB of NVFP4; an fp8 cache, 92 layers x 8 KV heads x 128 at a byte
          ('reads', {'engine': 'sglang', 'model': 'GLM-4.6-NVFP4', 'arch': 'glm4moe', 'params': 358,
                     'format': 'nvfp4', 'ctx': 202752, 'settings': {'tp_size': 8, 'mem_fraction_static': 0.88},
                     'kv_tok': _kv(92, 8, 128, 1), 'fits': True})), None),
    # ---- vLLM: recipes and model cards ----
    (Case('v1', 'https://blog.vllm.ai/2025/09/11/qwen3-next.html', 'cmd', '4xH100', None, RIGHT,
          'vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct -tp 4',
          # the blog's launch line; 163 GB of bfloat16 over 4 x 80 GB, 12 full-attention layers of 48
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-Next 80B-A3B', 'arch': 'qwen3next', 'ctx': 262144,
                     'settings': {'tensor_parallel_size': 4}, 'fits': True, 'devices': [H100] * 4})), None),
    (Case('v2', VLLM_MINIMAX, 'cmd', '4x H200', None, RIGHT,
          'vllm serve MiniMaxAI/MiniMax-M2 \\\n--tensor-parallel-size 4 \\\n--tool-call-parser minimax_m2 \\\n'
          '--reasoning-parser minimax_m2_append_think \\\n--enable-auto-tool-choice',
          # "You can use 4x H200/H20 ... to launch this model": 230 GB of block FP8; 62 layers x 8 KV heads x 128
          ('reads', {'engine': 'vllm', 'model': 'MiniMax M2', 'arch': 'minimax_m2', 'params': 229, 'format': 'fp8',
                     'ctx': 196608, 'settings': {'tensor_parallel_size': 4}, 'kv_tok': _kv(62, 8, 128),
                     'fits': True})), None),
    (Case('v3', VLLM_MINIMAX + '#dp-ep', 'cmd', '8x H200', None, RIGHT,
          'vllm serve MiniMaxAI/MiniMax-M2 \\\n--data-parallel-size 8 \\\n--enable-expert-parallel \\\n'
          '--tool-call-parser minimax_m2 \\\n--reasoning-parser minimax_m2_append_think \\\n--enable-auto-tool-choice',
          # "To run the model with more than 4 GPUs, use DP+EP": experts spread over 8 ranks
          ('reads', {'engine': 'vllm', 'model': 'MiniMax M2', 'ctx': 196608,
                     'settings': {'data_parallel_size': 8, 'enable_expert_parallel': True}, 'fits': True})), None),
    (Case('v4', VLLM_QWEN3VL, 'cmd', '4x H100', None, RIGHT,
          'vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 \\\n  --tensor-parallel-size 4 \\\n'
          '  --limit-mm-per-prompt.video 0 \\\n  --async-scheduling \\\n  --gpu-memory-utilization 0.95 \\\n'
          '  --max-num-seqs 128',
          # "H100 (image-only inference, FP8, TP4)": 59 GB of FP8 a rank in 0.95 x 80 GB; 94 layers x 4 KV heads
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-235B-A22B-Instruct-FP8', 'arch': 'qwen3vlmoe',
                     'format': 'fp8', 'ctx': 262144,
                     'settings': {'tensor_parallel_size': 4, 'gpu_memory_utilization': 0.95},
                     'kv_tok': _kv(94, 4, 128), 'fits': True})), None),
    (Case('v5', VLLM_QWEN3VL + '#h100-fp8', 'cmd', '8x H100', None, RIGHT,
          'vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 \\\n  --tensor-parallel-size 8 \\\n'
          '  --mm-encoder-tp-mode data \\\n  --enable-expert-parallel \\\n  --async-scheduling',
          # "H100 (image + video inference, FP8)": with expert parallelism the 1536-row experts are not split by 8
          ('reads', {'engine': 'vllm', 'model': 'Qwen3-VL-235B-A22B-Instruct-FP8', 'ctx': 262144,
                     'settings': {'tensor_parallel_size': 8, 'enable_expert_parallel': True}, 'fits': True})), None),
    (Case('v6', 'https://recipes.vllm.ai/zai-org/GLM-4.6V', 'cmd', '4x H100', None, RIGHT,
          'vllm serve zai-org/GLM-4.6V-FP8 \\\n     --tensor-parallel-size 4 \\\n     --tool-call-parser glm45 \\\n'
          '     --reasoning-parser glm45 \\\n     --enable-auto-tool-choice \\\n     --enable-expert-parallel \\\n'
          '     --allowed-local-media-path / \\\n     --mm-encoder-tp-mode data \\\n     --mm-processor-cache-type shm',
          # "Hardware: 4x H100/H200 (BF16 or FP8)"; GLM-4.5-Air's text shapes: 46 layers x 8 KV heads x 128
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.6V-FP8', 'params': 107, 'ctx': 131072,
                     'settings': {'tensor_parallel_size': 4}, 'kv_tok': _kv(46, 8, 128), 'fits': True})), None),
    (Case('v7', VLLM_GLM45, 'cmd', '4x H200', None, RIGHT,
          'vllm serve zai-org/GLM-4.5-FP8 \\\n    --tensor-parallel-size 4 \\\n    --speculative-config.method mtp \\\n'
          '    --speculative-config.num_speculative_tokens 1 \\\n    --tool-call-parser glm45 \\\n'
          '    --reasoning-parser glm45 \\\n    --enable-auto-tool-choice',
          # "Enabling MTP Speculative Decoding" ("4x-8x H200 (FP8)"): the MTP layer holds KV too, 92 + 1 layers
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.5-FP8', 'arch': 'glm4moe', 'params': 358, 'ctx': 131072,
                     'settings': {'tensor_parallel_size': 4, 'speculative_method': 'mtp', 'num_speculative_tokens': 1},
                     'kv_tok': _kv(93, 8, 128), 'fits': True})), None),
    (Case('v8', VLLM_GLM45 + '#amd', 'cmd', '8x MI300X', None, RIGHT,
          'vllm serve zai-org/GLM-4.5-FP8 \\\n    --tensor-parallel-size 8 \\\n    --tool-call-parser glm45 \\\n'
          '    --reasoning-parser glm45 \\\n    --enable-auto-tool-choice',
          # "Tensor Parallel (FP8 on 8 GPUs)" on the recipe's "AMD MI300X" (8 x 192 GB)
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.5-FP8', 'ctx': 131072, 'settings': {'tensor_parallel_size': 8},
                     'kv_tok': _kv(92, 8, 128), 'fits': True, 'devices': [MI300X] * 8})), None),
    (Case('v9', 'https://github.com/vllm-project/recipes/blob/main/GLM/GLM.md', 'cmd', '8x H100', None, RIGHT,
          'vllm serve zai-org/GLM-4.5-Air-FP8 \\\n--tensor-parallel-size 8 \\\n--tool-call-parser glm45 \\\n'
          '--reasoning-parser glm45 \\\n--enable-auto-tool-choice',
          # "run tensor-parallel like this": channel FP8, no block to divide; 46 layers x 8 KV heads x 128
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.5-Air-FP8', 'params': 106, 'ctx': 131072,
                     'settings': {'tensor_parallel_size': 8}, 'kv_tok': _kv(46, 8, 128), 'fits': True})), None),
    (Case('v10', GLM46_NVFP4 + '#vllm', 'cmd', '8x B200', None, RIGHT,
          'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\\nvllm serve ahanley22/GLM-4.6-NVFP4 \\\n'
          '  --trust-remote-code \\\n  --tensor-parallel-size 8 \\\n  --quantization modelopt_fp4 \\\n'
          '  --dtype bfloat16 \\\n  --kv-cache-dtype fp8_e4m3 \\\n  --max-model-len 32768 \\\n'
          '  --gpu-memory-utilization 0.90 \\\n  --host 0.0.0.0 \\\n  --port 8000',
          # the card's vLLM line ("vLLM 0.16+ Tested"); an fp8 cache at a byte an element
          ('reads', {'engine': 'vllm', 'model': 'GLM-4.6-NVFP4', 'format': 'nvfp4', 'ctx': 32768,
                     'settings': {'tensor_parallel_size': 8, 'kv_cache_dtype': 'fp8_e4m3',
                                  'quantization': 'modelopt_fp4'},
                     'kv_tok': _kv(92, 8, 128, 1), 'fits': True})), None),
    (Case('v11', 'https://reddit.sentinel-team.org/posts/1t6susj/snapshots/2026-05-09T00%3A46%3A53.937033Z', 'cmd',
          '2x RTX 3090 NVLink', None, RIGHT,
          'CUDA_VISIBLE_DEVICES=0,2 \\\nvllm serve cyankiwi/Qwen3.6-27B-AWQ-BF16-INT4 \\\n'
          '--served-model-name Qwen3.6-27B-AWQ-BF16-INT4 \\\n--host 0.0.0.0 --port 8000 \\\n--tensor-parallel-size 2 \\\n'
          '--max-model-len 131072 \\\n--gpu-memory-utilization 0.85 \\\n--max-num-seqs 8 \\\n--dtype float16 \\\n'
          '--attention-backend FLASHINFER \\\n--enable-prefix-caching \\\n--mamba-cache-dtype auto \\\n'
          '--mamba-cache-mode align \\\n--enable-chunked-prefill \\\n--max-num-batched-tokens 4096 \\\n'
          '--reasoning-parser qwen3 \\\n--default-chat-template-kwargs \'{"enable_thinking": true, '
          '"preserve_thinking": true}\' \\\n--enable-auto-tool-choice \\\n--tool-call-parser qwen3_xml \\\n'
          '--speculative-config \'{"method":"qwen3_next_mtp","num_speculative_tokens":2}\' \\\n--trust-remote-code',
          # "pinning TP=2 to a NVLinked pair gave +25% throughput" (vLLM 0.20.1). The cards are read now; the
          # checkpoint mixes BF16 and INT4 modules its name does not list, so offline it is unknown (as
          # tests/test_names_heldout2.py holds for cyankiwi's "-AWQ-BF16-INT4"): the hub's config.json sizes it
          ('refuses', "unknown model 'cyankiwi/Qwen3.6-27B-AWQ-BF16-INT4'")), None),
    (Case('v12', 'https://willitrunai.com/de/blog/vllm-multi-gpu-setup-guide', 'cmd', '2x RTX 4090', None, RIGHT,
          'vllm serve meta-llama/Llama-3.1-70B-Instruct \\\n  --tensor-parallel-size 2 \\\n  --dtype bfloat16 \\\n'
          '  --max-model-len 8192',
          # the page's "Copy-paste command for 2x RTX 4090 serving Llama 70B": 141 GB of bfloat16 is 70 GB a rank on
          # 24 GB cards (its "~42 GB" is a Q4 figure the command does not load)
          ('reads', {'engine': 'vllm', 'model': 'Llama 3.1 70B', 'format': 'bfloat16', 'ctx': 8192,
                     'kv_tok': _kv(80, 8, 128), 'fits': False,
                     'warn': 'CUDA out of memory while loading'})), None),
    (Case('v13', 'https://evokernel-specs.pages.dev/en/cases/case-qwencoder-l40sx4-vllm-001/', 'cmd', '4x L40S',
          None, RIGHT,
          'python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-Coder-32B-Instruct '
          '--tensor-parallel-size 4 --quantization fp8',
          # "Memory/card 36 GB" of 48: 33 GB of weights quantized to FP8 on load, 8 GB a rank
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-Coder 32B', 'ctx': 32768,
                     'settings': {'tensor_parallel_size': 4, 'quantization': 'fp8'}, 'kv_tok': _kv(64, 8, 128),
                     'fits': True, 'devices': [('L40S', 46068)] * 4})), None),
    (Case('v14', 'https://hochej.github.io/pi-mono/pods/gpt-oss', 'cmd', 'RTX 6000 Ada', None, RIGHT,
          'docker run --gpus all \\\n-p 8000:8000 \\\n--ipc=host \\\nvllm/vllm-openai:v0.10.2 \\\n'
          '--model openai/gpt-oss-20b',
          # the guide's container: 13 GB of MXFP4 experts on 48 GB; 24 layers x 8 KV heads x 64
          ('reads', {'engine': 'vllm', 'model': 'gpt-oss 20B', 'arch': 'gpt-oss', 'format': 'mxfp4',
                     'ctx': 131072, 'kv_tok': _kv(24, 8, 64), 'fits': True,
                     'devices': [('RTX 6000 Ada', 49140)]})), None),
    (Case('v15', 'https://chinmayhebbal.com/blogs/vllm-on-amd-mi300x.html', 'cmd', 'MI300X', None, RIGHT,
          'export TP=1\nexport MODEL_ID="openai/gpt-oss-120b"\nexport VLLM_ROCM_USE_AITER=1\n'
          'export VLLM_USE_AITER_UNIFIED_ATTENTION=1\nexport VLLM_ROCM_USE_AITER_MHA=0\n\nvllm serve \\\n'
          '  $MODEL_ID \\\n  --port 8000 \\\n  --tensor-parallel $TP \\\n  --no-enable-prefix-caching \\\n'
          '  --disable-log-requests \\\n  --compilation-config \'{"full_cuda_graph": true}\'',
          # --disable-log-requests ("[DEPRECATED] Disable logging requests.") left vLLM's parser in 0.17.0: the
          # current release refuses the line as written (the blog names no release)
          ('refuses', '--disable-log-requests')), None),
    (Case('v16', 'https://recipes.vllm.ai/Qwen/Qwen3-4B', 'cmd', 'L4', None, RIGHT,
          'vllm serve Qwen/Qwen3-4B \\\n  --host 0.0.0.0 \\\n  --port 8000',
          # "Single GPU (BF16)": 8 GB of weights and 40,960 tokens of 36 layers x 8 KV heads x 128 in 0.9 x 24 GB
          ('reads', {'engine': 'vllm', 'model': 'Qwen3 4B', 'arch': 'qwen3', 'ctx': 40960, 'kv_tok': _kv(36, 8, 128),
                     'fits': True, 'devices': [('L4', 23034)]})), None),
    (Case('v17', V10102, 'cmd', 'RTX 6000 48G', None, RIGHT, V10102_CMD,
          # "With single RTX 6000 48G, context can be set to 15K": the RTX A6000 and the RTX 6000 Ada are both 48 GB
          # cards the words name
          ('refuses', 'did you mean RTX A6000, RTX 6000 Ada')), None),
    (Case('v18', V10102 + '#ada', 'cmd', 'RTX 6000 Ada', None, RIGHT, V10102_CMD,
          # the same line on the RTX 6000 Ada: ~41 GB of AWQ int4 in 0.98 x 48 GB, 15,360 tokens of an fp8_e5m2 cache
          ('reads', {'engine': 'vllm', 'model': 'Qwen2.5-72B-Instruct-AWQ', 'format': 'awq', 'ctx': 15360,
                     'settings': {'kv_cache_dtype': 'fp8_e5m2', 'gpu_memory_utilization': 0.98},
                     'kv_tok': _kv(80, 8, 128, 1), 'fits': True})), None),
    # ---- llama.cpp, MLX, Ollama ----
    (Case('l1', 'https://github.com/ggml-org/llama.cpp/issues/15253', 'cmd', 'RTX 3080 Ti', 'b6132', RIGHT,
          '.\\llama\\llama-server.exe -m ""C:\\Users\\djcon\\.cache\\lm-studio\\models\\lmstudio-community\\'
          'gpt-oss-120b-GGUF\\gpt-oss-120b-MXFP4-00001-of-00002.gguf"" --reasoning-format none --ctx-size 32000 '
          '-ngl 999 -fa --n-cpu-moe 33 --port 1234 -ub 1024 --temp 1.0 --top-p 1.0 --top-k 0 --repeat-penalty 1.05',
          # llama-server b6132 on a 12 GB 3080 Ti: it loads ("gpt-oss 120b: 2 minutes to load"), 33 of 36 layers'
          # experts on the CPU; the LM Studio path names the repo and file type
          ('reads', {'engine': 'llama.cpp', 'model': 'gpt-oss 120B', 'arch': 'gpt-oss', 'format': 'MXFP4',
                     'ctx': 32000, 'fits': True})), None),
    (Case('x1', HF + 'Brooooooklyn/Qwen3.6-35B-A3B-UD-MXFP4_K_XL-mlx', 'cmd', 'M3 Max 128GB', None, RIGHT,
          'mlx_lm.server --model "Brooooooklyn/Qwen3.6-35B-A3B-UD-MXFP4_K_XL-mlx"',
          # the page's "Start the MLX server": a per-tensor mix ("MXFP4 ... + 8-bit affine router gates + BF16") the
          # name does not spell out, so offline it is unknown
          ('refuses', "unknown model 'Brooooooklyn/Qwen3.6-35B-A3B-UD-MXFP4_K_XL-mlx'")), None),
    (Case('o1', 'https://juejin.cn/post/7575937594350075947', 'model', 'RTX 3060 12GB', None, RIGHT,
          '# 使用基础模型\nFROM qwen2.5:7b-instruct\n# 系统提示,会成为 .System 字段\nSYSTEM """\n'
          'You are a helpful assistant that answers concisely.\n"""\n# 模型配置\nPARAMETER temperature 0.2\n'
          'PARAMETER top_p 0.9\nPARAMETER num_ctx 4096\n',
          ('refuses', 'oomkit check qwen2.5:7b-instruct --engine ollama --num-ctx 4096')), 'ollama'),
    (Case('o2', 'https://mindx.pythai.net/doc/ollama/setup/modelfile', 'model', 'RTX 4060 8GB', None, RIGHT,
          'FROM qwen3:1.7b\nPARAMETER temperature 0.7\nPARAMETER num_ctx 4096\nPARAMETER top_p 0.9\n'
          'PARAMETER stop "<|endoftext|>"\nPARAMETER stop "<|im_end|>"',
          ('refuses', 'oomkit check qwen3:1.7b --engine ollama --num-ctx 4096')), 'ollama'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}


def check(c: Case) -> None:
    check_reading_case(c, ENGINE[c.id])


test_a_real_input_answers_as_the_thread_shows, test_every_form_of_a_real_command_answers_or_refuses_in_one_line = \
    sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 30 and len({c.id for c in CASES}) == 30
    assert sum(c.kind == "cmd" for c in CASES) == 28 and sum(c.kind == "model" for c in CASES) == 2
    assert sum(c.status == FIXED for c in CASES) == 0 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 30
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}


# ---- the bridge written after a card (hardware/catalog.py _NVLINK) ----

def test_nvlink_after_a_card_is_dropped():
    from oomkit.hardware.catalog import devices_for_names  # the catalog, as --gpu reads it

    for text, n, name, mib in (("2x RTX 3090 NVLink", 2, "NVIDIA GeForce RTX 3090", 24576),
                               ("RTX 3090 with NVLink", 1, "NVIDIA GeForce RTX 3090", 24576),
                               ("3090 nvlink", 1, "NVIDIA GeForce RTX 3090", 24576),
                               ("2x A6000 NVLink bridge", 2, "NVIDIA RTX A6000", 49140),
                               # the NVL cards stay themselves ("nvl", not the bridge)
                               ("H100 NVL", 1, "NVIDIA H100 NVL", 95830),
                               ("H200 NVL", 1, "NVIDIA H200 NVL", 143771)):
        got = devices_for_names(text)
        assert [(d.name, d.memory_bytes // 2**20) for d in got] == [(name, mib)] * n, text
    # NVIDIA's name for the Max-Q card without "Workstation Edition" (nvidia-smi prints "NVIDIA RTX PRO 6000 Blackwell
    # Max-Q Workstation Edition", 97887MiB, gpus.json's memory source)
    (d,) = devices_for_names("RTX PRO 6000 Blackwell Max-Q")
    assert (d.name, d.memory_bytes // 2**20) == ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 97887)
    # the bridge alone is no GPU
    rc, _, err = run_cli("check", "Qwen/Qwen3-8B", "--gpu", "NVLink")
    assert rc == 2 and "unknown GPU 'NVLink'" in err
    # the post's cards with the model its checkpoint quantizes: 55 GB of bfloat16 over two 24 GB 3090s at TP 2
    rc, out, err = run_cli("check", "--json", "--gpu", "2x RTX 3090 NVLink", "--", "vllm", "serve", "Qwen/Qwen3.6-27B",
                           "--tensor-parallel-size", "2")
    e = json.loads(out)["estimate"]
    assert [(d["name"], d["memory_bytes"] // 2**20) for d in e["devices"]] == [("NVIDIA GeForce RTX 3090", 24576)] * 2
    assert e["fits"] is False, e["warnings"]


# ---- SkyPilot's and Modal's accelerator spec NAME:COUNT (hardware/catalog.py _COUNT_LOOSE) ----

def test_the_accelerator_spec_name_colon_count():
    from oomkit.hardware.catalog import devices_for_names  # the catalog, as --gpu reads it

    # vllm-project/vllm#6689: "works well on A100-80GB:8" and "the 8B model on L4:1"
    for text, n, name, mib in (("A100-80GB:8", 8, "NVIDIA A100-SXM4-80GB", 81920), ("L4:1", 1, "NVIDIA L4", 23034),
                               ("H100:8", 8, "NVIDIA H100 80GB HBM3", 81559),
                               ("RTX 4090:2, RTX 3090:1", 3, None, None)):
        got = devices_for_names(text)
        assert len(got) == n, text
        if name:
            assert {(d.name, d.memory_bytes // 2**20) for d in got} == {(name, mib)}, text
    # a device index is no count ("cuda:0" names no card), and no count is below one
    rc, _, err = run_cli("check", "Qwen/Qwen3-8B", "--gpu", "cuda:0")
    assert rc == 2 and "unknown GPU 'cuda:0'" in err
    rc, _, err = run_cli("check", "Qwen/Qwen3-8B", "--gpu", "H100:0")
    assert rc == 2 and "GPU count must be at least 1" in err
