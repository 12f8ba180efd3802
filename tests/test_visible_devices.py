"""CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES applied to the planned devices (--gpu,
--vram) and the detected ones, as the engine command, its wrapper (`docker run -e`) or --env set them
(hardware/visible.py).

The rules and figures come from the runtimes and engines, not from oomkit:
- CUDA C++ Programming Guide, "CUDA Environment Variables": only the devices named are visible, enumerated in the
  order given ("2,1": device 0 is GPU 2); the list is read up to its first invalid index ("0,2,-1,1": GPUs 0 and 2);
  NVIDIA MPS docs 5.2.1: GPUs may be named by UUID ("GPU-...", or its first characters);
- ROCm (HIP environment variables): HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES, by the same rule, over what
  ROCR_VISIBLE_DEVICES left; an NVIDIA process does not read HIP's or ROCr's;
- vLLM and SGLang with no CUDA device: torch's "RuntimeError: No CUDA GPUs are available" at startup; vLLM with fewer
  visible GPUs than TP x PP x DP: config/parallel.py ParallelConfig.__post_init__ (0.10.1) picks the Ray backend
  ("Unable to load Ray" without it), no single-node launch;
- llama.cpp: ggml-cuda.cu ggml_cuda_info, cudaGetDeviceCount fails ("failed to initialize CUDA"), no CUDA device
  is registered and the model runs on the CPU;
- Ollama, docs/gpu.mdx "GPU Selection": "If you want to ignore the GPUs and force CPU usage, use an invalid GPU ID
  (e.g., "-1")" (CUDA_VISIBLE_DEVICES; ROCR_VISIBLE_DEVICES on AMD); its default context follows the total VRAM it
  sees (server/routes.go Serve: >= 47 GiB 262144, >= 23 GiB 32768, else 4096).
"""

from __future__ import annotations

import json

import pytest

from oomkit.hardware.visible import visible_devices
from oomkit.memory import Device
from tests.sweep_harness import offline, run_cli  # noqa: F401 (autouse: no network, a fresh cache)

M = "Qwen/Qwen3-8B"
GGUF = ["llama-server", "-hf", "Qwen/Qwen3-8B-GGUF"]
TWO = "RTX 4090, RTX 3090"  # two different cards, so that the order shows


def _refused(rc: int, err: str, *words: str) -> str:
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("oomkit: error:"), (rc, err)
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def _estimate(*argv: str) -> dict:
    rc, out, err = run_cli("estimate", "--json", *argv)
    assert rc == 0, err
    return json.loads(out)


def _gpus(est: dict) -> list[tuple[str, str]]:
    return [(d["id"], d["name"]) for d in est["devices"]]


def _devs(*sizes_gib: int, prefix: str = "CUDA") -> tuple[Device, ...]:
    return tuple(Device(id=f"{prefix}{i}", name=f"G{i}", memory_bytes=s << 30) for i, s in enumerate(sizes_gib))


# --- the runtime's rule ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, kept", [
    ("2,1", ["G2", "G1"]),  # CUDA's own example: device 0 is GPU 2
    ("0,2,-1,1", ["G0", "G2"]),  # CUDA's own example: read up to the invalid -1
    ("1", ["G1"]),
    ("", []),
    ("-1", []),
    ("3", []),  # no fourth GPU
])
def test_cuda_keeps_and_renumbers_the_named_devices_in_order(value, kept):
    out = visible_devices(_devs(24, 16, 12), {"CUDA_VISIBLE_DEVICES": value})
    assert [d.name for d in out] == kept
    assert [d.id for d in out] == [f"CUDA{i}" for i in range(len(kept))]


def test_planned_gpus_as_many_as_the_variable_names_past_them_are_those_it_shows():
    """--gpu "4x RTX 4090" with CUDA_VISIBLE_DEVICES=4,5,6,7 (vllm#13344's machine has eight): the four planned are
    the four it shows; with fewer indices than planned GPUs, CUDA's own rule (5 on two GPUs: none)."""
    notes: list[str] = []
    out = visible_devices(_devs(24, 16, 12, 8), {"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, warnings=notes)
    assert [d.name for d in out] == ["G0", "G1", "G2", "G3"] and "of a larger machine" in notes[0]
    assert visible_devices(_devs(24, 16), {"CUDA_VISIBLE_DEVICES": "5"}) == ()
    assert [d.name for d in visible_devices(_devs(24, 16, 12), {"CUDA_VISIBLE_DEVICES": "2,3"})] == ["G2"]


def test_a_list_cut_short_is_said_but_a_deliberate_none_is_not():
    notes: list[str] = []
    visible_devices(_devs(24, 16, 12), {"CUDA_VISIBLE_DEVICES": "0,2,-1,1"}, warnings=notes)
    assert len(notes) == 1 and "'-1'" in notes[0] and "CUDA0, CUDA2 of CUDA0-CUDA2" in notes[0]
    for value in ("", "-1"):
        quiet: list[str] = []
        assert visible_devices(_devs(24, 16), {"CUDA_VISIBLE_DEVICES": value}, warnings=quiet) == ()
        assert quiet == []


@pytest.mark.parametrize("value", ["GPU-8932f937", "0,GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
                                   "MIG-GPU-8932f937/1/0"])
def test_uuid_and_mig_forms_keep_the_devices_and_say_so(value):
    notes: list[str] = []
    out = visible_devices(_devs(24, 16), {"CUDA_VISIBLE_DEVICES": value}, warnings=notes)
    assert [d.name for d in out] == ["G0", "G1"]
    assert len(notes) == 1 and "cannot be matched to the planned devices" in notes[0]


def test_rocm_reads_rocr_then_hip_and_nvidia_reads_neither():
    amd = _devs(24, 20, 16, prefix="ROCm")
    assert [d.name for d in visible_devices(amd, {"ROCR_VISIBLE_DEVICES": "2,1", "HIP_VISIBLE_DEVICES": "1"})] \
        == ["G1"]
    assert [d.name for d in visible_devices(amd, {"CUDA_VISIBLE_DEVICES": "2"})] == ["G2"]  # HIP reads it too
    assert [d.id for d in visible_devices(amd, {"CUDA_VISIBLE_DEVICES": "2"})] == ["ROCm0"]
    # HIP_VISIBLE_DEVICES is read before CUDA_VISIBLE_DEVICES when both are set
    assert [d.name for d in visible_devices(amd, {"CUDA_VISIBLE_DEVICES": "2", "HIP_VISIBLE_DEVICES": "0"})] == ["G0"]
    nvidia = _devs(24, 16)
    assert visible_devices(nvidia, {"HIP_VISIBLE_DEVICES": "1", "ROCR_VISIBLE_DEVICES": "1"}) == nvidia


# --- each engine --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["5", "", "-1"])
def test_vllm_with_no_cuda_device_is_refused(value):
    rc, _, err = run_cli("check", "--gpu", TWO, "--", f"CUDA_VISIBLE_DEVICES={value}", "vllm", "serve", M)
    _refused(rc, err, "CUDA_VISIBLE_DEVICES", "No CUDA GPUs are available")


def test_sglang_with_no_cuda_device_is_refused():
    rc, _, err = run_cli("estimate", "--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=-1", "python", "-m",
                         "sglang.launch_server", "--model-path", M)
    _refused(rc, err, "SGLang", "No CUDA GPUs are available")


def test_vllm_sees_the_named_gpus_in_order():
    est = _estimate("--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=1,0", "vllm", "serve", M, "-tp", "2")
    assert _gpus(est) == [("CUDA0", "NVIDIA GeForce RTX 3090"), ("CUDA1", "NVIDIA GeForce RTX 4090")]
    one = _estimate("--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=1", "vllm", "serve", M)
    assert _gpus(one) == [("CUDA0", "NVIDIA GeForce RTX 3090")]


@pytest.mark.parametrize("command", [
    ["CUDA_VISIBLE_DEVICES=0", "vllm", "serve", M, "-tp", "2"],
    ["CUDA_VISIBLE_DEVICES=1", "python", "-m", "sglang.launch_server", "--model-path", M, "--tp", "2"],
])
def test_fewer_visible_gpus_than_the_parallel_size_is_refused(command):
    """One size given stands for every GPU elsewhere; a variable that hides the second GPU is not that."""
    rc, _, err = run_cli("check", "--gpu", TWO, "--", *command)
    _refused(rc, err, "leaves 1 of the 2 planned GPUs visible", "start workers on 2")


def test_the_wrapper_and_env_option_set_it_too():
    est = _estimate("--gpu", TWO, "--", "docker", "run", "--gpus", "all", "-e", "CUDA_VISIBLE_DEVICES=1",
                    "vllm/vllm-openai:v0.10.1", "--model", M)
    assert _gpus(est) == [("CUDA0", "NVIDIA GeForce RTX 3090")]
    est = _estimate("Qwen/Qwen3-8B-GGUF", "--gpu", TWO, "--env", "CUDA_VISIBLE_DEVICES=1")
    assert _gpus(est) == [("CUDA0", "NVIDIA GeForce RTX 3090")]


def test_this_shells_own_variable_is_not_applied_to_planned_gpus(monkeypatch):
    """os.environ is oomkit's shell, not surely the engine's: planned GPUs are planned as given."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    est = _estimate("--gpu", TWO, "--", "vllm", "serve", M, "-tp", "2")
    assert len(_gpus(est)) == 2


@pytest.mark.parametrize("value", ["", "-1", "5"])
def test_llama_cpp_with_no_cuda_device_runs_on_the_cpu(value):
    est = _estimate("--gpu", TWO, "--", f"CUDA_VISIBLE_DEVICES={value}", *GGUF)
    assert _gpus(est) == [] and est["host"]["weights_bytes"] == est["weights_bytes"]
    assert "runs on the CPU" in est["warnings"][0]
    rc, out, err = run_cli("check", "--json", "--gpu", TWO, "--", f"CUDA_VISIBLE_DEVICES={value}", *GGUF)
    assert rc in (0, 1), err
    assert json.loads(out)["hardware"] == "cpu"


def test_llama_cpp_splits_over_the_visible_gpus_in_their_order():
    est = _estimate("--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=1,0", *GGUF)
    assert _gpus(est) == [("CUDA0", "NVIDIA GeForce RTX 3090"), ("CUDA1", "NVIDIA GeForce RTX 4090")]
    rocm = _estimate("--gpu", "RX 7900 XTX, RX 7900 XT", "--", "ROCR_VISIBLE_DEVICES=1", "HIP_VISIBLE_DEVICES=0",
                     *GGUF)
    assert _gpus(rocm) == [("ROCm0", "AMD Radeon RX 7900 XT")]


@pytest.mark.parametrize("value, n_ctx", [
    (None, 40960),  # 48 GiB seen: 262144, cut to the model's 40960 tokens
    ("1", 32768),  # the RTX 3090 alone: 24 GiB
    ("-1", 4096),  # no GPU: the CPU's 4096
])
def test_ollama_default_context_follows_the_vram_it_sees(value, n_ctx):
    env = [] if value is None else ["--env", f"CUDA_VISIBLE_DEVICES={value}"]
    est = _estimate("qwen3:8b", "--engine", "ollama", "--gpu", TWO, *env)
    assert est["settings"]["num_ctx"] == n_ctx, est["settings"]
    cmd = [] if value is None else [f"CUDA_VISIBLE_DEVICES={value}"]
    est = _estimate("--gpu", TWO, "--", *cmd, "ollama", "serve", "\n", "ollama", "run", "qwen3:8b")
    assert est["settings"]["num_ctx"] == n_ctx, est["settings"]
    assert not any("given to `ollama run`" in w for w in est["warnings"])
    # in front of `ollama run` it is the client's: read as the server's, as its OLLAMA_* are, and said so
    est = _estimate("--gpu", TWO, "--", *cmd, "ollama", "run", "qwen3:8b")
    assert est["settings"]["num_ctx"] == n_ctx, est["settings"]
    assert any("given to `ollama run`" in w for w in est["warnings"]) == (value is not None)


# --- the detected GPUs ---------------------------------------------------------------------------------------


@pytest.fixture
def two_detected(monkeypatch):
    """This machine as NVML would read two different NVIDIA cards (nvidia-smi's order: the PCI bus)."""
    from oomkit.hardware import detect as det

    gpus = [det.Gpu(0, "NVIDIA GeForce RTX 4090", "nvidia", 24564 << 20, 24000 << 20, 100 << 20, "nvml"),
            det.Gpu(1, "NVIDIA GeForce RTX 3090", "nvidia", 24576 << 20, 23000 << 20, 1100 << 20, "nvml")]
    monkeypatch.setattr(det, "nvml_gpus", lambda probe, processes=False: list(gpus))
    monkeypatch.setattr(det, "_amd_sysfs_cards", lambda probe: [])


def test_the_detected_gpus_are_the_ones_the_engine_sees(two_detected):
    rc, out, err = run_cli("check", "--json", "--", "CUDA_VISIBLE_DEVICES=1", "vllm", "serve", M)
    assert rc in (0, 1), err
    res = json.loads(out)
    assert res["hardware"] == "detected"
    assert [(d["id"], d["name"], d["budget_bytes"]) for d in res["devices"]] == [
        ("CUDA0", "NVIDIA GeForce RTX 3090", 23000 << 20)]
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in n for n in res["hardware_notes"])  # two kinds of card


def test_no_detected_gpu_left(two_detected):
    rc, _, err = run_cli("check", "--", "CUDA_VISIBLE_DEVICES=-1", "vllm", "serve", M)
    _refused(rc, err, "none of the 2 detected GPUs", "No CUDA GPUs are available")
    rc, out, err = run_cli("check", "--json", "--", "CUDA_VISIBLE_DEVICES=-1", *GGUF)
    assert rc in (0, 1), err
    res = json.loads(out)
    assert res["hardware"] == "cpu" and "leaves none of the detected GPUs" in res["hardware_notes"][0]


@pytest.fixture
def none_detected(monkeypatch):
    """This machine without a GPU: check falls back to its reference card."""
    from oomkit.hardware import detect as det

    monkeypatch.setattr(det, "nvml_gpus", lambda probe, processes=False: [])
    monkeypatch.setattr(det, "_amd_sysfs_cards", lambda probe: [])
    monkeypatch.setattr(det, "nvidia_smi_gpus", lambda probe: [])


def test_check_on_a_machine_without_gpus_and_a_variable_that_leaves_none(none_detected):
    """check's reference card (no GPU found) is hidden by -1 as estimate's assumed GPU is: llama.cpp is checked
    against this machine's RAM (it was checked against the RTX 4090 reference card), vLLM refused; an index keeps
    the reference card."""
    rc, out, err = run_cli("check", "--json", "--", "CUDA_VISIBLE_DEVICES=-1", *GGUF)
    assert rc in (0, 1), err
    res = json.loads(out)
    assert res["hardware"] == "cpu" and "leaves none of the assumed GPUs" in res["hardware_notes"][0]
    rc, _, err = run_cli("check", "--", "CUDA_VISIBLE_DEVICES=-1", "vllm", "serve", M)
    _refused(rc, err, "CUDA_VISIBLE_DEVICES=-1 leaves no GPU visible", "No CUDA GPUs are available")
    rc, out, err = run_cli("check", "--json", "--", "CUDA_VISIBLE_DEVICES=0", *GGUF)
    assert rc in (0, 1), err
    assert json.loads(out)["hardware"] != "cpu"


def test_no_hardware_given_and_a_variable_that_leaves_no_gpu_of_any_count():
    """estimate without --gpu / --vram assumes one GPU of unknown size: -1 or an empty value leaves none of any
    count; an index is kept (the machine's count is not known)."""
    rc, _, err = run_cli("estimate", "--", "CUDA_VISIBLE_DEVICES=-1", "vllm", "serve", M)
    _refused(rc, err, "CUDA_VISIBLE_DEVICES=-1 leaves no GPU visible", "No CUDA GPUs are available")
    est = _estimate("--", "CUDA_VISIBLE_DEVICES=", *GGUF)
    assert _gpus(est) == [] and "leaves none of the assumed GPUs" in est["warnings"][0]
    assert len(_gpus(_estimate("--", "CUDA_VISIBLE_DEVICES=3", *GGUF))) == 1


def test_plan_lays_the_model_on_the_visible_gpus():
    rc, out, err = run_cli("plan", "--json", "--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=1", *GGUF)
    assert rc == 0, err
    assert "NVIDIA GeForce RTX 3090" in out and "RTX 4090" not in out
    rc, _, err = run_cli("plan", "--gpu", TWO, "--", "CUDA_VISIBLE_DEVICES=-1", *GGUF)
    _refused(rc, err, "leaves none of the planned GPUs visible", "check --cpu-only")


def test_fit_sizes_the_command_on_the_visible_gpus():
    """llama.cpp on the RTX 3060 (12 GB) alone, the card CUDA_VISIBLE_DEVICES=1 names."""
    gpus = "RTX 4090, RTX 3060 12GB"
    rc, out, err = run_cli("fit", "--json", "--gpu", gpus, "--", "CUDA_VISIBLE_DEVICES=1", *GGUF, "-c", "65536")
    assert rc in (0, 1), err
    before = json.loads(out)["fit"]["before"]
    assert [(d["id"], d["name"]) for d in before["devices"]] == [("CUDA0", "NVIDIA GeForce RTX 3060 12GB")]
    rc, _, err = run_cli("fit", "--gpu", gpus, "--", "CUDA_VISIBLE_DEVICES=-1", *GGUF)
    _refused(rc, err, "leaves no GPU visible", "check --cpu-only")
    rc, _, err = run_cli("fit", "--gpu", gpus, "--", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve", M, "-tp", "2")
    _refused(rc, err, "leaves 1 of the 2 planned GPUs visible")


@pytest.mark.parametrize("value", ["9" * 5000, "0\x1b[2J", "\u0661", "0," * 3000, "1\u2028"])
def test_a_hostile_value_is_answered_in_one_printable_line(value):
    """A 5,000-digit index (past int()'s digit limit), an ANSI escape, an Arabic-Indic one, a 6,000-character list,
    a line separator: no device index where CUDA reads ASCII digits; refused for vLLM in one printable line."""
    rc, _, err = run_cli("check", "--gpu", TWO, "--", f"CUDA_VISIBLE_DEVICES={value}", "vllm", "serve", M)
    if value.split(",")[0] == "0":  # the first entry is device 0: kept
        assert rc in (0, 1), err
        return
    line = _refused(rc, err, "CUDA_VISIBLE_DEVICES")
    assert line.isprintable() and len(line) < 400, line
