"""LFM2 / LFM2-MoE (short-convolution + attention hybrids) in the vLLM, SGLang and transformers engines.

vLLM and SGLang figures are written from the engines' source (cited per test), not from oomkit's output;
transformers figures are measured on the CPU with tiny random-weight models (transformers installed in the venv).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines import transformers as tfe
from oomkit.engines.vllm import ENGINE as VLLM
from oomkit.engines.vllm import VllmSettings, kv_plan, resolve
from oomkit.errors import OomkitError
from oomkit.model.hf_config import spec_from_config
from oomkit.units import GiB, cdiv
from tests.test_hf_config_recent import LFM2_1_2B, LFM2_MOE_3L
from tests.test_transformers_engine import _hf_model, measure, predict
from tests.test_vllm import H100

# ---------------------------------------------------------------------------------------------------------
# vLLM (read in 0.21-0.34: model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator.short_conv_state_shape,
# model_executor/models/config.py HybridAttentionMambaModelConfig.verify_and_update_config,
# v1/core/kv_cache_planning.py _get_kv_cache_groups_uniform_page_size, kv_cache_utils.py get_kv_cache_capacity)


def _lfm2_vllm(cfg: dict, tp: int = 1, **kw):
    spec = spec_from_config(cfg, name="lfm2")
    s = VllmSettings(max_model_len=4096, tensor_parallel_size=tp, **kw)
    return spec, s, kv_plan(spec, s, resolve(spec, (H100,) * tp, s))


def test_vllm_lfm2_state_page_and_groups():
    # short_conv_state_shape: (conv_kernel - 1, conv_dim // tp) in the model dtype (bf16), no temporal state:
    # LFM2-1.2B conv_L_cache 3, conv_dim = hidden 2048 -> 2 x 2048 x 2 = 8192 B per conv layer
    spec, s, plan = _lfm2_vllm(LFM2_1_2B)
    conv = [sp for sp in plan.layers.values() if sp.kind == "mamba"]
    attn = [sp for sp in plan.layers.values() if sp.kind == "full"]
    assert len(conv) == 10 and len(attn) == 6
    assert {sp.state_bytes for sp in conv} == {2 * 2048 * 2}
    # attention: 8 KV heads x (64 + 64) x 2 B = 2048 B per token; the block grows in multiples of 16 until a page
    # holds the state: 16 x cdiv(8192, 16 x 2048) = 16 tokens, page 32,768 B; the conv page is padded to it
    assert {sp.bytes_per_token for sp in attn} == {8 * 128 * 2}
    assert plan.block_size == 16 and plan.page_bytes == 16 * 2048
    assert all(sp.page_bytes == 16 * 2048 for sp in plan.layers.values())
    # 10 conv + 6 attention layers: group size min(10, 6) = 6 (10 >= 1.5 x 6), conv split in cdiv(10, 6) = 2 groups
    assert plan.group_size == 6 and plan.n_groups == 3
    assert plan.bytes_per_block == 6 * 16 * 2048
    # a request at 4096 tokens: cdiv(4096, 16) blocks of the attention group + 2 in each conv group (mamba_cache_mode
    # "align": prefix caching is on by default for hybrid models from 0.28, engine/arg_utils.py), 1 each before
    assert plan.blocks_per_request(4096, 8192) == cdiv(4096, 16) + 2 * 2
    s27 = replace(s, engine_version="0.27.0")
    assert kv_plan(spec, s27, resolve(spec, (H100,), s27)).blocks_per_request(4096, 8192) == cdiv(4096, 16) + 2


def test_vllm_lfm2_tp2_and_moe():
    # TP2: conv_dim // 2 -> 2 x 1024 x 2 = 4096 B; attention 4 heads x 128 x 2 = 1024 B/token -> block 16, page 16 KiB
    _, _, plan = _lfm2_vllm(LFM2_1_2B, tp=2)
    assert {sp.state_bytes for sp in plan.layers.values() if sp.kind == "mamba"} == {4096}
    assert plan.block_size == 16 and plan.page_bytes == 16 * 1024
    # LFM2-MoE (models/lfm2_moe.py passes hidden_size): 2 conv + 1 attention layer -> group size 1 (2 >= 1.5 x 1),
    # three groups, one page per block
    _, _, moe = _lfm2_vllm(LFM2_MOE_3L)
    assert {sp.state_bytes for sp in moe.layers.values() if sp.kind == "mamba"} == {2 * 2048 * 2}
    assert moe.group_size == 1 and moe.n_groups == 3 and moe.bytes_per_block == 16 * 2048


def test_vllm_lfm2_blocks_and_tokens_for_the_budget():
    """get_num_blocks: available // (page x group_size); get_kv_cache_capacity: tokens = int(num_blocks /
    blocks per request x max_model_len), blocks per request = sum over groups of cdiv(max usage, page)."""
    spec = spec_from_config(LFM2_1_2B, name="lfm2")
    est = VLLM.estimate(spec, (H100,), VllmSettings(max_model_len=4096))
    v = est.engine_view
    avail = v["available_kv_cache_bytes"]["CUDA0"]
    blocks = avail // (6 * 16 * 2048)
    assert v["num_gpu_blocks"] == blocks
    assert v["kv_cache_tokens"] == int(blocks / (cdiv(4096, 16) + 2 + 2) * 4096)  # align mode from 0.28: 2 a group


def test_vllm_lfm2_prefix_caching_align_mode():
    # --enable-prefix-caching: MambaModelConfig sets mamba_cache_mode "align"; ShortConv declares no prefill
    # checkpoint alignment (abstract.py get_prefill_checkpoint_alignment -> None), so the block stays 16 tokens
    # (platforms/interface.py _align_hybrid_block_size, 0.33) and MambaSpec.max_memory_usage_bytes is 2 pages
    _, _, plan = _lfm2_vllm(LFM2_1_2B, enable_prefix_caching=True)
    assert plan.block_size == 16 and plan.page_bytes == 16 * 2048
    assert plan.blocks_per_request(4096, 8192) == cdiv(4096, 16) + 2 * 2


def test_vllm_lfm2_speculative_refused():
    # 0.29+: ShortConv.get_state_shape adds num_spec rows, Lfm2ForCausalLM.get_mamba_state_shape_from_config
    # (which sizes the page) does not: not modelled, refused in one line
    with pytest.raises(OomkitError, match="speculative"):
        _lfm2_vllm(LFM2_1_2B, num_speculative_tokens=2)


# ---------------------------------------------------------------------------------------------------------
# SGLang (configs/lfm2.py, configs/lfm2_moe.py mamba2_cache_params -> configs/mamba_utils.py Mamba2StateShape.create
# with state_size 0; conv dtype mamba2_state_dtype: SGLANG_MAMBA_CONV_DTYPE, default bfloat16)


def test_sglang_lfm2_conv_state_per_request():
    spec = spec_from_config(LFM2_1_2B, name="lfm2")
    s = sg.SGLangSettings()
    conv, ssm = sg.mamba_cache_per_req(sg.cache_layout(spec, s), s, spec)
    # 10 conv layers x (hidden 2048, conv_L_cache - 1 = 2) x 2 B; temporal (tp/tp, 2048, 0) is empty
    assert conv == 10 * 2048 * 2 * 2 and ssm == 0
    s2 = sg.SGLangSettings(tp_size=2)
    conv2, _ = sg.mamba_cache_per_req(sg.cache_layout(spec, s2), s2, spec)
    assert conv2 == conv // 2


def test_sglang_lfm2_pool_and_release_gate():
    spec = spec_from_config(LFM2_1_2B, name="lfm2")
    s = sg.SGLangSettings()
    per_req = 10 * 2048 * 2 * 2
    pool = sg.size_pool(spec, s, kv_budget=16 * GiB)
    # handle_max_mamba_cache (0.5.18+): the state takes ratio / (1 + ratio) of the rest, a padding slot budgeted
    budget = 16 * GiB * 0.9 / 1.9
    assert pool.max_mamba_cache_size == int((budget - per_req) // per_req)
    assert pool.conv_state_bytes == (pool.max_mamba_cache_size + 1) * per_req and pool.ssm_state_bytes == 0
    with pytest.raises(OomkitError, match="no lfm2 model"):
        sg.size_pool(spec, sg.SGLangSettings(engine_version="0.5.7"), kv_budget=16 * GiB)
    moe = spec_from_config(LFM2_MOE_3L, name="lfm2moe")
    with pytest.raises(OomkitError, match="no lfm2moe model"):
        sg.size_pool(moe, sg.SGLangSettings(engine_version="0.5.8"), kv_budget=16 * GiB)


# ---------------------------------------------------------------------------------------------------------
# transformers: DynamicCache(config) gives conv layers a LinearAttentionLayer whose conv state is
# (B, hidden, conv_L_cache) in the model dtype (models/lfm2/modeling_lfm2.py Lfm2ShortConv.forward)

_TINY_TYPES = ["conv", "conv", "full_attention", "conv"]
TINY_LFM2 = {
    "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 384, "max_position_embeddings": 2048,
    "intermediate_size": 128, "block_ff_dim": 128, "block_auto_adjust_ff_dim": False, "conv_L_cache": 3,
    "norm_eps": 1e-05, "tie_embedding": True, "layer_types": _TINY_TYPES, "torch_dtype": "bfloat16",
}
TINY_LFM2_MOE = {
    "architectures": ["Lfm2MoeForCausalLM"], "model_type": "lfm2_moe", "hidden_size": 64, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 384, "max_position_embeddings": 2048,
    "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
    "num_dense_layers": 1, "conv_L_cache": 3, "norm_eps": 1e-05, "tie_embedding": True, "layer_types": _TINY_TYPES,
    "torch_dtype": "bfloat16",
}


@pytest.mark.parametrize("cfg", [TINY_LFM2, TINY_LFM2_MOE], ids=["lfm2", "lfm2_moe"])
@pytest.mark.parametrize(("batch", "prompt", "new"), [(1, 9, 3), (2, 17, 5)])
def test_transformers_lfm2_caches_match_a_real_run(cfg, batch, prompt, new):
    nbytes, storage = measure(_hf_model(cfg), batch, prompt, new)
    pred = predict(cfg, batch, prompt, new)
    assert [c.nbytes_end for c in pred] == nbytes
    assert [c.storage_end for c in pred] == storage
    assert pred[0].conv_bytes == batch * 64 * 3 * 2 and pred[0].ssm_bytes == 0


# transformers 5.4.0 (the last release with Lfm2HybridConvCache), measured on the CPU with the same tiny LFM2 and
# generate call as above (the 5.4.0 wheel run against this venv's torch): per layer, (sum of tensor.nbytes, bytes of
# the storages alive); every layer holds a (B, 64, 3) bf16 conv state, the attention layer 2 also K/V of P + N - 1
# tokens x 2 KV heads x 16
MEASURED_5_4_0 = {
    (1, 9, 3): [(384, 384), (384, 384), (1792, 1792), (384, 384)],
    (2, 17, 5): [(768, 768), (768, 768), (6144, 6144), (768, 768)],
}


@pytest.mark.parametrize("shape", sorted(MEASURED_5_4_0))
def test_transformers_lfm2_hybrid_conv_cache_before_5_5(shape):
    batch, prompt, new = shape
    spec = spec_from_config(TINY_LFM2, name="tiny")
    s = tfe.TransformersSettings(prompt_tokens=prompt, max_new_tokens=new, batch_size=batch, engine_version="5.4.0")
    pred = tfe.layer_caches(spec, tfe.resolve(spec, s))
    assert [(c.nbytes_end, c.storage_end) for c in pred] == MEASURED_5_4_0[shape]
    assert {c.cls.split("+")[0] for c in pred} <= {"Lfm2HybridConvCache", "Dynamic"}


def test_transformers_lfm2_release_gates():
    spec = spec_from_config(TINY_LFM2, name="tiny")
    with pytest.raises(OomkitError, match="no lfm2 model"):
        tfe.layer_caches(spec, tfe.resolve(spec, tfe.TransformersSettings(engine_version="4.53.3")))
    moe = spec_from_config(TINY_LFM2_MOE, name="tiny")
    with pytest.raises(OomkitError, match="no lfm2moe model"):
        tfe.layer_caches(moe, tfe.resolve(moe, tfe.TransformersSettings(engine_version="4.57.6")))
    with pytest.raises(OomkitError, match="Lfm2HybridConvCache"):
        tfe.layer_caches(spec, tfe.resolve(spec, tfe.TransformersSettings(engine_version="5.4.0",
                                                                        cache_implementation="static")))
