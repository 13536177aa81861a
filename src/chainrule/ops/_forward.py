"""Forward-mode AD through the op table: an allowlist of JVP rules.

An op carries tangents only when it has a JVP rule (``OpDef.jvp``, set by :func:`allow_jvp`
in ``ops/_jvp_rules.py``, each checked against PyTorch in tests/test_forward_ad.py). Any other
differentiable op given a tensor with a tangent raises PyTorch's NotImplementedError instead of
dropping the tangent: forward mode never gives a silently wrong tangent.

The dispatch calls :func:`propagate` after the forward, only while a dual level is entered
(``DUAL[0]``). A rule runs on Tensors with tangents suspended, so its ops record autograd
history as any others (reverse mode through tangents) and make no tangents of their own.

Rules (``rule(op, args, tangents, result) -> tangent``; ``tangents``: one per differentiable
input, None where it has none):

* :func:`linear_rule`: the op applied to the tangent (views, reshapes, sums, copies ...: ops
  linear in their one differentiable input), so a view's tangent is the view of the tangent;
* :func:`derived_rule`: for an element-wise op, the sum over inputs with a tangent of the op's
  derivative formula applied to that tangent (the JVP of an element-wise op is its derivative
  times the tangent; valid for formulas linear in ``grad``, which ``allow_jvp`` callers check);
* :func:`bilinear_rule`: ``op(t_a, b) + op(a, t_b)`` (matrix products);
* or an explicit function (division, as PyTorch's formula).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.forward_grad import (
    _TANGENTS,
    NOT_IMPLEMENTED_MESSAGE,
    VIEW_TANGENT,
    get_tangent,
    set_output_tangents,
    set_tangent,
    suspended,
)
from ..autograd.grad_mode import GRAD, mode_get

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = [
    "propagate",
    "allow_jvp",
    "allow_jvp_nodes",
    "jvp_rule",
    "linear_rule",
    "derived_rule",
    "bilinear_rule",
    "joint_linear_rule",
    "JvpRule",
    "refuse",
    "tangent_to_write",
    "write_tangent",
    "recorded_zero",
    "MATERIALIZED_ZEROS",
]

JvpRule = Callable[["OpDef", tuple, list[Any], Any], Any]

#: Rules by PyTorch's node name (``allow_jvp_nodes``): they also reach the ops declared on first
#: use (``cat``/``stack`` of n tensors) and the in-place copies of an op (``recorded_as``).
JVP_BY_NODE: dict[str, JvpRule] = {}


def jvp_rule(op: OpDef) -> JvpRule | None:
    """The JVP rule of ``op`` (its own, else its node name's), or None: it refuses tangents."""
    return op.jvp if op.jvp is not None else JVP_BY_NODE.get(op.node_name)


def _tangents_of(op: OpDef, args: tuple) -> tuple[list[Any], bool]:
    """The tangents of the differentiable inputs, and whether any other tensor argument
    (indices, masks, tensor lists) has one."""
    tangents = [get_tangent(args[p]) if isinstance(args[p], Tensor) else None for p in op.input_pos]
    other = False
    for p in op.tensor_param_pos:
        x = args[p]
        if isinstance(x, Tensor):
            other = other or get_tangent(x) is not None
        elif type(x) is tuple or type(x) is list:
            other = other or any(isinstance(e, Tensor) and get_tangent(e) is not None for e in x)
    return tangents, other


#: PyTorch's name for ops it records under another node than chainrule's op name suggests,
#: where PyTorch itself refuses forward mode (its message names them).
_PYTORCH_NAMES = {
    "CholeskyBackward0": "cholesky",
    "OrmqrBackward0": "ormqr",
    "IgammaBackward0": "igamma",
    "IgammacBackward0": "igammac",
}


def refuse(name: str, node_name: str = "") -> NotImplementedError:
    """PyTorch's error for forward AD through ``name``, which has no JVP rule."""
    name = _PYTORCH_NAMES.get(node_name, name)
    return NotImplementedError(NOT_IMPLEMENTED_MESSAGE.format(name=name))


def propagate(op: OpDef, args: tuple, result: Any) -> None:
    """Give ``result`` (a Tensor, or a tuple of them) the tangent of ``op`` applied to ``args``
    when an input has one (see the module docstring); raise when the op has no rule."""
    tangents, other = _tangents_of(op, args)
    if not other and all(t is None for t in tangents):
        return
    if not op.differentiable:
        return  # (no derivative: comparisons, argmax ... PyTorch's results have no tangent)
    several = type(result) is tuple
    outputs = result if several else (result,)
    if not any(o._data.dtype.kind in "fcV" for o in outputs):
        return  # (an integral or bool result has no tangent)
    rule = jvp_rule(op)
    if rule is None or other:
        raise refuse(op.name, op.node_name)
    if _complex_involved(op, args, tangents, outputs):
        rule = _complex_rule(op, rule)
    with suspended():
        if mode_get() & GRAD and (
            any(isinstance(a, Tensor) and a._requires_grad for a in args)
            or any(t is not None and t._requires_grad for t in tangents)
        ):
            # The rule's ops are recorded: they see the primals as views without tangents, as
            # PyTorch's formulas see ``self_p``, so that a backward pass through the tangent's
            # graph in the dual level (forward-over-reverse) finds no tangent there either.
            args = tuple(_primal_view(a) for a in args)
            result = tuple(_primal_view(o) for o in outputs) if several else _primal_view(result)
        tangent = rule(op, args, tangents, result)
        # (a multi-output op's rule gives one tangent per output, None for its indices)
        found = tuple(tangent) if several else (tangent,)
        laid = [
            None if t is None or o._data.dtype.kind not in "fcV" else _laid_out_like(t, o)
            for t, o in zip(found, outputs, strict=False)
        ]
    for o, t in zip(outputs, laid, strict=False):
        if t is not None:
            set_tangent(o, t)
    node = outputs[0]._grad_node
    if node is not None:
        # (a node re-wraps its saved outputs in a backward pass: their tangents, for forward
        # mode through that pass, forward-over-reverse)
        set_output_tangents(node, tuple(laid))


def _primal_view(x: Any) -> Any:
    """A tensor argument as a view without tangent (a tensor list element by element)."""
    if type(x) is tuple or type(x) is list:
        return type(x)(_primal_view(e) for e in x)
    if not isinstance(x, Tensor) or not _TANGENTS:
        return x
    from .indexing import _alias  # (ops layer: bound at call time, after ops/__init__)

    view = _alias(x)
    set_tangent(view, None)  # (a view of a tensor with a tangent, without one itself)
    return view


def _complex_involved(op: OpDef, args: tuple, tangents: list[Any], outputs: tuple) -> bool:
    """Whether a complex primal, tangent or result takes part in ``op``'s JVP."""
    if any(o._data.dtype.kind == "c" for o in outputs):
        return True
    for p, t in zip(op.input_pos, tangents, strict=True):
        if t is not None and (t._data.dtype.kind == "c" or args[p]._data.dtype.kind == "c"):
            return True
    return False


def _complex_rule(op: OpDef, rule: JvpRule) -> JvpRule:
    """``rule`` where complex numbers take part, or PyTorch's refusal where it is not known to
    hold for them. The rules that apply the op itself to tangents hold for every op linear
    (bilinear) over the reals (``conj``, ``real``, ``view_as_real``, ``vdot`` too); the
    derivative formulas, written for backward (``grad * conj(f'(z))``), give the JVP as
    ``conj(formula(conj(t)))`` (``f'(z) t``; its real part for a real result) for holomorphic
    ops and for complex-to-real ones (``abs``, ``angle``); ops of neither kind and explicit
    rules refuse complex tangents until checked against PyTorch (an explicit rule that holds
    for them is marked ``holds_for_complex = True``)."""
    if rule in (linear_rule, bilinear_rule, joint_linear_rule):
        return rule
    if op.name == "mul":  # (bilinear: a real factor of a complex product too)
        return bilinear_rule
    if getattr(rule, "holds_for_complex", False):
        return rule
    # (the backward ops conjugate a primal: ``tanh_backward(g, y) = g conj(1 - y^2)``)
    backward_op = op.name.endswith("_backward")
    if rule is derived_rule and op.name not in NOT_HOLOMORPHIC and not backward_op:
        return _conjugated_derived_rule
    raise refuse(op.name, op.node_name)


#: Element-wise ops from complex to complex that are not holomorphic: their derivative formulas
#: do not give the JVP by conjugation.
NOT_HOLOMORPHIC = frozenset({"sgn", "sign", "conj", "_conj", "conj_physical", "_conj_physical"})


def _conjugated_derived_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """:func:`derived_rule` with complex numbers (see :func:`_complex_rule`): each term is
    ``conj(formula(conj(t)))``, its real part for a real result; a real input of a complex
    result (``complex``, ``polar``) is refused, its formula keeps only the real part."""
    if result._data.dtype.kind == "c" and any(
        t is not None and args[p]._data.dtype.kind != "c"
        for p, t in zip(op.input_pos, tangents, strict=True)
    ):
        raise refuse(op.name, op.node_name)
    conjugated = [None if t is None else t.conj_physical() for t in tangents]
    total = derived_rule(op, args, conjugated, result).conj_physical()
    if result._data.dtype.kind != "c" and total._data.dtype.kind == "c":
        total = total.real.contiguous()
    return total


def _laid_out_like(tangent: Tensor, primal: Tensor) -> Tensor:
    """``tangent`` at ``primal``'s shape, not wider than its dtype (a rule's arithmetic with
    0-d or Python numbers may widen a half one; PyTorch's norms with ``dtype=`` keep the
    input's narrower one), in its layout when
    ``primal`` is contiguous (PyTorch keeps a tangent's layout the primal's)."""
    if tangent._data.dtype.itemsize > primal._data.dtype.itemsize:
        tangent = tangent.to(primal.dtype)
    shape = primal._data.shape
    if tangent._data.shape != shape:
        tangent = tangent.expand(shape).contiguous()
    if tangent._data.strides != primal._data.strides and primal.is_contiguous():
        tangent = tangent.contiguous()
    return tangent


def allow_jvp(rule: JvpRule, *publics: Any) -> None:
    """Put the ops of ``publics`` (their public functions) on the forward-mode allowlist with
    ``rule``."""
    for public in publics:
        public.op.jvp = rule


def allow_jvp_nodes(rule: JvpRule, *node_names: str) -> None:
    """Put every op recorded as one of ``node_names`` (PyTorch's node names) on the forward-mode
    allowlist with ``rule``."""
    for name in node_names:
        if name in JVP_BY_NODE:
            raise ValueError(f"JVP rule for {name} declared twice")
        JVP_BY_NODE[name] = rule


def zeros_for(x: Any) -> Any:
    """A zero tangent for input ``x`` (a tensor of its shape and dtype, or the number 0)."""
    from .creation import zeros_like  # (ops layer: bound at call time, after ops/__init__)

    return zeros_like(x) if isinstance(x, Tensor) else 0


#: Ops whose PyTorch formulas compute a missing tangent's term with a materialised zero tensor
#: (their matrix-product kernels do not skip zero tensors): ``x @ d`` with an infinite entry in
#: ``d``'s primal has NaN in its tangent (``0 * inf``), as in PyTorch. The element-wise and
#: outer products skip them (their term adds nothing).
MATERIALIZED_ZEROS = frozenset({"MmBackward0", "BmmBackward0", "MvBackward0"})


def recorded_zero(
    like: Tensor, terms: list[Any], anchors: list[Any], negative: bool = True
) -> Tensor | None:
    """The terms missing tangents add in PyTorch's formulas, recorded: a formula of several
    tangents takes a missing one as a zero tensor (``_efficientzerotensor``) and computes its
    term (``other_t * self_p``), so when that term depends on a primal that requires grad the
    tangent records its history (a tangent of ``d * 2`` or ``x @ d`` has a ``grad_fn``),
    though the term adds nothing. ``terms``: those terms computed with zero tangents (only
    whether one requires grad is used). None when none does; else zeros of ``like``'s shape
    (-0.0 to be added, +0.0 to be subtracted: no value changes, the sign of zero included)
    read from ``anchors`` (the op's inputs): a backward pass gives those that require grad a
    zero gradient straight, as PyTorch's zero tensors do (through the terms' own graph a zero
    could meet ``0 / 0``)."""
    if not mode_get() & GRAD or not any(
        isinstance(r, Tensor) and r._requires_grad for r in terms
    ):
        return None
    primals = [a for a in anchors if isinstance(a, Tensor) and a._requires_grad]
    if not primals:
        return None
    from .pointwise import where  # (ops layer: bound at call time)

    total = None
    for primal in primals:
        part = primal.sum()
        if part._data.dtype.kind == "c" and like._data.dtype.kind != "c":
            part = part.real
        total = part if total is None else total + part
    never = wrap(np.zeros(like._data.shape, dtype=np.bool_))
    zero = where(never, total, -0.0 if negative else 0.0)
    return zero if zero._data.dtype == like._data.dtype else zero.to(like.dtype)


def _inputs(op: OpDef, args: tuple) -> list[Any]:
    """The op's differentiable inputs (what its zero terms give zero gradients)."""
    return [args[p] for p in op.input_pos]


def _zero_tangent(x: Any, result: Any) -> Any:
    """The zero tangent PyTorch gives an input without one: zeros of its shape (a number, a
    wrapped scalar there: a 0-d tensor of the result's dtype)."""
    if isinstance(x, Tensor):
        return zeros_for(x)
    from .creation import zeros

    return zeros((), dtype=result.dtype)


def _term(fn: Callable[..., Any], *args: Any) -> Any:
    """A missing tangent's term (only its history is used: a formula that cannot take a zero
    tangent gives none)."""
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001
        return None


def _with_zero(zero: Tensor | None, total: Any) -> Any:
    return total if zero is None or total is None else zero + total


def joint_linear_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The op applied to all its inputs' tangents at once (zeros for the missing ones): ops
    linear in all their differentiable inputs together, with no constant term (cat, stack,
    where, scatter, index_put ...)."""
    call = list(args)
    for p, t in zip(op.input_pos, tangents, strict=True):
        call[p] = zeros_for(args[p]) if t is None else t
    return op.publics[False](*call)


def linear_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """The op applied to the tangent of its one differentiable input (a linear op; other
    inputs only lend their shape, as ``self`` of the pooling adjoints: zero derivative)."""
    if tangents[0] is None:
        return zeros_for(result)
    p = op.input_pos[0]
    call = list(args)
    call[p] = tangents[0]
    if op.view and not tangents[0].is_contiguous():
        # (a reshaping view the primal's layout allows: the tangent, laid out otherwise, e.g.
        # batched along another dimension under vmap, may not take it without a copy)
        try:
            return op.publics[False](*call)
        except ValueError:
            call[p] = tangents[0].contiguous()
    return op.publics[False](*call)


def bilinear_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """``op(t_a, b) + op(a, t_b)`` for an op bilinear in its two inputs (multilinear: one term
    per input with a tangent, the others at their primals)."""
    public = op.publics[False]
    total = None
    reads: list[Any] = []
    materialized = op.node_name in MATERIALIZED_ZEROS
    for i, t in enumerate(tangents):
        if t is None and materialized and args[op.input_pos[i]] is not None:
            t = zeros_for(args[op.input_pos[i]])
        if t is not None:
            call = list(args)
            call[op.input_pos[i]] = t
            term = public(*call)
            total = term if total is None else total + term
        elif args[op.input_pos[i]] is not None and mode_get() & GRAD:
            # (the term of a missing tangent, as PyTorch computes it: with a zero tangent)
            call = list(args)
            call[op.input_pos[i]] = _zero_tangent(args[op.input_pos[i]], result)
            reads.append(_term(public, *call))
    if total is None or not reads:
        return total
    return _with_zero(recorded_zero(total, reads, _inputs(op, args)), total)


def derived_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """The derivative formulas applied to the tangents, summed (an element-wise op)."""
    from ._opnode import TENSOR_NS  # (bound when ops/__init__ built the namespaces)

    env: list[Any] = list(args)
    env.append(result)
    for p in op.input_pos:
        x = args[p]
        env.append(tuple(x._data.shape) if isinstance(x, Tensor) else ())
    total = None
    reads: list[Any] = []
    for i, t in enumerate(tangents):
        derivative = op.derivatives[i]
        if t is None:
            if derivative is not None and args[op.input_pos[i]] is not None and mode_get() & GRAD:
                # (the term of a missing tangent, as PyTorch computes it: with a zero tangent)
                zero = _zero_tangent(args[op.input_pos[i]], result)
                read = (env[k] for k in derivative.arg_index)
                reads.append(_term(derivative.fn, TENSOR_NS, zero, *read))
            continue
        if derivative is None:
            raise refuse(op.name)
        term = derivative.fn(TENSOR_NS, t, *(env[k] for k in derivative.arg_index))
        if term._data.shape != result._data.shape:
            term = term.expand(result._data.shape)
        total = term if total is None else total + term
    if total is None or not reads:
        return total
    return _with_zero(recorded_zero(total, reads, _inputs(op, args)), total)


# ----------------------------------------------------------------------------------------------
# In-place writes: a tangent follows the view/base relation


def _view_of_base_tangent(x: Tensor) -> Tensor | None:
    """The tangent of view ``x`` as a view of its base's tangent (same bytes offsets and
    strides), when the base has a tangent laid out as the base; else None."""
    base = x._base
    entry = _TANGENTS.get(id(base))
    if entry is None or entry[0]() is not base:
        return None
    base_tangent = entry[1]._data
    data, base_data = x._data, base._data
    if base_tangent.dtype != base_data.dtype or base_tangent.strides != base_data.strides:
        return None
    offset = data.__array_interface__["data"][0] - base_data.__array_interface__["data"][0]
    return wrap(_strided_view(base_tangent, offset, data.shape, data.strides))


class _Strided:
    """An ``__array_interface__`` onto another array's memory (NumPy builds the view)."""

    def __init__(self, owner: np.ndarray, interface: dict[str, Any]) -> None:
        self.owner = owner  # (keeps the memory alive)
        self.__array_interface__ = interface


def _strided_view(
    array: np.ndarray, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]
) -> np.ndarray:
    """The view of ``array``'s memory at ``offset`` bytes from its start, with ``shape`` and
    ``strides`` (bytes), writable when ``array`` is."""
    interface = dict(array.__array_interface__)
    interface["data"] = (interface["data"][0] + offset, not array.flags.writeable)
    interface["shape"] = tuple(shape)
    interface["strides"] = tuple(strides)
    return np.asarray(_Strided(array, interface))


def tangent_to_write(x: Tensor) -> Tensor:
    """The tangent an in-place write into ``x`` updates: its own (a view of its base's when
    ``x`` is a view), created as zeros when it has none, on the base first for a view, so that
    the base and its other views see what is written (PyTorch's view/base relation)."""
    tangent = get_tangent(x)
    if tangent is not None and tangent._data.flags.writeable:
        return tangent
    base = x._base
    if tangent is None and base is not None and get_tangent(base) is None:
        set_tangent(base, wrap(np.zeros_like(base._data)))
        tangent = get_tangent(x)
        if tangent is not None:
            return tangent
    fresh = wrap(np.zeros_like(x._data) if tangent is None else np.array(tangent._data))
    set_tangent(x, fresh)
    return fresh


def write_tangent(x: Tensor, values: Any) -> None:
    """After ``x`` was overwritten in place by a result whose tangent is ``values`` (a Tensor,
    or None for zero): ``x``'s tangent holds those values, written into the memory it shares
    with its base and views."""
    target = tangent_to_write(x)._data
    if values is None:
        target[...] = 0
    else:
        np.copyto(target, np.broadcast_to(values._data, target.shape), casting="unsafe")


VIEW_TANGENT[0] = _view_of_base_tangent
