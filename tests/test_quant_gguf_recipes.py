"""recipe_types without llama.cpp: lookups and the mixes of well-known files (llama.cpp itself is held
against it in test_gguf_recipes.py)."""

import pytest

from oomkit.errors import OomkitError
from oomkit.quant import ggml
from oomkit.quant.gguf_recipes import (
    FTYPES,
    UNQUANTIZED,
    allows_quantization,
    converted_type,
    ftype_by_id,
    ftype_by_name,
    ftype_name,
    imatrix_tensors,
    recipe_types,
)


def llama3_8b(tied=False):
    """Meta-Llama-3-8B's tensor list: 32 layers, 4096 wide, 8 KV heads of 128, FFN 14336, vocab 128256."""
    t = [("token_embd.weight", (4096, 128256)), ("output_norm.weight", (4096,)), ("rope_freqs.weight", (64,))]
    if not tied:
        t.append(("output.weight", (4096, 128256)))
    for i in range(32):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", (4096,)), (b + "attn_q.weight", (4096, 4096)),
              (b + "attn_k.weight", (4096, 1024)), (b + "attn_v.weight", (4096, 1024)),
              (b + "attn_output.weight", (4096, 4096)), (b + "ffn_norm.weight", (4096,)),
              (b + "ffn_gate.weight", (4096, 14336)), (b + "ffn_up.weight", (4096, 14336)),
              (b + "ffn_down.weight", (14336, 4096))]
    return t


MORE_BITS_32 = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}  # use_more_bits(i, 32)


def test_ftype_lookup():
    assert ftype_by_name("q4_k_m").id == 15
    assert ftype_by_name("Q4_K") is ftype_by_name("Q4_K_M")  # llama-quantize's alias
    assert ftype_by_name("LLAMA_FTYPE_MOSTLY_Q8_0").id == 7
    assert ftype_by_name("mostly_iq4_xs").default_type == "iq4_xs"
    assert ftype_by_name("f32").id == 0 and ftype_by_name("ALL_F32").id == 0
    assert ftype_by_id(30).name == "IQ4_XS" and ftype_by_id(38).name == "MXFP4_MOE"
    assert ftype_name(33) == "Q4_0_4_4" and ftype_name(1024) == "GUESSED"
    assert UNQUANTIZED == {"F32", "F16", "BF16"} and ftype_by_name("bf16").unquantized
    with pytest.raises(OomkitError) as e:
        ftype_by_name("Q4_K_XL")
    assert "Q4_K_M" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(OomkitError):
        ftype_by_id(5)
    # every default type is a real ggml type
    for f in FTYPES:
        if f.default_type:
            ggml.type_by_name(f.default_type)


def test_q4_k_m_llama3_8b():
    types = recipe_types("Q4_K_M", llama3_8b(), "llama", n_gqa=4)
    assert types["output.weight"] == "q6_K"
    assert types["token_embd.weight"] == "q4_K"
    assert types["output_norm.weight"] == "f32" and types["rope_freqs.weight"] == "f32"
    for i in range(32):
        more = "q6_K" if i in MORE_BITS_32 else "q4_K"
        assert types[f"blk.{i}.attn_v.weight"] == more
        assert types[f"blk.{i}.ffn_down.weight"] == more
        assert types[f"blk.{i}.attn_q.weight"] == types[f"blk.{i}.ffn_up.weight"] == "q4_K"
        assert types[f"blk.{i}.attn_norm.weight"] == "f32"
    size = sum(ggml.tensor_bytes(types[n], s) for n, s in llama3_8b())
    assert 4.5e9 < size < 5.0e9  # the published Q4_K_M files are 4.92 GB


def test_q4_0_and_tied_embeddings():
    types = recipe_types("Q4_0", llama3_8b(tied=True), "llama", n_gqa=4)
    assert types["token_embd.weight"] == "q6_K"  # tied: the embedding is the output matrix too
    assert {types[f"blk.{i}.ffn_down.weight"] for i in range(32)} == {"q4_0"}
    untied = recipe_types("Q4_0", llama3_8b(), "llama", n_gqa=4)
    assert untied["token_embd.weight"] == "q4_0" and untied["output.weight"] == "q6_K"


def test_q2_k_and_q3_k_m():
    q2 = recipe_types("Q2_K", llama3_8b(), "llama", n_gqa=4)
    assert q2["blk.0.attn_v.weight"] == "q4_K"  # n_gqa >= 4
    assert q2["blk.0.ffn_down.weight"] == q2["blk.0.attn_output.weight"] == "q3_K"
    assert q2["blk.0.attn_q.weight"] == "q2_K"
    assert recipe_types("Q2_K", llama3_8b(), "llama", n_gqa=1)["blk.0.attn_v.weight"] == "q3_K"
    q3 = recipe_types("Q3_K_M", llama3_8b(), "llama", n_gqa=4)
    assert [q3[f"blk.{i}.attn_v.weight"] for i in range(3)] == ["q5_K", "q5_K", "q4_K"]
    assert [q3[f"blk.{i}.ffn_down.weight"] for i in range(3)] == ["q5_K", "q5_K", "q4_K"]  # n/16 = 2


def test_70b_attn_v_bump():
    layers = [(f"blk.{i}.attn_v.weight", (8192, 1024)) for i in range(80)]
    types = recipe_types("Q4_K_S", layers + [("output.weight", (8192, 128256))], "llama", n_gqa=8)
    assert types["blk.10.attn_v.weight"] == "q5_K"  # LLM_TYPE_70B: Q4_K -> Q5_K
    assert recipe_types("Q4_K_S", layers, "llama", n_gqa=8, is_70b=False)["blk.10.attn_v.weight"] == "q4_K"


def test_row_fallbacks():
    t = [("output.weight", (4000, 32000)), ("blk.0.attn_q.weight", (2880, 4096)),
         ("blk.0.ffn_down.weight", (100, 4096)), ("blk.0.attn_v.weight", (2880, 512))]
    types = recipe_types("Q4_K_M", t, "llama", n_gqa=8)
    assert types["blk.0.attn_q.weight"] == "q5_0"  # q4_K needs rows of 256
    assert types["blk.0.ffn_down.weight"] == "f16"  # not even a multiple of 32
    assert types["output.weight"] == "q8_0"  # output rows not a multiple of the default block
    assert types["blk.0.attn_v.weight"] == "q8_0"  # q6_K -> q8_0
    with pytest.raises(OomkitError):
        recipe_types("Q1_0", t, "llama")  # q1_0 has no fallback (llama.cpp throws)


def test_moe_and_mxfp4():
    t = [("token_embd.weight", (2880, 201088)), ("output.weight", (2880, 201088))]
    for i in range(2):
        t += [(f"blk.{i}.ffn_gate_inp.weight", (2880, 32)), (f"blk.{i}.ffn_down_exps.weight", (2880, 2880, 32)),
              (f"blk.{i}.attn_q.weight", (2880, 4096))]
    types = recipe_types("MXFP4_MOE", t, "gpt-oss", n_expert=32)
    assert types["blk.0.ffn_down_exps.weight"] == "mxfp4"
    assert types["blk.0.attn_q.weight"] == types["output.weight"] == types["token_embd.weight"] == "q8_0"
    assert types["blk.0.ffn_gate_inp.weight"] == "f32"  # routers are never quantized


def test_never_quantized_and_source_types():
    assert not allows_quantization("blk.0.ffn_gate_inp.weight", (4096, 64), "qwen3moe")
    assert not allows_quantization("blk.0.ssm_conv1d.weight", (4, 8192), "mamba")
    assert not allows_quantization("blk.0.attn_norm.weight", (4096,), "llama")
    assert not allows_quantization("blk.0.attn_q.weight", (4096, 1), "llama")  # ggml_n_dims == 1
    assert not allows_quantization("output.weight", (4096, 32000), "llama", quantize_output_tensor=False)
    assert allows_quantization("blk.0.ffn_down_exps.weight", (1536, 4096, 128), "qwen3moe")
    assert converted_type("blk.0.ffn_gate_inp.weight", (4096, 64), "bf16") == "f32"
    assert converted_type("blk.0.attn_q.weight", (4096, 4096), "bf16") == "bf16"
    types = recipe_types("Q8_0", [("blk.0.ffn_gate_inp.weight", (4096, 64)), ("blk.0.attn_q.weight", (4096, 4096))],
                         "qwen3moe", n_expert=64, source_type="bf16")
    assert types == {"blk.0.ffn_gate_inp.weight": "f32", "blk.0.attn_q.weight": "q8_0"}
    assert recipe_types("F16", llama3_8b(), "llama")["blk.0.attn_q.weight"] == "f16"


def test_imatrix_ftypes():
    plain = recipe_types("IQ2_XXS", llama3_8b(), "llama", n_gqa=4, has_imatrix=False)
    assert imatrix_tensors("IQ2_XXS", plain, llama3_8b(), "llama")
    assert not imatrix_tensors("Q4_K_M", recipe_types("Q4_K_M", llama3_8b(), "llama"), llama3_8b(), "llama")
    # IQ4_XS bumps the first eighth of ffn_down to Q5_K only without an imatrix
    without = recipe_types("IQ4_XS", llama3_8b(), "llama", n_gqa=4, has_imatrix=False)
    with_im = recipe_types("IQ4_XS", llama3_8b(), "llama", n_gqa=4, has_imatrix=True)
    assert without["blk.0.ffn_down.weight"] == "q5_K" and with_im["blk.0.ffn_down.weight"] == "iq4_xs"
    auto = recipe_types("IQ2_XXS", llama3_8b(), "llama", n_gqa=4)
    assert auto["token_embd.weight"] == "q2_K" and auto["output.weight"] == "q5_K"
    assert auto["blk.0.attn_v.weight"] == "q4_K" and auto["blk.0.ffn_down.weight"] == "q2_K"
    assert auto["blk.10.ffn_down.weight"] == "iq2_xxs"
    with pytest.raises(OomkitError):
        recipe_types("NVFP4", llama3_8b(), "llama")


def test_overrides():
    t = llama3_8b()
    types = recipe_types("Q4_K_M", t, "llama", n_gqa=4, tensor_type_overrides=[(r"ffn_down", "q8_0")],
                         output_tensor_type="q8_0", token_embedding_type="q6_K")
    assert types["blk.5.ffn_down.weight"] == "q8_0"
    assert types["output.weight"] == "q8_0" and types["token_embd.weight"] == "q6_K"
    pure = recipe_types("Q4_K_M", t, "llama", pure=True)
    assert pure["output.weight"] == pure["blk.0.attn_v.weight"] == "q4_K"


def test_tied_embedding_follows_output_tensor_type():
    types = recipe_types("Q4_K_M", llama3_8b(tied=True), "llama", n_gqa=4, output_tensor_type="q8_0")
    assert types["token_embd.weight"] == "q8_0"
