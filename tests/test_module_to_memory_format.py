"""nn.Module.to(memory_format=...) lays out the module's 4-d and 5-d parameters and buffers.

chainrule dropped the argument: ``Conv2d(3, 4, 3).to(memory_format=torch.channels_last)``
kept a contiguous weight (strides (27, 9, 3, 1); PyTorch (27, 1, 9, 3)), so a model converted
to channels-last computed in another layout than PyTorch's.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

MODELS = {
    "conv channels_last": lambda lib: lib.nn.Conv2d(3, 4, 3).to(memory_format=lib.channels_last),
    "with a dtype": lambda lib: lib.nn.Conv2d(3, 4, 3).to(
        lib.float64, memory_format=lib.channels_last
    ),
    "a network": lambda lib: lib.nn.Sequential(
        lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(), lib.nn.Linear(4, 2)
    ).to(memory_format=lib.channels_last),
    "conv3d channels_last_3d": lambda lib: lib.nn.Conv3d(2, 3, 2).to(
        memory_format=lib.channels_last_3d
    ),
    "conv3d channels_last (4-d only)": lambda lib: lib.nn.Conv3d(2, 3, 2).to(
        memory_format=lib.channels_last
    ),
    "back to contiguous": lambda lib: lib.nn.Conv2d(3, 4, 3)
    .to(memory_format=lib.channels_last)
    .to(memory_format=lib.contiguous_format),
    "an integer dtype": lambda lib: lib.nn.Conv2d(3, 4, 3).to(
        lib.int64, memory_format=lib.channels_last
    ),
}


@pytest.mark.parametrize("model", list(MODELS))
def test_module_to_memory_format(model: str) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        m = MODELS[model](lib)
        tensors = list(m.named_parameters()) + list(m.named_buffers())
        out = m(lib.ones(1, 3, 5, 5)) if model == "conv channels_last" else None
        return [(n, t.stride(), t.dtype) for n, t in tensors], out

    same_outcome(program)
