"""An abbreviated long flag read as the chosen release's parser reads it. SGLang's and vLLM's parsers are argparse
parsers with allow_abbrev on (argparse.py ArgumentParser._parse_optional / _get_option_tuples): a prefix names the one
long option of *that* parser it begins, and is "ambiguous option" only when two of that parser's options begin with
it. oomkit's flag tables are the union of the releases read (engines/data/sglang_flags.json, vllm_flags.json), so an
abbreviation of flags of different releases whose candidates read alike (same kind of value, same settings) is kept
with its candidates and matched against the release chosen (engines/release_flags.resolve_abbreviations); one whose
candidates read differently is refused as the union's ambiguity, as before.

Boundaries, from the tables read from the wheels: SGLang --disable-overlap-cg-plan is in 0.4.7.post1 to 0.4.9 only
(--disable-overlap-schedule in every release read: Agent-RL/ReCall#43 ran `--disable-overlap` on 0.4.5); vLLM
--trust-request-chat-template first in 0.11.0 (--trust-remote-code in every release)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.cmdline import parse_command
from oomkit.engines.sglang.args import flag_takes_value
from oomkit.engines.sglang.kv import check_release_flags
from oomkit.engines.vllm.config import _release_flags
from oomkit.engines.vllm.settings import parse_version
from oomkit.errors import OomkitError


def _sglang(*flags: str, version: str | None = None):
    s = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-1.5B-Instruct", *flags],
                      env={}).settings
    return s if version is None else replace(s, engine_version=version)


@pytest.mark.parametrize("version", ["0.4.0", "0.4.5", "0.4.7", "0.4.10", "0.5.23", None])
def test_sglang_an_abbreviation_unique_in_the_release_is_read(version):
    s = _sglang("--tp", "4", "--disable-overlap", "--context-length", "6000", version=version)
    assert s.abbreviations == (("--disable-overlap", "--disable-overlap-cg-plan --disable-overlap-schedule"),)
    assert (s.tp_size, s.context_length) == (4, 6000)  # the flags after it read as before
    check_release_flags(s)  # SGLang's default release (the newest) has only --disable-overlap-schedule


@pytest.mark.parametrize("version", ["0.4.7.post1", "0.4.8", "0.4.9"])
def test_sglang_an_abbreviation_ambiguous_in_the_release_is_refused_as_argparse_does(version):
    s = _sglang("--disable-overlap", version=version)
    with pytest.raises(OomkitError, match="launch_server.py: error: ambiguous option: --disable-overlap could match "
                                          "--disable-overlap-cg-plan, --disable-overlap-schedule"):
        check_release_flags(s)


def test_sglang_an_abbreviation_of_flags_that_read_differently_is_refused_when_parsed():
    # --disable-cuda: --disable-cuda-graph and --disable-cuda-graph-padding, two different settings
    with pytest.raises(OomkitError, match="ambiguous option: --disable-cuda could match"):
        _sglang("--disable-cuda")


def test_sglang_a_kept_abbreviation_takes_its_candidates_value():
    assert flag_takes_value("--disable-overlap", None) is False  # switches
    assert flag_takes_value("--tp", "4") is True
    assert flag_takes_value("--disable-cuda", None) is False  # ambiguous whatever the release


def _vllm(*flags: str, version: str):
    s = replace(parse_command(["vllm", "serve", "Qwen/Qwen3-8B", *flags], {}).settings, engine_version=version)
    return _release_flags(s, parse_version(version))


@pytest.mark.parametrize("version", ["0.5.4", "0.8.5.post1", "0.10.2"])
def test_vllm_an_abbreviation_unique_in_the_release_is_read(version):
    assert _vllm("--trust", "--max-model-len", "4096", version=version) == []


@pytest.mark.parametrize("version", ["0.11.0", "0.34.0"])
def test_vllm_an_abbreviation_ambiguous_in_the_release_is_refused_as_argparse_does(version):
    with pytest.raises(OomkitError, match="vllm serve: error: ambiguous option: --trust could match "
                                          "--trust-remote-code, --trust-request-chat-template"):
        _vllm("--trust", version=version)


def test_vllm_an_abbreviation_of_flags_that_read_differently_is_refused_when_parsed():
    with pytest.raises(OomkitError, match="ambiguous option: --max-num could match"):
        parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--max-num", "8"], {})


def test_a_refused_abbreviation_names_the_releases_that_read_it_as_one_flag():
    # --context: --context-length alone up to 0.5.20, --context-bucket beside it after; the two set different things
    with pytest.raises(OomkitError, match=r"could match --context-bucket, --context-length \(the parsers of 0\.3\.6 "
                                          r"to 0\.5\.20 read it as --context-length; .*give the full flag\)"):
        _sglang("--context", "6000")
    with pytest.raises(OomkitError) as e:  # ambiguous in every release: argparse's words alone
        _sglang("--disable-cuda")
    assert e.value.args[0].endswith("could match --disable-cuda-graph, --disable-cuda-graph-padding")
