"""The decode speed bound: bytes one token reads per place over that place's bandwidth, checked against hand
computations from published figures."""

from __future__ import annotations

import pytest

from oomkit.errors import OomkitError
from oomkit.estimate import estimate
from oomkit.hardware.catalog import devices_for_names, with_facts
from oomkit.memory import Device
from oomkit.plan.speed import DEFAULT_RAM_BANDWIDTH_GBS, SpeedBound, decode_bound

RTX_4090_GBS = 1008.0  # NVIDIA GeForce RTX 4090 spec page: 1008 GB/s (hardware/gpus.json)
H100_SXM_GBS = 3350.0  # NVIDIA H100 SXM: 3.35 TB/s


def _llama8b(**options):
    return estimate("llama3.1:8b", "llama.cpp", quant="Q4_K_M", gpu="RTX 4090", n_ctx=8192,
                    find_max_context=False, **options)


def test_llama_3_1_8b_q4_k_m_on_rtx_4090_matches_a_hand_computation():
    # Independent figures:
    # - llama.cpp tools/quantize/README.md, Llama-3.1-8B table: Q4_K_M is 4.8944 bits per weight;
    #   meta-llama/Llama-3.1-8B has 8,030,261,248 parameters -> the file's tensor bytes.
    file_bytes = 8_030_261_248 * 4.8944 / 8
    # - token_embd.weight: 128256 x 4096 in Q4_K (144 bytes per 256 values, ggml block_q4_K); one token reads
    #   one row of it (get_rows), 4096 / 256 * 144 = 2304 bytes.
    embed_table, embed_row = 128_256 * 4096 // 256 * 144, 4096 // 256 * 144
    # - KV cache, f16: 32 layers x 8 KV heads x 128 dims x (K + V) x 2 bytes = 131072 bytes per token.
    kv = 32 * 8 * 128 * 2 * 2 * 8192
    hand_bytes = file_bytes - embed_table + embed_row + kv
    hand_bound = RTX_4090_GBS * 1e9 / hand_bytes  # about 177 tokens/s

    est = _llama8b()
    b = decode_bound(est)
    assert b.context == 8192
    assert b.bytes_per_token == pytest.approx(hand_bytes, rel=1e-4)
    assert b.tokens_per_s == pytest.approx(hand_bound, rel=1e-4)
    assert 170 < b.tokens_per_s < 185
    # and from the estimate's own figures: all GPU weights and the KV cache over the GPU's bandwidth, one
    # embedding row from the host over RAM
    gpu = est.devices[0].weights_bytes + est.kv_bytes_per_token * 8192
    seconds = gpu / (RTX_4090_GBS * 1e9) + embed_row / (DEFAULT_RAM_BANDWIDTH_GBS * 1e9)
    assert b.tokens_per_s == pytest.approx(1 / seconds, rel=1e-9)
    assert b.bytes_by_place == {"CUDA0": gpu, "CPU": embed_row}
    assert b.label == "upper bound" and "memory-bound" in b.basis and "1008 GB/s (catalog)" in b.basis
    assert "compute-bound" in b.note


def test_context_adds_the_kv_cache_read():
    est = _llama8b()
    at0, at8k = decode_bound(est, 0), decode_bound(est, 8192)
    assert at8k.bytes_per_token - at0.bytes_per_token == est.kv_bytes_per_token * 8192
    assert at0.tokens_per_s > at8k.tokens_per_s


def test_moe_reads_about_a_tenth_of_its_weights():
    # Qwen3-30B-A3B: 128 routed experts, 8 used per token (config.json); about 3B of 30B parameters active
    est = estimate("qwen3:30b-a3b", "llama.cpp", gpu="RTX 4090", n_ctx=8192, find_max_context=False)
    b = decode_bound(est, 0)
    share = b.bytes_per_token / est.weights_bytes
    assert 0.08 < share < 0.13
    # the same count as params_active, in bytes: dense tensors whole, experts 8/128, the embedding table one row
    spec = est.model
    embed = next(t for t in spec.weights.tensors if t.name == "token_embd.weight")
    expected = sum(t.nbytes * (8 / 128 if t.is_expert else 1) for t in spec.weights.tensors)
    expected -= embed.nbytes * (1 - 1 / spec.n_vocab)
    assert b.bytes_per_token == pytest.approx(expected, rel=1e-5)  # CUDA row padding of the expert tensors
    assert share == pytest.approx(spec.params_active / spec.params_total, abs=0.02)


def test_experts_moved_to_the_host_are_read_there():
    full = estimate("qwen3:30b-a3b", "llama.cpp", gpu="RTX 4090", n_ctx=8192, find_max_context=False)
    moved = estimate("qwen3:30b-a3b", "llama.cpp", gpu="RTX 4090", n_ctx=8192, n_cpu_moe=24,
                     find_max_context=False)
    a, b = decode_bound(full, 0), decode_bound(moved, 0)
    assert b.bytes_per_token == pytest.approx(a.bytes_per_token, rel=1e-5)  # the same bytes, another place
    assert moved.host.weights_bytes > 8e9
    # the host reads the used share of its experts (24 of 48 layers' experts, 8 of 128 each): far less than it holds
    assert 0.3e9 < b.bytes_by_place["CPU"] < 0.1 * moved.host.weights_bytes
    assert b.tokens_per_s < a.tokens_per_s
    assert b.tokens_per_s == pytest.approx(
        1 / (b.bytes_by_place["CUDA0"] / (RTX_4090_GBS * 1e9) + b.bytes_by_place["CPU"]
             / (DEFAULT_RAM_BANDWIDTH_GBS * 1e9)), rel=1e-3)


def test_offloaded_layers_are_slower_by_the_host_share_over_ram_bandwidth():
    full, off = _llama8b(), _llama8b(n_gpu_layers=16)
    assert off.host.weights_bytes > 2e9  # half the layers on the host
    a, b = decode_bound(full), decode_bound(off)
    assert b.bytes_per_token == pytest.approx(a.bytes_per_token, rel=1e-6)
    host = b.bytes_by_place["CPU"]
    # the host's own layers, plus its share of the KV cache, less the embedding table but one row
    kv_host = off.kv_bytes_per_token * 8192 * off.host.kv_cache_bytes / off.kv_cache_bytes
    assert host == pytest.approx(off.host.weights_bytes - (295_501_824 - 2304) + kv_host, rel=1e-6)
    slower = 1 / b.tokens_per_s - 1 / a.tokens_per_s
    assert slower == pytest.approx(host / (DEFAULT_RAM_BANDWIDTH_GBS * 1e9) - host / (RTX_4090_GBS * 1e9), rel=1e-3)
    assert b.tokens_per_s < a.tokens_per_s / 5
    # a faster RAM: only the host's seconds change
    c = decode_bound(off, ram_bandwidth_gbs=4 * DEFAULT_RAM_BANDWIDTH_GBS)
    assert c.seconds_by_place["CPU"] == pytest.approx(b.seconds_by_place["CPU"] / 4)
    assert c.seconds_by_place["CUDA0"] == pytest.approx(b.seconds_by_place["CUDA0"])
    assert "given" in c.basis and "assumed" in b.basis


def test_tensor_parallel_ranks_read_at_the_same_time():
    one = estimate("Qwen/Qwen3-30B-A3B", "vllm", gpu="H100 SXM", max_model_len=8192, find_max_context=False)
    two = estimate("Qwen/Qwen3-30B-A3B", "vllm", gpu="2x H100 SXM", tensor_parallel_size=2, max_model_len=8192,
                   find_max_context=False)
    a, b = decode_bound(one), decode_bound(two)
    assert b.seconds_by_place["CUDA0"] == pytest.approx(b.seconds_by_place["CUDA1"])
    assert b.tokens_per_s == pytest.approx(1 / b.seconds_by_place["CUDA0"])  # not the sum of the two
    assert b.tokens_per_s / a.tokens_per_s == pytest.approx(2, rel=0.05)
    assert "tensor-parallel" in b.basis and f"{H100_SXM_GBS:g} GB/s" in b.basis


def test_layer_split_devices_add_their_times():
    est = estimate("llama3.1:8b", "llama.cpp", quant="Q4_K_M", gpu="RTX 4090,RTX 3090", n_ctx=8192,
                   find_max_context=False)
    b = decode_bound(est)
    assert b.bytes_by_place["CUDA0"] > 1e9 and b.bytes_by_place["CUDA1"] > 1e9
    assert b.seconds_by_place["CUDA1"] == pytest.approx(b.bytes_by_place["CUDA1"] / 936e9)  # RTX 3090: 936 GB/s
    assert b.tokens_per_s == pytest.approx(1 / sum(b.seconds_by_place.values()), rel=1e-9)
    assert "tensor-parallel" not in b.basis


def test_sliding_window_layers_read_at_most_their_window():
    # gemma-3-12b: 48 layers, 8 full-attention, 40 sliding with a 1024-token window; 8 KV heads x 256 dims, f16
    est = estimate("gemma3:12b", "llama.cpp", gpu="RTX 4090", n_ctx=32768, find_max_context=False)
    per_full = 8 * 8 * 256 * 2 * 2  # 8 full layers, K + V, f16
    per_swa = 40 * 8 * 256 * 2 * 2
    assert est.kv_bytes_per_token == per_full
    b0, b512, b10k, b20k = (decode_bound(est, c).bytes_per_token for c in (0, 512, 10_000, 20_000))
    assert b512 - b0 == per_full * 512 + per_swa * 512
    assert b20k - b10k == per_full * 10_000  # past the window only the full layers grow
    assert b10k - b0 == per_full * 10_000 + per_swa * 1024


def test_unknown_gpu_bandwidth_gives_no_bound_unless_given():
    est = estimate("llama3.1:8b", "llama.cpp", quant="Q4_K_M", vram="24GiB", n_ctx=8192, find_max_context=False)
    b = decode_bound(est)
    assert b.tokens_per_s is None and b.text == "unknown"
    assert "CUDA0 unknown" in b.basis
    given = decode_bound(est, gpu_bandwidth_gbs=RTX_4090_GBS)
    assert given.tokens_per_s == pytest.approx(decode_bound(_llama8b()).tokens_per_s, rel=1e-6)


def test_cpu_only_reads_everything_over_ram():
    est = estimate("llama3.1:8b", "llama.cpp", quant="Q4_K_M", cpu_only=True, n_ctx=8192, find_max_context=False)
    b = decode_bound(est)
    assert set(b.seconds_by_place) == {"CPU"}
    assert b.tokens_per_s == pytest.approx(DEFAULT_RAM_BANDWIDTH_GBS * 1e9 / b.bytes_per_token)
    assert 12 < b.tokens_per_s < 20  # 89.6 GB/s over about 5.7 GB


def test_devices_carry_catalog_bandwidth():
    assert devices_for_names("RTX 4090")[0].bandwidth_gbs == RTX_4090_GBS
    assert with_facts(Device("CUDA0", "NVIDIA GeForce RTX 4090")).bandwidth_gbs == RTX_4090_GBS
    assert with_facts(Device("CUDA0", "NVIDIA GeForce RTX 4090", bandwidth_gbs=900.0)).bandwidth_gbs == 900.0
    assert with_facts(Device("CUDA0", "GPU")).bandwidth_gbs is None
    # the Devices given win over the catalog lookup by name
    est = _llama8b()
    slow = decode_bound(est, devices=(Device("CUDA0", "NVIDIA GeForce RTX 4090", bandwidth_gbs=504.0),))
    assert slow.tokens_per_s == pytest.approx(decode_bound(est).tokens_per_s / 2, rel=1e-5)


def test_bad_bandwidth_is_refused():
    with pytest.raises(OomkitError):
        decode_bound(_llama8b(), ram_bandwidth_gbs=0)
    with pytest.raises(OomkitError):
        decode_bound(_llama8b(), gpu_bandwidth_gbs=-1)


def test_speed_bound_serialises():
    b = decode_bound(_llama8b())
    assert isinstance(b, SpeedBound)
    d = b.to_dict()
    assert d["tokens_per_s"] == b.tokens_per_s and d["label"] == "upper bound"
    assert d["bytes_per_token"] == sum(d["bytes_by_place"].values())
    assert b.text.startswith("≤ ") and b.text.endswith(" tok/s")
