"""Ops a device's supports_op refuses, run on the CPU by ggml_backend_sched (sched_replay.Graph.refused / max_tensor):
the device capabilities that decide them and the scheduler's placement of such an op and its sources. The buffers
they give are checked against the logs: llama.cpp#14829 (tests/test_llamacpp_heldout13_logs.py, Metal without
simdgroup reduction) and ollama/ollama#16447 (tests/test_ollama_heldout4_logs.py, logits over Vulkan's
maxStorageBufferRange)."""

from __future__ import annotations

from oomkit.engines.llamacpp import compute
from oomkit.engines.llamacpp import sched_replay as sr
from oomkit.memory import Device
from oomkit.model.spec import Attention


def test_metal_simdgroup_reduction_by_device_name():
    """The macOS VM's GPU (GitHub Actions runners) reports MTLGPUFamilyCommon3 alone: 'simdgroup reduction support
    = false' (llama.cpp#8617); Apple silicon is Apple7 or later."""
    assert not compute.metal_simdgroup_reduction(Device(id="MTL0", name="Apple Paravirtual device"))
    assert compute.metal_simdgroup_reduction(Device(id="MTL0", name="Apple M1"))


def test_vulkan_storage_range_by_driver_name():
    """Intel's Windows driver (its "(TM)" names) reports maxStorageBufferRange 1073741820 on Arc
    (KhronosGroup/Vulkan-Profiles#621); Mesa's names, and other vendors', get no limit here."""
    assert compute.vulkan_storage_range(Device(id="Vulkan0", name="Intel(R) Arc(TM) Graphics")) == 1073741820
    assert compute.vulkan_storage_range(Device(id="Vulkan0", name="Intel(R) Arc(tm) Graphics (MTL)")) == 0
    assert compute.vulkan_storage_range(Device(id="Vulkan0", name="AMD Radeon RX 7900 XTX")) == 0


def _tiny(refused: frozenset[str], host_reads_device: bool, max_tensor: int = 0):
    """x = rows (an input); y = MUL_MAT(a 4 KiB quantized weight on the device, x), 16 KiB of F32; z = MUL(y, a norm
    weight on the device)."""
    g = sr.Graph()
    x = g.input((64, 32))
    w = g.weight((64, 128), sr.DEVICE, size=4096)
    y = g.op("MUL_MAT", (128, 32), w, x)
    z = g.expand(g.op("MUL", y.ne, y, g.weight((128,), sr.DEVICE)))
    g.refused, g.host_reads_device, g.max_tensor = refused, host_reads_device, max_tensor
    return g, w, y, z


def test_refused_product_on_a_host_memory_device_reads_the_weight_in_place():
    """Metal: ggml_backend_sched_backend_from_buffer gives the product to the CPU, whose supports_buft takes Metal's
    host buffer type: no copy of the weight; the MUL by a device weight goes back to the device, with a copy of y."""
    g, w, y, z = _tiny(frozenset({"MUL_MAT"}), True)
    splits, copies = sr.split_graph(g)
    assert (y.backend, z.backend) == (sr.HOST, sr.DEVICE)
    assert [b for b, _, _ in splits] == [sr.HOST, sr.DEVICE]
    assert [(c.backend, c.nbytes) for c in copies.values()] == [(sr.DEVICE, y.nbytes)]


def test_product_refused_for_its_size_copies_the_device_weight_in():
    """Vulkan: no backend takes the op and the weight's buffer (-1 in pass 1); the expansions skip the device and
    pass 3 gives it to the CPU, which copies the weight in (its bytes, the size given). The limit (ggml-vulkan's
    tensor_size_supported) reads the result and every source: the MUL of y is refused too, its weight copied."""
    g, w, y, z = _tiny(frozenset(), False, max_tensor=128 * 32 * 4 - 1)
    assert g.refuses(y) and g.refuses(z)
    _, copies = sr.split_graph(g)
    assert (y.backend, z.backend) == (sr.HOST, sr.HOST)
    assert [c.nbytes for c in copies.values() if c.backend == sr.HOST] == [w.nbytes, 128 * 4]  # and the norm's


def test_metal_simdgroup_mm_by_device_name():
    """has_simdgroup_mm is supportsFamily MTLGPUFamilyApple7; the macOS VM's GPU reports MTLGPUFamilyCommon3 alone
    (llama.cpp#8617), so ggml-metal's supports_op refuses its FLASH_ATTN_EXT (`return has_simdgroup_mm;`)."""
    assert not compute.metal_simdgroup_mm(Device(id="MTL0", name="Apple Paravirtual device"))
    assert compute.metal_simdgroup_mm(Device(id="MTL0", name="Apple M1"))


def _qwen3_8b(gpu: str, **kw):
    import oomkit
    return oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", gpu=gpu, find_max_context=False,
                           n_ctx=4096, **kw)


def test_fa_auto_resolves_off_on_a_metal_device_without_simdgroup_mm():
    """Against the source rule, no printed log: llama_context's -fa auto check (llama-context.cpp, from PR #15434,
    ERAS fa_auto) reserves a one-token graph with flash attention and finds each layer's FLASH_ATTN_EXT on the CPU
    (ggml-metal refuses it without simdgroup matrix multiplication) while the layer's KV cache is on MTL0: "Flash
    Attention was auto, set to disabled". On Apple silicon (Apple7 and later) it stays on; -fa on keeps it on (the
    op then runs on the CPU); builds before -fa auto have it off by default."""
    auto = _qwen3_8b("Apple Paravirtual device")
    assert auto.engine_view["flash_attn"] is False
    assert any(w.startswith("-fa auto") and "simdgroup matrix multiplication" in w for w in auto.warnings)
    assert _qwen3_8b("M1").engine_view["flash_attn"] is True
    forced = _qwen3_8b("Apple Paravirtual device", flash_attn="on")
    assert forced.engine_view["flash_attn"] is True
    assert any("simdgroup matrix multiplication): with -fa on" in w for w in forced.warnings)
    assert _qwen3_8b("Apple Paravirtual device", engine_version="b6300").engine_view["flash_attn"] is False


def _cuda_ctx(type_k: str, type_v: str, build: int):
    from oomkit.engines.llamacpp.kv import Context
    from oomkit.quant import ggml
    return Context(n_ctx=8192, n_ctx_seq=8192, n_seq_max=1, kv_unified=True, n_ubatch=512, n_batch=2048,
                   flash_attn=True, type_k=ggml.type_by_name(type_k), type_v=ggml.type_by_name(type_v), build=build)


def test_cuda_fa_refuses_mixed_and_q5_caches_in_default_builds_before_pr_28079():
    """ggml_cuda_get_best_fattn_kernel from PR #15454 until PR #28079, GGML_CUDA_FA_ALL_QUANTS off: K and V of
    different types -> BEST_FATTN_KERNEL_NONE (llama.cpp#27109, PR #27150: "If -ctk and -ctv are different types,
    CUDA turns flash attention off"), q4_1 / q5_0 / q5_1 unsupported (llama.cpp#28455 at b10819: "-fa on -ctk q5_1
    -ctv q5_1 ... the scheduler trace assigned FLASH_ATTN to CPU"). The reference tree (NEWEST) has PR #28079."""
    from oomkit.engines.llamacpp.settings import NEWEST, build_number
    heads = Attention(n_heads=32, n_kv_heads=8, head_dim_k=128, head_dim_v=128)
    first, newest = compute.CUDA_FA_QUANTS_GATED[0], build_number(NEWEST)
    for build in (first, 8000):
        assert not compute.cuda_fa_supported(heads, _cuda_ctx("q8_0", "f16", build))
        assert not compute.cuda_fa_supported(heads, _cuda_ctx("q5_1", "q5_1", build))
        assert compute.cuda_fa_supported(heads, _cuda_ctx("q8_0", "q8_0", build))
        assert compute.cuda_fa_supported(heads, _cuda_ctx("q8_0", "q4_0", build))
    for build in (first - 1, newest):
        assert compute.cuda_fa_supported(heads, _cuda_ctx("q8_0", "f16", build))
        assert compute.cuda_fa_supported(heads, _cuda_ctx("q5_1", "q5_1", build))


def test_fa_auto_resolves_off_for_a_q8_0_k_cache_beside_an_f16_v_on_cuda():
    """-ctk q8_0 alone (V F16, so -fa auto is not forced on): llama_context's check finds FLASH_ATTN_EXT on the CPU
    ("layer 0 is assigned to device CUDA0 but the Flash Attention tensor is assigned to device CPU") and turns it
    off in the gated builds; the reference tree keeps it on. Against the source rule, no printed log."""
    def fa(version, k="q8_0", v="f16"):
        return _qwen3_8b("RTX 4090", engine_version=version, cache_type_k=k, cache_type_v=v, fit=False) \
            .engine_view["flash_attn"]
    assert fa("b8000") is False
    assert fa("b8000", v="q8_0") is True
    assert fa("b9999") is True
