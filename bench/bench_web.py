"""A bounded load test of the web hub on loopback: N concurrent clients for S seconds on /api/estimate.

Starts `oomkit serve`'s app on uvicorn in this process (a free loopback port, one worker), then runs N threads, each
with its own httpx client and keep-alive connection, sending GET /api/estimate requests one after another, cycling
through a few catalog models, engines and contexts. Prints requests per second, p50 / p90 / p99 latency and the
number of errors (any status other than 200, or a transport error).

    .venv/bin/python bench/bench_web.py                  # 20 clients, 30 s
    .venv/bin/python bench/bench_web.py --clients 50 --seconds 10
    .venv/bin/python bench/bench_web.py --url http://127.0.0.1:8000   # a server already running
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import threading
import time

import httpx

REQUESTS = (
    {"model": "llama3.1:8b", "ctx": "32768", "vram": "24GiB"},
    {"model": "qwen3:32b", "ctx": "65536", "kv_type": "q8_0", "flags": "-fa on", "gpu": "2x RTX 3090"},
    {"model": "gemma-3-27b-it", "ctx": "131072", "vram": "48GiB"},
    {"model": "Qwen/Qwen3-14B", "engine": "vllm", "ctx": "16384", "vram": "80GiB"},
    {"model": "deepseek-r1:671b", "quant": "Q2_K", "ctx": "32768", "gpu": "8x H100"},
    {"command": "llama-server -m qwen3:8b -c 40960 -np 2 -fa on", "vram": "16GiB"},
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve() -> tuple[str, object]:
    import uvicorn

    from oomkit.web.app import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.time() + 30
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    if not server.started:
        sys.exit("the server did not start")
    return f"http://127.0.0.1:{port}", server


def run(url: str, clients: int, seconds: float) -> dict:
    stop = time.perf_counter() + seconds
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients

    def client(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as c:
            k = i
            while time.perf_counter() < stop:
                params = REQUESTS[k % len(REQUESTS)]
                k += 1
                t0 = time.perf_counter()
                try:
                    r = c.get("/api/estimate", params=params)
                    ok = r.status_code == 200 and r.content.startswith(b"{")
                except httpx.HTTPError:
                    ok = False
                latencies[i].append(time.perf_counter() - t0)
                errors[i] += not ok

    # warm up: every request once (the catalog entries read and cached)
    with httpx.Client(base_url=url, timeout=60) as c:
        for params in REQUESTS:
            c.get("/api/estimate", params=params).raise_for_status()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    lat = sorted(x for xs in latencies for x in xs)
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else lat * 99
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": len(lat), "errors": sum(errors),
            "rps": len(lat) / elapsed, "p50_ms": q[49] * 1000, "p90_ms": q[89] * 1000, "p99_ms": q[98] * 1000,
            "max_ms": lat[-1] * 1000 if lat else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--url", help="a running server (default: start one in this process on a free loopback port)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    url = args.url or _serve()[0]
    r = run(url, args.clients, args.seconds)
    print(f"{r['clients']} clients for {r['seconds']} s on GET /api/estimate ({len(REQUESTS)} request shapes): "
          f"{r['requests']} requests, {r['rps']:.1f} requests/s, p50 {r['p50_ms']:.1f} ms, p90 {r['p90_ms']:.1f} ms, "
          f"p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms, errors {r['errors']}")
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; server and clients in one process")
    return 1 if r["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
