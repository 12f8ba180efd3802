"""CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES written in a pasted engine command, applied by
the web API's check and plan (and the calculator page's "this machine" check) as the CLI applies them
(hardware/visible.py through commands/_model_args.py ModelRequest.devices_seen / hides_every_gpu).

The rule is CUDA's (CUDA C++ Programming Guide, "CUDA Environment Variables": only the devices named are visible,
renumbered in the order given; -1 leaves none) and the engines' (llama.cpp, ggml-cuda.cu ggml_cuda_info: no CUDA
device, the model runs on the CPU; vLLM: torch's "RuntimeError: No CUDA GPUs are available" at startup), as
tests/test_visible_devices.py checks it on the CLI; here the API's answer must be the CLI's, byte for byte.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from oomkit.web.app import create_app  # noqa: E402
from tests.sweep_harness import offline, run_cli  # noqa: E402, F401 (autouse: no network, a fresh cache)

GGUF = "llama-server -hf Qwen/Qwen3-8B-GGUF"
GPUS = "RTX 4090, RTX 3060 12GB"  # two different cards, so that the one kept shows


@pytest.fixture
def client():
    with TestClient(create_app()) as c:
        yield c


def _cli(*argv: str) -> dict:
    rc, out, err = run_cli(*argv)
    assert rc in (0, 1), err
    return json.loads(out)


def test_api_check_sees_the_gpu_the_command_names(client):
    got = client.get("/api/check", params={"command": f"CUDA_VISIBLE_DEVICES=1 {GGUF}", "gpu": GPUS})
    assert got.status_code == 200, got.text
    res = got.json()
    assert [(d["id"], d["name"]) for d in res["devices"]] == [("CUDA0", "NVIDIA GeForce RTX 3060 12GB")]
    assert res == _cli("check", "--json", "--gpu", GPUS, "--", "CUDA_VISIBLE_DEVICES=1", *GGUF.split())


def test_api_check_with_every_gpu_hidden_is_a_cpu_run_for_llama_cpp_and_refused_for_vllm(client):
    # a host of 64 GiB, all free (--ram), so that the two answers do not read this machine's RAM at two moments
    got = client.get("/api/check", params={"command": f"CUDA_VISIBLE_DEVICES=-1 {GGUF}", "gpu": GPUS,
                                           "ram": "64GiB"})
    assert got.status_code == 200, got.text
    res = got.json()
    assert res["hardware"] == "cpu" and "leaves none of the planned GPUs visible" in res["hardware_notes"][0]
    assert res == _cli("check", "--json", "--gpu", GPUS, "--ram", "64GiB", "--", "CUDA_VISIBLE_DEVICES=-1",
                       *GGUF.split())
    got = client.get("/api/check", params={"command": "CUDA_VISIBLE_DEVICES=-1 vllm serve Qwen/Qwen3-8B",
                                           "gpu": GPUS})
    assert 400 <= got.status_code < 500, got.text
    err = got.json()["error"]
    assert "\n" not in err and "No CUDA GPUs are available" in err


def test_api_plan_lays_the_model_on_the_visible_gpu(client):
    got = client.post("/api/plan", json={"command": f"CUDA_VISIBLE_DEVICES=1 {GGUF}", "gpu": GPUS})
    assert got.status_code == 200, got.text
    assert "RTX 3060 12GB" in got.text and "RTX 4090" not in got.text
    got = client.post("/api/plan", json={"command": f"CUDA_VISIBLE_DEVICES=-1 {GGUF}", "gpu": GPUS})
    assert 400 <= got.status_code < 500 and "leaves none of the planned GPUs" in got.json()["error"], got.text


@pytest.fixture
def two_detected(monkeypatch):
    """This machine as NVML would read two different NVIDIA cards (nvidia-smi's order: the PCI bus)."""
    from oomkit.hardware import detect as det

    gpus = [det.Gpu(0, "NVIDIA GeForce RTX 4090", "nvidia", 24564 << 20, 24000 << 20, 100 << 20, "nvml"),
            det.Gpu(1, "NVIDIA GeForce RTX 3090", "nvidia", 24576 << 20, 23000 << 20, 1100 << 20, "nvml")]
    monkeypatch.setattr(det, "nvml_gpus", lambda probe, processes=False: list(gpus))
    monkeypatch.setattr(det, "_amd_sysfs_cards", lambda probe: [])


def test_calculator_check_on_this_machine_sees_the_gpu_the_command_names(client, two_detected):
    """The calculator's "this machine" check (api.check_fit on the detected GPUs): the RTX 3090 alone, its 23000 MiB
    free, as `oomkit check` reads CUDA_VISIBLE_DEVICES=1."""
    got = client.get("/api/check", params={"command": f"CUDA_VISIBLE_DEVICES=1 {GGUF}"})
    res = got.json()
    assert [(d["name"], d["budget_bytes"]) for d in res["devices"]] == [("NVIDIA GeForce RTX 3090", 23000 << 20)]
    assert res == _cli("check", "--json", "--", "CUDA_VISIBLE_DEVICES=1", *GGUF.split())
    page = client.get("/", params={"command": f"CUDA_VISIBLE_DEVICES=1 {GGUF}", "here": "1"})
    assert page.status_code == 200, page.text
    assert "NVIDIA GeForce RTX 3090" in page.text and "NVIDIA GeForce RTX 4090" not in page.text


def test_api_fit_sizes_the_command_on_the_visible_gpu(client):
    """llama.cpp on the RTX 3060 (12 GB) alone, the card CUDA_VISIBLE_DEVICES=1 names, as `oomkit fit` sizes it."""
    got = client.post("/api/fit", json={"command": f"CUDA_VISIBLE_DEVICES=1 {GGUF} -c 65536", "gpu": GPUS})
    assert got.status_code == 200, got.text
    before = got.json()["fit"]["before"]
    assert [(d["id"], d["name"]) for d in before["devices"]] == [("CUDA0", "NVIDIA GeForce RTX 3060 12GB")]
    got = client.post("/api/fit", json={"command": f"CUDA_VISIBLE_DEVICES=-1 {GGUF}", "gpu": GPUS})
    assert 400 <= got.status_code < 500 and "leaves no GPU visible" in got.json()["error"], got.text
    got = client.post("/api/fit", json={"command": "CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B -tp 2",
                                        "gpu": GPUS})
    assert 400 <= got.status_code < 500 and "leaves 1 of the 2 planned GPUs" in got.json()["error"], got.text
