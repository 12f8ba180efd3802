"""Gemma 3n / Gemma 4 per-layer embeddings (PLE), AltUp and LAuReL read from a config.json, held to llama.cpp.

The tensor list oomkit computes from a Gemma 3n E2B text_config must be the one llama.cpp's gemma3n loader creates
(tests/ggufs.py gemma3n_e2b writes it; llama.cpp refuses a file with a tensor missing, extra or of another shape),
and the model buffer llama.cpp allocates for that file (llama-cpp-python 0.3.36, ggml-org/llama.cpp@0c1e57098, on
the CPU) must equal oomkit's for the same tensors to the 0.01 MiB llama.cpp prints. The per-layer token embedding
is an input tensor (src/llama-arch.cpp: LLM_TENSOR_PER_LAYER_TOKEN_EMBD, LLM_TENSOR_LAYER_INPUT): it stays in the
CPU mapping with token_embd when every layer is offloaded.
"""

from dataclasses import replace

import gguf
import pytest

import oomkit
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import TensorSpec, WeightInventory
from tests import ggufs
from tests import gt_compare as g
from tests.groundtruth import synth

NL = 25  # as tests/test_llamacpp_archs.py writes the file (its measurement is shared through the cache)
MiB = 1 << 20


def _e2b_config(n_layers: int) -> dict:
    """google/gemma-3n-E2B-it's text_config (the dims tests/ggufs.py gemma3n_e2b cites) at `n_layers`, with the
    file's 262144-token vocabulary; altup_num_inputs and laurel_rank left to transformers' defaults (4, 64)."""
    return {"model_type": "gemma3n", "tie_word_embeddings": True, "text_config": {
        "model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": n_layers,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "sliding_window": 512,
        "layer_types": ["full_attention" if i % 5 == 4 else "sliding_attention" for i in range(n_layers)],
        "max_position_embeddings": 32768, "vocab_size": 262144, "vocab_size_per_layer_input": 262144,
        "hidden_size_per_layer_input": 256, "num_kv_shared_layers": max(n_layers - 20, 0)}}


def _file_model():
    return ggufs.gemma3n_e2b(n_layers=NL)


def test_inventory_is_llama_cpps():
    spec = spec_from_config(_e2b_config(NL), name="gemma-3n-e2b")
    got = {t.name: tuple(t.shape) for t in spec.weights.tensors}
    want = {t.name: tuple(t.ne) for t in _file_model().tensors}
    assert got.keys() - want.keys() == set() and want.keys() - got.keys() == set()
    assert {n: s for n, s in got.items() if want[n] != s} == {}
    # 25 x 256 per-layer values for each of 262144 tokens: 1.68 B of the E2B's parameters at 25 layers
    assert got["per_layer_token_embd.weight"] == (6400, 262144)


def _at_file_types(spec, model, recipe: str):
    """oomkit's inventory laid out with the file's own tensor types (the quantizer is not under test here),
    32-byte aligned in oomkit's order as gguf_inventory lays a computed inventory out."""
    types = model.tensor_types(recipe)
    out, offset = [], 0
    for t in spec.weights.tensors:
        q = gguf.GGMLQuantizationType(types[t.name])
        nbytes = synth.tensor_nbytes(t.shape, q)
        out.append(TensorSpec(name=t.name, shape=t.shape, dtype=q.name.lower(), nbytes=nbytes, layer=t.layer,
                              offset=offset))
        offset += (nbytes + 31) // 32 * 32
    return replace(spec, weights=WeightInventory(tensors=tuple(out), exact=False, format=recipe.upper()))


@pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")
def test_model_buffer_equals_llama_cpp():
    model = _file_model()
    path = synth.synth_path(model, "q4_0")
    s = dict(next(g.settings_grid()), n_ctx=32768)
    (m,) = g.llamacpp_run.measure_many(path, [s])
    assert m["ok"], m.get("error")
    expected = g.engine_figures(m)
    spec = _at_file_types(spec_from_config(_e2b_config(NL), name="gemma-3n-e2b"), model, "q4_0")
    got = g.oomkit_figures(spec, s)
    # llama.cpp@0c1e57098 CPU_Mapped model buffer of the 25-layer Q4_0 file: 2175.47 MiB
    assert expected["model_mib"] == 2175.47
    assert got["model_mib"] == expected["model_mib"]
    # and the same from the file's header
    assert g.oomkit_figures(read_gguf_spec(path), s)["model_mib"] == expected["model_mib"]


def test_per_layer_token_embd_stays_on_the_cpu_with_every_layer_offloaded():
    """llama.cpp puts LLM_TENSOR_LAYER_INPUT tensors in the input buffer list (CPU) whatever -ngl says
    (src/llama-model.cpp create_tensor: dev_input); the mapping spans the file from token_embd to the per-layer
    embedding (output_norm lies between them in the file: llama_model_loader::get_mapping_range)."""
    model = _file_model()
    path = synth.synth_path(model, "q4_0")
    # the file's layout (GGUFWriter: tensors in list order, 32-byte aligned): token_embd, output_norm, then the table
    names = [t.name for t in model.tensors]
    assert names[:3] == ["token_embd.weight", "output_norm.weight", "per_layer_token_embd.weight"]
    sizes = [synth.tensor_nbytes(t.ne, synth.tensor_type(model, t, "q4_0")) for t in model.tensors[:3]]
    want = sum((n + 31) // 32 * 32 for n in sizes[:2]) + sizes[2]
    est = oomkit.estimate(read_gguf_spec(path), "llama.cpp", vram="80GiB", n_ctx=4096, n_gpu_layers=999,
                          find_max_context=False)
    cpu = est.engine_view["model_buffer_bytes"]["CPU_Mapped"]
    assert round(cpu / MiB, 2) == round(want / MiB, 2)
    assert cpu > 600 * MiB  # the per-layer table alone is 6400 x 262144 at Q4_0: 900 MiB
