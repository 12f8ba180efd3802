"""Publishers' listed GGUF file sizes (src/oomkit/quant/data/published_sizes.json): each cited, and a stand-in mix
of a listed file sized to it (model/weights.sized_to_published), its note naming the listing and its precision."""

import json
from pathlib import Path

import pytest

from oomkit.engines.llamacpp.weights import without_nextn
from oomkit.model import catalog
from oomkit.model.resolve import resolve
from oomkit.quant import gguf_recipes, published_sizes

DATA = Path(published_sizes.__file__).parent / "data" / "published_sizes.json"


def _note(spec) -> str:
    return next(label for label in spec.labels if label.startswith(("UD-", "Q")))


def test_every_size_is_cited_and_readable():
    raw = json.loads(DATA.read_text())["files"]
    recs = published_sizes.records()
    assert len(recs) == len(raw) >= 30
    seen = set()
    for r, f in zip(recs, raw, strict=True):
        assert r.url.startswith("https://") and r.repo.lower().startswith("unsloth/"), r
        assert r.rounding in ("hf", "written")
        assert gguf_recipes.named_mix(r.quant) is not None or gguf_recipes.ftype_by_name(r.quant)
        assert catalog.base_hf_id(r.repo) == r.base, r  # the repo is the catalog's GGUF repo of that model
        assert r.nbytes > 0 and 0 < r.error_bytes < 0.02 * r.nbytes
        if r.url.startswith("https://github.com/ggml-org/Llama-macOS"):
            assert any(s in q for s in r.listed for q in f["quoted"])  # the figure as the page writes it
        assert (r.repo, r.quant) not in seen
        seen.add((r.repo, r.quant))


def test_precision_follows_the_listing():
    """The Hugging Face listing writes three significant figures ("50 GB" is 50.0); a figure typed by hand is as
    precise as its last digit."""
    glm = published_sizes.lookup("UD-IQ2_XXS", repo="unsloth/GLM-4.6-GGUF")
    assert glm.listed == ("49.8 GB", "50 GB", "15.6 GB") and glm.nbytes == 115_400_000_000
    assert glm.error_bytes == 3 * 50_000_000
    q9 = published_sizes.lookup("UD-Q4_K_XL", base="Qwen/Qwen3.5-9B")
    assert q9.nbytes == 6_000_000_000 and q9.error_bytes == 50_000_000


def test_lookup_needs_the_file():
    """A UD name is unsloth's alone, so a model name finds unsloth's file of it; a plain file type only its repo's
    (other publishers' Q4_K_M files differ), and another publisher's repo nothing."""
    assert published_sizes.lookup("UD-Q4_K_XL", base="Qwen/Qwen3.5-9B").repo == "unsloth/Qwen3.5-9B-GGUF"
    assert published_sizes.lookup("Q4_K_XL", repo="unsloth/Qwen3.5-9B-GGUF") is not None  # the name without "UD-"
    assert published_sizes.lookup("Q4_K_M", base="openai/gpt-oss-20b") is None
    assert published_sizes.lookup("Q4_K_M", repo="unsloth/gpt-oss-20b-GGUF").listed == ("11.6 GB",)
    assert published_sizes.lookup("UD-Q4_K_XL", repo="bartowski/Qwen_Qwen3.5-9B-GGUF") is None
    assert published_sizes.lookup("UD-Q3_K_XL", base="Qwen/Qwen3.5-9B") is None


@pytest.mark.parametrize("name", ["qwen3.5-0.8b", "unsloth/Qwen3.5-0.8B-GGUF", "Qwen/Qwen3.5-0.8B"])
def test_stand_in_sized_to_the_listing(name):
    """Qwen3.5-0.8B UD-Q4_K_XL (the 2B / 4B / 9B files take the recipe read from their load logs): the file (no
    next-n block) holds the listed 559 MB less its header; the stand-in's
    token_embd / output keep their bytes, the repeating layers take the rest, and the note says where it is from."""
    spec = resolve(name, "UD-Q4_K_XL")
    size = published_sizes.lookup("UD-Q4_K_XL", base="Qwen/Qwen3.5-0.8B")
    file = without_nextn(spec)  # typed again over the trunk: the sizing holds
    assert file.weights.published == size
    emb = next(t for t in file.weights.tensors if t.name == "token_embd.weight")
    header = published_sizes.header_bytes(emb.shape[1], len(file.weights.tensors))
    assert abs(file.weights.nbytes + header - size.nbytes) < 4096  # the scaled tensors' rounding
    note = _note(spec)
    assert "559 MB" in note and "Llama-macOS/pull/63" in note and "±0.1%" in note and "stand-in" in note
    assert "is not modelled" not in " ".join(spec.labels)


def test_only_repeating_layers_are_scaled():
    from oomkit.quant import published_sizes as ps

    sized = without_nextn(resolve("qwen3.5-0.8b", "UD-Q4_K_XL"))
    lookup = ps.lookup
    ps.lookup = lambda *a, **k: None
    try:
        plain = without_nextn(resolve("qwen3.5-0.8b", "UD-Q4_K_XL"))
    finally:
        ps.lookup = lookup
    by_name = {t.name: t for t in plain.weights.tensors}
    ratios = set()
    for t in sized.weights.tensors:
        p = by_name[t.name]
        assert t.dtype == p.dtype  # the stand-in's types kept
        if t.layer is None:
            assert t.nbytes == p.nbytes
        elif p.nbytes > 1 << 20:
            ratios.add(round(t.nbytes / p.nbytes, 4))
    assert len(ratios) == 1 and ratios != {1.0}


def test_no_listing_keeps_the_stand_in_note():
    spec = resolve("Qwen/Qwen3-8B", "UD-Q4_K_XL")
    assert spec.weights.published is None and "is not modelled for this model" in _note(spec)


def test_a_recipe_from_real_files_is_kept():
    """Qwen3.5-35B-A3B UD-Q4_K_XL has a recipe read from the publisher's files (gguf_recipes.PUBLISHED_RECIPES): its
    types are the file's, so the listing does not rescale them."""
    spec = resolve("qwen3.5-35b-a3b", "UD-Q4_K_XL")
    assert spec.weights.published is None and "follows the publisher's real files" in _note(spec)


def test_a_listing_of_another_file_is_refused():
    """A listed size that would scale the repeating layers beyond 0.6x..1.6x is not taken for this tensor list."""
    from oomkit.model.weights import sized_to_published

    spec = resolve("qwen3.5-9b", "UD-Q4_K_XL")
    other = published_sizes.lookup("UD-Q4_K_XL", base="Qwen/Qwen3.5-27B")
    assert sized_to_published(spec.weights, other, spec.n_trunk_layers) is None
