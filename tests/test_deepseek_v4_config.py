"""DeepSeek-V4's config.json read as llama.cpp's GGUF of it (hf_config._deepseek_v4_spec): the same layer specs and
tensors the GGUF path builds for deepseek4 (gguf_file._attention_dims; src/models/deepseek4.cpp), so a config, a
catalog name or a GGUF repo name gives llama.cpp the figures the synthetic GGUF of the same shapes gives."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from oomkit.model.hf_config import spec_from_config
from tests import ggufs
from tests.groundtruth import synth
from tests.test_hf_config_recent import DSV4_FLASH


def _config(nextn: int) -> dict:
    """tests/ggufs.py deepseek4's shapes as DeepSeek-V4's config.json names them (conversion/deepseek.py
    DeepseekV4Model.set_gguf_parameters maps each key onto the GGUF key the synthetic writer sets)."""
    return {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 4096,
            "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 1, "head_dim": 512,
            "qk_rope_head_dim": 64, "q_lora_rank": 1024, "o_groups": 8, "o_lora_rank": 512, "sliding_window": 128,
            "index_n_heads": 32, "index_head_dim": 128, "index_topk": 512, "hc_mult": 4, "hc_sinkhorn_iters": 20,
            "hc_eps": 1e-6, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1024,
            "n_shared_experts": 1, "num_hash_layers": 0, "vocab_size": 32000, "max_position_embeddings": 8192,
            "compress_ratios": [0, 4, 128, 0] + [0] * nextn, "num_nextn_predict_layers": nextn,
            "rope_theta": 10000, "compress_rope_theta": 160000, "scoring_func": "sqrtsoftplus"}


def _gguf(nextn: int):
    m = ggufs.NEXTN_VARIANTS["deepseek4"]() if nextn else ggufs.deepseek4()
    return synth.synth_path(m, "q4_0")


@pytest.mark.parametrize("nextn", [0, 1])
def test_config_builds_the_gguf_paths_layers_and_tensors(nextn):
    g = read_gguf_spec(_gguf(nextn))
    c = spec_from_config(_config(nextn), "dsv4", weight_format="Q4_0")
    assert c.architecture == g.architecture == "deepseek4"
    assert c.layers == g.layers and c.n_nextn_layers == g.n_nextn_layers == nextn
    assert ({t.name: (t.shape, t.dtype, t.nbytes) for t in c.weights.tensors}
            == {t.name: (t.shape, t.dtype, t.nbytes) for t in g.weights.tensors})


_FIGURES = ("weights_bytes", "kv_cache_bytes", "recurrent_state_bytes", "kv_bytes_per_token", "min_required_bytes",
            "after_weights_bytes", "margin_bytes", "max_context")


def _check(model: str, *extra: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", model, "--engine", "llama.cpp", "--gpu", "8x H200",
                        "--json", *extra], capture_output=True, text=True, timeout=180)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    return json.loads(p.stdout)


def test_check_on_the_config_equals_check_on_the_gguf(tmp_path):
    """`oomkit check` under llama.cpp on 8x H200: the config.json of the synthetic GGUF's shapes (with its MTP block)
    and the GGUF itself give the same weights, KV, state and totals."""
    (tmp_path / "config.json").write_text(json.dumps(_config(1)))
    a, b = _check(str(tmp_path), "--quant", "Q4_0"), _check(str(_gguf(1)))
    assert a["kv_cache_bytes"] > 0
    assert {k: a[k] for k in _FIGURES} == {k: b[k] for k in _FIGURES}


def test_deepseek_v4_flash_config_reads_as_its_gguf():
    """DeepSeek-V4-Flash's verbatim config.json: 43 layers + the MTP block (block_count 44; the two trailing
    compress_ratios are DSpark stages the GGUF does not hold), all sliding over one 512-wide K-only head, ratio 4 with
    the indexer (64 x 128, top-k 512) and 128 alternating from layer 2, the MTP block uncompressed; the first 3
    layers hash-routed (ffn_gate_tid2eid {6, 129280}, I32, in place of exp_probs_b). Without the MTP block the tensor
    list counts 284,334,567,511 parameters: the model card's 284B."""
    s = spec_from_config(DSV4_FLASH, "dsv4", weight_format="Q4_K_M")
    assert s.n_layers == 44 and s.n_nextn_layers == 1 and s.kinds() == {"sliding": 44}
    ratios = [la.attention.compress_ratio for la in s.layers]
    assert ratios == DSV4_FLASH["compress_ratios"][:44]
    assert all(la.attention.k_only and la.attention.window == 128 and la.attention.head_dim_k == 512
               and la.attention.n_kv_heads == 1 for la in s.layers)
    assert [la.index for la in s.layers if la.attention.index_n_heads] == [i for i, r in enumerate(ratios) if r == 4]
    tid = {t.layer: t for t in s.weights.tensors if t.name.endswith("ffn_gate_tid2eid.weight")}
    assert sorted(tid) == [0, 1, 2] and all(t.shape == (6, 129280) and t.dtype == "I32" for t in tid.values())
    assert not [t for t in s.weights.tensors if t.layer in (0, 1, 2) and t.name.endswith("exp_probs_b.bias")]
    trunk = sum(t.n_elements for t in s.weights.tensors if t.layer is None or t.layer < 43)
    assert trunk == 284_334_567_511 and abs(trunk / 284e9 - 1) < 0.005


def test_catalog_and_gguf_repo_names_give_the_same_figures():
    """deepseek-ai/DeepSeek-V4-Flash (catalog), unsloth's and bartowski's GGUF repos of it, all as Q4_K_M."""
    names = ("deepseek-ai/DeepSeek-V4-Flash", "unsloth/DeepSeek-V4-Flash-GGUF",
             "bartowski/deepseek-ai_DeepSeek-V4-Flash-GGUF")
    out = [_check(n, "--quant", "Q4_K_M", "--ctx", "131072") for n in names]
    assert out[0]["kv_cache_bytes"] > 0
    assert all({k: o[k] for k in _FIGURES} == {k: out[0][k] for k in _FIGURES} for o in out[1:])


@pytest.mark.parametrize("engine", ["vllm", "sglang", "transformers", "mlx"])
def test_other_engines_still_refuse_the_config(engine, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(DSV4_FLASH))
    old = ["--engine-version", "0.19.1"] if engine == "vllm" else []  # vLLM 0.20.0+: tests/test_vllm_deepseek_v4.py
    p = subprocess.run([sys.executable, "-m", "oomkit", "check", str(tmp_path), "--engine", engine, "--gpu",
                        "8x H200", *old], capture_output=True, text=True, timeout=180)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "modelled for llama.cpp only" in p.stderr and "use --engine llama.cpp" in p.stderr


def test_deepseek_v4_pro_catalog_entry_reads_as_its_gguf():
    """deepseek-ai/DeepSeek-V4-Pro (catalog, config as a public script pastes it): 61 layers + the MTP block, ratio
    128 on the first two, then 4 (indexer 64 x 128, top-k 1024) and 128 alternating, the MTP block 0; 384 experts of
    3072. The tensor list counts 1,598,839,552,921 parameters (the card: 1.6T); unsloth's GGUF repo resolves to it."""
    from oomkit.model import catalog

    e = catalog.lookup("deepseek-ai/DeepSeek-V4-Pro")
    s = spec_from_config(e.config, e.name, weight_format="Q4_K_M")
    assert s.n_layers == 62 and s.n_nextn_layers == 1 and s.kinds() == {"sliding": 62}
    ratios = [la.attention.compress_ratio for la in s.layers]
    assert ratios[:4] == [128, 128, 4, 128] and ratios[-2:] == [4, 0] and ratios.count(4) == 30
    assert {la.attention.index_topk for la in s.layers if la.attention.compress_ratio == 4} == {1024}
    assert s.params_total == 1_598_839_552_921
    a, b = (_check(n, "--quant", "Q4_K_M", "--ctx", "131072") for n in ("deepseek-ai/DeepSeek-V4-Pro",
                                                                       "unsloth/DeepSeek-V4-Pro-GGUF"))
    assert {k: a[k] for k in _FIGURES} == {k: b[k] for k in _FIGURES}
