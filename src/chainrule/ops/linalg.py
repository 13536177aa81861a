"""Matrix products: mm, mv, dot, bmm, addmm, and ``matmul``/``linear`` built from them.

``matmul`` is decomposed exactly as PyTorch decomposes it (unsqueeze/view/expand around
mm/mv/bmm), so the graph a program builds has the same nodes as in PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from .._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, from_numpy_dtype
from .._frames import user_stacklevel
from .._tensor import LEGACY_TYPE_NAMES, Tensor
from . import out_arguments
from ._registry import argument_position, op, tensor_method
from .copying import contiguous
from .shape import (
    _expand,
    _permute,
    _unsafe_view,
    _view,
    reshape,
    squeeze,
    t,
    transpose,
    unsqueeze,
)

__all__ = ["mm", "mv", "dot", "vdot", "bmm", "addmm", "matmul", "outer", "ger", "linear", "inner"]


_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)


def _dims(a: np.ndarray) -> str:
    return "x".join(str(s) for s in a.shape)


def _name(a: np.ndarray) -> str:
    """PyTorch's scalar type name of an array's dtype (``Float``, ``Long`` ...)."""
    return SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]


def _cpp_name(a: np.ndarray) -> str:
    """The C++ element type of an array's dtype (``float``, ``long int`` ...)."""
    return CPP_TYPE_NAMES[from_numpy_dtype(a.dtype)]


def _check_expandable(shape: tuple[int, ...], target: tuple[int, ...], dtype: np.dtype) -> None:
    """PyTorch's error when ``addmm``'s ``self`` cannot expand to the product's shape (checked
    from the last dimension, as PyTorch does)."""
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand(chainrule.{LEGACY_TYPE_NAMES[from_numpy_dtype(dtype)]}"
            f"{{[{', '.join(map(str, shape))}]}}, "
            f"size=[{', '.join(map(str, target))}]): the number of sizes provided "
            f"({len(target)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    lead = len(target) - len(shape)
    for i in range(len(target) - 1, lead - 1, -1):
        size = shape[i - lead]
        if size != 1 and size != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({size}) at non-singleton dimension {i}.  Target sizes: "
                f"[{', '.join(map(str, target))}].  Tensor sizes: [{', '.join(map(str, shape))}]"
            )


def _refuse_bool(kernel: str, array: np.ndarray) -> None:
    """PyTorch's error for a product of bool tensors (its CPU kernels have no bool version)."""
    if array.dtype == np.bool_:
        raise _dtype.no_kernel(kernel, array.dtype)


@op(
    "MmBackward0",
    inputs=("self", "mat2"),
    signatures=(
        "(Tensor input, Tensor mat2, *, Tensor out = None)",
        "(Tensor input, Tensor mat2, chainrule.dtype out_dtype, *, Tensor out = None)",
    ),
    method=True,
    complex_ok=True,
)
def mm(self, mat2):
    """Matrix product of two 2-D tensors."""
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_dims(self)} and {_dims(mat2)})"
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_cpp_name(self)} != {_cpp_name(mat2)}"
        )
    _refuse_bool("addmm_impl_cpu_", self)
    return self @ mat2


@mm.derivative("self")
def _(ops, grad, mat2):
    return ops.mm(grad, ops.conj(ops.t(mat2)))  # PyTorch: grad.mm(mat2.t().conj())


def _column_major(strides: tuple[int, ...] | None) -> bool:
    """A matrix seen through ``.t()`` (e.g. a Linear weight): column-major strides."""
    return strides is not None and len(strides) == 2 and strides[0] < strides[1]


@mm.derivative("mat2")
def _(ops, grad, self, mat2_strides):
    # As PyTorch does (it reads mat2's strides, not mat2): for a transposed mat2 compute the
    # gradient transposed, so that once TBackward transposes it back it is row-major like the
    # weight and becomes its .grad without a copy.
    # Complex: PyTorch's self.t().conj().mm(grad) (conj of a real value is the value).
    if _column_major(mat2_strides):
        return ops.t(ops.mm(ops.t(grad), ops.conj(self)))
    return ops.mm(ops.conj(ops.t(self)), grad)


@op("MvBackward0", inputs=("self", "vec"), method=True, complex_ok=True)
def mv(self, vec):
    """Matrix-vector product."""
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}"
        )
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({_dims(self)}), "
            f"vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_name(vec)}, {_name(self)}, and {_name(vec)}"
        )
    _refuse_bool("addmv_impl_cpu", self)
    return self @ vec


@mv.derivative("self")
def _(ops, grad, vec):
    return ops.outer(grad, ops.conj(vec))  # PyTorch: grad.ger(vec.conj())


@mv.derivative("vec")
def _(ops, grad, self):
    return ops.mv(ops.conj(ops.t(self)), grad)  # PyTorch: self.conj().t().mv(grad)


def _check_vectors(self: np.ndarray, other: np.ndarray) -> None:
    """PyTorch's checks of ``dot`` and ``vdot``: two 1-D tensors of one size and dtype."""
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
        )
    if self.shape[0] != other.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor "
            f"[{self.shape[0]}] and src [{other.shape[0]}] to have the same number of elements, "
            f"but got {self.shape[0]} and {other.shape[0]} elements respectively"
        )
    if self.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_name(self)} and {_name(other)}"
        )


@op("DotBackward0", inputs=("self", "tensor"), method=True, complex_ok=True)
def dot(self, tensor):
    """Inner product of two 1-D tensors."""
    _check_vectors(self, tensor)
    _refuse_bool("dot", self)
    return np.dot(self, tensor)


@dot.derivative("self")
def _(ops, grad, tensor):
    return grad * ops.conj(tensor)  # PyTorch: grad * tensor.conj()


@dot.derivative("tensor")
def _(ops, grad, self):
    return grad * ops.conj(self)


@op("VdotBackward0", inputs=("self", "other"), method=True, complex_ok=True)
def vdot(self, other):
    """``sum(conj(self) * other)`` of two 1-D tensors (real tensors: :func:`dot`)."""
    _check_vectors(self, other)
    _refuse_bool("dot", self)
    return np.asarray(np.vdot(self, other))


@vdot.derivative("self")
def _(ops, grad, other):
    return ops.conj(grad) * other  # PyTorch: grad.conj() * other


@vdot.derivative("other")
def _(ops, grad, self):
    return grad * self


@op("BmmBackward0", inputs=("self", "mat2"), method=True, complex_ok=True)
def bmm(self, mat2):
    """Batched matrix product of two 3-D tensors."""
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_name(self)} but found {_name(mat2)}")
    _refuse_bool("bmm", self)
    if self.shape[2] == 1 and self.dtype.kind == "f" and self.dtype.itemsize >= 4:
        # Outer products (a weight's per-example gradient under vmap, g x^T): one product per
        # element, the same values as matmul's, several times faster than its stacked loop.
        # einsum's kernel for a length-1 contraction is about twice as fast as a broadcast
        # multiply (whose inner loop reads one operand with stride 0); contiguous operands,
        # small next to the result, keep it on that kernel.
        return np.einsum(
            "bik,bkj->bij", np.ascontiguousarray(self), np.ascontiguousarray(mat2), order="C"
        )
    return np.matmul(self, mat2)


@bmm.derivative("self")
def _(ops, grad, mat2):
    return ops.bmm(grad, ops.conj(ops.transpose(mat2, 1, 2)))  # PyTorch: mat2.transpose.conj()


@bmm.derivative("mat2")
def _(ops, grad, self):
    return ops.bmm(ops.conj(ops.transpose(self, 1, 2)), grad)


# (in place, the method is written into self: argument errors count positions after it)
@op("AddmmBackward0", inputs=("self", "mat1", "mat2"), method=True, inplace="method",
    complex_ok=True)
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``; ``self`` broadcasts to the product's shape.

    As in PyTorch the three tensors must have one dtype (no promotion).
    """
    if mat1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_name(self)} and {_name(mat2)}"
        )
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_name(mat1)} and {_name(mat2)}"
        )
    _check_expandable(self.shape, (mat1.shape[0], mat2.shape[1]), self.dtype)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_dims(mat1)} and {_dims(mat2)})"
        )
    _refuse_bool("addmm_impl_cpu_", self)
    if self.dtype == _HALF:
        # As PyTorch's CPU kernel: the product and the sum in float32, rounded once (rounding
        # the product to float16 before adding would lose digits where they cancel).
        wide = addmm.op.forward(self.astype(_SINGLE), mat1.astype(_SINGLE),
                                mat2.astype(_SINGLE), beta, alpha)
        return wide.astype(_HALF)
    product = mat1 @ mat2
    if alpha != 1:
        product *= alpha
    if beta == 0:
        return product
    if beta != 1:
        return product + beta * self
    product += self
    return product


# Complex values: PyTorch's formulas conjugate the other matrix and the scalars (conj of a real
# value is the value).


@addmm.derivative("self")
def _(ops, grad, beta):
    return grad if beta == 1 else grad * ops.conj(beta)


@addmm.derivative("mat1")
def _(ops, grad, mat2, alpha):
    g = ops.mm(grad, ops.conj(ops.t(mat2)))
    return g if alpha == 1 else g * ops.conj(alpha)


@addmm.derivative("mat2")
def _(ops, grad, mat1, mat2_strides, alpha):
    if _column_major(mat2_strides):
        g = ops.t(ops.mm(ops.t(grad), ops.conj(mat1)))
    else:
        g = ops.mm(ops.conj(ops.t(mat1)), grad)
    return g if alpha == 1 else g * ops.conj(alpha)


@tensor_method(aliases=("ger",))
def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Outer product of two vectors (as PyTorch: ``input.view(-1, 1) * vec2``); ``out=``
    as ``torch.mul``'s (which PyTorch's errors name)."""
    if out is not None:
        _refuse_method_out("outer")
        out_arguments.check_out("mul", out, (input, vec2))
    if input._data.ndim != 1 or vec2._data.ndim != 1:
        raise RuntimeError(
            f"outer: Expected 1-D argument self, but got {input._data.ndim}-D"
        )
    result = reshape(input, (-1, 1)) * vec2
    if out is None:
        return result
    return out_arguments.write_out("mul", out, result, out_arguments.CAST, [input, vec2])


def _refuse_method_out(name: str) -> None:
    """PyTorch's Tensor methods take no ``out=`` (``x.matmul(y, out=z)``): its TypeError, for
    a plain function that is also the method (called while running it)."""
    if argument_position(1) == 0:
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")


def ger(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """:func:`outer` (deprecated name); with ``out=`` PyTorch warns that it is deprecated."""
    if out is None:
        return outer(input, vec2)
    warnings.warn(_GER_DEPRECATED, UserWarning, stacklevel=user_stacklevel())
    return outer(input, vec2, out=out)


_GER_DEPRECATED = (
    "torch.ger is deprecated and will be removed in a future PyTorch release. Use torch.outer "
    "instead. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1270.)"
)


@tensor_method
def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum-product over the last dimension: ``input * other`` if either is 0-d, else
    PyTorch's ``tensordot(input, other, [-1], [-1])``, with the same graph (``ViewBackward0``
    over ``MmBackward0``, or over ``DotBackward0`` for two vectors).

    Example:
        >>> import chainrule as torch
        >>> torch.inner(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        return input * other
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"[{', '.join(map(str, a.shape))}] and [{', '.join(map(str, b.shape))}]"
        )
    return _tensordot(input, other, (a.ndim - 1,), (b.ndim - 1,))


def _tensordot(input1: Tensor, input2: Tensor, dims1: tuple[int, ...], dims2: tuple[int, ...]
               ) -> Tensor:
    """PyTorch's ``tensordot`` over the (non-negative) dimensions ``dims1`` of ``input1`` and
    ``dims2`` of ``input2``, decomposed as PyTorch decomposes it: contracted dimensions of size
    1 summed first, both operands permuted and reshaped to matrices for one ``mm`` (or, for a
    full contraction, flattened for a ``dot``, or multiplied and summed when not contiguous),
    and the product reshaped to the result's shape."""
    from .reduction import sum as reduce_sum
    from .shape import flatten

    a, b = input1._data, input2._data
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2 = input1, input2
    csize = 1
    for d1, d2 in zip(dims1, dims2, strict=True):
        s1, s2 = a.shape[d1], b.shape[d2]
        if s2 == 1:  # a broadcast contracted dimension is summed right away
            t1 = reduce_sum(t1, d1, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = reduce_sum(t2, d2, True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {s1} in dim {d1} "
                    f"and second has size {s2} in dim {d2}"
                )
            csize *= s1
    kept1 = [d for d in range(a.ndim) if d not in dims1]
    kept2 = [d for d in range(b.ndim) if d not in dims2]
    shape1, shape2 = t1._data.shape, t2._data.shape
    result_shape = tuple(shape1[d] for d in kept1) + tuple(shape2[d] for d in kept2)
    size1 = int(np.prod([shape1[d] for d in kept1], dtype=np.int64))
    size2 = int(np.prod([shape2[d] for d in kept2], dtype=np.int64))
    p1 = _permute(t1, tuple(kept1) + tuple(dims1))
    p2 = _permute(t2, tuple(dims2) + tuple(kept2))
    if size1 != 1 or size2 != 1:
        product = mm(reshape(p1, (size1, csize)), reshape(p2, (csize, size2)))
    elif p1._data.flags.c_contiguous and p2._data.flags.c_contiguous:
        product = dot(flatten(p1), flatten(p2))  # a full contraction: flatten is a view
    else:
        product = reduce_sum(squeeze(p1) * squeeze(p2), dtype=p1.dtype)
    return reshape(product, result_shape)


@tensor_method
def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product with PyTorch's rules for every rank (1-D vectors, batches broadcast);
    ``out=`` as PyTorch's (the function only, as PyTorch's: not ``Tensor.matmul``).

    Decomposed exactly as PyTorch's ``_matmul_impl``, so the graph has PyTorch's nodes: dot,
    mv and mm for 1-D/2-D operands; one mm or mv on the larger operand folded into a matrix
    when PyTorch folds (see :func:`_should_fold`); otherwise expand, reshape and one bmm.

    Example:
        >>> import chainrule as torch
        >>> (torch.ones(2, 3) @ torch.ones(3)).shape
        chainrule.Size([2])
    """
    for position, (name, value) in enumerate((("input", input), ("other", other)), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"matmul(): argument '{name}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )
    if out is not None:
        _refuse_method_out("matmul")
        out_arguments.check_out("matmul", out, (input, other))
        da, db = input._data.ndim, other._data.ndim
        if da == 1 and db == 2:  # (PyTorch's out is the row product's, squeezed in place)
            row = mm(unsqueeze(input, 0), other)
            out_arguments.write_out("matmul", out, row, out_arguments.SAME, [input, other])
            out_arguments.squeeze_row(out)
            return out
        result = matmul(input, other)
        if da == 1 and db == 1:
            rule = out_arguments.INPUT
        elif db == 1:
            rule = out_arguments.MV if da == 2 else out_arguments.ADDMV_FOLDED
        else:
            rule = out_arguments.SAME
        return out_arguments.write_out("matmul", out, result, rule, [input, other])
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        return _squeeze_vector_product(mm(unsqueeze(input, 0), other))
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded(input, other)
    return _batched(input, other)


@op("SqueezeBackward4", view=True, complex_ok=True)
def _squeeze_vector_product(self):
    # PyTorch squeezes the (1, p) product in place (``squeeze_(0)``), hence SqueezeBackward4.
    return np.squeeze(self, axis=0)


@_squeeze_vector_product.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


def _should_fold(tensor1: Tensor, tensor2: Tensor) -> bool:
    """PyTorch's ``should_fold``: compute ``(..., n, m) @ (m[, p])`` (or the transposed case)
    as one mm/mv on the batched operand reshaped to a matrix.

    It folds when the smaller operand requires grad (a bmm would expand it, and its gradient
    would be a large tensor summed afterwards), and otherwise only when the fold is a view.
    """
    first_larger = tensor1._data.ndim >= tensor2._data.ndim
    large = tensor1._data if first_larger else np.swapaxes(tensor2._data, -1, -2)
    small = tensor2 if first_larger else tensor1
    if not (large.ndim >= 3 and small._data.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if tensor1._data.ndim == 2:
        return False
    if large.size == 0:
        return True
    shape = large.shape
    strides = [s // large.itemsize for s in large.strides]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(large.ndim - 2))


def _folded(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """``(..., n, m) @ (m[, p])`` as one mm (or mv); ``(n, m) @ (..., m, p)`` computed as
    ``((..., m, p).mT @ (n, m).t()).mT``."""
    swap = tensor2._data.ndim > tensor1._data.ndim
    if swap:
        big = transpose(tensor2, -2, -1)
        small = t(tensor1) if tensor1._data.ndim == 2 else tensor1
    else:
        big, small = tensor1, tensor2
    sizes = big._data.shape
    output_shape = sizes[:-1]
    folded = reshape(big, (int(np.prod(output_shape, dtype=np.int64)), sizes[-1]))
    if small._data.ndim == 2:
        output = _unsafe_view(mm(folded, small), output_shape + (small._data.shape[1],))
        return contiguous(transpose(output, -2, -1)) if swap else output
    return _unsafe_view(mv(folded, small), output_shape)


def _broadcast_batches(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast batch shape, with PyTorch's ``infer_size`` error."""
    ndim = max(len(a), len(b))
    result = []
    for i in range(ndim):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if len(a) - 1 - offset >= 0 else 1
        size_b = b[len(b) - 1 - offset] if len(b) - 1 - offset >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at "
                f"non-singleton dimension {i}"
            )
        result.append(size_b if size_a == 1 else size_a)
    return tuple(result)


def _batched(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """Batch dimensions broadcast, folded into one, then one bmm."""
    shape1, shape2 = tensor1._data.shape, tensor2._data.shape
    da, db = len(shape1), len(shape2)
    n = shape1[-2] if da > 1 else 1
    m1 = shape1[-1]
    batch1 = shape1[:max(da - 2, 0)]
    m2 = shape2[-2] if db > 1 else shape2[0]
    p = shape2[-1] if db > 1 else 1
    batch2 = shape2[:max(db - 2, 0)]
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        # A batch of one that requires grad is squeezed (so the fold applies) rather than
        # expanded, as PyTorch does for the gradient's sake.
        if batch1[0] == 1 and tensor1.requires_grad:
            return matmul(squeeze(tensor1, 0), tensor2)
        if batch2[0] == 1 and tensor2.requires_grad:
            return matmul(tensor1, squeeze(tensor2, 0))
    batch = _broadcast_batches(batch1, batch2)
    count = int(np.prod(batch, dtype=np.int64))
    left = reshape(_expand(tensor1, batch + (n, m1)), (count, n, m1))
    if db == 1:
        right = unsqueeze(reshape(_expand(tensor2, batch + (m2,)), (count, m2)), 2)
    else:
        right = reshape(_expand(tensor2, batch + (m2, p)), (count, m2, p))
    output_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    product = bmm(left, right)
    if db == 1:
        product = squeeze(product, -1)
    return _unsafe_view(product, output_shape)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, as PyTorch computes it: ``addmm`` for a 2-D input, or a
    contiguous input flattened to 2-D around an ``addmm``; otherwise ``matmul`` then ``+``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.linear(torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)).shape
        chainrule.Size([2, 4])
    """
    ndim = input._data.ndim
    if bias is not None:
        if ndim == 2:
            return addmm(bias, input, t(weight))
        if input._data.flags.c_contiguous and (ndim == 3 or bias._data.ndim == 1):
            lead = input._data.shape[:-1]
            rows = int(np.prod(lead, dtype=np.int64))
            folded = reshape(input, (rows, input._data.shape[-1]))
            result = addmm(bias, folded, t(weight))
            return _view(result, lead + (result._data.shape[1],))
        return matmul(input, t(weight)) + bias
    return matmul(input, t(weight))


out_arguments.allow_out(out_arguments.SAME, mm, bmm, addmm)
out_arguments.allow_out(out_arguments.MV, mv)
out_arguments.allow_out(out_arguments.INPUT, dot, vdot)
