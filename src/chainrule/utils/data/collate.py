"""Putting samples together into a batch: ``default_collate`` and ``default_convert``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import as_tensor, tensor
from ...ops.shape import stack

__all__ = ["default_collate", "default_convert"]

_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
    "found {}"
)


def default_convert(data: Any) -> Any:
    """Numpy arrays to tensors, inside containers too (used when not batching)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return as_tensor(data)
    if isinstance(data, np.generic) and data.dtype.kind not in "SaUO":
        return as_tensor(data)
    if isinstance(data, Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, str | bytes):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, structure by structure, as PyTorch's does.

    Tensors and NumPy arrays are stacked along a new first dimension; Python floats become a
    float64 tensor and ints an int64 tensor; strings stay a list; dicts, named tuples, tuples
    and lists are collated field by field (tuples come back as lists, as in PyTorch).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray | np.generic) and not isinstance(elem, np.str_ | np.bytes_):
        if elem.dtype.kind in "SaUO":
            raise TypeError(_ERROR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return default_collate([as_tensor(b) for b in batch])
        return as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return tensor(list(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=_float64())
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, str | bytes):
        return list(batch)
    if isinstance(elem, Mapping):
        try:
            return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})  # type: ignore[call-arg]
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch, strict=True)))
    if isinstance(elem, Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=True))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_ERROR.format(type(elem)))


def _float64() -> Any:
    from ... import _dtype

    return _dtype.float64

