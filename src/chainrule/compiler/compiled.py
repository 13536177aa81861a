"""The compiled callable: a cache of traced graphs keyed by guards."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import is_grad_enabled
from chainrule.fx import GraphModule, TraceError, symbolic_trace

__all__ = ["CompiledFunction", "compile"]

_DEFAULT_RECOMPILE_LIMIT = 8


def _guard_key(args: tuple, kwargs: dict[str, Any]) -> tuple:
    """What a cached graph assumes about a call: tensors' shape, dtype, requires_grad;
    other arguments by type and value; grad mode."""
    parts: list[Any] = []
    for a in list(args) + [kwargs[k] for k in sorted(kwargs)]:
        if isinstance(a, Tensor):
            parts.append(("tensor", tuple(a.shape), a.dtype, a.requires_grad))
        else:
            try:
                hash(a)
                parts.append(("value", type(a), a))
            except TypeError:
                parts.append(("object", type(a), id(a)))
    return (tuple(sorted(kwargs)), tuple(parts), is_grad_enabled())


class CompiledFunction:
    """``compile(fn)``'s result: call it as ``fn``; ``code`` is the generated source."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool, recompile_limit: int) -> None:
        self._orig_mod = fn
        self._fullgraph = fullgraph
        self._recompile_limit = recompile_limit
        self._cache: dict[tuple, GraphModule | None] = {}
        self.compile_count = 0
        self.graph_breaks = 0
        self._last: GraphModule | None = None

    def _graph_for(self, key: tuple) -> GraphModule | None:
        if key in self._cache:
            return self._cache[key]
        if self.compile_count >= self._recompile_limit:
            return None  # past the limit, the call runs eagerly, as torch.compile's does
        self.compile_count += 1
        try:
            gm: GraphModule | None = symbolic_trace(self._orig_mod)
        except TraceError:
            if self._fullgraph:
                raise
            self.graph_breaks += 1
            gm = None
        self._cache[key] = gm
        if gm is not None:
            self._last = gm
        return gm

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        gm = self._graph_for(_guard_key(args, kwargs))
        if gm is None:
            return self._orig_mod(*args, **kwargs)
        return gm(*args, **kwargs)

    @property
    def code(self) -> str:
        """The generated code of the latest graph compiled ('' before the first call or
        when the program runs eagerly)."""
        return "" if self._last is None else self._last.code

    @property
    def graph(self) -> Any:
        """The latest compiled graph (None before the first call)."""
        return None if self._last is None else self._last.graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_orig_mod"], name)


def compile(
    model: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str | Callable[..., Any] | None = None,
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    name: str | None = None,
    disable: bool = False,
    recompile_limit: int | None = None,
    isolate_recompiles: bool = False,
    shapes_spec: Any = None,
) -> Any:
    """Compile ``model`` (a function or Module), or return a decorator when it is None,
    as ``torch.compile``; ``backend``, ``mode``, ``options``, ``dynamic`` are accepted
    and have no effect here."""
    if model is None:

        def decorator(fn: Callable[..., Any]) -> Any:
            return compile(
                fn,
                fullgraph=fullgraph,
                dynamic=dynamic,
                backend=backend,
                mode=mode,
                options=options,
                name=name,
                disable=disable,
                recompile_limit=recompile_limit,
                isolate_recompiles=isolate_recompiles,
                shapes_spec=shapes_spec,
            )

        return decorator
    if not builtins.callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    limit = _DEFAULT_RECOMPILE_LIMIT if recompile_limit is None else recompile_limit
    return CompiledFunction(model, fullgraph, limit)
