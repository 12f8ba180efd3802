"""Reading command-line flags and variables the way the engines' own parsers do, and checking what they give.

Every number that enters from a flag, an environment variable or an API argument is read here once, with the
parser of the program it belongs to, so oomkit accepts what that program accepts and refuses what it refuses:

  llama.cpp   std::stoi / std::stof (common/arg.cpp common_params_parse_ex: handler_int(std::stoi(value)), also
              for its LLAMA_ARG_* variables): leading blanks skipped, the number ends at the first other
              character ("12abc" is 12), no digit at all or a value outside int32 / float is an error
  Ollama      Go's strconv.ParseUint / ParseInt (envconfig.Uint, api.FormatParams): ASCII digits only, a sign
              only for ParseInt, no blanks, no underscores in base 10
  Python      int() / float() as argparse's type=int / type=float call them (vLLM, SGLang, mlx_lm, transformers):
              blanks, `1_024` and non-ASCII decimal digits are accepted, as those programs accept them

Then `check_settings` holds a settings object against its engine's table of limits (Settings.LIMITS): the
range each program accepts (or a ceiling oomkit sets where the program has none and the arithmetic would run
away), and the types the fields must have. Each refusal is a SettingsError naming the field or flag, the value
and the allowed range, in one line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any

from .errors import OomkitError, SettingsError

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
FLT_MAX = 3.4028234663852886e38  # the largest finite float32 (std::stof's range)
FLT_MIN = 1.1754943508222875e-38  # the smallest normal float32: strtof sets ERANGE below it (glibc)


def flag_value(args: list[str], i: int, inline: str | None, missing: str) -> tuple[str, int]:
    """The value of the flag at args[i]: its `--flag=value` part (`inline`) or the next argument.
    -> (value, index of the last argument it used); `missing` is the error when there is none."""
    if inline is not None:
        return inline, i
    if i + 1 < len(args):
        return args[i + 1], i + 1
    raise OomkitError(missing)


def _shown(text: Any, limit: int = 40) -> str:
    s = repr(text)
    return s if len(s) <= limit else s[: limit - 4] + "...'"


# ---------------------------------------------------------------------------------------------------------
# C++: std::stoi and std::stof (llama.cpp)

# isspace in the C locale; [0-9] is ASCII only (strtol does not read other scripts' digits)
_C_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_C_FLOAT = re.compile(
    r"[ \t\n\v\f\r]*([+-]?)(?:"
    r"(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"  # hex float
    r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"  # decimal
    r"|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"  # inf, infinity
    r"|([nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"  # nan, nan(chars)
    r")")


def stoi(name: str, text: str, program: str = "llama.cpp") -> int:
    """std::stoi(text): strtol in base 10 into an int. Leading blanks are skipped and the number ends at the
    first character that is not a digit; no digit at all is std::invalid_argument, a value outside int32
    std::out_of_range, and llama.cpp stops on either. Where the program would read less than was typed
    ("-c 1_024" is 1 to it, "12abc" 12) oomkit refuses too, saying what the program would have read: an
    estimate for -c 1 is no answer to -c 1_024."""
    m = _C_INT.match(str(text))
    if m is None:
        raise SettingsError(f"{name} {_shown(text)}: not an integer ({program} reads it with std::stoi)")
    n = int(m.group(1))
    _whole(name, text, m.end(), n, program, "std::stoi")
    if not INT32_MIN <= n <= INT32_MAX:
        raise SettingsError(f"{name} {_shown(text)}: out of range ({program} reads a 32-bit integer, "
                            f"{INT32_MIN} to {INT32_MAX})")
    return n


def stof(name: str, text: str, program: str = "llama.cpp") -> float:
    """std::stof(text): strtof. Blanks skipped, the number ends at the first character that cannot continue it;
    "inf" and "nan" are numbers to it; no number at all, or one outside float32 (ERANGE), is an error."""
    m = _C_FLOAT.match(str(text))
    if m is None:
        raise SettingsError(f"{name} {_shown(text)}: not a number ({program} reads it with std::stof)")
    sign = -1.0 if m.group(1) == "-" else 1.0
    hexa, dec, inf, _nan = m.group(2), m.group(3), m.group(4), m.group(5)
    if hexa is not None:
        body = hexa if re.search(r"[pP]", hexa) else hexa + "p0"
        x = float.fromhex(body)
    elif dec is not None:
        x = float(dec)
    else:
        x = math.inf if inf is not None else math.nan
        _whole(name, text, m.end(), sign * x, program, "std::stof")
        return sign * x
    if x > FLT_MAX or (0 < x < FLT_MIN):
        raise SettingsError(f"{name} {_shown(text)}: out of range for a 32-bit float ({program} reads it with "
                            "std::stof)")
    _whole(name, text, m.end(), sign * x, program, "std::stof")
    return sign * x


def _whole(name: str, text: str, end: int, read: Any, program: str, parser: str) -> None:
    """Refuse a value the C++ parser reads only the start of (trailing blanks aside)."""
    rest = str(text)[end:]
    if rest.strip(" \t\n\v\f\r"):
        raise SettingsError(f"{name} {_shown(text)}: {program} would read this as {read} ({parser} stops at "
                            f"{rest[0]!r}); write the number alone")


# ---------------------------------------------------------------------------------------------------------
# Go: strconv (Ollama)

_GO_UINT = re.compile(r"[0-9]+")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_uint(text: str, bits: int = 64) -> int | None:
    """strconv.ParseUint(text, 10, bits): ASCII digits only, no sign, no blanks, no underscores; None where Go
    returns an error (syntax, or a value over 2^bits - 1)."""
    s = str(text)
    if not _GO_UINT.fullmatch(s) or len(s) > 25:
        return None
    n = int(s)
    return n if n < (1 << bits) else None


def go_int(text: str, bits: int = 64) -> int | None:
    """strconv.ParseInt(text, 10, bits) (and Atoi): an optional sign, then ASCII digits; None on Go's error."""
    s = str(text)
    if not _GO_INT.fullmatch(s) or len(s) > 25:
        return None
    n = int(s)
    return n if -(1 << (bits - 1)) <= n < (1 << (bits - 1)) else None


# ---------------------------------------------------------------------------------------------------------
# Python: argparse type=int / type=float (vLLM, SGLang, mlx_lm, transformers)


def py_int(name: str, text: str, program: str) -> int:
    """argparse's type=int: int(text), which takes blanks, a sign, `1_024` and any script's decimal digits."""
    try:
        return int(text)
    except (ValueError, TypeError):
        raise SettingsError(f"{program}: error: argument {name}: invalid int value: {_shown(text)}") from None


def py_float(name: str, text: str, program: str) -> float:
    """argparse's type=float: float(text), which takes "inf", "nan" and "1e400" (= inf) as numbers."""
    try:
        return float(text)
    except (ValueError, TypeError):
        raise SettingsError(f"{program}: error: argument {name}: invalid float value: {_shown(text)}") from None


# ---------------------------------------------------------------------------------------------------------
# Ranges


@dataclass(frozen=True)
class Limit:
    """What one settings field may hold: lo <= value <= hi (None: no bound on that side), or one of `special`
    (sentinels such as -1 = auto). `flag`: the option as users type it; `allowed`: the range in words, when
    lo..hi alone would mislead."""

    lo: float | None = None
    hi: float | None = None
    flag: str = ""
    special: tuple[Any, ...] = ()
    allowed: str = ""
    open_lo: bool = False  # lo itself is out (gpu_memory_utilization in (0, 1])

    def words(self) -> str:
        if self.allowed:
            return self.allowed
        if self.lo is not None and self.hi is not None:
            text = f"({_num(self.lo)}, {_num(self.hi)}]" if self.open_lo else f"{_num(self.lo)} to {_num(self.hi)}"
        elif self.lo is not None:
            text = f"more than {_num(self.lo)}" if self.open_lo else f"at least {_num(self.lo)}"
        else:
            text = f"at most {_num(self.hi)}"
        return text if not self.special else f"{' or '.join(map(_num, self.special))}, or {text}"

    def holds(self, value: float) -> bool:
        if value in self.special:
            return True
        if isinstance(value, float) and not math.isfinite(value):
            return False
        above = self.lo is None or (value > self.lo if self.open_lo else value >= self.lo)
        return above and (self.hi is None or value <= self.hi)


def _num(x: Any) -> str:
    if isinstance(x, int) and abs(x) >= 10**18:
        digits = str(abs(x)) if abs(x) < 10**4000 else "9" * 4000
        return f"{'-' if x < 0 else ''}{digits[0]}.{digits[1:3]}e+{len(digits) - 1}"
    if isinstance(x, float) and abs(x) >= 1e18:
        return f"{x:.3g}"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:,}" if isinstance(x, int) and abs(x) >= 100_000 else str(x)


def in_range(name: str, value: Any, limit: Limit, program: str = "") -> Any:
    """`value` if `limit` holds it, else a SettingsError naming `name`, the value and the allowed range."""
    if not limit.holds(value):
        who = f"; {program} takes {limit.words()}" if program else f"; allowed: {limit.words()}"
        raise SettingsError(f"{name} {_num(value) if not isinstance(value, str) else repr(value)}: out of range{who}")
    return value


_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def _expected(annotation: Any) -> tuple[tuple[type, ...], bool] | None:
    """A field annotation ("int", "float | None", ...) -> (accepted types, None allowed); None: not checked."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    parts = [p.strip() for p in text.split("|")]
    optional = "None" in parts
    parts = [p for p in parts if p != "None"]
    if len(parts) != 1 or parts[0] not in _TYPES:
        return None
    return _TYPES[parts[0]], optional


_TUPLE = re.compile(r"tuple\[(?:(\w+)|tuple\[([\w, ]+)\]), \.\.\.\]")


def _check_tuple(name: str, annotation: str, value: Any) -> None:
    """A tuple field ("tuple[float, ...]", "tuple[tuple[str, str], ...]"): a tuple of those, each part typed."""
    m = _TUPLE.fullmatch(annotation.replace(" | None", ""))
    if m is None:
        return
    if value is None and "None" in annotation:
        return
    if not isinstance(value, tuple):
        raise SettingsError(f"{name}: {_shown(value)} is {_a(value)}; give a tuple")
    shape = [m.group(1)] if m.group(1) else [p.strip() for p in m.group(2).split(",")]
    for item in value:
        parts = (item,) if m.group(1) else item
        if m.group(2) and (not isinstance(item, tuple) or len(item) != len(shape)):
            raise SettingsError(f"{name}: each entry is a tuple of {', '.join(shape)}; got {_shown(item)}")
        for part, want in zip(parts, shape, strict=True):
            types = _TYPES.get(want)
            if types is not None and (not isinstance(part, types) or (isinstance(part, bool) and bool not in types)):
                raise SettingsError(f"{name}: {_shown(part)} is {_a(part)}; give {_type_words(types)}")


def check_settings(settings: Any, program: str = "") -> Any:
    """`settings` (an engine's frozen dataclass) if each field has its annotated type (a bool is no int; a float
    field takes an int; NaN and infinity are no setting) and its LIMITS range, else a SettingsError for the first
    that does not. -> settings, so a parser can return check_settings(Settings(...))."""
    limits: dict[str, Limit] = getattr(type(settings), "LIMITS", {}) or {}
    program = program or getattr(type(settings), "PROGRAM", "")
    for f in fields(settings):
        value = getattr(settings, f.name)
        limit = limits.get(f.name)
        name = f"{f.name} ({limit.flag})" if limit is not None and limit.flag else f.name
        if isinstance(f.type, str) and f.type.startswith("tuple["):
            _check_tuple(name, f.type, value)
        want = _expected(f.type)
        if want is not None:
            types, optional = want
            if value is None:
                if not optional:
                    raise SettingsError(f"{name}: None is not a value here; give {_type_words(types)}")
                continue
            if isinstance(value, bool) and bool not in types:
                raise SettingsError(f"{name}: {value!r} is a boolean; give {_type_words(types)}")
            if not isinstance(value, types):
                raise SettingsError(f"{name}: {_shown(value)} is {_a(value)}; give "
                                    f"{_type_words(types)}")
            if isinstance(value, float) and not math.isfinite(value):
                raise SettingsError(f"{name}: {value} is not a finite number")
        if limit is None or value is None:
            continue
        for item in (value if isinstance(value, (tuple, list)) else (value,)):  # a tuple: each part (-ts 3,1)
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                if isinstance(value, (tuple, list)):
                    raise SettingsError(f"{name}: {_shown(item)} is {_a(item)}; give numbers")
                continue
            if isinstance(item, float) and not math.isfinite(item):
                raise SettingsError(f"{name} {item}: not a finite number; {program or 'the engine'} takes "
                                    f"{limit.words()}")
            in_range(name, item, limit, program)
    return settings


def _a(value: Any) -> str:
    """"a float", "an int": the type of `value` with its article."""
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _type_words(types: tuple[type, ...]) -> str:
    if types == (int, float):
        return "a number"
    return {int: "an integer", bool: "True or False", str: "a string"}.get(types[0], types[0].__name__)
