"""MLX and transformers held out, set 7: public reports no earlier set cites, checked against oomkit.

Each report's lines are kept verbatim below with its URL. Bands are those of the earlier sets: transformers' peak
`torch.cuda.max_memory_allocated()` against the sum of oomkit's torch-allocated bytes within 5 % either way; mlx-lm's
printed peak against the estimate's total, est / printed in [0.93, 1.05].

transformers: the Qwen1.5 "HF Transformers Inference" table (QwenLM/Qwen2.5 docs/source/benchmark/hf_infer.rst, the
bf16, GPTQ-Int4 and AWQ rows): NVIDIA A100 80GB, PyTorch 2.1.2, Flash Attention 2.5.6, batch 1, "the speed and memory
of generating 2048 tokens with the input lengths of 1, 6144, 14336, and 30720 tokens", on "the least number of GPUs
as possible" (one but for the 72B rows). No earlier set cites this file (set 2 reads the Qwen2.5 tables). The
memory column is GiB: the Qwen speed benchmark takes torch.cuda.max_memory_allocated() / 1024**3 (the Qwen2.5 table,
test_transformers_heldout2.py), and the 0.5B / 1.8B long rows, where the prefill's logits decide the peak, agree
within 0.2 % only in GiB. The transformers release is not printed: the dense rows were added on 2024-03-21 (commit 95f532c),
4.38.2 taken (4.39.0 was released that day); the MoE rows on 2024-03-31 (commit 14544eb), when Qwen2MoeForCausalLM
existed only on transformers' main branch, 4.40.0 taken (its first release). Both are before 4.42, which is what
matters here.

Before -> after this set's rule (oomkit's allocated GiB / the table's, at input 1, 6144, 14336, 30720):

    Qwen1.5-0.5B-Chat        0.854 0.996 0.998 0.999   ->   0.978 0.996 0.998 0.999
    Qwen1.5-1.8B-Chat        0.910 0.995 0.998 0.999   ->   0.989 0.995 0.998 0.999
    Qwen1.5-4B-Chat          0.916 0.962 0.949 0.940   ->   0.995 0.997 0.998 0.999
    Qwen1.5-7B-Chat          0.942 0.950 0.923 0.902   ->   0.999 1.000 1.000 1.000
    Qwen1.5-14B-Chat         0.948 0.927 0.881  -      ->   0.999 0.999 0.999  -     (30720 ran on 2 GPUs, not
                                                                                     reported by the table)
    Qwen1.5-MoE-A2.7B-Chat   0.986 0.999 1.000 1.000   ->   0.999 0.999 1.000 1.000
    Qwen1.5-72B-Chat         0.990 0.897 0.821 0.757   ->   1.025 1.009 0.952 0.906   ->   1.025 1.008 0.963 0.948
      (on 2, 3, 4 and 5 GPUs; the table's figure is the sum of each GPU's own peak)            (30720: strict xfail)

    GPTQ-Int4 (one GPU)      0.5B 0.799 0.997 0.999 0.999  ->  0.974 0.997 0.999 0.999  ->  0.979 0.998 0.999 1.000
                             1.8B 0.864 0.996 0.998 0.999  ->  0.988 0.996 0.998 0.999  ->  0.995 0.999 0.999 1.000
                             4B   0.781 0.915 0.921 0.925  ->  0.916 0.962 0.979 0.990  ->  0.922 0.964 0.981 0.990
                             7B   0.796 0.875 0.873 0.873  ->  0.906 0.949 0.971 0.985  ->  0.916 0.954 0.974 0.986
                             14B  0.810 0.831 0.807        ->  0.920 0.953 0.973        ->  0.929 0.959 0.976
                             (4B / 7B / 14B with version 1, their config.json not read: input 1 a strict xfail
                             each; version 2 would give 0.997 0.999 0.999 1.000 / 0.992 0.996 0.998 0.999 /
                             0.990 0.994 0.997)
                             MoE  0.930 0.981 0.988 0.993  ->  0.969 0.981 0.988 0.993  ->  1.009 1.006 1.004 1.002
    AWQ (one GPU)            0.5B 0.806 0.998 0.999 1.000  ->  0.983 0.998 0.999 1.000
                             1.8B 0.869 0.999 1.000 1.000  ->  0.994 0.999 1.000 1.000
                             4B   0.850 0.950 0.940 0.935  ->  0.997 0.999 1.000 1.000
                             7B   0.871 0.918 0.897 0.885  ->  0.992 0.996 0.998 0.999
                             14B  0.872 0.867 0.827        ->  0.990 0.994 0.997
    72B GPTQ-Int4 on 1 / 2 / 3 / 4 GPUs   0.893 0.629 0.555 0.666  ->  0.992 0.818 0.859 0.932
                                                                   ->  0.999 0.826 0.875 1.002 (2 strict xfails)
    72B AWQ on 1 GPU                      0.900                    ->  1.000

    mlx-lm 0.31.1 (digital-transformation-advisory.com)   Qwen3.5-2B-4bit 1.1 GB      1.031 -> 1.031
                                                         Llama-3.2-3B-Instruct-4bit 2.0 GB  0.978 -> 0.978
                                                         Qwen3.5-4B-4bit 2.5 GB      1.011 -> 1.011

    30 of the 77 figures in the band before (27 of 74 transformers rows, the 3 MLX ones), 69 of 77 after the first
    rule, 71 of 77 after the second (the third column: GPTQ's kernel scratch and the logits sent back to GPU 0); the
    6 left are strict xfails (72B bf16 at 30720 on 5 GPUs, 72B GPTQ-Int4 on 2 and 3 GPUs, 4B / 7B / 14B GPTQ-Int4
    at input 1 with version 1's scratch).

The rule, from the engine's source (transformers/settings.py ERAS "cache_object_in_generate", transients.py
legacy_tuple, layout.py _phase_on). Every row below the band sat short by the same two things:

- Input 1: by one whole cache of the 2,048 tokens (Qwen1.5-7B: 2,048 x 32 layers x 2 x 4,096 x 2 bytes = 1.0 GiB,
  the 0.99 GiB it lacked; 0.5B 0.19 of 0.21, 4B 0.78 of 0.81, 14B 1.56 of 1.56). Before 4.42.0, generate carried
  the cache as the legacy tuple of per-layer tensors (4.38.2 generation/utils.py greedy_search: `model_kwargs =
  self._update_model_kwargs_for_generation(outputs, ...)`, model_kwargs["past_key_values"] a tuple) and the model
  wrapped it per step (modeling_qwen2.py Qwen2Model.forward: `DynamicCache.from_legacy_cache(past_key_values)`), whose
  update `self.key_cache[layer_idx] = torch.cat([...])` (cache_utils.py DynamicCache.update) made new tensors while
  the tuple kept the old ones until the step returned: the cache twice at the end of every decode step (the
  "2 copies of the full cache in every iteration" transformers PR #30536 describes). 4.42.0 passes a DynamicCache
  object (`model_kwargs["past_key_values"] = DynamicCache()` for models with _supports_cache_class; 4.41.2 has none).
- Long inputs: by the prefill's float32 logits. generate's loop variable `outputs` held the prefill's output, its
  [1, T, 151936] float32 logits (`logits = logits.float()` before 4.45) included, through the first decode step's
  forward; 4.42.0 added `del outputs` ("Otherwise a reference to outputs is kept which keeps the logits alive in the
  next iteration"). That step holds the prompt's cache twice beside them: Qwen1.5-7B at 30720 tokens, 14.88 GiB of
  weights + 2 x 15 GiB of cache + 17.39 GiB of logits = 62.27 GiB, the table's 62.29.
- Several GPUs: the benchmark sums torch.cuda.max_memory_allocated(i) over the GPUs, each GPU's own peak, and oomkit
  now reports each device at its own largest moment (layout.py _per_device_peak): with device_map="auto" the GPUs
  holding decoder layers peak at the end of generation (their cache twice), the lm_head's GPU when the logits are
  alive. Qwen1.5-72B-Chat at 30720 tokens on 5 GPUs stays 32 GiB short (311.9 of 344.17 GiB: weights 135 GiB, the
  cache twice 160 GiB, the logits 17.4 GiB); what else each GPU held is not found, a strict xfail.

The second rule (transformers/weights.py exllama_scratch, layout.py _compute_on):

- GPTQ's kernel scratch. transformers before 5.0 loads a GPTQ checkpoint through optimum and auto-gptq, whose
  autogptq_post_init (auto-gptq 0.7.1 modeling/_utils.py, called by optimum 1.17.1 GPTQQuantizer.post_init_model)
  keeps one set of buffers on every GPU holding QuantLinear modules: ExLlama version 1 a float16 `temp_dq` of the
  largest in x out (Qwen1.5-72B: 8192 x 24576 x 2 bytes, 0.375 GiB, the 0.41 GiB its GPTQ row holds beyond AWQ),
  version 2 an ExLlamaV2DeviceTensors scratch of the largest scratch_space_fixed() (in x out x 2 + out x 2048 x 8 x 4
  bytes: Qwen1.5-7B 0.756 GiB, the 0.77 its rows hold beyond AWQ). transformers' GPTQConfig takes what the
  checkpoint's quantization_config names (use_exllama, exllama_config.version, disable_exllama), version 1 where it
  names none; which configs are read here is told at CONFIG_MOE below.
- The logits sent back. With the lm_head on another GPU than the input, accelerate's top-level
  AlignDevicesHook(io_same_device=True) (0.27.2 hooks.py attach_align_device_hook_on_blocks, post_forward
  send_to_device, past_key_values skipped) copies the model's output to the input's GPU: the prefill's float32
  logits live on GPU 0 through the first decode step, beside GPU 0's layers' prompt cache twice (72B GPTQ at 30720
  on 4 GPUs: 0.938 with the scratch -> 1.002; 72B bf16 at 30720 on 5 GPUs: 0.906 -> 0.948, 17.9 GiB short).

mlx-lm: digital-transformation-advisory.com (2026-03-18), "mlx-lm 0.31.1 mlx 0.31.1", a creative writing prompt and
"256-300 max tokens" on an unnamed Apple Silicon Mac, the "Peak memory" row of its table. mlx-lm 0.31.1 prints
`mx.get_peak_memory() / 1e9` as "GB" (generate.py generate / stream_generate). The prompt with its chat template taken
as 50 tokens, 300 generated; the Mac as an M4 Pro 24GB (the figures do not depend on it). These sat in the band and
do not move.
"""

from __future__ import annotations

import pytest

from oomkit.engines import mlx
from oomkit.engines import transformers as tfe
from oomkit.engines.transformers.weights import exllama_scratch
from oomkit.errors import OomkitError
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config
from oomkit.model.resolve import resolve

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05


def _spec(slug: str):
    return spec_from_config(dict(catalog.lookup(slug).config), name=slug)


# ---------------------------------------------------------------------------------------------------------
# transformers: Qwen1.5 HF Transformers Inference (bf16 rows)

URL = ("https://github.com/QwenLM/Qwen2.5/blob/14544eb0f7a075b80f2aeb0ca8f1a838e6c26267/"
       "docs/source/benchmark/hf_infer.rst")
LENGTHS = (1, 6144, 14336, 30720)
# the bf16 rows as printed: "Model  Num. GPU  Input Length  Speed (w/wo FA2)  Memory"
ROWS = """
| Qwen1.5-0.5B-Chat           |    1     |      1       |  58.54 / 61.34   |  1.46  |
| Qwen1.5-0.5B-Chat           |    1     |     6144     |  57.93 / 63.57   |  6.87  |
| Qwen1.5-0.5B-Chat           |    1     |    14336     |  59.48 / 60.18   | 14.59  |
| Qwen1.5-0.5B-Chat           |    1     |    30720     |  47.65 / 35.44   | 30.04  |
| Qwen1.5-1.8B-Chat           |    1     |      1       |  51.82 / 54.01   |  4.60  |
| Qwen1.5-1.8B-Chat           |    1     |     6144     |  51.56 / 51.45   | 10.21  |
| Qwen1.5-1.8B-Chat           |    1     |    14336     |  45.17 / 30.53   | 18.69  |
| Qwen1.5-1.8B-Chat           |    1     |    30720     |  29.21 / 16.70   | 35.67  |
Qwen1.5-4B-Chat           1        1            30.32 / 32.59    9.59
Qwen1.5-4B-Chat           1        6144         30.72 / 28.61    16.19
Qwen1.5-4B-Chat           1        14336        23.46 / 16.96    27.08
Qwen1.5-4B-Chat           1        30720        14.76 / 9.19     48.85
Qwen1.5-MoE-A2.7B-Chat           1        1            8.49 / 8.52      27.82
Qwen1.5-MoE-A2.7B-Chat           1        6144         8.73 / 8.41      33.43
Qwen1.5-MoE-A2.7B-Chat           1        14336        8.30 / 7.43      41.91
Qwen1.5-MoE-A2.7B-Chat           1        30720        7.40 / 6.34      58.89
Qwen1.5-7B-Chat           1        1            37.07 / 40.05    16.90
Qwen1.5-7B-Chat           1        6144         29.29 / 26.95    24.37
Qwen1.5-7B-Chat           1        14336        19.93 / 16.18    37.01
Qwen1.5-7B-Chat           1        30720        12.04 / 8.89     62.29
Qwen1.5-14B-Chat           1        1            26.89 / 31.36    30.18
Qwen1.5-14B-Chat           1        6144         19.17 / 18.03    39.91
Qwen1.5-14B-Chat           1        14336        12.91 / 11.01    57.05
"""
# the release each table ran (see the module docstring)
VERSIONS = {"Qwen1.5-MoE-A2.7B-Chat": "4.40.0"}
DENSE_VERSION = "4.38.2"
A100 = (Device("CUDA0", "NVIDIA A100-SXM4-80GB", 80 * GiB),)


def _parse(rows: str) -> list[tuple[str, int, float]]:
    out = []
    for line in rows.strip().splitlines():
        cells = [c for c in line.replace("|", " ").split() if c != "/"]
        model, n_gpu, length, memory = cells[0], int(cells[1]), int(cells[2]), float(cells[-1])
        assert n_gpu == 1
        out.append((model, length, memory))
    return out


def _rows() -> list[tuple[str, int, float]]:
    return _parse(ROWS)


def _estimate(model: str, length: int, version: str | None = None):
    return tfe.ENGINE.estimate(_spec(f"Qwen/{model}"), A100, tfe.TransformersSettings(
        prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version=version or VERSIONS.get(model, DENSE_VERSION)))


def test_rows_cover_the_table():
    rows = _rows()
    assert len(rows) == 23 and {length for _, length, _ in rows} == set(LENGTHS)


@pytest.mark.parametrize("model,length,printed", _rows(), ids=lambda v: str(v))
def test_qwen15_hf_infer_peak(model, length, printed):
    allocated = sum(_estimate(model, length).engine_view["torch_allocated_bytes"].values()) / GiB
    assert abs(allocated / printed - 1) <= 0.05, f"{model} @ {length}: {allocated:.2f} vs {printed} GiB ({URL})"


PER_TOKEN_7B = 32 * 2 * 4096 * 2  # Qwen1.5-7B's K and V per token: 32 layers, 32 heads of 128, bfloat16


def test_legacy_tuple_holds_the_cache_twice_before_4_42():
    """Input 1, 2,048 tokens cached at the end: 4.41.2 holds the whole previous cache beside the new one; 4.42.0 only
    one layer's old tensor during its torch.cat (31 of the 32 layers' copies less)."""
    old = _estimate("Qwen1.5-7B-Chat", 1, "4.41.2").engine_view["torch_allocated_bytes"]["CUDA0"]
    new = _estimate("Qwen1.5-7B-Chat", 1, "4.42.0").engine_view["torch_allocated_bytes"]["CUDA0"]
    assert abs((old - new) / (31 / 32 * 2048 * PER_TOKEN_7B) - 1) < 0.002


def test_prefill_logits_live_through_the_first_step_before_4_42():
    """Input 30720: before 4.42 the first decode step holds weights, the prompt's cache twice and the prefill's float32
    logits (30720 x 151936 x 4 bytes), above the prefill itself; 4.42.0 `del outputs` and the cache object leave the
    prefill (bf16 + float32 logits beside one cache) the peak."""
    old = _estimate("Qwen1.5-7B-Chat", 30720, "4.41.2")
    new = _estimate("Qwen1.5-7B-Chat", 30720, "4.42.0")
    assert (old.engine_view["peak_phase"], new.engine_view["peak_phase"]) == ("decode", "prefill")
    weights = old.engine_view["weights_bytes"]["CUDA0"]
    first_step = weights + 2 * 30720 * PER_TOKEN_7B + 30720 * 151936 * 4
    assert abs(old.engine_view["torch_allocated_bytes"]["CUDA0"] / first_step - 1) < 0.002


def test_static_cache_was_an_object_already():
    """cache_implementation="static": generate built the StaticCache object in 4.38 too, so nothing doubles."""
    spec = _spec("Qwen/Qwen1.5-7B-Chat")
    by_version = {}
    for version in ("4.41.2", "4.42.0"):
        est = tfe.ENGINE.estimate(spec, A100, tfe.TransformersSettings(
            prompt_tokens=1, max_new_tokens=2048, attn_implementation="sdpa", torch_dtype="auto",
            device_map="auto", cache_implementation="static", engine_version=version))
        by_version[version] = est.engine_view["torch_allocated_bytes"]["CUDA0"]
    assert abs(by_version["4.41.2"] / by_version["4.42.0"] - 1) < 0.01


# the GPTQ-Int4 and AWQ rows on one GPU, the checkpoints resolved by name as the CLI does (Qwen's -GPTQ-Int4: AutoGPTQ
# 4-bit, group 128; -AWQ: AutoAWQ GEMM 4-bit, group 128; model/names.py); the two 14B rows that ran on 2 GPUs print
# no memory ("-") and are left out
ROWS_QUANT = """
| Qwen1.5-0.5B-Chat-GPTQ-Int4 |    1     |      1       |  57.18 / 63.67   |  1.03  |
| Qwen1.5-0.5B-Chat-GPTQ-Int4 |    1     |     6144     |  57.47 / 63.31   |  6.44  |
| Qwen1.5-0.5B-Chat-GPTQ-Int4 |    1     |    14336     |  57.57 / 52.19   | 14.16  |
| Qwen1.5-0.5B-Chat-GPTQ-Int4 |    1     |    30720     |  41.84 / 32.58   | 29.60  |
| Qwen1.5-0.5B-Chat-AWQ       |    1     |      1       |  45.04 / 48.54   |  1.02  |
| Qwen1.5-0.5B-Chat-AWQ       |    1     |     6144     |  43.30 / 47.62   |  6.43  |
| Qwen1.5-0.5B-Chat-AWQ       |    1     |    14336     |  42.98 / 48.05   | 14.15  |
| Qwen1.5-0.5B-Chat-AWQ       |    1     |    30720     |  42.18 / 33.58   | 29.59  |
| Qwen1.5-1.8B-Chat-GPTQ-Int4 |    1     |      1       |  58.83 / 65.21   |  2.91  |
| Qwen1.5-1.8B-Chat-GPTQ-Int4 |    1     |     6144     |  54.82 / 46.31   |  8.52  |
| Qwen1.5-1.8B-Chat-GPTQ-Int4 |    1     |    14336     |  41.56 / 28.64   | 17.01  |
| Qwen1.5-1.8B-Chat-GPTQ-Int4 |    1     |    30720     |  26.88 / 16.13   | 33.98  |
| Qwen1.5-1.8B-Chat-AWQ       |    1     |      1       |  45.78 / 48.02   |  2.89  |
| Qwen1.5-1.8B-Chat-AWQ       |    1     |     6144     |  44.95 / 47.64   |  8.50  |
| Qwen1.5-1.8B-Chat-AWQ       |    1     |    14336     |  42.44 / 29.48   | 16.98  |
| Qwen1.5-1.8B-Chat-AWQ       |    1     |    30720     |  28.34 / 16.38   | 33.96  |
Qwen1.5-4B-Chat-GPTQ-Int4 1        1            33.63 / 36.67    5.65
Qwen1.5-4B-Chat-GPTQ-Int4 1        6144         33.93 / 30.66    12.25
Qwen1.5-4B-Chat-GPTQ-Int4 1        14336        25.01 / 17.48    23.14
Qwen1.5-4B-Chat-GPTQ-Int4 1        30720        15.28 / 9.35     44.91
Qwen1.5-4B-Chat-AWQ       1        1            28.09 / 28.64    5.19
Qwen1.5-4B-Chat-AWQ       1        6144         28.00 / 27.83    11.79
Qwen1.5-4B-Chat-AWQ       1        14336        22.95 / 16.49    22.67
Qwen1.5-4B-Chat-AWQ       1        30720        14.50 / 9.06     44.45
Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4 1        1            8.17 / 8.67      9.23
Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4 1        6144         8.64 / 8.30      14.84
Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4 1        14336        8.16 / 7.39      23.32
Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4 1        30720        7.11 / 6.16      40.30
Qwen1.5-7B-Chat-GPTQ-Int4 1        1            38.73 / 46.46    8.78
Qwen1.5-7B-Chat-GPTQ-Int4 1        6144         34.33 / 30.76    16.26
Qwen1.5-7B-Chat-GPTQ-Int4 1        14336        22.04 / 17.46    28.90
Qwen1.5-7B-Chat-GPTQ-Int4 1        30720        12.82 / 9.26     54.17
Qwen1.5-7B-Chat-AWQ       1        1            32.59 / 36.74    8.02
Qwen1.5-7B-Chat-AWQ       1        6144         29.13 / 26.91    15.49
Qwen1.5-7B-Chat-AWQ       1        14336        19.98 / 16.14    28.13
Qwen1.5-7B-Chat-AWQ       1        30720        12.10 / 8.86     53.40
Qwen1.5-14B-Chat-GPTQ-Int4 1        1            32.79 / 36.88    13.87
Qwen1.5-14B-Chat-GPTQ-Int4 1        6144         23.30 / 21.49    23.59
Qwen1.5-14B-Chat-GPTQ-Int4 1        14336        14.69 / 12.21    40.74
Qwen1.5-14B-Chat-AWQ       1        1            27.51 / 29.50    12.88
Qwen1.5-14B-Chat-AWQ       1        6144         20.37 / 19.03    22.61
Qwen1.5-14B-Chat-AWQ       1        14336        13.50 / 11.35    39.76
"""
# The ExLlama kernel each GPTQ checkpoint loads with (transformers/weights.py exllama_version: the checkpoint's
# quantization_config, read by quant/hf_formats.py gptq_exllama; version 1, GPTQConfig's default, where it names none;
# exllama_scratch: version 1 keeps a float16 copy of the largest in x out, version 2 a scratch of in x out x 2 + out x
# 2048 x 8 x 4 bytes, on every GPU). Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4: its config.json names version 2 (CONFIG_MOE),
# read here through that config. 4B / 7B / 14B: resolved by name (config.json not read: version 1). Their rows hold a
# constant 0.46 / 0.77 / 0.98 GiB beyond the AWQ checkpoint of the same size at every input length, version 2's
# scratch (0.455 / 0.756 / 0.967 GiB), where version 1 keeps 0.03 / 0.08 / 0.13; but the 7B config.json quoted on
# 2024-02-08 (QwenLM/Qwen3#32, URL_7B_CONFIG) names version 1, and no config of these three naming version 2 is at
# hand, so the rows version 1 leaves out of the band are strict xfails (MISSES_GPTQ), not a version chosen to fit.
# 0.5B / 1.8B / 72B keep version 1, and their rows refute version 2 (test_gptq_surplus_over_awq_is_the_kernel_scratch).
CONFIG_MOE = ("Qwen/Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4 config.json: \"quantization_config\": {... \"desc_act\": false, "
              "\"exllama_config\": {\"version\": 2}, \"group_size\": 128, ... \"quant_method\": \"gptq\", ... "
              "\"use_exllama\": true}, ... \"transformers_version\": \"4.39.0.dev0\"")
# the fields CONFIG_MOE quotes; modules_to_not_convert as the name rule reads a Qwen -GPTQ-Int4 (model/names.py _gptq:
# the router, mlp.gate, left in 16 bits), the part of the config the quote elides
QUANT_MOE = {"bits": 4, "desc_act": False, "exllama_config": {"version": 2}, "group_size": 128, "quant_method": "gptq",
             "use_exllama": True, "modules_to_not_convert": ["mlp.gate"]}
URL_7B_CONFIG = "https://github.com/QwenLM/Qwen3/issues/32"
# the GPTQ rows version 1 leaves out of the band (oomkit's GiB / the table's, version 1; what version 2 would give)
MISSES_GPTQ = {
    ("Qwen1.5-4B-Chat-GPTQ-Int4", 1): "5.21 of 5.65 GiB (0.922) with version 1; version 2 would give 5.63 (0.997)",
    ("Qwen1.5-7B-Chat-GPTQ-Int4", 1): "8.04 of 8.78 GiB (0.916) with version 1; version 2 would give 8.71 (0.992)",
    ("Qwen1.5-14B-Chat-GPTQ-Int4", 1): "12.89 of 13.87 GiB (0.929) with version 1; version 2 would give 13.73 (0.990)",
}
# their GPTQ row less their AWQ row, which version 1's scratch does not explain (GiB, at every input length)
SURPLUS_V2 = {"4B": "the table's 0.46-0.47 GiB; version 1 gives 0.036, version 2 would give 0.458",
              "7B": "the table's 0.76-0.77 GiB; version 1 gives 0.088, version 2 would give 0.760",
              "14B": "the table's 0.98-0.99 GiB; version 1 gives 0.137, version 2 would give 0.973"}
# What the loading path at the release would do with these configs, read in the PyPI sdists: transformers 4.38.2
# utils/quantization_config.py GPTQConfig.post_init sets exllama_config {"version": 1} where the config names none,
# and to_dict_optimum passes it (with disable_exllama = not use_exllama) to optimum's GPTQQuantizer.from_dict
# (quantizers/quantizer_gptq.py), so optimum's own default (version 2 where exllama_config is None) never applies;
# auto-gptq 0.7.1 modeling/_utils.py autogptq_post_init keeps version 1's temp_dq (in x out x 2 bytes) and, with
# desc_act false, a 1 x 1 temp_state; the g_idx (int32 per in-feature, 4.3 MiB on 7B) and the packing (qzeros int32,
# scales float16, as AWQ's) are under 0.01 GiB. None of it gives 0.46 / 0.77 / 0.98 GiB with version 1; only
# version 2's fixed scratch does, and which version these three checkpoints named on the day the table ran is not at
# hand (the 7B config of 2024-02-08 names version 1), so they stay strict xfails.


def _quant_spec(model: str):
    if model == "Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4":
        config = dict(catalog.lookup("Qwen/Qwen1.5-MoE-A2.7B-Chat").config)
        return spec_from_config({**config, "quantization_config": QUANT_MOE}, name=f"Qwen/{model}")
    return resolve(f"Qwen/{model}")


def _quant_estimate(model: str, length: int, devices=A100, exllama: int | None = None):
    version = VERSIONS.get(model.replace("-GPTQ-Int4", "").replace("-AWQ", ""), DENSE_VERSION)
    return tfe.ENGINE.estimate(_quant_spec(model), devices, tfe.TransformersSettings(
        prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version=version, exllama_version=exllama))


def _allocated(est) -> float:
    return sum(est.engine_view["torch_allocated_bytes"].values()) / GiB


def _cases_quant():
    for model, length, printed in _parse(ROWS_QUANT):
        miss = MISSES_GPTQ.get((model, length))
        marks = [pytest.mark.xfail(strict=True, reason=f"{model} @ {length}: {miss}")] if miss else []
        yield pytest.param(model, length, printed, marks=marks, id=f"{model}-{length}")


@pytest.mark.parametrize("model,length,printed", list(_cases_quant()))
def test_qwen15_quantized_hf_infer_peak(model, length, printed, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    allocated = _allocated(_quant_estimate(model, length))
    assert abs(allocated / printed - 1) <= 0.05, f"{model} @ {length}: {allocated:.2f} vs {printed} GiB ({URL})"


def test_moe_gptq_takes_version_2_from_its_config(monkeypatch):
    """CONFIG_MOE names exllama_config version 2: the estimate keeps version 2's scratch with no setting given, the
    same bytes as --exllama-version 2, and --exllama-version 1 overrides it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = "Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4"
    est = _quant_estimate(model, 1)
    assert any("ExLlama v2" in w and "the checkpoint's quantization_config" in w for w in est.warnings), est.warnings
    assert _allocated(est) == _allocated(_quant_estimate(model, 1, exllama=2))
    assert _allocated(_quant_estimate(model, 1, exllama=1)) < _allocated(est)
    named = resolve(f"Qwen/{model}")  # resolved by name: no config.json, so transformers' default
    assert named.weights.gptq_exllama is None


@pytest.mark.parametrize("size", ["0.5B", "1.8B", *(pytest.param(k, marks=pytest.mark.xfail(
    strict=True, reason=f"Qwen1.5-{k}-Chat-GPTQ-Int4 less AWQ: {v}")) for k, v in SURPLUS_V2.items())])
def test_gptq_surplus_over_awq_is_the_kernel_scratch(size, monkeypatch):
    """At every input length the table's GPTQ-Int4 row less its AWQ row is the kernel's scratch (and GPTQ's g_idx),
    to the table's rounding, with the version the checkpoint loads with (version 1 where its config is not read);
    version 2 misses 0.5B / 1.8B by 0.17 / 0.34 GiB."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    printed = {(m, n): p for m, n, p in _parse(ROWS_QUANT)}
    gptq, awq = f"Qwen1.5-{size}-Chat-GPTQ-Int4", f"Qwen1.5-{size}-Chat-AWQ"
    for length in LENGTHS:
        if (gptq, length) not in printed:
            continue
        table = printed[gptq, length] - printed[awq, length]
        base = _allocated(_quant_estimate(awq, length))
        ours = _allocated(_quant_estimate(gptq, length)) - base
        other = _allocated(_quant_estimate(gptq, length, exllama=2)) - base
        assert abs(ours - table) <= 0.03, f"{gptq} @ {length}: {ours:.3f} vs {table:.2f} GiB"
        assert abs(other - table) > 0.15, f"{gptq} @ {length}: version 2 also fits ({other:.3f})"


@pytest.mark.parametrize("fields,kernel", [
    ({}, None),  # none named: GPTQConfig's defaults, use_exllama true and version 1
    ({"use_exllama": True}, 1),  # exllama_config null: {"version": 1}
    ({"use_exllama": True, "exllama_config": {"version": 2}}, 2),
    ({"exllama_config": {"version": 2}}, 2),  # use_exllama null: true
    ({"use_exllama": False, "exllama_config": {"version": 2}}, 0),
    ({"disable_exllama": True}, 0),  # older configs: use_exllama = not disable_exllama
    ({"disable_exllama": False}, 1),
    ({"disable_exllama": None, "use_exllama": None, "exllama_config": None}, None),
    ({"disable_exllama": True, "use_exllama": True}, "Cannot specify both"),
    ({"exllama_config": {}}, "needs to have a `version` key"),
    ({"exllama_config": {"version": 3}}, "not recognized version 3"),
])
def test_gptq_config_names_the_kernel(fields, kernel, monkeypatch):
    """transformers 4.38.2 utils/quantization_config.py GPTQConfig.post_init on the checkpoint's quantization_config:
    the kernel it loads, or the ValueError that stops the load (a one-line error here); a setting overrides what the
    config names (quantizers/auto.py merge_quantization_configs), but not a refused config."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = dict(catalog.lookup("Qwen/Qwen1.5-0.5B-Chat").config)
    quant = {"quant_method": "gptq", "bits": 4, "group_size": 128, **fields}
    spec = spec_from_config({**config, "quantization_config": quant}, name="Qwen/Qwen1.5-0.5B-Chat-GPTQ-Int4")
    if isinstance(kernel, str):
        assert kernel in spec.weights.gptq_exllama
        with pytest.raises(OomkitError, match="transformers refuses the checkpoint's GPTQ quantization_config"):
            tfe.ENGINE.estimate(spec, A100, tfe.TransformersSettings(exllama_version=1, engine_version="4.38.2"))
        return
    assert spec.weights.gptq_exllama == kernel

    def version(setting=None):
        est = tfe.ENGINE.estimate(spec, A100, tfe.TransformersSettings(exllama_version=setting,
                                                                       engine_version="4.38.2"))
        return est.engine_view.get("exllama_scratch_bytes", {}).get("CUDA0", 0), est.warnings

    scratch, warnings = version()
    assert scratch == version(1 if kernel is None else kernel)[0]
    assert (scratch == 0) == (kernel == 0)
    if kernel:
        assert any(f"version {kernel} from the checkpoint's" in w for w in warnings), warnings
    elif kernel is None:
        assert any("version 1 from transformers' default" in w for w in warnings), warnings
    assert version(0)[0] == 0 and version(2)[0] > version(1)[0] > 0


def test_exllama_scratch_per_gpu(monkeypatch):
    """auto-gptq 0.7.1 autogptq_post_init sizes the buffers per device from the modules on it: Qwen1.5-72B's largest
    linears (gate / up, 8192 x 24576; down 24576 x 8192) sit on every GPU, so each holds the same temp_dq; version 2
    adds out x 2048 x 8 x 4 bytes; use_exllama=False (0) and transformers 5 (gptqmodel) none."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = resolve("Qwen/Qwen1.5-72B-Chat-GPTQ-Int4")
    layer_device = tuple(0 if i < 40 else 1 for i in range(80))

    def scratch(version, release="4.38.2"):
        s = tfe.TransformersSettings(exllama_version=version, engine_version=release)
        return exllama_scratch(spec, s, tfe.resolve(spec, s), layer_device)

    assert scratch(None) == {0: 8192 * 24576 * 2 + 2, 1: 8192 * 24576 * 2 + 2}
    assert scratch(2)[1] == 8192 * 24576 * 2 + 128 + 24576 * 2048 * 8 * 4 + 128
    assert scratch(0) == {} and scratch(1, "5.0.0") == {}


# the 72B rows, on "the least number of GPUs as possible" (Num. GPU as printed)
ROWS_72B = """
Qwen1.5-72B-Chat           2        1            7.24 / 8.13      142.39
Qwen1.5-72B-Chat           3        6144         4.89 / 4.82      174.66
Qwen1.5-72B-Chat           4        14336        3.37 / 3.13      233.00
Qwen1.5-72B-Chat           5        30720        2.17 / 2.00      344.17
"""
MISSES_72B = {30720: "Qwen1.5-72B-Chat @ 30720 on 5 GPUs: 326.3 of 344.17 GiB (0.948), 17.9 GiB held beyond weights, "
                     "the cache twice and the logits (on the lm_head's GPU and, sent back, on GPU 0) not found"}


def _cases_72b():
    for line in ROWS_72B.strip().splitlines():
        cells = [c for c in line.split() if c != "/"]
        n_gpu, length, memory = int(cells[1]), int(cells[2]), float(cells[-1])
        miss = MISSES_72B.get(length)
        marks = [pytest.mark.xfail(strict=True, reason=miss)] if miss else []
        yield pytest.param(n_gpu, length, memory, marks=marks, id=f"72b-{n_gpu}gpu-{length}")


@pytest.mark.parametrize("n_gpu,length,printed", list(_cases_72b()))
def test_qwen15_72b_hf_infer_peak(n_gpu, length, printed):
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(n_gpu))
    est = tfe.ENGINE.estimate(_spec("Qwen/Qwen1.5-72B-Chat"), devices, tfe.TransformersSettings(
        prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version=DENSE_VERSION))
    allocated = sum(est.engine_view["torch_allocated_bytes"].values()) / GiB
    assert abs(allocated / printed - 1) <= 0.05, f"72B @ {length}: {allocated:.2f} vs {printed} GiB ({URL})"


ROWS_72B_QUANT = """
Qwen1.5-72B-Chat-GPTQ-Int4 1        1            9.32 / 10.25     50.09
Qwen1.5-72B-Chat-GPTQ-Int4 2        6144         5.87 / 5.84      97.38
Qwen1.5-72B-Chat-GPTQ-Int4 3        14336        3.86 / 3.60      146.17
Qwen1.5-72B-Chat-GPTQ-Int4 4        30720        2.31 / 2.06      238.17
Qwen1.5-72B-Chat-AWQ       1        1            10.59 / 12.06    49.68
"""
# on 2 and 3 GPUs the 72B GPTQ rows stay short by 17.0 / 18.2 GiB (after each GPU's ExLlama temp_dq, 0.375 GiB, and
# the logits sent back to GPU 0); on 4 GPUs at 30720 it is within 5 %, and so is bf16 on 3 and 4 GPUs: what else
# each GPU held is not found
MISSES_72B_QUANT = {6144: "0.826 (80.4 of 97.38 GiB on 2 GPUs)", 14336: "0.875 (128.0 of 146.17 GiB on 3 GPUs)"}


def _cases_72b_quant():
    for line in ROWS_72B_QUANT.strip().splitlines():
        cells = [c for c in line.split() if c != "/"]
        model, n_gpu, length, memory = cells[0], int(cells[1]), int(cells[2]), float(cells[-1])
        miss = MISSES_72B_QUANT.get(length) if "GPTQ" in model else None
        marks = [pytest.mark.xfail(strict=True, reason=f"{model} @ {length}: {miss}")] if miss else []
        yield pytest.param(model, n_gpu, length, memory, marks=marks, id=f"{model}-{n_gpu}gpu-{length}")


@pytest.mark.parametrize("model,n_gpu,length,printed", list(_cases_72b_quant()))
def test_qwen15_72b_quantized_hf_infer_peak(model, n_gpu, length, printed, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(n_gpu))
    est = tfe.ENGINE.estimate(resolve(f"Qwen/{model}"), devices, tfe.TransformersSettings(
        prompt_tokens=length, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version=DENSE_VERSION))
    allocated = sum(est.engine_view["torch_allocated_bytes"].values()) / GiB
    assert abs(allocated / printed - 1) <= 0.05, f"{model} @ {length}: {allocated:.2f} vs {printed} GiB ({URL})"


def test_logits_come_back_to_the_input_gpu(monkeypatch):
    """72B GPTQ at 30720 tokens on 4 GPUs, before 4.42: the prefill's float32 logits (30720 x 152064 x 4 bytes) come
    back to GPU 0, where input_ids live (accelerate's io_same_device hook), and stay there through the first decode
    step beside GPU 0's layers' prompt cache twice; the lm_head's GPU no longer holds them then."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(4))
    view = _quant_estimate("Qwen1.5-72B-Chat-GPTQ-Int4", 30720, devices).engine_view
    placed, weights = view["device_map"], view["weights_bytes"]
    assert placed["embed"] == "CUDA0" and placed["lm_head"] != "CUDA0"
    lo, _, hi = next(k for k, v in placed["layers"].items() if v == "CUDA0").partition("-")
    n = int(hi or lo) - int(lo) + 1
    cache = 2 * n * 30720 * 64 * 128 * 2 * 2
    assert view["torch_allocated_bytes"]["CUDA0"] >= weights["CUDA0"] + cache + 30720 * 152064 * 4


def test_each_gpu_at_its_own_peak():
    """72B at 14336 tokens on 4 GPUs: every GPU with decoder layers holds at least its weights and its layers' cache
    twice at the end of generation (16,383 tokens, 64 heads x 128 x 2 x 2 bytes a token and layer); the lm_head's GPU
    at least its weights and the prefill's float32 logits (14336 x 152064 x 4 bytes), whichever moment the others
    peak at."""
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", 80 * GiB) for i in range(4))
    est = tfe.ENGINE.estimate(_spec("Qwen/Qwen1.5-72B-Chat"), devices, tfe.TransformersSettings(
        prompt_tokens=14336, max_new_tokens=2048, attn_implementation="flash_attention_2", torch_dtype="auto",
        device_map="auto", engine_version=DENSE_VERSION))
    view = est.engine_view
    allocated, weights, placed = view["torch_allocated_bytes"], view["weights_bytes"], view["device_map"]
    layers: dict[str, int] = {}
    for span, dev in placed["layers"].items():
        lo, _, hi = span.partition("-")
        layers[dev] = layers.get(dev, 0) + int(hi or lo) - int(lo) + 1
    assert len(layers) == 4 and sum(layers.values()) == 80
    for dev, n in layers.items():
        assert allocated[dev] >= weights[dev] + 2 * n * 16383 * 64 * 128 * 2 * 2, dev
    head = placed["lm_head"]
    assert allocated[head] >= weights[head] + 14336 * 152064 * 4


# ---------------------------------------------------------------------------------------------------------
# mlx-lm 0.31.1: digital-transformation-advisory.com's table

URL_DTA = "https://digital-transformation-advisory.com/2026/03/18/running-llms-on-apple-silicon-mlx-lm-benchmarks/"
LINES_DTA = (
    "Software stack: ... mlx-lm0.31.1mlx0.31.1 +mlx-metal0.31.1 / Models tested: mlx-community/Qwen3.5-2B-4bit ... "
    "mlx-community/Qwen3.5-4B-4bit ... mlx-community/Llama-3.2-3B-Instruct-4bit ... / Describe a medieval tavern at "
    "night. Include sensory details about the atmosphere, the patrons, and the food. / Each model was run with 256-300 "
    "max tokens. ... | Metric | Qwen3.5-2B | Llama-3.2-3B | Qwen3.5-4B | ... | Peak memory | 1.1 GB | 2.0 GB | "
    "2.5 GB |")
PRINTED_DTA = {"Qwen/Qwen3.5-2B": 1.1, "meta-llama/Llama-3.2-3B-Instruct": 2.0, "Qwen/Qwen3.5-4B": 2.5}


@pytest.mark.parametrize("slug", list(PRINTED_DTA))
def test_mlx_lm_0_31_1_blog_peak(slug):
    est = mlx.ENGINE.estimate(_spec(slug), (Device("MTL0", "Apple M4 Pro 24GB", 24 * GiB),),
                              mlx.MlxSettings(q_bits=4, prompt_tokens=50, max_tokens=300, engine_version="0.31.1"))
    ratio = est.total_bytes / 1e9 / PRINTED_DTA[slug]
    assert LOW <= ratio <= HIGH, f"{slug}: {est.total_bytes / 1e9:.3f} vs {PRINTED_DTA[slug]} GB ({URL_DTA})"
