"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a dtype, as PyTorch reports
them (values from NumPy's and ml_dtypes' tables, which hold the same IEEE numbers)."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from . import _dtype

__all__ = ["finfo", "iinfo"]


def _check_dtype(function: str, value: Any) -> _dtype.dtype:
    if not isinstance(value, _dtype.dtype):
        raise TypeError(f"{function}(): argument 'type' (position 1) must be chainrule.dtype, "
                        f"not {type(value).__name__}")
    return value


class finfo:  # noqa: N801 - PyTorch's name
    """The limits of a floating dtype (the default dtype when none is given; a complex dtype's
    real one): ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``),
    ``resolution`` and ``dtype`` (its name).

    Example:
        >>> import chainrule as torch
        >>> torch.finfo(torch.float16).max
        65504.0
    """

    def __init__(self, type: _dtype.dtype | None = None) -> None:  # noqa: A002 - PyTorch's
        d = _dtype.get_default_dtype() if type is None else _check_dtype("finfo", type)
        if d.is_complex:
            d = d.to_real()
        if not d.is_floating_point:
            raise TypeError("chainrule.finfo() requires a floating point input type. Use "
                            "chainrule.iinfo to handle 'chainrule.finfo'")
        info: Any = ml_dtypes.finfo(d.np) if d.np.kind == "V" else np.finfo(d.np)
        self.bits: int = int(info.bits)
        self.eps: float = float(info.eps)
        self.max: float = float(info.max)
        self.min: float = float(info.min)
        self.tiny: float = float(info.smallest_normal)
        self.smallest_normal: float = self.tiny
        self.resolution: float = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype: str = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:  # noqa: N801 - PyTorch's name
    """The limits of an integer dtype: ``bits``, ``max``, ``min`` and ``dtype`` (its name).

    Example:
        >>> import chainrule as torch
        >>> torch.iinfo(torch.uint8).max
        255
    """

    def __init__(self, type: _dtype.dtype) -> None:  # noqa: A002 - PyTorch's name
        d = _check_dtype("iinfo", type)
        if d is _dtype.bool:
            raise TypeError("chainrule.bool is not supported by chainrule.iinfo")
        if d.np.kind not in "iu":
            raise TypeError("chainrule.iinfo() requires an integer input type. Use "
                            "chainrule.finfo to handle 'chainrule.iinfo'")
        info = np.iinfo(d.np)
        self.bits: int = int(info.bits)
        self.max: int = int(info.max)
        self.min: int = int(info.min)
        self.dtype: str = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__
