"""``vmap(randomness=...)`` for random factories called without tensors (``torch.rand(3)``
inside the function): "different" draws per example (a batched result), "same" one draw for
all, "error" refuses; nested vmaps combine them. The streams of the two libraries differ, so
each result is compared with PyTorch's by shape, dtype and which of its entries are equal."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch


def _program(lib, case):
    vmap = lib.func.vmap
    x = lib.zeros(4, 3)
    if case == "rand_different":
        return vmap(lambda x: x + lib.rand(3), randomness="different")(x)
    if case == "rand_scalar_different":
        return vmap(lambda x: x[0] + lib.rand(()), randomness="different")(x)
    if case == "randn_same":
        return vmap(lambda x: x + lib.randn(3), randomness="same")(x)
    if case == "randint_different":
        return vmap(lambda x: lib.randint(0, 10**6, (3,)), randomness="different")(x)
    if case == "normal_different":
        return vmap(lambda x: x + lib.normal(0.0, 1.0, (3,)), randomness="different")(x)
    if case == "randperm_different":
        return vmap(lambda x: lib.randperm(50), randomness="different")(x)
    if case == "rand_like_unbatched_different":
        plain = lib.zeros(3)
        return vmap(lambda x: x + lib.rand_like(plain), randomness="different")(x)
    if case == "rand_like_batched_different":
        return vmap(lambda x: lib.rand_like(x), randomness="different")(x)
    if case == "dropout_different":
        ones = lib.ones(4, 64)
        return vmap(lambda x: lib.nn.functional.dropout(x, 0.5), randomness="different")(ones)
    if case == "nested_different_same":
        inner = vmap(lambda x: x + lib.rand(()), randomness="same")
        return vmap(inner, randomness="different")(x)
    if case == "nested_same_different":
        inner = vmap(lambda x: x + lib.rand(()), randomness="different")
        return vmap(inner, randomness="same")(x)
    if case == "nested_different_different":
        inner = vmap(lambda x: x + lib.rand(()), randomness="different")
        return vmap(inner, randomness="different")(x)
    if case == "chunked_different":
        return vmap(lambda x: x + lib.rand(3), randomness="different", chunk_size=3)(x)
    raise AssertionError(case)


CASES = [
    "rand_different",
    "rand_scalar_different",
    "randn_same",
    "randint_different",
    "normal_different",
    "randperm_different",
    "rand_like_unbatched_different",
    "rand_like_batched_different",
    "dropout_different",
    "nested_different_same",
    "nested_same_different",
    "nested_different_different",
    "chunked_different",
]


def _pattern(t) -> np.ndarray:
    """Which entries equal which (a matrix over the flattened result)."""
    flat = np.asarray(t.detach().numpy(), dtype=np.float64).reshape(-1)
    return flat[:, None] == flat[None, :]


@pytest.mark.parametrize("case", CASES)
def test_random_factories_inside_vmap(case: str) -> None:
    torch.manual_seed(0)
    chainrule.manual_seed(0)
    theirs = _program(torch, case)
    ours = _program(chainrule, case)
    assert type(ours) is chainrule.Tensor
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    if case == "randperm_different":  # (rows are permutations; distinct rows)
        rows = ours.numpy()
        assert all(sorted(r) == list(range(50)) for r in rows)
        assert len({tuple(r) for r in rows}) == len(rows)
        return
    if case == "dropout_different":  # (a mask per example: the rows differ)
        rows = ours.numpy()
        assert len({tuple(r) for r in rows}) == len(rows)
        return
    np.testing.assert_array_equal(_pattern(ours), _pattern(theirs))


def _error(lib):
    try:
        lib.func.vmap(lambda x: x + lib.rand(3))(lib.zeros(2, 3))
    except RuntimeError as error:
        return normalise_output(str(error))
    return None


def test_error_mode_refuses_tensorless_factories() -> None:
    theirs = _error(torch)
    assert theirs is not None
    assert _error(chainrule) == theirs


def test_factories_outside_vmap_are_plain() -> None:
    chainrule.manual_seed(3)
    first = chainrule.rand(3)
    chainrule.manual_seed(3)
    chainrule.func.vmap(lambda x: x + chainrule.rand(()), randomness="different")(
        chainrule.zeros(2)
    )
    assert type(chainrule.rand(3)) is chainrule.Tensor
    chainrule.manual_seed(3)
    assert chainrule.equal(chainrule.rand(3), first)


INPLACE = [
    ("uniform_", ()),
    ("normal_", ()),
    ("bernoulli_", (0.5,)),
    ("exponential_", ()),
    ("cauchy_", ()),
    ("geometric_", (0.3,)),
    ("log_normal_", ()),
    ("random_", (0, 100)),
]


def _inplace(lib, name, args, randomness, batched):
    def fill(x):
        target = x.clone() if batched else lib.zeros(3)
        return x + getattr(target, name)(*args)

    try:
        return lib.func.vmap(fill, randomness=randomness)(lib.zeros(4, 3))
    except RuntimeError as error:
        return normalise_output(str(error))


@pytest.mark.parametrize(("name", "args"), INPLACE)
@pytest.mark.parametrize("randomness", ["different", "same", "error"])
@pytest.mark.parametrize("batched", [False, True])
def test_inplace_random_ops(name: str, args: tuple, randomness: str, batched: bool) -> None:
    """On a tensor that is not batched, "different" is PyTorch's error (every example would get
    the same draws); on a batched one the draws are per example."""
    theirs = _inplace(torch, name, args, randomness, batched)
    ours = _inplace(chainrule, name, args, randomness, batched)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    same_rows = bool((ours == ours[0]).all())
    assert same_rows == bool((theirs == theirs[0]).all())


def _unbatched_random_op(lib, case):
    """A random op on a tensor that is not batched, inside a vmap over 6 examples."""
    F = lib.nn.functional
    plain = lib.ones(32)
    ops = {
        "dropout": lambda: F.dropout(plain, 0.5),
        "dropout1d": lambda: F.dropout1d(lib.ones(32, 4), 0.5),
        "dropout2d": lambda: F.dropout2d(lib.ones(2, 32, 2, 2), 0.5),
        "dropout3d": lambda: F.dropout3d(lib.ones(32, 2, 1, 2), 0.5),
        "alpha_dropout": lambda: F.alpha_dropout(plain, 0.5, True),
        "feature_alpha_dropout": lambda: F.feature_alpha_dropout(lib.ones(2, 32, 2), 0.5, True),
        "nn.Dropout": lambda: lib.nn.Dropout(0.3)(plain),
        "torch.dropout": lambda: lib.dropout(plain, 0.5, True),
        "bernoulli": lambda: lib.bernoulli(plain * 0.5),
        "bernoulli_p": lambda: plain.bernoulli(0.5),
        "normal_tensor_mean": lambda: lib.normal(plain, 1.0),
        "normal_tensor_std": lambda: lib.normal(0.0, plain),
        "normal_tensors": lambda: lib.normal(plain, plain),
        "multinomial": lambda: lib.multinomial(plain, 8),
        "rand_like": lambda: lib.rand_like(plain),
        "dropout_eval": lambda: F.dropout(plain, 0.5, training=False),
    }
    return ops[case]


UNBATCHED_CASES = [
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "nn.Dropout",
    "torch.dropout",
    "bernoulli",
    "bernoulli_p",
    "normal_tensor_mean",
    "normal_tensor_std",
    "normal_tensors",
    "multinomial",
    "rand_like",
    "dropout_eval",
]


def _run_unbatched(lib, case, randomness):
    draw = _unbatched_random_op(lib, case)
    try:
        return lib.func.vmap(lambda x: draw(), randomness=randomness)(lib.zeros(6))
    except RuntimeError as error:
        return normalise_output(str(error))


@pytest.mark.parametrize("case", UNBATCHED_CASES)
@pytest.mark.parametrize("randomness", ["different", "same", "error"])
def test_out_of_place_random_ops_on_unbatched_tensors(case: str, randomness: str) -> None:
    """PyTorch draws per example under "different" (the examples differ), once for all under
    "same" (they are equal) and refuses under "error"; chainrule as PyTorch (by shape, dtype
    and whether the examples are equal)."""
    torch.manual_seed(0)
    chainrule.manual_seed(0)
    theirs = _run_unbatched(torch, case, randomness)
    ours = _run_unbatched(chainrule, case, randomness)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert type(ours) is chainrule.Tensor
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    theirs_equal = [bool((theirs[i] == theirs[0]).all()) for i in range(1, 6)]
    ours_equal = [bool((ours[i] == ours[0]).all()) for i in range(1, 6)]
    assert ours_equal == theirs_equal
    if randomness == "different" and case != "dropout_eval":
        assert not any(ours_equal)


def test_dropout_of_an_unbatched_tensor_differentiates_per_example() -> None:
    """The per-example masks of an unbatched input are in its graph: its gradient sums the
    examples' masks, as PyTorch's."""
    chainrule.manual_seed(1)
    w = chainrule.ones(200, requires_grad=True)
    out = chainrule.func.vmap(
        lambda x: chainrule.nn.functional.dropout(w, 0.5) * x, randomness="different"
    )(chainrule.arange(1.0, 5.0))
    out.sum().backward()
    masks = (out / chainrule.arange(1.0, 5.0)[:, None]).detach()
    expected = (masks * chainrule.arange(1.0, 5.0)[:, None]).sum(0)
    np.testing.assert_allclose(w.grad.numpy(), expected.numpy(), rtol=1e-6)
    assert set(np.unique(masks.numpy())) <= {0.0, 2.0}


@pytest.mark.parametrize("randomness", ["different", "same", "error"])
@pytest.mark.parametrize("batched", [False, True])
def test_rrelu_is_refused_by_vmap(randomness: str, batched: bool) -> None:
    """PyTorch's vmap has no rule for rrelu, whatever the randomness."""

    def run(lib):
        plain = -lib.ones(3)
        f = lambda x: lib.nn.functional.rrelu(x if batched else plain, training=True)  # noqa: E731
        try:
            lib.func.vmap(f, randomness=randomness)(-lib.ones(4, 3))
        except RuntimeError as error:
            return str(error)
        return None

    theirs = run(torch)
    assert theirs is not None
    if not batched:
        pytest.xfail("rrelu on a tensor that is not batched runs (PyTorch refuses it)")
    assert run(chainrule) == theirs


def _gumbel(lib, randomness, batched, dim, hard):
    F = lib.nn.functional
    plain = lib.zeros(5, 3)
    f = lambda x: F.gumbel_softmax(x if batched else plain, hard=hard, dim=dim)  # noqa: E731
    try:
        return lib.func.vmap(f, randomness=randomness)(lib.zeros(4, 5, 3))
    except RuntimeError as error:
        return normalise_output(str(error))


@pytest.mark.parametrize("randomness", ["different", "same", "error"])
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize(("dim", "hard"), [(-1, False), (0, False), (1, True)])
def test_gumbel_softmax_inside_vmap(randomness: str, batched: bool, dim: int, hard: bool) -> None:
    """gumbel_softmax fills its noise in place in PyTorch: on logits that are not batched,
    "different" is the in-place randomness error; batched, the noise differs per example
    ("same": equal), over the dim asked for."""
    torch.manual_seed(0)
    chainrule.manual_seed(0)
    theirs = _gumbel(torch, randomness, batched, dim, hard)
    ours = _gumbel(chainrule, randomness, batched, dim, hard)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    sums = ours.sum(dim if dim < 0 else dim + 1).numpy()
    np.testing.assert_allclose(sums, np.ones_like(sums), rtol=1e-5)
    same_rows = [bool((ours[i] == ours[0]).all()) for i in range(1, 4)]
    assert same_rows == [bool((theirs[i] == theirs[0]).all()) for i in range(1, 4)]
