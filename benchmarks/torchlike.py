"""Code shared by the chainrule and PyTorch sides of a workload (``lib`` is either module).

chainrule is torch-shaped, so one function serves both. Where chainrule may still lack a feature
(``cross_entropy``, in-place ``add_``), the helpers pick what exists at run time and say which
path they took, so the report can mention it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["SGD", "from_array", "make_cross_entropy", "parameters"]

Tensor = Any   # a chainrule.Tensor or a torch.Tensor


def from_array(lib: ModuleType, array: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A tensor of ``lib`` holding a private copy of ``array``."""
    t = lib.from_numpy(np.array(array, copy=True))
    return t.requires_grad_() if requires_grad else t


def parameters(lib: ModuleType, arrays: Sequence[np.ndarray]) -> list[Tensor]:
    """Leaf tensors that require grad, one per array (copied: every library starts equal)."""
    return [from_array(lib, a, requires_grad=True) for a in arrays]


def make_cross_entropy(
    lib: ModuleType, labels: np.ndarray, num_classes: int
) -> tuple[Callable[[Tensor], Tensor], str]:
    """Mean softmax cross-entropy of logits against ``labels``, and how it is computed.

    Prefers ``nn.functional.cross_entropy``; else ``log_softmax`` then ``gather`` of the label
    column; else ``log_softmax`` times a one-hot matrix (ops every version of chainrule has).
    """
    functional = lib.nn.functional
    if hasattr(functional, "cross_entropy"):
        target = lib.from_numpy(labels.astype(np.int64))
        cross_entropy = functional.cross_entropy
        return (lambda logits: cross_entropy(logits, target)), "nn.functional.cross_entropy"
    log_softmax = functional.log_softmax
    if hasattr(lib.Tensor, "gather"):
        index = lib.from_numpy(labels.astype(np.int64).reshape(-1, 1))
        return (lambda logits: -log_softmax(logits, 1).gather(1, index).mean(),
                "log_softmax + gather")
    onehot = lib.from_numpy(np.eye(num_classes, dtype=np.float32)[labels])
    scale = -1.0 / len(labels)
    return (lambda logits: (log_softmax(logits, 1) * onehot).sum() * scale,
            "log_softmax × one-hot")


class SGD:
    """Plain SGD: ``p -= lr * p.grad`` in place under ``no_grad``, then ``p.grad = None``.

    Uses ``p.add_(p.grad, alpha=-lr)`` (what ``torch.optim.SGD`` does) when the library has
    in-place ops; otherwise writes into the parameter's NumPy array directly (chainrule before
    its in-place ops exist). :attr:`path` names the choice.
    """

    def __init__(self, lib: ModuleType, params: Sequence[Tensor], lr: float) -> None:
        self.lib = lib
        self.params = list(params)
        self.lr = lr
        self.in_place = hasattr(lib.Tensor, "add_")
        self.path = "Tensor.add_ under no_grad" if self.in_place else "NumPy array update"

    def step(self) -> None:
        """Update every parameter from its gradient and drop the gradient."""
        lr = self.lr
        if self.in_place:
            with self.lib.no_grad():
                for p in self.params:
                    p.add_(p.grad, alpha=-lr)
                    p.grad = None
        else:
            for p in self.params:
                array = p.detach().numpy()
                array -= lr * p.grad.numpy()
                p.grad = None
