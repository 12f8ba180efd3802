"""The Pixtral tower's attn_v in the projector weights of library GGUFs quantized by Ollama's Go quantizer.

server/quantization.go (v0.7.0-v0.14.2) newType: `quantize && (!strings.Contains(name, "v.") ||
strings.Contains(name, "_v."))`, so v.blk.N.attn_v.weight is quantized; getTensorNewType gives attn_v.weight Q6_K
where useMoreBits(qs.iAttnV, qs.nAttnV) on a Q4_K_M file (iLayer < n/8 || iLayer >= 7n/8 || (iLayer - n/8) % 3 == 2),
else the file type's Q4_K, with iAttnV advancing in the file's order (the text blocks, then v.blk.0, v.blk.1,
v.blk.10, ..., v.blk.19, v.blk.2, v.blk.20, ...). v0.14.3 (01cf7445f) skips every name with the "v." prefix.
The expected bytes below are worked by hand from that rule; the F16 starting point is the 769.3 MiB
projector.weights Ollama printed for mistral-small3.1's identical Pixtral encoder (llama.cpp's quantizer of
v0.6.x, whose "v." rule left attn_v F16: ollama/ollama#10417), 806,711,296 B.
"""

from __future__ import annotations

from oomkit.model.resolve import resolve

Q6_K, Q4_K = 1024 * 1024 // 256 * 210, 1024 * 1024 // 256 * 144  # one 1024 x 1024 attn_v: 860,160 / 589,824 B
F16 = 1024 * 1024 * 2
PRINTED_F16 = 806711296  # mistral-small3.1's Pixtral v.* tensors, attn_v in F16 (769.3 MiB)


def _q6(n_text: int, n_vision: int = 24) -> int:
    """How many of the 24 tower attn_v get Q6_K: written out per file position for each text depth below."""
    n = n_text + n_vision
    return sum(1 for i in range(n_text, n) if i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2)


def test_q6_counts_by_hand():
    # ministral-3:14b / mistral-small3.2: 40 + 24 = 64 attn_v; n/8 = 8, 7n/8 = 56: positions 56-63 (8) and
    # 40, 43, 46, 49, 52, 55 ((i - 8) % 3 == 2) -> 14 Q6_K, 10 Q4_K
    assert _q6(40) == 14
    # ministral-3:3b: 26 + 24 = 50; n/8 = 6, 7n/8 = 43: 43-49 (7) and 26, 29, 32, 35, 38, 41 -> 13
    assert _q6(26) == 13
    # ministral-3:8b: 34 + 24 = 58; n/8 = 7, 7n/8 = 50: 50-57 (8) and 36, 39, 42, 45, 48 -> 13
    assert _q6(34) == 13


def test_projector_weights_follow_go_quantizer():
    from oomkit.engines.ollama.projector import projector

    for tag, q6 in (("ministral-3:14b", 14), ("mistral-small3.2:24b", 14), ("ministral-3:8b", 13),
                    ("ministral-3:3b", 13)):
        want = PRINTED_F16 - 24 * F16 + q6 * Q6_K + (24 - q6) * Q4_K
        p = projector(resolve(tag))
        assert p is not None and p.weights == want, (tag, p and p.weights, want)
    # 14b: 806,711,296 -> 774,320,128 B, 32,391,168 B (30.9 MiB) less
    assert PRINTED_F16 - projector(resolve("ministral-3:14b")).weights == 32391168


def test_spring_2025_tags_keep_attn_v_f16():
    """mistral-small3.1 was quantized by v0.6.x's llama.cpp (weights.py _quantized_in_spring_2025): its printed
    769.3 MiB holds every attn_v in F16."""
    from oomkit.engines.ollama.projector import projector

    assert projector(resolve("mistral-small3.1:24b")).weights == PRINTED_F16


def _text_q6(n_text: int, n_vision: int) -> list[int]:
    n = n_text + n_vision  # quantize(): qs.nAttnV counts the tower's attn_v too; the text blocks come first
    return [i for i in range(n_text) if i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2]


def test_text_attn_v_counted_with_the_tower():
    """The text blocks' attn_v under the same counter: nAttnV = text + tower. ministral-3:14b: 64 V tensors, Q6_K
    in blocks 0-7 and 10, 13, ..., 37 (18; the text alone, 40, gives 20: 0-4, 7, 10, ..., 34, 35-39); 3b: 50,
    blocks 0-5 and 8, 11, ..., 23 (12; alone 13). Qwen2.5-VL 7B: 28 + 32, blocks 0-6, 9, ..., 27."""
    from oomkit.engines.ollama.weights import ollama_gguf

    assert _text_q6(40, 24) == [*range(8), 10, 13, 16, 19, 22, 25, 28, 31, 34, 37]
    assert _text_q6(26, 24) == [*range(6), 8, 11, 14, 17, 20, 23]
    assert _text_q6(28, 32) == [*range(7), 9, 12, 15, 18, 21, 24, 27]
    for tag, n_text, n_vision in (("ministral-3:14b", 40, 24), ("mistral-small3.2:24b", 40, 24),
                                  ("ministral-3:3b", 26, 24), ("qwen2.5vl:7b", 28, 32)):
        g = ollama_gguf(resolve(tag))
        six = sorted(t.layer for t in g.weights.tensors
                     if t.name.startswith("blk.") and t.name.endswith("attn_v.weight") and t.dtype.lower() == "q6_k")
        assert six == _text_q6(n_text, n_vision), tag
    # mistral-small3.1 (v0.6.x's llama.cpp quantizer): every attn_v F16 (weights.py _spring_2025_quantizer)
    g = ollama_gguf(resolve("mistral-small3.1:24b"))
    assert {t.dtype.lower() for t in g.weights.tensors if t.name.endswith("attn_v.weight")} == {"f16"}


def test_qwen25vl_tower_attn_v_quantized():
    """qwen2.5vl (first supported by v0.7.0, so quantized by the Go quantizer): convert_qwen25vl.go splits each of
    the 32 blocks' attn.qkv into v.blk.N.attn_q / attn_k / attn_v (1280 x 1280: 6,400 K-blocks, Q6_K 1,344,000 B,
    Q4_K 921,600 B, F16 3,276,800 B). 7b: 28 + 32 V tensors, n/8 = 7, 7n/8 = 52: file positions 52-59 and 30,
    33, ..., 51 -> 16 Q6_K, 16 Q4_K = 36,249,600 B. 32b: 64 + 32, n/8 = 12, 7n/8 = 84: 84-95 and 65, 68, ..., 83
    -> 19 Q6_K, 13 Q4_K = 37,516,800 B. The rest of the tower stays as before (its whole-F16 figure)."""
    from oomkit.engines.ollama.projector import projector

    blocks = 1280 * 1280 // 256
    for tag, q6 in (("qwen2.5vl:7b", 16), ("qwen2.5vl:32b", 19)):
        p = projector(resolve(tag))
        assert f"({(q6 * 210 + (32 - q6) * 144) * blocks:,} B)" in p.source, tag
        tower = next(t for t in resolve(tag).towers if t.kind == "vision")
        assert p.weights == tower.nbytes(2) - 32 * 1280 * 1280 * 2 + (q6 * 210 + (32 - q6) * 144) * blocks, tag
