"""``pdist``: the ``p``-norm distances between the rows of a matrix, each pair once
(``PdistBackward0``; its gradient, ``PdistBackwardBackward0``, is not differentiated again in
PyTorch, whose backward raises ``NotImplementedError``). The norms and their gradients are
``cdist``'s kernels (``ops/distances.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ..distances import pnorm_gradient, pnorm_of_differences
from ._common import scalar_name

__all__ = ["pdist"]


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(i, j)``, ``i < j``, in PyTorch's order (row-major upper triangle)."""
    return np.triu_indices(n, 1)


@op("PdistBackward0", name="_pdist_forward")
def _pdist(self, p):
    """``||x[i] - x[j]||_p`` for ``i < j``."""
    i, j = _pairs(self.shape[0])
    out = pnorm_of_differences(self[i] - self[j], p)
    return np.ascontiguousarray(out.astype(self.dtype, copy=False))


@_pdist.derivative("self")
def _(ops, grad, self, p, result):
    return ops.pdist_backward(grad, self, p, result)


@op("PdistBackwardBackward0", inputs=("grad", "self", "pdist"))
def _pdist_backward(grad, self, p, pdist):
    """Each pair's gradient added to its first row and subtracted from its second."""
    i, j = _pairs(self.shape[0])
    per_pair = pnorm_gradient(self[i] - self[j], grad[:, None], pdist[:, None], p)
    out = np.zeros(self.shape, self.dtype)
    np.add.at(out, i, per_pair.astype(self.dtype, copy=False))
    np.subtract.at(out, j, per_pair.astype(self.dtype, copy=False))
    return out


for _name in ("grad", "self", "pdist"):

    @_pdist_backward.derivative(_name)
    def _(ops, grads):
        raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between each pair of rows of the ``(N, M)`` ``input``: the
    upper triangle of ``cdist(input, input)``, row by row (``N (N - 1) / 2`` values).

    Example:
        >>> import chainrule as torch
        >>> torch.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    x = input._data
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if x.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"pdist\" not implemented for '{scalar_name(x.dtype)}'")
    return _pdist(input, float(p))


PRIMITIVES: dict[str, Any] = {"pdist_backward": _pdist_backward}
