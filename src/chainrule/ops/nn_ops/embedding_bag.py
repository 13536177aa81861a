"""``embedding_bag``: sums, means or maxima of bags of embedding rows, without forming the
rows (PyTorch's ``EmbeddingBagBackward0``, which saves the bag of each index ``result1``, the
bag sizes ``result2`` and the rows the maxima came from ``result3``).

Bags are given by ``offsets`` into a 1-D ``input`` (or are the rows of a 2-D one); entries
equal to ``padding_idx`` take no part (nor count for the mean); empty bags give zeros. The
gradient is computed by a non-differentiable op, as PyTorch's (its result has no graph).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._dtype import int64
from ..._tensor import Tensor, wrap
from .._registry import op
from ._common import accumulation_dtype, scalar_name
from .embedding import _legacy_name, _renorm_rows

__all__ = ["embedding_bag"]

_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bag_of_each(
    indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool
) -> tuple[int, np.ndarray]:
    """The number of bags and the bag of each index (with ``include_last_offset`` the last
    offset closes no bag: the last bag runs to the end of the input, as PyTorch's kernel)."""
    starts = offsets[:-1] if include_last_offset else offsets
    positions = np.arange(len(indices))
    return len(starts), np.searchsorted(starts, positions, side="right") - 1


def _used(indices: np.ndarray, padding_idx: int) -> np.ndarray:
    """The entries that take part (not ``padding_idx``)."""
    if padding_idx < 0:
        return np.ones(indices.shape, bool)
    return indices != padding_idx


@op(
    "EmbeddingBagBackward0",
    inputs=("weight", "per_sample_weights"),
    tensor_params=("indices", "offsets"),
    saved_outputs=("result1", "result2", "result3"),
    name="_embedding_bag",
)
def _embedding_bag(
    weight,
    indices,
    offsets,
    scale_grad_by_freq,
    mode,
    sparse,
    padding_idx,
    result1,
    result2,
    result3,
    per_sample_weights=None,
):
    """Each bag's sum (0), mean (1) or maximum (2) of its rows of ``weight``; ``result1`` is
    the bag of each index, ``result2`` the bag sizes, ``result3`` the rows of the maxima."""
    n_bags = len(result2)
    keep = _used(indices, padding_idx)
    dim = weight.shape[1]
    if mode == 2:
        out = np.zeros((n_bags, dim), weight.dtype)
        filled = result3 >= 0
        out[filled] = weight[result3[filled], np.nonzero(filled)[1]]
        return out
    acc = accumulation_dtype(weight.dtype)  # (float16 sums in float32, rounded once)
    rows = weight[indices[keep]].astype(acc)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep].astype(acc)[:, None]
    out = np.zeros((n_bags, dim), acc)
    np.add.at(out, result1[keep], rows)
    if mode == 1:
        out = out / np.maximum(result2, 1).astype(acc)[:, None]
    return out.astype(weight.dtype, copy=False)


@_embedding_bag.derivative("weight")
def _(
    ops,
    grad,
    weight,
    indices,
    offsets,
    scale_grad_by_freq,
    mode,
    sparse,
    padding_idx,
    result1,
    result2,
    result3,
    per_sample_weights,
):
    return ops.embedding_bag_backward(
        grad,
        weight,
        indices,
        mode,
        padding_idx,
        result1,
        result2,
        result3,
        per_sample_weights,
        "weight",
    )


@_embedding_bag.derivative("per_sample_weights")
def _(
    ops,
    grad,
    weight,
    indices,
    offsets,
    scale_grad_by_freq,
    mode,
    sparse,
    padding_idx,
    result1,
    result2,
    result3,
    per_sample_weights,
):
    return ops.embedding_bag_backward(
        grad,
        weight,
        indices,
        mode,
        padding_idx,
        result1,
        result2,
        result3,
        per_sample_weights,
        "per_sample_weights",
    )


@op(
    "EmbeddingBagBackwardBackward0",
    inputs=("grad",),
    differentiable=False,
    tensor_params=("weight", "indices", "bag_of", "bag_size", "max_indices", "per_sample_weights"),
)
def _embedding_bag_backward(
    grad,
    weight,
    indices,
    mode,
    padding_idx,
    bag_of,
    bag_size,
    max_indices,
    per_sample_weights,
    which,
):
    """The gradient of :func:`embedding_bag` in ``weight`` or in ``per_sample_weights``."""
    keep = _used(indices, padding_idx)
    if which == "per_sample_weights":
        out = np.zeros(indices.shape, grad.dtype)
        out[keep] = np.sum(grad[bag_of[keep]] * weight[indices[keep]], axis=1)
        return out
    out = np.zeros(weight.shape, grad.dtype)
    if mode == 2:
        rows, cols = np.nonzero(max_indices >= 0)
        np.add.at(out, (max_indices[rows, cols], cols), grad[rows, cols])
        return out
    contrib = grad[bag_of[keep]]
    if per_sample_weights is not None:
        contrib = contrib * per_sample_weights[keep][:, None]
    if mode == 1:
        contrib = contrib / bag_size[bag_of[keep]].astype(grad.dtype)[:, None]
    np.add.at(out, indices[keep], contrib.astype(grad.dtype, copy=False))
    return out


def _saved_results(
    indices: np.ndarray,
    offsets: np.ndarray,
    weight: np.ndarray,
    mode: int,
    include_last_offset: bool,
    padding_idx: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bag of each index, each bag's size, and (max mode) the row of each maximum (the
    first one; -1 for an empty bag)."""
    n_bags, bag_of = _bag_of_each(indices, offsets, include_last_offset)
    keep = _used(indices, padding_idx)
    sizes = np.bincount(bag_of[keep], minlength=n_bags).astype(np.int64)
    max_indices = np.full((n_bags, weight.shape[1]) if mode == 2 else (0,), -1, np.int64)
    if mode == 2:
        for b in range(n_bags):
            members = np.nonzero(keep & (bag_of == b))[0]
            if len(members):
                rows = weight[indices[members]]
                max_indices[b] = indices[members][np.argmax(rows, axis=0)]
    return bag_of.astype(np.int64), sizes, max_indices


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or maximum of each bag of rows of ``weight``: ``input`` is 1-D with
    ``offsets`` (where each bag starts) or 2-D (one bag per row).

    Example:
        >>> import chainrule as torch
        >>> w = torch.arange(12.0).reshape(4, 3)
        >>> torch.nn.functional.embedding_bag(torch.tensor([0, 1, 3]), w, torch.tensor([0, 2]))
        tensor([[1.5000, 2.5000, 3.5000],
                [9.0000, 10.0000, 11.0000]])
    """
    if weight.dtype == int64 and input._data.dtype.kind in "fV":  # (the old argument order)
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage "
            "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
            "`embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    idx = input._data
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_str(offsets)}"
            )
        off = np.arange(0, idx.size, idx.shape[1], dtype=idx.dtype)
        include_last_offset = False
        idx = idx.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        off = offsets._data
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got chainrule.{_legacy_name(idx.dtype)} instead (while "
            "checking arguments for embedding_bag)"
        )
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if sparse:
        raise RuntimeError("sparse gradients are not supported by chainrule (use sparse=False)")
    if scale_grad_by_freq:
        # PyTorch's CPU kernel divides some rows by the count of another index (seen with
        # repeated indices in 2.13); rather than a gradient that differs, none.
        raise NotImplementedError(
            "chainrule: embedding_bag(scale_grad_by_freq=True) is not supported"
        )
    num_weights = weight._data.shape[0]
    pad = -1
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{num_weights} through "
                f"{num_weights - 1}, but got {padding_idx}"
            )
        pad = padding_idx % num_weights
    if len(off) and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {int(off[0])}\n"
            f"[ chainrule.{scalar_name(off.dtype)}Tensor{{}} ]"  # (PyTorch prints an empty tensor)
        )
    if len(off) and off[-1] > idx.size:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {idx.size} but got "
            f"offsets[-1] of {int(off[-1])}"
        )
    bad = np.nonzero((idx < 0) | (idx >= num_weights))[0]
    if len(bad):
        raise RuntimeError(
            f"Index {int(bad[0])} of input takes value {int(idx[bad[0]])} which is not in the "
            f"valid range [0, {num_weights})"
        )
    idx64 = idx.astype(np.int64, copy=False)
    off64 = off.astype(np.int64, copy=False)
    bag_of, sizes, max_indices = _saved_results(
        idx64, off64, weight._data, _MODES[mode], include_last_offset, pad
    )
    return _embedding_bag(
        weight,
        wrap(idx64),
        wrap(off64),
        bool(scale_grad_by_freq),
        _MODES[mode],
        bool(sparse),
        pad,
        wrap(bag_of),
        wrap(sizes),
        wrap(max_indices),
        per_sample_weights=per_sample_weights,
    )


def _type_str(value: Any) -> str:
    return str(type(value)).replace("chainrule._tensor.Tensor", "torch.Tensor")


PRIMITIVES: dict[str, Any] = {"embedding_bag_backward": _embedding_bag_backward}
