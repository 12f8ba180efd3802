"""A fourth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout4/, each with its
source): recent builds (b9849, b10566) on the backends the earlier sets have fewest of: an Apple M4 Pro's Metal beside
an rpc-server (gpt-oss-20b, --tensor-split 1,1), a CPU-only client with every layer on a CPU rpc-server
(SmolLM2-135M, -np auto), and a hybrid Qwen3.6-27B on Vulkan. Read through oomkit with the log's own flags, build
and free memory, nothing tuned, by the held-out harness (tests/test_llamacpp_heldout_logs.py; a fixture with a
`devices` list names each device as the log does, the rpc-server as RPC0[host:port]): model, KV and output buffers
exact (to the 0.01 MiB printed), compute within 10%; a figure oomkit misses stays a strict xfail with its measured
error (the fixture's known_miss).

As it stood, before any change (15 figures of 3 logs): KV, recurrent state and output buffers exact; the RPC
server's weights beside Metal named RPC0[host:port]_Mapped (an RPC device maps nothing), Metal's mapped range of
unsloth's gpt-oss F16 file +2017.09 MiB, the CPU rpc-server's weights +0.09 MiB (ggml-cuda's row padding), the
Qwen3.6 Q5_K_M file's publisher types -265.78 MiB; compute within 10% but the gpt-oss devices (MTL0 1.152, RPC0
1.154). Mirrored since: backends.metal_mapped / backend_view leave an RPC device's buffer unmapped (ggml-rpc has no
buffer_from_host_ptr), and compute.device_host_rows leaves PR #18550's unread embeddings input on the host for every
device backend, not only Vulkan: gpt-oss 1.088 / 1.090, SmolLM2's RPC0 14.38 MiB as printed, and
weights.converter_order lays out a gpt-oss file convert_hf_to_gguf.py writes itself (F16 / BF16 / F32 / Q8_0, the
experts kept MXFP4) as the converter does, every block's experts first: MTL0_Mapped 11124.19 MiB as printed. What is
left is each fixture's known_miss."""

import json
from pathlib import Path

import pytest

from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, held_out_estimate, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout4").glob("*.json"))
MiB = 1 << 20


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 3)


def _fixture(stem: str) -> dict:
    return json.loads((FIXTURES[0].parent / f"{stem}.json").read_text())


def test_an_rpc_server_beside_metal_holds_a_buffer_of_its_own():
    """ggml-rpc's device reports no buffer_from_host_ptr, so load_tensors allocates the server's RPC0[host:port]
    buffer and copies the weights in, while Metal maps the file (MTL0_Mapped) and the CPU keeps its mapped
    embeddings: the names as printed, the RPC server's size to the 0.01 MiB."""
    fx = _fixture("gpt-oss-20b-f16-metal-m4-pro-plus-rpc-ts-1-1-8192-fa-b10566")
    model = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    assert set(model) == set(fx["printed"]["buffers"]["model_mib"])
    assert round(model["RPC0[10.0.0.2:50052]"] / MiB, 2) == 5921.53


@pytest.mark.parametrize(("stem", "device", "before"), [
    ("gpt-oss-20b-f16-metal-m4-pro-plus-rpc-ts-1-1-8192-fa-b10566", "MTL0", 101.12),
    ("gpt-oss-20b-f16-metal-m4-pro-plus-rpc-ts-1-1-8192-fa-b10566", "RPC0[10.0.0.2:50052]", 101.12),
    ("smollm2-135m-q8_0-cpu-client-rpc-cpu-server-2048-np-auto-b10566", "RPC0[127.0.0.1:50052]", 15.50),
])
def test_the_unread_embeddings_input_stays_on_the_host(stem, device, before):
    """Since PR #18550 (b7774) build_inp_embd makes an n_embd x n_tokens F32 embeddings input beside the token ids
    and reads only the ids; no device node reads it, so the scheduler leaves it on the host: each device's buffer is
    the CPU graph's workspace less that row (compute.device_host_rows), on Metal and on an rpc-server as on
    Vulkan."""
    fx = _fixture(stem)
    v = held_out_estimate(fx).engine_view
    s = v["n_ctx"], min(v["n_ctx"], 512)  # both logs: -ub 512
    row = {"MTL0": 2880, "RPC0[10.0.0.2:50052]": 2880, "RPC0[127.0.0.1:50052]": 576}[device] * s[1] * 4 / MiB
    got = v["compute_buffer_bytes"][device] / MiB
    assert got == pytest.approx(before - row, abs=0.01)


def test_the_host_row_by_backend_and_build():
    """The row leaves every device backend's workspace from b7774; a ggml-cuda device's figures are its own
    (measured on the H200 runs), Vulkan's one row more on the dense attention graphs its node order favours."""
    from types import SimpleNamespace

    from oomkit.engines.llamacpp.compute import device_host_rows
    from oomkit.model.resolve import resolve

    spec = resolve("gpt-oss-20b", "MXFP4")
    ctx = SimpleNamespace(n_ctx=8192, n_ubatch=512, flash_attn=True, build=10566)  # the fields the rows read
    row = 2880 * 512 * 4
    assert {b: device_host_rows(spec, ctx, b) for b in ("metal", "sycl", "opencl", "cpu", "cuda", "rocm", "vulkan")} \
        == {"metal": row, "sycl": row, "opencl": row, "cpu": row, "cuda": 0, "rocm": 0, "vulkan": row}
    assert device_host_rows(spec, SimpleNamespace(**{**vars(ctx), "build": 7773}), "metal") == 0


def test_the_converters_gpt_oss_file_holds_the_experts_first():
    """convert_hf_to_gguf.py's GptOssModel.generate_extra_tensors adds the repacked MXFP4 experts to the writer
    while it first walks the checkpoint (safetensors' sorted names: blocks 0, 1, 10-19, 2, 20-23, 3-9), before
    prepare_tensors writes the rest in that order (lm_head, embed_tokens, the blocks, model.norm last). Metal maps
    [first, last) of its tensors (load_tensors over get_mapping_range): blocks 13-23 and the output layer run from
    blk.13's experts to the file's end, all but the experts of blocks 0, 1, 10, 11 and 12 (5 x 3 x 141004800
    bytes), 11124.19 MiB as printed. llama-quantize's files keep quantize_order (the ggml-org MXFP4 file of issue
    #19224 maps whole), and only the converter's own types are laid out so."""
    from oomkit.engines.llamacpp.weights import converter_order
    from oomkit.model.resolve import resolve

    fx = _fixture("gpt-oss-20b-f16-metal-m4-pro-plus-rpc-ts-1-1-8192-fa-b10566")
    model = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    assert round(model["MTL0_Mapped"] / MiB, 2) == fx["printed"]["buffers"]["model_mib"]["MTL0_Mapped"] == 11124.19
    order = converter_order(resolve("openai/gpt-oss-20b", "F16"))
    experts = sorted((n for n in order if n.endswith("_exps.weight")), key=order.get)
    assert [n.split(".")[1] for n in experts[::3]][:6] == ["0", "1", "10", "11", "12", "13"]
    assert max(order, key=order.get) == "output_norm.weight" and min(order.values()) == order[experts[0]] == 0
    assert converter_order(resolve("openai/gpt-oss-20b", "MXFP4")) is None
    assert converter_order(resolve("qwen3-8b", "F16")) is None
