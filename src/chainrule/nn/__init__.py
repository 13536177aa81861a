"""``chainrule.nn``: modules, parameters, initialisation and functional ops.

Example:
    >>> import chainrule as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    >>> model(torch.zeros(3, 4)).shape
    chainrule.Size([3, 2])
"""

from __future__ import annotations

from . import functional, init, modules, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _MODULES
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Parameter", "functional", "init", "modules", "utils", *_MODULES]
