"""engines/ollama/cuda_pool.py: the CUDA scratch pool Ollama counts in a GPU's "compute graph" from v0.12.4
(llama/patches/0022-ggml-No-alloc-mode.patch: ggml_backend_sched_get_attempted_buffer_size adds the pool that
ggml_backend_cuda_graph_reserve grew). Each figure is the vendored ggml's own expression evaluated by hand
(ggml-cuda/fattn-common.cuh launch_fattn, fattn.cu, mmq.cu/mmq.cuh of v0.12.4); the public log that needs the pool
is ollama/ollama#13372 (tests/test_ollama_new_engine.py test_qwen3_32b_graph_from_the_total)."""

from __future__ import annotations

import pytest

from oomkit.engines import ollama as ol
from oomkit.engines.ollama.cuda_pool import (
    cublas_attention_bytes,
    cuda_pool_bytes,
    fattn_meta_bytes,
    mmq_bytes,
)
from oomkit.hardware.catalog import with_facts
from oomkit.memory import Device
from oomkit.model.resolve import resolve

MiB, GiB = 1 << 20, 1 << 30


def test_flash_attention_meta_on_an_a800():
    """qwen3:32b (64 heads, 8 KV heads: ncols2 = 8; 512 tokens: ncols1 = 64 / 8) on 108 SMs, compute 8.0:
    ceil(512 / 8) x 64 / 8 = 512 tiles; 2 blocks a SM give waves of 216, three of them 79% full (>= 75%, and
    compute 8.0 is under Ada), so no stream-k: blocks = tiles, and dst_tmp_meta (float2 elements, the byte count
    passed as the element count) = 8 x 512 x 64 x (4 + 128) x 4 B = 132 MiB."""
    assert fattn_meta_bytes(512, 64, 8, 128, 108, (8, 0)) == 8 * 512 * 64 * (4 + 128) * 4 == 132 * MiB


def test_flash_attention_meta_on_ada_is_stream_k():
    """Compute 8.9+ always runs stream-k: blocks = 2 x SMs (an RTX 4090's 128: 256), not the 512 tiles."""
    assert fattn_meta_bytes(512, 64, 8, 128, 128, (8, 9)) == 8 * 256 * 64 * 132 * 4


def test_flash_attention_meta_without_grouped_heads():
    """32 heads, 32 KV heads: ncols2 = 1, ncols1 = 64; 8 x-tiles x 32 heads = 256 tiles on 108 SMs, 2 waves of 216
    59% full: stream-k, 216 blocks."""
    assert fattn_meta_bytes(512, 32, 32, 128, 108, (8, 0)) == 8 * 216 * 64 * 132 * 4


def test_mmq_scratch_of_the_widest_matmul():
    """ffn_down of qwen3:32b (25600 -> 5120) at 512 tokens: q8_1 rows 512 x 25600 x 36 / 32 + 128 x 144 B, and
    40 x 4 = 160 tiles of 128 x 128 that do not divide over 108 SMs: a stream-k fixup of 108 x 128 x 128 floats."""
    assert mmq_bytes(512, 25600, 5120, 108) == 512 * 25600 * 36 // 32 + 128 * 144 + 108 * 128 * 128 * 4
    assert mmq_bytes(512, 25600, 5120, 80) == 512 * 25600 * 36 // 32 + 128 * 144  # 160 % 80 == 0: no fixup


def test_pool_is_the_largest_scratch_in_2_mib_steps():
    spec = ol.ollama_gguf(resolve("qwen3:32b", "Q4_K_M"))
    assert cuda_pool_bytes(spec, 512, True, 108, (8, 0)) == 132 * MiB
    assert cuda_pool_bytes(spec, 512, False, 108, (8, 0)) == 22 * MiB  # MMQ alone: 20.83 MiB -> 22
    assert cuda_pool_bytes(spec, 512, True, 60, (7, 0)) == 0  # no mma kernels under compute 7.5


@pytest.mark.parametrize("name, want", [("NVIDIA A800-SXM4-80GB", (108, (8, 0))), ("NVIDIA A100 80GB PCIe", (108, (8, 0))),
                                        ("NVIDIA H100 PCIe", (114, (9, 0))), ("NVIDIA H100 80GB HBM3", (132, (9, 0))),
                                        ("NVIDIA GeForce RTX 3090 Ti", (84, (8, 6))),
                                        ("NVIDIA GeForce RTX 3090", (82, (8, 6))), ("NVIDIA L4", (58, (8, 9))),
                                        ("NVIDIA L40S", (142, (8, 9))), ("GPU", None)])
def test_sm_counts(name, want):
    """The SMs and compute capability the pool is sized by: the GPU catalog's, on the Device (catalog.with_facts)."""
    d = with_facts(Device(id="CUDA0", name=name))
    assert ((d.sm_count, d.compute_capability) if d.sm_count else None) == want


def test_no_pool_on_other_libraries_or_before_0_12_4():
    """ROCm and Vulkan GPUs, and v0.12.3 (no patch 0022), get no pool term."""
    spec = resolve("qwen3:32b", "Q4_K_M")
    dev = with_facts(Device(id="CUDA0", name="NVIDIA A800-SXM4-80GB", memory_bytes=80 * GiB, free_bytes=80 * GiB))

    def graph(**kw):
        est = ol.ENGINE.estimate(spec, (dev,), ol.OllamaSettings(num_ctx=16384, num_parallel=1, flash_attention="1", **kw))
        return next(v for k, v in est.engine_view["ollama_memory"]["compute graph"].items() if k != "CPU")

    with_pool = graph(engine_version="0.12.4")  # v0.12.5 ran qwen3 on the llama.cpp runner (no pool term)
    assert with_pool - graph(engine_version="0.12.4", library="vulkan") == 132 * MiB
    assert graph(engine_version="0.12.3") < with_pool - 100 * MiB


def test_quantized_cache_converted_to_f16_in_the_pool():
    """A q8_0 cache: launch_fattn converts the layer's K and V views to F16 in the pool before the kernel runs,
    2 B x 128 x 16384 cells x 8 KV heads = 32 MiB each, beside the 132 MiB meta buffer."""
    spec = ol.ollama_gguf(resolve("qwen3:32b", "Q4_K_M"))
    assert cuda_pool_bytes(spec, 512, True, 108, (8, 0), 16384, "q8_0") == 132 * MiB + 2 * 32 * MiB
    assert cuda_pool_bytes(spec, 512, True, 108, (8, 0), 16384, "f16") == 132 * MiB


def test_without_flash_attention_the_scores_copy_leads():
    """Flash attention off: KQV's batched cuBLAS converts the F32 scores to F16 in the pool (2 B x 16384 cells x
    512 tokens x 64 heads = 1 GiB) and writes an F16 temporary (2 B x 128 x 512 x 64 = 8 MiB), with the pointer
    arrays of cublasGemmBatchedEx for 64 heads over 8 KV heads (3 x 8 B x 64, in two 128 B-padded slots)."""
    spec = ol.ollama_gguf(resolve("qwen3:32b", "Q4_K_M"))
    want = 2 * 16384 * 512 * 64 + 2 * 128 * 512 * 64 + 1024 + 512
    assert cublas_attention_bytes(512, 64, 8, 128, 128, 16384) == want
    assert cuda_pool_bytes(spec, 512, False, 108, (8, 0), 16384) == 1024 * MiB + 10 * MiB  # 2 MiB steps


# ---------------------------------------------------------------------------------------------------------
# ROCm: the HIP build's legacy pool (GGML_HIP_NO_VMM) for Ollama's gpt-oss graph, v0.12.6-v0.12.11


def test_hip_legacy_pool_best_fit_and_look_ahead():
    """ggml_cuda_pool_leg: a request takes the smallest free buffer that holds it, else a new one of
    256 x ceil(int(1.05 x size) / 256) B; alloc_size() is the sum of the buffers ever made."""
    from oomkit.engines.ollama.cuda_pool import _LegacyPool

    p = _LegacyPool()
    a = p.alloc(2880 * 512 * 2)
    b = p.alloc(5120 * 512 * 2)
    assert (a, b) == (3096576, 5505024)
    p.release(a, b)
    assert p.alloc(4096 * 512 * 2) == b and p.alloc(2880 * 512 * 2) == a  # attn_out reuses both
    assert p.size == 3096576 + 5505024
    assert p.alloc(16 * MiB) == 17616128 and p.size == 26217728


def test_hip_tile_flash_attention_parallel_blocks():
    """fattn-tile.cuh on HIP, head size 64, 64 query heads on 8 KV heads: ncols2 8, 64 columns a block (8 tokens),
    the RDNA config's 128 threads and 64 x 64 K batches: 8 KiB of Q, 9 KiB of K/V, 8 KiB of KQ and 16 B of maxima
    in shared memory, two blocks in a compute unit's 64 KiB. 512 tokens give 64 x 8 = 512 tiles; at 40 compute
    units (80 blocks a wave) two parallel blocks fill 13 waves at 98% and three would take 20 waves: two. From 60
    compute units three do better."""
    from oomkit.engines.ollama.cuda_pool import _tile_parallel_blocks

    assert _tile_parallel_blocks(512, 64, 8, 32768, 40) == (2, 64)
    assert _tile_parallel_blocks(512, 64, 8, 16896, 40) == (2, 64)
    assert _tile_parallel_blocks(512, 64, 8, 32768, 60) == (3, 64)


def test_hip_rdna_dense_pool():
    """ollama.com's qwen3:1.7b (Q4_K_M, attn_v F16) at 512 tokens and 4096 cells on a 12-CU RDNA3 GPU: the tile
    kernel for head size 128 (256 threads, 33824 B of shared memory, one block a compute unit) does not split the
    cells, so the pool is the cuBLAS F16 copies: attn_q's 8808192 + 2 x 2202112 B, then ffn_gate's 26424320 B of
    weight = 37.8 MiB (Peuqui/AIfred-Intelligence's Radeon 780M: 52.0 + 37.8 = 89.8 MiB). RDNA4 keeps F32
    results (no dst_f16); under 64 columns the products take MMQ (None)."""
    from oomkit.engines.ollama.cuda_pool import _tile_parallel_blocks, hip_rdna_dense_pool_bytes
    from oomkit.engines.ollama.weights import ollama_gguf

    spec = ollama_gguf(resolve("qwen3:1.7b", "Q4_K_M"))
    assert _tile_parallel_blocks(512, 16, 8, 4096, 12, 128) == (1, 64)
    assert hip_rdna_dense_pool_bytes(spec, 512, 1, 4096, 12) == 8808192 + 2 * 2202112 + 26424320
    assert hip_rdna_dense_pool_bytes(spec, 512, 1, 4096, 12, rdna4=True) == 8808192 + 2202112 + 26424320
    assert hip_rdna_dense_pool_bytes(spec, 32, 1, 4096, 12) is None
    assert hip_rdna_dense_pool_bytes(spec, 512, 1, 4096, 0) is None


def test_hip_gptoss_pool():
    """gpt-oss:120b at 512 tokens, 4 output rows, 32768 / 16896 cells on 40 compute units: 3096576 + 5505024 B of
    BF16 conversions and 17616128 B of flash-attention scratch = 25.00 MiB; None for another model or without the
    compute units."""
    from oomkit.engines.ollama.cuda_pool import hip_gptoss_pool_bytes
    from oomkit.engines.ollama.weights import ollama_gguf

    spec = ollama_gguf(resolve("gpt-oss:120b", "MXFP4_MOE"))
    assert hip_gptoss_pool_bytes(spec, 512, 4, 32768, 16896, 40) == 26217728
    assert hip_gptoss_pool_bytes(spec, 512, 4, 32768, 16896, None) is None
    assert hip_gptoss_pool_bytes(resolve("qwen3:8b", "Q4_K_M"), 512, 4, 32768, 16896, 40) is None
