"""Where ``chainrule.load`` reads from: a regular file or a seekable binary file object, read
only at offsets and lengths checked against the file's size first.

Every read names its length, and no length is used before it is compared with the bytes the
file really has: a hostile header that declares gigabytes costs nothing, and a path to a
device (``/dev/zero``), a FIFO or a socket is refused before anything is read (a FIFO is
opened non-blocking, so refusing it does not wait for a writer).
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import numpy as np

# Data is copied from the file into its final buffer in pieces of at most this size, so that a
# file object without ``readinto`` costs one piece of extra memory, never a second copy.
_CHUNK = 1 << 22
# How far a sequential reader reads ahead (pickles are small; a long string is read directly).
_READ_AHEAD = 1 << 16


class Truncated(RuntimeError):
    """The file ends before a length it declares (PyTorch's wording)."""

    def __init__(self, missing: int) -> None:
        super().__init__(
            f"unexpected EOF, expected {missing} more bytes. The file might be corrupted."
        )


class Source:
    """The bytes ``[start, start + size)`` of a binary file object, read at checked offsets.

    ``size`` is fixed when the source is opened: offsets are relative to ``start`` and a read
    past ``size`` raises :class:`Truncated` before anything is allocated.
    """

    def __init__(self, handle: IO[bytes], start: int, size: int, name: str) -> None:
        self._handle = handle
        self._start = start
        self.size = size
        self.name = name

    def read_at(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``."""
        self._check(offset, length)
        self._handle.seek(self._start + offset)
        data = self._handle.read(length)
        if len(data) != length:  # the file shrank while we read it
            raise Truncated(length - len(data))
        return data

    def read_into(self, offset: int, out: np.ndarray) -> None:
        """Fill the byte array ``out`` with the bytes at ``offset``."""
        length = out.nbytes
        self._check(offset, length)
        self._handle.seek(self._start + offset)
        view = memoryview(out).cast("B")
        readinto = getattr(self._handle, "readinto", None)
        done = 0
        while done < length:
            step = min(_CHUNK, length - done)
            if readinto is not None:
                got = readinto(view[done:done + step])
            else:
                piece = self._handle.read(step)
                got = len(piece)
                view[done:done + got] = piece
            if not got:
                raise Truncated(length - done)
            done += got

    def _check(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0:
            raise RuntimeError(f"chainrule.load: negative offset or length ({offset}, {length})")
        if offset + length > self.size:
            raise Truncated(offset + length - max(offset, self.size))


class SequentialReader:
    """Reads a source from a position onwards, as the unpickler needs (``read``, ``readline``),
    never past the source's end and never more than a read asks for."""

    def __init__(self, source: Source, position: int) -> None:
        self._source = source
        self.position = position
        self._buffer = b""
        self._buffer_start = position

    def read(self, length: int) -> bytes:
        """Exactly ``length`` bytes (:class:`Truncated` if the source ends first)."""
        at = self.position - self._buffer_start
        if at + length <= len(self._buffer):
            self.position += length
            return self._buffer[at:at + length]
        if length > _READ_AHEAD:
            data = self._source.read_at(self.position, length)
        else:
            available = self._source.size - self.position
            if length > available:
                raise Truncated(length - available)
            self._buffer = self._source.read_at(self.position, min(_READ_AHEAD, available))
            self._buffer_start = self.position
            data = self._buffer[:length]
        self.position += length
        return data

    def readline(self, limit: int) -> bytes:
        """The bytes up to and including the next newline, which must come within ``limit``."""
        line = bytearray()
        while True:
            byte = self.read(1)
            line += byte
            if byte == b"\n":
                return bytes(line)
            if len(line) >= limit:
                raise RuntimeError("chainrule.load: a line in the pickle is too long")


class BytesReader:
    """:class:`SequentialReader`'s interface over bytes already in memory."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self.position = 0

    def read(self, length: int) -> bytes:
        """Exactly ``length`` bytes (:class:`Truncated` if the data ends first)."""
        end = self.position + length
        if end > len(self._data):
            raise Truncated(end - len(self._data))
        data = self._data[self.position:end]
        self.position = end
        return data

    def readline(self, limit: int) -> bytes:
        """The bytes up to and including the next newline, which must come within ``limit``."""
        end = self._data.find(b"\n", self.position, self.position + limit)
        if end < 0:
            if len(self._data) - self.position < limit:
                raise Truncated(1)
            raise RuntimeError("chainrule.load: a line in the pickle is too long")
        return self.read(end + 1 - self.position)


_KINDS = (
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
)


def _refuse_irregular(mode: int, name: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    raise RuntimeError(
        f"chainrule.load: {name!r} is {kind}, not a regular file; weights are read from "
        "regular files or seekable binary file objects only (a device or a pipe has no size "
        "to check the file's declared lengths against)"
    )


@contextmanager
def open_source(f: str | os.PathLike | IO[bytes]) -> Iterator[Source]:
    """A :class:`Source` over a path or a binary file object (from its current position)."""
    if isinstance(f, str | os.PathLike):
        name = os.fsdecode(os.fspath(f))
        # O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        try:
            info = os.fstat(fd)
            _refuse_irregular(info.st_mode, name)
            os.set_blocking(fd, True)
            handle = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with handle:
            yield Source(handle, 0, info.st_size, name)
        return
    yield _file_object_source(f)


def _file_object_source(f: Any) -> Source:
    name = str(getattr(f, "name", "<file object>"))
    try:
        descriptor = f.fileno()
    except (AttributeError, OSError, ValueError):  # BytesIO and friends have none
        descriptor = None
    if isinstance(descriptor, int):
        _refuse_irregular(os.fstat(descriptor).st_mode, name)
    try:
        start = f.tell()
        f.seek(start)
        end = f.seek(0, io.SEEK_END)
        f.seek(start)
    except (io.UnsupportedOperation, AttributeError, OSError) as e:
        # PyTorch's exception type and wording for a stream it cannot seek.
        raise io.UnsupportedOperation(
            f"{e}. You can only torch.load from a file that is seekable. Please pre-load the "
            "data into a buffer like io.BytesIO and try to load from it instead."
        ) from None
    return Source(f, start, max(end - start, 0), name)
