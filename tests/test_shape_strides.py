"""Where results lie in memory, against PyTorch: exact ``stride()`` (also of size-1 and empty
dimensions), ``storage_offset()``, and whether ``.view()`` works on a result exactly when it
works on PyTorch's.

The layout sweep (tests/test_op_sweep_layouts.py) checks the dimensions longer than 1 of every
OpInfo's outputs on four input layouts; this file checks the rules themselves: the stride
PyTorch gives a dimension ``unsqueeze`` or ``expand`` inserts, strides of views of empty
tensors, the memory format of ``cat``/``stack``, contiguous results of reductions and scans,
``flip``/``put``/``index_put`` keeping their input's order, and PyTorch's TensorIterator order
for advanced indexing on random layouts and indices.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, torch


def _inputs(lib: Any) -> dict[str, Any]:
    """Named inputs of odd layouts, the same in both libraries."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    x3 = rng.standard_normal((2, 3, 4))
    env: dict[str, Any] = {"lib": lib}
    env["x"] = lib.from_numpy(x.copy())
    env["t"] = lib.from_numpy(x.T.copy()).t()  # (3, 4), strides (1, 3)
    env["p"] = lib.from_numpy(np.ascontiguousarray(x3.transpose(2, 1, 0))).permute(2, 1, 0)
    env["st"] = lib.from_numpy(np.repeat(x, 2, axis=1))[:, ::2]  # strides (8, 2)
    env["ex"] = lib.from_numpy(x[:1].copy()).expand(3, 4)  # strides (0, 1)
    env["s"] = lib.from_numpy(np.array(1.5))
    env["v"] = lib.from_numpy(rng.standard_normal(6))
    env["e"] = lib.zeros(0, 3, dtype=lib.float64)
    env["e3"] = lib.zeros(2, 0, 3, dtype=lib.float64)
    # 4-d and 5-d channels-last layouts (NHWC, NDHWC)
    env["cl"] = lib.from_numpy(rng.standard_normal((2, 4, 5, 3))).permute(0, 3, 1, 2)
    env["cl3"] = lib.from_numpy(rng.standard_normal((2, 2, 3, 4, 3))).permute(0, 4, 1, 2, 3)
    return env


STRIDES = [
    # unsqueeze: the new dimension gets size * stride of the next one, 1 at the end
    "x.unsqueeze(0)", "x.unsqueeze(1)", "x.unsqueeze(2)", "t.unsqueeze(0)", "t.unsqueeze(1)",
    "t.unsqueeze(-1)", "st.unsqueeze(1)", "st.unsqueeze(-1)", "ex.unsqueeze(0)",
    "ex.unsqueeze(1)", "ex.unsqueeze(2)", "s.unsqueeze(0)", "p.unsqueeze(3)",
    "x[:, :1].unsqueeze(1)", "x[None]", "t[None, :, None]", "t[..., None]",
    # expand: size-1 dimensions that stay keep their stride, new ones of size 1 get one
    "x.expand(2, 3, 4)", "x[:1].expand(3, 4)", "x[:, None].expand(3, 2, 4)",
    "t[:1, None].expand(1, 2, 4)", "x[:, :1].expand(1, 3, 1)", "s.expand(2, 1)", "s.expand(1)",
    "v.expand(1, 1, 6)", "t.expand(1, 3, 4)",
    # views of empty tensors keep PyTorch's strides
    "e.t()", "e.transpose(0, 1)", "e.permute(1, 0)", "e3.permute(2, 0, 1)", "e3.transpose(0, 2)",
    "e[:, ::2]", "e3[:, :, 1]", "e.unsqueeze(0)", "e.unsqueeze(1)", "e.unsqueeze(2)",
    "e.t().unsqueeze(1)", "e.unsqueeze(1).expand(0, 2, 3)", "e.diagonal()", "e3.select(2, 1)",
    "lib.zeros(3, 0).t()", "lib.zeros(3, 0).unsqueeze(1)", "lib.zeros(2, 1, 0).squeeze(1)",
    "e3.narrow(2, 1, 2)", "e3.mT", "e3.split(1, 2)[0]", "e3.chunk(3, 2)[1]", "e3.unbind(0)[1]",
    "e.t().flip(0)", "e3.permute(2, 0, 1).flip(0)", "e[:, ::2].flip(1)",
    # results PyTorch makes contiguous whatever the input's layout
    "t.sum(1)", "p.sum(1)", "p.sum((0, 2), keepdim=True)", "p.mean(1)", "p.prod(2)",
    "p.amax(1)", "p.max(1).values", "p.max(1).indices", "p.var(1)", "p.std(0, keepdim=True)",
    "lib.var_mean(p, 1)[1]", "p.norm(2, 1)", "p.logsumexp(1)", "(p > 0).all(1)", "p.any(2)",
    "p.argmax(1)", "p.median(1).values", "p.count_nonzero(1)", "p.cumsum(1)", "p.cumprod(0)",
    "t.cumsum(0, dtype=lib.float32)", "st.sum(0)", "ex.cumsum(1)", "t.tril()", "t.triu(1)",
    "t.roll(1, 0)", "ex.roll(1)", "t.masked_fill(t > 0, 0.5)", "t.ravel()", "st.ravel()",
    "v[::2].ravel()", "lib.cat([t, t])", "lib.cat([t, ex], 1)", "lib.stack([t, t])",
    "lib.stack([t, t], 2)", "lib.hstack([t, t])", "lib.vstack([t, t])", "lib.dstack([t, t])",
    "lib.column_stack([t, t])", "lib.cat([e, e])",
    # cat and stack keep a channels-last format shared by all their inputs
    "lib.cat([cl, cl], 1)", "lib.cat([cl, cl])", "lib.cat([cl, cl.contiguous()], 1)",
    "lib.cat([cl3, cl3])", "lib.stack([cl, cl])", "lib.stack([cl, cl], 2)",
    "lib.stack([cl, cl], 4)", "lib.stack([p, p], 3)",
    # copies into empty_like / clone(): the input's memory order
    "t.flip(0)", "t.flip(0, 1)", "p.flip(1)", "ex.flip(0)", "st.flip(1)", "t.fliplr()",
    "t.flipud()", "t.put(lib.tensor([1, 6]), lib.tensor([9.0, 8.0], dtype=lib.float64))",
    "t.index_put((lib.tensor([0, 2]),), lib.tensor(5.0, dtype=lib.float64))",
    "t.index_put((lib.tensor([0, 0]), lib.tensor([1, 1])), lib.tensor(1.0, dtype=lib.float64),"
    " True)",
    # advanced indexing: TensorIterator's order over the restrided input and the indices
    "x[:, [0, 2]]", "x[:, [[0], [2]]]", "t[:, [0, 2]]", "t[[0, 2]]", "t[None, [0, 2]]",
    "p[0, :, [0, 3]]", "p[None, :, [0, 1]]", "p[:, lib.tensor([True, False, True])]",
    "p[[0, 1], :, [1, 2]]", "p[:, [[0], [2]], [1, 3]]", "ex[:, [1, 3]]", "st[[2, 0], :]",
    "x[:, lib.tensor([[0, 1], [2, 3]]).t()]", "p[..., [2, 0]]",
    "x[:, lib.tensor([0, 2], dtype=lib.int32)]",
]


def _both(code: str) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = eval(code, {}, _inputs(chainrule))  # noqa: S307 - test expressions
        theirs = eval(code, {}, _inputs(torch))  # noqa: S307
    return ours, theirs


@pytest.mark.parametrize("code", STRIDES)
def test_strides_match_torch(code: str) -> None:
    ours, theirs = _both(code)
    assert_close(ours, theirs, 1e-12, 1e-12, what=code)
    assert ours.stride() == theirs.stride(), f"{code}: {ours.stride()} != {theirs.stride()}"
    assert ours.is_contiguous() == theirs.is_contiguous(), code


@pytest.mark.parametrize("code", STRIDES)
def test_view_works_where_torch_view_works(code: str) -> None:
    ours, theirs = _both(code)
    try:
        expected = theirs.view(-1)
    except RuntimeError:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            ours.view(-1)
        return
    assert_close(ours.view(-1), expected, 1e-12, 1e-12, what=code)


def _storage_ptr(t: Any) -> int:
    return t.untyped_storage().data_ptr()


def test_view_views_keep_the_storage_and_offset() -> None:
    """Views given PyTorch's strides by hand still share their base's storage and offset."""
    for lib in (chainrule, torch):
        base = lib.arange(12.0).view(3, 4)
        y = base[1:].t().unsqueeze(-1)
        assert y.stride() == (1, 4, 1) and y.storage_offset() == 4
        assert _storage_ptr(y) == _storage_ptr(base)
        z = base[:1, None].expand(1, 5, 4)
        assert z.stride() == (4, 0, 1) and z.storage_offset() == 0
        assert _storage_ptr(z) == _storage_ptr(base)
        base[1, 0] = 7.0
        assert y[0, 0, 0].item() == 7.0  # still a view


def _layout(lib: Any, base: np.ndarray, perm: list[int], step: bool, expand_dim: int | None
            ) -> Any:
    t = lib.from_numpy(base.copy())
    if step:
        t = t[..., ::2]
    t = t.permute(*perm)
    if expand_dim is not None:
        t = t.narrow(expand_dim, 0, 1)
        shape = list(t.shape)
        shape[expand_dim] = 3
        t = t.expand(*shape)
    return t


def _index_items(lib: Any, items: list[Any]) -> tuple:
    out = []
    for item in items:
        kind = item[0] if isinstance(item, tuple) else None
        if kind == "list":
            out.append(item[1])
        elif kind == "mask":
            out.append(lib.tensor(item[1]))
        elif kind == "tensor":
            index = lib.tensor(item[1])
            out.append(index.t() if item[2] else index)
        else:
            out.append(item)
    return tuple(out)


def _random_case(rng: random.Random, nprng: np.random.Generator) -> tuple:
    ndim = rng.randint(1, 4)
    shape = [rng.randint(1, 4) for _ in range(ndim)]
    perm = list(range(ndim))
    rng.shuffle(perm)
    base_shape = [shape[p] for p in np.argsort(perm)]
    step = rng.random() < 0.3
    if step:
        base_shape[-1] *= 2
    expand_dim = rng.randrange(ndim) if rng.random() < 0.3 else None
    if expand_dim is not None:
        shape[expand_dim] = 3
    items: list[Any] = []
    for d in range(ndim):
        n, r = shape[d], rng.random()
        if r < 0.4:
            items.append(slice(None))
        elif r < 0.6:
            items.append(("list", [rng.randrange(n) for _ in range(rng.randint(1, 3))]))
        elif r < 0.75:
            items.append(("mask", [rng.random() < 0.6 for _ in range(n)]))
        elif r < 0.9:
            k = rng.randint(1, 3)
            items.append(("tensor", nprng.integers(0, n, (k, 2)).tolist(), rng.random() < 0.5))
        else:
            items.append(None)
    base = nprng.standard_normal(base_shape)
    return base, perm, step, expand_dim, items


def test_advanced_indexing_strides_match_torch_on_random_layouts() -> None:
    """Random layouts (permuted, step-sliced, expanded, size-1 dimensions) and random tensor
    indices (lists, masks, transposed 2-d tensors, None between them): the same values and the
    same strides, size-1 dimensions included."""
    rng, nprng = random.Random(0), np.random.default_rng(0)
    compared = 0
    while compared < 400:
        base, perm, step, expand_dim, items = _random_case(rng, nprng)
        if not any(isinstance(i, tuple) for i in items):
            continue
        theirs_in = _layout(torch, base, perm, step, expand_dim)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                theirs = theirs_in[_index_items(torch, items)]
            except (IndexError, RuntimeError):
                continue
            ours = _layout(chainrule, base, perm, step, expand_dim)[_index_items(chainrule, items)]
        assert_close(ours, theirs, 0, 0, what=str(items))
        if theirs.numel():
            assert ours.stride() == theirs.stride(), (
                f"{tuple(theirs_in.shape)} {theirs_in.stride()} {items}: "
                f"{ours.stride()} != {theirs.stride()}"
            )
        compared += 1


# ----------------------------------------------------------------------------------------------
# Transposes of 0-d, 1-d and 3-d tensors: PyTorch's warnings and errors

TRANSPOSES = ["s.T", "s.H", "s.mT", "s.mH", "s.adjoint()", "lib.adjoint(s)", "v.T", "v.H",
              "v.mH", "v.mT", "v.adjoint()", "p.H", "p.mH", "p.adjoint()", "x.H", "x.mH"]


#: PyTorch's deprecation warnings for 0-d tensors (it gives each once per process, so a
#: differential comparison would depend on the order the tests run in).
ZERO_D_WARNINGS = {
    "T": "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
    "mT": "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
          "cases.",
    "H": "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
    "mH": "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
    "adjoint": "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
}


@pytest.mark.parametrize("code", TRANSPOSES)
def test_transposes_warn_and_fail_as_torch(code: str) -> None:
    results, warned = [], []
    for lib in (chainrule, torch):
        env = _inputs(lib)
        env["s"] = env["s"].requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = eval(code, {}, env)  # noqa: S307
            except RuntimeError as error:
                results.append(("error", str(error)))
                continue
        warned.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
        node = None if out.grad_fn is None else out.grad_fn.name()
        results.append((tuple(out.shape), out.stride(), out is env["s"], node))
    assert results[0] == results[1]
    if code.startswith(("s.", "lib.adjoint(s)")):
        name = code.split(".")[1].rstrip("()") if code.startswith("s.") else "adjoint"
        assert warned[0] == [ZERO_D_WARNINGS[name]]
        assert warned[1] in ([], warned[0])  # PyTorch's: unless it gave it before
    elif results[0][0] != "error":
        assert warned[0] == warned[1]


# ----------------------------------------------------------------------------------------------
# Chains of views: strides and storage offsets after each step


def _view_step(rng: random.Random, t: Any) -> tuple[str, tuple] | None:
    """A random view op applicable to ``t`` (torch's), with its arguments drawn now."""
    nd, shape = t.dim(), tuple(t.shape)
    op = rng.choice(["unsqueeze", "permute", "expand", "narrow", "select", "flatten", "view",
                     "reshape", "squeeze", "t", "diagonal", "mT", "split", "unflatten", "step"])
    if op == "unsqueeze":
        return op, (rng.randint(-nd - 1, nd),)
    if not nd:
        return None
    d = rng.randrange(nd)
    n = shape[d]
    if op == "permute":
        order = list(range(nd))
        rng.shuffle(order)
        return op, tuple(order)
    if op == "expand":
        sizes = list(shape)
        ones = [i for i, s in enumerate(sizes) if s == 1]
        if ones:
            sizes[rng.choice(ones)] = rng.randint(1, 3)
        return op, tuple([rng.randint(1, 2)] * rng.randint(0, 1) + sizes)
    if op == "narrow":
        start = rng.randint(0, n)
        return op, (d, start, rng.randint(0, n - start))
    if op == "select" and n:
        return op, (d, rng.randrange(n))
    if op in ("flatten", "squeeze"):
        return op, ()
    if op == "view":
        return op, (-1,)
    if op == "reshape":
        count = t.numel()
        choices = [(count,), (1, count), (count, 1), (1, count, 1)]
        if count and count % 2 == 0:
            choices.append((2, count // 2))
        return op, rng.choice(choices)
    if op == "t" and nd <= 2:
        return op, ()
    if op == "diagonal" and nd >= 2:
        return op, (0, 0, nd - 1)
    if op == "mT" and nd >= 2:
        return op, ()
    if op == "split" and n:
        return op, (max(1, n // 2), d)
    if op == "unflatten" and n and n % 2 == 0:
        return op, (d, (2, n // 2))
    if op == "step":
        return op, (d,)
    return None


def _apply_view(t: Any, op: str, args: tuple) -> Any:
    if op == "mT":
        return t.mT
    if op == "split":
        return t.split(*args)[-1]
    if op == "step":
        return t[(slice(None),) * args[0] + (slice(None, None, 2),)]
    return getattr(t, op)(*args)


def test_chains_of_views_match_torch_strides_and_offsets() -> None:
    """Random chains of views (unsqueeze, permute, expand, narrow, select, flatten, view,
    reshape, squeeze, t, diagonal, mT, split, unflatten, step slicing) on random shapes with
    size-1 and empty dimensions: same shapes; for non-empty results the same strides and
    storage offsets as PyTorch after every step."""
    rng = random.Random(7)
    steps = 0
    while steps < 1500:
        ndim = rng.randint(0, 3)
        shape = [rng.choice([0, 1, 2, 3]) if rng.random() < 0.15 else rng.randint(1, 4)
                 for _ in range(ndim)]
        array = np.arange(float(np.prod(shape))).reshape(shape)
        theirs, ours = torch.from_numpy(array.copy()), chainrule.from_numpy(array.copy())
        for _ in range(rng.randint(1, 5)):
            step = _view_step(rng, theirs)
            if step is None:
                continue
            try:
                theirs = _apply_view(theirs, *step)
            except (RuntimeError, IndexError):
                break
            ours = _apply_view(ours, *step)
            steps += 1
            assert tuple(ours.shape) == tuple(theirs.shape), step
            if theirs.numel():
                assert ours.stride() == theirs.stride(), (step, ours.stride(), theirs.stride())
                assert ours.storage_offset() == theirs.storage_offset(), step
                assert_close(ours, theirs, 0, 0, what=str(step))
