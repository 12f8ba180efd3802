"""Mamba-style models on vLLM's V0 engine (0.5.1 -> 0.10.2).

Which engine: engine/arg_utils.py EngineArgs._is_v1_supported_oracle (0.8.0-0.10.2) sends a SupportsV0Only class to V0
(registry.py is_v1_compatible): JambaForCausalLM and MambaForCausalLM to 0.10.0, Mamba2ForCausalLM to 0.9.1,
GraniteMoeHybridForCausalLM 0.9.0-0.9.1, NemotronHForCausalLM 0.9.1; before 0.8.0 V0 is the default.

How V0 sizes them: worker/cache_engine.py CacheEngine.get_cache_block_size counts the attention layers only
(get_num_layers_by_block_type(..., "attention")); model_executor/models/mamba_cache.py MambaCacheManager (before
0.6.3 models/jamba.py _prepare_mamba_cache) allocates (Mamba layers, max_batch_size) + conv / temporal state shape
in lm_head.weight.dtype in the model's first forward, the profile run, so it sits in the profiled peak and stays
allocated. max_batch_size: pad_for_cudagraph(max_num_seqs) (max_num_seqs with --enforce-eager, 0.7.3+; 8192 + 2 in
0.6.5-0.7.2; _get_graph_batch_size(max_num_seqs) in 0.5.3-0.6.4; 266 in 0.5.1-0.5.2).

No public V0 log of a model oomkit reads was found with the figures (corpus "issues": vllm PR #10909 is Bamba on a
development build, which oomkit does not read; vllm#7992's Jamba excerpt has no memory line), so every expected value
below is written out from the source's arithmetic and the models' config.json values, not read from oomkit."""

from __future__ import annotations

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.config import resolve
from oomkit.engines.vllm.kv import v0_graph_batch_size, v0_mamba_batch
from oomkit.errors import OomkitError
from tests.startup_heldout import gpus
from tests.test_vllm_startup import spec_of

JAMBA = "ai21labs/AI21-Jamba-Mini-1.5"  # 32 layers: attention every 8th from 4 (4), Mamba 28; hidden 4096,
# mamba_expand 2 (d_inner 8192), mamba_d_state 16, mamba_d_conv 4, 8 KV heads of 128, bfloat16
GRANITE_H = "ibm-granite/granite-4.0-h-tiny"
MAMBA_130M = "state-spaces/mamba-130m-hf"  # 24 Mamba layers, hidden 768 (d_inner 1536), d_state 16, d_conv 4,
# float32 in config.json, which vLLM's dtype "auto" runs as float16


def _jamba_tp2(version: str, **kw):
    return ENGINE.estimate(spec_of(JAMBA), gpus("H100 80GB", 2),
                           VllmSettings(engine_version=version, tensor_parallel_size=2, **kw))


def _jamba_state_tp2(conv_cols: int, batch: int) -> int:
    # MambaCacheManager: conv (d_inner/tp, conv_cols) + temporal (d_inner/tp, d_state), 2 bytes, 28 layers
    return 28 * batch * (8192 // 2 * conv_cols + 8192 // 2 * 16) * 2


@pytest.mark.parametrize("version", ["0.8.0", "0.9.2", "0.10.0"])
def test_jamba_runs_on_v0_to_0_10_0_with_the_mamba_cache_outside_the_blocks(version):
    est = _jamba_tp2(version)
    v = est.engine_view
    assert v["engine"] == "V0" and v["max_num_seqs"] == 256  # V0's default
    assert any("JambaForCausalLM" in w and "Falling back to V0" in w for w in est.warnings)
    # the blocks hold the 4 attention layers alone: 16 tokens x 4 layers x (K + V) x 8/2 heads x 128 x 2 bytes
    assert v["kv_block_bytes"] == 16 * 4 * 2 * 4 * 128 * 2 == 131_072
    state = _jamba_state_tp2(4 - 1, 256)  # pad_for_cudagraph(256) = 256
    assert state == 1_115_684_864
    for dev in est.devices:
        assert dev.recurrent_state_bytes == state
    # worker.py determine_num_available_blocks: the state is part of the profiled peak, so the budget pays it
    for d in ("CUDA0", "CUDA1"):
        assert v["activation_peak_bytes"][d] >= state
        assert v["available_kv_cache_bytes"][d] == (v["requested_memory_bytes"][d] - v["model_loading_bytes"][d]
                                                    - v["activation_peak_bytes"][d] - v["non_torch_bytes"][d])
    assert v["num_gpu_blocks"] == min(v["available_kv_cache_bytes"].values()) // 131_072


def test_jamba_on_v1_from_0_10_1():
    v = _jamba_tp2("0.10.1.1").engine_view
    assert v["engine"] == "V1"


def test_jamba_vllm_use_v1_refused_while_v0_only():
    with pytest.raises(OomkitError, match=r"VLLM_USE_V1=1 is not supported with \['JambaForCausalLM'\]"):
        _jamba_tp2("0.9.0", use_v1=True)


def test_jamba_conv_state_before_0_6_3_keeps_every_column():
    # models/jamba.py _get_mamba_cache_shape 0.5.1-0.6.2: (d_inner/tp, mamba_d_conv); _get_graph_batch_size(256)
    est = _jamba_tp2("0.6.0")
    assert est.devices[0].recurrent_state_bytes == _jamba_state_tp2(4, 256) == 1_174_405_120


def test_jamba_before_its_first_release_is_refused():
    with pytest.raises(OomkitError, match=r"vLLM 0\.5\.0 has no JambaForCausalLM"):
        _jamba_tp2("0.5.0")


@pytest.mark.parametrize("version,eager,seqs,want", [
    ("0.5.1", False, 100, 266),   # _BATCH_SIZES_TO_CAPTURE[-1] + 10
    ("0.6.0", False, 100, 104),   # _get_graph_batch_size: up to a multiple of 8
    ("0.6.0", True, 3, 4),        # eager too, before 0.6.5
    ("0.6.6", True, 100, 8194),   # 8192 + 2 with --enforce-eager, 0.6.5-0.7.2
    ("0.7.3", True, 100, 100),    # mamba_cache.py: max_num_seqs with --enforce-eager
    ("0.9.1", False, 100, 104),   # pad_for_cudagraph
])
def test_mamba_cache_batch_by_release(version, eager, seqs, want):
    s = VllmSettings(engine_version=version, enforce_eager=eager, max_num_seqs=seqs)
    r = resolve(spec_of(JAMBA), gpus("H100 80GB", 1), s)
    assert v0_mamba_batch(s, r) == want


def test_graph_batch_size():
    assert [v0_graph_batch_size(n) for n in (1, 2, 3, 4, 5, 8, 9, 256, 257)] == [1, 2, 4, 4, 8, 8, 16, 256, 264]


def test_attention_free_mamba_has_no_blocks_on_v0():
    est = ENGINE.estimate(spec_of(MAMBA_130M), gpus("H100 80GB", 1), VllmSettings(engine_version="0.8.0"))
    v = est.engine_view
    assert v["engine"] == "V0" and v.get("num_gpu_blocks") is None
    # 24 layers x 256 sequences x ((d_conv - 1) x 1536 + 1536 x 16) x 2 bytes (float16)
    assert est.devices[0].recurrent_state_bytes == 24 * 256 * (3 * 1536 + 1536 * 16) * 2 == 358_612_992


def test_granite_4_h_on_v0_in_0_9_1_then_v1():
    spec = spec_of(GRANITE_H)
    old = ENGINE.estimate(spec, gpus("H100 80GB", 1), VllmSettings(engine_version="0.9.1"))
    assert old.engine_view["engine"] == "V0" and old.devices[0].recurrent_state_bytes > 0
    new = ENGINE.estimate(spec, gpus("H100 80GB", 1), VllmSettings(engine_version="0.9.2"))
    assert new.engine_view["engine"] == "V1" and new.devices[0].recurrent_state_bytes == 0
