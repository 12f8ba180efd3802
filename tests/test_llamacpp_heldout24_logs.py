"""A twenty-fourth held-out set of llama.cpp memory figures, from web pages outside GitHub
(tests/fixtures/engine_logs/llamacpp_heldout24/, each with its page's URL and the lines quoted as the stored page
gives them), read through oomkit with the page's own model, flags and build, nothing tuned. Counted at 18e0faf1:

- An r/LocalLLaMA post on ggml-org/llama.cpp#13194 (interleaved-SWA KV cache, b5429), through a redlib front end:
  the F16 KV cache of gemma-3-4b/12b/27b-it. The 'original implementation' (every layer's cache at the full
  context, builds before b5429): 18 of 18 exact (27b 1984 ... 63488 MiB at 4k ... 128k, 12b 1536 ... 49152, 4b
  544 ... 17408). The new global (non-SWA) cache: 11 of 11 exact (27b 320 ... 10240, 12b 256 ... 4096). The new
  local (SWA) cache by -b: 6 of 12 exact, those at -b 64 and 512 (27b 442 / 624, 12b 340 / 480, 4b 123.25 / 174
  MiB: 1088 and 1536 cells); the 6 at -b 2048 and 8192 are off (printed 1248 / 3744, 960 / 2880, 348 / 1044 MiB,
  3072 and 9216 cells; oomkit 624 / 480 / 174 at 1536 cells, -50% and -83%), and so is the post's 27b total at 64k
  with the default -b 2048 (6368 MiB; oomkit 5744). The rule that explains them: from #13194 (e298d2fb, b5429)
  until #13833 (3600cc28, b5554) llama_kv_cache_unified_iswa sized the SWA cache n_swa*n_seq_max + n_batch
  (llama-model.cpp create_memory passed cparams.n_batch; src/llama-kv-cache.cpp: GGML_PAD(n_swa*n_seq_max +
  n_batch, padding)), and #13833 made it n_ubatch; oomkit's kv.py _kv_caches applied n_ubatch at every build.
  Now by build (ERAS swa_cells_ubatch): all 12 and both 27b totals (6368 / 5562 MiB) exact.
- lilting.ch, Qwen3.5-35B-A3B Q6_K on a Radeon 8060S (gfx1151) through Vulkan at b8183, --no-mmap, the server's
  default 4 slots: the recurrent state's 'fixed-size buffer (251 MiB)' as the page rounds it (oomkit's RS buffer
  251.25 MiB: 30 delta-net layers x 4 sequences) and the file's 26.55 GiB (oomkit's model buffers 26784.88 +
  397.85 MiB) agree, 2 of 2.

In all: 38 of 45 figures exact (or to the page's rounding) before, 7 off, all seven the b5429-b5553 SWA cache size;
45 of 45 after.

Searched and not used: pages whose stored copy stops before any buffer line (a Qwen3.6-35B-A3B teardown on an RTX
5060 Ti, a Qwen3.5-35B-A3B 160K-context write-up, a Qwen3.6-35B-A3B -ncmoe post on an RTX 3060, a Qwen3.5-35B-A3B
16 GB profile on a Hacker News mirror), VRAM totals read off nvidia-smi rather than buffer lines (an RTX 5060 Ti
context sweep of Qwen2.5-Coder-7B, a dual-RTX 3090 Qwen3-32B context study, an RTX 5080 Qwen3.5-35B-A3B offload
table), ik_llama.cpp's MLA lines on a DeepSeek forum thread (another engine), llama.cpp's own fit-params README
(already a fixture) and an eight-GPU Ollama runner log (in tests/test_ollama_heldout15_logs.py)."""

from __future__ import annotations

import json

import pytest

import oomkit
from oomkit.engines.llamacpp.args import parse_args
from oomkit.memory import Device
from tests.llamacpp_heldout import fixture_from, set_fixtures
from tests.test_llamacpp_heldout_logs import held_out_estimate

MiB = 1 << 20
FIXTURES = set_fixtures("llamacpp_heldout24")
G3 = fixture_from(FIXTURES, "gemma-3-4b-12b-27b-iswa")
Q35 = fixture_from(FIXTURES, "qwen3.5-35b-a3b-q6k-vulkan")
_BIG = (Device(id="CUDA0", name="NVIDIA RTX PRO 6000 Blackwell", memory_bytes=97887 * MiB, free_bytes=96000 * MiB),)
_CTX = {"4k": 4096, "8k": 8192, "16k": 16384, "32k": 32768, "64k": 65536, "128k": 131072}


def _caches(model: str, ctx: int, batch: int, build: str) -> dict[str, float]:
    """The KV caches oomkit's llama.cpp engine gives the run (-c ctx -b batch, every layer on the GPU), in MiB by
    cache name ('' before the split, 'non-SWA' / 'SWA' after)."""
    _, _, settings = parse_args(["-c", str(ctx), "-b", str(batch), "-ngl", "99"], "llama-server")
    view = oomkit.estimate(G3["models"][model], "llama.cpp", quant="Q4_K_M", devices=_BIG, settings=settings,
                           find_max_context=False, engine_version=build).engine_view
    return {c["name"]: (c["k_bytes"] + c["v_bytes"]) / MiB for c in view["kv_caches"]}


def _params(table: str):
    return [(m, k) for m, row in G3["printed"][table].items() for k in row]


@pytest.mark.parametrize(("model", "ctx"), _params("old_kv_mib"))
def test_gemma3_kv_before_iswa(model, ctx):
    """Before #13194 (b5428 and earlier) every layer's cache spans the context: 27b 62 x 16 heads x 128 x 2 x F16,
    so 496 KiB a cell, 31744 MiB at 64k."""
    got = _caches(model, _CTX[ctx], 2048, G3["engine_version_old"])
    assert got == {"": G3["printed"]["old_kv_mib"][model][ctx]}


@pytest.mark.parametrize(("model", "ctx"), _params("global_kv_mib"))
def test_gemma3_global_kv_after_iswa(model, ctx):
    """From #13194 the full-attention layers (27b: 10 of 62, 12b: 8 of 48) keep the context's cells."""
    got = _caches(model, _CTX[ctx], 2048, G3["engine_version_new"])
    assert got["non-SWA"] == G3["printed"]["global_kv_mib"][model][ctx]


@pytest.mark.parametrize(("model", "batch"), _params("swa_kv_mib"))
def test_gemma3_swa_kv_by_batch(model, batch):
    """The windowed layers' cache: n_swa 1024 + the batch, padded. At -b 64 and 512 (-ub follows -b down to it)
    n_batch and n_ubatch are the same and oomkit agrees: 1088 and 1536 cells."""
    got = _caches(model, 65536, int(batch), G3["engine_version_new"])
    assert got["SWA"] == G3["printed"]["swa_kv_mib"][model][batch]


@pytest.mark.parametrize("batch", ["64", "2048"])
def test_gemma3_27b_total_at_64k(batch):
    """The post's 27b totals at 64k: 5120 + 442 = 5562 MiB with -b 64, 5120 + 1248 = 6368 with the default 2048."""
    got = _caches("gemma-3-27b", 65536, int(batch), G3["engine_version_new"])
    assert sum(got.values()) == G3["printed"]["totals_27b_64k_mib"][batch]


def test_qwen35_recurrent_state_and_file():
    """RS buffer 251.25 MiB (the page: 'a fixed-size buffer (251 MiB)'), the same at -c 4096 and 65536; the model
    buffers sum to the file's 26.55 GiB."""
    for ctx in ("4096", "65536"):
        fx = {**Q35, "argv": ["-c", ctx, *Q35["argv"][2:]]}
        view = held_out_estimate(fx).engine_view
        rs = sum(view["rs_buffer_bytes"].values()) / MiB
        assert round(rs) == Q35["printed"]["rs_mib_rounded"] and view["n_seq_max"] == 4, (ctx, rs)
        assert round(sum(view["model_buffer_bytes"].values()) / (1 << 30), 2) == Q35["printed"]["file_gib"]


def test_pages_cited_and_quoted():
    """Each fixture cites its page (not a GitHub thread) and quotes the figures it holds as the page prints them."""
    assert len(FIXTURES) == 2
    for path in FIXTURES:
        fx = json.loads(path.read_text())
        assert fx["source"].startswith("https://") and "github.com" not in fx["source"], path.name
    q = G3["quoted"]
    for table in ("old_kv_mib", "global_kv_mib", "swa_kv_mib"):
        for model, row in G3["printed"][table].items():
            line = next(x for x in q.splitlines() if x.startswith(f"{model} | ") and
                        all(f"{v:g}MB" in x for v in row.values()))
            assert line, (table, model)
    assert "Originally, it is 5120+1248=6368MiB. Now it is 5120+442=5562MiB." in q
    assert "fixed-size buffer (251 MiB)" in Q35["quoted"] and "Q6_K (26.55 GiB)" in Q35["quoted"]
    assert "b8183 Vulkan + --no-mmap" in Q35["quoted"]
