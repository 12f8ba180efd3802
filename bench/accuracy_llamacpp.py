"""Accuracy against llama.cpp itself: every figure of every case of the ground-truth grid, summarised per
model (exact matches of the KV / recurrent / model / output figures; compute buffer ratio median and worst).

    PYTHONPATH=. python bench/accuracy_llamacpp.py [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

from oomkit.errors import OomkitError
from oomkit.model.spec import ModelSpec
from tests import gt_compare as g
from tests.test_groundtruth_llamacpp import FULL_DEPTH, GRID

EXACT = ("n_ctx", "model_mib", "caches", "kv_mib", "r_mib", "s_mib", "output_mib")


@dataclass(frozen=True)
class ModelGrid:
    """One model's grid against llama.cpp: the cases it ran, how many matched every EXACT figure, oomkit's
    compute buffer over llama.cpp's per case, and the settings llama.cpp refused that oomkit refused too."""
    spec: ModelSpec
    cases: int
    exact: int
    ratios: tuple[float, ...]
    refused_too: int


def model_grid(key: str, n_layers: int) -> ModelGrid:
    _, spec, results = g.measure_grid(key, n_layers, GRID)
    ratios, cases, exact, refused = [], 0, 0, 0
    for s, m in zip(GRID, results, strict=True):
        if not m["ok"]:
            try:
                g.oomkit_figures(spec, s)
            except OomkitError:
                refused += 1
            continue
        e, o = g.engine_figures(m), g.oomkit_figures(spec, s)
        cases += 1
        exact += all(o[f] == e[f] for f in EXACT)
        ratios.append(o["compute_mib"] / e["compute_mib"])
    return ModelGrid(spec, cases, exact, tuple(ratios), refused)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    md = ap.parse_args().markdown
    rows, all_ratios, total, exact_ok, refused = [], [], 0, 0, 0
    t0 = time.perf_counter()
    for key, n_layers in g.MODELS:
        grid = model_grid(key, n_layers)
        total += grid.cases
        exact_ok += grid.exact
        refused += grid.refused_too
        all_ratios += grid.ratios
        worst = max(grid.ratios, key=lambda r: abs(r - 1))
        rows.append((f"{key} ({grid.spec.architecture}, {n_layers} layers)", grid.cases, grid.exact,
                     statistics.median(grid.ratios), worst))
    sep = " | " if md else "  "
    head = ["model", "cases", "KV/RS/model/output exact", "compute median", "compute worst"]
    if md:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    else:
        print(sep.join(head))
    for name, cases, matched, med, worst in rows:
        cells = [name, str(cases), f"{matched}/{cases}", f"{med:.3f}", f"{worst:.3f}"]
        print(("| " + " | ".join(cells) + " |") if md else sep.join(cells))
    print("\nFull depth, long context (llama.cpp dry run):")
    from oomkit.model.gguf_file import read_gguf_spec

    for key, over in FULL_DEPTH:
        s = dict(next(g.settings_grid()), no_alloc=True, use_mmap=False, **over)
        path = g.synth_file(key, None)
        spec = read_gguf_spec(path)
        m = g.llamacpp_run.measure(path, **s)
        e, o = g.engine_figures(m), g.oomkit_figures(spec, s)
        same = all(o[f] == e[f] for f in ("n_ctx", "caches", "r_mib", "s_mib", "output_mib"))
        kv = sum(k + v for _, _, k, v in e["caches"])
        print(f"  {key}: {spec.n_layers} layers, n_ctx {e['n_ctx']}, {s['n_seq_max']} seq: KV {kv:.2f} MiB, "
              f"state {e['r_mib'] + e['s_mib']:.2f} MiB {'equal' if same else 'DIFFERENT'}; compute "
              f"{o['compute_mib']:.1f} vs {e['compute_mib']:.1f} MiB ({o['compute_mib'] / e['compute_mib']:.3f})")
        all_ratios.append(o["compute_mib"] / e["compute_mib"])
    worst_all = max(all_ratios, key=lambda r: abs(r - 1))
    print(f"\n{total} cases: {exact_ok} with every exact figure equal to llama.cpp's; compute buffer ratio median "
          f"{statistics.median(all_ratios):.3f}, worst {worst_all:.3f}; {refused} settings llama.cpp refused, "
          f"refused by oomkit too. ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
