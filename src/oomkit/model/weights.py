"""Weight bytes for a computed tensor list, in a storage format: a GGUF file type (llama-quantize's per-tensor
mix) or a Hugging Face dtype / quantization_config."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..errors import OomkitError
from ..quant import dtypes, ggml, gguf_recipes, published_sizes
from .spec import TensorSpec, WeightInventory
from .tensors import TensorShape, hf_module_name, hf_module_names

# torch dtype names in config.json -> bytes per element
HF_DTYPE_BYTES = {**dtypes.FLOAT_BYTES, **dtypes.FP8_BYTES}
GGUF_ALIGNMENT = 32  # gguf.h GGUF_DEFAULT_ALIGNMENT: each tensor's data padded to 32 bytes


def is_gguf_format(name: str) -> bool:
    """A llama-quantize file type ("Q4_K_M", "IQ4_XS"); plain dtypes (bf16, f16, f32) and the HF quantization
    formats (fp8, awq, nvfp4, mxfp4, ...) count as HF formats."""
    if _is_plain(name) or name.lower() in _FORMAT_CONFIGS:
        return False
    if gguf_recipes.named_mix(name) is not None:
        return True
    try:
        gguf_recipes.ftype_by_name(name)
        return True
    except OomkitError:
        return False


def inventory_for_format(
    tensors: Sequence[TensorShape], *, arch: str, config: Mapping[str, Any], weight_format: str | None, name: str,
    publisher: str | None = None,
) -> WeightInventory:
    """weight_format: None (the config's own dtype/quantization), a GGUF file type ("Q4_K_M"), or a HF dtype.
    publisher: a GGUF's publisher (gguf_inventory), for a GGUF file type."""
    if weight_format is not None and is_gguf_format(weight_format):
        return gguf_inventory(tensors, arch=arch, ftype=weight_format, config=config, publisher=publisher)
    return hf_inventory(tensors, config=config, weight_format=weight_format, name=name)


def gguf_inventory(tensors: Sequence[TensorShape], *, arch: str, ftype: str, config: Mapping[str, Any] | None = None,
                   build: int | None = None, publisher: str | None = None,
                   published: published_sizes.PublishedSize | None = None, n_trunk: int | None = None) -> WeightInventory:
    """The GGUF llama-quantize would write: its per-tensor types (src/llama-quant.cpp), laid out with 32-byte
    alignment in list order as gguf-py's writer does. `ftype` may also name a publisher's mix ("UD-Q4_K_XL",
    "Q6_K_L": quant/gguf_recipes.NAMED_MIXES), whose stand-in is labelled by the caller. `build`: llama-quantize's
    build (None: the newest rules). `publisher`: the owner of the GGUF repo the file comes from ("unsloth"): a
    plain file type takes that publisher's recipe for the model's shape where gguf_recipes.PUBLISHED_RECIPES has
    one (mix_types), and the inventory keeps it for a later retyping. `published`: the file's listed size, which the
    result is scaled to (sized_to_published; `n_trunk` the trunk's layers, the next-n block's after them)."""
    publisher = gguf_recipes.known_publisher(publisher)
    mix = gguf_recipes.named_mix(ftype)
    ft = gguf_recipes.ftype_by_name(mix.ftype if mix else ftype)
    n_expert = max((t.shape[2] for t in tensors if t.name.endswith("_exps.weight") and len(t.shape) == 3), default=0)
    n_gqa = _n_gqa(tensors)
    types = gguf_recipes.mix_types(mix.name if mix else ft.name, [(t.name, t.shape) for t in tensors], arch,
                                   n_expert=n_expert, n_gqa=n_gqa, build=build, publisher=publisher)
    q = (config or {}).get("quantization_config") or {}
    if isinstance(q, Mapping) and q.get("quant_method") == "mxfp4":
        # a checkpoint published in MXFP4 (gpt-oss) converts with its expert blocks as they are: llama.cpp
        # convert_hf_to_gguf.py GptOssModel.repack_mxfp4 writes them as GGML MXFP4 whatever --outtype asks, so
        # its F16 / BF16 GGUF has MXFP4 experts and 16-bit elsewhere. llama-quantize will not requantize them
        # (llama_model_quantize_impl: "requantizing from type mxfp4 is disabled" without --allow-requantize), and
        # the published Q8_0 .. Q2_K files keep them too (tests/fixtures/gguf_mixes/published_files.json)
        types = {n: ("mxfp4" if n.endswith("_exps.weight") else t) for n, t in types.items()}
    out, offset = [], 0
    for t in tensors:
        gt = ggml.type_by_name(types[t.name])
        nbytes = ggml.tensor_bytes(gt, t.shape)
        out.append(TensorSpec(name=t.name, shape=t.shape, dtype=gt.name, nbytes=nbytes, layer=t.layer, offset=offset))
        offset += (nbytes + GGUF_ALIGNMENT - 1) // GGUF_ALIGNMENT * GGUF_ALIGNMENT
    inv = WeightInventory(tensors=tuple(out), exact=False, format=mix.name if mix else ft.name, publisher=publisher)
    if published is not None:
        return sized_to_published(inv, published, n_trunk) or inv
    return inv


# How far a listed size may scale a stand-in's repeating layers before the listing is taken for another file than
# the one the tensor list describes (the stand-ins fell within -29%..+10% of real files: gguf_recipes.STANDIN_MISSES)
_PUBLISHED_SCALE = (0.6, 1.6)


def sized_to_published(inv: WeightInventory, size: published_sizes.PublishedSize,
                       n_trunk: int | None = None) -> WeightInventory | None:
    """A computed GGUF inventory whose tensor bytes total the publisher's listed file size (less an estimate of its
    header, published_sizes.header_bytes): the stand-in's per-tensor types and layout are kept, and the bytes of
    the repeating layers' tensors (`layer` set) scaled by one factor; token_embd, output and the norms outside the
    blocks keep the stand-in's bytes. A file listed without its next-n block (size.file_nextn False) is matched by
    the trunk's tensors (layers below `n_trunk`) and the next-n block's scaled alike. None where the factor falls
    outside _PUBLISHED_SCALE (the listing is not of this tensor list) or there are no repeating layers."""
    emb = next((t for t in inv.tensors if t.name == "token_embd.weight"), None)
    n_vocab = emb.shape[1] if emb is not None and len(emb.shape) > 1 else 0
    in_file = [t for t in inv.tensors if not (size.file_nextn is False and n_trunk is not None and t.layer is not None
                                               and t.layer >= n_trunk)]
    target = size.nbytes - published_sizes.header_bytes(n_vocab, len(in_file))
    fixed = sum(t.nbytes for t in in_file if t.layer is None)
    scaled = sum(t.nbytes for t in in_file if t.layer is not None)
    if scaled <= 0:
        return None
    factor = (target - fixed) / scaled
    if not _PUBLISHED_SCALE[0] <= factor <= _PUBLISHED_SCALE[1]:
        return None
    out, offset = [], 0
    for t in inv.tensors:
        nbytes = t.nbytes if t.layer is None else round(t.nbytes * factor)
        out.append(replace(t, nbytes=nbytes, offset=offset))
        offset += (nbytes + GGUF_ALIGNMENT - 1) // GGUF_ALIGNMENT * GGUF_ALIGNMENT
    return replace(inv, tensors=tuple(out), published=size)


def _n_gqa(tensors: Sequence[TensorShape]) -> int:
    q = next((t for t in tensors if t.name.endswith("attn_q.weight")), None)
    k = next((t for t in tensors if t.name.endswith("attn_k.weight")), None)
    if q and k and k.shape[1]:
        return max(1, q.shape[1] // k.shape[1])
    return 1


def _is_plain(name: str) -> bool:
    """A plain dtype in any spelling ("bf16", "half", "float8_e4m3fn"), or "auto" (the config's own)."""
    return name.lower() == "auto" or dtypes.canonical(name) in HF_DTYPE_BYTES


def hf_dtype(config: Mapping[str, Any], weight_format: str | None) -> str:
    raw = weight_format or config.get("torch_dtype") or config.get("dtype") or "bfloat16"
    key = dtypes.canonical(str(raw).removeprefix("torch."))
    return str(config.get("torch_dtype") or "bfloat16") if key == "auto" else key


def hf_inventory(tensors: Sequence[TensorShape], *, config: Mapping[str, Any], weight_format: str | None,
                 name: str) -> WeightInventory:
    fmt_name = (weight_format or "").lower()
    plain = bool(fmt_name) and _is_plain(fmt_name)
    if (quantization_config(config) and not plain) or (fmt_name and not plain):
        return hf_quantized_inventory(tensors, config=config, weight_format=weight_format, name=name)
    dtype = hf_dtype(config, weight_format)
    size = HF_DTYPE_BYTES.get(dtype)
    if size is None:
        raise OomkitError(f"{name}: unknown weight dtype {dtype!r}")
    out = tuple(TensorSpec(name=t.name, shape=t.shape, dtype=dtype, nbytes=t.n_elements * size, layer=t.layer)
                for t in tensors)
    return WeightInventory(tensors=out, exact=False, format=dtype)


# Format names users type (--quant fp8, Qwen/Qwen3-8B:awq) -> the quantization_config that names them, as the
# usual tools write it (AutoAWQ / AutoGPTQ: 4-bit, group 128; bitsandbytes nf4 with double quant; fp8
# per-tensor dynamic; block fp8 as DeepSeek-V3 ships it).
_FORMAT_CONFIGS = {
    "fp8": {"quant_method": "fp8", "activation_scheme": "dynamic"},
    "fp8-block": {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
    "awq": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
    "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "int4": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "w4a16": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "nf4": {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
            "bnb_4bit_use_double_quant": True},
    "int8": {"quant_method": "bitsandbytes", "load_in_8bit": True},
    "mxfp4": {"quant_method": "mxfp4"},
    "nvfp4": {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "group_size": 16}},
}


def quantization_config(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """config.json's quantization_config; an mlx-lm conversion writes its own "quantization" block instead
    ({"group_size": 64, "bits": 4}), read as quant_method "mlx"."""
    q = config.get("quantization_config")
    if q:
        return q
    mlx = config.get("quantization")
    if isinstance(mlx, Mapping) and "bits" in mlx:
        return {"quant_method": "mlx", **mlx}
    return None


def hf_quantized_inventory(tensors: Sequence[TensorShape], *, config: Mapping[str, Any], weight_format: str | None,
                           name: str) -> WeightInventory:
    """Bytes of a quantized HF checkpoint: each linear weight in the format's stored layout
    (quant/hf_formats.linear_weight_bytes), everything else (norms, biases, embeddings, modules the config
    leaves unquantized) in the checkpoint's dtype."""
    from ..quant import hf_formats  # lazy: only a quantized HF checkpoint needs the format tables

    dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16")
    if weight_format:
        qcfg = _FORMAT_CONFIGS.get(weight_format.lower())
        if qcfg is None:
            raise OomkitError(f"{name}: unknown weight format {weight_format!r}; GGUF types (Q4_K_M, ...) or "
                              f"{', '.join(sorted(_FORMAT_CONFIGS))}, bf16, fp16")
    else:
        qcfg = quantization_config(config)
    fmt = hf_formats.parse_quantization_config(qcfg, dtype)
    plain = hf_formats.dtype_bytes(fmt.dtype)
    # Nemotron-H's configs name its modules as NemotronHForCausalLM does (backbone.layers.N.mixer.*), read on the
    # tensors' first names (quant/hf_formats._nemotron_h_pattern); another class's name for the same tensor (Qwen3.5's
    # linear_attn.out_proj for mixer.out_proj) is none of its modules, so an exclusion of its mixer.out_proj holds
    own_names = str(config.get("model_type", "")).startswith("nemotron_h")
    out = []
    for t in tensors:
        module = hf_module_name(t.name)
        # embeddings stay in the model dtype, except in MLX, which quantizes nn.Embedding too
        embedding_plain = module == "model.embed_tokens" and fmt.method != "mlx"
        sub = None
        if module is not None and not embedding_plain and len(t.shape) >= 2:
            names = hf_module_names(t.name)[:1] if own_names else hf_module_names(t.name)
            sub = next((f for f in (hf_formats.format_of(fmt, m) for m in names) if f), None)
        if sub is None:
            nbytes, dt = t.n_elements * plain, fmt.dtype
        else:
            n_in, n_out = t.shape[0], t.shape[1]  # GGUF order: ne0 = in_features
            stacks = t.shape[2] if len(t.shape) == 3 else 1  # routed experts: one linear per expert
            nbytes, dt = stacks * hf_formats.linear_weight_bytes(sub, n_out, n_in), sub.name
        out.append(TensorSpec(name=t.name, shape=t.shape, dtype=dt, nbytes=nbytes, layer=t.layer))
    return WeightInventory(tensors=tuple(out), exact=False, format=fmt.name, gptq_exllama=fmt.exllama)


def per_layer_sum(pairs: Iterable[tuple[int | None, int]]) -> dict[int, int]:
    """Bytes per block from (layer, bytes) pairs in one pass (tensors outside the blocks, layer None, left out):
    a per-layer table for thousands of layers without summing every tensor once per layer."""
    out: dict[int, int] = {}
    for layer, n in pairs:
        if layer is not None:
            out[layer] = out.get(layer, 0) + n
    return out
