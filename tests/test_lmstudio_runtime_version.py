"""LM Studio's llama.cpp runtime version as --engine-version (engines/llamacpp/lmstudio.py).

`lms load` runs LM Studio's own llama.cpp build, numbered by LM Studio ("llama.cpp-win-x86_64-nvidia-cuda12-avx2@
2.44.0"); oomkit reads it as the llama.cpp build that runtime bundles, from engines/data/lmstudio_runtimes.json,
whose rows each cite the public source naming the runtime's llama.cpp commit."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import oomkit
from oomkit.diagnose import diagnose
from oomkit.engines.cmdline import parse_command
from oomkit.engines.llamacpp.settings import ERAS, NEWEST, build_number, version_warning

TABLE = Path(oomkit.__file__).parent / "engines" / "data" / "lmstudio_runtimes.json"


def _cli(*argv: str) -> tuple[int, str, str]:
    from oomkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_runtimes_read_as_the_llama_cpp_commit_they_bundle():
    # lmstudio-bug-tracker#1308 (2025-12-14): runtime 1.63.1 "contains commit 7bed317" and not PR #18006 (b7394);
    # 7bed317f5 is llama.cpp build 7371
    assert build_number("lmstudio-1.63.1") == 7371
    # the Quattro-Formaggi-12B-Logistics model card: llama.cpp 42916d83f "the commit of LM Studio's llama.cpp runtime
    # 2.44.0" (build 11139), and runtime 2.47.0 at llama-server commit 6c7a87f (release b11235)
    assert build_number("lmstudio-2.44.0") == 11139
    assert build_number("lmstudio-2.47.0") == 11235
    # lmstudio-bug-tracker#2378 (2026-09-07): "The latest bundled llama.cpp engine in LM Studio is b10760 (engine
    # 2.33.0)", before spark2_5 (PR #27868)
    assert build_number("lmstudio-2.33.0") == 10760
    # the spellings: LM Studio's own, the `lms runtime ls` suffix, any case
    assert build_number("LM-Studio v2.44.0") == build_number("lms@2.44.0") == build_number("lmstudio-v2.44.0") == 11139


def test_every_row_cites_its_sources():
    rows = json.loads(TABLE.read_text())["runtimes"]
    assert rows
    for row in rows:
        assert row["sources"] and all(s.startswith("https://") for s in row["sources"])
        assert isinstance(row["build"], int)
        # the commit where the source names one; a source naming only the release tag says so in a note
        assert (row["commit"] and len(str(row["commit"])) >= 7) or "not its commit" in row.get("note", ""), row
    builds = [row["build"] for row in sorted(rows, key=lambda r: tuple(map(int, r["runtime"].split("."))))]
    assert builds == sorted(builds)  # a later runtime never bundles an older llama.cpp


def test_era_switch_between_runtimes_mla_k_only():
    # PR #19067 (b7832, ERAS mla_k_only): MLA caches K only. Runtime 1.63.1 (b7371) predates it, 2.44.0 (b11139)
    # has it: DeepSeek-V3's f16 KV per token and layer, latent K + V (576 + 512) before, K only (576) after
    assert not ERAS.reached(build_number("lmstudio-1.63.1"), "mla_k_only")
    assert ERAS.reached(build_number("lmstudio-2.44.0"), "mla_k_only")
    per_layer = {}
    for version in ("lmstudio-1.63.1", "lmstudio-2.44.0"):
        v = oomkit.estimate("deepseek-ai/DeepSeek-V3", "llama.cpp", quant="Q4_K_M", cpu_only=True, n_ctx=4096,
                            n_parallel=1, find_max_context=False, engine_version=version, flash_attn="on").engine_view
        per_layer[version] = (v["k_bytes"] + v["v_bytes"]) // (61 * 4096 * 2)
    assert per_layer == {"lmstudio-1.63.1": 576 + 512, "lmstudio-2.44.0": 576}
    # and --fit (PR #16653, b7407): not in 1.63.1's llama.cpp
    assert not ERAS.reached(build_number("lmstudio-1.63.1"), "params_fit")


def test_lms_load_takes_the_bare_runtime_version():
    cmd = ["lms", "load", "deepseek-ai/DeepSeek-V2-Lite-Chat", "-c", "8192"]
    rc, out, err = _cli("estimate", "--vram", "24GiB", "--json", "--engine-version", "v1.63.1", "--", *cmd)
    assert rc == 0, err
    old = json.loads(out)
    rc, out, err = _cli("estimate", "--vram", "24GiB", "--json", "--engine-version", "2.44.0", "--", *cmd)
    assert rc == 0, err
    new = json.loads(out)
    assert old["settings"]["engine_version"] == "lmstudio-1.63.1"
    assert new["settings"]["engine_version"] == "lmstudio-2.44.0"
    # DeepSeek-V2-Lite (MLA, kv_lora_rank 512 + rope 64): the V half of the latent cache goes from b7832
    assert old["engine_view"]["v_bytes"] > 0 and new["engine_view"]["v_bytes"] == 0
    assert old["engine_view"]["k_bytes"] == new["engine_view"]["k_bytes"]
    # 2.44.0's build is past the newest oomkit models: said, naming the runtime
    assert any("LM Studio's llama.cpp runtime v2.44.0 runs llama.cpp build b11139" in w for w in new["warnings"])
    # the parsed command itself (no --engine-version): LM Studio's defaults at the newest build
    assert parse_command(cmd).settings.engine_version == NEWEST


def test_unknown_runtime_warns_that_the_newest_rules_apply():
    assert build_number("lmstudio-1.52.0") == int(NEWEST[1:])
    note = version_warning("lmstudio-1.52.0")
    assert note is not None and "\n" not in note and "newest rules apply" in note and "v1.52.0" in note
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", n_ctx=8192,
                          find_max_context=False, engine_version="lmstudio-1.52.0")
    assert sum("v1.52.0" in w and "newest rules apply" in w for w in est.warnings) == 1
    # a known runtime before NEWEST says nothing
    assert version_warning("lmstudio-1.63.1") is None


@pytest.mark.parametrize("version", ["lmstudio-1.x", "lmstudio-", "lms-2.44", "lmstudio-v2"])
def test_malformed_runtime_is_exit_2(version):
    rc, out, err = _cli("estimate", "--vram", "24GiB", "--engine-version", version, "--",
                        "lms", "load", "Qwen/Qwen3-8B")
    assert rc == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "LM Studio" in err


def test_bare_dotted_version_is_only_lms_loads():
    # llama-server's builds are numbered (b6500): a dotted version there is refused, naming the LM Studio form
    rc, _, err = _cli("estimate", "--vram", "24GiB", "--engine-version", "1.63.1", "--",
                      "llama-server", "-hf", "Qwen/Qwen3-8B-GGUF:Q4_K_M")
    assert rc == 2 and "lmstudio-" in err and len(err.strip().splitlines()) == 1
    # --engine lmstudio (read as llama.cpp) takes the prefixed form
    est = oomkit.estimate("Qwen/Qwen3-8B", "lmstudio", quant="Q4_K_M", vram="24GiB", n_ctx=8192,
                          find_max_context=False, engine_version="lmstudio-1.63.1")
    assert est.settings["engine_version"] == "lmstudio-1.63.1"


def test_logs_naming_the_runtime_give_its_build():
    # LM Studio names the runtime in its logs and in `lms runtime ls` as "<engine>@<version>"
    log = "\n".join([
        "[2025-12-14 10:00:00][INFO] Loading model with runtime llama.cpp-win-x86_64-nvidia-cuda12-avx2@1.63.1",
        "llama_model_loader: - kv   2:                               general.name str              = Qwen3 8B",
        "load_tensors: offloaded 37/37 layers to GPU",
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4455.34 MiB on device 0: cudaMalloc failed: out of "
        "memory",
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 4671743488",
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
    ])
    d = diagnose(log)
    assert d.settings["lmstudio_runtime"] == "1.63.1"
    assert d.engine_version == "lmstudio-1.63.1"
    assert build_number(d.engine_version) == 7371
    # a printed llama.cpp build wins over it
    d = diagnose("build: 7400 (abcdef12) with cc for x86_64-linux-gnu\n" + log)
    assert d.engine_version == "b7400"
