"""``torch.fft``: discrete Fourier transforms, with PyTorch's values, dtypes, arguments (``n``/
``s``, ``dim``, ``norm`` = ``"backward"``/``"ortho"``/``"forward"``), errors and gradients.

Each transform follows PyTorch's own decomposition (ATen's ``SpectralOps.cpp``) into three
kernels with their nodes (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``; see
:mod:`chainrule.ops.fft_ops`, whose derivatives are the adjoint transforms): the input resized
along the transformed dims (zero padding or cutting from 0), integers promoted to the default
float dtype, real input made complex where a complex transform needs it (``ToCopyBackward0``),
conjugations where PyTorch has them (``ifft`` of a real tensor is ``conj(r2c(x))``, a
conjugate view), float32 giving complex64 and float64 complex128 (half precision is refused, as
PyTorch's CPU kernels refuse it). Gradients of any order flow through them, for real and
complex inputs, as PyTorch's. ``fftshift``/``ifftshift`` are ``roll``, as PyTorch's.

Example:
    >>> import chainrule as torch
    >>> torch.fft.fft(torch.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _dtype, _overrides
from ._tensor import Tensor
from ._tensor import wrap_dim as _wrap_dim
from .ops.conjugate import conj as _conj
from .ops.creation import arange as _arange
from .ops.fft_ops import fft_c2c as _c2c
from .ops.fft_ops import fft_c2r as _c2r
from .ops.fft_ops import fft_r2c as _r2c
from .ops.nn_ops.padding import constant_pad_nd as _constant_pad_nd
from .ops.shape import roll as _roll

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = (None, "backward", "ortho", "forward")
_COMPLEX_OF = {np.dtype(np.float32): _dtype.complex64, np.dtype(np.float64): _dtype.complex128}


def _type_name(dtype: np.dtype) -> str:
    return _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(dtype)]


def _promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """PyTorch's ``_promote_type_fft``: integers to the default float dtype; float32/float64
    (or complex) only; complex when ``require_complex`` (a ``ToCopyBackward0``)."""
    data = x._data
    if data.dtype.kind == "c":
        return x
    if data.dtype.kind in "biu":
        x = x.to(_dtype.get_default_dtype())
        data = x._data
    if data.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {_type_name(data.dtype)}")
    return x.to(_COMPLEX_OF[data.dtype]) if require_complex else x


def _mode(norm: str | None, forward: bool) -> int:
    """ATen's normalization of a transform in direction ``forward``: 0 none, 1 by root n, 2 by
    n (``"backward"``, the default, normalises the inverse transforms)."""
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if norm == "ortho":
        return 1
    normalize = (not forward and norm in (None, "backward")) or (forward and norm == "forward")
    return 2 if normalize else 0


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """``x`` with ``x.shape[dims[i]] == sizes[i]``: zero-padded at the end or cut from 0 (one
    ``constant_pad_nd``, whose negative widths crop)."""
    ndim = x._data.ndim
    widths = [0] * ndim
    for d, size in zip(dims, sizes, strict=True):
        widths[d] = size - x._data.shape[d]
    if not any(widths):
        return x
    first = min(d for d in range(ndim) if widths[d])
    pad: list[int] = []
    for d in range(ndim - 1, first - 1, -1):
        pad += [0, widths[d]]
    return _constant_pad_nd(x, tuple(pad), 0)


def _one_dim(x: np.ndarray, dim: int) -> int:
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.ndim)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# ----------------------------------------------------------------------------------------------
# One-dimensional transforms


def _fft_r2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None,
             forward: bool, onesided: bool) -> Tensor:
    if input._data.dtype.kind == "c":
        raise RuntimeError(
            f"{name} expects a real input tensor, but got {_type_name(input._data.dtype)}")
    x = _promote(input)
    d = _one_dim(x._data, dim)
    size = n if n is not None else x._data.shape[d]
    _check_points(size)
    mode = _mode(norm, forward)
    out = _r2c(_resize(x, (d,), (size,)), (d,), mode, onesided)
    return out if forward else _conj(out)


def _fft_c2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None,
             forward: bool) -> Tensor:
    d = _one_dim(input._data, dim)
    size = n if n is not None else input._data.shape[d]
    _check_points(size)
    mode = _mode(norm, forward)
    return _c2c(_resize(input, (d,), (size,)), (d,), mode, forward)


def _fft_c2r(name: str, input: Tensor, n: int | None, dim: int, norm: str | None,
             forward: bool) -> Tensor:
    x = _promote(input, require_complex=True)
    d = _one_dim(x._data, dim)
    last = n if n is not None else 2 * (x._data.shape[d] - 1)
    _check_points(last)
    mode = _mode(norm, forward)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    if forward:
        x = _conj(x)
    return _c2r(x, (d,), mode, last)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (``n`` points:
    zero-padded or trimmed).

    Example:
        >>> import chainrule as torch
        >>> torch.fft.fft(torch.tensor([1.0, 2.0]))
        tensor([ 3.+0.j, -1.+0.j])
    """
    if input._data.dtype.kind == "c":
        return _fft_c2c("fft", input, n, dim, norm, forward=True)
    return _fft_r2c("fft", input, n, dim, norm, forward=True, onesided=False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft` (normalised by ``1/n`` by default)."""
    if input._data.dtype.kind == "c":
        return _fft_c2c("ifft", input, n, dim, norm, forward=False)
    return _fft_r2c("ifft", input, n, dim, norm, forward=False, onesided=False)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The FFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    return _fft_r2c("rfft", input, n, dim, norm, forward=True, onesided=True)


def irfft(input: Tensor, n: int | None = None, dim: int = -1,
          norm: str | None = None) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 (m - 1)``)."""
    return _fft_c2r("irfft", input, n, dim, norm, forward=False)


def hfft(input: Tensor, n: int | None = None, dim: int = -1,
         norm: str | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real result."""
    return _fft_c2r("hfft", input, n, dim, norm, forward=True)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1,
          norm: str | None = None) -> Tensor:
    """The inverse of :func:`hfft`: the first half of the inverse FFT of a real signal."""
    return _fft_r2c("ihfft", input, n, dim, norm, forward=False, onesided=True)


# ----------------------------------------------------------------------------------------------
# n-dimensional transforms


def _shape_and_dims(x: np.ndarray, s: Any, dim: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """PyTorch's ``_canonicalize_fft_shape_and_dim_args`` (a 0-d input has no dim to
    transform)."""
    ndim = x.ndim
    dims: tuple[int, ...] = ()
    if dim is not None:
        if not isinstance(dim, Sequence):
            dim = (dim,)
        dims = tuple(_one_dim(x, int(d)) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if not isinstance(s, Sequence):
            s = (s,)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(int(n) if n != -1 else x.shape[d] for n, d in zip(s, dims, strict=True))
    elif dim is None:
        dims = tuple(range(ndim))
        shape = tuple(x.shape)
    else:
        shape = tuple(x.shape[d] for d in dims)
    for n in shape:
        _check_points(n)
    return shape, dims


def _fftn_c2c(name: str, input: Tensor, s: Any, dim: Any, norm: str | None,
              forward: bool) -> Tensor:
    shape, dims = _shape_and_dims(input._data, s, dim)
    x = _promote(input, require_complex=True)
    mode = _mode(norm, forward)
    return _c2c(_resize(x, dims, shape), dims, mode, forward)


def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The n-dimensional FFT over ``dim`` (default: all dims, or the last ``len(s)``)."""
    return _fftn_c2c("fftn", input, s, dim, norm, forward=True)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of :func:`fftn`."""
    return _fftn_c2c("ifftn", input, s, dim, norm, forward=False)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`fftn` over the last two dims."""
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`ifftn` over the last two dims."""
    return ifftn(input, s, dim, norm)


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The n-dimensional FFT of a real signal, one-sided in the last transformed dim."""
    data = input._data
    if data.dtype.kind == "c":
        raise RuntimeError(
            f"rfftn expects a real-valued input tensor, but got {_type_name(data.dtype)}")
    shape, dims = _shape_and_dims(data, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _promote(input)
    mode = _mode(norm, True)
    return _r2c(_resize(x, dims, shape), dims, mode, True)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`rfftn` over the last two dims."""
    return rfftn(input, s, dim, norm)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of :func:`hfftn`: the one-sided inverse FFT of a real signal (r2c over the
    last dim, conjugated, then the inverse c2c over the others)."""
    data = input._data
    shape, dims = _shape_and_dims(data, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _promote(input)  # (a complex input passes here, and is refused after the norm)
    mode = _mode(norm, False)
    if data.dtype.kind == "c":
        raise RuntimeError(
            f"Only supports floating-point dtypes, but found: {_type_name(data.dtype)}")
    half = _conj(_r2c(_resize(x, dims, shape), dims[-1:], mode, True))
    if len(dims) == 1:
        return half
    return _c2c(half.resolve_conj(), dims[:-1], mode, False)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`ihfftn` over the last two dims."""
    return ihfftn(input, s, dim, norm)


def _c2r_shape(name: str, x: np.ndarray, s: Any, dim: Any) -> tuple[tuple[int, ...],
                                                                     tuple[int, ...], int]:
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or s[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_points(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The inverse of :func:`rfftn`: a real signal (last dim ``2 (m - 1)`` by default)."""
    shape, dims, last = _c2r_shape("irfftn", input._data, s, dim)
    x = _promote(input, require_complex=True)
    mode = _mode(norm, False)
    return _c2r(_resize(x, dims, shape), dims, mode, last)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`irfftn` over the last two dims."""
    return irfftn(input, s, dim, norm)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The n-dimensional FFT of a Hermitian-symmetric signal given by its first half along the
    last transformed dim: a real result (c2c over the other dims, conjugated, then c2r)."""
    shape, dims, last = _c2r_shape("hfftn", input._data, s, dim)
    x = _promote(input, require_complex=True)
    mode = _mode(norm, True)
    x = _resize(x, dims, shape)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return _c2r(_conj(x), dims[-1:], mode, last)


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    """:func:`hfftn` over the last two dims."""
    return hfftn(input, s, dim, norm)


# ----------------------------------------------------------------------------------------------
# Helpers


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d n)``."""
    result = _arange(n, dtype=dtype if dtype is not None else _dtype.get_default_dtype())
    values = result._data
    values[(n + 1) // 2:] -= n
    result._data = values * (1.0 / (n * d))
    return result.requires_grad_(requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real FFT: ``[0, ..., n//2] / (d
    n)``."""
    result = _arange(n // 2 + 1, dtype=dtype if dtype is not None else _dtype.get_default_dtype())
    result._data = result._data * (1.0 / (n * d))
    return result.requires_grad_(requires_grad)


def _shift_dims(input: Tensor, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(input.dim()))
    if isinstance(dim, int):
        return (dim,)
    return tuple(dim)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero frequency to the centre: ``roll`` by ``size // 2`` along ``dim`` (all dims
    by default)."""
    dims = _shift_dims(input, dim)
    return _roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift`: ``roll`` by ``(size + 1) // 2`` along ``dim``."""
    dims = _shift_dims(input, dim)
    return _roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)


def _make_overridable() -> None:
    """The transforms check their arguments for ``__torch_function__`` overrides, as PyTorch's
    ``torch.fft`` functions do."""
    namespace = globals()
    for name in __all__:
        namespace[name] = _overrides.overridable(namespace[name])


_make_overridable()
