"""``chainrule.utils``: data loading (``utils.data``), activation checkpointing
(``utils.checkpoint``) and hook handles (``utils.hooks``)."""

from __future__ import annotations

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
