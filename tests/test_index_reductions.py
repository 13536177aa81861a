"""scatter_reduce and index_reduce against PyTorch: values and dtypes of every reduction (integer
means round down, uint8 wraps, bool, float16 bit for bit, NaN, infinities, empty indices,
transposed inputs), nodes and saved values, in-place forms, gradients at ties and zeros (and the
double-backward error of a product with two zeros), forward-mode tangents, and argument errors
(type and message). Random gradients are swept by tests/opinfos/index_reductions.py."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")

REDUCES = ("sum", "prod", "mean", "amax", "amin")


def show(r: Any) -> Any:
    return str(r), r.dtype, r.grad_fn.name() if r.grad_fn else None, r.stride()


def _sr(dtype: str, reduce: str, include_self: bool) -> Any:
    def run(L: Any) -> Any:
        x = L.tensor([[1, 2, 3], [4, 5, 6]]).to(getattr(L, dtype))
        src = L.tensor([[-7, 20, 30], [40, 9, -60]]).to(getattr(L, dtype))
        idx = L.tensor([[0, 0, 1], [1, 0, 0]])
        return x.scatter_reduce(1, idx, src, reduce, include_self=include_self)

    return run


def _ir(dtype: str, reduce: str, include_self: bool) -> Any:
    def run(L: Any) -> Any:
        x = L.tensor([[1, 2, 3], [4, 5, 6]]).to(getattr(L, dtype))
        src = (L.tensor([[-7, 20], [40, 9]]) / 3).to(getattr(L, dtype))
        return x.index_reduce(1, L.tensor([2, 2]), src, reduce, include_self=include_self)

    return run


CASES: dict[str, Any] = {}
for _dtype in (
    "float32",
    "float64",
    "float16",
    "int64",
    "int32",
    "uint8",
    "int8",
    "bool",
    "complex64",
):
    for _reduce in REDUCES:
        for _inc in (True, False):
            CASES[f"sr_{_dtype}_{_reduce}_{_inc}"] = _sr(_dtype, _reduce, _inc)
            if _reduce != "sum":
                CASES[f"ir_{_dtype}_{_reduce}_{_inc}"] = _ir(_dtype, _reduce, _inc)

NAN = float("nan")
INF = float("inf")
CASES.update(
    {
        "sr_nan_amax": lambda L: L.tensor([1.0, 2]).scatter_reduce(
            0, L.tensor([0, 0, 1]), L.tensor([NAN, 1.0, 3]), "amax"
        ),
        "sr_nan_amin_excl": lambda L: L.tensor([1.0, NAN]).scatter_reduce(
            0, L.tensor([0, 0]), L.tensor([1.0, NAN]), "amin", include_self=False
        ),
        "sr_inf_sum": lambda L: L.tensor([1.0, 2]).scatter_reduce(
            0, L.tensor([0, 0]), L.tensor([INF, -INF]), "sum"
        ),
        "sr_inf_prod": lambda L: L.tensor([0.0, 2]).scatter_reduce(
            0, L.tensor([0, 1]), L.tensor([INF, -INF]), "prod"
        ),
        "sr_neg_inf_amax_excl": lambda L: L.tensor([-INF, 2]).scatter_reduce(
            0, L.tensor([0, 0]), L.tensor([-INF, -INF]), "amax", include_self=False
        ),
        "sr_empty_index": lambda L: L.tensor([1.0, 2]).scatter_reduce(
            0, L.tensor([], dtype=L.long), L.tensor([]), "mean", include_self=False
        ),
        "sr_empty_self": lambda L: L.empty(0, 3).scatter_reduce(
            1, L.empty(0, 3, dtype=L.long), L.empty(0, 3), "amax"
        ),
        "sr_0d": lambda L: L.tensor(1.0).scatter_reduce(0, L.tensor(0), L.tensor(3.0), "prod"),
        "sr_transposed": lambda L: (
            L.arange(12.0)
            .reshape(3, 4)
            .t()
            .scatter_reduce(0, L.tensor([[0, 0, 3], [1, 0, 0]]), L.ones(2, 3).t().t() * 5, "mean")
        ),
        "sr_src_larger": lambda L: L.zeros(2, 2).scatter_reduce(
            1, L.tensor([[1], [0]]), L.arange(6.0).reshape(2, 3), "sum"
        ),
        "sr_int32_index": lambda L: L.zeros(3).scatter_reduce(
            0, L.tensor([2, 2], dtype=L.int32), L.tensor([1.0, 4]), "amin", include_self=False
        ),
        "sr_max_name": lambda L: L.zeros(3).scatter_reduce(
            0, L.tensor([2, 2]), L.tensor([1.0, 4]), "max"
        ),
        "sr_min_name": lambda L: L.zeros(3).scatter_reduce(
            0, L.tensor([2, 2]), L.tensor([1.0, 4]), "min", include_self=False
        ),
        "sr_torch": lambda L: L.scatter_reduce(
            L.zeros(3), 0, L.tensor([2, 1]), L.tensor([1.0, 4]), "sum"
        ),
        "sr_inplace": lambda L: L.zeros(3).scatter_reduce_(
            0, L.tensor([2, 2]), L.tensor([1.0, 4]), "mean"
        ),
        # errors
        "sr_bad_reduce": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([5]), L.ones(1), "foo"),
        "sr_add_reduce": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0]), L.ones(1), "add"),
        "sr_bad_dtype": lambda L: L.zeros(3).scatter_reduce(
            0, L.tensor([0]), L.ones(1).double(), "foo"
        ),
        "sr_float_index": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0.0]), L.ones(1), "sum"),
        "sr_range": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([3]), L.ones(1), "sum"),
        "sr_negative": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([-1]), L.ones(1), "sum"),
        "sr_ndim": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([[0]]), L.ones(1), "foo"),
        "sr_shape": lambda L: L.zeros(1, 2).scatter_reduce(
            0, L.tensor([[0, 1]]), L.ones(1, 1), "sum"
        ),
        "sr_dim": lambda L: L.zeros(3).scatter_reduce(2, L.tensor([0]), L.ones(1), "sum"),
        "sr_include_self_int": lambda L: L.zeros(3).scatter_reduce(
            0, L.tensor([0]), L.ones(1), "sum", include_self=1
        ),
        "sr_src_number": lambda L: L.scatter_reduce(L.zeros(3), 0, L.tensor([0]), 1.0, "sum"),
        "sr_positional_include": lambda L: L.scatter_reduce(
            L.zeros(3), 0, L.tensor([0]), L.ones(1), "sum", True
        ),
        "ir_sum": lambda L: L.zeros(3).index_reduce(0, L.tensor([0]), L.ones(1), "sum"),
        "ir_2d_index": lambda L: L.zeros(3).index_reduce(0, L.tensor([[0]]), L.ones(1), "prod"),
        "ir_float_index": lambda L: L.zeros(3).index_reduce(0, L.tensor([0.0]), L.ones(1), "prod"),
        "ir_dtype": lambda L: L.zeros(3).index_reduce(0, L.tensor([0]), L.ones(1).double(), "prod"),
        "ir_count": lambda L: L.zeros(3).index_reduce(0, L.tensor([0, 1]), L.ones(1), "prod"),
        "ir_slice": lambda L: L.zeros(2, 3).index_reduce(1, L.tensor([0, 1]), L.ones(3, 2), "prod"),
        "ir_source_dim": lambda L: L.zeros(2, 3).index_reduce(1, L.tensor(1), L.ones(2), "prod"),
        "ir_range": lambda L: L.zeros(3).index_reduce(0, L.tensor([3]), L.ones(1), "mean"),
        "ir_negative": lambda L: L.zeros(3).index_reduce(0, L.tensor([-1]), L.ones(1), "mean"),
        "ir_0d": lambda L: L.tensor(2.0).index_reduce(0, L.tensor([0]), L.tensor(3.0), "prod"),
        "ir_0d_source": lambda L: L.ones(2).index_reduce(0, L.tensor([0]), L.tensor(3.0), "prod"),
        "ir_number": lambda L: L.index_reduce(L.ones(2), 0, L.tensor([0]), 1.0, "prod"),
        "ir_include_self_int": lambda L: L.ones(2).index_reduce(
            0, L.tensor([0]), L.ones(1), "prod", include_self=0
        ),
        "ir_int32_index": lambda L: L.ones(2, 2).index_reduce(
            -1, L.tensor([1, 1], dtype=L.int32), L.tensor([[2.0, 3], [4, 5]]), "amin"
        ),
        "ir_empty": lambda L: L.ones(2, 2).index_reduce(
            0, L.tensor([], dtype=L.long), L.ones(0, 2), "mean", include_self=False
        ),
        "ir_inplace": lambda L: L.ones(3).index_reduce_(
            0, L.tensor([2, 2]), L.tensor([2.0, 3]), "prod"
        ),
        "ir_nan": lambda L: L.ones(3).index_reduce(0, L.tensor([2, 2]), L.tensor([NAN, 3]), "amax"),
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0][0] == seen[1][0]
    assert seen[0][1].replace("torch.", "") == seen[1][1].replace("torch.", "")


def test_float16_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float16)
    src = (rng.standard_normal((4, 6)) * 3).astype(np.float16)
    idx = rng.integers(0, 6, (4, 6))
    for reduce in REDUCES:
        for inc in (True, False):
            ours = chainrule.from_numpy(x).scatter_reduce(
                1, chainrule.from_numpy(idx), chainrule.from_numpy(src), reduce, include_self=inc
            )
            theirs = torch.from_numpy(x).scatter_reduce(
                1, torch.from_numpy(idx), torch.from_numpy(src), reduce, include_self=inc
            )
            assert ours.numpy().tobytes() == theirs.numpy().tobytes(), (reduce, inc)


def test_index_reduce_float16_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype(np.float16)
    src = (rng.standard_normal((4, 8)) * 3).astype(np.float16)
    idx = rng.integers(0, 6, 8)
    for reduce in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            for dim, s in ((1, src), (0, src.T.copy())):
                ours = chainrule.from_numpy(x if dim else x.T.copy()).index_reduce(
                    dim,
                    chainrule.from_numpy(idx),
                    chainrule.from_numpy(s),
                    reduce,
                    include_self=inc,
                )
                theirs = torch.from_numpy(x if dim else x.T.copy()).index_reduce(
                    dim, torch.from_numpy(idx), torch.from_numpy(s), reduce, include_self=inc
                )
                assert ours.numpy().tobytes() == theirs.numpy().tobytes(), (reduce, inc, dim)


def _grads(
    L: Any,
    reduce: str,
    include_self: bool,
    self_v: list,
    src_v: list,
    idx: list,
    create_graph: bool = False,
) -> Any:
    x = L.tensor(self_v, requires_grad=True)
    s = L.tensor(src_v, requires_grad=True)
    y = x.scatter_reduce(0, L.tensor(idx), s, reduce, include_self=include_self)
    weights = L.arange(1.0, len(self_v) + 1)
    return x, s, y, L.autograd.grad((y * weights).sum(), [x, s], create_graph=create_graph)


GRAD_CASES = [
    ("amax", True, [3.0, 5, 0], [3.0, 3, 1, 0], [0, 0, 0, 2]),  # three-way tie
    ("amax", False, [3.0, 5, 0], [3.0, 1, 1, 0], [0, 0, 1, 1]),  # excluded self ties
    ("amin", False, [3.0, 5, 0], [3.0, 3, 7, 0], [0, 0, 1, 2]),
    ("prod", True, [2.0, 0, 1], [0.0, 3, 4, 5], [0, 0, 1, 2]),  # one zero in src, one in self
    ("prod", False, [2.0, 0, 1], [0.0, 0, 4, 5], [0, 0, 1, 1]),  # two zeros meet
    ("prod", True, [0.0, 1, 1], [0.0, 3, 4, 5], [0, 1, 1, 1]),
    ("mean", False, [2.0, 0, 1], [1.0, 3, 4, 5], [0, 0, 2, 2]),
    ("sum", False, [2.0, 0, 1], [1.0, 3, 4, 5], [0, 0, 2, 2]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_gradients_at_ties_and_zeros(case: tuple) -> None:
    results = []
    for L in (chainrule, torch):
        x, s, y, (gx, gs) = _grads(L, *case)
        results.append((y.tolist(), gx.tolist(), gs.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_double_backward(case: tuple) -> None:
    results = []
    for L in (chainrule, torch):
        x, s, y, (gx, gs) = _grads(L, *case, create_graph=True)
        names = (gx.grad_fn is not None, str(gs).replace("chainrule", "torch"))
        results.append(
            (
                names,
                outcome(
                    lambda L, gx=gx, gs=gs, x=x, s=s: [
                        None if g is None else g.tolist()
                        for g in L.autograd.grad(
                            (gx * gx).sum() + (gs * gs).sum(), [x, s], allow_unused=True
                        )
                    ],
                    L,
                ),
            )
        )
    assert results[0] == results[1]


def test_index_reduce_gradients_at_ties_and_zeros() -> None:
    results = []
    for L in (chainrule, torch):
        row = []
        for reduce in ("prod", "amax", "amin", "mean"):
            for inc in (True, False):
                x = L.tensor([[2.0, 0, 1], [3.0, 3, 3]], requires_grad=True)
                s = L.tensor([[0.0, 4], [3.0, 3]], requires_grad=True)
                y = x.index_reduce(1, L.tensor([0, 0]), s, reduce, include_self=inc)
                gx, gs = L.autograd.grad((y * L.arange(6.0).reshape(2, 3)).sum(), [x, s])
                row.append((y.tolist(), gx.tolist(), gs.tolist()))
        results.append(row)
    assert results[0] == results[1]


def test_nodes_and_saved_values() -> None:
    seen = []
    for L in (chainrule, torch):
        x = L.tensor([1.0, 2], requires_grad=True)
        s = L.tensor([3.0, 4], requires_grad=True)
        y = x.scatter_reduce(0, L.tensor([1, 1]), s, "amax", include_self=False)
        z = x.index_reduce(0, L.tensor([1, 1]), s, "mean")
        seen.append(
            [
                (
                    n.name(),
                    n._saved_reduce,
                    n._saved_include_self,
                    n._saved_dim,
                    n._saved_index.tolist(),
                    n._saved_self.tolist(),
                    n._saved_result.tolist(),
                    [type(f).__name__ if f else None for f, _ in n.next_functions],
                )
                for n in (y.grad_fn, z.grad_fn)
            ]
        )
    assert seen[0] == seen[1]


def test_backward_refuses_the_max_name() -> None:
    seen = []
    for L in (chainrule, torch):
        x = L.tensor([1.0, 2], requires_grad=True)
        y = x.scatter_reduce(0, L.tensor([1, 1]), L.tensor([3.0, 4]), "max")
        seen.append(outcome(lambda L, y=y: y.sum().backward(), L))
    assert seen[0] == seen[1]


def test_index_reduce_warns_once_as_beta() -> None:
    import chainrule.ops.index_reductions as module

    module._BETA_WARNED = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            chainrule.ones(2).index_reduce(0, chainrule.tensor([0]), chainrule.ones(1), "prod")
    messages = [str(w.message) for w in caught]
    assert messages == ["index_reduce() is in beta and the API may change at any time."]


def test_forward_ad_amax_excluding_self() -> None:
    seen = []
    for L in (chainrule, torch):
        fwad = L.autograd.forward_ad
        row = []
        for self_v, src_v, idx, inc in [
            ([3.0, 5], [3.0, 1], [0, 0], False),
            ([3.0, 5], [3.0, 3], [0, 0], True),
            ([3.0, 5], [1.0, 1], [0, 1], False),
            ([1.0, 5], [3.0, 3], [0, 0], False),
        ]:
            with fwad.dual_level():
                a = fwad.make_dual(L.tensor(self_v), L.tensor([10.0, 100]))
                b = fwad.make_dual(L.tensor(src_v), L.tensor([1.0, 2]))
                for reduce in ("amax", "amin", "sum", "mean"):
                    y = a.scatter_reduce(0, L.tensor(idx), b, reduce, include_self=inc)
                    row.append(fwad.unpack_dual(y).tangent.tolist())
        seen.append(row)
    assert seen[0] == seen[1]


def test_forward_ad_index_reduce_refuses() -> None:
    seen = []
    for L in (chainrule, torch):
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            a = fwad.make_dual(L.ones(2), L.ones(2))
            seen.append(
                outcome(lambda L, a=a: a.index_reduce(0, L.tensor([0]), L.ones(1), "prod"), L)
            )
    assert seen[0] == seen[1]
