"""The trained context a converted GGUF carries where llama.cpp's converter does not copy the config's.

conversion/mamba.py MambaModel / Mamba2Model and conversion/granite.py GraniteHybridModel (SSM layers, no RoPE;
NemotronHModel inherits it, conversion/nemotron.py) write context_length = 2**20 ("arbitrary value; for those who
use the default"), since each architecture's first converter (PR #9126, #13550). Seen in the files people run:
Ollama's granite4 library reports granitehybrid.context_length 1048576 (/api/show model_info), and llama-server
prints "n_ctx_seq (4096) < n_ctx_train (1048576)" for NVIDIA-Nemotron3-Nano-4B-Q4_K_M.gguf. Ollama converts
Nemotron-H itself (convert/convert_nemotron_h.go: context_length = max_position_embeddings).
"""

from __future__ import annotations

import pytest

from oomkit.engines.base import get_engine
from oomkit.request import resolve_model

GGUF_CONTEXT = 1048576  # 2**20, as the converter writes it


@pytest.mark.parametrize(("model", "config_context"), [
    ("granite-4.0-h-small", 131072), ("granite-4.0-h-350m", 32768), ("nemotron-3-nano-30b-a3b", 262144),
    ("nvidia-nemotron-nano-9b-v2", 131072), ("mamba-codestral-7b-v0.1", 0), ("mamba-2.8b-hf", 0),
])
def test_llamacpp_sees_the_converters_context(model: str, config_context: int) -> None:
    eng = get_engine("llamacpp")
    resolved = resolve_model(eng, model)
    assert resolved.n_ctx_train == config_context  # the config's, as vLLM reads it
    spec = eng.model_for(resolved, eng.settings())
    assert spec.n_ctx_train == GGUF_CONTEXT
    assert any("1048576" in label for label in spec.labels)
    est = eng.estimate(spec, (), eng.settings(n_ctx=0, fit=False))  # -c 0: the trained context
    assert est.engine_view["n_ctx"] == GGUF_CONTEXT


def test_other_architectures_keep_the_config_context() -> None:
    eng = get_engine("llamacpp")
    spec = resolve_model(eng, "qwen3-8b")
    assert eng.model_for(spec, eng.settings()).n_ctx_train == spec.n_ctx_train == 40960


def test_ollama_granite_library_file_and_own_nemotron_conversion() -> None:
    eng = get_engine("ollama")
    granite = eng.model_for(resolve_model(eng, "granite4:small-h"), eng.settings())
    assert granite.n_ctx_train == GGUF_CONTEXT
    nemotron = eng.model_for(resolve_model(eng, "nemotron-3-nano-30b-a3b"), eng.settings())
    assert nemotron.n_ctx_train == 262144


def test_vllm_keeps_max_position_embeddings() -> None:
    eng = get_engine("vllm")
    spec = eng.model_for(resolve_model(eng, "granite-4.0-h-small"), eng.settings())
    assert spec.n_ctx_train == 131072
