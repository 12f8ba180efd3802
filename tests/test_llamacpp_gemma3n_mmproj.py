"""Gemma 3n's --mmproj (engines/llamacpp/projector.py): the MobileNetV5 vision tower (projector type gemma3nv) and the
audio tower the same file carries (gemma3na), held to llama.cpp's own mtmd_get_memory_usage of the binding's libmtmd
(llama-cpp-python 0.3.36) on this CPU, with flash attention on and off.

The file is the real tower as convert_hf_to_gguf.py --mmproj writes it (conversion/gemma.py Gemma3nVisionAudioModel)
from google/gemma-3n-E4B-it (E2B has the same vision tower and the same 2048 text width): timm's
mobilenetv5_300m_enc block list (timm/models/mobilenetv5.py _gen_mobilenet_v5) with its real widths, all zeros. The
MobileNetV5 graph (tools/mtmd/models/mobilenetv5.cpp) has no layers to cut down to a stand-in: its compute buffer
depends on every stage. The audio conformer is present only as a stand-in of a few a.* tensors, since clip_init
(tools/mtmd/clip.cpp) skips the audio encoder of a gemma3nv file: it neither loads those tensors nor reserves an
audio compute buffer."""

from pathlib import Path

import pytest

from oomkit.engines.llamacpp.projector import clip_compute_bytes, clip_weight_bytes, projector_memory
from oomkit.model.gguf_header import read_gguf_header
from tests.test_llamacpp_fit import mtmd_memory_usage
from tests.test_llamacpp_mmproj_towers import _write

MiB = 1 << 20

# timm mobilenetv5_300m_enc (the encoder Gemma 3n's vision_config names): stem 64, then four stages of
# (kind, dw_start kernel, dw_mid kernel, expansion, out channels) / ("mqa", heads, key dim, kv stride, out channels)
_S2 = [("uir", 5, 5, 6, 640)] + [("uir", 5, 0, 4, 640)] * 7 + [("uir", 0, 0, 1, 640)] + \
      [("mqa", 12, 64, 2, 640), ("uir", 0, 0, 2, 640)] * 13
_S3 = [("uir", 5, 5, 6, 1280)] + [("mqa", 16, 96, 1, 1280), ("uir", 0, 0, 2, 1280)] * 19
MOBILENETV5_300M = [
    [("er", 3, 0, 4, 128)] * 3,
    [("uir", 3, 5, 6, 256), ("uir", 5, 0, 4, 256), ("uir", 3, 0, 4, 256), ("uir", 5, 0, 4, 256),
     ("uir", 3, 0, 4, 256)],
    _S2,
    _S3,
]


def mobilenetv5_tensors(stages=MOBILENETV5_300M, stem: int = 64, out: int = 2048, text: int = 2048):
    """The tensors Gemma3nVisionAudioModel writes for the vision tower, numpy order (the reverse of ggml's ne):
    convolutions [out, in / groups, k, k] in F16 except the stem (F32), RMS norm weights and layer scales F32
    (layer_scale.gamma unsqueezed to [1, C, 1, 1]); the MSFA over the last two stages' outputs; the embedder
    (mm.embedding, hard / soft norms, the E -> text projection)."""
    ts = [("v.conv_stem.conv.weight", (stem, 3, 3, 3), True), ("v.conv_stem.conv.bias", (1, stem, 1, 1), True),
          ("v.conv_stem.bn.weight", (stem,), True)]
    c, ends = stem, []
    for s, blocks in enumerate(stages):
        for i, blk in enumerate(blocks):
            b = f"v.blk.{s}.{i}"
            if blk[0] == "er":
                _, k, _, e, o = blk
                mid = c * e
                ts += [(f"{b}.conv_exp.weight", (mid, c, k, k), False), (f"{b}.bn1.weight", (mid,), True),
                       (f"{b}.conv_pwl.weight", (o, mid, 1, 1), False), (f"{b}.bn2.weight", (o,), True)]
            elif blk[0] == "uir":
                _, a, k, e, o = blk
                mid = c * e
                if a:
                    ts += [(f"{b}.dw_start.conv.weight", (c, 1, a, a), False), (f"{b}.dw_start.bn.weight", (c,), True)]
                ts += [(f"{b}.pw_exp.conv.weight", (mid, c, 1, 1), False), (f"{b}.pw_exp.bn.weight", (mid,), True)]
                if k:
                    ts += [(f"{b}.dw_mid.conv.weight", (mid, 1, k, k), False), (f"{b}.dw_mid.bn.weight", (mid,), True)]
                ts += [(f"{b}.pw_proj.conv.weight", (o, mid, 1, 1), False), (f"{b}.pw_proj.bn.weight", (o,), True),
                       (f"{b}.layer_scale.gamma", (1, o, 1, 1), True)]
            else:
                _, h, d, kv, o = blk
                ts += [(f"{b}.norm.weight", (c,), True), (f"{b}.attn.query.proj.weight", (h * d, c, 1, 1), False)]
                for n in ("key", "value"):
                    if kv > 1:
                        ts += [(f"{b}.attn.{n}.down_conv.weight", (c, 1, 3, 3), False),
                               (f"{b}.attn.{n}.norm.weight", (c,), True)]
                    ts += [(f"{b}.attn.{n}.proj.weight", (d, c, 1, 1), False)]
                ts += [(f"{b}.attn.output.proj.weight", (o, h * d, 1, 1), False),
                       (f"{b}.layer_scale.gamma", (1, o, 1, 1), True)]
            c = blk[-1]
        ends.append(c)
    fused = sum(ends[-2:])
    ts += [("v.msfa.ffn.pw_exp.conv.weight", (2 * fused, fused, 1, 1), False),
           ("v.msfa.ffn.pw_exp.bn.weight", (2 * fused,), True),
           ("v.msfa.ffn.pw_proj.conv.weight", (out, 2 * fused, 1, 1), False),
           ("v.msfa.ffn.pw_proj.bn.weight", (out,), True), ("v.msfa.norm.weight", (out,), True),
           ("mm.embedding.weight", (128, out), False), ("mm.hard_emb_norm.weight", (out,), True),
           ("mm.soft_emb_norm.weight", (out,), True), ("mm.input_projection.weight", (text, out), False)]
    return ts


# a stand-in for the audio conformer's tensors (the real one is about 0.7B parameters): clip_init never loads them
_AUDIO = [("a.conv1d.0.weight", (128, 1, 3, 3), True), ("a.input_projection.weight", (1536, 1024), False),
          ("a.blk.0.attn_q.weight", (1536, 1536), False), ("mm.a.input_projection.weight", (2048, 1536), False)]


def write_gemma3n_mmproj(path: Path, stages=MOBILENETV5_300M, image: int = 768, text: int = 2048,
                         audio: bool = True) -> Path:
    """Gemma 3n's mmproj: gemma3nv with the keys Gemma3nVisionAudioModel sets (image_size from the preprocessor,
    patch_size = image / 256, the fake block_count 128, intermediate 4 x 2048, 8 heads, mean 0 and std 1) and,
    where audio, the gemma3na keys and the audio stand-in."""
    keys = {"clip.has_vision_encoder": True, "clip.vision.projector_type": "gemma3nv",
            "clip.vision.image_size": image, "clip.vision.patch_size": image // 256,
            "clip.vision.embedding_length": 2048, "clip.vision.feed_forward_length": 8192,
            "clip.vision.projection_dim": text, "clip.vision.attention.head_count": 8, "clip.vision.block_count": 128,
            "clip.vision.attention.layer_norm_epsilon": 1e-6, "clip.vision.image_mean": [0.0, 0.0, 0.0],
            "clip.vision.image_std": [1.0, 1.0, 1.0], "clip.use_gelu": True}
    tensors = mobilenetv5_tensors(stages, text=text)
    if audio:
        keys.update({"clip.has_audio_encoder": True, "clip.audio.projector_type": "gemma3na",
                     "clip.audio.num_mel_bins": 128, "clip.audio.embedding_length": 1536,
                     "clip.audio.feed_forward_length": 6144, "clip.audio.projection_dim": text,
                     "clip.audio.attention.head_count": 8, "clip.audio.block_count": 12,
                     "clip.audio.attention.layer_norm_epsilon": 1e-5})
        tensors += _AUDIO
    return _write(path, keys, tensors)


def _measure(path: Path) -> dict:
    """mtmd_get_memory_usage with -fa on and off (the weight buffer plus the compute buffer clip reserved), and
    oomkit's weight and compute figures for the same file (-fa on and off)."""
    header = read_gguf_header(str(path))
    meta, shapes = dict(header.metadata), {t.name: t.shape for t in header.tensors}
    return {"usage": {fa: mtmd_memory_usage(path, fa)[0] for fa in (1, 0)}, "weights": clip_weight_bytes(header),
            "compute": {fa: clip_compute_bytes(meta, bool(fa), shapes) for fa in (1, 0)},
            "data_size": header.data_size}


def test_gemma3n_mmproj_is_mtmd_get_memory_usage(tmp_path):
    """The released tower: 564.36 MiB of weights clip loads (the v.* tensors and the embedder's projection and
    soft norm; not mm.embedding, mm.hard_emb_norm or the audio encoder's tensors, which clip_init skips) and a
    556.90 MiB compute buffer, with -fa on and off: the engine's figure byte for byte. The file is about 578 MiB of
    zeros; writing and measuring it takes a few seconds."""
    mm = write_gemma3n_mmproj(tmp_path / "mmproj.gguf")
    try:
        got = _measure(mm)
        for fa in (1, 0):
            usage = got["usage"][fa]
            assert round((usage - got["weights"]) / MiB, 2) == 556.90, fa
            assert got["weights"] + got["compute"][fa] == usage, fa
        assert got["weights"] == 591774720 < got["data_size"]  # the audio stand-in and mm.embedding are left out
    finally:
        mm.unlink()


def test_the_fit_margin_holds_gemma3n(tmp_path):
    """PR #21489: llama-server adds mtmd_get_memory_usage to the fit target of the projector's device; oomkit's margin
    for Gemma 3n's mmproj is the engine's figure, -fa on and off, and projector_memory names the compute buffer."""
    from oomkit.engines.llamacpp.fit import params_fit
    from oomkit.engines.llamacpp.settings import LlamaCppSettings
    from tests.test_llamacpp_fit import LLAMA8, gpu, spec_of

    mm = write_gemma3n_mmproj(tmp_path / "mmproj.gguf")
    try:
        for fa, ggml_fa in (("on", 1), ("off", 0)):
            s = LlamaCppSettings(n_ctx=8192, mmproj=str(mm), flash_attn=fa)
            margin = params_fit(spec_of(LLAMA8), (gpu(0, 24000),), s).margins[0] - 1024 * MiB
            (usage,) = mtmd_memory_usage(mm, ggml_fa)
            assert margin == usage, fa
            pm = projector_memory(spec_of(LLAMA8), s)
            assert pm.compute is not None and "gemma3nv" in pm.source and pm.total == usage
    finally:
        mm.unlink()


_S = MOBILENETV5_300M


@pytest.mark.parametrize("shape,mib", [
    ({"image": 512}, 248.28),  # the same tower warmed up at 512 px (ceil halvings, SAME pads)
    ({"image": 1024}, 988.53),
    ({"stages": [_S[0], [("uir", 3, 5, 2, 256)] + _S[1][1:], _S[2], _S[3]]}, 280.18),  # stage 2 opens the peak
    ({"stages": [_S[0], [("uir", 3, 3, 6, 256)] + _S[1][1:], _S[2], _S[3]]}, 338.63),  # a 3 x 3 dw_mid
    ({"audio": False}, 556.90),  # a vision-only file
])
def test_mobilenetv5_off_the_released_shape(tmp_path, shape, mib):
    """Away from the released tower the model still follows the engine: other warmup sizes, a stage 1 that expands
    less (the peak moves to stage 2's opening), a smaller middle kernel."""
    mm = write_gemma3n_mmproj(tmp_path / "mmproj.gguf", **shape)
    try:
        got = _measure(mm)
        for fa in (1, 0):
            assert round((got["usage"][fa] - got["weights"]) / MiB, 2) == mib, fa
            assert got["weights"] + got["compute"][fa] == got["usage"][fa], fa
    finally:
        mm.unlink()
