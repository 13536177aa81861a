"""Shapes and dtypes of a node's outputs, found by running it on example arrays.

Every value carries an example array of its shape and dtype (a constant's own value; ones for
a float input, zeros for an integer or bool one, so that index arguments stay in range). A new
node runs its function on its inputs' examples, under ``no_grad``: the results give the outputs'
shapes and dtypes, with chainrule's own promotion and broadcasting rules and its errors for
arguments that do not fit. A dimension unknown until run time (``None``) is given two probe
sizes, in two runs: an output dimension that differs between them is unknown too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import dtype as DType
from .._dtype import from_numpy_dtype
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import no_grad

__all__ = ["PROBE_SIZES", "example_input", "infer_call", "Inferred", "to_tensors"]

#: The sizes an unknown dimension takes in the two example runs: unlikely sizes of a real
#: dimension (an unknown size broadcast against a known one fails to build), and large enough
#: for the small indices programs take along an unknown dimension (``x[2]``).
PROBE_SIZES = (13, 17)


def _filled(shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    np_dtype = dtype.np
    fill = 1 if np_dtype.kind in "fc" else 0
    return np.full(shape, fill, dtype=np_dtype)


def example_input(
    shape: tuple[int | None, ...] | None, dtype: DType
) -> tuple[np.ndarray, np.ndarray | None]:
    """The example arrays of an input of ``shape`` (a ``None`` dimension: unknown size;
    ``None``: unknown rank, probed as a 0-d and a 1-d array) and ``dtype``."""
    if shape is None:
        return _filled((), dtype), _filled((PROBE_SIZES[1],), dtype)
    first = _filled(tuple(PROBE_SIZES[0] if d is None else d for d in shape), dtype)
    if None not in shape:
        return first, None
    second = _filled(tuple(PROBE_SIZES[1] if d is None else d for d in shape), dtype)
    return first, second


class Inferred:
    """What running a node on the examples gave: per output, shape, dtype and examples."""

    __slots__ = ("shapes", "dtypes", "examples", "probes")

    def __init__(self) -> None:
        self.shapes: list[tuple[int | None, ...] | None] = []
        self.dtypes: list[DType] = []
        self.examples: list[np.ndarray] = []
        self.probes: list[np.ndarray | None] = []


def to_tensors(arg: Any, arrays: Any) -> Any:
    """``arg`` with each graph value (also inside a tuple or list) replaced by a tensor of the
    array ``arrays(value)`` gives."""
    if hasattr(arg, "node") and hasattr(arg, "example"):
        return wrap(arrays(arg))
    if isinstance(arg, tuple | list):
        return type(arg)(
            wrap(arrays(a)) if hasattr(a, "node") and hasattr(a, "example") else a for a in arg
        )
    return arg


def _run(
    target: Callable[..., Any],
    args: tuple,
    kwargs: dict[str, Any],
    arrays: Callable[[Any], np.ndarray],
) -> list[np.ndarray]:
    t_args = [to_tensors(a, arrays) for a in args]
    t_kwargs = {k: to_tensors(v, arrays) for k, v in kwargs.items()}
    with no_grad(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = target(*t_args, **t_kwargs)
    items = out if isinstance(out, tuple | list) else (out,)
    results = []
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(
                f"{getattr(target, '__name__', target)} returned {type(item).__name__}, "
                "not a tensor: it cannot be a graph node"
            )
        results.append(item._data)
    return results


def infer_call(target: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Inferred:
    """Run ``target`` on the examples of its arguments: its outputs' shapes, dtypes and
    examples. Raises what ``target`` raises for arguments that do not fit."""
    values = [v for v in _flat(args, kwargs)]
    try:
        first = _run(target, args, kwargs, lambda v: v.example)
    except Exception:
        if all(v.known_shape for v in values):
            raise
        # An unknown size meeting a known one ((?,) + (2, 2)): unknown sizes as 1, which
        # broadcasts; an output size of 1 where an input's size is unknown stays unknown.
        return _inferred_with_ones(target, args, kwargs, values)
    second: list[np.ndarray] | None = None
    if any(v.probe is not None for v in values):
        try:
            second = _run(target, args, kwargs, lambda v: v.example if v.probe is None else v.probe)
        except Exception:  # noqa: BLE001 - the second size does not fit: take the first's
            second = None
    unknown_rank = any(v.shape is None for v in values)
    result = Inferred()
    for i, array in enumerate(first):
        shape: tuple[int | None, ...] | None = array.shape
        probe = None
        if second is not None and i < len(second) and second[i].shape != array.shape:
            other = second[i]
            probe = other
            if other.ndim == array.ndim:
                shape = tuple(
                    a if a == b else None for a, b in zip(array.shape, other.shape, strict=True)
                )
            else:
                shape = None
        elif unknown_rank:
            shape = None
        result.shapes.append(shape)
        result.dtypes.append(from_numpy_dtype(array.dtype))
        result.examples.append(array)
        result.probes.append(probe)
    return result


def _as_ones(value: Any) -> np.ndarray:
    if value.known_shape:
        return value.example
    shape = () if value.shape is None else tuple(1 if d is None else d for d in value.shape)
    return _filled(shape, from_numpy_dtype(value.example.dtype))


def _inferred_with_ones(
    target: Callable[..., Any], args: tuple, kwargs: dict[str, Any], values: list[Any]
) -> Inferred:
    try:
        outputs = _run(target, args, kwargs, _as_ones)
    except Exception:  # noqa: BLE001 - it does not fit either: the error of the probe sizes
        _run(target, args, kwargs, lambda v: v.example)
        raise
    unknown_rank = any(v.shape is None for v in values)
    result = Inferred()
    for array in outputs:
        shape: tuple[int | None, ...] | None = None
        if not unknown_rank:
            dims = list(array.shape)
            for value in values:
                offset = len(dims) - len(value.shape)
                for k, d in enumerate(value.shape):
                    if d is None and 0 <= offset + k < len(dims) and dims[offset + k] == 1:
                        dims[offset + k] = None
            shape = tuple(dims)
        result.shapes.append(shape)
        result.dtypes.append(from_numpy_dtype(array.dtype))
        result.examples.append(array)
        result.probes.append(None)
    return result


def _flat(args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    found = []
    for arg in (*args, *kwargs.values()):
        for item in arg if isinstance(arg, tuple | list) else (arg,):
            if hasattr(item, "node") and hasattr(item, "example"):
                found.append(item)
    return found
