"""``chainrule._VF``: the few functions of PyTorch's ``torch._VF`` (the namespace of ATen ops
that ``torch.functional`` wraps) that code written for PyTorch calls directly."""

from __future__ import annotations

from .ops.counting import unique_dim

__all__ = ["unique_dim"]
