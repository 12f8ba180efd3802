"""MLX (mlx-lm) held out, set 11: Gemma 4 E2B as mlx-lm 0.31.3 loads an mlx-community checkpoint.

Source: tomas10k/haas-ai-a4-knowledge-hub (commit 3e0edae1), a CLI that runs mlx-community/gemma-4-e2b-it-4bit through
`mlx_lm.load` / `mlx_lm.generate` ("mlx-lm 0.31.3, mlx 0.32.2", "Apple M5", 16 GB) once per command and records, per
run, the prompt and output tokens and `mx.get_peak_memory() / 1e9` (wiki_cli/model.py peak_memory_gb, never reset: a
fresh process per `wiki ask`, so the peak is the load plus one answer) in evidence/runs/runs.jsonl. Nothing in tests/
cites it. The band is the earlier sets' for mlx-lm: oomkit's total / the printed peak in [0.93, 1.05].

    run (runs.jsonl)          prompt + out   printed GB   oomkit GB   est / printed
    20:34:07 ask              1185 + 24      3.280        3.184       0.971
    20:34:59 ask              1444 + 24      3.389        3.210       0.947
    20:35:22 ask              1282 + 42      3.285        3.195       0.973
    20:35:39 ask              1122 + 20      3.235        3.179       0.983
    20:38:04 chat, 1st turn    382 + 17      2.987        3.107       1.040
    README "peaks at about 2.6 GB loaded"                  2.6          2.604       1.002 (weights)

    6 of 6 in the band, before and after: no rule changes with this set.

What mlx-lm does with the checkpoint, read at v0.31.3 (ml-explore/mlx-lm) and checked here:

* models/gemma4.py Model.sanitize (from #1093, 4469ad46, the first Gemma 4 release, to main d78bf58e) drops
  vision_tower / audio_tower / embed_vision / embed_audio / multi_modal_projector (and vision_embedder, the
  encoder-free gemma4_unified's, which utils.py MODEL_REMAPPING maps to gemma4 from #1349, 8239c72d): the towers an
  mlx-vlm conversion keeps in bf16 (mlx_vlm convert.py base_quant_predicate: skip_multimodal_module) are not loaded.
  The 3.58 GB download holds 2.6 GB that mlx-lm keeps.
* models/gemma4_text.py Gemma4TextModel: embed_tokens_per_layer is an nn.Embedding of vocab_size_per_layer_input x
  (layers x hidden_size_per_layer_input), one table; quant_predicate quantizes every module but router.proj (8 bits),
  so the mlx-community 4-bit checkpoint holds it at 4 bits (262,144 rows of 8,960: 1.32 GB of the 2.6).
* Model.make_cache: a cache for the first num_hidden_layers - num_kv_shared_layers layers only (RotatingKVCache of
  sliding_window for sliding layers, KVCache for full ones); the shared layers read the K/V of the last earlier layer
  of their type (Gemma4TextModel previous_kvs), and sanitize drops their k/v projections and k norms (#1240,
  df1d3f3c, 2026-05-05). Gemma 3n (models/gemma3n.py) caches the same way but keeps the shared layers' k/v
  projections: Gemma3nAttention builds them for every layer and sanitize drops only the towers.

A known gap (strict xfail below): the printed peak grows 0.402 GB from the 382-token to the 1444-token run where
oomkit grows 0.103 GB. Gemma 4's 256 and 512 head dims take the SDPA's unfused fallback (layout.py
FUSED_PREFILL_HEAD_DIMS), one 8 x S x S bf16 score array per layer (35 MB at 1483 tokens), and every layer's chunk
inputs stay alive while its command buffer is in flight (mlx eval.cpp: the completion handler holds them; device.cpp
needs_commit commits a buffer once its inputs pass max_mb_per_buffer, 40 on an M5). The growth fits about eleven score
arrays (11 x 16 x S^2 bytes: 0.150 GB from 1161 to 1483 tokens, the 20:46:56 and 20:46:49 runs, against 0.150
printed) where oomkit counts in-flight inputs as at most (MAX_ACTIVE_TASKS + 1) x 40 MiB. Sizing each in-flight buffer as 40 MiB plus its largest input
would over-count the hybrid Qwen3.8-27B of set 2 (one full-attention layer in four) many times over, so the rule is
left as it is until a figure pins how many score arrays a window of in-flight buffers spans.
"""

from __future__ import annotations

import pytest

from oomkit.engines import mlx
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05

URL = ("https://github.com/tomas10k/haas-ai-a4-knowledge-hub/blob/3e0edae1f0a2e51c49024437b580d06e21f29cb1/"
       "evidence/runs/runs.jsonl")
README = ("https://github.com/tomas10k/haas-ai-a4-knowledge-hub/blob/3e0edae1f0a2e51c49024437b580d06e21f29cb1/"
          "README.md")
MAC = ("Apple M5 16GB", 16)
SLUG = "gemma-4-e2b-it"
VERSION = "0.31.3"

# (run, the runs.jsonl stats kept verbatim, prompt tokens, output tokens, printed peak GB)
FIGURES = [
    ("20:34:07-ask", '"prompt_tokens": 1185, "output_tokens": 24, ... "peak_model_memory_gb": 3.28', 1185, 24, 3.280),
    ("20:34:59-ask", '"prompt_tokens": 1444, "output_tokens": 24, ... "peak_model_memory_gb": 3.389', 1444, 24, 3.389),
    ("20:35:22-ask", '"prompt_tokens": 1282, "output_tokens": 42, ... "peak_model_memory_gb": 3.285', 1282, 42, 3.285),
    ("20:35:39-ask", '"prompt_tokens": 1122, "output_tokens": 20, ... "peak_model_memory_gb": 3.235', 1122, 20, 3.235),
    ("20:38:04-chat-turn-1", '"prompt_tokens": 382, "output_tokens": 17, ... "peak_model_memory_gb": 2.987',
     382, 17, 2.987),
]
RUNTIME_LINE = '"runtime": "MLX (mlx-lm): mlx-lm 0.31.3, mlx 0.32.2", ... "chip": "Apple M5", "unified_memory_gb": 16'
README_LINE = "E2B at 4 bit peaks at about 2.6 GB loaded and about 3.4 GB while answering"


def _spec():
    return spec_from_config(dict(catalog.lookup(SLUG).config), name=SLUG)


def _settings(prompt: int, out: int) -> mlx.MlxSettings:
    # the mlx-community repo name's -4bit: mlx_lm.convert's affine 4 bits, group 64
    return mlx.MlxSettings(q_bits=4, prompt_tokens=prompt, max_tokens=out, engine_version=VERSION)


def _estimate_gb(prompt: int, out: int) -> float:
    name, ram = MAC
    est = mlx.ENGINE.estimate(_spec(), (Device("MTL0", name, ram * GiB),), _settings(prompt, out))
    return est.total_bytes / 1e9


@pytest.mark.parametrize("run,line,prompt,out,printed", FIGURES, ids=[f[0] for f in FIGURES])
def test_gemma_4_e2b_peak_memory(run, line, prompt, out, printed):
    ratio = _estimate_gb(prompt, out) / printed
    assert LOW <= ratio <= HIGH, f"{run}: estimate {ratio * printed:.3f} GB vs printed {printed} GB ({URL})"


def test_gemma_4_e2b_weights_as_mlx_lm_loads_them():
    """README: 'peaks at about 2.6 GB loaded': the text model only (gemma4.py sanitize drops the towers the mlx-vlm
    conversion stores), the per-layer embedding table quantized like every other Embedding (gemma4_text.py
    quant_predicate)."""
    spec = _spec()
    s = _settings(382, 17)
    weights = mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))
    total = sum(b for _, b in weights)
    assert LOW <= total / 1e9 / 2.6 <= HIGH, f"weights {total / 1e9:.3f} GB vs about 2.6 GB loaded ({README})"
    by_name = {t.name: b for t, b in weights}
    # 262,144 rows of 35 x 256 = 8,960 values at 4 bits, group 64: 4,480 packed bytes + 140 bf16 scales and biases
    assert by_name["per_layer_token_embd.weight"] == 262_144 * mlx.quant_row(8960, 4, 64, 2) == 1_321_205_760


def test_gemma_4_e2b_caches_only_the_unshared_layers():
    """gemma4_text.py Model.make_cache (v0.31.3): num_hidden_layers - num_kv_shared_layers = 35 - 20 caches, a
    RotatingKVCache(max_size=sliding_window 512) per sliding layer and a KVCache per full one; none for the 20 layers
    that read an earlier layer's K/V."""
    spec = _spec()
    s = _settings(1444, 24)
    caches, _ = mlx.layer_caches(spec, s, mlx.resolve(spec, s))
    kinds = [c.cls for c in caches]
    assert kinds[:15].count("RotatingKVCache") == 12 and kinds[:15].count("KVCache") == 3
    assert set(kinds[15:]) == {"none"}
    assert {c.tokens for c in caches if c.cls == "RotatingKVCache"} == {512}


@pytest.mark.xfail(strict=True, reason=(
    "runs.jsonl: 2.987 GB at 382 + 17 tokens and 3.389 GB at 1444 + 24, a growth of 0.402 GB; oomkit grows 0.103 GB "
    "(3.107 -> 3.210): the unfused SDPA's 8 x S x S score arrays of the layers whose command buffers are in flight "
    "(about eleven at once here) are counted inside a fixed (MAX_ACTIVE_TASKS + 1) x 40 MiB"))
def test_gemma_4_e2b_peak_grows_with_the_prompt_as_printed():
    printed = 3.389 - 2.987
    grown = _estimate_gb(1444, 24) - _estimate_gb(382, 17)
    assert 0.8 <= grown / printed <= 1.25, f"oomkit grows {grown:.3f} GB where {URL} grows {printed:.3f} GB"


def test_gemma_3n_e4b_keeps_the_shared_layers_projections():
    """gemma3n.py (v0.31.3) differs from gemma4_text.py: Gemma3nAttention builds k_proj / v_proj / k_norm for every
    layer, the KV-shared ones included, and sanitize drops only the towers, so the checkpoint's projections of the
    15 shared layers load and count; LanguageModel.make_cache caches the first 35 - 15 = 20 layers (RotatingKVCache of
    512 for the sliding ones, KVCache for every fifth)."""
    spec = spec_from_config(dict(catalog.lookup("gemma-3n-e4b-it").config), name="gemma-3n-e4b-it")
    s = _settings(1444, 24)
    r = mlx.resolve(spec, s)
    caches, _ = mlx.layer_caches(spec, s, r)
    kinds = [c.cls for c in caches]
    assert kinds[:20].count("RotatingKVCache") == 16 and kinds[:20].count("KVCache") == 4
    assert set(kinds[20:]) == {"none"}
    shared_kv = [t for t, _ in mlx.tensor_bytes(spec, s, r)
                 if t.layer is not None and t.layer >= 20 and t.name.endswith(("attn_k.weight", "attn_v.weight"))]
    assert len(shared_kv) == 2 * 15
