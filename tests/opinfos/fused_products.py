"""addmv, addr, baddbmm and addbmm: ``self`` broadcast or not, ``beta``/``alpha`` of 1, other
numbers and ``beta=0``; the methods and in-place forms."""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo(
        "addmv", lambda lib, s, m, v: lib.addmv(s, m, v), [((3,), (3, 4), (4,)), ((), (2, 5), (5,))]
    ),
    OpInfo(
        "addmv_scaled",
        lambda lib, s, m, v: lib.addmv(s, m, v, beta=0.5, alpha=-1.5),
        [((3,), (3, 4), (4,)), ((1,), (3, 4), (4,))],
    ),
    OpInfo("addmv_beta0", lambda lib, s, m, v: lib.addmv(s, m, v, beta=0), [((3,), (3, 4), (4,))]),
    OpInfo("Tensor.addmv", lambda lib, s, m, v: s.addmv(m, v, alpha=2), [((3,), (3, 4), (4,))]),
    OpInfo(
        "Tensor.addmv_", lambda lib, s, m, v: s.clone().addmv_(m, v, beta=2), [((3,), (3, 4), (4,))]
    ),
    OpInfo(
        "torch.addmv_", lambda lib, s, m, v: lib.addmv_(s.clone(), m, v), [((3,), (3, 4), (4,))]
    ),
    OpInfo(
        "addr", lambda lib, s, a, b: lib.addr(s, a, b), [((3, 4), (3,), (4,)), ((), (2,), (5,))]
    ),
    OpInfo(
        "addr_scaled",
        lambda lib, s, a, b: lib.addr(s, a, b, beta=-2, alpha=0.5),
        [((3, 4), (3,), (4,)), ((1, 4), (3,), (4,))],
    ),
    OpInfo("Tensor.addr", lambda lib, s, a, b: s.addr(a, b, beta=0), [((3, 4), (3,), (4,))]),
    OpInfo(
        "Tensor.addr_", lambda lib, s, a, b: s.clone().addr_(a, b, alpha=3), [((3, 4), (3,), (4,))]
    ),
    OpInfo(
        "baddbmm",
        lambda lib, s, a, b: lib.baddbmm(s, a, b),
        [((2, 3, 5), (2, 3, 4), (2, 4, 5)), ((3, 5), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "baddbmm_scaled",
        lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=0.25, alpha=2),
        [((1, 3, 1), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "Tensor.baddbmm",
        lambda lib, s, a, b: s.baddbmm(a, b, beta=0),
        [((2, 3, 5), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "Tensor.baddbmm_",
        lambda lib, s, a, b: s.clone().baddbmm_(a, b, alpha=-1),
        [((2, 3, 5), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "addbmm",
        lambda lib, s, a, b: lib.addbmm(s, a, b),
        [((3, 5), (2, 3, 4), (2, 4, 5)), ((5,), (3, 3, 2), (3, 2, 5))],
    ),
    OpInfo(
        "addbmm_scaled",
        lambda lib, s, a, b: lib.addbmm(s, a, b, beta=1.5, alpha=-0.5),
        [((3, 5), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "Tensor.addbmm",
        lambda lib, s, a, b: s.addbmm(a, b, beta=0),
        [((3, 5), (2, 3, 4), (2, 4, 5))],
    ),
    OpInfo(
        "Tensor.addbmm_",
        lambda lib, s, a, b: s.clone().addbmm_(a, b, beta=2),
        [((3, 5), (2, 3, 4), (2, 4, 5))],
    ),
]
