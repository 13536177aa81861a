"""Indexing: ``x[index]`` (basic and advanced), and the ops that pick or place elements by index.

Indices are constants built inside each entry (``lib.tensor([...])``) so both libraries get the
same ones. ``*_sq`` entries square the result, so second order runs through each op's backward
helper (index_backward, gather_backward ...) and back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import OpInfo


def _sq(name: str, fn: Callable[..., Any], shapes: Sequence[Any], **kw: Any) -> OpInfo:
    """An entry for ``fn(...) ** 2``: exercises second order."""
    return OpInfo(f"{name}_sq", lambda lib, *xs: fn(lib, *xs) ** 2, shapes, **kw)


def _away_from_zero(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]],
                    dtype: str) -> list[np.ndarray]:
    """Values at least 0.3 from zero: masks like ``x > 0`` survive finite differences."""
    out = []
    for s in shapes:
        v = rng.uniform(0.3, 2.0, s) * rng.choice([-1.0, 1.0], size=s)
        out.append(np.asarray(v, dtype=dtype))
    return out


def _getitem_repeated(lib: Any, x: Any) -> Any:
    return x[[0, 2, 0]]


def _getitem_mixed(lib: Any, x: Any) -> Any:
    return x[1, [0, 2, 2]]


def _gather(lib: Any, x: Any) -> Any:
    return x.gather(1, lib.tensor([[0, 0], [1, 0], [3, 2]]))


def _index_select(lib: Any, x: Any) -> Any:
    return x.index_select(1, lib.tensor([2, 0, 2]))


def _masked_select(lib: Any, x: Any) -> Any:
    return x.masked_select(lib.tensor([[True, False, True, True]] * 3))


def _take(lib: Any, x: Any) -> Any:
    return x.take(lib.tensor([[0, 5], [-1, 0]]))


def _scatter(lib: Any, x: Any, s: Any) -> Any:
    return x.scatter(0, lib.tensor([[0, 1, 2], [2, 0, 1]]), s)


def _scatter_value(lib: Any, x: Any) -> Any:
    return x.scatter(1, lib.tensor([[0], [2], [1]]), 1.5)


def _masked_fill(lib: Any, x: Any) -> Any:
    return x.masked_fill(lib.tensor([True, False, True, False]), 0.5)


def _setitem(lib: Any, x: Any) -> Any:
    y = x.detach().clone()
    y[0, 1:] = 1.5
    y[[1, 2], 0] = lib.tensor([7.0, 8.0], dtype=y.dtype)
    y[y < 0] = 0.0
    with lib.no_grad():
        x[..., -1] = 3.0
    return y, x.detach().clone()


M = ((3, 4),)
T3 = ((3, 4, 5),)

OPS = [
    # basic indexing: views
    OpInfo("getitem_int", lambda lib, x: x[1], [M, ((2,),)]),
    OpInfo("getitem_negative_int_and_step", lambda lib, x: x[-1, ::2], [((4, 5),)]),
    OpInfo("getitem_slices", lambda lib, x: x[1:, ::2], [((4, 5),)]),
    _sq("getitem_slices", lambda lib, x: x[:-1, 1::3], [((4, 5),)]),
    OpInfo("getitem_none_ellipsis", lambda lib, x: x[None, ..., 1], [M, T3]),
    OpInfo("getitem_ellipsis", lambda lib, x: x[...], [M]),
    OpInfo("getitem_int_tensor", lambda lib, x: x[lib.tensor(2), 1:], [M]),
    _sq("getitem_int", lambda lib, x: x[0, 1], [M]),
    # advanced indexing: copies, repeated indices accumulate
    OpInfo("getitem_list_repeated", _getitem_repeated, [M, ((3,),)]),
    _sq("getitem_list_repeated", _getitem_repeated, [M]),
    OpInfo("getitem_select_then_index", _getitem_mixed, [M]),
    _sq("getitem_select_then_index", _getitem_mixed, [M]),
    OpInfo("getitem_separated_indices", lambda lib, x: x[[0, 1, 1], :, [1, 2, 2]], [T3]),
    OpInfo("getitem_int_slice_list", lambda lib, x: x[0, :, [0, 4]], [T3]),
    OpInfo("getitem_none_and_list", lambda lib, x: x[None, :, [0, 1]], [T3]),
    OpInfo("getitem_2d_index", lambda lib, x: x[lib.tensor([[0, 1], [1, 2]])], [((3, 2),)]),
    OpInfo("getitem_broadcast_indices",
           lambda lib, x: x[lib.tensor([[0], [2]]), lib.tensor([1, 3, 1])], [M]),
    OpInfo("getitem_bool_list", lambda lib, x: x[[True, False, True]], [M]),
    OpInfo("getitem_bool_tensor", lambda lib, x: x[:, lib.tensor([True, False, True, True])],
           [M]),
    OpInfo("getitem_mask_from_data", lambda lib, x: x[x > 0], [M, ((5,),)],
           make_inputs=_away_from_zero),
    _sq("getitem_mask_from_data", lambda lib, x: x[x < 0], [M], make_inputs=_away_from_zero),
    OpInfo("getitem_mask_then_int", lambda lib, x: x[lib.tensor([[True, False, True, False],
                                                                  [False, True, True, False],
                                                                  [True, True, True, True]]),
                                                     2], [T3]),
    OpInfo("getitem_python_bools", lambda lib, x: (x[True], x[False], x[0, True]), [M]),
    OpInfo("getitem_empty_list", lambda lib, x: x[[]], [M]),
    OpInfo("getitem_int32_index", lambda lib, x: x[lib.tensor([2, 0], dtype=lib.int32)], [M]),
    # index_select / gather / scatter
    OpInfo("index_select", _index_select, [M]),
    _sq("index_select", _index_select, [M]),
    OpInfo("index_select_scalar", lambda lib, x: lib.index_select(x, 0, lib.tensor([0])),
           [((),)]),
    OpInfo("gather", _gather, [M]),
    _sq("gather", _gather, [M]),
    OpInfo("gather_dim0", lambda lib, x: lib.gather(x, 0, lib.tensor([[2, 0, 0, 1]])), [M]),
    OpInfo("scatter", _scatter, [((3, 3), (2, 3)), ((3, 3), (2, 4))], grad_inputs=[0]),
    OpInfo("scatter_src_grad", _scatter, [((3, 3), (2, 3))]),
    _sq("scatter", _scatter, [((3, 3), (2, 3))]),
    OpInfo("scatter_value", _scatter_value, [M]),
    _sq("scatter_value", _scatter_value, [M]),
    OpInfo("scatter_add", lambda lib, x, s: x.scatter_add(0, lib.tensor([[0, 0, 2], [0, 1, 0]]), s),
           [((3, 3), (2, 3))]),
    _sq("scatter_add", lambda lib, x, s: lib.scatter_add(x, 1, lib.tensor([[1, 1]] * 3), s),
        [((3, 3), (3, 2))]),
    # masks
    OpInfo("masked_fill", _masked_fill, [M, ((4,),)]),
    _sq("masked_fill", _masked_fill, [M]),
    OpInfo("masked_fill_mask_broadcasts_input",
           lambda lib, x: x.masked_fill(lib.tensor([[True], [False]]), -1.0), [((3,),)]),
    OpInfo("masked_fill_tensor_value",
           lambda lib, x, v: lib.masked_fill(x, lib.tensor([[True, False, False, True]]), v),
           [((3, 4), ())]),
    OpInfo("masked_select", _masked_select, [M, ((4,),)]),
    _sq("masked_select", _masked_select, [M]),
    # flat positions
    OpInfo("take", _take, [M]),
    _sq("take", _take, [M]),
    OpInfo("put", lambda lib, x, s: x.put(lib.tensor([1, 6]), s), [((3, 4), (2,))]),
    OpInfo("put_accumulate", lambda lib, x, s: x.put(lib.tensor([[1, 1], [6, 0]]), s, True),
           [((3, 4), (4,))]),
    _sq("put", lambda lib, x, s: lib.put(x, lib.tensor([1, 6]), s), [((3, 4), (2, 1))]),
    OpInfo("index_add", lambda lib, x, s: x.index_add(0, lib.tensor([0, 2, 0]), s, alpha=2),
           [((3, 4), (3, 4))]),
    _sq("index_add", lambda lib, x, s: lib.index_add(x, 1, lib.tensor([3, 3]), s),
        [((3, 4), (3, 2))]),
    OpInfo("index_put", lambda lib, x, v: x.index_put((lib.tensor([0, 2]),), v),
           [((3, 4), (4,)), ((3, 4), (2, 4))]),
    OpInfo("index_put_accumulate",
           lambda lib, x, v: x.index_put((lib.tensor([0, 0]), lib.tensor([1, 1])), v, True),
           [((3, 4), (2,))]),
    _sq("index_put", lambda lib, x, v: lib.index_put(x, (lib.tensor([1]),), v), [((3, 4), ())]),
    # no gradient
    OpInfo("nonzero", lambda lib, x: ((x > 0).nonzero(), lib.nonzero(x > 0, as_tuple=True)),
           [M, ((),), ((0, 3),)], grad=False, make_inputs=_away_from_zero),
    OpInfo("where_one_argument", lambda lib, x: lib.where(x < 0), [M], grad=False,
           make_inputs=_away_from_zero),
    OpInfo("setitem_no_grad", _setitem, [M], grad=False, make_inputs=_away_from_zero),
]
