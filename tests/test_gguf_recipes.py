"""Ground truth for quant/gguf_recipes.py: llama.cpp's own llama_model_quantize on small synthetic GGUFs.

Each model is written with gguf's GGUFWriter (real tensor names, complete for its architecture, tokenizer
included, so llama.cpp loads it), quantized to every file type llama-quantize makes, and the tensor types it
wrote are read back with GGUFReader and held against recipe_types, tensor by tensor. Types that need an
importance matrix get a flat one (ones), and recipe_types is told so.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import pytest

from oomkit.errors import OomkitError
from oomkit.quant import ggml
from oomkit.quant.gguf_recipes import FTYPES, imatrix_tensors, recipe_types

llama_cpp = pytest.importorskip("llama_cpp")
gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")


@dataclass(frozen=True)
class Synth:
    key: str
    arch: str
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_vocab: int = 512
    n_expert: int = 0
    n_expert_used: int = 0
    tied: bool = False
    source: str = "f16"  # 2-D weights; 1-D tensors, norms and the router stay F32 as convert_hf_to_gguf writes
    rope_freqs: bool = False

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


MODELS = (
    # dense llama, GQA 2, 16 layers so the 1/8, 1/16 and use_more_bits positions all differ; F32 source
    Synth("llama-gqa2", "llama", 16, 256, 4, 2, 512, source="f32", rope_freqs=True),
    # GQA 4 (the n_gqa() >= 4 rules) and tied embeddings (no output.weight)
    Synth("llama-gqa4-tied", "llama", 8, 256, 8, 2, 768, tied=True),
    # Qwen3-MoE: 3-D expert tensors, router, q/k norms; 16 experts
    Synth("qwen3moe", "qwen3moe", 8, 256, 4, 2, 256, n_expert=16, n_expert_used=4),
    # Mixtral-style llama with exactly 8 experts (the n_expert == 8 special cases)
    Synth("llama-moe8", "llama", 4, 256, 8, 2, 512, n_expert=8, n_expert_used=2),
    # rows of 320 (not a multiple of 256: fallbacks) and 400 (not of 32 either: F16)
    Synth("llama-odd-rows", "llama", 6, 320, 5, 1, 400),
)


def tensor_list(m: Synth) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, shape ne0-first, source type) for every tensor the architecture's loader requires."""
    src, hd = m.source, m.head_dim
    t = [("token_embd.weight", (m.n_embd, m.n_vocab), src), ("output_norm.weight", (m.n_embd,), "f32")]
    if not m.tied:
        t.append(("output.weight", (m.n_embd, m.n_vocab), src))
    if m.rope_freqs:
        t.append(("rope_freqs.weight", (hd // 2,), "f32"))
    for i in range(m.n_layer):
        b = f"blk.{i}."
        t += [
            (b + "attn_norm.weight", (m.n_embd,), "f32"),
            (b + "attn_q.weight", (m.n_embd, m.n_head * hd), src),
            (b + "attn_k.weight", (m.n_embd, m.n_head_kv * hd), src),
            (b + "attn_v.weight", (m.n_embd, m.n_head_kv * hd), src),
            (b + "attn_output.weight", (m.n_head * hd, m.n_embd), src),
            (b + "ffn_norm.weight", (m.n_embd,), "f32"),
        ]
        if m.arch == "qwen3moe":
            t += [(b + "attn_q_norm.weight", (hd,), "f32"), (b + "attn_k_norm.weight", (hd,), "f32")]
        if m.n_expert:
            t += [
                (b + "ffn_gate_inp.weight", (m.n_embd, m.n_expert), "f32"),
                (b + "ffn_gate_exps.weight", (m.n_embd, m.n_ff, m.n_expert), src),
                (b + "ffn_down_exps.weight", (m.n_ff, m.n_embd, m.n_expert), src),
                (b + "ffn_up_exps.weight", (m.n_embd, m.n_ff, m.n_expert), src),
            ]
        else:
            t += [
                (b + "ffn_gate.weight", (m.n_embd, m.n_ff), src),
                (b + "ffn_down.weight", (m.n_ff, m.n_embd), src),
                (b + "ffn_up.weight", (m.n_embd, m.n_ff), src),
            ]
    return t


def write_gguf(m: Synth, path) -> None:
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), m.arch)
    w.add_name(m.key)
    w.add_context_length(4096)
    w.add_embedding_length(m.n_embd)
    w.add_block_count(m.n_layer)
    w.add_head_count(m.n_head)
    w.add_head_count_kv(m.n_head_kv)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(m.head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(gguf.LlamaFileType.ALL_F32 if m.source == "f32" else gguf.LlamaFileType.MOSTLY_F16)
    if m.n_expert:
        w.add_expert_count(m.n_expert)
        w.add_expert_used_count(m.n_expert_used)
        if m.arch == "qwen3moe":  # llama's experts are feed_forward_length wide, qwen3moe's have their own key
            w.add_expert_feed_forward_length(m.n_ff)
        w.add_feed_forward_length(m.n_ff * (m.n_expert_used if m.arch == "qwen3moe" else 1))
    else:
        w.add_feed_forward_length(m.n_ff)
    # SentencePiece vocab: specials, the 256 byte tokens, then filler pieces
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"tok{i}" for i in range(m.n_vocab - len(tokens))]
    types = [2, 3, 3] + [6] * 256 + [1] * (m.n_vocab - 259)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * m.n_vocab)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    for name, shape, typ in tensor_list(m):
        data = (rng.standard_normal(tuple(reversed(shape))) * 0.02).astype(np.float16 if typ == "f16" else np.float32)
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("recipes")
    out = {}
    for m in MODELS:
        p = d / f"{m.key}.gguf"
        write_gguf(m, p)
        out[m.key] = p
    return out


def _imatrix(m: Synth):
    """A flat importance matrix: ne0 * n_expert ones per quantizable weight, NULL-terminated."""
    entries = [(n, s) for n, s, _ in tensor_list(m) if len(s) >= 2]
    arr = (llama_cpp.llama_model_imatrix_data * (len(entries) + 1))()
    keep = []
    for i, (name, shape) in enumerate(entries):
        size = shape[0] * (shape[2] if len(shape) > 2 else 1)
        buf = (ctypes.c_float * size)(*([1.0] * size))
        keep.append(buf)
        arr[i].name = name.encode()
        arr[i].data = ctypes.cast(buf, ctypes.POINTER(ctypes.c_float))
        arr[i].size = size
    arr[len(entries)].name = None
    return arr, keep


def quantize(src, dst, ftype_id: int, imatrix=None) -> int:
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype_id
    params.nthread = 4
    if imatrix is not None:
        params.imatrix = ctypes.cast(imatrix, ctypes.POINTER(llama_cpp.llama_model_imatrix_data))
    return llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))


def read_types(path) -> dict[str, str]:
    try:
        r = gguf.GGUFReader(str(path))
    except ValueError:  # a type newer than the installed gguf package knows (q2_0, id 42)
        return _read_types_raw(path)
    return {t.name: ggml.type_by_id(int(t.tensor_type)).name for t in r.tensors}


def _read_types_raw(path) -> dict[str, str]:
    """Tensor name -> type from the GGUF v3 header alone (ggml/include/gguf.h layout)."""
    import struct

    data = open(path, "rb").read()
    pos = 8  # magic + version
    n_tensors, n_kv = struct.unpack_from("<QQ", data, pos)
    pos += 16
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string(p):
        (n,) = struct.unpack_from("<Q", data, p)
        return data[p + 8 : p + 8 + n].decode(), p + 8 + n

    def skip(vtype, p):
        if vtype == 8:
            return string(p)[1]
        if vtype == 9:
            itype, n = struct.unpack_from("<IQ", data, p)
            p += 12
            for _ in range(n):
                p = skip(itype, p)
            return p
        return p + sizes[vtype]

    for _ in range(n_kv):
        _, pos = string(pos)
        (vtype,) = struct.unpack_from("<I", data, pos)
        pos = skip(vtype, pos + 4)
    out = {}
    for _ in range(n_tensors):
        name, pos = string(pos)
        (n_dims,) = struct.unpack_from("<I", data, pos)
        pos += 4 + 8 * n_dims
        (type_id,) = struct.unpack_from("<I", data, pos)
        pos += 12  # type + offset
        out[name] = ggml.type_by_id(type_id).name
    return out


CASES = [(m, f) for m in MODELS for f in FTYPES if f.default_type is not None]


@pytest.mark.parametrize("model,ftype", CASES, ids=[f"{m.key}-{f.name}" for m, f in CASES])
def test_recipe_matches_llama_quantize(sources, tmp_path, model, ftype):
    tensors = [(n, s) for n, s, _ in tensor_list(model)]
    src_types = {n: t for n, s, t in tensor_list(model)}
    kw = dict(arch=model.arch, n_expert=model.n_expert, n_gqa=model.n_head // model.n_head_kv,
              source_types=src_types)
    dst = tmp_path / "out.gguf"
    try:
        plain = recipe_types(ftype, tensors, has_imatrix=False, **kw)
    except OomkitError:
        # we predict llama.cpp refuses (no fallback for the row length); it must refuse too
        assert quantize(sources[model.key], dst, ftype.id) != 0
        return
    need = bool(imatrix_tensors(ftype, plain, tensors, model.arch))
    expected = recipe_types(ftype, tensors, has_imatrix=True, **kw) if need else plain
    assert recipe_types(ftype, tensors, **kw) == expected  # has_imatrix=None picks the same
    imatrix, _keep = _imatrix(model) if need else (None, None)
    assert quantize(sources[model.key], dst, ftype.id, imatrix) == 0
    got = read_types(dst)
    assert set(got) == set(expected)
    diff = {n: (got[n], expected[n]) for n in got if got[n] != expected[n]}
    assert not diff, f"{model.key} {ftype.name}: llama.cpp vs recipe {diff}"


def test_llama_cpp_refuses_imatrix_types_without_one(sources, tmp_path):
    m = MODELS[0]
    tensors = [(n, s) for n, s, _ in tensor_list(m)]
    plain = recipe_types("IQ2_XXS", tensors, "llama", n_gqa=2, has_imatrix=False)
    assert imatrix_tensors("IQ2_XXS", plain, tensors, "llama")
    assert quantize(sources[m.key], tmp_path / "x.gguf", 19) != 0


@pytest.mark.parametrize("model", MODELS, ids=[m.key for m in MODELS])
def test_llama_cpp_loads_the_synthetic_models(sources, model):
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = 0
    mdl = llama_cpp.llama_model_load_from_file(str(sources[model.key]).encode(), mp)
    assert mdl, f"llama.cpp rejected {model.key}"
    try:
        assert llama_cpp.llama_model_n_layer(mdl) == model.n_layer
    finally:
        llama_cpp.llama_model_free(mdl)
