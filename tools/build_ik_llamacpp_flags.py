"""ik_llama.cpp's llama-server flags -> src/oomkit/engines/data/ik_llamacpp_flags.json.

Reads common/common.cpp of ikawrakow/ik_llama.cpp: every `arg == "..."` test of gpt_params_find_arg, and whether its
branch reads a value (CHECK_ARG, argv[i], argv[++i]). Flags an older ik_llama.cpp had and the newest lacks (-fmoe:
PR #229 b50efcc9d to PR #863 41d6c42b9, which made fused MoE the default) are given with --extra.

    python tools/build_ik_llamacpp_flags.py COMMON_CPP COMMIT [--extra FLAG=0|1 ...]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "oomkit" / "engines" / "data" / "ik_llamacpp_flags.json"


def read_flags(text: str) -> dict[str, bool]:
    start = text.index("bool gpt_params_find_arg(")
    body = text[start:text.index("\n}\n", start)]
    flags: dict[str, bool] = {}
    for block in re.split(r"\n\s*(?:else\s+)?if \((?=arg ==)", body)[1:]:
        names = re.findall(r'arg == "([^"]+)"', block[:block.index("{")])
        takes = bool(re.search(r"CHECK_ARG|argv\[\+\+i\]|argv\[i\]", block.split("return true")[0]))
        for name in names:
            flags[name] = takes
    return flags


def main(argv: list[str]) -> None:
    path, commit, *rest = argv
    flags = read_flags(Path(path).read_text(encoding="utf-8"))
    for extra in (rest[i + 1] for i, a in enumerate(rest) if a == "--extra"):
        name, _, takes = extra.partition("=")
        flags.setdefault(name, takes == "1")
    data = {"source": f"ikawrakow/ik_llama.cpp@{commit} common/common.cpp gpt_params_find_arg",
            "flags": dict(sorted(flags.items()))}
    OUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{len(flags)} flags -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
