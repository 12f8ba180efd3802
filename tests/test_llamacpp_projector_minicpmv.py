"""The --mmproj weights and compute buffer (engines/llamacpp/projector.py) of MiniCPM-V's resampler towers (projector
type "resampler", clip.minicpmv_version 2 / 3 / 4 / 5 / 6 and MiniCPM-o 4.5's 100045) and moondream2's SigLIP with
its wide llava MLP (projector type "mlp"), held to the binding's libmtmd on this CPU (llama-cpp-python 0.3.36):
mtmd_get_memory_usage through the harness of test_llamacpp_fit.py, and the lines clip_init prints while it loads
("load_hparams: model size", "reserve_compute_meta: CPU compute buffer size"). Each file is a small real-shaped
mmproj, the layout the converters write: the released widths, heads, FFN, patch and projector with two layers (the
weights are the file's tensors, whatever their count). The layer count's parity moves MiniCPM-V's flash-on peak
(projector._minicpmv), so its files take three layers, odd as the released 27.

Measured once at full depth on this CPU (27 SigLIP layers, 455 tensors for MiniCPM-V as ggml-org/llama.cpp#9165's
2.6 file lists, 441 for moondream2; about 1 GB each, too large to write in the suite): "model size" printed
1006.78 MiB for MiniCPM-V 2.6 (T 3584), 1055.12 for MiniCPM-V 4.5 (T 4096), 840.11 for moondream2, each
clip_weight_bytes to the printed hundredth; compute 55.81 / 84.31 MiB (-fa on / off), 62.81 / 84.31 and
30.83 / 46.89, as at three layers."""

import re
from pathlib import Path

import pytest

from oomkit.engines.llamacpp.projector import clip_compute_bytes, clip_weight_bytes
from oomkit.model.gguf_header import read_gguf_header
from tests.test_llamacpp_fit import mtmd_memory_usage, run_libmtmd
from tests.test_llamacpp_mmproj_towers import _vision_keys, _write, resampler_tensors

MiB = 1 << 20

# clip_init (tools/mtmd/clip.cpp) with the default logger, which mtmd_get_memory_usage silences: the lines clip
# prints while it loads the file and reserves the warmup graph (clip.h clip_context_params of the binding's build)
_CLIP_LOG = r"""
import ctypes, os, sys
import llama_cpp
lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libmtmd.so"))
class P(ctypes.Structure):
    _fields_ = [("use_gpu", ctypes.c_bool), ("device", ctypes.c_void_p), ("flash_attn_type", ctypes.c_int),
                ("image_min_tokens", ctypes.c_int), ("image_max_tokens", ctypes.c_int), ("warmup", ctypes.c_bool),
                ("cb_eval", ctypes.c_void_p), ("cb_eval_user_data", ctypes.c_void_p), ("no_alloc", ctypes.c_bool),
                ("progress_callback", ctypes.c_void_p), ("progress_callback_user_data", ctypes.c_void_p)]
class R(ctypes.Structure):
    _fields_ = [("v", ctypes.c_void_p), ("a", ctypes.c_void_p), ("g", ctypes.c_void_p)]
init = lib._Z9clip_initPKc19clip_context_params
init.argtypes, init.restype = [ctypes.c_char_p, P], R
r = init(sys.argv[1].encode(), P(False, None, int(sys.argv[2]), -1, -1, True, None, None, False, None, None))
assert r.v
"""


def clip_log(path: Path, flash_attn: int) -> tuple[float, float]:
    """("model size" MiB, CPU "compute buffer size" MiB) as clip_init prints them for the mmproj at path."""
    r = run_libmtmd(_CLIP_LOG, "_Z9clip_initPKc19clip_context_params", str(path), str(flash_attn))
    size = re.findall(r"load_hparams: model size:\s*([0-9.]+) MiB", r.stderr)
    compute = re.findall(r"CPU compute buffer size =\s*([0-9.]+) MiB", r.stderr)
    assert size and compute, r.stderr[-2000:]
    return float(size[-1]), float(compute[-1])


def _siglip(e: int, f: int, n_layer: int, pos: int, cls: bool = False, pre_ln: bool = False,
            post_ln: bool = True, patch: int = 14):
    """SigLIP as the mmproj converters write it: the patch conv with its bias, a learned position table, n_layer
    pre-norm layers with separate q/k/v, LayerNorms and a plain up/down FFN, the post-layernorm."""
    ts = [("v.patch_embd.weight", (e, 3, patch, patch), False), ("v.patch_embd.bias", (e,), True),
          ("v.position_embd.weight", (pos, e), True)]
    ts += [("v.class_embd", (e,), True)] if cls else []
    ts += [("v.pre_ln.weight", (e,), True), ("v.pre_ln.bias", (e,), True)] if pre_ln else []
    for i in range(n_layer):
        b = f"v.blk.{i}"
        for n in ("attn_q", "attn_k", "attn_v", "attn_out"):
            ts += [(f"{b}.{n}.weight", (e, e), False), (f"{b}.{n}.bias", (e,), True)]
        for n in ("ln1", "ln2"):
            ts += [(f"{b}.{n}.weight", (e,), True), (f"{b}.{n}.bias", (e,), True)]
        ts += [(f"{b}.ffn_up.weight", (f, e), False), (f"{b}.ffn_up.bias", (f,), True),
               (f"{b}.ffn_down.weight", (e, f), False), (f"{b}.ffn_down.bias", (e,), True)]
    ts += [("v.post_ln.weight", (e,), True), ("v.post_ln.bias", (e,), True)] if post_ln else []
    return ts


def write_minicpmv(path: Path, version: int = 3, t: int = 3584, q: int = 64, e: int = 1152, f: int = 4304,
                   h: int = 16, n_layer: int = 3, query_num: bool = True, image: int = 448) -> Path:
    """MiniCPM-V as tools/mtmd/legacy-models/minicpmv-convert-image-encoder-to-gguf.py writes it (455 tensors at 27
    layers, as the 2.6 file of ggml-org/llama.cpp#9165 lists): SigLIP-400M at 448 px with the 70 x 70 position
    table, the resampler (pos_embed_k, query, proj, kv, q/k/v/out attention, ln_q / ln_kv / ln_post),
    clip.minicpmv_version (i32) and, unless query_num is False (files converted before PR #14750),
    clip.minicpmv_query_num."""
    ts = _siglip(e, f, n_layer, 4900)
    ts += resampler_tensors(e, t, q)
    extra = {"clip.minicpmv_version": version, **({"clip.minicpmv_query_num": q} if query_num else {})}
    keys = _vision_keys("resampler", image, 14, e, f, h, 0, **extra)
    keys["clip.vision.block_count"] = n_layer
    return _write(path, keys, ts)


def write_moondream2_mmproj(path: Path, e: int = 1152, f: int = 4304, h: int = 16, m: int = 8192, t: int = 2048,
                            image: int = 378, n_layer: int = 2, cls: bool = False, pre_ln: bool = False,
                            post_ln: bool = True) -> Path:
    """moondream2's mmproj (vikhyatk/moondream2 moondream2-mmproj-f16.gguf; the llava projector, "mlp"): SigLIP
    so400m at 378 px, patch 14 (27 x 27 patches, no class token, no pre-layernorm, a post-layernorm), GELU, then the
    llava MLP whose hidden width is not the output's: mm.0 E -> M (8192), mm.2 M -> T (Phi-1.5's 2048)."""
    p = (image // 14) ** 2
    ts = _siglip(e, f, n_layer, p + cls, cls=cls, pre_ln=pre_ln, post_ln=post_ln)
    ts += [("mm.0.weight", (m, e), False), ("mm.0.bias", (m,), True),
           ("mm.2.weight", (t, m), False), ("mm.2.bias", (t,), True)]
    keys = _vision_keys("mlp", image, 14, e, f, h, t)
    keys["clip.vision.block_count"] = n_layer
    return _write(path, keys, ts)


def predicted(path: Path, flash_attn: bool) -> int | None:
    header = read_gguf_header(str(path))
    return clip_compute_bytes(dict(header.metadata), flash_attn, {t.name: t.shape for t in header.tensors})


def weights(path: Path) -> int:
    return clip_weight_bytes(read_gguf_header(str(path)))


# (version, T, Q): the released towers. 2: MiniCPM-Llama3-V 2.5 (Llama 3 8B, 96 queries); 3: MiniCPM-V 2.6 (Qwen2
# 7B); 4: MiniCPM-o 2.6; 5: MiniCPM-V 4.0 (MiniCPM4 3B); 6: MiniCPM-V 4.5 (Qwen3 8B); 100045: MiniCPM-o 4.5
MINICPMV = [(2, 4096, 96), (3, 3584, 64), (4, 3584, 64), (5, 2560, 64), (6, 4096, 64), (100045, 4096, 64)]
# the CPU compute buffer clip_init printed for each at an odd layer count (MiB, flash attention on / off)
MINICPMV_PRINTED = {2: (64.31, 93.31), 3: (55.81, 84.31), 4: (55.81, 84.31), 5: (41.81, 84.31), 6: (62.81, 84.31),
                    100045: (62.81, 84.31)}


@pytest.mark.parametrize("version,t,q", MINICPMV)
def test_minicpmv_weights_and_compute_are_what_clip_prints(tmp_path, version, t, q):
    """Weights: clip_weight_bytes is the "model size" clip prints; compute: the predicted buffer is the printed one
    and, with the weights, mtmd_get_memory_usage byte for byte, -fa on and off."""
    mm = write_minicpmv(tmp_path / "mmproj.gguf", version, t, q)
    for fa, mib in zip((1, 0), MINICPMV_PRINTED[version], strict=True):
        size, compute = clip_log(mm, fa)
        assert size == round(weights(mm) / MiB, 2), (version, fa)
        assert compute == mib == round(predicted(mm, bool(fa)) / MiB, 2), (version, fa)
        (usage,) = mtmd_memory_usage(mm, fa)
        assert usage == weights(mm) + predicted(mm, bool(fa)), (version, fa)


@pytest.mark.parametrize("n_layer,t,on_mib", [
    (1, 3584, 55.81), (2, 3584, 53.31), (4, 3584, 53.31), (5, 3584, 55.81),  # MiniCPM-V 2.6's widths
    (2, 4096, 59.31), (2, 2560, 41.31),
    (3, 2304, 33.81), (2, 2304, 32.62),  # T = 2E: one row of E more at an odd count, over the ViT's FFN
    (3, 1536, 32.62),  # the ViT's FFN at either parity
])
def test_minicpmv_layer_parity(tmp_path, n_layer, t, on_mib):
    """Before: the flash-on peak measured at two layers served every count; the released 27 print more (MiniCPM-V
    2.6 53.31 MiB predicted, 55.81 printed: -4.5%; 4.5 59.31 / 62.81: -5.6%)."""
    mm = write_minicpmv(tmp_path / "mmproj.gguf", 3, t, n_layer=n_layer)
    assert clip_log(mm, 1)[1] == on_mib
    (usage,) = mtmd_memory_usage(mm, 1)
    assert usage == weights(mm) + predicted(mm, True)


@pytest.mark.parametrize("version,q", [(2, 96), (3, 64), (6, 64)])
def test_minicpmv_files_without_query_num(tmp_path, version, q):
    """Files converted before PR #14750 carry no clip.minicpmv_query_num: load_hparams falls back to 96 queries for
    version 2 and 64 for 3 to 6, the rows of resampler.query oomkit reads the width from."""
    mm = write_minicpmv(tmp_path / "mmproj.gguf", version, 4096, q, query_num=False)
    for fa in (1, 0):
        (usage,) = mtmd_memory_usage(mm, fa)
        assert usage == weights(mm) + predicted(mm, bool(fa)), (version, fa)


# (shape, MiB printed with flash attention on, off): moondream2 and the llava graph's placements around it
MOONDREAM2 = [
    ({}, 30.83, 46.89),  # moondream2: mm.0's row of 8192 over two rows of E; mm.2's 2048 in the freed rows
    ({"t": 4096}, 42.22, 46.89),  # mm.2's row no longer fits in the two rows of E
    ({"m": 4096}, 23.22, 46.89),  # the ViT's FFN: a row of F over three rows of E (no class token)
    ({"m": 16384}, 53.61, 53.61),
    ({"post_ln": False}, 33.32, 46.89),  # one row of E held: mm.2's row of 2048 goes above mm.0's
    ({"post_ln": False, "t": 1024}, 27.63, 46.89),
    ({"cls": True, "m": 2048}, 26.45, 50.20),  # the class token's concat: a row of E more in the FFN and attention
    ({"cls": True, "pre_ln": True, "m": 2048}, 26.45, 50.20),
    ({"f": 8000, "m": 2048}, 33.50, 46.89),
    ({"e": 1024, "f": 4096, "m": 2048}, 21.57, 45.47),
    ({"h": 8}, 30.83, 30.83),
    ({"image": 224}, 10.83, 10.83),
]


@pytest.mark.parametrize("shape,on_mib,off_mib", MOONDREAM2)
def test_moondream2_compute_is_what_clip_prints(tmp_path, shape, on_mib, off_mib):
    """Exact, -fa on and off. Before, the llava formula took mm.2's width for mm.0's and CLIP's class-token rows for
    SigLIP's: 26.42 / 50.09 MiB predicted for moondream2 against 30.83 / 46.89 printed (-14.3% / +6.8%)."""
    mm = write_moondream2_mmproj(tmp_path / "mmproj.gguf", **shape)
    for fa, mib in ((1, on_mib), (0, off_mib)):
        size, compute = clip_log(mm, fa)
        assert size == round(weights(mm) / MiB, 2), (shape, fa)
        assert compute == mib, (shape, fa)
        (usage,) = mtmd_memory_usage(mm, fa)
        assert usage == weights(mm) + predicted(mm, bool(fa)), (shape, fa)


@pytest.mark.parametrize("shape,on_mib", [
    ({}, 704.79),  # Qwen2.5-VL 3B / 7B / 32B / 72B's E 1280 F 3420: the 705 MiB of a public ROCm log
    ({"f": 2816}, 594.37),  # 3F <= P (8464 patches): no row of F
    ({"f": 2824}, 685.55),
    ({"e": 1024, "f": 2800}, 561.30),
    ({"e": 1024, "f": 2900}, 654.94),
    ({"e": 1536, "f": 4000}, 756.58),
    ({"f": 5000}, 917.24),  # past P / 2: two rows, as with two layers
    ({"e": 640}, 622.13),  # F > 3E: one row, as with two layers
])
def test_qwen25_vl_flash_on_past_two_layers(tmp_path, shape, on_mib):
    """qwen2.5vl_merger from the third layer on (projector._qwen_vl): a gated FFN wider than P / 3 leaves a row of F
    in the flash-on peak. Measured the same at 3, 4, 5, 8, 9, 16, 17 and 32 layers (32: 704.79 / 4871.57 MiB, -fa
    on / off; its weights 1291.40 MiB, the "model size" ggml-org/llama.cpp#13445 prints for Qwen2.5-VL-7B's mmproj);
    before, the two-layer figure served every depth (594.37 MiB for the released towers: -15.7%)."""
    from tests.test_llamacpp_projector import write_qwen_vl_mmproj

    mm = write_qwen_vl_mmproj(tmp_path / "mmproj.gguf", "qwen2.5vl_merger", n_layer=3, **shape)
    header = read_gguf_header(str(mm))
    # clip's weight buffer and the file's padded tensor data part by up to 32 bytes (test_llamacpp_projector.PADDING)
    # and the padding of the tensors whose size is not a multiple of 32 (the F32 biases of F 3420: 64 bytes apart
    # at three layers, 928 at 32)
    padding = 32 + sum(-t.nbytes % header.alignment for t in header.tensors)
    for fa in (1, 0):
        (usage,) = mtmd_memory_usage(mm, fa)
        got = usage - weights(mm)
        if fa:
            assert round(got / MiB, 2) == on_mib
        assert abs(predicted(mm, bool(fa)) - got) <= padding, (shape, fa)


def write_minicpmv4_6(path: Path, e: int = 1152, f: int = 4304, h: int = 16, t: int = 1024, n_layer: int = 3,
                      insert: int = 1, image: int = 448, scale: int = 4) -> Path:
    """MiniCPM-V 4.6's mmproj as convert_hf_to_gguf.py MiniCPMV4_6VisionModel writes it (projector type
    "minicpmv4_6"): SigLIP with the 70 x 70 position table, clip.vision.image_size the slice size (448), the ViT
    merger after layer wa_layer_indexes[0] (v.vit_merger.*: ln1, q/k/v/out attention with biases, ds_ln over 4E, the
    MLP 4E -> 4F -> E; absent with scale factor 2, the "4x" mode) and the final merger (mm.input_norm over 4E, mm.up
    4E -> 4E, mm.down 4E -> T). The released tower is 27 layers with the merger after layer 6."""
    ts = _siglip(e, f, n_layer, 4900)
    if scale == 4:
        ts += [("v.vit_merger.ln1.weight", (e,), True), ("v.vit_merger.ln1.bias", (e,), True)]
        for n in ("attn_q", "attn_k", "attn_v", "attn_out"):
            ts += [(f"v.vit_merger.{n}.weight", (e, e), False), (f"v.vit_merger.{n}.bias", (e,), True)]
        ts += [("v.vit_merger.ds_ln.weight", (4 * e,), True), ("v.vit_merger.ds_ln.bias", (4 * e,), True),
               ("v.vit_merger.ds_ffn_up.weight", (4 * f, 4 * e), False),
               ("v.vit_merger.ds_ffn_up.bias", (4 * f,), True),
               ("v.vit_merger.ds_ffn_down.weight", (e, 4 * f), False), ("v.vit_merger.ds_ffn_down.bias", (e,), True)]
    ts += [("mm.input_norm.weight", (4 * e,), True), ("mm.input_norm.bias", (4 * e,), True),
           ("mm.up.weight", (4 * e, 4 * e), False), ("mm.up.bias", (4 * e,), True),
           ("mm.down.weight", (t, 4 * e), False), ("mm.down.bias", (t,), True)]
    keys = _vision_keys("minicpmv4_6", image, 14, e, f, h, t, **{"clip.vision.projector.scale_factor": scale,
                                                                 "clip.vision.wa_layer_indexes": [insert]})
    keys["clip.vision.block_count"] = n_layer
    return _write(path, keys, ts)


# (shape, the compute bytes libmtmd's mtmd_get_memory_usage gives beyond the weights, -fa on, off): the released
# widths (E 1152, F 4304, H 16 at 448 px) first, then the tower's other sizes
MINICPMV4_6 = [
    ({}, 38405120, 92603392),  # clip_init prints 36.63 / 88.31 MiB
    ({"n_layer": 8, "insert": 6}, 38405120, 92603392),  # the released insert layer; 27 layers measured the same
    ({"t": 8192}, 38405120, 92603392),
    ({"h": 8}, 38405120, 59048960),
    ({"f": 2000}, 30213120, 92603392),  # F < 2E: five rows of E over the FFN's row
    ({"f": 8000}, 53543936, 92603392),
    ({"e": 1024, "f": 4096}, 35980288, 90506240),
    ({"e": 1280, "f": 5120}, 43320320, 94700544),
    ({"e": 768, "f": 3072, "h": 12}, 28640256, 69534720),
    ({"image": 252}, 11244512, 13877984),
    ({"image": 336}, 20570752, 34542208),
    ({"image": 392}, 28651456, 58104768),
    ({"image": 504}, 50016704, 141172160),
    ({"scale": 2}, 34201600, 88399872),  # the "4x" mode: no ViT merger, one merge
    ({"scale": 2, "f": 2000}, 26009600, 88399872),
    pytest.param({"image": 224}, 9699584, 9781504, marks=pytest.mark.xfail(strict=True, reason=(
        "at 224 px (P 256) the flash-on peak is 9,699,584 bytes (9.25 MiB), three rows of P / 4 x E above the "
        "FFN's 8,814,848 predicted (-9.1%); no MiniCPM-V 4.6 file warms up there (the slice size is 448)"))),
]


@pytest.mark.parametrize("shape,on_bytes,off_bytes", MINICPMV4_6)
def test_minicpmv4_6_compute_is_what_libmtmd_reserves(tmp_path, shape, on_bytes, off_bytes):
    """MiniCPM-V 4.6 (projector._minicpmv4_6): before, "minicpmv4_6" was not modelled, its compute buffer left out
    (0 counted against 36.63 / 88.31 MiB on the released tower). Each figure is mtmd_get_memory_usage less the
    weights, -fa on and off; the predicted buffer equals it byte for byte."""
    mm = write_minicpmv4_6(tmp_path / "mmproj.gguf", **shape)
    for fa, want in ((1, on_bytes), (0, off_bytes)):
        (usage,) = mtmd_memory_usage(mm, fa)
        assert usage - weights(mm) == want, (shape, fa)
        assert predicted(mm, bool(fa)) == want, (shape, fa)


def test_minicpmv4_6_clip_init_prints_the_same():
    """The lines clip_init prints for the released widths: "model size" is the weights (clip_weight_bytes), the CPU
    compute buffer the modelled one (36.63 MiB -fa on, 88.31 off; at 27 layers with the merger after layer 6,
    1057.36 MiB of weights, 459 tensors: the same compute buffer, measured once, the file too large for the suite)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        mm = write_minicpmv4_6(Path(d) / "mmproj.gguf")
        for fa, mib in ((1, 36.63), (0, 88.31)):
            size, compute = clip_log(mm, fa)
            assert size == round(weights(mm) / MiB, 2)
            assert compute == mib == round(predicted(mm, bool(fa)) / MiB, 2), fa
