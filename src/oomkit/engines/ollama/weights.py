"""The model file Ollama runs, and the model as Ollama's GGUF reader sees it: which weight bytes each layer group
holds (fs/ggml/ggml.go Tensors().GroupLayers()) and the KV accessors its estimates read."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from ...memo import ByObject
from ...model.archs import INTERVAL_HYBRIDS, NO_CACHE_ARCHS
from ...model.spec import LayerKind, ModelSpec, TensorSpec
from ...model.tensors import TensorShape
from ...model.weights import gguf_inventory
from ...quant import ggml
from ...quant.gguf_recipes import use_more_bits
from ..llamacpp import cache_head_k, cache_head_v, cache_kv_heads
from ..llamacpp.weights import converter_context, without_nextn

# A computed inventory's plain format (torch's dtype name, oomkit.quant.dtypes) -> the GGUF file type Ollama's
# `-fp16` / `-bf16` tags carry: a name mapping, not bytes, so not quant.dtypes' tables
_PLAIN_DTYPES = {"float16": "F16", "bfloat16": "BF16", "float32": "F32"}

# Encoder archs converted by convert_hf_to_gguf.py's BertModel family (no head_count_kv / key_length keys)
_NO_HEAD_COUNT_KV = {"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3"}


# GLM-4.x-Flash (Glm4MoeLiteForCausalLM; llama.cpp's converter: deepseek2 with the next-n block)
_GLM_FLASH = re.compile(r"glm[-_ ]?4\.\d+[-_ ]?flash", re.IGNORECASE)


def library_arch(spec: ModelSpec) -> str:
    """general.architecture of the GGUF Ollama's library ships for the model, where Ollama's own converter names
    it otherwise than llama.cpp's (the spec's architecture):

    - Olmo 3 / 3.1 (olmo2 with sliding-window layers to llama.cpp, conversion/olmo.py Olmo2Model):
      convert/convert_olmo.go writes "olmo3" (ffbe8e076, #13415, v0.13.4; "olmo2" only from 9db4bdbad, v0.30.0,
      after the library's olmo-3 / olmo-3.1 tags were pushed);
    - GLM-4.7-Flash (deepseek2 to llama.cpp, conversion/glm.py Glm4MoeLiteModel): convert/convert_glm4moelite.go
      writes "glm4moelite" (4f138a174, #13779, v0.14.3; "deepseek2" only from 9db4bdbad).
    A GGUF file read as it is keeps its own name, and so does any Hugging Face GGUF repo's
    (hf.co/unsloth/GLM-4.7-Flash-GGUF: llama.cpp's conversion, which Ollama runs on its llama.cpp runner)."""
    if spec.weights.exact or spec.weights.publisher:
        return spec.architecture
    if spec.architecture == "olmo2" and any(la.kind is LayerKind.SLIDING for la in spec.layers):
        return "olmo3"
    if spec.architecture == "deepseek2" and _GLM_FLASH.search(spec.name):
        return "glm4moelite"
    return spec.architecture


# the last few models in and what ollama_gguf made of them (id -> (spec in, spec out)): a plan or a fit estimates one
# model hundreds of times, and the llama.cpp layout's caches (dry runs, model buffers, compute phases) key on the
# spec they are handed, so one model must stay one object; the spec in is kept so that its id is not reused
_GGUF_MEMO = ByObject[ModelSpec](16)


def library_context(spec: ModelSpec) -> ModelSpec:
    """A computed spec with the trained context of the GGUF Ollama runs: llama.cpp's converter's 2**20 for Mamba
    and Granite 4.0 H (llamacpp.weights.converter_context; Ollama's granite4 library reports
    granitehybrid.context_length 1048576), but Nemotron-H as Ollama converts it itself
    (convert/convert_nemotron_h.go: context_length = max_position_embeddings)."""
    return spec if spec.architecture.startswith("nemotron_h") else converter_context(spec)


def ollama_gguf(spec: ModelSpec) -> ModelSpec:
    """_ollama_gguf, memoised by the spec object (frozen: the same object always gives the same answer)."""
    return _GGUF_MEMO.get(spec, None, lambda: _ollama_gguf(spec))


_NO_NEXTN_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe"})  # model.Register in model/models/qwen3next


def _ollama_gguf(spec: ModelSpec) -> ModelSpec:
    """The GGUF Ollama runs for a computed (not read) inventory.

    - `-fp16` / `-bf16` tags are GGUF files of that type (norms F32 as the converter writes them), not
      safetensors dtypes;
    - Ollama's library gpt-oss GGUF is its own conversion (convert/convert_gptoss.go): the MoE experts MXFP4,
      every other tensor as in the checkpoint (BF16, norms F32), not llama-quantize's MXFP4_MOE mix (Q8_0)."""
    if spec.architecture == "llama" and re.search(r"mistral[-_ ]?small[-_ ]?3\.[12]", spec.name, re.IGNORECASE):
        # Ollama converts Mistral3ForConditionalGeneration itself (convert/convert_mistral.go) as "mistral3", an
        # Ollama-engine model with no GraphSize formula of its own; llama.cpp's converter writes the text as "llama"
        spec = replace(spec, architecture="mistral3", labels=spec.labels + (
            "architecture as Ollama's library GGUF names it: mistral3 (llama.cpp: llama)",))
    if spec.architecture == "qwen2vl" and re.search(r"qwen[-_ ]?2\.5[-_ ]?vl", spec.name, re.IGNORECASE):
        # Ollama converts Qwen2_5_VLForConditionalGeneration itself (convert/convert_qwen25vl.go) as "qwen25vl",
        # text and vision tower in one GGUF, an Ollama-engine model from v0.7.0 (fs/ggml OllamaEngineRequired);
        # llama.cpp's converter writes the text as "qwen2vl" and the tower as a separate mmproj
        spec = replace(spec, architecture="qwen25vl", labels=spec.labels + (
            "architecture as Ollama's library GGUF names it: qwen25vl, vision tower included (llama.cpp: qwen2vl "
            "+ mmproj)",))
    if spec.architecture == "gemma-embedding" and not spec.weights.exact:
        # EmbeddingGemma: Ollama converts Gemma3TextModel itself as "gemma3" with a pooling type and the Dense
        # projections (its engine's model/models/gemma3/embed.go), where llama.cpp's converter writes
        # gemma-embedding: v0.11.10, the release that added embeddinggemma, vendors llama.cpp b6150, which predates
        # gemma-embedding (b6384), and ran it on the Ollama engine (ollama#12247's log), which knows gemma3 only.
        # Its layers are gemma3's: sliding where the config's window applies, the rest full
        layers = tuple(replace(la, kind=LayerKind.SLIDING if la.attention.window else LayerKind.FULL)
                       if la.attention is not None else la for la in spec.layers)
        spec = replace(spec, architecture="gemma3", layers=layers, labels=spec.labels + (GEMMA3_EMBED_LABEL,))
    if not spec.weights.exact and _fused_qkv_own_rule(spec):
        spec = _pre_qkv_as_v_quantizer(spec)
    if not spec.weights.exact and _quantized_in_spring_2025(spec):
        spec = _spring_2025_quantizer(spec)
    if not spec.weights.exact and _quantized_in_file_order(spec):
        spec = _file_order_quantizer(spec)
    if not spec.weights.exact and _gemma3_qat(spec):
        spec = _retyped(spec, lambda t: "f16" if t.name == "token_embd.weight" else t.dtype,
                        "weights as in Google's QAT Q4_0 GGUF that Ollama's gemma3 -it-qat tags ship: Q4_0 "
                        "throughout, token_embd (tied output) kept F16")
    if not spec.weights.exact and spec.weights.format.lower() in _PLAIN_DTYPES:
        shapes = [TensorShape(t.name, t.shape, t.layer) for t in spec.weights.tensors]
        w = gguf_inventory(shapes, arch=spec.architecture, ftype=_PLAIN_DTYPES[spec.weights.format.lower()])
        spec = replace(spec, weights=replace(w, publisher=spec.weights.publisher))  # a repo's file keeps its origin
    if library_arch(spec) == "glm4moelite":
        # convert/convert_glm4moelite.go Tensors skips every block >= num_hidden_layers ("skip any additional
        # layers (such as the Multi-Token Prediction layer)"), and from 64737330a (#13870, v0.15.0) splits
        # attn_kv_b into attn_k_b / attn_v_b for MLA absorption, the layout llama.cpp's deepseek2 holds; the
        # library's glm-4.7-flash is that conversion (llama/compat/llama-ollama-compat.cpp handle_glm4moelite:
        # "844 tensors, exact name match including attn_kv_a_mqa, attn_k_b, attn_v_b"), so its K/V are cached
        # as the latent (model/models/glm4moelite AttentionWithVMLA, v0.15.0+), not per head as DeepSeek's
        spec = without_nextn(spec)
        if spec.weights.format.upper() not in {"F16", "BF16", "F32", "FLOAT16", "BFLOAT16", "FLOAT32"}:
            spec = _go_quantizer_glm4moelite(spec)
        spec = replace(spec, labels=spec.labels + (
            "architecture as Ollama's library GGUF names it: glm4moelite (llama.cpp: deepseek2), without the "
            "next-n (MTP) block its converter skips",))
    elif library_arch(spec) in _NO_NEXTN_ARCHS:
        # Qwen3-Next / Qwen3.5 / Qwen3.6: convert/convert_qwen3next.go (v0.15.5+) writes block_count =
        # num_hidden_layers and maps no mtp.* tensor to a block, and llama.cpp's converter skipped "mtp." from
        # its qwen3.5 support (fc0fe4004, 2026-02-10) to 255582687 (#22673, 2026-05-16): the files the Ollama
        # engine's model/models/qwen3next runs have no next-n block ("model layers"=41 for Qwen3.6-35B-A3B's 40
        # blocks and the output, tests/fixtures/engine_logs/ollama_heldout13)
        spec = without_nextn(spec)
        spec = replace(spec, labels=spec.labels + ("GGUF without the next-n (MTP) block its converter skips",))
    elif not spec.weights.exact and any(la.attention is not None and la.attention.kv_lora_rank
                                        and la.attention.latent_cache for la in spec.layers):
        # the library's DeepSeek V2/V3/R1 GGUFs were converted before llama.cpp's MLA layout (PR #12801, April
        # 2025): no key_length_mla, 128 K/V heads of 192/128 (their digests predate it; ollama#8597, #8667)
        layers = tuple(replace(la, attention=replace(la.attention, latent_cache=False))
                       if la.attention is not None and la.attention.kv_lora_rank else la for la in spec.layers)
        spec = replace(spec, layers=layers, labels=spec.labels + (
            "DeepSeek GGUF as in Ollama's library: converted before llama.cpp's MLA layout, so K/V are cached "
            "per head (128 x 192 / 128), not as the 576-wide latent",))
    if _gemma4_e_library(spec):
        spec = _gemma4_e_library_file(spec)
    if _gemma3n_library(spec):
        spec = _retyped(spec, _gemma3n_library_type, "weights as in Ollama's library gemma3n GGUF: "
                        "per_layer_token_embd BF16 (never quantized), the F16 matrices Q4_K")
    if not spec.weights.exact and not publishers_gguf(spec) and spec.weights.format.upper() == "Q4_K_M" and (
            spec.architecture == "gemma4" or (_GO_QUANTIZED_TOWERS & {t.family for t in getattr(spec, "towers", ())}
                                              and not _quantized_in_spring_2025(spec))):
        spec = _go_quantizer_attn_v(spec)
    if (spec.architecture in ("gpt-oss", "gptoss") and not spec.weights.exact
            and spec.weights.format.upper() in ("MXFP4_MOE", "MXFP4")):
        def gptoss_type(t):
            # convert/reader.go tensorBase.Kind: ffn_gate_inp.weight and 1-D tensors F32, the rest 16-bit;
            # the expert blocks/scales become one MXFP4 tensor (convert_gptoss.go Tensors)
            if t.name.endswith("_exps.weight") and len(t.shape) == 3:
                return "mxfp4"
            if t.name.endswith(".ffn_gate_inp.weight") or len(t.shape) < 2:
                return "f32"
            return "bf16"

        return _retyped(spec, gptoss_type, "weights as in Ollama's gpt-oss GGUF: MXFP4 experts, 16-bit elsewhere, "
                        "norms and router F32 (convert/convert_gptoss.go, convert/reader.go)")
    return spec


_PER_HEAD_MEMO = ByObject[ModelSpec](16)


def glm4moelite_per_head(spec: ModelSpec) -> ModelSpec:
    """GLM-4.7-Flash as Ollama v0.14.3-v0.14.x ran it, from the library's first blob:

    - convert_glm4moelite.go of v0.14.3 kept attn_kv_b whole (the split into attn_k_b / attn_v_b for MLA absorption
      came with 64737330a, #13870, v0.15.0): 797 tensors, one a block fewer than the later 844 (ollama/ollama#13805:
      num_tensors=797), and server/quantization.go of v0.14.3 had no Q8_0 rule for the MLA tensors (16750865d,
      #13891, v0.15.1): they are at the file type's default, as attn_kv_b [kv_lora_rank, heads x (qk_nope +
      v_head)] is;
    - model/models/glm4moelite decompressed K and V per head through attn_kv_b (kv.ChunkSections into qk_nope /
      v_head, nn.Attention): the cache holds num_key_value_heads x (qk_nope + qk_rope) K and x v_head_dim V a
      token, not the 576 / 512-wide latent (ollama/ollama#13789: 160 MiB a layer at 8192 cells)."""
    def per_head() -> ModelSpec:
        layers = tuple(replace(la, attention=replace(la.attention, latent_cache=False))
                       if la.attention is not None and la.attention.kv_lora_rank else la for la in spec.layers)
        out = replace(spec, layers=layers, labels=spec.labels + (
            "glm4moelite before Ollama 0.15.0: the library's first blob (attn_kv_b whole, the MLA tensors at the "
            "file type's default), K/V cached per head (20 x 256 / 256)",))
        if spec.weights.exact:
            return out
        from ...quant.gguf_recipes import ftype_by_name  # lazy, as in _spring_2025_quantizer

        fmt = spec.weights.format.upper()
        plain = fmt in {"F16", "BF16", "F32", "FLOAT16", "BFLOAT16", "FLOAT32"}
        default = None if plain else ftype_by_name(fmt).default_type
        a = next(la.attention for la in spec.layers if la.attention is not None and la.attention.kv_lora_rank)
        tensors = []
        for t in spec.weights.tensors:
            if t.name.endswith(".attn_v_b.weight"):
                continue
            if t.name.endswith(".attn_k_b.weight"):
                shape = (a.kv_lora_rank, a.n_heads * (a.qk_nope_head_dim + a.v_head_dim))
                dtype = default or t.dtype
                t = replace(t, name=t.name.replace("attn_k_b", "attn_kv_b"), shape=shape, dtype=dtype,
                            nbytes=ggml.tensor_bytes(dtype, shape))
            elif default and t.name.endswith(_MLA_Q8_0):
                t = replace(t, dtype=default, nbytes=ggml.tensor_bytes(default, t.shape))
            tensors.append(t)
        return replace(out, weights=replace(spec.weights, tensors=tuple(tensors)))
    return _PER_HEAD_MEMO.get(spec, None, per_head)


_MLA_Q8_0 = ("attn_k_b.weight", "attn_v_b.weight", "attn_kv_a_mqa.weight", "attn_q_a.weight", "attn_q_b.weight")


def _go_quantizer_glm4moelite(spec: ModelSpec) -> ModelSpec:
    """The tensor types of the library's glm-4.7-flash, which Ollama's Go quantizer made (server/quantization.go
    getTensorNewType as of 16750865d, #13891, v0.15.1: the library tags were re-pushed with the MLA split then):

    - the MLA tensors (attn_k_b, attn_v_b, attn_kv_a_mqa, attn_q_a, attn_q_b) Q8_0 whatever the file type ("MLA
      tensors need higher precision to avoid quality degradation");
    - ffn_down (Q4_K_M: Q6_K where useMoreBits; Q4_K_S: Q5_K below n/8): quantize() sets qs.nFfnDown to the number
      of blk.N groups, while qs.iFfnDown advances on every tensor whose name contains "ffn_down", in the file's
      order (fs/ggml WriteGGUF sorts by block, then name). A MoE block with a shared expert has two (ffn_down_exps,
      ffn_down_shexp), so the counter runs to about twice the block count and useMoreBits(i, n), true for every
      i >= 7n/8, types the whole second half Q6_K: 69 of glm4moelite's 93 ffn_down tensors (llama-quantize counts
      per layer).
    ollama/ollama#14273 (v0.15.6-v0.16.1, 24 of 48 layers on CUDA0): "model weights" 9.3 GiB / 8.4 GiB."""
    fmt = spec.weights.format.upper()
    n = len({t.layer for t in spec.weights.tensors if t.layer is not None and t.name.startswith("blk.")})
    downs = sorted((t for t in spec.weights.tensors if t.layer is not None and "ffn_down" in t.name),
                   key=lambda t: (t.layer, t.name))

    def down_type(i: int) -> str:  # the file type's default otherwise (ftype.ToTensorType: Q4_K)
        if fmt == "Q4_K_M" and use_more_bits(i, n):
            return "q6_K"
        return "q5_K" if fmt == "Q4_K_S" and i < n // 8 else "q4_K"

    new = {t.name: down_type(i) for i, t in enumerate(downs)} if fmt in ("Q4_K_M", "Q4_K_S") else {}
    new.update({t.name: "q8_0" for t in spec.weights.tensors if t.name.endswith(_MLA_Q8_0)})
    return _retyped(spec, lambda t: new.get(t.name, t.dtype),
                    "weights as Ollama's quantizer types glm4moelite: the MLA tensors Q8_0, ffn_down counted over "
                    "every ffn_down tensor, the shared experts' too (server/quantization.go)")


# Towers Ollama's converter writes into the model GGUF whose library tags only its Go quantizer (v0.7.0+) can have
# made: Pixtral (mistral3: mistral-small3.2, 2025-06, ministral-3, 2025-12; mistral-small3.1 of v0.6.x's
# llama.cpp is _SPRING_2025's) and Qwen2.5-VL (qwen25vl, first supported by v0.7.0, convert_qwen25vl.go
# splitting the tower's attn.qkv into v.blk.N.attn_q / attn_k / attn_v)
_GO_QUANTIZED_TOWERS = {"pixtral", "qwen2_5_vl"}


def _go_quantizer_attn_v(spec: ModelSpec) -> ModelSpec:
    """attn_v of a Q4_K_M library GGUF that Ollama's Go quantizer made from a converted file that carries its vision
    tower (server/quantization.go, v0.7.0+). quantize() counts qs.nAttnV over every tensor whose name contains
    attn_v.weight / attn_qkv.weight / attn_kv_b.weight, the tower's v.blk.N.attn_v too; from v0.14.3 (01cf7445f)
    newType() skips every name starting "v.", before it only those containing "v." but not "_v." (v0.7.0-v0.14.2
    typed the tower's attn_v too: projector.py _go_attn_v_bytes), and either way the text blocks come first (fs/ggml
    WriteGGUF sorts blk.N by block), so qs.iAttnV is 0..n_text-1 on them. Q6_K where useMoreBits(iAttnV, nAttnV), the
    first and last eighth of all the V tensors and every third between. gemma4:26b (25 text attn_v beside the
    tower's 27): Q6_K in blocks 0-4, 6, 9, 13, 16, 20, 24, 27, as required.CUDA0.Weights shows block by block
    (ollama/ollama#15388), where llama-quantize over the text alone gives 0-2, 6, 9, 13, 16, 20, 24-28. Applied
    where it was measured (gemma4's library tags, quantized by v0.20's Go quantizer) and, from the source alone, to
    the Pixtral and Qwen2.5-VL tags (_GO_QUANTIZED_TOWERS): ministral-3:14b / mistral-small3.2 (40 + 24 V tensors)
    Q6_K in blocks 0-7, 10, 13, ..., 37 (18), where the text alone gives 20."""
    vision = sum(t.config_layers or 0 for t in getattr(spec, "towers", ()) if t.kind == "vision")
    # the towers' own V tensors where the inventory carries them (_gemma4_e_library_file: v.blk.N / a.blk.N)
    vision += sum(1 for t in spec.weights.tensors if t.name.startswith(_TOWER_PREFIXES) and "attn_v.weight" in t.name)
    if not vision:
        return spec
    text_v = sorted((t for t in spec.weights.tensors if t.layer is not None and t.name.startswith("blk.")
                     and any(k in t.name for k in ("attn_v.weight", "attn_qkv.weight", "attn_kv_b.weight"))),
                    key=lambda t: (t.layer, t.name))
    n = len(text_v) + vision
    if not text_v or max((la.ffn.n_experts for la in spec.layers), default=0) == 8:  # nExperts 8: Q8_0 always
        return spec
    six = {t.name for i, t in enumerate(text_v) if use_more_bits(i, n)}
    names = {t.name for t in text_v}
    return _retyped(spec, lambda t: ("q6_K" if t.name in six else "q4_K") if t.name in names else t.dtype,
                    "attn_v as Ollama's quantizer types it: its V-tensor count includes the vision tower's "
                    "(server/quantization.go quantize)")


_TOWER_PREFIXES = ("v.", "a.", "mm.")

# Gemma 4 E2B / E4B's towers as the HF config of google/gemma-4-E4B-it gives them, which the catalog entry lacks:
# audio_config hidden_size 1024, 12 layers, 8 heads, conv_kernel_size 5, subsampling_conv_channels [128, 32],
# output_proj_dims 1536, use_clipped_linears (a verbatim dump of the E-model config.json: code search id 54991121250;
# num_mel_bins 128, transformers' default); vision_config {"model_type": "gemma4_vision"} with the
# Gemma4VisionConfig defaults of the 768-wide tower: 16 layers, 12 heads of 64, patch 16, position_embedding_size
# 10240, use_clipped_linears, no standardize (code search ids 51768787626, 65721018737, 62405887006);
# intermediate_size 3072 (4 x 768) is assumed, not read.
GEMMA4_E_VISION = {"hidden": 768, "ff": 3072, "layers": 16, "patch": 16, "pos": 10240}
GEMMA4_E_AUDIO = {"hidden": 1024, "layers": 12, "kernel": 5, "channels": (128, 32), "mel": 128, "out": 1536}


def _gemma4_e_library(spec: ModelSpec) -> bool:
    """Ollama's library gemma4:e2b / e4b (Q4_K_M): a gemma4 with per-layer embeddings, no tower in the spec."""
    return (spec.architecture == "gemma4" and not spec.weights.exact and not publishers_gguf(spec)
            and spec.weights.format.upper() == "Q4_K_M"
            and not any(t.kind == "vision" for t in getattr(spec, "towers", ()))
            and any(t.name == "per_layer_token_embd.weight" for t in spec.weights.tensors))


def _gemma3n_library(spec: ModelSpec) -> bool:
    """Ollama's library gemma3n:e2b / e4b (its own conversion, quantized by server/quantization.go): newType skips
    per_layer_token_embd (d0b32def6, "this tensor isn't compatible with cuda when quantized to q4_K", 2025-06-26,
    the day the library tags were published; v0.9.4+), so the table stays BF16 as converted: 262144 x 30 x 256 x 2 B
    = 3840 MiB for the E2B (ollama/ollama#11640, gemma3n:e2b at v0.10.x, 0/31 layers: "model weights" buffer=CPU
    5.6 GiB, where a Q6_K table would give 3.5 GiB; ollama.com lists the tags at 5.6 / 7.5 GB)."""
    return (spec.architecture == "gemma3n" and not spec.weights.exact and not publishers_gguf(spec)
            and spec.weights.format.upper() == "Q4_K_M"
            and any(t.name == "per_layer_token_embd.weight" for t in spec.weights.tensors))


def _gemma3n_library_type(t) -> str:
    """server/quantization.go newType / getTensorNewType (v0.9.4-v0.2x) on the Q4_K_M gemma3n: per_layer_token_embd
    kept BF16; a 2-D / 3-D ".weight" that is no norm takes the file type's Q4_K when its rows divide by 256
    (per_layer_model_proj, altup_proj, altup_unembd_proj, altup_router, laurel_l), where llama.cpp's quantizer
    leaves them F16; a row that does not divide takes a fallback type, not modelled (laurel_r, 64 wide: F16 kept)."""
    if t.name == "per_layer_token_embd.weight":
        return "bf16"
    if (t.dtype == "f16" and len(t.shape) >= 2 and t.shape[0] % 256 == 0 and t.name.endswith("weight")
            and not t.name.endswith("_norm.weight")):
        return "q4_K"
    return t.dtype


def _gemma4_e_towers(text_hidden: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, GGUF shape, type) of the vision and audio tensors convert/convert_gemma4.go writes (v0.20.0+), typed as
    convert/reader.go tensorBase.Kind and reader_safetensors.go safetensor.Kind make them from BF16 safetensors:
    1-D tensors, clip scalars, a.conv1d.* and conv_dw F32 (the audio convolutions' im2col), v.position_embd F32;
    v.* and mm.* F16 (safetensor.Kind keeps BF16 only outside v./s./mm.), v.patch_embd F16 (kindOverride); the
    audio tower's a.* matrices BF16. server/quantization.go newType never quantizes a name starting "v." or "a." or
    containing "mm." (v0.20.0+)."""
    out: list[tuple[str, tuple[int, ...], str]] = []
    clip = ("input_min", "input_max", "output_min", "output_max")
    vh, vff, vn, vp, vpos = (GEMMA4_E_VISION[k] for k in ("hidden", "ff", "layers", "patch", "pos"))
    out += [("v.patch_embd.weight", (vp, vp, 3, vh), "f16"), ("v.position_embd.weight", (vh, vpos, 2), "f32")]
    for i in range(vn):
        b = f"v.blk.{i}."
        for lin, shape in (("attn_q", (vh, vh)), ("attn_k", (vh, vh)), ("attn_v", (vh, vh)),
                           ("attn_out", (vh, vh)), ("ffn_gate", (vh, vff)), ("ffn_up", (vh, vff)),
                           ("ffn_down", (vff, vh))):
            out.append((b + lin + ".weight", shape, "f16"))
            out += [(b + lin + "." + c, (1,), "f32") for c in clip]
        out += [(b + n + ".weight", (64,), "f32") for n in ("attn_q_norm", "attn_k_norm")]
        out += [(b + n + ".weight", (vh,), "f32") for n in ("ln1", "attn_post_norm", "ln2", "ffn_post_norm")]
        out.append((b + "out_scale.weight", (1,), "f32"))
    out.append(("mm.input_projection.weight", (vh, text_hidden), "f16"))
    ah, an, k, (c0, c1), mel, ao = (GEMMA4_E_AUDIO[x] for x in ("hidden", "layers", "kernel", "channels", "mel",
                                                               "out"))
    out += [("a.conv1d.0.weight", (3, 3, 1, c0), "f32"), ("a.conv1d.0.norm.weight", (c0,), "f32"),
            ("a.conv1d.1.weight", (3, 3, c0, c1), "f32"), ("a.conv1d.1.norm.weight", (c1,), "f32"),
            ("a.pre_encode.out.weight", (mel // 4 * c1, ah), "bf16")]
    for i in range(an):
        b = f"a.blk.{i}."
        for lin, shape in (("ffn_up", (ah, 4 * ah)), ("ffn_down", (4 * ah, ah)), ("ffn_up_1", (ah, 4 * ah)),
                           ("ffn_down_1", (4 * ah, ah)), ("attn_q", (ah, ah)), ("attn_k", (ah, ah)),
                           ("attn_v", (ah, ah)), ("attn_out", (ah, ah)), ("conv_pw1", (ah, 2 * ah)),
                           ("conv_pw2", (ah, ah))):
            out.append((b + lin + ".weight", shape, "bf16"))
            out += [(b + lin + "." + c, (1,), "f32") for c in clip]
        out += [(b + n + ".weight", (ah,), "f32") for n in ("layer_pre_norm", "ffn_norm", "ffn_post_norm",
                                                             "ffn_norm_1", "ffn_post_norm_1", "ln1", "ln2",
                                                             "conv_norm", "norm_conv")]
        out += [(b + "linear_pos.weight", (ah, ah), "bf16"), (b + "per_dim_scale.weight", (ah // 8,), "f32"),
                (b + "conv_dw.weight", (k, ah), "f32")]
    out += [("mm.a.input_projection.weight", (ao, text_hidden), "f16"), ("mm.a.fc.weight", (ah, ao), "f16"),
            ("mm.a.fc.bias", (ao,), "f32")]
    return out


def _gemma4_e_library_file(spec: ModelSpec) -> ModelSpec:
    """Ollama's library gemma4:e2b / e4b GGUF, its own conversion (convert/convert_gemma4.go) quantized by its Go
    quantizer (server/quantization.go, v0.20.0-v0.2x): per_layer_token_embd is never quantized (newType: "skip
    quantizing per_layer_token_embd", d0b32def6, v0.9.3+), so it stays BF16 as converted (262144 x 42 x 256 x 2 B =
    5376 MiB for the E4B); per_layer_model_proj takes the file type's Q4_K (getTensorNewType has no rule for it); the
    vision and audio towers ride in the same file (_gemma4_e_towers; pdevine on ollama/ollama#15356: "The audio and
    vision tensors take up a substantial amount of space"). ollama.com lists gemma4:e4b at 9.6 GB (kryptobaseddev/
    cleo#1080): this file is 9.56 GB."""
    def type_of(t):
        if t.name == "per_layer_token_embd.weight":
            return "bf16"
        if t.name == "per_layer_model_proj.weight":
            return "q4_K"
        return t.dtype

    spec = _retyped(spec, type_of, "weights as in Ollama's library gemma4 E-model GGUF: per_layer_token_embd BF16 "
                    "(never quantized), the vision and audio towers in the file (F16 / BF16)")
    towers = tuple(TensorSpec(name, shape, dtype, ggml.tensor_bytes(dtype, shape))
                   for name, shape, dtype in _gemma4_e_towers(spec.n_embd))
    return replace(spec, weights=replace(spec.weights, tensors=spec.weights.tensors + towers))


def llama_server_gguf(spec: ModelSpec) -> ModelSpec:
    """The library GGUF as era D's llama-server loads it (v0.30+, llm/llama_server.go). Its gpt-oss compat shim
    (llama/compat/llama-ollama-compat.cpp handle_gptoss) only renames: it reads blk.N.ffn_gate_exps ("same tensor
    layout otherwise"), the layout convert_gptoss.go writes since it splits gate_up (c00fa9cc2 / 93085127f,
    2025-10-10), so the blob it loads is a conversion from then on, where convert/reader.go tensorBase.Kind writes
    every `*.bias` F32 (from v0.12.0). ollama/ollama#16416 (gpt-oss:120b, v0.30.0, ROCm): the model column 61223
    MiB = the BF16-bias figure (61147) + 36 x 3 x 2880 x 128 x 2 B. The Ollama engine (eras B/C) creates those
    biases F32 whatever the file says (runner_layer_weights), so only this path reads them from the file."""
    if spec.architecture in ("gpt-oss", "gptoss") and not spec.weights.exact and any(
            t.name.endswith("_exps.bias") and t.dtype.lower() == "bf16" for t in spec.weights.tensors):
        return _retyped(spec, lambda t: "f32" if t.name.endswith(".bias") else t.dtype,
                        "gpt-oss biases F32, as in the library GGUF llama-server loads (convert/reader.go Kind)")
    return spec


_QAT = re.compile(r"(?<![a-z])qat(?![a-z])", re.IGNORECASE)


def _gemma3_qat(spec: ModelSpec) -> bool:
    """A gemma3 QAT Q4_0 file, named so (the Ollama tag or the repo name, kept in the resolver's label): Google's
    QAT GGUFs keep token_embd in F16 where llama-quantize's Q4_0 gives the tied output Q6_K. Measured on 12b:
    llama.cpp's CPU_Mapped buffer of gemma-3-12b-it-q4_0.gguf is 7694.17 MiB (ggml-org/llama.cpp#13004, build
    5149) = the Q4_0 text weights with token_embd 262144 x 3840 x 2 B; Ollama's gemma3:12b-it-qat blob
    1fb99eda86dc prints memory.weights.nonrepeating 1.9 GiB (ollama/ollama#8430, 0.7.0)."""
    return (spec.architecture == "gemma3" and spec.weights.format.upper() == "Q4_0"
            and any(_QAT.search(x) for x in (spec.name, *spec.labels) if "vision tower" not in x))


# Library tags Ollama quantized with the llama.cpp it vendored from v0.6.2 to v0.6.8 (2025-03-14 6bd0a983c to
# 2025-05-06 424810450, when quantization moved to Go): the original Qwen3 dense tags (2025-04-28; 4b, 30b and
# 235b were re-pointed to the 2507 releases later) and mistral-small3.1 (its mistral3 GGUF is Ollama's own).
_SPRING_2025 = (re.compile(r"^qwen3[:\s-]*(0\.6|1\.7|8|14|32)b\b(?!.*(2507|embed|coder|instruct|thinking|vl))",
                           re.IGNORECASE),
                re.compile(r"mistral[-_ ]?small[-_ ]?3\.1", re.IGNORECASE))


def publishers_gguf(spec: ModelSpec) -> bool:
    """A Hugging Face GGUF repo's file, whoever its owner (hf.co/unsloth/..., hf.co/Qwen/Qwen3-32B-GGUF,
    ggml-org/..., lmstudio-community/..., mradermacher/...: model/resolve.py with_gguf_origin records the owner):
    llama.cpp's converter and upstream llama-quantize made it, not Ollama's library pipeline, so
    none of the library's quantizer quirks below applies (Ollama's vendored llama-quant.cpp patch of v0.6.2-v0.6.8,
    the pre-#9935 llama-quantize of its 2024 Qwen2.5 tags, server/quantization.go's Go quantizer: each only ever
    quantized the blobs ollama.com's library serves). library_arch reads it the same way."""
    return bool(spec.weights.publisher)


# The library's phi3-architecture GGUFs (phi3, phi3.5, phi4, phi4-mini, phi4-reasoning: 2024-2025 tags) hold one
# fused attn_qkv a block, quantized long before llama.cpp's b8266 (1dab5f5a4), which sends attn_qkv through attn_v's
# rules; the library's other fused-QKV archs (chatglm, falcon, gpt2, bloom, ...) are likely alike, unverified
_FUSED_QKV_LIBRARY_ARCHS = {"phi3"}


def _fused_qkv_own_rule(spec: ModelSpec) -> bool:
    fmt = spec.weights.format.upper()
    return (spec.architecture in _FUSED_QKV_LIBRARY_ARCHS and not publishers_gguf(spec)
            and fmt not in ("F32", "F16", "BF16", "FLOAT16", "BFLOAT16", "FLOAT32")
            and any(t.name.endswith("attn_qkv.weight") for t in spec.weights.tensors))


def _pre_qkv_as_v_quantizer(spec: ModelSpec) -> ModelSpec:
    """attn_qkv as the library's llama-quantize typed it: llama.cpp@1dab5f5a4~1 src/llama-quant.cpp
    llama_tensor_get_type's own attn_qkv branch (Q3_K_M / Q3_K_L / IQ3_M -> Q4_K, Q4_K_M -> Q5_K, Q5_K_M -> Q6_K),
    not attn_v's use_more_bits halves (b8266 on, quant.gguf_recipes QKV_AS_V_BUILD); Ollama's Go quantizer
    (server/quantization.go getTensorNewType, v0.7.0-v0.13.5) has the same Q4_K_M -> Q5_K branch. phi4:14b
    (ollama/ollama#13552, v0.13.2): q4_K 101 / q5_K 40 / q6_K 21 tensors, CUDA0 model buffer 8354.71 MiB (the
    b8266 rules: 20 attn_qkv at q4_K and 20 at q6_K, 8360.57 MiB)."""
    from ...quant.gguf_recipes import QKV_AS_V_BUILD, recipe_types  # lazy: only this quirk needs the recipe

    types = recipe_types(spec.weights.format, [(t.name, t.shape) for t in spec.weights.tensors],
                         spec.architecture, build=QKV_AS_V_BUILD - 1)
    return _retyped(spec, lambda t: types.get(t.name, t.dtype) if t.name.endswith("attn_qkv.weight") else t.dtype,
                    "weights as in Ollama's library GGUF: attn_qkv by llama-quantize's own rule of its day "
                    "(Q4_K_M -> Q5_K), not attn_v's (llama.cpp b8266 on)")


def _quantized_in_spring_2025(spec: ModelSpec) -> bool:
    fmt = spec.weights.format.upper()
    return (not publishers_gguf(spec) and fmt not in ("F32", "F16", "BF16", "FLOAT16", "BFLOAT16", "FLOAT32")
            and any(r.search(spec.name) for r in _SPRING_2025))


def _spring_2025_quantizer(spec: ModelSpec) -> ModelSpec:
    """The tensor types of a library GGUF quantized by Ollama's vendored llama.cpp of v0.6.2-v0.6.8.

    - llama-quant.cpp llama_model_quantize_impl (Ollama's patch 0021-add-model-quantizations, 6bd0a983c):
      `quantize &= name.find("v.") == npos` was meant for the vision tower but also matches "attn_v.weight":
      every attn_v stays at the converter's F16 (qwen3:32b: 64 f16 tensors, ollama/ollama#14774; per-layer
      bytes 315,638,784 / 281,846,784, ollama/ollama#13372). The Go quantizer of v0.7.0 excepts "_v." again.
    - the same patch's mistral3 tensor map has no LLM_TENSOR_OUTPUT, so llama_tensor_get_type never sees
      output.weight as the output (it keeps the file type's default, Q4_K: memory.weights.nonrepeating
      360.0 MiB, ollama/ollama#10417) and has_output stays false, so token_embd takes the output rule (Q6_K
      unless the default is Q8_0 or rows are not whole K-blocks)."""
    from ...quant.gguf_recipes import ftype_by_name  # lazy: only this quirk needs the file-type table

    ft = ftype_by_name(spec.weights.format)
    default = ft.default_type or "q4_K"
    mistral3 = spec.architecture == "mistral3"

    def spring_2025_type(t):
        dtype = t.dtype
        if "v." in t.name and t.name.endswith("weight") and len(t.shape) >= 2:
            dtype = "f16"
        elif mistral3 and t.name == "output.weight":
            dtype = default
        elif mistral3 and t.name == "token_embd.weight":
            block = ggml.type_by_name(default).block_size
            dtype = "q8_0" if t.shape[0] % block else default if default == "q8_0" else "q6_K"
        return dtype

    mistral3_note = (", output.weight at the default type and token_embd as the output (no output tensor in its "
                     "mistral3 map)" if mistral3 else "")
    return _retyped(spec, spring_2025_type, "weights as in Ollama's library GGUF, quantized by Ollama v0.6.2-v0.6.8: "
                    "attn_v left F16 (its quantizer skipped every name containing \"v.\")" + mistral3_note)


# The library's Qwen2.5 text tags (2024-09): llama.cpp's converter (Ollama converts qwen2 itself only from v0.5.6,
# f6f371300) and a llama-quantize from before PR #9935 (ggml-org/llama.cpp, 2024-10-31), which walked the tensors in
# the file's order, not by block (llama_model_loader::weights_map and its weight_name_comparer came with that PR)
_QWEN25_2024 = re.compile(r"^qwen2\.5 (0\.5|1\.5|3|7|14|32|72)b( instruct)?$", re.IGNORECASE)
# the checkpoint's state_dict order within a block (Qwen2DecoderLayer: self_attn q/k/v/o, mlp gate/up/down, the norms)
_QWEN2_HF = (("attn_q.weight", "self_attn.q_proj.weight"), ("attn_q.bias", "self_attn.q_proj.bias"),
             ("attn_k.weight", "self_attn.k_proj.weight"), ("attn_k.bias", "self_attn.k_proj.bias"),
             ("attn_v.weight", "self_attn.v_proj.weight"), ("attn_v.bias", "self_attn.v_proj.bias"),
             ("attn_output.weight", "self_attn.o_proj.weight"), ("ffn_gate.weight", "mlp.gate_proj.weight"),
             ("ffn_up.weight", "mlp.up_proj.weight"), ("ffn_down.weight", "mlp.down_proj.weight"),
             ("attn_norm.weight", "input_layernorm.weight"), ("ffn_norm.weight", "post_attention_layernorm.weight"))
_HF_SHARD = 4 * 10**9  # save_pretrained(max_shard_size="4GB"), decimal: 1 / 1 / 2 / 4 / 8 / 17 / 37 files, 0.5B-72B


def _quantized_in_file_order(spec: ModelSpec) -> bool:
    fmt = spec.weights.format.upper()
    return (spec.architecture == "qwen2" and bool(_QWEN25_2024.match(spec.name)) and not publishers_gguf(spec)
            and fmt not in ("F32", "F16", "BF16", "FLOAT16", "BFLOAT16", "FLOAT32"))


def _file_order_quantizer(spec: ModelSpec) -> ModelSpec:
    """The tensor types of a GGUF that llama-quantize made before PR #9935: quantize_state_impl's counters
    (i_attention_wv, i_ffn_down/gate/up: the layer use_more_bits sees) advance in the file's tensor order, and
    convert_hf_to_gguf.py wrote the tensors shard by shard, each shard's in safe_open().keys() order (sorted by
    name), so "model.layers.10.*" comes before "model.layers.9.*" where one shard holds both (ggml-org/llama.cpp
    #9005: "the layer jump from 7 to 10"). The shards are the checkpoint's: save_pretrained fills one until the
    next tensor would pass 4 GB. Every block has the same shapes, so the block at file position i takes the type
    the block-ordered recipe gives block i. qwen2.5:72b: the ffn_down of block 10 comes before block 9's (shard 6
    of 37), so block 10 is Q8_0 and block 9 Q5_0, one 86.6 MiB heavier block moved from GPU 0 to GPU 1 in
    v0.3.14's round-robin (ollama/ollama#7443: allocations [18.6 17.1 17.3] GiB)."""
    blocks = sorted({t.layer for t in spec.weights.tensors if t.layer is not None and t.name.startswith("blk.")})
    by_name = {t.name: t for t in spec.weights.tensors}
    hf_names = dict(_QWEN2_HF)
    order: list[tuple[str, int]] = [("model.embed_tokens.weight", math.prod(by_name["token_embd.weight"].shape))] \
        if "token_embd.weight" in by_name else []
    for b in blocks:
        order += [(f"model.layers.{b}.{hf}", math.prod(by_name[f"blk.{b}.{g}"].shape)) for g, hf in _QWEN2_HF
                  if f"blk.{b}.{g}" in by_name]
    shards: list[list[str]] = [[]]
    size = 0
    for name, numel in order:
        if shards[-1] and size + 2 * numel > _HF_SHARD:  # BF16 checkpoints (norm and lm_head come last)
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += 2 * numel
    file_order = [n for shard in shards for n in sorted(shard)]
    new: dict[str, str] = {}
    for g in ("attn_v.weight", "ffn_down.weight", "ffn_gate.weight", "ffn_up.weight"):
        suffix = "." + hf_names[g]
        walked = [int(n.split(".")[2]) for n in file_order if n.endswith(suffix)]
        if sorted(walked) != blocks:
            return spec
        new.update({f"blk.{b}.{g}": by_name[f"blk.{blocks[i]}.{g}"].dtype for i, b in enumerate(walked)})
    if all(by_name[n].dtype == d for n, d in new.items()):
        return spec
    return _retyped(spec, lambda t: new.get(t.name, t.dtype),
                    "weights as in Ollama's 2024 qwen2.5 GGUF: llama-quantize (before llama.cpp PR #9935) counted "
                    "attn_v / ffn_down in the file's order, the converter's shard-by-shard, name-sorted one")


def _retyped(spec: ModelSpec, type_of, label: str) -> ModelSpec:
    """The spec with each tensor at the type `type_of` names, sized as ggml sizes that type, and `label` said."""
    ts = tuple(t if (d := type_of(t)) == t.dtype else replace(t, dtype=d, nbytes=ggml.tensor_bytes(d, t.shape))
               for t in spec.weights.tensors)
    return replace(spec, weights=replace(spec.weights, tensors=ts, exact=False),
                   labels=spec.labels + (label,))


# ---------------------------------------------------------------------------------------------------------
# The model as Ollama's GGUF reader sees it (fs/ggml/ggml.go KV accessors, Tensors().GroupLayers())


@dataclass(frozen=True)
class GgufView:
    arch: str
    block_count: int
    embedding: int
    vocab: int
    heads: tuple[int, ...]  # KV.HeadCount(): per layer, 0 where the GGUF array has 0
    heads_kv: tuple[int, ...]  # KV.HeadCountKV()
    key_length: int  # KV.EmbeddingHeadCountK(): attention.key_length, else embedding / head_count_min
    value_length: int
    blk_sizes: tuple[int, ...]  # GroupLayers()["blk.N"].Size()
    groups: dict[str, int]  # other groups by name ("output_norm", "output", "token_embd", ...)
    sliding_window: int = 0
    ssm: tuple[int, int, int, int] = (0, 0, 0, 0)  # d_conv, d_inner, d_state, n_group
    ffn_gate_exps_bytes: int = 0  # blk.0.ffn_gate_exps.weight (Mixtral 8x22B branch of the llama formula)
    feed_forward_length: int = 0
    qkv_bias_len: int = 0  # blk.0.attn_qkv.bias (chatglm branch)
    is_embedding: bool = False  # <arch>.pooling_type present
    # mllama.attention.cross_attention_layers (the layers of LayerSpec.cross_attention)
    cross_layers: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()

    @property
    def heads_max(self) -> int:
        return max(self.heads, default=1) or 1

    @property
    def heads_min(self) -> int:
        return min(self.heads, default=1)

    @property
    def heads_kv_max(self) -> int:
        return max(self.heads_kv, default=1) or 1

    @property
    def heads_kv_min(self) -> int:
        return min(self.heads_kv, default=1)

    @property
    def embedding_heads(self) -> int:
        """KV.EmbeddingHeadCountMax(): embedding / HeadCountMin() (0 when the minimum is 0)."""
        return self.embedding // self.heads_min if self.heads_min else 0

    @property
    def output_bytes(self) -> int:
        """memoryLayerOutput: output_norm + output, or token_embd when the output is tied (llm/memory.go)."""
        out = self.groups.get("output_norm", 0)
        return out + (self.groups["output"] if "output" in self.groups else self.groups.get("token_embd", 0))


_VIEWS = ByObject[GgufView](16)


def gguf_view(spec: ModelSpec) -> GgufView:
    """_gguf_view, memoised by the spec object (a plan reads one model's view for every estimate)."""
    return _VIEWS.get(spec, None, lambda: _gguf_view(spec))


GEMMA3_EMBED_LABEL = "architecture as Ollama's library GGUF names it: gemma3 with pooling (llama.cpp: gemma-embedding)"


def gemma3_embed(spec: ModelSpec) -> bool:
    """EmbeddingGemma as Ollama runs it: a gemma3 GGUF with gemma3.pooling_type, which model/model.go New (v0.11.10+)
    builds as gemma3_embed (model/models/gemma3/embed.go) rather than the causal decoder."""
    return spec.architecture == "gemma3" and GEMMA3_EMBED_LABEL in spec.labels


def _pooled_decoder(spec: ModelSpec) -> bool:
    """A decoder checkpoint Ollama serves as an embedding model: its GGUF carries <arch>.pooling_type, which
    llama.cpp's converter writes from a sentence-transformers Pooling module (Qwen3-Embedding, GTE-Qwen2, the
    Qwen3 rerankers), and which makes the model an embedding one for Ollama (server/images.go Capabilities:
    CapabilityEmbedding; llm/llama_server.go isEmbedding, v0.30.0+: --embedding, DefaultEmbeddingNumBatch). The
    ModelSpec carries no pooling: the catalog's embedding family marks those checkpoints."""
    src = spec.source or ""
    if not src.startswith("catalog: "):
        return False
    from ...model import catalog  # lazy: only catalog models reach here

    entry = catalog.lookup(src[len("catalog: "):].split(" ", 1)[0])
    return bool(entry) and entry.family == "embedding"


def _gguf_view(spec: ModelSpec) -> GgufView:
    """The KV accessors GraphSize reads, filled from the ModelSpec the way the GGUF would carry them."""
    n = spec.n_layers
    labels: list[str] = []
    att = [layer.attention for layer in spec.layers if layer.attention is not None]
    # Per-layer head counts: hybrids whose GGUF stores head_count_kv as an array with zeros for the recurrent
    # layers (granitehybrid, jamba, lfm2, nemotron_h: llama.cpp's KV_ZERO_HYBRIDS) show 0 there; the interval
    # hybrids (qwen3next, qwen35) store scalars, so Ollama sees attention heads on every layer.
    scalar_heads = spec.architecture in INTERVAL_HYBRIDS or not att
    h_scalar = max((a.n_heads for a in att), default=0)
    hkv_scalar = max((cache_kv_heads(a) for a in att), default=0)
    heads, heads_kv = [], []
    is_embedding = spec.architecture in NO_CACHE_ARCHS or _pooled_decoder(spec)
    for layer in spec.layers:
        a = layer.attention
        if a is not None:
            heads.append(a.n_heads)
            heads_kv.append(cache_kv_heads(a))
        elif scalar_heads or layer.kind is LayerKind.NONE and is_embedding:
            heads.append(h_scalar)
            heads_kv.append(hkv_scalar)
        else:
            heads.append(0)
            heads_kv.append(0)
    # MLA-converted GGUFs store key_length = kv_lora_rank + rope and head_count_kv = 1 (llama.cpp's cache layout)
    k_len = max((cache_head_k(a) for a in att), default=0)
    v_len = max((cache_head_v(a) for a in att), default=0)
    if not att:
        # encoder-only models carry no attention spec here: read K and V widths off the weights, as the GGUF's
        # head_count/head_count_kv and key_length would give them (BERT: heads = kv heads, K = V = n_embd)
        kv_w = _kv_width_from_tensors(spec)
        h = 1
        heads, heads_kv = [h] * n, [h] * n
        k_len = v_len = kv_w // 2
        if is_embedding:
            labels.append("Ollama estimates a KV cache for this embedding model from its attention weights "
                          "(llama.cpp allocates none since PR #13108, May 2025; runners vendoring an older "
                          "llama.cpp do allocate it, as the runner figures show)")
    if spec.architecture in _NO_HEAD_COUNT_KV and att:
        # BERT-family GGUFs carry no head_count_kv nor key_length (convert_hf_to_gguf.py BertModel writes only
        # what the HF config has: no num_key_value_heads): fs/ggml KV.HeadCountKV() defaults to 1 and
        # EmbeddingHeadCountK() to embedding / head_count, so Ollama charges one head of K and V per token and
        # a graph of head_count x that KV / 6 (ollama/ollama#6448 nomic-embed-text 1.0 GiB at 0.3.6;
        # #12938 bge-m3 "kv cache" 48.0 MiB at 8192 tokens, 0.13)
        heads_kv = [1 if h else 0 for h in heads]
        k_len = v_len = spec.n_embd // max(h_scalar, 1)
        labels.append("Ollama estimates a KV cache for this embedding model (one head of K and V per layer, its "
                      "GGUF having no head_count_kv) that llama.cpp does not allocate (PR #13108, May 2025)")
    blk = [0] * n
    groups: dict[str, int] = {}
    for t in spec.weights.tensors:
        if t.layer is not None and t.layer < n and t.name.startswith("blk."):
            blk[t.layer] += t.nbytes
        elif t.layer is None:
            key = t.name.split(".")[0]
            groups[key] = groups.get(key, 0) + t.nbytes
    window = max((a.window or 0 for a in att if a.window), default=0)
    st = next((layer.recurrent for layer in spec.layers if layer.recurrent is not None), None)
    ssm = (st.d_conv, st.d_inner, st.d_state, st.n_group) if st is not None else (0, 0, 0, 0)
    by_name = {t.name: t for t in spec.weights.tensors if t.name.startswith("blk.0.")}
    exps = by_name.get("blk.0.ffn_gate_exps.weight")
    ffn0 = spec.layers[0].ffn if spec.layers else None
    qkv_bias = by_name.get("blk.0.attn_qkv.bias")
    arch = library_arch(spec)
    if arch == "glm4moelite":
        # convert_glm4moelite.go KV writes the per-head convention: head_count_kv = num_key_value_heads,
        # key_length = qk_nope + qk_rope, value_length = v_head_dim (the latent widths only as *_mla), which
        # fs/ggml's KV accessors read (handle_glm4moelite: "the older convention of writing PER-HEAD key/value dims")
        heads_kv = [a.n_kv_heads if a is not None else 0 for a in (la.attention for la in spec.layers)]
        k_len = max((a.qk_nope_head_dim + a.qk_rope_head_dim for a in att), default=0)
        v_len = max((a.v_head_dim for a in att), default=0)
    return GgufView(
        arch=arch, block_count=n, embedding=spec.n_embd, vocab=spec.n_vocab,
        heads=tuple(heads), heads_kv=tuple(heads_kv), key_length=k_len, value_length=v_len,
        blk_sizes=tuple(blk), groups=groups, sliding_window=window, ssm=ssm,
        ffn_gate_exps_bytes=exps.nbytes if exps is not None else 0,
        feed_forward_length=(ffn0.n_ff_expert or ffn0.n_ff) if ffn0 else 0,
        qkv_bias_len=qkv_bias.shape[0] if qkv_bias is not None else 0,
        is_embedding=is_embedding, cross_layers=tuple(la.index for la in spec.layers if la.cross_attention),
        labels=tuple(labels),
    )


def _kv_width_from_tensors(spec: ModelSpec) -> int:
    for t in spec.weights.tensors:
        if t.name == "blk.0.attn_qkv.weight" and len(t.shape) == 2:
            return t.shape[1] * 2 // 3
    k = next((t for t in spec.weights.tensors if t.name == "blk.0.attn_k.weight"), None)
    v = next((t for t in spec.weights.tensors if t.name == "blk.0.attn_v.weight"), None)
    if k is not None and v is not None and len(k.shape) == 2 and len(v.shape) == 2:
        return k.shape[1] + v.shape[1]
    return 2 * spec.n_embd


def per_layer_weights(g: GgufView) -> list[int]:
    """Ollama's layer list: blk.0..blk.N-1, then the output layer (output_norm + output, or token_embd)."""
    return [*g.blk_sizes, g.output_bytes]


MATRIX_ROW_PADDING = 512  # ggml-cuda/common.cuh: the last row of a quantized matrix padded to a multiple of this
CUDA_ALIGNMENT = 128  # ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment (CUDA_ALIGNMENT in patch 0022)


def _cuda_tensor_bytes(dtype: str, shape: tuple[int, ...], nbytes: int) -> int:
    """What ml/backend/ggml New counts for a tensor created in a ggml-cuda buffer type (CUDA and ROCm alike):
    pad(ggml_backend_buft_get_alloc_size, alignment). ggml_backend_cuda_buffer_type_get_alloc_size adds, to a
    quantized tensor whose rows are not a multiple of MATRIX_ROW_PADDING, the bytes of the missing row elements."""
    t = ggml.type_by_name(dtype)
    if t.block_size > 1 and shape and shape[0] % MATRIX_ROW_PADDING:
        nbytes += ggml.tensor_bytes(t, (MATRIX_ROW_PADDING - shape[0] % MATRIX_ROW_PADDING,))
    return -(-nbytes // CUDA_ALIGNMENT) * CUDA_ALIGNMENT


def _runner_tensors(spec: ModelSpec):
    """(name, layer, dtype, shape, bytes) of each tensor as the runner creates it. Ollama's library gpt-oss GGUF is
    converted from the original checkpoint (convert_gptoss.go, the "attn.qkv" and "mlp.mlp1_" replacements of its
    Replacements), so its experts' gate and up are one ffn_gate_up_exps tensor (and the attention one attn_qkv, whose
    16-bit rows no padding touches): 13 tensors a block (ollama/ollama#12147 num_tensors=315 = 24 x 13 + 3), where
    the computed inventory lists gate and up apart. convert_gemma4.go writes gemma4's experts so too (Replacements:
    experts.gate_up_proj -> ffn_gate_up_exps.weight): one tensor, one row padding a block, 256 B under the two
    tensors' on CUDA (ollama/ollama#15388's gemma4:26b blocks)."""
    fused = spec.architecture in ("gpt-oss", "gptoss", "gemma4") and not spec.weights.exact
    up = {}
    for t in spec.weights.tensors:
        if fused and t.name.endswith(".ffn_up_exps.weight") and len(t.shape) == 3:
            up[t.layer] = t
    for t in spec.weights.tensors:
        if fused and t.layer in up and t.name.endswith(".ffn_up_exps.weight"):
            continue
        if fused and t.layer in up and t.name.endswith(".ffn_gate_exps.weight"):
            u = up[t.layer]
            yield (t.name.replace("gate_exps", "gate_up_exps"), t.layer, t.dtype,
                   (t.shape[0], t.shape[1] + u.shape[1], *t.shape[2:]), t.nbytes + u.nbytes)
            continue
        yield t.name, t.layer, t.dtype, tuple(t.shape), t.nbytes


def runner_layer_weights(spec: ModelSpec, g: GgufView, cuda: bool = False, f32_exps_bias: bool = True) -> list[int]:
    """per_layer_weights as the Ollama engine's runner allocates them, the sizes its BackendMemory reports: from
    1a19df1f3 (v0.11.5, the ggml update that brought add_id) ml/backend/ggml/ggml.go New creates a BF16
    `*_exps.bias` tensor as F32 ("transform _exps.bias from bf16 to fp32; add_ids only supports fp32 tensors") and
    sizes it so (ggml_backend_buft_get_alloc_size of the F32 tensor), where the GGUF file, which the legacy
    estimate (fs/ggml GroupLayers) reads, keeps it BF16. Ollama's library gpt-oss blobs carry BF16 expert biases:
    gpt-oss:120b on ROCm at v0.12.6 reports required.ROCm0.Weights 1751096064 B a block (ollama/ollama#12752),
    the file's 1748883968 + 3 x 2880 x 128 x 2 B (f32_exps_bias; the releases before keep the file's BF16).

    cuda: the blocks as created in a ggml-cuda buffer type (a CUDA or ROCm GPU's), each tensor
    pad(get_alloc_size, 128) with the quantized rows' MATRIX_ROW_PADDING (_cuda_tensor_bytes): gpt-oss's two MXFP4
    expert tensors (rows of 2880: 102 B more each, padded to 128) make #12752's block 1751096064 B, 256 B over the
    F32 biases' 1751095808."""
    w = per_layer_weights(g)
    for t in spec.weights.tensors:
        if (f32_exps_bias and t.layer is not None and 0 <= t.layer < len(w) - 1 and t.dtype.lower() == "bf16"
                and t.name.endswith("_exps.bias")):
            w[t.layer] += t.nbytes  # F32 is twice the BF16 bytes
    # ml/backend/ggml/ggml.go New (v0.6.0+): a model-level rope_freqs / rope_factors_long / rope_factors_short
    # tensor "should be repeated per layer": created once in every block as blk.N.<name>, in that block's buffer
    # type (gemma4's global rope_freqs.weight, 256 F32, that convert_gemma4.go writes once, in each of 30 blocks)
    for name, _, dtype, shape, nbytes in _runner_tensors(spec):
        if not name.startswith("blk.") and {"rope_freqs", "rope_factors_long", "rope_factors_short"} & set(
                name.split(".")):
            size = _cuda_tensor_bytes(dtype, shape, nbytes) if cuda else nbytes
            for i in range(len(w) - 1):
                w[i] += size
    # the tensors ml/backend/ggml/ggml.go New places by name (v0.9.3-v0.2x: 73b642e6f put the per-layer
    # embeddings on the output layer): the towers' and the per-layer embeddings' (placement(), below)
    for name, layer, dtype, shape, nbytes in _runner_tensors(spec):
        if layer is None and _placed_by_name(name):
            at = placement(name, len(w) - 1)
            if at >= 0:
                w[at] += _cuda_tensor_bytes(dtype, shape, nbytes) if cuda else nbytes
    if cuda:
        # the output layer: output_norm and output, or token_embd created again as output.weight when tied
        out = ("output.", "output_norm.") if "output" in g.groups else ("output_norm.", "token_embd.")
        for name, layer, dtype, shape, nbytes in _runner_tensors(spec):
            if layer is not None and 0 <= layer < len(w) - 1:
                w[layer] += _cuda_tensor_bytes(dtype, shape, nbytes) - nbytes
            elif layer is None and name.startswith(out):
                w[-1] += _cuda_tensor_bytes(dtype, shape, nbytes) - nbytes
    return w


def runner_largest_tensors(spec: ModelSpec, g: GgufView) -> list[int]:
    """The largest tensor each layer's device holds (the blocks, then the output layer), as runner_layer_weights
    places them: ggml_backend_alloc_ctx_tensors_from_buft (ggml-alloc.c) packs a context's tensors into buffers
    of at most the buffer type's max size, but a tensor over it gets a buffer of its own, which the backend must
    create whole. gemma4:e4b's per_layer_token_embd (BF16, 5376 MiB) rides on the output layer."""
    n = g.block_count
    out = [0] * (n + 1)
    tied = "output" not in g.groups
    for name, layer, _, _, nbytes in _runner_tensors(spec):
        if layer is not None and 0 <= layer < n:
            at = layer
        elif layer is None and _placed_by_name(name):
            at = placement(name, n)
        elif layer is None and (name.startswith(("output.", "output_norm.")) or tied and name.startswith("token_embd.")):
            at = n  # the output layer: output, or token_embd created again as output.weight when tied
        else:
            continue
        if at >= 0:
            out[at] = max(out[at], nbytes)
    return out


# ml/backend/ggml/ggml.go New (v0.9.3+, 73b642e6f "add new gemma model"; to v0.2x, the Ollama engine's last): the
# tensor switch. Names whose dot-separated parts hold one of these go to the input buffer type (the CPU's) ...
_INPUT_PARTS = {"position_embd", "token_embd", "token_norm_embd", "token_types"}
# ... or to the output layer's device, with the vision tower's v.* / mm.* / s.*
_OUTPUT_PARTS = {"cls", "output", "output_norm", "altup_proj", "altup_unembd_proj", "per_layer_token_embd",
                 "per_layer_model_proj", "per_layer_proj_norm"}
_PER_LAYER_GROUPS = {"per_layer_token_embd", "per_layer_model_proj", "per_layer_proj_norm", "altup_proj",
                     "altup_unembd_proj"}


def _placed_by_name(name: str) -> bool:
    """A tensor outside the blocks that runner_layer_weights / runner_input_weights place by placement(): the towers
    carried in the inventory and the per-layer-embedding groups (the rest keep per_layer_weights' groups)."""
    return name.startswith(_TOWER_PREFIXES) or name.split(".")[0] in _PER_LAYER_GROUPS


def placement(name: str, n_blocks: int) -> int:
    """Where ml/backend/ggml/ggml.go New (v0.9.3-v0.2x) creates a tensor: -1 the input buffer type (the CPU),
    n_blocks the output layer, else the block whose index is the first run of digits in the name
    (strings.FieldsFunc on non-digits), the CPU when there is none. So the audio tower's a.blk.N.* ride on text
    block N's device and a.conv1d.* on block 1's (the "1" of "conv1d"), a.pre_encode.out.weight on the CPU; the
    vision tower's v.position_embd.weight is an input tensor, the rest of v.* and mm.* the output layer's."""
    parts = set(name.split("."))
    if parts & _INPUT_PARTS:
        return -1
    if parts & _OUTPUT_PARTS or name.startswith(("v.", "mm.", "s.")):
        return n_blocks
    m = re.search(r"\d+", name)
    if m is None or int(m.group()) >= n_blocks:
        return -1
    return int(m.group())


def runner_input_weights(spec: ModelSpec) -> int:
    """The bytes of the inventory's tower tensors that placement() sends to the input buffer type (the CPU)."""
    n = spec.n_layers
    return sum(nbytes for name, layer, _, _, nbytes in _runner_tensors(spec)
               if layer is None and name.startswith(_TOWER_PREFIXES) and placement(name, n) == -1)
