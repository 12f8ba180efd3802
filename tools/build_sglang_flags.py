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

    python tools/build_sglang_flags.py --merge SGLANG_DIR [SGLANG_DIR ...]

re-reads only the directories given and keeps every other release from the existing table (its spans and notes).
"deprecated" keeps, per flag, [the first release read that marks it deprecated, the help text of the newest]: a
Deprecated* action (DeprecatedAction, DeprecatedAliasStoreAction with its new_flag, ...) or help that says
"Deprecated" (0.5.19 server_args.py: --nsa-prefill-backend "[Deprecated] Use --dsa-prefill-backend instead.";
0.5.20 arg_groups/fields/mm.py: --keep-mm-feature-on-device "Deprecated. Use --mm-feature-transport=cuda_ipc ...").
engines/release_flags.py names that text when a later release no longer has the flag.
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
# help text that says the flag itself is on its way out
DEPRECATION = re.compile(r"\[DEPRECATED\]|\(DEPRECATED|^Deprecated|is deprecated|will be removed", re.IGNORECASE)
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


def _note(kw: dict[str, ast.AST]) -> str | None:
    """The deprecation text of one definition (its help, else "deprecated" for a Deprecated* action, else "use
    <new_flag>"), or None where it is not marked deprecated."""
    action = kw.get("action")
    help_text = _const(kw.get("help"))
    help_text = " ".join(help_text.split()) if isinstance(help_text, str) else ""
    new_flag = _const(kw.get("new_flag"))
    # the first sentence only: "... The fallback to that flag for external linkers is deprecated" (0.5.23
    # --unified-cache-external-linker-config) speaks of another flag
    if help_text and DEPRECATION.search(re.split(r"(?<=[.!?])\s", help_text)[0]):
        return help_text
    if action is not None and "Deprecated" in ast.unparse(action):
        return help_text or (f"deprecated: use {new_flag}" if isinstance(new_flag, str) else "deprecated")
    return None


def from_add_argument(path: Path, actions: dict[str, object] | None = None,
                      notes: dict[str, str] | None = None) -> dict[str, str]:
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
        note = _note(kw)
        for n in names:
            flags[n] = kind
            if note is not None and notes is not None:
                notes[n] = note
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


def from_fields(directory: Path, actions: dict[str, object] | None = None,
                notes: dict[str, str] | None = None) -> dict[str, str]:
    flags: dict[str, str] = {}
    for path in sorted(directory.glob("*.py")):
        flags.update(from_fields_file(path, actions, notes))
    return flags


def from_fields_file(path: Path, actions: dict[str, object] | None = None,
                     notes: dict[str, str] | None = None) -> dict[str, str]:
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
        else:  # A[type, "help"]: the string is the help
            kw = {"help": meta}
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
        note = _note(kw)
        for n in [cli, *aliases]:
            if isinstance(n, str):
                flags[n] = kind
                if note is not None and notes is not None:
                    notes[n] = note
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


def _release_name(d: str) -> str:
    """"/tmp/sglang-0.5.20" or "/tmp/sgw/0.5.20" -> "0.5.20"."""
    name = Path(d).name
    return name[len("sglang-"):] if name.startswith("sglang-") else name


def _from_table(old: dict) -> tuple[dict[str, set[str]], dict[str, dict[str, str]]]:
    """The releases an existing table holds: each release's flags and its deprecation notes (a flag's note from the
    first release marked on, the newest text)."""
    spans, deprecated = old.get("spans", {}), old.get("deprecated", {})
    per: dict[str, set[str]] = {}
    notes: dict[str, dict[str, str]] = {}
    for rel in old.get("releases", []):
        k = _version_key(rel)
        per[rel] = {f for f, s in spans.items() if any(_version_key(a) <= k <= _version_key(b) for a, b in s)}
        notes[rel] = {f: text for f, (first, text) in deprecated.items() if f in per[rel] and _version_key(first) <= k}
    return per, notes


def main(argv: list[str]) -> int:
    merge = "--merge" in argv
    argv = [a for a in argv if a != "--merge"]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    old = json.loads(OUT.read_text(encoding="utf-8")) if merge and OUT.exists() else {}
    flags: dict[str, str] = dict(old.get("flags", {}))
    per, notes = _from_table(old)
    for d in sorted(argv, key=lambda p: _version_key(_release_name(p))):
        srt = Path(d) / "sglang" / "srt"
        found: dict[str, str] = {}
        marked: dict[str, str] = {}
        actions = action_nargs(srt)
        if (srt / "server_args.py").exists():
            found.update(from_fields_file(srt / "server_args.py", actions, marked))
            found.update(from_add_argument(srt / "server_args.py", actions, marked))
        if (srt / "arg_groups" / "fields").is_dir():
            found.update(from_fields(srt / "arg_groups" / "fields", actions, marked))
        if not found:
            print(f"no SGLang argument definitions under {srt}", file=sys.stderr)
            return 1
        for k, v in found.items():  # newer directories come later and win
            flags[k] = v
        per[_release_name(d)] = set(found)
        notes[_release_name(d)] = marked
    read = sorted(per, key=_version_key)
    deprecated: dict[str, list[str]] = {}
    for f in sorted(flags):
        marked_in = [rel for rel in read if f in notes.get(rel, {})]
        if marked_in:
            deprecated[f] = [marked_in[0], notes[marked_in[-1]][f]]
    data = {
        "source": "sgl-project/sglang wheels " + ", ".join(read) + ": sglang/srt/server_args.py add_argument calls "
                  "and sglang/srt/arg_groups/fields/*.py annotated fields (tools/build_sglang_flags.py); "
                  "kind: value | flag | optional | multi; spans: the releases read whose parser has the flag, "
                  "as [first, last] runs; deprecated: [the first release read that marks it deprecated, the help "
                  "text of the newest]",
        "releases": read,
        "flags": dict(sorted(flags.items())),
        "spans": {f: _spans(f, read, per) for f in sorted(flags)},
        "deprecated": deprecated,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(flags)} flags from {', '.join(read)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
