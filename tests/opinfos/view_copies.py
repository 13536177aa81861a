"""The copy variants of views (t_copy, transpose_copy, permute_copy ...): the view's values
and gradients, in new memory."""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo("alias_copy", lambda lib, x: lib.alias_copy(x), [((3, 4),)]),
    OpInfo("t_copy", lambda lib, x: lib.t_copy(x), [((3, 4),), ((3,),)]),
    OpInfo("transpose_copy", lambda lib, x: lib.transpose_copy(x, 0, -1), [((2, 3, 4),)]),
    OpInfo("permute_copy", lambda lib, x: lib.permute_copy(x, (2, 0, 1)), [((2, 3, 4),)]),
    OpInfo("unsqueeze_copy", lambda lib, x: lib.unsqueeze_copy(x, -1), [((3, 4),)]),
    OpInfo("select_copy", lambda lib, x: lib.select_copy(x, 1, -1), [((3, 4),)]),
    OpInfo("diagonal_copy", lambda lib, x: lib.diagonal_copy(x, 1, 1, 0), [((3, 4),)]),
]

OPS += [
    OpInfo("expand_copy", lambda lib, x: lib.expand_copy(x, (2, -1, 4)), [((1, 3, 4),)]),
    # (contiguous input: PyTorch's forward mode views the tangent of a transposed one and fails)
    OpInfo("view_copy", lambda lib, x: lib.view_copy(x, (2, -1)), [((3, 4),)]),
    OpInfo("squeeze_copy", lambda lib, x: lib.squeeze_copy(x), [((3, 1, 4),)]),
    OpInfo("squeeze_copy_dim", lambda lib, x: lib.squeeze_copy(x, 1), [((3, 1, 4),)]),
    OpInfo("squeeze_copy_dims", lambda lib, x: lib.squeeze_copy(x, (0, 1)), [((1, 1, 4),)]),
    OpInfo("slice_copy", lambda lib, x: lib.slice_copy(x, 1, -3, None, 2), [((3, 4),)]),
    # (a non-negative start: PyTorch's NarrowCopyBackward0 fails for a negative one)
    OpInfo("narrow_copy", lambda lib, x: lib.narrow_copy(x, 0, 1, 2), [((3, 4),)]),
    OpInfo("Tensor.narrow_copy", lambda lib, x: x.narrow_copy(1, 1, 2), [((3, 4),)]),
    OpInfo("unfold_copy", lambda lib, x: lib.unfold_copy(x, 1, 2, 1), [((3, 4),)]),
]


def _weighted(lib, pieces):  # noqa: ANN001, ANN202 - (lib, tuple of tensors)
    return lib.cat([p.reshape(-1) * (k + 1) for k, p in enumerate(pieces)])


OPS += [
    OpInfo("split_copy", lambda lib, x: _weighted(lib, lib.split_copy(x, 2, 1)), [((3, 5),)]),
    OpInfo("split_copy_one", lambda lib, x: _weighted(lib, lib.split_copy(x, 5)), [((3, 2),)]),
    OpInfo(
        "split_with_sizes_copy",
        lambda lib, x: _weighted(lib, lib.split_with_sizes_copy(x, [1, 2], 0)),
        [((3, 2),)],
    ),
    OpInfo("unbind_copy", lambda lib, x: _weighted(lib, lib.unbind_copy(x, -1)), [((3, 2),)]),
    OpInfo("unbind_copy_one", lambda lib, x: _weighted(lib, lib.unbind_copy(x)), [((1, 2),)]),
]


def _no_half(lib, x):  # noqa: ANN001, ANN202 - (lib, tensor)
    return x.to(lib.float32) if x.dtype == lib.float16 else x


OPS += [
    OpInfo(
        "view_as_real_copy",
        # (through float32 at least: a float16 pair would be complex32, which chainrule lacks)
        lambda lib, x: lib.view_as_real_copy(lib.view_as_complex(_no_half(lib, x))) * x,
        [((3, 2),)],
        extra={"complex": True},
    ),
]

OPS += [
    # (values only: PyTorch refuses to record its complex result)
    OpInfo(
        "view_as_complex_copy",
        lambda lib, x: lib.view_as_real(lib.view_as_complex_copy(_no_half(lib, x))),
        [((3, 2),)],
        grad=False,
    ),
]

OPS += [
    OpInfo("as_strided_copy", lambda lib, x: lib.as_strided_copy(x, (2, 2), (1, 2), 1), [((6,),)]),
    # (overlapping windows: each input element's gradient is the sum over its copies)
    OpInfo(
        "as_strided_copy_overlap",
        lambda lib, x: lib.as_strided_copy(x, (3, 3), (1, 1)),
        [((2, 3),)],
    ),
]
