"""Convolution: im2col with stride tricks and one batched BLAS product, and its two adjoints.

Three ops close the algebra, so gradients of any order are convolutions again (the way
PyTorch's ``convolution_backward`` and its double backward relate):

* ``convolution(x, W)``: the forward (``ConvolutionBackward0``); transposed convolution is the
  input-adjoint below run forward;
* ``convolution_backward_input(g, W)``: the adjoint in ``x``, ``<conv(x, W), g> = <x, B_in(g, W)>``;
* ``convolution_backward_weight(x, g)``: the adjoint in ``W``, ``<conv(x, W), g> = <W, B_w(x, g)>``.

Each is bilinear, so each derivative is one of the three with the roles swapped. The forward never
loops over pixels or samples: ``sliding_window_view`` exposes every receptive field as a view,
one copy lays the windows out as columns ``(N, groups, C/groups * prod(K), L)`` and one batched
matrix product with the weights gives the output directly in ``(N, C_out, *spatial)`` layout. The
input adjoint does the product the other way and adds the columns back window offset by window
offset (``prod(K)`` vectorised adds, 9 for a 3x3 kernel).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._dtype import CPP_TYPE_NAMES, from_numpy_dtype, no_kernel
from ..._tensor import Tensor
from .._registry import op
from ..complex_ops import view_as_real
from ..conjugate import resolve_conj
from ..shape import select, squeeze, unsqueeze
from ._common import ntuple, scalar_name, size_list
from .losses import _mul_scalar

__all__ = [
    "convolution", "convolution_backward_input", "convolution_backward_weight", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
]


# ----------------------------------------------------------------------------------------------
# Array kernels


def _pad_zeros(x: np.ndarray, padding: Sequence[int]) -> np.ndarray:
    """``x`` with ``padding[i]`` zeros on both sides of spatial dimension ``i``."""
    if not any(padding):
        return x
    shape = x.shape[:2] + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding, strict=True))
    out = np.zeros(shape, x.dtype)
    inner = (slice(None), slice(None)) + tuple(
        slice(p, p + s) for p, s in zip(padding, x.shape[2:], strict=True)
    )
    out[inner] = x
    return out


def _windows(xp: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
             dilation: Sequence[int], out_size: Sequence[int] | None = None) -> np.ndarray:
    """View ``(N, C, *out, *kernel)`` of every receptive field of the padded input ``xp``."""
    d = len(kernel)
    span = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation, strict=True))
    win = sliding_window_view(xp, span, axis=tuple(range(2, 2 + d)))
    if out_size is None:
        steps = tuple(slice(None, None, s) for s in stride)
    else:
        steps = tuple(
            slice(None, (o - 1) * s + 1, s) for o, s in zip(out_size, stride, strict=True)
        )
    taps = tuple(slice(None, None, dl) for dl in dilation)
    return win[(slice(None), slice(None)) + steps + taps]


def _columns(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
             padding: Sequence[int], dilation: Sequence[int], groups: int,
             out_size: Sequence[int] | None = None) -> tuple[np.ndarray, tuple[int, ...]]:
    """im2col: ``(N, groups, C/groups * prod(kernel), L)`` and the output's spatial size."""
    n, c = x.shape[:2]
    d = len(kernel)
    win = _windows(_pad_zeros(x, padding), kernel, stride, dilation, out_size)
    spatial = win.shape[2:2 + d]
    win = win.reshape((n, groups, c // groups) + win.shape[2:])
    # (N, g, Cg, *out, *K) -> (N, g, Cg, *K, *out): the copy that makes the columns.
    order = (0, 1, 2) + tuple(range(3 + d, 3 + 2 * d)) + tuple(range(3, 3 + d))
    cols = win.transpose(order).reshape(n, groups, -1, math.prod(spatial))
    return cols, spatial


def _conv_forward(x: np.ndarray, weight: np.ndarray, stride: Sequence[int],
                  padding: Sequence[int], dilation: Sequence[int], groups: int) -> np.ndarray:
    out_channels = weight.shape[0]
    kernel = weight.shape[2:]
    cols, spatial = _columns(x, kernel, stride, padding, dilation, groups)
    w = weight.reshape(groups, out_channels // groups, -1)
    out = np.matmul(w, cols)  # (N, g, O/g, L): one BLAS product per sample and group
    return out.reshape((x.shape[0], out_channels) + spatial)


def _conv_input_adjoint(grad: np.ndarray, weight: np.ndarray, input_size: Sequence[int],
                        stride: Sequence[int], padding: Sequence[int],
                        dilation: Sequence[int], groups: int) -> np.ndarray:
    """col2im of ``W^T g``: the gradient of a convolution with respect to its input.

    Column ``(c, k, o)`` goes to input position ``o * stride + k * dilation - padding``; for each
    kernel offset ``k`` that is one strided slice, clipped to the input (so no padded buffer).
    """
    n = grad.shape[0]
    out_channels, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    spatial = grad.shape[2:]
    g = np.ascontiguousarray(grad).reshape(n, groups, out_channels // groups, -1)
    w_t = weight.reshape(groups, out_channels // groups, -1).transpose(0, 2, 1)
    if grad.dtype == np.float16:
        # PyTorch's float16 kernel: a float32-accumulated product rounded to float16, then
        # col2im adding in float16, kernel offset after kernel offset.
        cols = np.matmul(w_t.astype(np.float32), g.astype(np.float32)).astype(np.float16)
    else:
        cols = np.matmul(w_t, g)
    cols = cols.reshape((n, groups * cg) + tuple(kernel) + tuple(spatial))
    out = np.zeros((n, groups * cg) + tuple(input_size), grad.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        source = []
        target = []
        for o, dl, s, p, size, length in zip(offset, dilation, stride, padding, spatial,
                                             input_size, strict=True):
            shift = o * dl - p  # input position of output 0 at this offset
            first = max(0, -(shift // s)) if shift < 0 else 0
            last = min(size, (length - 1 - shift) // s + 1)  # one past the last output
            if last <= first:
                break
            source.append(slice(first, last))
            target.append(slice(first * s + shift, (last - 1) * s + shift + 1, s))
        else:
            out[(slice(None), slice(None)) + tuple(target)] += (
                cols[(slice(None), slice(None)) + offset + tuple(source)]
            )
    return out


def _conv_weight_adjoint(x: np.ndarray, grad: np.ndarray, weight_size: Sequence[int],
                         stride: Sequence[int], padding: Sequence[int],
                         dilation: Sequence[int], groups: int) -> np.ndarray:
    """``sum_n g_n cols_n^T``: the gradient of a convolution with respect to its weight."""
    n = x.shape[0]
    out_channels = weight_size[0]
    kernel = weight_size[2:]
    cols, _ = _columns(x, kernel, stride, padding, dilation, groups, grad.shape[2:])
    g = np.ascontiguousarray(grad).reshape(n, groups, out_channels // groups, -1)
    if grad.dtype == np.float16:
        # PyTorch's float16 kernel: one float32-accumulated product per sample, added into
        # the float16 gradient sample after sample (each sum rounded to float16).
        per_sample = np.matmul(g.astype(np.float32), cols.transpose(0, 1, 3, 2).astype(
            np.float32))
        total = np.zeros(per_sample.shape[1:], np.float16)
        for sample in per_sample:
            total = (total.astype(np.float32) + sample).astype(np.float16)
        return total.reshape(tuple(weight_size))
    per_sample = np.matmul(g, cols.transpose(0, 1, 3, 2))  # (N, g, O/g, Cg*K)
    return per_sample.sum(axis=0).reshape(tuple(weight_size))


def _transposed_size(x_size: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
                     padding: Sequence[int], dilation: Sequence[int],
                     output_padding: Sequence[int]) -> tuple[int, ...]:
    return tuple(
        (s - 1) * st - 2 * p + dl * (k - 1) + op + 1
        for s, k, st, p, dl, op in zip(x_size, kernel, stride, padding, dilation, output_padding,
                                        strict=True)
    )


# ----------------------------------------------------------------------------------------------
# The op table


def _refuse_integral_kernel(dtype: np.dtype, d: int, transposed: bool,
                            dilation: tuple[int, ...]) -> None:
    """PyTorch's error where its CPU kernel for this convolution has no version for an integer
    or bool ``dtype``: int64 has them all; the other integer types no transposed or dilated
    kernel; bool none (each kernel named as PyTorch's)."""
    if dtype.kind not in "biu" or dtype == np.int64:
        return
    if transposed:
        kernel = "slow_conv_transpose3d_out_cpu" if d == 3 else "slow_conv_transpose2d_out_cpu"
    elif any(step > 1 for step in dilation):
        kernel = "slow_conv_dilated<>"
    elif dtype == np.bool_:
        kernel = "compute_columns3d" if d == 3 else "slow_conv2d_cpu"
    else:
        return
    raise no_kernel(kernel, dtype)


@op("ConvolutionBackward0", inputs=("input", "weight", "bias"))
def convolution(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,),
                transposed=False, output_padding=(0,), groups=1):
    """N-d convolution (or transposed convolution) of ``input`` with ``weight``, plus ``bias``."""
    d = weight.ndim - 2
    stride, padding, dilation = ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d)
    dtype = input.dtype
    _refuse_integral_kernel(dtype, d, transposed, dilation)
    if transposed:
        size = _transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                                ntuple(output_padding, d))
        if min(size) < 0:
            # PyTorch's reference kernel's message (1-d runs as 2-d there). (A size of 0 is its
            # error too in float64, not in float32, whose oneDNN kernel refuses negative sizes
            # with its own message.)
            lead = (1,) if d == 1 else ()
            given, calculated = lead + tuple(input.shape[2:]), lead + size
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, given))}). "
                f"Calculated output size per channel: ({' x '.join(map(str, calculated))}). "
                "Output size is too small"
            )
        out = _conv_input_adjoint(input, weight, size, stride, padding, dilation, groups)
    elif dtype == np.float16:  # accumulated in float32, the bias added before rounding once
        out = _conv_forward(input.astype(np.float32), weight.astype(np.float32), stride,
                            padding, dilation, groups)
    else:
        out = _conv_forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((-1,) + (1,) * d)
    return out.astype(dtype, copy=False)


def _convolution_meta(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,),
                      transposed=False, output_padding=(0,), groups=1):
    """The convolution's result on meta tensors: its shape and dtype only (zero-strided, no
    memory), so a meta input of any size can be convolved, as PyTorch's meta kernel does."""
    d = weight.ndim - 2
    stride, padding, dilation = ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d)
    if transposed:
        size = _transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                                ntuple(output_padding, d))
        channels = weight.shape[1] * groups
    else:
        size = tuple(
            (n + 2 * p - q * (k - 1) - 1) // s + 1
            for n, k, s, p, q in zip(input.shape[2:], weight.shape[2:], stride, padding,
                                     dilation, strict=True)
        )
        channels = weight.shape[0]
    shape = (input.shape[0], channels, *size)
    return np.broadcast_to(np.zeros((), input.dtype), shape)


convolution.op.meta_forward = _convolution_meta


def _crop(ops: Any, g: Any, shape: Sequence[int]) -> Any:
    """``g`` cut to ``shape`` in its spatial dims.

    A convolution of a transposed convolution's output can have more positions than the
    transposed convolution's input (when ``output_padding >= stride``, allowed with dilation):
    the extra positions come from the output padding, which no input position reaches.
    """
    for axis in range(2, len(shape)):
        if g.shape[axis] != shape[axis]:
            g = ops.slice(g, axis, 0, shape[axis], 1)
    return g


@convolution.derivative("input")
def _(ops, grad, input, weight, stride, padding, dilation, transposed, groups):
    # It reads the input itself (PyTorch's ConvolutionBackward0 saves it): under create_graph
    # the input's gradient is connected to the input, as PyTorch's convolution_backward.
    if transposed:
        return ops.convolution_backward_input_transposed(grad, input, weight, stride, padding,
                                                         dilation, groups)
    return ops.convolution_backward_input(grad, input, weight, stride, padding, dilation, groups)


@convolution.derivative("weight")
def _(ops, grad, input, weight_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        # y = B_in(x, W): <y, g> = <x, conv(g, W)>, so the weight sees g as the input.
        return ops.convolution_backward_weight(grad, input, weight_shape, stride, padding, dilation,
                                             groups)
    return ops.convolution_backward_weight(input, grad, weight_shape, stride, padding, dilation,
                                         groups)


@convolution.derivative("bias")
def _(ops, grad):
    return ops.sum(grad, (0,) + tuple(range(2, len(grad.shape))), False)


def _undefined(ops: Any, grad: Any) -> None:
    """No gradient (PyTorch's undefined one): the adjoint reads only its input's shape."""
    return None


@op("ConvolutionBackwardBackward0", inputs=("grad", "input", "weight"))
def convolution_backward_input(grad, input, weight, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its input ``input``. As PyTorch's
    ``convolution_backward``, it takes the input itself (reading only its shape): under
    ``create_graph`` the gradient is connected to it, with no gradient flowing back."""
    d = weight.ndim - 2
    return _conv_input_adjoint(grad, weight, tuple(input.shape[2:]), ntuple(stride, d),
                               ntuple(padding, d), ntuple(dilation, d), groups)


@convolution_backward_input.derivative("grad")
def _(ops, grad_out, weight, grad_shape, stride, padding, dilation, groups):
    g = ops.convolution(grad_out, weight, None, stride, padding, dilation, False, 0, groups)
    return _crop(ops, g, grad_shape)


convolution_backward_input.derivative("input")(_undefined)


@convolution_backward_input.derivative("weight")
def _(ops, grad_out, grad, weight_shape, stride, padding, dilation, groups):
    # <B_in(g, W), v> = <g, conv(v, W)>: in W this is B_w(v, g).
    return ops.convolution_backward_weight(grad_out, grad, weight_shape, stride, padding, dilation,
                                         groups)


@op("ConvolutionBackwardBackward0", inputs=("grad", "input", "weight"))
def convolution_backward_input_transposed(grad, input, weight, stride, padding, dilation, groups):
    """The gradient of a transposed convolution with respect to its input ``input``: the
    convolution of ``grad`` with ``weight``, cut to the input's size. It takes the input
    itself (reading only its shape), as PyTorch's ``convolution_backward``."""
    d = weight.ndim - 2
    out = _conv_forward(grad, weight, ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d),
                        groups)
    inner = (slice(None), slice(None)) + tuple(slice(0, n) for n in input.shape[2:])
    return np.ascontiguousarray(out[inner])


def _pad_to_full(ops: Any, v: Any, grad: Any, weight: Any, stride: Any, padding: Any,
                 dilation: Any) -> Any:
    """``v`` (a cut convolution output's gradient) with zeros for the cut positions."""
    d = len(weight.shape) - 2
    stride, padding, dilation = ntuple(stride, d), ntuple(padding, d), ntuple(dilation, d)
    pads: list[int] = []
    for axis in reversed(range(d)):
        full = (grad.shape[2 + axis] + 2 * padding[axis]
                - dilation[axis] * (weight.shape[2 + axis] - 1) - 1) // stride[axis] + 1
        pads += [0, full - v.shape[2 + axis]]
    return v if not any(pads) else ops.constant_pad_nd(v, pads, 0.0)


@convolution_backward_input_transposed.derivative("grad")
def _(ops, grad_out, grad, weight, stride, padding, dilation, groups):
    # <crop(conv(g, W)), v> = <g, B_in(pad(v), W)>: the cut positions get no gradient.
    v = _pad_to_full(ops, grad_out, grad, weight, stride, padding, dilation)
    return ops.convolution_backward_input(v, grad, weight, stride, padding, dilation, groups)


convolution_backward_input_transposed.derivative("input")(_undefined)


@convolution_backward_input_transposed.derivative("weight")
def _(ops, grad_out, grad, weight, stride, padding, dilation, groups):
    # <crop(conv(g, W)), v> = <conv(g, W), pad(v)>: in W this is B_w(g, pad(v)).
    v = _pad_to_full(ops, grad_out, grad, weight, stride, padding, dilation)
    return ops.convolution_backward_weight(grad, v, tuple(weight.shape), stride, padding,
                                         dilation, groups)


@op("ConvolutionBackwardBackward0", inputs=("input", "grad"))
def convolution_backward_weight(input, grad, weight_size, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its weight (of shape ``weight_size``)."""
    d = len(weight_size) - 2
    return _conv_weight_adjoint(input, grad, tuple(weight_size), ntuple(stride, d),
                                ntuple(padding, d), ntuple(dilation, d), groups)


@convolution_backward_weight.derivative("input")
def _(ops, grad_out, input, grad, stride, padding, dilation, groups):
    # <B_w(x, g), V> = <g, conv(x, V)> = <x, B_in(g, V)>.
    return ops.convolution_backward_input(grad, input, grad_out, stride, padding, dilation,
                                        groups)


@convolution_backward_weight.derivative("grad")
def _(ops, grad_out, input, grad_shape, stride, padding, dilation, groups):
    g = ops.convolution(input, grad_out, None, stride, padding, dilation, False, 0, groups)
    return _crop(ops, g, grad_shape)


# An empty input (no samples, or no channels) takes PyTorch's ``Empty`` backend: the output is
# empty too, and every gradient is zeros of its input's shape (the bias's included).


@op("ConvolutionBackward0", inputs=("input", "weight", "bias"))
def convolution_empty(input, weight, bias=None, output_size=()):
    """The convolution of an empty input: an empty output of ``output_size``."""
    return np.zeros(tuple(output_size), input.dtype)


def _zeros_from(ops: Any, grad: Any, shape: Sequence[int]) -> Any:
    # ``grad`` is empty, so its sum is an exact 0, expanded to the input's shape.
    return ops.expand(ops.sum(grad, tuple(range(len(grad.shape))), False), tuple(shape))


@convolution_empty.derivative("input")
def _(ops, grad, input_shape):
    return _zeros_from(ops, grad, input_shape)


@convolution_empty.derivative("weight")
def _(ops, grad, weight_shape):
    return _zeros_from(ops, grad, weight_shape)


@convolution_empty.derivative("bias")
def _(ops, grad, bias_shape):
    return _zeros_from(ops, grad, bias_shape)


def _empty_output_size(x: np.ndarray, w: np.ndarray, stride: Sequence[int],
                       padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                       output_padding: Sequence[int], groups: int) -> tuple[int, ...]:
    """PyTorch's ``calc_output_size``: the usual size, with 0 channels for 0 input channels."""
    kernel = w.shape[2:]
    if transposed:
        spatial = _transposed_size(x.shape[2:], kernel, stride, padding, dilation,
                                   output_padding)
        channels = w.shape[1] * groups
    else:
        spatial = tuple((s + 2 * p - dl * (k - 1) - 1) // st + 1 for s, k, st, p, dl in zip(
            x.shape[2:], kernel, stride, padding, dilation, strict=True))
        channels = w.shape[0]
    return (x.shape[0], 0 if x.shape[1] == 0 else channels) + spatial


def _run_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                     padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                     groups: int) -> Tensor:
    """The convolution op, or its empty-input form (PyTorch accepts inputs with no samples or
    no channels, nothing else empty); complex tensors as :func:`_complex_convolution`."""
    x = input._data
    if x.dtype.kind == "c":
        return _complex_convolution(input, weight, bias, stride, padding, dilation, transposed,
                                    output_padding, groups)
    if x.size:
        return convolution(input, weight, bias, stride, padding, dilation, transposed,
                           output_padding, groups)
    if x.shape[0] != 0 and x.shape[1] != 0:
        raise RuntimeError(
            "Only zero batch or zero channel inputs are supported, but got input shape: "
            f"{size_list(x.shape)}"
        )
    size = _empty_output_size(x, weight._data, stride, padding, dilation, transposed,
                              output_padding, groups)
    return convolution_empty(input, weight, bias, size)


def _real_and_imaginary(t: Tensor) -> tuple[Tensor, Tensor]:
    parts = view_as_real(resolve_conj(t))
    last = len(parts.shape) - 1
    return select(parts, last, 0), select(parts, last, 1)


def _complex_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                         padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                         groups: int) -> Tensor:
    """A complex convolution as PyTorch computes it: three real convolutions of the real and
    imaginary parts (views of ``view_as_real``), by Gauss's trick -
    ``a = conv(xr, wr, br)``, ``b = conv(xi, wi)``, ``c = conv(xr + xi, wr + wi, br + bi)``,
    the result ``a - b + 1j * (c - a - b)`` - so its values, graph (``AddBackward0`` on top)
    and gradients are PyTorch's, from the real ops' derivatives."""
    x_r, x_i = _real_and_imaginary(input)
    w_r, w_i = _real_and_imaginary(weight)
    args = (stride, padding, dilation, transposed, output_padding, groups)
    if bias is None:
        a = _run_convolution(x_r, w_r, None, *args)
        b = _run_convolution(x_i, w_i, None, *args)
        c = _run_convolution(x_r + x_i, w_r + w_i, None, *args)
    else:
        b_r, b_i = _real_and_imaginary(bias)
        a = _run_convolution(x_r, w_r, b_r, *args)
        b = _run_convolution(x_i, w_i, None, *args)
        c = _run_convolution(x_r + x_i, w_r + w_i, b_r + b_i, *args)
    return a - b + _mul_scalar(c - a - b, 1j)


# ----------------------------------------------------------------------------------------------
# nn.functional: argument checks with PyTorch's messages, then one op


def _conv_padding(padding: Any, d: int, kernel: Sequence[int], dilation: Sequence[int],
                  stride: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """Symmetric padding for the op, and PyTorch's extra right padding for ``'same'``."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * d, None
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [dl * (k - 1) for k, dl in zip(kernel, dilation, strict=True)]
        left = tuple(t // 2 for t in totals)
        extra = tuple(t - 2 * lo for t, lo in zip(totals, left, strict=True))
        return left, (extra if any(extra) else None)
    pad = ntuple(padding, d, "padding")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    return pad, None


def _check_conv(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, d: int,
                stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                groups: int, transposed: bool) -> None:
    x, w = input._data, weight._data
    if w.ndim != d + 2:
        raise RuntimeError(
            "weight should have at least three dimensions" if w.ndim < 3 else
            f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
            f"{size_list(w.shape)}, but got {x.ndim}-dimensional input of size "
            f"{size_list(x.shape)} instead"
        )
    if x.ndim != d + 2:
        raise RuntimeError(
            f"Expected {d + 2}-dimensional input for {d + 2}-dimensional weight "
            f"{size_list(w.shape)}, but got {x.ndim}-dimensional input of size "
            f"{size_list(x.shape)} instead"
        )
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(dl <= 0 for dl in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x.dtype != w.dtype:
        if x.dtype.kind == "c":  # (PyTorch's complex path checks first, naming type objects)
            raise RuntimeError(
                f"Input type ({_type_object_name(x.dtype)}) and weight type "
                f"({_type_object_name(w.dtype)}) should be the same"
            )
        raise RuntimeError(
            f"expected scalar type {scalar_name(x.dtype)} but found {scalar_name(w.dtype)}"
        )
    if bias is not None and bias._data.dtype != x.dtype:
        raise RuntimeError(
            f"Input type ({_c_name(x.dtype)}) and bias type ({_c_name(bias._data.dtype)}) should "
            f"be the same"
        )
    out_channels = w.shape[1] * groups if transposed else w.shape[0]
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {size_list(w.shape)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {size_list(bias._data.shape)} instead"
        )
    if w.shape[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but "
            f"got weight of size {size_list(w.shape)} instead"
        )
    if w.shape[0] % groups:
        # PyTorch's message prints the size in brackets twice.
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{size_list(w.shape)}] instead"
        )
    if transposed:
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {size_list(w.shape)}, expected input"
                f"{size_list(x.shape)} to have {w.shape[0]} channels, but got {x.shape[1]} "
                f"channels instead"
            )
        return
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {size_list(w.shape)}, expected input"
            f"{size_list(x.shape)} to have {w.shape[1] * groups} channels, but got {x.shape[1]} "
            f"channels instead"
        )
    padded = [s + 2 * p for s, p in zip(x.shape[2:], padding, strict=True)]
    span = [dl * (k - 1) + 1 for k, dl in zip(w.shape[2:], dilation, strict=True)]
    if any(p < k for p, k in zip(padded, span, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
            f"size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual input "
            f"size"
        )


def _c_name(dtype: np.dtype) -> str:
    return CPP_TYPE_NAMES[from_numpy_dtype(np.dtype(dtype))]


_LEGACY_TENSOR_TYPES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                        "float16": "torch.HalfTensor"}


def _type_object_name(dtype: np.dtype) -> str:
    """How PyTorch's complex convolution names a dtype's type (``torch.FloatTensor``,
    ``CPUComplexDoubleType``)."""
    name = np.dtype(dtype).name
    return _LEGACY_TENSOR_TYPES.get(name) or f"CPU{scalar_name(dtype)}Type"


def _conv_nd(d: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
             padding: Any, dilation: Any, groups: int) -> Tensor:
    name = f"conv{d}d"
    x = input._data
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(
            f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, but got input "
            f"of size: {size_list(x.shape)}"
        )
    stride_t = ntuple(stride, d, "stride")
    dilation_t = ntuple(dilation, d, "dilation")
    kernel = weight._data.shape[2:] if weight._data.ndim == d + 2 else (1,) * d
    pad, extra = _conv_padding(padding, d, kernel, dilation_t, stride_t)
    unbatched = x.ndim == d + 1
    if unbatched:
        input = unsqueeze(input, 0)
    if extra is not None:
        from .padding import pad as pad_fn

        widths: list[int] = []
        for e in reversed(extra):
            widths.extend((0, e))
        input = pad_fn(input, tuple(widths))
    _check_conv(name, input, weight, bias, d, stride_t, pad, dilation_t, groups, False)
    out = _run_convolution(input, weight, bias, stride_t, pad, dilation_t, False, (0,) * d,
                           groups)
    return squeeze(out, 0) if unbatched else out


def _conv_transpose_nd(d: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                       padding: Any, output_padding: Any, groups: int, dilation: Any) -> Tensor:
    name = f"conv_transpose{d}d"
    x = input._data
    if x.ndim not in (d + 1, d + 2):
        raise RuntimeError(
            f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, but got input "
            f"of size: {size_list(x.shape)}"
        )
    stride_t = ntuple(stride, d, "stride")
    dilation_t = ntuple(dilation, d, "dilation")
    pad = ntuple(padding, d, "padding")
    out_pad = ntuple(output_padding, d, "output_padding")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    if any(op >= max(s, dl) for op, s, dl in zip(out_pad, stride_t, dilation_t, strict=True)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding: {list(out_pad)}, stride: {list(stride_t)}, dilation: "
            f"{list(dilation_t)}"
        )
    unbatched = x.ndim == d + 1
    if unbatched:
        input = unsqueeze(input, 0)
    _check_conv(name, input, weight, bias, d, stride_t, pad, dilation_t, groups, True)
    out = _run_convolution(input, weight, bias, stride_t, pad, dilation_t, True, out_pad, groups)
    return squeeze(out, 0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution over ``(N, C, L)`` (or unbatched ``(C, L)``) input."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution over ``(N, C, H, W)`` (or unbatched ``(C, H, W)``) input.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(1, 1, 3, 3)
        >>> torch.nn.functional.conv2d(x, torch.ones(1, 1, 2, 2)).shape
        chainrule.Size([1, 1, 2, 2])
    """
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) input."""
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """1-D transposed convolution (the gradient of ``conv1d`` with respect to its input)."""
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """2-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kH, kW)``."""
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """3-D transposed convolution."""
    return _conv_transpose_nd(3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


PRIMITIVES: dict[str, Any] = {
    "convolution": convolution,
    "convolution_backward_input": convolution_backward_input,
    "convolution_backward_input_transposed": convolution_backward_input_transposed,
    "convolution_backward_weight": convolution_backward_weight,
}
