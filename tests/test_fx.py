"""chainrule.fx.symbolic_trace against torch.fx: node tables, generated code, values,
gradients through the traced module, and the control-flow error."""

import random

import numpy as np
import pytest
import torch
import torch.fx as tfx

import chainrule
import chainrule.fx as cfx


def _table(gm, lib):
    rows = []
    for n in gm.graph.nodes:
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "?")
        rows.append((n.op, n.name, target, str(n.args), str(n.kwargs)))
    return rows


def _module_pair():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(4, 3)
                self.w = lib.nn.Parameter(lib.ones(3))

            def forward(self, x, y):
                a = self.lin(x) + self.w
                b = lib.relu(a) * 2
                c = b.sum(dim=1) + y.mean()
                return c.clamp(min=0.5), x.shape

        return M()

    tm, cm = build(torch), build(chainrule)
    with torch.no_grad():
        tm.lin.weight.copy_(torch.linspace(-1, 1, 12).reshape(3, 4))
        tm.lin.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
    cm.lin.weight.data = chainrule.tensor(tm.lin.weight.detach().numpy().copy())
    cm.lin.bias.data = chainrule.tensor(tm.lin.bias.detach().numpy().copy())
    return tm, cm


def test_module_trace_matches_torch_fx_nodes_and_code():
    tm, cm = _module_pair()
    tg, cg = tfx.symbolic_trace(tm), cfx.symbolic_trace(cm)
    assert _table(cg, chainrule) == _table(tg, torch)
    assert cg.code == tg.code
    assert str(cg).endswith(str(tg).split("\n", 1)[1].split("\n", 1)[1])


def test_module_trace_values_and_gradients_equal_eager_and_torch():
    tm, cm = _module_pair()
    x = np.linspace(-2, 2, 8).reshape(2, 4)
    y = np.array([0.5, -1.5])
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    cx, cy = chainrule.tensor(x, requires_grad=True), chainrule.tensor(y, requires_grad=True)
    tout, tshape = tfx.symbolic_trace(tm.double())(tx, ty)
    cm = cm.double()
    cout, cshape = cfx.symbolic_trace(cm)(cx, cy)
    eager, _ = cm(cx.detach(), cy.detach())
    assert tuple(cshape) == tuple(tshape)
    np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(cout.detach().numpy(), eager.detach().numpy(), rtol=0)
    tout.sum().backward()
    cout.sum().backward()
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(cy.grad.numpy(), ty.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(cm.lin.weight.grad.numpy(), tm.lin.weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(cm.w.grad.numpy(), tm.w.grad.numpy(), rtol=1e-12)


def _function(lib):
    def g(x):
        return (x + 1) ** 2 - x @ x.t() + 3 - x[0] + (-x)[:, 1:].sum() / 2

    return g


def test_function_trace_matches_torch_fx():
    tg, cg = tfx.symbolic_trace(_function(torch)), cfx.symbolic_trace(_function(chainrule))
    assert _table(cg, chainrule) == _table(tg, torch)
    assert cg.code == tg.code
    assert str(cg) == str(tg)
    x = np.arange(9.0).reshape(3, 3) / 7
    np.testing.assert_allclose(
        cg(chainrule.tensor(x)).numpy(), tg(torch.tensor(x)).numpy(), rtol=1e-12
    )


def test_control_flow_raises_trace_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(tfx.proxy.TraceError) as t_err:
        tfx.symbolic_trace(f)
    with pytest.raises(cfx.TraceError) as c_err:
        cfx.symbolic_trace(f)
    assert str(c_err.value) == str(t_err.value)
    assert issubclass(cfx.TraceError, ValueError) == issubclass(tfx.proxy.TraceError, ValueError)


def test_tensor_constant_becomes_get_attr():
    tc, cc = torch.tensor([1.0, 2.0]), chainrule.tensor([1.0, 2.0])
    tg = tfx.symbolic_trace(lambda x: torch.add(x, tc))
    cg = cfx.symbolic_trace(lambda x: chainrule.add(x, cc))
    assert [(n.op, n.name) for n in cg.graph.nodes] == [(n.op, n.name) for n in tg.graph.nodes]
    assert cg.code == tg.code
    np.testing.assert_array_equal(cg(chainrule.ones(2)).numpy(), tg(torch.ones(2)).numpy())


def test_print_tabular_layout(capsys):
    cg = cfx.symbolic_trace(_function(chainrule))
    cg.graph.print_tabular()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert set(out[1]) <= {"-", " "}
    assert out[2].split()[:3] == ["placeholder", "x", "x"]
    assert out[-1].split()[:2] == ["output", "output"]
    assert len(out) == len(cg.graph.nodes) + 2


_BIN = ["+", "-", "*"]
_UN = ["torch.relu", "torch.tanh", "torch.sigmoid", "torch.exp", ".sin()", ".abs()", "-"]


def _random_program(seed):
    rng = random.Random(seed)
    lines, names = [], ["x", "y"]
    for i in range(rng.randint(2, 7)):
        a, b = rng.choice(names), rng.choice(names)
        if rng.random() < 0.5:
            expr = f"{a} {rng.choice(_BIN)} {b}"
        else:
            u = rng.choice(_UN)
            expr = f"{a}{u}" if u.startswith(".") else (f"-{a}" if u == "-" else f"{u}({a})")
        if rng.random() < 0.3:
            expr = f"({expr}) * {rng.choice([0.5, 2, -3])}"
        lines.append(f"    v{i} = {expr}")
        names.append(f"v{i}")
    src = "def prog(x, y):\n" + "\n".join(lines) + f"\n    return {names[-1]}\n"
    return src


def _grad(t):
    return None if t.grad is None else t.grad.numpy()


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_match_torch_fx_and_eager(seed):
    src = _random_program(seed)
    results = {}
    for lib in (torch, chainrule):
        ns = {"torch": lib}
        exec(src, ns)
        fx = tfx if lib is torch else cfx
        gm = fx.symbolic_trace(ns["prog"])
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        y = lib.tensor(np.linspace(0.5, -2, 6).reshape(2, 3), requires_grad=True)
        out = gm(x, y)
        eager = ns["prog"](x.detach(), y.detach()).detach()
        (out * out).sum().backward()
        results[lib.__name__] = (
            gm.code,
            _table(gm, lib),
            out.detach().numpy(),
            eager.numpy(),
            _grad(x),
            _grad(y),
        )
    t, c = results["torch"], results["chainrule"]
    assert c[0] == t[0]
    assert c[1] == t[1]
    np.testing.assert_array_equal(c[2], c[3])
    for i in (2, 4, 5):
        assert (c[i] is None) == (t[i] is None)
        if c[i] is not None:
            np.testing.assert_allclose(c[i], t[i], rtol=1e-12, atol=1e-15)


def test_nested_sequential_matches_torch_fx():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2)))

    tg, cg = tfx.symbolic_trace(build(torch)), cfx.symbolic_trace(build(chainrule))
    assert cg.code == tg.code
    assert _table(cg, chainrule) == _table(tg, torch)


def test_eliminate_dead_code_as_torch_fx():
    def f(x):
        unused = x.exp() * 2  # noqa: F841
        return x + 1

    tg, cg = tfx.symbolic_trace(f), cfx.symbolic_trace(f)
    assert cg.code == tg.code
    assert cg.graph.eliminate_dead_code() == tg.graph.eliminate_dead_code() is True
    tg.recompile()
    cg.recompile()
    assert cg.code == tg.code
    assert _table(cg, chainrule) == _table(tg, torch)
    assert cg.graph.eliminate_dead_code() == tg.graph.eliminate_dead_code() is False
