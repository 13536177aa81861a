"""Scaled dot-product attention, as PyTorch's CPU dispatch computes it.

PyTorch picks one of two kernels (``select_sdp_backend_cpp``):

* the fused "flash" kernel, one node ``ScaledDotProductFlashAttentionForCpuBackward0``, when
  query, key and value are 4-d with the same head size, the same batch size, head counts that
  divide, a last dimension of stride 1, no dropout and a mask (if any) that needs no grad;
* otherwise the math composition: ``q * sqrt(scale)`` and ``k^T * sqrt(scale)``
  (``MulBackward1``), their matrix product, the mask added, ``_safe_softmax`` (rows that are
  all ``-inf`` give zeros, not NaN), dropout, and the product with ``v``; half-precision inputs
  are computed in float32 (``ToCopyBackward0`` both ways).

The flash node's backward is not differentiable again (PyTorch: "derivative for
aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._dtype import REDUCED_FLOATS
from ..._strides import empty_preserving_layout
from ..._tensor import Tensor, wrap
from .._registry import op
from ..activation import _softmax_dim
from ..copying import clone
from ..linalg import matmul
from ..pointwise import _not_implemented_node
from ..shape import expand, reshape, transpose, unsqueeze
from ..special_ops import _mul_scalar
from .dropout import _mask as _dropout_mask

__all__ = ["scaled_dot_product_attention"]


# ----------------------------------------------------------------------------------------------
# _safe_softmax: softmax whose fully masked rows (all -inf) are zeros


@op("SafeSoftmaxBackward0")
def _safe_softmax(self, dim):
    work = self.astype(np.float32) if self.dtype in REDUCED_FLOATS else self
    if work.ndim == 0:
        return np.ones_like(self)
    top = work.max(axis=dim, keepdims=True, initial=-np.inf)  # (-inf: an empty row)
    masked_row = np.isneginf(top)
    shifted = np.subtract(work, np.where(masked_row, 0, top), order="C")
    e = np.exp(shifted, out=shifted)
    total = e.sum(axis=dim, keepdims=True)
    e /= np.where(masked_row, 1, total)
    return e.astype(self.dtype, copy=False)


@_safe_softmax.derivative("self")
def _(ops, grad, result, dim):
    # As softmax's (PyTorch's _softmax_backward_data); a zero row has a zero gradient.
    if len(result.shape) == 0:
        return grad * 0
    return result * (grad - ops.sum(grad * result, dim, True))


# ----------------------------------------------------------------------------------------------
# The fused CPU kernel


def _work_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in REDUCED_FLOATS else dtype


def _repeat_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """Key or value heads repeated for grouped-query attention (each ``heads / Hk`` times)."""
    return x if x.shape[1] == heads else np.repeat(x, heads // x.shape[1], axis=1)


def _attention_weights(
    query: np.ndarray, key: np.ndarray, attn_mask: Any, scale: float, is_causal: bool
) -> np.ndarray:
    """``softmax(scale * q k^T + mask)`` in the working dtype; rows with nothing to attend to
    are zeros (as both of PyTorch's kernels)."""
    return _safe_softmax.op.forward(_scores(query, key, attn_mask, scale, is_causal), -1)


def _default_scale(head_size: int, scale: float | None) -> float:
    return 1.0 / math.sqrt(head_size) if scale is None else float(scale)


def _scores(
    query: np.ndarray, key: np.ndarray, attn_mask: Any, scale: float, is_causal: bool
) -> np.ndarray:
    """``scale * q k^T`` with the mask applied, in the working dtype (``-inf``: masked)."""
    work = _work_dtype(query.dtype)
    q = query.astype(work, copy=False)
    k = _repeat_heads(key, q.shape[1]).astype(work, copy=False)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * np.asarray(scale, work)
    length, source = scores.shape[-2], scores.shape[-1]
    if is_causal:
        scores = np.where(np.tril(np.ones((length, source), bool)), scores, -np.inf)
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        if mask.dtype == np.bool_:  # added as 0 / -inf (NaN scores stay NaN), as PyTorch
            mask = np.where(mask, 0.0, -np.inf)
        scores = scores + mask.astype(work)
    return scores


@op(
    "ScaledDotProductFlashAttentionForCpuBackward0",
    inputs=("query", "key", "value"),
    tensor_params=("attn_mask",),
    half_native=True,
)
def _scaled_dot_product_flash_attention_for_cpu(
    query, key, value, dropout_p, is_causal, attn_mask, scale
):
    # As the kernel: the unnormalised exponentials (rounded to a half type for its product)
    # times v, divided by their float sum afterwards; fully masked rows are zeros.
    scores = _scores(query, key, attn_mask, _default_scale(query.shape[-1], scale), is_causal)
    # The kernel's running maximum starts at -inf; without a mask (its fused scale-and-max
    # loop) it skips NaN, with one it propagates NaN. A row whose maximum stays -inf (all
    # masked, or all NaN) contributes zeros (and an output of 0 * v).
    if attn_mask is None:
        top = np.fmax.reduce(scores, axis=-1, keepdims=True, initial=-np.inf)
    else:
        top = scores.max(axis=-1, keepdims=True)
    masked_row = np.isneginf(top)
    e = np.where(masked_row, 0, np.exp(scores - np.where(masked_row, 0, top)))
    total = np.where(masked_row, 1, e.sum(axis=-1, keepdims=True))
    v = _repeat_heads(value, query.shape[1]).astype(e.dtype, copy=False)
    out = np.matmul(_rounded(e, query.dtype), v) / total
    # The kernel allocates its output like the query (same strides when dense).
    laid_out = empty_preserving_layout(query, query.dtype)
    laid_out[...] = out
    return laid_out


def _rounded(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` (float32) rounded to a half-precision ``dtype`` and back, as PyTorch's kernel
    hands its float32 intermediates to the half-precision matrix products; ``x`` otherwise."""
    return x.astype(dtype).astype(x.dtype) if dtype in REDUCED_FLOATS else x


@op(
    "ScaledDotProductFlashAttentionForCpuBackward0Backward",
    inputs=("grad", "query", "key", "value", "output"),
    tensor_params=("attn_mask",),
    half_native=True,
)
def _flash_attention_backward(grad, query, key, value, output, attn_mask, scale, is_causal, which):
    """One of the three gradients of the fused kernel (``which``: 0 query, 1 key, 2 value).

    With ``P = softmax(S)``, ``S = scale * q k^T + mask`` and ``out = P v``:
    ``dv = P^T g``, ``dS = P * (g v^T - rowsum(g * out))``, ``dq = scale * dS k`` and
    ``dk = scale * dS^T q``; for grouped-query attention, key and value gradients are summed
    over the query heads that share them. Half precision: float32 throughout, ``P`` and ``dS``
    rounded to the half type before their products (PyTorch's kernel).
    """
    scale = _default_scale(query.shape[-1], scale)
    weights = _attention_weights(query, key, attn_mask, scale, is_causal)
    work = weights.dtype
    g = grad.astype(work, copy=False)
    heads, key_heads = query.shape[1], key.shape[1]
    if which == 2:
        dv = np.matmul(np.swapaxes(_rounded(weights, query.dtype), -1, -2), g)
        return _sum_groups(dv, key_heads, value.dtype)
    v = _repeat_heads(value, heads).astype(work, copy=False)
    dp = np.matmul(g, np.swapaxes(v, -1, -2))
    delta = np.sum(g * output.astype(work, copy=False), axis=-1, keepdims=True)
    ds = _rounded(weights * (dp - delta), query.dtype)
    if which == 0:
        k = _repeat_heads(key, heads).astype(work, copy=False)
        return (np.matmul(ds, k) * np.asarray(scale, work)).astype(query.dtype)
    dk = np.matmul(np.swapaxes(ds, -1, -2), query.astype(work, copy=False))
    return _sum_groups(dk * np.asarray(scale, work), key_heads, key.dtype)


def _sum_groups(x: np.ndarray, key_heads: int, dtype: np.dtype) -> np.ndarray:
    """Per-query-head gradients (float32 for half types) summed over the heads sharing a key
    head, as PyTorch's kernel accumulates them: into a ``dtype`` buffer, one head after the
    other (for half types, each partial sum rounded)."""
    heads = x.shape[1]
    group = heads // key_heads
    total = x[:, 0::group].astype(dtype)
    for j in range(1, group):
        total = (total.astype(x.dtype) + x[:, j::group]).astype(dtype)
    return total


_not_implemented_node(
    _flash_attention_backward, "_scaled_dot_product_flash_attention_for_cpu_backward"
)


@_scaled_dot_product_flash_attention_for_cpu.derivative("query")
def _(ops, grad, query, key, value, result, attn_mask, scale, is_causal):
    return ops.sdpa_flash_backward(grad, query, key, value, result, attn_mask, scale, is_causal, 0)


@_scaled_dot_product_flash_attention_for_cpu.derivative("key")
def _(ops, grad, query, key, value, result, attn_mask, scale, is_causal):
    return ops.sdpa_flash_backward(grad, query, key, value, result, attn_mask, scale, is_causal, 1)


@_scaled_dot_product_flash_attention_for_cpu.derivative("value")
def _(ops, grad, query, key, value, result, attn_mask, scale, is_causal):
    return ops.sdpa_flash_backward(grad, query, key, value, result, attn_mask, scale, is_causal, 2)


# ----------------------------------------------------------------------------------------------
# The public function


_FLOATS = ("float32", "float64", "float16", "bfloat16")


def _dtype_name(t: Tensor) -> str:
    return str(t.dtype).removeprefix("chainrule.").removeprefix("torch.")


def _cpp_dtype(t: Tensor) -> str:
    """The dtype as PyTorch's C++ messages print it (``float``, ``long int``, ``c10::Half``)."""
    names = {
        "float32": "float",
        "float64": "double",
        "float16": "c10::Half",
        "bfloat16": "c10::BFloat16",
        "int64": "long int",
        "int32": "int",
        "int16": "short int",
        "int8": "signed char",
        "uint8": "unsigned char",
        "bool": "bool",
        "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>",
    }
    return names.get(_dtype_name(t), _dtype_name(t))


def _check_inputs(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
) -> None:
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cpp_dtype(query)} key.dtype: {_cpp_dtype(key)} and value.dtype: "
            f"{_cpp_dtype(value)} instead."
        )
    if (
        attn_mask is not None
        and attn_mask.dtype != query.dtype
        and (_dtype_name(attn_mask) != "bool")
    ):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cpp_dtype(attn_mask)} and  query.dtype: {_cpp_dtype(query)} "
            "instead."
        )
    if attn_mask is not None and is_causal:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set "
            "when is_causal=True"
        )
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead."
        )


def _use_flash(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    enable_gqa: bool,
) -> bool:
    """PyTorch's ``use_flash_attention_cpp`` gates."""
    q, k, v = query._data, key._data, value._data
    if dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if q.shape[0] != k.shape[0] or q.shape[0] != v.shape[0]:
        return False
    heads, key_heads, value_heads = q.shape[1], k.shape[1], v.shape[1]
    if enable_gqa:
        if key_heads != value_heads or key_heads == 0 or heads % key_heads:
            return False
    elif not heads == key_heads == value_heads:
        return False
    if attn_mask is not None:
        # PyTorch's mask-shape gate reads the mask's size(-2) (errors for 0-d and 1-d masks).
        if attn_mask.dim() == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        if attn_mask.dim() == 1:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            )
        if attn_mask.requires_grad or attn_mask.dim() not in (2, 4):
            return False
    if not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        return False
    if 0 in (q.shape[-2], k.shape[-2], v.shape[-2]):
        return False
    for x in (q, k, v):
        if x.strides[-1] != x.itemsize:
            return False
    return str(q.dtype) in _FLOATS or _dtype_name(query) in _FLOATS


def _repeat_interleave_heads(x: Tensor, repeats: int) -> Tensor:
    """``x.repeat_interleave(repeats, dim=-3)`` as PyTorch composes it (unsqueeze, expand,
    clone, view)."""
    if repeats == 1:
        return x
    shape = tuple(x.shape)
    dim = len(shape) - 3
    wide = expand(unsqueeze(x, dim + 1), shape[: dim + 1] + (repeats,) + shape[dim + 1 :])
    return reshape(clone(wide), shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :])


def _math_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
) -> Tensor:
    half = query._data.dtype in REDUCED_FLOATS
    original = query.dtype
    if half:
        query, key, value = (t.float() for t in (query, key, value))
    head_size = query._data.shape[-1]
    chosen = _default_scale(head_size, scale)
    factor = math.sqrt(abs(chosen))
    if enable_gqa and query.dim() >= 3 and key._data.shape[-3] != query._data.shape[-3]:
        heads = query._data.shape[-3]
        key = _repeat_interleave_heads(key, heads // key._data.shape[-3])
        value = _repeat_interleave_heads(value, heads // value._data.shape[-3])
    q = _mul_scalar(query, -factor if chosen < 0 else factor)
    k = _mul_scalar(transpose(key, -2, -1), factor)
    scores = matmul(q, k)
    length, source = scores._data.shape[-2], scores._data.shape[-1]
    work = scores._data.dtype
    if is_causal:
        allowed = np.tril(np.ones((length, source), bool))
        scores = scores + wrap(np.where(allowed, 0.0, -np.inf).astype(work))
    elif attn_mask is not None:
        if attn_mask._data.dtype == np.bool_:
            scores = scores + wrap(np.where(attn_mask._data, 0.0, -np.inf).astype(work))
        else:
            scores = scores + (attn_mask.float() if half else attn_mask)
    weights = _safe_softmax(scores, _softmax_dim(scores.dim(), -1, "softmax"))
    if dropout_p > 0.0:
        weights = weights * wrap(_dropout_mask(tuple(weights._data.shape), dropout_p, work))
    out = matmul(weights, value)
    return out.to(original) if half else out


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dimensions.

    ``attn_mask`` is boolean (True: may attend) or added to the scores; ``is_causal`` masks
    the upper triangle; ``scale`` defaults to ``1 / sqrt(E)``; ``enable_gqa`` lets key and
    value have fewer heads (dimension -3) than the query.

    Example:
        >>> import chainrule as torch
        >>> q = torch.ones(1, 2, 4)
        >>> torch.nn.functional.scaled_dot_product_attention(q, q, q).shape
        chainrule.Size([1, 2, 4])
    """
    _check_inputs(query, key, value, attn_mask, dropout_p, is_causal)
    if _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _scaled_dot_product_flash_attention_for_cpu(
            query, key, value, 0.0, is_causal, attn_mask, scale
        )
    return _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


PRIMITIVES: dict[str, Any] = {"sdpa_flash_backward": _flash_attention_backward}
