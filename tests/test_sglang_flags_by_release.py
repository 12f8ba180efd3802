"""SGLang flags held against the release that runs them: engines/data/sglang_flags.json (tools/build_sglang_flags.py,
from the wheels' sglang/srt/server_args.py and arg_groups/fields) keeps, per flag, the releases read whose parser
has it; a flag the chosen release does not define is refused as its argparse refuses it.

Each boundary was read in the two wheels named (pip download --no-deps sglang==X): the flag is defined in the first
and not in the second."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from oomkit.engines.cmdline import parse_command
from oomkit.engines.sglang.kv import check_release_flags
from oomkit.engines.sglang.settings import NEWEST
from oomkit.errors import OomkitError

TABLE = Path(__file__).resolve().parents[1] / "src" / "oomkit" / "engines" / "data" / "sglang_flags.json"


def _settings(*flags: str, version: str | None = None):
    s = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", *flags],
                      env={}).settings
    return s if version is None else replace(s, engine_version=version)


REMOVED = [
    (["--enable-ep-moe"], "0.5.4", "0.5.4.post1"),
    (["--enable-deepep-moe"], "0.5.4", "0.5.4.post1"),
    (["--disable-flashinfer"], "0.4.1", "0.4.2"),
    # 0.5.20 moved the CUDA graph options to arg_groups/fields/exec_.py: --cuda-graph-max-bs-{decode,prefill}
    (["--cuda-graph-max-bs", "8"], "0.5.19", "0.5.20"),
]


@pytest.mark.parametrize("argv,last,gone", REMOVED, ids=[r[0][0] for r in REMOVED])
def test_a_removed_flag_is_refused_from_the_release_that_dropped_it(argv, last, gone):
    check_release_flags(_settings(*argv, version=last))
    with pytest.raises(OomkitError) as e:
        check_release_flags(_settings(*argv, version=gone))
    err = str(e.value)
    assert err.startswith(f"launch_server.py: error: unrecognized arguments: {argv[0]} (SGLang {gone} has no such "
                          "flag"), err
    assert f"last read in the {last} wheel" in err, err


ADDED = [
    (["--enable-dp-lm-head"], "0.4.6.post4", "0.4.6.post3"),
    (["--pp-size", "2"], "0.4.6.post2", "0.4.6.post1"),
    (["--max-mamba-cache-size", "64"], "0.5.2", "0.5.1"),
]


@pytest.mark.parametrize("argv,first,before", ADDED, ids=[a[0][0] for a in ADDED])
def test_a_new_flag_is_refused_by_older_releases(argv, first, before):
    check_release_flags(_settings(*argv, version=first))
    with pytest.raises(OomkitError, match=rf"unrecognized arguments: {argv[0]} \(SGLang {before} has no such flag: "
                                          rf"{argv[0]}: first in {first}"):
        check_release_flags(_settings(*argv, version=before))


def test_newest_release_and_the_table():
    s = _settings("--tp-size", "2", "--mem-fraction-static", "0.8", "--enable-dp-attention")
    assert s.engine_version == NEWEST
    check_release_flags(s)
    with pytest.raises(OomkitError, match="unrecognized arguments: --enable-ep-moe"):
        check_release_flags(_settings("--enable-ep-moe"))
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    for rel in ("0.4.0", "0.4.6", "0.5.0rc2", "0.5.5", "0.5.23"):
        assert rel in data["releases"], rel
    assert set(data["spans"]) == set(data["flags"])


# The command oomkit writes (fit, plan) in the spelling the release's parser prefers. 0.5.14's server_args.py
# add_cli_args turns --cuda-graph-max-bs and --cuda-graph-bs into DeprecatedAliasStoreAction aliases of
# --cuda-graph-max-bs-decode / --cuda-graph-bs-decode (same dest) and --disable-piecewise-cuda-graph into a
# DeprecatedStoreConstAction for --cuda-graph-backend-prefill=disabled (what --disable-prefill-cuda-graph gives);
# each prints "'<flag>' is deprecated and will be removed in a future release" at launch (argparse_actions.py).
# 0.5.20 has only the new spellings; --cuda-graph-bs is first in 0.4.2, --disable-piecewise-cuda-graph in 0.5.10
# (opt-in prefill graphs before: the field is moot there). Wheels 0.4.1, 0.4.2, 0.5.9, 0.5.10, 0.5.13, 0.5.14,
# 0.5.19, 0.5.20, 0.5.23 read.
WRITTEN = [
    ("0.4.2", ["--cuda-graph-max-bs", "64", "--cuda-graph-bs", "1", "2", "4", "8"]),
    ("0.5.9", ["--cuda-graph-max-bs", "64", "--cuda-graph-bs", "1", "2", "4", "8"]),
    ("0.5.10", ["--cuda-graph-max-bs", "64", "--cuda-graph-bs", "1", "2", "4", "8", "--disable-piecewise-cuda-graph"]),
    ("0.5.13", ["--cuda-graph-max-bs", "64", "--cuda-graph-bs", "1", "2", "4", "8", "--disable-piecewise-cuda-graph"]),
    ("0.5.14", ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-bs-decode", "1", "2", "4", "8",
                "--disable-prefill-cuda-graph"]),
    ("0.5.19", ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-bs-decode", "1", "2", "4", "8",
                "--disable-prefill-cuda-graph"]),
    ("0.5.20", ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-bs-decode", "1", "2", "4", "8",
                "--disable-prefill-cuda-graph"]),
    ("0.5.23", ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-bs-decode", "1", "2", "4", "8",
                "--disable-prefill-cuda-graph"]),
]


@pytest.mark.parametrize("release,flags", WRITTEN, ids=[w[0] for w in WRITTEN])
def test_the_command_writes_the_release_s_own_cuda_graph_spellings(release, flags):
    from oomkit.engines.base import get_engine
    from oomkit.engines.sglang import SGLangSettings

    s = SGLangSettings(engine_version=release, cuda_graph_max_bs=64, cuda_graph_bs=(1, 2, 4, 8),
                       disable_piecewise_cuda_graph=True)
    argv = get_engine("sglang").command("Qwen/Qwen3-8B", s)
    assert argv[argv.index("Qwen/Qwen3-8B") + 1:] == flags
    back = replace(parse_command(argv, env={}).settings, engine_version=release)
    check_release_flags(back)  # every flag written is in that release's parser
    assert (back.cuda_graph_bs, back.cuda_graph_max_bs) == ((1, 2, 4, 8), 64)
    assert back.disable_piecewise_cuda_graph == ("--disable-piecewise-cuda-graph" in flags
                                                 or "--disable-prefill-cuda-graph" in flags)


def test_a_captured_list_the_release_cannot_take_is_refused_not_dropped():
    from oomkit.engines.base import get_engine
    from oomkit.engines.sglang import SGLangSettings
    from oomkit.errors import SettingsError

    with pytest.raises(SettingsError, match=r"cuda_graph_bs: SGLang 0.4.1 has no --cuda-graph-bs \(first in 0.4.2"):
        get_engine("sglang").command("Qwen/Qwen3-8B", SGLangSettings(engine_version="0.4.1", cuda_graph_bs=(1, 2)))


def test_a_rewrite_replaces_every_word_of_a_captured_list():
    from oomkit.engines.base import get_engine

    argv = ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--cuda-graph-bs", "1", "2", "4",
            "--port", "30000"]
    old = replace(parse_command(argv, env={}).settings, engine_version="0.5.16")
    out = get_engine("sglang").rewrite_command(argv, old, replace(old, cuda_graph_bs=(1, 2), cuda_graph_max_bs=8))
    # the user's spelling is kept where it is; a new field takes the release's own
    assert out[5:] == ["--cuda-graph-bs", "1", "2", "--port", "30000", "--cuda-graph-max-bs-decode", "8"]


# 0.5.22 and 0.5.23 server_args.py: --enable-dp-attention a DeprecatedStoreTrueAction ("Deprecated. Use --attn-dp-size
# <dp-size> instead of --dp-size <dp-size> --enable-dp-attention."); arg_groups/parallel_hook.py
# handle_deprecated_dp_attention resolves the old spelling to attn_dp_size = dp_size, dp_size = 1. 0.5.21's parser
# has no --attn-dp-size (first in 0.5.22).
@pytest.mark.parametrize("release,flags", [
    ("0.5.21", ["--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"]),
    ("0.5.22", ["--tp-size", "8", "--attn-dp-size", "8"]),
    ("0.5.23", ["--tp-size", "8", "--attn-dp-size", "8"]),
])
def test_dp_attention_is_written_in_the_release_s_spelling(release, flags):
    from oomkit.engines.base import get_engine
    from oomkit.engines.sglang import SGLangSettings

    s = SGLangSettings(engine_version=release, tp_size=8, dp_size=8, enable_dp_attention=True)
    argv = get_engine("sglang").command("deepseek-ai/DeepSeek-V3", s)
    assert argv[argv.index("deepseek-ai/DeepSeek-V3") + 1:] == flags
    back = replace(parse_command(argv, env={}).settings, engine_version=release)
    check_release_flags(back)
    assert (back.dp_size, back.enable_dp_attention) == (8, True)


def test_attn_dp_size_reads_as_dp_attention_and_goes_back_when_turned_off():
    from oomkit.engines.base import get_engine

    argv = ["python", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8",
            "--attn-dp-size", "8"]
    s = replace(parse_command(argv, env={}).settings, engine_version="0.5.23")
    assert (s.dp_size, s.enable_dp_attention) == (8, True)
    with pytest.raises(OomkitError, match="replicas of attention-DP groups are not modelled"):
        parse_command([*argv, "--dp-size", "2"], env={})
    out = get_engine("sglang").rewrite_command(argv, s, replace(s, enable_dp_attention=False, dp_size=2))
    assert out[5:] == ["--tp", "8", "--dp-size", "2"]
    with pytest.raises(OomkitError, match="unrecognized arguments: --attn-dp-size"):
        check_release_flags(replace(s, engine_version="0.5.21"))


# SGLang 0.5.19's server_args.py keeps renamed flags as DeprecatedAliasStoreAction aliases (arg_groups/
# argparse_actions.py: `def __init__(self, option_strings, dest, new_flag=None, **kwargs)`, no nargs of its own, so
# argparse's one value; "Deprecated alias that stores its value"), where DeprecatedAction / DeprecatedStoreTrueAction
# / DeprecatedStoreConstAction default nargs=0. The table had read every Deprecated* action as a switch, so the
# value was left over (sglang#16708: `--mamba-scheduler-strategy extra_buffer` -> "unrecognized arguments:
# extra_buffer"). Values from each flag's choices / type in 0.5.19's add_argument call.
ALIASES_WITH_A_VALUE = [
    ("--mamba-scheduler-strategy", "extra_buffer", "0.5.7"),  # type=str; a plain value from 0.5.7 (choices)
    ("--dsa-prefill-cp-mode", "round-robin-split", "0.5.13"),
    ("--nsa-prefill-cp-mode", "in-seq-split", "0.5.8"),
    ("--prefill-cp-mode", "in-seq-split", "0.5.10"),
    ("--nsa-decode-backend", "flashmla_sparse", "0.5.4"),
    ("--nsa-prefill-backend", "flashmla_sparse", "0.5.4"),
    ("--piecewise-cuda-graph-compiler", "eager", "0.5.4"),
    ("--piecewise-cuda-graph-max-tokens", "4096", "0.5.3.post2"),
    ("--speculative-dflash-draft-window-size", "8", "0.5.11"),
]


@pytest.mark.parametrize("flag,value,first", ALIASES_WITH_A_VALUE, ids=[a[0] for a in ALIASES_WITH_A_VALUE])
def test_a_deprecated_alias_takes_its_value(flag, value, first):
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    assert data["flags"][flag] == "value" and data["spans"][flag] == [[first, "0.5.19"]]
    for release in (first, "0.5.19"):
        check_release_flags(_settings(flag, value, "--port", "30000", version=release))
    with pytest.raises(OomkitError, match=rf"unrecognized arguments: {flag} \(SGLang 0.5.20 has no such flag"):
        check_release_flags(_settings(flag, value, version="0.5.20"))
