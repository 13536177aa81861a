"""Looking elements up: ``isin`` (membership in a set of values) and ``unravel_index`` (flat
indices to coordinates). No gradients: the results are booleans and integers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from .indexing import _scalar_name

__all__ = ["isin", "unravel_index"]

_ISIN_SIGNATURES = (
    " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
)


def _values(value: Any) -> np.ndarray:
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    if data.dtype.kind in "cb":  # (PyTorch's isin has no complex or bool kernel)
        raise RuntimeError(
            f"Unsupported input type encountered for isin(): {_scalar_name(data.dtype)}"
        )
    return data


def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    """Whether each element of ``elements`` is among ``test_elements`` (NaN never is), as a
    bool tensor shaped like ``elements``; ``invert=True`` for the opposite.

    Example:
        >>> import chainrule as torch
        >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]))
        tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        got = f"({type(elements).__name__}, {type(test_elements).__name__})"
        raise TypeError(
            f"isin() received an invalid combination of arguments - got {got}, but "
            f"expected one of:\n{_ISIN_SIGNATURES}"
        )
    a, b = _values(elements), _values(test_elements)
    if isinstance(test_elements, Tensor) and b.size < 10 * a.size**0.145:
        # PyTorch compares each element with every test element here, through a view of
        # test_elements (whose error a non-viewable layout gets)
        test_elements.view(-1)
    return wrap(np.asarray(np.isin(a, b, invert=bool(invert))))


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of each flat index in ``indices`` (wrapping
    around as Python's modulo does), one tensor per dimension.

    Example:
        >>> import chainrule as torch
        >>> torch.unravel_index(torch.tensor([5, 11]), (3, 4))
        (tensor([1, 2]), tensor([1, 3]))
    """
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    data = indices._data
    if data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    sizes = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if any(s < 0 for s in sizes):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(sizes)}")
    if 0 in sizes:
        raise RuntimeError("ZeroDivisionError")
    strides = []
    step = 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    strides.reverse()
    flat = data.astype(np.int64)
    return tuple(
        wrap(np.asarray((flat // stride) % size, dtype=np.int64))
        for stride, size in zip(strides, sizes, strict=True)
    )
