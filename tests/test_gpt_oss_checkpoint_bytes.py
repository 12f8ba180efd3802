"""gpt-oss's published checkpoint bytes: transformers integrations/mxfp4.py replaces the experts only
(Mxfp4GptOssExperts), so the router (mlp.router) stays bf16 beside the attention and embeddings.

openai/gpt-oss-20b model.safetensors.index.json "metadata": {"total_size": 13761264768} (a verbatim copy of the
repo's files, code-search id 31112482743); gpt-oss-120b's tensor bytes 65,248,815,744 (a test that hashes the
downloaded files, code-search id 59724567210).
"""

from __future__ import annotations

import pytest

from oomkit.engines.base import get_engine
from oomkit.request import resolve_model


@pytest.mark.parametrize(("model", "published"), [("openai/gpt-oss-20b", 13_761_264_768),
                                                  ("openai/gpt-oss-120b", 65_248_815_744)])
def test_checkpoint_bytes_equal_the_published_files(model, published):
    spec = resolve_model(get_engine("vllm"), model)
    assert sum(t.nbytes for t in spec.weights.tensors) == published
    router = next(t for t in spec.weights.tensors if t.name == "blk.0.ffn_gate_inp.weight")
    assert router.dtype == "bfloat16"
