"""The official PyTorch "Learning PyTorch with Examples" programs, run with both libraries.

Each program is the tutorial's code written once for ``lib`` (chainrule or torch); the only
change is that the initial weights come from a shared NumPy draw (``load_state_dict``) instead of
each library's own random stream, so both runs start equal. Losses along the way and the final
weights must agree to float32 tolerance.
"""

from __future__ import annotations

import math
import random
from types import ModuleType

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _state(lib: ModuleType, arrays: dict[str, np.ndarray]) -> dict:
    return {k: lib.from_numpy(v.copy()) for k, v in arrays.items()}


def _weights(model) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _sine_data(lib: ModuleType):
    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    p = lib.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    return x, y, xx


def _compare(ours: tuple, theirs: tuple, rtol: float = 2e-4) -> None:
    losses_ours, weights_ours = ours
    losses_theirs, weights_theirs = theirs
    np.testing.assert_allclose(losses_ours, losses_theirs, rtol=rtol)
    assert weights_ours.keys() == weights_theirs.keys()
    for k in weights_ours:
        np.testing.assert_allclose(weights_ours[k], weights_theirs[k], rtol=rtol, atol=1e-5,
                                   err_msg=k)


LINEAR_INIT = {"0.weight": np.array([[0.3, -0.2, 0.1]], np.float32),
               "0.bias": np.array([0.05], np.float32)}


# ----------------------------------------------------------------------------------------------
# polynomial_nn.py: nn.Sequential(Linear(3, 1), Flatten(0, 1)), MSELoss(sum), manual updates


def _polynomial_nn(lib: ModuleType, steps: int = 2000) -> tuple:
    x, y, xx = _sine_data(lib)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    model.load_state_dict(_state(lib, LINEAR_INIT))
    loss_fn = lib.nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with lib.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    result = (f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
              f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3")
    assert result.startswith("Result: y = ")
    return losses, _weights(model)


def _polynomial_nn_data_update(lib: ModuleType, steps: int = 2000) -> tuple:
    """The same program with the update written ``param.data -= ...`` (no in-place op)."""
    x, y, xx = _sine_data(lib)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    model.load_state_dict(_state(lib, LINEAR_INIT))
    loss_fn = lib.nn.MSELoss(reduction="sum")
    losses = []
    for t in range(steps):
        loss = loss_fn(model(xx), y)
        if t % 100 == 99:
            losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        for param in model.parameters():
            param.data -= 1e-6 * param.grad
    return losses, _weights(model)


def test_polynomial_nn_matches_torch() -> None:
    _compare(_polynomial_nn(chainrule), _polynomial_nn(torch))


def test_polynomial_nn_data_update_matches_torch() -> None:
    ours = _polynomial_nn_data_update(chainrule)
    _compare(ours, _polynomial_nn_data_update(torch))
    assert ours[0][-1] < ours[0][0] / 5  # it learns: the loss falls


# ----------------------------------------------------------------------------------------------
# polynomial_optim.py (RMSprop) and the same with SGD and Adam


def _polynomial_optim(lib: ModuleType, make_optimizer, steps: int = 2000) -> tuple:
    x, y, xx = _sine_data(lib)
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    model.load_state_dict(_state(lib, LINEAR_INIT))
    loss_fn = lib.nn.MSELoss(reduction="sum")
    optimizer = make_optimizer(lib, model.parameters())
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 100 == 99:
            losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses, _weights(model)


OPTIMIZERS = {
    "rmsprop": lambda lib, params: lib.optim.RMSprop(params, lr=1e-3),
    "sgd": lambda lib, params: lib.optim.SGD(params, lr=1e-6),
    "sgd_momentum": lambda lib, params: lib.optim.SGD(params, lr=1e-6, momentum=0.9),
    "adam": lambda lib, params: lib.optim.Adam(params, lr=1e-3),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_polynomial_optim_matches_torch(name: str) -> None:
    make = OPTIMIZERS[name]
    ours = _polynomial_optim(chainrule, make)
    theirs = _polynomial_optim(torch, make)
    if name == "rmsprop":
        # RMSprop's step is about lr whatever the gradient, so once converged (step ~900) it
        # hops around the optimum by about lr = 1e-3, in a pattern that the last float32 bit of
        # the gradients decides. Until then the two runs agree to float tolerance; after, both
        # stay within a few lr of each other.
        np.testing.assert_allclose(ours[0][:8], theirs[0][:8], rtol=1e-4)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=5e-2)
        for k in ours[1]:
            np.testing.assert_allclose(ours[1][k], theirs[1][k], atol=3e-3, err_msg=k)
    else:
        _compare(ours, theirs, rtol=1e-3)
    assert ours[0][-1] < ours[0][0]


# ----------------------------------------------------------------------------------------------
# polynomial_module.py: a custom Module with four scalar Parameters


def _polynomial3(lib: ModuleType):
    class Polynomial3(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Parameter(lib.randn(()))
            self.b = lib.nn.Parameter(lib.randn(()))
            self.c = lib.nn.Parameter(lib.randn(()))
            self.d = lib.nn.Parameter(lib.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + "
                    f"{self.d.item()} x^3")

    return Polynomial3


SCALAR_INIT = {k: np.array(v, np.float32) for k, v in
               {"a": 0.1, "b": -0.4, "c": 0.25, "d": 0.3, "e": -0.05}.items()}


def _polynomial_module(lib: ModuleType, steps: int = 2000) -> tuple:
    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    model = _polynomial3(lib)()
    model.load_state_dict(_state(lib, {k: SCALAR_INIT[k] for k in "abcd"}))
    criterion = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-6)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 100 == 99:
            losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert model.string().startswith("y = ")
    return losses, _weights(model)


def test_polynomial_module_matches_torch() -> None:
    _compare(_polynomial_module(chainrule), _polynomial_module(torch), rtol=1e-3)


# ----------------------------------------------------------------------------------------------
# dynamic_net.py: depth chosen at random each forward pass, the weight ``e`` reused


def _dynamic_net(lib: ModuleType, steps: int = 3000) -> tuple:
    class DynamicNet(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Parameter(lib.randn(()))
            self.b = lib.nn.Parameter(lib.randn(()))
            self.c = lib.nn.Parameter(lib.randn(()))
            self.d = lib.nn.Parameter(lib.randn(()))
            self.e = lib.nn.Parameter(lib.randn(()))

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

    random.seed(0)
    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    model = DynamicNet()
    model.load_state_dict(_state(lib, SCALAR_INIT))
    criterion = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 200 == 199:
            losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses, _weights(model)


def test_dynamic_net_matches_torch() -> None:
    _compare(_dynamic_net(chainrule), _dynamic_net(torch), rtol=2e-3)


# ----------------------------------------------------------------------------------------------
# two_layer_net_module.py, with a state_dict round trip through a file


def _two_layer(lib: ModuleType, tmp_path, steps: int = 300) -> tuple:
    class TwoLayerNet(lib.nn.Module):
        def __init__(self, d_in, h, d_out):
            super().__init__()
            self.linear1 = lib.nn.Linear(d_in, h)
            self.linear2 = lib.nn.Linear(h, d_out)

        def forward(self, x):
            h_relu = self.linear1(x).clamp(min=0)
            return self.linear2(h_relu)

    n, d_in, h, d_out = 64, 1000, 100, 10
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((n, d_in)).astype(np.float32))
    y = lib.from_numpy(rng.standard_normal((n, d_out)).astype(np.float32))
    model = TwoLayerNet(d_in, h, d_out)
    init = {
        "linear1.weight": rng.uniform(-0.03, 0.03, (h, d_in)).astype(np.float32),
        "linear1.bias": rng.uniform(-0.03, 0.03, h).astype(np.float32),
        "linear2.weight": rng.uniform(-0.1, 0.1, (d_out, h)).astype(np.float32),
        "linear2.bias": rng.uniform(-0.1, 0.1, d_out).astype(np.float32),
    }
    model.load_state_dict(_state(lib, init))
    criterion = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-4)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 20 == 19:
            losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    path = tmp_path / f"two_layer_{lib.__name__}.weights"
    lib.save(model.state_dict(), path)
    restored = TwoLayerNet(d_in, h, d_out)
    print(restored.load_state_dict(lib.load(path)))
    with lib.no_grad():
        np.testing.assert_array_equal(restored(x).numpy(), model(x).numpy())
    return losses, _weights(restored)


def test_two_layer_net_state_dict_round_trip_matches_torch(tmp_path, capsys) -> None:
    ours = _two_layer(chainrule, tmp_path)
    theirs = _two_layer(torch, tmp_path)
    _compare(ours, theirs, rtol=1e-3)
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["<All keys matched successfully>"] * 2
