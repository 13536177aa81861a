"""Process-wide switches PyTorch programs touch that change nothing numerical in chainrule:
matmul precision (chainrule computes float32 products in float32 always, as ``"highest"``), the
warn-always switch, denormal flushing (NumPy cannot flush denormals, so it reports no support,
as PyTorch does on a CPU without it), and what the build has (``has_lapack`` ...).
"""

from __future__ import annotations

import warnings
from typing import Any

from ._frames import user_stacklevel

__all__ = [
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "is_warn_always_enabled",
    "set_warn_always",
    "set_flush_denormal",
    "init_num_threads",
    "has_lapack",
    "has_spectral",
    "has_mkl",
    "has_openmp",
]

_PRECISIONS = ("highest", "high", "medium")
_STATE: dict[str, Any] = {"precision": "highest", "warn_always": False}

#: NumPy's linear algebra is LAPACK's; its FFT is pocketfft (spectral ops are there); chainrule
#: has no MKL or OpenMP kernels of its own (chainrule.backends.mkl/openmp report what the
#: process's BLAS loaded).
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


def get_float32_matmul_precision() -> str:
    """The matmul precision last set (``"highest"`` by default); chainrule always computes
    float32 products in float32."""
    return str(_STATE["precision"])


def set_float32_matmul_precision(precision: str) -> None:
    """Record ``"highest"``, ``"high"`` or ``"medium"`` (another string warns and changes
    nothing, as PyTorch's)."""
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return
    _STATE["precision"] = precision


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` turned warn-always on."""
    return bool(_STATE["warn_always"])


def set_warn_always(b: bool) -> None:
    """Record PyTorch's warn-always switch (chainrule's warnings follow Python's filters)."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _STATE["warn_always"] = b


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy's arithmetic cannot flush denormals to zero, so, as PyTorch on a CPU
    without the feature, nothing changes and the call reports it."""
    return False


def init_num_threads() -> None:
    """Nothing to initialise: the BLAS pool is sized by ``set_num_threads``."""
