"""Benchmark: read the header of a 10 GB GGUF (Llama-3.1-8B shapes, 128k vocab) without reading its data.

Writes the real header with gguf-py (every tensor's real name and shape, Q4_K/Q6_K weights, F32 norms; the
full tokens/token_type/merges arrays), extends the file to 10 GB as a sparse hole, then times
`read_gguf_header` (page cache dropped before each run with posix_fadvise, median of several) against
`gguf.GGUFReader` on the same file, and counts the bytes our reader pulls from the file.

    .venv/bin/python bench/bench_gguf_header.py [--runs 7] [--size-gb 10]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import tempfile
import time

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q

from oomkit.model.gguf_header import read_gguf_header

# Llama-3.1-8B (meta-llama/Llama-3.1-8B config.json): 32 layers, hidden 4096, 32 heads, 8 KV heads,
# FFN 14336, vocab 128256; 280147 BPE merges in its tokenizer.json.
N_LAYER, N_EMBD, N_HEAD, N_KV, N_FF, N_VOCAB, N_MERGES = 32, 4096, 32, 8, 14336, 128256, 280147
HEAD_DIM = N_EMBD // N_HEAD


def tensor_plan() -> list[tuple[str, tuple[int, ...], Q]]:
    """(name, numpy-order shape, type) in llama.cpp's order; Q4_K weights with Q6_K for attn_v, ffn_down
    and output, as llama-quantize's Q4_K_M recipe does (roughly; exact per-layer choice does not matter)."""
    plan = [("token_embd.weight", (N_VOCAB, N_EMBD), Q.Q4_K), ("rope_freqs.weight", (HEAD_DIM // 2,), Q.F32)]
    for i in range(N_LAYER):
        b = f"blk.{i}."
        plan += [
            (b + "attn_norm.weight", (N_EMBD,), Q.F32),
            (b + "attn_q.weight", (N_EMBD, N_EMBD), Q.Q4_K),
            (b + "attn_k.weight", (N_KV * HEAD_DIM, N_EMBD), Q.Q4_K),
            (b + "attn_v.weight", (N_KV * HEAD_DIM, N_EMBD), Q.Q6_K),
            (b + "attn_output.weight", (N_EMBD, N_EMBD), Q.Q4_K),
            (b + "ffn_norm.weight", (N_EMBD,), Q.F32),
            (b + "ffn_gate.weight", (N_FF, N_EMBD), Q.Q4_K),
            (b + "ffn_up.weight", (N_FF, N_EMBD), Q.Q4_K),
            (b + "ffn_down.weight", (N_EMBD, N_FF), Q.Q6_K),
        ]
    return plan + [("output_norm.weight", (N_EMBD,), Q.F32), ("output.weight", (N_VOCAB, N_EMBD), Q.Q6_K)]


def write_model(path: str, size: int) -> None:
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyzĠ"
    tokens = [f"{i}" + "".join(rng.choices(letters, k=rng.randint(1, 9))) for i in range(N_VOCAB)]
    merges = ["".join(rng.choices(letters, k=rng.randint(1, 6))) + " " + "".join(rng.choices(letters, k=rng.randint(1, 6)))
              for _ in range(N_MERGES)]
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("Meta Llama 3.1 8B Instruct (synthetic header)")
    w.add_block_count(N_LAYER)
    w.add_context_length(131072)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_vocab_size(N_VOCAB)
    w.add_file_type(15)  # LLAMA_FTYPE_MOSTLY_Q4_K_M
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list(tokens)
    w.add_token_types([1] * N_VOCAB)
    w.add_token_merges(merges)
    w.add_bos_token_id(128000)
    w.add_eos_token_id(128009)
    w.add_chat_template("{% for message in messages %}" + "x" * 4000 + "{% endfor %}")
    w.add_quantization_version(2)
    for name, shape, qtype in tensor_plan():
        blck, tsize = gguf.GGML_QUANT_SIZES[qtype]
        nbytes = int(np.prod(shape)) // blck * tsize
        w.add_tensor_info(name, shape, np.dtype(np.float32), nbytes, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    os.truncate(path, size)  # the tensor data becomes a sparse hole


class CountingFile(io.RawIOBase):
    """A file object that counts the bytes read through it."""

    def __init__(self, path: str) -> None:
        self._f = open(path, "rb", buffering=0)
        self.name = path
        self.nread = 0
        self.nreads = 0

    def read(self, n: int = -1) -> bytes:
        b = self._f.read(n)
        self.nread += len(b)
        self.nreads += 1
        return b

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._f.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._f.seek(pos, whence)

    def fileno(self) -> int:
        return self._f.fileno()

    def close(self) -> None:
        self._f.close()
        super().close()


def drop_cache(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def timed(fn, runs: int, cold: bool, path: str) -> float:
    times = []
    for _ in range(runs):
        if cold:
            drop_cache(path)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--size-gb", type=float, default=10.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "Llama-3.1-8B-Q4_K_M.gguf")
        t0 = time.perf_counter()
        write_model(path, int(args.size_gb * 1e9))
        print(f"wrote {path} in {time.perf_counter() - t0:.1f} s")

        with CountingFile(path) as f:
            h = read_gguf_header(f)
            nread, nreads = f.nread, f.nreads
        r = gguf.GGUFReader(path)
        assert [t.name for t in h.tensors] == [t.name for t in r.tensors] and h.data_offset == r.data_offset

        ours_cold = timed(lambda: read_gguf_header(path), args.runs, True, path)
        ours_warm = timed(lambda: read_gguf_header(path), args.runs, False, path)
        theirs = timed(lambda: gguf.GGUFReader(path), max(3, args.runs // 2), False, path)
        st = os.stat(path)
        mib = 1 << 20
        print(f"file size        {h.file_size:>14,} bytes ({h.file_size / 1e9:.1f} GB; {st.st_blocks * 512 / mib:.1f} MiB on disk)")
        print(f"tensor data      {h.data_size:>14,} bytes in {len(h.tensors)} tensors")
        print(f"header           {h.header_bytes:>14,} bytes (data_offset {h.data_offset:,}); "
              f"{h.metadata['tokenizer.ggml.tokens'].length} tokens, {h.metadata['tokenizer.ggml.merges'].length} merges")
        print(f"bytes read       {nread:>14,} bytes in {nreads} reads = {nread / h.header_bytes:.2f} x header, "
              f"{nread / h.file_size:.5%} of the file")
        print(f"read_gguf_header {ours_cold * 1e3:>10.1f} ms median cold (page cache dropped), "
              f"{ours_warm * 1e3:.1f} ms warm, {args.runs} runs")
        print(f"gguf.GGUFReader  {theirs * 1e3:>10.1f} ms median warm")
        print(f"speed-up         {theirs / ours_warm:>10.1f} x (warm vs warm), {theirs / ours_cold:.1f} x (ours cold)")


if __name__ == "__main__":
    main()
