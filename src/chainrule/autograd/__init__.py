"""``chainrule.autograd``: the backward engine's public face.

``backward`` and ``grad`` run the engine; ``Variable`` is the legacy wrapper; grad-mode switches
live in :mod:`.grad_mode`.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from .grad_mode import (
    detect_anomaly,
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_multithreading_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .node import AccumulateGrad, Node

__all__ = [
    "backward", "grad", "Variable", "Node", "AccumulateGrad", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
    "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "Function", "gradcheck", "gradgradcheck", "check_graph", "backward_steps",
    "is_multithreading_enabled", "set_multithreading_enabled", "enforce_grad_layout_policy",
]


_SUBMODULES = (
    "graph", "function", "functional", "gradcheck", "stepping", "anomaly", "forward_ad",
    "profiler", "profiler_util",
)
# Public names defined in a submodule: name -> submodule.
# check_graph and backward_steps are beyond PyTorch.
_FROM_SUBMODULE = {
    "Function": "function", "gradcheck": "gradcheck", "gradgradcheck": "gradcheck",
    "check_graph": "gradcheck", "backward_steps": "stepping",
    # PyTorch's names for torch._C's (installed by c_bindings)
    "SavedTensor": "c_bindings", "_unsafe_preserve_version_counter": "c_bindings",
    # the profiler's (torch.autograd._profiler_enabled, torch.autograd.kineto_available)
    "kineto_available": "profiler",
}


if TYPE_CHECKING:
    # What ``__getattr__`` below returns, spelled out for type checkers (which do not run it):
    # without these, ``torch.autograd.grad`` is an ``object`` to mypy and pyright.
    from ..viz.explain import explain
    from . import (
        anomaly,
        forward_ad,
        function,
        functional,
        graph,
        profiler,
        profiler_util,
        stepping,
    )
    from .engine import backward, grad
    from .engine import is_checkpoint_valid as _is_checkpoint_valid
    from .function import Function
    from .gradcheck import check_graph, gradcheck, gradgradcheck
    from .stepping import backward_steps
    from .variable import Variable


def __getattr__(name: str) -> object:
    # Modules that need Tensor are imported on first use: chainrule._tensor imports this
    # package (for grad mode and nodes), so importing them eagerly would be circular.
    if name == "Variable":
        from .variable import Variable

        return Variable
    if name in ("backward", "grad"):
        from . import engine

        return getattr(engine, name)
    if name == "explain":  # chainrule's own: the chain rule written out (issue 20)
        from ..viz.explain import explain

        return explain
    if name == "_profiler_enabled":  # (PyTorch's private name: whether a profiler collects)
        from .profiler import _is_profiler_enabled

        return _is_profiler_enabled
    if name == "_is_checkpoint_valid":  # (PyTorch's private name, read by utils.checkpoint)
        from .engine import is_checkpoint_valid

        return is_checkpoint_valid
    if name in _FROM_SUBMODULE:
        value = getattr(importlib.import_module(f"{__name__}.{_FROM_SUBMODULE[name]}"), name)
        globals()[name] = value  # importing autograd.gradcheck bound the module to this name
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "torch":  # (PyTorch's torch.autograd imports torch: torch.autograd.torch is torch)
        return sys.modules[__name__.partition(".")[0]]
    raise AttributeError(f"module 'chainrule.autograd' has no attribute '{name}'")
