"""The Python API reads engine "lmstudio" as the CLI's --engine lmstudio does: an MLX model (an mlx-community repo,
a key or path naming MLX, an @4bit variant; engines/lms_keys.py) is what `lms load MODEL` loads, on LM Studio's MLX
engine (lmstudio-ai/mlx-engine, on mlx-lm) from its 4096-token default context, with the note that says so; a GGUF
stays on its llama.cpp runtime. Both go through estimate.lm_studio_load.

Was: `oomkit.estimate("mlx-community/Qwen3-30B-A3B-4bit", "lmstudio", gpu="M3 Pro 36GB")` sized the repo as a
guessed Q4_K_M GGUF on llama.cpp at llama-server's 40960-token context (21.86 GiB, 23.47 GB), where the CLI's
`estimate mlx-community/Qwen3-30B-A3B-4bit --engine lmstudio --gpu "M3 Pro 36GB"` gave the mlx engine's (16.90 GiB,
18.15 GB). The `lms load` route's figures are held to public numbers by tests/test_lmstudio_mlx.py and
tests/test_lmstudio_mlx_context_fit.py; here the API is held to the CLI's JSON for the same input, whole.

Keys (tests/test_lmstudio_mlx.py's sources): mlx-community/Llama-3.2-3B-Instruct-4bit (lmstudio-bug-tracker#608),
lmstudio-community/Qwen3-8B-MLX-8bit (ARahim3/mlx-dspark#12), qwen/qwen3.6-27b@4bit (lmstudio-bug-tracker#2250).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import oomkit
from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.errors import SettingsError
from oomkit.estimate import lm_studio_load
from oomkit.report import render

NOTE = "LM Studio runs this MLX model on its MLX engine"


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def _cli_json(*argv: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(["estimate", "--json", *argv])
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    assert rc in (0, 1), err.getvalue()
    return json.loads(out.getvalue())


def _api_json(*args, **kw) -> dict:
    return json.loads(render.to_json(oomkit.estimate(*args, **kw)))


@pytest.mark.parametrize("engine", ["lmstudio", "lm-studio", "LMStudio"])
def test_the_api_sizes_the_mlx_repo_as_the_cli_does(engine):
    key, gpu = "mlx-community/Qwen3-30B-A3B-4bit", "M3 Pro 36GB"
    api = _api_json(key, engine, gpu=gpu)
    assert api == _cli_json(key, "--engine", engine, "--gpu", gpu)
    assert api == _api_json(key, "mlx", gpu=gpu, settings=lm_studio_load("lmstudio", key).settings)
    assert api["engine"] == "mlx" and api["settings"]["program"] == "lmstudio"
    assert api["settings"]["context_length"] == 4096  # LM Studio's default, not llama-server's
    assert api["warnings"][0].startswith(NOTE), api["warnings"]
    assert sum(w.startswith(NOTE) for w in api["warnings"]) == 1, api["warnings"]


@pytest.mark.parametrize("key", ["mlx-community/Llama-3.2-3B-Instruct-4bit", "lmstudio-community/Qwen3-8B-MLX-8bit",
                                 "qwen/qwen3.6-27b@4bit"])
def test_the_api_s_context_is_the_cli_s_ctx(key):
    api = _api_json(key, "lmstudio", gpu="M4 Max 128GB", context_length=8192)
    assert api == _cli_json(key, "--engine", "lmstudio", "--ctx", "8192", "--gpu", "M4 Max 128GB")
    assert api == _cli_json("--gpu", "M4 Max 128GB", "--", "lms", "load", key, "-c", "8192")
    assert api["engine"] == "mlx" and api["warnings"][0].startswith(NOTE)
    # Qwen3.6 (qwen3_5) is a family LM Studio's MLX runtime fits the context for (mlx-engine context_fit.py, held by
    # tests/test_lmstudio_mlx_context_fit.py): the context asked stays for the others
    if "qwen3.6" not in key:
        assert api["settings"]["context_length"] == 8192


def test_llama_cpp_s_options_name_the_engine_that_runs_the_model():
    with pytest.raises(SettingsError, match=r"^n_ctx: no option of the mlx engine \(LM Studio runs this MLX model on "
                                            r"its MLX engine\); its options: program, "):
        oomkit.estimate("mlx-community/Qwen3-30B-A3B-4bit", "lmstudio", gpu="M3 Pro 36GB", n_ctx=8192)


def test_a_gguf_stays_on_llama_cpp():
    api = _api_json("Qwen/Qwen3-8B", "lmstudio", quant="Q4_K_M", gpu="RTX 4090")
    assert api == _cli_json("Qwen/Qwen3-8B", "--quant", "Q4_K_M", "--engine", "lmstudio", "--gpu", "RTX 4090")
    assert api["engine"] == "llama.cpp" and not any(w.startswith(NOTE) for w in api["warnings"])
    # llama.cpp's settings given with the alias keep an MLX key on llama.cpp, as they say (a guessed GGUF)
    s = get_engine("llama.cpp").settings(n_ctx=8192)
    est = oomkit.estimate("mlx-community/Llama-3.2-3B-Instruct-4bit", "lmstudio", gpu="RTX 4090", settings=s)
    assert est.engine == "llama.cpp" and not any(w.startswith(NOTE) for w in est.warnings)
