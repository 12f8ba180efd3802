"""The embedded model catalog: index in sync with the data files, every data file complete and valid."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.model import catalog

ROOT = Path(__file__).resolve().parents[1]


def _load_tool():
    spec = importlib.util.spec_from_file_location(
        "build_catalog_index", ROOT / "tools" / "build_catalog_index.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tool = _load_tool()
DATA = tool.load_data(catalog.DATA_DIR)
SLUGS = sorted(DATA)


def _text(cfg: dict) -> dict:
    return tool.text_config(cfg)


def _is_mla(tc: dict) -> bool:
    return "kv_lora_rank" in tc


def _is_moe(tc: dict) -> bool:
    return any(tc.get(k) for k in ("num_experts", "num_local_experts", "n_routed_experts"))


def _is_hybrid(tc: dict) -> bool:
    return "full_attention_interval" in tc or "linear_attention" in (tc.get("layer_types") or [])


def _is_pure_ssm(tc: dict) -> bool:
    return tc.get("model_type") in ("mamba", "mamba2", "rwkv", "rwkv5", "rwkv6", "rwkv7")


_ENCODERS = {"xlm-roberta", "bert", "nomic_bert"}  # embedding models: all heads keep K/V, no GQA key


# --- the index -------------------------------------------------------------------------------------


def test_index_equals_what_the_tool_builds():
    built = tool.render(tool.build_index(DATA))
    assert catalog.INDEX_PATH.read_text(encoding="utf-8") == built, "run tools/build_catalog_index.py"


def test_tool_check_mode_passes():
    assert tool.main(["--check"]) == 0


def test_index_lists_every_data_file_and_nothing_else():
    names_line, rows_line = catalog.INDEX_PATH.read_text(encoding="utf-8").splitlines()
    index, rows = json.loads(names_line), json.loads(rows_line)
    assert sorted(rows["models"]) == SLUGS == sorted(index["slugs"])
    assert set(index["aliases"].values()) <= set(SLUGS)


def test_every_alias_is_unique_across_the_catalog():
    owner: dict[str, str] = {}
    for slug, d in DATA.items():
        for alias in [d["hf_id"].lower(), *d["aliases"]]:
            assert alias not in owner or owner[alias] == slug, f"{alias!r}: {owner.get(alias)} and {slug}"
            assert alias not in DATA or alias == slug, f"alias {alias!r} of {slug} is a slug"
            owner[alias] = slug


def test_tool_rejects_a_duplicate_alias():
    data = {k: dict(v) for k, v in DATA.items()}
    data["qwen3-32b"]["aliases"] = [*data["qwen3-32b"]["aliases"], "qwen3:8b"]
    with pytest.raises(tool.CatalogError, match="qwen3:8b"):
        tool.build_index(data)


# --- the data files --------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_data_file_is_valid(slug):
    d = DATA[slug]
    assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", slug)
    required = {
        "name",
        "hf_id",
        "family",
        "aliases",
        "config",
        "params_published",
        "params_source",
        "source",
        "verified",
        "notes",
    }
    assert required <= set(d), f"missing {required - set(d)}"
    optional = {"filled", "filled_source", "params_decoder", "variants", "context_extension"}
    if "context_extension" in d:  # a documented opt-in: YaRN's rope_scaling and the context it reaches, cited
        ext = d["context_extension"]
        assert set(ext) == {"rope_scaling", "max_position_embeddings", "source"} and ext["source"].strip()
        rs = ext["rope_scaling"]
        assert rs["rope_type"] == "yarn" and rs["factor"] * rs["original_max_position_embeddings"] == \
            ext["max_position_embeddings"]
    assert set(d) <= required | optional, f"unknown keys {set(d) - required}"
    for v in d.get("variants", []):
        assert set(v) <= {"hf_id", "quantization_config", "source", "verified", "torch_dtype", "dtype",
                          "hf_quant_config", "hf_quant_config_source"}
        if "hf_quant_config" in v:  # a ModelOpt hf_quant_config.json's nested section, with where it was read
            assert isinstance(v["hf_quant_config"].get("quantization"), dict) and v["hf_quant_config_source"].strip()
        assert re.fullmatch(r"[\w.\-]+/[\w.\-]+", v["hf_id"]) and v["source"].strip()
        assert isinstance(v["quantization_config"], dict) and v["quantization_config"].get("quant_method")
    assert isinstance(d["name"], str) and d["name"]
    assert re.fullmatch(r"[\w.\-]+/[\w.\-]+", d["hf_id"])
    assert isinstance(d["verified"], bool)
    assert isinstance(d["params_published"], int) and not isinstance(d["params_published"], bool)
    assert d["params_published"] > 10**7  # all-MiniLM-L6-v2: 22.7M
    for key in ("params_source", "source", "notes", "family"):
        assert isinstance(d[key], str) and d[key].strip(), key
    assert d["aliases"] == sorted(set(d["aliases"])), "aliases sorted, no duplicates"
    for alias in d["aliases"]:
        assert alias == alias.strip().lower() and alias, alias
        assert catalog.normalize(alias) == alias, f"{alias!r} would never match"
    assert d["hf_id"].lower() in d["aliases"] or d["hf_id"].lower() == slug
    if "filled" in d:
        assert d["filled"] and d["filled_source"].strip()
        for path in d["filled"]:
            node = d["config"]
            for part in path.split("."):
                assert part in node, f"filled key {path} not in config"
                node = node[part]


def _one_per_layer(v, n_layers: int):
    """A value given once, or as one int per layer (its first, when the list is whole)."""
    if isinstance(v, list) and len(v) == n_layers and all(isinstance(x, int) for x in v):
        return v[0]
    return v


@pytest.mark.parametrize("slug", SLUGS)
def test_config_has_what_a_decoder_needs(slug):
    cfg = DATA[slug]["config"]
    assert cfg.get("architectures") and cfg.get("model_type")
    tc = _text(cfg)
    chatglm = tc.get("model_type") == "chatglm"  # ChatGLM's own key scheme (padded_vocab_size, seq_length, ...)
    for key in ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size"):
        if key == "num_attention_heads" and _is_pure_ssm(tc):
            continue  # no attention at all
        key = "padded_vocab_size" if chatglm and key == "vocab_size" else key
        assert isinstance(tc.get(key), int) and tc[key] > 0, key
    n_layers = tc["num_hidden_layers"]
    if chatglm:
        assert tc["num_attention_heads"] % tc["multi_query_group_num"] == 0
    elif tc.get("model_type") == "nemotron-nas":  # DeciLM: the KV heads of each layer in block_configs
        assert len(tc["block_configs"]) == n_layers
    elif not _is_mla(tc) and not _is_pure_ssm(tc) and tc.get("model_type") not in _ENCODERS:
        assert isinstance(tc.get("num_key_value_heads"), int) and tc["num_key_value_heads"] > 0
        assert tc["num_attention_heads"] % tc["num_key_value_heads"] == 0
    if not _is_pure_ssm(tc):  # a Mamba config names no trained context (no positions)
        assert isinstance(tc.get("seq_length" if chatglm else "max_position_embeddings"), int)
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or tc.get("torch_dtype") or tc.get("dtype")
    assert dtype in ("bfloat16", "float16", "float32") or "quantization_config" in cfg
    assert isinstance(cfg.get("tie_word_embeddings", tc.get("tie_word_embeddings")), bool)
    if "layer_types" in tc:
        lt = tc["layer_types"]
        assert isinstance(lt, list), "layer_types must be the real list, not a summary"
        assert len(lt) == n_layers
        assert set(lt) <= {
            "full_attention", "sliding_attention", "linear_attention", "chunked_attention",
            "mamba", "attention",  # GraniteMoeHybrid's names
            "conv",  # LFM2's short-convolution layers (transformers configuration_lfm2.py)
            "deepseek_sparse_attention",  # GLM-5.3-Flash's MLA + DSA layers (glm5_next_text, beside linear_attention)
        }
        if "sliding_attention" in lt:
            assert isinstance(tc.get("sliding_window"), int) and tc["sliding_window"] > 0
    if _is_moe(tc):
        used = tc.get("num_experts_per_tok", tc.get("experts_per_token", tc.get("top_k_experts", tc.get(
            "moe_topk", tc.get("num_experts_per_token")))))  # the last: Kimi-Linear's name
        width = tc.get("moe_intermediate_size", tc.get("intermediate_size"))
        if tc.get("model_type") == "hunyuan_v1_moe":  # per-layer lists (transformers configuration_hunyuan_v1_moe.py)
            used, width = _one_per_layer(used, n_layers), _one_per_layer(width, n_layers)
        assert isinstance(used, int)
        assert isinstance(width, int)
    elif tc.get("model_type") not in ("mamba2", "nemotron-nas"):  # Mamba2: the mixer's; DeciLM: ffn_mult per layer
        assert isinstance(tc.get("ffn_hidden_size" if chatglm else "intermediate_size"), int)
    if _is_mla(tc):
        for key in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            # GLM-5.3-Flash's MLA has no rope part (mla_use_nope; glm5-next.cpp asserts n_rot == 0)
            nope = key == "qk_rope_head_dim" and tc.get("mla_use_nope") is True
            assert isinstance(tc.get(key), int) and (tc[key] >= 0 if nope else tc[key] > 0), key
        assert "q_lora_rank" in tc
    if tc.get("model_type") in ("kimi_linear", "glm5_next_text"):  # KDA layers: conversion/kimi_linear.py, glm5next.py
        lac = tc.get("linear_attn_config") or {}
        for key in ("head_dim", "short_conv_kernel_size"):
            assert isinstance(lac.get(key), int) and lac[key] > 0, key
        assert isinstance(lac.get("full_attn_layers"), list)
    if _is_hybrid(tc) and tc.get("model_type") != "glm5_next_text":  # GLM-5.3-Flash's KDA: checked above
        for key in (
            "linear_conv_kernel_dim",
            "linear_key_head_dim",
            "linear_value_head_dim",
            "linear_num_key_heads",
            "linear_num_value_heads",
            "head_dim",
        ):
            assert isinstance(tc.get(key), int) and tc[key] > 0, key
        interval = tc["full_attention_interval"]
        expected = [
            "full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)
        ]
        assert tc.get("layer_types", expected) == expected  # Qwen3-Next declares only the interval


def test_architecture_detection_is_not_vacuous():
    kinds = {
        slug: (_is_moe(_text(d["config"])), _is_mla(_text(d["config"])), _is_hybrid(_text(d["config"])))
        for slug, d in DATA.items()
    }
    assert kinds["deepseek-v3"] == (True, True, False)
    assert kinds["mixtral-8x7b-instruct-v0.1"] == (True, False, False)
    assert kinds["qwen3-30b-a3b"] == (True, False, False)
    assert kinds["gpt-oss-20b"] == (True, False, False)
    assert kinds["qwen3.5-27b"] == (False, False, True)
    assert kinds["qwen3.5-35b-a3b"] == (True, False, True)
    assert kinds["llama-3.1-8b-instruct"] == (False, False, False)


# --- facts that a wrong edit would break (values read from the verbatim copies named in `source`) ----


def test_spot_values():
    def tc(slug):
        return _text(DATA[slug]["config"])

    assert tc("qwen3-8b")["head_dim"] == 128 and tc("qwen3-8b")["hidden_size"] // 32 == 128
    assert tc("qwen3-32b")["head_dim"] == 128 and tc("qwen3-32b")["hidden_size"] // 64 == 80
    assert tc("llama-3.2-1b-instruct")["tie_word_embeddings"] is True
    assert tc("llama-3.1-70b-instruct")["rope_scaling"]["rope_type"] == "llama3"
    assert tc("gemma-2-9b-it")["head_dim"] == 256
    lt = tc("gemma-2-9b-it")["layer_types"]
    assert lt[:2] == ["sliding_attention", "full_attention"] and lt.count("full_attention") == 21
    g3 = tc("gemma-3-27b-it")
    full = [i for i, t in enumerate(g3["layer_types"]) if t == "full_attention"]
    assert full == list(range(5, 62, 6)) and len(full) == 10
    assert g3["vocab_size"] == 262208 and g3["sliding_window"] == 1024
    oss = DATA["gpt-oss-20b"]["config"]
    assert oss["layer_types"] == ["sliding_attention", "full_attention"] * 12
    assert oss["sliding_window"] == 128 and oss["quantization_config"]["quant_method"] == "mxfp4"
    ds = DATA["deepseek-v3"]["config"]
    assert ds["quantization_config"]["weight_block_size"] == [128, 128]
    assert ds["kv_lora_rank"] + ds["qk_rope_head_dim"] == 576
    assert ds["num_nextn_predict_layers"] == 1 and ds["first_k_dense_replace"] == 3
    q35 = tc("qwen3.5-27b")
    assert q35["layer_types"].count("full_attention") == 16 and q35["num_key_value_heads"] == 4
    assert q35["mamba_ssm_dtype"] == "float32"
    assert tc("qwen3.5-35b-a3b")["layer_types"].count("linear_attention") == 30
    assert tc("mistral-7b-instruct-v0.3")["vocab_size"] == 32768
    assert tc("phi-4")["num_key_value_heads"] == 10 and tc("phi-4")["tie_word_embeddings"] is False


# --- the loader ------------------------------------------------------------------------------------

REQUIRED = {
    # brief: models the catalog must hold, with the names users type
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b-instruct",
    "llama3.1:8b": "llama-3.1-8b-instruct",
    "meta-llama/Llama-3.1-70B-Instruct": "llama-3.1-70b-instruct",
    "llama3.1:70b": "llama-3.1-70b-instruct",
    "meta-llama/Llama-3.2-1B-Instruct": "llama-3.2-1b-instruct",
    "llama3.2:1b": "llama-3.2-1b-instruct",
    "meta-llama/Llama-3.2-3B-Instruct": "llama-3.2-3b-instruct",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b-instruct",
    "qwen2.5:7b": "qwen2.5-7b-instruct",
    "Qwen/Qwen2.5-32B-Instruct": "qwen2.5-32b-instruct",
    "qwen2.5:32b": "qwen2.5-32b-instruct",
    "Qwen/Qwen3-8B": "qwen3-8b",
    "qwen3:8b": "qwen3-8b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "qwen3:32b": "qwen3-32b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "qwen3:30b": "qwen3-30b-a3b",
    "qwen3:30b-a3b": "qwen3-30b-a3b",
    "Qwen/Qwen3.5-27B": "qwen3.5-27b",
    "Qwen/Qwen3.5-35B-A3B": "qwen3.5-35b-a3b",
    "google/gemma-2-9b-it": "gemma-2-9b-it",
    "gemma2:9b": "gemma-2-9b-it",
    "google/gemma-3-27b-it": "gemma-3-27b-it",
    "gemma3:27b": "gemma-3-27b-it",
    "openai/gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss:20b": "gpt-oss-20b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-v3": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1": "deepseek-r1",
    "deepseek-r1:671b": "deepseek-r1",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": "deepseek-r1-distill-llama-8b",
    "deepseek-r1:8b": "deepseek-r1-0528-qwen3-8b",
    "mistralai/Mistral-7B-Instruct-v0.3": "mistral-7b-instruct-v0.3",
    "mistral:7b": "mistral-7b-instruct-v0.3",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral-8x7b-instruct-v0.1",
    "mixtral:8x7b": "mixtral-8x7b-instruct-v0.1",
    "microsoft/phi-4": "phi-4",
    "phi4": "phi-4",
    "phi4:14b": "phi-4",
}


@pytest.mark.parametrize("name,slug", sorted(REQUIRED.items()))
def test_lookup_finds_required_models(name, slug):
    for variant in (name, name.upper(), f"  {name.lower()} "):
        entry = catalog.lookup(variant)
        assert entry is not None and entry.slug == slug, variant


def test_lookup_entry_fields():
    e = catalog.lookup("QWEN/qwen3-30B-a3b")
    assert e.slug == "qwen3-30b-a3b" and e.hf_id == "Qwen/Qwen3-30B-A3B"
    assert e.config["num_experts"] == 128 and e.text_config is e.config
    assert e.verified is True and e.params_published == 30532122624 and "aiconfigurator" in e.source
    g = catalog.lookup("gemma3:27b")
    assert g.text_config["num_hidden_layers"] == 62 and "text_config.vocab_size" in g.filled
    assert catalog.lookup("huggingface.co/microsoft/phi-4").slug == "phi-4"
    assert catalog.lookup("llama3.1:latest").slug == "llama-3.1-8b-instruct"
    assert catalog.lookup("gpt-oss-20b").slug == "gpt-oss-20b"  # slug itself


def test_lookup_unknown_is_none():
    assert catalog.lookup("no-such-model-xyz") is None
    assert catalog.lookup("") is None


def test_entries_are_index_rows():
    rows = catalog.entries()
    assert [r["slug"] for r in rows] == SLUGS
    row = next(r for r in rows if r["slug"] == "qwen3.5-27b")
    assert row == {
        "slug": "qwen3.5-27b",
        "name": "Qwen3.5 27B",
        "hf_id": "Qwen/Qwen3.5-27B",
        "family": "qwen",
        "params": 27781427952,
        "context": 262144,
        "active": None,
        "kinds": ["full", "recurrent"],
    }


def test_suggest():
    assert catalog.suggest("Qwen3-32")[0] == "Qwen/Qwen3-32B"
    assert "Qwen/Qwen3-32B" in catalog.suggest("qwen/qwen3-23b")
    assert "llama3.1:8b" in catalog.suggest(
        "llama3.1:8"
    ) or "meta-llama/Llama-3.1-8B-Instruct" in catalog.suggest("llama3.1:8")
    out = catalog.suggest("gemma", n=2)
    assert len(out) <= 2
    assert catalog.suggest("zzzzzzzzzzzzzzzz") == []


def test_lookup_reads_the_index_and_one_data_file(monkeypatch):
    catalog._index.cache_clear()
    catalog._load.cache_clear()
    opened: list[Path] = []
    real_open = Path.open

    def spy(self, *args, **kwargs):
        opened.append(Path(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    assert catalog.lookup("qwen3:8b").slug == "qwen3-8b"
    assert opened == [catalog.INDEX_PATH, catalog.DATA_DIR / "qwen3-8b.json"]


def test_import_is_light():
    code = (
        "import sys, oomkit.model.catalog as c; c.lookup('qwen3:8b'); "
        "print(sorted(m for m in ('numpy', 'torch', 'transformers', 'gguf', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_derived_entries_are_what_their_rows_give():
    # tools/catalog_rows.py: each derived entry (a sibling's verified config with its stated differences) written by
    # tools/catalog_derive.py; a hand edit of a derived data file, or a row edited without rerunning it, fails here
    spec = importlib.util.spec_from_file_location("catalog_derive", ROOT / "tools" / "catalog_derive.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["catalog_derive"] = mod
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0


def test_derived_entries_say_so():
    derived = [s for s, d in DATA.items() if d["source"].startswith("derived")]
    assert len(derived) >= 200
    for slug in derived:
        d = DATA[slug]
        assert d["verified"] is False and "not read from a verbatim copy" in d["source"], slug


def test_a_lookup_leaves_the_listing_rows_unparsed():
    # index.json's first line holds the names; the listing rows (most of its bytes) are parsed for `oomkit models` only
    code = ("import oomkit.model.catalog as c; c.lookup('qwen3:8b'); c.lookup('unsloth/Qwen3-8B-GGUF'); "
            "c.name_kind('Qwen/Qwen3-8B'); print(c._rows.cache_info().currsize, len(c.entries()) > 400)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "True"]
    names_line, rows_line = catalog.INDEX_PATH.read_text(encoding="utf-8").splitlines()
    assert len(names_line) < len(rows_line)
