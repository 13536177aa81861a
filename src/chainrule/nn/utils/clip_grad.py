"""Gradient clipping: by total norm (``clip_grad_norm_``) or by value (``clip_grad_value_``).

Gradients are scaled in place (their arrays are written and version counters bumped), as
PyTorch's in-place ops under ``no_grad`` do.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable

import numpy as np

from ..._tensor import Tensor, wrap
from ...autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ...ops.inplace import bump_version

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]

TensorOrTensors = Tensor | Iterable[Tensor]


def _vector_norm(a: np.ndarray, norm_type: float) -> np.ndarray:
    if norm_type == float("inf"):
        return np.max(np.abs(a)) if a.size else np.zeros((), a.dtype)
    if norm_type == float("-inf"):
        return np.min(np.abs(a))
    if norm_type == 0:
        return np.asarray(np.count_nonzero(a), a.dtype)
    if norm_type == 2:
        return np.sqrt(np.sum(a * a, dtype=a.dtype))
    if norm_type == 1:
        return np.sum(np.abs(a), dtype=a.dtype)
    return np.power(np.sum(np.abs(a) ** norm_type, dtype=a.dtype), 1.0 / norm_type)


def get_total_norm(
    tensors: TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if concatenated)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return wrap(np.asarray(0.0, np.float32))
    norms = [np.asarray(_vector_norm(t._data, norm_type)) for t in tensors]
    dtype = np.result_type(*[n.dtype for n in norms])
    total = np.asarray(
        _vector_norm(np.stack([n.astype(dtype) for n in norms]), norm_type), dtype=dtype
    )
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return wrap(total)


def clip_grads_with_norm_(
    parameters: TensorOrTensors, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))``."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p._grad for p in parameters if p._grad is not None]
    if not grads:
        return
    total = total_norm._data
    coef = np.minimum(
        np.asarray(float(max_norm), total.dtype) / (total + total.dtype.type(1e-6)),
        total.dtype.type(1.0),
    )
    for g in grads:
        if MUTATION_WATCH:
            clone_saved_before_write(g)  # (PyTorch's mul_)
        g._data *= coef.astype(g._data.dtype)
        bump_version(g)


def clip_grad_norm_(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale all gradients together so their total norm is at most ``max_norm``.

    Returns the total norm before clipping.

    Example:
        >>> import chainrule as torch
        >>> w = torch.tensor([3.0, 4.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> torch.nn.utils.clip_grad_norm_([w], 1.0)
        tensor(10.)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p._grad for p in parameters if p._grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(
    parameters: TensorOrTensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(
    parameters: TensorOrTensors, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]``."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    for p in parameters:
        g = p._grad
        if g is not None:
            if MUTATION_WATCH:
                clone_saved_before_write(g)  # (PyTorch's clamp_)
            np.clip(g._data, -clip_value, clip_value, out=g._data)
            bump_version(g)
