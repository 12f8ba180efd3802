"""Shared pieces of the header readers: the "buffer too short" error and opening a file for a header read."""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from oomkit.errors import OomkitError


class NeedMoreBytes(OomkitError):
    """The buffer ends before the header does; fetch at least `needed` bytes from the start and parse again.

    A remote reader catches this, fetches `needed` bytes (or more), and retries; everyone else sees an
    ordinary OomkitError.
    """

    def __init__(self, message: str, needed: int, have: int) -> None:
        super().__init__(message)
        self.needed = needed
        self.have = have

    def __reduce__(self):  # keep the extra fields across pickling (multiprocessing, caches)
        return (type(self), (str(self), self.needed, self.have))


def open_for_header(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a local file for reading, turning OS errors into a one-line OomkitError."""
    try:
        return open(path, "rb")  # the caller closes it
    except FileNotFoundError:
        raise OomkitError(f"{os.fspath(path)}: no such file") from None
    except IsADirectoryError:
        raise OomkitError(f"{os.fspath(path)}: is a directory, not a file") from None
    except OSError as e:
        raise OomkitError(f"{os.fspath(path)}: cannot open ({e.strerror or e})") from None


def remaining_size(f: BinaryIO) -> int | None:
    """Bytes from the current position to the end of `f`, or None when the object cannot tell (a pipe)."""
    try:
        start = f.tell()
    except (AttributeError, OSError, ValueError):
        return None
    try:
        st = os.fstat(f.fileno())
    except (AttributeError, OSError, ValueError):
        st = None
    if st is not None:  # a real file: its size; a pipe or device: unknown
        return max(0, st.st_size - start) if stat.S_ISREG(st.st_mode) else None
    try:  # an in-memory object such as BytesIO
        end = f.seek(0, os.SEEK_END)
        f.seek(start)
    except (AttributeError, OSError, ValueError):
        return None
    return max(0, end - start)


def printable(text: str, limit: int = 100) -> str:
    """A name from a file, cut and escaped so an error message stays on one line."""
    text = text[:limit]
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
