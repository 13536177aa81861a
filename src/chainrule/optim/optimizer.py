"""``Optimizer``: parameter groups, per-parameter state, ``state_dict``, ``zero_grad``.

Subclasses implement ``step`` twice, as PyTorch's ``_single_tensor_*`` functions compute it:

* the usual step writes into the parameters' arrays (no graph) and bumps their version
  counters, as PyTorch's in-place updates do; hyper-parameters given as tensors enter as
  NumPy scalars of their dtype, so the arithmetic rounds as PyTorch's does with them;
* with ``differentiable=True`` the step runs with grad mode on, as tensor operations, in
  PyTorch's order, so the updated parameters (and state) are differentiable functions of the
  initial parameters, the gradients, the state and tensor hyper-parameters.

Per-parameter state (momentum buffers, moment estimates, ``step``) is kept as chainrule tensors,
so ``state_dict()`` looks like PyTorch's.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any, TypeVar, cast

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ..nn.modules.module import typename
from ..ops.inplace import bump_version
from ..ops.pointwise import lerp_values

__all__ = ["Optimizer", "required"]

F = TypeVar("F", bound=Callable[..., Any])


class _Required:
    """Marks a hyper-parameter with no default (``SGD``'s ``lr`` in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


def scalar_tensor(value: float) -> Tensor:
    """A 0-d tensor of PyTorch's scalar dtype for ``step`` (float32, or float64 when that is
    the default dtype)."""
    d = np.float64 if _dtype.get_default_dtype() is _dtype.float64 else np.float32
    return wrap(np.asarray(value, dtype=d))


def use_grad_for_differentiable(step: F) -> F:
    """PyTorch's ``_use_grad_for_differentiable``: the step runs with grad mode on exactly
    when the optimizer is ``differentiable``, and restores it after."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        previous = is_grad_enabled()
        try:
            set_grad_enabled(bool(self.defaults["differentiable"]))
            return step(self, *args, **kwargs)
        finally:
            set_grad_enabled(previous)

    return wrapper  # type: ignore[return-value]


def to_scalar(value: Any) -> Any:
    """PyTorch's ``_to_scalar``: a one-element tensor with dimensions becomes 0-d."""
    if isinstance(value, Tensor) and value.dim() != 0:
        return value.squeeze()
    return value


def array_hyper(value: Any) -> Any:
    """A hyper-parameter for the array step: a tensor becomes a NumPy scalar of its dtype, so
    ``lr / bias_correction`` and friends round as PyTorch's tensor arithmetic does."""
    if isinstance(value, Tensor):
        return value._data.reshape(())[()]
    return value


def number_argument(value: Any, op_name: str, argument: str) -> Any:
    """A hyper-parameter passed where PyTorch's op takes a number (``alpha=``, ``value=``): a
    tensor is read as its value, unless it needs grad under grad mode (PyTorch's TypeError)."""
    if not isinstance(value, Tensor):
        return value
    if value.requires_grad and is_grad_enabled():
        raise TypeError(f"{op_name}(): argument '{argument}' must be Number, not Tensor")
    return value.item()


def check_tensor_lr(lr: Any) -> None:
    """PyTorch's check of a tensor learning rate."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_fused(fused: Any, differentiable: bool, foreach: Any) -> None:
    """PyTorch's checks of ``fused`` (chainrule has a single implementation)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def step_as_tensor(state: dict[Any, dict[str, Any]], params: Iterable[Tensor]) -> None:
    """An older state dict's ``step`` (a number) as PyTorch's 0-d tensor."""
    for p in params:
        p_state = state.get(p, {})
        if p_state and "step" in p_state and not isinstance(p_state["step"], Tensor):
            p_state["step"] = scalar_tensor(float(p_state["step"]))


class Optimizer:
    """Base class of optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups, each with its own hyper-parameters overriding ``defaults``).
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._opt_called = False
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {typename(params)}"
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)

    def _restore_group_defaults(self, defaults: dict[str, Any]) -> None:
        """After ``__setstate__`` of an older pickle: each group gets the options it lacks,
        and a ``step`` saved as a number becomes PyTorch's 0-d tensor."""
        for group in self.param_groups:
            for key, value in defaults.items():
                group.setdefault(key, value)
            step_as_tensor(self.state, group["params"])

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyper-parameters."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)
        tensors = []
        names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param "
                    f"group {current} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimised parameter (to None, or to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if grad._grad_node is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    if MUTATION_WATCH:
                        clone_saved_before_write(grad)
                    grad._data[...] = 0
                    bump_version(grad)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters from their gradients (subclasses implement it)."""
        raise NotImplementedError

    def _step_each_parameter(self, closure: Callable[[], Any] | None) -> Any:
        """A step made of one ``_update(group, p)`` per parameter with a gradient: the
        closure's loss first, then every group that has such parameters is checked
        (``_check_group``: PyTorch's refusals) before any parameter of any group moves, so a
        refused step changes nothing; returns the loss."""
        loss = self._evaluate(closure)
        work = [(group, with_grad(group)) for group in self.param_groups]
        for group, params in work:
            if params:
                self._check_group(group, params)
        for group, params in work:
            for p in params:
                self._update(group, p)
        return loss

    def _check_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        """Raise PyTorch's error if ``group`` cannot be stepped (see _step_each_parameter)."""

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """One parameter's update (optimizers stepping through _step_each_parameter)."""
        raise NotImplementedError

    def _refuse_capturable_groups(self) -> None:
        """PyTorch's refusal of ``capturable=True`` (see refuse_capturable) for every group
        that has parameters to step, before any of them moves."""
        for group in self.param_groups:
            if with_grad(group):
                refuse_capturable(group)

    def _evaluate(self, closure: Callable[[], Any] | None) -> Any:
        """Run ``closure`` (which recomputes the loss) with grad mode on."""
        self._opt_called = True
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dict ----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``.

        Parameters are replaced by their position across groups; state tensors are the live
        ones (not copies), as in PyTorch.
        """
        mapping: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {
            (mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyper-parameters and state saved by :meth:`state_dict`."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(groups, saved_groups, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups), strict=True))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast(param, value)
            else:
                state[key] = value
        for group, new_group in zip(groups, saved_groups, strict=True):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})


def _cast(param: Tensor, value: Any, key: Any = None) -> Any:
    """A loaded state value in the parameter's dtype (``step`` is kept as saved)."""
    if isinstance(value, Tensor):
        if key == "step" or not param.is_floating_point():
            return value
        if value._data.dtype == param._data.dtype:
            return value
        return wrap(value._data.astype(param._data.dtype))
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cast(param, v) for v in value)
    return value


def grads_of(
    group: dict[str, Any], states: dict[Any, dict[str, Any]] | None = None
) -> Iterable[tuple[Tensor, np.ndarray]]:
    """``(parameter, gradient array)`` for the parameters of ``group`` that have a gradient.

    The caller updates each parameter, and the tensors of its state in ``states``, in place:
    under ``allow_mutation_on_saved_tensors`` what was saved of them is cloned first, as
    PyTorch's in-place updates do."""
    for p in group["params"]:
        if p._grad is not None:
            if MUTATION_WATCH:
                clone_saved_before_write(p)
                for value in (states.get(p, {}) if states is not None else {}).values():
                    if isinstance(value, Tensor):
                        clone_saved_before_write(value)
            yield p, p._grad._data


def lerp_(target: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``target.lerp_(end, weight)`` as PyTorch's kernel rounds it (:func:`lerp_values`)."""
    target[...] = lerp_values(target, end, weight)


def holds_reduced_float(group: dict[str, Any]) -> bool:
    """Whether a group has a float16 or bfloat16 parameter: those step as tensor operations,
    each rounding to the half type as PyTorch's kernels do, where NumPy's array arithmetic
    would round otherwise."""
    return any(p.dtype in (_dtype.float16, _dtype.bfloat16) for p in group["params"])


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def refuse_capturable(group: dict[str, Any], tensors: str = "params and state_steps",
                      xla: bool = True) -> None:
    """PyTorch's AssertionError for ``capturable=True``: its capturable steps run on
    accelerators only, and every chainrule tensor is on the CPU. Raised before anything is
    touched (PyTorch initialises the state first)."""
    if group.get("capturable"):
        devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
        raise AssertionError(
            f"If capturable=True, {tensors} must be on supported devices: {devices}."
        )


def with_grad(group: dict[str, Any]) -> list[Tensor]:
    """The parameters of ``group`` that have a gradient, in order."""
    return [p for p in group["params"] if p.grad is not None]


def signed_grad(p: Tensor, maximize: bool) -> Tensor:
    """The gradient of ``p`` (which has one), negated when maximising."""
    grad = cast(Tensor, p.grad)
    return -grad if maximize else grad


def add_scaled_(target: Tensor, update: Tensor, alpha: Any) -> Tensor:
    """``target.add_(update, alpha=alpha)`` rounded as PyTorch's CPU kernel rounds float32:
    ``alpha`` as a float32, the multiply-add fused into one rounding (computed in float64,
    where the float32 product is exact). Other dtypes use chainrule's ``add_``."""
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    if (target.dtype is not _dtype.float32 or update.dtype is not _dtype.float32
            or (is_grad_enabled() and (target.requires_grad or update.requires_grad))):
        return target.add_(update, alpha=alpha)
    fused = (target._data.astype(np.float64)
             + np.float64(np.float32(alpha)) * update._data.astype(np.float64))
    return target.copy_(wrap(fused.astype(np.float32)))
