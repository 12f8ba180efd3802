"""vLLM's KV cache for DeepSeek-V4 (DeepseekV4ForCausalLM, 0.20.0+), read in the 0.20.0 wheel
(model_executor/layers/deepseek_v4_attention.py, deepseek_compressor.py, v1/attention/backends/mla/sparse_swa.py,
v1/kv_cache_interface.py, v1/core/kv_cache_utils.py; the same specs in 0.22.0 / 0.34.0 models/deepseek_v4/):
per-layer specs, their 576-byte-aligned pages, the DeepseekV4 grouping, worked by hand; one held-out public log."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from oomkit.engines.vllm.kv import deepseek_v4_layer_caches, deepseek_v4_plan, estimate_max_model_len
from oomkit.model.hf_config import spec_from_config
from tests.test_hf_config_recent import DSV4_FLASH

GiB = 1 << 30


def _flash():
    return spec_from_config(DSV4_FLASH, "dsv4", weight_format="Q8_0")


def _pages(layer):
    return {name: (sp.kind, sp.block_size, sp.window, sp.page_bytes) for name, sp in deepseek_v4_layer_caches(layer)}


def test_per_layer_cache_specs_worked_by_hand():
    """Layer 0 (ratio 0): the SWA cache alone, SlidingWindowMLASpec(block 64, window 128), 64 x 584 = 37,376 B ->
    37,440 (576-aligned). Layer 2 (ratio 4): + the C4 compressed cache (256 // 4 = 64 rows x 584 -> 37,440), its
    compressor state (4 x 2 x 2 x 512 float32 = 32,768 -> 32,832, window 8), the indexer cache (64 x (128 + 4) =
    8,448 -> 8,640) and the indexer compressor's state (4 x 2 x 2 x 128 x 4 = 8,192 -> 8,640). Layer 3 (ratio 128):
    2 rows x 584 = 1,168 -> 1,728, state 8 x 2 x 512 x 4 = 32,768 -> 32,832 (window 128)."""
    s = _flash()
    la = {x.index: x for x in s.trunk_layers}
    assert _pages(la[0]) == {"swa": ("sliding", 64, 128, 37_440)}
    assert _pages(la[2]) == {"swa": ("sliding", 64, 128, 37_440), "kv": ("mla", 256, 0, 37_440),
                             "state": ("sliding", 4, 8, 32_832), "indexer": ("mla", 256, 0, 8_640),
                             "indexer_state": ("sliding", 4, 8, 8_640)}
    assert _pages(la[3]) == {"swa": ("sliding", 64, 128, 37_440), "kv": ("mla", 256, 0, 1_728),
                             "state": ("sliding", 8, 128, 32_832)}


def test_flash_groups_and_block_bytes():
    """43 trunk layers (2 SWA-only, 21 ratio-4, 20 ratio-128). Full-MLA group: pages {37,440 x 21, 8,640 x 21,
    1,728 x 20} -> 21 layer tuples; sliding groups by (block, window): (64, 128) 43 layers, (4, 8) 21 + 21, (8, 128) 20;
    _approximate_gcd([21, 43, 21, 20], lower_bound=21) = 22 (padding 1 + 1 + 1 + 2), so the SWA group splits 22 / 21
    and a block is 22 tuples of 37,440 + 8,640 + 1,728 = 47,808 B: 1,051,776 B per 256 tokens. The C4 state pages
    (32,832) are padded to 37,440."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "")
    assert (p.n_tuples, p.tuple_bytes, p.bytes_per_block, p.block_size) == (22, 47_808, 1_051_776, 256)
    assert [(g.block_size, g.window, g.page_bytes, len(i)) for g, i in p.groups] == [
        (256, 0, 21 * 37_440 + 21 * 8_640 + 20 * 1_728, 41), (64, 128, 22 * 37_440, 22), (64, 128, 21 * 37_440, 21),
        (4, 8, 21 * 37_440 + 21 * 8_640, 21), (8, 128, 20 * 37_440, 20)]


def test_heldout_issue_44376_gh200_tp2():
    """HELD OUT (nothing fitted to it): vllm-project/vllm#44376, comment by simonwalo 2026-06-03, vLLM v0.22,
    DeepSeek-V4-Flash on 2 GH200 (96 GB), LLM(tensor_parallel_size=2, enable_expert_parallel=True,
    max_model_len=30_000, kv_cache_dtype="fp8", block_size=256, gpu_memory_utilization=0.95), kept verbatim:
      "ValueError: To serve at least one request with the model's max seq len (30000), (6.66 GiB KV cache is needed,
      which is larger than the available KV cache memory (5.44 GiB). Based on the available memory, the estimated
      maximum model length is 13528."
    max_num_batched_tokens: the LLM class default on a >= 70 GiB GPU, 16384 (engine/arg_utils.py). The DeepseekV4
    branch of _max_memory_usage_bytes_from_groups: 22 tuples x 47,808 B x (118 + 2 x 259 + 4,099 + 2,065 pages) =
    7,152,076,800 B = 6.66 GiB; the estimate for 5.44 GiB (rounded: 5.435-5.445) lies in 13,512-13,536."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "")
    assert p.needed(30_000, 16_384) == 7_152_076_800
    assert f"{p.needed(30_000, 16_384) / GiB:.2f}" == "6.66"
    lo = estimate_max_model_len(p, int(5.435 * GiB), 30_000, 16_384)
    hi = estimate_max_model_len(p, int(5.445 * GiB), 30_000, 16_384)
    assert lo <= 13_528 <= hi


def _check(*args):
    return subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", "8x H200", "--json", *args],
                          capture_output=True, text=True, timeout=180)


def test_block_bytes_by_release():
    """Bytes of one 256-token block over all KV tensors (Flash): 0.20-0.22, 22 tuples x 47,808 = 1,051,776; 0.23-0.26
    (_bucket_layers_by_page_size: per page size the most layers of it in one group) 37,440 x 22 + 8,640 x 21 +
    1,728 x 20 = 1,039,680; 0.27 without the padding, the 32,832 B compressor-state pages get their own slots:
    + 32,832 x 21 = 1,729,152."""
    layers = list(_flash().trunk_layers)
    assert deepseek_v4_plan(layers, "", (0, 22, 0)).bytes_per_block == 1_051_776
    assert deepseek_v4_plan(layers, "", (0, 23, 0)).bytes_per_block == 1_039_680
    assert deepseek_v4_plan(layers, "", (0, 26, 0)).bytes_per_block == 1_039_680
    assert deepseek_v4_plan(layers, "", (0, 27, 1)).bytes_per_block == 1_729_152
    # 0.28.0: the pages come from state_content_bytes=584 (AttentionSpec.unpadded_page_size_bytes = 1 head x
    # storage_block_size x 584: 64 x 584 = 37,376 -> 37,440 and 2 x 584 = 1,168 -> 1,728 after the 576 B alignment;
    # the float32 compressor states 4 x 2,048 x 4 = 8 x 1,024 x 4 = 32,768 -> 32,832; indexer 64 x 132 = 8,448 ->
    # 8,640), the grouping unchanged: 37,440 x 22 + 8,640 x 21 + 1,728 x 20 + 32,832 x 21 = 1,729,152 per 256 tokens
    assert deepseek_v4_plan(layers, "", (0, 28, 0)).bytes_per_block == 37_440 * 22 + 8_640 * 21 + 1_728 * 20 \
        + 32_832 * 21 == 1_729_152
    # the request check (_max_memory_usage_bytes_from_groups) is the same in every one of them
    assert {deepseek_v4_plan(layers, "", v).needed(30_000, 16_384)
            for v in ((0, 20, 0), (0, 26, 0), (0, 27, 1), (0, 28, 0))} == {7_152_076_800}


def test_block_bytes_029_packed_planner_worked_by_hand():
    """0.29.0 (_get_packed_kv_cache_groups, read in the 0.29.0 wheel): the same per-layer pages; buckets by (block,
    window): full-MLA {37,440 x 21, 8,640 x 21, 1,728 x 20} (counts differ: unbalanced, one group), SWA (64, 128)
    43 x 37,440, C4 states (4, 8) 21 x 32,832 + 21 x 8,640 (balanced, two sizes: floor 21), C128 states (8, 128)
    20 x 32,832; repeats = _approximate_gcd([43, 21, 20], lower_bound=21) = 22, so SWA splits 22 / 21. A block is
    the widest group (_get_kv_cache_bytes_per_block): full-MLA 786,240 + 181,440 + 34,560 = 1,002,240 (SWA 823,680
    / 786,240, C4 states 870,912, C128 states 656,640). Request check at 30,000 / 16,384: 1,002,240 x (118 +
    2 x 259 + 4,099 + 2,065 = 6,800 pages) = 6,815,232,000 B; max concurrency divides by the 6,800 pages."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 29, 0))
    assert [(g.block_size, g.window, g.page_bytes, len(i)) for g, i in p.groups] == [
        (256, 0, 1_002_240, 41), (64, 128, 823_680, 22), (64, 128, 786_240, 21), (4, 8, 870_912, 21),
        (8, 128, 656_640, 20)]
    assert p.bytes_per_block == 37_440 * 21 + 8_640 * 21 + 1_728 * 20 == 1_002_240
    assert p.needed(30_000, 16_384) == 1_002_240 * 6_800 == 6_815_232_000
    assert p.blocks_per_request(30_000, 16_384) == 6_800


def test_block_bytes_030_as_029():
    """0.30.0 (read in the wheel): the same per-layer specs (DeepseekV4SWACache built with its defaults block 64,
    584 B rows, 576 B alignment; the FP8 indexer by default) and the same packed planner for DeepSeek-V4: 1,002,240 B
    per 256-token block, 6,815,232,000 B at 30,000 tokens."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 30, 0))
    assert (p.bytes_per_block, p.needed(30_000, 16_384)) == (1_002_240, 6_815_232_000)


def test_block_bytes_031_as_030():
    """0.31.0 (read in the wheel): max_tp_shards=1 on every spec, SWA block still 64 and bounded_replay off for V4,
    block_stride_alignment unset (the lcm rounding of _get_kv_cache_bytes_per_block is 1): 1,002,240 B per block."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 31, 0))
    assert (p.bytes_per_block, p.needed(30_000, 16_384)) == (1_002_240, 6_815_232_000)


def test_block_bytes_032_as_031():
    """0.32.0 (read in the wheel): the same specs (no block_stride_alignment, so the lcm rounding stays 1), the
    indexer's BLHNC layout keeps the packed planner's widest-group block: 1,002,240 B per block."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 32, 0))
    assert (p.bytes_per_block, p.needed(30_000, 16_384)) == (1_002_240, 6_815_232_000)


def test_block_bytes_033_as_032():
    """0.33.0 (read in the wheel): the planner moved to kv_cache_planning.py unchanged, the block probed from the
    default builder's one backing (the widest group), the V4 SWA cache without packed_block_stride_alignment and
    the V4 backends' customize_spec the identity: 1,002,240 B per block."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 33, 0))
    assert (p.bytes_per_block, p.needed(30_000, 16_384)) == (1_002_240, 6_815_232_000)


def test_block_bytes_034_as_033():
    """0.34.0 (read in the wheel): _get_kv_cache_bytes_per_block rounds to the lcm of the specs' block_stride_alignment
    alone (1 for the V4 specs), the specs, the SWA cache (block 64), the FP8 indexer and the planner unchanged:
    1,002,240 B per block, 6,815,232,000 B at 30,000 tokens."""
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", (0, 34, 0))
    assert (p.bytes_per_block, p.needed(30_000, 16_384)) == (1_002_240, 6_815_232_000)


@pytest.mark.parametrize("version", ["0.20.0", "0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0"])
def test_cli_sizes_flash_on_8x_h200(version):
    p = _check("--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
               "--kv-cache-dtype", "fp8", "--tensor-parallel-size", "8", "--max-model-len", "65536")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    d = json.loads(p.stdout)
    assert d["kv_cache_bytes"] > 0 and d["weights_bytes"] > 0


def test_cli_refuses_before_020_after_034_and_020_without_fp8():
    p = _check("--engine-version", "0.19.1", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
               "--kv-cache-dtype", "fp8", "-tp", "8")
    assert p.returncode == 2 and "DeepseekV4ForCausalLM from 0.20.0" in p.stderr, p.stdout + p.stderr
    p = _check("--engine-version", "0.20.0", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8")
    assert p.returncode == 2 and "DeepseekV4 only supports fp8 kv-cache format for now, got auto" in p.stderr, \
        p.stdout + p.stderr
    p = _check("--engine-version", "0.35.0", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
               "--kv-cache-dtype", "fp8", "-tp", "8")  # releases after 0.34 are not read
    assert p.returncode == 2 and "--engine-version 0.34.0" in p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("version,words", [
    ("0.20.0", "AssertionError: DeepseekV4 only supports fp8 kv-cache format for now, got auto"),
    ("0.22.0", "AssertionError: DeepseekV4 only supports fp8 kv-cache format for now, got auto"),
    ("0.23.0", "AssertionError: DeepseekV4 FlashMLA fp8 layout only supports fp8 kv-cache, got auto"),
    ("0.29.0", "AssertionError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got auto")])
def test_default_kv_dtype_refused_before_030(version, words):
    """Before 0.30 _resolve_dsv4_kv_cache_dtype (0.23+; DeepseekV4MLAAttention.__init__ before) asserts an fp8 choice,
    and the default "auto" is not one: each release's own assertion text."""
    p = _check("--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8")
    assert p.returncode == 2 and words in p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("version", ["0.30.0", "0.34.0"])
def test_default_kv_dtype_is_fp8_ds_mla_from_030(version):
    """0.30-0.34 _resolve_dsv4_kv_cache_dtype (models/deepseek_v4/attention.py): on the fp8_ds_mla layout (FlashMLA,
    and FlashInfer's SM120 class) "auto" becomes "fp8", then "fp8_ds_mla": the default sizes exactly as
    --kv-cache-dtype fp8 (and as fp8_ds_mla or fp8_e5m2 given by name, every fp8 spelling written back as
    fp8_ds_mla): the same KV bytes per rank each way, a whole number of the packed planner's 1,002,240 B blocks
    (37,440 x 21 + 8,640 x 21 + 1,728 x 20, test_block_bytes_029_packed_planner_worked_by_hand)."""
    base = ("--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8",
            "--max-model-len", "65536")
    figs = set()
    for extra in ((), ("--kv-cache-dtype", "fp8"), ("--kv-cache-dtype", "fp8_ds_mla"), ("--kv-cache-dtype", "fp8_e5m2")):
        p = _check(*base, *extra)
        assert p.returncode in (0, 1), p.stdout + p.stderr
        figs.add(json.loads(p.stdout)["devices"][0]["kv_cache_bytes"])
    assert len(figs) == 1
    per_rank = figs.pop()
    assert per_rank > 0 and per_rank % 1_002_240 == 0  # whole 1,002,240 B blocks (111,443 of them on 0.30)


@pytest.mark.parametrize("dtype", ["bfloat16", "nvfp4_ds_mla", "float16"])
def test_non_fp8_kv_dtypes_refused_from_030_in_vllms_words(dtype):
    """0.30+ raises ValueError for any choice not fp8 on the fp8_ds_mla layout (bfloat16, float16, and the
    nvfp4_ds_mla of 0.30's CacheDType, which is V3.2's FlashMLA format, not V4's)."""
    p = _check("--engine-version", "0.30.0", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8",
               "--kv-cache-dtype", dtype)
    assert p.returncode == 2 and (f"ValueError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {dtype}. "
                                  "Please set `--kv-cache-dtype fp8`") in p.stderr, p.stdout + p.stderr


def test_plain_row_pages_worked_by_hand():
    """--attention-backend FLASHINFER_MLA_SPARSE_DSV4 off SM 12.x: DeepseekV4FlashInferMLAAttention
    (use_fp8_ds_mla_layout False). Its specs (models/deepseek_v4/attention.py DeepseekV4MLAAttention /
    DeepseekV4IndexerCache.get_kv_cache_spec, compressor.py, sparse_swa.py DeepseekV4SWACache, read in the
    0.29.0-0.34.0 wheels): dtype the element type, state_content_bytes None, alignment 512 on every cache, block sizes
    unchanged. bf16 (2 B): SWA 64 x 512 x 2 = 65,536; C4 64 rows x 1,024 = 65,536, its state 4 x 2 x 2 x 512 x 4 =
    32,768 (512-aligned already), the indexer 64 x 132 = 8,448 -> 8,704, its state 8,192; C128 2 x 1,024 = 2,048,
    state 8 x 2 x 512 x 4 = 32,768. Per-tensor fp8 (1 B): 32,768 and 1,024 for the rows."""
    la = {x.index: x for x in _flash().trunk_layers}

    def pages(layer, elem):
        return {n: sp.page_bytes for n, sp in deepseek_v4_layer_caches(layer, plain_elem=elem)}

    assert pages(la[0], 2) == {"swa": 65_536}
    assert pages(la[2], 2) == {"swa": 65_536, "kv": 65_536, "state": 32_768, "indexer": 8_704,
                               "indexer_state": 8_192}
    assert pages(la[3], 2) == {"swa": 65_536, "kv": 2_048, "state": 32_768}
    assert pages(la[2], 1)["kv"] == pages(la[2], 1)["swa"] == 32_768 and pages(la[3], 1)["kv"] == 1_024


@pytest.mark.parametrize("version", ["0.29.0", "0.30.0", "0.34.0"])
def test_plain_row_block_bytes_packed_planner(version):
    """The packed planner (0.29+) over the plain pages: full-MLA bucket {65,536 x 21, 8,704 x 21, 2,048 x 20}
    (unbalanced, one group) = 1,600,000 B; SWA 43 x 65,536 split 22 / 21 (repeats _approximate_gcd([43, 21, 20], 21)
    = 22: 1,441,792 / 1,376,256), C4 states 21 x (32,768 + 8,192) = 860,160, C128 states 20 x 32,768 = 655,360. A block
    is the widest group, the full-MLA one: 1,600,000 B in bf16; in per-tensor fp8 32,768 x 21 + 8,704 x 21 + 1,024 x 20
    = 891,392 B (against fp8_ds_mla's 1,002,240)."""
    v = tuple(int(x) for x in version.split("."))
    p = deepseek_v4_plan(list(_flash().trunk_layers), "", v, plain_elem=2)
    assert [(g.block_size, g.window, g.page_bytes, len(i)) for g, i in p.groups] == [
        (256, 0, 1_600_000, 41), (64, 128, 1_441_792, 22), (64, 128, 1_376_256, 21), (4, 8, 860_160, 21),
        (8, 128, 655_360, 20)]
    assert p.bytes_per_block == 1_600_000
    assert deepseek_v4_plan(list(_flash().trunk_layers), "", v, plain_elem=1).bytes_per_block == 891_392


@pytest.mark.parametrize("kv,dtype,block", [("auto", "bfloat16", 1_600_000), ("bfloat16", "bfloat16", 1_600_000),
                                            ("fp8", "fp8", 891_392), ("fp8_e4m3", "fp8_e4m3", 891_392)])
def test_cli_sizes_the_plain_row_layout_on_b200(kv, dtype, block):
    """_resolve_dsv4_kv_cache_dtype for the plain layout: fp8* keeps its name (per-tensor E4M3 rows), auto and
    bfloat16 are bf16 rows (no auto -> fp8 as on the fp8_ds_mla layout)."""
    p = _check_on("8x B200", "--engine-version", "0.30.0", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
                  "-tp", "8", "--kv-cache-dtype", kv, "--attention-backend", "FLASHINFER_MLA_SPARSE_DSV4",
                  "--max-model-len", "65536")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    per_rank = json.loads(p.stdout)["devices"][0]["kv_cache_bytes"]
    assert per_rank > 0 and per_rank % block == 0


@pytest.mark.parametrize("gpu,version,kv,words", [
    ("8x B200", "0.28.0", "fp8", "plain-row FlashInfer KV layout"),
    ("8x B200", "0.30.0", "fp8_ds_mla", "SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla"),
    ("8x B200", "0.30.0", "float16", "kv_cache_dtype not supported"),
    ("8x H200", "0.30.0", "fp8", "FLASHINFER_MLA_SPARSE_DSV4 requires SM10x or SM12x")])
def test_plain_row_layout_refusals(gpu, version, kv, words):
    """Refused: the plain layout before 0.29 (its page specs not read: 0.27 has no state_content_bytes, 0.23-0.26
    pad the sliding pages to the full-MLA ones), fp8_ds_mla or a dtype the SM 10.x backend does not list
    (DeepseekV4FlashInferMLASparseBackend.supports_combination), and a GPU other than SM 10.x / 12.x."""
    p = _check_on(gpu, "--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8",
                  "--kv-cache-dtype", kv, "--attention-backend", "FLASHINFER_MLA_SPARSE_DSV4")
    assert p.returncode == 2 and words in p.stderr, p.stdout + p.stderr


def test_checkpoint_weights_as_vllm_loads_them():
    """DeepseekV4FP8Config (0.20.0 models/deepseek_v4.py): experts MXFP4 (4,096 x 2,048 x 256 x 17 / 32 bytes:
    half a byte and one e8m0 scale per 32), the other Linear weights block FP8 (attn_q_b 1,024 x 32,768: one byte
    each + 8 x 256 float32 block scales = 33,562,624 B), the compressors unquantized in the model dtype."""
    from oomkit.engines.vllm.weights import _deepseek_v4_checkpoint

    t = {x.name: x for x in _deepseek_v4_checkpoint(spec_from_config(DSV4_FLASH, "dsv4"))}  # no GGUF type named
    assert (t["blk.2.ffn_up_exps.weight"].dtype, t["blk.2.ffn_up_exps.weight"].nbytes) == (
        "mxfp4", 4096 * 2048 * 256 * 17 // 32)
    assert (t["blk.2.attn_q_b.weight"].dtype, t["blk.2.attn_q_b.weight"].nbytes) == ("fp8-block", 33_562_624)
    assert (t["blk.2.attn_compressor_kv.weight"].dtype, t["blk.2.attn_compressor_kv.weight"].nbytes) == (
        "bf16", 4096 * 1024 * 2)
    assert t["blk.2.ffn_gate_tid2eid.weight"].dtype == "I32"


def test_cli_weights_per_rank_at_tp8():
    """Flash at TP8 on 0.20.0: 20,967,169,516 B (19.5 GiB) of weights per rank, 167.7 GB over the 8 (the checkpoint
    is about 160 GB of FP8 / FP4 safetensors)."""
    p = _check("--engine-version", "0.20.0", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
               "--kv-cache-dtype", "fp8", "-tp", "8")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    d = json.loads(p.stdout)
    assert 150e9 < d["weights_bytes"] < 185e9


def test_mxfp4_indexer_pages_worked_by_hand():
    """MXFP4 indexer keys (0.27+ models/deepseek_v4/attention.py: k_cache_head_dim = 128 // 2 + 128 // 32 = 68 B):
    64 rows x 68 = 4,352 -> 4,608 (576-aligned); the indexer compressor's float32 state stays 8,640."""
    la = {x.index: x for x in _flash().trunk_layers}
    pages = {name: sp.page_bytes for name, sp in deepseek_v4_layer_caches(la[2], indexer_mxfp4=True)}
    assert pages == {"swa": 37_440, "kv": 37_440, "state": 32_832, "indexer": 4_608, "indexer_state": 8_640}


def test_mxfp4_indexer_block_bytes_by_release():
    """Flash with MXFP4 indexer keys. 0.30 (packed planner): the full-MLA bucket {37,440 x 21, 4,608 x 21, 1,728 x 20}
    stays one group, 786,240 + 96,768 + 34,560 = 917,568 B, wider than the C4 states (21 x (32,832 + 8,640) =
    870,912) and the split SWA (22 x 37,440 = 823,680): 917,568 B per block, x 6,800 pages at 30,000 / 16,384 =
    6,239,462,400 B. 0.27 (a slot per page size, the most layers of it in one group): the indexer's 4,608 B pages
    no longer share the indexer state's 8,640 B slots: 37,440 x 22 + 4,608 x 21 + 1,728 x 20 + 32,832 x 21 +
    8,640 x 21 = 1,825,920 B."""
    layers = list(_flash().trunk_layers)
    p = deepseek_v4_plan(layers, "", (0, 30, 0), indexer_mxfp4=True)
    assert p.bytes_per_block == 37_440 * 21 + 4_608 * 21 + 1_728 * 20 == 917_568
    assert p.needed(30_000, 16_384) == 917_568 * 6_800 == 6_239_462_400
    assert deepseek_v4_plan(layers, "", (0, 34, 0), indexer_mxfp4=True).bytes_per_block == 917_568
    assert deepseek_v4_plan(layers, "", (0, 27, 1), indexer_mxfp4=True).bytes_per_block == \
        37_440 * 22 + 4_608 * 21 + 1_728 * 20 + 32_832 * 21 + 8_640 * 21 == 1_825_920
    # the FP8 indexer is unchanged: the held-out vllm#44376 figure stays exact
    assert deepseek_v4_plan(layers, "").needed(30_000, 16_384) == 7_152_076_800


def _check_on(gpu, *args):
    return subprocess.run([sys.executable, "-m", "oomkit", "check", "--gpu", gpu, "--json", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("version,config,rows", [
    ("0.30.0", '{"indexer_kv_dtype": "mxfp4"}', 917_568), ("0.34.0", '{"indexer_kv_dtype": "mxfp4"}', 917_568),
    ("0.30.0", '{"indexer_kv_dtype": "fp8"}', 1_002_240), ("0.30.0", '{"backend": "FLASHMLA_SPARSE_DSV4"}', 1_002_240)])
def test_cli_attention_config_indexer_on_b200(version, config, rows):
    """--attention-config's indexer_kv_dtype on 8x B200 (SM 10.0, where dsa_indexer_uses_fp4 takes mxfp4): each rank's
    KV cache is a whole number of the plan's blocks (917,568 B with MXFP4 keys, 1,002,240 B with FP8)."""
    p = _check_on("8x B200", "--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash",
                  "-tp", "8", "--max-model-len", "65536", "--attention-config", config)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert json.loads(p.stdout)["devices"][0]["kv_cache_bytes"] % rows == 0


@pytest.mark.parametrize("gpu,version,config,words", [
    ("8x H200", "0.30.0", '{"indexer_kv_dtype": "mxfp4"}',
     "ValueError: indexer_kv_dtype='mxfp4' requires Blackwell datacenter GPUs (sm_10x"),
    ("8x H200", "0.27.0", '{"use_fp4_indexer_cache": true}',
     "AssertionError: use_fp4_indexer_cache requires Blackwell datacenter GPUs (sm_10x"),
    ("8x B200", "0.30.0", '{"indexer_kv_dtype": "nvfp4"}',
     "ValueError: indexer_kv_dtype='nvfp4' is not supported by the DeepSeek sparse indexer"),
    ("8x B200", "0.30.0", '{"use_fp4_indexer_cache": true}', "AttentionConfig has no field use_fp4_indexer_cache"),
    ("8x B200", "0.23.0", '{"indexer_kv_dtype": "mxfp4"}', "AttentionConfig has no field indexer_kv_dtype")])
def test_cli_attention_config_indexer_refusals(gpu, version, config, words):
    p = _check_on(gpu, "--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8",
                  "--kv-cache-dtype", "fp8", "--attention-config", config)
    assert p.returncode == 2 and words in p.stderr, p.stdout + p.stderr


def test_use_fp4_indexer_cache_rows_by_release():
    """0.28-0.29 map use_fp4_indexer_cache=True to indexer_kv_dtype "mxfp4" (config/attention.py __post_init__);
    before 0.27 the flag changes the kernels, not the 132 B key rows; from 0.27 the rows are 68 B."""
    from oomkit.engines.vllm.config import dsv4_indexer_mxfp4
    from oomkit.engines.vllm.settings import VllmSettings

    fp4 = VllmSettings(use_fp4_indexer_cache=True)
    assert [dsv4_indexer_mxfp4(fp4, v, (10, 0)) for v in ((0, 26, 0), (0, 27, 0), (0, 29, 0))] == [False, True, True]
    assert dsv4_indexer_mxfp4(VllmSettings(indexer_kv_dtype="mxfp4"), (0, 27, 0), (10, 0)) is False  # MiniMax's field
    assert dsv4_indexer_mxfp4(VllmSettings(), (0, 34, 0), (9, 0)) is False  # "auto" is fp8


def test_attention_config_parsed():
    """--attention-config '{...}' (AttentionConfig from the JSON object): backend stands for --attention-backend
    (which wins when given too), indexer_kv_dtype and use_fp4_indexer_cache are kept; no JSON is vLLM's error."""
    from oomkit.engines.vllm.args import parse_args
    from oomkit.errors import OomkitError

    s = parse_args(["m", "--attention-config", '{"backend": "flashinfer", "indexer_kv_dtype": "mxfp4"}'])[2]
    assert (s.attention_backend, s.indexer_kv_dtype, s.use_fp4_indexer_cache) == ("FLASHINFER", "mxfp4", None)
    s = parse_args(["m", "--attention-config", '{"backend": "flashinfer"}', "--attention-backend", "TRITON_ATTN"])[2]
    assert s.attention_backend == "TRITON_ATTN"
    assert parse_args(["m", "--attention-config", '{"use_fp4_indexer_cache": true}'])[2].use_fp4_indexer_cache is True
    with pytest.raises(OomkitError, match="invalid loads value"):
        parse_args(["m", "--attention-config", "nojson"])


@pytest.mark.parametrize("gpu,version,extra,runs", [
    ("8x A100 80GB", "0.30.0", (), False), ("8x L40S", "0.34.0", (), False), ("8x H100", "0.20.0", (), True),
    ("8x B200", "0.30.0", (), True), ("8x RTX PRO 6000", "0.22.0", (), False), ("8x RTX PRO 6000", "0.30.0", (), True),
    ("8x RTX PRO 6000", "0.30.0", ("--attention-backend", "FLASHMLA_SPARSE_DSV4"), False)])
def test_gpus_vllm_runs_deepseek_v4_on(gpu, version, extra, runs):
    """FlashMLA's sparse kernels exist for SM 9.x / 10.x only (is_flashmla_sparse_supported; the V4 FlashMLA backend's
    supports_compute_capability [9, 10]; 0.20-0.22 assert a FlashMLASparse backend); from 0.24 _select_dsv4_attn_cls
    sends SM 12.x to DeepseekV4FlashInferSM120Attention unless a FlashMLA backend is named. Elsewhere: refused."""
    p = _check_on(gpu, "--engine-version", version, "--", "vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash", "-tp", "8",
                  "--kv-cache-dtype", "fp8", "--max-model-len", "8192", *extra)
    if runs:
        assert p.returncode in (0, 1), p.stdout + p.stderr
    else:
        assert p.returncode == 2 and "no DeepSeek-V4 attention kernel for compute capability" in p.stderr, \
            p.stdout + p.stderr


_DSV4_LOG = """INFO 06-03 10:00:01 [core.py:1] Initializing a V1 LLM engine (v0.30.0) with config: \
model='deepseek-ai/DeepSeek-V4-Flash', max_seq_len=1048576, tensor_parallel_size=8, kv_cache_dtype=auto
(Worker_TP0 pid=1) INFO 06-03 10:00:05 [attention.py:120] Using DeepSeek's fp8_ds_mla KV cache format.
(EngineCore pid=1) ValueError: To serve at least one request with the model's max seq len (1048576), (20.00 GiB KV \
cache is needed, which is larger than the available KV cache memory (5.44 GiB). Based on the available memory, the \
estimated maximum model length is 200000. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when \
initializing the engine.
"""


def test_diagnose_reads_the_fp8_ds_mla_cache_in_force(tmp_path):
    """A 0.30+ log with kv_cache_dtype=auto: _resolve_dsv4_kv_cache_dtype's "Using DeepSeek's fp8_ds_mla KV cache
    format." says the fp8 cache is in force, so no --kv-cache-dtype fp8 fix is offered."""
    log = tmp_path / "dsv4.log"
    log.write_text(_DSV4_LOG)
    p = subprocess.run([sys.executable, "-m", "oomkit", "diagnose", "--json", str(log)], capture_output=True,
                       text=True, timeout=120)
    d = json.loads(p.stdout)
    assert d["settings"]["kv_cache_dtype"] == "fp8_ds_mla"
    assert not any("--kv-cache-dtype" in (f.get("flags") or ()) for f in d["fixes"]), d["fixes"]


def test_planner_offers_deepseek_v4_an_fp8_cache_only():
    """The planner's KV choices for DeepSeek-V4: fp8 alone (auto is refused before 0.30 and the same fp8_ds_mla
    cache from 0.30, never a model-dtype cache)."""
    from oomkit.engines.vllm.knobs import knobs
    from oomkit.engines.vllm.settings import VllmSettings

    choices = list(knobs("deepseek-ai/DeepSeek-V4-Flash", _flash(), (), VllmSettings(engine_version="0.30.0")))
    assert choices and {c.settings.kv_cache_dtype for c in choices} == {"fp8"}
    assert all("model-dtype" not in c.label for c in choices)
