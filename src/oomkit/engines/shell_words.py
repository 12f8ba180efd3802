"""A command line pasted as text -> its arguments, the way the shell it was typed in splits it (bash, PowerShell,
cmd.exe), without what the shell keeps for itself (pipes, redirections, a prompt's `$`)."""

from __future__ import annotations

import re
import shlex

_UNICODE_SPACES = str.maketrans({c: " " for c in "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                                 "\u2009\u200a\u202f\u205f\u3000"})


# A command pasted from PowerShell or cmd.exe: a line continued with a backtick (PowerShell) or a caret (cmd), the
# call operator `& "C:\...\llama-server.exe"`, a `PS C:\...>` prompt, or an unquoted Windows path (.\x, C:\x),
# which bash would have stripped of its backslashes (no bash user types one)
_WINDOWS_CONTINUATION = re.compile(r"[`^][ \t]*\n")
_WINDOWS_PATH = re.compile(r"(?:^|\s)(?:\.{1,2}\\|[A-Za-z]:\\)\S")


def _windows_text(text: str) -> bool:
    head = text.lstrip()
    return bool(_WINDOWS_CONTINUATION.search(text) or _WINDOWS_PATH.search(text)
                or head.startswith("& ") or re.match(r"PS [A-Za-z]:\\[^\n>]*>", head))


def _split_windows(text: str) -> list[str]:
    """PowerShell / cmd.exe as they hand a native program its arguments: backslashes are literal (paths), quotes
    group, a backtick or caret at a line's end continues it; the call operator and a prompt are not arguments."""
    text = _WINDOWS_CONTINUATION.sub(" ", text)
    text = re.sub(r"^\s*PS [A-Za-z]:\\[^\n>]*>", "", text)
    lex = shlex.shlex(text, posix=True)
    lex.whitespace_split, lex.escape, lex.commenters = True, "", ""
    words = list(lex)
    return _as_run(words[1:] if words[:1] == ["&"] else words)


def split_command(text: str) -> list[str]:
    """A command line pasted as text -> its arguments, as bash hands them over: quotes group, and a backslash at
    the end of a line continues it (the multi-line commands of READMEs and issues; shlex alone would keep the
    newline as an argument). CRLF line ends read as LF. Unbalanced quotes: ValueError, as shlex raises it. A
    command pasted from PowerShell or cmd.exe (_windows_text) is split as those shells split it."""
    text = text.replace("\r\n", "\n").translate(_UNICODE_SPACES)  # copied from a web page: no-break spaces
    if _windows_text(text):
        return _split_windows(text)
    out: list[str] = []
    i, quote = 0, ""
    while i < len(text):  # bash: a backslash-newline is removed outside single quotes (inside them it is literal)
        c = text[i]
        if c == "\\" and quote != "'" and text.startswith("\n", i + 1):
            i += 2
            continue
        if c == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote == c else c
        out.append(c)
        i += 1
    return _as_run(shlex.split("".join(out)))


# what the shell keeps from the command it runs: a pipe and what follows it (`| tee log`), a redirection (`2>&1`,
# `> log.txt`, `>>log`), a trailing `&` or `;`, and the `$` of a prompt copied with the command
_PIPE = frozenset({"|", "|&"})
_REDIRECT = re.compile(r"^(?:\d|&)?(?:>>?|<)$")  # its target is the next word
_REDIRECT_TO = re.compile(r"^(?:\d|&)?(?:>>?|<)(?:&\d|\S+)$")  # its target attached: 2>&1, >log.txt


def _as_run(words: list[str]) -> list[str]:
    if words[:1] in (["$"], [">"], ["%"]):
        words = words[1:]
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in _PIPE:
            break
        if _REDIRECT.match(w):
            skip = True
            continue
        if _REDIRECT_TO.match(w):
            continue
        out.append(w)
    while out and out[-1] in ("&", ";"):
        out.pop()
    return out
