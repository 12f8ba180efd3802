"""Model metadata checked for sense before any arithmetic: the one boundary where a ModelSpec is built from a
file, a config or a hub answer (`spec_from_config_checked`, `spec_from_gguf_checked`).

Three kinds of check, in order:

1. ceilings, before anything is allocated per layer, per expert or per head: a config saying 10^12 layers
   or a GGUF saying 2^32-1 is refused in one line instead of building that many layers;
2. values that cannot be (impossible models): a layer period of 0, head_count_kv of 0 or above head_count or
   not dividing it, a RoPE dimension larger than the key length, more experts per token than experts,
   block_count disagreeing with the tensors present, a GGUF shorter than its own tensor data;
3. values that can be but are suspicious: labels on the spec, which every estimate shows as warnings.

The ceilings are ours, far above any published model (the largest have ~128 layers, ~16k hidden, 512
experts, 256k vocabularies), and are said in the error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import ModelError, OomkitError
from .archs import INTERVAL_HYBRIDS, KV_ZERO_HYBRIDS, NO_ATTENTION_LAYERS_OK, NO_CACHE_ARCHS, RECURRENT_ARCHS
from .hf_config import spec_from_config, text_config
from .spec import LayerKind, ModelSpec

if TYPE_CHECKING:
    from .gguf_header import GGUFHeader

MAX_LAYERS = 4096  # also gguf_header.MAX_BLOCKS, checked while the header is read
MAX_WIDTH = 1 << 22  # hidden size, feed-forward size, head dims
MAX_HEADS = 1 << 14
MAX_EXPERTS = 1 << 14
MAX_VOCAB = 1 << 24
MAX_CONTEXT = (1 << 32) - 1  # llama.cpp keeps n_ctx_train in a uint32 (llama_hparams::n_ctx_train)
_LARGE_CONTEXT = 1 << 24  # past this a trained context is more likely a typo than a model

_BLK = re.compile(r"^blk\.(\d+)\.")


@contextmanager
def _as_model_error():
    """The spec builders' one-line errors are about the model: typed as ModelError for the library's callers."""
    try:
        yield
    except OomkitError as e:
        if type(e) is OomkitError:
            raise ModelError(str(e)) from None
        raise


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ceiling(name: str, field: str, value: Any, cap: int, what: str) -> None:
    if _is_num(value) and value > cap:
        shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        raise ModelError(f"{name}: {field} = {shown} is more than the {cap:,} {what} oomkit models; the file is "
                         "damaged or not a real model")


# ----------------------------------------------------------------------------------------------------------
# config.json


_CONFIG_CEILINGS = (
    (("num_hidden_layers", "n_layer", "num_layers"), MAX_LAYERS, "layers"),
    (("num_nextn_predict_layers", "mtp_num_hidden_layers"), MAX_LAYERS, "layers"),
    (("hidden_size", "d_model", "n_embd"), MAX_WIDTH, "hidden units"),
    (("intermediate_size", "ffn_hidden_size", "n_inner", "moe_intermediate_size"), MAX_WIDTH, "feed-forward units"),
    (("head_dim", "kv_channels", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "kv_lora_rank"), MAX_WIDTH,
     "per-head units"),
    (("num_attention_heads", "n_head", "num_heads"), MAX_HEADS, "attention heads"),
    (("num_key_value_heads", "multi_query_group_num", "num_kv_heads"), MAX_HEADS, "KV heads"),
    (("num_experts", "n_routed_experts", "num_local_experts"), MAX_EXPERTS, "experts"),
    (("vocab_size", "padded_vocab_size"), MAX_VOCAB, "vocabulary entries"),
    (("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"), MAX_CONTEXT, "tokens of context"),
)
# Every k-th layer: a period of 0 has no layer of that kind and divides by zero in the layout rules.
_PERIODS = ("full_attention_interval", "attn_layer_period", "expert_layer_period", "no_rope_layer_interval")
_EXPERTS = ("num_experts", "n_routed_experts", "num_local_experts")
# quantization_config's lists of modules kept unquantized (transformers' AWQ / GPTQ / fp8 / bitsandbytes configs,
# compressed-tensors' and ModelOpt's `ignore` / `exclude_modules`): names or regexes, as quant/hf_formats._skip reads them
_MODULE_LISTS = ("modules_to_not_convert", "ignored_layers", "llm_int8_skip_modules", "exclude_modules", "ignore")
_EXPERTS_USED = ("num_experts_per_tok", "moe_topk", "top_k_experts", "num_experts_per_token")


def _first(cfg: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    for k in keys:
        if cfg.get(k) is not None:
            return k, cfg[k]
    return None


def check_config(config: Mapping[str, Any], name: str) -> None:
    """Ceilings and impossible values of a config.json (the language model's part of a VLM wrapper), before
    a layer is built. Types and presence are left to hf_config's reader, which names what is missing."""
    if not isinstance(config, Mapping):
        raise ModelError(f"{name}: config must be a JSON object")
    cfg = text_config(config)
    for k, v in cfg.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise ModelError(f"{name}: config field {k} = {v}, not a finite number")
    for where in (config, cfg):  # transformers PretrainedConfig.architectures: list[str] (the model classes)
        archs = where.get("architectures")
        if archs is not None and not (isinstance(archs, list) and all(isinstance(a, str) for a in archs)):
            raise ModelError(f"{name}: config field architectures = {str(archs)[:60]!r} must be a list of class "
                             "names (strings)")
    mt = cfg.get("model_type")
    if mt is not None and not isinstance(mt, str):
        raise ModelError(f"{name}: config field model_type must be a string, not {type(mt).__name__}")
    for keys, cap, what in _CONFIG_CEILINGS:
        found = _first(cfg, keys)
        if found:
            _ceiling(name, f"config field {found[0]}", found[1], cap, what)
    width = _first(cfg, ("hidden_size", "d_model", "n_embd"))
    if width and _is_num(width[1]) and width[1] == 0:  # every tensor is sized from it: a model of width 0 holds nothing
        raise ModelError(f"{name}: config field {width[0]} = 0: a model's hidden size must be positive")
    ffn = _first(cfg, ("intermediate_size", "ffn_hidden_size", "n_inner"))
    # a dense FFN of width 0: llama.cpp's create_tensor of ffn_up / ffn_down {n_embd, n_ff} has nothing to load (the
    # converter writes no such tensor; src/llama-model.cpp load_tensors refuses the file), transformers' nn.Linear(h, 0)
    if ffn and _is_num(ffn[1]) and ffn[1] == 0:
        raise ModelError(f"{name}: config field {ffn[0]} = 0: a model's feed-forward width must be positive")
    for k in _PERIODS:
        v = cfg.get(k)
        if _is_num(v) and v == 0:
            raise ModelError(f"{name}: config field {k} = 0: a layer period must be at least 1")
    experts, used = _first(cfg, _EXPERTS), _first(cfg, _EXPERTS_USED)
    if experts and used and _is_num(experts[1]) and _is_num(used[1]) and experts[1] > 0:
        if used[1] > experts[1]:
            raise ModelError(f"{name}: config field {used[0]} = {used[1]:g} is more than {experts[0]} = "
                             f"{experts[1]:g}: a token cannot use more experts than there are")
        if used[1] == 0:
            raise ModelError(f"{name}: config field {used[0]} = 0: every token of a mixture-of-experts model uses at "
                             "least one expert")
    q = cfg.get("quantization_config")
    if q is not None and not isinstance(q, Mapping):
        raise ModelError(f"{name}: config field quantization_config must be a JSON object, not "
                         f"{type(q).__name__}")
    for k in _MODULE_LISTS if q is not None else ():  # module names the quantizer left out (a name or a list of them)
        v = q.get(k)
        if v is not None and not isinstance(v, str) and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise ModelError(f"{name}: config field quantization_config.{k} = {str(v)[:60]!r} must be a list of "
                             "module names")


def spec_from_config_checked(config: Mapping[str, Any], name: str = "model", source: str = "",
                             weight_format: str | None = None, publisher: str | None = None) -> ModelSpec:
    """hf_config.spec_from_config behind check_config and check_spec."""
    check_config(config, name)
    with _as_model_error():
        spec = spec_from_config(config, name=name, source=source, weight_format=weight_format, publisher=publisher)
    return check_spec(spec)


# ----------------------------------------------------------------------------------------------------------
# GGUF


def _per_layer(v: Any, n: int) -> list[Any]:
    if isinstance(v, (tuple, list)):
        return list(v[:n])
    return [v] * min(n, MAX_LAYERS)


def check_gguf(header: GGUFHeader, name: str) -> None:
    """Ceilings and impossible values of a GGUF header, before its layers are built."""
    md = header.metadata
    arch = md.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        return  # gguf_file says it lacks general.architecture

    def get(key: str) -> Any:
        v = md.get(f"{arch}.{key}")
        return None if isinstance(v, bool) else v

    # The widths and counts every layer is sized from, read by llama.cpp as unsigned ints (llama-model-loader.cpp
    # get_key / get_key_or_arr: GGUFMeta::GKV<uint32_t>::validate_type refuses a key of another type, "key %s has
    # wrong type %s but expected type %s"): a negative, fractional, string or bool one is the damaged field itself,
    # named before a check that derives from it (a head size of n_embd / n_head) blames another.
    for key in ("block_count", "embedding_length", "context_length", "feed_forward_length", "attention.head_count",
                "attention.head_count_kv", "attention.key_length", "attention.value_length"):
        v = md.get(f"{arch}.{key}")
        if v is not None and not isinstance(v, (tuple, list)) and (isinstance(v, bool) or not isinstance(v, int)
                                                                   or v < 0):
            raise ModelError(f"{name}: GGUF key {arch}.{key} = {v!r} is not a non-negative integer")
    n = get("block_count")
    _ceiling(name, f"{arch}.block_count", n, MAX_LAYERS, "layers")
    if get("embedding_length") == 0:  # llama.cpp sizes every tensor from n_embd: a model of width 0 holds nothing
        raise ModelError(f"{name}: {arch}.embedding_length = 0: a model's hidden size must be positive")
    for key, cap, what in (("embedding_length", MAX_WIDTH, "hidden units"), ("expert_count", MAX_EXPERTS, "experts"),
                           ("context_length", MAX_CONTEXT, "tokens of context"),
                           ("nextn_predict_layers", MAX_LAYERS, "layers")):
        _ceiling(name, f"{arch}.{key}", get(key), cap, what)
    _check_truncated(header, name)
    _check_split(header, name)
    if isinstance(n, int) and n > 0:
        _check_layers_vs_tensors(header, n, name, arch)
        _check_heads(get, n, name, arch)
        nextn = get("nextn_predict_layers")
        if isinstance(nextn, int) and nextn >= n:
            raise ModelError(f"{name}: {arch}.nextn_predict_layers = {nextn} leaves no layer of the {n} to run")
    if get("full_attention_interval") == 0:
        raise ModelError(f"{name}: {arch}.full_attention_interval = 0: a layer period must be at least 1")
    used, experts = get("expert_used_count"), get("expert_count")
    if isinstance(used, int) and isinstance(experts, int) and experts > 0 and used > experts:
        raise ModelError(f"{name}: {arch}.expert_used_count = {used} is more than {arch}.expert_count = {experts}: a "
                         "token cannot use more experts than there are")


def _check_truncated(header: GGUFHeader, name: str) -> None:
    if header.is_truncated:
        raise ModelError(f"{name}: truncated GGUF: {header.file_size:,} bytes, header says at least "
                         f"{header.expected_file_size:,} (an interrupted download?)")


def _check_split(header: GGUFHeader, name: str) -> None:
    """One part of a gguf-split model holds only its own tensors: read alone, most of the weights are missing."""
    count, total = header.metadata.get("split.count"), header.metadata.get("split.tensors.count")
    no = header.metadata.get("split.no")
    if isinstance(count, int) and count > 1 and isinstance(no, int) and not 0 <= no < count:
        # gguf-split numbers its parts 0 .. count-1; llama-model-loader.cpp: "illegal split file idx"
        raise ModelError(f"{name}: split.no = {no} is not a part of split.count = {count}: the file is damaged")
    if isinstance(count, int) and count > 1 and isinstance(total, int) and total > len(header.tensors):
        no = header.metadata.get("split.no")
        part = f"part {no + 1} " if isinstance(no, int) else "one part "
        raise ModelError(f"{name}: is {part}of a {count}-part split GGUF and holds {len(header.tensors)} of its "
                         f"{total} tensors; oomkit reads split GGUFs from the hub, or a merged file "
                         "(llama-gguf-split --merge)")


def _check_layers_vs_tensors(header: GGUFHeader, n: int, name: str, arch: str) -> None:
    if not header.tensors:
        raise ModelError(f"{name}: the GGUF holds no tensors (0 bytes of weights)")
    present: set[int] = set()
    for t in header.tensors:
        m = _BLK.match(t.name)
        if m:
            present.add(int(m.group(1)))
    if not present:
        return  # no per-block tensors at all: an architecture named otherwise; gguf_file decides
    top = max(present)
    if top >= n:
        raise ModelError(f"{name}: {arch}.block_count is {n} but the file has tensors of block {top} "
                         f"(blk.{top}.*): the header contradicts itself")
    if len(present) < n:
        lacking = [i for i in range(n) if i not in present]
        shown = ", ".join(map(str, lacking[:4])) + (", ..." if len(lacking) > 4 else "")
        raise ModelError(f"{name}: {arch}.block_count is {n} but {len(lacking)} of those blocks have no tensors "
                         f"(blk.{shown}): the header contradicts itself")


def _check_heads(get, n: int, name: str, arch: str) -> None:
    heads, kvs = get("attention.head_count"), get("attention.head_count_kv")
    if heads is None:
        return
    hs = _per_layer(heads, n)
    ks = _per_layer(kvs, n) if kvs is not None else hs
    zero_kv_ok = arch in KV_ZERO_HYBRIDS or arch in RECURRENT_ARCHS or arch in NO_CACHE_ARCHS or arch in INTERVAL_HYBRIDS
    for i, (h, k) in enumerate(zip(hs, ks, strict=False)):
        if not isinstance(h, int) or not isinstance(k, int):
            return  # gguf_file names the wrong type
        at = f" (layer {i})" if isinstance(heads, (tuple, list)) or isinstance(kvs, (tuple, list)) else ""
        _ceiling(name, f"{arch}.attention.head_count{at}", h, MAX_HEADS, "attention heads")
        if k > h:
            raise ModelError(f"{name}: {arch}.attention.head_count_kv = {k} is more than head_count = {h}{at}: "
                             "grouped-query attention shares KV heads, it cannot have more")
        if k and h % k:
            raise ModelError(f"{name}: {arch}.attention.head_count_kv = {k} does not divide head_count = {h}{at}")
        if k == 0 and h and not zero_kv_ok:
            raise ModelError(f"{name}: {arch}.attention.head_count_kv = 0{at} for a model with attention: it would "
                             "keep no KV cache at all")
    rope, key_len, key_mla = get("rope.dimension_count"), get("attention.key_length"), get("attention.key_length_mla")
    if key_len is None:
        embd, h0 = get("embedding_length"), next((h for h in hs if isinstance(h, int) and h), 0)
        key_len = embd // h0 if isinstance(embd, int) and h0 else None
    for label, length in (("key_length", key_len), ("key_length_mla", key_mla)):
        if isinstance(rope, int) and isinstance(length, int) and length and rope > length:
            raise ModelError(f"{name}: {arch}.rope.dimension_count = {rope} is more than attention.{label} = {length}: "
                             "RoPE rotates part of each key, never more than all of it")


def spec_from_gguf_checked(header: GGUFHeader, name: str, source: str = "") -> ModelSpec:
    """gguf_file.spec_from_gguf behind check_gguf and check_spec."""
    from .gguf_file import spec_from_gguf  # lazy: a catalog estimate never reads a GGUF

    check_gguf(header, name)
    with _as_model_error():
        spec = spec_from_gguf(header, name=name, source=source)
    _check_required_tensors(header, spec, name)
    return check_spec(spec)


def _missing(names: set[str], i: int, *options: tuple[str, ...]) -> str | None:
    """The first tensor of blk.i the file lacks where none of the options (each a set of tensors that together
    serve) is complete; None where one is."""
    if any(all(f"blk.{i}.{t}.weight" in names for t in opt) for opt in options):
        return None
    first = options[0]
    return next(f"blk.{i}.{t}.weight" for t in first if f"blk.{i}.{t}.weight" not in names)


# Architectures whose every block llama.cpp gives attention weights created without TENSOR_NOT_REQUIRED, outside any
# per-layer condition (src/llama-model.cpp llama_model::load_tensors, the `for (int i = 0; i < n_layer; ++i)` loop of
# each architecture's case, read at b7140 / 2025-11-23): separate Q, K, V and output projections ...
_ATTN_QKV_SPLIT = frozenset((
    "llama", "refact", "minicpm", "granite", "granitemoe", "llada", "llada-moe", "llama4", "grok", "baichuan",
    "stablelm", "jina-bert-v2", "qwen2", "qwen2vl", "dream", "qwen2moe", "qwen3", "qwen3vl", "qwen3moe", "qwen3vlmoe",
    "plamo", "orion", "internlm2", "gemma", "gemma2", "gemma3", "gemma-embedding", "gemma3n", "starcoder2", "xverse",
    "cohere2", "olmo", "olmo2", "seed_oss", "olmoe", "arctic", "deepseek", "bitnet", "nemotron", "exaone", "exaone4",
    "chameleon", "bailingmoe", "dots1", "arcee", "afmoe", "ernie4_5", "ernie4_5-moe", "falcon-h1", "hunyuan-moe",
    "hunyuan-dense", "smollm3", "gpt-oss", "smallthinker", "grovemoe", "minimax-m2", "pangu-embedded"))
# ... one fused QKV projection and the output projection ...
_ATTN_QKV_FUSED = frozenset(("dbrx", "falcon", "starcoder", "neo-bert", "bloom", "mpt", "qwen", "gpt2", "codeshell",
                             "openelm", "gptneox", "jais", "cogvlm"))
# ... or either (`wqkv` created TENSOR_NOT_REQUIRED, then `if (!layer.wqkv)` / `if (layer.wqkv == nullptr)` the
# three separate ones), with the output projection always.
_ATTN_QKV_EITHER = frozenset(("bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v3", "phi2", "phimoe", "chatglm",
                              "glm4"))
_SPLIT, _FUSED = ("attn_q", "attn_k", "attn_v"), ("attn_qkv",)


def _attention_options(arch: str) -> tuple[tuple[str, ...], ...]:
    """The sets of Q / K / V tensors that serve a block of `arch`, the one llama.cpp names when missing first. The
    other form is accepted as well for every listed architecture, so that a later llama.cpp that fuses (or splits) a
    projection the converter wrote differently is never refused on a file it loads."""
    if arch in _ATTN_QKV_FUSED:
        return (_FUSED, _SPLIT)
    if arch in _ATTN_QKV_SPLIT or arch in _ATTN_QKV_EITHER:
        return (_SPLIT, _FUSED)
    return ()


def _check_required_tensors(header: GGUFHeader, spec: ModelSpec, name: str) -> None:
    """A block's weights the spec sizes but the file lacks: llama.cpp's loader stops at the first one
    (src/llama-model.cpp load_tensors' create_tensor without TENSOR_NOT_REQUIRED: "missing tensor '%s'" at b7140;
    llama-cpp-python 0.3.36's build says it from llama_model_loader::check_tensor_dims, measured on Llama GGUFs lacking
    one: "llama_model_load: error loading model: check_tensor_dims: tensor 'blk.1.ffn_down.weight' not found", and
    "... tensor 'blk.0.attn_k.weight' not found"). Asked for: the up / down pair of a dense FFN or of the routed
    experts whose other tensors the block holds, and, for the architectures listed above only, the attention's Q / K /
    V (or fused QKV) and output projections; not attention of other architectures (which of Q / K / V a block carries
    differs: Gemma 4's shared-KV layers, DeepSeek's low-rank Q, the hybrids' recurrent layers), nor biases, norms
    or MTP (nextn) blocks."""
    names = {t.name for t in header.tensors}
    blocks = {int(m.group(1)) for n in names if (m := _BLK.match(n))}  # T5's enc.blk / dec.blk: not read here
    n_trunk = spec.n_layers - spec.n_nextn_layers if spec.n_nextn_layers else spec.n_layers
    n_file = header.metadata.get(f"{spec.architecture}.block_count")
    if isinstance(n_file, int):
        n_trunk = min(n_trunk, n_file - spec.n_nextn_layers)  # looped models repeat the file's blocks
    attention = _attention_options(spec.architecture)
    for layer in spec.layers[:max(n_trunk, 0)]:
        i = layer.index
        if i not in blocks:
            continue
        lacking = _missing(names, i, *attention) if attention else None
        if lacking is None and attention:  # Ollama's own llama4 converter named it attn_out (model/models/llama4)
            lacking = _missing(names, i, ("attn_output",), ("attn_out",))
        present = {t for t in ("ffn_up", "ffn_gate", "ffn_down") if f"blk.{i}.{t}.weight" in names}
        if lacking is None and present:
            lacking = _missing(names, i, ("ffn_up", "ffn_down"))
        exps = {t for t in ("ffn_up_exps", "ffn_gate_exps", "ffn_down_exps", "ffn_gate_up_exps")
                if f"blk.{i}.{t}.weight" in names}
        if lacking is None and exps:
            lacking = _missing(names, i, ("ffn_up_exps", "ffn_down_exps"), ("ffn_gate_up_exps", "ffn_down_exps"))
        if lacking:
            raise ModelError(f"{name}: llama.cpp refuses this GGUF at load: \"error loading model: check_tensor_dims: "
                             f"tensor '{lacking}' not found\" (the file is damaged or incomplete)")


# ----------------------------------------------------------------------------------------------------------
# the built spec


def check_spec(spec: ModelSpec) -> ModelSpec:
    """Per-layer consistency of a built spec (one pass over the layers); suspicious values become labels."""
    name = spec.name
    if spec.weights.tensors and spec.weights.nbytes == 0:
        raise ModelError(f"{name}: the model's tensors hold 0 bytes of weights")
    warnings: list[str] = []
    for layer in spec.layers:
        a = layer.attention
        if a is not None and not a.n_kv_heads and spec.architecture in NO_ATTENTION_LAYERS_OK:
            pass  # deci: no attention (0 heads) or a linear layer in its place (heads, no KV; src/models/deci.cpp)
        elif a is not None and layer.kind is not LayerKind.NONE:
            where = f"{name}: layer {layer.index}"
            if a.n_heads <= 0 or a.n_kv_heads <= 0:
                raise ModelError(f"{where} has attention with {a.n_heads} heads and {a.n_kv_heads} KV heads")
            if layer.kind is not LayerKind.LATENT and a.n_kv_heads > a.n_heads:
                raise ModelError(f"{where} has {a.n_kv_heads} KV heads for {a.n_heads} attention heads")
            if a.head_dim_k <= 0 or a.head_dim_v < 0:
                raise ModelError(f"{where} has attention heads of {a.head_dim_k} (K) and {a.head_dim_v} (V) elements")
            if layer.kind is LayerKind.LATENT and a.qk_rope_head_dim > a.head_dim_k:
                raise ModelError(f"{where}: RoPE dimension {a.qk_rope_head_dim} is more than the key length "
                                 f"{a.head_dim_k}")
            if a.window is not None and spec.n_ctx_train and a.window > spec.n_ctx_train and not warnings:
                warnings.append(f"layer {layer.index}'s attention window ({a.window:,} tokens) is longer than the "
                                f"trained context ({spec.n_ctx_train:,}): check the model's sliding_window")
        f = layer.ffn
        if f.n_experts and f.n_experts_used > f.n_experts:
            raise ModelError(f"{name}: layer {layer.index} uses {f.n_experts_used} experts per token of "
                             f"{f.n_experts}")
        # llama.cpp src/llama-model.cpp load_hparams: GGML_ASSERT(hparams.n_expert_used > 0) when n_expert > 0
        if f.n_experts and f.n_experts_used <= 0:
            raise ModelError(f"{name}: layer {layer.index} has {f.n_experts} experts and uses {f.n_experts_used} per "
                             "token: every token of a mixture-of-experts layer uses at least one expert")
        if f.n_experts and f.n_ff_expert <= 0:  # an expert of no width: no tensor of the checkpoint could hold it
            raise ModelError(f"{name}: layer {layer.index} has {f.n_experts} experts of {f.n_ff_expert} feed-forward "
                             "units each (moe_intermediate_size / expert_feed_forward_length must be positive)")
    if spec.n_ctx_train > _LARGE_CONTEXT:
        warnings.append(f"the trained context of {spec.n_ctx_train:,} tokens is larger than any published model's: "
                        "check max_position_embeddings / context_length")
    return replace(spec, labels=spec.labels + tuple(warnings)) if warnings else spec
