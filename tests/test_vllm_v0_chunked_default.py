"""V0's default chunked prefill for long contexts, and the batch its profile runs without it.

vLLM's V0 turns chunked prefill on by itself for max_model_len > 32768 (2,048 batched tokens from 0.6.5, 512
before) only where none of the conditions of engine/arg_utils.py (EngineArgs.create_engine_config 0.5.3-0.7.3,
_set_default_args_v0 0.8.0+) holds; otherwise the profile runs max(max_model_len, 2048) tokens in one forward
(config.py SchedulerConfig.__post_init__). The conditions, read in the 0.5.3.post1, 0.5.4, 0.5.5, 0.6.0-0.6.6,
0.7.0, 0.7.3, 0.8.0 and 0.8.5.post1 wheels: a sliding window (ModelConfig.get_sliding_window) or speculative
decoding (every release), prefix caching asked for (0.5.3-0.6.0), seqlen-agnostic (Mamba) layers (0.5.4-0.6.2),
a multimodal model (0.6.2+), a pooling model (0.6.5+), MLA (0.8.0+, not in 0.7.3). The expected figures are that
arithmetic on the models' config.json (max_position_embeddings), not oomkit's output.
"""

from __future__ import annotations

import pytest

from tests.test_vllm import H100, catalog_spec, run


def _tokens(name: str, version: str, **kw) -> int:
    est = run(catalog_spec(name), [H100] * 8, tensor_parallel_size=8, engine_version=version, use_v1=False, **kw)
    return est.engine_view["max_num_batched_tokens"]


@pytest.mark.parametrize("version, tokens", [("0.7.3", 2048), ("0.8.0", 163840), ("0.8.5", 163840)])
def test_mla_keeps_chunking_off_from_0_8(version, tokens):
    # DeepSeek-V2-Lite-Chat: MLA, max_position_embeddings 163840; 0.8.0's "Chunked prefill not supported for
    # Multimodal or MLA in V0" is absent from 0.7.3
    assert _tokens("deepseek-v2-lite-chat", version) == tokens


@pytest.mark.parametrize("version", ["0.5.3", "0.6.4", "0.8.5"])
def test_sliding_window_keeps_chunking_off(version):
    # Phi-3-mini-128k-instruct: sliding_window 262144 (no use_sliding_window key), max_position_embeddings 131072
    assert _tokens("phi-3-mini-128k-instruct", version) == 131072


def test_qwen3_235b_of_vllm_18446_chunks_at_2048():
    # the V0 0.8.5.post1 run of vllm#18446: use_sliding_window false, no MLA, text only, so 40960 > 32768 turns
    # chunking on at _DEFAULT_MAX_NUM_BATCHED_TOKENS
    assert _tokens("qwen3-235b-a22b", "0.8.5") == 2048
    assert _tokens("qwen3-235b-a22b", "0.8.5", enable_chunked_prefill=False) == 40960


@pytest.mark.parametrize("version, tokens", [("0.5.3", 131072), ("0.6.0", 131072), ("0.6.1", 512)])
def test_prefix_caching_kept_chunking_off_up_to_0_6_0(version, tokens):
    # Llama-3.1-8B-Instruct: max_position_embeddings 131072, no sliding window; "and not self.enable_prefix_caching"
    # is in 0.5.3-0.6.0's condition, gone in 0.6.1 (512 batched tokens before 0.6.5)
    assert _tokens("llama-3.1-8b-instruct", version, enable_prefix_caching=True) == tokens
    assert _tokens("llama-3.1-8b-instruct", version) == 512


def test_fused_moe_workspace_stops_at_the_chunk():
    # model_executor/layers/fused_moe/fused_moe.py fused_experts_impl (0.8.5.post1, 0.9.2): the intermediate caches
    # are sized for M = min(num_tokens, VLLM_FUSED_MOE_CHUNK_SIZE), envs.py's "32768", and the batch is walked chunk
    # by chunk. Qwen3-235B-A22B at TP 8 (moe_intermediate_size 1536 / 8 = 192, so N = 384; hidden 4096; top-8):
    # cache13 M x 8 x max(384, 4096) x 2 B, cache2 M x 8 x 192 x 2 B. From 32,768 to 65,536 tokens a worker's
    # profile peak grows by the dense forward alone, not by another 32,768 x 68,608 B of workspace
    def worker_peak(tokens: int) -> int:
        est = run(catalog_spec("qwen3-235b-a22b"), [H100] * 8, tensor_parallel_size=8, engine_version="0.8.5",
                  use_v1=False, max_num_batched_tokens=tokens)
        assert est.engine_view["max_num_batched_tokens"] == tokens
        return est.engine_view["activation_peak_bytes"][est.devices[1].id]  # a worker: no sampler in V0

    workspace = 32768 * 8 * (4096 + 192) * 2
    grown = worker_peak(65536) - worker_peak(32768)
    assert grown < workspace / 2, grown
    assert worker_peak(32768) > workspace
