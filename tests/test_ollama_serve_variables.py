"""Ollama reads its OLLAMA_* variables in the server (envconfig, read by `ollama serve`); `ollama run` is a client
that reads only OLLAMA_HOST and OLLAMA_NOHISTORY (cmd/cmd.go), so a variable in front of `ollama run` never reaches a
server already running (ollama#14191). oomkit's own commands put the variables on `ollama serve`, then `ollama run`
on the next line; a user's command with them in front of `ollama run` is read as they mean it, with one line saying
it takes a (re)started server."""

from __future__ import annotations

import shlex

import pytest

from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command, split_command
from oomkit.engines.command import COMMAND_BREAK
from oomkit.engines.ollama import OllamaSettings
from oomkit.plan.fit import fit
from oomkit.plan.options import Goals
from oomkit.plan.rating import shell_join
from oomkit.plan.search import plan
from oomkit.request import devices_from, resolve_model

OLLAMA = get_engine("ollama")
DEVICES = devices_from("8GiB")
SETTINGS = OllamaSettings(num_ctx=16384, kv_cache_type="q8_0", flash_attention="1")


def memory(settings):
    est = OLLAMA.estimate(resolve_model(OLLAMA, "qwen3:8b"), DEVICES, settings)
    return [(u.id, u.total_bytes) for u in est.devices], est.host.total_bytes, est.engine_view["n_ctx"]


def test_printed_command_starts_the_server_with_the_variables():
    argv = OLLAMA.command("qwen3:8b", SETTINGS)
    assert shell_join(argv) == ("OLLAMA_CONTEXT_LENGTH=16384 OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 "
                                "ollama serve\nollama run qwen3:8b")
    # read back as `oomkit estimate -- "<the two lines>"` reads it: the same launch, and no warning
    parsed = parse_command(split_command(shell_join(argv)), env={})
    assert parsed.model == "qwen3:8b" and parsed.settings.program == "ollama serve"
    assert memory(parsed.settings) == memory(SETTINGS)
    (note,) = OLLAMA.command_notes(parsed.settings)  # how to run the two lines, no warning
    assert "stop one already running first" in note and "another terminal" in note
    est = OLLAMA.estimate(resolve_model(OLLAMA, "qwen3:8b"), DEVICES, parsed.settings)
    assert not any("ollama#14191" in w for w in est.warnings)


@pytest.mark.parametrize("line", [
    "OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 OLLAMA_CONTEXT_LENGTH=16384 ollama serve & ollama run qwen3:8b",
    "OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 OLLAMA_CONTEXT_LENGTH=16384 ollama serve; ollama run qwen3:8b",
    "env OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 OLLAMA_CONTEXT_LENGTH=16384 ollama serve\n"
    "OLLAMA_HOST=127.0.0.1:11434 ollama run qwen3:8b why is the sky blue",
])
def test_server_then_run_as_users_type_it(line):
    parsed = parse_command(split_command(line), env={})
    assert parsed.model == "qwen3:8b" and parsed.settings.program == "ollama serve"
    assert memory(parsed.settings) == memory(SETTINGS)


def test_variables_in_front_of_ollama_run_count_and_are_flagged():
    """The estimate still takes them (the user means them for the server), with one line on where they belong."""
    argv = shlex.split("OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 OLLAMA_CONTEXT_LENGTH=16384 "
                       "ollama run qwen3:8b")
    parsed = parse_command(argv, env={})
    assert memory(parsed.settings) == memory(SETTINGS)
    (note,) = OLLAMA.command_notes(parsed.settings)
    assert "\n" not in note and "ollama serve" in note and "(re)started" in note and "ollama#14191" in note
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in note
    est = OLLAMA.estimate(resolve_model(OLLAMA, "qwen3:8b"), DEVICES, parsed.settings)
    assert note in est.warnings
    # nothing to say of `ollama run` alone, or of the client's own variable
    for plain in ("ollama run qwen3:8b", "OLLAMA_HOST=0.0.0.0:11500 ollama run qwen3:8b"):
        assert OLLAMA.command_notes(parse_command(shlex.split(plain), env={}).settings) == ()


def test_fit_moves_the_variables_to_the_server_and_says_so(capsys):
    argv = shlex.split("OLLAMA_CONTEXT_LENGTH=40960 ollama run qwen3:8b hello")
    f = fit(argv, DEVICES)
    assert f.fits and f.command[1:] == ("ollama", "serve", COMMAND_BREAK, "ollama", "run", "qwen3:8b", "hello")
    assert f.command[0].startswith("OLLAMA_CONTEXT_LENGTH=") and f.command[0] != argv[0]
    assert any("given to `ollama run`" in n for n in f.notes)
    assert main(["fit", "--vram", "8GiB", "--", *argv]) == 0
    out = capsys.readouterr().out
    assert "note: OLLAMA_CONTEXT_LENGTH=40960 given to `ollama run`" in out
    assert out.rstrip().endswith("ollama serve\nollama run qwen3:8b hello")


def test_fit_of_a_command_that_fits_keeps_it_and_warns():
    argv = shlex.split("OLLAMA_KV_CACHE_TYPE=q8_0 OLLAMA_FLASH_ATTENTION=1 ollama run qwen3:8b")
    f = fit(argv, devices_from("24GiB"))
    assert f.command == tuple(argv) and f.changes == ()
    assert len(f.notes) == 1 and "take effect only when `ollama serve` is (re)started" in f.notes[0]


def test_a_container_runs_the_server_with_its_variables():
    """`docker run -e VAR=v ollama/ollama` runs `ollama serve` with them: the rewrite keeps the container form."""
    argv = shlex.split("docker run -d --gpus=all -e OLLAMA_KV_CACHE_TYPE=f16 ollama/ollama")
    old = parse_command(argv, env={}).settings
    from dataclasses import replace

    out = OLLAMA.rewrite_command(argv, old, replace(old, kv_cache_type="q8_0", flash_attention="1"))
    assert COMMAND_BREAK not in out and "OLLAMA_KV_CACHE_TYPE=q8_0" in out
    assert not any("given to `ollama run`" in n for n in OLLAMA.command_notes(old))


def test_plan_prints_the_server_line_then_the_run_line(capsys):
    p = plan("qwen3:8b", "ollama", devices=DEVICES, goals=Goals(min_ctx=32768), limit=2)
    assert all(o.command.splitlines()[1] == "ollama run qwen3:8b" for o in p.options)
    assert main(["plan", "qwen3:8b", "--engine", "ollama", "--vram", "8GiB", "--min-ctx", "32768", "--limit",
                 "1"]) == 0
    out = capsys.readouterr().out
    first = out.index("  1. OLLAMA_")
    assert "ollama serve\n     ollama run qwen3:8b" in out[first:]
    assert "note: Ollama: `ollama serve` with its variables (re)starts the server" in out


def test_diagnose_fix_for_ollama_starts_the_server_with_the_variable():
    from oomkit.diagnose import diagnose

    d = diagnose("Error: 500 Internal Server Error: memory layout cannot be allocated", command=["ollama", "run",
                                                                                                "qwen3:8b"])
    server, run = d.fixes[0].command.split("\n")
    assert server.startswith("OLLAMA_CONTEXT_LENGTH=") and server.endswith(" ollama serve")
    assert run == "ollama run qwen3:8b"


def test_kv_type_option_is_trimmed_as_the_variable_is(capsys):
    """--kv-type is OLLAMA_KV_CACHE_TYPE, which envconfig.Var trims of spaces and quotes: ' q8_0' is q8_0 (76.50 KiB a
    token for qwen3:8b's 36 layers x 8 KV heads x 128, 34 bytes per 32 values), as llama.cpp's own -ctk is not."""
    assert main(["estimate", "qwen3:8b", "--engine", "ollama", "--kv-type", " 'q8_0' ", "--vram", "24GiB"]) == 0
    out = capsys.readouterr().out
    assert "kv_cache_type q8_0" in out and "KV cache per extra token of context: 76.50 KiB" in out
