"""How fast can reverse mode in Python on NumPy be? The seed example on a bare engine.

``python -m benchmarks.bare_engine`` times the tiny workload (the seed example as users write
it: two leaves, ``(w + x) * (w + 1)``, ``backward()``, the two gradients read) four ways in one
run, interleaved:

* chainrule and PyTorch eager, as ``benchmarks/tiny.py`` times them;
* a *bare engine*: the least a Python reverse-mode engine on NumPy arrays does for this
  program (a value object per tensor, a closure-free node per op, an iterative topological
  order, gradients summed in a dict) and nothing else: no dtype promotion or checks, no
  version counters, hooks, views, grad modes, ownership rules or error messages;
* the NumPy floor: the same arithmetic with the gradients derived by hand.

It prints each time and its ratio to PyTorch's. The bare engine is what issue 13's tiny
target (0.25x PyTorch eager) has to be measured against: if the bare engine alone is near
0.25x, no engine that keeps PyTorch's semantics can meet the target on the same machine.
``--repeat N`` sets the repeats (default 11), ``--iters N`` the iterations per repeat.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from .harness import CHAINRULE, PYTORCH, import_library, interleaved, library_available, median
from .tiny import EXPECTED_GRADS, make_numpy_step, make_user_step

__all__ = ["BARE_LIBRARY", "BareTensor", "main", "make_bare_step"]


class BareTensor:
    """A NumPy array with what reverse mode needs: its gradient and the op that made it."""

    __slots__ = ("data", "grad", "parents", "backward_fn")

    def __init__(self, data: np.ndarray, parents: tuple = (), backward_fn: Any = None) -> None:
        self.data = data
        self.grad: np.ndarray | None = None
        self.parents = parents
        self.backward_fn = backward_fn

    def __add__(self, other: Any) -> BareTensor:
        if not isinstance(other, BareTensor):
            other = BareTensor(np.asarray(other, self.data.dtype))
        return BareTensor(self.data + other.data, (self, other), _add_backward)

    def __mul__(self, other: BareTensor) -> BareTensor:
        return BareTensor(self.data * other.data, (self, other), _mul_backward)

    def backward(self) -> None:
        """Gradients of this (one-element) value into every leaf's ``.grad``."""
        order: list[BareTensor] = []
        seen: set[int] = set()
        stack: list[tuple[BareTensor, bool]] = [(self, False)]
        while stack:  # iterative depth-first search: parents before children in ``order``
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents)
        grads = {id(self): np.ones(self.data.shape, self.data.dtype)}
        for node in reversed(order):
            grad = grads.pop(id(node), None)
            if grad is None:
                continue
            if node.backward_fn is None:  # a leaf
                node.grad = grad if node.grad is None else node.grad + grad
                continue
            for parent, parent_grad in zip(node.parents, node.backward_fn(node, grad), strict=True):
                old = grads.get(id(parent))
                grads[id(parent)] = parent_grad if old is None else old + parent_grad


def _add_backward(node: BareTensor, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return grad, grad


def _mul_backward(node: BareTensor, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    left, right = node.parents
    return grad * right.data, grad * left.data


def _bare_tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> BareTensor:
    """``tensor(data, dtype=..., requires_grad=...)`` of the bare engine (every value is
    differentiated: ``requires_grad`` is taken and ignored)."""
    return BareTensor(np.array(data, dtype=dtype))


#: The bare engine as the little library ``tiny.make_user_step`` writes its program against.
BARE_LIBRARY = SimpleNamespace(tensor=_bare_tensor, float32=np.float32)


def make_bare_step() -> Callable[[], tuple[Any, Any]]:
    """The seed example on the bare engine: ``tiny``'s user-style step itself."""
    return make_user_step(BARE_LIBRARY)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """Time the four ways and print times and ratios to PyTorch's."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bare_engine", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--iters", type=int, default=10000)
    args = parser.parse_args(argv)
    bare = make_bare_step()
    w, x = bare()
    got = (float(w.grad[0]), float(x.grad[0]))  # type: ignore[index]
    if got != EXPECTED_GRADS:
        raise SystemExit(f"the bare engine computed {got}, expected {EXPECTED_GRADS}")
    steps: dict[str, Callable[[], object]] = {
        "bare engine": bare,
        "NumPy floor": make_numpy_step(),
        "chainrule": make_user_step(import_library(CHAINRULE)),
    }
    if library_available(PYTORCH):
        steps["PyTorch"] = make_user_step(import_library(PYTORCH))
    samples = interleaved(steps, args.iters, args.repeat, warmup=200)
    reference = median(samples["PyTorch"]) if "PyTorch" in samples else None
    print(f"tiny (user style), {args.iters} iterations x {args.repeat} repeats, medians:")
    for name, values in samples.items():
        value = median(values) or 0.0
        ratio = f"{value / reference:.2f}x PyTorch" if reference else ""
        print(f"  {name:12s} {value * 1e6:8.2f} us/iter  {ratio}  (min {min(values) * 1e6:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
