"""nn.Module.to(device) and Module.cpu() move (or refuse to move) parameters as PyTorch's.

``Module.to`` threw its device away: ``Linear(2, 2).to("meta")`` kept CPU weights (PyTorch:
meta tensors), ``.to("cuda")`` and ``.to("xyz")`` succeeded quietly (PyTorch raises), and
``Module.cpu()`` of a meta module returned it where PyTorch raises that a meta tensor has no
data. Found by helper-62's run of the model-ensembling tutorial.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CASES = {
    "meta": lambda lib: lib.nn.Linear(2, 2).to("meta"),
    "device keyword": lambda lib: lib.nn.Linear(2, 2).to(device="meta"),
    "device object": lambda lib: lib.nn.Linear(2, 2).to(lib.device("meta")),
    "meta and a dtype": lambda lib: lib.nn.Linear(2, 2).to("meta", lib.float64),
    "batch norm buffers": lambda lib: lib.nn.BatchNorm1d(3).to("meta"),
    "cpu": lambda lib: lib.nn.Linear(2, 2).to("cpu"),
    "cpu and a dtype": lambda lib: lib.nn.Linear(2, 2).to("cpu", lib.float64),
    "like a tensor": lambda lib: lib.nn.Linear(2, 2).to(lib.ones(1, dtype=lib.float64)),
    "like a meta tensor": lambda lib: lib.nn.Linear(2, 2).to(lib.ones(1, device="meta")),
    "cuda": lambda lib: lib.nn.Linear(2, 2).to("cuda"),
    "device 0": lambda lib: lib.nn.Linear(2, 2).to(0),
    "an unknown device": lambda lib: lib.nn.Linear(2, 2).to("xyz"),
    "meta, then cpu()": lambda lib: lib.nn.Linear(2, 2).to("meta").cpu(),
    "meta, then to cpu": lambda lib: lib.nn.Linear(2, 2).to("meta").to("cpu"),
    "cpu()": lambda lib: lib.nn.Linear(2, 2).cpu(),
}


@pytest.mark.parametrize("case", list(CASES))
def test_module_to_device(case: str) -> None:
    def program(lib: Any) -> Any:
        try:
            m = CASES[case](lib)
        except BaseException as error:  # noqa: BLE001 - compared with PyTorch's
            return type(error).__name__, str(error)
        tensors = list(m.named_parameters()) + list(m.named_buffers())
        return [(n, str(t.device), t.dtype, t.is_meta, type(t).__name__) for n, t in tensors]

    same_outcome(program)

