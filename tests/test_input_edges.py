"""Input edges read as the engines read them: each refusal in the engine's own words, each accepted form as the engine
takes it.

- llama.cpp cache types: common/arg.cpp kv_cache_type_from_str compares the value with ggml_type_name exactly (from
  PR #10806, b4317; common.cpp's lower-case names from PR #4309, b1619, before), so `-ctk Q8_0` stops every build:
  "Unsupported cache type: Q8_0".
- llama.cpp -fa: a value from PR #15434 (b6325; on / enabled, off / disabled, auto) and 1 / 0 / -1 from PR #15792
  (b6393, is_truthy / is_falsey / is_autoy, case-sensitive); anything else "unkown value for --flash-attn: '%s'"
  (llama.cpp's spelling); a bare -fa before b6325, where the word after it is an argument of its own (invalid).
- a refusal repeats an argument at most 80 characters long, then an ellipsis and its length.
- mlx_lm.generate --prompt TEXT: generate.py main encodes the prompt (in the chat template) and generate_step's cache
  grows to its tokens and --max-tokens; oomkit bounds the tokens as one per UTF-8 byte plus 256 for the template.
- vLLM AWQ: awq.py AWQConfig.__init__ "Currently, only 4-bit weight quantization is supported for AWQ, but got 3
  bits." (0.2-0.23; awq_marlin takes 4 or 8 bits, moe_wna16 AWQ at 4 only, so a 3-bit checkpoint stays with it).
- llama.cpp --backend against the GPUs: Metal on an NVIDIA card no macOS driver takes (Turing on), CUDA on an
  Apple chip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import hostile as H
from tests.sweep_harness import offline, one_line_or_answer, run_cli  # noqa: F401 (autouse: no network)

_LLAMA = ["estimate", "--vram", "24GiB", "--", "llama-server", "-m", "qwen3:8b"]


def _refused(*argv: str) -> str:
    rc, out, err = run_cli(*argv)
    one_line_or_answer(rc, err, argv)
    assert rc == 2, (argv, out[:300])
    return err.strip()


def _answered(*argv: str) -> str:
    rc, out, err = run_cli(*argv)
    one_line_or_answer(rc, err, argv)
    assert rc in (0, 1), (argv, err)
    return out


# ---- llama.cpp cache types and -fa ----

@pytest.mark.parametrize("flag,value", [("-ctk", "Q8_0"), ("-ctv", "F16"), ("--cache-type-k", "Q4_0"),
                                        ("-ctkd", "Q8_0"), ("-ctk", "IQ4_NL")])
def test_a_cache_type_llama_cpp_does_not_name_is_refused_in_its_words(flag, value):
    err = _refused(*_LLAMA, flag, value, "-fa", "on")
    assert f"Unsupported cache type: {value}" in err, err


@pytest.mark.parametrize("value", ["q8_0", "q4_0", "f16", "bf16", "iq4_nl", "q5_1"])
def test_the_cache_types_llama_cpp_names_are_read(value):
    _answered(*_LLAMA, "-ctk", value, "-ctv", value, "-fa", "on")


@pytest.mark.parametrize("value", ["yes", "ON", "True", "no"])
def test_a_flash_attention_word_llama_cpp_does_not_take_is_refused_in_its_words(value):
    err = _refused(*_LLAMA, "-fa", value)
    assert f"unkown value for --flash-attn: '{value}'" in err, err


def _fa(value: str) -> str:
    return json.loads(_answered(*_LLAMA[:3], "--json", *_LLAMA[3:], "-fa", value))["settings"]["flash_attn"]


@pytest.mark.parametrize("value,same_as", [("on", "on"), ("enabled", "on"), ("off", "off"), ("disabled", "off"),
                                           ("1", "on"), ("0", "off"), ("-1", "auto")])
def test_the_flash_attention_values_llama_cpp_takes(value, same_as):
    assert _fa(value) == _fa(same_as)
    assert _fa("on") == "on" and _fa("off") == "off"


# ---- an argument of 8,000 characters in a refusal ----

@pytest.mark.parametrize("command", [
    ["llama-server", "-m", "qwen3:8b", "x" * 8000],
    ["x" * 8000],
    ["vllm", "serve", "Qwen/Qwen3-8B", "--" + "x" * 8000],
    ["python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--" + "x" * 8000],
    ["mlx_lm.generate", "--model", "mlx-community/Qwen3-1.7B-4bit", "--" + "x" * 8000],
])
def test_a_long_argument_is_cut_in_the_refusal(command):
    err = _refused("estimate", "--vram", "24GiB", "--", *command)
    assert len(err) < 400 and "x" * 78 + "..." in err and "characters)" in err, err[:500]


# ---- mlx_lm.generate --prompt TEXT ----

def _mlx(*flags: str) -> dict:
    out = _answered("check", "--json", "--gpu", "M1 8GB", "--", "mlx_lm.generate", "--model",
                    "mlx-community/Qwen3-1.7B-4bit", *flags)
    return json.loads(out)["estimate"]


def test_a_typed_prompt_sizes_the_run_at_its_tokens_and_max_tokens():
    e = _mlx("--prompt", "hi", "--max-tokens", "256")
    # 2 bytes + 256 for the chat template, then 256 generated: 514 (was the trained context, 40,960)
    assert e["settings"]["prompt_tokens"] == 258 and e["settings"]["context_length"] == 514
    assert e["fits"] and any("one token per UTF-8 byte (2)" in w for w in e["warnings"])


def test_the_prompt_is_read_as_mlx_lm_unescapes_it():
    # generate.py main: args.prompt.replace("\\n", "\n"): 'héllo\nx' is 8 bytes of UTF-8 (é two)
    e = _mlx("--prompt", "héllo\\nx", "-m", "100", "--system-prompt", "be brief")
    assert e["settings"]["prompt_tokens"] == 8 + 8 + 256 and e["settings"]["context_length"] == 372


def test_a_prompt_from_stdin_or_given_tokens_is_sized_as_before():
    assert _mlx("--prompt", "-", "--max-tokens", "256")["settings"]["context_length"] == 40960
    e = _mlx("--prompt", "hi", "--max-tokens", "256", "--prompt-tokens", "1000")
    assert e["settings"]["prompt_tokens"] == 1000 and not any("UTF-8" in w for w in e["warnings"])


# ---- vLLM AWQ widths ----

def _awq(tmp: Path, bits: int) -> list[str]:
    H.write_config(tmp / "m", json.dumps(H.llama_config(quantization_config={
        "quant_method": "awq", "bits": bits, "group_size": 128, "zero_point": True, "version": "gemm"})))
    return ["estimate", str(tmp / "m"), "--engine", "vllm", "--vram", "80GiB"]


@pytest.mark.parametrize("bits", [2, 3, 5])
def test_an_awq_width_no_vllm_kernel_takes_is_refused(tmp_path, bits):
    err = _refused(*_awq(tmp_path, bits))
    assert (f"Currently, only 4-bit weight quantization is supported for AWQ, but got {bits} bits." in err
            and f"Unsupported num_bits = {bits}. Supported: 4." in err), err


def test_4_bit_awq_loads_in_vllm(tmp_path):
    _answered(*_awq(tmp_path, 4))


# ---- --backend against --gpu ----

@pytest.mark.parametrize("backend,gpu,words", [
    ("metal", "RTX 4090", "no driver for an NVIDIA card of compute capability 8.9"),
    ("metal", "RTX 2080 Ti", "compute capability 7.5"),
    ("cuda", "M2 Max 32GB", "an Apple GPU runs llama.cpp's Metal backend"),
    ("rocm", "M4 Pro 48GB", "not ROCm"),
])
def test_a_backend_that_cannot_drive_the_gpu_is_refused(backend, gpu, words):
    err = _refused("estimate", "qwen3:8b", "--backend", backend, "--gpu", gpu)
    assert words in err, err


@pytest.mark.parametrize("backend,gpu", [("vulkan", "RTX 4090"), ("vulkan", "M2 Max 32GB"), ("metal", "M2 Max 32GB"),
                                         ("cuda", "RTX 4090"), ("metal", None)])
def test_a_backend_that_drives_the_gpu_is_read(backend, gpu):
    hw = ["--gpu", gpu] if gpu else ["--vram", "24GiB"]
    _answered("estimate", "qwen3:8b", "--backend", backend, *hw)


# ---- a file name that names a catalog model ----

def test_a_missing_gguf_file_named_for_a_catalog_model_suggests_the_name():
    err = _refused("estimate", "--vram", "24GiB", "--", "llama-server", "-m", "models/Qwen3-8B-Q4_K_M.gguf")
    assert "no such file: models/Qwen3-8B-Q4_K_M.gguf" in err and "Qwen/Qwen3-8B:Q4_K_M" in err, err
