"""``chainrule.utils``: data loading (``utils.data``), activation checkpointing
(``utils.checkpoint``), hook handles (``utils.hooks``) and DLPack exchange (``utils.dlpack``)."""

from __future__ import annotations

from . import checkpoint, data, dlpack, hooks

__all__ = ["checkpoint", "data", "dlpack", "hooks"]
