"""oomkit.model.hub against a local fake Hugging Face hub: config.json, safetensors and GGUF headers by range reads,
errors, offline mode, the cache. Nothing here reaches the real hub: HF_ENDPOINT points at a `http.server` in a
thread that answers the endpoints huggingface_hub calls (see tests/fixtures/hub/README.md)."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import gguf
import numpy as np
import pytest

from oomkit.errors import OomkitError
from oomkit.model import hub
from oomkit.model.gguf_header import read_gguf_header
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve
from tests.groundtruth import synth

FIXTURES = Path(__file__).parent / "fixtures" / "hub"
QWEN_CONFIG = json.loads((FIXTURES / "Qwen3-30B-A3B.config.json").read_text())
MODEL_INFO = json.loads((FIXTURES / "model_info.json").read_text())
CHUNK = 1 << 16


# ----------------------------------------------------------------------------------------------------------
# the fake hub
# ----------------------------------------------------------------------------------------------------------


@dataclass
class FakeFile:
    data: bytes = b""  # the file's first bytes; the rest (up to size) reads as zeros
    size: int | None = None
    path: Path | None = None  # or a file on disk (a sparse GGUF)

    def __post_init__(self):
        if self.size is None:
            self.size = self.path.stat().st_size if self.path else len(self.data)

    @property
    def lfs(self) -> bool:
        return self.size > 10 << 20 or self.path is not None

    def chunks(self, start: int, stop: int):
        if self.path is not None:
            with self.path.open("rb") as f:
                f.seek(start)
                while start < stop:
                    b = f.read(min(CHUNK, stop - start))
                    if not b:
                        return
                    start += len(b)
                    yield b
            return
        while start < stop:
            n = min(CHUNK, stop - start)
            b = self.data[start:start + n]
            yield b + bytes(n - len(b))
            start += n


@dataclass
class FakeRepo:
    files: dict[str, FakeFile]
    gated: str | bool = False
    status: int | None = None  # answer every request with this status
    hang: bool = False  # never answer (until the test ends)
    sha: str = ""

    def __post_init__(self):
        self.sha = self.sha or hashlib.sha1(repr(sorted(self.files)).encode()).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    query: dict[str, list[str]]


@dataclass
class FakeHub:
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    served: Counter = field(default_factory=Counter)  # body bytes sent per repo file
    granted_token: str = "hf_granted"
    missing_status: int = 404  # the real hub answers 401 to anonymous requests for a missing repo
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def add(self, repo_id: str, files: dict[str, FakeFile], **kw) -> FakeRepo:
        self.repos[repo_id] = FakeRepo(files, **kw)
        return self.repos[repo_id]

    # ---- request handling --------------------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(h.path)
        path = unquote(url.path)
        self.requests.append(Request(method, path, {k.lower(): v for k, v in h.headers.items()},
                                     parse_qs(url.query)))
        try:
            if h.headers.get("Authorization") == "Bearer hf_expired":
                return self.error(h, 401, "", "Invalid credentials in Authorization header", method)
            if m := re.match(r"^/api/models/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?$", path):
                return self.tree(h, m.group(1), m.group(2), m.group(3) or "")
            if m := re.match(r"^/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?$", path):
                return self.info(h, m.group(1), m.group(2) or "main", parse_qs(url.query))
            if m := re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path):
                return self.resolve(h, method, m.group(1), m.group(2), m.group(3))
            if m := re.match(r"^/cdn/([^/]+/[^/]+)/([0-9a-f]+)/(.+)$", path):
                repo = self.repos[m.group(1)]
                return self.content(h, method, repo, m.group(3))
            self.error(h, 404, "", "Not found")
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True

    def send(self, h, status: int, headers: dict[str, str], body: bytes = b"", method: str = "GET") -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if method != "HEAD" and body:
            h.wfile.write(body)

    def error(self, h, status: int, code: str, message: str, method: str = "GET") -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self.send(h, status, headers, json.dumps({"error": message}).encode(), method)

    def repo_or_fail(self, h, repo_id: str, method: str = "GET") -> FakeRepo | None:
        repo = self.repos.get(repo_id)
        if repo is None:
            self.error(h, self.missing_status, "RepoNotFound", "Repository not found", method)
            return None
        if repo.hang:
            self.release.wait(30)
            self.error(h, 504, "", "Gateway Timeout", method)
            return None
        if repo.status:
            self.error(h, repo.status, "", "Internal Error - We're working hard to fix this as soon as possible!",
                       method)
            return None
        return repo

    def info(self, h, repo_id: str, revision: str, query) -> None:
        repo = self.repo_or_fail(h, repo_id)
        if repo is None:
            return
        if revision not in ("main", repo.sha):
            return self.error(h, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
        blobs = query.get("blobs", [""])[0].lower() == "true"
        d = copy.deepcopy(MODEL_INFO)
        org = repo_id.split("/")[0]
        d.update(id=repo_id, modelId=repo_id, author=org, sha=repo.sha, gated=repo.gated)
        d.pop("safetensors", None)
        d["siblings"] = [self.sibling(name, f) if blobs else {"rfilename": name} for name, f in sorted(repo.files.items())]
        self.send(h, 200, {"Content-Type": "application/json"}, json.dumps(d).encode())

    def sibling(self, name: str, f: FakeFile) -> dict:
        s = {"rfilename": name, "blobId": hashlib.sha1(name.encode()).hexdigest(), "size": f.size}
        if f.lfs:
            s["lfs"] = {"sha256": hashlib.sha256(name.encode()).hexdigest(), "size": f.size, "pointerSize": 135}
        return s

    def tree(self, h, repo_id: str, revision: str, prefix: str) -> None:
        repo = self.repo_or_fail(h, repo_id)
        if repo is None:
            return
        out = []
        for name, f in sorted(repo.files.items()):
            if prefix and not name.startswith(prefix.rstrip("/") + "/"):
                continue
            e = {"type": "file", "oid": hashlib.sha1(name.encode()).hexdigest(), "size": f.size, "path": name}
            if f.lfs:
                e["lfs"] = {"oid": hashlib.sha256(name.encode()).hexdigest(), "size": f.size, "pointerSize": 135}
            out.append(e)
        self.send(h, 200, {"Content-Type": "application/json"}, json.dumps(out).encode())

    def resolve(self, h, method: str, repo_id: str, revision: str, name: str) -> None:
        repo = self.repo_or_fail(h, repo_id, method)
        if repo is None:
            return
        if revision not in ("main", repo.sha):
            return self.error(h, 404, "RevisionNotFound", f"Invalid rev id: {revision}", method)
        if repo.gated:
            auth = h.headers.get("Authorization")
            if auth != f"Bearer {self.granted_token}":
                status = 403 if auth else 401
                return self.error(h, status, "GatedRepo", f"Access to model {repo_id} is restricted. You must have "
                                  "access to it and be authenticated to access it. Please log in.", method)
        f = repo.files.get(name)
        if f is None:
            return self.error(h, 404, "EntryNotFound", f"{name} does not exist on \"{revision}\"", method)
        if f.lfs:  # LFS files: the hub redirects to its CDN, saying the real size and etag
            digest = hashlib.sha256(name.encode()).hexdigest()
            return self.send(h, 302, {"Location": f"/cdn/{repo_id}/{digest}/{name}", "X-Repo-Commit": repo.sha,
                                      "X-Linked-Size": str(f.size), "X-Linked-ETag": f'"{digest}"',
                                      "ETag": f'"{hashlib.sha1(name.encode()).hexdigest()}"'}, method=method)
        self.content(h, method, repo, name)

    def content(self, h, method: str, repo: FakeRepo, name: str) -> None:
        f = repo.files[name]
        start, stop, status = 0, f.size, 200
        headers = {"Accept-Ranges": "bytes", "ETag": f'"{hashlib.sha1(name.encode()).hexdigest()}"',
                   "X-Repo-Commit": repo.sha, "Content-Type": "application/octet-stream"}
        rng = h.headers.get("Range")
        if rng:
            m = re.match(r"^bytes=(\d+)-(\d*)$", rng.strip())
            start = int(m.group(1))
            stop = min(int(m.group(2)) + 1, f.size) if m.group(2) else f.size
            if start >= f.size:
                return self.send(h, 416, {"Content-Range": f"bytes */{f.size}"}, method=method)
            status = 206
            headers["Content-Range"] = f"bytes {start}-{stop - 1}/{f.size}"
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(stop - start))
        h.end_headers()
        if method == "HEAD":
            return
        for chunk in f.chunks(start, stop):
            h.wfile.write(chunk)
            self.served[name] += len(chunk)

    # ---- helpers for the tests ---------------------------------------------------------------------------

    def reset(self) -> None:
        self.requests.clear()
        self.served.clear()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.server.hub.handle(self, "GET")

    def do_HEAD(self) -> None:
        self.server.hub.handle(self, "HEAD")


# ----------------------------------------------------------------------------------------------------------
# the repos it serves
# ----------------------------------------------------------------------------------------------------------


def qwen3_moe_hf_tensors(cfg: dict):
    """(name, shape, layer) of a Qwen3-MoE checkpoint in transformers' names (modeling_qwen3_moe.py)."""
    H, V, L = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    E, F = cfg["num_experts"], cfg["moe_intermediate_size"]
    yield "model.embed_tokens.weight", [V, H], None
    for i in range(L):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", [H], i
        yield p + "self_attn.q_proj.weight", [nh * hd, H], i
        yield p + "self_attn.k_proj.weight", [nkv * hd, H], i
        yield p + "self_attn.v_proj.weight", [nkv * hd, H], i
        yield p + "self_attn.o_proj.weight", [H, nh * hd], i
        yield p + "self_attn.q_norm.weight", [hd], i
        yield p + "self_attn.k_norm.weight", [hd], i
        yield p + "post_attention_layernorm.weight", [H], i
        yield p + "mlp.gate.weight", [E, H], i
        for e in range(E):
            yield p + f"mlp.experts.{e}.gate_proj.weight", [F, H], i
            yield p + f"mlp.experts.{e}.up_proj.weight", [F, H], i
            yield p + f"mlp.experts.{e}.down_proj.weight", [H, F], i
    yield "model.norm.weight", [H], None
    yield "lm_head.weight", [V, H], None


def safetensors_bytes(tensors: list[tuple[str, list[int]]], dtype: str = "BF16", nbytes_per: int = 2) -> FakeFile:
    """A safetensors file written by hand: u64 header length, the JSON header, then the data (zeros)."""
    doc, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = int(np.prod(shape, dtype=np.int64)) * nbytes_per
        doc[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(doc, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the writer pads the header to 8 bytes
    head = struct.pack("<Q", len(raw)) + raw
    return FakeFile(head, len(head) + off)


def sharded_qwen_repo(n_shards: int = 16) -> tuple[dict[str, FakeFile], int, int]:
    """Qwen3-30B-A3B as the hub stores it: config.json, 16 BF16 shards and their index (built once: every test
    gets its own copy of the file table)."""
    files, total, n_params = _sharded_qwen_repo(n_shards)
    return dict(files), total, n_params


@functools.cache
def _sharded_qwen_repo(n_shards: int) -> tuple[dict[str, FakeFile], int, int]:
    ts = list(qwen3_moe_hf_tensors(QWEN_CONFIG))
    L = QWEN_CONFIG["num_hidden_layers"]
    shard_of = [0 if layer is None and i == 0 else n_shards - 1 if layer is None else layer * n_shards // L
                for i, (_, _, layer) in enumerate(ts)]
    files: dict[str, FakeFile] = {"config.json": FakeFile(json.dumps(QWEN_CONFIG, indent=2).encode()),
                                  "README.md": FakeFile(b"# Qwen3-30B-A3B\n"), "generation_config.json":
                                  FakeFile(b"{}")}
    weight_map, total = {}, 0
    for k in range(n_shards):
        name = f"model-{k + 1:05d}-of-{n_shards:05d}.safetensors"
        mine = [(n, s) for (n, s, _), sk in zip(ts, shard_of, strict=True) if sk == k]
        files[name] = safetensors_bytes(mine)
        weight_map.update({n: name for n, _ in mine})
        total += sum(int(np.prod(s, dtype=np.int64)) * 2 for _, s in mine)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = FakeFile(json.dumps(index, indent=2).encode())
    n_params = sum(int(np.prod(s, dtype=np.int64)) for _, s, _ in ts)
    return files, total, n_params


def write_gguf(model: synth.SynthModel, path: Path, recipe: str, file_type: int,
               split_max_tensors: int = 0) -> list[Path]:
    """synth.write_gguf with the file type of the quant the file is named after, split like gguf-split when
    asked (gguf's GGUFWriter: split.no / split.count / split.tensors.count, `-00001-of-0000N.gguf` names)."""
    w = gguf.GGUFWriter(path, model.arch, split_max_tensors=split_max_tensors)
    w.add_name(f"{model.key} (synthetic, {model.n_layers} layers)")
    w.add_file_type(file_type)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for key, value, vtype in model.metadata:
        if isinstance(vtype, tuple):
            w.add_key_value(key, list(value), vtype[0], sub_type=vtype[1])
        else:
            w.add_key_value(key, value, vtype)
    toks, scores, types = synth._spm_vocab(model.n_vocab)
    VT = gguf.GGUFValueType
    w.add_key_value("tokenizer.ggml.model", "llama", VT.STRING)
    w.add_key_value("tokenizer.ggml.tokens", toks, VT.ARRAY, sub_type=VT.STRING)
    w.add_key_value("tokenizer.ggml.scores", scores, VT.ARRAY, sub_type=VT.FLOAT32)
    w.add_key_value("tokenizer.ggml.token_type", types, VT.ARRAY, sub_type=VT.INT32)
    for t in model.tensors:
        qtype = synth.tensor_type(model, t, recipe)
        nbytes = synth.tensor_nbytes(t.ne, qtype)
        w.add_tensor_info(t.name, tuple(reversed(t.ne)), np.dtype(np.float32), nbytes, raw_dtype=gguf.GGMLQuantizationType(qtype))
    paths = w.format_shard_names(path)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for fout, tensors in zip(w.fout, w.tensors, strict=True):
        start = gguf.GGUFWriter.ggml_pad(fout.tell(), w.data_alignment)
        fout.truncate(start + sum(gguf.GGUFWriter.ggml_pad(ti.nbytes, w.data_alignment) for ti in tensors.values()))
    w.close()
    return paths


FT = gguf.LlamaFileType
GGUF_REPO = "unsloth/Qwen3-30B-A3B-Synth-GGUF"  # not a catalog name: the catalog maps "<pub>/<model>-GGUF" to <model>


@pytest.fixture(scope="module")
def gguf_files(tmp_path_factory):
    """Qwen3-30B-A3B-shaped GGUFs (2 layers, 8 experts, the real 151936-token vocabulary: a ~3.5 MB header)."""
    d = tmp_path_factory.mktemp("gguf")
    model = synth.qwen3_30b_a3b(n_layers=2, n_experts=8)
    out = {}
    for quant, recipe, ft in (("Q4_K_M", "q4_0", FT.MOSTLY_Q4_K_M), ("Q5_K_M", "q4_0", FT.MOSTLY_Q5_K_M),
                              ("Q8_0", "q4_0", FT.MOSTLY_Q8_0)):
        (p,) = write_gguf(model, d / f"Qwen3-30B-A3B-{quant}.gguf", recipe, int(ft))
        out[quant] = [p]
    (d / "BF16").mkdir()
    out["BF16"] = write_gguf(model, d / "BF16" / "Qwen3-30B-A3B-BF16.gguf", "f16", int(FT.MOSTLY_BF16),
                             split_max_tensors=12)
    return model, out


@pytest.fixture
def fake(tmp_path, monkeypatch, gguf_files):
    import huggingface_hub.constants as hf_constants

    fh = FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.hub = fh
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fh.url = f"http://127.0.0.1:{server.server_address[1]}"

    files, _, _ = sharded_qwen_repo()
    fh.add("acme/Qwen3-30B-A3B-ft", files)
    _, ggufs = gguf_files
    repo_files = {"README.md": FakeFile(b"# GGUF\n"), "config.json": FakeFile(json.dumps(QWEN_CONFIG).encode()),
                  "Qwen3-30B-A3B-UD-Q4_K_XL.gguf": FakeFile(b"GGUF", 17_700_000_000)}
    for quant, paths in ggufs.items():
        for p in paths:
            name = f"BF16/{p.name}" if quant == "BF16" else p.name
            repo_files[name] = FakeFile(path=p)
    fh.add(GGUF_REPO, repo_files)
    fh.add("acme/tiny-GGUF", {"model-Q4_K_M.gguf": FakeFile(path=ggufs["Q4_K_M"][0])})

    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", fh.url)
    monkeypatch.setenv("OOMKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OOMKIT_HUB_TIMEOUT", "2")
    # huggingface_hub reads these at import: no saved login, not offline
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    yield fh
    fh.release.set()
    server.shutdown()
    server.server_close()


# ----------------------------------------------------------------------------------------------------------
# names
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref,ok", [
    ("Qwen/Qwen2.5-32B-Instruct", True), ("unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M", True),
    ("hf.co/bartowski/Qwen_Qwen3-8B-GGUF:IQ4_XS", True), ("https://huggingface.co/org/name", True),
    ("./models/x", False), ("models/x.gguf", False), ("dir/config.json", False), ("a/b/c", False),
    ("/abs/path", False), ("~/x/y", False), ("llama3.1:8b", False), ("a--b/c", False), ("org/..x", False),
])
def test_is_hf_id(ref, ok):
    assert hub.is_hf_id(ref) is ok


def test_gguf_quants_and_pick():
    files = ["README.md", "Qwen3-30B-A3B-Q8_0.gguf", "Qwen3-30B-A3B-Q4_K_M.gguf", "Qwen3-30B-A3B-UD-Q4_K_XL.gguf",
             "mmproj-F16.gguf", "Qwen3-30B-A3B-IQ2_XXS.gguf", "gemma-3-4b-it-qat-q4_0.gguf",
             "BF16/Qwen3-30B-A3B-BF16-00002-of-00002.gguf", "BF16/Qwen3-30B-A3B-BF16-00001-of-00002.gguf"]
    got = hub.gguf_quants(files)
    assert [f.quant for f in got] == ["IQ2_XXS", "Q4_0", "Q4_K_M", "UD-Q4_K_XL", "Q8_0", "BF16"]
    bf16 = hub.pick_gguf("r/x", got, "bf16")
    assert bf16.paths == ("BF16/Qwen3-30B-A3B-BF16-00001-of-00002.gguf", "BF16/Qwen3-30B-A3B-BF16-00002-of-00002.gguf")
    assert hub.pick_gguf("r/x", got, "q4_k_xl").quant == "UD-Q4_K_XL"  # unsloth's "UD-" prefix may be left out
    with pytest.raises(OomkitError, match=r"r/x has IQ2_XXS, Q4_0, Q4_K_M, UD-Q4_K_XL, Q8_0, BF16: add :QUANT, "
                                          r"e\.g\. r/x:Q4_K_M$"):
        hub.pick_gguf("r/x", got, None)
    with pytest.raises(OomkitError, match="r/x has no Q3_K_S GGUF: it has IQ2_XXS"):
        hub.pick_gguf("r/x", got, "Q3_K_S")
    with pytest.raises(OomkitError, match=r"incomplete.*\[2\] of 3"):
        hub.gguf_quants(["m-Q4_0-00001-of-00003.gguf", "m-Q4_0-00003-of-00003.gguf"])


def test_layer_index():
    assert hub.layer_index("model.layers.12.mlp.experts.3.up_proj.weight") == 12
    assert hub.layer_index("model.language_model.layers.5.self_attn.q_proj.weight") == 5
    assert hub.layer_index("transformer.h.7.attn.c_attn.weight") == 7
    assert hub.layer_index("model.visual.blocks.3.attn.qkv.weight") is None
    assert hub.layer_index("vision_tower.vision_model.encoder.layers.3.mlp.fc1.weight") is None
    assert hub.layer_index("lm_head.weight") is None


# ----------------------------------------------------------------------------------------------------------
# config.json + safetensors
# ----------------------------------------------------------------------------------------------------------


def test_config_and_exact_safetensors_weights(fake):
    files, total, n_params = sharded_qwen_repo()
    spec = resolve("acme/Qwen3-30B-A3B-ft")
    w = spec.weights
    assert w.exact and w.format == "safetensors BF16" and w.nbytes == total == 61_064_245_248 and w.n_params == n_params == 30_532_122_624
    # the computed BF16 inventory of the same config agrees to the byte
    assert spec_from_config(QWEN_CONFIG, name="x").weights.nbytes == total
    assert spec.architecture == "qwen3moe" and spec.n_layers == 48 and "hub: acme/Qwen3-30B-A3B-ft@" in spec.source
    by_layer = Counter(t.layer for t in w.tensors)
    assert by_layer[None] == 3 and all(by_layer[i] == 9 + 3 * 128 for i in range(48))
    up = next(t for t in w.tensors if t.name == "model.layers.47.mlp.experts.127.up_proj.weight")
    assert up.shape == (2048, 768)  # GGUF order: ne0 (in_features) first and up.dtype == "BF16" and up.nbytes == 768 * 2048 * 2 and up.layer == 47
    # one listing, config.json, the index, then each shard's header by range reads: never the weights
    paths = [r.path for r in fake.requests]
    assert paths[0] == "/api/models/acme/Qwen3-30B-A3B-ft/revision/main" and fake.requests[0].query["blobs"]
    shards = [n for n in files if n.endswith(".safetensors")]
    for name in shards:
        header = struct.unpack("<Q", files[name].data[:8])[0] + 8
        assert fake.served[name] == max(header, hub.SAFETENSORS_FIRST_READ)  # 128 KiB, then exactly the rest
    assert all("range" in r.headers for r in fake.requests if r.path.startswith("/cdn/"))
    assert sum(fake.served[n] for n in shards) < 4 << 20  # of 61 GB


def test_second_call_is_served_from_the_cache(fake):
    a = resolve("acme/Qwen3-30B-A3B-ft")
    fake.reset()
    t0 = time.monotonic()
    b = resolve("acme/Qwen3-30B-A3B-ft")
    assert fake.requests == [] and a.weights == b.weights and time.monotonic() - t0 < 5
    g1 = resolve(f"{GGUF_REPO}:Q4_K_M")
    fake.reset()
    assert resolve(f"{GGUF_REPO}:Q4_K_M").weights == g1.weights and fake.requests == []
    cache = Path(os.environ["OOMKIT_CACHE"]) / "hub"
    repo_dir = next(cache.glob("*/acme--Qwen3-30B-A3B-ft/main"))
    assert (repo_dir / "info.json").is_file() and (repo_dir / "files" / "config.json").is_file()
    assert len(list((repo_dir / "headers").iterdir())) == 16


def test_default_format_computes_weights_without_reading_shards(fake):
    from oomkit.engines.llamacpp import ENGINE

    spec = resolve("acme/Qwen3-30B-A3B-ft", default_format=ENGINE.default_weight_format)
    assert not spec.weights.exact and spec.weights.format == "Q4_K_M"
    assert any("assuming Q4_K_M" in label for label in spec.labels)
    assert not any(r.path.startswith("/cdn/") for r in fake.requests)
    assert resolve("acme/Qwen3-30B-A3B-ft:bf16").weights.nbytes == 61_064_245_248


def test_malformed_config(fake):
    fake.add("acme/broken", {"config.json": FakeFile(b'{"model_type": "llama",')})
    with pytest.raises(OomkitError, match=r"^acme/broken: config.json on the hub is malformed"):
        resolve("acme/broken")
    fake.add("acme/list", {"config.json": FakeFile(b"[1, 2]")})
    with pytest.raises(OomkitError, match="not a JSON object"):
        resolve("acme/list")
    fake.add("acme/empty", {"README.md": FakeFile(b"hi")})
    with pytest.raises(OomkitError, match="neither a config.json nor a .gguf"):
        resolve("acme/empty")


# ----------------------------------------------------------------------------------------------------------
# GGUF repos
# ----------------------------------------------------------------------------------------------------------


def test_gguf_header_by_range_reads(fake, gguf_files):
    model, files = gguf_files
    spec = resolve(f"{GGUF_REPO}:q4_k_m")  # the quant in any case
    local = read_gguf_header(files["Q4_K_M"][0])
    assert spec.architecture == "qwen3moe" and spec.n_layers == 2 and spec.weights.format == "Q4_K_M"
    assert spec.weights.exact and spec.weights.nbytes == model.nbytes("q4_0")
    assert "Qwen3-30B-A3B-Q4_K_M.gguf" in spec.source
    # only the header was read: ~its size (2 MiB first, then what the parser asked), never the 400 MB of data
    served = fake.served["Qwen3-30B-A3B-Q4_K_M.gguf"]
    size = files["Q4_K_M"][0].stat().st_size
    assert local.data_offset > hub.GGUF_FIRST_READ  # the real vocabulary makes the header outgrow the first read
    assert local.data_offset <= served <= 1.5 * local.data_offset + (64 << 10) and served * 50 < size
    ranges = [r.headers["range"] for r in fake.requests if r.path.endswith("Q4_K_M.gguf") and r.path.startswith("/cdn/")]
    assert ranges[0] == f"bytes=0-{hub.GGUF_FIRST_READ - 1}" and len(ranges) <= 3
    assert set(fake.served) == {"Qwen3-30B-A3B-Q4_K_M.gguf"}


def test_split_gguf_reads_every_part_header_and_sums_sizes(fake, gguf_files):
    model, files = gguf_files
    parts = files["BF16"]
    assert len(parts) == 3
    client = hub.HubClient()
    g = client.gguf(GGUF_REPO, "BF16")
    assert g.file.paths == tuple(f"BF16/{p.name}" for p in parts) and g.file.quant == "BF16"
    assert g.total_bytes == sum(p.stat().st_size for p in parts) == g.header.file_size
    assert len(g.header.tensors) == len(model.tensors) and g.header.metadata["split.count"] == 3
    spec = resolve(f"{GGUF_REPO}:BF16")
    assert spec.weights.nbytes == model.nbytes("f16") and spec.weights.format == "BF16"
    assert "(3 parts)" in spec.source
    for p in parts:
        h = read_gguf_header(p)
        assert h.data_offset <= fake.served[f"BF16/{p.name}"] <= max(1.5 * h.data_offset, hub.GGUF_FIRST_READ)


def test_gguf_repo_needs_a_quant(fake):
    with pytest.raises(OomkitError) as e:
        resolve(GGUF_REPO)
    msg = str(e.value)
    assert msg == (f"{GGUF_REPO} has Q4_K_M, UD-Q4_K_XL, Q5_K_M, Q8_0, BF16: add :QUANT, e.g. {GGUF_REPO}:Q4_K_M")
    with pytest.raises(OomkitError, match=f"^{GGUF_REPO} has no IQ1_S GGUF: it has Q4_K_M"):
        resolve(f"{GGUF_REPO}:IQ1_S")
    assert not fake.served  # no header read for either
    spec = resolve("hf.co/acme/tiny-GGUF:latest")  # one quant only: no need to name it
    assert spec.weights.format == "Q4_K_M"
    # the whole tag names the file, even where split_quant would cut "UD-Q4_K_M" at the dash
    fake.add("acme/ud-GGUF", {"m-UD-Q4_K_M.gguf": FakeFile(path=fake.repos["acme/tiny-GGUF"].files[
        "model-Q4_K_M.gguf"].path), "m-Q8_0.gguf": FakeFile(b"GGUF", 10 << 30)})
    assert resolve("acme/ud-GGUF:UD-Q4_K_M").weights.format == "Q4_K_M"
    with pytest.raises(OomkitError, match="two formats given"):
        resolve("acme/ud-GGUF:UD-Q4_K_M", "Q8_0")


# ----------------------------------------------------------------------------------------------------------
# errors, tokens, offline
# ----------------------------------------------------------------------------------------------------------


def test_gated_repo_and_hf_token(fake, monkeypatch):
    files, _, _ = sharded_qwen_repo()
    fake.add("meta-llama/Gated-30B", files, gated="manual")
    with pytest.raises(OomkitError) as e:
        resolve("meta-llama/Gated-30B")
    assert str(e.value) == (f"meta-llama/Gated-30B is gated: accept its license on {fake.url[7:]} and set HF_TOKEN")
    assert all("authorization" not in r.headers for r in fake.requests)

    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    with pytest.raises(OomkitError, match="is gated: accept its license .* and set HF_TOKEN .*has no access"):
        resolve("meta-llama/Gated-30B")

    fake.reset()
    monkeypatch.setenv("HF_TOKEN", "hf_granted")
    spec = resolve("meta-llama/Gated-30B")
    assert spec.weights.exact
    hub_calls = [r for r in fake.requests if not r.path.startswith("/cdn/")]
    assert hub_calls and all(r.headers.get("authorization") == "Bearer hf_granted" for r in hub_calls)


def test_invalid_token(fake, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_expired")
    with pytest.raises(OomkitError, match=r"^the Hugging Face hub refused the token \(invalid credentials\) for "
                                          r"acme/Qwen3-30B-A3B-ft: check HF_TOKEN"):
        resolve("acme/Qwen3-30B-A3B-ft")


def test_no_such_repo_keeps_the_did_you_mean(fake):
    with pytest.raises(OomkitError) as e:
        resolve("Qwen/Qwen3-30B-A3B-Instruct-9999")
    msg = str(e.value)
    assert msg.startswith("no such repo 'Qwen/Qwen3-30B-A3B-Instruct-9999' on the Hugging Face hub")
    assert "set HF_TOKEN" in msg and "; did you mean Qwen/Qwen" in msg and "\n" not in msg
    fake.missing_status = 401  # what the real hub answers an anonymous request for a missing repo
    with pytest.raises(OomkitError, match="^no such repo 'acme/nope'"):
        resolve("acme/nope")


def test_server_error(fake):
    fake.add("acme/down", {"config.json": FakeFile(b"{}")}, status=500)
    t0 = time.monotonic()
    with pytest.raises(OomkitError, match=r"^the Hugging Face hub failed \(HTTP 500 for acme/down\); try again later"):
        resolve("acme/down")
    assert time.monotonic() - t0 < 2  # no retries with backoff
    fake.add("acme/busy", {"config.json": FakeFile(b"{}")}, status=429)
    with pytest.raises(OomkitError, match="rate-limiting"):
        resolve("acme/busy")


def test_hanging_server_times_out(fake, monkeypatch):
    monkeypatch.setenv("OOMKIT_HUB_TIMEOUT", "1")
    fake.add("acme/hangs", {"config.json": FakeFile(b"{}")}, hang=True)
    t0 = time.monotonic()
    with pytest.raises(OomkitError) as e:
        resolve("acme/hangs")
    assert time.monotonic() - t0 < 4
    assert str(e.value).startswith(f"the Hugging Face hub is unreachable (no answer from {fake.url} within 1 s); "
                                   "use a catalog name, a local config.json or .gguf, or set HF_HUB_OFFLINE=1")


def test_unreachable_hub(fake, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(OomkitError, match=r"^the Hugging Face hub is unreachable \(cannot connect to http://127"):
        resolve("acme/Qwen3-30B-A3B-ft")


def test_offline_makes_no_request(fake, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OomkitError) as e:
        resolve("acme/Qwen3-30B-A3B-ft")
    msg = str(e.value)
    assert msg.startswith("unknown model 'acme/Qwen3-30B-A3B-ft': not a file, not in the built-in catalog")
    assert "HF_HUB_OFFLINE=1" in msg and "did you mean Qwen/Qwen3-30B-A3B" in msg
    assert fake.requests == []
    # what an earlier online call cached still answers offline, without a request
    monkeypatch.delenv("HF_HUB_OFFLINE")
    online = resolve("acme/Qwen3-30B-A3B-ft")
    fake.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve("acme/Qwen3-30B-A3B-ft").weights == online.weights and fake.requests == []


def test_offline_with_part_of_the_model_cached(fake, monkeypatch):
    from oomkit.engines.llamacpp import ENGINE

    resolve("acme/Qwen3-30B-A3B-ft", default_format=ENGINE.default_weight_format)  # config only, no shards
    fake.reset()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve("acme/Qwen3-30B-A3B-ft", default_format=ENGINE.default_weight_format).weights.format == "Q4_K_M"
    with pytest.raises(OomkitError, match=r"^acme/Qwen3-30B-A3B-ft: model\.safetensors\.index\.json is not in "
                                          r"oomkit's hub cache and HF_HUB_OFFLINE=1 keeps oomkit off the hub"):
        resolve("acme/Qwen3-30B-A3B-ft")
    assert fake.requests == []


def test_fake_hub_answers_huggingface_hub_itself(fake):
    """The fake hub speaks the protocol huggingface_hub expects (tree listing, HEAD with X-Repo-Commit /
    X-Linked-Size / ETag, range reads), and the library's own safetensors parser agrees with ours."""
    from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url

    api = HfApi(endpoint=fake.url)
    repo = fake.repos["acme/Qwen3-30B-A3B-ft"]
    tree = {e.path: e.size for e in api.list_repo_tree("acme/Qwen3-30B-A3B-ft", recursive=True)}
    assert tree == {name: f.size for name, f in repo.files.items()}
    meta = get_hf_file_metadata(hf_hub_url("acme/Qwen3-30B-A3B-ft", "model-00003-of-00016.safetensors",
                                           endpoint=fake.url))
    assert meta.commit_hash == repo.sha and meta.size == repo.files["model-00003-of-00016.safetensors"].size
    theirs = api.parse_safetensors_file_metadata("acme/Qwen3-30B-A3B-ft", "model-00003-of-00016.safetensors")
    ours = hub.HubClient().safetensors("acme/Qwen3-30B-A3B-ft").files[2][1]
    assert {n: (i.dtype, i.shape) for n, i in theirs.tensors.items()} == \
        {t.name: (t.dtype, list(t.shape)) for t in ours.tensors}


def test_cli_end_to_end(fake):
    env = {**os.environ}
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", f"{GGUF_REPO}:Q4_K_M", "-c", "4096", "--json"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["model"]["architecture"] == "qwen3moe" and d["model"]["n_layers"] == 2, (d["model"], d["warnings"])
    r = subprocess.run([sys.executable, "-m", "oomkit", "estimate", GGUF_REPO], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 2 and "add :QUANT" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_catalog_estimate_never_imports_huggingface_hub():
    code = ("import sys; from oomkit.model.resolve import resolve; resolve('llama3.1:8b'); "
            "import oomkit.model.hub; assert 'huggingface_hub' not in sys.modules, 'imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
