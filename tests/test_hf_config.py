"""config.json -> per-layer ModelSpec, on real configs (/work/shared/reference/model_configs.jsonl sources:
ai21labs/Jamba-v0.1, nvidia/Nemotron-H-56B-Base-8K, nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 and
deepseek-ai/DeepSeek-V2-Lite are verbatim config.json copies; Qwen3-Next from litgpt/aiconfigurator)."""

import json

import pytest

from oomkit.errors import OomkitError
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import LayerKind

JAMBA = {"architectures": ["JambaForCausalLM"], "attn_layer_offset": 4, "attn_layer_period": 8,
         "expert_layer_offset": 1, "expert_layer_period": 2, "hidden_size": 4096, "intermediate_size": 14336,
         "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_dt_rank": 256, "mamba_expand": 2,
         "max_position_embeddings": 262144, "model_type": "jamba", "num_attention_heads": 32, "num_experts": 16,
         "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "sliding_window": None,
         "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 65536}
NEMOTRON_H_56B = {"architectures": ["NemotronHForCausalLM"], "chunk_size": 128, "conv_kernel": 4, "expand": 2,
                  "hidden_size": 8192, "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M"
                  "-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
                  "intermediate_size": 32768, "mamba_head_dim": 64, "mamba_num_heads": 256,
                  "max_position_embeddings": 8192, "model_type": "nemotron_h", "n_groups": 8,
                  "num_attention_heads": 64, "num_hidden_layers": 118, "num_key_value_heads": 8,
                  "sliding_window": None, "ssm_state_size": 256, "tie_word_embeddings": False,
                  "torch_dtype": "bfloat16", "vocab_size": 131072}
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "decoder_sparse_step": 1, "full_attention_interval": 4,
              "head_dim": 256, "hidden_size": 2048, "intermediate_size": 5120, "linear_conv_kernel_dim": 4,
              "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
              "linear_value_head_dim": 128, "max_position_embeddings": 262144, "mlp_only_layers": [],
              "model_type": "qwen3_next", "moe_intermediate_size": 512, "num_attention_heads": 16,
              "num_experts": 512, "num_experts_per_tok": 10, "num_hidden_layers": 48, "num_key_value_heads": 2,
              "shared_expert_intermediate_size": 512, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "vocab_size": 151936}


def kinds(spec):
    return [layer.kind for layer in spec.layers]


def test_jamba_attention_every_eighth_layer_moe_every_second():
    s = spec_from_config(JAMBA, name="jamba")
    assert [i for i, k in enumerate(kinds(s)) if k is LayerKind.FULL] == [4, 12, 20, 28]
    assert [layer.index for layer in s.layers if layer.ffn.is_moe] == list(range(1, 32, 2))
    st = s.layers[0].recurrent  # Mamba-1: d_inner = 2 * 4096; conv (4-1) * 8192; ssm 16 * 8192
    assert (st.conv, st.ssm) == (3 * 8192, 16 * 8192)
    assert abs(s.params_total - 51.57e9) / 51.57e9 < 0.02  # Jamba-v0.1: 52B total (model card)
    assert abs(s.params_active - 12e9) / 12e9 < 0.05  # 12B active


def test_nemotron_h_pattern():
    s = spec_from_config(NEMOTRON_H_56B, name="nemotron-h")
    counts = s.kinds()
    assert counts == {"recurrent": 54, "none": 54, "full": 10}
    st = next(layer.recurrent for layer in s.layers if layer.recurrent)
    # d_inner = 256 heads x 64 = 16384; conv (4-1) * (16384 + 2*8*256); ssm 256 * 16384
    assert (st.conv, st.ssm) == (3 * (16384 + 4096), 256 * 16384)
    assert abs(s.params_total - 56e9) / 56e9 < 0.05  # "Nemotron-H-56B"


def test_qwen3_next_gated_delta_net():
    s = spec_from_config(QWEN3_NEXT, name="qwen3-next")
    assert kinds(s)[:4] == [LayerKind.RECURRENT] * 3 + [LayerKind.FULL]
    # 12 full-attention layers in the trunk and the checkpoint's MTP block (mtp.layers.0, full attention + MoE),
    # which the config does not count (hf_config._NEXTN_FIXED)
    assert s.kinds() == {"recurrent": 36, "full": 13} and (s.n_trunk_layers, s.n_nextn_layers) == (48, 1)
    st = s.layers[0].recurrent
    assert (st.conv, st.ssm) == (3 * 8192, 128 * 4096)
    assert abs(s.params_total - 81.3e9) / 81.3e9 < 0.001  # Qwen3-Next-80B-A3B (HF safetensors: 81.3B)
    # conversion/qwen.py Qwen3NextModel.filter_tensors drops mtp.*: a GGUF holds the 48-layer trunk, 79.67B
    g = spec_from_config(QWEN3_NEXT, name="qwen3-next", weight_format="Q4_K_M")
    assert (g.n_layers, g.n_nextn_layers) == (48, 0) and abs(g.params_total - 79.67e9) / 79.67e9 < 0.001


def test_text_config_nesting_and_sliding_patterns():
    g3 = catalog.lookup("gemma3:27b")
    s = spec_from_config(g3.config, name="g3")
    assert s.kinds() == {"sliding": 52, "full": 10}
    assert [i for i, k in enumerate(kinds(s)) if k is LayerKind.FULL][:2] == [5, 11]
    assert s.layers[0].attention.window == 1024 and s.layers[0].attention.head_dim_k == 128
    g2 = spec_from_config(catalog.lookup("gemma2:9b").config, name="g2")
    assert kinds(g2)[:2] == [LayerKind.SLIDING, LayerKind.FULL] and g2.layers[0].attention.window == 4096


def test_qwen3_head_dim_is_not_hidden_over_heads():
    s = spec_from_config(catalog.lookup("qwen3:8b").config, name="q3")
    a = s.layers[0].attention
    assert (a.n_heads, a.n_kv_heads, a.head_dim_k) == (32, 8, 128)  # 4096 / 32 = 128 too; 0.6B differs:
    small = dict(catalog.lookup("qwen3:8b").config, hidden_size=1024, num_attention_heads=16)
    assert spec_from_config(small, name="x").layers[0].attention.head_dim_k == 128


def test_mla_and_moe_fields():
    s = spec_from_config(catalog.lookup("deepseek-v3").config, name="dsv3", weight_format="Q4_K_M")
    a = s.layers[0].attention
    assert (a.kv_lora_rank, a.qk_rope_head_dim, a.q_lora_rank, a.n_heads) == (512, 64, 1536, 128)
    assert [layer.ffn.is_moe for layer in s.layers[:4]] == [False, False, False, True]  # first_k_dense_replace 3
    f = s.layers[3].ffn
    assert (f.n_experts, f.n_experts_used, f.n_ff_expert, f.n_ff_shared) == (256, 8, 2048, 2048)
    assert s.n_layers == 61  # the GGUF conversion drops the MTP block
    hf = spec_from_config(catalog.lookup("deepseek-v3").config, name="dsv3", weight_format="bf16")
    assert hf.n_layers == 62 and hf.n_nextn_layers == 1
    assert abs(hf.params_total - 684.5e9) / 684.5e9 < 0.01  # HF safetensors: 685B with the MTP block
    assert abs(s.params_total - 671e9) / 671e9 < 0.01  # 671B without it (model card)


@pytest.mark.parametrize("drop,needle", [("num_hidden_layers", "num_hidden_layers"),
                                         ("hidden_size", "hidden_size"),
                                         ("num_attention_heads", "num_attention_heads"),
                                         ("intermediate_size", "intermediate_size")])
def test_missing_fields_are_named(drop, needle):
    cfg = dict(catalog.lookup("llama3.1:8b").config)
    cfg.pop(drop)
    with pytest.raises(OomkitError, match=needle):
        spec_from_config(cfg, name="broken")


def test_bad_values():
    cfg = dict(catalog.lookup("llama3.1:8b").config, num_key_value_heads=5)
    with pytest.raises(OomkitError, match="does not divide"):
        spec_from_config(cfg, name="broken")
    with pytest.raises(OomkitError, match="layer_types"):
        spec_from_config(dict(cfg, num_key_value_heads=8, layer_types=["full_attention"] * 3), name="b")
    with pytest.raises(OomkitError, match="non-negative integer"):
        spec_from_config(dict(cfg, num_key_value_heads=8, hidden_size="4096"), name="b")


def test_config_file_and_directory(tmp_path):
    from oomkit.model.resolve import resolve

    (tmp_path / "config.json").write_text(json.dumps(catalog.lookup("qwen3:8b").config))
    a, b = resolve(str(tmp_path)), resolve(str(tmp_path / "config.json"))
    assert a.layers == b.layers and a.weights.format == "bfloat16"


def test_directory_with_safetensors_gives_exact_bytes(tmp_path):
    import struct

    from oomkit.model.resolve import resolve

    # one layer, so that the file holds a tensor of every layer the config declares (a file holding 1 of 16 layers is
    # no checkpoint of the model: its weights are computed instead, tests/test_hostile_sweep13.py)
    config = {**catalog.lookup("llama3.2:1b").config, "num_hidden_layers": 1}
    (tmp_path / "config.json").write_text(json.dumps(config))
    emb, q = 128256 * 2048 * 2, 2048 * 2048 * 2
    header = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [128256, 2048], "data_offsets": [0, emb]},
              "model.layers.0.self_attn.q_proj.weight": {"dtype": "BF16", "shape": [2048, 2048],
                                                         "data_offsets": [emb, emb + q]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)
    with path.open("r+b") as f:  # the tensors' bytes as a sparse hole: full size, as a finished download is
        f.truncate(8 + len(raw) + emb + q)
    spec = resolve(str(tmp_path))
    assert spec.weights.exact and spec.weights.nbytes == emb + q
    assert [t.layer for t in spec.weights.tensors] == [None, 0]


def test_llama4_shared_expert_and_dense_mlp_size():
    # transformers Llama4TextMoe: routed experts of intermediate_size plus a shared expert of intermediate_size;
    # Llama4TextDecoderLayer: non-MoE layers use intermediate_size_mlp (Maverick interleaves them every 2nd layer).
    cfg = {"model_type": "llama4_text", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "intermediate_size": 32,
           "intermediate_size_mlp": 128, "num_local_experts": 4, "num_experts_per_tok": 1,
           "interleave_moe_layer_step": 2}
    spec = spec_from_config(cfg, weight_format="bf16")
    dense, moe = spec.layers[0].ffn, spec.layers[1].ffn
    assert (dense.n_experts, dense.n_ff) == (0, 128)
    assert (moe.n_experts, moe.n_ff_expert, moe.n_shared_experts, moe.n_ff_shared) == (4, 32, 1, 32)
    scout = catalog.lookup("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    total = spec_from_config(scout.config, weight_format="bf16").params_total
    assert abs(total - 107_770_000_000) < 10**7  # text decoder; 108.64B published incl. the vision encoder


def test_hf_quantized_weights_follow_the_stored_layout():
    # AWQ 4-bit g128 (vllm awq.py: qweight int32 [i, o/8], qzeros int32 [i/128, o/8], scales fp16 [i/128, o])
    spec = spec_from_config(catalog.lookup("qwen3:8b").config, name="q", weight_format="awq")
    by_name = {t.name: t for t in spec.weights.tensors}
    i, o = 4096, 12288  # mlp.up_proj of Qwen3-8B
    assert by_name["blk.0.ffn_up.weight"].nbytes == i * (o // 8) * 4 + (i // 128) * (o // 8) * 4 + (i // 128) * o * 2
    assert by_name["output.weight"].nbytes == 4096 * 151936 * 2  # lm_head stays bf16
    assert by_name["token_embd.weight"].nbytes == 4096 * 151936 * 2
    # gpt-oss ships mxfp4 experts (4-bit + one e8m0 scale per 32) and bf16 everything else
    g = spec_from_config(catalog.lookup("gpt-oss:20b").config, name="g")
    exps = {t.name: t for t in g.weights.tensors}["blk.0.ffn_up_exps.weight"]
    assert exps.nbytes == 32 * (2880 * 2880 // 2 + 2880 * 2880 // 32)
    assert {t.dtype for t in g.weights.tensors if "attn_q.weight" in t.name} == {"bfloat16"}


def test_encoder_embedding_models_map_to_llama_cpp_archs_and_keep_no_cache():
    # BERT / XLM-R encoders convert to llama.cpp "bert", nomic_bert to "nomic-bert" (convert_hf_to_gguf.py); their
    # layers have attention weights but no KV cache (LayerKind.NONE), and no LM head / output norm.
    spec = spec_from_config(catalog.lookup("snowflake-arctic-embed-m").config, weight_format="bf16")
    assert spec.architecture == "bert" and spec.tied_embeddings
    assert {layer.kind for layer in spec.layers} == {LayerKind.NONE}
    assert all(layer.attention is not None and layer.attention.n_kv_heads == 12 for layer in spec.layers)
    names = {t.name for t in spec.weights.tensors}
    assert {"position_embd.weight", "token_types.weight", "token_embd_norm.bias", "blk.0.ffn_up.bias"} <= names
    assert "blk.0.ffn_gate.weight" not in names and "output.weight" not in names and "output_norm.weight" not in names
    # BERT-base: 23,837,184 embedding params + 12 x 7,087,872 per layer (pooler not counted)
    assert spec.params_total == 108_891_648
    bge = spec_from_config(catalog.lookup("bge-m3").config, weight_format="bf16")
    assert bge.architecture == "bert" and {layer.kind for layer in bge.layers} == {LayerKind.NONE}
    nomic = spec_from_config({"model_type": "nomic_bert", "num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 100,
                              "num_attention_heads": 4, "intermediate_size": 128, "max_position_embeddings": 2048})
    assert nomic.architecture == "nomic-bert" and {layer.kind for layer in nomic.layers} == {LayerKind.NONE}
    assert "position_embd.weight" not in {t.name for t in nomic.weights.tensors}  # rotary, no learned positions


def test_granitemoehybrid_shared_expert_and_mamba_attention_layer_types():
    # Granite 4.0 H-Tiny shape: GraniteMoeHybrid names its always-on expert's width shared_intermediate_size
    # (transformers GraniteMoeHybridConfig) and lists "mamba" / "attention" layers in layer_types.
    layer_types = (["mamba"] * 5 + ["attention"] + ["mamba"] * 9 + ["attention"] + ["mamba"] * 9 + ["attention"]
                   + ["mamba"] * 9 + ["attention"] + ["mamba"] * 4)
    cfg = {"model_type": "granitemoehybrid", "hidden_size": 1536, "intermediate_size": 512, "layer_types": layer_types,
           "mamba_d_conv": 4, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_n_heads": 48,
           "num_attention_heads": 12, "num_experts_per_tok": 6, "num_hidden_layers": 40, "num_key_value_heads": 4,
           "num_local_experts": 64, "shared_intermediate_size": 1024, "tie_word_embeddings": True,
           "vocab_size": 100352, "max_position_embeddings": 131072}
    spec = spec_from_config(cfg, weight_format="bf16")
    assert [i for i, layer in enumerate(spec.layers) if layer.kind is LayerKind.FULL] == [5, 15, 25, 35]
    ffn = spec.layers[0].ffn
    assert (ffn.n_experts, ffn.n_experts_used, ffn.n_ff_expert, ffn.n_shared_experts, ffn.n_ff_shared) == (
        64, 6, 512, 1, 1024)
    assert spec.params_total == 6_939_037_248  # 188,743,680 of it the 40 shared experts (3 x 1536 x 1024 each)


@pytest.mark.parametrize(("model", "safetensors_total"), [
    ("microsoft/phi-2", 2_779_683_840),  # LayerNorm and dense biases, lm_head bias, no ffn_norm
    ("stabilityai/stablelm-2-1_6b", 1_644_515_328),  # LayerNorm biases, use_qkv_bias
    ("bigcode/starcoder2-7b", 7_173_923_840),  # LayerNorm biases, use_bias on every linear
    ("microsoft/Phi-3.5-MoE-instruct", 41_873_153_344),  # LayerNorm, attention and lm_head biases
    ("THUDM/glm-4-9b-chat", 9_399_951_360),  # chatglm: add_qkv_bias
    ("CohereForAI/aya-23-8B", 8_028_033_024),  # command-r: one norm a block (parallel attention and FFN)
    ("CohereForAI/c4ai-command-r-v01", 34_980_831_232),
    ("codellama/CodeLlama-34b-hf", 33_743_970_304),  # 32000 tokens: no infilling tokens in the 34B
])
def test_layer_lists_count_every_published_parameter(model, safetensors_total):
    """The tensors each block carries as llama.cpp's loaders take them (model/tensors.py: LayerNorm and linear
    biases of phi2 / stablelm / starcoder2 / phimoe, chatglm's q/k/v biases, command-r's single norm) add up to the
    checkpoints' safetensors totals as their Hugging Face pages print them (the catalog entries' params_source)."""
    import math

    from oomkit.model.resolve import resolve

    assert sum(math.prod(t.shape) for t in resolve(model).weights.tensors) == safetensors_total


@pytest.mark.parametrize(("model", "safetensors_total"), [
    # DeepSeek-V2's routers have no score-correction bias (26 x 64 and 59 x 160 values the lists carried before)
    ("deepseek-ai/DeepSeek-V2-Lite", 15_706_484_224),  # HF safetensors 15,706,484,224 (catalog deepseek-v2-lite)
    ("deepseek-ai/DeepSeek-V2.5-1210", 235_741_434_880),  # HF safetensors 235,741,434,880 (catalog deepseek-v2.5-1210)
    # glm4moe: exp_probs_b, post_attention_norm, q/k norms only with use_qk_norm, and the MTP block with eh_proj /
    # enorm / hnorm / shared_head_norm and its own embed_tokens / shared_head_head copies
    ("zai-org/GLM-4.5-Air", 110_468_824_832),  # HF safetensors metadata of zai-org/GLM-4.5-Air (catalog glm-4.5-air)
    ("zai-org/GLM-4.7", 358_337_791_296),  # HF safetensors total of zai-org/GLM-4.7 (catalog glm-4.7; q/k/v biases)
    ("zai-org/GLM-4.7-Flash", 31_221_488_576),  # the safetensors table's 'parameter total' (catalog glm-4.7-flash)
    # Qwen3-VL's text_config model_type qwen3_vl_text is llama.cpp's qwen3vl (q/k norms); totals incl. the tower
    ("Qwen/Qwen3-VL-2B-Instruct", 2_127_532_032),  # Hugging Face parameter count of the repo (catalog)
    ("Qwen/Qwen3-VL-4B-Instruct", 4_437_815_808),
    ("Qwen/Qwen3-VL-8B-Instruct", 8_767_123_696),
    ("Qwen/Qwen3-VL-30B-A3B-Instruct", 31_070_754_032),
    # the multimodal Gemma 3 embedding's 262,208 rows (catalog gemma-3-12b-it: HF safetensors total, incl. SigLIP)
    ("google/gemma-3-12b-it", 12_187_325_040),
    # MiMo-7B's MTP layer with its input_proj and three norms (catalog mimo-7b-base: HF safetensors metadata)
    ("XiaomiMiMo/MiMo-7B-Base", 7_833_409_536),
])
def test_layer_lists_and_towers_count_every_published_parameter(model, safetensors_total):
    """The decoder's tensors (model/tensors.py, as llama.cpp's loaders take them) plus the vision tower
    (model/towers.py) add up to the checkpoints' published safetensors totals, to the parameter."""
    import math

    from oomkit.model.resolve import resolve

    spec = resolve(model)
    assert sum(math.prod(t.shape) for t in spec.weights.tensors) + sum(t.params for t in spec.towers) == \
        safetensors_total


def test_jamba_mamba_mixers_carry_dt_b_c_norms():
    """Jamba's Mamba mixers normalise dt, B and C (src/models/jamba.cpp load_arch_tensors: ssm_dt_norm {dt_rank},
    ssm_b_norm / ssm_c_norm {d_state}, required; transformers JambaMambaMixer dt_layernorm, b_layernorm,
    c_layernorm): 28 x 288 values. The list then equals transformers' JambaForCausalLM built from the config,
    51,570,323,328 parameters; the published safetensors total (51,570,323,456) is 128 above both, unexplained."""
    import math

    from oomkit.model.resolve import resolve

    spec = resolve("ai21labs/Jamba-v0.1")
    names = {t.name for t in spec.weights.tensors}
    assert {"blk.0.ssm_dt_norm.weight", "blk.0.ssm_b_norm.weight", "blk.0.ssm_c_norm.weight"} <= names
    assert "blk.4.ssm_dt_norm.weight" not in names  # layer 4 is attention
    assert sum(math.prod(t.shape) for t in spec.weights.tensors) == 51_570_323_328


def test_nemotron_h_shared_expert_is_ungated():
    """Nemotron-H's shared expert is up + down like its routed experts, and its router carries a score-correction
    bias (llama.cpp src/models/nemotron-h.cpp: ffn_up_shexp / ffn_down_shexp, ffn_exp_probs_b; no gate): the
    Nemotron 3 Nano BF16 checkpoint comes to its published 31,577,940,000 to within 1e-6 (a gated shared expert
    added 229 M parameters, +0.73%)."""
    import math

    from oomkit.model.resolve import resolve

    spec = resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert not any("gate_shexp" in t.name for t in spec.weights.tensors)
    total = sum(math.prod(t.shape) for t in spec.weights.tensors)
    assert abs(total - 31_577_940_000) / 31_577_940_000 < 1e-6


def test_mtp_vocab_copies_stay_out_of_vllms_drafter():
    """The MTP block's own embed_tokens / shared_head.head copies are in the layer list (the checkpoint and the GGUF
    hold them), but vLLM's drafter shares the target's ("Detected MTP model. Sharing target model embedding weights"
    / "... lm_head weights", llm_base_proposer.py load_model): with --speculative-config the weights grow by the
    next-n block less the two copies."""
    import oomkit
    from oomkit.model.resolve import resolve

    spec = resolve("zai-org/GLM-4.5-Air")
    copies = {t.name for t in spec.weights.tensors if ".nextn.embed_tokens" in t.name or "shared_head_head" in t.name}
    assert copies == {"blk.46.nextn.embed_tokens.weight", "blk.46.nextn.shared_head_head.weight"}
    got = [oomkit.estimate(spec, "vllm", gpu="H200", max_model_len=4096, num_speculative_tokens=n,
                           find_max_context=False).devices[0].weights_bytes for n in (0, 1)]
    kept = [t for t in spec.weights.tensors if t.layer == 46 and t.name not in copies]
    block = sum(t.nbytes for t in kept)
    shared = sum(t.nbytes for t in spec.weights.tensors if t.name in copies)
    # PyTorch's allocator holds each large tensor in whole 2 MiB segments (a tail of up to 1 MiB unsplit:
    # engines/vllm/weights.py segment_tail), far below the two shared copies
    assert 0 <= (got[1] - got[0]) - block <= len(kept) * 2**20 < shared


# Catalog models added from verbatim config.json copies (their entries' source), each against the total its card or
# Hugging Face page publishes
ADDED_MODELS = [
    # model card, "Ministral 8B Architecture": Parameters 8,019,808,256
    ("mistralai/Ministral-8B-Instruct-2410", 8_019_808_256),
    # no exact published total found: the layer list of block_configs (49 attention layers, 31 without), the card's
    # "49B" (a NAS derivative of Llama-3.3-70B-Instruct)
    ("nvidia/Llama-3_3-Nemotron-Super-49B-v1", 49_867_145_216),
]


@pytest.mark.parametrize(("model", "safetensors_total"), ADDED_MODELS)
def test_added_catalog_models_count_their_published_totals(model, safetensors_total):
    import math

    from oomkit.model.resolve import resolve

    spec = resolve(model)
    assert sum(math.prod(t.shape) for t in spec.weights.tensors) + sum(t.params for t in spec.towers) == \
        safetensors_total


@pytest.mark.parametrize("model", [m for m, _ in ADDED_MODELS])
def test_added_catalog_models_check_on_a_4090(model, capsys):
    """`oomkit check <model> --gpu "RTX 4090"` answers (0: fits, 1: does not) with the model's own name."""
    from oomkit.cli import main

    rc = main(["check", model, "--gpu", "RTX 4090"])
    out = capsys.readouterr().out
    assert rc in (0, 1) and catalog.lookup(model).name in out and "verdict:" in out


@pytest.mark.parametrize("slug", ["deepseek-v3.2", "glm-5", "minimax-m2", "chatglm3-6b", "seed-oss-36b-base"])
def test_a_model_type_the_engines_know_by_name_is_not_called_unknown(slug):
    """deepseek_v32, glm_moe_dsa and minimax_m2 stay under their config.json names (the engines key on them), and
    chatglm / seed_oss are llama.cpp architectures of the same name: none is 'not in the known list'."""
    from oomkit.model.resolve import resolve

    assert not [lb for lb in resolve(slug, tag_formats=False).labels if "known list" in lb]


def test_a_model_type_no_engine_keys_on_is_still_said_to_be_read_generically():
    from oomkit.model.resolve import resolve

    assert any("'opt' is not in the known list" in lb for lb in resolve("opt-125m", tag_formats=False).labels)
