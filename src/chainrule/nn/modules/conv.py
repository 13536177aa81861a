"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``."""

from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...ops.creation import empty
from ...ops.nn_ops.convolution import _conv_nd, _conv_transpose_nd
from ...ops.nn_ops.padding import pad
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n
    return tuple(value)


class _ConvNd(Module):
    """What every convolution layer shares: the parameters, their initialisation, the repr."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", output_padding: Any = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        d = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in _tuple(stride, d)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _tuple(kernel_size, d)
        self.stride = _tuple(stride, d)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, d)
        self.dilation = _tuple(dilation, d)
        self.transposed = self._transposed
        self.output_padding = _tuple(output_padding, d)
        self.groups = groups
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: ``kaiming_uniform_(a=sqrt(5))``, bias U(+-1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)
            else:
                # PyTorch leaves the bias as allocated (uninitialised memory, in practice
                # zeros) and draws nothing; ours would be garbage: zeros, and no draw either.
                init.zeros_(self.bias)

    def extra_repr(self) -> str:
        d = self._dims
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * d:
            s += ", padding={padding}"
        if self.dilation != (1,) * d:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * d:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _padded(self, input: Tensor) -> tuple[Tensor, Any]:
        """For non-zero padding modes, pad explicitly and convolve without padding."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if self.padding == "valid":  # padded by zero widths, as PyTorch (a pad node all the same)
            pairs = [(0, 0) for _ in self.kernel_size]
        elif isinstance(self.padding, str):
            total = [dl * (k - 1) for k, dl in zip(self.kernel_size, self.dilation, strict=True)]
            pairs = [(t // 2, t - t // 2) for t in total]
        else:
            pairs = [(p, p) for p in self.padding]
        widths: list[int] = []
        for lo, hi in reversed(pairs):
            widths.extend((lo, hi))
        return pad(input, tuple(widths), mode=self.padding_mode), 0


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        x, padding = self._padded(input)
        return _conv_nd(self._dims, x, self.weight, self.bias, self.stride, padding,
                                 self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)``; weight ``(C_out, C_in / groups, k)``."""

    _dims = 1


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)``; weight ``(C_out, C_in / groups, kH, kW)``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.Conv2d(3, 16, 3, padding=1)(torch.zeros(2, 3, 8, 8)).shape
        chainrule.Size([2, 16, 8, 8])
    """

    _dims = 2


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)``."""

    _dims = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The output padding that gives ``output_size`` (PyTorch's ``_output_padding``)."""
        d = self._dims
        if output_size is None:
            return self.output_padding
        size = [int(s) for s in list(output_size)[-d:]]
        spatial = input._data.shape[-d:]
        minimum = [
            (spatial[i] - 1) * self.stride[i] - 2 * self.padding[i]
            + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            for i in range(d)
        ]
        maximum = [minimum[i] + self.stride[i] - 1 for i in range(d)]
        for i in range(d):
            if not minimum[i] <= size[i] <= maximum[i]:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {minimum} "
                    f"to {maximum} (for an input of {input.shape[-d:]})"
                )
        return tuple(size[i] - minimum[i] for i in range(d))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return _conv_transpose_nd(self._dims, input, self.weight, self.bias,
                                           self.stride, self.padding, output_padding,
                                           self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution; weight ``(C_in, C_out / groups, k)``."""

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution (the input-gradient of ``Conv2d``, run forward)."""

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution."""

    _dims = 3
