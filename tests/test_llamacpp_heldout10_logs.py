"""A tenth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout10/, each with its
source), chosen for what the earlier sets had least of: Vulkan on integrated GPUs (an Intel Arrow Lake iGPU through
Mesa, an AMD Renoir iGPU), --no-kv-offload with two sequences on one unified stream, a q4_0 cache with its Hadamard
rotations (attn_rot) under n-gram speculation on a Blackwell card, and a vision projector's compute buffers on
Vulkan. ggml-org/llama.cpp#21608 (Qwen3.5-35B-A3B UD-Q2_K_XL, Intel ARL iGPU, b8770), #23321 (Qwen3-Coder-Next
-nkvo -np 2 -kvu, Renoir, b9205; and the same reporter's Qwen3.6-35B-A3B mmproj, with the tower's shape from #17751),
#27814 (Qwen3.8-27B UD-IQ3_XXS, q4_0 cache, RTX 5060 Ti, b10655). Read through oomkit with the log's own flags and
build, nothing tuned, by the held-out harness (tests/test_llamacpp_heldout_logs.py): KV, recurrent-state and output
buffers exact, compute within 10%; a figure oomkit misses stays a strict xfail with its measured error (the
fixture's known_miss). The files are publishers' mixes (unsloth UD), so no weights are checked.

As it stood (7 figures of 3 logs, no rule changed for them): KV exact in all 3 (the -nkvo cache on the host, the
q4_0 cache at 18 bytes a block of 32 over 192000 cells), the recurrent states exact in both hybrids that print them
(62.81, 149.62 MiB), output exact in all 3 (one row; two rows at -np 2). One compute buffer missed: the Arrow Lake
iGPU's Vulkan0 (493.00 against 574.02 MiB, 0.859; Vulkan_Host 72.00 against 72.03): at b8770 the worst-case graph's
512 logit rows (485.00 MiB, an output never freed) land above 89 MiB of live tensors. The qwen35moe graph replayed in
ggml_vk_graph_optimize's order (compute.vulkan_qwen35_device_bytes, which PR #17475 applies to pp graphs too) puts
them 46 MiB up: 531.02 (0.925); with its topk-MoE keep patterns 530.02 (the pinned binding's graph through a stand-in
Vulkan device with them prints the same); with the graph of b8770 itself, whose last layer takes out_ids' rows before
its residual (no t_h_nextn before PR #22673), 578.02 (1.007); with the mask's F32 input cast to F16 on the device
(llama-graph.cpp build_attn_inp_kv_impl's ggml_cast, whose F32 copy sits at the split's head) 574.02, exact, checked
now.

The projector (#23321's first log): clip's device buffer for the qwen3vl tower at its 1472 px warmup was already
exact (248.10 MiB); the CPU compute buffer printed beside it (24.93 MiB) is the warmup graph's inputs, which
ggml_backend_sched keeps on the CPU backend (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur: a tensor
flagged GGML_TENSOR_FLAG_INPUT goes to the last backend, "assumed CPU") while the device reads copies of them. oomkit
counted none of it on the host (0 -> 24.93 MiB: projector.clip_host_input_bytes, added to the host by
programs.with_projector when clip runs on a GPU)."""

import json

import pytest

import oomkit
from oomkit.engines.llamacpp.args import parse_args
from oomkit.engines.llamacpp.projector import clip_compute_bytes, clip_host_input_bytes
from oomkit.memory import Device
from tests.llamacpp_heldout import MiB, assert_cited_and_quoted, fixture_from, set_fixtures
from tests.test_llamacpp_heldout_logs import check, figures, held_out_estimate, params
from tests.test_llamacpp_projector import write_qwen_vl_mmproj

FIXTURES = set_fixtures("llamacpp_heldout10")


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_arrow_lake_vulkan_buffer_exact():
    """#21608's Vulkan0 (574.02 MiB printed at b8770) from the b8770 graph (out_ids' rows in the last layer) in
    ggml_vk_graph_optimize's order with its topk-MoE keep patterns and the mask's F32 input cast to F16 on the device
    (llama-graph.cpp build_attn_inp_kv_impl): exact (0.859 with the closed forms, 0.925 with the t_h_nextn graph,
    1.007 without the cast)."""
    fx = fixture_from(FIXTURES, "qwen3.5-35b-a3b-ud-q2kxl-intel-arl-igpu-vulkan")
    got = figures(fx, held_out_estimate(fx).engine_view)["compute"]["Vulkan0"]
    assert got == fx["printed"]["buffers"]["compute_mib"]["Vulkan0"], got


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_quoted(FIXTURES, 4, summed=True)


def _projector_meta(fx: dict) -> dict:
    h = fx["printed"]["hparams"]
    return {"clip.projector_type": h["projector"], "clip.has_vision_encoder": True,
            "clip.vision.image_size": 768, "clip.vision.patch_size": h["patch_size"],
            "clip.vision.embedding_length": h["n_embd"], "clip.vision.feed_forward_length": h["n_ff"],
            "clip.vision.attention.head_count": h["n_head"], "clip.vision.spatial_merge_size": h["n_merge"]}


def test_projector_buffers_on_vulkan():
    """clip's two warmup buffers of the qwen3vl tower on Vulkan0: the device's is the CPU-only peak (248.10 MiB, as
    before), the CPU's the graph inputs (the F32 image of 1472 x 1472 x 3 and the 4 x 8464 int32 M-RoPE positions:
    24.93 MiB, which oomkit did not count before)."""
    fx = fixture_from(FIXTURES, "qwen3.6-35b-a3b-mmproj")
    meta, printed = _projector_meta(fx), fx["printed"]["projector"]
    assert f"warmup with image size = {printed['warmup_px']} x {printed['warmup_px']}" in fx["quoted"]
    assert round(clip_compute_bytes(meta, True) / MiB, 2) == printed["Vulkan0"]
    assert round(clip_host_input_bytes(meta) / MiB, 2) == printed["CPU"]
    for line in (f"Vulkan0 compute buffer size =   {printed['Vulkan0']:.2f} MiB",
                 f"CPU compute buffer size =    {printed['CPU']:.2f} MiB"):
        assert line in fx["quoted"]


def test_projector_inputs_join_the_host_on_a_gpu(tmp_path):
    """Through the estimate: a Qwen3.6-35B-A3B run with a qwen3vl mmproj of the tower's shape on a Vulkan device adds
    the device buffer to the device and the inputs to the host; with --no-mmproj-offload clip runs on the CPU,
    whose one buffer already holds its inputs, so nothing more is added there."""
    fx = fixture_from(FIXTURES, "qwen3.6-35b-a3b-mmproj")
    h, printed = fx["printed"]["hparams"], fx["printed"]["projector"]
    mmproj = write_qwen_vl_mmproj(tmp_path / "mmproj.gguf", "qwen3vl_merger", e=h["n_embd"], f=h["n_ff"],
                                  h=h["n_head"], t=2048, patch=h["patch_size"], deepstack=False)
    dev = (Device(id="Vulkan0", name="AMD Radeon Graphics (RADV RENOIR)", memory_bytes=60416 * MiB,
                  free_bytes=59532 * MiB, integrated=True),)
    base = ["-c", "8192", "-np", "1", "-fa", "on", "--fit", "off"]

    def est(extra):
        _, _, s = parse_args(base + extra, "llama-server")
        return oomkit.estimate("qwen3.6-35b-a3b", "llama.cpp", quant="Q4_K_M", devices=dev, settings=s,
                               find_max_context=False, engine_version=fx["engine_version"])

    plain, with_mm = est([]), est(["--mmproj", str(mmproj)])
    host_added = with_mm.host.compute_bytes - plain.host.compute_bytes
    dev_added = with_mm.devices[0].compute_bytes - plain.devices[0].compute_bytes
    assert round(host_added / MiB, 2) == printed["CPU"]
    assert round(dev_added / MiB, 2) == printed["Vulkan0"]
    on_cpu = est(["--mmproj", str(mmproj), "--no-mmproj-offload"])
    assert round((on_cpu.host.compute_bytes - plain.host.compute_bytes) / MiB, 2) == printed["Vulkan0"]
