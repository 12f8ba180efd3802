"""The shape of the code holds: data flows one way, floor by floor (DESIGN.md "The shape of the code").

Read from the source with `ast` (nothing is imported): every `import` of an oomkit module, at the top of a file or
inside a function, except those under `if TYPE_CHECKING:` (annotations only, never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "oomkit"

# Floors, bottom first. A module may import its own floor's modules (without a cycle) and those below.
FLOORS = (
    {"errors", "units", "flags", "memo"},
    {"memory", "quant", "accuracy"},
    {"model"},
    {"hardware"},
    {"engines"},
    {"request"},
    {"limits"},
    {"estimate"},
    {"check", "watch"},
    {"plan"},
    {"diagnose"},
    {"report"},
    {"commands", "cli", "__main__", "__init__", "web"},
)
FLOOR = {name: i for i, names in enumerate(FLOORS) for name in names}
# Parts that must not know each other although one sits below the other: an engine gets the GPU facts it needs on
# the Device (compute capability, NVLink) and never reads the GPU catalog or the detection itself.
APART = {("engines", "hardware")}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return (SRC.parent / name.replace(".", "/") / "__init__.py").exists()


def _exists(name: str) -> bool:
    base = SRC.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def imports_of(path: Path) -> list[tuple[str, int, bool]]:
    """(imported oomkit module, line, inside a function) for each import in `path`."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    in_function = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for n in ast.walk(f) if n is not f}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from pkg import sub` imports the submodule pkg.sub
            subs = [f"{mod}.{a.name}" for a in node.names if _is_package(mod) and _exists(f"{mod}.{a.name}")]
            targets = subs or [mod]
        for t in targets:
            if t == "oomkit" or t.startswith("oomkit."):
                found.append((t, node.lineno, id(node) in in_function))
    return found


def floor_of(module: str) -> int:
    parts = module.split(".")
    return FLOOR["__init__"] if len(parts) == 1 else FLOOR[parts[1]]


SOURCES = sorted(SRC.rglob("*.py"))
GRAPH = {module_name(p): imports_of(p) for p in SOURCES}


def test_every_module_has_a_floor():
    unknown = {m.split(".")[1] for m in GRAPH if "." in m} - set(FLOOR)
    assert not unknown, f"modules outside every floor: {unknown}; add them to FLOORS"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_import_reaches_up_a_floor(module):
    mine = floor_of(module)
    part = module.split(".")[1] if "." in module else "__init__"
    up = [f"{t} (line {line})" for t, line, _ in GRAPH[module]
          if floor_of(t) > mine or (part, t.split(".")[1] if "." in t else "__init__") in APART]
    assert not up, f"{module} (floor {mine}) imports from a floor above: {', '.join(up)}"


def test_no_two_modules_import_each_other():
    """No cycle in the module graph (a package's __init__ importing its own submodules is its job, not a cycle)."""
    edges = {m: {t for t, _, _ in imps if t in GRAPH and not (m != "oomkit" and t.startswith(m + "."))}
             for m, imps in GRAPH.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t] if t in stack else [m, t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_imports_inside_functions_say_why():
    """Imports go at the top of the file; one inside a function keeps an optional or slow dependency lazy and
    says so in a comment (on its line, or on the run of imports it belongs to)."""
    silent = []
    for path in SOURCES:
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for f in ast.walk(tree):
            if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(f):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and not _says_why(lines, node.lineno - 1):
                    silent.append(f"{path.relative_to(SRC)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert not silent, "imports inside functions without a reason:\n" + "\n".join(sorted(set(silent)))


def _says_why(lines: list[str], i: int) -> bool:
    """A comment on the import's line, on a line of the run of imports it belongs to, or just above that run."""
    while i >= 0:
        text = lines[i].strip()
        if "#" in text:
            return True
        if not text.startswith(("import ", "from ")):
            return False
        i -= 1
    return False


def test_the_checker_sees_a_reaching_import(tmp_path):
    # the checker itself: a relative import two floors up is resolved and placed on its floor
    assert floor_of("oomkit.engines.vllm") > floor_of("oomkit.model.spec")
    assert floor_of("oomkit.limits") > floor_of("oomkit.engines.base")
    assert ("oomkit.memory", 1, False) in [(t, 1, f) for t, _, f in GRAPH["oomkit.engines.base"]]
