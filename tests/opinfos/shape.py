"""Shape ops: views (view, transpose, select, narrow, diagonal ...), joining (cat, stack ...),
splitting (split, chunk, unbind ...) and copies that move elements (repeat, flip, roll, tril ...).

Most of these ops are linear, so their first-order gradient does not depend on the input and
PyTorch's second-order check has nothing to differentiate. The ``*_sq`` entries square the
result, which sends the second-order pass through each op's backward helper and back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import OpInfo


def _sq(name: str, fn: Callable[..., Any], shapes: Sequence[Any], **kw: Any) -> OpInfo:
    """An entry for ``fn(...) ** 2`` (every output squared): exercises second order."""

    def squared(lib: Any, *xs: Any) -> Any:
        out = fn(lib, *xs)
        if isinstance(out, tuple | list):
            return tuple(o * o for o in out)
        return out * out

    return OpInfo(f"{name}_sq", squared, shapes, **kw)


def _repeat(lib: Any, x: Any) -> Any:
    return x.repeat(*((2, 3, 1, 2)[: x.dim() + 1]))


def _flip_all(lib: Any, x: Any) -> Any:
    return lib.flip(x, tuple(range(x.dim())))


def _cat(lib: Any, x: Any, y: Any) -> Any:
    return lib.cat([x, y])


def _stack(lib: Any, x: Any, y: Any) -> Any:
    return lib.stack([x, y], -1)


def _select(lib: Any, x: Any) -> Any:
    return x.select(-1, 1)


def _diagonal(lib: Any, x: Any) -> Any:
    return x.diagonal()


def _split(lib: Any, x: Any) -> Any:
    return x.split(2)


def _unbind(lib: Any, x: Any) -> Any:
    return x.unbind(1)


M = ((3, 4),)
CAT_SHAPES = [((2, 3), (4, 3)), ((3,), (2,)), ((0, 3), (2, 3))]
STACK_SHAPES = [((2, 3), (2, 3)), ((), ())]
PAIRS = [((3,), (3,)), ((2, 3), (2, 3)), ((), ())]

OPS = [
    # Views that already existed: checked here with the rest of the shape ops.
    OpInfo("view", lambda lib, x: x.view(-1, 2), [((3, 4),), ((2, 1, 2),)]),
    OpInfo("reshape_noncontiguous", lambda lib, x: x.t().reshape(-1), [M]),
    OpInfo("flatten", lambda lib, x: x.flatten(1), [((2, 3, 4),)]),
    OpInfo("squeeze_unsqueeze", lambda lib, x: x.unsqueeze(1).squeeze(), [((3, 1, 4),)]),
    OpInfo("transpose", lambda lib, x: x.transpose(0, -1), [((2, 3, 4),)]),
    OpInfo("permute", lambda lib, x: x.permute(2, 0, 1), [((2, 3, 4),)]),
    OpInfo("expand", lambda lib, x: x.expand(2, 3, 4), [((3, 1),), ((4,),)]),
    OpInfo("movedim", lambda lib, x: x.movedim(0, -1), [((2, 3, 4),)]),
    # repeat / tile
    OpInfo("repeat", _repeat, [M, ((),), ((2,),), ((2, 0, 3),)]),
    _sq("repeat", _repeat, [M, ((2,),)]),
    OpInfo("tile", lambda lib, x: x.tile((2,)), [M, ((3,),)]),
    # cat / stack and friends
    OpInfo("cat", _cat, CAT_SHAPES),
    _sq("cat", _cat, CAT_SHAPES[:2]),
    OpInfo("cat_dim1_repeated_input", lambda lib, x, y: lib.cat([x, y, x], 1),
           [((2, 3), (2, 1))]),
    OpInfo("cat_legacy_empty", lambda lib, e, y: lib.cat([e, y], 1), [((0,), (2, 3))]),
    OpInfo("cat_legacy_empty_only", lambda lib, e, f: lib.cat([e, f]), [((0,), (0,))]),
    # y passes through float32: finite differences would be too coarse, so no gradcheck.
    OpInfo("cat_promotes", lambda lib, x, y: lib.cat([x, y.float()]), [((2, 3), (1, 3))],
           gradcheck=False),
    OpInfo("cat_single", lambda lib, x: lib.cat([x], -1), [M]),
    OpInfo("concat", lambda lib, x, y: lib.concat([x, y], dim=-1), [((2, 3), (2, 2))]),
    OpInfo("concatenate", lambda lib, x, y: lib.concatenate([x, y], axis=0),
           [((2, 3), (1, 3))]),
    OpInfo("stack", _stack, STACK_SHAPES),
    _sq("stack", _stack, STACK_SHAPES),
    OpInfo("stack_three", lambda lib, x, y, z: lib.stack([x, y, z], 1),
           [((2, 3), (2, 3), (2, 3))]),
    OpInfo("hstack", lambda lib, x, y: lib.hstack([x, y]), PAIRS),
    OpInfo("vstack", lambda lib, x, y: lib.vstack([x, y]), PAIRS),
    OpInfo("row_stack", lambda lib, x, y: lib.row_stack([x, y]), PAIRS),
    OpInfo("dstack", lambda lib, x, y: lib.dstack([x, y]), PAIRS),
    OpInfo("column_stack", lambda lib, x, y: lib.column_stack([x, y]), PAIRS),
    OpInfo("atleast_3d", lambda lib, x: lib.atleast_3d(x),
           [((),), ((3,),), ((2, 3),), ((2, 3, 4),)]),
    OpInfo("atleast_2d_tuple", lambda lib, x, y: lib.atleast_2d((x, y)), [((), (3,))]),
    # split / chunk / unbind / tensor_split: several outputs of one node
    OpInfo("split", _split, [((5, 3),), ((4,),), ((0, 2),)]),
    _sq("split", _split, [((5, 3),)]),
    OpInfo("split_dim1", lambda lib, x: x.split(2, 1), [((3, 5),)]),
    OpInfo("split_sizes", lambda lib, x: x.split([1, 3, 1]), [((5, 2),)]),
    _sq("split_sizes", lambda lib, x: lib.split(x, [2, 0, 3], -1), [((2, 5),)]),
    OpInfo("split_one_output_used", lambda lib, x: x.split(2)[1] ** 2, [((5, 3),)]),
    OpInfo("chunk", lambda lib, x: x.chunk(3, -1), [((2, 7),), ((2, 0),)]),
    OpInfo("unbind", _unbind, [M, ((2, 1, 3),)]),
    _sq("unbind", _unbind, [M]),
    OpInfo("unbind_one_output_used", lambda lib, x: x.unbind()[1] ** 3, [M]),
    OpInfo("iter", lambda lib, x: tuple(row * (i + 1) for i, row in enumerate(x)), [M]),
    OpInfo("tensor_split_sections", lambda lib, x: x.tensor_split(3), [((7, 2),)]),
    OpInfo("tensor_split_indices", lambda lib, x: lib.tensor_split(x, [1, 4], dim=1),
           [((2, 6),)]),
    # views by position
    OpInfo("select", _select, [M, ((2,),)]),
    _sq("select", _select, [M]),
    OpInfo("narrow", lambda lib, x: x.narrow(1, 1, 2), [M, ((2, 3, 5),)]),
    _sq("narrow", lambda lib, x: lib.narrow(x, 0, -2, 2), [M]),
    OpInfo("diagonal", _diagonal, [M, ((4, 3),), ((0, 3),)]),
    _sq("diagonal", _diagonal, [M]),
    OpInfo("diagonal_offset_dims", lambda lib, x: x.diagonal(1, -1, 0), [((3, 4, 5),)]),
    OpInfo("diagonal_negative_offset", lambda lib, x: lib.diagonal(x, -1), [M]),
    # copies that move elements
    OpInfo("diag_1d", lambda lib, x: lib.diag(x, 1), [((3,),)]),
    _sq("diag_1d", lambda lib, x: lib.diag(x, -2), [((3,),)]),
    OpInfo("diag_2d", lambda lib, x: lib.diag(x, -1), [M]),
    _sq("diag_2d", lambda lib, x: x.diag(), [M]),
    OpInfo("diag_embed", lambda lib, x: lib.diag_embed(x, 1, 0, 2), [((2, 3),)]),
    OpInfo("tril", lambda lib, x: x.tril(1), [M, ((2, 3, 3),)]),
    _sq("tril", lambda lib, x: lib.tril(x), [M]),
    OpInfo("triu", lambda lib, x: x.triu(-1), [M, ((2, 3, 3),)]),
    _sq("triu", lambda lib, x: lib.triu(x, 1), [M]),
    OpInfo("trace", lambda lib, x: x.trace(), [M, ((4, 4),)]),
    _sq("trace", lambda lib, x: lib.trace(x), [((4, 3),)]),
    OpInfo("flip", _flip_all, [M, ((),), ((2, 3, 4),)]),
    _sq("flip", _flip_all, [M]),
    OpInfo("flip_dims", lambda lib, x: x.flip(0, -1), [((2, 3, 4),)]),
    OpInfo("flip_keyword", lambda lib, x: lib.flip(x, dims=[1]), [((2, 3, 4),)]),
    OpInfo("tile_keyword", lambda lib, x: lib.tile(x, dims=(2, 1, 1)), [M]),
    OpInfo("fliplr_flipud", lambda lib, x: lib.flipud(lib.fliplr(x)), [M]),
    OpInfo("roll_flat", lambda lib, x: x.roll(1), [M, ((),)]),
    OpInfo("roll_dims", lambda lib, x: x.roll((1, -2), (0, 1)), [M]),
    _sq("roll", lambda lib, x: lib.roll(x, 2, 1), [M]),
]
