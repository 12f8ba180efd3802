"""The first llama.cpp build that loads each architecture, so that an older --engine-version is refused ("unknown
model architecture") rather than sized.

src/llama-arch.cpp llm_arch_from_string looks the GGUF's general.architecture up in LLM_ARCH_NAMES and the loader
fails with "unknown model architecture: '<name>'" on a name it lacks (src/llama-model-loader.cpp). Each row is the
master commit that added the name to LLM_ARCH_NAMES (src/llama-arch.cpp; src/llama.cpp or llama.cpp before the
split), found with `git log --reverse -G '"<name>" *}'` on ggml-org/llama.cpp's master (read in the ngxson/llama.cpp
fork's copy of it, to b10587, 2026-08-22), and its build number: llama.cpp's build number is the commit's count on
master (`git rev-list --count`, cmake/build-info.cmake; the release tag bNNNN is cut from it), checked against the
anchors of settings.ERAS (daa422881 = 5137, 225e7a143 = 5913, e81b8e4b7 = 6325, d9c6ce46f = 7832) and issue
#23527's "version: 9272 (1d7ab2b94)". So each first build is exact, not placed by date: the build before it lacks the
name, the build named has it. Names of the pinned source (0c1e570) added after b10587 (qwen4exp, maple, hy_v4,
hrm_text, spark2_5, glm5-next) are not listed and never refused; nor are the names of the first GGUF builds (llama,
falcon, gpt2, gptj, gptneox, mpt: b1041, PR #2717), which predate any build worth sizing.
"""
from __future__ import annotations

from ...errors import OomkitError
from ...model.spec import ModelSpec

# llama.cpp architecture name -> (first build, the PR that added it, its merge commit on master); commit date after #
FIRST_BUILDS: dict[str, tuple[int, int, str]] = {
    "baichuan": (1223, 3009, "4c8643dd6"),  # 2023-09-15
    "starcoder": (1244, 3187, "4fe09dfe6"),  # 2023-09-16
    "refact": (1320, 3329, "f8c90cdba"),  # 2023-10-04
    "bloom": (1361, 3553, "02d2875de"),  # 2023-10-10
    "stablelm": (1515, 3586, "36eed0c42"),  # 2023-11-14
    "qwen": (1596, 4281, "37c746d68"),  # 2023-12-02
    "phi2": (1658, 4490, "b9e74f9bc"),  # 2023-12-18
    "plamo": (1698, 3557, "753be377b"),  # 2023-12-24
    "codeshell": (1920, 5016, "2b3b999ca"),  # 2024-01-19
    "qwen2": (1923, 5037, "9b75cb2b3"),  # 2024-01-19
    "orion": (1990, 5118, "f2e69d28c"),  # 2024-01-28
    "internlm2": (2038, 5184, "ce3206019"),  # 2024-02-01
    "minicpm": (2087, 5346, "316c7faf7"),  # 2024-02-07
    "bert": (2127, 5423, "2891c8aa9"),  # 2024-02-11
    "nomic-bert": (2144, 5468, "ea9c8e114"),  # 2024-02-13
    "gemma": (2223, 5631, "580111d42"),  # 2024-02-21
    "starcoder2": (2308, 5795, "c29af7e22"),  # 2024-03-02
    "mamba": (2366, 5328, "c2101a2e9"),  # 2024-03-08
    "command-r": (2440, 6033, "12247f4c6"),  # 2024-03-15
    "grok": (2512, 6204, "476b0251b"),  # 2024-03-23
    "xverse": (2576, 6301, "069574775"),  # 2024-03-29
    "dbrx": (2665, 6515, "4bd0f93e4"),  # 2024-04-13
    "qwen2moe": (2683, 6074, "f4dea7da1"),  # 2024-04-16
    "olmo": (2697, 6741, "9958c81b7"),  # 2024-04-19
    "phi3": (2717, 6852, "c8297c6af"),  # 2024-04-24
    "jina-bert-v2": (2845, 6826, "b83cc3f5b"),  # 2024-05-11
    "arctic": (2988, 7020, "fbca2f27f"),  # 2024-05-24
    "deepseek2": (3023, 7519, "ee3dff6b8"),  # 2024-05-28
    "bitnet": (3208, 7931, "e112b610a"),  # 2024-06-24
    "t5": (3229, 5763, "6fcbf6823"),  # 2024-06-25
    "gemma2": (3259, 8156, "e57dc6205"),  # 2024-06-28
    "jais": (3282, 8118, "968967376"),  # 2024-07-02
    "openelm": (3305, 7359, "d7fd29fff"),  # 2024-07-05
    "chatglm": (3333, 8031, "905942abd"),  # 2024-07-07
    "t5encoder": (3563, 8900, "7c3f55c10"),  # 2024-08-10
    "nemotron": (3592, 8922, "2a24c8caa"),  # 2024-08-15
    "exaone": (3594, 9025, "c679e0cb5"),  # 2024-08-16
    "rwkv6": (3651, 8980, "8f1d81a0b"),  # 2024-09-01
    "minicpm3": (3765, 9322, "95ca85168"),  # 2024-09-16
    "olmoe": (3766, 9462, "0aadac10c"),  # 2024-09-15
    "granite": (3774, 9412, "0d2ec4383"),  # 2024-09-17
    "granitemoe": (3823, 9438, "3d6bf6919"),  # 2024-09-25
    "chameleon": (3834, 8543, "9a913110c"),  # 2024-09-28
    "olmo2": (4168, 10500, "80acb7b43"),  # 2024-11-25
    "qwen2vl": (4327, 10361, "ba1cb19cd"),  # 2024-12-14
    "deepseek": (4333, 10827, "a0974156f"),  # 2024-12-16
    "wavtokenizer-dec": (4357, 10784, "0bf2d10c5"),  # 2024-12-18
    "deci": (4380, 10669, "6f0c9e034"),  # 2024-12-23
    "cohere2": (4415, 10900, "46be94221"),  # 2025-01-04
    "phimoe": (4453, 11003, "f8feb4b01"),  # 2025-01-09
    "rwkv6qwen2": (4457, 11001, "ee7136c6d"),  # 2025-01-10
    "gemma3": (4875, 12343, "7841fc723"),  # 2025-03-12
    "arwkv7": (4907, 12412, "7dfad387e"),  # 2025-03-18
    "rwkv7": (4907, 12412, "7dfad387e"),  # 2025-03-18
    "plm": (4977, 12457, "f125b8dcc"),  # 2025-03-27
    "bailingmoe": (5002, 12634, "2c3f8b850"),  # 2025-03-30
    "llama4": (5074, 12791, "1466621e7"),  # 2025-04-07
    "qwen3": (5092, 12828, "d3bd7193b"),  # 2025-04-09
    "qwen3moe": (5092, 12828, "d3bd7193b"),  # 2025-04-09
    "glm4": (5115, 12867, "06bb53ad9"),  # 2025-04-11
    "nomic-bert-moe": (5215, 12466, "5f5e39e1b"),  # 2025-04-28
    "dots1": (5668, 14118, "9ae4143bc"),  # 2025-06-15
    "arcee": (5674, 14185, "d7da8dc83"),  # 2025-06-16
    "neo-bert": (5682, 14164, "ad590be98"),  # 2025-06-16
    "gemma3n": (5763, 14400, "8846aace4"),  # 2025-06-26
    "ernie4_5": (5771, 14408, "566c16fcc"),  # 2025-06-28
    "mamba2": (5812, 9126, "5d46babdc"),  # 2025-07-02
    "hunyuan-moe": (5843, 14425, "8f22dc0a5"),  # 2025-07-08
    "smollm3": (5847, 14581, "08382869a"),  # 2025-07-08
    "falcon-h1": (5851, 14534, "04655063c"),  # 2025-07-09
    "jamba": (5856, 7531, "4a5686da2"),  # 2025-07-09
    "granitehybrid": (5868, 13550, "0aedae00e"),  # 2025-07-10
    "lfm2": (5873, 14620, "f5e96b368"),  # 2025-07-11
    "plamo2": (5899, 14560, "68e37a61a"),  # 2025-07-16
    "dream": (5912, 14644, "ab1401982"),  # 2025-07-16
    "ernie4_5-moe": (5924, 14658, "cb887f1bc"),  # 2025-07-17
    "exaone4": (5931, 14630, "e0cb5c5cb"),  # 2025-07-18
    "smallthinker": (6012, 14898, "6c6e397af"),  # 2025-07-28
    "llada": (6042, 14771, "8a4a85627"),  # 2025-07-31
    "hunyuan-dense": (6058, 14878, "0f5ccd6fd"),  # 2025-08-01
    "glm4moe": (6085, 14939, "ef0144c08"),  # 2025-08-05
    "gpt-oss": (6096, 15091, "fd1234cb4"),  # 2025-08-05
    "seed_oss": (6257, 15490, "b1afcab80"),  # 2025-08-23
    "jina-bert-v3": (6309, 13693, "84ab83cc0"),  # 2025-08-28
    "nemotron_h": (6315, 15507, "e8d99dd0b"),  # 2025-08-28
    "gemma-embedding": (6384, 15798, "fb15d649e"),  # 2025-09-04
    "llada-moe": (6483, 16003, "6d758839f"),  # 2025-09-16
    "grovemoe": (6586, 15510, "835b2b915"),  # 2025-09-25
    "apertus": (6671, 15852, "34fcc5a4a"),  # 2025-10-02
    "lfm2moe": (6709, 16464, "aeaf8a36f"),  # 2025-10-07
    "bailingmoe2": (6810, 16063, "84bf3c677"),  # 2025-10-20
    "cogvlm": (6885, 15002, "bacddc049"),  # 2025-10-30
    "qwen3vl": (6887, 16780, "d261223d2"),  # 2025-10-30
    "qwen3vlmoe": (6887, 16780, "d261223d2"),  # 2025-10-30
    "minimax-m2": (6906, 16831, "0de0a0157"),  # 2025-10-31
    "pangu-embedded": (6955, 16941, "9f052478c"),  # 2025-11-05
    "afmoe": (7061, 16477, "e1fcf8b09"),  # 2025-11-14
    "rnd1": (7140, 17433, "4902eebe3"),  # 2025-11-23
    "qwen3next": (7186, 16095, "ff55414c4"),  # 2025-11-28
    "mistral3": (7216, 17644, "cd3c11890"),  # 2025-12-01
    "nemotron_h_moe": (7418, 18058, "299534173"),  # 2025-12-16
    "modern-bert": (7515, 15641, "dfc959b88"),  # 2025-12-22
    "llama-embed": (7531, 18220, "54132f1b1"),  # 2025-12-24
    "mimo2": (7534, 18328, "4cbafad4f"),  # 2025-12-24
    "plamo3": (7563, 17304, "9c675c714"),  # 2025-12-29
    "maincoder": (7614, 18534, "5755e52d1"),  # 2026-01-03
    "exaone-moe": (7727, 18543, "60591f01d"),  # 2026-01-14
    "kimi-linear": (7957, 18755, "3688c4f50"),  # 2026-02-06
    "step35": (7964, 19283, "b83111815"),  # 2026-02-07
    "qwen35": (7990, 19468, "fc0fe4004"),  # 2026-02-11
    "qwen35moe": (7990, 19468, "fc0fe4004"),  # 2026-02-11
    "glm-dsa": (8036, 19460, "752584d5f"),  # 2026-02-13
    "jais2": (8106, 19488, "2bf318fd2"),  # 2026-02-19
    "paddleocr": (8110, 18825, "237958db3"),  # 2026-02-20
    "eurobert": (8160, 19826, "66287bdaa"),  # 2026-02-26
    "mistral4": (8388, 20649, "d34ff7eb5"),  # 2026-03-17
    "deepseek2-ocr": (8530, 17400, "a970515bd"),  # 2026-03-25
    "gemma4": (8637, 21309, "63f8fe0ef"),  # 2026-04-02
    "hunyuan_vl": (8885, 22037, "7bfe60fdf"),  # 2026-04-22
    "talkie": (9337, 22596, "c9d98295a"),  # 2026-05-26
    "deepseek32": (9411, 23346, "1f0aa2a69"),  # 2026-05-29
    "mellum": (9482, 23966, "4fb16eccc"),  # 2026-06-02
    "gemma4-assistant": (9549, 23398, "04eb4c446"),  # 2026-06-07
    "eagle3": (9606, 18039, "88a39274e"),  # 2026-06-12
    "cohere2moe": (9626, 24260, "4988f6e86"),  # 2026-06-13
    "dflash": (9831, 22105, "d1b34251b"),  # 2026-06-28
    "deepseek4": (9840, 24162, "8c146a836"),  # 2026-06-29
    "hy_v3": (9993, 25395, "2969d6d15"),  # 2026-07-14
    "laguna": (10087, 25165, "1f66c3ce1"),  # 2026-07-22
    "minimax-m3": (10135, 24908, "b1d4c6552"),  # 2026-07-26
    "nanbeige": (10153, 25994, "b77d64675"),  # 2026-07-27
    "qwen3tts": (10270, 26254, "071327508"),  # 2026-08-04
    "graniteswitch": (10342, 25107, "157b81fe6"),  # 2026-08-10
    "muse-glimmer": (10349, 26841, "62bf73d25"),  # 2026-08-10
    "pockettts": (10369, 26871, "6e62ba538"),  # 2026-08-11
    "minimax-01": (10437, 27018, "16d222fc5"),  # 2026-08-15
    "kimi-k3": (10448, 26185, "ad1de39e0"),  # 2026-08-15
    "bailingmoe3": (10460, 26608, "373336672"),  # 2026-08-17
    "granite_swa": (10514, 25505, "7221e24f5"),  # 2026-08-19
    "dots3note": (10569, 27060, "5a32f7b66"),  # 2026-08-21
}

# spec.architecture names oomkit reads generically from a config.json model_type that llama.cpp's converter writes
# under another name (conversion/*.py: GlmMoeDsaForCausalLM -> glm-dsa, DeepseekV32ForCausalLM -> deepseek32,
# MiniMaxM2ForCausalLM -> minimax-m2)
_GGUF_NAME = {"glm_moe_dsa": "glm-dsa", "deepseek_v32": "deepseek32", "minimax_m2": "minimax-m2"}


def gguf_architecture(spec: ModelSpec) -> str:
    """The general.architecture llama.cpp's converter writes for the model. Nemotron-H with routed experts is
    nemotron_h_moe (conversion/nemotron.py NemotronHModel.__init__: num_experts_per_tok in the config ->
    MODEL_ARCH.NEMOTRON_H_MOE), the dense Nemotron-H nemotron_h."""
    arch = _GGUF_NAME.get(spec.architecture, spec.architecture)
    if arch == "nemotron_h" and any(la.ffn is not None and la.ffn.n_experts for la in spec.layers):
        return "nemotron_h_moe"
    return arch


# PR #8604 "llama : add Mistral Nemo inference support" (50e05353, 2024-07-22, b3436): build_llama's tensors took
# the head width from attention.key_length (wq {n_embd, n_embd_head_k * n_head}); before it wq was {n_embd, n_embd}
# and a llama GGUF whose heads do not tile the hidden size failed to load ("tensor 'blk.0.attn_q.weight' has wrong
# shape"): Mistral Nemo (128 x 32 heads in 5120), Ollama's mistral-nemo needing 0.2.8 (ollama#6116)
LLAMA_HEAD_WIDTH = (3436, 8604)


def first_build(spec: ModelSpec) -> tuple[str, int, int] | None:
    """(llama.cpp architecture name, the first build that loads it, its PR), or None where every build does."""
    arch = gguf_architecture(spec)
    row = FIRST_BUILDS.get(arch)
    if row is None and arch == "llama":
        a = next((la.attention for la in spec.layers if la.attention is not None
                  and la.attention.n_heads * la.attention.head_dim_k != spec.n_embd), None)
        if a is not None:
            return (f"llama of {a.n_heads} heads x {a.head_dim_k} in {spec.n_embd} (head width apart from the hidden "
                    "size)", *LLAMA_HEAD_WIDTH)
    return None if row is None else (arch, row[0], row[1])


def check_model_build(spec: ModelSpec, build: int, newest: int) -> None:
    """Refuse a model the build predates, in one line naming the build and PR that added its architecture. The
    newest build oomkit models (the default --engine-version) is never refused: it stands for the newest source."""
    first = first_build(spec)
    if first is None or build >= first[1] or build == newest:
        return
    arch, b, pr = first
    raise OomkitError(f"{spec.name}: llama.cpp b{build} has no {arch} architecture (added in b{b}, PR #{pr}); use "
                      f"--engine-version b{b} or newer")
