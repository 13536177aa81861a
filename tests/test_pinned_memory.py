"""Pinned memory on a machine without an accelerator, as PyTorch's CPU build answers.

``Tensor.is_pinned()`` is False (its ``device`` argument deprecated), ``Tensor.pin_memory()``
raises PyTorch's "Cannot access accelerator device when none is available.", and a
DataLoader with ``pin_memory=True`` warns that nothing will be pinned (and that
``pin_memory_device`` is deprecated). chainrule had neither method (AttributeError) and gave
no warning.
"""

from __future__ import annotations

import warnings
from typing import Any

from .outcomes import same_outcome


def test_tensor_methods() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with_device = x.is_pinned("cpu")
        try:
            x.pin_memory()
            pinned = "pinned"
        except RuntimeError as error:
            pinned = str(error)
        return x.is_pinned(), with_device, [(w.category, str(w.message)) for w in caught], pinned

    same_outcome(program)


def test_data_loader_warns() -> None:
    def program(lib: Any) -> Any:
        dataset = lib.utils.data.TensorDataset(lib.arange(6.0))
        messages = []
        for device in ("", "cpu"):
            loader = lib.utils.data.DataLoader(
                dataset, batch_size=2, pin_memory=True, pin_memory_device=device
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                batches = list(loader)
            messages.append([str(w.message) for w in caught])
        return batches, messages

    same_outcome(program)
