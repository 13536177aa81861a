"""The forward half of the op table: run an op on tensors and give its result a node.

:func:`make_public_function` builds each op's public function. Ops with one or two tensor
inputs in front (most of the table) get a specialised one: the per-op cost of a Python engine is
its overhead, so the common path unwraps, checks dtypes and runs the forward with no loops and
no keyword handling. Everything else goes through :func:`run_general`. All of them make the
result with ``wrap`` and its node with the op's generated recorder for the inputs that need grad
(:mod:`._recorder`), so what a node records and saves is built in one place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .. import _dtype
from .._meta import DATA_DEPENDENT, META, MetaArray, meta_like, no_meta_kernel, stand_in
from .._overrides import (
    MODES_ENTERED,
    handle_torch_function,
    modes_active,
    operator_torch_function,
    overrides_enabled,
)
from .._strides import in_iterator_layout
from .._tensor import (
    COMPLEX_GRAD_MESSAGE,
    INFERENCE_TENSORS,
    INFERENCE_VIEW,
    MULTI_OUTPUT_VIEW,
    NO_ACCUMULATOR,
    NO_GRAD_VIEW,
    SPECIAL_VIEW,
    Tensor,
    grad_accumulator,
    inherit_inference,
    is_inference_tensor,
    refresh_view,
    wrap,
)
from ..autograd.forward_grad import DUAL
from ..autograd.grad_mode import GRAD, INFERENCE, mode_get
from ..autograd.node import type_name
from ._bfloat16 import BF16 as _BF16
from ._bfloat16 import holds_bfloat16, narrow, widen
from ._dispatch_modes import dispatches, run_dispatched
from ._forward import propagate
from ._recorder import recorder
from .out_arguments import check_out, write_out

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = [
    "make_public_function", "make_operator", "run_general", "promote", "KEEP",
    "ARITH", "FLOAT", "COMPARE",
]

# Type-promotion modes of an op's differentiable inputs.
KEEP = "keep"  # no promotion: the op keeps its input's dtype (shape ops, indexing)
ARITH = "arith"  # promote inputs to a common dtype, result in that dtype (add, mul, where ...)
FLOAT = "float"  # like ARITH, then integral/bool results become the default float (div, exp)
COMPARE = "compare"  # promote for the comparison, result is bool (eq, lt ...)

_ndarray = np.ndarray
_asarray = np.asarray
_new = object.__new__
_number_types = (int, float, bool, complex)
_NO_EDGE = (None, 0)
_HALF_TARGETS = (np.dtype(np.float16), _dtype.bfloat16.np)


#: Nonzero while a ``torch.func`` transform runs a backward pass in which PyTorch's saved tensors
#: are functorch-wrapped ("subclass-like": ``grad``'s own pass, a graph recorded under ``vmap``,
#: a pass inside ``jvp``/``jacfwd`` or another transform): the derivative formulas that PyTorch
#: writes two ways (``prod``'s) take their composite path then, as PyTorch's do.
COMPOSITE_BACKWARD = [0]


#: Nonzero while a backward pass runs unrecorded (its formulas on arrays) where PyTorch's runs in
#: grad mode: ``torch.func.vjp``'s ``vjp_fn`` records its pass (create_graph) whenever grad mode
#: is on, chainrule's only when its graph reaches outside the call. See :func:`backward_grad_mode`.
BACKWARD_GRAD_MODE = [0]


def backward_grad_mode(value: Any) -> bool:
    """Whether PyTorch's backward formula runs in grad mode here (its pass records: create_graph),
    for the formulas it writes differently then (prod's and cumprod's with zeros); ``value``
    is one of the formula's saved inputs (an array on the unrecorded fast path)."""
    if BACKWARD_GRAD_MODE[0] > 0:
        return True
    return type(value) is not np.ndarray and bool(mode_get() & GRAD)


def functorch_wrapped(*values: Any) -> bool:
    """Whether PyTorch's formula would see one of ``values`` (a derivative's saved inputs or
    its incoming gradient) as functorch-wrapped, "subclass-like": in a transform's pass
    (:data:`COMPOSITE_BACKWARD`), or a value batched by ``vmap`` (the cotangents of
    ``vmap(vjp_fn)``, as in ``jacrev``; ``func``'s batched tensors say so by
    ``_FUNCTORCH_WRAPPED``)."""
    if COMPOSITE_BACKWARD[0] > 0:
        return True
    return any(getattr(type(v), "_FUNCTORCH_WRAPPED", False) for v in values)


# ----------------------------------------------------------------------------------------------
# Type promotion


def promote(op: OpDef, values: list[Any]) -> None:
    """Cast ``values`` (arrays and numbers at the op's promotion positions) in place to the
    dtype PyTorch computes in; numbers that decide the category become arrays of that dtype."""
    positions = op.promote_pos
    first = None
    same = True
    scalar_cat = -1
    unsigned = False  # an int from 2**63 to 2**64 - 1: PyTorch's number is a uint64
    for p in positions:
        v = values[p]
        if type(v) is _ndarray:
            if first is None:
                first = v.dtype
            elif v.dtype != first:
                same = False
        elif type(v) in _number_types:
            if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX:
                unsigned = unsigned or _dtype.is_uint64_number(v)
            scalar_cat = max(scalar_cat, _dtype.scalar_category(v))
        elif isinstance(v, np.generic):
            # (PyTorch reads a NumPy bool as a float number: tensor([1]) + np.bool_(1) is 2.)
            values[p] = v = float(v) if type(v) is np.bool_ else v.item()
            scalar_cat = max(scalar_cat, _dtype.scalar_category(v))
    if first is not None and same and scalar_cat <= _dtype._BY_NUMPY[first]._cat:
        target = _dtype._BY_NUMPY[first]
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
        target = _dtype.combine(dim_dtype, zero_dtype, scalar_cat, unsigned)
    if op.promote == FLOAT and target._cat < 2:
        target = _dtype.get_default_dtype()
    np_target = target.np
    category_from_number = first is None or not same or target._cat != _dtype._BY_NUMPY[first]._cat
    for p in positions:
        v = values[p]
        if type(v) is _ndarray:
            if v.dtype != np_target:
                if (not v.ndim and op.half_takes_scalar_tensors and p == positions[1]
                        and v.dtype.kind == "f" and np_target in _HALF_TARGETS
                        and v.dtype.itemsize > 2):
                    values[p] = float(v)  # (as a number: see OpDef.half_takes_scalar_tensors)
                else:
                    values[p] = v.astype(np_target)
        elif type(v) is int and np_target.kind in "iu":
            low, high = _int_range(np_target)
            if not low <= v <= high:
                values[p] = wrapped_int(v, np_target)
            elif category_from_number:
                values[p] = _asarray(v, dtype=np_target)
        elif category_from_number and type(v) in _number_types:
            # A number that decides the result's category: an array of the target dtype, so
            # NumPy computes in the dtype PyTorch would.
            values[p] = _asarray(v, dtype=np_target)


# ----------------------------------------------------------------------------------------------
# bfloat16 (see ._bfloat16): an op given bfloat16 arrays computes in float32 and rounds once.


def forward_in_float32(op: OpDef, values: Sequence[Any]) -> Any:
    """``op.forward`` on ``values`` whose bfloat16 arrays are widened to float32, its floating
    results rounded to bfloat16 once (unless an explicit ``dtype=`` chose another)."""
    widened = [widen(v) for v in values]
    if op.half_rounds_numbers:  # (PyTorch's add and sub; mul and div take numbers as they are)
        for p in op.promote_pos:
            if type(widened[p]) is float:
                widened[p] = float(np.asarray(widened[p], _BF16))
    elif op.promote is COMPARE:
        # A comparison casts a number to the common dtype first, as PyTorch's does:
        # bfloat16 0.30078125 == 0.3 is True, 256 == 257 too (NumPy compared the exact number).
        for p in op.promote_pos:
            if type(widened[p]) is float or type(widened[p]) is int:
                widened[p] = float(np.asarray(float(widened[p]), _BF16))
    out = op.forward(*widened)
    pos = op.dtype_pos
    if pos is not None and values[pos] is not None and values[pos] is not _dtype.bfloat16:
        return out
    return narrow(out)


def _computes_in_bfloat16(op: OpDef, values: Sequence[Any]) -> bool:
    """Whether the op runs in float32 for bfloat16: it is no view and does not compute
    bfloat16 itself (``half_native``), a tensor argument is bfloat16 and none is of another
    floating type (an op that does not promote, given mixed types, runs as it is, so its own
    check raises PyTorch's dtype error)."""
    if op.view or op.half_native:
        return False
    found = False
    for p in op.tensor_positions:
        v = values[p]
        if holds_bfloat16(v):
            found = True
        elif type(v) is _ndarray and v.dtype.kind in "fc":
            return False
    return found


def wrapped_int(value: int, np_dtype: np.dtype) -> np.ndarray:
    """A Python int as PyTorch converts it to an integer tensor's type: wrapping around (uint8
    -3 is 253), from 2**63 to 2**64 - 1 too (read as a uint64); NumPy refuses out-of-range
    ints. Beyond those PyTorch's OverflowError."""
    _dtype.is_uint64_number(value)
    return np.array(value & 0xFFFF_FFFF_FFFF_FFFF, dtype=np.uint64).astype(np_dtype)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


_INT_RANGES: dict[np.dtype, tuple[int, int]] = {}


def _int_range(np_dtype: np.dtype) -> tuple[int, int]:
    limits = _INT_RANGES.get(np_dtype)
    if limits is None:
        info = np.iinfo(np_dtype)
        limits = _INT_RANGES[np_dtype] = (int(info.min), int(info.max))
    return limits


def _needs_promotion(mode: str, a: Any, b: Any) -> bool:
    """False when NumPy's result dtype is already PyTorch's (the common case)."""
    if type(a) is not _ndarray:
        a, b = b, a
        if type(a) is not _ndarray:
            return True
    kind = a.dtype.kind
    if mode == FLOAT and kind not in "fc":
        return True
    tb = type(b)
    if tb is _ndarray:
        return a.dtype != b.dtype
    if tb is float:
        return kind not in "fc"
    if tb is int:
        if kind in "iu":
            low, high = _int_range(a.dtype)
            return not low <= b <= high  # PyTorch wraps such numbers; NumPy would refuse
        return kind == "b" or not _INT64_MIN <= b <= _UINT64_MAX  # (beyond: PyTorch's error)
    if tb is bool:
        return False
    return True


def broadcast_error(*values: Any) -> RuntimeError | None:
    """PyTorch's error for operands whose shapes do not broadcast (None if they do)."""
    # As PyTorch's TensorIterator: the operands' shapes broadcast one after the other, so the
    # error names the shape broadcast so far (a) and the operand that does not fit it (b).
    shapes = [tuple(np.shape(v)) for v in values]
    so_far = shapes[0] if shapes else ()
    for shape in shapes[1:]:
        ndim = max(len(so_far), len(shape))
        merged = []
        for k in range(1, ndim + 1):  # (the last dimension first, as PyTorch's infer_size)
            a = so_far[-k] if len(so_far) >= k else 1
            b = shape[-k] if len(shape) >= k else 1
            if a != b and a != 1 and b != 1:
                return RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {ndim - k}"
                )
            merged.append(b if a == 1 else a)
        so_far = tuple(reversed(merged))
    return None


def numpy_broadcast_error(error: ValueError) -> Exception:
    """PyTorch's message for NumPy's "operands could not be broadcast together with shapes
    (3,) (4,)" (``error`` itself for any other ValueError): the shapes are read from NumPy's
    message, for code that only has the error (a derivative formula that met a saved tensor
    whose ``.data`` got another shape after the forward)."""
    message = str(error)
    if "could not be broadcast" not in message:
        return error
    shapes = [
        tuple(int(n) for n in group.split(",") if n.strip())
        for group in re.findall(r"\(([\d, ]*)\)", message.split("shapes", 1)[-1])
    ]
    converted = broadcast_error(*(np.empty(shape, np.bool_) for shape in shapes))
    return error if converted is None else converted


def _forward_error(error: ValueError, values: Sequence[Any]) -> Exception:
    arrays = [v for v in values if isinstance(v, np.ndarray | np.generic)]
    if "broadcast" in str(error) and len(arrays) > 1:
        converted = broadcast_error(*arrays)
        if converted is not None:
            return converted
    return error


# ----------------------------------------------------------------------------------------------
# Recording


def _edge(x: Tensor) -> tuple[Any, int]:
    fn = x._grad_node
    if fn is not None:
        return (fn, x._output_nr)
    return (grad_accumulator(x), 0)


def _share_with_base(view: Tensor, source: Tensor, multi_view: bool = False) -> None:
    """A view shares its base's version counter; ``_base`` is the tensor owning the memory.

    Also how it was made (PyTorch's CreationMeta, see ``_tensor.NO_GRAD_VIEW``): in no_grad or
    inference mode, or as one of several views (``multi_view``); a view of such a view is one
    too. PyTorch forbids modifying those in place when autograd would have to record it.
    """
    if INFERENCE_TENSORS:
        if is_inference_tensor(source):
            # As PyTorch: a view of an inference tensor is an inference tensor sharing its
            # memory, but not a view (no ``_base``; inference tensors have no version counter).
            inherit_inference(view, source)
            return
    view._vc = source._vc
    base = source._base
    if base is None:
        base = source
        kind = None
    else:
        kind = source._view_meta
    view._base = base
    if kind is not INFERENCE_VIEW:
        mode = mode_get()
        if not mode & GRAD:
            if not mode & INFERENCE:
                kind = NO_GRAD_VIEW
            elif not source.is_inference():
                # A view of a normal tensor made in inference mode is a normal tensor.
                INFERENCE_TENSORS.pop(id(view), None)
                kind = INFERENCE_VIEW
        elif multi_view:
            kind = MULTI_OUTPUT_VIEW
    view._view_meta = kind
    view._view_version = source._vc[0]
    if kind is None:
        view._view_src_fn = base._grad_node
        return
    view._view_src_fn = SPECIAL_VIEW
    if kind is NO_GRAD_VIEW or kind is INFERENCE_VIEW:
        if base._requires_grad and view._grad_node is None:
            # It requires grad through its base, but gradients sent to it go nowhere.
            view._requires_grad = True
            view._acc = NO_ACCUMULATOR


# ----------------------------------------------------------------------------------------------
# The general runner


def _type_error(op: OpDef, value: Any, pos: int, offset: int) -> TypeError:
    """PyTorch's message for an argument of the wrong type; ``offset`` is 1 when the op was
    called as a Tensor method (``x.atan2(1.5)``: ``self`` is not counted in the position)."""
    name = op.param_names[pos]
    return TypeError(
        f"{op.name}(): argument '{'input' if name == 'self' else name}' "
        f"(position {pos + 1 - offset}) must be Tensor, not {type_name(value)}"
    )


def _given(op: OpDef, args: tuple) -> tuple:
    """The bound ``args`` without the trailing ones left at their defaults (what the call
    gave, as PyTorch's messages show it)."""
    n = len(args)
    while n and args[n - 1] is op.defaults[n - 1]:
        n -= 1
    return args[:n]


def run_general(op: OpDef, args: tuple, offset: int = 0) -> Any:
    """Run ``op`` on positional ``args`` (already bound), recording a node when needed
    (``offset``: 1 when called as a Tensor method, for the positions errors name)."""
    if MODES_ENTERED[0]:
        if modes_active():
            return _overridden(op, args, offset)  # a TorchFunctionMode takes every call
        if dispatches(op):  # a dispatch mode computes it, below autograd
            return run_dispatched(op, args, offset, run_general)
    values = list(args)
    requires_grad = False
    bfloat16 = _dtype._state.default is _dtype.bfloat16
    for p in op.input_pos:
        x = values[p]
        if isinstance(x, Tensor):
            if type(x) is not Tensor and x._tf_active and overrides_enabled():
                return _overridden(op, args, offset)
            if x._base is not None:
                refresh_view(x)
            values[p] = data = x._data
            if data.dtype is _BF16:
                bfloat16 = True
            if x._requires_grad:
                requires_grad = True
        elif x is None and op.defaults[p] is None:
            continue
        elif hasattr(type(x), "__torch_function__") and overrides_enabled():
            return _overridden(op, args, offset)  # a tensor-like object of another type
        elif p in op.tensor_only_pos and op.signatures:
            # (an op with several overloads: PyTorch lists them)
            raise TypeError(op.invalid_arguments_message(_given(op, args), {}))
        elif p in op.tensor_only_pos or (
            type(x) not in _number_types and not isinstance(x, np.generic)
        ):
            raise _type_error(op, x, p, offset)
    for p in op.tensor_param_pos:
        x = values[p]
        if isinstance(x, Tensor):
            if type(x) is not Tensor and x._tf_active and overrides_enabled():
                return _overridden(op, args, offset)
            if x._requires_grad and p in op.refused_grad_pos and mode_get() & GRAD:
                raise RuntimeError(
                    f"The function '{op.name}' is not differentiable with respect to argument "
                    f"'{op.param_names[p]}'. This input cannot have requires_grad True."
                )
            values[p] = x._data
            bfloat16 = bfloat16 or x._data.dtype is _BF16
        elif type(x) is tuple and p in op.tensor_list_pos:
            if any(type(e) is not Tensor and isinstance(e, Tensor) and e._tf_active
                   for e in x) and overrides_enabled():
                return _overridden(op, args, offset)
            values[p] = x = tuple(e._data if isinstance(e, Tensor) else e for e in x)
            bfloat16 = bfloat16 or holds_bfloat16(x)
    meta = META[0] and _meta_stand_ins(op, args, values)
    if op.check is not None:
        op.check(*values)
    if op.promote is not KEEP:
        promote(op, values)
    try:
        if meta:
            out = _meta_forward(op, values)
        elif bfloat16 and _computes_in_bfloat16(op, values):
            out = forward_in_float32(op, values)
        else:
            out = op.forward(*values)
    except ValueError as error:
        raise _forward_error(error, values) from None
    record = requires_grad and op.differentiable and mode_get() & GRAD
    if not op.multi_output:
        if type(out) is not _ndarray:
            out = _asarray(out)
        if op.iterates and out.ndim > 1:
            out = _iterator_layout(out, [values[p] for p in op.iterated_pos])
        if meta:
            out = meta_like(out)
        result = wrap(out)
        if op.view:
            _share_with_base(result, args[op.input_pos[0]], op.multi_view)
        if record:
            if out.dtype.kind in "fcV":
                if not op.complex_ok and (out.dtype.kind == "c" or _complex_among(values, op)):
                    refuse_complex_gradient(op)
                _record(op, args, out, result)
            elif op.refuses_integral_result:
                name = _dtype.SCALAR_TYPE_NAMES[result.dtype]
                raise RuntimeError(f"Autograd not support dtype: {name}")
        if DUAL[0]:
            propagate(op, args, result)  # (forward mode: a dual level is entered)
        return result
    if meta:
        out = [meta_like(_asarray(o)) for o in out]
    return _wrap_outputs(op, args, out, record)


# ----------------------------------------------------------------------------------------------
# Meta tensors (see .._meta): an op with a meta argument computes its result's shape, dtype and
# strides on stand-in arrays, and the result is a meta tensor.


def _meta_stand_ins(op: OpDef, args: tuple, values: list[Any]) -> bool:
    """Replace the meta arrays among ``values`` (unwrapped ``args``) by stand-ins; whether
    there was one. A CPU tensor among the differentiable inputs is PyTorch's error (a 0-d CPU
    tensor is taken as a number, as PyTorch takes it); CPU index tensors are taken (chainrule's
    composite ops compute some on the CPU, where PyTorch would refuse a user's)."""
    found = False
    expected = None
    for p, v in enumerate(values):
        if type(v) is MetaArray:
            found = True
            values[p] = stand_in(v)
            expected = expected or "meta"
        elif type(v) is tuple and p in op.tensor_list_pos:
            if any(type(e) is MetaArray for e in v):
                found = True
                values[p] = tuple(stand_in(e) if type(e) is MetaArray else e for e in v)
                expected = expected or "meta"
        elif type(v) is _ndarray and isinstance(args[p], Tensor) and v.ndim and (
            p in op.input_pos  # (indices a composite op computed on the CPU are taken)
        ):
            if found and expected == "meta":
                raise RuntimeError("Tensor on device cpu is not on the expected device meta!")
            expected = expected or "cpu"
    if found and expected == "cpu":
        raise RuntimeError("Tensor on device meta is not on the expected device cpu!")
    return found


def _meta_forward(op: OpDef, values: list[Any]) -> Any:
    """The op's forward on stand-ins (or its ``meta_forward``, for ops whose result can be
    sized without computing it: convolution on inputs too large to compute on)."""
    if op.name in DATA_DEPENDENT:
        raise no_meta_kernel(DATA_DEPENDENT[op.name])
    forward = op.meta_forward or op.forward
    try:
        with np.errstate(all="ignore"):
            return forward(*values)
    except MemoryError:
        raise NotImplementedError(
            f"{op.name}: chainrule computes the result of this op on meta tensors by running "
            "it on stand-in arrays, and this one is too large for that"
        ) from None


def run_keywords(op: OpDef, args: tuple, kwargs: dict[str, Any], offset: int = 0) -> Any:
    """Run ``op`` on ``args`` and ``kwargs`` (bound here), ``out=`` written by the op's rule
    when its public function takes one (:mod:`.out_arguments`)."""
    if "out" not in kwargs or op.out_rule is None or offset:
        return run_general(op, op.bind(args, kwargs), offset)
    given = kwargs
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    bound = op.bind(args, kwargs)
    if out is None:
        return run_general(op, bound, offset)
    relevant = (*args, *given.values())
    if overrides_enabled() and any(
        type(x) is not Tensor and isinstance(x, Tensor) and x._tf_active for x in relevant
    ):
        # (PyTorch hands the call to the overriding types with ``out=`` among its arguments)
        return handle_torch_function(op.publics[offset == 1], relevant, *args, **given)
    if not isinstance(out, Tensor) and op.signatures:
        raise TypeError(op.invalid_arguments_message(args, given))
    inputs = [bound[p] for p in op.input_pos]
    check_out(op.name, out, inputs)
    return write_out(op.name, out, run_general(op, bound, offset), op.out_rule, inputs)


def _overridden(op: OpDef, args: tuple, offset: int) -> Any:
    """The call of ``op`` on ``args`` (bound) handed to the ``__torch_function__`` of the
    overriding types among them, with the op's public function (or Tensor method, ``offset``
    1) as ``func`` and the arguments the call gave."""
    given = _given(op, args)
    return handle_torch_function(op.publics[offset == 1], given, *given)


def _iterator_layout(out: np.ndarray, operands: list[Any]) -> np.ndarray:
    """An element-wise op's result laid out as PyTorch's TensorIterator lays it out over the
    op's tensor ``operands`` (numbers and None among them are skipped): NumPy's layout is the
    same unless an operand is not row-major."""
    arrays = [v for v in operands if type(v) is _ndarray and v.ndim]
    if all(v.flags.c_contiguous for v in arrays):
        return out
    return in_iterator_layout(out, arrays)


def _wrap_outputs(op: OpDef, args: tuple, out: Sequence[Any], record: bool) -> tuple:
    outs = [o if type(o) is _ndarray else _asarray(o) for o in out]
    n_diff = len(outs) - op.nondiff_outputs
    results = tuple(wrap(o) for o in outs)
    if op.view:
        source = args[op.input_pos[0]]
        for t in results[:n_diff]:
            _share_with_base(t, source, op.multi_view)
    if record and n_diff and outs[0].dtype.kind in "fcV":
        if not op.complex_ok and (outs[0].dtype.kind == "c" or _complex_among(args, op)):
            refuse_complex_gradient(op)
        _record(op, args, tuple(outs[:n_diff]), results[:n_diff])
    if DUAL[0]:
        propagate(op, args, results)
    return results


def _record(op: OpDef, args: tuple, out: Any, result: Any) -> None:
    """Give ``result`` (a tuple of them for a multi-output op) its node, through the op's
    recorder for the inputs in ``args`` that require grad."""
    inputs = [args[p] for p in op.input_pos]
    needs = tuple(isinstance(x, Tensor) and x._requires_grad for x in inputs)
    record = op.recorders.get(needs) or recorder(op, needs)
    record(*inputs, args, out, result)


# ----------------------------------------------------------------------------------------------
# Specialised public functions for the common shapes of op
#
# Most ops take one or two tensors (or numbers) in front and produce one tensor. For them the
# public function itself does the work: Python binds the positional arguments, and unwrapping,
# the dtype check, the forward, the new Tensor and (when recording) the node are done inline.
# Keyword arguments, unusual types and anything needing promotion go to ``run_general``.

_MISSING: Any = object()


def _full_args(op: OpDef, args: tuple) -> tuple:
    n = len(args)
    return args if n == len(op.defaults) else args + op.defaults[n:]


def _unary_public(op: OpDef, offset: int = 0) -> Callable[..., Any]:
    """``op(x, *numbers)``: one tensor input in front, one output."""
    forward = op.forward
    differentiable = op.differentiable
    view = op.view
    multi_view = op.multi_view
    slow = len(op.promote_pos) > 1
    needs_float = op.promote is FLOAT
    n_params = len(op.defaults)
    recorders = op.recorders

    def public(x: Any = _MISSING, *rest: Any, **kwargs: Any) -> Any:
        if kwargs or x is _MISSING or slow or len(rest) >= n_params or not isinstance(
            x, Tensor
        ) or type(x) is not Tensor and x._tf_active or MODES_ENTERED[0] or DUAL[0] or META[0]:
            args = (x, *rest) if x is not _MISSING else rest
            return run_keywords(op, args, kwargs, offset)
        if x._base is not None:
            refresh_view(x)
        a = x._data
        if (needs_float and a.dtype.kind not in "fcV") or a.dtype is _BF16:
            return run_general(op, _full_args(op, (x, *rest)), offset)
        out = forward(a, *rest) if rest else forward(a)
        if type(out) is not _ndarray:
            out = _asarray(out)
        t = wrap(out)
        if not view:
            pass  # (the common case first)
        elif x._base is None and not multi_view and mode_get() & GRAD and not INFERENCE_TENSORS:
            # The common view (_share_with_base's first case, inline): of a tensor that is
            # not a view, in grad mode.
            t._vc = x._vc
            t._base = x
            t._view_meta = None
            t._view_src_fn = x._grad_node
            t._view_version = x._vc[0]
        else:
            _share_with_base(t, x, multi_view)
        if x._requires_grad and differentiable and mode_get() & GRAD and out.dtype.kind in "fcV":
            if (out.dtype.kind == "c" or a.dtype.kind == "c") and not op.complex_ok:
                refuse_complex_gradient(op)
            record = recorders.get(_TRUE1) or recorder(op, _TRUE1)
            record(x, (x, *rest) if rest else (x,), out, t)
        return t

    return public


def _binary_public(op: OpDef, operator: bool = False, offset: int = 0) -> Callable[..., Any]:
    """``op(x, y, *numbers)``: two tensor-or-number inputs in front, one output.

    ``operator=True`` makes ``Tensor.__add__`` ...: an operand that is neither a tensor nor a
    number gives ``NotImplemented`` (so Python tries the other operand's reflected method, then
    raises its own TypeError) instead of the function's argument error."""
    forward = op.forward
    promote_mode = op.promote
    differentiable = op.differentiable
    slow = len(op.promote_pos) > 2
    n_params = len(op.defaults)
    recorders = op.recorders
    # Numbers each input takes (none for an input PyTorch takes as a tensor only: the general
    # path raises its TypeError).
    x_numbers = () if op.input_pos[0] in op.tensor_only_pos else _number_types
    y_numbers = () if op.input_pos[1] in op.tensor_only_pos else _number_types
    max_rest = n_params - 2
    # Two arrays of one dtype need no promotion (unless the op computes in floating point).
    same_dtype_ok = promote_mode is ARITH or promote_mode is COMPARE
    check = op.check
    iterates = op.iterates

    def public(x: Any = _MISSING, y: Any = _MISSING, *rest: Any, **kwargs: Any) -> Any:
        if kwargs or y is _MISSING or slow or len(rest) > max_rest:
            args = tuple(v for v in (x, y) if v is not _MISSING) + rest
            return run_keywords(op, args, kwargs, offset)
        if isinstance(x, Tensor):
            if type(x) is not Tensor and x._tf_active:
                return run_general(op, _full_args(op, (x, y, *rest)), offset)
            if x._base is not None:
                refresh_view(x)
            a = x._data
            rx = x._requires_grad
        elif type(x) in x_numbers:
            a = x
            rx = False
        else:
            return run_general(op, _full_args(op, (x, y, *rest)), offset)
        if isinstance(y, Tensor):
            if type(y) is not Tensor and y._tf_active:
                return run_general(op, _full_args(op, (x, y, *rest)), offset)
            if y._base is not None:
                refresh_view(y)
            b = y._data
            ry = y._requires_grad
        elif type(y) in y_numbers:
            b = y
            ry = False
        elif operator and not isinstance(y, np.generic):
            if hasattr(type(y), "__torch_function__") and overrides_enabled():
                return operator_torch_function(op.publics[False], x, y)
            return NotImplemented
        else:
            return run_general(op, _full_args(op, (x, y, *rest)), offset)
        if (type(a) is _ndarray and a.dtype is _BF16) or (
            type(b) is _ndarray and b.dtype is _BF16
        ) or MODES_ENTERED[0] or DUAL[0] or META[0]:
            return run_general(op, _full_args(op, (x, y, *rest)), offset)
        if check is not None:
            check(a, b, *rest)
        if promote_mode is not KEEP and not (
            same_dtype_ok and type(a) is _ndarray and type(b) is _ndarray and a.dtype is b.dtype
        ) and _needs_promotion(promote_mode, a, b):
            return run_general(op, _full_args(op, (x, y, *rest)), offset)
        try:
            out = forward(a, b, *rest) if rest else forward(a, b)
        except ValueError as error:
            raise _forward_error(error, (a, b)) from None
        if type(out) is not _ndarray:
            out = _asarray(out)
        if iterates and out.ndim > 1 and not (
            (type(a) is not _ndarray or a.flags.c_contiguous)
            and (type(b) is not _ndarray or b.flags.c_contiguous)
        ):
            out = _iterator_layout(out, [a, b])
        t = wrap(out)
        if (rx or ry) and differentiable and mode_get() & GRAD and out.dtype.kind in "fcV":
            if (out.dtype.kind == "c" or type(a) is _ndarray and a.dtype.kind == "c" or type(
                b
            ) is _ndarray and b.dtype.kind == "c") and not op.complex_ok:
                refuse_complex_gradient(op)
            needs = (rx, ry)
            record = recorders.get(needs) or recorder(op, needs)
            record(x, y, (x, y, *rest) if rest else (x, y), out, t)
        return t

    return public


_TRUE1 = (True,)


def _complex_among(values: Sequence[Any], op: OpDef) -> bool:
    """Whether a differentiable input of ``op`` in ``values`` (arrays or Tensors) is complex."""
    for p in op.input_pos:
        v = values[p]
        if isinstance(v, Tensor):
            v = v._data
        if type(v) is _ndarray and v.dtype.kind == "c":
            return True
    return False


def refuse_complex_gradient(op: OpDef | str | None = None) -> NoReturn:
    """An op that would record a node with a complex input or result but is not on the
    allowlist of complex autograd (``complex_ok``): its derivatives may lack PyTorch's
    conjugates (``(x * 1j).abs()`` once gave ``-x.grad``), so recording is refused rather than
    giving a wrong gradient (checked after the forward ran into a new array: nothing the
    caller holds has changed)."""
    name = op if isinstance(op, str) or op is None else op.name.lstrip("_")
    raise RuntimeError(COMPLEX_GRAD_MESSAGE.format(name=name or "this operation"))


def make_public_function(op: OpDef, method: bool = False) -> Callable[..., Any]:
    """The public function of ``op``: specialised for one or two leading tensor inputs.
    ``method=True`` makes the Tensor method, whose errors count positions after ``self``."""
    offset = 1 if method else 0
    leading = op.input_pos == tuple(range(op.n_inputs)) and not op.tensor_param_pos
    if leading and not op.multi_output:
        if op.n_inputs == 1:
            return _unary_public(op, offset)
        if op.n_inputs == 2:
            return _binary_public(op, offset=offset)
    defaults = op.defaults
    n_params = len(defaults)
    required = sum(1 for d in defaults if d is _REQUIRED_MARK[0])

    def public(*args: Any, **kwargs: Any) -> Any:
        if kwargs or not required <= len(args) <= n_params:
            return run_keywords(op, args, kwargs, offset)
        if len(args) != n_params:
            args = args + defaults[len(args):]
        return run_general(op, args, offset)

    return public


def make_operator(op: OpDef) -> Callable[..., Any]:
    """``Tensor.__add__`` ... for a binary op: its public function, but ``NotImplemented`` for
    an operand it does not take (see :func:`_binary_public`)."""
    return _binary_public(op, operator=True)


# Set by the registry: its marker for parameters without a default.
_REQUIRED_MARK: list[Any] = [None]
