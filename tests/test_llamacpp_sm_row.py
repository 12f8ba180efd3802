"""-sm row from b9890 on: the load refused, as the public logs print it (held out; each cited verbatim below).

The engine: src/llama-model.cpp make_gpu_buft_list (llama.cpp 0c1e570 in .devsrc) throws "device %s does not support
split buffers" for every model device whose backend registry exports no "ggml_backend_split_buffer_type". The throw
and the removal of CUDA's split buffer type are both PR #24216 "CUDA: remove -sm row, refactor cuBLAS" (74976e1ae,
2026-07-06, master's 9890th commit: b9890); before it a device without a split buffer type silently took its default
one, and CUDA / HIP had one. SYCL keeps its own. --fit does not help: its dry run loads the model the same way
(common/fit.cpp catches the error and the real load throws it again).

Logs (lines kept verbatim):
- ggml-org/llama.cpp#27465 (theodufort, 2026-08-21), "version: 0.1.2-dev (build 10524, commit 9ee9fc04c)",
  3x RTX A4000 16GB, Qwen3.8-27B, `n-gpu-layers = 999` / `tensor-split = 1,1,1` / `split-mode = row`:
  "error loading model: device CUDA0 does not support split buffers"
- ggml-org/llama.cpp#27366 (DanielIshi, 2026-08-19), commit 9731ad3f29da96f588711a0d1eb08cf210721e16 (2026-08-18,
  b10497 by its count on master), 3x Tesla V100-SXM2-32GB, bartowski/Qwen3.8-27B-GGUF Q4_K_M:
  "$ llama-cli -m Qwen3.8-27B-Q4_K_M.gguf -dev CUDA1,CUDA2 -sm row -ngl 99 -c 512 -n 1 -p hallo"
  "llama_model_load: error loading model: device CUDA1 does not support split buffers"
- sudoingX/qwen38-mtp#24 (Jackwwg83, 2026-08-16), 2x RTX 5060 Ti 16GB, Qwen3.8-27B (build not stated; August 2026,
  after b9890): "`-sm row` refuses to load: `device CUDA0 does not support split buffers`."
- ggml-org/llama.cpp#25884 (Hercules888, 2026-07-19), "version: 9890 (74976e1ae)", Windows Vulkan, Vulkan0 AMD
  Radeon RX 9070 (16304 MiB) + Vulkan1 Intel Arc B570 (10074 MiB), "-dev Vulkan0,Vulkan1 ... --main-gpu 0
  --split-mode row --tensor-split 32,7", worked with b9888: "0.00.433.669 E llama_model_load: error loading model:
  device Vulkan0 does not support split buffers"
"""

from __future__ import annotations

import pytest

import oomkit
from oomkit.diagnose import diagnose
from oomkit.engines.llamacpp.settings import ERAS
from oomkit.errors import OomkitError

GiB = 1 << 30


def _estimate(vram, version, **kw):
    return oomkit.estimate("Qwen/Qwen3.8-27B", "llama.cpp", quant="Q4_K_M", vram=vram, engine_version=version,
                           find_max_context=False, fit=False, **kw)


def test_the_boundary_is_pr_24216():
    assert ERAS["sm_row_split_buffers_required"] == 9890


@pytest.mark.parametrize("case,vram,version,kw,device", [
    ("llama.cpp#27465", "16GiB,16GiB,16GiB", "b10524", dict(n_gpu_layers=999, tensor_split=(1.0, 1.0, 1.0)), "CUDA0"),
    ("llama.cpp#27366", "32GiB,32GiB,32GiB", "b10497", dict(device=("CUDA1", "CUDA2"), n_gpu_layers=99, n_ctx=512),
     "CUDA1"),
    ("qwen38-mtp#24", "16GiB,16GiB", "newest", {}, "CUDA0"),
])
def test_cuda_row_split_is_refused_from_b9890(case, vram, version, kw, device):
    with pytest.raises(OomkitError) as e:
        _estimate(vram, version, split_mode="row", **kw)
    msg = str(e.value)
    assert f"device {device} does not support split buffers" in msg, case
    assert "-sm tensor" in msg and "-sm layer" in msg  # the build's replacement, and the default oomkit sizes


def test_vulkan_row_split_refused_at_b9890_loaded_at_b9888():
    """llama.cpp#25884: the same command loaded with b9888 (no split buffer type on Vulkan: the default buffers)."""
    kw = dict(backend="vulkan", device=("Vulkan0", "Vulkan1"), split_mode="row", tensor_split=(32.0, 7.0),
              n_ctx=8192)
    with pytest.raises(OomkitError, match="device Vulkan0 does not support split buffers"):
        _estimate("16304MiB,10074MiB", "b9890", **kw)
    e = _estimate("16304MiB,10074MiB", "b9888", **kw)
    assert [u.id for u in e.devices] == ["Vulkan0", "Vulkan1"]
    # no split buffer type on Vulkan then either: the layers as -sm layer places them, said so
    assert any("no split buffers" in w for w in e.warnings)
    assert not any("_Split" in w for w in e.warnings)


def test_earlier_builds_keep_the_row_layout():
    """Before b9890 -sm row loads on CUDA: the same layers per device as -sm layer (the split buffers cut each
    layer's matrices over the devices; oomkit keeps each layer's weights on its device, with a warning)."""
    row = _estimate("24GiB,24GiB", "b9889", split_mode="row", n_ctx=8192)
    layer = _estimate("24GiB,24GiB", "b9889", split_mode="layer", n_ctx=8192)
    assert [u.weights_bytes for u in row.devices] == [u.weights_bytes for u in layer.devices]
    assert any("-sm row" in w for w in row.warnings)


def test_sycl_keeps_its_split_buffers_and_no_device_means_no_list():
    # ggml-sycl.cpp ggml_backend_sycl_reg_get_proc_address still answers "ggml_backend_split_buffer_type"
    _estimate("24GiB,24GiB", "newest", backend="sycl", split_mode="row", n_ctx=8192)
    # -dev none: model->devices is empty, make_gpu_buft_list never runs
    _estimate("24GiB", "newest", device=("none",), split_mode="row", n_ctx=8192)
    # one CUDA device is a model device too: refused
    with pytest.raises(OomkitError, match="device CUDA0 does not support split buffers"):
        _estimate("24GiB", "newest", split_mode="row", n_ctx=8192)


@pytest.mark.parametrize("log", [
    # llama.cpp#27366
    "$ llama-cli -m Qwen3.8-27B-Q4_K_M.gguf -dev CUDA1,CUDA2 -sm row -ngl 99 -c 512 -n 1 -p hallo\n"
    "llama_model_load: error loading model: device CUDA1 does not support split buffers\n"
    "llama_model_load_from_file_impl: failed to load model\n",
    # llama.cpp#27465
    "error loading model: device CUDA0 does not support split buffers\n",
    # llama.cpp#25884
    "0.00.433.669 E llama_model_load: error loading model: device Vulkan0 does not support split buffers\n",
])
def test_diagnose_reads_it_as_no_memory_problem(log):
    d = diagnose(log)
    assert d.stage == "not_oom"
    text = " ".join(d.to_dict()["causes"]) + " " + " ".join(str(f) for f in d.to_dict()["fixes"])
    assert "not a memory problem: -sm row not supported in this build" in text
    assert "-sm tensor" in text and "-sm layer" in text
