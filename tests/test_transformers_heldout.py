"""transformers held out: footprints and peaks printed in public material, checked against oomkit's estimate.

Two kinds of figure:

* `model.get_memory_footprint()` (modeling_utils.py: the bytes of every parameter and buffer): oomkit's weights. The
  weights are counted per tensor, so the band is tight: within 0.5 % (bitsandbytes' int8 SCB statistics are an
  attribute of the weight, not a parameter, so the footprint leaves out what oomkit counts: +0.06 % on an 8B model).
* `torch.cuda.max_memory_allocated()` after `generate` (the Qwen3 speed benchmark): oomkit's torch-allocated bytes
  of the device (weights + cache + the modelled working set, without the CUDA context that torch does not see). The
  weights and the cache are exact (the cache is checked against transformers itself in test_transformers_engine.py);
  the working set of a forward is modelled, so the band is 5 % either way.

None of these figures was used to set a rule; the rules cite transformers' source (src/oomkit/engines/transformers).
"""

from __future__ import annotations

import pytest

from oomkit.engines import transformers as tfe
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB, MiB = 1 << 30, 1 << 20
H20 = (Device("CUDA0", "NVIDIA H20", 96 * GiB),)


def _estimate(slug: str, devices=H20, **settings):
    spec = spec_from_config(dict(catalog.lookup(slug).config), name=slug)
    return tfe.ENGINE.estimate(spec, devices, tfe.TransformersSettings(**settings))


# ---------------------------------------------------------------------------------------------------------
# get_memory_footprint()

# A public script in the code index of this project's search tool (file id 18520721883; its repository is not named
# there), with its printed results as comments; it pins transformers==4.44.1 and bitsandbytes==0.43.3.
FOOTPRINT_SOURCE = "code index file 18520721883 (transformers==4.44.1, bitsandbytes==0.43.3)"
FOOTPRINTS = [
    # (id, lines kept, model, settings, printed bytes)
    ("llama-3.1-8b-default-dtype",
     "model = AutoModelForCausalLM.from_pretrained(model_name, device_map = \"auto\") / "
     "print(model.get_memory_footprint()) / # 32121053440 = memory required to store the model is around "
     "32121053440 bytes (30GB).",
     "llama-3.1-8b-instruct", dict(engine_version="4.44.1"), 32_121_053_440),
    ("llama-3.1-8b-load-in-8bit",
     "bnb_config = BitsAndBytesConfig(load_in_8bit = True) ... print(quantized_model.get_memory_footprint()) / "
     "#9081209088 = the quantization significantly reduced the memory required to store the model from 30 GB to "
     "9081209088 bytes, which is only around 8.45 GB.",
     "llama-3.1-8b-instruct", dict(engine_version="4.44.1", load_in_8bit=True), 9_081_209_088),
]


@pytest.mark.parametrize("fid,lines,slug,settings,printed", FOOTPRINTS, ids=[f[0] for f in FOOTPRINTS])
def test_memory_footprint(fid, lines, slug, settings, printed):
    """v4 loads in float32 when no dtype is given (the footprint is 8,030,261,248 x 4 bytes + 33 rotary inv_freq
    buffers of 64 float32); with load_in_8bit the bitsandbytes quantizer turns the missing dtype into float16
    (quantizer_bnb_8bit.py update_torch_dtype): int8 decoder Linears, embeddings, lm_head and norms in float16."""
    est = _estimate(slug, max_length=64, max_new_tokens=50, **settings)
    assert abs(est.weights_bytes / printed - 1) < 0.005, f"{fid}: {est.weights_bytes:,} vs {printed:,}"


# ---------------------------------------------------------------------------------------------------------
# Qwen3 speed benchmark (QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark.md, the Qwen3 tables):
# NVIDIA H20 96GB, PyTorch 2.6.0, Flash Attention 2.7.4, Transformers 4.51.3; batch 1, 2048 generated tokens;
# examples/speed-benchmark/speed_benchmark_transformers.py: from_pretrained(torch_dtype='auto', device_map='auto',
# attn_implementation='flash_attention_2'), generate(min_length = 2048 + input, max_new_tokens=2048), then the sum of
# torch.cuda.max_memory_allocated(i), printed in MB of 2^20 bytes ("GPU Memory(MB)").

QWEN_URL = "https://github.com/QwenLM/Qwen2.5/blob/main/docs/source/getting_started/speed_benchmark.md"
QWEN3_BF16 = {  # model: GPU Memory(MB) at input length 1, 6144, 14336, 30720 (BF16 rows)
    "Qwen/Qwen3-0.6B": (1394, 2066, 2963, 4755),
    "Qwen/Qwen3-1.7B": (3412, 4213, 5109, 6902),
    "Qwen/Qwen3-4B": (7973, 8860, 10012, 12317),
    "Qwen/Qwen3-8B": (15947, 16811, 17963, 20267),
    "Qwen/Qwen3-14B": (28402, 29495, 30775, 33336),
    "Qwen/Qwen3-32B": (62751, 64583, 66632, 70728),
    "Qwen/Qwen3-30B-A3B": (58462, 59037, 59806, 61342),
}
LENGTHS = (1, 6144, 14336, 30720)
# Long prompts: every printed figure sits 33-36 MiB above the weights plus the cache at the end of generation
# (prompt + 2047 tokens), at every input length (Qwen3-0.6B: 1137 MiB + 224 / 896 / 1792 / 3584 MiB of cache + 33);
# the prefill's working set never shows, though a 30720-token forward holds the MLP's T x n_ff tensors (three of
# 720 MiB on Qwen3-8B) beside the prefilled cache. oomkit models that working set (transients.py), so it is high by
# about the MLP's tensors; not tuned to the table. Measured estimate / printed after the rules of this file's commit:
# The hidden-state rows the model's forward holds beside the layer (inputs_embeds and the loop's layer input, see
# transients.py) moved Qwen3-14B @ 14336 (+4.4 -> +5.3 %) and Qwen3-30B-A3B @ 30720 (+4.9 -> +5.3 %) out of the band.
# The rotary cos / sin and position ids the forward keeps for every layer (transients.py) add at most 0.3 %.
LONG_MISSES = {
    ("Qwen/Qwen3-0.6B", 30720): "+11.3 %", ("Qwen/Qwen3-1.7B", 14336): "+9.3 %",
    ("Qwen/Qwen3-1.7B", 30720): "+19.1 %", ("Qwen/Qwen3-4B", 14336): "+7.6 %", ("Qwen/Qwen3-4B", 30720): "+16.2 %",
    ("Qwen/Qwen3-8B", 14336): "+6.3 %", ("Qwen/Qwen3-8B", 30720): "+13.9 %", ("Qwen/Qwen3-14B", 14336): "+5.3 %",
    ("Qwen/Qwen3-14B", 30720): "+11.7 %", ("Qwen/Qwen3-32B", 30720): "+7.3 %", ("Qwen/Qwen3-30B-A3B", 30720): "+5.3 %",
}


def _qwen_cases():
    for slug, figures in QWEN3_BF16.items():
        for length, printed in zip(LENGTHS, figures, strict=True):
            miss = LONG_MISSES.get((slug, length))
            marks = [pytest.mark.xfail(strict=True, reason=f"{miss}: the printed peak shows no prefill working set "
                                                           "(see LONG_MISSES)")] if miss else []
            yield pytest.param(slug, length, printed, marks=marks, id=f"{slug.split('/')[1]}-{length}")


@pytest.mark.parametrize("slug,length,printed", list(_qwen_cases()))
def test_qwen3_speed_benchmark_peak(slug, length, printed):
    est = _estimate(slug, prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2",
                    torch_dtype="auto", device_map="auto", engine_version="4.51.3")
    allocated = est.engine_view["torch_allocated_bytes"]["CUDA0"] / MiB
    assert 0.95 <= allocated / printed <= 1.05, f"{slug} @ {length}: {allocated:.0f} vs {printed} MiB ({QWEN_URL})"
