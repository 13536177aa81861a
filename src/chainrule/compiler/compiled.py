"""The compiled callable: a cache of traced graphs keyed by guards."""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import io
import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrule._tensor import Tensor
from chainrule.autograd.grad_mode import is_grad_enabled
from chainrule.fx import GraphModule, TraceError, Tracer
from chainrule.nn.modules.module import (
    Module,
    _global_backward_hooks,
    _global_backward_pre_hooks,
)
from chainrule.ops.creation import get_rng_state, set_rng_state

from .api import COMPILED, COMPILING, config
from .compiled_graph import CompiledGraph
from .lowering import Unsupported, lower

__all__ = ["CompiledFunction", "compile"]



def _guard_key(args: tuple, kwargs: dict[str, Any]) -> tuple:
    """What a cached graph assumes about a call: tensors' shape, strides, dtype, requires_grad;
    other arguments by type and value; grad mode. (Read from the arrays: this runs on
    every call.)"""
    parts: list[Any] = []
    append = parts.append
    for a in args if not kwargs else (*args, *(kwargs[k] for k in sorted(kwargs))):
        if isinstance(a, Tensor):
            data = a._data
            # (strides too, as torch.compile's guards: a graph traced on a contiguous input
            # must not run a view(-1) PyTorch refuses for a transposed one, or the reverse)
            append((data.shape, data.strides, data.dtype, a._requires_grad))
        elif type(a) is float or type(a) is complex:
            # (by repr: -0.0 is not 0.0, and a NaN equals itself)
            append(("value", type(a), repr(a)))
        else:
            try:
                hash(a)
                append(("value", type(a), a))
            except TypeError:
                append(("object", type(a), id(a)))
    return (tuple(sorted(kwargs)) if kwargs else (), tuple(parts), is_grad_enabled())


def _captured_guard(tensors: list[Tensor]) -> tuple:
    return tuple((t._data.shape, t._data.dtype, t._requires_grad) for t in tensors)


def _sources(
    readable: dict[str, tuple[Any, Callable[[], Any]]],
    modules: list[Module],
    tensors: list[Tensor],
) -> list[tuple[int, Callable[[], Any]]]:
    """Where the program reads each captured tensor from, as a function giving what is
    there now: a global or closure variable by name, else a module's ``_parameters`` or
    ``_buffers`` entry or plain attribute (``self.scale = torch.tensor(2.0)``). A call reads
    them again, as torch.compile's guards do: a tensor rebound there with the same shape,
    dtype and requires_grad is used without a recompile (a different one recompiles)."""
    found: list[tuple[int, Callable[[], Any]]] = []
    for index, tensor in enumerate(tensors):
        read = next((r for v, r in readable.values() if v is tensor), None)
        if read is None:
            for module in modules:
                for store in (module._parameters, module._buffers, vars(module)):
                    key = next((k for k, t in store.items() if t is tensor), None)
                    if key is not None:
                        read = functools.partial(store.get, key)
                        break
                if read is not None:
                    break
        if read is not None:
            found.append((index, read))
    return found


#: Global and closure values guarded by value (a change recompiles, as torch.compile's
#: guards on constants); any other object the program reads is guarded by identity.
_CONSTANT_TYPES = (int, float, bool, complex, str, bytes, type(None))


def _value_guards(
    readable: dict[str, tuple[Any, Callable[[], Any]]], contents: bool = True
) -> list[tuple[Callable[[], Any], Any, Any, Any]]:
    """Per global or closure variable the program reads (tensors aside: see
    :func:`_sources`): how to read it now, its value when compiled, its key when it is
    compared by value (a Python constant; None: by identity), and (with ``contents``) a
    snapshot of the constants inside it when it is a container or a plain object (see
    :func:`_contents`)."""
    guards = []
    for value, read in readable.values():
        if isinstance(value, Tensor):
            continue
        key = _constant_key(value) if type(value) in _CONSTANT_TYPES else None
        snapshot = _contents(value) if contents and _data_like(value) else None
        guards.append((read, value, key, snapshot))
    return guards


def _constant_key(value: Any) -> Any:
    """What a constant guard compares: the type and value (a float's repr: ``-0.0`` is not
    ``0.0``, and a NaN equals itself)."""
    if type(value) in (float, complex):
        return (type(value), repr(value))
    return (type(value), value)


def _data_like(value: Any) -> bool:
    """A list, tuple or dict, or a plain object (a configuration, a namespace): what a
    program may read constants from (``scales[0]``, ``cfg["k"]``, ``opts.k``) that a change
    in place must recompile, as torch.compile's guards on what it read."""
    kind = type(value)
    if kind in (list, tuple, dict):
        return True
    if isinstance(value, Module | Tensor | type | types.ModuleType) or callable(value):
        return False
    return hasattr(value, "__dict__")


#: The most entries :func:`_contents` reads of one value (a larger one is guarded by
#: identity only: reading it at every call would cost more than the program).
_CONTENTS_BUDGET = 256


def _contents(value: Any) -> tuple | None:
    """A snapshot of ``value``'s contents, nested ones included: constants by value, other
    objects by identity (None when it holds more than ``_CONTENTS_BUDGET`` entries)."""
    parts: list[Any] = []
    stack = [value]
    while stack:
        if len(parts) > _CONTENTS_BUDGET:
            return None
        item = stack.pop()
        kind = type(item)
        if kind in _CONSTANT_TYPES:
            parts.append(_constant_key(item))
        elif kind is list or kind is tuple:
            parts.append((kind, len(item)))
            stack.extend(item)
        elif kind is dict:
            parts.append((kind, len(item)))
            for k, v in item.items():
                parts.append(_constant_key(k) if type(k) in _CONSTANT_TYPES else id(k))
                stack.append(v)
        elif _data_like(item):
            attrs = vars(item)
            parts.append((kind, len(attrs)))
            for k, v in attrs.items():
                parts.append(k)
                stack.append(v)
        else:
            parts.append(("id", id(item)))
    return tuple(parts)


def _value_guards_hold(guards: list[tuple[Callable[[], Any], Any, Any, Any]]) -> bool:
    for read, expected, key, contents in guards:
        now = read()
        if now is not expected:
            if key is None or type(now) is not type(expected) or _constant_key(now) != key:
                return False
        elif contents is not None and _contents(now) != contents:
            return False
    return True


_UNBOUND = object()


def _cell_reader(cell: Any) -> Callable[[], Any]:
    def read() -> Any:
        try:
            return cell.cell_contents
        except ValueError:  # (an empty cell)
            return _UNBOUND

    return read


def _globals_and_cells(fn: Any) -> dict[str, tuple[Any, Callable[[], Any]]]:
    """The global and closure variables a function reads (``inspect.getclosurevars``: the
    names its own code uses), each with its value now and a function reading it again."""
    try:
        found = inspect.getclosurevars(fn)
    except (TypeError, ValueError):
        return {}
    readable: dict[str, tuple[Any, Callable[[], Any]]] = {}
    owner = getattr(fn, "__self__", None)
    if inspect.ismethod(fn) and owner is not None:
        # (a bound method, ``compile(model.forward)``: it reads its object)
        readable["self"] = (owner, functools.partial(getattr, fn, "__self__"))
    namespace = getattr(fn, "__globals__", {})
    for name, value in found.globals.items():
        readable[name] = (value, functools.partial(namespace.get, name, _UNBOUND))
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is not None:
        for name, cell in zip(code.co_freevars, cells, strict=False):
            if name in found.nonlocals:
                readable[name] = (found.nonlocals[name], _cell_reader(cell))
    return readable


def _modes(modules: list[Module]) -> tuple:
    """Per module: its training flag, whether a hook (its own or a global one) would run
    around its forward or backward, its children and its forward (a submodule replaced or
    added, or a forward replaced on the instance or the class, after compiling recompiles,
    as torch.compile's guards on the modules it reads)."""
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
            tuple(m._modules.items()),
            type(m).forward,
            m.__dict__.get("forward"),
        )
        for m in modules
    )


def _constant(value: Any) -> bool:
    """A Python constant, or a tuple of them (a layer's ``stride``, ``kernel_size``...)."""
    if type(value) is tuple:
        return all(type(v) in _CONSTANT_TYPES for v in value)
    return type(value) in _CONSTANT_TYPES


def _attribute_guards(modules: list[Module]) -> list[tuple[Any, Any, Any]]:
    """Per module with public attributes holding Python constants (``eps``, ``momentum``,
    ``negative_slope``, ``p``, ``stride``...): its ``__dict__``, a getter of those
    attributes and their values now. A program bakes them in; torch.compile guards on them
    (setting ``bn.eps`` recompiles), and so does a compiled function here."""
    guards = []
    for module in modules:
        attrs = vars(module)
        names = [k for k, v in attrs.items() if k[0] != "_" and _constant(v)]
        if names:
            getter = operator.itemgetter(*names)
            guards.append((attrs, getter, getter(attrs)))
    return guards


def _attributes_hold(guards: list[tuple[Any, Any, Any]]) -> bool:
    for attrs, getter, values in guards:
        try:
            if getter(attrs) != values:
                return False
        except KeyError:  # (an attribute deleted since)
            return False
    return True


class _ModeRecordingTracer(Tracer):
    """A Tracer noting the grad mode each node was recorded under (``meta["grad_enabled"]``)."""

    def create_proxy(
        self, op: str, target: Any, args: tuple, kwargs: dict[str, Any], name: str | None = None
    ) -> Any:
        proxy = super().create_proxy(op, target, args, kwargs, name)
        proxy.node.meta["grad_enabled"] = is_grad_enabled()
        return proxy


class _PythonState:
    """The Python state a program reads besides tensors: its modules' attributes and the
    lists, dicts and plain objects among its globals and closure variables (and the ones
    they hold), with a shallow copy of each, to tell whether the trace changed them and to
    undo what it did (no recursion; at most ``_CONTENTS_BUDGET`` entries per value)."""

    def __init__(self, root: Module | Callable[..., Any]) -> None:
        if isinstance(root, Module):
            values: list[Any] = [root]
        else:
            values = [value for value, _ in _globals_and_cells(root).values()]
        roots: list[Any] = []
        for value in values:
            if isinstance(value, Module):
                roots += [vars(m) for m in value.modules()]
            elif _data_like(value):
                roots.append(value)
        self._copies: list[tuple[Any, Any]] = []
        self._fingerprints: list[tuple | None] = []
        for value in roots:
            fingerprint = _contents(value)
            self._fingerprints.append(fingerprint)
            if fingerprint is not None:
                self._copies += _shallow_copies(value)
        self._roots = roots

    def changed(self) -> bool:
        return any(
            fingerprint is not None and _contents(value) != fingerprint
            for value, fingerprint in zip(self._roots, self._fingerprints, strict=True)
        )

    def restore(self) -> None:
        # (written back whole, without comparing: ``==`` on what the trace left there, a
        # Proxy or a tensor, would record a node or compare element-wise)
        for container, copy in self._copies:
            if type(container) is list:
                container[:] = copy
            else:
                if type(container) is not dict:
                    container = vars(container)
                container.clear()
                container.update(copy)


def _shallow_copies(value: Any) -> list[tuple[Any, Any]]:
    """The lists, dicts and plain objects reachable from ``value`` through them, each with a
    shallow copy of its items (of its attributes for an object)."""
    copies: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if id(item) in seen or kind is tuple and not item:
            continue
        if kind is list:
            copies.append((item, list(item)))
            stack.extend(item)
        elif kind is tuple:
            stack.extend(item)
        elif kind is dict:
            copies.append((item, dict(item)))
            stack.extend(item.values())
        elif _data_like(item):
            copies.append((item, dict(vars(item))))
            stack.extend(vars(item).values())
        else:
            continue
        seen.add(id(item))
    return copies


def _holder(layer: Module) -> Module:
    """A module whose forward, of ``layer``'s signature, calls ``layer`` (its submodule
    ``layer``)."""

    def forward(self: Module, *args: Any, **kwargs: Any) -> Any:
        return self.layer(*args, **kwargs)

    forward.__signature__ = inspect.signature(type(layer).forward)  # type: ignore[attr-defined]
    holder = type(type(layer).__name__, (Module,), {"forward": forward})()
    holder.layer = layer
    return holder


class _GraphBreak(Exception):
    """What the trace recorded is not the program (see :func:`_trace`)."""


def _trace(root: Module | Callable[..., Any]) -> GraphModule:
    """``fx.symbolic_trace(root)``, refusing (with :class:`_GraphBreak`) a program whose
    graph would not be what it computes: one that draws random numbers outside the traced
    values (``x + torch.randn(())``: the trace would freeze the draw into a constant) or seeds
    the generator, and one that switches grad mode inside (``with torch.no_grad():``, whose
    nodes the graph would differentiate). The generator is left as before the trace, so the
    eager run draws what it would without compile. So is one with Python side effects the
    graph cannot replay at each call (torch.compile replays them): one that prints, or
    changes what it reads (appends to a global list, counts in a dict, sets a module's
    attribute); what the trace changed is undone, so the eager run does it once per call."""
    if isinstance(root, Module) and "forward" in vars(root):
        # (the tracer follows the class's forward; the module runs its own, eagerly)
        raise _GraphBreak("the module's forward is replaced on the instance")
    function = type(root).forward if isinstance(root, Module) else root
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        parameters = []
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        # (the trace would take ``*args`` for one argument: the program runs eagerly)
        raise _GraphBreak("the program takes *args or **kwargs")
    rng_state = get_rng_state()
    grad_mode = is_grad_enabled()
    tracer = _ModeRecordingTracer()
    state = _PythonState(root)
    printed = io.StringIO()
    COMPILING[0] += 1
    try:
        with contextlib.redirect_stdout(printed):
            try:
                graph = tracer.trace(root)
            except TraceError:
                if not isinstance(root, Module) or not tracer.is_leaf_module(root, ""):
                    raise
                # A layer of chainrule.nn compiled on its own (its forward checks its input's
                # shape in Python): traced as one call of the layer, as it is inside a model.
                tracer = _ModeRecordingTracer()
                graph = tracer.trace(_holder(root))
    finally:
        COMPILING[0] -= 1
        after = get_rng_state()
        set_rng_state(rng_state)
        # (the tensor constants the tracer keeps on the root, as torch.fx does, are its own)
        added = {
            path: vars(tracer.root).pop(path)
            for path in tracer._constants.values()
            if path in vars(tracer.root)
        }
        changed = state.changed()
        state.restore()
        for path, tensor in added.items():
            setattr(tracer.root, path, tensor)
    drew = after.shape != rng_state.shape or not bool((after == rng_state).all())
    if drew:
        raise _GraphBreak("the program draws random numbers or seeds the generator")
    if printed.getvalue():
        # (what the trace printed is dropped: the eager run prints it, at every call)
        raise _GraphBreak("the program prints")
    if changed:
        raise _GraphBreak("the program changes Python state it can read again")
    if any(node.meta.get("grad_enabled", grad_mode) != grad_mode for node in graph.nodes):
        raise _GraphBreak("the program switches grad mode")
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


class _BufferSnapshot:
    """The tensors a program may write as it is lowered (its modules' buffers, the tensors
    it reads from its closure or globals, its tensor arguments) as they are now, to undo what
    the lowering run did to them: a training-mode batch_norm has updated its running
    statistics and counted ``num_batches_tracked`` up by then, and the compiled graph (or
    the eager run of a refused program) that follows would count the call twice."""

    def __init__(self, modules: list[Module], tensors: list[Any]) -> None:
        seen: set[int] = set()
        self._saved = []
        owned = [(m._buffers, key, t) for m in modules for key, t in m._buffers.items()]
        owned += [(None, None, t) for t in tensors]
        for store, key, t in owned:
            if (
                not isinstance(t, Tensor)
                or id(t) in seen
                or type(t._data) is not np.ndarray
                or not t._data.flags.writeable
            ):
                continue
            seen.add(id(t))
            self._saved.append((store, key, t, t._data, t._data.copy(), t._vc[0]))

    def restore(self) -> None:
        for store, key, tensor, data, values, version in self._saved:
            if store is not None:
                store[key] = tensor
            tensor._data = data
            data[...] = values
            tensor._vc[0] = version


class _Entry:
    """What one set of guards compiled to: a generated graph, or the traced module run
    eagerly (``reason`` says why), or nothing (a graph break: the original runs)."""

    __slots__ = (
        "module", "compiled", "reason", "captured_guard", "sources", "values", "modules", "modes",
        "attributes",
    )  # fmt: skip

    def __init__(self, module: GraphModule | None) -> None:
        self.module = module
        self.compiled: CompiledGraph | None = None
        self.reason = ""
        self.captured_guard: tuple = ()
        # Where each captured tensor is read from (see _sources), and the other globals and
        # closure variables the program reads, guarded (see _value_guards).
        self.sources: list[tuple[int, Callable[[], Any]]] = []
        self.values: list[tuple[Callable[[], Any], Any, Any, Any]] = []
        # The modules the program reads, their training flags and whether they had hooks
        # when it was compiled (torch.compile guards on them too: eval() changes what
        # dropout or batch_norm do).
        self.modules: list[Module] = []
        self.modes: tuple = ()
        # Their attributes holding Python constants (see _attribute_guards).
        self.attributes: list[tuple[Any, Any, Any]] = []

    def holds(self) -> bool:
        """Whether the globals read, the modules' modes and constant attributes are still those
        compiled for, and the captured tensors (read again where the program reads them) of
        the same shapes, dtypes and requires_grad."""
        if self.values and not _value_guards_hold(self.values):
            return False
        if self.attributes and not _attributes_hold(self.attributes):
            return False
        compiled = self.compiled
        if compiled is not None and compiled.captured:
            captured = compiled.captured
            for index, read in self.sources:
                now = read()
                if now is not captured[index]:
                    if not isinstance(now, Tensor):
                        return False
                    captured[index] = now  # (checked below)
            if _captured_guard(captured) != self.captured_guard:
                return False
        return not self.modules or _modes(self.modules) == self.modes


class CompiledFunction:
    """``compile(fn)``'s result: call it as ``fn``; ``code`` is the generated source."""

    def __init__(
        self, fn: Callable[..., Any], fullgraph: bool, recompile_limit: int | None
    ) -> None:
        if not isinstance(fn, Module):
            # (as torch.compile's function: fn's name, doc, module and signature, and
            # ``__wrapped__`` / ``_torchdynamo_orig_callable`` leading back to it)
            functools.update_wrapper(self, fn, updated=())
            self._torchdynamo_orig_callable = fn
        self._orig_mod = fn
        COMPILED.add(self)
        self._fullgraph = fullgraph
        self._recompile_limit = recompile_limit
        self._cache: dict[tuple, list[_Entry]] = {}
        self.compile_count = 0
        self.graph_breaks = 0
        self.fallback_reasons: list[str] = []
        self._last: _Entry | None = None

    def _reset(self) -> None:
        """Forget the compiled graphs (``torch.compiler.reset``)."""
        self._cache.clear()
        self._last = None
        self.compile_count = 0

    def _readable(self) -> dict[str, Any]:
        """What the program reads besides its arguments, by name: the module itself, or a
        function's closure variables and globals."""
        root = self._orig_mod
        if isinstance(root, Module):
            return {"": root}
        return {name: value for name, (value, _) in _globals_and_cells(root).items()}

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
        limit = self._recompile_limit
        if self.compile_count >= (config.recompile_limit if limit is None else limit):
            return None  # past the limit, the call runs eagerly, as torch.compile's does
        self.compile_count += 1
        try:
            gm: GraphModule | None = _trace(self._orig_mod)
        except Exception:  # noqa: BLE001
            # TraceError (control flow on a traced value), but also what the program does
            # with a Proxy that a tensor allows (item assignment, `len`, a shape passed to a
            # factory): the program runs eagerly, as torch.compile's graph break, raising
            # there what eager raises.
            if self._fullgraph:
                raise
            self.graph_breaks += 1
            gm = None
        entry = _Entry(gm)
        self._cache.setdefault(key, []).insert(0, entry)
        entry.modules = self._modules()
        entry.modes = _modes(entry.modules)
        root = self._orig_mod
        readable = {} if isinstance(root, Module) else _globals_and_cells(root)
        entry.values = _value_guards(readable, contents=gm is not None)
        if gm is None:
            # (the program runs eagerly, reading its state as it is: a change of the
            # constants it reads needs no new trace, which would break the graph again)
            return entry
        entry.attributes = _attribute_guards(entry.modules)
        if any(mode[1] for mode in entry.modes):
            entry.reason = "module hooks (they would run once, when the program is captured)"
            self.fallback_reasons.append(entry.reason)
            entry.module = None  # (the module itself runs, with its hooks)
            return entry
        self._last = entry
        arg_names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        # (a program that draws is refused, maybe after drawing: the eager run then draws the
        # same numbers as without compile)
        rng_state = get_rng_state()
        written = [*args, *kwargs.values(), *(value for value, _ in readable.values())]
        buffers = _BufferSnapshot(entry.modules, written)
        try:
            COMPILING[0] += 1
            try:
                lowered, _ = lower(gm, args, kwargs, arg_names, self._param_names())
            finally:
                COMPILING[0] -= 1
                set_rng_state(rng_state)
                buffers.restore()
            requires_grad = [
                is_grad_enabled() and t.requires_grad
                for t in [args[p] if type(p) is int else kwargs[p] for p in lowered.arg_positions]
                + lowered.captured
            ]
            entry.compiled = CompiledGraph(lowered, requires_grad)
            entry.captured_guard = _captured_guard(lowered.captured)
            entry.sources = _sources(readable, entry.modules, lowered.captured)
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
        entry = None
        # (the graphs compiled for these arguments, newest first: the first whose guards on
        # globals, captured tensors and modules' modes hold runs, as torch.compile's cache)
        for cached in self._cache.get(key, ()):
            if cached.holds():
                entry = cached
                break
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
    and have no effect here. A module gives an ``OptimizedModule`` wrapping it (state_dict
    keys ``_orig_mod.<name>``, as PyTorch's)."""
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
    # (None: torch._dynamo.config.recompile_limit, read when a call compiles)
    compiled = CompiledFunction(model, fullgraph, recompile_limit)
    if isinstance(model, Module):
        from .optimized_module import OptimizedModule

        return OptimizedModule(model, compiled)
    return compiled
