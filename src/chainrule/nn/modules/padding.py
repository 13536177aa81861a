"""Padding layers: constant, zero, reflection, replication and circular padding."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.nn_ops.padding import pad
from .module import Module

__all__ = [
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


def _widths(padding: Any, dims: int) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * (2 * dims)
    return tuple(padding)


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _widths(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dimensions with ``value``."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dimension with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dimensions with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dimensions with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its reflection."""

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their reflection."""

    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dimensions with their reflection."""

    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge."""

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edges."""

    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dimensions by repeating their edges."""

    _dims, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dimension by wrapping around."""

    _dims, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dimensions by wrapping around."""

    _dims, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pad the last three dimensions by wrapping around."""

    _dims, _mode = 3, "circular"
