"""Forward-mode transforms: ``jvp``, ``linearize`` and ``jacfwd``, on ``autograd.forward_ad``.

``jvp(f, primals, tangents)`` enters a dual level, makes each primal a dual tensor carrying its
tangent, runs ``f`` and unpacks the outputs' tangents (zeros for an output the primals do not
reach). ``jacfwd`` runs one such product per element of the differentiated arguments (PyTorch
runs them as one ``vmap``; the values are the same) and lays the columns out as ``output shape
+ input shape``.

Inside ``vmap`` the dual tensors are made of the values under the batched tensors.

Forward mode runs through reverse transforms inside ``func`` (``jacfwd(jacrev(f))``,
``hessian``): their backward passes run the derivative formulas on the dual tensors, so the
gradients carry tangents, as PyTorch's. chainrule's forward mode has one dual level, as
``torch.autograd.forward_ad``: where ``func`` holds another forward transform
(``jacfwd(jacfwd(f))``, a ``jvp`` of a ``jvp``) the product is computed by reverse mode twice
instead (``_jvp_by_double_vjp``: the same values).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.forward_grad import current_level
from ..autograd.grad_mode import enable_grad
from ..ops.creation import zeros, zeros_like
from ..ops.shape import stack
from ._batched import (
    active_levels,
    ensure_batched,
    levels_of,
    physical,
    rebatch,
)
from ._pytree import _Spec, _tree_flatten, _tree_unflatten
from ._randomness import random_guard
from ._transforms import (
    JVP_RUNNING,
    ArgNums,
    _check_aux,
    _grads,
    _replace_args,
    _slice_argnums,
    _vjp,
    jacrev,
)

__all__ = ["hessian", "jacfwd", "jvp", "linearize"]


def treespec_repr(spec: _Spec, indent: int = 0) -> str:
    """PyTorch's ``repr`` of a pytree's ``TreeSpec`` (used in its structure messages)."""
    if spec.kind == "leaf":
        return "*"
    context = "None" if spec.kind != "dict" else repr(list(spec.keys))
    inner = indent + 2
    children = f",\n{' ' * inner}".join(treespec_repr(c, inner) for c in spec.children)
    name = spec.kind if spec.kind != "tuple" or spec.type in (None, tuple) else spec.type.__name__
    return f"TreeSpec({name}, {context}, [{children}])"


def _check_primals(primals: Any, tangents: Any, api: str) -> tuple[list, list, _Spec]:
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_primals, primals_spec = _tree_flatten(primals)
    flat_tangents, tangents_spec = _tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {treespec_repr(primals_spec)} and tangents with structure "
            f"{treespec_repr(tangents_spec)}"
        )
    if not flat_primals:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for what, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        for leaf in flat:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    f"{api}: Expected {what} to only contain Tensors, got {type(leaf)}"
                )
    return flat_primals, flat_tangents, primals_spec


def _jvp(
    func: Callable[..., Any], primals: tuple, tangents: Any, has_aux: bool, api: str
) -> tuple[Any, Any, Any]:
    """``(output, output tangents, aux)`` of ``func`` at ``primals`` along ``tangents``: by
    forward mode, or, where chainrule's forward mode cannot go (inside another dual level),
    by reverse mode twice (below)."""
    flat_primals, flat_tangents, spec = _check_primals(primals, tangents, api)
    if current_level() >= 0:
        return _jvp_by_double_vjp(func, primals, flat_tangents, has_aux, api)
    return _jvp_forward(func, flat_primals, flat_tangents, spec, has_aux, api)


def _jvp_by_double_vjp(
    func: Callable[..., Any], primals: tuple, flat_tangents: list, has_aux: bool, api: str
) -> tuple[Any, Any, Any]:
    """The Jacobian-vector product by reverse mode twice: ``g(u) = J^T u`` is linear in the
    cotangent ``u``, so ``J v`` is the vector-Jacobian product of ``g`` with ``v``. Used
    where forward mode cannot run (nested ``jvp``/``jacfwd``); the values are the same."""
    output, vjp_fn, aux, call = _vjp(func, primals, None, has_aux)
    flat_output, out_spec = _tree_flatten(output)
    recorded_outputs, recorded_primals = vjp_fn._recorded  # type: ignore[attr-defined]
    with enable_grad():
        cotangents = [_zero_leaf(o) for o in recorded_outputs]
        pulled = vjp_fn(_tree_unflatten(cotangents, out_spec), create_graph=True)
        flat_pulled = _tree_flatten(pulled)[0]
        pairs = [(g, v) for g, v in zip(flat_pulled, flat_tangents, strict=True) if g.requires_grad]
        if pairs:
            # (through _grads: inside vmap, a jacfwd of a jacfwd vectorized, the gradients and
            # cotangents are batched tensors, taken at the levels their graph was recorded at)
            pushed = _grads(
                [g for g, _ in pairs],
                cotangents,
                [v for _, v in pairs],
                create_graph=True,
                retain_graph=True,
            )
        else:
            pushed = (None,) * len(cotangents)
    directions = [
        zeros_like(o) if d is None else d for d, o in zip(pushed, flat_output, strict=True)
    ]
    return output, call.finish(_tree_unflatten(directions, out_spec)), aux


def _zero_leaf(like: Tensor) -> Tensor:
    """Zeros like ``like`` requiring grad, batched at every running vmap level (its values a
    leaf of their own): the gradient with respect to it is then per example, not summed over
    the batches of the tangents pushed through (a jacfwd of a jacfwd, vectorized)."""
    zero = ensure_batched(zeros_like(like))
    levels = levels_of(zero)
    if not levels:
        return zero.requires_grad_()
    return rebatch(physical(zero).clone().requires_grad_(), levels)


def _jvp_forward(
    func: Callable[..., Any],
    flat_primals: list,
    flat_tangents: list,
    spec: Any,
    has_aux: bool,
    api: str,
) -> tuple[Any, Any, Any]:
    """The Jacobian-vector product by ``autograd.forward_ad``."""
    batched = bool(active_levels())
    if batched:
        # Inside vmap: the dual tensors are made of the values under the batched tensors (every
        # running batch dimension added), so the ops' rules carry the tangents along.
        flat_primals = [ensure_batched(p) for p in flat_primals]
        flat_tangents = [ensure_batched(t) for t in flat_tangents]
    JVP_RUNNING[0] += 1
    try:
        return _jvp_in_dual_level(func, flat_primals, flat_tangents, spec, has_aux, api, batched)
    finally:
        JVP_RUNNING[0] -= 1


def _jvp_in_dual_level(
    func: Callable[..., Any],
    flat_primals: list,
    flat_tangents: list,
    spec: Any,
    has_aux: bool,
    api: str,
    batched: bool,
) -> tuple[Any, Any, Any]:
    with forward_ad.dual_level():
        duals = [
            rebatch(forward_ad.make_dual(physical(p), physical(t)), levels_of(p))
            for p, t in zip(flat_primals, flat_tangents, strict=True)
        ]
        output = func(*_tree_unflatten(duals, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    f"{api}: output of function f should be a tuple: (output, aux) if has_aux "
                    "is True"
                )
            output, aux = output
            _check_aux(aux)
        flat_output, out_spec = _tree_flatten(output)
        if not flat_output or (len(flat_output) == 1 and flat_output[0] is None):
            raise RuntimeError(
                f"{api}: Expected f to be a function that has non-empty output (got output = "
                f"{flat_output})"
            )
        for o in flat_output:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                    f"{type(o)}"
                )
        values = []
        directions = []
        for o in flat_output:
            if batched:
                o = ensure_batched(o)
            levels = levels_of(o)
            primal, tangent = forward_ad.unpack_dual(physical(o))
            values.append(rebatch(primal, levels))
            directions.append(rebatch(zeros_like(primal) if tangent is None else tangent, levels))
        if has_aux:
            aux = _tree_unflatten(
                [
                    rebatch(forward_ad.unpack_dual(physical(a)).primal, levels_of(a))
                    for a in _tree_flatten(aux)[0]
                ],
                _tree_flatten(aux)[1],
            )
    return _tree_unflatten(values, out_spec), _tree_unflatten(directions, out_spec), aux


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``(func(*primals), jvp_out)``: the Jacobian of ``func`` at ``primals`` applied to
    ``tangents`` (same structure as ``primals``), by forward mode; ``(output, jvp_out, aux)``
    with ``has_aux``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import jvp
        >>> jvp(torch.sin, (torch.tensor([0.0]),), (torch.tensor([2.0]),))
        (tensor([0.]), tensor([2.]))
    """
    output, direction, aux = _jvp(func, primals, tangents, has_aux, "jvp(f, primals, tangents)")
    if has_aux:
        return output, direction, aux
    return output, direction


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals`` (PyTorch traces ``func`` once; here each call runs a forward-mode
    pass, with the same values).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import linearize
        >>> out, jvp_fn = linearize(torch.sin, torch.tensor([0.0]))
        >>> jvp_fn(torch.tensor([3.0]))
        tensor([3.])
    """
    flat_primals, primals_spec = _tree_flatten(primals)
    output, _, _ = _jvp(func, primals, primals, False, "jvp(f, primals, tangents)")

    def jvp_fn(*tangents: Any) -> Any:
        flat_tangents, tangents_spec = _tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(
                f"Expected the tangents {tangents_spec} to have the same argument structure as "
                f"the primals {primals_spec}"
            )
        for k, (t, p) in enumerate(zip(flat_tangents, flat_primals, strict=True)):
            if not isinstance(t, Tensor) or t.shape != p.shape:
                shape = t.shape if isinstance(t, Tensor) else type(t)
                raise RuntimeError(
                    f"tangent:{k} with shape {shape} in flattened pytree doesn't match the "
                    f"shape {p.shape} of the corresponding primal."
                )
        return _jvp(func, primals, tangents, False, "jvp(f, primals, tangents)")[1]

    return output, jvp_fn


def jacfwd(
    func: Callable[..., Any],
    argnums: ArgNums = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the argument(s) at ``argnums``, by forward mode:
    one Jacobian-vector product per element of the arguments. Shapes and nesting are
    :func:`jacrev`'s (``output shape + input shape``; a tuple per output for a tuple
    ``argnums``); with ``has_aux`` the function returns ``(jacobian, aux)``.

    ``randomness``: "error" refuses random ops inside ``func`` (PyTorch's vmap error), "same"
    gives every column the same random values, "different" different ones.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import jacfwd
        >>> jacfwd(lambda x: x ** 2)(torch.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        selected, normalised = _slice_argnums(args, argnums)
        primals = (selected,) if isinstance(argnums, int) else selected
        flat_primals, primals_spec = _tree_flatten(primals)
        for idx, x in enumerate(flat_primals):
            if isinstance(x, Tensor) and x.is_complex():
                raise RuntimeError(
                    "jacfwd: Expected all inputs to be real but received complex tensor at "
                    f"flattened input idx: {idx}"
                )

        def restricted(*diff: Any) -> Any:
            chosen = diff[0] if isinstance(argnums, int) else diff
            return func(*_replace_args(args, chosen, normalised))

        found = None
        if sum(p.numel() for p in flat_primals):
            try:
                found = _vectorized_blocks(restricted, primals, flat_primals, has_aux, randomness)
            except Exception as error:  # noqa: BLE001 - the column loop raises what is real
                # Not every op's batching rule takes batched tangents yet (a rule reaching a
                # batched tensor's values, a backward formula under vmap in a nested
                # transform): one forward pass per column instead, which raises again any error
                # of the function itself.
                VECTORIZED_FALLBACKS.append(type(error).__name__)
        if found is None:
            found = _blocks_by_columns(restricted, primals, flat_primals, has_aux, randomness)
        blocks, out_spec, aux = found
        by_output = []
        for per_primal in blocks:
            tree = _tree_unflatten(per_primal, primals_spec)
            by_output.append(tree[0] if isinstance(argnums, int) else tree)
        result = _tree_unflatten(by_output, out_spec)
        if has_aux:
            return result, aux
        return result

    return wrapper


#: The errors that sent a ``jacfwd`` from its vectorized pass to its column loop (for tests).
VECTORIZED_FALLBACKS: list[str] = []


def _vectorized_blocks(
    func: Callable[..., Any],
    primals: tuple,
    flat_primals: list[Tensor],
    has_aux: bool,
    randomness: str,
) -> tuple[list[list[Tensor]], _Spec, Any]:
    """``blocks[o][p]``, the Jacobian of output ``o`` with respect to primal ``p`` (shaped
    ``output shape + primal shape``), the outputs' structure and the aux output: every column
    in one forward pass, the identity's columns a batch of tangents under ``vmap``, as
    PyTorch's ``jacfwd``."""
    from ..ops.creation import eye
    from ._vmap import vmap

    _, spec = _tree_flatten(primals)
    numels = [p.numel() for p in flat_primals]
    total = sum(numels)
    identity = eye(total, dtype=flat_primals[0].dtype)
    basis = []
    start = 0
    for numel, primal in zip(numels, flat_primals, strict=True):
        block = identity[:, start : start + numel].to(primal.dtype)
        basis.append(block.reshape(total, *primal.shape))
        start += numel
    structure: list[Any] = []

    def push(*tangents: Tensor) -> tuple[Any, ...]:
        _, direction, aux = _jvp(
            func,
            primals,
            _tree_unflatten(list(tangents), spec),
            has_aux,
            "jvp(f, primals, tangents)",
        )
        flat_direction, out_spec = _tree_flatten(direction)
        flat_aux, aux_spec = _tree_flatten(aux) if has_aux else ([], None)
        structure[:] = [out_spec, len(flat_direction), aux_spec]
        return (*flat_direction, *flat_aux)

    results = vmap(push, randomness=randomness)(*basis)
    out_spec, n_out, aux_spec = structure
    aux = None
    if has_aux:  # (the same for every column: the first)
        aux = _tree_unflatten([a[0] for a in results[n_out:]], aux_spec)
    blocks = []
    for jac in results[:n_out]:
        columns = jac.movedim(0, -1)
        out_shape = tuple(jac.shape[1:])
        blocks.append(
            [
                part.reshape((*out_shape, *primal.shape))
                for part, primal in zip(columns.split(numels, -1), flat_primals, strict=True)
            ]
        )
    return blocks, out_spec, aux


def _blocks_by_columns(
    func: Callable[..., Any],
    primals: tuple,
    flat_primals: list[Tensor],
    has_aux: bool,
    randomness: str,
) -> tuple[list[list[Tensor]], _Spec, Any]:
    """:func:`_vectorized_blocks` by one forward pass per column (an argument without elements,
    or where a batching rule cannot run)."""
    with random_guard(randomness) as guard:
        columns, output, aux = _columns(func, primals, flat_primals, has_aux, guard)
    flat_output, out_spec = _tree_flatten(output)
    blocks = []
    for o, out in enumerate(flat_output):
        per_primal = []
        for p, primal in enumerate(flat_primals):
            cols = [c[o] for c in columns[p]]
            if cols:
                block = stack(cols, -1)
            else:
                block = zeros((*out.shape, 0), dtype=out.dtype)
            per_primal.append(block.reshape((*out.shape, *primal.shape)))
        blocks.append(per_primal)
    return blocks, out_spec, aux


def _columns(
    func: Callable[..., Any],
    primals: tuple,
    flat_primals: list[Tensor],
    has_aux: bool,
    guard: Any,
) -> tuple[list[list[list[Tensor]]], Any, Any]:
    """``columns[p][j][o]``: the tangent of output ``o`` along element ``j`` of primal ``p``;
    and the output and aux of the first pass."""
    _, spec = _tree_flatten(primals)
    columns: list[list[list[Tensor]]] = [[] for _ in flat_primals]
    output = aux = None
    basis = [zeros_like(p) for p in flat_primals]
    first = True
    for p, primal in enumerate(flat_primals):
        for j in range(primal.numel()):
            direction = [b if k != p else _one_hot(primal, j) for k, b in enumerate(basis)]
            guard.start_column()
            out, tangent, aux_now = _jvp(
                func,
                primals,
                _tree_unflatten(direction, spec),
                has_aux,
                "jvp(f, primals, tangents)",
            )
            if first:
                output, aux, first = out, aux_now, False
            columns[p].append(_tree_flatten(tangent)[0])
    if first:  # no element at all: one pass for the output's structure
        output, _, aux = _jvp(func, primals, primals, has_aux, "jvp(f, primals, tangents)")
    return columns, output, aux


def _one_hot(like: Tensor, index: int) -> Tensor:
    hot = zeros(like.shape, dtype=like.dtype)
    hot.view(-1)[index] = 1
    return hot


def hessian(func: Callable[..., Any], argnums: ArgNums = 0) -> Callable[..., Any]:
    """The Hessian of ``func`` with respect to the argument(s) at ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``, forward mode over reverse mode as PyTorch's
    (the backward formulas run on dual tensors, so each gradient carries a Hessian column as
    its tangent).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
