"""``nn.functional``: layers, activations and losses as functions.

Everything here is an entry of the op table (``ops/nn_ops``, ``ops/activation``,
``ops/pointwise``) or PyTorch's composition of them; this module only gathers the public names.

Example:
    >>> import chainrule as torch
    >>> import chainrule.nn.functional as F
    >>> F.relu(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
"""

from __future__ import annotations

from typing import Any

from .._overrides import has_torch_function, has_torch_function_unary, has_torch_function_variadic
from .._overrides import make_namespace_overridable as _make_namespace_overridable
from .._tensor import Tensor
from ..ops import nn_ops as _nn_ops
from ..ops import pointwise as _pointwise
from ..ops.activation import log_softmax, softmax
from ..ops.linalg import linear
from ..ops.nn_ops import *  # noqa: F403 - conv2d, max_pool2d, cross_entropy ...
from ..ops.nn_ops.activations import _maybe_inplace
from ..ops.nn_ops.activations import threshold as _threshold  # its parameter shadows the name
from ..ops.pointwise import sigmoid, tanh

# ``+= _nn_ops.__all__`` rather than a ``*`` unpacking: pyright reads this form (mypy reads
# literal lists only, python/mypy#15300; the ops reach it through the star import).
__all__: list[str] = []
__all__ += _nn_ops.__all__
__all__ += [
    "linear", "log_softmax", "relu", "relu_",
    "sigmoid", "softmax", "tanh", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_",
    "threshold_",
]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` (``ReluBackward0``)."""
    return _maybe_inplace(input, inplace, _pointwise.relu)


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input`` (for tensors outside autograd)."""
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``."""
    return elu(input, alpha, inplace=True)  # noqa: F405


def selu_(input: Tensor) -> Tensor:
    """``selu`` written into ``input``."""
    return selu(input, inplace=True)  # noqa: F405


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu`` written into ``input``."""
    return celu(input, alpha, inplace=True)  # noqa: F405


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)  # noqa: F405


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``."""
    return hardtanh(input, min_val, max_val, inplace=True)  # noqa: F405


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``."""
    return _threshold(input, threshold, value, inplace=True)


# The public functions hand a call with a __torch_function__ argument to it (an op's own
# public function checks on its own path).
_make_namespace_overridable(globals(), __all__)

# Helpers PyTorch's nn.functional also exports (not ops: no dispatch of their own).
__all__ += [
    "assert_int_or_pair", "has_torch_function", "has_torch_function_unary",
    "has_torch_function_variadic",
]


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """An AssertionError with ``message.format(arg_name)`` unless ``arg`` is an int or has two
    elements (PyTorch's helper for kernel sizes and strides)."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
