"""Model names as people paste them into `oomkit estimate / check / fit`, offline: derived and quantized repos, GGUF
repos with a :QUANT tag, hf.co/ and ollama.com URLs, Ollama tags, GGUF file names (split parts too), odd case.

Each row is what the name stands for on the hub or in Ollama's library, read from the repo or tag itself (its
publisher's naming convention: https://huggingface.co/<repo>, https://ollama.com/library/<name>/tags), not from
oomkit: the base model it was made from and the weight format the engine loads. A name that only a guess can
resolve carries a label that says so; a name that cannot be resolved is one line and exit code 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oomkit
from oomkit.errors import OomkitError
from oomkit.model.catalog import base_hf_id

from . import hostile as H


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


INFERRED = "inferred from the name"  # a derivative read by its publisher's naming convention
ASSUMED = "no quant given: assuming"  # a GGUF repo named without its file: the engine's usual download

# (as typed, engine, the base model's HF id, weights.format, a label the result must carry or None)
NAMES = [
    # GGUF repos: the file type is the :QUANT tag, else the usual Q4_K_M download, said so
    ("bartowski/Qwen_Qwen3-30B-A3B-GGUF", "llama.cpp", "Qwen/Qwen3-30B-A3B", "Q4_K_M", ASSUMED),
    ("unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", "llama.cpp", "Qwen/Qwen3-30B-A3B", "Q4_K_M", None),
    # an engine that loads checkpoints, given a GGUF repo and no file: the checkpoint, said so (was silent)
    ("bartowski/Qwen_Qwen3-30B-A3B-GGUF", "vllm", "Qwen/Qwen3-30B-A3B", "bfloat16", "is a repo of GGUF files and "
     "names none of them"),
    ("hf.co/unsloth/gemma-3-27b-it-GGUF:Q4_K_M", "ollama", "google/gemma-3-27b-it", "Q4_K_M", None),
    ("TheBloke/Mistral-7B-Instruct-v0.2-GGUF", "llama.cpp", "mistralai/Mistral-7B-Instruct-v0.2", "Q4_K_M", ASSUMED),
    ("TheBloke/Mistral-7B-Instruct-v0.2-GGUF:Q5_K_M", "llama.cpp", "mistralai/Mistral-7B-Instruct-v0.2", "Q5_K_M",
     None),
    ("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF:Q8_0", "llama.cpp", "meta-llama/Llama-3.1-8B-Instruct",
     "Q8_0", None),
    ("lmstudio-community/gemma-3-27b-it-GGUF", "llama.cpp", "google/gemma-3-27b-it", "Q4_K_M", ASSUMED),
    ("hf.co/bartowski/Qwen_Qwen3-8B-GGUF:IQ4_XS", "ollama", "Qwen/Qwen3-8B", "IQ4_XS", None),
    ("hf.co/bartowski/google_gemma-3-27b-it-GGUF:Q4_K_M", "llama.cpp", "google/gemma-3-27b-it", "Q4_K_M", None),
    ("mradermacher/Qwen3-8B-i1-GGUF:i1-IQ4_XS", "llama.cpp", "Qwen/Qwen3-8B", "IQ4_XS", None),
    # unsloth's dynamic mixes: a llama-quantize stand-in, said so
    ("unsloth/Qwen3-8B-GGUF:q4_k_xl", "llama.cpp", "Qwen/Qwen3-8B", "UD-Q4_K_XL", "llama-quantize"),
    ("unsloth/DeepSeek-R1-GGUF:UD-IQ1_S", "llama.cpp", "deepseek-ai/DeepSeek-R1", "UD-IQ1_S", "llama-quantize"),
    ("ggml-org/gpt-oss-120b-GGUF", "llama.cpp", "openai/gpt-oss-120b", "MXFP4_MOE", ASSUMED),
    ("Qwen/Qwen2.5-7B-Instruct-GGUF:q4_k_m", "llama.cpp", "Qwen/Qwen2.5-7B-Instruct", "Q4_K_M", None),
    ("Qwen/Qwen3-8B:Q4_K_M.gguf", "llama.cpp", "Qwen/Qwen3-8B", "Q4_K_M", None),  # the file's name as the tag
    # file URLs, split parts included: the quant from the file name
    ("https://huggingface.co/unsloth/Qwen3-30B-A3B-GGUF/blob/main/Qwen3-30B-A3B-Q4_K_M.gguf", "llama.cpp",
     "Qwen/Qwen3-30B-A3B", "Q4_K_M", None),
    ("https://huggingface.co/unsloth/Qwen3-235B-A22B-GGUF/resolve/main/Q4_K_M/"
     "Qwen3-235B-A22B-Q4_K_M-00001-of-00003.gguf", "llama.cpp", "Qwen/Qwen3-235B-A22B", "Q4_K_M", None),
    # URLs as copied from the browser: a ?download=true or #anchor (was: the quant lost, Q4_K_M assumed, or "unknown
    # model"), a quant folder of a split GGUF repo, www. and hf-mirror.com hosts (was: read as a folder name)
    ("https://huggingface.co/unsloth/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q8_0.gguf?download=true", "llama.cpp",
     "Qwen/Qwen3-8B", "Q8_0", None),
    ("https://huggingface.co/Qwen/Qwen3-8B?library=transformers", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    ("https://huggingface.co/Qwen/Qwen3-8B#quickstart", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    ("https://huggingface.co/unsloth/Qwen3-235B-A22B-GGUF/tree/main/Q4_K_M", "llama.cpp", "Qwen/Qwen3-235B-A22B",
     "Q4_K_M", None),
    ("https://www.huggingface.co/Qwen/Qwen3-8B", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    ("https://hf-mirror.com/Qwen/Qwen3-8B", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    # pasted from Markdown, JSON or a list
    ("`Qwen/Qwen3-8B`", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    ('"qwen3:8b",', "ollama", "Qwen/Qwen3-8B", "Q4_K_M", None),
    # quantized checkpoints, on the engines that load them
    ("Qwen/Qwen3-8B-AWQ", "vllm", "Qwen/Qwen3-8B", "awq", INFERRED),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "vllm", "Qwen/Qwen2.5-7B-Instruct", "gptq", INFERRED),
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "vllm", "meta-llama/Llama-3.3-70B-Instruct",
     "ct-float-quantized", INFERRED),
    ("nvidia/Llama-3.1-8B-Instruct-FP8", "vllm", "meta-llama/Llama-3.1-8B-Instruct", "modelopt-fp8", INFERRED),
    ("mlx-community/Qwen3-8B-4bit", "mlx", "Qwen/Qwen3-8B", "mlx-affine", INFERRED),
    ("lmstudio-community/Qwen3-8B-MLX-8bit", "mlx", "Qwen/Qwen3-8B", "mlx-affine", INFERRED),
    # mlx-community's dated DWQ releases (was: "unknown model" offline)
    ("mlx-community/Qwen3-30B-A3B-4bit-DWQ-053125", "mlx", "Qwen/Qwen3-30B-A3B", "mlx-affine", INFERRED),
    ("unsloth/Llama-3.2-3B-Instruct-bnb-4bit", "transformers", "meta-llama/Llama-3.2-3B-Instruct", "bnb-nf4",
     INFERRED),
    ("qwen/qwen3-8B-awq", "sglang", "Qwen/Qwen3-8B", "awq", INFERRED),
    # an unquantized MLX conversion on a GGUF engine: the BF16 GGUF of the same weights (was: "unknown ggml type
    # 'bfloat16'")
    ("mlx-community/Qwen3-8B-bf16", "llama.cpp", "Qwen/Qwen3-8B", "BF16", INFERRED),
    # Ollama tags: the tag's own file type, else the library's default (Q4_K_M), and ollama.com URLs
    ("llama3.1:8b-instruct-q8_0", "ollama", "meta-llama/Llama-3.1-8B-Instruct", "Q8_0", None),
    ("qwen2.5-coder:32b", "ollama", "Qwen/Qwen2.5-Coder-32B-Instruct", "Q4_K_M", None),
    ("deepseek-r1:671b", "ollama", "deepseek-ai/DeepSeek-R1", "Q4_K_M", None),
    ("gpt-oss:20b", "ollama", "openai/gpt-oss-20b", "MXFP4_MOE", None),
    ("QWEN3:8B", "ollama", "Qwen/Qwen3-8B", "Q4_K_M", None),
    ("qwen3:8B-Q4_K_M", "llama.cpp", "Qwen/Qwen3-8B", "Q4_K_M", None),
    ("qwen3:8b-fp16", "llama.cpp", "Qwen/Qwen3-8B", "F16", None),
    ("ollama.com/library/qwen3:8b", "llama.cpp", "Qwen/Qwen3-8B", "Q4_K_M", None),
    ("https://ollama.com/library/qwen3:8b-q8_0", "ollama", "Qwen/Qwen3-8B", "Q8_0", None),
    ("registry.ollama.ai/library/llama3.1:8b", "ollama", "meta-llama/Llama-3.1-8B-Instruct", "Q4_K_M", None),
    # Ollama's deepseek-r1:latest is its 8b tag, the R1-0528 Qwen3-8B distill (ollama.com/library/deepseek-r1);
    # was read as the 671B DeepSeek-R1 (":latest" dropped to the catalog's bare name)
    ("deepseek-r1:latest", "ollama", "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "Q4_K_M", None),
    ("DeepSeek-R1:LATEST", "llama.cpp", "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "Q4_K_M", None),
    # the bare name stays the catalog's DeepSeek-R1, and says what `ollama run deepseek-r1` would pull instead
    ("deepseek-r1", "ollama", "deepseek-ai/DeepSeek-R1", "Q4_K_M", "Ollama's deepseek-r1 (its :latest tag) is "
     "deepseek-r1:8b"),
    # Ollama's embedding tags ship F16 GGUFs (ollama.com/library/nomic-embed-text: latest 274MB, F16)
    # (was: "unknown ggml type 'float16'" on llama.cpp)
    ("nomic-embed-text", "llama.cpp", "nomic-ai/nomic-embed-text-v1.5", "F16", None),
    ("nomic-embed-text", "ollama", "nomic-ai/nomic-embed-text-v1.5", "F16", None),
    # catalog names in any case
    ("Qwen/Qwen3-8b", "vllm", "Qwen/Qwen3-8B", "bfloat16", None),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "vllm", "meta-llama/Llama-3.1-8B-Instruct", "bfloat16", None),
]


def _base(spec) -> str:
    """The HF id of the model a spec was built from, read from its source line ("catalog: <hf_id> (...)")."""
    assert spec.source.startswith("catalog: "), spec.source
    return spec.source.removeprefix("catalog: ").split(" ", 1)[0]


@pytest.mark.parametrize("typed,engine,base,fmt,label", NAMES)
def test_name_resolves_to_its_base_and_format(typed, engine, base, fmt, label):
    est = oomkit.estimate(typed, engine, find_max_context=False)
    spec = est.model
    assert _base(spec) == base
    assert spec.weights.format == fmt
    if label is None:
        assert not any(INFERRED in w or ASSUMED in w or "not on this machine" in w for w in spec.labels), spec.labels
    else:
        assert any(label in w for w in spec.labels), spec.labels
    # the name changes the weights, not the cache: the KV per token is the base model's, but for a ModelOpt
    # checkpoint's declared FP8 KV cache, which vLLM takes for --kv-cache-dtype auto from 0.14.0 (half the bf16 bytes)
    ref = oomkit.estimate(base, engine, find_max_context=False)
    fp8_kv = engine == "vllm" and spec.checkpoint_kv_cache_dtype == "fp8"
    assert est.kv_bytes_per_token == (ref.kv_bytes_per_token // 2 if fp8_kv else ref.kv_bytes_per_token)


def test_ollama_latest_is_its_default_tag_not_the_bare_catalog_name():
    latest = oomkit.estimate("deepseek-r1:latest", "ollama", find_max_context=False)
    tagged = oomkit.estimate("deepseek-r1:8b", "ollama", find_max_context=False)
    assert latest.weights_bytes == tagged.weights_bytes < 6 * 2**30  # 5.2 GB on ollama.com, not 400 GB
    assert base_hf_id("deepseek-r1:latest") == "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"
    # a library whose bare name is its default tag: ":latest" changes nothing
    assert base_hf_id("qwen3:latest") == base_hf_id("qwen3") == "Qwen/Qwen3-8B"


def test_context_length_words_keep_their_trained_context():
    # Phi-3-medium-128k-instruct config.json: max_position_embeddings 131072 (the 4k model: 4096)
    spec = oomkit.estimate("phi3:14b-medium-128k-instruct-q4_0", "ollama", find_max_context=False).model
    assert spec.n_ctx_train == 131072 and _base(spec) == "microsoft/Phi-3-medium-128k-instruct"


# ---- names that cannot be resolved: one line that says why, and what to type instead ----

REFUSED = [
    # (as typed, engine, --quant, what the one line must say)
    ("Qwen3-8B-Q4_K_M.gguf", "llama.cpp", None, "no such file: Qwen3-8B-Q4_K_M.gguf (its name says "
     "Qwen/Qwen3-8B:Q4_K_M"),
    ("/models/Qwen3-30B-A3B-Q4_K_M-00001-of-00003.gguf", "llama.cpp", None, "its name says Qwen/Qwen3-30B-A3B:Q4_K_M"),
    ("mistral-7b-instruct-v0.2.Q4_K_M.gguf", "llama.cpp", None, "its name says mistralai/Mistral-7B-Instruct-v0.2:Q4_K_M"),
    ("model.gguf", "llama.cpp", None, "no such file: model.gguf"),
    ("unsloth/Qwen3-8B-GGUF:Q4_K_XXL", "llama.cpp", None, "unknown quant tag 'Q4_K_XXL'"),
    ("llama3.1:8b-instruct-q8", "ollama", None, "unknown quant tag 'q8'"),
    # a tag of no known shape after a catalog repo (was: "unknown model 'unsloth/Qwen3-8B-GGUF'")
    ("unsloth/Qwen3-8B-GGUF:Q4KM", "llama.cpp", None, "unknown quant tag 'Q4KM'"),
    ("bartowski/Qwen_Qwen3-8B-GGUF:4bit", "llama.cpp", None, "unknown quant tag '4bit'"),
    # a checkpoint format named for an engine that loads GGUF files (was: "unknown ggml type 'bfloat16'")
    ("qwen3:8b", "llama.cpp", "awq", "awq: a Hugging Face checkpoint format, and this engine loads GGUF files"),
    ("Qwen/Qwen3-8B", "ollama", "fp8", "fp8: a Hugging Face checkpoint format"),
    ("Qwen/Qwen3-8B:nf4", "llama.cpp", None, "nf4: a Hugging Face checkpoint format"),
    ("Qwen/Qwen3-8B", "ollama", "nope", "unknown quant tag 'nope'"),  # no format at all: not called a checkpoint's
    (":Q4_K_M", "llama.cpp", None, "no model given before ':Q4_K_M'"),
    # a context length in the tag is no same-shaped qualifier: read as the 4k model it was 32x short on the KV cache
    ("phi3:medium-128k", "ollama", None, "did you mean phi3:medium, microsoft/Phi-3-medium-128k-instruct"),
    # typos: the nearest names
    ("qwen3:8bb", "ollama", None, "did you mean qwen3:8b"),
    ("lama3.1:8b", "ollama", None, "did you mean llama3.1:8b"),
    ("Qwen/Qwen3-8BB", "vllm", None, "did you mean Qwen/Qwen3-8B"),
]


@pytest.mark.parametrize("typed,engine,quant,said", REFUSED)
def test_unresolvable_name_is_one_clear_line(typed, engine, quant, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OomkitError) as e:
        oomkit.estimate(typed, engine, quant=quant, find_max_context=False)
    msg = str(e.value)
    assert said in msg and "\n" not in msg, msg


@pytest.mark.parametrize("quant,fmt", [("float16", "F16"), ("half", "F16"), ("bfloat16", "BF16"), ("F32", "F32")])
def test_plain_dtype_spellings_name_the_unquantized_gguf(quant, fmt):
    """`--quant float16` on llama.cpp is the F16 GGUF (convert_hf_to_gguf.py --outtype f16), as --quant f16 is."""
    a = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant=quant, find_max_context=False)
    b = oomkit.estimate(f"Qwen/Qwen3-8B:{fmt}", "llama.cpp", find_max_context=False)
    assert a.model.weights.format == fmt and a.weights_bytes == b.weights_bytes


# ---- a split GGUF on disk: read from its first part, as llama.cpp loads it ----


def _split(tmp_path: Path, drop: int | None = None) -> tuple[Path, Path]:
    """A 4-layer Llama GGUF written whole and as gguf-split's three parts (split.no / split.count /
    split.tensors.count, "<prefix>-0000k-of-00003.gguf"), data as sparse holes."""
    m = H.Llama(n_layers=4)
    ts = m.tensors()
    cuts = (ts[:15], ts[15:30], ts[30:])
    for i, part in enumerate(cuts):
        if i == drop:
            continue
        meta = m.meta() if i == 0 else [("general.architecture", H.STR, "llama")]
        meta = [*meta, ("split.no", H.U16, i), ("split.count", H.U16, 3), ("split.tensors.count", H.I32, len(ts))]
        H.write_gguf(tmp_path / f"tiny-Q4_0-{i + 1:05d}-of-00003.gguf", meta, part)
    return tmp_path / "tiny-Q4_0-00001-of-00003.gguf", H.write_gguf(tmp_path / "whole.gguf", m.meta(), ts)


def test_split_gguf_is_read_from_its_first_part(tmp_path):
    first, whole = _split(tmp_path)
    a = oomkit.estimate(str(first), find_max_context=False)
    b = oomkit.estimate(str(whole), find_max_context=False)
    assert a.model.weights.nbytes == b.model.weights.nbytes
    assert len(a.model.weights.tensors) == len(b.model.weights.tensors) == 39
    assert a.weights_bytes == b.weights_bytes and a.kv_bytes_per_token == b.kv_bytes_per_token


def test_split_gguf_other_part_or_missing_part_is_one_line(tmp_path):
    first, _ = _split(tmp_path, drop=2)
    with pytest.raises(OomkitError, match=r"part 3 of 3 of this split GGUF is missing"):
        oomkit.estimate(str(first))
    second = tmp_path / "tiny-Q4_0-00002-of-00003.gguf"
    with pytest.raises(OomkitError, match=r"part 2 of a 3-part split GGUF; llama.cpp loads a split model from its "
                                          r"first part: give tiny-Q4_0-00001-of-00003.gguf"):
        oomkit.estimate(str(second))


# ---- the commands: exit 0 with the right model, or exit 2 and one line ----


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OOMKIT_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


@pytest.mark.parametrize("args,hf_id,fmt", [
    (("estimate", "unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", "--json"), "Qwen/Qwen3-30B-A3B", "Q4_K_M"),
    (("estimate", "--json", "--", "ollama", "run", "deepseek-r1:latest"), "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B",
     "Q4_K_M"),
    (("estimate", "--json", "--engine", "vllm", "RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic"),
     "meta-llama/Llama-3.3-70B-Instruct", "ct-float-quantized"),
    (("check", "--json", "--vram", "24GiB", "nomic-embed-text"), "nomic-ai/nomic-embed-text-v1.5", "F16"),
    (("fit", "--json", "--vram", "24GiB", "--", "llama-server", "-hf", "bartowski/Qwen_Qwen3-8B-GGUF:IQ4_XS"),
     "Qwen/Qwen3-8B", "IQ4_XS"),
])
def test_commands_take_the_names(args, hf_id, fmt, tmp_path):
    r = _run(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    est = doc["fit"]["before"] if args[0] == "fit" else doc.get("estimate", doc)
    assert est["model"]["source"].startswith(f"catalog: {hf_id} ") and est["model"]["weights_format"] == fmt


@pytest.mark.parametrize("args,said", [
    (("estimate", "Qwen3-8B-Q4_K_M.gguf", "--json"), "its name says Qwen/Qwen3-8B:Q4_K_M"),
    (("check", "qwen3:8b", "--quant", "gptq", "--vram", "24GiB"), "gptq: a Hugging Face checkpoint format"),
    (("fit", "--vram", "24GiB", "--", "llama-server", "-m", "/models/gemma-3-27b-it-Q4_K_M.gguf"),
     "its name says google/gemma-3-27b-it:Q4_K_M"),
])
def test_commands_refuse_in_one_line(args, said, tmp_path):
    r = _run(*args, cwd=tmp_path)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("typed,fmt", [("Qwen/Qwen3-8B:Q8_0", "Q8_0"),
                                       ("hf.co/unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL", "UD-Q4_K_XL")])
def test_plan_keeps_the_format_a_suffix_names(typed, fmt, tmp_path):
    # was: "nothing fits 8192 tokens of context" on 24 GiB, then tier 3 "fits on 1 x RTX 4090" with
    # "-m unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M-GGUF:Q4_K_M" (every format the planner tried disagreed with the suffix)
    r = _run("plan", typed, "--vram", "24GiB", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    options = json.loads(r.stdout)["plan"]["options"]
    assert options and {o["weight_format"] for o in options} == {fmt}
    assert all(o["tier"] == 1 for o in options[:1])
