"""``nn.utils.weight_norm`` / ``remove_weight_norm``: PyTorch's older, hook-based weight
normalization (deprecated there in favour of ``nn.utils.parametrizations.weight_norm``).

The weight is replaced by two parameters, ``<name>_g`` (the norms) and ``<name>_v`` (the
direction), and recomputed as ``g * v / ||v||`` by a forward pre-hook before every call; between
calls ``module.<name>`` is a plain attribute holding the last value.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ..._dtype import REPR_NAMESPACE
from ..._tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from .parametrizations import norm_except_dim

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """``g * v / norm_except_dim(v, dim)`` from the module's current parameters."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and install the hook."""
        ns = REPR_NAMESPACE[0]
        warnings.warn(
            f"`{ns}.nn.utils.weight_norm` is deprecated in favor of "
            f"`{ns}.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization"
            )
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put back one parameter ``<name>`` holding the current normalized weight."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Weight normalization by a forward pre-hook: ``module.<name>`` becomes
    ``<name>_g * <name>_v / ||<name>_v||`` (norm over every dimension but ``dim``; ``None``:
    the whole tensor), recomputed before each forward. Deprecated in PyTorch (FutureWarning).

    Example:
        >>> m = weight_norm(nn.Linear(20, 40), name="weight")  # doctest: +SKIP
        >>> m.weight_g.size()  # doctest: +SKIP
        torch.Size([40, 1])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` is one parameter again (its current value)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
