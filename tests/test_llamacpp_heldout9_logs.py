"""A ninth held-out set of llama.cpp start-up logs (tests/fixtures/engine_logs/llamacpp_heldout9/, each with its
source), chosen for what the earlier sets had least of: ROCm on a datacenter card, one and two of them, an RPC split
over CPU servers, Metal through llama-completion, the CPU alone with its repacked weights on a Mac, and the server's
embedding and reranking modes. farbodtavakkoli/OTel's llama.cpp leaves (b10523 on AMD Instinct MI355X: Qwen3.8-27B
Q8_0 on one card and by layer over two with -ts 1,1, Qwen3-Reranker-0.6B with --reranking, EmbeddingGemma-300M with
--embeddings; b10588 on an H100: Qwen3-1.7B Q8_0); ontouchstart/rabbit-holes's llama-completion session on an Apple
M5 (b8164, gpt-oss-20b MXFP4 at the trained context --fit keeps); benemon/llamesh's CPU-only journal on an M4 Pro
(b10566, gemma-4-E2B UD-Q4_K_XL, --device none, CPU_REPACK beside the mapped file); Arm's learning path of llama-cli
with two Graviton rpc-servers (b6209, Llama 3.1 70B Q4_0). Read through oomkit with the log's own flags, build and
free memory, nothing tuned, by the held-out harness (tests/test_llamacpp_heldout_logs.py): model, KV and output
buffers exact, compute within 10%, the fit's context; a figure oomkit misses stays a strict xfail with its measured
error (the fixture's known_miss).

As it stood (19 figures of 8 logs), with no rule changed since: the weights exact in 5 of 8 (the MI355X Q8_0 runs,
one card and the 1:1 layer split to the 0.01 MiB, the H100, the M5's MTL0_Mapped / CPU_Mapped, both RPC servers and
the client's mapped embeddings); KV, output and the fit's context exact wherever printed; compute within 10% on
every device (worst: the M5's MTL0, 404.00 MiB against 420.08, 0.962; the RPC servers 604.00 against 588.01, 1.027).

Qwen3-Reranker-0.6B's file has the 151669 vocabulary rows of the checkpoint's own config.json, which the catalog
entry now reads (the entry derived from Qwen3-0.6B-Base had 151936: +0.28 MiB in both buffers); its two buffers are
exact.

ggml-org's EmbeddingGemma file carries the SentenceTransformers Dense projections llama.cpp loads when present, which
oomkit's spec of the checkpoint now holds (they were -4.78 MiB on the device); ROCm0 and CPU_Mapped are exact.

What misses is the fixture's known_miss, no engine rule: unsloth's UD-Q4_K_XL of Gemma 4 E2B is a publisher's mix
no recipe covers."""

import json
from pathlib import Path

import pytest

from oomkit.model.resolve import resolve
from tests.test_llamacpp_heldout_logs import assert_cited_and_checked, check, held_out_estimate, params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_heldout9").glob("*.json"))
MiB = 1 << 20
Q8_0_BYTES_PER_WEIGHT = 34 / 32  # block_q8_0: 32 int8 weights and one f16 scale


def _fixture(prefix: str) -> dict:
    return json.loads(next(p for p in FIXTURES if p.name.startswith(prefix)).read_text())


@pytest.mark.parametrize(("path", "what"), params(FIXTURES))
def test_held_out_log(path, what):
    check(json.loads(path.read_text()), what)


def test_held_out_logs_are_cited_and_checked():
    assert_cited_and_checked(FIXTURES, 8)


def test_reranker_reads_the_files_vocabulary():
    """The printed CPU_Mapped buffer is the q8_0 token embedding alone: 157.37 MiB is 151669 rows of 1024, the
    vocabulary of Qwen3-Reranker-0.6B's own config.json, which the catalog entry now reads (it had the base model's
    151936 before, +0.28 MiB in both buffers: the device's through the tied output's copy)."""
    fx = _fixture("qwen3-reranker-0.6b")
    printed = fx["printed"]["buffers"]["model_mib"]
    assert round(151669 * 1024 * Q8_0_BYTES_PER_WEIGHT / MiB, 2) == printed["CPU_Mapped"]
    got = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    for buf in ("CPU_Mapped", "ROCm0"):
        assert round(got[buf] / MiB, 2) == printed[buf], buf


def test_embeddinggemma_device_holds_the_dense_projections():
    """ggml-org's EmbeddingGemma file holds the SentenceTransformers Dense modules (768 -> 3072 -> 768), which
    llama.cpp loads as output-layer tensors when a file has them: the device buffer carries those two q8_0 matrices
    (4.78 MiB, which it lacked before the spec held them) beside the layers and the tied output's copy of the token
    embeddings, which alone are mapped on the host."""
    fx = _fixture("embeddinggemma-300m")
    printed = fx["printed"]["buffers"]["model_mib"]
    got = held_out_estimate(fx).engine_view["model_buffer_bytes"]
    assert round(got["CPU_Mapped"] / MiB, 2) == printed["CPU_Mapped"]
    assert round(got["ROCm0"] / MiB, 2) == printed["ROCm0"]
    spec = resolve(fx["catalog_model"], fx["weight_format"])
    dense = {t.name: (t.shape, t.dtype, t.nbytes) for t in spec.weights.tensors if t.name.startswith("dense_")}
    q8 = int(768 * 3072 * Q8_0_BYTES_PER_WEIGHT)
    assert dense == {"dense_2.weight": ((768, 3072), "q8_0", q8), "dense_3.weight": ((3072, 768), "q8_0", q8)}
