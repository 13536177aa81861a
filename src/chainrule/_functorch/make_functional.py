"""``make_functional``, ``make_functional_with_buffers`` and ``combine_state_for_ensemble``:
a module as a function of its parameters (and buffers), functorch's API before
``torch.func.functional_call``.

The function is a copy of the module whose parameters (and buffers) are meta tensors; a call
puts the given tensors in their places for the call (``func.functional_call``'s swapping) and
the meta ones back after. The tensors returned are the copy's own, new leaves unconnected to
the module's.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from .._tensor import Tensor
from ..func._functional_call import _swap_all
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..ops.creation import empty_like
from ..ops.shape import stack

__all__ = [
    "FunctionalModule", "FunctionalModuleWithBuffers", "make_functional",
    "make_functional_with_buffers", "combine_state_for_ensemble",
]  # fmt: skip


def _extract(
    module: Module, named: Any, as_parameter: bool
) -> tuple[tuple[Tensor, ...], tuple[str, ...], dict[str, list[str]]]:
    """The distinct tensors of ``named`` (a module's ``named_parameters`` or
    ``named_buffers``), their first names, and every name of each (tied weights share a
    tensor); each name then holds a meta tensor of its tensor's shape and dtype."""
    names_map: dict[int, list[str]] = {}
    tensors: dict[int, Tensor] = {}
    for name, tensor in named(remove_duplicate=False):
        names_map.setdefault(id(tensor), []).append(name)
        tensors[id(tensor)] = tensor
    replacements = {}
    for key, tensor in tensors.items():
        meta = empty_like(tensor, device="meta")
        replacements[key] = Parameter(meta) if as_parameter else meta
    _swap_all(module, {n: replacements[k] for k, names in names_map.items() for n in names})
    firsts = tuple(names[0] for names in names_map.values())
    return (
        tuple(tensors.values()),
        firsts,
        {names[0]: names for names in names_map.values()},
    )


def _call(
    module: Module,
    names_map: dict[str, list[str]],
    tensors: Iterable[Tensor],
    args: tuple,
    kwargs: dict[str, Any],
) -> Any:
    values = {}
    for names, tensor in zip(names_map.values(), tensors, strict=False):
        for name in names:
            values[name] = tensor
    previous = _swap_all(module, values)
    try:
        return module(*args, **kwargs)
    finally:
        _swap_all(module, previous)


class FunctionalModule(Module):
    """What :func:`make_functional` returns: ``func(params, *args, **kwargs)``."""

    def __init__(
        self, stateless_model: Module, param_names: tuple[str, ...], names_map: dict[str, list[str]]
    ) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(
        model: Module, disable_autograd_tracking: bool = False
    ) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, names, names_map = _extract(model_copy, model_copy.named_parameters, True)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        return FunctionalModule(model_copy, names, names_map), params

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        """The model's forward with ``params`` in its parameters' places."""
        return _call(self.stateless_model, self.names_map, params, args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """What :func:`make_functional_with_buffers` returns:
    ``func(params, buffers, *args, **kwargs)``."""

    def __init__(
        self,
        stateless_model: Module,
        param_names: tuple[str, ...],
        buffer_names: tuple[str, ...],
        param_names_map: dict[str, list[str]],
        buffer_names_map: dict[str, list[str]],
    ) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = dict(param_names_map)
        self.all_names_map.update(buffer_names_map)

    @staticmethod
    def _create_from(
        model: Module, disable_autograd_tracking: bool = False
    ) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
        model_copy = copy.deepcopy(model)
        params, param_names, param_map = _extract(model_copy, model_copy.named_parameters, True)
        buffers, buffer_names, buffer_map = _extract(model_copy, model_copy.named_buffers, False)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        functional = FunctionalModuleWithBuffers(
            model_copy, param_names, buffer_names, param_map, buffer_map
        )
        return functional, params, buffers

    def forward(
        self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any, **kwargs: Any
    ) -> Any:
        """The model's forward with ``params`` and ``buffers`` in their places."""
        tensors = tuple(params) + tuple(buffers)
        return _call(self.stateless_model, self.all_names_map, tensors, args, kwargs)


def make_functional(
    model: Module, disable_autograd_tracking: bool = False
) -> tuple[FunctionalModule, tuple[Tensor, ...]]:
    """``(func, params)``: ``model`` as a function of its parameters (a model with buffers
    needs :func:`make_functional_with_buffers`)."""
    if list(model.buffers()):
        raise RuntimeError(
            "make_functional(model): `model` has buffers. Please use "
            "make_functional_with_buffers(model) instead."
        )
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(
    model: Module, disable_autograd_tracking: bool = False
) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """``(func, params, buffers)``: ``model`` as a function of its parameters and buffers."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(
    models: Sequence[Module],
) -> tuple[FunctionalModuleWithBuffers, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """``(func, params, buffers)`` for ``vmap`` over ``models`` (of one class, in one
    mode): each parameter and buffer stacked along a new first dimension, detached."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to be of the same class."
        )
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models], strict=True)
    return (
        funcs[0],
        tuple(stack(list(shards)).detach() for shards in zip(*params, strict=True)),
        tuple(stack(list(shards)).detach() for shards in zip(*buffers, strict=True)),
    )
