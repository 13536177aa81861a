"""Errors about tensors modified in place after being saved for backward."""

from __future__ import annotations

from typing import Any

import numpy as np

from .node import Node

__all__ = ["modified_error", "describe"]


def describe(data: np.ndarray) -> str:
    """PyTorch's short description of a tensor, e.g. ``[chainrule.FloatTensor [3]]``."""
    from .._dtype import from_numpy_dtype
    from .._tensor import LEGACY_TYPE_NAMES

    name = LEGACY_TYPE_NAMES.get(from_numpy_dtype(data.dtype), "Tensor")
    dims = ", ".join(str(d) for d in data.shape)
    return f"[chainrule.{name} [{dims}]]"


def modified_error(
    data: np.ndarray,
    node: Node,
    output_nr: int,
    now: int,
    expected: int,
    owner: Any = None,
    is_output: bool = False,
) -> RuntimeError:
    """The error raised when a saved tensor's version changed before backward used it."""
    where = f", which is output {output_nr} of {node.name()}," if is_output else ""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {describe(data)}{where} is at version {now}; expected version {expected} "
        "instead. Hint: enable anomaly detection to find the operation that failed to compute "
        "its gradient, with torch.autograd.set_detect_anomaly(True)."
    )
