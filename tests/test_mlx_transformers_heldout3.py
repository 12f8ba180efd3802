"""MLX and transformers held out, set 3: public reports of 2025-2026 with real memory figures, checked against oomkit.

Each report's lines are kept verbatim below with its URL. Figures and bands are those of the earlier sets: mlx-lm's
`mx.get_peak_memory() / 1e9` against the estimate's total, est / printed in [0.93, 1.05]; LM Studio's context-fit
line (mlx-engine context_fit.py) term by term; accelerate's device_map as transformers prints it.

Before -> after this set's rules (oomkit's figure / the report's):

    report                                                         before               after
    mlx-lm#1587 Llama-3.2-3B-4bit 8K, fp16 KVCache          3.46 GB   1.015                1.015
                                  16K, fp16 KVCache         4.72 GB   0.950                0.950
                                  8K, QuantizedKVCache 8-bit 4.87 GB  0.945                0.945
                                  16K, QuantizedKVCache 8-bit 7.10 GB 0.950                0.950
    claude-code-local#44 Gemma 4 31B 4-bit 21.4K, step 8192  34.2 GB  0.884                1.076  (strict xfail)
                                           21.4K, step 1024  20.9 GB  1.056                1.096  (strict xfail)
                                           38.5K, step 1024  23.5 GB  1.055                1.090  (strict xfail)
                                           38.5K, step  512  21.9 GB  1.073                1.092  (strict xfail)
    omlx#1397 Qwen3.6-27B oQ6, M5 Pro 48GB, 1K..64K  22.96-35.95 GB   0.988 0.955 0.943 0.943 0.941 0.938 (same)
              the same at 128K                         OOM / panic      does not fit         does not fit
    Rapid-MLX#1636 Gemma 4 26B-A4B 4-bit 8K, M2 Pro 32GB   ran          fits (15.74 GB)      fits (16.15 GB)
    lmstudio-bug-tracker#2287 qwen3_5 family, 128 GB   fitted 262,144   262,144              262,144
    mlx-4518 (set 2) Gemma 4 31B 16K, M3 Ultra              23.952 GB 0.942                1.012
                     Gemma 4 12B 65K, M3 Ultra              13.919 GB 0.959                1.008
                     Gemma 4 12B 16K, M4 Pro                 9.736 GB 0.927 (strict xfail) 0.995
    LM Studio, Gemma 4 31B 8-bit, 107.52 GiB working set    fitted 262,144  kept -c 32,768       262,144, every term
                                                                                                 of the line
    LM Studio (ADR-036), Qwen3.8-27B 4-bit, 24.96 GiB       fitted 42,496   42,496               42,496
    lmstudio-bug-tracker#2174, Gemma 4 12B QAT, 13.32 GiB   fitted 4,096    kept -c              kept -c (strict xfail)
    transformers#44565 Mixtral-8x7B, device_map="auto", 8 GPUs
                                       budget per GPU 14.25 GiB, layers 0-3 / 4-8 / ... / 29-31   same as printed
    transformers 5.24 itself on this CPU (below): 32 device_map placements        17 wrong             0 wrong
                                        3 bitsandbytes placements                  3 wrong              0 wrong
                                        3 bitsandbytes loads it refuses            3 "fit" (offloaded)  3 do not fit

Four rules came of it, each from the engine's source (the two transformers ones are at the end of this file):

* mlx-lm models/cache.py RotatingKVCache._update_concat (v0.31.3): a multi-token update leaves the buffer at
  min(used, max_size - 1) + S tokens and only the next update trims it, so during a prefill every sliding layer
  holds its window plus the last chunk, all of them at once (the first chunk keeps all of its S tokens). oomkit
  sized them at the window (kv.py simulate_rotating now gives prefill_peak; layout.py compute_bytes adds what the
  rotating layers hold beyond their end buffer). Gemma 4 31B at 16K, step 2048: 50 sliding layers x 16 KV heads x
  256 x 2 (K, V) x 2 bytes x (3071 - 1024) = 1.68 GB more; the three Gemma 4 rows of set 2 move into the band.
* The catalog's gemma-4-31b-it entry dropped the vision_config of the config.json it cites
  (ai-dynamo/aiconfigurator nvidia--Gemma-4-31B-IT-NVFP4_config.json: gemma4_vision, 27 layers, 1152 wide), so
  oomkit took Gemma 4 31B for a text model and `lms load` kept -c, where mlx-engine's generate.py load_model sends
  every model with vision_config to BatchedVisionModelKit, which fits the context (context_fit.py). With it the
  fit reproduces LM Studio's line to the last printed digit (baseline 31.45 GiB with the bf16 tower, estimated peak
  88.42 GiB, reserve 5.38 GiB, 262,144). The 12B entry, derived from the 31B's, drops it again (tools/
  catalog_rows.py): its tower's shapes were not read.

Left as strict xfails, with the reason at each.
"""

from __future__ import annotations

import pytest

from oomkit.engines import mlx
from oomkit.engines import transformers as tfe
from oomkit.engines.mlx import context_fit
from oomkit.engines.mlx.kv import simulate_rotating
from oomkit.engines.mlx.layout import lms_context_fit
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB = 1 << 30
LOW, HIGH = 0.93, 1.05


def _spec(slug: str):
    return spec_from_config(dict(catalog.lookup(slug).config), name=slug)


def _mac(name: str, ram_gib: int) -> tuple[Device, ...]:
    return (Device("MTL0", name, ram_gib * GiB),)


# ---------------------------------------------------------------------------------------------------------
# mlx-lm peaks

URL_1587 = "https://github.com/ml-explore/mlx-lm/issues/1587"
LINES_1587 = (
    "gschaefer3, 2026-07-18: '- mlx-lm 0.31.3, mlx 0.31.2 / - Apple M4 Max, 128GB unified memory, macOS 27.0 / "
    "- Model: `mlx-community/Llama-3.2-3B-Instruct-4bit`'; cache = [QuantizedKVCache(group_size=64, bits=8) if "
    "type(c).__name__ == \"KVCache\" else c for c in base] / mx.reset_peak_memory() / for _ in "
    "stream_generate(model, tokenizer, prompt=prompt, max_tokens=30, prompt_cache=cache): / "
    "PhilipJohnBasile, 2026-07-21, quoting the table: '- 8k-context: fp16 `3.46 GB` vs `QuantizedKVCache` "
    "`4.87 GB` (`+1.41 GB`, **+40.8%**) / - 16k-context: fp16 `4.72 GB` vs quantized `7.10 GB` (`+2.38 GB`, "
    "**+50.5%**)'")
NOTE_1587 = ("the 8k / 16k rows taken as 8,192 / 16,384 filler tokens plus the ~10 of the question; stream_generate's "
             "default prefill step 2048; the quantized rows with the repro's 8-bit, group 64 QuantizedKVCache (from "
             "the first chunk in the repro, from the second in oomkit's quantized_kv_start 0: the first chunk's "
             "scores are the smallest)")

URL_CC44 = "https://github.com/nicedreamzapp/claude-code-local/pull/44"
LINES_CC44 = (
    "nicedreamzapp, 2026-08-04: 'Measured on `divinetribe/gemma-4-31b-it-abliterated-4bit-mlx` (16.7GB of weights "
    "resident), same prompt each time, via `mx.get_peak_memory()`: / | prompt | prefill 8192 | prefill 1024 | "
    "prefill 512 | / | 21.4k | **34.2GB** / 49.3s | 20.9GB / 37.7s | — / 39.9s | / | 38.5k | — | 23.5GB / 83.1s | "
    "**21.9GB** / 71.0s |'; the server (proxy/server.py) calls mlx_lm's stream_generate with "
    "prefill_step_size=MLX_PREFILL_SIZE and KV_BITS 0 ('Gemma 4 RotatingKVCache doesn't support quantization')")

# (id, url, lines, catalog model, settings, printed GB, Mac, note)
FIGURES = [
    ("mlx-lm-1587-llama-3.2-3b-8k-fp16", URL_1587, LINES_1587, "llama-3.2-3b-instruct",
     dict(q_bits=4, prompt_tokens=8192 + 10, max_tokens=30, engine_version="0.31.3"), 3.46,
     ("Apple M4 Max 128GB", 128), NOTE_1587),
    ("mlx-lm-1587-llama-3.2-3b-16k-fp16", URL_1587, LINES_1587, "llama-3.2-3b-instruct",
     dict(q_bits=4, prompt_tokens=16384 + 10, max_tokens=30, engine_version="0.31.3"), 4.72,
     ("Apple M4 Max 128GB", 128), NOTE_1587),
    ("mlx-lm-1587-llama-3.2-3b-8k-q8", URL_1587, LINES_1587, "llama-3.2-3b-instruct",
     dict(q_bits=4, prompt_tokens=8192 + 10, max_tokens=30, kv_bits=8, quantized_kv_start=0,
          engine_version="0.31.3"), 4.87, ("Apple M4 Max 128GB", 128), NOTE_1587),
    ("mlx-lm-1587-llama-3.2-3b-16k-q8", URL_1587, LINES_1587, "llama-3.2-3b-instruct",
     dict(q_bits=4, prompt_tokens=16384 + 10, max_tokens=30, kv_bits=8, quantized_kv_start=0,
          engine_version="0.31.3"), 7.10, ("Apple M4 Max 128GB", 128), NOTE_1587),
]

URL_OMLX1397 = "https://github.com/jundot/omlx/pull/1397"
LINES_OMLX1397 = (
    "mikael-johansson, 2026-05-24: '**M5 Pro 48GB: Without this patch** / Benchmark Model: Qwen3.6-27B-oQ6-mtp / "
    "Test TTFT(ms) TPOT(ms) pp TPS tg TPS E2E(s) Throughput Peak Mem / pp1024/tg128 2593.9 50.72 394.8 tok/s 19.9 "
    "tok/s 9.035 127.5 tok/s 22.96 GB / pp4096/tg128 ... 24.39 GB / pp8192/tg128 ... 25.42 GB / pp16384/tg128 ... "
    "26.92 GB / pp32768/tg128 ... 29.92 GB / pp65536/tg128 202143.3 71.51 324.2 tok/s 14.1 tok/s 211.225 310.9 "
    "tok/s 35.95 GB / pp131072/tg128 N/A (OOM / Kernel panic)'")
NOTE_OMLX1397 = ("oMLX serves through mlx-lm's generation (prefill step 2048 before this PR); its oQ6 weights taken as "
                 "6-bit affine, group 64 (the mtp block's weights not counted); the M5 Pro has no qwen3_5 prefill "
                 "floor (oMLX's applies from 64 GB)")
FIGURES += [
    (f"omlx-1397-qwen3.6-27b-oq6-pp{n}", URL_OMLX1397, LINES_OMLX1397, "qwen3.6-27b",
     dict(program="mlx_lm.server", q_bits=6, prompt_tokens=n, max_tokens=128, engine_version="0.31.3"), printed,
     ("Apple M5 Pro 48GB", 48), NOTE_OMLX1397)
    for n, printed in ((1024, 22.96), (4096, 24.39), (8192, 25.42), (16384, 26.92), (32768, 29.92), (65536, 35.95))
]

REASON_CC44 = (
    "est / printed {after} (before the rotating-cache rule {before}). The run is not an mlx-community model: the "
    "PR's divinetribe abliterated conversion holds 16.7 GB of weights where oomkit's 4-bit Gemma 4 31B holds "
    "17.27 GB; with the PR's 16.7 GB the four rows are 1.059-1.069 of the printed peaks, a near-constant 1.3-1.5 GB "
    "over at every step, which no source line read here (mlx-lm 0.31.3 generate_step, cache.py, gemma4_text.py) "
    "accounts for; the Mac, the mlx release and the request's max_tokens are not in the PR. Before the rule the "
    "step-8192 row sat 12 % under (the sliding layers' 8,192 + 1,023 tokens of prefill KV, 6.7 GB, unmodelled)")
MISSES = [
    ("claude-code-local-44-gemma-4-31b-21k-step8192", URL_CC44, LINES_CC44, "gemma-4-31b-it",
     dict(q_bits=4, prompt_tokens=21400, max_tokens=100, prefill_step_size=8192), 34.2,
     ("Apple M4 Max 128GB", 128), REASON_CC44.format(after="1.076", before="0.884")),
    ("claude-code-local-44-gemma-4-31b-21k-step1024", URL_CC44, LINES_CC44, "gemma-4-31b-it",
     dict(q_bits=4, prompt_tokens=21400, max_tokens=100, prefill_step_size=1024), 20.9,
     ("Apple M4 Max 128GB", 128), REASON_CC44.format(after="1.096", before="1.056")),
    ("claude-code-local-44-gemma-4-31b-38k-step1024", URL_CC44, LINES_CC44, "gemma-4-31b-it",
     dict(q_bits=4, prompt_tokens=38500, max_tokens=100, prefill_step_size=1024), 23.5,
     ("Apple M4 Max 128GB", 128), REASON_CC44.format(after="1.090", before="1.055")),
    ("claude-code-local-44-gemma-4-31b-38k-step512", URL_CC44, LINES_CC44, "gemma-4-31b-it",
     dict(q_bits=4, prompt_tokens=38500, max_tokens=100, prefill_step_size=512), 21.9,
     ("Apple M4 Max 128GB", 128), REASON_CC44.format(after="1.092", before="1.073")),
]


def _estimate(slug, settings, mac):
    return mlx.ENGINE.estimate(_spec(slug), _mac(*mac), mlx.MlxSettings(**settings))


@pytest.mark.parametrize("fid,url,lines,slug,settings,printed,mac,note", FIGURES, ids=[f[0] for f in FIGURES])
def test_mlx_peak_memory(fid, url, lines, slug, settings, printed, mac, note):
    est = _estimate(slug, settings, mac)
    ratio = est.total_bytes / 1e9 / printed
    assert LOW <= ratio <= HIGH, f"{fid}: estimate {ratio * printed:.3f} GB vs printed {printed} GB ({url})"
    # the runs completed on a 128 GB Mac: oomkit's verdict agrees
    assert est.devices[0].fits


@pytest.mark.parametrize(
    "fid,url,lines,slug,settings,printed,mac,reason",
    [pytest.param(*m, marks=pytest.mark.xfail(strict=True, reason=m[-1]), id=m[0]) for m in MISSES])
def test_mlx_peak_memory_misses(fid, url, lines, slug, settings, printed, mac, reason):
    ratio = _estimate(slug, settings, mac).total_bytes / 1e9 / printed
    assert LOW <= ratio <= HIGH, f"{fid}: estimate {ratio * printed:.3f} GB vs printed {printed} GB ({url})"


def test_1587_quantized_cache_holds_more_than_fp16():
    """The thread's finding, which oomkit's estimate shares: on mlx-lm 0.31.3 the 8-bit QuantizedKVCache run peaks
    above the fp16 one at both lengths (its prefill goes through models/base.py quantized_scaled_dot_product_attention,
    which materialises the chunk's scores), the more so the longer the prompt."""
    base = dict(q_bits=4, max_tokens=30, engine_version="0.31.3")
    gaps = []
    for n in (8192 + 10, 16384 + 10):
        fp16 = _estimate("llama-3.2-3b-instruct", dict(base, prompt_tokens=n), ("Apple M4 Max 128GB", 128))
        q8 = _estimate("llama-3.2-3b-instruct", dict(base, prompt_tokens=n, kv_bits=8, quantized_kv_start=0),
                       ("Apple M4 Max 128GB", 128))
        assert q8.kv_cache_bytes < fp16.kv_cache_bytes < q8.total_bytes - q8.weights_bytes
        gaps.append(q8.total_bytes - fp16.total_bytes)
    assert 0 < gaps[0] < gaps[1]  # printed: +1.41 GB, then +2.38 GB


def test_omlx_1397_131072_does_not_fit_a_48gb_m5_pro():
    """pp131072 'N/A (OOM / Kernel panic)' where pp65536 ran at 35.95 GB: oomkit's verdicts agree."""
    settings = dict(program="mlx_lm.server", q_bits=6, max_tokens=128, engine_version="0.31.3")
    ran = _estimate("qwen3.6-27b", dict(settings, prompt_tokens=65536), ("Apple M5 Pro 48GB", 48))
    died = _estimate("qwen3.6-27b", dict(settings, prompt_tokens=131072), ("Apple M5 Pro 48GB", 48))
    assert ran.devices[0].fits and not died.devices[0].fits


URL_RAPID1636 = "https://github.com/raullenchai/Rapid-MLX/issues/1636"
LINES_RAPID1636 = (
    "raullenchai, 2026-08-07: '- Mac mini Mac14,12, Apple M2 Pro, 32 GB / - MLX 0.31.2 / mlx-lm 0.31.3 / mlx-vlm "
    "0.6.3 / - Model: `gemma-4-26b-4bit` / --no-mllm --kv-cache-dtype bf16 --cache-memory-mb 512 / - Load peak: 15 GB "
    "/ - 8K footprint/peak: 15 / **20 GB** / - New swap on the 32 GB host: 0 MB'")


def test_rapid_mlx_1636_gemma_4_26b_8k_runs_on_a_32gb_m2_pro():
    """The 8K probe ran without swap: oomkit fits it (peak 16.15 GB of the 22.91 GB working set). The thread's 20 GB
    is the process footprint (the OS's figure: Metal's free buffer cache and the Python process included), not
    mx.get_peak_memory(), so it is not compared with the estimate."""
    est = _estimate("gemma-4-26b-a4b", dict(program="mlx_lm.server", q_bits=4, prompt_tokens=8192, max_tokens=256),
                    ("Apple M2 Pro 32GB", 32))
    assert est.devices[0].fits and est.total_bytes < 20e9


URL_2287 = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2287"
LINES_2287 = (
    "scottfrankframe-cmyk, 2026-08-16: 'Version: 0.4.21+2 (macOS, Apple Silicon, 128GB). Reproduces on MLX engines "
    "1.9.1, 1.10.1, and 1.11.0. / Behavior: For qwen3.5/3.6/3.8-family MLX models (VLM-typed), the configured context "
    "length ... is overridden upward to the model max whenever the fit estimate passes. / [context_fit][INFO]: Model "
    "context auto-fit: family=qwen3_5 max=262,144 fitted=262,144 ... / [cache_store][INFO]: VLM prompt cache context "
    "target: configured=131,065 fitted=262,144 effective=262,144'")


@pytest.mark.parametrize("slug", ["qwen3.5-27b", "qwen3.6-27b", "qwen3.8-27b", "qwen3.6-35b-a3b"])
@pytest.mark.parametrize("q_bits", [4, 8])
def test_2287_qwen3_5_family_fits_to_the_maximum_on_128gb(slug, q_bits):
    # the thread names no model: every 27B / 35B-A3B member of the family, 4- or 8-bit, fits 262,144 on a 128 GB Mac
    # (even at oomkit's conservative 96 GiB working set), so -c 131,065 becomes 262,144
    fit = lms_context_fit(_spec(slug), _mac("Apple M4 Max 128GB", 128),
                          mlx.MlxSettings(program="lmstudio", context_length=131_065, q_bits=q_bits))
    assert fit is not None and fit.context_length == 262_144


# ---------------------------------------------------------------------------------------------------------
# The rotating cache's prefill holding (mlx-lm cache.py RotatingKVCache._update_concat, v0.31.3)


def test_rotating_cache_keeps_window_and_chunk_until_next_update():
    # the first chunk is kept whole; later chunks leave max_size - 1 + S; decoding trims back to max_size
    sim = simulate_rotating([2048, 2048, 2048, 1, 1, 1], max_size=1024)
    assert sim.prefill_peak == 1023 + 2048 and sim.capacity == 1024
    sim = simulate_rotating([8192, 8192, 5015, 1, 1], max_size=1024)
    assert sim.prefill_peak == 1023 + 8192
    # a prompt within the window never goes past it
    assert simulate_rotating([512, 1, 1], max_size=1024).prefill_peak == 512


def test_gemma_4_31b_prefill_holds_every_sliding_window_plus_its_chunk():
    """Gemma 4 31B at 16K (step 2048): 50 sliding layers x 16 KV heads x 256 x (K + V) x 2 bytes x (3071 - 1024)
    tokens beyond their 1,024-token buffers, held together while the prompt goes in."""
    spec = _spec("gemma-4-31b-it")
    s = mlx.MlxSettings(q_bits=4, prompt_tokens=16384, max_tokens=128)
    r = mlx.resolve(spec, s)
    caches, _ = mlx.layer_caches(spec, s, r)
    rot = [c for c in caches if c.cls == "RotatingKVCache"]
    assert len(rot) == 50 and all(c.tokens == 1024 for c in rot)
    assert sum(c.prefill_extra for c in rot) == 50 * 16 * 256 * 2 * 2 * (3071 - 1024)


# ---------------------------------------------------------------------------------------------------------
# LM Studio's MLX runtime: the context it fits (mlx-engine model_kit/batched_vision/context_fit.py)

# a public repository's ADR in the code index of this project's search tool (file id 71599341406; its repository
# is not named there): LM Studio's log line on an M1 Max host, MLX runtimes 1.10.1 / 1.11.0
ADR_SOURCE = "code index file 71599341406 (ADR-036: Local MLX context, 2026-10-05)"
ADR_LINE = ("[context_fit] Model context auto-fit: family=qwen3_5 max=262,144 fitted=42,496 "
            "working_set=24.96GiB reserve=3.00GiB safe_ceiling=21.96GiB baseline=14.95GiB full_kv=65536B/token")

# a public repository's notes in the same index (file id 68447100260): LM Studio's server log of a
# `google/gemma-4-31b` load that the notes say was the 8-bit variant ("load log: 31.47 GiB"), on a 128 GB Mac
TAPUZ_SOURCE = "code index file 68447100260 (an MLX survey's notes, 2026-09)"
TAPUZ_LINE = ("[context_fit] Model context auto-fit: family=gemma4 max=262,144 fitted=262,144 working_set=107.52GiB "
              "reserve=5.38GiB safe_ceiling=102.14GiB baseline=31.45GiB … estimated_peak=88.42GiB / [cache_store] "
              "VLM prompt cache context target: configured=32,768 fitted=262,144 effective=262,144")

URL_2174 = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2174"
LINE_2174 = ("d-shehu, 2026-07-25: 'Running on Mac with Gemma 4 12B IT QAT model. It seems like LM Studio overrides "
             "my 32K or any context setting I choose' / [context_fit][INFO]: Model context auto-fit: family=gemma4 "
             "max=262,144 fitted=4,096 working_set=13.32GiB reserve=3.00GiB safe_ceiling=10.32GiB baseline=10.24GiB "
             "full_kv=16384B/")


def _logged(line: str, key: str) -> str:
    return line.split(f"{key}=", 1)[1].split()[0]


def _gib(text: str) -> float:
    return float(text.removesuffix("GiB"))


def _fit(slug: str, q_bits: int, line: str, configured: int, mac: str, ram: int):
    s = mlx.MlxSettings(program="lmstudio", context_length=configured, q_bits=q_bits,
                        wired_limit_mb=round(_gib(_logged(line, "working_set")) * 1024))
    return lms_context_fit(_spec(slug), _mac(mac, ram), s)


def test_adr036_qwen3_8_27b_on_a_24_96_gib_working_set_fits_42_496():
    fit = _fit("qwen3.8-27b", 4, ADR_LINE, 262_144, "Apple M1 Max 32GB", 32)
    assert fit is not None
    assert fit.context_length == int(_logged(ADR_LINE, "fitted").replace(",", ""))
    assert abs(fit.baseline / GiB - _gib(_logged(ADR_LINE, "baseline"))) < 0.005
    assert fit.full_kv == int(_logged(ADR_LINE, "full_kv").removesuffix("B/token"))
    assert fit.reserve / GiB == _gib(_logged(ADR_LINE, "reserve"))


def test_gemma_4_31b_8bit_loads_as_a_vlm_at_the_logged_fit():
    """Wrong before (oomkit kept -c 32,768: no vision_config in the catalog entry); now every term of the line."""
    fit = _fit("gemma-4-31b-it", 8, TAPUZ_LINE, 32_768, "Apple M4 Max 128GB", 128)
    assert fit is not None
    assert fit.context_length == 262_144
    assert abs(fit.baseline / GiB - _gib(_logged(TAPUZ_LINE, "baseline"))) < 0.005
    assert abs(fit.reserve / GiB - _gib(_logged(TAPUZ_LINE, "reserve"))) < 0.005
    assert abs(fit.estimated_peak / GiB - _gib(_logged(TAPUZ_LINE, "estimated_peak"))) < 0.005
    # and the estimate runs at that context, as `effective=262,144` says
    est = mlx.ENGINE.estimate(_spec("gemma-4-31b-it"), _mac("Apple M4 Max 128GB", 128), mlx.MlxSettings(
        program="lmstudio", context_length=32_768, q_bits=8, wired_limit_mb=round(107.52 * 1024)))
    assert est.engine_view["runtime_fitted_context"] == 262_144


def test_gemma_4_31b_tower_is_the_26b_a4b_one():
    # the 31B's source config.json and the 26B-A4B entry give the same gemma4_vision tower
    vc31 = dict(catalog.lookup("gemma-4-31b-it").config)["vision_config"]
    vc26 = dict(catalog.lookup("gemma-4-26b-a4b").config)["vision_config"]
    assert vc31 == vc26 and vc31["num_hidden_layers"] == 27 and vc31["hidden_size"] == 1152


def test_2174_gemma_4_12b_full_kv_per_token_as_logged():
    # what the line shows of the 12B: 8 global layers x 1 KV head x 512 x (K + V) x 2 bytes
    spec = _spec("gemma-4-12b-it")
    s = mlx.MlxSettings(program="mlx_lm.server", q_bits=4, prompt_tokens=1, max_tokens=1)
    r = mlx.resolve(spec, s)
    caches, _ = mlx.layer_caches(spec, s, r)
    fit = context_fit.fit(spec, caches, working_set=int(13.32 * GiB), baseline=int(10.24 * GiB),
                          dtype_bytes=r.dtype_bytes, prefill_step=context_fit.PROMPT_PROCESSING_CHUNK_SIZE)
    assert fit.full_kv == int(LINE_2174.split("full_kv=")[1].split("B/")[0])
    assert fit.context_length == 4_096  # the logged terms give the 4,096 floor


@pytest.mark.xfail(strict=True, reason=(
    "lmstudio-bug-tracker#2174 (Gemma 4 12B IT QAT, a 13.32 GiB working set): LM Studio fits the context to 4,096 "
    "whatever -c asks (family=gemma4, baseline 10.24 GiB); oomkit keeps -c 32,768, because its gemma-4-12b-it entry "
    "has no vision_config (derived from the 31B's text config; the 12B's tower shapes were not read), so mlx-engine's "
    "vision path (load_model: vision_config -> BatchedVisionModelKit -> context fit) is not taken. The QAT "
    "checkpoint's quantization (its 10.24 GiB baseline against oomkit's 6.7 GiB of 4-bit weights) is not read either"))
def test_2174_gemma_4_12b_loads_at_the_fitted_floor():
    fit = _fit("gemma-4-12b-it", 4, LINE_2174, 32_768, "Apple M3 Pro 18GB", 18)
    assert fit is not None and fit.context_length == 4_096


# ---------------------------------------------------------------------------------------------------------
# transformers: accelerate's device_map (transformers integrations/accelerate.py, get_balanced_memory and
# infer_auto_device_map)

URL_44565 = "https://github.com/huggingface/transformers/pull/44565"
LINES_44565 = (
    "Cyrilvallez, 2026-03-10: model_id = \"mistralai/Mixtral-8x7B-v0.1\" / device = \"auto\" / model = "
    "AutoModelForCausalLM.from_pretrained(model_id, dtype=\"auto\", device_map=device) / 'Now, on this PR, you can "
    "see that everything is solved and each iteration computes the same values:' / >>> Inferred max memory: {0: "
    "'14.25 GiB', 1: '14.25 GiB', 2: '14.25 GiB', 3: '14.25 GiB', 4: '14.25 GiB', 5: '14.25 GiB', 6: '14.25 GiB', "
    "7: '78.92 GiB', 'cpu': '1748.76 GiB'} / >>> Inferred device_map: OrderedDict({'model.embed_tokens': 0, "
    "'model.layers.0': 0, ... 'model.layers.3': 0, 'model.layers.4': 1, ... 'model.layers.8': 1, 'model.layers.9': "
    "2, ... 'model.layers.13': 2, 'model.layers.14': 3, ... 'model.layers.18': 3, 'model.layers.19': 4, ... "
    "'model.layers.23': 4, 'model.layers.24': 5, ... 'model.layers.28': 5, 'model.layers.29': 6, 'model.layers.30': "
    "6, 'model.layers.31': 6, 'model.norm': 6, 'model.rotary_emb': 6, 'lm_head': 6})")
H100x8 = tuple(Device(f"CUDA{i}", "NVIDIA H100 80GB HBM3", 80 * GiB) for i in range(8))


def _mixtral_8_gpus():
    return tfe.ENGINE.estimate(_spec("mixtral-8x7b-v0.1"), H100x8, tfe.TransformersSettings(
        prompt_tokens=16, max_new_tokens=16, torch_dtype="auto", device_map="auto"))


def test_44565_mixtral_device_map_as_printed():
    est = _mixtral_8_gpus()
    dm = est.engine_view["device_map"]
    assert dm["embed"] == "CUDA0" and dm["lm_head"] == "CUDA6"
    assert dm["layers"] == {"0-3": "CUDA0", "4-8": "CUDA1", "9-13": "CUDA2", "14-18": "CUDA3", "19-23": "CUDA4",
                            "24-28": "CUDA5", "29-31": "CUDA6"}
    assert "CUDA7" not in est.engine_view["torch_allocated_bytes"] or \
        est.engine_view["torch_allocated_bytes"]["CUDA7"] == 0
    assert all(d.fits for d in est.devices)


def test_44565_balanced_budget_per_gpu(monkeypatch):
    """get_balanced_memory: the model's bytes over the 8 GPUs plus 1.25 x the largest no-split module, on every GPU
    but the last: '14.25 GiB' as printed (the last keeps its free memory)."""
    from oomkit.engines.transformers import layout
    seen = {}
    orig = layout._max_memory

    def spy(*a, **k):
        out = orig(*a, **k)
        seen["max_mem"] = out[0]
        return out

    monkeypatch.setattr(layout, "_max_memory", spy)
    _mixtral_8_gpus()
    assert [f"{b / GiB:.2f}" for b in seen["max_mem"][:7]] == ["14.25"] * 7


# ---------------------------------------------------------------------------------------------------------
# device_map="auto" checked against transformers itself on this CPU
#
# Measured with transformers 5.24.0 and accelerate 1.16.0 (torch 2.13 CPU): the model built on the meta device from
# the catalog config (AutoModelForCausalLM.from_config, bfloat16), then transformers' own
# integrations/accelerate.py _get_device_map(model, device_map, None, None), with accelerate's get_max_memory(None)
# answering N GPUs of (the size - oomkit's 0.51 GiB CUDA context) free and 2000 GiB of host RAM, as
# torch.cuda.mem_get_info would. Layer ranges and lm_head's device as transformers put them.
#
# Wrong before (17 of 32): oomkit kept room on GPU 0 for the largest decoder layer only, where infer_auto_device_map
# keeps the largest module still to place (get_max_layer_size counts the embedding and an untied lm_head as layers:
# Llama 3.1 8B's 1.05 GB lm_head, not its 0.44 GB layer), and sent a tied lm_head to the last device where
# get_module_size_with_ties puts it with the embedding. E.g. Llama 3.1 8B on 2 x 24 GB: layers 0-17 / 18-31 before,
# 0-15 / 16-31 as transformers places them; Qwen2.5-0.5B (tied) on 2 x 8 GB: lm_head on CUDA1 before, CUDA0 now.

TRANSFORMERS_5_24_MAPS = [
    ("mixtral-8x7b-v0.1", 8, 80, "auto", {'0-3': 'CUDA0', '4-8': 'CUDA1', '9-13': 'CUDA2', '14-18': 'CUDA3',
                                           '19-23': 'CUDA4', '24-28': 'CUDA5', '29-31': 'CUDA6'}, "CUDA6"),
    ("qwen2.5-72b-instruct", 3, 80, "auto", {'0-25': 'CUDA0', '26-54': 'CUDA1', '55-79': 'CUDA2'}, "CUDA2"),
    ("qwen2.5-72b-instruct", 2, 80, "auto", {'0-39': 'CUDA0', '40-79': 'CUDA1'}, "CUDA1"),
    ("llama-3.1-70b-instruct", 4, 48, "auto", {'0-18': 'CUDA0', '19-40': 'CUDA1', '41-62': 'CUDA2',
                                                '63-79': 'CUDA3'}, "CUDA3"),
    ("llama-3.1-8b-instruct", 2, 24, "auto", {'0-15': 'CUDA0', '16-31': 'CUDA1'}, "CUDA1"),
    ("llama-3.1-8b-instruct", 2, 24, "balanced_low_0", {'0-31': 'CUDA1'}, "CUDA1"),
    ("llama-3.1-8b-instruct", 2, 24, "sequential", {'0-31': 'CUDA0'}, "CUDA0"),
    ("llama-3.1-8b-instruct", 2, 12, "auto", {'0-15': 'CUDA0', '16-31': 'CUDA1'}, "CUDA1"),
    ("llama-3.1-8b-instruct", 2, 8, "auto", {'0-12': 'CUDA0', '13-30': 'CUDA1', '31': 'cpu'}, "cpu"),
    ("qwen2.5-32b-instruct", 2, 24, "auto", {'0-21': 'CUDA0', '22-46': 'CUDA1', '47-63': 'cpu'}, "cpu"),
    ("qwen2.5-32b-instruct", 1, 24, "auto", {'0-19': 'CUDA0', '20-63': 'cpu'}, "cpu"),
    ("llama-3.1-8b-instruct", 1, 12, "auto", {'0-19': 'CUDA0', '20-31': 'cpu'}, "cpu"),
    ("qwen2.5-7b-instruct", 2, 16, "auto", {'0-13': 'CUDA0', '14-27': 'CUDA1'}, "CUDA1"),
    ("qwen2.5-0.5b-instruct", 2, 8, "auto", {'0-16': 'CUDA0', '17-23': 'CUDA1'}, "CUDA0"),
    ("qwen2.5-14b-instruct", 4, 8, "auto", {'0-7': 'CUDA0', '8-21': 'CUDA1', '22-35': 'CUDA2', '36-47': 'CUDA3'},
     "cpu"),
    ("qwen2.5-14b-instruct", 3, 12, "balanced_low_0", {'0-2': 'CUDA0', '3-24': 'CUDA1', '25-46': 'CUDA2',
                                                        '47': 'cpu'}, "cpu"),
    ("mistral-7b-v0.1", 2, 16, "auto", {'0-15': 'CUDA0', '16-31': 'CUDA1'}, "CUDA1"),
    ("qwen3-30b-a3b", 2, 40, "auto", {'0-23': 'CUDA0', '24-47': 'CUDA1'}, "CUDA1"),
    ("qwen3-8b", 2, 12, "auto", {'0-17': 'CUDA0', '18-35': 'CUDA1'}, "CUDA1"),
    ("qwen3-8b", 1, 12, "auto", {'0-21': 'CUDA0', '22-35': 'cpu'}, "cpu"),
    ("qwen2.5-0.5b-instruct", 4, 2, "auto", {'0-8': 'CUDA0', '9-23': 'CUDA1'}, "CUDA0"),
    ("qwen2.5-1.5b-instruct", 2, 2, "auto", {'0-10': 'CUDA0', '11-27': 'CUDA1'}, "CUDA0"),
    ("gemma-2-9b-it", 2, 12, "auto", {'0-22': 'CUDA0', '23-41': 'CUDA1'}, "CUDA0"),
    ("gemma-2-9b-it", 3, 8, "balanced_low_0", {'0-19': 'CUDA1', '20-39': 'CUDA2', '40-41': 'cpu'}, "CUDA0"),
    ("qwen3-30b-a3b", 4, 16, "auto", {'0-10': 'CUDA0', '11-23': 'CUDA1', '24-36': 'CUDA2', '37-47': 'CUDA3'}, "CUDA3"),
    ("qwen3-30b-a3b", 4, 16, "balanced_low_0", {'0-6': 'CUDA0', '7-19': 'CUDA1', '20-32': 'CUDA2', '33-45': 'CUDA3', '46-47': 'cpu'}, "cpu"),
    ("mixtral-8x7b-v0.1", 4, 24, "auto", {'0-6': 'CUDA0', '7-14': 'CUDA1', '15-22': 'CUDA2', '23-30': 'CUDA3', '31': 'cpu'}, "cpu"),
    ("llama-3.2-3b-instruct", 2, 4, "auto", {'0-12': 'CUDA0', '13-27': 'CUDA1'}, "CUDA0"),
    ("llama-3.2-1b-instruct", 2, 2, "auto", {'0-6': 'CUDA0', '7-15': 'CUDA1'}, "CUDA0"),
    ("phi-3-mini-4k-instruct", 2, 6, "auto", {'0-15': 'CUDA0', '16-31': 'CUDA1'}, "CUDA1"),
    ("qwen2.5-72b-instruct", 4, 40, "sequential", {'0-20': 'CUDA0', '21-44': 'CUDA1', '45-68': 'CUDA2', '69-79': 'CUDA3'}, "CUDA3"),
    ("deepseek-v2-lite", 2, 24, "auto", {'0-13': 'CUDA0', '14-26': 'CUDA1'}, "CUDA1"),
]


@pytest.mark.parametrize("slug,n_gpus,gib,device_map,layers,lm_head", TRANSFORMERS_5_24_MAPS,
                         ids=[f"{m[0]}-{m[1]}x{m[2]}-{m[3]}" for m in TRANSFORMERS_5_24_MAPS])
def test_device_map_as_transformers_5_24_places_it(slug, n_gpus, gib, device_map, layers, lm_head):
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", gib * GiB) for i in range(n_gpus))
    est = tfe.ENGINE.estimate(_spec(slug), devices, tfe.TransformersSettings(
        prompt_tokens=16, max_new_tokens=16, torch_dtype="auto", device_map=device_map))
    dm = est.engine_view["device_map"]
    assert dm["layers"] == layers and dm["lm_head"] == lm_head


# bitsandbytes: the same harness with the quantizer (transformers 5.24.0, accelerate 1.16.0, bitsandbytes 0.50.2 on
# this CPU): BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=bfloat16) or (load_in_8bit=True),
# AutoHfQuantizer.from_config(...).preprocess_model(...) on the meta model, then _get_device_map(model, "auto", None,
# quantizer). Wrong before (3 of 3 placements): oomkit sized the quantized Linears at their loaded bytes (absmax / SCB
# included) where compute_module_sizes counts numel x quantized_element_size (0.5 / 1 byte), and gave the budgets
# whole where adjust_max_memory takes 10 % of each; Llama 3.1 8B 4-bit on 2 x 4 GB: layers 0-12 / 13-31 before,
# 0-10 / 11-31 as transformers places them. And where the map sends modules to the CPU, validate_environment raises
# (3 of 3 loads), which oomkit took for a run offloaded to the host.
BNB_MAPS = [
    ("llama-3.1-8b-instruct", 2, 4, 4, {'0-10': 'CUDA0', '11-31': 'CUDA1'}),
    ("llama-3.1-8b-instruct", 2, 6, 8, {'0-13': 'CUDA0', '14-31': 'CUDA1'}),
    ("qwen2.5-72b-instruct", 2, 24, 4, {'0-35': 'CUDA0', '36-79': 'CUDA1'}),
]
BNB_REFUSED = [("llama-3.1-8b-instruct", 1, 4, 4), ("qwen2.5-32b-instruct", 2, 10, 4), ("qwen2.5-14b-instruct", 1, 8, 8)]
BNB_ERROR = "ValueError: Some modules are dispatched on the CPU or the disk."


def _bnb_estimate(slug, n_gpus, gib, bits):
    devices = tuple(Device(f"CUDA{i}", "NVIDIA A100-SXM4-80GB", gib * GiB) for i in range(n_gpus))
    return tfe.ENGINE.estimate(_spec(slug), devices, tfe.TransformersSettings(
        prompt_tokens=16, max_new_tokens=16, torch_dtype="bfloat16", device_map="auto",
        load_in_4bit=bits == 4, load_in_8bit=bits == 8))


@pytest.mark.parametrize("slug,n_gpus,gib,bits,layers", BNB_MAPS, ids=[f"{m[0]}-{m[1]}x{m[2]}-bnb{m[3]}" for m in BNB_MAPS])
def test_bnb_device_map_as_transformers_5_24_places_it(slug, n_gpus, gib, bits, layers):
    est = _bnb_estimate(slug, n_gpus, gib, bits)
    assert est.engine_view["device_map"]["layers"] == layers
    assert "error" not in est.engine_view


@pytest.mark.parametrize("slug,n_gpus,gib,bits", BNB_REFUSED, ids=[f"{m[0]}-{m[1]}x{m[2]}-bnb{m[3]}" for m in BNB_REFUSED])
def test_bnb_refuses_a_map_with_modules_on_the_cpu(slug, n_gpus, gib, bits):
    est = _bnb_estimate(slug, n_gpus, gib, bits)
    assert est.fits is False and est.engine_view["error"].startswith(BNB_ERROR)
