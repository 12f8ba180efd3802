"""An eighteenth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout18/, each with its
issue or pull request), read through oomkit with the log's own flags, build and devices by the held-out harness
(tests/test_llamacpp_heldout_logs.held_out_estimate), nothing tuned: TinyLlama 1.1B F16 over sixteen rpc-servers
and a GPU-less client at b3726 (#9426), the same model over a local CUDA GPU and one rpc-server in the pull request
that let RPC join local backends (PR #7640, b3078), and a Qwen2.5-32B Q4_K_M split over a Radeon RX 7900 XTX and a
GT 1030 through Vulkan at b4502 (#11004). Each printed model and KV buffer is checked to the 0.01 MiB, in the log's
order (the sixteen servers print as eight RPC[x] and eight RPC[y] lines).

Before -> after (oomkit's figures recorded before any rule was looked at). 25 buffers: before 23 exact and 2 within
10% (neither within 1%); after 25 exact:
- #9426, 16 RPC servers: the 16 RPC model buffers (168.03 / 84.02 MiB alternating, the last 125.01 MiB: the output
  layer) and the CPU's 125.00 MiB, all exact.
- PR #7640, CUDA0 and one rpc-server: CPU 125.00 exact; CUDA0 965.16 -> 1008.19 against 1008.19 printed (0.957),
  RPC 1008.19 -> 965.16 against 965.16 (1.045). oomkit put the RPC server first in every build; from PR #7640
  (b3078) to PR #9296 (b3664) llama.cpp counts it after the local GPUs (llama_get_device_count,
  llama_default_buffer_type_offload: device i >= dev_count - rpc_count is an RPC server), and again from PR #11262
  (b4501, common add_rpc_devices registers the servers after the backends' devices) to PR #11424 (b4559, "rpc: fix
  register position"); split.RPC_LAST_BUILDS.
- #11004, Vulkan0 + Vulkan1: model 16708.36 / 1799.99 / CPU_Mapped 417.66 and KV 960.00 / 64.00 MiB, all exact.

No gap is left. The set is smaller than asked and holds model and KV buffers only: the stored threads hold the
opening chunks of each turn, and most uncited Vulkan, Metal, ROCm and SYCL logs stop before the context's lines.
Searched (the issues corpus) and not used:
- already in tests/ (cited, or searched by an earlier set): #11552, #11807, #8112, #9337, #11083, #11337, #11598, #12728, #12817, #13248, #14086,
  #14947, #15009, #15974, #17609, #18011, #18160, #6114, #6122, #6943, #6861, #7575, #7791, #7804, #11204, #11367,
  #12336, #16867;
- no buffer line in the stored excerpt: #10420 (Vulkan Llama-3.2-1B F16: metadata only), #9472 (SYCL Llama-3.1-8B
  Q5_K_L: metadata only), #12390 (SYCL DeepSeek-V2-Lite: metadata only), #10757 and #12701 (Q4_0 repacking on ARM:
  metadata and the command), #5441 (Vulkan RX 580: vulkaninfo only), PR #14969 (ROCm: the KV layer list only),
  #6883, #11250;
- a figure in prose, not a log line: #5250 (SYCL, mythomax-l2-13b Q5_K_M with -ngl 99 "produced a buffer size of
  8694.21 MiB"; oomkit's SYCL0 figure at b2040 is 8694.21, but the thread quotes no line diagnose can read);
- a model oomkit's catalog does not hold, or a split the log does not fix: #8828 (Index-1.9B-Character on Vulkan),
  PR #6829 (BgGPT-7B, 38000-token vocabulary, over two RPC servers), #7293 (Mixtral over three RPC servers whose
  free memory is not printed), PR #16095 (Qwen3-Next on a Vulkan iGPU with weights kept on the CPU);
- not a mainline llama.cpp build: ik_llama.cpp threads, intel/ipex-llm#13130, koboldcpp, LocalAI, gpustack."""

import json
import re

import pytest

import oomkit
from oomkit.engines.llamacpp.args import parse_args
from oomkit.memory import Device
from tests.llamacpp_heldout import MiB, fixture_from, set_fixtures
from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, held_out_estimate

FIXTURES = set_fixtures("llamacpp_heldout18")
KINDS = (("model_lines", "model_buffer_bytes"), ("kv_lines", "kv_buffer_bytes"))


def _cases() -> list:
    """One case per printed buffer line: (fixture, kind, index in the log's order)."""
    out = []
    for path in FIXTURES:
        p = json.loads(path.read_text())["printed"]
        for kind, _ in KINDS:
            for i, (name, _, _) in enumerate(p.get(kind, [])):
                out.append(pytest.param(path, kind, i, id=f"{path.stem}-{kind[:-6]}-{i}-{name}"))
    return out


def _quoted(fx: dict, name: str, mib: float, kind: str) -> bool:
    """The figure as printed: a `<name> [model |KV ]buffer size = %8.2f MiB` line (old builds print no 'model',
    some locales a decimal comma)."""
    word = " KV" if kind == "kv_lines" else "( model)?"
    figure = re.escape(f"{mib:8.2f}").replace(r"\.", "[.,]")
    return re.search(rf"{re.escape(name)}{word} buffer size = {figure} MiB", fx["quoted"]) is not None


def test_held_out_logs_are_cited():
    """Each fixture cites its GitHub page and quotes every buffer figure it checks, as printed."""
    assert_cited_and_checked(FIXTURES, 3)
    for path in FIXTURES:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://github.com/ggml-org/llama.cpp/"), path.name
        for kind, _ in KINDS:
            for name, mib, _ in fx["printed"].get(kind, []):
                assert _quoted(fx, name, mib, kind), (path.name, name, mib)


@pytest.mark.parametrize(("path", "kind", "i"), _cases())
def test_held_out_log(path, kind, i):
    """oomkit's buffer under the name it gives (the fixture's third column: RPC servers by their endpoint) equals
    the printed figure to the 0.01 MiB."""
    fx = json.loads(path.read_text())
    name, printed, ours = fx["printed"][kind][i]
    view = held_out_estimate(fx).engine_view[dict(KINDS)[kind]]
    assert round(view.get(ours, 0) / MiB, 2) == printed, (name, ours, view.get(ours, 0) / MiB, printed)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_every_buffer_is_printed(path):
    """oomkit gives no model or KV buffer the log does not print."""
    fx = json.loads(path.read_text())
    v = held_out_estimate(fx).engine_view
    for kind, key in KINDS:
        if kind in fx["printed"]:
            assert {k for k, b in v[key].items() if b} == {ours for _, _, ours in fx["printed"][kind]}, kind


# PR #7640's run: TinyLlama 1.1B F16, CUDA0 and one rpc-server of the same free memory. The first device takes
# layers 0-11 (12 x 84.02 MiB), the second layers 12-21 and the output layer (10 x 84.02 + 125.01 MiB).
FIRST, SECOND = 1008.19, 965.16


@pytest.mark.parametrize(("build", "rpc_first"), [
    (3078, False), (3663, False), (3664, True), (4500, True), (4501, False), (4558, False), (4559, True),
    (6000, True)])
def test_rpc_servers_stand_first_or_last_by_build(build, rpc_first):
    """split.model_devices: the RPC servers after the local GPUs from PR #7640 (b3078) to before PR #9296 (b3664)
    and from PR #11262 (b4501) to before PR #11424 (b4559); first otherwise."""
    fx = fixture_from(FIXTURES, "tinyllama-1.1b-f16-cuda0")
    fx = {**fx, "engine_version": f"b{build}"}
    view = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    rpc = next(k for k in view if k.startswith("RPC"))
    got = (round(view["CUDA0"] / MiB, 2), round(view[rpc] / MiB, 2))
    assert got == ((SECOND, FIRST) if rpc_first else (FIRST, SECOND)), (build, got)


@pytest.mark.parametrize(("build", "rpc_first"), [(3078, False), (4559, True)])
def test_tensor_split_follows_the_build_order(build, rpc_first):
    """-ts gives its proportions in the build's device order: with -ts 22,1 the first device holds the 22 layers
    and the second the output layer alone (125.01 MiB, #9426's last server)."""
    fx = fixture_from(FIXTURES, "tinyllama-1.1b-f16-cuda0")
    fx = {**fx, "engine_version": f"b{build}", "argv": [*fx["argv"], "-ts", "22,1"]}
    view = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    second = next(k for k in view if k.startswith("RPC")) if not rpc_first else "CUDA0"
    assert round(view[second] / MiB, 2) == 125.01, (build, view)


def test_sixteen_servers_split_evenly():
    """#9426: 23 offloaded layers over 16 equal servers: 2,1,2,1,2,1,2,1,1,2,1,2,1,2,1 layers and the output."""
    fx = fixture_from(FIXTURES, "tinyllama-1.1b-f16-16-rpc")
    est = held_out_estimate(fx)
    counts = [sum(1 for lay in est.layers if lay.device == u.id) for u in est.devices if u.id.startswith("RPC")]
    assert counts == [2, 1, 2, 1, 2, 1, 2, 1, 1, 2, 1, 2, 1, 2, 1, 0]


def test_settings_json_leaves_out_the_server_sequence_switch():
    """server_extra_seq is no llama.cpp flag (an Ollama runner's server.cpp copy turns it off): the estimate's
    public settings do not show it; the sequence it adds still counts (engine_view n_seq_max, b3779: -np 1 loads
    two sequences in llama-server)."""
    _, _, s = parse_args(["-c", "2048", "-np", "1"], "llama-server")
    e = oomkit.estimate("qwen2.5-7b-instruct", "llama.cpp", quant="Q4_K_M", settings=s, find_max_context=False,
                        devices=(Device(id="CUDA0", name="RTX 3090"),), engine_version="b3779")
    assert "server_extra_seq" not in e.settings
    assert "server_extra_seq" not in e.to_dict()["settings"]
    assert e.engine_view["n_seq_max"] == 2
