"""In-place ops that write a batched value into a tensor ``vmap`` does not batch raise PyTorch's
errors, type and text; and in-place methods on a plain tensor hand themselves to an argument's
``__torch_function__`` as PyTorch's do.

``y.mul_(x)`` with ``y`` plain and ``x`` batched never reached the batching rules: the in-place
method computed the out-of-place op and read the batched values, so chainrule raised its own
"read the values of a batched tensor" error (and ``index_add_`` went through the per-example
loop and wrote into ``y``, silently). PyTorch has four messages: "inplace arithmetic" (binary
point-wise rules, ``copy_``, ``masked_fill_`` with a batched mask, ``a[i] = b``), the op's own
name (``index_add_``, ``fill_``, ``index_fill_``), ``aten::<op>`` "at level N" (its boxed
fallback; N counts every running transform), and for ``add_`` a broadcast error with the batch
size leading the other operand's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _index(lib: Any) -> Any:
    return lib.tensor([0, 1])


WRITES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add_": lambda lib, y, x: y.add_(x),
    "add_alpha": lambda lib, y, x: y.add_(x, alpha=2),
    "iadd": lambda lib, y, x: y.__iadd__(x),
    "add_into_view": lambda lib, y, x: y[0:1].add_(x[0:1]),
    "add_into_reshaped_view": lambda lib, y, x: y.view(2, 1).add_(x.view(2, 1)),
    "atan2_": lambda lib, y, x: y.atan2_(x),
    "copysign_": lambda lib, y, x: y.copysign_(x),
    "sub_": lambda lib, y, x: y.sub_(x),
    "sub_alpha": lambda lib, y, x: y.sub_(x, alpha=2),
    "mul_": lambda lib, y, x: y.mul_(x),
    "imul": lambda lib, y, x: y.__imul__(x),
    "mul_into_view": lambda lib, y, x: y.view(2, 1).mul_(x.view(2, 1)),
    "div_": lambda lib, y, x: y.div_(x),
    "itruediv": lambda lib, y, x: y.__itruediv__(x),
    "true_divide_": lambda lib, y, x: y.true_divide_(x),
    "multiply_": lambda lib, y, x: y.multiply_(x),
    "copy_": lambda lib, y, x: y.copy_(x),
    "masked_fill_batched_mask": lambda lib, y, x: y.masked_fill_(x > 0, 1.0),
    "masked_fill_batched_value": lambda lib, y, x: y.masked_fill_(y > 0, x[0]),
    "setitem": lambda lib, y, x: y.__setitem__(0, x[0]),
    "setitem_slice": lambda lib, y, x: y.__setitem__(slice(None), x),
    "clamp_min": lambda lib, y, x: y.clamp_(min=x),
    "clamp_max": lambda lib, y, x: y.clamp_(max=x),
    "addcmul_": lambda lib, y, x: y.addcmul_(x, x),
    "addcdiv_": lambda lib, y, x: y.addcdiv_(x, x),
    "pow_": lambda lib, y, x: y.pow_(x),
    "lerp_": lambda lib, y, x: y.lerp_(x, 0.5),
    "fmod_": lambda lib, y, x: y.fmod_(x),
    "hypot_": lambda lib, y, x: y.hypot_(x),
    "index_add_": lambda lib, y, x: y.index_add_(0, _index(lib), x),
    "index_copy_": lambda lib, y, x: y.index_copy_(0, _index(lib), x),
    "index_fill_": lambda lib, y, x: y.index_fill_(0, lib.tensor([0]), x[0]),
    "fill_": lambda lib, y, x: y.fill_(x[0]),
    "scatter_": lambda lib, y, x: y.scatter_(0, _index(lib), x),
    "logical_and_": lambda lib, y, x: y.logical_and_(x),
}


def _error(run: Callable[[Any], Any], lib: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        run(lib)
    return type(info.value).__name__, str(info.value)


def _assert_same_error(run: Callable[[Any], Any]) -> None:
    ours, theirs = _error(run, chainrule), _error(run, torch)
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(WRITES))
def test_write_into_unbatched_argument(name: str) -> None:
    write = WRITES[name]

    def run(lib: Any) -> Any:
        body = lambda x, y: write(lib, y, x)  # noqa: E731
        return lib.func.vmap(body, in_dims=(0, None))(lib.ones(3, 2) * 0.5, lib.ones(2))

    _assert_same_error(run)


@pytest.mark.parametrize("name", ["add_", "mul_", "copy_", "setitem", "clamp_min", "index_add_"])
def test_write_into_a_closure_tensor(name: str) -> None:
    write = WRITES[name]

    def run(lib: Any) -> Any:
        y = lib.ones(2)
        return lib.func.vmap(lambda x: write(lib, y, x))(lib.ones(3, 2) * 0.5)

    _assert_same_error(run)


@pytest.mark.parametrize("name", ["add_", "mul_", "copy_", "setitem", "clamp_min", "pow_"])
def test_write_under_vmap_of_grad(name: str) -> None:
    """A tensor made inside ``f`` is not batched: the per-example shapes, and the levels."""
    write = WRITES[name]

    def run(lib: Any) -> Any:
        def f(x: Any) -> Any:
            y = lib.zeros(2)
            write(lib, y, x * 0.5)
            return y.sum()

        return lib.func.vmap(lib.func.grad(f))(lib.ones(3, 2))

    _assert_same_error(run)


@pytest.mark.parametrize(
    "nesting",
    ["vmap_vmap", "grad_vmap", "vmap_grad"],
)
def test_fallback_message_names_pytorchs_level(nesting: str) -> None:
    """``aten::clamp_ ... at level N``: N counts grad transforms as well as vmaps."""

    def run(lib: Any) -> Any:
        inner = lambda x, y: y.clamp_(min=x)  # noqa: E731
        if nesting == "vmap_vmap":
            twice = lib.func.vmap(lib.func.vmap(inner, in_dims=(0, None)), in_dims=(0, None))
            return twice(lib.ones(2, 2, 1), lib.ones(1))
        if nesting == "grad_vmap":
            vmapped = lib.func.vmap(inner, in_dims=(0, None))
            return lib.func.grad(lambda z: vmapped(z, lib.ones(1)).sum())(lib.ones(2, 1))
        grad = lib.func.grad(lambda x, y: inner(x, y).sum())
        return lib.func.vmap(grad, in_dims=(0, None))(lib.ones(2, 1), lib.ones(1))

    _assert_same_error(run)


def test_unbatched_write_changes_nothing() -> None:
    """Refused before anything is written (index_add_ used to run per example into ``y``)."""
    y = chainrule.ones(2)
    with pytest.raises(RuntimeError, match="index_add_"):
        chainrule.func.vmap(lambda x: y.index_add_(0, chainrule.tensor([0, 1]), x))(
            chainrule.ones(3, 2)
        )
    assert y.tolist() == [1.0, 1.0]


def _dispatched_names(lib: Any) -> list[str]:
    """The ``func`` names a logging subclass sees for in-place methods on a plain tensor, and
    the values written."""
    names: list[str] = []

    class Logged(lib.Tensor):  # type: ignore[name-defined,misc]
        @classmethod
        def __torch_function__(
            cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            names.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    s = lib.ones(2).as_subclass(Logged)
    y = lib.ones(2)
    y.mul_(s)
    y.add_(s, alpha=2)
    y.copy_(s)
    y.clamp_(min=s)
    y.masked_fill_(lib.tensor([True, False]), 1.0)
    y.addcmul_(s, s)
    y.fill_(lib.tensor(2.0).as_subclass(Logged))
    y += s  # (y is a Logged from here on, in PyTorch too)
    y *= s
    y.lerp_(s, 0.5)
    return [*names, *map(str, y.tolist())]


def test_in_place_methods_dispatch_to_an_argument_subclass() -> None:
    """``plain.mul_(sub)`` hands ``Tensor.mul_`` to ``sub``'s ``__torch_function__``, and
    ``a *= b`` dispatches as ``mul_``."""
    assert _dispatched_names(chainrule) == _dispatched_names(torch)


OUT_CALLS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda lib, x, y: lib.add(x, x, out=y),
    "add_number": lambda lib, x, y: lib.add(x, 1, out=y),
    "mul": lambda lib, x, y: lib.mul(x, 2, out=y),
    "sub": lambda lib, x, y: lib.sub(x, 1, out=y),
    "exp": lambda lib, x, y: lib.exp(x, out=y),
    "clamp": lambda lib, x, y: lib.clamp(x, 0, 1, out=y),
}


@pytest.mark.parametrize("out_batched", [True, False])
@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_argument_refused_under_vmap(name: str, out_batched: bool) -> None:
    """``out=`` under vmap: PyTorch's "Batching rule not implemented for aten::<op>.out";
    chainrule resized an unbatched ``out`` to the batch (silently) or failed in NumPy."""
    call_with_out = OUT_CALLS[name]

    def run(lib: Any) -> Any:
        out = lib.zeros(3, 2) if out_batched else lib.zeros(2)
        dims = (0, 0 if out_batched else None)
        body = lambda x, y: call_with_out(lib, x, y)  # noqa: E731
        return lib.func.vmap(body, in_dims=dims)(lib.ones(3, 2), out)

    _assert_same_error(run)


def test_unbatched_out_keeps_its_shape() -> None:
    out = chainrule.zeros(2)
    with pytest.raises(RuntimeError, match=r"aten::add\.out"):
        chainrule.func.vmap(lambda x: chainrule.add(x, x, out=out))(chainrule.ones(3, 2))
    assert tuple(out.shape) == (2,)
    assert out.tolist() == [0.0, 0.0]


def _out_dispatch(lib: Any) -> list[tuple[str, list[str]]]:
    seen: list[tuple[str, list[str]]] = []

    class Logged(lib.Tensor):  # type: ignore[name-defined,misc]
        @classmethod
        def __torch_function__(
            cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            seen.append((func.__name__, sorted(kwargs or {})))
            return super().__torch_function__(func, types, args, kwargs or {})

    s = lib.ones(2).as_subclass(Logged)
    plain = lib.zeros(2)
    lib.exp(s, out=plain)
    lib.mul(s, 2, out=plain)
    lib.exp(plain, out=lib.zeros(2).as_subclass(Logged))
    return seen


def test_out_is_among_the_arguments_a_subclass_sees() -> None:
    """PyTorch passes ``out=`` to ``__torch_function__`` (and dispatches on ``out``'s type)."""
    assert _out_dispatch(chainrule) == _out_dispatch(torch)


BROADCAST_WRITES: dict[str, Callable[[Any, Any], Any]] = {
    "add_": lambda y, o: y.add_(o),
    "add_alpha": lambda y, o: y.add_(o, alpha=2),
    "sub_": lambda y, o: y.sub_(o),
    "mul_": lambda y, o: y.mul_(o),
    "div_": lambda y, o: y.div_(o),
    "copy_": lambda y, o: y.copy_(o),
    "iadd": lambda y, o: y.__iadd__(o),
    "imul": lambda y, o: y.__imul__(o),
    "atan2_": lambda y, o: y.atan2_(o),
    "masked_fill_": lambda y, o: y.masked_fill_(o > 0, 1.0),
    "logical_and_": lambda y, o: y.logical_and_(o),
    "clamp_min": lambda y, o: y.clamp_(min=o),
    "clamp_max": lambda y, o: y.clamp_(max=o),
    "clamp_both": lambda y, o: y.clamp_(o, o),
    "addcmul_": lambda y, o: y.addcmul_(o, o),
    "pow_": lambda y, o: y.pow_(o),
    "lerp_": lambda y, o: y.lerp_(o, 0.5),
    "fmod_": lambda y, o: y.fmod_(o),
}


@pytest.mark.parametrize("other_batched", [False, True])
@pytest.mark.parametrize("name", sorted(BROADCAST_WRITES))
def test_batched_self_broadcast_by_a_larger_operand(name: str, other_batched: bool) -> None:
    """``self`` of each example is broadcast by ``other``: PyTorch's rules of their own name
    the physical shapes (``[2, 1, 3]`` and ``[2, 4, 3]``), its fallback the logical ones; and
    ``clamp_(min=t)`` keeps its keyword (chainrule said "At least one of 'min' or 'max' must
    not be None")."""
    write = BROADCAST_WRITES[name]

    def run(lib: Any) -> Any:
        if other_batched:
            body = lambda x, o: write(x * 1, o)  # noqa: E731
            return lib.func.vmap(body)(lib.ones(2, 3), lib.ones(2, 4, 3) * 0.5)
        other = lib.ones(4, 3) * 0.5
        return lib.func.vmap(lambda x: write(x * 1, other))(lib.ones(2, 3))

    _assert_same_error(run)


@pytest.mark.parametrize("name", ["add_", "mul_", "clamp_min", "pow_"])
def test_batched_self_broadcast_under_vmap_of_grad(name: str) -> None:
    write = BROADCAST_WRITES[name]

    def run(lib: Any) -> Any:
        f = lambda x: write(x * 1, lib.ones(4, 3) * 0.5).sum()  # noqa: E731
        return lib.func.vmap(lib.func.grad(f))(lib.ones(2, 3))

    _assert_same_error(run)


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4)])
@pytest.mark.parametrize(
    "index",
    [5, -4, (0, 0, 0), (Ellipsis, 7), (slice(1, None), 9), (None, 3), (0, Ellipsis, 9)],
    ids=str,
)
def test_index_errors_name_per_example_dimensions(index: Any, shape: tuple[int, ...]) -> None:
    """``x[5]`` under vmap: "out of bounds for dimension 0" as PyTorch, not the dimension of the
    batched values (chainrule said dimension 1)."""

    def run(lib: Any) -> Any:
        return lib.func.vmap(lambda x: x[index])(lib.ones(*shape))

    _assert_same_error(run)


MASKED_FILLS: dict[str, Callable[[Any], Any]] = {
    "in_place_mask_too_long": lambda lib: lib.ones(2, 3).masked_fill_(
        lib.ones(4, dtype=lib.bool), 0
    ),
    "in_place_mask_rows": lambda lib: lib.ones(2, 3).masked_fill_(
        lib.ones(5, 3, dtype=lib.bool), lib.tensor(0.0)
    ),
    "in_place_value_rank_first": lambda lib: lib.ones(2, 3).masked_fill_(
        lib.ones(4, dtype=lib.bool), lib.ones(2)
    ),
    "in_place_broadcasting_self": lambda lib: lib.ones(3).masked_fill_(
        lib.ones(2, 3, dtype=lib.bool), 0
    ),
    "out_of_place_mask_too_long": lambda lib: lib.ones(2, 3).masked_fill(
        lib.ones(4, dtype=lib.bool), 0
    ),
    "out_of_place_shape_first": lambda lib: lib.ones(2, 3).masked_fill(
        lib.ones(4, dtype=lib.bool), lib.ones(2)
    ),
    "under_vmap_grad": lambda lib: lib.func.vmap(
        lib.func.grad(lambda x: (x * 1).masked_fill_(lib.ones(4, dtype=lib.bool), 0).sum())
    )(lib.ones(2, 3)),
}


@pytest.mark.parametrize("name", sorted(MASKED_FILLS))
def test_masked_fill_errors_in_pytorchs_order(name: str) -> None:
    """In place, PyTorch checks the value's rank, then broadcasts ``self`` ("tensor a") with
    the mask; out of place the mask comes first. chainrule named the mask "tensor a" in both."""
    _assert_same_error(MASKED_FILLS[name])


MATMUL_SHAPES = [
    ((3,), (4,)),
    ((2, 3), (4,)),
    ((5, 2, 3), (4,)),
    ((5, 2, 3), (4, 2)),
    ((5, 2, 3), (7, 4, 2)),
    ((4, 1, 2, 3), (2, 7, 3, 2)),
    ((2, 3), (3, 2)),
    ((5, 2, 3), (5, 3, 2)),
]


@pytest.mark.parametrize("batched", ["a", "b", "both"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_shape_errors_as_pytorch(shapes: tuple, batched: str) -> None:
    """``a @ b`` under vmap whose shapes do not multiply: PyTorch's message is that of its
    decomposition ("size mismatch, got input (20), mat (20x3), vec (4)", "mat1 and mat2 shapes
    cannot be multiplied (2x3 and 4x2)", bmm's, or the logical batch dims' broadcast error);
    chainrule gave its own product's (other shapes, other dims)."""
    a_shape, b_shape = shapes

    def run(lib: Any) -> Any:
        a = lib.ones(2, *a_shape) if batched != "b" else lib.ones(*a_shape)
        b = lib.ones(2, *b_shape) if batched != "a" else lib.ones(*b_shape)
        dims = (None if batched == "b" else 0, None if batched == "a" else 0)
        return lib.func.vmap(lambda x, y: x @ y, in_dims=dims)(a, b)

    try:
        expected = run(torch)
    except RuntimeError:
        _assert_same_error(run)
    else:
        np.testing.assert_array_equal(run(chainrule).numpy(), expected.numpy())
