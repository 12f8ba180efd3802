"""How llama.cpp names and lays out each architecture: which have sliding windows (and their default
patterns), which are recurrent or hybrid, which have no KV cache. Read from llama.cpp@0c1e57098
src/llama-arch.cpp and src/models/<arch>.cpp; shared by the GGUF reader and the llama.cpp engine.
"""

# Architectures with sliding-window layers in llama.cpp, with the pattern each uses when the GGUF gives none
# (load_swa_pattern(ml, n) in src/models/gemma2.cpp, gemma3.cpp, openai-moe.cpp, cohere2.cpp) and the
# window gemma2 assumes when absent (n_swa = 4096).
SWA_PATTERN_DEFAULT = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4}
SWA_WINDOW_DEFAULT = {"gemma2": 4096}
# Architectures llama.cpp runs as pure recurrent (src/llama-arch.cpp llm_arch_is_recurrent).
RECURRENT_ARCHS = {"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"}
# Hybrids whose recurrent layers follow full_attention_interval (src/models/qwen3next.cpp, qwen35*.cpp).
INTERVAL_HYBRIDS = {"qwen3next", "qwen35", "qwen35moe", "minimax-01"}
# Hybrids whose recurrent layers are those with head_count_kv == 0 (granite-hybrid.cpp, jamba.cpp, lfm2.cpp...).
KV_ZERO_HYBRIDS = {"granitehybrid", "jamba", "lfm2", "lfm2moe", "plamo2", "nemotron_h", "nemotron_h_moe"}
# Encoder-only models get no KV cache at all (llama_model::create_memory returns nullptr).
NO_CACHE_ARCHS = {"bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe", "neo-bert", "eurobert",
                  "modern-bert", "gemma-embedding", "t5encoder"}
KNOWN_ARCHS = (
    {"llama", "llama4", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3vl", "qwen3vlmoe", "gemma",
     "gemma3n", "deepseek2", "phi2", "phi3", "phimoe", "granite", "granitemoe", "falcon-h1", "command-r", "olmo2",
     "olmoe", "glm4", "glm4moe", "starcoder2", "internlm2", "mistral3", "smollm3", "exaone4", "deepseek", "minicpm",
     "stablelm", "gpt2", "falcon", "starcoder", "baichuan", "orion", "chatglm", "dbrx", "arctic", "bitnet"}
    | SWA_PATTERN_DEFAULT.keys() | RECURRENT_ARCHS | INTERVAL_HYBRIDS | KV_ZERO_HYBRIDS | NO_CACHE_ARCHS
)

