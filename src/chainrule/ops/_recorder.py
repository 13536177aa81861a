"""Recorders: the half of an op application that builds its node.

When grad mode is on and some inputs of an op require grad, the op's result gets a node: an edge
and the input's metadata (shape, dtype, and strides when a derivative reads them) per input that
needs grad, a sequence number, what the derivatives of those inputs read (:class:`SavePlan`),
and the result's ``grad_fn``. All of this depends only on the op and on which inputs need grad,
so for each pair it is written out once, as straight-line Python with no loops or branches on
the pattern, compiled, and cached on the op (``op.recorders``): every way of calling an op (the
one- and two-input fast paths and the general runner in :mod:`._dispatch`) records through the
same generated function. ``recorder_source(op, needs)`` shows its code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._tensor import (
    INFERENCE_TENSORS,
    Tensor,
    check_not_inference_for_saving,
    grad_accumulator,
)
from ..autograd.grad_mode import ANOMALY_STATE, SAVED_HOOKS, mode_get
from ..autograd.node import next_sequence_nr

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = ["recorder", "recorder_source", "keep_args"]

_RARE_MODES = SAVED_HOOKS  # with anomaly mode (process-wide), what needs after_record


def recorder(op: OpDef, needs: tuple[bool, ...]) -> Callable[..., Any]:
    """The recorder of ``op`` for the inputs flagged in ``needs``: ``record(x0, x1, ...,
    args, out, result)`` with the op's inputs in order (tensors where ``needs`` is true), all
    its arguments (trailing defaults may be missing), and its output array and tensor (tuples
    of them for an op with several differentiable outputs). Built on first use."""
    record = op.recorders.get(needs)
    if record is None:
        namespace = _namespace(op, needs)
        exec(compile(recorder_source(op, needs), f"<recorder of {op.name}>", "exec"),
             namespace)
        record = op.recorders[needs] = namespace["record"]
    return record


def recorder_source(op: OpDef, needs: tuple[bool, ...]) -> str:
    """The Python source of ``op``'s recorder for ``needs`` (see :func:`recorder`)."""
    inputs = [f"x{i}" for i in range(len(needs))]
    multi = op.num_outputs != 1
    out, result = ("outs", "results") if multi else ("out", "result")
    lines = [f"def record({', '.join(inputs)}, args, {out}, {result}):",
             "    node = _new(node_cls)"]
    fns, nrs, metas = [], [], []
    for i, need in enumerate(needs):
        if not need:
            fns.append("None")
            nrs.append("0")
            metas.append("None")
            continue
        lines += [
            f"    f{i} = x{i}._grad_node",
            f"    if f{i} is None:",
            f"        f{i} = grad_accumulator(x{i})",
            f"        n{i} = 0",
            "    else:",
            f"        n{i} = x{i}._output_nr",
            f"    a{i} = x{i}._data",
        ]
        fns.append(f"f{i}")
        nrs.append(f"n{i}")
        metas.append(f"(a{i}.shape, a{i}.dtype, a{i}.strides)" if op.records_strides
                     else f"(a{i}.shape, a{i}.dtype)")
    # The input numbers: a constant tuple (no new object) when all are 0, as they mostly are.
    numbered = [n for n in nrs if n != "0"]
    zeros = _tuple(["0"] * len(nrs))
    nrs_value = (f"{_tuple(nrs)} if {' or '.join(numbered)} else {zeros}" if numbered
                 else zeros)
    lines += [
        f"    node._next_fns = {_tuple(fns)}",
        f"    node._next_nrs = {nrs_value}",
        f"    meta = {_tuple(metas)}",
        "    node._in_meta = _METAS.get(meta) or shared_meta(meta)",
        "    node._seq = next_sequence_nr()",
        "    node._hooks = None",
    ]
    plan = op.save_plan(needs)
    if plan.keep_args:
        lines.append("    keep_args(node, plan, args if len(args) == n_params else "
                     "args + defaults[len(args):])")
    else:
        lines += ["    node._saved = None", "    node._versions = ()"]
    first_out, first = (f"{out}[0]", f"{result}[0]") if multi else (out, result)
    if plan.save_result:
        lines.append(f"    node._result = ({first_out}, {first}._vc, {first}._vc[0])")
    else:
        lines.append("    node._result = None")
    if multi:
        lines += [
            f"    node._n_out = len({out})",
            f"    node._out_meta = tuple((o.shape, o.dtype) for o in {out})",
            f"    for nr, t in enumerate({result}):",
            "        t._requires_grad = True",
            "        t._grad_node = node",
            "        t._output_nr = nr",
        ]
    else:
        if op.node_output_nr:  # an ExtraOutputsOpNode
            lines.append(f"    node._n_out = {1 + len(op.node_output_nr)}")
        lines += [f"    {result}._requires_grad = True", f"    {result}._grad_node = node"]
    lines += ["    if mode_get() & _RARE_MODES or ANOMALY_STATE.enabled:",
              f"        after_record(node, {first})"]
    return "\n".join(lines) + "\n"


# Input metadata tuples, shared by the nodes that record the same: a chain of ops on tensors of
# one shape keeps one tuple instead of three per node (the memory of long graphs, and fewer
# objects for the garbage collector to track). Emptied when it grows past _MAX_METAS.
_METAS: dict[tuple, tuple] = {}
_MAX_METAS = 4096


def shared_meta(meta: tuple) -> tuple:
    """The shared tuple equal to ``meta`` (``meta`` itself, remembered, when new)."""
    if len(_METAS) >= _MAX_METAS:
        _METAS.clear()
    _METAS[meta] = meta
    return meta


def _tuple(items: list[str]) -> str:
    """A tuple display of ``items`` (with the trailing comma a one-item tuple needs)."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _namespace(op: OpDef, needs: tuple[bool, ...]) -> dict[str, Any]:
    return {
        "_new": object.__new__, "node_cls": op.node_cls, "grad_accumulator": grad_accumulator,
        "next_sequence_nr": next_sequence_nr, "keep_args": keep_args,
        "plan": op.save_plan(needs), "n_params": len(op.defaults), "defaults": op.defaults,
        "mode_get": mode_get, "_RARE_MODES": _RARE_MODES, "after_record": after_record,
        "ANOMALY_STATE": ANOMALY_STATE, "_METAS": _METAS, "shared_meta": shared_meta,
    }


def keep_args(node: Any, plan: Any, args: tuple) -> None:
    """Keep ``args`` on ``node`` but for those no derivative reads (``plan.drop``), with the
    version of each saved input, checked when backward unpacks it."""
    if plan.drop:
        kept = list(args)
        for p in plan.drop:
            kept[p] = None
        args = tuple(kept)
    node._saved = args
    versions = []
    for p in plan.pack_order:  # (the order PyTorch unpacks, and so checks, them)
        x = args[p]
        if isinstance(x, Tensor):
            if INFERENCE_TENSORS:
                check_not_inference_for_saving(x)
            versions.append((p, x._vc[0]))
        elif p in plan.lists and type(x) is tuple:
            if INFERENCE_TENSORS:
                for e in x:
                    check_not_inference_for_saving(e)
            versions.append((p, tuple(e._vc[0] if isinstance(e, Tensor) else None for e in x)))
        else:
            versions.append((p, None))
    versions_tuple = tuple(versions)
    if not any(v is not None for _, v in versions):  # numbers only: one shared tuple per plan
        versions_tuple = _NUMBERS_ONLY.setdefault(versions_tuple, versions_tuple)
    node._versions = versions_tuple


# The ``_versions`` of nodes that saved numbers only, by value: a handful (one per save plan).
_NUMBERS_ONLY: dict[tuple, tuple] = {}


def after_record(node: Any, output: Tensor) -> None:
    """Anomaly mode's forward trace, and saved_tensors_hooks' packing (rare, so not inline;
    after ``output`` got its ``grad_fn``: the pack hook sees the output as PyTorch's does)."""
    mode = mode_get()
    if ANOMALY_STATE.enabled:
        from ..autograd.anomaly import record_trace

        record_trace(node)
    if mode & SAVED_HOOKS:
        from ..autograd.graph import current_saved_tensors_hooks
        from ._opnode import pack_saved

        hooks = current_saved_tensors_hooks()
        if hooks is not None:
            pack_saved(node, hooks, output)
