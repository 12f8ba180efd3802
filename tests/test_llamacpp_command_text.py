"""llama.cpp command text as llama.cpp reads it.

- -ctk / -ctv: common/arg.cpp kv_cache_type_from_str (llama.cpp, b4317 on; common.cpp's from b1619 before) returns
  the type whose ggml_type_name(type) == s, the value untrimmed, else throws "Unsupported cache type: " + s; so
  " q8_0", "q8_0\\t" and "q8_0\\u2028" stop llama.cpp as "Q8_0" does. Ollama's OLLAMA_KV_CACHE_TYPE is read by
  envconfig.Var (ollama envconfig/config.go: strings.Trim(strings.TrimSpace(s), "\\"'")), so there the padding goes.
"""

from __future__ import annotations

import pytest

from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

_LLAMA = ["estimate", "--vram", "24GiB", "--", "llama-server", "-hf", "unsloth/Qwen3-8B-GGUF:Q4_K_M"]


@pytest.mark.parametrize("flag,value", [("-ctk", " q8_0"), ("-ctk", "q8_0\t"), ("-ctk", "q8_0\u2028"),
                                        ("-ctv", "f16 "), ("-ctkd", " q4_0"), ("-ctk", " Q8_0")])
def test_a_cache_type_with_white_space_around_it_is_refused_as_llama_cpp_refuses_it(flag, value):
    argv = (*_LLAMA, flag, value, "-fa", "on")
    rc, out, err = run_cli(*argv)
    one_line_or_answer(rc, err, argv)
    assert rc == 2, out[:300]
    assert f'error while handling argument "{flag}": Unsupported cache type:' in err, err
    assert f"give {value.strip().lower()})" in err, err


def test_the_exact_name_is_still_read():
    rc, out, err = run_cli(*_LLAMA, "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on")
    assert rc in (0, 1), err
    assert "type_k: q8_0" in out and "type_v: q8_0" in out, out


def test_ollama_trims_its_cache_type_variable_as_envconfig_does():
    rc, out, err = run_cli("estimate", "--vram", "24GiB", "--", "env", "OLLAMA_FLASH_ATTENTION=1",
                           "OLLAMA_KV_CACHE_TYPE= q8_0 ", "ollama", "run", "qwen3:8b")
    assert rc in (0, 1), err
    assert "type_k: q8_0" in out and "type_v: q8_0" in out, out
