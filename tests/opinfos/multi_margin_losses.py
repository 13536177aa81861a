"""The multi-class margin losses (``ops/nn_ops/multi_margin_losses.py``): first-order
gradients only, since PyTorch's are not differentiable again (``NotImplemented`` nodes)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _classes(lib):
    return lib.tensor([3, 0, 2])


def _label_lists(lib):
    return lib.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [2, 2, 0, 1]])


OPS = [
    OpInfo(
        "F.multi_margin_loss",
        lambda lib, x: _f(lib).multi_margin_loss(x, _classes(lib)),
        [((3, 4),)],
        second_order=False,
    ),
    OpInfo(
        "F.multi_margin_loss_p2_weight_none",
        lambda lib, x: _f(lib).multi_margin_loss(
            x,
            _classes(lib),
            p=2,
            margin=0.7,
            weight=lib.tensor([1.0, 2.0, 0.5, 3.0]).to(x.dtype),
            reduction="none",
        ),
        [((3, 4),)],
        second_order=False,
    ),
    OpInfo(
        "F.multi_margin_loss_unbatched_sum",
        lambda lib, x: _f(lib).multi_margin_loss(x, lib.tensor(1), margin=2.0, reduction="sum"),
        [((5,),)],
        second_order=False,
    ),
    OpInfo(
        "F.multilabel_margin_loss",
        lambda lib, x: _f(lib).multilabel_margin_loss(x, _label_lists(lib)),
        [((3, 4),)],
        second_order=False,
    ),
    OpInfo(
        "F.multilabel_margin_loss_none",
        lambda lib, x: _f(lib).multilabel_margin_loss(x, _label_lists(lib), reduction="none"),
        [((3, 4),)],
        second_order=False,
    ),
    OpInfo(
        "F.multilabel_margin_loss_unbatched_sum",
        lambda lib, x: _f(lib).multilabel_margin_loss(
            x, lib.tensor([1, 4, -1, 0, 0]), reduction="sum"
        ),
        [((5,),)],
        second_order=False,
    ),
]
