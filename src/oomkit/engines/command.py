"""The command line as typed, both ways: settings -> the flags that differ from the engine's defaults, and a user's
own command line with only the flags of the changed settings changed.

Each engine describes its options once, as a table of `Opt` (a Settings field -> its canonical flag or variable,
how a value is typed, the other spellings that set the same field). `format_flags` walks the table for a new
command; `rewrite` walks the user's argv the way the engine's parser does and edits it in place: a changed
field's flag keeps the user's spelling (`--ctx-size`, `--max_model_len=8192`) and gets the new value, a field
the argv does not name yet is appended (leading `VAR=value` assignments for the environment the engine reads),
and every other token stays as it was.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any

from ..errors import OomkitError, SettingsError
from .shell_words import split_command

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)

# the most of one argument a refusal repeats: a paste's 8,000-character argument is cut to this, with its length said
QUOTE_LIMIT = 80


def clip_word(word: str, limit: int = QUOTE_LIMIT) -> str:
    """An argument as a one-line refusal shows it: whole up to `limit` characters, else its start, an ellipsis and
    its length."""
    return word if len(word) <= limit else f"{word[:limit]}... ({len(word):,} characters)"


def clip_repr(word: str, limit: int = QUOTE_LIMIT) -> str:
    """repr(word) as a one-line refusal shows it: whole up to `limit` characters of `word`, else the start of the
    repr, an ellipsis, its closing quote and the argument's length."""
    quoted = repr(word)
    return quoted if len(word) <= limit else f"{quoted[:limit + 1]}...{quoted[-1]} ({len(word):,} characters)"


def given_twice(name: str, first: object, second: object) -> str:
    """The refusal of an option, variable or field given twice with two values (the CLI's options and --env, the
    serve and models options, the web API's query keys and body fields): both values named, each clipped as a
    one-line refusal shows it (clip_word, clip_repr)."""
    return f"{clip_word(name)} given twice, as {clip_repr(str(first))} and {clip_repr(str(second))}: give it once"


# Between two commands run one after the other (Ollama: `VAR=v ollama serve`, then `ollama run TAG`): a token of its
# own in an argv, a line break when joined. Read back from text, the break is whitespace: each engine's parser knows
# where its second command starts.
COMMAND_BREAK = "\n"


def join_command(argv: Sequence[str]) -> str:
    """The command as typed in a POSIX shell, one line per command (COMMAND_BREAK), each quoted by shlex."""
    lines: list[list[str]] = [[]]
    for a in argv:
        if a == COMMAND_BREAK:
            lines.append([])
        else:
            lines[-1].append(a)
    return "\n".join(shlex.join(line) for line in lines)


def number(x: Any) -> str:
    """A number as typed: 0.9 -> "0.9", 4.0 -> "4", 32768 -> "32768" (repr: exact, so it parses back equal).
    NaN and infinity have no spelling an engine would take as meant (flags.check_settings refuses them first)."""
    if isinstance(x, float):
        if not math.isfinite(x):
            raise SettingsError(f"{x} is not a finite number: no command line can carry it")
        return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)
    return str(x)


def flag_bool(x: Any) -> str:
    """A boolean environment switch: "1" / "0"."""
    return "1" if x else "0"


@dataclass(frozen=True)
class Opt:
    """One Settings field on the command line.

    flag: the canonical spelling ("-c", "--max-model-len"), or the variable name when env is set.
    text: value -> the value as typed; None: the value has no spelling (the flag is left out).
    switch: for a boolean field, the spellings of True and of False (None: no spelling, the flag is left out).
    aliases: other flag spellings with the same value syntax (as the engine's `resolve` names them).
    foreign: spellings that set the field another way (`-lm none` for --no-mmap): replaced whole when it changes.
    env_aliases: variables that set the field when no flag does (VLLM_ATTENTION_BACKEND for --attention-backend).
    edit: (the user's value text, new value) -> the new text, for values holding more than the field
    (vLLM's --speculative-config JSON).
    renamed: the flag's later spellings, same value syntax (a switch: the same meaning as switch[0]), typed for a
    release whose parser no longer has the flag (SGLang 0.5.20's --cuda-graph-max-bs-decode for --cuda-graph-max-bs).
    preferred: the spellings a release's parser prefers where it has them, the flag being only a deprecated alias
    there, same value syntax (SGLang 0.5.14-0.5.19: --cuda-graph-max-bs "Deprecated alias for
    --cuda-graph-max-bs-decode", a warning at every launch); for_release types the first one the release has.
    multi: the value is several words (argparse nargs="+": SGLang's --cuda-graph-bs 1 2 4 8); text gives one
    string per word.
    refused: (spelling, where it is) for the spellings the chosen release's parser does not have (for_release):
    a value that needs one has no command line there, and is refused.
    moot: a release whose parser has none of the field's spellings already runs as the field asks (it is left
    out there rather than refused).
    """

    field: str
    flag: str
    text: Callable[[Any], str | None] = number
    switch: tuple[str | None, str | None] | None = None
    aliases: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()
    env: bool = False
    env_aliases: tuple[str, ...] = ()
    edit: Callable[[str, Any], str] | None = None
    renamed: tuple[str, ...] = ()
    preferred: tuple[str, ...] = ()
    multi: bool = False
    refused: tuple[tuple[str, str], ...] = ()
    moot: bool = False

    def spellings(self) -> tuple[str, ...]:
        own = () if self.env else (self.flag,)
        sw = tuple(s for s in (self.switch or ()) if s)
        return own + sw + self.aliases + self.renamed + self.preferred + self.foreign

    def _check(self, spelled: str) -> None:
        why = next((w for f, w in self.refused if f == spelled), None)
        if why is not None:
            raise SettingsError(f"{self.field}: {why}")

    def tokens(self, value: Any) -> list[str]:
        """The canonical tokens for `value` (empty: nothing to type)."""
        if self.switch is not None:
            if value is None:
                return []
            spelled = self.switch[0 if value else 1]
            if spelled:
                self._check(spelled)
            return [spelled] if spelled else []
        if value is None:
            return []
        text = self.text(value)
        if text is None:
            return []
        self._check(self.flag)
        if self.multi:
            return [self.flag, *text]
        return [f"{self.flag}={text}"] if self.env else [self.flag, text]


def for_release(table: Sequence[Opt], accepts: Callable[[str], bool | None], why: Callable[[str], str]
                ) -> tuple[Opt, ...]:
    """The table as one release's parser reads it (engines/release_flags.py, read from the wheels): a flag it does
    not have is typed in its later spelling (Opt.renamed) where it has that, else as the variable the engine reads
    instead (Opt.env_aliases: VLLM_ATTENTION_BACKEND before --attention-backend), else it is refused
    (Opt.refused: tokens() raises, so that a fit picks a change the release can carry, as lms load's rewrite
    does). A flag the release has is typed in the spelling it prefers (Opt.preferred) where the release's parser
    has that one too (accepts True: the flag data lists it for that release), so that the command does not carry a
    deprecated alias. accepts(flag): True / False / None (not in the flag data: taken); why(flag): the refusal, in
    words."""
    out = []
    for opt in table:
        if opt.env:
            out.append(opt)
            continue
        refused: list[tuple[str, str]] = []

        def spelled(flag: str | None, opt: Opt = opt, refused: list[tuple[str, str]] = refused) -> str | None:
            if flag is None:
                return flag
            if flag == opt.flag or (opt.switch is not None and flag == opt.switch[0]):
                better = next((p for p in opt.preferred if accepts(p) is True), None)
                if better is not None:
                    return better
            if accepts(flag) is not False:
                return flag
            alt = next((r for r in opt.renamed if accepts(r) is not False), None)
            if alt is None:
                refused.append((flag, why(flag)))
                return flag
            return alt

        if opt.switch is not None:
            switch = (spelled(opt.switch[0]), spelled(opt.switch[1]))
            flag = switch[0] or opt.flag
        else:
            switch, flag = None, spelled(opt.flag)
        if refused and opt.moot:  # the release does it without a flag
            out.append(replace(opt, switch=(None, None)) if opt.switch is not None
                       else replace(opt, text=lambda value: None))
            continue
        if refused and opt.switch is None and opt.env_aliases:  # the engine's variable carries it
            out.append(replace(opt, flag=opt.env_aliases[0], env=True, env_aliases=opt.env_aliases[1:],
                               aliases=(*opt.aliases, opt.flag)))
            continue
        if flag == opt.flag and switch == opt.switch and not refused:
            out.append(opt)
            continue
        kept = tuple(dict.fromkeys(a for a in (*opt.aliases, opt.flag) if a != flag))
        out.append(replace(opt, flag=flag, switch=switch, aliases=kept, refused=tuple(refused)))
    return tuple(out)


@dataclass(frozen=True)
class Syntax:
    """How an engine's command line reads, for walking a user's argv the way its parser does.

    program_len: (argv after the leading assignments) -> how many tokens name the program (`vllm serve` 2,
    `python -m sglang.launch_server` 3, `ollama run` 2).
    takes_value: the engine's flag_takes_value (name, the next token) -> whether the flag consumes it.
    resolve: a flag as typed (no `=value`) -> the spelling the table uses (vLLM: `--max_model_len` ->
    `--max-model-len`; SGLang: an abbreviation -> the full flag).
    """

    program_len: Callable[[list[str]], int]
    takes_value: Callable[[str, str | None], bool]
    resolve: Callable[[str], str | None] = lambda name: name


def defaults(settings_type: type) -> dict[str, Any]:
    """The dataclass defaults of a Settings class, by field."""
    out = {}
    for f in fields(settings_type):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


def values_of(settings: Any) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def format_flags(table: Sequence[Opt], values: Mapping[str, Any], default: Mapping[str, Any]
                 ) -> tuple[list[str], list[str]]:
    """-> (leading VAR=value assignments, flags) for the fields whose value differs from the default, in table
    order."""
    env: list[str] = []
    flags: list[str] = []
    for opt in table:
        value = values.get(opt.field)
        if value == default.get(opt.field):
            continue
        (env if opt.env else flags).extend(opt.tokens(value))
    return env, flags


@dataclass(frozen=True)
class _Span:
    start: int
    end: int  # one past the last token
    name: str  # the flag as typed (no =value)
    opt: Opt
    inline: bool  # --flag=value
    has_value: bool


# GNU env(1) (coreutils src/env.c, its getopt_long table "+C:iS:u:v0"): the options before the assignments; -u NAME
# and -C DIR take a value (the next word or attached), a lone '-' is -i. -S (a string split into the command) is not
# read: the command it holds is no argv of ours.
_ENV_SWITCH = re.compile(r"-[iv0]+|-|--ignore-environment|--null|--debug|--(?:block|default|ignore)-signal(?:=.*)?")
_ENV_VALUED = re.compile(r"-[iv0]*[uC]|--unset|--chdir")
_ENV_ATTACHED = re.compile(r"-[iv0]*[uC].+|--unset=.*|--chdir=.*")


def env_options_end(argv: Sequence[str], i: int = 0) -> int:
    """The index after `env` and its options when argv[i] is the env program (by name or path), else i."""
    if i >= len(argv) or program_name(argv[i]) != "env":
        return i
    i += 1
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            return i + 1
        if _ENV_SWITCH.fullmatch(tok) or _ENV_ATTACHED.fullmatch(tok):
            i += 1
        elif _ENV_VALUED.fullmatch(tok):
            i += 2
        else:
            break
    return min(i, len(argv))


def env_clears(options: Sequence[str]) -> bool:
    """Whether env's options (those env_options_end skipped) include -i, '-' or --ignore-environment: the command
    then sees only the assignments after them. A short group stops at -u / -C, whose value follows."""
    return any(o in ("-", "--ignore-environment")
               or (not o.startswith("--") and "i" in re.match(r"-?([iv0]*)", o).group(1)) for o in options)


def leading_assignments(argv: Sequence[str]) -> tuple[int, int]:
    """-> (index of the first assignment, index one past the last) of the leading `[env [OPTION]...] VAR=value ...`."""
    start = env_options_end(argv)
    end = start
    while end < len(argv) and _ASSIGNMENT.fullmatch(argv[end]):
        end += 1
    return start, end


def _is_flag(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return False
    try:
        float(token)
        return False
    except ValueError:
        return True


def _scan(argv: Sequence[str], start: int, syntax: Syntax, index: Mapping[str, Opt]) -> list[_Span]:
    spans: list[_Span] = []
    i = start
    while i < len(argv):
        tok = argv[i]
        if not _is_flag(tok):
            i += 1
            continue
        name, eq, _ = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        following = argv[i + 1] if i + 1 < len(argv) else None
        takes = not eq and following is not None and syntax.takes_value(name, following)
        end = i + (2 if takes else 1)
        try:
            key = syntax.resolve(name)
        except OomkitError:  # an ambiguous abbreviation: not one of ours, the engine's parser reports it
            key = None
        opt = index.get(key) if key is not None else None
        if opt is not None and opt.multi and not eq:  # nargs="+": every word up to the next flag
            while end < len(argv) and not _is_flag(argv[end]):
                end += 1
            takes = end > i + 1
        if opt is not None:
            spans.append(_Span(i, end, name, opt, bool(eq), bool(eq) or takes))
        i = end
    return spans


def _in_place(span: _Span, argv: Sequence[str], value: Any) -> list[str]:
    """The span rewritten for `value`: the user's spelling and form kept where the value syntax is the field's."""
    opt = span.opt
    if (opt.switch is not None or span.name in opt.foreign or (opt.env and span.name not in opt.aliases)
            or any(span.name == f for f, _ in opt.refused)):  # a spelling the release lacks: its own spelling
        return opt.tokens(value)
    if value is None:
        return []
    if opt.multi:  # every word the flag took is replaced
        words = opt.text(value)
        return [] if words is None else [span.name, *words]
    old_text = argv[span.start].partition("=")[2] if span.inline else (
        argv[span.start + 1] if span.has_value else "")
    text = opt.edit(old_text, value) if opt.edit is not None and old_text else opt.text(value)
    if text is None:
        return []
    return [f"{span.name}={text}"] if span.inline else [span.name, text]


def rewrite(argv: Sequence[str], old: Mapping[str, Any], new: Mapping[str, Any], table: Sequence[Opt],
            syntax: Syntax) -> list[str]:
    """The user's argv with only the options of the fields whose value differs between `old` (what argv parsed
    to) and `new` changed; old and new map fields to values (values_of(settings), or an engine's own view).

    A changed field's last flag is rewritten in place (its earlier ones, overridden or accumulated, go); a field
    set only by a leading assignment has that assignment rewritten; a field the argv does not name is appended at
    the end, or among the leading assignments when it is a variable. Every other token stays where it was.
    Behind a wrapper (`sudo`, `docker run ... IMAGE`) only the engine's part is edited; a variable the engine reads
    joins a container as `-e VAR=value`."""
    wrapped = unwrap(argv)
    engine_argv = list(wrapped.engine_argv)
    _, lead_end = leading_assignments(engine_argv)
    if (k := shell_string(engine_argv[lead_end:])) is not None:  # sh -c 'COMMAND': COMMAND edited, quoted again
        text = engine_argv[lead_end + k]
        at = len(argv) - 1 - list(argv)[::-1].index(text)
        return [*argv[:at], shlex.join(rewrite(split_command(text), old, new, table, syntax)), *argv[at + 1:]]
    if wrapped.prefix or wrapped.entrypoint:
        inner = rewrite(wrapped.engine_argv, old, new, table, syntax)
        a_start, a_end = leading_assignments(inner)
        assigned, rest = inner[a_start:a_end], inner[a_end + len(wrapped.entrypoint):]
        if wrapped.image is None:
            # a variable the prefix sets is edited there; a new one goes first, or after sudo (which passes
            # VAR=value to the command and clears the caller's environment)
            prefix, lead, tail = list(wrapped.prefix), [], []
            for a in assigned:
                var = a.partition("=")[0]
                k = next((k for k, t in enumerate(prefix) if _ASSIGNMENT.fullmatch(t) and t.partition("=")[0] == var),
                         None)
                if k is not None:
                    prefix[k] = a
                else:
                    (tail if "sudo" in prefix else lead).append(a)
            return [*lead, *prefix, *tail, *rest]
        prefix = list(wrapped.prefix)
        at = len(prefix) - 1 - prefix[::-1].index(wrapped.image)
        added: list[str] = []
        for a in assigned:  # a variable the container already sets (-e VAR=..., --env=VAR=...) is edited in place
            var = a.partition("=")[0]
            k = next((k for k in range(at) if _container_env_var(prefix, k) == var), None)
            if k is None:
                added += ["-e", a]
            elif prefix[k] in ("-e", "--env"):
                prefix[k + 1] = a
            else:
                prefix[k] = prefix[k][:len(prefix[k]) - len(prefix[k].partition(var + "=")[2]) - len(var) - 1] + a
        return [*prefix[:at], *added, *prefix[at:], *rest]
    argv = list(argv)
    a_start, a_end = leading_assignments(argv)
    body = a_end + syntax.program_len(argv[a_end:])
    index: dict[str, Opt] = {}
    for opt in table:
        for spelled in opt.spellings():
            index.setdefault(spelled, opt)
    spans = _scan(argv, body, syntax, index)
    assigned = {argv[k].partition("=")[0]: k for k in range(a_start, a_end)}

    replace_at: dict[int, tuple[int, list[str]]] = {}
    appended: list[str] = []
    assignments: list[str] = []
    for opt in table:
        value = new.get(opt.field)
        if old.get(opt.field) == value:
            continue
        mine = [s for s in spans if s.opt is opt]
        variables = ([opt.flag] if opt.env else []) + list(opt.env_aliases)
        at = next((assigned[v] for v in variables if v in assigned), None)
        if mine:
            last = mine[-1]
            replace_at[last.start] = (last.end, _in_place(last, argv, value))
            for s in mine[:-1]:
                replace_at[s.start] = (s.end, [])
        elif at is not None:
            var = argv[at].partition("=")[0]
            text = None if value is None else opt.text(value)
            replace_at[at] = (at + 1, [] if text is None else [f"{var}={text}"])
        elif opt.env:
            assignments.extend(opt.tokens(value))
        else:
            appended.extend(opt.tokens(value))
    out: list[str] = []
    k = 0
    while k < len(argv):
        if k == a_end:
            out.extend(assignments)
        if k in replace_at:
            end, tokens = replace_at[k]
            out.extend(tokens)
            k = end
            continue
        out.append(argv[k])
        k += 1
    if a_end >= len(argv):
        out.extend(assignments)
    return out + appended


# ---------------------------------------------------------------------------------------------------------
# Wrappers around the engine's own command line, as commands are pasted from issues and READMEs: `sudo`, and a
# container started with `docker run` / `podman run` whose image runs the engine. The engine's argv is the image's
# entrypoint (or the command given after the image) with the arguments after the image; `-e K=V` joins its env.

# docker/cli cli/command/container/opts.go addFlags and run.go NewRunCommand (pflag): the `docker run` options that
# take a value; every other option is a switch. Podman's run takes the same spellings for these.
_CONTAINER_VALUED = frozenset({
    "-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device", "--cap-add",
    "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-rt-period",
    "--cpu-rt-runtime", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--device",
    "--device-cgroup-rule", "--device-read-bps", "--device-read-iops", "--device-write-bps", "--device-write-iops",
    "--dns", "--dns-option", "--dns-opt", "--dns-search", "--domainname", "--entrypoint", "-e", "--env",
    "--env-file", "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries",
    "--health-start-interval", "--health-start-period", "--health-timeout", "-h", "--hostname", "--ip", "--ip6",
    "--ipc", "--isolation", "--kernel-memory", "-l", "--label", "--label-file", "--link", "--link-local-ip",
    "--log-driver", "--log-opt", "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap",
    "--memory-swappiness", "--mount", "--name", "--network", "--net", "--network-alias", "--net-alias",
    "--oom-score-adj", "--pid", "--pids-limit", "--platform", "-p", "--publish", "--pull", "--restart", "--runtime",
    "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs",
    "--ulimit", "-u", "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from", "-w",
    "--workdir", "--device-requests", "--hooks-dir", "--secret", "--pod", "--replace",
})
_CONTAINER_PROGRAMS = ("docker", "podman", "nerdctl")
# Programs that run the command after their own options (the options that take a value): sudo(8), nice(1)
# (-n N; -N is GNU's obsolete form, a switch here), nohup(1), time(1) (-f FORMAT, -o FILE), bash's exec, numactl(8).
_PROCESS_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-p", "--prompt", "-C", "--close-from", "-U", "--other-user",
                       "-r", "--role", "-t", "--type", "-D", "--chdir", "-T", "--command-timeout", "-h", "--host",
                       "-R", "--chroot"}),
    "nice": frozenset({"-n"}), "nohup": frozenset(), "exec": frozenset({"-a"}), "time": frozenset({"-f", "-o"}),
    # Slurm's srun (its options that take a value as the next argument; --opt=value forms are one token)
    "srun": frozenset({"-N", "-n", "-c", "-p", "-t", "-G", "-w", "-J", "-A", "-o", "-e", "-q", "--gres", "--gpus",
                       "--mem", "--partition", "--nodes", "--ntasks", "--time", "--cpus-per-task", "--account",
                       "--job-name", "--nodelist", "--qos", "--gpus-per-node", "--ntasks-per-node"}),
    # numactl(8) (numactl.c's getopt_long table): the memory and CPU placement options that take a value, given
    # as the next word or attached (`--interleave=all`, one token)
    "numactl": frozenset({"-i", "--interleave", "-m", "--membind", "-N", "--cpunodebind", "-c", "--cpubind", "-C",
                          "--physcpubind", "-p", "--preferred", "-P", "--preferred-many", "-w",
                          "--weighted-interleave", "-S", "--shm", "-f", "--file", "-o", "--offset", "-L", "--length",
                          "-M", "--shmmode", "-I", "--shmid"}),
    # systemd-run (man systemd-run): its options that take the next word as their value
    "systemd-run": frozenset({"-p", "--property", "-u", "--unit", "-E", "--setenv", "--uid", "--gid", "-M",
                              "--machine", "-H", "--host", "--description", "--slice", "--nice",
                              "--working-directory", "--service-type", "--on-active", "--on-calendar"}),
    # uvx = uv tool run (docs.astral.sh/uv): the tool's command after its options
    "uvx": frozenset({"--from", "--with", "--with-requirements", "--python", "-p", "--index", "--index-url",
                      "--extra-index-url"}),
}
# Runners written as two words whose command follows their options, passing the environment on: `uv run`,
# `pipx run`, `conda run -n ENV`, `poetry run`, `pixi run`
_RUNNERS: dict[tuple[str, str], frozenset[str]] = {
    ("uv", "run"): frozenset({"--with", "--with-requirements", "--python", "-p", "--directory", "--project",
                              "--env-file", "--extra", "--group", "--index", "--index-url", "--extra-index-url",
                              "--package"}),
    ("pipx", "run"): frozenset({"--spec", "--python", "--pip-args", "--index-url"}),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    ("poetry", "run"): frozenset({"-C", "--directory", "-P", "--project"}),
    ("pixi", "run"): frozenset({"-e", "--environment", "--manifest-path"}),
}


# CPython's own options before `-m MODULE` (Modules/main.c, Python/getopt.c with the option string
# "bBc:dEhiIm:OPqRsStuvVW:xX:?"): switches that may be grouped (`-uB`, `-OO`), and -W / -X whose argument is
# attached or the next word. `-c` runs a string, not a module.
_PY_SWITCHES = re.compile(r"-[bBdEhiIOPqRsSuvx]+")
_PY_VALUED = ("-W", "-X")


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})


def shell_string(argv: Sequence[str]) -> int | None:
    """`sh -c 'COMMAND'` (also bash / zsh, `-lc`, `-ec`, `/bin/sh`): the index of the COMMAND string the shell runs,
    which is the engine command (a Kubernetes `command: [sh, -c]` with its args, a systemd-run or docker line);
    None for any other argv."""
    if len(argv) < 3 or re.split(r"[\\/]", argv[0])[-1] not in _SHELLS:
        return None
    i = 1
    while i < len(argv) and re.fullmatch(r"-[a-z]+", argv[i]) and "c" not in argv[i]:
        i += 1  # -l, -e, -x before -c
    if i + 1 < len(argv) and re.fullmatch(r"-[a-z]*c[a-z]*", argv[i]):
        return i + 1
    return None


def python_module(argv: Sequence[str]) -> tuple[str, int] | None:
    """`python [-u] [-X opt] [-W arg] -m MODULE ...` -> (MODULE, the index after it); None when argv is not a Python
    interpreter running a module (`python3 server.py`, `python -c ...`)."""
    if not argv or not re.fullmatch(r"python[\d.]*(?:\.exe)?", re.split(r"[\\/]", argv[0])[-1], re.IGNORECASE):
        return None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return (argv[i + 1], i + 2) if i + 1 < len(argv) else None
        if a.startswith("-m") and len(a) > 2:  # getopt: -mMODULE
            return a[2:], i + 1
        if a in _PY_VALUED:
            i += 2
        elif a[:2] in _PY_VALUED or _PY_SWITCHES.fullmatch(a):
            i += 1
        else:
            return None
    return None


# llama.cpp .devops/tools.sh, the `full` images' entrypoint: its first argument -> the program it execs
_TOOLS_SH = {"--run": "llama-cli", "-r": "llama-cli", "--run-legacy": "llama-completion", "-l": "llama-completion",
             "--bench": "llama-bench", "-b": "llama-bench", "--perplexity": "llama-perplexity",
             "-p": "llama-perplexity", "--server": "llama-server", "-s": "llama-server"}


def _container_env_var(prefix: Sequence[str], k: int) -> str | None:
    """The variable a `docker run` token at k sets (-e VAR=v as two tokens, --env=VAR=v, -eVAR=v), if any."""
    tok = prefix[k]
    if tok in ("-e", "--env") and k + 1 < len(prefix):
        return prefix[k + 1].partition("=")[0]
    for lead in ("--env=", "-e"):
        if tok.startswith(lead) and len(tok) > len(lead) and "=" in tok[len(lead):]:
            return tok[len(lead):].partition("=")[0]
    return None


# `docker exec [OPTIONS] CONTAINER COMMAND` (docker container exec: its options that take a value), `kubectl exec
# [OPTIONS] POD -- COMMAND`, and `hf jobs run [OPTIONS] IMAGE COMMAND` (huggingface_hub's jobs CLI: the command
# given runs in the image in place of its own, as in the Hugging Face blog's `hf jobs run --flavor h200x2 ...
# vllm/vllm-openai:latest vllm serve ...`; every option but -d / --detach takes a value)
_EXEC_VALUED = frozenset({"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"})
_KUBECTL_VALUED = frozenset({"-c", "--container", "-n", "--namespace", "--context", "--kubeconfig", "-f",
                             "--filename", "--pod-running-timeout"})


def _into_running(argv: list[str], i: int, env: list[tuple[str, str]]) -> Wrapped | None:
    """The command that `docker exec` / `podman exec`, `kubectl exec` or `hf jobs run` at argv[i] runs; else None."""
    head = tuple(argv[i:i + 3])
    if head[:2] in (*((p, "exec") for p in _CONTAINER_PROGRAMS), ("kubectl", "exec")):
        valued, j = (_KUBECTL_VALUED if head[0] == "kubectl" else _EXEC_VALUED), i + 2
    elif head == ("hf", "jobs", "run"):
        valued, j = None, i + 3
    else:
        return None
    while j < len(argv) and argv[j].startswith("-") and argv[j] != "--":
        tok = argv[j]
        name, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        takes = name not in ("-d", "--detach", "-i", "-t", "-it", "--tty", "--stdin", "--privileged", "-q",
                             "--quiet") if valued is None else name in valued
        value = inline if eq else argv[j + 1] if takes and j + 1 < len(argv) else ""
        if name in ("-e", "--env") and "=" in value:
            env.append(tuple(value.split("=", 1)))  # type: ignore[arg-type]
        j += 2 if takes and not eq else 1
    if head[0] == "kubectl":  # kubectl exec POD -- COMMAND (the pod may also come after the --)
        if "--" not in argv[j:]:
            raise SettingsError("kubectl exec: give the command after --")
        k = argv.index("--", j)
        return Wrapped(tuple(argv[:k + 1]), (), tuple(argv[k + 1:]), tuple(env))
    if j >= len(argv):
        raise SettingsError(f"{' '.join(head[:2 if valued is not None else 3])}: no "
                            f"{'image' if valued is None else 'container'} given")
    rest = tuple(argv[j + 1:])
    if valued is None and not rest:
        own = image_entrypoint(argv[j])
        if own is None:
            raise OomkitError(f"the image {argv[j]!r} names no engine oomkit knows: give the engine command after the "
                              "image")
        return Wrapped(tuple(argv[:j + 1]), own, (), tuple(env), argv[j])
    if not rest:
        raise SettingsError(f"{' '.join(head[:2])}: no command given after the container")
    return Wrapped(tuple(argv[:j + 1]), (), rest, tuple(env), argv[j] if valued is None else None)


def image_entrypoint(image: str) -> tuple[str, ...] | None:
    """The program an engine image runs when no command follows it (each project's Dockerfile ENTRYPOINT/CMD):
    llama.cpp .devops/*.Dockerfile (server: /app/llama-server; light: /app/llama-cli), vLLM docker/Dockerfile
    (vllm-openai: `vllm serve`; `python3 -m vllm.entrypoints.openai.api_server` before 0.7, which takes the same
    flags), Ollama Dockerfile (ENTRYPOINT /bin/ollama, CMD serve). SGLang's images have no entrypoint: the command
    follows the image."""
    image = image.partition("@")[0]  # `...:server-cuda@sha256:...`: the digest pins the tag's image
    repo, _, tag = image.rpartition(":") if ":" in image.rpartition("/")[2] else (image, "", "")
    repo = repo.lower()
    if repo.endswith("/llama.cpp") or repo == "llama.cpp":
        if tag.startswith("server"):
            return ("llama-server",)
        if tag.startswith("light"):
            return ("llama-cli",)
        if tag.startswith("full"):
            return ("tools.sh",)  # its first argument picks the program (_TOOLS_SH)
        return None
    if repo.endswith("vllm/vllm-openai") or repo.endswith("vllm-openai"):
        return ("vllm", "serve")
    if repo.endswith("ollama/ollama"):
        return ("ollama",)
    return None


def _engine_image_without_entrypoint(image: str) -> bool:
    """An engine's own image that has no ENTRYPOINT (image_entrypoint is None for it): SGLang's (lmsysorg/sglang,
    docker/Dockerfile: no ENTRYPOINT) and llama.cpp's with a tag other than server / light / full."""
    image = image.partition("@")[0]
    repo = (image.rpartition(":")[0] if ":" in image.rpartition("/")[2] else image).lower()
    return repo.endswith("lmsysorg/sglang") or repo.endswith("/llama.cpp") or repo == "llama.cpp"


@dataclass(frozen=True)
class Wrapped:
    """A command line split at its wrapper: prefix (the `sudo ...` / `docker run ... IMAGE` tokens, as typed),
    entrypoint (the engine program the image runs when it is not typed: the image's own or --entrypoint's), argv
    (the engine's own command line as typed after the prefix), env (the variables the wrapper sets: `VAR=v sudo`,
    `docker run -e K=V`), image (the container image; None without a container)."""

    prefix: tuple[str, ...] = ()
    entrypoint: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    image: str | None = None

    @property
    def engine_argv(self) -> list[str]:
        return [*self.entrypoint, *self.argv]


# `docker run -v HOST:CONTAINER[:OPTS]` / `--volume`, `--mount type=bind,source=HOST,target=CONTAINER` (docker/cli
# opts/volume.go and opts/mount.go; podman's run the same): a model folder bound whole at a mount point
# (`-v /models/qwq-32b-gptq-int8:/model` ... `vllm serve /model`) has no name of its own in the container; its
# name is the host folder's. A path below the mount point keeps the engine's reading, which names the model.
_VOLUME_OPTIONS = frozenset({"ro", "rw", "z", "Z", "shared", "slave", "private", "rshared", "rslave", "rprivate",
                             "nocopy", "consistent", "cached", "delegated"})


def _binds(prefix: Sequence[str]) -> list[tuple[str, str]]:
    """The (host, container) folders a `docker run` prefix binds, in order."""
    out: list[tuple[str, str]] = []
    for k, a in enumerate(prefix):
        name, eq, inline = a.partition("=")
        if a in ("-v", "--volume", "--mount") and k + 1 < len(prefix):
            flag, spec = a, prefix[k + 1]
        elif name in ("--volume", "--mount") and eq:
            flag, spec = name, inline
        elif a.startswith("-v") and len(a) > 2 and a[2] != "-":
            flag, spec = "-v", a[2:]
        else:
            continue
        if flag == "--mount":
            kv = dict(p.partition("=")[::2] for p in spec.split(","))
            host, into = kv.get("source", kv.get("src", "")), kv.get("target", kv.get("destination", kv.get("dst", "")))
            if kv.get("type", "volume") != "bind":
                continue
        else:
            parts = spec.split(":")
            if len(parts) > 2 and set(parts[-1].split(",")) <= _VOLUME_OPTIONS:
                parts = parts[:-1]
            host, into = ":".join(parts[:-1]), parts[-1]
        if host and into.startswith("/") and ("/" in host or "\\" in host or host.startswith((".", "~"))):
            out.append((host, into))
    return out


def on_the_host(path: str | None, prefix: Sequence[str]) -> str | None:
    """A model path the engine reads inside the container that is a bind's mount point itself -> the host folder
    bound there (the last bind at that point); any other path as given."""
    if not path or not path.startswith("/"):
        return path
    for host, into in reversed(_binds(prefix)):
        if path.rstrip("/") == (into.rstrip("/") or "/"):
            return host
    return path


def unwrap(argv: Sequence[str]) -> Wrapped:
    """argv -> the wrapper and the engine command it runs. Without a wrapper: Wrapped(argv=argv). A container
    whose image runs no engine oomkit knows, with no command after it, is an error naming the image."""
    argv = list(argv)
    i = 0
    env: list[tuple[str, str]] = []
    while True:  # [VAR=v ...] sudo|nice|nohup|exec|time [their options] ..., in any nesting
        # a wrapper named by its path is the same program (`/usr/bin/numactl --cpunodebind=0 /usr/bin/llama-server`,
        # ggml-org/llama.cpp#23889): the shell runs the file, which is that wrapper
        k = env_options_end(argv, i) - i
        while i + k < len(argv) and _ASSIGNMENT.fullmatch(argv[i + k]):
            k += 1
        runner = tuple(argv[i + k:i + k + 2])
        wrapper = program_name(argv[i + k]) if i + k < len(argv) else ""
        if i + k >= len(argv) or (wrapper not in _PROCESS_WRAPPERS and runner not in _RUNNERS):
            break
        env += [tuple(a.partition("=")[::2]) for a in argv[i:i + k] if _ASSIGNMENT.fullmatch(a)]
        if runner in _RUNNERS:
            valued = _RUNNERS[runner]
            i += k + 2
        else:
            valued = _PROCESS_WRAPPERS[wrapper]
            i += k + 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
            i += 2 if argv[i] in valued else 1
        if i < len(argv) and argv[i] == "--":
            i += 1
    if (into := _into_running(argv, i, env)) is not None:
        return into
    if i >= len(argv) or argv[i] not in _CONTAINER_PROGRAMS or i + 1 >= len(argv) or argv[i + 1] != "run":
        return Wrapped(prefix=tuple(argv[:i]), argv=tuple(argv[i:]), env=tuple(env))
    j = i + 2
    entrypoint: str | None = None
    while j < len(argv) and argv[j].startswith("-") and argv[j] != "-":
        tok = argv[j]
        name, eq, inline = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        if not eq and not tok.startswith("--") and len(tok) > 2 and tok[:2] in _CONTAINER_VALUED:
            name, inline, eq = tok[:2], tok[2:], "="  # pflag: -p8000:8000, -eKEY=V
        if name in _CONTAINER_VALUED:
            if eq:
                value = inline
                j += 1
            elif j + 1 < len(argv):
                value = argv[j + 1]
                j += 2
            else:
                raise SettingsError(f"{argv[i]} run: flag needs an argument: {tok}")
            if name in ("-e", "--env"):
                key, has, val = value.partition("=")
                if has:
                    env.append((key, val))
            elif name == "--entrypoint":
                entrypoint = value
        else:
            j += 1  # a switch (--rm, -d, -it, --privileged, ...)
    if j >= len(argv):
        raise SettingsError(f"{argv[i]} run: no image given")
    image = argv[j]
    rest = argv[j + 1:]
    prefix = tuple(argv[:j + 1])
    if entrypoint is not None:
        return Wrapped(prefix, (entrypoint,), tuple(rest), tuple(env), image)
    own = image_entrypoint(image)
    if own is None:
        if not rest:
            raise OomkitError(f"the image {image!r} names no engine oomkit knows: give the engine command after the "
                              "image, or the engine's own command line")
        if rest[0].startswith("-") and not _engine_image_without_entrypoint(image):
            # `docker run [OPTIONS] IMAGE [COMMAND] [ARG...]` (docker/cli run.go): words after the image that open
            # with a flag are arguments to the image's own ENTRYPOINT, which this image does not name
            # (NVIDIA-NeMo/Curator#1653: `... nvcr.io/nvidian/curator-qwen3-omni:latest --input_path ...`); an
            # engine's image with no ENTRYPOINT (SGLang's, llama.cpp's untagged) runs the flag as its command
            raise OomkitError(f"the image {image!r} names no engine oomkit knows, and {rest[0]!r} after it is an "
                              "argument to the image's own entrypoint: give the engine command after the image, or "
                              "the engine's own command line")
        return Wrapped(prefix, (), tuple(rest), tuple(env), image)
    if own == ("vllm", "serve") and rest and re.match(r"(python[\d.]*|vllm)$", rest[0].rpartition("/")[2]):
        # the image's ENTRYPOINT already is `vllm serve`: a command after the image becomes its arguments
        raise SettingsError(f"the image {image!r} runs `vllm serve` itself: give its flags after the image "
                            f"(--model ...), or --entrypoint {rest[0]} to run {' '.join(rest[:3])}")
    if own == ("tools.sh",):
        if not rest or rest[0] not in _TOOLS_SH:
            raise OomkitError(f"the image {image!r} runs tools.sh, which needs --run, --server, --bench or --perplexity "
                              "first to start a llama.cpp program")
        return Wrapped((*prefix, rest[0]), (_TOOLS_SH[rest[0]],), tuple(rest[1:]), tuple(env), image)
    if own == ("ollama",) and not rest:
        return Wrapped(prefix, ("ollama", "serve"), (), tuple(env), image)
    return Wrapped(prefix, own, tuple(rest), tuple(env), image)


def program_name(argv0: str) -> str:
    """The program as the shell finds it: the last path part, either separator (`.\\llama-server.exe` typed in
    PowerShell, `./build/bin/llama-server`), without Windows' `.exe`."""
    name = re.split(r"[\\/]", argv0)[-1]
    return name[:-4] if name.lower().endswith(".exe") else name


# llama.cpp's unified `llama` executable (PR #23296, app/llama.cpp `cmds`): `llama serve` runs llama-server's main
# with the arguments after the command, `llama cli` llama-cli's, `llama completion` llama-completion's and `llama
# bench` llama-bench's, each under its aliases (server, client, complete); `llama serve --help` prints what
# `llama-server --help` does
LLAMA_APP_COMMANDS = {"serve": "llama-server", "server": "llama-server", "cli": "llama-cli", "client": "llama-cli",
                      "completion": "llama-completion", "complete": "llama-completion", "bench": "llama-bench"}
