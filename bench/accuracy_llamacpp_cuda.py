"""oomkit against llama.cpp's CUDA backend as measured on an H200 (tests/fixtures/llamacpp_cuda/, produced by
tools/cuda_groundtruth/): per model and run, how many settings have every buffer exact (model, KV, output) and the
compute buffers' ratio oomkit / llama.cpp on the GPU (CUDA0) and on the host side (CUDA_Host).

    PYTHONPATH=. .venv/bin/python bench/accuracy_llamacpp_cuda.py [--markdown]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

from tests import test_llamacpp_cuda_measured as t


def rows():
    out = defaultdict(lambda: {"cases": 0, "exact": 0, "CUDA0": [], "CUDA_Host": []})
    for p in t.ROWS:
        r = p.values[0]
        run = "held out" if "heldout" in r["tag"] else "fitted"
        key = (run, f"{r['key']} ({r['n_layers'] or 'full'} layers)")
        m, v = t.measured(r), t.oomkit_view(r)
        agg = out[key]
        agg["cases"] += 1
        exact = round(v["output_buffer_bytes"] / t.MiB, 2) == sum(m["output_buffer_mib"].values())
        if not r["settings"].get("no_alloc"):
            exact &= t._mib(v["model_buffer_bytes"]) == m["model_buffer_mib"]
            exact &= t._mib(v["kv_buffer_bytes"]) == m["kv_buffer_mib"]
        agg["exact"] += exact
        for dev, ratio in t._compute_ratios(r).items():
            if dev in agg:
                agg[dev].append(ratio)
    return out


def _band(xs: list[float]) -> str:
    if not xs:
        return "-"
    worst = max(xs, key=lambda x: abs(x - 1))
    return f"{statistics.median(xs):.3f} / {worst:.3f}"


def main(argv: list[str]) -> int:
    data = rows()
    md = "--markdown" in argv
    head = ("run", "model", "settings", "buffers exact", "CUDA0 median / worst", "CUDA_Host median / worst")
    lines = []
    for (run, model), a in sorted(data.items()):
        lines.append((run, model, str(a["cases"]), f"{a['exact']}/{a['cases']}", _band(a["CUDA0"]),
                      _band(a["CUDA_Host"])))
    within = {dev: sum(0.9 <= x <= 1.1 for a in data.values() for x in a[dev]) for dev in ("CUDA0", "CUDA_Host")}
    total = {dev: sum(len(a[dev]) for a in data.values()) for dev in ("CUDA0", "CUDA_Host")}
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for ln in lines:
            print("| " + " | ".join(ln) + " |")
    else:
        for ln in (head, *lines):
            print("  ".join(f"{c:<24}" if i == 1 else f"{c:<10}" for i, c in enumerate(ln)))
    print()
    print("compute within 10%: " + ", ".join(f"{dev} {within[dev]}/{total[dev]}" for dev in within))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
