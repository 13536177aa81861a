"""``func.vmap`` against ``torch.func.vmap``: batching rules for the common ops (values, and that
they ran as rules, not as the per-example fallback), in_dims/out_dims, nesting, chunking,
randomness, vmap of grad (per-sample gradients) and grad of vmap, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 3, 5))
Y = RNG.standard_normal((4, 5))
V = RNG.standard_normal(5)
M = RNG.standard_normal((5, 2))
IDX = np.array([2, 0, 1, 1])


def _t(lib, array):
    return lib.tensor(np.array(array))


def _compare(ours, theirs, what=""):
    if isinstance(theirs, tuple | list):
        assert isinstance(ours, tuple | list) and len(ours) == len(theirs), what
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _compare(a, b, f"{what}[{k}]")
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), what
        for key in theirs:
            _compare(ours[key], theirs[key], f"{what}[{key}]")
    else:
        assert type(ours) is chainrule.Tensor, f"{what}: {type(ours)}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: {ours.shape} {theirs.shape}"
        assert_close(ours, theirs, rtol=1e-10, atol=1e-12, what=what)


# (name, function of lib, inputs (names of arrays), in_dims): each op must run by its rule.
OPS = {
    "add_scalar": (lambda lib: lambda x: x * 2 + 1, "X", 0),
    "broadcast_unbatched": (lambda lib: lambda x, v: x - v, "XV", (0, None)),
    "broadcast_ranks": (lambda lib: lambda y, x: y + x, "YX", (0, None)),
    "where": (lambda lib: lambda x: lib.where(x > 0, x, x.exp()), "X", 0),
    "pow_rpow": (lambda lib: lambda x: 2**x + x**2 - (1 - x) / (x.abs() + 1), "X", 0),
    "clamp": (lambda lib: lambda x: x.clamp(-0.5, 0.5), "X", 1),
    "activations": (
        lambda lib: lambda x: lib.nn.functional.gelu(x) + lib.relu(x) + x.sigmoid().tanh(),
        "X",
        0,
    ),
    "sum_all": (lambda lib: lambda x: x.sum(), "X", 0),
    "sum_dim": (lambda lib: lambda x: x.sum(-1), "X", 0),
    "mean_keepdim": (lambda lib: lambda x: x.mean(0, keepdim=True), "X", 2),
    "amax_tuple": (lambda lib: lambda x: x.amax((0, 1)), "X", 0),
    "max_dim": (lambda lib: lambda x: tuple(lib.max(x, 1)), "X", 0),
    "max_all": (lambda lib: lambda x: x.max(), "X", 0),
    "argmax": (lambda lib: lambda x: x.argmax(), "X", 0),
    "std_var": (lambda lib: lambda x: x.std(1) + x.var(), "X", 0),
    "logsumexp": (lambda lib: lambda x: x.logsumexp(0), "X", 0),
    "norm": (lambda lib: lambda x: x.norm() + x.norm(dim=1).sum(), "X", 0),
    "softmax": (lambda lib: lambda x: lib.nn.functional.softmax(x, -1), "X", 0),
    "log_softmax": (lambda lib: lambda x: lib.log_softmax(x, dim=0), "X", 1),
    "cumsum": (lambda lib: lambda x: x.cumsum(1), "X", 0),
    "matmul_vec_mat": (lambda lib: lambda y, m: y @ m, "YM", (0, None)),
    "matmul_mat_vec": (lambda lib: lambda x, v: x @ v, "XV", (0, None)),
    "matmul_both": (lambda lib: lambda x, y: x @ y, "XY", (0, 0)),
    "matmul_unbatched_left": (lambda lib: lambda m, y: m.t() @ y, "MY", (None, 0)),
    "dot": (lambda lib: lambda y, v: lib.dot(y, v), "YV", (0, None)),
    "dot_both": (lambda lib: lambda y: lib.dot(y, y), "Y", 0),
    "mm": (lambda lib: lambda x, m: lib.mm(x, m), "XM", (0, None)),
    "mv": (lambda lib: lambda x, v: lib.mv(x, v), "XV", (0, None)),
    "linear": (lambda lib: lambda x, m: lib.nn.functional.linear(x, m.t(), m[0]), "XM", (0, None)),
    "linear_batched_weight": (
        lambda lib: lambda m, x: lib.nn.functional.linear(m.t(), x),
        "MX",
        (None, 0),
    ),
    "addmm": (
        lambda lib: lambda y, m: lib.addmm(m[0], y.unsqueeze(0), m, beta=0.5),
        "YM",
        (0, None),
    ),
    "view_reshape": (lambda lib: lambda x: x.view(15).reshape(5, 3), "X", 0),
    "view_minus_one": (lambda lib: lambda x: x.reshape(-1, 5), "X", 0),
    "flatten": (lambda lib: lambda x: lib.flatten(x), "X", 0),
    "unsqueeze_squeeze": (lambda lib: lambda x: x.unsqueeze(-1).unsqueeze(0).squeeze(), "X", 0),
    "squeeze_dim": (lambda lib: lambda y: y.unsqueeze(1).squeeze(1), "Y", 0),
    "permute_transpose": (lambda lib: lambda x: x.permute(1, 0).transpose(0, 1).t(), "X", 0),
    "T": (lambda lib: lambda x: x.T, "X", 0),
    "expand": (lambda lib: lambda y: y.expand(2, 5), "Y", 0),
    "expand_as": (lambda lib: lambda y, x: y.expand_as(x), "YX", (0, None)),
    "repeat": (lambda lib: lambda y: y.repeat(2, 1), "Y", 0),
    "cat": (lambda lib: lambda x, v: lib.cat([x, v.unsqueeze(0)], 0), "XV", (0, None)),
    "stack": (lambda lib: lambda y, v: lib.stack([y, v], 1), "YV", (0, None)),
    "chunk_unbind": (lambda lib: lambda x: (*x.chunk(2, 1), *x.unbind(0)), "X", 0),
    "split": (lambda lib: lambda x: x.split([2, 3], -1), "X", 0),
    "getitem": (lambda lib: lambda x: x[1:, ::2] + x[0, None, ::2], "X", 0),
    "getitem_ellipsis": (lambda lib: lambda x: x[..., 1], "X", 0),
    "getitem_tensor": (lambda lib: lambda x: x[:, lib.tensor([4, 0])], "X", 0),
    "select_narrow": (lambda lib: lambda x: x.select(1, 2) + x.narrow(1, 1, 1).squeeze(1), "X", 0),
    "index_select": (lambda lib: lambda x: x.index_select(1, lib.tensor([0, 4])), "X", 0),
    "gather": (lambda lib: lambda y, i: y.gather(0, i.unsqueeze(0)), "YI", (0, 0)),
    "flip_roll": (lambda lib: lambda x: x.flip(0) + x.roll(1, 1), "X", 0),
    "diagonal": (lambda lib: lambda x: x.diagonal(), "X", 0),
    "movedim": (lambda lib: lambda x: x.movedim(0, 1), "X", 0),
    "to_dtype": (lambda lib: lambda x: (x > 0).float() + x.to(lib.float32).double(), "X", 0),
    "zeros_like": (lambda lib: lambda x: lib.zeros_like(x) + lib.ones_like(x) * x, "X", 0),
    "new_zeros": (lambda lib: lambda x: x.new_zeros(2) + x[0, :2], "X", 0),
    "mse_loss": (lambda lib: lambda y, v: lib.nn.functional.mse_loss(y, v), "YV", (0, None)),
    "l1_loss_sum": (
        lambda lib: lambda x, y: lib.nn.functional.l1_loss(x, y, reduction="sum"),
        "XY",
        (0, 0),
    ),
    "cross_entropy": (
        lambda lib: lambda x, i: lib.nn.functional.cross_entropy(x, i[:3] % 5),
        "XI",
        (0, None),
    ),
    "cross_entropy_single": (
        lambda lib: lambda y, i: lib.nn.functional.cross_entropy(y.unsqueeze(0), i.unsqueeze(0)),
        "YI",
        (0, 0),
    ),
    "nll_loss": (
        lambda lib: (
            lambda x, i: lib.nn.functional.nll_loss(x.log_softmax(-1), i[:3] % 5, reduction="sum")
        ),
        "XI",
        (0, None),
    ),
    "bce_logits": (
        lambda lib: lambda y: lib.nn.functional.binary_cross_entropy_with_logits(y, y.sigmoid()),
        "Y",
        0,
    ),
}
ARRAYS = {"X": X, "Y": Y, "V": V, "M": M, "I": IDX}


@pytest.mark.parametrize("name", OPS)
def test_batching_rule(name: str) -> None:
    make, inputs, in_dims = OPS[name]

    def run(lib):
        args = [_t(lib, ARRAYS[k]) for k in inputs]
        return lib.func.vmap(make(lib), in_dims=in_dims)(*args)

    FALLBACK_COUNTS.clear()
    ours = run(chainrule)
    assert FALLBACK_COUNTS == {}, f"ran by the per-example fallback: {FALLBACK_COUNTS}"
    _compare(ours, run(torch), name)


def test_conv_and_pool_rules() -> None:
    images = RNG.standard_normal((3, 2, 6, 6))
    weight = RNG.standard_normal((4, 2, 3, 3))
    weights = RNG.standard_normal((3, 4, 2, 3, 3))
    bias = RNG.standard_normal(4)

    def run(lib):
        F = lib.nn.functional
        x, w, ws, b = (_t(lib, a) for a in (images, weight, weights, bias))
        return [
            # unbatched logical input (C, H, W): the vmap batch is the conv's batch
            lib.func.vmap(lambda i: F.max_pool2d(F.conv2d(i, w, b, padding=1), 2))(x),
            # logical (1, C, H, W), batched weights: one group per example
            lib.func.vmap(lambda i, k: F.conv2d(i.unsqueeze(0), k, b))(x, ws),
            lib.func.vmap(lambda k: F.conv2d(x, k, stride=2), in_dims=0)(ws),
            lib.func.vmap(lambda i: F.avg_pool2d(i.unsqueeze(0), 2))(x),
        ]

    FALLBACK_COUNTS.clear()
    ours = run(chainrule)
    assert FALLBACK_COUNTS == {}
    _compare(ours, run(torch))


def test_in_dims_out_dims_and_nesting() -> None:
    def run(lib):
        x, y, v = _t(lib, X), _t(lib, Y), _t(lib, V)
        vmap = lib.func.vmap
        return [
            vmap(lambda a: a.sum(0), in_dims=2, out_dims=0)(x),
            vmap(lambda a: a * 2, in_dims=-1, out_dims=-1)(x),
            vmap(
                lambda a, b: (a + b["k"][0], b["k"][1]),
                in_dims=(0, {"k": (0, None)}),
                out_dims=(1, None),
            )(x, {"k": (y, v)}),
            vmap(lambda a: (a, lib.ones(2)), out_dims=(1, 0))(y),
            vmap(vmap(lambda a, b: a * b))(x, x),
            vmap(vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(0, None))(x, v),
            vmap(lambda a: vmap(lambda b: b.sum() * a.sum())(a))(x),
            vmap(lambda a, s: a * s, in_dims=(0, None))(y, 3.0),
            vmap(lambda a, scale=1.0: a * scale)(y, scale=2.0),
            vmap(lambda a: a.sum(), chunk_size=3)(x),
            vmap(lambda a: (a, a.sum()), chunk_size=1, out_dims=(1, 0))(y),
        ]

    _compare(run(chainrule), run(torch))


def test_fallback_runs_ops_without_rules() -> None:
    def run(lib):
        return lib.func.vmap(lambda a: lib.linalg.det(a.view(3, 1) @ a.view(1, 3) + 1))(
            _t(lib, RNG.standard_normal((4, 3)))
        )

    FALLBACK_COUNTS.clear()
    ours = run(chainrule)
    assert FALLBACK_COUNTS.get("det", 0) == 1 or FALLBACK_COUNTS  # it did fall back
    assert_close(ours, run(torch), rtol=1e-8, atol=1e-10)


def test_inplace_ops() -> None:
    def run(lib):
        def f(a, b):
            c = a.clone()
            c.mul_(2).add_(b)
            c[0] = 7.0
            c[1:3] = b[1:3]
            return c

        return lib.func.vmap(f, in_dims=(0, None))(_t(lib, Y), _t(lib, V))

    _compare(run(chainrule), run(torch))


def test_per_sample_gradients_match_torch_func() -> None:
    w = RNG.standard_normal((3, 5))
    b = RNG.standard_normal(3)
    data = RNG.standard_normal((6, 5))
    targets = np.array([0, 2, 1, 1, 0, 2])

    def run(lib):
        F = lib.nn.functional
        params = {"w": _t(lib, w), "b": _t(lib, b)}

        def loss(p, x, t):
            logits = F.linear(x.unsqueeze(0), p["w"], p["b"]).tanh()
            return F.cross_entropy(logits, t.unsqueeze(0))

        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, _t(lib, data), _t(lib, targets)
        )
        gv = lib.func.vmap(lib.func.grad_and_value(loss), in_dims=(None, 0, 0))(
            params, _t(lib, data), _t(lib, targets)
        )
        jac = lib.func.vmap(lib.func.jacrev(lambda x: (x * params["w"]).sum(-1).sin()))(
            _t(lib, data)
        )
        vj = lib.func.vmap(lambda x: lib.func.vjp(lambda y: y.exp() * 2, x)[1](x)[0])(_t(lib, data))
        return g, gv, jac, vj

    _compare(run(chainrule), run(torch))


def test_grad_of_vmap_and_hessian_inside_vmap() -> None:
    def run(lib):
        x = _t(lib, Y)

        def total(a):
            return lib.func.vmap(lambda r: (r.sin() * r).sum())(a).sum()

        return [
            lib.func.grad(total)(x),
            lib.func.vmap(lib.func.hessian(lambda r: (r**3).sum()))(x),
            lib.func.vmap(lib.func.grad(lib.func.grad(lambda s: s.sin())))(x[:, 0]),
        ]

    _compare(run(chainrule), run(torch))


def test_randomness() -> None:
    x = chainrule.ones(4, 3)
    same = chainrule.func.vmap(lambda a: chainrule.nn.functional.dropout(a), randomness="same")(x)
    assert all((same[0] == row).all() for row in same)
    chainrule.manual_seed(1)
    different = chainrule.func.vmap(lambda a: a.bernoulli(), randomness="different")(
        chainrule.full((64, 8), 0.5)
    )
    assert not all((different[0] == row).all() for row in different)
    # no random op: no error in "error" mode, and the generator works afterwards
    chainrule.func.vmap(lambda a: a * 2)(x)
    chainrule.rand(2)


def _error(fn, lib):
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
        fn(lib)
    return type(info.value).__name__, normalise_output(str(info.value))


def f(a):  # (named: its name appears in the messages)
    return a


ERRORS = {
    "in_dims_none": lambda lib, x: lib.func.vmap(f, in_dims=None)(x),
    "in_dims_type": lambda lib, x: lib.func.vmap(f, in_dims="a")(x),
    "size_mismatch": lambda lib, x: lib.func.vmap(lambda a, b: a + b)(x, lib.ones(2, 5)),
    "in_dims_length": lambda lib, x: lib.func.vmap(lambda a, b: a, in_dims=(0,))(x, x),
    "in_dim_range": lambda lib, x: lib.func.vmap(f, in_dims=3)(x),
    "in_dim_scalar": lambda lib, x: lib.func.vmap(f)(lib.tensor(1.0)),
    "in_dim_non_tensor": lambda lib, x: lib.func.vmap(lambda a, b: a, in_dims=(0, 0))(x, 3.0),
    "out_dims_range": lambda lib, x: lib.func.vmap(f, out_dims=4)(x),
    "out_not_tensor": lambda lib, x: lib.func.vmap(lambda a: 3)(x),
    "out_none_batched": lambda lib, x: lib.func.vmap(f, out_dims=None)(x),
    "out_dims_length": lambda lib, x: lib.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
    "out_dims_type": lambda lib, x: lib.func.vmap(f, out_dims="a")(x),
    "unbatched_out_dim": lambda lib, x: lib.func.vmap(lambda a: lib.ones(2), out_dims=1)(x),
    "item": lambda lib, x: lib.func.vmap(lambda a: a.sum().item())(x),
    "control_flow": lambda lib, x: lib.func.vmap(lambda a: a if a.sum() > 0 else -a)(x),
    "randomness_value": lambda lib, x: lib.func.vmap(f, randomness="x")(x),
    "random_op": lambda lib, x: lib.func.vmap(lambda a: a + lib.rand(5))(x),
    "random_dropout": lambda lib, x: lib.func.vmap(lib.nn.functional.dropout)(x),
    "chunk_size": lambda lib, x: lib.func.vmap(f, chunk_size=0)(x),
    "no_inputs": lambda lib, x: lib.func.vmap(lambda: lib.ones(2))(),
    "inplace_unbatched_self": lambda lib, x: lib.func.vmap(lambda a: lib.zeros(3, 5).add_(a))(x),
    "dim_out_of_range": lambda lib, x: lib.func.vmap(lambda a: a.sum(2))(x),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case: str) -> None:
    def call(lib):
        return ERRORS[case](lib, _t(lib, X))

    ours = _error(call, chainrule)
    theirs = _error(call, torch)
    if case == "inplace_unbatched_self":
        assert ours[0] == theirs[0]  # (PyTorch's wording comes from its broadcast check)
        return
    assert ours == theirs
    chainrule.rand(1)  # the generator is back after an error inside vmap


def test_forward_mode_inside_vmap() -> None:
    def run(lib):
        x = _t(lib, Y)
        w = _t(lib, V)
        return [
            lib.func.vmap(lambda a: lib.func.jvp(lib.sin, (a,), (lib.ones_like(a),)))(x),
            lib.func.vmap(lib.func.jacfwd(lambda a: a.sin() * a.sum()))(x),
            lib.func.vmap(lambda a: lib.func.jvp(lambda b: b * w.exp(), (w,), (a,))[1])(x),
        ]

    _compare(run(chainrule), run(torch))


def test_utilities() -> None:
    def run(lib):
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2))
        same = lib.func.replace_all_batch_norm_modules_(model) is model
        norm = model[0]
        state = (norm.running_mean, norm.running_var, norm.num_batches_tracked)
        shapes = lib.func.vmap(lambda a: lib.func.debug_unwrap(a) * 1)(_t(lib, Y)).shape

        def mutate(x):
            x.add_(1)
            return x * 2

        x = _t(lib, V)
        out = lib.func.functionalize(mutate)(x)
        return same, state, norm.track_running_stats, tuple(shapes), out, x

    ours, theirs = run(chainrule), run(torch)
    assert ours[:4] == theirs[:4]
    _compare(list(ours[4:]), list(theirs[4:]))
    with pytest.raises(RuntimeError) as info:
        chainrule.func.functionalize(f, remove="x")
    with pytest.raises(RuntimeError) as theirs_info:
        torch.func.functionalize(f, remove="x")
    assert str(info.value) == str(theirs_info.value)
    plain = chainrule.ones(2)
    assert chainrule.func.debug_unwrap(plain) is plain


def test_modules_under_vmap() -> None:
    """nn modules called on one example (1-d, 3-d inputs) inside vmap, with and without grad."""
    seq_np = RNG.standard_normal((4, 2, 3, 5)).astype(np.float32)

    def run(lib, source=None):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        if source is not None:
            with lib.no_grad():
                for p, q in zip(model.parameters(), source.parameters(), strict=True):
                    p.copy_(lib.tensor(q.detach().numpy()))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = lib.tensor(seq_np)

        def loss(p, example):
            return lib.func.functional_call(model, p, (example,)).square().mean()

        return model, [
            lib.func.vmap(model)(x[:, 0, 0]),  # 1-d inputs
            lib.func.vmap(model)(x),  # 3-d inputs
            lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, x[:, 0, 0]),
            lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, x),
        ]

    theirs_model, theirs = run(torch)
    FALLBACK_COUNTS.clear()
    _, ours = run(chainrule, theirs_model)
    assert FALLBACK_COUNTS == {}, FALLBACK_COUNTS
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if isinstance(b, dict):
            for key in b:
                assert_close(a[key], b[key], rtol=1e-5, atol=1e-6, what=f"{k}{key}")
        else:
            assert_close(a, b, rtol=1e-5, atol=1e-6, what=str(k))


def test_jacrev_and_hessian_run_one_vectorized_backward_pass(monkeypatch) -> None:
    """jacrev pushes the identity's rows through the graph as one batch of cotangents (vmap
    over the backward formulas), as PyTorch's does; hessian (jacfwd of jacrev) runs that pass
    once, under the vmap of jacfwd's tangents; values as torch.func's."""
    import chainrule.func._forward as forward
    import chainrule.func._transforms as transforms

    calls = []
    original = transforms._vectorized_rows

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(transforms, "_vectorized_rows", counting)
    w = RNG.standard_normal((6, 5))

    def f(lib):
        weight = _t(lib, w)
        return lambda x: (lib.tanh(weight @ x).exp() * x[:1], x.sum())

    def g(lib):
        return lambda x: (lib.nn.functional.softmax(x, 0) * x.sigmoid()).sum()

    FALLBACK_COUNTS.clear()
    forward.VECTORIZED_FALLBACKS.clear()
    ours = [
        chainrule.func.jacrev(f(chainrule))(_t(chainrule, V)),
        chainrule.func.hessian(g(chainrule))(_t(chainrule, V)),
    ]
    assert len(calls) == 2 and FALLBACK_COUNTS == {}, (calls, FALLBACK_COUNTS)
    assert not forward.VECTORIZED_FALLBACKS
    theirs = [torch.func.jacrev(f(torch))(_t(torch, V)), torch.func.hessian(g(torch))(_t(torch, V))]
    _compare(ours, theirs)


def test_layer_norm_embedding_einsum_rules() -> None:
    table = RNG.standard_normal((7, 5))
    tables = RNG.standard_normal((4, 7, 5))
    indices = np.array([[1, 2, 6], [0, 0, 3], [5, 4, 1], [2, 2, 2]])

    def run(lib):
        F = lib.nn.functional
        x, v = _t(lib, X), _t(lib, V)
        idx, w, ws = _t(lib, indices), _t(lib, table), _t(lib, tables)
        vmap = lib.func.vmap
        return [
            vmap(lambda a: F.layer_norm(a, (5,), v, v.cos()))(x),
            vmap(lambda a, g: F.layer_norm(a, (3, 5), None, g))(x, x),
            vmap(lambda i: F.embedding(i, w))(idx),
            vmap(lambda i, t: F.embedding(i, t))(idx, ws),
            vmap(lambda a, b: lib.einsum("ij,kj->ik", a, b))(x, x),
            vmap(lambda a: lib.einsum("ij,j", a, v))(x),
            vmap(lambda a: lib.einsum("...j,j->...", a, v), in_dims=1)(x),
            vmap(lambda p: lib.func.grad(lambda q: F.embedding(_t(lib, indices[0]), q).sum())(p))(
                ws
            ),
        ]

    FALLBACK_COUNTS.clear()
    ours = run(chainrule)
    assert FALLBACK_COUNTS == {}, FALLBACK_COUNTS
    _compare(ours, run(torch))


def test_zero_dim_batched_operand_promotion_and_implicit_dims() -> None:
    """A batched 0-d operand is dimensioned once batched; the result's dtype is still the
    logical one, as torch.func gives it. Legacy implicit softmax dims come from the logical
    rank; a full reduction with keepdim keeps every logical dim."""

    def run(lib):
        a = _t(lib, [1.1, 2.2, 3.3, 4.4])
        y = lib.ones(3, dtype=lib.float32) / 3
        x = _t(lib, X)
        return [
            lib.func.vmap(lambda s: s * y)(a),
            lib.func.vmap(lambda s: y + s)(a),
            lib.func.vmap(lambda s: lib.where(y > 0, s, y))(a),
            lib.func.vmap(lambda s: s > y)(a),
            lib.func.vmap(lambda t: lib.nn.functional.softmax(t, dim=None))(x),
            lib.func.vmap(lambda t: lib.nn.functional.log_softmax(t[0], dim=None))(x),
            lib.func.vmap(lambda t: t.sum(dim=None, keepdim=True))(x),
        ]

    ours, theirs = run(chainrule), run(torch)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], k
        assert tuple(o.shape) == tuple(t.shape), k
        assert_close(o, t, rtol=1e-6, atol=1e-6, what=str(k))
