"""Model names as users type them -> a catalog model plus the weight format the name implies, offline.

Users name the repo they downloaded, not the catalog entry: a quantized derivative ("Qwen/Qwen3-8B-AWQ",
"RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "mlx-community/Qwen3-8B-4bit"), a GGUF repo
("bartowski/Qwen_Qwen3-8B-GGUF", "mradermacher/Qwen3-8B-i1-GGUF"), a URL to any of them, or an Ollama tag with
qualifiers ("qwen3:30b-a3b-thinking-2507-q4_K_M"). `derive` reads such a name into the catalog model it was made
from and the quantization its publisher's naming convention stands for. What the name says is a guess, and every
result says so (`Derivation.labels`); the repo's own config.json, when the hub can be read, wins over it
(model/resolve.py).

The conventions (publisher -> suffix -> what the files hold) are tabled in `_RULES`, each with the tool or repo
whose config it mirrors.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError, OomkitError
from ..quant import gguf_recipes
from . import catalog

# ---- quantization_config of each convention, in the form the quantizing tool writes it ----

# Qwen's and DeepSeek's own "-FP8" repos: block-wise FP8 (Qwen/Qwen3-32B-FP8 config.json, catalog variant).
# MoE routers (mlp.gate) stay unquantized in every layout below, as the published MoE configs list them
# (Qwen/Qwen3-30B-A3B-FP8 modules_to_not_convert, nvidia/Qwen3-235B-A22B-NVFP4 exclude_modules: catalog variants).
_FP8_BLOCK = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128],
              "modules_to_not_convert": ["lm_head", "mlp.gate"]}
# NVIDIA ModelOpt checkpoints (nvidia/Llama-3.1-70B-Instruct-FP8 and nvidia/DeepSeek-V3.1-NVFP4, catalog variants):
# per-tensor FP8 / NVFP4 group 16, lm_head left out, an FP8 KV cache. Their config.json has no quantization_config;
# the algorithms are in hf_quant_config.json's nested "quantization" section, which the engines read as it is
# (SGLang model_loader/weight_utils.py get_quant_config -> modelopt_quant.py from_config, 0.4.6.post5-0.5.23: the
# section's kv_cache_quant_algo, so --kv-cache-dtype auto is FP8 from 0.5.3 / 0.5.4). quant_method "modelopt" is
# what the engines' readers of that file name the method. Kept nested: flattened, SGLang 0.5.4-0.5.14 would read
# only a kv_cache_scheme there and find none.
_MODELOPT_FP8 = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
                 "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                                  "exclude_modules": ["lm_head", "*mlp.gate"]}}
_MODELOPT_NVFP4 = {"quant_method": "modelopt", "producer": {"name": "modelopt"},
                   "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16,
                                    "exclude_modules": ["lm_head", "*mlp.gate"]}}


def _ct(weights: dict[str, Any], fmt: str, acts: dict[str, Any] | None = None) -> dict[str, Any]:
    """A compressed-tensors config as llm-compressor writes it for one preset scheme (compressed-tensors
    quantization/quant_scheme.py PRESET_SCHEMES), lm_head ignored as its recipes do."""
    group: dict[str, Any] = {"targets": ["Linear"], "weights": weights}
    if acts is not None:
        group["input_activations"] = acts
    return {"quant_method": "compressed-tensors", "format": fmt, "config_groups": {"group_0": group},
            "ignore": ["lm_head", "re:.*mlp\\.gate$"]}


_CT_W4A16 = _ct({"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128},
                "pack-quantized")
_CT_W8A16 = _ct({"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel"}, "pack-quantized")
# llm-compressor's AWQModifier writes compressed-tensors, asymmetric (quant_scheme.py W4A16_ASYM: int4, group 128,
# symmetric False); cpatonn's "-AWQ-4bit" / "-AWQ-8bit" repos are such checkpoints (vLLM PR #29732's log of
# cpatonn/Qwen3-VL-32B-Instruct-AWQ-4bit: "quantization=compressed-tensors")
_CT_W4A16_ASYM = _ct({"num_bits": 4, "type": "int", "symmetric": False, "strategy": "group", "group_size": 128},
                     "pack-quantized")
_CT_W8A16_ASYM = _ct({"num_bits": 8, "type": "int", "symmetric": False, "strategy": "group", "group_size": 128},
                     "pack-quantized")
_CT_W8A8 = _ct({"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel"}, "int-quantized",
                {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "token", "dynamic": True})
_CT_FP8 = _ct({"num_bits": 8, "type": "float", "symmetric": True, "strategy": "tensor"}, "float-quantized",
              {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "tensor", "dynamic": False})
_CT_FP8_DYNAMIC = _ct({"num_bits": 8, "type": "float", "symmetric": True, "strategy": "channel"}, "float-quantized",
                      {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "token", "dynamic": True})
_CT_FP8_BLOCK = _ct({"num_bits": 8, "type": "float", "symmetric": True, "strategy": "block",
                     "block_structure": [128, 128]}, "float-quantized",
                    {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "group", "group_size": 128,
                     "dynamic": True})
_CT_NVFP4 = _ct({"num_bits": 4, "type": "float", "symmetric": True, "strategy": "tensor_group", "group_size": 16},
                "nvfp4-pack-quantized",
                {"num_bits": 4, "type": "float", "symmetric": True, "strategy": "tensor_group", "group_size": 16,
                 "dynamic": "local"})
_CT_NVFP4A16 = _ct({"num_bits": 4, "type": "float", "symmetric": True, "strategy": "tensor_group", "group_size": 16},
                   "nvfp4-pack-quantized")
# AutoAWQ GEMM (Qwen/Qwen2-VL-2B-Instruct-AWQ config.json, catalog variant; hugging-quants' -AWQ-INT4 the same).
_AWQ = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True,
        "modules_to_not_convert": ["mlp.gate"]}


def _gptq(bits: int) -> dict[str, Any]:
    # AutoGPTQ / GPTQModel defaults (Qwen's -GPTQ-Int4/-Int8, hugging-quants' -GPTQ-INT4, TheBloke's main branch):
    # group 128, lm_head not quantized
    return {"quant_method": "gptq", "bits": bits, "group_size": 128, "desc_act": False, "sym": True,
            "modules_to_not_convert": ["mlp.gate"]}


# bitsandbytes 4-bit as unsloth publishes it (-bnb-4bit: nf4 with double quant, bf16 compute); the
# "-unsloth-bnb-4bit" dynamic ones also keep some layers in 16 bits, which the name does not list.
_BNB4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
         "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16"}
_BNB8 = {"quant_method": "bitsandbytes", "load_in_8bit": True}


def _mlx(bits: int, mode: str = "affine") -> dict[str, Any]:
    # mlx_lm.convert -q (mlx_lm/convert.py: q_group_size 64 by default), written as config.json "quantization"
    return {"quant_method": "mlx", "bits": bits, "group_size": 64 if mode == "affine" else 32, "mode": mode}


# ---- the conventions ----

_MAKER = "maker"  # the publisher that made the base model (its own quantized release)
_NVIDIA = ("nvidia",)
_REDHAT = ("redhatai", "neuralmagic", "nm-testing")
_MLX_PUBLISHERS = ("mlx-community", "lmstudio-community", "nexveridian", "inferencerlabs")
# "-AWQ-4bit" repos written by llm-compressor (see _CT_W4A16_ASYM): cpatonn's, and cyankiwi's, which vLLM loads
# through compressed-tensors (1CatAI/1Cat-vLLM#5: cyankiwi/Qwen3.5-35B-A3B-AWQ-4bit fails in
# compressed_tensors.py get_scheme / _check_scheme_supported)
_LLM_COMPRESSOR_AWQ = ("cpatonn", "cyankiwi")


@dataclass(frozen=True)
class _Rule:
    pattern: str  # regex matched at the end of the lowercase repo name
    what: str  # words for the label
    make: Any  # (match, publisher) -> (quantization_config | None, weight_format | None)
    publishers: tuple[str, ...] = ()  # only for these publishers ("" = any)


def _fixed(q: dict[str, Any] | None = None, fmt: str | None = None):
    return lambda m, pub: (q, fmt)


def _gguf_named(m, pub):
    return None, m.group("q").upper()


def _meta_fbgemm_fp8(config: dict[str, Any]) -> dict[str, Any]:
    # Meta's Llama 3.1 "-FP8" checkpoints are FBGEMM FP8 row-wise (quant_method fbgemm_fp8: aphrodite-engine PR #601
    # loads meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 through it), the feed-forward layers quantized, the
    # self-attention layers and the first and last Transformer layers not (The Llama 3 Herd of Models, section 6.2,
    # FP8 quantization)
    last = int(config.get("num_hidden_layers", 1)) - 1
    return {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["lm_head", "self_attn", "model.layers.0",
                                                                     f"model.layers.{last}"]}


def _fp8(m, pub):
    if pub == "meta-llama":
        # Llama 4's "-FP8" is compressed-tensors (SGLang issue #5134: Llama-4-Maverick-17B-128E-Instruct-FP8 loads
        # through CompressedTensorsW8A8Fp8 / W8A16Fp8), FP8 per channel as RedHatAI's FP8-dynamic
        return (_CT_FP8_DYNAMIC if m.string.startswith("llama-4") else _meta_fbgemm_fp8), None
    if pub in _NVIDIA:
        return _MODELOPT_FP8, None
    if pub in _REDHAT:
        return _CT_FP8, None
    if pub == "zai-org" and m.string.startswith("glm-4"):
        # Z.ai's GLM-4.5 / 4.6 / 4.7 "-FP8" releases are llm-compressor's compressed-tensors FP8 per output channel,
        # dynamic per-token activations, routers and lm_head left out (a reader of GLM-4.5-Air-FP8's config.json:
        # "strategy: channel, dynamic per-token activations", find_string id 70428144645; HabanaAI/vllm-hpu-extension#350: "GLM-4.5-MOE
        # model uses the compressed tensor path for FP8 inference"; HabanaAI/vllm-fork#1837 dequantizes GLM4 FP8 by
        # QuantizationStrategy.CHANNEL; zai-org/GLM-V#178: GLM-4.5V-FP8 fails in compressed_tensors.py
        # process_weights_after_loading; kvcache-ai/ktransformers#1791 runs GLM 4.7 FP8 with per-channel MoE
        # kernels; vLLM's fused-MoE configs tuned on zai-org/GLM-4.6-FP8 carry no block_shape, which
        # benchmarks/kernels/benchmark_moe.py writes into the file name from a config's weight_block_size:
        # E=20,N=1536,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8.json from
        # vllm-project/vllm#29240, E=160,N=384,device_name=NVIDIA_B200,dtype=fp8_w8a8.json from #32958): no
        # 128 x 128 block, so no block-divisibility refusal under tensor parallelism
        # (zai-org/GLM-4.5-Air-FP8 runs at TP 2 on 2 H100s). GLM-5's are block FP8 (catalog variant
        # zai-org/GLM-5.1-FP8: weight_block_size [128, 128]).
        return _CT_FP8_DYNAMIC, None
    return _FP8_BLOCK, None


def _awq_bits(m, pub):
    # "-AWQ-4bit" / "-AWQ-8bit": llm-compressor's AWQ (compressed-tensors, asymmetric, group 128); AutoAWQ, the
    # other "-AWQ" writer, has int4 kernels only (AutoAWQ GEMM), so an 8-bit AWQ is llm-compressor's too
    if int(m.group("bits")) == 8:
        return _CT_W8A16_ASYM, None
    return (_CT_W4A16_ASYM if pub in _LLM_COMPRESSOR_AWQ else _AWQ), None


def _awq_scheme(m, pub):
    weights = {"num_bits": 4, "type": "int", "symmetric": m.group("sym") == "sym", "strategy": "group",
               "group_size": int(m.group("group"))}
    return _ct(weights, "pack-quantized"), None


def _autoround(m, pub):
    # Intel's AutoRound checkpoints ("-int4-AutoRound", OPEA's "-int4-AutoRound-awq-inc"): auto-round's defaults, bits
    # 4, group_size 128, sym True (intel/auto-round autoround.py AutoRound docstring), packed for GPTQ kernels
    # (packing_format auto_round:auto_gptq) unless the name says AWQ
    bits = int(m.group("bits"))
    if m.groupdict().get("awq"):
        return {**_AWQ, "bits": bits}, None
    return _gptq(bits), None


def _fp4(m, pub):
    return (_CT_NVFP4 if pub in _REDHAT else _MODELOPT_NVFP4), None


def _bits(m, pub):
    return _mlx(int(m.group("bits"))), None


_RULES: tuple[_Rule, ...] = (
    # GGUF repos: the file type comes from the ":QUANT" tag (ggml-org, unsloth, bartowski, lmstudio-community,
    # QuantFactory; mradermacher's "-i1-GGUF" are its imatrix quants)
    # Google's QAT GGUF repos name their one file type ("google/gemma-3-27b-it-qat-q4_0-gguf"), as do the repos
    # ggml-org's gguf-my-repo space creates ("{username}/{model_name}-{q_method}-GGUF": Q6_K, IQ4_NL, F16 ...)
    _Rule(r"-(?P<q>i?q\d(?:_[a-z0-9]+)*|tq\d_\d|bf16|f16|f32)-gguf", "GGUF repo of one file type, named in the repo "
          "name", _gguf_named),
    _Rule(r"(?:-i1)?[-_.]gguf", "GGUF repo (the quant file is named by :QUANT)", _fixed()),
    # RedHatAI / neuralmagic (llm-compressor presets)
    _Rule(r"-quantized\.w4a16", "RedHatAI -quantized.w4a16: compressed-tensors int4, group 128", _fixed(_CT_W4A16)),
    _Rule(r"-quantized\.w8a16", "RedHatAI -quantized.w8a16: compressed-tensors int8 per channel", _fixed(_CT_W8A16)),
    _Rule(r"-quantized\.w8a8", "RedHatAI -quantized.w8a8: compressed-tensors int8 W8A8 per channel",
          _fixed(_CT_W8A8)),
    # llm-compressor's AWQ named with its scheme ("nm-testing/Qwen3-30B-A3B-awq-w4a16-g128-sym",
    # vllm-project/llm-compressor#1406): compressed-tensors int4 of the group size and symmetry the name gives
    _Rule(r"-awq-w4a16-g(?P<group>\d+)-(?P<sym>a?sym)", "-awq-w4a16-g<N>-sym / -asym: llm-compressor AWQ, "
          "compressed-tensors int4 of that group size and symmetry", _awq_scheme),
    _Rule(r"-w4a16", "-W4A16: compressed-tensors int4, group 128", _fixed(_CT_W4A16)),
    _Rule(r"-w8a8", "-W8A8: compressed-tensors int8 W8A8", _fixed(_CT_W8A8)),
    _Rule(r"-fp8-dynamic", "-FP8-dynamic: compressed-tensors FP8 per channel, dynamic activations",
          _fixed(_CT_FP8_DYNAMIC)),
    _Rule(r"-fp8-block", "-FP8-block: compressed-tensors FP8 128x128 blocks", _fixed(_CT_FP8_BLOCK)),
    _Rule(r"-nvfp4a16", "-NVFP4A16: compressed-tensors NVFP4 weights", _fixed(_CT_NVFP4A16)),
    # FP8 / FP4 by publisher: NVIDIA ModelOpt, RedHatAI llm-compressor, else the model maker's block FP8
    _Rule(r"-fp8(?:-kv)?", "-FP8: NVIDIA ModelOpt FP8 (nvidia), compressed-tensors FP8 (RedHatAI, Meta's Llama 4), "
          "FBGEMM FP8 of the feed-forward layers but the first and last (Meta's Llama 3.1), compressed-tensors FP8 per "
          "channel (Z.ai's GLM-4.x) or block FP8 (other model makers')", _fp8),
    _Rule(r"-(?:nv)?fp4", "-NVFP4 / -FP4: ModelOpt NVFP4 group 16 (nvidia) or compressed-tensors NVFP4 (RedHatAI)",
          _fp4),
    # AWQ / GPTQ (the makers' own, hugging-quants, TheBloke)
    _Rule(r"-awq-(?P<bits>[48])-?bits?", "-AWQ-4bit / -AWQ-8bit: AWQ, group 128 (cpatonn's and 8-bit ones: "
          "llm-compressor's compressed-tensors, asymmetric; else AutoAWQ GEMM int4); the group size is not in the name",
          _awq_bits),
    _Rule(r"-awq(?:-int4)?|-int4-awq", "-AWQ: AutoAWQ GEMM int4, group 128", _fixed(_AWQ)),
    _Rule(r"-gptq-int8|-gptq-8bit", "-GPTQ-Int8: GPTQ int8, group 128", _fixed(_gptq(8))),
    _Rule(r"-gptq(?:-int4|-4bit)?", "-GPTQ(-Int4): GPTQ int4, group 128", _fixed(_gptq(4))),
    # the bits before "GPTQ" ("Llama-3_3-Nemotron-Super-49B-v1-4bit-GPTQ", vllm-project/vllm#15664)
    _Rule(r"-4-?bits?-gptq", "-4bit-GPTQ: GPTQ int4, group 128", _fixed(_gptq(4))),
    _Rule(r"-8-?bits?-gptq", "-8bit-GPTQ: GPTQ int8, group 128", _fixed(_gptq(8))),
    # Intel's "-W4A16-AutoRound" (Intel/DeepSeek-V4-Pro-W4A16-AutoRound, vllm-project/vllm#43484: "an int4 model with
    # group_size 128 ... generated by intel/auto-round with RTN mode"): auto-round's W4A16 scheme, int4 group 128
    _Rule(r"-w4a16-autoround", "-W4A16-AutoRound: Intel AutoRound int4, group 128 (auto-round's W4A16 scheme)",
          _fixed(_gptq(4))),
    # "-int4-mixed-AutoRound": the same int4, with "fallbacks for certain layers" kept at more bits (Intel's model
    # cards, Qwen3.6-35B-A3B-int4-mixed-AutoRound) that the name does not list: counted at 4 bits, a lower bound
    _Rule(r"-int(?P<bits>[248])-mixed-autoround", "-int4-mixed-AutoRound: Intel AutoRound int4, group 128, some "
          "layers kept at more bits that the name does not say (counted at 4 bits: a lower bound)", _autoround),
    # OPEA's "-int4-AutoRound-awq-sym" (OPEA/Mistral-Small-3.1-24B-Instruct-2503-int4-AutoRound-awq-sym,
    # vllm-project/vllm#16128) names the symmetry auto-round's default already is
    _Rule(r"-int(?P<bits>[248])-autoround(?P<awq>-awq)?(?:-sym)?(?:-inc)?", "-int4-AutoRound: Intel AutoRound, "
          "GPTQ-packed (AWQ-packed when named), group 128, symmetric: auto-round's defaults", _autoround),
    _Rule(r"-int4", "-Int4: GPTQ int4, group 128", _fixed(_gptq(4))),
    _Rule(r"-int8", "-Int8: GPTQ int8, group 128", _fixed(_gptq(8))),
    # bitsandbytes (unsloth)
    _Rule(r"(?:-unsloth)?-bnb-4bit", "-bnb-4bit: bitsandbytes nf4, double quant", _fixed(_BNB4)),
    _Rule(r"(?:-unsloth)?-bnb-8bit", "-bnb-8bit: bitsandbytes int8", _fixed(_BNB8)),
    # Unsloth Dynamic MLX ("unsloth/Qwen3.6-27B-UD-MLX-6bit", "unsloth/Qwen3.6-35B-A3B-UD-MLX-4bit"): MLX affine
    # N-bit with some tensors kept at more bits (Unsloth Dynamic 2.0 "dynamically adjust[s] the quantization type of
    # every possible layer", unsloth.ai/docs/basics/unsloth-dynamic-2.0-ggufs) that the name does not list: counted
    # at N bits, a lower bound (blog.binaryloader.io's "about 22GB" and "about 19GB" for the two: 27B and 35B at
    # N + 0.5 bits a weight with group 64's scale and bias are 21.9 and 19.7 GB)
    _Rule(r"-ud-mlx-(?P<bits>[2-8])-?bits?", "-UD-MLX-Nbit: Unsloth Dynamic MLX, mlx_lm affine N-bit (group 64), some "
          "tensors kept at more bits that the name does not say (counted at N bits: a lower bound)", _bits),
    # MLX (mlx-community, lmstudio-community's -MLX-*): mlx_lm.convert -q --q-bits N, group 64
    _Rule(r"-mlx-(?P<bits>[2-8])-?bits?(?:-dwq(?:-v\d+|-\d{4,6})?)?", "-MLX-Nbit: mlx_lm.convert -q (affine, group 64)", _bits),
    # "-MLX-Q8" (mlx-community/DeepSeek-R1-Distill-Qwen-1.5B-MLX-Q8, launched by mlx-openai-server PR #4): the same
    # mlx_lm.convert -q --q-bits N
    _Rule(r"-mlx-q(?P<bits>[2-8])", "-MLX-QN: mlx_lm.convert -q --q-bits N (affine, group 64)", _bits),
    # the format before "-mlx" (nightmedia/Qwen3-Coder-Next-mxfp4-mlx, ml-explore/mlx-lm#844): mlx_lm.convert
    # --q-mode mxfp4, whoever publishes it, as "-mlx" says
    _Rule(r"-mxfp4-mlx", "-mxfp4-mlx: MLX mxfp4 (group 32, e8m0 scales)", _fixed(_mlx(4, "mxfp4"))),
    # a bare "-Nbit" is MLX naming whoever publishes it (mlx-community's "<model>-4bit", copied by people who upload
    # their own mlx_lm.convert output; mlx_lm loads nothing else): bitsandbytes repos say "bnb-4bit"
    _Rule(r"-(?P<bits>[2-8])-?bits?(?:-dwq(?:-v\d+|-\d{4,6})?)?", "-Nbit: mlx_lm.convert -q (affine, group 64)", _bits),
    _Rule(r"(?:-mlx)?-dwq(?:-v\d+|-\d{4,6})?", "-DWQ: MLX 4-bit distilled weight quantization (affine, group 64)",
          _fixed(_mlx(4)), _MLX_PUBLISHERS),
    _Rule(r"(?:-mlx)?-mxfp4", "-mxfp4: MLX mxfp4 (group 32, e8m0 scales)", _fixed(_mlx(4, "mxfp4")),
          _MLX_PUBLISHERS),
    # mlx_lm.convert --q-mode mxfp8 (mlx_lm/convert.py --q-mode choices affine, mxfp4, nvfp4, mxfp8; jundot/omlx#327:
    # mlx-community/Qwen3-Embedding-8B-mxfp8): 8-bit, group 32, e8m0 scales
    _Rule(r"(?:-mlx)?-mxfp8", "-mxfp8: MLX mxfp8 (group 32, e8m0 scales)", _fixed(_mlx(8, "mxfp8")),
          _MLX_PUBLISHERS),
    _Rule(r"(?:-mlx)?-mxfp4", "-MXFP4: MXFP4 experts", _fixed({"quant_method": "mxfp4"})),
    _Rule(r"(?:-mlx)?-bf16", "-bf16: unquantized bfloat16", _fixed(None, "bfloat16")),
    _Rule(r"(?:-mlx)?-fp16", "-fp16: unquantized float16", _fixed(None, "float16")),
    _Rule(r"-mlx", "-MLX: MLX conversion, unquantized", _fixed(None, "bfloat16")),
)


@functools.cache
def _compiled() -> tuple[tuple[re.Pattern[str], _Rule], ...]:
    """The rules' patterns, compiled when a name is first read by them (a catalog name or a GGUF repo is not)."""
    return tuple((re.compile(f"(?:{r.pattern})$"), r) for r in _RULES)


# The suffixes `oomkit models` shows as what an entry resolves from (each one read by a rule above; the tests hold
# every one against `derive`).
DERIVATIVE_SUFFIXES = ("GGUF", "i1-GGUF", "AWQ", "AWQ-INT4", "GPTQ", "GPTQ-Int4", "GPTQ-Int8", "FP8", "FP8-dynamic",
                       "FP8-block", "NVFP4", "FP4", "NVFP4A16", "quantized.w4a16", "quantized.w8a16",
                       "quantized.w8a8", "W4A16", "W8A8", "bnb-4bit", "unsloth-bnb-4bit", "bnb-8bit", "MXFP4", "AWQ-4bit",
                       "int4-AutoRound")
MLX_SUFFIXES = ("3bit", "4bit", "6bit", "8bit", "4bit-DWQ", "DWQ", "bf16", "mxfp4", "MLX-4bit", "MLX-8bit")


def derivative_patterns(hf_id: str) -> tuple[str, ...]:
    """The derivative repo names `derive` reads as `hf_id` plus a format, as patterns ("*/Qwen3-8B-{AWQ,...}")."""
    org, _, model = hf_id.partition("/")
    return (f"*/{model}-{{{','.join(DERIVATIVE_SUFFIXES)}}}",
            f"mlx-community/{model}-{{{','.join(MLX_SUFFIXES)}}}",
            f"bartowski/{org}_{model}-GGUF")

# Words after the model name that do not change its shapes (a fine-tune, a release date): read as the same-shaped
# base, and labelled. A context length ("128k", "1m") is not one of them: the trained context is what llama.cpp's
# -c 0 and vLLM's max_model_len default to and what Ollama caps num_ctx at (Phi-3-medium-128k: 131072, the 4k
# model 4096); it is read only as a documented extension of the base (_CONTEXT_WORD below).
_SAME_SHAPE_WORDS = {"instruct", "chat", "it", "base", "hf", "thinking", "think", "qat", "mini", "medium",
                     "abliterated", "uncensored", "unsloth", "text", "pt", "latest"}
_RELEASE_DATE = re.compile(r"\d{4}")  # "2507", "1124", "0528": a re-release of the same shapes (not "v0.2": vocabularies change)


def _same_shape(word: str) -> bool:
    return word in _SAME_SHAPE_WORDS or _RELEASE_DATE.fullmatch(word) is not None


# Words that name what the publisher packed with the same shapes, each kept only for a model that has it, with what it
# means. "MTP" (unsloth's "<model>-MTP-GGUF", Jackrong's "-MTP-GGUF"): the file keeps the model's next-n (MTP) block,
# which convert_hf_to_gguf.py writes for Qwen3.5 / 3.6 from llama.cpp PR #22673 "llama + spec: MTP Support" (b9180,
# _Qwen35MtpMixin; --no-mtp leaves it out) and which the loaders take as the model's last block; from PR #26296
# "llama : load MTP tensors only if they are really used" the block stays in the file unless --spec-type draft-mtp
# sets llama_model_params.load_mtp (engines/llamacpp/weights.py NEXTN_ERAS, loaded_tensors). A model without a
# next-n block in its config (num_nextn_predict_layers, mtp_num_hidden_layers) has no MTP file: the word is not read.
_NEXTN_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
_PACKAGING_WORDS = {"mtp"}

# A context length after the model's name ("-128K", "-1M": unsloth/Qwen3-32B-128K-GGUF, ollama#10832) where the base's
# card documents a YaRN opt-in reaching exactly that many tokens (the catalog's context_extension): the publisher's
# config.json is the base's with that rope_scaling and max_position_embeddings (the GGUF's context_length then says
# 131072: ollama#10832's header). A context word for a base with no such extension, or one of another length, is not
# read (it may be another model: Phi-3-medium-128k, Qwen2.5-7B-Instruct-1M).
_CONTEXT_WORD = re.compile(r"(\d{1,4})([km])")


def _context_tokens(word: str) -> int | None:
    m = _CONTEXT_WORD.fullmatch(word)
    return int(m.group(1)) << (10 if m.group(2) == "k" else 20) if m else None


def context_extension(slug: str, words: tuple[str, ...]) -> dict[str, Any] | None:
    """The base's documented extension a context word among `words` names; None where none does."""
    wanted = {n for w in words if (n := _context_tokens(w)) is not None}
    entry = catalog.lookup(slug) if wanted else None
    ext = entry.context_extension if entry is not None else None
    return ext if ext is not None and ext.get("max_position_embeddings") in wanted else None


def _droppable(word: str) -> bool:
    return _same_shape(word) or word in _PACKAGING_WORDS or _context_tokens(word) is not None


def _words_fit(slug: str, words: tuple[str, ...]) -> bool:
    """An MTP word only for a model with a next-n block; a context word only for the extension its card documents."""
    if "mtp" in words and not _has_nextn(slug):
        return False
    has_context = any(_context_tokens(w) is not None for w in words)
    return not has_context or context_extension(slug, words) is not None


def _has_nextn(slug: str) -> bool:
    entry = catalog.lookup(slug)
    if entry is None:
        return False
    config = entry.text_config
    return any(isinstance(config.get(k), int) and config[k] > 0 for k in _NEXTN_KEYS)


def _packaging_note(ref: str, base_hf_id: str, word: str, gguf: bool) -> str:
    if word == "mtp" and gguf:
        return (f"{ref}: 'MTP': {base_hf_id}'s GGUF with its next-n (MTP) block (convert_hf_to_gguf.py writes it from "
                "llama.cpp PR #22673, b9180); llama.cpp loads it as the model's last block, and from PR #26296 only "
                "with --spec-type draft-mtp (without it the block stays in the file, out of every buffer)")
    if word == "mtp":
        return f"{ref}: 'MTP': {base_hf_id} with its next-n (MTP) block, which its own checkpoint holds too"
    return f"{ref}: '{word}' read as the same-shaped {base_hf_id}"


def _context_note(ref: str, base_hf_id: str, word: str, ext: dict[str, Any]) -> str:
    rs = ext["rope_scaling"]
    return (f"{ref}: '{word.upper()}': {base_hf_id} with the context extension its model card documents, YaRN factor "
            f"{rs['factor']:g} from {rs['original_max_position_embeddings']:,} to {ext['max_position_embeddings']:,} "
            "tokens (rope_scaling and max_position_embeddings in the repo's config.json, context_length in its GGUF)")


@dataclass(frozen=True)
class Derivation:
    """What a derivative name says: the catalog model it was made from and the weight format it holds."""

    ref: str
    slug: str
    base_hf_id: str
    convention: str  # the naming convention read ("RedHatAI -quantized.w4a16: ...")
    quantization_config: dict[str, Any] | None = field(default=None, hash=False)
    weight_format: str | None = None  # a GGUF file type (from a :QUANT tag) or a plain dtype
    dropped: tuple[str, ...] = ()  # name parts read as the same-shaped base

    @property
    def labels(self) -> tuple[str, ...]:
        fmt = f", weights {self.weight_format}" if self.weight_format else ""
        out = [f"{self.ref}: inferred from the name as {self.base_hf_id} + {self.convention}{fmt}; the repo's own "
               "config.json was not read"]
        shape_words = tuple(w for w in self.dropped if w not in _PACKAGING_WORDS and _context_tokens(w) is None)
        if shape_words:
            out.append(f"{self.ref}: '{'-'.join(shape_words)}' read as the same-shaped {self.base_hf_id}")
        gguf = self.convention.startswith("GGUF repo")
        out += [_packaging_note(self.ref, self.base_hf_id, w, gguf) for w in self.dropped if w in _PACKAGING_WORDS]
        ext = self.context_extension
        if ext is not None:
            word = next(w for w in self.dropped if _context_tokens(w) == ext["max_position_embeddings"])
            out.append(_context_note(self.ref, self.base_hf_id, word, ext))
        return tuple(out)

    @property
    def context_extension(self) -> dict[str, Any] | None:
        """The base's documented context extension a "-128K" word of the name applies (catalog context_extension)."""
        return context_extension(self.slug, self.dropped)


_URL_TAIL = re.compile(r"/(?:tree|blob|resolve)/[^/]+(?:/(?P<file>.+))?$")
_GGUF_FILE_QUANT = re.compile(
    r"[-_.](?P<q>(?:ud-)?(?:i?q\d(?:_[a-z0-9]+)*|tq\d_\d|bf16|f16|f32|mxfp4(?:_moe)?))(?:-\d{5}-of-\d{5})?\.gguf$",
    re.IGNORECASE)


# Ollama's library as users paste it (ollama.com/library/qwen3:8b, the registry's own name): the tag after it
_OLLAMA_LIBRARY = ("https://ollama.com/library/", "http://ollama.com/library/", "ollama.com/library/",
                   "https://registry.ollama.ai/library/", "registry.ollama.ai/library/")
# ModelScope, whose GGUF repos Ollama pulls as "modelscope.cn/<owner>/<repo>:<quant>" (zai-org/GLM-4#752: "ollama run
# modelscope.cn/lmstudio-community/GLM-Z1-32B-0414-GGUF:Q8_0") and whose model pages are
# "modelscope.cn/models/<owner>/<repo>": the repo of the same name, mirrored from the hub
_MODELSCOPE_HOSTS = tuple(f"{scheme}{www}modelscope.cn/{models}" for models in ("models/", "")
                          for scheme in ("https://", "http://", "") for www in ("www.", ""))
# The hub as users paste it: its own hosts and hf-mirror.com (the mirror HF_ENDPOINT names in China)
_HUB_HOSTS = ("https://huggingface.co/", "http://huggingface.co/", "https://www.huggingface.co/", "www.huggingface.co/",
              "huggingface.co/", "https://hf.co/", "http://hf.co/", "hf.co/", "https://hf-mirror.com/",
              "hf-mirror.com/", *_MODELSCOPE_HOSTS,
              # the hub's URI schemes: huggingface_hub's HfFileSystem and zml's llmd ("llmd --model=hf://google/
              # gemma-4-26B-A4B-it", zml/zml#702), ramalama's pulls ("huggingface://bartowski/...-GGUF/...gguf",
              # containers/ramalama#599)
              "hf://", "huggingface://")
# a GGUF repo's folder of one file type (unsloth's split quants: .../tree/main/UD-Q4_K_XL)
_QUANT_FOLDER = re.compile(r"^(?:ud-)?(?:i?q\d(?:_[a-z0-9]+)*|tq\d_\d|bf16|f16|f32|mxfp4(?:_moe)?)$", re.IGNORECASE)


# Unicode dashes a web page or word processor puts for "-" (U+2010-U+2015, U+2212): no repo or tag name has one
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})


def _unwrapped(key: str) -> str:
    """A name as pasted from Markdown, JSON, a list or a web page: the quotes, backticks or angle brackets around
    it and a trailing comma dropped, Unicode dashes read as "-" (no model name, tag or repo has them)."""
    key = key.translate(_DASHES).strip().rstrip(",;").strip()
    while len(key) >= 2 and key[0] + key[-1] in ('""', "''", "``", "<>"):
        key = key[1:-1].strip()
    return key


def canonical_ref(ref: str) -> str:
    """A hub URL to a repo, a branch, a folder or a file -> "org/name" (a GGUF file's or folder's quant as
    ":QUANT"; ?query and #anchor dropped); an Ollama library URL -> its tag ("qwen3:8b"); others unchanged."""
    key = _unwrapped(ref)
    low = key.lower()
    for prefix in _OLLAMA_LIBRARY:
        if low.startswith(prefix):
            return key[len(prefix):].rstrip("/")
    for prefix in _HUB_HOSTS:
        if low.startswith(prefix):
            rest = re.split(r"[?#]", key[len(prefix):], maxsplit=1)[0].rstrip("/")
            if not rest:  # the site itself (its ':' then read as a quant suffix with no model before it)
                raise ModelError(f"{key[:200]} names no model: give the repo's page, e.g. "
                                 "https://huggingface.co/Qwen/Qwen3-8B, or its id Qwen/Qwen3-8B")
            m = _URL_TAIL.search(rest)
            if m is None and prefix.endswith("://") and rest.count("/") >= 2:
                # a URI's path is the repo's then the file's: "hf://ORG/REPO/PATH/FILE.gguf" (no /blob/<branch>/)
                repo, file = "/".join(rest.split("/", 2)[:2]), rest.split("/", 2)[2]
                q = _GGUF_FILE_QUANT.search(file)
                return f"{repo}:{q.group('q').upper()}" if q is not None else repo
            if m is None:
                return rest
            repo, file = rest[: m.start()], m.group("file") or ""
            q = _GGUF_FILE_QUANT.search(file)
            if q is not None:
                return f"{repo}:{q.group('q').upper()}"
            folder = file.rsplit("/", 1)[-1]
            return f"{repo}:{folder.upper()}" if _QUANT_FOLDER.match(folder) else repo
    return key


def gguf_file_quant(filename: str) -> str | None:
    """"Qwen3-8B-Q8_0.gguf" -> "Q8_0": the file type a GGUF file's name carries (llama-server --hf-file), or None.
    A tag of that shape that names no file type ("Phi-3-mini-4k-instruct-q4.gguf": microsoft's "q4") says nothing
    about the file's type: None, not a quant tag oomkit would then refuse as a typo nobody made.
    An ik_llama.cpp type (IQ4_KSS) is kept: resolve refuses it naming the quantizer that makes it."""
    m = _GGUF_FILE_QUANT.search(re.split(r"[\\/]", filename.strip())[-1])
    if m is None:
        return None
    q = m.group("q").upper()
    if gguf_recipes.named_mix(q) is not None or gguf_recipes.ik_quant_refusal(q):
        return q
    try:
        gguf_recipes.ftype_by_name(q)
    except OomkitError:
        return None
    return q


def gguf_file_model(filename: str) -> str | None:
    """"Qwen3-8B-Q4_K_M.gguf", "Qwen_Qwen3-30B-A3B-Q4_K_M-00001-of-00003.gguf" -> "Qwen/Qwen3-8B:Q4_K_M": the
    catalog model and file type a GGUF file's name says (the publishers' "<model>-<QUANT>.gguf"), or None."""
    base = re.split(r"[\\/]", filename.strip())[-1]
    m = _GGUF_FILE_QUANT.search(base)
    if m is None or m.start() == 0 or gguf_file_quant(base) is None:
        # a tag no file type has ("Qwen3.8-27B-Q8_0_MTP.gguf", ggml-org/llama.cpp#27162): the name says no type
        return None
    found = _base("", base[: m.start()].lower())
    hf_id = catalog.base_hf_id(found[0]) if found else None
    return f"{hf_id}:{m.group('q').upper()}" if hf_id else None


# A file in the Hugging Face hub cache: "<cache>/models--{owner}--{name}/snapshots/<commit>/<file>" (huggingface_hub's
# layout, where llama.cpp's -hf downloads go: common/hf-cache.cpp repo_to_folder_name writes "models--" + the repo
# id with "/" as "--")
_HUB_CACHE_FILE = re.compile(r"(?:^|[\\/])models--(?P<owner>[^\\/]+?)--(?P<name>[^\\/]+)[\\/]snapshots[\\/][^\\/]+[\\/]"
                             r"(?:[^\\/]+[\\/])*(?P<file>[^\\/]+\.gguf)$", re.IGNORECASE)


# A -hf download in llama.cpp's own cache before it took the hub cache's layout: "<LLAMA_CACHE>/<owner>_<repo>_<file>"
# (~/.cache/llama.cpp/unsloth_Qwen3-30B-A3B-GGUF_Qwen3-30B-A3B-Q4_K_M.gguf, the path older llama.cpp logs print as
# "loaded meta data ... from"): the repo is the part up to its "-GGUF" ending
_LLAMA_CACHE_FILE = re.compile(r"(?:^|[\\/])(?P<owner>[^\\/_]+)_(?P<name>[^\\/]+?[-_.]gguf)_(?P<file>[^\\/]+\.gguf)$",
                               re.IGNORECASE)


# LM Studio's models folder keeps each download as "<models>/<publisher>/<repo>/<file>" (~/.lmstudio/models, earlier
# ~/.cache/lm-studio/models: lmstudio.ai/docs "Import Models" folder structure)
_LMSTUDIO_FILE = re.compile(r"(?:^|[\\/])(?:\.lmstudio|lm-studio)[\\/]models[\\/](?P<owner>[^\\/]+)[\\/](?P<name>[^\\/]+)[\\/]"
                            r"(?P<file>[^\\/]+\.gguf)$", re.IGNORECASE)


def hub_cache_gguf(path: str) -> str | None:
    """"~/.cache/huggingface/hub/models--unsloth--Qwen3.6-27B-GGUF/snapshots/<commit>/Qwen3.6-27B-Q4_K_M.gguf" ->
    "unsloth/Qwen3.6-27B-GGUF:Q4_K_M": the repo and file type of a GGUF file in the hub cache (the path a llama.cpp
    -hf download loads from), in llama.cpp's older flat cache ("unsloth_Qwen3.6-27B-GGUF_Qwen3.6-27B-Q4_K_M.gguf") or
    in LM Studio's models folder, or None for a path elsewhere or a file name without a file type."""
    m = (_HUB_CACHE_FILE.search(path.strip()) or _LLAMA_CACHE_FILE.search(path.strip())
         or _LMSTUDIO_FILE.search(path.strip()))
    if m is None or is_projector_file(m.group("file")):
        return None
    q = _GGUF_FILE_QUANT.search(m.group("file"))
    return f"{m.group('owner')}/{m.group('name')}:{q.group('q').upper()}" if q else None


def is_projector_file(path: str) -> bool:
    """Whether a GGUF file's name is a multimodal projector's ("mmproj-F16.gguf", "mmproj-Qwen3VL-4B-Instruct-F16.gguf",
    "...-mmproj-f16.gguf": the names llama.cpp's convert_hf_to_gguf.py --mmproj and the GGUF publishers give the file
    llama-server loads with --mmproj beside the model), which holds the vision or audio encoder, not the model."""
    base = re.split(r"[\\/]", path.strip())[-1].lower()
    return base.endswith(".gguf") and "mmproj" in base


def derive(name: str) -> Derivation | None:
    """The catalog model and format a derivative repo name stands for (`name` without its :QUANT tag), or None
    when the name follows no known convention or its base is not in the catalog."""
    key = catalog.normalize(canonical_ref(name))
    if "/" not in key or ":" in key:
        return None
    publisher, tail = key.split("/", 1)
    found = _by_rules(name, publisher, tail, ())
    if found is not None:
        return found
    # a fine-tune's words after the format ("Huihui-gpt-oss-20b-BF16-abliterated"), or what the publisher packed
    # ("sakamakismile/Qwen3.6-27B-Text-NVFP4-MTP", InternLM/lmdeploy#4556): the format read before them
    parts = tail.split("-")
    i = len(parts)
    while i > 1 and _droppable(parts[i - 1]):
        i -= 1
    if i < len(parts):
        found = _by_rules(name, publisher, "-".join(parts[:i]), tuple(parts[i:]))
        if found is not None and _words_fit(found.slug, found.dropped):
            return found
    # a re-upload or fine-tune under the base's own name ("unsloth/Qwen3-30B-A3B-Instruct-2507",
    # "mlabonne/gemma-3-27b-it-abliterated"): the base's shapes, its weights as the base publishes them
    base = _base(publisher, tail)
    if base is None:
        return None
    slug, dropped = base
    return Derivation(ref=name, slug=slug, base_hf_id=catalog.base_hf_id(slug) or slug, convention=SAME_NAME,
                      dropped=dropped)


SAME_NAME = ("a re-upload or fine-tune under the base model's name (same shapes; weights in the format the base "
             "publishes)")


def _by_rules(name: str, publisher: str, tail: str, after: tuple[str, ...]) -> Derivation | None:
    for rx, rule in _compiled():
        if rule.publishers and publisher not in rule.publishers:
            continue
        m = rx.search(tail)
        if m is None or m.start() == 0:
            continue
        stem = tail[: m.start()]
        found = _base(publisher, stem)
        if found is None:
            continue
        slug, dropped = found
        q, fmt = rule.make(m, publisher)
        if callable(q):  # a layout that depends on the model's shapes (its layer count)
            q = q(catalog.lookup(slug).text_config)
        return Derivation(ref=name, slug=slug, base_hf_id=catalog.base_hf_id(slug) or slug, convention=rule.what,
                          quantization_config=q, weight_format=fmt, dropped=dropped + after)
    return None


def _base(publisher: str, stem: str) -> tuple[str, tuple[str, ...]] | None:
    """The catalog slug of a derivative's model part ("qwen3-8b", "qwen_qwen3-8b", "meta-llama-3.1-8b-instruct"),
    with the words dropped to find it."""
    for cand in _stems(publisher, stem):
        slug = catalog.match_tail(cand) or _bf16_named(cand)
        if slug is not None:
            return slug, ()
    parts = stem.split("-")
    for i in range(len(parts) - 1, 0, -1):  # drop same-shape words (and packaging and context words) from the end
        if not _droppable(parts[i]):
            break
        cut = "-".join(parts[:i])
        for cand in _stems(publisher, cut):
            slug = catalog.match_tail(cand)
            if slug is not None:
                if not _words_fit(slug, tuple(parts[i:])):
                    return None  # an MTP file of a model without a next-n block, a context its card does not give
                return slug, tuple(parts[i:])
    return None


def _bf16_named(stem: str) -> str | None:
    """The catalog model whose own repo name is `stem` + "-BF16" (NVIDIA's "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    beside its -FP8 and -NVFP4 siblings): a derivative names the model without the precision
    ("lmstudio-community/NVIDIA-Nemotron-3-Nano-30B-A3B-MLX-4bit")."""
    slug = catalog.match_tail(f"{stem}-bf16")
    hf_id = catalog.base_hf_id(slug) if slug is not None else None
    return slug if hf_id is not None and hf_id.lower().endswith("-bf16") else None


def _stems(publisher: str, stem: str) -> list[str]:
    out = [stem, f"{publisher}/{stem}"]
    if "_" in stem:  # bartowski: "Qwen_Qwen3-8B"
        org, rest = stem.split("_", 1)
        out += [f"{org}/{rest}", rest]
    own = re.split(r"[-_.]", publisher, maxsplit=1)[0] + "-"
    if len(own) > 3 and stem.startswith(own):  # the publisher's name before the model's: "huihui-ai/Huihui-gpt-oss-20b"
        out.append(stem[len(own):])
    return out


# ---- Ollama tags with qualifiers ----

# Ollama's devstral and magistral tags name the Mistral Small they are ("devstral:24b-small-2505-q8_0",
# "magistral:24b-small-2506-q4_K_M": ollama.com/library/devstral/tags): after the size, "small" is that model's
# name, not another model
_OLLAMA_SAME_SHAPE = {"devstral": {"small"}, "magistral": {"small"}}
_OLLAMA_QUANT_WORDS = {"qat": "Q4_0"}  # Ollama's gemma3 "-it-qat" tags ship the QAT Q4_0 GGUF (ollama.com/library/gemma3/tags)


# A word of the tag that restates the model's own repo name is no other model: the active-parameter count of a MoE
# ("qwen3-vl:30b-a3b-instruct", "qwen3-next:80b-a3b-instruct-q4_K_M": ollama.com/library/qwen3-vl/tags,
# /qwen3-next/tags, the models Qwen/Qwen3-VL-30B-A3B-Instruct and Qwen/Qwen3-Next-80B-A3B-Instruct the tags without
# it stand for), the base a fine-tune names ("hermes3:8b-llama3.1-q4_K_M": NousResearch/Hermes-3-Llama-3.1-8B;
# "cogito:32b-v1-preview-qwen-q4_K_M": deepcogito/cogito-v1-preview-qwen-32B), its version ("tinyllama:1.1b-chat-v1-
# q4_0": TinyLlama/TinyLlama-1.1B-Chat-v1.0). A word the repo name does not hold still refuses the tag
# ("cogito:14b-v1-preview-llama": the 14b is the Qwen one).
# A release date as Ollama's tags write it, month and year ("command-r7b:7b-12-2024-q4_K_M": c4ai-command-r7b-12-2024)
_MONTH_YEAR = re.compile(r"(?:0[1-9]|1[0-2])-20\d\d")


def _own_words(slug: str) -> set[str]:
    """The words of the catalog model `slug`'s own repo name, each alone and joined to the next ("llama", "3.1",
    "llama3.1"), and its versions without their minor number ("v1.0" -> "v1")."""
    hf_id = (catalog.base_hf_id(slug) or slug).lower()
    words = [w for w in re.split(r"[-_/]", hf_id) if w]
    own = set(words) | {a + b for a, b in zip(words, words[1:], strict=False)}
    own |= {w.split(".")[0] for w in words if re.fullmatch(r"v\d+\.\d+", w)}
    return own


def _dates_joined(words: list[str]) -> list[str]:
    """["12", "2024", "q4_k_m"] -> ["12-2024", "q4_k_m"]: a month-year pair as the one release date it is."""
    out: list[str] = []
    for w in words:
        if out and _MONTH_YEAR.fullmatch(f"{out[-1]}-{w}"):
            out[-1] = f"{out[-1]}-{w}"
        else:
            out.append(w)
    return out


def ollama_tag(name: str) -> tuple[str, tuple[str, ...], str | None] | None:
    """"qwen3:30b-a3b-thinking-2507" -> ("qwen3:30b-a3b", ("thinking", "2507"), None): the catalog alias of the
    longest prefix of the tag, the qualifiers dropped (only words that keep the shapes), and the format a
    qualifier implies ("qat": Q4_0). None when no prefix is a catalog name."""
    key = catalog.normalize(name)
    if "/" in key or ":" not in key:
        return None
    lib, tag = key.split(":", 1)
    parts = tag.split("-")
    for i in range(len(parts) - 1, 0, -1):
        dropped = parts[i:]
        cand = f"{lib}:{'-'.join(parts[:i])}"
        slug = catalog.resolve_slug(cand)
        if slug is None:
            continue
        own = _own_words(slug)
        if all(_same_shape(p) or _MONTH_YEAR.fullmatch(p) or p in _OLLAMA_SAME_SHAPE.get(lib, ()) or p in own
               for p in _dates_joined(dropped)):
            fmt = next((_OLLAMA_QUANT_WORDS[p] for p in dropped if p in _OLLAMA_QUANT_WORDS), None)
            return cand, tuple(dropped), fmt
        return None  # the nearest catalog tag differs by a word that may change the model
    return None


# Ollama library models oomkit's catalog holds no config of, each with what `ollama pull <name>` fetches (the library
# page's tags) and why it is not sized from the name: a name of one of these libraries that no catalog entry claims is
# refused with this, never read as a sibling of another shape
OLLAMA_UNSIZED = {
    "minicpm-v": "MiniCPM-V 2.6 (8b): a Qwen2 7B decoder under a SigLIP tower and a perceiver resampler, a tower oomkit "
                 "does not count",
    # the text blob as llama.cpp prints it (ollama/ollama#4076, Jeffser/Alpaca#245: sha256-e554c6b9..., phi2, 245
    # tensors; ggml-org/llama.cpp#9066: model params = 1.42 B): the decoder is known, the projector blob is not
    "moondream": "moondream2 (1.8b): a phi-1.5 decoder (the library's model blob is a phi2 GGUF of 24 layers of 2048, "
                 "32 heads of 64, FFN 8192, 2,048 positions, 1.42B parameters) under a SigLIP projector blob whose "
                 "shapes, like the library's default quant, oomkit has no cited copy of",
}


def ollama_unsized(name: str) -> str | None:
    """The refusal for a tag of an Ollama library oomkit cannot size (OLLAMA_UNSIZED), or None for any other name."""
    key = catalog.normalize(name)
    if "/" in key:
        return None
    lib = key.split(":", 1)[0]
    what = OLLAMA_UNSIZED.get(lib)
    if what is None:
        return None
    return f"{name}: Ollama's {lib} is {what}; it is not in oomkit's catalog, so it is not estimated from its name"


# Ollama libraries that publish no :latest tag, so a bare name (or name:latest) pulls nothing: each with the size tags
# its library page lists and what oomkit can size of them. granite4.1: "granite4.1:latest ... were unavailable. Their
# official tag pages expose explicit local variants" (a model inventory's record, code search id 70951082864), and a
# setup guide retags granite4.1:3b as granite4.1:latest "so that the API finds it as granite4.1" (id 66581321384)
OLLAMA_NO_LATEST = {
    "granite4.1": ("granite4.1:3b, granite4.1:8b", "ibm-granite/granite-4.1-8b"),
}


def ollama_no_default(name: str) -> str | None:
    """The refusal for a bare name (or name:latest) of an Ollama library without a latest tag (OLLAMA_NO_LATEST),
    or None for any other name."""
    key = catalog.normalize(name)  # ":latest" dropped
    if "/" in key or ":" in key or key not in OLLAMA_NO_LATEST:
        return None
    tags, known = OLLAMA_NO_LATEST[key]
    return (f"{name} has no default here: Ollama's library publishes no {key}:latest, only size tags ({tags}); "
            f"give the model, e.g. {known}")


# Hugging Face models oomkit cannot size, each with why: a name of one of these is refused with it, offline, before
# any hub read (whose config.json model/hf_config.py refuses too: _REFUSED), never read as a plain decoder
_PHI4FLASH = ("Phi-4-mini-flash-reasoning (model_type phi4flash, Phi4FlashForCausalLM: the SambaY decoder-hybrid-decoder, "
              "32 layers of width 2560: Mamba layers interleaved with 512-token sliding-window attention, one full-attention "
              "layer whose KV cache the cross-decoder reuses, and gated memory units holding no cache; config.json of the "
              "repo, copied in franciskamande-ai/cloned_models@711ebe7d: mb_per_layer 2, sliding_window 512, 40 / 20 heads) "
              "is not sized: llama.cpp has no architecture for it (src/llama-arch.cpp names none, convert_hf_to_gguf.py "
              "registers no Phi4FlashForCausalLM; ggml-org/llama.cpp#20880, which added one, was closed unmerged), vLLM "
              "ran it (model_executor/models/phi4flash.py, vllm#20702) in its V0 engine only and lists it as previously "
              "supported after 0.10.2 (registry.py _PREVIOUSLY_SUPPORTED_MODELS, vllm#25832: newer releases refuse it), "
              "and oomkit does not model its Mamba state, sliding window and "
              "shared cross-decoder cache")
HF_UNSIZED = {"microsoft/phi-4-mini-flash-reasoning": _PHI4FLASH, "phi-4-mini-flash-reasoning": _PHI4FLASH,
              "phi-4-mini-flash": _PHI4FLASH}


def hf_unsized(name: str) -> str | None:
    """The refusal for a Hugging Face model oomkit cannot size (HF_UNSIZED), or None for any other name."""
    what = HF_UNSIZED.get(catalog.normalize(name))
    return None if what is None else f"{name}: {what}"


def ollama_cloud(name: str) -> str | None:
    """"gpt-oss:120b-cloud" -> "gpt-oss:120b", "glm-4.6:cloud" -> "glm-4.6": for an Ollama cloud tag (the model runs
    on ollama.com, nothing of it is loaded on this machine: ollama.com/search?c=cloud), the local tag of the same
    name; None for any other name."""
    key = catalog.normalize(name)
    if "/" in key or ":" not in key:
        return None
    lib, tag = key.split(":", 1)
    if tag == "cloud":
        return lib
    if tag.endswith("-cloud"):
        return f"{lib}:{tag[: -len('-cloud')]}"
    return None


# The tag endings of Ollama's MLX builds: safetensors weights that `ollama create --quantize` writes as int4, int8,
# nvfp4, mxfp4 or mxfp8 (x/create/client/create.go) and its MLX runner loads (x/mlxrunner; "starting mlx runner
# subprocess model=qwen3.8:27b-mlx", ollama#17986; integration/reg_release_test.go pulls "qwen3.5:2b-nvfp4" and
# "gemma4:e2b-nvfp4"), not the GGUF its llama.cpp-based runners load
# ("-mxfp4" is left out: "gpt-oss:20b-mxfp4" is the GGUF's own MXFP4); int4 / int8 are x/create's affine 4 / 8-bit
# (x/quant/quant.go: group 64), as "lapo/qwen3.6:35b-a3b-coding-int4" (ollama#16340) was made
# the weights format of such a build's spec ("ollama-mlx-nvfp4"), read by engines/ollama/mlx_runner.py
OLLAMA_MLX_FORMAT = "ollama-mlx-"
_OLLAMA_MLX_TAGS = {"mlx": "in MLX's own format", "nvfp4": "quantized to NVFP4", "mxfp8": "quantized to MXFP8",
                    "int4": "quantized to 4-bit affine (int4)", "int8": "quantized to 8-bit affine (int8)"}


def _ollama_mlx_parts(name: str) -> tuple[str, str, bool] | None:
    """"qwen3.8:27b-nvfp4" -> (its last tag word, the GGUF tag of the same model, whether the catalog holds that
    tag); None for a name that is no Ollama library tag of an MLX build."""
    key = catalog.normalize(name)
    if "/" in key or ":" not in key:
        return None
    lib, tag = key.split(":", 1)
    base, _, end = tag.rpartition("-")
    if not base or end not in _OLLAMA_MLX_TAGS:
        return None
    gguf = f"{lib}:{base}"
    return end, gguf, catalog.lookup(gguf) is not None or ollama_tag(gguf) is not None


def ollama_mlx_tag(name: str) -> str | None:
    """The refusal for an Ollama library tag of an MLX build ("qwen3.8:27b-mlx", "qwen3.6:35b-a3b-coding-nvfp4"),
    naming the GGUF tag of the same model where the catalog holds it; None for any other name."""
    if (parts := _ollama_mlx_parts(name)) is None:
        return None
    end, gguf, known = parts
    what = (f"an Ollama tag of an MLX build (safetensors weights {_OLLAMA_MLX_TAGS[end]}, loaded by Ollama's MLX "
            "runner, x/mlxrunner), which oomkit's Ollama model of the GGUF runners does not size")
    if not known:
        return f"unknown model {name.strip()!r}: {what}, and the catalog holds no {gguf}"
    return f"{name.strip()}: {what}; {gguf} is the GGUF build of the same model, which it does size"


def ollama_mlx_build(name: str) -> tuple[str, str] | None:
    """An Ollama library tag of an MLX build that x/create quantized ("qwen3.8:27b-nvfp4") -> (the GGUF tag of the
    same model, the quantization: "qwen3.8:27b", "nvfp4"); None for "-mlx" (an import whose quantization the tag
    does not say, ollama#17050), other names, and a model the catalog does not hold."""
    parts = _ollama_mlx_parts(name)
    return (parts[1], parts[0]) if parts is not None and parts[0] != "mlx" and parts[2] else None


def ollama_namespaced(name: str) -> tuple[str, tuple[str, ...]] | None:
    """"huihui_ai/qwen3-abliterated:30b" -> ("qwen3:30b", ("abliterated",)): a model of an Ollama user's namespace
    ("<user>/<model>:<tag>", as `ollama run` takes it; a hub repo id has no ':' but a quant tag), read as the library
    tag of the same name, its fine-tune words (model/names._SAME_SHAPE_WORDS) dropped; None for other names."""
    key = catalog.normalize(name)
    if key.count("/") != 1 or ":" not in key.split("/", 1)[1]:  # "qwen3:8b/x": the ':' is not the tag's
        return None
    lib, tag = key.split("/", 1)[1].split(":", 1)
    if not lib or not tag:
        return None
    parts = lib.split("-")
    i = len(parts)
    while i > 1 and _same_shape(parts[i - 1]):
        i -= 1
    return f"{'-'.join(parts[:i])}:{tag}", tuple(parts[i:])
