"""chainrule.compile's per-call paths (issue 18): the generated call glue, the engine's
direct run of a compiled call's one node (``engine._run_alone``) and its fall-backs to
the engine (hooks, anomaly mode, retain_grad), a Linear weight's gradient made in the
weight's layout, and the guards on the globals and closure variables the program reads
(a constant that changes recompiles; a tensor rebound with the same metadata is read
again), each against eager chainrule and PyTorch."""

import numpy as np
import pytest
import torch

import chainrule


@pytest.fixture(autouse=True)
def _keep_pytorchs_distribution_validation():
    validate = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(validate)


def _seed(w, x):
    a = w + x
    b = w + 1
    return a * b


def _leaves(lib, dtype):
    w = lib.tensor([1.5, -2.0], dtype=dtype, requires_grad=True)
    x = lib.tensor([2.0, 0.25], dtype=dtype, requires_grad=True)
    return w, x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_seed_backward_accumulates_as_pytorch(dtype):
    cf = chainrule.compile(lambda w, x: _seed(w, x).sum())
    w, x = _leaves(chainrule, getattr(chainrule, dtype))
    tw, tx = _leaves(torch, getattr(torch, dtype))
    for _ in range(3):  # (no zeroing: .grad accumulates)
        cf(w, x).backward()
        _seed(tw, tx).sum().backward()
    for ours, theirs in ((w, tw), (x, tx)):
        assert ours.grad.dtype == getattr(chainrule, dtype)
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
        assert ours.grad.stride() == theirs.grad.stride()


def test_grad_is_writable_and_owned():
    """A gradient equal to the incoming ones (``w.sum()``) is no read-only shared array:
    changing ``.grad`` in place does not change the next pass."""
    cf = chainrule.compile(lambda w: w.sum())
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    cf(w).backward()
    w.grad += 5
    w.grad = None
    cf(w).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    w.grad.mul_(3)
    assert w.grad.tolist() == [3.0, 3.0]


def _hook_run(lib, compiled):
    fn = (lambda w, x: _seed(w, x).sum()) if not compiled else None
    w, x = _leaves(lib, lib.float32)
    seen = []
    w.register_hook(lambda g: seen.append(("w", g.tolist())) or g * 2)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(("x", t.grad.tolist())))
    run = lib.compile(lambda w, x: _seed(w, x).sum()) if compiled else fn
    run(w, x).backward()
    return seen, w.grad.tolist(), x.grad.tolist()


def test_leaf_hooks_run_as_pytorch():
    assert _hook_run(chainrule, True) == _hook_run(torch, False)


def test_output_hooks_and_retain_grad_as_pytorch():
    results = []
    for lib, run in (
        (chainrule, chainrule.compile(lambda w, x: _seed(w, x).sum())),
        (torch, lambda w, x: _seed(w, x).sum()),
    ):
        w, x = _leaves(lib, lib.float32)
        y = run(w, x)
        y.retain_grad()
        calls = []
        y.register_hook(lambda g, calls=calls: calls.append(g.item()) or g * 3)
        y.backward()
        results.append((y.grad.item(), calls, w.grad.tolist(), x.grad.tolist()))
    assert results[0] == results[1]


def test_anomaly_mode_and_second_backward():
    cf = chainrule.compile(lambda w, x: _seed(w, x).sum())
    w, x = _leaves(chainrule, chainrule.float32)
    tw, tx = _leaves(torch, torch.float32)
    with chainrule.autograd.detect_anomaly():
        cf(w, x).backward()
    with torch.autograd.detect_anomaly():
        _seed(tw, tx).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())
    y = cf(w, x)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_inside_a_hook_of_another_pass():
    """A compiled call's backward started from a hook of another pass (an enclosing pass:
    the engine runs it)."""
    for lib, run in (
        (chainrule, chainrule.compile(lambda w, x: _seed(w, x).sum())),
        (torch, lambda w, x: _seed(w, x).sum()),
    ):
        w, x = _leaves(lib, lib.float32)
        z = lib.tensor(1.0, requires_grad=True)

        def hook(g, lib=lib, w=w, x=x, run=run):
            with lib.enable_grad():  # (a pass runs its hooks with grad mode off)
                run(w, x).backward()
            return g

        z.register_hook(hook)
        (z * 2).backward()
        if lib is chainrule:
            ours = (w.grad.tolist(), x.grad.tolist(), z.grad.item())
        else:
            theirs = (w.grad.tolist(), x.grad.tolist(), z.grad.item())
    assert ours == theirs


def test_call_glue_is_generated():
    cf = chainrule.compile(_seed)
    w, x = _leaves(chainrule, chainrule.float32)
    y = cf(w, x)
    source = next(iter(cf._cache.values()))[0].compiled.call_source
    assert source.startswith("def call(args, kwargs):")
    assert "r = forward(a0._data, a1._data)" in source
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    assert y.grad_fn.next_functions[0][0].variable is w


def test_outputs_structure_and_python_values():
    def f(x, y):
        s = x * y
        return [s.sum(), (s, 3, "a")], x.shape[0]

    cf = chainrule.compile(f)
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = chainrule.tensor([3.0, 4.0])
    out = cf(x, y)
    assert isinstance(out, tuple) and isinstance(out[0], list)
    assert out[1] == 2 and out[0][1][1:] == (3, "a")
    out[0][0].backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    (tx * torch.tensor([3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert cf(x, y)[0] is not out[0]  # (a new list each call)


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.ReLU(), lib.nn.Linear(5, 3))


def test_linear_weight_gradient_in_the_weights_layout():
    """mm's and addmm's formulas read the weight's strides in the compiled backward as
    eagerly (PyTorch's mm_mat2_backward): a Linear weight's gradient is computed
    transposed, row-major as the weight, bit for bit eager chainrule's."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((4, 6)).astype(np.float32)
    grads = []
    for compiled in (False, True):
        model = _mlp(chainrule)
        run = chainrule.compile(model) if compiled else model
        run(chainrule.tensor(xs)).square().sum().backward()
        grads.append([p.grad for p in model.parameters()])
        if compiled:
            # (the column-major branch transposes the incoming gradient: grad.t().mm(x))
            source = next(iter(run._cache.values()))[0].compiled.backward.source
            assert "= kernels.t(grad_addmm" in source
    tmodel = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    with torch.no_grad():
        for tp, p in zip(tmodel.parameters(), _mlp(chainrule).parameters(), strict=True):
            tp.copy_(torch.from_numpy(p.detach().numpy()))
    tmodel(torch.from_numpy(xs)).square().sum().backward()
    for eager, compiled, tp in zip(*grads, tmodel.parameters(), strict=True):
        np.testing.assert_array_equal(compiled.numpy(), eager.numpy())
        assert compiled.stride() == eager.stride() == tp.grad.stride()
        np.testing.assert_allclose(compiled.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6)


def _counted(lib, fn):
    if lib is chainrule:
        compiled = chainrule.compile(fn)
        return compiled, lambda: compiled.compile_count
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="aot_eager")
    return compiled, lambda: counters["stats"]["unique_graphs"]


def _globals_program(lib):
    """A program reading a global number and a global tensor, both rebound between calls:
    the values each call gives and the compile count after it."""
    namespace = {"k": 2, "scale": lib.tensor([2.0])}
    exec("def f(x):\n    return (x * k * scale).sum()\n", namespace)
    compiled, count = _counted(lib, namespace["f"])
    x = lib.ones(2, requires_grad=True)
    seen = []
    for change in (None, ("k", 3), ("scale", lib.tensor([5.0])), ("k", 3.0), ("k", 3)):
        if change is not None:
            namespace[change[0]] = change[1]
        y = compiled(x)
        x.grad = None
        y.backward()
        seen.append((y.item(), x.grad.tolist(), count()))
    return seen


def test_globals_guarded_as_torch_compile():
    """A global number that changes recompiles (3 and 3.0 differ by type), a value seen
    before reuses its graph; a global tensor rebound with the same shape is read again
    without a recompile."""
    ours = _globals_program(chainrule)
    theirs = _globals_program(torch)
    assert [s[:2] for s in ours] == [s[:2] for s in theirs]
    assert [s[2] for s in ours] == [s[2] for s in theirs] == [1, 2, 2, 3, 3]


def test_closure_variable_and_rebound_parameter():
    scale = chainrule.tensor(2.0)
    model = _mlp(chainrule)

    def f(x):
        return (model(x) * scale).sum()

    cf = chainrule.compile(f)
    x = chainrule.ones(2, 6)
    first = cf(x).item()
    assert first == pytest.approx(f(x).item(), rel=1e-6)
    scale = chainrule.tensor(3.0)  # noqa: F841 - read by f through its closure
    assert cf(x).item() == pytest.approx(f(x).item(), rel=1e-6)
    model[0].weight = chainrule.nn.Parameter(chainrule.zeros(5, 6))
    y = cf(x)
    assert y.item() == pytest.approx(f(x).item(), rel=1e-6)
    y.backward()
    assert model[0].weight.grad is not None and model[0].weight.grad.shape == (5, 6)
    assert cf.compile_count == 1
    model[0].weight = chainrule.nn.Parameter(chainrule.zeros(5, 6, dtype=chainrule.float64))
    with pytest.raises(RuntimeError):
        f(x)  # (mixed dtypes: eager raises, and so does the recompiled call)
    with pytest.raises(RuntimeError):
        cf(x)
    assert cf.compile_count == 2


def _layer_norm_program(lib):
    def f(x, w, b):
        return lib.nn.functional.layer_norm(x * 2, (8,), w, b).square().sum()

    return f


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_layer_norm_compiles_in_half_precision(dtype):
    """The moments node gives a half-precision input's statistics rounded (saved) and in
    float32 (normalised with), as eager layer_norm: compiled equals eager bit for bit."""
    rng = np.random.default_rng(3)
    xs, ws, bs = rng.standard_normal((3, 4, 8)), rng.standard_normal(8), rng.standard_normal(8)
    results = []
    for lib, compiled in ((chainrule, True), (chainrule, False), (torch, False)):
        dt = getattr(lib, dtype)
        x, w, b = (lib.tensor(a, dtype=dt, requires_grad=True) for a in (xs, ws, bs))

        f = _layer_norm_program(lib)
        run = chainrule.compile(f) if compiled else f
        y = run(x, w, b)
        y.backward()
        if compiled:
            assert run.fallback_reasons == []
            assert y.grad_fn.name() == "CompiledFunctionBackward"
            assert "layer_norm_moments" in run.code
        results.append([t.detach().float().numpy() for t in (y, x.grad, w.grad, b.grad)])
    for ours, eager, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, eager)
        tol = 1e-5 if dtype == "float32" else 2e-2
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())


def _dropout_program(lib):
    F = lib.nn.functional

    def f(x, w):
        h = F.dropout(x * w, 0.3)
        return (F.dropout(h.tanh(), p=0.5) * h).sum()

    return f


def test_dropout_draws_the_numbers_eager_draws():
    """Each dropout is a mask node run at every call in the program's order: compiled
    values, gradients and the generator's state after equal eager chainrule's bit for bit
    (and PyTorch's masks: the same generator state after, values to rounding)."""
    results = []
    for lib, compiled in ((chainrule, True), (chainrule, False), (torch, False)):
        f = _dropout_program(lib)
        run = chainrule.compile(f) if compiled else f
        lib.manual_seed(5)
        x = lib.ones(4, 6, requires_grad=True)
        w = lib.full((6,), 2.0, requires_grad=True)
        seen = []
        for _ in range(3):
            y = run(x, w)
            y.backward()
            seen.append([y.detach().numpy().copy(), x.grad.numpy().copy(), w.grad.numpy().copy()])
        if compiled:
            assert run.fallback_reasons == [] and run.compile_count == 1
            assert run.code.count("call_dropout_mask(") == 2
        results.append((seen, lib.rand(3).tolist()))
    (ours, ours_after), (eager, eager_after), (theirs, theirs_after) = results
    assert ours_after == eager_after == theirs_after
    for a, b, c in zip(ours, eager, theirs, strict=True):
        for u, v, t in zip(a, b, c, strict=True):
            np.testing.assert_array_equal(u, v)
            np.testing.assert_allclose(u, t, rtol=1e-6)


def test_dropout_in_place_or_in_vmap_still_runs_eagerly():
    cf = chainrule.compile(lambda x: chainrule.nn.functional.dropout(x * 2, 0.5, inplace=True))
    chainrule.manual_seed(1)
    out = cf(chainrule.ones(5))
    chainrule.manual_seed(1)
    np.testing.assert_array_equal(
        out.numpy(), chainrule.nn.functional.dropout(chainrule.ones(5) * 2, 0.5).numpy()
    )
    assert cf.fallback_reasons == ["'dropout' draws random numbers"]
