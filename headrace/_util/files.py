"""Opening data files safely: only regular files are read.

A FIFO among a dataset's files blocks its reader forever (``open`` waits for a writer), and a
device such as ``/dev/zero`` (directly or behind a symlink) never ends, so reading it "to the end"
exhausts memory. Every source that reads a data file opens it with :func:`open_regular`: the file
is opened without blocking (``O_NONBLOCK``, which a FIFO honours at open time), checked with
``fstat`` on the descriptor that was opened (so a file swapped after a listing is caught too) and
refused unless it is a regular file, with an error naming it. The check costs one ``fstat`` per
open, which Python's own ``open`` performs as well.
"""
from __future__ import annotations

import errno
import io
import os
import stat
from typing import BinaryIO

__all__ = ["NotRegularFileError", "open_regular", "open_regular_text", "read_regular"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFileError(OSError):
    """A data file that is a FIFO, a device, a socket or a directory. An ``OSError``, so callers
    that name the file on ``OSError`` report it as they report any unreadable file."""


def file_kind(mode: int) -> str:
    """'a FIFO', 'a character device', ... for a ``st_mode``."""
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str, buffering: int = -1) -> BinaryIO:
    """``path`` opened for binary reading; raises :class:`NotRegularFileError` (errno EINVAL)
    naming the file when it is not a regular file, without blocking on a FIFO."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            raise NotRegularFileError(errno.EINVAL, f"it is {kind}, not a regular file (headrace reads data only "
                                                    "from regular files: a FIFO would block, a device never ends)",
                                      path)
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return io.open(fd, "rb", buffering=buffering, closefd=True)
    except BaseException:
        os.close(fd)
        raise


def open_regular_text(path: str, encoding: str = "utf-8") -> io.TextIOWrapper:
    """``path`` opened for reading text, refused like :func:`open_regular` unless regular."""
    return io.TextIOWrapper(open_regular(path), encoding=encoding)


def read_regular(path: str, offset: int = 0, length: int = -1) -> bytes:
    """``length`` bytes of the regular file ``path`` from ``offset`` (-1: to the end)."""
    with open_regular(path, buffering=0) as f:
        if offset:
            f.seek(offset)
        if length < 0:
            return f.readall()  # type: ignore[attr-defined]  # a raw (unbuffered) file
        return f.read(length) if length else b""
