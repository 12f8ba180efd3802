"""transformers held out, set 2: the Qwen2.5 speed benchmark's GPU memory, checked against oomkit's estimate.

QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst ("Qwen2.5 Speed Benchmark", the Transformer tables, BF16
rows): NVIDIA A100 80GB, CUDA 12.1, PyTorch 2.3.1, Flash Attention 2.5.8, Transformers 4.46.0; batch 1, 2048 generated
tokens after inputs of 1, 6144, 14336 and 30720 tokens, "the least number of GPUs as possible" (the 72B on 2 and 3).
The script (examples/speed-benchmark/speed_benchmark_transformer.py at 0b7d9f76): from_pretrained(torch_dtype='auto',
device_map='auto', attn_implementation='flash_attention_2'), generate(min_length=2048 + input, max_new_tokens=2048),
then the sum over the GPUs of torch.cuda.max_memory_allocated(i), printed as "max_gpu_memory_cost / 1024 / 1024 /
1024": GiB, in the table's "GPU Memory(GB)" column.

oomkit's figure is the sum of its torch-allocated bytes per device (weights + cache + the modelled working set, without
the CUDA context torch does not see), the band of set 1: 5 % either way. None of these figures set a rule. At this
file's commit the small models fell with the input length (estimate / printed at 1, 6144, 14336, 30720 tokens):

    0.5B  0.974 0.958 0.951 0.944     7B   0.994 0.991 0.985 0.976     32B  0.999 0.998 0.996 0.992
    1.5B  0.994 0.986 0.975 0.963     14B  0.993 0.991 0.986 0.980     72B  0.999 0.998 0.994 0.988

about two B x T x n_embd rows per token on every model. Read in 4.46's Qwen2Model.forward (and LlamaModel / Qwen2Model
up to 5.24): `inputs_embeds` lives through the whole forward and the loop variable `hidden_states` keeps each layer's
input until it returns, beside the layer's residual and normed rows; on the 72B's second and third GPU accelerate's
send_to_device copies the input over, and no inputs_embeds lives there. With those rows (transients.py):

    0.5B  0.974 0.974 0.981 0.988     7B   0.994 0.997 0.997 0.996     32B  0.999 1.000 1.000 1.000
    1.5B  0.994 0.996 0.995 0.994     14B  0.993 0.995 0.995 0.995     72B  0.999 1.000 1.000 1.000

and with the rotary cos / sin and int64 position ids the forward keeps for every layer (4.45 on, transients.py):

    0.5B  0.974 0.976 0.983 0.991     7B   0.994 0.997 0.997 0.997     32B  0.999 1.000 1.000 1.000
    1.5B  0.994 0.997 0.997 0.996     14B  0.993 0.995 0.995 0.996     72B  0.999 1.000 1.000 1.000
"""

from __future__ import annotations

import pytest

from oomkit.engines import transformers as tfe
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB = 1 << 30
URL = "https://github.com/QwenLM/Qwen2.5/blob/main/docs/source/benchmark/speed_benchmark.rst"
LENGTHS = (1, 6144, 14336, 30720)

# model: (GPU Memory(GB) at each input length (BF16 rows, verbatim), GPU Num at each)
QWEN25_BF16 = {
    "qwen2.5-0.5b-instruct": ((0.97, 1.23, 1.60, 2.34), (1, 1, 1, 1)),
    "qwen2.5-1.5b-instruct": ((2.95, 3.43, 4.16, 5.62), (1, 1, 1, 1)),
    "qwen2.5-7b-instruct": ((14.38, 15.38, 16.91, 19.97), (1, 1, 1, 1)),
    "qwen2.5-14b-instruct": ((28.08, 29.50, 31.95, 36.85), (1, 1, 1, 1)),
    "qwen2.5-32b-instruct": ((61.58, 63.72, 67.31, 74.47), (1, 1, 1, 1)),
    "qwen2.5-72b-instruct": ((136.20, 140.00, 149.14, 164.79), (2, 2, 3, 3)),
}
# one row verbatim per table, as printed
LINES = {
    "qwen2.5-0.5b-instruct": "| Qwen2.5-0.5B-Instruct   | 1            | BF16         | 1       | 47.40           | 0.97 ",
    "qwen2.5-1.5b-instruct": "| Qwen2.5-1.5B-Instruct    | 1            | BF16         | 1       | 39.68           | 2.95 ",
    "qwen2.5-7b-instruct": "| Qwen2.5-7B-Instruct         | 1            | BF16         | 1       | 40.38           | 14.38 ",
    "qwen2.5-14b-instruct": "| Qwen2.5-14B-Instruct     | 1            | BF16         | 1       | 24.74           | 28.08 ",
    "qwen2.5-32b-instruct": "| Qwen2.5-32B-Instruct        | 1            | BF16         | 1       | 17.54           | 61.58 ",
    "qwen2.5-72b-instruct": "| Qwen2.5-72B-Instruct        | 1            | BF16         | 2       | 8.73            | 136.20",
}


# Below the band (a strict xfail each): none since the hidden-state rows above.
MISSES: dict[tuple[str, int], str] = {}


def _cases():
    for slug, (figures, gpus) in QWEN25_BF16.items():
        for length, printed, n in zip(LENGTHS, figures, gpus, strict=True):
            miss = MISSES.get((slug, length))
            marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
            yield pytest.param(slug, length, printed, n, marks=marks, id=f"{slug}-{length}")


@pytest.mark.parametrize("slug,length,printed,n_gpus", list(_cases()))
def test_qwen25_speed_benchmark_peak(slug, length, printed, n_gpus):
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(n_gpus))
    spec = spec_from_config(dict(catalog.lookup(slug).config), name=slug)
    est = tfe.ENGINE.estimate(spec, devices, tfe.TransformersSettings(
        prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version="4.46.0"))
    allocated = sum(est.engine_view["torch_allocated_bytes"].values()) / GiB
    assert 0.95 <= allocated / printed <= 1.05, f"{slug} @ {length}: {allocated:.2f} vs {printed} GiB ({URL})"


def test_72b_spreads_over_every_gpu():
    """device_map='auto' (accelerate infer_auto_device_map via get_balanced_memory, the 'balanced' default of
    'auto' on more than one GPU) puts layers on each of the 3 GPUs the 14336-token row ran on."""
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(3))
    spec = spec_from_config(dict(catalog.lookup("qwen2.5-72b-instruct").config), name="q")
    est = tfe.ENGINE.estimate(spec, devices, tfe.TransformersSettings(
        prompt_tokens=14336, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version="4.46.0"))
    per = est.engine_view["torch_allocated_bytes"]
    assert set(per) == {"CUDA0", "CUDA1", "CUDA2"} and min(per.values()) > 40 * GiB
