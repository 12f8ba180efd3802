"""Synthetic GGUFs that carry a real model's tensor names, shapes and types, but no weights.

Each builder below returns a `SynthModel`: the exact tensor list llama.cpp's `load_arch_tensors` creates for
that architecture (names from `src/llama-arch.cpp`), every hparam key its `load_arch_hparams` reads, and the
published dimensions of one real checkpoint (cited next to the builder). `write_gguf` writes the GGUF header
with `gguf.GGUFWriter` (metadata, a minimal SPM vocabulary of the real size, tensor infos at the offsets
GGUFWriter lays out) and extends the file to its full size with `truncate`: the tensor data is a sparse hole,
so a 17 GB model costs a few MB of disk.

The llama.cpp read against is the copy vendored by llama-cpp-python 0.3.36 (ggml-org/llama.cpp@0c1e57098).

Tensor types follow a recipe:

- ``"q4_0"``: llama-quantize's plain Q4_0 mixture (`src/llama-quant.cpp`): every 2-D/3-D ``*.weight`` is Q4_0,
  except ``output.weight`` (or ``token_embd.weight`` when the embeddings are tied) which is Q6_K, or Q8_0 when
  its rows are not a multiple of 256 (`llama_tensor_get_type_impl`); tensors llama-quantize never quantizes
  stay F32 (1-D, ``*_norm.weight``, ``ffn_gate_inp``, ``ssm_conv1d``, tensors without a ``weight`` suffix);
  a row that is not a multiple of 32 falls back to F16 (`tensor_type_fallback`).
- ``"f16"``: what ``convert_hf_to_gguf.py --outtype f16`` writes: F16 matrices, the same tensors kept F32.
- ``"mxfp4_moe"``: llama-quantize's MXFP4_MOE: 3-D expert stacks MXFP4, every other matrix Q8_0.

gpt-oss ships its experts as MXFP4 and the converter keeps them, so its experts are MXFP4 in every recipe.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gguf
import numpy as np

Q = gguf.GGMLQuantizationType
VT = gguf.GGUFValueType

# Bump when the written bytes change for the same model + recipe (invalidates cached files).
SYNTH_VERSION = 1

RECIPES = ("q4_0", "f16", "mxfp4_moe")
# general.file_type per recipe (llama.h `llama_ftype`: MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_MXFP4_MOE = 38)
FILE_TYPE = {
    "q4_0": int(gguf.LlamaFileType.MOSTLY_Q4_0),
    "f16": int(gguf.LlamaFileType.MOSTLY_F16),
    "mxfp4_moe": int(gguf.LlamaFileType.MOSTLY_MXFP4_MOE),
}


@dataclass(frozen=True)
class Tensor:
    name: str
    ne: tuple[int, ...]  # ggml order: ne[0] is the row length


@dataclass(frozen=True)
class SynthModel:
    key: str  # short id, e.g. "llama-3.1-8b"
    arch: str  # general.architecture as llama.cpp spells it
    source: str  # where the dimensions come from
    n_vocab: int
    n_layers: int  # block_count actually written (may be fewer than the real model's)
    metadata: tuple[tuple[str, Any, Any], ...]  # (key, value, GGUFValueType or (ARRAY, subtype))
    tensors: tuple[Tensor, ...]
    tied_embeddings: bool
    expert_type: int | None = None  # force this ggml type on 3-D expert stacks (gpt-oss: MXFP4)
    dims: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # published dims, for tests
    # control tokens the checkpoint's tokenizer adds after the byte tokens (e.g. Phi-3's "<|endoftext|>", which
    # llama_vocab::impl::load looks up for a model whose general.name says phi-3)
    added_tokens: tuple[str, ...] = ()

    def tensor_types(self, recipe: str) -> dict[str, int]:
        return {t.name: tensor_type(self, t, recipe) for t in self.tensors}

    def nbytes(self, recipe: str) -> int:
        """Sum of the tensor data sizes (no alignment padding)."""
        return sum(tensor_nbytes(t.ne, tensor_type(self, t, recipe)) for t in self.tensors)

    def fingerprint(self, recipe: str) -> str:
        blob = json.dumps(
            {
                "v": SYNTH_VERSION,
                "arch": self.arch,
                "vocab": self.n_vocab,
                "md": [(k, _jsonable(v), str(t)) for k, v, t in self.metadata],
                "t": [(t.name, t.ne, tensor_type(self, t, recipe)) for t in self.tensors],
                "recipe": recipe,
                **({"added": list(self.added_tokens)} if self.added_tokens else {}),
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


def _jsonable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


# ----------------------------------------------------------------------------------------------------------
# tensor types and sizes
# ----------------------------------------------------------------------------------------------------------


def tensor_nbytes(ne: Sequence[int], qtype: int) -> int:
    block, type_size = gguf.GGML_QUANT_SIZES[Q(qtype)]
    if ne[0] % block:
        raise ValueError(f"row length {ne[0]} is not a multiple of {Q(qtype).name}'s block {block}")
    return int(np.prod(ne, dtype=np.int64)) // block * type_size


def _kept_f32(t: Tensor) -> bool:
    """Tensors llama-quantize leaves alone (`tensor_allows_quantization`) and the converter writes as F32."""
    n = t.name
    return (
        len(t.ne) < 2
        or not n.endswith("weight")
        or n.endswith("_norm.weight")
        or "ffn_gate_inp.weight" in n
        or "ssm_conv1d" in n
        or n == "rope_freqs.weight"
    )


def tensor_type(model: SynthModel, t: Tensor, recipe: str) -> int:
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}; one of {RECIPES}")
    if _kept_f32(t):
        return int(Q.F32)
    is_experts = len(t.ne) == 3 and "_exps." in t.name
    if is_experts and model.expert_type is not None:
        return int(model.expert_type)
    is_output = t.name == "output.weight" or (model.tied_embeddings and t.name == "token_embd.weight")
    if recipe == "f16":
        return int(Q.F16)
    if recipe == "mxfp4_moe":
        want = Q.MXFP4 if (len(t.ne) == 3 and t.ne[2] > 1 and not is_output) else Q.Q8_0
    elif is_output:
        # llama_tensor_get_type_impl: output -> Q6_K, Q8_0 when the row is not a multiple of QK_K
        want = Q.Q6_K if t.ne[0] % 256 == 0 else Q.Q8_0
    else:
        want = Q.Q4_0
    block = gguf.GGML_QUANT_SIZES[want][0]
    if t.ne[0] % block:
        want = Q.F16  # tensor_type_fallback: "must use F16 due to unusual shape"
    return int(want)


# ----------------------------------------------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------------------------------------------


def _spm_vocab(n_vocab: int, added: tuple[str, ...] = ()) -> tuple[list[bytes], list[float], list[int]]:
    """A minimal SentencePiece-style vocabulary: <unk> <s> </s>, the 256 byte tokens, then filler tokens.

    llama.cpp's SPM loader wants unique token texts, scores and token types for every id, and looks up
    "<0x0A>" for the newline token (`llama_vocab::impl::load`)."""
    toks = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{i:02X}>".encode() for i in range(256)]
    types = [2, 3, 3] + [6] * 256  # UNKNOWN, CONTROL, CONTROL, BYTE...
    toks += [t.encode() for t in added]
    types += [3] * len(added)  # CONTROL
    n_fill = n_vocab - len(toks)
    if n_fill < 0:
        raise ValueError(f"n_vocab {n_vocab} too small")
    toks += [f"t{i}".encode() for i in range(n_fill)]
    types += [1] * n_fill  # NORMAL
    return toks, [0.0] * n_vocab, types


def add_metadata(w: gguf.GGUFWriter, metadata: Sequence[tuple[str, Any, Any]], n_vocab: int,
                 added_tokens: tuple[str, ...] = ()) -> None:
    """The model's key/values (an array's type given as (ARRAY, element type)) and an SPM vocabulary of n_vocab
    tokens: tokenizer.ggml.model / tokens / scores / token_type."""
    for key, value, vtype in metadata:
        if isinstance(vtype, tuple):
            w.add_key_value(key, list(value), vtype[0], sub_type=vtype[1])
        else:
            w.add_key_value(key, value, vtype)
    toks, scores, types = _spm_vocab(n_vocab, added_tokens)
    w.add_key_value("tokenizer.ggml.model", "llama", VT.STRING)
    w.add_key_value("tokenizer.ggml.tokens", toks, VT.ARRAY, sub_type=VT.STRING)
    w.add_key_value("tokenizer.ggml.scores", scores, VT.ARRAY, sub_type=VT.FLOAT32)
    w.add_key_value("tokenizer.ggml.token_type", types, VT.ARRAY, sub_type=VT.INT32)


def write_gguf(model: SynthModel, path: str | os.PathLike[str], recipe: str = "q4_0") -> Path:
    """Write `model`'s GGUF header to `path` and extend the file to its full size as a sparse hole."""
    path = Path(path)
    w = gguf.GGUFWriter(path, model.arch)
    w.add_name(f"{model.key} (synthetic, {model.n_layers} layers)")
    w.add_file_type(FILE_TYPE[recipe])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    add_metadata(w, model.metadata, model.n_vocab, model.added_tokens)
    w.add_key_value("tokenizer.ggml.bos_token_id", 1, VT.UINT32)
    w.add_key_value("tokenizer.ggml.eos_token_id", 2, VT.UINT32)
    w.add_key_value("tokenizer.ggml.unknown_token_id", 0, VT.UINT32)

    sizes = []
    for t in model.tensors:
        qtype = tensor_type(model, t, recipe)
        nbytes = tensor_nbytes(t.ne, qtype)
        sizes.append(nbytes)
        # GGUFWriter takes the numpy shape (outermost first) and writes it reversed (ggml order)
        w.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), nbytes, raw_dtype=Q(qtype))
    finish_sparse(w, sizes)
    return path


def finish_sparse(w: gguf.GGUFWriter, sizes: Sequence[int]) -> None:
    """Write the header, key/values and tensor infos added to `w`, then extend the file over the tensors' data
    (each of `sizes` bytes) as a sparse hole, and close it."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    assert w.fout is not None and len(w.fout) == 1
    fout = w.fout[0]
    align = w.data_alignment
    # GGUFWriter.write_tensors_to_file: pad the header to the alignment, then each tensor padded to it
    data_start = gguf.GGUFWriter.ggml_pad(fout.tell(), align)
    fout.truncate(data_start + sum(gguf.GGUFWriter.ggml_pad(n, align) for n in sizes))
    w.close()


def default_cache_dir() -> Path:
    return Path(os.environ.get("OOMKIT_GT_CACHE", Path(tempfile.gettempdir()) / "oomkit-groundtruth"))


def synth_path(model: SynthModel, recipe: str = "q4_0", cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF for (model, recipe), written once into the cache directory (content-addressed)."""
    d = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "gguf"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{model.key}-{model.n_layers}L-{recipe}-{model.fingerprint(recipe)[:12]}.gguf"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".gguf.tmp")
        os.close(fd)
        try:
            write_gguf(model, tmp, recipe)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path


# ----------------------------------------------------------------------------------------------------------
# metadata helpers
# ----------------------------------------------------------------------------------------------------------


class _Meta:
    def __init__(self, arch: str) -> None:
        self.arch = arch
        self.items: list[tuple[str, Any, Any]] = []

    def u32(self, key: str, v: int) -> _Meta:
        self.items.append((f"{self.arch}.{key}", int(v), VT.UINT32))
        return self

    def f32(self, key: str, v: float) -> _Meta:
        self.items.append((f"{self.arch}.{key}", float(v), VT.FLOAT32))
        return self

    def bool(self, key: str, v: bool) -> _Meta:
        self.items.append((f"{self.arch}.{key}", bool(v), VT.BOOL))
        return self

    def str(self, key: str, v: str) -> _Meta:
        self.items.append((f"{self.arch}.{key}", v, VT.STRING))
        return self

    def i32s(self, key: str, v: Sequence[int]) -> _Meta:
        self.items.append((f"{self.arch}.{key}", [int(x) for x in v], (VT.ARRAY, VT.INT32)))
        return self

    def base(self, *, ctx: int, n_embd: int, n_layers: int, n_ff: int, n_head: int, n_head_kv: int,
             rms_eps: float, rope_base: float, n_vocab: int) -> _Meta:
        self.u32("context_length", ctx).u32("embedding_length", n_embd).u32("block_count", n_layers)
        self.u32("feed_forward_length", n_ff).u32("attention.head_count", n_head)
        self.u32("attention.head_count_kv", n_head_kv)
        self.f32("attention.layer_norm_rms_epsilon", rms_eps).f32("rope.freq_base", rope_base)
        self.u32("vocab_size", n_vocab)
        return self


def _blk(i: int, name: str, *ne: int) -> Tensor:
    return Tensor(f"blk.{i}.{name}", tuple(ne))


def _embeddings(n_embd: int, n_vocab: int, tied: bool) -> list[Tensor]:
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,))]
    if not tied:
        ts.append(Tensor("output.weight", (n_embd, n_vocab)))
    return ts


def _attn_gqa(i: int, n_embd: int, n_q: int, n_kv: int, *, qk_norm_dim: int = 0, out_in: int | None = None,
              bias: bool = False) -> list[Tensor]:
    ts = [
        _blk(i, "attn_norm.weight", n_embd),
        _blk(i, "attn_q.weight", n_embd, n_q),
        _blk(i, "attn_k.weight", n_embd, n_kv),
        _blk(i, "attn_v.weight", n_embd, n_kv),
        _blk(i, "attn_output.weight", out_in if out_in is not None else n_q, n_embd),
    ]
    if bias:
        ts += [_blk(i, "attn_q.bias", n_q), _blk(i, "attn_k.bias", n_kv), _blk(i, "attn_v.bias", n_kv)]
    if qk_norm_dim:
        ts += [_blk(i, "attn_q_norm.weight", qk_norm_dim), _blk(i, "attn_k_norm.weight", qk_norm_dim)]
    return ts


def _ffn_dense(i: int, n_embd: int, n_ff: int, norm: bool = True) -> list[Tensor]:
    ts = [_blk(i, "ffn_norm.weight", n_embd)] if norm else []
    return ts + [
        _blk(i, "ffn_gate.weight", n_embd, n_ff),
        _blk(i, "ffn_down.weight", n_ff, n_embd),
        _blk(i, "ffn_up.weight", n_embd, n_ff),
    ]


def _ffn_moe(i: int, n_embd: int, n_ff_exp: int, n_expert: int) -> list[Tensor]:
    return [
        _blk(i, "ffn_gate_inp.weight", n_embd, n_expert),
        _blk(i, "ffn_gate_exps.weight", n_embd, n_ff_exp, n_expert),
        _blk(i, "ffn_down_exps.weight", n_ff_exp, n_embd, n_expert),
        _blk(i, "ffn_up_exps.weight", n_embd, n_ff_exp, n_expert),
    ]


def _layers(n_layers: int | None, real: int) -> int:
    n = real if n_layers is None else int(n_layers)
    if not 1 <= n <= real * 4:
        raise ValueError(f"n_layers {n} out of range")
    return n


# ----------------------------------------------------------------------------------------------------------
# the models
# ----------------------------------------------------------------------------------------------------------


def llama3_8b(n_layers: int | None = None) -> SynthModel:
    """Llama 3.1 8B: meta-llama/Llama-3.1-8B config.json (model_configs.jsonl, source ai-dynamo/aiconfigurator
    meta-llama--Meta-Llama-3.1-8B_config.json): hidden 4096, 32 layers, 32 heads / 8 KV heads (head 128),
    intermediate 14336, vocab 128256, max_position_embeddings 131072, rope_theta 500000, rms_norm_eps 1e-5,
    untied embeddings. llama3 rope scaling is carried by `rope_freqs.weight` (64 F32), as the converter writes.
    Tensors: `src/models/llama.cpp` load_arch_tensors."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "llama", 4096, 32, 8, 128, 14336, 128256
    nl = _layers(n_layers, 32)
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=500000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd)
    ts = _embeddings(n_embd, n_vocab, tied=False) + [Tensor("rope_freqs.weight", (hd // 2,))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + _ffn_dense(i, n_embd, n_ff)
    return SynthModel("llama-3.1-8b", arch, "meta-llama/Llama-3.1-8B config.json", n_vocab, nl,
                      tuple(md.items), tuple(ts), tied_embeddings=False,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_ff=n_ff,
                                n_layer_real=32, n_ctx_train=131072))


def _qwen3(key: str, source: str, *, n_embd: int, n_layers_real: int, n_head: int, n_kv: int, hd: int,
           n_ff: int, tied: bool, n_layers: int | None) -> SynthModel:
    arch, n_vocab = "qwen3", 151936
    nl = _layers(n_layers, n_layers_real)
    md = _Meta(arch).base(ctx=40960, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    ts = _embeddings(n_embd, n_vocab, tied=tied)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd) + _ffn_dense(i, n_embd, n_ff)
    return SynthModel(key, arch, source, n_vocab, nl, tuple(md.items), tuple(ts), tied_embeddings=tied,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_ff=n_ff,
                                n_layer_real=n_layers_real, n_ctx_train=40960))


def qwen3_4b(n_layers: int | None = None) -> SynthModel:
    """Qwen3-4B: Qwen/Qwen3-4B config.json (model_configs.jsonl, source sophgo/LLM-TPU
    models/Qwen3/config/config.json): hidden 2560, 36 layers, 32 heads / 8 KV heads, head_dim 128
    (not 2560/32 = 80), intermediate 9728, vocab 151936, tied embeddings, max_position_embeddings 40960.
    Tensors: `src/models/qwen3.cpp` (attn_q_norm / attn_k_norm of head_dim)."""
    return _qwen3("qwen3-4b", "Qwen/Qwen3-4B config.json", n_embd=2560, n_layers_real=36, n_head=32, n_kv=8,
                  hd=128, n_ff=9728, tied=True, n_layers=n_layers)


def qwen3_8b(n_layers: int | None = None) -> SynthModel:
    """Qwen3-8B: Qwen/Qwen3-8B config.json (model_configs.jsonl, source ai-dynamo/aiconfigurator
    Qwen--Qwen3-8B_config.json): hidden 4096, 36 layers, 32 / 8 heads, head_dim 128, intermediate 12288,
    vocab 151936, untied."""
    return _qwen3("qwen3-8b", "Qwen/Qwen3-8B config.json", n_embd=4096, n_layers_real=36, n_head=32, n_kv=8,
                  hd=128, n_ff=12288, tied=False, n_layers=n_layers)


def qwen3_30b_a3b(n_layers: int | None = None, n_experts: int | None = None) -> SynthModel:
    """Qwen3-30B-A3B: Qwen/Qwen3-30B-A3B config.json (model_configs.jsonl, source ai-dynamo/aiconfigurator
    Qwen--Qwen3-30B-A3B_config.json): hidden 2048, 48 layers, 32 / 4 heads, head_dim 128, 128 experts,
    8 per token, moe_intermediate_size 768, intermediate_size 6144, vocab 151936, untied.
    Tensors: `src/models/qwen3moe.cpp`."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "qwen3moe", 2048, 32, 4, 128, 151936
    n_ff, n_ff_exp, n_used = 6144, 768, 8
    nl = _layers(n_layers, 48)
    n_exp = 128 if n_experts is None else int(n_experts)
    if n_exp < n_used:
        raise ValueError("n_experts must be >= 8 (experts used per token)")
    md = _Meta(arch).base(ctx=40960, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
    return SynthModel("qwen3-30b-a3b", arch, "Qwen/Qwen3-30B-A3B config.json", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=False,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_expert=n_exp,
                                n_expert_used=n_used, n_ff_exp=n_ff_exp, n_layer_real=48, n_ctx_train=40960))


def gemma3_12b(n_layers: int | None = None) -> SynthModel:
    """Gemma 3 12B: google/gemma-3-12b-it text_config (model_configs.jsonl, source AI-Hypercomputer/maxtext
    gemma3_12b_config + google/gemma_pytorch get_config_for_12b): hidden 3840, 48 layers, 16 heads / 8 KV heads,
    head_dim 256, intermediate 15360, vocab 262144, sliding_window 1024, sliding_window_pattern 6 (5 local :
    1 global), rope scaling linear x8, tied embeddings. llama.cpp `src/models/gemma3.cpp`: `load_swa_pattern(ml,
    6)` marks layer il as SWA when il % 6 < 5 (`llama_hparams::set_swa_pattern`), so with fewer layers keep a
    multiple of 6 to have global layers."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab, n_swa = "gemma3", 3840, 16, 8, 256, 15360, 262144, 1024
    nl = _layers(n_layers, 48)
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("attention.sliding_window", n_swa)
    md.str("rope.scaling.type", "linear").f32("rope.scaling.factor", 8.0)
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)]
        ts += _ffn_dense(i, n_embd, n_ff) + [_blk(i, "post_ffw_norm.weight", n_embd)]
    is_swa = [il % 6 < 5 for il in range(nl)]
    return SynthModel("gemma-3-12b", arch, "google/gemma-3-12b-it text_config", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=True,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_ff=n_ff, n_swa=n_swa,
                                is_swa=is_swa, n_layer_real=48, n_ctx_train=131072))


def gemma2_9b(n_layers: int | None = None) -> SynthModel:
    """Gemma 2 9B: google/gemma-2-9b-it config.json (model_configs.jsonl, source mlc-ai/mlc-llm model_preset
    gemma2_9b): hidden 3584, 42 layers, 16 / 8 heads, head_dim 256, intermediate 14336, vocab 256000,
    sliding_window 4096, attn softcap 50, final softcap 30, tied. llama.cpp `src/models/gemma2.cpp`:
    `load_swa_pattern(ml, 2)`: even layers SWA, odd layers global."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab, n_swa = "gemma2", 3584, 16, 8, 256, 14336, 256000, 4096
    nl = _layers(n_layers, 42)
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("attention.sliding_window", n_swa)
    md.f32("attn_logit_softcapping", 50.0).f32("final_logit_softcapping", 30.0)
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + [_blk(i, "post_attention_norm.weight", n_embd)]
        ts += _ffn_dense(i, n_embd, n_ff) + [_blk(i, "post_ffw_norm.weight", n_embd)]
    is_swa = [il % 2 < 1 for il in range(nl)]
    return SynthModel("gemma-2-9b", arch, "google/gemma-2-9b-it config.json", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=True,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_ff=n_ff, n_swa=n_swa,
                                is_swa=is_swa, n_layer_real=42, n_ctx_train=8192))


def gpt_oss_20b(n_layers: int | None = None) -> SynthModel:
    """gpt-oss-20b: openai/gpt-oss-20b config.json (model_configs.jsonl, source ai-dynamo/aiconfigurator
    openai--gpt-oss-20b_config.json): hidden 2880, 24 layers alternating sliding (window 128) / full attention,
    64 heads / 8 KV heads, head_dim 64, 32 experts, 4 per token, intermediate 2880, vocab 201088, yarn x32
    from 4096, max_position_embeddings 131072; experts in MXFP4. llama.cpp `src/models/openai-moe.cpp`:
    `load_swa_pattern(ml, 2)` (even layers SWA), attention sinks `attn_sinks` (n_head), biases on q/k/v/o,
    router and experts."""
    arch, n_embd, n_head, n_kv, hd, n_vocab, n_swa = "gpt-oss", 2880, 64, 8, 64, 201088, 128
    n_exp, n_used, n_ff_exp = 32, 4, 2880
    nl = _layers(n_layers, 24)
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff_exp, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=150000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("attention.sliding_window", n_swa)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.str("rope.scaling.type", "yarn").f32("rope.scaling.factor", 32.0)
    md.u32("rope.scaling.original_context_length", 4096)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True)
        ts += [_blk(i, "attn_output.bias", n_embd), _blk(i, "post_attention_norm.weight", n_embd),
               _blk(i, "attn_sinks.weight", n_head)]
        ts += _ffn_moe(i, n_embd, n_ff_exp, n_exp)
        ts += [_blk(i, "ffn_gate_inp.bias", n_exp), _blk(i, "ffn_gate_exps.bias", n_ff_exp, n_exp),
               _blk(i, "ffn_down_exps.bias", n_embd, n_exp), _blk(i, "ffn_up_exps.bias", n_ff_exp, n_exp)]
    is_swa = [il % 2 < 1 for il in range(nl)]
    return SynthModel("gpt-oss-20b", arch, "openai/gpt-oss-20b config.json", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=False, expert_type=int(Q.MXFP4),
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, n_swa=n_swa,
                                is_swa=is_swa, n_expert=n_exp, n_expert_used=n_used, n_layer_real=24,
                                n_ctx_train=131072))


def deepseek_v3(n_layers: int | None = None, n_experts: int | None = None, legacy: bool = False) -> SynthModel:
    """DeepSeek-V3 (MLA): deepseek-ai/DeepSeek-V3 config.json (model_configs.jsonl, source
    ai-dynamo/aiconfigurator deepseek-ai--DeepSeek-V3_config.json): hidden 7168, 61 layers, 128 heads,
    q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128,
    256 routed experts (8 per token, moe_intermediate_size 2048), 1 shared expert, first_k_dense_replace 3
    (dense intermediate 18432), vocab 129280, max_position_embeddings 163840 (yarn x40 from 4096).

    GGUF as converted after llama.cpp PR #12801 (MLA): head_count_kv 1, key_length 576 (= 512 + 64),
    value_length 512, key_length_mla 192, value_length_mla 128, split `attn_k_b` / `attn_v_b`, so
    `llama_hparams::is_mla()` is true. The MTP layer (num_nextn_predict_layers 1) is left out.
    Tensors: `src/models/deepseek2.cpp`.

    legacy=True: the GGUF as converted before PR #12801 — head_count_kv = n_head, key_length 192,
    value_length 128, no *_mla keys, one unsplit `attn_kv_b` — which llama.cpp still loads, caching the
    decompressed per-head K and V."""
    arch, n_embd, n_head, n_vocab = "deepseek2", 7168, 128, 129280
    q_lora, kv_lora, rope, nope, v_dim = 1536, 512, 64, 128, 128
    n_ff, n_ff_exp, n_used, n_shared, n_dense = 18432, 2048, 8, 1, 3
    nl = _layers(n_layers, 61)
    n_exp = 256 if n_experts is None else int(n_experts)
    if n_exp < n_used:
        raise ValueError("n_experts must be >= 8 (experts used per token)")
    md = _Meta(arch).base(ctx=163840, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head,
                          n_head_kv=n_head if legacy else 1, rms_eps=1e-6, rope_base=10000.0, n_vocab=n_vocab)
    if legacy:
        md.u32("attention.key_length", nope + rope).u32("attention.value_length", v_dim)
    else:
        md.u32("attention.key_length", kv_lora + rope).u32("attention.value_length", kv_lora)
        md.u32("attention.key_length_mla", nope + rope).u32("attention.value_length_mla", v_dim)
    md.u32("attention.q_lora_rank", q_lora).u32("attention.kv_lora_rank", kv_lora)
    md.u32("rope.dimension_count", rope)
    md.u32("leading_dense_block_count", n_dense)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_count", n_shared).f32("expert_weights_scale", 2.5).bool("expert_weights_norm", True)
    md.u32("expert_gating_func", 2)  # sigmoid (LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID)
    md.str("rope.scaling.type", "yarn").f32("rope.scaling.factor", 40.0)
    md.u32("rope.scaling.original_context_length", 4096).f32("rope.scaling.yarn_log_multiplier", 0.1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += [
            _blk(i, "attn_norm.weight", n_embd),
            _blk(i, "attn_q_a_norm.weight", q_lora),
            _blk(i, "attn_kv_a_norm.weight", kv_lora),
            _blk(i, "attn_q_a.weight", n_embd, q_lora),
            _blk(i, "attn_q_b.weight", q_lora, n_head * (nope + rope)),
            _blk(i, "attn_kv_a_mqa.weight", n_embd, kv_lora + rope),
            *([_blk(i, "attn_kv_b.weight", kv_lora, n_head * (nope + v_dim))] if legacy else
              [_blk(i, "attn_k_b.weight", nope, kv_lora, n_head), _blk(i, "attn_v_b.weight", kv_lora, v_dim, n_head)]),
            _blk(i, "attn_output.weight", n_head * v_dim, n_embd),
        ]
        if i < n_dense:
            ts += _ffn_dense(i, n_embd, n_ff)
        else:
            ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
            ts += [
                _blk(i, "exp_probs_b.bias", n_exp),
                _blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp * n_shared),
                _blk(i, "ffn_down_shexp.weight", n_ff_exp * n_shared, n_embd),
                _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp * n_shared),
            ]
    return SynthModel("deepseek-v3-legacy" if legacy else "deepseek-v3", arch, "deepseek-ai/DeepSeek-V3 config.json",
                      n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=False,
                      dims=dict(n_embd=n_embd, n_head=n_head, kv_lora_rank=kv_lora, qk_rope_head_dim=rope,
                                qk_nope_head_dim=nope, v_head_dim=v_dim, q_lora_rank=q_lora, n_expert=n_exp,
                                n_expert_used=n_used, n_layer_dense_lead=n_dense, n_layer_real=61,
                                n_ctx_train=163840))


def mamba2_2_7b(n_layers: int | None = None) -> SynthModel:
    """Mamba-2 2.7B: state-spaces/mamba2-2.7b config.json (d_model 2560, n_layer 64, vocab_size 50277 padded
    to a multiple of pad_vocab_size_multiple 16 = 50288, ssm_cfg layer "Mamba2", tie_embeddings true) with the
    Mamba2 block defaults of state-spaces/mamba `mamba_ssm/modules/mamba2.py` (d_state 128, d_conv 4,
    expand 2 -> d_inner 5120, headdim 64 -> 80 heads, ngroups 1). Not in model_configs.jsonl.
    GGUF keys as convert_hf_to_gguf.py's Mamba2Model writes them (ssm.time_step_rank = n heads,
    context_length 2^20, head_count 0). Tensors: `src/models/mamba2.cpp`."""
    arch, n_embd, n_vocab = "mamba2", 2560, 50288
    d_state, d_conv, d_inner, n_group, headdim = 128, 4, 5120, 1, 64
    n_heads = d_inner // headdim
    nl = _layers(n_layers, 64)
    md = _Meta(arch)
    md.u32("context_length", 1 << 20).u32("embedding_length", n_embd).u32("block_count", nl)
    md.u32("feed_forward_length", 0).u32("attention.head_count", 0)
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).u32("vocab_size", n_vocab)
    md.u32("ssm.conv_kernel", d_conv).u32("ssm.inner_size", d_inner).u32("ssm.state_size", d_state)
    md.u32("ssm.time_step_rank", n_heads).u32("ssm.group_count", n_group)
    conv_dim = d_inner + 2 * n_group * d_state
    d_in_proj = d_inner + conv_dim + n_heads
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += [
            _blk(i, "attn_norm.weight", n_embd),
            _blk(i, "ssm_in.weight", n_embd, d_in_proj),
            _blk(i, "ssm_conv1d.weight", d_conv, conv_dim),
            _blk(i, "ssm_conv1d.bias", conv_dim),
            _blk(i, "ssm_dt.bias", n_heads),
            _blk(i, "ssm_a", 1, n_heads),
            _blk(i, "ssm_d", 1, n_heads),
            _blk(i, "ssm_norm.weight", d_inner // n_group, n_group),
            _blk(i, "ssm_out.weight", d_inner, n_embd),
        ]
    return SynthModel("mamba2-2.7b", arch, "state-spaces/mamba2-2.7b config.json", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=True,
                      dims=dict(n_embd=n_embd, d_state=d_state, d_conv=d_conv, d_inner=d_inner, n_group=n_group,
                                n_layer_real=64))


def _qwen35_meta(md: _Meta, hd: int, d_conv: int, k_heads: int, v_heads: int, k_dim: int, v_dim: int,
                 interval: int) -> _Meta:
    """A Qwen3.5 hybrid's attention and gated-delta-net keys as llama.cpp's src/models/qwen35.cpp (and
    qwen35moe.cpp) read them: ssm.state_size = key head dim, ssm.group_count = key heads, ssm.time_step_rank =
    value heads, ssm.inner_size = value heads x value dim; rope on a quarter of the head, M-RoPE sections."""
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("rope.dimension_count", hd // 4).i32s("rope.dimension_sections", [11, 11, 10, 0])
    md.u32("ssm.conv_kernel", d_conv).u32("ssm.state_size", k_dim).u32("ssm.group_count", k_heads)
    md.u32("ssm.time_step_rank", v_heads).u32("ssm.inner_size", v_heads * v_dim)
    return md.u32("full_attention_interval", interval)


def _gdn_layer(i: int, n_embd: int, d_conv: int, k_heads: int, v_heads: int, k_dim: int, v_dim: int) -> list[Tensor]:
    """A gated delta-net layer's tensors (qwen35, qwen35moe): the fused q/k/v projection the conv runs over, the
    output gate, conv, dt / A / beta / alpha, the per-head norm and the output projection."""
    value_dim = v_dim * v_heads
    conv_dim = 2 * k_dim * k_heads + value_dim
    return [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_qkv.weight", n_embd, conv_dim),
            _blk(i, "attn_gate.weight", n_embd, value_dim), _blk(i, "ssm_conv1d.weight", d_conv, conv_dim),
            _blk(i, "ssm_dt.bias", v_heads), _blk(i, "ssm_a", v_heads), _blk(i, "ssm_beta.weight", n_embd, v_heads),
            _blk(i, "ssm_alpha.weight", n_embd, v_heads), _blk(i, "ssm_norm.weight", v_dim),
            _blk(i, "ssm_out.weight", value_dim, n_embd)]


def qwen35_27b(n_layers: int | None = None) -> SynthModel:
    """Qwen3.5-27B (hybrid: gated delta net + full attention): Qwen/Qwen3.5-27B text_config
    (model_configs.jsonl, source ai-dynamo/aiconfigurator Qwen--Qwen3.5-27B_config.json): hidden 5120,
    64 layers, full_attention_interval 4 (3 linear : 1 full), 24 heads / 4 KV heads, head_dim 256,
    intermediate 17408, linear attention 16 key heads x 128 / 48 value heads x 128, conv kernel 4,
    partial_rotary_factor 0.25 (rope dim 64), mrope_section [11, 11, 10], rope_theta 1e7,
    vocab 248320, untied, max_position_embeddings 262144. The MTP layer is left out.
    GGUF keys as llama.cpp's `src/models/qwen35.cpp` reads them: ssm.state_size = key head dim,
    ssm.group_count = key heads, ssm.time_step_rank = value heads, ssm.inner_size = value heads x value dim;
    layer il is recurrent unless (il + 1) % 4 == 0."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "qwen35", 5120, 24, 4, 256, 17408, 248320
    d_conv, k_heads, v_heads, k_dim, v_dim, interval = 4, 16, 48, 128, 128, 4
    nl = _layers(n_layers, 64)
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=10000000.0, n_vocab=n_vocab)
    _qwen35_meta(md, hd, d_conv, k_heads, v_heads, k_dim, v_dim, interval)
    value_dim = v_dim * v_heads
    ts = _embeddings(n_embd, n_vocab, tied=False)
    is_recr = [(il + 1) % interval != 0 for il in range(nl)]
    for i in range(nl):
        if is_recr[i]:
            ts += _gdn_layer(i, n_embd, d_conv, k_heads, v_heads, k_dim, v_dim)
        else:
            ts += _attn_gqa(i, n_embd, 2 * n_head * hd, n_kv * hd, qk_norm_dim=hd, out_in=n_head * hd)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)]
        ts += _ffn_dense(i, n_embd, n_ff, norm=False)
    return SynthModel("qwen3.5-27b", arch, "Qwen/Qwen3.5-27B text_config", n_vocab, nl, tuple(md.items),
                      tuple(ts), tied_embeddings=False,
                      dims=dict(n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head_dim=hd, is_recurrent=is_recr,
                                d_conv=d_conv, d_state=k_dim, n_group=k_heads, d_inner=value_dim,
                                n_layer_real=64, n_ctx_train=262144))


# every builder, by key (tests iterate over this)
MODELS = {
    "llama-3.1-8b": llama3_8b,
    "qwen3-4b": qwen3_4b,
    "qwen3-8b": qwen3_8b,
    "qwen3-30b-a3b": qwen3_30b_a3b,
    "gemma-3-12b": gemma3_12b,
    "gemma-2-9b": gemma2_9b,
    "gpt-oss-20b": gpt_oss_20b,
    "deepseek-v3": deepseek_v3,
    "deepseek-v3-legacy": lambda n_layers=None, n_experts=None: deepseek_v3(n_layers, n_experts, legacy=True),
    "mamba2-2.7b": mamba2_2_7b,
    "qwen3.5-27b": qwen35_27b,
}
