"""diagnose() on held-out crash logs, 2025-2026 but one (tests/fixtures/diagnose/heldout3.jsonl): public issue texts,
each cited, in the forms users paste them (docker compose and journalctl prefixes, markdown, quoted lines, a title
cut at GitHub's 256 characters, Ascend NPU builds). Each case checks the program, the stage that ran out, the
numbers the text carries and the key figure or flag of the fix an experienced user would give; `before` in the
fixture says what oomkit answered before the rules these texts led to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oomkit.diagnose import diagnose
from oomkit.diagnose.signatures import ENGINES, STAGES

FIXTURE = Path(__file__).parent / "fixtures" / "diagnose" / "heldout3.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cases_are_cited_and_new():
    assert len(CASES) >= 12 and len({c["id"] for c in CASES}) == len(CASES)
    corpus = (FIXTURE.parent / "corpus.jsonl").read_text(encoding="utf-8")
    for c in CASES:
        assert c["source"].startswith("https://github.com/"), c["id"]
        assert c["source"] not in corpus, c["id"]  # held out: not in the main corpus
        assert c["expected"]["stage"] in STAGES and c["expected"]["engine"] in ENGINES, c["id"]


def _fix_text(d) -> str:
    return "\n".join(" ".join([f.summary, *f.flags, *(f"{k}={v}" for k, v in f.env)]) for f in d.fixes)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_heldout_case(case):
    d = diagnose(case["text"])
    exp = case["expected"]
    assert (d.engine, d.stage) == (exp["engine"], exp["stage"]), d.to_dict()
    if "host" in exp:
        assert d.host == exp["host"], d.host
    if "backend" in exp:
        assert d.backend == exp["backend"], d.backend
    for key, value in exp["numbers"].items():
        assert d.numbers.get(key) == value, (key, d.numbers)
    for key, value in exp.get("settings", {}).items():
        assert d.settings.get(key) == value, (key, d.settings)
    text = _fix_text(d)
    for want in case["fix"]:
        assert want in text, (want, text)
    json.dumps(d.to_dict())


def test_fixes_follow_the_text():
    by = {c["id"]: c for c in CASES}
    # the command's own --gpu-memory-utilization is the one to raise from
    d = diagnose(by["vllm-recipes-12-v1-kv-dp8-util095"]["text"])
    assert not any("0.90" in f.summary for f in d.fixes)
    # a host-RAM failure: fewer layers on the GPU would put more in the RAM that ran out
    d = diagnose(by["ollama-16968-llama-server-cpu-buffer-title-cut"]["text"])
    assert not any("num_gpu lower" in f.summary for f in d.fixes)
    # an SGLang KV pool over the device: no attention-matrix advice
    d = diagnose(by["gpustack-4761-sglang-npu-kv-pool-over-device"]["text"])
    assert not any("attention" in f.summary for f in d.fixes)
    assert any("(kv_cache)" in c for c in d.causes)


def test_vllm_and_sglang_flags_quoted_in_the_text():
    # a wrapper printing vLLM's argv as a list of words (verl PR #5015's form, on one line), and an SGLang command
    text = ("argv: ['serve', '/mnt/share/weight/Qwen2.5-32B', '--max_model_len', '131072', '--gpu_memory_utilization', "
            "'0.8', '--tensor_parallel_size', '2']\nValueError: To serve at least one request with the models's max "
            "seq len (131072), (32.00 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(8.00 GiB).")
    d = diagnose(text)
    assert d.stage == "kv_cache"
    assert (d.settings["max_model_len"], d.settings["gpu_memory_utilization"], d.settings["tensor_parallel_size"]) \
        == (131072, 0.8, 2)
    d = diagnose("python -m sglang.launch_server --model-path m --mem-fraction-static 0.7 --context-length 8192\n"
                 "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
    assert d.engine == "sglang" and d.settings["mem_fraction_static"] == 0.7 and d.settings["context_length"] == 8192
    assert any("(from 0.7)" in f.summary for f in d.fixes)


def _cli(args, stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", "oomkit", *args], input=stdin, capture_output=True, timeout=120)


def test_cli_empty_input_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty.log").write_bytes(b"")
    for r in (_cli(["diagnose", str(tmp_path / "empty.log")]), _cli(["diagnose", "-"], stdin=b"  \r\n\t\n")):
        err = r.stderr.decode()
        assert r.returncode == 2 and err.count("\n") == 1 and "empty" in err and "Traceback" not in err


def test_cli_utf16_log_reads_without_its_bom(tmp_path):
    text = next(c for c in CASES if c["id"] == "vllm-16118-v1-kv-1m-no-estimate")["text"].replace("\n", "\r\n")
    (tmp_path / "ps.log").write_bytes(text.encode("utf-16"))
    r = _cli(["diagnose", str(tmp_path / "ps.log"), "--json"])
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["stage"] == "kv_cache"
    assert "\ufffd" not in r.stdout.decode("utf-8")
