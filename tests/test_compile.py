"""chainrule.compile: torch.compile's signature, values and gradients equal to eager and
PyTorch, guards on shapes, dtypes, requires_grad and grad mode, graph breaks (eager
fallback) at data-dependent control flow, fullgraph, the generated code."""

import inspect

import numpy as np
import pytest
import torch

import chainrule
import chainrule.fx as cfx


@pytest.fixture(autouse=True)
def _keep_pytorchs_distribution_validation():
    """Calling ``torch.compile`` turns PyTorch's distribution argument validation off for the
    whole process (a side effect of its dynamo set-up): restore it for the tests that follow."""
    validate = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(validate)


def test_signature_matches_torch_compile():
    ours = inspect.signature(chainrule.compile).parameters
    theirs = inspect.signature(torch.compile).parameters
    assert list(ours) == list(theirs)
    for name in theirs:
        assert ours[name].kind == theirs[name].kind
        assert ours[name].default == theirs[name].default or name == "backend"


def test_not_callable_and_disable_as_torch():
    with pytest.raises(AssertionError) as t_err:
        torch.compile(3)
    with pytest.raises(AssertionError) as c_err:
        chainrule.compile(3)
    assert str(c_err.value) == str(t_err.value)

    def f(x):
        return x

    assert chainrule.compile(f, disable=True) is f
    assert torch.compile(f, disable=True) is f


def _seed(lib):
    def f(x, y):
        a = x * y
        b = a + x
        return (b * b).sum()

    return f


def test_seed_example_values_gradients_code():
    cf = chainrule.compile(_seed(chainrule))
    x = chainrule.tensor(2.0, requires_grad=True)
    y = chainrule.tensor(3.0, requires_grad=True)
    tx = torch.tensor(2.0, requires_grad=True)
    ty = torch.tensor(3.0, requires_grad=True)
    out, tout = cf(x, y), _seed(torch)(tx, ty)
    out.backward()
    tout.backward()
    assert out.item() == tout.item() and out.dtype == chainrule.float32
    assert x.grad.item() == tx.grad.item() and y.grad.item() == ty.grad.item()
    assert "mul = x * y" in cf.code and "grad_x = " in cf.code
    assert "mul = x * y" in cf.fx_code and "return sum_1" in cf.fx_code


def test_guards_recompile_on_shape_dtype_requires_grad_and_grad_mode():
    cf = chainrule.compile(lambda x: torch_free(x))
    x = chainrule.ones(2, 3)
    cf(x)
    cf(chainrule.zeros(2, 3))
    assert cf.compile_count == 1
    cf(chainrule.ones(4, 3))
    assert cf.compile_count == 2
    cf(chainrule.ones(4, 3, dtype=chainrule.float64))
    assert cf.compile_count == 3
    cf(chainrule.ones(4, 3, dtype=chainrule.float64, requires_grad=True))
    assert cf.compile_count == 4
    with chainrule.no_grad():
        cf(chainrule.ones(4, 3, dtype=chainrule.float64, requires_grad=True))
    assert cf.compile_count == 5
    cf(chainrule.ones(2, 3))
    assert cf.compile_count == 5


def torch_free(x):
    return (x + 1).exp().mean(dim=0)


def test_recompile_limit_falls_back_to_eager():
    cf = chainrule.compile(torch_free, recompile_limit=1)
    cf(chainrule.ones(2))
    r = cf(chainrule.ones(3))
    assert cf.compile_count == 1
    np.testing.assert_array_equal(r.numpy(), torch_free(chainrule.ones(3)).numpy())


def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return -x


def test_graph_break_runs_eagerly_and_fullgraph_raises():
    cf = chainrule.compile(_branchy)
    for v in (1.0, -1.0):
        x = chainrule.full((3,), v, requires_grad=True)
        tx = torch.full((3,), v, requires_grad=True)
        out, tout = cf(x), _branchy(tx)
        out.sum().backward()
        tout.sum().backward()
        np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert cf.graph_breaks == 1 and cf.code == ""
    with pytest.raises(cfx.TraceError, match="control flow"):
        chainrule.compile(_branchy, fullgraph=True)(chainrule.ones(2))


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def test_compiled_module_training_step_matches_eager_and_torch():
    tm, cm, em = _mlp(torch), _mlp(chainrule), _mlp(chainrule)
    for m in (cm, em):
        for p, tp in zip(m.parameters(), tm.parameters(), strict=True):
            p.data = chainrule.tensor(tp.detach().numpy().copy())
    compiled = chainrule.compile(cm)
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
    opts = [
        lib.optim.SGD(m.parameters(), lr=0.1)
        for lib, m in ((torch, tm), (chainrule, cm), (chainrule, em))
    ]
    for _ in range(3):
        losses = []
        for (lib, fn), opt in zip(
            ((torch, tm), (chainrule, compiled), (chainrule, em)), opts, strict=True
        ):
            opt.zero_grad()
            loss = (fn(lib.tensor(x)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[1] == losses[2]
        assert abs(losses[1] - losses[0]) < 1e-6
    for p, e, tp in zip(cm.parameters(), em.parameters(), tm.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), e.detach().numpy())
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), atol=1e-6)
    assert compiled.compile_count == 1
    assert 'getattr(self, "0")(input_1)' in compiled.fx_code
    assert "kernels.addmm(" in compiled.code


_OPS = ["sin", "exp", "tanh", "sigmoid", "relu", "neg", "abs"]


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_compiled_vs_eager_vs_torch(seed):
    rng = np.random.default_rng(seed)
    steps = [(str(rng.choice(_OPS)), int(rng.integers(0, 3))) for _ in range(rng.integers(2, 6))]

    def program(lib):
        def prog(x, y):
            vals = [x, y]
            for op, mode in steps:
                v = getattr(lib, op)(vals[-1])
                vals.append(v + vals[-2] if mode == 0 else v * vals[0] if mode == 1 else v)
            return vals[-1].sum() + (x * y).sum()

        return prog

    xs = rng.standard_normal((2, 3))
    ys = rng.standard_normal((2, 3))
    results = []
    for lib, wrap in (
        (torch, lambda f: f),
        (chainrule, chainrule.compile),
        (chainrule, lambda f: f),
    ):
        x = lib.tensor(xs, requires_grad=True)
        y = lib.tensor(ys, requires_grad=True)
        out = wrap(program(lib))(x, y)
        out.backward()
        results.append((out.item(), x.grad.numpy(), y.grad.numpy()))
    t, c, e = results
    assert c[0] == e[0]
    # (gradients: the joint graph adds a value's contributions in forward order, the eager
    # engine in the order they arrive; the sums may differ in the last bit)
    np.testing.assert_allclose(c[1], e[1], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(c[2], e[2], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(c[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(c[1], t[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c[2], t[2], rtol=1e-12, atol=1e-15)
