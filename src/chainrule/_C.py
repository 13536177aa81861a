"""The few names of PyTorch's ``torch._C`` that Python code written for PyTorch uses directly:
the ``__torch_function__`` switches (``DisableTorchFunctionSubclass``,
``DisableTorchFunction``) and the opt-out implementation subclasses assign
(``__torch_function__ = torch._C._disabled_torch_function_impl``)."""

from __future__ import annotations

from ._overrides import (
           DisableTorchFunction,
           DisableTorchFunctionSubclass,
           _len_torch_function_stack,
)
from ._overrides import disabled_torch_function_impl as _disabled_torch_function_impl
from .autograd.grad_mode import (
    is_grad_layout_enforcement_enabled as _is_grad_layout_enforcement_enabled,
)
from .autograd.grad_mode import (
    set_grad_layout_enforcement_enabled as _set_grad_layout_enforcement_enabled,
)
from .autograd.graph import _current_graph_task_execution_order

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass",
           "_current_graph_task_execution_order", "_disabled_torch_function_impl",
           "_len_torch_function_stack", "_is_grad_layout_enforcement_enabled",
           "_set_grad_layout_enforcement_enabled"]
