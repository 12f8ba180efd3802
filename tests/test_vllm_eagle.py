"""vLLM with a separate EAGLE / EAGLE-3 drafter (--speculative-config '{"method": "eagle3", "model": ...}'), model
runners V1 and V2: the drafter's weights, its KV cache layer and its profile pass (engines/vllm/drafter.py).

Logs (tests/fixtures/engine_logs/vllm/eagle/):
* vllm-project/speculators#166 (2025-10-30, vLLM ~0.11.1): meta-llama/Meta-Llama-3.1-8B-Instruct with
yuhuili/EAGLE3-LLaMA3.1-Instruct-8B (converted), "Model loading took 15.8114 GiB" with the embedding shared and the
32,000-row lm_head loaded separately. The figures below are the log's, never oomkit's. The GPU of that run is not
named, so only the weights are held to it; the KV layout and the profile pass are checked for their structure
(what vLLM's code adds), not against a log.
* 99sono/DockerBuildFiles gemma-4-26b-5090 (vLLM 0.19.2rc1, RTX 5090): RedHatAI/gemma-4-26B-A4B-it-NVFP4 with
  RedHatAI/gemma-4-26B-A4B-it-speculator.eagle3: 16.12 GiB loaded, 7.77 GiB available, 65,696 tokens. Neither the
  drafter's config nor that NVFP4 checkpoint is in the catalog: a strict xfail until they are.
No public start-up log of an EAGLE / MTP drafter on model runner V2 (0.29+, lines from v1/worker/gpu/model_runner.py)
was found (vllm issues searched for eagle3 with "Model loading took" / "Capturing prefill CUDA graphs": the logs found
are V1's gpu_model_runner.py, or drafters outside the catalog as in vllm#50159); the V2 tests derive their figures by
hand from the source's shapes.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from oomkit.engines.vllm import ENGINE, VllmSettings
from oomkit.engines.vllm.args import parse_args
from oomkit.errors import OomkitError
from tests.test_vllm_new_logs import gpus
from tests.test_vllm_startup import FIXTURES, LIMIT, spec_of

GIB = 2**30
LLAMA = "llama-3.1-8b-eagle3-speculators166-v0.11"
GEMMA = "gemma-4-26b-a4b-nvfp4-eagle3-5090-v0.19.2"
H100 = "NVIDIA H100 80GB HBM3"


def fixture(stem: str) -> dict:
    """The EAGLE logs sit in their own folder (eagle/): the sweep of tests/test_vllm.py reads the top folder only and
    passes no drafter."""
    return json.loads((FIXTURES / "eagle" / f"{stem}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    fx = fixture(LLAMA)
    path = tmp_path_factory.mktemp("drafter") / "config.json"
    path.write_text(json.dumps(fx["drafter_config"]), encoding="utf-8")
    st = fx["settings"]
    base = VllmSettings(engine_version=fx["engine_version"], max_model_len=st["max_model_len"],
                        gpu_memory_utilization=st["gpu_memory_utilization"], usage_context=st["usage_context"])
    sc = st["speculative_config"]
    eagle = replace(base, num_speculative_tokens=sc["num_speculative_tokens"], speculative_method=sc["method"],
                    speculative_model=str(path))
    spec = spec_of(fx["model"])
    return fx, spec, base, eagle, str(path)


def test_eagle3_weights_match_the_log(llama):
    """15.8114 GiB: Llama 3.1 8B (14.99) + the EAGLE-3 head: one decoder layer (qkv over 2 x 4096 inputs, o,
    gate_up, down), fc (3 x 4096 -> 4096), norms, the 32,000 x 4096 lm_head and d2t; the embedding is the target's."""
    fx, spec, _, eagle, _ = llama
    got = ENGINE.estimate(spec, gpus(H100, 1), eagle).engine_view["model_loading_bytes"]["CUDA0"]
    logged = fx["printed"]["model_loading_bytes"]
    assert abs(got - logged) / logged < LIMIT, got / GIB
    assert abs(got - logged) / logged < 0.005, got / GIB  # -0.2 % at present


def test_eagle3_head_is_what_the_target_lacks(llama):
    """The log's difference to the bare target (14.9888 GiB printed by every Llama 3.1 8B bf16 log): 0.82 GiB;
    a drafter that also kept its own 128,256 x 4096 embedding would add 0.98 GiB more."""
    _, spec, base, eagle, _ = llama
    plain = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["model_loading_bytes"]["CUDA0"]
    head = ENGINE.estimate(spec, gpus(H100, 1), eagle).engine_view["model_loading_bytes"]["CUDA0"] - plain
    assert 0.75 * GIB < head < 0.85 * GIB, head / GIB


def test_drafter_layer_joins_the_kv_groups(llama):
    """get_kv_cache_spec: the drafter's attention layer takes KV beside the target's 32 (8 heads x 128, bf16):
    131,072 -> 135,168 bytes a token, the same budget holding 32/33 of the tokens."""
    _, spec, base, eagle, _ = llama
    budget = 40 * GIB
    t0 = ENGINE.estimate(spec, gpus(H100, 1), replace(base, kv_cache_memory_bytes=budget)).engine_view
    t1 = ENGINE.estimate(spec, gpus(H100, 1), replace(eagle, kv_cache_memory_bytes=budget)).engine_view
    assert t0["kv_cache_tokens"] // 16 == budget // (16 * 131072)
    assert t1["kv_cache_tokens"] // 16 == budget // (16 * 135168)


def test_profile_pass_holds_the_aux_hidden_states(llama):
    """_dummy_run: drafter.dummy_run(T) with the target's output and the three EAGLE-3 aux hidden states alive:
    the available KV cache shrinks by the head's weights plus T x 4096 x 2 B x (4 + 2 + 1). The sampler pass comes
    after (its peak is separate), so few sequences are asked for, where the forward is the profile's peak."""
    _, spec, base, eagle, _ = llama
    base, eagle = replace(base, max_num_seqs=8), replace(eagle, max_num_seqs=8)
    v0 = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view
    v1 = ENGINE.estimate(spec, gpus(H100, 1), eagle).engine_view
    w = v1["model_loading_bytes"]["CUDA0"] - v0["model_loading_bytes"]["CUDA0"]
    drop = v0["available_kv_cache_bytes"]["CUDA0"] - v1["available_kv_cache_bytes"]["CUDA0"]
    T = 8192  # the batched tokens of an LLM-class run on an H100 (usage_context "llm", 0.11: 16,384 at most)
    assert w < drop <= w + 7 * 2 * T * 4096 * 2 + 2**20, (w / GIB, drop / GIB)


def test_command_line_eagle3_is_counted(llama):
    """--speculative-config with an EAGLE-3 model is modelled (no 'unmodelled' note), its model read from a path."""
    _, _, _, _, path = llama
    _, _, s = parse_args(["serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                          json.dumps({"method": "eagle3", "model": path, "num_speculative_tokens": 3})])
    assert s.speculative_model == path
    assert not any("drafter" in u for u in s.unmodelled)


def test_command_line_drafter_without_a_config_is_said_not_counted():
    """A drafter whose config is neither local nor in the catalog: the estimate goes on without it and says so."""
    _, _, s = parse_args(["serve", "Qwen/Qwen3-8B", "--speculative-config", json.dumps(
        {"method": "eagle3", "model": "RedHatAI/Qwen3-8B-speculator.eagle3", "num_speculative_tokens": 5})])
    assert s.speculative_model is None
    assert any("eagle3=RedHatAI/Qwen3-8B-speculator.eagle3" in u for u in s.unmodelled)


def test_ngram_and_suffix_load_nothing(llama):
    _, spec, base, _, _ = llama
    plain = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["model_loading_bytes"]["CUDA0"]
    for method in ("ngram", "suffix"):
        s = replace(base, num_speculative_tokens=3, speculative_method=method)
        got = ENGINE.estimate(spec, gpus(H100, 1), s).engine_view["model_loading_bytes"]["CUDA0"]
        assert got == plain, method


@pytest.mark.parametrize("change, words", [
    ({"use_v2_model_runner": True, "engine_version": "0.29.0", "pipeline_parallel_size": 2},
     "EAGLE3 with pipeline parallelism"),
    ({"speculative_method": "medusa"}, "only EAGLE"),
    ({"speculative_model": "no-such-org/no-such-drafter"}, "not in the catalog"),
])
def test_unsupported_combinations_are_one_line_errors(llama, change, words):
    _, spec, _, eagle, _ = llama
    with pytest.raises(OomkitError) as e:
        ENGINE.estimate(spec, gpus(H100, 1), replace(eagle, **change))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_drafter_layers_ride_in_every_captured_graph(llama):
    """_capture_cudagraphs -> _dummy_run -> drafter.dummy_run(n, use_cudagraphs=True) for each size (0.9.0+): on an
    H100 (0.20: the estimate in the budget) the capture grows by the per-graph share of one layer more than 32."""
    _, spec, base, eagle, _ = llama
    base, eagle = replace(base, engine_version="0.20.0"), replace(eagle, engine_version="0.20.0")
    g0 = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["cudagraph_actual_bytes"]
    g1 = ENGINE.estimate(spec, gpus(H100, 1), eagle).engine_view["cudagraph_actual_bytes"]
    assert g0 < g1 <= g0 * 33 / 32, (g0, g1)
    eager = replace(eagle, enforce_eager=True)
    assert ENGINE.estimate(spec, gpus(H100, 1), eager).engine_view["cudagraph_actual_bytes"] == 0


def test_v2_speculator_prefill_graphs_carry_the_drafter(llama):
    """Model runner V2 (0.30): speculator.capture() after the target's capture, its prefill_cudagraph_manager built
    with the target's cudagraph mode and capture sizes (autoregressive/speculator.py init_cudagraph_manager), so the
    capture grows by the per-graph share of one layer more than 32, as on V1, plus the one-token draft-decode graphs
    of num_speculative_tokens >= 2 (test_v2_draft_decode_graphs)."""
    _, spec, base, eagle, _ = llama
    base, eagle = replace(base, engine_version="0.30.0"), replace(eagle, engine_version="0.30.0")
    g0 = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["cudagraph_actual_bytes"]
    g1 = ENGINE.estimate(spec, gpus(H100, 1), eagle).engine_view["cudagraph_actual_bytes"]
    assert g0 < g1 <= g0 * 33 / 32, (g0, g1)


def test_v2_draft_decode_graphs(llama):
    """Model runner V2, 0.29+ (autoregressive/speculator.py init_cudagraph_manager and capture, 0.29-0.31 and 0.34;
    target_dependent_ar/speculator.py 0.32-0.33): with num_speculative_tokens >= 2 a second manager captures FULL
    graphs of one token a request (decode_query_len=1) for each capture size up to max_num_seqs
    (cudagraph_utils.py _init_candidates). On an H100 (FlashAttention, supports_draft_decode_metadata_update) each
    graph records the fused k - 1 draft steps (_generate_fused_drafts); FlashInfer without TRTLLM-gen records one
    step (_generate_draft). Counts by hand from the capture sizes: 1, 2, 4, 8 ... 248, 256 ... 512 (51) under the
    H100's 1,024 sequences, 1, 2, 4, 8 ... 64 (11) at --max-num-seqs 64."""
    from oomkit.engines.vllm.config import resolve
    from oomkit.engines.vllm.phases import (
        CG_PER_GRAPH_LAYER,
        cudagraph_actual_bytes,
        cudagraph_estimate_bytes,
        draft_decode_graphs,
    )
    _, spec, _, eagle, _ = llama  # EAGLE-3, one decoder layer, num_speculative_tokens 3

    def view(gpu: str, **kw):
        return ENGINE.estimate(spec, gpus(gpu, 1), replace(eagle, **kw)).engine_view

    s = replace(eagle, engine_version="0.30.0")
    r = resolve(spec, gpus(H100, 1), s)
    assert draft_decode_graphs(spec, s, r, 1) == (51, 2, 512)  # two draft steps of one layer in each graph
    three = view(H100, engine_version="0.30.0")
    assert three["cudagraph_draft_decode_graphs"] == 51
    assert view(H100, engine_version="0.30.0", num_speculative_tokens=1)["cudagraph_draft_decode_graphs"] == 0
    # on top of the target's graphs (which carry the drafter's layer once each: 32 + 1), in the capture and in the
    # 0.29+ budget alike (profile_cudagraph_memory measures the speculator's graphs in full)
    for got, bare in ((three["cudagraph_actual_bytes"], cudagraph_actual_bytes(spec, s, r, 33)),
                      (three["cudagraph_bytes"]["CUDA0"], cudagraph_estimate_bytes(spec, s, r, 33))):
        assert abs(got - bare - 51 * 2 * CG_PER_GRAPH_LAYER) <= 1, (got, bare)
    # FlashInfer on a B200 (SM 10.x keeps FULL decode graphs with spec decode): not fused, one step in each graph
    rb = resolve(spec, gpus("NVIDIA B200", 1), replace(s, attention_backend="FLASHINFER"))
    assert draft_decode_graphs(spec, replace(s, attention_backend="FLASHINFER"), rb, 1)[1] == 1
    assert view(H100, engine_version="0.30.0", max_num_seqs=64)["cudagraph_draft_decode_graphs"] == 11
    assert view(H100, engine_version="0.34.0")["cudagraph_draft_decode_graphs"] == 51
    assert view(H100, engine_version="0.30.0", enforce_eager=True)["cudagraph_draft_decode_graphs"] == 0
    # before 0.29 (eagle_cudagraph.py, decode graphs only under cudagraph_mode FULL): not counted
    assert view(H100, engine_version="0.28.0")["cudagraph_draft_decode_graphs"] == 0


def test_mtp_layers_load_only_for_mtp():
    """A checkpoint with MTP layers (nvidia/Qwen3.6-35B-A3B-NVFP4, the DGX Spark log of test_vllm_new_logs): an n-gram
    or suffix proposer builds no drafter, so the MTP layer (1.56 GiB there) is not loaded; method "mtp" loads it."""
    from tests.test_vllm_startup import fixture as top_fixture

    fx = top_fixture("qwen3.6-35b-a3b-nvfp4-mixed-dgx-spark-mtp2-v0.22")
    st = fx["settings"]
    s = VllmSettings(engine_version=fx["engine_version"], max_model_len=st["max_model_len"],
                     gpu_memory_utilization=st["gpu_memory_utilization"], kv_cache_dtype=st["kv_cache_dtype"],
                     max_num_seqs=st["max_num_seqs"], max_num_batched_tokens=st["max_num_batched_tokens"],
                     enable_prefix_caching=st["enable_prefix_caching"])
    spec, dev = spec_of(fx["model"]), gpus("NVIDIA GB10", 1)

    def loaded(**kw):
        return ENGINE.estimate(spec, dev, replace(s, **kw)).engine_view["model_loading_bytes"]["CUDA0"]

    plain = loaded()
    assert loaded(num_speculative_tokens=2, speculative_method="ngram") == plain
    assert loaded(num_speculative_tokens=2, speculative_method="suffix") == plain
    mtp = loaded(num_speculative_tokens=2, speculative_method="mtp")
    assert abs(mtp - fx["printed"]["model_loading_bytes"]) / fx["printed"]["model_loading_bytes"] < LIMIT
    assert mtp - plain > 1.4 * GIB


@pytest.mark.xfail(strict=True, raises=OomkitError, reason=(
    "gemma-4-26B-A4B NVFP4 + EAGLE-3 on an RTX 5090 (0.19.2rc1): 16.12 GiB loaded, 7.77 GiB available, 65,696 tokens "
    "printed; the drafter RedHatAI/gemma-4-26B-A4B-it-speculator.eagle3 (1.73 GiB checkpoint) has no config in the "
    "catalog and RedHatAI/gemma-4-26B-A4B-it-NVFP4 is not there either, so nothing is predicted"))
def test_gemma4_eagle3_on_a_5090():
    fx = fixture(GEMMA)
    st = fx["settings"]
    sc = st["speculative_config"]
    s = VllmSettings(engine_version="0.19.2", max_model_len=st["max_model_len"],
                     gpu_memory_utilization=st["gpu_memory_utilization"], kv_cache_dtype=st["kv_cache_dtype"],
                     quantization=st["quantization"], max_num_seqs=st["max_num_seqs"],
                     max_num_batched_tokens=st["max_num_batched_tokens"],
                     enable_prefix_caching=st["enable_prefix_caching"],
                     num_speculative_tokens=sc["num_speculative_tokens"], speculative_method=sc["method"],
                     speculative_model=sc["model"])
    est = ENGINE.estimate(spec_of("nvidia/Gemma-4-26B-A4B-NVFP4"), gpus(fx["gpus"][0]["name"], 1), s)
    v, p = est.engine_view, fx["printed"]
    assert abs(v["model_loading_bytes"]["CUDA0"] - p["model_loading_bytes"]) / p["model_loading_bytes"] < LIMIT
    total = est.devices[0].memory_bytes
    assert abs(v["available_kv_cache_bytes"]["CUDA0"] - p["available_kv_cache_bytes"]) / total < LIMIT


def test_eagle1_head_takes_the_targets_lm_head(llama, tmp_path):
    """method "eagle" (llama_eagle.py EagleLlamaForCausalLM): the target's embedding and lm_head (load_model: "Loading
    EAGLE LM head weights from the target model"), so the head is its decoder layer and fc (2 x 4096 -> 4096) alone:
    yuhuili/EAGLE-LLaMA3.1-Instruct-8B's widths (as printed in vllm-project/speculators#31) give 251.7 M parameters."""
    _, spec, base, eagle, _ = llama
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
           "num_attention_heads": 32, "num_hidden_layers": 1, "num_key_value_heads": 8, "vocab_size": 128256}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    e1 = replace(eagle, speculative_method="eagle", speculative_model=str(path))
    plain = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["model_loading_bytes"]["CUDA0"]
    head = ENGINE.estimate(spec, gpus(H100, 1), e1).engine_view["model_loading_bytes"]["CUDA0"] - plain
    params = 6144 * 4096 + 4096 * 4096 + 3 * 4096 * 14336 + 2 * 4096 * 4096
    assert abs(head - 2 * params) < 2**20, head


# Model runner V2 (every model from 0.29, the only runner from 0.34): the same command must be estimated, not refused.
# The figures are derived by hand from llama_eagle3.py's shapes (the drafter config of the speculators#166 fixture:
# hidden 4096, 32 heads, 8 KV heads of 128, intermediate 14336, one layer, draft vocabulary 32,000) in bf16:
# qkv (4096 + 2 x 1024) x 2 x 4096, o 4096 x 4096, gate_up + down 3 x 4096 x 14336, fc 3 x 4096 x 4096, four RMSNorm
# weights (input, post-attention, hidden_norm, final) of 4096, the 32,000 x 4096 lm_head, and d2t (32,000 int64).
HEAD_PARAMS = 6144 * 8192 + 4096 * 4096 + 3 * 4096 * 14336 + 3 * 4096 * 4096 + 4 * 4096 + 32000 * 4096
HEAD_BYTES = 2 * HEAD_PARAMS + 8 * 32000
# KV a token: the target's 32 layers and the drafter's one, 2 (K, V) x 8 heads x 128 x 2 B each
KV_PER_TOKEN = 33 * 2 * 8 * 128 * 2


@pytest.mark.parametrize("version", [None, "0.30.0"])
def test_v2_runner_eagle3_weights_and_kv(llama, version):
    """The command of the brief (`vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":
    "eagle3", "model": ..., "num_speculative_tokens": 3}'`) at the newest release and 0.30 (model runner V2 for
    every model): spec_decode/eagle/utils.py load_eagle_model shares the embedding (the checkpoint has none) and
    keeps the head's own 32,000-row lm_head (has_own_lm_head, a different shape); get_kv_cache_spec registers the
    drafter's layer beside the target's."""
    _, _, _, _, path = llama
    _, _, s = parse_args(["serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                          json.dumps({"method": "eagle3", "model": path, "num_speculative_tokens": 3})])
    s = replace(s, engine_version=version)
    spec = spec_of("meta-llama/Llama-3.1-8B-Instruct")
    base = replace(s, speculative_model=None, speculative_method=None, num_speculative_tokens=0)
    est = ENGINE.estimate(spec, gpus(H100, 1), s)
    assert est.error is None, est.error
    assert not any("V1 model runner" in w for w in est.warnings)
    plain = ENGINE.estimate(spec, gpus(H100, 1), base).engine_view["model_loading_bytes"]["CUDA0"]
    head = est.engine_view["model_loading_bytes"]["CUDA0"] - plain
    assert abs(head - HEAD_BYTES) < 2**20, (head, HEAD_BYTES)
    budget = 40 * GIB
    kv = ENGINE.estimate(spec, gpus(H100, 1), replace(s, kv_cache_memory_bytes=budget)).engine_view
    assert kv["kv_cache_tokens"] // 16 == budget // (16 * KV_PER_TOKEN)


def test_v2_runner_eagle3_profile_holds_the_fc_input(llama):
    """V2's propose (autoregressive/speculator.py 0.30) runs combine_hidden_states(torch.cat(aux_hidden_states)):
    the T x 3 x 4096 concatenation and the fc's T x 4096 output, where V1's dummy_run reads its buffer; against
    the same run forced onto V1 (VLLM_USE_V2_MODEL_RUNNER=0), the drafter's share of the profile grows by
    T x 4096 x 2 B x (3 + 1 - 2) (the drafter's own 2 x 4096 input concatenation being V1's term). Few sequences,
    so the forward is the profile's peak."""
    _, spec, base, eagle, _ = llama
    base, eagle = (replace(x, engine_version="0.30.0", max_num_seqs=8) for x in (base, eagle))

    def drafter_share(v2: bool) -> int:
        a = ENGINE.estimate(spec, gpus(H100, 1), replace(base, use_v2_model_runner=v2)).engine_view
        b = ENGINE.estimate(spec, gpus(H100, 1), replace(eagle, use_v2_model_runner=v2)).engine_view
        return a["available_kv_cache_bytes"]["CUDA0"] - b["available_kv_cache_bytes"]["CUDA0"]

    est = ENGINE.estimate(spec, gpus(H100, 1), replace(eagle, use_v2_model_runner=True))
    T = est.settings["max_num_batched_tokens"]
    # the rest (3 MiB here): V2's grammar bitmask rows for the draft tokens and its graph estimate's own shape
    assert abs(drafter_share(True) - drafter_share(False) - 2 * T * 4096 * 2) < 4 * 2**20


@pytest.mark.parametrize("version, method, fallback", [
    ("0.30.0", "ngram", True), ("0.31.0", "ngram", True), ("0.32.0", "ngram", False),
    ("0.33.0", "suffix", True), ("0.34.0", "suffix", False), ("0.30.0", "eagle3", False),
])
def test_v2_runner_speculative_fallbacks(llama, version, method, fallback):
    """config/vllm.py _get_v2_model_runner_unsupported_features by release: a default-V2 model with a method V2
    does not run falls back to V1 with vLLM's warning; VLLM_USE_V2_MODEL_RUNNER=1 then is vLLM's one-line refusal."""
    _, spec, _, eagle, _ = llama
    s = replace(eagle, engine_version=version, speculative_method=method,
                speculative_model=None if method != "eagle3" else eagle.speculative_model)
    est = ENGINE.estimate(spec, gpus(H100, 1), s)
    warned = any(f"Model Runner V2 does not yet support speculative method '{method}'" in w for w in est.warnings)
    assert warned == fallback, est.warnings
    if fallback:
        with pytest.raises(OomkitError) as e:
            ENGINE.estimate(spec, gpus(H100, 1), replace(s, use_v2_model_runner=True))
        assert "Model Runner V2 does not yet support: speculative method" in str(e.value)
        assert "\n" not in str(e.value)


def test_v2_runner_mtp_profile_keeps_the_target_output():
    """The checkpoint's own MTP layers on model runner V2 (0.30: every model): model_runner.py _dummy_run keeps the
    target's T-row hidden_states while MTPSpeculator.propose runs (the AutoRegressiveSpeculator path EAGLE takes), so
    the profile holds T x 2048 x 2 B more, as on V1 (nvidia/Qwen3.6-35B-A3B-NVFP4: hidden 2048, bf16 activations);
    an n-gram run on V2 falls back to V1 before 0.32 and holds nothing of the sort."""
    from oomkit.engines.vllm.config import resolve
    from oomkit.engines.vllm.profile import mtp_drafter_profile_bytes
    from tests.test_vllm_startup import fixture as top_fixture

    fx = top_fixture("qwen3.6-35b-a3b-nvfp4-mixed-dgx-spark-mtp2-v0.22")
    spec, dev = spec_of(fx["model"]), gpus("NVIDIA GB10", 1)
    s = VllmSettings(engine_version="0.30.0", max_model_len=fx["settings"]["max_model_len"],
                     num_speculative_tokens=2, speculative_method="mtp")
    r = resolve(spec, dev, s)
    assert r.runner_v2
    assert mtp_drafter_profile_bytes(spec, s, r) == r.max_num_batched_tokens * 2048 * 2
    ngram = replace(s, speculative_method="ngram")
    rn = resolve(spec, dev, ngram)
    assert not rn.runner_v2 and mtp_drafter_profile_bytes(spec, ngram, rn) == 0
