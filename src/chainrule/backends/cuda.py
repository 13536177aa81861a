"""``torch.backends.cuda``: not built; the matmul precision flags are kept (and change
nothing)."""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["is_built", "matmul"]

#: ``torch.backends.cuda.matmul.allow_tf32`` ...
matmul = SimpleNamespace(
    allow_tf32=False,
    allow_fp16_reduced_precision_reduction=True,
    allow_bf16_reduced_precision_reduction=True,
)


def is_built() -> bool:
    """False: no CUDA."""
    return False
