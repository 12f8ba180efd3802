"""SGLang: the rules (hand-worked numbers from model dims and SGLang's source) and the real start-up logs.

Ground truth: tests/fixtures/engine_logs/sglang/*.json. Which figure of which log is valid ground truth (some are
ktransformers forks with CPU experts, one is a pre-fix SGLang build, one a refusal) is decided per fixture in
tests/sglang_cases.py (module docstring); every fixture is covered there.
"""

import json
import subprocess
import sys

import pytest

from oomkit.engines import sglang as sg
from oomkit.engines.base import get_engine
from oomkit.errors import OomkitError
from oomkit.hardware.catalog import with_facts
from oomkit.limits import max_context
from oomkit.memory import Device
from oomkit.model.resolve import resolve
from tests import sglang_cases as cases


def named_gpu(*args, **kwargs) -> Device:
    """A device with the GPU facts the catalog gives it (as request.devices_from and detection do)."""
    return with_facts(Device(*args, **kwargs))

GiB = 1 << 30
MiB = 1 << 20
H100 = 81559  # MiB, nvidia-smi memory.total of an H100 80GB HBM3
H200 = 143771
RTX4090 = 24564


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], capture_output=True, text=True, env=env)


def cell(spec, **kw):
    s = sg.SGLangSettings(**kw)
    lay = sg.cache_layout(spec, s)
    return sg.cell_size(lay, s, sg.parse_version(s.engine_version), lay.full_layers)


# ---------------------------------------------------------------------------------------------------------
# Ground truth: every fixture


def test_every_fixture_has_a_case():
    assert sorted(cases.CASES) == cases.fixture_names()


@pytest.mark.parametrize("name", cases.fixture_names())
def test_fixture(name):
    rows = cases.CASES[name]()
    assert rows, name
    bad = [r for r in rows if not r.ok]
    assert not bad, cases.table(bad)


def test_accuracy_summary():
    # the table itself: bench/accuracy_sglang.py
    rows = cases.all_rows()
    summary = {fig: (n, med, worst) for fig, n, med, worst in cases.summary(rows)}
    assert summary["tokens (printed avail)"][2] <= cases.PRINTED_AVAIL_TOLERANCE
    assert summary["tokens (end to end)"][2] <= cases.END_TO_END_TOLERANCE
    assert all(r.ok for r in rows if r.figure in ("K size", "V size"))


# ---------------------------------------------------------------------------------------------------------
# Cell size per token (model_runner profile_max_num_token / pool_configurator _compute_cell_size)


def test_cell_llama31_8b():
    spec = resolve("meta-llama/Llama-3.1-8B-Instruct")
    # 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB per token
    assert cell(spec) == 32 * 8 * 128 * 2 * 2 == 128 * 1024
    assert cell(spec, kv_cache_dtype="fp8_e4m3") == 64 * 1024
    assert cell(spec, tp_size=2) == 64 * 1024  # 4 heads per rank
    assert cell(spec, tp_size=8) == 16 * 1024  # 1 head per rank


def test_cell_kv_heads_replicated_below_one_per_rank():
    spec = resolve("qwen3-235b-a22b", "bf16")  # 4 KV heads
    tp4 = cell(spec, tp_size=4)
    assert tp4 == 94 * 1 * 128 * 2 * 2 == 48128
    assert cell(spec, tp_size=8) == tp4  # max(1, 4 // 8): each rank keeps a replica


def test_cell_deepseek_v3_mla():
    spec = resolve("deepseek-v3", "bf16")  # 61 layers + 1 next-n layer (the draft's, not in the pool)
    assert cell(spec) == 61 * (512 + 64) * 2 == 70272
    assert cell(spec, tp_size=8) == 70272  # the latent is replicated on every TP rank
    s = sg.SGLangSettings()
    lay = sg.cache_layout(spec, s)
    (p,) = sg.kv_pools(lay, s, 10000)
    # "KV Cache is allocated. #tokens: 10000, KV size: 0.65 GB": one (size + page_size, 1, 576) buffer per layer
    assert p.name == "mla" and p.k_bytes == 61 * 576 * 2 * 10001 and p.v_bytes == 0
    assert round(p.k_bytes / GiB, 2) == 0.65


def test_cell_before_0_5_7_takes_head_dim_twice():
    spec = cases.mimo_v2_flash(cases.load("mimo-v2-flash-tp4-swa-pool-mfs07")["config"])
    full = [la for la in spec.layers if la.kind.value == "full"]
    s_new = sg.SGLangSettings(tp_size=4)
    v_new, v_old = sg.parse_version(s_new.engine_version), sg.parse_version("0.5.6")
    lay = sg.cache_layout(spec, s_new)
    assert sg.cell_row(full[0], lay, v_new) == 1 * (192 + 128)
    assert sg.cell_row(full[0], lay, v_old) == 1 * 192 * 2


# ---------------------------------------------------------------------------------------------------------
# mem_fraction_static defaults (server_args.py)


@pytest.mark.parametrize("version, gpu, tp, expected", [
    # 0.4.6.post5: by tp*pp on GPUs up to 80 GiB
    ("0.4.6.post5", H100, 1, 0.88), ("0.4.6.post5", H100, 2, 0.87), ("0.4.6.post5", H100, 4, 0.85),
    ("0.4.6.post5", H100, 8, 0.81), ("0.4.6.post5", H100, 16, 0.79),
    # > 96 GiB: min(0.81 + 48 GiB x 0.19 / 143771 MiB, (143771 - 18 GiB) / 143771) = min(0.87497, 0.87180)
    ("0.4.6.post5", H200, 8, (H200 - 18 * 1024) / H200),
    # 0.4.8 - 0.5.2: (gpu - reserved) / gpu, reserved (9.5 + tp/2) GiB below 90 GiB, (2.8 + tp/10) GiB below 35
    ("0.5.2", H100, 1, 0.874), ("0.5.2", H100, 8, 0.831), ("0.5.2", RTX4090, 2, 0.875), ("0.5.2", H200, 8, 0.886),
    # 0.5.5: 512 + 2048 x 1.5 + 24 x 2 + 128 = 3760 MiB on a 4090; H100: 512 + 8192 x 1.5 + 256 x 2 + 128 = 13440
    ("0.5.5", RTX4090, 1, 0.847), ("0.5.5", H100, 1, 0.835),
    # 0.5.23: + 8 MiB per prefill CUDA graph size (58 sizes up to 8192; 50 up to 4096), 4090: chunk 4096, bs 48
    ("0.5.23", H100, 1, 0.830), ("0.5.23", RTX4090, 1, 0.704),
])
def test_mem_fraction_static_defaults(version, gpu, tp, expected):
    d = sg.default_mem_fraction_static(gpu, sg.SGLangSettings(tp_size=tp, engine_version=version))
    assert d.mem_fraction_static == pytest.approx(expected, abs=1e-9)


def test_mem_fraction_static_mla_and_no_gpu():
    # 0.5.23 DeepSeek on 8x H100: 512 + 12288 + 1024 (tp/8 GiB) + 1024 (512 x 2) + 1536 (MLA graphs) = 16384 MiB
    d = sg.default_mem_fraction_static(H100, sg.SGLangSettings(tp_size=8), mla=True)
    assert d.mem_fraction_static == round((H100 - 16384) / H100, 3) == 0.799
    assert sg.default_mem_fraction_static(None, sg.SGLangSettings()).mem_fraction_static == 0.95
    assert sg.default_mem_fraction_static(None, sg.SGLangSettings(engine_version="0.5.10")).mem_fraction_static == 0.88


def test_capacity_defaults():
    d = sg.default_mem_fraction_static(H100, sg.SGLangSettings())
    assert (d.chunked_prefill_size, d.cuda_graph_max_bs, d.prefill_graph_sizes) == (8192, 256, 58)
    d = sg.default_mem_fraction_static(RTX4090, sg.SGLangSettings(engine_version="0.5.18"))
    assert (d.chunked_prefill_size, d.cuda_graph_max_bs) == (2048, 24)
    d = sg.default_mem_fraction_static(RTX4090, sg.SGLangSettings(max_running_requests=4))
    assert d.cuda_graph_max_bs == 4  # 0.5.23: a default decode max_bs is capped at --max-running-requests


# ---------------------------------------------------------------------------------------------------------
# The token pool


def test_token_pool_hand_worked():
    spec = resolve("meta-llama/Llama-3.1-8B-Instruct")
    s = sg.SGLangSettings(mem_fraction_static=0.9)
    # rest = 40 - 56 x 0.1 = 34.4 GiB; 34.4 GiB // 128 KiB = 281,804 tokens
    p = sg.size_pool(spec, s, avail_after_load=40 * GiB, pre_load_free=56 * GiB)
    assert p.max_total_num_tokens == 281804
    assert p.k_bytes == p.v_bytes == (281804 + 1) * 32 * 8 * 128 * 2  # (size + page_size) rows per layer
    p = sg.size_pool(spec, sg.SGLangSettings(mem_fraction_static=0.9, page_size=64), avail_after_load=40 * GiB,
                     pre_load_free=56 * GiB)
    assert p.max_total_num_tokens == 281804 // 64 * 64
    p = sg.size_pool(spec, sg.SGLangSettings(mem_fraction_static=0.9, max_total_tokens=1000),
                     avail_after_load=40 * GiB, pre_load_free=56 * GiB)
    assert p.max_total_num_tokens == 1000


def test_not_enough_memory_messages():
    spec = resolve("meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(sg.NotEnoughMemory, match=r"Raise --mem-fraction-static above 0\.934 .*= 0\.9333\)"):
        sg.size_pool(spec, sg.SGLangSettings(mem_fraction_static=0.9), avail_after_load=4 * GiB,
                     pre_load_free=60 * GiB)
    with pytest.raises(sg.NotEnoughMemory, match="Not enough memory. Please try to increase --mem-fraction-static"):
        sg.size_pool(spec, sg.SGLangSettings(mem_fraction_static=0.9, engine_version="0.5.2"),
                     avail_after_load=4 * GiB, pre_load_free=60 * GiB)


def test_kv_memory_budget():
    spec = resolve("Qwen/Qwen3-8B")
    p = sg.size_pool(spec, sg.SGLangSettings(), kv_budget=10 * GiB)
    assert p.max_total_num_tokens == 10 * GiB // (36 * 8 * 128 * 2 * 2) == 72817


def test_max_running_requests():
    spec = resolve("Qwen/Qwen3-8B")
    s = sg.SGLangSettings()
    p = sg.size_pool(spec, s, kv_budget=10 * GiB)
    v = sg.parse_version(s.engine_version)
    assert sg.max_running_requests(p, s, 40960, v) == (2048, 2048)  # int(72817 / 40960 x 512) = 910 -> 2048
    assert sg.max_running_requests(p, s, 4096, v) == (4096, 4096)  # 9102 -> at most 4096
    v046 = sg.parse_version("0.4.6.post5")
    assert sg.max_running_requests(p, s, 40960, v046) == (2049, 2049)  # ReqToTokenPool(size=max_num_reqs + 1)
    small = sg.size_pool(spec, s, kv_budget=300 * 147456)
    assert sg.max_running_requests(small, s, 40960, v)[0] == 150  # max_total_num_tokens // 2
    user = sg.SGLangSettings(max_running_requests=64)
    assert sg.max_running_requests(p, user, 40960, v) == (64, 64)


def test_hybrid_swa_gpt_oss_split():
    spec = resolve("gpt-oss-20b", "bf16")  # 12 sliding (128) + 12 full layers, 8 KV heads x 64
    per_layer = 8 * (64 + 64) * 2
    for version in ("0.5.23", "0.5.8"):  # bytes split (PR #18039) and the older all-layer split agree here
        s = sg.SGLangSettings(engine_version=version)
        p = sg.size_pool(spec, s, kv_budget=10 * GiB)
        # full + 0.8 x swa = 12 x 2048 x 1.8 = 44236.8 B per full token
        assert p.full_tokens == int(10 * GiB // (12 * per_layer * 1.8)) == 242725
        assert p.swa_tokens == int(242725 * 0.8) == 194180
        assert p.max_total_num_tokens == p.full_tokens
        assert {x.name: x.tokens for x in p.pools} == {"full": 242725, "swa": 194180}


def test_gemma3_caches_every_layer_in_full():
    spec = resolve("gemma-3-27b-it", "bf16")
    s = sg.SGLangSettings()
    lay = sg.cache_layout(spec, s)
    assert not lay.swa_layers and len(lay.full_layers) == 62
    assert any("not a hybrid-SWA architecture" in x for x in lay.labels)


def test_mamba_state_pool_rules():
    d = cases.load("qwen3.5-moe-ktransformers-2x4090-tp2-hybrid")
    spec = cases.qwen35_moe_spec(d)
    s = sg.SGLangSettings(tp_size=2)
    lay = sg.cache_layout(spec, s)
    conv, ssm = sg.mamba_cache_per_req(lay, s, spec)
    # 45 linear layers; conv (16x128x2 + 64x128) / 2 ranks x 3 x 2 B; ssm 64/2 heads x 128 x 128 x 4 B
    assert conv == 45 * 6144 * 3 * 2 and ssm == 45 * 32 * 128 * 128 * 4
    rest = 16 * GiB
    # 0.5.9: the first release with models/qwen3_5.py, before the padding slot (0.5.18)
    old = sg.size_pool(spec, sg.SGLangSettings(tp_size=2, engine_version="0.5.9"), kv_budget=rest)
    new = sg.size_pool(spec, s, kv_budget=rest)
    budget = rest * 0.9 / 1.9
    assert old.max_mamba_cache_size == int(budget // (conv + ssm))
    assert new.max_mamba_cache_size == int((budget - (conv + ssm)) // (conv + ssm))  # padding slot budgeted
    assert new.ssm_state_bytes == (new.max_mamba_cache_size + 1) * ssm
    cell_bytes = 15 * 1 * 256 * 2 * 2  # 15 full layers, 2 KV heads / TP2, head_dim 256
    assert new.max_total_num_tokens == int(int((rest / GiB - (new.max_mamba_cache_size + 1) * (conv + ssm) / GiB)
                                               * GiB) // cell_bytes)


# ---------------------------------------------------------------------------------------------------------
# Estimates, weights per rank, errors


def test_estimate_devices_and_weights_per_rank():
    spec = resolve("Qwen/Qwen3-8B")
    one = sg.estimate(spec, (named_gpu("CUDA0", "H100", H100 * MiB),), sg.SGLangSettings())
    two = sg.estimate(spec, (named_gpu("CUDA0", "H100", H100 * MiB),), sg.SGLangSettings(tp_size=2))
    assert len(two.devices) == 2 and one.fits and two.fits
    w1, w2 = one.engine_view["weights_bytes"], two.engine_view["weights_bytes"]
    # everything splits in two except the norms and the rotary cos_sin_cache (replicated: 40,960 positions x 128,
    # float32 on CUDA, 20 MiB); the vocabulary 151,936 is already a multiple of 64
    rope = 40960 * 128 * 4
    assert w1 / 2 + rope / 2 < w2 < w1 / 2 + rope / 2 + 2 * MiB
    # the KV pool, the weights, the headroom and the pre-load overhead fill the card
    d = one.devices[0]
    assert d.total_bytes == d.memory_bytes
    v = one.engine_view
    assert v["k_bytes"] == (v["max_total_num_tokens"] + 1) * 36 * 8 * 128 * 2
    assert one.kv_bytes_per_token == 36 * 8 * 128 * 2 * 2


def test_estimate_context_not_fitting_pool():
    spec = resolve("Qwen/Qwen3-8B")
    e = sg.estimate(spec, (named_gpu("CUDA0", "GPU", 24 * GiB),), sg.SGLangSettings(context_length=40960))
    assert e.fits is False and any("fewer than context_length" in w for w in e.warnings)
    est = get_engine("sglang")
    n = max_context(est, spec, (named_gpu("CUDA0", "GPU", 24 * GiB),), sg.SGLangSettings())
    assert n is not None and n <= e.engine_view["max_total_num_tokens"]


def test_estimate_weights_too_big():
    spec = resolve("qwen3-235b-a22b", "bf16")
    e = sg.estimate(spec, (named_gpu("CUDA0", "H100", H100 * MiB),), sg.SGLangSettings(tp_size=4))
    assert e.fits is False and e.engine_view["max_total_num_tokens"] == 0
    # 109.64 GiB a rank on an 80 GB card: the parameters are created on the GPU in load_model, which runs out before
    # profile_max_num_token could refuse ("Loaded weights leave no GPU memory ..." needs weights that fit)
    assert "CUDA out of memory while loading the weights" in e.engine_view["error"]
    assert e.engine_view["failed_phase"]["phase"] == "weights"


def test_tp_must_divide_heads():
    spec = resolve("Qwen/Qwen3-8B")  # 32 query heads, 8 KV heads
    with pytest.raises(OomkitError, match="32 is not divisible by 3"):
        sg.estimate(spec, (named_gpu("CUDA0", "GPU", 80 * GiB),), sg.SGLangSettings(tp_size=3))


def test_context_length_above_the_model():
    spec = resolve("Qwen/Qwen3-8B")
    with pytest.raises(OomkitError, match="SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"):
        sg.estimate(spec, (named_gpu("CUDA0", "GPU", 80 * GiB),), sg.SGLangSettings(context_length=100000))
    _, _, s = sg.parse_args(["--model-path", "x", "--context-length", "100000"],
                            {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    e = sg.estimate(spec, (named_gpu("CUDA0", "GPU", 80 * GiB),), s)
    assert e.engine_view["context_len"] == 100000


def test_pipeline_parallel_stages():
    spec = resolve("Qwen/Qwen3-8B")
    e = sg.estimate(spec, (named_gpu("CUDA0", "H100", H100 * MiB),), sg.SGLangSettings(pp_size=2))
    assert len(e.devices) == 2
    assert e.devices[0].kv_cache_bytes == e.devices[1].kv_cache_bytes  # 18 layers each, same token count


def test_default_weight_format():
    assert get_engine("sglang").default_weight_format({"torch_dtype": "bfloat16"}) is None


# ---------------------------------------------------------------------------------------------------------
# Command line


def test_parse_args():
    model, quant, s = sg.parse_args(["--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--mem-fraction-static=0.8",
                                     "--context-length", "8192", "--kv-cache-dtype", "fp8_e5m2", "--host", "0.0.0.0",
                                     "--trust-remote-code", "--cuda-graph-bs", "1", "2", "4", "--page-size", "16"], {})
    assert (model, quant) == ("Qwen/Qwen3-8B", None)
    assert (s.tp_size, s.mem_fraction_static, s.context_length, s.kv_cache_dtype, s.page_size) == \
        (2, 0.8, 8192, "fp8_e5m2", 16)
    model, _, s = sg.parse_args(["serve", "--model", "m", "--tensor-parallel-size", "8"], {})
    assert model == "m" and s.tp_size == 8


@pytest.mark.parametrize("argv, message", [
    (["--model-path", "m", "--bogus"], "unrecognized arguments: --bogus"),
    (["--model-path", "m", "--tp-size", "two"], "argument --tp-size: invalid int value: 'two'"),
    (["--model-path", "m", "--kv-cache-dtype", "fp8"], "argument --kv-cache-dtype: invalid choice: 'fp8'"),
    (["--model-path", "m", "--quantization", "bogus"], "argument --quantization: invalid choice: 'bogus'"),
    (["--model-path", "m", "--quantization", "FP8"], "argument --quantization: invalid choice: 'FP8'"),
    (["--model-path"], "argument --model-path: expected one argument"),
])
def test_parse_args_errors(argv, message):
    with pytest.raises(OomkitError, match=message):
        sg.parse_args(argv, {})


def test_cli_engine_command_json():
    r = run("estimate", "--vram", "80GiB", "--json", "--", "python", "-m", "sglang.launch_server", "--model-path",
            "Qwen/Qwen3-8B", "--tp", "1", "--context-length", "32768")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["engine"] == "sglang" and d["fits"] is True
    assert d["settings"]["tp_size"] == 1 and d["settings"]["context_length"] == 32768
    v = d["engine_view"]
    for key in ("max_total_num_tokens", "k_bytes", "v_bytes", "weights_bytes", "available_gpu_mem_bytes",
                "max_running_requests", "context_len", "mem_fraction_static"):
        assert key in v
    assert v["context_len"] == 32768 and v["mem_fraction_static"] == 0.83  # 81920 MiB: (81920 - 13904) / 81920
    assert v["k_bytes"] == v["v_bytes"] == (v["max_total_num_tokens"] + 1) * 36 * 8 * 128 * 2
    assert d["kv_bytes_per_token"] == 147456


def test_cli_neutral_options():
    r = run("estimate", "Qwen/Qwen3-8B", "--engine", "sglang", "--ctx", "8192", "--kv-type", "fp8_e4m3",
            "--kv-memory", "10GiB", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["settings"]["context_length"] == 8192 and d["settings"]["kv_cache_dtype"] == "fp8_e4m3"
    assert d["engine_view"]["max_total_num_tokens"] == 10 * GiB // (36 * 8 * 128 * 2) == 145635


@pytest.mark.parametrize("args, message", [
    (("--bogus-flag",), "unrecognized arguments: --bogus-flag"),
    (("--tp", "3"), "32 is not divisible by 3"),
])
def test_cli_errors_one_line(args, message):
    r = run("estimate", "--vram", "80GiB", "--", "python", "-m", "sglang.launch_server", "--model-path",
            "Qwen/Qwen3-8B", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cuda_graph_max_bs_takes_a_value():
    # server_args.py: --cuda-graph-max-bs is an int option (SGLang's own tests launch with "--cuda-graph-max-bs 8");
    # the command written back carries it and parses to the same settings
    from dataclasses import replace

    from oomkit.engines.cmdline import parse_command
    from oomkit.engines.sglang.args import format_command

    cmd = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                         "--cuda-graph-max-bs", "64", "--tp-size", "2"], env={})
    assert cmd.settings.cuda_graph_max_bs == 64 and cmd.settings.tp_size == 2
    argv = format_command("Qwen/Qwen3-8B", replace(cmd.settings, engine_version="0.5.13"))
    assert argv[argv.index("--cuda-graph-max-bs") + 1] == "64"
    assert parse_command(argv, env={}).settings == cmd.settings
    # from 0.5.14 the per-phase spelling (--cuda-graph-max-bs-decode, the decode graphs' bound): 0.5.14-0.5.19 keep
    # --cuda-graph-max-bs as a deprecated alias that warns, 0.5.20 has only the new one
    for release in ("0.5.14", "0.5.19", "0.5.23"):
        argv = format_command("Qwen/Qwen3-8B", replace(cmd.settings, engine_version=release))
        assert "--cuda-graph-max-bs" not in argv and argv[argv.index("--cuda-graph-max-bs-decode") + 1] == "64"
        assert parse_command(argv, env={}).settings == cmd.settings


def test_mla_w_kc_w_vc_copies():
    # post_load_weights: kv_b_proj (128 heads x (128 + 128) rows x 512) stays, and w_kc + w_vc hold it again,
    # dequantized from the fp8 128x128 blocks to bf16: 128 x 256 x 512 x 2 B = 32 MiB a layer, 61 layers
    from oomkit.engines.sglang.weights import mla_absorbed_bytes
    spec = resolve("deepseek-ai/DeepSeek-V3")

    def copies(s):
        lay = sg.cache_layout(spec, s)
        return sum(mla_absorbed_bytes(t, spec, s, lay, True, None) for t in spec.weights.tensors
                   if t.layer is not None and t.layer < spec.n_trunk_layers)  # not the next-n layer

    assert copies(sg.SGLangSettings()) == 61 * 128 * 256 * 512 * 2
    assert copies(sg.SGLangSettings(tp_size=8)) == 61 * 16 * 256 * 512 * 2  # the rank's 16 heads
    # DP attention: the attention-TP group is one GPU, every rank holds all 128 heads
    assert copies(sg.SGLangSettings(tp_size=8, dp_size=8, enable_dp_attention=True)) == 61 * 128 * 256 * 512 * 2


def test_vision_tower_in_the_weights():
    # Gemma 3 27B: SigLIP (27 layers x 1152) + projector, 423,060,336 parameters in bf16, split over the TP group
    spec = resolve("gemma-3-27b-it")
    (tower,) = spec.towers
    assert tower.params == 423_060_336

    def w(**kw):
        s = sg.SGLangSettings(**kw)
        return sg.rank_weights(spec, s, sg.cache_layout(spec, s))[0]

    assert w() - w(language_only=True) == 423_060_336 * 2
    assert w(tp_size=2) - w(tp_size=2, language_only=True) == 423_060_336  # half on each rank
    # --mm-enable-dp-encoder: the encoder whole on each of the 2 ranks, not half
    assert w(tp_size=2, mm_enable_dp_encoder=True) - w(tp_size=2) == 423_060_336 * 2 - 423_060_336
    _, _, parsed = sg.parse_args(["--model-path", "google/gemma-3-27b-it", "--mm-enable-dp-encoder", "--language-only"])
    assert parsed.mm_enable_dp_encoder and parsed.language_only


@pytest.mark.parametrize("version, expected", [
    # up to 0.4.8 ModelRunner lowers any fraction of a multimodal model by 0.90: (81559 - 10240) / 81559 x 0.90
    ("0.4.8", 0.874 * 0.90),
    ("0.4.9", 0.874 * 0.90),
    # adjust_mem_fraction_for_vlm: 27 x 1152^2 / (24 x 1024^2) = 1.42383, factor 1 - 0.1 x 0.42383 = 0.957617
    ("0.5.2", 0.874 * 0.95 * (1 - 0.1 * (27 * 1152**2 / (24 * 1024**2) - 1))),
])
def test_vlm_default_fraction(version, expected):
    spec = resolve("gemma-3-27b-it")
    s = sg.SGLangSettings(engine_version=version)
    lay = sg.cache_layout(spec, s)
    assert lay.vit == (27, 1152)
    assert sg.default_mem_fraction_static(H100, s, vit=lay.vit).mem_fraction_static == pytest.approx(expected,
                                                                                                    abs=1e-9)
    # a text-only launch keeps the plain default
    s2 = sg.SGLangSettings(engine_version=version, language_only=True)
    assert sg.default_mem_fraction_static(H100, s2, vit=lay.vit).mem_fraction_static == pytest.approx(0.874)


def test_vlm_given_fraction_lowered_only_up_to_0_4_8():
    # model_runner.py (0.4.x to 0.4.8): "Automatically reduce --mem-fraction-static to 0.720 because this is a
    # multimodal model" for --mem-fraction-static 0.8; from 0.4.9 the given fraction stands. Not for Gemma 3 from 0.4.6
    # (nor Llama 4 from 0.4.5.post1): configs/model_config.py mm_disabled_models turns their multimodal path off unless
    # --enable-multimodal (0.4.6.post5, 0.4.7, 0.4.8 read), so ModelRunner.is_multimodal is False and nothing is cut
    gpu = (named_gpu("CUDA0", "NVIDIA H100 80GB HBM3", H100 * MiB),)
    for model, version, expected in (("qwen2.5-vl-7b-instruct", "0.4.8", 0.8 * 0.90),
                                     ("gemma-3-27b-it", "0.4.5.post3", 0.8 * 0.90),
                                     ("gemma-3-27b-it", "0.4.8", 0.8), ("gemma-3-27b-it", "0.4.9", 0.8),
                                     ("gemma-3-27b-it", "0.5.23", 0.8)):
        est = sg.estimate(resolve(model), gpu,
                          sg.SGLangSettings(mem_fraction_static=0.8, engine_version=version, context_length=8192))
        assert est.engine_view["mem_fraction_static"] == pytest.approx(expected), (model, version)


@pytest.mark.parametrize("version, backend, hybrid", [
    ("0.5.2", None, False), ("0.5.7", None, False),  # disable_hybrid_swa_memory = True for GptOssForCausalLM
    ("0.5.9", None, True), ("0.5.9", "trtllm_mha", False),  # only with trtllm_mha (or speculative decoding)
    ("0.5.10", "trtllm_mha", True), ("0.5.23", None, True),
])
def test_gpt_oss_swa_pool_by_release(version, backend, hybrid):
    spec = resolve("openai/gpt-oss-20b")  # 24 layers, every other one a 128-token window
    lay = sg.cache_layout(spec, sg.SGLangSettings(engine_version=version, attention_backend=backend))
    assert (len(lay.full_layers), len(lay.swa_layers)) == ((12, 12) if hybrid else (24, 0))
