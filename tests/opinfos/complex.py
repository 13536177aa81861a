"""Complex numbers through real inputs and outputs: the sweep's inputs and cotangents are real,
so each entry makes complex values from them (view_as_complex, complex, polar) and returns
real ones (view_as_real, abs, angle, .real/.imag). Complex inputs themselves are compared in
tests/test_complex_autograd.py; ops off the allowlist refuse (tests/test_complex_refused.py).
"""

from __future__ import annotations

from . import OpInfo

PAIRS = [((3, 2),), ((2, 4, 2),)]
TWO = [((3,), (3,)), ((2, 1), (3,))]


def _is_conj_checked(lib, c):
    assert c.is_conj() and lib.is_conj(c)
    return c


def _uniform(rng, shapes, dtype):
    return [rng.uniform(-2.0, 2.0, s).astype(dtype) for s in shapes]


OPS = [
    OpInfo("view_as_complex_real", lambda lib, x: lib.view_as_real(
        lib.view_as_complex(x) * (1 - 2j)), PAIRS),
    OpInfo("conj", lambda lib, x: lib.view_as_real(
        _is_conj_checked(lib, lib.view_as_complex(x).conj()).resolve_conj()
        * lib.view_as_complex(x)), PAIRS),
    OpInfo("torch.conj", lambda lib, x: lib.view_as_real(lib.resolve_conj(
        _is_conj_checked(lib, lib.conj(lib.view_as_complex(x * 1))))), PAIRS),
    OpInfo("real_imag", lambda lib, x: lib.view_as_complex(x).real * lib.view_as_complex(x).imag,
           PAIRS),
    OpInfo("torch.real_imag", lambda lib, x: lib.real(lib.view_as_complex(x)) - lib.imag(
        lib.view_as_complex(x)) * 2, PAIRS),
    OpInfo("angle", lambda lib, x: lib.view_as_complex(x).angle(), PAIRS, low=0.2, high=2.0,
           second_order=False),  # (its complex derivative uses where, off the allowlist)
    OpInfo("angle_real", lambda lib, x: lib.angle(x), [((3,),), ((2, 3),)], second_order=False),
    OpInfo("Tensor.angle_real", lambda lib, x: x.angle(), [((3,),)], second_order=False),
    OpInfo("complex", lambda lib, x, y: lib.view_as_real(lib.complex(x, y) * (2 + 1j)), TWO),
    OpInfo("polar", lambda lib, x, y: lib.view_as_real(lib.polar(x, y)), TWO, low=0.2, high=2.0,
           second_order=False),  # (its derivative uses sgn, off the allowlist)
    OpInfo("complex_abs", lambda lib, x: lib.view_as_complex(x).abs(), PAIRS, low=0.2,
           second_order=False),
    # (its own inputs: NumPy's complex matmul places NaN where inf meets zero otherwise than
    # PyTorch's BLAS, a forward difference outside autograd, so no special-values sample)
    OpInfo("complex_mH", lambda lib, x: lib.view_as_real(
        (lib.view_as_complex(x).mH @ lib.view_as_complex(x)).resolve_conj()), [((2, 3, 2),)],
        make_inputs=_uniform),
]
for _info in OPS:  # (no half-precision sweep: chainrule has no complex32)
    _info.extra["complex"] = True
