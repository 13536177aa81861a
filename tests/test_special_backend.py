"""SciPy's special functions (when installed) and chainrule's own agree, dtype included."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import _backend, _special

pytestmark = pytest.mark.skipif(_backend.SCIPY is None, reason="SciPy is not installed")

FUNCTIONS = ["erf", "erfc", "erfinv", "erfcx", "lgamma", "digamma", "log_ndtr"]


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scipy_and_own_implementation_agree(name: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    low, high = (-0.999, 0.999) if name == "erfinv" else (0.05, 8.0) if "gamma" in name else (-6, 6)
    x = rng.uniform(low, high, 2000).astype(dtype)
    fast = getattr(_backend.special, name)(x)
    own = getattr(_special, name)(x)
    assert fast.dtype == own.dtype == np.dtype(dtype)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(fast, own, rtol=tolerance, atol=tolerance)


def test_polygamma_agrees() -> None:
    x = np.linspace(0.1, 10, 500)
    for n in range(4):
        np.testing.assert_allclose(_backend.special.polygamma(n, x), _special.polygamma(n, x),
                                   rtol=1e-10)
