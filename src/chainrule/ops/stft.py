"""The short-time Fourier transform and its inverse: ``stft`` and ``istft`` (also Tensor
methods), composed of the op table's ops as PyTorch composes them, so their graphs, gradients
(complex ones included) and double backward are PyTorch's.

``stft``: the signal, padded by ``n_fft // 2`` on both sides when ``center``, cut into frames of
``n_fft`` samples every ``hop_length`` (a strided view), each frame times the window (zero-padded
to ``n_fft`` on both sides), then a DFT per frame: ``(B?, freq, frames)``.

``istft``: the inverse DFT of each frame, times the window, the frames overlapped and added
(``unfold_backward``), divided by the overlapped squared window (its envelope), and trimmed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype
from .._frames import user_stacklevel
from .._tensor import Tensor
from ._registry import tensor_method
from .complex_ops import view_as_complex, view_as_real
from .fft_ops import fft_c2c, fft_c2r, fft_r2c
from .nn_ops.padding import constant_pad_nd, pad
from .rearranging import _unfold_backward
from .shape import _slice

__all__ = ["stft", "istft"]

_BY_ROOT_N, _BY_N, _NONE = 1, 2, 0
_TRIGGERED = (
    " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:{}.)"
)
_WARNED: set[str] = set()  # (PyTorch's TORCH_WARN_ONCE: once per process)

_STFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`." + _TRIGGERED.format(835)
)
_STFT_REAL_OUTPUT = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format." + _TRIGGERED.format(874)
)
_ISTFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
    + _TRIGGERED.format(1035)
)
_ISTFT_PADDED = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings." + _TRIGGERED.format(1199)
)


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


def _type_repr(t: Tensor) -> str:
    """How PyTorch's messages print a tensor's type: ``torch.FloatTensor``, or
    ``CPUComplexFloatType`` for complex ones."""
    name = SCALAR_TYPE_NAMES[from_numpy_dtype(t._data.dtype)]
    return f"CPU{name}Type" if t._data.dtype.kind == "c" else f"torch.{name}Tensor"


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _optional_flag(value: bool | None) -> str:
    return "None" if value is None else str(int(bool(value)))


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{_type_repr(window)}{{{_sizes(window)}}}"


def _check_fft_type(t: Tensor) -> None:
    """PyTorch's FFT kernels (MKL's) take single and double precision only."""
    if t._data.dtype.kind not in "fc" or t._data.dtype == np.float16:
        name = SCALAR_TYPE_NAMES[from_numpy_dtype(t._data.dtype)]
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {name}")


def _centred_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Any:
    """The window zero-padded to ``n_fft`` on both sides (None: no window, all ones)."""
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:
        window = like.new_ones(
            win_length, dtype=like.dtype if like.dtype.is_floating_point else None
        )
    return constant_pad_nd(window, (left, n_fft - win_length - left), 0)


def _stft(
    self: Tensor,
    n_fft: int,
    hop_length: int | None,
    win_length: int | None,
    window: Tensor | None,
    normalized: bool,
    onesided: bool | None,
    return_complex: bool | None,
    align_to_window: bool | None,
) -> Tensor:
    """``torch.stft`` without the centring (``_VF.stft``)."""
    window_complex = window is not None and window._data.dtype.kind == "c"
    if return_complex is None:
        if not (self._data.dtype.kind == "c" or window_complex):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if window is None:
        _warn_once(_STFT_NO_WINDOW)
    if not return_complex:
        _warn_once(_STFT_REAL_OUTPUT)
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    where = (
        f"stft({_type_repr(self)}{_sizes(self)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_repr(window)}, normalized={int(bool(normalized))}, "
        f"onesided={_optional_flag(onesided)}, return_complex={int(bool(return_complex))}, "
        f"align_to_window={_optional_flag(align_to_window)}) : "
    )
    if self._data.dtype.kind not in "fcV":
        raise RuntimeError(where + "expected a tensor of floating point or complex values")
    if not 1 <= self.dim() <= 2:
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    signal = self.unsqueeze(0) if self.dim() == 1 else self
    batch, length = signal.shape
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            where + f"expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {_sizes(window)}"
        )
    full_window = _centred_window(window, win, n_fft, signal)
    if align_to_window and win < n_fft:
        # (PyTorch's: the signal zero-padded by the window's padding on both sides, so that
        # frame t's window starts at t * hop, and as many frames as windows fit the signal)
        left = (n_fft - win) // 2
        signal = constant_pad_nd(signal, (left, left), 0)
        frames = 1 + (length - win) // hop
    else:
        frames = 1 + (length - n_fft) // hop
    strides = signal.stride()
    framed = signal.as_strided(
        (batch, frames, n_fft),
        (strides[0], hop * strides[1], strides[1]),
        signal.storage_offset(),
    )
    if full_window is not None:
        framed = framed * full_window
    _check_fft_type(framed)
    complex_fft = framed._data.dtype.kind == "c"
    one_sided = (not complex_fft) if onesided is None else bool(onesided)
    normalization = _BY_ROOT_N if normalized else _NONE
    if complex_fft:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = fft_c2c(framed, (2,), normalization, True)
    else:
        out = fft_r2c(framed, (2,), normalization, one_sided)
    out.transpose_(1, 2)
    if self.dim() == 1:
        out.squeeze_(0)
    return out if return_complex else view_as_real(out)


@tensor_method
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """The short-time Fourier transform of ``input`` (``(L,)`` or ``(B, L)``): the DFT of
    frames of ``n_fft`` samples taken every ``hop_length`` (default ``n_fft // 4``), times
    ``window`` (``win_length`` samples, zero-padded to ``n_fft``; default: none); ``center``
    pads the signal by ``n_fft // 2`` (``pad_mode``) so that frame ``t`` is centred at
    ``t * hop_length``. ``return_complex`` must be given for a real input.

    Example:
        >>> import chainrule as torch
        >>> torch.stft(torch.ones(8), 4, window=torch.ones(4), return_complex=True)[:, 0]
        tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        half = int(n_fft // 2)
        input = pad(input.view(extended), [half, half], pad_mode)
        input = input.view(input.shape[-signal_dim:] if signal_dim else ())
    return _stft(
        input,
        n_fft,
        hop_length,
        win_length,
        window,
        normalized,
        onesided,
        return_complex,
        align_to_window,
    )


@tensor_method
def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """The inverse of :func:`stft` (its complex output, ``(B?, freq, frames)``): each frame's
    inverse DFT times ``window``, overlapped and added, divided by the overlapped squared
    window; ``length`` trims (or zero-pads) the signal.

    Example:
        >>> import chainrule as torch
        >>> x = torch.arange(8.0)
        >>> spectrum = torch.stft(x, 4, window=torch.hann_window(4), return_complex=True)
        >>> torch.istft(spectrum, 4, window=torch.hann_window(4))
        tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if window is None:
        _warn_once(_ISTFT_NO_WINDOW)
    if input._data.dtype.kind != "c":
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    where = (
        f"istft({_type_repr(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_repr(window)}, center={int(bool(center))}, "
        f"normalized={int(bool(normalized))}, onesided={_optional_flag(onesided)}, "
        f"length={'None' if length is None else length}, "
        f"return_complex={int(bool(return_complex))}) "
    )
    real = view_as_real(input.resolve_conj())
    real_dim = real.dim()
    if input.numel() == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if real_dim not in (3, 4):
        raise RuntimeError(
            where + f": expected a tensor with 3 or 4 dimensions, but got {real_dim}"
        )
    n_frames, fft_size = real.shape[-2], real.shape[-3]
    expected_length = n_fft + hop * (n_frames - 1)
    one_sided = fft_size != n_fft if onesided is None else bool(onesided)
    if one_sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(
            where + ": expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}"
        )
    if not one_sided and n_fft != fft_size:
        raise RuntimeError(
            where + ": expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {fft_size}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            where + ": Invalid window shape. window has to be 1D and length of `win_length`"
        )
    full_window = window if window is not None else real.new_ones(win)
    if win != n_fft:
        left = (n_fft - win) // 2
        full_window = constant_pad_nd(full_window, (left, n_fft - win - left), 0)
    if real_dim == 3:
        real = real.unsqueeze(0)
    frames = view_as_complex(real.transpose(1, 2))  # (channels, n_frames, fft_size)
    normalization = _BY_ROOT_N if normalized else _BY_N
    _check_fft_type(frames)
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft_c2c(frames, (2,), normalization, False)
    else:
        if window is not None and window._data.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one_sided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = fft_c2r(frames, (2,), normalization, n_fft)
    weighted = frames * full_window.view(1, 1, n_fft)
    channels = weighted.shape[0]
    signal = _unfold_backward(weighted, (channels, expected_length), 1, n_fft, hop)
    squared = full_window.pow(2).expand(1, n_frames, n_fft)
    envelope = _unfold_backward(squared, (1, expected_length), 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + int(length)
    elif center:
        end = -(n_fft // 2)
    else:
        end = expected_length
    signal = _slice(signal, 1, start, end, 1)
    envelope = _slice(envelope, 1, start, end, 1)
    too_small = bool((envelope.abs().min() < 1e-11).item())
    if too_small:
        raise RuntimeError(where + "window overlap add min: 1\n[ CPUBoolType{} ]")
    signal = signal / envelope
    if real_dim == 3:
        signal = signal.squeeze(0)
    if end > expected_length:
        _warn_once(_ISTFT_PADDED)
        signal = constant_pad_nd(signal, (0, end - expected_length), 0)
    return signal
