"""The Metal GPU of a macOS virtual machine, "Apple Paravirtual device" (GitHub Actions' hosted macOS runners):
a --gpu name the catalog knows, and the device ggml-metal finds without simdgroup reduction.

ggml-org/llama.cpp#8617 (ggerganov's quote of the runners' ggml_metal_init lines): 'GPU name: Apple Paravirtual
device', 'GPU family: MTLGPUFamilyCommon3 (3003)', 'simdgroup reduction support = false', 'hasUnifiedMemory =
true', 'recommendedMaxWorkingSetSize = 5010.80 MB'. The runners' 7 GB is GitHub's documented arm64 runner size;
2/3 of 7 GiB (macOS 13-15's default working set, memory.apple_default_gpu_share) is that 5010.80 MB."""

from oomkit.engines.llamacpp import compute
from oomkit.hardware import catalog
from oomkit.memory import apple_default_gpu_share

GiB = 1 << 30


def test_paravirtual_device_is_a_catalog_gpu():
    spec = catalog.lookup("Apple Paravirtual device")
    assert spec is not None and spec.vendor == "apple" and spec.unified_memory
    assert spec.memory_mib == 7 * 1024
    # #8617 prints recommendedMaxWorkingSetSize = 5010.80 MB (bytes / 1e6) on macOS 14
    assert round(apple_default_gpu_share(spec.memory_mib << 20, 14) / 1e6, 2) == 5010.80


def test_paravirtual_device_has_no_simdgroup_reduction():
    (device,) = catalog.devices_for_names("Apple Paravirtual device")
    assert device.name.startswith("Apple Paravirtual device")
    assert not compute.metal_simdgroup_reduction(device)
    (m1,) = catalog.devices_for_names("M1")
    assert compute.metal_simdgroup_reduction(m1)
