"""llama.cpp runs held out from the rules' making: public start-up logs of common single-GPU setups
(tests/fixtures/engine_logs/llamacpp_heldout/, each with its source), read through oomkit with the log's own
flags, build and free memory, nothing tuned. Model, KV and output buffers must equal the printed figures (to the
0.01 MiB of a buffer line, or to the truncated MiB of a memory-breakdown table); compute buffers within 10%. A
figure oomkit misses stays a strict xfail with its measured error (the fixture's known_miss).

A fixture whose log shows a file without the model's next-n (MTP) block (`gguf_nextn_layers` 0: Qwen3.5 / 3.6 files
converted before llama.cpp's converter wrote it, b9180) is read as that file (weights.without_nextn), not as the
build's own converter would write it (weights.converted_file)."""

import json
import re
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.llamacpp.args import parse_args
from oomkit.engines.llamacpp.weights import without_nextn
from oomkit.memory import Device
from oomkit.model.resolve import resolve

MiB = 1 << 20
FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout").glob("*.json"))
CHECKS = ("model", "kv", "output", "compute", "fit")


def held_out_estimate(fx):
    """The log's run as oomkit reads it: its flags, its build, its device's free memory."""
    _, _, settings = parse_args(fx["argv"], fx.get("program", "llama-server"))
    prefix = fx.get("device_prefix", "CUDA")
    backend = {"backend": fx["backend_option"]} if "backend_option" in fx else {}
    if "devices" in fx:  # each device as the log names it: a local GPU, then an --rpc server (RPC0[host:port])
        devices = tuple(Device(id=d["id"], name=d["name"], memory_bytes=d["total_mib"] * MiB,
                               free_bytes=d["free_mib"] * MiB, integrated=d.get("integrated")) for d in fx["devices"])
    elif "free_mib" not in fx:  # a log that prints no device memory: its size unknown, no fit to check
        devices = tuple(Device(id=f"{prefix}{i}", name=g["name"]) for i, g in enumerate(fx["gpus"]))
    else:  # one `gpus` entry per device (in device order) or one for all
        gpu = (lambda i: fx["gpus"][i]) if len(fx["gpus"]) == len(fx["free_mib"]) else (lambda i: fx["gpus"][0])
        devices = tuple(Device(id=f"{prefix}{i}", name=gpu(i)["name"], memory_bytes=t * MiB, free_bytes=f * MiB,
                               integrated=gpu(i).get("integrated"))
                        for i, (f, t) in enumerate(zip(fx["free_mib"], fx["total_mib"], strict=True)))
    # typed_as: the repo the log's file came from, where its publisher changes the file's types
    model, quant = fx.get("typed_as") or fx["catalog_model"], fx["weight_format"]
    if fx.get("gguf_nextn_layers") == 0:  # the file the log loaded: its block_count is the trunk's
        model, quant = without_nextn(resolve(model, quant)), None
    # options: what the log shows of the build that no flag says (a BLAS backend: a "CPU compute buffer" line
    # beside the host buffer type's)
    return oomkit.estimate(model, "llama.cpp", quant=quant, devices=devices, settings=settings,
                           find_max_context=False, engine_version=fx["engine_version"], **backend,
                           **fx.get("options", {}))


def _host(by_name: dict[str, int]) -> int:
    """The Host row of the breakdown table: every buffer not on a device (CPU_Mapped, CPU, CUDA_Host, ...). A
    device's own mapped buffer type (Metal's MTL0_Mapped) is the device's: llama_model::memory_breakdown keys it by
    that buffer type, whose device is the GPU (common_memory_breakdown_print's row)."""
    return sum(b for name, b in by_name.items()
               if not re.fullmatch(r"((CUDA|ROCm|Vulkan|SYCL|MTL)\d+|RPC\d*\[.*\])(_Mapped)?", name))


def _pick(by_name: dict[str, int], dev: str) -> int:
    return _host(by_name) if dev == "Host" else by_name.get(dev, 0) + by_name.get(f"{dev}_Mapped", 0)


def _table_rows(text: str) -> dict[str, dict[str, float]]:
    """The rows of a common_memory_breakdown_print table as oomkit prints it: name -> model, context, compute."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\|\s+- (\S+).*?(\d+) =\s+(\d+) \+\s+(\d+) \+\s+(\d+)", line)
        if m:
            rows[m[1]] = {"model": int(m[3]), "context": int(m[4]), "compute": float(m[5])}
    return rows


def figures(fx, v) -> dict[str, dict[str, float]]:
    """oomkit's figures in the log's units, keyed as the fixture's printed block is: `breakdown` (the memory
    breakdown table: MiB truncated, per device and Host) or `buffers` (the buffer lines, 0.01 MiB). A table that
    is --fit's dry run (the fixture's `table`: "fit_dry_run") is read from oomkit's own table of that dry run
    (no_alloc: the host's compute as llama_context::memory_breakdown sums it there)."""
    if fx.get("table") == "fit_dry_run":
        rows = _table_rows(v["fit_memory_breakdown"])
        return {dev: rows[dev] for dev in fx["printed"]["breakdown"]}
    if "breakdown" in fx["printed"]:
        ctx = {**v["kv_buffer_bytes"]}
        for name, b in (v.get("rs_buffer_bytes") or {}).items():
            ctx[name] = ctx.get(name, 0) + b
        rows = {}
        for dev in fx["printed"]["breakdown"]:
            rows[dev] = {"model": _pick(v["model_buffer_bytes"], dev) // MiB, "context": _pick(ctx, dev) // MiB,
                         "compute": _pick(v["compute_buffer_bytes"], dev) / MiB}
        return rows
    mib = lambda by: {k: round(b / MiB, 2) for k, b in by.items()}  # noqa: E731
    return {"model": mib(v["model_buffer_bytes"]), "kv": mib(v["kv_buffer_bytes"]),
            "output": round(v["output_buffer_bytes"] / MiB, 2), "compute": mib(v["compute_buffer_bytes"])}


def check(fx, what: str) -> None:
    e = held_out_estimate(fx)
    got, p = figures(fx, e.engine_view), fx["printed"]
    if what == "fit":  # the context --fit keeps or picks, and the layers it leaves on the GPU
        f = p["fit"]
        assert e.engine_view["n_ctx"] == f["n_ctx"], (e.engine_view["n_ctx"], f)
        if "offloaded_layers" in f:
            assert e.engine_view["offloaded_layers"] == f["offloaded_layers"], (e.engine_view["offloaded_layers"], f)
        return
    if "breakdown" in p:
        for dev, row in p["breakdown"].items():
            if what == "model":
                assert got[dev]["model"] == row["model"], (dev, got[dev], row)
            elif what == "kv":
                assert got[dev]["context"] == row["context"], (dev, got[dev], row)
            elif what == "compute" and row["compute"]:
                assert 0.9 <= got[dev]["compute"] / row["compute"] <= 1.1, (dev, got[dev], row)
        return
    b = p["buffers"]
    if what == "model":
        assert {k: x for k, x in got["model"].items() if x} == b["model_mib"]
    elif what == "kv":
        assert got["kv"] == b["kv_mib"]
        if "rs_mib" in p:  # a hybrid's recurrent state, its own buffer line
            assert {k: round(x / MiB, 2) for k, x in e.engine_view["rs_buffer_bytes"].items()} == p["rs_mib"]
    elif what == "output":
        assert got["output"] == b["output_mib"]
    elif what == "compute":
        assert set(got["compute"]) == set(b["compute_mib"])
        for dev, printed in b["compute_mib"].items():
            assert 0.9 <= got["compute"][dev] / printed <= 1.1, (dev, got["compute"][dev], printed)


def params(fixtures=None):
    """One case per (log, figure) it checks; a figure the fixture names as a known miss is a strict xfail."""
    out = []
    for path in FIXTURES if fixtures is None else fixtures:
        fx = json.loads(path.read_text())
        for what in fx["checks"]:
            miss = fx.get("known_miss", {}).get(what)
            marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
            out.append(pytest.param(path, what, marks=marks, id=f"{path.stem}-{what}"))
    return out


@pytest.mark.parametrize(("path", "what"), params())
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def assert_cited_and_checked(fixtures, at_least: int) -> None:
    """Each held-out log cites its page, quotes its lines and checks only figures this harness knows."""
    assert len(fixtures) >= at_least
    for path in fixtures:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://") and fx["quoted"]
        assert set(fx["checks"]) <= set(CHECKS) and set(fx.get("known_miss", {})) <= set(fx["checks"])


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 1)


# The pinned binding's "CPU compute buffer size" (MiB) on the 4-layer synthetic files (tests/groundtruth/synth.py:
# each model's real layer shapes), -c 8192 -b 2048 -np 1, flash attention, F16 cache, one output row (llama-server's
# n_outputs_max), in ggml's own order and in ggml-vulkan's (ggml_vk_graph_optimize ported in
# tests/groundtruth/vk_graph_optimize.c, preloaded). (model, -ub) -> (CPU order, Vulkan order)
VK_ORDER_CPU_MIB = {("qwen3-8b", 512): (112.01, 104.01), ("qwen3-8b", 2048): (448.05, 416.05),
                    ("llama-3.1-8b", 512): (124.01, 116.01), ("llama-3.1-8b", 2048): (496.05, 464.05)}
N_EMBD = {"qwen3-8b": 4096, "llama-3.1-8b": 4096}


@pytest.mark.parametrize(("model", "ub"), list(VK_ORDER_CPU_MIB))
def test_vulkan_device_workspace_is_the_vulkan_ordered_graph_less_the_host_inputs(model, ub):
    """A fully offloaded Vulkan0's compute buffer is the CPU graph's under ggml-vulkan's node order less what the
    host keeps: the unread embeddings input row (PR #18550) and the token ids and positions (0.01-0.05 MiB). So the
    Qwen3-8B log above: 416.05 - 32 = 384.05 against 384.04 printed. oomkit's figure at b9849 within 0.1 MiB."""
    _, _, s = parse_args(["-c", "8192", "-b", "2048", "-ub", str(ub), "-np", "1", "-fa", "on"], "llama-server")
    dev = (Device(id="Vulkan0", name="RTX 3090", memory_bytes=24822 * MiB, free_bytes=23593 * MiB),)
    e = oomkit.estimate(model, "llama.cpp", quant="Q4_K_M", devices=dev, settings=s, find_max_context=False,
                        engine_version="b9849")
    cpu_order, vk_order = VK_ORDER_CPU_MIB[(model, ub)]
    want = vk_order - N_EMBD[model] * ub * 4 / MiB
    got = e.engine_view["compute_buffer_bytes"]["Vulkan0"] / MiB
    assert abs(got - want) < 0.1, (got, want, cpu_order)
