"""How the layers of ``chainrule.nn`` become ONNX nodes, read from the module's attributes.

The layers listed in :data:`MODULES` are exported whole (``Conv2d`` -> one ``Conv`` with its
kernel, strides and pads): while one runs, the function calls inside it are not recorded. A
module not listed is looked into: the calls its ``forward`` makes are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import nn
from ._builder import GraphBuilder
from ._functions import FUNCTIONS, Handler
from ._layers import batch_norm, convolution, global_average_pool, pooling

__all__ = ["MODULES", "ModuleHandler"]

ModuleHandler = Callable[[GraphBuilder, Any, tuple, Any], None]


def _unsupported(b: GraphBuilder, name: str) -> Exception:
    from .errors import UnsupportedOperatorError

    return UnsupportedOperatorError(f"aten::{name}", b.opset, None)


def _conv(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if module.padding_mode != "zeros":
        raise _unsupported(b, f"_convolution (padding_mode={module.padding_mode!r})")
    convolution(
        b,
        result,
        inputs[0],
        module.weight,
        module.bias,
        module.stride,
        module.padding,
        module.dilation,
        module.groups,
    )


def _batch_norm(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    batch_norm(
        b,
        result,
        inputs[0],
        module.running_mean,
        module.running_var,
        module.weight,
        module.bias,
        module.training,
        module.momentum,
        module.eps,
    )


def _max_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if module.return_indices:
        raise _unsupported(b, "max_pool_with_indices")
    x = inputs[0]
    dilation = module.dilation
    dilations = [dilation] * (x.dim() - 2) if isinstance(dilation, int) else list(dilation)
    args = (module.kernel_size, module.stride, module.padding, module.ceil_mode)
    pooling(b, "MaxPool", result, x, *args, dilations=dilations)


def _avg_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if getattr(module, "divisor_override", None) is not None:
        raise _unsupported(b, "avg_pool2d (divisor_override)")
    args = (module.kernel_size, module.stride, module.padding, module.ceil_mode)
    include = int(bool(module.count_include_pad))
    pooling(b, "AveragePool", result, inputs[0], *args, count_include_pad=include)


def _adaptive_avg_pool(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    global_average_pool(b, result, inputs[0])


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


def _dropout(b: GraphBuilder, module: Any, inputs: tuple, result: Any) -> None:
    if module.training and module.p > 0:  # (random in training mode: no fixed graph here)
        raise _unsupported(b, "dropout (training=True)")
    _identity(b, module, inputs, result)


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
    nn.AvgPool3d: _avg_pool,
    nn.AdaptiveAvgPool1d: _adaptive_avg_pool,
    nn.AdaptiveAvgPool2d: _adaptive_avg_pool,
    nn.AdaptiveAvgPool3d: _adaptive_avg_pool,
    nn.ReLU: _through("relu"),
    nn.Sigmoid: _through("sigmoid"),
    nn.Tanh: _through("tanh"),
    nn.LeakyReLU: _through("leaky_relu", "negative_slope"),
    nn.GELU: _through("gelu", "approximate"),
    nn.Softmax: _through("softmax", "dim"),
    nn.LogSoftmax: _through("log_softmax", "dim"),
    nn.Flatten: _through("flatten", "start_dim", "end_dim"),
    nn.Dropout: _dropout,
    nn.Dropout1d: _dropout,
    nn.Dropout2d: _dropout,
    nn.Dropout3d: _dropout,
    nn.AlphaDropout: _dropout,
    nn.Identity: _identity,
}
