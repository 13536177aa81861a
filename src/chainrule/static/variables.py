"""TensorFlow 1's variables: state a session keeps between runs.

``tf.Variable(3.0)`` makes four operations, as TensorFlow 1 does: ``Variable/initial_value``
(the constant), ``Variable`` (the state, an IR variable node), ``Variable/Assign`` (its
initializer) and ``Variable/read`` (the value the other operations read, an identity whose
gradient passes through to the variable). A session holds each variable's array; reading one
before its initializer ran is TensorFlow's ``FailedPreconditionError``.
"""

from __future__ import annotations

from typing import Any

from ..ir import helpers
from ..ops import pointwise
from . import dtypes
from .framework import Operation, Tensor, TensorShape, convert_to_tensor, get_default_graph
from .math_ops import build_call

__all__ = [
    "Variable",
    "GraphKeys",
    "global_variables",
    "trainable_variables",
    "global_variables_initializer",
    "variables_initializer",
    "initialize_all_variables",
    "assign",
    "assign_add",
    "assign_sub",
]


class GraphKeys:
    """The names of the graph's standard collections."""

    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"


class Variable:
    """A variable: ``<tf.Variable 'Variable:0' shape=() dtype=float32_ref>``. In operations
    it stands for its value (``Variable/read``); fetched, it gives its current array."""

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        collections: Any = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **_: Any,
    ) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = get_default_graph()
        graph._check_not_finalized()
        with graph.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                initial_value = initial_value()
            initial = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            if initial._value.shape is None or None in initial._value.shape:
                raise ValueError(f"initial_value must have a shape specified: {initial}")
            base = initial.dtype.base_dtype
            state = graph.ir.variable(
                initial._value.shape, base.base, name=scope[:-1], type="VariableV2"
            )
            assign_node = graph.ir.assign(state, initial._value, name=scope + "Assign")
            read = build_call(
                graph, helpers.identity, (graph._tensor(state),), scope + "read", "Identity"
            )
        self._graph = graph
        self._variable = graph._tensor(state, dtype=base._as_ref)
        self._snapshot = read
        self._initializer_op = graph._operation(assign_node)
        self._initial_value = initial
        self._trainable = trainable
        graph.add_to_collection(GraphKeys.GLOBAL_VARIABLES, self)
        if trainable:
            graph.add_to_collection(GraphKeys.TRAINABLE_VARIABLES, self)

    # -- what it is ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """``Variable:0``."""
        return self._variable.name

    @property
    def op(self) -> Operation:
        """The ``VariableV2`` operation."""
        return self._variable.op

    @property
    def graph(self) -> Any:
        """The graph it belongs to."""
        return self._graph

    @property
    def dtype(self) -> dtypes.DType:
        """Its reference dtype (``float32_ref``)."""
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        """Its shape."""
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        """Its shape."""
        return self.shape

    @property
    def initializer(self) -> Operation:
        """The operation that assigns the initial value."""
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        """The tensor it starts from."""
        return self._initial_value

    @property
    def trainable(self) -> bool:
        """True if optimizers update it by default."""
        return self._trainable

    def value(self) -> Tensor:
        """The tensor of its value that operations read (``Variable/read:0``)."""
        return self._snapshot

    read_value = value

    def _as_graph_tensor(self) -> Tensor:
        return self._snapshot

    def _graph_element(self) -> Tensor:
        return self._variable

    def eval(self, session: Any = None) -> Any:
        """Its current value in ``session`` (the default session if None)."""
        from .session import default_session

        return (session or default_session()).run(self)

    # -- writing ------------------------------------------------------------------------------

    def assign(
        self,
        value: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """An operation writing ``value``; its output is the value written."""
        return assign(self, value, name=name)

    def assign_add(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """An operation adding ``delta``."""
        return assign_add(self, delta, name=name)

    def assign_sub(
        self,
        delta: Any,
        use_locking: bool = False,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """An operation subtracting ``delta``."""
        return assign_sub(self, delta, name=name)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __hash__(self) -> int:
        return id(self)


def _delegate(name: str) -> Any:
    def method(self: Variable, *args: Any) -> Any:
        return getattr(self._snapshot, name)(*args)

    method.__name__ = name
    return method


for _name in (
    "getitem",
    "add",
    "radd",
    "sub",
    "rsub",
    "mul",
    "rmul",
    "truediv",
    "rtruediv",
    "matmul",
    "rmatmul",
    "pow",
    "rpow",
    "neg",
    "abs",
    "gt",
    "ge",
    "lt",
    "le",
):
    setattr(Variable, f"__{_name}__", _delegate(f"__{_name}__"))


def _write(
    ref: Variable, value: Any, default_name: str, op_type: str, combine: Any, name: str | None
) -> Tensor:
    graph = ref.graph
    op_name = graph.unique_name(name or default_name)
    with graph.ir.name_scope(op_name + "/"):
        new = convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
    state = ref._variable._value
    if combine is None:
        node = graph.ir.assign(state, new._value, name=op_name, type=op_type)
    else:
        node = graph.ir.assign(
            state, new._value, name=op_name, type=op_type, target=combine, args=(state, new._value)
        )
    return graph._tensor(node.outputs[0], dtype=ref.dtype)


def assign(ref: Variable, value: Any, name: str | None = None, **_: Any) -> Tensor:
    """An operation writing ``value`` into ``ref``."""
    return _write(ref, value, "Assign", "Assign", None, name)


def assign_add(ref: Variable, value: Any, name: str | None = None, **_: Any) -> Tensor:
    """An operation adding ``value`` to ``ref``."""
    return _write(ref, value, "AssignAdd", "AssignAdd", pointwise._add, name)


def assign_sub(ref: Variable, value: Any, name: str | None = None, **_: Any) -> Tensor:
    """An operation subtracting ``value`` from ``ref``."""
    return _write(ref, value, "AssignSub", "AssignSub", pointwise._sub, name)


def global_variables() -> list[Variable]:
    """The default graph's variables."""
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)


def trainable_variables() -> list[Variable]:
    """The default graph's trainable variables."""
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    """One operation running the initializers of ``var_list``."""
    graph = get_default_graph()
    node = graph.ir.group([v.initializer._node for v in var_list], name=graph.unique_name(name))
    return graph._operation(node)


def global_variables_initializer() -> Operation:
    """One operation (``init``) running every variable's initializer."""
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer
