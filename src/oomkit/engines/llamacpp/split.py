"""The devices a llama.cpp model is split over, in llama.cpp's order (src/llama.cpp llama_model_load_from_splits).

Without -dev: the RPC servers of --rpc first ("add RPC servers at the front of the list to minimize network
transfers"), each under its buffer name (RPC0[host:port]; RPC[host:port] before multi-device servers), then the
local GPUs; layers are then dealt out in that order (weights.place_layers), so the last layers and the output
layer stay on a local GPU. With -dev the
devices named there, in that order. oomkit is given the sizes of all devices: the local GPUs first, then one
per --rpc endpoint (the remote hosts' GPUs, in --rpc order).
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import SettingsError
from ...memory import Device
from .settings import build_number

# PR #16276 "rpc : add support for multiple devices" (898acba68, 2025-10-04, b6688: its count on master): an
# rpc-server exposes each of its devices, and the buffer type gains the device's
# index on its server: "RPC" + device + "[" + endpoint + "]" (before: "RPC[" + endpoint + "]")
RPC_DEVICE_INDEX_BUILD = 6688


def rpc_name(endpoint: str, build: int = RPC_DEVICE_INDEX_BUILD) -> str:
    """The buffer type name of an RPC server's first device (ggml-rpc.cpp ggml_backend_rpc_buffer_type)."""
    return f"RPC0[{endpoint}]" if build >= RPC_DEVICE_INDEX_BUILD else f"RPC[{endpoint}]"


def model_devices(devices: tuple[Device, ...], s) -> tuple[Device, ...]:
    if s.rpc:
        k = len(s.rpc)
        if k > len(devices):
            raise SettingsError(f"--rpc names {k} servers but {len(devices)} device sizes are given: give one "
                                "size per local GPU and then one per RPC server")
        local, remote = devices[:len(devices) - k], devices[len(devices) - k:]
        build = build_number(s.engine_version)
        remote = tuple(replace(d, id=rpc_name(ep, build), name=ep) for d, ep in zip(remote, s.rpc, strict=True))
        devices = remote + local
    if s.device and not (len(s.device) == 1 and s.device[0].lower() == "none"):
        by_name = {d.id: d for d in devices}
        # RPC devices are also named RPC0, RPC1 ... in --list-devices (registry order: --rpc order)
        rpc = [d for d in devices if d.id.startswith("RPC") and "[" in d.id]
        by_name.update({f"RPC{i}": d for i, d in enumerate(rpc)})
        missing = [n for n in s.device if n not in by_name]
        if missing:
            raise SettingsError(f"-dev {','.join(s.device)}: no device {missing[0]} (there are "
                                f"{', '.join(d.id for d in devices) or 'none'})")
        devices = tuple(by_name[n] for n in s.device)
    elif s.device:
        devices = ()  # -dev none: CPU only
    return devices
