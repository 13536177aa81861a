"""cov and corrcoef against PyTorch: values, the graph's last node, weights and their errors,
the degrees-of-freedom warning, integer, float16, 0-d and empty inputs. Gradients are swept by
tests/opinfos/covariance.py."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(lib: Any, f: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = f(lib)
    node = r.grad_fn.name() if r.grad_fn else None
    return str(r), node, tuple(r.shape), [str(m.message) for m in caught]


X = [[1.0, 4, 9, 16], [2, -1, 0.5, 3], [0, 0, 1, 7]]
CASES: dict[str, Any] = {
    "cov": lambda L: L.cov(L.tensor(X, requires_grad=True)),
    "cov_1d": lambda L: L.cov(L.tensor(X[0], requires_grad=True)),
    "cov_c0": lambda L: L.cov(L.tensor(X), correction=0),
    "cov_c2": lambda L: L.cov(L.tensor(X), correction=2),
    "cov_fw": lambda L: L.cov(L.tensor(X, requires_grad=True), fweights=L.tensor([1, 2, 3, 1])),
    "cov_aw": lambda L: L.cov(L.tensor(X, requires_grad=True), aweights=L.tensor([0.5, 1, 2, 1.0])),
    "cov_both": lambda L: L.cov(
        L.tensor(X), fweights=L.tensor([1, 2, 0, 1]), aweights=L.tensor([0.5, 1, 2, 1.0])
    ),
    "cov_both_c0": lambda L: L.cov(
        L.tensor(X),
        correction=0,
        fweights=L.tensor([1, 2, 0, 1]),
        aweights=L.tensor([0.5, 1, 2, 1.0]),
    ),
    "cov_fw_2d": lambda L: L.cov(L.tensor(X), fweights=L.ones(2, 4).long()),
    "cov_fw_float": lambda L: L.cov(L.tensor(X), fweights=L.ones(4)),
    "cov_fw_len": lambda L: L.cov(L.tensor(X), fweights=L.ones(3).long()),
    "cov_fw_neg": lambda L: L.cov(L.tensor(X), fweights=-L.ones(4).long()),
    "cov_aw_long": lambda L: L.cov(L.tensor(X), aweights=L.ones(4).long()),
    "cov_aw_neg": lambda L: L.cov(L.tensor(X), aweights=-L.ones(4)),
    "cov_dof": lambda L: L.cov(L.tensor(X), correction=4),
    "cov_empty_vars": lambda L: L.cov(L.zeros(0, 3)),
    "cov_no_obs": lambda L: L.cov(L.zeros(3, 0)),
    "cov_float_corr": lambda L: L.cov(L.tensor(X), correction=1.5),
    "cov_3d": lambda L: L.cov(L.zeros(2, 3, 4)),
    "cov_int": lambda L: L.cov(L.tensor([1, 2, 4])),
    "cov_half": lambda L: L.cov(L.tensor(X).half()),
    "cov_0d": lambda L: L.cov(L.tensor(2.0)),
    "cov_f64": lambda L: L.cov(L.tensor(X, dtype=L.float64)),
    "corrcoef": lambda L: L.corrcoef(L.tensor(X, requires_grad=True)),
    "corrcoef_1d": lambda L: L.corrcoef(L.tensor(X[0], requires_grad=True)),
    "corrcoef_const": lambda L: L.corrcoef(L.tensor([[1.0, 1, 1], [1, 2, 3]])),
    "corrcoef_int": lambda L: L.corrcoef(L.tensor([1, 2, 4])),
    "corrcoef_3d": lambda L: L.corrcoef(L.zeros(2, 3, 4)),
    "corrcoef_anti": lambda L: L.corrcoef(L.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    assert outcome(lambda lib: show(lib, CASES[name]), chainrule) == outcome(
        lambda lib: show(lib, CASES[name]), torch
    )
