"""diagnose(): the JSON contract, robustness (ANSI codes, CRLF, progress bars, process prefixes, nested tracebacks,
the first out-of-memory as the cause, look-alikes), the settings and buffers of a start-up log, oomkit's own
prediction beside them, the computed fixes, and the two commands. Messages are the engines' formats (see the
error index); the corpus of real texts is tested in test_diagnose_corpus.py."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.diagnose import SIGNATURES, diagnose, errors_index
from oomkit.diagnose.signatures import ENGINES, STAGES

GiB, MiB = 1 << 30, 1 << 20


def G(x):
    return round(x * GiB)


def M(x):
    return round(x * MiB)


V1_KV = ("ValueError: To serve at least one request with the models's max seq len (32768), (4.00 GiB KV cache is "
         "needed, which is larger than the available KV cache memory (2.89 GiB). Based on the available memory, the "
         "estimated maximum model length is 23648. Try increasing `gpu_memory_utilization` or decreasing "
         "`max_model_len` when initializing the engine.")


def test_to_dict_is_the_contract():
    d = diagnose(V1_KV).to_dict()
    for key in ("engine", "engine_version", "confidence", "stage", "numbers", "settings", "causes", "fixes"):
        assert key in d
    assert d["engine"] in ENGINES and d["stage"] in STAGES
    allowed = {"requested_bytes", "free_bytes", "total_bytes", "allocated_bytes", "reserved_unallocated_bytes",
               "kv_needed_bytes", "kv_available_bytes", "model_required_bytes", "system_available_bytes",
               "max_buffer_bytes", "estimated_max_len", "max_model_len", "n_ctx"}
    assert set(d["numbers"]) <= allowed
    for f in d["fixes"]:
        assert "summary" in f and "saves_bytes" in f
    json.dumps(d)


def test_signatures_are_consistent():
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids))
    for s in SIGNATURES:
        assert s.keys and s.role in ("oom", "stage", "not_oom", "warn", "recovered")
        assert s.stage is None or s.stage in STAGES
        s.regex()  # compiles


# ---------------------------------------------------------------------------------------------------------- reading


def test_ansi_crlf_progress_bars_and_prefixes():
    noisy = ("Processed prompts:  12%|\u2588\u2588        | 3/25 [00:01<00:09]\r"
             "Processed prompts:  16%|\u2588\u2588\u2588       | 4/25 [00:01<00:08]\r\n"
             "\x1b[1;31m(EngineCore_DP0 pid=4711) ERROR 10-25 13:08:43 [core.py:708]\x1b[0m " + V1_KV + "\r\n")
    d = diagnose(noisy)
    assert (d.engine, d.stage, d.line) == ("vllm", "kv_cache", 3)
    assert d.numbers["kv_needed_bytes"] == G(4.00) and d.numbers["estimated_max_len"] == 23648


def test_bytes_and_invalid_utf8():
    d = diagnose(V1_KV.encode() + b"\xff\xfe garbage")
    assert d.stage == "kv_cache"


def test_digits_and_dots_that_make_no_number_are_not_read():
    # the figure patterns take [0-9.] runs; "1.2.3" (a version pasted beside the key) is no figure: left out, the
    # message still read
    d = diagnose("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                 "mem_fraction_static=1.2.3")
    assert (d.engine, d.stage) == ("sglang", "kv_cache") and "mem_fraction_static" not in d.numbers
    d = diagnose("INFO gpu_memory_utilization=1.2.3\nllama_kv_cache: CUDA0 KV buffer size = 1..5 MiB\n"
                 "INFO Maximum concurrency for 4,096 tokens per request: 1.2.3x\n" + V1_KV)
    assert d.stage == "kv_cache" and "gpu_memory_utilization" not in d.settings
    assert "max_concurrency" not in d.buffers and "kv" not in d.buffers


def test_first_oom_is_the_cause():
    log = "\n".join([
        "llama_init_from_model: n_ctx         = 65536",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory",
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 2147483648",
        "llama_init_from_model: failed to allocate compute buffers",
        "... later ...",
        "CUDA error: out of memory",
        "  current device: 0, in function ggml_cuda_pool_malloc_vmm at ggml-cuda.cu:8583",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory",
        "llama_kv_cache_init: failed to allocate buffer for kv cache",
    ])
    d = diagnose(log)
    assert (d.engine, d.stage, d.line) == ("llama.cpp", "compute", 2)
    assert d.numbers["requested_bytes"] == M(2048) and d.numbers["n_ctx"] == 65536


def test_chained_traceback_vllm_sampler():
    log = "\n".join([
        "(EngineCore_DP0 pid=1) ERROR [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "1.96 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.20 GiB is free. Including non-PyTorch memory, "
        "this process has 77.98 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and "
        "1.30 GiB is reserved by PyTorch but unallocated.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/site-packages/vllm/v1/worker/gpu_model_runner.py", line 2400, in _dummy_sampler_run',
        "    raise RuntimeError(",
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
        "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
    ])
    d = diagnose(log)
    assert (d.engine, d.stage, d.host) == ("pytorch", "compute", "vllm")
    assert d.numbers["requested_bytes"] == G(1.96)
    assert d.phase == "sampler warm-up"
    # the sampler's tensors are one row per dummy request: 1.96 GiB x 512 / 1024 = 0.98 GiB fits the 1.20 GiB free
    assert any(f.flags == ("--max-num-seqs", "512") for f in d.fixes)
    # the default utilization 0.9 less 0.01: a KV cache 0.01 x 79.19 GiB smaller leaves the 0.76 GiB that was short
    assert any(f.flags == ("--gpu-memory-utilization", "0.89") for f in d.fixes)


def test_lookalikes_and_oom_beats_them():
    assert diagnose("RuntimeError: CUDA error: an illegal memory access was encountered").stage == "not_oom"
    assert diagnose("Failed to initialize NVML: Driver/library version mismatch").stage == "not_oom"
    assert diagnose("OSError: [Errno 28] No space left on device").stage == "not_oom"
    # a bare SIGKILL (bash's "Killed", Docker's 137) is most often the kernel's OOM killer, but not proven: medium
    for text in ("Loading model...\nKilled", "Killed", "worker exited with code 137"):
        d = diagnose(text)
        assert (d.stage, d.confidence) == ("host_ram", "medium"), text
        assert "dmesg" in d.fixes[0].summary
    assert diagnose("Terminated").stage == "not_oom"
    d = diagnose("kernel: Out of memory: Killed process 2211 (ollama) total-vm:80123456kB")
    assert d.stage == "host_ram" and d.engine == "ollama"
    both = "CUDA error: out of memory\nRuntimeError: CUDA error: an illegal memory access was encountered"
    assert diagnose(both).stage != "not_oom"
    d = diagnose("Error in memory profiling. Initial free memory 70.1 GiB, current free memory 71.3 GiB. This "
                 "happens when other processes sharing the same container release GPU memory")
    assert d.stage == "not_oom" and d.engine == "vllm"


def test_unknown_says_what_it_saw():
    d = diagnose("hello world\nnothing to see here\n")
    assert d.stage == "unknown" and d.engine is None and d.fixes == ()
    d = diagnose("the GPU ran out of memory while rendering")
    assert d.stage == "unknown" and "out of memory" in d.causes[0]


def test_torch_fragmentation_fix():
    d = diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                 "of 23.65 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 22.43 GiB "
                 "memory in use. Of the allocated memory 17.10 GiB is allocated by PyTorch, and 4.83 GiB is reserved "
                 "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
    assert d.stage == "fragmentation"
    f = d.fixes[0]
    assert f.env == (("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),) and f.saves_bytes == G(4.83)
    assert "4.83 GiB" in f.summary


def test_other_process_names_the_pid():
    d = diagnose("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 1 has a total capacity "
                 "of 23.57 GiB of which 605.88 MiB is free. Process 133288 has 11.00 GiB memory in use. Process 2211 "
                 "has 7.90 GiB memory in use. Of the allocated memory 10.21 GiB is allocated by PyTorch, and 185.98 "
                 "MiB is reserved by PyTorch but unallocated.")
    assert d.stage == "other_process"
    f = d.fixes[0]
    assert "PID 2211" in f.summary and "7.90 GiB" in f.summary and f.saves_bytes == G(7.90)


def test_vllm_kv_fix_from_the_numbers():
    log = ("Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
           "peak_torch_memory=17.98GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n"
           + V1_KV)
    d = diagnose(log)
    assert d.settings["gpu_memory_utilization"] == 0.9 and d.settings["total_gpu_memory_bytes"] == G(23.58)
    by_flag = {f.flags[0]: f for f in d.fixes if f.flags}
    assert by_flag["--max-model-len"].flags[1] == "23648"
    per_token = G(4.00) / 32768
    assert by_flag["--max-model-len"].saves_bytes == int(G(4.00) - per_token * 23648)
    # the shortfall 4.00 - 2.89 GiB over 23.58 GiB: 0.9 + 0.047 -> 0.95
    u = by_flag["--gpu-memory-utilization"]
    assert u.flags[1] == "0.95"
    tokens = int((G(2.89) + 0.05 * G(23.58)) / per_token)
    assert f"{tokens:,} tokens" in u.summary
    assert by_flag["--kv-cache-dtype"].flags[1] == "fp8"


def test_llamacpp_kv_fix_from_free_memory():
    log = "\n".join([
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23307 MiB free",
        "load_tensors:        CUDA0 model buffer size = 17000.00 MiB",
        "llama_context: n_ctx         = 131072",
        "llama_context: flash_attn    = auto",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory",
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
    ])
    d = diagnose(log)
    assert (d.engine, d.stage) == ("llama.cpp", "kv_cache")
    ctx = next(f for f in d.fixes if f.flags and f.flags[0] == "-c")
    per_token = M(16384) / 131072
    free = M(23307) - M(17000) - M(512)
    expect = int(free / per_token) // 256 * 256
    assert ctx.flags == ("-c", str(expect)) and ctx.saves_bytes == int((131072 - expect) * per_token)
    q8 = next(f for f in d.fixes if "-ctk" in f.flags)
    ctx_q8 = int(free / (per_token * 8.5 / 16)) // 256 * 256
    assert q8.flags == ("-c", str(ctx_q8), "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
    assert q8.saves_bytes == int(M(16384) * (1 - 8.5 / 16))


def test_ollama_estimate_fix():
    log = ('time=2025-01-01T00:00:00Z level=INFO source=memory.go:326 msg="offload to cuda" layers.requested=-1 '
           'layers.model=49 layers.offload=49 memory.available="[23.4 GiB]" memory.gpu_overhead="0 B" '
           'memory.required.full="30.0 GiB" memory.required.partial="23.0 GiB" memory.required.kv="16.0 GiB"\n'
           'time=2025-01-01T00:00:01Z level=INFO source=server.go:100 msg="starting llama server" cmd="/usr/bin/ollama '
           'runner --model /m --ctx-size 131072 --batch-size 512 --n-gpu-layers 49 --parallel 1 --port 1"\n'
           "Error: 500 Internal Server Error: memory layout cannot be allocated\n")
    d = diagnose(log)
    assert (d.engine, d.stage) == ("ollama", "kv_cache")
    f = d.fixes[0]
    room = G(23.4) - (G(30.0) - G(16.0))
    ctx = int(131072 * room / G(16.0)) // 256 * 256
    assert f.env == (("OLLAMA_CONTEXT_LENGTH", str(ctx)),)


def test_mlx_buffer_limit_fix():
    d = diagnose("[metal::malloc] Attempting to allocate 86586540032 bytes which is greater than the maximum allowed "
                 "buffer size of 28991029248 bytes.")
    assert (d.engine, d.stage) == ("mlx", "buffer_limit")
    assert d.fixes[0].flags == ("--prefill-step-size", "512")  # 2.99x over: 2048 / 4


# ------------------------------------------------------------------------------------------------ start-up logs


def test_llamacpp_startup_settings_and_buffers():
    log = "\n".join([
        "build: 5800 (abcdef12) with cc for x86_64-linux-gnu",
        "llama_model_loader: - kv   2:                               general.name str              = Meta Llama 3.1 8B Instruct",
        "print_info: file type   = Q4_K - Medium",
        "load_tensors: offloaded 33/33 layers to GPU",
        "load_tensors:        CUDA0 model buffer size =  4403.49 MiB",
        "load_tensors:   CPU_Mapped model buffer size =   281.81 MiB",
        "llama_init_from_model: n_seq_max     = 4",
        "llama_init_from_model: n_ctx         = 8192",
        "llama_init_from_model: n_ubatch      = 512",
        "llama_init_from_model: flash_attn    = 0",
        "llama_kv_cache_init: kv_size = 8192, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 32, can_shift = 1",
        "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 560.00 MiB on device 0: cudaMalloc failed: out of memory",
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 587202560",
        "llama_init_from_model: failed to allocate compute buffers",
    ])
    d = diagnose(log)
    assert (d.engine, d.stage, d.engine_version) == ("llama.cpp", "compute", "b5800")
    s = d.settings
    assert (s["n_ctx"], s["n_parallel"], s["n_ubatch"], s["flash_attn"], s["cache_type_k"], s["n_gpu_layers"]) == \
        (8192, 4, 512, "0", "f16", 33)
    assert d.buffers["model"] == {"CUDA0": M(4403.49), "CPU_Mapped": M(281.81)}
    assert d.buffers["kv"] == {"CUDA0": M(1024)}
    flags = {f.flags[0]: f.flags for f in d.fixes if f.flags}
    # b5800 is before PR #15434 (b6325): its -fa is a switch (common/arg.cpp), so the fix names it bare
    assert flags["-ub"] == ("-ub", "256") and flags["-fa"] == ("-fa",)


def test_vllm_startup_settings_and_prediction():
    log = "\n".join([
        "INFO 05-08 14:40:00 [api_server.py:1043] vLLM API server version 0.10.1",
        "INFO 05-08 14:40:00 [api_server.py:1044] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'max_model_len': 32768, 'gpu_memory_utilization': 0.9}",
        "INFO 05-08 14:40:10 [gpu_model_runner.py:1186] Model loading took 14.9888 GiB and 2.77 seconds",
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        "peak_torch_memory=17.98GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90",
        V1_KV,
    ])
    d = diagnose(log)
    assert d.engine_version == "0.10.1"
    assert d.settings["model"] == "meta-llama/Llama-3.1-8B-Instruct" and d.settings["max_model_len"] == 32768
    assert d.buffers["model_loading_bytes"] == G(14.9888)
    p = d.prediction
    assert p is not None and p["engine"] == "vllm"
    fig = p["figures"]["model_loading_bytes"]
    assert fig["printed"] == G(14.9888)
    assert abs(fig["oomkit"] - fig["printed"]) < G(0.5)  # Llama 3.1 8B in bf16: 14.96 GiB of weights


# ------------------------------------------------------------------------------------------------------ commands


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], input=stdin, capture_output=True, text=True)


def test_cli_diagnose_stdin_json_and_text():
    r = run("diagnose", "-", "--json", stdin=V1_KV)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["stage"] == "kv_cache" and d["numbers"]["estimated_max_len"] == 23648
    r = run("diagnose", stdin=V1_KV)
    assert r.returncode == 0 and "kv_cache" in r.stdout and "--max-model-len 23648" in r.stdout


def test_cli_diagnose_exit_codes(tmp_path):
    r = run("diagnose", str(tmp_path / "missing.log"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = run("diagnose", str(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    r = run("diagnose", stdin="all good here\n")
    assert r.returncode == 1 and "unknown" in r.stdout
    r = run("diagnose", "--bogus", stdin="")
    assert r.returncode == 2


def test_cli_diagnose_runs_a_command():
    code = f"import sys; print({V1_KV!r}, file=sys.stderr); sys.exit(1)"
    r = run("diagnose", "--json", "--", sys.executable, "-c", code)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["stage"] == "kv_cache"


def test_fixes_as_the_users_command_line():
    log = "\n".join([
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23307 MiB free",
        "load_tensors:        CUDA0 model buffer size = 17000.00 MiB",
        "llama_context: n_ctx         = 131072",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of "
        "memory",
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
    ])
    argv = ["llama-server", "-m", "/m/model.gguf", "-c", "131072", "-ngl", "99"]
    d = diagnose(log, command=argv)
    ctx = next(f for f in d.fixes if f.flags and f.flags[0] == "-c")
    assert ctx.command == f"llama-server -m /m/model.gguf -c {ctx.flags[1]} -ngl 99"
    assert d.settings["command"] == " ".join(argv)
    d = diagnose(V1_KV, command=["vllm", "serve", "Qwen/Qwen3-8B"])
    assert any(f.command == "vllm serve Qwen/Qwen3-8B --max-model-len 23648" for f in d.fixes)
    d = diagnose("Error: 500 Internal Server Error: memory layout cannot be allocated", command=["ollama", "run", "qwen3:8b"])
    assert d.fixes[0].command.startswith("OLLAMA_CONTEXT_LENGTH=") and d.fixes[0].command.endswith("ollama run qwen3:8b")
    assert d.fixes[0].command.count("OLLAMA_CONTEXT_LENGTH=") == 1


def test_cli_diagnose_command_not_found():
    r = run("diagnose", "--", "no-such-engine-binary-xyz", "--flag")
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_cli_errors_index():
    r = run("errors")
    assert r.returncode == 0 and "vllm_v1_kv_insufficient" in r.stdout
    r = run("errors", "cudaMalloc", "--json")
    rows = json.loads(r.stdout)
    assert rows and all("cudamalloc" in json.dumps(x).lower() for x in rows)
    assert run("errors", "no-such-message-anywhere").returncode == 1
    assert len(errors_index()) == len(SIGNATURES)
    assert {r["program"] for r in errors_index("not_oom")} >= {"cuda"}


def test_import_stays_light():
    code = "import sys, oomkit.diagnose; print(any(m.startswith(('torch', 'oomkit.engines.')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    assert out == "False"
    assert math.isfinite(1.0)


def test_estimate_gives_the_largest_context_for_a_known_model():
    log = "\n".join([
        "INFO 05-08 14:40:00 [api_server.py:1043] vLLM API server version 0.10.1",
        "INFO 05-08 14:40:00 [api_server.py:1044] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'max_model_len': 131072, 'gpu_memory_utilization': 0.9}",
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
        "peak_torch_memory=17.98GiB gpu_memory_utilization=0.90",
        "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (4.38 GiB). Based on the available memory, the "
        "estimated maximum model length is 35872.",
    ])
    d = diagnose(log)
    ours = [f for f in d.fixes if "oomkit's estimate" in f.summary and f.flags[0] == "--max-model-len"]
    assert ours, [f.summary for f in d.fixes]
    n = int(ours[0].flags[1])
    assert abs(n - 35872) <= 35872 * 0.02  # vLLM's own estimate, printed in the same text
    assert diagnose(log, predict=False).prediction is None


ENGINE_LOGS = sorted(p for p in (Path(__file__).parent / "fixtures" / "engine_logs").glob("*/*.json")
                     if not json.loads(p.read_text()).get("not_a_log"))  # a page's tables beside the logs


# Known misses, kept visible.
KNOWN_MISSES: dict[str, str] = {}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[p.stem]))
                                  if p.stem in KNOWN_MISSES else p for p in ENGINE_LOGS],
                         ids=[f"{p.parent.name}/{p.stem}" for p in ENGINE_LOGS])
def test_real_startup_logs(path):
    """The published start-up logs the engine tests use: each is read without error, the program whose log it is
    recognised, and where the log names a catalog model, oomkit's weights sit within 1% of the printed ones."""
    fx = json.loads(path.read_text())
    d = diagnose(fx["quoted"])
    # an Ollama runner's llama.cpp lines (fx "via": "ollama", its journald prefix kept) are Ollama's log as well
    programs = {fx["engine"], fx.get("via", fx["engine"])} | ({"llama.cpp"} if fx["engine"] == "ollama" else set())
    assert (d.host or d.engine) in programs
    fig = (d.prediction or {}).get("figures", {}).get("model_loading_bytes")
    if fig:
        assert abs(fig["oomkit"] - fig["printed"]) <= 0.01 * fig["printed"], fig


def test_llamacpp_estimate_for_a_known_model():
    log = "\n".join([
        "build: 6900 (abcdef12) with cc for x86_64-linux-gnu",
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4080) - 16000 MiB free",
        "llama_model_loader: loaded meta data with 30 key-value pairs and 292 tensors from "
        "/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf (version GGUF V3 (latest))",
        "print_info: file type   = Q4_K - Medium",
        "load_tensors:        CUDA0 model buffer size =  4403.49 MiB",
        "llama_context: n_seq_max     = 1",
        "llama_context: n_ctx         = 131072",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of "
        "memory",
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
    ])
    d = diagnose(log)
    assert (d.engine, d.stage, d.engine_version) == ("llama.cpp", "kv_cache", "b6900")
    ours = [f for f in d.fixes if "oomkit's estimate" in f.summary]
    assert ours, [f.summary for f in d.fixes]
    from oomkit.engines.base import get_engine  # the same question asked of the engine record
    from oomkit.limits import max_context
    from oomkit.request import devices_from, resolve_model

    eng = get_engine("llama.cpp")
    spec = resolve_model(eng, "Llama-3.1-8B-Instruct", "Q4_K_M")
    expect = max_context(eng, spec, devices_from(16000 << 20), eng.settings(n_parallel=1, engine_version="b6900"))
    assert ours[0].flags == ("-c", str(expect))


def test_no_fix_raises_the_context():
    """A log whose load-time free memory would hold the cache that failed: the fixes say the memory went elsewhere
    instead of offering a larger context."""
    log = "\n".join([
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23000 MiB free",
        "load_tensors:        CUDA0 model buffer size =  4403.49 MiB",
        "llama_context: n_ctx         = 131072",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of "
        "memory",
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
    ])
    d = diagnose(log, command=["llama-server", "-m", "/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "-c",
                               "131072", "-np", "1"])
    for f in d.fixes:
        if f.flags and f.flags[0] == "-c":
            assert int(f.flags[1]) < 131072, f
    assert any("took that memory" in f.summary for f in d.fixes)
    assert any("oomkit's estimate" in f.summary and "fits -c 131072" in f.summary for f in d.fixes)


def test_units_as_each_engine_meant_them():
    # Ollama: HumanBytes2 "GiB" is binary, the older HumanBytes "GB" decimal
    d = diagnose("Error: model requires more system memory (5.4 GB) than is available (3.1 GB)")
    assert d.numbers["model_required_bytes"] == 5_400_000_000 and d.numbers["system_available_bytes"] == 3_100_000_000
    d = diagnose("Error: model requires more system memory (5.4 GiB) than is available (3.1 GiB)")
    assert d.numbers["model_required_bytes"] == G(5.4)
    # PyTorch's MPS allocator labels binary sizes "GB" / "MB"
    d = diagnose("RuntimeError: MPS backend out of memory (MPS allocated: 5.56 GB, other allocations: 1.10 GB, max "
                 "allowed: 6.80 GB). Tried to allocate 768.00 MB on private pool.")
    assert d.numbers["requested_bytes"] == M(768) and d.numbers["max_allowed_bytes"] == G(6.80)
    # vLLM V0's "Loading model weights took 14.9888 GB" is GiB
    d = diagnose("Loading model weights took 14.9888 GB\nNo available memory for the cache blocks. Try increasing "
                 "`gpu_memory_utilization` when initializing the engine.")
    assert d.buffers["model_loading_bytes"] == G(14.9888)
    # llama.cpp prints MiB and raw bytes
    d = diagnose("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.50 MiB on device 1: cudaMalloc failed: "
                 "out of memory\nalloc_tensor_range: failed to allocate CUDA1 buffer of size 1074266112")
    assert d.numbers["requested_bytes"] == M(1024.5) and d.numbers["device"] == 1


def test_cudnn_cublas_sycl_and_xpu():
    assert diagnose("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED").stage == "compute"
    d = diagnose("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`")
    assert (d.engine, d.stage) == ("cuda", "unknown")  # an out-of-memory or an indexing bug: not placed
    d = diagnose("Exception caught at file:ggml-sycl.cpp, line:3164, func:operator()\nSYCL error: CHECK_TRY_ERROR(...):"
                 " Meet error in this line code!\n  in function ggml_sycl_op_mul_mat at ggml-sycl.cpp:3164\n"
                 "Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES)")
    assert (d.engine, d.backend) == ("llama.cpp", "SYCL")
    d = diagnose("torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity "
                 "of 15.11 GiB of which 512.00 MiB is free. Of the allocated memory 12.31 GiB is allocated by PyTorch, "
                 "and 1.20 GiB is reserved by PyTorch but unallocated.")
    assert (d.engine, d.backend, d.stage) == ("pytorch", "XPU", "fragmentation")
    assert d.numbers["total_bytes"] == G(15.11)


# ---------------------------------------------------------------------------------------------------------
# Runs that allocate their KV cache, then die (real texts of the corpus, each with its source there)

_CORPUS = {c["id"]: c for c in (json.loads(x) for x in (Path(__file__).parent / "fixtures" / "diagnose" /
                                                          "corpus.jsonl").read_text(encoding="utf-8").splitlines()
                                if x.strip())}


def _flag(d, name):
    """The value a fix gives flag `name`, or None."""
    return next((f.flags[1] for f in d.fixes if len(f.flags) == 2 and f.flags[0] == name), None)


def test_sampler_warmup_fix_from_the_estimate_on_the_memory_the_run_had():
    """vLLM 0.17.1, Llama-3.1-8B on an RTX 3090 at utilization 0.9: KV cache allocated, then the sampler warm-up ran
    out (other processes held part of the card). The log names model, GPU and (by its loading line) the release, so
    the fix is oomkit's estimate on the 139.75 MiB + 21.72 GiB this process could use. The run at 0.90 died and the
    study's next run at 0.86 started: the utilization it gives must be below 0.90 and not more than two steps below
    the 0.86 that worked."""
    d = diagnose(_CORPUS["vllm-offload-profiles-3090-sampler-warmup"]["text"])
    assert (d.stage, d.phase) == ("compute", "sampler warm-up")
    u = float(_flag(d, "--gpu-memory-utilization"))
    assert 0.84 <= u < 0.90
    assert int(_flag(d, "--max-num-seqs")) < 256  # the 256 dummy requests the log names
    assert "oomkit's estimate" in d.fixes[0].summary and "21.86 GiB of the 23.54 GiB" in d.fixes[0].summary
    assert any("5.61 GiB, 45,968 tokens" in c for c in d.causes)  # the KV cache the log printed


def test_sampler_warmup_fix_from_the_log_numbers_without_a_release():
    """gpt-oss-20b on an H100 at 0.95 (vLLM 0.19, which the excerpt does not print): no estimate, the fix from
    PyTorch's figures. The warm-up's tensors are one row per dummy request: 786 MiB x 512 / 1024 = 393 MiB fits the
    552.50 MiB free; 786 - 552.5 = 233.5 MiB short is under 0.01 x 79.19 GiB. 1.78 GiB was reserved but
    unallocated: expandable segments as well. The held-out TP2 run (the same figures, 298.50 MiB free) started at
    0.90, so its utilization fix lies in [0.90, 0.95)."""
    d = diagnose(_CORPUS["llm-d-planner-gpt-oss-20b-tp1-sampler-warmup"]["text"])
    assert (d.stage, d.phase) == ("compute", "sampler warm-up")  # not "fragmentation": vLLM names the step
    assert _flag(d, "--max-num-seqs") == "512" and _flag(d, "--gpu-memory-utilization") == "0.94"
    assert any(dict(f.env).get("PYTORCH_CUDA_ALLOC_CONF") == "expandable_segments:True" for f in d.fixes)
    d2 = diagnose(_CORPUS["llm-d-planner-gpt-oss-20b-tp2-sampler-warmup"]["text"])
    assert 0.90 <= float(_flag(d2, "--gpu-memory-utilization")) < 0.95
    assert _flag(d2, "--max-num-seqs") == "256"  # 786 x 256 / 1024 = 196.5 MiB <= 298.5 MiB free; 512 would not


def test_capture_phase_from_the_progress_line_and_no_advice_read_as_a_setting():
    """vllm#15598 (V0 0.7.3 over Ray): 'Capturing cudagraphs for decoding' is the last step before the OOM. Its advice
    ("set 'enforce_eager=True'") is not the setting; --enforce-eager (what the reporter used to start it) comes
    first."""
    d = diagnose(_CORPUS["vllm-15598-v0-capture-ray-progress"]["text"])
    assert d.phase == "CUDA graph capture" and "enforce_eager" not in d.settings
    assert d.fixes[0].flags == ("--enforce-eager",)


def test_sglang_capture_oom_and_its_fixes():
    """sglang#5285: "Capture cuda graph failed: CUDA out of memory": SGLang's own message, the capture phase, and its
    three ways out (the message's own list)."""
    d = diagnose(_CORPUS["sglang-5285-capture-cuda-graph-oom"]["text"])
    assert (d.engine, d.stage, d.phase, d.signature) == ("sglang", "compute", "CUDA graph capture",
                                                         "sglang_capture_oom")
    flags = [f.flags[0] for f in d.fixes if f.flags]
    assert "--cuda-graph-max-bs" in flags and "--disable-cuda-graph" in flags
    assert any("--mem-fraction-static" in f.summary for f in d.fixes)


def test_sglang_input_longer_than_the_pool():
    """sglang#4048: a prompt aborted over max_req_input_len = min(context_length, max_total_num_tokens) - 6: not an
    out-of-memory, a KV pool shorter than the context; --context-length 59862 + 6 states the limit."""
    d = diagnose(_CORPUS["sglang-4048-input-length-exceeds"]["text"])
    assert (d.engine, d.stage) == ("sglang", "kv_cache")
    assert any("not an out-of-memory" in c for c in d.causes)
    assert _flag(d, "--context-length") == "59868"
    assert _flag(d, "--kv-cache-dtype") == "fp8_e4m3"


@pytest.mark.parametrize("pool, ctx, stage", [(59868, 163840, "kv_cache"), (200000, 59868, "not_oom")])
def test_sglang_input_limit_names_the_pool_or_the_context(pool, ctx, stage):
    """Which limit SGLang's abort is, from its own start-up line (scheduler.py, in SGLang's format): the limit + 6 is
    min(context_len, max_total_num_tokens) (tp_worker.py); the pool is a memory limit, the context is not."""
    log = (f"[2025-03-03 10:00:00 TP0] max_total_num_tokens={pool}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
           f"max_running_requests=2048, context_len={ctx}\n"
           "[2025-03-03 10:05:00] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). Use a "
           "shorter input or enable --allow-auto-truncate.")
    d = diagnose(log)
    assert (d.engine, d.stage, d.confidence) == ("sglang", stage, "high")
    if stage == "kv_cache":
        assert d.numbers["kv_capacity_tokens"] == pool and _flag(d, "--context-length") == "59868"
    else:
        assert not d.fixes


def test_an_oom_while_serving_is_no_start_up_phase():
    """Capture finished and the server came up (vLLM's own lines): a later OOM is not put in a start-up phase."""
    log = "\n".join([
        "(EngineCore_DP0 pid=1) INFO [gpu_model_runner.py:2000] Graph capturing finished in 20 secs, took 0.50 GiB",
        "(APIServer pid=1) INFO [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 "
        "GiB of which 1.00 GiB is free.",
    ])
    assert diagnose(log).phase is None
    assert diagnose("\n".join([log.splitlines()[0], log.splitlines()[2]])).phase == "sampler warm-up"


def test_a_traceback_cut_in_capture_says_where_it_stopped():
    """vllm#17469: the stored excerpt stops at the call of capture_model, before the exception's line. The phase
    runs after the KV cache, outside the budget that sized it: read as its usual out-of-memory, with low
    confidence, the fix that worked there (--enforce-eager) offered, and the missing line asked for."""
    text = _CORPUS["vllm-17469-capture-cut-before-message"]["text"]
    d = diagnose(text)
    assert (d.stage, d.confidence, d.phase) == ("compute", "low", "CUDA graph capture")
    assert any("`capture_model` (CUDA graph capture" in c and "paste the lines" in c for c in d.causes)
    assert any(f.flags == ("--enforce-eager",) for f in d.fixes), [f.summary for f in d.fixes]
    # the same traceback going on to an exception (one capture raises when an op is not allowed while the stream
    # captures: the CUDA runtime's cudaErrorStreamCaptureUnsupported) is not a cut one, and that error is no memory
    tail = text.splitlines()[-1].split("]")[0] + "] RuntimeError: CUDA error: operation not permitted when stream is " \
        "capturing"
    d = diagnose(text + "\n" + tail)
    assert d.stage == "not_oom" and not any("memory" in f.summary for f in d.fixes)
    # nor is one cut after another rank's exception
    lines = text.splitlines()
    d = diagnose("\n".join([*lines[:-4], tail.replace("rank=1 pid=106", "rank=2 pid=107"), *lines[-4:]]))
    assert d.stage == "not_oom" and not any("memory" in f.summary for f in d.fixes)
    # an exception oomkit does not know after the frames: not a cut traceback either, nothing placed
    other = tail.split("] ")[0] + "] RuntimeError: CUDA error: invalid argument"
    d = diagnose(text + "\n" + other)
    assert d.stage == "unknown" and not d.fixes


def test_an_unplaced_llama_allocation_with_a_large_micro_batch_is_the_compute_buffer():
    """llama.cpp#12817: a Vulkan allocation failure that no line places, from a command with -ub 8192: the compute
    buffer grows with the micro-batch (the weights and the KV cache do not), so it is placed there (confidence low)
    and halving -ub is the first fix (the reporter: -ub 4096 loads). At the default micro-batch nothing places it;
    a progress line before the failure outranks the command (load_tensors: the weights)."""
    text = _CORPUS["llama-cpp-12817-vulkan-ub"]["text"]
    d = diagnose(text)
    assert (d.stage, d.confidence, d.settings["n_ubatch"]) == ("compute", "low", 8192)
    assert d.fixes[0].flags == ("-ub", "4096")
    assert diagnose(text.replace("-ub 8192", "-ub 512")).stage == "unknown"
    loading = "load_tensors: loading model tensors, this can take a while... (mmap = true)\n"
    assert diagnose(loading + text).stage == "weights"
    bare = text.replace("-ub 8192 ", "")  # the micro-batch given as the command line instead
    assert diagnose(bare).stage == "unknown"
    assert diagnose(bare, command=["llama-server", "-m", "m.gguf", "-ub", "8192"]).stage == "compute"


def test_exllama_insufficient_vram_is_weights_or_cache():
    """ExLlama's autosplit message is raised for a module that fits on no device with its cache layers (exllamav3
    model_ls.py): read as the cache with confidence medium, never high; where the text shows MoE experts already on
    the CPU (tabbyAPI#475: cpu_moe_offload_layers 26), moving more of them is the first fix."""
    d = diagnose(_CORPUS["tabbyapi-475-insufficient-moe"]["text"])
    assert (d.engine, d.stage, d.confidence) == ("exllama", "kv_cache", "medium")
    assert d.fixes[0].summary.startswith("cpu_moe_offload_layers above 26")
    d = diagnose(_CORPUS["exllamav2-383-insufficient"]["text"])
    assert d.confidence == "medium" and not any("cpu_moe_offload_layers above" in f.summary for f in d.fixes)


def test_the_offload_flag_is_read_from_a_quoted_command():
    """vLLM PR #6496 (GH200): the comment's command line gives --cpu-offload-gb 70, which sets what stays on the GPU
    (engines/vllm/weights.py offloaded_bytes): the settings read from the text carry it to the estimate."""
    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" /
                     "llama-3-70b-gh200-v0.5.2-offload70-pr6496.json").read_text())
    d = diagnose(fx["quoted"])
    assert (d.engine, d.engine_version, d.settings["cpu_offload_gb"]) == ("vllm", "0.5.2", 70.0)


def test_offload_under_model_runner_v2_before_0_28_names_the_v1_runner():
    """vLLM 0.21-0.27's model runner V2 installs no weight offloader (vllm#51396; set_offloader in its load_model
    from 0.28, read in the wheels): a run that says 'Using V2 Model Runner' with --cpu-offload-gb had all its weights
    on the GPU. Lines of a real 0.27.1 V2 start-up (qwen3-8b-4090-v0.27.1-runner-v2-warm, its banner read for the
    version) up to the model load, then PyTorch's out-of-memory there, and the command with --cpu-offload-gb 8."""
    fx = json.loads((Path(__file__).parent / "fixtures" / "engine_logs" / "vllm" /
                     "qwen3-8b-4090-v0.27.1-runner-v2-warm.json").read_text())
    lines = fx["quoted"].splitlines()
    assert diagnose(fx["quoted"]).engine_version == "0.27.1"
    oom = ("(EngineCore pid=894) ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 "
           "has a total capacity of 23.52 GiB of which 310.00 MiB is free.")
    argv = ["vllm", "serve", "Qwen/Qwen3-8B", "--cpu-offload-gb", "8"]
    d = diagnose("\n".join([*lines[:4], oom]), command=argv)
    assert d.stage == "weights" and d.settings["vllm_runner"] == "V2"
    assert d.fixes[0].env == (("VLLM_USE_V2_MODEL_RUNNER", "0"),) and "vLLM 0.27.1" in d.fixes[0].summary
    assert d.fixes[0].command == "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve Qwen/Qwen3-8B --cpu-offload-gb 8"
    # the V1 runner offloads (no 'Using V2 Model Runner' line): no such fix
    d = diagnose("\n".join([lines[0], lines[1], lines[3], oom]), command=argv)
    assert not any(f.env == (("VLLM_USE_V2_MODEL_RUNNER", "0"),) for f in d.fixes)


def _corpus_text(case_id):
    path = Path(__file__).parent / "fixtures" / "diagnose" / "corpus.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == case_id:
            return json.loads(line)["text"]
    raise KeyError(case_id)


def test_held_out_fixes_follow_the_text():
    """The fixes of real texts (corpus by id) that a first reading got wrong."""
    # a llama-cli run from a folder named ollama_gguf is llama.cpp's own log: no Ollama knob among its fixes
    d = diagnose(_corpus_text("llama-cpp-8207-rocm-weights-backend-buffer"))
    assert d.host is None and d.stage == "weights" and not any("num_gpu" in f.summary for f in d.fixes)
    # no process is listed: "stop the other processes listed" is no fix
    for cid in ("pytorch-16417-this-process-full", "taming-194-old-format-max-split", "meshgen-7-allocated-over-total"):
        assert not any("other processes" in f.summary for f in diagnose(_corpus_text(cid)).fixes), cid
    # 13.98 GiB allocated on an 8 GiB device: the figures do not place it, and the cause says why
    d = diagnose(_corpus_text("meshgen-7-allocated-over-total"))
    assert d.stage == "unknown" and any("system memory" in c for c in d.causes)
    # 3,664 of 4,096 tokens: the fp8 cache (twice the tokens) reaches the length, so no "nothing useful fits";
    # 1,216 of 4,096: it does not
    assert not any("next tier" in f.summary for f in diagnose(_corpus_text("basalam-10-v0-kv-colab")).fixes)
    assert any("next tier" in f.summary for f in diagnose(_corpus_text("llamafactory-6472-v0-kv-title")).fixes)
    # V0's negative KV budget on 8 GiB at 0.70: 1.05 GiB short, 0.90 leaves about 0.5 GiB (0.70 + 1.55/8 = 0.894)
    d = diagnose(_corpus_text("vllm-13882-v0-negative-kv-rtx4060"))
    assert d.fixes[0].flags == ("--gpu-memory-utilization", "0.90")
    # SGLang at a fraction of 0.2 (a wrapper's wrong default): back to a fraction SGLang would pick, not 0.25
    d = diagnose(_corpus_text("gpustack-3831-sglang-current-value"))
    assert d.fixes[0].flags == ("--mem-fraction-static", "0.85")
    # Ollama's "cudaMalloc failed" is a ggml buffer whose line is cut off: unknown, with Ollama's memory knobs
    d = diagnose(_corpus_text("ollama-5113-runner-aborted-cudamalloc"))
    assert d.stage == "unknown" and d.fixes
    # 2023 ggml-cuda "CUDA error 2 at ...": CUDA_CHECK wrapped every cudaMalloc, so the line names no stage
    assert diagnose(_corpus_text("ollama-1236-ggml-cuda-error-2")).stage == "unknown"
    # an OOM inside from_pretrained (the script's line calls it) is the weights: quantize or offload, not a batch
    d = diagnose(_corpus_text("qwen-vl-26-from-pretrained-old-format"))
    assert d.stage == "weights" and "quantized" in d.fixes[0].summary
    assert not any("smaller batch" in f.summary for f in d.fixes)
    # a traceback cut inside vLLM's KV check is the KV cache's
    d = diagnose(_corpus_text("vllm-4429-v0-initialize-cache-frames-cut"))
    assert (d.engine, d.stage, d.confidence) == ("vllm", "kv_cache", "medium")


def test_fragmentation_is_no_cause_when_less_is_held_unused_than_asked():
    # PyTorch's message (c10/cuda/CUDACachingAllocator.cpp) says what it holds reserved but unallocated: 150 MiB
    # cannot have served a 2 GiB request, so fragmentation is not among the causes; 3 GiB could have
    head = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "23.55 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.42 GiB memory in "
            "use. Of the allocated memory {a} is allocated by PyTorch, and {r} is reserved by PyTorch but unallocated.")
    small = diagnose(head.format(a="21.80 GiB", r="150.00 MiB"))
    assert not any("fragmented" in c for c in small.causes) and small.causes
    large = diagnose(head.format(a="18.90 GiB", r="3.05 GiB"))
    assert large.stage == "fragmentation"
    assert any("expandable_segments:True" in str(f.env) for f in large.fixes)
