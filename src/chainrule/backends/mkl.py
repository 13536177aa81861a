"""``torch.backends.mkl``: whether the BLAS NumPy computes with is Intel's MKL."""

from __future__ import annotations

from threadpoolctl import threadpool_info

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether NumPy's matrix products run on MKL."""
    return any(pool.get("internal_api") == "mkl" for pool in threadpool_info())
