"""``vmap``'s dispatch against ``torch.func.vmap``: the inputs it wraps and the element-wise
rule's one-pass alignment (positional operands of any rank, numbers, 0-d batched operands that
change type promotion, operands batched at an enclosing level, keyword arguments).

An input batched at dimension 0 is wrapped as it is (no view in between, as PyTorch wraps it):
the identity function returns the input itself, and an in-place op on a leaf that requires
grad raises PyTorch's message for a leaf, not for a view of one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import torch

RNG = np.random.default_rng(151)
A = RNG.standard_normal((4, 3, 2))
B = RNG.standard_normal((4, 2))
C = RNG.standard_normal(2)


def _both(make: Callable[[Any], Any]) -> tuple[Any, Any]:
    return make(chainrule), make(torch)


def _same(ours: Any, theirs: Any) -> None:
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape)
        tol = 1e-6 if a.dtype == chainrule.float32 else 1e-13  # (ulps of PyTorch's kernels)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# (name, function of lib, its arguments made from lib, in_dims)
CASES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], tuple], Any]] = {
    "batched_times_plain": (
        lambda lib: lambda a, c: a * c,
        lambda lib: (lib.tensor(A), lib.tensor(C)),
        (0, None),
    ),
    "plain_minus_batched": (
        lambda lib: lambda b, a: lib.sub(a, b),
        lambda lib: (lib.tensor(B), lib.tensor(A)),
        (0, 0),
    ),
    "lower_rank_batched_broadcast": (
        lambda lib: lambda a, b: lib.atan2(a, b),
        lambda lib: (lib.tensor(A), lib.tensor(B)),
        0,
    ),
    "numbers": (
        lambda lib: lambda a: lib.pow(a, 2) + 1.5 * a - 3,
        lambda lib: (lib.tensor(A),),
        0,
    ),
    "keyword_alpha": (
        lambda lib: lambda a, b: lib.add(a, b, alpha=2.5),
        lambda lib: (lib.tensor(A), lib.tensor(B)),
        0,
    ),
    "zero_dim_batched_with_float32": (
        lambda lib: lambda s, c: s * c,
        lambda lib: (lib.tensor(B[:, 0]), lib.tensor(C, dtype=lib.float32)),
        (0, None),
    ),
    "zero_dim_batched_int_with_float": (
        lambda lib: lambda s, c: lib.mul(c, s),
        lambda lib: (lib.tensor([1, 2, 3, 4]), lib.tensor(C, dtype=lib.float32)),
        (0, None),
    ),
    "unary_chain": (
        lambda lib: lambda a: a.tanh().exp().neg().abs().sqrt(),
        lambda lib: (lib.tensor(A),),
        0,
    ),
    "where_three_operands": (
        lambda lib: lambda a, b: lib.where(a > 0, a, b),
        lambda lib: (lib.tensor(A), lib.tensor(B)),
        (0, 0),
    ),
    "batched_at_dim_1": (
        lambda lib: lambda a, c: a.sin() * c,
        lambda lib: (lib.tensor(A), lib.tensor(C)),
        (1, None),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise_values_match_pytorch(name: str) -> None:
    make_f, make_args, in_dims = CASES[name]
    FALLBACK_COUNTS.clear()
    ours, theirs = _both(lambda lib: lib.func.vmap(make_f(lib), in_dims=in_dims)(*make_args(lib)))
    _same(ours, theirs)
    assert not FALLBACK_COUNTS


def _nested(lib: Any) -> Any:
    a, b = lib.tensor(A), lib.tensor(B)

    def inner(x: Any, y: Any) -> Any:
        # x batched at both levels, y at the outer one only: the element-wise rule of the
        # inner level meets operands batched at the outer level
        return (x * y + y.cos()) / (1 + x.abs())

    return lib.func.vmap(lib.func.vmap(inner, in_dims=(0, None)), in_dims=(0, 0))(a, b)


def test_nested_levels_match_pytorch() -> None:
    _same(*_both(_nested))


def test_nested_outer_operand_first_matches_pytorch() -> None:
    def make(lib: Any) -> Any:
        inner = lib.func.vmap(lambda y, x: lib.maximum(y, x) - y * x, in_dims=(None, 0))
        return lib.func.vmap(inner)(lib.tensor(B), lib.tensor(A))

    _same(*_both(make))


def test_identity_returns_the_input_itself() -> None:
    for lib in (chainrule, torch):
        x = lib.tensor(A)
        assert lib.func.vmap(lambda t: t)(x) is x
        leaf = lib.tensor(A, requires_grad=True)
        out = lib.func.vmap(lambda t: t)(leaf)
        assert out is leaf and out.is_leaf and out.grad_fn is None


def test_in_place_on_a_leaf_that_requires_grad_raises_the_leaf_message() -> None:
    messages = []
    for lib in (chainrule, torch):
        leaf = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(lambda t: t.add_(1))(leaf)
        messages.append(str(info.value))
        np.testing.assert_array_equal(leaf.detach().numpy(), A)  # unchanged
    assert messages[0] == messages[1]
    assert messages[0].startswith("a leaf Variable that requires grad")


def test_in_place_on_a_non_leaf_writes_the_input() -> None:
    results = []
    for lib in (chainrule, torch):
        base = lib.tensor(A, requires_grad=True)
        x = base * 1
        out = lib.func.vmap(lambda t: t.mul_(2))(x)
        assert out is x
        assert out._version == 1
        out.sum().backward()
        results.append((out, base.grad))
    _same(results[0][0], results[1][0])
    _same(results[0][1], results[1][1])


def _mlp_per_sample(lib: Any) -> Any:
    rng = np.random.default_rng(5)
    params = {
        "w1": lib.tensor(rng.standard_normal((8, 6)).astype(np.float32)),
        "b1": lib.tensor(rng.standard_normal(8).astype(np.float32)),
        "w2": lib.tensor(rng.standard_normal((3, 8)).astype(np.float32)),
    }
    x = lib.tensor(rng.standard_normal((5, 6)).astype(np.float32))
    labels = lib.tensor([0, 2, 1, 1, 0])
    F = lib.nn.functional

    def loss(p: dict[str, Any], sample: Any, target: Any) -> Any:
        h = F.relu(F.linear(sample.unsqueeze(0), p["w1"], p["b1"]))
        return F.cross_entropy(F.linear(h, p["w2"]), target.unsqueeze(0))

    grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, labels)
    return tuple(grads[k] for k in sorted(grads))


def test_per_sample_gradients_match_pytorch() -> None:
    ours, theirs = _both(_mlp_per_sample)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
