"""L-BFGS against ``torch.optim.LBFGS``: with a closure, on a small quadratic and on the
Rosenbrock function, without and with the strong-Wolfe line search, several steps; the state
(keys in order, evaluation and iteration counts), state dicts, errors and repr.

Tolerances: the iterates are PyTorch's to within rounding, not bit for bit. chainrule performs
PyTorch's operations in PyTorch's order (its ``add_(alpha=)`` updates are rounded as PyTorch's
kernel rounds float32: one fused multiply-add), but ``dot`` differs: PyTorch calls MKL's
``sdot``/``ddot``, whose summation order chainrule's NumPy dot (OpenBLAS) does not follow, and
float64's fused multiply-add is not reproduced. An ulp of difference in a curvature pair is
carried by the following iterations, so iterates are compared with ``rtol`` 1e-5 (float32) and
1e-9 (float64) on problems whose iterates stay well away from the rounding floor.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

A = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])
B = np.array([1.0, -2.0, 0.5])


def _quadratic(lib: Any, x: Any) -> Any:
    a = lib.tensor(A.tolist(), dtype=x.dtype)
    b = lib.tensor(B.tolist(), dtype=x.dtype)
    return 0.5 * (x @ (a @ x)) - (b * x).sum()


def _rosenbrock(lib: Any, x: Any) -> Any:
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


# (function, start, steps, max_iter): few enough iterations that the iterates stay above the
# rounding floor (a 3-d quadratic is solved in three; beyond, only rounding is left to follow)
PROBLEMS = {"quadratic": (_quadratic, [0.0, 0.0, 0.0], 1, 3),
            "rosenbrock": (_rosenbrock, [-1.2, 1.0, -0.5, 0.8], 2, 6)}
OPTIONS = {
    "plain": {},
    "strong_wolfe": {"line_search_fn": "strong_wolfe"},
    "short_history": {"history_size": 2, "lr": 0.5},
    "strong_wolfe_short": {"line_search_fn": "strong_wolfe", "history_size": 1, "max_eval": 5},
}
TOLERANCES = {"float32": 1e-5, "float64": 1e-9}


def _run(lib: Any, problem: str, dtype: str, options: dict[str, Any],
         steps: int | None = None) -> tuple[list, list, Any, Any]:
    fn, start, default_steps, max_iter = PROBLEMS[problem]
    x = lib.nn.Parameter(lib.tensor(start, dtype=getattr(lib, dtype)))
    opt = lib.optim.LBFGS([x], **{"max_iter": max_iter, **options})
    evaluated: list[list[float]] = []

    def closure() -> Any:
        opt.zero_grad()
        loss = fn(lib, x)
        loss.backward()
        evaluated.append(x.detach().tolist())
        return loss

    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float() of a loss that requires grad
        for _ in range(steps or default_steps):
            losses.append(float(opt.step(closure)))
    return losses, evaluated, x, opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_iterates_like_torch(problem: str, options: str, dtype: str) -> None:
    ours = _run(chainrule, problem, dtype, OPTIONS[options])
    theirs = _run(torch, problem, dtype, OPTIONS[options])
    rtol = TOLERANCES[dtype]
    assert len(ours[1]) == len(theirs[1])  # the same number of closure evaluations
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours[2].tolist(), theirs[2].tolist(), rtol=rtol, atol=rtol)
    state, their_state = ours[3].state[ours[2]], theirs[3].state[theirs[2]]
    assert list(state) == list(their_state)
    for key in ("func_evals", "n_iter"):
        assert state[key] == their_state[key]
    for key in ("old_dirs", "old_stps", "ro"):
        assert len(state[key]) == len(their_state[key])
    for key in ("d", "prev_flat_grad"):
        assert state[key].dtype is getattr(chainrule, dtype)
        np.testing.assert_allclose(state[key].tolist(), their_state[key].tolist(),
                                   rtol=1e-3, atol=1e-3)
    assert type(state["t"]).__name__ == type(their_state["t"]).__name__
    assert type(state["H_diag"]).__name__ == type(their_state["H_diag"]).__name__


def test_quadratic_minimised() -> None:
    """A 3-d quadratic: the strong-Wolfe L-BFGS reaches A^-1 b (to its loss tolerance) as
    PyTorch's does."""
    _, _, x, _ = _run(chainrule, "quadratic", "float64", {"line_search_fn": "strong_wolfe",
                                                          "max_iter": 20}, steps=3)
    _, _, y, _ = _run(torch, "quadratic", "float64", {"line_search_fn": "strong_wolfe",
                                                      "max_iter": 20}, steps=3)
    np.testing.assert_allclose(x.tolist(), np.linalg.solve(A, B), rtol=1e-4)
    np.testing.assert_allclose(x.tolist(), y.tolist(), rtol=1e-9)


def test_analytic_closure_first_iterates_bit_for_bit() -> None:
    """With gradients handed in (no autograd in the closure) and three coordinates, the first
    evaluations of a float32 step are PyTorch's bit for bit."""
    def run(lib: Any) -> list:
        x = lib.nn.Parameter(lib.tensor([0.0, 0.0, 0.0]))
        opt = lib.optim.LBFGS([x], max_iter=3, history_size=2, lr=0.5)
        seen = []

        def closure() -> Any:
            v = np.array(x.detach().tolist())
            x.grad = lib.tensor((A @ v - B).tolist())
            seen.append(x.detach().tolist())
            return lib.tensor(0.5 * v @ A @ v - B @ v)

        opt.step(closure)
        return seen

    assert run(chainrule) == run(torch)


def test_closure_result_returned_and_grad_mode() -> None:
    x = chainrule.nn.Parameter(chainrule.tensor([1.0, 2.0]))
    opt = chainrule.optim.LBFGS([x], max_iter=2)
    modes = []

    def closure() -> Any:
        modes.append(chainrule.is_grad_enabled())
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    first = []
    original = closure

    def recording() -> Any:
        loss = original()
        first.append(loss)
        return loss

    result = opt.step(recording)
    assert result is first[0]
    assert all(modes) and chainrule.is_grad_enabled()


@pytest.mark.parametrize("options", ["plain", "strong_wolfe"])
def test_state_dict_round_trip_continues_identically(options: str) -> None:
    _, _, x, opt = _run(chainrule, "rosenbrock", "float64", OPTIONS[options], steps=2)
    saved = copy.deepcopy(opt.state_dict())
    start = x.detach().clone()
    _, _, y, clone = _run(chainrule, "rosenbrock", "float64", OPTIONS[options], steps=0)

    def step(p: Any, o: Any) -> None:
        def closure() -> Any:
            o.zero_grad()
            loss = _rosenbrock(chainrule, p)
            loss.backward()
            return loss

        o.step(closure)

    y.data = start.clone()
    clone.load_state_dict(saved)
    for _ in range(2):
        step(x, opt)
        step(y, clone)
    assert x.tolist() == y.tolist()
    assert list(clone.state[y]) == list(opt.state[x])
    assert clone.state[y]["func_evals"] == opt.state[x]["func_evals"]


def test_state_dict_like_torch() -> None:
    ours = _run(chainrule, "quadratic", "float32", {}, steps=2)[3].state_dict()
    theirs = _run(torch, "quadratic", "float32", {}, steps=2)[3].state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert list(ours["state"]) == list(theirs["state"]) == [0]
    assert list(ours["state"][0]) == list(theirs["state"][0])
    assert len(ours["state"][0]["al"]) == len(theirs["state"][0]["al"]) == 100


def _outcome(fn: Any) -> Any:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing what each library raises
        return type(e).__name__, str(e)
    return None


ERRORS = {
    "lr": lambda lib, p: lib.optim.LBFGS([p], lr=-0.1),
    "tensor lr": lambda lib, p: lib.optim.LBFGS([p], lr=lib.tensor([0.1, 0.2])),
    "groups": lambda lib, p: lib.optim.LBFGS([{"params": [p]},
                                              {"params": [lib.nn.Parameter(lib.ones(1))]}]),
    "no closure": lambda lib, p: lib.optim.LBFGS([p]).step(),
    "line search": lambda lib, p: _bad_line_search(lib, p),
}


def _bad_line_search(lib: Any, p: Any) -> None:
    opt = lib.optim.LBFGS([p], line_search_fn="backtracking")

    def closure() -> Any:
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    opt.step(closure)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_like_torch(case: str) -> None:
    theirs = _outcome(lambda: ERRORS[case](torch, torch.nn.Parameter(torch.ones(2))))
    p = chainrule.nn.Parameter(chainrule.ones(2))
    assert theirs is not None
    assert _outcome(lambda: ERRORS[case](chainrule, p)) == theirs
    assert p.tolist() == [1.0, 1.0] and p._version == 0


def test_unknown_line_search_touches_nothing() -> None:
    """PyTorch refuses an unknown line search once it reaches it (after evaluating the closure
    and counting an iteration); chainrule refuses it first."""
    p = chainrule.nn.Parameter(chainrule.ones(2))
    opt = chainrule.optim.LBFGS([p], line_search_fn="backtracking")
    calls = []
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lambda: calls.append(1))
    assert not calls and not opt.state


@pytest.mark.parametrize("options", [{}, {"max_iter": 7}, {"max_iter": 7, "max_eval": 3, "lr": 0.3,
                                                             "line_search_fn": "strong_wolfe"}])
def test_defaults_and_repr_like_torch(options: dict[str, Any]) -> None:
    ours = chainrule.optim.LBFGS([chainrule.nn.Parameter(chainrule.ones(2))], **options)
    theirs = torch.optim.LBFGS([torch.nn.Parameter(torch.ones(2))], **options)
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


def test_exported_with_torch_signature() -> None:
    import inspect

    ours = inspect.signature(chainrule.optim.LBFGS)
    theirs = inspect.signature(torch.optim.LBFGS)
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()]
    assert "LBFGS" in chainrule.optim.__all__
