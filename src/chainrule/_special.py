"""Special functions NumPy lacks (erf and friends), vectorised over ndarrays."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "erfc", "expit"]

_erf_scalar = np.frompyfunc(math.erf, 1, 1)
_erfc_scalar = np.frompyfunc(math.erfc, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, element-wise, in the input's dtype."""
    x = np.asarray(x)
    out = np.asarray(_erf_scalar(x), dtype=np.float64)
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64)


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, element-wise."""
    x = np.asarray(x)
    out = np.asarray(_erfc_scalar(x), dtype=np.float64)
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64)


def expit(x: np.ndarray) -> np.ndarray:
    """The logistic sigmoid ``1 / (1 + exp(-x))``, without overflow warnings."""
    x = np.asarray(x)
    out = np.empty_like(x)
    positive = x >= 0
    out[positive] = 1.0 / (1.0 + np.exp(-x[positive]))
    e = np.exp(x[~positive])
    out[~positive] = e / (1.0 + e)
    return out
