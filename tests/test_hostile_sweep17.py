"""Hostile input, seventeenth sweep: 30 malformed inputs through the command line (estimate, check, models,
diagnose), in forms the earlier hostile tests do not try: text that breaks a line for str.splitlines() and for a
terminal without being a newline (U+2028, NEL, a form feed), ANSI escapes and bidirectional controls in flag values
and model names, Hugging Face pages that name no repo, GGUF headers gguf.cpp rejects (a duplicate key, five
dimensions, an alignment of 3), safetensors and config.json values no checkpoint holds, digits of other scripts,
shell junk, a NUL in a GPU name, binary text to diagnose and a garbage engine variable in the environment. Each must
answer rightly or refuse with exit 2 and one printable `oomkit: error:` line, never a traceback or exit 1.

Measured (2026-12-07) before this sweep's changes: 10 of the 30 broke the contract or answered wrongly (no
traceback, no exit 1, no hang):
- the error line split in two: a U+2028 or NEL (U+0085) in a flag value or a query is a line break for
  str.splitlines() and for most terminals, and the message quoted it raw (`models --family 'a<U+2028>b'`,
  `models 'qwen<NEL>x'`, a llama-server flag `--foo<U+2028>bar`);
- control text written raw to the terminal: an ANSI escape in `--family` (ESC[2J clears the screen) or `--backend`,
  a right-to-left override in `--family` (the rest of the line shown reversed); all now written escaped (cli.py
  _one_line, for every error line);
- `estimate '<U+202E>Qwen/Qwen3-8B'` answered as Qwen3-8B under a name shown reversed: refused, as --gpu refuses a
  bidirectional control (model/resolve.py);
- https://huggingface.co/Qwen and hf.co/Qwen (a publisher's page) read as Qwen1.5 4B Chat (the bare "Qwen" is
  Ollama's tag `qwen`), and .../collections/Qwen/qwen3 (a list of repos) read as Qwen3-8B: refused as pages that
  name no model repo (model/resolve.py).
After: 28 right; 2 still wrong, in files outside this sweep (strict xfails below): a GGUF that lacks a tensor
llama.cpp requires (blk.0.attn_k.weight) is estimated where llama.cpp refuses it ("missing tensor"; model/checks.py
checks the header's counts, not the tensor list an architecture requires), and `CUDA_VISIBLE_DEVICES=5 vllm serve`
on two GPUs is estimated on one where CUDA shows no device (the engines' command readers do not apply the variable).
Later: both are refused now (model/checks.py holds the attention tensors an architecture requires; the variable
is applied to the planned and detected devices, hardware/visible.py).
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


def _refused(rc: int, err: str, pattern: str) -> None:
    """Exit 2 with exactly one line (as str.splitlines() and a terminal count them), printable, matching."""
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("oomkit: error:"), (rc, err)
    assert lines[0].isprintable(), repr(lines[0])
    assert pattern in lines[0], (pattern, lines[0])


def _gguf(tmp: Path, meta=None, tensors=None, **kw) -> str:
    p = tmp / "m.gguf"
    H.write_gguf(p, L.meta() if meta is None else meta, L.tensors() if tensors is None else tensors, **kw)
    return str(p)


def _model_dir(tmp: Path, **cfg) -> str:
    H.write_config(tmp / "m", H.llama_config(**cfg))
    return str(tmp / "m")


def _config_text(tmp: Path, old: str, new: str) -> str:
    H.write_config(tmp / "m", json.dumps(H.llama_config()).replace(old, new))
    return str(tmp / "m")


def _safetensors(tmp: Path, raw: bytes | None = None, header: dict | None = None) -> str:
    d = tmp / "m"
    H.write_config(d, H.llama_config())
    if raw is not None:
        (d / "model.safetensors").write_bytes(raw)
    else:
        H.write_safetensors(d / "model.safetensors", [], header=header)
    return str(d)


# (id, argv as a function of a temporary folder, the refusal's words; None: an answer, exit 0 or 1)
FIXED = [
    ("family-line-separator", lambda t: ["models", "--family", "a\u2028b"], "family a b"),
    ("query-next-line", lambda t: ["models", "qwen\x85x"], "matches qwen x"),
    ("flag-line-separator", lambda t: ["check", *V, "--", "llama-server", "-m", "qwen3:8b", "--foo\u2028bar"],
     "invalid argument: --foo bar"),
    ("family-ansi-clear-screen", lambda t: ["models", "--family", "a\x1b[2J"], "family a\\x1b[2J"),
    ("backend-ansi-colour", lambda t: ["estimate", M, *V, "--backend", "\x1b[31mcuda"], "--backend \\x1b[31mcuda"),
    ("family-right-to-left", lambda t: ["models", "--family", "\u202eabc"], "family \\u202eabc"),
    ("model-right-to-left", lambda t: ["estimate", "\u202eQwen/Qwen3-8B", *V, "--json"],
     "cannot hold the bidirectional control '\\u202e'"),
    ("hub-publisher-page", lambda t: ["estimate", "https://huggingface.co/Qwen", *V],
     "https://huggingface.co/Qwen is the page of the publisher Qwen, not a model repo"),
    ("ollama-hf-publisher", lambda t: ["estimate", "hf.co/Qwen", "--engine", "ollama", *V],
     "hf.co/Qwen is the page of the publisher Qwen"),
    ("hub-collection-page", lambda t: ["estimate", "https://huggingface.co/collections/Qwen/qwen3", *V],
     "is a Hugging Face collections page, not a model repo"),
]

RIGHT = [
    ("gguf-cut-at-10-bytes", lambda t: ["estimate", _gguf_bytes(t, b"GGUF\x03\x00\x00\x00\x00\x00"), *V],
     "truncated GGUF header"),
    ("gguf-duplicate-key", lambda t: ["estimate", _gguf(t, L.meta() + [("llama.block_count", H.U32, 2)]), *V],
     "duplicate key 'llama.block_count'"),
    ("gguf-five-dims", lambda t: ["estimate", _gguf(t, tensors=L.tensors() + [("x.weight", (1, 1, 1, 1, 32),
                                                                                H.F32_T)]), *V],
     "5 dims (GGML_MAX_DIMS is 4)"),
    ("gguf-alignment-3", lambda t: ["estimate", _gguf(t, L.meta() + [("general.alignment", H.U32, 3)]), *V],
     "general.alignment 3 is not a power of 2"),
    ("gguf-context-nan", lambda t: ["estimate", _gguf(t, L.meta(context_length=(H.F32, float("nan")))), *V],
     "context_length = nan is not a non-negative integer"),
    ("gguf-type-minus-1", lambda t: ["estimate", _gguf(t, tensors=L.tensors()[:-1] + [("output.weight", (64, 256),
                                                                                       -1)]), *V],
     "ggml type -1"),
    ("safetensors-header-1e12", lambda t: ["estimate", _safetensors(t, struct.pack("<Q", 10**12) + b"{}"),
                                           "--engine", "vllm", *V], "not a safetensors file"),
    ("safetensors-shape-negative-float", lambda t: ["estimate", _safetensors(t, header={
        "w": {"dtype": "BF16", "shape": [-5, 3.5], "data_offsets": [0, 10]}}), "--engine", "vllm", *V],
     "tensor 'w' has shape [-5, 3.5]"),
    ("config-layers-nan", lambda t: ["estimate", _config_text(t, '"num_hidden_layers": 2', '"num_hidden_layers": NaN'),
                                     "--engine", "vllm", *V], "'num_hidden_layers' is NaN"),
    ("config-context-1e30", lambda t: ["estimate", _model_dir(t, max_position_embeddings=10**30), "--engine", "vllm",
                                       *V], "is more than the 4,294,967,295 tokens of context"),
    ("config-head-dim-0", lambda t: ["estimate", _model_dir(t, head_dim=0), "--engine", "vllm", *V],
     "head_dim = 0"),
    ("config-rope-factor-word", lambda t: ["estimate", _model_dir(t, rope_scaling={
        "rope_type": "yarn", "factor": "four", "original_max_position_embeddings": 4096}), "--engine", "vllm", *V],
     "rope_scaling.factor='four' is not a positive number"),
    ("ctx-arabic-indic-digits", lambda t: ["estimate", M, *V, "--ctx", "\u0661\u0662\u0668"],
     "--ctx takes an integer"),
    ("vram-shell-junk", lambda t: ["estimate", M, "--vram", "24GiB; rm -rf /"], "cannot read size"),
    ("gpu-nul", lambda t: ["estimate", M, "--gpu", "H100\x00"], "cannot hold the control character '\\x00'"),
    ("diagnose-binary", lambda t: ["diagnose", "-"], "not text"),
    ("hf-overrides-nested-5000", lambda t: ["check", "--gpu", "RTX 4090", "--", "vllm", "serve", M, "--hf-overrides",
                                            "[" * 5000 + "]" * 5000], "nested too deeply"),
]


def _gguf_bytes(tmp: Path, raw: bytes) -> str:
    p = tmp / "m.gguf"
    p.write_bytes(raw)
    return str(p)


@pytest.mark.parametrize("case", FIXED + RIGHT, ids=[c[0] for c in FIXED + RIGHT])
def test_a_hostile_input_is_refused_in_one_printable_line(case, tmp_path):
    name, argv, pattern = case
    stdin = "\x00\x01\x02\xff\xfe" * 100 if name == "diagnose-binary" else None
    rc, _, err = run_cli(*argv(tmp_path), stdin=stdin)
    _refused(rc, err, pattern)


def test_a_garbage_engine_variable_in_the_environment_is_refused(monkeypatch):
    """os.environ is the engine's environment by default (--env): llama-server reads LLAMA_ARG_CTX_SIZE with
    std::stoi, which throws on 'abc' (common/arg.cpp)."""
    monkeypatch.setenv("LLAMA_ARG_CTX_SIZE", "abc")
    rc, _, err = run_cli("estimate", M, *V)
    _refused(rc, err, "LLAMA_ARG_CTX_SIZE 'abc': not an integer")


def test_a_gguf_without_a_tensor_llama_cpp_requires_is_refused(tmp_path):
    """A GGUF without blk.0.attn_k.weight (llama.cpp: 'missing tensor blk.0.attn_k.weight') was estimated, exit 0;
    model/checks.py now refuses it."""
    path = _gguf(tmp_path, tensors=[t for t in L.tensors() if "attn_k" not in t[0]])
    rc, _, err = run_cli("estimate", path, *V)
    _refused(rc, err, "attn_k")


def test_cuda_visible_devices_naming_no_device_is_refused():
    """CUDA_VISIBLE_DEVICES=5 on a 2-GPU machine leaves CUDA no device (vLLM: 'No CUDA GPUs are available'); it was
    estimated on CUDA0, exit 1 (request.py applies the variable now; tests/test_visible_devices.py)."""
    rc, _, err = run_cli("check", "--gpu", "2x RTX 4090", "--", "CUDA_VISIBLE_DEVICES=5", "vllm", "serve", M)
    _refused(rc, err, "CUDA_VISIBLE_DEVICES")


def test_pages_and_repos_of_the_hub_still_read_as_before():
    """The repo's page, a file in it, and an Ollama hf.co pull with its quant are still models."""
    for ref, engine, name, fmt in (("https://huggingface.co/Qwen/Qwen3-8B", "llama.cpp", "Qwen3 8B", "Q4_K_M"),
                                   ("https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json", "llama.cpp",
                                    "Qwen3 8B", "Q4_K_M"),
                                   ("hf.co/unsloth/Qwen3-8B-GGUF:Q8_0", "ollama", "Qwen3 8B", "Q8_0")):
        rc, out, err = run_cli("estimate", ref, "--engine", engine, *V, "--json")
        assert rc == 0, (ref, err)
        m = json.loads(out)["model"]
        assert m["name"] == name and m["weights_format"] == fmt, (ref, m["name"], m["weights_format"])


def test_a_file_named_with_a_bidirectional_control_on_this_machine_is_read(tmp_path, monkeypatch):
    """The control is refused in a name only: a file of that name on this machine is what the user points at."""
    monkeypatch.chdir(tmp_path)
    L.write(tmp_path / "m\u202e.gguf")
    rc, out, err = run_cli("estimate", "m\u202e.gguf", *V, "--json")
    assert rc == 0 and json.loads(out)["model"]["n_layers"] == 2, err


def test_the_sweep_counts():
    assert len(FIXED) == 10 and len(RIGHT) == 17  # with the environment variable and the two once-xfails: 30
