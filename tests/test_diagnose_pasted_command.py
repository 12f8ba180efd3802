"""A llama.cpp command pasted with its log (the web hub's Diagnose box, an issue's "Command line" beside its log): its
-c is the context the user asked for (common/arg.cpp {"-c", "--ctx-size"}), read as the diagnosis's n_ctx where the
log prints none, so the fixes and oomkit's own estimate start from it rather than from llama.cpp's default (the
log's own n_ctx line, printed after the command, is read after it and holds what was in force).

The logs are the diagnose fixtures of the threads (tests/fixtures/diagnose/*.jsonl, each with its URL):
llama.cpp#28970 (`llama-batched-bench -m models/Qwen3.6-35B-A3B-UD-Q8_K_XL.gguf ... -c 120000 -fit on`, then
"allocating 35905.99 MiB on device 0"), llama.cpp#13024 (`llama-cli.exe -m ...Maverick... -ngl 0 ... -c 4096 ...
-ub 1`), llama.cpp#12817 (llama-server "with `-ub 8192 -b 8192 -c 8192`").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose

FIXTURES = Path(__file__).parent / "fixtures" / "diagnose"


def _text(case_id: str) -> str:
    for f in sorted(FIXTURES.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line)["id"] == case_id:
                return json.loads(line)["text"]
    raise KeyError(case_id)


@pytest.mark.parametrize("case_id,n_ctx", [
    ("llama-cpp-28970-batched-bench-ignores-fit-weights", 120000),
    ("llama-cpp-13024-vulkan-allocation-limit-ngl0", 4096),
    ("llama-cpp-12817-vulkan-ub", 8192),
])
def test_the_pasted_commands_c_is_the_context(case_id, n_ctx):
    d = diagnose(_text(case_id))
    assert d.engine == "llama.cpp"
    assert d.settings["n_ctx"] == n_ctx


def test_c_elsewhere_is_not_a_context():
    # a shell's -c (bash -c '...') and docker's -c (cpu shares) are no llama.cpp command's
    for text in ("bash -c 'echo 4096'\nCUDA out of memory. Tried to allocate 20.00 MiB",
                 "docker run -c 512 vllm/vllm-openai\nCUDA out of memory. Tried to allocate 20.00 MiB"):
        assert "n_ctx" not in diagnose(text).settings


def test_a_saved_log_with_the_command_that_wrote_it(tmp_path, capsys):
    """`oomkit diagnose FILE -- COMMAND`: the FILE is the command's log (not run); the command's -c / -ub are the
    settings and each fix rewrites it (llama.cpp PR #26297's compute-buffer failure: 51748.72 MiB on device 1)."""
    from oomkit.cli import main

    log = tmp_path / "server.log"
    log.write_text(_text("llama-cpp-pr26297-recovered-compute"), encoding="utf-8")
    rc = main(["diagnose", str(log), "--json", "--", "llama-server", "-m", "Qwen3-8B-Q4_K_M.gguf", "-c", "8192",
               "-ub", "2048"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["stage"] == "compute"
    assert (d["settings"]["n_ctx"], d["settings"]["n_ubatch"]) == (8192, 2048)
    assert any(f.get("command") == "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 8192 -ub 1024" for f in d["fixes"])
