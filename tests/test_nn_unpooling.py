"""max_unpool1d/2d/3d and nn.MaxUnpool1d/2d/3d against PyTorch: values and gradients after a
max pooling (batched, unbatched, output_size, stride and padding), node names and saved
indices, double backward, float16, non-contiguous inputs, empty batches, errors and module
reprs. (Where indices repeat, which value PyTorch keeps depends on its threads: not tested.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

CASES = [
    # (input shape to the pooling, nd, pooling/unpooling keyword arguments, output_size)
    ((2, 3, 6, 4), 2, {"kernel_size": 2}, None),
    ((3, 6, 4), 2, {"kernel_size": (3, 2), "stride": (3, 2)}, None),
    ((1, 2, 7, 7), 2, {"kernel_size": 2, "stride": 3, "padding": 1}, (7, 7)),
    ((2, 2, 5, 5), 2, {"kernel_size": 2}, (5, 5)),
    ((2, 2, 5, 5), 2, {"kernel_size": 2}, (2, 2, 5, 5)),
    ((2, 3, 8), 1, {"kernel_size": 2}, None),
    ((3, 9), 1, {"kernel_size": 3, "stride": 3}, (9,)),
    ((1, 2, 4, 4, 4), 3, {"kernel_size": 2}, None),
    ((2, 3, 4, 5), 3, {"kernel_size": (1, 2, 2)}, (3, 4, 5)),
]


def _pool(lib: Any, nd: int) -> tuple[Any, Any]:
    f = lib.nn.functional
    return (
        (f.max_pool1d, f.max_unpool1d),
        (f.max_pool2d, f.max_unpool2d),
        (f.max_pool3d, f.max_unpool3d),
    )[nd - 1]


def _run(
    lib: Any, x: np.ndarray, nd: int, kw: dict, output_size: Any, dtype: str = "float64"
) -> tuple:
    pool, unpool = _pool(lib, nd)
    leaf = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    out, idx = pool(leaf, return_indices=True, **kw)
    y = unpool(out, idx, output_size=output_size, **kw)
    seed = lib.tensor(
        np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=getattr(lib, dtype)
    )
    (g,) = lib.autograd.grad(y, leaf, seed, create_graph=True)
    node = y.grad_fn
    names = []
    while node is not None and len(names) < 3:
        names.append(node.name().replace("chainrule::", "torch::"))
        node = node.next_functions[0][0] if node.next_functions else None
    return y.detach().float().numpy(), g.detach().float().numpy(), names, tuple(y.shape)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_unpool_after_pool_matches_torch(case: int) -> None:
    shape, nd, kw, output_size = CASES[case]
    x = np.random.default_rng(case).permutation(int(np.prod(shape))).reshape(shape) * 0.1
    t = _run(torch, x, nd, kw, output_size)
    c = _run(chainrule, x, nd, kw, output_size)
    np.testing.assert_array_equal(c[0], t[0])
    np.testing.assert_array_equal(c[1], t[1])
    assert c[2:] == t[2:]


def test_float16_and_bfloat16_match_torch() -> None:
    x = np.random.default_rng(3).permutation(48).reshape(1, 3, 4, 4) * 0.37
    for dtype in ("float16", "bfloat16", "float32"):
        t = _run(torch, x, 2, {"kernel_size": 2}, None, dtype)
        c = _run(chainrule, x, 2, {"kernel_size": 2}, None, dtype)
        np.testing.assert_array_equal(c[0], t[0])
        np.testing.assert_array_equal(c[1], t[1])


def test_node_saves_the_indices_and_double_backward_matches() -> None:
    x = np.random.default_rng(1).standard_normal((2, 2, 2))
    idx = np.array([[[0, 3], [9, 15]], [[1, 6], [12, 14]]])
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.max_unpool2d(leaf, lib.tensor(idx), 2)
        saved = y.grad_fn._saved_indices
        w = lib.tensor(np.arange(32.0).reshape(2, 4, 4), requires_grad=True)
        (g,) = lib.autograd.grad((y * w).sum(), leaf, create_graph=True)
        (gw,) = lib.autograd.grad((g * g).sum(), w)
        results.append((saved.numpy().tolist(), g.detach().numpy(), gw.numpy(), g.grad_fn.name()))
    t, c = results
    assert c[0] == t[0]
    np.testing.assert_array_equal(c[1], t[1])
    np.testing.assert_array_equal(c[2], t[2])


def test_non_contiguous_input() -> None:
    # (PyTorch's backward fails on non-contiguous *indices*, "view size is not compatible";
    # chainrule's does not: the indices here are contiguous.)
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    idx = np.stack([np.arange(4) * 4 + k % 4 for k in range(6)]).reshape(2, 3, 4)
    out = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        xi = leaf.transpose(0, 1)  # (3, 2, 4), non-contiguous
        ii = lib.tensor(idx).transpose(0, 1).contiguous()
        y = lib.nn.functional.max_unpool2d(xi, ii, (2, 2))
        y.backward(lib.ones_like(y) * lib.arange(32.0).reshape(4, 8))
        out.append((y.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])


def test_empty_batch_and_empty_output() -> None:
    def empty_batch(lib: Any) -> Any:
        y = lib.nn.functional.max_unpool2d(
            lib.zeros(0, 2, 2, 2), lib.zeros(0, 2, 2, 2, dtype=lib.long), 2
        )
        return y.shape

    def empty_output(lib: Any) -> Any:
        x = lib.ones(1, 2, 2, 2)
        return lib.nn.functional.max_unpool2d(
            x, lib.zeros(1, 2, 2, 2, dtype=lib.long), 1, stride=1, padding=1
        ).shape

    same_outcome(empty_batch)
    same_outcome(empty_output)


def test_module_reprs_and_forward() -> None:
    for make in (
        lambda nn: nn.MaxUnpool2d(2),
        lambda nn: nn.MaxUnpool1d(3, stride=2, padding=1),
        lambda nn: nn.MaxUnpool3d((1, 2, 3)),
        lambda nn: nn.MaxUnpool2d((2, 3), 1, 0),
    ):
        assert repr(make(chainrule.nn)) == repr(make(torch.nn))
    x = np.random.default_rng(5).permutation(32).reshape(1, 2, 4, 4) * 1.0
    out = []
    for lib in (torch, chainrule):
        pool = lib.nn.MaxPool2d(2, stride=2, return_indices=True)
        unpool = lib.nn.MaxUnpool2d(2, stride=2)
        o, i = pool(lib.tensor(x))
        out.append((unpool(o, i).numpy(), unpool(o, i, output_size=(1, 2, 5, 5)).numpy()))
    for a, b in zip(out[1], out[0], strict=True):
        np.testing.assert_array_equal(a, b)


ERRORS = {
    "float indices": lambda F, t: F.max_unpool2d(t.ones(1, 2, 2, 2), t.zeros(1, 2, 2, 2), 2),
    "int indices": lambda F, t: F.max_unpool2d(t.ones(2, 2, 2), t.zeros(2, 2, 2, dtype=t.int32), 2),
    "float indices 3d": lambda F, t: F.max_unpool3d(t.ones(1, 2, 2, 2), t.zeros(1, 2, 2, 2), 2),
    "indices shape": lambda F, t: F.max_unpool2d(
        t.ones(1, 2, 2, 2), t.zeros(1, 2, 2, 1, dtype=t.long), 2
    ),
    "index too large": lambda F, t: F.max_unpool2d(
        t.ones(1, 1, 1, 1), t.full((1, 1, 1, 1), 4, dtype=t.long), 2
    ),
    "negative index": lambda F, t: F.max_unpool3d(
        t.ones(1, 1, 1, 1), t.full((1, 1, 1, 1), -1, dtype=t.long), 2
    ),
    "2-d input": lambda F, t: F.max_unpool2d(t.ones(2, 2), t.zeros(2, 2, dtype=t.long), 2),
    "3-d input of 3d": lambda F, t: F.max_unpool3d(
        t.ones(2, 2, 2), t.zeros(2, 2, 2, dtype=t.long), 2
    ),
    "1-d input of 1d": lambda F, t: F.max_unpool1d(t.ones(2), t.zeros(2, dtype=t.long), 2),
    "empty channels": lambda F, t: F.max_unpool2d(
        t.ones(2, 0, 2, 2), t.zeros(2, 0, 2, 2, dtype=t.long), 2
    ),
    "empty channels 3d": lambda F, t: F.max_unpool3d(
        t.ones(1, 0, 2, 2, 2), t.zeros(1, 0, 2, 2, 2, dtype=t.long), 2
    ),
    "output_size range": lambda F, t: F.max_unpool2d(
        t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.long), 2, output_size=(9, 9)
    ),
    "output_size list": lambda F, t: F.max_unpool2d(
        t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.long), 2, output_size=[2, 9]
    ),
    "output_size length": lambda F, t: F.max_unpool2d(
        t.ones(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.long), 2, output_size=(1, 4, 4)
    ),
    "stride 0 in 3d": lambda F, t: F.max_unpool3d(
        t.ones(1, 1, 2, 2, 2), t.zeros(1, 1, 2, 2, 2, dtype=t.long), 2, stride=0
    ),
    "int input": lambda F, t: F.max_unpool2d(
        t.ones(1, 1, 2, 2, dtype=t.int32), t.zeros(1, 1, 2, 2, dtype=t.long), 2
    ),
    "bool input 3d": lambda F, t: F.max_unpool3d(
        t.ones(1, 1, 2, 2, 2, dtype=t.bool), t.zeros(1, 1, 2, 2, 2, dtype=t.long), 2
    ),
    "complex input": lambda F, t: F.max_unpool2d(
        t.ones(1, 2, 2, dtype=t.complex64), t.zeros(1, 2, 2, dtype=t.long), 2
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(lambda lib: ERRORS[name](lib.nn.functional, lib))
