"""``chainrule.nn.parallel``: ``DistributedDataParallel`` over ``chainrule.distributed`` and
``DataParallel`` (a pass-through, as on a CPU-only PyTorch)."""

from __future__ import annotations

from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
