"""SGLang turns chunked prefill off (chunked_prefill_size = -1) for some multimodal models, after mem_fraction_static
is chosen. Read from the wheels (pip download sglang==X --no-deps):

- 0.4.0 / 0.4.5.post3 / 0.4.6 / 0.4.6.post1-post4 srt/model_executor/model_runner.py model_specific_adjustment: `if
  self.is_multimodal:`
  ... `server_args.chunked_prefill_size = -1` ("Automatically turn off --chunked-prefill-size for multimodal model."):
  every multimodal model.
- 0.4.6.post5, 0.4.7, 0.5.0rc2, 0.5.10 model_runner.py: the same block, now under `if not
  self.is_multimodal_chunked_prefill_supported`;
  srt/configs/model_config.py is_multimodal_chunked_prefill_supported refuses Grok1VForCausalLM, Grok1AForCausalLM,
  LlavaLlamaForCausalLM, MllamaForConditionalGeneration and CLIPModel.
- 0.5.23 srt/arg_groups/model_hook.py handle_model_capability_adjustments: the same condition (the list adds
  MossVLForConditionalGeneration), declare_resolution(..., chunked_prefill_size=-1).
- model_config.py ModelConfig.__init__: enable_multimodal None -> False (is_multimodal False) for
  Llama4ForConditionalGeneration (0.4.5.post3 read; --enable-llama4-multimodal from 0.4.5.post1) and
  Gemma3ForConditionalGeneration (0.4.6 read; 0.4.5.post3 lists Llama 4 only).
- scheduler.py prints server_args.chunked_prefill_size after the TP worker (and its ModelRunner) is built (0.4.2,
  0.4.6, 0.4.7, 0.5.0rc2, 0.5.10: "chunked_prefill_size=..." in the "max_total_num_tokens=..." line; 0.4.0 and 0.4.1
  print none; ", available_gpu_mem=X GB" ends it from 0.4.7, 0.4.6.post5 has none).
"""
from __future__ import annotations

import re

import pytest

from oomkit.engines import sglang
from oomkit.memory import Device
from oomkit.model.resolve import resolve


def _gpu(gib: int = 80) -> Device:
    return Device(id="CUDA0", name="NVIDIA H100 80GB HBM3", memory_bytes=gib << 30, free_bytes=gib << 30)


def _est(name: str, version: str, **kw):
    spec = resolve(name, "bf16")
    return sglang.ENGINE.estimate(spec, (_gpu(),), sglang.SGLangSettings(engine_version=version, **kw))


def _printed(est) -> str:
    return next(line for line in est.engine_view["log"].splitlines() if line.startswith("max_total_num_tokens="))


# (model, release, SGLang's chunked_prefill_size after the adjustment; 8192 = the H100's GPU-class default)
CASES = [
    # LlavaForConditionalGeneration: every multimodal model up to 0.4.6.post4, not in the 0.4.6.post5+ list
    ("llava-hf/llava-1.5-7b-hf", "0.4.0", -1),
    ("llava-hf/llava-1.5-7b-hf", "0.4.2", -1),
    ("llava-hf/llava-1.5-7b-hf", "0.4.6", -1),
    ("llava-hf/llava-1.5-7b-hf", "0.4.6.post4", -1),
    ("llava-hf/llava-1.5-7b-hf", "0.4.6.post5", 8192),
    ("llava-hf/llava-1.5-7b-hf", "0.4.7", 8192),
    ("llava-hf/llava-1.5-7b-hf", "0.5.0rc2", 8192),
    ("llava-hf/llava-1.5-7b-hf", "0.5.10", 8192),
    ("llava-hf/llava-1.5-7b-hf", "0.5.23", 8192),
    # MllamaForConditionalGeneration: off in every release
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.4.0", -1),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.4.6", -1),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.4.7", -1),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.5.0rc2", -1),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.5.10", -1),
    ("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.5.23", -1),
    # Gemma3ForConditionalGeneration: multimodal off by default from 0.4.6
    ("google/gemma-3-4b-it", "0.4.5.post3", -1),
    ("google/gemma-3-4b-it", "0.4.6", 8192),
    # a text model: never
    ("Qwen/Qwen3-8B", "0.4.0", 8192),
    ("Qwen/Qwen3-8B", "0.5.23", 8192),
]


@pytest.mark.parametrize(("name", "version", "cps"), CASES)
def test_chunked_prefill_switch_by_release(name, version, cps):
    est = _est(name, version)
    assert est.engine_view["chunked_prefill_size"] == cps
    # schedule_policy.py PrefillAdder.add_one_req: without a chunk a prompt is prefilled whole
    assert any("chunked prefill off" in w for w in est.warnings) == (cps == -1)
    if version == "0.4.0":  # scheduler.py prints no chunked_prefill_size before 0.4.2 (0.4.0, 0.4.1 wheels)
        assert "chunked_prefill_size" not in _printed(est)
    else:
        assert f", chunked_prefill_size={cps}, " in _printed(est)


def test_llama4_multimodal_off_by_default_from_0_4_5_post1():
    from oomkit.engines.sglang.layout import chunked_prefill_off
    from oomkit.engines.sglang.settings import parse_version

    spec = resolve("meta-llama/Llama-4-Scout-17B-16E-Instruct", "bf16")
    assert any(t.kind == "vision" for t in spec.towers)
    vit = (1, 1)
    assert chunked_prefill_off(spec, vit, parse_version("0.4.5"))
    assert not chunked_prefill_off(spec, vit, parse_version("0.4.5.post1"))
    assert not chunked_prefill_off(spec, vit, parse_version("0.4.7"))


def test_given_chunk_is_overridden_after_the_fraction_is_chosen():
    """`server_args.chunked_prefill_size = -1` overwrites a given --chunked-prefill-size too, but only after
    handle_gpu_memory_settings (0.5.23 arg_groups/memory_hook.py) has reserved activation memory for the chunk in force:
    the default fraction, and so the pool, still follow the given chunk while the printed line says -1."""
    name = "meta-llama/Llama-3.2-11B-Vision-Instruct"
    small, default, large = (_est(name, "0.5.23", chunked_prefill_size=c) for c in (4096, None, 16384))
    for est in (small, default, large):
        assert est.engine_view["chunked_prefill_size"] == -1
        assert ", chunked_prefill_size=-1, " in _printed(est)
    assert (small.engine_view["mem_fraction_static"] > default.engine_view["mem_fraction_static"]
            > large.engine_view["mem_fraction_static"])
    assert (small.engine_view["max_total_num_tokens"] > default.engine_view["max_total_num_tokens"]
            > large.engine_view["max_total_num_tokens"])
    # 0.4.6 (before the GPU-class reservation): a given chunk neither moves the fraction nor survives
    given = _est("llava-hf/llava-1.5-7b-hf", "0.4.6", chunked_prefill_size=4096)
    assert given.engine_view["chunked_prefill_size"] == -1
    assert given.engine_view["max_total_num_tokens"] == _est("llava-hf/llava-1.5-7b-hf", "0.4.6").engine_view[
        "max_total_num_tokens"]


def test_printed_line_by_release():
    """scheduler.py's "max_total_num_tokens=..." line as each release prints it."""
    name = "llava-hf/llava-1.5-7b-hf"
    assert re.fullmatch(r"max_total_num_tokens=\d+, max_prefill_tokens=16384, max_running_requests=\d+, "
                        r"context_len=4096", _printed(_est(name, "0.4.1")))
    assert re.fullmatch(r"max_total_num_tokens=\d+, chunked_prefill_size=-1, max_prefill_tokens=16384, "
                        r"max_running_requests=\d+, context_len=4096", _printed(_est(name, "0.4.6.post4")))
    assert re.fullmatch(r"max_total_num_tokens=\d+, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                        r"max_running_requests=\d+, context_len=4096, available_gpu_mem=\d+\.\d\d GB",
                        _printed(_est(name, "0.4.7")))
