"""``torch.compiler``'s functions around ``compile``: ``reset``, ``disable``,
``is_compiling``, ``is_dynamo_compiling``, ``is_exporting``, ``allow_in_graph``,
``assume_constant_result``.

``is_compiling()`` is True while chainrule traces and lowers a program (so a program that
branches on it compiles its compiled branch, as under torch.compile); a function wrapped by
``disable`` runs eagerly, and a compiled program that calls it runs eagerly too (a graph
break around the whole program, where torch.compile breaks around the call).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from .._dtype import REPR_NAMESPACE

__all__ = [
    "reset", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
    "allow_in_graph", "assume_constant_result", "config", "graph_break", "mark_dynamic",
    "mark_static",
]  # fmt: skip

#: How many traces or lowerings are running (``is_compiling``).
COMPILING = [0]

#: Every compiled function made (``reset`` empties their caches).
COMPILED: weakref.WeakSet[Any] = weakref.WeakSet()


class CompilingDisabled(Exception):
    """A function under ``disable`` was called while a program was being compiled."""


def is_compiling() -> bool:
    """Whether chainrule is tracing a program to compile it (as torch.compile's)."""
    return COMPILING[0] > 0


def is_dynamo_compiling() -> bool:
    """As :func:`is_compiling` (chainrule's tracer stands for dynamo)."""
    return COMPILING[0] > 0


def is_exporting() -> bool:
    """False: no export is running (``chainrule.onnx.export`` runs the model eagerly)."""
    return False


def reset() -> None:
    """Forget every compiled graph: the next call of a compiled function or module traces
    and compiles again (its recompile count starts over)."""
    for compiled in list(COMPILED):
        compiled._reset()


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """``fn`` as a function that always runs eagerly (a decorator without ``fn``): compiling
    it, or a program that calls it, runs eagerly."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        if COMPILING[0]:
            raise CompilingDisabled(reason or f"{getattr(fn, '__name__', fn)} is disabled")
        return fn(*args, **kwargs)

    eager._chainrule_disabled = True  # type: ignore[attr-defined]
    return eager


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself: chainrule's trace records the ops it applies, as the graph would."""
    return fn


def assume_constant_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself (its result is traced as computed)."""
    return fn


class _Config:
    """``torch._dynamo.config``'s settings chainrule reads or accepts: ``recompile_limit``
    (``cache_size_limit``: the same setting; how many times one compiled function compiles
    before running eagerly), ``accumulated_recompile_limit``, ``suppress_errors``, ``verbose``.
    Setting another name raises PyTorch's AttributeError."""

    _defaults = {
        "recompile_limit": 8,
        "accumulated_recompile_limit": 256,
        "suppress_errors": False,
        "verbose": False,
    }
    _aliases = {"cache_size_limit": "recompile_limit"}

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(self._defaults))

    def _name(self, name: str) -> str:
        name = self._aliases.get(name, name)
        if name not in self._values:
            raise AttributeError(f"{REPR_NAMESPACE[0]}._dynamo.config.{name} does not exist")
        return name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values[self._name(name)]

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[self._name(name)] = value


#: ``torch._dynamo.config`` (see :class:`_Config`).
config = _Config()


def graph_break() -> None:
    """Nothing when run eagerly; in a program being compiled, a graph break (chainrule runs
    the whole program eagerly)."""
    if COMPILING[0]:
        raise CompilingDisabled("graph_break()")


def mark_dynamic(t: Any, index: Any, **kwargs: Any) -> None:
    """Accepted: chainrule compiles for the shapes it is called with (a new shape compiles
    again), so no dimension needs marking."""


def mark_static(t: Any, index: Any = None) -> None:
    """Accepted: every dimension is static in chainrule's compiled graphs."""
