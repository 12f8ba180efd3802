"""mx.quantize's affine layout, shared by quantized weights (mlx_lm.convert -q) and the QuantizedKVCache."""

from __future__ import annotations


def quant_row(width: int, bits: int, group: int, dtype_bytes: int) -> int:
    """Bytes of one row of `width` values after mx.quantize (affine): uint32 words of 32/bits values, plus a scale
    and a bias per group in the input dtype (QuantizedKVCache.update_and_fetch init_quant: dim // el_per_int uint32,
    dim // group_size scales and biases)."""
    return width * bits // 8 + 2 * (width // group) * dtype_bytes
