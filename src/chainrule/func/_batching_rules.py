"""Batching rules: how each op carries the batch dimension of ``vmap``.

A rule gets the op (``func``), its arguments and the level being batched; it unwraps the
tensors batched at that level (their values have the batch at dimension 0), computes with the
op on the values, and wraps the result. Families:

* element-wise ops (and their in-place forms): batched operands get size-1 dimensions after the
  batch so that broadcasting lines up the logical dimensions;
* ops with dimension arguments (reductions, softmax, cumulative ops, views, ``cat``/``stack``):
  each logical dimension ``d`` becomes ``d + 1``; a full reduction reduces every dimension but
  the batch;
* shape ops (``view``, ``reshape``, ``expand``, ``permute``, indexing ...): the batch size is
  prepended to sizes, ``slice(None)`` to indices;
* matrix products: logical vectors become matrices, ranks are aligned, and the product
  broadcasts over the batch; ``linear`` with unbatched weights runs as one ``linear``;
* convolutions and pooling: the batch is folded into the op's own batch dimension (batched
  weights: into the channels, with ``groups``);
* losses: computed per element (``reduction='none'``) and reduced per example.

Anything else runs once per example (``_batched.loop_fallback``). Random ops follow the vmap's
``randomness`` (``_randomness``): "different" draws for the whole batch at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import shape as shape_ops
from ..ops._dispatch import broadcast_error
from ..ops.creation import zeros, zeros_like
from ..ops.linalg import matmul
from ._batched import (
    PHYSICAL_IN_PLACE,
    RULES,
    RULES_BY_FUNCTION,
    BatchedTensor,
    active_levels,
    batch_size,
    call,
    in_place_broadcast_error,
    logical_zeros,
    loop_fallback,
    metadata,
    refuse_unbatched_self,
    unwrap,
    wrap_batched,
)
from ._randomness import RANDOM_RULE_RUNNING

__all__: list[str] = []

ITEM_MESSAGE = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
    ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
    "error is occurring somewhere inside PyTorch internals, please file a bug report."
)
CONTROL_FLOW_MESSAGE = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
    "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/"
    "issues ."
)


def _register(names: Sequence[str], rule: Callable[..., Any]) -> None:
    for name in names:
        RULES[name] = rule


def _logical_ndim(x: Any) -> int:
    """The rank the function sees (a batched tensor's ``_data`` has the logical shape; read
    directly, not through ``dim()``, which would dispatch to the batching rules again)."""
    return len(x._data.shape) if isinstance(x, Tensor) else 0


def _value_ndim(value: Tensor) -> int:
    return len(value.shape) - 1


def _unsqueeze_after_batch(value: Tensor, count: int) -> Tensor:
    if count <= 0:
        return value
    return value.reshape(value.shape[0], *([1] * count), *value.shape[1:])


def _is_inplace(func: Callable[..., Any]) -> bool:
    name = getattr(func, "__name__", "")
    return (name.endswith("_") and not name.endswith("__")) or name.startswith("__i")


# ----------------------------------------------------------------------------------------------
# Element-wise ops


def _align(args: tuple, kwargs: dict, level: int) -> tuple[tuple, dict, bool]:
    """Unwrap the tensors batched at ``level``, giving each batched value size-1 dimensions
    after the batch up to the largest logical rank among the tensor arguments."""
    rank = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            rank = max(rank, _logical_ndim(a))
    any_batched = False

    def convert(a: Any) -> Any:
        nonlocal any_batched
        value, batched = unwrap(a, level)
        if not batched:
            return a
        any_batched = True
        return _unsqueeze_after_batch(value, rank - _value_ndim(value))

    new_args = tuple(convert(a) for a in args)
    new_kwargs = {k: convert(v) for k, v in kwargs.items()}
    return new_args, new_kwargs, any_batched


def elementwise(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """Element-wise and broadcasting ops: one op on the aligned values."""
    if _is_inplace(func) and args:
        self_value, self_batched = unwrap(args[0], level)
        if not self_batched:
            refuse_unbatched_self(func, args, kwargs, level)
        new_args, new_kwargs, _ = _align(args, kwargs, level)
        if _logical_ndim(args[0]) < max(
            (_logical_ndim(a) for a in (*args, *kwargs.values()) if isinstance(a, Tensor)),
            default=0,
        ):
            # PyTorch's broadcast error for self: of the physical shapes for the ops it batches
            # by rules of their own, of the logical ones for those of its fallback
            if getattr(func, "__name__", "") in PHYSICAL_IN_PLACE:
                error = in_place_broadcast_error(args, kwargs, level)
                if error is not None:
                    raise error
            else:
                func(
                    logical_zeros(args[0]),
                    *(logical_zeros(a) if type(a) is BatchedTensor else a for a in args[1:]),
                    **{
                        k: logical_zeros(v) if type(v) is BatchedTensor else v
                        for k, v in kwargs.items()
                    },
                )
        call(func, new_args[0], *new_args[1:], **new_kwargs)
        return args[0]
    if kwargs:
        new_args, new_kwargs, _ = _align(args, kwargs, level)
        result = call(func, *new_args, **new_kwargs)
        zero_dim = True
    else:
        result, zero_dim = _aligned_call(func, args, level)
    if zero_dim and isinstance(result, Tensor) and _zero_dim_batched_mixed(args, kwargs, level):
        # A batched 0-d operand is 1-d or more once batched, and dimensioned tensors win type
        # promotion over 0-d ones: compute in the dtype the logical operands promote to.
        # (as torch.func: computed as batched, the result cast to the logical dtype; its
        # ``where`` keeps the batched promotion)
        expected = _logical_result_dtype(func, args, kwargs)
        if (
            expected is not None
            and expected != result.dtype
            and func.__name__
            not in (
                "where",
                "_where",
            )
        ):
            result = result.to(expected)
    return _wrap_result(result, level)


def _aligned_call(func: Callable[..., Any], args: tuple, level: int) -> tuple[Any, bool]:
    """``func`` on positional ``args`` aligned as :func:`_align` aligns them (the common case,
    in one pass: this runs for most ops under ``vmap``), and whether a batched operand is 0-d.
    ``func`` is called directly when no batched tensor is left among the values."""
    rank = 0
    for a in args:
        if isinstance(a, Tensor):
            n = len(a._data.shape)
            if n > rank:
                rank = n
    values = []
    plain = True
    zero_dim = False
    for a in args:
        cls = type(a)
        if cls is BatchedTensor and a._level == level:
            value = a._value
            n = len(value._data.shape) - 1
            if n == 0:
                zero_dim = True
            if n < rank:
                value = _unsqueeze_after_batch(value, rank - n)
            if type(value) is BatchedTensor:
                plain = False
            values.append(value)
        else:
            if cls is BatchedTensor or cls is list or cls is tuple:
                plain = False  # (batched at another level, maybe running: dispatch again)
            values.append(a)
    return (func(*values) if plain else call(func, *values)), zero_dim


def _zero_dim_batched_mixed(args: tuple, kwargs: dict, level: int) -> bool:
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    if len({t.dtype for t in tensors}) < 2:
        return False
    return any(unwrap(t, level)[1] and t.dim() == 0 for t in tensors)


def _proxy(x: Any) -> Any:
    """A tiny plain tensor standing for ``x`` in type promotion (its dtype, and whether it has
    dimensions)."""
    if not isinstance(x, Tensor):
        return x
    return zeros((1,) * x.dim(), dtype=x.dtype) if x.dim() else zeros((), dtype=x.dtype)


def _logical_result_dtype(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    try:
        with no_grad():
            out = func(*(_proxy(a) for a in args), **{k: _proxy(v) for k, v in kwargs.items()})
    except Exception:  # noqa: BLE001 - no proxy answer: keep the computed result
        return None
    return out.dtype if isinstance(out, Tensor) else None


def _wrap_result(result: Any, level: int) -> Any:
    if isinstance(result, Tensor):
        return wrap_batched(result, level)
    if isinstance(result, tuple | list):
        wrapped = [_wrap_result(r, level) for r in result]
        if hasattr(type(result), "_make"):
            return type(result)._make(wrapped)  # type: ignore[attr-defined]
        return type(result)(wrapped)
    return result


ELEMENTWISE = (
    "abs absolute acos arccos acosh arccosh add addcdiv addcmul angle asin arcsin asinh arcsinh "
    "atan arctan atan2 arctan2 atanh arctanh bitwise_and bitwise_not bitwise_or bitwise_xor ceil "
    "clamp clip clamp_min clamp_max copysign cos cosh deg2rad digamma div divide eq erf erfc "
    "erfinv exp exp2 expm1 float_power floor floor_divide fmod frac ge greater_equal gt greater "
    "heaviside hypot i0 isfinite isinf isnan isneginf isposinf isreal le less_equal lerp lgamma "
    "log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor "
    "logit lt less maximum minimum fmax fmin mul multiply mvlgamma nan_to_num ne not_equal neg "
    "negative nextafter polygamma pow positive rad2deg reciprocal remainder round rsqrt "
    "sgn sigmoid sign signbit sin sinc sinh sqrt square sub subtract tan tanh true_divide trunc "
    "fix xlogy where masked_fill real imag conj conj_physical "
    "relu relu6 elu selu celu gelu silu mish softplus softsign hardtanh hardsigmoid hardswish "
    "leaky_relu logsigmoid tanhshrink softshrink hardshrink threshold prelu rrelu glu_none "
    "sigmoid_ tanh_ relu_ "
    "float double half bfloat16 int long short bool char byte to type type_as "
    "detach clone contiguous requires_grad_ retain_grad zero_ fill_ copy_ "
    "zeros_like ones_like empty_like full_like "
    "_rsub _rpow _rtruediv _pow _floordiv _eq compare _rfloordiv _rmod "
    "elu_backward gelu_backward hardshrink_backward hardsigmoid_backward hardswish_backward "
    "hardtanh_backward leaky_relu_backward log_sigmoid_backward sigmoid_backward "
    "softplus_backward tanh_backward threshold_backward"
).split()
_register(ELEMENTWISE, elementwise)
_register(["_where"], elementwise)  # (the op under where, which derivative formulas call)
_register(
    [n + "_" for n in ELEMENTWISE if not n.endswith("_") and not n.startswith("_")], elementwise
)

RANDOM = (
    "dropout alpha_dropout feature_alpha_dropout dropout1d dropout2d dropout3d bernoulli "
    "bernoulli_ uniform_ normal_ exponential_ geometric_ cauchy_ log_normal_ random_ rand_like "
    "randn_like randint_like multinomial poisson"
).split()


# Random ops whose draws depend on a tensor argument: PyTorch's vmap refuses "same" randomness
# when that argument is batched.
SAME_REFUSED = frozenset({"bernoulli", "multinomial", "poisson", "normal"})


def _randomness_at(func: Callable[..., Any], level: int) -> str:
    """The randomness of the vmap at ``level``; PyTorch's refusal of "same" for the ops whose
    draws read a tensor argument (a batched one brought the op here)."""
    randomness = next(r for lvl, _, r in active_levels() if lvl == level)
    if randomness == "same" and getattr(func, "__name__", "") in SAME_REFUSED:
        raise RuntimeError(
            "Vmap does not currently support same randomness with a batched tensor input. "
            "Please file an issue with functorch"
        )
    return randomness


def random_op(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """Random ops: "different" draws for the whole batch at once (the op on the values, like an
    element-wise op); "same" gives every example the same draws (one call per example from the
    same generator state); "error" never gets here with a draw (the generator refuses)."""
    randomness = _randomness_at(func, level)
    RANDOM_RULE_RUNNING[0] += 1  # (its draws are per example already)
    try:
        if randomness == "same":
            return loop_fallback(func, args, kwargs, level)
        return elementwise(func, args, kwargs, level)
    finally:
        RANDOM_RULE_RUNNING[0] -= 1


def _normal(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``normal(mean, std)`` with a batched tensor mean or std: one draw per element of the
    batch's values ("different"; a tensor mean and std at one shape, as the examples pair
    them); "same" is refused as PyTorch's."""
    _randomness_at(func, level)
    bound = _bind(func, args, kwargs)
    if bound is None or bound.arguments.get("size") is not None:
        return random_op(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    aligned, _, _ = _align((arguments["mean"], arguments["std"]), {}, level)
    arguments["mean"], arguments["std"] = _expanded(aligned)
    RANDOM_RULE_RUNNING[0] += 1
    try:
        return wrap_batched(_call_bound(func, bound, arguments), level)
    finally:
        RANDOM_RULE_RUNNING[0] -= 1


def _multinomial(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``multinomial`` of batched probabilities ("different"): the batch folded into the rows
    of one draw, as each example's rows are drawn independently; "same" is refused as
    PyTorch's."""
    _randomness_at(func, level)
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    probs, batched = unwrap(arguments["input"], level)
    if not batched or any(type(v) is BatchedTensor for n, v in arguments.items() if n != "input"):
        return loop_fallback(func, args, kwargs, level)
    if _value_ndim(probs) not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    arguments["input"] = probs.reshape(-1, probs.shape[-1])
    RANDOM_RULE_RUNNING[0] += 1
    try:
        drawn = _call_bound(func, bound, arguments)
    finally:
        RANDOM_RULE_RUNNING[0] -= 1
    return wrap_batched(drawn.reshape(*probs.shape[:-1], drawn.shape[-1]), level)


_register(RANDOM, random_op)
_register(["normal"], _normal)
_register(["multinomial"], _multinomial)


def _unsupported_rrelu(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """PyTorch's vmap has no rule for ``rrelu`` (in every randomness mode, training or not)."""
    raise RuntimeError("vmap: we do not yet support aten::rrelu. Please file an issue")


_register(["rrelu", "rrelu_"], _unsupported_rrelu)

_OPERATORS = (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
    "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __neg__ __pos__ __abs__ __invert__ __and__ "
    "__rand__ __or__ __ror__ __xor__ __rxor__ __lt__ __le__ __gt__ __ge__ __eq__ __ne__ "
    "__iadd__ __isub__ __imul__ __itruediv__ __ipow__ __ifloordiv__ __imod__ __iand__ __ior__ "
    "__ixor__ __lshift__ __rshift__"
).split()
for _name in _OPERATORS:
    _method = getattr(Tensor, _name, None)
    if _method is not None:
        RULES_BY_FUNCTION[_method] = elementwise


# ----------------------------------------------------------------------------------------------
# Metadata, values, control flow


_register(
    "size dim ndimension numel nelement is_floating_point is_complex element_size __len__ "
    "get_device is_signed is_inference".split(),
    metadata,
)


def _item(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    raise RuntimeError(ITEM_MESSAGE)


def _control_flow(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    raise RuntimeError(CONTROL_FLOW_MESSAGE)


_register(["item"], _item)
_register("__bool__ __float__ __int__ __index__ __complex__ tolist numpy".split(), _control_flow)


def _new_factory(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``x.new_zeros(...)`` and co: unbatched results of ``x``'s dtype."""
    value, _ = unwrap(args[0], level)
    return call(func, value, *args[1:], **kwargs)


_register("new_zeros new_ones new_full new_empty new_tensor".split(), _new_factory)


# ----------------------------------------------------------------------------------------------
# Ops with dimension arguments

_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def _signature(func: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return _SIGNATURES[func]
    except KeyError:
        pass
    try:
        sig: inspect.Signature | None = inspect.signature(func)
    except (TypeError, ValueError):
        sig = None
    _SIGNATURES[func] = sig
    return sig


def _bind(func: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments | None:
    """The call bound to ``func``'s parameters, defaults filled in (None when it does not
    bind). The op table hands calls over with every argument positional, keyword-only ones
    included: those bind to a signature whose keyword-only parameters take positions too."""
    sig = _signature(func)
    if sig is None:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        kinds = [p.kind for p in sig.parameters.values()]
        if inspect.Parameter.VAR_POSITIONAL in kinds:
            return None
        relaxed = sig.replace(
            parameters=[
                p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
                if p.kind is inspect.Parameter.KEYWORD_ONLY
                else p
                for p in sig.parameters.values()
            ]
        )
        try:
            bound = relaxed.bind(*args, **kwargs)
        except TypeError:
            return None
    bound.apply_defaults()
    return bound


def _shift(dim: Any, ndim: int) -> Any:
    """A logical dim (or several) as the value's dim (PyTorch's IndexError when out of range)."""
    if isinstance(dim, list | tuple):
        return type(dim)(_shift(d, ndim) for d in dim)
    if isinstance(dim, bool) or not isinstance(dim, int):
        return dim
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if dim < low or dim > high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
        )
    # (a 0-d example's dim 0 or -1 is the value's dim 1, never the batch dim)
    return (dim + max(ndim, 1) if dim < 0 else dim) + 1


def _dim_rule(
    dim_names: tuple[str, ...],
    full: str = "flatten",
    extra_rank: int = 0,
    empty_is_all: bool = False,
    scalar: str = "reshape",
) -> Callable[..., Any]:
    """A rule for ops whose ``dim_names`` arguments are dimensions of ``self`` (the first
    argument): shifted by one. ``full``: what a missing dim means ("flatten": the whole
    tensor, reduced over its flattened value; "keep": the op's own default, no shift needed).
    ``extra_rank``: how many dims the op's output has beyond the input (``unsqueeze``: 1).
    ``empty_is_all``: an empty dim list means every dim (``sum(x, ())``, ``amax(x)``), so it
    becomes the example's dims, never the batch dim.
    ``scalar``: what a dim of a 0-d example means: "reshape" (reductions and scans, which take
    dim 0 or -1 of a 0-d tensor: run on a length-1 dim), "raise" (PyTorch's vmap runs the op
    on the value's dim 1 and raises its IndexError: ``select``, ``unbind`` ...), "eager" (the
    op's own error for a 0-d tensor: ``narrow``, ``chunk``), "alias" (``transpose``/``movedim``
    of a 0-d tensor is itself), "flatten" (a 0-d tensor flattens to one element)."""

    def rule(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
        bound = _bind(func, args, kwargs)
        if bound is None:
            return loop_fallback(func, args, kwargs, level)
        params = list(bound.signature.parameters)
        first = params[0]
        value, batched = unwrap(bound.arguments[first], level)
        others = [
            bound.arguments[n] for n in params[1:] if isinstance(bound.arguments.get(n), Tensor)
        ]
        if not batched or any(type(o) is BatchedTensor for o in others):
            return loop_fallback(func, args, kwargs, level)
        ndim = _value_ndim(value) + extra_rank
        arguments = dict(bound.arguments)
        arguments[first] = value
        if empty_is_all:
            for n in dim_names:
                given = arguments.get(n)
                if isinstance(given, list | tuple) and len(given) == 0:
                    arguments[n] = tuple(range(ndim)) if ndim else (0,)
        # (an argument left at a sentinel default, ``prod``'s ``dim``, was not given either)
        present = [n for n in dim_names if _given(arguments.get(n))]
        if not present and full not in ("flatten", "keep"):
            return loop_fallback(func, args, kwargs, level)
        if not present and full == "flatten" and arguments.get("keepdim"):
            return loop_fallback(func, args, kwargs, level)  # (keepdim of a full reduction)
        if not present and full == "flatten":
            if ndim == 0 and extra_rank == 0:
                arguments[first] = value.reshape(value.shape[0], 1)
            else:
                arguments[first] = value.reshape(value.shape[0], -1)
            for n in dim_names:
                if n in params:
                    arguments[n] = 1
                    break
            result = _call_bound(func, bound, arguments)
            return _wrap_result(result, level)
        if ndim == 0 and scalar == "eager" and present and value.shape[0]:
            call(func, value[0], *list(arguments.values())[1:])  # (raises its own message)
        for n in present:
            arguments[n] = _shift(arguments[n], max(ndim, 1) if ndim == 0 else ndim)
            if ndim == 0 and scalar == "alias":
                continue
            if ndim == 0 and scalar == "flatten":
                return wrap_batched(value.reshape(value.shape[0], 1), level)
            if ndim == 0 and scalar == "reshape":
                # a 0-d tensor takes dim 0 or -1: the value's dim 1 does not exist
                arguments[first] = value.reshape(value.shape[0], 1)
                return _squeeze_scalar(_wrap_result(_call_bound(func, bound, arguments), level))
        if ndim == 0 and scalar == "alias":
            return wrap_batched(value.view(value.shape), level)
        return _wrap_result(_call_bound(func, bound, arguments), level)

    return rule


def _given(value: Any) -> bool:
    """Whether an argument was given: neither None nor a bare ``object()`` sentinel (the
    default of an argument whose absence means something else than None)."""
    return value is not None and type(value) is not object


def _squeeze_scalar(result: Any) -> Any:
    if isinstance(result, BatchedTensor) and result.dim() == 1:
        return result.squeeze(0)
    if isinstance(result, tuple):  # (std_mean's pair, a namedtuple, a return_types sequence)
        items = [_squeeze_scalar(r) for r in result]
        if hasattr(type(result), "_make"):
            return type(result)._make(items)  # type: ignore[attr-defined]
        return type(result)(items)
    return result


def _call_bound(func: Callable[..., Any], bound: inspect.BoundArguments, arguments: dict) -> Any:
    """``func`` called with ``arguments`` (by parameter name; the bound call's, edited):
    positionally up to the first one left out, by keyword after it."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    sig = _signature(func) or bound.signature
    for name, param in sig.parameters.items():
        if name not in arguments:
            if param.kind is not inspect.Parameter.VAR_POSITIONAL:
                positional = False
            continue
        value = arguments[name]
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif param.kind is inspect.Parameter.KEYWORD_ONLY or not positional:
            kwargs[name] = value
        else:
            args.append(value)
    return call(func, *args, **kwargs)


_register("prod argmax argmin aminmax".split(), _dim_rule(("dim",)))
# (an empty dim list reduces every dim of these; under vmap also ``all``/``any``, whose eager
# forms keep every element)
_register(
    "sum mean nansum nanmean amax amin std var std_mean var_mean logsumexp count_nonzero all any "
    "norm".split(),
    _dim_rule(("dim",), empty_is_all=True),
)


def _softmax(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``softmax``/``log_softmax``/``softmin``: a missing dim is PyTorch's legacy implicit one,
    chosen from the logical rank (0 for 0-, 1- and 3-d inputs, else 1)."""
    bound = _bind(func, args, kwargs)
    if bound is not None and bound.arguments.get("dim") is None and "dim" in bound.arguments:
        ndim = _logical_ndim(bound.arguments[list(bound.signature.parameters)[0]])
        arguments = dict(bound.arguments)
        arguments["dim"] = 0 if ndim in (0, 1, 3) else 1
        new_args, new_kwargs = _split_bound(func, bound, arguments)
        return _DIM_KEEP(func, new_args, new_kwargs, level)
    return _DIM_KEEP(func, args, kwargs, level)


_DIM_KEEP = _dim_rule(("dim",), full="keep")


def _gumbel_softmax(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``gumbel_softmax`` of batched logits: "different" draws the noise for the whole batch
    at once (its ``dim`` shifted past the batch dim), "same" gives every example the same noise
    (on logits that are not batched, "different" is PyTorch's in-place randomness error: the
    op fills its noise in place)."""
    randomness = next(r for lvl, _, r in active_levels() if lvl == level)
    RANDOM_RULE_RUNNING[0] += 1  # (its draws are per example already)
    try:
        if randomness == "same":
            return loop_fallback(func, args, kwargs, level)
        return _DIM_KEEP(func, args, kwargs, level)
    finally:
        RANDOM_RULE_RUNNING[0] -= 1


_register(["gumbel_softmax"], _gumbel_softmax)
_register("cumsum cumprod cummax cummin logcumsumexp".split(), _DIM_KEEP)
_register(["_cumsum"], _DIM_KEEP)  # (the op under cumsum, which its backward formula calls)
_register(["softmax", "log_softmax", "softmin"], _softmax)
_register(["roll"], _dim_rule(("dims",), full="flatten_roll", scalar="raise"))
_register(
    ["transpose", "swapaxes", "swapdims"],
    _dim_rule(("dim0", "dim1", "axis0", "axis1"), full="keep", scalar="alias"),
)
_register(["index_select", "_sum_dim", "_squeeze_dim"], _dim_rule(("dim",), full="keep"))
_register(
    ["select", "unbind", "split", "_select", "_slice"],
    _dim_rule(("dim",), full="keep", scalar="raise"),
)
_register(["narrow", "chunk", "tensor_split"], _dim_rule(("dim",), full="keep", scalar="eager"))
_register(["diagonal"], _dim_rule(("dim1", "dim2"), full="keep", scalar="raise"))
_register(
    ["movedim", "moveaxis"], _dim_rule(("source", "destination"), full="keep", scalar="alias")
)
_register(["flatten"], _dim_rule(("start_dim", "end_dim"), full="keep", scalar="flatten"))
_register(["unflatten"], _dim_rule(("dim",), full="keep"))
_register(["unsqueeze"], _dim_rule(("dim",), full="keep", extra_rank=1))


def _max_min(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``max``/``min``: of one tensor over a dim (shifted), of the whole (flattened), or of two
    tensors (element-wise)."""
    rest = [*args[1:], *kwargs.values()]
    if any(isinstance(a, Tensor) for a in rest):
        return elementwise(func, args, kwargs, level)
    value, batched = unwrap(args[0], level)
    if not batched:
        return loop_fallback(func, args, kwargs, level)
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:
        return wrap_batched(call(func, value.reshape(value.shape[0], -1), 1)[0], level)
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    ndim = _value_ndim(value)
    if ndim == 0:
        _shift(dim, 0)  # (PyTorch's IndexError for a dim other than 0 and -1)
        result = call(func, value.reshape(value.shape[0], 1), 1, keepdim)
        return type(result)([wrap_batched(r.reshape(-1), level) for r in result])
    return _wrap_result(call(func, value, _shift(dim, ndim), keepdim), level)


_register(["max", "min", "median", "nanmedian"], _max_min)


def _squeeze(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    ndim = _value_ndim(value)
    if dim is None:
        dims = tuple(d + 1 for d in range(ndim) if value.shape[d + 1] == 1)
    elif ndim == 0:
        _shift(dim, 1)  # (PyTorch's IndexError for a dim other than 0 and -1)
        dims = ()
    else:
        dims = _shift(tuple(dim) if isinstance(dim, list | tuple) else (dim,), ndim)
    return wrap_batched(value.squeeze(dims) if dims else value.view(value.shape), level)


def _flip(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    dims = args[1:] if len(args) > 1 else kwargs.get("dims", ())
    if len(dims) == 1 and isinstance(dims[0], list | tuple):
        dims = dims[0]
    if isinstance(dims, int):
        dims = (dims,)
    return wrap_batched(value.flip(_shift(tuple(dims), _value_ndim(value))), level)


_register(["flip", "_flip"], _flip)
_register(["squeeze"], _squeeze)


# ----------------------------------------------------------------------------------------------
# Shape ops


def _sizes(args: tuple) -> tuple:
    if (
        len(args) == 1
        and isinstance(args[0], list | tuple)
        or (len(args) == 1 and type(args[0]).__name__ == "Size")
    ):
        return tuple(args[0])
    return tuple(args)


def _view_like(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``view``/``reshape``: the batch size in front of the sizes."""
    value, batched = unwrap(args[0], level)
    if (
        not batched
        or kwargs
        or (
            len(args) == 2
            and not isinstance(args[1], int | list | tuple)
            and type(args[1]).__name__ != "Size"
        )
    ):
        return loop_fallback(func, args, kwargs, level)
    sizes = _sizes(args[1:])
    return wrap_batched(call(func, value, value.shape[0], *sizes), level)


_register(["view", "reshape"], _view_like)


def _sized_view(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """The table's ``_view``/``_unsafe_view``/``_reshape`` ops ``(self, size)``."""
    value, batched = unwrap(args[0], level)
    if not batched or kwargs or len(args) != 2:
        return loop_fallback(func, args, kwargs, level)
    return wrap_batched(value.reshape(value.shape[0], *args[1]), level)


_register(["_view", "_unsafe_view", "_reshape", "_reshape_alias"], _sized_view)


def _sum_to_size(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``sum_to_size``: the logical dims beyond the size's summed, then each example summed to
    the size."""
    value, batched = unwrap(args[0], level)
    if not batched or kwargs:
        return loop_fallback(func, args, kwargs, level)
    size = _sizes(args[1:])
    extra = _value_ndim(value) - len(size)
    if extra > 0:
        value = value.sum(tuple(range(1, 1 + extra)))
    return wrap_batched(value.sum_to_size(value.shape[0], *size), level)


_register(["sum_to_size"], _sum_to_size)


def _sized_backward(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """Backward ops ``(grad, input_sizes, dim, ...)`` (``_select_backward``,
    ``_slice_backward``): the batch prepended to the sizes, the dim shifted."""
    grad, batched = unwrap(args[0], level)
    if not batched or kwargs or any(type(a) is BatchedTensor for a in args[1:]):
        return loop_fallback(func, args, kwargs, level)
    sizes = tuple(args[1])
    dim = _shift(args[2], len(sizes))
    return wrap_batched(call(func, grad, (grad.shape[0], *sizes), dim, *args[3:]), level)


_register(["_select_backward", "_slice_backward"], _sized_backward)


def _view_as(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    other = args[1] if len(args) > 1 else kwargs["other"]
    return wrap_batched(value.reshape(value.shape[0], *other.shape), level)


_register(["view_as", "reshape_as"], _view_as)


def _expand(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, batched = unwrap(args[0], level)
    if not batched:
        return loop_fallback(func, args, kwargs, level)
    if getattr(func, "__name__", "") == "expand_as":
        sizes = tuple(args[1].shape)
    else:
        sizes = _sizes(args[1:])
    value = _unsqueeze_after_batch(value, len(sizes) - _value_ndim(value))
    return wrap_batched(value.expand(value.shape[0], *sizes), level)


_register(["expand", "expand_as", "broadcast_to", "_expand"], _expand)


def _permute(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    dims = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs["dims"])
    ndim = _value_ndim(value)
    return wrap_batched(value.permute(0, *(_shift(d, ndim) for d in dims)), level)


_register(["permute", "_permute"], _permute)


def _transpose_2d(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    ndim = _value_ndim(value)
    if ndim < 2:
        return wrap_batched(value.view(value.shape), level)
    return wrap_batched(value.transpose(-1, -2), level)


def _full_transpose(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    ndim = _value_ndim(value)
    return wrap_batched(value.permute(0, *range(ndim, 0, -1)), level)


_register(["t", "t_"], _transpose_2d)
_register(["matrix_transpose", "adjoint"], _transpose_2d)
_register(["full_transpose"], _full_transpose)


def _repeat(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, _ = unwrap(args[0], level)
    repeats = _sizes(args[1:])
    value = _unsqueeze_after_batch(value, len(repeats) - _value_ndim(value))
    return wrap_batched(value.repeat(1, *repeats), level)


_register(["repeat"], _repeat)


def _materialize(x: Any, level: int) -> Tensor:
    """A tensor's value batched at ``level`` (an unbatched one expanded)."""
    value, batched = unwrap(x, level)
    if batched:
        return value
    size = batch_size(level)
    return x.unsqueeze(0).expand(size, *x.shape)


def _cat_stack(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    name = getattr(func, "__name__", "")
    if args and isinstance(args[0], Tensor):
        # (the op of a given number of tensors behind the public function: (t0, t1, ..., dim))
        tensors = [a for a in args if isinstance(a, Tensor)]
        rest = [a for a in args if not isinstance(a, Tensor)]
        dim = rest[0] if rest else kwargs.get("dim", 0)
    else:
        bound = _bind(func, args, kwargs)
        if bound is None:
            return loop_fallback(func, args, kwargs, level)
        tensors = bound.arguments[list(bound.signature.parameters)[0]]
        dim = bound.arguments.get("dim", 0)
    if dim is None:
        dim = 0
    values = [_materialize(t, level) for t in tensors]
    rank = max(_logical_ndim(t) for t in tensors) + (1 if name == "stack" else 0)
    if name == "cat":
        # (PyTorch's legacy rule: 1-d empty tensors are skipped by cat)
        kept = [
            v
            for v, t in zip(values, tensors, strict=True)
            if not (t.dim() == 1 and t.shape[0] == 0)
        ] or values
        return wrap_batched(call(shape_ops.cat, kept, _shift(dim, rank)), level)
    if name in ("hstack", "vstack", "dstack", "column_stack"):
        return loop_fallback(func, args, kwargs, level)
    return wrap_batched(call(shape_ops.stack, values, _shift(dim, rank)), level)


_register(["cat", "concat", "concatenate", "stack"], _cat_stack)


def _gather_like(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``gather``/``scatter``-like ops ``(self, dim, index, ...)``: every tensor batched, dim
    shifted."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    first = list(bound.signature.parameters)[0]
    rank = _logical_ndim(arguments[first])
    if getattr(func, "__name__", "").rstrip("_") in _INDEX_ALONG_DIM:
        return _index_along_dim(func, bound, arguments, first, rank, level)
    for name, value in list(arguments.items()):
        if isinstance(value, Tensor) and (name != first or True):
            if isinstance(value, Tensor) and value.dim() == 0 and name not in (first, "index"):
                arguments[name] = unwrap(value, level)[0] if unwrap(value, level)[1] else value
                continue
            arguments[name] = _materialize(value, level)
    arguments["dim"] = _shift(arguments["dim"], rank)
    if rank == 0 and not _is_inplace(func):
        # 0-d examples: each 0-d tensor (a (batch,) value) gets a length-1 dim to work on
        for name, value in list(arguments.items()):
            if isinstance(value, Tensor) and value.dim() == 1:
                arguments[name] = value.reshape(value.shape[0], 1)
        result = _call_bound(func, bound, arguments)
        return wrap_batched(result.reshape(result.shape[0]), level)
    if _is_inplace(func):
        if not unwrap(args[0], level)[1]:
            refuse_unbatched_self(func, args, kwargs, level)
        _call_bound(func, bound, arguments)
        return args[0]
    return wrap_batched(_call_bound(func, bound, arguments), level)


#: Ops whose ``index`` is one vector of positions along ``dim`` for the whole tensor: it stays
#: as it is when not batched (the others' index has the tensor's shape, batched with it).
_INDEX_ALONG_DIM = frozenset({"index_add", "index_copy", "index_fill"})


def _index_along_dim(
    func: Callable[..., Any],
    bound: inspect.BoundArguments,
    arguments: dict,
    first: str,
    rank: int,
    level: int,
) -> Any:
    """``index_add``/``index_copy``/``index_fill``: ``self`` and ``source`` batched (expanded if
    not), the index vector as it is, ``dim`` shifted past the batch; per example when the index
    is batched. A 0-d fill value batched per example also goes per example."""
    index = arguments.get("index")
    value = arguments.get("value")
    if (isinstance(index, Tensor) and unwrap(index, level)[1]) or (
        isinstance(value, Tensor) and unwrap(value, level)[1]
    ):
        return loop_fallback(func, bound.args, bound.kwargs, level)
    arguments[first] = _materialize(arguments[first], level)
    if isinstance(arguments.get("source"), Tensor):
        source = arguments["source"]
        if rank == 0:  # (a 0-d self: index positions along a dim of one)
            return loop_fallback(func, bound.args, bound.kwargs, level)
        arguments["source"] = _materialize(source, level)
    if rank == 0:
        return loop_fallback(func, bound.args, bound.kwargs, level)
    arguments["dim"] = _shift(arguments["dim"], rank)
    return wrap_batched(_call_bound(func, bound, arguments), level)

_register(
    [
        "gather",
        "scatter",
        "scatter_add",
        "scatter_reduce",
        "take_along_dim",
        "index_add",
        "index_copy",
        "index_fill",
    ],
    _gather_like,
)


# ----------------------------------------------------------------------------------------------
# Indexing


def _index_tuple(index: Any) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _plain_index(index: tuple) -> bool:
    """Whether an index needs no per-example handling: no batched tensors, and its tensor or
    list parts (advanced indexing) are next to each other (so their result dimensions stay in
    place after a leading ``slice(None)``)."""
    positions = []
    for k, item in enumerate(index):
        if type(item) is BatchedTensor:
            return False
        if isinstance(item, Tensor | list):
            positions.append(k)
    return not positions or positions == list(range(positions[0], positions[-1] + 1))


def _getitem(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    value, batched = unwrap(args[0], level)
    index = _index_tuple(args[1])
    if not batched or not _plain_index(index):
        return loop_fallback(func, args, kwargs, level)
    try:
        return wrap_batched(value[(slice(None), *index)], level)
    except IndexError:
        logical_zeros(args[0])[index]  # PyTorch's message, of the per-example dimensions
        raise


def _setitem(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    target, batched = unwrap(args[0], level)
    index = _index_tuple(args[1])
    source = args[2]
    source_value, source_batched = unwrap(source, level)
    if not batched:
        if source_batched:
            refuse_unbatched_self(func, args, kwargs, level)
        return loop_fallback(func, args, kwargs, level)
    if not _plain_index(index):
        return loop_fallback(func, args, kwargs, level)
    if source_batched:
        selected = logical_zeros(args[0])[index]
        source_value = _unsqueeze_after_batch(
            source_value, selected.dim() - _value_ndim(source_value)
        )
    target[(slice(None), *index)] = source_value
    return None


RULES_BY_FUNCTION[Tensor.__getitem__] = _getitem
RULES_BY_FUNCTION[Tensor.__setitem__] = _setitem
_register(["getitem"], _getitem)
_register(["setitem"], _setitem)


def _iterate(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    return iter(args[0].unbind(0))


RULES_BY_FUNCTION[Tensor.__iter__] = _iterate


# ----------------------------------------------------------------------------------------------
# Matrix products


def _matmul(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``matmul`` and its 2-d/1-d forms: vectors made matrices (logically), ranks aligned, one
    product over the values, the added dimensions taken off again."""
    name = getattr(func, "__name__", "")
    a, b = args[0], args[1]
    if kwargs or not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return loop_fallback(func, args, kwargs, level)
    if name in ("__rmatmul__", "_rmatmul"):
        a, b = b, a
    a_ndim, b_ndim = _logical_ndim(a), _logical_ndim(b)
    squeeze_a = a_ndim == 1
    squeeze_b = b_ndim == 1
    expected = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1)}.get(name)
    if expected is not None and (a_ndim, b_ndim) != expected:
        raise RuntimeError(  # (torch.func's message, which differs from the unbatched op's)
            f"Shape mismatch: Got incorrect dims for {name}(a, b). a has dim {a_ndim}and b has "
            f"dim {b_ndim}but expected them to have dim {expected[0]} and dim {expected[1]}"
        )
    if name == "dot" and (a_ndim != 1 or b_ndim != 1):
        raise RuntimeError("Got wrong shapes for dot")
    if a_ndim == 0 or b_ndim == 0:  # (matmul's own check, on the logical ranks)
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a_ndim}D and {b_ndim}D"
        )
    if name not in ("mm", "mv", "bmm", "dot"):
        _check_matmul_shapes(a, b, level)
    fast = _matmul_with_plain_matrix(name, a, b, level)
    if fast is not None:
        return fast
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(1)
    rank = max(_logical_ndim(a), _logical_ndim(b))
    a_value, a_batched = unwrap(a, level)
    b_value, b_batched = unwrap(b, level)
    if a_batched:
        a_value = _unsqueeze_after_batch(a_value, rank - _value_ndim(a_value))
    elif b_batched:
        a_value = a_value.reshape(*([1] * (rank - _logical_ndim(a))), *a.shape)
    if b_batched:
        b_value = _unsqueeze_after_batch(b_value, rank - _value_ndim(b_value))
    elif a_batched:
        b_value = b_value.reshape(*([1] * (rank - _logical_ndim(b))), *b.shape)
    result = wrap_batched(call(matmul, a_value, b_value), level)
    if squeeze_b:
        result = result.squeeze(-1)
    if squeeze_a:
        result = result.squeeze(-2 if not squeeze_b else -1)
    return result


def _check_matmul_shapes(a: Any, b: Any, level: int) -> None:
    """PyTorch's error for ``a @ b`` whose logical shapes do not multiply: its matmul under
    vmap is its decomposition (a folded matrix-vector product, ``mm`` with the batch as
    columns, ``bmm`` over the batch), so the error is that product's, of zeros here."""
    a_shape, b_shape = tuple(a._data.shape), tuple(b._data.shape)
    n = a_shape[-1]
    m = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    batch_error = None
    if len(a_shape) > 2 and len(b_shape) > 2:
        batch_error = broadcast_error(
            *(np.broadcast_to(np.empty((), bool), s[:-2]) for s in (a_shape, b_shape))
        )
    if n == m and batch_error is None:
        return
    if batch_error is not None and n == m:
        raise batch_error
    a_batched, b_batched = unwrap(a, level)[1], unwrap(b, level)[1]
    size = batch_size(level)
    rows = int(np.prod(a_shape[:-1], dtype=np.int64))
    with no_grad():
        if len(b_shape) == 1 and a_batched and not b_batched:
            matmul(zeros(size, *a_shape), zeros(m))  # (B*rows, n) @ (m,)
        elif len(b_shape) == 1 and b_batched and not a_batched:
            matmul(zeros(rows, n), zeros(m, size))  # the batch as columns
        elif len(b_shape) == 2 and a_batched and not b_batched:
            matmul(zeros(size * rows, n), zeros(*b_shape))  # the batch folded into the rows
        elif len(b_shape) == 1 and len(a_shape) > 2 or len(a_shape) > 2 and len(b_shape) == 2:
            matmul(zeros(size, rows, n), zeros(size, *b_shape[-2:] if len(b_shape) > 1 else (m, 1)))
    if batch_error is not None:
        raise batch_error


def _matmul_with_plain_matrix(name: str, a: Any, b: Any, level: int) -> Any:
    """One operand batched, the other an unbatched matrix (a layer's weight, a Jacobian's
    backward ``W^T g``): one plain product over the batched value, no ranks to align and no
    stacked product. None for the other cases."""
    if name in ("bmm", "dot"):
        return None
    a_value, a_batched = unwrap(a, level)
    b_value, b_batched = unwrap(b, level)
    a_ndim, b_ndim = _logical_ndim(a), _logical_ndim(b)
    if a_batched and not b_batched and b_ndim == 2 and a_ndim >= 1 and name != "mv":
        # (B, ..., n) @ (n, m): matmul broadcasts the matrix over every leading dimension
        return wrap_batched(call(matmul, a_value, b), level)
    if b_batched and not a_batched and a_ndim == 2 and b_ndim == 1:
        # A @ v for each v: (B, n) @ A^T
        return wrap_batched(call(matmul, b_value, a.transpose(0, 1)), level)
    return None


_register(["matmul", "mm", "bmm", "mv", "dot", "_matmul", "_rmatmul"], _matmul)
RULES_BY_FUNCTION[Tensor.__matmul__] = _matmul
if hasattr(Tensor, "__rmatmul__"):
    RULES_BY_FUNCTION[Tensor.__rmatmul__] = _matmul


def _linear(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    x = bound.arguments["input"]
    weight = bound.arguments["weight"]
    bias = bound.arguments.get("bias")
    weight_batched = type(weight) is BatchedTensor and weight._level == level
    bias_batched = type(bias) is BatchedTensor and bias._level == level
    if not weight_batched and not bias_batched:
        value, _ = unwrap(x, level)
        return wrap_batched(F.linear(value, weight, bias), level)
    # (logical ranks read directly: ``dim()`` of a batched tensor dispatches to a rule)
    weight_ndim = _logical_ndim(weight)
    if weight_ndim == 2 and _logical_ndim(x) == 1:
        out = call(matmul, weight, x)
    elif weight_ndim == 2:
        # (W @ x^T)^T rather than x @ W^T: the weight's gradient, g^T @ x, comes out in the
        # weight's own layout (no transposed copy of a per-example weight gradient)
        out = call(matmul, weight, x.transpose(-1, -2)).transpose(-1, -2)
    else:
        out = call(matmul, x, weight)
    if bias is not None:
        out = out + bias
    return out


_register(["linear"], _linear)


def _addmm_like(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``addmm``/``addmv``/``addbmm``/``baddbmm``/``addr``: ``beta * input + alpha * product``,
    written with batched ops."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    names = list(bound.signature.parameters)
    base, first, second = (arguments[n] for n in names[:3])
    beta = arguments.get("beta", 1)
    alpha = arguments.get("alpha", 1)
    name = getattr(func, "__name__", "")
    if name == "addr":
        product = first.unsqueeze(-1) * second.unsqueeze(-2)
    elif name == "addbmm":
        product = call(matmul, first, second).sum(0)
    else:
        product = call(matmul, first, second)
    if _is_inplace(func):
        return loop_fallback(func, args, kwargs, level)
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        return scaled + zeros_like(base)
    return (base if beta == 1 else base * beta) + scaled


_register(["addmm", "addmv", "addbmm", "baddbmm", "addr"], _addmm_like)


# ----------------------------------------------------------------------------------------------
# Convolution and pooling


def _fold_batch(value: Tensor, data_dims: int) -> tuple[Tensor, tuple, bool]:
    """A value whose logical shape is ``(N, C, *spatial)`` or ``(C, *spatial)`` as one
    ``(B*N, C, *spatial)`` input; the leading sizes to restore, and whether N was there."""
    logical = _value_ndim(value)
    if logical == data_dims + 1:  # unbatched logical input: the vmap batch is the op's batch
        return value, (value.shape[0],), False
    lead = tuple(value.shape[:2])
    return value.reshape(lead[0] * lead[1], *value.shape[2:]), lead, True


def _unfold_batch(result: Tensor, lead: tuple) -> Tensor:
    return result.reshape(*lead, *result.shape[1:])


def _conv(dims: int | None) -> Callable[..., Any]:
    """``conv1d``/``2d``/``3d`` (``dims`` spatial dimensions) and the ``convolution`` op
    (``dims`` None: from the weight; transposed convolutions run per example)."""

    def rule(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
        bound = _bind(func, args, kwargs)
        if bound is None or bound.arguments.get("transposed", False):
            return loop_fallback(func, args, kwargs, level)
        arguments = dict(bound.arguments)
        x, weight = arguments["input"], arguments["weight"]
        data_dims = weight.dim() - 2 if dims is None else dims
        bias = arguments.get("bias")
        x_value, x_batched = unwrap(x, level)
        weight_value, weight_batched = unwrap(weight, level)
        bias_value, bias_batched = unwrap(bias, level)
        if not weight_batched and not bias_batched:
            folded, lead, _ = _fold_batch(x_value, data_dims)
            arguments["input"] = folded
            return wrap_batched(_unfold_batch(_call_bound(func, bound, arguments), lead), level)
        # Batched weights: the batch goes into the channels, one group per example.
        size = batch_size(level)
        groups = arguments.get("groups", 1)
        if not isinstance(groups, int):
            return loop_fallback(func, args, kwargs, level)
        x_value = _materialize(x, level)
        unbatched_input = _value_ndim(x_value) == data_dims + 1
        if unbatched_input:
            x_value = x_value.unsqueeze(1)
        n = x_value.shape[1]
        channels = x_value.shape[2]
        spatial = tuple(x_value.shape[3:])
        x_value = x_value.transpose(0, 1).reshape(n, size * channels, *spatial)
        weight_value = _materialize(weight, level)
        out_channels = weight_value.shape[1]
        arguments["input"] = x_value
        arguments["weight"] = weight_value.reshape(size * out_channels, *weight_value.shape[2:])
        if bias is not None:
            arguments["bias"] = _materialize(bias, level).reshape(size * out_channels)
        arguments["groups"] = groups * size
        out = _call_bound(func, bound, arguments)
        out = out.reshape(n, size, out_channels, *out.shape[2:]).transpose(0, 1)
        if unbatched_input:
            out = out.squeeze(1)
        return wrap_batched(out, level)

    return rule


_register(["conv1d"], _conv(1))
_register(["conv2d"], _conv(2))
_register(["conv3d"], _conv(3))
_register(["convolution"], _conv(None))


def _conv_backward_input(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``convolution_backward_input(grad, input, weight, ...)`` (a convolution's backward
    formula, batched when a vmap runs cotangents through it; ``input`` lends its shape): with
    one weight the batch folds into N; with batched weights it goes into the channels, one
    group per example."""
    bound = _bind(func, args, kwargs)
    if bound is None or not isinstance(bound.arguments.get("groups"), int):
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    grad, weight = arguments["grad"], arguments["weight"]
    weight_value, weight_batched = unwrap(weight, level)
    size = batch_size(level)
    input_value = _materialize(arguments["input"], level)  # (B, N, C, *spatial)
    if not weight_batched:
        grad_value, _ = unwrap(grad, level)
        lead = tuple(grad_value.shape[:2])
        arguments["grad"] = grad_value.reshape(lead[0] * lead[1], *grad_value.shape[2:])
        arguments["input"] = input_value.reshape(lead[0] * lead[1], *input_value.shape[2:])
        return wrap_batched(_unfold_batch(_call_bound(func, bound, arguments), lead), level)
    grad_value = _materialize(grad, level)  # (B, N, O, *s)
    n, out_channels = grad_value.shape[1], grad_value.shape[2]
    arguments["grad"] = grad_value.transpose(0, 1).reshape(
        n, size * out_channels, *grad_value.shape[3:]
    )
    arguments["input"] = input_value.transpose(0, 1).reshape(
        n, size * input_value.shape[2], *input_value.shape[3:]
    )
    arguments["weight"] = weight_value.reshape(-1, *weight_value.shape[2:])
    arguments["groups"] = arguments["groups"] * size
    out = _call_bound(func, bound, arguments)  # (N, B * C, *spatial)
    channels = out.shape[1] // size
    out = out.reshape(n, size, channels, *out.shape[2:]).transpose(0, 1)
    return wrap_batched(out, level)


def _conv_backward_weight(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``convolution_backward_weight(input, grad, weight_size, ...)``, batched: the batch goes
    into the output channels (one input: its weight gradient of every example at once), or
    into the channels of both, one group per example."""
    bound = _bind(func, args, kwargs)
    groups = bound.arguments.get("groups") if bound is not None else None
    if bound is None or not isinstance(groups, int):
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    x, grad = arguments["input"], arguments["grad"]
    weight_size = tuple(arguments["weight_size"])
    size = batch_size(level)
    x_value, x_batched = unwrap(x, level)
    if not x_batched and groups == 1:
        grad_value = _materialize(grad, level)  # (B, N, O, *s)
        n = grad_value.shape[1]
        arguments["grad"] = grad_value.transpose(0, 1).reshape(n, -1, *grad_value.shape[3:])
        arguments["weight_size"] = (size * weight_size[0], *weight_size[1:])
        out = _call_bound(func, bound, arguments)
        return wrap_batched(out.reshape(size, *weight_size), level)
    x_value = _materialize(x, level)  # (B, N, C, *in)
    grad_value = _materialize(grad, level)
    n = x_value.shape[1]
    arguments["input"] = x_value.transpose(0, 1).reshape(n, -1, *x_value.shape[3:])
    arguments["grad"] = grad_value.transpose(0, 1).reshape(n, -1, *grad_value.shape[3:])
    arguments["weight_size"] = (size * weight_size[0], *weight_size[1:])
    arguments["groups"] = groups * size
    out = _call_bound(func, bound, arguments)
    return wrap_batched(out.reshape(size, *weight_size), level)


_register(
    ["convolution_backward_input", "convolution_backward_input_transposed"], _conv_backward_input
)
_register(["convolution_backward_weight"], _conv_backward_weight)


def _pool(data_dims: int) -> Callable[..., Any]:
    """Pooling and other ops acting on ``(N, C, *spatial)`` inputs with unbatched parameters:
    the batch folded into N."""

    def rule(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
        x = args[0]
        others = [*args[1:], *kwargs.values()]
        if any(type(o) is BatchedTensor for o in others):
            return loop_fallback(func, args, kwargs, level)
        value, batched = unwrap(x, level)
        if not batched:
            return loop_fallback(func, args, kwargs, level)
        folded, lead, _ = _fold_batch(value, data_dims)
        result = call(func, folded, *args[1:], **kwargs)
        if isinstance(result, tuple):
            return type(result)(wrap_batched(_unfold_batch(r, lead), level) for r in result)
        return wrap_batched(_unfold_batch(result, lead), level)

    return rule


_register(
    [
        "max_pool1d",
        "avg_pool1d",
        "adaptive_avg_pool1d",
        "adaptive_max_pool1d",
        "max_pool1d_with_indices",
    ],
    _pool(1),
)
_register(
    [
        "max_pool2d",
        "avg_pool2d",
        "adaptive_avg_pool2d",
        "adaptive_max_pool2d",
        "max_pool2d_with_indices",
        "lp_pool2d",
        "pixel_shuffle",
        "pixel_unshuffle",
    ],
    _pool(2),
)
_register(["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"], _pool(3))


# ----------------------------------------------------------------------------------------------
# Losses


def _reduce(per_element: Any, reduction: str) -> Any:
    if reduction == "none":
        return per_element
    if reduction == "sum":
        return per_element.sum()
    return per_element.mean()


def _pointwise_loss(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """Losses that are a mean or sum of element-wise terms: computed with reduction='none' (an
    element-wise op, batched), then reduced per example."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    if arguments.get("size_average") is not None or arguments.get("reduce") is not None:
        return loop_fallback(func, args, kwargs, level)
    reduction = arguments.get("reduction", "mean")
    if reduction not in ("none", "mean", "sum", "batchmean"):
        return loop_fallback(func, args, kwargs, level)
    arguments["reduction"] = "none"
    new_args, new_kwargs = _split_bound(func, bound, arguments)
    # (the values at one shape: the losses compare their input's and target's sizes, which a
    # batched operand beside an unbatched one would fail, or warn about, with broadcast shapes)
    aligned_args, aligned_kwargs, _ = _align(new_args, new_kwargs, level)
    per_element = wrap_batched(
        call(
            func,
            *_expanded(aligned_args),
            **dict(zip(aligned_kwargs, _expanded(tuple(aligned_kwargs.values())), strict=True)),
        ),
        level,
    )
    if reduction == "batchmean":
        count = per_element.shape[0] if per_element.dim() else 1
        return per_element.sum() / count
    return _reduce(per_element, reduction)


def _expanded(values: tuple) -> tuple:
    """The tensors of ``values`` expanded to their common (broadcast) shape."""
    shapes = [tuple(v.shape) for v in values if isinstance(v, Tensor)]
    common = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    return tuple(
        v.expand(common) if isinstance(v, Tensor) and tuple(v.shape) != common else v
        for v in values
    )


def _bce_backward(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``binary_cross_entropy_backward(grad, self, target, weight, reduction)`` (the loss's
    backward, under vmap in a Hessian or per-example gradients): element-wise, but 'mean'
    divides by the number of elements of one example, not of the batch: computed as 'sum'
    then divided."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    reduction = arguments["reduction"]
    if reduction not in ("none", "mean", "sum"):
        return loop_fallback(func, args, kwargs, level)
    arguments["reduction"] = "sum" if reduction == "mean" else reduction
    new_args, new_kwargs = _split_bound(func, bound, arguments)
    result = elementwise(func, new_args, new_kwargs, level)
    if reduction == "mean":
        count = 1
        for size in arguments["self"]._data.shape:  # (the logical shape)
            count *= size
        result = result / count
    return result


def _split_bound(
    func: Callable[..., Any], bound: inspect.BoundArguments, arguments: dict
) -> tuple[tuple, dict]:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for name, param in (_signature(func) or bound.signature).parameters.items():
        if name not in arguments:
            positional = False
            continue
        if positional and param.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            args.append(arguments[name])
        else:
            kwargs[name] = arguments[name]
    return tuple(args), kwargs


_register(
    "mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits soft_margin_loss kl_div poisson_nll_loss".split(),
    _pointwise_loss,
)
_register(["binary_cross_entropy_backward"], _bce_backward)


def _class_loss(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``nll_loss``/``cross_entropy`` of ``(N, C)`` or ``(C,)`` inputs: the batch folded into N
    with reduction='none', then reduced per example (mean: over the targets that are not
    ``ignore_index``)."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    x, target = arguments["input"], arguments["target"]
    reduction = arguments.get("reduction", "mean")
    simple = (
        arguments.get("weight") is None
        and arguments.get("size_average") is None
        and arguments.get("reduce") is None
        and arguments.get("label_smoothing", 0.0) == 0.0
        and reduction in ("none", "mean", "sum")
        and x.dim() in (1, 2)
        and target.dim() == x.dim() - 1
        and not target.is_floating_point()
    )
    if not simple:
        return loop_fallback(func, args, kwargs, level)
    x_value = _materialize(x, level)
    t_value = _materialize(target, level)
    size = x_value.shape[0]
    classes = x_value.shape[-1]
    arguments["input"] = x_value.reshape(-1, classes)
    arguments["target"] = t_value.reshape(-1)
    arguments["reduction"] = "none"
    losses = _call_bound(func, bound, arguments).reshape(t_value.shape)
    per_example = wrap_batched(losses, level)
    if reduction == "none":
        return per_example
    if reduction == "sum":
        return per_example.sum()
    ignore = arguments.get("ignore_index", -100)
    counted = wrap_batched((t_value != ignore).to(losses.dtype).reshape(size, -1), level)
    return per_example.sum() / counted.sum()


_register(["nll_loss", "cross_entropy"], _class_loss)


# ----------------------------------------------------------------------------------------------
# Normalization, embedding, einsum


def _layer_norm(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``layer_norm`` normalizes trailing dims, which the batch does not touch; batched affine
    parameters are applied afterwards by the element-wise rules."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    value, batched = unwrap(arguments["input"], level)
    weight, bias = arguments.get("weight"), arguments.get("bias")
    affine_batched = any(type(p) is BatchedTensor for p in (weight, bias))
    if not batched:
        value = _materialize(arguments["input"], level)
    arguments["input"] = value
    if affine_batched:
        arguments["weight"] = None
        arguments["bias"] = None
    out = wrap_batched(_call_bound(func, bound, arguments), level)
    if affine_batched:
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
    return out


_register(["layer_norm"], _layer_norm)

BATCH_NORM_MESSAGE = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on how "
    "to patch your module to work with vmap"
)
_BATCH_NORM_TENSORS = ("running_mean", "running_var", "weight", "bias")


def _batch_norm(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``batch_norm`` with statistics of each example: the batch goes into the channels,
    ``(B, N, C, ...)`` as ``(N, B * C, ...)``, so every example's channels are normalised over
    its own N and spatial positions (its own running statistics, updated in place when
    batched and contiguous); unbatched parameters are repeated per example. Running statistics
    that are not batched cannot take a batched input's update in training: PyTorch's error."""
    bound = _bind(func, args, kwargs)
    if bound is None or _logical_ndim(bound.arguments.get("input")) < 2:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    x = arguments["input"]
    tensors = {name: arguments.get(name) for name in _BATCH_NORM_TENSORS}
    for t in (x, *tensors.values()):
        if type(t) is BatchedTensor and t._level != level:
            return loop_fallback(func, args, kwargs, level)  # (batched at another level too)
    x_batched = unwrap(x, level)[1]
    stats = [t for t in (tensors["running_mean"], tensors["running_var"]) if t is not None]
    if arguments.get("training") and x_batched and not all(unwrap(t, level)[1] for t in stats):
        raise RuntimeError(BATCH_NORM_MESSAGE)
    size = batch_size(level)
    x_value = _materialize(x, level)
    n, channels = x_value.shape[1], x_value.shape[2]
    spatial = tuple(x_value.shape[3:])
    arguments["input"] = x_value.transpose(0, 1).reshape(n, size * channels, *spatial)
    for name, t in tensors.items():
        if t is None:
            continue
        value, batched = unwrap(t, level)
        # (batched running statistics are updated through the folded view when they are
        # contiguous; otherwise the update goes to a copy and is lost, as in PyTorch)
        arguments[name] = value.reshape(size * channels) if batched else t.repeat(size)
    out = _call_bound(func, bound, arguments)
    out = out.reshape(n, size, channels, *spatial).transpose(0, 1)
    return wrap_batched(out, level)


_register(["batch_norm"], _batch_norm)


def _embedding(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``embedding``: batched indices look up an unbatched table in one call; a batched table
    (per-example weights) is gathered row by row along each example's indices."""
    bound = _bind(func, args, kwargs)
    if bound is None:
        return loop_fallback(func, args, kwargs, level)
    arguments = dict(bound.arguments)
    indices, weight = arguments["input"], arguments["weight"]
    weight_value, weight_batched = unwrap(weight, level)
    if not weight_batched:
        arguments["input"] = unwrap(indices, level)[0]
        return wrap_batched(_call_bound(func, bound, arguments), level)
    special = (
        arguments.get("padding_idx") is not None
        or arguments.get("max_norm") is not None
        or arguments.get("scale_grad_by_freq")
        or arguments.get("sparse")
    )
    if special:
        return loop_fallback(func, args, kwargs, level)
    index_value = _materialize(indices, level)
    size, dim = weight_value.shape[0], weight_value.shape[-1]
    flat = index_value.reshape(size, -1, 1).expand(size, -1, dim)
    rows = weight_value.gather(1, flat)
    return wrap_batched(rows.reshape(*index_value.shape, dim), level)


_register(["embedding"], _embedding)

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum(func: Callable[..., Any], args: tuple, kwargs: dict, level: int) -> Any:
    """``einsum``: a fresh letter for the batch, prepended to each batched operand's subscripts
    and to the output's."""
    if kwargs or not args or not isinstance(args[0], str):
        return loop_fallback(func, args, kwargs, level)
    operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    equation = args[0].replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        return loop_fallback(func, args, kwargs, level)
    if not arrow:  # implicit output: the letters used once, sorted (after the ellipsis)
        letters = [c for c in inputs if c.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    free = [c for c in _LETTERS if c not in equation]
    if not free:
        return loop_fallback(func, args, kwargs, level)
    batch = free[0]
    values = []
    new_terms = []
    for term, operand in zip(terms, operands, strict=True):
        value, batched = unwrap(operand, level)
        values.append(value)
        new_terms.append(batch + term if batched else term)
    new_equation = ",".join(new_terms) + "->" + batch + output
    return wrap_batched(call(func, new_equation, *values), level)


_register(["einsum"], _einsum)
