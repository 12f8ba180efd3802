"""What a llama.cpp process holds on the GPU beyond the buffers it prints, measured: nvidia-smi's used memory with
whole Llama-3.1-8B and Qwen3-8B GGUFs loaded on an H200 (tests/fixtures/llamacpp_cuda/h200_run1.json, "smi" rows:
used memory after the model load and with a context of 4096 and of 32768 tokens), less llama.cpp's CUDA0 model, KV
and compute buffers. That remainder (CUDA context, cuBLAS and the pools) is what oomkit adds per GPU as
GPU_RUNTIME_RESERVE (Ollama's 457 MiB, discover/types.go): on the H200 it is about 530 MiB, so oomkit's
reserve is 73 MiB short there, 0.05% of the card. Held to 100 MiB, so a reserve far from a real process fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from oomkit.engines.llamacpp import GPU_RUNTIME_RESERVE
from tests.groundtruth import llamacpp_run

MiB = 1 << 20
RUN = Path(__file__).parent / "fixtures" / "llamacpp_cuda" / "h200_run1.json"


def _readings():
    """(model, phase, nvidia-smi used MiB, llama.cpp's CUDA0 buffers MiB) per reading."""
    out = []
    for r in json.loads(RUN.read_text())["rows"]:
        if r["tag"] != "smi":
            continue
        model_log = "\n".join(r["log"][:r["log"].index("@@CTX 0")])
        model_mib = llamacpp_run.parse_log(model_log)["model_buffer_mib"]["CUDA0"]
        used = [int(m) for m in re.findall(r"@@SMI \w+ (\d+)", "\n".join(r["log"]))]
        out.append((r["key"], "model", used[0], model_mib))
        for i in range(len(used) - 1):
            ctx = llamacpp_run.context_log("\n".join(r["log"]) + "\n", i)
            p = llamacpp_run.parse_log(ctx)
            out.append((r["key"], f"context {i}", used[i + 1],
                        model_mib + p["kv_buffer_mib"]["CUDA0"] + p["compute_buffer_mib"]["CUDA0"]))
    return out


READINGS = _readings()


def test_six_readings_from_two_models():
    assert len(READINGS) == 6 and {k for k, *_ in READINGS} == {"llama-3.1-8b", "qwen3-8b"}


@pytest.mark.parametrize("key,phase,used,buffers", READINGS, ids=[f"{k}-{p}" for k, p, *_ in READINGS])
def test_runtime_reserve_is_what_a_process_holds_beside_its_buffers(key, phase, used, buffers):
    beside = used - buffers
    assert 520 <= beside <= 540, f"{key} {phase}: {beside:.1f} MiB beside llama.cpp's buffers"
    assert abs(beside - GPU_RUNTIME_RESERVE / MiB) <= 100
