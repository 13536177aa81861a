"""``pdist`` (``ops/nn_ops/pdist.py``): first-order gradients only (PyTorch does not
differentiate ``PdistBackwardBackward0``)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


OPS = [
    OpInfo("F.pdist", lambda lib, x: _f(lib).pdist(x), [((5, 3),)], second_order=False),
    OpInfo("F.pdist_p1", lambda lib, x: _f(lib).pdist(x, p=1), [((4, 3),)], second_order=False),
    OpInfo("F.pdist_p1_5", lambda lib, x: _f(lib).pdist(x, p=1.5), [((4, 2),)], second_order=False),
    OpInfo("F.pdist_p3", lambda lib, x: _f(lib).pdist(x, p=3), [((4, 3),)], second_order=False),
]
