"""Window functions for spectral analysis: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``.

Computed step by step in the requested dtype as PyTorch's kernels are (an ``arange`` scaled,
then ``cos`` ...), so values agree to the last place but for ``cos``'s own rounding (PyTorch
uses SLEEF's, within an ulp of NumPy's). ``periodic=True`` (the default) computes a window of
``window_length + 1`` points and drops the last, for use with the FFT.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, make_tensor
from .creation import (
    _check_device,
    _check_pin_memory,
    _check_requires_grad,
    _resolve_dtype,
    _tensor_options,
)

__all__ = [
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
]


def _length(name: str, window_length: Any) -> int:
    if not isinstance(window_length, int | np.integer) or isinstance(window_length, bool):
        raise TypeError(
            f"{name}(): argument 'window_length' (position 1) must be int, not "
            f"{type(window_length).__name__}"
        )
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    return int(window_length)


def _options(name: str, dtype: Any, device: Any, requires_grad: Any) -> tuple[np.dtype, bool]:
    _check_device(device)
    requires_grad = _check_requires_grad(name, requires_grad)
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if d.np.kind == "c":
        raise _dtype.no_kernel("arange_cpu", d.np)
    if d.np.kind not in "fV":
        options = _tensor_options(d).replace("layout=Strided", "layout=Strided (default)")
        options = options.replace(
            "requires_grad=false (default), pinned_memory=false (default)",
            "requires_grad=false (default), pinned_memory=false",
        )
        raise RuntimeError(f"{name} expects floating point dtypes, got: {options}")
    return d.np, requires_grad


def _window(
    name: str,
    window_length: Any,
    periodic: bool,
    dtype: Any,
    device: Any,
    requires_grad: Any,
    points: Any,
) -> Tensor:
    """The window of ``points(n, np_dtype)`` (``n`` samples, symmetric) with PyTorch's
    checks, lengths 0 and 1, and ``periodic`` (one more point, the last dropped)."""
    n = _length(name, window_length)
    np_dtype, requires_grad = _options(name, dtype, device, requires_grad)
    # (half types step by step, as PyTorch's kernels; kaiser computes in float64 itself)
    work = np_dtype
    if n == 0:
        values = np.zeros(0, work)
    elif n == 1:
        values = np.ones(1, work)
    else:
        values = points(n + 1 if periodic else n, work)[:n]
    return make_tensor(np.ascontiguousarray(values.astype(np_dtype)), requires_grad)


def _cosine_sum(alpha: float, beta: float) -> Any:
    """``alpha - beta * cos(2 pi k / (n - 1))`` (Hann: 0.5/0.5, Hamming: 0.54/0.46)."""

    def points(n: int, work: np.dtype) -> np.ndarray:
        angles = np.arange(n, dtype=work) * work.type(2 * math.pi / (n - 1))
        return np.cos(angles) * work.type(-beta) + work.type(alpha)

    return points


def _fixed_window(name: str, points: Any, doc: str) -> Any:
    """``torch.<name>``: the window of ``points`` (no parameters of its own), with PyTorch's
    signature."""

    def window(
        window_length: int,
        periodic: bool = True,
        *,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
    ) -> Tensor:
        _check_pin_memory(pin_memory)
        return _window(name, window_length, periodic, dtype, device, requires_grad, points)

    window.__name__ = window.__qualname__ = name
    window.__doc__ = doc
    return window


hann_window = _fixed_window(
    "hann_window",
    _cosine_sum(0.5, 0.5),
    """The Hann window: ``0.5 - 0.5 cos(2 pi k / (N - 1))``.

    Example:
        >>> import chainrule as torch
        >>> torch.hann_window(4, periodic=False)
        tensor([0.0000, 0.7500, 0.7500, 0.0000])
    """,
)


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Hamming window: ``alpha - beta cos(2 pi k / (N - 1))``."""
    _check_pin_memory(pin_memory)
    return _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
        _cosine_sum(alpha, beta),
    )


def _blackman(n: int, work: np.dtype) -> np.ndarray:
    angles = np.arange(n, dtype=work) * work.type(math.pi / (n - 1))
    return (
        np.cos(angles * work.type(4)) * work.type(0.08)
        - np.cos(angles * work.type(2)) * work.type(0.5)
        + work.type(0.42)
    )


blackman_window = _fixed_window(
    "blackman_window",
    _blackman,
    "The Blackman window: ``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``.",
)


def _bartlett(n: int, work: np.dtype) -> np.ndarray:
    values = np.arange(n, dtype=work) * work.type(2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    values[half:] = values[half:] * work.type(-1) + work.type(2)
    return values


bartlett_window = _fixed_window(
    "bartlett_window", _bartlett, "The Bartlett (triangular) window: ``1 - |2k / (N - 1) - 1|``."
)


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The Kaiser window: ``I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta)``."""
    _check_pin_memory(pin_memory)

    def points(n: int, work: np.dtype) -> np.ndarray:
        middle = (n - 1) / 2.0
        k = np.arange(n, dtype=np.float64)
        inside = np.maximum(1.0 - ((k - middle) / middle) ** 2, 0.0)
        return (np.i0(beta * np.sqrt(inside)) / np.i0(beta)).astype(work)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, points)
