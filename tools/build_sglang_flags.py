#!/usr/bin/env python3
"""Regenerate src/oomkit/engines/data/sglang_flags.json: every `python -m sglang.launch_server` flag and whether
it takes a value, read from SGLang's own argument definitions (no import, no torch: the Python AST only).

    python tools/build_sglang_flags.py SGLANG_DIR [SGLANG_DIR ...]

Each SGLANG_DIR is an unpacked sglang wheel (the directory holding `sglang/srt/`), e.g. from
`pip download --no-deps sglang==0.5.23` and `unzip`. Older releases declare their flags with
`parser.add_argument(...)` in sglang/srt/server_args.py; newer ones (0.5.19+) declare them as annotated fields
(`A[type, Arg(...)]`) in sglang/srt/arg_groups/fields/*.py, turned into argparse options by
arg_groups/arg_utils.py::add_cli_args_from_dataclass (bool -> store_true, list -> nargs "+", else one value).
The table is the union over the versions given, so flags that were renamed or dropped still parse; "spans" keeps,
per flag, the runs [first, last] of the releases read ("releases", oldest first) whose parser has it, so that a
command is held against the release it names (engines/release_flags.py). Name each directory after its release
(e.g. 0.5.2/ or sglang-0.5.2/): the name orders the releases.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "oomkit" / "engines" / "data" / "sglang_flags.json"

# kind: "value" (one value), "flag" (no value), "optional" (nargs "?"), "multi" (nargs "*"/"+")
VALUE_OVERRIDES = {"--cuda-graph-max-bs": "value"}
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}


def _const(node):
    return node.value if isinstance(node, ast.Constant) else None


def _kind_from_call(keywords: dict[str, ast.AST]) -> str:
    action = keywords.get("action")
    nargs = _const(keywords.get("nargs")) if "nargs" in keywords else None
    if action is not None:
        name = _const(action)
        if name is None:  # a class: argparse.BooleanOptionalAction, DeprecatedAction, ...
            name = ast.unparse(action)
        if name in NO_VALUE_ACTIONS or any(w in name for w in ("BooleanOptional", "StoreTrue", "StoreFalse")):
            return "flag"
        if nargs == 0 or ("Deprecated" in name and "nargs" not in keywords):
            return "flag"  # argparse_actions.py: the Deprecated* actions take no argument (nargs=0)
    if nargs in ("*", "+") or isinstance(nargs, int) and nargs > 1:
        return "multi"
    if nargs == "?":
        return "optional"
    return "value"


def from_add_argument(path: Path) -> dict[str, str]:
    flags: dict[str, str] = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [_const(a) for a in node.args if isinstance(_const(a), str) and _const(a).startswith("-")]
        if not names:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        kind = _kind_from_call(kw)
        for n in names:
            flags[n] = kind
            action = kw.get("action")
            if action is not None and "BooleanOptional" in ast.unparse(action) and n.startswith("--"):
                flags["--no-" + n[2:]] = "flag"
    return flags


def _type_kind(ann: ast.AST) -> str:
    """bool -> flag, list -> multi, anything else -> value (arg_utils.add_cli_args_from_dataclass)."""
    text = ast.unparse(ann).replace(" ", "")
    inner = text
    for wrap in ("Optional[", "typing.Optional["):
        if inner.startswith(wrap) and inner.endswith("]"):
            inner = inner[len(wrap):-1]
    if inner == "bool":
        return "flag"
    if inner.startswith(("List[", "list[", "typing.List[")):
        return "multi"
    return "value"


def from_fields(directory: Path) -> dict[str, str]:
    flags: dict[str, str] = {}
    for path in sorted(directory.glob("*.py")):
        flags.update(from_fields_file(path))
    return flags


def from_fields_file(path: Path) -> dict[str, str]:
    """The annotated fields of one file: arg_groups/fields/*.py (0.5.19+), or ServerArgs' own in server_args.py
    (0.5.14 to 0.5.18, where add_cli_args calls add_cli_args_from_dataclass(parser, ServerArgs) first)."""
    flags: dict[str, str] = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        ann = node.annotation
        if not (isinstance(ann, ast.Subscript) and ast.unparse(ann.value) == "A"):
            continue
        elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if len(elts) < 2:
            continue
        typ, meta = elts[0], elts[1]
        kw: dict[str, ast.AST] = {}
        if isinstance(meta, ast.Call):
            kw = {k.arg: k.value for k in meta.keywords if k.arg}
        elif not isinstance(_const(meta), str):
            continue
        if _const(kw.get("no_cli")) is True:
            continue
        cli = _const(kw.get("cli_name")) or "--" + node.target.id.replace("_", "-")
        aliases = [_const(e) for e in kw["aliases"].elts] if isinstance(kw.get("aliases"), ast.List) else []
        if "action" in kw or "nargs" in kw:
            kind = _kind_from_call(kw)
            if "action" in kw and "action_kwargs" in kw:
                ak = kw["action_kwargs"]
                if isinstance(ak, ast.Dict):
                    d = {_const(k): v for k, v in zip(ak.keys, ak.values, strict=True)}
                    if "nargs" in d:
                        kind = _kind_from_call({"nargs": d["nargs"]})
        else:
            kind = _type_kind(typ)
            if kind == "multi" and "type_parser" in kw:
                kind = "value"
        for n in [cli, *aliases]:
            if isinstance(n, str):
                flags[n] = kind
    return flags


def _version_key(name: str) -> tuple[int, ...]:
    """"sglang-0.4.6.post5" or "0.4.6.post5" -> (0, 4, 6, 5); a release candidate ("0.5.0rc2") before its release."""
    m = re.search(r"(\d+)\.(\d+)\.(\d+)(?:\.?post(\d+)|rc(\d+))?", name)
    if m is None:
        return (0,)
    major, minor, patch, post, rc = m.groups()
    return (int(major), int(minor), int(patch), int(post) if post else (-100 + int(rc) if rc else 0))


def _spans(flag: str, read: list[str], per: dict[str, set[str]]) -> list[list[str]]:
    """The runs of consecutive releases read whose parser has `flag`, as [first, last]."""
    out: list[list[str]] = []
    cur: list[str] | None = None
    for rel in read:
        if flag in per[rel]:
            if cur is None:
                cur = [rel, rel]
                out.append(cur)
            else:
                cur[1] = rel
        else:
            cur = None
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    flags: dict[str, str] = {}
    read: list[str] = []
    per: dict[str, set[str]] = {}
    for d in sorted(argv, key=lambda p: _version_key(Path(p).name)):
        srt = Path(d) / "sglang" / "srt"
        found = {}
        if (srt / "server_args.py").exists():
            found.update(from_fields_file(srt / "server_args.py"))
            found.update(from_add_argument(srt / "server_args.py"))
        if (srt / "arg_groups" / "fields").is_dir():
            found.update(from_fields(srt / "arg_groups" / "fields"))
        if not found:
            print(f"no SGLang argument definitions under {srt}", file=sys.stderr)
            return 1
        for k, v in found.items():  # newer directories come later and win
            flags[k] = v
        read.append(Path(d).name)
        per[Path(d).name] = set(found)
    # a deprecated alias kept as a Deprecated* action still takes its value (SGLang's own tests pass
    # "--cuda-graph-max-bs 8"); the action-name rule above reads it as a switch
    flags.update(VALUE_OVERRIDES)
    data = {
        "source": "sgl-project/sglang wheels " + ", ".join(read) + ": sglang/srt/server_args.py add_argument calls "
                  "and sglang/srt/arg_groups/fields/*.py annotated fields (tools/build_sglang_flags.py); "
                  "kind: value | flag | optional | multi; spans: the releases read whose parser has the flag, "
                  "as [first, last] runs",
        "releases": read,
        "flags": dict(sorted(flags.items())),
        "spans": {f: _spans(f, read, per) for f in sorted(flags)},
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(flags)} flags from {', '.join(read)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
