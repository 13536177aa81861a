"""``chainrule.utils``: data loading (``utils.data``)."""

from __future__ import annotations

from . import data

__all__ = ["data"]
