"""Architectures whose llama.cpp check (tests/test_llamacpp_archs.py) ran only on the generic Llama-2-7B-like shape
(tests/ggufs.py SWEEP: 4096 wide, 32 / 8 heads of 128, FFN 11008, vocabulary 32000), held to llama.cpp again with the
published checkpoint's layer shapes: widths, head counts and head sizes, KV heads, FFN and expert widths, vocabulary and
tied embeddings from the model's config.json (the copy in src/oomkit/model/catalog/data named per model). The tensor set
is the sweep's, which llama.cpp@0c1e57098's loader asked for (load_tensors in src/llama-model.cpp), with each generic
dimension replaced by the model's; a few layers are written, the data a sparse hole (tests/groundtruth/synth.py).

llama.cpp (llama-cpp-python 0.3.36, ggml-org/llama.cpp@0c1e57098) loads each file on the CPU with extra buffer types
off; KV caches (cells, layers, K, V), model and output buffers must equal the figures it prints, the compute buffer
within 10% (tests/llamacpp_harness.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from oomkit.model.gguf_file import read_gguf_spec
from tests import ggufs
from tests import gt_compare as g
from tests import llamacpp_harness as h
from tests.groundtruth import synth
from tests.groundtruth.synth import VT, SynthModel, Tensor, _Meta

needs_llama_cpp = pytest.mark.skipif(not g.llamacpp_run.available(), reason="llama-cpp-python not installed")

BASE = next(g.settings_grid())
GRID = [
    dict(BASE, n_ctx=8192),
    dict(BASE, n_ctx=8192, flash_attn="off", n_seq_max=2),
    dict(BASE, n_ctx=32768, type_k="q8_0", type_v="q8_0"),
    dict(BASE, n_ctx=16384, n_seq_max=4, kv_unified=True),
]


def resized(arch: str, source: str, *, n_embd: int, n_head: int, n_kv: int, hd: int, n_ff: int, n_vocab: int,
            tied: bool, ctx: int, n_layers: int = 2, rope_base: float = 10000.0, n_exp: int = 0, n_used: int = 0,
            ff_exp: int = 0, ff_shexp: int = 0, extra: dict[str, Any] | None = None) -> SynthModel:
    """The sweep's tensor set for `arch` with the generic dimensions replaced by a checkpoint's.

    Generic -> real: 4096 the hidden width (n_head x head on Q's output, the attention output's input and Q's bias
    and norm), 1024 the K/V width (n_kv x head), 128 the head size, 11008 the FFN width (the shared expert's in the
    MoE sweeps that have one), 22016 the fused gate+up (2 x FFN), 6144 the fused QKV, 5504 Qwen-1's half FFN,
    2048 the expert width (the shared experts' where ff_shexp is given), 8 the expert count, 8192 the learned
    positions (the trained context)."""
    extras, patterns = ggufs.SWEEP[arch]
    n_q, n_kvd = n_head * hd, n_kv * hd
    common = {4096: n_embd, 1024: n_kvd, 128: hd, 11008: ff_shexp or n_ff, 22016: 2 * n_ff, 6144: n_q + 2 * n_kvd,
              5504: n_ff // 2, 32000: n_vocab}
    if n_exp:
        common.update({2048: ff_exp, 8: n_exp})

    def shape(name: str, ne: tuple[int, ...]) -> tuple[int, ...]:
        out = [common.get(d, d) for d in ne]
        if "shexp" in name and ff_shexp:
            out = [ff_shexp if d in (2048, 11008) else o for d, o in zip(ne, out, strict=True)]
        if name == "position_embd.weight":
            out[1] = ctx
        if name.endswith(("attn_q.weight",)) and ne[1] == 4096:
            out[1] = n_q
        if name.endswith("attn_output.weight") and ne[0] == 4096:
            out[0] = n_q
        if name.endswith(("attn_q.bias", "attn_q_norm.weight", "attn_q_norm.bias")) and ne[0] == 4096:
            out[0] = n_q
        return tuple(out)

    md = _Meta(arch).base(ctx=ctx, n_embd=n_embd, n_layers=n_layers, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv,
                          rms_eps=1e-5, rope_base=rope_base, n_vocab=n_vocab)
    md.f32("attention.layer_norm_epsilon", 1e-5)
    if hd != n_embd // n_head:
        md.u32("attention.key_length", hd).u32("attention.value_length", hd)
    real = {f"{arch}.expert_count": n_exp, f"{arch}.expert_used_count": n_used,
            f"{arch}.expert_feed_forward_length": ff_exp, **(extra or {})}
    for k, v, t in extras:
        v = real.get(k, v)
        md.items.append((k, v, (VT.ARRAY, VT.BOOL) if isinstance(v, list) else VT(t)))
    ts = []
    for pattern, ne in patterns.items():
        if tied and pattern == "output.weight":
            continue
        names = [pattern.format(i=i) for i in range(n_layers)] if "{i}" in pattern else [pattern]
        ts += [Tensor(n, shape(n, ne)) for n in names]
    return SynthModel(f"real-{arch}", arch, source, n_vocab, n_layers, tuple(md.items), tuple(ts), tied_embeddings=tied)


# arch -> (catalog entry the dimensions come from, resized() arguments)
REAL = {
    "qwen2": ("qwen2.5-7b-instruct", dict(n_embd=3584, n_head=28, n_kv=4, hd=128, n_ff=18944, n_vocab=152064,
                                          tied=False, ctx=32768, rope_base=1e6)),
    "mistral3": ("ministral-3-8b-instruct-2512", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=14336,
                                                      n_vocab=131072, tied=False, ctx=262144, rope_base=1e6)),
    "granite": ("granite-3.3-8b-instruct", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=12800, n_vocab=49159,
                                                tied=True, ctx=131072)),
    "olmo2": ("olmo-2-1124-7b", dict(n_embd=4096, n_head=32, n_kv=32, hd=128, n_ff=11008, n_vocab=100352,
                                     tied=False, ctx=4096)),
    "glm4": ("glm-4-9b-0414", dict(n_embd=4096, n_head=32, n_kv=2, hd=128, n_ff=13696, n_vocab=151552, tied=False,
                                   ctx=32768)),
    "cohere2": ("c4ai-command-r7b-12-2024", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=14336, n_vocab=256000,
                                                 tied=True, ctx=131072, n_layers=4)),
    "smollm3": ("smollm3-3b", dict(n_embd=2048, n_head=16, n_kv=4, hd=128, n_ff=11008, n_vocab=128256, tied=True,
                                   ctx=65536, n_layers=4)),
    "starcoder2": ("starcoder2-3b", dict(n_embd=3072, n_head=24, n_kv=2, hd=128, n_ff=12288, n_vocab=49152,
                                         tied=True, ctx=16384)),
    "phi2": ("phi-2", dict(n_embd=2560, n_head=32, n_kv=32, hd=80, n_ff=10240, n_vocab=51200, tied=False, ctx=2048)),
    "internlm2": ("internlm2.5-7b-chat", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=14336, n_vocab=92544,
                                              tied=False, ctx=32768)),
    "apertus": ("apertus-8b-instruct-2509", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=21504, n_vocab=131072,
                                                 tied=False, ctx=65536)),
    "ernie4_5": ("ernie-4.5-0.3b-pt", dict(n_embd=1024, n_head=16, n_kv=2, hd=128, n_ff=3072, n_vocab=103424,
                                           tied=True, ctx=131072)),
    "command-r": ("c4ai-command-r-v01", dict(n_embd=8192, n_head=64, n_kv=64, hd=128, n_ff=22528, n_vocab=256000,
                                             tied=True, ctx=131072)),
    "stablelm": ("stablelm-2-1.6b", dict(n_embd=2048, n_head=32, n_kv=32, hd=64, n_ff=5632, n_vocab=100352,
                                         tied=False, ctx=4096)),
    "gemma": ("gemma-7b", dict(n_embd=3072, n_head=16, n_kv=16, hd=256, n_ff=24576, n_vocab=256000, tied=True,
                               ctx=8192)),
    "orion": ("orion-14b-chat", dict(n_embd=5120, n_head=40, n_kv=40, hd=128, n_ff=15360, n_vocab=84608, tied=False,
                                     ctx=4096)),
    "minicpm": ("minicpm-2b-sft-bf16", dict(n_embd=2304, n_head=36, n_kv=36, hd=64, n_ff=5760, n_vocab=122753,
                                            tied=True, ctx=4096)),
    "qwen2moe": ("qwen1.5-moe-a2.7b-chat", dict(n_embd=2048, n_head=16, n_kv=16, hd=128, n_ff=5632, n_vocab=151936,
                                                tied=False, ctx=32768, n_exp=60, n_used=4, ff_exp=1408,
                                                ff_shexp=5632)),
    "granitemoe": ("granite-3.1-3b-a800m-instruct", dict(n_embd=1536, n_head=24, n_kv=8, hd=64, n_ff=512,
                                                         n_vocab=49155, tied=True, ctx=131072, n_exp=40, n_used=8,
                                                         ff_exp=512)),
    "exaone": ("exaone-3.5-7.8b-instruct", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=14336, n_vocab=102400,
                                                tied=False, ctx=32768, rope_base=1e6)),
    "baichuan": ("baichuan2-7b-chat", dict(n_embd=4096, n_head=32, n_kv=32, hd=128, n_ff=11008, n_vocab=125696,
                                           tied=False, ctx=4096)),
    "chatglm": ("chatglm3-6b", dict(n_embd=4096, n_head=32, n_kv=2, hd=128, n_ff=13696, n_vocab=65024, tied=False,
                                    ctx=8192)),
    "qwen2vl": ("qwen2-vl-7b-instruct", dict(n_embd=3584, n_head=28, n_kv=4, hd=128, n_ff=18944, n_vocab=152064,
                                             tied=False, ctx=32768, rope_base=1e6)),
    "qwen3vl": ("qwen3-vl-8b-instruct", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=12288, n_vocab=151936,
                                             tied=False, ctx=262144, rope_base=5e6)),
    "qwen3vlmoe": ("qwen3-vl-30b-a3b-instruct", dict(n_embd=2048, n_head=32, n_kv=4, hd=128, n_ff=6144,
                                                     n_vocab=151936, tied=False, ctx=262144, rope_base=5e6,
                                                     n_exp=128, n_used=8, ff_exp=768)),
    "phimoe": ("phi-3.5-moe-instruct", dict(n_embd=4096, n_head=32, n_kv=8, hd=128, n_ff=6400, n_vocab=32064,
                                            tied=False, ctx=131072, n_exp=16, n_used=2, ff_exp=6400)),
    "deepseek": ("deepseek-moe-16b-base", dict(n_embd=2048, n_head=16, n_kv=16, hd=128, n_ff=10944, n_vocab=102400,
                                               tied=False, ctx=4096, n_exp=64, n_used=6, ff_exp=1408, ff_shexp=2816,
                                               extra={"deepseek.expert_shared_count": 2})),
    "bailingmoe2": ("ling-mini-2.0", dict(n_embd=2048, n_head=16, n_kv=4, hd=128, n_ff=5120, n_vocab=157184,
                                          tied=False, ctx=32768, n_exp=256, n_used=8, ff_exp=512, ff_shexp=512)),
    "gpt2": ("gpt2", dict(n_embd=768, n_head=12, n_kv=12, hd=64, n_ff=3072, n_vocab=50257, tied=True, ctx=1024)),
    "bert": ("bge-base-en-v1.5", dict(n_embd=768, n_head=12, n_kv=12, hd=64, n_ff=3072, n_vocab=30522, tied=True,
                                      ctx=512)),
    "nomic-bert": ("nomic-embed-text-v1.5", dict(n_embd=768, n_head=12, n_kv=12, hd=64, n_ff=3072, n_vocab=30528,
                                                 tied=True, ctx=2048, rope_base=1000.0)),
    "gemma-embedding": ("embeddinggemma-300m", dict(n_embd=768, n_head=3, n_kv=1, hd=256, n_ff=1152, n_vocab=262144,
                                                    tied=True, ctx=2048, rope_base=1e6, n_layers=6,
                                                    extra={"gemma-embedding.attention.sliding_window": 512})),
}


def real_model(arch: str) -> SynthModel:
    entry, kw = REAL[arch]
    return resized(arch, f"{entry} (catalog config.json dims) on the sweep's tensor set", **kw)


@needs_llama_cpp
@pytest.mark.parametrize("arch", sorted(REAL))
def test_published_shapes_equal_llama_cpp(arch):
    path = synth.synth_path(real_model(arch), "q4_0")
    spec = read_gguf_spec(path)
    assert spec.architecture == arch
    rows = h.compare(arch, spec, GRID, g.llamacpp_run.measure_many(path, GRID))
    assert len(rows) >= len(GRID) - 1
    h.assert_compute(arch, rows)
