"""Shared pieces of the file readers: the "buffer too short" error, and opening only regular files, with
path parts and sizes checked first, so a FIFO, a device or a directory is refused at once instead of read."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from oomkit.errors import ModelError

# POSIX NAME_MAX on Linux, macOS and Windows' NTFS: a path part longer than this cannot name a file.
NAME_MAX = 255


class NeedMoreBytes(ModelError):
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


def check_path(path: str | os.PathLike[str]) -> None:
    """Refuse a path with a part longer than NAME_MAX bytes: the OS would raise ENAMETOOLONG from any call."""
    text = os.fspath(path)
    if "\x00" in text:  # every OS call would raise ValueError("embedded null byte")
        raise ModelError(f"{printable(text, 80)!r}: a path cannot hold a NUL byte")
    for part in text.split(os.sep):
        n = len(part.encode("utf-8", "surrogateescape"))
        if n > NAME_MAX:
            raise ModelError(f"{printable(text, 80)}...: a path part is {n} bytes, more than the {NAME_MAX} a file "
                             "name may have")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "a special file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading, or raise a one-line ModelError.

    The open is non-blocking, so a FIFO with no writer does not hold us, and the file's type is checked on the
    open descriptor (no race with a rename): FIFOs, devices (/dev/zero would read forever), sockets and
    directories are refused before a byte is read."""
    name = os.fspath(path)
    check_path(name)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ModelError(f"{name}: is a directory, not a file") from None
    except OSError as e:
        why = "a path part is too long" if e.errno == errno.ENAMETOOLONG else (e.strerror or str(e))
        raise ModelError(f"{name}: cannot open ({why})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{name}: is {_kind(st.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")  # the caller closes it
    except BaseException:
        os.close(fd)
        raise


def open_for_header(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a local model file for a header read (a regular file only; see open_regular)."""
    return open_regular(path)


def read_capped(path: str | os.PathLike[str], cap: int, what: str) -> bytes:
    """The whole of a small regular file, refused when it is larger than `cap` bytes (checked before reading,
    and again while reading, for a file that grows)."""
    name = os.fspath(path)
    with open_regular(name) as f:
        size = os.fstat(f.fileno()).st_size
        if size > cap:
            raise ModelError(f"{name}: {what} of {size:,} bytes is larger than the {_cap(cap)} oomkit reads")
        try:
            data = f.read(cap + 1)
        except OSError as e:
            raise ModelError(f"{name}: cannot read ({e.strerror or e})") from None
    if len(data) > cap:
        raise ModelError(f"{name}: {what} is larger than the {_cap(cap)} oomkit reads")
    return data


def _cap(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n:,} bytes"


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
