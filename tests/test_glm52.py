"""GLM-5.2 (glm_moe_dsa with IndexShare): only the layers whose indexer_types entry is "full" own a DSA lightning
indexer; a "shared" layer reuses the top-k of the last full layer before it and has no indexer weights and no
indexer key cache. Sources: transformers modeling_glm_moe_dsa.py GlmMoeDsaAttention (self.skip_topk =
config.indexer_types[layer_idx] == "shared"; the indexer is None for those), configuration_glm_moe_dsa.py (without
indexer_types / index_topk_pattern: "full" where max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0);
llama.cpp src/models/glm-dsa.cpp (GLM_5_2_DEFAULT_INDEXER_TYPES; indexer tensors TENSOR_NOT_REQUIRED) and
src/llama-model.cpp create_memory (llama_kv_cache_dsa with filter_lid = hparams.is_indexer_full(il)).
"""

from __future__ import annotations

import pytest

from oomkit import estimate
from oomkit.errors import OomkitError
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve

FULL = [0, 1, 2, *range(6, 78, 4)]
H, Q_LORA, IDX_HEADS, IDX_DIM = 6144, 2048, 32, 128
INDEXER = Q_LORA * IDX_HEADS * IDX_DIM + H * IDX_DIM + 2 * IDX_DIM + H * IDX_HEADS  # wq_b, wk, k_norm w+b, weights_proj


def test_indexer_layers():
    s = resolve("zai-org/GLM-5.2")
    owners = [la.index for la in s.trunk_layers if not la.attention.indexer_shared]
    assert owners == FULL and len(owners) == 21
    assert not s.layers[78].attention.indexer_shared  # the MTP layer runs its own indexer
    names = {t.name for t in s.weights.tensors}
    assert "blk.6.indexer.attn_k.weight" in names and "blk.5.indexer.attn_k.weight" not in names
    assert "blk.78.indexer.attn_k.weight" in names


def test_parameter_total_is_the_published_one():
    # Hugging Face API, zai-org/GLM-5.2: BF16 753,329,921,024 + F32 19,456 = 753,329,940,480; GLM-5.1 (every layer
    # full) 753,864,139,008: the 57 shared layers' indexers are the difference
    assert INDEXER == 9_371_904
    s, s51 = resolve("zai-org/GLM-5.2"), resolve("zai-org/GLM-5.1")
    assert s.params_total == 753_329_940_480 == s51.params_total - 57 * INDEXER


def test_schedule_without_an_explicit_list():
    cfg = dict(lookup("glm-5.2").config)
    del cfg["indexer_types"]  # index_topk_freq 4, index_skip_topk_offset 3 give the same 21 full layers
    s = spec_from_config(cfg)
    assert [la.index for la in s.trunk_layers if not la.attention.indexer_shared] == FULL
    cfg.pop("index_topk_freq")  # GLM-5 / 5.1: every layer full
    assert not any(la.attention.indexer_shared for la in spec_from_config(cfg).layers)
    bad = dict(lookup("glm-5.2").config, indexer_types=["shared"] + ["full"] * 77)
    with pytest.raises(OomkitError):
        spec_from_config(bad)


def test_llamacpp_kv_per_token():
    # MLA latent (kv_lora 512 + rope 64, F16, K only) in all 78 layers + the F16 indexer key in the 21 full ones
    r = estimate("zai-org/GLM-5.2", "llama.cpp", gpu="8x H200", n_ctx=8192, find_max_context=False).to_dict()
    assert r["kv_bytes_per_token"] == 78 * 576 * 2 + 21 * 128 * 2 == 95_232
    r51 = estimate("zai-org/GLM-5.1", "llama.cpp", gpu="8x H200", n_ctx=8192, find_max_context=False).to_dict()
    assert r51["kv_bytes_per_token"] == 78 * (576 + 128) * 2


def test_cli_check_by_name():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "oomkit", "check", "glm-5.2", "--engine", "vllm", "--gpu", "8x H100"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr


def test_vllm_kv_per_token():
    # vLLM builds the Indexer (and its DeepseekV32IndexerCache: 128 fp8 + one float32 scale = 132 B) only where the
    # IndexCache schedule keeps the top-k (models/deepseek_v2.py DeepseekV2MLAAttention); the MLA and indexer specs
    # form one UniformTypeKVCacheSpecs group, a page the sum of the layers'. TP 8: every rank holds the whole latent.
    kw = dict(gpu="8x H200", tensor_parallel_size=8, max_model_len=8192, find_max_context=False)
    r = estimate("zai-org/GLM-5.2", "vllm", **kw).to_dict()
    assert r["kv_bytes_per_token"] == 8 * (78 * 576 * 2 + 21 * 132) == 8 * 92_628
    r = estimate("zai-org/GLM-5.2", "vllm", kv_cache_dtype="fp8", **kw).to_dict()
    assert r["kv_bytes_per_token"] == 8 * (78 * 656 + 21 * 132)  # fp8_ds_mla: 512 fp8 + 4 float32 + 64 bf16
    r51 = estimate("zai-org/GLM-5.1", "vllm", **kw).to_dict()
    assert r51["kv_bytes_per_token"] == 8 * 78 * (576 * 2 + 132)


def test_vllm_blocks_of_the_uniform_type_group():
    # 8 layers of GLM-5.2's schedule (full 0, 1, 2, 6): the pool is a whole number of blocks of the summed page
    cfg = dict(lookup("glm-5.2").config, num_hidden_layers=8, n_routed_experts=16)
    cfg["indexer_types"], cfg["mlp_layer_types"] = cfg["indexer_types"][:8], cfg["mlp_layer_types"][:8]
    r = estimate(spec_from_config(cfg, name="glm52-mini"), "vllm", gpu="H200", max_model_len=8192,
                 find_max_context=False).to_dict()
    assert r["kv_bytes_per_token"] == 8 * 1152 + 4 * 132
    assert r["kv_cache_bytes"] > 0 and r["kv_cache_bytes"] % r["kv_bytes_per_token"] == 0


def _sglang(version: str, kv: str = "auto", model: str = "zai-org/GLM-5.2") -> dict:
    return estimate(model, "sglang", gpu="8x H200", engine_version=version, kv_cache_dtype=kv).to_dict()


def test_sglang_kv_per_token_by_release():
    # SGLang 0.5.23 mem_cache/memory_pool.py DSATokenToKVPool(skip_topk_layers) and mem_cache/index_key_cache.py
    # IndexKeyCache._layer_num_pages: "return 0 if self.pool.skip_topk_layers[layer_idx] else num_pages";
    # model_executor/pool_configurator.py _compute_dsa_indexer_cell_size prices the index key (128 fp8 + one float32
    # scale = 132 B) on num_indexer_layers = the layers where dsa_layer_skips_topk is False (21 of 78). First wheel
    # with skip_topk_layers: 0.5.18; 0.5.17 allocates and prices the key on all 78 layers.
    latent_bf16, latent_fp8, key = 576 * 2, 576, 128 + 4
    assert _sglang("0.5.23")["kv_bytes_per_token"] == 78 * latent_bf16 + 21 * key == 92_628
    assert _sglang("0.5.18")["kv_bytes_per_token"] == 92_628
    assert _sglang("0.5.17")["kv_bytes_per_token"] == 78 * (latent_bf16 + key) == 100_152
    assert _sglang("0.5.23", "fp8_e4m3")["kv_bytes_per_token"] == 78 * latent_fp8 + 21 * key == 47_700
    assert _sglang("0.5.17", "fp8_e4m3")["kv_bytes_per_token"] == 78 * (latent_fp8 + key) == 55_224
    # GLM-5.1 has no shared indexer: every layer keeps its key in every release
    assert _sglang("0.5.23", model="zai-org/GLM-5.1")["kv_bytes_per_token"] == 78 * (latent_bf16 + key)


def test_sglang_pool_rows():
    # the buffers as allocated: an fp8 DSA latent row is 512 fp8 + 4 float32 scales + 64 bf16 rope = 656 B on every
    # layer, the 132 B index key only on the 21 owning layers (0-row placeholders on the others)
    from oomkit.engines.sglang.kv import cache_layout, kv_pools
    from oomkit.engines.sglang.settings import SGLangSettings

    spec = resolve("zai-org/GLM-5.2")
    for version, owners in (("0.5.23", 21), ("0.5.17", 78)):
        s = SGLangSettings(kv_cache_dtype="fp8_e4m3", engine_version=version)
        lay = cache_layout(spec, s)
        (pool,) = kv_pools(lay, s, 64 * 100)
        assert pool.k_bytes == (6400 + 64) * (78 * 656 + owners * 132)


def test_sglang_refuses_releases_without_index_share():
    # 0.5.12 models/deepseek_v2.py: skip_topk = max(layer_id - 1, 0) % index_topk_freq != 0 (no
    # index_skip_topk_offset; read from 0.5.13), which puts the indexers on layers 0, 1, 5, 9, ... not the
    # checkpoint's 0, 1, 2, 6, 10, ...
    with pytest.raises(OomkitError, match="0.5.13"):
        _sglang("0.5.12")
    assert _sglang("0.5.13")["kv_bytes_per_token"] == 100_152


def test_cli_check_sglang():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "oomkit", "check", "glm-5.2", "--engine", "sglang", "--gpu", "8x H200"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert p.returncode in (0, 1), p.stderr
    p = subprocess.run([*cmd, "--engine-version", "0.5.12"], capture_output=True, text=True, timeout=180)
    assert p.returncode not in (0, 1) and "index_skip_topk_offset" in p.stderr
