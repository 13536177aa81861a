"""``chainrule.func``: the reverse-mode function transforms (``grad``, ``grad_and_value``,
``vjp``, ``jacrev``) with ``torch.func``'s signatures, built on the tape-based engine.

``grad(f)`` returns a function computing the gradient of a scalar ``f`` with respect to the
argument(s) at ``argnums``; transforms compose (``grad(grad(f))``, ``jacrev(jacrev(f))``) and
arguments may be pytrees (nested tuples, lists and dicts of Tensors).

How transforms work here (PyTorch's functorch uses wrapper tensors and levels instead): each
call makes its differentiated arguments fresh graph inputs -- a view when the argument is itself
differentiable (an enclosing transform's input, or a tensor requiring grad), so the result stays
differentiable with respect to it, and a detached copy otherwise. The backward pass records a
graph (``create_graph``) only when the function's graph reaches something outside the call (an
enclosing transform's input, a parameter that requires grad): as with ``torch.func``, a plain
call returns plain tensors, and a nested or closed-over call returns differentiable ones.

Example:
    >>> import chainrule as torch
    >>> from chainrule.func import grad
    >>> x = torch.tensor(2.0)
    >>> grad(lambda x: x ** 3)(x)
    tensor(12.)
    >>> grad(grad(lambda x: x ** 3))(x)
    tensor(12.)
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

from .._tensor import Tensor, grad_accumulator, gradient_edge
from ..autograd import engine
from ..autograd.forward_grad import get_tangent, set_tangent, tangents_alive
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.graph import preorder
from ..autograd.node import AccumulateGrad, Node
from ..ops._dispatch import BACKWARD_GRAD_MODE, COMPOSITE_BACKWARD
from ._batched import (
    POISON_MESSAGE,
    TRANSFORMS_BEFORE,
    active_levels,
    ensure_batched,
    levels_of,
    physical,
    rebatch,
)
from ._pytree import _Spec, _tree_flatten, _tree_map, _tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]

ArgNums = int | tuple[int, ...]


# ----------------------------------------------------------------------------------------------
# argnums (PyTorch's checks and messages)


def _validate_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args: tuple, argnums: Any) -> tuple[Any, ArgNums]:
    """The selected arguments (one, or a tuple), and the normalised argnums."""
    if not isinstance(argnums, int | tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        argnums = _validate_argnum(argnums, len(args))
        return args[argnums], argnums
    argnums = tuple(_validate_argnum(a, len(args)) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(args[i] for i in argnums), argnums


def _replace_args(args: tuple, new: Any, argnums: ArgNums) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


# ----------------------------------------------------------------------------------------------
# Making inputs differentiable, and deciding whether results stay in a graph


# The transform calls running in this thread/context, innermost last.
#: How many ``jvp``/``jacfwd`` forward passes are running (see :func:`_grads`).
JVP_RUNNING = [0]

_ACTIVE: contextvars.ContextVar[tuple[_Call, ...]] = contextvars.ContextVar(
    "chainrule_func_calls", default=()
)


class _Call:
    """One transform call: the fresh inputs it made and whether its results stay connected.

    The fresh leaves a call makes are its own, and also internal to every call enclosing it
    (an inner transform's inputs are not "outside" for the outer one); an enclosing call's
    leaves are outside for the inner call, which must then keep its results differentiable.
    """

    def __init__(self) -> None:
        self.own_leaves: set[Node] = set()  # AccumulateGrad nodes of fresh leaves
        self.connected = False  # an input was itself differentiable
        # the vmap levels running when the call recorded its graph
        self.levels = [lvl for lvl, _, _ in active_levels()]

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        token = _ACTIVE.set(_ACTIVE.get() + (self,))
        try:
            yield
        finally:
            _ACTIVE.reset(token)

    def make_differentiable(self, x: Any) -> Tensor:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        # Inside vmap the graph is recorded on the values under the batched tensors: an input
        # gets every running batch dimension (an unbatched one expanded), so that its gradient
        # is per example, and the fresh leaf is made of the value.
        x = ensure_batched(x)
        levels = levels_of(x)
        value = physical(x)
        if value.requires_grad:
            self.connected = True
            # differentiable with respect to x, but a new graph input
            return rebatch(value.view_as(value), levels)
        fresh = detach(value).requires_grad_()
        accumulator = grad_accumulator(fresh)
        for call in _ACTIVE.get():  # this call and the ones enclosing it
            call.own_leaves.add(accumulator)
        return rebatch(fresh, levels)

    def reaches_outside(self, outputs: list[Any]) -> bool:
        """Whether the graph of ``outputs`` reaches a leaf this call did not make (a parameter
        that requires grad, an enclosing transform's input): then results must stay
        differentiable. Walked with an explicit stack."""
        if self.connected:
            return True
        return self._walk_reaches_outside(outputs)

    def _walk_reaches_outside(self, outputs: list[Any]) -> bool:
        stack = []
        for o in outputs:
            if isinstance(o, Tensor):
                node, _ = gradient_edge(physical(o))
                if node is not None:
                    stack.append(node)
        return any(
            type(node) is AccumulateGrad and node not in self.own_leaves for node in preorder(stack)
        )

    def finish(self, value: Any) -> Any:
        """Detach the tensors of ``value`` unless results stay connected; when they do, those
        whose own graph reaches no leaf outside the call (an aux output of the inputs alone,
        with a parameter elsewhere in the function) are detached too, as PyTorch's levels
        unwrap them."""
        if self.connected:
            return _tree_map(self._detach_if_inside, value)
        return _tree_map(_detach_leaf, value)

    def _detach_if_inside(self, x: Any) -> Any:
        if isinstance(x, Tensor) and not self._walk_reaches_outside([x]):
            return detach(x)
        return x


def _detach_leaf(x: Any) -> Any:
    return detach(x) if isinstance(x, Tensor) else x


def detach(x: Tensor) -> Tensor:
    """``x.detach()``, keeping the tangent of ``x`` (detached too) in a dual level: a transform
    cuts its results from the graph it recorded, not from an enclosing forward-mode transform
    (``jacfwd(jacrev(f))``: the gradient's tangent is the Hessian's column). PyTorch's levels
    keep them apart the same way; its ``Tensor.detach`` drops the tangent."""
    if not tangents_alive():
        return x.detach()
    levels = levels_of(x)
    value = physical(x)
    tangent = get_tangent(value)
    out = value.detach()
    if tangent is not None:
        set_tangent(out, tangent.detach())
    return rebatch(out, levels) if levels else out


def _check_aux(aux: Any) -> None:
    for leaf in _tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def _grads(
    outputs: list[Tensor],
    inputs: list[Tensor],
    grad_outputs: list[Any] | None,
    create_graph: bool,
    retain_graph: bool,
    record_levels: list[int] | None = None,
) -> list[Tensor]:
    """``autograd.grad`` over the outputs that require grad; zeros for unused inputs.

    Inside vmap the graph was recorded on the values under the batched tensors, at the vmap
    levels running then (``record_levels``; default: the running ones): the outputs, inputs and
    cotangents are taken at those levels as plain tensors (a missing cotangent is ones: every
    example's output is a scalar) and the gradients batched like the inputs. A cotangent also
    batched at levels the graph was not recorded at (``vmap(vjp_fn)(cotangents)``, a vmap
    entered after the ``vjp``) keeps those levels as batched tensors whose logical shape is the
    recorded graph's: the backward formulas, recorded as ops, batch by their rules (one pass
    for the whole batch, as PyTorch's)."""
    from ..ops.creation import ones_like, zeros_like

    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    running = [lvl for lvl, _, _ in active_levels()]
    if record_levels is None:
        record_levels = running
    record = sorted(lvl for lvl in record_levels if lvl in running)
    extra_batched = False
    input_levels: list[list[int]] = []
    if running:
        outputs = [physical(ensure_batched(o, record)) for o in outputs]
        cotangents = []
        for o, g in zip(outputs, grad_outputs, strict=True):
            if g is None:
                cotangents.append(ones_like(o))
                continue
            cotangent, extra = _cotangent_at(g, record)
            extra_batched = extra_batched or extra
            cotangents.append(cotangent)
        grad_outputs = cotangents
        input_levels = [sorted(levels_of(x)) for x in inputs]
        inputs = [physical(x) for x in inputs]
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o.requires_grad]
    # PyTorch's saved tensors are functorch-wrapped in this pass when the transform that
    # recorded the graph is still running (grad), or the graph was recorded under vmap, or an
    # enclosing transform runs: its formulas take their composite paths then (prod's).
    composite = bool(_ACTIVE.get()) or bool(record) or JVP_RUNNING[0] > 0
    COMPOSITE_BACKWARD[0] += composite
    try:
        result = _run_grads(pairs, inputs, extra_batched, create_graph, retain_graph)
    finally:
        COMPOSITE_BACKWARD[0] -= composite
    grads = [zeros_like(x) if g is None else g for g, x in zip(result, inputs, strict=True)]
    if running:
        grads = [_gradient_at(g, lv) for g, lv in zip(grads, input_levels, strict=True)]
    return grads


def _run_grads(
    pairs: list[tuple[Tensor, Any]],
    inputs: list[Tensor],
    extra_batched: bool,
    create_graph: bool,
    retain_graph: bool,
) -> list[Any]:
    """The backward pass of :func:`_grads` (None for inputs the outputs do not reach)."""
    if not pairs:
        result: Any = [None] * len(inputs)
    elif extra_batched:
        # (the backward formulas must run as ops on tensors to reach the batching rules)
        with enable_grad():
            result = engine.grad(
                [o for o, _ in pairs],
                inputs,
                [g for _, g in pairs],
                retain_graph=True,
                create_graph=True,
                allow_unused=True,
            )
        if not create_graph:
            result = [None if g is None else detach(g) for g in result]
    else:
        result = engine.grad(
            [o for o, _ in pairs],
            inputs,
            [g for _, g in pairs],
            retain_graph=retain_graph,
            create_graph=create_graph,
            allow_unused=True,
        )
    return result


def _cotangent_at(g: Any, record: list[int]) -> tuple[Any, bool]:
    """The cotangent ``g`` for the graph recorded at the levels ``record`` (ascending): their
    batch dimensions as plain dimensions (added where ``g`` lacks one), leading; and whether
    ``g`` is batched at other levels too, which stay batched (outside, lowest first)."""
    g = ensure_batched(g, record)
    have = sorted(levels_of(g))
    extra = [lvl for lvl in have if lvl not in record]
    plain = physical(g)
    if not extra:
        return plain, False
    order = [have.index(lvl) for lvl in extra] + [have.index(lvl) for lvl in record]
    if order != sorted(order):
        plain = plain.permute(*order, *range(len(have), plain.dim()))
    return rebatch(plain, sorted(extra, reverse=True)), True


def _gradient_at(g: Any, record: list[int]) -> Any:
    """A gradient of the plain input recorded at the levels ``record`` (ascending), batched at
    those and at the levels its cotangents brought (:func:`_cotangent_at`'s layout), as one
    nested batched tensor (batch dimensions in level order)."""
    extra = sorted(levels_of(g))
    if not extra:
        return rebatch(g, sorted(record, reverse=True))
    every = sorted(extra + record)
    position = {lvl: k for k, lvl in enumerate(extra)}
    position.update({lvl: len(extra) + k for k, lvl in enumerate(record)})
    plain = physical(g)
    order = [position[lvl] for lvl in every]
    if order != sorted(order):
        plain = plain.permute(*order, *range(len(every), plain.dim()))
    return rebatch(plain, sorted(every, reverse=True))


# ----------------------------------------------------------------------------------------------
# grad and grad_and_value


def grad_and_value(
    func: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Like :func:`grad`, but the returned function gives ``(gradient, value)`` (with
    ``has_aux``: ``(gradient, (value, aux))``).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import grad_and_value
        >>> grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1.0, 2.0]))
        (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        call = _Call()
        with enable_grad(), call.active():
            selected, normalised = _slice_argnums(args, argnums)
            diff_args = _tree_map(call.make_differentiable, selected)
            output = func(*_replace_args(args, diff_args, normalised), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?"
                )
            if has_aux:
                _check_aux(aux)
            call.connected = call.reaches_outside([output])
            flat_inputs, spec = _tree_flatten(diff_args)
            flat_grads = _grads(
                [output],
                flat_inputs,
                None,
                create_graph=call.connected,
                retain_graph=call.connected,
            )
            grads = _tree_unflatten(flat_grads, spec)
            if call.connected:  # (a gradient of the inputs alone is not connected: detached)
                grads = _tree_map(call._detach_if_inside, grads)
            value = call.finish(output)
            if has_aux:
                return grads, (value, call.finish(aux))
            return grads, value

    return wrapper


def grad(
    func: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``func`` with respect to the argument(s) at ``argnums``.

    The returned function takes ``func``'s arguments and returns the gradient, shaped like the
    selected argument (a tuple for a tuple ``argnums``); with ``has_aux``, ``func`` returns
    ``(output, aux)`` and the function returns ``(gradient, aux)``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import grad
        >>> f = lambda x, y: (x * y).sum()
        >>> grad(f, argnums=(0, 1))(torch.ones(2), torch.tensor([2.0, 3.0]))
        (tensor([2., 3.]), tensor([1., 1.]))
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = inner(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapper


# ----------------------------------------------------------------------------------------------
# vjp and jacrev


def _vjp(
    func: Callable[..., Any], primals: tuple, argnums: ArgNums | None, has_aux: bool
) -> tuple[Any, Callable[..., Any], Any, _Call]:
    """Run ``func`` recording a graph; the output, its vjp function and the aux output."""
    call = _Call()
    with enable_grad(), call.active():
        if argnums is None:
            diff_primals = _tree_map(call.make_differentiable, primals)
            new_primals = diff_primals
        else:
            selected, normalised = _slice_argnums(primals, argnums)
            diff_primals = _tree_map(call.make_differentiable, selected)
            new_primals = _replace_args(primals, diff_primals, normalised)
        output = func(*new_primals)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) if "
                    "has_aux is True"
                )
            output, aux = output
            _check_aux(aux)
        flat_outputs, out_spec = _tree_flatten(output)
        if (len(flat_outputs) == 1 and flat_outputs[0] is None) or not flat_outputs:
            raise RuntimeError(
                "vjp(f, *primals): Expected f to be a function that has non-empty output (got "
                f"output = {flat_outputs})"
            )
        for o in flat_outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    "vjp(f, *primals): expected f(*primals) to return only tensors, got "
                    f"unsupported type {type(o)}"
                )
        for o in flat_outputs:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError(
                    "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                    f"got Tensor with dtype {o.dtype}"
                )
        call.connected = call.reaches_outside(flat_outputs)
    flat_primals, primal_spec = _tree_flatten(diff_primals)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> Any:
        automatic = create_graph is None
        # (PyTorch's pass records whenever grad mode is on; here only if the graph reaches
        # outside the call, else its formulas are told that PyTorch's run in grad mode)
        unrecorded_grad_mode = automatic and not call.connected and is_grad_enabled()
        if create_graph is None:
            create_graph = call.connected and is_grad_enabled()
        flat_cotangents, cot_spec = _tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {cot_spec}, primal output: {out_spec}"
            )
        BACKWARD_GRAD_MODE[0] += unrecorded_grad_mode
        try:
            with enable_grad():
                result = _grads(
                    flat_outputs,
                    flat_primals,
                    flat_cotangents,
                    create_graph=create_graph,
                    retain_graph=retain_graph,
                    record_levels=call.levels,
                )
        finally:
            BACKWARD_GRAD_MODE[0] -= unrecorded_grad_mode
        if automatic and create_graph:  # (those of the inputs alone: detached, as PyTorch's)
            result = [call._detach_if_inside(r) for r in result]
        return _tree_unflatten(result, primal_spec)

    vjp_fn._recorded = (flat_outputs, flat_primals)  # type: ignore[attr-defined] (for jacrev)
    vjp_fn._levels = call.levels  # type: ignore[attr-defined] (the vmap levels it recorded at)
    return call.finish(output), vjp_fn, (call.finish(aux) if has_aux else None), call


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` returns the vector-Jacobian
    products with respect to every primal, as a tuple (``(output, vjp_fn, aux)`` with
    ``has_aux``).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import vjp
        >>> out, vjp_fn = vjp(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
        >>> vjp_fn(torch.ones(2))
        (tensor([2., 4.]),)
    """
    output, vjp_fn, aux, _ = _vjp(func, primals, None, has_aux)
    if has_aux:
        return output, vjp_fn, aux
    return output, vjp_fn


def jacrev(
    func: Callable[..., Any],
    argnums: ArgNums = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the argument(s) at ``argnums``, by reverse mode:
    one vector-Jacobian product per output element (``chunk_size`` only changes how PyTorch
    batches them; here they always run one by one).

    For an output of shape ``O`` and an argument of shape ``I`` the Jacobian has shape
    ``O + I``; tuples and pytrees of outputs/arguments give nested results as in PyTorch.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import jacrev
        >>> jacrev(lambda x: x ** 2)(torch.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _error_if_complex(_tree_flatten(args)[0], is_input=True)
        output, vjp_fn, aux, call = _vjp(func, args, argnums, has_aux)
        flat_output, out_spec = _tree_flatten(output)
        _error_if_complex(flat_output, is_input=False)
        selected, _ = _slice_argnums(args, argnums)
        primals = (selected,) if isinstance(argnums, int) else selected
        flat_primals, primals_spec = _tree_flatten(primals)
        per_primal = _jacobian_rows(vjp_fn, flat_output, out_spec, flat_primals)
        # per_primal[p][o]: Jacobian of output o with respect to primal p.
        by_output = []
        for o in range(len(flat_output)):
            tree = _tree_unflatten(
                [per_primal[p][o] for p in range(len(flat_primals))], primals_spec
            )
            by_output.append(tree[0] if isinstance(argnums, int) else tree)
        result = call.finish(_tree_unflatten(by_output, out_spec))
        if has_aux:
            return result, aux
        return result

    return wrapper


def _jacobian_rows(
    vjp_fn: Callable[..., Any],
    flat_output: list[Tensor],
    out_spec: _Spec,
    flat_primals: list[Tensor],
) -> list[list[Tensor]]:
    """For every primal, the Jacobian of every output: one vjp per row of an identity basis
    spanning all outputs (as PyTorch's ``jacrev``)."""
    from ..ops.creation import zeros
    from ..ops.shape import stack

    numels = [o.numel() for o in flat_output]
    stacked_rows = None
    try:
        stacked_rows = _vectorized_rows(vjp_fn, flat_output, numels)
    except RuntimeError as error:
        if str(error) != POISON_MESSAGE:
            raise
        # (a backward formula reached a batched tensor's values outside the batching rules:
        # one backward pass per row instead)
    if stacked_rows is not None:
        return _split_rows(stacked_rows, numels, flat_output, flat_primals)
    rows: list[list[Tensor]] = [[] for _ in flat_primals]
    for i, numel in enumerate(numels):
        for j in range(numel):
            basis = [zeros(o.shape, dtype=o.dtype) for o in flat_output]
            basis[i]._data.reshape(-1)[j] = 1
            row = vjp_fn(_tree_unflatten(basis, out_spec))
            for p, g in enumerate(_tree_flatten(row)[0]):
                rows[p].append(g)
    stacked_rows = []
    for p, primal in enumerate(flat_primals):
        if rows[p]:
            stacked_rows.append(stack(rows[p], 0))
        else:
            stacked_rows.append(zeros((0, *primal.shape), dtype=primal.dtype))
    return _split_rows(stacked_rows, numels, flat_output, flat_primals)


def _vectorized_rows(
    vjp_fn: Callable[..., Any], flat_output: list[Tensor], numels: list[int]
) -> list[Tensor]:
    """Every row of every primal's Jacobian in one backward pass: the rows of the identity are
    a batch of cotangents, run through the recorded graph under ``vmap`` (the backward
    formulas, recorded as ops, batched by their rules), as PyTorch's ``jacrev`` does."""
    from ..ops.creation import eye, zeros, zeros_like
    from ._vmap import vmap

    outputs, primals = vjp_fn._recorded  # type: ignore[attr-defined]
    total = sum(numels)
    dtype = flat_output[0].dtype if flat_output else None
    identity = eye(total, dtype=dtype)
    bases = []
    start = 0
    for numel, out in zip(numels, flat_output, strict=True):
        if numel == total:  # (one output: the identity itself)
            block = identity
        elif numel:
            block = identity[:, start : start + numel]
        else:
            block = zeros(total, 0, dtype=out.dtype)
        bases.append(block.to(out.dtype).reshape(total, *out.shape))
        start += numel
    used = [k for k, o in enumerate(outputs) if o.requires_grad]

    levels = vjp_fn._levels  # type: ignore[attr-defined]

    def rows(*cotangents: Tensor) -> tuple[Tensor, ...]:
        if not used:
            return tuple(zeros_like(p) for p in primals)
        with enable_grad():
            # (inside an enclosing vmap the graph was recorded at its levels: the rows are
            # cotangents batched at this vmap's level besides, which _grads keeps batched)
            grads = _grads(
                [outputs[k] for k in used],
                list(primals),
                [cotangents[k] for k in used],
                create_graph=True,
                retain_graph=True,
                record_levels=levels,
            )
        return tuple(grads)

    if total == 0:
        return [zeros((0, *p.shape), dtype=p.dtype) for p in primals]
    return list(vmap(rows)(*bases))


def _split_rows(
    stacked_rows: list[Tensor],
    numels: list[int],
    flat_output: list[Tensor],
    flat_primals: list[Tensor],
) -> list[list[Tensor]]:
    """``stacked_rows[p]`` (all rows of primal ``p``'s Jacobian) cut per output and shaped
    ``output shape + primal shape``."""
    result = []
    for p, primal in enumerate(flat_primals):
        stacked = stacked_rows[p]
        start = 0
        per_output = []
        for numel, out in zip(numels, flat_output, strict=True):
            rows = stacked if numel == len(stacked) else stacked[start : start + numel]
            per_output.append(rows.view(out.shape + primal.shape))
            start += numel
        result.append(per_output)
    return result


def _error_if_complex(flat: list[Any], is_input: bool) -> None:
    what = "inputs" if is_input else "outputs"
    for idx, x in enumerate(flat):
        if isinstance(x, Tensor) and x.is_complex():
            raise RuntimeError(
                f"jacrev: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _transforms_before(level: int) -> int:
    """How many running ``grad``/``vjp``-like calls began before the vmap ``level`` (a call that
    began inside that vmap recorded it among its levels)."""
    return sum(1 for call in _ACTIVE.get() if level not in call.levels)


TRANSFORMS_BEFORE[0] = _transforms_before
