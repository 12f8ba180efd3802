"""Which weight bytes each SGLang rank loads ("Load weight end. ... mem usage"): the tensors of its pipeline stage,
split over tensor parallelism (engines/_tp.py), converted to --dtype, optionally quantized online."""

from __future__ import annotations

from ...model.spec import LayerSpec, ModelSpec, TensorSpec
from ...model.weights import per_layer_sum
from ...quant.dtypes import FLOAT_BYTES, float_bytes
from .. import _tp
from .kv import CacheLayout
from .settings import SGLangSettings

# --quantization methods that quantize an unquantized checkpoint's linear weights at load -> bytes per weight
_ONLINE_QUANT = {"fp8": 1, "w8a8_fp8": 1, "w8a8_int8": 1}


def stage_tensors(spec: ModelSpec, stage: tuple[LayerSpec, ...], first: bool, last: bool) -> tuple[TensorSpec, ...]:
    """The tensors one pipeline stage loads: its layers', the embedding on the first (and, tied, the last), the
    final norm and lm_head on the last."""
    ids = {la.index for la in stage}
    n_trunk = spec.n_trunk_layers
    out = []
    for t in spec.weights.tensors:
        if t.layer is not None:
            if t.layer in ids:
                out.append(t)
            elif t.layer >= n_trunk and last:
                continue  # next-n / MTP weights are loaded by the draft worker only
        elif t.name.startswith("token_embd"):
            if first or (last and spec.tied_embeddings):
                out.append(t)
        elif last:
            out.append(t)
    return tuple(out)


def rank_weights(spec: ModelSpec, s: SGLangSettings, lay: CacheLayout, tensors: tuple[TensorSpec, ...] | None = None
                 ) -> tuple[int, list[str]]:
    """Bytes one TP rank loads ("Load weight end. ... mem usage"), and labels."""
    labels: list[str] = []
    tensors = spec.weights.tensors if tensors is None else tensors
    src = float_bytes(spec.weights.format)  # None: a quantized checkpoint, loaded as stored
    dst = FLOAT_BYTES[lay.model_dtype]
    quant = (s.quantization or "").lower() or None
    total = 0
    for t in tensors:
        b = _tp.tensor_bytes_per_rank(t, spec, lay.attn_tp)
        if src is not None and src != dst:
            b = b * dst // src  # loaded in --dtype (float32 checkpoints load as float16 with auto)
        if src is not None and quant in _ONLINE_QUANT and _online_quantized(t):
            b = b * _ONLINE_QUANT[quant] // dst
        total += b
    if quant and src is not None and quant not in _ONLINE_QUANT:
        labels.append(f"--quantization {quant} on an unquantized checkpoint: weights counted as stored")
    elif quant in _ONLINE_QUANT and src is not None:
        labels.append(f"--quantization {quant}: linear weights quantized online to 1 byte (scales not counted)")
    return total, labels


def _online_quantized(t: TensorSpec) -> bool:
    """Linear layers inside the blocks (not norms, routers, embeddings or the lm_head) get online fp8."""
    if t.layer is None or len(t.shape) < 2:
        return False
    return not any(x in t.name for x in ("norm", "ffn_gate_inp", "ssm_conv1d", "attn_sinks"))


def layer_rank_bytes(spec: ModelSpec, index: int, tp: int) -> int:
    """Bytes of layer `index`'s tensors on one TP rank (the table of every layer built once per spec and tp,
    not a pass over all tensors per layer)."""
    key = (id(spec), tp)
    if _LAST_TABLE[0] != key or _LAST_TABLE[1] is not spec:
        table = per_layer_sum((t.layer, _tp.tensor_bytes_per_rank(t, spec, tp)) for t in spec.weights.tensors)
        _LAST_TABLE[:] = [key, spec, table]
    return _LAST_TABLE[2].get(index, 0)


_LAST_TABLE: list = [None, None, {}]  # (id(spec), tp), the spec itself (so its id is not reused), the table
