"""``chainrule.save`` / ``chainrule.load``: weights in the safetensors format, never pickle.

``save`` writes a state dict (or any nesting of dicts, lists and tuples holding tensors, numbers,
strings and None: a checkpoint with an optimizer state, say) as a safetensors file. The tensors
are the file's entries (a flat state dict keeps its own key names, so other safetensors readers
see ``0.weight``, ``0.bias`` ...); the nesting, the key order and which tensors were
``Parameter`` are JSON in the header's metadata. Nothing executable is ever written or read.

``load`` reads those files, plain safetensors files from other tools, and, beyond PyTorch,
PyTorch's own ``.pt``/``.pth`` files (the zip archives ``torch.save`` writes) without PyTorch:
their ``data.pkl`` is read by an unpickler that can only rebuild tensors, parameters and plain
containers. Any other global (``os.system``, ``builtins.eval``, a class ...) stops the load with
``pickle.UnpicklingError`` before it is resolved, so a malicious file cannot run code. Tensor data
comes from the archive's ``data/<key>`` entries, read with NumPy in the archive's byte order;
offsets, sizes and strides are checked against the storage before any view is made.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import zipfile
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from ._tensor import Tensor, wrap

__all__ = ["save", "load"]

FileLike = str | os.PathLike | IO[bytes]

_STRUCTURE_KEY = "chainrule.structure"
_MODULE_METADATA_KEY = "chainrule.module_versions"


# ----------------------------------------------------------------------------------------------
# save


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file) in the safetensors format.

    ``obj`` is a tensor, or dicts/lists/tuples of tensors, numbers, strings, bools and None
    (state dicts, optimizer state dicts, checkpoints). Other objects raise ``TypeError``: a
    safe format cannot hold code.

    Example:
        >>> import chainrule as torch, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> torch.save(torch.nn.Linear(2, 1).state_dict(), path)
        >>> list(torch.load(path))
        ['weight', 'bias']
    """
    arrays: dict[str, np.ndarray] = {}
    flat = isinstance(obj, Mapping) and all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()
    ) and len(obj) > 0
    structure = _encode(obj, arrays, "" if flat else "tensor", flat)
    metadata = {"format": "pt", _STRUCTURE_KEY: json.dumps(structure)}
    module_versions = getattr(obj, "_metadata", None)
    if isinstance(module_versions, Mapping):
        metadata[_MODULE_METADATA_KEY] = json.dumps(
            {str(k): dict(v) for k, v in module_versions.items()}
        )
    from safetensors.numpy import save as save_bytes

    data = save_bytes(arrays, metadata=metadata)
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as handle:
            handle.write(data)
    else:
        f.write(data)


def _encode(obj: Any, arrays: dict[str, np.ndarray], path: str, flat: bool) -> Any:
    """A JSON description of ``obj``; tensors go into ``arrays`` under a unique key."""
    if isinstance(obj, Tensor):
        key = path
        n = 1
        while key in arrays or not key:
            key = f"{path}#{n}"
            n += 1
        data = obj._data
        if data.dtype.kind == "c":
            raise TypeError("chainrule.save: complex tensors are not supported by safetensors")
        arrays[key] = data if data.flags.c_contiguous else data.copy()  # keeps 0-d as 0-d
        entry: dict[str, Any] = {"tensor": key}
        from .nn.parameter import Parameter

        if isinstance(obj, Parameter):
            entry["parameter"] = True
        if obj._requires_grad:
            entry["requires_grad"] = True
        return entry
    if obj is None or isinstance(obj, bool | int | float | str):
        return {"value": obj}
    if isinstance(obj, Mapping):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str | int | float | bool) and k is not None:
                raise TypeError(
                    f"chainrule.save cannot store a dict key of type {type(k).__name__}"
                )
            child = str(k) if flat else f"{path}.{k}" if path else str(k)
            items.append([k, _encode(v, arrays, child, False)])
        return {"ordered_dict" if isinstance(obj, OrderedDict) else "dict": items}
    if isinstance(obj, list | tuple):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, arrays, f"{path}.{i}", False) for i, v in enumerate(obj)]}
    if isinstance(obj, np.generic):
        return {"value": obj.item()}
    raise TypeError(
        f"chainrule.save cannot store objects of type {type(obj).__name__}: only tensors, "
        "numbers, strings, None, and dicts, lists and tuples of them (the safetensors format "
        "holds no code)"
    )


# ----------------------------------------------------------------------------------------------
# load


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **kwargs: Any) -> Any:
    """Read what :func:`save` wrote, a safetensors file, or a PyTorch ``.pt``/``.pth`` file.

    PyTorch files are read without PyTorch and without running their pickle: only tensors,
    parameters and plain containers are rebuilt (``pickle.UnpicklingError`` for anything
    else). ``map_location`` and ``weights_only`` are accepted for compatibility (everything
    loads on the CPU, and loading is always weights-only).
    """
    data = _read_all(f)
    if data[:4] == b"PK\x03\x04":
        return _load_torch_zip(data)
    if _looks_like_safetensors(data):
        return _load_safetensors(data)
    if data[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05"):
        raise pickle.UnpicklingError(
            "chainrule.load: this is a raw pickle (or a legacy, non-zip PyTorch file); it is not "
            "unpickled, since unpickling can run arbitrary code. Re-save it with torch.save "
            "(zip format) or as safetensors."
        )
    raise RuntimeError(
        "chainrule.load: not a safetensors file nor a PyTorch zip archive"
    )


def _read_all(f: FileLike) -> bytes:
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as handle:
            return handle.read()
    return f.read()


def _looks_like_safetensors(data: bytes) -> bool:
    if len(data) < 10:
        return False
    (size,) = struct.unpack("<Q", data[:8])
    return 2 <= size <= len(data) - 8 and data[8:9] == b"{"


def _load_safetensors(data: bytes) -> Any:
    from safetensors.numpy import load as load_bytes

    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    metadata = header.get("__metadata__") or {}
    arrays = load_bytes(data)
    tensors = {k: wrap(np.array(a, copy=True)) for k, a in arrays.items()}
    structure = metadata.get(_STRUCTURE_KEY)
    if structure is None:
        order = [k for k in header if k != "__metadata__"]
        order.sort(key=lambda k: header[k]["data_offsets"][0])
        return OrderedDict((k, tensors[k]) for k in order)
    result = _decode(json.loads(structure), tensors)
    versions = metadata.get(_MODULE_METADATA_KEY)
    if versions is not None and isinstance(result, OrderedDict):
        result._metadata = OrderedDict(json.loads(versions))  # type: ignore[attr-defined]
    return result


def _decode(node: Any, tensors: dict[str, Tensor]) -> Any:
    if "tensor" in node:
        t = tensors[node["tensor"]]
        if node.get("parameter"):
            from .nn.parameter import Parameter

            return Parameter(t, node.get("requires_grad", False))
        if node.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "value" in node:
        return node["value"]
    if "dict" in node:
        return {k: _decode(v, tensors) for k, v in node["dict"]}
    if "ordered_dict" in node:
        return OrderedDict((k, _decode(v, tensors)) for k, v in node["ordered_dict"])
    if "list" in node:
        return [_decode(v, tensors) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors) for v in node["tuple"])
    raise ValueError(f"chainrule.load: unknown entry in the file's structure: {node!r}")


# ----------------------------------------------------------------------------------------------
# PyTorch zip archives, without PyTorch


class _StorageType:
    """What ``torch.FloatStorage`` & co. unpickle to: just the element dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str) -> None:
        self.name = name
        self.dtype = dtype


_STORAGE_DTYPES = {
    "FloatStorage": "f4", "DoubleStorage": "f8", "HalfStorage": "f2", "BFloat16Storage": "bf16",
    "LongStorage": "i8", "IntStorage": "i4", "ShortStorage": "i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?", "ComplexFloatStorage": "c8",
    "ComplexDoubleStorage": "c16",
}


class _Storage:
    """A storage read from ``data/<key>``: a flat array of its elements."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _rebuild_tensor_v2(storage: _Storage, storage_offset: int, size: tuple[int, ...],
                       stride: tuple[int, ...], requires_grad: bool, backward_hooks: Any,
                       metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: a strided view of the storage, bounds-checked."""
    array = storage.array
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise pickle.UnpicklingError("chainrule.load: malformed tensor (size/stride)")
    offset = int(storage_offset)
    if 0 not in size:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
        if offset < 0 or last >= array.size:
            raise pickle.UnpicklingError(
                "chainrule.load: a tensor reaches outside its storage (corrupt file)"
            )
        view = np.lib.stride_tricks.as_strided(
            array[offset:], shape=size, strides=tuple(s * array.itemsize for s in stride)
        )
    else:
        view = np.empty(size, array.dtype)
    t = wrap(np.array(view, copy=True))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any,
                       state: Any = None) -> Any:
    """``torch._utils._rebuild_parameter``."""
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _as_tuple(*args: Any) -> tuple:
    """``torch.Size`` rebuilt as a tuple."""
    return tuple(*args)


_ALLOWED_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch", "Size"): _as_tuple,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("__builtin__", "set"): set,
    ("__builtin__", "frozenset"): frozenset,
}
for _name, _code in _STORAGE_DTYPES.items():
    _ALLOWED_GLOBALS[("torch", _name)] = _StorageType(_name, _code)


class _WeightsUnpickler(pickle.Unpickler):
    """Rebuilds tensors, parameters and containers; refuses every other global."""

    def __init__(self, file: IO[bytes], archive: zipfile.ZipFile, prefix: str,
                 byteorder: str) -> None:
        super().__init__(file)
        self._archive = archive
        self._prefix = prefix
        self._byteorder = byteorder
        self._storages: dict[str, _Storage] = {}

    def find_class(self, module: str, name: str) -> Any:
        """The allowed global ``module.name``; ``UnpicklingError`` for anything else."""
        found = _ALLOWED_GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(
                f"chainrule.load refuses to load global '{module}.{name}': a PyTorch file may "
                "only contain tensors, parameters and plain containers (dicts, lists, tuples, "
                "numbers, strings). This file holds something else, possibly code that would run "
                "when unpickled; it was not loaded."
            )
        return found

    def persistent_load(self, pid: Any) -> _Storage:
        """``('storage', type, key, location, numel)``: the archive's ``data/<key>``."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"chainrule.load: unsupported persistent id {pid!r}")
        _, storage_type, key, _location, numel = pid
        key = str(key)
        cached = self._storages.get(key)
        if cached is not None:
            return cached
        try:
            raw = self._archive.read(f"{self._prefix}data/{key}")
        except KeyError:
            raise pickle.UnpicklingError(
                f"chainrule.load: storage data/{key} is missing from the archive"
            ) from None
        storage = _Storage(_storage_array(raw, storage_type.dtype, self._byteorder, int(numel)))
        self._storages[key] = storage
        return storage


def _storage_array(raw: bytes, code: str, byteorder: str, numel: int) -> np.ndarray:
    """The storage's elements as a native-order array (bfloat16 widened to float32)."""
    order = "<" if byteorder == "little" else ">"
    if code == "bf16":
        halves = np.frombuffer(raw, dtype=order + "u2", count=numel)
        return (halves.astype(np.uint32) << 16).view(np.float32)
    dtype = np.dtype(order + code) if code not in ("?", "i1", "u1") else np.dtype(code)
    if len(raw) < numel * dtype.itemsize:
        raise pickle.UnpicklingError("chainrule.load: a storage is shorter than declared")
    return np.frombuffer(raw, dtype=dtype, count=numel).astype(dtype.newbyteorder("="))


def _load_torch_zip(data: bytes) -> Any:
    archive = zipfile.ZipFile(io.BytesIO(data))
    pickles = [n for n in archive.namelist() if n.endswith("data.pkl")]
    if len(pickles) != 1:
        raise RuntimeError(
            "chainrule.load: a PyTorch archive has one '<name>/data.pkl'; this one has "
            f"{len(pickles)}"
        )
    prefix = pickles[0][: -len("data.pkl")]
    byteorder = "little"
    if f"{prefix}byteorder" in archive.namelist():
        byteorder = archive.read(f"{prefix}byteorder").decode().strip()
        if byteorder not in ("little", "big"):
            raise pickle.UnpicklingError(f"chainrule.load: unknown byte order {byteorder!r}")
    unpickler = _WeightsUnpickler(io.BytesIO(archive.read(pickles[0])), archive, prefix,
                                  byteorder)
    return unpickler.load()
