"""HF quantization formats: bytes of one 4096 x 4096 linear, worked by hand from each stored layout.

n = 4096 * 4096 = 16_777_216 weights; 4-bit packing gives n / 2 = 8_388_608 bytes.
"""

import pytest

from oomkit.errors import OomkitError
from oomkit.quant.hf_formats import (
    QuantFormat,
    bits_per_weight,
    dtype_bytes,
    format_of,
    linear_weight_bytes,
    module_is_quantized,
    parse_quantization_config,
)

N = 4096 * 4096


def nbytes(cfg, dtype="bfloat16", o=4096, i=4096):
    return linear_weight_bytes(parse_quantization_config(cfg, dtype), o, i)


def test_plain_dtypes():
    assert nbytes(None, "bfloat16") == 2 * N
    assert nbytes(None, "torch.float16") == 2 * N
    assert nbytes(None, "float32") == 4 * N
    assert nbytes(None, "F8_E4M3") == N  # safetensors spelling
    assert dtype_bytes("I8") == 1
    fmt = parse_quantization_config(None, "bf16")
    assert (fmt.name, fmt.bits, fmt.quantized) == ("bfloat16", 16, False)
    with pytest.raises(OomkitError):
        parse_quantization_config(None, None)
    with pytest.raises(OomkitError):
        parse_quantization_config(None, "float7")


def test_fp8_block_deepseek_v3():
    cfg = {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]}
    # fp8 weight + weight_scale_inv fp32 [32, 32]
    assert nbytes(cfg) == N + 32 * 32 * 4 == 16_781_312
    # a 7168 x 2048 projection: scales [ceil(7168/128)=56, 16]
    assert nbytes(cfg, o=7168, i=2048) == 7168 * 2048 + 56 * 16 * 4
    # rows not a multiple of 128 round up
    assert nbytes(cfg, o=4100, i=4096) == 4100 * 4096 + 33 * 32 * 4


def test_fp8_per_tensor():
    assert nbytes({"quant_method": "fp8", "activation_scheme": "dynamic"}) == N + 4
    assert nbytes({"quant_method": "fp8", "activation_scheme": "static"}) == N + 4 + 4


def test_fbgemm_fp8_llama_405b():
    cfg = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": ["lm_head"]}
    assert nbytes(cfg) == N + 4096 * 4 == 16_793_600


def test_compressed_tensors_w8a8_int8_channel():
    cfg = {
        "quant_method": "compressed-tensors", "format": "int-quantized", "ignore": ["lm_head"],
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel", "dynamic": False},
            "input_activations": {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "token",
                                  "dynamic": True},
        }},
    }
    # int8 weight + bf16 weight_scale [4096, 1]; dynamic per-token activations store nothing
    assert nbytes(cfg) == N + 4096 * 2 == 16_785_408
    fmt = parse_quantization_config(cfg, "bfloat16")
    assert not module_is_quantized(fmt, "lm_head") and module_is_quantized(fmt, "model.layers.0.mlp.up_proj")


def test_compressed_tensors_fp8_dynamic_and_static():
    dyn = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": {
        "targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "channel", "dynamic": False},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}}}}
    assert nbytes(dyn) == N + 4096 * 2
    static = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": {
        "targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "tensor", "dynamic": False},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False}}}}
    # one bf16 weight_scale and one bf16 input_scale
    assert nbytes(static) == N + 2 + 2


def _w4a16(symmetric):
    return {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "weights": {
                "num_bits": 4, "type": "int", "symmetric": symmetric, "strategy": "group", "group_size": 128,
                "dynamic": False}}}}


def test_compressed_tensors_w4a16_pack_quantized():
    # weight_packed int32 [4096, 512] + bf16 weight_scale [4096, 32] + weight_shape int64 [2]
    assert nbytes(_w4a16(True)) == 4096 * 512 * 4 + 4096 * 32 * 2 + 16 == 8_650_768
    # asymmetric adds weight_zero_point int32 packed along rows: [4096 / 8, 32]
    assert nbytes(_w4a16(False)) == 8_650_768 + 512 * 32 * 4 == 8_716_304
    fmt = parse_quantization_config(_w4a16(True), "bfloat16")
    assert (fmt.bits, fmt.group_size, fmt.zero_point) == (4, 128, False)


def test_compressed_tensors_nvfp4():
    cfg = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": ["lm_head"],
           "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
               "num_bits": 4, "type": "float", "symmetric": True, "strategy": "tensor_group", "group_size": 16,
               "dynamic": False},
               "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                     "group_size": 16, "dynamic": "local"}}}}
    # uint8 weight_packed [4096, 2048] + fp8 weight_scale [4096, 256] + weight_global_scale + input_global_scale
    assert nbytes(cfg) == N // 2 + 4096 * 256 + 4 + 4 == 9_437_192
    cfg["config_groups"]["group_0"]["input_activations"] = None  # NVFP4A16
    assert nbytes(cfg) == 9_437_188


def test_gptq():
    cfg = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
    # qweight int32 [512, 4096] + qzeros int32 [32, 512] + fp16 scales [32, 4096] + g_idx int32 [4096]
    assert nbytes(cfg, "float16") == N // 2 + 32 * 512 * 4 + 32 * 4096 * 2 + 4096 * 4 == 8_732_672
    assert nbytes({**cfg, "bits": 8}, "float16") == N + 32 * 1024 * 4 + 32 * 4096 * 2 + 4096 * 4 == 17_186_816
    # 3-bit packs 32 weights into 3 int32: qweight [384, 4096], qzeros [32, 384]
    assert nbytes({**cfg, "bits": 3}, "float16") == 384 * 4096 * 4 + 32 * 384 * 4 + 32 * 4096 * 2 + 4096 * 4
    # group_size -1: one group per column
    assert nbytes({**cfg, "group_size": -1}, "float16") == N // 2 + 512 * 4 + 4096 * 2 + 4096 * 4 == 8_415_232
    fmt = parse_quantization_config(cfg, "float16")
    assert not module_is_quantized(fmt, "lm_head")
    assert module_is_quantized(parse_quantization_config({**cfg, "lm_head": True}, "float16"), "lm_head")


def test_awq():
    cfg = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
    # qweight int32 [4096, 512] + qzeros int32 [32, 512] + fp16 scales [32, 4096]
    assert nbytes(cfg, "float16") == N // 2 + 32 * 512 * 4 + 32 * 4096 * 2 == 8_716_288
    with pytest.raises(OomkitError):
        parse_quantization_config({**cfg, "version": "gemv"}, "float16")


def test_bitsandbytes_4bit():
    cfg = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
           "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16",
           "llm_int8_skip_modules": ["mlp.gate"]}
    blocks = N // 64  # 262_144 absmax
    # packed + uint8 absmax + nested_absmax fp32 [1024] + nested_quant_map fp32 [256] + quant_map fp32 [16]
    assert nbytes(cfg) == N // 2 + blocks + 1024 * 4 + 256 * 4 + 16 * 4 == 8_655_936
    # without double quant: fp32 absmax
    assert nbytes({**cfg, "bnb_4bit_use_double_quant": False}) == N // 2 + blocks * 4 + 16 * 4 == 9_437_248
    fmt = parse_quantization_config(cfg, "bfloat16")
    assert fmt.name == "bnb-nf4" and fmt.group_size == 64
    assert not module_is_quantized(fmt, "model.layers.3.mlp.gate")
    assert module_is_quantized(fmt, "model.layers.3.mlp.gate_proj")
    assert parse_quantization_config({**cfg, "bnb_4bit_quant_type": "fp4"}, "bfloat16").name == "bnb-fp4"


def test_bitsandbytes_int8():
    cfg = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    # int8 weight + SCB fp32 [4096] + weight_format uint8
    assert nbytes(cfg) == N + 4096 * 4 + 1 == 16_793_601


def test_mxfp4_gpt_oss():
    cfg = {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}
    # *_blocks uint8 [4096, 128, 16] + *_scales uint8 [4096, 128]
    assert nbytes(cfg) == N // 2 + 4096 * 128 == 8_912_896
    fmt = parse_quantization_config(cfg, "bfloat16")
    assert not module_is_quantized(fmt, "model.layers.5.self_attn.q_proj")
    assert module_is_quantized(fmt, "model.layers.5.mlp.experts")
    assert bits_per_weight(fmt) == pytest.approx(4.25)


def test_modelopt():
    nvfp4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
             "exclude_modules": ["lm_head", "model.layers.0.*"]}
    # uint8 weight [4096, 2048] + fp8 weight_scale [4096, 256] + weight_scale_2 + input_scale (fp32)
    assert nbytes(nvfp4) == N // 2 + 4096 * 256 + 4 + 4 == 9_437_192
    fmt = parse_quantization_config(nvfp4, "bfloat16")
    assert not module_is_quantized(fmt, "model.layers.0.mlp.down_proj")
    assert module_is_quantized(fmt, "model.layers.1.mlp.down_proj")
    nested = {"quant_method": "modelopt", "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
    assert nbytes(nested) == N + 4 + 4


def test_unknown_and_unsupported():
    with pytest.raises(OomkitError) as e:
        parse_quantization_config({"quant_method": "hqq"}, "bfloat16")
    assert "gptq" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(OomkitError):
        parse_quantization_config({"quant_method": "bitsandbytes"}, "bfloat16")
    with pytest.raises(OomkitError):
        parse_quantization_config({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "bfloat16")
    with pytest.raises(OomkitError):
        linear_weight_bytes(QuantFormat("mystery", 4, method="x"), 16, 16)


def test_nemotron_h_module_names_read_on_the_decoder_names():
    # NemotronHForCausalLM names each block's module backbone.layers.N.mixer, as llama.cpp's tensor map reads it
    # (gguf-py tensor_mapping.py: mixer.q_proj -> attn_q, mixer.gate -> ffn_gate_inp, mixer.shared_experts.* ->
    # ffn_*_shexp, mixer.up_proj -> ffn_up; convert_hf_to_gguf.py NemotronHModel stacks mixer.experts.E.* into
    # model.layers.N.mlp.experts.*)
    fmt = parse_quantization_config({"quant_method": "modelopt", "quantization": {
        "quant_algo": "MIXED_PRECISION", "exclude_modules": ["backbone.embeddings", "backbone.layers.3.mixer.gate"],
        "quantized_layers": {"backbone.layers.3.mixer.experts.0.up_proj": {"quant_algo": "W4A16_NVFP4"},
                             "backbone.layers.3.mixer.experts.1.up_proj": {"quant_algo": "W4A16_NVFP4"},
                             "backbone.layers.3.mixer.shared_experts.down_proj": {"quant_algo": "NVFP4"},
                             "backbone.layers.3.mixer.gate": {"quant_algo": "FP8"},
                             "backbone.layers.5.mixer.q_proj": {"quant_algo": "FP8"},
                             "backbone.layers.7.mixer.up_proj": {"quant_algo": "FP8"},
                             "backbone.layers.0.mixer.in_proj": {"quant_algo": "FP8"}}}}, "bfloat16")
    assert len(fmt.per_module) == 6  # the two experts read as the layer's stacked experts
    name = {m: (f.name if f else None) for m in (
        "model.layers.3.mlp.experts.up_proj", "model.layers.3.mlp.experts.down_proj",
        "model.layers.3.mlp.shared_experts.down_proj", "model.layers.3.mlp.gate", "model.layers.5.self_attn.q_proj",
        "model.layers.7.mlp.up_proj", "model.layers.0.mixer.in_proj", "model.layers.0.mixer.out_proj")
        for f in [format_of(fmt, m)]}
    assert name == {"model.layers.3.mlp.experts.up_proj": "modelopt-nvfp4", "model.layers.3.mlp.experts.down_proj": None,
                    "model.layers.3.mlp.shared_experts.down_proj": "modelopt-nvfp4",
                    "model.layers.3.mlp.gate": None,  # listed, but exclude_modules leaves it out
                    "model.layers.5.self_attn.q_proj": "modelopt-fp8", "model.layers.7.mlp.up_proj": "modelopt-fp8",
                    "model.layers.0.mixer.in_proj": "modelopt-fp8", "model.layers.0.mixer.out_proj": None}
    assert format_of(fmt, "model.embed_tokens") is None
