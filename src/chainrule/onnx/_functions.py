"""How each traced function call becomes ONNX nodes (the exporter's "symbolic" functions).

A handler gets the builder, the call's arguments and its result, reads its inputs' names with
``builder.value`` and binds the result to the output of the nodes it adds. :data:`FUNCTIONS`
maps a function's name (``add``, ``linear``, ``softmax`` ...; a Tensor method and its function
share the name) to its handler; a name missing from it is PyTorch's
``UnsupportedOperatorError`` for ``aten::<name>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._dtype import result_type
from .._tensor import Tensor
from ._builder import GraphBuilder

__all__ = ["FUNCTIONS", "Handler", "argument"]

Handler = Callable[[GraphBuilder, tuple, dict[str, Any], Any], None]

_MISSING = object()


def argument(args: tuple, kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    """The argument at position ``index`` or keyword ``name``, else ``default``."""
    if index < len(args):
        return args[index]
    return kwargs.get(name, default)


def _operand(b: GraphBuilder, value: Any, dtype: np.dtype, consumer: str) -> str:
    """A tensor's name cast to ``dtype``, or a Python number as a constant of ``dtype``."""
    if isinstance(value, Tensor):
        return b.cast(b.value(value, consumer), dtype)
    return b.constant(np.asarray(value, dtype=dtype), consumer)


def _axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def _elementwise(op_type: str) -> Handler:
    """``op_type`` of two operands computed in the result's dtype (PyTorch's promotion)."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        dtype = result._data.dtype
        left = _operand(b, args[0], dtype, op_type)
        right_value = argument(args, kwargs, 1, "other", None)
        right = _operand(b, right_value, dtype, op_type)
        alpha = kwargs.get("alpha", 1)
        if alpha != 1:
            (right,) = b.emit("Mul", [right, b.constant(np.asarray(alpha, dtype), "Mul")])
        b.emit_for(result, op_type, [left, right])

    return handle


def _rsub(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    swapped = (argument(args, kwargs, 1, "other", None), args[0])
    _elementwise("Sub")(b, swapped, {"alpha": kwargs.get("alpha", 1)}, result)


def _swapped(op_type: str) -> Handler:
    """``other <op> input``: the reflected operators (``2 - x`` is ``_rsub(x, 2)``)."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        other = argument(args, kwargs, 1, "other", None)
        _elementwise(op_type)(b, (other, args[0]), {}, result)

    return handle


def _rtruediv(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    """``other / input`` as PyTorch writes it: ``Reciprocal(input) * other`` (no Mul for 1)."""
    other = argument(args, kwargs, 1, "other", None)
    dtype = result._data.dtype
    (reciprocal,) = b.emit("Reciprocal", [_operand(b, args[0], dtype, "Reciprocal")])
    if isinstance(other, int | float) and other == 1:
        b.bind(result, reciprocal)
        return
    b.emit_for(result, "Mul", [reciprocal, _operand(b, other, dtype, "Mul")])


def _rpow(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    _pow(b, (argument(args, kwargs, 1, "other", None), args[0]), {}, result)


_INT64_MAX = 2**63 - 1


def _getitem(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    """Basic indexing (integers, slices with a positive step, None, ...) as Slice, Squeeze
    and Unsqueeze; bounds stay relative (ONNX counts negative ones from the end), so a dynamic
    dimension stays dynamic."""
    source, index = args[0], args[1]
    items = list(index) if isinstance(index, tuple) else [index]
    if any(not isinstance(i, int | slice | type(None) | type(Ellipsis)) for i in items):
        raise _unsupported(b, "index")
    if any(isinstance(i, bool) for i in items):
        raise _unsupported(b, "index")
    used = sum(isinstance(i, int | slice) for i in items)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (source.dim() - used)
    starts, ends, axes, steps, dropped, inserted = [], [], [], [], [], []
    dim = position = 0
    for item in items:
        if item is None:
            inserted.append(position)
            position += 1
            continue
        if isinstance(item, int):
            starts.append(item)
            ends.append(_INT64_MAX if item == -1 else item + 1)
            axes.append(dim)
            steps.append(1)
            dropped.append(dim)
        else:
            step = 1 if item.step is None else int(item.step)
            if step <= 0:
                raise _unsupported(b, "slice (step <= 0)")
            if item != slice(None):
                starts.append(0 if item.start is None else int(item.start))
                ends.append(_INT64_MAX if item.stop is None else int(item.stop))
                axes.append(dim)
                steps.append(step)
            position += 1
        dim += 1
    name = b.value(source, "Slice")
    if axes:
        inputs = [name, b.ints(starts, "Slice"), b.ints(ends, "Slice"), b.ints(axes, "Slice")]
        (name,) = b.emit("Slice", [*inputs, b.ints(steps, "Slice")])
    if dropped:
        (name,) = b.emit("Squeeze", [name, b.ints(dropped, "Squeeze")])
    if inserted:
        (name,) = b.emit("Unsqueeze", [name, b.ints(inserted, "Unsqueeze")])
    if name == b.value(source, "Slice"):
        _identity(b, args, kwargs, result)
        return
    b.bind(result, name)


def _div(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    mode = kwargs.get("rounding_mode")
    if isinstance(mode, str):
        raise _unsupported(b, f"div (rounding_mode={mode!r})")
    _elementwise("Div")(b, args, {}, result)


def _pow(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    dtype = result._data.dtype
    base = _operand(b, args[0], dtype, "Pow")
    exponent = argument(args, kwargs, 1, "exponent", None)
    b.emit_for(result, "Pow", [base, _operand(b, exponent, dtype, "Pow")])


def _unary(op_type: str) -> Handler:
    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        b.emit_for(result, op_type, [b.value(args[0], op_type)])

    return handle


def _identity(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    if result is not args[0]:
        b.bind(result, b.value(args[0], "Identity"))


def _dropout(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    if argument(args, kwargs, 2, "training", True):
        raise _unsupported(b, "dropout (training=True)")
    _identity(b, args, kwargs, result)


def _matmul(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    other = argument(args, kwargs, 1, "other", None)
    b.emit_for(result, "MatMul", [b.value(args[0], "MatMul"), b.value(other, "MatMul")])


def _linear(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    x, weight = args[0], argument(args, kwargs, 1, "weight", None)
    bias = argument(args, kwargs, 2, "bias", None)
    if x.dim() == 2:
        inputs = [b.value(x, "Gemm"), b.value(weight, "Gemm")]
        if bias is not None:
            inputs.append(b.value(bias, "Gemm"))
        b.emit_for(result, "Gemm", inputs, alpha=1.0, beta=1.0, transB=1)
        return
    (weight_t,) = b.emit("Transpose", [b.value(weight, "Transpose")], perm=[1, 0])
    if bias is None:
        b.emit_for(result, "MatMul", [b.value(x, "MatMul"), weight_t])
        return
    (product,) = b.emit("MatMul", [b.value(x, "MatMul"), weight_t])
    b.emit_for(result, "Add", [b.value(bias, "Add"), product])  # (PyTorch's order)


def _softmax(op_type: str) -> Handler:
    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        dim = argument(args, kwargs, 1, "dim", None)
        if dim is None:  # (PyTorch's implicit choice, which it warns about)
            dim = 0 if args[0].dim() in (0, 1, 3) else 1
        source = b.cast(b.value(args[0], op_type), result._data.dtype)
        b.emit_for(result, op_type, [source], axis=int(dim))

    return handle


def _reshape_to(b: GraphBuilder, source: Tensor, sizes: Sequence[int], result: Any) -> None:
    """Reshape to ``sizes``; a size equal to the input's at the same position becomes 0 (ONNX:
    "copy the input's dimension"), so a traced batch size stays dynamic."""
    name = b.value(source, "Reshape")
    in_shape = tuple(source.shape)
    target = [
        0 if i < len(in_shape) and size == in_shape[i] and size != 0 else int(size)
        for i, size in enumerate(sizes)
    ]
    attrs = {"allowzero": 0} if b.opset >= 14 else {}  # (0: copy the input's size)
    b.emit_for(result, "Reshape", [name, b.ints(target, "Reshape")], **attrs)


def _shape_arguments(args: tuple, kwargs: dict[str, Any]) -> list[int]:
    sizes = args[1:] if len(args) > 1 else (kwargs.get("shape") or kwargs.get("size") or ())
    if len(sizes) == 1 and isinstance(sizes[0], Sequence):
        sizes = sizes[0]
    return [int(s) for s in sizes]


def _view(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    sizes = _shape_arguments(args, kwargs)
    if not all(isinstance(s, int) for s in sizes):
        raise _unsupported(b, "view (dtype)")
    _reshape_to(b, args[0], sizes, result)


def _flatten(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    source = args[0]
    rank = source.dim()
    start = _axis(argument(args, kwargs, 1, "start_dim", 0), max(rank, 1))
    end = _axis(argument(args, kwargs, 2, "end_dim", -1), max(rank, 1))
    if rank >= 2 and start == 1 and end == rank - 1:
        b.emit_for(result, "Flatten", [b.value(source, "Flatten")], axis=1)
        return
    shape = list(source.shape)
    sizes = shape[:start] + [-1] + shape[end + 1 :]
    _reshape_to(b, source, sizes, result)


def _dims(dim: Any, rank: int) -> list[int]:
    if dim is None or (isinstance(dim, Sequence) and len(dim) == 0):
        return list(range(rank))
    if isinstance(dim, int):
        return [_axis(dim, rank)]
    return [_axis(int(d), rank) for d in dim]


def _reduce(op_type: str, axes_input_from: int) -> Handler:
    """``op_type`` over ``dim`` (all dimensions when None); the axes are an input from opset
    ``axes_input_from`` on, an attribute before."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        source = args[0]
        dim = argument(args, kwargs, 1, "dim", None)
        axes = _dims(dim, source.dim())
        keepdim = int(bool(argument(args, kwargs, 2, "keepdim", False)))
        name = b.cast(b.value(source, op_type), result._data.dtype)
        if source.dim() == 0:
            b.emit_for(result, "Identity", [name])
        elif dim is None:  # (over every dimension: no axes, as PyTorch writes it)
            b.emit_for(result, op_type, [name], keepdims=keepdim)
        elif b.opset >= axes_input_from:
            b.emit_for(result, op_type, [name, b.ints(axes, op_type)], keepdims=keepdim)
        else:
            b.emit_for(result, op_type, [name], axes=axes, keepdims=keepdim)

    return handle


def _transpose(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    rank = args[0].dim()
    perm = list(range(rank))
    if rank >= 2:
        d0 = _axis(argument(args, kwargs, 1, "dim0", 0), rank)
        d1 = _axis(argument(args, kwargs, 2, "dim1", 1), rank)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    b.emit_for(result, "Transpose", [b.value(args[0], "Transpose")], perm=perm)


def _permute(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    dims = list(args[1:]) if len(args) > 1 else list(kwargs.get("dims", ()))
    if len(dims) == 1 and isinstance(dims[0], Sequence):
        dims = list(dims[0])
    perm = [_axis(int(d), args[0].dim()) for d in dims]
    b.emit_for(result, "Transpose", [b.value(args[0], "Transpose")], perm=perm)


def _unsqueeze(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    axis = _axis(argument(args, kwargs, 1, "dim", 0), args[0].dim() + 1)
    b.emit_for(result, "Unsqueeze", [b.value(args[0], "Unsqueeze"), b.ints([axis], "Unsqueeze")])


def _squeeze(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    source = args[0]
    dims = _dims(argument(args, kwargs, 1, "dim", None), source.dim())
    axes = [d for d in dims if source.shape[d] == 1]
    if not axes:
        _identity(b, args, kwargs, result)
        return
    b.emit_for(result, "Squeeze", [b.value(source, "Squeeze"), b.ints(axes, "Squeeze")])


def _cat(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    tensors = argument(args, kwargs, 0, "tensors", ())
    dim = argument(args, kwargs, 1, "dim", 0)
    dtype = result._data.dtype
    names = [b.cast(b.value(t, "Concat"), dtype) for t in tensors]
    b.emit_for(result, "Concat", names, axis=_axis(int(dim), result.dim()))


def _clamp(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    low = argument(args, kwargs, 1, "min", None)
    high = argument(args, kwargs, 2, "max", None)
    dtype = result._data.dtype
    inputs = [b.cast(b.value(args[0], "Clip"), dtype)]
    for bound in (low, high):
        if bound is None:
            inputs.append("")
        elif isinstance(bound, Tensor) and bound.dim() > 0:
            raise _unsupported(b, "clamp (tensor bounds)")
        else:
            value = bound.item() if isinstance(bound, Tensor) else bound
            inputs.append(b.constant(np.asarray(value, dtype=dtype), "Clip"))
    while inputs[-1] == "":
        inputs.pop()
    b.emit_for(result, "Clip", inputs)


def _leaky_relu(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    slope = argument(args, kwargs, 1, "negative_slope", 0.01)
    b.emit_for(result, "LeakyRelu", [b.value(args[0], "LeakyRelu")], alpha=float(slope))


def _gelu(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    approximate = argument(args, kwargs, 1, "approximate", "none")
    name = b.value(args[0], "Gelu")
    if b.opset >= 20:
        b.emit_for(result, "Gelu", [name], approximate=str(approximate))
        return
    if approximate != "none":
        raise _unsupported(b, "gelu (approximate='tanh')")
    # x * (erf(x / sqrt(2)) + 1) / 2
    dtype = result._data.dtype
    (scaled,) = b.emit("Div", [name, b.constant(np.asarray(np.sqrt(2.0), dtype), "Div")])
    (erf,) = b.emit("Erf", [scaled])
    (plus,) = b.emit("Add", [erf, b.constant(np.asarray(1.0, dtype), "Add")])
    (product,) = b.emit("Mul", [name, plus])
    b.emit_for(result, "Mul", [product, b.constant(np.asarray(0.5, dtype), "Mul")])


def _comparison(op_type: str, negate: bool = False) -> Handler:
    """``op_type`` of the two operands in their promoted dtype (a bool result); ``negate``:
    then ``Not`` (``!=`` is ``Not(Equal)``, as PyTorch writes it)."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        other = argument(args, kwargs, 1, "other", None)
        dtype = result_type(args[0], other).np
        names = [_operand(b, value, dtype, op_type) for value in (args[0], other)]
        if not negate:
            b.emit_for(result, op_type, names)
            return
        (equal,) = b.emit(op_type, names)
        b.emit_for(result, "Not", [equal])

    return handle


def _where(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    condition = argument(args, kwargs, 0, "condition", None)
    dtype = result._data.dtype
    values = [argument(args, kwargs, i, name, None) for i, name in ((1, "input"), (2, "other"))]
    names = [_operand(b, value, dtype, "Where") for value in values]
    mask = b.cast(b.value(condition, "Where"), np.dtype(bool))
    b.emit_for(result, "Where", [mask, *names])


def _pairwise(op_type: str) -> Handler:
    """``maximum``/``minimum``: ``Max``/``Min`` of two tensors in the result's dtype."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        other = argument(args, kwargs, 1, "other", None)
        dtype = result._data.dtype
        b.emit_for(result, op_type, [_operand(b, v, dtype, op_type) for v in (args[0], other)])

    return handle


def _extreme(op_type: str) -> Handler:
    """``max``/``min`` over every element (with ``dim`` they return values and indices, which
    the recorder refuses before it gets here)."""

    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        if len(args) > 1 or kwargs:
            other = argument(args, kwargs, 1, "other", None)
            if isinstance(other, Tensor):  # (torch.max(x, y): the element-wise form)
                _pairwise(op_type.removeprefix("Reduce"))(b, args, kwargs, result)
                return
        b.emit_for(result, op_type, [b.value(args[0], op_type)], keepdims=0)

    return handle


def _arg_extreme(op_type: str) -> Handler:
    def handle(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
        source = args[0]
        dim = argument(args, kwargs, 1, "dim", None)
        keepdim = int(bool(argument(args, kwargs, 2, "keepdim", False)))
        name = b.value(source, op_type)
        if dim is None:  # (over the flattened tensor)
            (name,) = b.emit("Reshape", [name, b.ints([-1], "Reshape")], allowzero=0)
            dim, keepdim = 0, 0
        axis = _axis(int(dim), max(source.dim(), 1))
        b.emit_for(result, op_type, [name], axis=axis, keepdims=keepdim, select_last_index=0)

    return handle


def _cast(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    """``x.float()``, ``x.to(dtype)`` ...: a ``Cast`` to the result's dtype (nothing when the
    dtype stays)."""
    if result._data.dtype == args[0]._data.dtype:
        _identity(b, args, kwargs, result)
        return
    b.bind(result, b.cast(b.value(args[0], "Cast"), result._data.dtype))


def _expand(b: GraphBuilder, args: tuple, kwargs: dict[str, Any], result: Any) -> None:
    """``Expand`` to the traced result's shape (-1 and sizes equal to the input's: 1, which
    ONNX's broadcasting reads as "keep the input's size")."""
    source = args[0]
    sizes = _shape_arguments(args, kwargs)
    in_shape = (1,) * (len(sizes) - source.dim()) + tuple(source.shape)
    target = [
        1 if size == -1 or (size == in_size and in_size != 1) else int(size)
        for size, in_size in zip(sizes, in_shape, strict=True)
    ]
    b.emit_for(result, "Expand", [b.value(source, "Expand"), b.ints(target, "Expand")])


def _unsupported(b: GraphBuilder, name: str) -> Exception:
    from .errors import UnsupportedOperatorError

    return UnsupportedOperatorError(f"aten::{name}", b.opset, None)


FUNCTIONS: dict[str, Handler] = {
    "add": _elementwise("Add"),
    "sub": _elementwise("Sub"),
    "subtract": _elementwise("Sub"),
    "rsub": _rsub,
    "_rsub": _swapped("Sub"),
    "_rtruediv": _rtruediv,
    "_rpow": _rpow,
    "_pow": _pow,
    "_permute": _permute,
    "getitem": _getitem,
    "mul": _elementwise("Mul"),
    "multiply": _elementwise("Mul"),
    "div": _div,
    "divide": _div,
    "true_divide": _elementwise("Div"),
    "pow": _pow,
    "matmul": _matmul,
    "mm": _matmul,
    "bmm": _matmul,
    "linear": _linear,
    "relu": _unary("Relu"),
    "sigmoid": _unary("Sigmoid"),
    "tanh": _unary("Tanh"),
    "exp": _unary("Exp"),
    "log": _unary("Log"),
    "sqrt": _unary("Sqrt"),
    "neg": _unary("Neg"),
    "negative": _unary("Neg"),
    "abs": _unary("Abs"),
    "sin": _unary("Sin"),
    "cos": _unary("Cos"),
    "erf": _unary("Erf"),
    "reciprocal": _unary("Reciprocal"),
    "leaky_relu": _leaky_relu,
    "gelu": _gelu,
    "softmax": _softmax("Softmax"),
    "log_softmax": _softmax("LogSoftmax"),
    "flatten": _flatten,
    "view": _view,
    "reshape": _view,
    "expand": _expand,
    "gt": _comparison("Greater"),
    "greater": _comparison("Greater"),
    "lt": _comparison("Less"),
    "less": _comparison("Less"),
    "ge": _comparison("GreaterOrEqual"),
    "greater_equal": _comparison("GreaterOrEqual"),
    "le": _comparison("LessOrEqual"),
    "less_equal": _comparison("LessOrEqual"),
    "eq": _comparison("Equal"),
    "_eq": _comparison("Equal"),
    "ne": _comparison("Equal", negate=True),
    "not_equal": _comparison("Equal", negate=True),
    "where": _where,
    "maximum": _pairwise("Max"),
    "minimum": _pairwise("Min"),
    "max": _extreme("ReduceMax"),
    "min": _extreme("ReduceMin"),
    "amax": _reduce("ReduceMax", 18),
    "amin": _reduce("ReduceMin", 18),
    "prod": _reduce("ReduceProd", 18),
    "argmax": _arg_extreme("ArgMax"),
    "argmin": _arg_extreme("ArgMin"),
    "float": _cast,
    "double": _cast,
    "half": _cast,
    "long": _cast,
    "int": _cast,
    "bool": _cast,
    "to": _cast,
    "type_as": _cast,
    "sum": _reduce("ReduceSum", 13),
    "mean": _reduce("ReduceMean", 18),
    "transpose": _transpose,
    "t": _transpose,
    "permute": _permute,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "cat": _cat,
    "concat": _cat,
    "clamp": _clamp,
    "clip": _clamp,
    "dropout": _dropout,
    "contiguous": _identity,
    "clone": _identity,  # (ONNX values are never written in place: nothing to copy)
    "detach": _identity,
    "requires_grad_": _identity,
}

# In-place forms write the same result into their input: the same handler, the input rebound.
for _name in ("add", "sub", "mul", "div", "relu", "sigmoid", "tanh", "exp", "clamp", "pow"):
    FUNCTIONS[_name + "_"] = FUNCTIONS[_name]
