"""A second held-out sweep of model names as people typed them in 2025-2026 (vLLM / llama.cpp / Ollama / MLX commands,
configs and scripts in public issues and repositories), resolved offline (HF_HUB_OFFLINE=1: the hub is never asked).

Each row names where the name was seen: a GitHub issue or pull request, or a public file found by its exact text
(the library's find_string id, "fs:<id>"). Each expected figure is the model card's or the publisher's, never
oomkit's output: the architecture is the llama.cpp architecture the model's GGUF carries (general.architecture), the
base model is the repo the derivative's card names, the parameter count is the card's total (held within 15 %), and
the weight format is the one the publisher's naming convention stands for (model/names.py cites each). A name whose
model or format cannot be read offline is a one-line error that says why, never a neighbour of another shape.
"""

from __future__ import annotations

import pytest

from oomkit.errors import OomkitError
from oomkit.model import catalog, names
from oomkit.model.resolve import resolve, split_quant
from tests.hardware_fakes import run_oomkit


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# (name as typed, where it was seen, GGUF-loading engine?, llama.cpp architecture (None: not checked), base repo,
#  card's total parameters in billions (None: the card gives no total the checkpoint's decoder can be held to),
#  weight format (None: whatever the repo publishes))
RESOLVED = [
    # ---- unsloth / bartowski / lmstudio-community GGUF repos, as llama.cpp -hf and Ollama's hf.co/ pull them ----
    ("unsloth/gemma-4-12b-it-GGUF:UD-Q4_K_XL", "unslothai/unsloth#5981", True, "gemma4", "google/gemma-4-12B-it",
     12, "UD-Q4_K_XL"),
    ("unsloth/gemma-3-12b-it-GGUF:UD-Q2_K_XL", "unslothai/unsloth#2530", True, "gemma3", "google/gemma-3-12b-it",
     12, "UD-Q2_K_XL"),
    ("unsloth/gemma-3-12b-it-GGUF:Q4_0", "unslothai/unsloth#2530", True, "gemma3", "google/gemma-3-12b-it", 12, "Q4_0"),
    ("hf.co/lmstudio-community/Qwen2.5-7B-Instruct-1M-GGUF:Q6_K", "PlanExeOrg/PlanExe#3", True, "qwen2",
     "Qwen/Qwen2.5-7B-Instruct-1M", 7.6, "Q6_K"),
    ("bartowski/Qwen_Qwen3.5-27B-GGUF:Q8_0", "ikawrakow/ik_llama.cpp#1520 (bartowski/Qwen_Qwen3.5-27B-Q8_0.gguf)",
     True, "qwen35", "Qwen/Qwen3.5-27B", 27, "Q8_0"),
    ("unsloth/GLM-4.5-Air-GGUF:UD-Q3_K_XL", "ikawrakow/ik_llama.cpp#675", True, "glm4moe", "zai-org/GLM-4.5-Air", 106,
     "UD-Q3_K_XL"),
    ("unsloth/Qwen3-Coder-Next-GGUF:UD-Q8_K_XL", "ggml-org/llama.cpp#19355", True, "qwen3next", "Qwen/Qwen3-Coder-Next",
     80, "UD-Q8_K_XL"),
    ("unsloth/Qwen3.5-35B-A3B-GGUF:UD-Q4_K_XL", "ggml-org/llama.cpp#19906", True, "qwen35moe", "Qwen/Qwen3.5-35B-A3B",
     35, "UD-Q4_K_XL"),
    ("hf.co/unsloth/gemma-4-E4B-it-qat-GGUF:UD-Q4_K_XL", "fs:61025446765", True, "gemma4", "google/gemma-4-E4B-it",
     None, "UD-Q4_K_XL"),
    ("hf.co/unsloth/gpt-oss-20b-GGUF:latest", "fs:53370722215", True, "gpt-oss", "openai/gpt-oss-20b", 21, None),
    ("hf.co/unsloth/Qwen3.5-4B-GGUF:UD-Q4_K_XL", "fs:58424713841", True, "qwen35", "Qwen/Qwen3.5-4B", None,
     "UD-Q4_K_XL"),
    ("hf.co/unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q3_K_XL", "fs:54674013163", True, "qwen35moe", "Qwen/Qwen3.6-35B-A3B", 35,
     "UD-Q3_K_XL"),
    # unsloth's file of that type is gpt-oss-20b-UD-Q8_K_XL.gguf: Ollama's hf.co tag matches it without the UD-
    ("hf.co/unsloth/gpt-oss-20b-GGUF:Q8_K_XL", "fs:2985871960", True, "gpt-oss", "openai/gpt-oss-20b", 21,
     "UD-Q8_K_XL"),
    ("hf.co/unsloth/gemma-4-e4b-it-GGUF", "fs:51814412110", True, "gemma4", "google/gemma-4-E4B-it", None, None),
    ("hf.co/unsloth/Qwen3-4B-Thinking-2507-GGUF:Q6_K", "fs:47995439817", True, "qwen3", "Qwen/Qwen3-4B-Thinking-2507",
     4.0, "Q6_K"),
    ("hf.co/unsloth/DeepSeek-R1-Distill-Qwen-7B-GGUF:latest", "fs:59839072165", True, "qwen2",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", 7.6, None),
    ("hf.co/unsloth/Qwen3.6-35B-A3B-GGUF:UD-Q4_K_XL", "fs:68842559125", True, "qwen35moe", "Qwen/Qwen3.6-35B-A3B", 35,
     "UD-Q4_K_XL"),
    ("lmstudio-community/Qwen3-Coder-30B-A3B-Instruct-GGUF", "fs:52271790634", True, "qwen3moe",
     "Qwen/Qwen3-Coder-30B-A3B-Instruct", 30.5, None),
    ("lmstudio-community/Qwen3.5-9B-GGUF:Q4_K_M", "fs:71519631229", True, "qwen35", "Qwen/Qwen3.5-9B", 9, "Q4_K_M"),
    ("lmstudio-community/Qwen3.5-0.8B-GGUF:Q4_K_M", "fs:62674495669", True, "qwen35", "Qwen/Qwen3.5-0.8B", 0.8,
     "Q4_K_M"),
    ("lmstudio-community/gemma-3-12b-it-GGUF", "fs:56891269594", True, "gemma3", "google/gemma-3-12b-it", 12, None),
    ("bartowski/gemma-4-E4B-it-GGUF", "fs:54728575894", True, "gemma4", "google/gemma-4-E4B-it", None, None),
    ("lmstudio-community/gemma-4-E4B-it-GGUF", "fs:54728575894", True, "gemma4", "google/gemma-4-E4B-it", None, None),
    ("unsloth/Qwen3.5-9B-GGUF:UD-Q4_K_XL", "fs:53164188255 (Qwen3.5-9B-UD-Q4_K_XL.gguf)", True, "qwen35",
     "Qwen/Qwen3.5-9B", 9, "UD-Q4_K_XL"),
    ("unsloth/GLM-4.6-GGUF:UD-Q2_K_XL", "fs:25126932834", True, "glm4moe", "zai-org/GLM-4.6", 355, "UD-Q2_K_XL"),
    ("unsloth/GLM-4.6-GGUF:UD-TQ1_0", "fs:54069977441 (GLM-4.6-UD-TQ1_0.gguf)", True, "glm4moe", "zai-org/GLM-4.6", 355,
     "UD-TQ1_0"),
    ("unsloth/GLM-4.6-GGUF:UD-IQ2_M", "fs:62153062932", True, "glm4moe", "zai-org/GLM-4.6", 355, "UD-IQ2_M"),
    ("unsloth/GLM-4.6-GGUF:UD-IQ2_XXS", "fs:18032945231", True, "glm4moe", "zai-org/GLM-4.6", 355, "UD-IQ2_XXS"),
    ("unsloth/GLM-4.6V-GGUF", "fs:71320620122", True, "glm4moe", "zai-org/GLM-4.6V", 106, None),
    ("unsloth/Kimi-K2.7-Code-GGUF", "fs:57661709256", True, "deepseek2", "moonshotai/Kimi-K2.7-Code", 1000, None),
    ("unsloth/Kimi-K2.5-GGUF:UD-TQ1_0", "fs:56298275901", True, "deepseek2", "moonshotai/Kimi-K2.5", 1000, "UD-TQ1_0"),
    ("unsloth/Kimi-K2.6-GGUF:UD-Q2_K_XL", "fs:59111269777", True, "deepseek2", "moonshotai/Kimi-K2.6", 1000,
     "UD-Q2_K_XL"),
    ("unsloth/Kimi-K2-Instruct-GGUF:UD-Q2_K_XL", "fs:22138449786", True, "deepseek2", "moonshotai/Kimi-K2-Instruct",
     1000, "UD-Q2_K_XL"),
    ("unsloth/Kimi-K2-Thinking-GGUF:UD-Q2_K_XL", "fs:49570835166", True, "deepseek2", "moonshotai/Kimi-K2-Thinking",
     1000, "UD-Q2_K_XL"),
    ("hf.co/ibm-granite/granite-4.0-h-tiny-GGUF:Q4_K_M", "fs:55176511923", True, "granitehybrid",
     "ibm-granite/granite-4.0-h-tiny", 7, "Q4_K_M"),
    ("lmstudio-community/granite-4.0-h-tiny-GGUF:Q8_0", "fs:27318728809", True, "granitehybrid",
     "ibm-granite/granite-4.0-h-tiny", 7, "Q8_0"),
    ("unsloth/granite-4.0-h-tiny-GGUF:Q4_K_M", "fs:40000700988", True, "granitehybrid",
     "ibm-granite/granite-4.0-h-tiny", 7, "Q4_K_M"),
    ("LiquidAI/LFM2-2.6B-GGUF:Q4_K_M", "fs:62528100228", True, "lfm2", "LiquidAI/LFM2-2.6B", 2.6, "Q4_K_M"),
    ("unsloth/Devstral-Small-2507-GGUF", "fs:59610221178", True, "llama", "mistralai/Devstral-Small-2507", 24, None),
    ("bartowski/mistralai_Devstral-Small-2507-GGUF:Q4_K_M", "fs:59111758159", True, "llama",
     "mistralai/Devstral-Small-2507", 24, "Q4_K_M"),
    ("hf.co/bartowski/Devstral-Small-2507-GGUF", "fs:53766625984", True, "llama", "mistralai/Devstral-Small-2507", 24,
     None),
    ("mistralai/Devstral-Small-2507_gguf", "fs:56188930443", True, "llama", "mistralai/Devstral-Small-2507", 24, None),
    # Ollama's ModelScope pull (were: unknown model)
    ("modelscope.cn/lmstudio-community/GLM-Z1-32B-0414-GGUF:Q8_0", "zai-org/GLM-4#752", True, "glm4",
     "THUDM/GLM-Z1-32B-0414", 32, "Q8_0"),
    # ---- Ollama library tags with size and quant suffixes ----
    ("qwen3-coder:30b", "ollama/ollama#17024", True, "qwen3moe", "Qwen/Qwen3-Coder-30B-A3B-Instruct", 30.5, "Q4_K_M"),
    ("qwen3-vl:30b-a3b-instruct", "continuedev/continue#9668", True, "qwen3vlmoe", "Qwen/Qwen3-VL-30B-A3B-Instruct",
     31, "Q4_K_M"),
    ("qwen3-next:80b-a3b-instruct-q4_K_M", "ollama/ollama#13466", True, "qwen3next", "Qwen/Qwen3-Next-80B-A3B-Instruct",
     80, "Q4_K_M"),
    ("gemma3n:e4b-it-q8_0", "fs:44950378919", True, "gemma3n", "google/gemma-3n-E4B-it", None, "Q8_0"),
    ("gemma3n:e4b-it-fp16", "fs:15908088212", True, "gemma3n", "google/gemma-3n-E4B-it", None, "F16"),
    ("mistral-small3.2:24b-instruct-2506-q4_K_M", "fs:55717638563", True, "llama",
     "mistralai/Mistral-Small-3.2-24B-Instruct-2506", 24, "Q4_K_M"),
    ("mistral-small3.2:24b-instruct-2506-q8_0", "fs:71095475695", True, "llama",
     "mistralai/Mistral-Small-3.2-24B-Instruct-2506", 24, "Q8_0"),
    ("mistral-small3.2:24b-instruct-2506-fp16", "fs:52406836373", True, "llama",
     "mistralai/Mistral-Small-3.2-24B-Instruct-2506", 24, "F16"),
    ("qwen2.5:32b-instruct-q4_K_M", "fs:53759782615", True, "qwen2", "Qwen/Qwen2.5-32B-Instruct", 32.8, "Q4_K_M"),
    # ollama.com/library/qwen3.6: the 27b tag is Qwen/Qwen3.6-27B (were: unknown model)
    ("qwen3.6:27b", "fs:55290234776, fs:70203501313", True, "qwen35", "Qwen/Qwen3.6-27B", 27, "Q4_K_M"),
    ("qwen3.6:27b-q8_0", "fs:59225981167", True, "qwen35", "Qwen/Qwen3.6-27B", 27, "Q8_0"),
    # a month-year release date in the tag (were: unknown model)
    ("command-r7b:7b-12-2024-q4_K_M", "fs:29748852263", True, "cohere2", "CohereForAI/c4ai-command-r7b-12-2024", None,
     "Q4_K_M"),
    ("dengcao/Qwen3-Embedding-4B:Q5_K_M", "fs:45236906477", True, "qwen3", "Qwen/Qwen3-Embedding-4B", 4.0, "Q5_K_M"),
    # the base or version a fine-tune's repo name holds, restated in the tag (were: unknown model)
    ("hermes3:8b-llama3.1-q4_K_M", "fs:60040746240", True, "llama", "NousResearch/Hermes-3-Llama-3.1-8B", 8.0,
     "Q4_K_M"),
    ("cogito:32b-v1-preview-qwen-q4_K_M", "fs:261554870", True, "qwen2", "deepcogito/cogito-v1-preview-qwen-32B", 32.8,
     "Q4_K_M"),
    ("cogito:8b-v1-preview-llama-q4_K_M", "fs:6858304806", True, "llama", "deepcogito/cogito-v1-preview-llama-8B", 8.0,
     "Q4_K_M"),
    ("tinyllama:1.1b-chat-v1-q4_0", "fs:67206978763", True, "llama", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", 1.1, "Q4_0"),
    # ---- RedHatAI / nvidia / the makers' quantized checkpoints, as vLLM loads them ----
    ("RedHatAI/Mixtral-8x7B-Instruct-v0.1-FP8", "vllm-project/vllm#23192", False, "llama",
     "mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, "ct-float-quantized"),
    ("nvidia/Llama-3.1-70B-Instruct-FP8", "vllm-project/vllm#23192", False, "llama", "meta-llama/Llama-3.1-70B-Instruct",
     70, "modelopt-fp8"),
    ("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", "QwenLM/Qwen3-VL#1684", False, "qwen3vlmoe",
     "Qwen/Qwen3-VL-235B-A22B-Instruct", 235, "fp8-block"),
    ("nvidia/GLM-5.2-NVFP4", "vllm-project/recipes#586", False, None, "zai-org/GLM-5.2", 753, "modelopt-nvfp4"),
    ("nvidia/MiniMax-M2.7-NVFP4", "fs:57088244003, fs:51926568006", False, None, "MiniMaxAI/MiniMax-M2.7", 230,
     "modelopt-nvfp4"),
    ("RedHatAI/gemma-4-12B-it-NVFP4", "vllm-project/recipes#763", False, "gemma4", "google/gemma-4-12B-it", 12,
     "ct-nvfp4-pack-quantized"),
    ("RedHatAI/gemma-4-12B-it-FP8-Dynamic", "vllm-project/recipes#763", False, "gemma4", "google/gemma-4-12B-it", 12,
     "ct-float-quantized"),
    ("RedHatAI/gemma-4-31B-it-NVFP4", "vllm-project/recipes#763", False, "gemma4", "google/gemma-4-31B-it", 30.7,
     "ct-nvfp4-pack-quantized"),
    ("RedHatAI/gemma-4-31B-it-FP8-block", "vllm-project/recipes#763", False, "gemma4", "google/gemma-4-31B-it", 30.7,
     "ct-float-quantized"),
    ("RedHatAI/MiniMax-M2.5-NVFP4", "vllm-project/recipes#763", False, None, "MiniMaxAI/MiniMax-M2.5", 230,
     "ct-nvfp4-pack-quantized"),
    ("RedHatAI/Qwen2.5-32B-FP8-dynamic", "vllm-project/recipes#763", False, "qwen2", "Qwen/Qwen2.5-32B", 32.8,
     "ct-float-quantized"),
    ("RedHatAI/Qwen2.5-VL-72B-Instruct-FP8-dynamic", "vllm-project/recipes#763", False, "qwen2vl",
     "Qwen/Qwen2.5-VL-72B-Instruct", 73.4, "ct-float-quantized"),
    ("RedHatAI/Qwen2.5-VL-7B-Instruct-FP8-Dynamic", "vllm-project/recipes#763", False, "qwen2vl",
     "Qwen/Qwen2.5-VL-7B-Instruct", 8.29, "ct-float-quantized"),
    ("RedHatAI/Qwen3-235B-A22B-Instruct-2507-NVFP4", "vllm-project/recipes#763", False, "qwen3moe",
     "Qwen/Qwen3-235B-A22B-Instruct-2507", 235, "ct-nvfp4-pack-quantized"),
    ("RedHatAI/Qwen3-32B-FP8-dynamic", "vllm-project/recipes#763", False, "qwen3", "Qwen/Qwen3-32B", 32.8,
     "ct-float-quantized"),
    ("RedHatAI/Qwen3-32B-FP8-block", "vllm-project/recipes#763", False, "qwen3", "Qwen/Qwen3-32B", 32.8,
     "ct-float-quantized"),
    ("RedHatAI/Qwen3-32B-NVFP4A16", "vllm-project/recipes#763", False, "qwen3", "Qwen/Qwen3-32B", 32.8,
     "ct-nvfp4-pack-quantized"),
    ("RedHatAI/Qwen3-4B-FP8-dynamic", "vllm-project/recipes#763", False, "qwen3", "Qwen/Qwen3-4B", 4.0,
     "ct-float-quantized"),
    # llm-compressor's channel FP8 (strategy: channel, dynamic per-token activations; fs:70428144645), not 128x128 blocks
    ("zai-org/GLM-4.5-Air-FP8", "fs:70428144645", False, "glm4moe", "zai-org/GLM-4.5-Air", 106, "ct-float-quantized"),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "fs:58724049396", False, "nemotron_h_moe",
     "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6, "modelopt-nvfp4"),
    ("tiiuae/Falcon3-7B-Instruct-GPTQ-Int4", "fs:28371477954", False, "llama", "tiiuae/Falcon3-7B-Instruct", 7,
     "gptq"),
    # ---- AWQ by publisher: AutoAWQ GEMM, or llm-compressor's compressed-tensors ----
    ("QuantTrio/MiniMax-M2-AWQ", "fs:51963530694", False, None, "MiniMaxAI/MiniMax-M2", 230, "awq"),
    ("QuantTrio/MiniMax-M2.5-AWQ", "fs:51963530694", False, None, "MiniMaxAI/MiniMax-M2.5", 230, "awq"),
    ("Salyut1/GLM-4.7-Flash-AWQ", "fs:51963530694", False, "deepseek2", "zai-org/GLM-4.7-Flash", 30, "awq"),
    # cyankiwi's "-AWQ-4bit" load through compressed-tensors (1CatAI/1Cat-vLLM#5's traceback: compressed_tensors.py
    # get_scheme); were: AutoAWQ GEMM
    ("cyankiwi/Qwen3.5-35B-A3B-AWQ-4bit", "1CatAI/1Cat-vLLM#5", False, "qwen35moe", "Qwen/Qwen3.5-35B-A3B", 35,
     "ct-pack-quantized"),
    ("cyankiwi/MiniMax-M2-AWQ-4bit", "fs:71609133307", False, None, "MiniMaxAI/MiniMax-M2", 230, "ct-pack-quantized"),
    ("cyankiwi/MiniMax-M2.7-AWQ-4bit", "fs:56456551895", False, None, "MiniMaxAI/MiniMax-M2.7", 230,
     "ct-pack-quantized"),
    ("cyankiwi/Qwen3-VL-2B-Instruct-AWQ-4bit", "fs:68588603318", False, "qwen3vl", "Qwen/Qwen3-VL-2B-Instruct", None,
     "ct-pack-quantized"),
    ("cyankiwi/GLM-4.6V-AWQ-8bit", "fs:71320620122", False, "glm4moe", "zai-org/GLM-4.6V", 106, "ct-pack-quantized"),
    ("cyankiwi/Kimi-Linear-48B-A3B-Instruct-AWQ-8bit", "nlzy/vllm-gfx906#54", False, "kimi-linear",
     "moonshotai/Kimi-Linear-48B-A3B-Instruct", 48, "ct-pack-quantized"),
    # llm-compressor's AWQ named with its scheme (were: unknown model)
    ("nm-testing/Qwen3-30B-A3B-awq-w4a16-g128-sym", "vllm-project/llm-compressor#1406", False, "qwen3moe",
     "Qwen/Qwen3-30B-A3B", 30.5, "ct-pack-quantized"),
    # ---- MLX ----
    ("mlx-community/Qwen3-Coder-Next-4bit", "ml-explore/mlx-lm#844", False, "qwen3next", "Qwen/Qwen3-Coder-Next", 80,
     "mlx-affine"),
    # the format before "-mlx" (were: unknown model)
    ("nightmedia/Qwen3-Coder-Next-mxfp4-mlx", "ml-explore/mlx-lm#844", False, "qwen3next", "Qwen/Qwen3-Coder-Next", 80,
     "mlx-mxfp4"),
    # "-MLX-Q8" (were: unknown model); the card's safetensors total is 1.78B
    ("mlx-community/DeepSeek-R1-Distill-Qwen-1.5B-MLX-Q8", "cubist38/mlx-openai-server#4", False, "qwen2",
     "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 1.78, "mlx-affine"),
    ("mlx-community/gemma-3-4b-it-4bit-DWQ", "fs:1526666769", False, "gemma3", "google/gemma-3-4b-it", 4.3,
     "mlx-affine"),
    ("mlx-community/Qwen3-Embedding-0.6B-4bit-DWQ", "fs:56743623369", False, "qwen3", "Qwen/Qwen3-Embedding-0.6B", 0.6,
     "mlx-affine"),
    ("mlx-community/Qwen3-Embedding-4B-4bit-DWQ", "fs:59299079184", False, "qwen3", "Qwen/Qwen3-Embedding-4B", 4.0,
     "mlx-affine"),
    ("lmstudio-community/Qwen3-4B-Thinking-2507-MLX-4bit", "fs:19018900099", False, "qwen3",
     "Qwen/Qwen3-4B-Thinking-2507", 4.0, "mlx-affine"),
    # NVIDIA's model named without its "-BF16" (were: unknown model)
    ("lmstudio-community/NVIDIA-Nemotron-3-Nano-30B-A3B-MLX-4bit", "fs:67611499984", False, "nemotron_h_moe",
     "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6, "mlx-affine"),
    ("mlx-community/Devstral-Small-2507-MLX-4bit", "fs:53766625984", False, "llama", "mistralai/Devstral-Small-2507",
     24, "mlx-affine"),
    # ---- a fine-tune of the same shapes, its words after the format (were: unknown model) ----
    ("sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP", "InternLM/lmdeploy#4556", False, "qwen35", "Qwen/Qwen3.6-27B", 27,
     "modelopt-nvfp4"),
]


@pytest.mark.parametrize("name,seen,gguf,arch,base,params_b,fmt", RESOLVED, ids=[r[0] for r in RESOLVED])
def test_names_resolve_to_their_base(name, seen, gguf, arch, base, params_b, fmt):
    spec = resolve(name, tag_formats=gguf)
    # read from the base's config, or a catalog variant of the base (nvidia's own -FP8 / -NVFP4 repos)
    variant_of = catalog.base_hf_id(split_quant(names.canonical_ref(name))[0])
    assert spec.source.startswith(f"catalog: {base} (") or variant_of == base, spec.source[:120]
    if arch is not None:
        assert spec.architecture == arch
    if params_b is not None:
        assert abs(spec.params_total / (params_b * 1e9) - 1) <= 0.15, spec.params_total
    if fmt is not None:
        assert spec.weights.format == fmt


# ---- the checkpoint's size where a public source gives it (bytes on disk of the weights) ----

@pytest.mark.parametrize("name,gguf,nbytes,seen", [
    # "nvidia/GLM-5.2-NVFP4 464.8" GB (fs:60580517324; "~465 GB", vllm-project/recipes#586): the catalog variant's
    # own quantization_config keeps the dense layers, attention and shared experts in BF16 (was: every linear
    # NVFP4 by the name's convention, 426.8 GB, -8.2 %)
    ("nvidia/GLM-5.2-NVFP4", False, 464.8e9, "fs:60580517324"),
    # "nvidia/MiniMax-M2.7-NVFP4 = 139.9 GB: experts U8 112.3 + FP8 scales 14.0 GB, attention stored F32 10.9 GB
    # (loads BF16)" (fs:60283107559): -4.0 %, the F32 attention counted at the BF16 it loads as (was -6.7 %)
    ("nvidia/MiniMax-M2.7-NVFP4", False, 139.9e9, "fs:60283107559"),
    # "MiniMax-M2-AWQ-4bit | ~115 GB" (fs:70216973034)
    ("cyankiwi/MiniMax-M2-AWQ-4bit", False, 115e9, "fs:70216973034"),
    # "NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4 (Active 3B MoE / NVFP4 / 18GB)" (fs:58724049396)
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", False, 18e9, "fs:58724049396"),
    # "unsloth/Kimi-K2.6-GGUF UD-Q2_K_XL, 390,370,707,888 bytes" (fs:59111269777)
    ("unsloth/Kimi-K2.6-GGUF:UD-Q2_K_XL", True, 390_370_707_888, "fs:59111269777"),
])
def test_checkpoint_size_within_15_percent(name, gguf, nbytes, seen):
    got = resolve(name, tag_formats=gguf).weights.nbytes
    assert abs(got / nbytes - 1) <= 0.15, f"{got / 1e9:.1f} GB vs {nbytes / 1e9:.1f} GB"


def test_nemotron_3_5_lightning_nvfp4_size():
    # "upstreamRepoID = nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", download bytes 19_797_633_387
    # (fs:60705652521; the estimatedDownloadBytes of its MLX re-export, the one published byte count). The ModelOpt
    # MIXED_PRECISION quantized_layers name Nemotron-H's modules (backbone.layers.N.mixer.experts.E.up_proj, ...),
    # read on the decoder's tensors: 21.54 GB, +8.8 % (was 65.3 GB, +230 %, every expert left BF16); what is over is
    # the MTP block, which the config's mtp* exclusion keeps BF16 (2.6 GB of its own routed experts)
    spec = resolve("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", tag_formats=False)
    assert abs(spec.weights.nbytes / 19_797_633_387 - 1) <= 0.15
    # "5.612 MB per NVFP4 expert, 16.5 GB of banks" (fs:57369127849: a serving engine's own count of this
    # checkpoint's 23 MoE layers of 128 experts): up + down, each 4-bit values, an fp8 scale per 16 and an fp32
    # weight_scale_2 (W4A16_NVFP4: no input scale)
    n_layers = spec.n_trunk_layers  # the MTP block (layer 52) is left out
    banks = [t for t in spec.weights.tensors if t.layer is not None and t.layer < n_layers
             and t.name.endswith(("ffn_up_exps.weight", "ffn_down_exps.weight"))]
    assert len(banks) == 2 * 23 and {t.dtype for t in banks} == {"modelopt-nvfp4"}
    assert 5.612e6 <= sum(t.nbytes for t in banks) / (23 * 128) < 5.613e6  # 5,612,552 bytes: "5.612 MB" as quoted
    assert round(sum(t.nbytes for t in banks) / 1e9, 1) == 16.5


def test_modelscope_url_forms_read_as_the_repo():
    for ref in ("modelscope.cn/lmstudio-community/GLM-Z1-32B-0414-GGUF:Q8_0",
                "https://www.modelscope.cn/models/lmstudio-community/GLM-Z1-32B-0414-GGUF"):
        assert names.canonical_ref(ref).startswith("lmstudio-community/GLM-Z1-32B-0414-GGUF")


def test_cyankiwi_awq_is_compressed_tensors_asymmetric():
    q = names.derive("cyankiwi/Qwen3.5-35B-A3B-AWQ-4bit").quantization_config
    w = q["config_groups"]["group_0"]["weights"]
    assert (q["quant_method"], w["num_bits"], w["group_size"], w["symmetric"]) == ("compressed-tensors", 4, 128, False)


def test_awq_scheme_named_in_full():
    q = names.derive("nm-testing/Qwen3-30B-A3B-awq-w4a16-g128-sym").quantization_config
    w = q["config_groups"]["group_0"]["weights"]
    assert (w["num_bits"], w["group_size"], w["symmetric"]) == (4, 128, True)
    q = names.derive("someone/Qwen3-30B-A3B-awq-w4a16-g64-asym").quantization_config
    w = q["config_groups"]["group_0"]["weights"]
    assert (w["group_size"], w["symmetric"]) == (64, False)


def test_tag_words_are_labelled():
    spec = resolve("command-r7b:7b-12-2024-q4_K_M")
    assert any("'12-2024' read as the same-shaped command-r7b:7b" in label for label in spec.labels)
    spec = resolve("qwen3-next:80b-a3b-instruct-q4_K_M")
    assert any("'a3b-instruct' read as the same-shaped qwen3-next:80b" in label for label in spec.labels)


def test_tag_words_not_in_the_models_own_name_still_refuse():
    # cogito's 14b is the Qwen 2.5 fine-tune (deepcogito/cogito-v1-preview-qwen-14B): "llama" is no word of it
    for tag in ("cogito:14b-v1-preview-llama-q4_K_M", "qwen3:30b-a22b", "deepseek-r1:8b-qwen-distill"):
        with pytest.raises(OomkitError, match="unknown model"):
            resolve(tag)


def test_mtp_after_the_format_only_for_a_model_with_a_next_n_block():
    # Qwen3-8B's config has no num_nextn_predict_layers: no MTP file of it exists to be read
    assert names.derive("someone/Qwen3-8B-NVFP4-MTP") is None
    d = names.derive("sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP")
    assert d.dropped == ("text", "mtp")


# ---- names refused, each with the true reason (one line, exit 2 through the CLI) ----

REFUSED = [
    # fine-tunes under their own names: the base is not in the name, so no shapes are claimed
    ("zaydiscold/Qwopus3.6-35B-A3B-v1-MLX-4bit", "ml-explore/mlx-lm#1304", "unknown model"),
    ("mradermacher/QwenLong-L1-32B-GGUF", "Tongyi-Zhiwen/Qwen-Doc#2", "unknown model"),
    ("hf.co/mradermacher/supergemma4-e4b-abliterated-i1-GGUF:Q4_K_M", "fs:61025446765", "unknown model"),
    ("peculiar-ragdoll/Cyber-Tiel-Coder-35B-A3B-GGUF", "fs:71653803285", "unknown model"),
    # the base in the name, but words that are no known same-shape word ("NEO-Imatrix")
    ("hf.co/DavidAU/OpenAi-GPT-oss-20b-abliterated-uncensored-NEO-Imatrix-gguf:Q5_1", "fs:47995439817",
     "unknown model"),
    # REAP prunes MiniMax-M2.5's experts (139B of 230B): never read as the unpruned model
    ("cyankiwi/MiniMax-M2.5-REAP-139B-A10B-AWQ-4bit", "fs:53144082068", "unknown model"),
    # a context extension changes the trained context (128K against Qwen2.5-Coder's 32K): not dropped
    ("hf.co/unsloth/Qwen2.5-Coder-14B-Instruct-128K-GGUF:Q4_K_M", "fs:10109352748", "unknown model"),
    # mixed schemes the name cannot size: INT8 and INT4 in one checkpoint, which modules each is not said
    ("cyankiwi/Qwen3.8-27B-AWQ-BF16-INT4", "fs:69004604461", "unknown model"),
    ("cyankiwi/Qwen3.5-4B-AWQ-INT8-INT4", "vllm-project/recipes#560", "unknown model"),
    # omlx's own mixed quantization ("oQ4"), whose per-tensor bits the name does not give
    ("Jundot/Qwen3.6-35B-A3B-oQ4", "jundot/omlx#807", "unknown model"),
    # Hygon's slimquant checkpoints (-q slimquant_marlin), no naming convention oomkit can read
    ("Qwen/Qwen3.5-35B-A3B-W8A8-INT8", "HYGON-AI/inference-cookbook-das#69", "unknown model"),
    ("Qwen/Qwen3.5-122B-A10B-W8A8-INT8", "HYGON-AI/inference-cookbook-das#69", "unknown model"),
    ("Qwen/Qwen3.5-397B-A17B-W8A8-INT8", "HYGON-AI/inference-cookbook-das#69", "unknown model"),
    # models with no cited config in the catalog
    ("RedHatAI/Mellum2-12B-A2.5B-Thinking-FP8-Dynamic", "vllm-project/recipes#763", "unknown model"),
    ("hf.co/bartowski/EuroLLM-9B-Instruct-GGUF:Q4_K_M", "fs:71095475695", "unknown model"),
    # no such model: Gemma 4 has 26B-A4B and 31B, no 27B
    ("hf.co/unsloth/gemma-4-27b-it-GGUF:Q4_K_M", "fs:54674013163", "unknown model"),
    # Ollama's MLX tags, whose weight format the tag does not give: Ollama's MLX runner loads them, not its GGUF runners
    ("qwen3.6:27b-mlx", "fs:56524073530", "an Ollama tag of an MLX build .*qwen3.6:27b is the GGUF build"),
    # ik_llama.cpp's own quant type: not a llama.cpp file type
    ("ubergarm/GLM-4.5-Air-GGUF:IQ4_KSS", "ikawrakow/ik_llama.cpp#675", "quant 'IQ4_KSS' is ik_llama.cpp's .*upstream llama.cpp cannot load it"),
]


@pytest.mark.parametrize("name,seen,why", REFUSED, ids=[r[0] for r in REFUSED])
def test_names_refused_with_the_reason(name, seen, why):
    with pytest.raises(OomkitError, match=why):
        resolve(name)


def test_refusal_through_the_cli_is_one_line_exit_2():
    p = run_oomkit("check", "cyankiwi/MiniMax-M2.5-REAP-139B-A10B-AWQ-4bit", "--engine", "vllm", "--json",
                   env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "unknown model" in p.stderr
