#!/usr/bin/env python3
"""Regenerate src/oomkit/engines/data/vllm_flags.json: every `vllm serve` flag, its kind, and the releases whose
parser has it, read from vLLM's own argument definitions (no import, no torch: the Python AST only).

    python tools/build_vllm_flags.py [--merge] VLLM_DIR [VLLM_DIR ...]

Each VLLM_DIR is an unpacked vllm wheel named after its release (the directory holding `vllm/`), e.g. from
`pip download --no-deps vllm==0.11.0` and unzip (or a release's sdist, unpacked). With --merge the releases
already in the table are kept, read back from its spans, and the directories given are added to them. A release's flags are those its `vllm serve` parser registers:
  vllm/engine/arg_utils.py       EngineArgs.add_cli_args / AsyncEngineArgs.add_cli_args: add_argument("--x", ...)
  vllm/entrypoints/{openai,launchers,common}/cli_args.py   make_arg_parser: add_argument calls,
                                 and FrontendArgs' dataclass fields where the parser is built from them
                                 (get_kwargs(cls): one --field-name per field, plus its "flags" aliases)
  vllm/entrypoints/cli/serve.py, vllm/scripts.py   the serve subcommand's own (--config, --headless, ...)
A flag's kind: "bool" (store_true or BooleanOptionalAction; the latter also gives --no-X), "value", "list" (nargs
+ or *), "optional" (nargs ?). Config-derived options (`**model_kwargs["x"]`) take the kind of their config field
(bool -> BooleanOptionalAction, list -> nargs +), else the kind already in the table.
Per flag the releases that have it are stored as spans [first, last] over the releases read ("releases"), and the
deprecation text the parser prints (deprecated=True, a Deprecated* action, or help that says "deprecated").
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "oomkit" / "engines" / "data" / "vllm_flags.json"

PARSER_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py",
                "vllm/entrypoints/launchers/cli_args.py", "vllm/entrypoints/common/cli_args.py",
                "vllm/entrypoints/cli/serve.py", "vllm/scripts.py")
# help text that says the flag itself is on its way out (not "Enable deprecated Prometheus metrics")
DEPRECATION = re.compile(r"\[DEPRECATED\]|\(DEPRECATED|^Deprecated|is deprecated|will be removed")
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}
# hand-added: the spelling vLLM's own hint prints, an abbreviation of the flag it names (argparse allow_abbrev):
# present where that flag is
EXTRA = {"--kv-cache-memory": ("value", "--kv-cache-memory-bytes")}


def _const(node):
    return node.value if isinstance(node, ast.Constant) else None


def _text(node) -> str:
    """A help string: constants, implicit concatenations, f-strings (their fields as {...})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left) + _text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _text(node.func.value)
    return ""


def _version_key(name: str) -> tuple:
    return tuple(int(x) if x.isdigit() else -1 for x in re.findall(r"\d+|post", name.replace(".post", ".")))


def _kind(kw: dict[str, ast.AST]) -> str | None:
    action = kw.get("action")
    nargs = _const(kw.get("nargs")) if "nargs" in kw else None
    if action is not None:
        name = _const(action) or ast.unparse(action)
        if name in NO_VALUE_ACTIONS or "BooleanOptional" in name or "StoreTrue" in name:
            return "bool"
        if "StoreBoolean" in name and nargs == "?":
            return "optional"
    if nargs in ("*", "+"):
        return "list"
    if nargs == "?":
        return "optional"
    if "type" in kw or "choices" in kw or "default" in kw or "action" in kw or "metavar" in kw:
        return "value"
    return None


def _config_fields(vdir: Path) -> dict[str, dict[str, str]]:
    """class name -> {field: annotation} for the config dataclasses (vllm/config.py or vllm/config/*.py) and the
    engine-args dataclasses."""
    out: dict[str, dict[str, str]] = {}
    paths = [vdir / "vllm" / "config.py", *sorted((vdir / "vllm" / "config").glob("*.py")), *PARSER_PATHS(vdir)]
    for path in paths:
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                f = out.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        f.setdefault(item.target.id, ast.unparse(item.annotation))
    return out


def PARSER_PATHS(vdir: Path) -> list[Path]:  # noqa: N802
    paths = [vdir / p for p in PARSER_FILES if (vdir / p).exists()]
    # before 0.4.1 the OpenAI server's own flags were added in vllm/entrypoints/openai/api_server.py parse_args
    if not (vdir / "vllm/entrypoints/openai/cli_args.py").exists():
        paths.append(vdir / "vllm/entrypoints/openai/api_server.py")
    return [p for p in paths if p.exists()]


def _field_kind(ann: str) -> str:
    a = ann.replace(" ", "").replace("Optional[", "").replace("|None", "").replace("None|", "")
    if a.startswith("bool"):
        return "bool"
    if "list[" in a or "List[" in a:  # get_kwargs: a list type, or a union with one (`str | list[str]`), nargs "+"
        return "list"
    return "value"


def _loop_names(tree: ast.AST) -> dict[int, list[str]]:
    """add_argument calls inside `for NAME[, ...] in [literal list]` whose first argument is NAME -> the flag names
    the loop gives it (vllm 0.11 arg_utils.py: the deprecated --guided-decoding-* options)."""
    out: dict[int, list[str]] = {}
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, (ast.List, ast.Tuple))):
            continue
        target = loop.target.elts[0] if isinstance(loop.target, ast.Tuple) else loop.target
        if not isinstance(target, ast.Name):
            continue
        names = []
        for e in loop.iter.elts:
            first = e.elts[0] if isinstance(e, ast.Tuple) and e.elts else e
            if isinstance(_const(first), str) and _const(first).startswith("-"):
                names.append(_const(first))
        for node in ast.walk(loop):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == target.id and names):
                out[id(node)] = names
    return out


def read_release(vdir: Path) -> tuple[dict[str, str | None], dict[str, str]]:
    """-> ({flag: kind or None (unknown: config-derived)}, {flag: deprecation text})."""
    flags: dict[str, str | None] = {}
    notes: dict[str, str] = {}
    classes = _config_fields(vdir)
    for path in PARSER_PATHS(vdir):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        kwargs_of: dict[str, str] = {}  # model_kwargs -> ModelConfig
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    ast.unparse(node.value.func).endswith("get_kwargs") and node.value.args:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        kwargs_of[t.id] = ast.unparse(node.value.args[0])
        loop_names = _loop_names(tree)
        frontend = False
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            receiver = ast.unparse(node.func.value)
            if path.name == "scripts.py" and "serve" not in receiver:
                continue  # vllm/scripts.py also builds `vllm chat`, `vllm complete` and the top-level parser
            names = [_const(a) for a in node.args if isinstance(_const(a), str) and _const(a).startswith("-")]
            looped = node.args and isinstance(node.args[0], ast.Name) and id(node) in loop_names
            if looped:  # for arg, type in [("--guided-decoding-backend", str), ...]: add_argument(arg, ...)
                names = loop_names[id(node)]
            if any(isinstance(a, ast.JoinedStr) for a in node.args):
                frontend = True  # add_argument(*extra_flags, f"--{key...}", **value): FrontendArgs' fields
            if not names:
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            kind = _kind(kw)
            starred = [k.value for k in node.keywords if k.arg is None]
            if kind is None and starred:
                s = starred[0]  # **model_kwargs["max_model_len"]
                if isinstance(s, ast.Subscript) and isinstance(s.value, ast.Name) and s.value.id in kwargs_of:
                    cls = kwargs_of[s.value.id]
                    field = _const(s.slice)
                    ann = classes.get(cls, {}).get(field) if isinstance(field, str) else None
                    kind = _field_kind(ann) if ann else None
            action = ast.unparse(kw["action"]) if "action" in kw else ""
            help_text = _text(kw.get("help")) if "help" in kw else ""
            deprecated = (_const(kw.get("deprecated")) is True or "Deprecated" in action
                          or DEPRECATION.search(help_text) is not None)
            for n in names:
                flags[n] = kind
                if deprecated:
                    text = help_text.replace("{arg}", n) if looped else help_text
                    notes[n] = " ".join(text.split()) or "deprecated"
        if frontend:
            for cname in ("BaseFrontendArgs", "FrontendArgs"):
                for field, ann in classes.get(cname, {}).items():
                    flags.setdefault("--" + field.replace("_", "-"), _field_kind(ann))
            for node in ast.walk(tree):  # frontend_kwargs["x"]["flags"] = ["-x"]
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                    for t in node.targets:
                        if isinstance(t, ast.Subscript) and _const(t.slice) == "flags":
                            for e in node.value.elts:
                                if isinstance(_const(e), str):
                                    flags.setdefault(_const(e), None)
    return flags, notes


def _from_table(old: dict) -> tuple[dict[str, dict[str, str | None]], dict[str, dict[str, str]]]:
    """The releases an existing table holds, as read_release gives them: each release's flags (kinds come from the
    table) and deprecation notes (from the first release marked on, the newest text)."""
    spans, deprecated = old.get("spans", {}), old.get("deprecated", {})
    per: dict[str, dict[str, str | None]] = {}
    notes: dict[str, dict[str, str]] = {}
    for rel in old.get("releases", []):
        k = _version_key(rel)
        per[rel] = {f: None for f, s in spans.items() if any(_version_key(a) <= k <= _version_key(b) for a, b in s)}
        notes[rel] = {f: text for f, (first, text) in deprecated.items()
                      if f in per[rel] and _version_key(first) <= k}
    return per, notes


def main(argv: list[str]) -> int:
    merge = "--merge" in argv
    argv = [a for a in argv if a != "--merge"]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    dirs = sorted((Path(d) for d in argv), key=lambda p: _version_key(p.name))
    old = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    old_kinds: dict[str, str] = old.get("flags", {})
    per, notes = _from_table(old) if merge else ({}, {})
    for d in dirs:
        if not (d / "vllm" / "engine" / "arg_utils.py").exists():
            print(f"no vllm/engine/arg_utils.py under {d}", file=sys.stderr)
            return 1
        per[d.name], notes[d.name] = read_release(d)
    releases = sorted(per, key=_version_key)
    kinds: dict[str, str] = {}
    for rel in releases:  # the newest release's kind wins
        for f, k in per[rel].items():
            if k is not None:
                kinds[f] = k
    for f in {f for rel in releases for f in per[rel]}:
        kinds.setdefault(f, "value")
    for f, (k, _) in EXTRA.items():
        kinds.setdefault(f, k)
    # a kind already in the table stays: the AST cannot see what get_kwargs makes of a union type
    # (`str | list[str]` takes nargs "+", --served-model-name) and the table's kinds were checked by the tests
    for f, k in old_kinds.items():
        if f in kinds:
            kinds[f] = k
    spans: dict[str, list[list[str]]] = {}
    for f in kinds:
        cur: list[str] | None = None
        out: list[list[str]] = []
        for rel in releases:
            if f in per[rel] or (f in EXTRA and EXTRA[f][1] in per[rel]):
                if cur is None:
                    cur = [rel, rel]
                    out.append(cur)
                else:
                    cur[1] = rel
            else:
                cur = None
        spans[f] = out
    deprecated: dict[str, list] = {}
    for f in kinds:
        marked = [rel for rel in releases if f in notes[rel]]
        if marked:
            deprecated[f] = [marked[0], notes[marked[-1]][f]]
    data = {
        "about": "vLLM `vllm serve` flags read with Python's ast from the add_argument calls of "
                 "vllm/engine/arg_utils.py (EngineArgs/AsyncEngineArgs.add_cli_args), the entrypoints' "
                 "cli_args.py make_arg_parser (and FrontendArgs' fields) and the serve subcommand, of the PyPI "
                 "wheels of the releases listed (tools/build_vllm_flags.py). kind: bool = a switch (store_true or "
                 "BooleanOptionalAction, so --no-X also exists), value = takes one argument, list = takes one or "
                 "more, optional = takes zero or one. spans: the releases read whose parser has the flag, as "
                 "[first, last] runs. deprecated: [the first release read that marks it deprecated, the help text of the newest]. "
                 "--kv-cache-memory (alias printed in vLLM's own hint) added by hand.",
        "releases": releases,
        "flags": dict(sorted(kinds.items())),
        "spans": dict(sorted(spans.items())),
        "deprecated": dict(sorted(deprecated.items())),
    }
    OUT.write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(kinds)} flags from {len(releases)} releases ({releases[0]} .. {releases[-1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
