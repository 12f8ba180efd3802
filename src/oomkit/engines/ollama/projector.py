"""Ollama's vision projector estimate: the `projector.weights` and `projector.graph` of its msg=offload line.

fs/ggml/ggml.go VisionGraphSize (v0.6.0+, the models whose vision encoder ships inside the model GGUF: gemma3,
mistral3, mllama, qwen25vl): weights = every `v.*` tensor; graph by architecture:

    gemma3, mistral3: 4 x (image_size^2 x channels + embedding_length x patch_size + patches^2 x heads)
    qwen25vl:         4 x (2 x max_pixels x channels + n x channels x patch^2 + n^2 x heads + embedding_length x n),
                      n = max_pixels / patch^2, max_pixels = 28 x 28 x 1280 (v0.7.0-v0.12.10)
    mllama:           4 x (8 + image_size^2 x channels x tiles + embedding x patches x tiles
                           + 9 x embedding x padded x tiles + (padded x tiles)^2 x heads)

with patches = (image_size / patch_size)^2 (+1 with a class embedding). llm/memory.go estimateGPULayers puts both on
the first GPU (gpuZeroOverhead = projectorWeights + projectorGraph) before v0.7.1, with the output layer
(memoryLastLayer, d75557747) from then on. The encoder's dimensions come from the
model's vision_config (the catalog's verbatim config.json); the weights are the "v" tensors of model/towers.py's
tower as Ollama's converter writes them: the encoder's matrices F16, its norms and biases F32, and not the
multimodal projector (mm.*) -- worked out for SigLIP (gemma3) and Pixtral (mistral3); other families count the
whole tower in F16.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...model.spec import ModelSpec
from ...quant.gguf_recipes import use_more_bits
from .graph import (
    QWEN25VL_MAX_PIXELS,
    QWEN25VL_MAX_PIXELS_1MP,
    gemma4_reserve_side,
    gemma4_vision_graph_bytes,
    pixtral_host_weights_graph_bytes,
    pixtral_reserve_side,
    pixtral_vision_graph_bytes,
    qwen25vl_reserve_grid,
    qwen25vl_rotate_half_vision_graph_bytes,
    qwen25vl_vision_graph_bytes,
    siglip_vision_graph_bytes,
)
from .weights import _quantized_in_spring_2025, publishers_gguf

# VisionGraphSize's architectures and the vision_config families they come from
_GRAPH_ARCHS = {"gemma3": "gemma3", "mistral3": "mistral3", "qwen25vl": "qwen25vl", "qwen2_5_vl": "qwen25vl",
                "mllama": "mllama"}
# convert/convert.go ConvertModel picks its converter by architectures[0], not model_type: Ministral 3 (2512)
# ships model_type "ministral3" (its text_config's) under Mistral3ForConditionalGeneration, which
# convert_mistral.go mistral3Model writes as general.architecture "mistral3" with its Pixtral encoder
# (ollama/ollama#13303, ministral-3:14b: "architecture=mistral3 ... num_tensors=585")
_CONVERTER_ARCHS = {"Mistral3ForConditionalGeneration": "mistral3"}


def ollama_arch(cfg: Mapping[str, Any] | None) -> str:
    """The architecture Ollama's converter writes for a config.json: its converter's name where architectures[0]
    picks one model_type does not say, else the model_type."""
    if not cfg:
        return ""
    archs = cfg.get("architectures")
    if isinstance(archs, list) and archs and str(archs[0]) in _CONVERTER_ARCHS:
        return _CONVERTER_ARCHS[str(archs[0])]
    return str(cfg.get("model_type", ""))


@dataclass(frozen=True)
class Projector:
    weights: int  # projector.weights as the msg=offload line prints it (the v.* group)
    graph: int
    source: str
    runner_weights: int = 0  # what the Ollama engine allocates: v.* and the multimodal projector mm.* (F16)
    # what the Ollama engine creates with the input tensors instead (ml/backend/ggml/ggml.go New: a tensor named
    # *.position_embd.* goes to the input buffer type, the CPU's: requiredMemory.InputWeights)
    input_weights: int = 0
    # runner_weights as created in a ggml-cuda buffer type, each tensor padded to its 128-byte alignment; 0 where
    # not worked out (runner_weights stands in)
    cuda_runner_weights: int = 0

    @property
    def allocated(self) -> int:
        return self.runner_weights or self.weights

    def allocated_on(self, cuda: bool) -> int:
        return self.cuda_runner_weights if cuda and self.cuda_runner_weights else self.allocated


def _catalog_config(spec: ModelSpec) -> Mapping[str, Any] | None:
    """The catalog's verbatim config.json of a catalog model ("catalog: <hf id> (...)" in its source)."""
    from ...model import catalog  # lazy: only vision models need the catalog here

    src = spec.source or ""
    if not src.startswith("catalog: "):
        return None
    entry = catalog.lookup(src[len("catalog: "):].split(" ", 1)[0])
    return entry.config if entry else None


def catalog_vision_config(spec: ModelSpec) -> Mapping[str, Any]:
    """The vision_config of a catalog model's verbatim config.json ({} where there is none)."""
    cfg = _catalog_config(spec)
    vc = cfg.get("vision_config") if cfg else None
    return vc if isinstance(vc, Mapping) else {}


def vision_graph(arch: str, vc: Mapping[str, Any]) -> int:
    """VisionGraphSize's graph term for one architecture (0 for those it does not size)."""
    kind = _GRAPH_ARCHS.get(arch)
    if kind is None:
        return 0
    image, patch = int(vc.get("image_size", 0)), int(vc.get("patch_size", 0))
    if not patch:
        return 0  # "unknown patch size for vision model"
    channels = int(vc.get("num_channels", 3))
    # Qwen2.5-VL's config says num_heads, mllama's attention_heads (MllamaVisionConfig)
    heads = int(vc.get("num_attention_heads", vc.get("num_heads", vc.get("attention_heads", 0))))
    embd = int(vc.get("hidden_size", 0))
    patches = (image // patch) ** 2
    if kind == "qwen25vl":
        # v0.7.0-v0.12.10 (0aa8b371d; gone with f560bd077): the image and its normalized copy, the patches, the
        # attention scores and the embeddings; convert_qwen25vl.go writes no vision.max_pixels, so the default
        max_pixels = 28 * 28 * 1280
        n = max_pixels // (patch * patch)
        return 4 * (2 * max_pixels * channels + n * channels * patch * patch + n * n * heads + embd * n)
    if kind == "mllama":
        tiles = int(vc.get("max_num_tiles", 4))
        patches += 1  # class_embd
        padded = patches + 8 - (patches % 8) % 8
        return 4 * (8 + image * image * channels * tiles + embd * patches * tiles + 9 * embd * padded * tiles
                    + padded * tiles * padded * tiles * heads)
    return 4 * (image * image * channels + embd * patch + patches * patches * heads)


def projector(spec: ModelSpec) -> Projector | None:
    """Ollama's projector figures for a model whose GGUF carries its vision encoder, or None. The architecture
    Ollama converts it as follows the config's model_type (Mistral Small 3.1 is `mistral3` to Ollama)."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers:
        return None
    cfg = _catalog_config(spec)
    if cfg is None and towers[0].family == "mllama_vision_model":
        cfg = towers[0].config  # a config.json read outside the catalog: the tower keeps it
    vc = cfg.get("vision_config") if cfg else None
    arch = ollama_arch(cfg)
    if arch == "gemma4" and isinstance(vc, Mapping) and towers[0].family == "gemma4_vision":
        return _gemma4_projector(vc, cfg)
    if arch not in _GRAPH_ARCHS:
        return None
    graph = vision_graph(arch, vc) if isinstance(vc, Mapping) else 0
    tower = towers[0]
    if tower.family == "mllama_vision_model" and isinstance(vc, Mapping):
        v_bytes, mm_bytes = _mllama_bytes(tower, vc)
        return Projector(v_bytes, graph, f"mllama vision encoder as Ollama's converter writes it ({tower.encoder_params:,} "
                                         "parameters: matrices F16, vectors and the tile embeddings F32)",
                         runner_weights=v_bytes + mm_bytes)
    # server/quantization.go newType (v0.7.0-v0.14.2) quantizes the tower's v.blk.N.attn_v.weight ("_v." excepted
    # from its v. rule): _go_attn_v_bytes types them in place of the converter's F16 (hidden x hidden). Pixtral
    # (mistral3) and Qwen2.5-VL (convert_qwen25vl.go splits attn.qkv into attn_q / attn_k / attn_v), whose
    # library tags that quantizer made
    attn_v_delta, attn_v_note = 0, ""
    if isinstance(vc, Mapping) and (tower.family, arch) in (("pixtral", "mistral3"), ("qwen2_5_vl", "qwen25vl"),
                                                            ("qwen2_5_vl", "qwen2_5_vl")):
        h = int(vc.get("hidden_size", 0))
        n = int(vc.get("num_hidden_layers", vc.get("depth", 0)))
        attn_v = _go_attn_v_bytes(spec, n, h)
        if h and sum(attn_v) != n * h * h * 2:
            attn_v_delta = sum(attn_v) - n * h * h * 2
            attn_v_note = f", its {n} attn_v as Ollama's Go quantizer types them ({sum(attn_v):,} B)"
    vectors = _vector_params(tower.family, vc) if isinstance(vc, Mapping) else None
    if vectors is None:
        return Projector(tower.nbytes(2) + attn_v_delta, graph,
                         f"{tower.family} tower in F16 ({tower.params:,} parameters){attn_v_note}")
    # VisionGraphSize sums the "v" layer group only: the encoder, its matrices F16 and its norms and biases F32
    # as Ollama's converter writes them; the multimodal projector (mm.*) is not in it
    weights = 2 * tower.encoder_params + 2 * vectors + attn_v_delta
    source = (f"{tower.family} encoder: {tower.encoder_params - vectors:,} F16 + {vectors:,} F32 parameters "
              f"(the v.* tensors){attn_v_note}")
    mm = 2 * (tower.params - tower.encoder_params)  # mm.* as the converter writes them: F16
    return Projector(weights, graph, source, runner_weights=weights + mm)


def llamacpp_mmproj_projector(spec: ModelSpec) -> Projector | None:
    """llm/memory.go projectorMemoryRequirements (v0.6.0-v0.6.x) of the mmproj GGUF beside a GGUF repo's gemma3 text
    file (a projector layer of the model, "application/vnd.ollama.image.projector"): weights = every tensor of the
    file, graph = 0 (its "clip" architecture has no formula there; VisionGraphSize is read only when both are 0).
    llama.cpp's gemma3 mmproj (examples/llava/gemma3_convert_encoder_to_gguf.py Gemma3VisionTower.add_tensor,
    --outtype f16, the mmproj-*-f16.gguf these repos ship): 1-D tensors and the ".embeddings." ones (patch_embd
    weight and bias, position_embd) F32, every other matrix F16, the multimodal projector's mm.input_projection
    among them. gemma-3-12b-it: 854,175,168 B, printed 814.6 MiB as ollama/ollama#9791's log does (a 626-tensor
    "Gemma 3 12b It" text GGUF, llama.cpp's conversion; "0 B" of projector graph). None for other models."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    vc = catalog_vision_config(spec)
    if not towers or towers[0].family != "siglip_vision_model" or ollama_arch(_catalog_config(spec)) != "gemma3":
        return None
    vectors = _vector_params(towers[0].family, vc)
    h, patch, image = int(vc.get("hidden_size", 0)), int(vc.get("patch_size", 0)), int(vc.get("image_size", 0))
    if vectors is None or not (h and patch and image):
        return None
    tower = towers[0]
    embeddings = (image // patch) ** 2 * h + 3 * patch * patch * h  # position_embd, patch_embd.weight: F32
    norm = h  # mm.soft_emb_norm.weight: 1-D, F32
    f32 = vectors + embeddings + norm
    weights = 2 * tower.params + 2 * f32
    return Projector(weights, 0, f"llama.cpp's gemma3 mmproj (F16): {tower.params - f32:,} F16 + {f32:,} F32 "
                                 "parameters, every tensor of the file (v.* and mm.*)", runner_weights=weights)


def _mllama_bytes(tower, vc: Mapping[str, Any]) -> tuple[int, int]:
    """The mllama vision tensors' bytes as Ollama writes them: (v.*, mm.*). convert/reader.go tensorBase.Kind: 1-D
    tensors F32, v.tile_position_embd.weight / v.pre_tile_position_embd.weight / v.post_tile_position_embd.weight
    "always F32", the other matrices F16; convert/convert_mllama.go Tensors writes the position gate twice
    (v.position_embd.gate and v.tile_position_embd.gate). The blob of ollama.com's llama3.2-vision projector
    (sha256-ece5e659, the --mmproj file of v0.4.0-v0.6.x) holds the same tensors (v.tile_position_embd.gate
    among them). mm.0 is the multi-modal projector: its weight F16, its bias F32."""
    h, ff = int(vc["hidden_size"]), int(vc["intermediate_size"])
    n, g = int(vc["num_hidden_layers"]), int(vc["num_global_layers"])
    tiles, ratios = int(vc["max_num_tiles"]), len(vc["supported_aspect_ratios"])
    patches = (int(vc["image_size"]) // int(vc["patch_size"])) ** 2 + 1
    tile_embd = (ratios + 1) * tiles * patches * h + 2 * (ratios + 1) * tiles * h  # the three "always F32" tables
    # class_embd, the position / tile / pre / post gates, layernorm_pre / post; per layer fc1 / fc2 biases and two
    # LayerNorms, the global layers' two gates
    vectors = h + 4 + 2 * 2 * h + (n + g) * (ff + h + 2 * 2 * h) + 2 * g
    f32 = tile_embd + vectors
    v_bytes = 2 * (tower.encoder_params + 1 - f32) + 4 * f32  # + 1: the duplicated gate
    bias = tower.projector_params // (int(vc["vision_output_dim"]) + 1)  # [vision_output_dim, text hidden] + bias
    mm_bytes = 2 * (tower.projector_params - bias) + 4 * bias
    return v_bytes, mm_bytes


def mmproj_projector(spec: ModelSpec) -> Projector | None:
    """llm/memory.go projectorMemoryRequirements (v0.4.0-v0.6.x): the --mmproj GGUF Ollama's llama runner loads
    beside the model (llama3.2-vision's projector blob): weights = every tensor of the file (v.* and mm.*), graph =
    its mllama formula (the one VisionGraphSize kept, vision_graph). mllama only: the runner's other --mmproj
    models (llava's CLIP) have no graph formula there and no tower read here."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers or towers[0].family != "mllama_vision_model":
        return None
    vc = catalog_vision_config(spec) or towers[0].config.get("vision_config")
    if not isinstance(vc, Mapping) or not vc:
        return None
    v_bytes, mm_bytes = _mllama_bytes(towers[0], vc)
    return Projector(v_bytes + mm_bytes, vision_graph("mllama", vc),
                     "the mllama projector GGUF (--mmproj): every tensor, matrices F16, vectors and the tile "
                     "embeddings F32")


def mllama_runner_scores(spec: ModelSpec) -> int:
    """The llama runner's mllama vision graph, at least (v0.4.0-v0.6.x, llama/mllama.cpp mllama_model_load reserves
    mllama_image_build_graph for a batch of one image on the vision backend): a global layer's KQ, computed over
    every tile's positions at once (the embeddings reshaped to num_tiles x (num_positions + num_padding_patches)
    rows, build_attention's ggml_mul_mat(K, Q) of n_head x P x P F32, scaled and soft-maxed in place). num_positions
    = (image_size / patch_size)^2 + 1 (class_embedding), padded to a multiple of 8. The rest of the graph (Q, K, V,
    the MLP) is not counted. 0 where the config is not read."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers or towers[0].family != "mllama_vision_model":
        return 0
    vc = catalog_vision_config(spec) or towers[0].config.get("vision_config")
    if not isinstance(vc, Mapping) or not vc.get("patch_size"):
        return 0
    positions = (int(vc["image_size"]) // int(vc["patch_size"])) ** 2 + 1
    padded = positions + (8 - positions % 8) % 8
    P = int(vc.get("max_num_tiles", 4)) * padded
    heads = int(vc.get("attention_heads", vc.get("num_attention_heads", 0)))
    return 4 * heads * P * P


def _gemma4_tensors(vc: Mapping[str, Any], text_hidden: int) -> list[tuple[str, int, int]]:
    """(name, elements, bytes per element) of the gemma4 vision tensors as Ollama's converter writes them
    (convert/convert_gemma4.go Tensors, convert/reader.go tensorBase.Kind): matrices F16 (v.patch_embd forced F16
    for im2col), 1-D tensors and scalars F32, v.position_embd.weight F32 [h, position_embedding_size, 2]; the
    shapes of transformers' Gemma4VisionModel and Gemma4MultimodalEmbedder as model/towers.py _gemma4 counts them."""
    h, ff, n = int(vc["hidden_size"]), int(vc["intermediate_size"]), int(vc["num_hidden_layers"])
    heads, hd = int(vc["num_attention_heads"]), int(vc["head_dim"])
    kv = int(vc.get("num_key_value_heads", heads))
    p, pos = int(vc["patch_size"]), int(vc["position_embedding_size"])
    out = [("v.patch_embd.weight", 3 * p * p * h, 2), ("v.position_embd.weight", 2 * pos * h, 4)]
    for i in range(n):
        b = f"v.blk.{i}."
        out += [(b + "attn_q.weight", h * heads * hd, 2), (b + "attn_k.weight", h * kv * hd, 2),
                (b + "attn_v.weight", h * kv * hd, 2), (b + "attn_out.weight", heads * hd * h, 2),
                (b + "attn_q_norm.weight", hd, 4), (b + "attn_k_norm.weight", hd, 4),
                (b + "ffn_gate.weight", h * ff, 2), (b + "ffn_up.weight", h * ff, 2), (b + "ffn_down.weight", ff * h, 2)]
        out += [(b + norm + ".weight", h, 4) for norm in ("ln1", "attn_post_norm", "ln2", "ffn_post_norm")]
        if vc.get("use_clipped_linears"):
            out += [(f"{b}{lin}.{m}", 1, 4) for lin in ("attn_q", "attn_k", "attn_v", "attn_out", "ffn_gate",
                                                        "ffn_up", "ffn_down")
                    for m in ("input_min", "input_max", "output_min", "output_max")]
    if vc.get("standardize"):
        out += [("v.std_bias", h, 4), ("v.std_scale", h, 4)]
    out.append(("mm.input_projection.weight", h * text_hidden, 2))
    return out


def _gemma4_projector(vc: Mapping[str, Any], cfg: Mapping[str, Any]) -> Projector | None:
    """The gemma4 vision encoder as the Ollama engine allocates it (v0.20.0+): ml/backend/ggml/ggml.go New puts
    v.position_embd.weight with the input tensors ("position_embd") and every other v.* / mm.* tensor on the
    output layer's device, each tensor pad(get_alloc_size, alignment) (128 B in a ggml-cuda buffer type, 32 on the
    CPU). ollama/ollama#15388 (gemma4:26b on an L40, v0.20.x, OLLAMA_DEBUG): required.InputWeights = the Q6_K
    token_embd + 94371840 B (F32 [1152, 10240, 2]) and the output layer = output_norm + the tied output + 1098669312
    B, to the byte. No VisionGraphSize term: the engine sizes the graph by reserving it (graph 0 here)."""
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), Mapping) else cfg
    try:
        tensors = _gemma4_tensors(vc, int(tc["hidden_size"]))
    except (KeyError, TypeError, ValueError):
        return None
    def pad(b: int, a: int) -> int:
        return -(-b // a) * a
    inp = sum(k * e for name, k, e in tensors if ".position_embd." in name)
    rest = [(k * e) for name, k, e in tensors if ".position_embd." not in name]
    v = sum(k * e for name, k, e in tensors if name.startswith("v.") and ".position_embd." not in name)
    return Projector(v + inp, 0, f"gemma4_vision encoder as Ollama's converter writes it ({len(tensors)} tensors: "
                                 "matrices F16, vectors and v.position_embd F32)",
                     runner_weights=sum(pad(b, 32) for b in rest), input_weights=pad(inp, 32),
                     cuda_runner_weights=sum(pad(b, 128) for b in rest))


def _vector_params(family: str, vc: Mapping[str, Any]) -> int | None:
    """The encoder's 1-D parameters (norms, biases), which the GGUF keeps in F32; None for a family not worked
    out (its whole tower is then counted in F16). Checked against the printed projector.weights: gemma3's SigLIP
    795.9 MiB (ollama/ollama#10765, #12000, #11819), mistral3's Pixtral 769.3 MiB (#10417, #10553)."""
    h, layers = int(vc.get("hidden_size", 0)), int(vc.get("num_hidden_layers", 0))
    if family == "siglip_vision_model":
        # per layer: 2 LayerNorms (weight + bias), q/k/v/out biases, fc1 and fc2 biases; then the post
        # LayerNorm and the patch embedding's bias
        inter = int(vc.get("intermediate_size", 0))
        return layers * (2 * 2 * h + 4 * h + inter + h) + 2 * h + h
    if family == "pixtral":
        # RMSNorms only (attention_norm, ffn_norm per layer; ln_pre), no biases
        return layers * 2 * h + h
    return None


def own_vision_graph(spec: ModelSpec, on_gpu: bool, flash_attention: bool = True,
                     rotate_half: bool = False) -> int | None:
    """The Ollama engine's own reserve of its Qwen2.5-VL encoder (v0.13.4+, graph.py qwen25vl_vision_graph_bytes
    on the 2048 x 2048 reserve image at the 2 << 20 pixel default), on the GPU (the inputs copied into its buffer)
    or on the CPU; None for other models. rotate_half: the v0.13.0-v0.13.3 encoder (graph.py
    qwen25vl_rotate_half_vision_graph_bytes) on the same image at that release's 28 x 28 x 1280 pixel default
    (980 x 980: 70 x 70 patches).
    gemma4 (v0.20.0+): graph.py gemma4_vision_graph_bytes on the reserve image after smartResize (768 x 768 for
    patch 16, pooling 3), with flash attention only (None without: its n_head x patches^2 scores not replayed)."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    cfg = _catalog_config(spec) if towers else None
    vc = cfg.get("vision_config") if cfg else None
    if isinstance(vc, Mapping) and cfg.get("model_type") == "gemma4" and towers[0].family == "gemma4_vision":
        if not flash_attention:
            return None
        tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), Mapping) else cfg
        try:
            patch, merge = int(vc.get("patch_size", 16)), int(vc.get("pooling_kernel_size", 3))
            return gemma4_vision_graph_bytes(gemma4_reserve_side(patch, merge), patch, int(vc["hidden_size"]),
                                             int(vc["num_attention_heads"]), int(vc["intermediate_size"]),
                                             int(vc["num_hidden_layers"]), merge, int(tc["hidden_size"]), on_gpu,
                                             alignment=128 if on_gpu else 32)
        except (KeyError, TypeError, ValueError):
            return None
    if not isinstance(vc, Mapping) or _GRAPH_ARCHS.get(str(cfg.get("model_type", ""))) != "qwen25vl":
        return None
    patch, merge = int(vc.get("patch_size", 14)), int(vc.get("spatial_merge_size", 2))
    gh, gw = qwen25vl_reserve_grid(QWEN25VL_MAX_PIXELS_1MP if rotate_half else QWEN25VL_MAX_PIXELS, patch, merge)
    full = tuple(int(i) for i in vc.get("fullatt_block_indexes", (7, 15, 23, 31)))
    if rotate_half:
        return qwen25vl_rotate_half_vision_graph_bytes(gh, gw, int(vc["hidden_size"]), int(vc.get("num_heads", 16)),
                                                       int(vc["intermediate_size"]), int(vc["out_hidden_size"]),
                                                       int(vc["depth"]), full, on_gpu, merge,
                                                       alignment=128 if on_gpu else 32)
    return qwen25vl_vision_graph_bytes(gh, gw, int(vc["hidden_size"]), int(vc.get("num_heads", 16)),
                                       int(vc["intermediate_size"]), int(vc["out_hidden_size"]), int(vc["depth"]),
                                       full, on_gpu, alignment=128 if on_gpu else 32)  # CUDA's, the CPU's TENSOR_ALIGNMENT


def reserve_image_tokens(spec: ModelSpec, rotate_half: bool) -> int | None:
    """The text tokens the reserve image becomes in Ollama's Qwen2.5-VL (None for other models): tokensPerGrid,
    its grid's patches / merge^2 (model/models/qwen25vl model.go PostTokenize: the image token with SameBatch =
    tokensPerGrid, then tokensPerGrid - 1 placeholders and the vision end token), 1225 for the 70 x 70 patches
    of the 28 x 28 x 1280 pixel default (rotate_half: v0.7.0-v0.13.3), 2601 for 102 x 102 at 2 << 20 (v0.13.4+)."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    cfg = _catalog_config(spec) if towers else None
    vc = cfg.get("vision_config") if cfg else None
    if not isinstance(vc, Mapping) or _GRAPH_ARCHS.get(str(cfg.get("model_type", ""))) != "qwen25vl":
        return None
    patch, merge = int(vc.get("patch_size", 14)), int(vc.get("spatial_merge_size", 2))
    gh, gw = qwen25vl_reserve_grid(QWEN25VL_MAX_PIXELS_1MP if rotate_half else QWEN25VL_MAX_PIXELS, patch, merge)
    return gh * gw // (merge * merge)


def _go_attn_v_bytes(spec: ModelSpec, n_vision: int, hidden: int) -> tuple[int, ...]:
    """Each vision block's v.blk.N.attn_v.weight (hidden x hidden) in bytes as Ollama's Go quantizer types it
    (server/quantization.go, v0.7.0-v0.14.2, which made the ministral-3 tags of December 2025; v0.14.3's newType
    skips every v. name): newType excepts "_v." from its v. rule, so the tower's attn_v is quantized,
    and getTensorNewType's Q4_K_M counter iAttnV runs over the file's order (fs/ggml WriteGGUF: blk.N by block,
    then the other names sorted, v.blk.0, v.blk.1, v.blk.10, ...): Q6_K where useMoreBits(iAttnV, nAttnV), Q4_K
    otherwise. Q8_0 and F16 files keep their type; other formats are taken as F16, as are the tags llama.cpp's
    quantizer made (v0.6.2-v0.6.8, weights.py _quantized_in_spring_2025), whose "v." rule skipped attn_v, and a
    Hugging Face GGUF repo's file (weights.py publishers_gguf), whose tower is its F16 mmproj, never quantized."""

    n_text = sum(1 for t in spec.weights.tensors if t.name.startswith("blk.") and "attn_v.weight" in t.name) \
        or spec.n_layers
    fmt, n, elems = spec.weights.format.upper(), n_text + n_vision, hidden * hidden
    if _quantized_in_spring_2025(spec) or publishers_gguf(spec):
        fmt = "F16"
    by_block = {}
    for p, b in enumerate(sorted(range(n_vision), key=str)):
        i = n_text + p
        if fmt == "Q4_K_M":
            six = use_more_bits(i, n)
            if hidden % 256:  # getTensorNewType's fallback for rows not whole K-blocks: Q6_K -> Q8_0, Q4_K -> Q5_0
                by_block[b] = elems // 32 * (34 if six else 22)
            else:
                by_block[b] = elems // 256 * (210 if six else 144)
        elif fmt == "Q8_0":
            by_block[b] = elems // 32 * 34
        else:
            by_block[b] = elems * 2
    return tuple(by_block[b] for b in range(n_vision))


def own_pixtral_graph(spec: ModelSpec, on_gpu: bool, flash_attention: bool = False,
                      weights_on_host: bool = False) -> int | None:
    """The Ollama engine's own reserve of the Pixtral encoder of a mistral3 GGUF (Mistral Small 3.x, Ministral 3:
    graph.py pixtral_vision_graph_bytes on the 2048 x 2048 reserve image; flash_attention: v0.13.2+'s flash branch),
    on a GPU (the inputs copied into its buffer) or on the CPU; None for other models. weights_on_host (on a GPU):
    the output layer, and with it the tower (ml/backend/ggml New), left on the CPU, its weights copied into the
    GPU's buffer split by split (graph.py pixtral_host_weights_graph_bytes). ollama/ollama#13303 and #13312
    (v0.13.1, ministral-3:14b and :3b, the scores by hand, the output layer off the GPU): ggml_gallocr_reserve_n
    failed on a CUDA0 buffer of 9668469760 B, this replay's figure with weights_on_host; with the tower on the GPU
    9646586240 (VisionGraphSize 9398756544, -2.8%)."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    cfg = _catalog_config(spec) if towers else None
    vc = cfg.get("vision_config") if cfg else None
    if not isinstance(vc, Mapping) or ollama_arch(cfg) != "mistral3" or towers[0].family != "pixtral":
        return None
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), Mapping) else {}
    try:
        patch, hidden = int(vc.get("patch_size", 14)), int(vc["hidden_size"])
        if weights_on_host and on_gpu:
            n_vision = int(vc["num_hidden_layers"])
            return pixtral_host_weights_graph_bytes(
                pixtral_reserve_side(int(vc.get("image_size", 1540)), patch), patch, hidden,
                int(vc.get("num_attention_heads", 16)), int(vc["intermediate_size"]), n_vision,
                int(cfg.get("spatial_merge_size", 2)), int(tc.get("hidden_size", hidden)),
                _go_attn_v_bytes(spec, n_vision, hidden), 128, flash_attention)
        return pixtral_vision_graph_bytes(
            pixtral_reserve_side(int(vc.get("image_size", 1540)), patch), patch, hidden,
            int(vc.get("num_attention_heads", 16)), int(vc["intermediate_size"]), int(vc["num_hidden_layers"]),
            int(cfg.get("spatial_merge_size", 2)), int(tc.get("hidden_size", hidden)), on_gpu,
            alignment=128 if on_gpu else 32, flash_attention=flash_attention)
    except (KeyError, TypeError, ValueError):
        return None


def own_siglip_graph(spec: ModelSpec, on_gpu: bool, flash_attention: bool = False, conv_bias: bool = True
                     ) -> int | None:
    """The Ollama engine's own reserve of gemma3's SigLIP encoder and projector (graph.py
    siglip_vision_graph_bytes on the image_size x image_size image the processor makes of the 2048 x 2048 reserve
    image; flash_attention: v0.13.2+'s flash branch; conv_bias: v0.12.7+), on a GPU or on the CPU; None for other
    models. ollama/ollama#12303 (gemma3:4b on the CPU, v0.12.3): "compute graph" CPU 1.1 GiB = 1174011904 B."""
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    cfg = _catalog_config(spec) if towers else None
    vc = cfg.get("vision_config") if cfg else None
    if not isinstance(vc, Mapping) or ollama_arch(cfg) != "gemma3" or towers[0].family != "siglip_vision_model":
        return None
    tc = cfg.get("text_config") if isinstance(cfg.get("text_config"), Mapping) else {}
    try:
        return siglip_vision_graph_bytes(
            int(vc["image_size"]), int(vc["patch_size"]), int(vc["hidden_size"]), int(vc["num_attention_heads"]),
            int(vc["intermediate_size"]), int(vc["num_hidden_layers"]), int(cfg.get("mm_tokens_per_image") or 256),
            int(tc["hidden_size"]), on_gpu, alignment=128 if on_gpu else 32, flash_attention=flash_attention,
            conv_bias=conv_bias)
    except (KeyError, TypeError, ValueError):
        return None
