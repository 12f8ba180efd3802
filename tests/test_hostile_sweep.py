"""Regressions from a systematic sweep of hostile input over every command, both outputs and the web API: each case
below was a traceback (exit 3, or a 500 from the web hub) before it was refused at the parser or validator that should
have refused it. Each holds the promise: exit 2 and one line `oomkit: error: ...` naming the bad value."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from oomkit.cli import main
from tests import hostile as H

CATALOG = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "model" / "catalog" / "data"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def refused(argv: list[str], words: str) -> str:
    rc, _, err = run(argv)
    lines = err.strip().splitlines()
    assert rc == 2, (argv, rc, err)
    assert len(lines) == 1 and lines[0].startswith("oomkit: error: "), err
    assert words in lines[0], (words, lines[0])
    return lines[0]


def catalog_config(file: str, **change) -> dict:
    cfg = json.loads((CATALOG / file).read_text())["config"]
    cfg.update(change)
    return cfg


def model_dir(tmp_path: Path, cfg: dict) -> str:
    H.write_config(tmp_path / "m", cfg)
    return str(tmp_path / "m")


# ---------------------------------------------------------------------------------------------------------
# config.json


@pytest.mark.parametrize("engine", ["llama.cpp", "vllm"])
def test_deepseek_v4_o_groups_zero(tmp_path, engine):
    """o_groups = 0 divided the heads by zero while the layers were built (ZeroDivisionError)."""
    d = model_dir(tmp_path, catalog_config("deepseek-v4-flash.json", o_groups=0))
    refused(["estimate", d, "--engine", engine, "--vram", "80GiB"], "o_groups = 0")


def test_moe_intermediate_size_zero(tmp_path):
    """Experts of no width: vLLM's MXFP4 expert padding divided by the tensor's 0 elements (ZeroDivisionError)."""
    d = model_dir(tmp_path, catalog_config("deepseek-v4-flash.json", moe_intermediate_size=0))
    refused(["estimate", d, "--engine", "vllm", "--vram", "80GiB"], "experts of 0 feed-forward units")


def test_ernie_moe_k_zero(tmp_path):
    """ERNIE 4.5's moe_k = 0 (experts per token) reached llama.cpp's MoE graph, which indexed an empty list."""
    d = model_dir(tmp_path, catalog_config("ernie-4.5-21b-a3b-pt.json", moe_k=0))
    refused(["estimate", d, "--vram", "24GiB", "--json"], "uses 0 per token")


@pytest.mark.parametrize("value", [True, 5, {"a": 1}, [None]])
def test_architectures_not_a_list_of_names(tmp_path, value):
    """`"architectures": true` raised TypeError in the EmbeddingGemma test ('bool' is not iterable)."""
    d = model_dir(tmp_path, catalog_config("gemma-3-4b-it.json", architectures=value))
    refused(["estimate", d, "--vram", "24GiB"], "config field architectures")


# ---------------------------------------------------------------------------------------------------------
# web hub


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from oomkit.web.app import create_app

    return TestClient(create_app(), raise_server_exceptions=False)


@pytest.mark.parametrize("kind,shown,absent", [("limits", "Hard limits: the largest", "Context impact"),
                                               ("context", "Context impact", "Hard limits: the largest")])
def test_limits_page_with_one_kind(client, kind, shown, absent):
    """/limits?kind=limits answered 500 (KeyError: 'context'): the page drew both tables whatever the table held."""
    r = client.get("/limits", params={"model": "llama3.1:8b", "kind": kind})
    assert r.status_code == 200, r.text[:300]
    assert shown in r.text and absent not in r.text


def test_glm5_next_index_kpool_zero(tmp_path):
    """index_kpool = 0 reached llama.cpp's k-pool indexer phase, which divided by it (ZeroDivisionError)."""
    cfg = json.loads((CATALOG / "glm-5.3-flash.json").read_text())["config"]
    cfg.setdefault("text_config", cfg)["index_kpool"] = 0
    refused(["estimate", model_dir(tmp_path, cfg), "--vram", "80GiB"], "index_kpool = 0")


@pytest.mark.parametrize("value", [-1, {"lm_head": True}, [1, 2]])
def test_modules_to_not_convert_not_names(tmp_path, value):
    """quantization_config.modules_to_not_convert = -1 raised TypeError ('int' object is not iterable) in vLLM's
    reading of the checkpoint's format."""
    cfg = H.llama_config(quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128,
                                              "modules_to_not_convert": value})
    refused(["estimate", model_dir(tmp_path, cfg), "--engine", "vllm", "--vram", "24GiB"],
            "quantization_config.modules_to_not_convert")


@pytest.mark.parametrize("value", ["x", [None]])
def test_lfm2_ffn_multiplier_not_a_number(tmp_path, value):
    """LFM2's block_ffn_dim_multiplier = "x" raised ValueError from int("x" * n) (a string times the width)."""
    d = model_dir(tmp_path, catalog_config("lfm2-1.2b.json", block_ffn_dim_multiplier=value))
    refused(["estimate", d, "--vram", "24GiB"], "block_ffn_dim_multiplier")


@pytest.mark.parametrize("field", ["linear_num_value_heads", "linear_num_key_heads"])
def test_gated_delta_net_with_no_heads(tmp_path, field):
    """Qwen3.5's linear_num_value_heads = 0 divided the state's norm width by zero (ZeroDivisionError)."""
    cfg = json.loads((CATALOG / "qwen3.5-0.8b.json").read_text())["config"]
    cfg.get("text_config", cfg)[field] = 0
    refused(["estimate", model_dir(tmp_path, cfg), "--vram", "24GiB"], f"{field} = 0")


def test_config_hidden_size_zero(tmp_path):
    """DeepSeek-V4 with hidden_size = 0 reached the hyper-connection streams, which divided by it."""
    d = model_dir(tmp_path, catalog_config("deepseek-v4-flash.json", hidden_size=0))
    refused(["estimate", d, "--vram", "80GiB"], "config field hidden_size = 0")


@pytest.mark.parametrize("ratio", [0, -0.5, 2])
def test_internvl_downsample_ratio_out_of_range(tmp_path, ratio):
    """InternVL's downsample_ratio = 0 divided by zero while its projector was sized (ZeroDivisionError)."""
    d = model_dir(tmp_path, catalog_config("internvl2-2b.json", downsample_ratio=ratio))
    refused(["estimate", d, "--vram", "24GiB"], "downsample_ratio")


@pytest.mark.parametrize("file,field,value", [("gemma-3-4b-it.json", "patch_size", 0),
                                              ("internvl2-2b.json", "patch_size", 0),
                                              ("internvl2-2b.json", "patch_size", []),
                                              ("internvl2-2b.json", "image_size", [])])
def test_vision_tower_without_a_size(tmp_path, file, field, value):
    """vision_config.patch_size = 0 divided by zero (SigLIP, InternViT, GLM-4V), an empty image_size list raised
    IndexError, while vLLM's weights counted the tower."""
    cfg = catalog_config(file)
    cfg["vision_config"][field] = value
    refused(["estimate", model_dir(tmp_path, cfg), "--engine", "vllm", "--vram", "80GiB"],
            f"config field vision_config.{field} = {value!r}")


@pytest.mark.parametrize("field,value", [("rope_scaling", [1, 2]), ("rope_scaling", "yarn"), ("rope_parameters", [1])])
def test_rope_scaling_not_an_object(tmp_path, field, value):
    """rope_scaling given as a list was read as no RoPE scaling at all (exit 0, a silent guess); transformers reads
    it with .get() and cannot load such a config."""
    refused(["estimate", model_dir(tmp_path, H.llama_config(**{field: value})), "--vram", "24GiB"],
            f"config field {field} = ")


def test_nemotron_nas_with_no_heads(tmp_path):
    """Nemotron-NAS (deci) num_attention_heads = 0 divided the hidden size by it (ZeroDivisionError)."""
    d = model_dir(tmp_path, catalog_config("llama-3.3-nemotron-super-49b-v1.json", num_attention_heads=0))
    refused(["estimate", d, "--vram", "80GiB"], "num_attention_heads = 0")


def test_config_dense_ffn_width_zero(tmp_path):
    """Phi-3 with intermediate_size = 0 reached llama.cpp's phi3 graph, which looked up an ffn_up it had not sized
    (KeyError 'blk.0.ffn_up.weight'); vLLM and SGLang estimated a model with no feed-forward at all."""
    d = model_dir(tmp_path, catalog_config("phi-3-mini-4k-instruct.json", intermediate_size=0))
    for engine in ("llama.cpp", "vllm", "sglang"):
        refused(["estimate", d, "--engine", engine, "--vram", "24GiB"], "config field intermediate_size = 0")


# ---------------------------------------------------------------------------------------------------------
# GGUF


def _synth_with(model, key: str, value, vtype, tmp_path: Path) -> str:
    from dataclasses import replace

    from tests.groundtruth import synth

    full = f"{model.arch}.{key}"
    meta = tuple((k, value, vtype) if k == full else (k, v, t) for k, v, t in model.metadata)
    assert meta != model.metadata, key
    return str(synth.write_gguf(replace(model, metadata=meta), tmp_path / "m.gguf"))


def test_gguf_indexer_types_not_an_array(tmp_path):
    """dots3note.attention.indexer.types written as a float raised TypeError (float has no len())."""
    from tests import ggufs
    from tests.groundtruth.synth import VT

    p = _synth_with(ggufs.dots3note(), "attention.indexer.types", 1.5, VT.FLOAT32, tmp_path)
    refused(["estimate", p, "--vram", "24GiB"], "attention.indexer.types = 1.5 must be an array")


def test_gguf_embedding_length_zero(tmp_path):
    """qwen4exp.embedding_length = 0 reached the hyper-connection streams, which divided by it."""
    from tests import ggufs
    from tests.groundtruth.synth import VT

    p = _synth_with(ggufs.qwen4exp(), "embedding_length", 0, VT.UINT32, tmp_path)
    refused(["estimate", p, "--vram", "24GiB", "--json"], "qwen4exp.embedding_length = 0")


@pytest.mark.parametrize("drop", ["blk.1.ffn_down.weight", "blk.0.ffn_up.weight"])
def test_gguf_missing_a_required_tensor(tmp_path, drop):
    """A Llama GGUF without one block's FFN down or up projection was estimated (exit 0) as if whole; llama.cpp stops
    loading it (llama-cpp-python 0.3.36: "llama_model_load: error loading model: check_tensor_dims: tensor
    'blk.1.ffn_down.weight' not found"). A missing attention tensor is not checked: which of Q / K / V a block
    carries differs by architecture (Gemma 4's shared-KV layers, DeepSeek-V4's low-rank Q)."""
    from dataclasses import replace

    from tests.groundtruth import synth

    model = synth.llama3_8b(n_layers=2)
    model = replace(model, tensors=tuple(t for t in model.tensors if t.name != drop))
    p = str(synth.write_gguf(model, tmp_path / "m.gguf"))
    refused(["estimate", p, "--vram", "24GiB"], f"tensor '{drop}' not found")


# ---------------------------------------------------------------------------------------------------------
# paths


@pytest.mark.parametrize("argv", [["diagnose", "\x00"], ["diagnose", "log\x00.txt", "--json"]])
def test_path_with_a_nul_byte(argv):
    """A NUL in a file name raised ValueError('embedded null byte') from open()."""
    refused(argv, "NUL byte")


def test_hf_endpoint_that_is_not_a_url(monkeypatch):
    """HF_ENDPOINT=http://[::1 (an unclosed IPv6 address) raised ValueError('Invalid IPv6 URL') from urlsplit."""
    monkeypatch.setenv("HF_ENDPOINT", "http://[::1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    refused(["estimate", "someorg/somemodel", "--vram", "24GiB"], "HF_ENDPOINT='http://[::1' is not a URL")


# ---------------------------------------------------------------------------------------------------------
# serve


@pytest.mark.parametrize("host,words", [("", "--host is empty"), ("999.1.1.1", "--host '999.1.1.1' is not an address"),
                                        ("\U0001f4a5", "is not an address or a name that resolves")])
def test_serve_host_that_cannot_be_listened_on(host, words):
    """--host 999.1.1.1 exited 3 after uvicorn's own 'Name or service not known' line; --host '' (every interface
    to uvicorn) and --host 💥 started or hung instead of saying what was wrong."""
    refused(["serve", "--host", host, "--port", "8765"], words)


def test_serve_port_in_use():
    """A port another program listens on: uvicorn logged 'address already in use' and the command exited 3."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        refused(["serve", "--port", str(port)], f"cannot listen on 127.0.0.1 port {port}")


# ---------------------------------------------------------------------------------------------------------
# empty option values (an unset shell variable): read as the default before, a silent guess


@pytest.mark.parametrize("argv,words", [
    (["estimate", "llama3.1:8b", "--vram", "24GiB", "--engine-version", ""], "--engine-version is empty"),
    (["estimate", "llama3.1:8b", "--vram", "24GiB", "--engine-version="], "--engine-version is empty"),
    (["check", "llama3.1:8b", "--engine", "ollama", "--vram", "24GiB", "--backend", ""], "--backend is empty"),
    (["table", "llama3.1:8b", "--kv-type", ""], "--kv-type is empty"),
    (["table", "llama3.1:8b", "--plot", ""], "--plot is empty"),
    (["watch", "llama3.1:8b", "--once", "--gpu", " "], "--gpu is empty"),
    (["plan", "llama3.1:8b", "--gpu", "RTX 4090", "--engine-version", ""], "--engine-version is empty"),
    (["diff", "llama3.1:8b", "--vram", "24GiB", "--change", ""], "--change is empty"),
    (["models", "--explain", ""], "--explain is empty"),
    (["models", "--family", " "], "--family is empty"),
])
def test_empty_option_value(argv, words):
    refused(argv, words)


# ---------------------------------------------------------------------------------------------------------
# llama.cpp flags and GPU names


@pytest.mark.parametrize("mode", ["rowz", "graphs", "ROW"])
def test_split_mode_llamacpp_does_not_know(mode):
    """-sm rowz was taken as a split mode, and plan answered "no GPU ... runs it" (exit 1); common/arg.cpp throws
    "invalid value" for anything but none / layer / row / tensor."""
    refused(["plan", "llama3.1:8b", "--gpu", "RTX 4090", "-sm", mode], '"-sm": invalid value')


@pytest.mark.parametrize("gpu", ["H100\x00", "RTX 4090\n", "A100\x1b[31m"])
def test_gpu_name_with_a_control_character(gpu):
    """--gpu 'H100\\x00' was read as an H100: the catalog key drops every character that is not a letter or digit."""
    for cmd in (["plan", "llama3.1:8b"], ["estimate", "llama3.1:8b"]):
        refused([*cmd, "--gpu", gpu], "a GPU name cannot hold the control character")
