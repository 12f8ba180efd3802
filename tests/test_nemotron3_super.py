"""NVIDIA Nemotron 3 Super 120B-A12B (model_type nemotron_h with LatentMoE and one MTP block).

Config: nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 config.json (the catalog entry, quoted verbatim publicly).
The routed experts work at moe_latent_size 1024 between fc1_latent_proj (4096 -> 1024) and fc2_latent_proj
(1024 -> 4096): transformers / vLLM nemotron_h.py LatentMoE / NemotronHMoE, llama.cpp src/models/nemotron-h.cpp
load_arch_tensors (ffn_latent_down {n_embd, moe_n_embd}, ffn_up_exps {moe_n_embd, n_ff_exp, n_expert}), mlx-lm
models/nemotron_h.py (fc1_latent_proj / fc2_latent_proj). Read at hidden_size the 40 x 512 experts alone made 451B
and the model 470B. The MTP block (mtp_hybrid_override_pattern "*E") is one attention + one MoE sub-layer, which
llama.cpp folds into a single trailing block (nemotron-h.cpp: "each predict layer folds an attention sub-layer and a
MoE sub-layer into a single trailing block": nextn.eh_proj / enorm / hnorm / shared_head_norm, attn_post_norm).
"""

from __future__ import annotations

import pytest

from oomkit import estimate
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind

HF = "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"
H, V, LATENT, FF_EXP, FF_SH, N_EXP = 4096, 131072, 1024, 2688, 5376, 512


@pytest.fixture(scope="module")
def spec():
    return resolve(HF)


def test_layer_reading(spec):
    trunk = spec.trunk_layers
    assert spec.n_nextn_layers == 1 and len(trunk) == 88
    kinds = [la.kind for la in trunk]
    assert kinds.count(LayerKind.RECURRENT) == 40 and kinds.count(LayerKind.FULL) == 8
    moe = [la for la in trunk if la.ffn.is_moe]
    assert len(moe) == 40 and all(la.kind is LayerKind.NONE for la in moe)
    f = moe[0].ffn
    assert (f.n_experts, f.n_experts_used, f.n_ff_expert, f.n_ff_shared, f.n_embd_latent) == (
        N_EXP, 22, FF_EXP, FF_SH, LATENT)
    shapes = {t.name: t.shape for t in spec.weights.tensors if t.layer == 1}
    assert shapes["blk.1.ffn_latent_down.weight"] == (H, LATENT)
    assert shapes["blk.1.ffn_latent_up.weight"] == (LATENT, H)
    assert shapes["blk.1.ffn_up_exps.weight"] == (LATENT, FF_EXP, N_EXP)
    assert shapes["blk.1.ffn_down_exps.weight"] == (FF_EXP, LATENT, N_EXP)
    assert shapes["blk.1.ffn_gate_inp.weight"] == (H, N_EXP)  # the router reads the hidden state
    assert shapes["blk.1.ffn_up_shexp.weight"] == (H, FF_SH)  # the shared expert too
    assert not any("gate_exps" in n or "gate_shexp" in n for n in shapes)  # relu2: up + down only
    mtp = spec.layers[88]
    assert mtp.kind is LayerKind.FULL and mtp.attention.n_kv_heads == 2 and mtp.ffn.n_embd_latent == LATENT
    names = {t.name for t in spec.weights.tensors if t.layer == 88}
    assert {"blk.88.nextn.eh_proj.weight", "blk.88.post_attention_norm.weight", "blk.88.attn_q.weight",
            "blk.88.ffn_up_exps.weight"} <= names


def test_parameter_totals_by_hand(spec):
    mamba = (H * (2 * 8192 + 2 * 8 * 128 + 128) + 4 * 10240 + 10240 + 3 * 128 + 8192 + 8192 * H + H)
    attn = H + H * 4096 + 2 * H * 256 + 4096 * H
    moe = (H + H * N_EXP + N_EXP + 2 * H * LATENT + 2 * N_EXP * LATENT * FF_EXP + 2 * H * FF_SH)
    trunk = 2 * V * H + H + 40 * mamba + 8 * attn + 40 * moe
    mtp = attn + moe + 2 * H * H + 3 * H
    assert trunk == 120_668_707_840  # model card: "120B total"
    assert trunk + mtp == spec.params_total == 123_611_033_088  # the Hugging Face safetensors total
    # ~12B active (model card: A12B): 22 of 512 routed experts per MoE layer, the MTP block left out
    assert spec.params_active == trunk - 40 * 2 * (N_EXP - 22) * LATENT * FF_EXP == 12_770_237_440


def test_nano_keeps_full_width_experts():
    s = resolve("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert all(la.ffn.n_embd_latent == 0 for la in s.layers)
    assert not any("latent" in t.name for t in s.weights.tensors)


# K and V rows of the 8 attention layers (2 KV heads of 128, 16-bit); the 40 Mamba-2 layers hold a fixed state:
# conv (conv_kernel - 1) x (d_inner 8192 + 2 x n_groups 8 x d_state 128 = 10,240), SSM 128 heads x 64 x 128
KV_ROW = 8 * 2 * 2 * 128 * 2
CONV, SSM = 3 * 10240, 128 * 64 * 128


def test_llamacpp_kv_and_state():
    # llama_kv_cache (F16 K/V, trunk attention layers only) and llama_memory_recurrent: r (conv) and s (SSM) in F32,
    # one cell per sequence (n_seq_max 4, llama-server's default --parallel)
    r = estimate(HF, "llama.cpp", gpu="8x H200", n_ctx=8192, find_max_context=False).to_dict()
    assert r["kv_bytes_per_token"] == KV_ROW == 8192
    assert r["kv_cache_bytes"] == 8192 * KV_ROW
    assert r["recurrent_state_bytes"] == 4 * 40 * (CONV + SSM) * 4


def test_vllm_kv_per_token():
    r = estimate(HF, "vllm", gpu="H200", max_model_len=8192, find_max_context=False).to_dict()
    assert r["kv_bytes_per_token_marginal"] == KV_ROW


def test_sglang_state_per_request():
    # mamba_cache_per_req: conv in the model dtype (bf16), temporal in mamba_ssm_cache_dtype float32
    # (mamba_utils.py / memory_pool.py MambaPool; the figure SGLang prints when a GPU cannot hold it: one B300 at
    # TP 1 and --mem-fraction-static 0.84 leaves 0.18 GB after the 241 GB of weights; on one H100 the weights
    # themselves do not load: a CUDA OOM in load_model, before any pool)
    d = estimate(HF, "sglang", gpu="B300", context_length=8192, mem_fraction_static=0.84,
                 find_max_context=False).to_dict()
    assert d["kv_bytes_per_token_marginal"] == KV_ROW
    per_req = 40 * (CONV * 2 + SSM * 4)
    assert per_req == 170_229_760
    assert f"mamba_cache_per_req={per_req / 2**20:.2f} MB" in d["engine_view"]["error"]


def test_transformers_state():
    # transformers' NemotronH cache: conv_states (batch, conv_dim, conv_kernel) in the model dtype, ssm_states fp32
    r = estimate(HF, "transformers", gpu="8x H200", find_max_context=False).to_dict()
    assert r["kv_bytes_per_token"] == KV_ROW
    assert r["recurrent_state_bytes"] == 40 * (4 * 10240 * 2 + SSM * 4)


def test_cli_check_by_name():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "nemotron-3-super", "--engine", "vllm", "--gpu",
                        "8x H100"], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    assert "NVIDIA Nemotron 3 Super" in p.stdout or "nemotron" in p.stdout.lower()
