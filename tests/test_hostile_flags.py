"""Hostile flags: every engine's numeric flags and oomkit's own options, fed what a careless or hostile user types.

The promise held: exit 2 with one line on stderr (never a traceback, never exit 3), in well under a second; and a
value is refused wherever the engine's own parser refuses it. The parsers are held against the real ones:
llama.cpp's std::stoi / std::stof by a C++ program compiled here (skipped without g++), vLLM's / SGLang's
argparse type=int / type=float by argparse itself, Ollama's strconv by the Go documentation's rules
(https://pkg.go.dev/strconv#ParseInt: "base 10 ... underscores not permitted", a sign only for ParseInt).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.cli import main
from oomkit.errors import SettingsError
from oomkit.flags import go_int, go_uint, py_float, py_int, stof, stoi
from tests.hostile import run_oomkit

TRIED: Counter[str] = Counter()  # hostile inputs tried per family (printed at the end with -s)
HYPO = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# What people and fuzzers type where a number belongs
NASTY = ["", " ", "-", "+", "0", "-0", "-1", "-5", "1", "2", "7", "12abc", "1_024", "١٠٢٤", "²", "٣", "1e400", "1e400k",
         "1e99", "nan", "NaN", "inf", "-inf", "Infinity", "0x10", "1.5", "-1.5", ".5", "5.", "1e3", "0.0", "1,024",
         "99999999999", "2147483647", "2147483648", "-2147483649", "18446744073709551616", "9" * 400, "\t12",
         "12 ", "+12", "--12", "１２", "12\x00", "'12'", "\"12\"", "12k", "12K", "1.5K", "None", "true", "[1]"]
hostile_text = st.one_of(st.sampled_from(NASTY), st.text(max_size=12),
                         st.integers(min_value=-(10**20), max_value=10**20).map(str),
                         st.floats(allow_nan=True, allow_infinity=True).map(repr))


def run(argv: list[str]) -> tuple[int, str, str, float]:
    """oomkit's CLI in this process: (exit code, stdout, stderr, seconds)."""
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue(), time.perf_counter() - t


def assert_promise(argv: list[str], family: str) -> tuple[int, str, str]:
    TRIED[family] += 1
    rc, out, err, secs = run(argv)
    assert "Traceback" not in err + out and "internal error" not in err, (argv, err)
    assert rc in (0, 1, 2), (argv, rc, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), (argv, err)
    assert secs < 2.0, (argv, secs)
    return rc, out, err


# ---------------------------------------------------------------------------------------------------------
# The parsers against the real ones

_CPP = r"""
#include <iostream>
#include <string>
#include <stdexcept>
int main(int argc, char** argv) {
    std::string mode = argv[1], line;
    while (std::getline(std::cin, line)) {
        try {
            size_t pos = 0;
            if (mode == "i") { int v = std::stoi(line, &pos); std::cout << "ok " << v << " " << pos << "\n"; }
            else { float v = std::stof(line, &pos); std::cout << "ok " << v << " " << pos << "\n"; }
        } catch (const std::invalid_argument&) { std::cout << "invalid\n"; }
        catch (const std::out_of_range&) { std::cout << "range\n"; }
    }
}
"""


@pytest.fixture(scope="module")
def cpp(tmp_path_factory):
    """(mode, texts) -> what std::stoi / std::stof say of each text (ok VALUE POS | invalid | range)."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not found: std::stoi / std::stof are held against a compiled C++ program")
    d = tmp_path_factory.mktemp("cpp")
    (d / "p.cpp").write_text(_CPP)
    subprocess.run(["g++", "-O0", "-o", str(d / "p"), str(d / "p.cpp")], check=True, capture_output=True, timeout=120)

    def ask(mode: str, texts: list[str]) -> list[str]:
        r = subprocess.run([str(d / "p"), mode], input="\n".join(texts) + "\n", capture_output=True, text=True,
                           timeout=30, env={"LC_ALL": "C"})
        return r.stdout.splitlines()

    return ask


def _line_safe(t: str) -> bool:
    return "\n" not in t and "\r" not in t and "\x00" not in t


def test_stoi_accepts_exactly_what_std_stoi_reads_whole(cpp):
    texts = [t for t in NASTY if _line_safe(t)] + ["  42", "42  ", "+0", "-2147483648", "0012", "1e3", "12.7"]
    for text, said in zip(texts, cpp("i", texts), strict=True):
        TRIED["parsers"] += 1
        rest = None
        if said.startswith("ok"):
            _, value, pos = said.split()
            rest = text[int(pos):]
        if said.startswith("ok") and not rest.strip(" \t\v\f"):
            assert stoi("-c", text) == int(value), text
        else:
            with pytest.raises(SettingsError) as e:
                stoi("-c", text)
            if rest:  # read only in part: the error says what llama.cpp would have read
                assert f"would read this as {value}" in str(e.value), (text, str(e.value))


def test_stof_accepts_exactly_what_std_stof_reads_whole(cpp):
    texts = [t for t in NASTY if _line_safe(t)] + ["0x1p3", "1e-50", "3.5e38", "-0.25", "inf(", "nan(abc)"]
    for text, said in zip(texts, cpp("f", texts), strict=True):
        TRIED["parsers"] += 1
        if said.startswith("ok"):
            _, value, pos = said.split()
            whole = not text[int(pos):].strip(" \t\v\f")
        if said.startswith("ok") and whole:
            got = stof("-ts", text)
            want = float(value)
            assert (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=1e-5), (text, got, want)
        else:
            with pytest.raises(SettingsError):
                stof("-ts", text)


@given(st.text(alphabet=st.characters(codec="ascii", exclude_characters="\n\r\x00"), max_size=10))
@HYPO
def test_stoi_on_ascii_text_agrees_with_std_stoi(cpp, text):
    said = cpp("i", [text])[0]
    TRIED["parsers"] += 1
    whole = said.startswith("ok") and not text[int(said.split()[2]):].strip(" \t\v\f")
    if whole:
        assert stoi("-np", text) == int(said.split()[1])
    else:
        with pytest.raises(SettingsError):
            stoi("-np", text)


@given(hostile_text)
@HYPO
def test_py_int_and_py_float_are_argparse(text):
    """vLLM, SGLang, mlx_lm: argparse's type=int / type=float accept what int() / float() accept (`1_024`, other
    scripts' digits, "nan"), and so does oomkit; range checks come after."""
    TRIED["parsers"] += 1
    for typ, ours in ((int, py_int), (float, py_float)):
        p = argparse.ArgumentParser(exit_on_error=False)
        p.add_argument("--x", type=typ)
        try:
            want = p.parse_args(["--x", text]).x if not text.startswith("-") else typ(text)
        except (argparse.ArgumentError, ValueError, TypeError):
            with pytest.raises(SettingsError):
                ours("--x", text, "vllm serve")
            continue
        got = ours("--x", text, "vllm serve")
        assert got == want or (isinstance(got, float) and math.isnan(got) and math.isnan(want))


def test_go_strconv_rules():
    """strconv.ParseUint / ParseInt in base 10: ASCII digits, a sign only for ParseInt, no blanks, no
    underscores, nothing past 64 bits (https://pkg.go.dev/strconv)."""
    cases = {"0": 0, "12": 12, "18446744073709551615": 2**64 - 1, "18446744073709551616": None, "+1": None,
             "-1": None, " 1": None, "1 ": None, "1_000": None, "²": None, "١": None, "1e3": None, "": None,
             "0x10": None, "nan": None}
    for text, want in cases.items():
        TRIED["parsers"] += 1
        assert go_uint(text) == want, text
    assert go_int("-5") == -5 and go_int("+5") == 5 and go_int("9223372036854775808") is None
    assert go_int("-9223372036854775808") == -(2**63) and go_int("1_0") is None


# ---------------------------------------------------------------------------------------------------------
# Each engine's numeric flags, through the CLI

MODEL = ["estimate", "llama3.1:8b"]
ENGINE_FLAGS = {
    "llama.cpp": ["-c", "-b", "-ub", "-np", "-mg", "-ncmoe", "-ngl", "-ts"],
    "vllm": ["--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--block-size", "-tp",
             "--gpu-memory-utilization", "--cpu-offload-gb", "--swap-space", "--num-gpu-blocks-override"],
    "sglang": ["--context-length", "--page-size", "--max-running-requests", "--mem-fraction-static",
               "--swa-full-tokens-ratio", "--mamba-full-memory-ratio", "--chunked-prefill-size", "--tp-size"],
    "ollama": ["--num-ctx", "--num-parallel", "--num-gpu", "--num-batch"],
    "mlx": ["--max-tokens", "--max-kv-size", "--prefill-step-size", "--kv-bits", "--kv-group-size", "--batch"],
    "transformers": ["--max-new-tokens", "--batch-size", "--num-beams", "--max-length", "--prefill-chunk-size"],
}
VRAM = {"vllm": "80GiB", "sglang": "80GiB"}


@pytest.mark.parametrize("engine", list(ENGINE_FLAGS))
@given(data=st.data())
@settings(HYPO, max_examples=60)
def test_engine_flags_hold_the_promise(engine, data):
    flag = data.draw(st.sampled_from(ENGINE_FLAGS[engine]))
    text = data.draw(hostile_text)
    argv = [*MODEL, "--engine", engine, "--vram", VRAM.get(engine, "24GiB,24GiB"), f"{flag}={text}"
            if flag.startswith("--") else flag, *([] if flag.startswith("--") else [text])]
    rc, _, err = assert_promise(argv, f"flags:{engine}")
    if engine == "llama.cpp" and flag != "-ts" and not _whole_int(text):
        assert rc == 2, (argv, err)  # std::stoi would refuse it, or read less than was typed
    if engine in ("vllm", "sglang") and flag in ("--page-size", "--block-size", "--max-num-seqs", "-tp",
                                                 "--tp-size", "--max-running-requests"):
        try:
            ok = int(text) >= 1
        except ValueError:
            ok = False
        if not ok:
            assert rc == 2, (argv, err)


def _whole_int(text: str) -> bool:
    try:
        stoi("-x", text)
        return True
    except SettingsError:
        return False


@pytest.mark.parametrize("argv,words", [
    (["-np", "-5"], "-np"), (["-np", "0"], "-1 (auto) or 1 to 256"), (["-np", "257"], "256"),
    (["-c", "1_024"], "would read this as 1"), (["-c", "١٠٢٤"], "not an integer"), (["-c", "12abc"], "as 12"),
    (["-c", "-1"], "n_ctx (-c) -1"), (["-ncmoe", "-1"], "-ncmoe"), (["-ts", "nan,1"], "not a finite number"),
    (["-ts", "-1,2"], "-ts"), (["-ts", "inf"], "not a finite"), (["-ts", "1e400"], "out of range"),
    (["-b", "0"], "n_batch (-b) 0"), (["-ngl", "-3"], "-ngl"),
    (["--engine", "vllm", "--block-size", "0"], "--block-size"),
    (["--engine", "vllm", "--cpu-offload-gb", "inf"], "not a finite number"),
    (["--engine", "vllm", "--cpu-offload-gb", "nan"], "not a finite number"),
    (["--engine", "vllm", "--cpu-offload-gb", "-5"], "--cpu-offload-gb"),
    (["--engine", "vllm", "--max-model-len", "1e400k"], "invalid human_readable_int"),
    (["--engine", "vllm", "--max-num-seqs", "0"], "--max-num-seqs"),
    (["--engine", "vllm", "--max-num-batched-tokens", "-1"], "--max-num-batched-tokens"),
    (["--engine", "vllm", "--gpu-memory-utilization", "0"], "(0, 1]"),
    (["--engine", "vllm", "--speculative-config", '{"num_speculative_tokens": "x"}'], "must be an integer"),
    (["--engine", "vllm", "--speculative-config", '{"num_speculative_tokens": [2]}'], "must be an integer"),
    (["--engine", "vllm", "--speculative-config", '{"num_speculative_tokens": -2}'], "out of range"),
    (["--engine", "sglang", "--swa-full-tokens-ratio", "-1"], "--swa-full-tokens-ratio"),
    (["--engine", "sglang", "--mamba-full-memory-ratio", "0"], "--mamba-full-memory-ratio"),
    (["--engine", "sglang", "--mem-fraction-static", "nan"], "not a finite"),
    (["--engine", "ollama", "--num-ctx", "-5"], "--num-ctx"), (["--engine", "ollama", "--num-ctx", "1_024"],
                                                               "strconv.ParseInt"),
    (["--engine", "ollama", "--num-parallel", "-1"], "--num-parallel"),
    (["--engine", "mlx", "--prefill-step-size", "0"], "--prefill-step-size"),
    (["--engine", "transformers", "--batch-size", "0"], "--batch-size"),
    (["--ctx", "1_024"], "--ctx takes an integer"), (["--parallel", "-5"], "-np"),
    (["--engine", "vllm", "--kv-memory", "12"], "12 what?"),
])
def test_issue_examples_are_one_line_errors(argv, words):
    full = [*MODEL, "--vram", "80GiB", *argv]
    rc, _, err = assert_promise(full, "flags:examples")
    assert rc == 2 and words in err, (full, err)


def test_llama_cpp_reads_what_it_takes():
    """Accepted values are read as llama.cpp reads them: blanks around, a sign, -ncmoe past the layer count is
    every layer (patterns for missing blocks match nothing) and answers at once (it hung)."""
    rc, out, err = assert_promise([*MODEL, "--vram", "24GiB", "-c", " 4096 ", "--json"], "flags:llama.cpp")
    assert rc == 0 and '"n_ctx": 4096' in out, err
    t = time.perf_counter()
    rc, out, err = assert_promise(["estimate", "qwen3-30b-a3b", "--vram", "24GiB", "-ncmoe", "1000000", "--json"],
                                  "flags:llama.cpp")
    assert rc == 0 and time.perf_counter() - t < 2.0, err
    all_moe = run(["estimate", "qwen3-30b-a3b", "--vram", "24GiB", "--cpu-moe", "--json"])[1]
    assert '"weights_bytes"' in out and _field(out, "weights_bytes") == _field(all_moe, "weights_bytes")


def _field(json_text: str, key: str) -> int:
    import json

    return json.loads(json_text)[key]


def test_vllm_takes_python_integers_as_argparse_does():
    """vLLM's argparse reads `--max-num-seqs 1_024` as 1024 (int() does): accepted, as vLLM accepts it."""
    rc, out, err = assert_promise([*MODEL, "--engine", "vllm", "--vram", "80GiB", "--max-num-seqs", "1_024",
                                   "--json"], "flags:vllm")
    assert rc == 0 and '"max_num_seqs": 1024' in out, err


# ---------------------------------------------------------------------------------------------------------
# Hardware, units and contradictions


@pytest.mark.parametrize("argv,words", [
    (["check", "llama3.1:8b", "--vram", "24"], "24 what? write 24GiB"),
    (["check", "llama3.1:8b", "--vram", "0"], "must be positive"),
    (["check", "llama3.1:8b", "--vram", "24GiB,"*1500], "at most 1,024"),
    (["check", "llama3.1:8b", "--gpu", "99999999999x H100"], "more than 1,024 devices"),
    (["check", "llama3.1:8b", "--gpu", "100000x H100"], "more than 1,024 devices"),
    (["check", "llama3.1:8b", "--gpu", "0x H100"], "at least 1"),
    (["check", "llama3.1:8b", "--vram", "24GiB", "--gpu", "H100"], "--vram 24GiB and --gpu H100"),
    (["check", "llama3.1:8b", "--vram", "24GiB", "--cpu-only"], "--cpu-only and --vram 24GiB"),
    (["check", "llama3.1:8b", "--gpu", "H100", "--cpu-only"], "--cpu-only and --gpu H100"),
    (["estimate", "llama3.1:8b:Q4_K_M", "--quant", "Q8_0"], "Q4_K_M and --quant names Q8_0"),
    (["estimate", "--quant", "Q8_0", "--", "llama-server", "-hf", "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"],
     "--quant names Q8_0"),
    (["table", "llama3.1:8b", "--sizes", "inf"], "--sizes"), (["table", "llama3.1:8b", "--sizes", "nan"], "--sizes"),
    (["table", "llama3.1:8b", "--sizes", "0"], "out of range"),
    (["table", "llama3.1:8b", "--plot", "/nonexistent-folder/x.svg"], "no folder"),
    (["table", "llama3.1:8b", "--plot", "/tmp/" + "a" * 300 + ".svg"], "over 255 bytes"),
    (["plan", "llama3.1:8b", "--gpu", "H100", "--nodes", "99999999"], "at most 1,024"),
    (["plan", "llama3.1:8b", "--gpu", "H100", "--reserve", "²"], "--reserve"),
    (["plan", "llama3.1:8b", "--gpu", "H100", "--ram-bandwidth", "nan"], "--ram-bandwidth"),
    (["plan", "llama3.1:8b", "--gpu", "H100", "--min-ctx", "1_024"], "--min-ctx"),
    (["models", "--limit", "5"], "unrecognized arguments"), (["models", "--kind", "nan"], "invalid choice"),
])
def test_hardware_and_contradictions_are_one_line_errors(argv, words):
    rc, _, err = assert_promise(argv, "flags:hardware")
    assert rc == 2 and words in err, (argv, err)


def test_same_quant_twice_and_bf16_on_the_default_engine_work():
    for argv in (["estimate", "llama3.1:8b:Q4_K_M", "--quant", "q4_k_m"], ["estimate", "llama3.1:8b:bf16", "--quant", "BF16"],
                 ["estimate", "llama3.1:8b", "--quant", "BF16"], ["estimate", "llama3.1:8b", "--quant", "F16"],
                 ["estimate", "llama3.1:8b", "--quant", "F32"], ["estimate", "llama3.1:8b:BF16"]):
        rc, out, err = assert_promise([*argv, "--vram", "24GiB"], "flags:units")
        assert rc == 0, (argv, err)


def test_gb_and_gib_mean_the_same_in_vram_and_sizes():
    """24GB is 24 x 10^9 bytes and 24GiB 24 x 2^30 in --vram and table --sizes alike (the table used to read
    24GB as 24 GiB); a bare --sizes number is a card as sold (24 GiB, like the default list)."""
    import json

    csv = run(["table", "llama3.1:8b", "--kind", "limits", "--csv", "--sizes", "24GB,24GiB,24"])[1].splitlines()
    mem = [int(line.split(",")[1]) for line in csv[1:4]]
    assert mem == [24 * 10**9, 24 * 2**30, 24 * 2**30]
    est = json.loads(run(["estimate", "llama3.1:8b", "--vram", "24GB", "--json"])[1])
    assert est["devices"][0]["memory_bytes"] == 24 * 10**9
    est = json.loads(run(["estimate", "llama3.1:8b", "--vram", "24GiB", "--json"])[1])
    assert est["devices"][0]["memory_bytes"] == 24 * 2**30


@given(st.one_of(st.sampled_from(["24", "1", "1023", "0.5", "24 GB", "24gib", "24G", "1e3GB", "inf", "nan", "-24GiB",
                                  "24GiB,", ",", "²GiB", "٢٤GiB", "24 what", "99999999999999999999TB"]),
                 st.text(max_size=10)))
@HYPO
def test_vram_sizes_hold_the_promise(text):
    rc, _, err = assert_promise(["estimate", "llama3.1:8b", "--vram", text], "flags:units")
    m = text.strip()
    if m.isdigit() and m.isascii() and 0 < int(m) < 2**20:
        assert rc == 2 and "what?" in err


@pytest.mark.parametrize("engine,flag,value", [
    ("llama.cpp", "-c", "2147483647"), ("llama.cpp", "-ncmoe", "2147483647"), ("llama.cpp", "-ub", "2147483647"),
    ("vllm", "--max-model-len", "2147483647"), ("vllm", "--num-gpu-blocks-override", "2147483647"),
    ("vllm", "--max-cudagraph-capture-size", "1048576"), ("vllm", "--max-num-seqs", "1048576"),
    ("sglang", "--chunked-prefill-size", "1048576"), ("sglang", "--context-length", "2147483647"),
    ("ollama", "--num-ctx", "2147483647"), ("mlx", "--max-kv-size", "2147483647"),
    ("transformers", "--max-length", "2147483647"),
])
def test_largest_accepted_values_answer_quickly(engine, flag, value):
    """The top of each range is accepted and answers like any other value (2^31 contexts, 2^20 chunks)."""
    rc, _, err = assert_promise(["estimate", "llama3.1:8b", "--engine", engine, "--vram", "80GiB", flag, value],
                                f"flags:{engine}")
    assert rc in (0, 2), err


def test_plot_path_checked_before_the_tables(tmp_path):
    t = time.perf_counter()
    rc, out, err = assert_promise(["table", "llama3.1:8b", "--plot", str(tmp_path / "no" / "x.svg")], "flags:output")
    assert rc == 2 and out == "" and time.perf_counter() - t < 1.0





# ---------------------------------------------------------------------------------------------------------
# Output, encodings and bounds, in child processes (the streams are the child's own)

def _child(args: list[str], env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    TRIED["output"] += 1
    return subprocess.run([sys.executable, "-m", "oomkit", *args], env={**os.environ, **(env or {})}, timeout=60,
                          **kw)


def test_ascii_terminal_gets_every_estimate():
    """A stdout that cannot encode '·' (PYTHONIOENCODING=ascii, a Windows console) gets a replacement character,
    not a UnicodeEncodeError."""
    r = _child(["estimate", "llama3.1:8b", "--vram", "24GiB"], env={"PYTHONIOENCODING": "ascii"},
               capture_output=True)
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b"Llama 3.1 8B" in r.stdout
    assert all(b < 128 for b in r.stdout)
    r = _child(["estimate", "llama3.1:8b\u00b7", "--vram", "24GiB"], env={"PYTHONIOENCODING": "ascii"},
               capture_output=True)
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1 and b"Traceback" not in r.stderr


def test_full_disk_and_closed_stdout():
    """stdout on /dev/full: one line and exit 2. stdout closed (`>&-`): nothing to write to, no traceback, the
    exit code still says the verdict (scripts use `oomkit check ... >&-` like `grep -q`)."""
    with open("/dev/full", "w") as full:
        r = _child(["estimate", "llama3.1:8b", "--vram", "24GiB"], stdout=full, stderr=subprocess.PIPE)
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1 and b"No space left" in r.stderr, r.stderr
    r = _child(["check", "llama3.1:8b", "--vram", "8GiB", "-c", "131072", "-np", "1", "-fit", "off"],
               stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert r.returncode == 1 and b"Traceback" not in r.stderr, r.stderr
    r = _child(["estimate", "llama3.1:8b", "--vram", "24GiB"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
               preexec_fn=lambda: os.close(2))
    assert r.returncode == 0 and r.stderr == b""


def test_broken_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-m", "oomkit", "table", "llama3.1:8b", "--kind", "context", "--vram",
                          "24GiB"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    TRIED["output"] += 1
    p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) in (0, 1) and b"Traceback" not in err, err


def test_hostile_counts_cost_no_time_or_memory():
    """The issue's runaway inputs, timed and measured in a child: within a second of start-up, under 200 MB."""
    base = run_oomkit("estimate", "llama3.1:8b", "--vram", "24GiB", timeout=60)
    assert base.rc == 0, base.describe()
    for args in (["check", "llama3.1:8b", "--gpu", "99999999999x H100"], ["check", "llama3.1:8b", "--gpu", "100000x H100"],
                 ["estimate", "qwen3-30b-a3b", "--vram", "24GiB", "-ncmoe", "1000000"],
                 ["estimate", "llama3.1:8b", "--vram", "24GiB," * 20000],
                 ["plan", "llama3.1:8b", "--gpu", "H100", "--nodes", "99999999"],
                 ["estimate", "llama3.1:8b", "--engine", "mlx", "--vram", "24GiB", "--ctx", "100000000",
                  "--prefill-step-size", "1"]):
        TRIED["output"] += 1
        r = run_oomkit(*args, timeout=60)
        assert r.rc in (0, 2) and "Traceback" not in r.stderr, r.describe()
        assert r.seconds < base.seconds + 1.0 and r.max_rss_mb < 200, r.describe()


def test_zz_report_counts(capsys):
    with capsys.disabled():
        print("\nhostile flag inputs tried:", dict(sorted(TRIED.items())), "total", sum(TRIED.values()))
    assert sum(TRIED.values()) > 0


@pytest.mark.parametrize("value,split", [("3,1", (3.0, 1.0)), ("3,,1", (3.0, 1.0)), ("3/1", (3.0, 1.0)),
                                         ("3,1,", (3.0, 1.0)), ("1", (1.0,))])
def test_tensor_split_parts_as_llama_cpp_splits_them(value, split):
    from oomkit.engines.llamacpp.args import parse_args

    assert parse_args(["-ts", value])[2].tensor_split == split


@pytest.mark.parametrize("value", [",,,", ",3,1", "/"])
def test_tensor_split_with_an_empty_first_part_is_refused_as_llama_cpp_refuses_it(value):
    # common/arg.cpp: the text before the first separator is a part, and std::stof("") throws
    from oomkit.engines.llamacpp.args import parse_args

    with pytest.raises(SettingsError, match="not a number"):
        parse_args(["-ts", value])
