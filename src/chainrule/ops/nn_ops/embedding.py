"""Embedding lookup and its adjoint (a scatter-add of rows), each the other's derivative."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from ...autograd.graph import MUTATION_WATCH, clone_saved_before_write
from .._registry import op
from ..inplace import bump_version
from ._common import scalar_name

__all__ = ["embedding", "embedding_backward"]


@op("EmbeddingBackward0", inputs=("weight",), tensor_params=("indices",))
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    """Rows of ``weight`` at ``indices``. ``padding_idx`` (its row gets no gradient; -1 for
    none) and ``scale_grad_by_freq`` only shape the gradient. As PyTorch's node, it saves the
    indices (and the weight's first size)."""
    return np.take(weight, indices, axis=0)


@_embedding.derivative("weight")
def _(ops, grad, weight_shape, indices, padding_idx, scale_grad_by_freq):
    return ops.embedding_backward(grad, indices, weight_shape[0], padding_idx, scale_grad_by_freq)


@op("EmbeddingDenseBackwardBackward0", inputs=("grad",), tensor_params=("indices",))
def embedding_backward(grad, indices, num_weights, padding_idx=-1, scale_grad_by_freq=False):
    """Rows of ``grad`` added into a ``(num_weights, dim)`` zero matrix at ``indices``, in
    order (PyTorch's ``embedding_dense_backward``): none at ``padding_idx``, each divided by
    how often its index occurs with ``scale_grad_by_freq``."""
    dim = grad.shape[-1]
    flat = indices.reshape(-1)
    rows = grad.reshape(-1, dim)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat].astype(grad.dtype).reshape(-1, 1)
    if padding_idx >= 0:
        rows = np.where((flat == padding_idx)[:, None], 0, rows).astype(grad.dtype, copy=False)
    out = np.zeros((num_weights, dim), grad.dtype)
    np.add.at(out, flat, rows)
    return out


@embedding_backward.derivative("grad")
def _(ops, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    # The rows of ``grad`` at ``indices``, scaled as the first derivative scales them.
    # PyTorch's embedding_dense_double_backward drops the 1/count of scale_grad_by_freq, which
    # is not the derivative (tests/test_op_sweep_double_backward.py checks ours numerically).
    rows = ops.embedding(grad, indices)
    if padding_idx < 0 and not scale_grad_by_freq:
        return rows
    flat = _array(indices)
    factor = np.ones(flat.shape, _array(grad).dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat.reshape(-1), minlength=num_weights)
        factor = factor / counts[flat]
    if padding_idx >= 0:
        factor[flat == padding_idx] = 0
    factor = factor.astype(_array(grad).dtype)[..., None]
    return rows * (factor if type(rows) is np.ndarray else wrap(factor))


def _array(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` by the integer indices ``input``.

    ``padding_idx`` rows get no gradient; ``max_norm`` renormalises the looked-up rows of
    ``weight`` in place first (as PyTorch does); ``scale_grad_by_freq`` divides each row's
    gradient by how often its index occurs in the batch.
    """
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got chainrule.{_legacy_name(idx.dtype)} instead (while "
            "checking arguments for embedding)"
        )
    if sparse:
        raise RuntimeError("sparse gradients are not supported by chainrule (use sparse=False)")
    num_weights = weight._data.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= num_weights):
        raise IndexError("index out of range in self")
    if padding_idx is not None:
        if padding_idx >= num_weights or padding_idx < -num_weights:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += num_weights
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    return _embedding(weight, input, -1 if padding_idx is None else padding_idx,
                      bool(scale_grad_by_freq))


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    with no_grad():
        rows = np.unique(idx)
        data = weight._data
        norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
        too_big = norms > max_norm
        if MUTATION_WATCH:
            clone_saved_before_write(weight)  # (PyTorch's embedding_renorm_, always called)
        if np.any(too_big):
            factor = (max_norm / (norms[too_big] + 1e-7)).astype(data.dtype)
            data[rows[too_big]] *= factor[:, None]
            bump_version(weight)


def _legacy_name(dtype: np.dtype) -> str:
    return {"Float": "FloatTensor", "Double": "DoubleTensor", "Half": "HalfTensor",
            "Short": "ShortTensor", "Char": "CharTensor", "Byte": "ByteTensor",
            "Bool": "BoolTensor"}.get(scalar_name(dtype), "Tensor")


PRIMITIVES: dict[str, Any] = {"embedding": _embedding, "embedding_backward": embedding_backward}
