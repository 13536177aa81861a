"""``nn.Module``: the base class of layers and models.

A module holds parameters, buffers and sub-modules in three ordered dicts, so traversal order
(and therefore ``parameters()``, ``state_dict()`` and ``repr``) is the order of assignment, as in
PyTorch. Traversals of the module tree use explicit stacks, not recursion.

Backward hooks are PyTorch's: full backward hooks and backward pre-hooks (per module, and global
ones registered with :func:`register_module_full_backward_hook` /
:func:`register_module_full_backward_pre_hook`) run through
:class:`chainrule.utils.hooks.BackwardHook`, which passes the module's tensor inputs and outputs
through ``BackwardHookFunction`` nodes; the legacy hooks (``register_backward_hook``,
:func:`register_module_backward_hook`) are node hooks on the ``grad_fn`` of the first output.

Beyond PyTorch, ``load_state_dict`` is atomic: every key, type and shape is checked before any
value is copied, so on error the module is exactly as it was (the strict key check excepted when
a load post-hook is registered: the hooks see the loaded values and may clear the key lists).
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ... import _dtype
from ..._size import device as _device
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ...autograd.node import Node, RemovableHandle
from ...ops.creation import empty_like
from ...ops.inplace import bump_version
from ...utils.hooks import BackwardHook
from ..parameter import Buffer, Parameter

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_backward_hook",
    "register_module_full_backward_hook",
    "Module",
    "typename",
]

# A backward hook's argument and result: a tuple of gradients (a Tensor is accepted).
_grad_t = tuple[Tensor, ...] | Tensor

T = TypeVar("T", bound="Module")


def typename(obj: Any) -> str:
    """``torch.typename``: ``'chainrule.FloatTensor'`` for tensors, the qualified type else."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__
    if module in (None, "builtins"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys that were missing and unexpected."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


# Backward hooks every module runs (for debugging and profiling, as PyTorch's): pre-hooks, and
# hooks that are all full or all legacy (``_global_is_full_backward_hook``, None while unset).
_global_backward_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_backward_hooks: OrderedDict[int, Any] = OrderedDict()
_global_is_full_backward_hook: bool | None = None

# Forward hooks every module runs before its own (PyTorch's global forward hooks): pre-hooks
# ``hook(module, args)``, hooks ``hook(module, args, output)`` or, with kwargs,
# ``hook(module, args, kwargs, output)``; the always-called ones also run when forward raises.
_global_forward_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Any] = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict[int, bool] = OrderedDict()
_global_forward_hooks_always_called: OrderedDict[int, bool] = OrderedDict()

_MIXED_GLOBAL_HOOKS_MESSAGE = (
    "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
    "Please use only one of them."
)
_MIXED_HOOKS_MESSAGE = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. Please "
    "use only one of them."
)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a forward pre-hook common to all modules (global state, meant for debugging and
    profiling): ``hook(module, args)`` runs before every module's own pre-hooks and may return
    new ``args``."""
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Register a forward hook common to all modules (global state, meant for debugging and
    profiling): ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) runs before every module's own forward hooks and may return a new output;
    with ``always_call`` it also runs when the forward raises."""
    handle = RemovableHandle(
        _global_forward_hooks,
        extra_dict=[_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called],
    )
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(
    hook: Callable[[Module, _grad_t, _grad_t], _grad_t | None],
) -> RemovableHandle:
    """Register a legacy (non-full) backward hook common to all modules.

    Deprecated in favour of :func:`register_module_full_backward_hook`, as in PyTorch; it
    cannot be mixed with global full backward hooks.
    """
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError(_MIXED_GLOBAL_HOOKS_MESSAGE)
    _global_is_full_backward_hook = False
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_pre_hook(
    hook: Callable[[Module, _grad_t], _grad_t | None],
) -> RemovableHandle:
    """Register a backward pre-hook common to all modules (global state, meant for debugging
    and profiling). It behaves as :meth:`Module.register_full_backward_pre_hook` and runs
    before the modules' own pre-hooks."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(
    hook: Callable[[Module, _grad_t, _grad_t], _grad_t | None],
) -> RemovableHandle:
    """Register a full backward hook common to all modules (global state, meant for debugging
    and profiling). It behaves as :meth:`Module.register_full_backward_hook` and runs before
    the modules' own hooks; it cannot be mixed with global legacy backward hooks."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError(_MIXED_GLOBAL_HOOKS_MESSAGE)
    _global_is_full_backward_hook = True
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


class _WrappedHook:
    """A module hook turned into a node hook: ``hook(module, *args)``, the module held by weak
    reference (a legacy backward hook on the ``grad_fn`` of a module's output)."""

    def __init__(self, hook: Callable[..., Any], module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        result: dict[str, Any] = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# What ``Module.__init__`` creates; ``__setstate__`` adds the ones an older pickle lacks.
# OrderedDicts, as PyTorch's (they print as ``OrderedDict()``; handles hold them weakly).
_HOOK_DICTS = (
    "_backward_pre_hooks",
    "_backward_hooks",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_state_dict_pre_hooks",
    "_state_dict_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)


def _insert_hook(
    hooks: OrderedDict[int, Any], handle: RemovableHandle, hook: Any, prepend: bool
) -> None:
    if not prepend:
        hooks[handle.id] = hook
        return
    existing = list(hooks.items())
    hooks.clear()
    hooks[handle.id] = hook
    hooks.update(existing)


class Module:
    """Base class of layers and models: holds parameters, buffers and sub-modules.

    Subclasses assign them as attributes in ``__init__`` (after ``super().__init__()``) and
    implement ``forward``; calling the module runs the forward pre-hooks, ``forward`` and the
    forward hooks.

    Example:
        >>> import chainrule as torch
        >>> class Net(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = torch.nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x)
        >>> Net()
        Net(
          (fc): Linear(in_features=2, out_features=1, bias=True)
        )
    """

    _version: int = 1
    training: bool
    _is_full_backward_hook: bool | None
    dump_patches: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        code = getattr(init, "__code__", None)
        if (
            code is not None
            and cls.__module__.startswith("chainrule.nn.")
            and ("device" in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
        ):
            cls.__init__ = _on_device(init)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name = type(self).__name__
        if kwargs:
            raise TypeError(
                f"{name}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{name}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output (subclasses implement it)."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- calling -------------------------------------------------------------------------------

    def _run_forward_hook(
        self,
        hook_id: int,
        hook: Callable[..., Any],
        args: tuple,
        kwargs: dict[str, Any],
        result: Any,
    ) -> Any:
        """One forward hook (with or without the keyword arguments); the result it gives."""
        if hook_id in self._forward_hooks_with_kwargs or hook_id in (
            _global_forward_hooks_with_kwargs
        ):
            new = hook(self, args, kwargs, result)
        else:
            new = hook(self, args, result)
        return result if new is None else new

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (A subclass that skipped Module.__init__ fails here with PyTorch's error: no
        # attribute '_backward_hooks'.)
        if not (
            self._backward_hooks
            or self._backward_pre_hooks
            or self._forward_hooks
            or self._forward_pre_hooks
            or _global_backward_pre_hooks
            or _global_backward_hooks
            or _global_forward_hooks
            or _global_forward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        """PyTorch's ``_call_impl``: forward pre-hooks, the inputs' backward hook node,
        ``forward``, forward hooks, the outputs' backward hook node, legacy backward hooks; if
        anything raises, the ``always_call`` forward hooks not yet run are run (with the output
        so far, or None) before the error propagates, and an error of theirs is a warning."""
        result = None
        called: set[int] = set()
        try:
            full_backward_hooks: list[Callable[..., Any]] = []
            non_full_backward_hooks: list[Callable[..., Any]] = []
            backward_pre_hooks: list[Callable[..., Any]] = []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()

            for hook_id, hook in [
                *_global_forward_pre_hooks.items(),
                *self._forward_pre_hooks.items(),
            ]:
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, "
                                f"new_kwargs), but got {new}."
                            )
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)

            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)

            result = self.forward(*args, **kwargs)
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if hook_id in self._forward_hooks_always_called or hook_id in (
                    _global_forward_hooks_always_called
                ):
                    called.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)

            if bw_hook is not None:
                if not isinstance(result, Tensor | tuple):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a "
                        f"tuple of Tensors but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)

            if non_full_backward_hooks:
                var = result
                while not isinstance(var, Tensor):
                    if isinstance(var, dict):
                        var = next(v for v in var.values() if isinstance(v, Tensor))
                    else:
                        var = var[0]
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_backward_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
                    self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
            return result
        except Exception:
            for hook_id, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if hook_id in called or not (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called
                ):
                    continue
                try:
                    result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                except Exception as e:  # noqa: BLE001 - the original error is what propagates
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception that "
                        f"was silenced as another error was raised in forward: {e}",
                        stacklevel=2,
                    )
            raise

    # -- backward hooks ------------------------------------------------------------------------

    def register_full_backward_pre_hook(
        self,
        hook: Callable[[Module, _grad_t], _grad_t | None],
        prepend: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        computed, before those of its inputs; it may return a new ``grad_output`` (a tuple of
        the same length) used in their place.

        ``grad_output`` has one entry per output (None for non-tensor outputs and outputs that
        got no gradient). As in PyTorch, ``forward`` then receives a view of each tensor passed
        to the module, and the caller a view of each tensor it returns; modifying them in place
        is an error. Global pre-hooks (:func:`register_module_full_backward_pre_hook`) run
        first; ``prepend=True`` puts this hook before the module's others.

        Example:
            >>> import chainrule as torch
            >>> lin = torch.nn.Linear(2, 1)
            >>> handle = lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
            >>> x = torch.ones(1, 2, requires_grad=True)
            >>> lin(x).sum().backward()
            >>> x.grad
            tensor([[0., 0.]])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        _insert_hook(self._backward_pre_hooks, handle, hook, prepend)
        return handle

    def register_backward_hook(
        self,
        hook: Callable[[Module, _grad_t, _grad_t], _grad_t | None],
    ) -> RemovableHandle:
        """The legacy backward hook, deprecated in favour of
        :meth:`register_full_backward_hook` (as in PyTorch).

        ``hook(module, grad_input, grad_output)`` is a hook on the ``grad_fn`` of the module's
        first output tensor: ``grad_input`` are the gradients of that node's inputs, which are
        the module's inputs only when ``forward`` is a single op. Calling the module warns
        (``FutureWarning``) when the hook will miss some gradients. It cannot be mixed with full
        backward hooks on one module.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_HOOKS_MESSAGE)
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_hook(
        self,
        hook: Callable[[Module, _grad_t, _grad_t], _grad_t | None],
        prepend: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the gradients of the module's
        positional tensor inputs are computed; it may return a new ``grad_input`` (a tuple of
        the same length) used in their place.

        ``grad_input`` has one entry per positional argument (None for non-tensors, zeros for
        a tensor that does not require grad, as PyTorch's; keyword arguments are ignored),
        ``grad_output`` one per output. When no input requires grad, the hook is called (with
        a warning) as soon as ``grad_output`` is known, with ``grad_input`` all None, and may
        only return None; when no output requires grad it is not called. As in PyTorch,
        ``forward`` then receives a view of each tensor passed to the module, and the caller a
        view of each tensor it returns; modifying them in place is an error. Global hooks
        (:func:`register_module_full_backward_hook`) run first; ``prepend=True`` puts this hook
        before the module's others. It cannot be mixed with :meth:`register_backward_hook` on
        one module.

        Example:
            >>> import chainrule as torch
            >>> lin = torch.nn.Linear(2, 1)
            >>> handle = lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
            >>> with torch.no_grad():
            ...     lin.weight.fill_(1.0)
            Parameter containing:
            tensor([[1., 1.]], requires_grad=True)
            >>> x = torch.ones(1, 2, requires_grad=True)
            >>> lin(x).sum().backward()
            >>> x.grad
            tensor([[2., 2.]])
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_HOOKS_MESSAGE)
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        _insert_hook(self._backward_hooks, handle, hook, prepend)
        return handle

    def _get_backward_hooks(self) -> tuple[list[Callable[..., Any]], list[Callable[..., Any]]]:
        """(full backward hooks, legacy backward hooks) to run: global ones first."""
        full_backward_hooks: list[Callable[..., Any]] = []
        if _global_is_full_backward_hook is True:
            full_backward_hooks += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full_backward_hooks += self._backward_hooks.values()
        non_full_backward_hooks: list[Callable[..., Any]] = []
        if _global_is_full_backward_hook is False:
            non_full_backward_hooks += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full_backward_hooks += self._backward_hooks.values()
        return full_backward_hooks, non_full_backward_hooks

    def _get_backward_pre_hooks(self) -> list[Callable[..., Any]]:
        """The backward pre-hooks to run: global ones first."""
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _maybe_warn_non_full_backward_hook(self, inputs: Any, result: Any, grad_fn: Node) -> None:
        """PyTorch's ``FutureWarning`` when a legacy backward hook will miss gradients."""
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not return a single "
                    "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                    "versions. This hook will be missing some of the grad_output. Please use "
                    "register_full_backward_hook to get the documented behavior.",
                    FutureWarning,
                    stacklevel=2,
                )
                return
        else:
            result = (result,)

        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not take as input a "
                    "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                    "future versions. This hook will be missing some of the grad_input. Please "
                    "use register_full_backward_hook to get the documented behavior.",
                    FutureWarning,
                    stacklevel=2,
                )
                return
        else:
            inputs = (inputs,)

        # Now inputs and result are tuples of tensors.
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn(
                "Using a non-full backward hook when outputs are nested in python data structure "
                "is deprecated and will be removed in future versions. This hook will be missing "
                "some grad_output.",
                FutureWarning,
                stacklevel=2,
            )
        elif len(out_grad_fn) > 1:
            warnings.warn(
                "Using a non-full backward hook when outputs are generated by different autograd "
                "Nodes is deprecated and will be removed in future versions. This hook will be "
                "missing some grad_output. Please use register_full_backward_hook to get the "
                "documented behavior.",
                FutureWarning,
                stacklevel=2,
            )
        else:
            # The grad_output part of the hook is most likely right.
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn(
                    "Using a non-full backward hook when the forward contains multiple autograd "
                    "Nodes is deprecated and will be removed in future versions. This hook will "
                    "be missing some grad_input. Please use register_full_backward_hook to get "
                    "the documented behavior.",
                    FutureWarning,
                    stacklevel=2,
                )

    # -- forward hooks -------------------------------------------------------------------------

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward``; it may return new ``args``.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs)`` and may return
        ``(args, kwargs)``.
        """
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        _insert_hook(self._forward_pre_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward``; it may return a new output.

        With ``with_kwargs=True`` the hook is ``hook(module, args, kwargs, output)``; with
        ``always_call=True`` it also runs (with the output so far, or None) when the forward or
        an earlier hook raises.
        """
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        _insert_hook(self._forward_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    # -- attributes ----------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(
                name, self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(chainrule.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_name(
                name,
                self.__dict__,
                self._parameters,
                self._buffers,
                self._non_persistent_buffers_set,
            )
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(chainrule.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(chainrule.nn.Buffer, chainrule.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_name(name: str, *stores: Any) -> None:
        for store in stores:
            if name in store:
                if isinstance(store, dict):
                    del store[name]
                else:
                    store.discard(name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            items = d.get(store)
            if items is not None and name in items:
                return items[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = set(dir(type(self))) | set(self.__dict__)
        attrs |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(a for a in attrs if not a[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    # -- registration --------------------------------------------------------------------------

    def _check_new_name(self, kind: str, name: Any, store: dict[str, Any]) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (e.g. batch norm's running mean).

        Persistent buffers are part of ``state_dict``.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(chainrule Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a parameter slot left empty) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(chainrule.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (also: ``self.name = module``)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The sub-module at dotted path ``target`` (``''`` is the module itself)."""
        if target == "":
            return self
        module: Module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return module._buffers[name]

    # -- traversal (explicit stacks: pre-order, children in assignment order) -------------------

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for this module and every descendant, pre-order."""
        seen: set[int] = set() if memo is None else {id(m) for m in memo}
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            if remove_duplicate:
                seen.add(id(module))
                if memo is not None:
                    memo.add(module)
            yield name, module
            children = [
                (name + ("." if name else "") + child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """This module and every descendant."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for the direct children."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, store: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` of this module and (with ``recurse``) its descendants."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters (each shared parameter once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` of this module and (with ``recurse``) its descendants."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self: T, fn: Callable[[Module], Any]) -> T:
        """Call ``fn`` on every sub-module (children first) and then on this module."""
        for module in _post_order(self):
            fn(module)
        return self

    # -- modes and gradients -------------------------------------------------------------------

    def train(self: T, mode: bool = True) -> T:
        """Set training mode (dropout active, batch norm uses batch statistics).

        As in PyTorch each child's own ``train`` is called, so subclasses can override it (this
        recursion is as deep as the module nesting, not the data).
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros)."""
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                grad = p._grad
                if grad._grad_node is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                if MUTATION_WATCH:
                    clone_saved_before_write(grad)
                grad._data[...] = 0
                bump_version(grad)

    # -- dtype and device ----------------------------------------------------------------------

    def _apply(self: T, fn: Callable[[Tensor], Tensor]) -> T:
        """Apply ``fn`` to every parameter, gradient and buffer (Tensors, under ``no_grad``), as
        PyTorch does: children first; a parameter keeps its identity when ``fn(param)`` is on a
        device of the same type (its ``.data`` becomes ``fn(param)``, its gradient's
        ``fn(grad)``), else (between the CPU and meta) it is replaced by a new Parameter (of the
        same ``requires_grad``; its gradient ``fn(grad)``), as PyTorch's tensors of different
        types cannot share a ``.data``; a buffer is replaced by ``fn(buffer)``. The walk uses a
        stack, and a module shared by two parents is visited twice, as PyTorch's recursion
        visits it."""
        for module in _post_order(self):
            for key, param in list(module._parameters.items()):
                if param is None:
                    continue
                with no_grad():
                    applied = fn(param)
                grad = param._grad
                if _same_device_type(param, applied):
                    param.data = applied
                    out_param = param
                else:
                    out_param = Parameter(applied, param._requires_grad)
                    module._parameters[key] = out_param
                if grad is not None:
                    with no_grad():
                        grad_applied = fn(grad)
                    if _same_device_type(grad, grad_applied):
                        out_param._grad.data = grad_applied
                    else:
                        out_param.grad = grad_applied.requires_grad_(grad._requires_grad)
            for name, buf in list(module._buffers.items()):
                if buf is not None:
                    module._buffers[name] = fn(buf)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Cast floating (and complex) parameters and buffers: ``to(dtype)``, ``to(device)``,
        ``to(tensor)``, ``to(device, dtype)``; ``memory_format=`` lays out their 4-d (and 5-d)
        ones so (``channels_last`` for a convolution's weight)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(
                f"to() received an invalid combination of arguments - got {sorted(kwargs)}"
            )
        for arg in args:
            if isinstance(arg, _dtype.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, str | int | _device):
                device = arg
        if device is not None:
            device = _device(device)  # (PyTorch's error for a device string it cannot read)
        if dtype is None and memory_format is None and device is None:
            return self
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
        if dtype is not None and dtype.is_complex:
            warnings.warn(
                "Complex modules are a new feature under active development whose design may "
                "change, and some modules might not work as expected when using complex tensors "
                "as parameters or buffers. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a "
                "complex module does not work as expected.",
                stacklevel=2,
            )

        def convert(t: Tensor) -> Tensor:
            castable = dtype is not None and (t.is_floating_point() or t.is_complex())
            cast = dtype if castable else None
            if device is not None:  # (cuda raises PyTorch's error; a meta tensor to the CPU too)
                try:
                    t = t.to(device)
                except NotImplementedError as error:
                    raise NotImplementedError(
                        f"{error} Please use torch.nn.Module.to_empty() instead of "
                        "torch.nn.Module.to() when moving module from meta to a different "
                        "device."
                    ) from None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(cast or t.dtype, memory_format=memory_format)
            return t if cast is None else t.to(cast)

        return self._apply(convert)

    def float(self: T) -> T:
        """Cast floating parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self: T) -> T:
        """Cast floating parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self: T) -> T:
        """Cast floating parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self: T) -> T:
        """Cast floating parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.to(_dtype.bfloat16) if t.is_floating_point() else t)

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Move parameters and buffers to ``device`` without copying their values (new
        uninitialised memory of the same shapes and dtypes): how a module made on the meta
        device gets real tensors, to be initialised or loaded afterwards."""
        if not recurse:
            raise NotImplementedError("chainrule's to_empty moves the whole module (recurse=True)")
        return self._apply(lambda t: empty_like(t, device=device))

    def cpu(self: T) -> T:
        """Its parameters and buffers on the CPU: where they are already, except a meta
        module's, which have no data to copy (PyTorch's error)."""
        return self._apply(lambda t: t.cpu())

    def cuda(self: T, device: Any = None) -> T:
        """chainrule has no CUDA backend."""
        raise AssertionError("Torch not compiled with CUDA enabled")

    def share_memory(self: T) -> T:
        """A no-op (kept for API compatibility)."""
        return self

    # -- state dict ----------------------------------------------------------------------------

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """An ordered dict of every parameter and persistent buffer, by dotted name (and each
        module's ``get_extra_state()`` under ``_extra_state`` when the module defines it).

        Values are detached tensors sharing memory with the module (``keep_vars=True``: the
        parameters themselves). Like PyTorch's, it carries ``_metadata`` (module versions).
        Each module's state-dict pre-hooks run before its entries are written, its post-hooks
        after its sub-modules' entries (the walk uses a stack, not recursion).
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        # (module, prefix, metadata, visited): a module is visited twice, before its children
        # (metadata, pre-hooks, own entries) and after them (post-hooks). A module shared by
        # two parents is saved under both names, as in PyTorch.
        stack: list[tuple[Module, str, dict[str, Any], bool]] = [(self, prefix, {}, False)]
        while stack:
            module, module_prefix, local_metadata, visited = stack.pop()
            if visited:
                result = module._run_state_dict_hooks(destination, module_prefix, local_metadata)
                if not stack:  # only the top module's hooks may replace what is returned
                    destination = result
                continue
            local_metadata = {"version": module._version}
            if hasattr(destination, "_metadata"):
                destination._metadata[module_prefix[:-1]] = local_metadata
            for hook in list(module._state_dict_pre_hooks.values()):
                hook(module, module_prefix, keep_vars)
            module._save_to_state_dict(destination, module_prefix, keep_vars)
            stack.append((module, module_prefix, local_metadata, True))
            for name, child in reversed(list(module._modules.items())):
                if child is not None:
                    stack.append((child, module_prefix + name + ".", {}, False))
        return destination

    def _run_state_dict_hooks(
        self, destination: Any, prefix: str, local_metadata: dict[str, Any]
    ) -> Any:
        for hook in list(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if result is not None:
                    destination = result
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict`` saved
        this module and its sub-modules; it may change ``state_dict`` in place (and must
        return None)."""
        # PyTorch marks hooks registered through the public API on the function itself.
        hook._from_public_api = True  # type: ignore[attr-defined]
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's private post-hook: it may return a new state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def get_extra_state(self) -> Any:
        """Extra state to save in ``state_dict`` (under ``_extra_state``); a module defines it,
        with ``set_extra_state``, to have it saved."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore the extra state ``get_extra_state`` returned (called by
        ``load_state_dict``)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def _has_extra_state(self, method: str) -> bool:
        """Whether the module's class overrides ``get_extra_state`` / ``set_extra_state``."""
        return getattr(type(self), method, None) is not getattr(Module, method)

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def _local_state(self) -> dict[str, Tensor]:
        state: dict[str, Tensor] = {}
        for name, param in self._parameters.items():
            if param is not None:
                state[name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                state[name] = buf
        return state

    def _upgrade_state_dict(
        self, state_dict: dict[str, Any], prefix: str, version: int | None
    ) -> None:
        """Fill in keys older versions of this module did not save (see BatchNorm)."""

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (values are copied in place).

        With ``strict``, missing and unexpected keys are errors, reported as PyTorch reports
        them. Shapes must match. Atomic: if anything is wrong, nothing is changed.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        state = OrderedDict(state_dict)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        copies: list[tuple[Module, str, Tensor, Any]] = []
        extras: list[tuple[Module, Any]] = []
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            prefix = module_prefix + "." if module_prefix else ""
            local_meta = {} if metadata is None else metadata.get(module_prefix, {})
            if assign:
                local_meta = {**local_meta, "assign_to_params_buffers": True}
            if module._load_state_dict_pre_hooks:
                # As PyTorch's recursion, a sub-module's hooks see the entries under its prefix;
                # what they change there is what is loaded.
                local = (
                    state
                    if not prefix
                    else OrderedDict((k, v) for k, v in state.items() if k.startswith(prefix))
                )
                for hook in list(module._load_state_dict_pre_hooks.values()):
                    hook(local, prefix, local_meta, True, missing, unexpected, errors)
                if local is not state:
                    for key in [k for k in state if k.startswith(prefix)]:
                        del state[key]
                    state.update(local)
            module._upgrade_state_dict(state, prefix, local_meta.get("version"))
            local = module._local_state()
            for name, target in local.items():
                key = prefix + name
                if key not in state:
                    missing.append(key)
                    continue
                value = state[key]
                if not isinstance(value, Tensor):
                    errors.append(
                        f'While copying the parameter named "{key}", expected chainrule.Tensor '
                        f"or Tensor-like object from checkpoint but received {type(value)}"
                    )
                    continue
                if target._data.ndim == 0 and value._data.shape == (1,):
                    value = value[0]
                if value._data.shape != target._data.shape:
                    errors.append(
                        f"size mismatch for {key}: copying a param with shape {value.shape} from "
                        f"checkpoint, the shape in current model is {target.shape}."
                    )
                    continue
                copies.append((module, name, target, value))
            extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
            if module._has_extra_state("set_extra_state"):
                if extra_key in state:
                    extras.append((module, state[extra_key]))
                else:
                    missing.append(extra_key)
            elif extra_key in state:
                unexpected.append(extra_key)
            for key in state:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix) :].partition(".")
                # A dotted rest must lead to a sub-module, a plain one to an entry.
                if head not in (module._modules if dot else local):
                    unexpected.append(key)
        post_hooked = [m for m in _load_order(self) if m._load_state_dict_post_hooks]
        if post_hooked and not errors:
            # The post-hooks see the loaded values and may change the key lists in place, so
            # (as in PyTorch) the values are copied first and the strict check comes after.
            self._copy_loaded(copies, extras, assign)
            copies, extras = [], []
        if post_hooked:
            keys = _IncompatibleKeys(missing, unexpected)
            for module in post_hooked:
                for hook in list(module._load_state_dict_post_hooks.values()):
                    if hook(module, keys) is not None:
                        raise AssertionError(
                            "Hooks registered with ``register_load_state_dict_post_hook`` are "
                            "not expected to return new values, if incompatible_keys need to "
                            "be modified, it should be done inplace."
                        )
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        self._copy_loaded(copies, extras, assign)
        return _IncompatibleKeys(missing, unexpected)

    @staticmethod
    def _copy_loaded(
        copies: list[tuple[Module, str, Tensor, Any]],
        extras: list[tuple[Module, Any]],
        assign: bool,
    ) -> None:
        with no_grad():
            for module, name, target, value in copies:
                if assign:
                    _assign(module, name, target, value)
                else:
                    if MUTATION_WATCH:
                        clone_saved_before_write(target)  # (PyTorch's copy_)
                    target._data[...] = value._data.astype(target._data.dtype, copy=False)
                    bump_version(target)
        for module, extra in extras:
            module.set_extra_state(extra)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before ``load_state_dict`` loads this module; it may
        change ``state_dict`` (a copy of the one given) and the lists in place."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """PyTorch's private form: without ``with_module`` the hook does not take the module."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(
            hook, self if with_module else None
        )
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded this module
        and its sub-modules; it may change ``incompatible_keys.missing_keys`` and
        ``.unexpected_keys`` in place (which the strict check then sees) and must return
        None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # -- printing ------------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, shown in its repr (subclasses override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _on_device(init: Callable[..., None]) -> Callable[..., None]:
    """A built-in module's ``__init__`` that makes its parameters and buffers on ``device=``
    (``nn.Linear(2, 3, device="meta")``), as PyTorch's factory keyword arguments do."""

    @functools.wraps(init)
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        where = kwargs.get("device")
        if where is None:
            init(self, *args, **kwargs)
            return
        with where if isinstance(where, _device) else _device(where):
            init(self, *args, **kwargs)

    return __init__


def _load_order(root: Module) -> list[Module]:
    """The modules in the order ``load_state_dict`` finishes them (children before their
    parent, a module shared by two parents once under each, as PyTorch's recursion)."""
    out: list[Module] = []
    stack: list[tuple[Module, bool]] = [(root, False)]
    while stack:
        module, expanded = stack.pop()
        if expanded:
            out.append(module)
            continue
        stack.append((module, True))
        for child in reversed([c for c in module._modules.values() if c is not None]):
            stack.append((child, False))
    return out


def _same_device_type(t: Tensor, applied: Tensor) -> bool:
    """Whether ``applied`` can become ``t``'s ``.data`` in ``Module._apply``: PyTorch's
    ``_has_compatible_shallow_copy_type`` (a CPU and a meta tensor are of different types)."""
    return t.device.type == applied.device.type


def _post_order(root: Module) -> list[Module]:
    """Every module once (duplicates included as PyTorch's ``apply`` visits them), children
    before their parent, siblings in order."""
    out: list[Module] = []
    stack: list[tuple[Module, bool]] = [(root, False)]
    while stack:
        module, expanded = stack.pop()
        if expanded:
            out.append(module)
            continue
        stack.append((module, True))
        for child in reversed([c for c in module.children()]):
            stack.append((child, False))
    return out


def _assign(module: Module, name: str, target: Tensor, value: Tensor) -> None:
    """``load_state_dict(assign=True)``: the checkpoint's tensor replaces the module's."""
    if isinstance(target, Parameter):
        module._parameters[name] = Parameter(value.detach(), target._requires_grad)
    else:
        module._buffers[name] = value
