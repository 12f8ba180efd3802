"""The exceptions oomkit raises for bad input; the CLI turns each into a one-line message and exit 2.

Every error a caller can cause is an `OomkitError`; the subclasses say which input was at fault, so a program
using the library can tell "that model file is broken" from "that flag is out of range" without reading text.
Anything else escaping the library is a bug in oomkit, not in the input.
"""


class OomkitError(ValueError):
    """Bad or unsupported input: the message names the problem in one line."""


class ModelError(OomkitError):
    """The model reference or its files: unknown name, unreadable or impossible GGUF / config / safetensors."""


class SettingsError(OomkitError):
    """An engine setting, flag, environment variable or API argument: wrong type, out of range, contradictory."""


class HardwareError(OomkitError):
    """The hardware given or detected: an unknown GPU name, a memory size that cannot be, a device count too large."""


class HubError(OomkitError):
    """The model hub: unreachable, too slow, refused, or an answer of the wrong shape."""


__all__ = ["HardwareError", "HubError", "ModelError", "OomkitError", "SettingsError"]
