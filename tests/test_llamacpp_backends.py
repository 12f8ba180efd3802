"""llama.cpp's backends: the CPU backend's repacked weights against llama.cpp itself, and the buffer names each
backend prints.

CPU_REPACK ground truth: llama.cpp (llama-cpp-python's build, run on this machine's CPU) loads synthetic GGUFs with
every quantizable matrix in one type (tests/groundtruth/typed.py) with its extra buffer types on and off, with and
without mmap; its `CPU_Mapped` / `CPU` / `CPU_REPACK model buffer size` lines are the expected figures, to the
0.01 MiB it prints. Which types repack depends on the CPU's ISA (ggml-cpu repack.cpp
ggml_repack_get_optimal_repack_type), so the comparison runs on an x86 CPU with AVX2 and without AVX512 (the
`avx2` table), as the test machine is.
"""

from pathlib import Path

import pytest

import oomkit
from oomkit.engines.llamacpp import backend_names, backends, repack
from oomkit.memory import Device
from tests.groundtruth.synth import SynthModel, _attn_gqa, _embeddings, _ffn_dense, _Meta, write_gguf

MiB = 1 << 20


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


TYPES = ("Q4_0", "Q8_0", "Q4_K", "IQ4_NL", "Q6_K", "MXFP4", "Q5_K")
MODELS = (("llama-3.1-8b", 2), ("qwen3-30b-a3b", 2))
SETTINGS = [dict(n_ctx=512, use_extra_bufts=rp, use_mmap=mm) for rp in (True, False) for mm in (True, False)]


@pytest.fixture(scope="module", params=[(m, n, t) for m, n in MODELS for t in TYPES],
                ids=[f"{m}-{t}" for m, _ in MODELS for t in TYPES])
def measured(request):
    pytest.importorskip("llama_cpp")
    flags = _cpu_flags()
    if "avx2" not in flags or "avx512f" in flags:
        pytest.skip("the repack ground truth is for an x86 CPU with AVX2 and without AVX512")
    from oomkit.model.gguf_file import read_gguf_spec
    from tests.groundtruth import llamacpp_run, synth, typed

    key, n_layers, tname = request.param
    path = typed.typed_path(synth.MODELS[key](n_layers=n_layers), int(typed.Q[tname]))
    return tname, read_gguf_spec(path), llamacpp_run.measure_many(path, SETTINGS)


def test_cpu_repack_equals_llama_cpp(measured):
    tname, spec, results = measured
    for s, m in zip(SETTINGS, results, strict=True):
        assert m["ok"], m["error"]
        est = oomkit.estimate(spec, "llama.cpp", cpu_only=True, find_max_context=False, program="llama-cpp-python",
                              n_ctx=s["n_ctx"], n_parallel=1, repack=s["use_extra_bufts"], mmap=s["use_mmap"])
        got = {k: round(v / MiB, 2) for k, v in est.engine_view["model_buffer_bytes"].items()}
        assert got == m["model_buffer_mib"], (tname, s, got, m["model_buffer_mib"])
        # the host holds the mapped (or loaded) rest and the repacked copy
        assert est.host.weights_bytes >= sum(t.nbytes for t in spec.weights.tensors)


def test_repacked_types_on_avx2():
    # measured on the AVX2 test machine (test above): these four repack, the rest stay in the mapped file
    assert set(repack.REPACK_TYPES["avx2"]) == {"q4_0", "q4_K", "iq4_nl", "mxfp4"}


def test_no_repack_with_a_gpu_unless_no_host():
    # llama-model.cpp make_cpu_buft_list: a GPU's host buffer type comes before CPU_REPACK
    gpu = (Device("CUDA0", memory_bytes=1 << 30),)
    assert not repack.repack_applies(gpu, no_host=False, use_extra_bufts=True)
    assert repack.repack_applies(gpu, no_host=True, use_extra_bufts=True)
    assert repack.repack_applies((), no_host=False, use_extra_bufts=True)
    assert not repack.repack_applies((), no_host=False, use_extra_bufts=False)
    # no host buffer type: RPC devices only, Metal
    assert repack.repack_applies((Device("RPC[127.0.0.1:50052]"),), no_host=False, use_extra_bufts=True)
    assert repack.repack_applies((Device("MTL0"),), no_host=False, use_extra_bufts=True)
    assert not repack.repack_applies((Device("RPC[h:1]"), Device("CUDA0")), no_host=False, use_extra_bufts=True)


def test_backend_from_devices():
    assert backend_names.infer_backend((Device("MTL0"),)).name == "metal"
    assert backend_names.infer_backend((Device("ROCm0"),)).name == "rocm"
    assert backend_names.infer_backend((Device("SYCL0"),)).name == "sycl"
    assert backend_names.infer_backend((Device("CUDA0"),)).name == "cuda"
    assert backend_names.infer_backend(()).name == "cpu"
    assert backend_names.infer_backend((Device("CUDA0"),), "vulkan").name == "vulkan"
    with pytest.raises(oomkit.errors.OomkitError):
        backend_names.backend_named("directx")


@pytest.mark.parametrize("ram_gib,printed_mb", [(16, 12713.12), (24, 19069.67), (32, 26800.60), (36, 30150.67),
                                                (48, 40200.90), (64, 55662.79), (128, 115448.73)])
def test_metal_working_set(ram_gib, printed_mb):
    # ggml_metal_device_init: recommendedMaxWorkingSetSize = ... MB (10^6 bytes), as macOS 26 logs print it (the
    # threads in tests/fixtures/metal_working_set/logs.jsonl; macOS 13-15's 2/3 and 3/4 in test_metal_working_set.py)
    assert round(backends.metal_working_set(ram_gib << 30) / 1e6, 2) == printed_mb


def test_backend_option_names_the_buffers():
    from oomkit.commands._model_args import parse_model_request

    req = parse_model_request(["Qwen/Qwen3-8B:Q4_K_M", "--ctx", "8192", "--vram", "16GiB", "--backend", "rocm"])
    v = req.estimate(find_max_context=False).engine_view
    assert v["backend"] == "rocm"
    assert set(v["model_buffer_bytes"]) == {"ROCm0", "CPU_Mapped"}
    assert set(v["compute_buffer_bytes"]) == {"ROCm0", "ROCm_Host"}
    # an Apple chip runs Metal: its weights are mapped from the file, the graph's CPU side in a plain CPU buffer
    est = oomkit.estimate("Qwen/Qwen3-8B", quant="Q4_K_M", gpu="M3 Max", find_max_context=False, n_ctx=8192)
    v = est.engine_view
    assert v["backend"] == "metal" and "MTL0_Mapped" in v["model_buffer_bytes"] and "CPU" in v["compute_buffer_bytes"]
    assert est.devices[0].overhead_bytes == 512 * MiB  # Metal's runtime reserve (Ollama's MinimumMemory there)
    assert round(est.devices[0].memory_bytes / 1e6, 2) == 30150.67  # recommendedMaxWorkingSetSize of 36 GiB, macOS 26
    with pytest.raises(oomkit.errors.OomkitError):
        parse_model_request(["Qwen/Qwen3-8B", "--engine", "vllm", "--backend", "rocm"])


def test_metal_maps_the_file_range_of_its_tensors():
    # llama-model.cpp load_tensors: with mmap, Metal wraps the file from the device's first to its last tensor; the
    # experts --cpu-moe leaves to the CPU lie between offloaded layers and stay in that range, while a CUDA buffer
    # holds only the tensors it is given
    def mb(**kw):
        return oomkit.estimate("openai/gpt-oss-20b", find_max_context=False, n_ctx=4096, n_parallel=1, fit=False,
                               **kw).engine_view["model_buffer_bytes"]
    metal, metal_moe = mb(gpu="M1 Max"), mb(gpu="M1 Max", cpu_moe=True)
    assert metal["MTL0_Mapped"] == metal_moe["MTL0_Mapped"]
    cuda, cuda_moe = mb(vram="24GiB"), mb(vram="24GiB", cpu_moe=True)
    assert cuda_moe["CUDA0"] < cuda["CUDA0"] // 2
    # without mmap Metal allocates (no mapping): the experts leave its buffer as they leave CUDA's
    assert mb(gpu="M1 Max", cpu_moe=True, mmap=False)["MTL0"] < metal["MTL0_Mapped"] // 2


def test_token_embeddings_leave_the_host_buffer_when_the_gpu_cannot_gather_them():
    """llama-model.cpp select_weight_buft asks the first GPU's supports_op for token_embd's GET_ROWS on its host
    buffer type (ROCm/TheRock#2595: "tensor 'token_embd.weight' (q4_K) (and 0 others) cannot be used with preferred
    buffer type ROCm_Host, using CPU instead"). ggml-cuda gathers floats and the legacy quants only until PR #25962
    (2026-07-21); with --no-mmap the q4_K / q6_K table of a Q4_K_M file then prints as a CPU buffer of its own size,
    a Q4_0 file's q4_0 table stays in the host buffer, and later builds keep both there."""
    def mb(quant, version="2026-07-10"):
        est = oomkit.estimate("meta-llama/Llama-3.1-8B-Instruct", "llama.cpp", quant=quant, vram="8GiB", fit=False,
                              find_max_context=False, n_ctx=4096, n_gpu_layers=20, mmap=False,
                              engine_version=version)
        emb = next(t for t in est.model.weights.tensors if t.name == "token_embd.weight")
        return est.engine_view["model_buffer_bytes"], emb

    k_quant, emb = mb("Q4_K_M")
    assert emb.dtype in ("q4_K", "q6_K") and k_quant["CPU"] == emb.nbytes  # 32-byte rows, no padding
    assert k_quant["CUDA_Host"] > 0  # the CPU layers' matrices stay pinned
    legacy, emb0 = mb("Q4_0")
    assert emb0.dtype == "q4_0" and "CPU" not in legacy
    newer, _ = mb("Q4_K_M", "2026-08-01")
    assert "CPU" not in newer and newer["CUDA_Host"] == k_quant["CUDA_Host"] + k_quant["CPU"]


def test_hexagon_takes_only_the_matmuls_it_runs():
    """ggml-hexagon.cpp ggml_hexagon_supported_mul_mat(_id) of the 2025 guides' builds: Q4_0, Q8_0 and MXFP4 weights
    (repacked) and F16 ones; none of more than 16 x 1024 rows (the lm-head); F32 routers, K-quants refused. Norms and
    biases feed MUL / ADD, which it runs: they stay on the session. Before PR #18611 (SCALE) the attention sinks do
    not."""
    from oomkit.model.spec import TensorSpec

    def t(name, dtype, *shape):
        return TensorSpec(name=name, dtype=dtype, shape=shape, nbytes=0, layer=0)

    assert backends.htp_takes(t("blk.0.attn_q.weight", "q4_0", 2048, 2048)) == "REPACK"
    assert backends.htp_takes(t("blk.0.ffn_up_exps.weight", "mxfp4", 2880, 2880, 32)) == "REPACK"
    assert backends.htp_takes(t("blk.0.attn_q.weight", "f16", 2048, 2048)) == "plain"
    assert backends.htp_takes(t("blk.0.attn_q.weight", "q4_K", 2048, 2048)) is None
    assert backends.htp_takes(t("blk.0.ffn_gate_inp.weight", "f32", 2048, 64)) is None
    assert backends.htp_takes(t("output.weight", "q8_0", 2880, 201088)) is None
    assert backends.htp_takes(t("blk.0.ffn_up_exps.bias", "f32", 2880, 32)) == "plain"
    assert backends.htp_takes(t("blk.0.attn_norm.weight", "f32", 2048)) == "plain"
    sinks = t("blk.0.attn_sinks.weight", "f32", 64)
    assert backends.htp_takes(sinks, 6733) is None and backends.htp_takes(sinks) == "plain"


def test_hexagon_leaves_k_quants_on_the_cpu_and_says_so():
    """A Q4_K_M file on a Hexagon session: the HTP multiplies none of its q4_K / q6_K matrices
    (ggml_hexagon_supported_mul_mat), so select_weight_buft falls back to the CPU buffer for every one; only the f32
    norms stay on the session. A Q4_0 file keeps its matrices in HTP0-REPACK, and no warning is given."""
    from oomkit.engines.llamacpp.args import parse_args

    _, _, s = parse_args(["-m", "x.gguf", "--no-mmap", "-c", "8192", "-ngl", "99", "--device", "HTP0", "-fit", "off"],
                         program="llama-cli")
    dev = (Device(id="HTP0", name="Hexagon", memory_bytes=2048 * MiB),)

    def run(quant):
        return oomkit.estimate("meta-llama/Llama-3.2-1B-Instruct", "llama.cpp", quant=quant, devices=dev, settings=s,
                               find_max_context=False, engine_version="b6733", backend="hexagon")

    k = run("Q4_K_M")
    mats = [t for t in k.model.weights.tensors if t.layer is not None and len(t.shape) == 2]
    assert set(k.engine_view["model_buffer_bytes"]) == {"HTP0", "CPU"}
    assert k.engine_view["model_buffer_bytes"]["CPU"] >= sum(t.nbytes for t in mats)
    assert any(f"{len(mats)} of the offloaded layers' matrices" in w for w in k.warnings)
    q = run("Q4_0")
    assert "HTP0-REPACK" in q.engine_view["model_buffer_bytes"]
    assert not any("Hexagon NPU multiplies" in w for w in q.warnings)


# ---------------------------------------------------------------------------------------------------------
# The older graph (compute.py OLD_GRAPH_LAST_BUILD): CPU compute buffers printed by pinned older llama.cpp builds,
# run on this machine (their `main` / `llama-cli` built from the copies vendored by llama-cpp-python 0.2.74 =
# llama.cpp b228aba of 2024-05-12 and 0.3.9 = 8733e0c of spring 2025) on 2-layer synthetic Q4_0 files written with
# tests/groundtruth/synth.py's helpers, -b 512 -ub 512 -t 1; the builds are not kept, so the figures are recorded.
# The same CodeLlama-shaped file in the binding's build (0c1e57098) prints 105.51 MiB at -c 512.

OLDER_GRAPH = [
    # (n_ff, n_vocab, n_ctx, engine_version, printed CPU compute MiB)
    (11008, 32016, 512, "b2850", 70.53),  # b228aba; 8733e0c prints the same
    (11008, 32016, 2048, "b2850", 164.01),  # b228aba; 8733e0c the same
    (11008, 32016, 4096, "b2850", 296.01),  # b228aba
    (11008, 4096, 512, "b2850", 68.01),  # b228aba: the feed-forward phase above the attention one
    (32768, 4096, 512, "b2850", 153.01),  # b228aba
]


def _llama_file(tmp_path, n_ff, n_vocab):
    md = _Meta("llama").base(ctx=16384, n_embd=4096, n_layers=2, n_ff=n_ff, n_head=32, n_head_kv=32,
                             rms_eps=1e-5, rope_base=1000000.0, n_vocab=n_vocab)
    md.u32("rope.dimension_count", 128)
    ts = _embeddings(4096, n_vocab, tied=False)
    for i in range(2):
        ts += _attn_gqa(i, 4096, 4096, 4096) + _ffn_dense(i, 4096, n_ff)
    m = SynthModel(f"llama-ff{n_ff}-v{n_vocab}", "llama", "CodeLlama-7B shapes (codellama/CodeLlama-7b-hf)", n_vocab,
                   2, tuple(md.items), tuple(ts), tied_embeddings=False)
    return str(write_gguf(m, tmp_path / f"llama-ff{n_ff}-v{n_vocab}.gguf", "q4_0"))


@pytest.mark.parametrize("n_ff, n_vocab, n_ctx, version, printed", OLDER_GRAPH)
def test_older_graph_against_pinned_builds(tmp_path, n_ff, n_vocab, n_ctx, version, printed):
    e = oomkit.estimate(_llama_file(tmp_path, n_ff, n_vocab), "llama.cpp", find_max_context=False, fit=False,
                        backend="cpu", n_ctx=n_ctx, n_parallel=1, flash_attn="off", n_gpu_layers=0,
                        program="python", engine_version=version)
    # within the 0.01 MiB of small inputs (the positions) that oomkit's phases leave out where they stay alive
    assert abs(e.engine_view["compute_buffer_bytes"]["CPU"] / MiB - printed) <= 0.011


def test_sycl_offloaded_experts_with_a_layer_whose_up_and_gate_stay_on_the_device():
    """--fit's overflow pattern can leave only a layer's down experts on the CPU (llama_params_fit_impl's
    LAYER_FRACTION_DOWN, `blk.N.ffn_down.*=CPU`); on SYCL its replayed expert split copies only that weight
    (compute.host_experts_split_bytes), the up and gate products read their weights on the device."""
    from oomkit.engines.llamacpp import compute

    seen = []
    replay = compute.host_experts_split_bytes

    def watch(spec, ctx, placement, devices, s):
        seen.append(s.override_tensor)
        return replay(spec, ctx, placement, devices, s)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compute, "host_experts_split_bytes", watch)
        est = oomkit.estimate("qwen3:30b-a3b", "llama.cpp", gpu="Arc A770 8GB")
    assert any(p.endswith(r"\.ffn_down.*") for ot in seen for p, _ in ot)  # the case is reached
    assert est.engine_view["fit_n_ctx"] == 4096 and est.devices[0].id == "SYCL0" and est.devices[0].compute_bytes > 0


def test_sycl_before_gpt_oss_ops_keeps_the_expert_block_on_the_host():
    """Before PR #17826 ggml-sycl refuses gpt-oss's MXFP4 MUL_MAT_ID, ADD_ID and SWIGLU_OAI (supports_op at
    llama.cpp@96ac5a23) and, before PR #20190, FLASH_ATTN_EXT: at b7200 the experts and their biases load into
    CPU_Mapped, -fa auto resolves off and SYCL_Host holds the expert block's rows (issue #17643's log, in
    test_llamacpp_logs); from b7500 the experts are on SYCL0, and from b8400 -fa auto keeps flash attention."""
    def run(build, fa):
        return oomkit.estimate("openai/gpt-oss-20b", "llama.cpp", quant="MXFP4", backend="sycl", vram="256GiB",
                               find_max_context=False, fit=False, engine_version=build, n_ctx=4096,
                               n_gpu_layers=99, flash_attn=fa).engine_view
    old, new, fa_new = run("b7200", "auto"), run("b7500", "auto"), run("b8400", "auto")
    assert old["flash_attn"] is False and new["flash_attn"] is False and fa_new["flash_attn"] is True
    assert old["model_buffer_bytes"]["CPU_Mapped"] > 10_000 * MiB > new["model_buffer_bytes"]["CPU_Mapped"]
    # up, gate and SWIGLU_OAI rows (22.5 MiB each at -ub 512) above the inputs and the FFN input's copy, which takes
    # the embeddings' rows' place (the sliding-window layer 0's freed inputs are too small for it)
    grown = old["compute_buffer_bytes"]["SYCL_Host"] - new["compute_buffer_bytes"]["SYCL_Host"]
    assert 3 * 22.5 * MiB <= grown <= 3 * 22.5 * MiB + 0.1 * MiB


def test_metal_maps_each_part_of_a_split_gguf_apart():
    """load_tensors maps every gguf-split part on its own (src/llama-model.cpp: for each file idx,
    get_mapping_range over the part's tensors of the buffer, ggml_backend_dev_buffer_from_host_ptr), so a split
    model partly offloaded to Metal maps the offloaded layers' stretch of each part, and the output layer at the head
    of the first part without the CPU blocks behind it; one range over the whole model mapped 135,563 MiB."""
    kw = dict(quant="Q4_K_M", gpu="M3 Ultra 512GB", n_ctx=4096, find_max_context=False, fit=False)
    est = oomkit.estimate("Qwen/Qwen3-235B-A22B", "llama.cpp", n_gpu_layers=30, **kw)  # 94 blocks + output
    on_metal = [t for t in est.model.weights.tensors
                if (t.layer is not None and t.layer >= 94 - 29) or t.name in ("output.weight", "output_norm.weight")]
    tensor_bytes = sum(t.nbytes for t in on_metal)
    mapped = est.engine_view["model_buffer_bytes"]["MTL0_Mapped"]
    assert tensor_bytes <= mapped < tensor_bytes + (1 << 20)  # the parts' 32-byte padding only
    whole = oomkit.estimate("Qwen/Qwen3-235B-A22B", "llama.cpp", n_gpu_layers=-1, **kw)
    assert mapped < 0.33 * whole.engine_view["model_buffer_bytes"]["MTL0_Mapped"]


def test_metal_runs_flash_attention_of_mixed_cache_types_on_the_cpu():
    # ggml-metal-device.m supports_op (GGML_OP_FLASH_ATTN_EXT): K and V of different types are refused, so with
    # -fa on the scheduler runs the attention on the CPU, the layer's K / V views copied into the host's buffer
    def est(**kw):
        return oomkit.estimate("Qwen/Qwen3-8B", quant="Q4_K_M", gpu="M3 Max", find_max_context=False, n_ctx=32768,
                               **kw)
    same = est(flash_attn="on", cache_type_k="q8_0", cache_type_v="q8_0")
    mixed = est(flash_attn="on", cache_type_k="q5_1", cache_type_v="q8_0")
    host = lambda e: e.engine_view["compute_buffer_bytes"]["CPU"]  # noqa: E731
    assert host(mixed) > host(same) + 50 * MiB  # a layer's 32768-cell K (24 MiB) and V (34) views, Q and output rows
    assert any("different types on Metal" in w for w in mixed.warnings)
    # -fa auto: llama_context::resolve_fused_ops finds the attention on the CPU and turns flash attention off
    auto = est(flash_attn="auto", cache_type_k="q8_0", cache_type_v="f16")
    assert auto.engine_view["flash_attn"] is False and any(w.startswith("-fa auto") for w in auto.warnings)
    assert est(flash_attn="auto", cache_type_k="q8_0", cache_type_v="q8_0").engine_view["flash_attn"] is True


def test_dry_run_counts_the_cpu_buffer_blas_shares_twice():
    # ggml_gallocr_reserve_n_size reports one shared allocator under both the CPU and BLAS backends, and
    # llama_context::memory_breakdown (no_alloc) adds both: a Metal build (GGML_BLAS on by default on Apple)
    from oomkit.engines.llamacpp.fit import blas_shares_cpu_buffer
    from oomkit.engines.llamacpp.settings import LlamaCppSettings

    s = LlamaCppSettings()
    assert blas_shares_cpu_buffer((Device("MTL0"),), s)
    assert not blas_shares_cpu_buffer((Device("CUDA0"),), s)  # the CPU backend takes CUDA_Host: two buffers
    assert not blas_shares_cpu_buffer((), s)  # a CPU build without BLAS


def test_vulkan_reorders_prompt_graphs_from_pr_17475():
    """ggml_vk_graph_optimize (PR #15850) left a graph whose nodes mostly have more than 8 rows as it was, the
    worst-case pp graph among them, until PR #17475 (llama.cpp@96ac5a23 of 2025-11-23 still has the check)."""
    from oomkit.engines.llamacpp.compute import VK_PP_REORDER_BUILD, vk_reorders
    from oomkit.engines.llamacpp.kv import Context
    from oomkit.quant import ggml

    def ctx(build, ub):
        f16 = ggml.kv_cache_type("f16")
        return Context(4096, 4096, 1, False, ub, 2048, True, f16, f16, build)
    assert not vk_reorders(ctx(VK_PP_REORDER_BUILD - 1, 512)) and vk_reorders(ctx(VK_PP_REORDER_BUILD - 1, 8))
    assert vk_reorders(ctx(VK_PP_REORDER_BUILD, 512)) and not vk_reorders(ctx(6000, 8))
