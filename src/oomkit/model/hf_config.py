"""A Hugging Face `config.json` (file, directory or dict) -> ModelSpec, read generically.

The layer layout comes from what the config declares: `layer_types`, `sliding_window_pattern`,
`max_window_layers`/`use_sliding_window`, `full_attention_interval`, `hybrid_override_pattern`,
`attn_layer_period`/`offset`, MLA and MoE fields. Field meanings follow transformers' configuration classes
(`configuration_<model>.py`) and how llama.cpp's converter maps them (`convert_hf_to_gguf.py`).
A field the model needs and the config lacks is an error naming it; nothing is silently guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import ModelError, OomkitError
from ..quant import gguf_recipes
from .archs import HF_NAMED_ARCHS, KNOWN_ARCHS
from .jsonfile import read_object
from .spec import (
    Attention,
    Ffn,
    LayerKind,
    LayerSpec,
    ModelSpec,
    RecurrentState,
    RopeScaling,
    shared_kv_sources,
)
from .tensors import PerLayerInputs, TensorShape, architecture_tensors
from .towers import vision_tower
from .weights import inventory_for_format, is_gguf_format

# HF model_type -> llama.cpp architecture name (src/llama-arch.cpp LLM_ARCH_NAMES), as convert_hf_to_gguf.py maps
# them. Mistral and Mixtral convert to "llama"; DeepSeek V2/V3 and Kimi K2 to "deepseek2".
ARCH_BY_MODEL_TYPE = {
    "mllama": "mllama", "mllama_text_model": "mllama",  # Llama 3.2 Vision's cross-attention text model
    "llama": "llama", "mistral": "llama", "mixtral": "llama", "llama4": "llama4", "llama4_text": "llama4",
    "qwen2": "qwen2", "qwen2_moe": "qwen2moe", "qwen2_vl": "qwen2vl", "qwen2_5_vl": "qwen2vl",
    "qwen3": "qwen3", "qwen3_moe": "qwen3moe", "qwen3_next": "qwen3next",
    "qwen3_vl": "qwen3vl", "qwen3_vl_moe": "qwen3vlmoe",
    # the text_config's own model_type of Qwen3-VL (transformers configuration_qwen3_vl.py Qwen3VLTextConfig,
    # configuration_qwen3_vl_moe.py Qwen3VLMoeTextConfig): the same GGUF architectures (conversion/qwen.py
    # Qwen3VLTextModel / Qwen3VLMoeTextModel -> MODEL_ARCH.QWEN3VL / QWEN3VLMOE; src/models/qwen3vl.cpp loads q/k norms)
    "qwen3_vl_text": "qwen3vl", "qwen3_vl_moe_text": "qwen3vlmoe",
    "qwen3_5": "qwen35", "qwen3_5_text": "qwen35", "qwen3_5_moe": "qwen35moe", "qwen3_5_moe_text": "qwen35moe",
    "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3", "gemma3_text": "gemma3",
    "gemma3n": "gemma3n", "gemma3n_text": "gemma3n", "gemma4": "gemma4", "gemma4_text": "gemma4",
    "gpt_oss": "gpt-oss", "deepseek_v2": "deepseek2", "deepseek_v3": "deepseek2", "kimi_k2": "deepseek2",
    "phi": "phi2", "phi3": "phi3", "phimoe": "phimoe",
    "granite": "granite", "granitemoe": "granitemoe", "granitemoehybrid": "granitehybrid",
    "nemotron_h": "nemotron_h", "falcon_h1": "falcon-h1", "jamba": "jamba", "mamba": "mamba", "mamba2": "mamba2",
    "cohere": "command-r", "cohere2": "cohere2", "olmo2": "olmo2", "olmoe": "olmoe", "glm4": "glm4",
    "olmo3": "olmo2",  # conversion/olmo.py Olmo2Model registers Olmo3ForCausalLM (MODEL_ARCH.OLMO2 + sliding window)
    "glm4_moe": "glm4moe", "starcoder2": "starcoder2", "internlm2": "internlm2", "exaone4": "exaone4",
    "smollm3": "smollm3", "mistral3": "mistral3", "ministral": "llama",
    # conversion/mistral3.py Ministral3Model (Devstral 2 / Ministral 3): MODEL_ARCH.MISTRAL3
    "ministral3": "mistral3",
    # conversion/glm.py Glm4MoeLiteModel(DeepseekV2Model) (GLM-4.7-Flash): MODEL_ARCH.DEEPSEEK2, MTP block kept
    "glm4_moe_lite": "deepseek2",
    # conversion/bailingmoe.py: BailingMoeV2ForCausalLM -> bailingmoe2 (Ling 2.0 keeps model_type bailing_moe;
    # _arch_of tells the two apart by `architectures`)
    "bailing_moe": "bailingmoe", "bailing_moe_v2": "bailingmoe2",
    # conversion/lfm2.py LFM2Model / LFM2MoeModel
    "lfm2": "lfm2", "lfm2_moe": "lfm2moe",
    # conversion/mimo.py MimoV2Model (MiMoV2FlashForCausalLM)
    "mimo_v2_flash": "mimo2",
    # conversion/ernie.py Ernie4_5Model / Ernie4_5MoeModel; conversion/hunyuan.py HunYuanMoEModel
    "ernie4_5": "ernie4_5", "ernie4_5_moe": "ernie4_5-moe",
    "hunyuan_v1_moe": "hunyuan-moe",
    # conversion/hunyuan.py HunYuanModel (HunYuanDenseV1ForCausalLM) -> MODEL_ARCH.HUNYUAN_DENSE; its loader
    # (llama_model_hunyuan_vl's, src/models/hunyuan-vl.cpp load_arch_tensors) requires attn_q_norm / attn_k_norm
    "hunyuan_v1_dense": "hunyuan-dense",
    # convert_hf_to_gguf.py NemotronModel (NemotronForCausalLM: Nemotron-Mini-4B, Minitron-4B/8B) -> MODEL_ARCH.NEMOTRON:
    # LayerNorm(1p) with biases, an ungated squared-ReLU FFN (src/models/nemotron.cpp load_arch_tensors)
    "nemotron": "nemotron",
    # conversion/deci.py DeciModel (DeciLMForCausalLM: Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-51B / Ultra)
    "nemotron-nas": "deci",
    # encoder-only embedding models (convert_hf_to_gguf.py BertModel / XLMRobertaModel -> bert, NomicBertModel)
    "bert": "bert", "xlm-roberta": "bert", "nomic_bert": "nomic-bert",
    # convert_hf_to_gguf.py GPT2Model (GPT2LMHeadModel) -> MODEL_ARCH.GPT2
    "gpt2": "gpt2",
    # convert_hf_to_gguf.py StarCoderModel (GPTBigCodeForCausalLM: StarCoder, SantaCoder, OctoCoder, WizardCoder 15B)
    # -> MODEL_ARCH.STARCODER: GPT-2's layout (src/models/starcoder.cpp load_arch_tensors) with one KV head when the
    # config says multi_query (transformers GPTBigCodeAttention: kv_heads = 1 if multi_query else num_heads)
    "gpt_bigcode": "starcoder",
    # conversion/kimi_linear.py KimiLinearModel (KimiLinearForCausalLM) -> MODEL_ARCH.KIMI_LINEAR
    "kimi_linear": "kimi-linear",
    # conversion/glm5next.py Glm5NextModel (Glm5NextForConditionalGeneration / Glm5NextForCausalLM: GLM-5.3-Flash,
    # text_config model_type glm5_next_text) -> MODEL_ARCH.GLM5NEXT (src/models/glm5-next.cpp)
    "glm5_next": "glm5-next", "glm5_next_text": "glm5-next",
    # convert_hf_to_gguf.py ExaoneModel (ExaoneForCausalLM, EXAONE 3.0 / 3.5) -> MODEL_ARCH.EXAONE: a Llama-shaped
    # decoder (src/models/exaone.cpp load_arch_tensors) whose config names the layer count num_layers
    "exaone": "exaone",
    # GLM-4.5V's decoder (text_config model_type glm4v_moe_text): conversion/glm.py registers
    # Glm4vMoeForConditionalGeneration on Glm4MoeModel (MODEL_ARCH.GLM4_MOE, the tower to the mmproj), GLM-4.5-Air's
    # layers with M-RoPE; vLLM runs it as models/glm4_1v.py Glm4vMoeForConditionalGeneration
    "glm4v_moe": "glm4moe", "glm4v_moe_text": "glm4moe",
    # GLM-4.1V-Thinking / GLM-4.6V-Flash (Glm4vForConditionalGeneration, text_config model_type glm4v_text):
    # conversion/glm.py registers it on Glm4Model (MODEL_ARCH.GLM4, the tower to the mmproj): GLM-4-0414's layers
    # (transformers modeling_glm4v.py Glm4vTextDecoderLayer: post_self_attn / post_mlp norms, q/k/v with bias, fused
    # gate_up) with M-RoPE (rope.dimension_sections)
    "glm4v": "glm4", "glm4v_text": "glm4",
    # Qwen3-Omni's thinker (thinker_config.text_config, model_type qwen3_omni_moe_text): conversion/qwen3vl.py
    # Qwen3OmniMoeTextModel(Qwen3VLMoeTextModel) -> MODEL_ARCH.QWEN3VLMOE with num_deepstack_layers 0, Qwen3-MoE
    # layers with q/k norms; the audio and vision encoders go to the mmproj, the talker and code2wav nowhere
    "qwen3_omni_moe": "qwen3vlmoe", "qwen3_omni_moe_text": "qwen3vlmoe",
    # conversion/apertus.py ApertusModel (ApertusForCausalLM) -> MODEL_ARCH.APERTUS: a Llama-shaped decoder with per-head
    # q/k RMSNorms and an ungated xIELU MLP (src/models/apertus.cpp load_arch_tensors: ffn_up / ffn_down, no ffn_gate;
    # the xIELU alpha_n / alpha_p / beta / eps go to the GGUF as per-layer metadata, not tensors)
    "apertus": "apertus",
    # conversion Step35Model, registered for Step3p5ForCausalLM and Step3p7ForConditionalGeneration (Step-3.5-Flash,
    # Step-3.7-Flash: text_config model_type step3p5) -> MODEL_ARCH.STEP35 (src/models/step35.cpp)
    "step3p5": "step35",
    # conversion/laguna.py LagunaModel (LagunaForCausalLM: poolside Laguna XS.2 / S 2.1) -> MODEL_ARCH.LAGUNA
    # (src/models/laguna.cpp, ggml-org/llama.cpp#25165, b10087)
    "laguna": "laguna",
}
# Encoder-only model types: attention weights but no KV cache (llama.cpp allocates none for bert / nomic-bert).
_ENCODERS = {"bert", "xlm-roberta", "nomic_bert"}


def _gemma_embedding(cfg: Mapping[str, Any], outer: Mapping[str, Any], model_type: str) -> bool:
    """EmbeddingGemma (google/embeddinggemma-300m): a gemma3_text config of class Gemma3TextModel with
    use_bidirectional_attention, which convert_hf_to_gguf.py registers as EmbeddingGemma ("Gemma3TextModel") ->
    MODEL_ARCH.GEMMA_EMBEDDING; llama.cpp runs it without a KV cache (src/models/gemma-embedding.cpp
    load_arch_hparams: causal_attn = false; src/llama-model.cpp create_memory: LLM_ARCH_GEMMA_EMBEDDING -> nullptr)."""
    return model_type == "gemma3_text" and (cfg.get("use_bidirectional_attention") is True
                                            or "Gemma3TextModel" in (outer.get("architectures") or ()))

# EmbeddingGemma's sentence-transformers Dense modules, GGUF-named (llama-arch.cpp LLM_TENSOR_DENSE_2_OUT "dense_2",
# LLM_TENSOR_DENSE_3_OUT "dense_3"): 2_Dense n_embd -> 4 x n_embd and 3_Dense back, no bias (google/embeddinggemma-300m:
# MTEB's n_parameters 307,581,696 is the transformer's 302,863,104 plus exactly 2 x 768 x 3072; the published GGUF
# holds dense_2 {768, 3072} and dense_3 {3072, 768}, code search id 70847774442). They sit beside config.json as
# 2_Dense/ and 3_Dense/ (modules.json), and these engines load them: llama.cpp from a GGUF converted with --sentence-transformers-dense-modules (conversion/gemma.py EmbeddingGemma
# generate_extra_tensors; src/models/gemma-embedding.cpp load_arch_tensors: dense_2 {n_embd, dense_2_feat_out},
# dense_3 {dense_3_feat_in, n_embd}, TENSOR_NOT_REQUIRED, PR #16367), as ggml-org/embeddinggemma-300M-GGUF is
# since its reconversion (llama.cpp#18677: 316 tensors, 314 before); Ollama's library GGUF, its own conversion, as
# dense.0 / dense.1 (model/models/gemma3/embed.go); vLLM's pooling adapter (model_executor/models/adapters.py
# _load_st_projector: nn.Linear in float32 / the pooling head_dtype). transformers' Gemma3TextModel has no such layers
# (engines/transformers/weights.py leaves them out), and no SGLang code that loads them was found
# (engines/sglang/weights.py leaves them out too).
ST_DENSE_TENSORS = ("dense_2.weight", "dense_3.weight")


def _st_dense(n_embd: int) -> tuple[TensorShape, TensorShape]:
    return (TensorShape(ST_DENSE_TENSORS[0], (n_embd, 4 * n_embd)),
            TensorShape(ST_DENSE_TENSORS[1], (4 * n_embd, n_embd)))


_TEXT_KEYS = ("text_config", "llm_config", "language_config")
# Model types whose config.json this reader cannot turn into a true per-layer spec, refused rather than read
# generically (DeepSeek-V4, once refused here, is read by _deepseek_v4_spec)
_REFUSED = {
            # Phi-4-mini-flash-reasoning (Phi4FlashForCausalLM, SambaY): Mamba + sliding-window self-decoder, a
            # cross-decoder of gated memory units reusing one full-attention layer's KV (model/names.py _PHI4FLASH)
            "phi4flash": "Phi-4-mini-flash-reasoning's SambaY layers (model_type phi4flash: Mamba layers, 512-token "
                         "sliding-window attention, a cross-decoder reusing one full-attention layer's KV through gated "
                         "memory units) are not modelled; llama.cpp has no architecture for it (src/llama-arch.cpp; "
                         "ggml-org/llama.cpp#20880, which added one, was closed unmerged), vLLM "
                         "ran Phi4FlashForCausalLM in its V0 engine only, up to 0.10.2",
            # (vLLM lists KimiK3ForConditionalGeneration in model_executor/models/registry.py from 0.27 (0.27.1's
            # wheel read; absent in 0.26.0), DeepseekV4ForCausalLM from 0.20.0, MiniMaxM3SparseForCausalLM from 0.24.0)
            # MiniMax-M3 (model_type minimax_m3, minimax_m3_vl's text_config): GQA layers with MiniMax Sparse
            # Attention's block indexer cache (src/models/minimax-m3.cpp, llama_kv_cache_msa), read from a GGUF
            "minimax_m3": "MiniMax-M3 (model_type minimax_m3) is read from its GGUF only: its sparse-attention "
                          "indexer cache and weights are not derived from config.json; give the .gguf file "
                          "(sized for llama.cpp only)"}


def load_config(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    return read_object(p)  # a regular file under a size cap; NaN, Infinity and deep nesting refused


def text_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The language model's config: VLM wrappers nest it under text_config (Gemma 3, Qwen3.5, Llama 4); omni
    models one level deeper, under thinker_config.text_config (Qwen3-Omni: the thinker is the language model text
    engines load; convert_hf_to_gguf.py ModelBase.load_hparams: config["text_config"] =
    config["thinker_config"]["text_config"])."""
    thinker = cfg.get("thinker_config")
    if isinstance(thinker, Mapping) and isinstance(thinker.get("text_config"), Mapping):
        outer = {k: v for k, v in cfg.items() if k != "thinker_config"}
        return text_config({**outer, **{k: v for k, v in thinker.items() if k != "model_type"}})
    for key in _TEXT_KEYS:
        inner = cfg.get(key)
        if isinstance(inner, Mapping) and ("hidden_size" in inner or "num_hidden_layers" in inner):
            merged = dict(inner)
            for k in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
                if k not in merged and k in cfg:
                    merged[k] = cfg[k]
            if "model_type" not in merged and "model_type" in cfg:
                merged["model_type"] = cfg["model_type"]
            return merged
    return dict(cfg)


# The context-length fields engines read from config.json, each by its own rule: vLLM's possible_keys (config/model.py
# _get_and_verify_max_len; transformers_utils/model_arch_config_convertor.py derive_max_model_len_and_key from 0.14)
# and SGLang's CONTEXT_LENGTH_KEYS (hf_transformers_utils.py get_context_length) are both within these
CONTEXT_LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                       "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")


# configs whose class reads max_position_embeddings as n_positions (transformers attribute_map: GPT2Config,
# GPTBigCodeConfig, GPTJConfig, CodeGenConfig), so getattr(config, "max_position_embeddings") finds it
_N_POSITIONS_ALIASED = {"gpt2", "gpt_bigcode", "gptj", "codegen"}


def config_lengths(cfg: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """The CONTEXT_LENGTH_KEYS the (text) config gives as positive integers, as written (max_position_embeddings also
    where the config class aliases it to n_positions). A tokenizer-style huge model_max_length (1e30) is kept: vLLM
    from 0.8.3 takes it as it is."""
    if cfg.get("model_type") in _N_POSITIONS_ALIASED and cfg.get("max_position_embeddings") is None:
        cfg = {**cfg, "max_position_embeddings": cfg.get("n_positions")}
    out = []
    for k in CONTEXT_LENGTH_KEYS:
        v = cfg.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0 or v == float("inf"):
            continue
        if int(v) == v:
            out.append((k, int(v)))
    return tuple(out)


# llama.cpp keeps every hparam (counts, dimensions, the trained context) in a uint32_t (src/llama-hparams.h
# llama_hparams): no count or dimension of a real config is larger.
_MAX_FIELD = (1 << 32) - 1


class _Reader:
    """Typed access to config fields; a missing required field is an OomkitError naming it."""

    def __init__(self, cfg: Mapping[str, Any], name: str):
        self.cfg, self.name = cfg, name

    def has(self, *keys: str) -> bool:
        return any(self.cfg.get(k) is not None for k in keys)

    def int(self, *keys: str, default: int | None = None, why: str = "") -> int:
        for k in keys:
            v = self.cfg.get(k)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or v != v or int(v) != v:
                    raise OomkitError(f"{self.name}: config field {k}={v!r} is not a non-negative integer")
                if v > _MAX_FIELD:  # 1e308 is an integer too: the sizes built from it overflowed a float
                    raise OomkitError(f"{self.name}: config field {k}={v:.4g} is more than any model's "
                                      f"({_MAX_FIELD:,}, a uint32); the file is damaged or not a real model")
                return int(v)
        if default is not None:
            return default
        need = " or ".join(keys)
        raise OomkitError(f"{self.name}: config.json lacks {need}{' (' + why + ')' if why else ''}")

    def get(self, key: str, default: Any = None) -> Any:
        v = self.cfg.get(key)
        return default if v is None else v

    def int_at(self, key: str, i: int, n: int) -> int:
        """A field given once or once per layer (Hunyuan-A13B's moe_topk, moe_intermediate_size, num_shared_expert
        lists, transformers configuration_hunyuan_v1_moe.py): the value for layer i of n."""
        v = self.cfg.get(key)
        if isinstance(v, list):
            if len(v) != n:
                raise OomkitError(f"{self.name}: config field {key} lists {len(v)} values for {n} layers")
            return _Reader({key: v[i]}, self.name).int(key)
        return self.int(key)


def spec_from_config(
    config: Mapping[str, Any], name: str = "model", source: str = "", weight_format: str | None = None,
    publisher: str | None = None,
) -> ModelSpec:
    """Build the per-layer ModelSpec of a config.json dict. `weight_format` as resolve() names it (None: the
    config's own dtype / quantization_config); `publisher`: the GGUF's publisher, as resolve.gguf_publisher reads
    it from a GGUF repo's name (weights.gguf_inventory)."""
    if not isinstance(config, Mapping):
        raise OomkitError(f"{name}: config must be a JSON object")
    nested = config.get("text_config")
    if nested is not None and not isinstance(nested, Mapping) and "num_hidden_layers" in config:
        # transformers' get_text_config() returns the attribute as it is, and the engines read its fields
        # (vLLM: hf_text_config.num_attention_heads): a list or a string there stops them at startup, while this
        # reader would read the outer fields as the language model's (with none outside, "config.json lacks
        # num_hidden_layers" below says what is missing)
        raise OomkitError(f"{name}: config field text_config must be a JSON object (the language model's config), "
                          f"not {type(nested).__name__}")
    outer = dict(config)
    cfg = text_config(outer)
    r = _Reader(cfg, name)
    model_type = str(cfg.get("model_type") or outer.get("model_type") or "")
    labels: list[str] = []
    for mt in (model_type, str(outer.get("model_type") or "")):  # kimi_k3 wraps a kimi_linear text_config
        if mt in _REFUSED:
            raise ModelError(f"{name}: {_REFUSED[mt]}")
    if model_type == "deepseek_v4":
        return _deepseek_v4_spec(cfg, r, name, source, weight_format, publisher)
    if model_type == "nemotron_h" and isinstance(cfg.get("layers_block_type"), list):
        cfg = _nemotron_h_schedule(cfg, name)
        r = _Reader(cfg, name)
    arch = ARCH_BY_MODEL_TYPE.get(model_type)
    if model_type == "kimi_linear" and outer.get("model_type") == "kimi_k3":
        # conversion/kimi_k3.py KimiK3Model (KimiK3ForConditionalGeneration) -> MODEL_ARCH.KIMI_K3: Kimi-Linear's
        # layer kinds (src/models/kimi-k3.cpp is_recr = n_head_kv == 0) with attention residuals, a latent MoE, a
        # full-rank KDA gate and an MLA output gate (_kimi_k3_extras); the vision tower is skipped (text only)
        arch = "kimi-k3"
    encoder = model_type in _ENCODERS
    if _gemma_embedding(cfg, outer, model_type):
        arch, encoder = "gemma-embedding", True
    if model_type == "bailing_moe" and "BailingMoeV2ForCausalLM" in (outer.get("architectures") or ()):
        arch = "bailingmoe2"  # Ling 2.0: model_type bailing_moe, class BailingMoeV2 (conversion/bailingmoe.py)
    if model_type == "nemotron_h" and ("num_experts_per_tok" in outer or "num_experts_per_tok" in cfg):
        # conversion/nemotron.py NemotronHModel.__init__: num_experts_per_tok in the config (or its llm_config) ->
        # MODEL_ARCH.NEMOTRON_H_MOE (Nemotron 3 Nano / Super / Ultra); the dense Nemotron-H stays nemotron_h
        arch = "nemotron_h_moe"
    if model_type == "granitemoehybrid" and isinstance(cfg.get("layer_types"), list) \
            and "mamba" not in cfg["layer_types"]:
        # conversion/granite.py GraniteHybridModel.__init__: no SSM layer ("non-hybrid, but keep the same parent class
        # by setting all layers to 'attention'", Granite 4.0 Micro) -> MODEL_ARCH.GRANITE, or GRANITE_MOE where
        # num_experts_per_tok is set
        arch = "granitemoe" if r.int("num_experts_per_tok", "num_experts_per_token", default=0) else "granite"
    if arch is None:
        if not model_type:
            raise OomkitError(f"{name}: config.json lacks model_type")
        arch = model_type
        if model_type not in KNOWN_ARCHS and model_type not in HF_NAMED_ARCHS:
            labels.append(f"architecture '{model_type}' is not in the known list: read generically")

    n_layers = r.int("num_hidden_layers", "n_layer", "num_layers")
    n_embd = r.int("hidden_size", "d_model", "n_embd")
    if model_type == "opt" and (r.int("word_embed_proj_dim", default=n_embd) != n_embd
                                or not r.get("do_layer_norm_before", True)):
        # OPTDecoder: project_in / project_out where word_embed_proj_dim != hidden_size, no final_layer_norm where
        # do_layer_norm_before is false (OPT-350M): tensors this reader does not list
        raise ModelError(f"{name}: an OPT with word_embed_proj_dim != hidden_size or post-norm layers (OPT-350M) is "
                         "not modelled")
    n_vocab = r.int("vocab_size", "padded_vocab_size")
    if n_layers == 0 or n_embd == 0 or n_vocab == 0:
        raise OomkitError(f"{name}: num_hidden_layers, hidden_size and vocab_size must be positive")
    if arch == "gemma3" and n_vocab > _GEMMA3_TOKENIZER_ROWS and weight_format is not None \
            and is_gguf_format(weight_format):
        # convert_hf_to_gguf.py Gemma3Model.modify_tensors: "remove OOV (out-of-vocabulary) rows in token_embd", the
        # embedding cut to the sentencepiece vocabulary; the multimodal checkpoints' 64 image soft-token rows (vocab_size
        # 262208) stay in the safetensors only
        n_vocab = _GEMMA3_TOKENIZER_ROWS
    n_nextn = r.int("num_nextn_predict_layers", "mtp_num_hidden_layers", default=0)
    if model_type in _NEXTN_FIXED:
        n_nextn = _NEXTN_FIXED[model_type]
    if n_nextn and arch in _GGUF_DROPS_MTP and model_type not in _GGUF_KEEPS_MTP and weight_format is not None and is_gguf_format(weight_format):
        n_nextn = 0  # conversion/deepseek.py DeepseekV2Model.skip_mtp: the GGUF has no next-n block
    # bidirectional encoders (and EmbeddingGemma): attention weights, no KV cache
    kinds = [LayerKind.NONE] * n_layers if encoder else _layer_kinds(r, model_type, n_layers)
    # Next-n / MTP blocks follow the trunk (layer index n_layers...), shaped like its last layer; MiMo-V2's are
    # sliding (conversion/mimo.py: hybrid_layer_pattern + [1] * _n_nextn)
    if model_type == "step3p5":
        kinds += _step_mtp_kinds(r, n_layers, n_nextn)
    elif model_type in _GLM5_NEXT:
        # src/models/glm5-next.cpp load_arch_tensors: the NextN block is an MLA + indexer block (the else branch of
        # is_recr) with a MoE, whatever the trunk's last layer is (GLM-5.3-Flash's layer 44 is KDA)
        kinds += [LayerKind.LATENT] * n_nextn
    else:
        kinds += [LayerKind.SLIDING if model_type == "mimo_v2_flash" else _nemotron_mtp_kind(r, model_type)
                  or kinds[-1]] * n_nextn
    # Gemma 3n / Gemma 4: the last num_kv_shared_layers layers read the KV of the last earlier layer of their kind
    kv_source = shared_kv_sources(kinds, n_layers - r.int("num_kv_shared_layers", default=0), n_layers)
    deci = _deci_blocks(r, n_layers, n_embd) if model_type == "nemotron-nas" else None
    layers = tuple(
        LayerSpec(
            index=i,
            kind=kind,
            attention=deci[i][0] if deci else _attention(r, kind, model_type, n_embd)
            if kind not in (LayerKind.RECURRENT, LayerKind.NONE) or encoder else None,
            recurrent=_recurrent(r, model_type, n_embd) if (kind is LayerKind.RECURRENT or model_type == "falcon_h1")
            else None,
            ffn=deci[i][1] if deci else _nextn_ffn(r, model_type, i, n_layers)
            if i >= n_layers and model_type in _NEXTN_DENSE else _nemotron_mtp_ffn(r) if i >= n_layers and
            model_type == "nemotron_h" else _ffn(r, model_type, min(i, n_layers - 1), n_layers, kind),
            parallel_recurrent=model_type == "falcon_h1", kv_source=kv_source.get(i),
        )
        for i, kind in enumerate(kinds)
    )
    if arch == "mllama":
        layers = _mllama_cross_layers(r, layers)
    if arch == "gemma-embedding":
        # no cache, but the window of each sliding layer as the GGUF keeps it (sliding_window, the layer_types'
        # pattern): Ollama's library conversion runs these layers as gemma3's (engines/ollama/weights.py)
        window = r.int("sliding_window", default=0)
        slides = _layer_kinds(r, model_type, n_layers)
        layers = tuple(replace(la, attention=replace(la.attention, window=window))
                       if window and slides[la.index] is LayerKind.SLIDING else la for la in layers)
    if model_type == "glm_moe_dsa" or model_type in _GLM5_NEXT:
        # glm5-next.cpp load_hparams: is_indexer_full from attention.indexer.types (every layer full by default);
        # an MLA layer whose entry is "shared" takes its indexer tensors TENSOR_NOT_REQUIRED
        shared = _glm_dsa_shared_indexers(r, n_layers)
        layers = tuple(replace(la, attention=replace(la.attention, indexer_shared=True))
                       if la.index < n_layers and shared[la.index] and la.attention is not None else la
                       for la in layers)
    n_ctx_train = r.int("max_position_embeddings", "max_sequence_length", "seq_length", "n_positions", default=0)
    if model_type in ("roberta", "xlm-roberta") and n_ctx_train:
        # positions start after padding_idx (transformers create_position_ids_from_input_ids), so 2 of XLM-R's 8194
        # rows are never a token's: llama.cpp's converter writes context_length = 8194 - (1 + pad_token_id)
        # (conversion/bert.py RobertaModel / XLMRobertaModel _position_offset; XLMRobertaConfig pad_token_id=1)
        n_ctx_train -= 1 + r.int("pad_token_id", default=1)
    if n_ctx_train == 0:
        labels.append("max_position_embeddings not given: trained context unknown")
    # LFM2 names it tie_embedding (transformers configuration_lfm2.py: tie_word_embeddings = tie_embedding, default True)
    tied = cfg.get("tie_word_embeddings", outer.get("tie_word_embeddings", cfg.get("tie_embedding",
                                                                                 model_type in _TIED_BY_DEFAULT)))
    if tied is not None and not isinstance(tied, bool):  # bool("false") is True: a string would tie untied weights
        raise OomkitError(f"{name}: config field tie_word_embeddings={tied!r:.40} is not true or false")
    tied = bool(tied)

    tensors = architecture_tensors(
        arch=arch, n_embd=n_embd, n_vocab=n_vocab, layers=layers, tied=tied,
        attention_bias=_attention_bias(cfg, model_type), gated_ffn=model_type not in _UNGATED_FFN,
        n_nextn=n_nextn, n_positions=_learned_positions(r, model_type), n_token_types=r.int("type_vocab_size", default=0)
        if model_type in _ENCODERS else 0, ple=_per_layer_inputs(r, model_type),
        router_bias=_router_bias(cfg, model_type), qk_norm=cfg.get("use_qk_norm") is not False,
    )
    if arch == "kimi-k3":
        tensors = tensors + _kimi_k3_extras(r, layers, n_embd)
    if model_type == "step3p5":
        tensors = _in_file_order(tensors, _step_extras(r, layers, n_embd, n_vocab, n_layers))
    if model_type in _GLM5_NEXT:
        tensors = _in_file_order(tensors, _glm5_next_extras(r, layers, n_embd, n_layers))
    if model_type == "laguna" and r.get("gating", False):
        # src/models/laguna.cpp load_arch_tensors: the per-head softplus output gate (self_attn.g_proj ->
        # attn_gate {n_embd, n_head(il)}) on every layer, as step35.cpp's head-wise gate
        tensors = _in_file_order(tensors, tuple(
            TensorShape(f"blk.{la.index}.attn_gate.weight", (n_embd, la.attention.n_heads), la.index)
            for la in layers if la.attention is not None))
    if arch == "gemma-embedding":
        tensors = tensors + _st_dense(n_embd)  # the sentence-transformers Dense projections (ST_DENSE_TENSORS)
    weights = inventory_for_format(tensors, arch=arch, config=cfg, weight_format=weight_format, name=name,
                                   publisher=publisher)
    mix_label = (gguf_recipes.mix_label(weight_format, arch, [(t.name, t.shape) for t in tensors], weights.publisher)
                 if weight_format else None)
    if mix_label:
        labels.append(mix_label)
    tower = vision_tower(outer)
    if tower is not None:
        # SGLang's Llama 4 (models/mllama4.py Llama4ForConditionalGeneration.__init__) builds the tower only with
        # --enable-multimodal from 0.4.10 (has_vision = has_vision_weights and enable_multimodal; 0.4.10 -> 0.5.20
        # read), unconditionally up to 0.4.9
        sglang = ("SGLang up to 0.4.9 (from 0.4.10 only with --enable-multimodal)"
                  if (outer.get("vision_config") or {}).get("model_type") == "llama4_vision_model" else "SGLang")
        labels.append(f"vision tower: {tower.params / 1e9:.2f} B parameters ({tower.nbytes(2) / 2**30:.2f} GiB at 16 bits) "
                      f"apart from the language model; vLLM, {sglang} and transformers load it with the checkpoint and "
                      "count it in their weights, llama.cpp and Ollama load it from the mmproj file")
    elif isinstance(outer.get("vision_config"), Mapping):
        labels.append("the config declares a vision tower (vision_config) that is not counted in these weights")
    kv_note = None if weight_format and is_gguf_format(weight_format) else checkpoint_kv_cache_note(outer, cfg)
    if kv_note:
        labels.append(kv_note)
    if isinstance(outer.get("thinker_config"), Mapping):  # Qwen3-Omni: text_config() read the thinker's decoder
        labels.append("the thinker's language model" + (" and vision encoder" if tower is not None else "") + ": its "
                      "audio encoder" + ("" if tower is not None else " and vision encoder") + " (and a talker / "
                      "code2wav the checkpoint may hold) are not counted in these weights; vLLM loads the encoders with "
                      "the thinker, llama.cpp from the mmproj file")
    return ModelSpec(
        name=name, architecture=arch, n_embd=n_embd, n_vocab=n_vocab, n_ctx_train=n_ctx_train, layers=layers,
        weights=weights, tied_embeddings=tied, n_nextn_layers=n_nextn, source=source, labels=tuple(labels),
        towers=(tower,) if tower else (), rope_scaling=rope_scaling(cfg, name), config_lengths=config_lengths(cfg),
        partial_rotary_factor=partial_rotary_factor(cfg), hf_model_type=model_type,
        # convert_hf_to_gguf.py GraniteHybridModel.set_gguf_parameters: use_rope = Bamba or no Mamba layers
        rope_finetuned=("BambaForCausalLM" in (outer.get("architectures") or ())
                        or not any(la.recurrent is not None for la in layers)) if arch == "granitehybrid" else None,
        **({} if weight_format and is_gguf_format(weight_format)
           else {**checkpoint_kv_cache(outer, cfg), **checkpoint_kv_cache_layout(outer, cfg)}),
    )


def checkpoint_kv_cache(outer: Mapping[str, Any], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The KV-cache quantization the checkpoint's quantization_config declares, as ModelSpec's
    checkpoint_kv_cache_dtype / checkpoint_kv_cache_method: the top-level config's (vLLM reads
    hf_config.quantization_config), else the text config's. The lookup is vLLM's (utils/torch_utils.py
    get_kv_cache_quant_algo_string, 0.14.0-0.34.0): the "quantization" section (hf_quant_config.json's layout) before
    the config itself, kv_cache_scheme before kv_cache_quant_algo; a scheme {dynamic: false, num_bits: 8, type:
    float} is "fp8", {num_bits: 4, type: float} "nvfp4" (0.20+), another "unrecognized"; a name lower-cased. A null
    kv_cache_scheme (compressed-tensors' "none declared") or none at all: {} (the fields' defaults)."""
    qc = outer.get("quantization_config")
    if not isinstance(qc, Mapping):
        qc = cfg.get("quantization_config")
    if not isinstance(qc, Mapping):
        return {}
    inner = qc.get("quantization")
    inner = inner if isinstance(inner, Mapping) else qc
    algo = (inner.get("kv_cache_scheme") or qc.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
            or qc.get("kv_cache_quant_algo"))
    if isinstance(algo, Mapping):
        if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
            algo = "fp8"
        elif algo.get("num_bits") == 4 and algo.get("type") == "float":
            algo = "nvfp4"
        else:
            algo = "unrecognized"
    if not isinstance(algo, str) or not algo:
        return {}
    return {"checkpoint_kv_cache_dtype": algo.lower(),
            "checkpoint_kv_cache_method": str(qc.get("quant_method") or inner.get("quant_method") or "")}


def checkpoint_kv_cache_note(outer: Mapping[str, Any], cfg: Mapping[str, Any]) -> str | None:
    """A kv_cache_quant_algo that is not a name (a number, a list, an object, true): the engines part ways on it.
    SGLang takes the checkpoint's KV cache as FP8 only for the string "FP8" and keeps the model's dtype otherwise
    (isinstance(kv_cache_quant_algo, str) in model_executor/model_runner.py init_memory_pool from 0.5.3 (0.5.3, 0.5.10
    read), mem_cache/kv_cache_dtype.py by 0.5.23); vLLM refuses to load a ModelOpt checkpoint whose "quantization"
    section holds one (layers/quantization/modelopt.py ModelOptQuantConfigBase.from_config, 0.10.0-0.34.0 read:
    ValueError "kv_cache_quant_algo must be a string, got <class 'int'>") and, from the flat layout, reads an object
    as a kv_cache_scheme and anything else as none (utils/torch_utils.py get_kv_cache_quant_algo_string).
    checkpoint_kv_cache reads it as vLLM's flat layout does; this says so, as the spec's note. None for a string or
    none at all."""
    qc = outer.get("quantization_config")
    if not isinstance(qc, Mapping):
        qc = cfg.get("quantization_config")
    if not isinstance(qc, Mapping):
        return None
    inner = qc.get("quantization")
    for prefix, where in (("quantization.", inner), ("", qc)):
        v = where.get("kv_cache_quant_algo") if isinstance(where, Mapping) else None
        if v is None or isinstance(v, str):
            continue
        shown = json.dumps(v, default=str)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        read = checkpoint_kv_cache(outer, cfg).get("checkpoint_kv_cache_dtype")
        vllm = ("vLLM refuses to load it (\"kv_cache_quant_algo must be a string\")" if prefix
                else "vLLM reads it so")
        return (f"quantization_config.{prefix}kv_cache_quant_algo = {shown} is not a name (a string): read as "
                + (f"a kv_cache_scheme ({read})" if read else "no KV-cache quantization")
                + f"; SGLang keeps the model's dtype, {vllm}")
    return None


def hf_quant_config_fields(hf_quant_config: Any) -> dict[str, Any]:
    """ModelSpec's hf_quant_config_* from a ModelOpt hf_quant_config.json (the whole file: {"producer": ...,
    "quantization": {...}}): the section's kv_cache_quant_algo lower-cased where it is a string (SGLang takes only a
    string, configure_kv_cache_dtype) and its quant_algo upper-cased; {} where there is no such section."""
    section = hf_quant_config.get("quantization") if isinstance(hf_quant_config, Mapping) else None
    if not isinstance(section, Mapping):
        return {}
    algo, kv = section.get("quant_algo"), section.get("kv_cache_quant_algo")
    return {"hf_quant_config_kv_cache_dtype": kv.lower() if isinstance(kv, str) and kv else None,
            "hf_quant_config_quant_algo": algo.upper() if isinstance(algo, str) else ""}


def checkpoint_kv_cache_layout(outer: Mapping[str, Any], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Where checkpoint_kv_cache found the declaration, for engines that read only some layouts (SGLang's
    layers/quantization/modelopt_quant.py from_config takes a config with a top-level quant_algo as config.json's flat
    layout and reads only its kv_cache_scheme up to 0.5.14; the "quantization" section, hf_quant_config.json's layout,
    otherwise): checkpoint_kv_cache_key, "kv_cache_scheme" / "kv_cache_quant_algo" with "quantization." before it for
    the nested section, in checkpoint_kv_cache's order; checkpoint_quant_algo, the top-level quant_algo, else the
    section's, upper-cased. {} where nothing is declared."""
    qc = outer.get("quantization_config")
    if not isinstance(qc, Mapping):
        qc = cfg.get("quantization_config")
    if not isinstance(qc, Mapping) or not checkpoint_kv_cache(outer, cfg):
        return {}
    inner = qc.get("quantization")
    inner = inner if isinstance(inner, Mapping) else None
    places = ([("quantization.", inner)] if inner is not None else []) + [("", qc)]
    key = next((prefix + name for name in ("kv_cache_scheme", "kv_cache_quant_algo") for prefix, where in places
                if where.get(name)), "")
    algo = qc.get("quant_algo") or (inner or {}).get("quant_algo")
    return {"checkpoint_kv_cache_key": key, "checkpoint_quant_algo": str(algo).upper() if algo else ""}


# The note of a DeepSeek-V4 spec read from config.json, which also marks it for vLLM's checkpoint sizing
# (engines/vllm/weights.py _deepseek_v4_checkpoint)
DSV4_CONFIG_LABEL = ("DeepSeek-V4 read from config.json: llama.cpp's GGUF sized as Q8_0 (no GGUF file type named); "
                     "vLLM sizes the checkpoint as it loads it (MXFP4 experts, block-FP8 linear layers)")


def _deepseek_v4_spec(cfg: Mapping[str, Any], r: _Reader, name: str, source: str, weight_format: str | None,
                      publisher: str | None) -> ModelSpec:
    """DeepSeek-V4 (model_type deepseek_v4) as llama.cpp's GGUF of it holds it. The converter (conversion/deepseek.py
    DeepseekV4Model.set_gguf_parameters) writes block_count = num_hidden_layers + num_nextn_predict_layers,
    head_count_kv = num_key_value_heads (1), key/value_length = head_dim, sliding_window, q_lora_rank,
    o_lora_rank / o_groups (attention.output_lora_rank / output_group_count), compress_ratios as given (the loader
    reads the first block_count: src/models/deepseek4.cpp load_arch_hparams), index_n_heads / index_head_dim /
    index_topk (attention.indexer.*), hc_mult (hyper_connection.count), num_hash_layers (hash_layer_count, at most
    block_count), moe_intermediate_size, n_routed_experts, n_shared_experts; the layers are then what
    gguf_file._attention_dims builds for deepseek4: every block slides (set_swa_pattern(0), the MTP block too), one
    K-only head of head_dim, compress_ratio 4 with the lightning indexer, 128 without. Tensors as
    deepseek4.cpp load_arch_tensors asks for them (DSpark stages beyond the MTP block are not in the GGUF)."""
    n_trunk = r.int("num_hidden_layers")
    n_embd, n_vocab = r.int("hidden_size"), r.int("vocab_size")
    n_nextn = r.int("num_nextn_predict_layers", default=0)
    n_all = n_trunk + n_nextn
    ratios = cfg.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < n_all or any(x not in (0, 4, 128) for x in ratios[:n_all]):
        raise ModelError(f"{name}: DeepSeek-V4 needs compress_ratios, one of 0, 4, 128 for each of the {n_all} "
                         "blocks (deepseek4.cpp load_arch_hparams)")
    n_head, n_kv = r.int("num_attention_heads"), r.int("num_key_value_heads", default=1)
    hd, window = r.int("head_dim"), r.int("sliding_window")
    ql, og, olr, hc = r.int("q_lora_rank"), r.int("o_groups"), r.int("o_lora_rank"), r.int("hc_mult")
    if og == 0:  # the grouped output projection splits the heads into o_groups (deepseek4.cpp attn_output_a)
        raise ModelError(f"{name}: config field o_groups = 0: DeepSeek-V4's output projection needs at least one group")
    ih, ik, itop = r.int("index_n_heads"), r.int("index_head_dim"), r.int("index_topk")
    n_exp, used = r.int("n_routed_experts"), r.int("num_experts_per_tok")
    ffe, n_sh = r.int("moe_intermediate_size"), r.int("n_shared_experts", default=0)
    n_hash = min(r.int("num_hash_layers", default=0), n_all)
    ffn = Ffn(n_experts=n_exp, n_experts_used=used, n_ff_expert=ffe, n_shared_experts=1 if n_sh else 0,
              n_ff_shared=ffe * n_sh)
    layers = tuple(LayerSpec(index=i, kind=LayerKind.SLIDING, ffn=ffn, attention=Attention(
        n_heads=n_head, n_kv_heads=n_kv, head_dim_k=hd, head_dim_v=hd, window=window, k_only=True,
        compress_ratio=ratios[i], **({"index_head_dim": ik, "index_n_heads": ih, "index_topk": itop}
                                     if ratios[i] == 4 else {}))) for i in range(n_all))
    wide, mix = hc * n_embd, (2 + hc) * hc
    ts = [TensorShape("token_embd.weight", (n_embd, n_vocab)), TensorShape("output_norm.weight", (n_embd,)),
          TensorShape("output.weight", (n_embd, n_vocab)), TensorShape("output_hc_fn.weight", (wide, hc)),
          TensorShape("output_hc_base.weight", (hc,)), TensorShape("output_hc_scale.weight", (1,))]
    for i in range(n_all):
        def t(n: str, *shape: int, i: int = i) -> TensorShape:
            return TensorShape(f"blk.{i}.{n}", shape, i)
        ts += [t("attn_norm.weight", n_embd), t("attn_sinks.weight", n_head), t("attn_q_a.weight", n_embd, ql),
               t("attn_q_a_norm.weight", ql), t("attn_q_b.weight", ql, n_head * hd), t("attn_kv.weight", n_embd, hd),
               t("attn_kv_a_norm.weight", hd), t("attn_output_a.weight", n_head * hd // og, olr * og),
               t("attn_output_b.weight", og * olr, n_embd)]
        ts += [t(f"hc_{x}_{w}.weight", *s) for x in ("attn", "ffn")
               for w, s in (("fn", (wide, mix)), ("base", (mix,)), ("scale", (3,)))]
        c = {4: 2, 128: 1}.get(ratios[i], 0)
        if c:
            ts += [t("attn_compressor_kv.weight", n_embd, c * hd), t("attn_compressor_gate.weight", n_embd, c * hd),
                   t("attn_compressor_ape.weight", c * hd, ratios[i]), t("attn_compressor_norm.weight", hd)]
        if ratios[i] == 4:
            ts += [t("indexer.proj.weight", n_embd, ih), t("indexer.attn_q_b.weight", ql, ih * ik),
                   t("indexer_compressor_kv.weight", n_embd, 2 * ik), t("indexer_compressor_gate.weight", n_embd, 2 * ik),
                   t("indexer_compressor_ape.weight", 2 * ik, 4), t("indexer_compressor_norm.weight", ik)]
        # hash-routed blocks look their experts up by token id (ffn_gate_tid2eid, I32) instead of the router bias
        ts += [t("ffn_gate_inp.weight", n_embd, n_exp), t("ffn_gate_tid2eid.weight", used, n_vocab) if i < n_hash
               else t("exp_probs_b.bias", n_exp), t("ffn_norm.weight", n_embd),
               t("ffn_gate_exps.weight", n_embd, ffe, n_exp), t("ffn_down_exps.weight", ffe, n_embd, n_exp),
               t("ffn_up_exps.weight", n_embd, ffe, n_exp)]
        if n_sh:
            ts += [t("ffn_gate_shexp.weight", n_embd, ffe * n_sh), t("ffn_down_shexp.weight", ffe * n_sh, n_embd),
                   t("ffn_up_shexp.weight", n_embd, ffe * n_sh)]
        if i >= n_trunk:
            ts += [t("nextn.eh_proj.weight", 2 * n_embd, n_embd), t("nextn.enorm.weight", n_embd),
                   t("nextn.hnorm.weight", n_embd)]
    # the checkpoint's FP4 experts and block-FP8 weights are not modelled: without a GGUF file type the weights are
    # Q8_0's, one of the converter's routed-expert types (iq2_xxs, iq2_xs, q2_k, tq1_0, tq2_0, q8_0); the other
    # engines refuse the model at its caches (archs.refuse_llamacpp_only_caches)
    gguf = weight_format is not None and is_gguf_format(weight_format)
    weights = inventory_for_format(ts, arch="deepseek4", config=cfg, weight_format=weight_format if gguf else "Q8_0",
                                   name=name, publisher=publisher)
    if n_hash:  # the converter writes tid2eid as int32 (DeepseekV4Model._write_deepseek4_tid2eid_tensors)
        out, offset = [], 0
        for x in weights.tensors:
            if x.name.endswith("ffn_gate_tid2eid.weight"):
                x = replace(x, dtype="I32", nbytes=4 * x.n_elements)
            out.append(replace(x, offset=offset))
            offset += (x.nbytes + 31) // 32 * 32  # gguf-py's 32-byte alignment (weights.GGUF_ALIGNMENT)
        weights = replace(weights, tensors=tuple(out))
    labels = [] if gguf else [DSV4_CONFIG_LABEL]
    return ModelSpec(
        name=name, architecture="deepseek4", n_embd=n_embd, n_vocab=n_vocab,
        n_ctx_train=r.int("max_position_embeddings", default=0), layers=layers, weights=weights,
        tied_embeddings=False, n_nextn_layers=n_nextn, source=source, labels=tuple(labels),
        rope_scaling=rope_scaling(cfg, name), config_lengths=config_lengths(cfg))


def _mllama_cross_layers(r: _Reader, layers: tuple[LayerSpec, ...]) -> tuple[LayerSpec, ...]:
    """Llama 3.2 Vision: the text_config's cross_attention_layers are MllamaCrossAttentionDecoderLayer (transformers
    models/mllama/modeling_mllama.py MllamaTextModel: `if layer_idx in config.cross_attention_layers`), whose
    MllamaTextCrossAttention takes K and V from the vision encoder's output, not from the context: no self-attention
    cache (kind NONE, cross_attention) but the same head counts and widths as the self-attention layers."""
    cross = r.cfg.get("cross_attention_layers")
    n = len(layers)
    if not isinstance(cross, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n
                                          for i in cross):
        raise OomkitError(f"{r.name}: text_config.cross_attention_layers must list layer indices below {n}")
    return tuple(replace(la, kind=LayerKind.NONE, cross_attention=True) if la.index in cross else la
                 for la in layers)


def partial_rotary_factor(cfg: Mapping[str, Any]) -> float | None:
    """config.json's partial_rotary_factor (Phi-2, StableLM, GLM, ...: the rotated share of each head), beside the
    rope dict or inside it (transformers v5 rope_parameters); None when absent or unusable (the whole head)."""
    rs = cfg.get("rope_parameters") or cfg.get("rope_scaling")
    partial = cfg.get("partial_rotary_factor")
    if partial is None and isinstance(rs, Mapping):
        inner = [v for v in rs.values() if isinstance(v, Mapping)] or [rs]
        partial = next((v["partial_rotary_factor"] for v in inner if "partial_rotary_factor" in v), None)
    if isinstance(partial, bool) or not isinstance(partial, (int, float)) or not 0 < partial <= 1:
        return None
    return float(partial)


def rope_scaling(cfg: Mapping[str, Any], name: str = "model") -> RopeScaling | None:
    """The decoder's `rope_scaling` (or transformers v5's `rope_parameters`) as written; None when it declares none.
    A v5 dict per layer type ({"full_attention": {...}, "sliding_attention": {...}}) gives the last one with a
    factor, as vLLM's loop over them keeps (config/model.py _get_and_verify_max_len, 0.12+)."""
    rs = cfg.get("rope_scaling")
    key = "rope_scaling"
    if rs is None:
        rs, key = cfg.get("rope_parameters"), "rope_parameters"
    if rs is not None and not isinstance(rs, Mapping):  # transformers reads it with .get(): a list fails its load
        raise OomkitError(f"{name}: config field {key} = {str(rs)[:60]!r} must be a JSON object (rope_type, factor, ...)")
    if not rs:
        return None
    nested = all(isinstance(v, Mapping) or v is None for v in rs.values())  # one dict per layer type
    if nested:
        per_type = [v for v in rs.values() if isinstance(v, Mapping) and v]
        if not per_type:
            return None
        rs = next((v for v in reversed(per_type) if v.get("factor") is not None), per_type[0])
    kind = rs.get("rope_type", rs.get("type"))
    factor, orig = rs.get("factor"), rs.get("original_max_position_embeddings")
    if kind is None and factor is None:
        return None
    if factor is not None and (isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0):
        raise OomkitError(f"{name}: config field rope_scaling.factor={factor!r} is not a positive number")
    top = cfg.get("original_max_position_embeddings")
    partial = rs.get("partial_rotary_factor", cfg.get("partial_rotary_factor"))
    if isinstance(partial, bool) or not isinstance(partial, (int, float)) or not 0 < partial <= 1:
        partial = None  # absent or unusable: the whole head, as vLLM's default of 1.0
    return RopeScaling(type=str(kind or ""), factor=float(factor) if factor is not None else None,
                       original_max_position_embeddings=_positive_int(orig, "rope_scaling.original_max_position_embeddings",
                                                                      name),
                       original_context=_positive_int(top, "original_max_position_embeddings", name),
                       per_layer_type=nested, mrope="mrope_section" in rs or kind == "mrope",
                       partial_rotary_factor=float(partial) if partial is not None else None)


def _positive_int(v: Any, key: str, name: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or int(v) != v:
        raise OomkitError(f"{name}: config field {key}={v!r} is not a positive integer")
    return int(v)


# Architectures whose GGUF conversion leaves the MTP block out (llama.cpp conversion/deepseek.py skip_mtp;
# conversion/ernie.py Ernie4_5MoeModel.filter_tensors drops model.mtp_block / mtp_* "same as DeepseekV2")
_GGUF_DROPS_MTP = {"deepseek2", "ernie4_5-moe",
                   # conversion/qwen.py Qwen3NextModel.filter_tensors: "if name.startswith('mtp'): # ignore MTP layers
                   # for now" (src/models/qwen3next.cpp load_block_mtp would load blocks past n_layer, but no converted
                   # Qwen3-Next GGUF carries them)
                   "qwen3next"}
# ... except these model types converted to them (conversion/glm.py Glm4MoeLiteModel: skip_mtp = False unless
# --no-mtp or num_nextn_predict_layers is 0; block_count = num_hidden_layers + num_nextn_predict_layers)
_GGUF_KEEPS_MTP = {"glm4_moe_lite"}
# MTP blocks a checkpoint carries that its config does not count (conversion/mimo.py MimoV2Model._n_nextn = 3:
# "MiMo V2-Flash, V2.5 and V2.5-Pro all ship 3 trained MTP layers ... The HF config does not expose the count")
_NEXTN_FIXED = {"mimo_v2_flash": 3,
                # Qwen3-Next ships one MTP block under mtp.* (mtp.layers.0: a full-attention + MoE block, as
                # src/models/qwen3next.cpp load_block_mtp reads it: "MTP head is identical to the trunk block"; mtp.fc,
                # mtp.pre_fc_norm_embedding / _hidden, mtp.norm) that its config.json does not count (vLLM
                # qwen3_next_mtp.py: getattr(config, "num_nextn_predict_layers", 1); transformers Qwen3NextForCausalLM
                # drops "^mtp." on load). With it the layer list reaches the published safetensors total, 81.3B
                "qwen3_next": 1}
# ... whose MTP blocks carry a dense MLP of intermediate_size (src/models/mimo2.cpp load_arch_tensors: ffn_gate/
# up/down of n_ff, experts TENSOR_NOT_REQUIRED; the MiMo-V2-Flash checkpoint's model.mtp.layers.N.mlp is dense)
_NEXTN_DENSE = {"mimo_v2_flash"}
# Gemma ties its embeddings even where the config omits the key (transformers GemmaConfig default True).
# Encoders have no LM head: nothing to untie (BertConfig/XLMRobertaConfig default tie_word_embeddings=True).
# Mamba ties them too (transformers MambaConfig tie_word_embeddings=True; Mamba2Config False).
# Gemma 3's tokenizer.model: 262,144 pieces (transformers Gemma3Config image_token_index 262144, the first row past it)
_GEMMA3_TOKENIZER_ROWS = 262144


def _router_bias(cfg: Mapping[str, Any], model_type: str) -> bool:
    """Whether the MoE router keeps a score-correction bias (e_score_correction_bias -> exp_probs_b.bias). DeepSeek-V2
    / V2.5's greedy and group-limited routers have none (transformers modeling_deepseek_v2.py DeepseekV2Moe: a plain
    gate Linear; modeling_deepseek_v3.py DeepseekV3TopkRouter adds the bias, the noaux_tc method), and llama.cpp loads
    it TENSOR_NOT_REQUIRED (src/models/deepseek2.cpp load_arch_tensors). DeepSeek-V2-Lite's 26 MoE layers x 64 experts
    = 1,664 and V2.5's 59 x 160 = 9,440 values its safetensors totals do not hold."""
    if model_type == "step3p5":  # Step35Model.filter_tensors: moe.router_bias -> exp_probs_b.bias
        return bool(cfg.get("use_moe_router_bias", True))
    if model_type == "minimax_m2":  # MiniMaxM2 use_routing_bias: the gate's e_score_correction_bias
        return bool(cfg.get("use_routing_bias", True))
    method = cfg.get("topk_method")
    if method is not None:
        return method == "noaux_tc"
    return model_type != "deepseek_v2"


_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma4", "gemma4_text", "mamba",
                    "lfm2", "lfm2_moe", "gpt2", "gpt_bigcode", "opt", *_ENCODERS}  # GPT2Config: no key, PretrainedConfig's default True
_GEMMA4 = {"gemma4", "gemma4_text"}
_UNGATED_FFN = {"phi", "starcoder2", "gpt2", "gpt_bigcode", "opt", "falcon", "nemotron_h", "bert", "xlm-roberta",  # up + down only
                "nemotron",  # transformers modeling_nemotron.py NemotronMLP: up_proj, down_proj, relu2
                "apertus"}  # transformers modeling_apertus.py ApertusMLP: up_proj, down_proj, XIELUActivation


def _per_layer_inputs(r: _Reader, model_type: str) -> PerLayerInputs | None:
    """Gemma 3n / Gemma 4's per-layer embeddings, with transformers' defaults where the config is silent
    (configuration_gemma3n.py Gemma3nTextConfig: hidden_size_per_layer_input 256, vocab_size_per_layer_input
    262144, altup_num_inputs 4, laurel_rank 64; configuration_gemma4.py Gemma4TextConfig: the same two sizes,
    no AltUp or LAuReL; Gemma 4's large sizes declare hidden_size_per_layer_input 0)."""
    gemma3n = model_type in ("gemma3n", "gemma3n_text")
    if not gemma3n and model_type not in _GEMMA4:
        return None
    width = r.int("hidden_size_per_layer_input", default=256)
    if not width:
        return None
    return PerLayerInputs(n_embd_per_layer=width, n_vocab=r.int("vocab_size_per_layer_input", default=262144),
                          n_altup=r.int("altup_num_inputs", default=4) if gemma3n else 0,
                          laurel_rank=r.int("laurel_rank", default=64) if gemma3n else 0)


def _learned_positions(r: _Reader, model_type: str) -> int:
    """Rows of a learned absolute position table (BERT / XLM-R position_embeddings); 0 for rotary models."""
    if model_type in ("gpt2", "gpt_bigcode"):  # GPT2Model / GPTBigCodeModel.wpe = nn.Embedding(n_positions, ...)
        return r.int("n_positions", "max_position_embeddings")
    if model_type == "opt":
        # transformers OPTLearnedPositionalEmbedding: "OPT is set up so that if padding_idx is specified then offset
        # the embedding ids by 2", num_embeddings + 2 rows (vLLM's OPTLearnedPositionalEmbedding the same)
        return r.int("max_position_embeddings") + 2
    if model_type not in ("bert", "xlm-roberta") or r.get("position_embedding_type", "absolute") != "absolute":
        return 0
    return r.int("max_position_embeddings")


def _attention_bias(cfg: Mapping[str, Any], model_type: str) -> bool:
    # Qwen2 and Phi (modeling_phi.py: q/k/v Linear(bias=True)) hard-code q/k/v biases; StarCoder2 names them use_bias,
    # StableLM use_qkv_bias; others declare attention_bias.
    return model_type in ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "gpt_oss", "bert", "xlm-roberta", "phi",
                          "gpt2", "gpt_bigcode") or (model_type == "opt" and cfg.get("enable_bias", True)) or bool(
        cfg.get("attention_bias") or cfg.get("qkv_bias") or cfg.get("use_qkv_bias")
        or (model_type == "starcoder2" and cfg.get("use_bias", True))
        or (model_type == "chatglm" and cfg.get("add_qkv_bias", True))  # ChatGLM2/3, GLM-4-9B-chat: add_qkv_bias
    )


_KIND_BY_LAYER_TYPE = {
    "full_attention": LayerKind.FULL, "attention": LayerKind.FULL, "global": LayerKind.FULL,
    "sliding_attention": LayerKind.SLIDING, "sliding_window": LayerKind.SLIDING, "local": LayerKind.SLIDING,
    "chunked_attention": LayerKind.CHUNKED,
    "linear_attention": LayerKind.RECURRENT, "mamba": LayerKind.RECURRENT, "mamba2": LayerKind.RECURRENT,
    # LFM2 / LFM2-MoE short-convolution blocks (transformers configuration_lfm2.py layer_types "conv" /
    # "full_attention"; conversion/lfm2.py writes head_count_kv 0 for them, the cache is the conv state)
    "conv": LayerKind.RECURRENT,
}


def _layer_kinds(r: _Reader, model_type: str, n: int) -> list[LayerKind]:
    cfg = r.cfg
    if model_type in _GLM5_NEXT:
        return _glm5_next_kinds(r, n)
    if model_type == "kimi_linear":
        # conversion/kimi_linear.py set_gguf_parameters: head_count_kv is num_key_value_heads where il + 1 is in
        # linear_attn_config.full_attn_layers (1-based), 0 elsewhere; src/models/kimi-linear.cpp: is_recr(i) =
        # n_head_kv(i) == 0 (KDA), the rest MLA
        full = _kimi_linear_attn(r).get("full_attn_layers")
        if not isinstance(full, list) or any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= n
                                             for x in full):
            raise OomkitError(f"{r.name}: linear_attn_config.full_attn_layers must list 1-based layer numbers up to {n}")
        return [LayerKind.LATENT if i + 1 in full else LayerKind.RECURRENT for i in range(n)]
    if r.has("kv_lora_rank"):
        return [LayerKind.LATENT] * n
    if model_type in ("mamba", "mamba2"):
        return [LayerKind.RECURRENT] * n
    if model_type in _ENCODERS:
        return [LayerKind.NONE] * n  # bidirectional encoder: attention weights, no KV cache
    if model_type == "falcon_h1":
        return [LayerKind.FULL] * n  # attention and Mamba side by side in every layer
    layer_types = cfg.get("layer_types") or cfg.get("layers_block_type")
    if model_type == "step3p5" and isinstance(layer_types, list):
        # Step35Model.set_gguf_parameters: layer_types holds entries for the MTP blocks past num_hidden_layers too
        # (padded with "full_attention"); the trunk's are the first n (_step_mtp_kinds reads the rest)
        layer_types = layer_types[:n]
    idxs = cfg.get("full_attn_idxs")
    if layer_types is None and model_type in _LFM2 and isinstance(idxs, list):
        # LFM2 configs written before layer_types: full_attn_idxs names the attention layers, the rest are short
        # convolutions (transformers configuration_lfm2.py: layer_types derived from full_attn_idxs)
        if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n for i in idxs):
            raise OomkitError(f"{r.name}: full_attn_idxs must list layer indices below {n}")
        layer_types = ["full_attention" if i in idxs else "conv" for i in range(n)]
    if isinstance(layer_types, str):
        raise OomkitError(f"{r.name}: layer_types must be a list, got a string")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != n:
            raise OomkitError(f"{r.name}: layer_types has {len(layer_types) if isinstance(layer_types, list) else '?'} "
                              f"entries for {n} layers")
        kinds = []
        for t in layer_types:
            kind = _KIND_BY_LAYER_TYPE.get(str(t))
            if kind is None:
                raise OomkitError(f"{r.name}: unknown layer type {t!r} in layer_types")
            kinds.append(kind)
        return kinds
    hybrid = cfg.get("hybrid_layer_pattern")
    if model_type == "mimo_v2_flash":
        # MiMo-V2-Flash: hybrid_layer_pattern[i] == 1 slides (conversion/mimo.py add_sliding_window_pattern(hybrid);
        # transformers / vLLM mimo_v2_flash: layer_types from the same list)
        if not isinstance(hybrid, list) or len(hybrid) != n or any(x not in (0, 1) for x in hybrid):
            raise OomkitError(f"{r.name}: hybrid_layer_pattern must list 0 or 1 for each of the {n} layers")
        return [LayerKind.SLIDING if x == 1 else LayerKind.FULL for x in hybrid]
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str):  # Nemotron-H: M = Mamba-2, * = attention, - = MLP, E = MoE
        if len(pattern) != n:
            raise OomkitError(f"{r.name}: hybrid_override_pattern has {len(pattern)} symbols for {n} layers")
        table = {"M": LayerKind.RECURRENT, "*": LayerKind.FULL, "-": LayerKind.NONE, "E": LayerKind.NONE}
        if set(pattern) - table.keys():
            raise OomkitError(f"{r.name}: unknown symbol in hybrid_override_pattern {pattern!r}")
        return [table[c] for c in pattern]
    if r.has("attn_layer_period"):  # Jamba
        period, offset = r.int("attn_layer_period"), r.int("attn_layer_offset", default=0)
        return [LayerKind.FULL if i % period == offset else LayerKind.RECURRENT for i in range(n)]
    if r.has("full_attention_interval"):  # Qwen3-Next / Qwen3.5: every k-th layer is full attention
        k = r.int("full_attention_interval")
        return [LayerKind.FULL if (i + 1) % k == 0 else LayerKind.RECURRENT for i in range(n)]
    window = cfg.get("sliding_window")
    if window and cfg.get("use_sliding_window", True) is not False:
        if model_type == "gemma2":  # transformers Gemma2: even layers slide (is_sliding = not bool(i % 2))
            return [LayerKind.SLIDING if i % 2 == 0 else LayerKind.FULL for i in range(n)]
        if r.has("sliding_window_pattern"):  # Gemma 3: (i+1) % pattern != 0 slides
            p = r.int("sliding_window_pattern")
            return [LayerKind.SLIDING if p and (i + 1) % p else LayerKind.FULL for i in range(n)]
        if r.has("max_window_layers") and r.has("use_sliding_window"):
            # transformers Qwen2: layers from max_window_layers on use the window
            m = r.int("max_window_layers")
            return [LayerKind.SLIDING if i >= m else LayerKind.FULL for i in range(n)]
        return [LayerKind.SLIDING] * n  # Mistral v0.1, Phi-3: one window for all layers
    if r.has("attention_chunk_size") and model_type.startswith("llama4"):
        step = r.int("no_rope_layer_interval", default=4)  # Llama 4: every 4th layer is global (NoPE)
        return [LayerKind.FULL if (i + 1) % step == 0 else LayerKind.CHUNKED for i in range(n)]
    return [LayerKind.FULL] * n


def _attention(r: _Reader, kind: LayerKind, model_type: str, n_embd: int) -> Attention:
    n_heads = r.int("num_attention_heads", "n_head", "num_heads")
    if model_type == "laguna":
        n_heads = _laguna_heads(r, kind, n_heads)
    if n_heads == 0:
        raise OomkitError(f"{r.name}: num_attention_heads must be positive")
    if kind is LayerKind.LATENT:
        rope = r.int("qk_rope_head_dim", why="MLA rope dims")
        nope = r.int("qk_nope_head_dim", why="MLA")
        v = r.int("v_head_dim", why="MLA")
        return Attention(
            n_heads=n_heads, n_kv_heads=n_heads, head_dim_k=nope + rope, head_dim_v=v,
            kv_lora_rank=r.int("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope, v_head_dim=v,
            q_lora_rank=r.int("q_lora_rank", default=0), index_head_dim=r.int("index_head_dim", default=0),
            index_n_heads=r.int("index_n_heads", default=0), index_topk=r.int("index_topk", default=0),
        )
    n_kv = r.int("num_key_value_heads", "multi_query_group_num", "num_kv_heads", default=n_heads)
    if model_type == "gpt_bigcode":  # GPTBigCodeConfig multi_query (default True): one K and V head
        n_kv = 1 if r.get("multi_query", True) else n_heads
    if n_kv == 0 or n_heads % n_kv:
        raise OomkitError(f"{r.name}: num_key_value_heads={n_kv} does not divide num_attention_heads={n_heads}")
    if type(r.get("head_dim")) is int and r.get("head_dim") == 0:
        # transformers (LlamaConfig and its kin: head_dim if not None else hidden_size // num_attention_heads) and
        # vLLM (getattr(config, "head_dim", None), the same fallback on None only) take a 0 as written: the heads
        # have no width and the softmax scale head_dim ** -0.5 divides by zero; only a null or absent one falls back
        raise OomkitError(f"{r.name}: config field head_dim = 0: an attention head needs a positive size (leave the "
                          "field out, or null, for hidden_size / num_attention_heads)")
    head_dim = r.int("head_dim", "kv_channels", default=0) or n_embd // n_heads
    if model_type in _GEMMA4 and kind is LayerKind.FULL:
        # Gemma 4's full layers have their own head size, and with attention_k_eq_v their own KV head count
        # (transformers modeling_gemma4.py Gemma4TextAttention: head_dim = global_head_dim if not is_sliding;
        # num_global_key_value_heads if attention_k_eq_v and not is_sliding); llama.cpp reads the same as
        # attention.key_length / a per-layer head_count_kv (src/models/gemma4.cpp, key_length_swa for the rest)
        head_dim = r.int("global_head_dim", default=0) or head_dim
        if r.get("attention_k_eq_v", False):
            n_kv = r.int("num_global_key_value_heads", default=0) or n_kv
    if model_type == "step3p5":
        # Step35Model.set_gguf_parameters: head_count / head_count_kv per layer, num_attention_heads and
        # num_attention_groups on full layers, attention_other_setting's on sliding ones (its defaults the same);
        # src/models/step35.cpp sizes q / o and the KV rows by n_head(il), n_head_kv(il), heads of head_dim
        base = (n_heads, r.int("num_attention_groups", default=n_heads))
        if kind is LayerKind.SLIDING:
            other = r.get("attention_other_setting")
            o = _Reader(other if isinstance(other, Mapping) else {}, r.name)
            n_heads, n_kv = o.int("num_attention_heads", default=base[0]), o.int("num_attention_groups", default=base[1])
        else:
            n_heads, n_kv = base
        if not n_heads or not n_kv or n_heads % n_kv:
            raise OomkitError(f"{r.name}: num_attention_groups={n_kv} does not divide num_attention_heads={n_heads}")
    head_dim_v = head_dim
    if model_type == "mimo_v2_flash":
        # MiMo-V2: K of head_dim, V of v_head_dim; the sliding layers have their own KV head count and sizes
        # (conversion/mimo.py: head_count_kv per layer from swa_num_key_value_heads, value_length v_head_dim;
        # transformers MiMoV2 attention: swa_head_dim / swa_v_head_dim on sliding layers)
        sw = kind is LayerKind.SLIDING
        n_kv = r.int("swa_num_key_value_heads" if sw else "num_key_value_heads")
        head_dim = r.int("swa_head_dim" if sw else "head_dim")
        head_dim_v = r.int("swa_v_head_dim" if sw else "v_head_dim")
    window = None
    if kind is LayerKind.SLIDING:  # MiMo-V2 also names it sliding_window_size (vLLM mimo_v2.py reads that one)
        window = r.int("sliding_window", "sliding_window_size")
    elif kind is LayerKind.CHUNKED:
        window = r.int("attention_chunk_size")
    v_from_k = model_type in _GEMMA4 and kind is LayerKind.FULL and bool(r.get("attention_k_eq_v", False))
    return Attention(n_heads=n_heads, n_kv_heads=n_kv, head_dim_k=head_dim, head_dim_v=head_dim_v, window=window,
                     v_from_k=v_from_k)


def _deci_blocks(r: _Reader, n_layers: int, n_embd: int) -> list[tuple[Attention, Ffn]]:
    """DeciLM's (model_type nemotron-nas) per-layer attention and FFN from block_configs, as llama.cpp's converter
    writes them (conversion/deci.py DeciModel.__init__: n_heads_in_group set -> num_attention_heads heads and
    num_attention_heads // n_heads_in_group KV heads; unset with replace_with_linear -> the heads and no KV (a linear
    layer, wo {n_embd, n_embd}); unset otherwise (no_op) -> no attention at all; ffn_mult -> an FFN of
    _ffn_mult_to_intermediate_size: int(2 * ffn_mult * n_embd / 3) rounded up to a multiple of 256, none (0)
    where ffn_mult is null). src/models/deci.cpp reads them back as head_count / head_count_kv / feed_forward_length
    per layer; a layer without attention keeps a KV row of 0 bytes (as a deci GGUF reads, model/gguf_file.py)."""
    blocks = r.cfg.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) != n_layers:
        raise OomkitError(f"{r.name}: nemotron-nas needs block_configs with one entry per layer ({n_layers})")
    n_heads = r.int("num_attention_heads")
    if n_heads == 0:
        raise OomkitError(f"{r.name}: config field num_attention_heads = 0: the head width is hidden_size divided by it")
    head_dim = n_embd // n_heads  # conversion/deci.py: key_length = value_length = hidden_size // num_attention_heads
    out = []
    for i, b in enumerate(blocks):
        attn, ffn = (b.get("attention"), b.get("ffn")) if isinstance(b, Mapping) else (None, None)
        if not isinstance(attn, Mapping) or not isinstance(ffn, Mapping):
            raise OomkitError(f"{r.name}: block_configs[{i}] needs an attention and an ffn object")
        if ffn.get("replace_with_linear") or attn.get("sparsify") or ffn.get("sparsify"):
            raise OomkitError(f"{r.name}: block_configs[{i}]: a linear FFN or a sparsified block is not read "
                              "(llama.cpp's converter, conversion/deci.py, writes no tensors for them)")
        group = attn.get("n_heads_in_group")
        if group is None:
            heads, kv = (n_heads, 0) if attn.get("replace_with_linear") is True else (0, 0)
        else:
            g = _positive_int(group, f"block_configs[{i}].attention.n_heads_in_group", r.name)
            if g is None or n_heads % g:
                raise OomkitError(f"{r.name}: block_configs[{i}]: n_heads_in_group={group!r} does not divide "
                                  f"num_attention_heads={n_heads}")
            heads, kv = n_heads, n_heads // g
        mult = ffn.get("ffn_mult")
        if mult is not None and (isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult < 0):
            raise OomkitError(f"{r.name}: block_configs[{i}].ffn.ffn_mult must be a non-negative number")
        n_ff = 0 if mult is None else -(-int(2 * mult * n_embd / 3) // 256) * 256
        out.append((Attention(n_heads=heads, n_kv_heads=kv, head_dim_k=head_dim, head_dim_v=head_dim), Ffn(n_ff=n_ff)))
    return out


def _kimi_linear_attn(r: _Reader) -> dict[str, Any]:
    lac = r.cfg.get("linear_attn_config")
    if not isinstance(lac, Mapping):
        raise OomkitError(f"{r.name}: config.json lacks linear_attn_config (Kimi-Linear's KDA layers)")
    return dict(lac)


_GLM5_NEXT = ("glm5_next", "glm5_next_text")
# GLM-5.3-Flash's layer_types names (transformers-style glm5_next_text configs): KDA and MLA + DSA
_GLM5_NEXT_KINDS = {"linear_attention": LayerKind.RECURRENT, "deepseek_sparse_attention": LayerKind.LATENT}


def _glm5_next_kinds(r: _Reader, n: int) -> list[LayerKind]:
    """src/models/glm5-next.cpp load_arch_hparams: is_recr(i) = n_head_kv(i) == 0, KDA; the rest MLA with the k-pool
    indexer. The config says which by layer_types ("linear_attention" / "deepseek_sparse_attention"), else by
    linear_attn_config.full_attn_layers, 0-based here (GLM-5.3-Flash: 3, 7, ..., 43; kimi-linear's are 1-based)."""
    types = r.cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) < n or any(t not in _GLM5_NEXT_KINDS for t in types[:n]):
            raise OomkitError(f"{r.name}: layer_types must give 'linear_attention' or 'deepseek_sparse_attention' for "
                              f"each of the {n} layers")
        return [_GLM5_NEXT_KINDS[t] for t in types[:n]]
    full = _kimi_linear_attn(r).get("full_attn_layers")
    if not isinstance(full, list) or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n for x in full):
        raise OomkitError(f"{r.name}: linear_attn_config.full_attn_layers must list 0-based layer indices below {n}")
    return [LayerKind.LATENT if i in full else LayerKind.RECURRENT for i in range(n)]


def _glm5_next_extras(r: _Reader, layers: tuple[LayerSpec, ...], n_embd: int,
                      n_trunk: int) -> tuple[TensorShape, ...]:
    """What src/models/glm5-next.cpp load_arch_tensors takes beside the shared MLA / KDA / MoE list: the mHC weights
    of every trunk block (hc_attn_fn / hc_ffn_fn {hc x n_embd, (2 + hc) x hc}, _base {(2 + hc) x hc}, _scale {3};
    conversion/glm5next.py _direct_map, hc_mult from the config), none for the NextN block; and on each MLA layer
    with its own indexer the k-pool compressor (index_kpool_compress_gate -> indexer_compressor_gate {n_embd,
    index_head_dim}, index_kpool_compress_ape -> indexer_compressor_ape {index_head_dim, index_kpool})."""
    hc = r.int("hc_mult", why="GLM-5.3-Flash's hyper-connections")
    if hc != 4:  # glm5-next.cpp: GGML_ASSERT(hparams.dsv4_hc_mult == 4 && "mHC with hc_mult != 4 is not supported")
        raise OomkitError(f"{r.name}: hc_mult={hc}: llama.cpp's glm5-next loader supports 4 hyper-connection streams only")
    mix = (2 + hc) * hc
    out: list[TensorShape] = []
    for la in layers:
        i = la.index
        if i < n_trunk:
            out += [TensorShape(f"blk.{i}.hc_{x}_{w}.weight", shape, i) for x in ("attn", "ffn")
                    for w, shape in (("fn", (hc * n_embd, mix)), ("base", (mix,)), ("scale", (3,)))]
        a = la.attention
        if a is not None and a.index_head_dim and not a.indexer_shared:
            kpool = r.int("index_kpool", why="the k-pool indexer")
            if kpool == 0:  # the compressor pools index_kpool keys into one (indexer_compressor_ape {.., index_kpool})
                raise ModelError(f"{r.name}: config field index_kpool = 0: the k-pool indexer pools at least one key")
            out += [TensorShape(f"blk.{i}.indexer_compressor_gate.weight", (n_embd, a.index_head_dim), i),
                    TensorShape(f"blk.{i}.indexer_compressor_ape.weight", (a.index_head_dim, kpool), i)]
    return tuple(out)


def _kimi_k3_extras(r: _Reader, layers: tuple[LayerSpec, ...], n_embd: int) -> tuple[TensorShape, ...]:
    """What src/models/kimi-k3.cpp load_arch_tensors adds to the kimi-k3 list tensors.py builds: with
    attn_res_block_size > 0 one residual score vector before attention and one before the FFN in every layer and
    one before the output (conversion/kimi_k3.py multiplies each <x>_res_norm by its <x>_res_proj into it); the MLA
    output gate attn_gate {n_embd, n_head x v_head_dim} where mla_use_output_gate; the latent experts' norm
    ffn_routed_norm {n_expert_latent} where latent_moe_use_norm."""
    out: list[TensorShape] = []
    if r.int("attn_res_block_size", default=0):
        out.append(TensorShape("output_res_score.weight", (n_embd,)))
        for la in layers:
            out += [TensorShape(f"blk.{la.index}.attn_res_score.weight", (n_embd,), la.index),
                    TensorShape(f"blk.{la.index}.ffn_res_score.weight", (n_embd,), la.index)]
    for la in layers:
        a, f = la.attention, la.ffn
        if a is not None and r.get("mla_use_output_gate", False):
            out.append(TensorShape(f"blk.{la.index}.attn_gate.weight", (n_embd, a.n_heads * a.v_head_dim), la.index))
        if f.n_embd_latent and r.get("latent_moe_use_norm", False):
            out.append(TensorShape(f"blk.{la.index}.ffn_routed_norm.weight", (f.n_embd_latent,), la.index))
    return tuple(out)


def _recurrent(r: _Reader, model_type: str, n_embd: int) -> RecurrentState:
    """SSM dims as llama.cpp's converter maps them (convert_hf_to_gguf.py: ssm.conv_kernel, ssm.inner_size,
    ssm.state_size, ssm.group_count, ssm.time_step_rank)."""
    if model_type == "kimi_linear" or model_type in _GLM5_NEXT:
        # conversion/kimi_linear.py: ssm.conv_kernel = linear_attn_config.short_conv_kernel_size, kda.head_dim =
        # linear_attn_config.head_dim; src/models/kimi-linear.cpp sizes the KDA projections with n_head (the
        # attention heads: linear_attn_config.num_heads is not converted), and llama_hparams::n_embd_r / n_embd_s
        # keep (d_conv - 1) x head_dim x n_head conv rows for each of q, k and v and a head_dim^2 state per head
        # (as gguf_file._recurrent_state reads a kimi-linear GGUF). GLM-5.3-Flash the same: conversion/glm5next.py
        # writes ssm.conv_kernel and the head dim from linear_attn_config, src/models/glm5-next.cpp load_arch_tensors
        # sizes d_inner = n_embd_head_kda x n_head
        lac = _Reader(_kimi_linear_attn(r), r.name)
        hd, d_conv = lac.int("head_dim"), lac.int("short_conv_kernel_size")
        n_head = r.int("num_attention_heads")
        if lac.int("num_heads", default=n_head) != n_head:
            raise OomkitError(f"{r.name}: linear_attn_config.num_heads differs from num_attention_heads; llama.cpp's "
                              f"{ARCH_BY_MODEL_TYPE[model_type]} loader sizes KDA with the attention head count")
        return RecurrentState("gated_delta_net", d_inner=hd * n_head, d_state=hd, d_conv=d_conv, n_heads=n_head,
                              conv_override=max(d_conv - 1, 0) * 3 * hd * n_head, ssm_override=hd * hd * n_head)
    if model_type in _LFM2:
        # LFM2 short convolution: the last conv_L_cache - 1 inputs of width hidden_size, no SSM state (llama.cpp
        # llama_hparams::n_embd_r = n_embd * (n_shortconv_l_cache - 1), n_embd_s 0; conversion/lfm2.py writes
        # shortconv.l_cache from conv_L_cache)
        l_cache = r.int("conv_L_cache", why="LFM2 short-convolution cache")
        return RecurrentState("short_conv", d_inner=n_embd, d_state=0, d_conv=l_cache,
                              conv_override=max(l_cache - 1, 0) * n_embd, ssm_override=0)
    if r.has("linear_num_value_heads"):  # Qwen3-Next / Qwen3.5 gated delta net
        n_v, d_v = r.int("linear_num_value_heads"), r.int("linear_value_head_dim")
        for k in ("linear_num_value_heads", "linear_num_key_heads"):  # qwen3next.cpp: ssm_norm {d_inner / n_heads}
            if r.int(k) == 0:
                raise OomkitError(f"{r.name}: config field {k} = 0: the gated delta net needs at least one head")
        return RecurrentState("gated_delta_net", d_inner=n_v * d_v, d_state=r.int("linear_key_head_dim"),
                              d_conv=r.int("linear_conv_kernel_dim"), n_group=r.int("linear_num_key_heads"),
                              n_heads=n_v)
    if model_type == "mamba":
        d_inner = r.int("intermediate_size", default=0) or r.int("expand", default=2) * n_embd
        return RecurrentState("mamba", d_inner=d_inner, d_state=r.int("state_size", "d_state"),
                              d_conv=r.int("conv_kernel", "d_conv"))
    if model_type == "jamba":  # Mamba-1 blocks
        return RecurrentState("mamba", d_inner=r.int("mamba_expand") * n_embd, d_state=r.int("mamba_d_state"),
                              d_conv=r.int("mamba_d_conv"))
    # Mamba-2 family: Mamba2, Granite-4-H, Nemotron-H, Falcon-H1
    if model_type == "mamba2":
        n_heads, head_dim = r.int("num_heads", default=0), r.int("head_dim", default=0)
        d_inner = n_heads * head_dim or r.int("expand", default=2) * n_embd
        return RecurrentState("mamba2", d_inner=d_inner, d_state=r.int("state_size"), d_conv=r.int("conv_kernel"),
                              n_group=r.int("n_groups", default=1), n_heads=n_heads)
    if model_type == "nemotron_h":
        n_heads = r.int("mamba_num_heads")
        return RecurrentState("mamba2", d_inner=n_heads * r.int("mamba_head_dim"), d_state=r.int("ssm_state_size"),
                              d_conv=r.int("conv_kernel"), n_group=r.int("n_groups"), n_heads=n_heads)
    # granitemoehybrid, falcon_h1: mamba_* fields
    n_heads = r.int("mamba_n_heads", default=0)
    if r.has("mamba_d_ssm"):
        d_inner = r.int("mamba_d_ssm")
    elif n_heads and r.has("mamba_d_head"):
        d_inner = n_heads * r.int("mamba_d_head")
    else:
        d_inner = r.int("mamba_expand", why="Mamba inner size") * n_embd
    return RecurrentState("mamba2", d_inner=d_inner, d_state=r.int("mamba_d_state"), d_conv=r.int("mamba_d_conv"),
                          n_group=r.int("mamba_n_groups", default=1), n_heads=n_heads)


def _is_moe_layer(r: _Reader, model_type: str, i: int, n_layers: int, kind: LayerKind) -> bool:
    cfg = r.cfg
    mlp_types = cfg.get("mlp_layer_types")
    if model_type == "laguna" and isinstance(mlp_types, list) and i < len(mlp_types):
        # conversion/laguna.py: leading_dense_block_count from mlp_layer_types ("dense" layers of intermediate_size
        # before the "sparse" ones; src/models/laguna.cpp load_arch_tensors takes ffn_gate/up/down below it)
        return mlp_types[i] == "sparse"
    if model_type == "nemotron_h":
        pattern = cfg.get("hybrid_override_pattern") or ""
        return i < len(pattern) and pattern[i] == "E"
    if r.has("first_k_dense_replace") and i < r.int("first_k_dense_replace"):
        return False
    if r.has("moe_layer_freq") and isinstance(cfg.get("moe_layer_freq"), int):
        freq = r.int("moe_layer_freq")
        if freq == 0:
            # transformers modeling_deepseek_v3 / vLLM deepseek_v2.py DecoderLayer: `layer_idx >=
            # first_k_dense_replace and layer_idx % config.moe_layer_freq == 0` (a division by zero at 0)
            raise OomkitError(f"{r.name}: config field moe_layer_freq = 0: the engines build each layer past "
                              "first_k_dense_replace with layer % moe_layer_freq, a division by zero; 1 makes every "
                              "such layer MoE")
        if i % freq:
            return False
    mlp_only = cfg.get("mlp_only_layers") or []
    if not isinstance(mlp_only, list):
        raise OomkitError(f"{r.name}: config field mlp_only_layers={mlp_only!r:.40} is not a list of layer indices")
    if i in mlp_only:
        return False
    if r.has("decoder_sparse_step"):
        step = r.int("decoder_sparse_step")
        if step == 0:
            # transformers modeling_qwen2_moe / qwen3_moe / qwen3_next and vLLM's qwen2_moe.py / qwen3_moe.py
            # DecoderLayer: `num_experts > 0 and (layer_idx + 1) % config.decoder_sparse_step == 0` (a division by
            # zero while the model is built), not "no MoE layers"
            raise OomkitError(f"{r.name}: config field decoder_sparse_step = 0 with {r.int('num_experts', default=0)}"
                              " experts: the engines build each layer with (layer + 1) % decoder_sparse_step, "
                              "a division by zero; 1 makes every layer MoE")
        return (i + 1) % step == 0
    if r.has("expert_layer_period"):  # Jamba
        return i % r.int("expert_layer_period") == r.int("expert_layer_offset", default=0)
    if r.has("interleave_moe_layer_step"):  # Llama 4
        step = r.int("interleave_moe_layer_step")
        return step > 0 and (i + 1) % step == 0
    return True


_LFM2 = {"lfm2", "lfm2_moe"}


def _glm_dsa_shared_indexers(r: _Reader, n_layers: int) -> list[bool]:
    """GLM-5.2's IndexShare: which trunk layers reuse an earlier layer's indexer top-k ("shared") instead of owning
    an indexer ("full"), as transformers configuration_glm_moe_dsa.py GlmMoeDsaConfig sets indexer_types: the
    config's list if given, else index_topk_pattern (F / S), else "full" where max(i - index_skip_topk_offset + 1, 0)
    % index_topk_freq == 0 (index_topk_freq 1 by default: GLM-5 / 5.1, every layer full). GLM-5.2: 21 full (0, 1, 2,
    6, 10, ..., 74), 57 shared. The MTP block runs its own indexer (layers past the trunk stay full)."""
    types = r.cfg.get("indexer_types")
    if types is None:
        pattern = r.cfg.get("index_topk_pattern")
        if isinstance(pattern, str):
            types = [{"F": "full", "S": "shared"}.get(c, c) for c in pattern]
        elif pattern is not None:
            types = pattern
        else:
            freq = max(r.int("index_topk_freq", default=1), 1)
            offset = r.int("index_skip_topk_offset", default=2)
            return [max(i - offset + 1, 0) % freq != 0 for i in range(n_layers)]
    if not isinstance(types, list) or len(types) != n_layers or set(types) - {"full", "shared"}:
        raise OomkitError(f"{r.name}: indexer_types must list 'full' or 'shared' for each of the {n_layers} layers")
    if types and types[0] != "full":
        raise OomkitError(f"{r.name}: indexer_types must start with a full indexer (a shared layer reuses an earlier one)")
    return [t == "shared" for t in types]


# transformers models/nemotron_h/configuration_nemotron_h.py (@7d06b1a5, as code search id 57462082925 quotes it
# line by line): the block kinds' names in layers_block_type and their hybrid_override_pattern symbols (:259-268)
_NEMOTRON_H_SYMBOL = {"mamba": "M", "moe": "E", "attention": "*", "mlp": "-"}


def _nemotron_h_schedule(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A Nemotron-H config written with the list schedule (Nemotron 3 Ultra, Nemotron 3.5 Lightning:
    layers_block_type / mtp_layers_block_type, no hybrid_override_pattern) in the pattern form this reader reads.
    transformers configuration_nemotron_h.py: layers_block_type is the source of truth, the legacy pattern consulted
    only when the list is absent (__post_init__ :158-184); num_hidden_layers is a property over its length (:225-238;
    Ultra's config.json has no num_hidden_layers, Lightning's agrees with the list); mtp_layers_block_type defaults
    to ["attention", "moe"] (:179-180)."""
    blocks = cfg["layers_block_type"]
    if any(not isinstance(b, str) or b not in _NEMOTRON_H_SYMBOL for b in blocks):
        raise OomkitError(f"{name}: layers_block_type lists a block kind other than mamba / moe / attention / mlp")
    n = cfg.get("num_hidden_layers")
    if n is not None and n != len(blocks):
        raise OomkitError(f"{name}: num_hidden_layers {n} disagrees with the {len(blocks)} entries of layers_block_type")
    out = {k: v for k, v in cfg.items() if k not in ("layers_block_type", "mtp_layers_block_type")}
    out["hybrid_override_pattern"] = "".join(_NEMOTRON_H_SYMBOL[b] for b in blocks)
    out["num_hidden_layers"] = len(blocks)
    mtp = cfg.get("mtp_layers_block_type", ["attention", "moe"])
    if not isinstance(mtp, list) or any(not isinstance(b, str) or b not in _NEMOTRON_H_SYMBOL for b in mtp):
        raise OomkitError(f"{name}: mtp_layers_block_type must list mamba / moe / attention / mlp blocks")
    out["mtp_hybrid_override_pattern"] = "".join(_NEMOTRON_H_SYMBOL[b] for b in mtp)
    return out


def _nemotron_mtp_kind(r: _Reader, model_type: str) -> LayerKind | None:
    """Nemotron 3 Super's MTP block: mtp_hybrid_override_pattern "*E", an attention and a MoE sub-layer that
    llama.cpp folds into one trailing block (src/models/nemotron-h.cpp load_arch_tensors, "NextN/MTP draft head: each
    predict layer folds an attention sub-layer and a MoE sub-layer into a single trailing block"; vLLM
    models/nemotron_h_mtp.py builds the same two sub-layers): a full-attention layer with the MoE as its FFN."""
    if model_type != "nemotron_h":
        return None
    pattern = r.cfg.get("mtp_hybrid_override_pattern") or "*E"
    if not isinstance(pattern, str) or set(pattern) - {"*", "E"} or pattern.count("*") > 1 or pattern.count("E") > 1:
        raise OomkitError(f"{r.name}: mtp_hybrid_override_pattern {pattern!r} is not modelled (one '*', one 'E')")
    return LayerKind.FULL if "*" in pattern else LayerKind.NONE


def _nemotron_mtp_ffn(r: _Reader) -> Ffn:
    pattern = r.cfg.get("mtp_hybrid_override_pattern") or "*E"
    if "E" not in pattern:
        return Ffn()
    return _nemotron_moe(r)


def _nemotron_moe(r: _Reader) -> Ffn:
    """Nemotron-H's MoE block (transformers / vLLM nemotron_h.py NemotronHMoE): n_routed_experts relu2 experts (up +
    down) of moe_intermediate_size beside one shared expert of moe_shared_expert_intermediate_size; Nemotron 3
    Super's LatentMoE runs the routed experts at moe_latent_size (fc1_latent_proj hidden -> latent before them,
    fc2_latent_proj latent -> hidden after; the router and the shared expert stay at hidden_size; llama.cpp
    src/models/nemotron-h.cpp: ffn_latent_down / ffn_latent_up, experts {moe_n_embd, n_ff_exp, n_expert})."""
    n_ff_exp = r.int("moe_intermediate_size", "intermediate_size")
    n_ff_sh = r.int("moe_shared_expert_intermediate_size", default=0)
    n_sh = r.int("n_shared_experts", default=1 if n_ff_sh else 0) if n_ff_sh else 0
    return Ffn(n_experts=r.int("n_routed_experts"), n_experts_used=r.int("num_experts_per_tok"), n_ff_expert=n_ff_exp,
               n_shared_experts=n_sh, n_ff_shared=n_ff_sh, n_embd_latent=r.int("moe_latent_size", default=0))


def _nextn_ffn(r: _Reader, model_type: str, i: int, n_layers: int) -> Ffn:
    return Ffn(n_ff=r.int("intermediate_size"))  # MiMo-V2's MTP blocks: a dense MLP (see _NEXTN_DENSE)


def _lfm2_ff(r: _Reader) -> int:
    """LFM2's MLP width: block_ff_dim (or intermediate_size) cut to 2/3, scaled by block_ffn_dim_multiplier and
    rounded up to block_multiple_of when block_auto_adjust_ff_dim (conversion/lfm2.py _add_feed_forward_length;
    transformers modeling_lfm2.py Lfm2MLP the same)."""
    ff = r.int("block_ff_dim", "intermediate_size")
    if r.get("block_auto_adjust_ff_dim", False):
        ff = int(2 * ff / 3)
        mult = r.get("block_ffn_dim_multiplier")
        if mult is not None and (isinstance(mult, bool) or not isinstance(mult, (int, float)) or not mult > 0):
            raise OomkitError(f"{r.name}: config field block_ffn_dim_multiplier={mult!r} is not a positive number")
        if mult is not None:
            ff = int(mult * ff)
        step = r.int("block_multiple_of", default=256) or 1
        ff = step * ((ff + step - 1) // step)
    return ff


def _ffn_special(r: _Reader, model_type: str, i: int, n_layers: int) -> Ffn | None:
    """The FFN of model types whose MoE fields have their own names or per-layer lists; None for the rest."""
    if model_type == "lfm2":
        return Ffn(n_ff=_lfm2_ff(r))
    if model_type == "lfm2_moe":
        # conversion/lfm2.py LFM2MoeModel: leading_dense_block_count = num_dense_layers (dense of intermediate_size),
        # then num_experts of moe_intermediate_size, num_experts_per_tok used, no shared expert
        if i < r.int("num_dense_layers", default=0):
            return Ffn(n_ff=r.int("intermediate_size"))
        return Ffn(n_experts=r.int("num_experts"), n_experts_used=r.int("num_experts_per_tok"),
                   n_ff_expert=r.int("moe_intermediate_size"))
    if model_type == "ernie4_5_moe":
        # transformers modeling_ernie4_5_moe.py Ernie4_5_MoeDecoderLayer: MoE where (i + 1) % moe_layer_interval == 0
        # and moe_layer_start_index <= i <= moe_layer_end_index (llama.cpp src/models/ernie4-5-moe.cpp: i >=
        # n_layer_dense_lead and (i + 1) % n_moe_layer_step == 0, from the converter's leading_dense_block_count /
        # interleave_moe_layer_step); shared experts: one MLP of moe_intermediate_size x moe_num_shared_experts
        step, start = r.int("moe_layer_interval", default=1), r.int("moe_layer_start_index", default=0)
        end = r.cfg.get("moe_layer_end_index")
        end = n_layers - 1 if not isinstance(end, int) or isinstance(end, bool) or end < 0 else end
        n_exp = r.int("moe_num_experts", default=0)
        if not (n_exp and step and (i + 1) % step == 0 and start <= i <= end):
            return Ffn(n_ff=r.int("intermediate_size"))
        ff_exp, n_sh = r.int("moe_intermediate_size"), r.int("moe_num_shared_experts", default=0)
        return Ffn(n_experts=n_exp, n_experts_used=r.int("moe_k"), n_ff_expert=ff_exp, n_shared_experts=n_sh,
                   n_ff_shared=ff_exp * n_sh)
    if model_type == "hunyuan_v1_moe":
        # transformers modeling_hunyuan_v1_moe.py: every layer MoE (num_experts of moe_intermediate_size[i], top
        # moe_topk[i]) beside a shared MLP of intermediate_size x num_shared_expert[i]; conversion/hunyuan.py
        # writes the lists' first values (asserted equal) and expert_shared_feed_forward_length = intermediate_size
        # the shared MLP exists only with use_mixed_mlp_moe (HunYuanMoEV1Config default False); num_experts may be a list
        mixed = r.get("use_mixed_mlp_moe", False) and r.has("num_shared_expert")
        n_sh = r.int_at("num_shared_expert", i, n_layers) if mixed else 0
        return Ffn(n_experts=r.int_at("num_experts", i, n_layers), n_experts_used=r.int_at("moe_topk", i, n_layers),
                   n_ff_expert=r.int_at("moe_intermediate_size", i, n_layers), n_shared_experts=n_sh,
                   n_ff_shared=r.int("intermediate_size") * n_sh)
    if model_type == "step3p5":
        # Step35Model.set_gguf_parameters: leading_dense_block_count = the first index of moe_layers_enum (dense
        # MLPs of intermediate_size before it), then moe_num_experts of moe_intermediate_size, moe_top_k used, and
        # one shared expert of share_expert_dim (expert_shared_feed_forward_length); src/models/step35.cpp
        # load_arch_tensors takes the dense and the MoE tensors as the file has them
        if i < _step_leading_dense(r):
            return Ffn(n_ff=r.int("intermediate_size"))
        ff_sh = r.int("share_expert_dim", default=0)
        return Ffn(n_experts=r.int("moe_num_experts"), n_experts_used=r.int("moe_top_k"),
                   n_ff_expert=r.int("moe_intermediate_size"), n_shared_experts=1 if ff_sh else 0, n_ff_shared=ff_sh)
    if model_type == "mimo_v2_flash":
        # moe_layer_freq: one 0/1 per layer, 1 = MoE (transformers / vLLM mimo_v2_flash: is_moe_layer); dense
        # layers of intermediate_size; n_routed_experts of moe_intermediate_size, no shared expert
        freq = r.cfg.get("moe_layer_freq")
        if not isinstance(freq, list) or len(freq) != n_layers:
            raise OomkitError(f"{r.name}: moe_layer_freq must list 0 or 1 for each of the {n_layers} layers")
        if not freq[i]:
            return Ffn(n_ff=r.int("intermediate_size"))
        n_sh = r.int("n_shared_experts", default=0)
        ff_exp = r.int("moe_intermediate_size")
        return Ffn(n_experts=r.int("n_routed_experts"), n_experts_used=r.int("num_experts_per_tok"),
                   n_ff_expert=ff_exp, n_shared_experts=n_sh, n_ff_shared=n_sh * ff_exp)
    return None


def _laguna_heads(r: _Reader, kind: LayerKind, n_heads: int) -> int:
    """Laguna's query heads by layer kind: num_attention_heads_per_layer (conversion/laguna.py writes it as the
    per-layer attention.head_count array src/models/laguna.cpp sizes q / o / attn_gate by: Laguna-XS.2 48 on its full
    layers, 64 on its sliding ones). The kinds' counts must each be one value; num_attention_heads without the list."""
    per_layer, types = r.get("num_attention_heads_per_layer"), r.get("layer_types")
    if not isinstance(per_layer, list) or not isinstance(types, list):
        return n_heads
    if len(per_layer) != len(types):
        raise OomkitError(f"{r.name}: num_attention_heads_per_layer has {len(per_layer)} entries, layer_types {len(types)}")
    want = "sliding_attention" if kind is LayerKind.SLIDING else "full_attention"
    counts = {h for h, t in zip(per_layer, types, strict=True) if t == want}
    if not counts:
        return n_heads
    if len(counts) != 1 or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in counts):
        raise OomkitError(f"{r.name}: num_attention_heads_per_layer differs within the {want} layers: {sorted(map(str, counts))}")
    return counts.pop()


def _step_leading_dense(r: _Reader) -> int:
    """Step35Model.set_gguf_parameters: the lowest layer index of moe_layers_enum (a comma-separated string), 0 when
    the config has none."""
    enum = r.get("moe_layers_enum")
    if isinstance(enum, str) and enum.strip():
        try:
            return max(0, min(int(x) for x in enum.strip().split(",")))
        except ValueError:
            raise OomkitError(f"{r.name}: moe_layers_enum must list layer indices separated by commas") from None
    if enum is not None and not isinstance(enum, str):
        raise OomkitError(f"{r.name}: moe_layers_enum must be a string of comma-separated layer indices")
    return 0


def _step_mtp_kinds(r: _Reader, n_layers: int, n_nextn: int) -> list[LayerKind]:
    """Step35Model.set_gguf_parameters: the MTP blocks' kinds are layer_types' entries past the trunk, padded with
    "full_attention" where the checkpoint lists fewer."""
    types = r.get("layer_types")
    extra = list(types[n_layers:n_layers + n_nextn]) if isinstance(types, list) else []
    extra += ["full_attention"] * (n_nextn - len(extra))
    return [LayerKind.SLIDING if t == "sliding_attention" else LayerKind.FULL for t in extra]


def _step_extras(r: _Reader, layers: tuple[LayerSpec, ...], n_embd: int, n_vocab: int,
                 n_trunk: int) -> tuple[TensorShape, ...]:
    """What src/models/step35.cpp load_arch_tensors takes beside the shared list: the head-wise attention gate
    (self_attn.g_proj -> attn_gate {n_embd, n_head(il)}) where use_head_wise_attn_gate; one rope_freqs table of
    head_dim / 2 where the rope type is llama3 (Step35Model.generate_extra_tensors); per MTP block the shared head's
    own output projection (transformer.shared_head.output -> nextn.shared_head_head {n_embd, n_vocab},
    Step35Model.filter_tensors) beside eh_proj / enorm / hnorm / shared_head_norm (tensors.py _NEXTN_EXTRAS)."""
    out: list[TensorShape] = []
    if r.get("use_head_wise_attn_gate", False):
        out += [TensorShape(f"blk.{la.index}.attn_gate.weight", (n_embd, la.attention.n_heads), la.index)
                for la in layers if la.attention is not None]
    rope = r.get("rope_parameters") or r.get("rope_scaling")
    rope = rope.get("full_attention", rope) if isinstance(rope, Mapping) else None
    if isinstance(rope, Mapping) and str(rope.get("rope_type") or rope.get("type") or "").lower() == "llama3":
        out.append(TensorShape("rope_freqs.weight", (r.int("head_dim") // 2,)))
    out += [TensorShape(f"blk.{la.index}.nextn.shared_head_head.weight", (n_embd, n_vocab), la.index)
            for la in layers if la.index >= n_trunk]
    return tuple(out)


def _in_file_order(tensors: tuple[TensorShape, ...], extras: tuple[TensorShape, ...]) -> tuple[TensorShape, ...]:
    """`extras` merged into `tensors` where a converter writes them: a block's after that block's others, the rest
    with the tensors before the first block (output_norm / output stay last), so the mapped range oomkit lays out
    (weights.mapped_range) spans each tensor once."""
    first = next((n for n, t in enumerate(tensors) if t.layer is not None), len(tensors))

    def rank(item: tuple[int, TensorShape]) -> tuple[int, int]:
        n, t = item
        if t.layer is not None:
            return 1, t.layer
        return (0, 0) if n < first or n >= len(tensors) else (2, 0)

    return tuple(t for _, t in sorted(enumerate(tensors + extras), key=rank))


def _ffn(r: _Reader, model_type: str, i: int, n_layers: int, kind: LayerKind) -> Ffn:
    special = _ffn_special(r, model_type, i, n_layers)
    if special is not None:
        return special
    if model_type == "kimi_linear" and r.has("routed_expert_hidden_size") and i >= r.int("first_k_dense_replace",
                                                                                          default=0):
        # Kimi K3 (src/models/kimi-k3.cpp load_arch_tensors): routed experts at n_expert_latent
        # (expert_latent_length = routed_expert_hidden_size, conversion/kimi_k3.py) between ffn_routed_down / up;
        # one shared MLP of moe_intermediate_size x num_shared_experts at n_embd
        ff_exp, n_sh = r.int("moe_intermediate_size"), r.int("num_shared_experts", default=0)
        return Ffn(n_experts=r.int("num_experts"), n_experts_used=r.int("num_experts_per_token"), n_ff_expert=ff_exp,
                   n_shared_experts=1 if n_sh else 0, n_ff_shared=ff_exp * max(n_sh, 1) if n_sh else 0,
                   n_embd_latent=r.int("routed_expert_hidden_size"))
    n_experts = r.int("num_experts", "n_routed_experts", "num_local_experts", default=0)
    if model_type in _GEMMA4:
        # Gemma4TextDecoderLayer (transformers modeling_gemma4.py): every layer keeps its dense MLP, twice as wide
        # in the KV-shared layers with use_double_wide_mlp; enable_moe_block adds routed experts beside it
        # (llama.cpp src/models/gemma4.cpp: ffn_gate/up/down of n_ff(il) plus the *_exps tensors)
        shared = i >= n_layers - r.int("num_kv_shared_layers", default=0) > 0
        n_ff = r.int("intermediate_size") * (2 if shared and r.get("use_double_wide_mlp", False) else 1)
        if not (n_experts and r.get("enable_moe_block", False)):
            return Ffn(n_ff=n_ff)
        return Ffn(n_experts=n_experts, n_experts_used=r.int("top_k_experts", "num_experts_per_tok"),
                   n_ff_expert=r.int("moe_intermediate_size", "expert_intermediate_size"),
                   n_shared_experts=1, n_ff_shared=n_ff)
    if model_type == "nemotron_h" and kind is not LayerKind.NONE:
        return Ffn()  # Nemotron-H: Mamba and attention layers carry no MLP of their own
    if model_type == "nemotron_h" and n_experts and _is_moe_layer(r, model_type, i, n_layers, kind):
        return _nemotron_moe(r)
    if n_experts and _is_moe_layer(r, model_type, i, n_layers, kind):
        used = r.int("num_experts_per_tok", "moe_topk", "top_k_experts", "num_experts_per_token",
                     why="experts per token")
        n_ff_exp = r.int("moe_intermediate_size", "intermediate_size", "expert_intermediate_size")
        n_shared = r.int("n_shared_experts", "num_shared_experts", default=0)
        n_ff_sh = r.int("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                        "shared_intermediate_size", default=0)  # the last: GraniteMoeShared / GraniteMoeHybrid
        if model_type in ("llama4", "llama4_text") and not n_ff_sh:
            # transformers Llama4TextMoe: shared_expert = Llama4TextMLP(config), of intermediate_size
            n_shared, n_ff_sh = 1, r.int("intermediate_size")
        if n_ff_sh and not n_shared:
            n_shared = 1
        elif n_shared and not n_ff_sh:
            n_ff_sh = n_shared * n_ff_exp
        return Ffn(n_experts=n_experts, n_experts_used=used, n_ff_expert=n_ff_exp,
                   n_shared_experts=n_shared, n_ff_shared=n_ff_sh)
    if model_type == "nemotron_h" and kind is LayerKind.NONE:
        return Ffn(n_ff=r.int("intermediate_size"))
    if model_type in ("llama4", "llama4_text") and r.has("intermediate_size_mlp"):
        return Ffn(n_ff=r.int("intermediate_size_mlp"))  # Llama4TextDecoderLayer: dense layers use intermediate_size_mlp
    if model_type in ("mamba", "mamba2"):
        # A Mamba block is the whole layer: no MLP. The -hf configs' intermediate_size is the mixer's inner width
        # (transformers MambaConfig: intermediate_size = expand * hidden_size), read by _recurrent.
        return Ffn()
    n_ff = r.int("intermediate_size", "ffn_hidden_size", "n_inner", default=0)
    if model_type == "opt":  # OPTDecoderLayer: fc1 {hidden, ffn_dim}, fc2 {ffn_dim, hidden}, ReLU, no gate
        return Ffn(n_ff=r.int("ffn_dim", why="feed-forward size"))
    if not n_ff and model_type in ("gpt2", "gpt_bigcode"):
        # transformers GPT2Block / GPTBigCodeBlock: inner_dim = config.n_inner if not None else 4 * hidden_size
        return Ffn(n_ff=4 * r.int("n_embd", "hidden_size"))
    if not n_ff:
        n_ff = r.int("intermediate_size", why="feed-forward size")
    return Ffn(n_ff=n_ff)
