"""Real users' input, second sweep: GPUs as people write them (the Mac they bought, "dual 3090", "3090 + 3060", a
card with its memory modified), a size taken from several sold that every command now says, contexts in millions
("--ctx 1M"), a llama.cpp command that uses no GPU (--device none), the error message given to diagnose as its
argument, and a check whose weights alone overflow. The promise: exit 0 / 1 with the right answer and what was
assumed said, or exit 2 with one line; never a traceback, never a negative amount of memory left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oomkit
from oomkit.errors import HardwareError, OomkitError
from oomkit.hardware.catalog import devices_for_names, size_notes


def _run(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OOMKIT_CACHE": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, env=env, cwd=cwd,
                          input=stdin, timeout=120)


# ---- GPUs as people write them (was: "unknown GPU 'Mac Studio M3 Ultra 512GB'", "unknown GPU 'dual 3090'") ----

@pytest.mark.parametrize("text,names", [
    ("Mac Studio M3 Ultra 512GB", ["Apple M3 Ultra 512GB"]),
    ("MacBook Pro M4 Pro 48GB", ["Apple M4 Pro 48GB"]),
    ("Mac mini M4 16GB", ["Apple M4 16GB"]),
    ("Apple Mac Studio M2 Ultra 192GB", ["Apple M2 Ultra 192GB"]),
    ("dual 3090", ["NVIDIA GeForce RTX 3090"] * 2),
    ("quad A100 80GB", ["NVIDIA A100-SXM4-80GB"] * 4),
    ("3090 + 3060 12GB", ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3060 12GB"]),
    ("Ryzen AI Max+ 395 128GB", ["AMD Ryzen AI Max+ 395 128GB"]),  # a plus inside a name stays the name
])
def test_gpu_names_as_people_write_them(text, names):
    assert [d.name for d in devices_for_names(text)] == names


@pytest.mark.parametrize("text,gib", [("4090 48GB", 48), ("2x 2080 Ti 22GB", 22)])
def test_a_card_with_its_memory_modified_is_taken_as_stated_and_said(text, gib):
    devs = devices_for_names(text)
    assert {d.memory_bytes for d in devs} == {gib << 30}
    assert devs[0].bandwidth_gbs  # the card as sold: its bandwidth
    (note,) = size_notes(text)
    assert "taken as stated" in note and f"not {gib} GB" in note


def test_a_chip_at_a_size_it_is_not_sold_with_is_refused_with_the_sizes():
    with pytest.raises(HardwareError, match="M3 Max is sold with 36, 48, 64, 96, 128 GB"):
        devices_for_names("M3 Max 40GB")


@pytest.mark.parametrize("command", [
    ["estimate", "qwen3:8b", "--gpu", "5060ti"],
    ["plan", "qwen3:8b", "--gpu", "5060ti", "--limit", "1"],
    ["fit", "--gpu", "5060ti", "--", "llama-server", "-m", "qwen3:8b"],
    ["table", "qwen3:8b", "--gpu", "5060ti", "--kind", "limits"],
    ["check", "qwen3:8b", "--gpu", "5060ti"],
])
def test_every_command_says_which_size_it_took(command, tmp_path):
    # was: only check said that "5060ti" (sold with 8 or 16 GB) was taken as 8 GB; plan, fit, table and estimate
    # planned for 8 GB silently
    r = _run(*command, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()
    said = (r.stdout + r.stderr).decode()
    assert said.count("is sold with 8 or 16 GB: taken as 8 GB") == 1, said


# ---- contexts in millions, as "32k" already was (was: "--ctx takes an integer, got '1M'") ----

@pytest.mark.parametrize("ctx,tokens", [("1M", 1 << 20), ("1m", 1 << 20), ("128K", 131072)])
def test_ctx_in_millions(ctx, tokens, tmp_path):
    r = _run("estimate", "qwen3:8b", "--ctx", ctx, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["engine_view"]["n_ctx"] == tokens


def test_plan_min_ctx_in_millions_is_capped_and_said(tmp_path):
    r = _run("plan", "qwen3:8b", "--gpu", "H100 80GB", "--min-ctx", "1M", "--limit", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert "1048576 tokens asked; Qwen3 8B is trained for 40960" in r.stdout.decode()


# ---- a llama.cpp command that uses no GPU (was: internal error, min() arg is an empty sequence) ----

def test_device_none_is_checked_against_the_ram(tmp_path):
    # common/arg.cpp parse_device_list: "-dev none" is an empty device list, everything runs on the CPU
    r = _run("check", "--gpu", "2x 3090", "--ram", "64GB", "--", "llama-server", "-m", "qwen3:32b", "--device",
             "none", "-c", "4096", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0 and "Traceback" not in r.stderr.decode(), r.stderr.decode()
    assert "checked against the host's RAM" in out and "CUDA0" not in out, out
    r = _run("check", "--gpu", "3090", "--ram", "8GB", "--json", "--", "llama-server", "-m", "qwen3:32b", "-dev",
             "none", cwd=tmp_path)
    assert r.returncode == 1 and json.loads(r.stdout)["hardware"] == "cpu", r.stderr.decode()


# ---- no negative memory left (was: "memory after weights  -28,148 MiB") ----

def test_weights_past_the_memory_leave_none_not_a_negative_amount(tmp_path):
    r = _run("check", "--gpu", "3060 12GB", "--", "llama-server", "-m", "llama3.1:70b", "-ngl", "99", "--fit",
             "off", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 1, r.stderr.decode()
    line = next(x for x in out.splitlines() if "memory after weights" in x)
    assert " -" not in line and "0 MiB" in line and "alone are" in line and "over" in line, line


# ---- the error message as diagnose's argument (was: "CUDA out of memory. ...: no such file") ----

def test_diagnose_takes_the_message_as_its_argument(tmp_path):
    msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a total capacity "
           "of 7.79 GiB of which 57.06 MiB is free.")
    r = _run("diagnose", msg, "--json", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["engine"] == "pytorch" and doc["numbers"]["requested_bytes"] == 172 << 20
    assert "diagnosing the argument as the error text" in r.stderr.decode()
    # the same text from stdin is read the same
    r2 = _run("diagnose", "--json", cwd=tmp_path, stdin=msg.encode())
    assert json.loads(r2.stdout) == doc
    # unquoted, word by word
    r3 = _run("diagnose", *msg.split(), "--json", cwd=tmp_path)
    assert json.loads(r3.stdout)["numbers"] == doc["numbers"]


@pytest.mark.parametrize("name", ["missing.log", "logs/server.txt", "nohup.out"])
def test_a_missing_log_file_is_still_no_such_file(name, tmp_path):
    r = _run("diagnose", name, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.strip().splitlines() == [f"oomkit: error: {name}: no such file"], err


def test_a_table_by_vram_size_for_a_command_on_the_cpu_is_one_line(tmp_path):
    # was: internal error (IndexError) for `table MODEL -dev none`
    r = _run("table", "qwen3:8b", "--gpu", "3090", "-dev", "none", "--kind", "limits", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.strip().splitlines()) == 1 and "place nothing on a GPU" in err, err


# ---- fit on an lms load command writes lms load's own flags (was: "lms load: unknown option -c") ----

def test_fit_of_lms_load_writes_its_own_flags(tmp_path):
    r = _run("fit", "--vram", "8GB", "--json", "--", "lms", "load", "qwen/qwen3-8b", "--context-length", "131072",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)["fit"]
    cmd = doc["command"]
    assert cmd.startswith("lms load qwen/qwen3-8b --context-length ") and " -c " not in cmd, cmd
    # the rewritten command reads back to the estimate it was given with
    r2 = _run("estimate", "--vram", "8GB", "--json", "--", *cmd.split(), cwd=tmp_path)
    assert json.loads(r2.stdout)["total_bytes"] == doc["after"]["total_bytes"]


def test_fit_of_lms_load_that_needs_a_flag_lms_lacks_gives_the_next_tier(tmp_path):
    r = _run("fit", "--vram", "4GB", "--", "lms", "load", "qwen/qwen3-8b", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr.decode(), r.stderr.decode()
    assert "nothing fits on these GPUs with any knob of this command" in r.stdout.decode()


@pytest.mark.parametrize("command", [["ollama", "serve"], ["OLLAMA_CONTEXT_LENGTH=131072", "ollama", "serve"]])
def test_fit_of_ollama_serve_names_the_program(command, tmp_path):
    # was: "the OLLAMA_CONTEXT_LENGTH=131072 command names no model"
    r = _run("fit", "--gpu", "4090", "--", *command, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith("oomkit: error: the ollama serve command names no model: give the "
                                                "command that loads one (ollama run MODEL"), err


# ---- a model named as its card titles it (was: "unknown model 'Qwen3 30B A3B'") ----

@pytest.mark.parametrize("name,hf_id", [("Qwen3 30B A3B", "Qwen/Qwen3-30B-A3B"),
                                        ("Llama 3.1 8B Instruct", "meta-llama/Llama-3.1-8B-Instruct")])
def test_a_model_named_with_spaces_for_dashes(name, hf_id):
    from oomkit.model import catalog

    assert catalog.lookup(name).hf_id == catalog.lookup(hf_id).hf_id


# ---- llama.cpp model flags as people copy them ----

def test_mradermacher_imatrix_tag_is_the_file_type(tmp_path):
    # was: "unknown quant tag 'i1-Q4_K_M'" for `-hf mradermacher/X-i1-GGUF:i1-Q4_K_M` (the files are X.i1-Q4_K_M.gguf)
    r = _run("estimate", "--json", "--", "llama-server", "-hf", "mradermacher/Qwen3-8B-i1-GGUF:i1-Q4_K_M",
             cwd=tmp_path)
    plain = _run("estimate", "--json", "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["weights_bytes"] == json.loads(plain.stdout)["weights_bytes"]


def test_model_url_names_the_model(tmp_path):
    # was: "the llama-server command names no model" for -mu (common/arg.cpp --model-url)
    url = "https://huggingface.co/unsloth/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q8_0.gguf"
    r = _run("estimate", "--json", "--", "llama-server", "-mu", url, "-c", "4096", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc["model"]["weights_format"] == "Q8_0" and doc["model"]["name"] == "Qwen3 8B"


def test_main_gpu_minus_one(tmp_path):
    # src/llama.cpp llama_model_load: with -sm none, main_gpu < 0 clears the devices (CPU only); with the layer split
    # main_gpu is not read (was: "main_gpu (-mg) -1: out of range")
    layer = _run("estimate", "--gpu", "2x 3090", "--json", "--", "llama-server", "-m", "qwen3:32b", "-mg", "-1",
                 "-c", "4096", cwd=tmp_path)
    plain = _run("estimate", "--gpu", "2x 3090", "--json", "--", "llama-server", "-m", "qwen3:32b", "-c", "4096",
                 cwd=tmp_path)
    assert layer.returncode == 0, layer.stderr.decode()
    assert json.loads(layer.stdout)["devices"] == json.loads(plain.stdout)["devices"]
    none = _run("estimate", "--gpu", "2x 3090", "--json", "--", "llama-server", "-m", "qwen3:32b", "-sm", "none",
                "-mg", "-1", "-c", "4096", cwd=tmp_path)
    doc = json.loads(none.stdout)
    assert doc["devices"] == [] and doc["host"]["weights_bytes"] > 18 << 30


# ---- cards people run models on that the catalog lacked (was: "unknown GPU 'P40'", "'V100'", "'Titan RTX'") ----

@pytest.mark.parametrize("text,name,gib,bandwidth", [
    ("Tesla P40", "NVIDIA Tesla P40", 24, 346), ("P100 16GB", "NVIDIA Tesla P100 16GB", 16, 732),
    ("V100 32GB", "NVIDIA Tesla V100 32GB", 32, 900), ("Titan RTX", "NVIDIA TITAN RTX", 24, 672),
    ("Radeon VII", "AMD Radeon VII", 16, 1024), ("MI50 32GB", "AMD Instinct MI50 32GB", 32, 1024),
])
def test_older_cards_people_still_run(text, name, gib, bandwidth):
    (d,) = devices_for_names(text)
    assert (d.name, d.memory_bytes, d.bandwidth_gbs) == (name, gib << 30, bandwidth)


# ---- an mlx-community name's bits: the header says the weights are quantized (was: "· bfloat16 ·") ----

def test_mlx_command_with_a_quantized_name_is_labelled(tmp_path):
    r = _run("check", "--gpu", "M4 Max 128GB", "--", "mlx_lm.server", "--model", "mlx-community/Qwen3-30B-A3B-4bit",
             cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    assert out.splitlines()[0].startswith("Qwen3 30B-A3B · mlx-affine · mlx"), out
    assert "quantized to 4 bits, group 64" in out


# ---- the web API reads a JSON true as no number (was: {"ctx": true} answered for a context of 1 token) ----

@pytest.mark.parametrize("field", ["ctx", "parallel", "vram"])
def test_web_api_refuses_a_boolean_for_a_number(field, monkeypatch):
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with TestClient(create_app()) as c:
        r = c.post("/api/estimate", json={"model": "qwen3:8b", field: True})
        assert r.status_code == 422 and set(r.json()) == {"error"}, r.text
        ok = c.post("/api/estimate", json={"model": "qwen3:8b", "ctx": 32768, "gpu": "dual 3090"})
        assert ok.status_code == 200 and len(ok.json()["devices"]) == 2, ok.text


# ---- counts and joiners as people write them (was: "5090 x 2" read as 5090 GPUs named "2"; "3090+3060",
# "3090 and 3060", nvidia-smi's "Tesla V100-SXM2-32GB", --vram "2x 24GB" refused) ----

@pytest.mark.parametrize("text,names", [
    ("5090 x 2", ["NVIDIA GeForce RTX 5090"] * 2),
    ("RTX 3090 x 4", ["NVIDIA GeForce RTX 3090"] * 4),
    ("3090+3060", ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3060 12GB"]),
    ("3090 and 3060", ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3060 12GB"]),
    ("3090/3060", ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3060 12GB"]),
    ("Tesla V100-SXM2-32GB", ["NVIDIA Tesla V100 32GB"]),
    ("Tesla P100-PCIE-16GB", ["NVIDIA Tesla P100 16GB"]),
])
def test_counts_and_joiners(text, names):
    assert [d.name for d in devices_for_names(text)] == names


def test_a_size_given_as_a_gpu_name_points_at_vram():
    with pytest.raises(HardwareError, match="is a memory size, not a GPU name: give --vram 24GB"):
        devices_for_names("24GB")


@pytest.mark.parametrize("text,gib", [("2x 24GiB", [24, 24]), ("24GiB x2", [24, 24]), ("24GiB + 12GiB", [24, 12]),
                                      ("3x 24GiB, 12GiB", [24, 24, 24, 12])])
def test_vram_with_a_count(text, gib):
    from oomkit.units import parse_sizes

    assert parse_sizes(text, "--vram", 1024) == tuple(g << 30 for g in gib)


def test_device_names_compare_without_case(tmp_path):
    # ggml-backend-reg.cpp ggml_backend_dev_by_name: striequals (was: "-dev cuda0: no device cuda0")
    r = _run("estimate", "--gpu", "3090,4090,3060", "--json", "--", "llama-server", "-m", "qwen3:32b", "-dev",
             "cuda0,Cuda2", "-c", "4096", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert [d["id"] for d in json.loads(r.stdout)["devices"]] == ["CUDA0", "CUDA2"]


@pytest.mark.parametrize("words,slug_start", [("qwen 2.5", "qwen2.5-"), ("Qwen 3", "qwen3-"), ("llama 3.1", "llama-3.1-")])
def test_a_family_named_with_a_space(words, slug_start):
    # was: "unknown model 'qwen 2.5'" where "llama 3.1" was read
    from oomkit.plan.family import family_members

    rows = family_members(words)
    assert rows and all(r["slug"].startswith(slug_start) or r["name"].lower().replace(" ", "-").startswith(slug_start)
                        for r in rows), [r["slug"] for r in rows][:5]


def test_fit_says_a_context_above_the_trained_maximum(tmp_path):
    # was: "it fits as it is: nothing to change" for -c 200000 on a 40960-token model, with no word of it
    r = _run("fit", "--vram", "80GB", "--", "llama-server", "-m", "qwen3:8b", "-c", "200000", cwd=tmp_path)
    out = r.stdout.decode()
    assert r.returncode == 0 and "is above Qwen3 8B's trained maximum of 40960 tokens" in out, out
    r = _run("fit", "--vram", "80GB", "--json", "--", "llama-server", "-m", "qwen3:8b", "-c", "32768", cwd=tmp_path)
    assert not any("trained maximum" in n for n in json.loads(r.stdout)["fit"]["notes"])


def test_a_size_with_x_in_its_unit_is_no_count():
    from oomkit.errors import SettingsError
    from oomkit.units import parse_sizes

    with pytest.raises(SettingsError, match="cannot read size '24XB'"):
        parse_sizes("24XB", "--vram", 1024)


# ---- runners and shell tails as commands are copied (was: "unknown engine command 'uv'", "invalid argument: |") ----

@pytest.mark.parametrize("argv", [
    ["uv", "run", "vllm", "serve", "Qwen/Qwen3-8B"],
    ["uvx", "--from", "vllm", "vllm", "serve", "Qwen/Qwen3-8B"],
    ["srun", "--gres=gpu:1", "-p", "gpu", "vllm", "serve", "Qwen/Qwen3-8B"],
    ["conda", "run", "-n", "llm", "vllm", "serve", "Qwen/Qwen3-8B"],
    ["VLLM_USE_V1=0", "uv", "run", "--with", "flashinfer", "vllm", "serve", "Qwen/Qwen3-8B"],
])
def test_runners_pass_the_engine_command_on(argv):
    from oomkit.engines.cmdline import parse_command

    p = parse_command(argv, {})
    assert (p.engine, p.model) == ("vllm", "Qwen/Qwen3-8B")


def test_fit_keeps_the_runner(tmp_path):
    r = _run("fit", "--gpu", "4090", "--json", "--", "uv", "run", "vllm", "serve", "Qwen/Qwen3-8B", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout)["fit"]["command"].startswith("uv run vllm serve Qwen/Qwen3-8B ")


@pytest.mark.parametrize("sub", ["ps", "list", "stop", "rm"])
def test_ollama_subcommands_that_load_no_model(sub, tmp_path):
    # was: "unknown model 'ps'"
    r = _run("check", "--gpu", "3090", "--", "ollama", sub, cwd=tmp_path)
    assert r.stderr.decode() == f"oomkit: error: 'ollama {sub}' loads no model: give 'ollama run MODEL' or " \
                                "'ollama serve'\n"


@pytest.mark.parametrize("text", [
    "$ llama-server -m qwen3:8b -c 8192 2>&1 | tee log.txt",
    "llama-server -m qwen3:8b -c 8192 > log.txt 2>&1 &",
    "llama-server -m qwen3:8b >>out.log -c 8192 2>err.log;",
])
def test_a_pasted_command_as_bash_runs_it(text):
    from oomkit.engines.cmdline import split_command

    assert split_command(text) == ["llama-server", "-m", "qwen3:8b", "-c", "8192"]


# ---- an MLX conversion with an engine that cannot load it (was: vLLM "FITS" with mlx-affine weights) ----

@pytest.mark.parametrize("engine", ["vllm", "sglang", "transformers"])
def test_an_mlx_conversion_is_refused_by_checkpoint_engines(engine):
    with pytest.raises(OomkitError, match=f"is an MLX conversion \\(mlx-affine, mlx_lm.convert\\): {engine} does not "
                                          "load MLX weights"):
        oomkit.estimate("mlx-community/Qwen3-8B-4bit", engine=engine)


def test_an_mlx_conversion_still_loads_in_mlx_and_is_replaced_by_a_gguf_in_llamacpp():
    assert oomkit.estimate("mlx-community/Qwen3-8B-4bit", engine="mlx").model.weights.format == "mlx-affine"
    est = oomkit.estimate("mlx-community/Qwen3-8B-4bit", engine="llama.cpp")
    assert est.model.weights.format == "Q4_K_M"
    assert any("this engine loads GGUF files" in w for w in est.to_dict()["warnings"])


# ---- --kv-type is kept, or refused in one line; never dropped (was: plan planned f16 and q8_0 for --kv-type
# q4_0; --kv-type fp8 for llama.cpp planned; mlx read --kv-type as nothing; transformers' own plan commands
# with --kv-type did not read back) ----

def test_plan_keeps_the_kv_type_asked_for(tmp_path):
    r = _run("plan", "qwen3:8b", "--gpu", "4090", "--kv-type", "q4_0", "--limit", "4", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)["plan"]
    assert r.returncode == 0 and doc["options"] and {o["kv_type"] for o in doc["options"]} == {"q4_0"}
    assert any("KV cache fixed at q4_0" in n for n in doc["notes"])


@pytest.mark.parametrize("engine,kv,said", [
    ("llama.cpp", "fp8", "unknown ggml type 'fp8'"),
    ("llama.cpp", "q5_1", "plan tries f16, q8_0, q4_0 for llama.cpp"),
    ("transformers", "q8_0", "transformers caches in the model dtype"),
    ("mlx", "q8_0", "the mlx engine has no KV cache type setting"),
])
def test_plan_refuses_a_kv_type_it_cannot_keep(engine, kv, said, tmp_path):
    r = _run("plan", "qwen3:8b", "--engine", engine, "--gpu", "4090", "--kv-type", kv, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.strip().splitlines()) == 1 and said in err, err


def test_mlx_estimate_refuses_kv_type(tmp_path):
    r = _run("estimate", "qwen3:8b", "--engine", "mlx", "--kv-type", "q4_0", cwd=tmp_path)
    assert r.returncode == 2 and "--kv-bits N" in r.stderr.decode(), r.stderr.decode()


def test_transformers_plan_commands_read_back(tmp_path):
    r = _run("plan", "qwen3:8b", "--engine", "transformers", "--gpu", "4090", "--kv-type", "fp8", "--limit", "2",
             "--json", cwd=tmp_path)
    options = json.loads(r.stdout)["plan"]["options"]
    assert r.returncode == 0 and options and all(" --kv-type fp8" in o["command"] for o in options)
    from oomkit.engines.transformers.args import parse_args

    assert parse_args(["--max-length", "40960", "--kv-type", "fp8"])[2].kv_cache_dtype == "fp8"


# ---- the context and sequences a plan command names are its goals (was: --ctx 100000, -np 4 dropped) ----

@pytest.mark.parametrize("args,min_ctx,concurrency", [
    (["--ctx", "16384"], 16384, 1), (["-c", "16384"], 16384, 1), (["--parallel", "4"], 8192, 4), (["-np", "4"], 8192, 4),
    (["--ctx", "32k", "--min-ctx", "32768"], 32768, 1),
])
def test_plan_reads_the_context_and_sequences_asked(args, min_ctx, concurrency, tmp_path):
    r = _run("plan", "qwen3:8b", "--gpu", "4090", *args, "--limit", "1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    goals = json.loads(r.stdout)["plan"]["goals"]
    assert (goals["min_ctx"], goals["concurrency"]) == (min_ctx, concurrency)


def test_plan_refuses_two_contexts_that_disagree(tmp_path):
    r = _run("plan", "qwen3:8b", "--gpu", "4090", "--ctx", "32k", "--min-ctx", "8192", cwd=tmp_path)
    assert r.returncode == 2 and "both say the context: give one" in r.stderr.decode(), r.stderr.decode()


# ---- an option and the engine's own flag that say one thing two ways (was: the option won silently) ----

@pytest.mark.parametrize("args,said", [
    (["--ctx", "8192", "--", "llama-server", "-m", "qwen3:8b", "-c", "4096"], "--ctx 8192 and the command's n_ctx 4096"),
    (["--kv-type", "q8_0", "--", "llama-server", "-m", "qwen3:8b", "-ctk", "q4_0"], "--kv-type q8_0 and the command's"),
    (["--parallel", "2", "--", "llama-server", "-m", "qwen3:8b", "-np", "4"], "--parallel 2 and the command's"),
    (["--ctx", "8192", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "4096"], "max_model_len 4096"),
    (["-c", "8192", "--ctx", "4096", "qwen3:8b"], "--ctx 4096 and the command's n_ctx 8192"),
    (["--engine", "vllm", "--", "llama-server", "-m", "qwen3:8b"], "--engine vllm and the llama-server command"),
])
def test_two_ways_of_one_setting_that_disagree(args, said, tmp_path):
    r = _run("check", "--gpu", "4090", *args, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.strip().splitlines()) == 1 and said in err, err


@pytest.mark.parametrize("args", [
    ["--ctx", "8192", "--", "llama-server", "-m", "qwen3:8b", "-c", "8192"],
    ["--ctx", "8192", "--", "llama-server", "-m", "qwen3:8b"],
    ["--kv-type", "fp8", "--", "vllm", "serve", "Qwen/Qwen3-8B"],
    ["--engine", "llama-server", "--", "llama-server", "-m", "qwen3:8b"],
])
def test_two_ways_that_agree_or_one_way_are_taken(args, tmp_path):
    r = _run("check", "--gpu", "4090", *args, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr.decode()


@pytest.mark.parametrize("flag,value,engine", [("--max-model-len", "8192", "llama.cpp"),
                                               ("--tensor-parallel-size", "2", "llama.cpp"), ("-ngl", "10", "vllm")])
def test_another_engines_flag_is_named(flag, value, engine, tmp_path):
    # was: "unexpected argument 'qwen3:8b' (one MODEL only)"
    r = _run("check", "--gpu", "4090", "--engine", engine, flag, value, "qwen3:8b", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and f"unexpected argument '{value}': {flag} takes no value" in err, err
    assert "give --engine" in err and len(err.strip().splitlines()) == 1


def test_web_plan_and_fit_say_the_size_a_gpu_name_was_taken_as(monkeypatch):
    # was: the note went to the server's stderr, not into the answer
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with TestClient(create_app()) as c:
        r = c.post("/api/plan", json={"model": "qwen3:8b", "gpu": "5060ti", "limit": 1})
        assert r.status_code == 200 and any("taken as 8 GB" in n for n in r.json()["plan"]["notes"]), r.text
        r = c.post("/api/fit", json={"command": "llama-server -m qwen3:8b", "gpu": "5060ti"})
        assert r.status_code == 200 and any("taken as 8 GB" in n for n in r.json()["fit"]["notes"]), r.text
