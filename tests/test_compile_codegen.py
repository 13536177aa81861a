"""chainrule.compile runs generated NumPy code: the forward and the backward of the joint
graph, joined to eager autograd by one ``CompiledFunctionBackward`` node. Values, gradients,
dtypes and errors against eager chainrule and PyTorch; what falls back to eager and why."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule
from chainrule.compiler.compiled_graph import DOUBLE_BACKWARD_MESSAGE
from chainrule.compiler.lowering import Unsupported, lower


@pytest.fixture(autouse=True)
def _keep_pytorchs_distribution_validation():
    # (torch.compile turns distribution argument validation off process-wide)
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def seed(w, x):
    a = w + x
    b = w + 1
    return a * b


SEED_CODE = """\
def forward(w, x):
    add = w + x
    add_1 = w + 1
    mul = add * add_1
    return (mul, add_1, add)

def backward(add_1, add, grad_mul):
    grad_add = grad_mul * add_1
    grad_add_1 = grad_mul * add
    grad_w = grad_add + grad_add_1
    return (grad_w, grad_add)
"""


def test_seed_example_code_reads_as_the_chain_rule():
    c = chainrule.compile(seed)
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    y = c(w, x)
    assert c.code == SEED_CODE
    tw = torch.tensor([1.0], requires_grad=True)
    tx = torch.tensor([2.0], requires_grad=True)
    ty = torch.compile(seed, backend="eager")(tw, tx)
    assert repr(y).replace("grad_fn=<CompiledFunctionBackward>", "") == repr(ty).replace(
        "grad_fn=<MulBackward0>", ""
    )
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    y.backward()
    ty.backward()
    assert w.grad.tolist() == tw.grad.tolist() == [5.0]
    assert x.grad.tolist() == tx.grad.tolist() == [2.0]


def test_outputs_share_one_node_and_unused_outputs_get_zero_gradients():
    def f(x, y):
        return x.sin() * y, (x * y).exp(), x.shape[0]

    xs, ys = np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, 2, 3)
    c = chainrule.compile(f)
    for pick in (0, 1, None):
        x = chainrule.tensor(xs, requires_grad=True)
        y = chainrule.tensor(ys, requires_grad=True)
        tx = torch.tensor(xs, requires_grad=True)
        ty = torch.tensor(ys, requires_grad=True)
        a, b, n = c(x, y)
        ta, tb, tn = f(tx, ty)
        assert n == tn == 2
        assert a.grad_fn is b.grad_fn and a.grad_fn.name() == "CompiledFunctionBackward"
        loss = (a.sum() + b.sum()) if pick is None else (a, b)[pick].sum()
        tloss = (ta.sum() + tb.sum()) if pick is None else (ta, tb)[pick].sum()
        loss.backward()
        tloss.backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14)
        np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-14)
    assert c.compile_count == 1


def test_backward_twice_needs_retain_graph_and_accumulates():
    c = chainrule.compile(lambda x: (x * x).sum())
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    out, tout = c(x), (tx * tx).sum()
    out.backward(retain_graph=True)
    out.backward()
    tout.backward(retain_graph=True)
    tout.backward()
    assert x.grad.tolist() == tx.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError) as ours:
        out.backward()
    with pytest.raises(RuntimeError) as theirs:
        tout.backward()
    assert str(ours.value) == str(theirs.value)


def test_double_backward_refused_as_torch_compile_refuses_it():
    def f(x):
        return (x * x).sum()

    x = chainrule.ones(3, requires_grad=True)
    tx = torch.ones(3, requires_grad=True)
    (g,) = chainrule.autograd.grad(chainrule.compile(f)(x), x, create_graph=True)
    (tg,) = torch.autograd.grad(torch.compile(f, backend="aot_eager")(tx), tx, create_graph=True)
    assert g.tolist() == tg.tolist()
    assert g.grad_fn.name() == type(tg.grad_fn).__name__ == "CompiledFunctionBackwardBackward"
    with pytest.raises(RuntimeError) as ours:
        g.sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        tg.sum().backward()
    assert str(ours.value) == str(theirs.value) == DOUBLE_BACKWARD_MESSAGE


def test_without_grad_the_outputs_have_no_node():
    c = chainrule.compile(seed)
    w, x = chainrule.ones(2), chainrule.ones(2, requires_grad=True)
    with chainrule.no_grad():
        y = c(w, x)
    assert y.grad_fn is None and not y.requires_grad
    y = c(w, chainrule.ones(2))
    assert y.grad_fn is None and "def backward" not in c.code
    y = c(w, x)  # only x requires grad: the backward computes its gradient alone
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0] and w.grad is None
    assert c.compile_count == 3


def _inplace(x):
    y = x * 2
    y.add_(1)
    return y.sum()


def _random(x):
    return (x + chainrule.randn_like(x) * 0).sum()


def _item(x):
    return x * (x.sum().item() > 0)


@pytest.mark.parametrize(
    "fn, reason",
    [
        (_inplace, "'add_' writes into a tensor"),
        (_random, "'randn_like' draws random numbers"),
        (_item, "'item' reads a tensor's values into Python"),
        (lambda x: x[x > 0].sum(), "shape depends on the values"),
        (lambda x: x.t(), "an output that is an input or a view of one"),
    ],
)
def test_what_the_ir_cannot_express_runs_eagerly(fn, reason):
    c = chainrule.compile(fn)
    x = chainrule.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    e = chainrule.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    out, ref = c(x), fn(e)
    assert reason in c.fallback_reasons[0]
    assert c.code.startswith("# runs eagerly: ")
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), e.grad.numpy())


@pytest.mark.parametrize(
    "dtypes",
    [("float32", "float64"), ("float16", "float16"), ("int64", "float32"), ("bfloat16", "float32")],
)
def test_mixed_and_half_dtypes_match_eager_and_torch(dtypes):
    def f(x, y):
        return (x * y + 1.5).exp() - y / 3

    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((2, 3)), rng.standard_normal(3)
    if dtypes[0] == "int64":
        xs = np.arange(-3, 3).reshape(2, 3)

    def make(lib, requires):
        x = lib.tensor(xs, dtype=getattr(lib, dtypes[0]))
        y = lib.tensor(ys, dtype=getattr(lib, dtypes[1]))
        if requires and dtypes[0] != "int64":
            x.requires_grad_()
        return x, y.requires_grad_()

    (x, y), (ex, ey), (tx, ty) = make(chainrule, 1), make(chainrule, 1), make(torch, 1)
    out, ref, tout = chainrule.compile(f)(x, y), f(ex, ey), f(tx, ty)
    assert out.dtype == ref.dtype and str(out.dtype) == str(tout.dtype).replace(
        "torch", "chainrule"
    )
    np.testing.assert_array_equal(out.detach().float().numpy(), ref.detach().float().numpy())
    out.sum().backward()
    ref.sum().backward()
    tout.sum().backward()
    for a, b, t in ((x, ex, tx), (y, ey, ty)):
        if b.grad is None:
            assert a.grad is None and t.grad is None
            continue
        assert a.grad.dtype == b.grad.dtype
        np.testing.assert_allclose(
            a.grad.float().numpy(), b.grad.float().numpy(), rtol=1e-6, atol=1e-6
        )
        np.testing.assert_allclose(
            a.grad.float().numpy(), t.grad.float().numpy(), rtol=2e-2, atol=2e-2
        )


def test_module_parameters_are_read_at_each_call_and_guarded():
    lin = chainrule.nn.Linear(3, 2)
    c = chainrule.compile(lin)
    x = chainrule.ones(4, 3)
    c(x).sum().backward()
    assert lin.weight.grad.tolist() == [[4.0] * 3] * 2 and lin.bias.grad.tolist() == [4.0] * 2
    with chainrule.no_grad():
        lin.weight.mul_(0)  # (in place: the next call reads the new values)
    np.testing.assert_array_equal(c(x).detach().numpy(), lin(x).detach().numpy())
    assert c.compile_count == 1
    lin.weight = chainrule.nn.Parameter(chainrule.ones(5, 3))  # a new parameter shape
    lin.bias = chainrule.nn.Parameter(chainrule.zeros(5))
    assert c(x).shape == (4, 5) and c.compile_count == 2
    lin.weight.requires_grad_(False)
    c(x).sum().backward()
    assert c.compile_count == 3 and lin.bias.grad.tolist() == [4.0] * 5


def test_mlp_code_uses_numpy_kernels_only():
    nn = chainrule.nn
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3), nn.Tanh())
    c = chainrule.compile(model)
    x = chainrule.randn(4, 6)
    c(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters(), strict=True):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert "call_" not in c.code  # (no op ran through tensors)
    assert "kernels.addmm(p0_bias, input_1, t)" in c.code
    assert "grad_p0_weight = kernels.t(grad_t)" in c.code


# Random programs (hypothesis): compiled vs eager vs PyTorch.
_UNARY = ["sin", "exp", "tanh", "sigmoid", "relu", "neg", "abs", "cos"]
_BINARY = ["add", "sub", "mul", "div", "maximum"]
_SHAPES = [(2, 3), (3,), (2, 1), ()]


@st.composite
def _programs(draw: Any) -> tuple:
    shapes = [draw(st.sampled_from(_SHAPES)) for _ in range(draw(st.integers(1, 3)))]
    steps = []
    n = len(shapes)
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce"]))
        a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(_UNARY)), a))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(_BINARY)), a, b))
        else:
            steps.append(("reduce", draw(st.sampled_from(["sum", "mean", "amax"])), a))
        n += 1
    return shapes, steps, draw(st.integers(0, 2**16))


def _program(lib: Any, steps: list, n_inputs: int) -> Any:
    def one(a: Any) -> Any:
        return body([a])

    def two(a: Any, b: Any) -> Any:
        return body([a, b])

    def three(a: Any, b: Any, c: Any) -> Any:
        return body([a, b, c])

    def body(inputs: list) -> Any:
        values = list(inputs)
        for step in steps:
            if step[0] == "unary":
                values.append(getattr(lib, step[1])(values[step[2]]))
            elif step[0] == "binary":
                left, right = values[step[2]], values[step[3]]
                if step[1] == "div":
                    right = right * right + 1
                values.append(getattr(lib, step[1])(left, right))
            else:
                values.append(getattr(values[step[2]], step[1])(-1, keepdim=True))
        return values[-1], sum(v.sum() for v in values[len(inputs) :])

    return (one, two, three)[n_inputs - 1]


def _run(lib: Any, program: Any, arrays: list, compile: bool) -> tuple:
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    fn = chainrule.compile(program) if compile else program
    last, total = fn(*inputs)
    if compile:
        assert not fn.fallback_reasons and total.grad_fn.name() == "CompiledFunctionBackward"
    (last.sum() * 0.5 + total).backward()
    grads = [
        np.zeros(a.shape) if t.grad is None else t.grad.numpy()
        for t, a in zip(inputs, arrays, strict=True)
    ]
    return last.detach().numpy(), total.item(), grads


@settings(max_examples=60, deadline=None)
@given(_programs())
def test_random_programs_compiled_vs_eager_vs_torch(program):
    shapes, steps, seed_ = program
    rng = np.random.default_rng(seed_)
    arrays = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    compiled = _run(chainrule, _program(chainrule, steps, len(shapes)), arrays, True)
    eager = _run(chainrule, _program(chainrule, steps, len(shapes)), arrays, False)
    theirs = _run(torch, _program(torch, steps, len(shapes)), arrays, False)
    np.testing.assert_array_equal(compiled[0], eager[0])
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-14)
    np.testing.assert_allclose(compiled[0], theirs[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(compiled[1], theirs[1], rtol=1e-12, atol=1e-14)
    for c, e, t in zip(compiled[2], eager[2], theirs[2], strict=True):
        np.testing.assert_allclose(c, e, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-13)


def _message(lib: Any, fn: Any, modify: str) -> str:
    x = lib.ones(3, requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    y = fn(x, w)
    with lib.no_grad():
        (w if modify == "input" else y).mul_(2)
    with pytest.raises(RuntimeError) as error:
        y.sum().backward()
    return str(error.value).replace("torch.", "chainrule.")


@pytest.mark.parametrize("modify", ["input", "output"])
def test_a_saved_tensor_changed_in_place_is_refused_as_pytorch_refuses_it(modify):
    def f(x, w):
        return (x * w).exp()

    ours = _message(chainrule, chainrule.compile(f), modify)
    theirs = _message(torch, torch.compile(f, backend="aot_eager"), modify)
    assert ours.split(" Hint:")[0] == theirs.split(" Hint:")[0]


def test_inputs_with_history_and_outputs_used_eagerly_afterwards():
    def f(a, b):
        return a.tanh() * b, a - b

    xs = np.linspace(-1, 1, 4)
    results = []
    for lib, wrap in ((torch, lambda fn: fn), (chainrule, chainrule.compile)):
        x = lib.tensor(xs, requires_grad=True)
        a, b = x * 3, x.exp()  # (inputs with a history: the node's edges lead to it)
        p, q = wrap(f)(a, b)
        p.register_hook(lambda g: g * 2)  # (hooks on the outputs run as in eager mode)
        ((p * q).sum() + q.pow(2).sum()).backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-14)


def test_cross_entropy_computes_its_total_weight_and_checks_targets_at_each_call():
    F = chainrule.nn.functional
    c = chainrule.compile(lambda x, t: F.cross_entropy(x, t))
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((5, 4))
    for targets in ([0, 1, 2, 3, 1], [0, -100, 2, -100, 1], [-100, -100, 3, 0, 0]):
        x = chainrule.tensor(logits, requires_grad=True)
        tx = torch.tensor(logits, requires_grad=True)
        out = c(x, chainrule.tensor(targets))
        tout = torch.nn.functional.cross_entropy(tx, torch.tensor(targets))
        out.backward()
        tout.backward()
        np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert c.compile_count == 1 and not c.fallback_reasons
    with pytest.raises(IndexError) as ours:
        c(chainrule.tensor(logits), chainrule.tensor([0, 1, 2, 7, 1]))
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor([0, 1, 2, 7, 1]))
    assert str(ours.value) == str(theirs.value)


def test_tensors_made_from_python_values_are_constants_others_run_eagerly():
    def scaled(x):
        return x * chainrule.ones(3) * 2

    c = chainrule.compile(scaled)
    x = chainrule.ones(2, 3, requires_grad=True)
    c(x).sum().backward()
    assert not c.fallback_reasons and x.grad.tolist() == [[2.0] * 3] * 2

    def hidden(x):  # (a tensor made from x's values by code that is no op)
        return x * chainrule.tensor(x.detach()._data.sum())

    with pytest.raises(Unsupported, match="a tensor made outside the op table"):
        lower(hidden, (chainrule.ones(2),), {}, ["x"], {})


def test_layers_that_write_their_weights_run_eagerly():
    # (training-mode batch_norm writes its running statistics through nodes of the graph:
    # tests/test_compile_batch_norm_training.py)
    nn = chainrule.nn
    weight = chainrule.randn(5, 3) * 4

    def embed(idx):
        return nn.functional.embedding(idx, weight, max_norm=0.5)

    ce = chainrule.compile(embed)
    ce(chainrule.tensor([0, 2]))
    assert ce.fallback_reasons == ["'embedding' with max_norm writes into its weight"]
    assert weight[0].norm().item() <= 0.5 + 1e-6


def test_a_module_switched_to_eval_recompiles():
    nn = chainrule.nn
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    c = chainrule.compile(model)
    x = chainrule.ones(2, 3)
    model.eval()  # (dropout is the identity: compiled)
    out = c(x)
    assert not c.fallback_reasons and out.grad_fn.name() == "CompiledFunctionBackward"
    np.testing.assert_array_equal(out.detach().numpy(), model(x).detach().numpy())
    model.train()  # (dropout draws: a mask node drawing the numbers eager dropout draws)
    chainrule.manual_seed(0)
    drawn = c(x)
    chainrule.manual_seed(0)
    np.testing.assert_array_equal(drawn.detach().numpy(), model(x).detach().numpy())
    assert not c.fallback_reasons and drawn.grad_fn.name() == "CompiledFunctionBackward"
    assert c.compile_count == 2
    model.eval()  # (the eval graph is still cached: no recompile, as torch.compile)
    assert c(x).grad_fn.name() == "CompiledFunctionBackward" and c.compile_count == 2


def test_keyword_tensors_and_non_contiguous_or_expanded_inputs():
    def f(x, scale, shift):
        return (x * scale).sin() + shift

    rng = np.random.default_rng(5)
    xs, ss = rng.standard_normal((4, 3)), rng.standard_normal(3)
    results = []
    for lib, wrap in ((torch, lambda fn: fn), (chainrule, chainrule.compile)):
        x = lib.tensor(xs, requires_grad=True)
        s = lib.tensor(ss, requires_grad=True)
        fn = wrap(f)
        xt = x.t()  # (non-contiguous)
        shift = lib.tensor(0.5).expand(3, 4)  # (expanded: stride 0)
        out = fn(xt, scale=s[:, None].expand(3, 4), shift=shift)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)


def test_module_hooks_run_eagerly_at_every_call():
    lin = chainrule.nn.Linear(2, 2)
    c = chainrule.compile(lin)
    x = chainrule.ones(1, 2)
    assert c(x).grad_fn.name() == "CompiledFunctionBackward"
    seen = []
    handle = lin.register_forward_hook(lambda module, inputs, output: seen.append(output))
    c(x)
    c(x)
    assert len(seen) == 2 and c.compile_count == 2
    assert c.fallback_reasons == [
        "module hooks (they would run once, when the program is captured)"
    ]
    handle.remove()  # (the graph compiled without hooks is still cached: it runs again)
    assert c(x).grad_fn.name() == "CompiledFunctionBackward" and c.compile_count == 2


def _programs_of(lib: Any) -> dict[str, Any]:
    F = lib.nn.functional
    return {
        "softmax": lambda x, y: (F.softmax(x, dim=1) * y).sum(),
        "log_softmax_nll": lambda x, y: F.nll_loss(F.log_softmax(x @ y.t(), 1), x[:, 0].long()),
        "matmul_chain": lambda x, y: (x @ y.t()).tanh() @ x,
        "shapes": lambda x, y: lib.cat([x.reshape(-1), y.permute(1, 0).flatten()]).view(4, -1),
        "stack_index": lambda x, y: lib.stack([x, y])[:, 1:, ::2].sum(0),
        "where_clamp": lambda x, y: lib.where(x > y, x.clamp(-0.5, 0.5), y**3),
        "reductions": lambda x, y: x.mean(0) * y.amax(1, keepdim=True) + x.std(),
        "norms": lambda x, y: F.layer_norm(x, (3,)) * y.norm(dim=1, keepdim=True),
        "layer_norm_affine": lambda x, y: F.layer_norm(x * y, (4, 3), y * 2, y.exp(), 1e-3),
        "mse_bce": lambda x, y: F.mse_loss(x, y) + F.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
        "conv": lambda x, y: F.conv1d(x[None], y[None, :, :2]).relu().sum(),
    }


# (what runs eagerly, and why)
_RUN_EAGERLY: dict[str, str] = {}


@pytest.mark.parametrize("name", sorted(_programs_of(torch)))
def test_common_layers_and_ops_compiled_vs_eager_vs_torch(name):
    rng = np.random.default_rng(7)
    xs, ys = rng.uniform(0.1, 2.0, (4, 3)), rng.standard_normal((4, 3))
    results = []
    for lib, wrap in ((torch, lambda f: f), (chainrule, chainrule.compile), (chainrule, None)):
        fn = _programs_of(lib)[name]
        x = lib.tensor(xs, requires_grad=True)
        y = lib.tensor(ys, requires_grad=True)
        compiled = wrap(fn) if wrap is not None else fn
        out = compiled(x, y)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
        if wrap is chainrule.compile and name in _RUN_EAGERLY:
            assert compiled.fallback_reasons == [_RUN_EAGERLY[name]]
        elif wrap is chainrule.compile:
            assert not compiled.fallback_reasons and not compiled.graph_breaks
            assert out.grad_fn.name() == "CompiledFunctionBackward"
    theirs, ours, eager = results
    np.testing.assert_array_equal(ours[0], eager[0])
    for a, b, c in zip(ours, eager, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-12)
