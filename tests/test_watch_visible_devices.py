"""`oomkit watch -- COMMAND`: CUDA_VISIBLE_DEVICES written in the command picks the GPUs whose headroom is shown, as
`oomkit check` reads it (hardware/visible.py through commands/_model_args.py ModelRequest.devices_seen /
hides_every_gpu): CUDA's rule (CUDA C++ Programming Guide, "CUDA Environment Variables": only the devices named
are visible, renumbered in the order given; -1 leaves none), llama.cpp on the CPU with none left (ggml-cuda.cu
ggml_cuda_info: no CUDA device), vLLM refused (torch: "RuntimeError: No CUDA GPUs are available"; fewer GPUs than
-tp: config/parallel.py ParallelConfig.__post_init__ picks the Ray backend).

The machine: two RTX 4090 as the fake NVML reports them, GPU 0 with 20,000 MiB free, GPU 1 with 3,000 MiB free.
"""

from __future__ import annotations

import pytest

from tests.hardware_fakes import MiB, oomkit_env, rtx4090, run_oomkit

LLAMA = ["llama-server", "-m", "llama3.1:8b", "-c", "32768", "-np", "1", "-fit", "off"]


@pytest.fixture
def env(tmp_path):
    return oomkit_env(tmp_path, {"gpus": [rtx4090(free=20000 * MiB, used=0),
                                          rtx4090(free=3000 * MiB, used=17000 * MiB)]})


def _rows(out: str) -> list[str]:
    return [line for line in out.splitlines() if "left for the KV cache" in line]


def test_the_headroom_is_on_the_gpu_the_command_names(env):
    r = run_oomkit("watch", "--once", "--", "CUDA_VISIBLE_DEVICES=1", *LLAMA, env=env)
    assert r.returncode == 0, r.stderr
    (row,) = _rows(r.stdout)  # one GPU seen (both, split, without the variable)
    # the 3,000 MiB free on GPU 1 hold less than the weights: no room for the KV cache
    assert "on CUDA1 (the engine's CUDA0)" in row and "WARNING: does not fit" in row
    both = run_oomkit("watch", "--once", "--", *LLAMA, env=env)
    assert [x.split(":")[0].rsplit(" ", 1)[-1] for x in _rows(both.stdout)] == ["CUDA0", "CUDA1"]


def test_every_gpu_hidden_is_a_cpu_run_for_llama_cpp(env):
    r = run_oomkit("watch", "--once", "--", "CUDA_VISIBLE_DEVICES=-1", *LLAMA, env=env)
    assert r.returncode == 0, r.stderr
    assert not _rows(r.stdout)
    assert "CUDA_VISIBLE_DEVICES=-1 leaves none of the detected GPUs visible: llama.cpp runs on the CPU" in r.stdout


@pytest.mark.parametrize("command, words", [
    (["CUDA_VISIBLE_DEVICES=-1", "vllm", "serve", "Qwen/Qwen3-8B"], "No CUDA GPUs are available"),
    (["CUDA_VISIBLE_DEVICES=1", "vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2"], "start workers on 2"),
])
def test_vllm_left_without_its_gpus_is_refused_in_one_line(env, command, words):
    r = run_oomkit("watch", "--once", "--", *command, env=env)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and words in lines[0], (r.returncode, r.stderr)
