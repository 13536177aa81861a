"""``add``/``sub`` with ``alpha``: PyTorch's checks of alpha against the result's dtype, its
casting of alpha to that dtype, and its single rounding (a fused multiply-add) in float32."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

DTYPES = ("float16", "float32", "float64", "int64", "uint8", "bool")
ALPHAS = (2, -3, 0, 0.5, -0.01, 1.0, True, False, 1 + 2j)
FORMS: dict[str, Callable[[Any, Any, Any, Any], Any]] = {
    "add": lambda lib, x, y, a: lib.add(x, y, alpha=a),
    "sub": lambda lib, x, y, a: lib.sub(x, y, alpha=a),
    "Tensor.add": lambda lib, x, y, a: x.add(y, alpha=a),
    "Tensor.sub_": lambda lib, x, y, a: x.clone().sub_(y, alpha=a),
    "Tensor.add_": lambda lib, x, y, a: x.clone().add_(y, alpha=a),
    "rsub": lambda lib, x, y, a: lib.rsub(x, y, alpha=a),
}


def _operands(lib: Any, dtype: str) -> tuple[Any, Any]:
    x = np.array([1.5, -2.25, 3.0, 0.0, 7.0, 100.0]) if "float" in dtype else np.arange(6) * 3
    y = np.array([0.1, 3.0, -0.7, 2.0, 1e-3, 5.0]) if "float" in dtype else np.arange(6) + 1
    return (lib.from_numpy(x.astype(dtype)), lib.from_numpy(y.astype(dtype)))


def _terms(dtype: str, alpha: Any) -> np.ndarray:
    """A bound on either term, per element (any form: add, sub, rsub): the scale of a
    cancelling sum's error."""
    x, y = (t.numpy().astype(np.float64) for t in _operands(chainrule, dtype))
    return np.maximum(np.abs(x), np.abs(y)) * max(1.0, abs(alpha))


def _outcome(lib: Any, form: str, dtype: str, alpha: Any) -> Any:
    x, y = _operands(lib, dtype)
    try:
        out = FORMS[form](lib, x, y, alpha)
    except (RuntimeError, TypeError) as error:
        return type(error).__name__, str(error).split("\n")[0]
    return str(out.dtype).split(".")[-1], out.numpy()


@pytest.mark.parametrize("alpha", ALPHAS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", list(FORMS))
def test_alpha_against_torch(form: str, dtype: str, alpha: Any) -> None:
    ours = _outcome(chainrule, form, dtype, alpha)
    theirs = _outcome(torch, form, dtype, alpha)
    assert ours[0] == theirs[0]
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]  # the error message
    elif dtype in ("float32", "float64"):
        # PyTorch fuses the multiply-add; chainrule rounds twice: at most an ulp apart.
        scale = _terms(dtype, alpha).astype(theirs[1].dtype)
        _within_an_ulp(ours[1], theirs[1], scale)
    else:
        np.testing.assert_array_equal(ours[1], theirs[1])


def _within_an_ulp(ours: np.ndarray, theirs: np.ndarray, scale: np.ndarray | None = None
                   ) -> None:
    """At most one ulp of the result (or of ``scale``, the larger term, where the sum cancels)
    from PyTorch's: PyTorch's FMA rounds once, chainrule twice."""
    larger = np.abs(theirs) if scale is None else np.maximum(np.abs(theirs), scale)
    assert (np.abs(ours - theirs) <= np.spacing(larger)).all()


@pytest.mark.parametrize("alpha", (-0.01, 0.7, 3.0, -1e-3))
def test_float32_is_an_ulp_from_the_fused_multiply_add(alpha: float) -> None:
    """Alpha cast to float32; PyTorch's one FMA against chainrule's two roundings, also in
    place (the optimizers' path), on a long tensor."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(100_000).astype(np.float32)
    b = rng.standard_normal(100_000).astype(np.float32)
    theirs = torch.from_numpy(a).add(torch.from_numpy(b), alpha=alpha).numpy()
    ours = chainrule.from_numpy(a).add(chainrule.from_numpy(b), alpha=alpha).numpy()
    terms = np.maximum(np.abs(a), np.abs(np.float32(alpha) * b))
    _within_an_ulp(ours, theirs, terms)
    in_place = chainrule.from_numpy(a.copy())
    in_place.add_(chainrule.from_numpy(b), alpha=alpha)
    np.testing.assert_array_equal(in_place.numpy(), ours)


@pytest.mark.parametrize("alpha", (-0.01, 0.7, 3.0))
def test_float16_follows_the_element_loop(alpha: float) -> None:
    """Small float16 tensors (PyTorch's element loop): bit for bit. On long ones PyTorch's
    vectorised loop rounds once in float32 instead: at most an ulp of the larger term apart
    (the rounded product's error, which cancellation can leave as all of a tiny sum)."""
    rng = np.random.default_rng(4)
    for n, ulps in ((31, 0), (4096, 1)):
        a = rng.standard_normal(n).astype(np.float16)
        b = rng.standard_normal(n).astype(np.float16)
        theirs = torch.from_numpy(a).add(torch.from_numpy(b), alpha=alpha).numpy()
        ours = chainrule.from_numpy(a).add(chainrule.from_numpy(b), alpha=alpha).numpy()
        larger = np.maximum.reduce([np.abs(a), np.abs(np.float16(alpha) * b), np.abs(theirs)])
        spacing = np.spacing(larger).astype(np.float64)
        assert (np.abs(ours.astype(np.float64) - theirs) <= ulps * spacing).all()


def test_fused_add_does_not_overflow_in_the_product() -> None:
    x = np.array([3e38], np.float32)
    for lib in (chainrule, torch):
        assert lib.from_numpy(x).sub(lib.from_numpy(x), alpha=2).item() == pytest.approx(-3e38)


_SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, -3e38, 1.5, 1e-45, -2.0],
                    np.float32)


@pytest.mark.parametrize("alpha", (-0.01, 0.5, 2, -3.0, 1e30))
@pytest.mark.parametrize("method", ("add_", "sub_"))
def test_in_place_step_matches_the_op_at_special_values(method: str, alpha: float) -> None:
    """``p.add_(g, alpha=)`` on float32 (the optimizers' step, written straight into ``p``)
    gives the out-of-place op's bits at inf, NaN, signed zeros and overflowing products, on a
    transposed ``self`` and an expanded ``other``; and PyTorch's values within an ulp."""
    grid_self = np.add.outer(_SPECIAL, np.zeros(10, np.float32))       # rows: self's values
    grid_other = np.add.outer(np.zeros(10, np.float32), _SPECIAL)      # columns: other's
    for lib_self, lib_other in ((grid_self, grid_other), (grid_self.T, grid_other.T)):
        expected = getattr(chainrule.from_numpy(lib_self), method[:-1])(
            chainrule.from_numpy(lib_other), alpha=alpha).numpy()
        ours = chainrule.from_numpy(lib_self.copy().T.copy().T if lib_self.flags.f_contiguous
                                    else lib_self.copy())
        before = ours._version
        assert getattr(ours, method)(chainrule.from_numpy(lib_other), alpha=alpha) is ours
        assert ours._version == before + 1
        np.testing.assert_array_equal(ours.numpy(), expected)
        theirs = getattr(torch.from_numpy(lib_self.copy()), method)(
            torch.from_numpy(lib_other), alpha=alpha).numpy()
        np.testing.assert_array_equal(np.isnan(ours.numpy()), np.isnan(theirs))
        finite = np.isfinite(theirs)
        np.testing.assert_array_equal(ours.numpy()[~finite], theirs[~finite])
        product = np.abs(float(np.float32(alpha)) * lib_other.astype(np.float64))
        scale = np.maximum(np.abs(lib_self), np.minimum(product, np.finfo(np.float32).max)
                           ).astype(np.float32)  # (an overflowing product: the largest term)
        _within_an_ulp(ours.numpy()[finite], theirs[finite], scale[finite])
    row = chainrule.from_numpy(_SPECIAL.copy())
    expanded = chainrule.tensor([2.5]).expand(10)
    expected = getattr(chainrule.from_numpy(_SPECIAL), method[:-1])(expanded, alpha=alpha)
    getattr(row, method)(expanded, alpha=alpha)
    np.testing.assert_array_equal(row.numpy(), expected.numpy())
