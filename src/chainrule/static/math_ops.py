"""TensorFlow 1's operations, each one node of the IR applying an op of chainrule's op table.

An operation converts its Python-number arguments to constants named inside its own scope
(``tf.add(w, 1)`` makes ``Add_1/y`` then ``Add_1``), requires its tensor arguments to have the
same dtype (TensorFlow does not promote), and fails at once, with TensorFlow's error, when the
shapes do not fit. The operators of :class:`~.framework.Tensor` are installed here: ``a + b`` is
``add`` named ``add``, ``a * b`` ``mul``, as TensorFlow names them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ir import helpers
from ..ir.backward import not_differentiable
from ..ir.interpreter import impure
from ..ops import activation, copying, creation, linalg, pointwise, reduction
from ..ops import shape as shape_ops
from . import dtypes
from .framework import Graph, Tensor, constant_array, convert_to_tensor, get_default_graph

__all__ = [
    "constant",
    "add",
    "subtract",
    "multiply",
    "divide",
    "truediv",
    "realdiv",
    "matmul",
    "negative",
    "square",
    "sqrt",
    "exp",
    "log",
    "log1p",
    "abs",
    "sigmoid",
    "tanh",
    "relu",
    "maximum",
    "minimum",
    "pow",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reshape",
    "transpose",
    "identity",
    "cast",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "where",
    "softmax",
    "log_softmax",
    "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "reduce_min",
    "argmax",
    "stop_gradient",
    "random_normal",
    "random_uniform",
    "build_call",
]


def _is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_tensor")


def _proto_list(dims: Any) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _shape_error(node_name: str, op_type: str, inputs: Sequence[Tensor]) -> ValueError:
    """TensorFlow's message for operands whose shapes do not broadcast."""
    shapes = [t._value.shape or () for t in inputs]
    a, b = (shapes + [()])[:2]
    pair = next(
        (
            (x, y)
            for x, y in zip(reversed(a), reversed(b), strict=False)
            if x is not None and y is not None and x != y and 1 not in (x, y)
        ),
        (None, None),
    )
    dtype = inputs[0].dtype.base_dtype._proto_name.upper()
    dtype = {"FLOAT": "FLOAT", "DOUBLE": "DOUBLE"}.get(dtype, dtype)
    names = ", ".join(t.op.name if t.value_index == 0 else t.name for t in inputs)
    return ValueError(
        f"Dimensions must be equal, but are {pair[0]} and {pair[1]} for '{{{{node {node_name}}}}} "
        f"= {op_type}[T=DT_{dtype}]({names})' with input shapes: "
        + ", ".join(_proto_list(s) for s in shapes)
        + "."
    )


def build_call(
    graph: Graph,
    target: Callable[..., Any],
    args: tuple,
    name: str,
    op_type: str,
    inputs: Sequence[Tensor] = (),
    extra_inputs: Sequence[Tensor] = (),
    kwargs: dict[str, Any] | None = None,
) -> Tensor:
    """One operation named ``name`` applying ``target`` to ``args`` (tensors as IR values);
    a ``ValueError`` as TensorFlow's when the operands do not fit."""
    graph._check_not_finalized()
    ir_args = tuple(a._value if isinstance(a, Tensor) else a for a in args)
    try:
        node = graph.ir.call(target, ir_args, kwargs, name=name, type=op_type)
    except (RuntimeError, ValueError, IndexError) as error:
        if "must match the size" in str(error) or "broadcast" in str(error):
            raise _shape_error(
                name, op_type, list(inputs) or [a for a in args if isinstance(a, Tensor)]
            ) from None
        raise ValueError(f"{error} (operation '{name}' of type {op_type})") from None
    if extra_inputs:
        node.attrs["extra_inputs"] = tuple(t._value for t in extra_inputs)
    return graph._tensor(node.outputs[0])


def _operands(graph: Graph, op_type: str, x: Any, y: Any) -> tuple[Tensor, Tensor]:
    """``x`` and ``y`` as tensors of one dtype: a number takes the other operand's dtype
    (made a constant called ``x`` or ``y`` in the current scope)."""
    tx = convert_to_tensor(x) if _is_tensor_like(x) else None
    ty = convert_to_tensor(y) if _is_tensor_like(y) else None
    if tx is None:
        tx = _number(graph, x, ty, "x", op_type, ty, "y")
    if ty is None:
        ty = _number(graph, y, tx, "y", op_type, tx, "x")
    if tx.dtype.base_dtype != ty.dtype.base_dtype:
        raise TypeError(
            f"Input 'y' of '{op_type}' Op has type {ty.dtype.base_dtype.name} that does not "
            f"match type {tx.dtype.base_dtype.name} of argument 'x'."
        )
    return tx, ty


def _number(
    graph: Graph,
    value: Any,
    like: Tensor | None,
    name: str,
    op_type: str,
    other: Tensor | None,
    other_name: str,
) -> Tensor:
    if like is None:
        return convert_to_tensor(value, name=name)
    target = like.dtype.base_dtype
    try:
        return convert_to_tensor(value, dtype=target, name=name)
    except TypeError:
        own = dtypes.as_dtype(constant_array(value).dtype)
        first, second = (own, target) if name == "y" else (target, own)
        raise TypeError(
            f"Input 'y' of '{op_type}' Op has type {first.name} that does not match type "
            f"{second.name} of argument 'x'."
        ) from None


def _binary(
    default_name: str, op_type: str, target: Callable[..., Any], x: Any, y: Any, name: str | None
) -> Tensor:
    graph = get_default_graph()
    op_name = graph.unique_name(name or default_name)
    with graph.ir.name_scope(op_name + "/"):
        tx, ty = _operands(graph, op_type, x, y)
    return build_call(graph, target, (tx, ty), op_name, op_type)


def _unary(
    default_name: str,
    op_type: str,
    target: Callable[..., Any],
    x: Any,
    name: str | None,
    *more: Any,
) -> Tensor:
    graph = get_default_graph()
    tx = convert_to_tensor(x)
    op_name = graph.unique_name(name or default_name)
    return build_call(graph, target, (tx, *more), op_name, op_type)


# -- constants ----------------------------------------------------------------------------------


def constant(
    value: Any, dtype: Any = None, shape: Sequence[int] | None = None, name: str = "Const"
) -> Tensor:
    """A constant tensor: ``tf.constant(1.)`` is a float32 scalar named ``Const``."""
    array = constant_array(value, dtype)
    if shape is not None:
        shape = tuple(shape)
        array = np.broadcast_to(array, shape).copy() if array.size == 1 else array.reshape(shape)
    graph = get_default_graph()
    graph._check_not_finalized()
    return graph._tensor(graph.ir.constant(array, name=graph.unique_name(name)))


def zeros(shape: Sequence[int], dtype: Any = dtypes.float32, name: str = "zeros") -> Tensor:
    """A constant of zeros."""
    return constant(np.zeros(tuple(shape)), dtype=dtype, name=name)


def ones(shape: Sequence[int], dtype: Any = dtypes.float32, name: str = "ones") -> Tensor:
    """A constant of ones."""
    return constant(np.ones(tuple(shape)), dtype=dtype, name=name)


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Zeros of ``tensor``'s shape (and dtype unless given): a constant when the shape is
    known, as TensorFlow makes it."""
    t = convert_to_tensor(tensor)
    target = t.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
    if t.shape.is_fully_defined():
        return constant(np.zeros(tuple(t.shape)), dtype=target, name=name or "zeros_like")
    return _like(creation.zeros_like, "zeros_like", "ZerosLike", t, {"dtype": target.base}, name)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """Ones of ``tensor``'s shape (and dtype unless given): TensorFlow's ``Fill``, with its
    shape and value constants."""
    graph = get_default_graph()
    t = convert_to_tensor(tensor)
    target = t.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
    op_name = graph.unique_name(name or "ones_like")
    extra = []
    with graph.ir.name_scope(op_name + "/"):
        if t.shape.is_fully_defined():
            extra.append(
                constant(np.asarray(tuple(t.shape), dtype=np.int32), name="Shape/shape_as_tensor")
            )
        extra.append(constant(1, dtype=target, name="Const"))
    return build_call(
        graph,
        creation.ones_like,
        (t,),
        op_name,
        "Fill",
        kwargs={"dtype": target.base},
        extra_inputs=extra,
    )


def _like(
    target: Callable[..., Any],
    default_name: str,
    op_type: str,
    tensor: Any,
    kwargs: dict[str, Any],
    name: str | None,
) -> Tensor:
    graph = get_default_graph()
    t = convert_to_tensor(tensor)
    return build_call(
        graph, target, (t,), graph.unique_name(name or default_name), op_type, kwargs=kwargs
    )


def _random(
    shape: Any, dtype: Any, seed: Any, name: str, op_type: str, sample: Callable[..., Any]
) -> Tensor:
    graph = get_default_graph()
    op_name = graph.unique_name(name)
    with graph.ir.name_scope(op_name + "/"):
        shape_const = constant(np.asarray(tuple(shape), dtype=np.int32), name="shape")
    target_dtype = dtypes.as_dtype(dtype).base
    return build_call(
        graph, sample, (shape_const, tuple(shape), target_dtype, seed), op_name, op_type
    )


def _normal_sample(
    shape_tensor: Any, shape: tuple, dtype: Any, seed: Any, mean: float = 0.0, stddev: float = 1.0
) -> Any:
    """Normal samples of ``shape`` (drawn from chainrule's generator each time it runs)."""
    return creation.randn(*shape, dtype=dtype) * stddev + mean


def random_normal(
    shape: Sequence[int],
    mean: float = 0.0,
    stddev: float = 1.0,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str = "random_normal",
) -> Tensor:
    """Samples of a normal distribution, drawn again at each run."""

    def sample(shape_tensor: Any, shape: tuple, dtype: Any, seed: Any) -> Any:
        return _normal_sample(shape_tensor, shape, dtype, seed, mean, stddev)

    sample.__name__ = sample.__qualname__ = "random_normal"
    not_differentiable(sample)
    impure(sample)
    return _random(shape, dtype, seed, name, "RandomStandardNormal", sample)


def random_uniform(
    shape: Sequence[int],
    minval: float = 0.0,
    maxval: float = 1.0,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str = "random_uniform",
) -> Tensor:
    """Samples of a uniform distribution on ``[minval, maxval)``, drawn again at each run."""

    def sample(shape_tensor: Any, shape: tuple, dtype: Any, seed: Any) -> Any:
        return creation.rand(*shape, dtype=dtype) * (maxval - minval) + minval

    sample.__name__ = sample.__qualname__ = "random_uniform"
    not_differentiable(sample)
    impure(sample)
    return _random(shape, dtype, seed, name, "RandomUniform", sample)


# -- arithmetic ---------------------------------------------------------------------------------


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x + y`` (broadcasting), named ``Add``."""
    return _binary("Add", "AddV2", pointwise._add, x, y, name)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x - y``, named ``Sub``."""
    return _binary("Sub", "Sub", pointwise._sub, x, y, name)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y``, named ``Mul``."""
    return _binary("Mul", "Mul", pointwise.mul, x, y, name)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, named ``truediv``."""
    return _binary("truediv", "RealDiv", pointwise._div, x, y, name)


truediv = divide


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, named ``RealDiv``."""
    return _binary("RealDiv", "RealDiv", pointwise._div, x, y, name)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The larger of ``x`` and ``y``, element-wise."""
    return _binary("Maximum", "Maximum", pointwise.maximum, x, y, name)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The smaller of ``x`` and ``y``, element-wise."""
    return _binary("Minimum", "Minimum", pointwise.minimum, x, y, name)


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """``x ** y``, named ``Pow``."""
    return _power("Pow", x, y, name)


def _power(default_name: str, x: Any, y: Any, name: str | None) -> Tensor:
    graph = get_default_graph()
    op_name = graph.unique_name(name or default_name)
    with graph.ir.name_scope(op_name + "/"):
        tx, ty = _operands(graph, "Pow", x, y)
    if not _is_tensor_like(y) and np.ndim(y) == 0:
        # A number exponent: PyTorch's pow with a Scalar (its gradient has a closed form).
        return build_call(
            graph,
            pointwise._pow_scalar,
            (tx, ty._value.example.item()),
            op_name,
            "Pow",
            inputs=(tx, ty),
            extra_inputs=(ty,),
        )
    return build_call(graph, pointwise._pow_tensor, (tx, ty), op_name, "Pow")


def matmul(
    a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, name: str | None = None
) -> Tensor:
    """The matrix product (batched for rank > 2), named ``MatMul``."""
    graph = get_default_graph()
    op_name = graph.unique_name(name or "MatMul")
    with graph.ir.name_scope(op_name + "/"):
        ta, tb = _operands(graph, "MatMul", a, b)
        if transpose_a:
            ta = _unary("transpose_a", "Transpose", shape_ops.transpose, ta, None, -2, -1)
        if transpose_b:
            tb = _unary("transpose_b", "Transpose", shape_ops.transpose, tb, None, -2, -1)
    ranks = (
        len(ta.shape) if ta.shape.ndims is not None else None,
        len(tb.shape) if tb.shape.ndims is not None else None,
    )
    if ranks == (2, 2):
        target: Callable[..., Any] = linalg.mm
    elif ranks == (3, 3):
        target = linalg.bmm
    else:
        target = linalg.matmul
    try:
        return build_call(graph, target, (ta, tb), op_name, "MatMul")
    except ValueError:
        sa, sb = ta.shape, tb.shape
        raise ValueError(
            f"Dimensions must be equal, but are {sa[-1]} and {sb[-2]} for '{{{{node {op_name}}}}}"
            f" = MatMul[T=DT_{ta.dtype.base_dtype._proto_name.upper()}, "
            f"transpose_a={str(transpose_a).lower()}, transpose_b={str(transpose_b).lower()}]"
            f"({ta.op.name}, {tb.op.name})' with input shapes: {_proto_list(sa)}, "
            f"{_proto_list(sb)}."
        ) from None


def negative(x: Any, name: str | None = None) -> Tensor:
    """``-x``, named ``Neg``."""
    return _unary("Neg", "Neg", pointwise.neg, x, name)


def square(x: Any, name: str | None = None) -> Tensor:
    """``x * x``, named ``Square``."""
    return _unary("Square", "Square", pointwise._pow_scalar, x, name, 2)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    """Square root."""
    return _unary("Sqrt", "Sqrt", pointwise.sqrt, x, name)


def exp(x: Any, name: str | None = None) -> Tensor:
    """``e ** x``."""
    return _unary("Exp", "Exp", pointwise.exp, x, name)


def log(x: Any, name: str | None = None) -> Tensor:
    """Natural logarithm."""
    return _unary("Log", "Log", pointwise.log, x, name)


def log1p(x: Any, name: str | None = None) -> Tensor:
    """``log(1 + x)``."""
    return _unary("Log1p", "Log1p", pointwise.log1p, x, name)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TensorFlow's name
    """Absolute value."""
    return _unary("Abs", "Abs", pointwise.abs, x, name)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """The logistic function."""
    return _unary("Sigmoid", "Sigmoid", pointwise.sigmoid, x, name)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent."""
    return _unary("Tanh", "Tanh", pointwise.tanh, x, name)


def relu(features: Any, name: str | None = None) -> Tensor:
    """``max(features, 0)``."""
    return _unary("Relu", "Relu", pointwise.relu, features, name)


def identity(input: Any, name: str | None = None) -> Tensor:
    """The same value under a new name (its gradient passes through)."""
    return _unary("Identity", "Identity", helpers.identity, input, name)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """``x`` converted to ``dtype``."""
    return _unary("Cast", "Cast", copying._to_copy, x, name, dtypes.as_dtype(dtype).base)


def _compare(default_name: str, op_type: str, target: Callable[..., Any]) -> Any:
    def compare(x: Any, y: Any, name: str | None = None) -> Tensor:
        return _binary(default_name, op_type, target, x, y, name)

    compare.__doc__ = f"``{op_type}`` element-wise: a bool tensor."
    return compare


greater = _compare("Greater", "Greater", pointwise.gt)
greater_equal = _compare("GreaterEqual", "GreaterEqual", pointwise.ge)
less = _compare("Less", "Less", pointwise.lt)
less_equal = _compare("LessEqual", "LessEqual", pointwise.le)
equal = _compare("Equal", "Equal", pointwise.eq)


def where(condition: Any, x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x`` where ``condition`` holds, else ``y`` (named ``Select``)."""
    graph = get_default_graph()
    op_name = graph.unique_name(name or "Select")
    tc = convert_to_tensor(condition)
    with graph.ir.name_scope(op_name + "/"):
        tx, ty = _operands(graph, "Select", x, y)
    return build_call(graph, pointwise._where, (tc, tx, ty), op_name, "Select")


# -- reductions and shapes ----------------------------------------------------------------------


def _reduce(
    default_name: str,
    op_type: str,
    all_target: Callable[..., Any] | None,
    dim_target: Callable[..., Any],
    x: Any,
    axis: Any,
    keepdims: bool,
    name: str | None,
) -> Tensor:
    graph = get_default_graph()
    tx = convert_to_tensor(x)
    rank = tx.shape.ndims
    if axis is None:
        dims = tuple(range(rank)) if rank is not None else None
        axes = constant(np.arange(rank or 0, dtype=np.int32))  # (before the op, as TF's)
        op_name = graph.unique_name(name or default_name)
    else:
        op_name = graph.unique_name(name or default_name)
        with graph.ir.name_scope(op_name + "/"):
            axes = constant(np.asarray(axis, dtype=np.int32), name="reduction_indices")
        dims = tuple(int(a) for a in np.atleast_1d(axis))
    if axis is None and not keepdims and all_target is not None:
        return build_call(graph, all_target, (tx,), op_name, op_type, extra_inputs=(axes,))
    if dims is None:
        raise ValueError(f"{op_type} over all axes of a tensor of unknown rank needs axis=")
    return build_call(
        graph, dim_target, (tx, dims, bool(keepdims)), op_name, op_type, extra_inputs=(axes,)
    )


def _reduction_with_legacy_names(
    public_name: str, op_type: str, all_target: Any, dim_target: Any, what: str
) -> Any:
    """``tf.<public_name>``: a TF1 reduction that also takes the old names
    ``reduction_indices`` (for ``axis``) and ``keep_dims`` (for ``keepdims``), as
    ``tf.reduce_sum`` and ``tf.reduce_mean`` do."""

    def reduction(
        input_tensor: Any,
        axis: Any = None,
        keepdims: bool = False,
        name: str | None = None,
        reduction_indices: Any = None,
        keep_dims: bool | None = None,
    ) -> Tensor:
        axis = reduction_indices if axis is None else axis
        keepdims = keep_dims if keep_dims is not None else keepdims
        return _reduce(op_type, op_type, all_target, dim_target, input_tensor, axis, keepdims, name)

    reduction.__name__ = reduction.__qualname__ = public_name
    reduction.__doc__ = f"The {what} over ``axis`` (all axes by default), named ``{op_type}``."
    return reduction


reduce_sum = _reduction_with_legacy_names(
    "reduce_sum", "Sum", reduction._sum_all, reduction._sum_dim, "sum"
)
reduce_mean = _reduction_with_legacy_names(
    "reduce_mean", "Mean", reduction._mean_all, reduction._mean_dim, "mean"
)


def reduce_max(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The largest element over ``axis`` (all axes by default), named ``Max``."""
    return _reduce("Max", "Max", None, reduction._amax, input_tensor, axis, keepdims, name)


def reduce_min(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """The smallest element over ``axis`` (all axes by default), named ``Min``."""
    return _reduce("Min", "Min", None, reduction._amin, input_tensor, axis, keepdims, name)


def argmax(
    input: Any, axis: int | None = None, name: str | None = None, output_type: Any = None
) -> Tensor:
    """The index of the largest element along ``axis`` (0 by default), as int64."""
    graph = get_default_graph()
    tx = convert_to_tensor(input)
    dim = 0 if axis is None else int(axis)
    op_name = graph.unique_name(name or "ArgMax")
    with graph.ir.name_scope(op_name + "/"):
        dimension = constant(np.asarray(dim, dtype=np.int32), name="dimension")
    result = build_call(
        graph, reduction.argmax, (tx, dim), op_name, "ArgMax", extra_inputs=(dimension,)
    )
    if output_type is not None and dtypes.as_dtype(output_type) != dtypes.int64:
        return cast(result, output_type)
    return result


@not_differentiable
def _stop_gradient(input: Any) -> Any:
    """``input`` itself, passing no gradient back."""
    return input


def stop_gradient(input: Any, name: str | None = None) -> Tensor:
    """The same value, through which no gradient flows (named ``StopGradient``)."""
    return _unary("StopGradient", "StopGradient", _stop_gradient, input, name)


def reshape(tensor: Any, shape: Sequence[int], name: str | None = None) -> Tensor:
    """The same elements in ``shape`` (one ``-1`` is inferred), named ``Reshape``."""
    graph = get_default_graph()
    tx = convert_to_tensor(tensor)
    op_name = graph.unique_name(name or "Reshape")
    with graph.ir.name_scope(op_name + "/"):
        shape_const = constant(np.asarray(shape, dtype=np.int32), name="shape")
    return build_call(
        graph,
        shape_ops._unsafe_view,
        (tx, tuple(int(d) for d in shape)),
        op_name,
        "Reshape",
        extra_inputs=(shape_const,),
    )


def transpose(a: Any, perm: Sequence[int] | None = None, name: str = "transpose") -> Tensor:
    """The dimensions permuted (reversed by default), named ``transpose``."""
    graph = get_default_graph()
    tx = convert_to_tensor(a)
    op_name = graph.unique_name(name)
    rank = tx.shape.ndims or 0
    perm = tuple(range(rank - 1, -1, -1)) if perm is None else tuple(int(p) for p in perm)
    with graph.ir.name_scope(op_name + "/"):
        perm_const = constant(np.asarray(perm, dtype=np.int32), name="perm")
    return build_call(
        graph, shape_ops._permute, (tx, perm), op_name, "Transpose", extra_inputs=(perm_const,)
    )


# -- nn -----------------------------------------------------------------------------------------


def softmax(logits: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """``exp(logits) / sum(exp(logits))`` over ``axis`` (the last by default)."""
    return _unary(
        "Softmax", "Softmax", activation._softmax, logits, name, -1 if axis is None else axis
    )


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """The logarithm of :func:`softmax`."""
    return _unary(
        "LogSoftmax",
        "LogSoftmax",
        activation._log_softmax,
        logits,
        name,
        -1 if axis is None else axis,
    )


def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """TensorFlow's numerically stable logistic loss, element-wise:
    ``max(x, 0) - x * z + log(1 + exp(-abs(x)))`` for logits ``x`` and labels ``z``."""
    if _sentinel is not None:
        raise ValueError(
            "Only call `sigmoid_cross_entropy_with_logits` with named arguments "
            "(labels=..., logits=..., ...). Received unnamed argument: "
            f"{_sentinel}"
        )
    graph = get_default_graph()
    with graph.name_scope(name or "logistic_loss") as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype.base_dtype, name="labels")
        if not x.shape.is_compatible_with(z.shape):
            raise ValueError(f"logits and labels must have the same shape ({x.shape} vs {z.shape})")
        zeros = zeros_like(x)
        cond = greater_equal(x, zeros)
        relu_logits = where(cond, x, zeros)
        neg_abs_logits = where(cond, negative(x), x)
        first = subtract(relu_logits, multiply(x, z, name="mul"), name="sub")
        second = log1p(exp(neg_abs_logits))
    return build_call(graph, pointwise._add, (first, second), scope[:-1], "AddV2")


def softmax_cross_entropy_with_logits_v2(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    axis: int = -1,
    name: str | None = None,
) -> Tensor:
    """Cross entropy between the distributions ``labels`` and ``softmax(logits)`` along
    ``axis``: ``-sum(labels * log_softmax(logits))`` (gradients to both). Its operations are
    in the scope ``softmax_cross_entropy_with_logits``, the last one named after the scope
    (TensorFlow's is ``.../Reshape_2``, after reshapes this needs not)."""
    if _sentinel is not None:
        raise ValueError(
            "Only call `softmax_cross_entropy_with_logits` with named arguments (labels=..., "
            f"logits=..., ...). Received unnamed argument: {_sentinel}"
        )
    graph = get_default_graph()
    with graph.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(labels, dtype=x.dtype.base_dtype, name="labels")
        products = multiply(z, log_softmax(x, axis=axis))
        total = reduce_sum(products, axis=axis)
    return build_call(graph, pointwise.neg, (total,), scope[:-1], "Neg")


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: int | None = None,
) -> Tensor:
    """TensorFlow 1's deprecated form of :func:`softmax_cross_entropy_with_logits_v2`: no
    gradient flows into ``labels``."""
    if _sentinel is not None:
        return softmax_cross_entropy_with_logits_v2(_sentinel)
    return softmax_cross_entropy_with_logits_v2(
        labels=stop_gradient(labels),
        logits=logits,
        axis=dim if axis is None else axis,
        name=name,
    )


_END = 2**63 - 1  # PyTorch's end of an open slice


def strided_slice_of(tensor: Any, index: Any) -> Tensor:
    """``tensor[index]`` for integers and slices with positive steps (TensorFlow's
    ``strided_slice``): one ``_select`` or ``_slice`` op per indexed dimension, the last named
    ``strided_slice``, with TensorFlow's ``stack`` constants (begin, end, strides) beside it."""
    graph = get_default_graph()
    tx = convert_to_tensor(tensor)
    items = index if isinstance(index, tuple) else (index,)
    begin, end, strides = [], [], []
    steps: list[tuple[Callable[..., Any], tuple]] = []
    dim = 0
    for item in items:
        if isinstance(item, slice):
            step = 1 if item.step is None else int(item.step)
            if step <= 0:
                raise ValueError("chainrule.static slices take positive steps only")
            start = 0 if item.start is None else int(item.start)
            stop = _END if item.stop is None else int(item.stop)
            begin.append(start)
            end.append(0 if item.stop is None else stop)
            strides.append(step)
            if (start, stop, step) != (0, _END, 1):
                steps.append((shape_ops._slice, (dim, start, stop, step)))
            dim += 1
        elif isinstance(item, int | np.integer):
            begin.append(int(item))
            end.append(int(item) + 1)
            strides.append(1)
            steps.append((shape_ops._select, (dim, int(item))))
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                f"tf.int32/tf.int64 tensors are valid indices, got {item!r}"
            )
    op_name = graph.unique_name("strided_slice")
    with graph.ir.name_scope(op_name + "/"):
        stacks = [
            constant(np.asarray(values, dtype=np.int32), name=name)
            for name, values in (("stack", begin), ("stack_1", end), ("stack_2", strides))
        ]
        value = tx
        for target, args in steps[:-1]:
            value = build_call(graph, target, (value, *args), graph.unique_name("slice"), "Slice")
    if not steps:
        return build_call(
            graph, helpers.identity, (value,), op_name, "StridedSlice", extra_inputs=stacks
        )
    target, args = steps[-1]
    return build_call(graph, target, (value, *args), op_name, "StridedSlice", extra_inputs=stacks)


# -- operators of Tensor ------------------------------------------------------------------------


def _install_operators() -> None:
    def binary(default_name: str, op_type: str, target: Callable[..., Any], reflected: bool) -> Any:
        if reflected:

            def operator(self: Tensor, other: Any) -> Tensor:
                return _binary(default_name, op_type, target, other, self, None)
        else:

            def operator(self: Tensor, other: Any) -> Tensor:
                return _binary(default_name, op_type, target, self, other, None)

        return operator

    table = {
        "add": ("add", "AddV2", pointwise._add),
        "sub": ("sub", "Sub", pointwise._sub),
        "mul": ("mul", "Mul", pointwise.mul),
        "truediv": ("truediv", "RealDiv", pointwise._div),
    }
    for short, (default_name, op_type, target) in table.items():
        setattr(Tensor, f"__{short}__", binary(default_name, op_type, target, False))
        setattr(Tensor, f"__r{short}__", binary(default_name, op_type, target, True))
    comparisons = {
        "gt": ("Greater", pointwise.gt),
        "ge": ("GreaterEqual", pointwise.ge),
        "lt": ("Less", pointwise.lt),
        "le": ("LessEqual", pointwise.le),
    }
    for short, (op_type, target) in comparisons.items():
        setattr(Tensor, f"__{short}__", binary(op_type, op_type, target, False))

    def matmul_operator(self: Tensor, other: Any) -> Tensor:
        return matmul(self, other, name="matmul")

    def rmatmul_operator(self: Tensor, other: Any) -> Tensor:
        return matmul(other, self, name="matmul")

    def pow_operator(self: Tensor, other: Any) -> Tensor:
        return _power("pow", self, other, None)

    def rpow_operator(self: Tensor, other: Any) -> Tensor:
        return _power("pow", other, self, None)

    def neg_operator(self: Tensor) -> Tensor:
        return negative(self)

    def abs_operator(self: Tensor) -> Tensor:
        return abs(self)

    more = {
        "__matmul__": matmul_operator,
        "__rmatmul__": rmatmul_operator,
        "__pow__": pow_operator,
        "__rpow__": rpow_operator,
        "__neg__": neg_operator,
        "__abs__": abs_operator,
        "__getitem__": strided_slice_of,
    }
    for dunder, method in more.items():
        setattr(Tensor, dunder, method)


_install_operators()
