"""``chainrule.save`` in PyTorch's own format: the zip archive ``torch.save`` writes, which the
real ``torch.load(..., weights_only=True)`` reads (and ``chainrule.load`` too).

The archive, as PyTorch 2.x lays it out: a folder named after the file (``archive`` for a file
object) holding ``data.pkl`` (the object, pickled with protocol 2), ``.format_version``,
``.storage_alignment``, ``byteorder``, one stored (uncompressed) entry ``data/<key>`` per
storage, ``version`` and ``.data/serialization_id``; every entry's data starts at a multiple of
64 bytes (a padding field in its local header), so that PyTorch can memory-map it.

The pickle holds only what a weights-only loader accepts: dicts, ``OrderedDict`` (a state
dict's ``_metadata`` included), lists, tuples, sets, numbers, strings, bytes, None, dtypes,
``torch.Size`` and ``torch.device``, and tensors as PyTorch pickles them:
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
(``_rebuild_tensor_v3`` with the dtype for uint16/32/64, on an untyped storage, as PyTorch),
``_rebuild_parameter`` for parameters. Storages are shared as in memory: every tensor that
views the same array (a view, an expanded tensor, a state dict's tied weights) refers to the one
storage, with its offset and strides, so sharing survives the round trip. Any other object
raises ``TypeError`` before anything is written: the file can hold no code.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import pickle
import struct
import sys
import zipfile
from collections import Counter, OrderedDict
from typing import IO, Any

import numpy as np

from .. import _dtype
from .._size import Size, device
from .._strides import element_strides, storage_root
from .._tensor import Tensor

FileLike = str | os.PathLike | IO[bytes]

_ALIGNMENT = 64
_FORMAT_VERSION = b"1"
_ARCHIVE_VERSION = b"3\n"

# dtype -> the typed storage class PyTorch names in its persistent ids; the unsigned types
# PyTorch added later are pickled on an untyped storage with _rebuild_tensor_v3.
_STORAGE_CLASSES = {
    _dtype.float32: "FloatStorage",
    _dtype.float64: "DoubleStorage",
    _dtype.float16: "HalfStorage",
    _dtype.bfloat16: "BFloat16Storage",
    _dtype.int64: "LongStorage",
    _dtype.int32: "IntStorage",
    _dtype.int16: "ShortStorage",
    _dtype.int8: "CharStorage",
    _dtype.uint8: "ByteStorage",
    _dtype.bool: "BoolStorage",
    _dtype.complex64: "ComplexFloatStorage",
    _dtype.complex128: "ComplexDoubleStorage",
}
_UNTYPED_DTYPES = (_dtype.uint16, _dtype.uint32, _dtype.uint64)


class _Global:
    """A global of PyTorch's (``torch._utils._rebuild_tensor_v2`` ...), pickled by name only:
    nothing is imported to write it."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> Any:  # (pickle's save_reduce wants a callable)
        raise TypeError(f"{self.module}.{self.name} is a name in a file, not a function")


_GLOBALS: dict[tuple[str, str], _Global] = {}


def _global(module: str, name: str) -> _Global:
    """One object per name, so the pickle's memo writes each global once."""
    key = (module, name)
    found = _GLOBALS.get(key)
    if found is None:
        found = _GLOBALS[key] = _Global(module, name)
    return found


class _StorageRef:
    """A storage in the pickle: written as PyTorch's persistent id."""

    __slots__ = ("pid",)

    def __init__(self, pid: tuple) -> None:
        self.pid = pid


class _PlainTensor:
    """A parameter's data: pickled as a tensor that does not require grad."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor


# Python's own types a weights-only loader rebuilds (their instances pickle as usual).
_PLAIN_TYPES = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    tuple,
    list,
    dict,
    OrderedDict,
    Counter,
    set,
    frozenset,
)
_PLAIN_GLOBALS = (OrderedDict, Counter, set, frozenset, bytearray, complex, codecs.encode)


class _Storages:
    """The storages of the tensors pickled so far: one per memory block, keyed as PyTorch keys
    them ("0", "1" ... in order of first use)."""

    def __init__(self) -> None:
        self.records: list[tuple[str, np.ndarray]] = []  # (key, the bytes, uint8, 1-d)
        self._by_root: dict[int, tuple[str, Any, np.ndarray]] = {}  # id(root) -> key, dtype

    def _new(self, data: np.ndarray) -> str:
        key = str(len(self.records))
        self.records.append((key, data))
        return key

    def place(self, t: Tensor) -> tuple[_StorageRef, int, tuple[int, ...], tuple[int, ...]]:
        """(the storage's persistent id, storage offset, size, stride) of ``t``."""
        data = t._data
        d = t.dtype
        itemsize = data.itemsize
        root = storage_root(data)
        shape = tuple(data.shape)
        shared = self._sharable(data, root)
        if shared is None:  # its own storage: a contiguous copy of just its elements
            own = np.ascontiguousarray(data)
            key = self._new(own.reshape(-1).view(np.uint8))
            numel = own.size
            offset, stride = 0, element_strides(own)
        else:
            offset, stride = shared
            found = self._by_root.get(id(root))
            if found is None:
                key = self._new(root.reshape(-1, order="A").view(np.uint8))
                self._by_root[id(root)] = (key, d, root)  # (root kept alive: ids stay unique)
            else:
                key, first, _ = found
                if first != d:
                    raise RuntimeError(
                        "Cannot save multiple tensors or storages that view the same data as "
                        "different types"
                    )
            numel = root.nbytes // itemsize
        if d in _UNTYPED_DTYPES:
            pid = (
                "storage",
                _global("torch.storage", "UntypedStorage"),
                key,
                "cpu",
                numel * itemsize,
            )
        else:
            pid = ("storage", _global("torch", _STORAGE_CLASSES[d]), key, "cpu", numel)
        return _StorageRef(pid), offset, shape, stride

    @staticmethod
    def _sharable(data: np.ndarray, root: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
        """(offset, strides) in elements of ``data`` within ``root``'s memory, or None when
        it cannot be described so (a root that is not one contiguous block, negative or
        unaligned steps, an empty tensor)."""
        itemsize = data.itemsize
        if data.size == 0 or not (root.flags.c_contiguous or root.flags.f_contiguous):
            return None
        if root.nbytes % itemsize:
            return None
        start = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if start < 0 or start % itemsize or any(s < 0 or s % itemsize for s in data.strides):
            return None
        return start // itemsize, element_strides(data)


class _Pickler(pickle._Pickler):  # type: ignore[name-defined,misc]
    """Python's pickler, writing PyTorch's globals by name and tensors as PyTorch does."""

    dispatch = pickle._Pickler.dispatch.copy()  # type: ignore[attr-defined]

    def __init__(self, file: IO[bytes], protocol: int, storages: _Storages) -> None:
        super().__init__(file, protocol)
        self._storages = storages

    def persistent_id(self, obj: Any) -> Any:
        """A storage's id (PyTorch's tuple); None for everything else."""
        return obj.pid if type(obj) is _StorageRef else None

    def reducer_override(self, obj: Any) -> Any:
        """Tensors, parameters, sizes and devices as PyTorch reduces them; refuses objects a
        weights-only loader would refuse."""
        t = type(obj)
        if t in _PLAIN_TYPES or t is _Global or t is _dtype.dtype:
            return NotImplemented
        if any(obj is g for g in _PLAIN_GLOBALS):
            return NotImplemented
        if t is _PlainTensor:
            return self._tensor(obj.tensor, False)
        if isinstance(obj, Tensor):
            from ..nn.parameter import Parameter

            if t is Parameter:
                return (
                    _global("torch._utils", "_rebuild_parameter"),
                    (_PlainTensor(obj), obj.requires_grad, OrderedDict()),
                )
            if t is not Tensor:
                raise TypeError(
                    f"chainrule.save cannot store a tensor subclass ({t.__name__}) in PyTorch's "
                    "format: only tensors and parameters"
                )
            return self._tensor(obj, obj.requires_grad)
        if t is Size:
            return (_global("torch", "Size"), (tuple(obj),))
        if t is device:
            # (a string of its own, as PyTorch's device gives: the pickle's memo, keyed by
            # object, then writes it out instead of referring to a storage id's "cpu")
            kind = obj.type.encode().decode()
            args = (kind,) if obj.index is None else (kind, obj.index)
            return (_global("torch", "device"), args)
        if isinstance(obj, np.generic) and type(obj) in self.dispatch:
            return NotImplemented  # (written as the Python number it holds: _save_numpy)
        raise TypeError(
            f"chainrule.save cannot store objects of type {t.__name__}: only tensors, "
            "numbers, strings, bytes, None, dtypes, sizes, devices, and dicts, lists, tuples and "
            "sets of them (a file that torch.load(weights_only=True) reads holds no code)"
        )

    def _tensor(self, t: Tensor, requires_grad: bool) -> tuple:
        storage, offset, size, stride = self._storages.place(t)
        if t.dtype in _UNTYPED_DTYPES:
            return (
                _global("torch._utils", "_rebuild_tensor_v3"),
                (storage, offset, size, stride, requires_grad, OrderedDict(), t.dtype),
            )
        return (
            _global("torch._utils", "_rebuild_tensor_v2"),
            (storage, offset, size, stride, requires_grad, OrderedDict()),
        )

    def _save_global(self, obj: Any) -> None:
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(
                pickle.GLOBAL
                + obj.module.encode("utf-8")
                + b"\n"
                + obj.name.encode("utf-8")
                + b"\n"
            )
        self.memoize(obj)

    def _save_dtype(self, obj: Any) -> None:
        self.save(_global("torch", obj.name))  # (through the memo: written once)

    def _save_numpy(self, obj: Any) -> None:
        # A NumPy scalar is written as the Python number it holds: a weights-only loader
        # rebuilds no NumPy objects.
        self.save(obj.item())

    dispatch[_Global] = _save_global
    dispatch[_dtype.dtype] = _save_dtype
    for _numpy_scalar in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    ):
        dispatch[_numpy_scalar] = _save_numpy
    del _numpy_scalar


def _archive_name(f: FileLike) -> str:
    if isinstance(f, str | os.PathLike):
        base = os.path.basename(os.fsdecode(os.fspath(f)))
        stem = os.path.splitext(base)[0]
        return stem or "archive"
    return "archive"


def _padding(offset: int, name: bytes) -> bytes:
    """The local-header extra field that makes an entry's data start at a multiple of 64."""
    header = offset + 30 + len(name) + 4
    size = (-header) % _ALIGNMENT
    return b"FB" + struct.pack("<H", size) + b"Z" * size


def _write_archive(
    handle: IO[bytes], folder: str, records: list[tuple[str, bytes | np.ndarray]]
) -> None:
    start = handle.tell()
    with zipfile.ZipFile(
        handle, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True
    ) as archive:
        for name, data in records:
            full = f"{folder}/{name}"
            info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.extra = _padding(handle.tell() - start, full.encode("utf-8"))
            payload = data if isinstance(data, bytes) else memoryview(data)
            with archive.open(info, mode="w", force_zip64=len(payload) >= 1 << 31) as entry:
                entry.write(payload)


def save_torch(
    obj: Any, f: FileLike, pickle_protocol: int = 2, byteorder_first: bool = True
) -> None:
    """Write ``obj`` to ``f`` in PyTorch's zip format (see the module's docstring).

    ``byteorder_first=False`` is PyTorch's ``_disable_byteorder_record=True``: its archive
    writer then adds the byte-order record at the end, after ``version``.
    """
    byteorder = [("byteorder", sys.byteorder.encode())]
    storages = _Storages()
    buffer = io.BytesIO()
    _Pickler(buffer, pickle_protocol, storages).dump(obj)
    pickled = buffer.getvalue()
    digest = hashlib.sha256(pickled)
    for key, data in storages.records:
        digest.update(key.encode())
        digest.update(memoryview(data))
    serialization_id = str(int.from_bytes(digest.digest()[:17], "big") % 10**40).zfill(40)
    records: list[tuple[str, bytes | np.ndarray]] = [
        ("data.pkl", pickled),
        (".format_version", _FORMAT_VERSION),
        (".storage_alignment", str(_ALIGNMENT).encode()),
        *(byteorder if byteorder_first else []),
        *((f"data/{key}", data) for key, data in storages.records),
        ("version", _ARCHIVE_VERSION),
        *([] if byteorder_first else byteorder),
        (".data/serialization_id", serialization_id.encode()),
    ]
    folder = _archive_name(f)
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as handle:
            _write_archive(handle, folder, records)
        return
    try:
        f.tell()
        seekable = f.seekable() if hasattr(f, "seekable") else True
    except (AttributeError, OSError, io.UnsupportedOperation):
        seekable = False
    if seekable:
        _write_archive(f, folder, records)
        return
    staging = io.BytesIO()  # (a stream that cannot seek: the archive is built first)
    _write_archive(staging, folder, records)
    f.write(staging.getvalue())
