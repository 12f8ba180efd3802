"""Kimi-Linear (model_type kimi_linear) config.json files are read into the layers a kimi-linear GGUF gives
(conversion/kimi_linear.py KimiLinearModel: head_count_kv 0 outside linear_attn_config.full_attn_layers, 1-based;
ssm.conv_kernel = short_conv_kernel_size; kda.head_dim = linear_attn_config.head_dim; src/models/kimi-linear.cpp
load_arch_tensors for the tensor shapes)."""

from __future__ import annotations

import json
import subprocess
import sys

from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind
from tests import ggufs
from tests.groundtruth import synth

# tests/ggufs.py kimi_linear(): Kimi-Linear-48B's widths on 4 layers (3 KDA, 1 MLA), 8 experts, vocabulary 32,000
CFG_4L = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "hidden_size": 2304,
          "num_hidden_layers": 4, "vocab_size": 32000, "num_attention_heads": 32, "num_key_value_heads": 32,
          "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
          "v_head_dim": 128, "num_experts": 8, "num_experts_per_token": 2, "num_shared_experts": 1,
          "moe_intermediate_size": 1024, "intermediate_size": 9216, "first_k_dense_replace": 1, "moe_layer_freq": 1,
          "max_position_embeddings": 8192, "tie_word_embeddings": False, "torch_dtype": "float16",
          "linear_attn_config": {"full_attn_layers": [4], "kda_layers": [1, 2, 3], "head_dim": 128, "num_heads": 32,
                                 "short_conv_kernel_size": 4}}


def _gguf():
    path = synth.synth_path(ggufs.ADDED_BUILDERS["kimi-linear"](), "f16")
    return path, read_gguf_spec(path)


def test_config_builds_the_gguf_layers_and_tensors():
    _, g = _gguf()
    c = spec_from_config(CFG_4L, "kimi-linear-4l")
    assert c.architecture == g.architecture == "kimi-linear"
    assert c.layers == g.layers  # KDA state sizes, MLA dims, dense / MoE FFNs field by field
    assert sorted((t.name, t.shape) for t in c.weights.tensors) == sorted((t.name, t.shape) for t in g.weights.tensors)
    assert (c.n_embd, c.n_vocab, c.n_ctx_train, c.tied_embeddings, c.n_nextn_layers) == \
        (g.n_embd, g.n_vocab, g.n_ctx_train, g.tied_embeddings, g.n_nextn_layers)


def _check(model: str, *extra: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", model, "--engine", "llama.cpp", "--gpu", "8x H200",
                        "--json", *extra], capture_output=True, text=True, timeout=240)
    assert p.returncode in (0, 1), p.stdout + p.stderr  # 1: does not fit (Kimi K3's 1.4 TB on 8x H200)
    return json.loads(p.stdout)


def test_check_on_the_config_equals_check_on_the_gguf(tmp_path):
    """oomkit check on 8x H200 under llama.cpp: the config (F16, as the GGUF) and the synthetic GGUF of the same
    shapes give the same KV, recurrent state, weights per device and totals."""
    path, _ = _gguf()
    (tmp_path / "config.json").write_text(json.dumps(CFG_4L))
    g, c = _check(str(path)), _check(str(tmp_path), "--quant", "F16")
    for key in ("kv_cache_bytes", "recurrent_state_bytes", "kv_bytes_per_token", "weights_bytes", "after_weights_bytes",
                "margin_bytes", "max_context_by_kv"):
        assert c[key] == g[key], key
    assert c["devices"] == g["devices"]
    for key in ("total_bytes", "weights_bytes", "kv_cache_bytes", "recurrent_state_bytes", "devices", "host"):
        assert c["estimate"][key] == g["estimate"][key], key
    assert c["recurrent_state_bytes"] > 0 and c["kv_cache_bytes"] > 0


def test_kimi_linear_48b_total_and_caches_by_hand():
    spec = resolve("moonshotai/Kimi-Linear-48B-A3B-Instruct")
    e, v, kda_p, hd, heads = 2304, 163840, 32 * 128, 128, 32
    kda = (3 * 4 * kda_p + 3 * e * kda_p + e * hd + hd * kda_p + e * heads + heads + kda_p + e * hd + hd * kda_p + hd
           + kda_p * e + e)
    mla = e * heads * 192 + e * 576 + 512 + 128 * 512 * heads + 512 * 128 * heads + heads * 128 * e + e
    dense = 3 * e * 9216 + e
    moe = e * 256 + 3 * e * 1024 * 256 + 256 + 3 * e * 1024 + e
    total = 2 * e * v + 20 * kda + 7 * mla + dense + 26 * moe + e
    assert total == 49_122_681_728
    assert sum(t.n_elements for t in spec.weights.tensors) == total
    kinds = [la.kind for la in spec.layers]
    assert [i + 1 for i, k in enumerate(kinds) if k is LayerKind.LATENT] == [4, 8, 12, 16, 20, 24, 27]
    assert kinds.count(LayerKind.RECURRENT) == 20
    s = spec.layers[0].recurrent
    assert (s.conv, s.ssm) == (3 * 3 * 128 * 32, 128 * 128 * 32)  # llama.cpp n_embd_r / n_embd_s, f32 cells
    out = _check("kimi-linear", "--ctx", "65536", "-np", "1")
    assert out["kv_bytes_per_token"] == 7 * 576 * 2  # 8,064 B: the MLA latent + rope key, f16
    assert out["recurrent_state_bytes"] == 20 * (36_864 + 524_288) * 4  # 44,892,160 B for the one sequence


# Kimi K3 (model_type kimi_k3 around a kimi_linear text_config): the synthetic kimi-k3 GGUF's shapes (tests/ggufs.py:
# kimi-linear's 4 layers with attention residuals, the full-rank KDA gate, no latent MoE, no q LoRA, no MLA gate)
def _k3_4l() -> dict:
    text = {**json.loads(json.dumps(CFG_4L)), "attn_res_block_size": 64, "hidden_act": "situ"}
    text["linear_attn_config"]["use_full_rank_gate"] = True
    return {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3", "text_config": text,
            "tie_word_embeddings": False}


def test_kimi_k3_config_builds_the_gguf_layers_and_tensors():
    g = read_gguf_spec(synth.synth_path(ggufs.ADDED_BUILDERS["kimi-k3"](), "f16"))
    c = spec_from_config(_k3_4l(), "kimi-k3-4l")
    assert c.architecture == g.architecture == "kimi-k3"
    assert c.layers == g.layers
    assert sorted((t.name, t.shape) for t in c.weights.tensors) == sorted((t.name, t.shape) for t in g.weights.tensors)


def test_kimi_k3_check_on_the_config_equals_check_on_the_gguf(tmp_path):
    path = synth.synth_path(ggufs.ADDED_BUILDERS["kimi-k3"](), "f16")
    (tmp_path / "config.json").write_text(json.dumps(_k3_4l()))
    g, c = _check(str(path)), _check(str(tmp_path), "--quant", "F16")
    for key in ("kv_cache_bytes", "recurrent_state_bytes", "kv_bytes_per_token", "weights_bytes", "devices"):
        assert c[key] == g[key], key
    for key in ("total_bytes", "weights_bytes", "kv_cache_bytes", "recurrent_state_bytes", "devices", "host"):
        assert c["estimate"][key] == g["estimate"][key], key


def test_kimi_k3_total_equals_the_tensor_listing():
    """moonshotai/Kimi-K3's config.json and tensor listing (code search id 62826164383). The listing's shapes, the
    MXFP4 experts unpacked (w1 / w3 [3072, 1792] bytes = 3072 x 3584 values, w2 [3584, 1536] = 3584 x 3072),
    sum to 2,779,484,478,208 text parameters; llama.cpp's converter (conversion/kimi_k3.py) folds each
    <x>_res_norm x <x>_res_proj pair into one score vector (93 x 2 pairs in the layers, one before the output) and
    keeps A_log's first num_attention_heads (96 of 128) values: 1,342,624 fewer, the total the config gives."""
    spec = resolve("moonshotai/Kimi-K3")
    h, v, p, lat, ffe = 7168, 163840, 12288, 3584, 3072
    listing = (2 * v * h  # embed_tokens, lm_head
               + 69 * (128 + 96 * h + p + 128 * h + p * 128 + 3 * p * 4 + 3 * p * h + 128)  # KDA: A_log .. v_proj
               + 93 * (4 * h + 2 * h + p * h + h * p)  # norms, res norms / projs, g_proj, o_proj
               + 3 * h * 33792  # layer 0's dense MLP
               + 92 * (896 * 3 * ffe * lat + 896 + 896 * h + lat * h + lat + h * lat + 3 * h * 6144)  # MoE
               + 24 * (512 + 576 * h + 24576 * 512 + 1536 + 1536 * h + 18432 * 1536)  # MLA with the q LoRA
               + 3 * h)  # norm, output_attn_res_norm, output_attn_res_proj
    assert listing == 2_779_484_478_208
    folded = 93 * 2 * h + h + 69 * (128 - 96)
    assert sum(t.n_elements for t in spec.weights.tensors) == listing - folded == 2_779_483_135_584
    assert spec.layers[1].ffn.n_embd_latent == lat and spec.layers[1].ffn.n_ff_shared == 6144
    out = _check("moonshotai/Kimi-K3", "--ctx", "65536", "-np", "1")
    assert out["kv_bytes_per_token"] == 24 * 576 * 2  # 27,648 B: the MLA latent + rope key, f16
    assert out["recurrent_state_bytes"] == 69 * (3 * 3 * 128 * 96 + 128 * 128 * 96) * 4  # 464,633,856 B


def test_vllm_kda_state_and_mla_page_by_hand():
    """vLLM (models/kimi_linear.py; layers/mamba/mamba_utils.py kda_state_shape / kda_state_dtype), TP1, bf16:
    a KDA layer keeps per request q, k and v conv states of (4 - 1) x 32 x 128 x 2 B = 24,576 B each and a
    32 x 128 x 128 recurrent state in float32 (2,097,152 B): 2,170,880 B. An MLA layer caches 576 x 2 = 1,152 B a
    token, so the attention block grows to 64 x cdiv(2,170,880, 64 x 1,152) = 1,920 tokens (page 2,211,840 B) and
    the KDA page is padded to it (HybridAttentionMambaModelConfig); 7 MLA + 20 KDA layers -> groups of 7: one
    attention group and 3 KDA groups, so a 32,768-token request holds cdiv(32768, 1920) + 3 = 21 blocks (+ 3 more
    from 0.28, prefix caching's align mode)."""
    from oomkit.engines.vllm import VllmSettings, kv_plan
    from oomkit.engines.vllm import resolve as vresolve
    from tests.test_vllm import H100

    spec = resolve("moonshotai/Kimi-Linear-48B-A3B-Instruct")
    s = VllmSettings(max_model_len=32768)
    plan = kv_plan(spec, s, vresolve(spec, (H100,), s))
    kda = [sp for sp in plan.layers.values() if sp.kind == "mamba"]
    mla = [sp for sp in plan.layers.values() if sp.kind != "mamba"]
    assert len(kda) == 20 and len(mla) == 7
    assert kda[0].state_bytes == 3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4 == 2_170_880
    assert mla[0].bytes_per_token == 576 * 2
    assert plan.block_size == 1920 and plan.page_bytes == 1920 * 1152 == 2_211_840
    assert plan.group_size == 7 and plan.n_groups == 4
    # from 0.28 prefix caching is on by default for hybrid models (engine/arg_utils.py), so mamba_cache_mode "align"
    # keeps two blocks in each KDA group: 18 + 3 x 2 = 24; 21 while it is opt-in (0.27)
    assert plan.blocks_per_request(32768, 8192) == -(-32768 // 1920) + 3 * 2 == 24
    s27 = VllmSettings(max_model_len=32768, engine_version="0.27.0")
    assert kv_plan(spec, s27, vresolve(spec, (H100,), s27)).blocks_per_request(32768, 8192) == 21
