"""Complex numbers and their autograd: ``view_as_real``, ``view_as_complex``, ``.real``,
``.imag``, ``angle``, ``torch.complex``, ``torch.polar``, and the allowlist of complex autograd.

PyTorch's convention: the gradient of a real loss ``L`` with respect to a complex ``z = x + iy``
is the conjugate Wirtinger derivative, scaled so that it reads ``dL/dx + i dL/dy``; a complex
gradient that reaches a real input contributes its real part (``handle_r_to_c``, done once for
every op by the engine's cast). Only ops declared ``complex_ok`` record a node when an input or
the result is complex (``ops._dispatch.refuse_complex_gradient``): the ops whose formulas were
made PyTorch's for complex values (``conj`` where PyTorch's formulas have it), and below, the
views, reshapes and copies whose derivatives are linear with real coefficients and so need none.
Each is tested against PyTorch (tests/test_complex_autograd.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype
from .._tensor import Tensor
from ..autograd.node import type_name
from ._registry import FLOAT, allow_complex, op
from .conjugate import is_conj_tensor
from .copying import _to_copy, clone
from .indexing import (
    _alias,
    _gather,
    _gather_backward,
    _index,
    _index_backward,
    _index_put,
    _index_select,
    _index_select_backward,
    _masked_fill,
    _masked_fill_tensor,
    _masked_select,
    _masked_select_backward,
    _put,
    _scatter,
    _scatter_add,
    _scatter_value,
    _take,
    _take_backward,
)
from .rearranging import _unfold, _unfold_backward
from .reduction import _cumsum, _mean_all, _mean_dim, _sum_all, _sum_dim
from .shape import (
    _as_strided,
    _diag_copy,
    _diagonal_backward,
    _expand,
    _flip,
    _permute,
    _repeat,
    _reshape_alias,
    _roll,
    _select,
    _select_backward,
    _slice,
    _slice_backward,
    _split_many,
    _split_one,
    _split_with_sizes_many,
    _split_with_sizes_one,
    _squeeze_all,
    _squeeze_dim,
    _squeeze_dims,
    _unbind_many,
    _unbind_one,
    _unsafe_view,
    _view,
    diag_embed,
    diagonal,
    t,
    trace,
    transpose,
    tril,
    triu,
    unsqueeze,
)

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "angle", "complex", "polar"]

_COMPLEX_OF: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def _name(a: np.ndarray) -> str:
    return SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]


def _no_complex32(what: str) -> RuntimeError:
    return RuntimeError(
        f"{what}: chainrule has no complex32 (ComplexHalf) dtype, which PyTorch gives for "
        "float16 parts"
    )


# ----------------------------------------------------------------------------------------------
# view_as_real / view_as_complex


@op("ViewAsRealBackward0", view=True, complex_ok=True)
def _view_as_real(self):
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = self.real  # (a view with the complex array's strides)
    return np.lib.stride_tricks.as_strided(
        part, self.shape + (2,), self.strides + (part.itemsize,), writeable=True)


@_view_as_real.derivative("self")
def _(ops, grad):
    return ops.view_as_complex(ops.contiguous(grad))  # PyTorch: view_as_complex(grad.contiguous())


_VIEW_AS_REAL_CONJ = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor "
    "so you can view it as real, use self.resolve_conj(); however, be warned that the resulting "
    "tensor will NOT alias the original."
)


def view_as_real(input: Tensor) -> Tensor:
    """The complex ``input`` as a real tensor with a last dimension of 2 (real, imaginary): a
    view sharing its memory (``ViewAsRealBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.view_as_real(torch.tensor([1 + 2j]))
        tensor([[1., 2.]])
    """
    if isinstance(input, Tensor) and is_conj_tensor(input):
        raise RuntimeError(_VIEW_AS_REAL_CONJ)
    return _view_as_real(input)


def _check_view_as_complex(self: np.ndarray) -> None:
    if self.dtype not in _COMPLEX_OF and self.dtype != np.float16:
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {_name(self)}"
        )
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self.size == 0:  # (NumPy zeroes an empty array's strides)
        return
    if self.strides[-1] != self.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * self.itemsize) for s in self.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.dtype == np.float16:
        raise _no_complex32("view_as_complex")


@op("ViewAsComplexBackward0", view=True, complex_ok=True)
def _view_as_complex(self):
    _check_view_as_complex(self)
    if self.size == 0:
        return np.empty(self.shape[:-1], _COMPLEX_OF[self.dtype])
    return self.view(_COMPLEX_OF[self.dtype])[..., 0]


@_view_as_complex.derivative("self")
def _(ops, grad):
    # PyTorch: view_as_real(grad.contiguous().resolve_conj())
    return ops.view_as_real(ops.resolve_conj(ops.contiguous(grad)))


def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dimension is 2 (real, imaginary) as a complex view of it
    (``ViewAsComplexBackward0``)."""
    return _view_as_complex(input)


# ----------------------------------------------------------------------------------------------
# .real / .imag: PyTorch's select of view_as_real (SelectBackward0 <- ViewAsRealBackward0)


def _part(input: Tensor, index: int) -> Tensor:
    # (a conjugate view's values are conjugated already here: it is viewed as it is, where
    # PyTorch records a ConjBackward0 first that clears the bit; the gradients are the same)
    return _select(_view_as_real(input), input._data.ndim, index)


def real(input: Tensor) -> Tensor:
    """The real part of a complex tensor, as a view (a real tensor is returned as it is)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"real(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    if input._data.dtype.kind != "c":
        return input
    return _part(input, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, as a view (PyTorch's error for a real one)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"imag(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(input, 1)


def _set_part(getter: Any) -> Any:
    def setter(self: Tensor, value: Any) -> None:
        getter(self).copy_(value)

    return setter


setattr(Tensor, "real", property(real, _set_part(real), doc="The real part (a view)."))  # noqa: B010
setattr(Tensor, "imag", property(imag, _set_part(imag), doc="The imaginary part (a view)."))  # noqa: B010


# ----------------------------------------------------------------------------------------------
# angle


@op("AngleBackward0", promote=FLOAT, method=True, complex_ok=True)
def angle(self):
    """The argument of each complex element (``atan2(imag, real)``); of a real one, ``pi`` for
    negative numbers, 0 otherwise (NaN stays NaN)."""
    if self.dtype.kind == "c":
        return np.angle(self)
    out = np.where(self < 0, self.dtype.type(math.pi), self.dtype.type(0))
    return np.where(np.isnan(self), self, out)


@angle.derivative("self")
def _(ops, grad, self):
    # PyTorch's angle_backward: where(self == 0, 0, grad * self / |self|^2 * 1j) for complex
    # self, zeros for a real one.
    if not _is_complex(self):
        return ops.zeros_like(grad)
    magnitude = ops.abs(self)
    step = grad * self / (magnitude * magnitude) * 1j
    return ops.where(self == 0, ops.zeros_like(step), step)


def _is_complex(value: Any) -> bool:
    data = value._data if isinstance(value, Tensor) else value
    return bool(np.iscomplexobj(data))


# ----------------------------------------------------------------------------------------------
# torch.complex / torch.polar


def _check_parts(first: np.ndarray, second: np.ndarray) -> None:
    """PyTorch's checks of ``complex``/``polar``: two tensors of one floating dtype."""
    if first.dtype.kind != "f" or second.dtype.kind != "f" or first.dtype not in (
        *_COMPLEX_OF, np.float16
    ) or second.dtype not in (*_COMPLEX_OF, np.float16):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_name(first)} and {_name(second)}"
        )
    if first.dtype != second.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_name(first)} but got scalar type {_name(second)} "
            "for second argument"
        )
    if first.dtype == np.float16:
        raise _no_complex32("complex/polar")


def _assemble(re: Any, im: Any, dtype: np.dtype) -> np.ndarray:
    out: np.ndarray = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)),
                               dtype=_COMPLEX_OF[np.dtype(dtype)])
    out.real = re
    out.imag = im
    return out


@op("ComplexBackward0", inputs=("real", "imag"), tensor_only=("real", "imag"),
    check=_check_parts, complex_ok=True)
def complex(real, imag):  # noqa: A001 - torch-style name
    """A complex tensor from real and imaginary parts (of one floating dtype, broadcast).

    Example:
        >>> import chainrule as torch
        >>> torch.complex(torch.tensor([1.]), torch.tensor([2.]))
        tensor([1.+2.j])
    """
    return _assemble(real, imag, real.dtype)


@complex.derivative("real")
def _(ops, grad, real):
    return ops.real(grad)  # PyTorch: at::real(grad)


@complex.derivative("imag")
def _(ops, grad, imag):
    return ops.imag(grad)  # PyTorch: at::imag(grad)


@op("PolarBackward0", inputs=("abs", "angle"), tensor_only=("abs", "angle"),
    check=_check_parts, complex_ok=True)
def polar(abs, angle):  # noqa: A002 - torch-style names
    """A complex tensor from magnitudes and angles: ``abs * cos(angle) + i abs * sin(angle)``."""
    return _assemble(abs * np.cos(angle), abs * np.sin(angle), abs.dtype)


# PyTorch's polar_backward: grad_abs = real(conj(grad) * sgn(result)),
# grad_angle = real(conj(grad) * result * 1j).
@polar.derivative("abs")
def _(ops, grad, result):
    return ops.real(ops.conj(grad) * ops.sgn(result))


@polar.derivative("angle")
def _(ops, grad, result):
    return ops.real(ops.conj(grad) * (result * 1j))


# ----------------------------------------------------------------------------------------------
# The allowlist's linear ops: views, reshapes, copies, sums and means (their gradients move,
# copy, add or scale by real numbers the gradient's elements, so they are PyTorch's for complex
# values as they are). Each is tested against PyTorch on complex tensors.

allow_complex(
    clone, _to_copy, _view, _unsafe_view, _expand, _permute, t, transpose, unsqueeze,
    _squeeze_all, _squeeze_dim, _squeeze_dims, _select, _sum_all, _sum_dim, _mean_all,
    _mean_dim,
    # more views and reshapes, and their backward ops
    _alias, _reshape_alias, _as_strided, _slice, _slice_backward, _select_backward, diagonal,
    _diagonal_backward, _split_one, _split_many, _split_with_sizes_one, _split_with_sizes_many,
    _unbind_one, _unbind_many, _unfold, _unfold_backward,
    # copies that move, repeat or mask elements
    _flip, _roll, _repeat, tril, triu, diag_embed, _diag_copy, trace, _cumsum,
    # indexing, gathering and scattering (and their backward ops)
    _index, _index_backward, _index_put, _index_select, _index_select_backward, _gather,
    _gather_backward, _scatter, _scatter_value, _scatter_add, _take, _take_backward, _put,
    _masked_fill, _masked_fill_tensor, _masked_select, _masked_select_backward,
)
