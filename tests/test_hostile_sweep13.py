"""Hostile input, thirteenth sweep: 73 malformed inputs none of the earlier hostile tests tries in this form, aimed at
the readers (GGUF header and file, safetensors header, config.json, the GPU catalog), the subcommands' options, diagnose
on odd files and streams, the web API (FastAPI's TestClient) and the MCP server's tools (called in process). Each must
answer correctly or refuse in one line: exit 2 with one `oomkit: error:` line (CLI), a 4xx with {"error": ...} (web
API) or a one-line tool error (MCP), within seconds.

Measured (2026-12-07) before this sweep's changes: 34 of the 73 failed (no traceback on the CLI; one a right refusal
for the wrong reason):
- hangs: `diagnose` of a 300 MiB log (the whole file decoded and scanned) or of an endless stdin, and vLLM's
  `--config` naming a FIFO or a link to /dev/zero (read with read_text);
- a bug exit: a vLLM capture size of -1 (math domain error), and a size of 0 taken as a batch size;
- HTTP 500: an uploaded config.json holding Infinity or a NaN factor (OverflowError), by the API and the calculator
  page's upload;
- silent guesses: "ⅡＸ H100" read as one H100 (the numeral dropped as punctuation), tie_word_embeddings "false" /
  "no" (strings) read as true, a GGUF token_embd of 0 rows as a vocabulary of 0, a GGUF whose split.no is past its
  split.count as a whole model, an MCP `ctx: true` or `min_ctx: false` as a number, a 70B config.json beside a
  model.safetensors of its embedding alone as a 1.05B model (now: weights computed from the config, said so);
- wrong or unbounded messages: a 5,000-digit integer in a safetensors header reported as "nested too deeply", a GGUF
  architecture of 200,000 bytes echoed whole in the error line, "²⁴GB" refused as an unknown GPU rather than for its
  superscripts, MCP argument errors in pydantic's 4-line form (and "Error executing tool estimate" for no arguments),
  a vLLM drafter's config.json with NaN as "its config lacks cannot convert float NaN to integer";
- SGLang's --json-model-override-args ignored without a word, JSON or not (now: not JSON refused, overrides named
  as not counted);
- the web hub reading files of the server named inside a command (-md / --model-draft: the draft's weights joined the
  answer; --mmproj; vLLM --config and --speculative-config's model), which it promises never to open (--lora too);
- binary text to POST /api/diagnose answered 200 where the CLI refuses it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import struct
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

L = H.Llama()
_LLAMA8 = ["--", "llama-server", "-hf", "Qwen/Qwen3-8B-GGUF:Q4_K_M"]
_VLLM8 = ["--", "vllm", "serve", "Qwen/Qwen3-8B"]


def _gguf_meta(tmp: Path, meta, tensors=None, full: bool = True) -> list[str]:
    p = tmp / "m.gguf"
    H.write_gguf(p, meta, L.tensors() if tensors is None else tensors, full=full)
    return ["estimate", str(p), "--vram", "24GiB"]


def _gguf(tmp: Path, **override) -> list[str]:
    return _gguf_meta(tmp, L.meta(**override))


def _with_tensor(tmp: Path, i: int, tensor) -> list[str]:
    ts = L.tensors()
    ts[i] = tensor
    return _gguf_meta(tmp, L.meta(), ts)


def _split_parts(tmp: Path, make_second) -> list[str]:
    """The first part of a 2-part gguf-split model whose second part is what `make_second` makes of its path."""
    first = tmp / "m-00001-of-00002.gguf"
    H.write_gguf(first, L.meta(**{"split.count": (H.U16, 2), "split.no": (H.U16, 0),
                                  "split.tensors.count": (H.I32, len(L.tensors()) + 1)}), L.tensors())
    make_second(tmp / "m-00002-of-00002.gguf")
    return ["estimate", str(first), "--vram", "24GiB"]


def _st_header(doc: str | object) -> bytes:
    raw = (doc if isinstance(doc, str) else json.dumps(doc)).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def _st_dir(tmp: Path, raw: bytes) -> list[str]:
    """A Llama checkpoint folder whose model.safetensors holds `raw`."""
    H.write_config(tmp / "m", H.llama_config())
    (tmp / "m" / "model.safetensors").write_bytes(raw)
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


def _config(tmp: Path, cfg: dict | str, engine: str = "vllm") -> list[str]:
    H.write_config(tmp / "m", cfg if isinstance(cfg, str) else json.dumps(cfg))
    return ["estimate", str(tmp / "m"), "--engine", engine, "--vram", "80GiB"]


def _config_bytes(tmp: Path, raw: bytes) -> list[str]:
    (tmp / "m").mkdir()
    (tmp / "m" / "config.json").write_bytes(raw)
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


def _log(tmp: Path, raw: bytes, name: str = "x.log") -> list[str]:
    (tmp / name).write_bytes(raw)
    return ["diagnose", str(tmp / name)]


def _fifo(p: Path) -> Path:
    os.mkfifo(p)
    return p


_DEEPSEEK = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 64,
             "intermediate_size": 128, "moe_intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 4, "vocab_size": 256, "max_position_embeddings": 4096, "kv_lora_rank": -512,
             "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16, "n_routed_experts": 8,
             "num_experts_per_tok": 2, "first_k_dense_replace": 1, "n_shared_experts": 1, "torch_dtype": "bfloat16"}

# (id, argv from tmp_path, stdin or None, (what, words)): "refuses" -> exit 2 and the line matches `words`
# (a regex); "answers" -> exit 0 / 1 and the output matches `words`
CASES = [
    # ---- GGUF header (gguf.cpp gguf_init_from_file_impl) ----
    # general.alignment 2^31 (a power of 2, so gguf.cpp takes it): the first tensor's offset then cannot be 9216
    ("gguf-alignment-2^31", lambda t: _gguf(t, **{"general.alignment": (H.U32, 1 << 31)}), None,
     ("refuses", r"data offset 9216, expected 2147483648")),
    ("gguf-alignment-u64", lambda t: _gguf(t, **{"general.alignment": (H.U64, 32)}), None,
     ("refuses", r"general\.alignment must be u32, not u64")),
    # was: the whole 200,000-byte name echoed in the error line
    ("gguf-arch-200k", lambda t: _gguf_meta(t, [("general.architecture", H.STR, "l" * 200_000), *L.meta()[1:]]),
     None, ("refuses", r"^oomkit: error: .{0,300}is not supported yet$")),
    ("gguf-arch-empty", lambda t: _gguf_meta(t, [("general.architecture", H.STR, ""), *L.meta()[1:]]), None,
     ("refuses", r"lacks general\.architecture")),
    ("gguf-head-count-f32-array", lambda t: _gguf(t, **{"attention.head_count": (H.ARR, (H.F32, [4.0, 4.0]))}), None,
     ("refuses", r"llama\.attention\.head_count must hold 2 non-negative integers")),
    # was: answered with a vocabulary of 0 tokens (llama.cpp check_tensor_dims: token_embd wants {n_embd, n_vocab})
    ("gguf-token-embd-0-rows", lambda t: _with_tensor(t, 0, ("token_embd.weight", (64, 0), H.Q4_0_T)), None,
     ("refuses", r"token_embd\.weight has 0 rows")),
    ("gguf-tensor-2^51-bytes", lambda t: _gguf_meta(t, L.meta(), [("token_embd.weight", (1 << 31, 1 << 20), H.Q4_0_T),
                                                                   *L.tensors()[1:]], full=False), None,
     ("refuses", r"truncated GGUF: .* header says at least 1,266,637,395,\d{3},\d{3}")),
    ("gguf-split-part-2-a-directory", lambda t: _split_parts(t, lambda p: p.mkdir()), None,
     ("refuses", r"m-00002-of-00002\.gguf: is a directory, not a regular file")),
    ("gguf-split-part-2-a-fifo", lambda t: _split_parts(t, _fifo), None,
     ("refuses", r"m-00002-of-00002\.gguf: is a FIFO \(named pipe\), not a regular file")),
    # was: answered as a whole model (llama.cpp: "illegal split file idx")
    ("gguf-split-no-past-count", lambda t: _gguf(t, **{"split.count": (H.U16, 2), "split.no": (H.U16, 5)}), None,
     ("refuses", r"split\.no = 5 is not a part of split\.count = 2")),
    # ---- safetensors header (safetensors tensor.rs) ----
    # was: "invalid JSON (nested too deeply)"
    ("st-int-of-5000-digits", lambda t: _st_dir(t, _st_header('{"a": {"dtype": "BF16", "shape": [' + "9" * 5000
                                                              + '], "data_offsets": [0, 2]}}')), None,
     ("refuses", r"corrupt safetensors header: invalid JSON \(an integer of 5000 digits\)")),
    ("st-header-length-0", lambda t: _st_dir(t, struct.pack("<Q", 0)), None,
     ("refuses", r"corrupt safetensors header: invalid JSON")),
    ("st-empty-file", lambda t: _st_dir(t, b""), None, ("refuses", r"not a safetensors file: 0 bytes")),
    ("st-shape-2^80", lambda t: _st_dir(t, _st_header({"a": {"dtype": "BF16", "shape": [1 << 40, 1 << 40],
                                                             "data_offsets": [0, 1 << 81]}})), None,
     ("refuses", r"truncated safetensors file model\.safetensors")),
    ("st-dtype-lowercase", lambda t: _st_dir(t, _st_header({"a": {"dtype": "bf16", "shape": [1],
                                                                  "data_offsets": [0, 2]}})), None,
     ("refuses", r"unsupported safetensors dtype 'bf16'")),
    ("st-offset-nan", lambda t: _st_dir(t, _st_header('{"a": {"dtype": "BF16", "shape": [1], "data_offsets": [0, NaN]}}')),
     None, ("refuses", r"tensor 'a' has data_offsets \[0, nan\]")),
    # ---- config.json (transformers PretrainedConfig) ----
    # was: bool("false") is True: the embeddings read as tied
    ("cfg-tie-string-false", lambda t: _config(t, H.llama_config(tie_word_embeddings="false")), None,
     ("refuses", r"tie_word_embeddings='false' is not true or false")),
    ("cfg-tie-string-no-llamacpp", lambda t: _config(t, H.llama_config(tie_word_embeddings="no"), "llama.cpp"), None,
     ("refuses", r"tie_word_embeddings='no' is not true or false")),
    ("cfg-utf8-bom", lambda t: _config(t, "\ufeff" + json.dumps(H.llama_config())), None,
     ("refuses", r"config\.json is not valid JSON \(Unexpected UTF-8 BOM")),
    ("cfg-utf16", lambda t: _config_bytes(t, json.dumps(H.llama_config()).encode("utf-16")), None,
     ("refuses", r"config\.json is not valid UTF-8")),
    ("cfg-gptq-bits-3.5", lambda t: _config(t, H.llama_config(quantization_config={"quant_method": "gptq", "bits": 3.5,
                                                                                   "group_size": 128})), None,
     ("refuses", r"bits = 3\.5: not a whole number")),
    ("cfg-quant-method-number", lambda t: _config(t, H.llama_config(quantization_config={"quant_method": 5})), None,
     ("refuses", r"unknown quant_method 5")),
    ("cfg-kv-lora-rank-negative", lambda t: _config(t, _DEEPSEEK), None,
     ("refuses", r"kv_lora_rank=-512 is not a non-negative integer")),
    ("cfg-layer-types-numbers", lambda t: _config(t, H.llama_config(layer_types=[1, 2])), None,
     ("refuses", r"unknown layer type 1 in layer_types")),
    ("cfg-yarn-original-0", lambda t: _config(t, H.llama_config(rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 0})), None,
     ("refuses", r"original_max_position_embeddings=0 is not a positive integer")),
    ("cfg-text-config-a-string", lambda t: _config(t, {"model_type": "gemma3", "text_config": "x"}), None,
     ("refuses", r"config\.json lacks num_hidden_layers")),
    # ---- GPU names (hardware/catalog.py) ----
    # was: "ⅡＸ H100" read as one H100 (the numeral dropped as punctuation)
    ("gpu-roman-numeral-count", lambda t: ["check", "Qwen/Qwen3-8B", "--gpu", "ⅡＸ H100"], None,
     ("refuses", r"a GPU name cannot hold the numeral 'Ⅱ'")),
    # was: "unknown GPU 'RTX 4090 ²⁴GB'" (a right refusal, for the wrong reason)
    ("gpu-superscript-size", lambda t: ["check", "Qwen/Qwen3-8B", "--gpu", "RTX 4090 ²⁴GB"], None,
     ("refuses", r"a GPU name cannot hold the numeral '²'")),
    ("gpu-size-1e309", lambda t: ["check", "Qwen/Qwen3-8B", "--gpu", "H100 1e309GB"], None,
     ("refuses", r"unknown GPU 'H100 1e309GB'")),
    ("vram-inf", lambda t: ["check", "Qwen/Qwen3-8B", "--vram", "inf GiB"], None, ("refuses", r"inf GiB")),
    # ---- engine flags and oomkit's options ----
    # was: internal error (ValueError: math domain error)
    ("vllm-capture-size-negative", lambda t: ["estimate", "--gpu", "H100", *_VLLM8, "--compilation-config",
                                              '{"cudagraph_capture_sizes": [-1]}'], None,
     ("refuses", r"capture size -1 is not a positive batch size")),
    ("vllm-capture-size-0", lambda t: ["estimate", "--gpu", "H100", *_VLLM8, "--cudagraph-capture-sizes", "0"], None,
     ("refuses", r"capture size 0 is not a positive batch size")),
    # was: both ignored without a word (SGLang's ModelConfig json.loads the text and merges it into the HF config)
    ("sglang-override-args-not-json", lambda t: ["estimate", "--gpu", "H100", "--", "python", "-m",
                                                 "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                                                 "--json-model-override-args", "{"], None,
     ("refuses", r"--json-model-override-args '\{': not JSON")),
    ("sglang-override-args-uncounted", lambda t: ["estimate", "--gpu", "H100", "--json", "--", "python", "-m",
                                                  "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                                                  "--json-model-override-args", '{"num_hidden_layers": 4}'], None,
     ("answers", r"not counted in this estimate.*the config fields it overrides: num_hidden_layers")),
    ("llama-ts-1e400", lambda t: ["estimate", "--vram", "24GiB,24GiB", *_LLAMA8, "-ts", "1e400,1"], None,
     ("refuses", r"tensor-split|1e400")),
    ("llama-ngl-inf", lambda t: ["estimate", "--vram", "24GiB", *_LLAMA8, "-ngl", "inf"], None, ("refuses", r"inf")),
    ("plan-limit-0", lambda t: ["plan", "qwen3:8b", "--gpu", "RTX 4090", "--limit", "0"], None,
     ("refuses", r"limit")),
    ("table-sizes-empty", lambda t: ["table", "qwen3:8b", "--sizes", ""], None, ("refuses", r"sizes")),
    ("serve-port-99999", lambda t: ["serve", "--port", "99999"], None, ("refuses", r"port")),
    ("models-kind-nope", lambda t: ["models", "--kind", "nope"], None, ("refuses", r"nope")),
    # ---- diagnose on odd files ----
    ("diag-gzip", lambda t: _log(t, b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4, "x.log.gz"), None,
     ("refuses", r"not text \(binary or garbled data\)")),
    ("diag-fifo", lambda t: ["diagnose", str(_fifo(t / "x.log"))], None, ("refuses", r"FIFO")),
    ("diag-dev-urandom", lambda t: ["diagnose", "/dev/urandom"], None, ("refuses", r"character device")),
    ("diag-utf32-bom", lambda t: _log(t, "CUDA out of memory. Tried to allocate 2.00 GiB".encode("utf-32")), None,
     ("refuses|answers", None)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_input_answers_or_refuses_in_one_line(tmp_path, case):
    cid, make, stdin, (what, words) = case
    rc, out, err = run_cli(*make(tmp_path), stdin=stdin)
    one_line_or_answer(rc, err, cid)
    if what == "refuses":
        assert rc == 2, (cid, rc, out[:300])
        if words:
            assert re.search(words, err.strip()), (cid, err)
    elif what == "answers":
        assert rc in (0, 1), (cid, err)
        if words:
            assert re.search(words, out), (cid, out[:600])


# ---- in a child process, with a deadline: what could hang or fill the memory ----


def _sparse(p: Path, size: int, head: bytes = b"") -> Path:
    with open(p, "wb") as f:
        f.write(head)
        f.truncate(size)
    return p


def test_diagnose_of_a_300_mib_log_is_refused_at_once(tmp_path):
    """was: the whole file read, decoded and scanned (killed after 8 s)"""
    p = _sparse(tmp_path / "big.log", 300 << 20, b"CUDA out of memory\n")
    H.assert_refused(H.run_oomkit("diagnose", str(p)), r"larger than the 64 MiB")


def test_diagnose_of_an_endless_stdin_is_refused_at_once():
    """was: `cat /dev/zero | oomkit diagnose -` read until the memory ran out"""
    with open("/dev/zero", "rb") as zero:
        H.assert_refused(H.run_oomkit("diagnose", "-", stdin=zero), r"stdin: larger than the 64 MiB")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_vllm_config_file_that_is_no_file(tmp_path, kind):
    """vllm serve --config names a YAML file; a FIFO with no writer or a link to /dev/zero was read with read_text
    (a hang)."""
    p = tmp_path / "c.yaml"
    if kind == "fifo":
        os.mkfifo(p)
    else:
        p.symlink_to("/dev/zero")
    r = H.run_oomkit("estimate", "--gpu", "H100", *_VLLM8, "--config", str(p), timeout=10)
    H.assert_refused(r, r"FIFO|character device")


# ---- fullwidth digits in a GPU name: read as the ASCII digits they stand for ----


@pytest.mark.parametrize("wide,ascii_", [("２x H100", "2x H100"), ("RTX 4090 ４８GB", "RTX 4090 48GB"),
                                         ("Ｈ１００", "H100")])
def test_fullwidth_digits_in_a_gpu_name_read_as_digits(wide, ascii_):
    """Fullwidth forms, as a CJK input method types them, are the ASCII they stand for (the first two were read so
    already, by \\d and int(); "Ｈ１００" was refused as an unknown GPU)"""
    rc_w, out_w, err_w = run_cli("estimate", "qwen3:8b", "--gpu", wide, "--json")
    rc_a, out_a, _ = run_cli("estimate", "qwen3:8b", "--gpu", ascii_, "--json")
    assert rc_w == rc_a == 0, err_w
    assert [d["memory_bytes"] for d in json.loads(out_w)["devices"]] == \
        [d["memory_bytes"] for d in json.loads(out_a)["devices"]]


def test_a_70b_config_beside_a_safetensors_of_its_embedding_only(tmp_path):
    """was: "1.05B params · weights safetensors BF16", the one tensor in the file taken as the 70B's weights"""
    H.write_config(tmp_path / "m", H.LLAMA_70B)
    H.write_safetensors(tmp_path / "m" / "model.safetensors", [("model.embed_tokens.weight", [128256, 8192])])
    rc, out, err = run_cli("estimate", str(tmp_path / "m"), "--engine", "vllm", "--gpu", "H100", "--json")
    assert rc in (0, 1), err
    d = json.loads(out)
    assert d["model"]["params_total"] > 70e9 and not d["model"]["weights_exact"]
    assert "the safetensors hold tensors of 0 of the 80 layers config.json declares" in out


def test_vllm_drafter_config_with_nan(tmp_path):
    """was: "its config lacks cannot convert float NaN to integer" (the drafter's config.json read unbounded)"""
    H.write_config(tmp_path / "d", json.dumps(H.llama_config()).replace('"hidden_size": 64', '"hidden_size": NaN'))
    spec = json.dumps({"model": str(tmp_path / "d"), "num_speculative_tokens": 2, "method": "eagle"})
    rc, out, err = run_cli("estimate", "--gpu", "H100", *_VLLM8, "--speculative-config", spec)
    one_line_or_answer(rc, err, "drafter NaN")
    assert rc == 2 and "field 'hidden_size' is NaN" in err, err


# ---- the web API ----


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    return TestClient(create_app(), raise_server_exceptions=False)


def _error(r, status: int | tuple[int, ...] = (400, 413, 422)) -> str:
    statuses = status if isinstance(status, tuple) else (status,)
    assert r.status_code in statuses, (r.status_code, r.text[:400])
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"], body
    return body["error"]


_CFG = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 4096}


def _raw_json(client, path: str, text: str):
    return client.post(path, content=text.encode(), headers={"content-type": "application/json"})


def test_web_uploaded_config_with_infinity(client):
    """was: 500 (OverflowError: cannot convert float infinity to integer)"""
    body = json.dumps({"config": {**_CFG, "num_hidden_layers": 2}, "vram": "24GiB"}).replace('"num_hidden_layers": 2',
                                                                                          '"num_hidden_layers": Infinity')
    assert "'num_hidden_layers' is Infinity" in _error(_raw_json(client, "/api/estimate", body), 400)


def test_web_uploaded_config_with_a_nan_rope_factor(client):
    body = json.dumps({"config": {**_CFG, "num_hidden_layers": 2, "rope_scaling": {"rope_type": "linear",
                                                                                     "factor": 1}}})
    body = body.replace('"factor": 1', '"factor": NaN')
    assert "'rope_scaling.factor' is NaN" in _error(_raw_json(client, "/api/estimate", body), 400)


def test_web_calculator_upload_with_1e400(client):
    """was: 500 from the calculator page's upload"""
    text = json.dumps({**_CFG, "num_hidden_layers": 2}).replace('"num_hidden_layers": 2', '"num_hidden_layers": 1e400')
    r = client.post("/", data={"config": text})
    assert r.status_code == 400 and "num_hidden_layers" in r.text


@pytest.mark.parametrize("flags", ["-md {gguf}", "--model-draft {gguf}", "--mmproj {gguf}", "--lora {gguf}"])
def test_web_command_naming_a_server_file(client, tmp_path, flags):
    """was: the server read the GGUF named by -md (its draft weights joined the answer) or --mmproj"""
    gguf = L.write(tmp_path / "draft.gguf")
    cmd = f"llama-server -m qwen3:8b {flags.format(gguf=gguf)}"
    assert "reads as a file path" in _error(client.get("/api/estimate", params={"command": cmd, "vram": "24GiB"}), 400)
    assert "reads as a file path" in _error(client.post("/api/fit", json={"command": cmd, "vram": "8GiB"}), 400)


def test_web_vllm_config_and_drafter_paths(client, tmp_path):
    (tmp_path / "c.yaml").write_text("max_model_len: 4096\n")
    H.write_config(tmp_path / "drafter", H.llama_config())
    for cmd in (f"vllm serve Qwen/Qwen3-8B --config {tmp_path / 'c.yaml'}",
                "vllm serve Qwen/Qwen3-8B --speculative-config "
                f"'{{\"model\": \"{tmp_path / 'drafter'}\", \"num_speculative_tokens\": 2}}'"):
        assert "reads as a file path" in _error(client.get("/api/estimate", params={"command": cmd, "vram": "80GiB"}),
                                                400), cmd


def test_web_diagnose_binary_text_is_refused_as_the_cli_refuses_it(client):
    """was: 200 with "no out-of-memory message oomkit knows"; the CLI exits 2 (not text)"""
    assert "not text" in _error(client.post("/api/diagnose", json={"text": "\x00" * 1000}), 400)


def test_web_body_of_the_wrong_shape(client):
    assert "dictionary" in _error(client.post("/api/estimate", json=[1, 2]), 422)
    assert "dictionary" in _error(_raw_json(client, "/api/plan", "null"), 422)
    _error(_raw_json(client, "/api/estimate", '{"model": "llama3.1:8b", "ctx": ' + "9" * 5000 + "}"), 400)
    assert "command" in _error(client.post("/api/fit", json={"command": ["llama-server"]}), 422)


# ---- the MCP server's tools ----


def _tool(name: str, args) -> tuple[bool, str]:
    pytest.importorskip("mcp")
    from oomkit.web.mcp_server import build_server

    async def go():
        return await build_server().call_tool(name, args)

    try:
        return False, str(asyncio.run(go()))
    except Exception as e:  # noqa: BLE001 - the tool error, whatever the mcp release names it
        return True, str(e)


@pytest.mark.parametrize("name,args,words", [
    # was: pydantic's 4-line validation error
    ("estimate", {"model": "llama3.1:8b", "ctx": "abc", "vram": "24GiB"}, r"^estimate: ctx: .*integer"),
    ("estimate", {"model": 5, "vram": "24GiB"}, r"^estimate: model: .*string"),
    ("fit", {}, r"^fit: command: Field required"),
    # was: ctx true taken as a context of 1 token
    ("estimate", {"model": "llama3.1:8b", "ctx": True, "vram": "24GiB"}, r"^estimate: ctx: .*integer"),
    ("plan", {"model": "qwen3:8b", "gpu": "RTX 4090", "min_ctx": False}, r"^plan: min_ctx: .*integer"),
    # was: "Error executing tool estimate" and nothing more
    ("estimate", None, r"no model given: give model"),
])
def test_mcp_bad_arguments_are_one_line(name, args, words):
    failed, text = _tool(name, args)
    assert failed and "\n" not in text.strip(), text
    assert re.search(words, text.removeprefix(f"Error executing tool {name}: ")), text


def test_the_sweep_counts():
    inputs = len(CASES) + 2 + 2 + 3 + 2 + (1 + 1 + 1 + 4 + 2 + 1 + 4) + 6
    assert len(CASES) == 44 and inputs == 73 and len({c[0] for c in CASES}) == len(CASES)
