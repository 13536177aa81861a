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

from .._tensor import Tensor
from ..autograd.forward_grad import (
    NOT_IMPLEMENTED_MESSAGE,
    get_tangent,
    set_tangent,
    suspended,
)

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = ["propagate", "allow_jvp", "linear_rule", "derived_rule", "bilinear_rule",
           "JvpRule", "refuse"]

JvpRule = Callable[["OpDef", tuple, list[Any], Tensor], Any]


def _tangents_of(op: OpDef, args: tuple) -> tuple[list[Any], bool]:
    """The tangents of the differentiable inputs, and whether any other tensor argument
    (indices, masks, tensor lists) has one."""
    tangents = [get_tangent(args[p]) if isinstance(args[p], Tensor) else None
                for p in op.input_pos]
    other = False
    for p in op.tensor_param_pos:
        x = args[p]
        if isinstance(x, Tensor):
            other = other or get_tangent(x) is not None
        elif type(x) is tuple or type(x) is list:
            other = other or any(isinstance(e, Tensor) and get_tangent(e) is not None
                                 for e in x)
    return tangents, other


def refuse(name: str) -> NotImplementedError:
    """PyTorch's error for forward AD through ``name``, which has no JVP rule."""
    return NotImplementedError(NOT_IMPLEMENTED_MESSAGE.format(name=name))


def propagate(op: OpDef, args: tuple, result: Any) -> None:
    """Give ``result`` (a Tensor, or a tuple of them) the tangent of ``op`` applied to ``args``
    when an input has one (see the module docstring); raise when the op has no rule."""
    tangents, other = _tangents_of(op, args)
    if not other and all(t is None for t in tangents):
        return
    if not op.differentiable:
        return  # (no derivative: comparisons, argmax ... PyTorch's results have no tangent)
    outputs = result if type(result) is tuple else (result,)
    if not any(o._data.dtype.kind in "fc" for o in outputs):
        return  # (an integral or bool result has no tangent)
    rule = op.jvp
    if rule is None or other or type(result) is tuple or any(
        t is not None and t._data.dtype.kind == "c" for t in tangents
    ) or result._data.dtype.kind == "c":
        raise refuse(op.name)
    with suspended():
        tangent = rule(op, args, tangents, result)
        tangent = _laid_out_like(tangent, result)
    set_tangent(result, tangent)


def _laid_out_like(tangent: Tensor, primal: Tensor) -> Tensor:
    """``tangent`` at ``primal``'s shape, in its layout when ``primal`` is contiguous (PyTorch
    keeps a tangent's layout the primal's)."""
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


def linear_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """The op applied to the tangent of its one differentiable input (a linear op)."""
    p = op.input_pos[0]
    call = list(args)
    call[p] = tangents[0]
    return op.publics[False](*call)


def bilinear_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """``op(t_a, b) + op(a, t_b)`` for an op bilinear in its two inputs."""
    public = op.publics[False]
    terms = []
    for i, t in enumerate(tangents):
        if t is not None:
            call = list(args)
            call[op.input_pos[i]] = t
            terms.append(public(*call))
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def derived_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """The derivative formulas applied to the tangents, summed (an element-wise op)."""
    from ._opnode import TENSOR_NS  # (bound when ops/__init__ built the namespaces)

    env: list[Any] = list(args)
    env.append(result)
    for p in op.input_pos:
        x = args[p]
        env.append(tuple(x._data.shape) if isinstance(x, Tensor) else ())
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        derivative = op.derivatives[i]
        if derivative is None:
            raise refuse(op.name)
        term = derivative.fn(TENSOR_NS, t, *(env[k] for k in derivative.arg_index))
        if term._data.shape != result._data.shape:
            term = term.expand(result._data.shape)
        total = term if total is None else total + term
    return total
