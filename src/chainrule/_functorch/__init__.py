"""functorch, the package PyTorch ships for code written before ``torch.func``: its deprecated
transforms (``functorch.vmap``, ``grad``, ``jvp`` ...: ``torch.func``'s, with PyTorch's
FutureWarning) and ``make_functional`` / ``make_functional_with_buffers`` /
``combine_state_for_ensemble``. ``python -m chainrule run`` answers ``import functorch`` with
this package, as ``import torch`` with chainrule.
"""

from __future__ import annotations

from .. import torch_version as _torch_version
from .deprecated import (
    combine_state_for_ensemble,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    make_functional,
    make_functional_with_buffers,
    vjp,
    vmap,
)
from .make_functional import FunctionalModule, FunctionalModuleWithBuffers

__all__ = [
    "FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
    "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
    "make_functional", "make_functional_with_buffers", "vjp", "vmap",
]  # fmt: skip

__version__ = _torch_version.__version__
