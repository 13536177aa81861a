"""``ctc_loss`` (``ops/nn_ops/ctc.py``): padded and concatenated targets, lengths as lists and
tensors, each reduction, ``zero_infinity`` with an impossible alignment. Through
``log_softmax``: PyTorch's gradient in ``log_probs`` is the logits' one with the softmax
folded in, exact only composed with it. First order only (PyTorch has no double backward)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _padded(lib, x, reduction="mean", zero_infinity=False):
    targets = lib.tensor([[1, 2, 2], [3, 1, 1], [2, 0, 0]])
    return _f(lib).ctc_loss(
        x.log_softmax(-1),
        targets,
        [6, 5, 2],
        [3, 2, 2],
        reduction=reduction,
        zero_infinity=zero_infinity,
    )


def _concatenated(lib, x):
    targets = lib.tensor([1, 2, 3, 3, 1])
    lengths = lib.tensor([6, 4]), lib.tensor([2, 3])
    return _f(lib).ctc_loss(x.log_softmax(-1), targets, *lengths, blank=0, reduction="none")


OPS = [
    OpInfo("F.ctc_loss", lambda lib, x: _padded(lib, x), [((6, 3, 5),)], second_order=False),
    OpInfo(
        "F.ctc_loss_sum_zero_infinity",
        lambda lib, x: _padded(lib, x, "sum", True),
        [((6, 3, 4),)],
        second_order=False,
    ),
    OpInfo("F.ctc_loss_concatenated", _concatenated, [((6, 2, 4),)], second_order=False),
    OpInfo(
        "torch.ctc_loss",
        lambda lib, x: lib.ctc_loss(
            x.log_softmax(-1), lib.tensor([[2, 1], [1, 1]]), [4, 5], [2, 2], 3, 2, False
        ),
        [((5, 2, 4),)],
        second_order=False,
    ),
]
