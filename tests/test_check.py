"""`oomkit check` (exit codes 0/1/2, the verdict, the stage that fails first, the largest context, honest limits)
and `oomkit watch` (the fake NVML over a few polls, the no-GPU exit 0, Ctrl-C)."""

import json

import pytest

from oomkit.check import check
from oomkit.engines.base import get_engine
from oomkit.hardware.detect import Gpu, Hardware, HostMemory
from oomkit.memory import Device
from oomkit.request import resolve_model
from tests.hardware_fakes import GiB, MiB, fake_nvml, oomkit_env, replay, rtx4090, run_oomkit
from tests.oracles import bisect_max_context


def resolve(name: str):
    return resolve_model(get_engine("llama.cpp"), name)


LLAMA8 = resolve("llama3.1:8b")
KV_F16_PER_TOKEN = 32 * 8 * 128 * 2 * 2  # layers x kv heads x head dim x (K, V) x f16 = 128 KiB


def detected(*gpus: Gpu, host: HostMemory | None = None) -> Hardware:
    return Hardware(gpus=gpus, host=host or HostMemory(64 * GiB, 40 * GiB))


def gpu(free_mib: int, total_mib: int = 24564, used_mib: int | None = None, index: int = 0) -> Gpu:
    used = total_mib - free_mib - 500 if used_mib is None else used_mib
    return Gpu(index=index, name="NVIDIA GeForce RTX 4090", vendor="nvidia", total_bytes=total_mib * MiB,
               free_bytes=free_mib * MiB, used_bytes=used * MiB, source="nvml")


# ---------------------------------------------------------------------------------------------------------
# The verdict through the Python API


def test_fits_with_margin_on_the_free_memory_of_a_detected_gpu():
    r = check(LLAMA8, hardware=detected(gpu(free_mib=20000)), n_ctx=32768, n_parallel=1)
    assert r.hardware == "detected" and r.fits and r.stage is None
    (d,) = r.devices
    assert d.budget_bytes == 20000 * MiB and d.total_bytes == 24564 * MiB and d.used_by_others_bytes == 4064 * MiB
    assert d.usage.kv_cache_bytes == 32768 * KV_F16_PER_TOKEN == 4 * GiB
    assert r.margin_bytes == 20000 * MiB - d.usage.total_bytes
    assert r.verdict == f"fits with {r.margin_bytes / MiB:,.0f} MiB left"
    assert d.after_weights_bytes == 20000 * MiB - d.usage.weights_bytes - 457 * MiB


def test_kv_cache_is_the_stage_that_fails_and_the_largest_context_is_exact():
    # the layout as typed (-fit off): with the fit on, llama.cpp would move layers to the CPU instead
    r = check(LLAMA8, hardware=detected(gpu(free_mib=12000)), n_ctx=131072, n_parallel=1, fit=False)
    assert not r.fits and r.stage == "kv_cache" and r.failing.usage.id == "CUDA0"
    assert r.verdict == f"does not fit by {-r.margin_bytes / MiB:,.0f} MiB"
    eng = get_engine("llama.cpp")
    s = eng.settings(n_ctx=131072, n_parallel=1, fit=False)
    devs = (Device("CUDA0", "x", 12000 * MiB, 12000 * MiB),)
    assert r.max_context == bisect_max_context(eng, LLAMA8, devs, s)
    # by hand: weights + runtime + compute + n x 128 KiB within the 12000 MiB free
    at = eng.estimate(LLAMA8, devs, eng.with_context(s, r.max_context)).devices[0]
    above = eng.estimate(LLAMA8, devs, eng.with_context(s, r.max_context + 256)).devices[0]
    assert at.total_bytes <= 12000 * MiB < above.total_bytes
    assert at.kv_cache_bytes == r.max_context * KV_F16_PER_TOKEN
    # a quantized cache fits more: q8_0 is 34/32 bytes a value, q4_0 18/32
    assert r.max_context < r.max_context_by_kv["q8_0"] < r.max_context_by_kv["q4_0"]


def test_weights_stage_and_no_setting_can_fit():
    r = check(resolve("llama3.1:70b"), vram="24GiB", n_ctx=8192, fit=False)
    assert not r.fits and r.stage == "weights" and r.max_context is None
    assert r.impossible and r.min_required_kv == "q4_0"
    assert r.min_required_bytes > 24 * GiB  # the requirement, against the physical memory


def test_compute_stage():
    eng = get_engine("llama.cpp")
    s = eng.settings(n_ctx=8192, n_parallel=1, fit=False)
    u = eng.estimate(LLAMA8, (Device("CUDA0", "GPU"),), s).devices[0]
    budget = u.total_bytes - u.compute_bytes // 2  # weights and KV fit, the compute buffer does not
    r = check(LLAMA8, vram=str(budget), settings=s)
    assert r.stage == "compute" and r.margin_bytes == -(u.compute_bytes - u.compute_bytes // 2)


def test_would_fit_on_an_idle_card():
    # 2 GiB free on a 24 GB card: nothing fits now, the smallest setting would fit if the others let go
    r = check(LLAMA8, hardware=detected(gpu(free_mib=2048)), n_ctx=8192, n_parallel=1, fit=False)
    assert r.stage == "weights" and r.max_context is None and not r.impossible
    assert r.min_required_bytes < 24564 * MiB


def test_reference_card_without_gpu():
    r = check(LLAMA8, hardware=detected())
    assert r.hardware == "reference" and r.reference == "NVIDIA GeForce RTX 4090"
    assert r.devices[0].budget_bytes == 24564 * MiB


def test_two_detected_gpus_split_by_free_memory():
    hw = detected(gpu(free_mib=23000, index=0), gpu(free_mib=11000, index=1))
    r = check(resolve("qwen2.5:32b"), hardware=hw, n_ctx=16384, n_parallel=1)
    assert [d.usage.id for d in r.devices] == ["CUDA0", "CUDA1"]
    w0, w1 = (d.usage.weights_bytes for d in r.devices)
    assert w0 > w1 > 0  # llama.cpp splits layers by free memory


def test_cpu_only_checks_host_ram():
    hw = detected(host=HostMemory(total_bytes=16 * GiB, available_bytes=6 * GiB))
    r = check(LLAMA8, cpu_only=True, hardware=hw, n_ctx=8192, n_parallel=1)
    assert r.hardware == "cpu" and r.fits and r.devices[0].budget_bytes == 6 * GiB
    r = check(LLAMA8, cpu_only=True, hardware=hw, n_ctx=131072, n_parallel=1)
    assert not r.fits and r.stage == "kv_cache" and 0 < r.max_context < 131072


def test_detection_failure_is_bad_input():
    from oomkit.errors import OomkitError

    broken = Hardware(gpus=(), host=None, errors=("NVIDIA nvidia-smi: exited with status 18: mismatch",))
    with pytest.raises(OomkitError, match="could not read this machine's GPUs"):
        check(LLAMA8, hardware=broken)


def test_context_above_the_trained_maximum_names_the_rope_factor():
    r = check(LLAMA8, vram="80GiB", n_ctx=200000, n_parallel=1)
    assert r.rope_scaling_factor == 1.53 and "RoPE scaling by a factor of 1.53" in r.notes[0]


def test_an_engine_default_from_the_configs_rope_factor_is_not_told_to_scale_again():
    # vllm#5248: vLLM 0.4.2 serves deepseek-coder-6.7b at 16,384 x its linear factor 4 by default; the config's
    # scaling is already applied, so the note says where 65,536 comes from instead of advising YaRN
    r = check("deepseek-ai/deepseek-coder-6.7b-instruct", "vllm", vram="80GiB", engine_version="0.4.2")
    assert r.n_ctx == 65536 and r.rope_scaling_factor == 4.0
    assert "16384 times the declared RoPE factor (linear, 4)" in r.notes[0] and "YaRN" not in r.notes[0]


# ---------------------------------------------------------------------------------------------------------
# The command: exit codes 0 / 1 / 2, in a subprocess


def test_exit_0_when_it_fits_and_json():
    r = run_oomkit("check", "llama3.1:8b", "--ctx", "32768", "-np", "1", "--vram", "24GiB", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["fits"] is True and d["stage"] is None and d["hardware"] == "planned"
    assert d["kv_cache_bytes"] == 4 * GiB and d["kv_bytes_per_token"] == 128 * 1024
    assert d["max_context"] == 131072 and d["devices"][0]["budget_bytes"] == 24 * GiB
    for key in ("verdict", "margin_bytes", "after_weights_bytes", "n_ctx", "n_ctx_train", "max_context_by_kv",
                "estimate"):
        assert key in d


def test_exit_1_when_it_does_not_fit_with_the_stage():
    r = run_oomkit("check", "llama3.1:8b", "--ctx", "131072", "-np", "1", "--vram", "8GiB", "-fit", "off")
    assert r.returncode == 1
    assert "DOES NOT FIT" in r.stdout and "fails first at the KV cache" in r.stdout
    # 25344: KV 0.125 MiB a token plus the compute buffer, whose feed-forward workspace (gate, up and SwiGLU rows
    # over the KQ masks) llama.cpp prints as 148.01 MiB at 32K with llama-server's few logits rows
    # (tests/test_llamacpp_compute.py); 3,332 MiB are left after the weights
    assert "largest context that fits with these settings: 25344" in r.stdout


def test_exit_1_and_honest_when_nothing_fits():
    r = run_oomkit("check", "llama3.1:70b", "--gpu", "RTX 4060", "-fit", "off")
    assert r.returncode == 1 and "no setting fits" in r.stdout and "of physical memory" in r.stdout


def test_fit_on_by_default_moves_layers_to_the_cpu_when_the_context_is_typed():
    """-c typed, -ngl not: llama.cpp's --fit keeps the context and moves whole layers to the CPU, back to front,
    until the GPU keeps its 1024 MiB target free (common_params_fit_impl). It runs, split with the CPU: not a fit
    (as an Ollama split is not), and the note says what moved; the estimate is that layout, the typed one under
    engine_view typed_*. The rule checked with -fit off estimates: -ngl N leaves the target free, N + 1 does not.
    The largest context that fits is the largest that llama.cpp loads without moving anything."""
    r = run_oomkit("check", "llama3.1:8b", "--ctx", "131072", "-np", "1", "--vram", "8GiB", "--json")
    assert r.returncode == 1, r.stdout
    d = json.loads(r.stdout)
    assert d["fits"] is False and d["stage"] == "engine" and d["estimate"]["fits"] is False
    assert all(dev["left_bytes"] >= 0 for dev in d["devices"])
    view = d["estimate"]["engine_view"]
    ngl = view["fit_n_gpu_layers"]
    assert d["n_ctx"] == 131072 and view["typed_offloaded_layers"] == "33/33" and view["typed_fits"] is False
    assert view["offloaded_layers"] == f"{ngl}/33" and 0 < ngl < 33
    eng = get_engine("llama.cpp")
    free = 8 * GiB - 457 * MiB  # what ggml_backend_dev_memory reports once the CUDA context is up
    for n, ok in ((ngl, True), (ngl + 1, False)):
        s = eng.settings(n_ctx=131072, n_parallel=1, n_gpu_layers=n, fit=False)
        u = eng.estimate(LLAMA8, (Device("CUDA0", "GPU", 8 * GiB),), s).devices[0]
        assert (u.total_bytes - u.overhead_bytes <= free - 1024 * MiB) is ok, n
    note = d["estimate"]["warnings"][0]
    assert f"moves {33 - ngl} layers to the CPU (-ngl {ngl})" in note and "split with the CPU" in note
    assert "add -fit off to keep every layer on the GPU (which does not fit)" in note
    text = run_oomkit("check", "llama3.1:8b", "--ctx", "131072", "-np", "1", "--vram", "8GiB").stdout
    assert "verdict: DOES NOT FIT — llama.cpp runs these settings only split with the CPU although" in text
    n = d["max_context"]
    for c, ok in ((n, True), (n + 256, False)):  # as typed, every layer on the GPU with 1024 MiB free
        s = eng.settings(n_ctx=c, n_parallel=1, fit=False)
        u = eng.estimate(LLAMA8, (Device("CUDA0", "GPU", 8 * GiB),), s).devices[0]
        assert (u.total_bytes - u.overhead_bytes <= free - 1024 * MiB) is ok, c


def test_fit_reduces_an_untyped_context_and_old_builds_do_not():
    """No -c: --fit lowers the trained context to what leaves 1024 MiB free (a multiple of 256, at least
    -fitc 4096); the estimate is that context's, the typed one under typed_n_ctx. -fit off keeps the trained
    context and does not fit; builds before --fit (PR #16653, b6900 here) do not fit either, and their -c default
    was common_params' 4096 (programs.COMMON_CTX_ERAS)."""
    r = run_oomkit("check", "llama3.1:8b", "-np", "1", "--vram", "8GiB", "--json")
    d = json.loads(r.stdout)
    view = d["estimate"]["engine_view"]
    assert r.returncode == 0 and view["typed_n_ctx"] == 131072 and 4096 <= d["n_ctx"] < 131072
    assert d["n_ctx"] % 256 == 0 and view["offloaded_layers"] == "33/33"
    dev = d["devices"][0]
    assert dev["needed_bytes"] - dev["overhead_bytes"] <= 8 * GiB - 457 * MiB - 1024 * MiB
    assert (f"reduces the context from 131072 to {d['n_ctx']} to leave 1024 MiB free per device; add -fit off "
            "to keep the context of 131072") in d["estimate"]["warnings"][0]
    r = run_oomkit("check", "llama3.1:8b", "-np", "1", "--vram", "8GiB", "--json", "-fit", "off")
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["n_ctx"] == 131072 and "typed_n_ctx" not in d["estimate"]["engine_view"]
    r = run_oomkit("check", "llama3.1:8b", "-np", "1", "--vram", "8GiB", "--json", "--engine-version", "b6900")
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["n_ctx"] == 4096 and "typed_n_ctx" not in d["estimate"]["engine_view"]


def test_fit_that_cannot_fit_says_so():
    """A 70B model on an 8 GB card with -ngl typed: the fit may only shrink an untyped context (to -fitc 4096 at
    the least) and then refuses ("n_gpu_layers already set by user"); llama.cpp loads the rest as typed and the
    load fails: fits is false and the note says both."""
    r = run_oomkit("check", "llama3.1:70b", "--gpu", "RTX 4060", "-ngl", "99", "--json")
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["fits"] is False
    note = d["estimate"]["warnings"][0]
    assert note.startswith("llama.cpp's --fit (on by default) cannot fit this command (n_gpu_layers already set "
                           "by user to 99, abort); it still reduces the context from 131072 to 4096")
    assert "even so it does not fit" in note and d["n_ctx"] == 4096


@pytest.mark.parametrize("args,words", [
    (["llama3.1:8b", "--gpu", "RTX 4900"], "unknown GPU 'RTX 4900': did you mean RTX 4090"),
    (["llama3.1:8b", "--vram", "24XB"], "cannot read size '24XB'"),
    (["llama3.1:8b", "--ctx", "lots"], "--ctx takes an integer"),
    (["no-such-model-xyz"], ""),
])
def test_exit_2_on_bad_input_with_one_line(args, words):
    r = run_oomkit("check", *args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("oomkit: error: ") and r.stderr.count("\n") == 1 and words in r.stderr


def test_exit_2_when_detection_tools_are_broken(tmp_path):
    env = oomkit_env(tmp_path, {"init_error": 999, "gpus": []},
                     tools={"nvidia-smi": "printf '\\001\\002 garbage\\n'"})
    r = run_oomkit("check", "llama3.1:8b", env=env)
    assert r.returncode == 2 and "could not read this machine's GPUs" in r.stderr and r.stderr.count("\n") == 1
    # the planned hardware does not need detection
    assert run_oomkit("check", "llama3.1:8b", "--vram", "24GiB", "-c", "8192", env=env).returncode == 0


def test_check_alone_runs_the_example_on_the_reference_card(tmp_path):
    r = run_oomkit("check", env=oomkit_env(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "built-in example, llama3.1:8b" in r.stdout
    assert "no GPU found on this machine: checking against the reference card NVIDIA GeForce RTX 4090" in r.stdout
    d = json.loads(run_oomkit("check", "--json", env=oomkit_env(tmp_path)).stdout)
    assert d["hardware"] == "reference" and d["n_ctx"] == 131072


def test_check_alone_on_a_detected_gpu_uses_free_memory(tmp_path):
    env = oomkit_env(tmp_path, {"gpus": [rtx4090(free=12000 * MiB, used=12000 * MiB)]})
    r = run_oomkit("check", "--json", env=env)
    # the example types no -c: llama-server's --fit (on by default) shrinks the trained 131072 to what the 12000
    # MiB free leave room for, keeping its 1024 MiB target free (common_params_fit_impl), a multiple of 256
    assert r.returncode == 0, r.stdout
    d = json.loads(r.stdout)
    (dev,) = d["devices"]
    assert d["hardware"] == "detected" and dev["budget_bytes"] == 12000 * MiB
    assert dev["used_by_others_bytes"] == 12000 * MiB and dev["total_bytes"] == 24564 * MiB
    assert 4096 <= d["n_ctx"] < 131072 and d["n_ctx"] % 256 == 0
    assert dev["needed_bytes"] - dev["overhead_bytes"] <= (12000 - 1024) * MiB
    view = d["estimate"]["engine_view"]
    assert view["typed_n_ctx"] == 131072 and view["fit_n_ctx"] == d["n_ctx"] == view["n_ctx"]
    # as typed (-fit off) the KV cache is the stage that fails
    r = run_oomkit("check", "--json", "llama3.1:8b", "-fit", "off", env=env)
    d = json.loads(r.stdout)
    assert r.returncode == 1 and d["stage"] == "kv_cache" and d["failing_device"] == "CUDA0"
    text = run_oomkit("check", env=env).stdout
    assert "12,000 MiB free · 12,000 MiB used by other processes" in text


def test_context_above_maximum_warns_on_stderr():
    r = run_oomkit("check", "llama3.1:8b", "--ctx", "262144", "-np", "1", "--vram", "80GiB")
    assert r.returncode == 0
    assert "warning: context 262144 is above" in r.stderr and "factor of 2.00" in r.stderr


# ---------------------------------------------------------------------------------------------------------
# oomkit watch


def test_watch_polls_the_fake_nvml(tmp_path):
    nvml = {"gpus": [rtx4090(free=[20000 * MiB, 9000 * MiB], used=[4000 * MiB, 15000 * MiB],
                             processes=[{"pid": 999999, "used": 3800 * MiB}])]}
    # -fit off: the KV headroom of the layout as typed (with the fit, llama.cpp would move layers to the CPU)
    r = run_oomkit("watch", "llama3.1:8b", "-c", "32768", "-np", "1", "-fit", "off", "--iterations", "2",
                   "--interval", "0",
                   env=oomkit_env(tmp_path, nvml))
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.split("\n\n")
    assert "20,000 MiB" in first and "9,000 MiB" in second
    assert "999999" in first and "3,800 MiB" in first
    assert "it needs 4,096 MiB · fits" in first and "WARNING: does not fit" in second
    assert "largest context that fits in the free memory now" in second


def test_watch_once_without_model(tmp_path):
    r = run_oomkit("watch", "--once", env=oomkit_env(tmp_path, {"gpus": [rtx4090(free=20000 * MiB, used=0)]}))
    assert r.returncode == 0 and r.stdout.count("NVIDIA GeForce RTX 4090") == 1


def test_watch_without_gpu_exits_0(tmp_path):
    r = run_oomkit("watch", env=oomkit_env(tmp_path))
    assert r.returncode == 0 and "no GPU found" in r.stdout


def test_watch_ctrl_c_exits_cleanly(monkeypatch, capsys):
    import sys

    from oomkit.commands import watch

    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml({"gpus": [rtx4090(free=20000 * MiB, used=0)]}))

    def interrupt(_):
        raise KeyboardInterrupt

    monkeypatch.setattr(watch.time, "sleep", interrupt)
    assert watch.run(["--interval", "0"]) == 0
    assert "NVIDIA GeForce RTX 4090" in capsys.readouterr().out


def test_watch_flags_a_running_engine_whose_context_does_not_fit(tmp_path):
    from oomkit.hardware.monitor import Monitor
    from oomkit.watch import EngineTracker
    from tests.ggufs import write_llama_gguf

    model = write_llama_gguf(tmp_path / "m.gguf")
    nv = fake_nvml({"gpus": [rtx4090(free=100 * MiB, used=200 * MiB, processes=[{"pid": 4242, "used": 200 * MiB},
                                                                                  {"pid": 5151, "used": 10 * MiB}])]})
    cmds = {4242: ["/usr/bin/llama-server", "-m", str(model), "-c", "1048576", "-np", "1", "-fa", "on"],
            5151: ["/usr/bin/Xorg", ":0"]}
    monitor = Monitor(replay({}, modules={"pynvml": nv}))
    tracker = EngineTracker(cmdline=cmds.get)
    (e,) = tracker.engines(monitor.poll())
    assert e.process.pid == 4242 and e.fits is False and e.available_bytes == 300 * MiB
    assert e.needed_bytes > e.available_bytes
    monitor.close()


def test_engine_refusal_is_not_a_fit():
    # vLLM leaves 1.4 GiB of KV room for Qwen3-32B AWQ on a 24 GiB card: the memory "fits", but vLLM refuses to
    # start with max_model_len 40960 (it needs 10 GiB of KV for one request). check must say so and exit 1; the
    # largest context is the one vLLM accepts, as the estimate's own search finds it.
    from oomkit.estimate import estimate

    model = "Qwen/Qwen3-32B:awq"
    est = estimate(model, "vllm", gpu="RTX 4090", max_model_len=40960)
    assert est.fits is False and est.engine_view.get("error")
    r = check(model, engine="vllm", gpu="RTX 4090", max_model_len=40960)
    assert r.engine_refuses and not r.fits and r.stage == "engine"
    assert r.max_context == est.max_context
    proc = run_oomkit("check", model, "--engine", "vllm", "--gpu", "RTX 4090", "--ctx", "40960")
    assert proc.returncode == 1 and "vllm refuses these settings" in proc.stdout


def test_cpu_only_check_json_carries_the_host_verdict():
    """check --cpu-only: the estimate inside the JSON weighs the same host budget as the check (host.memory_bytes),
    so its fits is the check's verdict, not null."""
    hw = detected(host=HostMemory(total_bytes=16 * GiB, available_bytes=6 * GiB))
    for n_ctx, fits in ((8192, True), (131072, False)):
        d = check(LLAMA8, cpu_only=True, hardware=hw, n_ctx=n_ctx, n_parallel=1).to_dict()
        assert d["fits"] is fits and d["estimate"]["fits"] is fits
        assert d["estimate"]["host"]["memory_bytes"] == 6 * GiB


def test_vllm_death_after_the_kv_cache_is_named_as_the_engine_prints_it():
    """llm-d-planner's gpt-oss-20b log on one H100 at vLLM 0.19.0 with --gpu-memory-utilization 0.95 and 1024
    sequences (tests/fixtures/engine_logs/vllm/llmd-gpt-oss-20b-h100-v0.19-tp1-util095-sampler-fail.json) allocates
    its KV cache, then dies warming up the sampler. check says the run starts, then dies in that phase, and that a
    shorter context is no fix (the warm-up is max_num_seqs rows of logits, whatever the context)."""
    args = ("check", "--gpu", "H100", "--engine-version", "0.19.0", "--", "vllm", "serve", "openai/gpt-oss-20b",
            "--gpu-memory-utilization", "0.95", "--max-model-len", "8192", "--max-num-seqs", "1024")
    proc = run_oomkit(*args)
    assert proc.returncode == 1, proc.stderr
    verdict = next(line for line in proc.stdout.splitlines() if line.startswith("verdict:"))
    assert "vllm starts, then dies: KV cache allocated, then the sampler warm-up needs" in verdict
    assert "lower --max-num-seqs" in verdict
    assert "a shorter context does not help" in proc.stdout and "idle card" not in proc.stdout


def test_vllm_profile_run_past_the_physical_memory_dies_in_the_profile_run():
    """Qwen3-30B-A3B FP8 (29.1 GiB of weights) on a 32 GB RTX 5090 at 0.95 with 32,768 batched tokens: the weights
    load, then the profile run's activation peak does not fit in what the card has left, so PyTorch runs out of
    memory inside profile_run, before vLLM can count a cache block (gpu_worker.py determine_available_memory calls
    profile_run first; kv_cache_utils.py check_enough_kv_cache_memory comes after it). The stage is the profile
    run's (compute), not the KV check's refusal."""
    cmd = ["vllm", "serve", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--max-model-len", "65536",
           "--gpu-memory-utilization", "0.95", "--max-num-batched-tokens", "32768"]
    proc = run_oomkit("check", "--gpu", "RTX 5090", "--json", "--", *cmd)
    assert proc.returncode == 1, proc.stderr
    d = json.loads(proc.stdout)
    assert d["fits"] is False and d["stage"] == "compute"
    text = run_oomkit("check", "--gpu", "RTX 5090", "--", *cmd).stdout
    assert "fails first during vllm's start-up: the profile run (activation peak) needs" in text
    assert "No available memory for the cache blocks" not in text


def test_json_verdict_of_an_engine_refusal_names_the_engine_not_a_zero_shortfall():
    """Qwen3-32B AWQ at max_model_len 40960 on a 24 GiB card fits in memory, yet vLLM refuses to start (see
    test_engine_refusal_is_not_a_fit): the verdict string says so instead of "does not fit by 0 MiB"."""
    r = check("Qwen/Qwen3-32B:awq", engine="vllm", gpu="RTX 4090", max_model_len=40960)
    assert r.engine_refuses and r.margin_bytes >= 0
    assert r.verdict.startswith("does not fit: vllm refuses these settings with ")
    assert r.to_dict()["verdict"] == r.verdict


def test_json_verdict_of_a_split_names_the_split_as_the_text_does():
    """Ollama loads Llama 3.1 70B on a 24 GB card split with the CPU (its scheduler offloads what does not fit): the
    JSON verdict says so in the text report's words, not that Ollama refuses the settings."""
    r = check("llama3.1:70b", engine="ollama", gpu="RTX 4090")
    assert r.engine_refuses and r.refusal_kind == "runs these settings only split with the CPU"
    assert r.verdict.startswith("does not fit: ollama runs these settings only split with the CPU, with ")
    assert r.to_dict()["verdict"] == r.verdict
    text = run_oomkit("check", "llama3.1:70b", "--engine", "ollama", "--gpu", "RTX 4090").stdout
    assert "verdict: DOES NOT FIT — ollama runs these settings only split with the CPU although" in text


def test_vllm_says_which_gpus_it_leaves_idle():
    """vLLM's world size is TP x PP x DP: with two GPUs and no -tp it loads on one (the DeepSeek-V3 weights then do
    not fit); the estimate says the second is idle, and says nothing once -tp 2 uses both."""
    from oomkit.estimate import estimate

    one = estimate("Qwen/Qwen3-8B", "vllm", gpu="H200,H200", max_model_len=8192)
    assert [d.id for d in one.devices] == ["CUDA0"]
    assert any(w.startswith("vLLM uses 1 of the 2 GPUs given") for w in one.warnings)
    both = estimate("Qwen/Qwen3-8B", "vllm", gpu="H200,H200", max_model_len=8192, tensor_parallel_size=2)
    assert not any("of the 2 GPUs given" in w for w in both.warnings)


def test_runtime_row_names_the_backend_of_the_devices():
    """The runtime row names the devices' own runtime: a Radeon through llama.cpp's ROCm backend is a HIP context,
    an Apple chip is Metal, an NVIDIA card CUDA."""
    from oomkit.report.check import text

    for gpu_name, label in (("RX 7900 XTX", "HIP (ROCm) context"), ("M3 Max", "Metal runtime"),
                            ("RTX 4090", "CUDA context")):
        out = text(check(LLAMA8, gpu=gpu_name, n_ctx=8192))
        row = next(line for line in out.splitlines() if line.strip().startswith("runtime"))
        assert row.endswith(f"{label} and workspace"), row


def test_weights_past_the_memory_come_before_the_engines_refusal():
    """gpt-oss-120b's 60.8 GiB of MXFP4 experts on one 32 GB RTX 5090: the weights do not load, which is the first
    stage whatever the engine's own refusal says (vLLM's estimate words it as the load's CUDA OOM)."""
    proc = run_oomkit("check", "--gpu", "RTX 5090", "--json", "--", "vllm", "serve", "openai/gpt-oss-120b")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["stage"] == "weights"
    text = run_oomkit("check", "--gpu", "RTX 5090", "--", "vllm", "serve", "openai/gpt-oss-120b").stdout
    assert "fails first at the weights: vllm refuses to start: CUDA out of memory while loading the model" in text
