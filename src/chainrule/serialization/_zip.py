"""A strict reader for the zip archives ``torch.save`` writes.

Python's :mod:`zipfile` is lenient where an attacker profits: it accepts duplicate names (and
silently reads one of them), entries whose data overlap (so one stretch of the file can be read
as many storages), and compressed entries that expand far beyond the file. This reader checks
the whole central directory before any entry is read:

* the end-of-central-directory record (zip64 too, which ``torch.save`` always writes) and the
  central directory lie inside the file;
* every entry is stored (``torch.save`` never compresses), not encrypted, its local header
  agrees with the central directory, and its data lie inside the file, before the central
  directory, without overlapping any other entry's;
* names are unique plain relative paths: no ``..``, ``.`` or empty component, no leading
  ``/``, no backslash or NUL.

So the bytes that reading all entries yields are at most the file's size.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ._files import Source

_EOCD = struct.Struct("<4s4H2LH")            # end of central directory
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s6H3L5H2L")      # central directory file header
_LOCAL = struct.Struct("<4s5H3L2H")          # local file header
_MAX_COMMENT = 0xFFFF


class ZipError(RuntimeError):
    """A malformed or refused zip archive."""


def _corrupt(reason: str) -> ZipError:
    # PyTorch's first sentence for an archive its zip reader cannot use.
    return ZipError(f"PytorchStreamReader failed reading zip archive: {reason}")


@dataclass(frozen=True, slots=True)
class ZipEntry:
    """One stored entry: its name and where its bytes are."""

    name: str
    header_offset: int
    data_offset: int
    size: int


class ZipArchive:
    """The entries of a zip archive, validated as the module docstring says."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self.entries: dict[str, ZipEntry] = {}
        #: Names in central-directory order (PyTorch takes the archive's folder from the first).
        self.names: list[str] = []
        count, cd_offset, cd_size = self._end_of_central_directory()
        self._read_central_directory(count, cd_offset, cd_size)
        self._check_layout(cd_offset)

    # ------------------------------------------------------------------------------------------

    def _end_of_central_directory(self) -> tuple[int, int, int]:
        source = self._source
        if source.size < _EOCD.size:
            raise _corrupt("failed finding central directory")
        tail_start = max(0, source.size - _EOCD.size - _MAX_COMMENT)
        tail = source.read_at(tail_start, source.size - tail_start)
        at = len(tail) - _EOCD.size
        while True:
            at = tail.rfind(b"PK\x05\x06", 0, at + 4)
            if at < 0:
                raise _corrupt("failed finding central directory")
            fields = _EOCD.unpack_from(tail, at)
            if at + _EOCD.size + fields[7] == len(tail):  # the comment ends the file exactly
                break
            at -= 1
        eocd_offset = tail_start + at
        _, disk, cd_disk, _, count, cd_size, cd_offset, _ = fields
        if disk or cd_disk:
            raise _corrupt("multi-disk archives are not supported")
        if 0xFFFF in (count,) or 0xFFFFFFFF in (cd_size, cd_offset):
            count, cd_offset, cd_size = self._zip64_end(eocd_offset)
        if cd_offset + cd_size > eocd_offset:
            raise _corrupt("the central directory lies outside the file")
        if count * _CENTRAL.size > cd_size:
            raise _corrupt("the central directory is shorter than its entry count")
        return count, cd_offset, cd_size

    def _zip64_end(self, eocd_offset: int) -> tuple[int, int, int]:
        if eocd_offset < _ZIP64_LOCATOR.size:
            raise _corrupt("failed finding the zip64 end of central directory")
        locator = _ZIP64_LOCATOR.unpack(
            self._source.read_at(eocd_offset - _ZIP64_LOCATOR.size, _ZIP64_LOCATOR.size)
        )
        if locator[0] != b"PK\x06\x07":
            raise _corrupt("failed finding the zip64 end of central directory")
        record_offset = locator[2]
        if record_offset + _ZIP64_EOCD.size > eocd_offset - _ZIP64_LOCATOR.size:
            raise _corrupt("the zip64 end of central directory lies outside the file")
        record = _ZIP64_EOCD.unpack(self._source.read_at(record_offset, _ZIP64_EOCD.size))
        if record[0] != b"PK\x06\x06":
            raise _corrupt("failed finding the zip64 end of central directory")
        _, _, _, _, disk, cd_disk, _, count, cd_size, cd_offset = record
        if disk or cd_disk:
            raise _corrupt("multi-disk archives are not supported")
        if cd_offset + cd_size > record_offset:
            raise _corrupt("the central directory lies outside the file")
        return count, cd_offset, cd_size

    def _read_central_directory(self, count: int, cd_offset: int, cd_size: int) -> None:
        directory = self._source.read_at(cd_offset, cd_size)
        at = 0
        for _ in range(count):
            if at + _CENTRAL.size > len(directory):
                raise _corrupt("truncated central directory")
            (signature, _, _, flags, method, _, _, _, compressed, size, name_length,
             extra_length, comment_length, disk, _, _, header_offset) = _CENTRAL.unpack_from(
                directory, at)
            if signature != b"PK\x01\x02":
                raise _corrupt("bad central directory entry")
            name_start = at + _CENTRAL.size
            extra_start = name_start + name_length
            at = extra_start + extra_length + comment_length
            if at > len(directory):
                raise _corrupt("truncated central directory")
            raw_name = directory[name_start:extra_start]
            name = _decode_name(raw_name, flags)
            if 0xFFFFFFFF in (compressed, size, header_offset) or disk == 0xFFFF:
                size, compressed, header_offset = _zip64_fields(
                    directory[extra_start:extra_start + extra_length], size, compressed,
                    header_offset, disk)
            if flags & 1:
                raise ZipError(f"chainrule.load: zip entry {name!r} is encrypted")
            if method != 0:
                raise ZipError(
                    f"chainrule.load: zip entry {name!r} is compressed (method {method}); "
                    "torch.save writes stored entries, and chainrule.load reads only those, so "
                    "that no entry can expand beyond its size in the file. Re-save the file "
                    "with torch.save (or re-zip it with `zip -0`)."
                )
            if compressed != size:
                raise _corrupt(f"entry {name!r} is stored but its sizes differ")
            if name in self.entries:
                raise ZipError(
                    f"chainrule.load: the zip archive has two entries named {name!r}; which "
                    "one a reader sees is ambiguous, so the archive is refused"
                )
            data_offset = self._local_header(raw_name, name, header_offset, method)
            self.entries[name] = ZipEntry(name, header_offset, data_offset, size)
            self.names.append(name)

    def _local_header(self, raw_name: bytes, name: str, header_offset: int, method: int) -> int:
        header = self._source.read_at(header_offset, _LOCAL.size)
        (signature, _, _, local_method, _, _, _, _, _, name_length,
         extra_length) = _LOCAL.unpack(header)
        if signature != b"PK\x03\x04":
            raise _corrupt(f"bad local header for {name!r}")
        if local_method != method:
            raise _corrupt(f"the local header of {name!r} disagrees with the central directory")
        local_name = self._source.read_at(header_offset + _LOCAL.size, name_length)
        if local_name != raw_name:
            raise _corrupt(f"the local header of {name!r} names {local_name!r}")
        return header_offset + _LOCAL.size + name_length + extra_length

    def _check_layout(self, cd_offset: int) -> None:
        previous_end = 0
        previous = None
        for entry in sorted(self.entries.values(), key=lambda e: e.header_offset):
            if entry.header_offset < previous_end:
                raise ZipError(
                    f"chainrule.load: zip entries {previous!r} and {entry.name!r} overlap; "
                    "each entry's bytes must be its own"
                )
            previous_end = entry.data_offset + entry.size
            previous = entry.name
            if previous_end > cd_offset:
                raise _corrupt(f"the data of {entry.name!r} run past the central directory")

    # ------------------------------------------------------------------------------------------

    def read(self, name: str) -> bytes:
        """The bytes of entry ``name`` (which must exist)."""
        entry = self.entries[name]
        return self._source.read_at(entry.data_offset, entry.size)

    def read_into(self, name: str, out: np.ndarray) -> None:
        """Fill the byte array ``out`` (exactly the entry's size) with entry ``name``."""
        entry = self.entries[name]
        if out.nbytes != entry.size:
            raise ValueError("read_into: size mismatch")
        self._source.read_into(entry.data_offset, out)


def _decode_name(raw: bytes, flags: int) -> str:
    try:
        name = raw.decode("utf-8" if flags & 0x800 else "cp437")
    except UnicodeDecodeError:
        raise _corrupt(f"entry name {raw!r} is not valid UTF-8") from None
    parts = name.split("/")
    if name.endswith("/"):  # a directory entry
        parts.pop()
    if (name.startswith("/") or "\\" in name or "\0" in name
            or any(part in ("", ".", "..") for part in parts)):
        raise ZipError(
            f"chainrule.load: zip entry name {name!r} is not a plain relative path; the "
            "archive is refused"
        )
    return name


def _zip64_fields(extra: bytes, size: int, compressed: int, header_offset: int,
                  disk: int) -> tuple[int, int, int]:
    """The true sizes and offset from a zip64 extra field (only the saturated ones are there)."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, at)
        body = extra[at + 4:at + 4 + length]
        at += 4 + length
        if tag != 1:
            continue
        values = iter(struct.unpack_from(f"<{len(body) // 8}Q", body))
        try:
            if size == 0xFFFFFFFF:
                size = next(values)
            if compressed == 0xFFFFFFFF:
                compressed = next(values)
            if header_offset == 0xFFFFFFFF:
                header_offset = next(values)
        except StopIteration:
            break
        return size, compressed, header_offset
    raise _corrupt("a zip64 entry lacks its zip64 extra field")
