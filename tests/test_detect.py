"""Device detection (oomkit.hardware.detect): recorded outputs of the real tools (nvidia-smi CSV, rocm-smi JSON,
sysctl, sysfs), a fake NVML at the library boundary, and tools that crash, hang or print garbage."""

import json
import subprocess
import sys

import pytest

from oomkit.hardware.detect import (
    NVIDIA_SMI_QUERY,
    Probe,
    ProbeFailed,
    apple_default_gpu_share,
    detect,
    host_memory,
    parse_nvidia_smi_csv,
    parse_rocm_smi_json,
)
from tests.hardware_fakes import (
    FIXTURES,
    GiB,
    MiB,
    amd_sysfs,
    fake_nvml,
    oomkit_env,
    recorded,
    replay,
    rtx4090,
    run_oomkit,
)

NO_DRIVER = (9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
                "latest NVIDIA driver is installed and running.\n")
MISMATCH = (18, "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.120\n")


# ---------------------------------------------------------------------------------------------------------
# nvidia-smi


def test_nvidia_smi_recorded_a10g_with_header_and_units():
    (g,) = parse_nvidia_smi_csv(recorded("nvidia-smi/a10g_with_header_units.csv"))
    assert (g.index, g.name, g.source) == (0, "NVIDIA A10G", "nvidia-smi")
    assert (g.total_bytes, g.used_bytes, g.free_bytes) == (23028 * MiB, 22403 * MiB, 215 * MiB)
    assert g.reserved_bytes == 410 * MiB  # total − used − free: the driver's own reserve
    assert g.budget_bytes == 215 * MiB and g.device().memory_bytes == 215 * MiB


def test_nvidia_smi_recorded_two_a6000_and_eight_a800():
    a, b = parse_nvidia_smi_csv(recorded("nvidia-smi/2x_rtx_a6000.csv"))
    assert [a.id, b.id] == ["CUDA0", "CUDA1"]
    assert (a.free_bytes, b.free_bytes) == (48507 * MiB, 48521 * MiB) and a.reserved_bytes == 598 * MiB
    gpus = parse_nvidia_smi_csv(recorded("nvidia-smi/8x_a800_sxm4_80gb.csv"))
    assert len(gpus) == 8 and gpus[6].used_bytes == 74829 * MiB and gpus[6].free_bytes == 6399 * MiB
    assert {g.reserved_bytes for g in gpus} == {692 * MiB}


@pytest.mark.parametrize("text", [
    "",
    "garbage\n",
    "0, NVIDIA GeForce RTX 4090, 24564, 12\n",  # a column missing
    "0, NVIDIA GeForce RTX 4090, 24564, abc, 12000\n",
    "x, NVIDIA GeForce RTX 4090, 24564, 1, 12000\n",
    "0, NVIDIA GeForce RTX 4090, -5, 1, 12000\n",
    "\x00\x01\x02\n",
])
def test_nvidia_smi_garbage_is_a_clear_failure(text):
    with pytest.raises(ProbeFailed) as e:
        parse_nvidia_smi_csv(text)
    assert "nvidia-smi" in str(e.value) and "\n" not in str(e.value)


def test_nvidia_smi_not_available_fields_are_unknown():
    (g,) = parse_nvidia_smi_csv("0, NVIDIA GB10, [N/A], [N/A], [N/A]\n")
    assert g.total_bytes is None and g.budget_bytes is None
    assert detect(replay({"nvidia-smi": (0, "0, NVIDIA GB10, [N/A], [N/A], [N/A]\n")})).devices() == ()


def test_detect_falls_back_to_nvidia_smi_without_nvml_library():
    hw = detect(replay({"nvidia-smi": (0, recorded("nvidia-smi/2x_rtx_a6000.csv"))}))
    assert [g.source for g in hw.gpus] == ["nvidia-smi", "nvidia-smi"]
    assert hw.notes == () and hw.errors == () and not hw.failed  # NVML absent is not a failure
    assert hw.gpus[0].bandwidth_gbs == 768 and hw.gpus[0].catalog_name == "NVIDIA RTX A6000"
    assert hw.host.total_bytes == 64 * GiB and hw.host.swap_total_bytes == 8 * GiB
    d = hw.devices()
    assert [x.id for x in d] == ["CUDA0", "CUDA1"] and d[0].memory_bytes == d[0].free_bytes == 48507 * MiB


def test_detect_uses_the_exact_query():
    seen = []

    def run_fn(argv, **kw):
        seen.append(argv)
        assert kw["timeout"] <= 5
        return subprocess.CompletedProcess(argv, 0, stdout=recorded("nvidia-smi/2x_rtx_a6000.csv"), stderr="")

    probe = replay({"nvidia-smi": (0, "")})
    probe.run_fn = run_fn
    detect(probe)
    assert seen == [["/usr/bin/nvidia-smi", *NVIDIA_SMI_QUERY[1:]]]


def test_no_nvidia_gpu_is_a_normal_answer():
    for answer in [(6, "No devices were found\n"), NO_DRIVER]:
        hw = detect(replay({"nvidia-smi": answer}))
        assert hw.gpus == () and not hw.failed and hw.errors == ()
    hw = detect(replay({}))  # nothing installed at all
    assert hw.gpus == () and not hw.failed


@pytest.mark.parametrize("answer,words", [
    (MISMATCH, "exited with status 18: Failed to initialize NVML: Driver/library version mismatch"),
    ((-11, ""), "crashed (signal 11)"),
    (subprocess.TimeoutExpired(["nvidia-smi"], 4), "did not answer within"),
    (OSError(8, "Exec format error"), "could not be started"),
    ((0, "<html>proxy error</html>\n"), "cannot read"),
])
def test_nvidia_smi_that_crashes_hangs_or_prints_garbage_fails_clearly(answer, words):
    hw = detect(replay({"nvidia-smi": answer}))
    assert hw.failed and len(hw.errors) == 1
    assert hw.errors[0].startswith("NVIDIA nvidia-smi: ") and words in hw.errors[0]
    assert "\n" not in hw.errors[0]


# ---------------------------------------------------------------------------------------------------------
# NVML (the fake pynvml at the library boundary)


def test_nvml_reads_free_used_reserve_and_processes(monkeypatch):
    nv = fake_nvml({"gpus": [rtx4090(free=20000 * MiB, used=4000 * MiB,
                                     processes=[{"pid": 4242, "used": 3500 * MiB}, {"pid": 77, "used": None}])]})
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    probe = replay({"nvidia-smi": (0, "must not be called")}, modules={"pynvml": nv})
    hw = detect(probe, processes=True)
    (g,) = hw.gpus
    assert (g.source, g.id, g.name) == ("nvml", "CUDA0", "NVIDIA GeForce RTX 4090")
    assert (g.total_bytes, g.free_bytes, g.used_bytes) == (24564 * MiB, 20000 * MiB, 4000 * MiB)
    assert g.reserved_bytes == 564 * MiB and g.bandwidth_gbs == 1008
    assert [(p.pid, p.used_bytes) for p in g.processes] == [(4242, 3500 * MiB), (77, None)]
    assert hw.notes == () and not hw.failed


def test_nvml_through_sys_modules(monkeypatch):
    """The default Probe imports pynvml: a fake one in sys.modules is what it gets."""
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml({"gpus": [rtx4090(free=[23000 * MiB], used=1000 * MiB)]}))
    hw = detect(Probe(which=lambda _: None))
    assert [g.free_bytes for g in hw.gpus] == [23000 * MiB]


def test_nvml_without_v2_memory_falls_back_to_v1(monkeypatch):
    nv = fake_nvml({"gpus": [rtx4090(free=20000 * MiB, used=4000 * MiB)]})
    del nv.nvmlMemory_v2  # an old nvidia-ml-py
    (g,) = detect(replay({}, modules={"pynvml": nv})).gpus
    assert g.used_bytes == 4564 * MiB and g.reserved_bytes == 0  # v1 folds the reserve into used


def test_nvml_failure_falls_back_to_nvidia_smi_and_says_so():
    nv = fake_nvml({"init_error": 999, "gpus": []})
    hw = detect(replay({"nvidia-smi": (0, recorded("nvidia-smi/a10g_with_header_units.csv"))}, modules={"pynvml": nv}))
    assert [g.source for g in hw.gpus] == ["nvidia-smi"] and not hw.failed
    assert hw.notes == ("NVIDIA: NVML: nvmlInit failed: Unknown Error; used nvidia-smi instead",)


def test_nvml_error_midway_falls_back():
    nv = fake_nvml({"count_error": 15, "gpus": [rtx4090(1, 1)]})  # GPU is lost
    hw = detect(replay({"nvidia-smi": (0, recorded("nvidia-smi/2x_rtx_a6000.csv"))}, modules={"pynvml": nv}))
    assert len(hw.gpus) == 2 and "NVML" in hw.notes[0]


def test_both_nvidia_methods_failing_is_a_failure():
    nv = fake_nvml({"init_error": 999, "gpus": []})
    hw = detect(replay({"nvidia-smi": MISMATCH}, modules={"pynvml": nv}))
    assert hw.failed and [e.split(":")[0] for e in hw.errors] == ["NVIDIA NVML", "NVIDIA nvidia-smi"]


def test_no_pynvml_installed_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    probe = replay({"nvidia-smi": (0, recorded("nvidia-smi/2x_rtx_a6000.csv"))})
    del probe.modules["pynvml"]
    hw = detect(probe)
    assert [g.source for g in hw.gpus] == ["nvidia-smi", "nvidia-smi"] and hw.notes == ()


# ---------------------------------------------------------------------------------------------------------
# AMD: amdsmi -> rocm-smi -> sysfs, tried where sysfs shows an AMD device


def test_rocm_smi_recorded_rx_7900_xt(tmp_path):
    (g,) = parse_rocm_smi_json(recorded("rocm-smi/rx_7900_xt.json"))
    assert (g.name, g.vendor, g.id) == ("Radeon RX 7900 XT", "amd", "ROCm0")
    assert (g.total_bytes, g.used_bytes, g.free_bytes) == (21458059264, 27856896, 21458059264 - 27856896)
    sysfs = amd_sysfs(tmp_path, [{"total": 1, "used": 0}])
    hw = detect(replay({"rocm-smi": (0, recorded("rocm-smi/rx_7900_xt.json"))}, sysfs=sysfs))
    (g,) = hw.gpus
    assert g.source == "rocm-smi" and g.bandwidth_gbs == 800 and g.catalog_name == "AMD Radeon RX 7900 XT"


def test_rocm_smi_warning_before_the_json_and_older_key_spelling():
    text = ("WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n\n"
            '{"card0": {"VRAM Total Memory (B)": "25753026560", "VRAM Total Used Memory (B)": "1073741824", '
            '"Card series": "Navi 31 [Radeon RX 7900 XTX]"}}')
    (g,) = parse_rocm_smi_json(text)
    assert g.name == "Navi 31 [Radeon RX 7900 XTX]" and g.free_bytes == 25753026560 - (1 << 30)


@pytest.mark.parametrize("text", ["", "not json", "{}", '{"card0": {"GPU use (%)": "0"}}', "[1, 2]",
                                  '{"card0": {"VRAM Total Memory (B)": "lots", "VRAM Total Used Memory (B)": "1"}}'])
def test_rocm_smi_garbage_fails(text):
    with pytest.raises(ProbeFailed):
        parse_rocm_smi_json(text)


def test_rocm_smi_garbage_falls_back_to_sysfs(tmp_path):
    sysfs = amd_sysfs(tmp_path, [{"total": 21458059264, "used": 27856896}])
    hw = detect(replay({"rocm-smi": (0, "Segmentation fault\n")}, sysfs=sysfs))
    (g,) = hw.gpus
    assert g.source == "sysfs" and g.name == "AMD GPU (device 0x744c)" and g.free_bytes == 21458059264 - 27856896
    assert hw.notes and hw.notes[0].startswith("AMD: rocm-smi: rocm-smi printed something oomkit cannot read")


def test_amdsmi_first(tmp_path):
    class AmdSmi:
        class AmdSmiMemoryType:
            VRAM = 0

        def amdsmi_init(self):
            pass

        def amdsmi_shut_down(self):
            pass

        def amdsmi_get_processor_handles(self):
            return ["h0"]

        def amdsmi_get_gpu_memory_total(self, h, kind):
            return 192 * GiB

        def amdsmi_get_gpu_memory_usage(self, h, kind):
            return 2 * GiB

        def amdsmi_get_gpu_asic_info(self, h):
            return {"market_name": "AMD Instinct MI300X"}

    sysfs = amd_sysfs(tmp_path, [{"total": 1, "used": 0}])
    hw = detect(replay({}, modules={"amdsmi": AmdSmi()}, sysfs=sysfs))
    (g,) = hw.gpus
    assert (g.source, g.name, g.free_bytes) == ("amdsmi", "AMD Instinct MI300X", 190 * GiB)


def test_no_amd_device_in_sysfs_means_amd_tools_are_not_asked(tmp_path):
    sysfs = amd_sysfs(tmp_path, [{"vendor": "0x8086"}])  # an Intel iGPU
    hw = detect(replay({"rocm-smi": (1, "ERROR: No AMD GPUs specified")}, sysfs=sysfs))
    assert hw.gpus == () and not hw.failed


def test_amd_all_methods_failing(tmp_path):
    sysfs = amd_sysfs(tmp_path, [{"device": "0x744c"}])  # an AMD card without mem_info files
    (sysfs / "class/drm/card0/device/mem_info_vram_total").write_text("garbage")
    (sysfs / "class/drm/card0/device/mem_info_vram_used").write_text("1")
    hw = detect(replay({"rocm-smi": (-6, "")}, sysfs=sysfs))
    assert hw.failed and hw.errors[0].startswith("AMD rocm-smi: rocm-smi crashed (signal 6)")


# ---------------------------------------------------------------------------------------------------------
# Apple silicon: sysctl


def test_apple_wired_limit_set():
    probe = replay({"sysctl hw.memsize": (0, recorded("sysctl/apple_m1_max_32gb.txt")),
                    "sysctl -n": (0, recorded("sysctl/iogpu_wired_limit_mb_26000.txt"))}, platform="darwin")
    hw = detect(probe)
    (g,) = hw.gpus
    assert (g.id, g.name, g.vendor, g.unified_memory) == ("MTL0", "Apple M1 Max", "apple", True)
    assert g.total_bytes == 26000 * MiB  # llama-server: "MTL0: Apple M1 Max (26000 MiB, 25999 MiB free)"
    assert g.free_bytes == 26000 * MiB  # the fake host has 40 GiB available
    assert g.bandwidth_gbs == 400 and any("iogpu.wired_limit_mb = 26000" in n for n in g.notes)


def test_apple_default_share_and_ram_available():
    probe = replay({"sysctl hw.memsize": (0, recorded("sysctl/apple_m1_max_32gb.txt")),
                    "sysctl -n": (0, recorded("sysctl/iogpu_wired_limit_mb_default.txt"))}, platform="darwin")
    (g,) = detect(probe).gpus
    # the recorded sysctl prints no kern.osproductversion: the newest macOS's share, 0.78 of 32 GiB ("26800.60 MB",
    # tests/test_metal_working_set.py); macOS 15's is 2/3 (22906.50 MB), both rounded up to a 16 KiB page
    assert round(g.total_bytes / 1e6, 2) == 26800.60 and any("estimated" in n for n in g.notes)
    assert apple_default_gpu_share(128 * GiB) == 115_448_725_504  # 107.52 GiB, antirez/ds4#893 on macOS 26
    assert apple_default_gpu_share(16 * GiB, 15) == 11_453_251_584  # 11453.25 MB, llama.cpp#11083


def test_apple_older_macos_without_the_key_and_intel_macs():
    probe = replay({"sysctl hw.memsize": (0, recorded("sysctl/apple_m1_max_32gb.txt")),
                    "sysctl -n": (1, "sysctl: unknown oid 'iogpu.wired_limit_mb'\n")}, platform="darwin")
    # no iogpu.wired_limit_mb: a macOS before 14, whose share is 2/3 (22906.50 MB, ollama#10395's M2 Max)
    assert round(detect(probe).gpus[0].total_bytes / 1e6, 2) == 22906.50
    intel = replay({"sysctl hw.memsize": (0, recorded("sysctl/intel_mac_16gb.txt"))}, platform="darwin")
    hw = detect(intel)
    assert hw.gpus == () and not hw.failed


def test_apple_sysctl_garbage():
    probe = replay({"sysctl hw.memsize": (0, "machdep.cpu.brand_string: Apple M2\nhw.memsize: lots\n")},
                   platform="darwin")
    hw = detect(probe)
    assert hw.failed and "hw.memsize" in hw.errors[0]


def test_apple_not_probed_on_linux():
    probe = replay({"sysctl hw.memsize": (0, recorded("sysctl/apple_m1_max_32gb.txt"))}, platform="linux")
    assert detect(probe).gpus == ()


# ---------------------------------------------------------------------------------------------------------
# Host RAM


def test_host_memory_from_proc_meminfo_without_psutil(tmp_path):
    (tmp_path / "meminfo").write_text("MemTotal:       65773952 kB\nMemFree:        55330152 kB\n"
                                      "MemAvailable:   60000000 kB\nSwapTotal:       2097148 kB\nSwapFree: 2097148 kB\n")
    probe = Probe(modules={}, proc=tmp_path)
    probe.module = lambda name: (_ for _ in ()).throw(ImportError(name))
    h = host_memory(probe)
    assert (h.total_bytes, h.available_bytes, h.swap_total_bytes) == (65773952 * 1024, 60000000 * 1024,
                                                                       2097148 * 1024)
    assert h.source == "/proc/meminfo"


# ---------------------------------------------------------------------------------------------------------
# oomkit gpus, and the cost of detection to other commands


def test_gpus_command_with_fake_nvml(tmp_path):
    env = oomkit_env(tmp_path, {"gpus": [rtx4090(free=20000 * MiB, used=4000 * MiB)]})
    r = run_oomkit("gpus", env=env)
    assert r.returncode == 0, r.stderr
    assert "NVIDIA GeForce RTX 4090" in r.stdout and "20,000 MiB" in r.stdout and "1,008 GB/s" in r.stdout
    d = json.loads(run_oomkit("gpus", "--json", env=env).stdout)
    g = d["gpus"][0]
    assert (g["id"], g["free_bytes"], g["used_bytes"], g["reserved_bytes"]) == ("CUDA0", 20000 * MiB, 4000 * MiB,
                                                                                 564 * MiB)


def test_gpus_command_without_gpu_exits_0(tmp_path):
    r = run_oomkit("gpus", env=oomkit_env(tmp_path))
    assert r.returncode == 0 and "no GPU found" in r.stdout and "host RAM" in r.stdout


def test_gpus_command_with_broken_tools_exits_2_with_one_line(tmp_path):
    env = oomkit_env(tmp_path, {"init_error": 999, "gpus": []},
                     tools={"nvidia-smi": "printf 'Failed to initialize NVML: Driver/library version mismatch\\n'; exit 18"})
    r = run_oomkit("gpus", env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Driver/library version mismatch" in r.stderr
    assert "Traceback" not in r.stderr


def test_gpus_command_nvidia_smi_fallback_in_a_subprocess(tmp_path):
    csv = FIXTURES / "nvidia-smi" / "8x_a800_sxm4_80gb.csv"
    env = oomkit_env(tmp_path, {"init_error": 999, "gpus": []}, tools={"nvidia-smi": f"/bin/cat {csv}"})
    d = json.loads(run_oomkit("gpus", "--json", env=env).stdout)
    assert len(d["gpus"]) == 8 and d["notes"] == ["NVIDIA: NVML: nvmlInit failed: Unknown Error; used nvidia-smi instead"]


def test_estimate_never_imports_detection():
    code = ("import sys; from oomkit.cli import main; main(['estimate', 'llama3.1:8b', '--json']); "
            "bad = [m for m in ('oomkit.hardware.detect', 'pynvml', 'psutil', 'amdsmi') if m in sys.modules]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_laptop_gpu_takes_the_laptop_entry_not_the_desktop_card():
    # nvidia-smi names a laptop part "... Laptop GPU": the catalog's laptop entry, with its own bandwidth
    csv = "0, NVIDIA GeForce RTX 4090 Laptop GPU, 16376, 300, 15800\n"
    hw = detect(replay({"nvidia-smi": (0, csv)}))
    (g,) = hw.gpus
    assert g.catalog_name == "NVIDIA GeForce RTX 4090 Laptop GPU" and g.bandwidth_gbs == 576
    csv = "0, NVIDIA GeForce RTX 3080 Laptop GPU, 16384, 300, 15900\n"
    (g,) = detect(replay({"nvidia-smi": (0, csv)})).gpus
    assert g.catalog_name == "NVIDIA GeForce RTX 3080 Laptop GPU 16GB"
