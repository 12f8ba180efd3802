"""Small real-shaped GGUFs for tests that need a file (header written with `gguf`, data a sparse hole)."""

from pathlib import Path

from tests.groundtruth import synth


def write_llama_gguf(path: Path, n_layers: int = 2, recipe: str = "q4_0") -> Path:
    """A Llama-3-8B-shaped GGUF with `n_layers` blocks."""
    return synth.write_gguf(synth.llama3_8b(n_layers=n_layers), path, recipe)


# ----------------------------------------------------------------------------------------------------------
# Architectures beyond tests/groundtruth/synth.py's set, each as llama.cpp's loader wants it (tensor names from
# gguf-py's MODEL_TENSORS for the arch, shapes from the arch's load_tensors in llama.cpp@0c1e57098). Dimensions
# are the published checkpoint's, cited per builder; layer counts are the caller's (the pattern kept whole).
# ----------------------------------------------------------------------------------------------------------

from tests.groundtruth.synth import (  # noqa: E402  (the shared helpers, after the small writer above)
    VT,
    SynthModel,
    Tensor,
    _attn_gqa,
    _blk,
    _embeddings,
    _ffn_dense,
    _ffn_moe,
    _layers,
    _Meta,
)
from tests.groundtruth.synth import deepseek_v3 as synth_deepseek_v3  # noqa: E402


def _model(key: str, arch: str, source: str, n_vocab: int, nl: int, md: _Meta, ts: list[Tensor], tied: bool,
           **dims) -> SynthModel:
    return SynthModel(key, arch, source, n_vocab, nl, tuple(md.items), tuple(ts), tied_embeddings=tied, dims=dims)


def llama4_scout(n_layers: int | None = None) -> SynthModel:
    """Llama 4 Scout 17B-16E: meta-llama/Llama-4-Scout-17B-16E-Instruct text_config: hidden 5120, 48 layers,
    40 heads / 8 KV heads (head 128), 16 experts (1 used, expert FFN 8192) and a shared expert in every layer
    (interleave_moe_layer_step 1), dense FFN 16384, vocab 202048, attention_chunk_size 8192, every 4th layer
    global (no RoPE). llama.cpp src/models/llama4.cpp: n_swa 8192, set_swa_pattern(4), LLAMA_SWA_TYPE_CHUNKED."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "llama4", 5120, 40, 8, 128, 202048
    n_exp, n_ff_exp, n_ff = 16, 8192, 16384
    nl = _layers(n_layers, 48)
    md = _Meta(arch).base(ctx=10485760, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=500000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd).u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", 1).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("interleave_moe_layer_step", 1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd) + [_blk(i, "ffn_norm.weight", n_embd)]
        ts += _ffn_moe(i, n_embd, n_ff_exp, n_exp)
        ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp), _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd),
               _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
    return _model("llama4-scout", arch, "meta-llama/Llama-4-Scout-17B-16E-Instruct config.json", n_vocab, nl, md, ts,
                  False, n_swa=8192)


def gemma3n_e2b(n_layers: int | None = None) -> SynthModel:
    """Gemma 3n E2B: google/gemma-3n-E2B-it text_config: hidden 2048, 30 layers, 8 heads / 2 KV heads
    (head 256), intermediate 8192, vocab 262144, sliding_window 512 (4 sliding : 1 full), per-layer inputs of
    256, AltUp 4, LAuReL rank 64, num_kv_shared_layers 10. llama.cpp src/models/gemma3n.cpp: set_swa_pattern(5)
    and n_layer_kv_from_start = 20 (hard-coded), so a file needs more than 20 layers to have shared-KV layers."""
    return _gemma3n("gemma3n-e2b", "google/gemma-3n-E2B-it text_config", _layers(n_layers, 30), 8192, 10)


def gemma3n_e4b(n_layers: int | None = None) -> SynthModel:
    """Gemma 3n E4B: google/gemma-3n-E4B-it text_config (src/oomkit/model/catalog/data/gemma-3n-e4b-it.json): hidden
    2048, 35 layers, 8 heads / 2 KV heads (head 256), intermediate 16384, sliding window 512 (4 sliding : 1 full),
    per-layer inputs of 256, num_kv_shared_layers 15 (llama.cpp: n_layer_kv_from_start = 20), AltUp 4, LAuReL 64;
    the GGUF's vocabulary of 262144 as gemma3n_e2b's."""
    nl = _layers(n_layers, 35)
    return _gemma3n("gemma3n-e4b", "google/gemma-3n-E4B-it text_config", nl, 16384, max(nl - 20, 0))


def _gemma3n(name: str, source: str, nl: int, n_ff: int, shared_kv: int) -> SynthModel:
    """A Gemma 3n file: the tensors and keys src/models/gemma3n.cpp loads (AltUp, LAuReL, per-layer inputs)."""
    arch, n_embd, n_head, n_kv, hd, n_vocab, n_swa = "gemma3n", 2048, 8, 2, 256, 262144, 512
    n_altup, laurel, n_embd_altup = 4, 64, 256
    md = _Meta(arch).base(ctx=32768, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("attention.sliding_window", n_swa)
    md.u32("embedding_length_per_layer_input", n_embd_altup).u32("altup.num_inputs", n_altup)
    md.u32("altup.active_idx", 0).u32("attention.shared_kv_layers", shared_kv)
    md.f32("final_logit_softcapping", 30.0)
    md.items.append((f"{arch}.activation_sparsity_scale", [1.6448] * min(nl, 10) + [0.0] * max(nl - 10, 0),
                     (VT.ARRAY, VT.FLOAT32)))
    md.items.append((f"{arch}.attention.sliding_window_pattern", [i % 5 < 4 for i in range(nl)],
                     (VT.ARRAY, VT.BOOL)))
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("per_layer_token_embd.weight", (n_embd_altup * nl, n_vocab)),
          Tensor("per_layer_model_proj.weight", (n_embd, n_embd_altup * nl)),
          Tensor("per_layer_proj_norm.weight", (n_embd_altup,)),
          Tensor("altup_proj.weight", (n_embd, n_embd, n_altup - 1)),
          Tensor("altup_unembd_proj.weight", (n_embd, n_embd, n_altup - 1))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)] + _ffn_dense(i, n_embd, n_ff)
        ts += [_blk(i, "post_ffw_norm.weight", n_embd),
               _blk(i, "inp_gate.weight", n_embd, n_embd_altup), _blk(i, "proj.weight", n_embd_altup, n_embd),
               _blk(i, "post_norm.weight", n_embd),
               _blk(i, "altup_correct_coef.weight", n_altup, n_altup), _blk(i, "altup_correct_scale.weight", n_embd),
               _blk(i, "altup_predict_coef.weight", n_altup, n_altup * n_altup),
               _blk(i, "altup_router.weight", n_embd, n_altup), _blk(i, "altup_router_norm.weight", n_embd),
               _blk(i, "laurel_l.weight", n_embd, laurel), _blk(i, "laurel_r.weight", laurel, n_embd),
               _blk(i, "laurel_post_norm.weight", n_embd)]
    return _model(name, arch, source, n_vocab, nl, md, ts, True, n_swa=n_swa)




def glm45_air(n_layers: int | None = None) -> SynthModel:
    """GLM-4.5-Air: zai-org/GLM-4.5-Air config.json: hidden 4096, 46 layers + 1 MTP layer
    (num_nextn_predict_layers 1), 96 heads / 8 KV heads (head 128, partial rotary 0.5), q/k/v bias, 128 routed
    experts (8 used, 1408 each), 1 shared expert, first_k_dense_replace 1 (dense 10944), vocab 151552.
    `n_layers` counts the trunk; the MTP block is appended as the converter writes it (block_count = trunk + 1)."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "glm4moe", 4096, 96, 8, 128, 151552
    n_exp, n_used, n_ff_exp, n_ff = 128, 8, 1408, 10944
    trunk = _layers(n_layers, 46)
    nl = trunk + 1
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd // 2).u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_count", 1).u32("leading_dense_block_count", 1).f32("expert_weights_scale", 1.0)
    md.bool("expert_weights_norm", True).u32("expert_gating_func", 2).u32("nextn_predict_layers", 1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)]
        if i == 0:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, n_ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp), _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd),
                   _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
        if i == nl - 1:  # the MTP block's own tensors (convert_hf_to_gguf Glm4MoeModel)
            ts += [_blk(i, "nextn.eh_proj.weight", 2 * n_embd, n_embd), _blk(i, "nextn.enorm.weight", n_embd),
                   _blk(i, "nextn.hnorm.weight", n_embd), _blk(i, "nextn.shared_head_norm.weight", n_embd)]
    return _model("glm-4.5-air", arch, "zai-org/GLM-4.5-Air config.json", n_vocab, nl, md, ts, False)


def lfm2_1_2b(n_layers: int | None = None) -> SynthModel:
    """LFM2-1.2B: LiquidAI/LFM2-1.2B config.json: hidden 2048, 16 layers (attention at 2, 5, 8, 10, 12, 14;
    short convolutions elsewhere, conv_L_cache 3), 32 heads / 8 KV heads (head 64), FFN 8192 (block_ff_dim 12288
    auto-adjusted), vocab 65536, tied. convert_hf_to_gguf LFM2Model writes head_count_kv per layer (0 = conv)
    and shortconv.l_cache, no ssm.* keys."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab, l_cache = "lfm2", 2048, 32, 8, 64, 8192, 65536, 3
    nl = _layers(n_layers, 16)
    attn = {2, 5, 8, 10, 12, 14} if nl == 16 else {i for i in range(nl) if i % 3 == 2}
    md = _Meta(arch)
    md.u32("context_length", 128000).u32("embedding_length", n_embd).u32("block_count", nl)
    md.u32("feed_forward_length", n_ff).u32("attention.head_count", n_head).u32("vocab_size", n_vocab)
    md.items.append((f"{arch}.attention.head_count_kv", [n_kv if i in attn else 0 for i in range(nl)],
                     (VT.ARRAY, VT.UINT32)))
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 1000000.0).u32("shortconv.l_cache", l_cache)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("token_embd_norm.weight", (n_embd,))]
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd)]
        if i in attn:
            ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)[1:]
        else:
            ts += [_blk(i, "shortconv.conv.weight", l_cache, n_embd), _blk(i, "shortconv.in_proj.weight", n_embd, 3 * n_embd),
                   _blk(i, "shortconv.out_proj.weight", n_embd, n_embd)]
        ts += _ffn_dense(i, n_embd, n_ff)
    return _model("lfm2-1.2b", arch, "LiquidAI/LFM2-1.2B config.json", n_vocab, nl, md, ts, True, attn=sorted(attn))


def ernie45_21b_a3b(n_layers: int | None = None) -> SynthModel:
    """ERNIE-4.5-21B-A3B: baidu/ERNIE-4.5-21B-A3B-PT config.json: hidden 2560, 28 layers (layer 0 dense, 12288),
    20 heads / 4 KV heads (head 128), 64 experts (6 used, 1536 each), 2 shared experts, vocab 103424, tied."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "ernie4_5-moe", 2560, 20, 4, 128, 103424
    n_exp, n_used, n_ff_exp, n_ff, n_shared = 64, 6, 1536, 12288, 2
    nl = _layers(n_layers, 28)
    md = _Meta(arch).base(ctx=131072, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=500000.0, n_vocab=n_vocab)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_count", n_shared).u32("leading_dense_block_count", 1).u32("interleave_moe_layer_step", 1)
    md.u32("expert_shared_feed_forward_length", n_ff_exp * n_shared)  # convert_hf_to_gguf Ernie4_5MoeModel
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd)
        if i == 0:
            ts += _ffn_dense(i, n_embd, n_ff)
        else:
            ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
            ts += [_blk(i, "exp_probs_b.bias", n_exp)]
            sh = n_ff_exp * n_shared
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, sh), _blk(i, "ffn_down_shexp.weight", sh, n_embd),
                   _blk(i, "ffn_up_shexp.weight", n_embd, sh)]
    return _model("ernie-4.5-21b-a3b", arch, "baidu/ERNIE-4.5-21B-A3B-PT config.json", n_vocab, nl, md, ts, True)


def seed_oss_36b(n_layers: int | None = None) -> SynthModel:
    """Seed-OSS-36B: ByteDance-Seed/Seed-OSS-36B-Instruct config.json: hidden 5120, 64 layers, 80 heads / 8 KV
    heads (head 128), q/k/v bias, intermediate 27648, vocab 155136, max_position_embeddings 524288, untied."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "seed_oss", 5120, 80, 8, 128, 27648, 155136
    nl = _layers(n_layers, 64)
    md = _Meta(arch).base(ctx=524288, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=10000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, bias=True)
        ts += [_blk(i, "post_attention_norm.weight", n_embd)] + _ffn_dense(i, n_embd, n_ff, norm=False)
    return _model("seed-oss-36b", arch, "ByteDance-Seed/Seed-OSS-36B-Instruct config.json", n_vocab, nl, md, ts, False)


def minimax_m2(n_layers: int | None = None) -> SynthModel:
    """MiniMax-M2: MiniMaxAI/MiniMax-M2 config.json: hidden 3072, 62 layers, 48 heads / 8 KV heads (head 128,
    rotary 64), q/k RMSNorm over all heads, 256 experts (8 used, 1536 each), sigmoid router with a score bias,
    vocab 200064, max_position_embeddings 196608, untied."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "minimax-m2", 3072, 48, 8, 128, 200064
    n_exp, n_used, n_ff_exp = 256, 8, 1536
    nl = _layers(n_layers, 62)
    md = _Meta(arch).base(ctx=196608, n_embd=n_embd, n_layers=nl, n_ff=n_ff_exp, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=5000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", 64)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_gating_func", 2)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd)
        ts += [_blk(i, "attn_q_norm.weight", n_head * hd), _blk(i, "attn_k_norm.weight", n_kv * hd)]
        ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
        ts += [_blk(i, "exp_probs_b.bias", n_exp)]
    return _model("minimax-m2", arch, "MiniMaxAI/MiniMax-M2 config.json", n_vocab, nl, md, ts, False)


def hunyuan_a13b(n_layers: int | None = None) -> SynthModel:
    """Hunyuan-A13B: tencent/Hunyuan-A13B-Instruct config.json: hidden 4096, 32 layers, 32 heads / 8 KV heads
    (head 128), q/k norm, 64 experts (8 used, 3072 each), 1 shared expert (3072), vocab 128167, tied."""
    arch, n_embd, n_head, n_kv, hd, n_vocab = "hunyuan-moe", 4096, 32, 8, 128, 128167
    n_exp, n_used, n_ff_exp = 64, 8, 3072
    nl = _layers(n_layers, 32)
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=nl, n_ff=n_ff_exp, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=11158840.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", n_ff_exp)
    md.u32("expert_shared_feed_forward_length", n_ff_exp)
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "ffn_norm.weight", n_embd)] + _ffn_moe(i, n_embd, n_ff_exp, n_exp)
        ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_exp), _blk(i, "ffn_down_shexp.weight", n_ff_exp, n_embd),
               _blk(i, "ffn_up_shexp.weight", n_embd, n_ff_exp)]
    return _model("hunyuan-a13b", arch, "tencent/Hunyuan-A13B-Instruct config.json", n_vocab, nl, md, ts, True)


def hunyuan_7b(n_layers: int | None = None) -> SynthModel:
    """Hunyuan-7B: tencent/Hunyuan-7B-Instruct config.json: hidden 4096, 32 layers, 32 heads / 8 KV heads
    (head 128), q/k norm, intermediate 14336, vocab 128256, tied."""
    arch, n_embd, n_head, n_kv, hd, n_ff, n_vocab = "hunyuan-dense", 4096, 32, 8, 128, 14336, 128256
    nl = _layers(n_layers, 32)
    md = _Meta(arch).base(ctx=262144, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", hd)
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd) + _ffn_dense(i, n_embd, n_ff)
    return _model("hunyuan-7b", arch, "tencent/Hunyuan-7B-Instruct config.json", n_vocab, nl, md, ts, True)


# ----------------------------------------------------------------------------------------------------------
# The sweep: architectures of llama.cpp's list that share an existing family's cache rules (plain GQA caches,
# or none for the diffusion decoders). Each file carries one generic Llama-2-7B-like shape (hidden 4096, 32 heads
# / 8 KV heads of 128, FFN 11008, vocab 32000, 2 layers), not the architecture's own checkpoint: the tensor set is
# what llama.cpp@0c1e57098's loader asks for (found by loading and reading its "tensor not found" / "wrong
# shape; expected" / "key not found" lines), shapes as it expects them for those dimensions.
# ----------------------------------------------------------------------------------------------------------

SWEEP_DIMS = dict(n_embd=4096, n_head=32, n_kv=8, n_ff=11008, n_vocab=32000, n_layers=2)
# arch -> (extra metadata (key, value, GGUFValueType id), tensor name pattern -> shape in ggml order)
SWEEP = {
    'ernie4_5': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'xverse': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'exaone': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'qwen': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 5504), 'blk.{i}.ffn_down.weight': (5504, 4096), 'blk.{i}.ffn_gate.weight': (4096, 5504), 'blk.{i}.attn_qkv.weight': (4096, 12288), 'blk.{i}.attn_qkv.bias': (12288,)},
    ),
    'mpt': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.attn_qkv.weight': (4096, 6144)},
    ),
    'bloom': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_qkv.bias': (6144,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'refact': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'codeshell': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'olmo': (
        [],
        {'token_embd.weight': (4096, 32000), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'nemotron': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,)},
    ),
    'arcee': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096)},
    ),
    'jais': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_qkv.bias': (6144,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_gate.bias': (11008,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'maincoder': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
    'nanbeige': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'pangu-embedded': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_output.bias': (4096,)},
    ),
    'gptneox': (
        [('gptneox.use_parallel_residual', False, 7)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_qkv.bias': (6144,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'apertus': (
        [('xielu.alpha_n', 1.0, 6), ('xielu.alpha_p', 1.0, 6), ('xielu.beta', 1.0, 6), ('xielu.eps', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,)},
    ),
    'talkie': (
        [('talkie.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output.weight': (4096, 32000), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_q_norm.weight': (1, 32), 'blk.{i}.layer_output_scale.weight': (1,)},
    ),
    'chameleon': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_q_norm.weight': (128, 32), 'blk.{i}.attn_k_norm.weight': (128, 8)},
    ),
    'cogvlm': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_qkv.weight': (4096, 12288), 'blk.{i}.vis_attn_qkv.weight': (4096, 12288), 'blk.{i}.vis_attn_output.weight': (4096, 4096), 'blk.{i}.vis_gate.weight': (4096, 11008), 'blk.{i}.vis_down.weight': (11008, 4096), 'blk.{i}.vis_up.weight': (4096, 11008)},
    ),
    'hrm_text': (
        [('hrm_text.hrm.layers_per_stack', 1, 4), ('hrm_text.hrm.h_cycles', 1, 4), ('hrm_text.hrm.l_cycles', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'hrm.z_l_init': (4096,), 'blk.{i}.attn_gate.weight': (4096, 4096)},
    ),
    'jais2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,), 'blk.{i}.ffn_down.bias': (4096,)},
    ),
    'openelm': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,)},
    ),
    'plamo': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'plamo3': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.post_attention_norm': (4096,), 'blk.{i}.post_ffw_norm': (4096,)},
    ),
    'dream': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'llada': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
}

# MoE decoders of the same kind: 8 experts of 2048, 2 used per token
SWEEP.update({
    'bailingmoe': (
        [('bailingmoe.expert_count', 8, 4), ('bailingmoe.expert_used_count', 2, 4), ('bailingmoe.expert_feed_forward_length', 2048, 4), ('bailingmoe.expert_shared_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)},
    ),
    'mellum': (
        [('mellum.expert_count', 8, 4), ('mellum.expert_used_count', 2, 4), ('mellum.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
    'grovemoe': (
        [('grovemoe.expert_count', 8, 4), ('grovemoe.expert_used_count', 2, 4), ('grovemoe.expert_feed_forward_length', 2048, 4), ('grovemoe.expert_group_scale', 1.0, 6), ('grovemoe.experts_per_group', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.ffn_gate_chexps.weight': (4096, 128, 8), 'blk.{i}.ffn_down_chexps.weight': (128, 4096, 8), 'blk.{i}.ffn_up_chexps.weight': (4096, 128, 8)},
    ),
    'rnd1': (
        [('rnd1.expert_count', 8, 4), ('rnd1.expert_used_count', 2, 4), ('rnd1.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
    'llada-moe': (
        [('llada-moe.expert_count', 8, 4), ('llada-moe.expert_used_count', 2, 4), ('llada-moe.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,)},
    ),
})
# Sliding-window decoders whose GGUF carries the per-layer pattern (4 layers: 3 sliding of 4096, 1 full)
SWEEP.update({
    'granite_swa': (
        [('granite_swa.attention.sliding_window', 4096, 4), ('granite_swa.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('granite_swa.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_sinks.weight': (32,)},
    ),
    'spark2_5': (
        [('spark2_5.attention.sliding_window', 4096, 4), ('spark2_5.attention.sliding_window_pattern', [True, True, True, False], 'BOOL')],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_gate.weight': (4096, 32)},
    ),
    'step35': (
        [('step35.attention.sliding_window', 4096, 4), ('step35.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('step35.expert_feed_forward_length', 64, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'muse-glimmer': (
        [('muse-glimmer.attention.sliding_window', 4096, 4), ('muse-glimmer.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('muse-glimmer.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_gate.weight': (4096, 4096), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'exaone-moe': (
        [('exaone-moe.expert_count', 8, 4), ('exaone-moe.expert_used_count', 2, 4), ('exaone-moe.expert_feed_forward_length', 2048, 4), ('exaone-moe.attention.sliding_window', 4096, 4), ('exaone-moe.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('exaone-moe.expert_gating_func', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)},
    ),
})
SWEEP_LAYERS = {"granite_swa": 4, "spark2_5": 4, "step35": 4, "muse-glimmer": 4, "exaone-moe": 4}
# more of the same kinds (mimo2: MoE with a GGUF sliding-window pattern)
SWEEP.update({
    'hunyuan_vl': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
    'bailingmoe2': (
        [('bailingmoe2.expert_count', 8, 4), ('bailingmoe2.expert_used_count', 2, 4), ('bailingmoe2.expert_feed_forward_length', 2048, 4), ('bailingmoe2.expert_shared_count', 1, 4), ('bailingmoe2.expert_gating_func', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)},
    ),
    'llama-embed': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'mimo2': (
        [('mimo2.expert_count', 8, 4), ('mimo2.expert_used_count', 2, 4), ('mimo2.expert_feed_forward_length', 2048, 4), ('mimo2.attention.sliding_window', 4096, 4), ('mimo2.attention.sliding_window_pattern', [True, True, True, False], 'BOOL')],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8)},
    ),
})
SWEEP_LAYERS["mimo2"] = 4
# cohere2moe: layer 0 dense (leading_dense_block_count 1), MoE after; GGUF sliding-window pattern
SWEEP.update({
    'cohere2moe': (
        [('cohere2moe.expert_count', 8, 4), ('cohere2moe.expert_used_count', 2, 4), ('cohere2moe.expert_feed_forward_length', 2048, 4), ('cohere2moe.attention.sliding_window', 4096, 4), ('cohere2moe.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('cohere2moe.logit_scale', 1.0, 6), ('cohere2moe.leading_dense_block_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.1.ffn_gate_inp.weight': (4096, 8), 'blk.2.ffn_gate_inp.weight': (4096, 8), 'blk.3.ffn_gate_inp.weight': (4096, 8), 'blk.1.ffn_up_exps.weight': (4096, 2048, 8), 'blk.2.ffn_up_exps.weight': (4096, 2048, 8), 'blk.3.ffn_up_exps.weight': (4096, 2048, 8), 'blk.1.ffn_down_exps.weight': (2048, 4096, 8), 'blk.2.ffn_down_exps.weight': (2048, 4096, 8), 'blk.3.ffn_down_exps.weight': (2048, 4096, 8), 'blk.1.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.2.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.3.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.0.ffn_gate.weight': (4096, 11008), 'blk.0.ffn_down.weight': (11008, 4096), 'blk.0.ffn_up.weight': (4096, 11008)},
    ),
})
SWEEP_LAYERS["cohere2moe"] = 4

# grok (flash attention forced off), dots1 (its graph reshapes K and V with n_head: the file needs n_head_kv ==
# n_head, as dots.llm1 has), afmoe (GGUF sliding-window pattern, a leading dense layer), smallthinker (window
# 4096 and a dense-first pattern of 4 set by the loader: 6 layers give 2 full), minicpm3 (low-rank attention with
# a decompressed cache: MiniCPM3-4B's hidden 2560, 40 heads, q/kv lora 768/256, key 96 = 64 + 32 rope, value 64)
SWEEP.update({
    'grok': (
        [('grok.expert_count', 8, 4), ('grok.expert_used_count', 2, 4), ('grok.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'dots1': (
        [('dots1.expert_count', 8, 4), ('dots1.expert_used_count', 2, 4), ('dots1.expert_feed_forward_length', 2048, 4), ('dots1.expert_gating_func', 2, 4), ('dots1.expert_shared_count', 1, 4), ('dots1.leading_dense_block_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.0.ffn_up.weight': (4096, 11008), 'blk.0.ffn_down.weight': (11008, 4096), 'blk.0.ffn_gate.weight': (4096, 11008), 'blk.1.ffn_gate_inp.weight': (4096, 8), 'blk.1.ffn_up_exps.weight': (4096, 2048, 8), 'blk.1.ffn_down_exps.weight': (2048, 4096, 8), 'blk.1.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.1.ffn_gate_shexp.weight': (4096, 2048), 'blk.1.ffn_down_shexp.weight': (2048, 4096), 'blk.1.ffn_up_shexp.weight': (4096, 2048)},
    ),
    'afmoe': (
        [('afmoe.expert_count', 8, 4), ('afmoe.expert_used_count', 2, 4), ('afmoe.expert_feed_forward_length', 2048, 4), ('afmoe.expert_gating_func', 2, 4), ('afmoe.expert_shared_count', 1, 4), ('afmoe.leading_dense_block_count', 1, 4), ('afmoe.attention.sliding_window', 2048, 4), ('afmoe.attention.sliding_window_pattern', [True, True, True, False], 'BOOL')],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.0.ffn_up.weight': (4096, 11008), 'blk.0.ffn_down.weight': (11008, 4096), 'blk.0.ffn_gate.weight': (4096, 11008), 'blk.1.ffn_gate_inp.weight': (4096, 8), 'blk.1.ffn_up_exps.weight': (4096, 2048, 8), 'blk.1.ffn_down_exps.weight': (2048, 4096, 8), 'blk.1.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.2.ffn_gate_inp.weight': (4096, 8), 'blk.2.ffn_up_exps.weight': (4096, 2048, 8), 'blk.2.ffn_down_exps.weight': (2048, 4096, 8), 'blk.2.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.3.ffn_gate_inp.weight': (4096, 8), 'blk.3.ffn_up_exps.weight': (4096, 2048, 8), 'blk.3.ffn_down_exps.weight': (2048, 4096, 8), 'blk.3.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_gate.weight': (4096, 4096), 'blk.{i}.post_ffw_norm.weight': (4096,), 'blk.1.exp_probs_b.bias': (8,), 'blk.1.ffn_gate_shexp.weight': (4096, 2048), 'blk.1.ffn_down_shexp.weight': (2048, 4096), 'blk.1.ffn_up_shexp.weight': (4096, 2048), 'blk.2.exp_probs_b.bias': (8,), 'blk.2.ffn_gate_shexp.weight': (4096, 2048), 'blk.2.ffn_down_shexp.weight': (2048, 4096), 'blk.2.ffn_up_shexp.weight': (4096, 2048), 'blk.3.exp_probs_b.bias': (8,), 'blk.3.ffn_gate_shexp.weight': (4096, 2048), 'blk.3.ffn_down_shexp.weight': (2048, 4096), 'blk.3.ffn_up_shexp.weight': (4096, 2048)},
    ),
    'smallthinker': (
        [('smallthinker.expert_count', 8, 4), ('smallthinker.expert_used_count', 2, 4), ('smallthinker.expert_feed_forward_length', 2048, 4), ('smallthinker.expert_gating_func', 1, 4), ('smallthinker.attention.sliding_window', 4096, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8)},
    ),
    'minicpm3': (
        [('minicpm3.attention.key_length', 96, 4), ('minicpm3.attention.value_length', 64, 4), ('minicpm3.rope.dimension_count', 32, 4), ('minicpm3.attention.q_lora_rank', 768, 4), ('minicpm3.attention.kv_lora_rank', 256, 4)],
        {'token_embd.weight': (2560, 32000), 'output_norm.weight': (2560,), 'output.weight': (2560, 32000), 'blk.{i}.attn_norm.weight': (2560,), 'blk.{i}.attn_output.weight': (2560, 2560), 'blk.{i}.ffn_norm.weight': (2560,), 'blk.{i}.ffn_up.weight': (2560, 6400), 'blk.{i}.ffn_down.weight': (6400, 2560), 'blk.{i}.ffn_gate.weight': (2560, 6400), 'blk.{i}.attn_q_a_norm.weight': (768,), 'blk.{i}.attn_kv_a_norm.weight': (256,), 'blk.{i}.attn_q_a.weight': (2560, 768), 'blk.{i}.attn_q_b.weight': (768, 3840), 'blk.{i}.attn_kv_a_mqa.weight': (2560, 288), 'blk.{i}.attn_kv_b.weight': (256, 5120)},
    ),
})
SWEEP_LAYERS.update({"afmoe": 4, "smallthinker": 6})
SWEEP_DIMS_BY_ARCH = {"dots1": dict(n_kv=32), "minicpm3": dict(n_embd=2560, n_head=40, n_kv=40, n_ff=6400)}

# gemma4: 6 layers, GGUF pattern S S S F + 2 layers sharing KV (attention.shared_kv_layers 2: one sliding, one
# full), sliding heads of 64 and full heads of 128, per-layer input embeddings of 64
SWEEP.update({
    'gemma4': (
        [('gemma4.attention.sliding_window', 1024, 4), ('gemma4.attention.sliding_window_pattern', [True, True, True, False, True, False], 'BOOL'), ('gemma4.embedding_length_per_layer_input', 64, 4), ('gemma4.attention.key_length', 128, 4), ('gemma4.attention.value_length', 128, 4), ('gemma4.attention.key_length_swa', 64, 4), ('gemma4.attention.value_length_swa', 64, 4), ('gemma4.attention.shared_kv_layers', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.attn_q.weight': (4096, 2048), 'blk.1.attn_q.weight': (4096, 2048), 'blk.2.attn_q.weight': (4096, 2048), 'blk.3.attn_q.weight': (4096, 4096), 'blk.4.attn_q.weight': (4096, 2048), 'blk.5.attn_q.weight': (4096, 4096), 'blk.0.attn_k.weight': (4096, 512), 'blk.1.attn_k.weight': (4096, 512), 'blk.2.attn_k.weight': (4096, 512), 'blk.3.attn_k.weight': (4096, 1024), 'blk.4.attn_k.weight': (4096, 512), 'blk.5.attn_k.weight': (4096, 1024), 'blk.0.attn_v.weight': (4096, 512), 'blk.1.attn_v.weight': (4096, 512), 'blk.2.attn_v.weight': (4096, 512), 'blk.3.attn_v.weight': (4096, 1024), 'blk.4.attn_v.weight': (4096, 512), 'blk.5.attn_v.weight': (4096, 1024), 'blk.0.attn_output.weight': (2048, 4096), 'blk.1.attn_output.weight': (2048, 4096), 'blk.2.attn_output.weight': (2048, 4096), 'blk.3.attn_output.weight': (4096, 4096), 'blk.4.attn_output.weight': (2048, 4096), 'blk.5.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.0.attn_q_norm.weight': (64,), 'blk.1.attn_q_norm.weight': (64,), 'blk.2.attn_q_norm.weight': (64,), 'blk.3.attn_q_norm.weight': (128,), 'blk.4.attn_q_norm.weight': (64,), 'blk.5.attn_q_norm.weight': (128,), 'blk.0.attn_k_norm.weight': (64,), 'blk.1.attn_k_norm.weight': (64,), 'blk.2.attn_k_norm.weight': (64,), 'blk.3.attn_k_norm.weight': (128,), 'blk.4.attn_k_norm.weight': (64,), 'blk.5.attn_k_norm.weight': (128,), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.post_ffw_norm.weight': (4096,), 'blk.{i}.inp_gate.weight': (4096, 64), 'blk.{i}.proj.weight': (64, 4096), 'blk.{i}.post_norm.weight': (4096,), 'per_layer_token_embd.weight': (384, 32000), 'per_layer_model_proj.weight': (4096, 384), 'per_layer_proj_norm.weight': (64,), 'rope_freqs.weight': (64,)},
    ),
})
SWEEP_LAYERS["gemma4"] = 6

# paddleocr (PaddleOCR-VL's language model) and hy_v3: plain GQA caches on the generic shape. hy_v3 carries what
# Hunyuan V3's checkpoints carry and src/models/hy-v3.cpp runs in every MoE layer: the sigmoid router's selection
# bias (exp_probs_b) and one always-active shared expert (ffn_*_shexp, n_ff_shexp defaulting to n_ff_exp)
SWEEP.update({
    'paddleocr': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'hy_v3': (
        [('hy_v3.expert_count', 8, 4), ('hy_v3.expert_used_count', 2, 4), ('hy_v3.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.exp_probs_b': (8,), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)},
    ),
})

# plm (PLM-1.8B: hidden 2048, 16 heads, kv_lora_rank 512, rope 64, squared-ReLU FFN 8192): low-rank attention
# with a decompressed cache (head 128 = n_embd / n_head, as the file gives no key_length)
SWEEP.update({
    'plm': (
        [('plm.rope.dimension_count', 64, 4), ('plm.attention.kv_lora_rank', 512, 4)],
        {'token_embd.weight': (2048, 32000), 'output_norm.weight': (2048,), 'blk.{i}.attn_norm.weight': (2048,), 'blk.{i}.attn_q.weight': (2048, 2048), 'blk.{i}.attn_output.weight': (2048, 2048), 'blk.{i}.ffn_norm.weight': (2048,), 'blk.{i}.ffn_up.weight': (2048, 8192), 'blk.{i}.ffn_down.weight': (8192, 2048), 'blk.{i}.attn_kv_a_mqa.weight': (2048, 576), 'blk.{i}.attn_kv_a_norm.weight': (512,), 'blk.{i}.attn_kv_b.weight': (512, 3072)},
    ),
})
SWEEP_DIMS_BY_ARCH["plm"] = dict(n_embd=2048, n_head=16, n_kv=16, n_ff=8192)

# Architectures oomkit already read, now held to llama.cpp: each on the generic shape (tensor set as the loader asks;
# cohere2 with a 4-layer GGUF sliding-window pattern, exaone4 and olmo2 without a window)
SWEEP.update({
    'baichuan': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'chatglm': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.ffn_down.weight': (11008, 4096)},
    ),
    'command-r': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'falcon': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144)},
    ),
    'gemma': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'glm4': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'gpt2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'position_embd.weight': (4096, 8192), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_qkv.bias': (6144,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'granite': (
        [('granite.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'internlm2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'minicpm': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'mistral3': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'orion': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,)},
    ),
    'phi2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'output.bias': (32000,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'qwen2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'qwen2vl': (
        [('qwen2vl.rope.dimension_sections', 1, 5)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'qwen3vl': (
        [('qwen3vl.rope.dimension_sections', 1, 5)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
    'smollm3': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'stablelm': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,)},
    ),
    'starcoder': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'position_embd.weight': (4096, 8192), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_qkv.bias': (6144,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'starcoder2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.ffn_up.bias': (11008,)},
    ),
    'bitnet': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_sub_norm.weight': (4096,), 'blk.{i}.ffn_sub_norm.weight': (11008,)},
    ),
    'exaone4': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'olmo2': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.attn_q_norm.weight': (4096,), 'blk.{i}.attn_k_norm.weight': (1024,), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'cohere2': (
        [('cohere2.attention.sliding_window', 4096, 4), ('cohere2.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('cohere2.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'arctic': (
        [('arctic.expert_count', 8, 4), ('arctic.expert_used_count', 2, 4), ('arctic.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_gate.weight': (4096, 4096), 'blk.{i}.ffn_down.weight': (4096, 4096), 'blk.{i}.ffn_up.weight': (4096, 4096), 'blk.{i}.ffn_norm_exps.weight': (4096,)},
    ),
    'dbrx': (
        [('dbrx.expert_count', 8, 4), ('dbrx.expert_used_count', 2, 4), ('dbrx.expert_feed_forward_length', 2048, 4), ('dbrx.attention.clamp_kqv', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8), 'blk.{i}.attn_qkv.weight': (4096, 6144), 'blk.{i}.attn_output_norm.weight': (4096,)},
    ),
    'deepseek': (
        [('deepseek.expert_count', 8, 4), ('deepseek.expert_used_count', 2, 4), ('deepseek.expert_feed_forward_length', 2048, 4), ('deepseek.expert_shared_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)},
    ),
    'granitemoe': (
        [('granitemoe.expert_count', 8, 4), ('granitemoe.expert_used_count', 2, 4), ('granitemoe.expert_feed_forward_length', 2048, 4), ('granitemoe.logit_scale', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8)},
    ),
    'phimoe': (
        [('phimoe.expert_count', 8, 4), ('phimoe.expert_used_count', 2, 4), ('phimoe.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8), 'output_norm.bias': (4096,), 'output.bias': (32000,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.ffn_norm.bias': (4096,)},
    ),
    'qwen2moe': (
        [('qwen2moe.expert_count', 8, 4), ('qwen2moe.expert_used_count', 2, 4), ('qwen2moe.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_gate_inp_shexp.weight': (4096,), 'blk.{i}.ffn_gate_shexp.weight': (4096, 11008), 'blk.{i}.ffn_down_shexp.weight': (11008, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 11008)},
    ),
    'qwen3vlmoe': (
        [('qwen3vlmoe.expert_count', 8, 4), ('qwen3vlmoe.expert_used_count', 2, 4), ('qwen3vlmoe.expert_feed_forward_length', 2048, 4), ('qwen3vlmoe.rope.dimension_sections', 1, 5)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,)},
    ),
})
SWEEP_LAYERS["cohere2"] = 4

# Encoders (no KV cache; the output and compute buffers only) on the generic shape; the BERT family's files carry
# tokenizer.ggml.token_type_count (llama.cpp refuses them without it) and 32 KV heads
SWEEP.update({
    'modern-bert': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.ffn_down.weight': (11008, 4096), 'token_embd_norm.weight': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 12288)},
    ),
    'neo-bert': (
        [],
        {'token_embd.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.ffn_down.weight': (11008, 4096), 'enc.output_norm.weight': (4096,), 'blk.{i}.attn_qkv.weight': (4096, 6144)},
    ),
    'eurobert': (
        [],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008)},
    ),
    'gemma-embedding': (
        [('gemma-embedding.attention.sliding_window', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.post_attention_norm.weight': (4096,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.post_ffw_norm.weight': (4096,)},
    ),
    'bert': (
        [('tokenizer.ggml.token_type_count', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'position_embd.weight': (4096, 8192), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.attn_output_norm.bias': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.layer_output_norm.weight': (4096,), 'blk.{i}.layer_output_norm.bias': (4096,)},
    ),
    'nomic-bert': (
        [('tokenizer.ggml.token_type_count', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.attn_output_norm.bias': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.layer_output_norm.weight': (4096,), 'blk.{i}.layer_output_norm.bias': (4096,)},
    ),
    'nomic-bert-moe': (
        [('tokenizer.ggml.token_type_count', 2, 4), ('nomic-bert-moe.expert_count', 8, 4), ('nomic-bert-moe.expert_used_count', 2, 4), ('nomic-bert-moe.moe_every_n_layers', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.attn_output_norm.bias': (4096,), 'blk.0.ffn_up.weight': (4096, 11008), 'blk.0.ffn_down.weight': (11008, 4096), 'blk.{i}.layer_output_norm.weight': (4096,), 'blk.{i}.layer_output_norm.bias': (4096,), 'blk.1.ffn_up_exps.weight': (4096, 11008, 8), 'blk.1.ffn_down_exps.weight': (11008, 4096, 8), 'blk.1.ffn_gate_inp.weight': (4096, 8)},
    ),
    'jina-bert-v3': (
        [('tokenizer.ggml.token_type_count', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.attn_output_norm.bias': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.layer_output_norm.weight': (4096,), 'blk.{i}.layer_output_norm.bias': (4096,)},
    ),
    'jina-bert-v2': (
        [('tokenizer.ggml.token_type_count', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'token_types.weight': (4096, 2), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.attn_output.bias': (4096,), 'blk.{i}.attn_output_norm.weight': (4096,), 'blk.{i}.attn_output_norm.bias': (4096,), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_down.bias': (4096,), 'blk.{i}.layer_output_norm.weight': (4096,), 'blk.{i}.layer_output_norm.bias': (4096,)},
    ),
})
SWEEP_DIMS_BY_ARCH.update({a: dict(n_kv=32) for a in ("bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v3", "jina-bert-v2")})

# maple: MoE with Q/K norms and a GGUF sliding-window pattern (3 sliding of 4096, 1 full)
SWEEP.update({
    'maple': (
        [('maple.expert_count', 8, 4), ('maple.expert_used_count', 2, 4), ('maple.expert_feed_forward_length', 2048, 4), ('maple.attention.sliding_window', 4096, 4), ('maple.attention.sliding_window_pattern', [True, True, True, False], 'BOOL'), ('maple.swiglu_clamp_exp', 1.0, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,)},
    ),
})
SWEEP_LAYERS["maple"] = 4

def sweep_model(arch: str) -> SynthModel:
    extra, patterns = SWEEP[arch]
    d = dict(SWEEP_DIMS, **SWEEP_DIMS_BY_ARCH.get(arch, {}))
    nl = SWEEP_LAYERS.get(arch, d["n_layers"])
    md = _Meta(arch).base(ctx=8192, n_embd=d["n_embd"], n_layers=nl, n_ff=d["n_ff"], n_head=d["n_head"],
                          n_head_kv=d["n_kv"], rms_eps=1e-5, rope_base=10000.0, n_vocab=d["n_vocab"])
    md.f32("attention.layer_norm_epsilon", 1e-5)
    md.items.extend((k, v, (VT.ARRAY, VT.BOOL) if isinstance(v, list) else VT(t)) for k, v, t in extra)
    ts = []
    for pattern, shape in patterns.items():
        names = [pattern.format(i=i) for i in range(nl)] if "{i}" in pattern else [pattern]
        ts += [Tensor(n, tuple(shape)) for n in names]
    tied = "output.weight" not in patterns
    return _model(f"sweep-{arch}", arch, "generic Llama-2-7B-like shape (SWEEP_DIMS)", d["n_vocab"], nl, md, ts, tied)


def deci_variable(n_layers: int | None = None) -> SynthModel:
    """deci (DeciLM / Llama-3.1-Nemotron-51B style): per-layer head counts and FFN sizes, a layer without
    attention (head_count 0) and one without FFN (feed_forward_length 0), on the generic SWEEP_DIMS shape:
    hidden 4096, heads 32 / KV 8, 0 / 0, 32 / 4, 32 / 8 (head 128), FFN 11008, 11008, 0, 14336."""
    arch, n_embd, hd, n_vocab = "deci", 4096, 128, 32000
    heads, kvh, ffs = [32, 0, 32, 32], [8, 0, 4, 8], [11008, 11008, 0, 14336]
    nl = 4
    md = _Meta(arch)
    md.u32("context_length", 8192).u32("embedding_length", n_embd).u32("block_count", nl).u32("vocab_size", n_vocab)
    md.items += [(f"{arch}.attention.head_count", heads, (VT.ARRAY, VT.INT32)),
                 (f"{arch}.attention.head_count_kv", kvh, (VT.ARRAY, VT.INT32)),
                 (f"{arch}.feed_forward_length", ffs, (VT.ARRAY, VT.INT32))]
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 500000.0).u32("rope.dimension_count", hd)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        if heads[i]:
            ts += _attn_gqa(i, n_embd, heads[i] * hd, kvh[i] * hd)
        if ffs[i]:
            ts += _ffn_dense(i, n_embd, ffs[i])
    return _model("deci-variable", arch, "generic shape with DeciLM's per-layer variation", n_vocab, nl, md, ts, False)


def mistral4_mla(n_layers: int | None = None) -> SynthModel:
    """mistral4: llama.cpp loads it with deepseek2's tensors and MLA cache (kv_lora_rank, the *_mla lengths); the
    file carries DeepSeek-V3's per-layer dims (tests/groundtruth/synth.py deepseek_v3) with 16 experts, under the
    mistral4 key prefix."""
    import dataclasses  # lazy: only this builder renames a model

    base = synth_deepseek_v3(n_layers=n_layers, n_experts=16)
    md = tuple((k.replace("deepseek2.", "mistral4.", 1), v, t) for k, v, t in base.metadata)
    return dataclasses.replace(base, key="mistral4-mla", arch="mistral4", metadata=md,
                               source="DeepSeek-V3 config.json dims under mistral4")


def deepseek32_dsa(n_layers: int | None = None, arch: str = "deepseek32", nextn: int = 0) -> SynthModel:
    """deepseek32 (DeepSeek-V3.2): DeepSeek-V3's MLA dims (tests/groundtruth/synth.py deepseek_v3, 16 experts) and
    the lightning indexer of deepseek-ai/DeepSeek-V3.2-Exp config.json (index_n_heads 64, index_head_dim 128,
    index_topk 2048): per layer indexer.attn_q_b {q_lora_rank, 64 x 128}, indexer.attn_k {n_embd, 128},
    indexer.k_norm weight and bias {128}, indexer.proj {n_embd, 64} (what llama.cpp@0c1e57098's loader asks for)."""
    import dataclasses  # lazy: only the renaming builders use it

    base = synth_deepseek_v3(n_layers=n_layers if n_layers is not None else 2, n_experts=16)
    md = tuple((k.replace("deepseek2.", f"{arch}.", 1), v, t) for k, v, t in base.metadata)
    md += ((f"{arch}.attention.indexer.head_count", 64, VT.UINT32),
           (f"{arch}.attention.indexer.key_length", 128, VT.UINT32),
           (f"{arch}.attention.indexer.top_k", 2048, VT.UINT32))
    n_embd, q_lora, n_ih, ihd = 7168, 1536, 64, 128
    ts = list(base.tensors)
    for i in range(base.n_layers):
        ts += [_blk(i, "indexer.attn_q_b.weight", q_lora, n_ih * ihd), _blk(i, "indexer.attn_k.weight", n_embd, ihd),
               _blk(i, "indexer.k_norm.weight", ihd), _blk(i, "indexer.k_norm.bias", ihd),
               _blk(i, "indexer.proj.weight", n_embd, n_ih)]
    if nextn:  # the last `nextn` blocks are MTP blocks (nextn_predict_layers), as GLM-5's converter writes them
        md += ((f"{arch}.nextn_predict_layers", nextn, VT.UINT32),)
        for i in range(base.n_layers - nextn, base.n_layers):
            ts += [_blk(i, "nextn.eh_proj.weight", 2 * n_embd, n_embd), _blk(i, "nextn.enorm.weight", n_embd),
                   _blk(i, "nextn.hnorm.weight", n_embd), _blk(i, "nextn.shared_head_norm.weight", n_embd)]
    return dataclasses.replace(base, key=f"{arch}-dsa{'-mtp' if nextn else ''}", arch=arch, metadata=md, tensors=tuple(ts),
                               source="DeepSeek-V3 config.json dims with DeepSeek-V3.2-Exp's indexer")


# architectures tests/test_llamacpp_archs.py holds to llama.cpp on its richer ADDED_GRID (not the sweep's two rows)
ADDED_ON_GRID = ["grok", "dots1", "afmoe", "smallthinker", "minicpm3", "gemma4", "deepseek32", "paddleocr", "hy_v3"]
# builders for tests/test_llamacpp_archs.py ADDED where the generic sweep shape does not serve
ADDED_BUILDERS = {"deepseek32": deepseek32_dsa}
# glm-dsa (GLM-5): the same MLA + indexer layout under its own prefix, 4 trunk layers (3 dense, 1 MoE) and one MTP
# block that llama.cpp neither caches nor loads (glm-dsa.cpp: TENSOR_SKIP for il >= n_layer)
CRASHING_BUILDERS = {"glm-dsa": lambda: deepseek32_dsa(5, "glm-dsa", nextn=1), "plm": lambda: sweep_model("plm")}


def kimi_linear(n_layers: int | None = None) -> SynthModel:
    """kimi-linear (moonshotai/Kimi-Linear-48B-A3B-Instruct config.json: hidden 2304, 32 heads, KDA head_dim 128 with
    short_conv_kernel_size 4, MLA layers with kv_lora_rank 512, qk_nope 128 + qk_rope 64, v_head_dim 128, no q
    lora; MoE 1024 per expert with one shared expert, first_k_dense_replace 1, dense FFN 9216) on 4 layers:
    3 KDA (head_count_kv 0, recurrent) and 1 MLA (head_count_kv 1, the latent K-only cache); 8 experts, vocab 32000.
    Tensor names and shapes as llama.cpp@0c1e57098's loader asks for them."""
    arch, n_embd, n_head, hd, kvl, rope, n_exp, ff_exp, n_ff, n_vocab = "kimi-linear", 2304, 32, 128, 512, 64, 8, 1024, 9216, 32000
    kinds = ["kda", "kda", "kda", "mla"]
    nl = 4
    md = _Meta(arch)
    md.u32("context_length", 8192).u32("embedding_length", n_embd).u32("block_count", nl).u32("feed_forward_length", n_ff)
    md.u32("attention.head_count", n_head)
    md.items.append((f"{arch}.attention.head_count_kv", [0 if k == "kda" else 1 for k in kinds], (VT.ARRAY, VT.INT32)))
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 10000.0).u32("vocab_size", n_vocab)
    md.u32("attention.key_length", kvl + rope).u32("attention.value_length", kvl)
    md.u32("attention.key_length_mla", 128 + rope).u32("attention.value_length_mla", 128)
    md.u32("rope.dimension_count", rope).u32("attention.kv_lora_rank", kvl).u32("ssm.conv_kernel", 4)
    md.u32("kda.head_dim", hd).u32("expert_count", n_exp).u32("expert_used_count", 2)
    md.u32("expert_feed_forward_length", ff_exp).u32("expert_shared_count", 1).u32("leading_dense_block_count", 1)
    md.u32("expert_gating_func", 2)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    p = n_head * hd
    for i, kind in enumerate(kinds):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "ffn_norm.weight", n_embd)]
        if kind == "kda":
            ts += [_blk(i, f"ssm_conv1d_{x}.weight", 4, 1, p) for x in "qkv"]
            ts += [_blk(i, f"attn_{x}.weight", n_embd, p) for x in "qkv"]
            ts += [_blk(i, "ssm_f_a.weight", n_embd, hd), _blk(i, "ssm_f_b.weight", hd, p),
                   _blk(i, "ssm_beta.weight", n_embd, n_head), _blk(i, "ssm_a", 1, n_head), _blk(i, "ssm_dt.bias", p),
                   _blk(i, "ssm_g_a.weight", n_embd, hd), _blk(i, "ssm_g_b.weight", hd, p), _blk(i, "ssm_norm.weight", hd)]
        else:
            ts += [_blk(i, "attn_kv_a_norm.weight", kvl), _blk(i, "attn_q.weight", n_embd, n_head * (128 + rope)),
                   _blk(i, "attn_kv_a_mqa.weight", n_embd, kvl + rope), _blk(i, "attn_k_b.weight", 128, kvl, n_head),
                   _blk(i, "attn_v_b.weight", kvl, 128, n_head)]
        ts.append(_blk(i, "attn_output.weight", p, n_embd))
        if i == 0:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, ff_exp), _blk(i, "ffn_down_shexp.weight", ff_exp, n_embd),
                   _blk(i, "ffn_up_shexp.weight", n_embd, ff_exp)]
    return _model("kimi-linear-4l", arch, "moonshotai/Kimi-Linear-48B-A3B-Instruct config.json dims", n_vocab, nl, md, ts,
                  False)


ADDED_BUILDERS["kimi-linear"] = kimi_linear
ADDED_ON_GRID.append("kimi-linear")

ADDED_ON_GRID += ['baichuan', 'chatglm', 'command-r', 'falcon', 'gemma', 'glm4', 'gpt2', 'granite', 'internlm2', 'minicpm', 'mistral3', 'orion', 'phi2', 'qwen2', 'qwen2vl', 'qwen3vl', 'smollm3', 'stablelm', 'starcoder', 'starcoder2', 'bitnet', 'exaone4', 'olmo2', 'cohere2', 'arctic', 'dbrx', 'deepseek', 'granitemoe', 'phimoe', 'qwen2moe', 'qwen3vlmoe']


def qwen_hybrid_moe(arch: str, n_layers: int = 4) -> SynthModel:
    """qwen3next / qwen35moe: Qwen3.5-27B's per-layer hybrid dims (tests/groundtruth/synth.py qwen35_27b: 3 gated
    delta-net layers, 1 full attention layer of 24 heads / 4 KV heads of 256) with a MoE FFN in every layer (8
    experts of 512, 2 used, a gated shared expert of 512). qwen3next's delta-net layers hold one ssm_ba
    {n_embd, 2 x value heads} where qwen35moe's hold ssm_beta and ssm_alpha (what llama.cpp@0c1e57098 loads)."""
    import dataclasses  # lazy: only the renaming builders use it

    base = synth.qwen35_27b(n_layers=n_layers)
    md = tuple((k.replace("qwen35.", f"{arch}.", 1), v, t) for k, v, t in base.metadata)
    md += tuple((f"{arch}.{k}", v, VT.UINT32) for k, v in (
        ("expert_count", 8), ("expert_used_count", 2), ("expert_feed_forward_length", 512),
        ("expert_shared_feed_forward_length", 512)))
    n_embd, ff, n_exp, v_heads = 5120, 512, 8, 48
    ts = []
    for t in base.tensors:
        kind = t.name.split(".", 2)[-1]
        if kind in ("ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"):
            continue
        if arch == "qwen3next" and kind in ("ssm_beta.weight", "ssm_alpha.weight"):
            if kind == "ssm_beta.weight":
                ts.append(Tensor(t.name.replace("ssm_beta", "ssm_ba"), (n_embd, 2 * v_heads)))
            continue
        ts.append(t)
    for i in range(base.n_layers):
        ts += _ffn_moe(i, n_embd, ff, n_exp) + [
            _blk(i, "ffn_gate_inp_shexp.weight", n_embd), _blk(i, "ffn_gate_shexp.weight", n_embd, ff),
            _blk(i, "ffn_up_shexp.weight", n_embd, ff), _blk(i, "ffn_down_shexp.weight", ff, n_embd)]
    return dataclasses.replace(base, key=f"{arch}-hybrid-moe", arch=arch, metadata=md, tensors=tuple(ts),
                               source="Qwen3.5-27B text_config dims with a small MoE FFN")


ADDED_BUILDERS.update({"qwen3next": lambda: qwen_hybrid_moe("qwen3next"), "qwen35moe": lambda: qwen_hybrid_moe("qwen35moe")})
ADDED_ON_GRID += ["qwen3next", "qwen35moe"]
ADDED_ON_GRID += ['modern-bert', 'neo-bert', 'eurobert', 'gemma-embedding', 'bert', 'nomic-bert', 'nomic-bert-moe', 'jina-bert-v3', 'jina-bert-v2']


# Recorded recipes: the whole metadata (per-layer arrays included) and tensor set llama.cpp@0c1e57098's loader asks
# for, on the generic 4096-wide shape: Mamba-1 (mamba, jamba: d_inner 8192, d_state 16, dt rank 256), Mamba-2
# layers (nemotron_h, granitehybrid, falcon-h1: d_inner 8192, d_state 128, 128 heads, 1 group; conv1d bias), and
# attention / FFN-only layers as head_count_kv and feed_forward_length say (nemotron_h: Mamba, attention, Mamba, MLP)
RECORDED = {
    'mamba': ('mamba', 2,
        [('mamba.context_length', 8192, 4), ('mamba.embedding_length', 4096, 4), ('mamba.block_count', 2, 4), ('mamba.feed_forward_length', 11008, 4), ('mamba.attention.head_count', 32, 4), ('mamba.attention.layer_norm_rms_epsilon', 1e-05, 6), ('mamba.rope.freq_base', 10000.0, 6), ('mamba.vocab_size', 32000, 4), ('mamba.attention.head_count_kv', [0, 0], 'INT32'), ('mamba.ssm.conv_kernel', 4, 4), ('mamba.ssm.inner_size', 8192, 4), ('mamba.ssm.state_size', 16, 4), ('mamba.ssm.time_step_rank', 256, 4), ('mamba.ssm.group_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.ssm_in.weight': (4096, 16384), 'blk.{i}.ssm_conv1d.weight': (4, 8192), 'blk.{i}.ssm_conv1d.bias': (8192,), 'blk.{i}.ssm_x.weight': (8192, 288), 'blk.{i}.ssm_dt.weight': (256, 8192), 'blk.{i}.ssm_dt.bias': (8192,), 'blk.{i}.ssm_a': (16, 8192), 'blk.{i}.ssm_d': (8192,), 'blk.{i}.ssm_out.weight': (8192, 4096)}),
    'jamba': ('jamba', 4,
        [('jamba.context_length', 8192, 4), ('jamba.embedding_length', 4096, 4), ('jamba.block_count', 4, 4), ('jamba.feed_forward_length', 11008, 4), ('jamba.attention.head_count', 32, 4), ('jamba.attention.layer_norm_rms_epsilon', 1e-05, 6), ('jamba.rope.freq_base', 10000.0, 6), ('jamba.vocab_size', 32000, 4), ('jamba.attention.head_count_kv', [0, 0, 0, 8], 'INT32'), ('jamba.ssm.conv_kernel', 4, 4), ('jamba.ssm.inner_size', 8192, 4), ('jamba.ssm.state_size', 16, 4), ('jamba.ssm.time_step_rank', 256, 4), ('jamba.ssm.group_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.ssm_in.weight': (4096, 16384), 'blk.0.ssm_conv1d.weight': (4, 8192), 'blk.0.ssm_conv1d.bias': (8192,), 'blk.0.ssm_x.weight': (8192, 288), 'blk.0.ssm_dt_norm.weight': (256,), 'blk.0.ssm_dt.weight': (256, 8192), 'blk.0.ssm_dt.bias': (8192,), 'blk.0.ssm_b_norm.weight': (16,), 'blk.0.ssm_c_norm.weight': (16,), 'blk.0.ssm_a': (16, 8192), 'blk.0.ssm_d': (8192,), 'blk.0.ssm_out.weight': (8192, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.1.ssm_in.weight': (4096, 16384), 'blk.1.ssm_conv1d.weight': (4, 8192), 'blk.1.ssm_conv1d.bias': (8192,), 'blk.1.ssm_x.weight': (8192, 288), 'blk.1.ssm_dt_norm.weight': (256,), 'blk.1.ssm_dt.weight': (256, 8192), 'blk.1.ssm_dt.bias': (8192,), 'blk.1.ssm_b_norm.weight': (16,), 'blk.1.ssm_c_norm.weight': (16,), 'blk.1.ssm_a': (16, 8192), 'blk.1.ssm_d': (8192,), 'blk.1.ssm_out.weight': (8192, 4096), 'blk.2.ssm_in.weight': (4096, 16384), 'blk.2.ssm_conv1d.weight': (4, 8192), 'blk.2.ssm_conv1d.bias': (8192,), 'blk.2.ssm_x.weight': (8192, 288), 'blk.2.ssm_dt_norm.weight': (256,), 'blk.2.ssm_dt.weight': (256, 8192), 'blk.2.ssm_dt.bias': (8192,), 'blk.2.ssm_b_norm.weight': (16,), 'blk.2.ssm_c_norm.weight': (16,), 'blk.2.ssm_a': (16, 8192), 'blk.2.ssm_d': (8192,), 'blk.2.ssm_out.weight': (8192, 4096), 'blk.3.attn_q.weight': (4096, 4096), 'blk.3.attn_k.weight': (4096, 1024), 'blk.3.attn_v.weight': (4096, 1024), 'blk.3.attn_output.weight': (4096, 4096)}),
    'nemotron_h': ('nemotron_h', 4,
        [('nemotron_h.context_length', 8192, 4), ('nemotron_h.embedding_length', 4096, 4), ('nemotron_h.block_count', 4, 4), ('nemotron_h.attention.head_count', 32, 4), ('nemotron_h.attention.layer_norm_rms_epsilon', 1e-05, 6), ('nemotron_h.rope.freq_base', 10000.0, 6), ('nemotron_h.vocab_size', 32000, 4), ('nemotron_h.attention.head_count_kv', [0, 8, 0, 0], 'INT32'), ('nemotron_h.ssm.conv_kernel', 4, 4), ('nemotron_h.ssm.inner_size', 8192, 4), ('nemotron_h.ssm.state_size', 128, 4), ('nemotron_h.ssm.time_step_rank', 128, 4), ('nemotron_h.ssm.group_count', 1, 4), ('nemotron_h.feed_forward_length', [0, 0, 0, 11008], 'INT32'), ('nemotron_h.attention.layer_norm_epsilon', 1e-05, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.ssm_in.weight': (4096, 16768), 'blk.0.ssm_conv1d.weight': (4, 8448), 'blk.0.ssm_dt.bias': (128,), 'blk.0.ssm_a': (1, 128), 'blk.0.ssm_d': (1, 128), 'blk.0.ssm_norm.weight': (8192, 1), 'blk.0.ssm_out.weight': (8192, 4096), 'blk.1.attn_q.weight': (4096, 4096), 'blk.1.attn_k.weight': (4096, 1024), 'blk.1.attn_v.weight': (4096, 1024), 'blk.1.attn_output.weight': (4096, 4096), 'blk.2.ssm_in.weight': (4096, 16768), 'blk.2.ssm_conv1d.weight': (4, 8448), 'blk.2.ssm_dt.bias': (128,), 'blk.2.ssm_a': (1, 128), 'blk.2.ssm_d': (1, 128), 'blk.2.ssm_norm.weight': (8192, 1), 'blk.2.ssm_out.weight': (8192, 4096), 'blk.3.ffn_down.weight': (11008, 4096), 'blk.3.ffn_up.weight': (4096, 11008), 'blk.0.ssm_conv1d.bias': (8448,), 'blk.2.ssm_conv1d.bias': (8448,)}),
    'granitehybrid': ('granitehybrid', 4,
        [('granitehybrid.context_length', 8192, 4), ('granitehybrid.embedding_length', 4096, 4), ('granitehybrid.block_count', 4, 4), ('granitehybrid.feed_forward_length', 11008, 4), ('granitehybrid.attention.head_count', 32, 4), ('granitehybrid.attention.layer_norm_rms_epsilon', 1e-05, 6), ('granitehybrid.rope.freq_base', 10000.0, 6), ('granitehybrid.vocab_size', 32000, 4), ('granitehybrid.attention.head_count_kv', [0, 0, 0, 8], 'INT32'), ('granitehybrid.ssm.conv_kernel', 4, 4), ('granitehybrid.ssm.inner_size', 8192, 4), ('granitehybrid.ssm.state_size', 128, 4), ('granitehybrid.ssm.time_step_rank', 128, 4), ('granitehybrid.ssm.group_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.ssm_in.weight': (4096, 16768), 'blk.0.ssm_conv1d.weight': (4, 8448), 'blk.0.ssm_dt.bias': (128,), 'blk.0.ssm_a': (1, 128), 'blk.0.ssm_d': (1, 128), 'blk.0.ssm_norm.weight': (8192, 1), 'blk.0.ssm_out.weight': (8192, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.1.ssm_in.weight': (4096, 16768), 'blk.1.ssm_conv1d.weight': (4, 8448), 'blk.1.ssm_dt.bias': (128,), 'blk.1.ssm_a': (1, 128), 'blk.1.ssm_d': (1, 128), 'blk.1.ssm_norm.weight': (8192, 1), 'blk.1.ssm_out.weight': (8192, 4096), 'blk.2.ssm_in.weight': (4096, 16768), 'blk.2.ssm_conv1d.weight': (4, 8448), 'blk.2.ssm_dt.bias': (128,), 'blk.2.ssm_a': (1, 128), 'blk.2.ssm_d': (1, 128), 'blk.2.ssm_norm.weight': (8192, 1), 'blk.2.ssm_out.weight': (8192, 4096), 'blk.3.attn_q.weight': (4096, 4096), 'blk.3.attn_k.weight': (4096, 1024), 'blk.3.attn_v.weight': (4096, 1024), 'blk.3.attn_output.weight': (4096, 4096), 'blk.0.ssm_conv1d.bias': (8448,), 'blk.1.ssm_conv1d.bias': (8448,), 'blk.2.ssm_conv1d.bias': (8448,)}),
    'falcon-h1': ('falcon-h1', 2,
        [('falcon-h1.context_length', 8192, 4), ('falcon-h1.embedding_length', 4096, 4), ('falcon-h1.block_count', 2, 4), ('falcon-h1.feed_forward_length', 11008, 4), ('falcon-h1.attention.head_count', 32, 4), ('falcon-h1.attention.layer_norm_rms_epsilon', 1e-05, 6), ('falcon-h1.rope.freq_base', 10000.0, 6), ('falcon-h1.vocab_size', 32000, 4), ('falcon-h1.attention.head_count_kv', 8, 4), ('falcon-h1.ssm.conv_kernel', 4, 4), ('falcon-h1.ssm.inner_size', 8192, 4), ('falcon-h1.ssm.state_size', 128, 4), ('falcon-h1.ssm.time_step_rank', 128, 4), ('falcon-h1.ssm.group_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.ssm_in.weight': (4096, 16768), 'blk.{i}.ssm_conv1d.weight': (4, 8448), 'blk.{i}.ssm_dt.bias': (128,), 'blk.{i}.ssm_a': (1, 128), 'blk.{i}.ssm_d': (1, 128), 'blk.{i}.ssm_out.weight': (8192, 4096), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm': (4096,), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.{i}.ssm_conv1d.bias': (8448,)}),
}


def recorded_model(key: str) -> SynthModel:
    arch, nl, md_items, patterns = RECORDED[key]
    types = {"INT32": (VT.ARRAY, VT.INT32), "BOOL": (VT.ARRAY, VT.BOOL)}
    md = _Meta(arch)
    md.items.extend((k, v, types[t] if isinstance(t, str) else VT(t)) for k, v, t in md_items)
    ts = []
    for pattern, shape in patterns.items():
        names = [pattern.format(i=i) for i in range(nl)] if "{i}" in pattern else [pattern]
        ts += [Tensor(n, tuple(shape)) for n in names]
    n_vocab = next(v for k, v, _ in md_items if k.endswith(".vocab_size"))
    return _model(f"recorded-{key}", arch, "generic shape, recorded recipe", n_vocab, nl, md, ts,
                  "output.weight" not in patterns)


for _k in RECORDED:
    ADDED_BUILDERS[_k] = lambda _k=_k: recorded_model(_k)
ADDED_ON_GRID += list(RECORDED)
ADDED_QUANT = {k: "f16" for k in RECORDED}

# olmoe and deepseek2-ocr: their graphs take n_head_kv == n_head (as OLMoE and DeepSeek-OCR's language model have:
# OLMoE's Q/K norms span the whole n_embd), so these files carry 32 KV heads
RECORDED.update({
    'olmoe': ('olmoe', 2,
        [('olmoe.context_length', 8192, 4), ('olmoe.embedding_length', 4096, 4), ('olmoe.block_count', 2, 4), ('olmoe.feed_forward_length', 11008, 4), ('olmoe.attention.head_count', 32, 4), ('olmoe.attention.head_count_kv', 32, 4), ('olmoe.attention.layer_norm_rms_epsilon', 1e-05, 6), ('olmoe.rope.freq_base', 10000.0, 6), ('olmoe.vocab_size', 32000, 4), ('olmoe.attention.layer_norm_epsilon', 1e-05, 6), ('olmoe.expert_count', 8, 4), ('olmoe.expert_used_count', 2, 4), ('olmoe.expert_feed_forward_length', 2048, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8), 'blk.{i}.attn_q_norm.weight': (4096,), 'blk.{i}.attn_k_norm.weight': (4096,)}),
    'deepseek2-ocr': ('deepseek2-ocr', 2,
        [('deepseek2-ocr.context_length', 8192, 4), ('deepseek2-ocr.embedding_length', 4096, 4), ('deepseek2-ocr.block_count', 2, 4), ('deepseek2-ocr.feed_forward_length', 11008, 4), ('deepseek2-ocr.attention.head_count', 32, 4), ('deepseek2-ocr.attention.head_count_kv', 32, 4), ('deepseek2-ocr.attention.layer_norm_rms_epsilon', 1e-05, 6), ('deepseek2-ocr.rope.freq_base', 10000.0, 6), ('deepseek2-ocr.vocab_size', 32000, 4), ('deepseek2-ocr.attention.layer_norm_epsilon', 1e-05, 6), ('deepseek2-ocr.expert_count', 8, 4), ('deepseek2-ocr.expert_used_count', 2, 4), ('deepseek2-ocr.expert_feed_forward_length', 2048, 4), ('deepseek2-ocr.expert_shared_count', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 4096), 'blk.{i}.attn_v.weight': (4096, 4096), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048)}),
})
for _k in ("olmoe", "deepseek2-ocr"):
    ADDED_BUILDERS[_k] = lambda _k=_k: recorded_model(_k)
    ADDED_ON_GRID.append(_k)
    ADDED_QUANT[_k] = "f16"

# nemotron_h_moe: nemotron_h's layer kinds with a MoE FFN layer (8 experts of 2048 and a shared one of 2048)
RECORDED.update({
    'nemotron_h_moe': ('nemotron_h_moe', 4,
        [('nemotron_h_moe.context_length', 8192, 4), ('nemotron_h_moe.embedding_length', 4096, 4), ('nemotron_h_moe.block_count', 4, 4), ('nemotron_h_moe.attention.head_count', 32, 4), ('nemotron_h_moe.attention.layer_norm_rms_epsilon', 1e-05, 6), ('nemotron_h_moe.rope.freq_base', 10000.0, 6), ('nemotron_h_moe.vocab_size', 32000, 4), ('nemotron_h_moe.attention.head_count_kv', [0, 8, 0, 0], 'INT32'), ('nemotron_h_moe.ssm.conv_kernel', 4, 4), ('nemotron_h_moe.ssm.inner_size', 8192, 4), ('nemotron_h_moe.ssm.state_size', 128, 4), ('nemotron_h_moe.ssm.time_step_rank', 128, 4), ('nemotron_h_moe.ssm.group_count', 1, 4), ('nemotron_h_moe.expert_count', 8, 4), ('nemotron_h_moe.expert_used_count', 2, 4), ('nemotron_h_moe.expert_feed_forward_length', 2048, 4), ('nemotron_h_moe.expert_shared_feed_forward_length', 2048, 4), ('nemotron_h_moe.feed_forward_length', [0, 0, 0, 11008], 'INT32'), ('nemotron_h_moe.attention.layer_norm_epsilon', 1e-05, 6)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.ssm_in.weight': (4096, 16768), 'blk.0.ssm_conv1d.weight': (4, 8448), 'blk.0.ssm_dt.bias': (128,), 'blk.0.ssm_a': (1, 128), 'blk.0.ssm_d': (1, 128), 'blk.0.ssm_norm.weight': (8192, 1), 'blk.0.ssm_out.weight': (8192, 4096), 'blk.1.attn_q.weight': (4096, 4096), 'blk.1.attn_k.weight': (4096, 1024), 'blk.1.attn_v.weight': (4096, 1024), 'blk.1.attn_output.weight': (4096, 4096), 'blk.2.ssm_in.weight': (4096, 16768), 'blk.2.ssm_conv1d.weight': (4, 8448), 'blk.2.ssm_dt.bias': (128,), 'blk.2.ssm_a': (1, 128), 'blk.2.ssm_d': (1, 128), 'blk.2.ssm_norm.weight': (8192, 1), 'blk.2.ssm_out.weight': (8192, 4096), 'blk.3.ffn_gate_inp.weight': (4096, 8), 'blk.3.exp_probs_b.bias': (8,), 'blk.3.ffn_down_exps.weight': (2048, 4096, 8), 'blk.3.ffn_up_exps.weight': (4096, 2048, 8), 'blk.3.ffn_down_shexp.weight': (2048, 4096), 'blk.3.ffn_up_shexp.weight': (4096, 2048), 'blk.0.ssm_conv1d.bias': (8448,), 'blk.2.ssm_conv1d.bias': (8448,)}),
})
ADDED_BUILDERS["nemotron_h_moe"] = lambda: recorded_model("nemotron_h_moe")
ADDED_ON_GRID.append("nemotron_h_moe")
ADDED_QUANT["nemotron_h_moe"] = "f16"

# lfm2moe: LFM2-1.2B's first 3 layers (2 short convolutions, 1 attention) with MoE FFNs after a dense first layer
RECORDED.update({
    'lfm2moe': ('lfm2moe', 3,
        [('lfm2moe.context_length', 128000, 4), ('lfm2moe.embedding_length', 2048, 4), ('lfm2moe.block_count', 3, 4), ('lfm2moe.feed_forward_length', 8192, 4), ('lfm2moe.attention.head_count', 32, 4), ('lfm2moe.vocab_size', 65536, 4), ('lfm2moe.attention.head_count_kv', [0, 0, 8], 'INT32'), ('lfm2moe.attention.layer_norm_rms_epsilon', 1e-05, 6), ('lfm2moe.rope.freq_base', 1000000.0, 6), ('lfm2moe.shortconv.l_cache', 3, 4), ('lfm2moe.expert_count', 8, 4), ('lfm2moe.expert_used_count', 2, 4), ('lfm2moe.expert_feed_forward_length', 1024, 4), ('lfm2moe.leading_dense_block_count', 1, 4), ('lfm2moe.expert_gating_func', 2, 4)],
        {'token_embd.weight': (2048, 65536), 'token_embd_norm.weight': (2048,), 'blk.{i}.attn_norm.weight': (2048,), 'blk.0.shortconv.conv.weight': (3, 2048), 'blk.0.shortconv.in_proj.weight': (2048, 6144), 'blk.0.shortconv.out_proj.weight': (2048, 2048), 'blk.{i}.ffn_norm.weight': (2048,), 'blk.0.ffn_gate.weight': (2048, 8192), 'blk.0.ffn_down.weight': (8192, 2048), 'blk.0.ffn_up.weight': (2048, 8192), 'blk.1.shortconv.conv.weight': (3, 2048), 'blk.1.shortconv.in_proj.weight': (2048, 6144), 'blk.1.shortconv.out_proj.weight': (2048, 2048), 'blk.2.attn_q.weight': (2048, 2048), 'blk.2.attn_k.weight': (2048, 512), 'blk.2.attn_v.weight': (2048, 512), 'blk.2.attn_output.weight': (2048, 2048), 'blk.2.attn_q_norm.weight': (64,), 'blk.2.attn_k_norm.weight': (64,), 'blk.1.ffn_gate_inp.weight': (2048, 8), 'blk.1.ffn_gate_exps.weight': (2048, 1024, 8), 'blk.1.ffn_up_exps.weight': (2048, 1024, 8), 'blk.1.ffn_down_exps.weight': (1024, 2048, 8), 'blk.2.ffn_gate_inp.weight': (2048, 8), 'blk.2.ffn_gate_exps.weight': (2048, 1024, 8), 'blk.2.ffn_up_exps.weight': (2048, 1024, 8), 'blk.2.ffn_down_exps.weight': (1024, 2048, 8), 'blk.1.exp_probs_b.bias': (8,), 'blk.2.exp_probs_b.bias': (8,)}),
})
ADDED_BUILDERS["lfm2moe"] = lambda: recorded_model("lfm2moe")
ADDED_ON_GRID.append("lfm2moe")
ADDED_QUANT["lfm2moe"] = "f16"

# plamo2: a Mamba layer (ssm.group_count 0: plamo2.cpp asserts it) and an attention layer with fused QKV
RECORDED.update({
    'plamo2': ('plamo2', 2,
        [('plamo2.context_length', 8192, 4), ('plamo2.embedding_length', 4096, 4), ('plamo2.block_count', 2, 4), ('plamo2.feed_forward_length', 11008, 4), ('plamo2.attention.head_count', 32, 4), ('plamo2.attention.layer_norm_rms_epsilon', 1e-05, 6), ('plamo2.rope.freq_base', 10000.0, 6), ('plamo2.vocab_size', 32000, 4), ('plamo2.attention.head_count_kv', [0, 8], 'INT32'), ('plamo2.ssm.conv_kernel', 4, 4), ('plamo2.ssm.inner_size', 8192, 4), ('plamo2.ssm.state_size', 128, 4), ('plamo2.ssm.time_step_rank', 128, 4), ('plamo2.ssm.group_count', 0, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.0.ssm_in.weight': (4096, 16384), 'blk.0.ssm_conv1d.weight': (4, 8192), 'blk.0.ssm_x.weight': (8192, 512), 'blk.0.ssm_dt.weight': (256, 128), 'blk.0.ssm_dt.bias': (128,), 'blk.0.ssm_a': (128,), 'blk.0.ssm_d': (128,), 'blk.0.ssm_out.weight': (8192, 4096), 'blk.0.ssm_dt_norm': (256,), 'blk.0.ssm_b_norm': (128,), 'blk.0.ssm_c_norm': (128,), 'blk.{i}.post_attention_norm': (4096,), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 22016), 'blk.{i}.post_ffw_norm': (4096,), 'blk.1.attn_qkv.weight': (4096, 6144), 'blk.1.attn_q_norm.weight': (128, 32), 'blk.1.attn_k_norm.weight': (128, 8), 'blk.1.attn_output.weight': (4096, 4096)}),
})
ADDED_BUILDERS["plamo2"] = lambda: recorded_model("plamo2")
ADDED_ON_GRID.append("plamo2")
ADDED_QUANT["plamo2"] = "f16"

# rwkv7 and rwkv6 (fused token-shift lerp): 2 layers, head size 64, LoRA ranks 64 / 64 / 32 / 128 (rwkv7) and
# time_mix / time_decay extra dims 32 / 64 (rwkv6)
RECORDED.update({
    'rwkv7': ('rwkv7', 2,
        [('rwkv7.context_length', 8192, 4), ('rwkv7.embedding_length', 4096, 4), ('rwkv7.block_count', 2, 4), ('rwkv7.feed_forward_length', 11008, 4), ('rwkv7.attention.head_count', 0, 4), ('rwkv7.attention.head_count_kv', 0, 4), ('rwkv7.attention.layer_norm_rms_epsilon', 1e-05, 6), ('rwkv7.rope.freq_base', 10000.0, 6), ('rwkv7.vocab_size', 32000, 4), ('rwkv7.attention.layer_norm_epsilon', 1e-05, 6), ('rwkv7.wkv.head_size', 64, 4), ('rwkv7.attention.decay_lora_rank', 64, 4), ('rwkv7.attention.iclr_lora_rank', 64, 4), ('rwkv7.attention.value_residual_mix_lora_rank', 32, 4), ('rwkv7.attention.gate_lora_rank', 128, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_norm_2.weight': (4096,), 'blk.{i}.attn_norm_2.bias': (4096,), 'blk.{i}.time_mix_w0.weight': (4096,), 'blk.{i}.time_mix_w1.weight': (4096, 64), 'blk.{i}.time_mix_w2.weight': (64, 4096), 'blk.{i}.time_mix_a0.weight': (4096,), 'blk.{i}.time_mix_a1.weight': (4096, 64), 'blk.{i}.time_mix_a2.weight': (64, 4096), 'blk.{i}.time_mix_v0.weight': (4096,), 'blk.0.time_mix_v1.weight': (4096, 64), 'blk.0.time_mix_v2.weight': (64, 4096), 'blk.{i}.time_mix_g1.weight': (4096, 128), 'blk.{i}.time_mix_g2.weight': (128, 4096), 'blk.{i}.time_mix_lerp_fused.weight': (4096, 1, 1, 6), 'blk.{i}.time_mix_k_k.weight': (4096,), 'blk.{i}.time_mix_k_a.weight': (4096,), 'blk.{i}.time_mix_r_k.weight': (4096,), 'blk.{i}.time_mix_key.weight': (4096, 4096), 'blk.{i}.time_mix_value.weight': (4096, 4096), 'blk.{i}.time_mix_receptance.weight': (4096, 4096), 'blk.{i}.time_mix_ln.weight': (4096,), 'blk.{i}.time_mix_ln.bias': (4096,), 'blk.{i}.time_mix_output.weight': (4096, 4096), 'blk.{i}.channel_mix_lerp_k.weight': (4096,), 'blk.{i}.channel_mix_key.weight': (4096, 11008), 'blk.{i}.channel_mix_value.weight': (11008, 4096), 'blk.1.time_mix_v1.weight': (4096, 32), 'blk.1.time_mix_v2.weight': (32, 4096)}),
    'rwkv6': ('rwkv6', 2,
        [('rwkv6.context_length', 8192, 4), ('rwkv6.embedding_length', 4096, 4), ('rwkv6.block_count', 2, 4), ('rwkv6.feed_forward_length', 11008, 4), ('rwkv6.attention.head_count', 0, 4), ('rwkv6.attention.head_count_kv', 0, 4), ('rwkv6.attention.layer_norm_rms_epsilon', 1e-05, 6), ('rwkv6.rope.freq_base', 10000.0, 6), ('rwkv6.vocab_size', 32000, 4), ('rwkv6.attention.layer_norm_epsilon', 1e-05, 6), ('rwkv6.wkv.head_size', 64, 4), ('rwkv6.time_mix_extra_dim', 32, 4), ('rwkv6.time_decay_extra_dim', 64, 4), ('rwkv6.rescale_every_n_layers', 6, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'token_embd_norm.weight': (4096,), 'token_embd_norm.bias': (4096,), 'output_norm.bias': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_norm.bias': (4096,), 'blk.{i}.attn_norm_2.weight': (4096,), 'blk.{i}.attn_norm_2.bias': (4096,), 'blk.{i}.time_mix_w1.weight': (4096, 160), 'blk.{i}.time_mix_w2.weight': (32, 4096, 5), 'blk.{i}.time_mix_lerp_fused.weight': (4096, 1, 1, 5), 'blk.{i}.time_mix_lerp_x.weight': (4096,), 'blk.{i}.time_mix_first.weight': (64, 64), 'blk.{i}.time_mix_decay.weight': (4096,), 'blk.{i}.time_mix_decay_w1.weight': (4096, 64), 'blk.{i}.time_mix_decay_w2.weight': (64, 4096), 'blk.{i}.time_mix_key.weight': (4096, 4096), 'blk.{i}.time_mix_value.weight': (4096, 4096), 'blk.{i}.time_mix_receptance.weight': (4096, 4096), 'blk.{i}.time_mix_gate.weight': (4096, 4096), 'blk.{i}.time_mix_ln.weight': (4096,), 'blk.{i}.time_mix_ln.bias': (4096,), 'blk.{i}.time_mix_output.weight': (4096, 4096), 'blk.{i}.channel_mix_lerp_k.weight': (4096,), 'blk.{i}.channel_mix_lerp_r.weight': (4096,), 'blk.{i}.channel_mix_key.weight': (4096, 11008), 'blk.{i}.channel_mix_value.weight': (11008, 4096), 'blk.{i}.channel_mix_receptance.weight': (4096, 4096)}),
})
for _k in ("rwkv7", "rwkv6"):
    ADDED_BUILDERS[_k] = lambda _k=_k: recorded_model(_k)
    ADDED_ON_GRID.append(_k)
    ADDED_QUANT[_k] = "f16"

# arwkv7 and rwkv6qwen2: RWKV time mixing with a Qwen2-style FFN and 32 / 8 heads, token_shift_count 1
RECORDED.update({
    'arwkv7': ('arwkv7', 2,
        [('arwkv7.context_length', 8192, 4), ('arwkv7.embedding_length', 4096, 4), ('arwkv7.block_count', 2, 4), ('arwkv7.feed_forward_length', 11008, 4), ('arwkv7.attention.layer_norm_rms_epsilon', 1e-05, 6), ('arwkv7.rope.freq_base', 10000.0, 6), ('arwkv7.vocab_size', 32000, 4), ('arwkv7.attention.layer_norm_epsilon', 1e-05, 6), ('arwkv7.wkv.head_size', 64, 4), ('arwkv7.attention.decay_lora_rank', 64, 4), ('arwkv7.attention.iclr_lora_rank', 64, 4), ('arwkv7.attention.value_residual_mix_lora_rank', 32, 4), ('arwkv7.attention.gate_lora_rank', 128, 4), ('arwkv7.token_shift_count', 1, 4), ('arwkv7.attention.head_count', 32, 4), ('arwkv7.attention.head_count_kv', 8, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.time_mix_w0.weight': (4096,), 'blk.{i}.time_mix_w1.weight': (4096, 64), 'blk.{i}.time_mix_w2.weight': (64, 4096), 'blk.{i}.time_mix_a0.weight': (4096,), 'blk.{i}.time_mix_a1.weight': (4096, 64), 'blk.{i}.time_mix_a2.weight': (64, 4096), 'blk.{i}.time_mix_v0.weight': (4096,), 'blk.0.time_mix_v1.weight': (4096, 64), 'blk.0.time_mix_v2.weight': (64, 4096), 'blk.{i}.time_mix_lerp_fused.weight': (4096, 1, 1, 5), 'blk.{i}.time_mix_k_k.weight': (4096,), 'blk.{i}.time_mix_k_a.weight': (4096,), 'blk.{i}.time_mix_r_k.weight': (4096,), 'blk.{i}.time_mix_key.weight': (4096, 4096), 'blk.{i}.time_mix_value.weight': (4096, 4096), 'blk.{i}.time_mix_receptance.weight': (4096, 4096), 'blk.{i}.time_mix_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008), 'blk.1.time_mix_v1.weight': (4096, 32), 'blk.1.time_mix_v2.weight': (32, 4096)}),
    'rwkv6qwen2': ('rwkv6qwen2', 2,
        [('rwkv6qwen2.context_length', 8192, 4), ('rwkv6qwen2.embedding_length', 4096, 4), ('rwkv6qwen2.block_count', 2, 4), ('rwkv6qwen2.feed_forward_length', 11008, 4), ('rwkv6qwen2.attention.layer_norm_rms_epsilon', 1e-05, 6), ('rwkv6qwen2.rope.freq_base', 10000.0, 6), ('rwkv6qwen2.vocab_size', 32000, 4), ('rwkv6qwen2.attention.layer_norm_epsilon', 1e-05, 6), ('rwkv6qwen2.wkv.head_size', 64, 4), ('rwkv6qwen2.time_mix_extra_dim', 32, 4), ('rwkv6qwen2.time_decay_extra_dim', 64, 4), ('rwkv6qwen2.rescale_every_n_layers', 6, 4), ('rwkv6qwen2.token_shift_count', 1, 4), ('rwkv6qwen2.attention.head_count', 32, 4), ('rwkv6qwen2.attention.head_count_kv', 8, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.time_mix_w1.weight': (4096, 160), 'blk.{i}.time_mix_w2.weight': (32, 4096, 5), 'blk.{i}.time_mix_lerp_x.weight': (4096,), 'blk.{i}.time_mix_lerp_fused.weight': (4096, 1, 1, 5), 'blk.{i}.time_mix_decay.weight': (4096,), 'blk.{i}.time_mix_decay_w1.weight': (4096, 64), 'blk.{i}.time_mix_decay_w2.weight': (64, 4096), 'blk.{i}.time_mix_key.weight': (4096, 512), 'blk.{i}.time_mix_value.weight': (4096, 512), 'blk.{i}.time_mix_receptance.weight': (4096, 4096), 'blk.{i}.time_mix_gate.weight': (4096, 4096), 'blk.{i}.time_mix_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate.weight': (4096, 11008), 'blk.{i}.ffn_down.weight': (11008, 4096), 'blk.{i}.ffn_up.weight': (4096, 11008)}),
})
for _k in ("arwkv7", "rwkv6qwen2"):
    ADDED_BUILDERS[_k] = lambda _k=_k: recorded_model(_k)
    ADDED_ON_GRID.append(_k)
    ADDED_QUANT[_k] = "f16"

# t5encoder: an encoder that llama.cpp@0c1e57098 still gives a full KV cache; its loader sizes Q and O with
# n_embd_k_gqa, so the file is MHA (32 KV heads); 32 relative-position buckets in layer 0
RECORDED.update({
    't5encoder': ('t5encoder', 2,
        [('t5encoder.context_length', 8192, 4), ('t5encoder.embedding_length', 4096, 4), ('t5encoder.block_count', 2, 4), ('t5encoder.feed_forward_length', 11008, 4), ('t5encoder.attention.head_count', 32, 4), ('t5encoder.attention.head_count_kv', 32, 4), ('t5encoder.attention.layer_norm_rms_epsilon', 1e-05, 6), ('t5encoder.rope.freq_base', 10000.0, 6), ('t5encoder.vocab_size', 32000, 4), ('t5encoder.attention.layer_norm_epsilon', 1e-05, 6), ('t5encoder.attention.relative_buckets_count', 32, 4)],
        {'token_embd.weight': (4096, 32000), 'enc.output_norm.weight': (4096,), 'enc.blk.{i}.attn_norm.weight': (4096,), 'enc.blk.{i}.attn_q.weight': (4096, 4096), 'enc.blk.{i}.attn_k.weight': (4096, 4096), 'enc.blk.{i}.attn_v.weight': (4096, 4096), 'enc.blk.{i}.attn_o.weight': (4096, 4096), 'enc.blk.{i}.ffn_norm.weight': (4096,), 'enc.blk.{i}.ffn_down.weight': (11008, 4096), 'enc.blk.{i}.ffn_up.weight': (4096, 11008), 'enc.blk.0.attn_rel_b.weight': (32, 32)}),
})
ADDED_BUILDERS["t5encoder"] = lambda: recorded_model("t5encoder")
ADDED_ON_GRID.append("t5encoder")
ADDED_QUANT["t5encoder"] = "f16"

# minimax-01: a lightning-attention layer and a softmax-attention layer (full_attention_interval 2), MoE FFNs
RECORDED.update({
    'minimax-01': ('minimax-01', 2,
        [('minimax-01.context_length', 8192, 4), ('minimax-01.embedding_length', 4096, 4), ('minimax-01.block_count', 2, 4), ('minimax-01.feed_forward_length', 11008, 4), ('minimax-01.attention.head_count', 32, 4), ('minimax-01.attention.head_count_kv', 8, 4), ('minimax-01.attention.layer_norm_rms_epsilon', 1e-05, 6), ('minimax-01.rope.freq_base', 10000.0, 6), ('minimax-01.vocab_size', 32000, 4), ('minimax-01.attention.layer_norm_epsilon', 1e-05, 6), ('minimax-01.expert_count', 8, 4), ('minimax-01.expert_used_count', 2, 4), ('minimax-01.expert_feed_forward_length', 2048, 4), ('minimax-01.residual_scale', 1.0, 6), ('minimax-01.full_attention_interval', 2, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 11008, 8), 'blk.{i}.ffn_down_exps.weight': (11008, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 11008, 8), 'blk.0.attn_norm_2.weight': (4096,), 'blk.0.attn_qkv.weight': (4096, 12288), 'blk.0.attn_gate.weight': (4096, 4096), 'blk.1.attn_qkv.weight': (4096, 6144)}),
})
ADDED_BUILDERS["minimax-01"] = lambda: recorded_model("minimax-01")
ADDED_ON_GRID.append("minimax-01")
ADDED_QUANT["minimax-01"] = "f16"

# kimi-k3: kimi-linear's layer kinds and dims (3 KDA, 1 MLA) with what its loader adds: attention-residual
# scores (attn_res.block_size), one ssm_g gate in place of ssm_g_a / ssm_g_b, SiTU activation betas
RECORDED.update({
    'kimi-k3': ('kimi-k3', 4,
        [('kimi-k3.context_length', 8192, 4), ('kimi-k3.embedding_length', 2304, 4), ('kimi-k3.block_count', 4, 4), ('kimi-k3.feed_forward_length', 9216, 4), ('kimi-k3.attention.head_count', 32, 4), ('kimi-k3.attention.head_count_kv', [0, 0, 0, 1], 'INT32'), ('kimi-k3.attention.layer_norm_rms_epsilon', 1e-05, 6), ('kimi-k3.rope.freq_base', 10000.0, 6), ('kimi-k3.vocab_size', 32000, 4), ('kimi-k3.attention.key_length', 576, 4), ('kimi-k3.attention.value_length', 512, 4), ('kimi-k3.attention.key_length_mla', 192, 4), ('kimi-k3.attention.value_length_mla', 128, 4), ('kimi-k3.rope.dimension_count', 64, 4), ('kimi-k3.attention.kv_lora_rank', 512, 4), ('kimi-k3.ssm.conv_kernel', 4, 4), ('kimi-k3.kda.head_dim', 128, 4), ('kimi-k3.expert_count', 8, 4), ('kimi-k3.expert_used_count', 2, 4), ('kimi-k3.expert_feed_forward_length', 1024, 4), ('kimi-k3.expert_shared_count', 1, 4), ('kimi-k3.leading_dense_block_count', 1, 4), ('kimi-k3.expert_gating_func', 2, 4), ('kimi-k3.attn_res.block_size', 64, 4), ('kimi-k3.activation.situ_beta', 1.0, 6), ('kimi-k3.activation.situ_linear_beta', 1.0, 6)],
        {'token_embd.weight': (2304, 32000), 'output_norm.weight': (2304,), 'output.weight': (2304, 32000), 'blk.{i}.attn_norm.weight': (2304,), 'blk.{i}.ffn_norm.weight': (2304,), 'blk.0.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.0.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.0.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.0.attn_q.weight': (2304, 4096), 'blk.0.attn_k.weight': (2304, 4096), 'blk.0.attn_v.weight': (2304, 4096), 'blk.0.ssm_f_a.weight': (2304, 128), 'blk.0.ssm_f_b.weight': (128, 4096), 'blk.0.ssm_beta.weight': (2304, 32), 'blk.0.ssm_a': (32,), 'blk.0.ssm_dt.bias': (4096,), 'blk.0.ssm_norm.weight': (128,), 'blk.{i}.attn_output.weight': (4096, 2304), 'blk.0.ffn_gate.weight': (2304, 9216), 'blk.0.ffn_down.weight': (9216, 2304), 'blk.0.ffn_up.weight': (2304, 9216), 'blk.1.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.1.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.1.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.1.attn_q.weight': (2304, 4096), 'blk.1.attn_k.weight': (2304, 4096), 'blk.1.attn_v.weight': (2304, 4096), 'blk.1.ssm_f_a.weight': (2304, 128), 'blk.1.ssm_f_b.weight': (128, 4096), 'blk.1.ssm_beta.weight': (2304, 32), 'blk.1.ssm_a': (32,), 'blk.1.ssm_dt.bias': (4096,), 'blk.1.ssm_norm.weight': (128,), 'blk.1.ffn_gate_inp.weight': (2304, 8), 'blk.1.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.1.ffn_down_exps.weight': (1024, 2304, 8), 'blk.1.ffn_up_exps.weight': (2304, 1024, 8), 'blk.1.exp_probs_b.bias': (8,), 'blk.1.ffn_gate_shexp.weight': (2304, 1024), 'blk.1.ffn_down_shexp.weight': (1024, 2304), 'blk.1.ffn_up_shexp.weight': (2304, 1024), 'blk.2.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.2.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.2.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.2.attn_q.weight': (2304, 4096), 'blk.2.attn_k.weight': (2304, 4096), 'blk.2.attn_v.weight': (2304, 4096), 'blk.2.ssm_f_a.weight': (2304, 128), 'blk.2.ssm_f_b.weight': (128, 4096), 'blk.2.ssm_beta.weight': (2304, 32), 'blk.2.ssm_a': (32,), 'blk.2.ssm_dt.bias': (4096,), 'blk.2.ssm_norm.weight': (128,), 'blk.2.ffn_gate_inp.weight': (2304, 8), 'blk.2.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.2.ffn_down_exps.weight': (1024, 2304, 8), 'blk.2.ffn_up_exps.weight': (2304, 1024, 8), 'blk.2.exp_probs_b.bias': (8,), 'blk.2.ffn_gate_shexp.weight': (2304, 1024), 'blk.2.ffn_down_shexp.weight': (1024, 2304), 'blk.2.ffn_up_shexp.weight': (2304, 1024), 'blk.3.attn_kv_a_norm.weight': (512,), 'blk.3.attn_q.weight': (2304, 6144), 'blk.3.attn_kv_a_mqa.weight': (2304, 576), 'blk.3.attn_k_b.weight': (128, 512, 32), 'blk.3.attn_v_b.weight': (512, 128, 32), 'blk.3.ffn_gate_inp.weight': (2304, 8), 'blk.3.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.3.ffn_down_exps.weight': (1024, 2304, 8), 'blk.3.ffn_up_exps.weight': (2304, 1024, 8), 'blk.3.exp_probs_b.bias': (8,), 'blk.3.ffn_gate_shexp.weight': (2304, 1024), 'blk.3.ffn_down_shexp.weight': (1024, 2304), 'blk.3.ffn_up_shexp.weight': (2304, 1024), 'output_res_score.weight': (2304,), 'blk.{i}.attn_res_score.weight': (2304,), 'blk.{i}.ffn_res_score.weight': (2304,), 'blk.0.ssm_g.weight': (2304, 4096), 'blk.1.ssm_g.weight': (2304, 4096), 'blk.2.ssm_g.weight': (2304, 4096)}),
})
ADDED_BUILDERS["kimi-k3"] = lambda: recorded_model("kimi-k3")
ADDED_ON_GRID.append("kimi-k3")
ADDED_QUANT["kimi-k3"] = "f16"

# hy_v4: DeepSeek-V3's MLA dims (the latent K-only cache) with what its loader adds: attention sinks, a gate, and
# hyper-connection weights per block (vocab 32000, as the synthetic tokenizer holds)
RECORDED.update({
    'hy_v4': ('hy_v4', 2,
        [('hy_v4.context_length', 163840, 4), ('hy_v4.embedding_length', 7168, 4), ('hy_v4.block_count', 2, 4), ('hy_v4.feed_forward_length', 18432, 4), ('hy_v4.attention.head_count', 128, 4), ('hy_v4.attention.head_count_kv', 1, 4), ('hy_v4.attention.layer_norm_rms_epsilon', 1e-06, 6), ('hy_v4.rope.freq_base', 10000.0, 6), ('hy_v4.vocab_size', 32000, 4), ('hy_v4.attention.key_length', 576, 4), ('hy_v4.attention.value_length', 512, 4), ('hy_v4.attention.key_length_mla', 192, 4), ('hy_v4.attention.value_length_mla', 128, 4), ('hy_v4.attention.q_lora_rank', 1536, 4), ('hy_v4.attention.kv_lora_rank', 512, 4), ('hy_v4.rope.dimension_count', 64, 4), ('hy_v4.leading_dense_block_count', 3, 4), ('hy_v4.expert_count', 16, 4), ('hy_v4.expert_used_count', 8, 4), ('hy_v4.expert_feed_forward_length', 2048, 4), ('hy_v4.expert_shared_count', 1, 4), ('hy_v4.expert_weights_scale', 2.5, 6), ('hy_v4.expert_weights_norm', True, 7), ('hy_v4.expert_gating_func', 2, 4), ('hy_v4.rope.scaling.type', 'yarn', 8), ('hy_v4.rope.scaling.factor', 40.0, 6), ('hy_v4.rope.scaling.original_context_length', 4096, 4), ('hy_v4.rope.scaling.yarn_log_multiplier', 0.1, 6), ('hy_v4.hyper_connection.count', 1, 4), ('hy_v4.hyper_connection.epsilon', 1e-05, 6), ('hy_v4.hyper_connection.magnitude', 1.0, 6)],
        {'token_embd.weight': (7168, 32000), 'output_norm.weight': (7168,), 'output.weight': (7168, 32000), 'blk.{i}.attn_norm.weight': (7168,), 'blk.{i}.attn_q_a_norm.weight': (1536,), 'blk.{i}.attn_kv_a_norm.weight': (512,), 'blk.{i}.attn_q_a.weight': (7168, 1536), 'blk.{i}.attn_q_b.weight': (1536, 24576), 'blk.{i}.attn_kv_a_mqa.weight': (7168, 576), 'blk.{i}.attn_k_b.weight': (128, 512, 128), 'blk.{i}.attn_v_b.weight': (512, 128, 128), 'blk.{i}.attn_output.weight': (16384, 7168), 'blk.{i}.ffn_norm.weight': (7168,), 'blk.{i}.ffn_gate.weight': (7168, 18432), 'blk.{i}.ffn_down.weight': (18432, 7168), 'blk.{i}.ffn_up.weight': (7168, 18432), 'output_hc_fn.weight': (7168,), 'output_hc_base.weight': (1,), 'output_hc_scale.weight': (1,), 'blk.{i}.attn_sinks.weight': (128,), 'blk.{i}.attn_gate.weight': (7168, 16384), 'blk.{i}.hc_attn_fn.weight': (7168, 2), 'blk.{i}.hc_attn_base.weight': (2,), 'blk.{i}.hc_attn_scale.weight': (2,), 'blk.{i}.hc_ffn_fn.weight': (7168, 2), 'blk.{i}.hc_ffn_base.weight': (2,), 'blk.{i}.hc_ffn_scale.weight': (2,)}),
})
ADDED_BUILDERS["hy_v4"] = lambda: recorded_model("hy_v4")
ADDED_ON_GRID.append("hy_v4")
ADDED_QUANT["hy_v4"] = "f16"

# minimax-m3: GQA layers with MiniMax sparse attention's indexer (8 heads = the KV heads, key 64, top-k 2048): the
# indexer cache's key is 64 wide and its value one 128-wide head
RECORDED.update({
    'minimax-m3': ('minimax-m3', 2,
        [('minimax-m3.context_length', 8192, 4), ('minimax-m3.embedding_length', 4096, 4), ('minimax-m3.block_count', 2, 4), ('minimax-m3.feed_forward_length', 11008, 4), ('minimax-m3.attention.head_count', 32, 4), ('minimax-m3.attention.head_count_kv', 8, 4), ('minimax-m3.attention.layer_norm_rms_epsilon', 1e-05, 6), ('minimax-m3.rope.freq_base', 10000.0, 6), ('minimax-m3.vocab_size', 32000, 4), ('minimax-m3.attention.layer_norm_epsilon', 1e-05, 6), ('minimax-m3.expert_count', 8, 4), ('minimax-m3.expert_used_count', 2, 4), ('minimax-m3.expert_feed_forward_length', 2048, 4), ('minimax-m3.attention.indexer.head_count', 8, 4), ('minimax-m3.attention.indexer.key_length', 64, 4), ('minimax-m3.attention.indexer.top_k', 2048, 4), ('minimax-m3.expert_shared_count', 1, 4), ('minimax-m3.expert_gating_func', 1, 4), ('minimax-m3.attention.indexer.block_size', 64, 4), ('minimax-m3.attention.indexer.local_blocks', 1, 4)],
        {'token_embd.weight': (4096, 32000), 'output_norm.weight': (4096,), 'output.weight': (4096, 32000), 'blk.{i}.attn_norm.weight': (4096,), 'blk.{i}.attn_q.weight': (4096, 4096), 'blk.{i}.attn_k.weight': (4096, 1024), 'blk.{i}.attn_v.weight': (4096, 1024), 'blk.{i}.attn_output.weight': (4096, 4096), 'blk.{i}.ffn_norm.weight': (4096,), 'blk.{i}.ffn_gate_inp.weight': (4096, 8), 'blk.{i}.ffn_up_exps.weight': (4096, 2048, 8), 'blk.{i}.ffn_down_exps.weight': (2048, 4096, 8), 'blk.{i}.ffn_gate_exps.weight': (4096, 2048, 8), 'blk.{i}.attn_q_norm.weight': (128,), 'blk.{i}.attn_k_norm.weight': (128,), 'blk.{i}.exp_probs_b.bias': (8,), 'blk.{i}.ffn_gate_shexp.weight': (4096, 2048), 'blk.{i}.ffn_down_shexp.weight': (2048, 4096), 'blk.{i}.ffn_up_shexp.weight': (4096, 2048), 'blk.{i}.indexer.q_proj.weight': (4096, 512), 'blk.{i}.indexer.k_proj.weight': (4096, 64), 'blk.{i}.indexer.q_norm.weight': (64,), 'blk.{i}.indexer.k_norm.weight': (64,)}),
})
ADDED_BUILDERS["minimax-m3"] = lambda: recorded_model("minimax-m3")
ADDED_ON_GRID.append("minimax-m3")
ADDED_QUANT["minimax-m3"] = "f16"

# bailingmoe3: kimi-linear's layer kinds and dims (3 KDA, 1 MLA) as its loader wants them: full-width ssm_f_a /
# ssm_g_a projections, a per-head attention gate on the MLA layer, kda.gate_lower_bound < 0
RECORDED.update({
    'bailingmoe3': ('bailingmoe3', 4,
        [('bailingmoe3.context_length', 8192, 4), ('bailingmoe3.embedding_length', 2304, 4), ('bailingmoe3.block_count', 4, 4), ('bailingmoe3.feed_forward_length', 9216, 4), ('bailingmoe3.attention.head_count', 32, 4), ('bailingmoe3.attention.head_count_kv', [0, 0, 0, 1], 'INT32'), ('bailingmoe3.attention.layer_norm_rms_epsilon', 1e-05, 6), ('bailingmoe3.rope.freq_base', 10000.0, 6), ('bailingmoe3.vocab_size', 32000, 4), ('bailingmoe3.attention.key_length', 576, 4), ('bailingmoe3.attention.value_length', 512, 4), ('bailingmoe3.attention.key_length_mla', 192, 4), ('bailingmoe3.attention.value_length_mla', 128, 4), ('bailingmoe3.rope.dimension_count', 64, 4), ('bailingmoe3.attention.kv_lora_rank', 512, 4), ('bailingmoe3.ssm.conv_kernel', 4, 4), ('bailingmoe3.kda.head_dim', 128, 4), ('bailingmoe3.expert_count', 8, 4), ('bailingmoe3.expert_used_count', 2, 4), ('bailingmoe3.expert_feed_forward_length', 1024, 4), ('bailingmoe3.expert_shared_count', 1, 4), ('bailingmoe3.leading_dense_block_count', 1, 4), ('bailingmoe3.expert_gating_func', 2, 4), ('bailingmoe3.kda.gate_lower_bound', -5.0, 6)],
        {'token_embd.weight': (2304, 32000), 'output_norm.weight': (2304,), 'output.weight': (2304, 32000), 'blk.{i}.attn_norm.weight': (2304,), 'blk.{i}.ffn_norm.weight': (2304,), 'blk.0.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.0.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.0.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.0.attn_q.weight': (2304, 4096), 'blk.0.attn_k.weight': (2304, 4096), 'blk.0.attn_v.weight': (2304, 4096), 'blk.0.ssm_f_a.weight': (2304, 4096), 'blk.0.ssm_beta.weight': (2304, 32), 'blk.0.ssm_a': (1, 32), 'blk.0.ssm_dt.bias': (4096,), 'blk.0.ssm_g_a.weight': (2304, 4096), 'blk.0.ssm_norm.weight': (128,), 'blk.{i}.attn_output.weight': (4096, 2304), 'blk.0.ffn_gate.weight': (2304, 9216), 'blk.0.ffn_down.weight': (9216, 2304), 'blk.0.ffn_up.weight': (2304, 9216), 'blk.1.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.1.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.1.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.1.attn_q.weight': (2304, 4096), 'blk.1.attn_k.weight': (2304, 4096), 'blk.1.attn_v.weight': (2304, 4096), 'blk.1.ssm_f_a.weight': (2304, 4096), 'blk.1.ssm_beta.weight': (2304, 32), 'blk.1.ssm_a': (1, 32), 'blk.1.ssm_dt.bias': (4096,), 'blk.1.ssm_g_a.weight': (2304, 4096), 'blk.1.ssm_norm.weight': (128,), 'blk.1.ffn_gate_inp.weight': (2304, 8), 'blk.1.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.1.ffn_down_exps.weight': (1024, 2304, 8), 'blk.1.ffn_up_exps.weight': (2304, 1024, 8), 'blk.1.exp_probs_b.bias': (8,), 'blk.1.ffn_gate_shexp.weight': (2304, 1024), 'blk.1.ffn_down_shexp.weight': (1024, 2304), 'blk.1.ffn_up_shexp.weight': (2304, 1024), 'blk.2.ssm_conv1d_q.weight': (4, 1, 4096), 'blk.2.ssm_conv1d_k.weight': (4, 1, 4096), 'blk.2.ssm_conv1d_v.weight': (4, 1, 4096), 'blk.2.attn_q.weight': (2304, 4096), 'blk.2.attn_k.weight': (2304, 4096), 'blk.2.attn_v.weight': (2304, 4096), 'blk.2.ssm_f_a.weight': (2304, 4096), 'blk.2.ssm_beta.weight': (2304, 32), 'blk.2.ssm_a': (1, 32), 'blk.2.ssm_dt.bias': (4096,), 'blk.2.ssm_g_a.weight': (2304, 4096), 'blk.2.ssm_norm.weight': (128,), 'blk.2.ffn_gate_inp.weight': (2304, 8), 'blk.2.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.2.ffn_down_exps.weight': (1024, 2304, 8), 'blk.2.ffn_up_exps.weight': (2304, 1024, 8), 'blk.2.exp_probs_b.bias': (8,), 'blk.2.ffn_gate_shexp.weight': (2304, 1024), 'blk.2.ffn_down_shexp.weight': (1024, 2304), 'blk.2.ffn_up_shexp.weight': (2304, 1024), 'blk.3.attn_kv_a_norm.weight': (512,), 'blk.3.attn_q.weight': (2304, 6144), 'blk.3.attn_kv_a_mqa.weight': (2304, 576), 'blk.3.attn_k_b.weight': (128, 512, 32), 'blk.3.attn_v_b.weight': (512, 128, 32), 'blk.3.ffn_gate_inp.weight': (2304, 8), 'blk.3.ffn_gate_exps.weight': (2304, 1024, 8), 'blk.3.ffn_down_exps.weight': (1024, 2304, 8), 'blk.3.ffn_up_exps.weight': (2304, 1024, 8), 'blk.3.exp_probs_b.bias': (8,), 'blk.3.ffn_gate_shexp.weight': (2304, 1024), 'blk.3.ffn_down_shexp.weight': (1024, 2304), 'blk.3.ffn_up_shexp.weight': (2304, 1024), 'blk.3.attn_gate.weight': (2304, 32)}),
})
ADDED_BUILDERS["bailingmoe3"] = lambda: recorded_model("bailingmoe3")
ADDED_ON_GRID.append("bailingmoe3")
ADDED_QUANT["bailingmoe3"] = "f16"
ADDED_ON_GRID.append("maple")


def phi3_mini_4k(n_layers: int | None = None) -> SynthModel:
    """Phi-3-mini-4k-instruct: microsoft/Phi-3-mini-4k-instruct config.json: hidden 3072, 32 layers, 32 heads = KV
    heads (head 96), intermediate 8192 (gate and up fused into one ffn_up of 2 x 8192), fused QKV, vocab 32064,
    sliding_window 2047, untied. Its tokenizer adds "<|endoftext|>" (id 32000, a control token) after the SPM
    pieces: llama_vocab::impl::load sets per-token attributes on "<unk>", "<s>", "</s>" and "<|endoftext|>" with
    token_to_id.at() when general.name says phi-3 / phi3, so a vocabulary without it fails with
    "unordered_map::at"."""
    import dataclasses  # lazy: only the renaming builders use it

    arch, n_embd, n_head, hd, n_ff, n_vocab = "phi3", 3072, 32, 96, 8192, 32064
    nl = _layers(n_layers, 32)
    md = _Meta(arch).base(ctx=4096, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_head,
                          rms_eps=1e-5, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", hd).u32("attention.sliding_window", 2047)
    md.u32("rope.scaling.original_context_length", 4096)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_qkv.weight", n_embd, 3 * n_embd),
               _blk(i, "attn_output.weight", n_embd, n_embd), _blk(i, "ffn_norm.weight", n_embd),
               _blk(i, "ffn_up.weight", n_embd, 2 * n_ff), _blk(i, "ffn_down.weight", n_ff, n_embd)]
    m = _model("phi-3-mini-4k", arch, "microsoft/Phi-3-mini-4k-instruct config.json", n_vocab, nl, md, ts, False)
    return dataclasses.replace(m, added_tokens=("<|endoftext|>",))


ADDED_BUILDERS["phi3"] = lambda: phi3_mini_4k(2)
ADDED_ON_GRID.append("phi3")


def laguna(n_layers: int | None = None) -> SynthModel:
    """laguna (poolside Laguna-XS.2's layer kinds on the generic 4096-wide shape): per-layer head counts (32 on the
    full layer, 48 on the sliding ones; 8 KV heads of 128), a sliding window of 4096 with no pattern key, so
    laguna.cpp's set_swa_pattern(4, dense_first=true) makes layer 0 full and 1-3 sliding; QK norms, a per-head
    softplus output gate (attn_gate {n_embd, n_head(il)}), one dense leading layer, then sigmoid-routed MoE layers
    (8 experts of 2048, 2 used) with a score bias and one shared expert of 2048. Tensor set as
    llama.cpp@0c1e57098's loader asks for it."""
    return laguna_model("laguna-4l", "Laguna-XS.2's layer kinds on the generic shape", n_layers=4, n_embd=4096,
                        heads=[32, 48, 48, 48], n_ff=11008, n_vocab=32000, n_exp=8, n_used=2, ff_exp=2048,
                        ff_sh=2048, window=4096, eps=1e-5, context=8192)


def laguna_model(key: str, source: str, *, n_layers: int, n_embd: int, heads: list[int], n_ff: int, n_vocab: int,
                 n_exp: int, n_used: int, ff_exp: int, ff_sh: int, window: int, eps: float, context: int,
                 hd: int = 128, n_kv: int = 8) -> SynthModel:
    """A laguna file of these shapes, with the tensor set llama.cpp@0c1e57098's loader asks for."""
    arch = "laguna"
    md = _Meta(arch)
    md.u32("context_length", context).u32("embedding_length", n_embd).u32("block_count", n_layers)
    md.u32("feed_forward_length", n_ff)
    md.items.append((f"{arch}.attention.head_count", heads, (VT.ARRAY, VT.INT32)))
    md.u32("attention.head_count_kv", n_kv).f32("attention.layer_norm_rms_epsilon", eps)
    md.f32("rope.freq_base", 500000.0).u32("vocab_size", n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", 64)
    md.u32("attention.sliding_window", window).f32("rope.freq_base_swa", 10000.0).u32("rope.dimension_count_swa", hd)
    md.u32("expert_count", n_exp).u32("expert_used_count", n_used).u32("expert_feed_forward_length", ff_exp)
    md.u32("expert_shared_feed_forward_length", ff_sh).u32("leading_dense_block_count", 1)
    md.f32("expert_weights_scale", 2.5).bool("expert_weights_norm", True).u32("expert_gating_func", 2)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        h = heads[i]
        ts += _attn_gqa(i, n_embd, h * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "attn_gate.weight", n_embd, h), _blk(i, "ffn_norm.weight", n_embd)]
        if i == 0:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, ff_sh), _blk(i, "ffn_up_shexp.weight", n_embd, ff_sh),
                   _blk(i, "ffn_down_shexp.weight", ff_sh, n_embd)]
    return _model(key, arch, source, n_vocab, n_layers, md, ts, False)


ADDED_BUILDERS["laguna"] = laguna
ADDED_ON_GRID.append("laguna")


def granite_switch(n_layers: int | None = None) -> SynthModel:
    """graniteswitch on the generic shape (2 blocks, 32 heads / 8 KV heads of 128, fused QKV, tied embeddings) with
    2 adapters of LoRA rank 16: every block holds per-slot LoRA stacks (adapters + 1 slots, tensors named
    blk.N.<proj>.lora_a / lora_b without a .weight suffix) and the loader adds a single-head router attention layer
    at index n_layer (src/models/granite-switch.cpp load_arch_hparams), which the KV cache holds as a third layer.
    Tensor set and keys as llama.cpp@0c1e57098's loader asks for them."""
    arch, n_embd, hd, n_head, n_kv, n_ff, n_vocab = "graniteswitch", 4096, 128, 32, 8, 11008, 32000
    nl, n_ad, rank = 2, 2, 16
    slots, nq, nkv = n_ad + 1, n_head * hd, n_kv * hd
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=10000.0, n_vocab=n_vocab)
    md.f32("logit_scale", 8.0).f32("residual_scale", 0.22).f32("embedding_scale", 12.0).f32("attention.scale", 0.0078125)
    md.u32("adapters.count", n_ad).u32("adapters.lora_rank", rank).f32("adapters.router_gain", 10.0)
    md.i32s("adapters.token_ids_activate", [31998, 31999]).i32s("adapters.token_ids_substitute", [3, 4])
    lora = {"attn_q": (n_embd, nq), "attn_k": (n_embd, nkv), "attn_v": (n_embd, nkv), "attn_output": (nq, n_embd),
            "ffn_gate": (n_embd, n_ff), "ffn_up": (n_embd, n_ff), "ffn_down": (n_ff, n_embd)}
    ts = _embeddings(n_embd, n_vocab, tied=True)
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_qkv.weight", n_embd, nq + 2 * nkv),
               _blk(i, "attn_output.weight", nq, n_embd)] + _ffn_dense(i, n_embd, n_ff)
        for proj, (n_in, n_out) in lora.items():
            ts += [_blk(i, f"{proj}.lora_a", n_in, rank, slots), _blk(i, f"{proj}.lora_b", rank, n_out, slots)]
    return _model("granite-switch-2l", arch, "generic shape with Granite Switch's adapter stacks", n_vocab, nl, md, ts,
                  True)


ADDED_BUILDERS["graniteswitch"] = granite_switch
ADDED_ON_GRID.append("graniteswitch")


def eagle3_draft(n_layers: int | None = None) -> SynthModel:
    """eagle3: an EAGLE-3 draft head for Llama 3.1 8B (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config.json: hidden 4096,
    1 decoder layer, 32 heads / 8 KV heads of 128, intermediate 14336) with its own token_embd and output over a
    32000-token vocabulary, so llama.cpp loads and sizes it standalone (src/models/eagle3.cpp borrows them from the
    target context only when the file lacks them): fc {3 x 4096, 4096} fuses the target's 3 extracted layers
    (target_layers, target_hidden_size), the layer's Q/K/V read the 2 x n_embd concatenation."""
    arch, n_embd, hd, n_head, n_kv, n_ff, n_vocab = "eagle3", 4096, 128, 32, 8, 14336, 32000
    md = _Meta(arch).base(ctx=2048, n_embd=n_embd, n_layers=1, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=500000.0, n_vocab=n_vocab)
    md.i32s("target_layers", [2, 16, 29]).u32("target_hidden_size", 4096)
    ts = _embeddings(n_embd, n_vocab, tied=False) + [Tensor("fc.weight", (3 * 4096, n_embd))]
    ts += [_blk(0, "attn_norm.weight", n_embd), _blk(0, "attn_norm_2.weight", n_embd),
           _blk(0, "attn_q.weight", 2 * n_embd, n_head * hd), _blk(0, "attn_k.weight", 2 * n_embd, n_kv * hd),
           _blk(0, "attn_v.weight", 2 * n_embd, n_kv * hd), _blk(0, "attn_output.weight", n_head * hd, n_embd)]
    ts += _ffn_dense(0, n_embd, n_ff)
    return _model("eagle3-llama3.1-8b", arch, "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config.json", n_vocab, 1, md, ts,
                  False)


ADDED_BUILDERS["eagle3"] = eagle3_draft
ADDED_ON_GRID.append("eagle3")


def dflash_draft(n_layers: int | None = None) -> SynthModel:
    """dflash: a DFlash block-diffusion draft with Qwen3-8B-shaped layers (hidden 4096, 32 heads / 8 KV heads of 128
    with Q/K norms, FFN 12288) on 2 layers, fusing 5 target layers (target_layers; fc {5 x 4096, 4096}, its norm
    enc.output_norm) and carrying its own token_embd and output over a 32000-token vocabulary, so llama.cpp loads
    and sizes it standalone (src/models/dflash.cpp: both optional, taken from the target context otherwise)."""
    arch, n_embd, hd, n_head, n_kv, n_ff, n_vocab = "dflash", 4096, 128, 32, 8, 12288, 32000
    nl = _layers(n_layers, 2)
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.i32s("target_layers", [1, 9, 17, 25, 33]).u32("block_size", 16)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    ts += [Tensor("fc.weight", (5 * n_embd, n_embd)), Tensor("enc.output_norm.weight", (n_embd,))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd) + _ffn_dense(i, n_embd, n_ff)
    return _model("dflash-2l", arch, "Qwen3-8B-shaped DFlash draft layers", n_vocab, nl, md, ts, False)


ADDED_BUILDERS["dflash"] = dflash_draft
ADDED_ON_GRID.append("dflash")


def flan_t5_base(n_layers: int | None = None) -> SynthModel:
    """t5 (encoder-decoder): google/flan-t5-base config.json: d_model 768, 12 heads of d_kv 64, gated-GELU FFN d_ff
    2048, vocab 32128, relative_attention_num_buckets 32, untied lm_head; here 3 encoder blocks (block_count) and
    2 decoder blocks (decoder_block_count), so the cache's layer count tells which one llama.cpp sizes it by
    (measured: block_count, the encoder's). Tensor names as src/models/t5.cpp loads them (enc.blk.N.*, dec.blk.N.*,
    the relative-position bias on the first block only)."""
    arch, n_embd, hd, n_head, n_ff, n_vocab, n_enc, n_dec = "t5", 768, 64, 12, 2048, 32128, 3, 2
    md = _Meta(arch).base(ctx=512, n_embd=n_embd, n_layers=n_enc, n_ff=n_ff, n_head=n_head, n_head_kv=n_head,
                          rms_eps=1e-6, rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("attention.relative_buckets_count", 32)
    md.u32("decoder_block_count", n_dec).u32("decoder_start_token_id", 0)
    e, a = n_embd, n_head * hd

    def block(p: str, cross: bool) -> list[Tensor]:
        ts = [Tensor(p + "attn_norm.weight", (e,)), Tensor(p + "attn_q.weight", (e, a)),
              Tensor(p + "attn_k.weight", (e, a)), Tensor(p + "attn_v.weight", (e, a)), Tensor(p + "attn_o.weight", (a, e))]
        if cross:
            ts += [Tensor(p + "cross_attn_norm.weight", (e,))]
            ts += [Tensor(p + f"cross_attn_{x}.weight", (e, a)) for x in "qkv"] + [Tensor(p + "cross_attn_o.weight", (a, e))]
        return ts + [Tensor(p + "ffn_norm.weight", (e,)), Tensor(p + "ffn_gate.weight", (e, n_ff)),
                     Tensor(p + "ffn_down.weight", (n_ff, e)), Tensor(p + "ffn_up.weight", (e, n_ff))]

    ts = [Tensor("token_embd.weight", (e, n_vocab)), Tensor("enc.output_norm.weight", (e,)),
          Tensor("dec.output_norm.weight", (e,)), Tensor("output.weight", (e, n_vocab))]
    for i in range(n_enc):
        ts += block(f"enc.blk.{i}.", False) + ([Tensor("enc.blk.0.attn_rel_b.weight", (n_head, 32))] if i == 0 else [])
    for i in range(n_dec):
        ts += block(f"dec.blk.{i}.", True) + ([Tensor("dec.blk.0.attn_rel_b.weight", (n_head, 32))] if i == 0 else [])
    return _model("flan-t5-base-3e2d", arch, "google/flan-t5-base config.json", n_vocab, n_enc, md, ts, False)


ADDED_BUILDERS["t5"] = flan_t5_base
ADDED_ON_GRID.append("t5")


# Metadata and tensors the newer MoE / sparse-attention builders share, written in the order those builders list
# them (a GGUF's keys and tensors keep their order, so the files stay as they were)


def _moe_meta(md: _Meta, n_exp: int, ff_exp: int, used: int = 2) -> _Meta:
    return md.u32("expert_count", n_exp).u32("expert_used_count", used).u32("expert_feed_forward_length", ff_exp)


def _indexer_meta(md: _Meta, heads: int, key: int, top_k: int) -> _Meta:
    """The DSA / lightning indexer's keys (LLM_KV_ATTENTION_INDEXER_*)."""
    md.u32("attention.indexer.head_count", heads).u32("attention.indexer.key_length", key)
    return md.u32("attention.indexer.top_k", top_k)


def _shexp(i: int, n_embd: int, ff: int) -> list[Tensor]:
    """One shared expert: gate, down, up."""
    return [_blk(i, "ffn_gate_shexp.weight", n_embd, ff), _blk(i, "ffn_down_shexp.weight", ff, n_embd),
            _blk(i, "ffn_up_shexp.weight", n_embd, ff)]


def _ffn_dense_then_moe(i: int, n_embd: int, n_ff: int, ff_exp: int, n_exp: int) -> list[Tensor]:
    """One dense leading layer (block 0), then sigmoid-routed MoE with the score bias and one shared expert."""
    if i == 0:
        return _ffn_dense(i, n_embd, n_ff, norm=False)
    return _ffn_moe(i, n_embd, ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)] + _shexp(i, n_embd, ff_exp)


def _hc_meta(md: _Meta, hc: int) -> _Meta:
    """Sinkhorn-normalised hyper-connections (mHC): hc streams, 20 iterations, epsilon 1e-6."""
    return md.u32("hyper_connection.count", hc).u32("hyper_connection.sinkhorn_iterations", 20).f32(
        "hyper_connection.epsilon", 1e-6)


def _hc_mix(i: int, wide: int, hc: int) -> list[Tensor]:
    """A block's mHC weights for its attention and FFN branches (fn over the hc x n_embd streams, base, scale)."""
    mix = (2 + hc) * hc
    return [t for x in ("attn", "ffn") for t in (_blk(i, f"hc_{x}_fn.weight", wide, mix),
                                                  _blk(i, f"hc_{x}_base.weight", mix), _blk(i, f"hc_{x}_scale.weight", 3))]


def dots3note(n_layers: int | None = None) -> SynthModel:
    """dots3note: MLA on every layer (DeepSeek-V3's latent dims: q_lora 1536, kv_lora 512, rope 64, K 192 / V 128 per
    head, 32 heads on a 4096-wide model), layers 1-3 sliding (sliding_window_pattern, window 4096) with the same
    latent geometry (kv_lora_rank_swa 512: a smaller one is sized at key_length in the cache and aborts the graph in
    this build), the DSA indexer (32 heads of 128, top-k 2048) on layer 0 only (attention.indexer.types), a
    head-wise sigmoid output gate, one dense leading layer and sigmoid-routed MoE layers (8 experts of 1024, 2 used,
    one shared). Tensor set as llama.cpp@0c1e57098's loader asks for it (src/models/dots3note.cpp)."""
    arch, n_embd, n_head, n_ff, n_vocab, nl = "dots3note", 4096, 32, 11008, 32000, 4
    ql, kvl, rope, kmla, vmla = 1536, 512, 64, 192, 128
    n_exp, ffe, ih, ik = 8, 1024, 32, 128
    swa, idx = [False, True, True, True], [1, 0, 0, 0]
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=1, rms_eps=1e-6,
                          rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", kvl + rope).u32("attention.value_length", kvl).u32("rope.dimension_count", rope)
    md.u32("attention.q_lora_rank", ql).u32("attention.kv_lora_rank", kvl)
    md.u32("attention.key_length_mla", kmla).u32("attention.value_length_mla", vmla)
    md.u32("attention.kv_lora_rank_swa", kvl).u32("attention.key_length_mla_swa", kmla)
    md.u32("attention.value_length_mla_swa", vmla).u32("attention.sliding_window", 4096).f32("rope.freq_base_swa", 10000.0)
    md.items.append((f"{arch}.attention.sliding_window_pattern", swa, (VT.ARRAY, VT.BOOL)))
    _indexer_meta(md, ih, ik, 2048).i32s("attention.indexer.types", idx)
    _moe_meta(md, n_exp, ffe).u32("expert_shared_count", 1).u32("leading_dense_block_count", 1)
    md.u32("expert_gating_func", 2)
    md.f32("expert_weights_scale", 2.5).bool("expert_weights_norm", True)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_q_a_norm.weight", ql), _blk(i, "attn_kv_a_norm.weight", kvl),
               _blk(i, "attn_k_norm.weight", rope), _blk(i, "attn_q_a.weight", n_embd, ql),
               _blk(i, "attn_q_b.weight", ql, n_head * kmla), _blk(i, "attn_kv_a_mqa.weight", n_embd, kvl + rope),
               _blk(i, "attn_k_b.weight", kmla - rope, kvl, n_head), _blk(i, "attn_v_b.weight", kvl, vmla, n_head),
               _blk(i, "attn_output.weight", n_head * vmla, n_embd), _blk(i, "attn_gate.weight", n_embd, n_head),
               _blk(i, "ffn_norm.weight", n_embd)]
        if idx[i]:
            ts += [_blk(i, "indexer.k_norm.weight", ik), _blk(i, "indexer.k_norm.bias", ik),
                   _blk(i, "indexer.proj.weight", n_embd, ih), _blk(i, "indexer.attn_k.weight", n_embd, ik),
                   _blk(i, "indexer.attn_q_b.weight", ql, ih * ik)]
        ts += _ffn_dense_then_moe(i, n_embd, n_ff, ffe, n_exp)
    return _model("dots3note-4l", arch, "DeepSeek-V3 MLA dims with dots3note's sliding layers and indexer", n_vocab, nl,
                  md, ts, False)


ADDED_BUILDERS["dots3note"] = dots3note
ADDED_ON_GRID.append("dots3note")


def glm5_next(n_layers: int | None = None) -> SynthModel:
    """glm5-next (GLM-5.3-Flash's layer kinds on kimi-linear's 2304-wide shape): 3 KDA layers (head_count_kv 0: 32
    heads of kda.head_dim 128, short convolutions of 4) and 1 nope-only MLA layer (rope.dimension_count 0, the
    assertion in glm5-next.cpp's graph; q_lora 1536, kv_lora 512, K 192 / V 128 per head) with the k-pool DSA
    indexer (32 heads of 128, top-k 2048, kpool 4: indexer_compressor_gate / _ape), mHC weights (hc 4) on every
    block, one dense leading layer, then sigmoid-routed MoE (8 experts of 1024, 2 used, one shared). Tensor set as
    llama.cpp@0c1e57098's loader asks for it."""
    arch, n_embd, n_head, hd, n_ff, n_vocab = "glm5-next", 2304, 32, 128, 9216, 32000
    ql, kvl, kmla, vmla = 1536, 512, 192, 128
    n_exp, ffe, ih, ik, kpool, hc = 8, 1024, 32, 128, 4, 4
    kinds = ["kda", "kda", "kda", "mla"]
    nl = len(kinds)
    md = _Meta(arch)
    md.u32("context_length", 8192).u32("embedding_length", n_embd).u32("block_count", nl).u32("feed_forward_length", n_ff)
    md.u32("attention.head_count", n_head).i32s("attention.head_count_kv", [0 if k == "kda" else 1 for k in kinds])
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 10000.0).u32("vocab_size", n_vocab)
    md.u32("attention.key_length", kvl).u32("attention.value_length", kvl).u32("rope.dimension_count", 0)
    md.u32("attention.key_length_mla", kmla).u32("attention.value_length_mla", vmla)
    md.u32("attention.q_lora_rank", ql).u32("attention.kv_lora_rank", kvl).u32("ssm.conv_kernel", 4).u32("kda.head_dim", hd)
    _moe_meta(md, n_exp, ffe).u32("expert_shared_count", 1).u32("leading_dense_block_count", 1)
    _indexer_meta(md, ih, ik, 2048).u32("attention.indexer.kpool", kpool)
    _hc_meta(md, hc)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    p = n_head * hd
    for i, kind in enumerate(kinds):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "ffn_norm.weight", n_embd)] + _hc_mix(i, hc * n_embd, hc)
        if kind == "kda":
            ts += [_blk(i, f"ssm_conv1d_{x}.weight", 4, 1, p) for x in "qkv"]
            ts += [_blk(i, f"attn_{x}.weight", n_embd, p) for x in "qkv"]
            ts += [_blk(i, "ssm_f_a.weight", n_embd, hd), _blk(i, "ssm_f_b.weight", hd, p),
                   _blk(i, "ssm_beta.weight", n_embd, n_head), _blk(i, "ssm_a", n_head), _blk(i, "ssm_dt.bias", p),
                   _blk(i, "ssm_g_a.weight", n_embd, hd), _blk(i, "ssm_g_b.weight", hd, p), _blk(i, "ssm_norm.weight", hd),
                   _blk(i, "attn_output.weight", p, n_embd)]
        else:
            ts += [_blk(i, "attn_q_a_norm.weight", ql), _blk(i, "attn_kv_a_norm.weight", kvl),
                   _blk(i, "attn_q_a.weight", n_embd, ql), _blk(i, "attn_q_b.weight", ql, n_head * kmla),
                   _blk(i, "attn_kv_a_mqa.weight", n_embd, kvl), _blk(i, "attn_k_b.weight", kmla, kvl, n_head),
                   _blk(i, "attn_v_b.weight", kvl, vmla, n_head), _blk(i, "attn_output.weight", n_head * vmla, n_embd),
                   _blk(i, "indexer.k_norm.weight", ik), _blk(i, "indexer.k_norm.bias", ik),
                   _blk(i, "indexer.proj.weight", n_embd, ih), _blk(i, "indexer.attn_k.weight", n_embd, ik),
                   _blk(i, "indexer.attn_q_b.weight", ql, ih * ik), _blk(i, "indexer_compressor_gate.weight", n_embd, ik),
                   _blk(i, "indexer_compressor_ape.weight", ik, kpool)]
        ts += _ffn_dense_then_moe(i, n_embd, n_ff, ffe, n_exp)
    return _model("glm5-next-4l", arch, "GLM-5.3-Flash's layer kinds on kimi-linear's shape", n_vocab, nl, md, ts, False)


ADDED_BUILDERS["glm5-next"] = glm5_next
ADDED_ON_GRID.append("glm5-next")


def qwen4exp(n_layers: int | None = None) -> SynthModel:
    """qwen4exp on a 2048-wide Qwen3.5-style shape: 3 gated delta-net layers (d_state 128, 16 key groups, 32 value
    heads, conv 4) and every 4th layer full attention (16 heads / 2 KV heads of 256, Q projected with its gate,
    Q/K norms) with the DSA indexer (16 heads of 128, top-k 2048; no kpool key, so one key per cell), hyper-connections
    (count 4, low rank 64: hc_{attn,ffn}_{norm,down,up,inject} per block, output_hc_* in place of output_norm), MoE
    in every block (8 experts of 512, 2 used, a gated shared expert of 512); no PLE, no MTP block. Tensor set and
    keys as llama.cpp@0c1e57098's loader asks for them (src/models/qwen4exp.cpp)."""
    arch, n_embd, n_head, n_kv, hd, n_vocab, nl = "qwen4exp", 2048, 16, 2, 256, 32000, 4
    ds, ng, dtr, dconv = 128, 16, 32, 4
    kd, vd = ds * ng, ds * dtr
    conv = 2 * kd + vd
    hc, lr, ih, ik, n_exp, ffe = 4, 64, 16, 128, 8, 512
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=ffe, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=10000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", 64)
    md.i32s("rope.dimension_sections", [11, 11, 10, 0])
    md.u32("ssm.conv_kernel", dconv).u32("ssm.inner_size", vd).u32("ssm.state_size", ds)
    md.u32("ssm.time_step_rank", dtr).u32("ssm.group_count", ng).u32("full_attention_interval", 4)
    md.u32("hyper_connection.count", hc).u32("hyper_connection.low_rank", lr)
    _indexer_meta(md, ih, ik, 2048)
    _moe_meta(md, n_exp, ffe).u32("expert_shared_feed_forward_length", ffe)
    wide = hc * n_embd
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output.weight", (n_embd, n_vocab)),
          Tensor("output_hc_norm.weight", (wide,)), Tensor("output_hc_down.weight", (wide, lr)),
          Tensor("output_hc_up.weight", (lr, wide))]
    for i in range(nl):
        for x in ("attn", "ffn"):
            ts += [_blk(i, f"hc_{x}_norm.weight", wide), _blk(i, f"hc_{x}_down.weight", wide, lr),
                   _blk(i, f"hc_{x}_up.weight", lr, wide), _blk(i, f"hc_{x}_inject.weight", wide, hc)]
        if (i + 1) % 4 == 0:
            ts += [_blk(i, "attn_q.weight", n_embd, 2 * n_head * hd), _blk(i, "attn_k.weight", n_embd, n_kv * hd),
                   _blk(i, "attn_v.weight", n_embd, n_kv * hd), _blk(i, "attn_output.weight", n_head * hd, n_embd),
                   _blk(i, "attn_q_norm.weight", hd), _blk(i, "attn_k_norm.weight", hd),
                   _blk(i, "indexer.q_proj.weight", n_embd, ih * ik), _blk(i, "indexer.k_proj.weight", n_embd, ik),
                   _blk(i, "indexer.q_norm.weight", ik), _blk(i, "indexer.k_norm.weight", ik)]
        else:
            ts += [_blk(i, "attn_qkv.weight", n_embd, conv), _blk(i, "attn_gate.weight", n_embd, vd),
                   _blk(i, "ssm_conv1d.weight", dconv, conv), _blk(i, "ssm_dt.bias", dtr), _blk(i, "ssm_a", dtr),
                   _blk(i, "ssm_beta.weight", n_embd, dtr), _blk(i, "ssm_alpha.weight", n_embd, dtr),
                   _blk(i, "ssm_norm.weight", ds), _blk(i, "ssm_out.weight", vd, n_embd)]
        ts += _ffn_moe(i, n_embd, ffe, n_exp)
        ts += [_blk(i, "ffn_gate_inp_shexp.weight", n_embd), _blk(i, "ffn_gate_shexp.weight", n_embd, ffe),
               _blk(i, "ffn_up_shexp.weight", n_embd, ffe), _blk(i, "ffn_down_shexp.weight", ffe, n_embd)]
    return _model("qwen4exp-4l", arch, "a 2048-wide Qwen3.5-style shape with qwen4exp's layer kinds", n_vocab, nl, md,
                  ts, False)


ADDED_BUILDERS["qwen4exp"] = qwen4exp
ADDED_ON_GRID.append("qwen4exp")


def deepseek4(n_layers: int | None = None) -> SynthModel:
    """deepseek4 (DeepSeek-V4's layer kinds on a 4096-wide shape): 32 heads of one shared 512-wide K row (the value
    too), q_lora 1024, grouped low-rank output (8 groups of rank 512), attention sinks, a 128-token window on every
    layer, attention.compress_ratios [0, 4, 128, 0] (the ratio-4 layer with the lightning indexer: 32 heads of 128,
    top-k 512), hyper-connections (count 4) on every block and the head, sqrt-softplus-routed MoE in every block (8
    experts of 1024, 2 used, one shared) with no hash-routed layers (hash_layer_count 0: their tid2eid table must be
    I32, which the synthetic writer does not emit). Tensor set as llama.cpp@0c1e57098's loader asks for it."""
    arch, n_embd, n_head, hd, n_vocab, nl = "deepseek4", 4096, 32, 512, 32000, 4
    ql, og, olr, ih, ik, hc, n_exp, ffe = 1024, 8, 512, 32, 128, 4, 8, 1024
    ratios = [0, 4, 128, 0]
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=ffe, n_head=n_head, n_head_kv=1, rms_eps=1e-6,
                          rope_base=10000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", 64)
    md.u32("attention.q_lora_rank", ql).u32("attention.sliding_window", 128)
    _moe_meta(md, n_exp, ffe).u32("expert_shared_count", 1)
    md.f32("expert_weights_scale", 1.5).bool("expert_weights_norm", True)
    md.f32("swiglu_clamp_exp", 10.0).u32("expert_gating_func", 4)  # LLAMA_EXPERT_GATING_FUNC_TYPE_SQRT_SOFTPLUS
    _indexer_meta(md, ih, ik, 512)
    md.u32("attention.output_group_count", og).u32("attention.output_lora_rank", olr)
    md.f32("attention.compress_rope_freq_base", 160000.0)
    _hc_meta(md, hc).u32("hash_layer_count", 0).i32s("attention.compress_ratios", ratios)
    wide = hc * n_embd
    ts = _embeddings(n_embd, n_vocab, tied=False)
    ts += [Tensor("output_hc_fn.weight", (wide, hc)), Tensor("output_hc_base.weight", (hc,)),
           Tensor("output_hc_scale.weight", (1,))]
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_sinks.weight", n_head), _blk(i, "attn_q_a.weight", n_embd, ql),
               _blk(i, "attn_q_a_norm.weight", ql), _blk(i, "attn_q_b.weight", ql, n_head * hd),
               _blk(i, "attn_kv.weight", n_embd, hd), _blk(i, "attn_kv_a_norm.weight", hd),
               _blk(i, "attn_output_a.weight", n_head * hd // og, olr * og), _blk(i, "attn_output_b.weight", og * olr, n_embd)]
        ts += _hc_mix(i, wide, hc)
        r = ratios[i]
        if r:
            c = 2 if r == 4 else 1
            ts += [_blk(i, "attn_compressor_kv.weight", n_embd, c * hd), _blk(i, "attn_compressor_gate.weight", n_embd, c * hd),
                   _blk(i, "attn_compressor_ape.weight", c * hd, r), _blk(i, "attn_compressor_norm.weight", hd)]
            if r == 4:
                ts += [_blk(i, "indexer.proj.weight", n_embd, ih), _blk(i, "indexer.attn_q_b.weight", ql, ih * ik),
                       _blk(i, "indexer_compressor_kv.weight", n_embd, 2 * ik),
                       _blk(i, "indexer_compressor_gate.weight", n_embd, 2 * ik),
                       _blk(i, "indexer_compressor_ape.weight", 2 * ik, r), _blk(i, "indexer_compressor_norm.weight", ik)]
        ts += [_blk(i, "ffn_norm.weight", n_embd), _blk(i, "exp_probs_b.bias", n_exp)] + _ffn_moe(i, n_embd, ffe, n_exp)
        ts += _shexp(i, n_embd, ffe)
    return _model("deepseek4-4l", arch, "DeepSeek-V4's layer kinds on a 4096-wide shape", n_vocab, nl, md, ts, False)


ADDED_BUILDERS["deepseek4"] = deepseek4
ADDED_ON_GRID.append("deepseek4")


def qwen3tts_talker(n_layers: int | None = None) -> SynthModel:
    """qwen3tts: a Qwen3-TTS talker-shaped decoder (hidden 2048, 16 heads / 8 KV heads of 128 with Q/K norms and
    M-RoPE sections, FFN 6144) on 2 layers, its output.weight the 3072-entry codec head that llama.cpp@0c1e57098's
    loader expects (a 32000-token output is refused "wrong shape; expected 2048, 3072"), token_embd over the
    32000-token vocabulary. llama.cpp loads and sizes it standalone: one plain GQA cache."""
    arch, n_embd, hd, n_head, n_kv, n_ff, n_vocab, n_codec = "qwen3tts", 2048, 128, 16, 8, 6144, 32000, 3072
    nl = _layers(n_layers, 2)
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-6, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd).u32("rope.dimension_count", hd)
    md.i32s("rope.dimension_sections", [24, 20, 20, 0])
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("output.weight", (n_embd, n_codec))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_head * hd, n_kv * hd, qk_norm_dim=hd) + _ffn_dense(i, n_embd, n_ff)
    return _model("qwen3tts-talker-2l", arch, "a Qwen3-TTS talker-shaped decoder", n_vocab, nl, md, ts, False)


ADDED_BUILDERS["qwen3tts"] = qwen3tts_talker
ADDED_ON_GRID.append("qwen3tts")


def pockettts(n_layers: int | None = None) -> SynthModel:
    """pockettts: a 1024-wide transformer of 16 heads (= KV heads, head 64) with LayerNorm weights and biases, an
    ungated FFN of 4096 and tied embeddings over 32000 tokens, on 2 layers: the tensor set and keys llama.cpp@0c1e57098's
    loader asks for (found by loading: attention.layer_norm_epsilon, output_norm / attn_norm / ffn_norm biases), so
    it loads and sizes standalone with one plain cache."""
    arch, n_embd, n_head, n_ff, n_vocab = "pockettts", 1024, 16, 4096, 32000
    nl = _layers(n_layers, 2)
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=n_head,
                          rms_eps=1e-5, rope_base=10000.0, n_vocab=n_vocab)
    md.f32("attention.layer_norm_epsilon", 1e-5)
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("output_norm.bias", (n_embd,))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_embd, n_embd) + [_blk(i, "attn_norm.bias", n_embd)]
        ts += [_blk(i, "ffn_norm.weight", n_embd), _blk(i, "ffn_norm.bias", n_embd),
               _blk(i, "ffn_up.weight", n_embd, n_ff), _blk(i, "ffn_down.weight", n_ff, n_embd)]
    return _model("pockettts-2l", arch, "generic 1024-wide shape, the loader's tensor set", n_vocab, nl, md, ts, True)


ADDED_BUILDERS["pockettts"] = pockettts
ADDED_ON_GRID.append("pockettts")


# wavtokenizer-dec (the WavTokenizer vocoder OuteTTS runs beside its LLM): loads and sizes standalone with no KV cache
# (an encoder-like graph over the codes); features_length 512 is the code embedding width, posnet (6 blocks: 4
# resnet, 1 attention, 1 norm) and convnext (2 blocks) 768 wide, block_count >= posnet.block_count (GGML_ASSERT in
# llama-model.cpp); the tensor set llama.cpp@0c1e57098's loader asks for, found by loading
RECORDED.update({
    'wavtokenizer-dec': ('wavtokenizer-dec', 6,
        [('wavtokenizer-dec.context_length', 8192, 4), ('wavtokenizer-dec.embedding_length', 512, 4), ('wavtokenizer-dec.block_count', 6, 4), ('wavtokenizer-dec.feed_forward_length', 1536, 4), ('wavtokenizer-dec.attention.head_count', 1, 4), ('wavtokenizer-dec.attention.layer_norm_epsilon', 1e-06, 6), ('wavtokenizer-dec.attention.group_norm_epsilon', 1e-06, 6), ('wavtokenizer-dec.attention.group_norm_groups', 32, 4), ('wavtokenizer-dec.posnet.embedding_length', 768, 4), ('wavtokenizer-dec.posnet.block_count', 6, 4), ('wavtokenizer-dec.convnext.embedding_length', 768, 4), ('wavtokenizer-dec.convnext.block_count', 2, 4), ('wavtokenizer-dec.embedding_length_out', 1282, 4), ('wavtokenizer-dec.vocab_size', 4096, 4), ('wavtokenizer-dec.features_length', 512, 4)],
        {'token_embd.weight': (512, 4096), 'conv1d.weight': (7, 512, 768), 'conv1d.bias': (1, 768), 'posnet.0.norm1.weight': (1, 768), 'posnet.0.norm1.bias': (1, 768), 'posnet.0.conv1.weight': (3, 768, 768), 'posnet.0.conv1.bias': (1, 768), 'posnet.0.norm2.weight': (1, 768), 'posnet.0.norm2.bias': (1, 768), 'posnet.0.conv2.weight': (3, 768, 768), 'posnet.0.conv2.bias': (1, 768), 'posnet.1.norm1.weight': (1, 768), 'posnet.1.norm1.bias': (1, 768), 'posnet.1.conv1.weight': (3, 768, 768), 'posnet.1.conv1.bias': (1, 768), 'posnet.1.norm2.weight': (1, 768), 'posnet.1.norm2.bias': (1, 768), 'posnet.1.conv2.weight': (3, 768, 768), 'posnet.1.conv2.bias': (1, 768), 'posnet.2.attn_norm.weight': (1, 768), 'posnet.2.attn_norm.bias': (1, 768), 'posnet.2.attn_q.weight': (1, 768, 768), 'posnet.2.attn_q.bias': (1, 768), 'posnet.2.attn_k.weight': (1, 768, 768), 'posnet.2.attn_k.bias': (1, 768), 'posnet.2.attn_v.weight': (1, 768, 768), 'posnet.2.attn_v.bias': (1, 768), 'posnet.2.attn_output.weight': (1, 768, 768), 'posnet.2.attn_output.bias': (1, 768), 'posnet.3.norm1.weight': (1, 768), 'posnet.3.norm1.bias': (1, 768), 'posnet.3.conv1.weight': (3, 768, 768), 'posnet.3.conv1.bias': (1, 768), 'posnet.3.norm2.weight': (1, 768), 'posnet.3.norm2.bias': (1, 768), 'posnet.3.conv2.weight': (3, 768, 768), 'posnet.3.conv2.bias': (1, 768), 'posnet.4.norm1.weight': (1, 768), 'posnet.4.norm1.bias': (1, 768), 'posnet.4.conv1.weight': (3, 768, 768), 'posnet.4.conv1.bias': (1, 768), 'posnet.4.norm2.weight': (1, 768), 'posnet.4.norm2.bias': (1, 768), 'posnet.4.conv2.weight': (3, 768, 768), 'posnet.4.conv2.bias': (1, 768), 'posnet.5.attn_norm.weight': (1, 768), 'posnet.5.attn_norm.bias': (1, 768), 'token_embd_norm.weight': (768,), 'token_embd_norm.bias': (768,), 'convnext.0.dw.weight': (7, 1, 768), 'convnext.0.dw.bias': (1, 768), 'convnext.0.norm.weight': (768,), 'convnext.0.norm.bias': (768,), 'convnext.0.pw1.weight': (768, 1536), 'convnext.0.pw1.bias': (1536,), 'convnext.0.pw2.weight': (1536, 768), 'convnext.0.pw2.bias': (768,), 'convnext.0.gamma.weight': (768,), 'convnext.1.dw.weight': (7, 1, 768), 'convnext.1.dw.bias': (1, 768), 'convnext.1.norm.weight': (768,), 'convnext.1.norm.bias': (768,), 'convnext.1.pw1.weight': (768, 1536), 'convnext.1.pw1.bias': (1536,), 'convnext.1.pw2.weight': (1536, 768), 'convnext.1.pw2.bias': (768,), 'convnext.1.gamma.weight': (768,), 'output_norm.weight': (768,), 'output_norm.bias': (768,), 'output.weight': (768, 512), 'output.bias': (512,)}),
})
ADDED_BUILDERS["wavtokenizer-dec"] = lambda: recorded_model("wavtokenizer-dec")
ADDED_ON_GRID.append("wavtokenizer-dec")
ADDED_QUANT["wavtokenizer-dec"] = "f16"


def gptj(n_layers: int | None = None) -> SynthModel:
    """gptj (GPT-J-6B's tensor set on a 4096-wide shape, 16 heads, rotary 64, FFN 16384, 2 layers): llama-arch.cpp
    still names the architecture, but llama.cpp@0c1e57098 has no llama_model class for it, so loading stops with
    "unsupported model architecture: 'gptj'"."""
    arch, n_embd, n_ff, n_vocab, nl = "gptj", 4096, 16384, 32000, 2
    md = _Meta(arch).base(ctx=2048, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=16, n_head_kv=16, rms_eps=1e-5,
                          rope_base=10000.0, n_vocab=n_vocab)
    md.f32("attention.layer_norm_epsilon", 1e-5).u32("rope.dimension_count", 64)
    ts = _embeddings(n_embd, n_vocab, tied=False) + [Tensor("output_norm.bias", (n_embd,)), Tensor("output.bias", (n_vocab,))]
    for i in range(nl):
        ts += _attn_gqa(i, n_embd, n_embd, n_embd) + [_blk(i, "attn_norm.bias", n_embd)]
        ts += [_blk(i, "ffn_up.weight", n_embd, n_ff), _blk(i, "ffn_up.bias", n_ff),
               _blk(i, "ffn_down.weight", n_ff, n_embd), _blk(i, "ffn_down.bias", n_embd)]
    return _model("gptj-2l", arch, "GPT-J-6B's tensor set", n_vocab, nl, md, ts, False)


def gemma4_assistant(n_layers: int | None = None) -> SynthModel:
    """gemma4-assistant (a Gemma 4 MTP draft: 2 Q-only layers, one sliding and one full, reading the target's KV,
    nextn pre/post projections to a 2560-wide target): llama.cpp@0c1e57098 loads the file but refuses a context
    without its target ("Gemma4Assistant requires ctx_other to be set"), so it has no standalone figures."""
    arch, n_embd, hd, n_head, n_ff, n_vocab, n_target, nl = "gemma4-assistant", 1024, 256, 4, 4096, 32000, 2560, 2
    md = _Meta(arch).base(ctx=8192, n_embd=n_embd, n_layers=nl, n_ff=n_ff, n_head=n_head, n_head_kv=1, rms_eps=1e-6,
                          rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("embedding_length_out", n_target).u32("nextn_predict_layers", nl).u32("attention.sliding_window", 512)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("attention.key_length_swa", hd).u32("attention.value_length_swa", hd)
    md.items.append((f"{arch}.attention.sliding_window_pattern", [True, False], (VT.ARRAY, VT.BOOL)))
    ts = [Tensor("token_embd.weight", (n_embd, n_vocab)), Tensor("output_norm.weight", (n_embd,)),
          Tensor("nextn.post_projection.weight", (n_embd, n_target)),
          Tensor("nextn.pre_projection.weight", (2 * n_target, n_embd)), Tensor("rope_freqs.weight", (hd // 2,))]
    for i in range(nl):
        ts += [_blk(i, "attn_norm.weight", n_embd), _blk(i, "attn_q.weight", n_embd, n_head * hd),
               _blk(i, "attn_output.weight", n_head * hd, n_embd), _blk(i, "attn_q_norm.weight", hd),
               _blk(i, "post_attention_norm.weight", n_embd), _blk(i, "layer_output_scale.weight", 1),
               _blk(i, "post_ffw_norm.weight", n_embd)] + _ffn_dense(i, n_embd, n_ff)
    return _model("gemma4-assistant-2l", arch, "a Gemma 4 MTP draft's tensor set", n_vocab, nl, md, ts, True)


# architectures this build names but does not run standalone: (builder, the stage llama.cpp stops at, its message)
NOT_STANDALONE = {
    "gptj": (gptj, "model", "unsupported model architecture: 'gptj'"),
    "gemma4-assistant": (gemma4_assistant, "context", "Gemma4Assistant requires ctx_other to be set"),
}


def with_nextn(m: SynthModel, src_layer: int, n_embd: int, drop: tuple[str, ...] = ()) -> SynthModel:
    """`m` with one next-n (MTP) block appended as the converters write it (block_count + 1, nextn_predict_layers 1):
    a copy of block `src_layer`'s tensors (less those whose name holds a `drop` part, which the loader does not ask
    of an MTP block) and nextn.eh_proj / enorm / hnorm; per-layer arrays grow by the source layer's entry."""
    import dataclasses  # lazy: only the renaming builders use it

    nl, arch = m.n_layers, m.arch
    md = []
    for k, v, t in m.metadata:
        if k == f"{arch}.block_count":
            v = nl + 1
        elif isinstance(v, list) and len(v) == nl and "sections" not in k:
            v = v + [v[src_layer]]
        md.append((k, v, t))
    md.append((f"{arch}.nextn_predict_layers", 1, VT.UINT32))
    ts = list(m.tensors)
    ts += [Tensor(t.name.replace(f"blk.{src_layer}.", f"blk.{nl}.", 1), t.ne) for t in m.tensors
           if t.name.startswith(f"blk.{src_layer}.") and not any(d in t.name for d in drop)]
    ts += [_blk(nl, "nextn.eh_proj.weight", 2 * n_embd, n_embd), _blk(nl, "nextn.enorm.weight", n_embd),
           _blk(nl, "nextn.hnorm.weight", n_embd)]
    return dataclasses.replace(m, key=f"{m.key}-mtp", n_layers=nl + 1, metadata=tuple(md), tensors=tuple(ts))


# MTP variants: llama.cpp neither loads the block (model buffer as without it) nor caches it, except deepseek4, whose
# SWA cache holds the MTP block's K row (measured: 5 SWA layers for a 4-layer trunk). qwen4exp with an MTP block does
# not load in this build ("done_getting_tensors: wrong number of tensors"), so it has no variant here.
NEXTN_VARIANTS = {
    "glm5-next": lambda: with_nextn(glm5_next(), 3, 2304, drop=("hc_",)),
    "dots3note": lambda: with_nextn(dots3note(), 0, 4096, drop=("indexer",)),
    "deepseek4": lambda: with_nextn(deepseek4(), 0, 4096),
}


def step37_flash(n_layers: int = 5) -> SynthModel:
    """Step-3.7-Flash (Step3p7ForConditionalGeneration, text_config model_type step3p5; Step-3.5-Flash's layer kinds)
    as llama.cpp's converter writes it (conversion Step35Model.set_gguf_parameters, registered for both classes) and
    src/models/step35.cpp load_arch_tensors asks for it: hidden 4096, full-attention layers of 64 heads and sliding ones
    of 96 (attention_other_setting), 8 KV heads (num_attention_groups) of 128 on both, written as per-layer head_count
    / head_count_kv arrays; a 512-token window with the layer_types pattern (full every 4th from layer 0); QK norms and
    the head-wise gate (attn_gate {n_embd, n_head(il)}); 3 leading dense layers of 11264 (moe_layers_enum from 3), then
    288 sigmoid-routed experts of 1280 (8 used) with a selection bias and one shared expert of 1280; vocab 128896,
    untied head. Shapes of the text_config quoted in public code (code search ids 58055884561 "Real Step-3.7-Flash
    shape", 56711705269, 56601044620: 45 layers, 4096, 64 / 96 heads, 8 groups, 128, 288 x 1280 experts, share 1280)."""
    arch, n_embd, hd, n_kv, n_ff, n_vocab = "step35", 4096, 128, 8, 11264, 128896
    n_exp, ff_exp, ff_sh, dense = 288, 1280, 1280, 3
    swa = [i % 4 != 0 for i in range(n_layers)]
    heads = [96 if s else 64 for s in swa]
    md = _Meta(arch)
    md.u32("context_length", 262144).u32("embedding_length", n_embd).u32("block_count", n_layers)
    md.u32("feed_forward_length", n_ff)
    md.items.append((f"{arch}.attention.head_count", heads, (VT.ARRAY, VT.INT32)))
    md.items.append((f"{arch}.attention.head_count_kv", [n_kv] * n_layers, (VT.ARRAY, VT.INT32)))
    md.f32("attention.layer_norm_rms_epsilon", 1e-5).f32("rope.freq_base", 5000000.0).u32("vocab_size", n_vocab)
    md.f32("rope.freq_base_swa", 10000.0).u32("rope.dimension_count", hd)
    md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    md.u32("attention.sliding_window", 512)
    md.items.append((f"{arch}.attention.sliding_window_pattern", swa, (VT.ARRAY, VT.BOOL)))
    md.u32("expert_count", n_exp).u32("expert_used_count", 8).u32("expert_feed_forward_length", ff_exp)
    md.u32("expert_shared_feed_forward_length", ff_sh).f32("expert_weights_scale", 3.0).bool("expert_weights_norm", True)
    md.u32("leading_dense_block_count", dense).u32("moe_every_n_layers", 1)
    ts = _embeddings(n_embd, n_vocab, tied=False)
    for i in range(n_layers):
        h = heads[i]
        ts += _attn_gqa(i, n_embd, h * hd, n_kv * hd, qk_norm_dim=hd)
        ts += [_blk(i, "attn_gate.weight", n_embd, h), _blk(i, "ffn_norm.weight", n_embd)]
        if i < dense:
            ts += _ffn_dense(i, n_embd, n_ff, norm=False)
        else:
            ts += _ffn_moe(i, n_embd, ff_exp, n_exp) + [_blk(i, "exp_probs_b.bias", n_exp)]
            ts += [_blk(i, "ffn_gate_shexp.weight", n_embd, ff_sh), _blk(i, "ffn_up_shexp.weight", n_embd, ff_sh),
                   _blk(i, "ffn_down_shexp.weight", ff_sh, n_embd)]
    return _model(f"step37-flash-{n_layers}l", arch, "Step-3.7-Flash's text_config shapes", n_vocab, n_layers, md, ts,
                  False)
