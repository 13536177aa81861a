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



IDENTITY_CASES = {
    "to meta": lambda lib, m: m.to("meta"),
    "to cpu": lambda lib, m: m.to("cpu"),
    "to a dtype": lambda lib, m: m.to(lib.float64),
    "double()": lambda lib, m: m.double(),
    "cpu()": lambda lib, m: m.cpu(),
    "to_empty on the cpu": lambda lib, m: m.to_empty(device="cpu"),
    "to_empty on meta": lambda lib, m: m.to_empty(device="meta"),
    "meta, then to_empty on the cpu": lambda lib, m: m.to("meta").to_empty(device="cpu"),
    "meta, then to meta": lambda lib, m: m.to("meta").to("meta"),
}


@pytest.mark.parametrize("case", list(IDENTITY_CASES))
def test_parameters_replaced_between_cpu_and_meta(case: str) -> None:
    """Between the CPU and meta, PyTorch's _apply replaces each Parameter (and its gradient)
    with a new one (m.weight is not the old weight, which keeps its device); on the same device
    type it keeps them and sets their .data. chainrule kept them always (commit 9db0b3e's
    leftover)."""

    def program(lib: Any) -> Any:
        m = lib.nn.Linear(2, 2)
        m.register_buffer("buf", lib.ones(2))
        w, b, buf = m.weight, m.bias, m.buf
        w.grad = lib.ones(2, 2)
        grad = w.grad
        IDENTITY_CASES[case](lib, m)
        return (
            m.weight is w,
            m.bias is b,
            m.buf is buf,
            type(m.weight).__name__,
            str(m.weight.device),
            m.weight.requires_grad,
            m.weight.is_leaf,
            m.weight.grad is grad,
            str(m.weight.grad.device),
            str(w.device),
            str(grad.device),
            [n for n, _ in m.named_parameters()],
        )

    same_outcome(program)
