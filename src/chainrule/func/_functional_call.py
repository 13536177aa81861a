"""``functional_call`` and ``stack_module_state``: calling a module with other parameters and
buffers, and stacking the state of several modules for ``vmap`` (model ensembling).

``functional_call(module, params, args)`` puts the given tensors in the module's places for one
call (parameters, buffers, or plain attributes) and puts the originals back afterwards, also when
the call raises. With ``tie_weights`` (the default) a value given for one of several names that
share a tensor in the module is used for all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..ops.shape import stack

__all__ = ["functional_call", "stack_module_state"]

_MISSING: Any = object()  # an attribute the module did not have before the call


def _submodule(module: Module, path: str, cache: dict[str, Module]) -> Module:
    """The submodule at a dotted ``path`` ("" is ``module`` itself), as PyTorch's named-member
    accessor finds it (same errors)."""
    if not path:
        return module
    found = cache.get(path)
    if found is not None:
        return found
    parent_path, _, attr = path.rpartition(".")
    parent = _submodule(module, parent_path, cache)
    try:
        child = getattr(parent, attr)
    except AttributeError as error:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from error
    if not isinstance(child, Module):
        raise TypeError(f"submodule `{path}`: {child} is not an instance of torch.nn.Module")
    cache[path] = child
    return child


def _swap(owner: Module, name: str, value: Any) -> Any:
    """Put ``value`` (or, for ``_MISSING``, nothing) at ``owner.<name>``; the previous value."""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for store in (owner._parameters, owner._buffers):
        if name in store:
            old = store[name]
            if value is _MISSING:
                del store[name]
            else:
                store[name] = value
            return old
    old = getattr(owner, name) if hasattr(owner, name) else _MISSING
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{name}`: {old} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(owner, name, value)
    elif hasattr(owner, name):
        delattr(owner, name)
    return old


def _swap_all(module: Module, values: dict[str, Any]) -> dict[str, Any]:
    """Swap every ``name -> value`` in; the previous values. If one swap fails, the ones made
    are undone before the error propagates."""
    cache: dict[str, Module] = {}
    previous: dict[str, Any] = {}
    try:
        for name, value in values.items():
            path, _, attr = name.rpartition(".")
            previous[name] = _swap(_submodule(module, path, cache), attr, value)
    except Exception:
        for name, old in previous.items():
            path, _, attr = name.rpartition(".")
            _swap(_submodule(module, path, cache), attr, old)
        raise
    return previous


def _named_tensors(module: Module) -> dict[str, Tensor]:
    found: dict[str, Tensor] = {}
    found.update(module.named_parameters(remove_duplicate=False))
    found.update(module.named_buffers(remove_duplicate=False))
    return found


def _untie(module: Module, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` with a value for every name that shares its tensor with a given name (the
    module's tied weights); PyTorch's ValueError when tied names get different values."""
    names_of: dict[int, set[str]] = {}
    for name, tensor in _named_tensors(module).items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = [name for name in given if name in tied]
    for name in given_tied:
        group = tied[name]
        values = {id(given[n]) for n in group if n in given}
        if len(group.intersection(given_tied)) > 1 and len(values) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, which are tied. "
                "Consider using tie_weights=False"
            )
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


def _check_strict(module: Module, values: dict[str, Any]) -> None:
    valid = set(_named_tensors(module))
    missing = sorted(valid - set(values))
    unexpected = sorted(set(values) - valid)
    messages = []
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(messages)
        )


def _merge(parameter_and_buffer_dicts: Any) -> dict[str, Any]:
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, Sequence):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts: dict[str, int] = {}
    for d in parameter_and_buffer_dicts:
        for key in d:
            counts[key] = counts.get(key, 0) + 1
    repeated = [key for key, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
            "ambiguous"
        )
    return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with the given tensors standing in for its parameters
    and buffers (named as in ``state_dict``); the module's own are back in place afterwards,
    also when the call raises.

    ``args`` that is not a tuple is the single positional argument. Several dicts may be given
    (their keys must not repeat). With ``tie_weights``, a value given for one of several tied
    names is used for all of them; with ``strict``, every parameter and buffer must be given and
    nothing else. A module that writes a swapped-in tensor in place writes the given tensor.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import functional_call
        >>> model = torch.nn.Linear(2, 1)
        >>> params = {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}
        >>> functional_call(model, params, torch.tensor([[1.0, 2.0]]))
        tensor([[3.]])
    """
    values = _merge(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swapped = _untie(module, values) if tie_weights else values
    if strict:
        _check_strict(module, swapped)
    previous = _swap_all(module, swapped)
    try:
        return module(*args, **kwargs)
    finally:
        now = _swap_all(module, previous)
        # A module that rebinds one of them (self.foo = self.foo + 1) changes the caller's dict.
        for key in values:
            if key in now:
                values[key] = now[key]


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    requires = [t.requires_grad for t in tensors]
    if any(requires) and not all(requires):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([t.detach() for t in tensors])
    if all(requires):
        result.requires_grad_()
    return result


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(params, buffers)``: every parameter and buffer of ``models`` (modules of one class, in
    one training mode) stacked along a new first dimension, by name, for
    ``vmap(functional_call ...)`` over the models. The stacked tensors are new leaves (stacked
    parameters require grad), unconnected to the models' own.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import stack_module_state
        >>> params, buffers = stack_module_state([torch.nn.Linear(3, 2) for _ in range(4)])
        >>> params["weight"].shape
        torch.Size([4, 2, 3])
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    modes = {m.training for m in models}
    if len(modes) != 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
