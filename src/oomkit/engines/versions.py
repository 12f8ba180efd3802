"""Engine releases and the eras between them: one reader for `--engine-version`, one table type for the releases
at which an engine's allocation rules changed.

Every engine names its eras after what changed, each with the first release that has the change and the source
that says so (the PR, the commit, the release note), e.g. vLLM's `Eras({"v1_default": (0, 8, 0), ...})`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import OomkitError

Version = tuple[int, ...]
_RELEASE = r"v?(\d+)\.(\d+)(?:\.(\d+))?"
NEWEST_WORDS = ("newest", "latest")


# The releases numbered with a fourth number, by engine (`what`): vLLM 0.9.0.1 and 0.10.1.1 (PyPI's vllm files,
# read 2026-12-07). No SGLang, transformers or mlx-lm release on PyPI, and no Ollama tag
# (engines/data/ollama_releases.json), has one; none is numbered 0.0.0.
FOUR_NUMBER_RELEASES: dict[str, tuple[Version, ...]] = {"vLLM": ((0, 9, 0, 1), (0, 10, 1, 1))}
_DEV_BUILD = re.compile(r"^(?:[.-]?dev\d*|\+)", re.IGNORECASE)
_MORE_NUMBERS = re.compile(r"v?\d+\.\d+\.\d+((?:\.\d+)+)(?![\w])")


def parse_release(text: str | None, newest: str, what: str, example: str, tail: str = r"(?:[.+-].*)?") -> Version:
    """A dotted release ("0.10.2", "v0.5.13") -> (major, minor, patch[, the numbers `tail` captures]).
    None, "newest" and "latest" mean `newest`; `tail` is the regex of what may follow (a suffix such as
    "-rc1", SGLang's ".post5"); `what` and `example` word the error ("cannot read vLLM version ...").
    A number no release of the engine has is refused, as a release older than the oldest modelled is (SGLang's,
    transformers' parse_version): 0.0.0, and more numbers than three where no release has them
    (FOUR_NUMBER_RELEASES: vLLM's 0.10.1.1 is read as 0.10.1, its 0.10.1.1.1.1 and 0.10.1.2 are refused)."""
    if text is None or not str(text).strip() or str(text).strip().lower() in NEWEST_WORDS:
        text = newest
    m = re.fullmatch(_RELEASE + tail, str(text).strip())
    if not m:
        raise OomkitError(f"cannot read {what} version {text!r}: expected {example}")
    v = tuple(int(g or 0) for g in m.groups())
    if not any(v[:3]):
        raise OomkitError(f"{what} {str(text).strip()}: no {what} release is numbered 0.0.0; give {example}")
    more = _MORE_NUMBERS.match(str(text).strip())
    # a development build (vLLM's "0.10.1.2.dev0+g1234abcd" of a GH200 log, between releases) runs the code of its
    # three numbers' line, as "0.11.1.dev5" does: read as those, not refused as a release number no release has
    if more is not None and not _DEV_BUILD.search(str(text).strip()[more.end(1):]):
        numbered = v[:3] + tuple(int(n) for n in more.group(1).split(".")[1:])
        known = FOUR_NUMBER_RELEASES.get(what, ())
        if numbered not in known:
            same = [version_str(k) for k in known if k[:3] == v[:3]]
            nearest = f"{version_str(v[:3])} or {', '.join(same)}" if same else version_str(v[:3])
            four = (f" ({what}'s four-number releases: {', '.join(map(version_str, known))})" if known else
                    " (its releases have three numbers)")
            raise OomkitError(f"{what} {str(text).strip()}: no {what} release has this number{four}; the nearest "
                              f"is {nearest}: give that")
    return v


def version_str(v: Version) -> str:
    return ".".join(map(str, v))


class Eras(Mapping[str, "Version | int"]):
    """Era name -> the first release (a version tuple, or a llama.cpp build number) that follows the new rule."""

    def __init__(self, firsts: Mapping[str, Version | int]):
        self._firsts = dict(firsts)

    def __getitem__(self, name: str) -> Version | int:
        return self._firsts[name]

    def __iter__(self):
        return iter(self._firsts)

    def __len__(self) -> int:
        return len(self._firsts)

    def reached(self, version: Version | int, name: str) -> bool:
        """Whether `version` has era `name`'s rule (a longer version compares on the era's own length)."""
        first = self._firsts[name]
        if isinstance(first, int):
            return version >= first
        return tuple(version)[: len(first)] >= first


# ---------------------------------------------------------------------------------------------------------
# llama.cpp names builds (b5913), not releases. A date reads as the build released that day, placed between
# these anchors: the release workflow's own winget submission (microsoft/winget-pkgs "New version:
# ggml.llamacpp version bNNNN", opened by ggml-bot-2 the day the tag is released) and issue logs that print
# their build on the day they were filed. The era builds of llamacpp.settings.ERAS are anchors too: each PR's merge
# commit, its count on master (the build number) on its commit date, so a date reads on the same side of each era
# as the build made that day from that commit. Releases ran about eight builds a day in 2025 and about seventeen a
# day by August-September 2026.
LLAMACPP_BUILD_DATES = (
    (5137, "2025-04-15"),  # PR #12801, daa422881 (ERAS mla_latent)
    (5312, "2025-05-08"),  # PR #13108, 6562e5a4d (ERAS encoder_no_kv)
    (5429, "2025-05-20"),  # PR #13194, e298d2fbd (ERAS iswa)
    (5440, "2025-05-21"),  # PR #13676, b44890df2 (ERAS phi3_swa_off)
    (5501, "2025-05-27"),  # microsoft/winget-pkgs#260091
    (5753, "2025-06-25"),  # winget-pkgs#268359
    (6027, "2025-07-30"),  # winget-pkgs#278887
    (6325, "2025-08-30"),  # PR #15434, e81b8e4b7 (ERAS fa_auto)
    (6337, "2025-09-01"),  # winget-pkgs#288898
    (6700, "2025-10-07"),  # winget-pkgs#301645
    (6925, "2025-11-02"),  # PR #16736, cd5e3b575 (ERAS np_auto)
    (6958, "2025-11-05"),  # PR #17017, 13b339bcd (ERAS np_auto_no_draft)
    (6975, "2025-11-07"),  # PR #17046, 16bcc1259 (ERAS pad_256_always)
    (7045, "2025-11-13"),  # winget-pkgs#312837
    (7079, "2025-11-16"),  # issue #17300: "llama-b7079-bin-win-cpu-x64", filed 2025-11-16 (winget-pkgs#313881: b7077)
    (7211, "2025-12-01"),  # winget-pkgs#318624
    (7407, "2025-12-15"),  # PR #16653, b1f3a6e5d (ERAS params_fit)
    (7433, "2025-12-16"),  # PR #17997, 7b1db3d3b (ERAS np_auto_asked)
    (7467, "2025-12-18"),  # PR #18148, 57c1e0564 (ERAS ngl_output_first)
    (7502, "2025-12-22"),  # winget-pkgs#325466 (issue #18160's log: b7446 on 2025-12-18)
    (7814, "2026-01-23"),  # winget-pkgs#333170
    (7832, "2026-01-25"),  # PR #19067, d9c6ce46f (ERAS mla_k_only)
    (7941, "2026-02-05"),  # winget-pkgs#336760
    (8184, "2026-03-02"),  # winget-pkgs#344338
    (8508, "2026-03-25"),  # winget-pkgs#352083
    (8808, "2026-04-16"),  # winget-pkgs#361350
    (9026, "2026-05-05"),  # winget-pkgs#368771 (issue #22800 at b9049 on 2026-05-07)
    (9264, "2026-05-21"),  # winget-pkgs#377534
    (9272, "2026-05-22"),  # issue #23527: "version: 9272 (1d7ab2b94)", filed 2026-05-22
    (9410, "2026-05-29"),  # PR #23764, 031ddb2e0 (ERAS kq_mask_f16)
    (9460, "2026-06-01"),  # PR #23861, de6f727aa (ERAS outputs_max)
    (9500, "2026-06-04"),  # winget-pkgs#383535
    (9859, "2026-07-02"),  # winget-pkgs#396740
    (10144, "2026-07-27"),  # winget-pkgs#408206
    (10453, "2026-08-17"),  # winget-pkgs#418701
    (10711, "2026-08-31"),  # winget-pkgs#426640
    (11015, "2026-09-17"),  # winget-pkgs#436442
)
_BUILDS_PER_DAY = 8  # before the first anchor
_BUILDS_PER_DAY_NOW = 17  # past the last: (11015 - 10144) / 52 days


def _days(date: str) -> int:
    import datetime as _dt  # lazy: only a dated --engine-version needs it

    try:
        return _dt.date.fromisoformat(date).toordinal()
    except ValueError:
        raise OomkitError(f"cannot read llama.cpp version {date!r}: expected a build tag such as b6500 or a date "
                          "such as 2025-06-01") from None


def llamacpp_build_on(date: str) -> int:
    """The llama.cpp build released on `date` (YYYY-MM-DD), interpolated between LLAMACPP_BUILD_DATES and
    extrapolated beyond them (eight builds a day before, seventeen after); a build within a few days of an era
    boundary may follow the other rule."""
    d = _days(date)
    pts = [(_days(day), b) for b, day in LLAMACPP_BUILD_DATES]
    if d <= pts[0][0]:
        return max(1, pts[0][1] - (pts[0][0] - d) * _BUILDS_PER_DAY)
    for (d0, b0), (d1, b1) in zip(pts, pts[1:], strict=False):
        if d <= d1:
            return b0 + round((b1 - b0) * (d - d0) / (d1 - d0))
    return pts[-1][1] + (d - pts[-1][0]) * _BUILDS_PER_DAY_NOW
