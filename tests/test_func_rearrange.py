"""``func.rearrange`` against ``torch.func.rearrange``: einops patterns (permutations, splits,
merges, ellipsis, axes of size 1, lists of tensors), values, dtypes, gradients and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(2)
X = RNG.standard_normal((2, 3, 4, 6))

CASES = [
    ("a b c d -> a b c d", {}),
    ("a b c d -> d c b a", {}),
    ("a b c d -> (a b) c d", {}),
    ("a b c d -> b (c a d)", {}),
    ("a b c (d1 d2) -> a d2 b c d1", {"d1": 2}),
    ("a b c (d1 d2) -> a d2 b c d1", {"d2": 3}),
    ("a b (c1 c2) (d1 d2) -> (a c1 d1) b c2 d2", {"c1": 2, "d1": 3}),
    ("a b c (d1 d2) -> a b c d1 d2", {"d1": 2, "d2": 3}),
    ("... d -> d ...", {}),
    ("a ... -> ... a", {}),
    ("a ... d -> (...) a d", {}),
    ("a b ... -> (a ...) b", {}),
    ("... -> ...", {}),
    ("a b c d -> a 1 b c d 1", {}),
    ("a b c d -> (a 1) (b c) 1 d", {}),
    ("a b c d -> a b c d ", {}),
    ("  a b  c d->a (b) c d", {}),
]


@pytest.mark.parametrize(("pattern", "lengths"), CASES)
def test_patterns(pattern: str, lengths: dict) -> None:
    ours = chainrule.func.rearrange(chainrule.tensor(X), pattern, **lengths)
    theirs = torch.func.rearrange(torch.tensor(X), pattern, **lengths)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, rtol=0, atol=0)


def test_unit_axes_on_the_left_and_dtypes() -> None:
    for dtype in ("float32", "int32", "bool"):
        data = (X.reshape(2, 1, 3, 24) > 0).astype(dtype)
        ours = chainrule.func.rearrange(chainrule.tensor(data), "a 1 b c -> c (b a)")
        theirs = torch.func.rearrange(torch.tensor(data), "a 1 b c -> c (b a)")
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert_close(ours, theirs, rtol=0, atol=0)


def test_list_of_tensors_and_zero_dim() -> None:
    parts = [X[0], X[1]]
    ours = chainrule.func.rearrange([chainrule.tensor(p) for p in parts], "n b c d -> b (n c) d")
    theirs = torch.func.rearrange([torch.tensor(p) for p in parts], "n b c d -> b (n c) d")
    assert_close(ours, theirs, rtol=0, atol=0)
    scalar = chainrule.func.rearrange(chainrule.tensor(2.5), " -> ")
    assert tuple(scalar.shape) == () and float(scalar) == 2.5


def _gradient(lib):
    x = lib.tensor(X, requires_grad=True)
    y = lib.func.rearrange(x, "a b (c1 c2) d -> (d c1) b a c2", c1=2)
    (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
    return x.grad


def test_gradient_and_vmap() -> None:
    assert_close(_gradient(chainrule), _gradient(torch), rtol=0, atol=0)
    ours = chainrule.func.vmap(lambda t: chainrule.func.rearrange(t, "b c d -> d (b c)"))(
        chainrule.tensor(X)
    )
    theirs = torch.func.vmap(lambda t: torch.func.rearrange(t, "b c d -> d (b c)"))(torch.tensor(X))
    assert_close(ours, theirs, rtol=0, atol=0)


ERRORS = [
    ("a b c (d1 d2) -> a b c d1 d2", {}),
    ("a b c (d1 d2) -> a b c d1 d2", {"d2": 4}),
    ("a b c d -> a b c d", {"d": 5}),
    ("a b c (d1 d2) -> a b c d1 d2", {"d1": 2, "d2": 2}),
    ("a b c -> a b c", {}),
    ("a b c d e ... -> a b c d e ...", {}),
    ("a b c d -> a b c", {}),
    ("a b c d -> a b c d e", {}),
    ("a b c d", {}),
    ("a b c d -> a b c d -> a", {}),
    ("a b c d -> a b c d", {"e": 2}),
    ("a a c d -> a c d", {}),
    ("a b c d -> a b c (d 2)", {}),
    ("a b c (d e) -> a b c d e", {"d": 2.0}),
    ("a b c d -> ((a b) c) d", {}),
    ("a b c d) -> a b c d", {}),
    ("(a b c d -> a b c d", {}),
    ("a b c d -> a b c d ...", {}),
    ("a (...) -> a", {}),
    ("a b c d. -> a b c d", {}),
    ("a b c .... -> a b c", {}),
    ("a b c d! -> a b c d", {}),
    ("a b c _d -> a b c _d", {}),
    ("a b c 0d -> a b c 0d", {}),
    ("a b c d -> a b c d", {"…": 2}),
]


def _error(lib, pattern, lengths):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.func.rearrange(lib.tensor(X), pattern, **lengths)
    except Exception as error:  # noqa: BLE001 - the type is compared
        return type(error).__name__, normalise_output(str(error))
    return None


@pytest.mark.parametrize(("pattern", "lengths"), ERRORS)
def test_errors(pattern: str, lengths: dict) -> None:
    theirs = _error(torch, pattern, lengths)
    assert theirs is not None
    assert _error(chainrule, pattern, lengths) == theirs
