"""PyTorch's ``.pt``/``.pth`` files read without PyTorch and without running their pickle.

Two layouts, as ``torch.load(weights_only=True)`` reads them:

* the zip archive ``torch.save`` writes (PyTorch >= 1.6): ``<folder>/data.pkl`` holds the
  object, with each storage a persistent id ``('storage', <Type>Storage, key, location,
  numel)`` whose bytes are the stored entry ``<folder>/data/<key>``;
* the legacy stream (``_use_new_zipfile_serialization=False``): pickles of a magic number, a
  protocol version and system information, then the object (storage ids carry a sixth item,
  an optional view of the storage), then the list of storage keys, then each storage's bytes
  preceded by its element count.

Storages are read as untyped bytes exactly as long as the file declares (PyTorch's check and
message), allocated only after that length was checked against the file, and shared: every
tensor is a NumPy view of its storage with the file's storage offset and strides, so two
tensors sharing a storage in the file share memory after loading, and an expanded tensor
(stride 0) stays a view of its small storage (read-only where elements alias, as PyTorch
refuses in-place writes there). Geometry is checked as PyTorch's ``set_`` checks it, with
its messages.
"""

from __future__ import annotations

import pickle
import reprlib
import struct
import sys
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import _dtype
from .._size import Size, device
from .._tensor import Tensor, wrap
from ._files import BytesReader, SequentialReader, Source, Truncated
from ._unpickler import Global, Unpickler, describe, hashing
from ._zip import ZipArchive

# Python objects a pickle may build: a floor for small files plus a multiple of its size.
_BUDGET_FLOOR = 4 << 20
_BUDGET_PER_BYTE = 64
_TENSOR_COST = 1024

_MAX_DIMS = 64  # NumPy's limit on dimensions
_INT64_MAX = (1 << 63) - 1

_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_PROTOCOL_VERSION = 1001
_MIN_ZIP_VERSION = 1
_MAX_ZIP_VERSION = 10


def _budget(nbytes: int) -> int:
    return _BUDGET_FLOOR + _BUDGET_PER_BYTE * nbytes


# ----------------------------------------------------------------------------------------------
# storages


@dataclass(frozen=True, slots=True)
class StorageKind:
    """A ``torch.<Type>Storage`` global: the element type of the storage's bytes."""

    name: str
    dtype: np.dtype  # in native byte order (a file in the other order is swapped when read)

    @property
    def itemsize(self) -> int:
        """Bytes per element in the file."""
        return self.dtype.itemsize


# Storage class -> its element type (bfloat16 is ml_dtypes', so its bytes are viewed as they
# are, as every other type's).
_STORAGE_KINDS = {
    "FloatStorage": _dtype.float32, "DoubleStorage": _dtype.float64,
    "HalfStorage": _dtype.float16, "BFloat16Storage": _dtype.bfloat16,
    "LongStorage": _dtype.int64, "IntStorage": _dtype.int32, "ShortStorage": _dtype.int16,
    "CharStorage": _dtype.int8, "ByteStorage": _dtype.uint8, "BoolStorage": _dtype.bool,
    "ComplexFloatStorage": _dtype.complex64, "ComplexDoubleStorage": _dtype.complex128,
}
_UNTYPED = StorageKind("UntypedStorage", _dtype.uint8.np)

# The dtypes a file may name (``torch.float32`` ..., _rebuild_tensor_v3's dtype argument).
# (uint16/32/64 have no typed storage class: PyTorch pickles them with _rebuild_tensor_v3 on an
# untyped storage.)
_LOADABLE_DTYPES = {d.name: d for d in (*_STORAGE_KINDS.values(), _dtype.uint16, _dtype.uint32,
                                        _dtype.uint64)}


class Storage:
    """``nbytes`` bytes of the file starting at ``start`` in ``root`` (a uint8 array that every
    tensor on this storage views), typed by the storage id that first named it.

    ``root`` is None while the legacy loader only learns which storages exist.
    """

    __slots__ = ("kind", "root", "start", "nbytes")

    def __init__(self, kind: StorageKind, root: np.ndarray | None, start: int,
                 nbytes: int) -> None:
        self.kind = kind
        self.root = root
        self.start = start
        self.nbytes = nbytes


def _byteswap(buffer: np.ndarray, kind: StorageKind) -> None:
    """Swap each element of ``kind`` in place (complex numbers: each half)."""
    unit = kind.itemsize
    if kind.dtype.kind == "c":
        unit //= 2
    if unit > 1:
        usable = buffer.nbytes - buffer.nbytes % unit
        buffer[:usable].view(f"u{unit}").byteswap(inplace=True)


_PENDING = Global("chainrule.load", "<tensor not yet read>")


# ----------------------------------------------------------------------------------------------
# rebuilding tensors


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, tuple | list) or not all(isinstance(v, int) for v in value):
        raise pickle.UnpicklingError(f"a tensor's {what} must be a tuple of ints, not "
                                     f"{describe(value)}")
    return tuple(int(v) for v in value)


def _check_geometry(storage: Storage, itemsize: int, offset: int, size: tuple[int, ...],
                    stride: tuple[int, ...]) -> int:
    """PyTorch's checks in ``set_``, in its order and with its messages; the number of storage
    elements the tensor spans (0 for an empty tensor)."""
    if len(size) != len(stride):
        raise RuntimeError(
            f"unequal size length ({len(size)}) and stride length ({len(stride)})"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if len(size) > _MAX_DIMS:
        raise RuntimeError(
            f"chainrule.load: a tensor has {len(size)} dimensions; chainrule (NumPy) supports "
            f"at most {_MAX_DIMS}"
        )
    for s in size:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
    numel = 1
    for s in size:
        numel *= s
        if numel > _INT64_MAX:
            raise RuntimeError("numel: integer multiplication overflow")
    if numel == 0:
        return 0
    extent = 1
    for s, st in zip(size, stride, strict=True):
        extent += (s - 1) * st
        if st < 0 or extent > _INT64_MAX:
            raise RuntimeError(
                f"Storage size calculation overflowed with sizes={list(size)} and "
                f"strides={list(stride)}"
            )
    needed = itemsize * (offset + extent)
    if needed > _INT64_MAX:
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    if needed > storage.nbytes:
        raise RuntimeError(
            "Trying to resize storage that is not resizable. chainrule.load: a tensor of sizes "
            f"{list(size)}, strides {list(stride)}, storage offset {offset} and itemsize "
            f"{itemsize} needs {needed} bytes, but its storage has {storage.nbytes}; the file "
            "is corrupt."
        )
    return extent


def _tensor_on(u: Unpickler, storage: Any, dtype: np.dtype, offset: Any, size: Any,
               stride: Any, metadata: Any = None) -> Any:
    """A tensor viewing ``storage`` as elements of type ``dtype`` (what ``set_`` does)."""
    if not isinstance(storage, Storage):
        raise pickle.UnpicklingError(
            f"a tensor must be rebuilt on a storage, not on {describe(storage)}"
        )
    if not isinstance(offset, int):
        raise pickle.UnpicklingError(f"a tensor's storage offset must be an int, not "
                                     f"{describe(offset)}")
    size = _ints(size, "size")
    stride = _ints(stride, "stride")
    itemsize = dtype.itemsize
    if metadata is not None and type(metadata) is not dict:
        raise pickle.UnpicklingError(f"a tensor's metadata must be a dict, not "
                                     f"{describe(metadata)}")
    offset = int(offset)
    extent = _check_geometry(storage, itemsize, offset, size, stride)
    u.charge(_TENSOR_COST)
    if storage.root is None:
        return _PENDING
    base, start = storage.root, storage.start + itemsize * offset
    conj = bool(metadata) and metadata.get("conj") is True and dtype.kind == "c"
    neg = bool(metadata) and metadata.get("neg") is True
    if (conj or neg) and extent:
        # PyTorch's lazy conjugate/negative bits: apply them to a copy of just the elements
        # the tensor spans, viewed with the same strides (a stride-0 tensor stays small).
        region = np.ndarray((extent,), dtype, buffer=base, offset=start).copy()
        if conj:
            np.conjugate(region, out=region)
        if neg:
            np.negative(region, out=region)
        base, start = region, 0
    try:
        if 0 in size:
            view = np.ndarray(size, dtype)
        else:
            view = np.ndarray(size, dtype, buffer=base, offset=start,
                              strides=tuple(itemsize * s for s in stride))
    except ValueError as e:  # e.g. an empty tensor of sizes [2**62, 0]: too big for NumPy
        raise RuntimeError(
            f"chainrule.load: a tensor of sizes {list(size)} cannot be made in NumPy ({e})"
        ) from None
    if any(st == 0 and n > 1 for n, st in zip(size, stride, strict=True)):
        # Elements alias: in-place writes are refused, as on an expanded tensor.
        view.flags.writeable = False
    tensor = wrap(view)
    tensor._vc[0] = 1  # PyTorch's loaded tensors are at version 1 (set_ is an in-place op)
    return tensor


def _finish(tensor: Any, requires_grad: Any, backward_hooks: Any) -> Any:
    if type(requires_grad) is not bool:
        raise pickle.UnpicklingError(f"requires_grad must be a bool, not "
                                     f"{describe(requires_grad)}")
    if backward_hooks is not None and (not isinstance(backward_hooks, dict) or backward_hooks):
        raise pickle.UnpicklingError("a tensor in this file has backward hooks, which are code "
                                     "and are not loaded")
    if tensor is not _PENDING and requires_grad:
        tensor.requires_grad = True
    return tensor


def _arity(name: str, args: tuple, low: int, high: int) -> None:
    if not low <= len(args) <= high:
        expected = low if low == high else f"{low} to {high}"
        raise pickle.UnpicklingError(f"{name} takes {expected} arguments, got {len(args)}")


def _rebuild_tensor(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_tensor", args, 4, 4)
    storage = args[0]
    dtype = storage.kind.dtype if isinstance(storage, Storage) else _UNTYPED.dtype
    return _tensor_on(u, storage, dtype, *args[1:4])


def _rebuild_tensor_v2(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_tensor_v2", args, 6, 7)
    storage = args[0]
    dtype = storage.kind.dtype if isinstance(storage, Storage) else _UNTYPED.dtype
    tensor = _tensor_on(u, storage, dtype, *args[1:4],
                        metadata=args[6] if len(args) > 6 else None)
    return _finish(tensor, args[4], args[5])


def _rebuild_tensor_v3(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_tensor_v3", args, 7, 8)
    dtype = args[6]
    if not isinstance(dtype, _dtype.dtype):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v3 needs a dtype, not {describe(dtype)}")
    tensor = _tensor_on(u, args[0], dtype.np, *args[1:4],
                        metadata=args[7] if len(args) > 7 else None)
    return _finish(tensor, args[4], args[5])


def _set_attributes(obj: Any, state: Any) -> Any:
    """``torch._utils._set_obj_state``: new attributes only (no slot, method or dunder)."""
    if type(state) is tuple:
        if len(state) != 2:
            raise pickle.UnpicklingError("Invalid serialized state")
        parts = state
    else:
        parts = (state,)
    for part in parts:
        if not part:
            continue
        if type(part) is not dict:
            raise pickle.UnpicklingError(f"a state must be a dict, not {describe(part)}")
        if obj is _PENDING:
            continue
        for key, value in part.items():
            if type(key) is not str or not key.isidentifier() or hasattr(type(obj), key):
                raise pickle.UnpicklingError(
                    f"refusing to set attribute {reprlib.repr(key)} of a "
                    f"{type(obj).__name__} (only new attribute names may be restored)"
                )
            if not hasattr(obj, "__dict__"):
                raise pickle.UnpicklingError(
                    f"a tensor in this file carries the Python attribute {key!r}; chainrule "
                    "tensors cannot hold attributes"
                )
            setattr(obj, key, value)
    return obj


def _parameter(data: Any, requires_grad: Any) -> Any:
    from ..nn.parameter import Parameter

    if data is _PENDING:
        return _PENDING
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError("a Parameter is rebuilt from a tensor and a bool")
    return Parameter(data, requires_grad)


def _rebuild_parameter(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_parameter", args, 3, 3)
    return _finish(_parameter(args[0], args[1]), False, args[2])


def _rebuild_parameter_with_state(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_parameter_with_state", args, 4, 4)
    param = _finish(_parameter(args[0], args[1]), False, args[2])
    return _set_attributes(param, args[3])


def _new_parameter(u: Unpickler, args: tuple) -> Any:
    _arity("Parameter", args, 0, 2)
    from ..nn.parameter import Parameter

    if not args:
        return Parameter()
    return _parameter(args[0], args[1] if len(args) > 1 else True)


def _rebuild_from_type_v2(u: Unpickler, args: tuple) -> Any:
    _arity("_rebuild_from_type_v2", args, 4, 4)
    func, new_type, func_args, state = args
    if type(func) is not Global or func.call is None or func.info != "rebuild":
        raise pickle.UnpicklingError(
            f"_rebuild_from_type_v2 calls only tensor rebuild functions, not {describe(func)}"
        )
    if type(func_args) is not tuple:
        raise pickle.UnpicklingError("_rebuild_from_type_v2 needs a tuple of arguments")
    result = func.call(u, func_args)
    if new_type is _PARAMETER:
        from ..nn.parameter import Parameter

        if result is not _PENDING and not isinstance(result, Parameter):
            result = _parameter(result, result.requires_grad)
    elif new_type is not _TENSOR:
        raise pickle.UnpicklingError(
            f"chainrule.load cannot rebuild tensors of type {describe(new_type)} (tensor "
            "subclasses are not loaded)"
        )
    return _set_attributes(result, state)


# ----------------------------------------------------------------------------------------------
# plain Python values


def _one_iterable(name: str, args: tuple, kinds: tuple[type, ...]) -> Any:
    _arity(name, args, 0, 1)
    if args and type(args[0]) not in kinds:
        raise pickle.UnpicklingError(f"{name}() of {describe(args[0])} is not loaded")
    return args[0] if args else ()


def _ordered_dict(u: Unpickler, args: tuple) -> Any:
    items = _one_iterable("OrderedDict", args, (list, tuple, dict, OrderedDict))
    u.charge(128 + 48 * len(items))
    pairs = items.items() if isinstance(items, dict) else items
    if not all(type(p) is tuple and len(p) == 2 for p in pairs):
        raise pickle.UnpicklingError("OrderedDict() needs (key, value) pairs")
    return u.adopt(hashing(OrderedDict, pairs))


def _counter(u: Unpickler, args: tuple) -> Any:
    items = _one_iterable("Counter", args, (dict, OrderedDict))
    u.charge(128 + 48 * len(items))
    return u.adopt(Counter(items))


def _set(u: Unpickler, args: tuple) -> Any:
    items = _one_iterable("set", args, (list, tuple, set, frozenset))
    u.charge(216 + 40 * len(items))
    return u.adopt(hashing(set, items))


def _frozenset(u: Unpickler, args: tuple) -> Any:
    items = _one_iterable("frozenset", args, (list, tuple, set, frozenset))
    u.charge(216 + 40 * len(items))
    return u.nested(hashing(frozenset, items), items)


def _bytearray(u: Unpickler, args: tuple) -> Any:
    _arity("bytearray", args, 0, 2)
    if len(args) == 2:
        data = _encode(u, args)
    elif args:
        data = args[0]
        if type(data) is not bytes:
            raise pickle.UnpicklingError(f"bytearray() of {describe(data)} is not loaded")
    else:
        data = b""
    u.charge(64 + len(data))
    return u.adopt(bytearray(data))


def _bytes(u: Unpickler, args: tuple) -> Any:
    _arity("bytes", args, 0, 0)
    return b""


def _encode(u: Unpickler, args: tuple) -> Any:
    """``_codecs.encode(text, 'latin1')``: how protocol 2 pickles bytes."""
    _arity("_codecs.encode", args, 2, 2)
    text, encoding = args
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is only loaded as (str, 'latin1')")
    try:
        data = text.encode("latin1")
    except UnicodeEncodeError as e:
        raise pickle.UnpicklingError(f"bad bytes in the pickle: {e}") from None
    u.charge(64 + len(data))
    return data


def _complex(u: Unpickler, args: tuple) -> Any:
    _arity("complex", args, 0, 2)
    if not all(type(a) in (int, float) for a in args):
        raise pickle.UnpicklingError("complex() is only loaded from numbers")
    u.charge(64)
    return complex(*args)


def _size(u: Unpickler, args: tuple) -> Any:
    _arity("torch.Size", args, 0, 1)
    dims = _ints(args[0] if args else (), "torch.Size")
    u.charge(64 + 8 * len(dims))
    return Size(dims)


def _device(u: Unpickler, args: tuple) -> Any:
    _arity("torch.device", args, 1, 2)
    if type(args[0]) is not str or (len(args) == 2 and type(args[1]) not in (int, type(None))):
        raise pickle.UnpicklingError("torch.device is only loaded from a str and an index")
    u.charge(128)
    return device(*args)


# ----------------------------------------------------------------------------------------------
# the table of globals


def _make_globals() -> Mapping[tuple[str, str], Global]:
    table: dict[tuple[str, str], Global] = {}

    def add(module: str, name: str, call: Any = None, new: Any = None, value: Any = None,
            info: Any = None) -> Global:
        marker = Global(module, name, call, new, value, info)
        table[(module, name)] = marker
        return marker

    add("collections", "OrderedDict", _ordered_dict)
    add("collections", "Counter", _counter)
    add("builtins", "set", _set)
    add("builtins", "frozenset", _frozenset)
    add("builtins", "bytearray", _bytearray)
    add("builtins", "bytes", _bytes)
    add("builtins", "complex", _complex)
    add("_codecs", "encode", _encode)
    add("torch", "Size", _size)
    add("torch", "device", _device)
    for name, rebuild in (("_rebuild_tensor", _rebuild_tensor),
                          ("_rebuild_tensor_v2", _rebuild_tensor_v2),
                          ("_rebuild_tensor_v3", _rebuild_tensor_v3),
                          ("_rebuild_parameter", _rebuild_parameter),
                          ("_rebuild_parameter_with_state", _rebuild_parameter_with_state)):
        add("torch._utils", name, rebuild, info="rebuild")
    add("torch._tensor", "_rebuild_from_type_v2", _rebuild_from_type_v2)
    for name, element in _STORAGE_KINDS.items():
        add("torch", name, info=StorageKind(name, element.np))
    add("torch.storage", "UntypedStorage", info=_UNTYPED)
    for name, loadable in _LOADABLE_DTYPES.items():
        add("torch", name, value=loadable)
    return MappingProxyType(table)


_GLOBALS = _make_globals()
_TENSOR = Global("torch", "Tensor")
_PARAMETER = Global("torch.nn.parameter", "Parameter", call=_new_parameter, new=_new_parameter)

_UNSUPPORTED = {
    **{("torch._utils", name): "sparse, quantized, nested, meta and subclass tensors"
       for name in ("_rebuild_sparse_tensor", "_rebuild_qtensor", "_rebuild_nested_tensor",
                    "_rebuild_meta_tensor_no_storage", "_rebuild_wrapper_subclass",
                    "_rebuild_device_tensor_from_numpy",
                    "_rebuild_device_tensor_from_cpu_tensor")},
    ("torch.serialization", "_get_layout"): "sparse tensors",
}
_UNSUPPORTED_DTYPES = {
    "complex32", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8",
    "bits16", "bits1x8", "bits2x4", "bits4x2", "qint8", "qint32", "quint8", "quint4x2",
    "quint2x4", "QInt8Storage", "QInt32Storage", "QUInt8Storage", "QUInt4x2Storage",
    "QUInt2x4Storage", *(f"uint{n}" for n in range(1, 8)), *(f"int{n}" for n in range(1, 8)),
    "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
    "per_channel_symmetric", "per_channel_affine_float_qparams",
}


def find_global(module: str, name: str) -> Global:
    """The marker for an allowed global; ``UnpicklingError`` for any other."""
    found = _GLOBALS.get((module, name))
    if found is not None:
        return found
    if (module, name) == ("torch", "Tensor"):
        return _TENSOR
    if (module, name) == ("torch.nn.parameter", "Parameter"):
        return _PARAMETER
    what = _UNSUPPORTED.get((module, name))
    if what is None and module == "torch" and name in _UNSUPPORTED_DTYPES:
        what = f"tensors of type torch.{name}"
    if what is not None:
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {module}.{name}: chainrule.load cannot load {what} "
            "(chainrule has no such type)."
        )
    path = f"{module}.{name}"
    if module == "builtins":
        path = name
    raise pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {path} was not an allowed global by default. "
        "chainrule.load rebuilds only tensors, parameters and plain Python data (containers, "
        "numbers, strings, bytes, dtypes, devices, sizes); this file holds something else, "
        "possibly code that would run when unpickled. Nothing from it was run."
    )


def _weights_only_message(detail: str) -> str:
    return (
        "Weights only load failed. chainrule.load rebuilds only weights and never runs code "
        "from a file (there is no weights_only=False), and this file holds something it does "
        f"not rebuild.\nWeightsUnpickler error: {detail}"
    )


def _run(unpickler: Unpickler) -> Any:
    try:
        return unpickler.load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


def _storage_id(pid: Any, length: int) -> tuple[StorageKind, str, int, Any]:
    """Check a persistent id ``('storage', kind, key, location, numel[, view])``."""
    if type(pid) is not tuple:
        raise pickle.UnpicklingError(
            f"persistent_load id must be tuple, but got {describe(pid)}"
        )
    typename = pid[0] if pid else None
    if isinstance(typename, bytes):
        typename = typename.decode("ascii", "replace")
    if typename != "storage":
        raise pickle.UnpicklingError(
            f"Only persistent_load of storage is allowed, but got {describe(typename)}"
        )
    if len(pid) != length:
        raise pickle.UnpicklingError(
            f"a storage id has {length} items, this one {len(pid)}"
        )
    kind = pid[1].info if type(pid[1]) is Global else None
    if not isinstance(kind, StorageKind):
        raise pickle.UnpicklingError(f"a storage id names a storage type, not {describe(pid[1])}")
    key, location, numel = pid[2], pid[3], pid[4]
    if type(key) not in (str, int) or type(location) not in (str, bytes) \
            or type(numel) is not int:
        raise pickle.UnpicklingError("a storage id is ('storage', type, key, location, numel)")
    return kind, str(key), numel, pid[5] if length == 6 else None


# ----------------------------------------------------------------------------------------------
# zip archives


def load_zip(source: Source) -> Any:
    """The object in a ``torch.save`` zip archive."""
    archive = ZipArchive(source)
    if not archive.names:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: archive does not "
                           "contain any files")
    first = archive.names[0]
    if "/" not in first:
        raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
    folder = first[:first.index("/") + 1]
    for name in archive.names:
        if not name.startswith(folder):
            raise RuntimeError(f"file in archive is not in a subdirectory {folder}: {name}")
    _check_version(archive, folder)
    byteorder = "little"
    if f"{folder}byteorder" in archive.entries:
        raw = archive.read(f"{folder}byteorder")
        if raw not in (b"little", b"big"):
            raise RuntimeError(
                f"Unknown endianness type: {raw.decode('utf-8', 'replace')[:40]}")
        byteorder = raw.decode()
    pickle_name = f"{folder}data.pkl"
    if pickle_name not in archive.entries:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    data = archive.read(pickle_name)
    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        kind, key, numel, _ = _storage_id(pid, 5)
        cached = storages.get(key)
        if cached is not None:  # the first id naming a key types it (as in PyTorch)
            return cached
        name = f"{folder}data/{key}"
        entry = archive.entries.get(name)
        if entry is None:
            raise RuntimeError(
                f"PytorchStreamReader failed locating file data/{key}: file not found"
            )
        nbytes = numel * kind.itemsize
        if entry.size != nbytes:
            raise RuntimeError(
                f"record size ({entry.size} bytes) does not match expected size ({nbytes} "
                f"bytes = {nbytes} elements * 1 bytes/element) for dtype Byte"
            )
        root = np.empty(nbytes, np.uint8)  # nbytes <= the file's size: checked just above
        try:
            archive.read_into(name, root)
        except Truncated as e:  # the file shrank under us: not the pickle's truncation
            raise RuntimeError(str(e)) from None
        if byteorder != sys.byteorder:
            _byteswap(root, kind)
        storage = Storage(kind, root, 0, nbytes)
        storages[key] = storage
        return storage

    return _run(Unpickler(BytesReader(data), find_global, persistent_load, _budget(len(data))))


def _check_version(archive: ZipArchive, folder: str) -> None:
    name = f"{folder}.data/version"
    if name not in archive.entries:
        name = f"{folder}version"
    if name not in archive.entries:
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
    text = archive.read(name)[:64].decode("utf-8", "replace").strip()
    try:
        version = int(text)
    except ValueError:
        raise RuntimeError(f"Couldn't parse the version {text} as Long Long.") from None
    if version < _MIN_ZIP_VERSION:
        raise RuntimeError(
            f"Attempted to read a PyTorch file with version {version}, but the minimum "
            f"supported version for reading is {_MIN_ZIP_VERSION}."
        )
    if version > _MAX_ZIP_VERSION:
        raise RuntimeError(
            f"Attempted to read a PyTorch file with version {version}, but the maximum "
            f"supported version for reading is {_MAX_ZIP_VERSION}."
        )


# ----------------------------------------------------------------------------------------------
# the legacy stream


def _no_persistent_ids(pid: Any) -> Any:
    raise pickle.UnpicklingError("unsupported persistent id encountered")


def load_legacy(source: Source) -> Any:
    """The object in a legacy (non-zip) ``torch.save`` stream.

    Storage bytes follow the pickle that uses them, so the pickle is run twice: first to learn
    which storages exist (and check every tensor against their declared sizes), then, once the
    storages are read, to build the result.
    """
    reader = SequentialReader(source, 0)

    def header() -> Any:
        budget = _budget(source.size - reader.position)
        return _run(Unpickler(reader, find_global, _no_persistent_ids, budget))

    if header() != _MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = header()
    if protocol != _PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {reprlib.repr(protocol)}")
    sys_info = header()
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True) is not False
    start = reader.position
    declared: dict[str, Storage] = {}
    _run(Unpickler(reader, find_global, _legacy_storages(declared, None),
                   _budget(source.size - start)))
    keys = header()
    if type(keys) is not list or not all(type(k) is str for k in keys):
        raise pickle.UnpicklingError("the legacy storage list must be a list of str")
    listed = set(keys)
    if len(listed) != len(keys):
        raise RuntimeError("chainrule.load: the legacy storage list names a storage twice")
    missing = [k for k in declared if k not in listed]
    if missing:
        raise RuntimeError(
            f"chainrule.load: storage {missing[0]!r} is used but its bytes are not in the file"
        )
    roots: dict[str, Storage] = {}
    position = reader.position
    for key in keys:
        storage = declared.get(key)
        if storage is None:
            raise RuntimeError(f"storage key {key!r} not found in deserialized_objects")
        (count,) = struct.unpack("<q", source.read_at(position, 8))
        position += 8
        if count * storage.kind.itemsize != storage.nbytes:
            raise RuntimeError(
                f"storage has wrong byte size: expected {storage.nbytes} got "
                f"{count * storage.kind.itemsize}"
            )
        if storage.nbytes > source.size - position:
            raise Truncated(storage.nbytes - (source.size - position))
        root = np.empty(storage.nbytes, np.uint8)
        source.read_into(position, root)
        position += storage.nbytes
        if (sys.byteorder == "little") != little:
            _byteswap(root, storage.kind)
        roots[key] = Storage(storage.kind, root, 0, storage.nbytes)
    second = SequentialReader(source, start)
    return _run(Unpickler(second, find_global, _legacy_storages(declared, roots),
                          _budget(source.size - start)))


def _legacy_storages(declared: dict[str, Storage],
                     roots: dict[str, Storage] | None) -> Callable[[Any], Storage]:
    """persistent_load for legacy ids: records declared storages (``roots`` None) or hands out
    the storages read from the file."""
    views: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        kind, key, numel, view = _storage_id(pid, 6)
        if numel < 0:
            raise RuntimeError(f"chainrule.load: storage {key!r} has negative size {numel}")
        storage = declared.get(key)
        if storage is None:
            if roots is not None:
                raise RuntimeError(f"chainrule.load: storage {key!r} was not declared")
            storage = declared[key] = Storage(kind, None, 0, numel * kind.itemsize)
        if roots is not None:
            storage = roots[key]
        if view is None:
            return storage
        if type(view) is not tuple or len(view) != 3 or type(view[0]) not in (str, int) \
                or not all(type(v) is int for v in view[1:]):
            raise pickle.UnpicklingError("a storage view is (key, offset, size)")
        view_key, offset, size = str(view[0]), view[1], view[2]
        found = views.get(view_key)
        if found is not None:
            return found
        unit = storage.kind.itemsize
        if offset < 0 or size < 0 or (offset + size) * unit > storage.nbytes:
            raise RuntimeError(
                f"chainrule.load: storage view {view_key!r} ({offset}, {size}) lies outside "
                f"its storage of {storage.nbytes // unit} elements"
            )
        found = Storage(storage.kind, storage.root, storage.start + offset * unit, size * unit)
        views[view_key] = found
        return found

    return persistent_load
