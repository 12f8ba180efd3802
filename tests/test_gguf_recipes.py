"""Ground truth for quant/gguf_recipes.py: llama.cpp's own llama_model_quantize (llama-cpp-python 0.3.36).

Small models are written with gguf's GGUFWriter (real tensor names, every tensor their architecture requires,
a tokenizer, random weights: llama.cpp loads them), quantized to a sample of file types, and the types
llama.cpp wrote are read back with GGUFReader and held against recipe_types tensor by tensor. Every file type
is also run through llama.cpp's dry run, on those models and on full-size headers of real models (data a
sparse hole), whose log names each tensor's type. Types that need an importance matrix get a flat one, and
recipe_types is told so.
"""

from __future__ import annotations

import ctypes
import os
import re
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
    source: str = "f16"  # f32 | f16 | bf16 for 2-D weights; 1-D tensors, norms and the router stay F32 as convert_hf_to_gguf writes
    rope_freqs: bool = False
    head_dim_: int = 0  # when not n_embd / n_head (Qwen3)

    @property
    def head_dim(self) -> int:
        return self.head_dim_ or self.n_embd // self.n_head


MODELS = (
    # dense llama, GQA 2, 16 layers so the 1/8, 1/16 and use_more_bits positions all differ; F32 source
    Synth("llama-gqa2", "llama", 16, 256, 2, 1, 256, source="f32", rope_freqs=True),
    # GQA 4 (the n_gqa() >= 4 rules) and tied embeddings (no output.weight)
    Synth("llama-gqa4-tied", "llama", 8, 256, 8, 2, 512, tied=True),
    # Qwen3-MoE: 3-D expert tensors, router, q/k norms; 4 experts (the n_expert >= 4 rules)
    Synth("qwen3moe", "qwen3moe", 8, 256, 4, 2, 256, n_expert=4, n_expert_used=2),
    # Mixtral-style llama with exactly 8 experts (the n_expert == 8 special cases)
    Synth("llama-moe8", "llama", 4, 256, 8, 2, 256, n_expert=8, n_expert_used=2),
    # rows of 320 (not a multiple of 256: fallbacks) and 400 (not of 32 either: F16)
    Synth("llama-odd-rows", "llama", 6, 320, 5, 1, 400),
    # fused attn_qkv and a fused gate+up ffn_up, no GQA
    Synth("phi3-qkv", "phi3", 8, 256, 4, 4, 256),
    # Falcon's own rules (output Q8_0, its ffn_down / attn_output mixes), norm biases, BF16 source
    Synth("falcon", "falcon", 16, 256, 4, 1, 512, source="bf16"),
)

# Real models at full size: header with every tensor's real name and shape, data a sparse hole (no disk, no
# RAM). Checked through llama.cpp's dry run, which chooses the types exactly as a real run does.
REAL_SHAPES = (
    Synth("Llama-3.1-8B", "llama", 32, 4096, 32, 8, 14336, n_vocab=128256, source="bf16", rope_freqs=True),
    Synth("Llama-3.1-70B", "llama", 80, 8192, 64, 8, 28672, n_vocab=128256, source="bf16", rope_freqs=True),
    Synth("Llama-3.2-1B", "llama", 16, 2048, 32, 8, 8192, n_vocab=128256, tied=True, source="bf16",
          rope_freqs=True),
    Synth("Qwen3-30B-A3B", "qwen3moe", 48, 2048, 32, 4, 768, n_vocab=151936, n_expert=128, n_expert_used=8,
          source="bf16", head_dim_=128),
    Synth("Mixtral-8x7B", "llama", 32, 4096, 32, 8, 14336, n_vocab=32000, n_expert=8, n_expert_used=2,
          source="bf16"),
)


def tensor_list(m: Synth) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, shape ne0-first, source type) for every tensor the architecture's loader requires."""
    src, hd = m.source, m.head_dim
    t = [("token_embd.weight", (m.n_embd, m.n_vocab), src), ("output_norm.weight", (m.n_embd,), "f32")]
    if not m.tied:
        t.append(("output.weight", (m.n_embd, m.n_vocab), src))
    if m.rope_freqs:
        t.append(("rope_freqs.weight", (hd // 2,), "f32"))
    if m.arch == "falcon":
        t.append(("output_norm.bias", (m.n_embd,), "f32"))
    for i in range(m.n_layer):
        b = f"blk.{i}."
        t.append((b + "attn_norm.weight", (m.n_embd,), "f32"))
        if m.arch in ("phi3", "falcon"):  # fused QKV
            t.append((b + "attn_qkv.weight", (m.n_embd, (m.n_head + 2 * m.n_head_kv) * hd), src))
        else:
            t += [
                (b + "attn_q.weight", (m.n_embd, m.n_head * hd), src),
                (b + "attn_k.weight", (m.n_embd, m.n_head_kv * hd), src),
                (b + "attn_v.weight", (m.n_embd, m.n_head_kv * hd), src),
            ]
        t.append((b + "attn_output.weight", (m.n_head * hd, m.n_embd), src))
        if m.arch == "falcon":  # one norm (with bias) in front of the parallel attention and FFN
            t += [(b + "attn_norm.bias", (m.n_embd,), "f32"), (b + "ffn_up.weight", (m.n_embd, m.n_ff), src),
                  (b + "ffn_down.weight", (m.n_ff, m.n_embd), src)]
            continue
        t.append((b + "ffn_norm.weight", (m.n_embd,), "f32"))
        if m.arch == "qwen3moe":
            t += [(b + "attn_q_norm.weight", (hd,), "f32"), (b + "attn_k_norm.weight", (hd,), "f32")]
        if m.arch == "phi3":  # gate and up fused into one ffn_up of 2 * n_ff
            t += [(b + "ffn_up.weight", (m.n_embd, 2 * m.n_ff), src), (b + "ffn_down.weight", (m.n_ff, m.n_embd), src)]
        elif m.n_expert:
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


def _metadata(w, m: Synth, vocab: bool) -> None:
    w.add_name(m.key)
    w.add_context_length(4096)
    w.add_embedding_length(m.n_embd)
    w.add_block_count(m.n_layer)
    w.add_head_count(m.n_head)
    w.add_head_count_kv(m.n_head_kv)
    w.add_key_length(m.head_dim)
    w.add_value_length(m.head_dim)
    if m.arch == "falcon":
        w.add_layer_norm_eps(1e-5)
    else:
        w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(m.head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_file_type({"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                     "bf16": gguf.LlamaFileType.MOSTLY_BF16}[m.source])
    if m.n_expert:
        w.add_expert_count(m.n_expert)
        w.add_expert_used_count(m.n_expert_used)
        if m.arch == "qwen3moe":  # llama's experts are feed_forward_length wide, qwen3moe's have their own key
            w.add_expert_feed_forward_length(m.n_ff)
        w.add_feed_forward_length(m.n_ff * (m.n_expert_used if m.arch == "qwen3moe" else 1))
    else:
        w.add_feed_forward_length(m.n_ff)
    w.add_vocab_size(m.n_vocab)
    if not vocab:  # quantizing reads hparams only; loading the model needs the vocab
        return
    # SentencePiece vocab: specials, the 256 byte tokens, then filler pieces
    # (and <|endoftext|>, which llama_vocab looks up for models named like phi3)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["<|endoftext|>"]
    tokens += [f"tok{i}" for i in range(m.n_vocab - len(tokens))]
    types = [2, 3, 3] + [6] * 256 + [3] + [1] * (m.n_vocab - 260)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * m.n_vocab)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)


def write_gguf(m: Synth, path) -> None:
    """A complete small model with random weights."""
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), m.arch)
    _metadata(w, m, vocab=True)
    for name, shape, typ in tensor_list(m):
        data = (rng.standard_normal(tuple(reversed(shape))) * 0.02).astype(np.float16 if typ == "f16" else np.float32)
        if typ == "bf16":  # numpy has no bfloat16: hand gguf the raw bytes
            raw = gguf.quants.quantize(data, gguf.GGMLQuantizationType.BF16)
            w.add_tensor(name, raw, raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_sparse_gguf(m: Synth, path) -> None:
    """The real header; the tensor data is a hole of the right size (GGUF aligns each tensor to 32 bytes)."""
    w = gguf.GGUFWriter(str(path), m.arch)
    _metadata(w, m, vocab=False)
    data = 0
    for name, shape, typ in tensor_list(m):
        nbytes = ggml.tensor_bytes(typ, shape)
        w.add_tensor_info(name, tuple(reversed(shape)), np.float32 if typ == "f32" else np.float16, nbytes,
                          raw_dtype=gguf.GGMLQuantizationType[typ.upper()])
        data += -(-nbytes // 32) * 32
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    with open(path, "r+b") as f:
        f.seek(0, os.SEEK_END)
        f.truncate(-(-f.tell() // 32) * 32 + data)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("recipes")
    out = {}
    for m in MODELS + REAL_SHAPES:
        p = d / f"{m.key}.gguf"
        (write_gguf if m in MODELS else write_sparse_gguf)(m, p)
        out[m.key] = p
    return out


def _imatrix(m: Synth, dry_run: bool = False):
    """A flat importance matrix (ones, ne0 * n_expert per weight), NULL-terminated. A dry run only asks
    whether one was given, so it gets a single entry."""
    entries = [(n, s) for n, s, _ in tensor_list(m) if len(s) >= 2][: 1 if dry_run else None]
    arr = (llama_cpp.llama_model_imatrix_data * (len(entries) + 1))()
    keep = []
    for i, (name, shape) in enumerate(entries):
        size = shape[0] * (shape[2] if len(shape) > 2 else 1)
        buf = np.ones(size, dtype=np.float32)
        keep.append(buf)
        arr[i].name = name.encode()
        arr[i].data = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        arr[i].size = size
    arr[len(entries)].name = None
    return arr, keep


class _Log:
    """Routes llama.cpp's log into a string while quantizing (quiet, and dry runs are read from it)."""

    def __init__(self):
        self.text = []
        self._cb = llama_cpp.llama_log_callback(lambda level, text, ud: self.text.append(text.decode()))

    def __enter__(self):
        llama_cpp.llama_log_set(self._cb, ctypes.c_void_p(0))
        return self

    def __exit__(self, *exc):
        from llama_cpp import _logger

        llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


def quantize(src, dst, ftype_id: int, imatrix=None, dry_run: bool = False) -> tuple[int, str]:
    """llama_model_quantize; returns its status and its log."""
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype_id
    params.nthread = os.cpu_count() or 1
    params.dry_run = dry_run
    if imatrix is not None:
        params.imatrix = ctypes.cast(imatrix, ctypes.POINTER(llama_cpp.llama_model_imatrix_data))
    with _Log() as log:
        rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    return rc, "".join(log.text)


# llama.cpp@0c1e57098 src/llama-quant.cpp:llama_model_quantize_impl main loop, per tensor:
#   "[%4d/%4d] %-36s - [%s], type = %6s, " then "size = %8.2f MiB -> %8.2f MiB (%s)\n" when the type changes
_DRY_LINE = re.compile(r"\[\s*\d+/\s*\d+\]\s+(\S+)\s+- \[[^\]]*\], type =\s*(\S+), size =[^(\n]*(?:\((\S+)\))?")


def dry_run_types(log: str) -> dict[str, str]:
    return {m[1]: ggml.type_by_name(m[3] or m[2]).name for m in _DRY_LINE.finditer(log)}


def read_types(path) -> dict[str, str]:
    r = gguf.GGUFReader(str(path))
    return {t.name: ggml.type_by_id(int(t.tensor_type)).name for t in r.tensors}


# Every file type is checked through llama.cpp's dry run (the same type selection, nothing quantized); a
# sample is also quantized for real and read back. (The IQ1/IQ2/IQ3 quantizers search codebooks and take
# seconds per tensor even at these sizes, so they stay in the dry run.)
QUANTIZED_FOR_REAL = {"Q4_0", "Q8_0", "Q4_K_M", "Q5_K_M", "Q6_K", "Q3_K_M", "Q2_K", "IQ4_XS", "Q4_K_S",
                      "Q2_K_S", "MXFP4_MOE", "BF16", "Q1_0"}
ALL = [(m, f) for m in MODELS + REAL_SHAPES for f in FTYPES if f.default_type is not None]
REAL = [(m, f) for m, f in ALL if f.name in QUANTIZED_FOR_REAL and m in MODELS]


def _expected(model: Synth, ftype):
    """(recipe types or None when we predict llama.cpp refuses, whether an imatrix is needed)."""
    tensors = [(n, s) for n, s, _ in tensor_list(model)]
    kw = dict(arch=model.arch, n_expert=model.n_expert, n_gqa=model.n_head // model.n_head_kv,
              source_types={n: t for n, _, t in tensor_list(model)})
    try:
        plain = recipe_types(ftype, tensors, has_imatrix=False, **kw)
    except OomkitError:
        return None, False
    need = bool(imatrix_tensors(ftype, plain, tensors, model.arch))
    expected = recipe_types(ftype, tensors, has_imatrix=True, **kw) if need else plain
    assert recipe_types(ftype, tensors, **kw) == expected  # has_imatrix=None picks the same
    return expected, need


def _compare(model, ftype, got, expected):
    assert set(got) == set(expected)
    diff = {n: (got[n], expected[n]) for n in got if got[n] != expected[n]}
    assert not diff, f"{model.key} {ftype.name}: (llama.cpp, recipe) differ {diff}"


@pytest.mark.parametrize("model,ftype", REAL, ids=[f"{m.key}-{f.name}" for m, f in REAL])
def test_recipe_matches_llama_quantize(sources, tmp_path, model, ftype):
    expected, need = _expected(model, ftype)
    dst = tmp_path / "out.gguf"
    imatrix, _keep = _imatrix(model) if need else (None, None)
    rc, log = quantize(sources[model.key], dst, ftype.id, imatrix)
    if expected is None:  # we predict a refusal (no fallback for the row length): llama.cpp must refuse too
        assert rc != 0
        return
    assert rc == 0, log[-2000:]
    _compare(model, ftype, read_types(dst), expected)


@pytest.mark.parametrize("model,ftype", ALL, ids=[f"{m.key}-{f.name}" for m, f in ALL])
def test_recipe_matches_llama_quantize_dry_run(sources, tmp_path, model, ftype):
    expected, need = _expected(model, ftype)
    imatrix, _keep = _imatrix(model, dry_run=True) if need else (None, None)
    rc, log = quantize(sources[model.key], tmp_path / "none.gguf", ftype.id, imatrix, dry_run=True)
    if expected is None:
        assert rc != 0
        return
    assert rc == 0, log[-2000:]
    _compare(model, ftype, dry_run_types(log), expected)


def test_llama_cpp_refuses_imatrix_types_without_one(sources, tmp_path):
    m = MODELS[0]
    tensors = [(n, s) for n, s, _ in tensor_list(m)]
    plain = recipe_types("IQ2_XXS", tensors, "llama", n_gqa=2, has_imatrix=False)
    assert imatrix_tensors("IQ2_XXS", plain, tensors, "llama")
    rc, log = quantize(sources[m.key], tmp_path / "x.gguf", 19)
    assert rc != 0 and "requires an importance matrix" in log


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


# ---- DeepSeek-V4 (deepseek4): hyper-connections, grouped low-rank output, compressors, lightning indexer ----
# tests/ggufs.deepseek4's tensor set (as llama.cpp@0c1e57098's loader asks for it), header only, its 4 layers repeated
# to 16 so that the first n_layer/8 ffn_down tensors (the IQ1/IQ2 rule) and use_more_bits differ from the rest, with 8
# experts (the n_expert == 8 rules: attn_output Q5_K, attn_v / attn_k Q8_0) and with DeepSeek-V4-Flash's 256.
# llama-quant.cpp@0c1e57098 has no deepseek4 branch: tensor_allows_quantization leaves only the 1-D tensors, the norms,
# ffn_gate_inp and ffn_gate_tid2eid alone (its hc_ / indexer / compressor exclusions are LLM_ARCH_GLM5_NEXT's), and no
# deepseek4 name matches a tensor_get_category substring but ffn_* (attn_output_a / _b, attn_kv, attn_q_a / _b are
# OTHER), so the dry run holds recipe_types to exactly that.
def _deepseek4(n_expert: int, n_layer: int = 16):
    import dataclasses

    from tests.ggufs import deepseek4
    from tests.groundtruth.synth import Tensor

    m = deepseek4()
    ratios = [0, 4, 128, 0]
    md = []
    for k, v, t in m.metadata:
        v = {"deepseek4.expert_count": n_expert, "deepseek4.block_count": n_layer,
             "deepseek4.attention.compress_ratios": (ratios * n_layer)[:n_layer]}.get(k, v)
        md.append((k, v, t))
    ts = []
    for i in range(n_layer):
        for t in m.tensors:
            if not t.name.startswith(f"blk.{i % 4}."):
                continue
            ne = t.ne
            if "_exps." in t.name:
                ne = (*ne[:2], n_expert)
            elif "ffn_gate_inp" in t.name:
                ne = (ne[0], n_expert)
            elif "exp_probs_b" in t.name:
                ne = (n_expert,)
            ts.append(Tensor(f"blk.{i}." + t.name.split(".", 2)[2], ne))
    ts = [t for t in m.tensors if not t.name.startswith("blk.")] + ts
    return dataclasses.replace(m, key=f"deepseek4-e{n_expert}", n_layers=n_layer, metadata=tuple(md), tensors=tuple(ts))


DS4 = {m.key: m for m in (_deepseek4(8), _deepseek4(256))}
DS4_ALL = [(k, f) for k in DS4 for f in FTYPES if f.default_type is not None]


@pytest.fixture(scope="module")
def ds4_sources(tmp_path_factory):
    from tests.groundtruth import synth

    d = tmp_path_factory.mktemp("ds4")
    return {k: synth.write_gguf(m, d / f"{k}.gguf", "f16") for k, m in DS4.items()}


@pytest.mark.parametrize("key,ftype", DS4_ALL, ids=[f"{k}-{f.name}" for k, f in DS4_ALL])
def test_deepseek4_recipe_matches_llama_quantize_dry_run(ds4_sources, tmp_path, key, ftype):
    from tests.groundtruth import synth

    m = DS4[key]
    tensors = [(t.name, tuple(t.ne)) for t in m.tensors]
    src = {t.name: ggml.type_by_id(synth.tensor_type(m, t, "f16")).name for t in m.tensors}
    n_expert = max(s[2] for n, s in tensors if "_exps." in n)
    kw = dict(arch="deepseek4", n_expert=n_expert, n_gqa=32, source_types=src)  # n_gqa(): 32 heads over 1 KV head
    try:
        plain = recipe_types(ftype, tensors, has_imatrix=False, **kw)
    except OomkitError:
        plain = None
    need = plain is not None and bool(imatrix_tensors(ftype, plain, tensors, "deepseek4"))
    expected = recipe_types(ftype, tensors, has_imatrix=True, **kw) if need else plain
    imatrix = None
    if need:  # a dry run only asks whether an importance matrix was given: one flat entry
        name, shape = next((n, s) for n, s in tensors if len(s) >= 2)
        imatrix = (llama_cpp.llama_model_imatrix_data * 2)()
        keep = np.ones(shape[0], dtype=np.float32)
        imatrix[0].name, imatrix[0].size = name.encode(), shape[0]
        imatrix[0].data = keep.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        imatrix[1].name = None
    rc, log = quantize(ds4_sources[key], tmp_path / "none.gguf", ftype.id, imatrix, dry_run=True)
    if expected is None:
        assert rc != 0
        return
    assert rc == 0, log[-2000:]
    got = dry_run_types(log)
    assert set(got) == set(expected)
    diff = {n: (got[n], expected[n]) for n in got if got[n] != expected[n]}
    assert not diff, f"{key} {ftype.name}: (llama.cpp, recipe) differ {diff}"
