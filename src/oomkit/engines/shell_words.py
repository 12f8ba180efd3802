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
                or head.startswith("& ") or re.match(r"PS [A-Za-z]:\\[^\n>]*>", head)
                # a batch file's `set NAME=...` read back as `%NAME%` (bash's `set` takes no NAME=value)
                or (re.search(r"^\s*@?set\s+\"?[A-Za-z_]\w*=", text, re.MULTILINE | re.IGNORECASE)
                    and re.search(r"%[A-Za-z_]\w*%", text)))


# A batch file's lines before its command (cmd.exe `help echo`, `help rem`, `help set`): `@echo off`, a `rem` or
# `::` comment, `setlocal`, `chcp`, `title`, `cd` change no argument; `set NAME=value` (`set "NAME=value"`) puts
# NAME in the environment of the commands after it, as PowerShell's `$env:NAME = "value"` does
_BATCH_QUIET = re.compile(r"\s*@?(?:echo(?:[\s.].*)?|rem(?:\s.*)?|::.*|setlocal\b.*|endlocal|chcp\s.*|title\s.*|cls"
                          r"|cd(?:\s+/d)?\s.*|pushd\s.*)\s*", re.IGNORECASE)
_BATCH_SET = re.compile(r'\s*@?set\s+"?([A-Za-z_]\w*)=([^"\n]*?)"?\s*', re.IGNORECASE)
# `set NAME="value"` keeps the quotes in the value, `set "NAME=value"` does not (`help set`); `%NAME%` in a later
# line is replaced by the value before the line is parsed (`help call`, "%VAR%" expansion), quotes and all, so
# `set LMS="C:\...\lms.exe"` then `%LMS% load ...` runs lms.exe (Turbo31150/turbo scripts/startup_m1.bat)
_BATCH_SET_RAW = re.compile(r'\s*@?set\s+(?:"([A-Za-z_]\w*)=(.*)"|([A-Za-z_]\w*)=(.*?))\s*', re.IGNORECASE)
# a batch file's lines after its command that run nothing oomkit reads: `pause`, `timeout /t N`, `exit`
_BATCH_AFTER = re.compile(r"\s*@?(?:pause|exit(?:\s.*)?|timeout\s.*|goto\s.*|:\w.*)\s*", re.IGNORECASE)
# cmd.exe's prompt copied with the command (`C:\Users\sovf>llama-server.exe -m ...`, ggml-org/llama.cpp#27374):
# the current folder and `>` glued to the program; a `>` after a flag is a redirection, not a prompt
_CMD_PROMPT = re.compile(r"^\s*[A-Za-z]:\\[^\n>]*>(?=[^\s>])")
_PS_ENV = re.compile(r"\s*\$env:([A-Za-z_]\w*)\s*=\s*([\"']?)(.*?)\2\s*;?\s*", re.IGNORECASE)
# cmd.exe's `start [/options] PROGRAM ...` (`help start`: /affinity, /node and /d take a value; a first quoted
# word is the window title) and `call PROGRAM ...` run PROGRAM with the arguments after it
_START_VALUED = frozenset({"/affinity", "/node", "/d"})


def _split_windows(text: str) -> list[str]:
    """PowerShell / cmd.exe as they hand a native program its arguments: backslashes are literal (paths), quotes
    group, a backtick or caret at a line's end continues it; the call operator and a prompt are not arguments."""
    text = _WINDOWS_CONTINUATION.sub(" ", text)
    text = re.sub(r"^\s*PS [A-Za-z]:\\[^\n>]*>", "", text)
    if (m := _CMD_PROMPT.match(text)) and not re.search(r"\s-", m.group(0)):
        text = text[m.end():]
    lines, env, batch = text.split("\n"), [], {}
    while len(lines) > 1 and (not lines[0].strip() or _BATCH_QUIET.fullmatch(lines[0])
                              or (m := _BATCH_SET.fullmatch(lines[0]) or _PS_ENV.fullmatch(lines[0])
                                  or _BATCH_SET_RAW.fullmatch(lines[0]))):
        if lines[0].strip() and not _BATCH_QUIET.fullmatch(lines[0]):
            if (raw := _BATCH_SET_RAW.fullmatch(lines[0])) is not None:
                name, value = (raw.group(1), raw.group(2)) if raw.group(1) else (raw.group(3), raw.group(4))
                batch[name.upper()] = _expand_batch(value, batch)
                env.append(f"{name}={batch[name.upper()].strip(chr(34))}")
            else:
                env.append(f"{m.group(1)}={m.group(m.lastindex)}")
        lines = lines[1:]
    while len(lines) > 1 and (not lines[-1].strip() or _BATCH_AFTER.fullmatch(lines[-1])
                              or _BATCH_QUIET.fullmatch(lines[-1])):
        lines = lines[:-1]
    if batch:
        lines = [_expand_batch(ln, batch) for ln in lines]
    lex = shlex.shlex("\n".join(lines), posix=True)
    lex.whitespace_split, lex.escape, lex.commenters = True, "", ""
    words = list(lex)
    words = words[1:] if words[:1] == ["&"] else words
    if words[:1] and words[0].lower() in ("start", "call"):
        k = 1
        while words[0].lower() == "start" and k < len(words) and (words[k].startswith("/") or words[k] == ""):
            k += 2 if words[k].lower() in _START_VALUED else 1
        words = words[k:]
    run = _as_run(words)
    return [*env, *run] if run else run


def _expand_batch(line: str, values: dict[str, str]) -> str:
    """cmd.exe's `%NAME%` in a batch line -> the value a `set` line above gave NAME (names are not case
    sensitive); one no `set` gave (`%~dp0`, the batch file's folder) stays as written."""
    return re.sub(r"%([A-Za-z_]\w*)%", lambda m: values.get(m.group(1).upper(), m.group(0)), line)


def split_command(text: str) -> list[str]:
    """A command line pasted as text -> its arguments, as bash hands them over: quotes group, and a backslash at
    the end of a line continues it (the multi-line commands of READMEs and issues; shlex alone would keep the
    newline as an argument). CRLF line ends read as LF. Unbalanced quotes: ValueError, as shlex raises it. A
    command pasted from PowerShell or cmd.exe (_windows_text) is split as those shells split it."""
    text = _unfenced(text.replace("\r\n", "\n").translate(_UNICODE_SPACES))  # web page: no-break spaces
    text = _without_ps2(text)
    if _windows_text(text):
        return _split_windows(text)
    out: list[str] = []
    i, quote = 0, ""
    while i < len(text):  # bash: a backslash-newline is removed outside single quotes (inside them it is literal)
        c = text[i]
        if c == "\\" and quote != "'" and text.startswith("\n", i + 1):
            i += 2
            continue
        if c == "\\" and quote != "'" and not text[i + 1:].strip("\n"):
            break  # a paste cut after a continuation (`... --async-scheduling \`): bash drops the backslash at the end
            # of its input and runs the line (`printf 'echo a \\' | bash` prints "a")
        if c == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote == c else c
        out.append(c)
        i += 1
    joined = "".join(out)
    words = _as_run(shlex.split(_after_preamble(joined)))
    if not words and (m := _ROOT_PROMPT.match(joined)) and "\n" not in joined.strip():
        # a root shell's prompt: bash's `\$` shows `#` for uid 0 (bash manual, "Controlling the Prompt"), so `# vllm
        # serve ...` copied from a root terminal is the command, not a comment (a comment alone starts nothing)
        words = _as_run(shlex.split(_after_preamble(joined[m.end():])))
    return words


_ROOT_PROMPT = re.compile(r"\s*#[ \t]+(?=\S)")

# bash's secondary prompt (PS2, "> " by default: bash manual, "Bash Variables") before each line a backslash
# continued, copied from a terminal with the command
_PS2 = re.compile(r"^> ?", re.MULTILINE)


def _without_ps2(text: str) -> str:
    lines = text.split("\n")
    continued = [k for k in range(1, len(lines)) if lines[k - 1].rstrip().endswith("\\")]
    if not continued or not all(lines[k].startswith(">") for k in continued):
        return text
    for k in continued:
        lines[k] = _PS2.sub("", lines[k], count=1)
    return "\n".join(lines)


# Markdown around a command copied from an issue or a README: a fenced block (```bash ... ```) or an inline code
# span (`docker run ...`) holding the whole paste. No command line starts with a backtick (bash would run what
# follows it as a command substitution), so the marks are the page's, not the command's.
_FENCE = re.compile(r"\s*```[\w+.-]*[ \t]*\n(.*?)\n?[ \t]*```\s*", re.DOTALL)
_SPAN = re.compile(r"\s*(`{1,3})([^`].*?)\1\s*", re.DOTALL)  # ``` on one line too: ```vllm serve q```


def _unfenced(text: str) -> str:
    # a reply quoting the command (markdown blockquote, `> ` before every line, nested `> > `): the quote marks go
    lines = [ln for ln in text.split("\n") if ln.strip()]
    while len(lines) > 1 and all(ln.lstrip().startswith(">") for ln in lines):
        text = "\n".join(re.sub(r"^\s*> ?", "", ln) for ln in text.split("\n"))
        lines = [ln for ln in text.split("\n") if ln.strip()]
    if m := _FENCE.fullmatch(text):
        return m.group(1)
    if (m := _SPAN.fullmatch(text)) and "`" not in m.group(2):
        return m.group(2)
    if text.count("`") == 1 and (text.lstrip().startswith("`") or text.rstrip().endswith("`")):
        # one backtick at an end: an inline code span whose other mark the paste lost (bash would wait for the
        # closing backtick of a command substitution, so no command is typed so)
        return text.replace("`", "", 1)
    return text


# A script pasted whole: the lines before the command that only set variables (`MODEL=Qwen/Qwen3-8B`, `export
# OLLAMA_GPU_OVERHEAD=0;`), comments and blank lines, then the command that reads them (`vllm serve $MODEL`). Bash
# (manual, "Simple Command Expansion"): a line with no command name leaves its assignments in the shell; `export`
# puts them in the environment of the commands after it, a plain assignment does not. The command's `$NAME` /
# `${NAME}` then expand to the values set (parameter expansion; unquoted, the value is split into words, inside
# double quotes it stays one), `$((...))` of integers and those variables is computed (arithmetic expansion). A
# variable the paste does not set, and a command substitution `$(...)` (whose output only that machine knows),
# stay as typed, the substitution as one word.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# lines before the command that change only the shell's own state (its directory, options, limits, the active
# environment) or print: passed over, as they start no engine
_SHELL_STATE = frozenset({"cd", "pushd", "popd", "source", ".", "set", "ulimit", "echo", "sleep", "mkdir",
                          "nvidia-smi", "deactivate", "wait", "exit", ("conda", "activate"), ("conda", "deactivate"),
                          ("module", "load"), ("module", "purge"), ("mamba", "activate")})
_ASSIGN_WORD = re.compile(rf"({_NAME})=(.*)", re.DOTALL)
# the head of a loop that restarts the engine when it exits (bash: `while LIST; do LIST; done`, `until`, `for`)
_LOOP_HEADS = frozenset({"while", "until", "for"})


def _lines(text: str) -> list[tuple[str, str]]:
    """text -> its simple commands with the separator after each ("\n", ";", "&&" or ""), those inside quotes
    kept inside their command."""
    out, cur, quote, i = [], [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'" and i + 1 < len(text):
            cur.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote == c else c
        sep = "" if quote else "\n" if c == "\n" else ";" if c == ";" else "&&" if text.startswith("&&", i) else ""
        if sep:
            out.append(("".join(cur), sep))
            cur = []
            i += len(sep)
            continue
        cur.append(c)
        i += 1
    out.append(("".join(cur), ""))
    return out


def _assignments(line: str) -> tuple[bool, list[tuple[str, str]], list[str]] | None:
    """A command that only sets variables -> (exported, [(name, value)], [names exported without a value]); any
    other command -> None."""
    try:
        words = shlex.split(_without_comment(line))
    except ValueError:
        return None
    exported = bool(words) and words[0] == "export"
    words = words[1:] if exported else words
    pairs = [m.groups() for w in words if (m := _ASSIGN_WORD.fullmatch(w))]
    names = [w for w in words if exported and re.fullmatch(_NAME, w)]
    return (exported, pairs, names) if words and len(pairs) + len(names) == len(words) else None


def _without_comment(line: str) -> str:
    """A line without its comment: bash (manual, "Comments") takes a word that starts with `#` outside quotes, and
    the rest of the line, as a comment (`export LD_PRELOAD=...:$LD_PRELOAD # prepend the library`,
    vllm-project/vllm#26206); a `#` inside a word (`a#b`) or quotes is a character."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _after_preamble(text: str) -> str:
    parts = _lines(text)
    values: dict[str, str] = {}
    exported: dict[str, str] = {}
    k = 0
    loop = False
    while k < len(parts):
        line = parts[k][0].strip()
        if not line or line.startswith("#"):
            k += 1
            continue
        words = line.split()
        if (n := _prompt_len(words)) and len(words) > n and words[n] in _LOOP_HEADS:
            words = words[n:]  # a prompt before the loop's head (`21:36:33 me ~ ❯ while true; do`)
        if words[0] in _LOOP_HEADS:  # `while true; do CMD; sleep 3; done`: the command the loop (re)starts
            loop = True
            k += 1
            continue
        if loop and words[0] == "do":
            parts[k] = (parts[k][0].strip()[2:], parts[k][1])
            continue
        if words[0] in _SHELL_STATE or tuple(words[:2]) in _SHELL_STATE:  # cd, source, conda activate, ...
            k += 1
            continue
        if words[0] == "unset":
            for name in words[1:]:
                values.pop(name, None)
                exported.pop(name, None)
            k += 1
            continue
        found = _assignments(_expand(line, values, split=False))  # an assignment's value is not split into words
        if found is None:
            break
        for name, value in found[1]:
            values[name] = value
            if found[0] or name in exported:
                exported[name] = value
        for name in found[2]:
            exported[name] = values.get(name, "")
        k += 1
    end = k + 1 if loop else _command_end(parts, k)
    if k == 0 and end == len(parts):  # the command's own lines, each without its comment (`... -c 8192 # my server`),
        # a command substitution kept one word as in a script's command (`-m $(cat model.txt)`)
        return _expand("".join(_without_comment(seg) + sep for seg, sep in parts), {})
    # in a loop, the command it runs is all: what follows it is the loop's own (echo, sleep, done); after a script's
    # command, a line that starts no engine (`source deactivate`, vllm#10204) is a command of its own
    rest = "".join(_without_comment(seg) + (f" {sep} " if sep in (";", "&&") else sep) for seg, sep in parts[k:end])
    command = _expand(rest, values)
    return " ".join([*(shlex.quote(f"{n}={v}") for n, v in exported.items()), command])


def _command_end(parts: list[tuple[str, str]], k: int) -> int:
    """Where the command at parts[k] ends: at the first later command that only changes the shell's state or prints
    (`source deactivate`, `echo done`), which bash runs after it, not as its arguments; lines of flags a paste lost
    its continuations on (`--max-model-len=4000` alone on a line) stay the command's."""
    for j in range(k + 1, len(parts)):
        words = _without_comment(parts[j][0]).split()
        if words and (words[0] in _SHELL_STATE or tuple(words[:2]) in _SHELL_STATE):
            return j
    return len(parts)


def _arithmetic(expr: str, values: dict[str, str]) -> str | None:
    """$((expr)) of integers, + - * / % and parentheses, and the variables set -> its value; else None."""
    expr = re.sub(rf"\$?\{{?({_NAME})\}}?", lambda m: values.get(m.group(1), "x"), expr)
    if not re.fullmatch(r"[\d\s+\-*/%()]+", expr) or "**" in expr:
        return None
    try:
        return str(int(eval(expr.replace("/", "//"), {"__builtins__": {}})))  # noqa: S307 - digits and operators only
    except (SyntaxError, ZeroDivisionError, ValueError):
        return None


def _expand(text: str, values: dict[str, str], split: bool = True) -> str:
    """Parameter and arithmetic expansion of the variables in `values`, outside single quotes; a command
    substitution kept as one word. split=False: an unquoted value is not split into words (an assignment's)."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote == c else c
        if c == "$" and quote != "'":
            if text.startswith("$((", i) and (end := text.find("))", i)) > 0:
                value = _arithmetic(text[i + 3:end], values)
                if value is not None:
                    out.append(value)
                    i = end + 2
                    continue
            if text.startswith("$(", i):
                depth, j = 0, i + 1
                while j < len(text):
                    depth += {"(": 1, ")": -1}.get(text[j], 0)
                    if depth == 0:
                        break
                    j += 1
                word = text[i:j + 1]
                out.append(word if quote else shlex.quote(word))
                i = j + 1
                continue
            m = re.match(rf"\$(?:\{{({_NAME})\}}|({_NAME}))", text[i:])
            if m and (name := m.group(1) or m.group(2)) in values:
                value = values[name]
                if "$(" in value and not quote:  # a command's output only that machine knows: one word
                    out.append(shlex.quote(value))
                elif quote == '"':  # shlex, as bash, takes a backslash inside double quotes before " and \ only
                    out.append(re.sub(r'(["\\])', r"\\\1", value))
                else:
                    out.append(re.sub(r"([\"'\\$`])" if split else r"([\"'\\$`\s])", r"\\\1", value))
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


# what the shell keeps from the command it runs: a pipe and what follows it (`| tee log`), a redirection (`2>&1`,
# `> log.txt`, `>>log`), a trailing `&` or `;`, and the `$` of a prompt copied with the command
_PIPE = frozenset({"|", "|&"})
_REDIRECT = re.compile(r"^(?:\d|&)?(?:>>?|<)$")  # its target is the next word
_REDIRECT_TO = re.compile(r"^(?:\d|&)?(?:>>?|<)(?:&\d|\S+)$")  # its target attached: 2>&1, >log.txt


# a label before the command, as issue templates ask for it ("command line: llama-server ...", "cmd: ollama run
# ..."): no program is named so
_LABELS = (["command", "line:"], ["cmd:"], ["command:"], ["commandline:"], ["command-line:"])


# zsh's report of a job a signal ended, copied with the crash: `zsh: segmentation fault  CMD`, `zsh: killed  CMD`
# (zsh Src/jobs.c printjob: "zsh: " then the signal's message from Src/signames2.awk's sigmsg, then the command
# line as typed); the command after it is the one that ran
_ZSH_SIGNAL = ("segmentation fault", "killed", "abort", "bus error", "terminated", "illegal hardware instruction",
               "floating point exception", "hangup", "interrupt", "quit", "trace trap", "broken pipe")
# a prompt theme's segments before its mark: a clock, a user or host, a folder (`21:36:33 me ~ ❯`, oh-my-zsh and
# starship prompts)
_PROMPT_SEGMENT = re.compile(r"\d{1,2}:\d\d(?::\d\d)?|[\w.@-]+|~[\w./-]*|/[\w./-]*")
# a process list's line (procps ps(1): `ps -ef` prints UID PID PPID C STIME TTY TIME CMD, `ps aux` USER PID %CPU
# %MEM VSZ RSS TTY STAT START TIME COMMAND): the command is what follows the TIME column
_PS_EF = (r"[\w.+-]+", r"\d+", r"\d+", r"\d+", r"[\w:.]+", r"\?|[\w/]+", r"(?:\d+-)?\d+:\d\d(?::\d\d)?")
_PS_AUX = (r"[\w.+-]+", r"\d+", r"[\d.]+", r"[\d.]+", r"\d+", r"\d+", r"\?|[\w/]+", r"[A-Za-z<+]+", r"[\w:.]+",
           r"\d+:\d\d(?::\d\d)?")


def _columns(words: list[str], columns: tuple[str, ...]) -> bool:
    return len(words) > len(columns) and all(re.fullmatch(c, w) for c, w in zip(columns, words, strict=False))


def _prompt_len(words: list[str]) -> int:
    """How many of the first words are a shell prompt copied with the command (0: none)."""
    if words[:1] in (["$"], [">"], ["%"], ["❯"], ["➜"]):  # sh, zsh themes; a reply's quote mark before a prompt
        return 1 + _prompt_len(words[1:]) if words[:1] == [">"] else 1
    if words and words[0].startswith("⬢"):  # toolbx's prompt: a hexagon before the usual `[user@host dir]$`
        # (containers/toolbox profile.d/toolbox.sh puts it before PS1 inside a toolbox container)
        rest = [words[0][1:], *words[1:]] if len(words[0]) > 1 else words[1:]
        n = _prompt_len(rest)
        return n + (len(words[0]) == 1) if n else 0
    head = 1 if words[:1] == ["zsh:"] else 0
    if not head and words and re.fullmatch(r"\[\d+\]", words[0]):
        # the same for a background job (printjob's job line: "[N]", its current-job mark + or -, with -l its pid,
        # then the message and the command: `[1] abort  vmlx serve ...`, jjang-ai/vmlx#5)
        head = 1 + (words[1:2] in (["+"], ["-"]))
        head += bool(words[head:head + 1] and words[head].isdigit())
    if head:
        for message in _ZSH_SIGNAL:
            n = head + len(message.split())
            if " ".join(words[head:n]) == message and len(words) > n:
                return n + (words[n] == "(core" and words[n + 1:n + 2] == ["dumped)"]) * 2
    if end := next((k for k, w in enumerate(words[1:5], 1) if w in ("❯", "➜", "λ", "»")), 0):
        if all(_PROMPT_SEGMENT.fullmatch(w) for w in words[:end]) and len(words) > end + 1:
            return end + 1
    for columns in (_PS_EF, _PS_AUX):
        if _columns(words, columns):
            return len(columns)
    if len(words) > 1 and re.fullmatch(r"(?:~|/)[\w./~-]*[$#]", words[0]):
        return 1  # a prompt of the folder alone (PS1='\w\$ ': `/opt/llama.cpp$ build/bin/llama-cli ...`)
    if words and re.fullmatch(r"[\w.-]+@[\w.-]+:\S*[$#]", words[0]):  # bash's default prompt: user@host:~/dir$
        return 1
    if len(words) > 1 and re.fullmatch(r"[\w.-]+@[\w.-]+:", words[0]):  # the same with its `$` lost in the paste
        return 1
    if len(words) > 2 and re.fullmatch(r"[\w.-]+@[\w.-]+", words[0]) and words[2] in ("%", "$", "#"):
        return 3  # zsh's default prompt (macOS): `%n@%m %1~ %#`, "user@Mac ~ % "
    if words and words[0].startswith("[") and (end := next(  # Fedora's: [user@host dir]$
            (i for i, w in enumerate(words[:4]) if re.fullmatch(r"\S*\][$#]", w)), None)) is not None:
        return end + 1
    if len(words) > 1 and re.fullmatch(r"\([\w.@/+-]+\)", words[0]) and (n := _prompt_len(words[1:])):
        return 1 + n  # the active conda / venv environment before the prompt: "(vllm) user@host:~$"
    return 0


# a prompt's `$` glued to the program (`$llama-server -m ...`): bash would expand `$llama`, so no one types it so on
# purpose; a word that can only be a program after the `$` (a dash, dot or slash after the name, or an engine's own
# program name) loses it. `$MODEL_CMD` stays a variable.
_GLUED_PROMPT = re.compile(r"\$(?:\w+[-./]\S*|python3?|vllm|ollama|sglang|lms)")


def _as_run(words: list[str]) -> list[str]:
    for label in _LABELS:
        if [w.lower() for w in words[:len(label)]] == label:
            words = words[len(label):]
            break
    if len(words) > 1 and re.fullmatch(r"\d{1,2}[.)、]", words[0]):  # a numbered step: `2. ollama run ...`
        words = words[1:]
    elif words and (m := re.fullmatch(r"\d{1,2}、(\S+)", words[0])):  # the CJK list comma glued: `2、ollama.exe`
        words = [m.group(1), *words[1:]]
    words = words[_prompt_len(words):]
    if words and _GLUED_PROMPT.fullmatch(words[0]):
        words = [words[0][1:], *words[1:]]
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
