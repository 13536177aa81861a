"""The backward half of the op table: nodes created by op-table entries.

An :class:`OpNode` keeps what its op's derivatives asked for (and nothing else): the forward's
arguments with unneeded tensors dropped, the versions of the saved tensors, and the output when a
derivative reads ``result``. ``apply`` unpacks them (arrays on the fast path, Tensors when the
backward pass is recorded) and calls each needed derivative with the matching ``ops`` namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import DETACHED_IN_PLACE, Tensor, check_not_detached_in_place, wrap
from ..autograd.forward_grad import DUAL, output_tangent, set_tangent
from ..autograd.grad_mode import GRAD, MODE
from ..autograd.node import (
    RELEASED,
    SECOND_BACKWARD_MESSAGE,
    Node,
    ReleasedNumbers,
    is_released,
)
from ._bfloat16 import holds_bfloat16
from ._dispatch import numpy_broadcast_error

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = [
    "OpNode", "MultiOutputOpNode", "make_node_class", "bind_namespaces", "RELEASED", "PackedSaved",
    "pack_saved",
]

# Derivative namespaces, installed by ops/__init__.py once every op exists: NumPy forwards for
# the fast path, the public (recorded) ops when create_graph=True.
NUMPY_NS: Any = None
TENSOR_NS: Any = None


def bind_namespaces(numpy_ns: Any, tensor_ns: Any) -> None:
    """Install the helper namespaces derivatives receive as ``ops``."""
    global NUMPY_NS, TENSOR_NS
    NUMPY_NS = numpy_ns
    TENSOR_NS = tensor_ns


class PackedSaved:
    """What a node saved when ``saved_tensors_hooks`` were active: the kept arguments with each
    saved tensor replaced by its :class:`~..autograd.graph.SavedTensor` (a tensor list by a
    tuple of them), and the saved output's, if any."""

    __slots__ = ("args", "positions", "result")

    def __init__(self, args: tuple, positions: tuple[int, ...], result: Any) -> None:
        self.args = args
        self.positions = positions  # where the saved tensors (and tensor lists) are in args
        self.result = result  # SavedTensor of the output, or None


def pack_saved(node: OpNode, hooks: tuple[Any, Any], output: Tensor) -> None:
    """Put what ``node`` saved through the pack hook, in PyTorch's order: the saved inputs by
    argument name, then the output (which already has ``node`` as its ``grad_fn``)."""
    from ..autograd.graph import pack_tensor

    saved = node._saved
    if is_released(saved):
        return
    positions: tuple[int, ...] = ()
    args: tuple = ()
    if saved is not None:
        values = list(saved)
        saved_at = {pos for pos, version in node._versions if version is not None}
        positions = tuple(pos for pos in node._op.save_plan(_needs(node)).pack_order
                          if pos in saved_at)
        for pos in positions:
            values[pos] = _pack_argument(node, pos, values[pos], hooks)
        args = tuple(values)
    result = None
    if node._result is not None:
        result = pack_tensor(output, hooks, True)
        node._result = None
    if saved is None and result is None:
        return
    node._saved = PackedSaved(args, positions, result)


def _pack_argument(node: OpNode, pos: int, value: Any, hooks: tuple[Any, Any]) -> Any:
    """Saved argument ``pos`` of ``node`` through ``hooks``: an output of the node (seen as one
    by the pack hook), a tensor, each tensor of a list, or a number (as PyTorch's wrapped 0-d
    tensor)."""
    from ..autograd.graph import pack_tensor

    node_output_nr = node._op.node_output_nr
    if pos in node_output_nr:
        output = _saved_output(value._data, node, value._vc, node_output_nr[pos])
        return pack_tensor(output, hooks, True)
    if type(value) is tuple:  # a tensor list
        return tuple(pack_tensor(e, hooks, False) if isinstance(e, Tensor) else e for e in value)
    if isinstance(value, Tensor):
        return pack_tensor(value, hooks, False)
    return pack_tensor(wrap(np.asarray(value)), hooks, False)


def _packed_objects(value: Any) -> Any:
    """What the pack hook returned for a saved tensor (or each tensor of a tensor list)."""
    if type(value) is tuple:
        return tuple(_packed_objects(e) for e in value)
    return getattr(value, "packed", value)


def _needs(node: Node) -> tuple[bool, ...]:
    return tuple(meta is not None for meta in node._in_meta)


def _unpack_packed(value: Any, node: OpNode, create_graph: bool) -> Any:
    """A packed tensor (or tensor list) unpacked: Tensors under ``create_graph``, else arrays."""
    if type(value) is tuple:
        return tuple(_unpack_packed(e, node, create_graph) for e in value)
    if value is None or isinstance(value, np.ndarray):
        return value
    t = value.unpack(node)
    return t if create_graph else t._data


def _checked_saved(value: Any, version: Any, node: Node, create_graph: bool) -> Any:
    """A saved tensor (or tensor list) whose version is checked: Tensors under
    ``create_graph``, else arrays."""
    if type(version) is tuple:  # a tensor list: each tensor checked
        return _checked_list(value, version, node, create_graph)
    if value._vc[0] != version:
        _raise_modified(value, node, version)
    if DETACHED_IN_PLACE:
        check_not_detached_in_place(value, node)
    return value if create_graph else value._data


def _as_number(value: Any) -> Any:
    """A saved number given hooks, as the derivatives read it: the unpacked value's number."""
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    return data.item()


class RawSavedTensor:
    """``grad_fn._raw_saved_<name>``: PyTorch's ``SavedTensor`` handle on one saved value.
    ``register_hooks(pack_hook, unpack_hook)`` packs the value now and unpacks it each time
    it is used (in backward, and by ``grad_fn._saved_<name>``), as a ``saved_tensors_hooks``
    pair would have; ``data`` is the saved value, ``unpack_hook`` the hook registered."""

    __slots__ = ("_node", "_key")

    def __init__(self, node: OpNode, key: str) -> None:
        self._node = node
        self._key = key

    @property
    def data(self) -> Any:
        """The saved value, detached (unpacked through the hook, when one is registered)."""
        value = self._node._get_saved(self._key, "_raw_saved_" + self._key)
        return value.detach() if isinstance(value, Tensor) else value

    @property
    def unpack_hook(self) -> Any:
        """The unpack hook registered on this value, or None."""
        packed = self._node._packed_value(self._key)
        return None if packed is None else packed.unpack_hook

    def register_hooks(self, pack_hook: Any, unpack_hook: Any) -> None:
        """Pack the saved value with ``pack_hook`` now; ``unpack_hook`` gives it back whenever
        it is used. PyTorch's errors: hooks already set, the value already freed."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types "
                "are supported:\n    1. (self: chainrule.ops._opnode.RawSavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked "
                f"with: {self!r}, {pack_hook!r}, {unpack_hook!r}"
            )
        self._node._pack_one(self._key, (pack_hook, unpack_hook))


class OpNode(Node):
    """A node created by an op-table entry.

    ``_saved``: the forward's positional arguments as needed by the derivatives (tensors no
    derivative reads are replaced by None), None when nothing is needed, or ``RELEASED``.
    ``_versions``: ``(position, version)`` for every saved tensor argument (version None for a
    saved number, which is freed like a tensor, as PyTorch frees wrapped numbers).
    ``_result``: ``(array, version counter, version)`` when a derivative reads the output.
    """

    __slots__ = ("_saved", "_versions", "_result")

    _op: OpDef
    _fresh_outputs = True  # the op table's derivative contract (CONTRIBUTING.md)

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        return OpNode.run_backward(self, grads, create_graph, False)

    def run_backward(self, grads: Any, create_graph: bool, release: bool) -> list[Any]:
        op = self._op
        if not create_graph and holds_bfloat16(grads):
            return self._run_bfloat16(grads, release)
        if self._saved is None and not op.uses_extras:
            env = op.blank_args  # nothing saved: derivatives read only the gradient
        else:
            env = self._unpack(create_graph)
        try:
            return self._derivatives(TENSOR_NS if create_graph else NUMPY_NS, grads, env, release)
        except ValueError as error:  # a saved tensor's .data got another shape since
            raise numpy_broadcast_error(error) from None

    def _run_bfloat16(self, grads: Any, release: bool) -> list[Any]:
        """A bfloat16 gradient: the derivatives run on Tensors (not recorded), as PyTorch's
        formulas run on ATen ops, each computing in float32 and rounding once to bfloat16
        (the arrays' path would compute a Python number with bfloat16 in float32 and
        accumulate sums in bfloat16)."""
        op = self._op
        if self._saved is None and not op.uses_extras:
            env: Any = op.blank_args
        else:
            env = self._unpack(True)
        token = MODE.set(MODE.get() & ~GRAD)
        try:
            if type(grads) is tuple or type(grads) is list:
                tensor_grads: Any = type(grads)(None if g is None else wrap(g) for g in grads)
            else:
                tensor_grads = wrap(grads)
            out = self._derivatives(TENSOR_NS, tensor_grads, env, release)
        finally:
            MODE.reset(token)
        return [g._data if isinstance(g, Tensor) else g for g in out]

    def _derivatives(self, ops: Any, grads: Any, env: list[Any], release: bool) -> list[Any]:
        """One gradient per input (None where none is needed), from the op's derivatives."""
        op = self._op
        out = []
        in_meta = self._in_meta
        i = 0
        for derivative in op.derivatives:
            if in_meta[i] is None:
                out.append(None)
            elif derivative is None:
                raise RuntimeError(f"derivative for aten::{op.name} is not implemented")
            elif derivative.single is not None:
                out.append(derivative.fn(ops, grads, env[derivative.single]))
            elif derivative.arg_index:
                out.append(derivative.fn(ops, grads, *derivative.gather(env)))
            else:
                out.append(derivative.fn(ops, grads))
            i += 1
        if release:
            self.release()
        return out

    def run_without_grad(self, grads: Any, create_graph: bool, release: bool) -> list[Any]:
        """No incoming gradient: as PyTorch's generated nodes, unpack what was saved anyway (so
        a tensor modified in place, or a second backward, raises; unpack hooks are called),
        free it, and send no gradient."""
        if self._saved is not None or self._op.uses_extras:
            self._unpack(create_graph)
        if release:
            self.release()
        return [None] * len(self._next_fns)

    def _unpack(self, create_graph: bool) -> list[Any]:
        """The derivatives' environment: arguments, then the result, then input shapes."""
        op = self._op
        saved = self._saved
        packed_result = None
        if saved is None:
            env = list(op.blank_args)
        elif is_released(saved):
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        elif type(saved) is PackedSaved:
            env = list(saved.args) if saved.args else list(op.blank_args)
            packed = saved.positions
            for pos in packed:
                env[pos] = _unpack_packed(env[pos], self, create_graph)
            for pos, version in self._versions:
                if pos in packed:
                    if version is None:  # a number given hooks: its unpacked value
                        env[pos] = _as_number(env[pos])
                    continue
                if version is not None:  # saved as it was (hooks on another saved value)
                    env[pos] = _checked_saved(env[pos], version, self, create_graph)
            if saved.result is not None:
                packed_result = saved.result.unpack(self)
        else:
            env = list(saved)
            for pos, version in self._versions:
                if version is not None:
                    env[pos] = _checked_saved(env[pos], version, self, create_graph)
        if op.uses_extras:
            result = self._result
            if packed_result is not None:
                env.append(packed_result if create_graph else packed_result._data)
            elif result is None:
                env.append(None)
            else:
                data, counter, version = result
                if counter[0] != version:
                    _raise_modified_output(data, self, counter, version)
                env.append(_saved_output(data, self, counter) if create_graph else data)
            for meta in self._in_meta:
                env.append(None if meta is None else meta[0])
            if op.records_strides:
                for meta in self._in_meta:
                    env.append(meta[2] if meta is not None and len(meta) > 2 else None)
        return env

    def release(self) -> None:
        saved = self._saved
        if self._versions or self._result is not None or type(saved) is PackedSaved:
            args = saved.args if type(saved) is PackedSaved else saved
            packed = saved.positions if type(saved) is PackedSaved else ()
            kept = [p for p in self._op.kept_numbers if p not in packed]  # (hooked: freed)
            self._saved = ReleasedNumbers({p: args[p] for p in kept}) if kept and args else RELEASED
            self._versions = ()
            self._result = None

    # -- inspection (drawing, ``grad_fn._saved_self``) ------------------------------------

    def _get_saved(self, key: str, attribute: str) -> Any:
        """``grad_fn._saved_<key>`` as PyTorch gives it: a saved input itself (a number as the
        0-d tensor PyTorch wraps it in), the saved output re-attached to this node, or what
        the unpack hook returns (called on each access); None if this node did not need it."""
        op = self._op
        pos = op.result_index if key == "result" else op.index_of.get(key)
        if pos is None or pos not in op.read_positions:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute}'")
        saved = self._saved
        if is_released(saved):
            if type(saved) is ReleasedNumbers and pos in saved.numbers:
                return saved.numbers[pos]
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if key == "result":
            if type(saved) is PackedSaved and saved.result is not None:
                return saved.result.unpack(self)
            if self._result is None:
                return None
            return _saved_output(self._result[0], self, self._result[1])
        if type(saved) is PackedSaved:
            if pos in saved.positions:
                return _unpack_packed(saved.args[pos], self, True)
            saved = saved.args or None
        value = saved[pos] if saved else None
        if pos in op.node_output_nr and value is not None:
            return _saved_output(value._data, self, value._vc, op.node_output_nr[pos])
        if pos in op.input_pos and isinstance(value, bool | int | float | complex):
            return wrap(np.asarray(value))  # PyTorch saved it as a wrapped number
        return value

    def _raw_saved(self, key: str, attribute: str) -> Any:
        """``grad_fn._raw_saved_<key>``: a :class:`RawSavedTensor` on a saved tensor or number
        (also once freed, as PyTorch's handle; a saved tensor list as it is)."""
        if is_released(self._saved):
            op = self._op
            pos = op.result_index if key == "result" else op.index_of.get(key)
            if pos is None or pos not in op.read_positions:
                raise AttributeError(
                    f"'{type(self).__name__}' object has no attribute '{attribute}'")
            return RawSavedTensor(self, key)
        value = self._get_saved(key, attribute)
        if type(value) is tuple:
            return value
        return RawSavedTensor(self, key)

    def _position(self, key: str) -> int:
        op = self._op
        return op.result_index if key == "result" else op.index_of[key]

    def _packed_value(self, key: str) -> Any:
        """The packed record of saved value ``key``, or None when it was saved as it is."""
        saved = self._saved
        if type(saved) is not PackedSaved:
            return None
        pos = self._position(key)
        if key == "result":
            return saved.result
        return saved.args[pos] if pos in saved.positions else None

    def _pack_one(self, key: str, hooks: tuple[Any, Any]) -> None:
        """Pack saved value ``key`` through ``hooks`` (``RawSavedTensor.register_hooks``)."""
        from ..autograd.graph import pack_tensor

        saved = self._saved
        if is_released(saved):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward."
            )
        if self._packed_value(key) is not None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        pos = self._position(key)
        if type(saved) is PackedSaved:
            args, positions, result = list(saved.args), saved.positions, saved.result
        else:
            args, positions, result = list(saved or ()), (), None
        if key == "result":
            data, counter, _ = self._result
            result = pack_tensor(_saved_output(data, self, counter), hooks, True)
            self._result = None
        else:
            value = args[pos]
            version = dict(self._versions).get(pos)
            if isinstance(value, Tensor) and version is not None and value._vc[0] != version:
                _raise_modified(value, self, version)
            args[pos] = _pack_argument(self, pos, value, hooks)
            positions = (*positions, pos)
        self._saved = PackedSaved(tuple(args), positions, result)

    def _get_saved_sizes(self, name: str, attribute: str) -> tuple[int, ...] | None:
        """``grad_fn._saved_self_sym_sizes``: an input's shape, for an op whose derivative reads
        ``<input>_shape`` (PyTorch saves ``self.sym_sizes()`` the same way)."""
        op = self._op
        i = op.input_names.index(name)
        if op.result_index + 1 + i not in op.read_positions:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute}'")
        if is_released(self._saved):
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        meta = self._in_meta[i]
        return None if meta is None else tuple(meta[0])

    def __dir__(self) -> list[str]:
        # As PyTorch's nodes: a ``_saved_*`` attribute for each value a derivative reads.
        op = self._op
        names = [
            n for n in object.__dir__(self)
            if not n.startswith(("_saved_", "_raw_saved_")) and n != "_saved"
        ]
        names.extend("_saved_" + name for name in op.saved_constants)
        for pos in sorted(op.read_positions):
            if pos < op.result_index:
                name = op.param_names[pos]
            elif pos == op.result_index:
                name = "result"
            elif pos <= op.result_index + op.n_inputs:
                names.append(f"_saved_{op.input_names[pos - op.result_index - 1]}_sym_sizes")
                continue
            else:
                continue
            names.append("_saved_" + name)
            if pos in op.tensor_positions or pos == op.result_index:
                names.append("_raw_saved_" + name)
        return sorted(names)

    def saved_values(self) -> dict[str, Any]:
        """The values this node saved for backward, by name (empty once released). Tensors
        saved through ``saved_tensors_hooks`` appear as what the pack hook returned."""
        values: dict[str, Any] = {}
        saved = self._saved
        if is_released(saved):
            return values
        packed_result = None
        packed_at: tuple[int, ...] = ()
        if type(saved) is PackedSaved:
            packed_result = saved.result
            packed_at = saved.positions
            saved = saved.args or None
        names = self._op.param_names
        if saved is not None:
            for pos, _ in self._versions:
                value = saved[pos]
                if pos in packed_at:
                    value = _packed_objects(value)
                values[names[pos]] = value
            tensor_pos = self._op.tensor_positions
            for pos, value in enumerate(saved):
                if pos not in tensor_pos:
                    values[names[pos]] = value
        if self._result is not None:
            values["result"] = self._result[0]
        elif packed_result is not None:
            values["result"] = packed_result.packed
        return values


class MultiOutputOpNode(OpNode):
    """An op node with several differentiable outputs (split, unbind, ...)."""

    __slots__ = ("_n_out", "_out_meta")

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        if self._n_out == 1:
            grads = [grads]  # the engine hands a single-output node its gradient unwrapped
        return OpNode.apply(self, self._materialize(grads, create_graph), create_graph)

    # apply() wraps OpNode's, so the engine's entry point is the generic apply-then-release.
    run_backward = Node.run_backward

    def _materialize(self, grads: list[Any], create_graph: bool) -> list[Any]:
        """Zeros for outputs that received no gradient."""
        result = []
        for g, (shape, np_dtype) in zip(grads, self._out_meta, strict=True):
            if g is None:
                zeros = np.zeros(shape, np_dtype)
                g = wrap(zeros) if create_graph else zeros
            result.append(g)
        return result


class ExtraOutputsOpNode(OpNode):
    """An op node whose PyTorch counterpart has outputs the public function does not return,
    only saves (group norm's mean and rstd, ``@op(node_outputs=)``): those outputs are reached
    only from ``grad_fn._saved_result1`` and the like. As in PyTorch, their gradients count
    only when all of them received one (``OpDef.node_outputs_derivative``); the other inputs'
    derivatives run only when the main output received a gradient."""

    __slots__ = ("_n_out",)

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        main, extra = grads[0], grads[1:]
        if main is None:
            out = [None] * len(self._next_fns)
        else:
            out = OpNode.run_backward(self, main, create_graph, False)
        if all(g is not None for g in extra) and self._in_meta[0] is not None:
            derivative = self._op.node_outputs_derivative
            ops = TENSOR_NS if create_graph else NUMPY_NS
            extra_grad = derivative.fn(ops, tuple(extra), *derivative.gather(
                self._unpack(create_graph)))
            out[0] = extra_grad if out[0] is None else out[0] + extra_grad
        return out

    run_backward = Node.run_backward


def make_node_class(node_name: str, opdef: OpDef, multi_output: bool) -> type[OpNode]:
    """A node class named as PyTorch names it (``MulBackward0``) for one op-table entry.

    Saved values are exposed as PyTorch exposes them, ``grad_fn._saved_self``: one property per
    forward parameter (and ``_saved_result``). They are properties, not ``__getattr__``: a class
    with ``__getattr__`` makes every attribute lookup on its instances slower.
    """
    base = (MultiOutputOpNode if multi_output
            else ExtraOutputsOpNode if opdef.node_output_nr else OpNode)
    namespace: dict[str, Any] = {"__slots__": (), "_op": opdef, "__module__": "chainrule.autograd",
                                 "_passes_grad_view": opdef.view and not multi_output}
    if node_name in CPP_NODE_NAMES:
        namespace["name"] = _qualified_name(node_name)
    for name in (*opdef.param_names, "result"):
        namespace["_saved_" + name] = _saved_property(name, "_saved_" + name)
        namespace["_raw_saved_" + name] = _raw_saved_property(name, "_raw_saved_" + name)
    for name in opdef.input_names:
        attribute = f"_saved_{name}_sym_sizes"
        namespace[attribute] = _sizes_property(name, attribute)
    for name, value in opdef.saved_constants.items():
        namespace["_saved_" + name] = property(
            lambda node, value=value: value, doc=f"The number {name!r} (always {value!r}).")
    return type(node_name, (base,), namespace)


# Nodes PyTorch writes by hand in C++ rather than generating them from derivatives.yaml: their
# name() carries the namespace (``torch::autograd::CopyBackwards``; this package's here), while
# reprs show the bare class name (``grad_fn=<CopyBackwards>``, see ``node.short_name``).
CPP_NODE_NAMES = frozenset({"CopyBackwards"})


def _qualified_name(node_name: str) -> Callable[[Node], str]:
    qualified = f"chainrule::autograd::{node_name}"

    def name(self: Node) -> str:
        return qualified

    name.__doc__ = f"``{qualified!r}`` (PyTorch's C++ name, this package's)."
    return name


def _sizes_property(name: str, attribute: str) -> property:
    def get(node: OpNode) -> tuple[int, ...]:
        return node._get_saved_sizes(name, attribute)

    return property(get, doc=f"The saved shape of {name!r} (as PyTorch's ``{attribute}``).")


def _saved_property(key: str, attribute: str) -> property:
    def get(node: OpNode) -> Any:
        return node._get_saved(key, attribute)

    return property(get, doc=f"The saved value {key!r} (as PyTorch's ``{attribute}``).")


def _raw_saved_property(key: str, attribute: str) -> property:
    def get(node: OpNode) -> Any:
        return node._raw_saved(key, attribute)

    return property(get, doc=f"PyTorch's ``SavedTensor`` handle on the saved value {key!r}.")


def _saved_output(data: np.ndarray, node: OpNode, counter: list[Any] | None = None,
                  output_nr: int = 0) -> Tensor:
    """Re-attach a saved output to its node (the node never holds the output Tensor itself),
    sharing the output's version counter as PyTorch's unpacked output does."""
    t = wrap(data)
    if counter is not None:
        t._vc = counter
    t._requires_grad = True
    t._grad_node = node
    t._output_nr = output_nr
    if DUAL[0]:  # (forward mode through a backward pass: the output's tangent)
        tangent = output_tangent(node, output_nr)
        if tangent is not None:
            set_tangent(t, tangent)
    return t


def _checked_list(tensors: tuple, versions: tuple, node: Node, create_graph: bool) -> tuple:
    """A saved tensor list, each tensor's version checked; Tensors under ``create_graph``,
    else arrays."""
    for t, version in zip(tensors, versions, strict=True):
        if version is not None and t._vc[0] != version:
            _raise_modified(t, node, version)
    if create_graph:
        return tensors
    return tuple(t._data if isinstance(t, Tensor) else t for t in tensors)


def _raise_modified(t: Tensor, node: Node, version: int) -> None:
    from ..autograd.inplace import modified_error

    raise modified_error(t, node, t._vc[0], version)


def _raise_modified_output(data: np.ndarray, node: Node, counter: list[Any], version: int) -> None:
    from ..autograd.inplace import modified_output_error

    raise modified_output_error(data, node, counter[0], version, counter)
