"""TensorFlow 1's graph objects over chainrule's IR: ``Graph``, ``Operation``, ``Tensor`` and
``TensorShape``, the default graph, and the conversion of Python values to constants.

A ``tf.Graph`` holds an :class:`chainrule.ir.Graph`; each ``Operation`` is an IR node, each
``Tensor`` one output of it. Names are the IR's, made unique as TensorFlow makes them
(``Add``, ``Add_1``; case-insensitive, so ``add`` after ``Add`` is ``add_1``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import ir
from ..ir import Graph as IRGraph
from ..ir import Node as IRNode
from ..ir import Value as IRValue
from . import dtypes
from .dtypes import DType

__all__ = [
    "Graph",
    "Operation",
    "Tensor",
    "TensorShape",
    "Dimension",
    "get_default_graph",
    "reset_default_graph",
    "convert_to_tensor",
    "constant_array",
    "name_scope",
]


class Dimension:
    """One dimension of a static shape, as TensorFlow 1 gives it: ``Dimension(2)``, printed
    ``2``, or ``Dimension(None)``, printed ``?``, for a size known only at run time."""

    __slots__ = ("value",)

    def __init__(self, value: int | None) -> None:
        self.value = None if value is None else int(value)

    def __repr__(self) -> str:
        return f"Dimension({self.value})"

    def __str__(self) -> str:
        return "?" if self.value is None else str(self.value)

    def __int__(self) -> int:
        if self.value is None:
            raise TypeError(
                "int() argument must be a string, a bytes-like object or a number, not 'NoneType'"
            )
        return self.value

    __index__ = __int__

    def __eq__(self, other: object) -> Any:
        other_value = other.value if isinstance(other, Dimension) else other
        if self.value is None or other_value is None:
            return None
        return self.value == other_value

    def __hash__(self) -> int:
        return hash(self.value)


class TensorShape:
    """A static shape as TensorFlow 1 shows it: ``TensorShape([Dimension(None),
    Dimension(2)])``, printed ``(?, 2)``; ``?`` dimensions are known only when the graph runs,
    a shape of unknown rank prints ``<unknown>``."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Sequence[Any] | None) -> None:
        values = None if dims is None else [getattr(d, "value", d) for d in dims]
        self._dims = (
            None if values is None else tuple(None if d is None else int(d) for d in values)
        )

    @property
    def dims(self) -> list[int | None] | None:
        """The dimensions (None for unknown rank)."""
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        """The rank, None when unknown."""
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list[int | None]:
        """The dimensions as a list (``ValueError`` for unknown rank)."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self) -> bool:
        """True when the rank and every dimension are known."""
        return self._dims is not None and None not in self._dims

    def is_compatible_with(self, other: Any) -> bool:
        """True when ``other`` could be this shape (unknown parts match anything)."""
        other = (
            other
            if isinstance(other, TensorShape)
            else TensorShape(None if other is None else [getattr(d, "value", d) for d in other])
        )
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims, strict=True)
        )

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[Dimension]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter([Dimension(d) for d in self._dims])

    def __getitem__(self, index: Any) -> Any:
        if self._dims is None:
            return Dimension(None)
        if isinstance(index, slice):
            return TensorShape(self._dims[index])
        return Dimension(self._dims[index])

    def __eq__(self, other: object) -> bool:
        try:
            other_dims = other._dims if isinstance(other, TensorShape) else TensorShape(other)._dims  # type: ignore[arg-type]
        except TypeError:
            return NotImplemented
        return self._dims == other_dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape([" + ", ".join(repr(Dimension(d)) for d in self._dims) + "])"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        dims = [str(Dimension(d)) for d in self._dims]
        if len(dims) == 1:
            return f"({dims[0]},)"
        return "(" + ", ".join(dims) + ")"


class Operation:
    """A node of the graph: ``name``, ``type``, ``inputs``, ``outputs``; printed as
    ``<tf.Operation 'Add' type=AddV2>``."""

    __slots__ = ("_node", "graph")

    def __init__(self, node: IRNode, graph: Graph) -> None:
        self._node = node
        self.graph = graph

    @property
    def name(self) -> str:
        """The operation's unique name in its graph."""
        return self._node.name

    @property
    def type(self) -> str:
        """What it computes, by TensorFlow's op name (``AddV2``, ``Mul``, ``Const``)."""
        return self._node.type

    @property
    def inputs(self) -> list[Tensor]:
        """The tensors it reads (a reduction's axes too, as TensorFlow lists them)."""
        extra = self._node.attrs.get("extra_inputs", ())
        return [self.graph._tensor(v) for v in (*self._node.inputs, *extra)]

    @property
    def outputs(self) -> list[Tensor]:
        """The tensors it produces."""
        return [self.graph._tensor(v) for v in self._node.outputs]

    @property
    def control_inputs(self) -> list[Operation]:
        """Operations that run before it."""
        return [self.graph._operation(n) for n in self._node.control]

    def values(self) -> tuple[Tensor, ...]:
        """The outputs, as a tuple."""
        return tuple(self.outputs)

    def run(self, feed_dict: Any = None, session: Any = None) -> None:
        """Run this operation in ``session`` (the default session if None)."""
        from .session import default_session

        (session or default_session()).run(self, feed_dict=feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"

    def __str__(self) -> str:
        lines = [f'name: "{self.name}"', f'op: "{self.type}"']
        lines += [f'input: "{t.name.removesuffix(":0")}"' for t in self.inputs]
        lines += [f'input: "^{op.name}"' for op in self.control_inputs]
        return "\n".join(lines) + "\n"


class Tensor:
    """One output of an operation: ``Tensor("Mul:0", shape=(), dtype=float32)``. It holds no
    value; a :class:`Session` computes it."""

    __slots__ = ("_value", "graph", "_dtype")

    # NumPy defers to the operators below (``np.float32(2) * t``).
    __array_priority__ = 100

    def __init__(self, value: IRValue, graph: Graph, dtype: DType | None = None) -> None:
        self._value = value
        self.graph = graph
        self._dtype = dtype

    @property
    def op(self) -> Operation:
        """The operation that produces it."""
        return self.graph._operation(self._value.node)

    @property
    def value_index(self) -> int:
        """Which output of its operation it is."""
        return self._value.index

    @property
    def name(self) -> str:
        """``<operation name>:<output index>``."""
        return f"{self._value.node.name}:{self._value.index}"

    @property
    def dtype(self) -> DType:
        """Its TensorFlow dtype."""
        return self._dtype if self._dtype is not None else dtypes.as_dtype(self._value.dtype)

    @property
    def shape(self) -> TensorShape:
        """Its static shape (``None`` where known only when the graph runs)."""
        return TensorShape(self._value.shape)

    def get_shape(self) -> TensorShape:
        """Its static shape."""
        return self.shape

    def consumers(self) -> list[Operation]:
        """The operations that read it."""
        return [
            self.graph._operation(n)
            for n in self.graph._ir.nodes
            if any(v is self._value for v in n.inputs)
        ]

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        """Its value, computed by ``session`` (the default session if None)."""
        from .session import default_session

        return (session or default_session()).run(self, feed_dict=feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self) -> str:
        if self._value.shape is None:
            return f'Tensor("{self.name}", dtype={self.dtype.name})'
        return f'Tensor("{self.name}", shape={self.shape}, dtype={self.dtype.name})'

    # (hashed by identity: object's own hash, no Python call, as a session keys its plans)

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
            "as tf.cond to execute subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self) -> Any:
        raise TypeError(
            "Tensor objects are only iterable when eager execution is enabled. "
            "To iterate over this tensor use tf.map_fn."
        )

    def __len__(self) -> int:
        raise TypeError(
            f"len is not well defined for a symbolic Tensor ({self.name}). Please call "
            "`x.shape` rather than `len(x)` for shape information."
        )

    # The operators are installed by math_ops (which builds their operations).


class Graph:
    """A TensorFlow graph: operations in the order they were made, unique names, the
    variables' collections. ``with g.as_default():`` makes it the default graph."""

    def __init__(self) -> None:
        self._ir = ir.Graph()
        self._tensors: dict[int, Tensor] = {}
        self._operations: dict[int, Operation] = {}
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False

    @property
    def ir(self) -> IRGraph:
        """The chainrule IR graph it builds."""
        return self._ir

    def _tensor(self, value: IRValue, dtype: DType | None = None) -> Tensor:
        tensor = self._tensors.get(id(value))
        if tensor is None:
            tensor = Tensor(value, self, dtype)
            self._tensors[id(value)] = tensor
        elif dtype is not None:
            tensor._dtype = dtype  # (a variable's state: its reference dtype)
        return tensor

    def _operation(self, node: IRNode) -> Operation:
        operation = self._operations.get(id(node))
        if operation is None:
            operation = Operation(node, self)
            self._operations[id(node)] = operation
        return operation

    def get_operations(self) -> list[Operation]:
        """Every operation, in the order they were made."""
        return [self._operation(n) for n in self._ir.nodes]

    def get_operation_by_name(self, name: str) -> Operation:
        """The operation called ``name``."""
        return self.as_graph_element(name, allow_tensor=False)

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The tensor called ``name`` (``op_name:index``)."""
        return self.as_graph_element(name, allow_operation=False)

    def as_graph_element(
        self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True
    ) -> Any:
        """The tensor or operation ``obj`` names or is, in this graph; TensorFlow's errors."""
        if isinstance(obj, str):
            if ":" in obj:
                op_name, _, index = obj.rpartition(":")
                if not self._ir.has_node(op_name):
                    raise KeyError(
                        f"The name '{obj}' refers to a Tensor which does not exist. The "
                        f"operation, '{op_name}', does not exist in the graph."
                    )
                node = self._ir.node(op_name)
                if not index.isdigit() or int(index) >= len(node.outputs):
                    raise KeyError(
                        f"The name '{obj}' refers to a Tensor which does not exist. The "
                        f"operation, '{op_name}', exists but only has {len(node.outputs)} "
                        "outputs."
                    )
                return self._tensor(node.outputs[int(index)])
            if not self._ir.has_node(obj):
                raise KeyError(f"The name '{obj}' refers to an Operation not in the graph.")
            return self._operation(self._ir.node(obj))
        if isinstance(obj, Tensor | Operation):
            if obj.graph is not self:
                kind = "Tensor" if isinstance(obj, Tensor) else "Operation"
                raise ValueError(f"{kind} {obj} is not an element of this graph.")
            return obj
        graph_tensor = getattr(obj, "_graph_element", None)
        if graph_tensor is not None:
            return self.as_graph_element(graph_tensor(), allow_tensor, allow_operation)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def get_collection(self, key: str) -> list[Any]:
        """The objects added under ``key`` (``tf.GraphKeys.GLOBAL_VARIABLES`` ...)."""
        return list(self._collections.get(key, []))

    def add_to_collection(self, key: str, value: Any) -> None:
        """Add ``value`` to the collection ``key``."""
        self._collections.setdefault(key, []).append(value)

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        """Make this the default graph inside the ``with`` block."""
        _GRAPH_STACK.append(self)
        try:
            yield self
        finally:
            _GRAPH_STACK.pop()

    @contextlib.contextmanager
    def name_scope(self, name: str) -> Iterator[str]:
        """Names made inside start with ``name/`` (made unique)."""
        with self._ir.name_scope(name) as scope:
            yield scope + "/"

    def unique_name(self, name: str, mark_used: bool = True) -> str:
        """``name`` in the current scope, made unique."""
        return self._ir.unique_name(name, mark_used)

    def finalize(self) -> None:
        """Make the graph read-only (nothing can be added after)."""
        self._finalized = True

    @property
    def finalized(self) -> bool:
        """True after :meth:`finalize`."""
        return self._finalized

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def __repr__(self) -> str:
        return f"<tensorflow.python.framework.ops.Graph object at {id(self):#x}>"


_DEFAULT_GRAPH = [Graph()]
_GRAPH_STACK: list[Graph] = []


def get_default_graph() -> Graph:
    """The graph new operations go to: the innermost ``as_default()``, else the global one."""
    return _GRAPH_STACK[-1] if _GRAPH_STACK else _DEFAULT_GRAPH[0]


def reset_default_graph() -> None:
    """Replace the global default graph with a new, empty one."""
    if _GRAPH_STACK:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If "
            "you need a cleared graph, exit the nesting and create a new "
            "graph."
        )
    _DEFAULT_GRAPH[0] = Graph()


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[str]:
    """``tf.name_scope``: operations made inside are named ``name/...``."""
    with get_default_graph().name_scope(name) as scope:
        yield scope


def _python_dtype(value: Any) -> DType:
    """The dtype TensorFlow gives a Python or NumPy value: float32 for floats, int32 for
    ints (int64 when too large), a NumPy array's own."""
    if isinstance(value, np.ndarray | np.generic):
        return dtypes.as_dtype(value.dtype)
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind == "b":
        return dtypes.bool
    if kind in "iu":
        if array.size and (array.max() > 2**31 - 1 or array.min() < -(2**31)):
            return dtypes.int64
        return dtypes.int32
    if kind == "c":
        return dtypes.complex128
    return dtypes.float32


def constant_array(value: Any, dtype: Any = None) -> np.ndarray:
    """``value`` as the array a TensorFlow constant of ``dtype`` holds."""
    target = dtypes.as_dtype(dtype) if dtype is not None else _python_dtype(value)
    array = np.asarray(value)
    if target.is_integer and array.dtype.kind == "f" and not np.all(array == np.round(array)):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {target.name}")
    return np.array(array, dtype=target.base.np)


def convert_to_tensor(
    value: Any, dtype: Any = None, name: str | None = None, graph: Graph | None = None
) -> Tensor:
    """A tensor of the default graph: ``value`` itself, a variable's value, or a new
    constant (named ``name``, ``Const`` by default)."""
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype.base_dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor "
                f"with dtype {value.dtype.base_dtype.name}: {value!r}"
            )
        return value
    as_tensor = getattr(value, "_as_graph_tensor", None)
    if as_tensor is not None:
        return as_tensor()
    graph = graph or get_default_graph()
    graph._check_not_finalized()
    array = constant_array(value, dtype)
    const = graph._ir.constant(array, name=None if name is None else graph.unique_name(name))
    return graph._tensor(const)
