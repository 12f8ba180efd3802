"""A nineteenth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout19/, each with
its page), read through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: Qwen3-14B Q8_0 with no layer offloaded on a
two-GPU ROCm machine (Radeon RX 7900 GRE + RX Vega) at b5898 (ROCm/ROCm#5104, the run of llama.cpp #14696), and
Qwen2.5-0.5B Q4_K_M as Qwen publishes it, fully offloaded to an Apple M4 through Metal (gollek's recorded test run,
mid-February 2026). Model, KV and output buffers exact; compute within 10%.

Before -> after (oomkit's figures recorded before any rule was looked at). 10 buffers: 7 exact, 1 within 1%, 2 off;
no rule changed, so the same after:
- #5104, b5898, llama-cli with no flags (4096 cells, -ngl 0 at this build): CPU_Mapped 14965.61, CPU KV 640.00,
  output 0.58, ROCm0 compute 1094.99 and ROCm_Host 18.01 MiB, all exact: the 512-token batch's big products go to
  ROCm0 (weights in host memory, op offload) with the KV cache and every layer left on the CPU.
- gollek on Metal, 512 cells, flash attention auto -> on: MTL0 KV 6.00, output 0.58 and CPU compute 4.51 exact;
  MTL0 compute 298.50 against 300.25 printed (0.994: the 296.75 MiB of logits and one 896 x 512 F32 block, where
  ggml-alloc kept two); the model buffers are off, a strict xfail: the file Qwen publishes carries its own
  output.weight (291 tensors), so token_embd is q5_0 on the CPU (89.26 MiB) and the Metal buffer spans the whole
  462.96 MiB file, while oomkit's catalog reads the tied model as a file without it (token_embd quantized as the
  output, q8_0, 137.94 MiB; Metal range 373.71 MiB). That is the file's shape, not an engine rule.

The set is smaller than asked: the stored issue threads mostly keep the metadata dump of each turn, not the buffer
lines, and the Metal, ROCm, Vulkan and SYCL threads that do print them are cited by earlier sets. Searched and not
used:
- already in tests/ (cited, or searched by an earlier set): #13545, #11044, #5206, #22585, #22053, #24476, #11337,
  #12728, #18160, #11598, #14086, #9472, #6943, #12336, PR #3078, PR #16634, PR #26038, intel/ipex-llm#13130,
  LostRuins/koboldcpp#1805, GPUOpen-Drivers/AMDVLK#413, YellowRoseCx/koboldcpp-rocm#98;
- no buffer line in the stored excerpt: abetlen/llama-cpp-python#948 (WizardCoder-34B on Metal at b1550: metadata
  only), #3414, #2678, #3606 (a b13xx-era Metal log: 'ggml_metal_add_buffer' lines, no build);
- a log without its build or its file: a ROCm gfx906 Qwen3-8B soak note (model 4455.34, KV 324.00, compute
  304.75 MiB; neither the build nor the context printed), a Qwen3-32B Q4_K_M ROCm run through llama-cpp-python
  (18423.65 / 4096.00 / 2136.01 MiB; build not printed), an August-2026 blog's Qwen3-8B UD-Q4_K_XL on an M4 (its
  model lines print 0.00 MiB; build not printed);
- not a mainline llama.cpp build: ik_llama.cpp threads, Ollama runners."""

import json

import pytest

from tests.llamacpp_heldout import assert_cited_and_quoted, fixture_from, mib, set_fixtures
from tests.test_llamacpp_heldout_logs import check, held_out_estimate, params

FIXTURES = set_fixtures("llamacpp_heldout19")


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed."""
    assert_cited_and_quoted(FIXTURES, 2)


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

