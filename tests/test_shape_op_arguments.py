"""Shape and view ops on every kind of argument, against PyTorch: output layouts (strides) of
ops that copy from a view, and the errors for 0-d tensors, empty tensors, repeated or
out-of-range dims and missing arguments (exception type and first line of the message)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr


def _input(lib, shape: tuple[int, ...], layout: str):
    """A float64 leaf of ``shape``: row-major, ``transposed`` (dims reversed in memory) or
    ``channels_last`` (4-d, NHWC in memory)."""
    n = int(np.prod(shape)) if shape else 1
    values = np.arange(n, dtype=np.float64).reshape(shape) - n // 2
    if layout == "transposed":
        base = lib.tensor(values.T.copy())
        x = base.permute(*reversed(range(len(shape)))) if shape else base
    elif layout == "channels_last":
        base = lib.tensor(np.ascontiguousarray(values.transpose(0, 2, 3, 1)))
        x = base.permute(0, 3, 1, 2)
    else:
        x = lib.tensor(values)
    return x.detach().requires_grad_()


def _outcome(lib, expression: str, shape: tuple[int, ...], layout: str):
    try:
        x = _input(lib, shape, layout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(expression, {"x": x, "L": lib})
    except Exception as error:  # noqa: BLE001 (the error is what is compared)
        return ("error", type(error).__name__, str(error).split("\n")[0])
    outs = list(out) if isinstance(out, tuple | list) else [out]
    described = [
        (tuple(o.shape), o.stride(), str(o.dtype).split(".")[-1], o.detach().numpy().copy())
        for o in outs
    ]
    differentiable = [o for o in outs if o.requires_grad]
    grad = None
    if differentiable:
        total = sum(
            (o * lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape)).sum()
            for o in differentiable
        )
        (g,) = lib.autograd.grad(total, x, allow_unused=True)
        grad = None if g is None else g.numpy().copy()
    return ("ok", described, grad)


def _assert_same(expression: str, shape: tuple[int, ...], layout: str = "contiguous") -> None:
    theirs = _outcome(torch, expression, shape, layout)
    ours = _outcome(cr, expression, shape, layout)
    assert ours[0] == theirs[0], (expression, shape, ours, theirs)
    if theirs[0] == "error":
        assert ours == theirs, (expression, shape)
        return
    assert len(ours[1]) == len(theirs[1]), expression
    for (o_shape, o_stride, o_dtype, o_val), (t_shape, t_stride, t_dtype, t_val) in zip(
        ours[1], theirs[1], strict=True
    ):
        assert o_shape == t_shape, (expression, shape)
        if 0 not in t_shape:  # (strides of empty results are not compared)
            assert o_stride == t_stride, (expression, shape, layout, o_stride, t_stride)
        assert o_dtype == t_dtype
        np.testing.assert_array_equal(o_val, t_val)
    if theirs[2] is None:
        assert ours[2] is None
    else:
        np.testing.assert_array_equal(ours[2], theirs[2])


# ----------------------------------------------------------------------------------------------
# Layouts: a copy made from a view is laid out as PyTorch lays it out

LAYOUT_CASES = [
    # row-major whatever the input's layout
    ("x.repeat(1, 1, 1)", (4, 3, 2), "transposed"),
    ("x.repeat(2, 1, 1)", (4, 3, 2), "transposed"),
    ("x.tile((1,))", (4, 3, 2), "transposed"),
    ("x.tile((1,)).view(-1)", (3, 4), "transposed"),
    ("x.repeat(1, 1, 1, 1)", (2, 2, 3, 4), "channels_last"),
    ("x.repeat_interleave(1, 1)", (4, 3, 2), "transposed"),
    ("x.repeat_interleave(2, 0)", (4, 3, 2), "transposed"),
    ("x.repeat_interleave(3, -1).view(-1)", (1, 2, 2, 1), "transposed"),
    ("x.repeat_interleave(2, 0)", (2, 2, 3, 4), "channels_last"),
    ("x.repeat_interleave(2)", (3, 4), "transposed"),
    ("x.gather(0, L.zeros(4, 3, dtype=L.long).t())", (3, 4), "contiguous"),
    ("x.gather(1, L.zeros(3, 4, dtype=L.long).t()[:, :2])", (4, 3), "transposed"),
    # constant padding: the suggested memory format; a crop clones the input's layout
    ("L.nn.functional.pad(x, (1, 1))", (2, 2, 3, 4), "channels_last"),
    ("L.nn.functional.pad(x, (1, 0, 0, 1))", (2, 2, 3, 4), "channels_last"),
    ("L.nn.functional.pad(x, (-1, 0))", (2, 2, 3, 4), "channels_last"),
    ("L.nn.functional.pad(x, (0, 0))", (2, 2, 3, 4), "channels_last"),
    ("L.nn.functional.pad(x, (-1, 0))", (4, 3, 2), "transposed"),
    ("L.nn.functional.pad(x, (0, 0))", (4, 3, 2), "transposed"),
    ("L.nn.functional.pad(x, (-1, 1))", (4, 3, 2), "transposed"),
    ("L.nn.functional.pad(x, (1, 0), value=2.5)", (4, 3, 2), "transposed"),
]


@pytest.mark.parametrize("expression, shape, layout", LAYOUT_CASES)
def test_layout_of_copies(expression: str, shape: tuple[int, ...], layout: str) -> None:
    _assert_same(expression, shape, layout)


def test_repeat_interleave_graph_is_pytorchs() -> None:
    # (clone to row-major, then a view: ViewBackward0 of CloneBackward0)
    for lib in (torch, cr):
        x = _input(lib, (4, 3, 2), "transposed")
        y = x.repeat_interleave(2, 1)
        assert y.grad_fn.name() == "ViewBackward0"
        assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"


# ----------------------------------------------------------------------------------------------
# Errors (and the odd cases PyTorch accepts)

SCALAR = ()
ERROR_CASES = [
    # missing arguments
    ("x.permute()", SCALAR),
    ("x.permute()", (2, 3)),
    ("x.expand()", SCALAR),
    ("x.expand()", (2,)),
    ("x.view()", SCALAR),
    ("x.view()", (2, 3)),
    ("x.reshape()", SCALAR),
    ("x.reshape()", (2, 3)),
    ("x.tile()", (2, 3)),
    ("x.flip()", SCALAR),
    ("x.flip()", (2, 3)),
    ("x.permute(())", SCALAR),
    ("x.expand(())", SCALAR),
    ("x.view(())", SCALAR),
    # repeated dims, 0-d tensors counting as 1-d
    ("x.squeeze((0, 0))", SCALAR),
    ("x.squeeze((-1, 0))", SCALAR),
    ("x.squeeze((0, 0))", (1, 3)),
    ("x.squeeze((0, -2))", (1, 3)),
    ("x.squeeze((1, -1))", (1, 3)),
    ("x.squeeze((0, 0, 5))", (1, 3)),
    ("x.squeeze((5, 0, 0))", (1, 3)),
    ("x.squeeze((0,))", SCALAR),
    ("x.flip((0, -1))", SCALAR),
    ("x.flip(-1)", SCALAR),
    ("x.flip((0, 0, 5))", (2, 3)),
    # expand with negative sizes
    ("x.expand(-1)", SCALAR),
    ("x.expand(2, -1)", SCALAR),
    ("x.expand(-2)", (1,)),
    ("x.expand(2, -2)", (1,)),
    ("x.expand(-1, 2)", (1,)),
    ("x.expand(3)", SCALAR),
    # movedim
    ("x.movedim(0, -1)", SCALAR),
    ("x.movedim(-1, 0)", SCALAR),
    ("x.movedim((0,), (0,))", SCALAR),
    ("x.movedim(1, 0)", SCALAR),
    ("x.movedim((0, 0), (0, 1))", (2, 3)),
    ("x.movedim((0, 1), (0, 0))", (2, 3)),
    ("x.movedim((0, -2), (0, 1))", (2, 3)),
    ("x.movedim((0,), (0, 1))", (2, 3)),
    ("x.movedim((0,), (0, 1))", SCALAR),
    ("x.movedim((0, 1), (1, 0))", (2, 3)),
    ("x.movedim((), ())", (2, 3)),
    # unflatten
    ("x.unflatten(0, (-1, -1))", (3,)),
    ("x.unflatten(-1, (-1, -1))", (0, 2)),
    ("x.unflatten(0, (2, 3))", SCALAR),
    ("x.unflatten(-1, (1,))", SCALAR),
    ("x.unflatten(1, (1,))", SCALAR),
    ("x.unflatten(0, (2, -1))", (3,)),
    ("x.unflatten(0, ())", (3,)),
    ("x.unflatten(5, ())", (2, 3)),
    ("x.unflatten(0, (0, -1))", (0, 2)),
    ("x.unflatten(0, (0, -1))", (6, 1)),
    ("x.unflatten(0, (-3,))", (3,)),
    ("x.unflatten(-1, (2, 2))", (2, 3)),
    ("x.unflatten(-1, (3, 1))", (2, 3)),
    ("x.unflatten(0, (1, 3, -1))", (3,)),
    # unbind, diagonal, diag_embed on 0-d tensors
    ("x.unbind(-1)", SCALAR),
    ("x.unbind(0)", SCALAR),
    ("x.unbind(1)", SCALAR),
    ("x.diagonal(0, 0, -1)", SCALAR),
    ("x.diagonal(0, -1, 0)", SCALAR),
    ("x.diagonal(0, 0, 1)", SCALAR),
    ("x.diagonal(0, 0, -1)", (3,)),
    ("L.diag_embed(x, 0, 0, 1)", SCALAR),
    ("L.diag_embed(x, 0, -1, -1)", SCALAR),
    ("L.diag_embed(x, 0, -3, -1)", SCALAR),
    ("L.diag_embed(x, 0, 2, 1)", SCALAR),
    ("L.diag_embed(x, 0, -2, -1)", SCALAR),
    # repeat_interleave on 0-d tensors
    ("x.repeat_interleave(2, 0)", SCALAR),
    ("x.repeat_interleave(2, -1)", SCALAR),
    ("x.repeat_interleave(2, -2)", SCALAR),
    ("x.repeat_interleave(-1, 0)", SCALAR),
    ("x.repeat_interleave(2)", SCALAR),
    ("x.repeat_interleave(L.tensor(2), 0)", SCALAR),
    ("x.repeat_interleave(L.tensor([2]), -1)", SCALAR),
    ("x.repeat_interleave(L.tensor([2]), 1)", SCALAR),
    ("x.repeat_interleave(L.tensor([-2]), 0)", SCALAR),
    ("x.repeat_interleave(L.tensor([[1]]), 0)", SCALAR),
    # roll of an empty tensor: a clone, dims unchecked
    ("x.roll(1, 5)", (3, 0, 1)),
    ("x.roll((1, 2), (0, 7))", (3, 0, 1)),
    ("x.roll(1, 1)", (0,)),
    ("x.roll(1, 0)", SCALAR),
    ("x.roll(1, 7)", (2, 3)),
    # index_select: PyTorch's kernel paths raise different errors
    ("x.index_select(0, L.tensor([-1]))", (2, 0)),
    ("x.index_select(1, L.tensor([3]))", (2, 0)),
    ("x.index_select(-1, L.tensor([5, 0]))", (3, 1, 1, 0)),
    ("x.index_select(1, L.tensor([0, 3]))", (1, 2, 3)),
    ("x.index_select(1, L.tensor([-1]))", (1, 2, 3)),
    ("x.index_select(0, L.tensor([1]))", (1, 2, 3)),
    ("x.index_select(2, L.tensor([3]))", (1, 2, 3)),
    ("x.index_select(0, L.tensor([1]))", (1,)),
    ("x.index_select(0, L.tensor([], dtype=L.long))", (2, 0)),
    # take / put on empty tensors
    ("x.take(L.tensor([0]))", (2, 0)),
    ("x.take(L.tensor([5]))", (0,)),
    ("x.take(L.tensor([], dtype=L.long))", (0,)),
    ("x.take(L.tensor([5]))", (2,)),
    ("x.detach().put(L.tensor([0]), L.tensor([1.0], dtype=L.float64))", (2, 0)),
    ("x.detach().put(L.tensor([], dtype=L.long), L.tensor([], dtype=L.float64))", (0,)),
    # view as a dtype of another element size
    ("x.detach().view(L.float32)", SCALAR),
    ("x.detach().view(L.int64)", SCALAR),
    ("x.detach().view(L.float32)", (3, 4)),
    ("x.detach().t().view(L.float32)", (3, 4)),
    ("x.detach()[:, ::2].view(L.float32)", (3, 4)),
    ("x.detach().float()[:, 1:].view(L.float64)", (3, 4)),
    ("x.detach().float()[:, 1:3].view(L.float64)", (3, 4)),
    ("x.detach().float()[:, :2].view(L.float64)", (3, 4)),
    ("x.detach().float()[:, 1:5].view(L.float64)", (3, 6)),
    ("x.detach().float().t().view(L.float64)", (1, 3)),
    ("x.detach().float().t().view(L.float64)", (4, 2)),
    ("x.detach().float().expand(2, 4).view(L.float64)", (4,)),
    ("x.detach().to(L.bfloat16).view(L.float32)", (3,)),
    ("x.detach().to(L.bfloat16).view(L.float32)", (2, 4)),
    ("x.detach().to(L.uint8).view(L.float16)", (2, 3)),
    # 0-d tensors in gather/scatter/index_fill/index_copy/unfold/take_along_dim/slicing
    ("x.gather(-1, L.tensor([3]))", SCALAR),
    ("x.gather(-1, L.tensor(0))", SCALAR),
    ("x.detach().scatter(-1, L.tensor(3), 1.0)", SCALAR),
    ("x.index_fill(-1, L.tensor([-2]), 1.0)", SCALAR),
    ("x.index_fill(-1, L.tensor([-1]), 1.0)", SCALAR),
    ("x.index_copy(-1, L.tensor([3]), x)", SCALAR),
    ("x.index_copy(-1, L.tensor([0]), x * 2)", SCALAR),
    ("x.unfold(-1, 3, 1)", SCALAR),
    ("x.unfold(-1, 1, 1)", SCALAR),
    ("L.take_along_dim(x, L.tensor(0), 0)", SCALAR),
    ("L.take_along_dim(x, L.tensor(0), -1)", SCALAR),
    ("L.take_along_dim(x, L.tensor(0), 1)", SCALAR),
    ("L.take_along_dim(x, L.tensor(0))", SCALAR),
    ("x[::-1]", SCALAR),
    ("x[::0]", SCALAR),
    ("x[::2]", SCALAR),
    ("x[..., ::-1]", SCALAR),
    # as_strided to an empty view at any offset
    ("x.as_strided((0, 2), (1, 2), 2)", SCALAR),
    ("x.as_strided((1, 0), (2, 1), 1)", (0, 1)),
    ("x.as_strided((2, 0), (2, 0), 3)", (0, 2, 1, 3)),
]


@pytest.mark.parametrize("expression, shape", ERROR_CASES)
def test_arguments_as_pytorch(expression: str, shape: tuple[int, ...]) -> None:
    _assert_same(expression, shape)


def test_movedim_of_a_scalar_is_an_alias() -> None:
    for lib in (torch, cr):
        x = lib.tensor(2.0, requires_grad=True)
        y = x.movedim(0, -1)
        assert y.grad_fn.name() == "AliasBackward0"
        assert y._base is x


def test_failed_calls_change_nothing() -> None:
    x = cr.arange(6.0).reshape(2, 3)
    before = x.clone()
    version = x._version
    for bad in (
        "x.squeeze((1, -1))",
        "x.flip(0, 0)",
        "x.unflatten(0, (-1, -1))",
        "x.movedim((0, 1), (0, 0))",
        "x.put_(cr.tensor([9]), cr.tensor([1.0]))",
    ):
        with pytest.raises((RuntimeError, IndexError)):
            eval(bad, {"x": x, "cr": cr})
    assert x._version == version
    assert cr.equal(x, before)


# ----------------------------------------------------------------------------------------------
# A seeded sweep: random shapes (0-d, empty dims), layouts and arguments


def _random_case(rng: random.Random) -> tuple[str, tuple[int, ...], str]:
    nd = rng.choice([0, 1, 2, 3, 3, 4])
    shape = tuple(
        rng.choice([0, 1, 2, 3]) if rng.random() < 0.2 else rng.choice([1, 2, 3]) for _ in range(nd)
    )
    layout = "transposed" if nd >= 2 and rng.random() < 0.5 else "contiguous"

    def dim() -> int:
        return rng.randint(-nd - 1, nd)

    reps = ", ".join(str(rng.randint(0, 2)) for _ in range(rng.randint(max(nd - 1, 0), nd + 1)))
    expression = rng.choice(
        [
            f"x.squeeze(({dim()}, {dim()}))",
            f"x.flip(({dim()}, {dim()}))",
            f"x.movedim({dim()}, {dim()})",
            f"x.unflatten({dim()}, {rng.choice(['(1, -1)', '(-1, 1)', '(2, -1)', '(-1, -1)'])})",
            f"x.unbind({dim()})",
            f"x.diagonal({rng.randint(-2, 2)}, {dim()}, {dim()})",
            f"L.diag_embed(x, {rng.randint(-2, 2)}, {rng.randint(-nd - 2, nd + 1)}, "
            f"{rng.randint(-nd - 2, nd + 1)})",
            f"x.repeat_interleave({rng.randint(0, 3)}, {rng.choice(['None', dim()])})",
            f"x.tile(({reps}))",
            f"x.repeat({reps})" if reps else "x.repeat(())",
            f"x.roll({rng.randint(-4, 4)}, {dim()})",
            f"x.expand({', '.join(str(rng.choice([-1, 1, 2])) for _ in range(nd + 1))})",
            f"x.index_select({dim()}, L.tensor({[rng.randint(-1, 3) for _ in range(2)]}))",
            f"x.take(L.tensor({[rng.randint(-2, 3) for _ in range(2)]}))",
            f"x.as_strided(({rng.randint(0, 3)}, {rng.randint(0, 3)}), "
            f"({rng.randint(0, 2)}, {rng.randint(0, 2)}), {rng.randint(0, 2)})",
        ]
    )
    return expression, shape, layout


@pytest.mark.parametrize("seed", range(6))
def test_random_arguments_as_pytorch(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        _assert_same(*_random_case(rng))


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize(
    "index",
    [
        slice(None, None, 2),
        slice(None, None, -1),
        slice(None, None, 0),
        slice(None),
        0,
        -1,
        1,
        (0,),
        [0],
        None,
        Ellipsis,
    ],
)
def test_setitem_of_a_scalar(index, requires_grad: bool) -> None:
    outcomes = []
    for lib in (torch, cr):
        y = lib.zeros((), dtype=lib.float64, requires_grad=requires_grad).clone()
        try:
            y[index] = 2.5
            outcomes.append(("ok", tuple(y.shape), y.item()))
        except Exception as error:  # noqa: BLE001 (the error is what is compared)
            outcomes.append((type(error).__name__, str(error).split("\n")[0]))
    assert outcomes[1] == outcomes[0]
