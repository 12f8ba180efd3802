"""The weight tensors a model has, computed from its per-layer spec, named and shaped the GGUF way.

Names and shapes follow llama.cpp's loader (src/llama-arch.cpp tensor names, src/models/<arch>.cpp
`load_arch_tensors` shapes; ne0 first), so the same list serves the GGUF type recipes of quant/ and the
HF storage formats. Used only when no file header gives the exact tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .spec import LayerKind, LayerSpec


@dataclass(frozen=True)
class TensorShape:
    name: str
    shape: tuple[int, ...]
    layer: int | None = None

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


# Architectures whose attention layers carry per-head q/k RMS norms (Qwen3, Gemma 3, OLMo 2, ...).
_QK_NORM = {"qwen3", "qwen3moe", "qwen3next", "qwen35", "qwen35moe", "gemma3", "gemma3n", "gemma4", "olmo2", "olmoe",
            "qwen3vl", "qwen3vlmoe", "glm4moe", "exaone4",  # not cohere2: src/models/cohere2.cpp loads none
            # src/models/lfm2.cpp, lfm2moe.cpp, hunyuan-moe.cpp, bailingmoe2.cpp: attn_q_norm / attn_k_norm per head
            "lfm2", "lfm2moe", "hunyuan-moe", "hunyuan-dense", "bailingmoe2",
            "gemma-embedding",  # src/models/gemma-embedding.cpp load_arch_tensors: attn_q_norm / attn_k_norm, required
            "apertus",  # src/models/apertus.cpp load_arch_tensors: attn_q_norm / attn_k_norm {n_embd_head_k}, required
            "step35",  # src/models/step35.cpp load_block_trunk: attn_q_norm / attn_k_norm {n_embd_head_k}
            "laguna"}  # src/models/laguna.cpp load_arch_tensors: attn_q_norm / attn_k_norm {n_embd_head_k}
# Routers with a score-correction bias (e_score_correction_bias -> exp_probs_b.bias; src/models/deepseek2.cpp,
# ernie4-5-moe.cpp, bailingmoe2.cpp, lfm2moe.cpp, mimo2.cpp load_arch_tensors)
_EXP_PROBS_B = {"deepseek2", "ernie4_5-moe", "bailingmoe2", "lfm2moe", "mimo2", "nemotron_h_moe",  # + nemotron-h.cpp
                "glm4moe",  # src/models/glm4-moe.cpp: exp_probs_b {n_expert}, required
                # DeepSeek-V3.2 and GLM-5, read under their model types (src/models/deepseek32.cpp, glm-dsa.cpp)
                "deepseek_v32", "glm_moe_dsa",
                "kimi-linear", "kimi-k3",  # kimi-linear.cpp / kimi-k3.cpp: exp_probs_b {n_expert}, required
                "glm5-next",  # glm5-next.cpp: exp_probs_b {n_expert} (e_score_correction_bias)
                "step35",  # step35.cpp: exp_probs_b {n_expert} (the checkpoint's moe.router_bias)
                "laguna",  # laguna.cpp: exp_probs_b {n_expert} (sigmoid routing's e_score_correction_bias)
                "minimax_m2"}  # minimax-m2.cpp: exp_probs_b {n_expert}, required (e_score_correction_bias)
# Gemma 2/3/4 normalise after attention and after the FFN too, and so do GLM-4-0414 (src/models/glm4.cpp
# load_arch_tensors: attn_post_norm and ffn_post_norm, required) and OLMo 2 (only there: _POST_NORM_ONLY).
_POST_NORMS = {"gemma2", "gemma3", "gemma3n", "gemma4", "glm4", "olmo2",
               "gemma-embedding"}  # gemma-embedding.cpp: attn_post_norm, ffn_post_norm, required
# Dense FFNs whose gate and up projections are one tensor, ffn_up {n_embd, 2 x n_ff}, no ffn_gate (src/models/glm4.cpp
# load_arch_tensors; the checkpoint's mlp.gate_up_proj, written as it is by convert_hf_to_gguf.py)
_FUSED_GATE_UP = {"glm4", "chatglm",  # src/models/chatglm.cpp too: ffn_up {n_embd, n_ff * 2}
                  "phi3"}  # src/models/phi3.cpp: ffn_up {n_embd, 2 * n_ff}, required, no ffn_gate (mlp.gate_up_proj)
# Gated attention (Qwen3-Next / Qwen3.5): Q projection carries a gate of the same width.
_GATED_Q = {"qwen3next", "qwen35", "qwen35moe"}
# Qwen3.5 / 3.6 keep the delta net's beta and alpha projections apart (src/models/qwen35.cpp, qwen35moe.cpp
# load_block_trunk: ssm_beta and ssm_alpha, {n_embd, n_v_heads} each; convert's in_proj_b / in_proj_a) where
# Qwen3-Next fuses them in one ssm_ba {n_embd, 2 x n_v_heads} (src/models/qwen3next.cpp)
_SPLIT_BA = {"qwen35", "qwen35moe"}
# Next-n (MTP) blocks the converter writes with the block's own extras (conversion/qwen.py _Qwen35MtpMixin from
# PR #22673, b9180: mtp.fc -> nextn.eh_proj {2 x n_embd, n_embd}, mtp.pre_fc_norm_embedding / _hidden -> nextn.enorm
# / nextn.hnorm, mtp.norm -> nextn.shared_head_norm; no embed_tokens or shared_head_head of its own, which
# src/models/qwen35.cpp load_block_mtp takes as TENSOR_NOT_REQUIRED)
_NEXTN_EXTRAS = {"qwen35", "qwen35moe",
                 # Qwen3-Next's mtp.fc / pre_fc_norm_embedding / pre_fc_norm_hidden / norm, the same four (src/models/
                 # qwen3next.cpp load_block_mtp: nextn.eh_proj, enorm, hnorm, shared_head_norm)
                 "qwen3next",
                 # src/models/deepseek2.cpp, mimo2.cpp load_arch_tensors: nextn.eh_proj {2 x n_embd, n_embd}, enorm, hnorm,
                 # shared_head_norm (GLM-4.7-Flash's and MiMo-V2's MTP blocks)
                 "deepseek2", "mimo2",
                 # src/models/glm4-moe.cpp load_arch_tensors: the same four for GLM-4.5 / 4.6 / 4.7's MTP block
                 "glm4moe",
                 # src/models/deepseek32.cpp, glm-dsa.cpp: the same, DeepSeek-V3.2's and GLM-5's (model types
                 # deepseek_v32 and glm_moe_dsa, read generically)
                 "deepseek_v32", "glm_moe_dsa",
                 # MiMo-7B (model type mimo, read generically): XiaomiMiMo's modeling_mimo.py MiMoMTPLayers keep
                 # input_proj (2 h -> h), token_layernorm, hidden_layernorm and final_layernorm beside the block
                 "mimo",
                 # src/models/nemotron-h.cpp load_arch_tensors: Nemotron 3 Super's MTP block, the same four
                 "nemotron_h_moe",
                 # src/models/step35.cpp load_block_mtp: the same four (Step35Model.filter_tensors strips the
                 # checkpoint's transformer. infix; the shared head's output is added by hf_config._step_extras)
                 "step35",
                 # src/models/glm5-next.cpp load_arch_tensors: the same four for GLM-5.3-Flash's MTP block (embed_tokens
                 # and shared_head_head TENSOR_NOT_REQUIRED)
                 "glm5-next"}
# ... and the MTP block's own vocabulary-sized copies, nextn.embed_tokens and nextn.shared_head_head {n_embd, n_vocab}
# (TENSOR_NOT_REQUIRED in src/models/glm4-moe.cpp and deepseek2.cpp load_arch_tensors, loaded when the file has them):
# the DeepSeek-V3 / GLM-4.5 checkpoints' model.layers.<last>.embed_tokens and shared_head.head, which a GLM-4.5-Air
# GGUF keeps (blk.46.nextn.embed_tokens.weight, blk.46.nextn.shared_head_head.weight: the tensor list of
# ikawrakow/ik_llama.cpp PR #668's GLM-4.5-Air recipe). With them GLM-4.5-Air, GLM-4.7 and GLM-4.7-Flash come to
# their safetensors totals exactly. Engines that skip the MTP block skip these too (llama.cpp without load_mtp).
_NEXTN_VOCAB_COPIES = {"deepseek2", "glm4moe", "deepseek_v32"}  # not GLM-5's: its published total holds none
# LayerNorms with a bias (attn_norm, ffn_norm, output_norm) and the linears that carry biases beyond q/k/v, as
# llama.cpp's loaders require them (src/models/{phi2,stablelm,starcoder2,orion,phimoe}.cpp load_arch_tensors, flags 0);
# the HF checkpoints' totals agree (phi-2 2,779,683,840, starcoder2-7b 7,173,923,840, stablelm-2-1_6b 1,644,515,328).
# src/models/gpt2.cpp load_arch_tensors: attn_norm / ffn_norm / output_norm .bias, attn_qkv.bias, attn_output.bias,
# ffn_up.bias, ffn_down.bias, all required (the checkpoint's LayerNorms and Conv1D layers carry biases)
# OPT (no llama.cpp loader; transformers OPTDecoderLayer / vLLM opt.py): self_attn_layer_norm, final_layer_norm and
# the decoder's final_layer_norm are LayerNorms with biases; q/k/v/out_proj, fc1 and fc2 are Linear(bias=enable_bias)
_NORM_BIAS = {"phi2", "stablelm", "starcoder2", "orion", "phimoe", "gpt2", "starcoder", "opt",
              "nemotron"}  # src/models/nemotron.cpp: output_norm_b, attn_norm_b, ffn_norm_b, required
_ATTN_OUT_BIAS = {"phi2", "starcoder2", "phimoe", "gpt2", "starcoder", "opt"}
_FFN_BIAS = {"phi2", "starcoder2", "gpt2", "starcoder", "opt"}  # ffn_up.bias {n_ff}, ffn_down.bias {n_embd}
_OUTPUT_BIAS = {"phi2", "phimoe"}  # output.bias {n_vocab}
# attention and FFN read the same attn_norm (parallel blocks: src/models/{phi2,command-r,cohere2,cohere2moe}.cpp load
# no ffn_norm)
_NO_FFN_NORM = {"phi2", "command-r", "cohere2", "cohere2moe"}
# The norm before the FFN is loaded as post_attention_norm (LLM_TENSOR_ATTN_POST_NORM), not ffn_norm, by
# src/models/{openai-moe,seed-oss,qwen3next,qwen35,qwen35moe,glm4-moe}.cpp load_arch_tensors (the checkpoint's
# post_attention_layernorm, the same {n_embd} RMSNorm under another name)
_FFN_NORM_AS_POST_ATTN = {"gpt-oss", "seed_oss", "qwen3next", "qwen35", "qwen35moe", "glm4moe"}
# Post-norm blocks with no pre-norm: OLMo 2 normalises each sublayer's output only (src/models/olmo2.cpp
# load_arch_tensors: attn_post_norm and ffn_post_norm, required, as _POST_NORMS; no attn_norm or ffn_norm)
_POST_NORM_ONLY = {"olmo2"}
# A layer that is an FFN alone (Nemotron-H's MLP / MoE layers) normalises its input with attn_norm
# (src/models/nemotron-h.cpp load_arch_tensors: attn_norm for every layer, no ffn_norm)
_SINGLE_MIXER = {"nemotron_h", "nemotron_h_moe"}
# Mamba-1 mixers with RMSNorms on dt, B and C (src/models/jamba.cpp load_arch_tensors: ssm_dt_norm {dt_rank},
# ssm_b_norm and ssm_c_norm {d_state}, required; transformers JambaMambaMixer dt_layernorm, b_layernorm, c_layernorm)
_SSM_BC_NORMS = {"jamba"}
# Attention projections the loader requires fused as one attn_qkv {n_embd, n_embd + 2 n_embd_gqa}
# (src/models/bailingmoe2.cpp load_arch_tensors: wqkv, flags 0; convert's query_key_value kept whole), or takes it
# fused as the checkpoint stores it (src/models/phi3.cpp: create_tensor_qkv TENSOR_NOT_REQUIRED, wqkv first; Phi-3's
# self_attn.qkv_proj maps to attn_qkv in gguf-py's tensor_mapping)
_FUSED_QKV = {"bailingmoe2", "phi3", "gpt2", "starcoder"}  # gpt2.cpp, starcoder.cpp: wqkv {n_embd, n_embd + 2 n_embd_gqa}, its bias one tensor
# BERT-style encoders (src/models/bert.cpp, nomic-bert.cpp): post-LayerNorms with biases (attn_output_norm after
# the attention, layer_output_norm after the FFN), biased linears, no output head, and no pooler: convert_hf_to_gguf.py's
# BertModel drops pooler.dense ("only using BERT for embeddings"), so totals published with it (bge-m3's 567,754,752,
# multilingual-e5-large's 559,890,432) are 1,024 x 1,024 + 1,024 = 1,049,600 above these lists.
_ENCODER_ARCHS = {"bert", "nomic-bert"}


def architecture_tensors(
    *, arch: str, n_embd: int, n_vocab: int, layers: tuple[LayerSpec, ...], tied: bool,
    attention_bias: bool = False, gated_ffn: bool = True, n_nextn: int = 0, n_positions: int = 0,
    n_token_types: int = 0, ple: PerLayerInputs | None = None, router_bias: bool = True, qk_norm: bool = True,
) -> tuple[TensorShape, ...]:
    """router_bias: whether the MoE router of an _EXP_PROBS_B architecture carries its score-correction bias
    (DeepSeek-V2's greedy routers have none; see hf_config). qk_norm: False where the config turns a _QK_NORM
    architecture's q/k norms off (GLM-4.5-Air's use_qk_norm false: src/models/glm4-moe.cpp loads them
    TENSOR_NOT_REQUIRED, transformers modeling_glm4_moe.py builds them only if config.use_qk_norm)."""
    # mllama: MllamaTextModel.embed_tokens has vocab_size + 8 rows (transformers modeling_mllama.py; Ollama's llama.cpp
    # llama.cpp LLM_ARCH_MLLAMA: tok_embd {n_embd, n_vocab+8}), the output head vocab_size
    out = [TensorShape("token_embd.weight", (n_embd, n_vocab + (8 if arch == "mllama" else 0)))]
    if ple is not None:
        out.extend(_ple_globals(n_embd, len(layers), ple))
    if n_positions:
        out.append(TensorShape("position_embd.weight", (n_embd, n_positions)))
    if n_token_types:
        out.append(TensorShape("token_types.weight", (n_embd, n_token_types)))
    if arch in _ENCODER_ARCHS:
        out += [TensorShape("token_embd_norm.weight", (n_embd,)), TensorShape("token_embd_norm.bias", (n_embd,))]
    first_nextn = len(layers) - n_nextn
    first_full = next((la.index for la in layers if la.kind is LayerKind.FULL), None)
    for layer in layers:
        out.extend(_layer_tensors(arch, n_embd, layer, attention_bias, gated_ffn, layer.index == first_full,
                                  router_bias, qk_norm))
        if arch in _NEXTN_EXTRAS and layer.index >= first_nextn:
            out.extend(_nextn_extras(n_embd, layer.index))
            if arch in _NEXTN_VOCAB_COPIES:
                out += [TensorShape(f"blk.{layer.index}.nextn.embed_tokens.weight", (n_embd, n_vocab), layer.index),
                        TensorShape(f"blk.{layer.index}.nextn.shared_head_head.weight", (n_embd, n_vocab), layer.index)]
        if ple is not None:
            out.extend(_ple_layer(n_embd, layer.index, ple))
        if arch in _ENCODER_ARCHS:
            out.extend(_encoder_extras(arch, n_embd, layer))
    if arch in _ENCODER_ARCHS:
        return tuple(out)  # the embedding output is the last layer's hidden state: no output norm, no head
    out.append(TensorShape("output_norm.weight", (n_embd,)))
    if arch in _NORM_BIAS:
        out.append(TensorShape("output_norm.bias", (n_embd,)))
    if not tied:
        out.append(TensorShape("output.weight", (n_embd, n_vocab)))
    if arch in _OUTPUT_BIAS:
        out.append(TensorShape("output.bias", (n_vocab,)))
    return tuple(out)


@dataclass(frozen=True)
class PerLayerInputs:
    """Gemma 3n / Gemma 4 "effective-size" extras (transformers modeling_gemma3n.py Gemma3nTextModel,
    modeling_gemma4.py Gemma4TextModel): a second token embedding of n_embd_per_layer values per layer
    (embed_tokens_per_layer, vocab_size_per_layer_input rows), its projection and norm, and per layer an input
    gate, projection and norm; Gemma 3n adds AltUp (altup_num_inputs streams) and LAuReL (laurel_rank)."""
    n_embd_per_layer: int  # hidden_size_per_layer_input
    n_vocab: int  # vocab_size_per_layer_input
    n_altup: int = 0  # altup_num_inputs (Gemma 3n only)
    laurel_rank: int = 0  # Gemma 3n only


def _ple_globals(n_embd: int, n_layers: int, p: PerLayerInputs) -> list[TensorShape]:
    # llama.cpp src/models/gemma3n.cpp load_arch_tensors (llama.cpp@0c1e57098): per_layer_tok_embd,
    # per_layer_model_proj, per_layer_proj_norm, and AltUp's n_altup - 1 stream projections stacked in one tensor
    wide = p.n_embd_per_layer * n_layers
    out = [TensorShape("per_layer_token_embd.weight", (wide, p.n_vocab)),
           TensorShape("per_layer_model_proj.weight", (n_embd, wide)),
           TensorShape("per_layer_proj_norm.weight", (p.n_embd_per_layer,))]
    if p.n_altup:
        out += [TensorShape("altup_proj.weight", (n_embd, n_embd, p.n_altup - 1)),
                TensorShape("altup_unembd_proj.weight", (n_embd, n_embd, p.n_altup - 1))]
    return out


def _ple_layer(n_embd: int, i: int, p: PerLayerInputs) -> list[TensorShape]:
    def t(name: str, *shape: int) -> TensorShape:
        return TensorShape(f"blk.{i}.{name}", tuple(shape), i)

    # per_layer_input_gate, per_layer_projection, post_per_layer_input_norm (Gemma3nTextDecoderLayer)
    out = [t("inp_gate.weight", n_embd, p.n_embd_per_layer), t("proj.weight", p.n_embd_per_layer, n_embd),
           t("post_norm.weight", n_embd)]
    if p.n_altup:  # Gemma3nTextAltUp: correction_coefs, correct_output_scale, prediction_coefs, router + norm
        a = p.n_altup
        out += [t("altup_correct_coef.weight", a, a), t("altup_correct_scale.weight", n_embd),
                t("altup_predict_coef.weight", a, a * a), t("altup_router.weight", n_embd, a),
                t("altup_router_norm.weight", n_embd)]
    if p.laurel_rank:  # Gemma3nTextLaurelBlock: linear_left, linear_right, post_laurel_norm
        out += [t("laurel_l.weight", n_embd, p.laurel_rank), t("laurel_r.weight", p.laurel_rank, n_embd),
                t("laurel_post_norm.weight", n_embd)]
    return out


def _layer_tensors(arch: str, n_embd: int, layer: LayerSpec, bias: bool, gated_ffn: bool,
                   first_full: bool = False, router_bias: bool = True, qk_norm: bool = True) -> list[TensorShape]:
    i = layer.index
    out: list[TensorShape] = []

    def t(name: str, *shape: int) -> None:
        out.append(TensorShape(f"blk.{i}.{name}", tuple(shape), i))

    if layer.cross_attention and layer.attention is not None:
        # mllama's cross-attention layers as Ollama's llama.cpp (v0.4.0-v0.6.x, llama/llama.cpp/src/llama.cpp
        # LLM_ARCH_MLLAMA) loads them: q/k/v/o projections, q/k RMSNorms of one head, the two tanh gates, the
        # attention and FFN norms and a gated FFN (transformers MllamaCrossAttentionDecoderLayer: the same tensors)
        a = layer.attention
        q, kv = a.n_heads * a.head_dim_k, a.n_kv_heads * a.head_dim_k
        t("attn_norm.weight", n_embd)
        t("cross_attn_q_proj.weight", n_embd, q)
        t("cross_attn_k_proj.weight", n_embd, kv)
        t("cross_attn_v_proj.weight", n_embd, a.n_kv_heads * a.head_dim_v)
        t("cross_attn_o_proj.weight", q, n_embd)
        t("cross_attn_q_norm.weight", a.head_dim_k)
        t("cross_attn_k_norm.weight", a.head_dim_k)
        t("cross_attn_attn_gate", 1)
        t("cross_attn_mlp_gate", 1)
        t("ffn_norm.weight", n_embd)
        t("ffn_gate.weight", n_embd, layer.ffn.n_ff)
        t("ffn_up.weight", n_embd, layer.ffn.n_ff)
        t("ffn_down.weight", layer.ffn.n_ff, n_embd)
        return out

    a = layer.attention
    # the norm before the FFN, by the name the arch's loader gives it
    ffn_norm = "post_attention_norm" if arch in _FFN_NORM_AS_POST_ATTN else "ffn_norm"
    if arch in _ENCODER_ARCHS:  # bert.cpp: attn_output_norm / layer_output_norm (weights; biases in _encoder_extras)
        ffn_norm = "layer_output_norm"
    if arch in _SINGLE_MIXER and a is None and layer.recurrent is None:
        ffn_norm = "attn_norm"
    elif arch in _SINGLE_MIXER and a is not None:
        # Nemotron 3 Super's MTP block: attention, then its MoE after attn_post_norm (src/models/nemotron-h.cpp
        # load_arch_tensors: LLM_TENSOR_ATTN_POST_NORM for the MoE sub-layer of layers n_layer..n_layer_all)
        ffn_norm = "post_attention_norm"
    if arch in _ENCODER_ARCHS and a is not None:
        t("attn_output_norm.weight", n_embd)
    elif (a is not None and not (arch == "deci" and not a.n_heads) or layer.recurrent is not None) \
            and arch not in _POST_NORM_ONLY:
        t("attn_norm.weight", n_embd)
        if arch in _NORM_BIAS:
            t("attn_norm.bias", n_embd)

    def pre_ffn_norm() -> None:
        if arch == "falcon-h1":  # src/models/falcon-h1.cpp: tn(LLM_TENSOR_FFN_NORM, i), no suffix (as its GGUFs name it)
            t("ffn_norm", n_embd)
        elif arch not in _NO_FFN_NORM and arch not in _POST_NORM_ONLY:
            t(f"{ffn_norm}.weight", n_embd)
            if arch in _NORM_BIAS:
                t(f"{ffn_norm}.bias", n_embd)
    if a is not None and layer.kind is LayerKind.LATENT:
        # DeepSeek-V2/V3 MLA (src/models/deepseek2.cpp): q via a low-rank pair, kv_a -> latent + rope, k_b/v_b
        q_dim = a.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        if a.q_lora_rank:
            t("attn_q_a.weight", n_embd, a.q_lora_rank)
            t("attn_q_a_norm.weight", a.q_lora_rank)
            t("attn_q_b.weight", a.q_lora_rank, q_dim)
        else:
            t("attn_q.weight", n_embd, q_dim)
        t("attn_kv_a_mqa.weight", n_embd, a.kv_lora_rank + a.qk_rope_head_dim)
        t("attn_kv_a_norm.weight", a.kv_lora_rank)
        t("attn_k_b.weight", a.qk_nope_head_dim, a.kv_lora_rank, a.n_heads)
        t("attn_v_b.weight", a.kv_lora_rank, a.v_head_dim, a.n_heads)
        t("attn_output.weight", a.n_heads * a.v_head_dim, n_embd)
        if a.index_head_dim and not a.indexer_shared:  # GLM-5.2's shared-indexer layers carry none
            # DeepSeek V3.2's lightning indexer (transformers / vLLM models/deepseek_v2.py Indexer: wq_b from the
            # q latent, wk and weights_proj from the hidden state, a LayerNorm on the key); llama.cpp's names
            t("indexer.attn_q_b.weight", a.q_lora_rank, a.index_n_heads * a.index_head_dim)
            t("indexer.attn_k.weight", n_embd, a.index_head_dim)
            t("indexer.k_norm.weight", a.index_head_dim)
            t("indexer.k_norm.bias", a.index_head_dim)
            t("indexer.proj.weight", n_embd, a.index_n_heads)
    elif a is not None and arch == "deci" and not a.n_kv_heads:
        # src/models/deci.cpp load_arch_tensors: no KV heads -> a linear "attention" (attn_norm, wo {n_embd, n_embd})
        # where head_count is set, nothing at all (no norm either) where it is 0
        if a.n_heads:
            t("attn_output.weight", n_embd, n_embd)
    elif a is not None:
        q_dim, k_dim, v_dim = a.n_heads * a.head_dim_k, a.n_kv_heads * a.head_dim_k, a.n_kv_heads * a.head_dim_v
        # Gemma 4's KV-shared layers read an earlier layer's cache and carry no K or V projection (llama.cpp
        # src/models/gemma4.cpp load_arch_tensors: wk, attn_k_norm TENSOR_NOT_REQUIRED where !has_kv(i); b9849)
        own_kv = not (arch == "gemma4" and layer.kv_source is not None)
        if arch in _FUSED_QKV:
            t("attn_qkv.weight", n_embd, q_dim + k_dim + v_dim)
        else:
            t("attn_q.weight", n_embd, q_dim * (2 if arch in _GATED_Q else 1))
            if own_kv:
                t("attn_k.weight", n_embd, k_dim)
            if not a.v_from_k and own_kv:
                t("attn_v.weight", n_embd, v_dim)
        t("attn_output.weight", a.n_heads * a.head_dim_v, n_embd)
        if bias and arch in _FUSED_QKV:
            t("attn_qkv.bias", q_dim + k_dim + v_dim)
        elif bias:
            t("attn_q.bias", q_dim)
            t("attn_k.bias", k_dim)
            t("attn_v.bias", v_dim)
            if arch == "gpt-oss":
                t("attn_output.bias", n_embd)
        if arch in _ATTN_OUT_BIAS:
            t("attn_output.bias", n_embd)
        if arch in ("olmo2", "olmoe"):
            # llama-model.cpp: OLMo2 and OLMoE normalise the whole projections ({n_embd_head_k * n_head},
            # {n_embd_k_gqa}), not one head
            t("attn_q_norm.weight", q_dim)
            t("attn_k_norm.weight", k_dim)
        elif arch == "minimax_m2" and qk_norm:
            # MiniMax-M2 (qk_norm_type per_layer), read under its model type: src/models/minimax-m2.cpp
            # load_arch_tensors norms the whole projections, attn_q_norm {n_embd_head_k * n_head}, attn_k_norm
            # {n_embd_k_gqa}, required
            t("attn_q_norm.weight", q_dim)
            t("attn_k_norm.weight", k_dim)
        elif arch in _QK_NORM and qk_norm:
            t("attn_q_norm.weight", a.head_dim_k)
            if own_kv:
                t("attn_k_norm.weight", a.head_dim_k)
        if arch == "gpt-oss":
            t("attn_sinks.weight", a.n_heads)
        if arch in _POST_NORMS:
            t("post_attention_norm.weight", n_embd)
        if arch == "gemma4":  # gemma4.cpp: a scalar per layer, and the proportional-rope table once (first full layer)
            t("layer_output_scale.weight", 1)
            if first_full:
                out.append(TensorShape("rope_freqs.weight", (a.head_dim_k // 2,), i))
    s = layer.recurrent
    if s is not None and arch in ("kimi-linear", "kimi-k3", "glm5-next"):
        out.extend(_kda_tensors(i, n_embd, s, full_rank_gate=arch == "kimi-k3", flat_a=arch == "glm5-next"))
    elif s is not None:
        out.extend(_recurrent_tensors(i, n_embd, s, split_ba=arch in _SPLIT_BA, bc_norms=arch in _SSM_BC_NORMS))

    f = layer.ffn
    if f.is_moe:
        pre_ffn_norm()
        t("ffn_gate_inp.weight", n_embd, f.n_experts)
        # LatentMoE (src/models/nemotron-h.cpp load_arch_tensors): the experts' width is moe_n_embd, between a
        # down and an up projection of the hidden state
        e_embd = f.n_embd_latent or n_embd
        if f.n_embd_latent:  # Kimi K3 names them ffn_routed_down / up (src/models/kimi-k3.cpp)
            lat = "routed" if arch == "kimi-k3" else "latent"
            t(f"ffn_{lat}_down.weight", n_embd, f.n_embd_latent)
            t(f"ffn_{lat}_up.weight", f.n_embd_latent, n_embd)
        if gated_ffn:
            t("ffn_gate_exps.weight", e_embd, f.n_ff_expert, f.n_experts)
        t("ffn_up_exps.weight", e_embd, f.n_ff_expert, f.n_experts)
        t("ffn_down_exps.weight", f.n_ff_expert, e_embd, f.n_experts)
        if arch == "gpt-oss":  # gpt-oss experts and router carry biases
            t("ffn_gate_inp.bias", f.n_experts)
            t("ffn_gate_exps.bias", f.n_ff_expert, f.n_experts)
            t("ffn_up_exps.bias", f.n_ff_expert, f.n_experts)
            t("ffn_down_exps.bias", n_embd, f.n_experts)
        if arch in _EXP_PROBS_B and router_bias:
            t("exp_probs_b.bias", f.n_experts)
        if arch == "gemma4":  # gemma4.cpp: the router's input scale, the second MLP's norms, per-expert scales
            t("ffn_gate_inp.scale", n_embd)
            t("pre_ffw_norm_2.weight", n_embd)
            t("post_ffw_norm_1.weight", n_embd)
            t("post_ffw_norm_2.weight", n_embd)
            t("ffn_down_exps.scale", f.n_experts)
        if f.n_ff_shared:
            if gated_ffn:  # Nemotron-H's shared expert is up + down like its experts (src/models/nemotron-h.cpp)
                t("ffn_gate_shexp.weight", n_embd, f.n_ff_shared)
            t("ffn_up_shexp.weight", n_embd, f.n_ff_shared)
            t("ffn_down_shexp.weight", f.n_ff_shared, n_embd)
            if arch in ("qwen2moe", "qwen3next", "qwen35moe"):
                t("ffn_gate_inp_shexp.weight", n_embd)
    elif f.n_ff and arch in _FUSED_GATE_UP:
        pre_ffn_norm()
        t("ffn_up.weight", n_embd, 2 * f.n_ff)
        t("ffn_down.weight", f.n_ff, n_embd)
    elif f.n_ff:
        pre_ffn_norm()
        if gated_ffn:
            t("ffn_gate.weight", n_embd, f.n_ff)
        t("ffn_up.weight", n_embd, f.n_ff)
        t("ffn_down.weight", f.n_ff, n_embd)
        if arch in _FFN_BIAS:
            t("ffn_up.bias", f.n_ff)
            t("ffn_down.bias", n_embd)
    if arch in _POST_NORMS and (f.n_ff or f.is_moe):
        t("post_ffw_norm.weight", n_embd)
    return out


def _encoder_extras(arch: str, n_embd: int, layer: LayerSpec) -> list[TensorShape]:
    """What a BERT block adds to the decoder-style list: LayerNorm biases, the output projection's bias and,
    for BERT/XLM-R (not nomic-bert, which has no biases), the MLP biases."""
    i = layer.index

    def t(name: str, *shape: int) -> TensorShape:
        return TensorShape(f"blk.{i}.{name}", tuple(shape), i)

    out = [t("attn_output_norm.bias", n_embd), t("layer_output_norm.bias", n_embd)]
    if arch == "bert":
        out += [t("attn_output.bias", n_embd), t("ffn_up.bias", layer.ffn.n_ff), t("ffn_down.bias", n_embd)]
    return out


def _nextn_extras(n_embd: int, i: int) -> list[TensorShape]:
    return [TensorShape(f"blk.{i}.nextn.eh_proj.weight", (2 * n_embd, n_embd), i),
            TensorShape(f"blk.{i}.nextn.enorm.weight", (n_embd,), i),
            TensorShape(f"blk.{i}.nextn.hnorm.weight", (n_embd,), i),
            TensorShape(f"blk.{i}.nextn.shared_head_norm.weight", (n_embd,), i)]


def _kda_tensors(i: int, n_embd: int, s, full_rank_gate: bool = False, flat_a: bool = False) -> list[TensorShape]:
    """A Kimi Delta Attention layer as src/models/kimi-linear.cpp load_arch_tensors creates it: short convolutions
    of q, k and v, their projections, the low-rank forget gate (f_a, f_b) and output gate (g_a, g_b), beta, A, the
    dt bias, the gated norm of one head and the output projection. Kimi K3 (src/models/kimi-k3.cpp): a full-rank
    output gate ssm_g {n_embd, d_inner} instead of g_a / g_b, and A as {n_head}. GLM-5.3-Flash (src/models/
    glm5-next.cpp load_arch_tensors, flat_a): kimi-linear's list with A as {n_head}."""
    def t(name: str, *shape: int) -> TensorShape:
        return TensorShape(f"blk.{i}.{name}", tuple(shape), i)

    hd, p = s.d_state, s.d_inner
    gate = ([t("ssm_g.weight", n_embd, p)] if full_rank_gate
            else [t("ssm_g_a.weight", n_embd, hd), t("ssm_g_b.weight", hd, p)])
    return [*(t(f"ssm_conv1d_{x}.weight", s.d_conv, 1, p) for x in "qkv"),
            *(t(f"attn_{x}.weight", n_embd, p) for x in "qkv"),
            t("ssm_f_a.weight", n_embd, hd), t("ssm_f_b.weight", hd, p), t("ssm_beta.weight", n_embd, s.n_heads),
            t("ssm_a", *((s.n_heads,) if full_rank_gate or flat_a else (1, s.n_heads))), t("ssm_dt.bias", p), *gate,
            t("ssm_norm.weight", hd), t("attn_output.weight", p, n_embd)]


def _recurrent_tensors(i: int, n_embd: int, s, split_ba: bool = False, bc_norms: bool = False) -> list[TensorShape]:
    def t(name: str, *shape: int) -> TensorShape:
        return TensorShape(f"blk.{i}.{name}", tuple(shape), i)

    conv_ch = s.d_inner + 2 * s.n_group * s.d_state
    if s.kind == "short_conv":  # src/models/lfm2.cpp: shortconv conv {l_cache, n_embd}, in_proj (B, C, x), out_proj
        return [t("shortconv.conv.weight", s.d_conv, n_embd), t("shortconv.in_proj.weight", n_embd, 3 * n_embd),
                t("shortconv.out_proj.weight", n_embd, n_embd)]
    if s.kind == "gated_delta_net":  # src/models/qwen3next.cpp: fused qkv + z gate, beta/alpha, conv, out
        qk = 2 * s.n_group * s.d_state
        ba = ([t("ssm_beta.weight", n_embd, s.n_heads), t("ssm_alpha.weight", n_embd, s.n_heads)] if split_ba
              else [t("ssm_ba.weight", n_embd, 2 * s.n_heads)])
        return [t("attn_qkv.weight", n_embd, qk + s.d_inner), t("attn_gate.weight", n_embd, s.d_inner),
                *ba, t("ssm_conv1d.weight", s.d_conv, qk + s.d_inner),
                t("ssm_dt.bias", s.n_heads), t("ssm_a", s.n_heads), t("ssm_norm.weight", s.d_inner // s.n_heads),
                t("ssm_out.weight", s.d_inner, n_embd)]
    if s.kind == "mamba":  # src/models/mamba.cpp (Mamba-1)
        dt_rank = -(-n_embd // 16)  # Jamba's mamba_dt_rank 256 = ceil(4096 / 16) too
        norms = ([t("ssm_dt_norm.weight", dt_rank), t("ssm_b_norm.weight", s.d_state),
                  t("ssm_c_norm.weight", s.d_state)] if bc_norms else [])
        return [t("ssm_in.weight", n_embd, 2 * s.d_inner), t("ssm_conv1d.weight", s.d_conv, s.d_inner),
                t("ssm_conv1d.bias", s.d_inner), t("ssm_x.weight", s.d_inner, dt_rank + 2 * s.d_state),
                *norms[:1], t("ssm_dt.weight", dt_rank, s.d_inner), t("ssm_dt.bias", s.d_inner), *norms[1:],
                t("ssm_a", s.d_state, s.d_inner), t("ssm_d", s.d_inner), t("ssm_out.weight", s.d_inner, n_embd)]
    # Mamba-2 (src/models/mamba.cpp build_mamba2_layer): in_proj = z, xBC, dt
    n_group = max(s.n_group, 1)
    return [t("ssm_in.weight", n_embd, s.d_inner + conv_ch + s.n_heads),
            t("ssm_conv1d.weight", s.d_conv, conv_ch), t("ssm_conv1d.bias", conv_ch),
            t("ssm_dt.bias", s.n_heads), t("ssm_a", 1, s.n_heads), t("ssm_d", 1, s.n_heads),
            t("ssm_norm.weight", s.d_inner // n_group, n_group), t("ssm_out.weight", s.d_inner, n_embd)]


# GGUF tensor name -> the Hugging Face module it comes from (convert_hf_to_gguf's tensor map, reversed), so
# HF quantization configs' module patterns (lm_head, mlp.gate, self_attn, experts) apply to computed tensors.
_HF_MODULE = {
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "attn_q_a": "self_attn.q_a_proj", "attn_q_b": "self_attn.q_b_proj",
    "attn_kv_a_mqa": "self_attn.kv_a_proj_with_mqa", "attn_k_b": "self_attn.kv_b_proj",
    "attn_v_b": "self_attn.kv_b_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "ffn_gate_inp": "mlp.gate", "ffn_gate_shexp": "mlp.shared_experts.gate_proj",
    "ffn_up_shexp": "mlp.shared_experts.up_proj", "ffn_down_shexp": "mlp.shared_experts.down_proj",
    "ffn_gate_exps": "mlp.experts.gate_proj", "ffn_up_exps": "mlp.experts.up_proj",
    "ffn_down_exps": "mlp.experts.down_proj", "attn_qkv": "linear_attn.in_proj_qkvz",
    "attn_gate": "linear_attn.in_proj_z", "ssm_ba": "linear_attn.in_proj_ba",
    "ssm_beta": "linear_attn.in_proj_b", "ssm_alpha": "linear_attn.in_proj_a", "ssm_in": "mixer.in_proj",
    "ssm_out": "mixer.out_proj", "ssm_x": "mixer.x_proj", "ssm_dt": "mixer.dt_proj",
    # Nemotron 3 Super's LatentMoE projections (conversion: mixer.fc1_latent_proj / fc2_latent_proj)
    "ffn_latent_down": "mixer.fc1_latent_proj", "ffn_latent_up": "mixer.fc2_latent_proj",
}


def hf_module_name(gguf_name: str) -> str | None:
    """"blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj"; "output.weight" -> "lm_head";
    None for tensors that are not linear weights (norms, biases, embeddings handled by the caller)."""
    if gguf_name == "output.weight":
        return "lm_head"
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens"
    parts = gguf_name.split(".")
    if len(parts) == 4 and parts[0] == "blk" and parts[3] == "weight" and parts[2] in _HF_MODULE:
        return f"model.layers.{parts[1]}.{_HF_MODULE[parts[2]]}"
    if len(parts) == 5 and parts[0] == "blk" and parts[2] == "indexer" and parts[4] == "weight" \
            and parts[3] in _HF_INDEXER:
        return f"model.layers.{parts[1]}.self_attn.indexer.{_HF_INDEXER[parts[3]]}"
    return None


# DeepSeek V3.2's indexer linears that a checkpoint's quantization covers (wq_b, wk are fp8 in the FP8 release);
# weights_proj is built without a quant_config (vLLM Indexer: ReplicatedLinear(..., quant_config=None)), so it is
# left out and stays in the model dtype
_HF_INDEXER = {"attn_q_b": "wq_b", "attn_k": "wk"}


# The same tensor under another model's module name: Qwen3.5 / 3.6 split Qwen3-Next's fused in_proj_qkvz into
# in_proj_qkv + in_proj_z and name the mixer output linear_attn.out_proj (transformers modeling_qwen3_5.py).
# Gemma 4 keeps its routed experts beside the dense MLP, as layers.N.experts (transformers modeling_gemma4.py
# Gemma4TextDecoderLayer), so nvidia/Gemma-4-26B-A4B-NVFP4's ignore "layers.N.mlp*" leaves them quantized.
_HF_MODULE_ALIASES = {"linear_attn.in_proj_qkvz": ("linear_attn.in_proj_qkv",),
                      "mixer.out_proj": ("linear_attn.out_proj",),
                      "mlp.experts.gate_proj": ("experts.gate_up_proj",),
                      "mlp.experts.up_proj": ("experts.gate_up_proj",),
                      "mlp.experts.down_proj": ("experts.down_proj",)}


def hf_module_names(gguf_name: str) -> tuple[str, ...]:
    """hf_module_name and the other names models give the same module (empty for non-linear tensors)."""
    first = hf_module_name(gguf_name)
    if first is None:
        return ()
    for short, alts in _HF_MODULE_ALIASES.items():
        if first.endswith("." + short):
            stem = first[: -len(short)]
            return (first, *(stem + a for a in alts))
    return (first,)

