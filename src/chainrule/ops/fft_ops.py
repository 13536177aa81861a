"""The three FFT kernels of ``torch.fft``, as ATen's: complex-to-complex (``_fft_c2c``),
real-to-complex (``_fft_r2c``) and complex-to-real (``_fft_c2r``), with PyTorch's nodes
(``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``) and derivative formulas.

Each transforms over the dims ``dim`` (a tuple), unnormalised (NumPy's pocketfft), then scales
by ATen's ``normalization``: 0 none, 1 ``1/sqrt(n)``, 2 ``1/n``, ``n`` the number of points of
the signal (the input's sizes over ``dim`` for c2c and r2c, the output's for c2r). The public
functions (:mod:`chainrule.fft`) pick the kernel, the direction and the normalisation.

The derivatives are the adjoint transforms (PyTorch's ``derivatives.yaml``; gradients of real
losses in the conjugate Wirtinger convention): c2c's is c2c the other way; r2c's is the real
part of the inverse c2c of the gradient, zero-padded to the full length if one-sided; c2r's is
the one-sided r2c of the gradient with the frequencies that stand for two (all but the first
and, for an even length, the last) doubled. They are written with the kernels themselves,
``constant_pad_nd``, ``real`` and ``+``, so second derivatives come from the same table.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._registry import allow_complex, op
from .nn_ops.padding import constant_pad_nd

__all__: list[str] = []

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def _scale(out: np.ndarray, normalization: int, points: int) -> np.ndarray:
    """``out`` times ATen's normalisation factor, a real number: the real and imaginary parts
    are scaled apart (a complex product would turn an infinite part times the factor's zero
    imaginary part into NaN, which PyTorch's kernels do not)."""
    if normalization == 0:
        return out
    factor = 1 / math.sqrt(points) if normalization == 1 else 1 / points
    if out.dtype.kind != "c":
        return out * factor
    scaled = np.empty_like(out)
    scaled.real = out.real * factor
    scaled.imag = out.imag * factor
    return scaled


def _points(shape: tuple[int, ...], dim: tuple[int, ...]) -> int:
    return math.prod(shape[d] for d in dim)


def _laid_out(out: np.ndarray, self: np.ndarray, dim: tuple[int, ...],
              keep_last: bool) -> np.ndarray:
    """``out`` in ATen's layout for an FFT of ``self``: the batch dims outermost, by decreasing
    stride of the input, then the transformed dims, by decreasing stride too (for r2c and c2r
    the halved last dim stays innermost), dense in that order."""
    strides = self.strides
    batch = sorted((d for d in range(self.ndim) if d not in dim), key=lambda d: -strides[d])
    head = dim[:-1] if keep_last else dim
    transformed = sorted(head, key=lambda d: -strides[d]) + ([dim[-1]] if keep_last else [])
    order = batch + transformed
    dense = out.transpose(order).copy()  # (C order; a 0-d result stays 0-d)
    return dense.transpose(np.argsort(order))


def pad_along(ndim: int, d: int, before: int, after: int) -> tuple[int, ...]:
    """``constant_pad_nd``'s last-dim-first widths that pad (negative: crop) dim ``d`` only."""
    pad = [0] * (2 * (ndim - d))
    pad[-2], pad[-1] = before, after
    return tuple(pad)


@op("FftC2CBackward0", complex_ok=True)
def fft_c2c(self, dim, normalization, forward):
    """The complex DFT over ``dim`` (``forward``: ``exp(-2 pi i jk / n)``), normalised."""
    if not dim:
        out = self.copy()
    elif forward:
        out = np.fft.fftn(self, axes=dim)
    else:
        out = np.fft.ifftn(self, axes=dim, norm="forward")
    out = _scale(out, normalization, _points(self.shape, dim)).astype(self.dtype, copy=False)
    return _laid_out(out, self, dim, keep_last=False)


@fft_c2c.derivative("self")
def _(ops, grad, dim, normalization, forward):
    return ops.fft_c2c(grad, dim, normalization, not forward)


@op("FftR2CBackward0", complex_ok=True)
def fft_r2c(self, dim, normalization, onesided):
    """The DFT of a real signal over ``dim``; ``onesided``: only the ``n // 2 + 1``
    non-negative frequencies of the last dim of ``dim``."""
    out = np.fft.rfftn(self, axes=dim) if onesided else np.fft.fftn(self, axes=dim)
    out = _scale(out, normalization, _points(self.shape, dim))
    return _laid_out(out.astype(_COMPLEX_OF[self.dtype], copy=False), self, dim, keep_last=True)


@fft_r2c.derivative("self")
def _(ops, grad, self, dim, normalization, onesided):
    # PyTorch's fft_r2c_backward: real(c2c(grad padded to the full length, inverse))
    last = dim[-1]
    missing = self.shape[last] - grad.shape[last]
    if onesided and missing > 0:
        grad = ops.constant_pad_nd(grad, pad_along(grad.ndim, last, 0, missing), 0)
    return ops.real(ops.fft_c2c(grad, dim, normalization, False))


@op("FftC2RBackward0", complex_ok=True)
def fft_c2r(self, dim, normalization, last_dim_size):
    """The real inverse DFT over ``dim`` of a one-sided (Hermitian) spectrum: a real signal of
    ``last_dim_size`` points along the last dim of ``dim``."""
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = np.fft.irfftn(self, s=sizes, axes=dim, norm="forward")
    out = _scale(out, normalization, math.prod(sizes))
    return _laid_out(out.astype(self.real.dtype, copy=False), self, dim, keep_last=True)


@fft_c2r.derivative("self")
def _(ops, grad, dim, normalization):
    # PyTorch's fft_c2r_backward: r2c(grad) one-sided, the frequencies 1 .. n - m doubled
    gradient = ops.fft_r2c(grad, dim, normalization, True)
    last = dim[-1]
    half = gradient.shape[last]
    doubled = grad.shape[last] - half
    if doubled > 0:
        ndim = gradient.ndim
        middle = ops.constant_pad_nd(gradient, pad_along(ndim, last, -1, doubled + 1 - half), 0)
        gradient = gradient + ops.constant_pad_nd(
            middle, pad_along(ndim, last, 1, half - 1 - doubled), 0)
    return gradient


# Padding and cropping (the transforms' ``n``/``s`` and the one-sided gradients) move complex
# values as they are: PyTorch's derivative, a crop or pad of the gradient, holds for them.
allow_complex(constant_pad_nd)

# Ops the derivatives of other ops call through ``ops`` (see ops/__init__.py).
PRIMITIVES: dict[str, Any] = {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
