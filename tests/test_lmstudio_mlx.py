"""`lms load` of an MLX model: LM Studio runs it with its MLX engine (lmstudio-ai/mlx-engine, "the LM Studio
implementation of the MLX runtime", on mlx-lm), not llama.cpp, so oomkit sizes it with the mlx engine.

lms load's options (lmstudio.ai/docs/cli/load): --context-length / -c, --gpu ("How much to offload to the GPU.
Values: 0-1, off, max"), --parallel. mlx-engine server/__main__.py passes --context-length as
load_model(max_kv_size=...) (4096 by default, LM Studio's default too); the weights and the cache live in unified
memory, so --gpu changes nothing there.

The model keys are LM Studio's own, from public threads:
- mlx-community/Llama-3.2-3B-Instruct-4bit, at ~/.lmstudio/models/mlx-community/Llama-3.2-3B-Instruct-4bit
  (lmstudio-ai/lmstudio-bug-tracker#608, "Error when loading model: ModuleNotFoundError: No module named
  'mlx_engine'": the MLX engine loads it)
- lmstudio-community/Qwen3-8B-MLX-8bit (ARahim3/mlx-dspark#12: "the same id LM Studio shows" for "LM Studio's MLX
  downloads")
- qwen/qwen3.6-27b@4bit, qwen/qwen3.6-35b-a3b@4bit, lmstudio-community/Qwen3.5-9B-MLX-4bit
  (lmstudio-ai/lmstudio-bug-tracker#2250: "Models affected (all MLX ...)")
- mlx-community/GLM-4-32B-0414-4bit (lmstudio-ai/mlx-engine#152, loaded in LM Studio)
- prism-ml/Ternary-Bonsai-27B-mlx-2bit, `lms load --context-length <N>` (lmstudio-ai/lmstudio-bug-tracker#2323;
  not in oomkit's catalog: refused in one line offline)
- qwen/qwen3.8-27b, `lms load qwen/qwen3.8-27b -c 8192 --parallel 1` (lmstudio-ai/lmstudio-bug-tracker#2318, on the
  MLX runtime): the bare key does not say which format was downloaded, so it stays llama.cpp's (a strict xfail)
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command

GiB = 1 << 30


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(args))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def _estimate(*argv: str, gpu: str = "M4 Max 128GB") -> dict:
    rc, out, err = _cli("check", "--json", "--gpu", gpu, "--", *argv)
    assert rc in (0, 1), err
    return json.loads(out)["estimate"]


@pytest.mark.parametrize("key,url", [
    ("mlx-community/Llama-3.2-3B-Instruct-4bit", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/608"),
    ("lmstudio-community/Qwen3-8B-MLX-8bit", "https://github.com/ARahim3/mlx-dspark/issues/12"),
    ("qwen/qwen3.6-27b@4bit", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2250"),
    ("qwen/qwen3.6-35b-a3b@4bit", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2250"),
    ("lmstudio-community/Qwen3.5-9B-MLX-4bit", "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2250"),
    ("mlx-community/GLM-4-32B-0414-4bit", "https://github.com/lmstudio-ai/mlx-engine/issues/152"),
])
def test_an_lm_studio_mlx_key_is_sized_on_the_mlx_engine(key, url):
    p = parse_command(["lms", "load", key, "-c", "8192"], env={})
    assert p.engine == "mlx", url
    s = p.settings
    # -c is mlx-engine's context and its cache cap (load_model max_kv_size); one prediction at a time
    assert (s.program, s.context_length, s.batch) == ("lmstudio", 8192, 1), url
    bits = 8 if "8bit" in key else 4
    assert s.q_bits == bits, url
    e = _estimate("lms", "load", key, "-c", "8192")
    if "2250" in url:
        # #2250's models (qwen3_5 family, vision-capable) load with BatchedVisionModelKit, whose context auto-fit
        # replaces -c, upward too; on a 128 GB Mac it reaches the models' maximum (lmstudio-bug-tracker#2287, 128GB,
        # qwen3.5/3.6/3.8 MLX: "configured=131,065 fitted=262,144 effective=262,144")
        assert e["engine"] == "mlx" and e["settings"]["context_length"] == 262_144, url
        assert any("fits the context to 262,144 tokens" in w for w in e["warnings"]), url
    else:
        assert e["engine"] == "mlx" and e["settings"]["context_length"] == 8192, url


def test_the_load_is_mlx_lm_s_cache_capped_at_the_context():
    # the same run as mlx_lm.generate with the cache capped at the context (mlx-engine cache_wrapper.py:
    # make_prompt_cache(model, max_kv_size)); LM Studio's context is 4096 unless -c is given
    key = "mlx-community/Llama-3.2-3B-Instruct-4bit"
    lms = _estimate("lms", "load", key)
    assert lms["settings"]["context_length"] == 4096
    mlx = _estimate("mlx_lm.generate", "--model", key, "--max-kv-size", "4096", "--prompt-tokens", "3996")
    assert [d["total_bytes"] for d in lms["devices"]] == [d["total_bytes"] for d in mlx["devices"]]


def test_an_8_bit_mlx_download_is_no_longer_sized_as_a_q4_k_m_gguf():
    # Qwen3-8B: 8.19e9 parameters (its model card: "Number of Parameters: 8.2B"); mlx_lm.convert -q --q-bits 8
    # stores 8 bits a weight plus a bfloat16 scale and bias per group of 64: 8.5 bits. Before, the key was read as
    # llama.cpp's default Q4_K_M GGUF: 4,789 MiB of weights
    e = _estimate("lms", "load", "lmstudio-community/Qwen3-8B-MLX-8bit", "-c", "32768")
    weights = sum(d["weights_bytes"] for d in e["devices"])
    assert 0.97 * 8.19e9 * 8.5 / 8 < weights < 1.03 * 8.19e9 * 8.5 / 8, weights


def test_the_lm_studio_models_folder_path_names_mlx():
    p = parse_command(["lms", "load", "/Users/u/.lmstudio/models/mlx-community/Llama-3.2-3B-Instruct-4bit"], env={})
    assert p.engine == "mlx" and p.settings.context_length == 4096


@pytest.mark.parametrize("gpu", ["max", "off", "0.5"])
def test_gpu_offload_changes_nothing_on_mlx(gpu):
    key = "mlx-community/Llama-3.2-3B-Instruct-4bit"
    base = _estimate("lms", "load", key, "-c", "8192")
    e = _estimate("lms", "load", key, "-c", "8192", "--gpu", gpu)
    assert [d["total_bytes"] for d in e["devices"]] == [d["total_bytes"] for d in base["devices"]]


def test_a_gguf_stays_llama_cpp():
    # a bare catalog key or a GGUF repo: LM Studio's llama.cpp runtime, as before (and --gpu 0.5 refused there)
    for key in ("qwen/qwen3-8b", "lmstudio-community/Qwen3-8B-GGUF", "/models/mlx/Qwen3-8B-Q4_K_M.gguf"):
        assert parse_command(["lms", "load", key], env={}).engine == "llama.cpp", key
    rc, _, err = _cli("check", "--gpu", "M4 Max 128GB", "--", "lms", "load", "qwen/qwen3-8b", "--gpu", "0.5")
    assert rc == 2 and "lms load --gpu 0.5" in err


def test_parallel_predictions_are_sequences_and_the_auto_fit_is_said():
    p = parse_command(["lms", "load", "lmstudio-community/Qwen3-8B-MLX-8bit", "--parallel", "2"], env={})
    assert p.settings.batch == 2
    assert any("auto_fit_context" in u for u in p.settings.unmodelled)


def test_an_unknown_mlx_key_is_refused_in_one_line():
    # lmstudio-bug-tracker#2323's `lms load --context-length <N>` of prism-ml/Ternary-Bonsai-27B-mlx-2bit
    rc, _, err = _cli("check", "--gpu", "M1 Pro 16GB", "--", "lms", "load", "prism-ml/Ternary-Bonsai-27B-mlx-2bit",
                      "--context-length", "6144")
    assert rc == 2 and "Traceback" not in err
    assert [ln for ln in err.splitlines() if ln.startswith("oomkit: error:")] == [err.strip()]
    assert "prism-ml/Ternary-Bonsai-27B-mlx-2bit" in err


def test_fit_rewrites_only_the_context_of_the_lms_command():
    rc, out, err = _cli("fit", "--json", "--gpu", "M2 16GB", "--", "lms", "load",
                        "lmstudio-community/Qwen3-8B-MLX-8bit", "-c", "32768")
    assert rc in (0, 1), err
    fit = json.loads(out)["fit"]
    argv = fit["command"].split()
    assert argv[:3] == ["lms", "load", "lmstudio-community/Qwen3-8B-MLX-8bit"] and argv[3] == "-c", argv
    assert len(argv) == 5 and 0 < int(argv[4]) < 32768, argv
    assert [c["flag"] for c in fit["changes"]] == ["context_length"], fit["changes"]


def test_a_planned_command_keeps_the_lm_studio_variant():
    eng = get_engine("mlx")
    s = parse_command(["lms", "load", "qwen/qwen3.6-27b@4bit", "-c", "8192"], env={}).settings
    argv = eng.command("qwen/qwen3.6-27b", s)
    assert argv == ["lms", "load", "qwen/qwen3.6-27b@4bit", "--context-length", "8192"]
    back = parse_command(argv, env={})
    assert back.engine == "mlx" and back.settings == s


def test_the_mlx_estimate_is_unified_memory():
    # sanity of the route: one Metal device, nothing on the host (llama.cpp's -ngl split has no meaning here)
    e = _estimate("lms", "load", "mlx-community/Llama-3.2-3B-Instruct-4bit", "--gpu", "off")
    assert len(e["devices"]) == 1 and e["host"]["total_bytes"] == 0
    assert e["devices"][0]["weights_bytes"] == e["weights_bytes"] > 0


@pytest.mark.xfail(strict=True, reason="lmstudio-bug-tracker#2318 runs qwen/qwen3.8-27b on the MLX runtime, but the "
                   "bare LM Studio key does not say whether the MLX or the GGUF download is loaded: read as llama.cpp")
def test_a_bare_key_loaded_on_the_mlx_runtime():
    assert parse_command(["lms", "load", "qwen/qwen3.8-27b", "-c", "8192", "--parallel", "1"], env={}).engine == "mlx"


@pytest.mark.parametrize("key", ["qwen/qwen3.6-27b@4bit", "qwen/qwen3.6-35b-a3b@4bit"])  # lmstudio-bug-tracker#2250
def test_a_variant_key_as_model_is_the_same_mlx_model_as_in_lms_load(key):
    """The key pasted as MODEL with --engine mlx is the model `lms load KEY` loads (was: "no such file")."""
    loaded = _estimate("lms", "load", key, "-c", "8192")
    rc, out, err = _cli("check", key, "--engine", "mlx", "--gpu", "M4 Max 128GB", "--json")
    assert rc in (0, 1), err
    pasted = json.loads(out)["estimate"]
    assert pasted["model"]["params_total"] == loaded["model"]["params_total"]
    # within 0.1 %: `lms load` quantizes the named model with mlx_lm.convert's rule, MoE routers at 8 bits (the
    # models' quant_predicate); the name read as lmstudio-community's -MLX-4bit upload takes every layer at 4 bits
    assert abs(pasted["weights_bytes"] - loaded["weights_bytes"]) <= loaded["weights_bytes"] / 1000, (pasted, loaded)
    rc, _, err = _cli("check", key, "--gpu", "M4 Max 128GB")  # llama.cpp: the key names no GGUF
    assert rc == 2 and "--engine mlx" in err and "@q4_k_m" in err, err
