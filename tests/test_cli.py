"""The command line contract (DESIGN.md): both forms, --json keys, exit codes, one-line errors."""

import json
import subprocess
import sys

import pytest

from tests.ggufs import write_llama_gguf


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, env=env)


def test_help():
    r = run("--help")
    assert r.returncode == 0 and "estimate" in r.stdout
    r = run("estimate", "--help")
    assert r.returncode == 0 and "--vram" in r.stdout


def test_estimate_json_contract():
    r = run("estimate", "llama3.1:8b", "--engine", "llama.cpp", "-c", "32768", "-ctk", "q8_0", "-ctv", "q8_0",
            "-fa", "on", "--vram", "24GiB", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    for key in ("model", "engine", "settings", "weights_bytes", "kv_cache_bytes", "recurrent_state_bytes",
                "compute_bytes", "overhead_bytes", "total_bytes", "kv_bytes_per_token", "devices", "host",
                "engine_view", "fits", "max_context", "warnings"):
        assert key in d
    for key in ("name", "architecture", "n_layers", "params_total", "params_active"):
        assert key in d["model"]
    for key in ("n_ctx", "kv_buffer_bytes", "k_bytes", "v_bytes", "swa_kv_bytes", "recurrent_state_bytes",
                "model_buffer_bytes", "compute_buffer_bytes", "output_buffer_bytes"):
        assert key in d["engine_view"]
    assert d["settings"]["cache_type_k"] == "q8_0" and d["engine_view"]["n_ctx"] == 32768
    # q8_0 K and V: 32 layers x 1024 elements x 34/32 bytes x 32768 cells, each
    assert d["engine_view"]["k_bytes"] == d["engine_view"]["v_bytes"] == 32 * 1024 * 34 // 32 * 32768
    dev = d["devices"][0]
    assert dev["memory_bytes"] == 24 << 30 and d["fits"] is True
    assert dev["total_bytes"] == sum(dev[k] for k in ("weights_bytes", "kv_cache_bytes", "recurrent_state_bytes",
                                                       "compute_bytes", "overhead_bytes"))


def test_engine_neutral_options_match_engine_flags():
    a = json.loads(run("estimate", "qwen3:8b", "--ctx", "16384", "--kv-type", "q8_0", "--parallel", "1",
                       "--json").stdout)
    b = json.loads(run("estimate", "qwen3:8b", "-c", "16384", "-ctk", "q8_0", "-ctv", "q8_0", "-np", "1",
                       "--json").stdout)
    assert a["engine_view"] == b["engine_view"]


def test_command_form_with_gguf(tmp_path):
    path = write_llama_gguf(tmp_path / "tiny.gguf")
    r = run("estimate", "--vram", "8GiB", "--json", "--", "llama-server", "-m", str(path), "-c", "4096", "-ngl",
            "99", "-fa", "on", "-np", "1")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["engine_view"]["n_ctx"] == 4096 and d["model"]["weights_exact"] is True
    # the same estimate in the options form
    r2 = run("estimate", str(path), "--vram", "8GiB", "--json", "-c", "4096", "-ngl", "99", "-fa", "on", "-np", "1")
    assert json.loads(r2.stdout)["engine_view"] == d["engine_view"]


def test_command_form_resolves_catalog_names():
    r = run("estimate", "--json", "--", "llama-server", "-m", "llama3.2:1b", "-c", "8192")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["model"]["n_layers"] == 16


def test_table_and_explain():
    r = run("estimate", "gemma3:27b", "-c", "16384", "--vram", "24GiB", "--explain")
    assert r.returncode == 0, r.stderr
    assert "sliding" in r.stdout and "full" in r.stdout and "verdict" in r.stdout


def test_cpu_only_verdict_against_the_host_memory():
    """Without a GPU, estimate's verdict weighs the host's memory (--ram) as check --cpu-only does. On a 16 GiB host
    llama.cpp's fit picks 109056 cells (docs/commands/estimate.md's fit log); their f16 KV cache alone is
    32 layers x 2 x 1024 x 2 bytes = 128 KiB a cell, 13632 MiB, so with the 4.6 GiB of Q4_K_M weights the host is
    short by the margin check reports; on a 32 GiB host (the untouched 131072 cells) it fits."""
    args = ("llama3.1:8b", "--cpu-only", "-np", "1")
    short = run("estimate", *args, "--ram", "16GiB")
    assert short.returncode == 0, short.stderr
    est = json.loads(run("estimate", *args, "--ram", "16GiB", "--json").stdout)
    assert est["engine_view"]["n_ctx"] == 109056 and est["kv_cache_bytes"] == 109056 * 32 * 2 * 1024 * 2
    chk = json.loads(run("check", *args, "--ram", "16GiB", "--json").stdout)
    assert chk["fits"] is False and -chk["margin_bytes"] == est["total_bytes"] - (16 << 30)
    gib = (est["total_bytes"] - (16 << 30)) / (1 << 30)
    assert f"verdict: does NOT fit in the host's 16.00 GiB of memory (short by {gib:.2f} GiB)" in short.stdout
    assert est["devices"] == []
    roomy_json = json.loads(run("estimate", *args, "--ram", "32GiB", "--json").stdout)
    # the JSON says what the text says: fits weighs the host's memory, given under host.memory_bytes
    assert est["fits"] is False and est["host"]["memory_bytes"] == 16 << 30
    assert roomy_json["fits"] is True and roomy_json["host"]["memory_bytes"] == 32 << 30
    assert chk["estimate"]["fits"] is chk["fits"] is False and chk["estimate"]["host"]["memory_bytes"] == 16 << 30
    roomy = run("estimate", *args, "--ram", "32GiB")
    assert "verdict: fits in the host's 32.00 GiB of memory" in roomy.stdout
    assert json.loads(run("check", *args, "--ram", "32GiB", "--json").stdout)["fits"] is True
    # an engine with no use for the host's memory keeps the verdict open
    assert "verdict: fit unknown" in run("estimate", "llama3.1:8b", "--cpu-only", "--engine", "ollama").stdout
    opened = json.loads(run("estimate", "llama3.1:8b", "--cpu-only", "--engine", "ollama", "--json").stdout)
    assert opened["fits"] is None and opened["host"]["memory_bytes"] is None


@pytest.mark.parametrize("args,needle", [
    (["estimate", "llama3.1:8b", "--ctx", "0"], "positive"),
    (["estimate", "llama3.1:8b", "-c", "-4"], "positive"),
    (["estimate", "llama3.1:8b", "-ctk", "q9_9"], "q9_9"),
    (["estimate", "llama3.1:8b", "--bogus-flag"], "--bogus-flag"),
    (["estimate", "--", "llama-server", "-m", "llama3.1:8b", "--frobnicate", "3"], "--frobnicate"),
    (["estimate", "no-such-model-anywhere"], "unknown model"),
    (["estimate", "llama3.1:8b", "--vram", "lots"], "lots"),
    (["estimate", "llama3.1:8b", "--engine", "tensorflow-serving"], "unknown engine"),
    (["estimate", "llama3.1:8b", "-ctv", "q8_0", "-fa", "off"], "flash_attn"),
    # a value left over names the option before it, and a GPU count says how oomkit takes one
    (["check", "llama3.1:8b", "--num-gpus", "8"], '--num-gpus takes no value (it is not an oomkit option, nor a '
                                                 'llama.cpp flag with a value) (oomkit names the GPUs and their count '
                                                 'in one option: --gpu "8x H100")'),
    (["check", "llama3.1:8b", "qwen3:8b"], "unexpected argument 'qwen3:8b' (one MODEL only)"),
])
def test_bad_input_exit_2_one_line(args, needle):
    r = run(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bad_files_exit_2(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 40)
    cut = tmp_path / "cut.gguf"
    with write_llama_gguf(tmp_path / "whole.gguf").open("rb") as f:
        cut.write_bytes(f.read(300))
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                               "num_attention_heads": 32, "vocab_size": 32000}))  # no intermediate_size
    for path in (junk, cut, cfg, tmp_path / "missing.gguf"):
        r = run("estimate", str(path))
        assert r.returncode == 2, (path, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_a_command_quoted_whole_is_split_as_bash_would():
    # a command pasted from a README as one quoted argument, backslash continuations and all
    text = "vllm serve Qwen/Qwen3-8B \\\n  --tensor-parallel-size 2 \\\n  --max-model-len 32768"
    whole = run("estimate", "--vram", "24GiB", "--json", "--", text)
    split = run("estimate", "--vram", "24GiB", "--json", "--", "vllm", "serve", "Qwen/Qwen3-8B",
                "--tensor-parallel-size", "2", "--max-model-len", "32768")
    assert whole.returncode == split.returncode == 0, whole.stderr
    assert json.loads(whole.stdout)["settings"] == json.loads(split.stdout)["settings"]
    assert json.loads(whole.stdout)["settings"]["max_model_len"] == 32768
    # ... or quoted whole in MODEL's place, without the --
    for cmd in ("estimate", "check"):
        as_model = run(cmd, text, "--vram", "24GiB", "--json")
        after_dashes = run(cmd, "--vram", "24GiB", "--json", "--", text)
        assert as_model.returncode == after_dashes.returncode == 0, as_model.stderr
        assert json.loads(as_model.stdout) == json.loads(after_dashes.stdout)
    fit = run("fit", "llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 65536", "--vram", "6GiB", "--json")
    assert fit.returncode in (0, 1) and json.loads(fit.stdout)["fit"]["command"].startswith("llama-server "), fit.stderr
    spaced = run("check", "/no/such dir/model.gguf")  # a path with a space is still a path
    assert spaced.returncode == 2 and "no such file: /no/such dir/model.gguf" in spaced.stderr
    bad = run("check", "--", 'llama-server -m "unclosed')
    assert bad.returncode == 2 and bad.stderr.strip() == ("oomkit: error: cannot split the command after --: "
                                                          "No closing quotation")
