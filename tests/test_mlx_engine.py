"""MLX engine (mlx-lm 0.32.0 on Apple silicon): figures worked by hand from mlx-lm's code.

MLX cannot run here. Each expected number below is derived by hand from the lines of ml-explore/mlx-lm cited next
to it (mlx_lm/models/cache.py, generate.py, utils.py, the models' make_cache), and the cache simulators are also
checked against a line-by-line transcription of cache.py's update methods that tracks buffer lengths only.
"""

from __future__ import annotations

import copy
import random

import pytest

from oomkit.engines import mlx
from oomkit.engines.cmdline import parse_command
from oomkit.errors import OomkitError
from oomkit.memory import Device
from oomkit.model import catalog
from oomkit.model.hf_config import spec_from_config

GiB, MiB = 1 << 30, 1 << 20
M3_MAX_128 = (Device("MTL0", "Apple M3 Max 128GB", 128 * GiB),)
WS_128 = 115_448_725_504  # Metal's default working set of 128 GiB on macOS 26: "115448.73 MB" (slotstream#6)


def _spec(slug: str, **over):
    cfg = copy.deepcopy(dict(catalog.lookup(slug).config))
    cfg.update(over)
    return spec_from_config(cfg, name=slug)


# ---------------------------------------------------------------------------------------------------------
# Weights: mlx_lm.convert -q (utils.py quantize_model, mode "affine", group 64, 4 bits by default)


def test_llama_3_1_8b_4bit_weight_bytes():
    """Per quantized [out, in] weight: out x (in x 4 / 8 bytes of packed uint32 + in / 64 x 2 bf16 scales and
    biases x 2 bytes) = out x in x 0.5625. Llama 3.1 8B, per layer: q and o 4096 x 2304, k and v 1024 x 2304,
    gate and up 14336 x 2304, down 4096 x (7168 + 896) = 33,030,144; norms 2 x 4096 x 2 bf16. Embedding and lm_head
    (untied) 128256 x 2304 each, the final norm 8192."""
    spec = _spec("llama-3.1-8b-instruct")
    s = mlx.MlxSettings(q_bits=4, context_length=1024)
    r = mlx.resolve(spec, s)
    per_layer = 2 * 9_437_184 + 2 * 2_359_296 + 3 * 33_030_144 + 16_384
    assert per_layer == 122_699_776
    expected = 32 * per_layer + 2 * 128256 * 2304 + 8192
    assert expected == 4_517_404_672  # the mlx-community/Meta-Llama-3.1-8B-Instruct-4bit safetensors: 4.52 GB
    assert sum(b for _, b in mlx.tensor_bytes(spec, s, r)) == expected
    s8 = mlx.MlxSettings(q_bits=8, context_length=1024)
    # 8 bits: in x 1 byte + the same scales and biases: 0.5625 -> 1.0625 bytes per weight
    assert sum(b for _, b in mlx.tensor_bytes(spec, s8, mlx.resolve(spec, s8))) == 32 * (
        2 * 4096 * 4352 + 2 * 1024 * 4352 + 2 * 14336 * 4352 + 4096 * (14336 + 896) + 16384) + 2 * 128256 * 4352 + 8192


def test_moe_router_stays_8_bit():
    """qwen3_moe.py quant_predicate: `mlp.gate` -> {"group_size": 64, "bits": 8}."""
    spec = _spec("qwen3-30b-a3b")
    s = mlx.MlxSettings(q_bits=4, context_length=1024)
    by_name = {t.name: b for t, b in mlx.tensor_bytes(spec, s, mlx.resolve(spec, s))}
    router = next(n for n in by_name if n.endswith("ffn_gate_inp.weight"))
    assert by_name[router] == 128 * (2048 + 2 * 32 * 2)  # 128 experts x (2048 bytes + 32 groups x bf16 scale, bias)


# ---------------------------------------------------------------------------------------------------------
# The KV cache


def test_generate_step_calls():
    """generate.py generate_step: chunks of prefill_step_size while more than one prompt token is left, the rest in
    the first _step, then one call per generated token (max_tokens calls: the loop computes one token ahead)."""
    assert mlx.updates_for(5000, 3, 2048) == [2048, 2048, 903, 1, 1, 1, 1]
    assert mlx.updates_for(1, 2, 2048) == [1, 1, 1]


def test_kvcache_grows_in_256_token_steps():
    """cache.py KVCache.update_and_fetch: a new buffer of ceil(S / 256) x 256 tokens is concatenated when an update
    does not fit; the old buffer is first cut to the used length when that is not a multiple of 256."""
    # prompt 1000: 999 tokens -> 1024; the last prompt token fits; 100 generated: 1100 > 1024 -> 1280
    assert mlx.simulate_kv(mlx.updates_for(1000, 100, 2048)).capacity == 1280
    # prompt 5000: 2048 -> 2048, +2048 -> 4096, +903 -> 5120; 5000 + 100 = 5100 fits
    assert mlx.simulate_kv(mlx.updates_for(5000, 100, 2048)).capacity == 5120
    # prefill step 1000: 1000 -> 1024; 2000 > 1024 and 1000 % 256 != 0 -> cut to 1000, + 1024 = 2024;
    # 2999 > 2024 -> cut to 2000, + 1024 = 3024; 3100 > 3024 -> 3280
    assert mlx.simulate_kv(mlx.updates_for(3000, 100, 1000)).capacity == 3280
    spec = _spec("llama-3.1-8b-instruct")
    est = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(prompt_tokens=1000, max_tokens=100))
    assert est.engine_view["kv_cache_tokens"] == 1280
    assert est.kv_cache_bytes == 1280 * 32 * 8 * 128 * 2 * 2  # 32 layers x 8 KV heads x 128 x K,V x bf16


def test_rotating_kv_cache_capped():
    """cache.py RotatingKVCache: prefill chunks concatenate to min(used, max_size - 1) + S tokens; single tokens
    grow the buffer by min(256, max_size - offset) and trim it back to max_size."""
    # prompt 5000, window 1024: 2048; 1023 + 2048 = 3071; 1023 + 903 = 1926; the next token trims to 1024
    assert mlx.simulate_rotating(mlx.updates_for(5000, 100, 2048), 1024).capacity == 1024
    # prompt 300: 299 tokens, then the last prompt token grows by min(256, 1024 - 299) to 555; 400 tokens fit
    assert mlx.simulate_rotating(mlx.updates_for(300, 100, 2048), 1024).capacity == 555
    # while the prefill runs, the concatenation holds the old 2048 and the new 3071 tokens at once
    assert mlx.simulate_rotating(mlx.updates_for(5000, 100, 2048), 1024).transient == 2048 + 3071


def test_gemma3_sliding_layers_rotate_and_max_kv_size():
    spec = _spec("gemma-3-4b-it")  # 34 layers, sliding window 1024 on 5 of every 6
    est = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(prompt_tokens=5000, max_tokens=100))
    caches, _ = mlx.layer_caches(spec, mlx.MlxSettings(prompt_tokens=5000, max_tokens=100),
                                 mlx.resolve(spec, mlx.MlxSettings(prompt_tokens=5000, max_tokens=100)))
    rot = [c for c in caches if c.cls == "RotatingKVCache"]
    full = [c for c in caches if c.cls == "KVCache"]
    assert (len(rot), len(full)) == (29, 5)
    assert {c.tokens for c in rot} == {1024} and {c.tokens for c in full} == {5120}
    row = 4 * 256 * 2 * 2  # 4 KV heads x head_dim 256 x K,V x bf16
    assert est.kv_cache_bytes == (29 * 1024 + 5 * 5120) * row
    # Qwen3 has no make_cache: --max-kv-size gives every layer RotatingKVCache(max_size, keep=4)
    q = _spec("qwen3-8b")
    est = mlx.ENGINE.estimate(q, M3_MAX_128, mlx.MlxSettings(prompt_tokens=5000, max_tokens=100, max_kv_size=1024))
    assert est.engine_view["kv_cache_tokens"] == 1024
    assert est.kv_cache_bytes == 36 * 1024 * 8 * 128 * 2 * 2
    # Llama's model file has make_cache (models/llama.py), so --max-kv-size changes nothing there
    ll = mlx.ENGINE.estimate(_spec("llama-3.1-8b-instruct"), M3_MAX_128,
                             mlx.MlxSettings(prompt_tokens=5000, max_tokens=100, max_kv_size=1024))
    assert ll.engine_view["kv_cache_tokens"] == 5120
    assert any("max-kv-size is ignored" in w for w in ll.warnings)


def test_quantized_kv_cache_bytes():
    """--kv-bits: generate.py maybe_quantize_kv_cache turns each KVCache into a QuantizedKVCache after the first
    call that leaves offset >= quantized_kv_start (5000 by default), quantizing the whole buffer
    (KVCache.to_quantized). Per token and head: dim x bits / 8 bytes of uint32 words plus dim / group scales and
    biases in bf16 (QuantizedKVCache.update_and_fetch init_quant)."""
    spec = _spec("llama-3.1-8b-instruct")
    s = mlx.MlxSettings(prompt_tokens=6000, max_tokens=100, kv_bits=4, kv_group_size=64)
    est = mlx.ENGINE.estimate(spec, M3_MAX_128, s)
    # 2048, 4096, then +1903 -> 6144 tokens; offset 5999 >= 5000 -> quantized there; 6100 fits
    assert est.engine_view["kv_cache_tokens"] == 6144
    assert est.engine_view["quantized_kv_from_token"] == 5999
    per_head = 128 * 4 // 8 + 2 * (128 // 64) * 2  # 64 + 8 = 72 bytes
    assert est.kv_cache_bytes == 6144 * 32 * 8 * per_head * 2 == 226_492_416
    s8 = mlx.MlxSettings(prompt_tokens=6000, max_tokens=100, kv_bits=8)
    assert mlx.ENGINE.estimate(spec, M3_MAX_128, s8).kv_cache_bytes == 6144 * 32 * 8 * (128 + 8) * 2
    # below quantized_kv_start the cache stays in bf16
    low = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(prompt_tokens=1000, max_tokens=100, kv_bits=4))
    assert low.kv_cache_bytes == 1280 * 131072 and low.engine_view["quantized_kv_from_token"] is None
    # RotatingKVCache.to_quantized raises NotImplementedError("RotatingKVCache Quantization NYI")
    with pytest.raises(OomkitError, match="NYI"):
        mlx.ENGINE.estimate(_spec("gemma-3-4b-it"), M3_MAX_128,
                            mlx.MlxSettings(prompt_tokens=6000, max_tokens=10, kv_bits=4))


def test_mla_and_linear_attention_caches():
    """deepseek_v3.py caches the latent (kv_lora_rank 512) and k_pe (64) in a KVCache from mlx-lm 0.30.6 (PR #839),
    the decompressed heads before; deepseek_v2.py caches the heads (16 x 192 keys, 16 x 128 values) in every release;
    qwen3_next.py gives linear layers an ArraysCache: conv (B, kernel - 1, conv_dim) in bf16 and a float32
    recurrent state."""
    ds = _spec("deepseek-v2-lite")
    est = mlx.ENGINE.estimate(ds, M3_MAX_128, mlx.MlxSettings(prompt_tokens=1000, max_tokens=100))
    assert est.kv_cache_bytes == 27 * 1280 * 16 * (192 + 128) * 2
    v3 = _spec("deepseek-v3-0324")
    for version, per_token in (("0.30.6", 512 + 64), ("0.30.5", 128 * (192 + 128))):
        est = mlx.ENGINE.estimate(v3, M3_MAX_128, mlx.MlxSettings(prompt_tokens=1000, max_tokens=100,
                                                                  engine_version=version))
        assert est.kv_cache_bytes == 61 * 1280 * per_token * 2, version
    qn = _spec("qwen3-next-80b-a3b-instruct")
    est = mlx.ENGINE.estimate(qn, M3_MAX_128, mlx.MlxSettings(prompt_tokens=1000, max_tokens=100))
    conv = 3 * (2 * 16 * 128 + 32 * 128) * 2
    ssm = 32 * 128 * 128 * 4
    assert est.recurrent_state_bytes == 36 * (conv + ssm)
    assert est.kv_cache_bytes == 12 * 1280 * 2 * 256 * 2 * 2


# ---------------------------------------------------------------------------------------------------------
# The Metal device


def test_working_set_and_buffer_limits():
    spec = _spec("llama-3.1-8b-instruct")
    est = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(q_bits=4, context_length=8192))
    v = est.engine_view
    ws = WS_128  # 0.84 of 128 GiB on macOS 26 (107.52 GiB, antirez/ds4#893; tests/test_metal_working_set.py)
    assert v["recommended_working_set_bytes"] == ws
    assert est.devices[0].memory_bytes == ws and est.fits is True
    assert v["memory_limit_bytes"] == int(min(1.5 * ws, 0.95 * 128 * GiB))  # allocator.cpp block_limit_
    assert round(mlx.default_working_set(16 * GiB) / 1e6, 2) == 12713.12  # 0.74 of 16 GiB, as Metal reports it
    wired = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(q_bits=4, context_length=8192,
                                                                 wired_limit_mb=114688))
    assert wired.devices[0].memory_bytes == 112 * GiB
    # a single buffer over maxBufferLength: the bf16 embedding (128256 x 4096 x 2 = 1,050,673,152 bytes)
    tight = mlx.ENGINE.estimate(spec, M3_MAX_128, mlx.MlxSettings(context_length=8192, max_buffer_length=10**9))
    assert any("token_embd.weight is one buffer" in w and "Attempting to allocate 1050673152 bytes" in w
               and "maximum allowed buffer size of 1000000000" in w for w in tight.warnings)
    assert not any("one buffer" in w for w in est.warnings)
    # 16 GB Mac, batch 64: one layer's K buffer is 64 x 8 x 8192 x 128 x 2 = 1 GiB, fine; 70B in bf16 is not
    mac16 = (Device("MTL0", "Apple M1 Pro 16GB", 16 * GiB),)
    big = mlx.ENGINE.estimate(_spec("llama-3.1-70b-instruct"), mac16, mlx.MlxSettings(context_length=4096))
    assert big.fits is False


def test_detected_mac_memory_is_the_working_set_already():
    """hardware/detect.py apple_gpus gives a Mac found here as Metal's share (iogpu.wired_limit_mb, else macOS's
    default share of a 128 GiB Mac's RAM, 0.84 on macOS 26), with its free memory: the MLX engine takes that as the
    working set, not as the RAM to take a share of again (llama.cpp's metal_devices tells them apart the same way)."""
    from oomkit.hardware.detect import Gpu, apple_default_gpu_share

    share = apple_default_gpu_share(128 * GiB)
    assert share == WS_128
    found = Gpu(index=0, name="Apple M3 Max", vendor="apple", total_bytes=share, free_bytes=share, used_bytes=None,
                source="sysctl", unified_memory=True).device()
    spec = _spec("llama-3.1-8b-instruct")
    s = mlx.MlxSettings(q_bits=4, context_length=8192)
    est = mlx.ENGINE.estimate(spec, (found,), s)
    assert est.engine_view["recommended_working_set_bytes"] == WS_128  # not the share of the share
    assert est.devices[0].memory_bytes == WS_128
    named = mlx.ENGINE.estimate(spec, M3_MAX_128, s)
    assert est.total_bytes == named.total_bytes
    assert est.devices[0].memory_bytes == named.devices[0].memory_bytes
    wired = mlx.ENGINE.estimate(spec, (found,), mlx.MlxSettings(q_bits=4, context_length=8192, wired_limit_mb=65536))
    assert wired.devices[0].memory_bytes == 64 * GiB


def test_gpu_catalog_apple_device():
    from oomkit.estimate import estimate

    est = estimate(_spec("qwen3-8b"), "mlx", gpu="M3 Max 128GB", q_bits=4, context_length=32768)
    assert est.devices[0].id == "MTL0" and est.engine_view["unified_memory_bytes"] == 128 * GiB
    assert est.max_context == 40960  # the trained context fits on 96 GiB


# ---------------------------------------------------------------------------------------------------------
# Command lines


def test_mlx_lm_command_lines():
    p = parse_command(["mlx_lm.generate", "--model", "mlx-community/Meta-Llama-3.1-8B-Instruct-4bit",
                       "--max-tokens", "512", "--max-kv-size", "4096", "--kv-bits", "4", "-p", "hi"])
    assert p.engine == "mlx" and p.model == "meta-llama/Llama-3.1-8B-Instruct"
    s = p.settings
    assert (s.program, s.max_tokens, s.max_kv_size, s.kv_bits, s.q_bits) == ("mlx_lm.generate", 512, 4096, 4, 4)
    p = parse_command(["mlx_lm.server", "--model", "mlx-community/Qwen3-8B-8bit", "--port", "8080",
                       "--prefill-step-size", "512"])
    assert p.settings.program == "mlx_lm.server" and p.settings.prefill_step_size == 512
    assert p.model == "Qwen/Qwen3-8B" and p.settings.q_bits == 8
    assert mlx.resolve(_spec("qwen3-8b"), p.settings).max_tokens == 512  # server --max-tokens default
    p = parse_command(["python", "-m", "mlx_lm", "generate", "--model", "mlx-community/Qwen3-8B-4bit"])
    assert p.engine == "mlx" and p.settings.program == "mlx_lm.generate"
    p = parse_command(["python", "-m", "mlx_lm.server", "--model", "./local-model"])
    assert p.settings.program == "mlx_lm.server" and p.model == "./local-model"
    with pytest.raises(OomkitError, match="unrecognized"):
        parse_command(["mlx_lm.generate", "--model", "x", "--port", "1"])


def test_options_form():
    from oomkit.commands._model_args import parse_model_request

    req = parse_model_request(["qwen3-8b", "--engine", "mlx", "--ctx", "16384", "--q-bits", "4", "--kv-bits", "8",
                               "--parallel", "2"])
    s = req.settings
    assert (s.context_length, s.q_bits, s.kv_bits, s.batch) == (16384, 4, 8, 2)


# ---------------------------------------------------------------------------------------------------------
# The simulators against a transcription of cache.py (lengths only)


class _KV:
    """cache.py KVCache.update_and_fetch, lengths only."""

    step = 256

    def __init__(self):
        self.keys = None  # buffer length
        self.offset = 0

    def update(self, S):
        prev = self.offset
        if self.keys is None or (prev + S) > self.keys:
            n_steps = (self.step + S - 1) // self.step
            new = n_steps * self.step
            if self.keys is not None:
                if prev % self.step != 0:
                    self.keys = prev
                self.keys = self.keys + new
            else:
                self.keys = new
        self.offset += S


class _Rot:
    """cache.py RotatingKVCache._update_concat / _update_in_place / _trim / _temporal_order, lengths only."""

    step = 256

    def __init__(self, max_size, keep=0):
        self.keep, self.max_size = keep, max_size
        self.keys = None
        self.offset = self._idx = 0

    def _trim(self, trim_size, v, append=None):
        out = (self.keep + (v - trim_size - self.keep)) if trim_size > 0 else v
        return out + (append or 0)

    def _temporal_order(self, v):
        if self._idx == v:
            return v
        elif self._idx < self.offset:
            return v
        return self._idx

    def update(self, S):
        if S > 1:
            if self.keys is None:
                self.keys = S
            else:
                self.keys = self._temporal_order(self.keys)
                self._idx = self.keys
                trim_size = self._idx - self.max_size + 1
                self.keys = self._trim(trim_size, self.keys, S)
            self.offset += S
            self._idx = self.keys
            return
        prev = self.offset
        if self.keys is None or (prev >= self.keys and self.keys < self.max_size):
            new_size = min(self.step, self.max_size - prev)
            self.keys = new_size if self.keys is None else self.keys + new_size
            self._idx = prev
        trim_size = self.keys - self.max_size
        if trim_size > 0:
            self.keys = self._trim(trim_size, self.keys)
            self._idx = self.max_size
        if self._idx == self.max_size:
            self._idx = self.keep
        self.offset += S
        self._idx += S


def test_simulators_match_the_transcription():
    rng = random.Random(7)
    for _ in range(300):
        prompt = rng.randint(1, 9000)
        tokens = rng.randint(0, 700)
        step = rng.choice([512, 1000, 2048])
        upd = mlx.updates_for(prompt, tokens, step)
        kv = _KV()
        for u in upd:
            kv.update(u)
        assert mlx.simulate_kv(upd).capacity == kv.keys
        for size, keep in ((rng.choice([128, 1024, 4096]), 0), (rng.randint(64, 3000), 4)):
            rot = _Rot(size, keep)
            for u in upd:
                rot.update(u)
            assert mlx.simulate_rotating(upd, size, keep).capacity == rot.keys, (prompt, tokens, step, size, keep)
