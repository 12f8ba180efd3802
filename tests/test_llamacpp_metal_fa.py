"""ggml-metal's flash-attention support check, as oomkit mirrors it (compute.metal_fa_supported).

ggml/src/ggml-metal/ggml-metal-device.m ggml_metal_device_supports_op, case GGML_OP_FLASH_ATTN_EXT (llama.cpp@0c1e57098,
the build llama-cpp-python 0.3.36 vendors): Q / K head sizes 32, 40, 48, 64, 72, 80, 96, 112, 128, 192, 256, 320, 512,
576 (the MLA latent from b7781, PR #18950; 320 from b8351, PR #20549); a K head of 72 only with V's equal, no K head
below V's (PR #29122); K and V of one type among F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and BF16. What it refuses
runs on the CPU: with -fa auto, llama_context turns flash attention off (compute.device_auto_fa_off); with it forced
on (-fa on, or a quantized V cache), the layer's attention and its K / V views go to the host's compute buffer
(compute.device_fa_on_host).
"""

from dataclasses import replace

import pytest

import oomkit
from oomkit.engines.llamacpp.compute import METAL_FA_HEADS, metal_fa_supported
from oomkit.engines.llamacpp.kv import Context
from oomkit.engines.llamacpp.settings import ERAS, NEWEST, build_number
from oomkit.model.spec import Attention
from oomkit.quant import ggml

PINNED = build_number(NEWEST)


def _ctx(type_k="f16", type_v=None, build=PINNED):
    return Context(n_ctx=8192, n_ctx_seq=8192, n_seq_max=1, kv_unified=True, n_ubatch=512, n_batch=2048,
                   flash_attn=True, type_k=ggml.type_by_name(type_k), type_v=ggml.type_by_name(type_v or type_k),
                   build=build)


def _heads(dk, dv=None, n_heads=32, n_kv_heads=8):
    return Attention(n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim_k=dk, head_dim_v=dv or dk)


# DeepSeek-V3's MLA layer as llama.cpp caches it (PR #12801): K = kv_lora_rank + rope = 576, V = kv_lora_rank = 512
MLA = Attention(n_heads=128, n_kv_heads=128, head_dim_k=192, head_dim_v=128, kv_lora_rank=512, qk_rope_head_dim=64,
                qk_nope_head_dim=128, v_head_dim=128, q_lora_rank=1536)


@pytest.mark.parametrize("dk", sorted(METAL_FA_HEADS))
def test_metal_takes_every_listed_head_size(dk):
    assert metal_fa_supported(_heads(dk), _ctx())


def test_metal_refuses_the_mla_latent_heads_before_pr_18950():
    """PR #18950 "metal : enable FA for MLA heads" (b7781): before it ggml-metal's supports_op refused a K head of 576
    ("DeepSeek sizes // TODO: disabled for now, until optmized"); the decompressed 192 / 128 heads were taken."""
    first = ERAS["metal_fa_mla"]
    assert first == 7781
    assert not metal_fa_supported(MLA, _ctx("q8_0", build=first - 1))
    assert metal_fa_supported(MLA, _ctx("q8_0", build=first))
    assert metal_fa_supported(replace(MLA, latent_cache=False), _ctx(build=first - 1))


def test_an_mla_model_on_metal_loses_flash_attention_before_b7781():
    """DeepSeek-Coder-V2-Lite on Metal: -fa auto keeps flash attention from b7781 and turns it off before
    (llama_context's check: the layer's FLASH_ATTN_EXT on the CPU); forced on (-fa on), the attention runs on the CPU
    before b7781, its latent K / V views and Q copied into the host's compute buffer (device_fa_on_host)."""
    def run(build, fa):
        from oomkit.engines.llamacpp.args import parse_args
        from oomkit.memory import Device

        _, _, settings = parse_args(["-c", "8192", "-ngl", "999", "-fa", fa], "llama-server")
        dev = (Device(id="MTL0", name="Apple M4 Max", memory_bytes=64 << 30, free_bytes=48 << 30),)
        return oomkit.estimate("deepseek-coder-v2-lite-instruct", "llama.cpp", quant="Q4_K_M", devices=dev,
                               settings=settings, backend="metal", find_max_context=False,
                               engine_version=f"b{build}").engine_view

    first = ERAS["metal_fa_mla"]
    assert run(first, "auto")["flash_attn"] and not run(first - 1, "auto")["flash_attn"]
    host = {b: run(b, "on")["compute_buffer_bytes"]["CPU"] for b in (first - 1, first)}
    assert host[first - 1] > host[first] + (32 << 20), host


def test_metal_takes_the_mla_latent_heads_and_the_decompressed_ones():
    """576 / 512 (the latent cache) and 192 / 128 (a GGUF without the split k_b / v_b, heads decompressed): both in
    the list, K's head not below V's."""
    assert metal_fa_supported(MLA, _ctx("q8_0"))
    assert metal_fa_supported(replace(MLA, latent_cache=False), _ctx())


@pytest.mark.parametrize(("dk", "dv"), [(512, 512), (256, 256)])
def test_metal_takes_gemma_heads(dk, dv):
    """Gemma 4's full layers (512) and sliding ones / Gemma 2-3 (256)."""
    assert metal_fa_supported(_heads(dk, dv, 16, 8), _ctx("q8_0"))


@pytest.mark.parametrize("dk", [16, 24, 56, 100, 160, 384, 640])
def test_metal_refuses_a_head_size_off_its_list(dk):
    assert not metal_fa_supported(_heads(dk), _ctx())


@pytest.mark.parametrize(("dk", "dv"), [(72, 64), (64, 128), (128, 256)])
def test_metal_refuses_hk72_with_another_v_and_k_below_v(dk, dv):
    """PR #29122 "metal : fix FA support checks": HK72 / HV64 unsupported, and no kernel for a K head smaller than
    V's (src[1]->ne[0] < src[2]->ne[0])."""
    assert not metal_fa_supported(_heads(dk, dv), _ctx())


@pytest.mark.parametrize("t", ["iq4_nl", "q4_K", "q6_K"])
def test_metal_refuses_cache_types_off_its_switch(t):
    assert not metal_fa_supported(_heads(128), _ctx(t))


def test_metal_refuses_mixed_cache_types():
    assert not metal_fa_supported(_heads(128), _ctx("q8_0", "q4_0"))


def test_head_size_320_arrives_with_pr_20549():
    """PR #20549 "metal : add FA specialization for HSK = 320, HSV = 256" (b8351): Mistral Small 4's MLA heads."""
    heads = _heads(320, 256, 32, 1)
    assert metal_fa_supported(heads, _ctx(build=ERAS["metal_fa_hs320"]))
    assert not metal_fa_supported(heads, _ctx(build=ERAS["metal_fa_hs320"] - 1))


def _metal(model, argv_types, fa):
    from oomkit.engines.llamacpp.args import parse_args
    from oomkit.memory import Device

    argv = ["-c", "8192", "-ngl", "999", "-fa", fa, "-ctk", argv_types[0], "-ctv", argv_types[1]]
    _, _, settings = parse_args(argv, "llama-server")
    dev = (Device(id="MTL0", name="Apple M4 Max", memory_bytes=64 << 30, free_bytes=48 << 30),)
    return oomkit.estimate(model, "llama.cpp", quant="Q4_K_M", devices=dev, settings=settings, backend="metal",
                           find_max_context=False)


def test_a_cache_type_metal_refuses_sends_the_forced_attention_to_the_host():
    """-ctk / -ctv iq4_nl on Metal: the quantized V cache forces flash attention on, and ggml-metal has no kernel for
    an IQ4_NL cache, so the scheduler runs FLASH_ATTN_EXT on the CPU, its K / V views copied into the host's compute
    buffer (device_fa_on_host): Qwen3-8B at -c 8192 -ub 512, the hidden-state rows (4096 x 512 F32, 8 MiB), the F16
    mask (8192 x 512, 8 MiB), one layer's Q and output rows (32 heads x 128 x 512 F32, 8 + 8 MiB) and its K and V views
    (8192 cells x 8 heads x 128 in IQ4_NL, 4.5 + 4.5 MiB): 41 MiB. With q8_0 (on Metal's list) the attention stays on
    MTL0 and the host keeps its 24 MiB of graph inputs and the small ones (compute.token_index_inputs: 2 KiB each of
    token ids and positions, 8 KiB of K / V indices, the q8_0 rotations' 80 KiB, and llama-server's 4 out_ids in one
    32-byte block)."""
    host = {t: _metal("qwen3-8b", (t, t), "on").engine_view["compute_buffer_bytes"] for t in ("q8_0", "iq4_nl")}
    host = {t: sum(b for n, b in by.items() if not n.startswith("MTL")) for t, by in host.items()}
    assert host == {"q8_0": (24 << 20) + 92 * 1024 + 32, "iq4_nl": 41 << 20}, host
