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
NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}
_UNSET = object()  # an action class that leaves nargs to argparse (one value unless the call gives nargs)


def _const(node):
    return node.value if isinstance(node, ast.Constant) else None


def action_nargs(srt: Path) -> dict[str, object]:
    """The release's own argparse.Action subclasses -> the nargs each takes when the add_argument call gives none,
    read from its __init__: a `nargs=0` default or a constant nargs passed to super().__init__ (DeprecatedAction,
    DeprecatedStoreTrueAction, DeprecatedStoreConstAction: switches), else _UNSET (DeprecatedAliasStoreAction,
    0.5.10+, passes **kwargs on: "Deprecated alias that stores its value", one value as argparse's default).
    Classes are found in any module under sglang/srt that subclasses argparse.Action (server_args.py up to
    0.5.13, arg_groups/argparse_actions.py from 0.5.14); a subclass of one of them inherits its nargs."""
    classes: dict[str, tuple[list[str], object]] = {}
    for path in sorted(srt.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "Action" not in text or "argparse" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b) for b in node.bases]
            nargs: object = _UNSET
            init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is not None:
                a = init.args
                named = list(zip(a.args[len(a.args) - len(a.defaults):], a.defaults, strict=True))
                named += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
                nargs = next((_const(d) for k, d in named if k.arg == "nargs"), _UNSET)
                if nargs is _UNSET and all(k.arg != "nargs" for k in [*a.args, *a.kwonlyargs]):
                    for call in ast.walk(init):  # super().__init__(..., nargs=0, ...)
                        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                                and call.func.attr == "__init__"):
                            kw = {k.arg: k.value for k in call.keywords if k.arg}
                            if isinstance(_const(kw.get("nargs")), int):
                                nargs = _const(kw["nargs"])
            classes[node.name] = (bases, nargs)
    out: dict[str, object] = {}

    def resolve(name: str, seen: frozenset[str] = frozenset()) -> object | None:
        if name in out:
            return out[name]
        if name not in classes or name in seen:
            return None  # not an action class of this release
        bases, nargs = classes[name]
        if nargs is _UNSET:
            for b in bases:
                if b in ("argparse.Action", "Action"):
                    break
                inherited = resolve(b.rpartition(".")[2], seen | {name})
                if inherited is not None:
                    nargs = inherited
                    break
            else:
                return None
        out[name] = nargs
        return nargs

    for name in classes:
        resolve(name)
    return out


def _kind_from_call(keywords: dict[str, ast.AST], actions: dict[str, object] | None = None) -> str:
    action = keywords.get("action")
    nargs = _const(keywords.get("nargs")) if "nargs" in keywords else None
    if action is not None:
        name = _const(action)
        if name is None:  # a class: argparse.BooleanOptionalAction, DeprecatedAction, ...
            name = ast.unparse(action)
        if name in NO_VALUE_ACTIONS or "BooleanOptional" in name:
            return "flag"
        own = (actions or {}).get(name.rpartition(".")[2], None)
        if "nargs" not in keywords and own is not None:  # the release's own action class: its nargs default
            if own is _UNSET:
                return "value"
            nargs = own
        elif "nargs" not in keywords and any(w in name for w in ("StoreTrue", "StoreFalse")):
            return "flag"
        elif "nargs" not in keywords and "Deprecated" in name:
            return "flag"  # a Deprecated* class not found in the release's sources: DeprecatedAction's nargs=0
        if nargs == 0:
            return "flag"
    if nargs in ("*", "+") or isinstance(nargs, int) and nargs > 1:
        return "multi"
    if nargs == "?":
        return "optional"
    return "value"


def from_add_argument(path: Path, actions: dict[str, object] | None = None) -> dict[str, str]:
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
        kind = _kind_from_call(kw, actions)
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


def from_fields(directory: Path, actions: dict[str, object] | None = None) -> dict[str, str]:
    flags: dict[str, str] = {}
    for path in sorted(directory.glob("*.py")):
        flags.update(from_fields_file(path, actions))
    return flags


def from_fields_file(path: Path, actions: dict[str, object] | None = None) -> dict[str, str]:
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
            kind = _kind_from_call(kw, actions)
            if "action" in kw and "action_kwargs" in kw:
                ak = kw["action_kwargs"]
                if isinstance(ak, ast.Dict):
                    d = {_const(k): v for k, v in zip(ak.keys, ak.values, strict=True)}
                    if "nargs" in d:
                        kind = _kind_from_call({"nargs": d["nargs"]}, actions)
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
        actions = action_nargs(srt)
        if (srt / "server_args.py").exists():
            found.update(from_fields_file(srt / "server_args.py", actions))
            found.update(from_add_argument(srt / "server_args.py", actions))
        if (srt / "arg_groups" / "fields").is_dir():
            found.update(from_fields(srt / "arg_groups" / "fields", actions))
        if not found:
            print(f"no SGLang argument definitions under {srt}", file=sys.stderr)
            return 1
        for k, v in found.items():  # newer directories come later and win
            flags[k] = v
        read.append(Path(d).name)
        per[Path(d).name] = set(found)
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
