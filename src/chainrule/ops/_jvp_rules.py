"""The forward-mode allowlist: which ops carry tangents, and by which rule (ops/_forward.py).

Rules are keyed by PyTorch's node name (``allow_jvp_nodes``), the key of derivatives.yaml, in
this one module rather than at each op: the op modules are shared with concurrent work, a rule is
one line per node, and keying by node also reaches the ops declared on first use (``cat`` and
``stack`` of n tensors) and the in-place copies made by ``recorded_as``. Every entry is checked
against PyTorch's forward derivative by tests/test_forward_ad_sweep.py (every OpInfo, tangents
against ``torch.autograd.forward_ad`` and against chainrule's own reverse-mode J·v) and
tests/test_forward_ad.py; every op not listed refuses a tangent with PyTorch's
NotImplementedError.

Kinds of rule:

* derived (``derived_rule``): the derivative formula applied to the tangent, for element-wise
  ops whose formula is linear in ``grad`` and equals PyTorch's forward formula
  (``auto_element_wise``, or its explicit formula term for term);
* linear (``linear_rule``): the op applied to the tangent (views, copies, padding, pooling by
  average, gathers by fixed indices); ``_linear_zeroing(...)`` when a constant (a pad or fill
  value) must be 0 in the tangent;
* jointly linear (``joint_linear_rule``): the op applied to all tangents at once (cat, stack,
  where, scatter, index_put, and the adjoint ops the backward formulas use);
* bilinear (``bilinear_rule``): one term per input (matrix products, cross, trilinear);
* reductions (``_reduction_rule``): each input element feeds one output element, so the JVP is
  ``sum(D * t)`` over the reduced dimensions, with ``D`` the derivative formula at a gradient of
  ones (PyTorch's formulas for prod, var, std, norms, logsumexp, amax, max/min/median);
* explicit: division, softmax/log_softmax, glu, sort/topk (gather by the indices), addmm,
  convolution, the losses (their element-wise JVP, then their reduction), layer/batch/group
  norm and the linear-algebra functions (inverse, det, slogdet, solve, triangular solves,
  Cholesky and its solve and inverse, eigh, QR, SVD, pinv, lstsq, matrix_exp: PyTorch's
  formulas; eig, the LU family and householder_product in ops/_jvp_factorizations.py; ldl
  and the other decompositions PyTorch does not differentiate forward refuse).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._dtype import float32
from ..autograd.grad_mode import GRAD, mode_get
from . import copying, indexing, linalg, pointwise, reduction, shape, view_copies
from ._forward import (
    allow_jvp,
    allow_jvp_nodes,
    bilinear_rule,
    derived_rule,
    joint_linear_rule,
    linear_rule,
    recorded_zero,
    zeros_for,
)
from .nn_ops import losses, misc, pooling

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ._registry import OpDef

__all__: list[str] = []

Rule = Callable[["OpDef", tuple, list[Any], Any], Any]


def _div_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """PyTorch's ``(self_t - other_t * result) / other_p``, a missing tangent an exact zero."""
    self_t, other_t = tangents
    other = args[1]
    if other_t is None:
        zero = None
        if other is not None and mode_get() & GRAD:
            term = zeros_for(other) * result
            zero = recorded_zero(self_t, [term], [args[0], other], negative=False)
        return (self_t if zero is None else self_t - zero) / other
    moved = other_t * result
    return (-moved if self_t is None else self_t - moved) / other


def _linear_zeroing(**constants: Any) -> Rule:
    """A linear rule for an op with constant terms: the op applied to the tangent with those
    arguments (a pad value, a fill value) set as given (0)."""

    def rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
        call = list(args)
        for name, value in constants.items():
            call[op.index_of[name]] = value
        if len(tangents) == 1:
            call[op.input_pos[0]] = tangents[0]
            return op.publics[False](*call)
        return joint_linear_rule(op, tuple(call), tangents, result)

    rule.holds_for_complex = True  # type: ignore[attr-defined] (linear over the reals)
    return rule


def _ones(x: Any) -> Any:
    from .creation import ones_like

    return ones_like(x)


def _zeros(x: Any) -> Any:
    from .creation import zeros_like

    return zeros_like(x)


def _sum_reduced(op: OpDef, args: tuple, x: Any, like: Any) -> Any:
    """``x`` (at the input's shape) summed over the dimensions ``op`` reduced, shaped as the
    output ``like``."""
    dim = args[op.index_of["dim"]] if "dim" in op.index_of else None
    if isinstance(dim, list | tuple) and len(dim) == 0:
        dim = None
    if dim is None:
        total = x.sum()
    else:
        keepdim = bool(args[op.index_of["keepdim"]]) if "keepdim" in op.index_of else False
        total = x.sum(dim if isinstance(dim, int) else tuple(dim), keepdim=keepdim)
    return total.reshape(tuple(like.shape))


def _reduction_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``sum(D_i * t_i)`` over the reduced dimensions, ``D_i`` the derivative of input ``i`` at a
    gradient of ones: the JVP of a reduction where each input element feeds one output element
    (a multi-output op: one tangent per output, its derivative given a one-hot tuple)."""
    from ._opnode import TENSOR_NS

    outputs = result if type(result) is tuple else (result,)
    env: list[Any] = list(args)
    env.append(outputs[0])  # (a multi-output node's derivatives read its first output)
    for p in op.input_pos:
        x = args[p]
        env.append(tuple(x.shape) if hasattr(x, "shape") else ())
    found = []
    for k, out in enumerate(outputs):
        if type(result) is tuple:
            grad: Any = tuple(_ones(o) if j == k else _zeros(o) for j, o in enumerate(outputs))
        else:
            grad = _ones(out)
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            derivative = op.derivatives[i]
            d = derivative.fn(TENSOR_NS, grad, *(env[j] for j in derivative.arg_index))
            term = t * 0 if d is None else d * t
            total = term if total is None else total + term
        found.append(_sum_reduced(op, args, total, out))
    if op.node_name == "LinalgVectorNormBackward0":
        # (PyTorch's linalg_vector_norm_jvp gives the input's dtype, even with ``dtype=``)
        found = [f.to(args[0].dtype) for f in found]
    return tuple(found) if type(result) is tuple else found[0]


def _gather_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """sort/topk values: the tangent at the picked indices."""
    indices = args[op.index_of["indices"]]
    return tangents[0].gather(args[op.index_of["dim"]], indices)


def _logsumexp_jvp(x: Any, t: Any, dim: Any, keepdim: bool) -> Any:
    """PyTorch's ``logsumexp_jvp``: ``sum(exp(x - amax(x)) * t) / sum(exp(x - amax(x)))`` over
    ``dim`` (NaN over an empty dimension, as its 0 / 0)."""
    shifted = (x - x.amax(dim, keepdim=True)).exp() if x.numel() > 0 else x.exp()
    total = shifted.sum(dim, keepdim=keepdim)
    return (shifted * t).sum(dim, keepdim=keepdim) / total


def _logsumexp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``logsumexp_jvp(self_p, self_t, dim, keepdim)``."""
    x, dim, keepdim = args
    if x.ndim == 0:
        return tangents[0].clone()
    return _logsumexp_jvp(x, tangents[0], tuple(dim), keepdim)


def _softmax_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``result * (self_t - logsumexp_jvp(self_p, self_t, {dim}, true))``."""
    (t,) = tangents
    if result.ndim == 0:  # (0, or NaN where the result is NaN)
        return result * (t - t * result)
    return result * (t - _logsumexp_jvp(args[0], t, args[1], True))


def _log_softmax_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``self_t - logsumexp_jvp(self_p, self_t, {dim}, true)``."""
    (t,) = tangents
    if result.ndim == 0:  # (0, or NaN where the result is NaN)
        return t - t * result.exp()
    return t - _logsumexp_jvp(args[0], t, args[1], True)


def _evenly_read_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """max/min/median of all elements: PyTorch's ``evenly_read_jvp``, the tangents of the
    elements equal to the result, averaged."""
    mask = args[0] == result
    return (tangents[0] * mask).sum() / mask.sum()


def _amax_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``amaxamin_jvp``: the tangents where the input equals the result, averaged
    over the reduced dimensions."""
    x, dim, keepdim = args
    dims = tuple(dim) if isinstance(dim, list | tuple) else (dim,)
    if len(dims) == 0:
        dims = tuple(range(x.ndim))
    restored = result
    if not keepdim and x.ndim:
        for d in sorted(d % x.ndim for d in dims):
            restored = restored.unsqueeze(d)
    mask = x == restored
    picked = tangents[0] * mask
    if x.ndim == 0:
        return picked / mask
    return picked.sum(dims, keepdim=keepdim) / mask.sum(dims, keepdim=keepdim)


def _where(condition: Any, a: Any, b: Any) -> Any:
    from .pointwise import where

    return where(condition, a, b)


def _filled(tangents: list[Any], args: Any) -> list[Any]:
    """The tangents, zeros for the tensor inputs without one."""
    return [
        t if t is not None or a is None else _zeros(a) for t, a in zip(tangents, args, strict=False)
    ]


def _clamp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``clamp_jvp``: the bound's tangent where the bound wins (ties: the input's),
    ``max``'s where ``min > max``."""
    self_t, min_t, max_t = _filled(tangents, args)
    x, low, high = args
    if low is not None and high is not None:
        inner = _where(x > high, max_t, self_t)
        return _where(low > high, max_t, _where(x < low, min_t, inner))
    if low is not None:
        return _where(x > low, self_t, min_t)
    if high is not None:
        return _where(x < high, self_t, max_t)
    return self_t


def _clamp_min_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``where(self_p >= min_p, self_t, min_t)``."""
    self_t, min_t = _filled(tangents, args)
    return _where(args[0] >= args[1], self_t, min_t)


def _clamp_max_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``where(self_p <= max_p, self_t, max_t)``."""
    self_t, max_t = _filled(tangents, args)
    return _where(args[0] <= args[1], self_t, max_t)


def _fmax_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``other_t + (self_p > other_p or other_p is NaN) * (self_t - other_t)`` (fmin:
    ``<=``)."""
    self_t, other_t = _filled(tangents, args)
    x, y = args
    picks_self = (x > y) if op.node_name == "FmaxBackward0" else (x <= y)
    return other_t + (picks_self | y.isnan()) * (self_t - other_t)


def _logsigmoid_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``self_t * sigmoid(-self)`` (the buffer PyTorch's formula reads is only made for a
    recorded node)."""
    return tangents[0] * (-args[0]).sigmoid()


def _normalized_jvp(x: Any, t: Any, dims: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """``x_hat = (x - mean) * rstd`` over ``dims`` and its tangent: ``(t - mean(t)) * rstd +
    (x - mean) * rstd_t`` with ``rstd_t = -rstd**3 * mean((x - mean) * (t - mean(t)))``
    (the biased variance, as the normalizations use)."""
    centred = x - x.mean(dims, keepdim=True)
    rstd = ((centred * centred).mean(dims, keepdim=True) + eps).rsqrt()
    t_centred = t - t.mean(dims, keepdim=True)
    rstd_t = -(rstd * rstd * rstd) * (centred * t_centred).mean(dims, keepdim=True)
    return centred * rstd, t_centred * rstd + centred * rstd_t


def _affine_jvp(
    x_hat: Any,
    x_hat_t: Any,
    weight: Any,
    bias: Any,
    weight_t: Any,
    bias_t: Any,
    view: tuple[int, ...],
) -> Any:
    """The tangent of ``x_hat * weight + bias`` (weight and bias reshaped to ``view``)."""
    total = x_hat_t if weight is None else x_hat_t * weight.reshape(view)
    if weight_t is not None:
        total = total + x_hat * weight_t.reshape(view)
    if bias_t is not None:
        total = total + bias_t.reshape(view)
    return total


def _layer_norm_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The tangent of ``(x - mean) * rstd * weight + bias`` over the last dimensions."""
    x, normalized_shape = args[0], tuple(args[1])
    weight, bias, eps = args[4], args[5], args[6]
    x_t, weight_t, bias_t = _filled(tangents[:1], args[:1]) + list(tangents[1:])
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    x_hat, x_hat_t = _normalized_jvp(x, x_t, dims, eps)
    return _affine_jvp(x_hat, x_hat_t, weight, bias, weight_t, bias_t, normalized_shape)


def _batch_norm_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The tangent of batch norm: over the batch statistics in training, the running ones
    (constants) otherwise."""
    x = args[0]
    weight, bias, running_mean, running_var, training, eps = args[3:9]
    x_t, weight_t, bias_t = _filled(tangents[:1], args[:1]) + list(tangents[1:])
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        x_hat, x_hat_t = _normalized_jvp(x, x_t, dims, eps)
    else:
        rstd = (running_var.reshape(view) + eps).rsqrt()
        x_hat, x_hat_t = (x - running_mean.reshape(view)) * rstd, x_t * rstd
    return _affine_jvp(x_hat, x_hat_t, weight, bias, weight_t, bias_t, view)


def _group_norm_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The tangent of group norm: each sample's groups of channels normalized, then the
    per-channel affine map."""
    x, weight, bias, n, _, _, group, eps = args[:8]
    x_t, weight_t, bias_t = _filled(tangents[:1], args[:1]) + list(tangents[1:])
    grouped = (n, group, -1)
    x_hat, x_hat_t = _normalized_jvp(x.reshape(grouped), x_t.reshape(grouped), (2,), eps)
    shape = tuple(x.shape)
    view = (1, shape[1]) + (1,) * (len(shape) - 2)
    return _affine_jvp(
        x_hat.reshape(shape), x_hat_t.reshape(shape), weight, bias, weight_t, bias_t, view
    )


def _cumprod_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``cumprod_jvp``: ``cumsum(t / x) * result`` (no zero involved); from the
    first zero of a row on, the only term left, ``t_z * prod_{i <= k, i != z} x_i``."""
    x, dim = args[0], args[1]
    (t,) = tangents
    if x.ndim == 0:
        return t.clone()
    generic = (t / x).cumsum(dim) * result
    zeros = x == 0
    if not bool(zeros.any()):
        return generic
    count = zeros.cumsum(dim)
    first = zeros & (count == 1)
    t_first = _where(first, t, 0.0).sum(dim, keepdim=True)
    at_zero = t_first * x.masked_fill(first, 1.0).cumprod(dim)
    return _where(count >= 1, at_zero, generic)


def _logit_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``self_t / (x * (1 - x))`` inside the domain; outside it PyTorch's formula under grad
    mode (``infinitely_differentiable_logit_backward``: NaN, or 0 with ``eps``), else its kernel
    (``logit_backward``: NaN outside ``[0, 1]``, 0 outside ``[eps, 1 - eps]``, NaN at NaN)."""
    from ..autograd.grad_mode import is_grad_enabled

    x, eps = args
    (t,) = tangents
    inside_value = t / (x * (1 - x))
    low, high = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    outside = float("nan") if eps is None else 0.0
    if is_grad_enabled():
        return _where((x >= low) & (x <= high), inside_value, outside)
    return _where((x < low) | (x > high), outside, inside_value)


def _lerp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``lerp(self_t, end_t, weight_p) + weight_t * (end_p - self_p)``."""
    self_t, end_t = _filled(tangents[:2], args[:2])
    x, end, weight = args
    out = op.publics[False](self_t, end_t, weight)
    if len(tangents) == 3 and tangents[2] is not None:
        out = out + tangents[2] * (end - x)
    return out


def _linalg_solve(A: Any, B: Any, left: bool = True) -> Any:
    from .linalg_decomp import _linalg_solve_ex

    return _linalg_solve_ex(A, B, left)


def _trace_of_solve(A: Any, A_t: Any) -> Any:
    """``trace(A^{-1} A_t)`` over the last two dimensions (through the inverse, which is NaN
    rather than an error for a singular matrix)."""
    from .linalg_decomp import _linalg_inv_ex

    return (_linalg_inv_ex(A) * A_t.mT).sum((-2, -1))


def _inv_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``-inverse @ A_t @ inverse``."""
    return -((result @ tangents[0]) @ result)


def _det_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_det_jvp``: ``trace(A^{-1} A_t) * det``."""
    return _trace_of_solve(args[0], tangents[0]) * result


def _slogdet_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``slogdet_jvp`` for real matrices: the sign's tangent is zero, the log of the
    absolute value's is ``trace(A^{-1} A_t)``."""
    sign, _ = result
    trace = _trace_of_solve(args[0], tangents[0])
    if not sign.is_complex():
        return _zeros(sign), trace
    # (complex: d log det = trace(A^{-1} A_t); its real part is logabsdet's tangent, and the
    # sign e^{i theta} turns by i Im of it)
    return sign * (trace.imag * 1j), trace.real


def _solve_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_solve_jvp``: ``A^{-1} (B_t - A_t X)`` (left), ``(B_t - X A_t) A^{-1}``
    (right); B a vector or a batch of them as the solve takes it."""
    from .linalg_decomp import _as_matrix_rhs

    A, B, left = args
    A_t, B_t = tangents
    X = result
    vector = _as_matrix_rhs(A._data, B._data)
    moved = None
    if A_t is not None:
        if vector:
            moved = (A_t @ X.unsqueeze(-1)).squeeze(-1)
        else:
            moved = A_t @ X if left else X @ A_t
    if B_t is None:
        rhs = -moved
    else:
        rhs = B_t if moved is None else B_t - moved
    return _linalg_solve(A, rhs, left)


def _solve_triangular_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_solve_triangular_forward_AD``: ``A^{-1} (B_t - proj(A_t) X)``, ``proj``
    the triangle used (without the diagonal for a unit triangle)."""
    A, _, upper, left, unitriangular = args
    A_t, B_t = tangents
    X = result
    rhs = B_t
    if A_t is not None:
        shift = int(bool(unitriangular))
        projected = A_t.triu(shift) if upper else A_t.tril(-shift)
        moved = projected @ X if left else X @ projected
        rhs = -moved if B_t is None else B_t - moved
    return op.publics[False](A, rhs, upper, left, unitriangular)


def _cholesky_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``cholesky_jvp``: ``L Phi(L^{-1} A_t L^{-H})``, ``Phi`` the lower triangle with
    its diagonal halved."""
    from .linalg_decomp import _linalg_solve_triangular

    upper = args[1]
    L = result.mH if upper else result
    A_t = tangents[0].mH if upper else tangents[0]
    inner = _linalg_solve_triangular(L, A_t, False, True, False)
    inner = _linalg_solve_triangular(L.mH, inner, True, False, False)
    phi = inner.tril() - (inner.diagonal(0, -2, -1) * 0.5).diag_embed()
    L_t = L @ phi
    return L_t.mH if upper else L_t


def _eigh_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_eig_jvp`` (Hermitian): with ``dP = V^H A_t V``, the eigenvalues'
    tangent is ``diag(dP)``, the eigenvectors' ``V (dP / E)`` with ``E_ij = L_j - L_i`` and a
    zero diagonal."""
    values, vectors = result
    dP = vectors.mT @ tangents[0] @ vectors
    values_t = dP.diagonal(0, -2, -1)
    ratio = dP / (values.unsqueeze(-2) - values.unsqueeze(-1))
    from .creation import eye

    ratio = ratio.masked_fill(eye(values.shape[-1]) == 1, 0.0)
    return values_t.clone(), vectors @ ratio


def _matrix_exp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_matrix_exp_differential``: the top-right block of
    ``exp([[A, A_t], [0, A]])``."""
    from .shape import cat

    A, (A_t,) = args[0], tangents
    n = A.shape[-1]
    top = cat([A, A_t], -1)
    bottom = cat([_zeros(A), A], -1)
    return op.publics[False](cat([top, bottom], -2))[..., :n, n:]


def _cholesky_inverse_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``-R dA R`` with ``R`` the result and ``dA = L_t L^T + L L_t^T`` (``U^T U`` upper)."""
    L, upper = args
    (L_t,) = tangents
    dK = L_t.mT @ L if upper else L_t @ L.mT
    return -(result @ (dK + dK.mT) @ result)


def _cholesky_solve_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``cholesky_solve_jvp``: ``cholesky_solve(B_t - dA X, L)`` with
    ``dA = dK + dK^T``, ``dK = L_t L^T`` (``U_t^T U`` upper)."""
    B, L, upper = args
    B_t, L_t = tangents
    rhs = B_t
    if L_t is not None:
        dK = L_t.mT @ L if upper else L_t @ L.mT
        moved = (dK + dK.mT) @ result
        rhs = -moved if B_t is None else B_t - moved
    return op.publics[False](rhs, L, upper)


def _triangular_solve_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``triangular_solve_jvp`` (``generic_solve_jvp``: ``A_t`` as given, not
    projected on the triangle) for the solution; ``A_t`` for the cloned coefficient."""
    B, A, upper, transpose, unitriangular = args
    B_t, A_t = tangents
    X = result[0]
    rhs = B_t
    if A_t is not None:
        moved = A_t @ X
        rhs = -moved if B_t is None else B_t - moved
    solution_t = op.publics[False](rhs, A, upper, transpose, unitriangular)[0]
    return solution_t, (None if A_t is None else A_t.clone())


def _pinv_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``pinv_jvp`` (arranged for the smaller of the two dimensions)."""
    A = args[0]
    (dA,) = tangents
    pinv = result
    m, n = A.shape[-2], A.shape[-1]
    dAh, pinvh = dA.mH, pinv.mH
    if m <= n:
        K = pinvh @ dAh
        return pinv @ (K - K.mH - K @ (A @ pinv)) + (dAh - pinv @ (A @ dAh)) @ (pinvh @ pinv)
    K = pinv @ dA
    Kh = K.mH
    return (Kh - K - (pinv @ A) @ Kh) @ pinv + (pinv @ pinvh) @ (dAh - (dAh @ A) @ pinv)


def _qr_square_or_tall(A_t: Any, Q: Any, R: Any) -> tuple[Any, Any]:
    """``m >= n``: with ``dX = A_t R^{-1}``, ``C = syminv(sym(Q^H dX))`` (the upper triangle of
    ``Q^H dX + dX^H Q`` with its diagonal halved), ``Q_t = dX - Q C`` and ``R_t = C R``."""
    from .linalg_decomp import _linalg_solve_triangular

    dX = _linalg_solve_triangular(R, A_t, True, False, False)
    sym = Q.mT @ dX
    sym = sym + sym.mT
    C = sym.triu() - (sym.diagonal(0, -2, -1) * 0.5).diag_embed()
    return dX - Q @ C, C @ R


def _qr_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_qr_jvp``: the tall or square case above; a wide ``A = [X | Y]``
    (``R = [U | V]``) takes ``X``'s, and ``V_t = Q^H (Y_t - Q_t V)``."""
    from .shape import cat

    A, mode = args
    (A_t,) = tangents
    Q, R = result
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    if m >= n:
        return _qr_square_or_tall(A_t, Q, R)
    Q_t, U_t = _qr_square_or_tall(A_t[..., :m], Q, R[..., :m])
    V_t = Q.mT @ (A_t[..., m:] - Q_t @ R[..., m:])
    return Q_t, cat([U_t, V_t], -1)


def _svd_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_svd_jvp`` for real matrices: with ``dP = U^T A_t V``, ``S_t`` its
    diagonal; ``U_t = U (sym(dP S) / E)`` (+ ``(I - U U^T) A_t V S^-1`` when tall) and
    ``Vh_t = -(sym(S dP) / E) Vh`` (+ ``S^-1 U^T A_t (I - V V^T)`` when wide), ``E_ij = S_j^2 -
    S_i^2`` (1 on the diagonal); with full matrices, the extra columns (rows) get zeros."""
    from .creation import zeros
    from .shape import cat

    A, full_matrices = args
    (A_t,) = tangents
    U_full, S, Vh_full = result
    m, n, k = A.shape[-2], A.shape[-1], S.shape[-1]
    U = U_full[..., :k] if full_matrices else U_full
    Vh = Vh_full[..., :k, :] if full_matrices else Vh_full
    V = Vh.mT
    dP = U.mT @ (A_t @ V) if m >= n else (U.mT @ A_t) @ V
    S_t = dP.diagonal(0, -2, -1)
    dP = dP - S_t.diag_embed()
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + (1 - E) * _eye_like(E)
    row, column = S.unsqueeze(-2), S.unsqueeze(-1)
    aux_u = dP * row
    U_t = U @ ((aux_u + aux_u.mT) / E)
    aux_v = column * dP
    Vh_t = -(((aux_v + aux_v.mT) / E) @ Vh)
    if m > n:
        scaled = A_t @ (V / row)
        U_t = U_t + scaled - U @ (U.mT @ scaled)
        if full_matrices:
            U_t = cat([U_t, zeros(U_t.shape[:-1] + (m - n,), dtype=U_t.dtype)], -1)
    if m < n:
        scaled = (U.mT / column) @ A_t
        Vh_t = Vh_t + scaled - (scaled @ V) @ Vh
        if full_matrices:
            Vh_t = cat([Vh_t, zeros(Vh_t.shape[:-2] + (n - m, n), dtype=Vh_t.dtype)], -2)
    return U_t, S_t.clone(), Vh_t


def _eye_like(E: Any) -> Any:
    """The identity at the last two dimensions of the square ``E`` (its dtype)."""
    from .creation import eye

    return eye(E.shape[-1], dtype=E.dtype)


def _lstsq_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_lstsq_solution_jvp`` (``X_t = pinv(A)_t B + pinv(A) B_t``) and
    ``linalg_lstsq_residuals_jvp`` (``2 sum(r * (B_t - A_t X))`` over rows, ``r = B - A X``;
    empty residuals stay empty)."""
    from .linalg_decomp import _as_matrix_rhs, _linalg_pinv

    A, B = args[0], args[1]
    A_t, B_t = _filled(list(tangents), [A, B])
    X, residuals = result
    vector = _as_matrix_rhs(A._data, B._data)
    B_m, B_t_m, X_m = (
        (B.unsqueeze(-1), B_t.unsqueeze(-1), X.unsqueeze(-1)) if vector else (B, B_t, X)
    )
    pinv = _linalg_pinv(A)
    pinv_t = _pinv_rule(_linalg_pinv.op, (A,), [A_t], pinv)
    X_t = pinv_t @ B_m + pinv @ B_t_m
    if residuals.numel() == 0:
        residuals_t = residuals.clone()
    else:
        r = B_m - A @ X_m
        residuals_t = 2 * (r.conj() * (B_t_m - A_t @ X_m)).real.sum(-2)
        if vector:
            residuals_t = residuals_t.squeeze(-1)
    return (X_t.squeeze(-1) if vector else X_t), residuals_t


def _glu_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``a_t * sigmoid(b) + a * sigmoid(b) * (1 - sigmoid(b)) * b_t`` over the two halves
    (PyTorch's ``glu_jvp`` kernel has no half-precision version: its error)."""
    (t,) = tangents
    dim = args[1]
    if result._data.dtype.itemsize == 2:
        half = "Half" if result._data.dtype == np.float16 else "BFloat16"
        raise NotImplementedError(f"\"glu_jvp_cpu\" not implemented for '{half}'")
    a, b = args[0].chunk(2, dim)
    a_t, b_t = t.chunk(2, dim)
    s = b.sigmoid()
    return a_t * s + a * s * (1 - s) * b_t


def _addmm_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``beta * self_t + alpha * (mat1_t @ mat2) + alpha * (mat1 @ mat2_t)``, in its
    order; a missing factor tangent is a materialised zero (its product with an infinite
    primal is NaN, as in PyTorch), a missing ``self_t`` adds nothing."""
    self_t, mat1_t, mat2_t = tangents
    _, mat1, mat2, beta, alpha = args
    total = None
    if self_t is not None:
        total = self_t if beta == 1 else self_t * beta
        total = shape.expand(total, tuple(result.shape))
    for term in (
        (zeros_for(mat1) if mat1_t is None else mat1_t) @ mat2,
        mat1 @ (zeros_for(mat2) if mat2_t is None else mat2_t),
    ):
        term = term if alpha == 1 else term * alpha
        total = term if total is None else total + term
    return total


def _convolution_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """Linear in each input: ``conv(x_t, w) + conv(x, w_t) + b_t`` (no bias in the products);
    a missing ``x_t`` or ``w_t`` is a materialised zero (its product with an infinite primal
    is NaN, as in PyTorch)."""
    public = op.publics[False]
    x_t, w_t, b_t = tangents
    call = list(args)
    call[2] = None
    call[0], call[1] = zeros_for(args[0]) if x_t is None else x_t, args[1]
    total = public(*call)
    call[0], call[1] = args[0], zeros_for(args[1]) if w_t is None else w_t
    total = total + public(*call)
    if b_t is not None:
        term = b_t.reshape((1, -1) + (1,) * (result.ndim - 2))
        total = total + term
    return total


def _loss_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """An element-wise loss: its derivative formulas applied to the tangents with reduction
    ``'none'``, then reduced as the loss is (PyTorch's ``apply_loss_reduction``)."""
    call = list(args)
    reduction_mode = args[op.index_of["reduction"]]
    call[op.index_of["reduction"]] = "none"
    unreduced = op.publics[False](*call)
    elementwise = derived_rule(op, tuple(call), tangents, unreduced)
    if reduction_mode == "mean":
        return elementwise.mean()
    if reduction_mode == "sum":
        return elementwise.sum()
    return elementwise


allow_jvp(
    derived_rule,
    pointwise._add,
    pointwise._add_alpha,
    misc._add_scalar,
    pointwise._sub,
    pointwise._sub_alpha,
    pointwise.mul,
    pointwise.exp,
    pointwise.log,
    pointwise.sin,
    pointwise.cos,
    pointwise.tanh,
    pointwise.sigmoid,
    pointwise.relu,
    pointwise.sqrt,
    pointwise._pow_scalar,
)
allow_jvp(_div_rule, pointwise._div)
allow_jvp(bilinear_rule, linalg.mm, linalg.bmm, linalg.mv, linalg.dot)
allow_jvp(linear_rule, linalg._squeeze_vector_product, pooling._restride)


def _no_tangent(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """No tangent: comparisons written in place into a floating tensor (``gt_``), whose
    results PyTorch leaves without one."""
    return None


allow_jvp(
    linear_rule,
    # (linear in their one differentiable input: the op applied to the tangent; for views, the
    # view of the tangent, as PyTorch's)
    pointwise.neg,
    pointwise.negative,
    losses._mul_scalar,
    losses._div_scalar,
    reduction._sum_all,
    reduction._sum_dim,
    reduction._mean_all,
    reduction._mean_dim,
    copying.clone,
    indexing._alias,
    shape._view,
    shape._reshape_alias,
    shape._unsafe_view,
    shape.transpose,
    shape.t,
    shape._permute,
    shape.unsqueeze,
    shape._squeeze_all,
    shape._squeeze_dim,
    shape._squeeze_dims,
    shape._expand,
    shape._select,
    shape._slice,
)

allow_jvp_nodes(
    derived_rule,
    # element-wise, PyTorch's auto_element_wise or the same formula
    "AbsBackward0",
    "AcosBackward0",
    "AcoshBackward0",
    "AsinBackward0",
    "AsinhBackward0",
    "AtanBackward0",
    "AtanhBackward0",
    "Atan2Backward0",
    "CoshBackward0",
    "SinhBackward0",
    "TanBackward0",
    "Deg2RadBackward0",
    "Rad2DegBackward0",
    "DigammaBackward0",
    "ErfBackward0",
    "ErfcBackward0",
    "ErfinvBackward0",
    "Exp2Backward0",
    "Expm1Backward0",
    "Log10Backward0",
    "Log1PBackward0",
    "Log2Backward0",
    "LgammaBackward0",
    "ReciprocalBackward0",
    "RsqrtBackward0",
    "SignBackward0",
    "DivBackward2",
    "CeilBackward0",
    "FloorBackward0",
    "TruncBackward0",
    "RoundBackward0",
    "RoundBackward1",
    "FracBackward0",
    "FmodBackward0",
    "FmodBackward1",
    "RemainderBackward0",
    "RemainderBackward1",
    "HypotBackward0",
    "MaximumBackward0",
    "MinimumBackward0",
    "I0Backward0",
    "CopysignBackward0",
    "CopysignBackward1",
    "LogaddexpBackward0",
    "Logaddexp2Backward0",
    "SpecialI0EBackward0",
    "SpecialI1Backward0",
    "SpecialI1EBackward0",
    "SpecialErfcxBackward0",
    "SpecialLogNdtrBackward0",
    "SpecialNdtriBackward0",
    "SpecialEntrBackward0",
    "SincBackward0",
    "MvlgammaBackward0",
    "PolygammaBackward0",
    "XlogyBackward0",
    "XlogyBackward1",
    "XlogyBackward2",
    "SpecialXlog1PyBackward0",
    "SpecialXlog1PyBackward1",
    "SpecialXlog1PyBackward2",
    "NanToNumBackward0",
    "ClampBackward1",
    "ClampMaxBackward0",
    "ClampMinBackward0",
    "AddcmulBackward0",
    "AddcdivBackward0",
    "PowBackward1",
    "PowBackward2",
    "RsubBackward0",
    "RsubBackward1",
    "AddBackward1",
    "MulBackward1",
    "AngleBackward0",
    # random draws: a zero tangent (PyTorch's zero derivatives, auto_element_wise)
    "NormalBackward1",
    "NormalBackward2",
    "NormalBackward3",
    "BernoulliBackward0",
    "BernoulliBackward2",
    "NormalBackward0",
    "UniformBackward0",
    "BernoulliBackward1",
    "PoissonBackward0",
    "ExponentialBackward0",
    "CauchyBackward0",
    "GeometricBackward0",
    "LogNormalBackward0",
    "RandomBackward0",
    "RandomBackward1",
    "RandomBackward2",
    # in-place forms whose derivative reads the result or the original self (written in place
    # by ops/inplace.commit: the tangent is computed before)
    "PolygammaBackward1",
    "EluBackward1",
    "CeluBackward1",
    "LeakyReluBackward1",
    "ThresholdBackward1",
    # activations
    "CeluBackward0",
    "EluBackward0",
    "GeluBackward0",
    "HardshrinkBackward0",
    "HardsigmoidBackward0",
    "HardswishBackward0",
    "HardtanhBackward0",
    "LeakyReluBackward0",
    "MishBackward0",
    "SiluBackward0",
    "SoftplusBackward0",
    "SoftshrinkBackward0",
    "ThresholdBackward0",
    "PreluKernelBackward0",
    # the activations' backward ops (forward-over-reverse)
    "EluBackwardBackward0",
    "GeluBackwardBackward0",
    "HardshrinkBackwardBackward0",
    "HardsigmoidBackwardBackward0",
    "HardswishBackwardBackward0",
    "HardtanhBackwardBackward0",
    "LeakyReluBackwardBackward0",
    "LogSigmoidBackwardBackward0",
    "SigmoidBackwardBackward0",
    "SoftplusBackwardBackward0",
    "SoftshrinkBackwardBackward0",
    "TanhBackwardBackward0",
    "ThresholdBackwardBackward0",
)
allow_jvp_nodes(
    linear_rule,
    "AdaptiveAvgPool2DBackward0",
    "AdaptiveAvgPool3DBackward0",
    "AvgPool2DBackward0",
    "AvgPool3DBackward0",
    "AdaptiveAvgPool2DBackwardBackward0",
    "AdaptiveAvgPool3DBackwardBackward0",
    "AvgPool2DBackwardBackward0",
    "AvgPool3DBackwardBackward0",
    "AsStridedBackward0",
    "CumsumBackward0",
    "DiagEmbedBackward0",
    "DiagonalBackward0",
    "DiagonalBackward0_copy",
    "DiagonalBackwardBackward0",
    "FlipBackward0",
    "GatherBackward0",
    "IndexBackward0",
    "IndexSelectBackward0",
    "MaskedSelectBackward0",
    "RepeatBackward0",
    "RollBackward0",
    "TakeBackward0",
    "TraceBackward0",
    "TrilBackward0",
    "TriuBackward0",
    # the in-place view ops' nodes (t_, transpose_, unsqueeze_, squeeze_, as_strided_: self
    # takes the view of its tangent, ops/inplace.py)
    "TBackward1",
    "TransposeBackward1",
    "UnsqueezeBackward1",
    "SqueezeBackward3",
    "SqueezeBackward4",
    "SqueezeBackward5",
    "AsStridedBackward1",
    "ToCopyBackward0",
    "EmbeddingBackward0",
    "EmbeddingDenseBackwardBackward0",
    "ReflectionPad1DBackward0",
    "ReflectionPad2DBackward0",
    "ReflectionPad3DBackward0",
    "ReplicationPad1DBackward0",
    "ReplicationPad2DBackward0",
    "ReplicationPad3DBackward0",
    "ReflectionPad1DBackwardBackward0",
    "ReflectionPad2DBackwardBackward0",
    "ReflectionPad3DBackwardBackward0",
    "ReplicationPad1DBackwardBackward0",
    "ReplicationPad2DBackwardBackward0",
    "ReplicationPad3DBackwardBackward0",
    "SelectBackwardBackward0",
    "SliceBackwardBackward0",
    "MaxPool2DWithIndicesBackwardBackward0",
    "MaxPool3DWithIndicesBackwardBackward0",
    "AdaptiveMaxPool2DBackwardBackward0",
    "AdaptiveMaxPool3DBackwardBackward0",
    "FractionalMaxPool2DBackwardBackward0",
    "FractionalMaxPool3DBackwardBackward0",
    "NllLossBackward0",
    "NllLoss2DBackward0",
    "MaxUnpool2DBackward0",
    "MaxUnpool3DBackward0",
    "AffineGridGeneratorBackward0",
    # several outputs: the op applied to the tangent gives one tangent per output
    "SplitBackward0",
    "SplitWithSizesBackward0",
    "UnbindBackward0",
)
allow_jvp_nodes(
    _linear_zeroing(value=0),
    "ConstantPadNdBackward0",
    "MaskedFillBackward0",
    "ScatterBackward1",
    "FillBackward2",
)
allow_jvp_nodes(
    _linear_zeroing(fill=0),
    "MaxPool2DWithIndicesBackward0",
    "MaxPool3DWithIndicesBackward0",
    "AdaptiveMaxPool2DBackward0",
    "AdaptiveMaxPool3DBackward0",
    "FractionalMaxPool2DBackward0",
    "FractionalMaxPool3DBackward0",
)
allow_jvp_nodes(
    joint_linear_rule,
    "CatBackward0",
    "StackBackward0",
    "WhereBackward0",
    "MaskedFillBackward1",
    "IndexPutBackward0",
    "ScatterBackward0",
    "FillBackward3",
    "ZeroBackward0",
    "CopyBackwards",
    "IndexAddBackward0",
    "IndexPutImplBackward0",
    "MaskedScatterBackward0",
    "PutBackward0",
    "ScatterAddBackward0",
    "BlockDiagBackward0",
)
allow_jvp_nodes(bilinear_rule, "VdotBackward0", "LinalgCrossBackward0", "TrilinearBackward0")


def _sgn_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``sgn``: 0 for real values; for complex ``z`` the tangent of ``z / |z|``,
    ``(t - sgn(z) Re(conj(sgn(z)) t)) / |z|``, and 0 where ``z`` is 0 (PyTorch's
    ``sgn_backward``)."""
    z, t = args[0], tangents[0]
    if z._data.dtype.kind != "c":
        return zeros_for(result)
    magnitude = z.abs()
    along = result * (result.conj() * t).real
    tangent = (t - along) / magnitude
    return tangent.masked_fill(magnitude == 0, 0)


_sgn_rule.holds_for_complex = True  # type: ignore[attr-defined]
allow_jvp_nodes(_sgn_rule, "SgnBackward0")


def _gradient_op_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """A backward op ``g(grad, x, ...)``, the gradient of ``<grad, f(x, ...)>`` in ``x`` for an
    ``f`` acting element by element on the other inputs (or whose Jacobian in them is the
    symmetric Hessian of that scalar): linear in ``grad`` (the op applied to its tangent), and
    for the other inputs its double-backward formulas applied to their tangents (PyTorch's
    forward formulas for these ops call the same double-backward functions)."""
    total = None
    if tangents[0] is not None:
        call = list(args)
        call[op.input_pos[0]] = tangents[0]
        total = op.publics[False](*call)
    if any(t is not None for t in tangents[1:]):
        term = derived_rule(op, args, [None, *tangents[1:]], result)
        total = term if total is None else total + term
    return zeros_for(result) if total is None else total


allow_jvp_nodes(
    _gradient_op_rule,
    # (nll_loss's backward: zero in self; bce's: element-wise in self and target; glu's: the
    # Hessian of <grad, glu(x)>, symmetric)
    "NllLossBackwardBackward0",
    "NllLoss2DBackwardBackward0",
    "BinaryCrossEntropyBackwardBackward0",
    "GluBackwardBackward0",
)


def _conv_adjoint_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The convolution adjoints: bilinear in the gradient and the other factor; the input
    adjoints' ``input`` lends only its shape (zero derivative)."""
    if op.input_names == ("grad", "input", "weight"):
        tangents = [tangents[0], None, tangents[2]]
    total = bilinear_rule(op, args, tangents, result)
    return zeros_for(result) if total is None else total


allow_jvp_nodes(_conv_adjoint_rule, "ConvolutionBackwardBackward0")
allow_jvp_nodes(
    _reduction_rule,
    "ProdBackward0",
    "ProdBackward1",
    "VarBackward0",
    "StdBackward0",
    "VarMeanBackward0",
    "StdMeanBackward0",
    "LinalgVectorNormBackward0",
    "NormBackward1",
    "DistBackward0",
    "MaxBackward0",
    "MinBackward0",
    "KthvalueBackward0",
    "MedianBackward1",
    "NansumBackward0",
)
allow_jvp_nodes(_gather_rule, "SortBackward0", "SortBackward1", "TopkBackward0")
allow_jvp_nodes(_softmax_rule, "SoftmaxBackward0", "SafeSoftmaxBackward0")
allow_jvp_nodes(_logsumexp_rule, "LogsumexpBackward0")
allow_jvp_nodes(_evenly_read_rule, "MaxBackward1", "MinBackward1", "MedianBackward0")
allow_jvp_nodes(_amax_rule, "AmaxBackward0", "AminBackward0")
allow_jvp_nodes(_clamp_rule, "ClampBackward0")
allow_jvp_nodes(_clamp_min_rule, "ClampMinBackward1")
allow_jvp_nodes(_clamp_max_rule, "ClampMaxBackward1")
allow_jvp_nodes(_fmax_rule, "FmaxBackward0", "FminBackward0")
allow_jvp_nodes(_log_softmax_rule, "LogSoftmaxBackward0")
allow_jvp_nodes(_glu_rule, "GluBackward0")
allow_jvp_nodes(
    _no_tangent,
    *(f"{name}Backward{k}" for name in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge") for k in (0, 1)),
)
allow_jvp_nodes(_inv_rule, "LinalgInvExBackward0")
allow_jvp_nodes(_det_rule, "LinalgDetBackward0")
allow_jvp_nodes(_slogdet_rule, "LinalgSlogdetBackward0")
allow_jvp_nodes(_solve_rule, "LinalgSolveExBackward0")
allow_jvp_nodes(_solve_triangular_rule, "LinalgSolveTriangularBackward0")
allow_jvp_nodes(_cholesky_rule, "LinalgCholeskyExBackward0")
allow_jvp_nodes(_eigh_rule, "LinalgEighBackward0")
allow_jvp_nodes(_matrix_exp_rule, "LinalgMatrixExpBackward0")
allow_jvp_nodes(_cholesky_inverse_rule, "CholeskyInverseBackward0")
allow_jvp_nodes(_cholesky_solve_rule, "CholeskySolveBackward0")
allow_jvp_nodes(_triangular_solve_rule, "TriangularSolveBackward0")
allow_jvp_nodes(_pinv_rule, "LinalgPinvBackward0")
allow_jvp_nodes(_qr_rule, "LinalgQrBackward0")
allow_jvp_nodes(_svd_rule, "LinalgSvdBackward0")
allow_jvp_nodes(_lstsq_rule, "LinalgLstsqBackward0")
allow_jvp_nodes(_lerp_rule, "LerpBackward0", "LerpBackward1")
allow_jvp_nodes(_logit_rule, "LogitBackward0")
allow_jvp_nodes(_layer_norm_rule, "NativeLayerNormBackward0")
allow_jvp_nodes(_batch_norm_rule, "NativeBatchNormBackward0")
allow_jvp_nodes(_group_norm_rule, "NativeGroupNormBackward0")
allow_jvp_nodes(_cumprod_rule, "CumprodBackward0")
allow_jvp_nodes(_logsigmoid_rule, "LogSigmoidBackward0")
allow_jvp_nodes(_addmm_rule, "AddmmBackward0")
allow_jvp_nodes(_convolution_rule, "ConvolutionBackward0")
allow_jvp_nodes(
    _loss_rule,
    "MseLossBackward0",
    "HuberLossBackward0",
    "SmoothL1LossBackward0",
    "BinaryCrossEntropyBackward0",
    "BinaryCrossEntropyWithLogitsBackward0",
)
# rearranging (ops/rearranging.py): linear in the input
allow_jvp_nodes(linear_rule, "Rot90Backward0", "UnfoldBackward0", "UnfoldBackwardBackward0")
allow_jvp_nodes(
    linear_rule,
    "PixelShuffleBackward0",
    "PixelUnshuffleBackward0",
    "ChannelShuffleBackward0",
    "Im2ColBackward0",
    "Col2ImBackward0",
)
allow_jvp_nodes(_loss_rule, "SoftMarginLossBackward0")
allow_jvp_nodes(derived_rule, "SubBackward1")  # tensor - number (the margin losses)
allow_jvp_nodes(derived_rule, "RreluWithNoiseBackward0")
allow_jvp_nodes(
    linear_rule,
    *(
        f"Upsample{kind}Backward{suffix}0"
        for kind in (
            "Nearest1D",
            "Nearest2D",
            "Nearest3D",
            "NearestExact1D",
            "NearestExact2D",
            "NearestExact3D",
            "Linear1D",
            "Bilinear2D",
            "Bicubic2D",
            "Trilinear3D",
        )
        for suffix in ("", "Backward")
    ),
)


def _fused_product_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``beta * self_t + alpha * (P(a_t, b) + P(a, b_t))`` for addmv, addr, baddbmm and
    addbmm (ops/fused_products.py): the op itself, at ``beta=0``, gives ``alpha * P``."""
    public = op.publics[False]
    self_t = tangents[0]
    beta = args[op.index_of["beta"]]
    total = None
    materialized = op.node_name != "AddrBackward0"  # (outer products skip zero tensors)
    for i, t in enumerate(tangents[1:], start=1):
        if t is None and materialized:
            t = zeros_for(args[op.input_pos[i]])  # (as PyTorch: 0 * inf is NaN)
        if t is not None:
            call = list(args)
            call[op.input_pos[0]] = result  # (ignored at beta=0)
            call[op.input_pos[i]] = t
            call[op.index_of["beta"]] = 0
            term = public(*call)
            total = term if total is None else total + term
    if self_t is not None:
        term = self_t if beta == 1 else self_t * beta
        total = shape.expand(term, tuple(result.shape)) if total is None else total + term
    return total


allow_jvp_nodes(
    _fused_product_rule, "AddmvBackward0", "AddrBackward0", "BaddbmmBackward0", "AddbmmBackward0"
)


def _running_extreme_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """cummax/cummin values: the tangent at the index each value came from."""
    x, dim, indices = args
    if x.ndim == 0:
        return tangents[0].clone()
    return tangents[0].gather(dim, indices)


def _logcumsumexp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``logcumsumexp_jvp``: ``cumsum(e * t) / (cumsum(e) + 1e-13)`` with ``e`` the
    input's exponentials shifted by its maximum along ``dim`` (so that none overflows; the
    1e-13 is PyTorch's, which makes a prefix far below the maximum's tangent 0)."""
    x, dim = args
    if x.ndim == 0:
        return tangents[0].clone()
    shifted = (x - x.amax(dim, keepdim=True)).exp() if x.numel() else x.exp()
    return (shifted * tangents[0]).cumsum(dim) / (shifted.cumsum(dim) + 1e-13)


allow_jvp_nodes(_running_extreme_rule, "CummaxBackward0", "CumminBackward0")
allow_jvp_nodes(_logcumsumexp_rule, "LogcumsumexpBackward0")
allow_jvp_nodes(_reduction_rule, "AminmaxBackward0")
allow_jvp_nodes(derived_rule, "DivBackward1")  # (a division by a number: ops/differences.py)
allow_jvp_nodes(
    joint_linear_rule, "SelectScatterBackward0", "SliceScatterBackward0", "DiagonalScatterBackward0"
)  # (ops/scatter_views.py)
allow_jvp_nodes(joint_linear_rule, "IndexCopyBackward0", "IndexFillBackward1")
allow_jvp_nodes(joint_linear_rule, "AsStridedScatterBackward0")  # (ops/scatter_views.py)
allow_jvp_nodes(_linear_zeroing(value=0), "IndexFillBackward0")  # (ops/index_writes.py)


def _frexp_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``self_t / exponent.exp2()``, the power in float32 (float64 for a float64
    tangent). (PyTorch's float16 tangent stays float32; chainrule's takes the primal's dtype.)"""
    t = tangents[0]
    exponent = args[op.index_of["exponent"]]
    wide = exponent.double() if t._data.dtype == np.float64 else exponent.float()
    return t / pointwise.exp2(wide)


allow_jvp_nodes(derived_rule, "LdexpBackward0")  # (ops/float_parts.py)
allow_jvp_nodes(_frexp_rule, "FrexpBackward0")
allow_jvp_nodes(derived_rule, "NextafterBackward0")  # (ops/float_parts.py)


def _scatter_reduce_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """scatter_reduce (ops/index_reductions.py): sum and mean are linear in self and src
    together; amax/amin take the mean tangent of the values equal to the result (PyTorch's
    forward formula: an element of self left out by ``include_self=False`` does not count,
    though its backward formula counts it); prod is the product rule, ``D * t`` with ``D`` the
    derivatives at a gradient of ones (PyTorch gives no tangent for prod)."""
    from ._opnode import TENSOR_NS

    self_p, dim, index, src_p, reduce, include_self = args
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce in ("sum", "mean"):
        return joint_linear_rule(op, args, tangents, result)
    self_t, src_t = tangents
    if reduce in ("amax", "amin"):
        dtype = result.dtype
        self_is = (self_p == result).to(dtype)
        if not include_self:
            self_is = indexing.scatter(self_is, dim, index, 0)
        src_is = (src_p == result.gather(dim, index)).to(dtype)
        count = indexing.scatter_add(self_is, dim, index, src_is)
        total = zeros_for(result) if self_t is None else self_t * self_is
        if src_t is not None:
            total = indexing.scatter_add(total, dim, index, src_t * src_is)
        return total / count
    env: list[Any] = [*args, result, *(tuple(args[p].shape) for p in op.input_pos)]
    ones = _ones(result)
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        derivative = op.derivatives[i]
        term = derivative.fn(TENSOR_NS, ones, *(env[j] for j in derivative.arg_index)) * t
        if i == 1:  # (src's terms go where src's elements go)
            term = indexing.scatter_add(zeros_for(result), dim, index, term)
        total = term if total is None else total + term
    return total


allow_jvp_nodes(_scatter_reduce_rule, "ScatterReduceBackward0")  # (ops/index_reductions.py)
# (ops/order_statistics.py) nanmedian and mode along a dim: the tangent at the returned index;
# nanmedian of all elements: PyTorch's evenly_read_jvp
allow_jvp_nodes(_reduction_rule, "NanmedianBackward1", "ModeBackward0")
allow_jvp_nodes(_evenly_read_rule, "NanmedianBackward0")
# (ops/filling.py, ops/unsafe_splits.py) torch.fill as fill_'s rules; the unsafe splits as split's
allow_jvp_nodes(_linear_zeroing(value=0), "FillBackward0")
allow_jvp_nodes(joint_linear_rule, "FillBackward1")
allow_jvp_nodes(linear_rule, "UnsafeSplitBackward0", "UnsafeSplitWithSizesBackward0")
allow_jvp_nodes(linear_rule, "ConjPhysicalBackward0", "ConjPhysicalBackward1")  # (conjugate.py)
allow_jvp_nodes(linear_rule, *view_copies.COPY_NODES)  # (ops/view_copies.py: as the views)


def _renorm_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """renorm (ops/renorm.py): ``y = x f(n)``, ``n`` the slices' norm, ``f = maxnorm / (n +
    1e-7)`` where ``n > maxnorm``: ``t f - x f / (n + 1e-7) n_t`` there, ``t`` elsewhere."""
    from ._opnode import TENSOR_NS

    x, p, dim, maxnorm = args
    (t,) = tangents
    dims = tuple(d for d in range(x.ndim) if d != dim)
    # (the norm in the accumulation type as PyTorch's; the tangent keeps the primal's dtype)
    half = x.dtype.itemsize == 2 and x.is_floating_point()
    norm = reduction.norm(x, p, dims, keepdim=True, dtype=float32 if half else None)
    slope = reduction._norm_backward(TENSOR_NS, _ones(norm), x, p, dims, norm)
    norm_t = (slope * t).sum(dims, keepdim=True)
    inverse = 1 / (norm + 1e-7)
    factor = inverse * maxnorm
    return pointwise._where(norm > maxnorm, factor * t - (factor * inverse) * norm_t * x, t)


allow_jvp_nodes(_renorm_rule, "RenormBackward0")


# ----------------------------------------------------------------------------------------------
# Complex numbers (ops/_forward.py: the linear rules hold for ops linear over the reals)

allow_jvp_nodes(
    linear_rule,
    "ConjBackward0",
    "ViewAsRealBackward0",
    "ViewAsComplexBackward0",
    "FftC2CBackward0",
    "FftR2CBackward0",
    "FftC2RBackward0",
)
allow_jvp_nodes(joint_linear_rule, "ComplexBackward0")  # (complex(real, imag): linear in both)


def _polar_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``polar(r, theta) = r e^(i theta)``: ``e^(i theta) (t_r + i r t_theta)``."""
    from .complex_ops import polar

    r, theta = args
    t_r, t_theta = tangents
    unit = polar(_ones(r), theta)
    total = zeros_for(result)
    if t_r is not None:
        total = total + unit * t_r
    if t_theta is not None:
        total = total + unit * (r * t_theta) * 1j
    return total


_polar_rule.holds_for_complex = True  # type: ignore[attr-defined]
# The linalg rules written with conjugate transposes, or for holomorphic functions of the
# matrix (inv, det, solves, matrix_exp), hold for complex values as PyTorch's do.
for _rule in (
    _inv_rule,
    _det_rule,
    _slogdet_rule,
    _solve_rule,
    _solve_triangular_rule,
    _matrix_exp_rule,
    _cholesky_rule,
    _pinv_rule,
    _lstsq_rule,
):
    _rule.holds_for_complex = True  # type: ignore[attr-defined]
allow_jvp_nodes(_polar_rule, "PolarBackward0")
_div_rule.holds_for_complex = True  # type: ignore[attr-defined]  # (the quotient rule)

# (the general eigendecomposition, the LU family and householder_product: their own module)
from . import _jvp_factorizations  # noqa: E402, F401
