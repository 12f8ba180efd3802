"""Named GGUF mixes against llama.cpp itself: a bartowski "_L" / "_XL" quant is llama-quantize's file type with
--output-tensor-type q8_0 --token-embedding-type q8_0, and the unsloth "UD-*" stand-ins are llama-quantize mixes
too; llama.cpp's dry run (llama-cpp-python 0.3.36) chooses each tensor's type exactly as a real run does."""

from __future__ import annotations

import re

import pytest

from oomkit.quant import ggml
from oomkit.quant.gguf_recipes import (
    NAMED_MIXES,
    PUBLISHED_RECIPES,
    allows_quantization,
    ftype_by_name,
    mix_types,
    published_recipe,
    recipe_types,
)

from .test_gguf_recipes import MODELS, REAL_SHAPES, _imatrix, dry_run_types, llama_cpp, tensor_list
from .test_gguf_recipes import sources as sources  # noqa: F401 - the module fixture with the synthetic GGUFs

# the mixes' llama-quantize stand-ins, on shapes no publisher's recipe covers (those follow the recipe, checked below)
CASES = [(m, name) for m in (MODELS[0], MODELS[1], MODELS[2], REAL_SHAPES[0], REAL_SHAPES[3])
         for name in NAMED_MIXES if name in ("Q2_K_L", "Q3_K_XL", "Q4_K_L", "Q5_K_L", "Q6_K_L", "UD-Q4_K_XL",
                                             "UD-Q8_K_XL", "UD-Q3_K_XL", "UD-IQ4_XS", "UD-Q6_K")
         and published_recipe(name, m.arch, [(n, s) for n, s, _ in tensor_list(m)]) is None]


def _dry_run(src, tmp_path, ftype_id: int, out_type: str | None, emb_type: str | None, imatrix=None,
             tensor_types=()):
    import ctypes
    import os

    from .test_gguf_recipes import _Log

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype_id
    params.nthread = os.cpu_count() or 1
    params.dry_run = True
    if out_type:
        params.output_tensor_type = ggml.type_by_name(out_type).id
    if emb_type:
        params.token_embedding_type = ggml.type_by_name(emb_type).id
    if imatrix is not None:
        params.imatrix = ctypes.cast(imatrix, ctypes.POINTER(llama_cpp.llama_model_imatrix_data))
    overrides = (llama_cpp.llama_model_tensor_override * (len(tensor_types) + 1))()
    for i, (pattern, t) in enumerate(tensor_types):  # --tensor-type PATTERN=TYPE, NULL-terminated
        overrides[i].pattern, overrides[i].type = pattern.encode(), ggml.type_by_name(t).id
    if tensor_types:
        params.tt_overrides = ctypes.cast(overrides, ctypes.POINTER(llama_cpp.llama_model_tensor_override))
    with _Log() as log:
        rc = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp_path / "none.gguf").encode(),
                                            ctypes.byref(params))
    return rc, "".join(log.text)


@pytest.mark.parametrize("model,name", CASES, ids=[f"{m.key}-{n}" for m, n in CASES])
def test_named_mix_matches_llama_quantize_with_its_options(sources, tmp_path, model, name):  # noqa: F811
    mix = NAMED_MIXES[name]
    ft = ftype_by_name(mix.ftype)
    tensors = [(n, s) for n, s, _ in tensor_list(model)]
    kw = dict(arch=model.arch, n_expert=model.n_expert, n_gqa=model.n_head // model.n_head_kv,
              source_types={n: t for n, _, t in tensor_list(model)}, output_tensor_type=mix.output_type,
              token_embedding_type=mix.token_embedding_type)
    # a named mix is an imatrix quant (gguf_recipes.mix_types): llama-quantize is given one
    expected = recipe_types(ft, tensors, has_imatrix=True, **kw)
    via_mix = mix_types(name, tensors, model.arch, model.n_expert, model.n_head // model.n_head_kv)
    quantized = {n for n, s in tensors if allows_quantization(n, s, model.arch)}
    assert {n: via_mix[n] for n in quantized} == {n: expected[n] for n in quantized}
    imatrix, _keep = _imatrix(model, dry_run=True)
    rc, log = _dry_run(sources[model.key], tmp_path, ft.id, mix.output_type, mix.token_embedding_type, imatrix)
    assert rc == 0, log[-2000:]
    got = dry_run_types(log)
    assert set(got) == set(expected)
    diff = {n: (got[n], expected[n]) for n in got if got[n] != expected[n]}
    assert not diff, f"{model.key} {name}: (llama.cpp, recipe) differ {diff}"
    if mix.output_type and "output.weight" in expected:
        assert expected["output.weight"] == ggml.type_by_name(mix.output_type).name


RECIPE_CASES = [(m, r) for m in (MODELS[2], REAL_SHAPES[3]) for r in PUBLISHED_RECIPES]


@pytest.mark.parametrize("model,recipe", RECIPE_CASES, ids=[f"{m.key}-{r.mix}" for m, r in RECIPE_CASES])
def test_published_recipe_is_llama_quantize_with_its_options(sources, tmp_path, model, recipe):  # noqa: F811
    """A publisher's recipe (quant/gguf_recipes.PUBLISHED_RECIPES) is a llama-quantize run: its file type with
    --tensor-type PATTERN=TYPE (the first match wins), --output-tensor-type and --token-embedding-type. llama.cpp's
    own dry run with those options gives recipe_types' answer on every tensor (a MoE of the same tensor roles)."""
    ft = ftype_by_name(recipe.ftype)
    tensors = [(n, s) for n, s, _ in tensor_list(model)]
    expected = recipe_types(ft, tensors, model.arch, model.n_expert, model.n_head // model.n_head_kv,
                            source_types={n: t for n, _, t in tensor_list(model)}, has_imatrix=False,
                            output_tensor_type=recipe.output_type, token_embedding_type=recipe.token_embedding_type,
                            tensor_type_overrides=recipe.tensor_types)
    rc, log = _dry_run(sources[model.key], tmp_path, ft.id, recipe.output_type, recipe.token_embedding_type,
                       tensor_types=recipe.tensor_types)
    assert rc == 0, log[-2000:]
    got = dry_run_types(log)
    assert set(got) == set(expected)
    diff = {n: (got[n], expected[n]) for n in got if got[n] != expected[n]}
    assert not diff, f"{model.key} {recipe.mix}: (llama.cpp, recipe) differ {diff}"
    down = dict(recipe.tensor_types).get("ffn_down_exps")
    if down:  # the recipe's own choice for the experts, not Q4_K_M's (where no earlier pattern took the tensor)
        earlier = [p for p, _ in recipe.tensor_types[:[p for p, _ in recipe.tensor_types].index("ffn_down_exps")]]
        assert {expected[n] for n, s in tensors if n.endswith("ffn_down_exps.weight")
                and not any(re.search(p, n) for p in earlier)} == {down}
