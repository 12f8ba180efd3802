"""oomkit gpus: the GPUs and memory of this machine (total, free, used by other processes, bandwidth)."""

from __future__ import annotations

from ..errors import OomkitError
from ..hardware.detect import detect
from ..report import hardware as report

HELP = """\
usage: oomkit gpus [--json]

The GPUs of this machine with their total and free memory, what other processes use, the driver's reserve and
the memory bandwidth (from the GPU catalog), and the host's RAM and swap. NVIDIA through NVML (nvidia-smi as
fallback), AMD through amdsmi, rocm-smi or sysfs, Apple silicon through sysctl. No GPU is a normal answer.

exit status: 0, or 2 when a detection tool failed and nothing else could read the GPUs.
"""


def run(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP)
        return 0
    unknown = [a for a in argv if a != "--json"]
    if unknown:
        raise OomkitError(f"unexpected argument {unknown[0]!r} (oomkit gpus takes only --json)")

    hw = detect(processes=False)
    if hw.failed:
        raise OomkitError("could not read this machine's GPUs: " + "; ".join(hw.errors))
    print(report.to_json(hw) if "--json" in argv else report.text(hw))
    return 0
