"""``func.jvp``, ``func.linearize`` and ``func.jacfwd`` against ``torch.func``: values, pytree
structure, argnums, has_aux, randomness and errors; ``jacfwd == jacrev ==`` finite differences;
forward-over-reverse refused rather than silently wrong."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(7)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))


def _t(lib, array):
    return lib.tensor(np.array(array, dtype=np.float64))


FUNCTIONS = {
    "sin": lambda lib: lambda x: x.sin(),
    "poly": lambda lib: lambda x: (x**3).sum() * x,
    "matmul": lambda lib: lambda x: _t(lib, B) @ x.tanh(),
    "softmax": lambda lib: lambda x: lib.nn.functional.softmax(x * 2, 0),
    "log_softmax_sum": lambda lib: lambda x: lib.nn.functional.log_softmax(x, 0).sum(),
    "norm": lambda lib: lambda x: x.norm() * x.exp(),
    "index": lambda lib: lambda x: x[[2, 0]] * x[1],
    "cumsum": lambda lib: lambda x: x.cumsum(0).sigmoid(),
}


def _compare(ours, theirs, what=""):
    if isinstance(theirs, tuple | list):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), what
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _compare(a, b, f"{what}[{k}]")
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), what
        for key in theirs:
            _compare(ours[key], theirs[key], f"{what}[{key}]")
    else:
        assert isinstance(ours, chainrule.Tensor), what
        assert ours.dtype.__repr__().split(".")[-1] == repr(theirs.dtype).split(".")[-1], what
        assert_close(ours, theirs, rtol=1e-10, atol=1e-12, what=what)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_jvp_values(name: str) -> None:
    def run(lib):
        return lib.func.jvp(FUNCTIONS[name](lib), (_t(lib, A),), (_t(lib, A[::-1].copy()),))

    _compare(run(chainrule), run(torch), name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_jacfwd_equals_jacrev_and_finite_differences(name: str) -> None:
    f = FUNCTIONS[name](chainrule)
    x = _t(chainrule, A)
    forward = chainrule.func.jacfwd(f)(x)
    reverse = chainrule.func.jacrev(f)(x)
    assert_close(forward, reverse, rtol=1e-10, atol=1e-12)
    theirs = torch.func.jacfwd(FUNCTIONS[name](torch))(_t(torch, A))
    assert_close(forward, theirs, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    columns = []
    for j in range(3):
        step = np.zeros(3)
        step[j] = eps
        up = f(_t(chainrule, A + step)).numpy()
        down = f(_t(chainrule, A - step)).numpy()
        columns.append((up - down) / (2 * eps))
    numeric = np.stack(columns, -1)
    np.testing.assert_allclose(forward.numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_pytrees_argnums_and_aux() -> None:
    def run(lib):
        x, y = _t(lib, A), _t(lib, B)

        def f(a, b):
            return {"p": a * b, "s": (a.sum(), b.exp())}

        def g(a, b):
            return (a * b).sum(0), {"aux": a + 1}

        out = [
            lib.func.jvp(f, (x, y), (x * 2, y * 3)),
            lib.func.jvp(g, (x, y), (x, y), has_aux=True),
            lib.func.jvp(lambda t: t[0] * t[1]["k"], ((x, {"k": x}),), ((x, {"k": x * 0}),)),
            lib.func.jvp(lambda a: y, (x,), (x,)),
            lib.func.jacfwd(f, argnums=(0, 1))(x, y),
            # (PyTorch 2.13's jacfwd gives zeros for a negative argnums: compared with argnums=1)
            lib.func.jacfwd(f, argnums=-1 if lib is chainrule else 1)(x, y),
            lib.func.jacfwd(g, argnums=1, has_aux=True)(x, y),
            lib.func.jacfwd(lambda a: a.long())(x),
            lib.func.jacfwd(lambda d: d["a"] * d["b"])({"a": x, "b": x + 1}),
        ]
        value, fn = lib.func.linearize(lambda a, b: (a * b).sum(), x, y)
        out += [value, fn(x, y), fn(x * 0, y)]
        return out

    _compare(run(chainrule), run(torch))


def test_gradients_through_jvp_outputs() -> None:
    def run(lib):
        x = _t(lib, A).requires_grad_()
        out, tangent = lib.func.jvp(lambda a: a.sin() * a, (x,), (lib.ones_like(x),))
        assert out.requires_grad and tangent.requires_grad
        return lib.autograd.grad((out.sum() + tangent.pow(2).sum()), x)

    _compare(run(chainrule), run(torch))


def test_jacrev_of_jacfwd_is_the_hessian() -> None:
    def f(lib):
        return lambda x: (x.sin() * x.exp()).sum() + (x**3).prod()

    ours = chainrule.func.jacrev(chainrule.func.jacfwd(f(chainrule)))(_t(chainrule, A))
    theirs = torch.func.hessian(f(torch))(_t(torch, A))
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)
    assert_close(
        chainrule.func.hessian(f(chainrule))(_t(chainrule, A)), theirs, rtol=1e-10, atol=1e-12
    )


def test_nested_and_forward_over_reverse_transforms() -> None:
    """jacfwd(jacrev(f)), jacfwd(jacfwd(f)) and a jvp of a jvp: PyTorch's values (chainrule
    computes them by reverse mode twice where its forward mode cannot nest)."""

    def run(lib):
        x = _t(lib, A)
        v = _t(lib, A[::-1].copy())

        def f(a):
            return (a.sin() * a.exp()).sum() + lib.nn.functional.softmax(a, 0) @ a

        jf, jr = lib.func.jacfwd, lib.func.jacrev
        return [
            jf(jr(f))(x),
            jf(jf(f))(x),
            jr(jf(f))(x),
            jf(jr(lambda a: a.tanh() * a.sum()))(x),
            lib.func.jvp(lambda a: lib.func.jvp(lib.sin, (a,), (v,))[1], (x,), (v,)),
            lib.func.jvp(lib.func.grad(f), (x,), (v,)),
        ]

    _compare(run(chainrule), run(torch))


def test_randomness() -> None:
    x = _t(chainrule, A)
    chainrule.manual_seed(0)
    same = chainrule.func.jacfwd(lambda a: a * chainrule.rand(3), randomness="same")(x)
    # "same": every column saw the same random vector r, so the Jacobian is diag(r) and the
    # generator's next draw is r again after a reseed
    # (drawn in the default dtype, as in the function: float32 and float64 draws differ, as
    # PyTorch's generator's do)
    chainrule.manual_seed(0)
    r = chainrule.rand(3)
    assert_close(same, chainrule.diag(r.to(same.dtype)), rtol=1e-6, atol=1e-7)
    different = chainrule.func.jacfwd(lambda a: a * chainrule.rand(3), randomness="different")
    assert different(x).shape == (3, 3)
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            lib.func.jacfwd(lambda a, lib=lib: a * lib.rand(3))(_t(lib, A))
    # the generator works again afterwards
    chainrule.rand(2)


def _error(fn, lib):
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
        fn(lib)
    return type(info.value).__name__, normalise_output(str(info.value))


ERRORS = {
    "primals_not_tuple": lambda lib, x: lib.func.jvp(lib.sin, x, (x,)),
    "tangents_not_tuple": lambda lib, x: lib.func.jvp(lib.sin, (x,), x),
    "length_mismatch": lambda lib, x: lib.func.jvp(lib.sin, (x,), (x, x)),
    "nested_mismatch": lambda lib, x: lib.func.jvp(lambda a: a[0], (([x, x], x),), (([x], x),)),
    "dict_mismatch": lambda lib, x: lib.func.jvp(lambda a: a, ({"a": x},), ({"b": x},)),
    "empty": lambda lib, x: lib.func.jvp(lib.sin, (), ()),
    "shape": lambda lib, x: lib.func.jvp(lib.sin, (x,), (lib.ones(2, dtype=x.dtype),)),
    "non_tensor": lambda lib, x: lib.func.jvp(lambda a: a, (1.0,), (1.0,)),
    "output_not_tensor": lambda lib, x: lib.func.jvp(lambda a: 3, (x,), (x,)),
    "output_none": lambda lib, x: lib.func.jvp(lambda a: None, (x,), (x,)),
    "aux_not_pair": lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x,), has_aux=True),
    "aux_not_tensor": lambda lib, x: lib.func.jvp(lambda a: (a, 3), (x,), (x,), has_aux=True),
    "integer_primal": lambda lib, x: lib.func.jvp(lambda a: a, (x.long(),), (x.long(),)),
    "jacfwd_complex": lambda lib, x: lib.func.jacfwd(lib.sin)(x.to(lib.complex128)),
    "jacfwd_argnum": lambda lib, x: lib.func.jacfwd(lib.sin, argnums=2)(x),
    "jacfwd_argnums_type": lambda lib, x: lib.func.jacfwd(lib.sin, argnums=1.0)(x),
    "jacfwd_aux": lambda lib, x: lib.func.jacfwd(lib.sin, has_aux=True)(x),
    "jacfwd_randomness": lambda lib, x: lib.func.jacfwd(lib.sin, randomness="x")(x),
    "linearize_shape": lambda lib, x: lib.func.linearize(lib.sin, x)[1](lib.ones(2)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case: str) -> None:
    def call(lib):
        return ERRORS[case](lib, _t(lib, A))

    assert _error(call, chainrule) == _error(call, torch)
