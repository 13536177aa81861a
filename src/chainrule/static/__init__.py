"""Define-then-run, as TensorFlow 1 does it, on chainrule's graph IR.

``import chainrule.static as tf`` runs TensorFlow 1 programs (the seed articles' static-graph
cell) unchanged: operations build a graph and print as ``Tensor("Mul:0", shape=(),
dtype=float32)`` before anything is computed; a ``Session`` runs it::

    import chainrule.static as tf
    w = tf.constant(1.)
    x = tf.constant(2.)
    a = tf.add(w, x)
    b = tf.add(w, 1)
    y = tf.multiply(a, b)
    print(y)                    # Tensor("Mul:0", shape=(), dtype=float32)
    with tf.Session() as sess:
        print(sess.run(y))      # 6.0

Each operation is one node of :mod:`chainrule.ir` applying an op of chainrule's op table,
``tf.gradients`` derives the backward graph from the op table's derivative formulas, and the
session runs the IR's interpreter. ``tf.get_default_graph().ir`` is the IR graph itself
(``.table()``, ``.code()``).
"""

from __future__ import annotations

import builtins

from . import dtypes, errors, nn, train
from .dtypes import (
    DType,
    as_dtype,
    bool,  # noqa: A004 - TensorFlow's name
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .framework import (
    Dimension,
    Graph,
    Operation,
    Tensor,
    TensorShape,
    convert_to_tensor,
    get_default_graph,
    name_scope,
    reset_default_graph,
)
from .gradients import gradients
from .math_ops import (
    abs,  # noqa: A004 - TensorFlow's name
    add,
    argmax,
    cast,
    constant,
    divide,
    equal,
    exp,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    log1p,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    ones,
    ones_like,
    pow,  # noqa: A004 - TensorFlow's name
    random_normal,
    random_uniform,
    realdiv,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_sum,
    reshape,
    sigmoid,
    sqrt,
    square,
    stop_gradient,
    subtract,
    tanh,
    transpose,
    truediv,
    where,
    zeros,
    zeros_like,
)
from .session import InteractiveSession, Session, get_default_session
from .variables import (
    GraphKeys,
    Variable,
    assign,
    assign_add,
    assign_sub,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    trainable_variables,
    variables_initializer,
)

__all__ = [
    "DType",
    "as_dtype",
    "bool",
    "complex64",
    "complex128",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "Graph",
    "Operation",
    "Tensor",
    "TensorShape",
    "Dimension",
    "convert_to_tensor",
    "get_default_graph",
    "name_scope",
    "reset_default_graph",
    "gradients",
    "abs",
    "add",
    "cast",
    "constant",
    "divide",
    "equal",
    "exp",
    "greater",
    "greater_equal",
    "identity",
    "less",
    "less_equal",
    "log",
    "log1p",
    "matmul",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "ones",
    "ones_like",
    "pow",
    "random_normal",
    "random_uniform",
    "realdiv",
    "reduce_max",
    "reduce_min",
    "argmax",
    "stop_gradient",
    "reduce_mean",
    "reduce_sum",
    "reshape",
    "sigmoid",
    "sqrt",
    "square",
    "subtract",
    "tanh",
    "transpose",
    "truediv",
    "where",
    "zeros",
    "zeros_like",
    "Session",
    "InteractiveSession",
    "get_default_session",
    "GraphKeys",
    "Variable",
    "assign",
    "assign_add",
    "assign_sub",
    "global_variables",
    "global_variables_initializer",
    "initialize_all_variables",
    "trainable_variables",
    "variables_initializer",
    "placeholder",
    "dtypes",
    "errors",
    "nn",
    "train",
    "math",
    "disable_eager_execution",
    "disable_v2_behavior",
    "executing_eagerly",
]


def placeholder(dtype: object, shape: object = None, name: str | None = None) -> Tensor:
    """An input fed at run time through ``feed_dict`` (``None`` dimensions: any size;
    ``shape=None``: any shape)."""
    graph = get_default_graph()
    graph._check_not_finalized()
    tf_dtype = as_dtype(dtype)
    dims = None
    if shape is not None:
        values = [getattr(d, "value", d) for d in shape]  # type: ignore[attr-defined]
        dims = [None if d is None else int(d) for d in values]
    value = graph.ir.placeholder(dims, tf_dtype.base, name=graph.unique_name(name or "Placeholder"))
    return graph._tensor(value)


class _Math:
    """``tf.math``: the same functions under TensorFlow 2's names."""

    add = staticmethod(add)
    subtract = staticmethod(subtract)
    multiply = staticmethod(multiply)
    divide = staticmethod(divide)
    exp = staticmethod(exp)
    log = staticmethod(log)
    log1p = staticmethod(log1p)
    sqrt = staticmethod(sqrt)
    square = staticmethod(square)
    abs = staticmethod(abs)
    sigmoid = staticmethod(sigmoid)
    tanh = staticmethod(tanh)
    negative = staticmethod(negative)
    maximum = staticmethod(maximum)
    minimum = staticmethod(minimum)
    pow = staticmethod(pow)
    reduce_sum = staticmethod(reduce_sum)
    reduce_mean = staticmethod(reduce_mean)
    reduce_max = staticmethod(reduce_max)
    greater = staticmethod(greater)
    less = staticmethod(less)
    equal = staticmethod(equal)


math = _Math()


def disable_eager_execution() -> None:
    """Nothing to do: this module is always define-then-run."""


def disable_v2_behavior() -> None:
    """Nothing to do: this module is TensorFlow 1's behaviour."""


def executing_eagerly() -> builtins.bool:
    """False: operations build a graph."""
    return False
