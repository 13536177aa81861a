"""``chainrule.nn.parallel``: ``DistributedDataParallel`` over ``chainrule.distributed``."""

from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
