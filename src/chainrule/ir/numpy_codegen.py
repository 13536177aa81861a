"""The graph as a NumPy function: generated source that runs without tensors or autograd.

:func:`numpy_function` writes one line per node of the part of a graph that computes
``outputs`` from ``inputs`` (any values of the graph: a backward function starts from
values the forward saved), compiles it and returns it with its source::

    def forward(w, x):
        add = w + x
        add_1 = w + 1
        mul = add * add_1
        return (mul, add, add_1)

A node is written as the op table runs it eagerly, so the result is the same array:

* ``add``, ``sub``, ``mul`` and ``neg`` of operands of one float dtype as operators (their
  kernels are exactly these operators);
* any other op of the table whose tensor operands share one float32/float64 dtype as a call
  of its NumPy kernel, ``kernels.<name>(...)`` (the dispatch would neither promote nor
  convert anything: the kernel sees the same arrays as in eager mode);
* the engine's plumbing (``ir.helpers``) and derivative formulas the graph could not trace
  (``ir.backward.DerivativeRunner``) as calls of their array versions;
* a function outside the op table with an array version (its ``on_arrays`` attribute: the
  compiler's ``nll_total_weight``) as a call of that version (``call_<name>(...)``);
* everything else (half precision, mixed dtypes, functions outside the op table) through
  the public function on tensors made of the arrays (``call_<name>(...)``), slower but the
  same as eager by construction.

A 0-d result is kept as a 0-d array (NumPy's operators give scalars), as the kernels
expect what the dispatch hands them.
"""

from __future__ import annotations

import inspect
import keyword
import math
import re
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from .._dtype import float32, float64
from .._strides import in_iterator_layout
from .._tensor import Tensor, wrap
from ..autograd.engine import sum_to_shape
from ..ops import _opnode
from .backward import DerivativeRunner
from .graph import Graph, Node, Value
from .helpers import cast, expand_like, identity, sum_to, sum_to_like
from .interpreter import needed_nodes
from .passes import FusedElementwise

__all__ = [
    "NumpyFunction",
    "numpy_function",
    "default_names",
    "emitted_as",
    "REUSE_MIN_ELEMENTS",
]

_INFIX = {"add": "+", "sub": "-", "mul": "*"}
_UFUNCS = {"add": "add", "sub": "subtract", "mul": "multiply"}
_PLAIN_DTYPES = (float32, float64)

#: The smallest result (in elements) written into a temporary operand instead of a new
#: array: below it a new array costs less than NumPy's ``out=`` handling, and the plain
#: operator reads better.
REUSE_MIN_ELEMENTS = 4096


class NumpyFunction:
    """A generated function: ``fn(*input_arrays)`` returns the tuple of output arrays;
    ``source`` is its code, ``namespace`` what the code reads besides its parameters."""

    __slots__ = ("fn", "source", "namespace", "name")

    def __init__(
        self, fn: Callable[..., tuple], source: str, namespace: dict[str, Any], name: str
    ) -> None:
        self.fn = fn
        self.source = source
        self.namespace = namespace
        self.name = name

    def __call__(self, *arrays: Any) -> tuple:
        return self.fn(*arrays)

    def __repr__(self) -> str:
        return f"<NumpyFunction {self.name}>"


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text).strip("_") or "v"
    name = re.sub(r"_+", "_", name)
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "v_" + name
    return name


def default_names(nodes: Sequence[Node]) -> dict[Value, str]:
    """Readable identifiers for the nodes' outputs: the node name in snake case
    (``gradients/Mul_grad/Mul`` -> ``gradients_mul_grad_mul``), made distinct."""
    names: dict[Value, str] = {}
    taken: set[str] = set()
    for node in nodes:
        for value in node.outputs:
            base = _identifier(value.name).lower()
            name, n = base, 1
            while name in taken:
                name = f"{base}_{n}"
                n += 1
            taken.add(name)
            names[value] = name
    return names


def _plain(node: Node) -> bool:
    """Whether the op's kernel sees the same arrays here as in eager mode: its tensor
    operands share one float32/float64 dtype and its numbers are plain ints and floats."""
    op = node.op
    if op is None or op.multi_output:
        return False
    bound = op.bind(node.args, node.kwargs)
    dtype = None
    for p in op.input_pos:
        arg = bound[p]
        if isinstance(arg, Value):
            if dtype is None:
                dtype = arg.dtype
            elif arg.dtype is not dtype:
                return False
        elif arg is not None and type(arg) not in (int, float):
            return False
    if dtype not in _PLAIN_DTYPES:
        return False
    return all(
        v.dtype is dtype or not (v.dtype.is_floating_point or v.dtype.is_complex)
        for v in node.inputs
    )


def emitted_as(node: Node) -> str:
    """How :func:`numpy_function` writes ``node``: ``"operator"``, ``"kernel"``,
    ``"helper"`` or ``"tensor call"`` (see the module's docstring)."""
    if node.target in _HELPERS or isinstance(node.target, DerivativeRunner):
        return "helper"
    if getattr(node.target, "on_arrays", None) is not None:
        return "helper"
    if _plain(node):
        op = node.op
        bound = op.bind(node.args, node.kwargs)
        if op.name in _INFIX and len(bound) == 2 or op.name == "neg":
            return "operator"
        return "kernel"
    return "tensor call"


class _Writer:
    """Builds the source and the namespace it reads."""

    def __init__(self, names: dict[Value, str]) -> None:
        self.names = names
        self.kernels: dict[str, Callable[..., Any]] = {}
        # (one array version per function called on tensors: one name in the code)
        self.tensor_calls: dict[int, Callable[..., Any]] = {}
        self.namespace: dict[str, Any] = {
            "np": np,
            "_asarray": np.asarray,
            "_sum_to": _sum_to,
            "_sum_to_like": _sum_to_like,
            "_expand_like": _expand_like,
            "_cast": _cast,
            "_layout": _layout,
        }
        self.lines: list[str] = []
        self.helpers: list[str] = []  # (the sources of fused functions it calls)
        # Ids of 0-d values an operator computed: NumPy scalars, made 0-d arrays where a
        # kernel or the caller reads them (the dispatch hands kernels arrays).
        self.scalars: set[int] = set()
        # Buffer reuse: ids of the temporaries operators made, each value's last reader.
        self.reuse = False
        self.temporaries: set[int] = set()
        self.last_use: dict[int, Node] = {}

    def reusable(self, node: Node, bound: Sequence[Any]) -> Value | None:
        """An operand whose array the node may write its result into: a temporary this
        function made with an operator (a new array of the result's shape and dtype, not
        0-d), read for the last time here and not returned."""
        if not self.reuse:
            return None
        out = node.outputs[0]
        for operand in bound:
            if (
                isinstance(operand, Value)
                and id(operand) in self.temporaries
                and self.last_use.get(id(operand)) is node
                and operand.shape == out.shape
                and operand.dtype is out.dtype
                and None not in out.shape
                and math.prod(out.shape) >= REUSE_MIN_ELEMENTS
            ):
                return operand
        return None

    def global_name(self, base: str, obj: Any) -> str:
        """A namespace name for ``obj`` (``base``, or ``base_2``... when taken by another)."""
        name, n = _identifier(base), 2
        while name in self.namespace and self.namespace[name] is not obj:
            name = f"{_identifier(base)}_{n}"
            n += 1
        self.namespace[name] = obj
        return name

    def kernel(self, op: Any) -> str:
        name, n = op.name, 2
        while name in self.kernels and self.kernels[name] is not op.forward:
            name = f"{op.name}_{n}"
            n += 1
        self.kernels[name] = op.forward
        return f"kernels.{name}"

    def argument(self, arg: Any, scalar_ok: bool = False) -> str:
        if isinstance(arg, Value):
            name = self.names[arg]
            if not scalar_ok and id(arg) in self.scalars:
                return f"_asarray({name})"
            return name
        if isinstance(arg, tuple | list):
            inner = ", ".join(self.argument(a) for a in arg)
            if isinstance(arg, tuple):
                return f"({inner},)" if len(arg) == 1 else f"({inner})"
            return f"[{inner}]"
        if type(arg) is float and not math.isfinite(arg):  # (repr gives 'inf', 'nan')
            return "np.nan" if math.isnan(arg) else ("np.inf" if arg > 0 else "-np.inf")
        if arg is None or type(arg) in (int, float, bool, str):
            return repr(arg)
        if isinstance(arg, float | int) and not isinstance(arg, np.generic):
            return repr(arg)
        return self.global_name(f"const_{type(arg).__name__.lower()}", arg)


def _sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(sum_to_shape(np.asarray(grad), shape))


def _sum_to_like(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    if grad.shape == like.shape:
        return grad
    return np.asarray(sum_to_shape(np.asarray(grad), like.shape))


def _expand_like(grad: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.array(np.broadcast_to(grad, like.shape))


def _layout(out: np.ndarray, *operands: np.ndarray) -> np.ndarray:
    """An element-wise result over ``operands`` laid out as eager (PyTorch's TensorIterator)
    lays it out: NumPy's layout is the same unless an operand is not row-major."""
    for a in operands:
        if not a.flags.c_contiguous:
            return in_iterator_layout(out, list(operands))
    return out


def _cast(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if value.dtype.kind == "c" and dtype.kind != "c":
        value = value.real
    return np.asarray(value).astype(dtype)


_HELPERS = {identity, sum_to, sum_to_like, expand_like, cast}


def _tensor_call(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target`` (a function over tensors) as a function over arrays."""

    def as_tensor(arg: Any) -> Any:
        if isinstance(arg, np.ndarray | np.generic):
            return wrap(np.asarray(arg))
        if isinstance(arg, tuple | list):
            return type(arg)(as_tensor(a) for a in arg)
        return arg

    def call(*args: Any, **kwargs: Any) -> Any:
        out = target(*(as_tensor(a) for a in args), **{k: as_tensor(v) for k, v in kwargs.items()})
        if isinstance(out, Tensor):
            return out._data
        return tuple(o._data if isinstance(o, Tensor) else o for o in out)

    call.__name__ = getattr(target, "__name__", "call")
    return call


def _array_derivative(runner: DerivativeRunner) -> Callable[..., Any]:
    """A derivative formula the graph could not trace, on arrays (the eager fast path's
    namespace of helpers)."""
    op = runner.forward_op
    derivative = runner.derivative

    def run(grad: Any, result: Any, *bound: Any) -> Any:
        env = list(bound) + [result]
        env += [tuple(getattr(bound[p], "shape", ())) for p in op.input_pos]
        env += [getattr(bound[p], "strides", None) for p in op.input_pos]
        out = derivative.fn(_opnode.NUMPY_NS, grad, *(env[i] for i in derivative.arg_index))
        return np.asarray(out)

    return run


def _keyword_only(forward: Callable[..., Any]) -> set[str]:
    try:
        parameters = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}


def _plain_text(writer: _Writer, node: Node) -> str:
    """The expression of a node whose kernel sees the arrays as in eager mode (``_plain``):
    an operator, or a call of the op's kernel."""
    arg = writer.argument
    op = node.op
    bound = list(op.bind(node.args, node.kwargs))
    reusable = writer.reusable(node, bound)
    if op.name in _INFIX and len(bound) == 2:
        left, right = writer.argument(bound[0], True), writer.argument(bound[1], True)
        if reusable is not None:
            ufunc = _UFUNCS[op.name]
            return f"np.{ufunc}({left}, {right}, out={writer.names[reusable]})"
        return f"{left} {_INFIX[op.name]} {right}"
    if op.name == "neg":
        if reusable is not None:
            name = writer.names[reusable]
            return f"np.negative({name}, out={name})"
        return f"-{writer.argument(bound[0], True)}"
    names = list(inspect.signature(op.forward).parameters)
    keyword_only = _keyword_only(op.forward)
    while bound and bound[-1] is op.defaults[len(bound) - 1]:
        bound.pop()
    texts = []
    for i, value in enumerate(bound):
        if i < len(names) and names[i] in keyword_only:
            texts.append(f"{names[i]}={arg(value)}")
        else:
            texts.append(arg(value))
    return f"{writer.kernel(op)}({', '.join(texts)})"


def _call_text(writer: _Writer, node: Node) -> str:
    """The expression computing ``node``'s output(s)."""
    target = node.target
    arg = writer.argument
    if target is identity:
        return arg(node.args[0])
    if target is sum_to:
        return f"_sum_to({arg(node.args[0])}, {tuple(node.args[1])!r})"
    if target is sum_to_like:
        return f"_sum_to_like({arg(node.args[0])}, {arg(node.args[1])})"
    if target is expand_like:
        return f"_expand_like({arg(node.args[0])}, {arg(node.args[1])})"
    if target is cast:
        dtype = np.dtype(node.args[1].np)
        text = (
            f"np.{dtype.name}" if hasattr(np, dtype.name) else writer.global_name(dtype.name, dtype)
        )
        return f"_cast({arg(node.args[0])}, {text})"
    if isinstance(target, FusedElementwise):
        names = {inner: writer.names.get(outer, "") for inner, outer in target.origins.items()}
        inner = numpy_function(
            target.graph,
            target.inputs,
            [target.output],
            target.__name__,
            {k: v for k, v in names.items() if v},
            as_tuple=False,
        )
        fn = writer.global_name(target.__name__, inner.fn)
        if inner.source not in writer.helpers:
            writer.helpers.append(inner.source)
        return f"{fn}({', '.join(arg(a) for a in node.args)})"
    if isinstance(target, DerivativeRunner):
        fn = writer.global_name(f"derivative_{target.__name__}", _array_derivative(target))
        return f"{fn}({', '.join(arg(a) for a in node.args)})"
    if _plain(node):
        text = _plain_text(writer, node)
        op = node.op
        out_shape = node.outputs[0].shape
        if op.iterates and out_shape is not None and len(out_shape) > 1:
            bound = op.bind(node.args, node.kwargs)
            arrays = [
                bound[p]
                for p in op.iterated_pos
                if isinstance(bound[p], Value) and bound[p].shape != ()
            ]
            if len(arrays) > 1:  # (operands of two layouts: PyTorch's result layout)
                return f"_layout({text}, {', '.join(arg(a) for a in arrays)})"
        return text
    name = getattr(target, "__name__", "fn")
    on_arrays = getattr(target, "on_arrays", None)
    if on_arrays is not None:  # (a function over tensors with an array version of its own)
        fn = writer.global_name(f"call_{name}", on_arrays)
        texts = [arg(a) for a in node.args] + [f"{k}={arg(v)}" for k, v in node.kwargs.items()]
        return f"{fn}({', '.join(texts)})"
    call = writer.tensor_calls.get(id(target))
    if call is None:
        call = writer.tensor_calls[id(target)] = _tensor_call(target)
    fn = writer.global_name(f"call_{name}", call)
    texts = [arg(a) for a in node.args] + [f"{k}={arg(v)}" for k, v in node.kwargs.items()]
    return f"{fn}({', '.join(texts)})"


def numpy_function(
    graph: Graph,
    inputs: Sequence[Value],
    outputs: Sequence[Value],
    name: str = "forward",
    names: dict[Value, str] | None = None,
    comments: dict[Value, str] | None = None,
    reuse_buffers: bool = True,
    as_tuple: bool = True,
    effects: Sequence[Value] = (),
) -> NumpyFunction:
    """Generate and compile ``name(*inputs) -> tuple(outputs)`` over NumPy arrays.

    ``inputs`` may be any values of ``graph`` (nothing upstream of them runs); ``names``
    gives identifiers for values (by default :func:`default_names`); ``comments`` a comment
    for a value's line; ``reuse_buffers``: an operator writes into a temporary operand it
    reads last (``np.add(a, b, out=a)``), no new array; ``as_tuple`` False: a function of one
    output returns it alone; ``effects``: values computed for their effects (a random draw)
    though not returned. Raises ``ValueError`` when an output needs a placeholder that is not
    among ``inputs``."""
    nodes = needed_nodes(graph, list(outputs) + list(effects), list(inputs))
    all_names = default_names([v.node for v in inputs] + nodes)
    if names:
        all_names.update(names)
    writer = _Writer(all_names)
    given = {id(v) for v in inputs}
    writer.reuse = reuse_buffers
    # (a temporary that any other kind of node reads may live on in its result: a view, an
    # alias; never reused)
    shared: set[int] = set()
    for node in nodes:
        operator = reuse_buffers and emitted_as(node) == "operator"
        for value in node.inputs:
            writer.last_use[id(value)] = node
            if not operator:
                shared.add(id(value))
    returned_ids = {id(v) for v in outputs} | shared
    params = ", ".join(all_names[v] for v in inputs)
    lines = [f"def {name}({params}):"]
    for node in nodes:
        if all(id(v) in given for v in node.outputs):
            continue
        if node.kind in ("placeholder", "variable"):
            raise ValueError(f"{node.name!r} is needed but not among the inputs")
        targets = ", ".join(all_names[v] for v in node.outputs)
        if node.kind == "constant":
            ref = writer.global_name(f"const_{all_names[node.outputs[0]]}", node.value)
            lines.append(f"    {targets} = {ref}")
            continue
        if node.kind != "call":
            raise ValueError(f"a {node.kind} node cannot be generated as NumPy code")
        text = _call_text(writer, node)
        if (
            emitted_as(node) == "operator"
            and node.outputs[0].shape
            and id(node.outputs[0]) not in returned_ids
        ):
            writer.temporaries.add(id(node.outputs[0]))
        if len(node.outputs) == 1 and node.outputs[0].shape == ():
            if emitted_as(node) == "operator":
                writer.scalars.add(id(node.outputs[0]))
            elif node.target is not identity:
                text = f"_asarray({text})"
            elif id(node.args[0]) in writer.scalars:
                writer.scalars.add(id(node.outputs[0]))
        note = comments.get(node.outputs[0]) if comments and node.outputs else None
        lines.append(f"    {targets} = {text}" + (f"  # {note}" if note else ""))
    returned = ", ".join(writer.argument(v) for v in outputs)
    if not as_tuple and len(outputs) == 1:
        lines.append(f"    return {returned}")
    elif len(outputs) == 1:
        lines.append(f"    return ({returned},)")
    else:
        lines.append(f"    return ({returned})")
    source = "\n".join(lines) + "\n"
    helpers = "".join(h + "\n" for h in writer.helpers)
    writer.namespace["kernels"] = SimpleNamespace(**writer.kernels)
    namespace = dict(writer.namespace)
    exec(compile(source, f"<chainrule.ir generated {name}>", "exec"), namespace)
    return NumpyFunction(namespace[name], helpers + source, writer.namespace, name)
