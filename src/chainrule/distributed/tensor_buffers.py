"""Tensors as MPI messages: the tensor's own NumPy memory, never a copy.

Moving data (broadcast, gather, send ...) sends raw bytes, so every dtype travels, bfloat16
included. Reductions need MPI to know the element type: the standard ones map to MPI's types;
complex tensors reduce as their real and imaginary parts (SUM and AVG only, as PyTorch);
float16 and bfloat16, which MPI lacks, reduce through an MPI operation defined here that adds
(or multiplies, takes the max ...) the raw 2-byte values as their own type, rounding at each
step as PyTorch's CPU backends do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .._tensor import Tensor
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from .process_group import _mpi
from .reduce_op import RedOpType

__all__ = ["byte_message", "check_reduction", "contiguous_array", "reduction_message"]

_HALF_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))

_NUMPY_REDUCERS: dict[RedOpType, Callable[..., Any]] = {
    RedOpType.SUM: np.add,
    RedOpType.AVG: np.add,
    RedOpType.PRODUCT: np.multiply,
    RedOpType.MIN: np.minimum,
    RedOpType.MAX: np.maximum,
}

_CUSTOM_OPS: dict[tuple[np.dtype, RedOpType], Any] = {}


def contiguous_array(t: Tensor, writes: bool) -> np.ndarray:
    """The tensor's memory as a flat array (a view). MPI's backend needs contiguous tensors,
    as PyTorch's (its message otherwise)."""
    if not isinstance(t, Tensor):
        raise TypeError(
            "Invalid function argument. Expected parameter `tensor` of type torch.Tensor\n"
            f"             but got {type(t)} instead."
        )
    data = t._data
    if not data.flags.c_contiguous:
        raise RuntimeError("input tensor has to be contiguous")
    if writes:
        if MUTATION_WATCH:
            clone_saved_before_write(t)
        if not data.flags.writeable:
            raise RuntimeError("a collective cannot write into a read-only tensor")
    return data.reshape(-1)


def byte_message(array: np.ndarray) -> list[Any]:
    """``[bytes view, MPI.BYTE]``: any dtype, no copy."""
    return [array.view(np.uint8), _mpi().BYTE]


def _custom_op(dtype: np.dtype, op: RedOpType) -> Any:
    """An MPI operation reducing raw 2-byte buffers as ``dtype`` (float16 or bfloat16)."""
    key = (dtype, op)
    if key not in _CUSTOM_OPS:
        reducer = _NUMPY_REDUCERS[op]

        def combine(incoming: Any, accumulated: Any, datatype: Any) -> None:
            values = np.frombuffer(incoming, dtype=dtype)
            into = np.frombuffer(accumulated, dtype=dtype)
            reducer(values, into, out=into)

        _CUSTOM_OPS[key] = _mpi().Op.Create(combine, commute=True)
    return _CUSTOM_OPS[key]


def _standard_op(op: RedOpType, kind: str) -> Any:
    MPI = _mpi()  # noqa: N806
    if kind == "b":
        # bool: a sum or max is "any", a product or min is "all".
        if op in (RedOpType.SUM, RedOpType.MAX, RedOpType.BOR):
            return MPI.LOR
        if op in (RedOpType.PRODUCT, RedOpType.MIN, RedOpType.BAND):
            return MPI.LAND
        return MPI.LXOR
    return {
        RedOpType.SUM: MPI.SUM,
        RedOpType.AVG: MPI.SUM,
        RedOpType.PRODUCT: MPI.PROD,
        RedOpType.MIN: MPI.MIN,
        RedOpType.MAX: MPI.MAX,
        RedOpType.BAND: MPI.BAND,
        RedOpType.BOR: MPI.BOR,
        RedOpType.BXOR: MPI.BXOR,
    }[op]


def check_reduction(op: Any, dtype: np.dtype, name: str) -> RedOpType:
    """The op as a ``RedOpType``, refused where it has no meaning for ``dtype``."""
    if not isinstance(op, RedOpType):
        raise TypeError(f"{name}: op must be a torch.distributed.ReduceOp, got {op!r}")
    if op == RedOpType.PREMUL_SUM:
        raise RuntimeError("PREMUL_SUM is only supported by the NCCL backend")
    if dtype.kind == "c" and op not in (RedOpType.SUM, RedOpType.AVG):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    bitwise = op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR)
    if bitwise and dtype.kind not in "iub":
        raise RuntimeError(f"{name}: {op} needs an integer or bool tensor, got {dtype}")
    if op == RedOpType.AVG and dtype.kind not in "fcV":
        raise RuntimeError(
            f"{name}: ReduceOp.AVG needs a floating-point or complex tensor, got {dtype}"
        )
    return op


def reduction_message(array: np.ndarray, op: RedOpType) -> tuple[list[Any], Any]:
    """``([buffer, MPI datatype], MPI op)`` reducing ``array`` in place, without a copy."""
    MPI = _mpi()  # noqa: N806
    if array.dtype in _HALF_TYPES:
        return [array.view(np.uint16), MPI.UINT16_T], _custom_op(array.dtype, op)
    if array.dtype.kind == "c":
        real = array.view(np.float32 if array.dtype == np.complex64 else np.float64)
        return reduction_message(real, op)
    return [array, _standard_type(array.dtype)], _standard_op(op, array.dtype.kind)


def _standard_type(dtype: np.dtype) -> Any:
    """MPI's predefined type for a NumPy dtype (reductions need predefined types)."""
    MPI = _mpi()  # noqa: N806
    return {
        "bool": MPI.C_BOOL,
        "int8": MPI.INT8_T,
        "int16": MPI.INT16_T,
        "int32": MPI.INT32_T,
        "int64": MPI.INT64_T,
        "uint8": MPI.UINT8_T,
        "uint16": MPI.UINT16_T,
        "uint32": MPI.UINT32_T,
        "uint64": MPI.UINT64_T,
        "float32": MPI.FLOAT,
        "float64": MPI.DOUBLE,
    }[dtype.name]
