"""A twentieth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout20/, each with
its page), read through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: gpt-oss-20b MXFP4 served by llama-server at
b8193 on an Apple M5 through Metal with the experts of its first 12 layers kept on the CPU (--n-cpu-moe 12) and
the file read without mmap (--no-mmap), four slots in one unified 32768-cell cache (ontouchstart/rabbit-holes'
start-server.log; the same repository's llama-completion log at b8164 is tests/fixtures/engine_logs/llamacpp_heldout9,
a different run); Qwen2.5-3B-Instruct Q4_K_M (a gguf-my-repo file) at b8179 on an RTX 3060 Laptop GPU through
Vulkan on Windows, 35 of 37 layers, 4 slots in 2048 cells (DzKriMo/Aigis' llama-server.log, the command from the
repository's own launch script); the same model as Unsloth quantized it at b8054 on an Apple M4 through Metal, 4
slots in 4096 cells (on1659/RadarCustomLLM_Game's llama-server.log); a Mistral-Nemo-Instruct-2407 fine-tune
(mradermacher's Q4_K_M) at b8133 on an RTX 5070 (CUDA, Windows), 40 of 41 layers, a q8_0 cache of 8192 cells over 4
slots with flash attention (Dahaka52/Nira-AI's logs/llama_server.log, the command from the repository's launcher and
config). Model, KV and output buffers exact; compute within 10%.

Before -> after (oomkit's figures recorded before any rule was looked at). 27 buffers: before 24 exact, 1 more
within 10%, 2 off; after 27 exact:
- gpt-oss-20b on the M5: MTL0 model 6095.70 -> 6095.68 MiB against 6095.68 printed: without the mapped file the
  weights go to Metal's own buffer type, whose get_alloc_size is ggml_nbytes at an alignment of 32 (ggml-metal.cpp
  ggml_backend_metal_buffer_type_get_alloc_size), not ggml-cuda's padded last row (the MXFP4 / q8_0 tensors' rows
  of 2880 are not a multiple of 512) at 128 (backends.vulkan_unpadded).
- gpt-oss-20b on the M5: CPU compute 77.27 -> 144.77 MiB against 144.77 printed (was 0.534): Metal has no host
  buffer type, so the CPU layers' experts take CPU_REPACK, which is not host memory; the scheduler offers a weight's
  op to a higher backend only from a host buffer, so ggml-metal's offload_op never sees the experts' products,
  which stay on the CPU with the expert block between them (up, gate and the SWIGLU_OAI rows, 3 x 22.5 MiB) above
  the graph inputs (compute.metal_repacked_moe_host, sharing the SYCL replay of sycl_refused_moe_host); from b7774
  the unread embeddings input (5.62 MiB) is one of those inputs.
- Qwen2.5-3B on the M4: MTL0 compute 304.75 -> 300.75 MiB against 300.75 printed (was 1.013): from b7057 ggml-metal
  sizes each FLASH_ATTN_EXT result with its padding, block mask and 32 workgroups' scratch (8.3 MiB here;
  compute_graphs.metal_fa_extra_bytes), which moves where ggml-alloc puts the blocks the reorder pulls up; the two
  heldout19 Metal runs (b8040, b10262) replay to the same figures with or without them.
- gpt-oss-20b: CPU 599.48, CPU_REPACK 4841.02, KV 768.00 + 24.00, output 3.07 and MTL0 compute 398.38 MiB exact
  before and after; --fit's projection (7286 MiB, 'no changes needed') and the kept 32768 cells too.
- Qwen2.5-3B on Vulkan: CPU_Mapped 337.51, Vulkan1 1740.74, KV CPU 4.00 + Vulkan1 68.00, Vulkan_Host output 2.32,
  Vulkan1 compute 300.75 and Vulkan_Host 12.01 MiB exact before and after; on the M4 CPU_Mapped 243.43,
  MTL0_Mapped 1834.82, KV 144.00, output 2.32 and CPU compute 16.01 MiB too.
- Mistral-Nemo on the RTX 5070: CPU_Mapped 525.62, CUDA0 6597.68, KV CPU 17.00 + CUDA0 663.00 (q8_0), CUDA_Host
  output 2.00, CUDA0 compute 266.00 and CUDA_Host 36.01 MiB exact before and after.

The stored issue threads are mined by the earlier sets; these four come from repositories' committed server logs
(found by their file names: llama-server.log, llama_server.log), whose commands the repositories' own launch
scripts give. Every file holds the types llama-quantize's own Q4_K_M mix gives, so the model buffers are counted:
the Qwen2.5-3B files 181 f32, 216 q4_K, 37 q6_K (token_embd as the tied output and the attn_v / ffn_down of the 18
use_more_bits layers), the Mistral-Nemo file 81 f32, 241 q4_K, 41 q6_K (output.weight and the 20 layers' attn_v /
ffn_down); gpt-oss-20b is ggml-org's own file. Searched and not used:
- committed server logs without buffer lines (newer builds print them only at -lv 4 and up) or without a build:
  racek256/Poseidon, Ijas14/InferBench, Izan-Sola/Lily (request lines only), b3rgundy/local-llama (a failed load),
  titanorionai/node.si64 (an argument error), MrSnowNB/nemoclaw-setup (Qwen3.5-35B-A3B on two of four RTX A6000:
  no build line), apollo-mg/Project-Apollo (aborted while loading, before the context), acdtrx/llama-runner
  (gemma-4-E4B Q8_0 by Unsloth with one bf16 tensor of unknown name, and a vision tower: left for a later set);
- already in tests/: ROCm/ROCm#4903 (Qwen3-Embedding-8B, heldout14), TOSUKUi/blog's Evo X2 post (heldout7: its ROCm
  and Vulkan Qwen3-0.6B runs), ontouchstart/rabbit-holes' llama-completion log (heldout9), HilbertraumAI's
  hardware logs;
- no buffer line, or none for this file: ontouchstart/rabbit-holes' docs/quicksort/llama.log (b8110's new llama-cli
  prints none), thebiss/llama-cpp-mkl-docker's performance notes (llama-bench tables only), a BestBox Vulkan
  validation report (b7725, Radeon 8060S: commands and speeds only);
- a build or model oomkit cannot name: thebiss/llama-cpp-mkl-docker notes/notes.md (Granite 3.0 1B-A400M Q8_0 on
  Vulkan through WSL's Dozen driver: the build is not printed and the notes span b3423 to b3989; the catalog has
  Granite 3.1's files, not 3.0's), an Ollama README serving 'Qwen3.8-27B' on two MI355X (not a llama.cpp build, nor
  a model in the catalog);
- a page whose repository the search could not name (so no URL to cite): a Docker Model Runner log of
  phi4-mini Q4_K_M over an RX 580 + RX 560 on Vulkan ('build_info: b1-e365e65', Vulkan1's compute allocation of
  455917568 bytes failing), a Windows CPU run of gemma-2-2b-it Q4_K_M at b7445 (4 slots, 8192 cells)."""

import json

import pytest

from oomkit.engines.llamacpp import backends, compute_graphs, galloc
from oomkit.model.resolve import resolve
from oomkit.units import round_up
from tests.llamacpp_heldout import assert_cited_and_quoted, fixture_from, mib, set_fixtures
from tests.test_llamacpp_heldout_logs import check, held_out_estimate, params

FIXTURES = set_fixtures("llamacpp_heldout20")
M5 = "gpt-oss-20b-mxfp4-apple-m5-metal-ncpumoe12"
M4 = "qwen2.5-3b-instruct-q4km-metal-m4"


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed (the two KV lines
    of the two caches added up)."""
    assert_cited_and_quoted(FIXTURES, 4, summed=True)


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_estimates_without_error(path):
    """Every fixture's run goes through oomkit's estimate with its own flags and build."""
    held_out_estimate(json.loads(path.read_text()))


def test_metal_without_mmap_takes_the_tensors_own_bytes():
    """--no-mmap on Metal: MTL0's model buffer is its tensors' ggml_nbytes at Metal's alignment of 32 (6095.68 MiB
    printed), not ggml-cuda's padded last row of a 2880-wide quantized row at 128 (6095.70)."""
    fx = fixture_from(FIXTURES, M5)
    v = held_out_estimate(fx).engine_view
    assert mib(v["model_buffer_bytes"]["MTL0"]) == 6095.68
    assert backends.METAL_ALIGNMENT == 32
    # the padded size the CUDA rule gives would print 6095.70: the rows of 2880 are what differ
    spec = resolve("openai/gpt-oss-20b", "MXFP4")
    expert = next(t for t in spec.weights.tensors if t.name == "blk.12.ffn_down_exps.weight")
    assert expert.shape[0] % 512 and round_up(expert.nbytes, 32) == expert.nbytes


def test_repacked_experts_run_their_block_on_the_cpu():
    """The CPU layers' experts sit in CPU_REPACK (no host buffer type beside Metal), which op offload passes over:
    the CPU compute buffer holds their expert block, 3 x 22.5 MiB above the graph inputs (144.77 MiB printed; 77.27
    without the block). The MTL0 split is unchanged (398.38)."""
    fx = fixture_from(FIXTURES, M5)
    v = held_out_estimate(fx).engine_view
    assert mib(v["compute_buffer_bytes"]["CPU"]) == 144.77
    assert mib(v["compute_buffer_bytes"]["MTL0"]) == 398.38
    assert round(v["compute_buffer_bytes"]["CPU"] / (1 << 20) - 3 * 22.5, 2) == 77.27


def test_fit_projection_is_the_printed_one():
    """--fit's dry run projects the MTL0 use the log prints ('projected to use 7286 MiB ... no changes needed')."""
    fx = fixture_from(FIXTURES, M5)
    v = held_out_estimate(fx).engine_view
    assert "projected to use 7286 MiB of device memory vs. 18185 MiB" in fx["quoted"]
    assert "projected to use 7286 MiB of device memory vs. 18185 MiB" in v["fit_log"]
    assert v["n_ctx"] == 32768


def test_metal_fa_result_takes_its_extra_bytes():
    """From b7057 a FLASH_ATTN_EXT result on Metal is sized with its K / V / mask padding (64 rows of each), its
    block mask (a byte per 8 tokens x 64 cells) and its scratch (32 workgroups x 32 tokens x n_head x (head_dim + 2)
    F32): Qwen2.5-3B's 16 heads of 128 over 4096 cells at a 512-token ubatch."""
    a = resolve("qwen2.5-3b-instruct", "Q4_K_M").trunk_layers[0].attention
    assert compute_graphs.metal_fa_extra_bytes(a, 512, 4096) == 64 * 3 * 1024 + 64 * 64 + 4 * 32 * 16 * 32 * 130
    assert compute_graphs.METAL_FA_EXTRA_BUILD == 7057


def test_metal_fa_extras_decide_the_m4_buffer():
    """The M4's MTL0 compute buffer (300.75 MiB printed: logits 296.75 + one 2048 x 512 F32 block) replayed with the
    FA results' extra bytes; without them the reorder's pulled-up rows land one block higher (304.75)."""
    fx = fixture_from(FIXTURES, M4)
    v = held_out_estimate(fx).engine_view
    assert mib(v["compute_buffer_bytes"]["MTL0"]) == 300.75
    spec = resolve("qwen2.5-3b-instruct", "Q4_K_M")
    for n_kv, printed in ((4096, 300.75), (0, 304.75)):
        n, nodes = compute_graphs.dense_metal_graph(spec, 512, 512, 4096 * 512 * 2, True, True, n_kv)
        assert mib(galloc.peak_bytes(n, nodes, 32)) == printed
