"""`--engine lmstudio MODEL` sizes what `lms load MODEL` loads: LM Studio runs an MLX model (an mlx-community repo,
a key or path naming MLX, an @4bit variant; engines/lms_keys.py) on its MLX engine (lmstudio-ai/mlx-engine, on
mlx-lm), and a GGUF on its llama.cpp runtime.

Was: --engine lmstudio was llama.cpp's alias only, so `estimate mlx-community/Qwen3-30B-A3B-4bit --engine lmstudio
--gpu "M3 Pro 36GB"` sized the repo as a guessed Q4_K_M GGUF (21.86 GiB, 23.47 GB, at llama-server's 40960-token
context), while `-- lms load mlx-community/Qwen3-30B-A3B-4bit` sized it on the mlx engine (16.90 GiB, 18.15 GB, at
LM Studio's 4096). The `lms load` route's figures are held to public numbers by tests/test_lmstudio_mlx.py and
tests/test_lmstudio_mlx_context_fit.py; here the two spellings are held to the same estimate.

Keys (tests/test_lmstudio_mlx.py's sources): mlx-community/Llama-3.2-3B-Instruct-4bit (lmstudio-bug-tracker#608),
lmstudio-community/Qwen3-8B-MLX-8bit (ARahim3/mlx-dspark#12), qwen/qwen3.6-27b@4bit (lmstudio-bug-tracker#2250).
"""

from __future__ import annotations

import json

import pytest

from oomkit.commands._model_args import parse_model_request
from tests.sweep_harness import offline, run_cli  # noqa: F401 (offline: an autouse fixture)

NOTE = "LM Studio runs this MLX model on its MLX engine"


def _estimate(*argv: str) -> dict:
    rc, out, err = run_cli("estimate", "--json", *argv)
    assert rc in (0, 1), err
    return json.loads(out)


def _same(a: dict, b: dict) -> None:
    assert (a["engine"], a["settings"], a["model"]) == (b["engine"], b["settings"], b["model"])
    assert [d["total_bytes"] for d in a["devices"]] == [d["total_bytes"] for d in b["devices"]]
    assert (a["total_bytes"], a["max_context"], a["fits"]) == (b["total_bytes"], b["max_context"], b["fits"])


@pytest.mark.parametrize("engine", ["lmstudio", "lm-studio", "LMStudio"])
def test_the_mlx_repo_of_the_brief_is_the_lms_load_estimate(engine):
    key, gpu = "mlx-community/Qwen3-30B-A3B-4bit", "M3 Pro 36GB"
    typed = _estimate(key, "--engine", engine, "--gpu", gpu)
    loaded = _estimate("--gpu", gpu, "--", "lms", "load", key)
    _same(typed, loaded)
    assert typed["engine"] == "mlx" and typed["settings"]["program"] == "lmstudio"
    assert typed["settings"]["context_length"] == 4096  # LM Studio's default, not llama-server's
    assert any(w.startswith(NOTE) for w in typed["warnings"]), typed["warnings"]
    assert any(w.startswith(NOTE) for w in loaded["warnings"]), loaded["warnings"]


@pytest.mark.parametrize(("key", "flags"), [
    ("mlx-community/Llama-3.2-3B-Instruct-4bit", ("-c", "8192")),
    ("lmstudio-community/Qwen3-8B-MLX-8bit", ("--context-length", "32768")),
    ("qwen/qwen3.6-27b@4bit", ("-c", "8192")),
])
def test_lms_load_flags_after_model_read_as_lms_load_reads_them(key, flags):
    typed = _estimate(key, "--engine", "lmstudio", "--gpu", "M4 Max 128GB", *flags)
    loaded = _estimate("--gpu", "M4 Max 128GB", "--", "lms", "load", key, *flags)
    _same(typed, loaded)
    assert typed["engine"] == "mlx"
    # oomkit's --parallel (both spellings take it as theirs): two predictions on mlx-engine's batched kit
    typed = _estimate(key, "--engine", "lmstudio", "--gpu", "M4 Max 128GB", "--parallel", "2", *flags)
    loaded = _estimate("--gpu", "M4 Max 128GB", "--parallel", "2", "--", "lms", "load", key, *flags)
    _same(typed, loaded)
    assert typed["engine"] == "mlx"


def test_ctx_replaces_lm_studio_s_default_context():
    key = "mlx-community/Llama-3.2-3B-Instruct-4bit"
    typed = _estimate(key, "--engine", "lmstudio", "--ctx", "8192", "--gpu", "M4 Max 128GB")
    loaded = _estimate("--gpu", "M4 Max 128GB", "--", "lms", "load", key, "-c", "8192")
    _same(typed, loaded)
    rc, _, err = run_cli("estimate", key, "--engine", "lmstudio", "-c", "2048", "--ctx", "8192")
    assert rc == 2 and err.startswith("oomkit: error: --ctx 8192") and "Traceback" not in err, err


def test_a_gguf_stays_on_llama_cpp():
    rc, out, err = run_cli("estimate", "--json", "Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--engine", "lmstudio",
                        "--gpu", "RTX 4090")
    assert rc in (0, 1), err
    e = json.loads(out)
    assert e["engine"] == "llama.cpp" and not any(w.startswith(NOTE) for w in e["warnings"])
    # a GGUF file is never MLX (lms_keys.py), whatever its folder is called
    req = parse_model_request(["some-mlx/Qwen3-8B-Q4_K_M.gguf", "--engine", "lmstudio", "-c", "8192"])
    assert (req.engine, req.settings.n_ctx, req.notes) == ("llama.cpp", 8192, ())
