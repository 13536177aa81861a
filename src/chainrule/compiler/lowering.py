"""From a traced program to the IR: one run of the ``GraphModule`` on the real arguments,
each op of the table it applies recorded as an ``ir`` node.

``chainrule.fx`` records Python-level calls (``operator.add``, ``F.linear``, a submodule);
the IR holds op-table entries, whose derivative formulas give the backward graph. A
``TorchFunctionMode`` sees every public call: an op of the table becomes a node; any other
function (``F.linear``, ``F.cross_entropy``, ``Tensor.__add__``...) runs with the mode still
on, so the ops it applies are recorded in its place (``linear`` -> ``t``, ``addmm``).

Tensors the program reads that are not its arguments (a module's parameters and buffers,
tensors it closes over) become placeholders too, read from the same tensor objects at each
call. Python values computed from tensors' shapes are baked in: the compiled graph is
guarded on shapes.

Writes the layers make into their own buffers are nodes run at each call for their effect
(``ir.IMPURE``): training-mode ``batch_norm``'s update of the running statistics and the
count of ``num_batches_tracked``, as dropout's draws.

What the IR cannot express raises :class:`Unsupported` (the call then runs eagerly):
in-place ops and ``out=`` (they write a tensor's memory), random ops (the graph would replay
one draw), reading a value into Python (``item``, ``tolist``, ``bool``...), an output that is
an argument or a view of one, and non-tensor results other than plain Python values.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrule._overrides import TorchFunctionMode
from chainrule._tensor import Tensor, wrap
from chainrule.ir import Graph, Value
from chainrule.ir.backward import not_differentiable
from chainrule.ir.interpreter import impure
from chainrule.nn.modules.normalization import _count_batch, count_batch
from chainrule.ops.creation import PER_EXAMPLE_DRAWS
from chainrule.ops.nn_ops.dropout import _keep_in_layout as dropout_keep
from chainrule.ops.nn_ops.dropout import _laid_out_like as laid_out_like
from chainrule.ops.nn_ops.dropout import dropout as dropout_function
from chainrule.ops.nn_ops.losses import _nll_check_targets as check_targets
from chainrule.ops.nn_ops.losses import _nll_total_weight as total_weight
from chainrule.ops.nn_ops.normalization import _batch_statistics as batch_statistics
from chainrule.ops.nn_ops.normalization import _in_single as in_single
from chainrule.ops.nn_ops.normalization import _layer_norm_dims as layer_norm_dims
from chainrule.ops.nn_ops.normalization import _row_moments as row_moments
from chainrule.ops.nn_ops.normalization import _update_running as update_running
from chainrule.ops.nn_ops.pooling import _channels_last as channels_last
from chainrule.ops.nn_ops.pooling import _laid_out as pooling_laid_out
from chainrule.ops.nn_ops.pooling import _max_pool_geometry as max_pool_geometry
from chainrule.ops.nn_ops.pooling import _max_pool_indices as max_pool_argmax

__all__ = ["Unsupported", "Lowered", "lower"]

# Functions that draw random numbers (their names, or a part of them).
_RANDOM = re.compile(
    r"rand|dropout|bernoulli|multinomial|normal|poisson|uniform|exponential|geometric|"
    r"cauchy|gumbel|rrelu|_standard_gamma|_sample_dirichlet|binomial"
)
# Methods that read a tensor's values into Python.
_READS_VALUES = {
    "item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__",
    "__complex__", "__len__", "__iter__", "__array__", "__format__", "__repr__", "__str__",
    "data_ptr", "equal", "allclose", "is_nonzero",
}  # fmt: skip
# Ops whose result's shape depends on the values (a graph guarded on shapes cannot hold them).
_DATA_DEPENDENT_SHAPE = {
    "nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "_unique2",
    "repeat_interleave", "bincount",
}  # fmt: skip


class Unsupported(Exception):
    """The program does something the IR cannot express (the message says what)."""


class Lowered:
    """The IR of one traced call: its graph, its inputs (the tensor arguments' values in
    order, then the captured tensors'), the captured tensors themselves, and the result's
    structure (``leaves``: a Value, or a Python value, per leaf of ``structure``)."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.arg_values: list[Value] = []  # per tensor argument
        self.arg_positions: list[Any] = []  # where each is: an int position or a kwarg name
        self.captured: list[Tensor] = []
        self.captured_values: list[Value] = []
        self.structure: Any = None
        self.leaves: list[Any] = []
        self.names: dict[Value, str] = {}
        self.counts: dict[str, int] = {}
        self.taken: set[str] = set()

    @property
    def inputs(self) -> list[Value]:
        """The placeholders in the order the generated forward takes them."""
        return self.arg_values + self.captured_values

    def unique(self, base: str) -> str:
        """A distinct snake-case name (``add``, ``add_1``...)."""
        base = re.sub(r"\W", "_", base).strip("_").lower() or "v"
        if base[0].isdigit():
            base = "p" + base
        name, n = base, self.counts.get(base, 0)
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.counts[base] = n
        self.taken.add(name)
        return name


def _function_name(func: Callable[..., Any]) -> str:
    op = getattr(func, "op", None)
    if op is not None:
        return op.name
    return getattr(func, "__name__", type(func).__name__)


class _Recorder(TorchFunctionMode):
    """Records each op-table call on tensors into ``lowered.graph``."""

    def __init__(self, lowered: Lowered, names: dict[int, str], known: set[int]) -> None:
        super().__init__()
        self.lowered = lowered
        self.values: dict[int, Value] = {}
        self.keep: list[Any] = []  # (the tensors seen, so that their ids stay theirs)
        self.param_names = names
        self.known = known  # ids of the tensors that existed before the call
        self.outer: list[str] = []  # the functions (no ops) being run, innermost last
        self.outer_calls: list[tuple[Callable[..., Any], tuple, dict[str, Any]]] = []  # (theirs)
        self.reader = ""  # the op being recorded
        # Array arguments computed as graph values (by id): the tensors bound to them.
        self.precise: dict[int, list[Tensor]] = {}

    def bind(self, tensor: Tensor, value: Value) -> None:
        self.values[id(tensor)] = value
        self.keep.append(tensor)

    def value_of(self, tensor: Tensor) -> Value:
        value = self.values.get(id(tensor))
        if value is not None:
            return value
        if tensor.grad_fn is not None:
            raise Unsupported("a tensor computed outside the traced program's ops")
        if id(tensor) not in self.known:
            # (made during the call by code that is no op, maybe from the arguments' values:
            # replaying the first call's tensor could be wrong)
            where = f" inside '{self.outer[-1]}'" if self.outer else ""
            raise Unsupported(f"a tensor made outside the op table{where}, read by '{self.reader}'")
        lowered = self.lowered
        name = lowered.unique(self.param_names.get(id(tensor), "constant"))
        value = lowered.graph.placeholder(tensor.shape, tensor.dtype, name=name)
        lowered.names[value] = name
        lowered.captured.append(tensor)
        lowered.captured_values.append(value)
        self.bind(tensor, value)
        return value

    def convert(self, arg: Any) -> Any:
        if isinstance(arg, Tensor):
            return self.value_of(arg)
        if isinstance(arg, tuple | list):
            bound = self.precise.get(id(arg))
            if bound is not None:
                return type(arg)(self.value_of(t) for t in bound)
            return type(arg)(self.convert(a) for a in arg)
        if isinstance(arg, dict | set | slice):
            if any(isinstance(a, Tensor) for a in _flat(arg)):
                raise Unsupported("tensors inside a dict, set or slice argument")
        return arg

    def record_dropout(self, args: tuple, kwargs: dict[str, Any]) -> Tensor:
        """``dropout`` as eagerly: the input times a mask, the mask a node of its own."""
        input, p = _dropout_arguments(args, kwargs)[:2]
        mask = dropout_mask(input, p)
        node = self.lowered.graph.call(
            dropout_mask, (self.convert(input), p), name=self.lowered.unique("dropout_mask")
        )
        self.bind(mask, node.outputs[0])
        self.lowered.names[node.outputs[0]] = node.name
        with self:
            return input * mask

    def record_count(self, counter: Tensor) -> None:
        """A batch-norm layer's ``num_batches_tracked += 1``: a node counting at each call."""
        node = self.lowered.graph.call(
            counted_batch, (self.convert(counter),), name=self.lowered.unique("count_batch")
        )
        self.lowered.names[node.outputs[0]] = node.name
        _count_batch(counter)

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = _function_name(func)
        if name in _READS_VALUES:
            raise Unsupported(f"'{name}' reads a tensor's values into Python")
        if name in _DATA_DEPENDENT_SHAPE or _bool_index(name, args):
            raise Unsupported(f"'{name}' gives a result whose shape depends on the values")
        if name == "dropout" and _dropout_drawn(args, kwargs):
            return self.record_dropout(args, kwargs)
        if func is count_batch:
            return self.record_count(*args, **kwargs)
        if _RANDOM.search(name) and not _dropout_off(name, args, kwargs):
            raise Unsupported(f"'{name}' draws random numbers")
        if (name.endswith("_") and not name.endswith("__")) or name.startswith("__i"):
            raise Unsupported(f"'{name}' writes into a tensor")
        if "out" in kwargs and kwargs["out"] is not None or kwargs.get("inplace"):
            raise Unsupported(f"'{name}' writes into a tensor (out= or inplace=True)")
        if name == "__setitem__":
            raise Unsupported("'__setitem__' writes into a tensor")
        if name == "embedding" and (
            kwargs.get("max_norm") is not None or len(args) > 3 and args[3] is not None
        ):
            # (its rows are renormalised by writing into the weight, not through an op)
            raise Unsupported("'embedding' with max_norm writes into its weight")
        op = getattr(func, "op", None)
        if op is None:
            self.outer.append(name)
            self.outer_calls.append((func, args, kwargs))
            try:
                with self:
                    result = getattr(func, "__wrapped__", func)(*args, **kwargs)
            finally:
                self.outer.pop()
                self.outer_calls.pop()
            if not any(isinstance(a, Tensor) for a in _flat((args, kwargs))):
                # (made from Python values only, which are baked in or guarded: the same
                # tensor at each call, read as a constant)
                self.known.update(id(t) for t in _flat(result) if isinstance(t, Tensor))
                self.keep.append(result)
            return result
        self.reader = name
        derive = DERIVED_ARGUMENTS.get(name)
        if derive is not None:
            derive(self, op.bind(args, kwargs))
        result = func(*args, **kwargs)
        if not any(isinstance(a, Tensor) for a in _flat((args, kwargs))):
            raise Unsupported(f"'{name}' makes a tensor from Python values only")
        node = self.lowered.graph.call(
            func,
            tuple(self.convert(a) for a in args),
            {k: self.convert(v) for k, v in kwargs.items()},
            name=self.lowered.unique(name),
        )
        results = result if isinstance(result, tuple | list) else (result,)
        if len(results) != len(node.outputs):
            raise Unsupported(f"'{name}' gives {len(results)} results, its node has more")
        for tensor, value in zip(results, node.outputs, strict=True):
            if not isinstance(tensor, Tensor):
                raise Unsupported(f"'{name}' returned a {type(tensor).__name__}")
            self.bind(tensor, value)
            self.lowered.names[value] = node.name
        return result


def _dropout_arguments(args: tuple, kwargs: dict[str, Any]) -> tuple:
    bound = inspect.signature(dropout_function).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _dropout_drawn(args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether ``dropout`` draws a mask the graph can draw too: training, not in place,
    ``0 < p <= 1``, outside vmap's per-example draws."""
    try:
        input, p, training, inplace = _dropout_arguments(args, kwargs)
    except TypeError:
        return False
    return (
        isinstance(input, Tensor)
        and training is True
        and not inplace
        and type(p) in (int, float)
        and 0 < p <= 1
        and not PER_EXAMPLE_DRAWS
    )


@impure
@not_differentiable
def dropout_mask(input: Tensor, p: float) -> Tensor:
    """Dropout's scaled Bernoulli(1 - p) mask for ``input``, drawn from the default generator
    as eager ``dropout`` draws it (a graph node run at each call, in the program's order:
    the compiled program draws the numbers the eager one would)."""
    return wrap(_dropout_mask_arrays(input._data, p))


def _dropout_mask_arrays(x: np.ndarray, p: float) -> np.ndarray:
    """:func:`dropout_mask` on arrays (what the generated code calls): drawn in the memory
    order of ``x``'s layout, as eager ``dropout`` (a transposed input draws along its
    columns)."""
    if p == 1:
        return laid_out_like(x, np.zeros(x.shape, x.dtype))
    mask = dropout_keep(x, p).astype(x.dtype) / np.asarray(1 - p, x.dtype)
    return laid_out_like(x, mask)


dropout_mask.on_arrays = _dropout_mask_arrays  # type: ignore[attr-defined]


def _dropout_off(name: str, args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether a dropout function is called with ``training=False`` (the identity)."""
    if "dropout" not in name:
        return False
    training = kwargs.get("training", args[2] if len(args) > 2 else True)
    return training is False


def _bool_index(name: str, args: tuple) -> bool:
    """Whether an indexing call selects with a boolean mask (a value-dependent shape)."""
    if "index" not in name and "getitem" not in name:
        return False
    return any(
        isinstance(a, Tensor) and a.dtype.np.kind in "bu" and a.dtype.itemsize == 1
        for a in _flat(args[1:])
    )


def _flat(obj: Any) -> list[Any]:
    found: list[Any] = []
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list | set):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, slice):
            stack.extend((item.start, item.stop, item.step))
        else:
            found.append(item)
    return found


def _structure(result: Any, recorder: _Recorder, lowered: Lowered) -> Any:
    """The result's structure with leaf numbers in place of its leaves (tuples and lists
    kept), its leaves appended to ``lowered.leaves``."""
    if isinstance(result, tuple | list):
        return type(result)(_structure(r, recorder, lowered) for r in result)
    if isinstance(result, Tensor):
        value = recorder.values.get(id(result))
        if value is None:
            if result.grad_fn is None:
                raise Unsupported("an output that is not computed by the program")
            raise Unsupported("an output computed outside the traced program's ops")
        if value.node.kind == "placeholder" or _aliases_input(value):
            raise Unsupported("an output that is an input or a view of one")
        lowered.leaves.append(value)
        return len(lowered.leaves) - 1
    if isinstance(result, dict | set):
        raise Unsupported(f"a {type(result).__name__} output")
    lowered.leaves.append(result)
    return len(lowered.leaves) - 1


def _aliases_input(value: Value) -> bool:
    """Whether ``value`` is a view (through view ops only) of a placeholder."""
    node = value.node
    while node.kind == "call" and node.op is not None and node.op.view:
        source = node.op.bind(node.args, node.kwargs)[node.op.input_pos[0]]
        if not isinstance(source, Value):
            return False
        node = source.node
    return node.kind == "placeholder" and node is not value.node


@not_differentiable
def nll_total_weight(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, ignore_index: int
) -> Tensor:
    """The ``total_weight`` argument ``nll_loss`` computes from the targets (the count or
    summed weight of the kept ones) before its op runs, with its check of the targets: a
    graph node, so that each call computes it from its own targets."""
    w = None if weight is None else weight._data
    return wrap(_nll_total_weight_arrays(input._data, target._data, w, reduction, ignore_index))


def _nll_total_weight_arrays(
    input: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: str,
    ignore_index: int,
) -> np.ndarray:
    """:func:`nll_total_weight` on arrays (what the generated code calls)."""
    check_targets(input, target, ignore_index)
    return total_weight(target, weight, ignore_index, reduction, input.dtype)


nll_total_weight.on_arrays = _nll_total_weight_arrays  # type: ignore[attr-defined]


def _nll_total_weight_node(recorder: _Recorder, bound: tuple) -> None:
    input, target, weight, reduction, ignore_index, total = bound
    if not isinstance(total, Tensor) or id(total) in recorder.values:
        return
    args = (input, target, weight, reduction, ignore_index)
    node = recorder.lowered.graph.call(
        nll_total_weight,
        tuple(recorder.convert(a) for a in args),
        name=recorder.lowered.unique("total_weight"),
    )
    recorder.bind(total, node.outputs[0])
    recorder.lowered.names[node.outputs[0]] = node.name


@not_differentiable
def layer_norm_moments(input: Tensor, normalized_shape: tuple, eps: float) -> tuple:
    """The mean and reciprocal standard deviation ``layer_norm`` computes of each row before
    its op runs: a graph node, computed from each call's input, which passes no gradient (as
    the eager constants it stands for). A float16/bfloat16 input gives four: the statistics
    rounded to its dtype (saved) and in float32 (what the op normalises with), as eagerly."""
    x = input._data
    dims = layer_norm_dims(x.ndim, normalized_shape)
    mean, rstd = row_moments(in_single(x), dims, math.prod(normalized_shape), eps)
    mean, rstd = np.asarray(mean), np.asarray(rstd)
    if x.dtype == mean.dtype:
        return wrap(mean), wrap(rstd)
    with np.errstate(over="ignore"):
        rounded = mean.astype(x.dtype), rstd.astype(x.dtype)
    return wrap(rounded[0]), wrap(rounded[1]), wrap(mean), wrap(rstd)


def _layer_norm_moments_node(recorder: _Recorder, bound: tuple) -> None:
    input, shape, mean, rstd, _, _, eps, precise = bound
    if not isinstance(mean, Tensor) or id(mean) in recorder.values:
        return
    node = recorder.lowered.graph.call(
        layer_norm_moments,
        (recorder.convert(input), tuple(shape), eps),
        name=recorder.lowered.unique("moments"),
    )
    tensors = [mean, rstd]
    if precise is not None:
        # (float32 arrays: the op's argument is rebuilt with these values' tensors)
        recorder.precise[id(precise)] = [wrap(np.asarray(p)) for p in precise]
        tensors += recorder.precise[id(precise)]
    names = ("mean", "rstd", "mean_float32", "rstd_float32")
    for tensor, value, name in zip(tensors, node.outputs, names[: len(tensors)], strict=True):
        recorder.bind(tensor, value)
        recorder.lowered.names[value] = recorder.lowered.unique(name)


@not_differentiable
def max_pool_indices(
    input: Tensor,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> Tensor:
    """The flat indices of the maxima ``max_pool{nd}d`` computes before its gather op runs
    (the op's ``result1``): a graph node, computed from each call's input."""
    return wrap(
        _max_pool_indices_arrays(input._data, nd, kernel_size, stride, padding, dilation, ceil_mode)
    )


def _max_pool_indices_arrays(
    x: np.ndarray,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> np.ndarray:
    """:func:`max_pool_indices` on arrays (what the generated code calls)."""
    kernel, steps, pad, dil, out = max_pool_geometry(
        x, nd, kernel_size, stride, padding, dilation, ceil_mode
    )
    indices, _ = max_pool_argmax(x, kernel, steps, pad, dil, out)
    return pooling_laid_out(indices, channels_last(x))


max_pool_indices.on_arrays = _max_pool_indices_arrays  # type: ignore[attr-defined]

#: The public max-pooling functions that compute the indices their gather op reads, by
#: the gather op's name.
_MAX_POOL_FUNCTIONS = {
    "max_pool2d_gather": ("max_pool2d", "max_pool2d_with_indices"),
    "max_pool3d_gather": ("max_pool3d", "max_pool3d_with_indices"),
}


def _outer_arguments(
    recorder: _Recorder, functions: tuple[str, ...], input: Tensor
) -> dict[str, Any] | None:
    """The arguments (defaults included) of the innermost call of one of ``functions``
    being run (the public function whose op is being recorded), when its ``input`` is
    ``input``; None otherwise."""
    call = next(
        (c for c in reversed(recorder.outer_calls) if _function_name(c[0]) in functions),
        None,
    )
    if call is None:
        return None
    func, args, kwargs = call
    try:
        params = inspect.signature(getattr(func, "__wrapped__", func)).bind(*args, **kwargs)
    except TypeError:
        return None
    params.apply_defaults()
    given = params.arguments
    return given if given.get("input") is input else None


def _max_pool_indices_node(recorder: _Recorder, bound: tuple) -> None:
    input, indices = bound[0], bound[1]
    if not isinstance(indices, Tensor) or id(indices) in recorder.values:
        return
    gather = recorder.reader
    given = _outer_arguments(recorder, _MAX_POOL_FUNCTIONS[gather], input)
    if given is None:
        return  # (the gather called some other way: refused as a tensor made outside)
    nd = 3 if gather.startswith("max_pool3d") else 2
    geometry = tuple(
        given[k] for k in ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
    )
    node = recorder.lowered.graph.call(
        max_pool_indices,
        (recorder.convert(input), nd, *geometry),
        name=recorder.lowered.unique("max_pool_indices"),
    )
    recorder.bind(indices, node.outputs[0])
    recorder.lowered.names[node.outputs[0]] = node.name


@impure
@not_differentiable
def counted_batch(counter: Tensor) -> Tensor:
    """``counter += 1`` (a batch-norm layer's ``num_batches_tracked``) in place, at each
    call; gives the new count (a node run for its effect)."""
    return wrap(_counted_batch_arrays(counter._data))


def _counted_batch_arrays(counter: np.ndarray) -> np.ndarray:
    """:func:`counted_batch` on arrays (what the generated code calls)."""
    counter += 1
    return counter.copy()


counted_batch.on_arrays = _counted_batch_arrays  # type: ignore[attr-defined]


@not_differentiable
def batch_norm_statistics(input: Tensor, param: str, eps: float) -> tuple:
    """The batch statistics training-mode ``batch_norm`` computes before its op runs (the
    mean and ``1 / sqrt(var + eps)`` in the parameters' dtype ``param``, the sum of squared
    deviations, the mean and invstd in the compute dtype): a graph node, computed from each
    call's input, which passes no gradient (the op's derivative formulas differentiate
    through the statistics, as PyTorch's)."""
    return tuple(wrap(a) for a in _batch_norm_statistics_arrays(input._data, param, eps))


def _batch_norm_statistics_arrays(input: np.ndarray, param: str, eps: float) -> tuple:
    """:func:`batch_norm_statistics` on arrays (what the generated code calls)."""
    return tuple(np.asarray(a) for a in batch_statistics(input, np.dtype(param), eps))


batch_norm_statistics.on_arrays = _batch_norm_statistics_arrays  # type: ignore[attr-defined]


@impure
@not_differentiable
def update_running_statistics(
    running_mean: Tensor,
    running_var: Tensor,
    mean: Tensor,
    var_sum: Tensor,
    count: int,
    momentum: float,
) -> Tensor:
    """Training-mode ``batch_norm``'s update of the running statistics in place (PyTorch's
    ``momentum * batch + (1 - momentum) * running``, the variance unbiased), at each call
    (a node run for its effect; gives an empty array)."""
    return wrap(
        _update_running_statistics_arrays(
            running_mean._data, running_var._data, mean._data, var_sum._data, count, momentum
        )
    )


def _update_running_statistics_arrays(
    running_mean: np.ndarray,
    running_var: np.ndarray,
    mean: np.ndarray,
    var_sum: np.ndarray,
    count: int,
    momentum: float,
) -> np.ndarray:
    """:func:`update_running_statistics` on arrays (what the generated code calls)."""
    update_running(running_mean, running_var, mean, var_sum, count, momentum)
    return np.empty(0, running_mean.dtype)


update_running_statistics.on_arrays = _update_running_statistics_arrays  # type: ignore[attr-defined]


def _batch_norm_statistics_node(recorder: _Recorder, bound: tuple) -> None:
    """Training-mode ``batch_norm``: its statistics as a node, and the update of the
    running statistics (when it keeps them) as a node run at each call."""
    input, mean, invstd, _, _, running_mean, running_var, training, eps, precise = bound
    if not isinstance(mean, Tensor) or id(mean) in recorder.values:
        return
    lowered = recorder.lowered
    if training is False:
        # (evaluation: the op reads the running statistics; its batch-statistics arguments
        # are empty placeholders, constants of the graph)
        for tensor in (mean, invstd):
            if isinstance(tensor, Tensor) and tensor._data.size == 0:
                constant = lowered.graph.constant(tensor._data, name=lowered.unique("empty"))
                recorder.bind(tensor, constant)
        return
    if training is not True:
        return
    given = _outer_arguments(recorder, ("batch_norm",), input)
    if given is None or type(given.get("momentum")) not in (int, float):
        return  # (the op called some other way: refused as a tensor made outside)
    node = lowered.graph.call(
        batch_norm_statistics,
        (recorder.convert(input), mean._data.dtype.name, eps),
        name=lowered.unique("batch_statistics"),
    )
    outputs = node.outputs
    names = ("batch_mean", "batch_invstd", "batch_var_sum", "batch_mean_work", "batch_invstd_work")
    for value, name in zip(outputs, names, strict=True):
        lowered.names[value] = lowered.unique(name)
    recorder.bind(mean, outputs[0])
    recorder.bind(invstd, outputs[1])
    if precise is not None:
        # (float16/bfloat16 input: normalised with the statistics in float32, the op's
        # argument rebuilt with these values' tensors)
        recorder.precise[id(precise)] = [wrap(np.asarray(p)) for p in precise]
        for tensor, value in zip(recorder.precise[id(precise)], outputs[3:], strict=True):
            recorder.bind(tensor, value)
    if running_mean is None or running_var is None:
        return
    x = input._data
    update = lowered.graph.call(
        update_running_statistics,
        (
            recorder.convert(running_mean),
            recorder.convert(running_var),
            outputs[3],
            outputs[2],
            x.size // x.shape[1],
            given["momentum"],
        ),
        name=lowered.unique("update_running_statistics"),
    )
    lowered.names[update.outputs[0]] = update.name


#: Ops whose public functions compute a tensor argument outside the op table, from other
#: arguments: how to compute it as a node instead (op name -> function of the recorder and
#: the op's bound arguments, binding that tensor to a value).
DERIVED_ARGUMENTS: dict[str, Callable[[_Recorder, tuple], None]] = {
    "nll_loss_forward": _nll_total_weight_node,
    "nll_loss2d_forward": _nll_total_weight_node,
    "native_layer_norm": _layer_norm_moments_node,
    "native_batch_norm": _batch_norm_statistics_node,
    "max_pool2d_gather": _max_pool_indices_node,
    "max_pool3d_gather": _max_pool_indices_node,
}


def lower(
    program: Callable[..., Any],
    args: tuple,
    kwargs: dict[str, Any],
    arg_names: list[str],
    param_names: dict[int, str],
) -> tuple[Lowered, Any]:
    """Run ``program`` once on the arguments, recording its ops: the IR and the result.
    ``arg_names`` names the positional parameters, ``param_names`` the tensors the program
    may read besides its arguments (by id: parameters, buffers, tensors it closes over);
    any other tensor not made by an op is refused. Raises :class:`Unsupported` for what the
    IR cannot express."""
    lowered = Lowered()
    known = set(param_names)
    known.update(id(t) for t in _flat((args, kwargs)) if isinstance(t, Tensor))
    known.update(id(t) for t in vars(program).values() if isinstance(t, Tensor))
    recorder = _Recorder(lowered, param_names, known)
    positions: list[Any] = list(range(len(args))) + sorted(kwargs)
    for position in positions:
        arg = args[position] if isinstance(position, int) else kwargs[position]
        if not isinstance(arg, Tensor):
            continue
        if id(arg) in recorder.values:
            raise Unsupported("the same tensor passed twice")
        if isinstance(position, int):
            base = arg_names[position] if position < len(arg_names) else f"arg{position}"
        else:
            base = position
        name = lowered.unique(base)
        value = lowered.graph.placeholder(arg.shape, arg.dtype, name=name)
        lowered.names[value] = name
        lowered.arg_values.append(value)
        lowered.arg_positions.append(position)
        recorder.bind(arg, value)
    with recorder:
        result = program(*args, **kwargs)
    lowered.structure = _structure(result, recorder, lowered)
    return lowered, result
