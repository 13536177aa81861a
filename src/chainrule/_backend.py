"""The seam between chainrule and the array library that runs the math (NumPy today).

Everything above this module talks to ``np`` through here, so another array library with NumPy's
API (CuPy, say) can be put behind the same names later.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import _special

__all__ = ["np", "special", "SCIPY"]


def _load_scipy() -> Any:
    if os.environ.get("CHAINRULE_PURE_SPECIAL"):
        return None
    try:
        from scipy import special as scipy_special
    except ImportError:
        return None
    return scipy_special


def _same_dtype(fn: Any) -> Any:
    """A SciPy ufunc returning its input's floating dtype (float32 stays float32)."""

    def call(x: Any) -> np.ndarray:
        x = np.asarray(x)
        out = fn(x)
        return out.astype(x.dtype, copy=False) if x.dtype.kind in "fV" else out

    call.__name__ = getattr(fn, "__name__", "special")
    return call


def _polygamma(fn: Any) -> Any:
    def polygamma(n: int, x: Any) -> np.ndarray:
        x = np.asarray(x)
        out = fn(n, x)
        return out.astype(x.dtype, copy=False) if x.dtype.kind in "fV" else out

    return polygamma


# Special functions: chainrule's own NumPy implementations (accurate to a few ulp, in
# ``_special``), or SciPy's compiled ones when SciPy is installed (the same values, 20-50x
# faster on large arrays). Set CHAINRULE_PURE_SPECIAL=1 to use chainrule's own.
SCIPY = _load_scipy()
special = SimpleNamespace(**{name: getattr(_special, name) for name in _special.__all__})
if SCIPY is not None:
    special.erf = _same_dtype(SCIPY.erf)
    special.erfc = _same_dtype(SCIPY.erfc)
    special.erfinv = _same_dtype(SCIPY.erfinv)
    special.erfcx = _same_dtype(SCIPY.erfcx)
    special.lgamma = _same_dtype(SCIPY.gammaln)
    special.digamma = _same_dtype(SCIPY.psi)
    special.log_ndtr = _same_dtype(SCIPY.log_ndtr)
    special.polygamma = _polygamma(SCIPY.polygamma)

# PyTorch produces inf and nan silently (log(0), 0/0, sqrt(-1)); NumPy warns. Checking error
# state around every op would cost more than the op on small tensors, so, as the one global
# setting chainrule makes, NumPy's floating-point error handling is set to "ignore" (in the
# importing thread's context; restore it with numpy.seterr if your own NumPy code needs it).
np.seterr(all="ignore")
