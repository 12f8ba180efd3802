"""The quantized variants the catalog lists (verbatim quantization_config of each repo) resolve, and a ModelOpt
MIXED_PRECISION checkpoint stores each module in the format its quantized_layers entry names."""

from __future__ import annotations

import pytest

from oomkit.model import catalog
from oomkit.model.resolve import resolve
from oomkit.model.tensors import hf_module_names
from oomkit.quant.hf_formats import format_of, parse_quantization_config

VARIANTS = sorted(catalog._index().get("variants", {}).items())


@pytest.mark.parametrize("repo,slug", VARIANTS, ids=[r for r, _ in VARIANTS])
def test_every_listed_variant_resolves_lighter_than_its_base(repo, slug):
    spec = resolve(repo, tag_formats=False)
    base = resolve(slug, "bf16", tag_formats=False)
    assert [layer.kind for layer in spec.layers] == [layer.kind for layer in base.layers]
    generic = any("read generically" in label for label in base.labels)  # no tensor names: nothing to quantize
    assert spec.weights.nbytes <= base.weights.nbytes if generic else spec.weights.nbytes < base.weights.nbytes
    assert not any("inferred" in label for label in spec.labels)


def test_modelopt_mixed_precision_per_module():
    # nvidia/Qwen3.6-27B-NVFP4: quant_algo MIXED_PRECISION, 401 quantized_layers (FP8 attention and linear
    # attention, W4A16_NVFP4 MLPs and lm_head), mtp* ignored (catalog variant, verbatim config)
    entry = catalog.lookup("nvidia/Qwen3.6-27B-NVFP4")
    q = entry.config["quantization_config"]
    fmt = parse_quantization_config(q, "bfloat16")
    assert fmt.name == "modelopt-mixed" and len(fmt.per_module) == 401
    want = {k.replace("model.language_model.", "model."): v["quant_algo"] for k, v in q["quantized_layers"].items()}
    spec = resolve("nvidia/Qwen3.6-27B-NVFP4", tag_formats=False)
    seen = set()
    for t in spec.weights.tensors:
        names = hf_module_names(t.name)
        listed = next((n for n in names if n in want), None)
        if listed is None:
            if names and t.name not in ("token_embd.weight",):
                assert t.dtype == "bfloat16", t.name  # not listed (the MTP block, norms, a/b projections)
            continue
        seen.add(listed)
        expected = {"FP8": "modelopt-fp8", "W4A16_NVFP4": "modelopt-nvfp4", "NVFP4": "modelopt-nvfp4"}[want[listed]]
        assert t.dtype == expected, (t.name, listed)
        n_in, n_out = t.shape[0], t.shape[1]
        if expected == "modelopt-fp8":
            assert t.nbytes == n_in * n_out + 8  # fp8 weight + weight_scale + input_scale
        else:
            assert t.nbytes == n_out * n_in // 2 + n_out * n_in // 16 + 4  # W4A16: no input scale
    assert seen == set(want)  # every listed module found in the decoder
    assert format_of(fmt, "model.layers.64.mlp.down_proj") is None  # the MTP layer is not listed


def test_nemotron_h_modelopt_names_read_on_the_decoder_tensors():
    # nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4 (verbatim hf_quant_config): MIXED_PRECISION quantized_layers
    # in Nemotron-H's own module names, backbone.layers.N.mixer.{in_proj,out_proj} FP8 (23 Mamba-2 layers),
    # mixer.experts.E.{up,down}_proj and mixer.shared_experts.{up,down}_proj W4A16_NVFP4 (23 MoE layers), lm_head
    # W4A16_NVFP4; attention, routers and the MTP block (mtp*) are not listed. llama.cpp's converter stacks the
    # experts (convert_hf_to_gguf.py NemotronHModel.modify_tensors) and vLLM gives the stacked experts the format of
    # the first key under backbone.layers.N.mixer.experts (modelopt.py ModelOptMixedPrecisionConfig._resolve_quant_algo)
    q = catalog.lookup("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4").config["quantization_config"]
    fmt = parse_quantization_config(q, "bfloat16")
    assert len(fmt.per_module) == 23 * 2 + 23 * 4 + 1  # one entry per decoder module, 128 experts read as one
    spec = resolve("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", tag_formats=False)
    got: dict[str, set[str]] = {}
    for t in spec.weights.tensors:
        if t.layer is None or t.layer < spec.n_trunk_layers:
            got.setdefault(t.name.split(".")[-2] if t.layer is not None else t.name, set()).add(t.dtype)
    assert got["ssm_in"] == got["ssm_out"] == {"modelopt-fp8"}
    assert got["ffn_up_exps"] == got["ffn_down_exps"] == got["ffn_up_shexp"] == got["ffn_down_shexp"] == {
        "modelopt-nvfp4"}
    assert got["output.weight"] == {"modelopt-nvfp4"} and got["token_embd.weight"] == {"bfloat16"}
    assert got["attn_q"] == got["attn_output"] == got["ffn_gate_inp"] == {"bfloat16"}  # not listed
    assert {t.dtype for t in spec.weights.tensors if t.layer == spec.n_trunk_layers} == {"bfloat16"}  # mtp*


def test_nemotron_h_modelopt_exclude_modules_are_honoured():
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4 (verbatim hf_quant_config): NVFP4 everywhere but exclude_modules,
    # which names layer 4's Mamba-2 in_proj / out_proj and layer 5's attention as backbone.layers.N.mixer.*; vLLM
    # leaves them unquantized (modelopt.py ModelOptQuantConfigBase.is_layer_excluded)
    spec = resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", tag_formats=False)
    dtype = {t.name: t.dtype for t in spec.weights.tensors}
    assert dtype["blk.4.ssm_in.weight"] == dtype["blk.4.ssm_out.weight"] == "bfloat16"
    assert dtype["blk.5.attn_q.weight"] == dtype["blk.5.attn_output.weight"] == "bfloat16"
    assert dtype["blk.0.ssm_in.weight"] == dtype["blk.1.ffn_up_exps.weight"] == "modelopt-nvfp4"
    assert dtype["output.weight"] == "bfloat16"


def test_nemotron_3_nano_nvfp4_stored_elements():
    # the hub's safetensors parameter count of nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4, 18,237,772,608
    # (fs:69468411049, a table of the hub's total_params), counts stored elements: a BF16 weight one per two bytes,
    # NVFP4's packed uint8 values and fp8 scales one per byte, its fp32 weight_scale_2 and input_scale one each.
    # With the exclude_modules read on the decoder's tensors: -0.02 % (was -0.91 %, every Mamba-2 in_proj /
    # out_proj and attention projection the config leaves BF16 counted as NVFP4)
    spec = resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", tag_formats=False)

    def stored(t) -> int:
        if t.dtype == "bfloat16":
            return t.nbytes // 2
        assert t.dtype == "modelopt-nvfp4", t.name
        return t.nbytes - 6 * (t.shape[2] if len(t.shape) == 3 else 1)  # two fp32 scalars: 8 bytes, 2 elements

    assert abs(sum(stored(t) for t in spec.weights.tensors) / 18_237_772_608 - 1) < 0.001


def test_gemma4_nvfp4_quantizes_the_routed_experts_only():
    # nvidia/Gemma-4-26B-A4B-NVFP4 (verbatim config): ignore lists every layer's mlp*, router*, self_attn*, so only
    # layers.N.experts (transformers Gemma4TextDecoderLayer keeps them beside the dense mlp) are NVFP4:
    # 4-bit values + one fp8 scale per 16, plus a per-tensor weight_scale_2 and input_scale (8 bytes per expert).
    tc = catalog.lookup("google/gemma-4-26B-A4B").text_config
    n_exp, h, ff, n_layers = tc["num_experts"], tc["hidden_size"], tc["moe_intermediate_size"], tc["num_hidden_layers"]
    expert_params = n_layers * n_exp * 3 * h * ff
    base = resolve("google/gemma-4-26B-A4B", "bf16", tag_formats=False)
    spec = resolve("nvidia/Gemma-4-26B-A4B-NVFP4", tag_formats=False)
    rest = base.params_total - expert_params
    nvfp4 = expert_params // 2 + expert_params // 16
    assert abs(spec.weights.nbytes - (2 * rest + nvfp4)) <= n_layers * n_exp * 3 * 8
    # the expert matrices (ffn_down_exps.scale, the per-expert output scales, stays a bf16 vector)
    assert {t.dtype for t in spec.weights.tensors if t.name.endswith("_exps.weight")} == {"modelopt-nvfp4"}
    assert {t.dtype for t in spec.weights.tensors if "attn_" in t.name or t.name.endswith(
        ("ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"))} == {"bfloat16"}


def test_kimi_k25_int4_experts_with_bf16_attention_and_shared_experts():
    # moonshotai/Kimi-K2.5's verbatim compressed-tensors config: INT4 group 32 on Linear, ignore lm_head,
    # re:.*self_attn.*, re:.*shared_experts.*, the dense MLP (layer 0); 594 GB in all, as the repo's ~595 GB of files
    spec = resolve("moonshotai/Kimi-K2.5", tag_formats=False)
    by = {}
    for t in spec.weights.tensors:
        by.setdefault(t.dtype, []).append(t.name)
    # the routed experts are INT4 (the router, ffn_gate_inp, is counted with them: DeepSeek-V3's MoEGate is no
    # nn.Linear, so compressed-tensors leaves it BF16; a 0.24 GB difference not modelled yet)
    assert {n.split(".")[2] for n in by["ct-pack-quantized"]} <= {
        "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "ffn_gate_inp"}
    assert any("attn_kv_a_mqa" in n for n in by["bfloat16"]) and any("shexp" in n for n in by["bfloat16"])
    assert "blk.0.ffn_down.weight" in by["bfloat16"]
    assert 590e9 < spec.weights.nbytes < 598e9
