"""GGUF metadata + tensor infos -> ModelSpec (header only, never tensor data).

Reads the hparams the way llama.cpp's loader does (src/llama-model.cpp `load_hparams`, src/models/<arch>.cpp
`load_arch_hparams`, llama.cpp@0c1e57098): per-layer `head_count_kv` arrays, key/value lengths, the `*_mla`
lengths, sliding-window patterns with each architecture's default, recurrent layers, next-n layers. Exact
weight bytes come from the tensor types in the header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import OomkitError
from ..quant import ggml
from ..quant.gguf_recipes import ftype_name
from ._bytes import printable
from .archs import (
    CHUNKED_ARCHS,
    DSA_INDEXER_ARCHS,
    DSV4_ARCHS,
    GQA_DSA_INDEXER_ARCHS,
    INTERVAL_HYBRIDS,
    KDA_ARCHS,
    KNOWN_ARCHS,
    KV_FROM_START,
    KV_SHARED_FROM_GGUF,
    KV_ZERO_HYBRIDS,
    LATENT_SWA_ARCHS,
    LIGHTNING_ARCHS,
    LOOPED_ARCHS,
    MLA_DECOMPRESSED,
    MSA_INDEXER_ARCHS,
    NO_ATTENTION_LAYERS_OK,
    NO_CACHE_ARCHS,
    NO_LLAMACPP_ARCHS,
    RECURRENT_ARCHS,
    SHORTCONV_ARCHS,
    SWA_BY_LAYER_COUNT,
    SWA_DENSE_FIRST,
    SWA_PATTERN_DEFAULT,
    SWA_PATTERN_FROM_GGUF,
    SWA_WINDOW_DEFAULT,
    SWA_WINDOW_FORCED,
)
from .gguf_header import GGUFHeader, read_gguf_header
from .spec import (
    Attention,
    Ffn,
    LayerKind,
    LayerSpec,
    ModelSpec,
    RecurrentState,
    RopeScaling,
    TensorSpec,
    WeightInventory,
    shared_kv_sources,
)

_BLK = re.compile(r"^(?:enc\.|dec\.)?blk\.(\d+)\.")  # T5: enc.blk.N / dec.blk.N are layer N (tn(..., i))


def read_gguf_spec(path: str | Path, name: str | None = None, ik_types: bool = False) -> ModelSpec:
    header = read_gguf_header(path)
    return spec_from_gguf(header, name=name or Path(path).name, source=str(path), ik_types=ik_types)


class _Meta:
    def __init__(self, md: Mapping[str, Any], arch: str, name: str):
        self.md, self.arch, self.name = md, arch, name

    def get(self, key: str, default: Any = None) -> Any:
        return self.md.get(f"{self.arch}.{key}", default)

    def int(self, key: str, default: int | None = None) -> int:
        v = self.get(key)
        if v is None:
            if default is None:
                raise OomkitError(f"{self.name}: GGUF lacks {self.arch}.{key}")
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise OomkitError(f"{self.name}: GGUF key {self.arch}.{key} = {v!r} is not a non-negative integer")
        return v

    def per_layer(self, key: str, n: int, default: int | None = None) -> list[int]:
        """A scalar or a per-layer array (llama_model_loader::get_key_or_arr)."""
        v = self.get(key)
        if isinstance(v, (tuple, list)):
            if len(v) != n or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
                raise OomkitError(f"{self.name}: GGUF array {self.arch}.{key} must hold {n} non-negative integers")
            return list(v)
        return [self.int(key, default)] * n


def spec_from_gguf(header: GGUFHeader, name: str, source: str = "", ik_types: bool = False) -> ModelSpec:
    """ik_types: keep tensors of ik_llama.cpp's own ggml types (sized exactly); without it such a file is refused,
    as upstream llama.cpp refuses it."""
    md = header.metadata
    arch = md.get("general.architecture")
    if arch is not None and not isinstance(arch, str):
        # llama-model-loader.cpp GGUFMeta::GKV<std::string>::validate_type: "key general.architecture has wrong
        # type ... but expected type string"; the key is there, of another type
        raise OomkitError(f"{name}: GGUF key general.architecture = {arch!r} is not a string (llama.cpp: wrong type, "
                          "expected string)")
    if not isinstance(arch, str) or not arch:
        raise OomkitError(f"{name}: GGUF lacks general.architecture")
    if arch == "clip":
        # src/llama.cpp llama_model_load: "CLIP cannot be used as main model, use it with --mmproj instead"
        raise OomkitError(f"{name}: a multimodal projector (GGUF architecture 'clip'), which llama.cpp does not load as "
                          "the main model; give the language model's GGUF and pass this file as --mmproj")
    if not ik_types:
        _refuse_ik_types(header, name)
    if arch in NO_LLAMACPP_ARCHS:
        raise OomkitError(f"{name}: GGUF architecture '{arch}' has no llama.cpp support ({NO_LLAMACPP_ARCHS[arch]}); "
                          f"llama.cpp stops loading it: \"unknown model architecture: '{arch}'\"")
    if arch not in KNOWN_ARCHS:  # the name as the file holds it, cut and escaped to stay one line
        raise OomkitError(f"{name}: GGUF architecture '{printable(arch, 60)}' is not supported yet")
    m = _Meta(md, arch, name)
    n_all = m.int("block_count")
    if n_all == 0:
        raise OomkitError(f"{name}: {arch}.block_count is 0")
    n_nextn = m.int("nextn_predict_layers", 0)
    n_embd = m.int("embedding_length")
    tensors = _tensor_specs(header, name)
    by_layer = _tensor_shapes_by_layer(tensors)
    n_vocab = _vocab_size(m, md, tensors)

    n_head = m.per_layer("attention.head_count", n_all, 0)
    n_head_kv = m.per_layer("attention.head_count_kv", n_all, None) if m.get("attention.head_count_kv") is not None \
        else list(n_head)
    kinds = _layer_kinds(m, n_all, n_nextn, n_head_kv, by_layer)
    attention = _attention_dims(m, n_embd, n_head, n_head_kv, kinds, n_all)
    recurrent = _recurrent_state(m) if any(k is LayerKind.RECURRENT for k in kinds) or arch == "falcon-h1" else None
    n_expert_used = m.int("expert_used_count", 0)
    kv_source = _kv_sources(m, kinds, n_all - n_nextn)

    layers = []
    for i in range(n_all):
        kind = kinds[i]
        layers.append(LayerSpec(
            index=i, kind=kind,
            # encoders keep their attention dims (no cache, but the graph's heads), as hf_config reads them
            attention=attention[i] if kind not in (LayerKind.RECURRENT, LayerKind.NONE) or arch in NO_CACHE_ARCHS
            else None,
            recurrent=recurrent if kind is LayerKind.RECURRENT or arch == "falcon-h1" else None,
            ffn=_ffn_from_tensors(by_layer.get(i, {}), n_expert_used),
            parallel_recurrent=arch == "falcon-h1", kv_source=kv_source.get(i),
        ))
    _refuse_zero_ffn(m, n_all, layers)
    _refuse_n_rot(m, n_embd, n_head)
    loops = m.int("num_loops", 1) if arch in LOOPED_ARCHS else 1
    if loops > 1 and not n_nextn:
        # nanbeige.cpp load_arch_hparams: num_loops runs the physical blocks that many times; the logical layers
        # i + j x n_layer take layer i's heads, FFN and kinds (n_layer_all = n_layer x num_loops), each with its own
        # KV cache rows, and read layer i's tensors (no weights of their own)
        phys = list(layers)
        layers += [replace(layer, index=layer.index + j * n_all) for j in range(1, loops) for layer in phys]
    fmt = _file_type_name(md.get("general.file_type"))
    return ModelSpec(
        # general.name is the file's text: its control characters (ANSI escapes, line breaks) escaped, not sent to
        # the terminal, and cut to a name's length
        name=printable(str(md.get("general.name") or name), 200), architecture=arch, n_embd=n_embd, n_vocab=n_vocab,
        n_ctx_train=m.int("context_length", 0), layers=tuple(layers),
        weights=WeightInventory(tensors=tensors, exact=True, format=fmt),
        tied_embeddings=not any(t.name == "output.weight" for t in tensors), n_nextn_layers=n_nextn,
        source=source, rope_scaling=_rope_scaling(m),
        rope_finetuned=finetuned if isinstance(finetuned := m.get("rope.scaling.finetuned"), bool) else None,
    )


def _rope_scaling(m: _Meta) -> RopeScaling | None:
    """{arch}.rope.scaling.type / .factor / .original_context_length as convert_hf_to_gguf.py writes them from
    config.json's rope_scaling (gguf-py constants.py RopeScalingType: none, linear, yarn, longrope); older files
    carry {arch}.rope.scale_linear alone."""
    kind, factor = m.get("rope.scaling.type"), m.get("rope.scaling.factor")
    if factor is None and m.get("rope.scale_linear") is not None:
        kind, factor = kind or "linear", m.get("rope.scale_linear")
    if not isinstance(kind, str) or kind in ("", "none"):
        return None
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
        factor = None
    orig = m.get("rope.scaling.original_context_length")
    orig = orig if isinstance(orig, int) and not isinstance(orig, bool) and orig > 0 else None
    return RopeScaling(type=kind, factor=float(factor) if factor is not None else None,
                       original_max_position_embeddings=orig)


def _file_type_name(ftype: Any) -> str:
    if isinstance(ftype, int):
        return ftype_name(ftype)
    return "unknown"


def _refuse_ik_types(header: GGUFHeader, name: str) -> None:
    """A tensor of an ik_llama.cpp-only type: llama.cpp@0c1e57098 ggml/src/gguf.cpp gguf_init_from_file_impl stops
    at the first one ("tensor '%s' has invalid ggml type %d. should be in [0, %d)", GGML_TYPE_COUNT 43), so
    upstream llama.cpp cannot load the file (nor Ollama, whose ggml is upstream's); ik_llama.cpp@8337e4cd can."""
    counts: dict[int, int] = {}
    first = None
    nbytes = 0
    for t in header.tensors:
        ik = ggml.ik_type_by_id(t.ggml_type)
        if ik is not None:
            counts[ik.id] = counts.get(ik.id, 0) + 1
            first = first or t
            nbytes += t.nbytes
    if first is None:
        return
    kinds = ", ".join(f"{ggml.ik_type_by_id(i).name.upper()} (ggml type {i}) x{n}"  # type: ignore[union-attr]
                      for i, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    n_types = 1 + max(t.id for t in ggml.TYPES)
    raise OomkitError(f"{name}: {sum(counts.values())} tensors ({nbytes / 2**30:.2f} GiB) are ik_llama.cpp's quant "
                      f"types, which upstream llama.cpp cannot load: {kinds}; llama.cpp stops at \"tensor "
                      f"'{first.name}' has invalid ggml type {first.ggml_type}. should be in [0, {n_types})\" "
                      "(run the file with ik_llama.cpp; oomkit sizes upstream llama.cpp)")


def _tensor_specs(header: GGUFHeader, name: str) -> tuple[TensorSpec, ...]:
    out = []
    for t in header.tensors:
        try:
            # ik_llama.cpp's types reach here only with spec_from_gguf(ik_types=True): sized with their row meta
            gt = ggml.any_type_by_id(t.ggml_type) or ggml.type_by_id(t.ggml_type)
            nbytes = ggml.tensor_bytes(gt, t.shape)
        except OomkitError as e:
            raise OomkitError(f"{name}: tensor {t.name}: {e}") from None
        m = _BLK.match(t.name)
        out.append(TensorSpec(name=t.name, shape=tuple(t.shape), dtype=gt.name, nbytes=nbytes,
                              layer=int(m.group(1)) if m else None, offset=t.offset, file=t.part))
    return tuple(out)


def _tensor_shapes_by_layer(tensors: Sequence[TensorSpec]) -> dict[int, dict[str, tuple[int, ...]]]:
    out: dict[int, dict[str, tuple[int, ...]]] = {}
    for t in tensors:
        if t.layer is not None:
            out.setdefault(t.layer, {})[t.name.split(".", 2)[2]] = t.shape
    return out


def _vocab_size(m: _Meta, md: Mapping[str, Any], tensors: Sequence[TensorSpec]) -> int:
    v = m.get("vocab_size")
    if isinstance(v, int) and v > 0:
        return v
    for t in tensors:
        if t.name == "token_embd.weight" and len(t.shape) == 2:
            if not t.shape[1]:  # llama.cpp check_tensor_dims wants {n_embd, n_vocab} of the tokenizer's n_vocab
                raise OomkitError(f"{m.name}: token_embd.weight has 0 rows (a vocabulary of no tokens): the file is "
                                  "damaged")
            return t.shape[1]
    tokens = md.get("tokenizer.ggml.tokens")
    n = getattr(tokens, "length", None) or (len(tokens) if isinstance(tokens, (tuple, list)) else 0)
    if n:
        return int(n)
    raise OomkitError(f"{m.name}: cannot tell the vocabulary size (no token_embd.weight, no tokenizer tokens)")


def _gemma_embedding_slides(m: _Meta, i: int) -> bool:
    """Whether layer i of a gemma-embedding GGUF attends within the window (no cache either way): src/models/
    gemma-embedding.cpp load_arch_hparams -> load_swa_pattern(ml, 6): the per-layer sliding_window_pattern array
    where the GGUF has one, else its period (default 6, llama_hparams::set_swa_pattern: the n-th layer dense)."""
    pattern = m.get("attention.sliding_window_pattern")
    if isinstance(pattern, (tuple, list)):
        return i < len(pattern) and bool(pattern[i])
    period = pattern if isinstance(pattern, int) and not isinstance(pattern, bool) else 6
    return period == 0 or (i + 1) % period != 0


def _layer_kinds(m: _Meta, n_all: int, n_nextn: int, n_head_kv: list[int],
                 by_layer: Mapping[int, Mapping[str, tuple[int, ...]]]) -> list[LayerKind]:
    arch = m.arch
    n_trunk = n_all - n_nextn
    if arch in NO_CACHE_ARCHS:
        return [LayerKind.NONE] * n_all
    if arch in RECURRENT_ARCHS:
        return [LayerKind.RECURRENT] * n_all
    if arch in INTERVAL_HYBRIDS:
        recr = m.get("attention.recurrent_layers")
        if isinstance(recr, (tuple, list)) and len(recr) == n_all:
            flags = [bool(x) for x in recr]
        else:
            k = m.int("full_attention_interval", 4)  # qwen3next.cpp: full_attn_interval defaults to 4
            flags = [i < n_trunk and (i + 1) % k != 0 for i in range(n_all)]
        return [LayerKind.RECURRENT if f else LayerKind.FULL for f in flags]
    if arch in KV_ZERO_HYBRIDS:
        kinds = []
        attn = LayerKind.LATENT if m.get("attention.kv_lora_rank") is not None else LayerKind.FULL
        if arch == "lfm2" and m.int("attention.sliding_window", 0) > 0:
            # lfm2.cpp load_arch_hparams: a GGUF window > 0 makes every attention layer slide (is_swa = !is_recr)
            attn = LayerKind.SLIDING
        for i in range(n_all):
            if n_head_kv[i]:
                kinds.append(attn)  # kimi-linear: its attention layers are MLA
            elif arch.startswith("nemotron_h") and any(k.startswith("ffn_") for k in by_layer.get(i, {})):
                kinds.append(LayerKind.NONE)  # nemotron-h.cpp: MLP-only layers have neither KV nor state
            else:
                kinds.append(LayerKind.RECURRENT)
        return kinds
    if arch in DSV4_ARCHS:
        return [LayerKind.SLIDING] * n_all  # deepseek4.cpp: set_swa_pattern(0), the MTP blocks slide too
    if arch in LATENT_SWA_ARCHS:
        # dots3note.cpp: MLA everywhere, the sliding layers from the GGUF's sliding_window_pattern array
        pattern = m.get("attention.sliding_window_pattern")
        if not isinstance(pattern, (tuple, list)) or len(pattern) != n_all:
            raise OomkitError(f"{m.name}: {arch} needs {arch}.attention.sliding_window_pattern with one entry per layer")
        return [LayerKind.SLIDING if i < n_trunk and pattern[i] else LayerKind.LATENT for i in range(n_all)]
    if m.get("attention.kv_lora_rank") is not None and arch not in MLA_DECOMPRESSED:
        return [LayerKind.LATENT] * n_all
    window = m.get("attention.sliding_window")
    if arch in SWA_BY_LAYER_COUNT:
        window = SWA_BY_LAYER_COUNT[arch].get(n_trunk, 0)  # exaone4.cpp: the 32B's depth alone slides
    if arch in CHUNKED_ARCHS and window == 0:
        return [LayerKind.FULL] * n_all  # llama4.cpp: a GGUF that says sliding_window 0 turns chunking off
    if arch in SWA_PATTERN_FROM_GGUF and window:
        pattern = m.get("attention.sliding_window_pattern")
        if not isinstance(pattern, (tuple, list)):
            raise OomkitError(f"{m.name}: {arch} needs {arch}.attention.sliding_window_pattern (a per-layer array), "
                              "which llama.cpp reads to place its sliding-window layers")
    if (arch in SWA_PATTERN_DEFAULT or arch in SWA_PATTERN_FROM_GGUF) and (window or arch in SWA_WINDOW_DEFAULT):
        pattern = m.get("attention.sliding_window_pattern")
        if isinstance(pattern, (tuple, list)):
            if len(pattern) != n_all:
                raise OomkitError(f"{m.name}: sliding_window_pattern has {len(pattern)} entries for {n_all} layers")
            flags = [bool(x) for x in pattern]
        else:
            # llama_hparams::set_swa_pattern(n, dense_first=false): il % n < n - 1 slides; n == 0: all slide
            n = pattern if isinstance(pattern, int) else SWA_PATTERN_DEFAULT[arch]
            if arch in SWA_DENSE_FIRST:  # set_swa_pattern(n, dense_first=true): il % n != 0 slides
                flags = [i < n_trunk and (n == 0 or i % n != 0) for i in range(n_all)]
            else:
                flags = [i < n_trunk and (n == 0 or i % n < n - 1) for i in range(n_all)]
        windowed = LayerKind.CHUNKED if arch in CHUNKED_ARCHS else LayerKind.SLIDING
        return [windowed if f else LayerKind.FULL for f in flags]
    return [LayerKind.FULL] * n_all


def _kv_sources(m: _Meta, kinds: list[LayerKind], n_trunk: int) -> dict[int, int]:
    """Layers that reuse an earlier layer's KV cache: from hparams.n_layer_kv_from_start on (20 in
    src/models/gemma3n.cpp load_arch_hparams), each reads the last cache-owning layer of its own kind (the graph's
    `hparams.has_kv(il)` branch; llama_kv_cache skips them)."""
    start = KV_FROM_START.get(m.arch)
    if m.arch in KV_SHARED_FROM_GGUF:
        start = len(kinds) - m.int("attention.shared_kv_layers", 0)  # gemma4.cpp: n_layer_all - shared
    return shared_kv_sources(kinds, start, n_trunk) if start is not None else {}


def _attention_dims(m: _Meta, n_embd: int, n_head: list[int], n_head_kv: list[int], kinds: list[LayerKind],
                    n_all: int) -> list[Attention | None]:
    out: list[Attention | None] = []
    head0 = next((h for h in n_head if h), 0)
    # llama_model::load_hparams: n_embd_head_k defaults to n_embd / n_head, n_embd_head_v to n_embd_head_k
    default_k = n_embd // head0 if head0 else 0
    key_len = m.int("attention.key_length", default_k)
    val_len = m.int("attention.value_length", key_len)
    key_swa = m.int("attention.key_length_swa", key_len)
    val_swa = m.int("attention.value_length_swa", val_len)
    window = m.int("attention.sliding_window", SWA_WINDOW_DEFAULT.get(m.arch, 0))
    if m.arch in SWA_WINDOW_FORCED and window:
        window = SWA_WINDOW_FORCED[m.arch]
    if m.arch in SWA_BY_LAYER_COUNT:
        window = SWA_BY_LAYER_COUNT[m.arch].get(n_all, 0)  # exaone4.cpp: n_swa = 4096 on the 32B only
    if m.arch in CHUNKED_ARCHS:
        window = SWA_WINDOW_DEFAULT[m.arch]  # llama4.cpp sets n_swa = 8192 (the chunk) over the GGUF's value
    kv_lora = m.int("attention.kv_lora_rank", 0)
    # dots3note.cpp: the DSA indexer only on the layers attention.indexer.types marks 1
    idx_types = m.get("attention.indexer.types") if m.arch in LATENT_SWA_ARCHS else None
    if idx_types is not None and not isinstance(idx_types, (tuple, list)):
        raise OomkitError(f"{m.name}: {m.arch}.attention.indexer.types = {idx_types!r} must be an array (one entry "
                          "per block)")
    for i in range(n_all):
        kind = kinds[i]
        if kind is LayerKind.RECURRENT or kind is LayerKind.NONE and m.arch not in NO_CACHE_ARCHS:
            out.append(None)
            continue
        if n_head[i] == 0 and m.arch in NO_ATTENTION_LAYERS_OK:
            # deci (Nemotron-51B style): a layer without attention keeps its row in the cache at 0 bytes
            # (src/models/deci.cpp: n_head(il) == 0 skips attention; llama_kv_cache counts the layer)
            out.append(Attention(n_heads=0, n_kv_heads=0, head_dim_k=key_len, head_dim_v=val_len))
            continue
        if n_head[i] == 0:
            raise OomkitError(f"{m.name}: layer {i} has attention but head_count is 0")
        if kind is LayerKind.LATENT or m.arch in LATENT_SWA_ARCHS:
            rope = m.int("rope.dimension_count")
            k_mla, v_mla = m.int("attention.key_length_mla", 0), m.int("attention.value_length_mla", 0)
            latent_layout = bool(k_mla and v_mla)
            # MLA-converted GGUFs (llama.cpp PR #12801) store head_count_kv = 1, key_length = kv_lora + rope;
            # the per-head dims are the *_mla lengths. Older GGUFs keep the decompressed per-head K/V.
            hk, hv = (k_mla, v_mla) if latent_layout else (key_len, val_len)
            out.append(Attention(
                n_heads=n_head[i], n_kv_heads=n_head[i], head_dim_k=hk, head_dim_v=hv, kv_lora_rank=kv_lora,
                qk_rope_head_dim=rope, qk_nope_head_dim=hk - rope, v_head_dim=hv,
                q_lora_rank=m.int("attention.q_lora_rank", 0), latent_cache=latent_layout,
                # dots3note's sliding MLA layers: the same latent row (measured: their cache rows are
                # key_length wide even where kv_lora_rank_swa is smaller), within the window
                window=window if kind is LayerKind.SLIDING else None,
                **({"index_head_dim": m.int("attention.indexer.key_length"),
                    "index_n_heads": m.int("attention.indexer.head_count", 0),
                    "index_topk": m.int("attention.indexer.top_k", 0)} if m.arch in DSA_INDEXER_ARCHS
                   and (idx_types is None or (i < len(idx_types) and idx_types[i])) else {}),
            ))
            continue
        if m.arch in DSV4_ARCHS:
            ratios = m.get("attention.compress_ratios")
            if not isinstance(ratios, (tuple, list)) or len(ratios) < n_all or not all(
                    isinstance(r, int) and r in (0, 4, 128) for r in ratios[:n_all]):
                raise OomkitError(f"{m.name}: {m.arch} needs {m.arch}.attention.compress_ratios, one of 0, 4, 128 "
                                  "per block (deepseek4.cpp load_arch_tensors)")
            ratio = ratios[i]
            out.append(Attention(
                n_heads=n_head[i], n_kv_heads=n_head_kv[i], head_dim_k=key_len, head_dim_v=val_len, window=window,
                k_only=True, compress_ratio=ratio,
                **({"index_head_dim": m.int("attention.indexer.key_length"),
                    "index_n_heads": m.int("attention.indexer.head_count", 0),
                    "index_topk": m.int("attention.indexer.top_k", 0)} if ratio == 4 else {})))
            continue
        sliding = kind in (LayerKind.SLIDING, LayerKind.CHUNKED) or m.arch == "gemma-embedding" and window \
            and _gemma_embedding_slides(m, i)
        hk, hv = (key_swa, val_swa) if sliding else (key_len, val_len)
        out.append(Attention(n_heads=n_head[i], n_kv_heads=n_head_kv[i], head_dim_k=hk, head_dim_v=hv,
                             window=window if sliding else None,
                             **({"index_head_dim": m.int("attention.indexer.key_length"),
                                 "index_n_heads": m.int("attention.indexer.head_count", 0),
                                 "index_topk": m.int("attention.indexer.top_k", 0)}
                                if m.arch in MSA_INDEXER_ARCHS or m.arch in GQA_DSA_INDEXER_ARCHS else {})))
    return out


def _recurrent_state(m: _Meta) -> RecurrentState:
    if m.arch in LIGHTNING_ARCHS:
        n_head = m.per_layer("attention.head_count", m.int("block_count"), 0)[0]
        hd = m.int("attention.key_length", m.int("embedding_length") // n_head if n_head else 0)
        return RecurrentState("lightning", d_inner=hd * n_head, d_state=hd, d_conv=0, n_heads=n_head,
                              conv_override=0, ssm_override=hd * hd * n_head)
    if m.arch in KDA_ARCHS:
        # kimi-linear.cpp: conv states of q, k and v ((d_conv - 1) x head_dim x n_head each), a head_dim^2 state
        # per head (llama_hparams::n_embd_r / n_embd_s for KDA)
        hd, d_conv = m.int("kda.head_dim"), m.int("ssm.conv_kernel")
        n_head = m.per_layer("attention.head_count", m.int("block_count"), 0)[0]
        return RecurrentState("gated_delta_net", d_inner=hd * n_head, d_state=hd, d_conv=d_conv, n_heads=n_head,
                              conv_override=max(d_conv - 1, 0) * 3 * hd * n_head, ssm_override=hd * hd * n_head)
    if m.arch in SHORTCONV_ARCHS:
        # llama_hparams::n_embd_r: n_embd * (n_shortconv_l_cache - 1); n_embd_s: 0. LFM2's converter writes
        # shortconv.l_cache and no ssm.* keys (src/models/lfm2.cpp load_arch_hparams reads only that).
        n_embd, l_cache = m.int("embedding_length"), m.int("shortconv.l_cache")
        return RecurrentState("short_conv", d_inner=n_embd, d_state=0, d_conv=l_cache,
                              conv_override=max(l_cache - 1, 0) * n_embd, ssm_override=0)
    if m.arch.startswith("rwkv") or m.arch.endswith("rwkv7"):
        # llama_hparams::n_embd_r/n_embd_s for RWKV: token_shift_count * n_embd and n_embd * wkv head size
        n_embd = m.int("embedding_length")
        head = m.int("wkv.head_size")
        shift = m.int("token_shift_count", 2)
        return RecurrentState("rwkv", d_inner=n_embd, d_state=head, d_conv=0,
                              conv_override=shift * n_embd, ssm_override=n_embd * head)
    mamba1 = m.arch in ("mamba", "jamba")
    return RecurrentState(
        "gated_delta_net" if m.arch in INTERVAL_HYBRIDS else ("mamba" if mamba1 else "mamba2"),
        d_inner=m.int("ssm.inner_size"), d_state=m.int("ssm.state_size"), d_conv=m.int("ssm.conv_kernel"),
        # Mamba-1 loaders (src/models/mamba.cpp, jamba.cpp) do not read ssm.group_count: n_embd_r has no B/C rows
        # (measured: a jamba file with group_count 1 keeps R at 3 x d_inner floats a cell and layer)
        n_group=0 if mamba1 else m.int("ssm.group_count", 0), n_heads=m.int("ssm.time_step_rank", 0),
    )


def _refuse_n_rot(m: _Meta, n_embd: int, n_head: list[int]) -> None:
    """llama-model.cpp load_hparams (llama.cpp@96ac5a23): with heads on layer 0, n_embd_head_k is key_length, else
    n_embd / n_head; llama, deci and falcon then require rope.dimension_count, when given, to equal it ("invalid
    n_rot: %u, expected %u", the load stops)."""
    if m.arch not in ("llama", "deci", "falcon") or not n_head or n_head[0] <= 0 \
            or m.get("rope.dimension_count") is None:
        return
    head_k = m.int("attention.key_length", n_embd // n_head[0])
    n_rot = m.int("rope.dimension_count")
    if n_rot != head_k:
        raise OomkitError(f"{m.name}: {m.arch}.rope.dimension_count = {n_rot} is not the head size {head_k}: llama.cpp "
                          f"refuses the file (invalid n_rot: {n_rot}, expected {head_k})")


def _refuse_zero_ffn(m: _Meta, n_all: int, layers: list[LayerSpec]) -> None:
    """A feed_forward_length of 0 on a layer whose dense FFN tensors are there: llama.cpp creates them {n_embd, 0}
    and check_tensor_dims stops the load ("tensor 'blk.0.ffn_gate.weight' has wrong shape; expected 4096, 0, got
    4096, 14336"; llama-model.cpp load_hparams reads the key with get_key_or_arr; measured on this machine's build)."""
    if m.get("feed_forward_length") is None:
        return
    for i, n_ff in enumerate(m.per_layer("feed_forward_length", n_all)):
        if n_ff == 0 and layers[i].ffn.n_ff and not layers[i].ffn.is_moe:
            raise OomkitError(f"{m.name}: {m.arch}.feed_forward_length is 0 for layer {i}, whose FFN tensors are "
                              f"{layers[i].ffn.n_ff} wide: llama.cpp refuses the file (check_tensor_dims: wrong shape)")


def _ffn_from_tensors(shapes: Mapping[str, tuple[int, ...]], n_expert_used: int) -> Ffn:
    """The FFN as the tensors present say: routed experts (`ffn_*_exps`), shared (`*_shexp`), or dense."""
    up_exps = shapes.get("ffn_up_exps.weight") or shapes.get("ffn_gate_exps.weight")
    shared = shapes.get("ffn_up_shexp.weight")
    # Kimi K3's latent MoE (src/models/kimi-k3.cpp: ffn_routed_down {n_embd, n_expert_latent})
    routed = shapes.get("ffn_routed_down.weight")
    if up_exps and len(up_exps) == 3:
        n_sh = shared[1] if shared and len(shared) == 2 else 0
        return Ffn(n_experts=up_exps[2], n_experts_used=n_expert_used or up_exps[2], n_ff_expert=up_exps[1],
                   n_shared_experts=1 if n_sh else 0, n_ff_shared=n_sh,
                   n_embd_latent=routed[1] if routed and len(routed) == 2 else 0)
    # the FFN's width is ffn_down's input: ffn_up is twice that where the gate is fused into it (glm4, chatglm,
    # phi3: src/models/glm4.cpp, chatglm.cpp, phi3.cpp load ffn_up {n_embd, 2 n_ff} beside ffn_down {n_ff, n_embd})
    down, up = shapes.get("ffn_down.weight"), shapes.get("ffn_up.weight")
    if down and len(down) == 2 and up and len(up) == 2 and up[1] == 2 * down[0]:
        return Ffn(n_ff=down[0])
    return Ffn(n_ff=up[1] if up and len(up) == 2 else 0)
