"""A Hugging Face GGUF repo's file, whoever owns the repo, is llama.cpp's converter + llama-quantize output, which
Ollama runs as it is (`ollama run hf.co/<owner>/<repo>:<quant>`): none of the quirks of Ollama's own library
quantizer applies (the Go quantizer's attn_v rule, llama.cpp's quantizer patched by v0.6.2-v0.6.8, the pre-#9935
file-order counters: engines/ollama/weights.py publishers_gguf). model/resolve.py with_gguf_origin records the
repo's owner in weights.publisher; recipes and imatrix rules stay with the publishers gguf_recipes knows.

Real figure: ollama/ollama#9791 (v0.6.2, one CUDA GPU, gemma-3-12b-it Q4_K_M of a GGUF repo, 4 slots x 2048):
projector.weights "814.6 MiB" and projector.graph "0 B" (the repo's F16 mmproj, llm/memory.go
projectorMemoryRequirements), required 11.7 GiB; read as the library tag: 795.9 MiB / 1.0 GiB, 12.7 GiB. The fixture
names bartowski's repo; ggml-org's repo of the model is the same llama.cpp conversion and mmproj.
"""

from __future__ import annotations

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.weights import ollama_gguf
from oomkit.model.resolve import gguf_publisher, gguf_repo_owner, resolve
from tests import test_ollama as tl
from tests.test_ollama import _no_ollama_env  # noqa: F401  (autouse: no OLLAMA_* from the environment)
from tests.test_ollama_heldout4_logs import _GEMMA3_062, _load


def _ollama(name: str):
    return resolve(name, None, default_format=ol.ENGINE.default_weight_format, tag_formats=ol.ENGINE.loads_gguf)


def _types(name: str) -> dict[str, str]:
    return {t.name: t.dtype for t in ollama_gguf(_ollama(name)).weights.tensors}


@pytest.mark.parametrize("name, owner, known", [
    ("hf.co/Qwen/Qwen3-32B-GGUF:Q4_K_M", "qwen", None),
    ("hf.co/ggml-org/gemma-3-4b-it-GGUF", "ggml-org", None),
    ("lmstudio-community/gemma-3-4b-it-GGUF", "lmstudio-community", None),
    ("https://huggingface.co/mradermacher/Qwen3-32B-GGUF", "mradermacher", None),
    ("hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M", "unsloth", "unsloth"),
    ("qwen3:32b", None, None),
    ("Qwen/Qwen3-32B", None, None),
])
def test_owner_of_every_gguf_repo(name, owner, known):
    """Every GGUF repo's owner is its origin; only gguf_recipes' publishers pick recipes."""
    assert gguf_repo_owner(name) == owner
    assert gguf_publisher(name) == known


@pytest.mark.parametrize("repo, same_as", [
    ("hf.co/Qwen/Qwen3-32B-GGUF:Q4_K_M", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M"),
    ("hf.co/mradermacher/Qwen3-32B-GGUF:Q4_K_M", "hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M"),
    ("hf.co/ggml-org/gemma-3-4b-it-GGUF", "hf.co/unsloth/gemma-3-4b-it-GGUF"),
])
def test_any_repo_gets_llama_quantize_rules(repo, same_as):
    """A repo's Q4_K_M has the tensor types of the unsloth repo's file of the same model (no unsloth recipe covers
    these shapes at Q4_K_M), and no longer those of the library quantizer."""
    assert _ollama(repo).weights.publisher == gguf_repo_owner(repo)
    assert _types(repo) == _types(same_as)


def test_library_tag_keeps_library_quantizer():
    """qwen3:32b (the library's spring-2025 blob, v0.6.2-v0.6.8 llama.cpp quantizer patch) keeps its own types: its
    file differs from a repo's Q4_K_M."""
    assert _ollama("qwen3:32b").weights.publisher is None
    assert _types("qwen3:32b") != _types("hf.co/Qwen/Qwen3-32B-GGUF:Q4_K_M")


def test_ggml_org_gemma3_projector_as_in_9791():
    """ollama/ollama#9791's line run with ggml-org's repo of gemma-3-12b-it: the repo's mmproj as the projector
    layer (854,175,168 B = 814.6 MiB, graph 0 B) and every field within its printed rounding, as for bartowski's."""
    fx = _load(_GEMMA3_062)
    fx["model"] = "hf.co/ggml-org/gemma-3-12b-it-GGUF:Q4_K_M"
    est, err = tl._best_run(fx)
    assert err and all(e == 0 for e in err.values()), err
    assert est.engine_view["ollama_memory"]["projector.weights"] == 854_175_168


# ---------------------------------------------------------------------------------------------------------------
# ollama/ollama#13101: a Modelfile's FROM lines, the model then its mmproj (parser/parser.go CreateRequest: each FROM
# file is a layer; server/create.go ggufLayers: a GGUF with <arch>.vision.block_count and no <arch>.block_count, or
# general.type "projector", is the projector layer)


def _gguf(path, kv: dict) -> str:
    """A GGUF v3 header with no tensors and these string / uint32 keys (gguf-py's layout)."""
    import struct

    def s(x: str) -> bytes:
        b = x.encode()
        return struct.pack("<Q", len(b)) + b

    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for k, v in kv.items():
        out += s(k) + (struct.pack("<I", 8) + s(v) if isinstance(v, str) else struct.pack("<II", 4, v))
    path.write_bytes(out)
    return str(path)


def test_modelfile_hint_names_the_model_not_its_mmproj():
    from oomkit.engines.ollama.args import modelfile_hint

    hint = modelfile_hint("FROM ./Qwen3VL-4B-Instruct-F16.gguf\nFROM ./mmproj-Qwen3VL-4B-Instruct-F16.gguf")
    assert "`oomkit check ./Qwen3VL-4B-Instruct-F16.gguf --engine ollama`" in hint
    assert "projector FROM ./mmproj-Qwen3VL-4B-Instruct-F16.gguf" in hint


def test_modelfile_projector_read_from_its_header(tmp_path):
    """Files on this machine are told apart by their headers, whatever their names and order."""
    from oomkit.engines.ollama.args import modelfile_hint

    tower = _gguf(tmp_path / "vision.gguf", {"general.architecture": "clip", "clip.vision.block_count": 24})
    text = _gguf(tmp_path / "text.gguf", {"general.architecture": "qwen3vl", "qwen3vl.block_count": 36})
    hint = modelfile_hint(f"FROM {tower}\nFROM {text}\nPARAMETER num_ctx 8192")
    assert f"`oomkit check {text} --engine ollama --num-ctx 8192`" in hint and f"projector FROM {tower}" in hint
