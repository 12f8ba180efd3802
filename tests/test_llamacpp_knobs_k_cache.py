"""llama.cpp's knob list: a quantized K cache alone (-ctk, V left f16) where flash attention is off.

The engine's rules, read in llama.cpp's history (build = `git rev-list --count <commit>` on master):
- PR #4309 (bcc0eb45, b1619) added -ctk / -ctv to common.cpp gpt_params_parse (main, llama-bench) and the f32 ->
  q8_0 / q4_0 copy kernels of the CPU, CUDA and Metal backends; a quantized K alone is never refused, a quantized V
  without -fa is from PR #7527 (b3062, "V cache quantization requires flash_attn") to this day;
- the server kept its own parser, which exits on an unknown argument, until PR #5684 (fd43d66f, b2251);
- llama-cpp-python's Llama(type_k=, type_v=) came with 0.2.58 (its PR #1307), which vendors llama.cpp b2578;
- -fa is from PR #5021 (b2771), off by default until PR #15434 (b6325) made it auto.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp.knobs import knobs
from oomkit.plan.fit import fit
from oomkit.request import devices_from, resolve_model
from tests.sweep_harness import offline  # noqa: F401 (the autouse fixture: no network, a fresh cache)

ENG = get_engine("llama.cpp")
MODEL = "Qwen/Qwen1.5-14B-Chat-GGUF:Q4_K_M"  # 40 heads of 128 (a q8_0 / q4_0 block of 32 divides them)


def _caches(build: int, program: str = "llama-server", **settings) -> list[tuple[str, str, str]]:
    spec = resolve_model(ENG, MODEL)
    base = replace(ENG.settings(), engine_version=f"b{build}", program=program, **settings)
    return [(c.settings.cache_type_k, c.settings.cache_type_v, c.settings.flash_attn)
            for c in knobs(MODEL, spec, devices_from(gpu="T4"), base, fixed_format=True)]


K_ALONE = [("q8_0", "f16", "auto"), ("q4_0", "f16", "auto")]


@pytest.mark.parametrize(("program", "first"), [("llama-cli", 1619), ("llama-server", 2251),
                                                ("llama-cpp-python", 2578)])
def test_k_alone_from_the_build_each_program_takes_ctk(program, first):
    assert _caches(first - 1, program) == [("f16", "f16", "auto")]
    assert _caches(first, program) == [("f16", "f16", "auto"), *K_ALONE]


def test_before_flash_attention_by_default_k_alone_comes_before_k_and_v():
    """b3000: -fa exists but is off unless given; -ctk alone keeps the V cache and attention path as run."""
    assert _caches(3000) == [("f16", "f16", "auto"), *K_ALONE, ("q8_0", "q8_0", "on"), ("q4_0", "q4_0", "on")]


def test_with_flash_attention_on_by_default_or_typed_only_k_and_v():
    both = [("f16", "f16", "auto"), ("q8_0", "q8_0", "on"), ("q4_0", "q4_0", "on")]
    assert _caches(6325) == both  # -fa auto (PR #15434)
    assert _caches(3000, flash_attn="on") == [("f16", "f16", "on"), ("q8_0", "q8_0", "on"), ("q4_0", "q4_0", "on")]


def test_typed_fa_off_keeps_k_alone_on_a_new_build():
    got = _caches(7000, flash_attn="off")
    assert got[:3] == [("f16", "f16", "off"), ("q8_0", "f16", "off"), ("q4_0", "f16", "off")]


def test_fit_writes_ctk_alone_for_a_server_that_takes_it():
    """Qwen1.5-14B Q4_K_M at 32,768 tokens on a T4 (15,360 MiB): 6,400 MiB of f16 cache at 8,192 tokens leaves no
    room on the card; at b2251 the server takes -ctk, so fit keeps every layer on the GPU with -ctk q8_0 (no -ctv,
    no -fa: b2251 has no flash attention); at b2200 its parser had no -ctk, so the layers go to system RAM."""
    argv = ["./server", "-m", MODEL, "-c", "32768", "-ngl", "99"]
    f = fit(argv, devices_from(gpu="T4"), engine_version="b2251")
    assert f.tier == 1 and f.command is not None
    assert "-ctk" in f.command and f.command[f.command.index("-ctk") + 1] == "q8_0"
    assert "-ctv" not in f.command and "-fa" not in f.command
    assert fit(argv, devices_from(gpu="T4"), engine_version="b2200").tier == 2
