"""Contractions: ``einsum``, ``tensordot`` and ``kron``, built from differentiable views and
products as PyTorch builds them, so that their graphs show PyTorch's nodes.

``einsum`` follows ATen's algorithm step by step: repeated labels become diagonals, every
operand is unsqueezed and permuted to the aligned order ``output labels + contracted labels``,
operands are contracted left to right by ``sumproduct_pair`` (permute, reshape, ``bmm``,
view, permute), and the contracted dimensions are viewed away at the end. Its gradients are the
gradients of those ops (PyTorch has no einsum node either).
"""

from __future__ import annotations

import math
from typing import Any

from .._strides import is_contiguous_as
from .._tensor import Tensor, wrap_dim
from ._registry import tensor_method
from .linalg import bmm, dot, mm
from .pointwise import mul
from .reduction import sum as _sum
from .shape import (
    _can_view,
    _unsafe_view,
    diagonal,
    flatten,
    movedim,
    permute,
    reshape,
    squeeze,
    unsqueeze,
    view,
)

__all__ = ["einsum", "tensordot", "kron"]

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` by permute, reshape and ``bmm``."""
    if not sum_dims:
        return mul(left, right)
    ndim = left.dim()
    summed = set(sum_dims)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = _sum(left, i, True)
            elif sr:
                right = _sum(right, i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm = [0] * len(lperm)
    for position, d in enumerate(lperm):
        operm[d] = position
    left = reshape(permute(left, lperm), (lro_size, lo_size, sum_size))
    right = reshape(permute(right, rperm), (lro_size, sum_size, ro_size))
    return permute(view(bmm(left, right), out_size), operm)


def _sublist_subscript(n: Any) -> str:
    if n is Ellipsis:
        return "..."
    if 0 <= n < 2 * _LETTERS:
        return _label(n)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args: Any) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Labels are letters; ``...`` stands for broadcast dimensions; without ``->`` the output is
    the ellipsis dimensions followed by the labels seen once, in alphabetical order. The
    sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted too.

    Example:
        >>> import chainrule as torch
        >>> torch.einsum("i,i->", torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list")
    if isinstance(args[0], Tensor):  # the sublist format
        equation = ",".join("".join(_sublist_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_subscript(s) for s in args[-1])
            operands = list(args[:-1:2])
        else:
            operands = list(args[::2])
    else:
        equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        return einsum(equation, *operands[0])  # (the old interface: one list of operands)
    return _einsum(equation, operands)


def _einsum(equation: str, operands: list[Tensor]) -> Tensor:
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels: list[list[int]] = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == " ":
            pass
        elif ch == ".":
            if ell_in_input:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} for which an ellipsis was already "
                    "found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(
                    f"einsum(): found '.' for operand {curr} that is not part of any ellipsis")
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif ch == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        else:
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {i} in the equation string, "
                    "subscripts must be in [a-zA-Z]")
            op_labels[curr].append(_subscript(ch))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    label_count = [0] * (2 * _LETTERS)
    ell_num_dim = 0
    for k, (operand, labels) in enumerate(zip(operands, op_labels, strict=True)):
        ndims = operand.dim()
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            relation = ("is more than the number of dimensions" if has_ellipsis
                        else "does not match the number of dimensions")
            tail = "" if has_ellipsis else " and no ellipsis was given"
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}) {relation} "
                f"({ndims}) for operand {k}{tail}")

    label_perm_index = [-1] * (2 * _LETTERS)
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(2 * _LETTERS):
            if label_count[s] == 1:
                label_perm_index[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == " ":
                pass
            elif ch == ".":
                if ell_in_output:
                    raise RuntimeError(
                        "einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError(
                        "einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not (ch.isascii() and ch.isalpha()):
                    raise RuntimeError(
                        f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                        "equation string, subscripts must be in [a-zA-Z]")
                s = _subscript(ch)
                if not (label_count[s] > 0 and label_perm_index[s] == -1):
                    why = (" appears more than once in the output" if label_perm_index[s] > -1
                           else " does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {ch}{why}")
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(2 * _LETTERS):
        if label_count[s] > 0 and label_perm_index[s] == -1:
            label_perm_index[s] = perm_index
            perm_index += 1

    label_size = [1] * (2 * _LETTERS)
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops: list[Tensor] = []
    for k, operand in enumerate(operands):
        t = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[k]:
            if s == _ELLIPSIS:
                ndim = operand.dim() - (len(op_labels[k]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = t.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {k}has "
                                f"size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                size = t.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {k} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:
                prev = permutation[label_perm_index[s]]
                if t.shape[dim] != t.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {k} but the "
                        f"sizes don't match, {t.shape[dim]} != {t.shape[prev]}")
                t = movedim(diagonal(t, 0, prev, dim), -1, prev)
        for p, val in enumerate(permutation):
            if val == -1:
                t = unsqueeze(t, dim)
                permutation[p] = dim
                dim += 1
        ops.append(permute(t, permutation))

    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims: list[int] = []
        a_sum: list[int] = []
        b_sum: list[int] = []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = _sum(a, a_sum, True)
        if b_sum:
            b = _sum(b, b_sum, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            return view(ops[0], ops[0].shape[:out_num_dim])
        return _sum(ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contract ``a``'s last ``dims`` dimensions with ``b``'s first (or the listed pairs:
    ``dims=([1, 0], [0, 1])``)."""
    if out is not None:
        raise TypeError("tensordot(): out= is not supported")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(
                f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = list(range(-dims, 0))
        dims_b = list(range(dims))
    else:
        dims_a_raw, dims_b_raw = dims
        dims_a = [dims_a_raw] if isinstance(dims_a_raw, int) else list(dims_a_raw)
        dims_b = [dims_b_raw] if isinstance(dims_b_raw, int) else list(dims_b_raw)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    wrapped_a = [wrap_dim(d, a.dim()) for d in dims_a]
    wrapped_b = [wrap_dim(d, b.dim()) for d in dims_b]
    t1, t2 = a, b
    csize = 1
    for d1, d2, w1, w2 in zip(dims_a, dims_b, wrapped_a, wrapped_b, strict=True):
        s1, s2 = a.shape[w1], b.shape[w2]
        if s2 == 1:
            t1 = _sum(t1, w1, True)
        elif s1 == 1:
            t2 = _sum(t2, w2, True)
        else:
            if s1 != s2:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {s1} in dim {d1} "
                    f"and second has size {s2} in dim {d2}")
            csize *= s1
    p1 = [i for i in range(a.dim()) if i not in wrapped_a]
    p2 = [i for i in range(b.dim()) if i not in wrapped_b]
    rsizes = [t1.shape[i] for i in p1] + [t2.shape[i] for i in p2]
    size1 = math.prod(t1.shape[i] for i in p1)
    size2 = math.prod(t2.shape[i] for i in p2)
    if size1 != 1 or size2 != 1:
        t1 = reshape(permute(t1, p1 + wrapped_a), (size1, csize))
        t2 = reshape(permute(t2, wrapped_b + p2), (csize, size2))
        return reshape(mm(t1, t2), rsizes)
    # A full contraction: a dot product when both flatten to views, else mul and sum.
    t1 = permute(t1, p1 + wrapped_a)
    t2 = permute(t2, wrapped_b + p2)
    if is_contiguous_as(t1._data, None) and is_contiguous_as(t2._data, None):
        return reshape(dot(flatten(t1), flatten(t2)), rsizes)
    return reshape(_sum(mul(squeeze(t1), squeeze(t2))), rsizes)


@tensor_method
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times a copy of ``other``."""
    ndim = max(input.dim(), other.dim())
    a_shape = (1,) * (ndim - input.dim()) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.dim()) + tuple(other.shape)
    a_view: list[int] = []
    b_view: list[int] = []
    result = []
    for sa, sb in zip(a_shape, b_shape, strict=True):
        a_view += [sa, 1]
        b_view += [1, sb]
        result.append(sa * sb)
    product = mul(_unsafe_view(input, a_view), _unsafe_view(other, b_view))
    if not _can_view(product._data, tuple(result)):  # (PyTorch views the product: its error)
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _unsafe_view(product, result)
