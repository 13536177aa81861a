"""Findings of a random-program probe of ``chainrule.func`` against ``torch.func``.

Each case runs the same program under PyTorch and chainrule and compares values, shapes and
dtypes (or the exception type and message).
"""

import numpy as np
import pytest
import torch

import chainrule as cr


def _compare(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        assert type(b).__name__ == type(a).__name__
        for x, y in zip(a, b, strict=True):
            _compare(x, y)
        return
    assert isinstance(b, cr.Tensor)
    assert tuple(b.shape) == tuple(a.shape)
    assert str(b.dtype).split(".")[-1] == str(a.dtype).split(".")[-1]
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-9, equal_nan=True)


def _both(fn, array, **vmap_kwargs):
    expected = torch.func.vmap(lambda t: fn(torch, t), **vmap_kwargs)(torch.tensor(array))
    got = cr.func.vmap(lambda t: fn(cr, t), **vmap_kwargs)(cr.tensor(array))
    _compare(expected, got)


_EMPTY_DIM_REDUCTIONS = {
    "sum": lambda L, t, d, k: L.sum(t, d, keepdim=k),
    "mean": lambda L, t, d, k: L.mean(t, d, keepdim=k),
    "nansum": lambda L, t, d, k: L.nansum(t, d, keepdim=k),
    "nanmean": lambda L, t, d, k: L.nanmean(t, d, keepdim=k),
    "amax": lambda L, t, d, k: L.amax(t, d, keepdim=k),
    "amin": lambda L, t, d, k: L.amin(t, d, keepdim=k),
    "std": lambda L, t, d, k: L.std(t, d, keepdim=k),
    "var": lambda L, t, d, k: L.var(t, d, keepdim=k, correction=0),
    "std_mean": lambda L, t, d, k: L.std_mean(t, d, keepdim=k),
    "var_mean": lambda L, t, d, k: L.var_mean(t, d, keepdim=k),
    "count_nonzero": lambda L, t, d, k: L.count_nonzero(t, d),
    "norm": lambda L, t, d, k: L.norm(t, 2, d, keepdim=k),
    "vector_norm": lambda L, t, d, k: L.linalg.vector_norm(t, 2, d, keepdim=k),
    "logsumexp": lambda L, t, d, k: L.logsumexp(t, d, keepdim=k),
    "all": lambda L, t, d, k: L.all(t > 5, d, keepdim=k),
    "any": lambda L, t, d, k: L.any(t > 5, d, keepdim=k),
}


@pytest.mark.parametrize("name", sorted(_EMPTY_DIM_REDUCTIONS))
@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 4, 2)])
@pytest.mark.parametrize("dim", [(), []])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("in_dims", [0, -1])
def test_empty_dim_list_reduces_the_example_not_the_batch(name, shape, dim, keepdim, in_dims):
    """``sum(x, ())`` & co. reduce every dim of each example (they reduced the batch too)."""
    array = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    reduction = _EMPTY_DIM_REDUCTIONS[name]
    _both(lambda L, t: reduction(L, t, dim, keepdim), array, in_dims=in_dims)


@pytest.mark.parametrize("name", ["amax", "amin", "max", "min", "sum", "mean", "prod"])
@pytest.mark.parametrize("in_dims", [0, 1, -1])
def test_full_reduction_without_dim(name, in_dims):
    """``amax(t)`` (default dim ``()``) is one value per example: it was one for the batch."""
    array = np.array([[1.0, -2.0, 3.5], [4.0, 0.5, -6.0]])
    _both(lambda L, t: getattr(L, name)(t), array, in_dims=in_dims)


def test_program_with_full_amax_in_a_vmap_of_two_inputs():
    """The probe's program (seed 1, case 453): an in_dims=(-4, 0) vmap ending in amax()."""
    rng = np.random.default_rng(453)
    xb, wb = rng.standard_normal((2, 3, 2, 3)), rng.standard_normal((2, 3, 2, 3))

    def program(L, a, b):
        t = a[:, ::2].index_select(0, L.tensor([0, 2]))
        t = L.diagonal(t).flip(-1).sin() * b.sum()
        return L.amax(t)

    expected = torch.func.vmap(lambda a, b: program(torch, a, b), in_dims=(-4, 0))(
        torch.tensor(np.moveaxis(xb, 0, -4)), torch.tensor(wb)
    )
    got = cr.func.vmap(lambda a, b: program(cr, a, b), in_dims=(-4, 0))(
        cr.tensor(np.moveaxis(xb, 0, -4)), cr.tensor(wb)
    )
    _compare(expected, got)


@pytest.mark.parametrize("with_dim", [False, True])
def test_aminmax_returns_its_struct_sequence(with_dim):
    """vmap of aminmax returns ``return_types.aminmax`` (rebuilding it raised TypeError)."""
    array = np.array([[1.0, -2.0, 3.5], [4.0, 0.5, -6.0]])

    def fn(L, t):
        return L.aminmax(t, dim=0) if with_dim else L.aminmax(t)

    _both(fn, array)
    expected = torch.func.vmap(lambda t: fn(torch, t))(torch.tensor(array))
    got = cr.func.vmap(lambda t: fn(cr, t))(cr.tensor(array))
    assert (got.min.shape, got.max.shape) == (expected.min.shape, expected.max.shape)


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
def test_mean_pairs_of_scalar_examples_keep_their_rank(name):
    """std_mean/var_mean of 0-d examples with keepdim: each result is 0-d per example."""
    array = np.array([1.0, 2.0, 4.0])
    _both(lambda L, t: getattr(L, name)(t, 0, keepdim=True), array)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as error:  # noqa: BLE001 (the exception is what is compared)
        return "raised", type(error).__name__, str(error).split("\n")[0]


_SCALAR_EXAMPLE_OPS = {
    "select": lambda L, t, d: t.select(d, 0),
    "unbind": lambda L, t, d: t.unbind(d),
    "split": lambda L, t, d: t.split(1, d),
    "diagonal": lambda L, t, d: t.diagonal(0, d, 0),
    "roll": lambda L, t, d: L.roll(t, 1, d),
    "narrow": lambda L, t, d: t.narrow(d, 0, 1),
    "chunk": lambda L, t, d: t.chunk(1, d),
    "tensor_split": lambda L, t, d: t.tensor_split(1, d),
    "transpose": lambda L, t, d: t.transpose(d, 0),
    "movedim": lambda L, t, d: L.movedim(t, d, 0),
    "flatten": lambda L, t, d: t.flatten(d),
    "gather": lambda L, t, d: t.gather(d, L.tensor(0)),
    "scatter_add": lambda L, t, d: t.scatter_add(d, L.tensor(0), t * 2),
    "max": lambda L, t, d: t.max(d),
    "median": lambda L, t, d: t.median(d),
    "nanmedian": lambda L, t, d: t.nanmedian(d),
    "sum": lambda L, t, d: t.sum(d),
    "cumsum": lambda L, t, d: t.cumsum(d),
    "softmax": lambda L, t, d: t.softmax(d),
    "index_select": lambda L, t, d: L.index_select(t, d, L.tensor([0])),
}


@pytest.mark.parametrize("name", sorted(_SCALAR_EXAMPLE_OPS))
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_dims_of_scalar_examples(name, dim):
    """Ops given a dim of 0-d examples: transpose/movedim returned a 1 x batch tensor, gather
    along -1 gathered across the batch, flatten kept 0-d (silent); select/unbind/split/
    diagonal/roll/narrow/chunk/tensor_split computed where PyTorch raises; max/median along
    a dim raised AttributeError."""
    op = _SCALAR_EXAMPLE_OPS[name]
    expected = _outcome(
        lambda: torch.func.vmap(lambda t: op(torch, t, dim))(torch.tensor([1.0, -2.0, 3.0]))
    )
    got = _outcome(lambda: cr.func.vmap(lambda t: op(cr, t, dim))(cr.tensor([1.0, -2.0, 3.0])))
    if expected[0] == "raised":
        assert got == expected
        return
    assert got[0] == "ok", got
    _compare(expected[1], got[1])


def test_transpose_of_a_scalar_example_in_a_program():
    """The probe's shape of the bug: a reduction to 0-d, then transpose, then matmul-free ops."""

    def program(L, t):
        s = t.sum(0)
        return (s.transpose(0, -1) * 2 + L.movedim(s, 0, 0)).exp()

    array = np.array([[0.5, 1.0], [2.0, -1.0], [0.0, 0.25]])
    _both(program, array, in_dims=1)
