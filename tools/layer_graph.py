"""Print oomkit's import graph between its top-level parts (errors, units, model, engines, ...), the imports that
reach up a floor (tests/test_layers.py FLOORS), module cycles and imports inside functions:

    python tools/layer_graph.py [path/to/src/oomkit]
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import test_layers as layers  # noqa: E402


def main(src: Path) -> None:
    layers.SRC = src
    sources = sorted(src.rglob("*.py"))
    graph = {layers.module_name(p): layers.imports_of(p) for p in sources}
    part = lambda m: m.split(".")[1] if "." in m else "__init__"  # noqa: E731
    edges: dict[str, set[str]] = defaultdict(set)
    up, inside = [], 0
    for m, imps in graph.items():
        for t, _line, in_fn in imps:
            inside += in_fn
            if part(t) != part(m):
                edges[part(m)].add(part(t))
            if part(m) in layers.FLOOR and part(t) in layers.FLOOR and layers.floor_of(t) > layers.floor_of(m):
                up.append(f"{m} -> {t}")
    pairs = sorted({tuple(sorted((m, t))) for m, imps in graph.items() for t, _, _ in imps
                    if t in graph and any(x == m for x, _, _ in graph[t]) and not t.startswith(m + ".")
                    and not m.startswith(t + ".")})
    for p in sorted(edges, key=lambda p: layers.FLOOR.get(p, 99)):
        print(f"{p:10} -> {', '.join(sorted(edges[p], key=lambda q: layers.FLOOR.get(q, 99)))}")
    print(f"imports reaching up a floor: {len(up)}")
    for u in up:
        print("  " + u)
    print(f"modules importing each other: {len(pairs)} {pairs}")
    print(f"imports inside functions: {inside}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src" / "oomkit")
