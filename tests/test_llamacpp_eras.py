"""llama.cpp's rules by build (--engine-version: a build tag or a date), one test per era switch.

Each switch is held to what the builds on either side print: the public logs and PRs cited in settings.ERAS,
and llama.cpp's own lines on this machine where the binding's build (b0c1e57098, between the switches below)
shows one side."""

import pytest

import oomkit
from oomkit.engines.llamacpp import compute, kv
from oomkit.engines.llamacpp.settings import ERAS, LlamaCppSettings, build_number, version_warning
from oomkit.model.resolve import resolve

MiB = 1 << 20


def _view(version, **kw):
    opts = dict(quant="Q4_K_M", vram="24GiB", find_max_context=False, n_ctx=8192, fit=False)
    opts.update(kw)
    return oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", engine_version=version, **opts).engine_view


def test_np_auto_four_unified_slots_only_from_its_build():
    # issue #17300 (b7079, 2025-11-16): llama-server starts 4 slots unasked; older builds one
    new = _view(f"b{ERAS['np_auto']}")
    old = _view(f"b{ERAS['np_auto'] - 1}")
    assert (new["n_seq_max"], new["kv_unified"]) == (4, True)
    assert old["n_seq_max"] == 1
    # llama-cli never had it
    assert _view("newest", program="llama-cli")["n_seq_max"] == 1


def test_reserved_outputs_since_pr_23861():
    spec = resolve("Qwen/Qwen3-8B:Q4_K_M")
    s = LlamaCppSettings(n_ctx=8192, engine_version=f"b{ERAS['outputs_max']}")
    ctx = kv.resolve_context(spec, s)
    assert compute.reserved_outputs(ctx, s) == 4  # n_seq_max of -np auto
    before = LlamaCppSettings(n_ctx=8192, engine_version=f"b{ERAS['outputs_max'] - 1}")
    assert compute.reserved_outputs(kv.resolve_context(spec, before), before) == 512  # the whole ubatch
    # the library default (n_outputs_max 0 = n_batch) keeps every token: the Python binding, llama-perplexity
    py = LlamaCppSettings(n_ctx=8192, program="llama-cpp-python")
    assert compute.reserved_outputs(kv.resolve_context(spec, py), py) == 512
    # the logits term goes: 151936 x 512 x 4 bytes = 296.75 MiB before, a few rows after
    new = _view(f"b{ERAS['outputs_max']}")["compute_buffer_bytes"]["CUDA0"]
    old = _view(f"b{ERAS['outputs_max'] - 1}")["compute_buffer_bytes"]["CUDA0"]
    assert old > 151936 * 512 * 4 > new  # the whole ubatch's logits held before, not after


def test_mla_eras_decompressed_latent_and_k_only():
    # DeepSeek-V3 f16 KV per token and layer: decompressed 128 heads x (192 + 128); latent 576 + 512; K only 576
    per_layer = {}
    for version in (f"b{ERAS['mla_latent'] - 1}", f"b{ERAS['mla_latent']}", f"b{ERAS['mla_k_only']}"):
        v = oomkit.estimate("deepseek-ai/DeepSeek-V3", "llama.cpp", quant="Q4_K_M", cpu_only=True, n_ctx=4096,
                            n_parallel=1, find_max_context=False, engine_version=version, flash_attn="on").engine_view
        per_layer[version] = (v["k_bytes"] + v["v_bytes"]) // (61 * 4096 * 2)
    assert list(per_layer.values()) == [128 * (192 + 128), 576 + 512, 576]


def test_dates_read_as_builds():
    assert build_number("2025-11-16") == 7079  # issue #17300's build on its day
    assert build_number("2026-05-22") == 9272  # issue #23527's
    assert ERAS.reached(build_number("2026-07-01"), "outputs_max")
    assert not ERAS.reached(build_number("2025-06-01"), "np_auto")
    with pytest.raises(oomkit.errors.OomkitError):
        build_number("June 2025")


def test_newer_builds_use_the_newest_rules_with_a_warning():
    assert version_warning("b10662") is not None and version_warning("b7000") is None
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", n_ctx=8192, fit=False,
                          find_max_context=False, engine_version="b10662")
    assert any("newer than the newest" in w for w in est.warnings)
    assert est.engine_view["n_seq_max"] == 4


def test_kq_mask_input_f16_since_pr_23764():
    # ROCm log of issue #11337 (January 2025, fixtures/engine_logs/llamacpp/backends): ROCm_Host compute 74.01 MiB =
    # the F32 KQ mask (32768 x 512 x 4 = 64 MiB) + the token rows (5120 x 512 x 4 = 10 MiB); from PR #23764 the
    # mask input is F16: 32 + 10 MiB; both builds also hold the unread embeddings input of PR #18550 (b7774, 10 MiB)
    # and the small inputs (compute.token_index_inputs): 3 x 2 KiB of token ids, positions and out_ids (the 0.01 of
    # the printed 74.01), from ERAS set_rows 8 KiB of K / V indices, from ERAS attn_rot the q8_0 cache's 80 KiB of
    # rotations
    def host(version):
        return oomkit.estimate("Qwen/Qwen2.5-Coder-32B-Instruct", "llama.cpp", quant="Q4_K_M", vram="24GiB",
                               find_max_context=False, n_ctx=32768, n_parallel=1, cache_type_k="q8_0",
                               cache_type_v="q8_0", flash_attn="on", fit=False,
                               engine_version=version).engine_view["compute_buffer_bytes"]["CUDA_Host"]
    assert host(f"b{ERAS['kq_mask_f16'] - 1}") == (64 + 10 + 10) * MiB + 94 * 1024
    assert host(f"b{ERAS['kq_mask_f16']}") == (32 + 10 + 10) * MiB + 94 * 1024
    assert host(f"b{ERAS['embd_input'] - 1}") == (64 + 10) * MiB + 14 * 1024
    assert round(host("b4500") / MiB, 2) == 74.01  # the log's build era: 6 KiB of small inputs


def test_phi3_sliding_window_cache_only_between_13194_and_13676():
    def caches(version):
        v = oomkit.estimate("microsoft/Phi-3-mini-4k-instruct", "llama.cpp", quant="Q4_K_M", cpu_only=True,
                            find_max_context=False, n_ctx=8192, n_parallel=1, flash_attn="off", fit=False,
                            engine_version=version).engine_view
        return [(c["name"], c["cells"]) for c in v["kv_caches"]]
    # every layer windowed at n_swa 2047 (PR #8931's default for Phi-3-mini-4k): PAD(2047 + n_batch 2048, 32) cells
    # (the logical batch until PR #13833, b5554: held-out set 24's Gemma 3 caches print it)
    assert caches(f"b{ERAS['iswa']}") == [("SWA", 4096)]
    assert caches(f"b{ERAS['iswa'] - 1}") == caches(f"b{ERAS['phi3_swa_off']}") == [("", 8192)]


def test_encoders_had_a_kv_cache_before_pr_13108():
    # ollama/ollama#10114 (April 2025, Ollama's vendored llama.cpp): an embedding model (24 layers, n_ctx_train 8192,
    # n_embd_k_gqa 1024: bge-m3's shape) run at 32768 prints "llama_kv_cache_init: kv_size = 32768, ... n_layer =
    # 24" and a KV cache for every layer; from PR #13108 an encoder gets none
    def caches(version):
        return oomkit.estimate("BAAI/bge-m3", "llama.cpp", quant="F16", vram="24GiB", find_max_context=False,
                               n_ctx=32768, n_parallel=1, embeddings=True, fit=False,
                               engine_version=version).engine_view["kv_caches"]
    old = caches(f"b{ERAS['encoder_no_kv'] - 1}")
    assert [(c["cells"], c["layers"], c["k_bytes"]) for c in old] == [(32768, 24, 32768 * 24 * 1024 * 2)]
    assert caches(f"b{ERAS['encoder_no_kv']}") == []


def test_builds_before_mla_latent_load_the_pre_mla_file():
    """Before PR #12801 llama.cpp loaded only DeepSeek GGUFs converted before it (attn_kv_b whole): a catalog spec
    run with such an --engine-version is that file (weights.pre_mla_file), as the explicit fixture key makes it.
    geerlingguy's DeepSeek-R1 Q4_K_M log (beowulf-ai-cluster#2, backends_multi/rpc-deepseek-r1-*) prints 9 MiB of
    attn_kv_b per layer where a re-converted file has 10 MiB of attn_k_b + attn_v_b: 61 x 1.00 MiB."""
    from oomkit.engines.base import get_engine
    from oomkit.engines.llamacpp.weights import pre_mla_file
    from oomkit.request import resolve_model

    def run(model, version):
        return oomkit.estimate(model, "llama.cpp", quant=None if not isinstance(model, str) else "Q4_K_M",
                               cpu_only=True, n_ctx=4096, n_parallel=1, find_max_context=False, fit=False,
                               engine_version=version)

    old, new = (run("deepseek-ai/DeepSeek-R1", f"b{ERAS['mla_latent'] + d}") for d in (-1, 0))
    assert new.host.weights_bytes - old.host.weights_bytes == 61 * MiB
    assert "GGUF converted before llama.cpp's MLA layout" in " ".join(old.model.labels)
    spec = resolve_model(get_engine("llama.cpp"), "deepseek-ai/DeepSeek-R1", "Q4_K_M")
    explicit = run(pre_mla_file(spec), f"b{ERAS['mla_latent'] - 1}")
    assert (explicit.host.weights_bytes, explicit.kv_cache_bytes) == (old.host.weights_bytes, old.kv_cache_bytes)


def test_typed_np_1_is_four_unified_slots_until_b7433():
    """llama-server's main from PR #16736 (b6925) until PR #17997 (b7433) turned one slot without -kvu into 4 in a
    unified cache, typed or not: issue #17300 runs `llama-server -m Qwen3-VL-4B-Instruct-Q8_0.gguf -c 8000 ... -np 1`
    at b7079 and its log says "initializing slots, n_slots = 4". From PR #17017 (b6958) a draft model keeps it one
    slot; from b7433 only the -np -1 default is 4 slots."""
    def slots(version, **kw):
        v = _view(version, n_parallel=1, **kw)
        return v["n_seq_max"], v["kv_unified"]

    assert slots("b7079") == (4, True)
    assert [slots(f"b{b}") for b in (6924, 6925, 7432, 7433)] == [(1, False), (4, True), (4, True), (1, False)]
    assert slots("b7079", kv_unified=True) == (1, True)  # "add -kvu to disable this"
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", engine_version="b7079", quant="Q4_K_M", vram="24GiB",
                          find_max_context=False, n_ctx=8192, fit=False, n_parallel=1)
    assert any("-np 1 without -kvu into 4 slots" in w for w in est.warnings)
    # the -np -1 default of these builds is one slot beside a draft model from b6958, 4 before it and from b7433
    draft = dict(model_draft="Qwen/Qwen3-0.6B:Q8_0")
    assert [(_view(f"b{b}", **draft)["n_seq_max"]) for b in (6957, 6958, 7432, 7433)] == [4, 1, 1, 4]
    assert slots("b6957", **draft) == (4, True) and slots("b6958", **draft) == (1, False)
