"""``DataParallel`` as a CPU-only PyTorch builds it: with no accelerator there are no devices to
scatter over, so it holds the module and its forward calls the module (``device_ids`` is empty).

Example:
    >>> import chainrule as torch
    >>> model = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    >>> model.device_ids, model(torch.zeros(4, 2)).shape
    ([], chainrule.Size([4, 3]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autograd.profiler import record_function
from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """``torch.nn.DataParallel`` on a machine without accelerators: a wrapper whose forward
    runs ``module`` on the caller's thread (saved-tensor hooks and grad mode apply to it).

    ``device_ids``, ``output_device`` and ``dim`` are accepted and, as in PyTorch without a
    GPU, not used: ``device_ids`` is ``[]`` and the module is not moved.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[int] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Call the wrapped module with the same arguments (inside a ``DataParallel.forward``
        profiler range, as PyTorch)."""
        with record_function("DataParallel.forward"):
            return self.module(*inputs, **kwargs)
