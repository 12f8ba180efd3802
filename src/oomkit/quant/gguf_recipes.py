"""llama-quantize's per-tensor type mix for each GGUF file type (Q4_K_M, IQ4_XS, ...).

A line-by-line mirror of llama.cpp@0c1e57098 src/llama-quant.cpp, so a GGUF's size can be predicted from
its tensor list alone. The rules depend on the whole tensor list (attn_v / ffn_down counters give layer
positions), so `recipe_types` takes the list and walks it in llama.cpp's order. tests/test_gguf_recipes.py
holds the result against llama.cpp's own llama_model_quantize.

Publishers' own mixes (unsloth's "UD-*", bartowski's "_L") are llama-quantize runs with options: `NAMED_MIXES` gives
each name's stand-in, `PUBLISHED_RECIPES` the per-tensor types read from a publisher's real files for one model shape;
`mix_types` picks between them and `mix_label` says which one an estimate used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from oomkit.errors import OomkitError
from oomkit.quant.ggml import ik_type_by_name, type_by_name


@dataclass(frozen=True)
class Ftype:
    name: str  # llama-quantize's name ("Q4_K_M")
    id: int  # LLAMA_FTYPE_* = GGUF general.file_type
    default_type: str | None  # llama_ftype_get_default_type; None: llama-quantize cannot produce it

    @property
    def unquantized(self) -> bool:
        return self.name in UNQUANTIZED


# llama.cpp@0c1e57098 include/llama.h:enum llama_ftype (ids) and
# llama.cpp@0c1e57098 src/llama-quant.cpp:llama_ftype_get_default_type (the type quantizable tensors start from).
FTYPES: tuple[Ftype, ...] = (
    Ftype("F32", 0, "f32"),
    Ftype("F16", 1, "f16"),
    Ftype("Q4_0", 2, "q4_0"),
    Ftype("Q4_1", 3, "q4_1"),
    Ftype("Q8_0", 7, "q8_0"),
    Ftype("Q5_0", 8, "q5_0"),
    Ftype("Q5_1", 9, "q5_1"),
    Ftype("Q2_K", 10, "q2_K"),
    Ftype("Q3_K_S", 11, "q3_K"),
    Ftype("Q3_K_M", 12, "q3_K"),
    Ftype("Q3_K_L", 13, "q3_K"),
    Ftype("Q4_K_S", 14, "q4_K"),
    Ftype("Q4_K_M", 15, "q4_K"),
    Ftype("Q5_K_S", 16, "q5_K"),
    Ftype("Q5_K_M", 17, "q5_K"),
    Ftype("Q6_K", 18, "q6_K"),
    Ftype("IQ2_XXS", 19, "iq2_xxs"),
    Ftype("IQ2_XS", 20, "iq2_xs"),
    Ftype("Q2_K_S", 21, "q2_K"),
    Ftype("IQ3_XS", 22, "iq3_s"),
    Ftype("IQ3_XXS", 23, "iq3_xxs"),
    Ftype("IQ1_S", 24, "iq1_s"),
    Ftype("IQ4_NL", 25, "iq4_nl"),
    Ftype("IQ3_S", 26, "iq3_s"),
    Ftype("IQ3_M", 27, "iq3_s"),
    Ftype("IQ2_S", 28, "iq2_xs"),
    Ftype("IQ2_M", 29, "iq2_s"),
    Ftype("IQ4_XS", 30, "iq4_xs"),
    Ftype("IQ1_M", 31, "iq1_m"),
    Ftype("BF16", 32, "bf16"),
    Ftype("TQ1_0", 36, "tq1_0"),
    Ftype("TQ2_0", 37, "tq2_0"),
    Ftype("MXFP4_MOE", 38, "mxfp4"),
    Ftype("NVFP4", 39, None),  # written by convert_hf_to_gguf only; llama-quantize rejects it
    Ftype("Q1_0", 40, "q1_0"),
    Ftype("Q2_0", 41, "q2_0"),
)

UNQUANTIZED = frozenset({"F32", "F16", "BF16"})

# Ids no longer produced, still found in old files' general.file_type (llama.cpp@0c1e57098 include/llama.h:enum llama_ftype comments).
_LEGACY_NAMES = {4: "Q4_1_SOME_F16", 5: "Q4_2", 6: "Q4_3", 33: "Q4_0_4_4", 34: "Q4_0_4_8", 35: "Q4_0_8_8",
                 1024: "GUESSED"}

# llama.cpp@0c1e57098 tools/quantize/quantize.cpp:QUANT_OPTIONS: bare K names mean the medium mix.
_ALIASES = {"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M", "ALL_F32": "F32", "FP32": "F32",
            "FP16": "F16", "MXFP4": "MXFP4_MOE"}
_BY_NAME = {f.name: f for f in FTYPES}
_BY_ID = {f.id: f for f in FTYPES}


def ftype_by_name(name: str | Ftype) -> Ftype:
    """Case-insensitive; accepts "q4_k_m", "Q4_K" (= Q4_K_M), "MOSTLY_Q4_K_M", "LLAMA_FTYPE_MOSTLY_Q4_K_M"."""
    if isinstance(name, Ftype):
        return name
    key = str(name).strip().upper().replace("-", "_")
    key = key.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_")
    key = _ALIASES.get(key, key)
    ft = _BY_NAME.get(key)
    if ft is None:
        raise OomkitError(f"unknown GGUF file type {name!r}; valid: {', '.join(f.name for f in FTYPES)}")
    return ft


def ftype_by_id(ftype_id: int) -> Ftype:
    ft = _BY_ID.get(int(ftype_id))
    if ft is None:
        raise OomkitError(f"unknown GGUF file type id {ftype_id} ({ftype_name(ftype_id)})")
    return ft


def ftype_name(ftype_id: int) -> str:
    """Name for a GGUF general.file_type, including retired ids."""
    ft = _BY_ID.get(int(ftype_id))
    return ft.name if ft else _LEGACY_NAMES.get(int(ftype_id), f"unknown({ftype_id})")


# ---- tensor categories: llama.cpp@0c1e57098 src/llama-quant.cpp:tensor_get_category (substrings, in order) ----

_OUTPUT, _TOKEN_EMBD, _QKV, _KV_B, _V, _K, _Q, _ATTN_OUT, _UP, _GATE, _DOWN, _OTHER = range(12)
_CATEGORY_SUBSTRINGS = (("attn_qkv.weight", _QKV), ("attn_kv_b.weight", _KV_B), ("attn_v.weight", _V),
                        ("attn_k.weight", _K), ("attn_q.weight", _Q), ("attn_output.weight", _ATTN_OUT),
                        ("ffn_up", _UP), ("ffn_gate", _GATE), ("ffn_down", _DOWN))


@functools.lru_cache(maxsize=8192)  # one tensor name per layer and kind; every file type asks again
def _category(name: str) -> int:
    if name == "output.weight":
        return _OUTPUT
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return _TOKEN_EMBD
    for sub, cat in _CATEGORY_SUBSTRINGS:
        if sub in name:
            return cat
    return _OTHER


def _is_attn_v(cat: int) -> bool:  # category_is_attn_v: the tensors that produce V
    return cat in (_V, _QKV, _KV_B)


# PR #19770 "llama-quant : fail early on missing imatrix, refactor type selection" (1dab5f5a4, 2026-03-10, b8266)
# made attn_qkv and attn_kv_b take attn_v's rules (category_is_attn_v). Before it llama_tensor_get_type's branches
# matched name.find("attn_v.weight") alone, so only attn_v moved i_attention_wv (n_attention_wv counted all three
# all along, llama_model_quantize_impl's first loop), and attn_qkv had its own branch: Q3_K_M / Q3_K_L / IQ3_M ->
# Q4_K, Q4_K_M -> Q5_K, Q5_K_M -> Q6_K (llama.cpp@1dab5f5a4~1 src/llama-quant.cpp). On Qwen3.5 / 3.6 (b7990 on)
# each gated-delta-net layer's attn_qkv is one of them (cHunter789/Qwen3.6-27B-i1-IQ4_XS-GGUF's model card: "commit
# 1dab5f5a44 introduced a hardcoded minimum quantization of q5_K for attn_qkv layers", 375 MiB on Qwen3.6-27B IQ4_XS).
QKV_AS_V_BUILD = 8266


# ---- never quantized: llama.cpp@0c1e57098 src/llama-quant.cpp:tensor_allows_quantization ----

_NEVER = ("_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
          "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
          "indexer.q_proj.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
          "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd")
_NEVER_RWKV = tuple(f"time_mix_{s}.weight" for s in (
    "first", "w0", "w1", "w2", "v0", "v1", "v2", "a0", "a1", "a2", "g1", "g2", "decay_w1", "decay_w2",
    "lerp_fused"))
_NEVER_GLM5_NEXT = ("hc_", "indexer.attn_q_b", "indexer.attn_k", "indexer.proj", "indexer_compressor_gate",
                    "indexer_compressor_ape", "ssm_f_a.weight", "ssm_f_b.weight", "ssm_g_a.weight",
                    "ssm_g_b.weight", "ssm_beta.weight", "attn_kv_a_mqa.weight", "attn_k_b.weight",
                    "attn_v_b.weight")


def _n_dims(shape: Sequence[int]) -> int:
    """ggml_n_dims: trailing dimensions of 1 do not count; at least 1."""
    n = len(shape)
    while n > 1 and shape[n - 1] == 1:
        n -= 1
    return max(n, 1)


def allows_quantization(name: str, shape: Sequence[int], arch: str, quantize_output_tensor: bool = True) -> bool:
    if _n_dims(shape) < 2:  # only 2-D and 3-D (expert) tensors
        return False
    if not name.endswith("weight") or name in ("position_embd.weight", "token_types.weight"):
        return False
    if name == "output.weight" and not quantize_output_tensor:
        return False
    return not _never_quantized(name, arch)


@functools.lru_cache(maxsize=8192)  # the substring scan is the same for every file type of one model
def _never_quantized(name: str, arch: str) -> bool:
    never = _NEVER + _NEVER_RWKV + (_NEVER_GLM5_NEXT if arch == "glm5-next" else ())
    return any(s in name for s in never)


# ---- the type convert_hf_to_gguf.py wrote, for tensors quantize leaves alone ----
# llama.cpp@0c1e57098 conversion/base.py:prepare_tensors keeps 1-D, norms and these in F32.
_CONVERT_F32 = ("ffn_gate_inp", "position_embd", "token_types", "ssm_conv1d", "shortconv.conv", "time_mix_first",
                "time_mix_w1", "time_mix_w2", "time_mix_decay_w1", "time_mix_decay_w2", "time_mix_lerp_fused",
                "posnet.", "altup_correct_coef", "altup_predict_coef", "indexer.proj")


def converted_type(name: str, shape: Sequence[int], source_type: str = "f16") -> str:
    """Type of a tensor in a convert_hf_to_gguf output of `source_type` (f16/bf16/f32)."""
    if len(shape) <= 1 or name.endswith("_norm.weight") or not name.endswith((".weight", ".lora_a", ".lora_b")):
        return "f32"
    if any(s in name for s in _CONVERT_F32):
        return "f32"
    return type_by_name(source_type).name


# ---- type selection ----

_IQ2_FAMILY = ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M")
_BLK = re.compile(r"blk\.([+-]?\d+)")


def _blk(name: str) -> int | None:
    m = _BLK.match(name)
    return int(m.group(1)) if m else None


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    # llama_tensor_get_type_impl:use_more_bits — first and last eighth, and every third layer between (Ollama's Go
    # quantizer, server/quantization.go useMoreBits, is the same test).
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


class _State:
    """quantize_state_impl: the counters walked over the tensor list (private, mutable by design)."""

    def __init__(self, n_attention_wv: int, n_layer: int, tied: bool, qkv_as_v: bool = True) -> None:
        self.n_attention_wv, self.i_attention_wv = n_attention_wv, 0
        self.qkv_as_v = qkv_as_v  # QKV_AS_V_BUILD on
        self.n_ffn = n_layer  # n_ffn_down = n_ffn_gate = n_ffn_up = hparams.n_layer_all
        self.i_ffn_down = self.i_ffn_gate = self.i_ffn_up = 0
        self.tied = tied


@dataclass(frozen=True)
class _Model:
    arch: str
    n_expert: int
    n_gqa: int
    is_70b: bool
    has_imatrix: bool
    output_type: str | None = None  # --output-tensor-type, which a tied token_embd follows too


def _layer_info(i_counter: int, n_layer: int, name: str, m: _Model) -> tuple[int, int]:
    # Experts are not stored layer by layer in every model (Mixtral), so MoE models read the layer from the name.
    if max(1, m.n_expert) > 1:
        i = _blk(name)
        if i is None:
            raise OomkitError(f"failed to determine layer for tensor {name}")
        if not 0 <= i < n_layer:
            raise OomkitError(f"bad layer {i} for tensor {name}; must be in [0, {n_layer})")
        return i, n_layer
    return i_counter, n_layer


def _impl(qs: _State, m: _Model, new: str, name: str, shape: Sequence[int], ft: str, cat: int) -> str:
    """llama.cpp@0c1e57098 src/llama-quant.cpp:llama_tensor_get_type_impl, branch for branch."""
    arch, gqa, nexp = m.arch, m.n_gqa, m.n_expert
    is_v = _is_attn_v(cat) if qs.qkv_as_v else cat == _V
    if arch == "glm5-next" and any(s in name for s in ("attn_q_a", "attn_q_b", "nextn.eh_proj")):
        if new not in ("f32", "bf16", "f16"):
            return "q8_0"

    if cat == _OUTPUT or (qs.tied and cat == _TOKEN_EMBD):
        # a tied token_embd is also the output matrix, so it gets the output's type
        if m.output_type:
            new = m.output_type
        elif ft == "MXFP4_MOE" or arch == "falcon" or shape[0] % type_by_name(new).block_size:
            new = "q8_0"
        elif ft in ("IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"):
            new = "q5_K"
        elif new != "q8_0":
            new = "q6_K"
    elif ft == "MXFP4_MOE":
        # experts (3-D) -> MXFP4, everything else -> Q8_0
        is_expert = cat in (_UP, _GATE, _DOWN) if arch == "bailingmoe3" else True
        new = "mxfp4" if len(shape) > 2 and shape[2] > 1 and is_expert else "q8_0"
    elif cat == _TOKEN_EMBD:
        if ft in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
            new = "q2_K"
        elif ft in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
            new = "iq3_s"
        elif ft in ("TQ1_0", "TQ2_0", "Q2_0"):
            new = "q4_K"
    elif ft in _IQ2_FAMILY:
        iq3 = ft in ("IQ2_S", "IQ2_M")
        if is_v:
            new = "q4_K" if gqa >= 4 or nexp >= 4 else ("iq3_s" if iq3 else "q2_K")
            qs.i_attention_wv += 1
        elif nexp == 8 and cat == _K:
            new = "q4_K"
        elif cat == _DOWN:
            if qs.i_ffn_down < qs.n_ffn // 8:
                new = "iq3_s" if iq3 else "q2_K"
            qs.i_ffn_down += 1
        elif cat == _ATTN_OUT:
            if nexp == 8:
                new = "q5_K"
            elif ft in ("IQ1_S", "IQ1_M"):
                new = "iq2_xxs"
            elif iq3:
                new = "iq3_s"
    elif is_v:
        # (this branch also takes attn_qkv from QKV_AS_V_BUILD, so llama.cpp's ATTENTION_QKV branch is reached
        # only before it)
        i, n = qs.i_attention_wv, qs.n_attention_wv
        if ft == "Q2_K":
            new = "q4_K" if gqa >= 4 else "q3_K"
        elif ft == "Q2_K_S" and gqa >= 4:
            new = "q4_K"
        elif ft == "IQ3_XXS":
            new = "q4_K" if gqa >= 4 else ("iq3_s" if not m.has_imatrix else "iq3_xxs")
        elif ft in ("IQ3_XS", "IQ3_S") and gqa >= 4:
            new = "q4_K"
        elif ft == "IQ3_M":
            new = "q4_K"
        elif ft == "Q3_K_M":
            new = "q5_K" if i < 2 else "q4_K"
        elif ft == "Q3_K_L":
            new = "q5_K"
        elif ft in ("IQ4_NL", "IQ4_XS") and gqa >= 4:
            new = "q5_K"
        elif ft in ("Q4_K_M", "Q5_K_M") and use_more_bits(i, n):
            new = "q6_K"
        elif ft == "Q4_K_S" and i < 4:
            new = "q5_K"
        if m.is_70b and new in ("q3_K", "q4_K"):
            new = "q5_K"  # 70B: 8 heads share attn_v, so more bits here cost little
        if nexp == 8:
            new = "q8_0"
        qs.i_attention_wv += 1
    elif cat == _K:
        if nexp == 8:
            new = "q8_0"
        elif ft == "IQ3_XS":
            new = "iq3_xxs"
        elif ft == "IQ3_XXS":
            new = "iq2_s"
    elif cat == _Q:
        if ft == "IQ3_XS":
            new = "iq3_xxs"
        elif ft == "IQ3_XXS":
            new = "iq2_s"
    elif cat == _DOWN:
        i, n = _layer_info(qs.i_ffn_down, qs.n_ffn, name, m)
        if ft == "Q2_K":
            new = "q3_K"
        elif ft == "Q2_K_S":
            if i < n // 8:
                new = "q4_K"
        elif ft == "IQ3_XXS" and not m.has_imatrix:
            new = "q4_K" if i < n // 8 else "q3_K"
        elif ft == "Q3_K_M":
            new = ("q5_K" if i < n // 16 else
                   "q4_K" if arch != "falcon" or use_more_bits(i, n) else "q3_K")
        elif ft == "IQ3_M" and (i < n // 8 or (nexp == 8 and use_more_bits(i, n))):
            new = "q4_K"
        elif ft == "Q3_K_L":
            new = "q4_K" if arch == "falcon" else "q5_K"
        elif ft == "Q4_K_M":
            if arch == "falcon":
                new = "q6_K" if i < n // 16 else "q5_K" if use_more_bits(i, n) else "q4_K"
            elif use_more_bits(i, n):
                new = "q6_K"
        elif i < n // 8 and ft in ("IQ4_NL", "IQ4_XS") and not m.has_imatrix:
            new = "q5_K"
        elif ft == "Q5_K_M" and use_more_bits(i, n):
            new = "q6_K"
        elif ft == "Q4_K_S" and arch != "falcon" and i < n // 8:
            new = "q5_K"
        elif ft in ("Q4_0", "Q5_0") and m.has_imatrix and i < n // 8:
            new = "q4_1" if ft == "Q4_0" else "q5_1"
        qs.i_ffn_down += 1
    elif cat == _ATTN_OUT:
        if arch != "falcon":
            if nexp == 8:
                if ft in ("Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S",
                          "IQ3_M", "IQ4_XS"):
                    new = "q5_K"
            else:
                new = {"Q2_K": "q3_K", "IQ3_XXS": "iq3_s", "Q3_K_M": "q4_K", "Q3_K_L": "q5_K",
                       "IQ3_M": "q4_K"}.get(ft, new)
        elif ft == "Q3_K_L":
            new = "q4_K"
    elif cat == _QKV:  # before QKV_AS_V_BUILD only
        new = {"Q3_K_M": "q4_K", "Q3_K_L": "q4_K", "IQ3_M": "q4_K", "Q4_K_M": "q5_K", "Q5_K_M": "q6_K"}.get(ft, new)
    elif cat in (_GATE, _UP):
        counter = "i_ffn_gate" if cat == _GATE else "i_ffn_up"
        i, n = _layer_info(getattr(qs, counter), qs.n_ffn, name, m)
        if ft == "IQ3_XS" and n // 8 <= i < 7 * n // 8:
            new = "iq3_xxs"
        setattr(qs, counter, getattr(qs, counter) + 1)
    return new


# llama.cpp@0c1e57098 src/llama-quant.cpp:tensor_type_fallback — rows not a whole number of blocks take a
# smaller-block type.
_FALLBACK = {"iq1_s": "iq4_nl", "iq1_m": "iq4_nl", "iq2_xxs": "iq4_nl", "iq2_xs": "iq4_nl", "iq2_s": "iq4_nl",
             "iq3_xxs": "iq4_nl", "iq3_s": "iq4_nl", "iq4_xs": "iq4_nl", "q2_0": "q4_0", "q2_K": "q4_0",
             "q3_K": "q4_0", "tq1_0": "q4_0", "tq2_0": "q4_0", "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0"}


def _fallback(name: str, ncols: int, target: str) -> str:
    block = type_by_name(target).block_size
    if ncols % block == 0:
        return target
    ret = _FALLBACK.get(target)
    if ret is None:
        if block > 32:
            raise OomkitError(f"no tensor type fallback is defined for type {target} ({name})")
        ret = target
    if ncols % type_by_name(ret).block_size:
        ret = "f16"  # even the 32-block type does not fit: llama.cpp stores F16
    return ret


def _order(name: str) -> tuple[int, str]:
    # llama.cpp@0c1e57098 src/llama-model-loader.h:weight_name_comparer: block number (-1 outside), then name.
    b = _blk(name)
    return (-1 if b is None else b, name)


def recipe_types(
    ftype: str | Ftype,
    tensors: Sequence[tuple[str, tuple[int, ...]]],
    arch: str,
    n_expert: int = 0,
    n_gqa: int = 1,
    *,
    n_layer: int | None = None,
    is_70b: bool | None = None,
    source_type: str = "f16",
    source_types: Mapping[str, str] | None = None,
    has_imatrix: bool | None = None,
    pure: bool = False,
    quantize_output_tensor: bool = True,
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    tensor_type_overrides: Sequence[tuple[str, str]] = (),
    build: int | None = None,
) -> dict[str, str]:
    """The ggml type llama-quantize gives each tensor (name -> ggml type name, e.g. "q4_K").

    tensors: (GGUF name, shape with ne0 first) for every tensor of the source GGUF.
    n_expert: {arch}.expert_count; n_gqa: n_head // n_head_kv of layer 0 (hparams.n_gqa());
    n_layer: {arch}.block_count (default: highest blk index + 1); is_70b: llama.cpp's LLM_TYPE_70B
    (default: inferred as the arch loaders do). Tensors quantize leaves alone keep their source type:
    source_types[name], else what convert_hf_to_gguf writes for a `source_type` conversion.
    has_imatrix: None = only when the mix cannot be made without one (IQ1/IQ2/IQ3_XXS, Q2_K_S).
    The last four options mirror llama-quantize's --pure, --leave-output-tensor, --output-tensor-type,
    --token-embedding-type and --tensor-type PATTERN=TYPE. build: the llama-quantize build number (None: the
    newest rules); before QKV_AS_V_BUILD attn_qkv keeps its own rule.
    """
    ft = ftype_by_name(ftype)
    if ft.default_type is None:
        raise OomkitError(f"llama-quantize cannot produce file type {ft.name}")
    if has_imatrix is None:
        kw = dict(n_layer=n_layer, is_70b=is_70b, source_type=source_type, source_types=source_types, pure=pure,
                  quantize_output_tensor=quantize_output_tensor, output_tensor_type=output_tensor_type,
                  token_embedding_type=token_embedding_type, tensor_type_overrides=tensor_type_overrides, build=build)
        plain = recipe_types(ft, tensors, arch, n_expert, n_gqa, has_imatrix=False, **kw)
        if not imatrix_tensors(ft, plain, tensors, arch, quantize_output_tensor):
            return plain
        return recipe_types(ft, tensors, arch, n_expert, n_gqa, has_imatrix=True, **kw)

    if n_layer is None:
        n_layer = max((b for b in (_blk(n) for n, _ in tensors) if b is not None), default=-1) + 1
    if is_70b is None:
        # llama.cpp@0c1e57098 src/models/{llama,qwen2,deci,olmo,jais2}.cpp:load_arch_hparams set LLM_TYPE_70B
        is_70b = (arch in ("qwen2", "deci", "olmo") and n_layer == 80) or (arch == "jais2" and n_layer == 68) or (
            arch == "llama" and n_layer == 80 and n_gqa > 1 and n_expert != 8)
    overrides = [(re.compile(p), type_by_name(t).name) for p, t in tensor_type_overrides]
    out_type = type_by_name(output_tensor_type).name if output_tensor_type else None
    model = _Model(arch, n_expert, n_gqa, is_70b, has_imatrix, out_type)
    emb_type = type_by_name(token_embedding_type).name if token_embedding_type else None
    default = type_by_name(ft.default_type)

    # llama.cpp@0c1e57098 src/llama-quant.cpp:init_quantize_state_counters: count V producers; no output.weight means tied embeddings
    cats = {n: _category(n) for n, _ in tensors}
    qs = _State(sum(_is_attn_v(c) for c in cats.values()), n_layer, not any(c == _OUTPUT for c in cats.values()),
                qkv_as_v=build is None or build >= QKV_AS_V_BUILD)

    result: dict[str, str] = {}
    for name, shape in sorted(tensors, key=lambda t: _order(t[0])):
        cat = cats[name]
        src = type_by_name((source_types or {}).get(name) or converted_type(name, shape, source_type)).name
        if not allows_quantization(name, shape, arch, quantize_output_tensor):
            result[name] = src
            continue
        # llama.cpp@0c1e57098 src/llama-quant.cpp:llama_tensor_get_type: explicit output / embedding types win
        if emb_type and cat == _TOKEN_EMBD and not (
            name == "per_layer_token_embd.weight" and any(p.search(name) for p, _ in overrides)):
            result[name] = emb_type
            continue
        if out_type and cat == _OUTPUT:
            result[name] = out_type
            continue
        new = default.name
        if default.quantized:
            manual = next((t for p, t in overrides if p.search(name)), None)
            if manual is not None:
                new = manual
            elif not pure:
                new = _impl(qs, model, new, name, shape, ft.name, cat)
            new = _fallback(name, shape[0], new)
        result[name] = new
    return result


# llama.cpp@0c1e57098 src/llama-quant.cpp:tensor_requires_imatrix
_NEEDS_IMATRIX = frozenset({"iq3_xxs", "iq2_xxs", "iq2_xs", "iq2_s", "iq1_m", "iq1_s"})


def imatrix_tensors(ftype: str | Ftype, types: Mapping[str, str], tensors: Sequence[tuple[str, tuple[int, ...]]],
                    arch: str, quantize_output_tensor: bool = True) -> tuple[str, ...]:
    """Tensors llama-quantize refuses to quantize to `types` without an importance matrix."""
    ft = ftype_by_name(ftype)
    out = []
    for name, shape in tensors:
        if name in ("token_embd.weight", "per_layer_token_embd.weight", "output.weight"):
            continue
        if not allows_quantization(name, shape, arch, quantize_output_tensor):
            continue
        t = types[name]
        if t in _NEEDS_IMATRIX or (t == "q2_K" and ft.name == "Q2_K_S"):
            out.append(name)
    return tuple(out)


# ---- named mixes beyond llama-quantize's file types: a file type plus llama-quantize options ----


@dataclass(frozen=True)
class NamedMix:
    """A GGUF quant name publishers use that is not a llama.cpp file type: llama-quantize's mix of `ftype` with
    its --output-tensor-type / --token-embedding-type options. `approximate`: the publisher's real per-tensor
    choice is not published, so the mix stands in for it (the result is labelled)."""

    name: str
    ftype: str
    output_type: str | None
    token_embedding_type: str | None
    source: str
    approximate: bool

    @property
    def note(self) -> str:
        how = f"llama-quantize {self.ftype}"
        opts = [f"{w} {t}" for w, t in (("output", self.output_type), ("token_embd", self.token_embedding_type)) if t]
        if opts:
            how += " with " + ", ".join(opts)
        if self.approximate:
            misses = ", ".join(f"{m} {e:+d}%" for m, e in STANDIN_MISSES.get(self.name, ()))
            seen = f"; against real files it was off by {misses}" if misses else ""
            return (f"{self.name} is not modelled for this model: the publisher chooses each tensor's type per model "
                    f"and does not publish it ({self.source}); the weights are approximated by a stand-in, {how}{seen}; "
                    "the file itself (a local .gguf, or its repo with the hub reachable) gives the real types")
        return f"{self.name} = {how} ({self.source})"


# bartowski's "_L" / "_XL" quants: the model cards say "Uses Q8_0 for embed and output weights" for Q6_K_L, Q5_K_L,
# Q4_K_L, Q3_K_XL and Q2_K_L (e.g. huggingface.co/bartowski/Qwen_Qwen3-8B-GGUF, "Download a file" table).
_BARTOWSKI = "bartowski's model cards: 'Uses Q8_0 for embed and output weights'"
# unsloth Dynamic 2.0 quants ("UD-..."): unsloth chooses every layer's type per model and does not publish the
# per-tensor recipe (docs.unsloth.ai/basics/unsloth-dynamic-v2.0-ggufs: "the combinations will differ for each
# layer and model"). Their files are a few percent larger than the llama.cpp type they are named after (the same
# page: Gemma 3 Q3_K_XL "increasing in only 2% of disk space"); the stand-in is that type with the output matrix in
# Q8_0 (K_XL), and the plain llama.cpp mix for the other names. Q8_K_XL keeps embeddings and output in BF16. A recipe
# read from unsloth's real files of the model's shape (PUBLISHED_RECIPES) takes precedence over the stand-in.
_UNSLOTH = "docs.unsloth.ai/basics/unsloth-dynamic-v2.0-ggufs"


def _named_mixes() -> dict[str, NamedMix]:
    out: dict[str, NamedMix] = {}
    for name, ft in (("Q2_K_L", "Q2_K"), ("Q3_K_XL", "Q3_K_L"), ("Q4_K_L", "Q4_K_M"), ("Q5_K_L", "Q5_K_M"),
                     ("Q6_K_L", "Q6_K")):
        out[name] = NamedMix(name, ft, "q8_0", "q8_0", _BARTOWSKI, approximate=False)
    for name, ft, out_t, emb in (("UD-Q2_K_XL", "Q2_K", "q8_0", None), ("UD-Q3_K_XL", "Q3_K_M", "q8_0", None),
                                 ("UD-Q4_K_XL", "Q4_K_M", "q8_0", None), ("UD-Q5_K_XL", "Q5_K_M", "q8_0", None),
                                 ("UD-Q6_K_XL", "Q6_K", "q8_0", None), ("UD-Q8_K_XL", "Q8_0", "bf16", "bf16")):
        out[name] = NamedMix(name, ft, out_t, emb, _UNSLOTH, approximate=True)
    for ft in ("IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M",
               "IQ4_XS", "IQ4_NL", "TQ1_0", "TQ2_0", "Q2_K", "Q2_K_S", "Q3_K_S", "Q3_K_M", "Q4_K_S", "Q4_K_M",
               "Q4_0", "Q4_1", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0"):
        out[f"UD-{ft}"] = NamedMix(f"UD-{ft}", ft, None, None, _UNSLOTH, approximate=True)
    return out


NAMED_MIXES = _named_mixes()


# ---- publishers' per-tensor choices read from their real files ----


@dataclass(frozen=True)
class PublishedRecipe:
    """The per-tensor types a publisher's file of `mix` holds for one model shape (architecture, embedding width,
    expert count), read from real files: llama-quantize's `ftype` with `tensor_types` (PATTERN, TYPE) in its
    --tensor-type sense (the first pattern that matches a quantizable tensor's name wins) and its --output-tensor-type
    / --token-embedding-type. `unresolved`: what the published evidence leaves open, with its size bound."""

    mix: str
    arch: str
    n_embd: int
    n_expert: int
    ftype: str
    tensor_types: tuple[tuple[str, str], ...]
    output_type: str | None
    token_embedding_type: str | None
    sources: tuple[str, ...]
    unresolved: str = ""
    publisher: str = "unsloth"  # a plain file type name ("Q4_K_M") takes the recipe only when its publisher is known


# unsloth's Dynamic 2.0 mixes differ per model ("the combinations will differ for each layer and model",
# docs.unsloth.ai/basics/unsloth-dynamic-v2.0-ggufs), so each recipe holds only for the model shape its evidence
# comes from (the same shape under a newer name, Qwen3.6-35B-A3B after Qwen3.5-35B-A3B, takes the same recipe and
# is held against its own file). The evidence, verbatim with its URL, is tests/fixtures/gguf_mixes/published_files.json.
PUBLISHED_RECIPES: tuple[PublishedRecipe, ...] = (
    # unsloth/Qwen3.5-35B-A3B-GGUF UD-Q4_K_XL: "type f32: 301, q8_0: 312, q4_K: 78, q5_K: 41, q6_K: 1" (733 tensors,
    # no MTP block), model buffers 20685.78 + 515.31 MiB (HilbertraumAI/HilbertRaum@175efe3f issue399 log, b9849;
    # the same counts in lemonade-sdk/lemonade#1511). 432 tensors are quantized: 120 routed-expert tensors
    # (40 layers x gate/up/down) and 312 others, so every non-expert tensor is q8_0, token_embd included (the CPU_Mapped
    # buffer is 248320 x 2048 x 8.5 / 8 = 515.31 MiB exactly) and the output too (q6_K there would leave the device
    # buffer 55 MiB short); the experts are gate/up q4_K, down q5_K, and with two of them one step up (a q5_K and a
    # q6_K, the counts' 41 and 1) the tensor bytes meet the log's buffers to 0.01 MiB.
    PublishedRecipe(
        "UD-Q4_K_XL", "qwen35moe", 2048, 256, "Q4_K_M",
        ((r"ffn_down_exps", "q5_K"), (r"ffn_(gate|up)_exps", "q4_K"), (r".", "q8_0")), "q8_0", "q8_0",
        ("https://github.com/HilbertraumAI/HilbertRaum/blob/175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4/eval/results/"
         "hardware/i9-9900x-rtx-3090-24gb-128gb/issue399-arch-sweep-qwen3.5-35b-a3b-ud-q4kxl.stderr.log",
         "https://github.com/lemonade-sdk/lemonade/issues/1511"),
        unresolved="two of the 120 expert tensors are one step up in the file (78 q4_K + 41 q5_K + 1 q6_K where "
                   "the recipe has 80 q4_K + 40 q5_K) on layers the log does not name: the recipe is 98 MiB (0.46%) "
                   "short"),
    # unsloth/Qwen3.5-35B-A3B-GGUF UD-Q6_K_XL: "type f32: 301, f16: 90, q8_0: 264, q6_K: 78" (ik_llama.cpp#1420, no
    # size printed). The UD-Q4_K_XL pattern one step up fits every count: the experts' gate/up at the file type (q6_K,
    # two of the 80 one step up again to q8_0: 78 + 2), their down at q8_0 (40), every other tensor q8_0 but 90 in F16
    # (264 = 40 + 2 + 312 - 90). 60 of the 90 are taken as the delta net's tiny ssm_alpha / ssm_beta; the log does
    # not name them, nor the other 30, taken as the delta-net layers' attn_gate.
    PublishedRecipe(
        "UD-Q6_K_XL", "qwen35moe", 2048, 256, "Q6_K",
        ((r"ffn_down_exps", "q8_0"), (r"ffn_(gate|up)_exps", "q6_K"), (r"ssm_(alpha|beta)|attn_gate", "f16"),
         (r".", "q8_0")), "q8_0", "q8_0",
        ("https://github.com/ikawrakow/ik_llama.cpp/issues/1420",),
        unresolved="which 90 tensors are F16 is not printed (the recipe's ssm_alpha / ssm_beta / attn_gate: the "
                   "real 30 beyond ssm_alpha / ssm_beta could weigh 0.19 GiB less or 0.22 GiB more, under 0.8%), "
                   "and two expert tensors are q8_0 where the recipe has q6_K (0.12 GiB); no size of the file is "
                   "published to hold it against"),
    # unsloth/Qwen3.5-122B-A10B-GGUF Q4_K_M (a plain name, made the Dynamic 2.0 way): "type f32: 361, q8_0: 373,
    # q4_K: 96, q5_K: 48, q6_K: 1", model buffers Vulkan0 72207.88 + CPU_Mapped 772.97 MiB (krzyszsz/strix-halo-inference
    # @ef7a7176 logs, b8067). 48 layers: every routed expert's gate/up q4_K (96), down q5_K (48), the output q6_K (1)
    # and every other matrix q8_0, token_embd included (373); the tensor bytes meet both buffers to 0.01 MiB.
    PublishedRecipe(
        "Q4_K_M", "qwen35moe", 3072, 256, "Q4_K_M",
        ((r"ffn_down_exps", "q5_K"), (r"ffn_(gate|up)_exps", "q4_K"), (r".", "q8_0")), "q6_K", "q8_0",
        ("https://github.com/krzyszsz/strix-halo-inference/blob/ef7a7176733cb4a947326a0c8da5ccfeac043502/reports/"
         "publish/qwen35_122b_a10b_q4km_ctx65536_gpu999_min12_short_watchdog.log",
         "https://github.com/krzyszsz/strix-halo-inference/blob/ef7a7176733cb4a947326a0c8da5ccfeac043502/reports/"
         "publish/qwen35_122b_a10b_q4km_ctx131072_gpu999_min12_short_watchdog.log")),
    # unsloth/Qwen3.6-35B-A3B-GGUF UD-Q4_K_M: "type f32: 361, q8_0: 251, q4_K: 80, q5_K: 37, q6_K: 4" (733 tensors),
    # model buffers Vulkan0 20583.34 + Vulkan_Host 515.31 MiB (hogeheer499-commits/strix-halo-guide@3aa373c6 logs,
    # b9010; ROCm0 + ROCm_Host the same at b9024). The delta net's ssm_alpha / ssm_beta stay F32 (361 = 301 + 60), the
    # experts' gate/up q4_K (80) and down q5_K with three at q6_K (37 + 3), the output q6_K, every other matrix q8_0
    # (token_embd: 248320 x 2048 at 8.5 bits = 515.31 MiB); buffers met to 0.01 MiB.
    PublishedRecipe(
        "UD-Q4_K_M", "qwen35moe", 2048, 256, "Q4_K_M",
        ((r"ssm_(alpha|beta)", "f32"), (r"blk\.(37|38|39)\.ffn_down_exps", "q6_K"), (r"ffn_down_exps", "q5_K"),
         (r"ffn_(gate|up)_exps", "q4_K"), (r".", "q8_0")), "q6_K", "q8_0",
        ("https://github.com/hogeheer499-commits/strix-halo-guide/blob/3aa373c60dda9543039dcb1aed1f9d4e6eb4961e/data/"
         "raw/2026-05-03/multi-user/llama-server-np16.log",
         "https://github.com/hogeheer499-commits/strix-halo-guide/blob/3aa373c60dda9543039dcb1aed1f9d4e6eb4961e/data/"
         "raw/2026-05-05/server-shootout/full-sweep-qwen36-repeat-1/lemonade-b1259-rocm/np16/llama-server.log"),
        unresolved="which three down projections are q6_K is not printed (blk.37-39 here); on one device the bytes "
                   "are the same, split across devices they move at most 3 x 36 MiB"),
    # unsloth/Qwen3.6-27B-GGUF Q4_K_M (a plain name, made the Dynamic 2.0 way all the same): "type f32: 449, q4_K: 289,
    # q5_K: 48, q6_K: 65", model buffers 15345.66 + 682.03 MiB (HilbertraumAI/HilbertRaum@175efe3f issue446 log,
    # b9849). llama-quantize's Q4_K_M gives this tensor list 353 f32 / 433 q4_K / 65 q6_K: the file keeps the 96
    # delta-net ssm_alpha / ssm_beta in F32 (+96 f32, -96 q4_K) and puts one 5120 x 6144 tensor of each of the 48
    # delta-net layers at q5_K (-48 q4_K, +48 q5_K), which makes every count and the buffers to 0.01 MiB.
    PublishedRecipe(
        "Q4_K_M", "qwen35", 5120, 0, "Q4_K_M", ((r"ssm_(alpha|beta)", "f32"), (r"attn_gate", "q5_K")), None, None,
        ("https://github.com/HilbertraumAI/HilbertRaum/blob/175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4/eval/results/"
         "hardware/i9-9900x-rtx-3090-24gb-128gb/issue446-arch-sweep-qwen3.6-27b-q4.stderr.log",),
        unresolved="whether the q5_K tensor of each delta-net layer is attn_gate or ssm_out (the same bytes) is not "
                   "printed"),
)


# ---- unsloth's UD-Q4_K_XL of the dense Qwen3.5 models, from their load logs' type counts ----
# The logs print per-type counts, the model buffers and the file size, not which tensor has which type; unsloth picks
# them per tensor and per model (docs.unsloth.ai/basics/unsloth-dynamic-v2.0-ggufs). What the counts pin down on
# every one of these files: the delta net's ssm_alpha / ssm_beta are F16 (2 x the delta-net layers: 48 / 48 / 36 f16),
# one tensor class of each delta-net layer is q8_0 (24 / 24 / 18 q8_0 = the delta-net layers), the output matrix is
# q6_K (a tied token_embd too: the 4B / 2B CPU_Mapped buffers are 248320 rows at 6.5625 bits, 497.31 / 397.85 MiB)
# and an untied token_embd stays q4_K (9B: 545.62 MiB). How the rest splits between q4_K / q5_K / q6_K / iq4_xs is
# not printed: per model, the split below is one that meets every count of its log and its device buffer (within
# 0.15 MiB) with the fewest (tensor class, type) pairs -- fitted on that one file each, so it is a
# reconstruction of the file's bytes, not of unsloth's choice per tensor. Where a class holds two types the higher
# is put on its last layers: of the simple placements, the one nearest the 9B file's two partial-offload splits
# (logs of the same file, tests/fixtures/engine_logs/llamacpp_fit_heldout2 and llamacpp_heldout6:
# layers 0-1 278.69 MiB, layers 0-14 2009.83 MiB), again a choice read off that one file.
# tests/test_ud_mixes_heldout.py holds each against its log (tests/fixtures/ud_mixes/).
_HR = ("https://github.com/HilbertraumAI/HilbertRaum/blob/175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4/eval/results/"
       "hardware/i9-9900x-rtx-3090-24gb-128gb/")


def _layer_split(cls: str, layers: Sequence[int], hi: str, n_hi: int) -> tuple[str, str]:
    """(PATTERN, hi) putting `hi` on the last n_hi of `layers`."""
    pick = sorted(layers)[len(layers) - n_hi:]
    return rf"blk\.({'|'.join(map(str, pick))})\.{cls}\.", hi


def _qwen35_dense(n_layer: int, split: Mapping[str, tuple[str, str, int]], uniform: Mapping[str, str],
                  ) -> tuple[tuple[str, str], ...]:
    dn = [i for i in range(n_layer) if (i + 1) % 4]  # full_attention_interval 4: every 4th layer is attention
    fa = [i for i in range(n_layer) if not (i + 1) % 4]
    rules: list[tuple[str, str]] = [(r"ssm_(alpha|beta)", "f16")]
    for cls, (hi, lo, n_hi) in split.items():
        layers = fa if cls.startswith("attn_") and cls not in ("attn_qkv", "attn_gate") else (
            dn if cls in ("attn_qkv", "attn_gate", "ssm_out") else list(range(n_layer)))
        rules += [_layer_split(cls, layers, hi, n_hi), (cls, lo)]
    rules += [(cls, t) for cls, t in uniform.items()]
    return tuple(rules)


PUBLISHED_RECIPES += (
    # Qwen3.5-9B UD-Q4_K_XL: "type f32: 177, f16: 48, q8_0: 24, q4_K: 77, q5_K: 67, q6_K: 24, iq4_xs: 10", file size
    # 5.55 GiB (5.32 BPW), model buffers Vulkan0 5133.63 + CPU_Mapped 545.62 MiB (b9849).
    PublishedRecipe(
        "UD-Q4_K_XL", "qwen35", 4096, 0, "Q4_K_M",
        _qwen35_dense(32, {"attn_qkv": ("q6_K", "q5_K", 7), "ffn_up": ("q5_K", "q4_K", 2),
                           "ffn_down": ("q4_K", "iq4_xs", 22)},
                      {"attn_gate": "q8_0", "ssm_out": "q4_K", "ffn_gate": "q5_K", "attn_q": "q6_K",
                       "attn_k": "q5_K", "attn_v": "q5_K", "attn_output": "q6_K"}),
        "q6_K", None, (_HR + "issue399-arch-sweep-qwen3.5-9b-ud-q4kxl.stderr.log",),
        unresolved="which tensor of each class has which type is not printed (the counts and the device buffer "
                   "are met; the per-layer split is a choice)"),
    # Qwen3.5-4B UD-Q4_K_XL (tied): "type f32: 177, f16: 48, q8_0: 24, q4_K: 74, q5_K: 69, q6_K: 24, iq4_xs: 10",
    # model buffers Vulkan0 2766.74 + CPU_Mapped 497.31 MiB (b9849).
    PublishedRecipe(
        "UD-Q4_K_XL", "qwen35", 2560, 0, "Q4_K_M",
        _qwen35_dense(32, {"ffn_gate": ("q6_K", "q5_K", 9), "ffn_up": ("q5_K", "q4_K", 14),
                           "attn_output": ("q6_K", "iq4_xs", 6)},
                      {"attn_qkv": "q4_K", "attn_gate": "q5_K", "ssm_out": "q8_0", "ffn_down": "q4_K",
                       "attn_q": "q5_K", "attn_k": "q6_K", "attn_v": "iq4_xs"}),
        "q6_K", None, (_HR + "issue399-arch-sweep-qwen3.5-4b-ud-q4kxl.stderr.log",),
        unresolved="which tensor of each class has which type is not printed (the counts and the device buffer "
                   "are met; the per-layer split is a choice)"),
    # Qwen3.5-2B UD-Q4_K_XL (tied): "type f32: 133, f16: 36, q8_0: 18, q4_K: 46, q5_K: 58, q6_K: 17, iq4_xs: 12",
    # model buffers Vulkan0 1267.23 + CPU_Mapped 397.85 MiB (b9849).
    PublishedRecipe(
        "UD-Q4_K_XL", "qwen35", 2048, 0, "Q4_K_M",
        _qwen35_dense(24, {"attn_qkv": ("q6_K", "q5_K", 8), "ffn_up": ("q4_K", "iq4_xs", 18),
                           "attn_q": ("q6_K", "q4_K", 2)},
                      {"attn_gate": "q8_0", "ssm_out": "q5_K", "ffn_gate": "q4_K", "ffn_down": "q5_K",
                       "attn_k": "iq4_xs", "attn_v": "q5_K", "attn_output": "q6_K"}),
        "q6_K", None, (_HR.replace("175efe3f7cfad8c55e8e7a2b371e58b61fb0b9f4", "9c72f774e5a633b1db2000d25c98fee1dd705517")
                       + "issue399-arch-sweep-qwen3.5-2b-ud-q4kxl.stderr.log",),
        unresolved="which tensor of each class has which type is not printed (the counts and the device buffer "
                   "are met; the per-layer split is a choice)"),
)

# ---- unsloth's K_XL quants of MoE models, from their load logs' type counts ----
# llama_model_loader's "type q4_K: N tensors" counts of unsloth's files (verbatim, with their URLs, in
# tests/fixtures/gguf_mixes/ud_logs.json) show one pattern on Qwen3 MoE and DeepSeek-V3 / R1 alike:
#  - the routed experts stay at the file type's own type: Qwen3-30B-A3B / Qwen3-235B-A22B-2507 UD-Q4_K_XL hold 290 /
#    609 q4_K of their 338 / 660 quantized tensors (ik_llama.cpp#398, PR #866), where llama-quantize's Q4_K_M would
#    put 24 / 46 ffn_down_exps at q6_K (use_more_bits); DeepSeek-R1-0528 UD-Q3_K_XL holds 166 q3_K, its 116 gate/up
#    experts and 50 of 58 down (PR #645), where Q3_K_M puts every ffn_down at q4_K / q5_K. Only Q2_K moves ffn_down
#    one step up, as llama-quantize's own rule does (llama.cpp@0c1e57098 src/llama-quant.cpp:
#    llama_tensor_get_type_impl, ffn_down: Q2_K -> Q3_K): DeepSeek-V3-0324 UD-Q2_K_XL holds 122 q2_K, 54 q3_K (PR #409);
#  - every other tensor (attention, shared experts, the dense layers' FFN, token_embd) at q4_K or above and the output
#    q6_K: outside the experts none of these files has a tensor below q4_K, and the Qwen3 MoE ones have no q8_0;
#  - DeepSeek's MLA attn_k_b / attn_v_b (rows of 128 / 512, no 256-blocks) at q8_0: 122 q8_0 = 61 layers x 2 in both
#    DeepSeek logs.
# Each file also holds a few tensors one or two steps up (Qwen3-30B-A3B 37 q5_K + 10 q6_K beyond the output, DeepSeek
# 23-29 q5_K and 15-16 q6_K) on tensors the logs do not name: the recipes leave them out and fall 1.2% to 2.3% short
# of each file (tests/test_gguf_ud_logs.py). Like every recipe here each holds for the model shape of its log only
# (DeepSeek-R1 / V3.1 share DeepSeek-V3-0324's, Qwen3-235B-A22B its 2507 update's); other MoE shapes keep the stand-in.
UD_MOE_EXPERT_TYPES: dict[str, tuple[str, str]] = {
    "UD-Q2_K_XL": ("q2_K", "q3_K"), "UD-Q3_K_XL": ("q3_K", "q3_K"), "UD-Q4_K_XL": ("q4_K", "q4_K")}
_IK = "https://github.com/ikawrakow/ik_llama.cpp/"
_KYUZ0 = "https://github.com/kyuz0/amd-strix-halo-toolboxes/blob/"
_KYUZ0_SCOUT = ("62e5080102f65faef53d9875103cbbc017a3e16e/benchmark/loadtime_results/"
                "Llama-4-Scout-17B-16E-Instruct-UD-Q4_K_XL-00001-of-00002__rocm6_4_2.log")
_KYUZ0_Q235 = ("62e5080102f65faef53d9875103cbbc017a3e16e/benchmark/loadtime_results/"
               "Qwen3-235B-A22B-Instruct-2507-UD-Q3_K_XL-00001-of-00003__rocm6_4_2.log")
_KYUZ0_MINIMAX = ("73be068e85832bcf12db2a07712ffa6e21fbf254/benchmark/results/"
                  "MiniMax-M2.7-UD-Q3_K_XL-00001-of-00004__rocm-7_2_1-pr21344__fa1.log")
_KYUZ0_GLM46 = ("8ff812fbb5fed2e79bf903feb4c5e4af9b4a7a7a/benchmark/results-rpc/09-01-2026/"
                "GLM-4.6-UD-Q4_K_XL-00001-of-00005__rocm6_4_4__rpc.log")


def _ud_moe_recipe(mix: str, ftype: str, arch: str, n_embd: int, n_expert: int, source: str,
                   counts: str | None) -> PublishedRecipe:
    gate_up, down = UD_MOE_EXPERT_TYPES[mix]
    mla = ((r"attn_[kv]_b\.weight", "q8_0"),) if arch == "deepseek2" else ()
    seen = (f"the log's counts ({counts}) put a few tensors a step or two above the recipe on tensors it does not "
            "name" if counts else "the source prints the file's total only, no per-type counts; the pattern of the "
                                  "Qwen3 MoE and DeepSeek logs meets it")
    return PublishedRecipe(
        mix, arch, n_embd, n_expert, ftype,
        (*mla, (r"ffn_(gate|up)_exps", gate_up), (r"ffn_down_exps", down), (r".", "q4_K")), "q6_K", None, (source,),
        unresolved=f"{seen}: the recipe is 1-3% short of the file")


PUBLISHED_RECIPES += (
    # Qwen3-30B-A3B (2048 wide) and its Coder / 2507 releases of the same shape
    _ud_moe_recipe("UD-Q4_K_XL", "Q4_K_M", "qwen3moe", 2048, 128, _IK + "issues/398",
                   "f32 241, q4_K 290, q5_K 37, q6_K 11"),
    _ud_moe_recipe("UD-Q4_K_XL", "Q4_K_M", "qwen3moe", 4096, 128, _IK + "pull/866",
                   "f32 471, q4_K 609, q5_K 40, q6_K 11"),
    _ud_moe_recipe("UD-Q2_K_XL", "Q2_K", "deepseek2", 7168, 256, _IK + "pull/409",
                   "f32 361, q8_0 122, q2_K 122, q3_K 54, q4_K 389, q5_K 23, q6_K 15"),
    _ud_moe_recipe("UD-Q3_K_XL", "Q3_K_M", "deepseek2", 7168, 256, _IK + "pull/645",
                   "f32 361, q8_0 122, q3_K 166, q4_K 392, q5_K 29, q6_K 16"),
    # Llama 4 Scout (llama4, 5120 wide, 16 experts), a held-out check of the pattern above: no per-type counts are
    # published, only the file's total, "Model size: 39.090 GiB vs Unsloth's 39.654 GiB" (ikawrakow comparing his
    # own quant with unsloth's UD-Q2_K_XL, ik_llama.cpp PR #321). The Qwen3 MoE / DeepSeek pattern, not fitted on
    # this file, is 2.47% short of it; the llama-quantize stand-in (Q2_K, q8_0 output) was 6.52% short.
    _ud_moe_recipe("UD-Q2_K_XL", "Q2_K", "llama4", 5120, 16, _IK + "pull/321", None),
    # More shapes the pattern was held against, not fitted on (kyuz0/amd-strix-halo-toolboxes' llama.cpp logs, the
    # llama-quantize stand-in -> the pattern): Llama 4 Scout UD-Q4_K_XL +5.82% -> -1.75% ("type q4_K: 421, q5_K: 43,
    # q6_K: 18", file size 57.73 GiB), Qwen3-235B-A22B-2507 UD-Q3_K_XL +8.11% -> -1.66% ("q3_K: 267, q4_K: 362,
    # q5_K: 20, q6_K: 11", 96.99 GiB), GLM-4.6 (the GLM-4.5 / 4.7 shape) UD-Q4_K_XL +6.23% -> -0.81% (llama-bench's
    # 189.69 GiB, the next-n block included). Taken per shape only where the held-out file meets it: GLM-4.5-Air
    # UD-Q4_K_XL (-8.70% with it, -0.04% as the stand-in) and Gemma-4-26B-A4B UD-Q4_K_XL (-10.93% / -0.66%) keep the
    # stand-in.
    _ud_moe_recipe("UD-Q4_K_XL", "Q4_K_M", "llama4", 5120, 16, _KYUZ0 + _KYUZ0_SCOUT,
                   "f32 146, q4_K 421, q5_K 43, q6_K 18"),
    _ud_moe_recipe("UD-Q3_K_XL", "Q3_K_M", "qwen3moe", 4096, 128, _KYUZ0 + _KYUZ0_Q235,
                   "f32 471, q3_K 267, q4_K 362, q5_K 20, q6_K 11"),
    _ud_moe_recipe("UD-Q4_K_XL", "Q4_K_M", "glm4moe", 5120, 160, _KYUZ0 + _KYUZ0_GLM46, None),
    # MiniMax-M2 / M2.1 / M2.5 / M2.7 (minimax_m2, 3072 wide, 256 experts) UD-Q3_K_XL: +7.34% -> -2.75% against
    # llama-bench's 94.93 GiB for M2.7 (the same source): the furthest of the held-out files, 0.25 points past the
    # -2.5% the four logged files span.
    _ud_moe_recipe("UD-Q3_K_XL", "Q3_K_M", "minimax_m2", 3072, 256, _KYUZ0 + _KYUZ0_MINIMAX, None),
)

# Publishers whose every file is an imatrix quant, so that a plain file type from them takes llama-quantize's
# has_imatrix rules (llama_tensor_get_type_impl: Q4_0 / Q5_0 give the first n_layer/8 ffn_down Q4_1 / Q5_1, IQ4_XS /
# IQ4_NL keep those in their own type instead of Q5_K, IQ3_XXS's attn_v, ...). bartowski's model cards: "All quants
# made using imatrix option"; his granite-3.1-3b-a800m Q4_0 shows it in tests/fixtures/engine_logs/llamacpp_opencl
# (llama.cpp#16152: the four Q4_1 ffn_down_exps OpenCL refuses make the log's 10 graph splits).
# unsloth's plain file types are imatrix quants too: its Q4_0 files of Gemma-3-27B-it and Qwen3-32B carry
# quantize.imatrix.file = "<repo>/imatrix_unsloth.dat" and hold n_layer/8 ffn_down in Q4_1 (7 of gemma3's 62 layers,
# 8 of qwen3's 64: "type q4_1: 7 tensors", "type q4_1: 8 tensors", ik_llama.cpp#539), llama_tensor_get_type_impl's
# has_imatrix rule for Q4_0 (llama.cpp@0c1e57098 src/llama-quant.cpp); with it both files' model sizes (14.539 /
# 17.413 GiB) are met to the print's last digit, without it both were 0.3% short (tests/test_gguf_ud_logs.py).
IMATRIX_PUBLISHERS = frozenset({"bartowski", "unsloth"})

# The publishers PUBLISHED_RECIPES holds files of, and those above: the owners of GGUF repos
# ("unsloth/Qwen3.6-27B-GGUF") whose plain file type names take their recipes or imatrix rules (model/resolve.
# gguf_publisher passes the owner down to mix_types).
PUBLISHERS = frozenset(r.publisher for r in PUBLISHED_RECIPES) | IMATRIX_PUBLISHERS


def known_publisher(owner: str | None) -> str | None:
    """`owner` lower-cased when PUBLISHED_RECIPES holds files of it or it is an imatrix publisher, else None (its
    files keep llama-quantize's plain rules)."""
    key = (owner or "").strip().lower()
    return key if key in PUBLISHERS else None


# How far the llama-quantize stand-in of a mix falls from real files of models no recipe covers (the stand-in's
# tensor bytes against the file; tests/fixtures/gguf_mixes/published_files.json and ud_logs.json, recomputed by
# tests/test_quant_gguf_recipes.py): mix -> ((model, error in %), ...). Llama-4-Scout UD-IQ2_XXS (ik_llama.cpp#321),
# Kimi-K2 UD-IQ3_XXS (ik_llama.cpp#616), GLM-4.6 UD-Q5_K_XL (ik_llama.cpp discussion #816, next-n block included
# as the file holds it) and the llama-bench totals of kyuz0/amd-strix-halo-toolboxes print the file's total only.
STANDIN_MISSES: dict[str, tuple[tuple[str, int], ...]] = {
    "UD-IQ1_S": (("Qwen3-30B-A3B", -29),),
    "UD-IQ2_XXS": (("Llama-4-Scout", -26),),
    "UD-IQ3_XXS": (("Kimi-K2", -5),),
    "UD-Q3_K_S": (("MiniMax-M2.7", 5),),
    "UD-Q4_K_XL": (("Qwen3.5-0.8B", 4), ("Qwen3.5-27B", -4), ("Qwen3.5-122B-A10B", 9), ("Qwen3.5-397B-A17B", 10),
                   ("GLM-4.5-Air", 0), ("Gemma-4-26B-A4B", -1), ("Gemma-4-31B", 1)),
    "UD-Q5_K_XL": (("GLM-4.6", 1),),
    "UD-Q6_K_XL": (("GLM-4.5-Air", -2), ("MiniMax-M2", -3), ("Qwen3-30B-A3B-2507", -4)),
    "UD-Q8_K_XL": (("Gemma-4-26B-A4B", -1), ("Gemma-4-31B", -3), ("Gemma-3-12B", -7), ("Qwen3-Next-80B-A3B", -8)),
}


def published_recipe(mix: str, arch: str, tensors: Sequence[tuple[str, tuple[int, ...]]],
                     publisher: str | None = None) -> PublishedRecipe | None:
    """The recipe read from a publisher's real files for this mix on this model shape, or None. A named mix
    ("UD-Q4_K_XL") says its publisher; a plain file type ("Q4_K_M") takes a recipe only for the `publisher` given."""
    m = named_mix(mix)
    if m is not None:
        name, who = m.name, None
    elif publisher:
        name, who = ftype_by_name(mix).name, publisher.strip().lower()
    else:
        return None
    emb = next((s for n, s in tensors if n == "token_embd.weight"), None)
    n_embd = emb[0] if emb else 0
    n_expert = max((s[2] for n, s in tensors if n.endswith("_exps.weight") and len(s) == 3), default=0)
    return next((r for r in PUBLISHED_RECIPES if (r.mix, r.arch, r.n_embd, r.n_expert) == (name, arch, n_embd, n_expert)
                 and who in (None, r.publisher)), None)


def mix_types(ftype: str, tensors: Sequence[tuple[str, tuple[int, ...]]], arch: str, n_expert: int = 0,
              n_gqa: int = 1, *, build: int | None = None, publisher: str | None = None) -> dict[str, str]:
    """recipe_types for a llama-quantize file type or a named mix: a publisher's recipe where one is known for this
    model shape (PUBLISHED_RECIPES; for a plain file type only when its `publisher` is known), else the file type's
    own rules or the mix's llama-quantize stand-in (labelled by mix_label)."""
    mix = named_mix(ftype)
    pub = published_recipe(ftype, arch, tensors, publisher)
    if pub is not None:
        return recipe_types(pub.ftype, tensors, arch, n_expert=n_expert, n_gqa=n_gqa, build=build,
                            output_tensor_type=pub.output_type, token_embedding_type=pub.token_embedding_type,
                            tensor_type_overrides=pub.tensor_types)
    if mix is None:
        imatrix = True if (publisher or "").strip().lower() in IMATRIX_PUBLISHERS else None
        return recipe_types(ftype, tensors, arch, n_expert=n_expert, n_gqa=n_gqa, build=build, has_imatrix=imatrix)
    # every named mix is an imatrix quant (bartowski's model cards: "All quants made using imatrix option"; each
    # unsloth UD log quoted in tests/fixtures/gguf_mixes/published_files.json carries quantize.imatrix.*), which
    # changes IQ4_XS / IQ4_NL / IQ3_XXS / Q4_0 / Q5_0's ffn_down and attn_v (llama_tensor_get_type_impl's has_imatrix)
    return recipe_types(mix.ftype, tensors, arch, n_expert=n_expert, n_gqa=n_gqa, build=build, has_imatrix=True,
                        output_tensor_type=mix.output_type, token_embedding_type=mix.token_embedding_type)


def mix_label(name: str, arch: str, tensors: Sequence[tuple[str, tuple[int, ...]]],
              publisher: str | None = None) -> str | None:
    """The line an estimate carries for a named mix (or a publisher's file type with a recipe): where its types come
    from, and for a stand-in that it is one."""
    pub = published_recipe(name, arch, tensors, publisher)
    if pub is not None:
        left = f"; not modelled: {pub.unresolved}" if pub.unresolved else ""
        return (f"{pub.mix} by {pub.publisher} follows the publisher's real files of this model "
                f"({pub.sources[0]}){left}")
    mix = named_mix(name)
    return mix.note if mix is not None and mix.approximate else None


def named_mix(name: str) -> NamedMix | None:
    """The named mix for "UD-Q4_K_XL", "ud-q4_k_xl", "Q6_K_L", ...; None for a llama.cpp file type or an unknown
    name."""
    key = str(name).strip().upper().replace("UD_", "UD-", 1)
    if key not in NAMED_MIXES and key.endswith("_XL") and f"UD-{key}" in NAMED_MIXES:
        key = f"UD-{key}"  # unsloth's K_XL names appear without "UD-" in file names and Ollama tags
    return NAMED_MIXES.get(key)


def known_quant_names() -> tuple[str, ...]:
    """Every GGUF quant name oomkit reads: llama-quantize's file types, then the named mixes."""
    return tuple(f.name for f in FTYPES) + tuple(NAMED_MIXES)


# ik_llama.cpp@8337e4cd examples/quantize/quantize.cpp QUANT_OPTIONS: the llama-quantize names only that fork has,
# each with its include/llama.h LLAMA_FTYPE_MOSTLY_* id (general.file_type). Upstream llama.cpp has neither the
# names nor the ggml types they write (ggml.IK_TYPES), so a model named with one is refused, not sized.
IK_QUANT_NAMES: dict[str, int] = {
    "Q6_0": 135, "MXFP4_R8": 351, "IQ2_XXS_R4": 219, "IQ2_XS_R4": 220, "IQ2_M_R4": 229, "IQ1_S_R4": 224,
    "IQ1_M_R4": 231, "IQ1_BN": 136, "IQ2_BN": 137, "IQ2_BN_R4": 337, "Q2_K_R4": 210, "IQ3_KT": 152, "IQ4_KT": 153,
    "IQ3_XXS_R4": 223, "IQ3_S_R4": 226, "Q3_K_R4": 211, "IQ4_NL_R4": 225, "IQ4_XS_R8": 230, "Q4_0_R8": 202,
    "Q5_0_R4": 208, "Q6_0_R4": 335, "Q8_0_R8": 207, "Q8_KV": 149, "IQ4_KS": 145, "IQ4_KS_R4": 345, "IQ5_KS_R4": 350,
    "IQ4_KSS": 148, "IQ5_KS": 150, "IQ2_K": 138, "IQ2_K_R4": 338, "IQ2_KS": 147, "IQ1_KT": 156, "IQ2_KT": 151,
    "IQ2_KL": 155, "IQ3_KS": 154, "IQ3_K": 139, "IQ3_K_R4": 339, "IQ3_KL": 146, "IQ4_K": 140, "IQ4_K_R4": 340,
    "IQ5_K": 141, "IQ5_K_R4": 341, "IQ6_K": 142, "Q4_K_R4": 214, "Q5_K_R4": 216, "Q6_K_R4": 218, "Q8_K_R8": 399,
    "Q8_KV_R8": 398, "BF16_R16": 232,
}


def ik_quant_refusal(tag: str) -> str | None:
    """The one-line refusal for a quant tag that only ik_llama.cpp's llama-quantize makes ("IQ4_KSS", "IQ2_K_R4"),
    else None."""
    key = str(tag).strip().upper().replace("-", "_")
    ftype = IK_QUANT_NAMES.get(key)
    if ftype is None:
        return None
    t = ik_type_by_name(key)
    if t is None:
        what = "a mix of that fork's ggml types"
    else:
        what = f"ggml type {t.name}, {t.bits_per_weight:g} bits per weight"
        what += f" + {t.row_meta} bytes a row" if t.row_meta else ""
    return (f"quant {tag!r} is ik_llama.cpp's (its llama-quantize {key}, file type {ftype}: {what}); upstream "
            "llama.cpp cannot load it and oomkit sizes upstream llama.cpp")
