"""addmv, addr, baddbmm and addbmm against PyTorch: values, dtypes, layouts, beta=0 with
NaN in self, integer and bool inputs, float16 rounding, methods, in-place forms and errors.
Gradients are swept by the OpInfos in tests/opinfos/fused_products.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

rng = np.random.default_rng(0)
SHAPES = {
    "M": (3, 4),
    "v": (4,),
    "s": (3,),
    "B": (2, 3, 4),
    "C": (2, 4, 5),
    "S": (3, 5),
    "S3": (3, 3, 5),
}
A = {k: rng.standard_normal(s).astype(np.float32) for k, s in SHAPES.items()}


def show(r: Any) -> Any:
    return str(r), r.grad_fn.name() if r.grad_fn else None, r.stride(), str(r.dtype)


CASES: dict[str, Any] = {
    "addmv": lambda L, a: L.addmv(a["s"], a["M"], a["v"]),
    "addmv_0d": lambda L, a: L.addmv(L.tensor(1.0), a["M"], a["v"]),
    "addmv_ab": lambda L, a: L.addmv(a["s"], a["M"], a["v"], beta=0.5, alpha=-2),
    "addmv_beta0_nan": lambda L, a: L.addmv(L.full((3,), float("nan")), a["M"], a["v"], beta=0),
    "addmv_badself": lambda L, a: L.addmv(L.rand(2), a["M"], a["v"]),
    "addmv_badvec": lambda L, a: L.addmv(a["s"], a["M"], L.rand(3)),
    "addmv_dims": lambda L, a: L.addmv(a["s"], a["M"][0], a["v"]),
    "addmv_dtype": lambda L, a: L.addmv(a["s"].double(), a["M"], a["v"]),
    "addmv_long": lambda L, a: L.addmv(
        (a["s"] * 10).long(), (a["M"] * 10).long(), (a["v"] * 10).long(), alpha=2
    ),
    "addmv_long_float_alpha": lambda L, a: L.addmv(
        (a["s"] * 10).long(), (a["M"] * 10).long(), (a["v"] * 10).long(), alpha=2.5
    ),
    "addmv_half": lambda L, a: L.addmv(a["s"].half(), a["M"].half(), a["v"].half()),
    "addmv_method": lambda L, a: a["s"].addmv(a["M"], a["v"], alpha=3),
    "addmv_inplace": lambda L, a: a["s"].clone().addmv_(a["M"], a["v"]),
    "addmv_torch_inplace": lambda L, a: L.addmv_(a["s"].clone(), a["M"], a["v"]),
    "addmv_empty": lambda L, a: L.addmv(L.zeros(3), L.zeros(3, 0), L.zeros(0)),
    "addr": lambda L, a: L.addr(a["M"], a["s"], a["v"]),
    "addr_0d": lambda L, a: L.addr(L.tensor(2.0), a["s"], a["v"], beta=2, alpha=0.5),
    "addr_bad": lambda L, a: L.addr(a["M"], a["s"], a["v"][:3]),
    "addr_2d": lambda L, a: L.addr(a["M"], a["s"][None], a["v"]),
    "addr_promote": lambda L, a: L.addr(a["M"], a["s"].double(), a["v"]),
    "addr_long": lambda L, a: L.addr(
        (a["M"] * 10).long(), (a["s"] * 10).long(), (a["v"] * 10).long()
    ),
    "addr_bool": lambda L, a: L.addr(a["M"] > 0, a["s"] > 0, a["v"] > 0),
    "addr_bool_beta": lambda L, a: L.addr(a["M"], a["s"], a["v"], beta=True),
    "addr_long_alpha": lambda L, a: L.addr(
        (a["M"] * 10).long(), (a["s"] * 10).long(), (a["v"] * 10).long(), alpha=1.5
    ),
    "addr_half": lambda L, a: L.addr(a["M"].half(), a["s"].half(), a["v"].half()),
    "addr_inplace": lambda L, a: a["M"].clone().addr_(a["s"], a["v"], alpha=2),
    "addr_inplace_size": lambda L, a: a["M"].clone().addr_(a["s"], a["v"][:3]),
    "addr_inplace_rows": lambda L, a: a["M"][:1].clone().addr_(a["s"], a["v"]),
    "addr_inplace_1d": lambda L, a: a["s"].clone().addr_(a["s"], a["s"]),
    "addr_inplace_3d": lambda L, a: a["M"][None].clone().addr_(a["s"], a["v"]),
    "addr_inplace_long": lambda L, a: a["M"].long().addr_(a["s"], a["v"][:3]),
    "addr_inplace_2d_vec": lambda L, a: a["M"].clone().addr_(a["s"][None], a["v"]),
    "addr_inplace_number": lambda L, a: a["M"].clone().addr_(1, a["v"]),
    "addr_inplace_positional": lambda L, a: a["M"].clone().addr_(a["s"], a["v"], 1),
    "addr_inplace_keywords": lambda L, a: a["M"].clone().addr_(vec2=a["v"], vec1=a["s"]),
    "baddbmm": lambda L, a: L.baddbmm(a["S"], a["B"], a["C"]),
    "baddbmm_ab": lambda L, a: L.baddbmm(a["S"][0], a["B"], a["C"], beta=-1, alpha=0.25),
    "baddbmm_badself": lambda L, a: L.baddbmm(a["S3"], a["B"], a["C"]),
    "baddbmm_bad": lambda L, a: L.baddbmm(a["S"], a["B"], a["C"][:, :3]),
    "baddbmm_batches": lambda L, a: L.baddbmm(a["S"], a["B"], a["C"][:1]),
    "baddbmm_dtype": lambda L, a: L.baddbmm(a["S"].double(), a["B"], a["C"]),
    "baddbmm_dtype2": lambda L, a: L.baddbmm(a["S"], a["B"].double(), a["C"]),
    "baddbmm_half": lambda L, a: L.baddbmm(a["S"].half(), a["B"].half(), a["C"].half()),
    "baddbmm_inplace": lambda L, a: L.zeros(2, 3, 5).baddbmm_(a["B"], a["C"]),
    "addbmm": lambda L, a: L.addbmm(a["S"], a["B"], a["C"]),
    "addbmm_ab": lambda L, a: a["S"][0].addbmm(a["B"], a["C"], beta=0, alpha=2),
    "addbmm_3dself": lambda L, a: L.addbmm(L.rand(2, 3, 5), a["B"], a["C"]),
    "addbmm_bad": lambda L, a: L.addbmm(a["S"], a["B"], a["C"][:, :3]),
    "addbmm_batches": lambda L, a: L.addbmm(a["S"], a["B"], a["C"][:1]),
    "addbmm_dtype": lambda L, a: L.addbmm(a["S"].double(), a["B"], a["C"]),
    "addbmm_dtype2": lambda L, a: L.addbmm(a["S"], a["B"].double(), a["C"]),
    "addbmm_half": lambda L, a: L.addbmm(a["S"].half(), a["B"].half(), a["C"].half()),
    "addbmm_inplace": lambda L, a: a["S"].clone().addbmm_(a["B"], a["C"]),
    "addbmm_empty_batch": lambda L, a: L.addbmm(a["S"], L.zeros(0, 3, 4), L.zeros(0, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        a = {k: lib.tensor(v) for k, v in A.items()}
        seen.append(outcome(lambda lib, a=a: show(CASES[name](lib, a)), lib))
    assert seen[0] == seen[1]


HALF_ARGS = {
    "addmv": ((30,), (30, 40), (40,)),
    "addr": ((30, 40), (30,), (40,)),
    "baddbmm": ((6, 30, 5), (6, 30, 40), (6, 40, 5)),
    "addbmm": ((30, 5), (6, 30, 40), (6, 40, 5)),
}


@pytest.mark.parametrize("name", sorted(HALF_ARGS))
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (1.5, 0.7), (0, 2.5)])
def test_float16_rounds_as_torch(name: str, beta: float, alpha: float) -> None:
    """addr to the bit; the products up to their summation order (an ulp)."""
    arrays = [rng.standard_normal(s).astype(np.float16) for s in HALF_ARGS[name]]
    ours = getattr(chainrule, name)(*map(chainrule.tensor, arrays), beta=beta, alpha=alpha)
    theirs = getattr(torch, name)(*map(torch.tensor, arrays), beta=beta, alpha=alpha)
    a, b = ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64)
    if name == "addr":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", sorted(HALF_ARGS))
def test_gradients_of_self_with_beta_zero_are_zero(name: str) -> None:
    grads = []
    for lib in (chainrule, torch):
        args = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in HALF_ARGS[name]]
        getattr(lib, name)(*args, beta=0).sum().backward()
        grads.append([g.grad.tolist() for g in args[:1]])
    assert grads[0] == grads[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize(
    "scalars", [{"beta": 1j}, {"alpha": 2j}, {"beta": 1.5}, {"alpha": 1.5}, {"alpha": 2 + 0j}]
)
@pytest.mark.parametrize("inplace", [False, True])
def test_addr_refuses_scalars_the_result_cannot_take(dtype, scalars, inplace) -> None:
    """PyTorch's error (or result) for complex and float beta/alpha, and nothing changed."""
    outcomes = []
    for lib in (torch, chainrule):
        dt = getattr(lib, dtype)
        x, v, w = lib.zeros(2, 3, dtype=dt), lib.ones(2, dtype=dt), lib.ones(3, dtype=dt)
        try:
            out = x.addr_(v, w, **scalars) if inplace else lib.addr(x, v, w, **scalars)
            outcomes.append(("ok", out.to(lib.float64).tolist()))
        except RuntimeError as error:
            outcomes.append((str(error), x.to(lib.float64).tolist()))
    assert outcomes[1] == outcomes[0]


ADDMV_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int8",
    "uint8",
    "bool",
    "uint16",
]
ADDMV_SCALARS = [
    {"beta": 1j},
    {"alpha": 2j},
    {"beta": 2 + 0j, "alpha": 3 + 0j},
    {"beta": 1.5},
    {"alpha": 2.5},
    {},
]


@pytest.mark.parametrize("dtype", ADDMV_DTYPES)
@pytest.mark.parametrize("scalars", ADDMV_SCALARS, ids=repr)
@pytest.mark.parametrize("inplace", [False, True])
def test_addmv_refuses_scalars_the_result_cannot_take(dtype, scalars, inplace) -> None:
    """addmv: a complex beta or alpha with an imaginary part on a real result is PyTorch's
    RuntimeError (naming the C++ type, c10::BFloat16 for bfloat16 although it computes in
    float32), bool and wide unsigned results have no kernel; nothing is written."""
    outcomes = []
    for lib in (torch, chainrule):
        dt = getattr(lib, dtype)
        x, m, v = lib.zeros(2, dtype=dt), lib.ones(2, 3, dtype=dt), lib.ones(3, dtype=dt)
        try:
            out = x.addmv_(m, v, **scalars) if inplace else lib.addmv(x, m, v, **scalars)
            outcomes.append(("ok", out.to(lib.float64).tolist(), str(out.dtype).split(".")[-1]))
        except (RuntimeError, NotImplementedError) as error:
            outcomes.append((type(error).__name__, str(error), x.to(lib.float64).tolist()))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_addmv_shape_error_comes_before_the_scalar_error(dtype: str) -> None:
    def call(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        x, m, v = lib.zeros(3, dtype=dt), lib.ones(2, 3, dtype=dt), lib.ones(3, dtype=dt)
        return lib.addmv(x, m, v, beta=1j)

    assert outcome(call, chainrule) == outcome(call, torch)
