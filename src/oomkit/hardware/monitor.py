"""Repeated readings of this machine's GPUs for `oomkit watch`: memory per device and per process.

NVML is opened once and polled (a reading takes well under a millisecond per GPU); without NVML each poll runs
the detection chain again (nvidia-smi, rocm-smi, sysfs, sysctl).
"""

from __future__ import annotations

from .detect import (
    Hardware,
    NotPresent,
    NvmlSession,
    Probe,
    ProbeFailed,
    detect,
    host_memory,
)


class Monitor:
    def __init__(self, probe: Probe | None = None):
        self.probe = probe or Probe()
        self.session: NvmlSession | None = None
        self.source = "detect"
        try:
            self.session = NvmlSession(self.probe)
            self.source = "nvml"
        except (NotPresent, ProbeFailed):
            self.session = None

    def poll(self) -> Hardware:
        if self.session is not None:
            try:
                gpus = self.session.read(processes=True)
                return Hardware(gpus=tuple(gpus), host=host_memory(self.probe))
            except ProbeFailed as e:
                self.close()
                hw = detect(self.probe)
                return Hardware(gpus=hw.gpus, host=hw.host, notes=(f"NVML stopped answering ({e})", *hw.notes),
                                errors=hw.errors)
        return detect(self.probe)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
