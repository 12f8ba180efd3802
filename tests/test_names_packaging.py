"""Words in a repo name that say what the publisher packed with the model's own shapes (names._PACKAGING_WORDS):
unsloth's "<model>-MTP-GGUF" (unsloth/Qwen3.5-2B-MTP-GGUF, ggml-org/llama.cpp#24714; unsloth/Qwen3.6-35B-A3B-MTP-GGUF,
lmstudio-ai/lmstudio-bug-tracker#1934) is the model's GGUF with its next-n (MTP) block, which llama.cpp's converter
writes from PR #22673 and its loaders take, from PR #26296 only with --spec-type draft-mtp. The word is read only for
a model whose config has a next-n block; another name with it is not read as any model."""

from __future__ import annotations

import pytest

from oomkit.model.names import derive


@pytest.mark.parametrize("name,base", [
    ("unsloth/Qwen3.5-2B-MTP-GGUF", "Qwen/Qwen3.5-2B"),
    ("unsloth/Qwen3.6-35B-A3B-MTP-GGUF", "Qwen/Qwen3.6-35B-A3B"),
    ("unsloth/Qwen3.6-27B-MTP-GGUF", "Qwen/Qwen3.6-27B"),
])
def test_an_mtp_gguf_repo_is_the_model_with_its_next_n_block(name, base):
    d = derive(name)
    assert d is not None and d.base_hf_id == base and d.dropped == ("mtp",)
    assert d.convention.startswith("GGUF repo")
    note = d.labels[-1]
    assert "next-n (MTP) block" in note and "--spec-type draft-mtp" in note and "PR #26296" in note
    assert not any("read as the same-shaped" in label for label in d.labels)  # a note of its own, not a dropped word


def test_mtp_beside_other_same_shape_words_keeps_both_notes():
    d = derive("unsloth/Qwen3.5-2B-Instruct-MTP-GGUF")
    assert d is not None and d.dropped == ("instruct", "mtp")
    assert any("'instruct' read as the same-shaped Qwen/Qwen3.5-2B" in label for label in d.labels)
    assert any("'MTP'" in label for label in d.labels)


def test_an_mtp_checkpoint_that_is_not_gguf_says_the_checkpoint_holds_it():
    d = derive("unsloth/Qwen3.5-2B-MTP")
    assert d is not None and d.base_hf_id == "Qwen/Qwen3.5-2B"
    assert "which its own checkpoint holds too" in d.labels[-1] and "GGUF" not in d.labels[-1]


@pytest.mark.parametrize("name", [
    "unsloth/Qwen3-8B-MTP-GGUF",  # Qwen3 has no next-n block: no such file
    "unsloth/Qwen3.5-2B-MTP-Foo-GGUF",  # an unknown word after it
    "unsloth/mtp-GGUF",
])
def test_no_garbage_name_is_read_through_mtp(name):
    assert derive(name) is None
