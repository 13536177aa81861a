"""``chainrule.utils``: data loading (``utils.data``), activation checkpointing
(``utils.checkpoint``), hook handles (``utils.hooks``), DLPack exchange (``utils.dlpack``) and
``swap_tensors``."""

from __future__ import annotations

from . import checkpoint, data, dlpack, hooks
from .swap import swap_tensors

__all__ = ["checkpoint", "data", "dlpack", "hooks", "swap_tensors"]
