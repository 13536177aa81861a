"""Global autograd state: grad mode, inference mode and anomaly mode, one place, per thread.

Grad mode and inference mode are thread-local (as in PyTorch): turning gradients off in one
thread does not affect another. Anomaly mode is process-wide, as PyTorch's (one switch for every
thread). The context managers restore the previous value in ``finally`` and also work as
decorators.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .forward_grad import is_fwd_grad_enabled, set_fwd_grad_enabled

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "is_multithreading_enabled",
    "set_multithreading_enabled",
    "enforce_grad_layout_policy",
    "is_grad_layout_enforcement_enabled",
    "set_grad_layout_enforcement_enabled",
]

F = TypeVar("F", bound=Callable[..., Any])


# The switches are bits of one context variable: reading it is one C call (cheaper than a
# threading.local attribute), each thread starts from the default, and a token restores the
# previous value exactly.
GRAD = 1
INFERENCE = 8
SAVED_HOOKS = 16  # a saved_tensors_hooks block is active (autograd/graph.py)
NO_MULTITHREADING = 32  # set_multithreading_enabled(False) (no effect: one thread runs backward)

MODE: contextvars.ContextVar[int] = contextvars.ContextVar(
    "chainrule_autograd_mode", default=GRAD
)
mode_get = MODE.get


def _set_flag(flag: int, on: bool) -> contextvars.Token[int]:
    current = MODE.get()
    return MODE.set(current | flag if on else current & ~flag)


class _State:
    """Attribute-style view of the switches (``state.grad_enabled = False``) for non-hot code."""

    __slots__ = ()

    @property
    def grad_enabled(self) -> bool:
        return bool(MODE.get() & GRAD)

    @grad_enabled.setter
    def grad_enabled(self, value: bool) -> None:
        _set_flag(GRAD, value)

    @property
    def inference(self) -> bool:
        return bool(MODE.get() & INFERENCE)

    @inference.setter
    def inference(self, value: bool) -> None:
        _set_flag(INFERENCE, value)

    @property
    def anomaly(self) -> bool:
        return ANOMALY_STATE.enabled

    @anomaly.setter
    def anomaly(self, value: bool) -> None:
        ANOMALY_STATE.enabled = bool(value)

    @property
    def anomaly_check_nan(self) -> bool:
        return ANOMALY_STATE.check_nan

    @anomaly_check_nan.setter
    def anomaly_check_nan(self, value: bool) -> None:
        ANOMALY_STATE.check_nan = bool(value)


class _AnomalyState:
    """Anomaly mode's two switches, one for the whole process as PyTorch's ``AnomalyMode``:
    enabled in one thread, on in all (the recorder and the engine read ``enabled``)."""

    __slots__ = ("enabled", "check_nan")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


ANOMALY_STATE = _AnomalyState()
state = _State()

# How many inference_mode blocks are open in any thread: the hot paths read this plain number
# and look at the (per-thread) mode only when it is non-zero.
INFERENCE_BLOCKS = [0]


def is_grad_enabled() -> bool:
    """Whether operations record a graph in this thread (``torch.is_grad_enabled``)."""
    return bool(MODE.get() & GRAD)


def is_multithreading_enabled() -> bool:
    """Whether backward may use worker threads in this thread's passes
    (``torch.autograd.is_multithreading_enabled``). chainrule always runs backward on the
    calling thread; the switch is kept, per thread, as PyTorch keeps it."""
    return not MODE.get() & NO_MULTITHREADING


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is active in this thread."""
    return bool(MODE.get() & INFERENCE)


class _DecoratorContextManager:
    """A context manager that can also decorate a function (or a generator function)."""

    def __call__(self, func: F) -> F:
        if inspect.isclass(func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = func
            # As PyTorch: calling the result constructs the class inside the context.
            return lambda *args, **kwargs: self._construct(cls, args, kwargs)  # type: ignore
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)  # type: ignore[return-value]

        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]

    def _wrap_generator(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any) -> Any:
            gen = func(*args, **kwargs)
            # (A StopIteration of the wrapped generator ends this one with its value: raised
            # here it would become a RuntimeError, PEP 479.)
            try:
                with self.clone():
                    response = gen.send(None)
            except StopIteration as stop:
                return stop.value
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with self.clone():
                        gen.close()
                    raise
                except BaseException as exc:  # forward throws into the wrapped generator
                    try:
                        with self.clone():
                            response = gen.throw(exc)
                    except StopIteration as stop:
                        return stop.value
                else:
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as stop:
                        return stop.value

        return generator

    def _construct(self, cls: type, args: tuple, kwargs: dict[str, Any]) -> Any:
        with self.clone():
            return cls(*args, **kwargs)

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


class _BareDecorator(_DecoratorContextManager):
    """Also usable as ``@no_grad`` without parentheses, as in PyTorch 2."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)


class no_grad(_BareDecorator):  # noqa: N801 - PyTorch's public name
    """Disable graph recording in this thread.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.prev


class enable_grad(_BareDecorator):  # noqa: N801 - PyTorch's public name
    """Enable graph recording in this thread (e.g. inside a ``no_grad`` block)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):  # noqa: N801 - PyTorch's public name
    """Set grad mode on or off; takes effect at once, and as a context manager restores it.

    Example:
        >>> import chainrule as torch
        >>> _ = torch.set_grad_enabled(False)
        >>> torch.is_grad_enabled()
        False
        >>> _ = torch.set_grad_enabled(True)
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                f"{type(mode).__name__}"
            )
        self.prev = state.grad_enabled
        self.mode = mode
        state.grad_enabled = mode

    def __call__(self, func: F) -> F:
        # Used as a decorator: undo the immediate effect of construction.
        state.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        state.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.prev

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_BareDecorator):  # noqa: N801 - PyTorch's public name
    """Like ``no_grad``, and tensors made inside are inference tensors (``is_inference()``: no
    version counter, never saved for backward, not modified in place outside inference mode).
    ``mode=False`` turns it off inside an enclosing one (and grad mode on), as PyTorch's."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev_grad = True
        self.prev_inference = False
        self.prev_fwd_grad = True

    def __enter__(self) -> None:
        self.prev_grad = state.grad_enabled
        self.prev_inference = state.inference
        # (forward grad mode follows, as PyTorch's InferenceMode: off inside, on in mode=False)
        self.prev_fwd_grad = is_fwd_grad_enabled()
        set_fwd_grad_enabled(not self.mode)
        if self.mode:
            state.grad_enabled = False
            state.inference = True
            INFERENCE_BLOCKS[0] += 1
        else:  # PyTorch's InferenceMode(false): grad mode on, inference mode off
            state.grad_enabled = True
            state.inference = False

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self.prev_grad
        state.inference = self.prev_inference
        set_fwd_grad_enabled(self.prev_fwd_grad)
        if self.mode:
            INFERENCE_BLOCKS[0] -= 1

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (in the whole process, as in PyTorch)."""
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward outputs for NaN."""
    return state.anomaly_check_nan


class detect_anomaly(_DecoratorContextManager):  # noqa: N801 - PyTorch's public name
    """Record forward tracebacks on every node and check backward outputs for NaN."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.prev = False
        self.prev_check_nan = True

    def __enter__(self) -> None:
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )
        self.prev = state.anomaly
        self.prev_check_nan = state.anomaly_check_nan
        state.anomaly = True
        state.anomaly_check_nan = self.check_nan

    def __exit__(self, *exc: object) -> None:
        state.anomaly = self.prev
        state.anomaly_check_nan = self.prev_check_nan

    def clone(self) -> detect_anomaly:
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):  # noqa: N801 - PyTorch's public name
    """Turn anomaly detection on or off; takes effect at once, restores as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = state.anomaly
        self.prev_check_nan = state.anomaly_check_nan
        self.mode = mode
        self.check_nan = check_nan
        state.anomaly = mode
        state.anomaly_check_nan = check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.anomaly = self.prev
        state.anomaly_check_nan = self.prev_check_nan

    def clone(self) -> set_detect_anomaly:
        return self.__class__(self.mode, self.check_nan)


class set_multithreading_enabled(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """Enable or disable multithreaded backward (as a function, or as a context manager that
    restores the previous setting on exit), as PyTorch's."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_multithreading_enabled()
        _set_flag(NO_MULTITHREADING, not mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set_flag(NO_MULTITHREADING, not self.prev)

    def clone(self) -> set_multithreading_enabled:
        """A copy of this context manager (for decorating)."""
        return self.__class__(self.mode)


# The gradient layout contract (a first .grad laid out as its leaf): enforced unless turned off
# in this thread by ``enforce_grad_layout_policy(False)``; the engine reads it when it
# accumulates into a leaf (autograd/engine.py).
GRAD_LAYOUT_ENFORCED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chainrule_grad_layout_enforced", default=True
)


def is_grad_layout_enforcement_enabled() -> bool:
    """Whether this thread enforces the gradient layout contract
    (``torch._C._is_grad_layout_enforcement_enabled``)."""
    return GRAD_LAYOUT_ENFORCED.get()


def set_grad_layout_enforcement_enabled(enabled: bool) -> None:
    """Turn the gradient layout contract on or off in this thread
    (``torch._C._set_grad_layout_enforcement_enabled``)."""
    if not isinstance(enabled, bool):
        raise TypeError(
            "set_grad_layout_enforcement_enabled(): argument 'enabled' (position 1) must be "
            f"bool, not {type(enabled).__name__}"
        )
    GRAD_LAYOUT_ENFORCED.set(enabled)


class enforce_grad_layout_policy(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """Enforce the gradient layout contract (``True``, the default) or relax it (``False``):
    relaxed, a gradient the engine owns becomes a leaf's first ``.grad`` as it is laid out
    (no copy into the leaf's strides) and the "grad and param do not obey the gradient layout
    contract" warning is not given. Takes effect at once (thread-local); as a context manager
    or decorator it restores the previous setting.

    Example:
        >>> import chainrule as torch
        >>> p = torch.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
        >>> with torch.autograd.enforce_grad_layout_policy(False):
        ...     (p * 2).sum().backward()
        >>> p.grad.stride()
        (6, 3, 1)
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = GRAD_LAYOUT_ENFORCED.get()
        set_grad_layout_enforcement_enabled(enable)
        self.mode = enable

    def __call__(self, func: F) -> F:
        # Used as a decorator: undo the immediate effect of construction.
        GRAD_LAYOUT_ENFORCED.set(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        GRAD_LAYOUT_ENFORCED.set(self.prev)

    def clone(self) -> enforce_grad_layout_policy:
        return self.__class__(self.mode)
