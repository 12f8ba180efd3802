"""Catalog entries of the newest models (2026 H2) that read wrongly before: poolside's Laguna XS.2 and Laguna S 2.1.

Both are LagunaForCausalLM (model_type laguna), which llama.cpp runs as its laguna architecture (src/models/laguna.cpp,
ggml-org/llama.cpp#25165, b10087). Before, their config.json was read generically: every layer with the 48 query
heads of num_attention_heads (the sliding layers have 64 / 72), the leading dense layer as MoE, no q/k norms, no
router bias, no per-head output gate: Laguna XS.2 33,944,668,160 parameters, Laguna S 2.1 116,872,743,936.

Checked here, each figure computed in this file from the config values (not by oomkit's own counting):
(a) the parameter count of the tensors llama.cpp's laguna loader takes (tests/ggufs.py laguna: attn_q / k / v / output
    of n_head(il) x 128, attn_q_norm / attn_k_norm {128}, attn_gate {n_embd, n_head(il)}, a dense first layer, then
    ffn_gate_inp, exp_probs_b, *_exps and *_shexp) and the published totals;
(b) the KV bytes per token: K and V of 8 heads x 128 at 16 bits on the full-attention layers (the sliding ones hold
    a 512-token window, constant past it), from two llama.cpp estimates' difference;
(c) a synthetic laguna GGUF of Laguna-XS.2's first layers, written as llama.cpp's converter writes it: the config spec
    equals the GGUF's layer for layer and in parameters, and llama.cpp (llama-cpp-python, same build) allocates the
    same KV cache on the CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit import estimate
from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from oomkit.model.spec import LayerKind
from tests import gt_compare as g
from tests.ggufs import laguna_model
from tests.groundtruth import synth
from tests.groundtruth.synth import SynthModel

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"
needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")


def _entry(slug: str) -> dict:
    return json.loads((CATALOG / f"{slug}.json").read_text(encoding="utf-8"))


def _count(c: dict) -> int:
    """Parameters of the tensors src/models/laguna.cpp loads, from the config's values."""
    h, v, hd, kv, n = c["hidden_size"], c["vocab_size"], c["head_dim"], c["num_key_value_heads"], c["num_hidden_layers"]
    total = 2 * v * h + h  # token_embd, output (untied), output_norm
    for i in range(n):
        q = c["num_attention_heads_per_layer"][i]
        total += 2 * h  # attn_norm, ffn_norm
        total += h * q * hd * 2 + h * kv * hd * 2  # q, output; k, v
        total += 2 * hd  # q / k norms
        total += h * q  # per-head output gate
        if c["mlp_layer_types"][i] == "dense":
            total += 3 * h * c["intermediate_size"]
        else:
            e = c["num_experts"]
            total += h * e + e  # router, score bias
            total += 3 * e * h * c["moe_intermediate_size"]
            total += 3 * h * c["shared_expert_intermediate_size"]
    return total


# slug -> (published total, tolerance, where it is published, total before)
PUBLISHED = {
    "laguna-xs.2": (33_400_000_000, 0.005, "Mesh-LLM/mesh-llm#406: 33.4B MoE", 33_944_668_160),
    "laguna-s-2.1": (118_000_000_000, 0.005, "model card as quoted: 118B total", 116_872_743_936),
}


@pytest.mark.parametrize("slug", list(PUBLISHED))
def test_parameter_count_is_the_configs_and_the_published(slug):
    e = _entry(slug)
    spec = spec_from_config(e["config"], slug)
    independent = _count(e["config"])
    assert spec.params_total == independent
    published, tol, _, before = PUBLISHED[slug]
    assert abs(independent - published) <= tol * published, PUBLISHED[slug][2]
    assert abs(before - published) > tol * published  # the generic reading missed it
    assert e["params_published"] == published


def test_the_counts():
    assert _count(_entry("laguna-xs.2")["config"]) == 33_442_617_088
    assert _count(_entry("laguna-s-2.1")["config"]) == 117_561_977_600


@pytest.mark.parametrize("slug,heads", [("laguna-xs.2", (48, 64)), ("laguna-s-2.1", (48, 72))])
def test_layers_read_as_llama_cpp_laguna(slug, heads):
    c = _entry(slug)["config"]
    spec = spec_from_config(c, slug)
    assert spec.architecture == "laguna"
    assert not [x for x in spec.labels if "generically" in x]
    kinds = [la.kind for la in spec.layers]
    assert kinds == [LayerKind.FULL if t == "full_attention" else LayerKind.SLIDING for t in c["layer_types"]]
    assert kinds[:4] == [LayerKind.FULL, LayerKind.SLIDING, LayerKind.SLIDING, LayerKind.SLIDING]
    for la in spec.layers:
        a = la.attention
        assert a.n_heads == (heads[0] if la.kind is LayerKind.FULL else heads[1])
        assert (a.n_kv_heads, a.head_dim_k, a.head_dim_v) == (8, 128, 128)
        assert a.window == (512 if la.kind is LayerKind.SLIDING else None)
    assert spec.layers[0].ffn.n_ff == c["intermediate_size"] and not spec.layers[0].ffn.n_experts
    f = spec.layers[1].ffn
    assert (f.n_experts, f.n_experts_used, f.n_ff_expert, f.n_shared_experts, f.n_ff_shared) == (
        c["num_experts"], c["num_experts_per_tok"], c["moe_intermediate_size"], 1, c["shared_expert_intermediate_size"])


@pytest.mark.parametrize("slug", list(PUBLISHED))
def test_kv_bytes_per_token_from_the_config(slug):
    c = _entry(slug)["config"]
    n_full = sum(t == "full_attention" for t in c["layer_types"])
    # K and V of num_key_value_heads x head_dim at 16 bits on each full-attention layer
    per_token = n_full * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert per_token == {"laguna-xs.2": 40_960, "laguna-s-2.1": 49_152}[slug]
    a, b = (estimate(_entry(slug)["hf_id"], engine="llama.cpp", n_ctx=n, n_parallel=1,
                     find_max_context=False).to_dict() for n in (65536, 131072))
    assert (b["kv_cache_bytes"] - a["kv_cache_bytes"]) == per_token * 65536


@pytest.mark.parametrize("name,slug", [
    ("poolside/Laguna-XS.2", "laguna-xs.2"), ("laguna-xs.2", "laguna-xs.2"), ("poolside/Laguna-XS.2-FP8", "laguna-xs.2"),
    ("poolside/Laguna-S-2.1", "laguna-s-2.1"), ("poolside/Laguna-S-2.1-FP8", "laguna-s-2.1"),
])
def test_names_resolve(name, slug, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = resolve(name)
    assert spec.params_total == _count(_entry(slug)["config"])
    assert spec.architecture == "laguna"


def test_fp8_variants_keep_their_quantization_config(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("poolside/Laguna-XS.2-FP8", "poolside/Laguna-S-2.1-FP8"):
        r = estimate(name, engine="vllm", max_model_len=8192, find_max_context=False).to_dict()
        assert r["model"]["weights_format"] == "ct-float-quantized"
    assert estimate("laguna-xs.2", find_max_context=False).to_dict()["model"]["weights_format"] == "Q4_K_M"


def laguna_xs2_gguf(n_layers: int = 2) -> SynthModel:
    """Laguna-XS.2's first layers as conversion/laguna.py writes them: hidden 2048, per-layer head counts (48 on the
    full layer 0, 64 on the sliding ones), 8 KV heads of 128, a 512-token window with no pattern key (laguna.cpp
    set_swa_pattern(4, dense_first=true)), QK norms, a per-head output gate, a dense first layer of 8192, then 256
    experts of 512 (8 used) with a score bias and one shared expert of 512; vocabulary 100,352, untied."""
    return laguna_model("laguna-xs2", "poolside/Laguna-XS.2 config.json", n_layers=n_layers, n_embd=2048,
                        heads=([48, 64, 64, 64] * 10)[:n_layers], n_ff=8192, n_vocab=100352, n_exp=256, n_used=8,
                        ff_exp=512, ff_sh=512, window=512, eps=1e-6, context=262144)


N_SYNTH = 2


def _first_layers(cfg: dict, n: int) -> dict:
    out = dict(cfg, num_hidden_layers=n)
    for k in ("layer_types", "mlp_layer_types", "num_attention_heads_per_layer"):
        out[k] = cfg[k][:n]
    return out


@pytest.fixture(scope="module")
def xs2_pair(tmp_path_factory):
    path = synth.synth_path(laguna_xs2_gguf(N_SYNTH), "q4_0", cache_dir=tmp_path_factory.mktemp("gguf"))
    cfg = _first_layers(_entry("laguna-xs.2")["config"], N_SYNTH)
    return spec_from_config(cfg, "laguna-xs.2", weight_format="Q4_0"), read_gguf_spec(path), path, cfg


def test_config_spec_equals_the_converted_gguf(xs2_pair):
    ours, gguf, _, cfg = xs2_pair
    assert ours.architecture == gguf.architecture == "laguna"
    assert list(ours.layers) == list(gguf.layers)
    assert ours.tied_embeddings == gguf.tied_embeddings is False
    assert ours.params_total == gguf.params_total == _count(cfg)


@needs_llama_cpp
def test_config_spec_caches_equal_llama_cpp(xs2_pair):
    ours, _, path, _ = xs2_pair
    grid = g.small_grid(dict(n_ctx=2048), dict(n_ctx=4096, n_seq_max=4, type_k="q8_0", type_v="q8_0"))
    g.assert_equals_llama_cpp(ours, path, grid, "laguna-xs.2", compute_band=(0.8, 1.25))
