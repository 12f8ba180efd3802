"""The multimodal projector (--mmproj): what the mmproj GGUF that llama.cpp loads beside the model takes
(tools/mtmd/clip.cpp): its weights and the compute buffer clip reserves for its warmup image. The estimate adds
both (programs.with_projector) and --fit reserves both (fit.mmproj_margin), as llama-server does.

What llama.cpp counts: mtmd_get_memory_usage (PR #21489, b9251 on) builds the projector's context with no_alloc and
sums clip_get_mem_usage per device: the weight buffer (clip_model_loader::load_tensors) plus the scheduler's
compute buffer, reserved by clip_model_loader::warmup for an image of hparams.warmup_image_size (the projector's
image_size for the fixed-size towers) with flash attention tried first when -fa is auto
(reserve_compute_meta). The same two buffers stay allocated while the server runs.

The compute buffer is ggml-alloc's peak over the encoder graph; oomkit models it for the graphs measured here and
leaves it out (said so) for the others:
- gemma3 (tools/mtmd/models/siglip.cpp build_siglip -> build_vit, then the 4x4 average pool and
  mm.input_projection): held against mtmd_get_memory_usage of the llama-cpp-python 0.3.36 build on this CPU for
  SigLIP-shaped files (P = (image_size / patch_size)^2 patches, E = embedding_length, F = feed_forward_length,
  H = head_count; F32 activations):
    flash attention on:  4 P (F + 3E)                     (the FFN: its up projection and three rows of E)
    flash attention off: max(that, 4 P (P H + 6E))       (the P x P x H F32 attention scores beside six rows)
  Gemma 3's own tower (896 px, patch 14, E 1152, F 4304, H 16): 121.25 MiB on, 1132.00 MiB off, the figures
  gpustack/gguf-parser-go#44 quotes from CUDA logs (121 / 1132 MiB). The weight buffer is the file's tensor data
  (each tensor padded to the GGUF's alignment), the header not counted. siglip.cpp projects through
  ggml_cont(ggml_transpose(mm.input_projection)), an F16 copy of the E x T weight (2 E T bytes) that depends on no
  activation and is placed early; it fits in a freed row of E while T <= 2P (every Gemma 3 tower at 896 px). Past
  that (448 px, P = 1024, T 2560) it adds itself and two rows of E to the flash-on peak and itself less a row of E
  to the flash-off one (44.94 / 92.13 MiB measured and predicted at 448 px).
- idefics3 (SmolVLM), internvl, lfm2 (build_vit with their own poolers, tools/mtmd/models/idefics3.cpp,
  internvl.cpp, lfm2.cpp): the same two peaks with four rows of E beside the scores, over n positions (P patches,
  plus the class token where v.class_embd exists, as InternViT has):
    flash attention on:  4 n (F + 3E)          off: max(that, 4 n (n H + 4E))
  byte for byte at every shape tested. The warmup image is image_size, except lfm2: set_limit_image_tokens(64, 256)
  puts it at sqrt(256 (p m)^2) = 16 p m pixels (m = clip.vision.projector.scale_factor).
- qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger (tools/mtmd/models/qwen2vl.cpp, qwen3vl.cpp): the warmup image
  is set_warmup_n_tokens(46*46) (clip.cpp load_hparams, "avoid OOM on warmup"; --image-max-tokens does not move
  it), so W = 46 m p pixels (m = clip.vision.spatial_merge_size, default 2) and P = (46 m)^2 patches: 8464 for every
  Qwen tower. Graph inputs: the F32 image (12 W^2), the M-RoPE positions (4 P int32) and, with window attention
  (qwen2.5, clip.vision.n_wa_pattern > 0), the two window indexes (P/4 int32 each) and the P x P F32 window mask,
  cast to F16 once when flash attention is on. Held against mtmd_get_memory_usage (tests/test_llamacpp_projector.py):
    qwen2vl    on:  in + P max(20E, 4F + 8E)         off: in + 4 P^2 H + 20 P E
    qwen2.5vl  on:  in + 6 P^2 + 16 P E              off: in + 4 P^2 (H + 1) + 20 P E
    qwen3vl    on:  in + P max(24E, 4F + 8E)         off: in + 4 P^2 H + 28 P E
  (the flash-off peak is the attention: the P x P x H F32 scores beside Q, K, V and the residual rows). Exact on
  the released towers (Qwen2-VL E 1280 F 5120; Qwen2.5-VL E 1280 F 3420, 704.79 / 4871.57 MiB; Qwen3-VL E 1152 F
  4304 and E 1024 F 4096; Qwen3.5 / 3.6 without deepstack alike). qwen3vl where a row of E fits in the image's
  block (4 P E <= 12 W^2: Qwen3.5-0.8B's E 768 at patch 16) takes in + P max(22E, 4F + 4E) on and
  in + 4 P^2 H + 24 P E off (161.31 / 3453.09 MiB). qwen2vl below E ~1186 (a row of E within twice the inputs'
  bytes) with F > 2E takes 4F + 14E bytes a position with flash attention (_early_row: 267.08 MiB at E 1024 F 4096, as at
  E 1280 F 5120). Where
  qwen2.5's gated FFN is wide for its width (F > 3E), or from the third layer on wider than P / 3 (the released
  32-layer towers: F 3420 against P / 3 = 2821), ggml-alloc's reuse of freed blocks leaves one or two rows of F in
  the flash-on peak (_qwen_vl: 622.13 MiB at E 640, 1036.06 at F 6840; Qwen2.5-VL's 32 layers 704.79 MiB, the
  705 MiB a ROCm log prints, against 594.37 with one or two layers).
- mlp / mlp_norm (LLaVA 1.5/1.6, moondream2; tools/mtmd/models/llava.cpp clip_graph_llava::build): warmup at
  image_size, P = (image_size / patch)^2 patches plus the class token where v.class_embd exists (n = P + c
  positions, c = 1 for CLIP, 0 for SigLIP), M = mm.0's output width, T = mm.2's (the language model's; M = T for
  LLaVA, M 8192 over T 2048 for moondream2), R = 4 P E + 4 n E with a post-layernorm (v.post_ln: SigLIP), else
  4 P E (the rows of E held under the projector; _llava), in = the image and the n + P int32 indexes:
    on:  in + max(R + 4 P M + 4 P T [when 4 P T > R], 4 n F + 12 n E + 4 c P E)
    off: max(on, in + 4 n^2 H + 16 n E + 4 c P E)
  byte for byte on LLaVA 1.5's CLIP and on moondream2's SigLIP with -fa on and off.
- llama4 (tools/mtmd/models/llama4.cpp: build_vit with 2D RoPE, then pixel shuffle and the adapter MLP): warmup at
  image_size, n = P + 1 positions; inputs the F32 image and the two position rows (n int32 each, padded to 32 bytes):
    on:  in + n max(20E, 4F + 8E)          off: max(on, in + 4 n^2 H + 20 n E)
  exact on Llama 4's tower (E 1408, F 5632, H 16, d_head 88: 19.89 MiB on, 37.11 off at 336 px); below E 1280 the
  flash-on FFN term gains the same 6E bytes a position as qwen2vl's (_early_row: 18.20 MiB at E 1024 F 4096).
- pixtral (Pixtral 12B, and with clip.vision.spatial_merge_size m = 2 Mistral Small 3.x; tools/mtmd/models/
  pixtral.cpp): set_warmup_n_tokens(256) puts the warmup at 16 m p pixels, P = (16 m)^2 patches, P / m^2 tokens of
  width T (mm.2.weight); inputs the F32 image and two RoPE rows; 64 T bytes for the 16 [IMG_BREAK] rows:
    on:  in + max(P (12F + 14E) + 64T, 8 (P / m^2) T + 16 P E)
    off: in + max(P (12F + 12E) + 64T, 4 P^2 H + 20 P E + 64T, 8 (P / m^2) T + 10 P E)
  (the gated FFN's three F rows; the attention; the projector). Exact on the released 1024-wide towers at both
  merges; away from E 1024 / F 4096 the placement moves the peak by a few rows (the tests name each miss).
- gemma4v (Gemma 4), resampler (MiniCPM-V / MiniCPM-o), minicpmv4_6 (MiniCPM-V 4.6), glm4v (GLM-4.1V / 4.5V),
  kimivl / kimik25 (Kimi-VL, Kimi-K2.5): read from their graph builders (tools/mtmd/models/gemma4v.cpp,
  minicpmv.cpp, glm4v.cpp, kimivl.cpp, kimik25.cpp) and the warmup sizes load_hparams sets; each function below names its peaks. Held against
  mtmd_get_memory_usage (tests/test_llamacpp_mmproj_towers.py): exact with -fa on and off on the released towers;
  Kimi-K2.5 without clip.vision.image_max_pixels warms up at 1792 px: 16.4 GiB without flash attention.
- gemma4a (Gemma 4 E2B / E4B's audio tower, _audio_compute_bytes): the convolutional subsampler's peak at the
  3000-frame warmup clip; a file with both towers reserves both compute buffers and loads the unprefixed v.* tensors
  twice (clip_weight_bytes).
- gemma3nv (Gemma 3n E2B / E4B's MobileNetV5, _mobilenetv5; tools/mtmd/models/mobilenetv5.cpp
  clip_graph_mobilenetv5::build): warmup at image_size (768 px). Convolutions are ggml_conv_2d_direct (no im2col)
  except the depthwise ones (ggml_conv_2d_dw: an F16 im2col of k^2 C OH OW); the peak is the downsampling depthwise
  conv that opens a stage (dw_mid, stride 2, after pad_same_2d): the GELU output of the expansion (4 m H^2), its
  SAME-padded copy (4 m Hp^2) and the im2col (2 k^2 m OH^2), held to mtmd_get_memory_usage byte for byte (556.90 MiB
  on the released tower, -fa on and off alike: the MQA attention is built by hand). The same file's audio tower
  (gemma3na) is skipped by clip_init (skip_audio, "we don't support audio for Gemma 3N", in the llama.cpp of
  llama-cpp-python 0.3.36): neither loaded nor reserved (clip_weight_bytes, _audio_compute_bytes); clip loads only
  the v.* tensors and the embedder's projection and soft norm.
Not modelled (weights only, and a note says the compute buffer is missing): the other vision towers and the other
audio towers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import SettingsError
from .settings import LlamaCppSettings, build_number

MiB = 1 << 20


@dataclass(frozen=True)
class ProjectorMemory:
    """What the --mmproj projector takes on its device: weights and compute buffer (None: not modelled), and the
    host compute buffer that holds the graph's inputs when clip runs on a GPU (clip_host_input_bytes; 0 where not
    modelled)."""

    weights: int
    compute: int | None
    source: str
    host_compute: int = 0

    @property
    def total(self) -> int:
        return self.weights + (self.compute or 0)


# pixtral's warmup: set_warmup_n_tokens(256) in clip.cpp load_hparams ("avoid OOM on warmup"): 16 x 16 merged tokens
PIXTRAL_WARMUP_TOKENS_PER_SIDE = 16
# the Qwen-VL towers' warmup: set_warmup_n_tokens(46*46) in clip.cpp load_hparams (merged tokens per side)
QWEN_WARMUP_TOKENS_PER_SIDE = 46


def clip_compute_bytes(meta: dict, flash_attn: bool, shapes: dict | None = None) -> int | None:
    """The compute buffers clip reserves at warmup (see the module's note): the vision tower's for its warmup image
    plus, in a file with an audio encoder too (Gemma 4 E2B / E4B), the audio tower's for its warmup clip; clip_init
    builds one context per modality and mtmd_get_memory_usage sums both. None where a tower the file has is not
    modelled. shapes: tensor name -> ne (ne0 first), for the projector's widths."""
    audio = bool(meta.get("clip.has_audio_encoder", False))
    vision = bool(meta.get("clip.has_vision_encoder", not audio))
    if not vision and not audio:
        return None
    total = 0
    if vision:
        got = _vision_compute_bytes(meta, flash_attn, shapes or {})
        if got is None:
            return None
        total += got
    if audio:
        got = _audio_compute_bytes(meta, shapes or {})
        if got is None:
            return None
        total += got
    return total


# Gemma 4's audio front end (tools/mtmd/models/gemma4a.cpp): two 3 x 3 stride-2 convolutions with padding 1 over the
# mel spectrogram, then 12-frame attention chunks with 12 frames of past context (S = 24 keys per chunk) and 13
# relative positions
GEMMA4A_CHUNK, GEMMA4A_CONTEXT, GEMMA4A_REL_POSITIONS = 12, 24, 13
# the warmup clip: hparams.warmup_audio_size frames (clip-model.h: 3000), n_mel_bins rows
WARMUP_AUDIO_FRAMES = 3000


def _audio_compute_bytes(meta: dict, shapes: dict) -> int | None:
    """The audio tower's compute buffer at warmup (a WARMUP_AUDIO_FRAMES x n_mel_bins F32 spectrogram); gemma4a only.

    gemma4a (no flash attention path: the chunked attention is built by hand, so -fa does not move it): the peak is
    the convolutional subsampler, whose ggml_conv_2d materialises an im2col matrix (F16, the kernel's type) and an F32
    product before the permuted copy. With C0 channels after the first conv, f1 x t1 = ceil(mel/2) x ceil(frames/2)
    after it and f2 x t2 after the second, and the spectrogram raw = 4 frames mel bytes (kept, an input):
      first conv:  2 raw (the input and its transposed copy) + 2 * 9 f1 t1 (im2col) + 2 * 4 C0 f1 t1
      second conv: raw + 4 C0 f1 t1 (the first conv's output) + 2 * 9 C0 f2 t2 (its im2col)
    plus the two graph inputs, the relative position rows (E x 13 F32) and the chunk mask (24 x 12 x B F32,
    B = ceil(t2 / 12) chunks). The conformer layers after it take less at every width tested (E 768-1536, F up to
    8192, 4-16 heads: the 750 positions of the warmup clip are few)."""
    if _kind(meta) == "gemma3nv":  # clip_init sets skip_audio for a gemma3nv vision tower: no audio context
        return 0
    # load_hparams reads clip.projector_type first, then the modality's own key
    kind = meta.get("clip.projector_type") or meta.get("clip.audio.projector_type")
    if kind != "gemma4a":
        return None
    conv0 = shapes.get("a.conv1d.0.weight")
    try:
        mel, e = int(meta["clip.audio.num_mel_bins"]), int(meta["clip.audio.embedding_length"])
    except (KeyError, TypeError, ValueError):
        return None
    if not conv0 or len(conv0) < 4 or mel <= 0:
        return None
    c0 = int(conv0[3])
    raw = 4 * WARMUP_AUDIO_FRAMES * mel
    f1, t1 = -(-mel // 2), -(-WARMUP_AUDIO_FRAMES // 2)
    f2, t2 = -(-f1 // 2), -(-t1 // 2)
    first = 2 * raw + 2 * 9 * f1 * t1 + 8 * c0 * f1 * t1
    second = raw + 4 * c0 * f1 * t1 + 18 * c0 * f2 * t2
    chunks = -(-t2 // GEMMA4A_CHUNK)
    inputs = _align(4 * e * GEMMA4A_REL_POSITIONS) + _align(4 * GEMMA4A_CONTEXT * GEMMA4A_CHUNK * chunks)
    return inputs + max(first, second)


def _vision_compute_bytes(meta: dict, flash_attn: bool, shapes: dict) -> int | None:
    """The vision tower's compute buffer for its warmup image (the module's note)."""
    kind = _kind(meta)
    if kind == "gemma3nv":
        return _mobilenetv5(meta, shapes)
    try:
        image, patch = int(meta["clip.vision.image_size"]), int(meta["clip.vision.patch_size"])
        e, f = int(meta["clip.vision.embedding_length"]), int(meta["clip.vision.feed_forward_length"])
        h = int(meta["clip.vision.attention.head_count"])
    except (KeyError, TypeError, ValueError):
        return None
    if patch <= 0:
        return None
    if kind == "gemma3":
        p = (image // patch) ** 2
        ffn, attn = 4 * p * (f + 3 * e), 4 * p * (p * h + 6 * e)
        proj = shapes.get("mm.input_projection.weight")
        copy = 2 * e * int(proj[0]) if proj and len(proj) >= 2 else 0  # F16 transposed copy of the E x T weight
        if copy > 4 * p * e:  # _gemma3_early_copy: it fits in no freed row of E
            ffn, attn = ffn + copy + 8 * p * e, attn + copy - 4 * p * e
        return ffn if flash_attn else max(ffn, attn)
    if kind in ("idefics3", "internvl", "lfm2"):
        if kind == "lfm2":  # set_limit_image_tokens(64, 256): warmup_image_size = sqrt(256 (p m)^2)
            image = 16 * patch * int(meta.get("clip.vision.projector.scale_factor", 1) or 1)
        n = (image // patch) ** 2 + (1 if "v.class_embd" in (shapes or {}) else 0)
        ffn = 4 * n * (f + 3 * e)
        return ffn if flash_attn else max(ffn, 4 * n * (n * h + 4 * e))
    if kind == "pixtral":
        return _pixtral(meta, patch, e, f, h, flash_attn, shapes or {})
    if kind == "llama4":
        n = (image // patch) ** 2 + 1  # the class token
        inputs = 12 * image * image + 2 * _align(4 * n)  # the F32 image, pos_h and pos_w (n int32 each)
        # below the FFN: 20 bytes of E a position, 22 where a row of E fits in twice the inputs (measured at F
        # 1000-2000: E 1024 22, E 1280 and 1408 20); the released F = 4E towers peak at the FFN
        floor = (22 if 4 * n * e <= 2 * inputs else 20) * e
        on = inputs + n * max(floor, 4 * f + (8 + _early_row(n, e, f, inputs)) * e)
        return on if flash_attn else max(on, inputs + 4 * n * n * h + 20 * n * e)
    if kind in ("qwen2vl_merger", "qwen2.5vl_merger", "qwen3vl_merger"):
        return _qwen_vl(kind, meta, patch, e, f, h, flash_attn)  # clip.vision.block_count read there
    if kind == "gemma4v":
        return _gemma4v(meta, patch, e, f, h, flash_attn)
    if kind == "resampler":
        return _minicpmv(image, patch, e, f, h, flash_attn, shapes or {},
                         int(meta.get("clip.vision.block_count", 0) or 0))
    if kind == "minicpmv4_6":
        return _minicpmv4_6(meta, image, patch, e, f, h, flash_attn)
    if kind == "glm4v":
        return _glm4v(meta, patch, e, f, h, flash_attn)
    if kind in ("kimivl", "kimik25"):
        return _kimi(kind, meta, patch, e, f, h, flash_attn)
    if kind in ("mlp", "mlp_norm"):
        return _llava(image, patch, e, f, h, flash_attn, shapes or {})
    return None


def _llava(image: int, patch: int, e: int, f: int, h: int, flash_attn: bool, shapes: dict) -> int | None:
    """LLaVA 1.5 / 1.6 and moondream2 (projector types mlp / mlp_norm; tools/mtmd/models/llava.cpp
    clip_graph_llava::build: the class token concatenated where v.class_embd exists, the ViT to its penultimate
    layer, v.post_ln where the file has it, the patches' get_rows, then mm.0 (E -> M), GELU, mm.2 (M -> T)) at
    the warmup image (image_size), n = P + c positions. Inputs: the F32 image, the positions (n int32) and the
    patch indexes (P int32), each padded to 32 bytes. Held to the CPU compute buffer clip_init prints and to
    mtmd_get_memory_usage byte for byte (llama-cpp-python 0.3.36, tests/test_llamacpp_projector_minicpmv.py):
    - the projector: mm.0's row of M (its bias add and GELU run in place) over the rows of E still held, the
      patches' get_rows (P E) and, with a post-layernorm, its ggml_norm row (n E), which lands above the freed
      blocks; then mm.2's row of T, which takes those rows' blocks when it fits in them (moondream2's T 2048 in two
      rows of E 1152: 30.83 MiB printed; 42.22 at T 4096; 33.32 without v.post_ln, one row held);
    - the ViT's FFN (a row of F, three rows of E) and, without flash attention, the n x n x H F32 scores beside
      four rows of E; the class token's concat leaves its P x E input beside both (LLaVA's CLIP; moondream2's
      SigLIP has none: 23.22 and 46.89 MiB printed at M 2048)."""
    out, hidden = shapes.get("mm.2.weight"), shapes.get("mm.0.weight")
    if not out or len(out) < 2 or not hidden or len(hidden) < 2:
        return None
    t, m = int(out[1]), int(hidden[1])
    p = (image // patch) ** 2
    cls = 1 if "v.class_embd" in shapes else 0
    n = p + cls
    inputs = _align(12 * image * image) + _align(4 * n) + _align(4 * p)
    held = 4 * p * e + (4 * n * e if "v.post_ln.weight" in shapes else 0)
    proj = held + 4 * p * m + (4 * p * t if 4 * p * t > held else 0)
    on = inputs + max(proj, 4 * n * f + 12 * n * e + 4 * cls * p * e)
    return on if flash_attn else max(on, inputs + _align(4 * n * n * h) + 16 * n * e + 4 * cls * p * e)


def _pixtral(meta: dict, patch: int, e: int, f: int, h: int, flash_attn: bool, shapes: dict) -> int | None:
    """Pixtral / Mistral Small 3.x at the warmup image (the module's note)."""
    out = shapes.get("mm.2.weight")
    if not out or len(out) < 2:
        return None
    t, m = int(out[1]), int(meta.get("clip.vision.spatial_merge_size", 1) or 1)
    side = PIXTRAL_WARMUP_TOKENS_PER_SIDE * m
    p = side * side
    inputs = 12 * (side * patch) ** 2 + 2 * _align(4 * p)  # the F32 image, the 2D RoPE rows (P int32 each)
    brk = 4 * t * PIXTRAL_WARMUP_TOKENS_PER_SIDE  # the [IMG_BREAK] rows, one per row of merged tokens
    tokens = p // (m * m)
    # the [IMG_BREAK] rows depend on no activation and are built early; past the 2 P E bytes of a half-width 2D-RoPE
    # row (T > 8192 at Pixtral 12B's 256 patches) the overflow adds to every peak (measured at T 9216, 10240, 12288)
    inputs += max(0, brk - 2 * p * e)
    if flash_attn:  # the FFN's 14 bytes of E a position hold _early_row's six; F <= 2E (merge 2, F 2048) drops them
        ffn = p * (12 * f + (8 + _early_row(p, e, f, inputs)) * e)
        return inputs + max(ffn + brk, 8 * tokens * t + 16 * p * e)
    return inputs + max(p * (12 * f + 12 * e) + brk, 4 * p * p * h + 20 * p * e + brk, 8 * tokens * t + 10 * p * e)


def _gemma4v(meta: dict, patch: int, e: int, f: int, h: int, flash_attn: bool) -> int:
    """Gemma 4's vision tower (tools/mtmd/models/gemma4v.cpp: build_vit with RMS norms, per-head q/k norms, post
    norms and a gated GELU FFN, every matmul wrapped in Gemma4ClippableLinear's two clamps; then the k x k average
    pool and mm.input_projection) at its warmup image: set_warmup_n_tokens(256) with n_merge = k (3 unless
    clip.vision.projector.scale_factor says otherwise) puts it at W = 16 k p pixels, P = (16 k)^2 patches.
    Inputs: the F32 image (12 W^2) and the two position rows pos_x, pos_y (P int32 each). The flash-on peak is the
    FFN (gate, up and their GEGLU product: three rows of F) beside three rows of E; the flash-off peak the P x P x H
    F32 scores beside five rows of E. When a row of E fits in the block the scaled copy of the image leaves free
    (4 P E <= 12 W^2, i.e. E <= 3 p^2: the 768-wide towers of E2B / E4B) one row of E less is counted."""
    k = int(meta.get("clip.vision.projector.scale_factor", 3) or 3)
    side = PIXTRAL_WARMUP_TOKENS_PER_SIDE * k
    w, p = side * patch, side * side
    inputs = 12 * w * w + 2 * _align(4 * p)
    reuse = 0 if 4 * p * e <= 12 * w * w else 1  # the image block takes one row of E when it is wide enough
    on = inputs + 4 * p * (3 * f + (2 + reuse) * e)
    return on if flash_attn else max(on, inputs + 4 * p * (p * h + (4 + reuse) * e))


def _minicpmv(image: int, patch: int, e: int, f: int, h: int, flash_attn: bool, shapes: dict,
              n_layer: int = 0) -> int | None:
    """MiniCPM-V / MiniCPM-o (projector type "resampler"; tools/mtmd/models/minicpmv.cpp): the SigLIP ViT at
    image_size (P = (image / p)^2 patches, no class token), then the resampler, a cross-attention of Q learned
    queries over the P patches in T = the language model's width (resampler.query is T x Q). Inputs: the F32
    image, the positions (P int32), pos_h and pos_w (P F32 each) and omega (T/4 F32). With flash attention the
    peak is either the resampler (kv projection, its norm and the sin/cos position rows: three rows of T, beside
    two rows of E) or the ViT's FFN (a row of F and three of E); without, the ViT's P x P x H F32 scores beside four
    rows of E where they are larger.
    The query branch (ln_q over resampler.query: Q x T F32) depends on no activation, so the scheduler places it
    early: it lands in the block the patch convolution's im2col frees (3 p^2 x P F16) when it fits (64 queries at
    T <= 4704); when it does not (MiniCPM-Llama3-V 2.5's 96 queries at T 4096) it adds its own row with flash
    attention and shifts the flash-off peak by two rows of E (measured).
    The ViT's layer count (clip.vision.block_count) moves the flash-on resampler peak: each layer's residual
    alternates between two blocks, so an odd count (the released towers' 27 SigLIP layers) leaves the ViT's output
    where the resampler's rows pack worse: three and a half rows of T beside one row of E where T > 2E, three rows
    of T and one of E otherwise (measured at 1, 3, 5 and 27 layers against 2, 4 and 8: MiniCPM-V 2.6 55.81 MiB
    printed at 27 layers, 53.31 at 2; MiniCPM-V 4.5 62.81 / 59.31; MiniCPM-V 4.0 41.81 / 41.31; MiniCPM-Llama3-V
    2.5 64.31 / 60.81; flash-off unchanged)."""
    query = shapes.get("resampler.query")
    if not query or len(query) < 2:
        return None
    t, q = int(query[0]), int(query[1])
    p = (image // patch) ** 2
    inputs = 12 * image * image + 12 * p + t
    early = 4 * q * t > 2 * 3 * patch * patch * p  # the query rows do not fit in the freed im2col block
    # the two rows of E beside the resampler's three rows of T: a row of T no wider than 2E takes their blocks
    # (measured at T 1536, 2048, 2304 with E 1152)
    if n_layer % 2:
        resampler = 4 * p * (3 * t + e) + (2 * p * t if t > 2 * e else 0)
    else:
        resampler = 4 * p * (3 * t + (2 * e if t > 2 * e else 0))
    on = inputs + max(resampler, 4 * p * (f + 3 * e)) + (4 * q * t if early else 0)
    return on if flash_attn else max(on, inputs + 4 * p * p * h + (24 if early else 16) * p * e)


def _minicpmv4_6(meta: dict, image: int, patch: int, e: int, f: int, h: int, flash_attn: bool) -> int:
    """MiniCPM-V 4.6 (projector type "minicpmv4_6", PR #22529, b9049 on; tools/mtmd/models/minicpmv.cpp
    clip_graph_minicpmv4_6::build as the llama-cpp-python 0.3.36 build has it, with the 4x mode): SigLIP at image_size
    (the slice size, 448: P = (image / p)^2 patches), its layers to clip.vision.wa_layer_indexes[0] at full
    resolution, then the ViT merger (a 2 x 2 window self-attention under a P x P block-diagonal mask, a 2 x 2 merge and
    an MLP 4E -> 4F -> E), the remaining layers at P / 4, and the final merger (2 x 2 merge, MLP 4E -> 4E -> T).
    clip.vision.projector.scale_factor 2 (the "4x" downsample mode) drops the ViT merger: every layer at full
    resolution, one merge. Inputs: the F32 image, the positions (P int32), the merger's two window orders (P int32
    each), its mask (P x P F32) and four gather rows (P / 4 int32 each), the final merge's four (P / 16, or P / 4
    in 4x mode), each padded to 32 bytes. The peaks are those of the full-resolution layers, the downsampled part
    takes less: with flash attention the FFN (a row of F and three of E) or, where F < 2E, five rows of E; without,
    the P x P x H F32 scores beside four rows of E. Exact against libmtmd's mtmd_get_memory_usage and the buffer
    clip_init prints (36.63 / 88.31 MiB -fa on / off on the released 27-layer tower, as at 3 layers; independent of
    the layer count, the insert layer and T; tests/test_llamacpp_projector_minicpmv.py) from 252 px up; at 224 px
    (P 256) the flash-on peak is larger (measured, not modelled)."""
    side = image // patch
    p = side * side
    half = side // 2
    merge = int(meta.get("clip.vision.projector.scale_factor", 4) or 4)  # load_hparams: n_merge, 4 unless set
    n_out = half * half if merge == 2 else (half // 2) ** 2
    inputs = _align(12 * image * image) + _align(4 * p) + 4 * _align(4 * n_out)
    if merge != 2:  # the ViT merger's window orders, mask and gather rows
        inputs += 2 * _align(4 * p) + _align(4 * p * p) + 4 * _align(4 * half * half)
    on = inputs + 4 * p * max(f + 3 * e, 5 * e)
    return on if flash_attn else max(on, inputs + 4 * p * p * h + 16 * p * e)


def _glm4v(meta: dict, patch: int, e: int, f: int, h: int, flash_attn: bool) -> int:
    """GLM-4.1V / GLM-4.5V (tools/mtmd/models/glm4v.cpp: the two temporal conv slices, RMS norms, M-RoPE and a gated
    SiLU FFN, then the 2 x 2 downsample conv and the merger FFN): set_warmup_n_tokens(46*46) as the Qwen towers,
    W = 46 m p pixels, P = (46 m)^2 patches. Inputs: the F32 image and the M-RoPE positions (4 P int32). Flash on:
    the FFN's three rows of F beside two rows of E; off: the P x P x H F32 scores beside seven rows of E."""
    m = int(meta.get("clip.vision.spatial_merge_size", 2) or 2)
    side = QWEN_WARMUP_TOKENS_PER_SIDE * m
    w, p = side * patch, side * side
    inputs = 12 * w * w + 16 * p
    on = inputs + 4 * p * (3 * f + 2 * e)
    return on if flash_attn else max(on, inputs + 4 * p * (p * h + 7 * e))


# Kimi-K2.5's warmup without clip.vision.image_max_pixels: set_limit_image_tokens(2, 4096), 64 merged tokens a side
KIMIK25_WARMUP_TOKENS_PER_SIDE = 64


def _kimi(kind: str, meta: dict, patch: int, e: int, f: int, h: int, flash_attn: bool) -> int:
    """Kimi-VL (MoonViT) and Kimi-K2.5 (MoonViT3d) (tools/mtmd/models/kimivl.cpp, kimik25.cpp: build_vit with the
    2D RoPE of build_rope_2d, whose half-width rotated rows add half a row of E, then the 2 x 2 patch merge and the
    two-layer projector). Warmup: Kimi-VL set_warmup_n_tokens(256), W = 16 m p; Kimi-K2.5 sqrt of
    clip.vision.image_max_pixels where the file has it, else set_limit_image_tokens(2, 4096), W = 64 m p
    (m = clip.vision.projector.scale_factor, 2). Inputs: the F32 image and pos_h, pos_w (P int32 each). Flash on:
    a row of F (up, bias and GELU in place) beside 3.5 rows of E; off: the P x P x H F32 scores beside five rows."""
    m = int(meta.get("clip.vision.projector.scale_factor", 2) or 2)
    if kind == "kimivl":
        w = PIXTRAL_WARMUP_TOKENS_PER_SIDE * m * patch
    elif int(meta.get("clip.vision.image_max_pixels", 0) or 0) > 0 and \
            int(meta.get("clip.vision.image_min_pixels", 0) or 0) > 0:
        w = int(int(meta["clip.vision.image_max_pixels"]) ** 0.5)
    else:
        w = KIMIK25_WARMUP_TOKENS_PER_SIDE * m * patch
    p = (w // patch) ** 2
    inputs = _align(12 * w * w) + 2 * _align(4 * p)
    on = inputs + 4 * p * f + 14 * p * e
    return on if flash_attn else max(on, inputs + 4 * p * (p * h + 5 * e))


def _mobilenetv5(meta: dict, shapes: dict) -> int | None:
    """Gemma 3n's MobileNetV5 (gemma3nv; tools/mtmd/models/mobilenetv5.cpp clip_graph_mobilenetv5::build) at its
    warmup image, W = image_size (768). The stem and stage 0's first edge residual halve the side twice, so stage 1
    opens at H = ceil(W / 4); stages 1-3 open with a universal inverted residual whose middle depthwise conv
    (v.blk.{s}.0.dw_mid, k x k over m channels) takes the stride 2 (build_inverted_residual). Each such opening is
    a candidate peak: the expansion's GELU output (4 m H^2, F32), pad_same_2d's copy of it (4 m Hp^2, with
    Hp = H + max(0, 2 (OH - 1) + k - H)) and ggml_conv_2d_dw's F16 im2col (2 k^2 m OH^2, OH = ceil(H / 2)), with
    nothing else live beneath them. The largest is the buffer: stage 1 on the released tower (m 768, k 5, H 192:
    556.90 MiB), stage 2 where stage 1 expands less (measured both, and at 512 and 1024 px). Flash attention does
    not enter: the MQA blocks build their attention by hand. None where a stage opens otherwise."""
    try:
        side = -(-int(meta["clip.vision.image_size"]) // 4)
    except (KeyError, TypeError, ValueError):
        return None
    peak = 0
    for stage in (1, 2, 3):
        dw = shapes.get(f"v.blk.{stage}.0.dw_mid.conv.weight")
        if not dw or len(dw) < 4:
            return None
        k, m, out = int(dw[0]), int(dw[3]), -(-side // 2)
        padded = side + max(0, 2 * (out - 1) + k - side)
        peak = max(peak, 4 * m * side * side + 4 * m * padded * padded + 2 * k * k * m * out * out)
        side = out
    return peak


def _early_row(n: int, e: int, f: int, inputs: int) -> int:
    """Bytes of E a position (6: one and a half F32 rows) the flash-on FFN peak of build_vit gains when a row of E
    (n positions, F32) fits in twice the graph inputs' bytes and the FFN is wider than 2E: ggml-alloc then places
    an early row in the blocks at the front of the buffer, and the layers' later rows land past the FFN's.
    Measured, not derived: on qwen2vl with 8464 positions and 19.9 MiB of inputs the rows are there at E 1184 and
    absent at E 1188, there at F = 2.6E and 2.9E and absent at F = 1.95E; llama4 agrees (there at E 768 and 1024
    with F = 4E, absent at E 1280 and 1408, absent at F = 1.95E), and pixtral (absent at F = 1.5E and 2E, merge 2).
    The qwen3vl graph, whose learned position rows change the order, does not show it."""
    return 6 if 4 * n * e <= 2 * inputs and f > 2 * e else 0


def _align(nbytes: int, alignment: int = 32) -> int:
    """A tensor's size in the scheduler's buffer (ggml-alloc pads each to the backend's alignment, 32 on the CPU)."""
    return -(-nbytes // alignment) * alignment


def _qwen_vl(kind: str, meta: dict, patch: int, e: int, f: int, h: int, flash_attn: bool) -> int:
    """Qwen2-VL / Qwen2.5-VL / Qwen3-VL towers at their warmup image (the module's note)."""
    m = int(meta.get("clip.vision.spatial_merge_size", 2) or 2)
    side = QWEN_WARMUP_TOKENS_PER_SIDE * m  # patches per side
    w, p = side * patch, side * side
    window = kind == "qwen2.5vl_merger" and int(meta.get("clip.vision.n_wa_pattern", 0) or 0) > 0
    inputs = 12 * w * w + 16 * p + (2 * p if window else 0)  # image F32, 4 P positions, 2 x P/4 window indexes
    if window:
        if not flash_attn:
            return inputs + 4 * p * p * (h + 1) + 20 * p * e
        # the gated FFN's gate and up rows (F each) sit in freed blocks while both fit in 6E floats (F <= 3E);
        # past that one still finds a block of 2 P^2 bytes while F <= P / 2, and beyond both add to the peak
        # (measured with two layers at E 1280: F 3800 none, 4000-4200 one, 4240-6840 two; F 3420: E 1200 none,
        # E 640-1120 one). From the third layer on the blocks the earlier layers free also need 3F <= P (measured
        # at 3, 4, 5, 8, 9, 16, 17 and 32 layers: E 1280 F 2816 none, 2824 one; E 1024 F 2800 none, 2900 one; the
        # released Qwen2.5-VL's E 1280 F 3420 at 32 layers, one: 704.79 MiB)
        fits = f <= 3 * e and (3 * f <= p or int(meta.get("clip.vision.block_count", 0) or 0) < 3)
        spill = 0 if fits else (1 if 2 * f <= p else 2)
        return inputs + 6 * p * p + 16 * p * e + spill * 4 * p * f
    rows = 28 if kind == "qwen3vl_merger" else 20
    if kind == "qwen3vl_merger" and 4 * p * e <= 12 * w * w:
        # a row of E fits in the image's block (E <= 3 p^2 m^2: Qwen3.5-0.8B's 768 at patch 16): it holds one row
        # of each peak (measured at E 640 and 768: four bytes of E a position fewer, two on the 24E branch)
        on = inputs + p * max((rows - 6) * e, 4 * f + 4 * e)
        return on if flash_attn else inputs + 4 * p * p * h + (rows - 4) * p * e
    if kind == "qwen3vl_merger":
        on = inputs + p * max((rows - 4) * e, 4 * f + 8 * e)
    else:
        on = inputs + p * max(20 * e, 4 * f + (8 + _early_row(p, e, f, inputs)) * e)
    return on if flash_attn else inputs + 4 * p * p * h + rows * p * e


def clip_host_input_bytes(meta: dict) -> int | None:
    """The graph inputs of the projector's warmup graph, which a GPU backend leaves in the CPU backend's compute
    buffer: ggml_backend_sched assigns every tensor flagged GGML_TENSOR_FLAG_INPUT to the last backend, the CPU
    (ggml/src/ggml-backend.cpp ggml_backend_sched_backend_id_from_cur, "graph input ... last backend (assumed
    CPU)"), and the device split reads copies of them, which take their place in the device buffer: so the device
    buffer is the CPU-only peak (clip_compute_bytes) and clip_model_loader::alloc_compute_meta prints a CPU compute
    buffer of the inputs beside it. Modelled for the Qwen-VL towers without window attention (qwen2vl_merger,
    qwen3vl_merger: the F32 image of W x W x 3 and the 4 P int32 M-RoPE positions); None elsewhere.
    ggml-org/llama.cpp#23321 (Qwen3.6-35B-A3B's qwen3vl tower on Vulkan, 1472 px warmup): CPU 24.93 MiB printed,
    12 W^2 + 16 P = 26,136,832 bytes."""
    kind = _kind(meta)
    if kind not in ("qwen2vl_merger", "qwen3vl_merger"):
        return None
    try:
        patch = int(meta["clip.vision.patch_size"])
    except (KeyError, TypeError, ValueError):
        return None
    m = int(meta.get("clip.vision.spatial_merge_size", 2) or 2)
    side = QWEN_WARMUP_TOKENS_PER_SIDE * m
    w, p = side * patch, side * side
    return 12 * w * w + 16 * p


def _kind(meta: dict) -> str | None:
    """The vision projector's type: clip.vision.projector_type (files with a vision and an audio tower), else
    clip.projector_type (clip_model_loader reads the same two keys)."""
    kind = meta.get("clip.vision.projector_type") or meta.get("clip.projector_type")
    return kind if isinstance(kind, str) else None


# PR #16837 "clip : use FA" (2f966b8ed, 2025-11-02, b6926: its count on master): before it clip's graph never used
# flash attention (tools/mtmd/clip.cpp has no flash_attn_type)
CLIP_FA_BUILD = 6926


def clip_flash_attn(s: LlamaCppSettings) -> bool:
    """llama-server hands -fa to the projector (mparams.flash_attn_type = params_base.flash_attn_type); auto means
    clip tries it first and keeps it where the backend supports it (CPU, CUDA, Metal, Vulkan do). Never before
    CLIP_FA_BUILD."""
    return s.flash_attn != "off" and build_number(s.engine_version) >= CLIP_FA_BUILD


# tensors clip_model_loader::load_tensors names without the modality prefix (clip-impl.h TN_CLASS_EMBD,
# TN_PATCH_EMBD, TN_PATCH_EMBD_1, TN_PATCH_BIAS, TN_NORM_EMBD): the audio context of a file with both encoders loads
# them again into its own weight buffer
_UNPREFIXED = ("v.class_embd", "v.patch_embd.weight", "v.patch_embd.weight.1", "v.patch_embd.bias",
               "v.norm_embd.weight", "v.norm_embd.bias")


def clip_weight_bytes(header) -> int:
    """The weight buffers clip allocates for an mmproj: its tensor data (each tensor padded to the alignment), plus,
    where the file has both a vision and an audio encoder, the unprefixed v.* tensors a second time (clip_init loads
    each modality into its own context, and load_tensors asks both for them; Gemma 4 E2B / E4B's patch embedding)."""
    meta = header.metadata
    if _kind(dict(meta)) == "gemma3nv":
        return _gemma3nv_weight_bytes(header)
    both = bool(meta.get("clip.has_vision_encoder", False)) and bool(meta.get("clip.has_audio_encoder", False))
    if not both:
        return header.data_size
    return header.data_size + sum(_align(t.nbytes, header.alignment) for t in header.tensors if t.name in _UNPREFIXED)


# the embedder tensors clip's gemma3nv loader asks for (clip.cpp load_tensors: TN_MM_INP_PROJ, TN_MM_SOFT_EMB_N); it
# leaves mm.embedding and mm.hard_emb_norm (the text side's) and every a.* tensor in the file
_GEMMA3NV_MM = ("mm.input_projection.weight", "mm.soft_emb_norm.weight")


def _gemma3nv_weight_bytes(header) -> int:
    """Gemma 3n's weight buffer as mtmd_get_memory_usage counts it: ggml_nbytes of each tensor load_tensors asks for
    (the v.* MobileNetV5 and MSFA tensors and _GEMMA3NV_MM), none of the audio encoder's, which clip_init skips."""
    return sum(t.nbytes for t in header.tensors if t.name.startswith("v.") or t.name in _GEMMA3NV_MM)


def projector_memory(spec, s: LlamaCppSettings) -> ProjectorMemory | None:
    """What the --mmproj file llama.cpp loads takes; None without one. A GGUF that exists: its tensor data and, for
    a modelled graph, the compute buffer; a file oomkit cannot read as GGUF counts its size. A name oomkit cannot
    open counts the model's vision tower (model/towers.py) in F16, the type convert_hf_to_gguf.py --mmproj writes by
    default, with no compute buffer."""
    import os  # lazy: only a --mmproj needs the file system

    from ...errors import OomkitError  # lazy: the header reader only for a --mmproj
    from ...model.gguf_header import read_gguf_header  # lazy: only a --mmproj is read

    if not s.mmproj or s.no_mmproj:
        return None
    if os.path.isfile(s.mmproj):
        try:
            header = read_gguf_header(s.mmproj)
        except (OomkitError, OSError, ValueError):
            return ProjectorMemory(os.path.getsize(s.mmproj), None, f"the size of {s.mmproj}")
        meta = dict(header.metadata)
        compute = clip_compute_bytes(meta, clip_flash_attn(s), {t.name: t.shape for t in header.tensors})
        kind = _kind(meta) or "?"
        if compute is None:
            return ProjectorMemory(clip_weight_bytes(header), None, f"the tensor data of {s.mmproj} ({kind} projector)")
        fa = "on" if clip_flash_attn(s) else "off"
        return ProjectorMemory(clip_weight_bytes(header), compute,
                               f"the tensor data of {s.mmproj} ({kind} projector) and its warmup compute buffer "
                               f"({compute / MiB:.2f} MiB, flash attention {fa})",
                               clip_host_input_bytes(meta) or 0)
    towers = [t for t in getattr(spec, "towers", ()) if t.kind == "vision"]
    if not towers:
        raise SettingsError(f"--mmproj {s.mmproj}: no such file, and {spec.name} has no vision tower oomkit counts")
    t = towers[0]
    return ProjectorMemory(t.nbytes(2), None, f"{spec.name}'s {t.family} tower in F16 ({t.params:,} parameters)")


def projector_bytes(spec, s: LlamaCppSettings) -> tuple[int, str] | None:
    """(bytes, where the figure comes from) of the --mmproj projector: weights plus the compute buffer where it is
    modelled (projector_memory); None without one."""
    m = projector_memory(spec, s)
    return None if m is None else (m.total, m.source)
