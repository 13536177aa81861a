"""How the layers of ``chainrule.nn`` become ONNX nodes, read from the module's attributes.

The layers listed in :data:`MODULES` are exported whole (``Conv2d`` -> one ``Conv`` with its
kernel, strides and pads): while one runs, the function calls inside it are not recorded. A
module not listed is looked into: the calls its ``forward`` makes are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import nn
from ._builder import GraphBuilder
from ._functions import FUNCTIONS, Handler

__all__ = ["MODULES", "ModuleHandler"]

ModuleHandler = Callable[[GraphBuilder, Any, tuple, Any], None]


def _tuple(value: Any, rank: int) -> list[int]:
    if isinstance(value, int):
        return [value] * rank
    return [int(v) for v in value]


def _unsupported(b: GraphBuilder, name: str) -> Exception:
    from .errors import UnsupportedOperatorError

    return UnsupportedOperatorError(f"aten::{name}", b.opset, None)


def _conv(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    rank = result.dim() - 2
    if module.padding_mode != "zeros":
        raise _unsupported(b, f"_convolution (padding_mode={module.padding_mode!r})")
    kernel = list(module.weight.shape[2:])
    dilation = _tuple(module.dilation, rank)
    if module.padding == "same":
        padding: dict[str, Any] = {"auto_pad": "SAME_UPPER"}  # (PyTorch's: no pads then)
    elif module.padding == "valid":
        padding = {"pads": [0] * (2 * rank)}
    else:
        padding = {"pads": _tuple(module.padding, rank) * 2}
    names = [b.value(inputs[0], "Conv"), b.value(module.weight, "Conv")]
    if module.bias is not None:
        names.append(b.value(module.bias, "Conv"))
    b.emit_for(
        result,
        "Conv",
        names,
        dilations=dilation,
        group=int(module.groups),
        kernel_shape=kernel,
        strides=_tuple(module.stride, rank),
        **padding,
    )


def _batch_norm(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if module.running_mean is None or module.training:
        raise _unsupported(b, "batch_norm (batch statistics)")
    x = inputs[0]
    dtype = x._data.dtype
    channels = module.num_features
    if module.weight is not None:
        scale = b.value(module.weight, "BatchNormalization")
        bias = b.value(module.bias, "BatchNormalization")
    else:
        scale = b.constant(np.ones(channels, dtype), "BatchNormalization")
        bias = b.constant(np.zeros(channels, dtype), "BatchNormalization")
    names = [
        b.value(x, "BatchNormalization"),
        scale,
        bias,
        b.value(module.running_mean, "BatchNormalization"),
        b.value(module.running_var, "BatchNormalization"),
    ]
    momentum = 0.1 if module.momentum is None else module.momentum
    b.emit_for(
        result,
        "BatchNormalization",
        names,
        epsilon=float(module.eps),
        momentum=float(1.0 - momentum),
        training_mode=0,
    )


def _pool_attributes(module: Any, rank: int) -> dict[str, Any]:
    kernel = _tuple(module.kernel_size, rank)
    stride = kernel if module.stride in (None, ()) else _tuple(module.stride, rank)
    padding = _tuple(module.padding, rank)
    return {
        "ceil_mode": int(bool(module.ceil_mode)),
        "kernel_shape": kernel,
        "pads": padding + padding,
        "strides": stride,
    }


def _max_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if module.return_indices:
        raise _unsupported(b, "max_pool_with_indices")
    rank = inputs[0].dim() - 2
    attrs = _pool_attributes(module, rank)
    attrs["dilations"] = _tuple(module.dilation, rank)
    b.emit_for(result, "MaxPool", [b.value(inputs[0], "MaxPool")], **attrs)


def _avg_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if getattr(module, "divisor_override", None) is not None:
        raise _unsupported(b, "avg_pool2d (divisor_override)")
    rank = inputs[0].dim() - 2
    attrs = _pool_attributes(module, rank)
    attrs["count_include_pad"] = int(bool(module.count_include_pad))
    b.emit_for(result, "AveragePool", [b.value(inputs[0], "AveragePool")], **attrs)


def _adaptive_avg_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if not all(size == 1 for size in result.shape[2:]):
        raise _unsupported(b, "adaptive_avg_pool2d (output size other than 1)")
    b.emit_for(result, "GlobalAveragePool", [b.value(inputs[0], "GlobalAveragePool")])


def _through(name: str, *attributes: str) -> ModuleHandler:
    """The function handler ``name`` applied to the input and the module's ``attributes``."""
    handler: Handler = FUNCTIONS[name]

    def handle(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
        extra = tuple(getattr(module, attribute) for attribute in attributes)
        handler(b, (inputs[0], *extra), {}, result)

    return handle


def _linear(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    FUNCTIONS["linear"](b, (inputs[0], module.weight, module.bias), {}, result)


def _identity(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    FUNCTIONS["contiguous"](b, (inputs[0],), {}, result)


MODULES: dict[type, ModuleHandler] = {
    nn.Linear: _linear,
    nn.Conv1d: _conv,
    nn.Conv2d: _conv,
    nn.Conv3d: _conv,
    nn.BatchNorm1d: _batch_norm,
    nn.BatchNorm2d: _batch_norm,
    nn.BatchNorm3d: _batch_norm,
    nn.MaxPool1d: _max_pool,
    nn.MaxPool2d: _max_pool,
    nn.MaxPool3d: _max_pool,
    nn.AvgPool1d: _avg_pool,
    nn.AvgPool2d: _avg_pool,
    nn.AdaptiveAvgPool2d: _adaptive_avg_pool,
    nn.ReLU: _through("relu"),
    nn.Sigmoid: _through("sigmoid"),
    nn.Tanh: _through("tanh"),
    nn.LeakyReLU: _through("leaky_relu", "negative_slope"),
    nn.GELU: _through("gelu", "approximate"),
    nn.Softmax: _through("softmax", "dim"),
    nn.LogSoftmax: _through("log_softmax", "dim"),
    nn.Flatten: _through("flatten", "start_dim", "end_dim"),
    nn.Dropout: _identity,
    nn.Dropout1d: _identity,
    nn.Dropout2d: _identity,
    nn.Dropout3d: _identity,
    nn.AlphaDropout: _identity,
    nn.Identity: _identity,
}
