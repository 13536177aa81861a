"""``func.hessian`` as PyTorch's: forward mode over reverse mode (``jacfwd(jacrev(f))``), the
backward formulas running on dual tensors. Values, dtypes, shapes and ``requires_grad`` against
``torch.func.hessian``, and the values against finite differences of the gradient (issue 15)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (chainrule, torch)


def _t(lib: Any, a: np.ndarray, **kwargs: Any) -> Any:
    return lib.tensor(
        a.tolist(), dtype=lib.float64 if a.dtype == np.float64 else lib.float32, **kwargs
    )


def _flat(x: Any) -> list[Any]:
    if isinstance(x, tuple | list):
        return [e for item in x for e in _flat(item)]
    if isinstance(x, dict):
        return [e for k in sorted(x) for e in _flat(x[k])]
    return [x]


def _compare(ours: Any, theirs: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    a, b = _flat(ours), _flat(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        assert x.requires_grad == y.requires_grad
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=rtol, atol=atol)


RNG = np.random.default_rng(15)
X3 = RNG.uniform(-1.5, 1.5, 3)
W = RNG.uniform(-1, 1, (4, 3))
B = RNG.uniform(-1, 1, 4)
XS = RNG.uniform(-1, 1, (5, 3))

# Scalar functions of one tensor (the tutorials' and a few whose backward formulas save
# their output, reduce, broadcast or index).
SCALAR_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "sin_times_x": lambda lib, x: (x.sin() * x).sum(),
    "cube": lambda lib, x: (x**3).sum(),
    "exp_tanh_sigmoid": lambda lib, x: x.exp().tanh().sigmoid().sum(),
    "softmax_dot": lambda lib, x: lib.nn.functional.softmax(x, 0) @ x,
    "log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x * 2, 0)[1],
    "norm": lambda lib, x: x.norm() ** 3,
    "prod": lambda lib, x: x.prod(),
    "outer": lambda lib, x: (x[:, None] * x[None, :]).sin().sum(),
    "logsumexp": lambda lib, x: x.logsumexp(0),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x).pow(2).sum(),
    "sqrt_abs": lambda lib, x: (x.abs() + 1).sqrt().sum(),
    "div": lambda lib, x: (x / (x * x + 1)).sum(),
    "matmul": lambda lib, x: (lib.outer(x, x) @ x.cos()).sum(),
    "max": lambda lib, x: (x * x.max()).sum(),
    "mean_var": lambda lib, x: x.var() * x.mean(),
    "cumsum": lambda lib, x: x.cumsum(0).exp().sum(),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_hessian_of_scalar_functions(name: str) -> None:
    f = SCALAR_FUNCTIONS[name]
    ours = chainrule.func.hessian(lambda x: f(chainrule, x))(_t(chainrule, X3))
    theirs = torch.func.hessian(lambda x: f(torch, x))(_t(torch, X3))
    _compare(ours, theirs)
    # and against central differences of PyTorch's gradient
    step = 1e-6
    g = torch.func.grad(lambda x: f(torch, x))
    columns = []
    for j in range(3):
        e = np.zeros(3)
        e[j] = step
        columns.append((g(_t(torch, X3 + e)) - g(_t(torch, X3 - e))).numpy() / (2 * step))
    np.testing.assert_allclose(ours.numpy(), np.stack(columns, 1), rtol=1e-5, atol=1e-6)


def _predict(lib: Any) -> Callable[..., Any]:
    def predict(weight: Any, bias: Any, x: Any) -> Any:
        return lib.nn.functional.linear(x, weight, bias).tanh()

    return predict


def test_tutorial_hessian_of_predict() -> None:
    """The Jacobians-and-Hessians tutorial: ``hessian(predict, argnums=2)`` and the same as
    ``jacfwd(jacrev(...))``, batched with vmap."""
    found = []
    for lib in LIBS:
        predict = _predict(lib)
        w, b, x = _t(lib, W), _t(lib, B), _t(lib, X3)
        h = lib.func.hessian(predict, argnums=2)(w, b, x)
        h2 = lib.func.jacfwd(lib.func.jacrev(predict, argnums=2), argnums=2)(w, b, x)
        xs = _t(lib, XS)
        batched = lib.func.vmap(lib.func.hessian(predict, argnums=2), in_dims=(None, None, 0))(
            w, b, xs
        )
        found.append((h, h2, batched))
    _compare(found[0], found[1])


def _mlp_params(sizes: tuple[int, ...], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        (rng.uniform(-0.8, 0.8, (n_out, n_in)), rng.uniform(-0.3, 0.3, n_out))
        for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True)
    ]


ACTIVATIONS = ("tanh", "softplus", "gelu", "sigmoid", "silu", "elu")


def _mlp(lib: Any, params: list[Any], activation: str) -> Callable[[Any], Any]:
    act = getattr(lib.nn.functional, activation)

    def f(x: Any) -> Any:
        h = x
        for k, (w, b) in enumerate(params):
            h = lib.nn.functional.linear(h, w, b)
            if k < len(params) - 1:
                h = act(h)
        return lib.nn.functional.log_softmax(h, -1)[..., 0].sum()

    return f


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("seed", [0, 1])
def test_hessian_of_random_mlps_in_the_input(activation: str, seed: int) -> None:
    sizes = (4, 6, 5, 3) if seed else (4, 7, 3)
    raw = _mlp_params(sizes, seed)
    x = np.random.default_rng(seed + 10).uniform(-1, 1, (2, 4))
    results = []
    for lib in LIBS:
        params = [(_t(lib, w), _t(lib, b)) for w, b in raw]
        results.append(lib.func.hessian(_mlp(lib, params, activation))(_t(lib, x)))
    _compare(results[0], results[1])


@pytest.mark.parametrize("activation", ["tanh", "gelu"])
def test_hessian_in_the_parameters_with_functional_call(activation: str) -> None:
    """The Hessian of a module's loss in its parameters (a dict: nested result per pair)."""
    x = np.random.default_rng(3).uniform(-1, 1, (6, 3)).astype(np.float32)
    found = []
    for lib in LIBS:
        lib.manual_seed(0)
        model = lib.nn.Sequential(
            lib.nn.Linear(3, 4),
            getattr(lib.nn, activation.capitalize() if activation == "tanh" else "GELU")(),
            lib.nn.Linear(4, 2),
        )
        raw = _mlp_params((3, 4, 2), 5)
        with lib.no_grad():
            for layer, (w, b) in zip((model[0], model[2]), raw, strict=True):
                layer.weight.copy_(_t(lib, w.astype(np.float32)))
                layer.bias.copy_(_t(lib, b.astype(np.float32)))
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p: Any, lib: Any = lib, model: Any = model) -> Any:
            out = lib.func.functional_call(model, p, (_t(lib, x),))
            return lib.nn.functional.cross_entropy(out, lib.tensor([0, 1, 1, 0, 1, 0]))

        found.append(lib.func.hessian(loss)(params))
    _compare(found[0], found[1], rtol=1e-5, atol=1e-6)


def test_argnums_tuple_float32_and_requires_grad() -> None:
    """A tuple argnums (a nested tuple of blocks), float32, and ``requires_grad`` as
    torch.func's: False for plain inputs, True (a graph to them) when an input or a closed-over
    tensor requires grad."""
    found = []
    for lib in LIBS:
        x, y = _t(lib, X3), _t(lib, X3[::-1].copy() + 1)
        w = _t(lib, B[:3], requires_grad=True)
        xr = _t(lib, X3, requires_grad=True)
        f = lambda a, b, lib=lib: (a * b * b).sin().sum()  # noqa: E731
        g = lambda a, w=w: (a.sin() * w).sum()  # noqa: E731
        found.append(
            [
                lib.func.hessian(f, argnums=(0, 1))(x, y),
                lib.func.hessian(f, argnums=1)(x.float(), y.float()),
                lib.func.hessian(g)(x),
                lib.func.hessian(g)(xr),
                lib.func.hessian(lambda a, lib=lib: (a**3).sum())(xr),
                lib.func.hessian(lambda a: a.sin())(x),  # a vector output: a 3-d result
            ]
        )
    _compare(found[0], found[1], rtol=1e-6, atol=1e-7)


def test_hessian_stays_differentiable() -> None:
    """A Hessian of an input that requires grad can be differentiated again (third
    derivatives), as PyTorch's."""
    grads = []
    for lib in LIBS:
        x = _t(lib, X3, requires_grad=True)
        h = lib.func.hessian(lambda a, lib=lib: (a.sin() * a.exp()).sum())(x)
        (g,) = lib.autograd.grad(h.sum(), x)
        grads.append(g)
    _compare(grads[0], grads[1])


def test_hessian_has_aux_through_jacfwd_of_jacrev() -> None:
    found = []
    for lib in LIBS:
        x = _t(lib, X3)

        def f(a: Any, lib: Any = lib) -> Any:
            return (a.tanh() ** 2).sum(), a.cos()

        found.append(lib.func.jacfwd(lib.func.jacrev(f, has_aux=True), has_aux=True)(x))
    _compare(found[0], found[1])


LOSSES: dict[str, Callable[[Any, Any], Any]] = {
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(
        x.reshape(2, 3), lib.tensor([2, 0])
    ),
    "nll_loss_sum": lambda lib, x: lib.nn.functional.nll_loss(
        lib.nn.functional.log_softmax(x.reshape(3, 2), 1), lib.tensor([1, 0, 1]), reduction="sum"
    ),
    "nll_loss2d": lambda lib, x: lib.nn.functional.nll_loss(
        lib.nn.functional.log_softmax(x.reshape(1, 2, 3, 1), 1), lib.tensor([[[1], [0], [1]]])
    ),
    "bce_mean": lambda lib, x: lib.nn.functional.binary_cross_entropy(
        x.sigmoid(), lib.linspace(0.1, 0.9, 6, dtype=x.dtype)
    ),
    "bce_sum_weight": lambda lib, x: lib.nn.functional.binary_cross_entropy(
        x.sigmoid(),
        lib.linspace(0.1, 0.9, 6, dtype=x.dtype),
        weight=lib.arange(6, dtype=x.dtype),
        reduction="sum",
    ),
    "bce_target": lambda lib, x: lib.nn.functional.binary_cross_entropy(
        lib.full((6,), 0.3, dtype=x.dtype), x.sigmoid()
    ),
    "glu": lambda lib, x: lib.nn.functional.glu(x.reshape(2, 3), 0).pow(2).sum(),
    "mse": lambda lib, x: lib.nn.functional.mse_loss(x.tanh(), lib.ones(6, dtype=x.dtype)),
    "smooth_l1": lambda lib, x: lib.nn.functional.smooth_l1_loss(
        x * 3, lib.zeros(6, dtype=x.dtype)
    ),
    "kl_div": lambda lib, x: lib.nn.functional.kl_div(
        lib.nn.functional.log_softmax(x, 0),
        lib.full((6,), 1 / 6, dtype=x.dtype),
        reduction="batchmean",
    ),
}

X6 = np.random.default_rng(6).uniform(-1.2, 1.2, 6)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_hessian_of_losses(name: str) -> None:
    """The losses' backward ops carry tangents (their forward formulas, as PyTorch's)."""
    f = LOSSES[name]
    found = [lib.func.hessian(lambda x, lib=lib: f(lib, x))(_t(lib, X6)) for lib in LIBS]
    _compare(found[0], found[1])


# Where jacfwd's vectorized pass (vmap over tangents) does not run yet and the column loop
# gives the values: kept short (empty now: prod's batching rule took its dim sentinel for a
# dim, binary_cross_entropy's compared physical sizes), checked by the fixture below.
FALLS_BACK: set[str] = set()


@pytest.fixture(autouse=True)
def _vectorized(request: pytest.FixtureRequest) -> Any:
    """Every Hessian here is one vectorized pass but those of :data:`FALLS_BACK`."""
    from chainrule.func import _forward

    _forward.VECTORIZED_FALLBACKS.clear()
    yield
    name = request.node.callspec.params.get("name") if hasattr(request.node, "callspec") else None
    if name in FALLS_BACK:
        assert _forward.VECTORIZED_FALLBACKS, f"{name} is vectorized: take it off FALLS_BACK"
    else:
        assert not _forward.VECTORIZED_FALLBACKS, _forward.VECTORIZED_FALLBACKS
