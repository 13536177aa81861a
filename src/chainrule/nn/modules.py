"""A minimal ``nn.Module`` and ``nn.Linear`` (issue 4 completes the module system)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import functional as F
from .parameter import Parameter

__all__ = ["Module", "Linear"]


class Module:
    """Base class of layers and models: holds parameters and sub-modules, calls ``forward``."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        for store in ("_parameters", "_modules"):
            items = self.__dict__.get(store)
            if items is not None and name in items:
                return items[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output (subclasses implement it)."""
        raise NotImplementedError

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs of this module and its sub-modules."""
        stack = [(prefix, self)]
        seen: set[int] = set()
        while stack:
            module_prefix, module = stack.pop(0)
            for name, p in module._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (module_prefix + name, p)
            for name, child in module._modules.items():
                stack.append((module_prefix + name + ".", child))

    def parameters(self) -> Iterator[Parameter]:
        """The parameters of this module and its sub-modules."""
        for _, p in self.named_parameters():
            yield p

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters."""
        for p in self.parameters():
            p.grad = None


class Linear(Module):
    """``y = x @ weight.T + bias`` with PyTorch's default initialisation."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        from ..ops.creation import empty

        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype))
        self.bias = Parameter(empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(in_features), 1/sqrt(in_features)) for weight and bias, as PyTorch."""
        from ..ops.creation import default_generator

        bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
        with no_grad():
            rng = default_generator.rng
            self.weight._data[...] = rng.uniform(-bound, bound, self.weight._data.shape)
            if self.bias is not None:
                self.bias._data[...] = rng.uniform(-bound, bound, self.bias._data.shape)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
