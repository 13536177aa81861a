"""The op sweep's table: one :class:`OpInfo` per op (or per interesting call of an op).

Each area of the op table has a module here (``pointwise.py``, ``reduction.py`` ...) that
defines a list ``OPS``; :data:`ALL_OPS` collects them. ``tests/test_op_sweep.py`` runs every
entry against PyTorch (values, first- and second-order gradients, float32 and float64) and
through a finite-difference gradcheck, so adding an entry adds its tests.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class OpInfo:
    """How to call one op in both libraries, and on what inputs.

    ``fn(lib, *tensors)`` calls the op with ``lib`` being ``chainrule`` or ``torch``;
    ``shapes`` lists the input shapes of each sample (one tuple of shapes per sample);
    ``low``/``high`` bound the random inputs (keep away from singularities);
    ``grad`` says whether gradients are checked; ``second_order`` whether double backward is.
    ``make_inputs(rng, shapes, dtype)`` can replace the random inputs (e.g. distinct values for
    max/sort so the gradient is well defined).
    """

    name: str
    fn: Callable[..., Any]
    shapes: Sequence[Sequence[tuple[int, ...]]]
    low: float = -2.0
    high: float = 2.0
    grad: bool = True
    second_order: bool = True
    gradcheck: bool = True
    make_inputs: Callable[..., list[np.ndarray]] | None = None
    atol: float = 1e-5
    rtol: float = 1e-4
    grad_inputs: Sequence[int] | None = None  # which inputs require grad (default: all)
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def _collect() -> list[OpInfo]:
    ops: list[OpInfo] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        ops.extend(getattr(module, "OPS", []))
    names = [op.name for op in ops]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"duplicate OpInfo names: {sorted(duplicates)}")
    return ops


ALL_OPS: list[OpInfo] = _collect()
