"""multi_margin_loss / multilabel_margin_loss and nn.MultiMarginLoss / nn.MultiLabelMarginLoss
against PyTorch: values and gradients (p, margin, weight, reductions, unbatched inputs,
float32/float64, non-contiguous inputs, repeated and unused targets), node names, saved
values, the refused double backward, errors and module reprs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

MULTI_MARGIN = [
    ((4, 5), [4, 0, 2, 2], {}),
    ((4, 5), [4, 0, 2, 2], {"p": 2, "margin": 0.5}),
    ((4, 5), [1, 0, 3, 4], {"weight": [1.0, 0.5, 2.0, 3.0, 0.25], "reduction": "none"}),
    ((4, 5), [1, 0, 3, 4], {"p": 2, "weight": [1.0, 0.5, 2.0, 3.0, 0.25], "reduction": "sum"}),
    ((6,), 3, {"margin": 2.0}),
    ((6,), [3], {"reduction": "none"}),
    ((1, 3), [0], {"margin": 0.0}),
]

MULTILABEL = [
    ((3, 4), [[3, 0, -1, 1], [1, 2, 3, -1], [2, 2, 0, 1]], {}),
    ((3, 4), [[-1, 0, 0, 0], [0, 1, 2, 3], [3, -1, 2, 2]], {"reduction": "none"}),
    ((3, 4), [[3, 0, -1, 1], [1, 2, 3, -1], [2, 2, 0, 1]], {"reduction": "sum"}),
    ((5,), [1, 4, -1, 0, 0], {}),
    ((5,), [0, 1, 2, 3, 4], {"reduction": "none"}),
]


def _run(
    lib: Any, loss: str, shape: tuple, target: Any, kw: dict, dtype: str, transposed: bool
) -> tuple:
    x = np.random.default_rng(len(shape) + len(kw)).uniform(-1.5, 1.5, shape)
    kw = dict(kw)
    if "weight" in kw:
        kw["weight"] = lib.tensor(kw["weight"], dtype=getattr(lib, dtype))
    leaf = lib.tensor(
        x.T.copy() if transposed else x, dtype=getattr(lib, dtype), requires_grad=True
    )
    inp = leaf.t() if transposed else leaf
    y = getattr(lib.nn.functional, loss)(inp, lib.tensor(target), **kw)
    seed = lib.tensor(
        np.linspace(0.5, 2.0, y.numel()).reshape(tuple(y.shape)), dtype=getattr(lib, dtype)
    )
    (g,) = lib.autograd.grad(y, leaf, seed)
    saved = sorted(name for name in dir(y.grad_fn) if name.startswith("_saved_"))
    return y.detach().numpy(), g.numpy(), y.grad_fn.name(), saved, tuple(y.shape)


CASES = [("multi_margin_loss", *case) for case in MULTI_MARGIN] + [
    ("multilabel_margin_loss", *case) for case in MULTILABEL
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_and_gradients_match_torch(case: int, dtype: str) -> None:
    loss, shape, target, kw = CASES[case]
    for transposed in (False, len(shape) == 2):
        t = _run(torch, loss, shape, target, kw, dtype, transposed)
        c = _run(chainrule, loss, shape, target, kw, dtype, transposed)
        tol = 1e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(c[0], t[0], rtol=tol, atol=tol)
        np.testing.assert_allclose(c[1], t[1], rtol=tol, atol=tol)
        assert c[2:] == t[2:]


@pytest.mark.parametrize("loss", ["multi_margin_loss", "multilabel_margin_loss"])
def test_double_backward_is_refused_as_in_torch(loss: str) -> None:
    target = {"multi_margin_loss": [3, 0], "multilabel_margin_loss": [[3, 0, -1, 1], [1, -1, 0, 0]]}

    def run(lib: Any) -> Any:
        x = lib.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]], requires_grad=True)
        y = getattr(lib.nn.functional, loss)(x, lib.tensor(target[loss]))
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        assert g.grad_fn.name().endswith("::autograd::NotImplemented")
        return lib.autograd.grad(g.sum(), x)

    same_outcome(run)


def test_saved_is_target_matches_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        x = lib.tensor([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]], requires_grad=True)
        y = lib.nn.functional.multilabel_margin_loss(x, lib.tensor([[3, 0, -1, 1], [2, 2, 1, -1]]))
        out.append(y.grad_fn._saved_is_target.numpy())
    np.testing.assert_array_equal(out[1], out[0])


def test_modules_match_torch() -> None:
    x = np.random.default_rng(4).standard_normal((3, 4))
    out = []
    for lib in (torch, chainrule):
        mm = lib.nn.MultiMarginLoss(p=2, margin=0.3, weight=lib.tensor([1.0, 2.0, 3.0, 4.0]))
        ml = lib.nn.MultiLabelMarginLoss(reduction="sum")
        xt = lib.tensor(x, dtype=lib.float32)
        out.append(
            (
                repr(mm),
                repr(ml),
                mm(xt, lib.tensor([0, 3, 1])).item(),
                ml(xt, lib.tensor([[0, 1, -1, 0], [3, -1, 0, 0], [1, 2, 3, 0]])).item(),
                sorted(name for name, _ in mm.named_buffers()),
            )
        )
    t, c = out
    assert c[:2] == t[:2] and c[4] == t[4]
    assert c[2] == pytest.approx(t[2], rel=1e-6)
    assert c[3] == pytest.approx(t[3], rel=1e-6)


X = [[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1]]
ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "p": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([3, 0]), p=3),
    "weight 2-d": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), weight=t.ones(2, 2)
    ),
    "weight size": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), weight=t.ones(2)
    ),
    "weight dtype": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), weight=t.ones(4, dtype=t.float64)
    ),
    "weight requires grad": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), weight=t.ones(4, requires_grad=True)
    ),
    "float target": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([3.0, 0.0])),
    "int target": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([3, 0]).int()),
    "target out of range": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([4, 0])),
    "negative target": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([-1, 0])),
    "target size": lambda F, t: F.multi_margin_loss(t.tensor(X), t.tensor([3])),
    "target size unbatched": lambda F, t: F.multi_margin_loss(t.ones(3), t.tensor([0, 1])),
    "3-d input": lambda F, t: F.multi_margin_loss(t.ones(1, 2, 4), t.tensor([3, 0])),
    "no classes": lambda F, t: F.multi_margin_loss(t.ones(2, 0), t.tensor([0, 0])),
    "int input": lambda F, t: F.multi_margin_loss(t.ones(2, 4, dtype=t.int32), t.tensor([3, 0])),
    "half input": lambda F, t: F.multi_margin_loss(t.ones(2, 4, dtype=t.float16), t.tensor([3, 0])),
    "bfloat16 input": lambda F, t: F.multilabel_margin_loss(
        t.ones(2, 4, dtype=t.bfloat16), t.zeros(2, 4, dtype=t.long)
    ),
    "bad reduction": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), reduction="bad"
    ),
    "label target size": lambda F, t: F.multilabel_margin_loss(
        t.tensor(X), t.zeros(2, 3, dtype=t.long)
    ),
    "label target unbatched": lambda F, t: F.multilabel_margin_loss(
        t.ones(4), t.zeros(3, dtype=t.long)
    ),
    "label float target": lambda F, t: F.multilabel_margin_loss(t.tensor(X), t.zeros(2, 4)),
    "label out of range": lambda F, t: F.multilabel_margin_loss(
        t.tensor(X), t.tensor([[4, -1, 0, 0], [0, 0, 0, 0]])
    ),
    "label after -1 ignored": lambda F, t: F.multilabel_margin_loss(
        t.tensor(X), t.tensor([[1, -1, 9, 0], [0, 0, 0, 0]])
    ),
    "label 3-d input": lambda F, t: F.multilabel_margin_loss(
        t.ones(1, 2, 4), t.zeros(1, 2, 4, dtype=t.long)
    ),
    "legacy size_average": lambda F, t: F.multi_margin_loss(
        t.tensor(X), t.tensor([3, 0]), size_average=False
    ),
    "legacy reduce": lambda F, t: F.multilabel_margin_loss(
        t.tensor(X), t.tensor([[3, 0, -1, 1], [1, -1, 0, 0]]), reduce=False
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(lambda lib: ERRORS[name](lib.nn.functional, lib))
