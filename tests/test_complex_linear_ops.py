"""Complex gradients through the ops that move, copy, mask or sum elements (cat, stack, flip,
roll, repeat, indexing, gather/scatter, masked ops, splits, diagonals, cumsum, copy_, fill_,
pads), complex var/std values, norms, convolutions, logsumexp and dist, against PyTorch.

Their derivatives move, copy or add the gradient's elements, so PyTorch's formulas are the
real ones; each op is also swept on complex inputs by test_complex_refused.py. Before, each
refused complex inputs that require grad; complex ``var``/``std`` computed the variance of the
real parts with a ComplexWarning (and kept the complex dtype), where PyTorch adds the
variances of the real and imaginary parts.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_complex_autograd import _c, _close, _compare

IDX = np.array([2, 0, 2])

CASES: dict[str, tuple[Any, tuple[np.ndarray, ...]]] = {
    "cat": (lambda lib, a, b: lib.cat([a, b, a], 1), (_c(2, 3), _c(2, 2))),
    "cat_real_and_complex": (lambda lib, a, x: lib.cat([a, x]), (_c(3), np.arange(3.0))),
    "stack": (lambda lib, a, b: lib.stack([a, b], -1), (_c(2, 3), _c(2, 3))),
    "flip": (lambda lib, a: a.flip(0, 1), (_c(2, 3),)),
    "roll": (lambda lib, a: a.roll((1, -1), (0, 1)), (_c(2, 3),)),
    "repeat": (lambda lib, a: a.repeat(2, 1, 3), (_c(2, 3),)),
    "tril_triu": (lambda lib, a: a.tril(1) + a.triu(), (_c(3, 3),)),
    "diag_embed_diagonal": (lambda lib, a: lib.diag_embed(a).diagonal(0, -2, -1) * 1j,
                            (_c(2, 3),)),
    "trace": (lambda lib, a: a.trace(), (_c(3, 3),)),
    "cumsum": (lambda lib, a: a.cumsum(1), (_c(2, 3),)),
    "slice_step": (lambda lib, a: a[:, ::2], (_c(2, 5),)),
    "index": (lambda lib, a: a[lib.tensor(IDX)], (_c(4, 2),)),
    "index_put_accumulate": (
        lambda lib, a, v: a.index_put((lib.tensor(IDX),), v, accumulate=True), (_c(4), _c(3))),
    "index_select": (lambda lib, a: a.index_select(1, lib.tensor(IDX)), (_c(2, 3),)),
    "gather": (lambda lib, a: a.gather(1, lib.tensor([[0, 0], [2, 1]])), (_c(2, 3),)),
    "scatter": (lambda lib, a, s: a.scatter(1, lib.tensor([[0, 2], [1, 0]]), s),
                (_c(2, 3), _c(2, 2))),
    "scatter_add": (lambda lib, a, s: a.scatter_add(0, lib.tensor([[0, 1, 0]]), s),
                    (_c(2, 3), _c(1, 3))),
    "take": (lambda lib, a: a.take(lib.tensor([5, 0, 5])), (_c(2, 3),)),
    "masked_fill": (lambda lib, a: a.masked_fill(lib.tensor([True, False, True]), 2 - 1j),
                    (_c(3),)),
    "masked_select": (lambda lib, a: a.masked_select(lib.tensor([[True, False, True]])),
                      (_c(2, 3),)),
    "split_unbind": (lambda lib, a: a.split(2, 1)[1] * a.unbind(1)[0].unsqueeze(1),
                     (_c(2, 3),)),
    "chunk": (lambda lib, a: a.chunk(2)[0] + a.chunk(2)[1], (_c(4, 2),)),
    "as_strided": (lambda lib, a: a.as_strided((2, 2), (1, 2)), (_c(6),)),
    "copy_": (lambda lib, a, b: (a * 1).copy_(b) * a, (_c(3), _c(3))),
    "fill_": (lambda lib, a, v: (a * 1).fill_(v) * a, (_c(3), _c())),
    "zero_": (lambda lib, a: (a * 1).zero_() + a, (_c(3),)),
    "narrow_expand": (lambda lib, a: a.narrow(1, 1, 2).expand(3, 2, 2), (_c(2, 3),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linear_op_matches_pytorch(name: str) -> None:
    fn, arrays = CASES[name]
    _compare(fn, *arrays, rtol=1e-12, atol=1e-14)


def test_complex64_cat_index_and_sum() -> None:
    def fn(lib: Any, a: Any, b: Any) -> Any:
        return lib.cat([a, b])[lib.tensor([3, 0, 1])].cumsum(0).flip(0)

    _compare(fn, _c(2, dtype=np.complex64), _c(2, dtype=np.complex64), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("call", ["var", "std", "var_dim", "std_keepdim", "var_mean", "std_mean",
                                  "correction_0", "one_element", "special"])
def test_complex_var_and_std_values_as_pytorch(call: str, dtype: str) -> None:
    values = _c(3, 4)
    if call == "special":
        values = values.copy()
        values[0, 0] = complex(np.inf, 0)
        values[1, 2] = complex(0, np.nan)
    fns = {
        "var": lambda lib, t: t.var(),
        "std": lambda lib, t: t.std(),
        "var_dim": lambda lib, t: t.var(1),
        "std_keepdim": lambda lib, t: t.std(0, keepdim=True),
        "var_mean": lambda lib, t: lib.var_mean(t, 1),
        "std_mean": lambda lib, t: lib.std_mean(t),
        "correction_0": lambda lib, t: t.var(correction=0),
        "one_element": lambda lib, t: t[:1, :1].std(),
        "special": lambda lib, t: t.var(1),
    }
    results = []
    for lib in (chainrule, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # (one element: both warn)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            out = fns[call](lib, lib.tensor(values, dtype=getattr(lib, dtype)))
        results.append(out if isinstance(out, tuple) else (out,))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-5 if dtype == "complex64" else 1e-12, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# Norms of complex tensors: before, the 2-norm was sqrt(sum(z * z)), a complex number (also for
# torch.norm, linalg.norm and dist); it is the norm of the absolute values, real.

NORM_ORDERS = [2, 1, 3, 0.5, 1.5, np.inf, -np.inf, 0]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("ord", NORM_ORDERS)
@pytest.mark.parametrize("dim", [None, 1])
def test_vector_norm_of_complex_values_and_gradients(ord: float, dim: Any, dtype: Any) -> None:
    values = _c(3, 4, dtype=dtype)
    values[0, 1] = 0  # (the gradient's convention at 0)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.complex128 else {"rtol": 1e-5,
                                                                           "atol": 1e-6}
    if ord == 0:  # a count: no gradient, in PyTorch either
        for lib_values in [(lib, lib.tensor(values)) for lib in (chainrule, torch)]:
            lib, z = lib_values
            assert lib.linalg.vector_norm(z, 0, dim).dtype == (
                lib.float64 if dtype == np.complex128 else lib.float32)
        _close(chainrule.linalg.vector_norm(chainrule.tensor(values), 0, dim),
               torch.linalg.vector_norm(torch.tensor(values), 0, dim))
        return
    _compare(lambda lib, z: lib.linalg.vector_norm(z, ord, dim), values, **tol)


@pytest.mark.parametrize("call", ["norm", "norm_p3", "linalg_norm", "dist", "norm_dim_keepdim"])
def test_norm_functions_of_complex_values(call: str) -> None:
    fns = {
        "norm": lambda lib, z: z.norm(),
        "norm_p3": lambda lib, z: lib.norm(z, p=3),
        "linalg_norm": lambda lib, z: lib.linalg.norm(z),
        "dist": lambda lib, z: lib.dist(z, z * 2),
        "norm_dim_keepdim": lambda lib, z: z.norm(dim=0, keepdim=True),
    }
    values = _c(2, 3)
    with chainrule.no_grad():
        ours = fns[call](chainrule, chainrule.tensor(values))
    _close(ours, fns[call](torch, torch.tensor(values)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("ord", [2, 3, 1.5])
def test_second_order_of_complex_norms(ord: float) -> None:
    values = _c(4)
    results = []
    for lib in (chainrule, torch):
        z = lib.tensor(values, requires_grad=True)
        g, = lib.autograd.grad(lib.linalg.vector_norm(z, ord), z, create_graph=True)
        second, = lib.autograd.grad(lib.view_as_real(g).sum(), z)
        results.append((g, second))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-9, atol=1e-11)


# ----------------------------------------------------------------------------------------------
# Convolutions (PyTorch's Gauss-trick composition of three real convolutions, so its graph),
# logsumexp, dist and the reflection/replication pads.


MORE: dict[str, tuple[Any, tuple[np.ndarray, ...]]] = {
    "conv1d_bias": (lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b),
                    (_c(2, 3, 7), _c(4, 3, 3), _c(4))),
    "conv1d_stride_padding_dilation": (
        lambda lib, x, w: lib.nn.functional.conv1d(x, w, stride=2, padding=1, dilation=2),
        (_c(1, 2, 9), _c(3, 2, 2))),
    "conv2d_groups": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=2, padding=1),
                      (_c(2, 4, 5, 5), _c(6, 2, 3, 3))),
    "conv3d": (lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=1),
               (_c(1, 2, 3, 3, 3), _c(2, 2, 2, 2, 2))),
    "conv_transpose2d": (
        lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1),
        (_c(2, 3, 4, 4), _c(3, 2, 3, 3), _c(2))),
    "conv_transpose1d_groups": (
        lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w, groups=2, dilation=2),
        (_c(1, 4, 5), _c(4, 3, 2))),
    "conv_of_a_conjugate": (lambda lib, x, w: lib.nn.functional.conv1d(x.conj(), w),
                            (_c(1, 2, 5), _c(3, 2, 2))),
    "conv_complex64": (lambda lib, x, w: lib.nn.functional.conv1d(x, w),
                       (_c(1, 2, 5, dtype=np.complex64), _c(3, 2, 2, dtype=np.complex64))),
    "logsumexp": (lambda lib, z: z.logsumexp(1), (_c(2, 3),)),
    "logsumexp_all_keepdim": (lambda lib, z: lib.logsumexp(z, (0, 1), keepdim=True),
                              (_c(2, 3),)),
    "dist": (lambda lib, a, b: lib.dist(a, b), (_c(2, 3), _c(2, 3))),
    "dist_p1": (lambda lib, a, b: lib.dist(a, b, 1), (_c(2, 3), _c(2, 3))),
    "dist_p3_broadcast": (lambda lib, a, b: lib.dist(a, b, 3), (_c(2, 3), _c(3))),
    "dist_inf": (lambda lib, a, b: lib.dist(a, b, float("inf")), (_c(2, 3), _c(2, 3))),
    "reflection_pad1d": (lambda lib, z: lib.nn.functional.pad(z, (2, 1), mode="reflect"),
                         (_c(2, 4),)),
    "reflection_pad2d": (
        lambda lib, z: lib.nn.functional.pad(z, (1, 1, 2, 0), mode="reflect"), (_c(1, 3, 4),)),
    "replication_pad3d": (
        lambda lib, z: lib.nn.functional.pad(z, (1, 1, 1, 0, 0, 1), mode="replicate"),
        (_c(1, 2, 2, 3),)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_convolution_logsumexp_dist_and_pads(name: str) -> None:
    fn, arrays = MORE[name]
    tol = {"rtol": 1e-5, "atol": 1e-6} if arrays[0].dtype == np.complex64 else {
        "rtol": 1e-10, "atol": 1e-12}
    _compare(fn, *arrays, **tol)


def _node_tree(output: Any) -> list[tuple[int, str]]:
    found, stack = [], [(output.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is not None:
            found.append((depth, node.name().rpartition("::")[2]))
            stack.extend((child, depth + 1) for child, _ in reversed(node.next_functions))
    return found


def test_complex_convolution_records_pytorchs_graph() -> None:
    x, w, b = _c(1, 2, 5), _c(3, 2, 2), _c(3)
    trees = [_node_tree(lib.nn.functional.conv1d(
        *[lib.tensor(a, requires_grad=True) for a in (x, w, b)])) for lib in (chainrule, torch)]
    assert trees[0] == trees[1]
    assert trees[0][0] == (0, "AddBackward0") and len(trees[0]) > 40


@pytest.mark.parametrize("name", ["conv1d_bias", "conv2d_groups", "conv_transpose2d",
                                  "logsumexp", "dist"])
def test_second_order_of_convolution_logsumexp_dist(name: str) -> None:
    fn, arrays = MORE[name]
    results = []
    for lib in (chainrule, torch):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        loss = (lib.view_as_real(out) if out.is_complex() else out).sum()
        grads = lib.autograd.grad(loss, leaves, create_graph=True)
        total = sum(lib.view_as_real(g * leaf).sum() for g, leaf in zip(grads, leaves,
                                                                         strict=True))
        results.append((*grads, *lib.autograd.grad(total, leaves)))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(("x_dtype", "w_dtype", "b_dtype"), [
    ("complex128", "float64", None), ("complex64", "float16", None),
    ("complex64", "bfloat16", None), ("complex128", "complex64", None),
    ("complex128", "complex128", "float64"), ("float64", "complex128", None),
])
def test_convolution_dtype_errors_as_pytorch(x_dtype: str, w_dtype: str, b_dtype: Any) -> None:
    messages = []
    for lib in (chainrule, torch):
        bias = None if b_dtype is None else lib.ones(3, dtype=getattr(lib, b_dtype))
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.conv1d(lib.ones(1, 2, 5, dtype=getattr(lib, x_dtype)),
                                     lib.ones(3, 2, 2, dtype=getattr(lib, w_dtype)), bias)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ----------------------------------------------------------------------------------------------
# index_add: PyTorch's gradients for a real alpha; for a complex alpha chainrule's source
# gradient is the true one, grad * conj(alpha), where PyTorch 2.13 omits the conjugate and
# fails its own gradcheck (README: differences on purpose).


@pytest.mark.parametrize("alpha", [1, 2.5, -0.5])
def test_index_add_with_real_alpha_matches_pytorch(alpha: float) -> None:
    _compare(lambda lib, a, s: a.index_add(0, lib.tensor([2, 0, 2]), s, alpha=alpha),
             _c(4, 2), _c(3, 2), rtol=1e-12, atol=1e-14)
    _compare(lambda lib, a, s: (a * 1).index_add_(1, lib.tensor([1, 0]), s, alpha=alpha),
             _c(2, 3), _c(2, 2), rtol=1e-12, atol=1e-14)


def test_index_add_with_complex_alpha_has_the_true_gradient() -> None:
    def fn(lib: Any) -> Any:
        return lambda a, s: a.index_add(0, lib.tensor([2, 0, 2]), s, alpha=1 - 2j)

    leaves = [chainrule.tensor(_c(4), requires_grad=True), chainrule.tensor(_c(3),
                                                                           requires_grad=True)]
    assert chainrule.autograd.gradcheck(fn(chainrule), leaves)
    theirs = [torch.tensor(leaf.detach().numpy(), requires_grad=True) for leaf in leaves]
    assert not torch.autograd.gradcheck(fn(torch), theirs, raise_exception=False)


def test_batched_complex_vecdot_as_pytorch() -> None:
    # (it called a conj_physical that does not exist: AttributeError)
    _compare(lambda lib, x, y: lib.linalg.vecdot(x, y), _c(2, 3), _c(2, 3),
             rtol=1e-12, atol=1e-14)
    _compare(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), _c(3, 2), _c(3, 1),
             rtol=1e-12, atol=1e-14)
    trees = [_node_tree(lib.linalg.vecdot(lib.tensor(_c(2, 3), requires_grad=True),
                                          lib.tensor(_c(2, 3)))) for lib in (chainrule, torch)]
    assert trees[0] == trees[1]
