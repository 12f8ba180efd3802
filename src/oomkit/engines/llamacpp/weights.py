"""Which weight bytes land where: the layer split over devices, -ot / --cpu-moe overrides, and each backend's
model buffer (llama_model::load_tensors, ggml-cuda.cu buffer sizes, the mmap'd CPU range)."""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, replace
from typing import Any

from ...errors import OomkitError
from ...memo import ByObject
from ...memory import Device
from ...model.archs import NEXTN_SKIPPED, ROUTER_LAYER_ARCHS
from ...model.spec import ModelSpec, TensorSpec
from ...model.tensors import TensorShape
from ...model.weights import gguf_inventory, is_gguf_format
from ...quant import ggml, gguf_recipes
from ...units import round_up
from ..versions import Eras, llamacpp_build_on
from .backend_names import infer_backend
from .settings import DEFAULT_GGUF_TYPE, ERAS, NEWEST, LlamaCppSettings, build_number, loads_mtp

# CUDA: ggml-cuda.cu ggml_backend_cuda_buffer_type_get_alignment / _get_alloc_size, MATRIX_ROW_PADDING
CUDA_ALIGNMENT = 128
CUDA_MATRIX_ROW_PADDING = 512
# ggml-impl.h TENSOR_ALIGNMENT: CPU buffers align each tensor to 32 bytes; GGUF pads tensor data the same way
CPU_ALIGNMENT = 32


def default_weight_format(config: dict[str, Any]) -> str:
    """The GGUF people download for a model named without a quant: the MXFP4 release for models published
    in mxfp4 (gpt-oss), otherwise Q4_K_M."""
    q = config.get("quantization_config") or {}
    return "MXFP4_MOE" if isinstance(q, dict) and q.get("quant_method") == "mxfp4" else DEFAULT_GGUF_TYPE


def pre_mla_file(spec: ModelSpec) -> ModelSpec:
    """The DeepSeek-V2/V3/R1 GGUF as converted before llama.cpp PR #12801 (merged 2025-04-15), for a
    catalog-computed spec: convert_hf_to_gguf.py DeepseekV2Model then wrote kv_b_proj whole (blk.N.attn_kv_b,
    kv_lora_rank x n_head * (qk_nope + v_head), where today's files split it into attn_k_b + attn_v_b), at the
    file type's default type (the llama-quant.cpp of that time gave attn_kv_b no rule of its own; a Q4_K_M file
    holds it at q4_K in every layer: 9 MiB on DeepSeek-R1 against 10 MiB for k_b + v_b, beowulf-ai-cluster#2),
    and wrote no *_mla keys, so llama.cpp caches the decompressed per-head K and V (latent_cache False).
    A spec read from a file is returned as it is."""
    if spec.weights.exact:
        return spec
    mla = {la.index: la.attention for la in spec.layers if la.attention is not None and la.attention.kv_lora_rank}
    if not mla:
        return spec
    ft = gguf_recipes.ftype_by_name(spec.weights.format)
    kv_type = ft.default_type or "f16"
    tensors, offset = [], 0
    for t in spec.weights.tensors:
        if t.name.endswith(".attn_v_b.weight") and t.layer in mla:
            continue
        if t.name.endswith(".attn_k_b.weight") and t.layer in mla:
            a = mla[t.layer]
            shape = (a.kv_lora_rank, a.n_heads * (a.qk_nope_head_dim + a.v_head_dim))
            t = replace(t, name=f"blk.{t.layer}.attn_kv_b.weight", shape=shape, dtype=kv_type,
                        nbytes=ggml.tensor_bytes(ggml.type_by_name(kv_type), shape))
        tensors.append(replace(t, offset=offset))
        offset += round_up(t.nbytes, CPU_ALIGNMENT)  # gguf.h GGUF_DEFAULT_ALIGNMENT (32), as the writer pads
    layers = tuple(replace(la, attention=replace(la.attention, latent_cache=False)) if la.index in mla else la
                   for la in spec.layers)
    return replace(spec, layers=layers, weights=replace(spec.weights, tensors=tuple(tensors)),
                   labels=spec.labels + ("GGUF converted before llama.cpp's MLA layout (PR #12801): attn_kv_b "
                                         "whole, K and V cached per head",))


# Qwen3.5 / 3.6's next-n (MTP) block, by build. convert_hf_to_gguf.py writes it from PR #22673 "llama + spec: MTP
# Support" (255582687, 2026-05-16, b9180: conversion _Qwen35MtpMixin, on unless --no-mtp; before it the converter's
# Qwen3NextModel filter dropped every "mtp" tensor, so older files end at block_count = num_hidden_layers). The
# loaders take a block the file has with flags 0 (src/models/qwen35.cpp, qwen35moe.cpp load_block_mtp at b9849)
# until PR #26296 "llama : load MTP tensors only if they are really used" (82dbc4f01, 2026-07-31, b10212: after
# NEWEST, so from NEWEST, NEWEST_PLACED), which marks it TENSOR_SKIP unless llama_model_params.load_mtp
NEXTN_ERAS = Eras({"qwen35_nextn_written": 9180, "qwen35_nextn_skipped": int(NEWEST[1:])})
_NEXTN_WRITTEN = {"qwen35": "qwen35_nextn_written", "qwen35moe": "qwen35_nextn_written"}
_NEXTN_SKIPPED_FROM = {"qwen35": "qwen35_nextn_skipped", "qwen35moe": "qwen35_nextn_skipped"}


def _requantized(spec: ModelSpec, tensors: list[TensorSpec], build: int | None) -> Any:
    """A computed GGUF inventory over `tensors` typed again by llama-quantize (at `build`; None: the newest), by
    its publisher's recipe where the inventory has one (WeightInventory.publisher)."""
    if spec.weights.exact or not is_gguf_format(spec.weights.format):
        return replace(spec.weights, tensors=tuple(tensors))
    w = gguf_inventory([TensorShape(t.name, t.shape, t.layer) for t in tensors], arch=spec.architecture,
                       ftype=spec.weights.format, build=build, publisher=spec.weights.publisher,
                       published=spec.weights.published, n_trunk=spec.n_trunk_layers)  # sized to the same listing
    return replace(w, split_max_bytes=spec.weights.split_max_bytes)  # published in the same parts


def without_nextn(spec: ModelSpec, build: int | None = None) -> ModelSpec:
    """The model's GGUF without its next-n (MTP) block: block_count = the trunk's layers (a file converted with
    --no-mtp, or by a converter that did not write the block). A computed inventory is quantized again over the
    shorter tensor list (llama-quantize's layer counters run over the file's own blocks), by `build`'s rules."""
    if not spec.n_nextn_layers:
        return spec
    first = spec.n_trunk_layers
    kept = [t for t in spec.weights.tensors if t.layer is None or t.layer < first]
    return replace(spec, layers=spec.layers[:first], n_nextn_layers=0, weights=_requantized(spec, kept, build))


# Architectures whose converter writes context_length = 2**20 whatever the config says ("arbitrary value; for those
# who use the default"): conversion/mamba.py MambaModel / Mamba2Model, conversion/granite.py GraniteHybridModel
# when the model has SSM layers and no RoPE (Granite 4.0 H; NemotronHModel inherits it, conversion/nemotron.py),
# each since the architecture's first converter (PR #9126, #13550). So llama.cpp's default context (-c 0, --fit)
# and its n_ctx_train warning see 1,048,576 (print_info: n_ctx_train = 1048576 on mamba2 and nemotron_h files)
CONVERTER_CONTEXT_2_20 = frozenset({"mamba", "mamba2", "granitehybrid", "nemotron_h", "nemotron_h_moe"})


def converter_context(spec: ModelSpec) -> ModelSpec:
    """A computed spec with the trained context its GGUF carries (CONVERTER_CONTEXT_2_20); a read one as it is."""
    if spec.weights.exact or spec.architecture not in CONVERTER_CONTEXT_2_20 or spec.n_ctx_train == 2**20:
        return spec
    return replace(spec, n_ctx_train=2**20, labels=spec.labels + (
        f"trained context as llama.cpp's converter writes it for {spec.architecture}: 1048576 (config: "
        f"{spec.n_ctx_train or 'none'})",))


def converted_file(spec: ModelSpec, s: LlamaCppSettings) -> ModelSpec:
    """A catalog-computed spec as the build's own converter and llama-quantize write it by default: the trained
    context of converter_context, Qwen3.5 / 3.6 without the next-n block before b9180 (NEXTN_ERAS), with the delta
    net's attn_qkv under its own rule before gguf_recipes.QKV_AS_V_BUILD. A spec read from a file is returned as
    it is."""
    spec = converter_context(spec)
    era = _NEXTN_WRITTEN.get(spec.architecture)
    build = build_number(s.engine_version)
    if spec.weights.exact or era is None or NEXTN_ERAS.reached(build, era):
        return spec
    old_rules = build if build < gguf_recipes.QKV_AS_V_BUILD else None
    if spec.n_nextn_layers:
        return without_nextn(spec, old_rules)
    if old_rules is None:
        return spec
    return replace(spec, weights=_requantized(spec, list(spec.weights.tensors), old_rules))


# ---------------------------------------------------------------------------------------------------------
# Placement: which device holds each layer and tensor (llama_model::load_tensors)


@dataclass(frozen=True)
class Placement:
    layer_device: tuple[int, ...]  # per layer: -1 = CPU, else the GPU index
    output_device: int
    n_gpu_layers: int
    # where token_embd_norm goes (-1: the CPU, with the input layer): see embd_norm_device
    embd_norm_device: int = -1


# the tensors outside the blocks that load_arch_tensors creates as repeating-layer tensors of layer 0
# (tn(..., "weight", 0); src/llama-arch.cpp LLM_TENSOR_INFOS: PER_LAYER_MODEL_PROJ / PER_LAYER_PROJ_NORM
# LLM_TENSOR_LAYER_REPEATING; src/models/gemma3n.cpp, gemma4.cpp): they go where layer 0 does
# (llama_model_loader::create_tensor: buft_list_layer of bid 0). Measured on an H200 (the Gemma 3n E2B-shaped
# 25-layer file, -ngl 12): CUDA0 800.88 MiB, per_layer_model_proj's 7.03 in CPU_Mapped with layer 0
LAYER0_TENSORS = ("per_layer_model_proj.", "per_layer_proj_norm.")
# The input layer's tensors, which load on the CPU whatever -ngl says (llama_model::load_tensors: "very little benefit
# to offloading the input layer"; dev_input is the CPU). src/llama-arch.cpp LLM_TENSOR_INFOS marks TOKEN_EMBD,
# POS_EMBD ("position_embd": gpt2, starcoder, bert, jina-bert-v2 ...), TOKEN_TYPES ("token_types": the BERT
# family) and Gemma 3n / 4's PER_LAYER_TOKEN_EMBD LLM_TENSOR_LAYER_INPUT; before the table (llm_load_tensors up to
# b4400) the loader created the same tensors in ctx_input (read at b2500, b3500). ollama#9994 (bge-m3 at Ollama
# 0.6.1, CUDA): CUDA0 model buffer 577.22 MiB, the 24 blocks without position_embd's 32.01 MiB.
# token_embd_norm is placed apart (embd_norm_device). WavTokenizer's first convolution, LLM_TENSOR_CONV1D ("conv1d",
# wavtokenizer-dec), is LLM_TENSOR_LAYER_INPUT too from its PR on (#10784, 0bf2d10c, 2024-12-18, b4357; unchanged at
# b7140): conv1d.weight and conv1d.bias stay on the CPU with token_embd
INPUT_LAYER_TENSORS = ("token_embd", "per_layer_token_embd", "position_embd.", "token_types.", "conv1d.")
# LFM2's final norm, stored as token_embd_norm (LLM_TENSOR_OUTPUT_NORM_LFM2: "fix for wrong tensor name")
OUTPUT_NORM_AS_EMBD_NORM = frozenset({"lfm2", "lfm2moe"})
# Architectures whose case of the loader (llama_model::load_tensors in src/llama-model.cpp from b4463;
# llm_load_tensors in src/llama.cpp b3236-b4462, in llama.cpp before) creates no `output` tensor: the encoders end at
# their last block's norm (t_embd) and bitnet's graph multiplies by model.tok_embd itself ("FIXME: do not use
# model.tok_embd directly, duplicate as model.output"). Read off the loader at b2500, b3000, b3500, b4000, b4500,
# b4880, b5500, b6000, b6500 and b7140 (2025-11-23): bert and nomic-bert at every one, then each from its PR on:
# jina-bert-v2 (#6826, b2845), bitnet (#7931, b3208), nomic-bert-moe (#12466, b5215), neo-bert (#14164, b5682),
# jina-bert-v3 (#13693, b6309). llama.cpp@0c1e57098, measured on the 113 architectures of tests/ggufs.py's files
# without output.weight (a repacked output copy in CPU_REPACK or none, as tests/test_llamacpp_embedding_output.py
# checks 13 of them): these nine, eurobert and modern-bert included, create none; 67 duplicate; 37 refuse the file.
# Every other case creates `output`: from the file, or, without output.weight, token_embd again on the output
# layer's buffer type (TENSOR_DUPLICATED, or before that flag ml.n_created-- / size_data += nbytes); a case that
# requires output.weight (jais, gptneox, ...) fails to load without it. t5encoder, gemma-embedding and llama-embed
# duplicate (the loader and the measurement agree).
NO_OUTPUT_TENSOR_ARCHS = frozenset({"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3",
                                    "neo-bert", "eurobert", "modern-bert", "bitnet"})
# LFM2's first loader (PR #14620, f5e96b36, 2025-07-11, b5873) created no output either (its graph multiplied by
# tok_embd); PR #15476 (e2886936, 2025-08-22, b6242) added output with the TENSOR_DUPLICATED fallback
NO_OUTPUT_TENSOR_BUILDS = {"lfm2": (5873, 6242)}


def duplicates_embd_as_output(spec: ModelSpec, build: int | None = None) -> bool:
    """Whether llama.cpp loads token_embd a second time as the output matrix (TENSOR_DUPLICATED): a file without
    output.weight whose architecture's loader creates an output tensor (see NO_OUTPUT_TENSOR_ARCHS). On the
    input layer's own buffer type the loader hands back token_embd itself (load_tensors' create_tensor: "if
    duplicated, check if the original tensor was allocated in the same buffer type context"), so only an output
    layer on another buffer type (a GPU, CPU_REPACK) holds a second copy. `build`: None for the newest."""
    if not spec.tied_embeddings or spec.architecture in NO_OUTPUT_TENSOR_ARCHS:
        return False
    span = NO_OUTPUT_TENSOR_BUILDS.get(spec.architecture)
    return span is None or build is None or not span[0] <= build < span[1]


def place_layers(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> Placement:
    n_all = spec.n_layers
    # Granite Switch's router layer (index n_layer, kv.router_layer) sits where the output layer does:
    # get_layer_buft_list(n_layer) is dev_output
    n_placed = n_all + (spec.architecture in ROUTER_LAYER_ARCHS)
    if not devices:
        return Placement(tuple([-1] * n_placed), -1, 0)
    # llama_model::n_gpu_layers: -1 (default) means all layers plus the output layer. Before PR #15434 (ERAS
    # fa_auto, b6325) -1 left llama_model_default_params' own: 0 (none offloaded), 999 in Metal builds
    # (common_model_params_to_llama sets mparams.n_gpu_layers only when -ngl is not -1)
    ngl = n_all + 1 if s.n_gpu_layers < 0 else s.n_gpu_layers
    metal = infer_backend(devices, s.backend).name == "metal"
    if s.n_gpu_layers < 0 and not ERAS.reached(build_number(s.engine_version), "fa_auto") and not metal:
        ngl = 0
    splits = _split_points(devices, s)
    # llama_model::load_tensors: i_gpu_start = max(n_layer + 1 - ngl, 0) since PR #18148 (the output layer is
    # offloaded first); before it, max(n_layer - ngl, 0) and the output layer only when ngl > n_layer
    if ERAS.reached(build_number(s.engine_version), "ngl_output_first"):
        i_gpu_start = max(n_all + 1 - ngl, 0)
    else:
        i_gpu_start = max(n_all - ngl, 0)
    act = min(ngl, n_all + 1)

    def dev(il: int) -> int:
        if il < i_gpu_start or il - i_gpu_start >= act:
            return -1
        frac = (il - i_gpu_start) / act
        for i, sp in enumerate(splits):  # std::upper_bound: first split point greater than frac
            if sp > frac:
                return i
        return len(splits) - 1

    layers = tuple(dev(il) for il in range(n_placed))
    return Placement(layers, dev(n_all), min(ngl, n_all + 1),
                     embd_norm_device(spec, build_number(s.engine_version), layers, dev(n_all)))


def embd_norm_device(spec: ModelSpec, build: int, layer_device: tuple[int, ...], output_device: int) -> int:
    """The device of token_embd_norm. Since PR #17548 ("models : fix LFM2 tensors", 2025-11-27; ERAS
    embd_norm_layer0) LLM_TENSOR_TOKEN_EMBD_NORM is a repeating-layer tensor created for layer 0 ("do the norms on
    the first layer (not the input layer)", src/llama-arch.cpp; tn(LLM_TENSOR_TOKEN_EMBD_NORM, "weight", 0) in
    src/models/bert.cpp, bloom.cpp, ...) and LFM2's final norm, which the file names token_embd_norm, is
    LLM_TENSOR_OUTPUT_NORM_LFM2, an output-layer tensor (src/models/lfm2.cpp, lfm2moe.cpp). Before it the norm was
    an input-layer tensor, on the CPU. Measured on an H200 (lfm2 1.2B's 16-layer file, every layer offloaded):
    CUDA0 661.13 MiB, CPU_Mapped 105.00, the norm's 8 KiB on the device."""
    if not ERAS.reached(build, "embd_norm_layer0"):
        return -1
    if spec.architecture in OUTPUT_NORM_AS_EMBD_NORM:
        return output_device
    return layer_device[0] if layer_device else -1


def _split_points(devices: tuple[Device, ...], s: LlamaCppSettings) -> list[float]:
    """The cumulative split fractions of -sm / -ts / -mg (llama_model::load_tensors)."""
    if s.split_mode == "tensor":
        # include/llama.h LLAMA_SPLIT_MODE_TENSOR: each weight matrix and the KV cache cut across the GPUs
        # (src/llama.cpp, src/llama-model.cpp llm_arch_supports_sm_tensor); a layout oomkit does not size
        raise OomkitError("-sm tensor (llama.cpp's tensor parallelism, LLAMA_SPLIT_MODE_TENSOR) is not modelled by "
                          "oomkit: it sizes -sm layer (the default), row and none")
    if s.split_mode not in ("layer", "none", "row"):
        raise OomkitError(f"-sm {s.split_mode}: llama.cpp takes none, layer, row or tensor")
    if s.split_mode == "none":
        if not 0 <= s.main_gpu < len(devices):
            raise OomkitError(f"-mg {s.main_gpu}: there are {len(devices)} GPUs")
        splits = [0.0] * len(devices)
        splits[s.main_gpu:] = [1.0] * (len(devices) - s.main_gpu)
        return splits
    weights = list(s.tensor_split) if s.tensor_split and any(s.tensor_split) else None
    if weights is not None and len(weights) > len(devices):
        raise OomkitError(f"--tensor-split has {len(weights)} values for {len(devices)} GPUs")
    if weights is None:
        # default split by each device's free memory; unknown sizes split evenly
        weights = [float(d.free_bytes or d.memory_bytes or 1) for d in devices]
    weights += [0.0] * (len(devices) - len(weights))
    total, acc, splits = sum(weights), 0.0, []
    if total <= 0:
        raise OomkitError("--tensor-split values must not all be zero")
    for w in weights:
        acc += w
        splits.append(acc / total)
    return splits


_GPU_BUFT = r"(?:CUDA|ROCm|Vulkan|Metal|SYCL|GPU)(\d*)"  # a device's buffer type as -ot names it


def override_patterns(s: LlamaCppSettings, spec: ModelSpec) -> list[tuple[re.Pattern[str], str]]:
    pats = []
    for pattern, buft in s.override_tensor:
        try:
            pats.append((re.compile(pattern), buft))
        except re.error as e:
            raise OomkitError(f"-ot {pattern}={buft}: bad regular expression ({e})") from None
        # common/arg.cpp parse_tensor_buffer_overrides looks every buffer type up as it parses, whether or not its
        # pattern matches a tensor: an unknown one stops llama-server ("unknown buffer type"). Beside the ones
        # tensor_device places, the names other backends give theirs (ggml-opencl.cpp "OpenCL", ggml-metal.cpp
        # "Metal_Private", ggml-hexagon.cpp "HTP<n>", MUSA / CANN "<name><n>") pass here
        if not (buft.upper().startswith(("CPU", "RPC")) or re.fullmatch(_GPU_BUFT, buft, re.IGNORECASE)
                or re.fullmatch(r"OpenCL|Metal_Private|(?:HTP|MUSA|CANN)\d+", buft)):
            raise OomkitError(f"-ot: unknown buffer type {buft!r}")
    # common/arg.cpp --cpu-moe / --n-cpu-moe N: "blk\.(i)\.ffn_(up|down|gate|gate_up)_(ch|)exps" on CPU
    # a pattern for a block the model lacks matches nothing: at most one per layer (-ncmoe 1000000 is "all")
    n_moe = spec.n_layers if s.cpu_moe else min(s.n_cpu_moe, spec.n_layers)
    for i in range(n_moe):
        pats.append((re.compile(rf"blk\.{i}\.ffn_(up|down|gate|gate_up)_(ch|)exps"), "CPU"))
    return pats


# PR #17826 "[SYCL] Support gpt-oss by OPs add-id, mul_mat for mxfp4, swiglu_oai" (opened 2025-12-06 for issue
# #17643, reviewed until 2025-12-10; dated here by that last review day, so a build of the days up to its merge may
# be given it too early): before it ggml-sycl.cpp ggml_backend_sycl_device_supports_op (llama.cpp@96ac5a23,
# 2025-11-23) refuses MUL_MAT / MUL_MAT_ID of a BF16 or MXFP4 weight ("TODO: support MXFP4"), GGML_OP_ADD_ID
# (no case: default false) and GGML_GLU_OP_SWIGLU_OAI
SYCL_GPT_OSS_OPS_BUILD = llamacpp_build_on("2025-12-10")
# the experts' type that PR brought; BF16, refused beside it at 96ac5a23 and taken by the newest build, came at a
# build not dated here: not modelled
SYCL_REFUSED_MUL_MAT_TYPES = frozenset({"mxfp4"})


def sycl_refused_weights(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings) -> frozenset[str]:
    """The weights a SYCL build before SYCL_GPT_OSS_OPS_BUILD keeps on the host although their layer is offloaded:
    llama_model::load_tensors' select_weight_buft tries each weight's op on the device's buffer type
    (weight_buft_supported: ffn_*_exps with GGML_OP_MUL_MAT_ID, their "bias" tensors with GGML_OP_ADD_ID,
    src/llama-model.cpp) and, refused, takes the next of the layer's buffer types, the CPU's. So the MXFP4 experts
    and every expert bias (gpt-oss) land in CPU_Mapped; ggml-sycl has no offload_op for them either (it
    refuses the op), so their products stay on the CPU (compute.sycl_refused_moe_host). Empty elsewhere."""
    if not devices or infer_backend(devices, s.backend).name != "sycl" \
            or build_number(s.engine_version) >= SYCL_GPT_OSS_OPS_BUILD:
        return frozenset()
    return frozenset(t.name for t in spec.weights.tensors if re.search(r"\.ffn_(up|gate|down|gate_up)_exps\.", t.name)
                     and (t.name.endswith(".bias") or t.dtype.lower() in SYCL_REFUSED_MUL_MAT_TYPES))


def tensor_device(t: TensorSpec, placement: Placement, overrides, n_devices: int,
                  device_ids: tuple[str, ...] = ()) -> int:
    for pat, buft in overrides:
        if pat.search(t.name):
            if buft.upper().startswith("CPU"):
                return -1
            if buft in device_ids and buft.startswith("RPC"):  # an RPC device's buffer: RPC0[host:port]
                return device_ids.index(buft)
            m = re.fullmatch(_GPU_BUFT, buft, re.IGNORECASE)
            if not m:
                raise OomkitError(f"-ot: unknown buffer type {buft!r}")
            # the local devices are numbered among themselves; RPC devices come first (split.model_devices)
            local = [i for i, d in enumerate(device_ids) if not d.startswith("RPC")] or list(range(n_devices))
            idx = int(m.group(1) or 0)
            if idx >= len(local):
                raise OomkitError(f"-ot: buffer type {buft} names a GPU that is not there")
            return local[idx]
    if t.name.startswith("token_embd_norm."):
        return placement.embd_norm_device
    if t.name.startswith(LAYER0_TENSORS) and placement.layer_device:
        return placement.layer_device[0]
    if t.name.startswith(INPUT_LAYER_TENSORS):
        # load_tensors: "very little benefit to offloading the input layer"
        return -1
    if t.layer is not None and t.layer < len(placement.layer_device):
        return placement.layer_device[t.layer]
    return placement.output_device  # output_norm, output


def loaded_tensors(spec: ModelSpec, s: LlamaCppSettings | None = None) -> tuple[TensorSpec, ...]:
    """The tensors llama.cpp loads: all but the next-n (MTP) blocks of architectures that mark them TENSOR_SKIP
    (src/models/glm4-moe.cpp load_arch_tensors: the block stays in the file, out of every buffer), unless
    --spec-type draft-mtp has the loader take them (mtp_flags = !ml.load_mtp ? TENSOR_SKIP : 0). Qwen3.5 / 3.6
    skip theirs from NEXTN_ERAS qwen35_nextn_skipped on and load them before (no settings: the newest build)."""
    if not _skips_nextn(spec, s):
        return spec.weights.tensors
    first = spec.n_trunk_layers
    return tuple(t for t in spec.weights.tensors if t.layer is None or t.layer < first)


def _skips_nextn(spec: ModelSpec, s: LlamaCppSettings | None) -> bool:
    if spec.architecture not in NEXTN_SKIPPED or not spec.n_nextn_layers or (s is not None and loads_mtp(s)):
        return False
    era = _NEXTN_SKIPPED_FROM.get(spec.architecture)
    return era is None or s is None or NEXTN_ERAS.reached(build_number(s.engine_version), era)


def gpu_alloc_size(t: TensorSpec) -> int:
    return _gpu_alloc_size(t.dtype, t.shape[0] if t.shape else 0, t.nbytes)


@functools.lru_cache(maxsize=4096)  # a model has a few dozen distinct (type, row, size) triples; estimates repeat them
def _gpu_alloc_size(dtype: str, row: int, nbytes: int) -> int:
    gt = ggml.type_by_name(dtype)
    size = nbytes
    if gt.quantized and row and row % CUDA_MATRIX_ROW_PADDING:
        size += ggml.row_bytes(gt, CUDA_MATRIX_ROW_PADDING - row % CUDA_MATRIX_ROW_PADDING)
    return round_up(size, CUDA_ALIGNMENT)


def mapped_range(tensors: list[TensorSpec], file_order: bool = True) -> int:
    """An mmap'd CPU buffer spans the file range from its first to its last tensor
    (llama_model_loader::get_mapping_range), holes included. `file_order` False: the offsets are oomkit's own
    layout of a computed inventory: token_embd first, the blocks in order, as converters write them, so the
    range over those stands; the tensors laid out after the blocks (output_norm, output) sit wherever the
    converter put them, often before the blocks, so they count their own padded bytes (output.weight guessed
    last, then kept on the CPU by an older build's -ngl rule, stretched the range over the whole file)."""
    if not tensors:
        return 0
    if not all(t.offset is not None for t in tensors):
        return sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in tensors)
    files = {t.file for t in tensors}
    if len(files) > 1:  # a split GGUF read from its parts: one mapping, and one buffer, per part (load_tensors)
        return sum(mapped_range([t for t in tensors if t.file == f], file_order) for f in sorted(files))
    if not file_order:
        first_block = min((t.offset for t in tensors if t.layer is not None), default=None)
        trailing = [t for t in tensors if t.layer is None and first_block is not None and t.offset > first_block]
        if trailing:
            names = {t.name for t in trailing}
            return (sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in trailing)
                    + mapped_range([t for t in tensors if t.name not in names]))
    return max(t.offset + t.nbytes for t in tensors) - min(t.offset for t in tensors)


# A computed GGUF of more than 50 GB as published: split by llama.cpp's gguf-split into files of at most
# --split-max-size 50G (tools/gguf-split/gguf-split.cpp split_str_to_n_bytes: G = 1000^3 bytes; split_strategy
# starts a new file when the tensors' padded sizes would pass it), the Hugging Face Hub's 50 GB cap per file.
# Each file keeps the order llama-quantize wrote: src/llama-quant.cpp llama_model_quantize_impl walks
# ml.weights_map, a std::map under llama_model_loader::weight_name_comparer (the tensors outside the blocks first,
# then blk.0, blk.1, ... by number, each block's tensors by name: attn_* before ffn_*). load_tensors maps each file
# apart (src/llama-model.cpp: one CPU_Mapped buffer per file idx, [first, last) of get_mapping_range over the
# file's tensors of that buffer type, the tensors of other buffers and the padding between them included).
# Assumed for a computed inventory of a llama-quantize type only (not F32 / F16 / BF16 / Q8_0, which
# convert_hf_to_gguf.py also writes itself, in the checkpoint's order); the real parts' own order is unknown here.
SPLIT_MAX_BYTES = 50 * 1000**3
_CONVERTER_TYPES = {"F32", "F16", "BF16", "Q8_0"}


# convert_hf_to_gguf.py writes the tensors in the order it reads them: each safetensors part's names sorted
# (safe_open(...).keys()), so the blocks run by their number as text (model.layers.0, .1, .10, ... .19, .2, .20, ...),
# lm_head and model.embed_tokens before them and model.norm after. GptOssModel.generate_extra_tensors adds the
# MXFP4 experts to the writer while it first walks the checkpoint (repack_mxfp4 -> gguf_writer.add_tensor), before
# prepare_tensors writes the rest, so a gpt-oss file the converter writes itself (--outtype f16 / bf16 / f32 /
# q8_0: the experts stay MXFP4) holds every block's experts first, then the other tensors in that order.
_EXPERTS_FIRST_ARCHS = {"gpt-oss"}
_HF_LOOSE = {"output.weight": "lm_head.weight", "token_embd.weight": "model.embed_tokens.weight",
             "output_norm.weight": "model.norm.weight"}


def converter_order(spec: ModelSpec) -> dict[str, int] | None:
    """Each tensor's offset in the file convert_hf_to_gguf.py writes for a computed gpt-oss inventory of a type
    the converter writes itself (see _EXPERTS_FIRST_ARCHS), the checkpoint taken as one sorted part; None for other
    models and types (oomkit's own layout, or llama-quantize's: quantize_order). Within a block the names are
    sorted the GGUF way: only the blocks' order and the sections decide a device's mapping range."""
    w = spec.weights
    if w.exact or spec.architecture not in _EXPERTS_FIRST_ARCHS or w.format.upper() not in _CONVERTER_TYPES:
        return None

    def key(t: TensorSpec) -> tuple[int, str]:
        if t.layer is None:
            return 1, _HF_LOOSE.get(t.name, t.name)
        section = 0 if t.is_expert and t.name.endswith(".weight") else 1
        return section, f"model.layers.{t.layer}.{t.name}"

    out, offset = {}, 0
    for t in sorted(w.tensors, key=key):
        out[t.name] = offset
        offset += round_up(t.nbytes, CPU_ALIGNMENT)  # gguf.h GGUF_DEFAULT_ALIGNMENT (32), as the writer pads
    return out


def quantize_order(name: str) -> tuple[int, str]:
    """llama_model_loader::weight_name_comparer: the layer of "blk.%d." (-1 without one), then the name."""
    m = re.match(r"blk\.(\d+)\.", name)
    return (int(m.group(1)) if m else -1, name)


_PUBLISHED = ByObject[ModelSpec](16)
_SPLITS = ByObject[dict[str, tuple[int, int]] | None](64)


def published_split(spec: ModelSpec) -> ModelSpec:
    """The model as llama.cpp loads it from the hub: a computed GGUF inventory of a llama-quantize type over
    SPLIT_MAX_BYTES in gguf-split parts (WeightInventory.split_max_bytes). Ollama's library blobs are one file
    each: its engine does not come through here."""
    return _PUBLISHED.get(spec, "split", lambda: _published_split(spec))


def _published_split(spec: ModelSpec) -> ModelSpec:
    w = spec.weights
    if (w.exact or w.split_max_bytes is not None or not is_gguf_format(w.format)
            or w.format.upper() in _CONVERTER_TYPES
            or sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in w.tensors) <= SPLIT_MAX_BYTES):
        return spec
    return replace(spec, weights=replace(w, split_max_bytes=SPLIT_MAX_BYTES))


def split_layout(weights: Any) -> dict[str, tuple[int, int]] | None:
    """A computed GGUF inventory's split parts (published_split): tensor name -> (file, offset in that file's
    data). None for one file (mapped_range's own layout)."""
    if weights.exact or not weights.split_max_bytes:
        return None
    return _SPLITS.get(weights, "split", lambda: _split(weights.tensors, weights.split_max_bytes))


def _split(tensors: tuple[TensorSpec, ...], max_bytes: int) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    file, size = 0, 0  # gguf-split split_strategy: the current file's padded tensor bytes
    for t in sorted(tensors, key=lambda t: quantize_order(t.name)):
        n = round_up(t.nbytes, CPU_ALIGNMENT)
        if size and size + n > max_bytes:
            file, size = file + 1, 0
        out[t.name] = (file, size)
        size += n
    return out


def split_mapped_bytes(weights: Any, tensors: list[TensorSpec]) -> int | None:
    """The CPU_Mapped buffers of `tensors` summed over the split parts (split_mapped_ranges); None for one file."""
    layout = split_layout(weights)
    if layout is None or not all(t.name in layout for t in tensors):
        return None
    return sum(split_mapped_ranges(tensors, layout))


def split_mapped_ranges(tensors: list[TensorSpec], layout: dict[str, tuple[int, int]]) -> list[int]:
    """The CPU_Mapped buffer of each split file holding some of `tensors` (load_tensors: one per file idx, the
    file's [first, last) of llama_model_loader::get_mapping_range, last = offs + ggml_nbytes), in file order."""
    spans: dict[int, list[int]] = {}
    for t in tensors:
        f, off = layout[t.name]
        lo_hi = spans.setdefault(f, [off, off + t.nbytes])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], off), max(lo_hi[1], off + t.nbytes)
    return [hi - lo for _, (lo, hi) in sorted(spans.items())]


# ---------------------------------------------------------------------------------------------------------
# Model buffers per backend


@dataclass(frozen=True)
class ModelBuffers:
    """The weights of one load: per GPU (index -> bytes, alignment and row padding included) and on the host."""

    by_device: dict[int, int]
    cpu_tensors: tuple[TensorSpec, ...]
    host_buffer_type: str  # CPU_Mapped | CUDA_Host | CPU
    host_buffer_bytes: int  # the host model buffer llama.cpp prints
    host_weight_bytes: int  # the host tensors' own bytes


_BUFFERS = ByObject[ModelBuffers](256)  # the last loads, by the inventory: a context search repeats them


def model_buffers(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
                  placement: Placement) -> ModelBuffers:
    """The weights of one load; the same load (the same tensors, devices, placement and tensor overrides) at
    another context is served from a small cache: the context changes no weight."""
    key = (duplicates_embd_as_output(spec, build_number(s.engine_version)), tuple(d.id for d in devices), placement,
           s.override_tensor, s.n_cpu_moe, s.cpu_moe, s.mmap, bool(devices), _skips_nextn(spec, s),
           sycl_refused_weights(spec, devices, s))
    return _BUFFERS.get(spec.weights, key, lambda: _model_buffers(spec, devices, s, placement))


_MATCHES = ByObject[tuple[str, ...]](4096)  # (weights, pattern) -> the tensor names it finds


def _first_overrides(spec: ModelSpec, overrides: list[tuple[re.Pattern[str], str]]) -> dict[str, int]:
    """Tensor name -> the index of the first override whose pattern finds it (re.search, as tensor_device)."""
    first: dict[str, int] = {}
    for k, (pat, _) in enumerate(overrides):
        names = _MATCHES.get(spec.weights, (pat.pattern, pat.flags),
                             lambda pat=pat: tuple(t.name for t in spec.weights.tensors if pat.search(t.name)))
        for name in names:
            first.setdefault(name, k)
    return first


class _TensorTable:
    """A load's tensors by block (blk.N.; the rest loose), with each block's size in a device buffer, and each name's
    positions."""

    def __init__(self, tensors: tuple[TensorSpec, ...]):
        self.sizes = tuple(gpu_alloc_size(t) for t in tensors)
        self.block_of: list[int | None] = []
        self.members: dict[int, list[int]] = {}
        self.block_bytes: dict[int, int] = {}
        self.loose: list[int] = []
        self.positions: dict[str, list[int]] = {}
        for i, t in enumerate(tensors):
            b = t.layer if t.layer is not None and t.name.startswith("blk.") else None
            self.block_of.append(b)
            if b is None:
                self.loose.append(i)
            else:
                self.members.setdefault(b, []).append(i)
                self.block_bytes[b] = self.block_bytes.get(b, 0) + self.sizes[i]
            self.positions.setdefault(t.name, []).append(i)
        self._devices: dict[tuple[Any, ...], tuple[dict[int, int], dict[int, int]]] = {}

    def devices(self, tensors: tuple[TensorSpec, ...], placement: Placement, n: int,
                ids: tuple[str, ...]) -> tuple[dict[int, int], dict[int, int]]:
        """Without overrides, each block's device (tensor_device of its first tensor) and each loose tensor's, by
        placement (a fit tries many tensor overrides on one layer placement)."""
        key = (placement, n, ids)
        hit = self._devices.get(key)
        if hit is None:
            if len(self._devices) > 256:
                self._devices.clear()
            hit = self._devices[key] = (
                {b: tensor_device(tensors[idx[0]], placement, (), n, ids) for b, idx in self.members.items()},
                {i: tensor_device(tensors[i], placement, (), n, ids) for i in self.loose})
        return hit


# memoised by the tensors (a fit lays one load out many times; loaded_tensors may give a new tuple of the same
# tensors each time), keyed by the inventory and the count, checked tensor by tensor
_TENSOR_TABLES: dict[tuple[int, int], tuple[tuple[TensorSpec, ...], _TensorTable]] = {}


def _tensor_table(weights: Any, tensors: tuple[TensorSpec, ...]) -> _TensorTable:
    key = (id(weights), len(tensors))
    hit = _TENSOR_TABLES.get(key)
    if hit is None or not (hit[0] is tensors or all(map(operator.is_, hit[0], tensors))):
        if len(_TENSOR_TABLES) > 64:
            _TENSOR_TABLES.clear()
        hit = _TENSOR_TABLES[key] = (tensors, _TensorTable(tensors))
    return hit[1]


def _model_buffers(spec: ModelSpec, devices: tuple[Device, ...], s: LlamaCppSettings,
                   placement: Placement) -> ModelBuffers:
    overrides = override_patterns(s, spec)
    refused = sycl_refused_weights(spec, devices, s)
    if refused:  # after the command's own -ot, which llama.cpp takes without asking the device
        overrides = [*overrides, *((re.compile(rf"^{re.escape(n)}$"), "CPU") for n in sorted(refused))]
    ids = tuple(d.id for d in devices)
    n = len(devices)
    tensors = loaded_tensors(spec, s)
    table = _tensor_table(spec.weights, tensors)
    # without an override tensor_device decides a blk.N. tensor by its block alone: it is asked once per block (its
    # first tensor) and the block's bytes go there whole; the tensors outside the blocks (token_embd, output) one by
    # one. Then each overridden tensor moves from there to its override's device: its first matching override, from
    # each pattern's matches (memoised), without one regex search per tensor and pattern (a fit's -ot lists hold a
    # pattern per layer)
    by_device: dict[int, int] = {}
    count: dict[int, int] = {}  # tensors per device: a device keeps its entry while it holds one
    on_cpu: list[int] = []
    at, loose = table.devices(tensors, placement, n, ids)  # block -> device, loose tensor -> device
    for b, idx in table.members.items():
        d = at[b]
        if d < 0:
            on_cpu.extend(idx)
        else:
            by_device[d] = by_device.get(d, 0) + table.block_bytes[b]
            count[d] = count.get(d, 0) + len(idx)
    for i, d in loose.items():
        if d < 0:
            on_cpu.append(i)
        else:
            by_device[d] = by_device.get(d, 0) + table.sizes[i]
            count[d] = count.get(d, 0) + 1
    moved: set[int] = set()
    for name, k in _first_overrides(spec, overrides).items():
        for i in table.positions.get(name, ()):
            b = table.block_of[i]
            was = at[b] if b is not None else loose[i]
            d = tensor_device(tensors[i], placement, overrides[k:k + 1], n, ids)
            if d == was:
                continue
            if was < 0:
                moved.add(i)
            else:
                by_device[was] -= table.sizes[i]
                count[was] -= 1
            if d < 0:
                on_cpu.append(i)
            else:
                by_device[d] = by_device.get(d, 0) + table.sizes[i]
                count[d] = count.get(d, 0) + 1
    cpu_tensors = [tensors[i] for i in sorted(on_cpu) if i not in moved]
    by_device = {d: b for d, b in by_device.items() if count[d]}
    if placement.output_device >= 0 and duplicates_embd_as_output(spec, build_number(s.engine_version)):
        # tied output: token_embd is loaded a second time on the output device (TENSOR_DUPLICATED); an encoder
        # without an output tensor has none (bge-m3, ollama#9994: its 488.29 MiB token_embd only in CPU_Mapped)
        emb = next((t for t in spec.weights.tensors if t.name == "token_embd.weight"), None)
        if emb is not None:
            by_device[placement.output_device] = by_device.get(placement.output_device, 0) + gpu_alloc_size(emb)
    if s.mmap:
        # the mapped file's buffer: "CPU_Mapped" from PR #10026 (ERAS cpu_mapped_name, b3990: ggml-backend.cpp
        # ggml_backend_cpu_buffer_from_ptr_type), before it ggml_backend_cpu_buffer_type()'s "CPU"
        host_buft = "CPU_Mapped" if ERAS.reached(build_number(s.engine_version), "cpu_mapped_name") else "CPU"
        host_buffer = split_mapped_bytes(spec.weights, cpu_tensors)
        order = converter_order(spec) if host_buffer is None else None
        if order is not None:  # the converter's own file (experts first): its offsets
            host_buffer = mapped_range([replace(t, offset=order[t.name]) for t in cpu_tensors])
        elif host_buffer is None:
            host_buffer = mapped_range(cpu_tensors, file_order=spec.weights.exact)
    else:
        host_buft = "CUDA_Host" if devices else "CPU"
        host_buffer = sum(round_up(t.nbytes, CPU_ALIGNMENT) for t in cpu_tensors)
    return ModelBuffers(by_device, tuple(cpu_tensors), host_buft, host_buffer, sum(t.nbytes for t in cpu_tensors))
