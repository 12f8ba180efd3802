"""Real users' input, tenth sweep: MODEL NAMES as people typed them in public GitHub issues, pull requests and
discussions of 2025-2026 (each cited): derived and quantized Hugging Face repos (unsloth / bartowski /
lmstudio-community GGUF repos, mlx-community and inferencerlabs MLX, RedHatAI w4a16 and NVFP4, cyankiwi / cpatonn AWQ,
nvidia ModelOpt FP8 / FP4, Intel AutoRound), fine-tunes named after their base (Dolphin, abliterated, Nex-N2),
Ollama tags with quant suffixes and hf.co/ names, LM Studio's `publisher/model@quant` keys, local folders and GGUF
files (split -00001-of-0000N.gguf included), and the families of 2026 (Qwen3.5 / 3.6 / 3.8, Gemma 4, Nemotron 3,
GLM-5.1, Qwen3-Coder-Next). Each runs through `oomkit check` with the engine its thread used, and pasted alone as
MODEL. None of their threads or names is in sweeps 2 to 9, tests/fixtures/commands/real_commands.jsonl,
tests/test_names_heldout*.py, tests/test_names_real_world.py or the held-out verdict fixtures
(tests/fixtures/engine_logs/verdicts/).

Each expectation is the name's own: the architecture is the one llama.cpp writes in the model's GGUF
(general.architecture), the parameter count the model card's total (held within 15 %), the weight format the one the
publisher's naming convention stands for (model/names.py cites each); a name whose model or format cannot be known
offline is a one-line refusal that says why.

Measured (2026-12-06), before this sweep's changes: 41 real names from 38 public threads; 2 answered wrong, both LM
Studio keys with a variant: `mistralai/mistral-small-3.2@q4_k_m` (the key LM Studio's /api/v1/models lists,
lmstudio-bug-tracker#1462) was "no such file", and `qwen3-coder-next@q6_k` (the identifier `lms load` gives the
instance, #1523) "unknown model ... did you mean Qwen/Qwen3-Coder-Next". Both are fixed here (FIXED 2, STILL 0,
RIGHT 39): model/resolve.py reads `KEY@QUANT` as the key's GGUF of that file type, and the catalog has LM Studio's key
mistralai/mistral-small-3.2 as an alias of Mistral Small 3.2 (tools/catalog_rows.py; index.json needs rebuilding).
"""

from __future__ import annotations

import json
import random

import pytest

from oomkit.model.resolve import resolve
from tests.sweep_harness import (
    FIXED,
    RIGHT,
    STILL,
    Case,
    hardware_args,
    offline,  # noqa: F401 (the harness's autouse fixture: no network, a fresh cache)
    one_line_or_answer,
    run_cli,
    sweep_tests,
)


def reads(engine: str, model: str, arch: str | None, params: float | None, fmt: str | None) -> tuple:
    """What the name is: the engine's reading names `model`, with llama.cpp's architecture `arch`, the card's total of
    `params` billion parameters (within 15 %) and weights in `fmt` (a part of the format's name); None: not checked."""
    return ("reads", {"engine": engine, "model": model, "arch": arch, "params": params, "format": fmt})


# (case, the engine its thread ran). Hardware: the thread's where it names one, else a card of the kind it implies,
# on which no expectation depends. The text is the name as typed, quote marks and trailing separators kept.
CASES_AND_ENGINES = [
    # ---- vLLM / SGLang: ModelOpt FP8 / NVFP4, RedHatAI, Intel AutoRound, AWQ, local folders ----
    (Case('v20410', 'https://github.com/vllm-project/vllm/issues/20410', 'model', '8x B200', None, RIGHT,
          'nvidia/DeepSeek-R1-FP4', reads('vllm', 'DeepSeek-R1-FP4', 'deepseek2', 671, 'nvfp4')), 'vllm'),
    (Case('v50019', 'https://github.com/vllm-project/vllm/pull/50019', 'model', 'A100 80GB', None, RIGHT,
          'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8',
          reads('vllm', 'Nemotron-3-Nano-30B-A3B', 'nemotron_h_moe', 31.6, 'fp8')), 'vllm'),
    # v56660: a checkpoint the catalog does not hold (no Nemotron 3 Nano 4B): refused offline, with the reason
    (Case('v56660', 'https://github.com/vllm-project/vllm/pull/56660', 'model', 'RTX 4090', None, RIGHT,
          'nvidia/NVIDIA-Nemotron-3-Nano-4B-FP8',
          ('refuses', "unknown model 'nvidia/NVIDIA-Nemotron-3-Nano-4B-FP8': not a file, not in the built-in catalog")),
     'vllm'),
    (Case('v23826', 'https://github.com/vllm-project/vllm/issues/23826', 'model', 'RTX 5090', None, RIGHT,
          'NVFP4/Qwen3-30B-A3B-Instruct-2507-FP4', reads('vllm', 'Qwen3-30B-A3B', 'qwen3moe', 30.5, 'nvfp4')), 'vllm'),
    (Case('v30855', 'https://github.com/vllm-project/vllm/issues/30855', 'model', 'H100', None, RIGHT,
          'RedHatAI/Qwen3-30B-A3B-NVFP4', reads('vllm', 'Qwen3-30B-A3B-NVFP4', 'qwen3moe', 30.5, 'nvfp4')), 'vllm'),
    (Case('rec810', 'https://github.com/vllm-project/recipes/pull/810', 'model', 'RTX 5090', None, RIGHT,
          'unsloth/Qwen3.8-27B-NVFP4', reads('vllm', 'Qwen3.8-27B', 'qwen35', 27, 'nvfp4')), 'vllm'),
    (Case('candle14', 'https://github.com/scientist-labs/red-candle/issues/14', 'model', 'RTX 4090', None, RIGHT,
          'RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16',
          reads('vllm', 'Llama-3.1-8B', 'llama', 8.0, 'pack-quantized')), 'vllm'),
    # ar1499: the folder Intel's repo is named after, read by that name (int4 with a few layers wider: a lower bound)
    (Case('ar1499', 'https://github.com/intel/auto-round/issues/1499', 'model', 'H100', None, RIGHT,
          'Qwen3-Next-80B-A3B-Instruct-int4-mixed-AutoRound',
          reads('vllm', 'Qwen3-Next-80B-A3B-Instruct-int4-mixed-AutoRound', 'qwen3next', 80, 'gptq')), 'vllm'),
    (Case('ar1529', 'https://github.com/intel/auto-round/issues/1529', 'model', '4x H100', None, RIGHT,
          'INC4AI/Step-3.5-Flash-int4-AutoRound',
          ('refuses', "unknown model 'INC4AI/Step-3.5-Flash-int4-AutoRound'")), 'vllm'),
    (Case('q36_3', 'https://github.com/noonghunna/qwen36-27b-single-3090/issues/3', 'model', 'RTX 5090', None, RIGHT,
          'Intel/Qwen3.6-27B-int4-AutoRound-NVFP4',
          ('refuses', "unknown model 'Intel/Qwen3.6-27B-int4-AutoRound-NVFP4'")), 'vllm'),
    (Case('ar1558', 'https://github.com/intel/auto-round/issues/1558', 'model', '128GiB', None, RIGHT,
          '/models/Llama-3.1-8B-Instruct-w4g128-W4A16-arformat/',
          ('refuses', 'no such file: /models/Llama-3.1-8B-Instruct-w4g128-W4A16-arformat/')), 'vllm'),
    (Case('v24959', 'https://github.com/vllm-project/vllm/issues/24959', 'model', '4x RTX 4090', '0.10.1.1', RIGHT,
          'Qwen3-32B-AWQ', reads('vllm', 'Qwen3-32B-AWQ', 'qwen3', 32.8, 'awq')), 'vllm'),
    (Case('v21648', 'https://github.com/vllm-project/vllm/issues/21648', 'model', 'RTX 5090', None, RIGHT,
          '/mnt/f/Models/Qwen3-14B-FP8', reads('vllm', 'Qwen3 14B', 'qwen3', 14.8, 'fp8')), 'vllm'),
    (Case('v36094', 'https://github.com/vllm-project/vllm/issues/36094', 'model', '4x RTX PRO 6000', None, RIGHT,
          '/mnt/models/Qwen3.5-397B-A17B-NVFP4-sehyo',
          ('refuses', 'no such file: /mnt/models/Qwen3.5-397B-A17B-NVFP4-sehyo')), 'vllm'),
    (Case('llmc1583', 'https://github.com/vllm-project/llm-compressor/issues/1583', 'model', 'H100', None, RIGHT,
          '/path/Qwen/Qwen2.5-VL-32B-Instruct-NVFP4-G128',
          ('refuses', 'no such file: /path/Qwen/Qwen2.5-VL-32B-Instruct-NVFP4-G128')), 'vllm'),
    (Case('llmc2512', 'https://github.com/vllm-project/llm-compressor/issues/2512', 'model', '8x H100', None, RIGHT,
          '/path_to/glm5_bf16-W4A16-SYM-AWQ-cuda-compressed-tensors',
          ('refuses', "unknown model '/path_to/glm5_bf16-W4A16-SYM-AWQ-cuda-compressed-tensors'")), 'vllm'),
    (Case('sg9838', 'https://github.com/sgl-project/sglang/issues/9838', 'model', 'RTX 4090', None, RIGHT,
          'cpatonn/Qwen3-Coder-30B-A3B-Instruct-AWQ-4bit',
          reads('sglang', 'Qwen3-Coder-30B-A3B', 'qwen3moe', 30.5, 'pack-quantized')), 'sglang'),
    # ---- MLX ----
    (Case('lms1292', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1292', 'model', 'M3 Max 64GB', None,
          RIGHT, 'mlx-community/devstral-small-2-24b-instruct-2512',
          reads('mlx', 'devstral-small-2-24b', None, 24, None)), 'mlx'),
    # omlx146: an AWQ checkpoint on an MLX server (the thread's failed load): counted as stored, with the note that
    # mlx-lm loads MLX safetensors
    (Case('omlx146', 'https://github.com/jundot/omlx/issues/146', 'model', 'M4 Max 128GB', None, RIGHT,
          'cyankiwi/Qwen3.5-27B-AWQ-4bit', reads('mlx', 'Qwen3.5-27B-AWQ-4bit', 'qwen35', 27, 'pack-quantized')),
     'mlx'),
    # omlx694: a mixed MLX quant ("4.8bit" on average, per-layer widths in its config.json only): refused offline
    (Case('omlx694', 'https://github.com/jundot/omlx/issues/694', 'model', 'M3 Ultra 512GB', None, RIGHT,
          'inferencerlabs/GLM-5.1-MLX-4.8bit', ('refuses', "unknown model 'inferencerlabs/GLM-5.1-MLX-4.8bit'")),
     'mlx'),
    # ---- Ollama tags and hf.co/ names ----
    (Case('ol11511', 'https://github.com/ollama/ollama/issues/11511', 'model', 'RTX 4090', None, RIGHT,
          'hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M',
          reads('ollama', 'Qwen3-Coder 30B-A3B', 'qwen3moe', 30.5, 'Q4_K_M')), 'ollama'),
    (Case('ol11511b', 'https://github.com/ollama/ollama/issues/11511', 'model', '8x H100', None, RIGHT,
          'qwen3-coder:480b-a35b-fp16', reads('ollama', 'Qwen3-Coder 480B-A35B', 'qwen3moe', 480, 'F16')), 'ollama'),
    (Case('ol10459', 'https://github.com/ollama/ollama/issues/10459', 'model', 'RTX 3090', '0.6.6', RIGHT,
          'qwen3:14b-q8_0', reads('ollama', 'Qwen3 14B', 'qwen3', 14.8, 'Q8_0')), 'ollama'),
    # ol10544: the library's tag is 235b-a22b-q8_0; "q8" names no GGUF file type
    (Case('ol10544', 'https://github.com/ollama/ollama/issues/10544', 'model', '4x H100', None, RIGHT,
          'https://ollama.com/library/qwen3:235b-a22b-q8', ('refuses', "unknown quant tag 'q8'")), 'ollama'),
    # ol10121: the user's own `ollama create` name for Google's QAT GGUF: not a library tag, refused with the reason
    (Case('ol10121', 'https://github.com/ollama/ollama/issues/10121', 'model', 'RTX 4090', None, RIGHT,
          'gemma-3-27b-it-q4_0-QAT:latest', ('refuses', "unknown model 'gemma-3-27b-it-q4_0-QAT:latest'")), 'ollama'),
    (Case('hedge179', 'https://github.com/virattt/ai-hedge-fund/pull/179', 'model', 'RTX 4090', None, RIGHT,
          'huihui_ai/qwen2.5-1m-abliterated:14b', ('refuses', "unknown model 'huihui_ai/qwen2.5-1m-abliterated'")),
     'ollama'),
    (Case('ol15235', 'https://github.com/ollama/ollama/issues/15235', 'model', 'M4 Max 64GB', '0.20.0', RIGHT,
          'hf.co/unsloth/gemma-4-26B-A4B-it-GGUF:UD-Q4_K_M', reads('ollama', 'Gemma 4 26B-A4B', 'gemma4', 26,
                                                                   'UD-Q4_K_M')), 'ollama'),
    (Case('ol15235b', 'https://github.com/ollama/ollama/issues/15235', 'model', 'RTX 4090', '0.20.0', RIGHT,
          'gemma4:e4b-it-q4_K_M', reads('ollama', 'Gemma 4 E4B', 'gemma4', None, 'Q4_K_M')), 'ollama'),
    (Case('ol11827', 'https://github.com/ollama/ollama/issues/11827', 'model', 'M1 Pro 32GB', '0.11.4', RIGHT,
          'hf.co/unsloth/gpt-oss-20b-GGUF:Q4_K_M', reads('ollama', 'gpt-oss 20B', 'gpt-oss', 21, 'Q4_K_M')), 'ollama'),
    (Case('ol14586', 'https://github.com/ollama/ollama/issues/14586', 'model', 'RTX 4090', '0.17.5', RIGHT,
          'hf.co/unsloth/Qwen3.5-4B-GGUF:Q8_0', reads('ollama', 'Qwen3.5 4B', 'qwen35', 4, 'Q8_0')), 'ollama'),
    (Case('ol14636', 'https://github.com/ollama/ollama/issues/14636', 'model', 'RTX 4090', None, RIGHT,
          'hf.co/lmstudio-community/Qwen3.5-9B-GGUF:Q8_0', reads('ollama', 'Qwen3.5 9B', 'qwen35', 9, 'Q8_0')),
     'ollama'),
    # ---- llama.cpp: GGUF repos, files and split files ----
    (Case('llmswift69', 'https://github.com/eastriverlee/LLM.swift/issues/69', 'model', '64GiB', None, RIGHT,
          'bartowski/openai_gpt-oss-20b-GGUF', reads('llama.cpp', 'gpt-oss 20B', 'gpt-oss', 21, None)), 'llama.cpp'),
    (Case('chatterui292', 'https://github.com/Vali-98/ChatterUI/issues/292', 'model', '8GiB', None, RIGHT,
          'unsloth/gemma-3-4b-it-GGUF', reads('llama.cpp', 'Gemma 3 4B', 'gemma3', 4, None)), 'llama.cpp'),
    # usb38: a fine-tune's GGUF that is not here and whose model the catalog does not hold (Dolphin 2.9 on Llama 3 8B)
    (Case('usb38', 'https://github.com/techjarves/USB-Uncensored-LLM/issues/38', 'model', '16GiB', None, RIGHT,
          'dolphin-2.9-llama3-8b-Q6_K.gguf', ('refuses', 'no such file: dolphin-2.9-llama3-8b-Q6_K.gguf')),
     'llama.cpp'),
    (Case('vane639', 'https://github.com/ItzCrazyKns/Vane/issues/639', 'model', '2x RTX 3090', None, RIGHT,
          '/home/andredd/mymodels/dsudq2kxl/DeepSeek-R1-UD-Q2_K_XL-00001-of-00005.gguf',
          ('refuses', 'its name says deepseek-ai/DeepSeek-R1:UD-Q2_K_XL')), 'llama.cpp'),
    # ik1952: a fine-tune of Qwen3.5-397B-A17B (its log: qwen35moe) in ik_llama.cpp's IQ5_KS: not a catalog model
    (Case('ik1952', 'https://github.com/ikawrakow/ik_llama.cpp/issues/1952', 'model', '8x RTX 3090', None, RIGHT,
          'Nex-N2-Pro-397B-A17B-IQ5_KS-00001-of-00013.gguf',
          ('refuses', 'no such file: Nex-N2-Pro-397B-A17B-IQ5_KS-00001-of-00013.gguf')), 'llama.cpp'),
    # ---- LM Studio: repos, paths, keys with a variant ----
    (Case('lms1950', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1950', 'model', 'RX 7900 XTX', None,
          RIGHT, 'lmstudio-community/Qwen3.6-35B-A3B-GGUF', reads('llama.cpp', 'Qwen3.6 35B-A3B', 'qwen35moe', 35,
                                                                  None)), 'lmstudio'),
    (Case('lms1523', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1523', 'model', '2x RTX 3090', None,
          RIGHT, 'unsloth/Qwen3-Coder-Next-GGUF/Qwen3-Coder-Next-Q6_K-00001-of-00003.gguf',
          ('refuses', 'its name says Qwen/Qwen3-Coder-Next:Q6_K')), 'lmstudio'),
    # lms1523b: the identifier `lms load` gave the instance (was: "unknown model 'qwen3-coder-next@q6_k': not a file
    # and not in the built-in catalog; did you mean Qwen/Qwen3-Coder-Next, qwen3-coder, qwen3-next?")
    (Case('lms1523b', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1523', 'model', '2x RTX 3090', None,
          FIXED, 'qwen3-coder-next@q6_k', reads('llama.cpp', 'Qwen3 Coder Next', 'qwen3next', 80, 'Q6_K')),
     'lmstudio'),
    # lms1462: the variant key LM Studio's /api/v1/models lists (was: "no such file: mistralai/mistral-small-3.2@q4_k_m")
    (Case('lms1462', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1462', 'model', 'RTX 4090', None,
          FIXED, 'mistralai/mistral-small-3.2@q4_k_m', reads('llama.cpp', 'Mistral Small 3.2', None, 24, 'Q4_K_M')),
     'lmstudio'),
    (Case('lms2056', 'https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2056', 'model', 'RTX 4090', None,
          RIGHT, 'unsloth/gemma-4-E2B-it-qat-mobile-GGUF',
          ('refuses', "unknown model 'unsloth/gemma-4-E2B-it-qat-mobile-GGUF'")), 'lmstudio'),
]
CASES = [c for c, _ in CASES_AND_ENGINES]
ENGINE = {c.id: e for c, e in CASES_AND_ENGINES}

STILL_WRONG: dict[str, str] = {}  # the case id -> why it still answers wrong


def check(c: Case) -> None:
    """The name with its thread's engine: the reading (engine, model, architecture, card total, format) or the
    refusal; pasted alone (llama.cpp's defaults), an answer or one `oomkit: error:` line, never a traceback."""
    what, want = c.expect
    rc, out, err = run_cli("check", c.text, "--engine", ENGINE[c.id], *hardware_args(c), "--json")
    one_line_or_answer(rc, err, c.id)
    if what == "refuses":
        assert rc == 2 and want in err, (c.url, err)
    else:
        assert rc in (0, 1), (c.url, err)
        e = json.loads(out)["estimate"]
        m = e["model"]
        assert e["engine"] == want["engine"] and want["model"].lower() in m["name"].lower(), (c.url, e["engine"], m)
        if want["arch"] is not None:
            assert m["architecture"] == want["arch"], (c.url, m["architecture"])
        if want["params"] is not None:
            assert abs(m["params_total"] / 1e9 / want["params"] - 1) <= 0.15, (c.url, m["params_total"])
        if want["format"] is not None:
            assert want["format"].lower() in m["weights_format"].lower(), (c.url, m["weights_format"])
    rc, _, err = run_cli("check", c.text, *hardware_args(c))
    one_line_or_answer(rc, err, (c.id, "alone"))


test_a_real_input_answers_as_the_thread_shows, _ = sweep_tests(CASES, STILL_WRONG, check)


def test_the_sweep_counts():
    assert len(CASES) == 41 and len({c.url for c in CASES}) == 38 and len({c.id for c in CASES}) == 41
    assert all(c.kind == "model" for c in CASES)
    assert sum(c.status == FIXED for c in CASES) == 2 and sum(c.status == STILL for c in CASES) == 0
    assert sum(c.status == RIGHT for c in CASES) == 39
    assert set(STILL_WRONG) == {c.id for c in CASES if c.status == STILL}
    assert all(c.url.startswith("https://github.com/") for c in CASES)


# ---- the mutation pass: each name cut, with a character dropped or doubled, and with the forms around names ----

def _name_mutations(text: str, rng: random.Random) -> list[str]:
    cuts = [text[:k] for k in sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 3)))]
    k = rng.randrange(len(text))
    return [*cuts, text[:k] + text[k + 1:], text[:k + 1] + text[k:], text + "@q4_k_m", text + "@", "@" + text,
            text.replace("/", "@", 1), text + "@4bit", text + ":Q4_K_M", text.upper()]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_mutated_real_names_answer_or_refuse_in_one_line(c):
    rng = random.Random(c.id)
    for t in _name_mutations(c.text, rng):
        for engine in (ENGINE[c.id], "vllm"):
            rc, _, err = run_cli("check", t, "--engine", engine, *hardware_args(c))
            one_line_or_answer(rc, err, (c.id, engine, t))


# ---- LM Studio's variant keys (model/resolve.py) ----

@pytest.mark.parametrize("key,base,quant", [
    ("qwen/qwen3-8b@q8_0", "qwen/qwen3-8b", "Q8_0"),
    ("mistralai/mistral-small-3.2@Q4_K_M", "mistralai/mistral-small-3.2", "Q4_K_M"),
    ("qwen3-coder-next@q6_k", "qwen3-coder-next", "Q6_K"),
])
def test_an_lm_studio_variant_key_is_that_gguf_of_the_key(key, base, quant):
    spec = resolve(key)
    assert spec.weights.format.upper() == quant and spec.name == resolve(base).name
    assert any("LM Studio's key" in label for label in spec.labels), spec.labels


@pytest.mark.parametrize("key", ["qwen/qwen3.6-27b@4bit", "x@@q4_k_m", "@q4_k_m", "qwen/qwen3-8b@q9_9"])
def test_what_is_no_gguf_variant_key_is_not_read_as_one(key):
    rc, _, err = run_cli("check", key, "--gpu", "RTX 4090")
    assert rc == 2 and "LM Studio's key" not in err, err


def test_a_file_named_with_an_at_sign_is_the_file(tmp_path):
    f = tmp_path / "qwen3-8b@q8_0"
    f.write_bytes(b"not a model")
    rc, _, err = run_cli("check", str(f), "--gpu", "RTX 4090")
    assert rc == 2 and "LM Studio" not in err, err
