"""The layer functions (``F.conv2d``, ``F.max_pool2d``, ``F.avg_pool2d``, ``F.batch_norm``,
``F.adaptive_avg_pool2d``) as ONNX nodes: one core per layer, called with the function's
arguments (:data:`LAYER_FUNCTIONS`) or with a module's attributes (``_modules``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._builder import GraphBuilder
from ._functions import Handler, argument

__all__ = ["LAYER_FUNCTIONS", "convolution", "pooling", "batch_norm", "global_average_pool"]


def _tuple(value: Any, rank: int) -> list[int]:
    if isinstance(value, int):
        return [value] * rank
    return [int(v) for v in value]


def _unsupported(b: GraphBuilder, name: str) -> Exception:
    from .errors import UnsupportedOperatorError

    return UnsupportedOperatorError(f"aten::{name}", b.opset, None)


def convolution(
    b: GraphBuilder,
    result: Tensor,
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> None:
    """A ``Conv`` node (``padding="same"``: ``auto_pad`` SAME_UPPER, as PyTorch writes it)."""
    rank = result.dim() - 2
    if padding == "same":
        pads: dict[str, Any] = {"auto_pad": "SAME_UPPER"}
    elif padding == "valid":
        pads = {"pads": [0] * (2 * rank)}
    else:
        pads = {"pads": _tuple(padding, rank) * 2}
    names = [b.value(x, "Conv"), b.value(weight, "Conv")]
    if bias is not None:
        names.append(b.value(bias, "Conv"))
    b.emit_for(
        result,
        "Conv",
        names,
        dilations=_tuple(dilation, rank),
        group=int(groups),
        kernel_shape=list(weight.shape[2:]),
        strides=_tuple(stride, rank),
        **pads,
    )


def pooling(
    b: GraphBuilder,
    op_type: str,
    result: Tensor,
    x: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    **attrs: Any,
) -> None:
    """A ``MaxPool`` or ``AveragePool`` node (no stride: the kernel size, as PyTorch's)."""
    rank = x.dim() - 2
    kernel = _tuple(kernel_size, rank)
    strides = kernel if stride in (None, ()) else _tuple(stride, rank)
    pads = _tuple(padding, rank)
    b.emit_for(
        result,
        op_type,
        [b.value(x, op_type)],
        ceil_mode=int(bool(ceil_mode)),
        kernel_shape=kernel,
        pads=pads + pads,
        strides=strides,
        **attrs,
    )


def batch_norm(
    b: GraphBuilder,
    result: Tensor,
    x: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None,
    bias: Tensor | None,
    training: bool,
    momentum: float | None,
    eps: float,
) -> None:
    """A ``BatchNormalization`` in inference mode (batch statistics cannot be exported)."""
    if training or running_mean is None or running_var is None:
        raise _unsupported(b, "batch_norm (batch statistics)")
    dtype = x._data.dtype
    channels = x.shape[1]
    op = "BatchNormalization"
    scale = b.value(weight, op) if weight is not None else b.constant(np.ones(channels, dtype), op)
    shift = b.value(bias, op) if bias is not None else b.constant(np.zeros(channels, dtype), op)
    names = [b.value(x, op), scale, shift, b.value(running_mean, op), b.value(running_var, op)]
    momentum = 0.1 if momentum is None else momentum
    b.emit_for(
        result, op, names, epsilon=float(eps), momentum=float(1.0 - momentum), training_mode=0
    )


def global_average_pool(b: GraphBuilder, result: Tensor, x: Tensor) -> None:
    """Adaptive average pooling to size 1: ``GlobalAveragePool``."""
    if not all(size == 1 for size in result.shape[2:]):
        raise _unsupported(b, "adaptive_avg_pool2d (output size other than 1)")
    b.emit_for(result, "GlobalAveragePool", [b.value(x, "GlobalAveragePool")])


def _conv(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    def at(i: int, name: str, default: Any) -> Any:
        return argument(args, kwargs, i, name, default)

    convolution(
        b,
        result,
        args[0],
        at(1, "weight", None),
        at(2, "bias", None),
        at(3, "stride", 1),
        at(4, "padding", 0),
        at(5, "dilation", 1),
        at(6, "groups", 1),
    )


def _max_pool(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    def at(i: int, name: str, default: Any) -> Any:
        return argument(args, kwargs, i, name, default)

    x = args[0]
    dilation = _tuple(at(4, "dilation", 1), x.dim() - 2)
    kernel, stride, padding = at(1, "kernel_size", None), at(2, "stride", None), at(3, "padding", 0)
    ceil_mode = at(5, "ceil_mode", False)
    pooling(b, "MaxPool", result, x, kernel, stride, padding, ceil_mode, dilations=dilation)


def _avg_pool(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    def at(i: int, name: str, default: Any) -> Any:
        return argument(args, kwargs, i, name, default)

    if at(6, "divisor_override", None) is not None:
        raise _unsupported(b, "avg_pool2d (divisor_override)")
    x = args[0]
    kernel, stride, padding = at(1, "kernel_size", None), at(2, "stride", None), at(3, "padding", 0)
    include = int(bool(at(5, "count_include_pad", True)))
    ceil_mode = at(4, "ceil_mode", False)
    pooling(
        b, "AveragePool", result, x, kernel, stride, padding, ceil_mode, count_include_pad=include
    )


def _batch_norm(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    def at(i: int, name: str, default: Any) -> Any:
        return argument(args, kwargs, i, name, default)

    batch_norm(
        b,
        result,
        args[0],
        at(1, "running_mean", None),
        at(2, "running_var", None),
        at(3, "weight", None),
        at(4, "bias", None),
        at(5, "training", False),
        at(6, "momentum", 0.1),
        at(7, "eps", 1e-5),
    )


def _adaptive_avg_pool(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    global_average_pool(b, result, args[0])


LAYER_FUNCTIONS: dict[str, Handler] = {
    "conv1d": _conv,
    "conv2d": _conv,
    "conv3d": _conv,
    "max_pool1d": _max_pool,
    "max_pool2d": _max_pool,
    "max_pool3d": _max_pool,
    "avg_pool1d": _avg_pool,
    "avg_pool2d": _avg_pool,
    "avg_pool3d": _avg_pool,
    "batch_norm": _batch_norm,
    "adaptive_avg_pool1d": _adaptive_avg_pool,
    "adaptive_avg_pool2d": _adaptive_avg_pool,
    "adaptive_avg_pool3d": _adaptive_avg_pool,
}
