"""A nineteenth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout19/, each with
its page), read through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: Qwen3-14B Q8_0 with no layer offloaded on a
two-GPU ROCm machine (Radeon RX 7900 GRE + RX Vega) at b5898 (ROCm/ROCm#5104, the run of llama.cpp #14696),
Qwen2.5-0.5B Q4_K_M as Qwen publishes it, fully offloaded to an Apple M4 through Metal (gollek's recorded test run,
mid-February 2026), Qwen3-8B UD-Q4_K_XL on an M4 Mac mini through llama-completion (a blog post's log, early
August 2026), and a Qwen2.5-7B-shaped F16 fine-tune on an Intel Arc A770 through SYCL at b7300 (the XAIGPUARC
README). Model, KV and output buffers exact; compute within 10%.

Before -> after (oomkit's figures recorded before any rule was looked at). 20 buffers: before 16 exact, 1 more within
1%, 1 more within 10%, 2 off; after 18 exact, 2 off (a strict xfail: the file's shape, not an engine rule):
- #5104, b5898, llama-cli with no flags (4096 cells, -ngl 0 at this build): CPU_Mapped 14965.61, CPU KV 640.00,
  output 0.58, ROCm0 compute 1094.99 and ROCm_Host 18.01 MiB, all exact before and after: the 512-token batch's big
  products go to ROCm0 (weights in host memory, op offload) with the KV cache and every layer left on the CPU.
- gollek on Metal, 512 cells, flash attention auto -> on: MTL0 KV 6.00, output 0.58 and CPU compute 4.51 exact;
  MTL0 compute 298.50 -> 300.25 against 300.25 printed (was 0.994). The model buffers stay off, a strict xfail: the
  file Qwen publishes carries its own output.weight (291 tensors), so token_embd is q5_0 on the CPU (89.26 MiB) and
  the Metal buffer spans the whole 462.96 MiB file, while oomkit's catalog reads the tied model as a file without it
  (token_embd quantized as the output, q8_0, 137.94 MiB; Metal range 373.71 MiB).
- the blog's Qwen3-8B, 2048 cells, llama-completion (every token of the ubatch an output): KV 288.00 and output 0.58
  exact; MTL0 compute 304.75 -> 312.75 against 312.75 printed (was 0.974).
- XAIGPUARC on SYCL, b7300, llama-cli -ngl -1 (4096 cells, flash attention auto -> disabled: the SYCL device refuses
  FLASH_ATTN_EXT): CPU_Mapped 1039.50 and SYCL0 13486.77, KV 224.00, output 0.58, SYCL0 compute 304.00 and
  SYCL_Host 15.01 MiB, all exact before and after.
Both Metal compute figures are one hidden-state block (896 x 512, 4096 x 512 F32) above the logits more than oomkit
had: ggml-metal's graph_optimize (from PR #15929, b6460) reorders each Metal split before ggml-alloc places it and
pulls the last layer's GET_ROWS of the residual up beside the attention, so the final norm lands one block higher
and the logits above it (compute_graphs.metal_graph_optimize / dense_metal_graph, compute.metal_dense_device_bytes).

Four logs, three of them from repositories' own notes and a blog: the stored issue threads mostly keep the metadata dump of
each turn, not the buffer lines, and the Metal, ROCm, Vulkan and SYCL threads that do print them are cited by earlier
sets. Searched and not used:
- already in tests/ (cited, or searched by an earlier set): #13545, #11044, #5206, #22585, #22053, #24476, #11337,
  #12728, #18160, #11598, #14086, #9472, #6943, #12336, PR #3078, PR #16634, PR #26038, intel/ipex-llm#13130,
  LostRuins/koboldcpp#1805, GPUOpen-Drivers/AMDVLK#413, YellowRoseCx/koboldcpp-rocm#98;
- no buffer line in the stored excerpt: abetlen/llama-cpp-python#948 (WizardCoder-34B on Metal at b1550: metadata
  only), #3414, #2678;
- a log without its build, its command or its file: #3606 (2023 Metal 'ggml_metal_add_buffer' lines), a ROCm
  gfx906 Qwen3-8B soak note (model 4455.34, KV 324.00, compute 304.75 MiB; neither the build nor the context
  printed), a Qwen3-32B Q4_K_M ROCm run through llama-cpp-python (18423.65 / 4096.00 / 2136.01 MiB; no build);
- not a mainline llama.cpp build: ik_llama.cpp threads, Ollama runners."""

import json

import pytest

from oomkit.engines.llamacpp import compute_graphs, galloc
from oomkit.model.resolve import resolve
from tests.llamacpp_heldout import assert_cited_and_quoted, fixture_from, mib, set_fixtures
from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, held_out_estimate, params

FIXTURES = set_fixtures("llamacpp_heldout19")


def _comma(path) -> bool:
    return bool(json.loads(path.read_text()).get("decimal_comma"))


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed."""
    assert_cited_and_checked(FIXTURES, 4)
    assert_cited_and_quoted([p for p in FIXTURES if not _comma(p)], 3)


@pytest.mark.parametrize("path", [p for p in FIXTURES if _comma(p)], ids=lambda p: p.stem)
def test_decimal_comma_log_is_quoted(path):
    """A log of a decimal-comma locale (the XAIGPUARC README's: '304,00 MiB') quotes each buffer figure it checks,
    as printed there: a device's model, KV and compute lines and the output line."""
    fx = json.loads(path.read_text())
    assert fx["source"].startswith("https://github.com/")
    b = fx["printed"]["buffers"]
    for key, what in (("model_mib", "model"), ("kv_mib", "KV"), ("compute_mib", "compute")):
        for dev, figure in b[key].items():
            assert f"{dev} {what} buffer size = {figure:8.2f} MiB".replace(".", ",") in fx["quoted"], (dev, what)
    assert f"output buffer size = {b['output_mib']:8.2f} MiB".replace(".", ",") in fx["quoted"]


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_estimates_without_error(path):
    """Every fixture's run goes through oomkit's estimate with its own flags and build."""
    held_out_estimate(json.loads(path.read_text()))


def test_no_layer_offloaded_keeps_the_cache_on_the_cpu():
    """#5104: -ngl 0 leaves every layer and the KV cache on the CPU, yet the batch's products run on ROCm0: its
    compute buffer (1094.99 MiB) holds the 40 x 4096 x 512 F32 attention scores of one layer (320 MiB) and more."""
    fx = fixture_from(FIXTURES, "qwen3-14b-q8_0-rocm")
    v = held_out_estimate(fx).engine_view
    assert {k for k, b in v["kv_buffer_bytes"].items() if b} == {"CPU"}
    assert mib(v["compute_buffer_bytes"]["ROCm0"]) == 1094.99
    assert {k for k, b in v["model_buffer_bytes"].items() if b} == {"CPU_Mapped"}




def test_metal_reorder_pulls_the_residual_rows_up():
    """ggml-metal's graph_optimize (ggml_metal_graph_optimize_reorder): the last layer's GET_ROWS of the residual
    reads nothing the attention writes, so it is pulled up ahead of that layer's FLASH_ATTN_EXT, while the GET_ROWS
    of the attention output, which reads the output projection, stays after it."""
    spec = resolve("qwen2.5-0.5b-instruct", "Q4_K_M")
    g = compute_graphs.dense_metal_op_graph(spec, 512, 512, 512 * 512 * 2, mask_cast=True)
    order = compute_graphs.metal_graph_optimize(g, stores_safe=True)
    fa = max(i for i, op in enumerate(g.ops) if op == "FLASH_ATTN_EXT")
    rows = [i for i, op in enumerate(g.ops) if op == "GET_ROWS"]
    assert len(rows) == 2 and min(rows) > fa  # in build order both come after the last attention
    assert order.index(rows[1]) < order.index(fa) < order.index(rows[0])
    assert sorted(order) == list(range(len(g.nodes)))  # a permutation of the split


# the fixtures that quote a device's compute line and the KV cache's size line, not the whole set of buffer lines
QUOTED_ONLY = [p for p in FIXTURES if "device_compute_mib" in json.loads(p.read_text())["printed"]]


@pytest.mark.parametrize("path", QUOTED_ONLY, ids=lambda p: p.stem)
def test_quoted_device_compute_and_cache_size(path):
    """A log quoted in excerpts (the blog's): the device's compute line and the KV cache's total, each as printed
    and each equal to oomkit's to the 0.01 MiB."""
    fx = json.loads(path.read_text())
    p, v = fx["printed"], held_out_estimate(fx).engine_view
    for dev, figure in p["device_compute_mib"].items():
        assert f"{dev} compute buffer size = {figure:8.2f} MiB" in fx["quoted"], dev
        assert mib(v["compute_buffer_bytes"][dev]) == figure, (dev, mib(v["compute_buffer_bytes"][dev]))
    assert f"size = {p['kv_total_mib']:.2f} MiB" in fx["quoted"]
    assert mib(sum(v["kv_buffer_bytes"].values())) == p["kv_total_mib"]


def _cuda_dense_rows():
    """The H200 measurements (tests/fixtures/llamacpp_cuda) of the 4-layer Llama-3.1-8B and Qwen3-8B files fully
    offloaded with flash attention, an F16 cache and one sequence."""
    from tests.test_llamacpp_cuda_measured import ROWS  # the measured rows, this test alone

    out = []
    for p in ROWS:
        r = p.values[0]
        s = r["settings"]
        if r["key"] in ("llama-3.1-8b", "qwen3-8b") and r["n_layers"] and s["flash_attn"] == "auto" \
                and s["type_k"] == "f16" and s["n_seq_max"] == 1 and s["n_gpu_layers"] >= 99 \
                and s.get("offload_kqv") is not False and not s.get("no_alloc"):
            out.append(pytest.param(r, id=p.id))
    return out


def test_the_cuda_dense_rows_are_found():
    """The filter above keeps three rows of each model (tests/fixtures/llamacpp_cuda): a filter matching none
    would leave the test below with no case, passing silently."""
    rows = [p.values[0]["key"] for p in _cuda_dense_rows()]
    assert sorted(rows) == ["llama-3.1-8b"] * 3 + ["qwen3-8b"] * 3, rows


@pytest.mark.parametrize("r", _cuda_dense_rows())
def test_dense_graph_in_build_order_is_the_cuda_buffer(r):
    """dense_metal_op_graph's nodes in ggml_build_forward_expand's order (no reorder: ggml-cuda's graph_optimize
    leaves a dense graph alone), replayed at the CUDA buffer's 128-byte alignment, give the H200's CUDA0 compute
    buffer to the printed 0.01 MiB: the graph metal_graph_optimize reorders is llama.cpp's own."""
    from tests.test_llamacpp_cuda_measured import _spec, measured  # the measured rows' files, this test alone

    s = r["settings"]
    spec = _spec(r["key"], r["n_layers"])
    T = min(s["n_ctx"], s["n_ubatch"])
    g = compute_graphs.dense_metal_op_graph(spec, T, T, s["n_ctx"] * T * 2, mask_cast=False)
    nodes = compute_graphs._hoisted(g.nodes, g.inputs, [0])
    assert mib(galloc.peak_bytes(0, nodes, 128)) == measured(r)["compute_buffer_mib"]["CUDA0"]
