"""vLLM engine: page sizes worked by hand from model dims, block and group arithmetic, the errors vLLM raises,
its command line, and every real start-up log under tests/fixtures/engine_logs/vllm/ (ground truth).

Per fixture, each figure the log carries is checked:
  tokens    - given the printed "Available KV cache memory", the block/page arithmetic reproduces the printed
              "GPU KV cache size" (or V0's "# GPU blocks") within 0.5 %;
  weights   - "Model loading took" within 3 %;
  available - the predicted "Available KV cache memory" within 3 % of the GPU's memory;
  refusal   - vLLM refused to start (too little KV cache for one request) exactly when oomkit says so.
A figure the fixture does not carry, or cannot be predicted from what it gives (unnamed model, no config,
unknown GPU), is reported as not checkable, with the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from oomkit.engines.cmdline import parse_command
from oomkit.engines.vllm import (
    CUDA_DRIVER_RESERVED,
    ENGINE,
    VllmSettings,
    kv_plan,
    parse_version,
    pp_partition,
    resolve,
)
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.model.spec import ModelSpec
from oomkit.units import GiB


def named_gpu(*args, **kwargs) -> Device:
    """A device with the GPU facts the catalog gives it (as request.devices_from and detection do)."""
    return with_facts(Device(*args, **kwargs))

FIXTURES = Path(__file__).parent / "fixtures" / "engine_logs" / "vllm"
MiB = 1 << 20
H100 = named_gpu("CUDA0", "NVIDIA H100 80GB HBM3", 81559 * MiB)


def catalog_spec(name: str, weight_format: str | None = None) -> ModelSpec:
    entry = lookup(name)
    assert entry is not None, name
    return spec_from_config(entry.config, name=entry.name, weight_format=weight_format)


def config_spec(cfg: dict[str, Any], name: str = "model") -> ModelSpec:
    """KV-only spec of a quantized config: the layer shapes are what matter, weights read as bf16."""
    cfg = {k: v for k, v in cfg.items() if k != "quantization_config"}
    return spec_from_config(cfg, name=name)


def run(spec: ModelSpec, devices=(H100,), **kw):
    return ENGINE.estimate(spec, tuple(devices), VllmSettings(**kw))


# ---------------------------------------------------------------------------------------------------------
# Page sizes per layer kind, by hand from the model dims


def test_llama_3_1_8b_page_is_128_kib_per_token():
    # 2 (K, V) x 8 KV heads x 128 head_dim x 2 bytes x 32 layers = 131072 B = 128 KiB per token
    spec = catalog_spec("llama-3.1-8b-instruct")
    r = resolve(spec, (H100,), VllmSettings())
    plan = kv_plan(spec, VllmSettings(), r)
    assert plan.block_size == 16
    assert plan.page_bytes == 16 * 2 * 8 * 128 * 2 == 65536
    assert plan.group_size == 32 and plan.n_groups == 1
    assert plan.bytes_per_block // plan.block_size == 128 * 1024
    est = run(spec, max_model_len=8192)
    assert est.kv_bytes_per_token == 131072


def test_fp8_kv_halves_the_page_and_doubles_the_tokens():
    spec = catalog_spec("llama-3.1-8b-instruct")
    budget = 58 * GiB
    auto = run(spec, kv_cache_memory_bytes=budget, max_model_len=8192).engine_view
    fp8 = run(spec, kv_cache_memory_bytes=budget, max_model_len=8192, kv_cache_dtype="fp8").engine_view
    assert fp8["kv_block_bytes"] * 2 == auto["kv_block_bytes"]
    assert fp8["num_gpu_blocks"] == 2 * auto["num_gpu_blocks"]


def test_deepseek_v3_mla_latent_576_by_61_layers():
    # MLA keeps one latent row per token: (kv_lora_rank 512 + qk_rope 64) x 2 B, 1 "head", no V, not split by
    # TP; the MTP layer (61) is not loaded
    spec = catalog_spec("deepseek-v3", weight_format="bfloat16")
    assert spec.n_layers == 62 and spec.n_nextn_layers == 1
    for version, gpu, block in (("0.10.2", H100, 64), ("0.19.1", H100, 16),
                                ("0.10.2", named_gpu("CUDA0", "NVIDIA B200", 183359 * MiB), 128)):
        s = VllmSettings(engine_version=version, tensor_parallel_size=8, max_model_len=32768)
        r = resolve(spec, (gpu,), s)
        plan = kv_plan(spec, s, r)
        assert plan.block_size == block, (version, gpu.name)
        assert plan.page_bytes == block * (512 + 64) * 2
        assert len(plan.layers) == 61
        assert plan.bytes_per_block // block == (512 + 64) * 2 * 61 == 70272
    one = run(spec, [H100] * 8, tensor_parallel_size=8, kv_cache_memory_bytes=10 * GiB, max_model_len=32768)
    assert one.kv_bytes_per_token == 70272 * 8  # the latent is replicated on each of the 8 ranks


def test_gpt_oss_sliding_and_full_groups():
    # gpt-oss-20b: 12 sliding (window 128) + 12 full layers, 8 KV heads x 64; at TP2 4 heads per rank:
    # page = 16 x 4 x (64 + 64) x 2 = 16384 B; two groups of 12 share the pool (bytes per block = 12 pages);
    # tokens printed (0.10-0.19) = num_blocks // 2 x 16. llm-d v0.19.0 gpt-oss-20b TP2 log: 59.32 GiB ->
    # 2,591,776 tokens (323,972 blocks)
    spec = config_spec(lookup("gpt-oss-20b").config, "gpt-oss-20b")
    est = run(spec, [H100, H100], tensor_parallel_size=2, kv_cache_memory_bytes=round(59.32 * GiB),
              max_model_len=8192, engine_version="0.19.0")
    v = est.engine_view
    assert [(g["kind"], g["layers"]) for g in v["kv_cache_groups"]] == [("sliding", 12), ("full", 12)]
    assert v["kv_block_bytes"] == 16384 * 12
    assert abs(v["num_gpu_blocks"] - 323972) <= 30
    assert v["kv_cache_tokens"] == v["num_gpu_blocks"] // 2 * 16
    assert abs(v["kv_cache_tokens"] - 2591776) / 2591776 < 0.001
    # one token of vLLM's capacity costs a page in each of the 2 groups: 2 x 12 layers x 4 heads x 128 x 2 B,
    # on each of the 2 ranks, so the budget over it is the logged capacity
    assert est.kv_bytes_per_token == 2 * 12 * 4 * 128 * 2 * 2
    assert abs(2 * round(59.32 * GiB) / est.kv_bytes_per_token - 2591776) / 2591776 < 0.001
    # sliding layers are bounded: one more context token physically costs only the 12 full layers (x 2 ranks)
    assert est.kv_bytes_per_token_marginal == 12 * 4 * 128 * 2 * 2


def test_gemma4_sliding_and_global_groups():
    # nvidia/Gemma-4-26B-A4B-NVFP4, fp8 KV cache: 25 sliding layers of 8 KV heads x 256 (window 1024) and 5 full
    # layers of 2 KV heads x 512 (K = V in the weights, both cached: models/gemma4.py builds Attention with
    # num_kv_heads and head_dim per layer type). Sliding page 16 x 8 x (256 + 256) x 1 B = 65,536; the full layers'
    # 16-token page is half that, so their block doubles to 32 tokens; 6 groups of 5 layers. One 256,000-token
    # request: 5 x (cdiv(1023 + 16384, 16) + 1) + cdiv(256000, 32) = 13,445 blocks. The 0.20.2 log (99sono
    # DockerBuildFiles, RTX 5090) prints 4.58 GiB, "GPU KV cache size: 286,007 tokens" and 1.12x: 15,021 blocks of
    # 327,680 B (4.584 GiB), int(15021 / 13445 x 256000) = 286,007.
    spec = catalog_spec("nvidia/Gemma-4-26B-A4B-NVFP4")
    est = run(spec, kv_cache_memory_bytes=15021 * 327680, max_model_len=256000, max_num_batched_tokens=16384,
              max_num_seqs=2, kv_cache_dtype="fp8_e4m3", engine_version="0.20.2")
    v = est.engine_view
    assert [(g["kind"], g["layers"], g["block_size"]) for g in v["kv_cache_groups"]] == \
        [("sliding", 5, 16)] * 5 + [("full", 5, 32)]
    assert v["kv_block_bytes"] == 5 * 16 * 8 * 512
    assert v["kv_cache_tokens"] == 286007 and v["max_concurrency"] == 1.12
    # the budget over the per-token charge gives the printed count (to the block)
    assert abs(15021 * 327680 / est.kv_bytes_per_token - 286007) < 16
    # 0.19 printed num_blocks // groups x block size instead
    old = run(spec, kv_cache_memory_bytes=15021 * 327680, max_model_len=256000, max_num_batched_tokens=16384,
              max_num_seqs=2, kv_cache_dtype="fp8_e4m3", engine_version="0.19.1").engine_view
    assert old["kv_cache_tokens"] == 15021 // 6 * 16
    # the vision tower the checkpoint keeps in bf16: 569,550,384 encoder parameters (rnagabh/gemma4-vision-encoder
    # "_verified_total_params") and the 1152 x 2816 projection (Ollama's mm.input_projection.weight)
    assert spec.towers[0].encoder_params == 569550384
    assert spec.towers[0].params - spec.towers[0].encoder_params == 1152 * 2816


def test_gpt_oss_before_the_hybrid_allocator_every_layer_is_full():
    spec = config_spec(lookup("gpt-oss-20b").config)
    v = run(spec, kv_cache_memory_bytes=10 * GiB, max_model_len=8192, engine_version="0.8.5").engine_view
    assert [(g["kind"], g["layers"]) for g in v["kv_cache_groups"]] == [("full", 24)]


QWEN3_NEXT = {  # Qwen/Qwen3-Next-80B-A3B-Instruct config.json (shared/reference/model_configs.jsonl)
    "architectures": ["Qwen3NextForCausalLM"], "decoder_sparse_step": 1, "full_attention_interval": 4,
    "head_dim": 256, "hidden_size": 2048, "intermediate_size": 5120, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "linear_value_head_dim": 128, "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_next",
    "moe_intermediate_size": 512, "num_attention_heads": 16, "num_experts": 512, "num_experts_per_tok": 10,
    "num_hidden_layers": 48, "num_key_value_heads": 2, "shared_expert_intermediate_size": 512,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 151936}


def test_qwen3_next_mamba_state_page():
    # gated delta net state per request and layer (mamba_utils.py gated_delta_net_state_shape), TP1, bf16:
    #   conv: (kernel 4 - 1) x (128 x 16 x 2 + 128 x 32) x 2 B = 3 x 8192 x 2 = 49,152
    #   ssm:  32 value heads x 128 x 128 x 2 B = 1,048,576          -> 1,097,728 B
    # attention per token: 2 KV heads x (256 + 256) x 2 B = 2048 B, so the attention block grows to
    # 16 x cdiv(1,097,728, 16 x 2048) = 544 tokens (page 1,114,112 B) and the Mamba page is padded to it
    # (model_executor/models/config.py HybridAttentionMambaModelConfig); 12 full + 36 GDN layers -> 4 groups
    # of 12.
    spec = spec_from_config(QWEN3_NEXT, name="qwen3-next")
    s = VllmSettings(max_model_len=32768)
    plan = kv_plan(spec, s, resolve(spec, (H100,), s))
    mamba = [sp for sp in plan.layers.values() if sp.kind == "mamba"]
    assert mamba[0].state_bytes == 3 * 8192 * 2 + 32 * 128 * 128 * 2 == 1097728
    assert plan.block_size == 544
    assert plan.page_bytes == 544 * 2048 == 1114112
    assert all(sp.page_bytes == plan.page_bytes for sp in plan.layers.values())
    assert plan.group_size == 12 and plan.n_groups == 4
    # one request holds cdiv(32768, 544) blocks of the full group and, from 0.28 (prefix caching on by default for
    # hybrid models, engine/arg_utils.py; mamba_cache_mode "align"), two blocks in each GDN group; one each while
    # prefix caching is opt-in for them (0.27)
    assert plan.blocks_per_request(32768, 8192) == -(-32768 // 544) + 3 * 2
    s27 = replace(s, engine_version="0.27.0")
    assert kv_plan(spec, s27, resolve(spec, (H100,), s27)).blocks_per_request(32768, 8192) == -(-32768 // 544) + 3
    # TP2 halves the state and the heads: page per token 1024 B, state 548,864 B -> same 544-token block
    s2 = replace(s, tensor_parallel_size=2)
    plan2 = kv_plan(spec, s2, resolve(spec, (H100, H100), s2))
    assert [sp for sp in plan2.layers.values() if sp.kind == "mamba"][0].state_bytes == 1097728 // 2
    assert plan2.block_size == 544 and plan2.page_bytes == 544 * 1024


def test_tp_splits_kv_heads_and_replicates_below_one_per_rank():
    # Qwen2.5-7B: 28 query heads, 4 KV heads. TP2: 2 heads per rank; TP4: 1; TP8 is refused by the heads check
    # (28 % 8); with 4 heads and TP 4 each rank holds one.
    spec = catalog_spec("qwen2.5-7b-instruct")
    for tp, heads in ((1, 4), (2, 2), (4, 1)):
        s = VllmSettings(tensor_parallel_size=tp)
        plan = kv_plan(spec, s, resolve(spec, (H100,) * tp, s))
        assert plan.page_bytes == 16 * heads * 256 * 2
    # Llama-3.1-70B: 8 KV heads at TP16 -> one replica per rank (max(1, 8 // 16))
    spec70 = catalog_spec("llama-3.1-70b-instruct")
    s = VllmSettings(tensor_parallel_size=16)
    plan = kv_plan(spec70, s, resolve(spec70, (H100,) * 16, s))
    assert plan.page_bytes == 16 * 1 * 256 * 2


def test_tp_must_divide_the_attention_heads():
    spec = catalog_spec("qwen3-8b")
    with pytest.raises(OomkitError, match=r"^Total number of attention heads \(32\) must be divisible by tensor "
                                          r"parallel size \(3\)\.$"):
        run(spec, [H100] * 3, tensor_parallel_size=3)


def test_blocks_are_whole_and_tokens_count_whole_blocks():
    spec = catalog_spec("llama-3.1-8b-instruct")
    budget = 2 * MiB * 1000 + 2 * MiB - 1  # one byte short of 1001 blocks of 2 MiB
    v = run(spec, kv_cache_memory_bytes=budget, max_model_len=4096, engine_version="0.19.0").engine_view
    assert v["num_gpu_blocks"] == 1000
    assert v["kv_cache_tokens"] == 16000
    assert v["max_concurrency"] == round(1000 / (4096 // 16), 2)
    # newest: "GPU KV cache size" = int(max_concurrency x max_model_len); the same here (whole blocks)
    v = run(spec, kv_cache_memory_bytes=budget, max_model_len=4000, engine_version="0.33.0").engine_view
    assert v["kv_cache_tokens"] == int(1000 / -(-4000 // 16) * 4000)


def test_too_little_kv_cache_for_one_request_is_vllms_error():
    spec = catalog_spec("llama-3.1-8b-instruct")
    gpu = named_gpu("CUDA0", "NVIDIA GeForce RTX 4090", 24564 * MiB)
    est = ENGINE.estimate(spec, (gpu,), VllmSettings(engine_version="0.10.2"))  # max_model_len 131072
    v = est.engine_view
    assert est.fits is False
    assert v["error"].startswith("To serve at least one request with the models's max seq len (131072), (16.00 GiB "
                                 "KV cache is needed, which is larger than the available KV cache memory (")
    assert f"the estimated maximum model length is {v['estimated_max_model_len']}." in v["error"]
    # the estimate is whole blocks of what is available
    avail = v["available_kv_cache_bytes"]["CUDA0"]
    assert v["estimated_max_model_len"] == avail // (2 * MiB) * 16
    assert any(w.startswith("vLLM refuses to start: To serve") for w in est.warnings)
    # the newest words it without the typo and points to the docs
    new = ENGINE.estimate(spec, (gpu,), VllmSettings()).engine_view["error"]
    assert new.startswith("To serve at least one request with the model's max seq len (131072)")
    assert new.endswith("See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")
    # a context that fits
    ok = ENGINE.estimate(spec, (gpu,), VllmSettings(max_model_len=16384))
    assert ok.fits is True and "error" not in ok.engine_view


def test_max_context_is_the_largest_max_model_len_vllm_accepts():
    from oomkit.estimate import estimate

    est = estimate("llama-3.1-8b-instruct", "vllm", vram=24564 * MiB, engine_version="0.10.2")
    assert est.fits is False
    per_token = 128 * 1024
    assert est.max_context is not None and est.max_context % 256 == 0
    avail = est.engine_view["available_kv_cache_bytes"]["CUDA0"]
    assert est.max_context <= avail // per_token < est.max_context + 256 + 16


def test_weights_shard_over_tp_with_padded_vocabulary():
    # Llama-3.1-8B bf16 per rank at TP2: decoder linears / 2, norms whole, embedding and lm_head: vocab
    # 128256 (already a multiple of 64) / 2; plus the rotary cos/sin cache (131072 x 128 x 2 B)
    spec = catalog_spec("llama-3.1-8b-instruct")
    w1 = run(spec, kv_cache_memory_bytes=GiB).engine_view["model_loading_bytes"]["CUDA0"]
    w2 = run(spec, [H100, H100], tensor_parallel_size=2, kv_cache_memory_bytes=GiB).engine_view
    rope = 131072 * 128 * 2
    norms = (2 * 32 + 1) * 4096 * 2
    assert w1 == 8030261248 * 2 + rope
    # the embedding's and the lm_head's 501 MiB shards each sit in a 502 MiB segment whose 1 MiB tail PyTorch's
    # caching allocator does not split off (should_split: the rest must exceed 1 MiB), so each counts 502 MiB
    tails = 2 * (1 << 20)
    assert w2["model_loading_bytes"]["CUDA0"] == (8030261248 * 2 - norms) // 2 + norms + rope + tails


def test_pipeline_parallel_splits_layers_like_get_pp_indices():
    assert pp_partition(32, 2) == [(0, 16), (16, 32)]
    assert pp_partition(61, 4) == [(0, 15), (15, 30), (30, 46), (46, 61)]  # remainder before the last stage


def test_pipeline_stages_hold_their_layers_and_the_ends_of_the_model():
    # PP2 on Llama-3.1-8B: 16 layers each; the embedding on stage 0, the final norm and lm_head on stage 1
    spec = catalog_spec("llama-3.1-8b-instruct")
    est = run(spec, [H100, H100], pipeline_parallel_size=2, kv_cache_memory_bytes=10 * GiB, max_model_len=8192)
    w = est.engine_view["model_loading_bytes"]
    emb = 128256 * 4096 * 2
    rope = 131072 * 128 * 2
    layers = (8030261248 * 2 - 2 * emb - 4096 * 2) // 2
    assert w["CUDA0"] == layers + emb + rope
    assert w["CUDA1"] == layers + emb + 4096 * 2 + rope
    # each stage's cache holds its own 16 layers
    assert est.engine_view["kv_block_bytes"] == 65536 * 16


def test_auto_fit_max_model_len():
    # --max-model-len -1 (0.19+): the engine shortens max_model_len to what fits instead of refusing
    spec = catalog_spec("llama-3.1-8b-instruct")
    gpu = named_gpu("CUDA0", "NVIDIA GeForce RTX 4090", 24564 * MiB)
    est = ENGINE.estimate(spec, (gpu,), VllmSettings(max_model_len=-1))
    assert est.fits is True
    n = est.settings["max_model_len"]
    assert 0 < n < 131072
    assert any(w.startswith("Auto-fit max_model_len: reduced from 131072 to") for w in est.warnings)


def test_no_gpu_memory_reports_the_kv_one_request_needs():
    spec = catalog_spec("qwen3-8b")
    est = ENGINE.estimate(spec, (named_gpu("CUDA0", "GPU (size unknown)"),), VllmSettings(max_model_len=32768))
    assert est.fits is None
    need = 32768 * 36 * 8 * 256 * 2
    assert est.devices[0].kv_cache_bytes == need
    assert est.engine_view["kv_needed_one_request_bytes"]["CUDA0"] == need
    assert any("no GPU memory given" in w for w in est.warnings)


def test_kv_memory_option_gives_the_token_capacity_of_that_budget():
    spec = catalog_spec("qwen3-8b")
    v = run(spec, kv_cache_memory_bytes=10 * GiB, max_model_len=8192).engine_view
    assert v["available_kv_cache_bytes"]["CUDA0"] == 10 * GiB
    assert v["kv_cache_tokens"] == 10 * GiB // (16 * 36 * 8 * 256 * 2) * 16


def test_bad_input_is_vllms_own_complaint():
    spec = catalog_spec("qwen3-8b")
    with pytest.raises(OomkitError, match=r"User-specified max_model_len \(50000\) is greater than the derived "
                                          r"max_model_len \(max_position_embeddings=40960.*VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"):
        run(spec, max_model_len=50000)
    est = run(spec, max_model_len=50000, allow_long_max_model_len=True)
    assert any("VLLM_ALLOW_LONG_MAX_MODEL_LEN" in w for w in est.warnings)
    with pytest.raises(OomkitError, match=r"argument --kv-cache-dtype: invalid choice: 'q8_0'"):
        run(spec, kv_cache_dtype="q8_0")
    with pytest.raises(OomkitError, match=r"invalid choice: 'float16'"):  # 0.10 had no float16 KV cache
        run(spec, kv_cache_dtype="float16", engine_version="0.10.2")
    with pytest.raises(OomkitError, match="fp8_ds_mla is the DeepSeek sparse-MLA cache format"):
        run(spec, kv_cache_dtype="fp8_ds_mla")
    with pytest.raises(OomkitError, match=r"^AssertionError: 151936 is not divisible by 5"):
        run(catalog_spec("qwen3-14b") if lookup("qwen3-14b") else _qwen3_14b(), [H100] * 5, tensor_parallel_size=5)
    t4 = named_gpu("CUDA0", "NVIDIA T4", 15360 * MiB)
    with pytest.raises(OomkitError, match="Bfloat16 is only supported on GPUs with compute capability of at least 8.0"):
        run(spec, [t4], dtype="bfloat16")
    assert run(spec, [t4], max_model_len=4096).settings["dtype"] == "float16"  # auto falls back on a T4


def _qwen3_14b() -> ModelSpec:
    cfg = dict(lookup("qwen3-8b").config)
    cfg.update(num_attention_heads=40, num_key_value_heads=8, hidden_size=5120, num_hidden_layers=40,
               intermediate_size=17408)
    return spec_from_config(cfg, name="qwen3-14b")


def test_cuda_graphs_enter_the_budget_from_0_21():
    spec = catalog_spec("llama-3.1-8b-instruct")
    old = run(spec, max_model_len=8192, gpu_memory_utilization=0.9, engine_version="0.19.1").engine_view
    new = run(spec, max_model_len=8192, gpu_memory_utilization=0.9, engine_version="0.21.0").engine_view
    eager = run(spec, max_model_len=8192, gpu_memory_utilization=0.9, engine_version="0.21.0",
                enforce_eager=True).engine_view
    cg = new["cudagraph_bytes"]["CUDA0"]
    assert 0 < cg < 2 * GiB
    assert abs(old["available_kv_cache_bytes"]["CUDA0"] - new["available_kv_cache_bytes"]["CUDA0"] - cg) < MiB
    assert eager["available_kv_cache_bytes"]["CUDA0"] > new["available_kv_cache_bytes"]["CUDA0"]


def test_v0_prints_gpu_blocks():
    spec = catalog_spec("llama-3.1-8b-instruct")
    v = run(spec, max_model_len=8192, engine_version="0.6.6").engine_view
    assert v["engine"] == "V0"
    assert re.search(r"^# GPU blocks: \d+, # CPU blocks: 2048$", v["log"], re.M)  # 4 GiB swap / 2 MiB blocks


# ---------------------------------------------------------------------------------------------------------
# Command lines


def test_vllm_serve_command_line():
    cmd = parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "32k", "-tp", "2",
                         "--kv-cache-dtype", "fp8", "--no-enable-prefix-caching", "--gpu_memory_utilization=0.8",
                         "--served-model-name", "a", "b", "--enable-chunked-prefill", "--max-num-seqs", "64",
                         "--trust-remote-code", "--port", "8000"], env={})
    assert cmd.engine == "vllm" and cmd.model == "Qwen/Qwen3-8B"
    s = cmd.settings
    assert (s.max_model_len, s.tensor_parallel_size, s.kv_cache_dtype) == (32000, 2, "fp8")
    assert s.enable_prefix_caching is False and s.gpu_memory_utilization == 0.8
    assert s.enable_chunked_prefill is True and s.max_num_seqs == 64


def test_api_server_module_and_env():
    cmd = parse_command(["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "meta-llama/Llama-3.1-8B",
                         "--kv-cache-memory-bytes", "8G", "--max-model-len", "1K"],
                        env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "VLLM_USE_V1": "0"})
    assert cmd.model == "meta-llama/Llama-3.1-8B"
    s = cmd.settings
    assert s.kv_cache_memory_bytes == 8 * GiB and s.max_model_len == 1024
    assert s.allow_long_max_model_len is True and s.use_v1 is False


def test_unknown_flag_is_refused_as_argparse_does():
    with pytest.raises(OomkitError, match=r"^vllm serve: error: unrecognized arguments: --foo 1$"):
        parse_command(["vllm", "serve", "m", "--foo", "1"], env={})
    with pytest.raises(OomkitError, match=r"argument --max-model-len: expected one argument"):
        parse_command(["vllm", "serve", "m", "--max-model-len"], env={})
    with pytest.raises(OomkitError, match=r"argument --dtype: invalid choice: 'fp4'"):
        parse_command(["vllm", "serve", "m", "--dtype", "fp4"], env={})


def test_engine_neutral_options_map_to_vllm_fields():
    from oomkit.commands._model_args import parse_model_request

    req = parse_model_request(["qwen3-8b", "--engine", "vllm", "--ctx", "8192", "--kv-type", "fp8", "--parallel",
                               "16", "--kv-memory", "10GiB", "--engine-version", "0.10.2", "-tp", "1"])
    s = req.settings
    assert (s.max_model_len, s.kv_cache_dtype, s.max_num_seqs, s.kv_cache_memory_bytes, s.engine_version) == \
        (8192, "fp8", 16, 10 * GiB, "0.10.2")


def test_cli_estimate_json_for_a_vllm_command(capsys):
    from oomkit.cli import main

    rc = main(["estimate", "--vram", "80GiB", "--json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len",
               "32768", "--gpu-memory-utilization", "0.9"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["engine"] == "vllm" and d["fits"] is True
    v = d["engine_view"]
    for key in ("model_loading_bytes", "available_kv_cache_bytes", "kv_cache_tokens", "num_gpu_blocks", "block_size",
                "max_concurrency"):
        assert key in v
    assert d["kv_bytes_per_token"] == 36 * 8 * 256 * 2


def test_cli_table_for_the_options_form(capsys):
    from oomkit.cli import main

    rc = main(["estimate", "qwen3-8b", "--engine", "vllm", "--gpu", "RTX 4090", "--ctx", "8192", "--kv-type", "fp8"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Available KV cache memory:" in out and "max_num_batched_tokens: 2048" in out  # < 70 GiB: 2048/256


def test_weights_larger_than_the_gpu_fail_while_loading():
    est = ENGINE.estimate(catalog_spec("llama-3.1-70b-instruct"), (H100,), VllmSettings(max_model_len=8192))
    assert est.fits is False
    assert est.engine_view["error"].startswith("CUDA out of memory while loading the model")


# ---------------------------------------------------------------------------------------------------------
# Real start-up logs (tests/fixtures/engine_logs/vllm/*.json)


@dataclass
class Case:
    name: str
    fx: dict[str, Any]
    spec: ModelSpec | None = None
    settings: VllmSettings | None = None
    devices: tuple[Device, ...] = ()
    weights_checkable: bool = True
    gpu_known: bool = False
    skip: dict[str, str] = field(default_factory=dict)  # figure -> why not checkable
    errors: dict[str, float] = field(default_factory=dict)  # figure -> relative error (signed)
    version_note: str = ""


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    m = re.match(r"\s*(\d+)", str(v)) if v is not None else None
    return int(m.group(1)) if m else None


def _infer_version(fx: dict[str, Any]) -> tuple[str, str]:
    """The release a fixture ran; inferred from the quoted lines when the log does not say."""
    if fx.get("engine_version"):
        return str(fx["engine_version"]), ""
    quoted = fx.get("quoted", "")
    notes_version = re.search(r"vLLM ~?v?(\d+\.\d+(?:\.\d+)?)", fx.get("notes", ""))
    if (fx.get("settings") or {}).get("engine") == "V0" or "Loading model weights took" in quoted:
        if "Memory profiling results: total_gpu_memory" in quoted:
            return "0.6.4", "V0 0.6.4 (the 'Memory profiling results' line of that release)"
        if notes_version and parse_version(notes_version.group(1)) < (0, 8, 0):
            return notes_version.group(1), f"V0 {notes_version.group(1)} as the fixture's notes place it"
        return "0.7.3", "V0 (0.6.5-0.7.x profile line)"
    m = re.search(r"vLLM ~?v?(\d+\.\d+(?:\.\d+)?)", fx.get("notes", ""))
    if m:
        return m.group(1), f"version {m.group(1)} as the fixture's notes place it"
    m = re.search(r"kv_cache_utils\.py:(\d+)\]", quoted)
    if m:
        line = int(m.group(1))
        version = "0.10.2" if line < 1000 else ("0.19.1" if line < 1400 else "0.24.0")
        return version, f"version inferred from the kv_cache_utils.py line number {line}"
    return "0.10.2", "version not in the log: assumed 0.10 (V1, mid-2025)"


def _spec_for(fx: dict[str, Any]) -> tuple[ModelSpec | None, bool, str]:
    """(spec, weights checkable, why not)."""
    cfg = fx.get("config")
    name = str(fx.get("model") or "model").split(" (")[0]
    if cfg:
        cfg = {k: v for k, v in cfg.items() if k != "config_source"}
    else:
        entry = lookup(name)
        if entry is None:
            return None, False, f"model {name!r}: no config in the fixture and not in the catalog"
        cfg = entry.config
    try:
        return spec_from_config(cfg, name=name), True, ""
    except OomkitError as e:
        if not cfg.get("quantization_config"):
            return None, False, f"config not readable: {e}"
    except Exception:  # the quantized-inventory module may be absent or not know the format
        if not cfg.get("quantization_config"):
            raise
    try:
        spec = config_spec(cfg, name)
    except OomkitError as e:
        return None, False, f"config not readable: {e}"
    return spec, False, "quantized checkpoint: no weight inventory for its format (oomkit.quant.hf_formats)"


def _devices_for(fx: dict[str, Any], world: int) -> tuple[tuple[Device, ...], bool]:
    from oomkit.hardware.catalog import lookup as gpu_lookup

    printed = fx.get("printed") or {}
    gpu = (fx.get("gpus") or [{}])[0]
    name = re.sub(r"\s*\(.*\)$", "", str(gpu.get("name") or ""))
    g = gpu_lookup(name) if name and name != "unknown" else None
    memory = None
    if printed.get("total_gpu_memory_bytes"):  # vLLM's own total_memory: the driver's reserve is not in it
        memory = printed["total_gpu_memory_bytes"] + CUDA_DRIVER_RESERVED
    elif g is not None:
        memory = g.memory_bytes
        need = (printed.get("model_loading_bytes") or 0) + max(printed.get("available_kv_cache_bytes") or 0, 0)
        if need > memory:  # an ambiguous name ("A100": 40 or 80 GB): the log shows it is a larger part
            from oomkit.hardware.catalog import all_gpus

            key = name.lower()
            bigger = sorted((x for x in all_gpus() if x.vendor == g.vendor and x.memory_bytes >= need and (
                key in x.name.lower() or any(a.lower().startswith(key) for a in x.aliases))),
                key=lambda x: x.memory_bytes)
            g = bigger[0] if bigger else None
            memory = g.memory_bytes if g is not None else None
    dev_name = g.name if g is not None else (name or "GPU")
    devices = tuple(named_gpu(f"CUDA{i}", dev_name, memory) for i in range(max(world, 1)))
    if len(devices) == 1 and (free := free_before_the_run(fx)) is not None:
        # what other processes held is off the headroom after the KV cache, as on the user's card (NVML free)
        devices = (replace(devices[0], free_bytes=free),)
    return devices, memory is not None


def free_before_the_run(fx: dict[str, Any]) -> int | None:
    """The card's free memory before a one-GPU run started, read off its OOM line: what was free at the error plus
    what this process then held ("of which 139.75 MiB is free ... this process has 21.72 GiB memory in use"), the
    other processes' memory taken as unchanged meanwhile. None where the log has no OOM line."""
    p = fx.get("printed") or {}
    if "oom_free_mib" not in p or "oom_in_use_gib" not in p:
        return None
    return round(float(p["oom_free_mib"]) * MiB + float(p["oom_in_use_gib"]) * GiB)


def _catalog_config(fx: dict[str, Any]) -> dict[str, Any]:
    """The catalog's config for the fixture's model (a quantized variant carries its quantization_config), or {}."""
    entry = lookup(str(fx.get("model") or "").split(" (")[0]) if fx.get("model") else None
    return dict(entry.config) if entry is not None else {}


def _compiled(quoted: str) -> bool:
    """Whether the start compiled the model (no torch.compile cache yet; settings cold_compile): vLLM's compile
    lines ("Compiling a graph for ...") or a compile time ("torch.compile took 38.96 s in total") far above a cache
    load's (0.15-0.30 s in the 0.27.1 RTX 4090 logs that print "Directly load AOT compilation")."""
    if "Compiling a graph for" in quoted:
        return True
    m = re.search(r"torch\.compile took ([\d.]+) s in total", quoted)
    return bool(m) and float(m.group(1)) >= 5.0


def load_case(path: Path) -> Case:
    fx = json.loads(path.read_text(encoding="utf-8"))
    case = Case(name=path.stem, fx=fx)
    spec, weights_ok, why = _spec_for(fx)
    version, note = _infer_version(fx)
    case.version_note = note
    if spec is None:
        for fig in ("tokens", "weights", "available", "refusal"):
            case.skip[fig] = why
        return case
    case.spec, case.weights_checkable = spec, weights_ok
    st = fx.get("settings") or {}
    cfg_quant = bool((fx.get("config") or _catalog_config(fx)).get("quantization_config"))
    method = str(st.get("quantization") or "")
    if method and not cfg_quant and method != "fp8":
        # a quantized checkpoint (awq, modelopt, ...) whose config in the fixture lacks quantization_config
        case.weights_checkable = False
    if fx.get("weights_not_predictable"):  # a known miss, said in the fixture (e.g. a tower the catalog lacks)
        case.weights_checkable = False
        case.skip["weights"] = case.skip["available"] = case.skip["refusal"] = fx["weights_not_predictable"]
    if "cut in the stored copy" in str(fx.get("command", "")) and "kv_cache_dtype" not in st:
        for fig in ("tokens", "available", "refusal"):
            case.skip[fig] = "the command is cut in the stored copy: KV cache dtype and other settings unknown"
    world = _int(st.get("world_size"))
    opts: dict[str, Any] = {"engine_version": version}
    for key in ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "max_num_seqs",
                "max_num_batched_tokens"):
        v = _int(st.get(key))
        if v:
            opts[key] = v
    if isinstance(st.get("gpu_memory_utilization"), (int, float)):
        opts["gpu_memory_utilization"] = float(st["gpu_memory_utilization"])
    if isinstance(st.get("kv_cache_dtype"), str) and st["kv_cache_dtype"] != "auto":
        opts["kv_cache_dtype"] = st["kv_cache_dtype"]
    if st.get("dtype") in ("float16", "bfloat16", "float32", "half"):
        opts["dtype"] = st["dtype"]
    if st.get("quantization") == "fp8" and not cfg_quant:
        opts["quantization"] = "fp8"  # online fp8 of an unquantized checkpoint
    if isinstance(st.get("moe_backend"), str):
        opts["moe_backend"] = st["moe_backend"]
    for key in ("enforce_eager", "enable_prefix_caching", "use_v1", "enable_expert_parallel", "use_flashinfer_sampler"):
        if isinstance(st.get(key), bool):
            opts[key] = st[key]
    if _compiled(fx.get("quoted", "")):
        opts["cold_compile"] = True
    if isinstance(st.get("cpu_offload_gb"), (int, float)):
        opts["cpu_offload_gb"] = float(st["cpu_offload_gb"])
    spec_cfg = st.get("speculative_config")
    if isinstance(spec_cfg, dict) and spec_cfg.get("num_speculative_tokens"):
        opts["num_speculative_tokens"] = int(spec_cfg["num_speculative_tokens"])
    if "max_model_len" not in opts and (fx.get("printed") or {}).get("max_concurrency_at"):
        opts["max_model_len"] = int(fx["printed"]["max_concurrency_at"])
    if spec.n_ctx_train and opts.get("max_model_len", 0) > spec.n_ctx_train:
        opts["allow_long_max_model_len"] = True  # the run evidently allowed it
    case.settings = VllmSettings(**opts)
    layout = opts.get("tensor_parallel_size", 1) * opts.get("pipeline_parallel_size", 1)
    if world and world != layout:
        for fig in ("tokens", "weights", "available", "refusal"):
            case.skip.setdefault(fig, f"{world} GPUs but the parallel layout is not in the log")
    world = layout
    case.devices, case.gpu_known = _devices_for(fx, world)
    if opts.get("pipeline_parallel_size", 1) > 1 or isinstance((fx.get("printed") or {}).get(
            "available_kv_cache_bytes_per_rank"), dict):
        case.skip["tokens"] = "pipeline parallel: each stage has its own budget"
    return case


# Logs whose per-rank profiling figures are a V0 tensor-parallel worker's, not the driver's (rank 0): in V0 only the
# driver samples in the profile run (engines/vllm/profile.py v0_activation), so its budget is the smallest of all and
# a worker's line prints more. These are held against the prediction for rank 1.
PRINTED_BY_A_WORKER = {
    "deepseek-r1-distill-qwen-14b-2x4090-tp2-v0-util098":
        "the paraphrased 8.69 GiB is above the 7.47 GiB of the engine's 81,536-token count (the minimum over ranks)",
    "qwen3-235b-a22b-8x80gb-tp8-v0-0.8.5-issue18446": "the profiling lines quoted are VllmWorkerProcess pids 232-237",
}


def predict(case: Case) -> None:
    """Fill case.errors (relative, signed) for every checkable figure and case.skip for the others."""
    fx, printed, spec = case.fx, case.fx.get("printed") or {}, case.spec
    if spec is None:
        return
    v0 = case.settings.use_v1 is False or parse_version(_infer_version(fx)[0]) < (0, 8, 0)
    avail_printed = printed.get("available_kv_cache_bytes", printed.get("kv_cache_size_bytes"))
    tokens_printed = printed.get("kv_cache_tokens")
    if tokens_printed is None and printed.get("num_gpu_blocks") and v0:
        tokens_printed = printed["num_gpu_blocks"] * 16
    # tokens for the printed budget (exact arithmetic)
    if "tokens" not in case.skip:
        if avail_printed is None or tokens_printed is None or avail_printed <= 0:
            case.skip["tokens"] = "no printed KV budget and token count"
        else:
            try:
                est = ENGINE.estimate(spec, case.devices, replace(case.settings, kv_cache_memory_bytes=avail_printed))
                got = est.engine_view.get("kv_cache_tokens")
                case.errors["tokens"] = (got - tokens_printed) / tokens_printed
            except OomkitError as e:
                case.skip["tokens"] = f"oomkit refused the settings: {e}"
    # the full chain on the real GPU
    try:
        est = ENGINE.estimate(spec, case.devices, case.settings)
    except OomkitError as e:
        for fig in ("weights", "available", "refusal"):
            case.skip.setdefault(fig, f"oomkit refused the settings: {e}")
        return
    view = est.engine_view
    if printed.get("model_loading_bytes") and case.weights_checkable:
        got = view["model_loading_bytes"]["CUDA0"]
        case.errors["weights"] = (got - printed["model_loading_bytes"]) / printed["model_loading_bytes"]
    else:
        case.skip.setdefault("weights", "no 'Model loading took' line" if not printed.get("model_loading_bytes")
                             else "quantized checkpoint: no weight inventory for its format (oomkit.quant.hf_formats)")
    if avail_printed is not None and case.gpu_known and case.weights_checkable:
        got = view["available_kv_cache_bytes"][case.devices[1].id if case.name in PRINTED_BY_A_WORKER else "CUDA0"]
        case.errors["available"] = (got - avail_printed) / case.devices[0].memory_bytes
    else:
        case.skip.setdefault("available", "no printed KV budget" if avail_printed is None else
                             ("GPU memory not known from the log" if not case.gpu_known else
                              "weights not predictable (quantized checkpoint)"))
    refused = bool(printed.get("error")) or (avail_printed is not None and avail_printed <= 0) or \
        "fail" in case.name or "ERROR" in fx.get("quoted", "") or \
        bool(re.search(r"\bOOM\b", f"{fx.get('command', '')} {fx.get('notes', '')}"))
    if "refusal" in case.skip:
        pass
    elif case.gpu_known and case.weights_checkable:
        case.errors["refusal"] = 0.0 if (est.fits is False) == refused else 1.0
    else:
        case.skip.setdefault("refusal", "GPU memory or weights not known")


def all_cases() -> list[Case]:
    cases = []
    for path in sorted(FIXTURES.glob("*.json")):
        case = load_case(path)
        predict(case)
        cases.append(case)
    return cases


LIMITS = {"tokens": 0.005, "weights": 0.03, "available": 0.03, "refusal": 0.0}


# How far the smallest worker's budget falls below the printed one in the fixtures: at most 1.14 % of the
# tokens (qwen3-235b-a22b-fp8-tp4-h100-lmcache: 8.11 GiB printed gives 180,935 tokens, 178,880 printed); 1.5 %
# leaves a margin.
RANK_MINIMUM_LIMIT = 0.015


def _rank_minimum(case: Case, fig: str, err: float) -> bool:
    """Under TP/PP the printed "Available KV cache memory" is one worker's, while the engine sizes the cache by
    the worker with the least (unify_kv_cache_configs): from that one budget the count can only come out
    high, never low (vllm#13061: 8.69 GiB printed, 7.47 GiB used), by the per-rank difference
    (RANK_MINIMUM_LIMIT)."""
    tp = case.settings.tensor_parallel_size * case.settings.pipeline_parallel_size if case.settings else 1
    return fig == "tokens" and tp > 1 and 0 < err <= RANK_MINIMUM_LIMIT


_CASES: list[Case] | None = None


def cases() -> list[Case]:
    global _CASES
    if _CASES is None:
        _CASES = all_cases()
    return _CASES


class KnownMiss(AssertionError):
    """A figure oomkit is known to miss on a fixture (strict xfail: it must keep missing until fixed)."""


# fixture -> {figure: the measured miss and its cause}; the other figures of these fixtures are still held
FIXTURE_KNOWN_MISSES = {
    "qwen2.5-7b-3090-v0.17.1-util065": {
        "tokens": "+0.88 %: the printed budget 0.49 GiB is rounded to 0.01 GiB (+-1 % at this size); 9,088 tokens are "
                  "0.4853 GiB",
        "refusal": "a boundary run: 0.49 GiB started, the same settings got 0.41 GiB four minutes later and were refused; "
                   "oomkit's 0.43 GiB is under the 0.4375 GiB one request needs (tests/test_startup_deaths.py)"},
    "qwen3-235b-a22b-8x80gb-tp8-v0-0.8.5-issue18446": {
        "available": "+3.88 % of the GPU on a worker (13.86 GiB vs 10.77 GiB; the quoted lines are VllmWorkerProcess "
                     "ones). Weights exact (54.92 GiB); non-torch 2.28 GiB by the NVLink rule (1.82-2.10 in the log); the "
                     "rest is the activation peak, 3.44 GiB in the log, 0.18 GiB here. No default of 0.8.5.post1 gives "
                     "3.44: without --max-model-len the model's 40960 turns V0's chunked prefill on "
                     "(engine/arg_utils.py _set_default_args_v0: max_model_len > 32768, no sliding window, CUDA) at "
                     "2048 tokens (config.py SchedulerConfig, _DEFAULT_MAX_NUM_BATCHED_TOKENS), whose forward on a "
                     "worker (which does not sample in V0) holds 0.18 GiB. A profile near 40K tokens does give it: "
                     "unchunked at 40960 3.03 GiB (+0.29 %; 3.55 and -0.36 % before the fused-MoE caches stopped at "
                     "the 32,768-token chunk), at 32768 2.84 GiB (+0.53 %), chunked at 8192 still +3.21 %; "
                     "so a setting in the cut part of the command (--max-num-batched-tokens, --enable-chunked-prefill "
                     "false or --max-model-len, or --num-scheduler-steps > 1: 0.8.5's config.py SchedulerConfig then sets "
                     "max_num_batched_tokens = max(max_model_len, 2048) even with chunked prefill on), which the stored "
                     "thread does not show. Ruled out in the 0.8.5.post1 wheel: the default chunking (EngineArgs "
                     "enable_chunked_prefill None; Qwen3-235B-A22B has use_sliding_window false, so get_sliding_window "
                     "is None; --enable-lora, a speculative config or --enable-prompt-adapter would turn it off, none "
                     "shown); max_num_seqs 256 (_set_default_args_v0), so 256 prompts of 8 tokens; the sampler (only the "
                     "driver samples: model_runner.py execute_model returns after compute_logits on a worker, whose "
                     "256 x 18,992 logits shard is about 10 MB, gathered to rank 0 only); dummy LoRAs (no lora_config) "
                     "and multimodal dummies (no multimodal tokens for a text model) in _dummy_run; the fused-MoE "
                     "workspace (fused_moe.py fused_experts_impl: M = min(2048, VLLM_FUSED_MOE_CHUNK_SIZE 32768), "
                     "cache13 2048 x 8 x 4096 x 2 B = 128 MiB); CUDA graphs (captured in initialize_cache -> "
                     "_warm_up_model, after determine_num_available_blocks) and torch.compile (V0 keeps level 0: "
                     "VllmConfig sets PIECEWISE only under VLLM_USE_V1). memory_profiling (utils.py) counts the "
                     "allocated peak over profile_run alone, so nothing before it enters the 3.44 GiB"},
}


def _fixture_params() -> list:
    out = []
    for p in sorted(FIXTURES.glob("*.json")):
        miss = FIXTURE_KNOWN_MISSES.get(p.stem)
        out.append(pytest.param(p, id=p.stem, marks=pytest.mark.xfail(
            strict=True, raises=KnownMiss, reason="; ".join(f"{k}: {v}" for k, v in miss.items()))) if miss else
            pytest.param(p, id=p.stem))
    return out


@pytest.mark.parametrize("path", _fixture_params())
def test_fixture(path: Path):
    case = next(c for c in cases() if c.name == path.stem)
    known = FIXTURE_KNOWN_MISSES.get(path.stem, {})
    if not case.errors:
        by_reason: dict[str, list[str]] = {}
        for fig, why in sorted(case.skip.items()):
            by_reason.setdefault(why, []).append(fig)
        pytest.skip("no checkable figure: " + "; ".join(f"{', '.join(figs)}: {why}" for why, figs in by_reason.items()))
    failures = [f"{fig}: {err:+.3%} (limit {LIMITS[fig]:.1%})" for fig, err in case.errors.items()
                if abs(err) > LIMITS[fig] and not _rank_minimum(case, fig, err) and fig not in known]
    assert not failures, f"{case.name}: " + "; ".join(failures) + (f" [{case.version_note}]" if case.version_note
                                                                     else "")
    missed = [f"{fig}: {case.errors[fig]:+.3%}" for fig in known
              if fig in case.errors and abs(case.errors[fig]) > LIMITS[fig]]
    if missed:
        raise KnownMiss(f"{case.name}: " + "; ".join(missed))


def _t4_case() -> Case:
    return next(c for c in cases() if c.name == "deepseek-coder-6.7b-2xT4-tp2-v0-fp16")


def test_t4_0_4_2_refuses_at_the_rope_scaled_length():
    # vllm#5248 (CatYing, 2024-06-12; line numbers of 0.4.2): deepseek-coder-6.7b on 2 x T4 without --max-model-len,
    # "# GPU blocks: 507", then an error. 0.4.2 derives max_model_len 16384 x 4 = 65,536 (config.py
    # _get_and_verify_max_len, rope_scaling linear x 4) and, chunked prefill being off by default before 0.5.3, profiles
    # 65,536 tokens in one forward (max_num_batched_tokens = max(max_model_len, 2048)); the cache then cannot hold one
    # request (worker.py raise_if_cache_size_invalid)
    case = _t4_case()
    est = ENGINE.estimate(case.spec, case.devices, case.settings)
    v = est.engine_view
    assert v["max_model_len"] == 65536 and v["max_num_batched_tokens"] == 65536
    assert est.fits is False and "The model's max seq len (65536) is larger than the maximum number of tokens" in v[
        "error"]
    assert v["num_gpu_blocks"] * 16 < 65536


# vllm#5248 on 2 x T4, 0.4.2: 622 blocks of 4 MiB per rank against the log's 507, +2.99 % of the GPU, inside the
# 3 % band by 0.005 % (630 blocks and +3.2 %, a strict xfail, before the weights' segment tails: weights.py
# segment_tail, down_proj's 43 MiB shard held as its 44 MiB segment in each of the 32 layers, 6.31 GiB a rank for
# 6.28). The profile is what the caching allocator holds after the 65,536-token forward (0.4.2 worker.py: no
# empty_cache before mem_get_info; engines/vllm/allocator.py), 4.09 GiB of segments against 3.52 GiB allocated.
# What is left (0.46 GiB of KV cache) is outside PyTorch and not in the source: 0.4.2 sets up three NCCL
# communicators after its baseline (worker.py init_worker_distributed_environment: the world group's, warmed up by an
# all-reduce and used by broadcast_tensor_dict; pynccl's; and the TP group's, made by the profile forward's first
# all-reduce, communication_op.py), whose buffers over PCIe no log here measures beside the 0.25 GiB taken for all
# (COMM_PCIE, fitted on 0.7.x); and the T4's total (PyTorch's OOM lines give 14.57-14.58 GiB total capacity on T4
# servers, deepseek-ai/DeepSeek-R1#546 and datawhalechina/self-llm#162; oomkit 14.54), about 0.2 % of the GPU
def test_t4_0_4_2_blocks():
    case = _t4_case()
    v = ENGINE.estimate(case.spec, case.devices, case.settings).engine_view
    logged = case.fx["printed"]["num_gpu_blocks"]
    block = 32 * 16 * 128 * 2 * 2 * 16  # layers x KV heads per rank x head_dim x (K, V) x fp16 x 16 tokens
    err = (v["num_gpu_blocks"] - logged) * block / case.devices[0].memory_bytes
    assert abs(err) <= LIMITS["available"], f"{err:+.2%} of the GPU ({v['num_gpu_blocks']} blocks vs {logged})"


def test_v0_profile_counts_the_allocator_segments():
    # 0.4 -> 0.6.3 take the profile as init_gpu_memory less the free memory after profile_run, the cache not
    # emptied (worker.py determine_num_available_blocks): the segments PyTorch's caching allocator made count. By
    # hand for vllm#5248's forward at 65,536 tokens, per rank (hidden 4,096, 16 + 2 x 16 heads of 128, ff 5,504,
    # fp16): the embedding's output (the residual) 512 MiB, layer 0's input norm 512, qkv 768, the attention's
    # torch.empty_like(query) and the backend's own output 256 each, o_proj 512 (neither 256 holds it), gate_up
    # 1,376; the activation (688) splits qkv's freed 768 and down_proj takes the norm's freed 512; every later layer
    # fits in these. 4,192 MiB, against 3,600 MiB allocated at most (down_proj beside the residual, o_proj,
    # gate_up and the activation)
    from oomkit.engines.vllm.allocator import DenseForward, v0_reserved_forward

    widths = DenseForward(hidden=4096, qkv=3 * 16 * 128, attn=16 * 128, ff=5504)
    assert v0_reserved_forward(65536, 2, widths, 32) == 4192 * MiB
    case = _t4_case()
    v = ENGINE.estimate(case.spec, case.devices, case.settings).engine_view
    assert v["activation_peak_bytes"]["CUDA1"] == 4192 * MiB  # the worker, which does not sample
    # from 0.6.4 the allocated peak (torch.cuda.memory_stats): the 3,600 MiB
    later = ENGINE.estimate(case.spec, case.devices, replace(case.settings, engine_version="0.6.4",
                                                             enable_chunked_prefill=False)).engine_view
    assert later["activation_peak_bytes"]["CUDA1"] == 3600 * MiB


def test_rope_scaled_max_model_len_is_derived():
    # vllm#5248 gives no --max-model-len: 0.4.2's config.py _get_and_verify_max_len derives 16,384 x 4 (the catalog's
    # rope_scaling, linear x 4) = 65,536, from the model alone (the release rules: tests/test_rope_scaling.py)
    case = _t4_case()
    assert case.settings.max_model_len is None
    est = ENGINE.estimate(case.spec, case.devices, replace(case.settings, allow_long_max_model_len=False))
    assert est.engine_view["max_model_len"] == 65536


def test_v0_long_context_chunked_prefill_from_0_5_3():
    # engine/arg_utils.py create_engine_config: chunked prefill on by default above 32K from 0.5.3 (PR #6666; read in
    # the 0.5.3 and 0.5.4 wheels, absent from 0.5.0.post1), 512 batched tokens (config.py SchedulerConfig); before,
    # one forward over max_model_len tokens
    case = _t4_case()
    for version, tokens in (("0.5.2", 65536), ("0.5.3", 512), ("0.5.4", 512)):
        est = ENGINE.estimate(case.spec, case.devices, replace(case.settings, engine_version=version))
        assert est.engine_view["max_num_batched_tokens"] == tokens, version


def test_v0_driver_samples_alone():
    # V0's profile runs the sampler on the driver only (profile.py v0_activation); neither log was used to fit it.
    # vllm#15815 (0.7.x, Qwen2.5-32B TP2 at 10,000 tokens): the driver's unprefixed line prints a 1.26 GiB peak, the
    # sampler over 256 x 152,064 rows at 32 B plus the runner's hidden states
    case = next(c for c in cases() if c.name == "qwen2.5-32b-2xl40s-tp2-v0-issue15815")
    act = ENGINE.estimate(case.spec, case.devices, case.settings).engine_view["activation_peak_bytes"]
    logged = case.fx["printed"]["activation_peak_bytes"]
    assert abs(act["CUDA0"] - logged) < 0.01 * GiB, act["CUDA0"] / GiB
    # vllm#13061 (0.7.x, DeepSeek-R1-Distill-Qwen-14B TP2, chunked at 2048 tokens): the engine's count, 81,536 tokens
    # (the minimum over ranks: the driver's), is 7.47 GiB at 48 layers x 4 KV heads x 128 x 2 x 2 B per token per
    # rank, 1.22 GiB below the worker's printed 8.69 GiB
    case = next(c for c in cases() if c.name == "deepseek-r1-distill-qwen-14b-2x4090-tp2-v0-util098")
    view = ENGINE.estimate(case.spec, case.devices, case.settings).engine_view
    driver_logged = case.fx["printed"]["kv_cache_max_tokens"] * 48 * 4 * 128 * 2 * 2
    avail = view["available_kv_cache_bytes"]
    assert abs(avail["CUDA0"] - driver_logged) < 0.03 * case.devices[0].memory_bytes, avail["CUDA0"] / GiB
    assert avail["CUDA1"] - avail["CUDA0"] > 0.8 * GiB


def test_enough_fixtures_are_checkable():
    # the accuracy table over these cases is printed by bench/accuracy_vllm.py
    checked = sum(1 for c in cases() if c.errors)
    assert checked >= 10
