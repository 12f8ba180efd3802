"""GPU memory totals as the driver and the engines see them, for datacenter parts the catalog once held at their
marketed size. Each figure is a public print, cited in gpus.json's memory_source / cuda_total_source:

- NVIDIA GB300 (NVL72 trays): nvidia-smi 284208MiB (simone-chen/aiconfigurator systems/gb300.yaml at 865aa0e0,
  'mem_capacity: 298013687808 # 284208MiB reported by nvidia-smi'; nvidia-smi tables, drivers 580.82.07 / 580.105.08).
  Was 294,912 (288 x 1024), 3.6 % over.
- NVIDIA GB200: nvidia-smi 189471MiB (the same repository's gb200.yaml, 'mem_capacity: 198674743296 # 189471MiB
  reported by nvidia-smi'). Was 190,464.
- AMD Instinct MI355X / MI350X: rocm-smi VRAM Total 309220868096 B and torch total_memory 309220868096 (287.98 GiB, the
  total vLLM prints in 'Free memory on device cuda:4 (126.77/287.98 GiB)'). Was 294,912 MiB.
- NVIDIA GH200 144G HBM3e: nvidia-smi 146831 MiB. Was 147,456.
- NVIDIA H200 NVL: nvidia-smi 143771 MiB, the H200 SXM's figure (rareone0602/ruqola-server-deploy docs/h200-specs.md at
  1ee947c7, 4 cards on driver 575.57.08: 'nvidia-smi reports 143,771 MiB'; jingyu3535/2026_ETRI README.md at 0ba0996c,
  'NVIDIA H200 NVL (143771 MiB, driver 570.195.03)'). Was 144,384 (141 x 1024).
"""

from __future__ import annotations

import pytest

from oomkit.engines import vllm
from oomkit.hardware.catalog import devices_for_names, lookup

MiB = 1 << 20
GiB = 1 << 30


@pytest.mark.parametrize(("typed", "mib"), [
    ("GB300", 284208),
    ("GB200", 189471),
    ("MI355X", 294896),
    ("MI350X", 294896),
    ("NVIDIA GH200 144G HBM3e", 146831),
    ("H200 NVL", 143771),
    ("NVIDIA H200 NVL", 143771),
])
def test_driver_total(typed, mib):
    g = lookup(typed)
    assert g is not None and g.memory_mib == mib and g.memory_source_kind == "driver", typed
    assert g.memory_source, typed
    [dev] = devices_for_names(typed)
    assert dev.memory_bytes == mib * MiB


def test_gb300_prints_284208_mib():
    # 298013687808 B, aiconfigurator's mem_capacity, is 284208 MiB exactly: 277.55 GiB
    assert lookup("GB300").memory_mib * MiB == 298013687808
    assert round(298013687808 / GiB, 2) == 277.55


@pytest.mark.parametrize("typed", ["MI355X", "MI350X"])
def test_rocm_total_is_what_torch_reports(typed):
    # torch.cuda.get_device_properties(0).total_memory = 309220868096 on MI355X; vLLM prints it as 287.98 GiB
    [dev] = devices_for_names(typed)
    assert dev.cuda_total_bytes == 309220868096
    assert vllm.cuda_total(dev) == 309220868096
    assert f"{vllm.cuda_total(dev) / GiB:.2f}" == "287.98"


def test_h200_nvl_prints_what_the_sxm_prints():
    # both Hopper H200 parts carry 141 GB of HBM3e; nvidia-smi gives each 143771MiB (140.40 GiB)
    assert lookup("H200 NVL").memory_mib == lookup("H200").memory_mib == 143771
    assert f"{143771 / 1024:.2f}" == "140.40"
