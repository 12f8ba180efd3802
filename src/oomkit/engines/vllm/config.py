"""The configuration vLLM settles on for a model, its GPUs and the options (vllm/config/: ModelConfig,
CacheConfig, SchedulerConfig, ParallelConfig): release, V0/V1, dtypes, context, batch sizes, prefix caching."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...errors import OomkitError, SettingsError
from ...memory import Device
from ...model.archs import DSV4_ARCHS
from ...model.hf_config import CONTEXT_LENGTH_KEYS, rope_scaling
from ...model.spec import LayerKind, ModelSpec
from ...quant.dtypes import FLOAT_BYTES
from ...units import GiB, MiB
from .. import _tp
from ..command import clip_word
from ..release_flags import deprecation_notes, refuse_unknown, release_key, resolve_abbreviations
from ..versions import Version
from . import quantization
from .archs import check_model_release
from .drafter import infer_method
from .settings import ERAS, VllmSettings, parse_version

# Memory CUDA reserves for itself: cudaMemGetInfo's total (vLLM's total_memory) is about this much below
# nvidia-smi's total: H100 80GB 81559 MiB vs 79.19 GiB, RTX 3090 24576 MiB vs 23.58 GiB, RTX 4090
# 24564 MiB vs 23.52 GiB, L4 23034 MiB vs 22.05 GiB (start-up logs and OOM messages).
CUDA_DRIVER_RESERVED = 470 * MiB
# vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
VOCAB_PADDING = 64

# KV cache element bytes by vLLM's --kv-cache-dtype names (config/cache.py CacheDType): its own fp8 spellings,
# so not the torch-dtype table of quant/dtypes.py. The packed 4-bit and per-token-head formats are sized in kv.py
# (_attention_bytes_per_token).
KV_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1,
                  "int8_per_token_head": 1, "fp8_per_token_head": 1}
# config/cache.py CacheDType: each --kv-cache-dtype choice in the Literal's order, with the first release that lists
# it (read in the 0.9.0, 0.10.0, 0.10.2, 0.11.0, 0.12.0, 0.13.0-0.34.0 wheels: fp8_inc 0.10.0; bfloat16 0.11.0, absent
# in 0.10.2; fp8_ds_mla 0.12.0; float16 0.18.0, absent in 0.17.1; the TurboQuant presets, int8/fp8_per_token_head and
# nvfp4 0.20.0, absent in 0.19.1; int4_per_token_head 0.25.0; nvfp4_4over6 0.28.0; nvfp4_ds_mla 0.30.0;
# ultraquant_4bit 0.32.0; the Octave presets 0.33.0)
CACHE_DTYPES: tuple[tuple[str, Version], ...] = (
    ("auto", (0, 3, 0)), ("float16", (0, 18, 0)), ("bfloat16", (0, 11, 0)), ("fp8", (0, 4, 1)),
    ("fp8_e4m3", (0, 4, 3)), ("fp8_e5m2", (0, 3, 0)), ("fp8_inc", (0, 10, 0)), ("fp8_ds_mla", (0, 12, 0)),
    ("nvfp4_ds_mla", (0, 30, 0)), ("turboquant_k8v4", (0, 20, 0)), ("turboquant_4bit_nc", (0, 20, 0)),
    ("turboquant_k3v4_nc", (0, 20, 0)), ("turboquant_3bit_nc", (0, 20, 0)), ("octave_k3v4", (0, 33, 0)),
    ("octave_k3v3", (0, 33, 0)), ("octave_k3v3_compact", (0, 33, 0)), ("ultraquant_4bit", (0, 32, 0)),
    ("int4_per_token_head", (0, 25, 0)), ("int8_per_token_head", (0, 20, 0)), ("fp8_per_token_head", (0, 20, 0)),
    ("nvfp4", (0, 20, 0)), ("nvfp4_4over6", (0, 28, 0)))
# Before config/cache.py, engine/arg_utils.py EngineArgs.add_cli_args' --kv-cache-dtype `choices`, read in the sdists
# of 0.2.7, 0.3.0, 0.3.1, 0.3.3, 0.4.1, 0.4.2, 0.4.3 and 0.5.0-0.5.2 (0.4.0 has none; its place by the PRs): absent before 0.3.0; ['auto', 'fp8_e5m2'] from 0.3.0 (vllm#2279, FP8-E5M2 KV
# cache) to 0.4.0.post1; ['auto', 'fp8'] in 0.4.1-0.4.2 (vllm#3290: "fp8" is E5M2 on CUDA, E4M3 on ROCm; fp8_e5m2
# gone); ['auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'] from 0.4.3 (vllm#4535, RFC vllm#4532). KV_DTYPE_FLAG_FIRST: the
# first release whose parser has the flag; CACHE_DTYPE_GAPS: [first release without, first release with it again).
KV_DTYPE_FLAG_FIRST: Version = (0, 3, 0)
# The first release with the `vllm` program (setup.py console_scripts "vllm=vllm.scripts:main", vllm/scripts.py
# `vllm serve <model_tag>`: vllm#5090, absent from the 0.5.1 sdist's setup.py, in 0.5.2's; vllm#6431 moved the docs to it once 0.5.2 was
# out). Before it the server is `python -m vllm.entrypoints.openai.api_server --model MODEL` (argparse's prog
# "api_server.py"), the same engine flags.
SERVE_CLI_FIRST: Version = (0, 5, 2)


def program_name(version: Version) -> str:
    """The name vLLM's parser signs its errors with at `version`."""
    return "vllm serve" if version >= SERVE_CLI_FIRST else "api_server.py"
CACHE_DTYPE_GAPS: dict[str, tuple[Version, Version]] = {"fp8_e5m2": ((0, 4, 1), (0, 4, 3))}


def cache_dtypes_at(version: Version) -> list[str]:
    """The --kv-cache-dtype choices of the parser of `version` (CACHE_DTYPES less CACHE_DTYPE_GAPS)."""
    return [c for c, first in CACHE_DTYPES if version >= first
            and not (c in CACHE_DTYPE_GAPS and CACHE_DTYPE_GAPS[c][0] <= version < CACHE_DTYPE_GAPS[c][1])]


def fp8_kv_name(version: Version) -> str | None:
    """How the parser of `version` spells an 8-bit KV cache: "fp8" from 0.4.1, "fp8_e5m2" in 0.3.0-0.4.0.post1,
    None before 0.3.0 (no --kv-cache-dtype)."""
    return next((c for c in ("fp8", "fp8_e5m2") if c in cache_dtypes_at(version)), None)


# v1/kv_cache_interface.py KVQuantMode.is_per_token_head: int8 / fp8 / int4 values with one float32 scale per token,
# head and K/V side; only the Triton attention backend lists them (triton_attn.py supported_kv_cache_dtypes)
PER_TOKEN_HEAD = ("int8_per_token_head", "fp8_per_token_head", "int4_per_token_head")
# get_kv_quant_mode: kv_cache_dtype.startswith("nvfp4") (0.28+; == "nvfp4" before) -> KVQuantMode.NVFP4, FlashInfer only
NVFP4 = ("nvfp4", "nvfp4_4over6")
# The --dtype spellings read as torch dtypes (config/model.py _STR_DTYPE_TO_TORCH_DTYPE, plus fp16/bf16/fp32).
# Not quant/dtypes.ALIASES: llama.cpp's f16/f32 name GGUF formats, which vLLM loads as stored.
DTYPE_ALIASES = {"half": "float16", "float": "float32", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
# model_executor/layers/attention/mla_attention.py state_content_bytes: bytes per token per layer
MLA_PACKED_BYTES = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


@dataclass(frozen=True)
class Resolved:
    version: Version
    v1: bool
    tp: int
    pp: int
    dp: int
    max_model_len: int
    derived_max_len: int
    util: float
    dtype: str  # model dtype
    dtype_bytes: int
    kv_dtype: str
    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool
    prefix_caching: bool
    cc: tuple[int, int] | None  # compute capability of the first GPU
    cc_guessed: bool
    nvlink: bool = False  # the GPUs talk over NVLink (NCCL's NVLink buffers), else over PCIe
    tp_spans_nodes: bool = False  # a TP group has ranks on two machines (--nnodes, Ray): custom all-reduce is off
    mamba_cache_mode: str = "none"
    num_spec: int = 0
    runner_v2: bool = False  # model runner V2 (v1/worker/gpu/model_runner.py) instead of gpu_model_runner.py
    async_scheduling: bool = True  # SchedulerConfig.async_scheduling as VllmConfig.__post_init__ settles it
    warnings: tuple[str, ...] = ()
    gpu_name: str = ""  # the first GPU's name (vLLM's defaults by name: _batch_defaults, phases.py)
    sm_count: int | None = None  # the first GPU's SMs, the catalog's on its Device (profile.py cuda_context)
    gfx_target: str | None = None  # the first GPU's AMD LLVM target, the catalog's on its Device (weights.py)

    pp_layer_partition: str = ""  # VLLM_PP_LAYER_PARTITION as given (pp_partition)
    # why "auto" became kv_dtype where the checkpoint declares a KV-cache quantization (auto_kv_dtype); "" otherwise
    kv_dtype_reason: str = ""
    mla_off: bool = False  # ModelConfig.use_mla false from 0.7.1 (quantization.mla_latent_kept): per-head K/V

    def at_least(self, era: str) -> bool:
        return ERAS.reached(self.version, era)

    @property
    def geforce(self) -> bool:
        """A GeForce part, by the driver's name for the GPU ("NVIDIA GeForce RTX 3090"): its V1 capture takes the
        one-off alone (phases.py geforce_capture), and its PCIe links give no peer access (profile.py
        context_bytes)."""
        return "geforce" in self.gpu_name.lower()


# a PCIe card by its name as the driver or the catalog gives it ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe")
_PCIE_PART = re.compile(r"PCI-?E", re.IGNORECASE)


def _gpu_info(dev: Device | None) -> tuple[tuple[int, int] | None, str, int | None]:
    """(compute capability, name, SM count) of the first GPU; the capability and SM count as the GPU catalog gives
    them with the Device, None when unknown. The name is matched the way vLLM matches torch.cuda.get_device_name()."""
    if dev is None:
        return None, "", None
    return dev.compute_capability, dev.name or "", dev.sm_count


def cuda_total(dev: Device) -> int | None:
    """vLLM's total_memory (torch.cuda.mem_get_info): the device's memory less what the driver reserves, or CUDA's
    own total where the GPU catalog has a reading of it (A100s keep more: the 80GB PCIe part 871 MiB)."""
    if dev.memory_bytes is None:
        return None
    return max(dev.memory_bytes - driver_reserved(dev), 0)


def driver_reserved(dev: Device) -> int:
    """What the driver keeps out of CUDA's total on this device."""
    if dev.cuda_total_bytes is not None and dev.memory_bytes is not None and dev.cuda_total_bytes <= dev.memory_bytes:
        return dev.memory_bytes - dev.cuda_total_bytes
    return CUDA_DRIVER_RESERVED


def pp_partition(n_layers: int, pp: int, version: Version | None = None, partition: str = ""
                 ) -> list[tuple[int, int]]:
    """distributed/utils.py get_pp_indices: VLLM_PP_LAYER_PARTITION's layers per stage where it is set, else an
    even split, the remainder to the stages before the last (the second-to-last first; 0.8+), or all of it to the
    last stage (0.5.1-0.7.x: DeepSeek-R1's 61 layers at -pp 3 are 20/20/21 there, the last node fullest,
    vllm#12895)."""
    if partition:
        per = parse_pp_partition(partition, n_layers, pp)
    else:
        per = [n_layers // pp] * pp
        rem = n_layers % pp
        if version is not None and not ERAS.reached(version, "pp_remainder_spread"):
            per[-1] += rem
            rem = 0
        for i in range(2, rem + 2):
            per[-i] += 1
    out, start = [], 0
    for n in per:
        out.append((start, start + n))
        start += n
    return out


def parse_pp_partition(text: str, n_layers: int, pp: int) -> list[int]:
    """VLLM_PP_LAYER_PARTITION as get_pp_indices reads it: `[int(layer) for layer in s.split(",")]`, one count per
    stage, summing to the layers, with its errors."""
    try:
        parts = [int(layer) for layer in text.split(",")]
    except ValueError:
        raise OomkitError(f"VLLM_PP_LAYER_PARTITION: Invalid partition string: {text} (comma-separated layer "
                          "counts, one per pipeline stage)") from None
    if len(parts) != pp:
        raise OomkitError(f"VLLM_PP_LAYER_PARTITION={text}: len(partitions)={len(parts)} does not match "
                          f"pp_size={pp}.")
    if sum(parts) != n_layers:
        raise OomkitError(f"VLLM_PP_LAYER_PARTITION={text}: sum(partitions)={sum(parts)} does not match "
                          f"num_hidden_layers={n_layers}.")
    return parts


def _model_dtype(spec: ModelSpec, s: VllmSettings, version: Version, cc) -> str:
    """config/model.py _get_and_verify_dtype / _resolve_auto_dtype."""
    want = DTYPE_ALIASES.get(s.dtype.lower(), s.dtype.lower())
    config_dtype = _checkpoint_dtype(spec)
    bf16_ok = cc is None or cc >= (8, 0)
    if want == "auto":
        dtype = config_dtype
        if dtype == "float32":  # "Downcast for float32 models" to the platform's first supported dtype
            dtype = "bfloat16" if bf16_ok and version >= (0, 9, 0) else "float16"
        if dtype == "bfloat16" and not bf16_ok:
            dtype = "float16"  # "Your device ... doesn't support torch.bfloat16. Falling back to torch.float16"
        return dtype
    if want not in FLOAT_BYTES:
        raise OomkitError(f"Unknown dtype: {s.dtype!r}")
    if want == "bfloat16" and not bf16_ok:
        raise OomkitError(f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your GPU "
                          f"has compute capability {cc[0]}.{cc[1]}. You can use float16 instead by explicitly "
                          "setting the `dtype` flag in CLI, for example: --dtype=half.")
    return want


def _checkpoint_dtype(spec: ModelSpec) -> str:
    """The dtype the checkpoint's unquantized tensors carry (config torch_dtype); bfloat16 when unsure.
    Not quant/dtypes.unquantized_dtype: that folds llama.cpp's f16/f32 onto torch names, and a GGUF's F16 format
    or F32 norms are no config torch_dtype to vLLM."""
    fmt = spec.weights.format.lower()
    if fmt in FLOAT_BYTES:
        return fmt
    for t in spec.weights.tensors:  # a quantized checkpoint keeps its norms in the config's dtype
        if t.name.endswith("norm.weight") and t.dtype.lower() in FLOAT_BYTES:
            return t.dtype.lower()
    return "bfloat16"


# config/model.py _get_and_verify_max_len: rope types whose factor the derived length leaves out, by first release
# (read in the sdists 0.3.3-0.20.0 and wheels 0.21.0-0.34.0). 0.4.2 skips "su"; 0.5.1 adds "longrope"; 0.5.3.post1
# "llama3" (0.5.3 itself skipped "extended", a name no released config kept; release numbers do not tell a .post1
# apart, so 0.5.3 takes the later rule); 0.30.0 the YaRN kinds ("YaRN variants leave max_position_embeddings already
# scaled"), whose derived length was original_max_position_embeddings x factor before
_ROPE_SKIPPED = (
    ((0, 30, 0), frozenset({"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"})),
    ((0, 5, 3), frozenset({"su", "longrope", "llama3"})),
    ((0, 5, 1), frozenset({"su", "longrope"})),
    ((0, 4, 2), frozenset({"su"})),
)


# --hf-overrides fields oomkit applies (the context length and its scaling), and those that change nothing it counts
_OVERRIDE_APPLIED = ("rope_scaling", "rope_parameters", "original_max_position_embeddings") + CONTEXT_LENGTH_KEYS
_OVERRIDE_NEUTRAL = ("architectures", "rope_theta", "use_cache", "bos_token_id", "eos_token_id", "pad_token_id")
# fields that change the layers' shapes or the weights: not replayed on a spec already built
_OVERRIDE_SHAPES = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                    "intermediate_size", "moe_intermediate_size", "vocab_size", "num_experts", "num_local_experts",
                    "n_routed_experts", "sliding_window", "layer_types", "kv_lora_rank", "text_config",
                    "tie_word_embeddings", "quantization_config", "torch_dtype", "dtype")


def with_hf_overrides(spec: ModelSpec, overrides: str | None) -> tuple[ModelSpec, list[str]]:
    """The model with --hf-overrides merged into its config (ModelConfig.hf_overrides, applied to the config before
    _get_and_verify_max_len): a new rope_scaling / rope_parameters and max_position_embeddings change the derived
    max_model_len. A field that reshapes the layers is refused rather than ignored; one oomkit does not count is
    named in a warning."""
    if not overrides:
        return spec, []
    try:  # the Python API's hf_overrides= arrives as typed, unread by args.py
        cfg = json.loads(overrides)
    except (TypeError, ValueError):
        raise SettingsError(f"hf_overrides {str(overrides)[:40]!r}: not JSON; give a JSON object, as --hf-overrides "
                            "takes") from None
    if not isinstance(cfg, dict):
        raise SettingsError(f"hf_overrides {str(overrides)[:40]!r}: expected a JSON object")
    text = cfg.get("text_config")
    if isinstance(text, dict) and text and all(k in _OVERRIDE_APPLIED or k in _OVERRIDE_NEUTRAL for k in text):
        # a multimodal model's language config given its rope / length (the Qwen3.5 and 3.6 model cards'
        # {"text_config": {"rope_parameters": ...}}): ModelConfig.__post_init__ merges a dict-valued override into the
        # nested PretrainedConfig (_apply_dict_overrides, vllm/config/model.py) before hf_text_config is taken and
        # get_and_verify_max_len runs; that text config is the spec oomkit builds
        cfg = {**{k: v for k, v in cfg.items() if k != "text_config"}, **text}
    if shaped := [k for k in cfg if k in _OVERRIDE_SHAPES]:
        raise SettingsError(f"--hf-overrides {shaped[0]}: oomkit does not rebuild the model's layers from an override; "
                            "write it into a copy of config.json and give that directory as the model")
    lengths = dict(spec.config_lengths)
    for key in CONTEXT_LENGTH_KEYS:  # the fields _get_and_verify_max_len reads, in the config the override patched
        if key not in cfg:
            continue
        n = cfg[key]
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise SettingsError(f"--hf-overrides {key}={n!r}: not a positive integer")
        lengths[key] = n
        if key == "max_position_embeddings":
            spec = replace(spec, n_ctx_train=n)
    if lengths != dict(spec.config_lengths):
        if not spec.config_lengths and spec.n_ctx_train:  # a GGUF's context_length stands for max_position_embeddings
            lengths.setdefault("max_position_embeddings", spec.n_ctx_train)
        spec = replace(spec, config_lengths=tuple((k, lengths[k]) for k in CONTEXT_LENGTH_KEYS if k in lengths))
    if any(k in cfg for k in ("rope_scaling", "rope_parameters", "original_max_position_embeddings")):
        rope_cfg = {k: v for k, v in cfg.items() if k in _OVERRIDE_APPLIED}
        if "rope_scaling" not in cfg and "rope_parameters" not in cfg and spec.rope_scaling is None:
            rope = None
        elif "rope_scaling" in cfg or "rope_parameters" in cfg:
            rope = rope_scaling(rope_cfg, "--hf-overrides")
        else:
            rope = replace(spec.rope_scaling, original_context=cfg["original_max_position_embeddings"])
        spec = replace(spec, rope_scaling=rope)
    ignored = [k for k in cfg if k not in _OVERRIDE_APPLIED and k not in _OVERRIDE_NEUTRAL]
    warnings = [f"--hf-overrides {', '.join(ignored)}: not counted by oomkit's estimate"] if ignored else []
    return spec, warnings


# config/model.py _get_and_verify_max_len possible_keys, by first release (read in the sdists 0.3.3, 0.4.1, 0.5.4-0.7.3
# and wheels on; transformers_utils/model_arch_config_convertor.py derive_max_model_len_and_key from 0.14): the
# smallest of those present in the text config. 0.4.1 adds model_max_length (Command-R; no 0.4.0 on PyPI), 0.7.0
# max_target_positions (Whisper); the order changes nothing, the minimum is taken
_LENGTH_KEYS = (
    ((0, 7, 0), ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")),
    ((0, 4, 0), ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_sequence_length", "max_seq_length", "seq_len")),
    ((0, 0, 0), ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_sequence_length",
                 "max_seq_length", "seq_len")),
)


def config_max_len(spec: ModelSpec, version: Version) -> tuple[int, str | None]:
    """_get_and_verify_max_len before the rope factor -> (length, the key it came from; 0, None: no key). The smallest
    of the release's keys the config gives; from 0.8.3 a config's model_max_length replaces it ("For Command-R /
    Cohere, Cohere2 / Aya Vision models": derived_max_model_len = model_max_length, smaller or not). A spec read from
    no config.json (a GGUF) has its n_ctx_train only. RoBERTa / XLM-R pooling models (positions start after
    padding_idx: n_ctx_train is max_position_embeddings less 1 + pad_token_id, hf_config.py) keep n_ctx_train: vLLM
    takes their sentence_bert_config.json max_seq_length over the config from 0.6.4 (encoder_config) and caps at their
    tokenizer_config's model_max_length from 0.9.1 (pooling models only from 0.9.2), which the catalog's checkpoints
    set to it (512, 8192); oomkit reads neither file, so no other model's is applied (vllm#25865: a fine-tune whose
    tokenizer says 512 gets 512)."""
    if not spec.config_lengths:
        return spec.n_ctx_train, "max_position_embeddings" if spec.n_ctx_train else None
    keys = next(k for since, k in _LENGTH_KEYS if version >= since)
    given = dict(spec.config_lengths)
    found = [(given[k], k) for k in keys if k in given]
    if not found:
        return 0, None
    n, key = min(found, key=lambda x: x[0])  # the first key of the smallest value (max_len < derived: strict)
    if version >= (0, 8, 3) and "model_max_length" in given:
        n, key = given["model_max_length"], "model_max_length"
    if spec.architecture == "bert" and 0 < spec.n_ctx_train < given.get("max_position_embeddings", 0):
        n = min(n, spec.n_ctx_train)
    return n, key


def derived_max_model_len(spec: ModelSpec, version: Version) -> int:
    """config/model.py _get_and_verify_max_len: the config's length (config_max_len; 2048 when it declares none) times its
    rope_scaling factor, by release (_ROPE_SKIPPED). Gemma 3's 128K is already scaled: skipped from 0.8.0 ("gemma3" in
    model_type), its first release. A dict without a factor (mrope, default) counts 1 (0.6.1: mrope; 0.6.4:
    rope_scaling.get("factor", 1.0); before, an assert); yarn starts from original_max_position_embeddings up to
    0.29 (deepseek-coder-6.7b, linear x 4: 16,384 -> 65,536 on 0.4.2, vllm#5248)."""
    base = config_max_len(spec, version)[0] or 2048
    rope = spec.rope_scaling
    if rope is None or (version >= (0, 8, 0) and "gemma3" in spec.architecture):
        return base
    skipped = next((kinds for since, kinds in _ROPE_SKIPPED if version >= since), frozenset())
    if rope.type in skipped:
        return base
    if rope.type == "yarn" and rope.original_max_position_embeddings:  # (a KeyError in vLLM without it)
        base = rope.original_max_position_embeddings
    return int(base * (rope.factor or 1.0))


def _default_max_model_len(spec: ModelSpec, version: Version, derived: int) -> int:
    """No --max-model-len (or -1): the derived length, except LongRoPE from 0.11.1, which defaults to the config's
    top-level original_max_position_embeddings "to avoid performance degradation for shorter sequences"
    (getattr(hf_config, ..., derived); "su" is renamed longrope on loading from 0.6.4, transformers_utils/config.py
    patch_rope_scaling_dict)."""
    rope = spec.rope_scaling
    if rope is not None and rope.type in ("longrope", "su") and version >= (0, 11, 1):
        return rope.original_context or derived
    return derived


def _max_model_len(spec: ModelSpec, s: VllmSettings, version: Version, warnings: list[str]) -> tuple[int, int]:
    """config/model.py _get_and_verify_max_len -> (max_model_len, the derived maximum)."""
    length, key = config_max_len(spec, version)
    if not length:
        if s.max_model_len is not None and s.max_model_len > 0:  # "If max_model_len is specified, we use it."
            return s.max_model_len, s.max_model_len
        warnings.append("the model declares no maximum length: vLLM assumes 2048")  # "Assuming ... is 2048"
    derived = derived_max_model_len(spec, version)
    if s.max_model_len is None or s.max_model_len == -1:
        return _default_max_model_len(spec, version, derived), derived
    max_len = s.max_model_len
    if max_len <= 0:
        raise OomkitError(f"max_model_len must be positive, got {max_len}")
    # from 0.4.1 a max_model_len up to the config's own model_max_length passes ("Some models might have a separate
    # key for specifying model_max_length that will be bigger than derived_max_model_len")
    model_max_length = dict(spec.config_lengths).get("model_max_length") if version >= (0, 4, 0) else None
    if max_len > derived and (model_max_length is None or max_len > model_max_length):
        msg = (f"User-specified max_model_len ({max_len}) is greater than the derived max_model_len "
               f"({key}={derived} or model_max_length={model_max_length} in model's config.json).")
        if not s.allow_long_max_model_len:
            raise OomkitError(f"{msg} To allow overriding this maximum, set the env var "
                              "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used "
                              "with extreme caution.")
        warnings.append(msg + " Allowed by VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.")
    return max_len, derived


# what replaces a removed flag, where vLLM's own help of its last release does not say it
_REMOVED_HINTS = {
    # --rope-scaling / --rope-theta, deprecated since PR #5836, removed by PR #28006 (settings.ERAS rope_flags_removed;
    # gpustack#4236 shows 0.13.0's 'unrecognized arguments')
    "--rope-scaling": "removed by PR #28006: give --hf-overrides '{\"rope_scaling\": {...}}'",
    "--rope-theta": "removed by PR #28006: give --hf-overrides '{\"rope_theta\": ...}'",
    # AsyncEngineArgs: --enable-log-requests (0.10.1+) took its place, requests are not logged by default
    "--disable-log-requests": "requests are not logged unless --enable-log-requests is given",
}


FLAGS_FILE = "vllm_flags.json"


def _release_flags(s: VllmSettings, version: Version) -> list[str]:
    """The typed flags that only some releases' parsers have (args.parse_args), held against `version`: one it
    does not have is refused as its parser refuses it, naming where the flag is (engines/release_flags.py, read
    from the wheels); one it marks deprecated is accepted with its note; an abbreviation kept with its candidates is
    matched against that parser's flags (release_flags.resolve_abbreviations). -> the notes."""
    typed = tuple(dict.fromkeys(s.release_flags))
    if not typed and not s.abbreviations:
        return []
    if re.match(r"v?\d+\.\d+", str(s.engine_version)):  # parse_version drops a post release: 0.6.3.post1 is its own
        version = release_key(str(s.engine_version))
    prog = program_name(version)  # the parser signs its refusal with its own program's name
    resolve_abbreviations(FLAGS_FILE, s.abbreviations, version, prog, f"vLLM {s.engine_version}")
    refuse_unknown(FLAGS_FILE, typed, version, prog, f"vLLM {s.engine_version}", _REMOVED_HINTS)
    return deprecation_notes(FLAGS_FILE, typed, version, f"vLLM {s.engine_version}")


# engine/arg_utils.py EngineArgs._is_v1_supported_oracle, VLLM_USE_V1 unset: 0.8.0 falls back to V0 for any pipeline
# parallelism (`_warn_or_fallback("PP")`, "PP is supported on V1, but off by default for now"); 0.8.5 for
# "Pipeline Parallelism without Ray distributed executor" (distributed_executor_backend != "ray", vllm#16057); 0.9.0
# kept the fallback for the default backend (None, not in ("ray", "mp", "external_launcher")) until vllm#18915
# (0.9.1; read in 0.9.2: PP runs on V1 with the default, mp, ray or external_launcher backend)
V1_PP_DEFAULT = (0, 9, 1)


def _v1_oracle_falls_back(s: VllmSettings, version: Version) -> bool:
    """Whether the V1 oracle of this release sends a pipeline-parallel start to V0 (see V1_PP_DEFAULT)."""
    if s.pipeline_parallel_size <= 1 or not ERAS["v1_default"] <= version < V1_PP_DEFAULT:
        return False
    return not (version >= (0, 8, 5) and s.distributed_executor_backend == "ray")


# engine/arg_utils.py EngineArgs._is_v1_supported_oracle, 0.8.0-0.8.2 ("LoRA is supported on V1, but off by default
# for now."): `if self.enable_lora and _warn_or_fallback("LORA"): return False`, where _warn_or_fallback falls back
# unless VLLM_USE_V1=1 is set ("LORA is experimental on VLLM_USE_V1=1. Falling back to V0 Engine."); 0.8.3 dropped the
# check (read in the 0.8.0, 0.8.1, 0.8.2, 0.8.3 and 0.8.4 sdists). Held out: DeepSeek-R1-Distill-Qwen-32B-AWQ with
# --enable-lora at TP 2 on 0.8.2 (hiyouga/LlamaFactory#7658: V0's model_runner.py / worker.py lines)
V1_LORA_DEFAULT = (0, 8, 3)


def _v1_oracle_lora_falls_back(s: VllmSettings, version: Version) -> bool:
    """Whether the V1 oracle of this release sends an --enable-lora start to V0 (see V1_LORA_DEFAULT)."""
    return ERAS["v1_default"] <= version < V1_LORA_DEFAULT and s.enable_lora


# engine/arg_utils.py EngineArgs._is_v1_supported_oracle from 0.8.0 (V1 the default) to 0.10.2: `if not
# model_config.is_v1_compatible: _raise_or_fallback(feature_name=model_config.architectures)`, where
# model_executor/models/registry.py _ModelRegistry.is_v1_compatible is `not model_cls.supports_v0_only` (a class that
# mixes in interfaces.py SupportsV0Only). Unset, VLLM_USE_V1 falls back to V0 ("... is not supported by the V1 Engine.
# Falling back to V0."); set to 1 it raises NotImplementedError("VLLM_USE_V1=1 is not supported with ..."). Rows:
# (the class, a test on the spec, the releases whose class carries the marker, read in the 0.8.0-0.8.5, 0.9.0-0.9.2,
# 0.10.0, 0.10.1.1 and 0.10.2 sdists). Gemma3ForConditionalGeneration (the Gemma 3 checkpoints with a vision tower;
# text-only Gemma3ForCausalLM never was) is SupportsV0Only in 0.8.0 only (models/gemma3_mm.py; gone in 0.8.1). The
# Mamba-style classes (each carries IsHybrid or IsAttentionFree beside the marker; read in the 0.8.0-0.8.5, 0.9.0,
# 0.9.1, 0.9.2, 0.10.0, 0.10.1, 0.10.1.1 and 0.10.2 sources): JambaForCausalLM and MambaForCausalLM to 0.10.0,
# Mamba2ForCausalLM (and BambaForCausalLM, Zamba2ForCausalLM, which oomkit does not read) to 0.9.1,
# FalconH1ForCausalLM and GraniteMoeHybridForCausalLM from their first release (0.9.0) to 0.9.1, NemotronHForCausalLM
# in 0.9.1 only (its first release); 0.9.2 runs Mamba-2 hybrids on V1 and 0.10.1 Jamba and Mamba. On V0 their state
# is MambaCacheManager's, outside the KV blocks (kv.v0_mamba_cache_bytes). mllama is handled above (MLLAMA_LAST).
V0_ONLY_CLASSES: tuple[tuple[str, Callable[[ModelSpec], bool], Version, Version], ...] = (
    ("Gemma3ForConditionalGeneration",
     lambda spec: spec.architecture == "gemma3" and any(t.kind == "vision" for t in spec.towers), (0, 8, 0), (0, 8, 0)),
    ("JambaForCausalLM", lambda spec: spec.architecture == "jamba", (0, 8, 0), (0, 10, 0)),
    ("MambaForCausalLM", lambda spec: spec.architecture == "mamba", (0, 8, 0), (0, 10, 0)),
    ("Mamba2ForCausalLM", lambda spec: spec.architecture == "mamba2", (0, 8, 0), (0, 9, 1)),
    ("FalconH1ForCausalLM", lambda spec: spec.architecture == "falcon-h1", (0, 9, 0), (0, 9, 1)),
    ("GraniteMoeHybridForCausalLM", lambda spec: spec.architecture == "granitehybrid", (0, 9, 0), (0, 9, 1)),
    ("NemotronHForCausalLM", lambda spec: spec.architecture in ("nemotron_h", "nemotron_h_moe"), (0, 9, 1),
     (0, 9, 1)),
)


def _v0_only_class(spec: ModelSpec, version: Version) -> str | None:
    """The vLLM class name of a model the release runs on V0 only (V0_ONLY_CLASSES), else None."""
    return next((name for name, test, first, last in V0_ONLY_CLASSES if first <= version <= last and test(spec)), None)


# the last release with models/mllama.py (Llama 3.2 Vision, V0's encoder-decoder runner; added in 0.6.2, PR #8811)
MLLAMA_LAST = (0, 10, 2)


def default_utilization(version: tuple[int, ...]) -> float:
    """--gpu-memory-utilization's default: 0.9, 0.92 from 0.20 (config/cache.py CacheConfig)."""
    return 0.92 if version >= ERAS["cudagraph_budget"] else 0.9


def resolve(spec: ModelSpec, devices: tuple[Device, ...], s: VllmSettings) -> Resolved:
    version = parse_version(s.engine_version)
    check_model_release(spec, version)
    warnings: list[str] = _release_flags(s, version)
    if s.model_flag_beside_tag:
        if version < ERAS["serve_tag_over_model_flag"]:
            raise OomkitError("With `vllm serve`, you should provide the model as a positional argument instead of "
                              f"via the `--model` option. (vLLM {s.engine_version})")
        warnings.append(f"--model {clip_word(s.model_flag_beside_tag)} is not used: vllm serve's positional model takes "
                        "precedence (entrypoints/cli/serve.py, 0.8.3 on)")
    v1 = version >= ERAS["v1_default"] if s.use_v1 is None else s.use_v1
    if spec.architecture == "mllama":
        if version > MLLAMA_LAST:
            # model_executor/models/registry.py _PREVIOUSLY_SUPPORTED_MODELS["MllamaForConditionalGeneration"] =
            # "0.10.2": PR #24907 (Remove V0 Encoder-Decoder Support) deleted models/mllama.py; the registry's words
            raise OomkitError("Model architecture MllamaForConditionalGeneration was supported in vLLM until v0.10.2, "
                              "and is not supported anymore. Please use an older version of vLLM if you want to use "
                              f"this model architecture. (vLLM {s.engine_version})")
        if v1 and s.use_v1:
            raise OomkitError(f"vLLM {s.engine_version}: V1 does not run encoder-decoder models such as mllama "
                              "(engine/arg_utils.py _is_v1_supported_oracle); leave VLLM_USE_V1 unset")
        v1 = False  # the oracle falls back to V0 for an encoder-decoder model
        warnings.append("mllama runs on V0's encoder-decoder runner: a block holds every layer's K and V, the "
                        "cross-attention layers' over the image tokens (1601 x 4 tiles per image, in the sequence's "
                        "cross block table, from the same pool); the vision encoder's profile activations are not "
                        "modelled")
    if v1 and version < ERAS["v1_only"] and (v0_class := _v0_only_class(spec, version)) is not None:
        if s.use_v1:
            raise OomkitError(f"NotImplementedError: VLLM_USE_V1=1 is not supported with ['{v0_class}']. (vLLM "
                              f"{s.engine_version} marks {v0_class} SupportsV0Only); leave VLLM_USE_V1 unset")
        v1 = False
        warnings.append(f"vLLM {s.engine_version} runs {v0_class} on the V0 engine: the class is SupportsV0Only in "
                        f"this release, so the V1 oracle falls back (\"['{v0_class}'] is not supported by the V1 "
                        "Engine. Falling back to V0.\")")
    if v1 and s.use_v1 is None and _v1_oracle_falls_back(s, version):
        v1 = False
        warnings.append(f"vLLM {s.engine_version} runs pipeline parallelism on the V0 engine: its V1 oracle falls "
                        "back to V0 for it (\"Falling back to V0\"), where each pipeline stage's virtual engine "
                        "holds 1/pp of the KV blocks")
    if v1 and s.use_v1 is None and _v1_oracle_lora_falls_back(s, version):
        v1 = False
        warnings.append(f"vLLM {s.engine_version} runs --enable-lora on the V0 engine: its V1 oracle falls back to V0 "
                        "for LoRA unless VLLM_USE_V1=1 is set (\"LORA is experimental on VLLM_USE_V1=1. Falling back "
                        "to V0 Engine.\")")
    if version >= ERAS["v1_only"]:
        v1 = True
    elif v1 and version < (0, 7, 0):
        raise OomkitError(f"the V1 engine (VLLM_USE_V1=1) needs vLLM 0.7 or newer, not {s.engine_version}")
    tp, pp, dp = s.tensor_parallel_size, s.pipeline_parallel_size, s.data_parallel_size
    if min(tp, pp, dp) < 1:
        raise OomkitError("tensor, pipeline and data parallel sizes must be at least 1")
    util = s.gpu_memory_utilization if s.gpu_memory_utilization is not None else default_utilization(version)
    if not 0 < util <= 1:
        raise OomkitError(f"GPU memory utilization must be within (0, 1]. Got {util}.")
    first = devices[0] if devices else None
    cc, gpu_name, sm_count = _gpu_info(first)
    cc_guessed = False
    if cc is None and first is not None:
        cc, cc_guessed = (9, 0), True  # an unnamed GPU: assume a current datacenter part (Hopper)
    # NVLink between the GPUs: as the catalog says for a named part; an unnamed part of 70 GiB or more is taken to
    # be the NVLink data-centre part the capability guess above assumes (as engines/sglang/layout.py does)
    nvlink = bool(first is not None and (first.nvlink or (
        cc_guessed and first.nvlink is None and (first.memory_bytes or 0) >= 70 * GiB)))
    if nvlink and tp > 2 and _PCIE_PART.search(gpu_name):
        # the PCIe card of an NVLink family (A100-PCIE-40GB, A100 80GB PCIe, H100 PCIe): an NVLink bridge joins two
        # cards at most, so a TP group beyond two talks over PCIe (distributed/device_communicators/
        # custom_all_reduce.py CustomAllreduce.__init__: "Custom allreduce is disabled because it's not supported on
        # more than two PCIe-only GPUs", 0.4 -> 0.3x) and NCCL holds its PCIe buffers (profile.py COMM_PCIE). Two
        # cards may share a bridge the name does not say: left as the family is. Held out: vllm#15983 (4 x
        # A100-PCIE-40GB, TP4, Qwen2.5-VL-72B, 8,192 tokens, V0 0.7.3 started): 6,464 KV tokens (< 8,192: refused)
        # with NVLink's communicators (2.14 GiB), 31,232 with PCIe's 0.25
        nvlink = False
    spans = tp_spans_nodes(tp, tp * pp * dp, s.nnodes)
    if spans and not _multi_node_nvlink(gpu_name):
        # a TP group across machines talks over the network: custom_all_reduce.py CustomAllreduce.__init__ turns the
        # custom all-reduce off ("Custom allreduce is disabled because this process group spans across nodes",
        # 0.5.4-0.26; from 0.27 it keeps it across machines only over multi-node NVLink, its MNNVL path) and NCCL's
        # transport between the machines is its network one, not the NVLink buffers (held out: two Ray nodes with
        # one A100 each, TP2, 0.10.1.1: budget 11.03 GiB printed, 9.21 with NVLink's communicators, 11.03 without)
        nvlink = False
    _check_parallel(spec, tp)
    quantization.check_release(s.quantization, version, None if cc_guessed else cc, tp, pp, program_name(version))
    warnings += quantization.check(spec, s.quantization)
    quantization.check_checkpoint_release(spec, version, str(s.engine_version))
    quantization.check_fp8_block_tp(spec, tp, dp, s.enable_expert_parallel, version)
    if (pbwo := quantization.modelopt_pbwo_warning(spec, version)) is not None:
        warnings.append(pbwo)
    dtype = _model_dtype(spec, s, version, cc)
    kv_taken, kv_reason = auto_kv_dtype(spec, version) if s.kv_cache_dtype.lower() == "auto" else (None, "")
    kv_dtype = _kv_dtype(spec, replace(s, kv_cache_dtype=kv_taken) if kv_taken else s, version, dtype, cc)
    if kv_taken:
        warnings.append(kv_reason)
    _attention_config_fields(s, version)
    if (s.indexer_kv_dtype != "auto" or s.use_fp4_indexer_cache) and spec.architecture not in DSV4_ARCHS and any(
            la.attention is not None and la.attention.index_head_dim for la in spec.layers):
        given = s.indexer_kv_dtype if s.indexer_kv_dtype != "auto" else "use_fp4_indexer_cache"
        warnings.append(f"--attention-config's indexer cache dtype ({given}) is modelled for DeepSeek-V4 only: "
                        f"{spec.name}'s indexer cache is sized in its default dtype")
    if kv_dtype in NVFP4 and (0, 21, 0) <= version < (0, 22, 0) and cc is not None and cc[0] != 10:
        # 0.22's FlashInferMetadataBuilder: "trtllm-gen FP4 FMHA kernels only exist for sm100f (sm_100/sm_103).
        # Fail fast at init rather than crashing on the first request."
        warnings.append(f"vLLM 0.21 takes --kv-cache-dtype {kv_dtype} on compute capability {cc[0]}.{cc[1]}, but its "
                        "trtllm-gen FP4 attention kernels exist only for SM 10.x: expect a failure at the first "
                        "request (0.22-0.31 refuse it at start-up, 0.32 runs it on SM 8.x/9.x/12.x)")
    max_len, derived = _max_model_len(spec, s, version, warnings)
    seqs, tokens, chunked = _batch_defaults(s, version, v1, max_len, first, gpu_name, tp * pp,
                                            v0_chunk_ok=_v0_default_chunking_allowed(spec, s, version))
    if tokens < seqs:
        # SchedulerConfig's check (config.py _verify_args 0.2.7-0.10, config/scheduler.py from 0.11; read to 0.18):
        # a typed --max-num-seqs above the batch's token budget (a defaulted one is clamped to it first)
        raise OomkitError(f"max_num_batched_tokens ({tokens}) must be greater than or equal to max_num_seqs "
                          f"({seqs}): raise --max-num-batched-tokens to {seqs} or lower --max-num-seqs")
    # config/model.py is_prefix_caching_supported: on by default in V1, except for hybrid (Mamba / linear
    # attention) models, where it is experimental and off unless asked for; from 0.28 (HYBRID_PREFIX_DEFAULT) a
    # generative hybrid model (attention beside its recurrent layers) has it on by default as well, an
    # attention-free one still off
    hybrid = any(layer.recurrent is not None for layer in spec.trunk_layers)
    attention = any(layer.attention is not None and layer.kind is not LayerKind.RECURRENT
                    for layer in spec.trunk_layers)
    prefix = s.enable_prefix_caching if s.enable_prefix_caching is not None else (
        v1 and (not hybrid or (attention and version >= HYBRID_PREFIX_DEFAULT)))
    # model_executor/models/config.py MambaModelConfig: prefix caching on a hybrid model caches Mamba states at
    # block boundaries ("align": 2 state pages per request; "all" is chosen only for models declaring
    # SupportsMambaPrefixCaching and is not modelled here)
    mode = s.mamba_cache_mode
    if mode is None:
        mode = "align" if (hybrid and prefix and version >= (0, 15, 0)) else "none"
    if mode not in ("none", "align", "all"):
        raise OomkitError(f"vllm serve: error: argument --mamba-cache-mode: invalid choice: {mode!r} (choose from "
                          "'all', 'align', 'none')")
    runner_v2 = v1 and _runner_v2(spec, s, version, hybrid, warnings)
    if s.pp_layer_partition:  # read by every stage's model at load (distributed/utils.py get_pp_indices)
        parse_pp_partition(s.pp_layer_partition, spec.n_trunk_layers, pp)
    return Resolved(version=version, v1=v1, tp=tp, pp=pp, dp=dp, pp_layer_partition=s.pp_layer_partition,
                    max_model_len=max_len, derived_max_len=derived,
                    util=util, dtype=dtype, dtype_bytes=FLOAT_BYTES[dtype], kv_dtype=kv_dtype, kv_dtype_reason=kv_reason,
                    max_num_seqs=seqs, max_num_batched_tokens=tokens, chunked_prefill=chunked,
                    prefix_caching=prefix, cc=cc, cc_guessed=cc_guessed, nvlink=nvlink, tp_spans_nodes=spans,
                    mamba_cache_mode=mode,
                    num_spec=max(s.num_speculative_tokens, 0),
                    runner_v2=runner_v2, async_scheduling=v1 and _async_scheduling(spec, s, version, pp, runner_v2,
                                                                                   warnings),
                    warnings=tuple(warnings), gpu_name=gpu_name, sm_count=sm_count,
                    gfx_target=first.gfx_target if first is not None else None,
                    mla_off=not quantization.mla_latent_kept(spec, s.quantization, s.mla_disable, version))


# config/speculative.py: the methods async scheduling runs with (VllmConfig.__post_init__: EagleModelTypes = eagle,
# eagle3, extract_hidden_states, the MTP types (mtp and the deprecated <model>_mtp names), DFlashModelTypes; plus
# NgramGPUTypes and dspark); "draft_model" as the text below says; ngram, medusa, mlp_speculator, suffix and
# custom_class turn it off (read in the 0.22.0-0.34.0 wheels)
_ASYNC_SPEC_METHODS = ("eagle", "eagle3", "extract_hidden_states", "dflash", "mtp", "ngram_gpu", "dspark")


def _spec_incompatible(s: VllmSettings, version: Version, explicit: bool) -> str | None:
    """The reason VllmConfig.__post_init__ gives for speculation without async scheduling ("<method>-based
    speculative decoding", "disable_padded_drafter_batch=True"), None when it runs with it. draft_model: accepted
    with an explicit --async-scheduling in every release read, kept on by default from 0.28.0 (async_draft_model)."""
    method = s.speculative_method
    if method is not None and not (method in _ASYNC_SPEC_METHODS or method.endswith("_mtp") or (
            method == "draft_model" and (explicit or version >= ERAS["async_draft_model"]))):
        return f"{method}-based speculative decoding"
    if s.disable_padded_drafter_batch and (method is not None or s.num_speculative_tokens > 0):
        return "disable_padded_drafter_batch=True"
    return None


def _async_scheduling(spec: ModelSpec, s: VllmSettings, version: Version, pp: int, runner_v2: bool,
                      warnings: list[str]) -> bool:
    """config/vllm.py VllmConfig.__post_init__ (read in the 0.22.0-0.34.0 wheels; SchedulerConfig.async_scheduling
    defaults to None there, vLLM's own choice): --async-scheduling / --no-async-scheduling as given, an incompatible
    explicit --async-scheduling a ValueError; left to vLLM, on unless the model runs the pooling runner, the
    speculation method cannot (_spec_incompatible; from 0.33 only on the V1 model runner, from 0.34 never), the
    pipeline is parallel on the V1 model runner (0.31-0.33, async_pp_v1_off), the executor lacks it or ROCm runs
    DeepEP high-throughput DBO. Not read from the command: the executor (uni, mp and the Ray V2 executor, the
    default under Ray: VLLM_USE_RAY_V2_EXECUTOR_BACKEND=1, take it; the V1 Ray executor (=0, up to 0.32) does not)
    and --enable-dbo with --all2all-backend deepep_high_throughput on ROCm. Only the in-flight tokens of sliding /
    chunked layers read it (kv.py kv_tokens_in_flight, from 0.26)."""
    explicit = s.async_scheduling
    spec_given = s.speculative_method is not None or s.num_speculative_tokens > 0
    v1_runner_only = version >= ERAS["async_v1_refused"]
    spec_rules = not v1_runner_only or (not runner_v2 and version < ERAS["async_v1_gone"])
    pp_off = pp > 1 and not runner_v2 and ERAS["async_pp_v1_off"] <= version < ERAS["async_v1_gone"]
    if explicit:
        reason = _spec_incompatible(s, version, True) if spec_rules else None
        if v1_runner_only and reason is None and pp_off:
            reason = "pipeline parallelism"
        if reason is not None and version >= (0, 22, 0):
            if v1_runner_only:
                msg = f"Async scheduling is not supported by the V1 model runner with {reason}."
            elif reason.startswith("disable_padded"):
                msg = "Async scheduling is not compatible with disable_padded_drafter_batch=True."
            else:
                kinds = "EAGLE/MTP/Draft Model/NGram GPU" + (
                    "/DSpark/DFlash " if version >= ERAS["async_pp_v1_off"] else
                    "/DSpark " if version >= (0, 25, 0) else " ")
                msg = f"Currently, async scheduling is only supported with {kinds}kind of speculative decoding"
            raise OomkitError(f"vLLM {s.engine_version}: {msg} (config/vllm.py VllmConfig.__post_init__; drop "
                              "--async-scheduling)")
        return True
    if explicit is False:
        return False
    if s.pooling_runner or spec.architecture in _ENCODER_ONLY:
        return False  # "Disabling asynchronous scheduling by default for pooling model."
    if spec_rules and _spec_incompatible(s, version, False) is not None:
        return False
    if pp_off:
        return False
    windowed = any(layer.kind in (LayerKind.SLIDING, LayerKind.CHUNKED) for layer in spec.layers) or \
        spec.architecture in DSV4_ARCHS
    if spec_rules and spec_given and s.speculative_method is None and windowed and \
            version >= ERAS["in_flight_tokens"]:
        warnings.append("--speculative-config names no method: vLLM infers it from the drafter (config/speculative.py)"
                        "; async scheduling is taken as on (the sliding-window layers hold one more batch of tokens in "
                        "flight), which a Medusa or MLP-speculator drafter" + (
                            "" if version >= ERAS["async_draft_model"] else " or a plain draft model") + " turns off")
    return True


# engine/arg_utils.py _set_default_chunked_prefill_and_prefix_caching_args: 0.26-0.27 "Hybrid models support prefix
# caching but keep it opt-in for now" (is_prefix_caching_supported and not is_hybrid); 0.28.0 drops the exception
# (default_prefix_caching = is_prefix_caching_supported, True for attn_type "hybrid", False for "attention_free"),
# and MambaModelConfig.verify_and_update_config then sets mamba_cache_mode "align" (read in the 0.26.0, 0.27.0,
# 0.28.0, 0.30.0 and 0.34.0 wheels; 0.22-0.25 is_prefix_caching_supported answers False for hybrid models)
HYBRID_PREFIX_DEFAULT = (0, 28, 0)


def tp_spans_nodes(tp: int, world: int, nnodes: int) -> bool:
    """Whether a tensor-parallel group has ranks on two machines: ranks are placed world / nnodes to a machine in
    order (cluster.py rank_name; Ray's placement group, --nnodes with the mp executor) and a TP group is tp
    consecutive ranks (distributed/parallel_state.py initialize_model_parallel, TP innermost), so some group crosses
    a machine's edge unless a machine holds whole groups."""
    if nnodes <= 1 or tp <= 1 or world % nnodes:
        return False
    return (world // nnodes) % tp != 0


def _multi_node_nvlink(gpu_name: str) -> bool:
    """Grace-Blackwell rack parts (GB200 / GB300 NVL72) reach the other machines' GPUs over NVLink (MNNVL): NCCL
    keeps NVLink there, and custom_all_reduce.py (0.27+) its MNNVL path."""
    name = gpu_name.upper()
    return "GB200" in name or "GB300" in name


# config/vllm.py DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES by the llama.cpp names oomkit reads (hf_config.py
# ARCH_BY_MODEL_TYPE): Qwen3ForCausalLM "qwen3"; LlamaForCausalLM / MistralForCausalLM "llama" without experts
# (Mixtral converts to "llama" too); DeepseekV2ForCausalLM "deepseek2" named V2 (V3 and Kimi K2 share the name);
# Qwen2MoeForCausalLM "qwen2moe"; GraniteMoeForCausalLM "granitemoe". 0.25 drops the dense names from the list (every
# dense model is V2 there); 0.28 adds DeepseekV4ForCausalLM, not read by oomkit.
_V2_LISTED_MOE = ("qwen2moe", "granitemoe")
_ENCODER_ONLY = ("bert", "nomic-bert")


def _runner_v2(spec: ModelSpec, s: VllmSettings, version: Version, hybrid: bool, warnings: list[str]) -> bool:
    """config/vllm.py VllmConfig.use_v2_model_runner: VLLM_USE_V2_MODEL_RUNNER when set (opt-in from 0.21, an
    error to turn off from 0.34: "Model Runner V1 has been removed", platforms/interface.py validate_environ),
    else the release's default models (_is_default_v2_model_runner_model, settings.ERAS runner_v2_*). The features
    that send a default model back to V1 (_get_v2_model_runner_unsupported_features: ngram / suffix speculation,
    custom logits processors, prompt embeds, ... before 0.29 also prefill context parallelism and dual batch
    overlap) are not among oomkit's settings, the speculative methods are (_v2_spec_unsupported); Triton is taken to
    be installed."""
    if ERAS.reached(version, "runner_v1_removed"):
        if s.use_v2_model_runner is False:
            raise SettingsError("VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: Model Runner V1 has been "
                                "removed. Unset this variable.")
        return True
    spec_unsupported = _v2_spec_unsupported(s, version)
    if s.use_v2_model_runner is not None:
        if version < (0, 21, 0):
            warnings.append("VLLM_USE_V2_MODEL_RUNNER is modelled from vLLM 0.21 on: the V1 runner's rules are used")
            return False
        if s.use_v2_model_runner and spec_unsupported:
            # config/vllm.py __post_init__: use_v2_model_runner -> _validate_v2_model_runner
            raise SettingsError(f"Model Runner V2 does not yet support: {spec_unsupported}")
        return s.use_v2_model_runner
    default = _default_v2(spec, s, version, hybrid)
    if default and spec_unsupported:
        # use_v2_model_runner: "Model Runner V2 does not yet support %s; using the V1 model runner instead."
        warnings.append(f"Model Runner V2 does not yet support {spec_unsupported}; using the V1 model runner "
                        "instead")
        return False
    return default


def _default_v2(spec: ModelSpec, s: VllmSettings, version: Version, hybrid: bool) -> bool:
    """_is_default_v2_model_runner_model by release (settings.ERAS runner_v2_*)."""
    if not ERAS.reached(version, "runner_v2_qwen3") or spec.architecture in _ENCODER_ONLY:
        return False  # runner_type "generate" only: pooling models stay on V1
    if ERAS.reached(version, "runner_v2_all"):
        return True
    moe = any(layer.ffn.is_moe for layer in spec.trunk_layers)
    arch = spec.architecture
    # DeepSeek-V2 / -V2-Lite / -V2.5 / -Coder-V2 (DeepseekV2ForCausalLM); Prover-V2 is a V3
    deepseek_v2 = arch == "deepseek2" and re.search(r"deepseek[-_ ](coder[-_ ])?v2", spec.name.lower()) is not None
    listed_moe = ERAS.reached(version, "runner_v2_listed") and (arch in _V2_LISTED_MOE or deepseek_v2)
    if ERAS.reached(version, "runner_v2_dense"):
        if spec.attention_free or (hybrid and not (listed_moe and version >= (0, 27, 0))):
            return False  # 0.25-0.26: no hybrid; 0.27-0.28: hybrids only where listed
        return listed_moe or not moe
    dense_listed = arch == "qwen3" or (ERAS.reached(version, "runner_v2_llama") and arch == "llama")
    if ERAS.reached(version, "runner_v2_listed"):  # 0.24: the list alone, quantized checkpoints too
        return (dense_listed and not moe) or listed_moe
    quantized = bool(s.quantization) or spec.weights.format.lower() not in FLOAT_BYTES
    return dense_listed and not moe and not quantized  # 0.22-0.23: "not is_moe and not is_quantized"


# config/vllm.py _get_v2_model_runner_unsupported_features, the speculative methods model runner V2 does not run
# (a default V2 model falls back to V1; VLLM_USE_V2_MODEL_RUNNER=1 is refused). Read in 0.27.1 and 0.29.0 (ngram /
# ngram_gpu, and any method but eagle, eagle3, mtp, dflash, dspark, extract_hidden_states; taken for every release
# before 0.30), 0.30.0, 0.31.0, 0.32.0 and 0.33.0 (the lists below); 0.34.0 has no V1 runner (suffix/, ngram/,
# standalone_ar/ speculators under v1/worker/gpu/spec_decode)
_V2_SPEC_OK_029 = ("eagle", "eagle3", "mtp", "dflash", "dspark", "extract_hidden_states")
_V2_SPEC_UNSUPPORTED = (
    ((0, 33, 0), ("suffix", "custom_class")),
    ((0, 32, 0), ("suffix", "medusa", "mlp_speculator", "custom_class")),
    ((0, 31, 0), ("ngram", "ngram_gpu", "suffix", "medusa", "mlp_speculator", "custom_class")),
    ((0, 30, 0), ("ngram", "ngram_gpu", "draft_model", "suffix", "medusa", "mlp_speculator", "custom_class")),
)


def _v2_spec_unsupported(s: VllmSettings, version: Version) -> str:
    """The speculative feature model runner V2 of this release refuses, in vLLM's words ("" where none): the
    method as SpeculativeConfig resolves it (drafter.py infer_method; num_speculative_tokens alone is the
    checkpoint's MTP, a drafter not named EAGLE is draft_model); before 0.30 also EAGLE-3 under pipeline
    parallelism ("EAGLE3 with pipeline parallelism")."""
    if not (s.speculative_method or s.speculative_model or s.num_speculative_tokens):
        return ""
    method = infer_method(s) or ("draft_model" if s.speculative_model else "mtp")
    if method.endswith("_mtp"):
        method = "mtp"  # config/speculative.py: deepseek_mtp, qwen3_next_mtp, ... are "mtp"
    for first, refused in _V2_SPEC_UNSUPPORTED:
        if version >= first:
            return f"speculative method '{method}'" if method in refused else ""
    if method in ("ngram", "ngram_gpu"):
        return "ngram/ngram_gpu speculative decoding"
    if method not in _V2_SPEC_OK_029:
        return f"speculative method '{method}'"
    if method == "eagle3" and s.pipeline_parallel_size > 1:
        return "EAGLE3 with pipeline parallelism"
    return ""


def _check_parallel(spec: ModelSpec, tp: int) -> None:
    """config/model.py verify_with_parallel_config (its own words for the heads), then the divide() asserts of
    VocabParallelEmbedding and the layers (QKVParallelLinear, linear-attention heads: engines/_tp.py)."""
    att = next((layer.attention for layer in spec.layers if layer.attention is not None), None)
    if att is not None and att.n_heads % tp:
        raise OomkitError(f"Total number of attention heads ({att.n_heads}) must be divisible by tensor parallel "
                          f"size ({tp}).")
    padded = _tp.pad_vocab(spec.n_vocab)
    if padded % tp:  # vocab_parallel_embedding.py: divide(num_embeddings_padded, tp_size); the embedding is
        # built before the decoder layers, so this assert fires first (Qwen3-14B at TP5 in the llm-d sweep)
        raise OomkitError(f"AssertionError: {padded} is not divisible by {tp} (the vocabulary, padded to "
                          f"{VOCAB_PADDING}, must divide evenly over tensor parallel size {tp})")
    _tp.check_tp(spec, tp)
CHECKPOINT_KV_FIRST = (0, 14, 0)  # utils/torch_utils.py resolve_kv_cache_dtype_string: absent in 0.13.0
CHECKPOINT_KV_NVFP4 = (0, 20, 0)  # MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP "nvfp4": absent in 0.19.1


def auto_kv_dtype(spec: ModelSpec, version: Version) -> tuple[str | None, str]:
    """What --kv-cache-dtype auto becomes before CacheConfig is built, and why: (the cache dtype, the reason), or
    (None, the reason) where it stays "auto" (the model dtype).

    - 0.14.0-0.34.0: engine/arg_utils.py create_engine_config passes the flag through utils/torch_utils.py
      resolve_kv_cache_dtype_string, which takes hf_config.quantization_config's get_kv_cache_quant_algo_string for
      "auto": only for a quant_method starting "modelopt" (kv_cache_scheme, then kv_cache_quant_algo, in the
      "quantization" section or the config itself), mapped by MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP: "fp8" ->
      "fp8_e4m3" (0.14+), "nvfp4" -> "nvfp4" (0.20+); an unmapped value warns "Unknown kv_cache_quant_algo" and
      stays "auto". A compressed-tensors kv_cache_scheme is not read there (None: "auto" stays).
    - before 0.14 (0.13.0 read: attention/layer.py Attention.__init__ kv_cache_dtype = cache_config.cache_dtype;
      quantization/modelopt.py ModelOptFp8KVCacheMethod only loads the k/v scales, which kv_cache.py
      BaseKVCacheMethod.process_weights_after_loading uses only when kv_cache_dtype != "auto"): "auto" is the
      model dtype whatever the checkpoint declares."""
    algo, method = spec.checkpoint_kv_cache_dtype, spec.checkpoint_kv_cache_method
    if algo is None:
        return None, ""
    declared = f"the checkpoint's {method or 'quantization_config'} KV cache ({algo})"
    if version < CHECKPOINT_KV_FIRST:
        return None, (f"auto: the model dtype; {declared} is taken for auto from vLLM 0.14.0 "
                      "(resolve_kv_cache_dtype_string), given as --kv-cache-dtype before")
    if not method.startswith("modelopt"):
        return None, (f"auto: the model dtype; vLLM takes only a ModelOpt checkpoint's KV cache quantization for "
                      f"auto (get_kv_cache_quant_algo_string), not {declared}")
    mapped = {"fp8": "fp8_e4m3", **({"nvfp4": "nvfp4"} if version >= CHECKPOINT_KV_NVFP4 else {})}.get(algo)
    if mapped is None:
        later = "; nvfp4 is mapped from 0.20.0" if algo == "nvfp4" else ""
        return None, (f"auto: the model dtype; vLLM does not map {declared} at this release (\"Unknown "
                      f"kv_cache_quant_algo ... Falling back to 'auto'\"{later})")
    return mapped, (f"--kv-cache-dtype auto is {mapped} here: {declared}, which vLLM takes for auto from 0.14.0 "
                    "(resolve_kv_cache_dtype_string)")


def _kv_dtype(spec: ModelSpec, s: VllmSettings, version: Version, model_dtype: str,
              cc: tuple[int, int] | None = None) -> str:
    """config/cache.py CacheDType by release (CACHE_DTYPES), then whether an attention backend takes the choice on
    this model and GPU (nvfp4_kv_support, the MLA-only packed formats)."""
    name = s.kv_cache_dtype.lower()
    if version < KV_DTYPE_FLAG_FIRST:
        if name == "auto":
            return name
        raise OomkitError(f"{program_name(version)}: error: unrecognized arguments: --kv-cache-dtype {s.kv_cache_dtype} "
                          "(vLLM before 0.3.0 has no --kv-cache-dtype: first in 0.3.0, vllm#2279)")
    allowed = cache_dtypes_at(version)
    if name not in allowed:
        listed = ", ".join(repr(c) for c in allowed)
        raise OomkitError(f"{program_name(version)}: error: argument --kv-cache-dtype: invalid choice: "
                          f"{s.kv_cache_dtype!r} (choose from {listed})")
    if spec.architecture in DSV4_ARCHS and version >= DSV4_FIRST:
        return dsv4_kv_dtype(name, version, cc, s.attention_backend)
    mla = any(layer.kind is LayerKind.LATENT for layer in spec.layers)
    sparse = [la.attention for la in spec.layers if la.kind is LayerKind.LATENT and la.attention is not None
              and la.attention.index_head_dim]
    if spec.architecture == "glm_moe_dsa" and name == "auto" and version >= GLM_DSA_FP8 and cc is not None and \
            cc[0] == 10:
        # models/config.py GlmMoeDsaForCausalLM.verify_and_update_config (0.32+; absent in 0.31.0): "Using fp8
        # kv-cache for GlmMoeDsaForCausalLM on SM10x", cache_dtype "auto" -> "fp8_e4m3" (GLM-5, 5.1, 5.2)
        name = "fp8_e4m3"
    if sparse:
        sparse_mla_gpu(spec.name, version, cc)
        name = sparse_mla_kv_dtype(name, version, cc, s.attention_backend, sparse[0].qk_nope_head_dim)
    if name in MLA_PACKED_BYTES and not mla:
        raise OomkitError(f"No valid attention backend found for cuda with kv_cache_dtype={name}: "
                          f"{name} is the DeepSeek sparse-MLA cache format, and {spec.name} has no MLA layers")
    if name.startswith(("turboquant_", "octave_", "ultraquant_")):
        # turboquant_attn.py / rocm_octave_attn.py / ultraquant_attn.py customize_spec: packed slots per head
        # (TurboQuantConfig.slot_size_aligned), with the boundary layers kept unquantized
        # (kv_cache_dtype_skip_layers): not modelled
        raise OomkitError(f"--kv-cache-dtype {name}: vLLM's {name.split('_')[0]} KV cache layout (packed slots per "
                          "head, boundary layers left unquantized) is not modelled; the fp8, per-token-head and "
                          "nvfp4 caches are")
    if name in NVFP4 or name in PER_TOKEN_HEAD:
        if mla:  # neither FlashInfer nor Triton attention is an MLA backend; the MLA backends list neither
            raise OomkitError(f"No valid attention backend found for cuda with kv_cache_dtype={name}: the MLA "
                              f"backends do not take {name} ({spec.name} has MLA layers; nvfp4_ds_mla is the MLA "
                              "format)")
        if name in NVFP4:
            nvfp4_kv_support(spec, name, version, cc)
    return model_dtype if name == "auto" else name


DSV4_FIRST = (0, 20, 0)  # model_executor/models/registry.py: DeepseekV4ForCausalLM first in 0.20.0 (absent in 0.19.1)
DSV4_AUTO_FP8 = (0, 30, 0)  # models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype: "auto" -> "fp8"


def dsv4_kv_dtype(name: str, version: Version, cc: tuple[int, int] | None, backend: str | None) -> str:
    """DeepseekV4ForCausalLM's KV cache dtype by release: every default CUDA path stores the fp8_ds_mla layout
    (UE8M0 block-scaled fp8, 584 B rows; the name written back onto cache_config.cache_dtype), and only an fp8
    choice is taken (read in the 0.20.0-0.34.0 wheels):
    - 0.20-0.22 (model_executor/layers/deepseek_v4_attention.py, 0.22 models/deepseek_v4/attention.py
      DeepseekV4MLAAttention.__init__): assert cache_dtype.startswith("fp8"), "DeepseekV4 only supports fp8 kv-cache
      format for now, got {cache_dtype}" ("auto" included);
    - 0.23 (models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype, use_flashmla_fp8_layout): the same assert,
      "DeepseekV4 FlashMLA fp8 layout only supports fp8 kv-cache, got ..."; 0.24-0.29 (use_fp8_ds_mla_layout;
      read in 0.24, 0.25, 0.27, 0.28, 0.29): "DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got ...";
    - 0.30-0.34: "auto" becomes "fp8" first (so the default is the fp8_ds_mla cache), anything else not fp8 (bfloat16,
      float16, nvfp4_ds_mla, nvfp4, ...) a ValueError "... Please set `--kv-cache-dtype fp8` or select a backend that
      supports bfloat16 KV cache."
    The GPU: FlashMLA's sparse kernels run on SM 9.x / 10.x only, and FlashInfer's SM120 class takes SM 12.x from
    0.24; any other compute capability is refused. The layout is fp8_ds_mla on every default CUDA path: models/deepseek_v4/nvidia/model.py _select_dsv4_attn_cls
    (0.24+) takes DeepseekV4FlashMLAAttention, or DeepseekV4FlashInferSM120Attention on SM 12.x, both
    use_fp8_ds_mla_layout = True. Only an explicit --attention-backend FLASHINFER_MLA_SPARSE_DSV4 off SM 12.x
    (DeepseekV4FlashInferMLAAttention, use_fp8_ds_mla_layout = False; 0.23: any GPU) stores plain bf16 / per-tensor
    fp8 rows (MLAAttentionSpec alignment 512, no state_content_bytes): dsv4_plain_kv_dtype, sized from 0.29."""
    flashinfer = (backend or "").upper() == "FLASHINFER_MLA_SPARSE_DSV4" and version >= (0, 23, 0)
    plain = flashinfer and (version < (0, 24, 0) or cc is None or cc[0] != 12)
    # _select_dsv4_attn_cls (0.24+): SM 12.x defaults to DeepseekV4FlashInferSM120Attention (the fp8_ds_mla layout),
    # unless a FlashMLA backend is named
    sm120 = version >= (0, 24, 0) and cc is not None and cc[0] == 12 and (backend or "").upper() not in (
        "FLASHMLA_SPARSE", "FLASHMLA_SPARSE_DSV4")
    if cc is not None and not plain and not sm120 and cc[0] not in (9, 10):
        # the FlashMLA path (DeepseekV4FlashMLAAttention; 0.20-0.22 DeepseekV4MLAAttention asserts a FlashMLASparse
        # backend): FlashMLA's sparse kernels exist for SM 9.x / 10.x only (v1/attention/ops/flashmla.py
        # is_flashmla_sparse_supported; DeepseekV4FlashMLABackend.supports_compute_capability: major in [9, 10])
        raise OomkitError(f"vLLM {'.'.join(map(str, version))} runs DeepSeek-V4's attention on FlashMLA sparse "
                          "(\"FlashMLA Sparse is only supported on Hopper and Blackwell DC devices\", compute "
                          "capability 9.x / 10.x" + (", or FlashInfer on 12.x" if version >= (0, 24, 0) else "")
                          + f"): there is no DeepSeek-V4 attention kernel for compute capability {cc[0]}.{cc[1]}")
    if plain:
        return dsv4_plain_kv_dtype(name, version, cc)
    if version >= DSV4_AUTO_FP8 and name == "auto":
        name = "fp8"
    if not name.startswith("fp8"):
        if version >= DSV4_AUTO_FP8:
            raise OomkitError(f"ValueError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {name}. "
                              "Please set `--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache.")
        layout = "DeepseekV4 only supports fp8 kv-cache format for now" if version < (0, 23, 0) else \
            "DeepseekV4 FlashMLA fp8 layout only supports fp8 kv-cache" if version < (0, 24, 0) else \
            "DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache"
        default = " (--kv-cache-dtype auto is not fp8 before 0.30.0)" if name == "auto" else ""
        raise OomkitError(f"AssertionError: {layout}, got {name}{default}; pass --kv-cache-dtype fp8")
    return "fp8_ds_mla"


DSV4_PLAIN = (0, 29, 0)  # the plain-row layout sized from 0.29 (read in the 0.29.0-0.34.0 wheels)


def dsv4_plain_kv_dtype(name: str, version: Version, cc: tuple[int, int] | None) -> str:
    """--attention-backend FLASHINFER_MLA_SPARSE_DSV4 off SM 12.x: DeepseekV4FlashInferMLAAttention
    (models/deepseek_v4/nvidia/flashinfer_sparse.py, use_fp8_ds_mla_layout = False), the plain-row layout
    (models/deepseek_v4/attention.py _resolve_dsv4_kv_cache_dtype: "Plain-row backends store each token's KV row in
    its element dtype: bf16 or per-tensor FP8 E4M3"; fp8* keeps its name, anything else is bfloat16). Its backend
    (DeepseekV4FlashInferMLASparseBackend.supports_combination) takes SM 10.x with auto / bfloat16 / fp8 / fp8_e4m3
    ("FLASHINFER_MLA_SPARSE_DSV4 SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla"; "... requires SM10x
    or SM12x", SM 12.x being the SM120 class). Sized from 0.29 (kv.py deepseek_v4_layer_caches plain_elem): the
    0.29.0-0.34.0 specs give each cache alignment 512 and no state_content_bytes in this layout; before, 0.27 has no
    state_content_bytes in either layout (the page is real_page_size_bytes') and 0.23-0.26 pad the sliding pages to
    the full-MLA ones: not read for this layout."""
    if version < DSV4_PLAIN:
        raise OomkitError("--attention-backend FLASHINFER_MLA_SPARSE_DSV4: DeepSeek-V4's plain-row FlashInfer KV "
                          "layout (bf16 or per-tensor fp8 rows of 512, 512 B page alignment; "
                          "DeepseekV4FlashInferMLAAttention, use_fp8_ds_mla_layout=False) is sized from vLLM 0.29.0 "
                          f"(its page specs of {'.'.join(map(str, version))} not read); the default backend's "
                          "fp8_ds_mla layout is sized")
    if cc is not None and cc[0] != 10:
        raise OomkitError(f"--attention-backend FLASHINFER_MLA_SPARSE_DSV4: FLASHINFER_MLA_SPARSE_DSV4 requires SM10x "
                          f"or SM12x (compute capability {cc[0]}.{cc[1]}; DeepseekV4FlashInferMLAAttention is its SM "
                          "10.x TRTLLM-gen class)")
    if name in ("auto", "bfloat16"):
        return "bfloat16"
    if name in ("fp8", "fp8_e4m3"):
        return name
    raise OomkitError(f"--attention-backend FLASHINFER_MLA_SPARSE_DSV4: kv_cache_dtype not supported ({name}; its SM "
                      "10.x plain-row layout takes auto, bfloat16, fp8 and fp8_e4m3"
                      + (": SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla)" if name == "fp8_ds_mla"
                         else ")"))


DSV4_MXFP4_ROWS = (0, 27, 0)  # models/deepseek_v4/attention.py: k_cache_head_dim = 128 // 2 + 128 // 32 = 68 B


def dsv4_indexer_mxfp4(s: VllmSettings, version: Version, cc: tuple[int, int] | None) -> bool:
    """Whether DeepSeek-V4's indexer keys are MXFP4 rows (68 B: 64 B of packed values + 4 UE8M0 scales, one per 32)
    rather than the FP8 layout of V3.2 (132 B: 128 fp8 + one float32 scale per 128), read in the 0.20.0-0.34.0 wheels:
    - 0.20-0.27: DeepseekV4Indexer.use_fp4_kv = attention_config.use_fp4_indexer_cache (default False); the builder
      asserts SM 10.x (v1/attention/backends/mla/indexer.py "use_fp4_indexer_cache requires Blackwell datacenter
      GPUs ..."); the key cache keeps 132 B rows up to 0.26 and is 68 B from 0.27;
    - 0.28-0.34: dsa_indexer_uses_fp4 (indexer.py): attention_config.resolve_indexer_kv_dtype("fp8"), "auto" is fp8,
      only fp8 / mxfp4 taken, mxfp4 only on SM 10.x (ValueError); 0.28-0.29 still map use_fp4_indexer_cache=True to
      "mxfp4" (config/attention.py __post_init__, deprecated)."""
    if version >= (0, 28, 0):
        name = s.indexer_kv_dtype.lower()
        if s.use_fp4_indexer_cache:
            if name not in ("auto", "mxfp4"):
                raise OomkitError(f"ValueError: use_fp4_indexer_cache=True conflicts with indexer_kv_dtype={name!r}. "
                                  "Set only indexer_kv_dtype.")
            name = "mxfp4"
        name = "fp8" if name == "auto" else name
        if name not in ("fp8", "mxfp4"):
            raise OomkitError(f"ValueError: indexer_kv_dtype={name!r} is not supported by the DeepSeek sparse indexer "
                              "(expected one of ('fp8', 'mxfp4')).")
        fp4 = name == "mxfp4"
        prefix = "ValueError: indexer_kv_dtype='mxfp4'"
    else:
        fp4 = bool(s.use_fp4_indexer_cache)
        prefix = "AssertionError: use_fp4_indexer_cache"
    if fp4 and cc is not None and cc[0] != 10:
        raise OomkitError(f"{prefix} requires Blackwell datacenter GPUs (sm_10x, e.g. B200/GB200); sm_120 (consumer "
                          f"Blackwell) and earlier architectures are not supported (compute capability {cc[0]}.{cc[1]})")
    return fp4 and version >= DSV4_MXFP4_ROWS


def _attention_config_fields(s: VllmSettings, version: Version) -> None:
    """config/attention.py AttentionConfig is a pydantic dataclass with extra="forbid" (config/utils.py): a field the
    release lacks is an error. indexer_kv_dtype exists from 0.24.0 (absent in 0.23.0), use_fp4_indexer_cache up
    to 0.29 (absent in 0.30.0)."""
    for key, given, ok in (("indexer_kv_dtype", s.indexer_kv_dtype != "auto", version >= (0, 24, 0)),
                           ("use_fp4_indexer_cache", s.use_fp4_indexer_cache is not None, version < (0, 30, 0))):
        if given and not ok:
            raise OomkitError(f"--attention-config: vLLM {'.'.join(map(str, version))}'s AttentionConfig has no field "
                              f"{key} (pydantic: extra inputs are not permitted)")


GLM_DSA_FP8 = (0, 32, 0)  # GlmMoeDsaForCausalLM's fp8 default on SM 10.x (read in the 0.31.0-0.34.0 wheels)
SPARSE_MLA_FI_FP8 = (0, 19, 0)  # platforms/cuda.py: "Prefer FlashInfer for fp8 kv cache" on SM 10.x (absent in 0.18.1)
SPARSE_MLA_SM120 = (0, 24, 0)  # FLASHINFER_MLA_SPARSE_SM120 in the SM 12.x priorities (absent in 0.23.0)


def sparse_mla_gpu(model: str, version: Version, cc: tuple[int, int] | None) -> None:
    """The CUDA sparse-MLA backends and the GPUs they take (supports_compute_capability, read in the 0.20.0-0.34.0
    wheels): FLASHMLA_SPARSE 9.x / 10.x, FLASHINFER_MLA_SPARSE 10.x, FLASH_ATTN_MLA_SPARSE (0.26+) and
    FLASHINFER_MLA_SPARSE_SM90 (0.30+) 9.x, FLASHINFER_MLA_SPARSE_SM120 12.x (0.24+). Elsewhere (SM 8.x, SM 12.x before
    0.24) no backend takes the model."""
    if cc is None or cc[0] in (9, 10) or (cc[0] == 12 and version >= SPARSE_MLA_SM120):
        return
    raise OomkitError(f"No valid attention backend found for cuda: {model}'s sparse MLA (the lightning indexer's "
                      "models) runs on FLASHMLA_SPARSE (compute capability 9.x / 10.x) or FLASHINFER_MLA_SPARSE "
                      "(10.x)" + (" or FLASHINFER_MLA_SPARSE_SM120 (12.x)" if version >= SPARSE_MLA_SM120 else
                                  "; SM 12.x from vLLM 0.24.0")
                      + f", none of them on compute capability {cc[0]}.{cc[1]}")


def sparse_mla_kv_dtype(name: str, version: Version, cc: tuple[int, int] | None, backend: str | None,
                        qk_nope: int) -> str:
    """The cache a DeepSeek-V3.2-style sparse MLA model (latent layers with a lightning indexer: V3.2, GLM-5) keeps for
    --kv-cache-dtype NAME, by the sparse backend vLLM picks (read in the 0.11.0, 0.18.1, 0.19.0, 0.20.0, 0.24.0-0.34.0
    wheels):
    - up to 0.11: models/config.py DeepseekV32ForCausalLM.verify_and_update_config turns any fp8 cache into
      fp8_ds_mla ("Using custom fp8 kv-cache format for DeepSeekV3.2");
    - later, layers/attention/mla_attention.py (MLAAttention.__init__; _canonicalize_sparse_mla_kv_cache_dtype from
      0.24): FLASHMLA_SPARSE serves a quantized cache as fp8_ds_mla (656 B rows), FLASHINFER_MLA_SPARSE keeps the
      standard fp8 row ("Using standard fp8 KV cache format ..."; (kv_lora_rank + rope) bytes), and from 0.24
      FLASHINFER_MLA_SPARSE_SM120 turns auto / fp8 / fp8_e4m3 into fp8_ds_mla;
    - platforms/cuda.py _get_backend_priorities: on SM 10.x an fp8 cache prefers FLASHINFER_MLA_SPARSE from 0.19.0
      ("Prefer FlashInfer for fp8 kv cache"; its supports_combination wants qk_nope_head_dim 128 or 192 and an
      index_topk), FLASHMLA_SPARSE before; SM 9.x keeps FLASHMLA_SPARSE for fp8 (FLASH_ATTN_MLA_SPARSE, first from
      0.26, lists no fp8 cache dtype); SM 12.x has FLASHINFER_MLA_SPARSE_SM120 alone from 0.24, so even "auto" is
      fp8_ds_mla there."""
    named = (backend or "").upper()
    if name.startswith("fp8") and name != "fp8_ds_mla":
        flashinfer = named == "FLASHINFER_MLA_SPARSE" or (
            not named and version >= SPARSE_MLA_FI_FP8 and cc is not None and cc[0] == 10 and qk_nope in (128, 192))
        return name if flashinfer and version > (0, 11, 1) else "fp8_ds_mla"
    if name == "auto" and version >= SPARSE_MLA_SM120 and cc is not None and cc[0] == 12 and named in (
            "", "FLASHINFER_MLA_SPARSE_SM120"):
        return "fp8_ds_mla"
    return name


def nvfp4_kv_support(spec: ModelSpec, name: str, version: Version, cc: tuple[int, int] | None) -> None:
    """Where vLLM runs an nvfp4 KV cache (FlashInfer, the only backend listing it; v1/attention/backends/
    flashinfer.py), by release, read in the 0.20.0-0.34.0 wheels:
    - 0.20.0: FlashInferMetadataBuilder.__init__ raises NotImplementedError("nvfp4 KV cache is not yet supported");
    - 0.21.0: runs (the trtllm-gen kernels), no capability check;
    - 0.22-0.24: the builder refuses off SM 10.x ("--kv-cache-dtype nvfp4 requires sm100f ...");
    - 0.25-0.31: FlashInferBackend.supports_kv_cache_dtype takes nvfp4 only on SM 10.x with TRTLLM attention, so the
      selector (platforms/cuda.py get_attn_backend_cls) finds no backend elsewhere;
    - 0.32+: also SM 8.x, 9.x and 12.x through FlashAttention 2 (_nvfp4_kv_on_fa2), plain nvfp4 only (nvfp4_4over6's
      scale search has no writer there).
    FlashInfer's head sizes apply (get_supported_head_sizes: 64, 128, 256; 512 from 0.25)."""
    if version < (0, 21, 0):
        raise OomkitError("NotImplementedError: nvfp4 KV cache is not yet supported (vLLM 0.20.0's FlashInfer "
                          "backend lists nvfp4 but its metadata builder refuses it; it runs from 0.21.0)")
    sizes = {64, 128, 256} | ({512} if version >= (0, 25, 0) else set())
    heads = {d for layer in spec.trunk_layers if layer.attention is not None and layer.kind is not LayerKind.RECURRENT
             for d in (layer.attention.head_dim_k, layer.attention.head_dim_v)}
    major = cc[0] if cc is not None else None
    if version >= (0, 25, 0):
        ok = major in (10, None) or (version >= (0, 32, 0) and name == "nvfp4" and major in (8, 9, 12))
        if not ok or not heads <= sizes:
            why = ("kv_cache_dtype not supported" if not ok else "head_size not supported")
            where = (f"compute capability {cc[0]}.{cc[1]}" if cc is not None else "this GPU")
            raise OomkitError(f"No valid attention backend found for cuda with kv_cache_dtype={name}. Reasons: "
                              f"{{FLASHINFER: [{why}]}} (FlashInfer is the only backend with an {name} KV cache; "
                              f"on {where} vLLM {'.'.join(map(str, version))} runs it "
                              + ("on SM 8.x, 9.x, 10.x and 12.x" if version >= (0, 32, 0) and name == "nvfp4"
                                 else "only on SM 10.x (B200/GB200/B300)") + ")")
        return
    if not heads <= sizes:
        raise OomkitError(f"No valid attention backend found for cuda with kv_cache_dtype={name}. Reasons: "
                          "{FLASHINFER: [head_size not supported]}")
    if version >= (0, 22, 0) and major not in (10, None):  # no GPU given: not checked
        raise OomkitError("ValueError: --kv-cache-dtype nvfp4 requires sm100f, please try a different dtype or "
                          "remove (vLLM's FlashInfer metadata builder, 0.22-0.24: the trtllm-gen FP4 kernels exist "
                          "only for SM 10.x)")


GB10_CC = (12, 1)  # the DGX Spark's GB10: engine/arg_utils.py get_batch_defaults keeps it on the small tier


def _v0_default_chunking_allowed(spec: ModelSpec, s: VllmSettings, version: Version) -> bool:
    """Whether V0 may turn chunked prefill on by itself for max_model_len > 32768 (engine/arg_utils.py
    EngineArgs.create_engine_config 0.5.3-0.7.3, _set_default_args_v0 0.8.0+): not with a sliding window
    (ModelConfig.get_sliding_window: config.json's sliding_window unless use_sliding_window is false) or speculative
    decoding (0.5.3+), prefix caching asked for (0.5.3-0.6.0), seqlen-agnostic (Mamba) layers (0.5.4-0.6.2), a
    multimodal model (0.6.2+), a pooling model (0.6.5+) or MLA (0.8.0+: "Chunked prefill not supported for Multimodal
    or MLA in V0"). Read in the 0.5.3.post1, 0.5.4, 0.5.5, 0.6.0-0.6.6, 0.7.0, 0.7.3, 0.8.0 and 0.8.5.post1 wheels.
    LoRA / prompt adapters and ROCm (0.6.5+) also keep it off; not modelled. Without it V0 profiles
    max(max_model_len, 2048) tokens (config.py SchedulerConfig)."""
    layers = spec.trunk_layers
    if any(layer.kind is LayerKind.SLIDING for layer in layers) or s.num_speculative_tokens or s.speculative_method:
        return False
    if version < (0, 6, 1) and s.enable_prefix_caching:
        return False
    if (0, 5, 4) <= version < (0, 6, 3) and any(layer.recurrent is not None for layer in layers):
        return False
    if version >= (0, 6, 2) and spec.towers:
        return False
    if version >= (0, 6, 5) and s.pooling_runner:
        return False
    # ModelConfig.use_mla: is_deepseek_mla, model_type deepseek_v2 / deepseek_v3 with a kv_lora_rank (oomkit's
    # "deepseek2", model/hf_config.py), and not VLLM_MLA_DISABLE (quantization.mla_latent_kept)
    return not (version >= (0, 8, 0) and not s.mla_disable and spec.architecture == "deepseek2" and any(
        layer.attention is not None and layer.attention.kv_lora_rank for layer in layers))


def _batch_defaults(s: VllmSettings, version: Version, v1: bool, max_len: int, dev: Device | None, gpu_name: str,
                    world: int, v0_chunk_ok: bool = True) -> tuple[int, int, bool]:
    """engine/arg_utils.py get_batch_defaults / _set_default_max_num_seqs_and_batched_tokens_args (V1) and
    config.py SchedulerConfig.__post_init__ (V0) -> (max_num_seqs, max_num_batched_tokens, chunked prefill).
    V1 up to 0.8.3 takes 1,024 sequences on every GPU: 0.7.3's EngineArgs.__post_init__ ("256 if not
    envs.VLLM_USE_V1 else 1024") and 0.8.0-0.8.3's _set_default_args_v1 (default_max_num_seqs = 1024, only the
    batched tokens by GPU name); 0.8.4 takes 1,024 on H100/H200 and 256 elsewhere, 0.8.5 goes by memory
    (batch_by_memory); read in the wheels.
    The GB10 (DGX Spark, SM 12.1) stays on the small tier (256 sequences, 2,048 batched tokens for serve) whatever its
    memory: up to 0.32 the memory comes from NVML (platforms/cuda.py NvmlCudaPlatform.get_device_total_memory,
    nvmlDeviceGetMemoryInfo), which the GB10 does not implement (NVML_ERROR_NOT_SUPPORTED, nvidia-smi's "Not
    Supported"), so get_batch_defaults' try falls to its except (device_memory = 0); from 0.33 that query falls back
    to torch's total_memory and get_batch_defaults keeps the part off the large tiers by capability ("is_gb10 =
    current_platform.is_device_capability((12, 1))"); read in the 0.12.0, 0.27.1, 0.28.0, 0.32.0, 0.33.0 and 0.34.0
    sources. vllm#30855 (0.12.0, one GB10, no batch flags) prints "max_num_batched_tokens=2048"."""
    llm = s.usage_context.lower() in ("llm", "llm_class", "offline")
    cuda_mem = (cuda_total(dev) if dev is not None else None) or 0
    if dev is not None and dev.compute_capability == GB10_CC:
        cuda_mem = 0  # the small tier (above): NVML's failed query up to 0.32, is_gb10 from 0.33
    name = gpu_name.lower()
    if not v1:
        chunked = s.enable_chunked_prefill
        if chunked is None:  # V0: off, then from 0.5.3 on by default for max_model_len > 32K
            chunked = max_len > 32768 and version >= ERAS["v0_long_context_chunked"] and v0_chunk_ok
        seqs = s.max_num_seqs or 256
        if s.max_num_batched_tokens is not None:
            tokens = s.max_num_batched_tokens
        elif chunked:
            tokens = 2048 if version >= ERAS["profile_increase"] else 512
        else:
            tokens = max(max_len, 2048)
        return seqs, tokens, chunked
    chunked = True if s.enable_chunked_prefill is None else s.enable_chunked_prefill
    if version >= ERAS["batch_160gib"] and cuda_mem >= 160 * GiB:
        d_tokens, d_seqs = (16384, 16384), (1024, 1024)
    elif version >= ERAS["batch_by_memory"] and cuda_mem >= 70 * GiB and "a100" not in name:
        d_tokens, d_seqs = (16384, 8192), (1024, 1024)
    elif version < ERAS["batch_by_memory"] and ("h100" in name or "h200" in name):
        d_tokens, d_seqs = (16384, 8192), (1024, 1024)
    elif version < ERAS["v1_seqs_by_gpu"]:
        d_tokens, d_seqs = (8192, 2048), (1024, 1024)
    else:
        d_tokens, d_seqs = (8192, 2048), (256, 256)
    tokens = s.max_num_batched_tokens
    seqs = s.max_num_seqs
    if tokens is None:
        tokens = d_tokens[0] if llm else d_tokens[1]
        if not chunked:
            tokens = max(max_len, tokens)
        tokens = min((seqs or (d_seqs[0] if llm else d_seqs[1])) * max_len, tokens)
    if seqs is None:
        seqs = min(d_seqs[0] if llm else d_seqs[1], tokens)
    return seqs, tokens, chunked
