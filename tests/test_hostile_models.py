"""Hostile models (issue 12): the MODEL-METADATA family (impossible or inconsistent GGUF headers, configs and
checkpoints), the SCALE family (huge declared counts, per-layer work linear in the layers) and the HUB family
(a server that trickles, never ends, or answers JSON of the wrong shape).

Most cases run in this process (resolve / estimate, timed, peak memory traced) to keep the suite fast; a
sample of each family also runs through `python -m oomkit estimate` to hold the CLI to exit 2 and one line."""

from __future__ import annotations

import json
import math
import re
import threading
import time
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oomkit
from oomkit.errors import HubError, ModelError, OomkitError
from oomkit.model.hub import HubClient, spec_from_hub
from oomkit.model.resolve import resolve
from tests import hostile as H
from tests.hostile import Llama, assert_refused, run_oomkit

MAX_SECONDS = 2.0  # under a second of work, doubled for tracemalloc (the CLI sample is held to 3 s in all)
MAX_PEAK = 200 << 20


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """Import the engines once, so that the timings below are of the work, not of first imports."""
    p = Llama().write(tmp_path_factory.mktemp("warm") / "m.gguf")
    for engine in ("llama.cpp", "vllm"):
        oomkit.estimate(str(p) if engine == "llama.cpp" else "llama3.1:8b", engine, vram="24GiB")


def refused(fn: Callable[[], object], pattern: str, kind: type[OomkitError] = ModelError,
            seconds: float = MAX_SECONDS) -> str:
    """`fn` raises `kind` with one line holding `pattern`, within `seconds` and 200 MB of Python allocations."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(OomkitError) as e:
            fn()
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    msg = str(e.value)
    assert isinstance(e.value, kind), f"{type(e.value).__name__}: {msg}"
    assert "\n" not in msg and re.search(pattern, msg), msg
    assert dt < seconds, f"{dt:.2f} s: {msg}"
    assert peak < MAX_PEAK, f"{peak >> 20} MiB: {msg}"
    return msg


# ----------------------------------------------------------------------------------------------------------
# MODEL-METADATA: GGUF

L = Llama()
U32A = lambda *v: (H.ARR, (H.U32, v))  # noqa: E731 - a u32 array value
MOE_TENSORS = [t for t in L.tensors() if "ffn_" not in t[0] or "norm" in t[0]] + [
    (f"blk.{i}.{n}", (64, 32, 8), H.Q4_0_T) for i in range(2) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight")
] + [(f"blk.{i}.ffn_down_exps.weight", (32, 64, 8), H.Q4_0_T) for i in range(2)] + [
    (f"blk.{i}.ffn_gate_inp.weight", (64, 8), H.F32_T) for i in range(2)]

GGUF_CASES: list[tuple[str, dict, list | None, str]] = [
    # (id, metadata overrides, tensors (None: the model's own), pattern)
    ("head_count_kv 0", {"attention.head_count_kv": (H.U32, 0)}, None, r"head_count_kv = 0"),
    ("head_count_kv > head_count", {"attention.head_count_kv": (H.U32, 8)}, None, r"more than head_count"),
    ("head_count_kv not dividing", {"attention.head_count_kv": (H.U32, 3)}, None, r"does not divide"),
    ("head_count_kv array with a 0", {"attention.head_count_kv": U32A(2, 0)}, None, r"layer 1"),
    ("head_count_kv array too long", {"attention.head_count_kv": U32A(*[2] * 9)}, None, r"head_count_kv"),
    ("head_count 0", {"attention.head_count": (H.U32, 0), "attention.head_count_kv": (H.U32, 0)}, None,
     r"head_count"),
    ("block_count 2^32-1", {"block_count": (H.U32, 2**32 - 1)}, None, r"4,096 layers"),
    ("block_count 2^63-1", {"block_count": (H.U64, 2**63 - 1)}, None, r"4,096 layers"),
    ("block_count 10^6", {"block_count": (H.U32, 10**6)}, None, r"4,096 layers"),
    ("block_count 4097", {"block_count": (H.U32, 4097)}, None, r"4,096 layers"),
    ("block_count f32 1e12", {"block_count": (H.F32, 1e12)}, None, r"block_count"),
    ("block_count 10, tensors of 2", {"block_count": (H.U32, 10)}, None, r"8 of those blocks have no tensors"),
    ("block_count 1, tensors of 2", {"block_count": (H.U32, 1)}, None, r"tensors of block 1"),
    ("block_count 0", {"block_count": (H.U32, 0)}, None, r"block_count"),
    ("block_count missing", {"block_count": None}, None, r"block_count"),
    ("RoPE wider than the key", {"rope.dimension_count": (H.U32, 64)}, None, r"RoPE"),
    ("RoPE wider than key_length", {"attention.key_length": (H.U32, 8), "attention.value_length": (H.U32, 8),
                                    "rope.dimension_count": (H.U32, 16)}, None, r"RoPE|key_length"),
    ("embedding_length 2^40", {"embedding_length": (H.U64, 2**40)}, None, r"hidden units"),
    ("context_length 2^40", {"context_length": (H.U64, 2**40)}, None, r"tokens of context"),
    ("expert_count 2^20", {"expert_count": (H.U32, 2**20)}, None, r"experts"),
    ("expert_used_count > expert_count", {"expert_count": (H.U32, 8), "expert_used_count": (H.U32, 16)},
     MOE_TENSORS, r"expert_used_count = 16"),
    ("nextn layers = block_count", {"nextn_predict_layers": (H.U32, 2)}, None, r"nextn_predict_layers"),
    ("no tensors", {}, [], r"no tensors"),
    ("split part 1 of 3 alone", {"split.count": (H.U16, 3), "split.no": (H.U16, 0),
                                 "split.tensors.count": (H.I32, 100)}, None, r"split GGUF"),
    ("no architecture", {"general.architecture": None}, None, r"architecture"),
    ("unknown architecture", {"general.architecture": (H.STR, "skynet")}, None, r"skynet"),
    ("block_count a string", {"block_count": (H.STR, "32")}, None, r"block_count"),
    ("head_count_kv -1", {"attention.head_count_kv": (H.I32, -1)}, None, r"head_count_kv"),
    ("embedding_length 0", {"embedding_length": (H.U32, 0)}, None, r"."),
    # llama.cpp (the binding's build) stops at check_tensor_dims: "tensor 'blk.0.ffn_gate.weight' has wrong shape;
    # expected 4096, 0, got 4096, 14336" on Llama-3.1-8B's 2-layer synthetic file with the key set to 0
    ("feed_forward_length 0, FFN tensors present", {"feed_forward_length": (H.U32, 0)}, None,
     r"feed_forward_length is 0 for layer 0, whose FFN tensors are \d+ wide"),
]


def _gguf_meta(over: dict) -> list:
    arch_over = {k: v for k, v in over.items() if k != "general.architecture"}
    meta = L.meta(**arch_over)
    if "general.architecture" in over:
        meta = [m for m in meta if m[0] != "general.architecture"]
        if over["general.architecture"] is not None:
            meta.insert(0, ("general.architecture", *over["general.architecture"]))
    return meta


@pytest.mark.parametrize("case", GGUF_CASES, ids=[c[0] for c in GGUF_CASES])
def test_impossible_gguf_is_refused(case, tmp_path):
    _, over, tensors, pattern = case
    p = H.write_gguf(tmp_path / "m.gguf", _gguf_meta(over), L.tensors() if tensors is None else tensors)
    refused(lambda: oomkit.estimate(str(p), vram="24GiB"), pattern)


def test_qwen3next_full_attention_interval_0(tmp_path):
    q = Llama(arch="qwen3next")
    p = q.write(tmp_path / "m.gguf", full_attention_interval=(H.U32, 0))
    refused(lambda: resolve(str(p)), r"full_attention_interval = 0")


@pytest.mark.parametrize("cut", ["in the data", "after the header"])
def test_truncated_gguf_says_how_short(cut, tmp_path):
    head, data = H.gguf_header(L.meta(), L.tensors())
    size = len(head) + (data // 2 if cut == "in the data" else 0)
    p = H.write_gguf(tmp_path / "m.gguf", L.meta(), L.tensors(), cut=size)
    msg = refused(lambda: resolve(str(p)), r"truncated GGUF")
    assert f"{size:,} bytes, header says at least {len(head) + data:,}" in msg


def test_full_size_sparse_gguf_still_reads(tmp_path):
    """The ground-truth files: a header, then the data as a sparse hole of the full size."""
    spec = resolve(str(L.write(tmp_path / "m.gguf")))
    assert spec.n_layers == 2 and spec.weights.exact


# ----------------------------------------------------------------------------------------------------------
# MODEL-METADATA: config.json

QWEN3_MOE = H.llama_config(model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts=8,
                           num_experts_per_tok=2, moe_intermediate_size=32, head_dim=16)
QWEN3_NEXT = H.llama_config(model_type="qwen3_next", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                            head_dim=16, full_attention_interval=4, num_hidden_layers=4, linear_num_value_heads=4,
                            linear_value_head_dim=16, linear_key_head_dim=16, linear_num_key_heads=2,
                            linear_conv_kernel_dim=4)
JAMBA = H.llama_config(model_type="jamba", attn_layer_period=8, attn_layer_offset=4, expert_layer_period=2,
                       expert_layer_offset=1, num_experts=16, num_experts_per_tok=2, mamba_expand=2, mamba_d_state=16,
                       mamba_d_conv=4)
LLAMA4 = H.llama_config(model_type="llama4_text", attention_chunk_size=8192, no_rope_layer_interval=4)

CONFIG_CASES: list[tuple[str, dict, str]] = [
    *((f"num_hidden_layers {v}", H.llama_config(num_hidden_layers=v), r"num_hidden_layers")
      for v in (10**12, 1e12, 2**32 - 1, 10**6, 4097, -1, 2.5, "32", True, [2], {"n": 2})),
    ("text_config with 10^9 layers", {"model_type": "gemma3", "text_config": H.llama_config(
        model_type="gemma3_text", num_hidden_layers=10**9)}, r"num_hidden_layers"),
    *((f"num_key_value_heads {v}", H.llama_config(num_key_value_heads=v), r"num_key_value_heads")
      for v in (0, 8, 3, 10**9)),
    ("num_attention_heads 0", H.llama_config(num_attention_heads=0), r"num_attention_heads"),
    ("full_attention_interval 0", {**QWEN3_NEXT, "full_attention_interval": 0}, r"full_attention_interval = 0"),
    ("attn_layer_period 0", {**JAMBA, "attn_layer_period": 0}, r"attn_layer_period = 0"),
    ("expert_layer_period 0", {**JAMBA, "expert_layer_period": 0}, r"expert_layer_period = 0"),
    ("no_rope_layer_interval 0", {**LLAMA4, "no_rope_layer_interval": 0}, r"no_rope_layer_interval = 0"),
    ("num_experts_per_tok > num_experts", {**QWEN3_MOE, "num_experts_per_tok": 16}, r"num_experts_per_tok = 16"),
    ("num_experts_per_tok 0", {**QWEN3_MOE, "num_experts_per_tok": 0}, r"num_experts_per_tok = 0"),
    ("num_experts 10^9", {**QWEN3_MOE, "num_experts": 10**9}, r"experts"),
    ("hidden_size 2^40", H.llama_config(hidden_size=2**40), r"hidden_size"),
    ("intermediate_size 2^40", H.llama_config(intermediate_size=2**40), r"intermediate_size"),
    ("head_dim 2^30", H.llama_config(head_dim=2**30), r"head_dim"),
    ("vocab_size 2^40", H.llama_config(vocab_size=2**40), r"vocab_size"),
    ("vocab_size 0", H.llama_config(vocab_size=0), r"vocab_size"),
    ("max_position_embeddings 10^15", H.llama_config(max_position_embeddings=10**15), r"max_position_embeddings"),
    ("quantization_config a string", H.llama_config(quantization_config="fp8"), r"quantization_config"),
    ("quantization_config a list", H.llama_config(quantization_config=[1]), r"quantization_config"),
    ("model_type a number", H.llama_config(model_type=5), r"model_type"),
    ("model_type a list", H.llama_config(model_type=["llama"]), r"model_type"),
    ("model_type missing", H.llama_config(model_type=None), r"model_type"),
    ("layer_types too short", H.llama_config(layer_types=["full_attention"]), r"layer_types"),
    ("layer_types unknown", H.llama_config(layer_types=["full_attention", "warp_drive"]), r"warp_drive"),
    ("layer_types a string", H.llama_config(layer_types="full_attention"), r"layer_types"),
    ("hybrid pattern of 10^6 symbols", {**H.llama_config(model_type="nemotron_h"),
                                        "hybrid_override_pattern": "M" * 10**6}, r"hybrid_override_pattern"),
]


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES])
def test_impossible_config_is_refused(case, tmp_path):
    _, cfg, pattern = case
    d = tmp_path / "m"
    H.write_config(d, cfg)
    for engine in ("llama.cpp", "vllm"):
        refused(lambda e=engine: oomkit.estimate(str(d), e, vram="24GiB"), pattern)


@pytest.mark.parametrize("cfg,words", [
    (H.llama_config(sliding_window=100_000), "attention window (100,000 tokens) is longer than the trained context"),
    (H.llama_config(max_position_embeddings=2**30), "trained context of 1,073,741,824 tokens is larger than any"),
])
def test_suspicious_config_is_a_warning(cfg, words, tmp_path):
    d = tmp_path / "m"
    H.write_config(d, cfg)
    e = oomkit.estimate(str(d), vram="24GiB", n_ctx=4096)
    warnings = [*e.warnings, *e.model.labels]
    assert any(words in w for w in warnings), warnings


# ----------------------------------------------------------------------------------------------------------
# MODEL-METADATA: safetensors checkpoints


def test_empty_safetensors_header_is_refused(tmp_path):
    d = tmp_path / "m"
    H.write_config(d, H.llama_config())
    for i, header in enumerate(({}, {"__metadata__": {"format": "pt"}})):
        H.write_safetensors(d / "model.safetensors", [], header=header)
        refused(lambda: oomkit.estimate(str(d), "vllm", vram="24GiB"), r"0 bytes of weights")
        assert i < 2


def _weights(ref: str, engine: str = "vllm") -> tuple[int, list[str], bool | None]:
    e = oomkit.estimate(ref, engine, vram="24GB")
    return e.weights_bytes, [*e.warnings, *e.model.labels], e.fits


def test_one_shard_of_30_does_not_fit_a_70b(tmp_path):
    """A 70B folder with one of its 30 shards and no index: the weights of one shard (~4.6 GiB) are not the
    model's; the missing shards are named and the weights computed from config.json (~131 GiB)."""
    d = tmp_path / "llama-70b"
    H.write_config(d, H.LLAMA_70B)
    computed, _, _ = _weights(str(d))  # config only: the weights computed
    assert computed > 130 * 2**30
    H.write_safetensors(d / "model-00001-of-00030.safetensors", H.llama_safetensors(H.LLAMA_70B, layers=range(3)))
    w, warnings, fits = _weights(str(d))
    assert w == computed and fits is False
    note = next(x for x in warnings if "shards are missing" in x)
    assert "29 safetensors shards" in note and "model-00002-of-00030.safetensors" in note
    r = run_oomkit("check", str(d), "--engine", "vllm", "--vram", "24GB")
    assert r.rc == 1, r.describe()  # check's "does not fit"
    assert "29 safetensors shards are missing" in " ".join(r.stdout.split()), r.stdout


def test_index_naming_absent_shards(tmp_path):
    d = tmp_path / "m"
    cfg = H.llama_config()
    H.write_config(d, cfg)
    tensors = H.llama_safetensors(cfg)
    H.write_safetensors(d / "model-00001-of-00002.safetensors", tensors[:5])
    index = {"metadata": {}, "weight_map": {n: ("model-00001-of-00002.safetensors" if i < 5 else
                                                "model-00002-of-00002.safetensors") for i, (n, _) in enumerate(tensors)}}
    (d / "model.safetensors.index.json").write_text(json.dumps(index))
    _, warnings, _ = _weights(str(d))
    assert any("1 safetensors shard is missing (model-00002-of-00002.safetensors)" in w for w in warnings), warnings
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": [1, 2]}))
    refused(lambda: oomkit.estimate(str(d), "vllm"), r"weight_map")


def test_truncated_safetensors_is_refused(tmp_path):
    d = tmp_path / "m"
    cfg = H.llama_config()
    H.write_config(d, cfg)
    p = H.write_safetensors(d / "model.safetensors", H.llama_safetensors(cfg))
    full = p.stat().st_size
    import os

    os.truncate(p, full - 1000)
    refused(lambda: oomkit.estimate(str(d), "vllm"), rf"truncated safetensors file model.safetensors: "
                                                   rf"{full - 1000:,} bytes, header says at least {full:,}")


def test_complete_checkpoint_reads_exact_weights(tmp_path):
    d = tmp_path / "m"
    cfg = H.llama_config()
    H.write_config(d, cfg)
    tensors = H.llama_safetensors(cfg)
    H.write_safetensors(d / "model.safetensors", tensors)
    spec = resolve(str(d))  # the checkpoint as published: the files' own bytes
    assert spec.weights.exact and spec.weights.nbytes == sum(2 * math.prod(s) for _, s in tensors)
    _, warnings, _ = _weights(str(d))
    assert not any("missing" in x for x in warnings)


# ----------------------------------------------------------------------------------------------------------
# the CLI, a sample of the families above


CLI_SAMPLE = [
    ("gguf block_count 2^32-1", lambda d: H.write_gguf(d / "m.gguf", L.meta(block_count=(H.U32, 2**32 - 1)),
                                                        L.tensors()), r"4,096 layers"),
    ("gguf 60,000 layers, 3.6 MiB header", lambda d: Llama(n_layers=60_000).write(d / "m.gguf", tensors=[
        (f"blk.{i}.attn_norm.weight", (64,), H.F32_T) for i in range(60_000)]), r"4,096 layers"),
    ("gguf head_count_kv 0", lambda d: L.write(d / "m.gguf", **{"attention.head_count_kv": (H.U32, 0)}),
     r"head_count_kv = 0"),
    ("gguf truncated", lambda d: H.write_gguf(d / "m.gguf", L.meta(), L.tensors(), cut=2000), r"truncated GGUF"),
    ("config 1e12 layers", lambda d: H.write_config(d / "m", H.llama_config(num_hidden_layers=1e12)), r"4,096"),
    ("config 10,000 layers", lambda d: H.write_config(d / "m", H.llama_config(num_hidden_layers=10_000)), r"4,096"),
    ("config attn_layer_period 0", lambda d: H.write_config(d / "m", {**JAMBA, "attn_layer_period": 0}),
     r"attn_layer_period"),
    ("config experts per token > experts", lambda d: H.write_config(d / "m", {**QWEN3_MOE, "num_experts_per_tok": 9}),
     r"num_experts_per_tok"),
]


@pytest.mark.parametrize("case", CLI_SAMPLE, ids=[c[0] for c in CLI_SAMPLE])
def test_cli_refuses_in_one_line(case, tmp_path):
    _, build, pattern = case
    assert_refused(run_oomkit("estimate", str(build(tmp_path)), timeout=10), pattern)


# ----------------------------------------------------------------------------------------------------------
# SCALE: per-layer work linear in the layers


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@pytest.mark.parametrize("engine", ["llama.cpp", "vllm"])
def test_work_is_linear_in_the_layers(engine, tmp_path):
    """A model of 4x the layers takes about 4x the time (16x was the quadratic per-layer sum of all tensors)."""
    times = {}
    for n in (256, 1024):
        p = Llama(n_layers=n).write(tmp_path / f"m{n}.gguf")
        d = tmp_path / f"c{n}"
        H.write_config(d, H.llama_config(num_hidden_layers=n))
        ref = str(p) if engine == "llama.cpp" else str(d)
        times[n] = min(_time(lambda r=ref: oomkit.estimate(r, engine, vram="24GiB")) for _ in range(2))
    assert times[1024] < 8 * times[256] + 0.3, times


def test_layer_ceiling_model_finishes(tmp_path):
    """4,096 layers, the most oomkit models: read and laid out in seconds, not minutes."""
    p = Llama(n_layers=4096).write(tmp_path / "m.gguf")
    t = _time(lambda: oomkit.estimate(str(p), vram="24GiB"))
    assert t < 20, t


# ----------------------------------------------------------------------------------------------------------
# hypothesis: mutated GGUF metadata and configs may only ever give an answer or one OomkitError, quickly

_INTERESTING = st.one_of(st.sampled_from([0, 1, 2, 3, 7, 64, 4095, 4096, 4097, 2**16, 2**31 - 1, 2**32 - 1]),
                         st.integers(0, 2**32 - 1))
_GGUF_KEYS = ["block_count", "embedding_length", "feed_forward_length", "attention.head_count",
              "attention.head_count_kv", "rope.dimension_count", "context_length", "attention.key_length",
              "attention.value_length", "expert_count", "expert_used_count", "nextn_predict_layers",
              "attention.sliding_window", "full_attention_interval"]
COUNTS = {"gguf": 0, "config": 0}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(muts=st.dictionaries(st.sampled_from(_GGUF_KEYS), _INTERESTING, min_size=1, max_size=3),
       arch=st.sampled_from(["llama", "qwen3", "qwen3next", "gemma3", "granitehybrid"]))
def test_mutated_gguf_metadata(tmp_path, muts, arch):
    COUNTS["gguf"] += 1
    p = Llama(arch=arch).write(tmp_path / "m.gguf", **{k: (H.U32, v) for k, v in muts.items()})
    t0 = time.perf_counter()
    try:
        oomkit.estimate(str(p), vram="24GiB")
    except OomkitError as e:
        assert "\n" not in str(e)
    assert time.perf_counter() - t0 < 5


_CONFIG_KEYS = ["num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                "vocab_size", "max_position_embeddings", "head_dim", "num_experts", "num_experts_per_tok",
                "moe_intermediate_size", "full_attention_interval", "sliding_window", "sliding_window_pattern",
                "attn_layer_period", "attn_layer_offset", "expert_layer_period", "decoder_sparse_step",
                "first_k_dense_replace", "max_window_layers"]
_VALUES = st.one_of(_INTERESTING, st.sampled_from([-1, 0.5, 1e12, 1e400, math.nan, "8", None, True, [], {}]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(muts=st.dictionaries(st.sampled_from(_CONFIG_KEYS), _VALUES, min_size=1, max_size=3),
       base=st.sampled_from([H.llama_config(), QWEN3_MOE, QWEN3_NEXT, JAMBA, LLAMA4]),
       engine=st.sampled_from(["llama.cpp", "vllm"]))
def test_mutated_config(tmp_path, muts, base, engine):
    COUNTS["config"] += 1
    d = tmp_path / "m"
    H.write_config(d, json.dumps({**base, **muts}))  # NaN and 1e400 written as JSON's NaN and Infinity
    t0 = time.perf_counter()
    try:
        oomkit.estimate(str(d), engine, vram="24GiB")
    except OomkitError as e:
        assert "\n" not in str(e)
    assert time.perf_counter() - t0 < 5


# ----------------------------------------------------------------------------------------------------------
# HUB: a local server that misbehaves


class _Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        for prefix, fn in self.routes.items():
            if path.startswith(prefix):
                try:
                    fn(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", "0")
        self.end_headers()


def _json(body: object, status: int = 200) -> Callable:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()

    def send(h) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    return send


def _trickle(h) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    for _ in range(600):  # a byte every 0.2 s: never quiet long enough for a per-read timeout
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.2)


def _endless(h) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.end_headers()  # no length: the body ends when the connection does, which it never does
    h.close_connection = True
    chunk = b"[" + b" " * 65535
    for _ in range(1 << 14):  # up to 1 GiB
        h.wfile.write(chunk)


def _info(files: dict[str, int], **extra) -> dict:
    return {"id": "x", "sha": "0" * 40, "gated": False,
            "siblings": [{"rfilename": n, "size": s} for n, s in files.items()], **extra}


CONFIG = H.llama_config()


def _repo(prefix: str, info: Callable, files: Callable | None = None) -> dict[str, Callable]:
    """Routes of one repo: its listing, and what every file download answers."""
    out = {f"/api/models/{prefix}/": info}
    if files is not None:
        out[f"/{prefix}/resolve/"] = files
    return out


HUB_CASES: list[tuple[str, dict[str, Callable], str]] = [
    ("listing trickles a byte at a time", _repo("acme/trickle", _trickle), r"within 2 s"),
    ("config.json trickles", _repo("acme/slowcfg", _json(_info({"config.json": 10**5})), _trickle),
     r"within 2 s"),
    ("listing never ends", _repo("acme/endless", _endless), r"larger than"),
    ("config.json never ends", _repo("acme/bigcfg", _json(_info({"config.json": 10**9})), _endless),
     r"larger than 8 MiB"),
    ("listing is a list", _repo("acme/list", _json([1, 2, 3])), r"malformed \(a list where an object belongs"),
    ("listing is a number", _repo("acme/num", _json(42)), r"malformed \(a number"),
    ("listing is NaN", _repo("acme/nan", _json(b'{"sha": NaN}')), r"malformed"),
    ("listing nested 100,000 deep", _repo("acme/deep", _json(b"[" * 100_000 + b"]" * 100_000)), r"nested"),
    ("siblings a number", _repo("acme/sib", _json({"sha": "a", "siblings": 5})), r"'siblings' is a number"),
    ("a sibling a string", _repo("acme/sib2", _json({"sha": "a", "siblings": ["config.json"]})), r"rfilename"),
    ("size a string", _repo("acme/size", _json({"sha": "a", "siblings": [{"rfilename": "config.json",
                                                                           "size": "big"}]})), r"size"),
    ("sha a number", _repo("acme/sha", _json({"sha": 5, "siblings": []})), r"'sha' is a number"),
    ("config.json a list", _repo("acme/cfglist", _json(_info({"config.json": 6})), _json([1, 2])),
     r"not a JSON object|must hold a JSON object"),
    ("config.json with Infinity", _repo("acme/cfginf", _json(_info({"config.json": 30})),
                                        _json(b'{"model_type": "llama", "hidden_size": Infinity}')),
     r"hidden_size"),
    ("config.json 10^12 layers", _repo("acme/cfgbig", _json(_info({"config.json": 300})),
                                       _json(H.llama_config(num_hidden_layers=10**12))), r"4,096"),
    ("index weight_map a list", _repo("acme/idx", _json(_info({"config.json": 300, "model.safetensors.index.json": 30,
                                                                "model-00001-of-00001.safetensors": 100})),
                                      lambda h: _json({"weight_map": [1]} if "index" in h.path else CONFIG)(h)),
     r"weight_map"),
]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    import huggingface_hub.constants as hf_constants

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    for var in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    env = {"HF_ENDPOINT": url, "OOMKIT_CACHE": str(tmp_path / "cache"), "OOMKIT_HUB_TIMEOUT": "1",
           "OOMKIT_HUB_DEADLINE": "2"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    from huggingface_hub.utils import build_hf_headers, get_session  # imported before the timings start

    build_hf_headers()
    get_session()
    yield env
    _Hub.routes = {}
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("case", HUB_CASES, ids=[c[0] for c in HUB_CASES])
def test_hostile_hub_is_one_hub_error(case, hub):
    cid, routes, pattern = case
    _Hub.routes = routes
    repo = next(iter(routes)).split("/")[3:5]
    kind = HubError if "10^12" not in cid else ModelError  # an impossible config is the model's fault
    # the 2 s deadline, plus what tracemalloc costs while reading a capped body
    refused(lambda: spec_from_hub("/".join(repo)), pattern, kind=kind, seconds=5)


def test_hub_repo_with_shards_missing(hub):
    """One shard of three listed and no index: the missing ones named, the weights computed from config.json."""
    _Hub.routes = _repo("acme/partial", _json(_info({"config.json": 300, "model-00001-of-00003.safetensors": 10**9})),
                        _json(CONFIG))
    spec = spec_from_hub("acme/partial")
    assert not spec.weights.exact
    assert any("2 safetensors shards are missing (model-00002-of-00003.safetensors, model-00003-of-00003.safetensors)"
               in x for x in spec.labels), spec.labels


def test_trickling_hub_through_the_cli(hub):
    _Hub.routes = _repo("acme/trickle", _trickle)
    r = run_oomkit("estimate", "acme/trickle", timeout=15, env={**hub, "HF_HUB_OFFLINE": ""})
    assert_refused(r, r"within 2 s", seconds=6)


def test_hostile_cache_entries_are_ignored(hub, tmp_path):
    """A FIFO or a link to /dev/zero where oomkit keeps a listing is not read: the hub is asked instead."""
    import os

    from oomkit.model.hub_cache import cache_root, repo_dir, site

    _Hub.routes = _repo("acme/cached", _json([1]))
    d = repo_dir(cache_root(), site(hub["HF_ENDPOINT"]), "acme/cached", "main")
    d.mkdir(parents=True)
    os.mkfifo(d / "info.json")
    refused(lambda: spec_from_hub("acme/cached"), r"malformed", kind=HubError)
    (d / "info.json").unlink()
    (d / "info.json").symlink_to("/dev/zero")
    refused(lambda: spec_from_hub("acme/cached"), r"malformed", kind=HubError)


def test_deadline_variable_is_checked(hub, monkeypatch):
    for bad in ("nan", "-1", "0", "inf", "soon"):
        monkeypatch.setenv("OOMKIT_HUB_DEADLINE", bad)
        refused(HubClient, r"OOMKIT_HUB_DEADLINE", kind=HubError)


# ----------------------------------------------------------------------------------------------------------


def test_counts():
    """How many hostile inputs this file tries per family, for the record."""
    print(f"\nMODEL-METADATA: {len(GGUF_CASES) + 3} impossible GGUF headers, {len(CONFIG_CASES)} impossible configs x 2 "
          f"engines, 7 checkpoints (empty, truncated, shards missing), 2 suspicious configs; CLI sample "
          f"{len(CLI_SAMPLE)}; hypothesis: {COUNTS['gguf']} mutated GGUFs, {COUNTS['config']} mutated configs")
    print("SCALE: 2 linearity checks (256 vs 1,024 layers, llama.cpp and vLLM), a 4,096-layer model, 13 huge counts")
    print(f"HUB: {len(HUB_CASES)} hostile answers, 1 through the CLI, 2 planted cache entries, 1 partial repo, 5 bad "
          "OOMKIT_HUB_DEADLINE values")
    assert len(GGUF_CASES) + len(CONFIG_CASES) + len(HUB_CASES) >= 80
