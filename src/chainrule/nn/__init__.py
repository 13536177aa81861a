"""``chainrule.nn``: modules, parameters and functional ops."""

from __future__ import annotations

from . import functional
from .modules import Linear, Module
from .parameter import Parameter

__all__ = ["functional", "Linear", "Module", "Parameter"]
