"""Matrix products: mm, mv, dot, bmm, addmm, and ``matmul``/``linear`` built from them.

``matmul`` is decomposed exactly as PyTorch decomposes it (unsqueeze/view/expand around
mm/mv/bmm), so the graph a program builds has the same nodes as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._registry import ARITH, op
from .copying import contiguous
from .shape import _expand, _unsafe_view, _view, reshape, t, transpose, unsqueeze

__all__ = ["mm", "mv", "dot", "vdot", "bmm", "addmm", "matmul", "outer", "ger", "linear", "inner"]


def _dims(a: np.ndarray) -> str:
    return "x".join(str(s) for s in a.shape)


def _check_same_dtype(name: str, a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        from .._dtype import from_numpy_dtype
        from .reduction import _SCALAR_TYPE_NAMES

        left = _SCALAR_TYPE_NAMES.get(from_numpy_dtype(a.dtype).name, str(a.dtype))
        right = _SCALAR_TYPE_NAMES.get(from_numpy_dtype(b.dtype).name, str(b.dtype))
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {left.lower()} != {right.lower()}"
            if name == "mm"
            else f"expected scalar type {left} but found {right}"
        )


@op(
    "MmBackward0",
    inputs=("self", "mat2"),
    signatures=(
        "(Tensor input, Tensor mat2, *, Tensor out = None)",
        "(Tensor input, Tensor mat2, chainrule.dtype out_dtype, *, Tensor out = None)",
    ),
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
    _check_same_dtype("mm", self, mat2)
    return self @ mat2


@mm.derivative("self")
def _(F, grad, mat2):
    return F.mm(grad, F.t(mat2))


def _column_major(strides: tuple[int, ...] | None) -> bool:
    """A matrix seen through ``.t()`` (e.g. a Linear weight): column-major strides."""
    return strides is not None and len(strides) == 2 and strides[0] < strides[1]


@mm.derivative("mat2")
def _(F, grad, self, mat2_strides):
    # As PyTorch does (it reads mat2's strides, not mat2): for a transposed mat2 compute the
    # gradient transposed, so that once TBackward transposes it back it is row-major like the
    # weight and becomes its .grad without a copy.
    if _column_major(mat2_strides):
        return F.t(F.mm(F.t(grad), self))
    return F.mm(F.t(self), grad)


@op("MvBackward0", inputs=("self", "vec"))
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
    _check_same_dtype("mv", self, vec)
    return self @ vec


@mv.derivative("self")
def _(F, grad, vec):
    return F.outer(grad, vec)


@mv.derivative("vec")
def _(F, grad, self):
    return F.mv(F.t(self), grad)


@op("DotBackward0", inputs=("self", "tensor"))
def dot(self, tensor):
    """Inner product of two 1-D tensors."""
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors"
        )
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            "inconsistent tensor size, expected tensor "
            f"[{self.shape[0]}] and src [{tensor.shape[0]}] to have the same number of elements, "
            f"but got {self.shape[0]} and {tensor.shape[0]} elements respectively"
        )
    _check_same_dtype("dot", self, tensor)
    return np.dot(self, tensor)


@dot.derivative("self")
def _(F, grad, tensor):
    return grad * tensor


@dot.derivative("tensor")
def _(F, grad, self):
    return grad * self


vdot = dot


@op("BmmBackward0", inputs=("self", "mat2"))
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
    _check_same_dtype("bmm", self, mat2)
    return np.matmul(self, mat2)


@bmm.derivative("self")
def _(F, grad, mat2):
    return F.bmm(grad, F.transpose(mat2, 1, 2))


@bmm.derivative("mat2")
def _(F, grad, self):
    return F.bmm(F.transpose(self, 1, 2), grad)


@op("AddmmBackward0", inputs=("self", "mat1", "mat2"), promote=ARITH)
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``."""
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " + str(mat1.ndim) + "-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_dims(mat1)} and {_dims(mat2)})"
        )
    product = mat1 @ mat2
    if alpha != 1:
        product *= alpha
    if beta == 0:
        return product
    if beta != 1:
        return product + beta * self
    product += self
    return product


@addmm.derivative("self")
def _(F, grad, beta):
    return grad if beta == 1 else grad * beta


@addmm.derivative("mat1")
def _(F, grad, mat2, alpha):
    g = F.mm(grad, F.t(mat2))
    return g if alpha == 1 else g * alpha


@addmm.derivative("mat2")
def _(F, grad, mat1, mat2_strides, alpha):
    g = F.t(F.mm(F.t(grad), mat1)) if _column_major(mat2_strides) else F.mm(F.t(mat1), grad)
    return g if alpha == 1 else g * alpha


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors (as PyTorch: ``input.view(-1, 1) * vec2``)."""
    if input._data.ndim != 1 or vec2._data.ndim != 1:
        raise RuntimeError(
            f"outer: Expected 1-D argument self, but got {input._data.ndim}-D"
        )
    return reshape(input, (-1, 1)) * vec2


ger = outer


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum-product over the last dimension."""
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    if input._data.ndim == 1 and other._data.ndim == 1:
        return dot(input, other)
    return matmul(input, transpose(other, -1, -2))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with PyTorch's rules for every rank (1-D vectors, batches broadcast).

    Decomposed as PyTorch decomposes it, so the graph has PyTorch's nodes: dot, mv, mm with
    unsqueeze/squeeze for vectors, folding of batch dimensions into rows when only one side is
    batched, and expand + bmm when both are.

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
    if da >= 3 and db <= 2:
        return _fold_batch_left(input, other)
    if da == 1:
        return _fold_batch_right_vector(input, other)
    if da == 2:
        # (n, m) @ (..., m, p) is computed as ((..., m, p).mT @ (n, m).mT).mT
        return contiguous(transpose(matmul(transpose(other, -1, -2), t(input)), -1, -2))
    return _batched(input, other)


@op("SqueezeBackward4", view=True)
def _squeeze_vector_product(self):
    return np.squeeze(self, axis=0)


@_squeeze_vector_product.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


def _fold_batch_left(input: Tensor, other: Tensor) -> Tensor:
    """(..., n, m) @ (m[, p]): fold the batch into rows, one mm (or mv)."""
    a_shape = input._data.shape
    folded = reshape(input, (-1, a_shape[-1]))
    if other._data.ndim == 2:
        return _unsafe_view(mm(folded, other), a_shape[:-1] + (other._data.shape[-1],))
    return _unsafe_view(mv(folded, other), a_shape[:-1])


def _fold_batch_right_vector(input: Tensor, other: Tensor) -> Tensor:
    """(m) @ (..., m, p): fold the transposed batch operand into rows, one mv."""
    b_shape = other._data.shape
    folded = reshape(transpose(other, -1, -2), (-1, b_shape[-2]))
    return _unsafe_view(mv(folded, input), b_shape[:-2] + (b_shape[-1],))


def _batched(input: Tensor, other: Tensor) -> Tensor:
    """Both sides have batch dimensions: broadcast them, then one bmm."""
    a_shape, b_shape = input._data.shape, other._data.shape
    n, m = a_shape[-2:]
    m2, p = b_shape[-2:]
    try:
        batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({a_shape[-3]}) must match the size of tensor b "
            f"({b_shape[-3]}) at non-singleton dimension 0"
        ) from None
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if m != m2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m}] but "
            f"got: [{count}, {m2}]."
        )
    left = reshape(_expand(input, batch + (n, m)), (count, n, m))
    right = reshape(_expand(other, batch + (m, p)), (count, m, p))
    return _unsafe_view(bmm(left, right), batch + (n, p))


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, as PyTorch computes it (``addmm`` when there is a bias)."""
    if bias is None:
        return matmul(input, t(weight))
    if input._data.ndim == 2:
        return addmm(bias, input, t(weight))
    lead = input._data.shape[:-1]
    folded = reshape(input, (-1, input._data.shape[-1]))
    return _view(addmm(bias, folded, t(weight)), lead + (weight._data.shape[0],))
