"""The names people type for Ollama's library (ollama.com/library, the most pulled ~200 models and their size tags)
resolve offline to the model Ollama ships under that tag, or are refused in one line that says why; never to a
sibling of another architecture or size.

A name without a tag is Ollama's ``latest`` (the size its library page marks latest). Each row gives the catalog
entry the name must resolve to (None: no entry is required; the name is refused as unknown, or, if an entry claims it,
that entry must have the tag's architecture and size), the llama.cpp architecture Ollama's GGUF declares and the
parameter count (billions) the library page lists for that tag. Vision models Ollama ships in one GGUF list their
tower too (gemma3, qwen2.5vl, mistral-small3.1): the tolerance (15%) covers it, while a wrong size class or family
is caught. "refused" rows are libraries oomkit cannot size (model/names.OLLAMA_UNSIZED).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomkit.errors import ModelError
from oomkit.model import catalog, names
from oomkit.model.resolve import resolve, split_quant

R = None  # not in the catalog: refused in one line, or (if a later entry claims it) that entry's shapes
NAMES = {
    # ---- Meta ----
    "llama3.1": ("llama-3.1-8b-instruct", "llama", 8.03), "llama3.1:8b": ("llama-3.1-8b-instruct", "llama", 8.03),
    "llama3.1:70b": ("llama-3.1-70b-instruct", "llama", 70.6), "llama3.1:405b": ("llama-3.1-405b-instruct", "llama", 406),
    "llama3.2": ("llama-3.2-3b-instruct", "llama", 3.21), "llama3.2:1b": ("llama-3.2-1b-instruct", "llama", 1.24),
    "llama3.2:3b": ("llama-3.2-3b-instruct", "llama", 3.21), "llama3.3": ("llama-3.3-70b-instruct", "llama", 70.6),
    "llama3": ("llama-3-8b-instruct", "llama", 8.03), "llama3:70b": ("llama-3-70b-instruct", "llama", 70.6),
    "llama2": ("llama-2-7b-chat", "llama", 6.74), "llama2:13b": ("llama-2-13b-chat", "llama", 13.0),
    "llama2:70b": ("llama-2-70b-chat", "llama", 69.0),
    "llama4": ("llama-4-scout-17b-16e-instruct", "llama4", 109), "llama4:16x17b": ("llama-4-scout-17b-16e-instruct", "llama4", 109),
    "llama4:128x17b": ("llama-4-maverick-17b-128e-instruct", "llama4", 402),
    "codellama": ("codellama-7b-instruct", "llama", 6.74), "codellama:13b": ("codellama-13b-instruct", "llama", 13.0),
    "codellama:34b": ("codellama-34b-instruct", "llama", 33.7), "codellama:70b": ("codellama-70b-instruct", "llama", 69.0),
    "codellama:7b-code": ("codellama-7b", "llama", 6.74), "codellama:7b-python": ("codellama-7b-python", "llama", 6.74),
    "llama-guard3": ("llama-guard-3-8b", "llama", 8.03), "llama-guard3:8b": ("llama-guard-3-8b", "llama", 8.03),
    "tinyllama": ("tinyllama-1.1b-chat-v1.0", "llama", 1.1),
    # mllama: the text model's 9.78B and the 895M projector of ollama.com/library/llama3.2-vision (11b); 90b: 88.6B
    "llama3.2-vision": ("llama-3.2-11b-vision-instruct", "mllama", 10.7),
    "llama3.2-vision:11b": ("llama-3.2-11b-vision-instruct", "mllama", 10.7),
    "llama3.2-vision:90b": ("llama-3.2-90b-vision-instruct", "mllama", 88.6),
    # ---- DeepSeek ----
    "deepseek-r1:latest": ("deepseek-r1-0528-qwen3-8b", "qwen3", 8.19), "deepseek-r1:8b": ("deepseek-r1-0528-qwen3-8b", "qwen3", 8.19),
    "deepseek-r1:1.5b": ("deepseek-r1-distill-qwen-1.5b", "qwen2", 1.78), "deepseek-r1:7b": ("deepseek-r1-distill-qwen-7b", "qwen2", 7.62),
    "deepseek-r1:14b": ("deepseek-r1-distill-qwen-14b", "qwen2", 14.8), "deepseek-r1:32b": ("deepseek-r1-distill-qwen-32b", "qwen2", 32.8),
    "deepseek-r1:70b": ("deepseek-r1-distill-llama-70b", "llama", 70.6), "deepseek-r1:671b": (R, "deepseek2", 671),
    "deepseek-v3": ("deepseek-v3", "deepseek2", 671), "deepseek-v3.1": ("deepseek-v3.1", "deepseek2", 671),
    "deepseek-v2:latest": ("deepseek-v2-lite", "deepseek2", 15.7), "deepseek-v2:16b": ("deepseek-v2-lite", "deepseek2", 15.7),
    "deepseek-v2:236b": ("deepseek-v2", "deepseek2", 236), "deepseek-v2.5": ("deepseek-v2.5", "deepseek2", 236),
    "deepseek-coder-v2": ("deepseek-coder-v2-lite-instruct", "deepseek2", 15.7),
    "deepseek-coder-v2:16b": ("deepseek-coder-v2-lite-instruct", "deepseek2", 15.7),
    "deepseek-coder-v2:236b": ("deepseek-coder-v2-instruct", "deepseek2", 236),
    "deepseek-coder": ("deepseek-coder-1.3b-instruct", "llama", 1.35), "deepseek-coder:6.7b": ("deepseek-coder-6.7b-instruct", "llama", 6.74),
    "deepseek-coder:33b": ("deepseek-coder-33b-instruct", "llama", 33.3),
    "deepseek-llm": ("deepseek-llm-7b-chat", "llama", 6.91), "deepseek-llm:67b": ("deepseek-llm-67b-chat", "llama", 67.4),
    # ---- Qwen ----
    # qwen3:0.6b / 1.7b and qwen:0.5b: the checkpoint's count (Ollama's page lists 752M / 2.03B / 620M, the tied
    # embedding counted again as the output head)
    "qwen3": ("qwen3-8b", "qwen3", 8.19), "qwen3:0.6b": ("qwen3-0.6b", "qwen3", 0.596), "qwen3:1.7b": ("qwen3-1.7b", "qwen3", 1.72),
    "qwen3:4b": ("qwen3-4b", "qwen3", 4.02), "qwen3:14b": ("qwen3-14b", "qwen3", 14.8), "qwen3:32b": ("qwen3-32b", "qwen3", 32.8),
    "qwen3:30b": ("qwen3-30b-a3b", "qwen3moe", 30.5), "qwen3:235b": ("qwen3-235b-a22b", "qwen3moe", 235),
    "qwen2.5": ("qwen2.5-7b-instruct", "qwen2", 7.62), "qwen2.5:0.5b": ("qwen2.5-0.5b-instruct", "qwen2", 0.494),
    "qwen2.5:1.5b": ("qwen2.5-1.5b-instruct", "qwen2", 1.54), "qwen2.5:3b": ("qwen2.5-3b-instruct", "qwen2", 3.09),
    "qwen2.5:14b": ("qwen2.5-14b-instruct", "qwen2", 14.8), "qwen2.5:32b": ("qwen2.5-32b-instruct", "qwen2", 32.8),
    "qwen2.5:72b": ("qwen2.5-72b-instruct", "qwen2", 72.7),
    "qwen2.5-coder": ("qwen2.5-coder-7b-instruct", "qwen2", 7.62), "qwen2.5-coder:1.5b": ("qwen2.5-coder-1.5b-instruct", "qwen2", 1.54),
    "qwen2.5-coder:14b": ("qwen2.5-coder-14b-instruct", "qwen2", 14.8), "qwen2.5-coder:32b": ("qwen2.5-coder-32b-instruct", "qwen2", 32.8),
    "qwen2": ("qwen2-7b-instruct", "qwen2", 7.62), "qwen2:0.5b": ("qwen2-0.5b-instruct", "qwen2", 0.494),
    "qwen2:1.5b": ("qwen2-1.5b-instruct", "qwen2", 1.54), "qwen2:72b": ("qwen2-72b-instruct", "qwen2", 72.7),
    "qwen": ("qwen1.5-4b-chat", "qwen2", 3.95), "qwen:0.5b": ("qwen1.5-0.5b-chat", "qwen2", 0.464), "qwen:7b": ("qwen1.5-7b-chat", "qwen2", 7.72),
    "qwen:14b": ("qwen1.5-14b-chat", "qwen2", 14.2), "qwen:72b": ("qwen1.5-72b-chat", "qwen2", 72.3), "qwen:110b": ("qwen1.5-110b-chat", "qwen2", 111),
    "qwq": ("qwq-32b", "qwen2", 32.8),
    "qwen3-coder": ("qwen3-coder-30b-a3b-instruct", "qwen3moe", 30.5), "qwen3-coder:480b": ("qwen3-coder-480b-a35b-instruct", "qwen3moe", 480),
    "qwen2.5vl": ("qwen2.5-vl-7b-instruct", "qwen2vl", 8.29), "qwen2.5vl:3b": ("qwen2.5-vl-3b-instruct", "qwen2vl", 3.75),
    "qwen2.5vl:32b": ("qwen2.5-vl-32b-instruct", "qwen2vl", 33.5), "qwen2.5vl:72b": ("qwen2.5-vl-72b-instruct", "qwen2vl", 73.4),
    "qwen3-vl": ("qwen3-vl-8b-instruct", "qwen3vl", 8.77), "qwen3-vl:30b": ("qwen3-vl-30b-a3b-instruct", "qwen3vlmoe", 31.1),
    "qwen3-embedding": ("qwen3-embedding-8b", "qwen3", 7.57), "qwen3-embedding:0.6b": ("qwen3-embedding-0.6b", "qwen3", 0.596),
    "qwen3-embedding:4b": ("qwen3-embedding-4b", "qwen3", 4.02),
    "qwen2-math": ("qwen2.5-math-7b-instruct", "qwen2", 7.62), "qwen3-next": ("qwen3-next-80b-a3b-instruct", "qwen3next", 79.7),
    "codeqwen": (R, "qwen2", 7.25),
    # ---- Google ----
    "gemma3": ("gemma-3-4b-it", "gemma3", 4.3), "gemma3:270m": ("gemma-3-270m-it", "gemma3", 0.268), "gemma3:1b": ("gemma-3-1b-it", "gemma3", 1.0),
    "gemma3:12b": ("gemma-3-12b-it", "gemma3", 12.2), "gemma3:27b": ("gemma-3-27b-it", "gemma3", 27.4),
    "gemma2": ("gemma-2-9b-it", "gemma2", 9.24), "gemma2:2b": ("gemma-2-2b-it", "gemma2", 2.61), "gemma2:27b": ("gemma-2-27b-it", "gemma2", 27.2),
    "gemma": ("gemma-1.1-7b-it", "gemma", 8.54), "gemma:7b": ("gemma-1.1-7b-it", "gemma", 8.54),
    "gemma:2b": ("gemma-1.1-2b-it", "gemma", 2.51),
    "gemma3n": ("gemma-3n-e4b-it", "gemma3n", 6.87), "gemma3n:e2b": ("gemma-3n-e2b-it", "gemma3n", 4.46),
    "codegemma": ("codegemma-7b-it", "gemma", 8.54), "codegemma:2b": ("codegemma-2b", "gemma", 2.51),
    "shieldgemma": ("shieldgemma-9b", "gemma2", 9.24), "shieldgemma:2b": ("shieldgemma-2b", "gemma2", 2.61),
    # embeddinggemma: Ollama's library GGUF is its own gemma3 conversion with pooling (engines/ollama/weights.py);
    # llama.cpp's converter writes gemma-embedding. 308M: the library page's "a 308M parameter multilingual text
    # embedding model" (as github.com/miku/ollamaintro 42-Model-Types.md quotes it; the Dense modules included)
    "embeddinggemma": ("embeddinggemma-300m", ("gemma-embedding", "gemma3"), 0.308),
    "embeddinggemma:300m": ("embeddinggemma-300m", ("gemma-embedding", "gemma3"), 0.308),
    # ---- Mistral ----
    "mistral": ("mistral-7b-instruct-v0.3", "llama", 7.25), "mistral:7b": ("mistral-7b-instruct-v0.3", "llama", 7.25),
    "mistral-nemo": ("mistral-nemo-instruct-2407", "llama", 12.2), "mistral-small": ("mistral-small-24b-instruct-2501", "llama", 23.6),
    "mistral-small:24b": ("mistral-small-24b-instruct-2501", "llama", 23.6), "mistral-small:22b": ("mistral-small-instruct-2409", "llama", 22.2),
    # Ollama's own GGUF names these mistral3; llama.cpp converts the checkpoint's decoder to llama (+ an mmproj)
    "mistral-small3.1": ("mistral-small-3.1-24b-instruct-2503", ("llama", "mistral3"), 24.0),
    "mistral-small3.2": ("mistral-small-3.2-24b-instruct-2506", ("llama", "mistral3"), 24.0),
    "mistral-large": (R, "llama", 123), "mixtral": ("mixtral-8x7b-instruct-v0.1", "llama", 46.7),
    "mixtral:8x22b": ("mixtral-8x22b-instruct-v0.1", "llama", 141), "codestral": ("codestral-22b-v0.1", "llama", 22.2),
    "mathstral": ("mathstral-7b-v0.1", "llama", 7.25), "devstral": (R, "llama", 23.6), "magistral": (R, "llama", 23.6),
    # ---- Microsoft ----
    "phi3": ("phi-3-mini-4k-instruct", "phi3", 3.82), "phi3:14b": ("phi-3-medium-4k-instruct", "phi3", 14.0),
    "phi3.5": ("phi-3.5-mini-instruct", "phi3", 3.82), "phi4": ("phi-4", "phi3", 14.7), "phi4-mini": ("phi-4-mini-instruct", "phi3", 3.84),
    "phi4-reasoning": ("phi-4-reasoning", "phi3", 14.7), "phi4-mini-reasoning": ("phi-4-mini-reasoning", "phi3", 3.84),
    "phi": ("phi-2", "phi2", 2.78), "wizardlm2": ("wizardlm-2-7b", "llama", 7.24), "wizardlm2:7b": ("wizardlm-2-7b", "llama", 7.24),
    "wizardlm2:8x22b": ("wizardlm-2-8x22b", "llama", 141),
    # ---- embeddings ----
    "nomic-embed-text": ("nomic-embed-text-v1.5", "nomic-bert", 0.137), "mxbai-embed-large": ("mxbai-embed-large-v1", "bert", 0.334),
    "all-minilm": ("all-minilm-l6-v2", "bert", 0.0227), "bge-m3": ("bge-m3", "bert", 0.567), "bge-large": ("bge-large-en-v1.5", "bert", 0.334),
    "snowflake-arctic-embed": ("snowflake-arctic-embed-l", "bert", 0.334),
    "snowflake-arctic-embed:335m": ("snowflake-arctic-embed-l", "bert", 0.334),
    "snowflake-arctic-embed:110m": ("snowflake-arctic-embed-m", "bert", 0.109),
    "granite-embedding:278m": ("granite-embedding-278m-multilingual", "bert", 0.278),
    "snowflake-arctic-embed2": ("snowflake-arctic-embed-l-v2.0", "bert", 0.568), "paraphrase-multilingual": ("paraphrase-multilingual-mpnet-base-v2", "bert", 0.278),
    # ---- OpenAI, IBM, Cohere, NVIDIA, others in the catalog ----
    "gpt-oss": ("gpt-oss-20b", "gpt-oss", 20.9), "gpt-oss:120b": ("gpt-oss-120b", "gpt-oss", 117),
    "gpt-oss-safeguard": ("gpt-oss-safeguard-20b", "gpt-oss", 20.9),
    "granite3.3": ("granite-3.3-8b-instruct", "granite", 8.17), "granite3.3:2b": ("granite-3.3-2b-instruct", "granite", 2.53),
    "granite3.2": ("granite-3.2-8b-instruct", "granite", 8.17), "granite3.1-dense": ("granite-3.1-8b-instruct", "granite", 8.17),
    "granite3-dense": ("granite-3.0-2b-instruct", "granite", 2.63), "granite3-dense:8b": ("granite-3.0-8b-instruct", "granite", 8.17),
    "granite3.1-moe": ("granite-3.1-3b-a800m-instruct", "granitemoe", 3.3), "granite3.1-moe:1b": ("granite-3.1-1b-a400m-instruct", "granitemoe", 1.33),
    "granite4:tiny-h": ("granite-4.0-h-tiny", "granitehybrid", 6.94), "granite4:small-h": ("granite-4.0-h-small", "granitehybrid", 32.2),
    # Granite 4.0 Micro: all-attention granitemoehybrid, converted as granite (conversion/granite.py)
    "granite4:micro": ("granite-4.0-micro", "granite", 3.4), "granite4:350m-h": ("granite-4.0-h-350m", "granitehybrid", 0.34),
    "granite4:1b-h": ("granite-4.0-h-1b", "granitehybrid", 1.46),
    "command-r": ("c4ai-command-r-08-2024", "command-r", 32.3), "command-r-plus": (R, "command-r", 104),
    "command-r7b": ("c4ai-command-r7b-12-2024", "cohere2", 8.03), "command-a": ("command-a-03-2025", "cohere2", 111),
    "aya": ("aya-23-8b", "command-r", 8.03), "aya:35b": ("aya-23-35b", "command-r", 35.0),
    "aya-expanse": ("aya-expanse-8b", "command-r", 8.03), "aya-expanse:32b": ("aya-expanse-32b", "command-r", 32.3),
    "nemotron": ("llama-3.1-nemotron-70b-instruct", "llama", 70.6), "nemotron-mini": ("nemotron-mini-4b-instruct", "nemotron", 4.19),
    "nemotron-mini:4b": ("nemotron-mini-4b-instruct", "nemotron", 4.19),  # the page's 4b; 4.19: the config's count
    "nemotron-3-nano": ("nemotron-3-nano-30b-a3b", ("nemotron_h", "nemotron_h_moe"), 31.6),
    "hermes3": ("hermes-3-llama-3.1-8b", "llama", 8.03), "hermes3:70b": ("hermes-3-llama-3.1-70b", "llama", 70.6),
    "dolphin3": ("dolphin3.0-llama3.1-8b", "llama", 8.03), "dolphin3:8b": ("dolphin3.0-llama3.1-8b", "llama", 8.03),
    "openchat": ("openchat-3.5-0106", "llama", 7.24), "openchat:7b": ("openchat-3.5-0106", "llama", 7.24),
    "nous-hermes2": ("nous-hermes-2-solar-10.7b", "llama", 10.7), "nous-hermes2:10.7b": ("nous-hermes-2-solar-10.7b", "llama", 10.7),
    "nous-hermes2:34b": ("nous-hermes-2-yi-34b", "llama", 34.4),
    # tags as the library pages spell them (the size, the variant words, the quant)
    "nous-hermes2:10.7b-solar-q4_0": ("nous-hermes-2-solar-10.7b", "llama", 10.7),
    "nous-hermes2:34b-yi-q4_0": ("nous-hermes-2-yi-34b", "llama", 34.4),
    "dolphin3:8b-llama3.1-q4_K_M": ("dolphin3.0-llama3.1-8b", "llama", 8.03),
    "openchat:7b-v3.5-0106-q4_K_M": ("openchat-3.5-0106", "llama", 7.24),
    "wizardlm2:7b-q4_K_M": ("wizardlm-2-7b", "llama", 7.24),
    "exaone3.5:7.8b-instruct-q4_K_M": ("exaone-3.5-7.8b-instruct", "exaone", 7.82),
    "llava:13b-v1.6-vicuna-q4_0": ("llava-v1.6-vicuna-13b-hf", "llama", 13.0),
    "llava:7b-v1.6-mistral-q4_0": ("llava-v1.6-mistral-7b-hf", "llama", 7.24),
    "gemma:7b-instruct-v1.1-q4_0": ("gemma-1.1-7b-it", "gemma", 8.54),
    "deepseek-coder-v2:16b-lite-instruct-q4_0": ("deepseek-coder-v2-lite-instruct", "deepseek2", 15.7),
    "olmo2:7b-1124-instruct-q4_K_M": ("olmo-2-1124-7b-instruct", "olmo2", 7.3),
    "dolphin-mixtral:8x7b-v2.7-q4_0": ("dolphin-2.7-mixtral-8x7b", "llama", 46.7),
    "deepscaler:1.5b-preview-q4_K_M": ("deepscaler-1.5b-preview", "qwen2", 1.78),
    "minicpm-v:8b-2.6-q4_0": "refused",
    # ollama.com/library/lfm2:latest: LFM2-24B-A2B, lfm2moe, 23.8B, Q4_K_M (the library's one size)
    "lfm2:24b-a2b": ("lfm2-24b-a2b", "lfm2moe", 23.8), "lfm2:24b-q8_0": ("lfm2-24b-a2b", "lfm2moe", 23.8),
    "nous-hermes2-mixtral": ("nous-hermes-2-mixtral-8x7b-dpo", "llama", 46.7), "nous-hermes2-mixtral:8x7b": ("nous-hermes-2-mixtral-8x7b-dpo", "llama", 46.7),
    "openhermes": ("openhermes-2.5-mistral-7b", "llama", 7.24), "zephyr": ("zephyr-7b-beta", "llama", 7.24),
    "vicuna": ("vicuna-7b-v1.5", "llama", 6.74), "vicuna:13b": ("vicuna-13b-v1.5", "llama", 13.0),
    "solar": ("solar-10.7b-instruct-v1.0", "llama", 10.7),
    "yi": ("yi-1.5-6b-chat", "llama", 6.06), "yi:6b": ("yi-1.5-6b-chat", "llama", 6.06), "yi:9b": ("yi-1.5-9b-chat", "llama", 8.83),
    "yi:34b": ("yi-1.5-34b-chat", "llama", 34.4),
    "cogito": ("cogito-v1-preview-llama-8b", "llama", 8.03), "cogito:3b": ("cogito-v1-preview-llama-3b", "llama", 3.61),
    "cogito:14b": ("cogito-v1-preview-qwen-14b", "qwen2", 14.8), "cogito:70b": ("cogito-v1-preview-llama-70b", "llama", 70.6),
    "olmo2": ("olmo-2-1124-7b-instruct", "olmo2", 7.3), "olmo2:13b": ("olmo-2-1124-13b-instruct", "olmo2", 13.7),
    "smollm2": ("smollm2-1.7b-instruct", "llama", 1.71), "smollm2:135m": ("smollm2-135m-instruct", "llama", 0.135),
    "smollm2:360m": ("smollm2-360m-instruct", "llama", 0.362), "smollm": ("smollm-1.7b-instruct", "llama", 1.71),
    "starcoder2": ("starcoder2-3b", "starcoder2", 3.03), "starcoder2:7b": ("starcoder2-7b", "starcoder2", 7.17),
    "starcoder2:15b": ("starcoder2-15b", "starcoder2", 16.0),
    "stablelm2": ("stablelm-2-zephyr-1.6b", "stablelm", 1.64), "internlm2": ("internlm2.5-7b-chat", "internlm2", 7.74),
    "glm4": ("glm-4-9b-chat", "chatglm", 9.4), "falcon3": ("falcon3-7b-instruct", "llama", 7.46), "falcon3:1b": ("falcon3-1b-instruct", "llama", 1.67),
    "falcon3:10b": ("falcon3-10b-instruct", "llama", 10.3), "tulu3": ("llama-3.1-tulu-3-8b", "llama", 8.03),
    "seed-oss": ("seed-oss-36b-instruct", "seed_oss", 36.2), "exaone3.5": ("exaone-3.5-7.8b-instruct", "exaone", 7.82),
    "exaone3.5:7.8b": ("exaone-3.5-7.8b-instruct", "exaone", 7.82), "exaone3.5:2.4b": ("exaone-3.5-2.4b-instruct", "exaone", 2.67),
    "exaone3.5:32b": ("exaone-3.5-32b-instruct", "exaone", 32.0),
    "baichuan2": ("baichuan2-7b-chat", "baichuan", 7.51), "llava": ("llava-v1.6-mistral-7b-hf", "llama", 7.24),
    "llava:13b": ("llava-v1.6-vicuna-13b-hf", "llama", 13.0), "llava:34b": ("llava-v1.6-34b-hf", "llama", 34.4), "kimi-k2": ("kimi-k2-instruct", "deepseek2", 1026),
    "lfm2": ("lfm2-24b-a2b", "lfm2moe", 23.8), "lfm2:24b": ("lfm2-24b-a2b", "lfm2moe", 23.8), "minicpm-v": "refused", "minicpm-v:8b": "refused",
    "moondream": "refused", "moondream:1.8b": "refused",
    # ---- fine-tunes of a catalog base (tools/catalog_rows.py "Ollama library fine-tunes") and names not in the
    # catalog (refused as unknown; an entry added later must have the tag's shapes) ----
    "llama2-uncensored": ("llama2-7b-chat-uncensored", "llama", 6.74), "dolphin-mixtral": ("dolphin-2.7-mixtral-8x7b", "llama", 46.7), "openthinker": ("openthinker-7b", "qwen2", 7.62),
    "orca-mini": (R, "llama", 3.43), "llava-llama3": (R, "llama", 8.03), "deepcoder": ("deepcoder-14b-preview", "qwen2", 14.8),
    "dolphin-mistral": (R, "llama", 7.24), "granite-code": (R, "llama", 3.48), "dolphin-llama3": (R, "llama", 8.03),
    "llava-phi3": (R, "phi3", 3.82), "mistral-openorca": ("mistral-7b-openorca", "llama", 7.24), "starcoder": (R, "starcoder", 1.13),
    "starling-lm": ("starling-lm-7b-beta", "llama", 7.24), "wizard-vicuna-uncensored": (R, "llama", 6.74), "neural-chat": ("neural-chat-7b-v3-3", "llama", 7.24),
    "llama2-chinese": (R, "llama", 6.74), "codegeex4": (R, "chatglm", 9.4), "deepscaler": ("deepscaler-1.5b-preview", "qwen2", 1.78),
    "wizardcoder": (R, "llama", 33.7), "stable-code": (R, "stablelm", 2.8), "nous-hermes": ("nous-hermes-llama-2-7b", "llama", 6.74),
    "exaone-deep": ("exaone-deep-7.8b", "exaone", 7.82), "tinydolphin": (R, "llama", 1.1), "granite3.2-vision": (R, "granite", 2.53),
    "llama3-gradient": (R, "llama", 8.03), "yi-coder": ("yi-coder-9b-chat", "llama", 8.83), "phind-codellama": ("phind-codellama-34b-v2", "llama", 33.7),
    "wizard-math": (R, "llama", 7.24), "llama3-chatqa": ("llama3-chatqa-1.5-8b", "llama", 8.03), "dolphin-phi": ("dolphin-2.6-phi-2", "phi2", 2.78),
    "falcon": (R, "falcon", 7.22), "orca2": (R, "llama", 6.74), "magicoder": (R, "llama", 6.74),
    "samantha-mistral": (R, "llama", 7.24), "meditron": (R, "llama", 6.74), "medllama2": (R, "llama", 6.74),
    "mistrallite": (R, "llama", 7.24), "stable-beluga": ("stablebeluga-7b", "llama", 6.74), "athene-v2": ("athene-v2-chat", "qwen2", 72.7),
    "reflection": (R, "llama", 70.6), "r1-1776": ("r1-1776-distill-llama-70b", "llama", 70.6), "smallthinker": ("smallthinker-3b-preview", "qwen2", 3.4),
    "bespoke-minicheck": (R, "qwen2", 7.62), "opencoder": (R, "llama", 7.77), "marco-o1": ("marco-o1-7b", "qwen2", 7.62),
    "sailor2": (R, "qwen2", 8.7), "duckdb-nsql": (R, "llama", 6.74), "notux": ("notux-8x7b-v1", "llama", 46.7), "notus": ("notus-7b-v1", "llama", 7.24),
    "goliath": (R, "llama", 118), "falcon2": (R, "falcon", 11.1), "xwinlm": (R, "llama", 6.74), "codeup": (R, "llama", 13.0),
    "everythinglm": (R, "llama", 13.0), "llama-pro": (R, "llama", 8.36), "yarn-llama2": (R, "llama", 6.74),
    "yarn-mistral": (R, "llama", 7.24), "solar-pro": (R, "llama", 22.1), "wizardlm-uncensored": (R, "llama", 13.0),
    "open-orca-platypus2": (R, "llama", 13.0), "nexusraven": (R, "llama", 13.0), "dbrx": (R, "dbrx", 132),
    "megadolphin": (R, "llama", 120), "stablelm-zephyr": (R, "stablelm", 2.8), "codebooga": (R, "llama", 33.7),
    "nuextract": ("nuextract-3.8b", "phi3", 3.82), "firefunction-v2": ("llama-3-firefunction-v2", "llama", 70.6), "reader-lm": (R, "qwen2", 1.54),
    "bakllava": (R, "llama", 7.24), "wizardlm": (R, "llama", 6.74), "sqlcoder": (R, "starcoder", 15.5),
}


TOLERANCE = 0.15


def _spec(name: str):
    return resolve(name, tag_formats=True)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_ollama_name_is_its_model_or_refused(name):
    row = NAMES[name]
    if row == "refused":
        with pytest.raises(ModelError) as e:
            _spec(name)
        msg = str(e.value)
        assert "\n" not in msg and f"Ollama's {catalog.normalize(name).split(':')[0]} is " in msg, msg
        return
    slug, arch, billions = row
    try:
        spec = _spec(name)
    except ModelError as e:
        assert slug is None, f"{name} must resolve to {slug}: {e}"
        assert "\n" not in str(e) and "unknown model" in str(e), str(e)
        return
    bare = split_quant(name)[0]
    entry = catalog.lookup(bare) or catalog.lookup(names.ollama_tag(bare)[0])
    if slug is not None:
        assert entry.slug == slug
    assert spec.architecture in ((arch,) if isinstance(arch, str) else arch), (
        f"{name} -> {entry.slug}: {spec.architecture}, Ollama ships {arch}")
    total = spec.params_total + sum(t.params for t in spec.towers)
    assert abs(total - billions * 1e9) <= TOLERANCE * billions * 1e9, (
        f"{name} -> {entry.slug}: {total / 1e9:.2f}B, Ollama's {name} is {billions}B")


@pytest.mark.parametrize(("name", "latest"), [("deepseek-r1", "deepseek-r1:8b"), ("deepseek-v2", "deepseek-v2:16b")])
def test_bare_name_of_a_catalog_model_says_what_ollama_pulls(name, latest):
    """The library names that are also a catalog model's own name (catalog.OLLAMA_LATEST): the bare name is that
    model (DeepSeek-R1 671B, DeepSeek-V2 236B) with a label naming Ollama's latest tag; :latest is that tag."""
    spec = _spec(name)
    assert spec.architecture == "deepseek2" and spec.params_total > 200e9
    assert any(latest in label for label in spec.labels)
    assert catalog.resolve_slug(f"{name}:latest") == catalog.resolve_slug(latest)


# the names this file was written for: `oomkit check NAME` answers on both engines (0: fits, 1: does not; 2: refused)
CLI = {"dolphin3": 0, "openchat": 0, "wizardlm2": 0, "nous-hermes2": 0, "exaone3.5": 0, "nemotron-mini": 0,
       "minicpm-v": 2, "moondream": 2, "embeddinggemma": 0, "lfm2": 0}


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama"])
@pytest.mark.parametrize("name", sorted(CLI))
def test_check_answers_on_a_4090(name, engine):
    r = subprocess.run([sys.executable, "-m", "oomkit", "check", name, "--gpu", "RTX 4090", "--engine", engine],
                       capture_output=True, text=True, timeout=120)
    if CLI[name] == 2:
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    else:
        assert r.returncode in (0, 1), r.stderr


def test_a_namespace_copy_of_an_unsized_library_is_refused_offline():
    """An Ollama user's copy of a library oomkit cannot size ("<user>/moondream-abliterated:1.8b") is refused with
    the library's reason, without asking the hub."""
    with pytest.raises(ModelError, match="moondream:1.8b: Ollama's moondream is moondream2"):
        _spec("someuser/moondream-abliterated:1.8b")


def test_a_namespace_copy_of_llama32_vision_reads_as_the_library_tag():
    """"huihui_ai/llama3.2-vision-abliterated:11b" (refused while oomkit had no mllama) is the library's
    llama3.2-vision:11b: the same shapes, 'abliterated' read as a same-shape word."""
    spec = _spec("huihui_ai/llama3.2-vision-abliterated:11b")
    assert spec.architecture == "mllama" and any("llama3.2-vision:11b" in label for label in spec.labels)


@pytest.mark.parametrize(("engine", "rc"), [("llama.cpp", 2), ("ollama", 2)])
def test_llama32_vision_on_engines_without_mllama(engine, rc):
    """llama.cpp never had mllama; Ollama's newest release runs GGUFs on llama-server only (v0.30.0 deleted its
    mllama runner and model code): both refuse in one line. Ollama 0.12.10 (its own engine) sizes it."""
    r = subprocess.run([sys.executable, "-m", "oomkit", "check", "llama3.2-vision", "--gpu", "RTX 4090", "--engine",
                        engine], capture_output=True, text=True, timeout=120)
    assert r.returncode == rc and r.stderr.count("\n") == 1 and "mllama" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "oomkit", "check", "llama3.2-vision", "--gpu", "RTX 4090", "--engine",
                        "ollama", "--engine-version", "0.12.10"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_bge_m3_is_the_f16_gguf_of_8192_tokens_for_gguf_engines():
    """`bge-m3` is both a catalog slug and an Ollama library name: GGUF engines take the library's F16 tags
    (ollama.com/library/bge-m3: 567m, F16), vLLM the checkpoint as published. Its GGUF holds 8192 positions:
    llama.cpp's converter drops XLM-R's 1 + pad_token_id offset rows from max_position_embeddings 8194
    (conversion/bert.py XLMRobertaModel), so the default context is 8192, not 8194 padded to 8448."""
    gguf = resolve("bge-m3", tag_formats=True)
    assert gguf.weights.format.upper() == "F16" and gguf.n_ctx_train == 8192
    for engine in ("ollama", "llama.cpp"):
        r = subprocess.run([sys.executable, "-m", "oomkit", "check", "bge-m3", "--gpu", "RTX 4090", "--engine",
                            engine], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
        assert "· F16 ·" in r.stdout and "context 8192 (the model's maximum)" in r.stdout, r.stdout
    assert resolve("bge-m3", tag_formats=False).weights.format.upper() != "F16"
