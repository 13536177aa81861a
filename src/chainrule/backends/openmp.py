"""``torch.backends.openmp``: whether an OpenMP runtime computes here (through NumPy's BLAS)."""

from __future__ import annotations

from threadpoolctl import threadpool_info

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether an OpenMP runtime is loaded in the process."""
    return any(pool.get("user_api") == "openmp" for pool in threadpool_info())
