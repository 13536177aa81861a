"""The op table's machinery: declare an op once, with its NumPy forward and one derivative per
differentiable input beside it; this module does all the plumbing around them.

    @op("MulBackward0", inputs=("self", "other"), promote=ARITH)
    def mul(self, other):
        return self * other

    @mul.derivative("self")
    def _(F, grad, other):
        return grad * other

    @mul.derivative("other")
    def _(F, grad, self):
        return grad * self

What the machinery does, so no op has to:

* binds arguments to the forward's signature (positional fast path, keywords when given);
* unwraps tensors, applies PyTorch's type promotion, runs the forward, wraps the result;
* when grad mode is on and an input requires grad, creates the node (named as in PyTorch,
  ``next_functions`` from the inputs) and saves what the needed derivatives ask for, and only
  that: a derivative's parameter names (after ``F`` and ``grad``) say which forward arguments,
  or ``result``, it reads;
* in backward, checks saved tensors' versions, unpacks them (arrays on the fast path, Tensors
  when ``create_graph=True``) and calls the derivatives with ``F``: a namespace of torch-style
  helpers over ndarrays (fast path) or over Tensors (recorded, so derivatives are differentiable).

Broadcast gradients are reduced to each input's shape by the engine, once: a derivative returns
the gradient at the broadcast shape. A derivative returns either a new array or a view of
``grad``; it never returns a saved value itself (the engine may hand a new array to a leaf's
``.grad`` without copying).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, grad_accumulator, wrap
from ..autograd.grad_mode import state as _grad_state
from ..autograd.node import SECOND_BACKWARD_MESSAGE, Node, next_sequence_nr

__all__ = [
    "op", "OpDef", "OpNode", "apply", "ARITH", "FLOAT", "COMPARE", "KEEP", "INT_TO_FLOAT",
    "register_method", "bind_namespaces",
]

# Type-promotion modes of an op's differentiable inputs.
KEEP = "keep"  # no promotion: the op keeps its input's dtype (shape ops, indexing)
ARITH = "arith"  # promote inputs to a common dtype, result in that dtype (add, mul, where ...)
FLOAT = "float"  # like ARITH, then integral/bool results become the default float (div, exp)
COMPARE = "compare"  # promote for the comparison, result is bool (eq, lt ...)
INT_TO_FLOAT = FLOAT

_ndarray = np.ndarray
_new = object.__new__
_float_kinds = "fc"

# Derivative namespaces, set by ops/__init__.py once every op exists.
NUMPY_NS: Any = None
TENSOR_NS: Any = None


def bind_namespaces(numpy_ns: Any, tensor_ns: Any) -> None:
    """Install the helper namespaces derivatives receive as ``F``."""
    global NUMPY_NS, TENSOR_NS
    NUMPY_NS = numpy_ns
    TENSOR_NS = tensor_ns


class _Derivative:
    """One derivative: the function and where its arguments come from."""

    __slots__ = ("fn", "arg_index")

    def __init__(self, fn: Callable[..., Any], arg_index: tuple[int, ...]) -> None:
        self.fn = fn
        self.arg_index = arg_index


class OpDef:
    """An entry of the op table."""

    def __init__(
        self,
        forward: Callable[..., Any],
        node_name: str,
        inputs: Sequence[str],
        promote: str,
        tensor_params: Sequence[str],
        differentiable: bool,
        num_outputs: int,
        nondiff_outputs: int,
        promote_with: Sequence[str] = (),
        view: bool = False,
        signatures: Sequence[str] = (),
    ) -> None:
        self.forward = _positional(forward)
        # PyTorch's overload signatures, quoted in its error for arguments that match none.
        self.signatures = tuple(signatures)
        self.name = forward.__name__
        self.node_name = node_name
        signature = inspect.signature(forward)
        params = list(signature.parameters.values())
        self.param_names = tuple(p.name for p in params)
        self.keyword_only = frozenset(p.name for p in params if p.kind is p.KEYWORD_ONLY)
        self.defaults = tuple(
            p.default if p.default is not inspect.Parameter.empty else _REQUIRED for p in params
        )
        self.index_of = {name: i for i, name in enumerate(self.param_names)}
        self.input_pos = tuple(self.index_of[name] for name in inputs)
        self.input_names = tuple(inputs)
        self.n_inputs = len(self.input_pos)
        self.tensor_param_pos = tuple(self.index_of[name] for name in tensor_params)
        self.promote = promote
        # Numbers passed as non-tensor arguments that still take part in type promotion
        # (the exponent of ``x ** 2.5``, the bounds of ``clamp``).
        self.promote_pos = self.input_pos + tuple(self.index_of[n] for n in promote_with)
        self.view = view
        self.differentiable = differentiable
        self.num_outputs = num_outputs  # differentiable outputs (1 for most ops; -1: variable)
        self.nondiff_outputs = nondiff_outputs  # trailing outputs that never get a grad_fn
        self.derivatives: list[_Derivative | None] = [None] * self.n_inputs
        self.result_index = len(self.param_names)
        self._plans: dict[tuple[bool, ...], tuple[tuple[int, ...], bool, bool, tuple[int, ...]]] = {}
        self.node_cls = _make_node_class(node_name, self, num_outputs)
        self.simple = (
            self.input_pos == tuple(range(self.n_inputs)) and not self.tensor_param_pos
        )

    def __repr__(self) -> str:
        return f"<op {self.name} -> {self.node_name}>"

    def derivative(self, input_name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register the derivative for one differentiable input (by its parameter name)."""
        index = self.input_names.index(input_name)

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            names = list(inspect.signature(fn).parameters)[2:]
            arg_index = []
            for name in names:
                if name == "result":
                    arg_index.append(self.result_index)
                elif name.endswith("_shape") and name[: -len("_shape")] in self.input_names:
                    # The input's shape, known without saving the input itself.
                    position = self.input_names.index(name[: -len("_shape")])
                    arg_index.append(self.result_index + 1 + position)
                elif name in self.index_of:
                    arg_index.append(self.index_of[name])
                else:
                    raise TypeError(
                        f"derivative of {self.name}: unknown argument {name!r}; expected one of "
                        f"{self.param_names}, '<input>_shape' or 'result'"
                    )
            self.derivatives[index] = _Derivative(fn, tuple(arg_index))
            self._plans.clear()
            return fn

        return register

    def save_plan(
        self, needs: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], bool, bool, tuple[int, ...]]:
        """For these needs: tensor positions to save, whether the result and the non-tensor
        arguments are read, and tensor positions not to keep."""
        plan = self._plans.get(needs)
        if plan is None:
            used: set[int] = set()
            for i, need in enumerate(needs):
                d = self.derivatives[i]
                if need and d is not None:
                    used.update(d.arg_index)
            tensor_pos = self.input_pos + self.tensor_param_pos
            inputs = tuple(p for p in tensor_pos if p in used)
            # Tensor arguments no derivative reads are not kept alive by the node.
            drop = tuple(p for p in tensor_pos if p not in used)
            others = any(
                p in used for p in range(len(self.param_names)) if p not in tensor_pos
            )
            plan = (inputs, self.result_index in used, others, drop)  # type: ignore[assignment]
            self._plans[needs] = plan
        return plan

    def bind(self, args: tuple, kwargs: dict[str, Any]) -> tuple:
        """Positional and keyword arguments to one positional tuple, defaults filled in."""
        n_given = len(args)
        if n_given > len(self.param_names):
            raise TypeError(
                f"{self.name}() takes {len(self.param_names)} positional arguments but "
                f"{n_given} were given"
            )
        values = list(args) + list(self.defaults[n_given:])
        for key, value in kwargs.items():
            i = self.index_of.get(key)
            if i is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if i < n_given:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            values[i] = value
        missing = [self.param_names[i] for i, v in enumerate(values) if v is _REQUIRED]
        if missing:
            if self.signatures:
                raise TypeError(self.invalid_arguments_message(args, kwargs))
            names = ", ".join(f'"{name}"' for name in missing)
            raise TypeError(
                f"{self.name}() missing {len(missing)} required positional arguments: {names}"
            )
        return tuple(values)

    def invalid_arguments_message(self, args: tuple, kwargs: dict[str, Any]) -> str:
        """PyTorch's message for a call that matches none of an op's overloads."""
        got = [_type_label(a) for a in args] + [f"{k}={_type_label(v)}" for k, v in kwargs.items()]
        lines = [
            f"{self.name}() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:"
        ]
        lines.extend(f" * {signature}" for signature in self.signatures)
        return "\n".join(lines) + "\n"


def _positional(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The same function with its keyword-only parameters made positional.

    The public function keeps PyTorch's signature (``add(a, b, *, alpha=1)``) and binds it;
    the machinery then calls the forward with one positional tuple, which is cheaper than
    building a keyword dict on every call.
    """
    code = fn.__code__
    if not code.co_kwonlyargcount:
        return fn
    names = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    kwdefaults = fn.__kwdefaults__ or {}
    new_code = code.replace(
        co_argcount=code.co_argcount + code.co_kwonlyargcount, co_kwonlyargcount=0
    )
    defaults = tuple(fn.__defaults__ or ())
    if all(name in kwdefaults for name in names) and (
        len(defaults) == code.co_argcount or not names
    ):
        defaults = defaults + tuple(kwdefaults[name] for name in names)
    positional = types.FunctionType(new_code, fn.__globals__, fn.__name__, defaults, fn.__closure__)
    positional.__doc__ = fn.__doc__
    return positional


def _type_label(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    return type(value).__name__


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Any = _Required()


# ----------------------------------------------------------------------------------------------
# Nodes made from the op table

class OpNode(Node):
    """A node created by an op-table entry; ``apply`` calls the entry's derivatives."""

    __slots__ = ("_args", "_versions", "_result", "_needs", "_released")

    _op: OpDef

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        op = self._op
        env = self._unpack(create_graph)
        F = TENSOR_NS if create_graph else NUMPY_NS
        if self._n_out != 1:
            grads = self._materialize(grads, create_graph)
        derivatives = op.derivatives
        out = []
        for i, need in enumerate(self._needs):
            d = derivatives[i]
            if not need:
                out.append(None)
            elif d is None:
                raise RuntimeError(f"derivative for {op.name} is not implemented")
            else:
                out.append(d.fn(F, grads, *[env[j] for j in d.arg_index]))
        return tuple(out)

    def _unpack(self, create_graph: bool) -> list[Any]:
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        args = self._args
        env = list(args) if args is not None else [None] * len(self._op.param_names)
        versions = self._versions
        if versions is not None:
            for pos, version in versions:
                t = env[pos]
                if t._vc[0] != version:
                    _raise_modified(t, self, pos, version)
                env[pos] = t if create_graph else t._data
        saved = self._result
        if saved is not None and saved[0] is not None:
            data, vc, version, output_nr = saved[:4]
            if vc[0] != version:
                _raise_modified_result(data, self, output_nr, vc[0], version)
            env.append(_saved_output(data, self, output_nr) if create_graph else data)
        else:
            env.append(None)
        for meta in self._in_meta:
            env.append(None if meta is None else meta[0])
        return env

    def _materialize(self, grads: list[Any], create_graph: bool) -> list[Any]:
        """Multi-output nodes: zeros for outputs that received no gradient."""
        shapes = self._out_shapes()
        result = []
        for g, (shape, np_dtype) in zip(grads, shapes, strict=True):
            if g is None:
                z = np.zeros(shape, np_dtype)
                g = wrap(z) if create_graph else z
            result.append(g)
        return result

    def _out_shapes(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        return self._result[4] if self._result is not None else []  # type: ignore[index]

    def release(self) -> None:
        if self._args is not None or self._result is not None:
            self._args = None
            self._versions = None
            if self._result is not None and self._n_out != 1:
                data, vc, version, nr, shapes = self._result
                self._result = (None, vc, version, nr, shapes)
            else:
                self._result = None
            self._released = True

    def __getattr__(self, name: str) -> Any:
        # PyTorch exposes saved values as ``_saved_<name>`` (e.g. ``grad_fn._saved_self``).
        if name.startswith("_saved_"):
            return self._saved_value(name[len("_saved_"):])
        if name.startswith("_raw_saved_"):
            return self._saved_value(name[len("_raw_saved_"):])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _saved_value(self, name: str) -> Any:
        op = self._op
        if name == "result":
            if self._result is None:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '_saved_result'")
            env = self._unpack(True)
            return env[-1]
        if name not in op.index_of:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '_saved_{name}'")
        pos = op.index_of[name]
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if self._args is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '_saved_{name}'")
        value = self._args[pos]
        return value

    def saved_values(self) -> dict[str, Any]:
        """The values this node saved for backward, by name (for drawing and inspection)."""
        result: dict[str, Any] = {}
        if self._released or (self._args is None and self._result is None):
            return result
        plan = self._op.save_plan(self._needs)
        if self._args is not None:
            for pos in plan[0]:
                result[self._op.param_names[pos]] = self._args[pos]
            if plan[2]:
                for pos, name in enumerate(self._op.param_names):
                    if pos not in self._op.input_pos and pos not in self._op.tensor_param_pos:
                        result[name] = self._args[pos]
        if self._result is not None and self._result[0] is not None:
            result["result"] = self._result[0]
        return result


def _make_node_class(node_name: str, opdef: OpDef, num_outputs: int) -> type[OpNode]:
    namespace: dict[str, Any] = {"__slots__": (), "_op": opdef, "__module__": "chainrule.autograd"}
    if num_outputs != 1:
        namespace["__slots__"] = ("_n_out",)
    return type(node_name, (OpNode,), namespace)


def _saved_output(data: np.ndarray, node: OpNode, output_nr: int) -> Tensor:
    """Re-attach a saved output to its node (the node never holds the output Tensor itself)."""
    t = wrap(data)
    t._requires_grad = True
    t._grad_fn = node
    t._output_nr = output_nr
    return t


def _raise_modified(t: Tensor, node: Node, pos: int, version: int) -> None:
    from ..autograd.inplace import modified_error

    raise modified_error(t._data, node, 0, t._vc[0], version, getattr(t, "_vc", None))


def _raise_modified_result(data: np.ndarray, node: Node, nr: int, now: int, version: int) -> None:
    from ..autograd.inplace import modified_error

    raise modified_error(data, node, nr, now, version, None, is_output=True)


# ----------------------------------------------------------------------------------------------
# Applying an op

def _type_error(op: OpDef, value: Any, pos: int) -> TypeError:
    return TypeError(
        f"{op.name}(): argument '{op.param_names[pos]}' (position {pos + 1}) must be Tensor, "
        f"not {type(value).__name__}"
    )


_number_types = (int, float, bool, complex)


def _promote(op: OpDef, values: list[Any], positions: tuple[int, ...]) -> np.dtype | None:
    """Cast the differentiable inputs to their common dtype; return the compute dtype."""
    first = None
    same = True
    scalar_cat = -1
    for p in positions:
        v = values[p]
        if type(v) is _ndarray:
            if first is None:
                first = v.dtype
            elif v.dtype is not first and v.dtype != first:
                same = False
        elif type(v) in _number_types:
            scalar_cat = max(scalar_cat, _dtype.scalar_category(v))
        elif isinstance(v, np.generic):
            values[p] = v = v.item()
            scalar_cat = max(scalar_cat, _dtype.scalar_category(v))
    if first is not None and same:
        d = _dtype._BY_NUMPY[first]
        if scalar_cat <= d._cat:
            target = d
        else:
            target = _dtype.default_for_category(scalar_cat)
            if target.is_complex and d is _dtype.float64:
                target = _dtype.complex128
    else:
        dim_dtype = zero_dtype = None
        for p in positions:
            v = values[p]
            if type(v) is _ndarray:
                d = _dtype._BY_NUMPY[v.dtype]
                if v.ndim:
                    dim_dtype = d if dim_dtype is None else _dtype._PAIR_TABLE[(dim_dtype, d)]
                else:
                    zero_dtype = d if zero_dtype is None else _dtype._PAIR_TABLE[(zero_dtype, d)]
        target = _dtype.combine(dim_dtype, zero_dtype, scalar_cat)
    if op.promote == FLOAT and target._cat < 2:
        target = _dtype.get_default_dtype()
    np_target = target.np
    for p in positions:
        v = values[p]
        if type(v) is _ndarray:
            if v.dtype != np_target:
                values[p] = v.astype(np_target)
        elif type(v) in _number_types and (
            first is None or not same or target._cat != _dtype._BY_NUMPY[first]._cat
        ):
            # A number whose category decides the result: make it an array of that dtype so
            # NumPy computes in the dtype PyTorch would.
            values[p] = np.asarray(v, dtype=np_target)
    return np_target


def apply(op: OpDef, args: tuple) -> Any:
    """Run ``op`` on positional ``args`` (already bound), recording a node when needed."""
    values = list(args)
    requires_grad = False
    for p in op.input_pos:
        x = values[p]
        if isinstance(x, Tensor):
            values[p] = x._data
            if x._requires_grad:
                requires_grad = True
        elif type(x) not in _number_types and not isinstance(x, np.generic):
            raise _type_error(op, x, p)
    for p in op.tensor_param_pos:
        x = values[p]
        if isinstance(x, Tensor):
            values[p] = x._data
    promote = op.promote
    if promote is not KEEP:
        _promote(op, values, op.promote_pos)
    out = op.forward(*values)
    record = requires_grad and op.differentiable and _grad_state.grad_enabled
    if op.num_outputs == 1 and not op.nondiff_outputs:
        if type(out) is not _ndarray:
            out = np.asarray(out)
        result = wrap(out)
        if op.view:
            _share_with_base(result, args[op.input_pos[0]])
        if record and out.dtype.kind in _float_kinds:
            _record(op, args, (out,), (result,), 1)
        return result
    return _wrap_outputs(op, args, out, record)


def _share_with_base(view: Tensor, source: Tensor) -> None:
    """A view shares its base's version counter; ``_base`` is the tensor owning the memory."""
    view._vc = source._vc
    view._base = source._base if source._base is not None else source


def _wrap_outputs(op: OpDef, args: tuple, out: Sequence[Any], record: bool) -> tuple:
    outs = [o if type(o) is _ndarray else np.asarray(o) for o in out]
    n_diff = len(outs) - op.nondiff_outputs
    results = tuple(wrap(o) for o in outs)
    if op.view:
        source = args[op.input_pos[0]]
        for t in results[:n_diff]:
            _share_with_base(t, source)
    if record and n_diff and outs[0].dtype.kind in _float_kinds:
        _record(op, args, tuple(outs[:n_diff]), results[:n_diff], n_diff)
    return results


def _record(op: OpDef, args: tuple, outs: tuple, results: tuple, n_out: int) -> None:
    """Create the node for one application of ``op`` and attach it to the results."""
    node = _new(op.node_cls)
    edges = []
    metas = []
    needs = []
    for p in op.input_pos:
        x = args[p]
        if isinstance(x, Tensor) and x._requires_grad:
            fn = x._grad_fn
            edges.append((fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0))
            metas.append((x._data.shape, x._data.dtype))
            needs.append(True)
        else:
            edges.append((None, 0))
            metas.append(None)
            needs.append(False)
    needs_t = tuple(needs)
    node.next_functions = tuple(edges)
    node._in_meta = tuple(metas)
    node._needs = needs_t
    node._seq = next_sequence_nr()
    node._hooks = None
    node._anomaly_trace = None
    node._released = False
    save_inputs, save_result, save_params, drop = op.save_plan(needs_t)
    if save_inputs or save_params:
        if drop:
            kept = list(args)
            for p in drop:
                kept[p] = None
            args = tuple(kept)
        node._args = args
        versions = []
        for p in save_inputs:
            x = args[p]
            if isinstance(x, Tensor):
                versions.append((p, x._vc[0]))
        node._versions = tuple(versions) if versions else None
    else:
        node._args = None
        node._versions = None
    if n_out != 1:
        node._n_out = n_out
        shapes = [(o.shape, o.dtype) for o in outs]
        if save_result:
            node._result = (outs[0], results[0]._vc, 0, 0, shapes)
        else:
            node._result = (None, [0], 0, 0, shapes)
    elif save_result:
        node._result = (outs[0], results[0]._vc, 0, 0)
    else:
        node._result = None
    if _grad_state.anomaly:
        from ..autograd.anomaly import record_trace

        record_trace(node)
    for nr, t in enumerate(results):
        t._requires_grad = True
        t._grad_fn = node
        t._output_nr = nr


# ----------------------------------------------------------------------------------------------
# Declaring ops

def op(
    node_name: str,
    *,
    inputs: Sequence[str] = ("self",),
    promote: str = KEEP,
    tensor_params: Sequence[str] = (),
    differentiable: bool = True,
    num_outputs: int = 1,
    nondiff_outputs: int = 0,
    promote_with: Sequence[str] = (),
    view: bool = False,
    signatures: Sequence[str] = (),
) -> Callable[[Callable[..., Any]], OpFunction]:
    """Declare an op: decorate its NumPy forward; returns the public function.

    ``inputs`` names the differentiable tensor arguments (each gets a ``next_functions`` entry);
    ``tensor_params`` names other tensor arguments (indices, masks) that are unwrapped to arrays
    but get no edge. ``num_outputs`` > 1 (or -1 for a variable number) makes a multi-output node;
    ``nondiff_outputs`` counts trailing outputs that are never differentiable (e.g. indices).
    ``promote_with`` names number arguments that take part in type promotion; ``view=True``
    marks ops whose result shares memory (and the version counter) with ``self``.
    """

    def declare(forward: Callable[..., Any]) -> OpFunction:
        opdef = OpDef(
            forward, node_name, inputs, promote, tensor_params, differentiable, num_outputs,
            nondiff_outputs, promote_with, view, signatures,
        )
        return make_public(opdef)

    return declare


class OpFunction:
    """Marker type for the public callables ``op`` returns (they are plain functions)."""

    op: OpDef
    derivative: Callable[[str], Callable[[Callable[..., Any]], Callable[..., Any]]]


def make_public(opdef: OpDef) -> Any:
    """The public function for an op: a positional fast path, keywords bound when given."""
    n_params = len(opdef.param_names)
    defaults = opdef.defaults
    bind = opdef.bind
    required = sum(1 for d in defaults if d is _REQUIRED)

    def public(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return apply(opdef, bind(args, kwargs))
        n = len(args)
        if n == n_params:
            return apply(opdef, args)
        if required <= n < n_params:
            return apply(opdef, args + defaults[n:])
        return apply(opdef, bind(args, kwargs))

    public.__name__ = opdef.name
    public.__qualname__ = opdef.name
    public.__doc__ = opdef.forward.__doc__
    public.__wrapped__ = opdef.forward  # type: ignore[attr-defined]
    public.op = opdef  # type: ignore[attr-defined]
    public.derivative = opdef.derivative  # type: ignore[attr-defined]
    return public


def register_method(name: str, fn: Callable[..., Any]) -> None:
    """Attach ``fn`` to Tensor as a method (ops modules call this for their public ops)."""
    setattr(Tensor, name, fn)

