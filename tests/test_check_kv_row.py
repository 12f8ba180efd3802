"""`oomkit check`'s KV cache row for the engines that allocate a pool from the memory budget (vLLM, SGLang): it names
the pool and its tokens, and where vLLM refuses the context it says what one request of it needs, instead of a
"KV cache for N tokens" row holding the pool's size (was: "KV cache for 131072 tokens  5,592 MiB" on a run whose
131072-token request needs 16 GiB)."""

from __future__ import annotations

import json

import pytest

from tests.sweep_harness import offline, run_cli  # noqa: F401 (the autouse fixture: no network, a fresh cache)

# Llama 3.1 8B: 32 layers x 8 KV heads x 128 x (K + V) x 2 B = 128 KiB a token (config.json); 131072 tokens: 16 GiB,
# the figure vLLM's refusal prints ("(16.0 GiB KV cache is needed", kv_cache_utils.py _check_enough_kv_cache_memory)
LLAMA = ["check", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm", "--gpu", "RTX 4090"]


def _row(out: str, start: str) -> str:
    return next(ln for ln in out.splitlines() if ln.strip().startswith(start))


def test_refused_context_names_the_pool_and_what_one_request_needs():
    rc, out, err = run_cli(*LLAMA)
    assert rc == 1, err
    row = _row(out, "KV cache")
    assert row.split()[:3] == ["KV", "cache", "pool"] and "one 131072-token request needs 16,384 MiB" in row, row
    assert "KV cache for" not in out, out


def test_a_run_that_starts_gives_the_pool_in_tokens():
    rc, out, err = run_cli(*LLAMA, "--max-model-len", "8192", "--json")
    assert rc == 0, err
    view = json.loads(out)["estimate"]["engine_view"]
    tokens = view["num_gpu_blocks"] * view["block_size"]
    rc, out, err = run_cli(*LLAMA, "--max-model-len", "8192")
    row = _row(out, "KV cache")
    assert f"KV cache pool ({tokens} tokens)" in row and "128 KiB per token" in row, row


@pytest.mark.parametrize("engine_args", [["--engine", "llama.cpp", "-c", "32768"]])
def test_engines_that_size_the_cache_for_the_context_keep_their_row(engine_args):
    rc, out, err = run_cli("check", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "RTX 4090", *engine_args)
    assert rc in (0, 1), err
    assert "KV cache for 32768 tokens" in _row(out, "KV cache") and "4,096 MiB" in _row(out, "KV cache"), out
