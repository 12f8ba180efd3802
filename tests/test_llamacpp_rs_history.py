"""Recurrent-state snapshots (n_rs_seq) by llama.cpp build: when each speculative type and each architecture got them.

Source: ggml-org/llama.cpp's master history (`git log -L '/need_n_rs_seq/,+12:common/common.h'`, `git log -L
'/llm_arch_supports_rs_rollback/,+16:src/llama-arch.cpp'`, `git log -S n_rs_seq`), read in a fork that carries
master's commits to 3f545becc (2026-08-22). A build's number is its commit's count on master (`git rev-list --count`):
255582687 (PR #22673) counts 9180, the build that "mainlined" MTP; 1d7ab2b94 counts 9272 and 15586e2d7 10298, as
issues #23527 and #26695 print them ("version: 9272 (1d7ab2b94)", "version: 10298 (15586e2d7)").

need_n_rs_seq (common/common.h), the draft types for which llama-server sets cparams.n_rs_seq = the draft's n_max:
    255582687  2026-05-16  b9180   PR #22673 "llama + spec: MTP Support"     draft-mtp (the function is new)
    b14e3fb90  2026-06-19  b9723   PR #24593 "spec: support eagle3 for qwen3.5 & 3.6"   + draft-eagle3
    d1b34251b  2026-06-28  b9831   PR #22105 "spec : add DFlash support"      + draft-dflash
    84075273c  2026-07-28  b10163  PR #25173 "spec: add DSpark speculative decoding"    + draft-dspark
Between b9180 and PR #23269 "llama : MTP clean-up" (d14ce3dab, 2026-05-19, b9235) common_init_result zeroed
n_rs_seq again on a recurrent or hybrid model when --spec-type listed anything but draft-mtp
([TAG_RS_STATE_ROLLBACK_SUPPORT]); the same PR changed --spec-draft-n-max's default from 16 to 3.

llm_arch_supports_rs_rollback (src/llama-arch.cpp), the architectures that keep the snapshots:
    255582687  2026-05-16  b9180   PR #22673   qwen35, qwen35moe
    596a5795b  2026-08-02  b10228  PR #25784 "DeepseekV4 MTP + DSpark"         + deepseek4
    1692f9e50  2026-08-14  b10431  PR #26623 "ggml : recurrent state rollback for ggml_ssm_scan"  + nemotron_h(_moe)
    07822bddf  2026-08-20  b10540  PR #27383 "model : support DSpark for LFM2 models"  + lfm2, lfm2moe
    2115b73d8  2026-08-22  b10581  PR #27508 "model : support DSpark for bailingmoe3"   + bailingmoe3
qwen4exp (PR #28123, 2026-09-01) and kimi-k3 (PR #28466) came after that fork's last commit. oomkit dates builds up
to NEWEST (b9999); the later rules sit there and settings.version_warning names them for builds that may predate
them.

Ground truth beside the source: llama-cpp-python 0.3.36's build keeps n_rs_seq on bailingmoe3 as on the other
architectures of the list (measured in tests/test_llamacpp_rs_rollback.py's grid: RS 6.42 MiB at n_rs_seq 0 with one
sequence, 25.69 at 3, 436.69 at 16 with 4 sequences, oomkit's to the printed MiB).
"""

from __future__ import annotations

import pytest

from oomkit.engines.llamacpp import parse_args
from oomkit.engines.llamacpp.settings import (
    ERAS,
    NEWEST,
    RS_ROLLBACK_FIRST,
    RS_SEQ_SPEC_FIRST,
    LlamaCppSettings,
    n_rs_seq,
    need_n_rs_seq,
    version_warning,
)

NEWEST_N = int(NEWEST[1:])


def _server(*args: str) -> LlamaCppSettings:
    return parse_args(["-m", "x.gguf", *args])[2]


# (spec type, first build whose need_n_rs_seq counts it, the commit): the table in the module docstring
SPEC_CUTOFFS = [("draft-mtp", 9180, "255582687 PR #22673"), ("draft-eagle3", 9723, "b14e3fb90 PR #24593"),
                ("draft-dflash", 9831, "d1b34251b PR #22105")]


@pytest.mark.parametrize("spec_type, first, commit", SPEC_CUTOFFS)
def test_each_spec_type_sets_n_rs_seq_from_its_build(spec_type, first, commit):
    """The type adds the draft's n_max from the build that put it into need_n_rs_seq, nothing the build before."""
    s = _server("--spec-type", spec_type, "--spec-draft-n-max", "5")
    assert need_n_rs_seq(s, first - 1) == 0, commit
    assert need_n_rs_seq(s, first) == 5, commit
    assert RS_SEQ_SPEC_FIRST[spec_type] == first
    # the architecture's clamp is applied on top: qwen35moe keeps it from b9180, qwen3next never
    assert n_rs_seq("qwen35moe", s, first) == 5
    assert n_rs_seq("qwen3next", s, first) == 0


def test_dspark_came_after_the_dated_builds():
    """PR #25173 (84075273c, b10163) is past NEWEST: at NEWEST draft-dspark counts, and a build named between
    NEWEST and b10163 is warned that it may predate it."""
    s = _server("--spec-type", "draft-dspark", "--spec-draft-n-max", "4")
    assert need_n_rs_seq(s, NEWEST_N) == 4
    assert need_n_rs_seq(s, 9831) == 0
    assert "draft-dspark" in version_warning("b10100")
    assert "draft-dspark" not in (version_warning("b10163") or "")


def test_draft_n_max_default_16_until_the_mtp_clean_up():
    """PR #22673 brought n_rs_seq with --spec-draft-n-max's default 16; PR #23269 (b9235) made it 3."""
    assert ERAS["spec_mtp_cleanup"] == 9235
    s = _server("--spec-type", "draft-mtp")
    assert [need_n_rs_seq(s, b) for b in (9179, 9180, 9234, 9235)] == [0, 16, 16, 3]


@pytest.mark.parametrize("types", ["draft-mtp,ngram-mod", "draft-mtp,ngram-map-k4v", "draft-mtp,draft-simple"])
def test_other_types_beside_draft_mtp_zeroed_it_until_b9235(types):
    """b9180-b9234: common_init_result set n_rs_seq to 0 on a recurrent / hybrid model when --spec-type listed any
    type but none and draft-mtp ("recurrent state rollback is not compatible with '...' - disabling rollback
    support"); PR #23269 removed that ("spec : re-enable ngram spec in combination with RS rollback")."""
    s = _server("--spec-type", types, "--spec-draft-n-max", "2")
    assert need_n_rs_seq(s, 9234) == 0
    assert need_n_rs_seq(s, 9235) == 2
    assert need_n_rs_seq(_server("--spec-type", "draft-mtp", "--spec-draft-n-max", "2"), 9234) == 2


# (architecture, first upstream build that keeps its snapshots): the second table in the module docstring
# and the name the warning gives it
ARCH_CUTOFFS = [("deepseek4", 10228, "deepseek4"), ("nemotron_h", 10431, "nemotron_h"),
                ("nemotron_h_moe", 10431, "nemotron_h"), ("lfm2", 10540, "lfm2"), ("lfm2moe", 10540, "lfm2"),
                ("bailingmoe3", 10581, "bailingmoe3")]


def test_qwen35_keeps_snapshots_from_b9180():
    s = _server("--spec-type", "draft-mtp")
    for arch in ("qwen35", "qwen35moe"):
        assert RS_ROLLBACK_FIRST[arch] == 9180
        assert (n_rs_seq(arch, s, 9179), n_rs_seq(arch, s, 9180)) == (0, 16)


@pytest.mark.parametrize("arch, first, name", ARCH_CUTOFFS)
def test_later_architectures_sit_at_newest_and_are_warned(arch, first, name):
    """Each joined after NEWEST: no snapshots at the dated builds (b9999 aside), kept at NEWEST, and a build named
    between NEWEST and its first is warned with the architecture's name; from its first build, no such warning."""
    s = _server("--spec-type", "draft-mtp")
    assert RS_ROLLBACK_FIRST[arch] == NEWEST_N
    assert n_rs_seq(arch, s, NEWEST_N - 1) == 0
    assert n_rs_seq(arch, s, NEWEST_N) == 3
    assert f"on {name} " in version_warning(f"b{first - 1}")
    assert f"on {name} " not in (version_warning(f"b{first}") or "")


def test_eagle3_snapshots_end_to_end_by_build():
    """Through the estimate: llama-server with an EAGLE-3 draft on a Qwen3.5-MoE-shaped hybrid keeps one row set of
    recurrent state per sequence at b9722 and 1 + 3 (the default n_max) from PR #24593 (b9723)."""
    import oomkit  # lazy: the end-to-end path only here
    from tests.test_llamacpp_rs_rollback import _path  # lazy: the synthetic files of the snapshot grid

    path = str(_path("qwen35moe+nextn"))

    def view(version):
        return oomkit.estimate(path, "llama.cpp", devices=(), find_max_context=False, fit=False, n_ctx=4096,
                               n_parallel=1, spec_type=("draft-eagle3",), model_draft=path,
                               engine_version=version).engine_view

    old, new = view("b9722"), view("b9723")
    assert (old["n_rs_seq"], new["n_rs_seq"]) == (0, 3)
    assert new["recurrent_state_bytes"] == 4 * old["recurrent_state_bytes"]
