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
