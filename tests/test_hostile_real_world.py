"""Odd input as real users produce it, past what tests/test_hostile_*.py cover: a quantization_config whose numbers
are strings, zeros or the wrong shape; an empty MODEL from an unset shell variable; the model named both as MODEL
and by the engine's own -hf / --model flag; a watch interval of NaN; a diagnose log written as UTF-16 by a Windows
shell. The promise: exit 0 / 1 with the right answer, or exit 2 with one line; never a traceback, never a value
silently read as another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oomkit
from oomkit.errors import OomkitError
from oomkit.model import catalog


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))


def _run(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OOMKIT_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, env=env, cwd=cwd,
                          input=stdin, timeout=120)


def _one_line_exit_2(r: subprocess.CompletedProcess, said: str) -> None:
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and said in err, err


# ---- quantization_config values the quantizers never write (was: ZeroDivisionError, AttributeError, or a
# string read digit by digit: weight_block_size "128" read as a 1 x 2 block, 21.7 GiB for an 8B FP8 model) ----

QWEN3_8B = catalog.lookup("Qwen/Qwen3-8B").config
_AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
_CT = {"quant_method": "compressed-tensors", "format": "pack-quantized",
       "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                       "symmetric": True, "strategy": "group",
                                                                       "group_size": 128}}}}


def _ct(**weights) -> dict:
    q = json.loads(json.dumps(_CT))
    q["config_groups"]["group_0"]["weights"].update(weights)
    return q


BAD_QUANT = [
    ({"quant_method": "fp8", "weight_block_size": [0, 0]}, "weight_block_size = 0: out of range"),
    ({"quant_method": "fp8", "weight_block_size": "128"}, "weight_block_size = '128': give [out, in]"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "give [out, in], two block sizes"),
    ({**_AWQ, "bits": "4"}, "bits = '4': not a whole number"),
    ({**_AWQ, "bits": 0}, "bits = 0: out of range"),
    ({**_AWQ, "group_size": 0}, "group_size = 0: out of range"),
    ({**_AWQ, "group_size": [128]}, "group_size = [128]: not a whole number"),
    ({"quant_method": "gptq", "bits": True, "group_size": 128}, "bits = True: not a whole number"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 12.5}, "group_size = 12.5: not a whole number"),
    ({"quant_method": "compressed-tensors", "config_groups": "group_0"}, "config_groups must be a JSON object"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": ["Linear"]}}, "config_groups entry must be"),
    (_ct(num_bits="4"), "num_bits = '4': not a whole number"),
    (_ct(group_size=0), "strategy group with group_size 0"),
    (_ct(block_structure=[128, -1], strategy="block"), "block_structure = -1: out of range"),
    ({"quant_method": "mlx", "bits": 4, "group_size": 0}, "group_size = 0: out of range"),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": -16}, "group_size = -16: out of range"),
]


@pytest.mark.parametrize("quant,said", BAD_QUANT)
@pytest.mark.parametrize("engine", ["vllm", "transformers", "sglang"])
def test_impossible_quantization_config_is_one_line(quant, said, engine, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({**QWEN3_8B, "quantization_config": quant}))
    with pytest.raises(OomkitError) as e:
        oomkit.estimate(str(tmp_path / "config.json"), engine, find_max_context=False)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_quantization_config_as_quantizers_write_it_still_reads(tmp_path):
    # GPTQ's group_size -1 (AutoGPTQ: one group per row) and a float that is a whole number stay accepted
    for quant in ({"quant_method": "gptq", "bits": 4, "group_size": -1}, {**_AWQ, "group_size": 128.0}, _CT):
        (tmp_path / "config.json").write_text(json.dumps({**QWEN3_8B, "quantization_config": quant}))
        est = oomkit.estimate(str(tmp_path / "config.json"), "vllm", find_max_context=False)
        assert 4.5 * 2**30 < est.weights_bytes < 7 * 2**30, (quant, est.weights_bytes)


def test_bad_quantization_config_through_the_cli(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({**QWEN3_8B, "quantization_config": BAD_QUANT[0][0]}))
    _one_line_exit_2(_run("estimate", "config.json", "--engine", "vllm", "--json", cwd=tmp_path),
                     "weight_block_size = 0: out of range")


# ---- the model, named the ways people name it on the command line ----


def test_empty_model_is_not_the_built_in_example(tmp_path):
    # `oomkit check "$MODEL"` with MODEL unset: was the built-in example (Llama 3.1 8B) checked, exit 0
    _one_line_exit_2(_run("check", "", "--vram", "24GiB", cwd=tmp_path), "MODEL is empty")
    _one_line_exit_2(_run("check", "  ", "--vram", "24GiB", "--json", cwd=tmp_path), "MODEL is empty")


@pytest.mark.parametrize("args", [
    ("estimate", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "--json"),
    ("estimate", "--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--json"),
    ("estimate", "--engine", "sglang", "--model-path", "Qwen/Qwen3-8B", "--json"),
    ("check", "--vram", "24GiB", "-m", "Qwen/Qwen3-8B:Q4_K_M", "--json"),
])
def test_engine_model_flag_names_the_model(args, tmp_path):
    # was: "no MODEL given" (the engine's own model flag read, then dropped)
    r = _run(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc.get("estimate", doc)["model"]["source"].startswith("catalog: Qwen/Qwen3-8B ")


@pytest.mark.parametrize("args", [
    ("estimate", "qwen3:8b", "-hf", "unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", "--json"),
    ("estimate", "Qwen/Qwen3-8B", "--engine", "vllm", "--model", "Qwen/Qwen3-32B"),
    ("diff", "qwen3:8b", "--change", "-m other.gguf"),
])
def test_model_named_twice_is_refused(args, tmp_path):
    # was: the engine flag's model silently dropped, the estimate made for MODEL
    _one_line_exit_2(_run(*args, cwd=tmp_path), "the model is named twice")


@pytest.mark.parametrize("value", ["nan", "inf", "1e300"])
def test_watch_interval_that_cannot_be_slept(value, tmp_path):
    # time.sleep(nan) raises ValueError, time.sleep(inf) OverflowError: refused before the loop starts
    _one_line_exit_2(_run("watch", "--interval", value, "--once", cwd=tmp_path), "--interval")


# ---- logs as they reach diagnose ----

LOG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
       "23.55 GiB of which 1.20 GiB is free.")


def test_utf16_log_from_a_windows_shell(tmp_path):
    # PowerShell's `>` writes UTF-16LE with a BOM: the message is still read
    (tmp_path / "oom.log").write_bytes(b"\xff\xfe" + (LOG + "\r\n").encode("utf-16-le"))
    r = _run("diagnose", "oom.log", "--json", cwd=tmp_path)
    assert r.returncode in (0, 1) and not r.stderr.strip(), r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["engine"] == "pytorch" and doc["numbers"]["requested_bytes"] == 1536 * 2**20


def test_binary_junk_on_stdin_is_one_line_exit_2(tmp_path):
    junk = bytes(range(256)) * 400 + b"\x00" * 1000 + LOG.encode()[:40]
    r = _run("diagnose", "-", "--json", cwd=tmp_path, stdin=junk)
    assert r.returncode == 2 and r.stdout == b"", r.stderr.decode()
    assert r.stderr.decode() == ("oomkit: error: stdin: not text (binary or garbled data): give the engine's error "
                                 "message or its log as text\n")
    # the log itself behind binary junk is still read
    r = _run("diagnose", "-", "--json", cwd=tmp_path, stdin=bytes(range(256)) * 4 + b"\n" + LOG.encode())
    assert r.returncode in (0, 1) and json.loads(r.stdout)["engine"] == "pytorch", r.stderr.decode()


def test_a_utf16_log_without_its_bom_is_read(tmp_path):
    r = _run("diagnose", "-", "--json", cwd=tmp_path, stdin=LOG.encode("utf-16-le"))
    doc = json.loads(r.stdout)
    assert doc["engine"] == "pytorch" and doc["numbers"]["requested_bytes"] == 1536 * 2**20, r.stderr.decode()


# ---- sizes as people write them ----


@pytest.mark.parametrize("vram", ["24,576 MiB", "24,576MiB", "1,024.5GiB"])
def test_thousands_separator_in_a_size_is_not_two_gpus(vram, tmp_path):
    # was: "--vram 24: 24 what?" (the comma read as the GPU separator, the first GPU 24 bytes)
    _one_line_exit_2(_run("estimate", "qwen3:8b", "--vram", vram, cwd=tmp_path), "write the size without thousands")
    assert oomkit.estimate("qwen3:8b", vram="24GiB,576MiB", find_max_context=False).devices[1].memory_bytes == \
        576 * 2**20  # two sizes stay two GPUs


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u2009", "\u3000"])
def test_log_copied_from_a_web_page_with_unicode_spaces(space, tmp_path):
    # a no-break or thin space where the engine printed " " (GitHub, Slack and browser copies): was "no
    # out-of-memory message oomkit knows"
    text = LOG.replace(" ", space).replace("memory", "mem\u200bory")
    r = _run("diagnose", "-", "--json", cwd=tmp_path, stdin=text.encode())
    doc = json.loads(r.stdout)
    assert doc["engine"] == "pytorch" and doc["numbers"]["requested_bytes"] == 1536 * 2**20
    assert doc["numbers"]["free_bytes"] == round(1.20 * 2**30)


def test_command_and_name_copied_from_a_web_page(tmp_path):
    # a pasted command whose words are joined by no-break spaces (was: "unknown engine command
    # 'llama-server\xa0-hf'"), a model name with a non-breaking hyphen U+2011 (was: "unknown model")
    r = _run("estimate", "--json", "--", "llama-server\u00a0-hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c\u00a08192",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["model"]["weights_format"] == "Q4_K_M" and doc["engine_view"]["n_ctx"] == 8192
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    with TestClient(create_app()) as client:  # the web API's command= field: the same split
        answer = client.post("/api/estimate", json={"command": "vllm\u00a0serve Qwen/Qwen3-8B --max-model-len\u00a08192"})
    assert answer.status_code == 200 and answer.json()["settings"]["max_model_len"] == 8192, answer.text
    est = oomkit.estimate("Qwen/Qwen3\u20118B", "vllm", find_max_context=False)
    assert est.model.source.startswith("catalog: Qwen/Qwen3-8B ")


# ---- downloads that went wrong ----

LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d2c1b8e0d5d5f1e6c0e2b4a2c1d9e0f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d\nsize 4920739232\n")


@pytest.mark.parametrize("content,said", [
    (LFS_POINTER, "a Git LFS pointer: the repo was cloned without git-lfs"),
    (b"<!DOCTYPE html>\n<html><body>Entry not found</body></html>\n", "an HTML page"),
    (b'{"error":"Access to model meta-llama/Llama-3.1-8B is restricted."}', "a JSON error message from the download"),
])
def test_a_gguf_that_is_not_one_says_what_it_is(content, said, tmp_path):
    # was: "not a GGUF file (magic b'vers')"
    (tmp_path / "Qwen3-8B-Q4_K_M.gguf").write_bytes(content)
    _one_line_exit_2(_run("estimate", "Qwen3-8B-Q4_K_M.gguf", cwd=tmp_path), said)


def test_a_checkpoint_cloned_without_git_lfs(tmp_path):
    # `git clone` of a hub repo without git-lfs: config.json is real, the shards are pointers (was: "header length
    # 2336927755350992246 > 100000000")
    (tmp_path / "Qwen3-8B").mkdir()
    (tmp_path / "Qwen3-8B" / "config.json").write_text(json.dumps(QWEN3_8B))
    (tmp_path / "Qwen3-8B" / "model.safetensors").write_bytes(LFS_POINTER)
    _one_line_exit_2(_run("estimate", "Qwen3-8B", "--engine", "vllm", cwd=tmp_path),
                     "not a safetensors file but a Git LFS pointer")


@pytest.mark.parametrize("ctx,tokens", [("32k", 32768), ("128K", 131072)])
def test_ctx_in_thousands_as_plan_and_the_web_read_it(ctx, tokens, tmp_path):
    # was: "--ctx takes an integer, got '32k'" where `plan --min-ctx 32k` and the web API's ctx=32k took it
    r = _run("estimate", "qwen3:8b", "--ctx", ctx, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["engine_view"]["n_ctx"] == tokens
    _one_line_exit_2(_run("estimate", "qwen3:8b", "--ctx", "1_024", cwd=tmp_path), "--ctx takes an integer")
