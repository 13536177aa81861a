"""``chainrule.nn``: modules, parameters, initialisation and functional ops.

Example:
    >>> import chainrule as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    >>> model(torch.zeros(3, 4)).shape
    chainrule.Size([3, 2])
"""

from __future__ import annotations

from . import functional, init, modules, parallel, utils
from ._factory_kwargs import factory_kwargs
from .modules import *  # noqa: F403
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

# ``+= modules.__all__`` rather than a ``*`` unpacking: pyright reads this form (mypy reads
# literal lists only, python/mypy#15300; the layers reach it through the star import).
__all__ = [
    "Buffer", "DataParallel", "Parameter", "UninitializedBuffer", "UninitializedParameter",
    "factory_kwargs",
    "functional", "init", "modules", "parallel", "utils",
]
__all__ += modules.__all__
