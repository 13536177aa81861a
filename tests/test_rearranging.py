"""rot90, Tensor.unfold, take_along_dim, repeat_interleave, diagflat and hsplit/vsplit/dsplit
against PyTorch: values, nodes, strides, float16, empty inputs and errors (type and message).
Gradients are swept by the OpInfos in tests/opinfos/rearranging.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def _show(result: Any) -> Any:
    """What is compared: the values' text, the node, the strides and contiguity."""
    if isinstance(result, tuple):
        return [
            (tuple(t.shape), t.grad_fn.name() if t.grad_fn else None, t.tolist()) for t in result
        ]
    if hasattr(result, "grad_fn"):
        node = result.grad_fn.name() if result.grad_fn else None
        return str(result), node, result.stride(), result.is_contiguous()
    return result


CASES: dict[str, Any] = {
    "rot90": lambda L, x: L.rot90(x),
    "rot90_2": lambda L, x: L.rot90(x, 2),
    "rot90_3": lambda L, x: L.rot90(x, 3),
    "rot90_0": lambda L, x: L.rot90(x, 0),
    "rot90_m1": lambda L, x: L.rot90(x, -1, [1, 0]),
    "rot90_5": lambda L, x: x.rot90(5, (1, 0)),
    "rot90_1d": lambda L, x: L.rot90(x[0]),
    "rot90_dims1": lambda L, x: L.rot90(x, 1, [0]),
    "rot90_same": lambda L, x: L.rot90(x, 1, [0, 0]),
    "rot90_02": lambda L, x: L.rot90(x, 1, [0, 2]),
    "rot90_0m2": lambda L, x: L.rot90(x, 1, [0, -2]),
    "rot90_03": lambda L, x: L.rot90(x, 1, [0, 3]),
    "rot90_3d": lambda L, x: L.rot90(x.reshape(2, 3, 2), 1, [2, 0]),
    "unfold": lambda L, x: x.unfold(1, 2, 1),
    "unfold_step": lambda L, x: x.unfold(1, 2, 3),
    "unfold_big": lambda L, x: x.unfold(1, 5, 1),
    "unfold_step0": lambda L, x: x.unfold(1, 2, 0),
    "unfold_dim": lambda L, x: x.unfold(2, 1, 1),
    "unfold_0d": lambda L, x: L.tensor(3.0).unfold(0, 1, 1),
    "unfold_0d_0": lambda L, x: L.tensor(3.0).unfold(0, 0, 1),
    "unfold_0d_2": lambda L, x: L.tensor(3.0).unfold(0, 2, 1),
    "unfold_size0": lambda L, x: x.unfold(-1, 0, 1),
    "unfold_neg": lambda L, x: x.unfold(0, -1, 1),
    "unfold_t": lambda L, x: x.t().unfold(0, 3, 1),
    "tad": lambda L, x: L.take_along_dim(x, L.tensor([[0], [1], [2]]), 1),
    "tad_none": lambda L, x: L.take_along_dim(x, L.tensor([0, 5])),
    "tad_2dnone": lambda L, x: L.take_along_dim(x, L.tensor([[0, 5]])),
    "tad_bcast": lambda L, x: L.take_along_dim(x, L.tensor([[0, 3]]), 1),
    "tad_bcast2": lambda L, x: L.take_along_dim(x[:1], L.tensor([[0], [1]]), 1),
    "tad_dims": lambda L, x: L.take_along_dim(x, L.tensor([0]), 1),
    "tad_float": lambda L, x: L.take_along_dim(x, L.tensor([[0.0]]), 1),
    "tad_int32": lambda L, x: L.take_along_dim(x, L.tensor([[0]], dtype=L.int32), 1),
    "tad_negdim": lambda L, x: x.take_along_dim(L.tensor([[1, 0]]), -1),
    "tad_mismatch": lambda L, x: L.take_along_dim(x, L.zeros(2, 2, dtype=L.long), 0),
    "ri": lambda L, x: L.repeat_interleave(x, 2),
    "ri_dim": lambda L, x: x.repeat_interleave(2, dim=1),
    "ri_t": lambda L, x: L.repeat_interleave(x, L.tensor([1, 2, 0]), dim=0),
    "ri_t1": lambda L, x: L.repeat_interleave(x, L.tensor([2]), dim=0),
    "ri_t0": lambda L, x: L.repeat_interleave(x, L.tensor(2)),
    "ri_idx": lambda L, x: L.repeat_interleave(L.tensor([2, 0, 1])),
    "ri_idx32": lambda L, x: L.repeat_interleave(L.tensor([2, 0, 1], dtype=L.int32)),
    "ri_neg": lambda L, x: L.repeat_interleave(x, -1),
    "ri_badlen": lambda L, x: L.repeat_interleave(x, L.tensor([1, 2]), dim=0),
    "ri_negt": lambda L, x: L.repeat_interleave(x, L.tensor([1, -2, 3]), dim=0),
    "ri_float": lambda L, x: L.repeat_interleave(x, L.tensor([1.0, 2, 3]), dim=0),
    "ri_2d": lambda L, x: L.repeat_interleave(L.tensor([[1, 2]])),
    "ri_baddim": lambda L, x: L.repeat_interleave(x, 2, dim=2),
    "ri_2drep": lambda L, x: L.repeat_interleave(x, L.tensor([[1]]), dim=0),
    "ri_0d": lambda L, x: L.repeat_interleave(L.tensor(3.0), 2),
    "ri_0d_dim": lambda L, x: L.repeat_interleave(L.tensor(3.0), 2, dim=0),
    "ri_zero": lambda L, x: x.repeat_interleave(0, dim=0),
    "ri_output_size": lambda L, x: L.repeat_interleave(
        x, L.tensor([1, 2, 3]), dim=0, output_size=6
    ),
    "diagflat": lambda L, x: L.diagflat(x[:2, :2]),
    "diagflat_off": lambda L, x: L.diagflat(x[0], 1),
    "diagflat_neg": lambda L, x: x[0].diagflat(-2),
    "diagflat_0d": lambda L, x: L.diagflat(L.tensor(3.0)),
    "diagflat_int": lambda L, x: L.diagflat(L.tensor([1, 2])),
    "hsplit": lambda L, x: L.hsplit(x, 2),
    "hsplit3": lambda L, x: L.hsplit(x, 3),
    "hsplit_idx": lambda L, x: L.hsplit(x, [1, 3]),
    "vsplit1d": lambda L, x: L.vsplit(x[0], 2),
    "dsplit2d": lambda L, x: L.dsplit(x, 2),
    "hsplit1d": lambda L, x: x[0].hsplit(2),
    "hsplit0d": lambda L, x: L.hsplit(L.tensor(1.0), 1),
    "vsplit": lambda L, x: x.vsplit([1]),
    "dsplit": lambda L, x: L.dsplit(x.reshape(1, 3, 4), 2),
    "hsplit0": lambda L, x: L.hsplit(x, 0),
}
CASES.update(
    {
        "rot90_half": lambda L, x: L.rot90(x.half(), 1, (1, 0)),
        "rot90_empty": lambda L, x: L.rot90(L.zeros(0, 3), 1),
        "unfold_half": lambda L, x: x.half().unfold(0, 2, 1),
        "unfold_empty": lambda L, x: L.zeros(0, 3).unfold(1, 2, 1),
        "tad_empty": lambda L, x: L.take_along_dim(x, L.zeros(3, 0, dtype=L.long), 1),
        "ri_empty": lambda L, x: L.repeat_interleave(L.zeros(0), 3),
        "ri_idx_empty": lambda L, x: L.repeat_interleave(L.tensor([], dtype=L.long)),
        "diagflat_half": lambda L, x: L.diagflat(x[0].half()),
        "hsplit_half": lambda L, x: L.hsplit(x.half(), 2),
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        seen.append(outcome(lambda lib, x=x: _show(CASES[name](lib, x)), lib))
    assert seen[0] == seen[1]


def test_unfold_is_a_view_sharing_memory() -> None:
    for lib in (chainrule, torch):
        x = lib.arange(6.0)
        windows = x.unfold(0, 3, 2)
        x[2] = 100
        assert windows[0, 2].item() == 100 and windows[1, 0].item() == 100
        assert windows._base is x


def test_unfold_overlapping_windows_add_their_gradients() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.arange(5.0, requires_grad=True)
        (x.unfold(0, 3, 1) * lib.arange(9.0).reshape(3, 3)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
