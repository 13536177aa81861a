"""``vmap``: a function of one example applied to a batch, by batching rules (``_batched``,
``_batching_rules``), with ``torch.func.vmap``'s ``in_dims``/``out_dims`` handling, nesting,
``randomness``, ``chunk_size`` and error messages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor, wrap_dim
from ..ops.shape import cat
from . import _batching_rules  # noqa: F401 - registers the rules
from ._batched import BatchedTensor, active_levels, unwrap, wrap_batched
from ._forward import treespec_repr
from ._pytree import _tree_flatten, _tree_unflatten
from ._randomness import check_randomness, random_guard

__all__ = ["vmap"]


def _name(func: Any) -> str:
    return getattr(func, "__name__", repr(func))


def _broadcast_prefix(dims: Any, tree: Any, fail: Callable[[], Exception]) -> list[Any]:
    """One in_dim per leaf of ``tree``: ``dims`` is a prefix of its structure (an int or None
    covers a whole subtree). Recursion depth is the nesting of the user's containers."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_tree_flatten(tree)[0])
    if isinstance(dims, tuple | list) and isinstance(tree, tuple | list):
        if len(dims) != len(tree) or (type(dims) is list) != (type(tree) is list):
            raise fail()
        out: list[Any] = []
        for d, t in zip(dims, tree, strict=True):
            out.extend(_broadcast_prefix(d, t, fail))
        return out
    if isinstance(dims, dict) and isinstance(tree, dict):
        if set(dims) != set(tree):
            raise fail()
        out = []
        for key in tree:
            out.extend(_broadcast_prefix(dims[key], tree[key], fail))
        return out
    raise fail()


def _in_dims_per_leaf(func: Any, in_dims: Any, args: tuple, count: int) -> list[Any]:
    """One in_dim per leaf of ``args`` (``count`` leaves), with PyTorch's checks."""
    name = _name(func)
    if not isinstance(in_dims, int | tuple):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )

    def fail() -> Exception:
        dims_spec = treespec_repr(_tree_flatten(in_dims)[1])
        args_spec = treespec_repr(_tree_flatten(args)[1])
        return ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {dims_spec} but inputs has structure "
            f"{args_spec}."
        )

    if isinstance(in_dims, int):
        return [in_dims] * count
    return _broadcast_prefix(in_dims, args, fail)


def _batch_inputs(func: Any, in_dims: Any, args: tuple) -> tuple[list[Any], list[Any], Any, int]:
    """The flat arguments, their in_dims, the structure, and the batch size (with PyTorch's
    checks)."""
    name = _name(func)
    flat, spec = _tree_flatten(args)
    dims = _in_dims_per_leaf(func, in_dims, args, len(flat))
    size = None
    sizes = []
    for leaf, dim in zip(flat, dims, strict=True):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} of type "
                f"{type(dim)} for an input but in_dim must be either an integer dimensionality "
                "or None."
            )
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for an input "
                f"but the input is of type {type(leaf)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        n = leaf.dim()
        if not -n <= dim < n:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} for some "
                f"input, but that input is a Tensor of dimensionality {n} so expected in_dim to "
                f"satisfy -{n} <= in_dim < {n}."
            )
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dims={in_dims} and "
            "args=..., but none of the inputs are Tensors with a batch dimension. vmap needs at "
            "least one input to be batched."
        )
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    size = sizes[0]
    return flat, dims, spec, size


def _out_dims_per_leaf(func: Any, out_dims: Any, output: Any, count: int) -> list[Any]:
    """One out_dim per leaf of ``output`` (``count`` leaves), with PyTorch's checks."""
    if type(out_dims) is int:
        return [out_dims] * count
    name = _name(func)
    if not (out_dims is None or isinstance(out_dims, int | tuple | list | dict)):
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
            "python collection of ints representing where in the outputs the vmapped dimension "
            "should appear."
        )

    def fail() -> Exception:
        return ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure "
            f"{treespec_repr(_tree_flatten(out_dims)[1])} but outputs has structure "
            f"{treespec_repr(_tree_flatten(output)[1])}."
        )

    if isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(output, tuple):
        out_dims = out_dims[0]
    return _broadcast_prefix(out_dims, output, fail)


def _unbatch_output(func: Any, leaf: Any, out_dim: Any, level: int, size: int) -> Any:
    name = _name(func)
    if out_dim is None:
        if isinstance(leaf, BatchedTensor) and leaf._level == level:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return leaf
    if not isinstance(leaf, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    value, batched = unwrap(leaf, level)
    ndim = value.dim() if batched else leaf.dim() + 1
    dim = wrap_dim(out_dim, ndim)
    if batched:
        return value if dim == 0 else value.movedim(0, dim)
    # (as PyTorch: the batch size inserted into the sizes, then expand -- which fails for an
    # unbatched output and an out_dim other than 0 unless the sizes happen to line up)
    sizes = list(leaf.shape)
    sizes.insert(dim, size)
    return leaf.expand(*sizes)


_LEVEL_COUNTER = [0]


def _run(
    func: Callable[..., Any],
    in_dims: Any,
    out_dims: Any,
    randomness: str,
    args: tuple,
    kwargs: dict,
) -> Any:
    flat, dims, spec, size = _batch_inputs(func, in_dims, args)
    _LEVEL_COUNTER[0] += 1
    level = _LEVEL_COUNTER[0]
    levels = active_levels()
    levels.append((level, size, randomness))
    try:
        # (batched at dimension 0: the tensor itself is the value, as PyTorch wraps it)
        batched = [
            leaf if dim is None else wrap_batched(leaf if dim == 0 else leaf.movedim(dim, 0), level)
            for leaf, dim in zip(flat, dims, strict=True)
        ]
        with random_guard(randomness):
            output = func(*_tree_unflatten(batched, spec), **kwargs)
        flat_out, out_spec = _tree_flatten(output)
        out_dims_flat = _out_dims_per_leaf(func, out_dims, output, len(flat_out))
        result = [
            _unbatch_output(func, leaf, d, level, size)
            for leaf, d in zip(flat_out, out_dims_flat, strict=True)
        ]
    finally:
        levels.pop()
    return _tree_unflatten(result, out_spec)


def _run_chunked(
    func: Callable[..., Any],
    in_dims: Any,
    out_dims: Any,
    randomness: str,
    chunk_size: int,
    args: tuple,
    kwargs: dict,
) -> Any:
    flat, dims, spec, size = _batch_inputs(func, in_dims, args)
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [
            leaf if dim is None else leaf.narrow(dim, start, stop - start)
            for leaf, dim in zip(flat, dims, strict=True)
        ]
        pieces.append(
            _run(func, in_dims, out_dims, randomness, _tree_unflatten(chunk, spec), kwargs)
        )
    if len(pieces) == 1:
        return pieces[0]
    flat_pieces = [_tree_flatten(p)[0] for p in pieces]
    out_spec = _tree_flatten(pieces[0])[1]
    out_dims_flat = _out_dims_per_leaf(func, out_dims, pieces[0], len(flat_pieces[0]))
    joined = []
    for k, d in enumerate(out_dims_flat):
        parts = [p[k] for p in flat_pieces]
        if d is None:
            joined.append(parts[0])
        else:
            joined.append(cat(parts, d))
    return _tree_unflatten(joined, out_spec)


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``func`` of one example, vectorised over a batch dimension of its inputs.

    ``in_dims`` says which dimension of each input is the batch (None: not batched; an int for
    all, or a tuple matching the arguments, nested like them); ``out_dims`` where the batch goes
    in each output. Inside, ``func`` sees tensors without the batch dimension; each op carries
    it by its batching rule (ops without one run once per example). ``randomness``: "error"
    refuses random ops, "different" draws independently per example, "same" the same draws for
    every example. ``chunk_size`` runs the batch in pieces of that size.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import vmap
        >>> vmap(torch.dot)(torch.ones(3, 2), torch.tensor([[1.0, 2.0]] * 3))
        tensor([3., 3., 3.])
    """
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if chunk_size is not None:
            return _run_chunked(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
        return _run(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapper
