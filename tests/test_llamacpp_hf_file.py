"""llama-server's --hf-file (common/arg.cpp: "Hugging Face model file. If specified, it will override the quant in
--hf-repo") and the GGUF repo -hf names for a model given by a derivative repo name."""

from __future__ import annotations

import pytest

from oomkit.engines.llamacpp.args import parse_args
from oomkit.engines.llamacpp.knobs import gguf_repo
from oomkit.errors import OomkitError


@pytest.mark.parametrize("argv, quant", [
    (["--hf-repo", "unsloth/Qwen3-8B-GGUF", "--hf-file", "Qwen3-8B-Q8_0.gguf"], "Q8_0"),
    (["-hff", "Qwen3-8B-UD-Q4_K_XL.gguf", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"], "UD-Q4_K_XL"),  # the file wins
    (["-hf", "bartowski/Qwen_Qwen3-8B-GGUF", "-hff", "Qwen_Qwen3-8B-IQ4_XS.gguf"], "IQ4_XS"),
])
def test_hf_file_names_the_quant(argv, quant):
    model, q, _ = parse_args(argv)
    assert (model, q) == (argv[argv.index("-hf") + 1 if "-hf" in argv else 1].partition(":")[0], quant)


def test_hf_file_without_a_file_type_is_refused():
    with pytest.raises(OomkitError, match="no GGUF file type"):
        parse_args(["-hf", "unsloth/Qwen3-8B-GGUF", "--hf-file", "model.gguf"])


@pytest.mark.parametrize("model, repo", [
    ("Qwen/Qwen3-8B", "unsloth/Qwen3-8B-GGUF"),
    ("Qwen/Qwen3-8B-AWQ", "unsloth/Qwen3-8B-GGUF"),  # a derivative names its base model's conversion
    ("unsloth/Qwen3-8B-GGUF", "unsloth/Qwen3-8B-GGUF"),
])
def test_gguf_repo_of_a_model(model, repo):
    assert gguf_repo(model) == repo
