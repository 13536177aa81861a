"""The compiled callable: a cache of traced graphs keyed by guards."""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable
from typing import Any

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import is_grad_enabled
from chainrule.fx import GraphModule, TraceError, symbolic_trace
from chainrule.nn.modules.module import (
    Module,
    _global_backward_hooks,
    _global_backward_pre_hooks,
)
from chainrule.ops.creation import get_rng_state, set_rng_state

from .compiled_graph import CompiledGraph
from .lowering import Unsupported, lower

__all__ = ["CompiledFunction", "compile"]

_DEFAULT_RECOMPILE_LIMIT = 8


def _guard_key(args: tuple, kwargs: dict[str, Any]) -> tuple:
    """What a cached graph assumes about a call: tensors' shape, dtype, requires_grad;
    other arguments by type and value; grad mode. (Read from the arrays: this runs on
    every call.)"""
    parts: list[Any] = []
    append = parts.append
    for a in args if not kwargs else (*args, *(kwargs[k] for k in sorted(kwargs))):
        if isinstance(a, Tensor):
            data = a._data
            append((data.shape, data.dtype, a._requires_grad))
        else:
            try:
                hash(a)
                append(("value", type(a), a))
            except TypeError:
                append(("object", type(a), id(a)))
    return (tuple(sorted(kwargs)) if kwargs else (), tuple(parts), is_grad_enabled())


def _captured_guard(tensors: list[Tensor]) -> tuple:
    return tuple((t._data.shape, t._data.dtype, t._requires_grad) for t in tensors)


def _owners(root: Any, tensors: list[Tensor]) -> list[tuple[dict, str, Tensor]]:
    """Where a module keeps each captured tensor (its ``_parameters``/``_buffers`` dict and
    key): a call checks that the module still holds the same tensor there."""
    if not isinstance(root, Module):
        return []
    wanted = {id(t) for t in tensors}
    found = []
    for module in root.modules():
        for store in (module._parameters, module._buffers):
            for key, t in store.items():
                if t is not None and id(t) in wanted:
                    found.append((store, key, t))
    return found


def _modes(modules: list[Module]) -> tuple:
    """Per module: its training flag and whether a hook (its own or a global one) would run
    around its forward or backward."""
    global_hooks = bool(_global_backward_hooks or _global_backward_pre_hooks)
    return tuple(
        (
            m.training,
            global_hooks
            or bool(
                m._forward_hooks
                or m._forward_pre_hooks
                or m._backward_hooks
                or m._backward_pre_hooks
            ),
        )
        for m in modules
    )


class _Entry:
    """What one set of guards compiled to: a generated graph, or the traced module run
    eagerly (``reason`` says why), or nothing (a graph break: the original runs)."""

    __slots__ = ("module", "compiled", "reason", "captured_guard", "owners", "modules", "modes")

    def __init__(self, module: GraphModule | None) -> None:
        self.module = module
        self.compiled: CompiledGraph | None = None
        self.reason = ""
        self.captured_guard: tuple = ()
        self.owners: list[tuple[dict, str, Tensor]] = []
        # The modules the program reads, their training flags and whether they had hooks
        # when it was compiled (torch.compile guards on them too: eval() changes what
        # dropout or batch_norm do).
        self.modules: list[Module] = []
        self.modes: tuple = ()

    def holds(self) -> bool:
        """Whether the captured tensors and the modules' modes are still those compiled for."""
        compiled = self.compiled
        if (
            compiled is not None
            and compiled.captured
            and (
                _captured_guard(compiled.captured) != self.captured_guard
                or not all(store.get(key) is t for store, key, t in self.owners)
            )
        ):
            return False
        return not self.modules or _modes(self.modules) == self.modes


class CompiledFunction:
    """``compile(fn)``'s result: call it as ``fn``; ``code`` is the generated source."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool, recompile_limit: int) -> None:
        self._orig_mod = fn
        self._fullgraph = fullgraph
        self._recompile_limit = recompile_limit
        self._cache: dict[tuple, _Entry] = {}
        self.compile_count = 0
        self.graph_breaks = 0
        self.fallback_reasons: list[str] = []
        self._last: _Entry | None = None

    def _readable(self) -> dict[str, Any]:
        """What the program reads besides its arguments, by name: the module itself, or a
        function's closure variables and globals."""
        root = self._orig_mod
        if isinstance(root, Module):
            return {"": root}
        try:
            found = inspect.getclosurevars(root)
        except (TypeError, ValueError):
            return {}
        return {**found.globals, **found.nonlocals}

    def _modules(self) -> list[Module]:
        found: dict[int, Module] = {}
        for obj in self._readable().values():
            if isinstance(obj, Module):
                found.update((id(m), m) for m in obj.modules())
        return list(found.values())

    def _param_names(self) -> dict[int, str]:
        """Names for the tensors the program reads besides its arguments: a module's
        parameters and buffers by their paths; for a function, the modules and tensors it
        reads from its closure or globals, by variable name (``model.0.weight``)."""
        names: dict[int, str] = {}
        for prefix, obj in self._readable().items():
            dot = f"{prefix}." if prefix else ""
            if isinstance(obj, Module):
                names.update({id(b): dot + n for n, b in obj.named_buffers()})
                names.update({id(p): dot + n for n, p in obj.named_parameters()})
            elif isinstance(obj, Tensor):
                names[id(obj)] = prefix
        return names

    def _compile(self, key: tuple, args: tuple, kwargs: dict[str, Any]) -> _Entry | None:
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
        entry = _Entry(gm)
        self._cache[key] = entry
        entry.modules = self._modules()
        entry.modes = _modes(entry.modules)
        if gm is None:
            return entry
        if any(hooks for _, hooks in entry.modes):
            entry.reason = "module hooks (they would run once, when the program is captured)"
            self.fallback_reasons.append(entry.reason)
            entry.module = None  # (the module itself runs, with its hooks)
            return entry
        self._last = entry
        arg_names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        # (a program that draws is refused, maybe after drawing: the eager run then draws the
        # same numbers as without compile)
        rng_state = get_rng_state()
        try:
            try:
                lowered, _ = lower(gm, args, kwargs, arg_names, self._param_names())
            finally:
                set_rng_state(rng_state)
            requires_grad = [
                is_grad_enabled() and t.requires_grad
                for t in [args[p] if type(p) is int else kwargs[p] for p in lowered.arg_positions]
                + lowered.captured
            ]
            entry.compiled = CompiledGraph(lowered, requires_grad)
            entry.captured_guard = _captured_guard(lowered.captured)
            entry.owners = _owners(self._orig_mod, lowered.captured)
        except Unsupported as error:
            entry.reason = str(error)
            self.fallback_reasons.append(entry.reason)
        except LookupError as error:  # (ir.gradients: an op on the way has no formula)
            entry.reason = str(error)
            self.fallback_reasons.append(entry.reason)
        except Exception as error:  # noqa: BLE001 - the program runs eagerly, raising there
            entry.reason = f"the traced module did not run: {type(error).__name__}: {error}"
            self.fallback_reasons.append(entry.reason)
            entry.module = None
        return entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = _guard_key(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            if entry.holds():
                if entry.compiled is not None:
                    return entry.compiled(args, kwargs)
            else:
                del self._cache[key]  # (a parameter or a module's mode changed)
                entry = None
        if entry is None:
            entry = self._compile(key, args, kwargs)
            if entry is not None and entry.compiled is not None:
                return entry.compiled(args, kwargs)
        if entry is None or entry.module is None:
            return self._orig_mod(*args, **kwargs)
        return entry.module(*args, **kwargs)

    @property
    def code(self) -> str:
        """The generated NumPy forward and backward of the latest graph compiled (the traced
        code with the reason when it runs eagerly; '' before the first call or after a graph
        break)."""
        entry = self._last
        if entry is None or entry.module is None:
            return ""
        if entry.compiled is None:
            return f"# runs eagerly: {entry.reason}\n" + entry.module.code
        return entry.compiled.code

    @property
    def fx_code(self) -> str:
        """The traced (``chainrule.fx``) code of the latest graph compiled."""
        entry = self._last
        return "" if entry is None or entry.module is None else entry.module.code

    @property
    def graph(self) -> Any:
        """The latest traced (``chainrule.fx``) graph (None before the first call)."""
        entry = self._last
        return None if entry is None or entry.module is None else entry.module.graph

    @property
    def ir_graph(self) -> Any:
        """The latest compiled joint graph (``chainrule.ir.Graph``; None if none)."""
        entry = self._last
        return None if entry is None or entry.compiled is None else entry.compiled.graph

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
