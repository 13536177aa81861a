"""``cov`` and ``corrcoef``: covariance and correlation matrices of variables (rows) over
observations (columns), with frequency and observation weights.

Composed as PyTorch composes them, so the graph is PyTorch's: ``cov`` ends in
``SqueezeBackward0``, ``corrcoef`` in ``ClampBackward1`` (``DivBackward0`` for one variable).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._tensor import Tensor
from . import indexing, linalg, pointwise, reduction, shape
from ._registry import tensor_method

__all__ = ["cov", "corrcoef"]

_DOF_WARNING = (
    "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
    "observations. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)"
)


def _check_weights(name: str, weights: Tensor, observations: int) -> None:
    w = weights._data
    if w.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got "
            f"{name} with {w.ndim} dimensions"
        )
    if name == "fweights" and w.dtype.kind not in "iu":
        raise RuntimeError(
            "cov(): expected fweights to have integral dtype but got fweights "
            f"with {indexing._scalar_name(w.dtype)} dtype"
        )
    if name == "aweights" and w.dtype.kind not in "fV":
        raise RuntimeError(
            "cov(): expected aweights to have floating point dtype but got "
            f"aweights with {indexing._scalar_name(w.dtype)} dtype"
        )
    if w.size != observations:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are "
            f"observations in the input but got {w.size} != {observations}"
        )
    if w.size and w.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@tensor_method
def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (a 1-D input: one variable),
    observations in its columns, weighted by ``fweights`` (integer repeat counts) and
    ``aweights`` (observation weights); ``correction=1`` is Bessel's correction.

    Example:
        >>> import chainrule as torch
        >>> torch.cov(torch.tensor([1., 2., 4.]))
        tensor(2.3333)
    """
    if not isinstance(correction, int) or isinstance(correction, bool):
        raise TypeError(
            f"cov(): argument 'correction' must be int, not {type(correction).__name__}"
        )
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an "
            f"input with {ndim} dimensions"
        )
    rows = input if ndim == 2 else input.view(1, -1)
    observations = rows._data.shape[1]
    weights = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations)
        weights = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        weight_sum: Any = observations
        average = pointwise.true_divide(reduction.sum(rows, 1), observations)
    else:
        weight_sum = reduction.sum(weights)
        average = pointwise.true_divide(reduction.sum(rows * weights, 1), weight_sum)
    if weights is None or aweights is None:
        norm = weight_sum - correction
    elif correction == 0:
        norm = weight_sum
    else:
        norm = weight_sum - correction * reduction.sum(weights * aweights) / weight_sum
    norm_value = norm.item() if isinstance(norm, Tensor) else norm
    if norm_value <= 0:
        warnings.warn(_DOF_WARNING, UserWarning, stacklevel=user_stacklevel())
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    centred = rows - shape.unsqueeze(average, 1)
    other = centred if weights is None else centred * weights
    product = linalg.mm(centred, shape.t(other).conj())
    with np.errstate(divide="ignore", invalid="ignore"):
        return shape.squeeze(pointwise.true_divide(product, norm))


@tensor_method
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``input``'s rows (clipped to
    [-1, 1]; NaN for a constant variable).

    Example:
        >>> import chainrule as torch
        >>> torch.corrcoef(torch.tensor([[1., 2., 3.], [3., 2., 1.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    ndim = input._data.ndim
    if ndim > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got "
            f"an input with {ndim} dimensions"
        )
    c = cov(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        if c._data.ndim == 0:
            return c / c
        deviations = pointwise.sqrt(shape.diagonal(c))
        c = c / deviations.view(-1, 1)
        c = c / deviations.view(1, -1)
    return pointwise.clip(c, -1, 1)
