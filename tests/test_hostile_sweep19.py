"""Hostile input, nineteenth sweep: 30 malformed inputs through the command line (estimate, check, fit, diagnose), in
forms the earlier hostile tests do not try: a GGUF of version 4, of no tensors, cut inside its tensor table, a context
length written as a NaN float, an empty head-count array; a safetensors shape of 2.5; config.json fields that JSON
parsers other than the standard's accept (NaN, -Infinity) or of the wrong type (true, "32000", a 1e30 float, a list for
the whole file, 50 MB of trailing spaces); full-width digits for --ctx and vLLM's --max-model-len; "0x RTX 4090"; a
bad llama.cpp -ot regex, a negative --hf-overrides field, lms load --gpu 1.5, a flag given twice, an Ollama variable
past 2^64 or not a number; a path that climbs out of the tree; a UTF-16 log without its BOM; estimate's options given
to fit; a shell command substitution and a cookbook's {{MODEL_NAME}} where the model goes. Each must answer rightly
or refuse with exit 2 and one printable `oomkit: error:` line, never a traceback or exit 1 for a refusal.

Measured (2026-12-07) against the tree before this sweep's changes: 4 of the 30 answered wrongly (none broke the
one-line contract: no traceback, no exit 1, no hang), each with a refusal that said something false:
- `fit --ctx 8192 -- ...` and `fit --engine vllm -- ...` were refused as "unexpected argument before --: '8192'"
  (and, with no command after --, as "--ctx takes no value (it is not an oomkit option, nor a llama.cpp flag with a
  value)"): both are options of estimate and check, which fit reads from the engine command after --; the refusal
  now says so (commands/_model_args.py estimate_option, commands/fit.py);
- `vllm serve '$(cat model.txt)'` was "unknown model '$(cat model.txt)'": a command substitution is now refused as
  one, as an unset $VARIABLE is (model/resolve.py);
- `sglang.launch_server --model-path {{MODEL_NAME}}` (a cookbook's template) was "unknown model '{{MODEL_NAME}}'": a
  guide's placeholder is now refused as one (model/resolve.py, with tests/test_real_world_sweep21.py).
After: 30 right.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, run_cli  # noqa: F401 (autouse: no network, a fresh cache)

L = H.Llama()
V = ["--vram", "24GiB"]
M = "Qwen/Qwen3-8B"
VLLM = ["--engine", "vllm", *V]


def _refused(rc: int, err: str, pattern: str) -> None:
    """Exit 2 with exactly one line (as str.splitlines() and a terminal count them), printable, matching."""
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("oomkit: error:"), (rc, err)
    assert lines[0].isprintable(), repr(lines[0])
    assert pattern in lines[0], (pattern, lines[0])


def _file(tmp: Path, raw: bytes, name: str = "m.gguf") -> str:
    p = tmp / name
    p.write_bytes(raw)
    return str(p)


def _gguf(tmp: Path, meta=None, tensors=None, **kw) -> str:
    p = tmp / "m.gguf"
    H.write_gguf(p, L.meta() if meta is None else meta, L.tensors() if tensors is None else tensors, **kw)
    return str(p)


def _gguf_with(tmp: Path, key: str, vtype: int, value) -> str:
    return _gguf(tmp, [(k, t, v) if k != key else (k, vtype, value) for k, t, v in L.meta()])


def _model_dir(tmp: Path, text: str | None = None, **cfg) -> str:
    H.write_config(tmp / "m", H.llama_config(**cfg) if text is None else text)
    return str(tmp / "m")


def _config_text(**replace: str) -> str:
    """config.json text with a field's value written as given (NaN, -Infinity: what json.dumps would not write)."""
    text = json.dumps(H.llama_config())
    for key, raw in replace.items():
        value = H.llama_config()[key]
        assert f'"{key}": {json.dumps(value)}' in text
        text = text.replace(f'"{key}": {json.dumps(value)}', f'"{key}": {raw}')
    return text


def _safetensors(tmp: Path, header: dict) -> str:
    d = tmp / "m"
    H.write_config(d, H.llama_config())
    H.write_safetensors(d / "model.safetensors", [], header=header)
    return str(d)


FULL_WIDTH_8192 = "\uff18\uff11\uff19\uff12"

# (id, argv as a function of a temporary folder, the refusal's words)
FIXED = [
    ("fit-ctx", lambda t: ["fit", *V, "--ctx", "8192", "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"],
     "--ctx is an option of oomkit estimate and check, not of this command: fit reads the engine and its settings "
     "from the engine command after --"),
    ("fit-engine", lambda t: ["fit", *V, "--engine", "vllm", "--", "vllm", "serve", M],
     "--engine is an option of oomkit estimate and check"),
    ("cmd-command-substitution", lambda t: ["check", *V, "--", "vllm", "serve", "$(cat model.txt)"],
     "$(cat model.txt) is a shell command substitution: the shell puts there what `cat model.txt` prints"),
    ("cmd-cookbook-placeholder", lambda t: ["check", *V, "--", "python3", "-m", "sglang.launch_server",
                                            "--model-path", "{{MODEL_NAME}}", "--tp-size", "1"],
     "'{{MODEL_NAME}}' is a placeholder, as a guide writes one"),
]

RIGHT = [
    ("gguf-version-4", lambda t: ["estimate", _file(t, b"GGUF" + struct.pack("<I", 4) + bytes(16)), *V],
     "GGUF version 4 is newer than this oomkit reads (2-3)"),
    ("gguf-no-tensors", lambda t: ["estimate", _gguf(t, tensors=[]), *V], "the GGUF holds no tensors"),
    ("gguf-cut-in-tensor-table", lambda t: ["estimate", _gguf(t, cut=700), *V],
     "truncated GGUF header: tensor 'blk.0.attn_v.weight' needs 721 bytes but the file has 700"),
    ("gguf-context-length-f32-nan", lambda t: ["estimate", _gguf_with(t, "llama.context_length", H.F32,
                                                                      float("nan")), *V],
     "llama.context_length = nan is not a non-negative integer"),
    ("gguf-kv-heads-empty-array", lambda t: ["estimate", _gguf_with(t, "llama.attention.head_count_kv", H.ARR,
                                                                    (H.U32, [])), *V],
     "llama.attention.head_count_kv must hold 2 non-negative integers"),
    ("st-shape-fraction", lambda t: ["estimate", _safetensors(t, {"w": {"dtype": "BF16", "shape": [2.5, 2],
                                                                       "data_offsets": [0, 10]}}), *VLLM],
     "tensor 'w' has shape [2.5, 2]"),
    ("config-layers-nan", lambda t: ["estimate", _model_dir(t, _config_text(num_hidden_layers="NaN")), *VLLM],
     "field 'num_hidden_layers' is NaN, not a finite number"),
    ("config-intermediate-minus-infinity", lambda t: ["estimate", _model_dir(
        t, _config_text(intermediate_size="-Infinity")), *VLLM], "field 'intermediate_size' is -Infinity"),
    ("config-heads-true", lambda t: ["estimate", _model_dir(t, num_attention_heads=True), *VLLM],
     "num_attention_heads=True is not a non-negative integer"),
    ("config-vocab-string", lambda t: ["estimate", _model_dir(t, vocab_size="32000"), *VLLM],
     "vocab_size='32000' is not a non-negative integer"),
    ("config-a-list", lambda t: ["estimate", _model_dir(t, "[1, 2, 3]"), *VLLM],
     "config.json must hold a JSON object, not a list"),
    ("config-kv-heads-1e30", lambda t: ["estimate", _model_dir(t, num_key_value_heads=1e30), *VLLM],
     "num_key_value_heads = 1e+30 is more than the 16,384 KV heads oomkit models"),
    ("config-sliding-window-negative", lambda t: ["estimate", _model_dir(t, sliding_window=-4096), *VLLM],
     "sliding_window=-4096 is not a non-negative integer"),
    ("config-50-mb-of-spaces", lambda t: ["estimate", _model_dir(t, json.dumps(H.llama_config()) + " " * 50 * 2**20),
                                          *VLLM], "is larger than the 8 MiB oomkit reads"),
    ("ctx-full-width", lambda t: ["estimate", M, *V, "--ctx", FULL_WIDTH_8192],
     f"--ctx takes an integer, got '{FULL_WIDTH_8192}'"),
    ("gpu-0x", lambda t: ["estimate", M, "--gpu", "0x RTX 4090"], "GPU count must be at least 1"),
    ("llama-ot-bad-regex", lambda t: ["check", *V, "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-ot",
                                      "([=CPU"], "-ot ([=CPU: bad regular expression"),
    ("vllm-hf-overrides-negative", lambda t: ["check", *V, "--", "vllm", "serve", M, "--hf-overrides",
                                              '{"max_position_embeddings": -5}'],
     "--hf-overrides max_position_embeddings=-5: not a positive integer"),
    ("lms-gpu-fraction", lambda t: ["check", *V, "--", "lms", "load", "qwen3-8b", "--gpu", "1.5"],
     "lms load --gpu 1.5: oomkit reads max and off"),
    ("model-path-climbing-out", lambda t: ["estimate", "../../../../etc/passwd", *V],
     "../../../../etc/passwd: not a .gguf file, a config.json or a model directory"),
]


@pytest.mark.parametrize("case", FIXED + RIGHT, ids=[c[0] for c in FIXED + RIGHT])
def test_a_hostile_input_is_refused_in_one_printable_line(case, tmp_path):
    name, argv, pattern = case
    rc, _, err = run_cli(*argv(tmp_path))
    _refused(rc, err, pattern)


# ---- the right answers (beside the 20 refusals and 4 fixed above: 6, 30 in all; fit's own options a guard) ----

def _estimate(out: str) -> dict:
    return json.loads(out)["estimate"]


def test_full_width_digits_for_vllm_max_model_len_are_read_as_vllm_reads_them():
    """vLLM's --max-model-len goes through Python's int() (human_readable_int: a plain number is int(value)), which
    reads any Unicode decimal digits: "８１９２" is 8192 there, as it is here."""
    rc, out, err = run_cli("check", *V, "--json", "--", "vllm", "serve", M, "--max-model-len", FULL_WIDTH_8192)
    assert rc in (0, 1), err
    assert _estimate(out)["settings"]["max_model_len"] == 8192


def test_a_vllm_flag_given_twice_takes_the_last():
    """argparse: the later --max-model-len wins."""
    rc, out, err = run_cli("check", *V, "--json", "--", "vllm", "serve", M, "--max-model-len", "4096",
                           "--max-model-len", "8192")
    assert rc in (0, 1), err
    assert _estimate(out)["settings"]["max_model_len"] == 8192


@pytest.mark.parametrize("var,value,field,default", [
    ("OLLAMA_NUM_PARALLEL", "99999999999999999999", "num_parallel", 1),  # past 2^64: ParseUint fails
    ("OLLAMA_CONTEXT_LENGTH", "abc", None, None)])
def test_an_ollama_variable_that_is_no_unsigned_integer_takes_the_default(var, value, field, default):
    """envconfig.Uint: a value strconv.ParseUint cannot read is logged ("invalid environment variable, using
    default") and the default used; the answer says so."""
    rc, out, err = run_cli("check", *V, "--json", "--", f"{var}={value}", "ollama", "run", "qwen3:8b")
    assert rc in (0, 1), err
    e = _estimate(out)
    assert any(f"{var}='{value}' is not an unsigned integer" in w for w in e["warnings"]), e["warnings"]
    if field:
        assert e["settings"][field] == default


def test_a_command_pasted_with_crlf_line_ends_is_read():
    """A command copied from a Windows file: each word's trailing carriage return is whitespace to Python's int()
    (vLLM reads 4096) and to oomkit's reading of a model name (tests/test_hostile_sweep18.py)."""
    rc, out, err = run_cli("check", *V, "--json", "--", "vllm", "serve", M + "\r", "--max-model-len", "4096\r")
    assert rc in (0, 1), err
    e = _estimate(out)
    assert e["settings"]["max_model_len"] == 4096 and e["model"]["name"] == "Qwen3 8B"


def test_a_utf16_log_without_its_byte_order_mark_is_read(tmp_path):
    log = _file(tmp_path, "CUDA error: out of memory\n".encode("utf-16-le"), "server.log")
    rc, out, err = run_cli("diagnose", "--json", log)
    assert rc in (0, 1), err
    assert "CUDA error: out of memory" in out


def test_fit_still_takes_its_own_options():
    """--min-ctx and --reserve are fit's: read, not refused by the message above."""
    rc, out, err = run_cli("fit", *V, "--min-ctx", "8192", "--reserve", "1GiB", "--json", "--", "llama-server", "-hf",
                           "unsloth/Qwen3-8B-GGUF:Q4_K_M")
    assert rc in (0, 1), err


def test_the_sweep_counts():
    # 20 refusals right before, 4 fixed, and the 6 answers above (full-width, twice, two Ollama variables, CRLF,
    # UTF-16): 30
    assert len(FIXED) == 4 and len(RIGHT) == 20
