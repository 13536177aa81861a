"""``__torch_function__``: how Tensor subclasses and tensor-like objects take over chainrule's
functions and methods, as PyTorch's protocol (``torch.overrides``) lets them.

A class with a ``__torch_function__(cls, func, types, args=(), kwargs=None)`` classmethod is
*overriding*: when an instance of it is an argument of a public function (``chainrule.add``,
``nn.functional.relu``, ``Tensor.sum`` ...), the function calls that method instead of
computing, with itself as ``func``. Tensor's own implementation runs ``func`` with subclass
dispatch disabled and gives tensor results the subclass's type, so a subclass passes through
ops (and autograd) as itself; :class:`~chainrule.nn.Parameter` opts out
(:func:`disabled_torch_function_impl`), so ops on parameters give plain tensors, as in PyTorch.

Where it is checked (no cost for plain tensors):

* the op table's public functions: a subclass argument takes the general path, which hands
  the call to :func:`handle_torch_function` (``ops._dispatch``);
* the other public functions (written by hand): wrapped when the namespace is built
  (:func:`overridable`);
* methods: a subclass gets methods that dispatch (:func:`_install_methods`), so a plain
  tensor's methods stay as they are.

A :class:`TorchFunctionMode` entered in a thread is asked first, for every call, plain tensors
included: the ops' fast paths read one counter of entered modes.

Not done: attribute reads (``.shape``, ``.grad``) do not dispatch, where PyTorch's do.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ._tensor import Tensor

__all__ = [
    "BaseTorchFunctionMode",
    "MODES_ENTERED",
    "TorchFunctionMode",
    "modes_active",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "disabled_torch_function_impl",
    "get_default_nowrap_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "make_namespace_overridable",
    "operator_torch_function",
    "overridable",
    "overrides_enabled",
    "resolve_name",
]

# Subclass dispatch switched off (inside Tensor.__torch_function__, DisableTorchFunctionSubclass)
# and all dispatch switched off (DisableTorchFunction), per thread and task as PyTorch's.
_SUBCLASS_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chainrule_torch_function_subclass_off", default=False
)
_ALL_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chainrule_torch_function_off", default=False
)
# The TorchFunctionModes entered in this thread (innermost last), and how many are entered in
# any thread: the ops' fast paths read only the count (``MODES_ENTERED[0]``), which is 0 unless a
# program uses modes.
_MODE_STACK: contextvars.ContextVar[tuple[TorchFunctionMode, ...]] = contextvars.ContextVar(
    "chainrule_torch_function_modes", default=()
)
MODES_ENTERED = [0]


class _DisabledTorchFunctionImpl:
    """The ``__torch_function__`` of a class that opts out of the protocol (``Parameter``;
    ``torch._C._disabled_torch_function_impl``): its instances are treated as plain tensors.
    A callable object, not a function, so that as a class attribute it is not bound."""

    def __call__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_function_impl>"


disabled_torch_function_impl = _DisabledTorchFunctionImpl()


def overrides_enabled() -> bool:
    """Whether a subclass's ``__torch_function__`` is called now (not inside
    ``DisableTorchFunctionSubclass`` or ``DisableTorchFunction``)."""
    return not (_SUBCLASS_OFF.get() or _ALL_OFF.get())


class DisableTorchFunctionSubclass:
    """Context manager (PyTorch's ``torch._C.DisableTorchFunctionSubclass``): within it,
    subclasses' ``__torch_function__`` are not called and they compute as plain tensors."""

    def __enter__(self) -> DisableTorchFunctionSubclass:
        self._token = _SUBCLASS_OFF.set(True)
        return self

    def __exit__(self, *exc: object) -> None:
        _SUBCLASS_OFF.reset(self._token)


class DisableTorchFunction:
    """Context manager (PyTorch's ``torch._C.DisableTorchFunction``): within it, no
    ``__torch_function__`` is called, of a subclass or of any other type."""

    def __enter__(self) -> DisableTorchFunction:
        self._token = _ALL_OFF.set(True)
        return self

    def __exit__(self, *exc: object) -> None:
        _ALL_OFF.reset(self._token)


class TorchFunctionMode:
    """A context manager whose ``__torch_function__(func, types, args=(), kwargs=None)`` is
    called for every public function and method used inside it, plain tensors included
    (``torch.overrides.TorchFunctionMode``). While the handler runs, the mode is off (so
    calling ``func`` computes, or reaches the next mode out); modes are asked before
    subclasses. Subclass it and define ``__torch_function__``."""

    def __init__(self) -> None:
        self._tokens: list[contextvars.Token[tuple[TorchFunctionMode, ...]]] = []

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        if not hasattr(self, "_tokens"):
            self._tokens = []  # (a subclass whose __init__ did not call ours)
        self._tokens.append(_MODE_STACK.set((*_MODE_STACK.get(), self)))
        if not MODES_ENTERED[0]:
            _swap_tensor_methods(dispatching=True)
        MODES_ENTERED[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        MODES_ENTERED[0] -= 1
        if not MODES_ENTERED[0]:
            _swap_tensor_methods(dispatching=False)
        _MODE_STACK.reset(self._tokens.pop())


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose handler just calls ``func`` (``torch.overrides.BaseTorchFunctionMode``):
    subclass it to handle some functions and leave the rest to it."""

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        return func(*args, **(kwargs or {}))


def modes_active() -> bool:
    """Whether a TorchFunctionMode is entered in this thread and dispatch is on."""
    return bool(_MODE_STACK.get()) and not _ALL_OFF.get()


def _visible_modes() -> list[TorchFunctionMode]:
    # (the profiler's mode, ``_hidden_mode``, is not one PyTorch's stack would show)
    return [mode for mode in _MODE_STACK.get() if not getattr(mode, "_hidden_mode", False)]


def _get_current_function_mode() -> TorchFunctionMode | None:
    """The innermost mode entered in this thread (None without one)."""
    stack = _visible_modes()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """The modes entered in this thread, outermost first."""
    return _visible_modes()


def _len_torch_function_stack() -> int:
    """How many modes are entered in this thread (``torch._C._len_torch_function_stack``)."""
    return len(_visible_modes())


def _implementation(cls: type) -> Any:
    """The function behind ``cls.__torch_function__`` (None when the type has none)."""
    found = inspect.getattr_static(cls, "__torch_function__", None)
    if isinstance(found, classmethod | staticmethod):
        return found.__func__
    return found


def _overriding(cls: type) -> bool:
    """Whether ``cls``'s instances dispatch: a ``__torch_function__`` that is not the opt-out,
    on a type other than Tensor itself."""
    if cls is Tensor or cls in _NUMBERS or cls is str:
        return False  # (numbers: vmap's rules pass sizes and dims through here, many a call)
    if issubclass(cls, Tensor):
        return cls._tf_active  # type: ignore[attr-defined]
    impl = _implementation(cls)
    return impl is not None and impl is not disabled_torch_function_impl


def _candidates(relevant_args: Iterable[Any]) -> Iterable[Any]:
    """The arguments whose type may override: each, and the elements of lists and tuples
    (``cat([a, b])``)."""
    for arg in relevant_args:
        if type(arg) is list or type(arg) is tuple:
            yield from arg
        else:
            yield arg


def _overloaded_args(relevant_args: Iterable[Any]) -> list[Any]:
    """One argument per overriding type, in order of appearance but subclasses before their
    base classes (PyTorch's order of calls)."""
    types: set[type] = set()
    overloaded: list[Any] = []
    for arg in _candidates(relevant_args):
        cls = type(arg)
        if cls in types or not _overriding(cls):
            continue
        types.add(cls)
        index = len(overloaded)
        for i, old in enumerate(overloaded):
            if issubclass(cls, type(old)):
                index = i
                break
        overloaded.insert(index, arg)
    return overloaded


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` has a type whose ``__torch_function__`` would be called
    now (the elements of a list among them are not looked at, as in PyTorch)."""
    if modes_active():
        return True
    if not overrides_enabled():
        return False
    return any(_overriding(type(arg)) for arg in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """:func:`has_torch_function` of one argument."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """:func:`has_torch_function` of the arguments."""
    return has_torch_function(args)


def is_tensor_like(inp: Any) -> bool:
    """True for a tensor or an object whose type has ``__torch_function__``."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def resolve_name(f: Any) -> str | None:
    """The qualified public name of a function or method (``chainrule.add``,
    ``chainrule.Tensor.sum``), as PyTorch's messages name it."""
    if isinstance(f, property | staticmethod | classmethod):
        f = f.__func__ if not isinstance(f, property) else f.fget
    name = getattr(f, "__name__", None)
    if name is None:
        return None
    if getattr(Tensor, name, None) is f or _ORIGINAL_METHODS.get(name) is f:
        return f"chainrule.Tensor.{name}"
    module = getattr(f, "__module__", None) or "chainrule"
    if module.startswith("chainrule.ops") or module == "chainrule":
        module = "chainrule"
    elif module.startswith("chainrule.nn.functional") or "nn_ops" in module:
        module = "chainrule.nn.functional"
    return f"{module}.{name}"


def handle_torch_function(
    public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Call the ``__torch_function__`` of the overriding types among ``relevant_args`` (subclasses
    first), with ``public_api`` as ``func``, until one does not return ``NotImplemented``; that
    result is the call's. PyTorch's TypeError when all of them return ``NotImplemented``."""
    result = _call_overrides(public_api, relevant_args, args, kwargs)
    if result is _NONE_TOOK_IT:
        raise _dispatch_failed(public_api, relevant_args)
    return result


def _dispatch_failed(public_api: Callable[..., Any], relevant_args: Iterable[Any]) -> TypeError:
    """PyTorch's TypeError when every handler returned ``NotImplemented``."""
    types = tuple(type(arg) for arg in _overloaded_args(relevant_args))
    modes = _MODE_STACK.get()[-1:] if modes_active() else ()
    listed = "".join(f"  - mode object {mode!r}\n" for mode in modes)
    listed += "".join(f"  - tensor subclass {cls}\n" for cls in types)
    return TypeError(
        f"Multiple dispatch failed for '{resolve_name(public_api)}'; all "
        f"__torch_function__ handlers returned NotImplemented:\n\n{listed}\nFor more "
        "information, try re-running with TORCH_LOGS=not_implemented"
    )


def operator_torch_function(public_api: Callable[..., Any], left: Any, right: Any) -> Any:
    """``left <op> right`` handed to the overriding types among the operands; ``NotImplemented``
    (Python's TypeError for the operator then) when all of them return ``NotImplemented``."""
    result = _call_overrides(public_api, (left, right), (left, right), {})
    return NotImplemented if result is _NONE_TOOK_IT else result


_NONE_TOOK_IT: Any = object()
_ABSENT: Any = object()


def _static_torch_function(cls: type) -> Any:
    """``inspect.getattr_static(cls, "__torch_function__")``, by the MRO's own dicts when the
    metaclass is ``type`` (the same answer, without getattr_static's general machinery: this
    runs for every call dispatched to a subclass, ``vmap``'s batched tensors among them)."""
    if type(cls) is type:
        for klass in cls.__mro__:
            found = klass.__dict__.get("__torch_function__", _ABSENT)
            if found is not _ABSENT:
                return found
    return inspect.getattr_static(cls, "__torch_function__")


def _call_overrides(
    public_api: Callable[..., Any],
    relevant_args: Iterable[Any],
    args: tuple,
    kwargs: dict[str, Any],
    overloaded: list[Any] | None = None,
) -> Any:
    """The dispatch itself (``overloaded``: the overriding arguments when the caller found them
    already, for ``relevant_args`` with dispatch on)."""
    if overloaded is None:
        overloaded = _overloaded_args(relevant_args) if overrides_enabled() else []
    types = tuple([type(arg) for arg in overloaded])
    stack = _MODE_STACK.get()
    if stack and not _ALL_OFF.get():
        mode = stack[-1]
        token = _MODE_STACK.set(stack[:-1])  # (the handler runs with its mode off)
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            _MODE_STACK.reset(token)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        cls = type(arg)
        found = _static_torch_function(cls)
        if isinstance(found, classmethod):
            result = cls.__torch_function__(public_api, types, args, kwargs)
        else:
            warnings.warn(
                "Defining your `__torch_function__` as a plain method is deprecated and will be "
                "an error in future, please define it as a classmethod.",
                UserWarning,
                stacklevel=3,
            )
            result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    return _NONE_TOOK_IT


def get_default_nowrap_functions() -> set[Callable[..., Any]]:
    """Functions whose results Tensor's ``__torch_function__`` returns as they are (not as the
    subclass): reading ``._base`` and ``.grad``."""
    return {Tensor._base.__get__, Tensor.grad.__get__}  # type: ignore[attr-defined]


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with its tensors (also in lists and tuples) made instances of ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, tuple | list):
        converted = [_convert(r, cls) for r in ret]
        if hasattr(type(ret), "_make"):  # a named tuple (the return types of max, sort ...)
            return type(ret)._make(converted)  # type: ignore[union-attr]
        return type(ret)(converted)
    return ret


def _tensor_torch_function(
    cls: type,
    func: Callable[..., Any],
    types: tuple,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
) -> Any:
    """Tensor's ``__torch_function__``: run ``func`` with subclass dispatch off, and give
    tensor results the subclass's type (``cls``). ``NotImplemented`` when a type in ``types``
    is not a base of ``cls`` (that type's method is tried instead)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _NOWRAP:
            return ret
        return _convert(ret, cls)


_NOWRAP = get_default_nowrap_functions()  # (built once, not per dispatched call)


# ----------------------------------------------------------------------------------------------
# Subclasses' methods

# Tensor's methods that never dispatch: object plumbing.
_NOT_DISPATCHED = frozenset(
    {
        "__init__",
        "__new__",
        "__init_subclass__",
        "__torch_function__",
        "__getattribute__",
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__class__",
        "__reduce__",
        "__reduce_ex__",
        "__sizeof__",
        "__subclasshook__",
        "__dir__",
        "__getstate__",
        "__setstate__",
        "_make_subclass",
        "as_subclass",
    }
)
# An operator's dispatch names the method PyTorch names (``m + 1`` is ``Tensor.add(m, 1)``).
_OPERATOR_METHODS = {
    "__add__": "add",
    "__radd__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__truediv__": "div",
    "__matmul__": "matmul",
    "__neg__": "neg",
}
#: ``a op= b`` dispatches as the in-place method PyTorch names (``y *= s`` is ``Tensor.mul_``;
#: the bitwise ones, ``__iand__`` ..., keep their own names).
AUGMENTED_METHODS = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ipow__": "pow_",
    "__imod__": "remainder_",
    "__ifloordiv__": "floor_divide_",
}
_OPERATOR_METHODS.update(AUGMENTED_METHODS)
_NUMBERS = (int, float, bool, complex)
# name -> Tensor's own method, as it was when the first subclass asked for it.
_ORIGINAL_METHODS: dict[str, Callable[..., Any]] = {}
_DISPATCHING: dict[str, Callable[..., Any]] = {}


_METHOD_NAMES: list[str] = []


def _tensor_method_names() -> list[str]:
    """Tensor's methods that dispatch (read once: they are all attached by then)."""
    if _METHOD_NAMES:
        return _METHOD_NAMES
    names = _METHOD_NAMES
    for name in dir(Tensor):
        if name in _NOT_DISPATCHED:
            continue
        found = inspect.getattr_static(Tensor, name)
        if inspect.isfunction(found):
            names.append(name)
    return names


def _dispatching_method(name: str) -> Callable[..., Any]:
    """``Tensor.<name>`` for an overriding subclass: hands the call to
    :func:`handle_torch_function` while dispatch is on."""
    method = _DISPATCHING.get(name)
    if method is not None:
        return method
    original = _ORIGINAL_METHODS.setdefault(name, getattr(Tensor, name))
    operator = name in _OPERATOR_METHODS
    func = getattr(Tensor, _OPERATOR_METHODS[name]) if operator else original

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        enabled = overrides_enabled()
        modes = modes_active()
        if not (enabled or modes):
            return original(self, *args, **kwargs)
        relevant = (self, *args, *kwargs.values()) if kwargs else (self, *args)
        overloaded = _overloaded_args(relevant) if enabled else []
        if not modes and not overloaded:
            # Plain tensors while the mode that swapped the methods in is not asked (its
            # handler is running, or it is another thread's): nobody to dispatch to.
            return original(self, *args, **kwargs)
        if (
            operator
            and args
            and not (
                isinstance(args[0], Tensor)
                or type(args[0]) in _NUMBERS
                or hasattr(type(args[0]), "__torch_function__")
                or _is_numpy_scalar(args[0])
            )
        ):
            return NotImplemented
        if operator:  # all handlers declining: NotImplemented, so Python raises its error
            result = _call_overrides(func, relevant, (self, *args), kwargs, overloaded)
            return NotImplemented if result is _NONE_TOOK_IT else result
        result = _call_overrides(func, relevant, (self, *args), kwargs, overloaded)
        if result is _NONE_TOOK_IT:
            raise _dispatch_failed(func, relevant)
        return result

    functools.update_wrapper(method, original)
    _DISPATCHING[name] = method
    return method


def _is_numpy_scalar(value: Any) -> bool:
    return isinstance(value, np.generic)


def _swap_tensor_methods(dispatching: bool) -> None:
    """While a mode is entered (in any thread), Tensor's own methods written by hand dispatch
    too, so a mode sees ``Tensor.sum`` for ``x.sum()`` (an op's method checks on its own path);
    Tensor's methods are restored when the last mode exits, so plain tensors pay nothing."""
    for name in _tensor_method_names():
        if dispatching:
            current = inspect.getattr_static(Tensor, name)
            if getattr(current, "op", None) is None and current is not _DISPATCHING.get(name):
                setattr(Tensor, name, _dispatching_method(name))
        elif name in _DISPATCHING and inspect.getattr_static(Tensor, name) is _DISPATCHING[name]:
            setattr(Tensor, name, _ORIGINAL_METHODS[name])


def _install_methods(cls: type) -> None:
    """Give an overriding subclass dispatching versions of Tensor's methods, except those it
    (or a base between it and Tensor) defines itself."""
    own: set[str] = set()
    for klass in cls.__mro__:
        if klass is Tensor:
            break
        own.update(vars(klass))
    for name in _tensor_method_names():
        if name not in own:
            setattr(cls, name, _dispatching_method(name))


def _init_subclass(cls: type, **kwargs: Any) -> None:
    """Tensor's ``__init_subclass__``: note whether the subclass overrides, and if so give it
    dispatching methods."""
    super(Tensor, cls).__init_subclass__(**kwargs)
    impl = _implementation(cls)
    cls._tf_active = impl is not disabled_torch_function_impl  # type: ignore[attr-defined]
    if cls._tf_active:  # type: ignore[attr-defined]
        _install_methods(cls)


def overridable(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (a public function written by hand, not an op of the table) checking its
    arguments for overriding types first; returned unchanged when it is an op's public function
    (those check on their own path)."""
    if getattr(function, "op", None) is not None or not inspect.isfunction(function):
        return function

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if MODES_ENTERED[0] and modes_active():
            return handle_torch_function(checked, (*args, *kwargs.values()), *args, **kwargs)
        for arg in args:
            if type(arg) is not Tensor and _may_override(arg):
                return _handle_if_enabled(checked, function, args, kwargs)
        if kwargs:
            for arg in kwargs.values():
                if type(arg) is not Tensor and _may_override(arg):
                    return _handle_if_enabled(checked, function, args, kwargs)
        return function(*args, **kwargs)

    return checked


def _may_override(arg: Any) -> bool:
    cls = type(arg)
    if cls in _NUMBERS or arg is None or cls is str:
        return False
    if cls is list or cls is tuple:
        return any(type(a) is not Tensor and _may_override(a) for a in arg)
    return _overriding(cls)


def _handle_if_enabled(
    public: Callable[..., Any], function: Callable[..., Any], args: tuple, kwargs: dict[str, Any]
) -> Any:
    if not overrides_enabled():
        return function(*args, **kwargs)
    return handle_torch_function(public, (*args, *kwargs.values()), *args, **kwargs)


def make_namespace_overridable(namespace: dict[str, Any], names: Iterable[str]) -> None:
    """Replace each function in ``names`` of a public ``namespace`` (a module's globals) that is
    written by hand in ``chainrule.ops`` with its :func:`overridable` form. Creation functions
    (``tensor``, ``zeros`` ...) take no tensors and stay as they are, but for ``*_like``."""
    for name in names:
        function = namespace.get(name)
        module = getattr(function, "__module__", "") or ""
        if not inspect.isfunction(function) or not module.startswith(
            ("chainrule.ops", "chainrule.nn.functional")
        ):
            continue
        if (
            module == "chainrule.ops.creation"
            and not name.endswith("_like")
            and name not in _CREATION_TAKING_TENSORS
        ):
            continue
        namespace[name] = overridable(function)


#: The random functions of ``chainrule.ops.creation`` that take tensors (means, standard
#: deviations): a tensor subclass or ``vmap``'s batched tensors see them.
_CREATION_TAKING_TENSORS = frozenset({"normal"})


def install() -> None:
    """Give Tensor the protocol: its ``__torch_function__`` and ``__init_subclass__``."""
    Tensor._tf_active = False  # type: ignore[attr-defined]
    Tensor.__torch_function__ = classmethod(_tensor_torch_function)  # type: ignore[attr-defined]
    Tensor.__init_subclass__ = classmethod(_init_subclass)  # type: ignore[assignment,method-assign]


install()
