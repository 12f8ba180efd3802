"""Held-out engine commands as people typed them (tests/fixtures/commands/real_commands.jsonl, each with its
thread): oomkit reads every one the way the engine's own parser does. The expected settings are read from the
command text itself (README there), never from oomkit's output."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import fields, replace
from pathlib import Path

import pytest

from oomkit.cli import main
from oomkit.engines.base import get_engine
from oomkit.engines.cmdline import parse_command, split_command
from oomkit.errors import OomkitError

CORPUS = Path(__file__).parent / "fixtures" / "commands" / "real_commands.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
IDS = [r["id"] for r in ROWS]


def _plain(value):
    """A settings value as JSON holds it (tuples as lists, pairs of the env as a dict)."""
    return json.loads(json.dumps(value, default=list))


def test_corpus_shape():
    assert 40 <= len(ROWS) <= 60 and len(set(IDS)) == len(IDS)
    for r in ROWS:
        assert r["url"].startswith("https://"), r["id"]
        assert r["shell"] in ("posix", "powershell", "argv"), r["id"]
        assert r["outcome"] in ("oom", "started", "error", "doc", "unknown"), r["id"]


@pytest.mark.parametrize("row", [r for r in ROWS if r["shell"] == "posix"], ids=lambda r: r["id"])
def test_argv_is_what_the_shell_hands_over(row):
    """bash: a backslash-newline joins lines, quotes group, backslashes inside single quotes stay; the web app and
    --also split a pasted command the same way (cmdline.split_command)."""
    assert shlex.split(row["text"].replace("\\\n", "")) == row["argv"]
    assert split_command(row["text"]) == row["argv"]


def test_split_command_keeps_a_quoted_backslash_newline():
    """Inside single quotes bash keeps a backslash-newline as typed; inside double quotes it joins the lines."""
    assert split_command("a 'x\\\ny' \"p\\\nq\" \\\r\n b") == ["a", "x\\\ny", "pq", "b"]


def test_split_command_keeps_a_command_substitution_one_word():
    """A command typed alone gets the expansions a script's command gets (shell_words._expand): `$(...)` stays one
    word, its `|` inside it, as bash runs it before splitting; `$((...))` of integers is computed."""
    assert split_command("llama-server -m $(cat model.txt) -c 4096") == [
        "llama-server", "-m", "$(cat model.txt)", "-c", "4096"]
    assert split_command("vllm serve $(ls /models | head -1) --max-model-len $((8 * 1024))") == [
        "vllm", "serve", "$(ls /models | head -1)", "--max-model-len", "8192"]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_parsed_as_the_engine_reads_it(row):
    expect = row["expect"]
    if "error" in expect:
        with pytest.raises(OomkitError) as e:
            parse_command(row["argv"], {})
        assert expect["error"] in str(e.value) and "\n" not in str(e.value)
        return
    parsed = parse_command(row["argv"], {})
    assert parsed.engine == expect["engine"]
    if "model" in expect:
        assert parsed.model == expect["model"]
    if "quant" in expect:
        assert parsed.quant == expect["quant"]
    for name, want in expect["settings"].items():
        got = getattr(parsed.settings, name)
        got = dict(got) if name == "env" else got
        if name == "env":
            assert {k: got.get(k) for k in want} == want
        else:
            assert _plain(got) == want, name


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_check_gives_a_verdict_or_one_line(row, capsys, monkeypatch):
    """`oomkit check --gpu ... -- <command>`: a verdict (exit 0 / 1), or exit 2 with one line naming why, never a
    traceback. The model files the threads' machines held are not here (`no such file`)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    gpu = row["gpu"]
    hw = ["--vram", gpu] if re.fullmatch(r"[\d.]+GB(,[\d.]+GB)*", gpu) else ["--gpu", gpu]
    version = ["--engine-version", row["engine_version"]] if row.get("engine_version") else []
    rc = main(["check", *hw, *version, "--json", "--", *row["argv"]])
    out, err = capsys.readouterr()
    refused = row["check"]["refused"]
    if refused is None:
        assert rc in (0, 1), err
        assert json.loads(out)["estimate"]["engine"] == row["expect"]["engine"]
    else:
        assert rc == 2
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("oomkit: error: ") and refused in lines[0], err


# llama-bench sizes its context from -p / -n (programs.parse_bench): no -c for a rewrite to set
@pytest.mark.parametrize("row", [r for r in ROWS if "error" not in r["expect"]
                                 and r["expect"]["settings"].get("program") != "llama-bench"], ids=lambda r: r["id"])
def test_rewritten_command_reads_back(row):
    """fit's rewrite of the user's own command (wrapper, spellings and all) parses back to the new settings."""
    parsed = parse_command(row["argv"], {})
    eng = get_engine(parsed.engine)
    names = {f.name for f in fields(parsed.settings)}
    change = {"llama.cpp": {"n_ctx": 4096}, "vllm": {"max_model_len": 4096, "gpu_memory_utilization": 0.8},
              "sglang": {"context_length": 4096, "mem_fraction_static": 0.8}, "mlx": {"max_tokens": 512},
              "ollama": {}}[parsed.engine]
    if not change:
        return
    new = replace(parsed.settings, **{k: v for k, v in change.items() if k in names})
    argv = eng.rewrite_command(list(row["argv"]), parsed.settings, new)
    again = parse_command(argv, {})
    for k, v in change.items():
        assert getattr(again.settings, k) == v, (k, argv)
    assert again.model == parsed.model


# Rules the corpus brought out, each on its own (the engine's parser as the source says)

def test_llamacpp_reads_underscores_as_dashes_and_refuses_flag_equals_value():
    """common/arg.cpp common_params_parse_ex: `--n_predict` is --n-predict; the whole argument is looked up, so
    `--ctx-size=8192` is an invalid argument (llama-cli of llama.cpp#8112 typed --n_predict)."""
    s = parse_command(["llama-server", "-m", "m.gguf", "--ctx_size", "8192", "--n_gpu_layers", "20"], {}).settings
    assert (s.n_ctx, s.n_gpu_layers) == (8192, 20)
    with pytest.raises(OomkitError, match="no --flag=value form"):
        parse_command(["llama-server", "-m", "m.gguf", "--ctx-size=8192"], {})


def test_vllm_abbreviations_and_short_equals():
    """argparse (allow_abbrev, which FlexibleArgumentParser keeps): a unique prefix names the flag, two or more is
    'ambiguous option'; `-tp=4` splits at '=' (intel/llm-scaler#578, Qwen3-VL#1492)."""
    s = parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-util", "0.85", "-tp=4",
                       "--max-model", "8192"], {}).settings
    assert (s.gpu_memory_utilization, s.tensor_parallel_size, s.max_model_len) == (0.85, 4, 8192)
    with pytest.raises(OomkitError, match="ambiguous option"):
        parse_command(["vllm", "serve", "Qwen/Qwen3-8B", "--max-num", "8"], {})


def test_mlx_abbreviations():
    """mlx_lm's plain argparse parsers take a unique prefix (`--max-tok`); an ambiguous one is refused."""
    s = parse_command(["mlx_lm.server", "--model", "mlx-community/Qwen3-8B-4bit", "--max-tok", "512"], {}).settings
    assert s.max_tokens == 512
    with pytest.raises(OomkitError, match="ambiguous option"):
        parse_command(["mlx_lm.server", "--model", "x", "--prompt-c", "5"], {})


def test_container_wrappers():
    """docker run: the image's entrypoint, -e variables, the tag's release; a moving tag names none."""
    p = parse_command(["docker", "run", "--gpus", "all", "-e", "VLLM_USE_V1=0", "-p8000:8000",
                       "vllm/vllm-openai:v0.8.5", "--model", "Qwen/Qwen3-8B"], {})
    assert (p.engine, p.model, p.settings.use_v1, p.settings.engine_version) == ("vllm", "Qwen/Qwen3-8B", False,
                                                                                 "0.8.5")
    p = parse_command(["podman", "run", "--rm", "ghcr.io/ggml-org/llama.cpp:server-cuda-b6089", "-m", "m.gguf",
                       "-c", "4096"], {})
    assert (p.engine, p.settings.program, p.settings.n_ctx, p.settings.engine_version) == (
        "llama.cpp", "llama-server", 4096, "b6089")
    p = parse_command(["docker", "run", "-d", "-e", "OLLAMA_CONTEXT_LENGTH=8192", "ollama/ollama"], {})
    assert (p.engine, p.settings.program, dict(p.settings.env)["OLLAMA_CONTEXT_LENGTH"]) == ("ollama",
                                                                                            "ollama serve", "8192")
    with pytest.raises(OomkitError, match="names no engine"):
        parse_command(["docker", "run", "--rm", "ubuntu:24.04"], {})
    with pytest.raises(OomkitError, match="no image"):
        parse_command(["docker", "run", "--rm", "-e", "A=1"], {})
    # vllm-openai's ENTRYPOINT is `vllm serve`: a command after the image is refused with the way out
    api = ["-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-8B"]
    with pytest.raises(OomkitError, match="--entrypoint python3"):
        parse_command(["docker", "run", "vllm/vllm-openai:latest", "python3", *api], {})
    p = parse_command(["docker", "run", "--entrypoint", "python3", "vllm/vllm-openai:latest", *api], {})
    assert (p.engine, p.model) == ("vllm", "Qwen/Qwen3-8B")
    # the `full` images run tools.sh, whose first argument picks the program (llama.cpp#2535)
    p = parse_command(["docker", "run", "local/llama.cpp:full-cuda", "--server", "-m", "m.gguf", "-c", "2048"], {})
    assert (p.settings.program, p.settings.n_ctx) == ("llama-server", 2048)
    # fit edits the variable the container sets where it is set, and leaves docker's own options alone
    argv = ["docker", "run", "--gpus", "all", "--env=VLLM_USE_V1=1", "vllm/vllm-openai:v0.8.5", "--model",
            "Qwen/Qwen3-8B", "--max-model-len", "8192"]
    old = parse_command(argv, {}).settings
    out = get_engine("vllm").rewrite_command(argv, old, replace(old, use_v1=False, max_model_len=4096))
    assert out == ["docker", "run", "--gpus", "all", "--env=VLLM_USE_V1=0", "vllm/vllm-openai:v0.8.5", "--model",
                   "Qwen/Qwen3-8B", "--max-model-len", "4096"]


def test_process_wrappers():
    """`VAR=v nice -n -10 ./llama-server` (lemonade-sdk/llamacpp-rocm#129), sudo, nohup: the engine after them, the
    variables before them in force; fit puts a new variable where the wrapper passes it on."""
    p = parse_command(["VLLM_USE_V1=0", "nice", "-n", "-10", "vllm", "serve", "Qwen/Qwen3-8B"], {})
    assert (p.engine, p.settings.use_v1) == ("vllm", False)
    for argv, want in ((["sudo", "-E", "vllm", "serve", "Qwen/Qwen3-8B"],
                        ["sudo", "-E", "VLLM_USE_V1=0", "vllm", "serve", "Qwen/Qwen3-8B"]),
                       (["nohup", "vllm", "serve", "Qwen/Qwen3-8B"],
                        ["VLLM_USE_V1=0", "nohup", "vllm", "serve", "Qwen/Qwen3-8B"]),
                       (["VLLM_USE_V1=1", "nice", "vllm", "serve", "Qwen/Qwen3-8B"],
                        ["VLLM_USE_V1=0", "nice", "vllm", "serve", "Qwen/Qwen3-8B"])):
        old = parse_command(argv, {}).settings
        assert get_engine("vllm").rewrite_command(argv, old, replace(old, use_v1=False)) == want


def test_windows_program_paths():
    """PowerShell hands `.\\llama-server.exe` and `C:\\...\\llama-bench.exe` over as typed."""
    for prog in (".\\llama-server.exe", "C:\\llama\\bin\\Release\\llama-server.EXE", "./build/bin/llama-server"):
        assert parse_command([prog, "-m", "m.gguf"], {}).engine == "llama.cpp"


def test_sglang_legacy_flags_take_no_part_in_abbreviations():
    """sglang 0.2's --disable-disk-cache is accepted as typed (sglang#445); a prefix still resolves against the
    newer releases' flags only."""
    s = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                       "--disable-disk-cache", "--max-num-reqs", "64", "--mem-frac", "0.8"], {}).settings
    assert s.mem_fraction_static == 0.8


def test_env_with_its_options():
    """GNU env(1)'s options before the assignments (coreutils env.c "+C:iS:u:v0"): `env -i VAR=v cmd` runs cmd with
    only VAR set, `-u NAME` and `-C DIR` take a value, `--` ends them; -S's string is no argv oomkit reads."""
    p = parse_command(["env", "-i", "VLLM_USE_V1=0", "vllm", "serve", "Qwen/Qwen3-8B"], {"CUDA_VISIBLE_DEVICES": "1"})
    assert (p.engine, p.settings.use_v1, dict(p.env)) == ("vllm", False, {"VLLM_USE_V1": "0"})
    cleared = parse_command(["/usr/bin/env", "-iC", "/tmp", "vllm", "serve", "Qwen/Qwen3-8B"], {"VLLM_USE_V1": "0"})
    assert cleared.settings.use_v1 is not False  # the caller's VLLM_USE_V1=0 is gone under -i
    kept = parse_command(["env", "-u", "HOME", "--", "nice", "-n", "5", "vllm", "serve", "Qwen/Qwen3-8B"],
                         {"VLLM_USE_V1": "0"})
    assert (kept.engine, kept.settings.use_v1) == ("vllm", False)
    for argv in (["env", "-S", "vllm serve Qwen/Qwen3-8B"], ["env", "-i"]):
        with pytest.raises(OomkitError):
            parse_command(argv, {})


def test_a_comment_after_the_command_is_no_argument():
    """bash (manual, "Comments"): a word that starts with `#` outside quotes begins a comment to the end of its line;
    `a#b`, `"q # x"` and `\\#` are characters."""
    assert split_command("llama-server -m x.gguf -c 8192 # my server") == ["llama-server", "-m", "x.gguf", "-c",
                                                                            "8192"]
    assert split_command("llama-server -m x.gguf \\\n  -ngl 99 # all layers") == ["llama-server", "-m", "x.gguf",
                                                                                   "-ngl", "99"]
    assert split_command("export A=1 # c\nvllm serve q # d") == ["A=1", "vllm", "serve", "q"]
    assert split_command('vllm serve "q # x" --x a#b \\# y') == ["vllm", "serve", "q # x", "--x", "a#b", "#", "y"]
