"""diagnose() finishes in bounded time on anything: random text, adversarial text built from the signatures' own
phrases, pathological lines (huge numbers, deep brackets, megabyte lines), and a 50 MB log. Each call runs under a
hang guard at ten times its budget (0.3 s a message, 5 s a 50 MB log): a pattern that backtracks fails the test
instead of hanging it."""

from __future__ import annotations

import random
import signal
import time
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomkit.diagnose import SIGNATURES, diagnose
from oomkit.diagnose.signatures import STAGES

MESSAGE_GUARD_S = 3.0  # 10 x the 0.3 s budget of one message
LOG_GUARD_S = 50.0  # 10 x the 5 s budget of a 50 MB log


class Hang(Exception):
    pass


@contextmanager
def guard(seconds: float):
    def _alarm(signum, frame):
        raise Hang(f"diagnose ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check(text: str | bytes) -> None:
    with guard(MESSAGE_GUARD_S):
        d = diagnose(text)
    assert d.stage in STAGES
    d.to_dict()


PHRASES = sorted({k for s in SIGNATURES for k in s.keys} | {
    "Tried to allocate ", " MiB", " GiB", " bytes", "GPU 0 has a total capacity of ", " of which ", " is free. ",
    "Process 12 has ", " memory in use. ", "(", ")", "[", "]", '"', "'", "=", ", ", ": ", "\n", "\r", "\r\n", "\t",
    "\x1b[31m", "\x1b[0m", "  File \"x.py\", line 1, in profile_run\n", "(EngineCore_DP0 pid=1) ", "vllm-1  | ",
    "on device 0: cudaMalloc failed: out of memory", "buffer of size ", "n_ctx = ", "max_model_len", "0.", "9" * 40,
    "-", "KV cache", " is needed", "non-default args: {", "}", "server_args=ServerArgs(", "memory.required.kv=\"",
})
fragments = st.one_of(st.sampled_from(PHRASES), st.text(max_size=12), st.integers(0, 10**30).map(str))
adversarial = st.lists(fragments, max_size=200).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=4000))
def test_random_text(text):
    check(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial)
def test_adversarial_text(text):
    check(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4000))
def test_random_bytes(data):
    check(data)


@pytest.mark.parametrize("text", [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + "9" * 200_000 + " MiB.",
    "Tried to allocate " + "1." * 100_000,
    "(" * 200_000 + "CUDA out of memory. Tried to allocate 2.00 MiB" + ")" * 200_000,
    "a" * 2_000_000 + " ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 12",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating " + " " * 500_000 + "1 MiB on device 0: cudaMalloc failed",
    "\n".join(["llama_kv_cache_init: failed to allocate buffer for kv cache"] * 100_000),
    "\n".join(['  File "' + "x" * 300 + '", line 1, in f'] * 20_000) + "\nCUDA error: out of memory",
    "non-default args: {" + "'a': [" * 5000 + "]" * 5000 + "}",
    "To serve at least one request with the model's max seq len (" + "1" * 100_000,
    "\x1b[" * 300_000 + "Killed",
    "\r" * 1_000_000 + "No available memory for the cache blocks",
    "model requires more system memory (" + "5" * 100_000 + " GiB) than is available (3 GiB)",
    ("x" * 1000 + " CUDA out of memory ") * 5000,  # one 5 MB line, a key every kilobyte
    ("Tried to allocate 2 MiB failed to allocate " + "y" * 200) * 20000,
], ids=lambda t: repr(t[:30]))
def test_pathological(text):
    check(text)


def synthetic_log(size: int = 50 * 1024 * 1024, seed: int = 7) -> str:
    """A vLLM serving log of `size` bytes: start-up lines, coloured request logs, progress bars with \\r, Windows
    line ends, worker prefixes; the out-of-memory near the end, a consequence after it."""
    rnd = random.Random(seed)
    head = ("INFO 05-08 14:40:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
            "INFO 05-08 14:40:00 [api_server.py:1044] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
            "'max_model_len': 131072, 'gpu_memory_utilization': 0.9}\n"
            "INFO 05-08 14:40:10 [gpu_model_runner.py:1186] Model loading took 14.9888 GiB and 2.77 seconds\n")
    body = [
        "\x1b[32mINFO\x1b[0m 05-08 14:46:12 [loggers.py:116] Engine 000: Avg prompt throughput: 1024.3 tokens/s, "
        "Avg generation throughput: 55.1 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%\n",
        "(VllmWorker rank=1 pid=194255) INFO 05-08 14:46:12 [custom_all_reduce.py:196] Registering 4352 cuda graph "
        "addresses\r\n",
        "Processed prompts:  71%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u258b      | 726/1024 [10:44<04:18]\r",
        "INFO:     127.0.0.1:53312 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
    ]
    parts, n = [head], len(head)
    while n < size:
        line = rnd.choice(body)
        parts.append(line)
        n += len(line)
    parts.append("(VllmWorker rank=1 pid=194255) ERROR 05-08 14:46:12 [multiproc_executor.py:435] "
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB. GPU 1 has a total capacity "
                 "of 21.98 GiB of which 156.94 MiB is free. Including non-PyTorch memory, this process has 21.80 GiB "
                 "memory in use. Of the allocated memory 21.42 GiB is allocated by PyTorch, and 24.12 MiB is reserved "
                 "by PyTorch but unallocated.\n")
    parts.append("RuntimeError: CUDA error: an illegal memory access was encountered\n")
    return "".join(parts)


def test_fifty_megabyte_single_line():
    """No line breaks at all: the line's ends are searched within a window, never across the whole text."""
    text = ("x" * 4000 + " out of memory. Tried to allocate 2.00 MiB ") * 12_000  # ~48 MB, one line
    t0 = time.perf_counter()
    with guard(LOG_GUARD_S):
        d = diagnose(text)
    assert d.stage in STAGES and time.perf_counter() - t0 < LOG_GUARD_S


def test_fifty_megabyte_log():
    text = synthetic_log()
    assert len(text) >= 50 * 1024 * 1024
    t0 = time.perf_counter()
    with guard(LOG_GUARD_S):
        d = diagnose(text)
    elapsed = time.perf_counter() - t0
    assert (d.engine, d.host) == ("pytorch", "vllm") and d.stage in STAGES and d.stage != "not_oom"
    assert d.numbers["requested_bytes"] == 270 * (1 << 20)
    assert d.settings["max_model_len"] == 131072 and d.settings["vllm_version"] == "0.8.5"
    assert elapsed < LOG_GUARD_S
