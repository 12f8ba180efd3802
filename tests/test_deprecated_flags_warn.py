"""A flag that a release still takes but marks deprecated is accepted with its note among the estimate's warnings,
as the engine warns at launch; the release that dropped it refuses it (tests/test_sglang_flags_by_release.py).

SGLang: 0.5.14's server_args.py add_cli_args keeps `--nsa-prefill-backend` as a DeprecatedAliasStoreAction of
--dsa-prefill-backend (help "[Deprecated] Use --dsa-prefill-backend instead."; arg_groups/argparse_actions.py logs
"'--nsa-prefill-backend' is deprecated and will be removed in a future release. Use '--dsa-prefill-backend'
instead."); 0.5.13 to 0.5.19 mark it so (engines/data/sglang_flags.json, read from the wheels), 0.5.12 takes it
plainly and 0.5.20 has no such flag. `--disable-cuda-graph`, in every wheel read, is deprecated from 0.5.14 ("Deprecated.
Use --cuda-graph-backend-{decode,prefill}=disabled instead.").

vLLM: `--disable-log-requests` is "[DEPRECATED] Disable logging requests." from 0.10.1 to 0.16.0 (argparse
deprecated=True in 0.16.0's AsyncEngineArgs), gone from 0.17.0 (engines/data/vllm_flags.json).
"""

from __future__ import annotations

import json

import pytest

from tests.sweep_harness import offline, run_cli  # noqa: F401 (offline: an autouse fixture)

NSA = "--nsa-prefill-backend is deprecated in SGLang {v}: [Deprecated] Use --dsa-prefill-backend instead."
CUDA_GRAPH = ("--disable-cuda-graph is deprecated in SGLang {v}: Deprecated. Use "
              "--cuda-graph-backend-{{decode,prefill}}=disabled instead.")
LOG_REQUESTS = "--disable-log-requests is deprecated in vLLM {v}: [DEPRECATED] Disable logging requests."


def _warnings(version: str, *command: str) -> list[str]:
    rc, out, err = run_cli("estimate", "--json", "--gpu", "H100 80GB", "--engine-version", version, "--", *command)
    assert rc in (0, 1), err
    return json.loads(out)["warnings"]


SGLANG = ("python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B")


@pytest.mark.parametrize("version", ["0.5.13", "0.5.14", "0.5.19"])
def test_sglang_deprecated_alias_warns_at_the_releases_that_deprecate_it(version):
    warnings = _warnings(version, *SGLANG, "--nsa-prefill-backend", "flashmla_sparse")
    assert warnings.count(NSA.format(v=version)) == 1, warnings


def test_sglang_alias_before_its_deprecation_is_silent_and_gone_after():
    warnings = _warnings("0.5.12", *SGLANG, "--nsa-prefill-backend", "flashmla_sparse")
    assert not any("deprecated" in w for w in warnings), warnings
    rc, _, err = run_cli("estimate", "--gpu", "H100 80GB", "--engine-version", "0.5.20", "--", *SGLANG,
                      "--nsa-prefill-backend", "flashmla_sparse")
    assert rc == 2 and "unrecognized arguments: --nsa-prefill-backend (SGLang 0.5.20 has no such flag" in err, err


def test_sglang_flag_of_every_release_warns_from_its_deprecation():
    # --disable-cuda-graph is in every wheel read (0.3.6 to 0.5.23): held against the release for its note alone
    assert CUDA_GRAPH.format(v="0.5.14") in _warnings("0.5.14", *SGLANG, "--disable-cuda-graph")
    assert CUDA_GRAPH.format(v="0.5.23") in _warnings("0.5.23", *SGLANG, "--disable-cuda-graph")
    assert not any("deprecated" in w for w in _warnings("0.5.13", *SGLANG, "--disable-cuda-graph"))


@pytest.mark.parametrize("version", ["0.10.2", "0.16.0"])
def test_vllm_deprecated_flag_warns(version):
    warnings = _warnings(version, "vllm", "serve", "Qwen/Qwen3-8B", "--disable-log-requests")
    assert warnings.count(LOG_REQUESTS.format(v=version)) == 1, warnings
    assert not any("deprecated" in w for w in _warnings("0.9.2", "vllm", "serve", "Qwen/Qwen3-8B",
                                                        "--disable-log-requests"))


def test_vllm_unused_model_flag_is_clipped_as_every_echoed_value():
    # entrypoints/cli/serve.py (0.8.3 on): the positional model wins over --model, which is named in the warning,
    # clipped as the shared refusals clip a value (engines/command.py clip_word: 80 characters, then its length)
    long = "org/" + "x" * 200
    warnings = _warnings("0.16.0", "vllm", "serve", "Qwen/Qwen3-8B", "--model", long)
    note = next(w for w in warnings if w.startswith("--model "))
    assert note.startswith(f"--model {long[:80]}... (204 characters) is not used: vllm serve's positional model"), note
