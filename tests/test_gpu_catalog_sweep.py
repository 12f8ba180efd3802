"""The GPUs people run LLMs on, 2018-2026, as they type them into --gpu: GeForce RTX 20/30/40/50 (desktop and
laptop), Quadro RTX, RTX A-series, RTX Ada and RTX PRO Blackwell workstation cards, the data-centre parts (T4 to
GB300, Jetson), AMD Radeon / Radeon PRO / Instinct and Strix Halo, Intel Arc, Apple M1-M5 with their memory.

Each name resolves to the card it names with the memory the vendor sells it with (the GB figure of NVIDIA's, AMD's,
Intel's and Apple's spec pages; gpus.json cites each entry's page): a catalog size that is a driver reading lies a
few percent under it (what nvidia-smi / rocm-smi report of 24 GB: 24564 MiB of an RTX 4090, 23028 MiB of an A10,
15360 MiB of a T4's 16 GB, 125081 MiB of a DGX Spark's 128 GB), a nominal one is the size itself; a board that
shows the driver several GPUs (A16: four of 16 GB; MI250/MI250X: two GCDs of 64 GB) gives that many devices.

Of the first 330 names below, 56 were refused as unknown before the cards this sweep added (Quadro RTX 4000-8000, RTX A1000
and A5500, RTX 5050, RTX PRO 2000 and PRO 4000 SFF, V100S, GH200 144G, GB300, Radeon PRO W6800 / W7700, Instinct
MI60 / MI100 / MI350X, Ryzen AI Max 390 / 385, Arc Pro B50) and rules ("RTX 3090 w/ NVLink": the "w/" of a Ryzen
iGPU's name dropped the card in front; Apple core counts, "M3 Max (40-core GPU) 128GB"), 0 read as another card;
after, 15 unknown, 0 wrong. The laptop GPUs added since (RTX 2050, 2060, 2070, 2080 and their Super parts, 3050,
3050 Ti, 3070, 5050), with four more of their names, the RTX A2000 Laptop GPU (4 or 8 GB; one more name) and the 4 GB Jetson Orin Nano
module leave 2 of the 335 unknown (the GAPS below).
"""

from __future__ import annotations

import re

import pytest

from oomkit.errors import OomkitError
from oomkit.hardware import catalog
from oomkit.hardware.catalog import devices_for_names, lookup, refusal, resolve

MiB = 2**20
# what a driver keeps of a card's marketed size, at most: T4 15360 / 16384 MiB, A10 23028 / 24576 (0.937)
DRIVER_SHARE = 0.93

# (typed, GB per device as the vendor sells it, devices)
SWEEP = [
    # ---- GeForce RTX 20 (desktop), nvidia.com/en-us/geforce/graphics-cards/ spec pages
    ("RTX 2060", 6, 1), ("RTX 2060 12GB", 12, 1), ("RTX 2060 Super", 8, 1), ("RTX 2070", 8, 1),
    ("RTX 2070 Super", 8, 1), ("RTX 2080", 8, 1), ("RTX 2080 Super", 8, 1), ("RTX 2080 Ti", 11, 1),
    ("Titan RTX", 24, 1), ("NVIDIA GeForce RTX 2080 Ti", 11, 1), ("NVIDIA GeForce RTX 2060 SUPER", 8, 1),
    # ---- GeForce RTX 30
    ("RTX 3050", 8, 1), ("RTX 3050 6GB", 6, 1), ("RTX 3060", 12, 1), ("RTX 3060 8GB", 8, 1), ("RTX 3060 Ti", 8, 1),
    ("RTX 3070", 8, 1), ("RTX 3070 Ti", 8, 1), ("RTX 3080", 10, 1), ("RTX 3080 12GB", 12, 1), ("RTX 3080 Ti", 12, 1),
    ("RTX 3090", 24, 1), ("RTX 3090 Ti", 24, 1), ("NVIDIA GeForce RTX 3090", 24, 1), ("NVIDIA GeForce RTX 3060", 12, 1),
    ("RTX 2050 Laptop", 4, 1), ("RTX 2060 Laptop", 6, 1), ("RTX 2070 Laptop", 8, 1), ("RTX 2080 Laptop", 8, 1),
    ("RTX 2070 Super Laptop", 8, 1), ("RTX 2080 Super Laptop", 8, 1),
    ("NVIDIA GeForce RTX 2070 with Max-Q Design", 8, 1), ("GeForce RTX 2070 Super with Max-Q Design", 8, 1),
    ("RTX 3050 Laptop", 4, 1), ("RTX 3050 Laptop 6GB", 6, 1), ("RTX 3050 Ti Laptop", 4, 1), ("RTX 3070 Laptop", 8, 1),
    ("NVIDIA GeForce RTX 3070 Laptop GPU", 8, 1), ("RTX 5050 Laptop", 8, 1),
    ("NVIDIA GeForce RTX 5050 Laptop GPU", 8, 1),
    ("RTX 3060 Laptop", 6, 1), ("RTX 3070 Ti Laptop", 8, 1), ("RTX 3080 Laptop", 8, 1), ("RTX 3080 Ti Laptop", 16, 1),
    ("NVIDIA GeForce RTX 3060 Laptop GPU", 6, 1),
    ("RTX 3090 w/ NVLink", 24, 1), ("2x RTX 3090 w/ NVLink", 24, 2), ("RTX 3090 NVLink", 24, 1),
    ("2x RTX 3090 NVLink", 24, 2),
    # ---- GeForce RTX 40
    ("RTX 4060", 8, 1), ("RTX 4060 Ti", 8, 1), ("RTX 4060 Ti 16GB", 16, 1), ("RTX 4060 Ti 8GB", 8, 1),
    ("4060 Ti 16GB", 16, 1), ("RTX 4070", 12, 1), ("RTX 4070 Super", 12, 1), ("RTX 4070 Ti", 12, 1),
    ("RTX 4070 Ti Super", 16, 1), ("RTX 4080", 16, 1), ("RTX 4080 Super", 16, 1), ("RTX 4090", 24, 1),
    ("RTX 4090 D", 24, 1), ("NVIDIA GeForce RTX 4060 Ti", 8, 1), ("NVIDIA GeForce RTX 4090", 24, 1),
    ("RTX 4050 Laptop", 6, 1), ("RTX 4060 Laptop", 8, 1), ("RTX 4070 Laptop", 8, 1), ("RTX 4080 Laptop", 12, 1),
    ("RTX 4090 Laptop", 16, 1), ("NVIDIA GeForce RTX 4090 Laptop GPU", 16, 1),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", 8, 1),
    # ---- GeForce RTX 50
    ("RTX 5050", 8, 1), ("RTX 5060", 8, 1), ("RTX 5060 Ti", 8, 1), ("RTX 5060 Ti 8GB", 8, 1),
    ("RTX 5060 Ti 16GB", 16, 1), ("5060 Ti 16GB", 16, 1), ("RTX 5070", 12, 1), ("RTX 5070 Ti", 16, 1),
    ("RTX 5080", 16, 1), ("RTX 5090", 32, 1), ("NVIDIA GeForce RTX 5060 Ti", 8, 1), ("NVIDIA GeForce RTX 5050", 8, 1),
    ("RTX 5060 Laptop", 8, 1), ("RTX 5070 Laptop", 8, 1), ("RTX 5070 Ti Laptop", 12, 1), ("RTX 5080 Laptop", 16, 1),
    ("RTX 5090 Laptop", 24, 1), ("RTX 5090 Laptop 24GB", 24, 1), ("NVIDIA GeForce RTX 5090 Laptop GPU", 24, 1),
    ("5090 mobile", 24, 1),
    # ---- Quadro RTX (Turing), RTX A-series (Ampere), RTX Ada, RTX PRO Blackwell
    ("Quadro RTX 4000", 8, 1), ("Quadro RTX 5000", 16, 1), ("Quadro RTX 6000", 24, 1), ("Quadro RTX 8000", 48, 1),
    ("NVIDIA Quadro RTX 8000", 48, 1), ("NVIDIA Quadro RTX 6000", 24, 1), ("Quadro RTX8000", 48, 1),
    ("2x Quadro RTX 8000", 48, 2), ("Quadro RTX 8000 NVLink", 48, 1),
    ("RTX A2000 Laptop", 4, 1), ("NVIDIA RTX A2000 8GB Laptop GPU", 8, 1),
    ("RTX A1000", 8, 1), ("RTX A2000", 6, 1), ("RTX A2000 12GB", 12, 1), ("NVIDIA RTX A2000 12GB", 12, 1),
    ("RTX A4000", 16, 1), ("RTX A4500", 20, 1), ("RTX A5000", 24, 1), ("RTX A5500", 24, 1),
    ("NVIDIA RTX A5500", 24, 1), ("RTX A6000", 48, 1), ("NVIDIA RTX A6000", 48, 1), ("A6000", 48, 1),
    ("RTX 2000 Ada", 16, 1), ("NVIDIA RTX 2000 Ada Generation", 16, 1), ("RTX 4000 Ada", 20, 1),
    ("RTX 4000 SFF Ada", 20, 1), ("RTX 4500 Ada", 24, 1), ("RTX 5000 Ada", 32, 1),
    ("NVIDIA RTX 5000 Ada Generation", 32, 1), ("RTX 6000 Ada", 48, 1), ("NVIDIA RTX 6000 Ada Generation", 48, 1),
    ("RTX PRO 2000", 16, 1), ("RTX PRO 2000 Blackwell", 16, 1), ("NVIDIA RTX PRO 2000 Blackwell", 16, 1),
    ("RTX PRO 4000", 24, 1), ("NVIDIA RTX PRO 4000 Blackwell", 24, 1), ("RTX PRO 4000 Blackwell SFF Edition", 24, 1),
    ("RTX PRO 4500", 32, 1), ("NVIDIA RTX PRO 4500 Blackwell", 32, 1), ("RTX PRO 5000", 48, 1),
    ("NVIDIA RTX PRO 5000 Blackwell", 48, 1), ("RTX PRO 6000", 96, 1), ("RTX PRO 6000 Max-Q", 96, 1),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 96, 1),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, 1), ("RTX PRO 6000 Server", 96, 1),
    # ---- data centre
    ("T4", 16, 1), ("Tesla T4", 16, 1), ("V100", 16, 1), ("V100 16GB", 16, 1), ("V100 32GB", 32, 1),
    ("Tesla V100-PCIE-16GB", 16, 1), ("Tesla V100-SXM2-16GB", 16, 1), ("Tesla V100-PCIE-32GB", 32, 1),
    ("Tesla V100-SXM2-32GB", 32, 1), ("Tesla V100S-PCIE-32GB", 32, 1), ("V100 SXM2 32GB", 32, 1),
    ("V100 PCIe 32GB", 32, 1),
    ("A10", 24, 1), ("A10G", 24, 1), ("NVIDIA A10G", 24, 1), ("A16", 16, 4), ("NVIDIA A16", 16, 4), ("A30", 24, 1),
    ("NVIDIA A30", 24, 1), ("A40", 48, 1),
    ("A100 40GB", 40, 1), ("A100 80GB", 80, 1), ("A100 PCIe 40GB", 40, 1), ("A100 PCIe 80GB", 80, 1),
    ("A100 SXM 40GB", 40, 1), ("A100 SXM 80GB", 80, 1), ("A100 SXM4 80GB", 80, 1), ("NVIDIA A100-PCIE-40GB", 40, 1),
    ("NVIDIA A100 80GB PCIe", 80, 1), ("NVIDIA A100-SXM4-80GB", 80, 1), ("NVIDIA A100-SXM4-40GB", 40, 1),
    ("A100-80GB", 80, 1), ("A100-40GB", 40, 1),
    ("L4", 24, 1), ("NVIDIA L4", 24, 1), ("L20", 48, 1), ("L40", 48, 1), ("L40S", 48, 1), ("NVIDIA L40S", 48, 1),
    ("H20", 96, 1), ("NVIDIA H20", 96, 1), ("H100", 80, 1), ("H100 PCIe", 80, 1), ("H100 SXM", 80, 1),
    ("H100 SXM5", 80, 1), ("H100 NVL", 94, 1), ("NVIDIA H100 80GB HBM3", 80, 1), ("NVIDIA H100 PCIe", 80, 1),
    ("NVIDIA H100 NVL", 94, 1), ("H100 80GB PCIe", 80, 1), ("H100-80GB", 80, 1),
    ("H200", 141, 1), ("H200 NVL", 141, 1), ("NVIDIA H200 NVL", 141, 1), ("H200 SXM", 141, 1), ("GH200", 96, 1),
    ("GH200 HBM3e", 144, 1), ("NVIDIA GH200 144G HBM3e", 144, 1),
    ("B200", 180, 1), ("NVIDIA B200", 180, 1), ("B300", 288, 1), ("GB200", 186, 1), ("GB300", 288, 1),
    ("DGX Spark", 128, 1), ("GB10", 128, 1), ("NVIDIA GB10", 128, 1),
    ("Jetson Orin Nano", 8, 1), ("Jetson Orin Nano 4GB", 4, 1), ("Jetson Orin NX 16GB", 16, 1), ("Jetson Orin NX 8GB", 8, 1),
    ("Jetson AGX Orin 32GB", 32, 1), ("Jetson AGX Orin 64GB", 64, 1), ("Jetson AGX Thor", 128, 1),
    ("Jetson Thor", 128, 1),
    # ---- AMD Radeon, Radeon PRO, Instinct, Strix Halo
    ("RX 6800", 16, 1), ("RX 6800 XT", 16, 1), ("RX 6900 XT", 16, 1), ("RX 6950 XT", 16, 1), ("RX 7600", 8, 1),
    ("RX 7600 XT", 16, 1), ("RX 7700 XT", 12, 1), ("RX 7800 XT", 16, 1), ("RX 7900 GRE", 16, 1),
    ("RX 7900 XT", 20, 1), ("RX 7900 XTX", 24, 1), ("AMD Radeon RX 7900 XTX", 24, 1),
    ("AMD Radeon RX 7800 XT", 16, 1), ("AMD Radeon RX 7600 XT", 16, 1),
    ("RX 9060 XT", 8, 1), ("RX 9060 XT 16GB", 16, 1), ("RX 9070", 16, 1), ("RX 9070 XT", 16, 1),
    ("AMD Radeon RX 9070", 16, 1), ("R9700", 32, 1), ("Radeon AI PRO R9700", 32, 1),
    ("AMD Radeon AI PRO R9700", 32, 1),
    ("Radeon PRO W7800", 32, 1), ("W7800", 32, 1), ("Radeon PRO W7900", 48, 1), ("AMD Radeon PRO W7900", 48, 1),
    ("W7900", 48, 1), ("W6800", 32, 1), ("Radeon PRO W6800", 32, 1), ("AMD Radeon PRO W7700", 16, 1),
    ("MI50", 16, 1), ("MI50 32GB", 32, 1), ("MI60", 32, 1), ("AMD Instinct MI60", 32, 1), ("MI100", 32, 1),
    ("AMD Instinct MI100", 32, 1), ("MI210", 64, 1), ("AMD Instinct MI210", 64, 1), ("MI250", 64, 2),
    ("MI250X", 64, 2), ("MI300X", 192, 1), ("AMD Instinct MI300X", 192, 1), ("MI325X", 256, 1), ("MI350X", 288, 1),
    ("MI355X", 288, 1), ("AMD Instinct MI355X", 288, 1),
    ("Strix Halo", 32, 1), ("Strix Halo 128GB", 128, 1), ("Ryzen AI Max+ 395 128GB", 128, 1),
    ("AMD Ryzen AI Max+ 395", 32, 1), ("Ryzen AI Max 390 64GB", 64, 1), ("Ryzen AI Max 385 32GB", 32, 1),
    ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", 32, 1),
    # ---- Intel Arc
    ("Arc A770", 8, 1), ("Arc A770 16GB", 16, 1), ("Intel Arc A770", 8, 1), ("Arc A750", 8, 1), ("Arc B580", 12, 1),
    ("Intel Arc B580", 12, 1), ("Intel(R) Arc(TM) B580 Graphics", 12, 1), ("Arc B570", 10, 1),
    ("Arc Pro B60", 24, 1), ("Intel Arc Pro B60", 24, 1), ("B60 Pro", 24, 1), ("Arc B60 Pro", 24, 1),
    ("Intel Arc Pro B60 Graphics", 24, 1), ("Intel(R) Arc(TM) Pro B60 Graphics", 24, 1), ("Arc Pro B50", 16, 1),
    ("Intel Arc Pro B50", 16, 1),
    # ---- Apple M1-M5, with the memory each is sold with
    ("M1 8GB", 8, 1), ("M1 16GB", 16, 1), ("M1 Pro 16GB", 16, 1), ("M1 Pro 32GB", 32, 1), ("M1 Max 32GB", 32, 1),
    ("M1 Max 64GB", 64, 1), ("M1 Ultra 64GB", 64, 1), ("M1 Ultra 128GB", 128, 1),
    ("M2 8GB", 8, 1), ("M2 24GB", 24, 1), ("M2 Pro 16GB", 16, 1), ("M2 Pro 32GB", 32, 1), ("M2 Max 32GB", 32, 1),
    ("M2 Max 64GB", 64, 1), ("M2 Max 96GB", 96, 1), ("M2 Ultra 64GB", 64, 1), ("M2 Ultra 128GB", 128, 1),
    ("M2 Ultra 192GB", 192, 1),
    ("M3 8GB", 8, 1), ("M3 16GB", 16, 1), ("M3 24GB", 24, 1), ("M3 Pro 18GB", 18, 1), ("M3 Pro 36GB", 36, 1),
    ("M3 Max 36GB", 36, 1), ("M3 Max 48GB", 48, 1), ("M3 Max 64GB", 64, 1), ("M3 Max 96GB", 96, 1),
    ("M3 Max 128GB", 128, 1), ("M3 Ultra 96GB", 96, 1), ("M3 Ultra 256GB", 256, 1), ("M3 Ultra 512GB", 512, 1),
    ("M4 16GB", 16, 1), ("M4 24GB", 24, 1), ("M4 32GB", 32, 1), ("M4 Pro 24GB", 24, 1), ("M4 Pro 48GB", 48, 1),
    ("M4 Pro 64GB", 64, 1), ("M4 Max 36GB", 36, 1), ("M4 Max 48GB", 48, 1), ("M4 Max 64GB", 64, 1),
    ("M4 Max 128GB", 128, 1),
    ("M5 16GB", 16, 1), ("M5 24GB", 24, 1), ("M5 32GB", 32, 1), ("M5 Pro 48GB", 48, 1), ("M5 Max 128GB", 128, 1),
    ("Apple M4 Max 128GB", 128, 1), ("Mac Studio M3 Ultra 512GB", 512, 1), ("MacBook Pro M4 Max 128GB", 128, 1),
    ("Mac mini M4 Pro 64GB", 64, 1), ("M2 Max 38-core 96GB", 96, 1), ("M3 Max (40-core GPU) 128GB", 128, 1),
]

# still unknown: (typed, GB per device as sold, why it stays unknown)
GAPS = [
    ("RTX A5000 Laptop", 16, "RTX A-series laptop GPUs (A5000 Laptop: 16 GB) are not in the catalog"),
    ("MI300A", 128, "the MI300A APU (128 GB HBM3 shared with its CPU) is not in the catalog"),
]


@pytest.mark.parametrize("text, gb, count", SWEEP, ids=[r[0] for r in SWEEP])
def test_a_gpu_people_run_llms_on_resolves_to_the_memory_it_is_sold_with(text, gb, count):
    devices = devices_for_names(text)
    assert len(devices) == count
    for d in devices:
        mib = d.memory_bytes / MiB
        assert gb * 1024 * DRIVER_SHARE <= mib <= gb * 1024, (d.name, mib)
        # the card named, never another: its model number is in the device's name
        # (the size and an Apple chip's core count, "38-core", are no model number)
        bare = re.sub(r"\s*\d+\s*GB$|\(?\d+ CORE( [GC]PU)?\)?", "", text.upper().replace("-", " "))
        number = re.search(r"\b[A-Z]*\d{2,}[A-Z]*\b", bare)
        if number and not number.group().endswith("GB"):
            assert number.group() in d.name.upper().replace("-", " ").replace(" ", "") or \
                number.group() in d.name.upper(), (text, d.name)


@pytest.mark.parametrize("text, gb, why", [pytest.param(*g, marks=pytest.mark.xfail(strict=True, reason=g[2]))
                                           for g in GAPS], ids=[g[0] for g in GAPS])
def test_the_names_still_unknown(text, gb, why):
    (d,) = devices_for_names(text)
    assert d.memory_bytes == gb * 1024 * MiB


def test_the_sweep_is_broad():
    assert len(SWEEP) + len(GAPS) >= 320
    vendors = {devices_for_names(t)[0].id.rstrip("0123456789") for t, *_ in SWEEP}
    assert vendors == {"CUDA", "ROCm", "SYCL", "MTL"}


# ---- the cards this sweep added, with the figures their sources give ------------------------------------------

@pytest.mark.parametrize("text, name, mib, kind", [
    # nvidia-smi, driver 535.129.03: "Quadro RTX 4000 ... 1MiB /  8192MiB" (akash-network/provider-configs#12)
    ("NVIDIA Quadro RTX 4000", "NVIDIA Quadro RTX 4000", 8192, "driver"),
    # NVIDIA's Quadro RTX datasheets: 16, 24 and 48 GB GDDR6
    ("Quadro RTX 5000", "NVIDIA Quadro RTX 5000", 16384, "nominal"),
    ("Quadro RTX 6000", "NVIDIA Quadro RTX 6000", 24576, "nominal"),
    ("Quadro RTX 8000", "NVIDIA Quadro RTX 8000", 49152, "nominal"),
    ("RTX A5500", "NVIDIA RTX A5500", 24576, "nominal"),
    ("Tesla V100S-PCIE-32GB", "NVIDIA Tesla V100S 32GB", 32768, "nominal"),
    ("MI100", "AMD Instinct MI100", 32768, "nominal"),
    ("Arc Pro B50", "Intel Arc Pro B50", 16384, "nominal"),
])
def test_an_added_card(text, name, mib, kind):
    spec = lookup(text)
    assert (spec.name, spec.memory_mib, spec.memory_source_kind) == (name, mib, kind)
    assert spec.source.startswith("https://")
    assert kind == "nominal" or "nvidia-smi" in spec.memory_source


def test_the_nvlink_bridge_after_w_slash_is_not_a_cpu_name():
    # "w/" before a Ryzen iGPU drops the CPU named in front ("AMD Ryzen 7 8845H w/ Radeon 780M"); before NVLink it
    # is the bridge, which names no card: the card in front stays
    assert [d.name for d in devices_for_names("2x RTX 3090 w/ NVLink")] == ["NVIDIA GeForce RTX 3090"] * 2
    assert resolve("RTX 3090 w/NVLink").spec.name == "NVIDIA GeForce RTX 3090"
    with pytest.raises(OomkitError, match="integrated GPU"):
        devices_for_names("AMD Ryzen 7 8845H w/ Radeon 780M Graphics")


def test_a_number_three_workstation_cards_share_stays_unknown():
    # "RTX 6000": the Quadro RTX 6000 (24 GB), the RTX 6000 Ada (48 GB) or the RTX PRO 6000 (96 GB); "RTX 5000":
    # 16, 32 or 48 GB -- no one size, so no one card
    for number in (6000, 5000):
        assert not resolve(f"RTX {number}").known
        assert "unknown GPU" in refusal(f"RTX {number}")
    assert "RTX 6000 Ada" in refusal("RTX 6000") and "RTX PRO 6000" in refusal("RTX 6000")


def test_the_apple_core_count_is_not_read_as_a_chip():
    assert devices_for_names("M3 Max (40-core GPU) 128GB")[0].memory_bytes == 128 * 1024 * MiB
    assert devices_for_names("M2 Max 38-core 96GB")[0].name == "Apple M2 Max 96GB"


def test_the_added_amd_cards_have_their_architecture():
    assert catalog._gfx_target(lookup("MI100")) == "gfx908"
    assert catalog._gfx_target(lookup("MI60")) == "gfx906"
    assert catalog._gfx_target(lookup("Radeon PRO W6800")) == "gfx1030"
    with pytest.raises(OomkitError, match=r"architecture.*MI100 \(32 GB\)"):
        devices_for_names("gfx908")
