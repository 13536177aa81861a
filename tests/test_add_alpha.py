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
    elif dtype == "float64":
        # PyTorch fuses the multiply-add; chainrule rounds twice: at most an ulp apart.
        np.testing.assert_allclose(ours[1], theirs[1], rtol=4e-16, atol=0)
    else:
        np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("alpha", (-0.01, 0.7, 3.0, -1e-3))
def test_float32_is_one_fused_multiply_add_as_torch(alpha: float) -> None:
    """Alpha cast to float32, one FMA, rounded once: bit for bit on a long tensor."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(100_000).astype(np.float32)
    b = rng.standard_normal(100_000).astype(np.float32)
    theirs = torch.from_numpy(a).add(torch.from_numpy(b), alpha=alpha).numpy()
    ours = chainrule.from_numpy(a).add(chainrule.from_numpy(b), alpha=alpha).numpy()
    np.testing.assert_array_equal(ours, theirs)
    in_place = chainrule.from_numpy(a.copy())
    in_place.add_(chainrule.from_numpy(b), alpha=alpha)
    np.testing.assert_array_equal(in_place.numpy(), theirs)


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
