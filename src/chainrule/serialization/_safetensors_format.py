"""The safetensors format: what ``chainrule.save`` writes, and how ``chainrule.load`` reads it.

``save`` writes a state dict (or any nesting of dicts, lists and tuples holding tensors, numbers,
strings and None: a checkpoint with an optimizer state, say) as a safetensors file. The tensors
are the file's entries (a flat state dict keeps its own key names, so other safetensors readers
see ``0.weight``, ``0.bias`` ...); the nesting, the key order and which tensors were
``Parameter`` are JSON in the header's metadata. Nothing executable is ever written or read.

``load_safetensors`` reads such files and plain safetensors files from other tools. The header
is checked as the safetensors library checks it (at most 100 MB of UTF-8 JSON, known dtypes,
each tensor's byte range exactly its shape's size, the ranges tiling the data without holes or
overlaps) and every problem is a ``RuntimeError`` with the library's wording, never a
``JSONDecodeError`` or ``KeyError``. Each tensor is then read into its own buffer: a tensor
costs its size, nothing is read twice, and nothing is allocated before its range was checked
against the file. The metadata's structure is decoded without recursion.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections import OrderedDict
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ._files import Source

FileLike = str | os.PathLike | IO[bytes]

_STRUCTURE_KEY = "chainrule.structure"
_MODULE_METADATA_KEY = "chainrule.module_versions"

# ----------------------------------------------------------------------------------------------
# save


def save(
    obj: Any,
    f: FileLike,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
) -> None:
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
    flat = (
        isinstance(obj, Mapping)
        and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())
        and len(obj) > 0
    )
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
        if data.dtype == np.complex128:
            # (safetensors has C64 but no 128-bit complex type.)
            raise TypeError(
                "chainrule.save: complex128 tensors are not supported by safetensors (complex64 is)"
            )
        # NumPy's copy keeps every bit (NaN payloads of bfloat16 too). safetensors names the
        # entry's type from the dtype's name: ml_dtypes' bfloat16 is written as BF16.
        arrays[key] = data if data.flags.c_contiguous else data.copy()  # keeps 0-d as 0-d
        entry: dict[str, Any] = {"tensor": key}
        from ..nn.parameter import Parameter

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

_MAX_HEADER = 100_000_000  # the safetensors library's limit
_MAX_DIMS = 64

# safetensors dtype -> chainrule dtype (the file is little-endian; BF16 is ml_dtypes' bfloat16,
# so its bytes are viewed as they are, as every other type's).
_DTYPES = {
    "BOOL": _dtype.bool,
    "U8": _dtype.uint8,
    "I8": _dtype.int8,
    "I16": _dtype.int16,
    "I32": _dtype.int32,
    "I64": _dtype.int64,
    "F16": _dtype.float16,
    "BF16": _dtype.bfloat16,
    "F32": _dtype.float32,
    "F64": _dtype.float64,
    "C64": _dtype.complex64,
    "U16": _dtype.uint16,
    "U32": _dtype.uint32,
    "U64": _dtype.uint64,
}
# Known to safetensors, unknown to chainrule.
_UNSUPPORTED_DTYPES = {
    "F8_E5M2",
    "F8_E4M3",
    "F8_E8M0",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "F4",
    "F6_E2M3",
    "F6_E3M2",
}


class SafetensorsError(RuntimeError):
    """A malformed safetensors file (the safetensors library's wording)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Error while deserializing: {reason}")


def looks_like_safetensors(head: bytes) -> bool:
    """Whether the first bytes are a header length followed by a JSON object."""
    return len(head) >= 9 and head[8:9] == b"{"


def load_safetensors(source: Source) -> Any:
    """A state dict (or what ``save`` stored) from a safetensors file."""
    header, data_start = _read_header(source)
    metadata = header.pop("__metadata__", None) or {}
    entries = _check_entries(header, source.size - data_start)
    tensors = {name: _read_tensor(source, data_start, *entry) for name, entry in entries}
    structure = metadata.get(_STRUCTURE_KEY)
    if structure is None:
        return OrderedDict(tensors)
    result = _decode(_parse_json(structure, "the structure metadata"), tensors)
    versions = metadata.get(_MODULE_METADATA_KEY)
    if versions is not None and isinstance(result, OrderedDict):
        table = _parse_json(versions, "the module version metadata")
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise _bad_structure("module versions must be a dict of dicts")
        result._metadata = OrderedDict(table)  # type: ignore[attr-defined]
    return result


def _read_header(source: Source) -> tuple[dict[str, Any], int]:
    if source.size < 8:
        raise SafetensorsError("header too small")
    length = int.from_bytes(source.read_at(0, 8), "little")
    if length > _MAX_HEADER:
        raise SafetensorsError("header too large")
    if 8 + length > source.size:
        raise SafetensorsError("invalid header length")
    raw = source.read_at(8, length)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SafetensorsError(f"invalid UTF-8 in header: {e}") from None
    header = _parse_json(text, "header")
    if not isinstance(header, dict):
        raise SafetensorsError("invalid JSON in header: the header is not an object")
    metadata = header.get("__metadata__")
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values())
    ):
        raise SafetensorsError("invalid JSON in header: __metadata__ must map str to str")
    return header, 8 + length


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise SafetensorsError(f"invalid JSON in header: duplicate key {key!r}")
        result[key] = value
    return result


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise SafetensorsError(f"invalid JSON in {what}: recursion limit exceeded") from None
    except ValueError as e:  # JSONDecodeError, or an integer with too many digits
        if isinstance(e, SafetensorsError):
            raise
        raise SafetensorsError(f"invalid JSON in {what}: {e}") from None


def _natural(value: Any) -> bool:
    return type(value) is int and value >= 0


def _check_entries(
    header: dict[str, Any], data_size: int
) -> list[tuple[str, tuple[str, tuple[int, ...], int, int]]]:
    """Validated ``(name, (code, shape, begin, end))``, in the order of their data."""
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict):
            raise SafetensorsError(f"invalid JSON in header: tensor `{name}` is not an object")
        for field in ("dtype", "shape", "data_offsets"):
            if field not in info:
                raise SafetensorsError(f"invalid JSON in header: missing field `{field}`")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or (
            dtype not in _DTYPES and dtype not in _UNSUPPORTED_DTYPES
        ):
            raise SafetensorsError(f"invalid JSON in header: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(_natural(s) for s in shape):
            raise SafetensorsError(
                f"invalid JSON in header: the shape of `{name}` is not a list of naturals"
            )
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(_natural(o) for o in offsets)
        ):
            raise SafetensorsError(
                f"invalid JSON in header: the data_offsets of `{name}` are not two naturals"
            )
        if dtype in _UNSUPPORTED_DTYPES:
            raise RuntimeError(
                f"chainrule.load: tensor {name!r} has dtype {dtype}, which chainrule does not "
                "support"
            )
        if len(shape) > _MAX_DIMS:
            raise RuntimeError(
                f"chainrule.load: tensor {name!r} has {len(shape)} dimensions; chainrule "
                f"(NumPy) supports at most {_MAX_DIMS}"
            )
        entries.append((name, dtype, tuple(shape), offsets[0], offsets[1]))
    entries.sort(key=lambda e: (e[3], e[4]))
    end = 0
    checked = []
    for name, dtype, shape, begin, stop in entries:
        if begin != end or stop < begin:
            raise SafetensorsError(f"invalid offset for tensor `{name}`")
        nbytes = math.prod(shape) * _DTYPES[dtype].itemsize
        if nbytes >= 1 << 64:
            raise SafetensorsError("overflow computing buffer size from shape and/or element type")
        if nbytes != stop - begin:
            raise SafetensorsError("invalid shape, data type, or offset for tensor")
        end = stop
        checked.append((name, (dtype, shape, begin, stop)))
    if end != data_size:
        raise SafetensorsError("incomplete metadata, file not fully covered")
    return checked


def _read_tensor(
    source: Source, data_start: int, dtype: str, shape: tuple[int, ...], begin: int, end: int
) -> Tensor:
    buffer = np.empty(end - begin, np.uint8)  # its range was checked against the file
    source.read_into(data_start + begin, buffer)
    element = _DTYPES[dtype].np
    if sys.byteorder != "little":
        unit = element.itemsize // (2 if element.kind == "c" else 1)  # complex: each half
        if unit > 1:
            buffer.view(f"u{unit}").byteswap(inplace=True)
    array = buffer.view(element)
    return wrap(array.reshape(shape))


def _bad_structure(reason: str) -> RuntimeError:
    return RuntimeError(
        f"chainrule.load: the file's {_STRUCTURE_KEY} metadata is malformed: {reason}"
    )


_CONTAINERS = ("dict", "ordered_dict", "list", "tuple")


def _decode(root: Any, tensors: dict[str, Tensor]) -> Any:
    """Rebuild what ``_encode`` described, with an explicit stack (no recursion)."""
    # Each frame: [kind, keys, child nodes, built children].
    result: list[Any] = []
    stack: list[list[Any]] = []

    def enter(node: Any) -> None:
        if not isinstance(node, dict):
            raise _bad_structure(f"a node is a {type(node).__name__}, not an object")
        if "tensor" in node:
            deliver(_tensor(node, tensors))
        elif "value" in node:
            value = node["value"]
            if isinstance(value, dict | list):
                raise _bad_structure("a value is a container")
            deliver(value)
        else:
            kind = next((k for k in _CONTAINERS if k in node), None)
            if kind is None:
                raise _bad_structure(f"unknown node with keys {sorted(node)[:5]}")
            children = node[kind]
            if not isinstance(children, list):
                raise _bad_structure(f"a {kind} node does not hold a list")
            keys = None
            if kind in ("dict", "ordered_dict"):
                if not all(isinstance(p, list) and len(p) == 2 for p in children):
                    raise _bad_structure(f"a {kind} node holds something else than pairs")
                keys = [p[0] for p in children]
                if not all(k is None or isinstance(k, str | int | float | bool) for k in keys):
                    raise _bad_structure("a dict key is not a number, a string or null")
                children = [p[1] for p in children]
            stack.append([kind, keys, children, []])

    def deliver(value: Any) -> None:
        (stack[-1][3] if stack else result).append(value)

    enter(root)
    while stack:
        kind, keys, children, built = stack[-1]
        if len(built) < len(children):
            enter(children[len(built)])
            continue
        stack.pop()
        if kind == "list":
            deliver(built)
        elif kind == "tuple":
            deliver(tuple(built))
        elif kind == "dict":
            deliver(dict(zip(keys, built, strict=True)))
        else:
            deliver(OrderedDict(zip(keys, built, strict=True)))
    return result[0]


def _tensor(node: dict[str, Any], tensors: dict[str, Tensor]) -> Tensor:
    key = node["tensor"]
    if not isinstance(key, str) or key not in tensors:
        raise _bad_structure(f"it names a tensor {key!r} the file does not hold")
    t = tensors[key]
    if node.get("parameter"):
        from ..nn.parameter import Parameter

        return Parameter(t, bool(node.get("requires_grad", False)))
    if node.get("requires_grad"):
        t.requires_grad_(True)
    return t
