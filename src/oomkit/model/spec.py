"""What a model is, engine-independent: one LayerSpec per layer, plus the weight tensors.

Dimensions are read from what the model declares (config.json or GGUF metadata); engines decide how they
store them. Mirrors the per-layer shape of vLLM's `vllm/v1/kv_cache_interface.py` (one spec per attention
kind) and llama.cpp's per-layer hparams (`n_head_kv(il)`, `is_swa(il)`, `n_embd_k_gqa(il)`, src/llama-hparams.h).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..quant.published_sizes import PublishedSize


class LayerKind(str, Enum):
    FULL = "full"  # full attention: K and V for every token
    SLIDING = "sliding"  # only the last `window` tokens
    CHUNKED = "chunked"  # attention within chunks of `window` tokens (Llama 4)
    LATENT = "latent"  # MLA: kv_lora_rank + qk_rope_head_dim latent per token
    RECURRENT = "recurrent"  # Mamba / gated delta net / RWKV: fixed state per sequence
    NONE = "none"  # no cache of its own (encoder-only, KV shared with an earlier layer)


@dataclass(frozen=True)
class Attention:
    """Attention dimensions of one layer. head_dim_k/v come from the model, never hidden/heads."""

    n_heads: int
    n_kv_heads: int
    head_dim_k: int
    head_dim_v: int
    window: int | None = None  # sliding / chunked layers
    # MLA (latent) layers: the compressed cache row and the decompressed per-head dims.
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    q_lora_rank: int = 0
    # DeepSeek V3.2 sparse attention: the lightning indexer keeps one key of index_head_dim per token beside the
    # latent (config.json index_head_dim / index_n_heads / index_topk; 0: no indexer)
    index_head_dim: int = 0
    index_n_heads: int = 0
    index_topk: int = 0
    # GLM-5.2's IndexShare (config indexer_types "shared"): the layer reuses the top-k of the last earlier layer
    # with a "full" indexer and has no indexer of its own: no indexer weights, no indexer key cache (transformers
    # modeling_glm_moe_dsa.py GlmMoeDsaAttention: self.indexer = None if skip_topk; llama.cpp src/llama-model.cpp
    # llama_kv_cache_dsa filter_lid = hparams.is_indexer_full(il))
    indexer_shared: bool = False
    # False for GGUFs converted before llama.cpp PR #12801 (no *_mla keys): llama.cpp then caches the
    # decompressed per-head K and V instead of the latent.
    latent_cache: bool = True
    # Gemma 4's full layers with attention_k_eq_v: V is projected by the K weights (no v_proj / attn_v tensor;
    # transformers modeling_gemma4.py use_alternative_attention); engines still cache V beside K.
    v_from_k: bool = False
    # DeepSeek-V4 (llama.cpp src/models/deepseek4.cpp): one shared head whose K row is also the value, so engines
    # cache K alone; compress_ratio > 0 adds the layer to a compressed cache of one row per `ratio` tokens
    # (config.json compress_ratios: 4 with the lightning indexer, 128 without)
    k_only: bool = False
    compress_ratio: int = 0

    @property
    def k_per_token(self) -> int:
        """Elements of K per token in the layer's natural (uncompressed-by-engine) form."""
        return self.n_kv_heads * self.head_dim_k

    @property
    def v_per_token(self) -> int:
        return self.n_kv_heads * self.head_dim_v

    @property
    def latent_per_token(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass(frozen=True)
class RecurrentState:
    """Per-sequence recurrent state, independent of context length, from the model's SSM dims.

    `conv` and `ssm` are the element counts llama.cpp calls n_embd_r and n_embd_s
    (src/llama-hparams.cpp llama_hparams::n_embd_r/n_embd_s): the rolling convolution state and the
    SSM / delta-net state.
    """

    kind: str  # "mamba", "mamba2", "gated_delta_net", "rwkv", "short_conv"
    d_inner: int
    d_state: int
    d_conv: int
    n_group: int = 0
    n_heads: int = 0  # Mamba-2 / GDN value heads (llama.cpp ssm.time_step_rank)
    conv_override: int | None = None  # RWKV / LFM2 shapes that are not Mamba-like
    ssm_override: int | None = None

    @property
    def conv(self) -> int:
        if self.conv_override is not None:
            return self.conv_override
        return max(self.d_conv - 1, 0) * (self.d_inner + 2 * self.n_group * self.d_state)

    @property
    def ssm(self) -> int:
        return self.ssm_override if self.ssm_override is not None else self.d_state * self.d_inner


@dataclass(frozen=True)
class Ffn:
    """Feed-forward block. Dense: n_ff. MoE: n_experts of n_ff_expert each, plus shared experts."""

    n_ff: int = 0
    n_experts: int = 0
    n_experts_used: int = 0
    n_ff_expert: int = 0
    n_shared_experts: int = 0
    n_ff_shared: int = 0
    # LatentMoE (Nemotron 3 Super / Ultra): the routed experts read and write a moe_latent_size-wide vector, the
    # hidden state projected down before them and up after (llama.cpp src/models/nemotron-h.cpp: ffn_latent_down
    # {n_embd, moe_n_embd}, ffn_up_exps {moe_n_embd, n_ff_exp, n_expert}); 0: the experts work at n_embd
    n_embd_latent: int = 0

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0


@dataclass(frozen=True)
class LayerSpec:
    index: int
    kind: LayerKind
    attention: Attention | None = None  # None for pure recurrent layers
    recurrent: RecurrentState | None = None
    ffn: Ffn = field(default_factory=Ffn)
    # Falcon-H1 runs attention and Mamba side by side in every layer.
    parallel_recurrent: bool = False
    # Shared-KV layers (Gemma 3n) reuse this layer's cache.
    kv_source: int | None = None
    # Llama 3.2 Vision (mllama) cross-attention layers (config text_config.cross_attention_layers): kind NONE, no
    # cache of the context; their `attention` attends over the vision encoder's tokens, whose K and V engines that
    # run the model keep per image (transformers modeling_mllama.py MllamaTextCrossAttention; Ollama's llama runner
    # and its fs/ggml GraphSize: 1601 tokens x 4 tiles in F32)
    cross_attention: bool = False


@dataclass(frozen=True)
class TensorSpec:
    """One weight tensor, named the GGUF way (`blk.3.attn_q.weight`); dtype is a ggml type or HF dtype."""

    name: str
    shape: tuple[int, ...]  # GGUF order: ne0 (row length) first
    dtype: str
    nbytes: int
    layer: int | None = None  # block index; None for token_embd / output / norms outside blocks
    offset: int | None = None  # byte offset in the GGUF data section, when read from (or laid out as) a file
    file: int = 0  # the split GGUF part whose data section `offset` is in (0: the first, or the only file)

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def is_expert(self) -> bool:
        """A routed expert's weights: GGUF `ffn_*_exps`, HF `mlp.experts.N.*` (shared experts excluded)."""
        return "_exps" in self.name or ".experts." in self.name


@dataclass(frozen=True)
class WeightInventory:
    tensors: tuple[TensorSpec, ...]
    exact: bool  # True when read from file headers, False when computed from the architecture
    format: str  # "Q4_K_M", "bf16", "fp8", "awq-int4", ...
    # a computed GGUF's publisher (the lower-cased owner of the Hugging Face GGUF repo named; None for a library
    # tag): a llama-quantize file, not Ollama's library quantizer's; where quant/gguf_recipes.PUBLISHERS knows the
    # owner its recipes type a plain file type ("Q4_K_M"), also when the list is typed again
    publisher: str | None = None
    # a computed GGUF as published in gguf-split parts of at most this many tensor bytes each (--split-max-size);
    # None: one file (llama.cpp maps each part apart: engines/llamacpp/weights.split_layout)
    split_max_bytes: int | None = None
    # a computed GGUF sized to its publisher's listed file size (quant/published_sizes.py): the stand-in's repeating
    # layers scaled to it (weights.sized_to_published), also when the list is typed again
    published: PublishedSize | None = None
    # a GPTQ config's ExLlama kernel as transformers reads it (quant/hf_formats.py gptq_exllama): 0, 1, 2, the str
    # GPTQConfig refuses it with, or None (names none)
    gptq_exllama: int | str | None = field(default=None, compare=False)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def n_params(self) -> int:
        return sum(t.n_elements for t in self.tensors)


@dataclass(frozen=True)
class RopeScaling:
    """RoPE context scaling as the model declares it: config.json `rope_scaling` (transformers v5 writes
    `rope_parameters`) or GGUF `{arch}.rope.scaling.type` / `.factor` / `.original_context_length`. Kept as written:
    each engine derives its default context from it by its own rule (vLLM config/model.py
    _get_and_verify_max_len, SGLang get_context_length)."""

    type: str  # "linear", "dynamic", "yarn", "longrope" ("su" before transformers renamed it), "llama3", "mrope", ...
    factor: float | None = None  # None: the dict has none (longrope, mrope, default)
    original_max_position_embeddings: int | None = None  # inside the rope dict (yarn, llama3, some longrope)
    # config.json's top-level original_max_position_embeddings (Phi-3 LongRoPE keeps it beside the dict)
    original_context: int | None = None
    # config.json gave one dict per layer type (transformers v5 rope_parameters): the fields are one of them
    per_layer_type: bool = False
    # M-RoPE: the dict carries mrope_section (or is "type": "mrope"), as Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5
    # write it; vLLM builds MRotaryEmbedding for it (rotary_embedding get_rope)
    mrope: bool = False
    # the rotated share of the head (partial_rotary_factor, in the dict or beside it in the config); None: whole head
    partial_rotary_factor: float | None = None


@dataclass(frozen=True)
class ModelSpec:
    name: str
    architecture: str  # the GGUF / llama.cpp architecture name ("llama", "qwen3moe", "deepseek2", ...)
    n_embd: int
    n_vocab: int
    n_ctx_train: int
    layers: tuple[LayerSpec, ...]
    weights: WeightInventory
    tied_embeddings: bool = False
    # Layers that only feed multi-token prediction (DeepSeek next-n / GLM MTP): loaded, not run by default.
    n_nextn_layers: int = 0
    source: str = ""  # where the figures came from (path, catalog entry and its citation)
    labels: tuple[str, ...] = ()  # guesses the reader had to make, shown to the user
    # Multimodal encoders the checkpoint carries beside the decoder (model/towers.py Tower), not in `weights`:
    # vLLM, SGLang and transformers load them with the checkpoint, llama.cpp and Ollama from an mmproj file.
    towers: tuple = field(default=(), compare=False)
    rope_scaling: RopeScaling | None = None  # None: no context scaling declared
    # config.json's context-length fields as written, (key, value) in CONTEXT_LENGTH_KEYS order (hf_config.py): vLLM
    # takes the smallest of those its release reads (config/model.py _get_and_verify_max_len), SGLang the first of
    # its own list (get_context_length), llama.cpp the converter's n_ctx_train above; empty where no config.json was
    # read (a GGUF keeps only its context_length)
    config_lengths: tuple[tuple[str, int], ...] = ()
    # the rotated share of each head, config.json's partial_rotary_factor (top level, or in the rope dict); None: the
    # whole head, or not read (a GGUF)
    partial_rotary_factor: float | None = None
    # {arch}.rope.scaling.finetuned as llama.cpp reads it: granite-hybrid.cpp ropes Q and K only where it is true or
    # absent (hparams.rope_finetuned, true by default); convert_hf_to_gguf.py GraniteHybridModel writes it false for a
    # hybrid with Mamba layers (Granite 4.0 H: no position embedding) and true for Bamba or an attention-only file.
    # None: absent, or no file read
    rope_finetuned: bool | None = field(default=None, compare=False)
    # config.json's model_type (the text config's where one is nested): the transformers model class the checkpoint
    # loads as, which `architecture` merges (mistral and mixtral are "llama" here); "" where no config.json was read
    hf_model_type: str = field(default="", compare=False)
    # the KV-cache quantization config.json's quantization_config declares (hf_config.checkpoint_kv_cache):
    # ModelOpt's kv_cache_quant_algo / kv_cache_scheme, compressed-tensors' kv_cache_scheme, as "fp8", "nvfp4", or
    # the declared name lower-cased ("unrecognized" for a scheme of neither kind); None: none declared (absent, null)
    checkpoint_kv_cache_dtype: str | None = field(default=None, compare=False)
    # the quant_method whose config declared it ("modelopt", "modelopt_fp4", "compressed-tensors", ...)
    checkpoint_kv_cache_method: str = field(default="", compare=False)
    # where it was declared (hf_config.checkpoint_kv_cache_layout): "kv_cache_scheme" or "kv_cache_quant_algo",
    # "quantization." before it for hf_quant_config.json's nested section; and quantization_config's quant_algo
    # ("FP8", "NVFP4", "MIXED_PRECISION", ...; "" where none): SGLang reads the cache by layout and weight format
    checkpoint_kv_cache_key: str = field(default="", compare=False)
    checkpoint_quant_algo: str = field(default="", compare=False)
    # a ModelOpt checkpoint's hf_quant_config.json, where it was read (a catalog variant's copy): its "quantization"
    # section's kv_cache_quant_algo lower-cased ("fp8"; None: none declared, or the file not read) and quant_algo
    # upper-cased ("MIXED_PRECISION"; "" likewise). config.json's own declaration is checkpoint_kv_cache_* above;
    # SGLang reads this file instead of an incomplete MIXED_PRECISION quantization_config from 0.5.15
    # (model_loader/weight_utils.py get_quant_config, modelopt_mixed_config_incomplete)
    hf_quant_config_kv_cache_dtype: str | None = field(default=None, compare=False)
    hf_quant_config_quant_algo: str = field(default="", compare=False)

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_trunk_layers(self) -> int:
        """Layers the model runs for every token: all but the trailing multi-token-prediction (next-n) ones."""
        return self.n_layers - self.n_nextn_layers

    @property
    def trunk_layers(self) -> tuple[LayerSpec, ...]:
        return self.layers[: self.n_trunk_layers]

    @property
    def attention_free(self) -> bool:
        """No layer the model runs for every token has attention (a pure state-space model such as Mamba-2): the
        engines build no attention inputs for it (llama.cpp's KQ mask and output rows, vLLM's attention-free
        scheduling)."""
        return all(layer.attention is None for layer in self.trunk_layers)

    @property
    def params_total(self) -> int:
        return self.weights.n_params

    @property
    def params_active(self) -> int:
        """Parameters touched per token: all but the unused routed experts and the multi-token-prediction (next-n)
        layers, which run only as a speculative draft (with their own embedding and head copies where the file has
        them)."""
        total = 0
        for t in self.weights.tensors:
            if t.layer is not None and t.layer >= self.n_trunk_layers:
                continue
            if t.is_expert and t.layer is not None:
                ffn = self.layers[t.layer].ffn if t.layer < len(self.layers) else None
                if ffn and ffn.n_experts:
                    total += t.n_elements * ffn.n_experts_used // ffn.n_experts
                    continue
            total += t.n_elements
        return total

    def kinds(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for layer in self.layers:
            counts[layer.kind.value] = counts.get(layer.kind.value, 0) + 1
        return counts


def shared_kv_sources(kinds: list[LayerKind] | tuple[LayerKind, ...], start: int, n_trunk: int) -> dict[int, int]:
    """Layers from `start` on reuse an earlier layer's KV cache and own none: each reads the last layer before
    `start` of its own kind (llama.cpp hparams.n_layer_kv_from_start, src/models/gemma3n.cpp / gemma4.cpp;
    transformers' Gemma3n num_kv_shared_layers: the same rule). Returns layer -> the layer whose cache it reads."""
    if not 0 < start < n_trunk:
        return {}
    last: dict[LayerKind, int] = {}
    for i in range(start):
        last[kinds[i]] = i
    return {i: last[kinds[i]] for i in range(start, n_trunk) if kinds[i] in last}
