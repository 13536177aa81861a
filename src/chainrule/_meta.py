"""The ``meta`` device: tensors with a shape, a dtype and strides but no data.

A meta tensor's ``_data`` is a :class:`MetaArray`: an ndarray subclass whose elements are not
the tensor's values (there are none). One made from nothing (a factory with
``device="meta"``) has zero strides over a single element, so it takes no memory whatever its
shape, and remembers the strides PyTorch would give it (``logical_strides``). Ops on meta
tensors compute only what PyTorch's meta kernels compute, the result's shape, dtype and strides
(``ops._dispatch`` runs them, see :func:`stand_in`), and reading values (``item``, ``tolist``,
``numpy``, printing them) raises PyTorch's errors.

Nothing here costs the CPU path anything: the dispatcher looks at :data:`META` (True once a
meta tensor was made in this process) before it looks at any tensor's array type.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "MetaArray",
    "META",
    "meta_array",
    "meta_like",
    "is_meta_array",
    "stand_in",
    "logical_strides",
    "ITEM_MESSAGE",
    "NO_DATA_MESSAGE",
    "NUMPY_MESSAGE",
]

#: ``META[0]``: a meta tensor was made in this process (the dispatcher's fast paths then hand
#: every op to the general runner, which looks for meta arguments).
META: list[bool] = [False]

ITEM_MESSAGE = "Tensor.item() cannot be called on meta tensors"
NO_DATA_MESSAGE = "Cannot copy out of meta tensor; no data!"
NUMPY_MESSAGE = (
    "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
    "host memory first."
)

NONZERO_MESSAGE = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a "
    "correct data-independent implementation does not exist. This implementation returns a "
    "fake value, assuming all elements of the tensor are non-zero. To enable this "
    "registration, please set 'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' "
    "to True."
)

#: Ops whose result's shape depends on the values (PyTorch has no meta kernel for them):
#: chainrule op name -> PyTorch's ATen operator named in the error.
DATA_DEPENDENT = {
    "_unique2": "_unique2", "_unique_dim": "unique_dim",
    "_unique_consecutive": "unique_consecutive", "_unique_values_inverse": "_unique",
    "masked_select": "masked_select", "equal": "equal", "bincount": "bincount",
}  # fmt: skip


def no_meta_kernel(name: str) -> NotImplementedError:
    """PyTorch's error for an op that cannot run on meta tensors (``name``: its ATen name)."""
    return NotImplementedError(
        f"aten::{name}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following for "
        "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
    )


def refuse_data_dependent(name: str, *tensors: Any) -> None:
    """PyTorch's error when one of ``tensors`` (Tensors) is a meta tensor and the op ``name``
    (a key of :data:`DATA_DEPENDENT`, or ``"nonzero"``) needs its values."""
    for t in tensors:
        if type(getattr(t, "_data", None)) is MetaArray:
            if name == "nonzero":
                raise NotImplementedError(NONZERO_MESSAGE)
            raise no_meta_kernel(DATA_DEPENDENT[name])


# Stand-ins for ops on meta tensors get real memory (so a view op sees the strides PyTorch's
# meta kernel would) up to this many elements per argument; past it they are zero-strided.
_STAND_IN_LIMIT = 1 << 22


class MetaArray(np.ndarray):
    """The array of a meta tensor: its shape and dtype are the tensor's, its elements are not
    values. ``_strides`` holds the tensor's strides in elements when the array's own are not
    them (a zero-strided array made from nothing), else None."""

    _strides: tuple[int, ...] | None = None

    def __array_finalize__(self, obj: Any) -> None:
        # (NumPy results computed from a MetaArray: their own strides are real)
        self._strides = None


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def meta_array(
    shape: tuple[int, ...], dtype: Any, strides: tuple[int, ...] | None = None
) -> MetaArray:
    """A meta array of ``shape`` and ``dtype`` taking no memory, with ``strides`` (in elements;
    default contiguous) as the tensor's strides."""
    META[0] = True
    shape = tuple(int(s) for s in shape)
    base = np.zeros(1, dtype=dtype)
    array = np.lib.stride_tricks.as_strided(base, shape, (0,) * len(shape), writeable=True).view(
        MetaArray
    )
    array._strides = _contiguous(shape) if strides is None else tuple(strides)
    return array


def logical_strides(array: np.ndarray) -> tuple[int, ...]:
    """The strides (in elements) of the meta tensor whose array is ``array``."""
    strides = getattr(array, "_strides", None)
    if strides is not None:
        return strides
    if array.size == 0 or array.itemsize == 0:
        return _contiguous(array.shape)
    return tuple(s // array.itemsize for s in array.strides)


def meta_like(array: np.ndarray) -> MetaArray:
    """A meta array with ``array``'s shape, dtype and strides (a result an op computed on
    stand-ins): contiguous strides where ``array``'s are not a layout (zero strides)."""
    if type(array) is MetaArray and array._strides is not None:
        return array
    strides: tuple[int, ...] | None = None
    pairs = zip(array.strides, array.shape, strict=True)
    if array.size > 1 and all(s > 0 or n == 1 for s, n in pairs):
        strides = tuple(s // array.itemsize for s in array.strides)
    return meta_array(array.shape, array.dtype, strides)


def is_meta_array(array: Any) -> bool:
    """Whether ``array`` is a meta tensor's array."""
    return type(array) is MetaArray


def stand_in(array: MetaArray) -> np.ndarray:
    """A plain array to run an op's NumPy forward on for a meta argument: of its shape, dtype
    and strides (zeros, in memory of its own) when small enough, else zero-strided (no memory:
    an op whose result is as large then fails, and the dispatcher says so)."""
    strides = logical_strides(array)
    shape = array.shape
    if not shape or 0 in shape:
        return np.zeros(shape, dtype=array.dtype)
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides, strict=True))
    if extent <= _STAND_IN_LIMIT and math.prod(shape) <= _STAND_IN_LIMIT:
        buffer = np.zeros(extent, dtype=array.dtype)
        offset = sum((n - 1) * -s for n, s in zip(shape, strides, strict=True) if s < 0)
        itemsize = array.itemsize
        return np.lib.stride_tricks.as_strided(
            buffer[offset:], shape, tuple(s * itemsize for s in strides)
        )
    return np.asarray(array).view(np.ndarray)
