"""The planner (oomkit plan), fit and diff: every option fits when re-estimated from its own command, the front is
the Pareto front of what was tried, fit changes only what it reports, and the three tiers on the cases users bring
(an 8B reasoning model on an 8 GB card, a 70B on 24 GB, DeepSeek-V3 on 8 x H200 and on two nodes of 8 x H100)."""

from __future__ import annotations

import json
import shlex
from dataclasses import fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command
from oomkit.plan.fit import fit
from oomkit.plan.options import Goals, budgets, evaluate, slack
from oomkit.plan.search import dominates, plan
from oomkit.request import devices_from, resolve_model
from oomkit.units import GiB

from .oracles import bisect_max_context


def reestimate(option, devices, goals):
    """The option's own command line, parsed as the engine parses it, estimated again."""
    parsed = parse_command(shlex.split(option.command))
    eng = get_engine(parsed.engine)
    spec = resolve_model(eng, parsed.model, parsed.quant)
    return eng.estimate(spec, devices, parsed.settings)


# ---------------------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vram_gib=st.integers(min_value=6, max_value=48),
       case=st.sampled_from([("llama3.1:8b", "llama.cpp"), ("qwen3:30b-a3b", "llama.cpp"),
                             ("Qwen/Qwen3-8B", "vllm"), ("qwen3:8b", "ollama"), ("gemma3:12b", "llama.cpp")]),
       headroom_mib=st.sampled_from([0, 512]))
def test_every_option_fits_again_from_its_command_and_the_front_is_pareto(vram_gib, case, headroom_mib):
    model, engine = case
    devices = devices_from(f"{vram_gib}GiB")
    goals = Goals(min_ctx=4096, headroom_bytes=headroom_mib << 20)
    p = plan(model, engine, devices=devices, goals=goals, limit=None)
    limits = budgets(devices, goals)
    for o in p.options:
        est = reestimate(o, devices, goals)
        assert est.total_bytes == o.estimate.total_bytes  # the command reproduces the memory shown
        assert slack(est, limits, split_ok=o.tier == 2) >= 0  # fits with the stated headroom
        assert o.headroom_bytes >= 0
        assert o.context >= 4096
    # nothing the planner dropped would have fit with a value at least as good on every axis and better on one
    eng = get_engine(engine)
    spec = resolve_model(eng, model)
    tried = []
    for choice in eng.knobs(model, spec, devices, eng.settings(), concurrency=1):
        try:
            cspec = resolve_model(eng, choice.model or model, choice.quant)
        except Exception:  # a format this model is not published in
            continue
        o = evaluate(eng, cspec, choice, model, devices, goals, goals.context_for(spec))
        if o is not None:
            tried.append(o)
    assert len(tried) >= len(p.options)
    for o in tried:
        if not any(_same(o, f) for f in p.options):
            assert any(dominates(f, o) for f in p.options), o.label
    for a in p.options:
        assert not any(dominates(b, a) for b in p.options if b is not a)


def _same(a, b):
    return a.command == b.command


# ---------------------------------------------------------------------------------------------------------
# The tiers on real cases


def test_tier1_eight_gb_card_largest_context_per_kv_type():
    """DeepSeek-R1-0528-Qwen3-8B at Q4_K_M on an 8 GB card: the largest context with each KV type is exactly the
    one a plain bisection on llama.cpp's estimate finds, and quantizing the cache buys context."""
    devices = devices_from("8GiB")
    p = plan("deepseek-r1:8b", "llama.cpp", devices=devices, goals=Goals(min_ctx=4096), quant="Q4_K_M", limit=None)
    by_kv = {o.kv_type: o for o in p.options if o.tier == 1}
    assert set(by_kv) == {"f16", "q8_0", "q4_0"}
    eng = get_engine("llama.cpp")
    spec = resolve_model(eng, "deepseek-r1:8b", "Q4_K_M")
    for kv, o in by_kv.items():
        truth = bisect_max_context(eng, spec, devices, o.settings)
        assert o.context == min(truth, spec.n_ctx_train), kv
    assert by_kv["f16"].context < by_kv["q8_0"].context < by_kv["q4_0"].context
    assert by_kv["q8_0"].context > 1.7 * by_kv["f16"].context  # q8_0 stores 34 bytes per 32 values, f16 64


def test_tier2_and_tier3_seventy_b_on_24_gb():
    """Llama 3.3 70B at Q4_K_M on one 24 GB card at 16K: all on the GPU is impossible; the second tier keeps the
    most layers on the GPU that fit, at a stated speed cost; the third names hardware that runs it all on GPUs."""
    devices = devices_from(gpu="RTX 4090")
    p = plan("llama3.3:70b", "llama.cpp", devices=devices, goals=Goals(min_ctx=16384), quant="Q4_K_M")
    assert p.tier == 2
    best = p.best
    assert best.offload[0] == "n_gpu_layers" and 0 < best.offload[1] < 80
    assert "-ngl" in best.command
    # one more layer on the GPU would not fit (the least offload)
    eng = get_engine("llama.cpp")
    spec = resolve_model(eng, "llama3.3:70b", "Q4_K_M")
    from dataclasses import replace

    more = eng.estimate(spec, devices, replace(best.settings, n_gpu_layers=best.offload[1] + 1))
    assert slack(more, budgets(devices, p.goals)) < 0
    # the speed cost: the host part over RAM bandwidth is far slower than the GPU alone
    assert best.rating.tokens_per_s is not None and best.rating.tokens_per_s < 10
    hw = p.smallest_hardware
    assert hw is not None and hw.option.tier == 1
    again = reestimate(hw.option, hw.devices, Goals())
    assert all(u.total_bytes <= u.memory_bytes for u in again.devices)
    assert hw.count * hw.devices[0].memory_bytes >= 40 * GiB  # ~40 GiB of weights alone


def test_deepseek_v3_on_8_h200_and_on_two_nodes_of_8_h100():
    one = plan("deepseek-v3", "vllm", devices=devices_from(gpu="8x H200"), goals=Goals(min_ctx=32768))
    assert one.tier == 1
    assert "--tensor-parallel-size 8" in one.best.command
    nodes = devices_from(gpu="16x H100")
    two = plan("deepseek-v3", "vllm", devices=nodes, goals=Goals(min_ctx=32768, nodes=2))
    assert two.tier == 1
    cmd = two.best.command
    assert "--tensor-parallel-size 8" in cmd and "--pipeline-parallel-size 2" in cmd
    for o in two.options:
        est = reestimate(o, nodes, two.goals)
        assert all(u.total_bytes <= u.memory_bytes for u in est.devices)
    # the launch on each machine: Ray head and worker, the serve line with the Ray executor, same memory
    (head, lines), (worker, wlines) = two.node_commands
    assert lines[0] == "ray start --head --port=6379" and wlines == ("ray start --address=HEAD_IP:6379",)
    served = parse_command(shlex.split(lines[1]))
    eng = get_engine("vllm")
    again = eng.estimate(resolve_model(eng, served.model), nodes, served.settings)
    assert again.total_bytes == two.best.estimate.total_bytes
    assert sum(two.node_memory()) == sum(u.total_bytes for u in two.best.estimate.devices)
    # one node of 8 x H100 (640 GB) cannot hold 671B parameters in fp8 with any KV type
    single = plan("deepseek-v3", "vllm", devices=devices_from(gpu="8x H100"), goals=Goals(min_ctx=32768))
    assert not any(o.tier == 1 for o in single.options)


# ---------------------------------------------------------------------------------------------------------
# fit


def _diff(a, b):
    return {f.name for f in fields(a) if getattr(a, f.name) != getattr(b, f.name)}


def test_fit_keeps_the_users_flags_and_changes_only_what_it_reports():
    argv = shlex.split("llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M --ctx-size 65536 -ngl 99 --port 8080 -fa on")
    f = fit(argv, devices_from("8GiB"))
    assert f.fits and f.tier == 1
    assert f.before.devices[0].total_bytes > 8 * GiB >= f.after.devices[0].total_bytes
    before = parse_command(argv).settings
    after = parse_command(list(f.command)).settings
    assert _diff(before, after) == {c.flag for c in f.changes}
    kept = [t for t in argv if t not in {str(c.before) for c in f.changes}]
    assert all(t in f.command for t in kept)  # every other token of the user's, as typed
    assert f.command[: len(argv)][:8] == tuple(argv[:8])


def test_fit_shortens_a_context_nobody_asked_for_first():
    """No -c: llama.cpp takes the trained context (40K for Qwen3-8B). Builds with --fit (on by default) shorten
    it themselves, so the command fits as typed; without the engine's fit (-fit off) the answer is the same: a
    shorter context, not a different cache type."""
    argv = shlex.split("llama-server -hf unsloth/Qwen3-8B-GGUF:Q8_0")
    f = fit(argv, devices_from("10GiB"))
    assert f.command == tuple(argv) and f.changes == () and f.tier == 1
    assert f.after.engine_view["typed_n_ctx"] == 40960 and f.after.engine_view["n_ctx"] < 40960
    f = fit([*argv, "-fit", "off"], devices_from("10GiB"))
    assert f.knobs == ("context",)
    assert [c.flag for c in f.changes] == ["n_ctx"]


def test_fit_unchanged_when_it_fits():
    argv = shlex.split("llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 8192")
    f = fit(argv, devices_from("24GiB"))
    assert f.command == tuple(argv) and f.changes == ()


def test_fit_vllm_prefers_all_on_gpu_over_cpu_offload():
    f = fit(shlex.split("vllm serve Qwen/Qwen3-14B --max-model-len 40960"), devices_from("24GiB"))
    assert f.tier == 1 and "offload" not in f.knobs
    assert "--quantization fp8" in " ".join(f.command)


# ---------------------------------------------------------------------------------------------------------
# The command line


def test_cli_plan_json_contract(capsys):
    rc = main(["plan", "qwen3:8b", "--vram", "12GiB", "--min-ctx", "16384", "--json", "--limit", "3"])
    out = json.loads(capsys.readouterr().out)["plan"]
    assert rc == 0
    assert out["engine"] == "llama.cpp" and out["goals"]["min_ctx"] == 16384
    o = out["options"][0]
    for key in ("rank", "tier", "command", "settings", "estimate", "context", "weight_format", "kv_type",
                "headroom_bytes", "decode_tokens_per_s_bound", "quality"):
        assert key in o
    assert o["rank"] == 1 and o["context"] >= 16384


def test_the_offload_search_weighs_roughly_and_answers_exactly(monkeypatch, capsys):
    """The planner's least-offload search lets llama.cpp weigh partly offloaded Qwen3.5 layouts by the closed forms
    (memo.SEARCHING "offload": no scheduler replay per layer split), then weighs its answer and the neighbouring
    splits exactly: the options printed are those of an exact search, the rough dry runs kept apart from the exact
    ones (fit.dry_run's memo)."""
    from oomkit.engines.llamacpp import compute
    from oomkit.plan import options

    args = ["plan", "qwen3.5:27b", "--gpu", "RTX 4060 8GB", "--json"]
    roughs = []
    replay = compute.qwen35_device_bytes

    def watch(*a, **k):
        roughs.append(k.get("rough", a[-1] if len(a) > 6 else False))
        return replay(*a, **k)

    monkeypatch.setattr(compute, "qwen35_device_bytes", watch)
    main(args)
    searched = json.loads(capsys.readouterr().out)
    assert any(roughs) and not all(roughs)

    class Exact:  # the offload search without the rough weighing
        def set(self, value):
            return real.set(real.get())

        def reset(self, token):
            real.reset(token)

    real = options.SEARCHING
    monkeypatch.setattr(options, "SEARCHING", Exact())
    main(args)
    assert json.loads(capsys.readouterr().out) == searched


def test_cli_fit_exit_codes(capsys):
    assert main(["fit", "--vram", "24GiB", "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"]) == 0
    capsys.readouterr()
    # 671B parameters on one 8 GB card: nothing fits, the next tier is named
    assert main(["fit", "--vram", "8GiB", "--json", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3"]) == 1
    out = json.loads(capsys.readouterr().out)["fit"]
    assert out["command"] is None and out["tier"] == 3


@pytest.mark.parametrize("argv", [
    ["plan", "qwen3:8b", "--gpu", "RTX 9999"],
    ["plan", "qwen3:8b", "--vram", "12GiB", "--min-ctx", "lots"],
    ["plan", "no-such-model-xyz", "--vram", "12GiB"],
    ["fit", "--vram", "12GiB"],
    ["fit", "--vram", "12GiB", "--", "llama-server", "--no-such-flag"],
    ["diff", "qwen3:8b", "--vram", "12GiB"],
    ["plan", "qwen3:8b", "--vram", "0"],
    ["plan", "qwen3:8b", "--vram", "8GiB", "--limit", "x"],
    ["plan", "qwen3:8b", "--vram", "8GiB", "--reserve", "9GiB"],
    ["plan", "qwen3:8b", "--vram", "8GiB", "--concurrency", "0"],
    ["plan", "qwen3:8b", "--vram", "8GiB", "--ram-bandwidth", "fast"],
    ["plan", "qwen3:8b", "--vram", "8GiB", "--also", ""],
    ["plan", "--all", "--engine", "nope", "--vram", "8GiB"],
    ["fit", "--vram", "24GiB", "--", "vllm", "serve"],
])
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oomkit: error:") and "\n" not in err


def test_diff_kv_type_per_component(capsys):
    rc = main(["diff", "--json", "--vram", "24GiB", "--change", "-ctk q8_0 -ctv q8_0 -fa on", "--",
               "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "-c", "32768", "-np", "1", "-fa", "on"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    kv = next(r for r in d["rows"] if r["place"] == "CUDA0" and r["component"] == "kv_cache")
    # Qwen3-8B: 36 layers x 8 KV heads x 128 x (K + V); f16 2 bytes, q8_0 34/32 bytes per value
    f16 = 36 * 8 * 128 * 2 * 2 * 32768
    assert kv["before_bytes"] == f16
    assert kv["after_bytes"] == f16 * 34 // 64
    assert d["settings_changed"]["cache_type_k"] == {"from": "f16", "to": "q8_0"}


# ---------------------------------------------------------------------------------------------------------
# Families, the whole catalog, several models together, other forms of the launch


def test_family_picks_the_largest_member_that_fits():
    """'qwen3' on 24 GB at 32K: the 32B (Q4_K_M ~18.4 GiB) fits with a quantized cache; nothing larger does."""
    p = plan("qwen3", "llama.cpp", devices=devices_from("24GiB"), goals=Goals(min_ctx=32768))
    assert p.model.name == "Qwen3 32B"
    assert p.best.tier == 1 and p.best.context >= 32768
    assert "largest qwen3" in p.notes[0]
    # on 12 GB the answer is smaller, and still the largest that fits
    small = plan("llama 3.1", "llama.cpp", devices=devices_from("12GiB"), goals=Goals(min_ctx=8192))
    assert small.model.name.startswith("Llama 3.1 8B")


def test_plan_all_lists_what_fits(capsys):
    rc = main(["plan", "--all", "--vram", "8GiB", "--min-ctx", "8192", "--json"])
    rows = json.loads(capsys.readouterr().out)["models"]
    assert rc == 0
    by = {r["model"]: r for r in rows}
    assert by["llama-3.1-8b-instruct"]["fits"]  # Q4_K_M 4.6 GiB + 1 GiB of KV at 8K
    assert not by["llama-3.1-70b-instruct"]["fits"]
    fit_row = by["llama-3.1-8b-instruct"]
    assert fit_row["context"] == 8192 and fit_row["total_bytes"] <= 8 * GiB
    est = reestimate_command(fit_row["command"], devices_from("8GiB"))
    assert sum(u.total_bytes for u in est.devices) == fit_row["total_bytes"]


def reestimate_command(command, devices):
    parsed = parse_command(shlex.split(command))
    eng = get_engine(parsed.engine)
    return eng.estimate(resolve_model(eng, parsed.model, parsed.quant), devices, parsed.settings)


def test_models_planned_together_leave_room_for_each_other():
    devices = devices_from("24GiB")
    alone = plan("qwen3:32b", "llama.cpp", devices=devices, goals=Goals(min_ctx=16384), quant="Q4_K_M", limit=None)
    draft = "llama-server -hf unsloth/Qwen3-0.6B-GGUF:Q8_0 -c 16384 -np 1"
    both = plan("qwen3:32b", "llama.cpp", devices=devices, goals=Goals(min_ctx=16384), quant="Q4_K_M", limit=None,
                also=(draft,))
    held = reestimate_command(draft, devices).devices[0].total_bytes
    assert both.companions[0].by_device == (("CUDA0", held),)
    for o in both.options:
        assert o.estimate.devices[0].total_bytes + held <= 24 * GiB
    f16 = {o.kv_type: o.context for o in alone.options if o.tier == 1}
    f16_both = {o.kv_type: o.context for o in both.options if o.tier == 1}
    shared = f16_both.keys() & f16.keys()  # a type the planner drops alone (dominated at the model's maximum) may
    assert shared and all(f16_both[k] < f16[k] for k in shared)  # show beside the draft: the draft costs context


def test_other_forms_of_the_launch():
    o = plan("qwen3:8b", "ollama", devices=devices_from("12GiB"), goals=Goals(min_ctx=16384)).best
    modelfile = dict(o.extras)["modelfile"]
    assert modelfile.startswith("FROM qwen3:8b")
    t = plan("Qwen/Qwen3-8B", "transformers", devices=devices_from("24GiB"), goals=Goals(min_ctx=8192)).best
    assert "from_pretrained(" in dict(t.extras)["snippet"]


def test_fit_keeps_the_context_the_user_typed_and_drops_swa_full_first():
    """Gemma 3 12B with --swa-full at 32K on 10 GiB: the sliding-window layers' full-size cache is the cost; the fix
    keeps -c 32768 and gives the windows back (with a q8_0 cache), rather than cutting the context."""
    # -ngl 99: every layer on the GPU, so llama.cpp's --fit may not move layers to the CPU instead
    argv = shlex.split("llama-server -hf unsloth/gemma-3-12b-it-GGUF:Q4_K_M -c 32768 -np 1 --swa-full -ngl 99")
    f = fit(argv, devices_from("10GiB"))
    after = parse_command(list(f.command)).settings
    assert after.n_ctx == 32768 and after.swa_full is False
    assert "--swa-full" not in f.command and f.tier == 1
    assert f.after.devices[0].total_bytes <= 10 * GiB
    # the same command without --swa-full would not have needed the context cut either
    assert not any(c.flag == "n_ctx" for c in f.changes)


def test_fit_relief_without_quality_cost_for_vllm():
    """vLLM at --gpu-memory-utilization default: before touching the weights or the KV type, the moves that cost
    no quality (a higher utilization, fewer concurrent sequences, no CUDA graphs) are tried."""
    # Qwen3-8B on 24 GiB: the largest --max-model-len is 37696 at vLLM's default 0.92, 40944 at 0.95
    f = fit(shlex.split("vllm serve Qwen/Qwen3-8B --max-model-len 38912"), devices_from("24GiB"))
    assert f.tier == 1
    assert [(c.flag, c.after) for c in f.changes] == [("gpu_memory_utilization", 0.95)]
    assert "--gpu-memory-utilization 0.95" in " ".join(f.command)


def test_unequal_gpus_get_a_tensor_split_in_proportion():
    devices = devices_from(gpu="RTX 3090,RTX 3060 12GB")
    p = plan("llama3.3:70b", "llama.cpp", devices=devices, goals=Goals(min_ctx=8192), quant="Q3_K_M")
    assert p.best.tier == 1
    assert p.best.command.endswith("-ts 24,12")
    est = reestimate(p.best, devices, p.goals)
    assert all(u.total_bytes <= u.memory_bytes for u in est.devices)
    assert est.devices[0].weights_bytes > 1.6 * est.devices[1].weights_bytes  # about two thirds on the 3090


def test_kv_type_is_read_from_what_the_engine_runs_with():
    """Ollama takes its KV type from OLLAMA_KV_CACHE_TYPE in the command's environment: each option's KV type and
    bits follow that variable, and the 70B on 24 GB is Ollama's own GPU/CPU split (tier 2) for all three."""
    p = plan("llama3.3:70b", "ollama", devices=devices_from(gpu="RTX 4090"), goals=Goals(min_ctx=8192), limit=None)
    seen = {}
    for o in p.options:
        env = dict(a.split("=", 1) for a in shlex.split(o.command) if "=" in a and a.startswith("OLLAMA_"))
        assert o.kv_type == env["OLLAMA_KV_CACHE_TYPE"]
        seen[o.kv_type] = o.rating.kv_bits
        assert o.tier == 2 and o.estimate.host.weights_bytes > 0
    assert seen == {"f16": 16.0, "q8_0": 8.5, "q4_0": 4.5}


@pytest.mark.parametrize("model,engine,vram", [
    ("qwen3:8b", "llama.cpp", "12GiB"), ("qwen3:8b", "ollama", "12GiB"), ("Qwen/Qwen3-8B", "vllm", "24GiB"),
    ("Qwen/Qwen3-8B", "sglang", "24GiB"), ("Qwen/Qwen3-8B", "transformers", "24GiB"),
    ("qwen3:30b-a3b", "llama.cpp", "16GiB"),
])
def test_every_printed_command_gives_the_same_memory_through_oomkit_estimate(model, engine, vram, capsys):
    """The contract: each option's command, given back to `oomkit estimate -- <command>` (transformers: its options
    form), reproduces the estimate the plan showed, per device."""
    assert main(["plan", model, "--engine", engine, "--vram", vram, "--json", "--limit", "4"]) in (0, 1)
    options = json.loads(capsys.readouterr().out)["plan"]["options"]
    assert options
    for o in options:
        argv = shlex.split(o["command"])
        cli = ["estimate", "--vram", vram, "--json", *argv] if engine == "transformers" else \
            ["estimate", "--vram", vram, "--json", "--", *argv]
        assert main(cli) == 0
        est = json.loads(capsys.readouterr().out)
        assert [d["total_bytes"] for d in est["devices"]] == [d["total_bytes"] for d in o["estimate"]["devices"]]
        assert est["host"]["total_bytes"] == o["estimate"]["host"]["total_bytes"]


@pytest.mark.parametrize("concurrency", [2, 4])
def test_mlx_plan_at_concurrency_agrees_with_check_of_its_command(concurrency, capsys):
    """--concurrency N plans mlx_lm with --batch N: each sequence holds its own cache (mlx_lm/models/cache.py
    KVCache: keys of shape (batch, KV heads, tokens, head dim)), not a vLLM-style shared pool of N x context tokens
    that the per-sequence buffer length would never reach. The options fit, and `check -- <command>` answers the
    same memory for each."""
    gpu = "M4 Max 128GB"
    assert main(["plan", "qwen3:8b", "--engine", "mlx", "--concurrency", str(concurrency), "--gpu", gpu,
                 "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["plan"]["options"]
    assert options and all(o["tier"] == 1 for o in options)
    for o in options:
        # mlx_lm.generate has no --batch (generate.py setup_arg_parser): the sequences ride on oomkit's own flag,
        # apart from the command (option "sizing"), which check reads after it
        assert "--batch" not in shlex.split(o["command"])
        assert o["sizing"][o["sizing"].index("--batch") + 1] == str(concurrency)
        assert main(["check", "--gpu", gpu, "--json", "--", *shlex.split(o["command"]), *o["sizing"]]) == 0
        checked = json.loads(capsys.readouterr().out)
        assert checked["fits"] is True
        assert [d["total_bytes"] for d in checked["estimate"]["devices"]] == \
            [d["total_bytes"] for d in o["estimate"]["devices"]]
        assert checked["estimate"]["total_bytes"] == o["estimate"]["total_bytes"]
    # the as-published weights with a bf16 cache at Qwen3-8B's 40960 tokens: 36 layers x 8 KV heads x 128 x K,V x
    # 2 bytes per token, for each of the N sequences
    bf16 = next(o for o in options if o["weight_format"] == "bfloat16" and o["kv_type"] == "auto")
    assert bf16["context"] == 40960
    assert bf16["estimate"]["kv_cache_bytes"] == concurrency * 40960 * 36 * 8 * 128 * 2 * 2


def test_fit_ollama_changes_the_variable_the_user_set_and_reports_it():
    """OLLAMA_CONTEXT_LENGTH in front of `ollama run`: the fix edits that assignment and puts it on `ollama serve`,
    where the server reads it (ollama#14191), then `ollama run` with the prompt words as typed; the change is
    reported with the values Ollama runs with, and the user is told their variable only reaches a (re)started
    server."""
    argv = ["OLLAMA_CONTEXT_LENGTH=65536", "ollama", "run", "qwen3:8b", "hello there"]
    f = fit(argv, devices_from("8GiB"))
    assert f.tier == 1 and f.command[1:] == ("ollama", "serve", "\n", *argv[1:])
    assert any("OLLAMA_CONTEXT_LENGTH=65536 given to `ollama run`" in n and "ollama serve" in n for n in f.notes)
    n = int(f.command[0].split("=")[1])
    assert [(c.flag, c.after) for c in f.changes] == [("num_ctx", n)]
    # Ollama's own split (layers in system RAM) is gone: only the token embeddings stay on the CPU, as llama.cpp keeps them
    assert f.before.fits is False and f.after.fits is True
    assert f.before.host.weights_bytes > 1 * GiB > 0.5 * GiB > f.after.host.weights_bytes
    assert f.after.devices[0].total_bytes <= 8 * GiB


def test_fit_text_says_why_a_command_that_is_within_memory_does_not_fit():
    """vLLM at the trained 131072 on 24 GiB holds its budget, yet refuses to start: the text gives vLLM's reason; an
    Ollama run within the card's memory keeps layers in RAM: the text gives how much."""
    from oomkit.report import plan as report

    v = report.fit_text(fit(shlex.split("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072"),
                            devices_from("24GiB")))
    assert "vllm refuses these settings: To serve at least one request" in v.splitlines()[1]
    o = report.fit_text(fit(["OLLAMA_CONTEXT_LENGTH=65536", "ollama", "run", "qwen3:8b"], devices_from("8GiB")))
    assert "of weights in system RAM" in o.splitlines()[1]


def test_a_pasted_hub_url_plans_with_the_repo_name():
    p = plan("https://huggingface.co/unsloth/Qwen3-30B-A3B-GGUF", "llama.cpp", devices=devices_from("24GiB"),
             goals=Goals(min_ctx=32768), limit=2)
    assert p.best.command.startswith("llama-server -hf unsloth/Qwen3-30B-A3B-GGUF:")
    est = reestimate(p.best, devices_from("24GiB"), p.goals)
    assert est.total_bytes == p.best.estimate.total_bytes


def test_fit_a_vllm_run_that_dies_after_its_kv_cache():
    """llm-d-planner's gpt-oss-20b log on one H100 at vLLM 0.19.0 and 0.95 (fixture
    llmd-gpt-oss-20b-h100-v0.19-tp1-util095-sampler-fail.json) dies warming up the sampler with vLLM's default 1024
    sequences. fit, at that release, says the run starts then dies, keeps the utilization the user typed, and lowers
    --max-num-seqs to the value the estimate's own fix names (the largest halving with which every phase fits);
    the rewritten command then starts. With --max-num-seqs typed too, a flag the user did not type is turned."""
    from oomkit.report import plan as report

    cmd = "vllm serve openai/gpt-oss-20b --gpu-memory-utilization 0.95 --max-model-len 8192"
    f = fit(shlex.split(cmd), devices_from(gpu="H100"), engine_version="0.19.0")
    assert "vllm starts, then dies: KV cache allocated, then the sampler warm-up" in report.fit_text(f).splitlines()[1]
    named = f.before.engine_view["fixes"][0]  # "lower --max-num-seqs to N"
    assert [(c.flag, c.after) for c in f.changes] == [("max_num_seqs", int(named.rsplit(" ", 1)[1]))]
    assert f.after.engine_view["failed_phase"] is None and f.fits
    typed = fit(shlex.split(cmd + " --max-num-seqs 1024"), devices_from(gpu="H100"), engine_version="0.19.0")
    assert typed.fits and [c.flag for c in typed.changes] == ["enforce_eager"]


def test_cli_fit_takes_the_engine_version(capsys):
    argv = ["fit", "--gpu", "H100", "--engine-version", "0.19.0", "--", "vllm", "serve", "openai/gpt-oss-20b",
            "--gpu-memory-utilization", "0.95", "--max-model-len", "8192"]
    assert main(argv) == 0
    assert "--max-num-seqs 512" in capsys.readouterr().out
    assert main(["fit", "--gpu", "H100", "--engine-version", "banana", "--", "vllm", "serve",
                 "openai/gpt-oss-20b"]) == 2
    assert "cannot read vLLM version 'banana'" in capsys.readouterr().err



def test_fit_text_says_what_the_changes_save_together_not_on_the_first_change(capsys):
    # qwen3:14b at 65536 on 12 GiB: llama.cpp's --fit keeps the GPU full and 3.73 GiB of weights in RAM; the fix's
    # saving is in system RAM, said once for all the changes
    assert main(["fit", "--vram", "12GiB", "--", "llama-server", "-m", "qwen3:14b", "-c", "65536"]) == 0
    out = capsys.readouterr().out
    changes = out.split("changes:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert not any("saves" in c for c in changes if c.startswith("  "))
    (total,) = [c for c in changes if c.startswith("together they save")]
    assert "GiB of system RAM" in total


def test_fit_never_cuts_the_context_to_a_sliver():
    """qwen3:32b in Ollama on 20 GiB: at Ollama's 4096 the weights and cache are 1.6 GiB over. All on the GPU, only
    a 256-token context with a q8_0 cache would fit: no fix. Below the plan's usable context (8192, or the user's
    own if smaller) fit leaves the context alone and answers with part of the model in system RAM instead."""
    f = fit(["ollama", "run", "qwen3:32b"], devices_from("20GiB"))
    assert all(c.after >= 4096 for c in f.changes if c.flag == "num_ctx")
    assert not any("OLLAMA_CONTEXT_LENGTH=256" in part for part in (f.command or ()))



def test_fit_cuts_below_the_usable_context_when_asked_with_min_ctx():
    # Ollama's own estimate holds every layer only at 256 tokens with a q8_0 cache; the runner's allocation holds
    # them at Ollama's 4096 once num_gpu is typed at every layer (Ollama passes the count to the runner as given):
    # either is an answer on the GPU, the second without the cut
    f = fit(["ollama", "run", "qwen3:32b"], devices_from("20GiB"), Goals(min_ctx=256))
    changed = {c.flag: c.after for c in f.changes}
    assert f.tier == 1 and (changed.get("num_ctx") == 256 or ("num_gpu" in changed and "num_ctx" not in changed))


def test_a_context_part_changed_by_fit_is_said_to_be_the_context():
    """mlx_lm's context is the prompt plus the generated tokens: when fit shrinks it, the prompt tokens shrink with
    it, and the reason given is the context that fits, not a weight format (no weight format changed)."""
    argv = shlex.split("mlx_lm.generate --model mlx-community/Qwen3-8B-4bit --prompt-tokens 200000 --max-tokens 100")
    f = fit(argv, devices_from(gpu="M4 Pro 24GB"))
    assert f.command is not None and "weights" not in f.knobs
    changed = {c.flag: c for c in f.changes}
    assert changed["prompt_tokens"].after < 200000
    assert all(c.why == "the largest context that fits" for c in f.changes), f.changes


def test_mlx_plan_of_a_moe_keeps_the_4_bit_weights_that_decode_faster(capsys):
    """Qwen3-30B-A3B with mlx_lm on an M4 Max 64GB: the 8-bit and the 4-bit conversions (`--q-bits`) both reach the
    model's 40960 tokens, and the 4-bit one reads about half the bytes per token, so the 8-bit one does not
    dominate it. The decode bound reads the experts as mlx_lm holds them after utils.py quantize_model: of the
    checkpoint's bf16 experts a 4-bit share, not the bf16 bytes (which, subtracted from the converted weights, left
    nothing read and gave both formats the same KV-only bound of 678 tok/s, so 4-bit was dropped as dominated).

    The bounds against public figures only: 546 GB/s (Apple, M4 Max with the 40-core GPU), 3.3B activated
    parameters of which 151,936 x 2,048 are the embedding table, one row of it read (Qwen/Qwen3-30B-A3B model card
    and config.json), 4 + 2 x 16 / 64 = 4.5 and 8.5 bits per weight (mx.quantize affine, group 64, a bf16 scale and
    bias per group), and 48 layers x 4 KV heads x 128 x K,V x 2 bytes of bf16 cache per token at the asked 8192."""
    gpu = "M4 Max 64GB"
    assert main(["plan", "qwen3:30b", "--engine", "mlx", "--gpu", gpu, "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["plan"]["options"]
    by = {(o["weight_format"], o["kv_type"]): o for o in options}
    q4, q8 = by[("mlx-4bit", "auto")], by[("mlx-8bit", "auto")]
    assert q4["context"] == q8["context"] == 40960
    kv = 8192 * 48 * 4 * 128 * 2 * 2
    for o, bits in ((q4, 4.5), (q8, 8.5)):
        tps = o["decode_tokens_per_s_bound"]
        with_table = 546e9 / (3.3e9 * bits / 8 + kv)  # the whole embedding table counted as read
        one_row = 546e9 / ((3.3e9 - 151936 * 2048) * bits / 8 + kv)
        assert 0.97 * with_table <= tps <= 1.03 * one_row, (o["weight_format"], tps, with_table, one_row)
    assert q4["decode_tokens_per_s_bound"] > 1.5 * q8["decode_tokens_per_s_bound"]
    # check of the 4-bit command gives the memory plan shows for it
    assert main(["check", "--gpu", gpu, "--json", "--", *shlex.split(q4["command"])]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert checked["fits"] is True
    assert checked["estimate"]["total_bytes"] == q4["estimate"]["total_bytes"]
    # a quantized cache (--kv-bits) has no bytes per token in the estimate: its bound still reads the cache, fewer
    # bytes than the bf16 one (4.5 / 16 of them), so it is faster but not by the whole cache
    q4kv4 = by[("mlx-4bit", "4bit")]
    weights_s = 1 / q4["decode_tokens_per_s_bound"] - kv / 546e9
    assert q4kv4["decode_tokens_per_s_bound"] == pytest.approx(1 / (weights_s + kv * 4.5 / 16 / 546e9), rel=0.02)
