"""chainrule.compile against eager chainrule and PyTorch: random draws nothing reads still
advance the generator, outputs of element-wise ops over operands of mixed layouts have
eager's strides, and the compiler's own helpers run on arrays in the generated code."""

import numpy as np
import pytest
import torch

import chainrule

F = chainrule.nn.functional


def _unused_dropout(lib):
    def fn(x):
        lib.nn.functional.dropout(x, 0.5, training=True)  # (its result is never read)
        return x * 2

    return fn


def _dropout_then_unused(lib):
    def fn(x):
        y = lib.nn.functional.dropout(x, 0.3, training=True)
        lib.nn.functional.dropout(x, 0.5, training=True)
        return y.sum()

    return fn


def _two_unused(lib):
    def fn(x):
        lib.nn.functional.dropout(x, 0.2, training=True)
        z = x.exp()
        lib.nn.functional.dropout(z, 0.7, training=True)
        return z

    return fn


@pytest.mark.parametrize("make", [_unused_dropout, _dropout_then_unused, _two_unused])
@pytest.mark.parametrize("calls", [1, 3])
def test_unused_random_draws_advance_the_generator(make, calls):
    data = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    after = {}
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        fn = make(lib)
        if name == "compiled":
            fn = chainrule.compile(fn)
        x = lib.tensor(data, requires_grad=True)
        lib.manual_seed(0)
        for _ in range(calls):
            out = fn(x)
        out.sum().backward()
        results[name] = (out.detach().numpy().copy(), x.grad.numpy().copy())
        after[name] = lib.rand(5).numpy()
    for name in ("eager", "compiled"):
        np.testing.assert_array_equal(after[name], after["torch"])
        for k in (0, 1):
            np.testing.assert_allclose(results[name][k], results["torch"][k], rtol=1e-6)
    for k in (0, 1):
        np.testing.assert_array_equal(results["compiled"][k], results["eager"][k])


def test_unused_dropout_stays_in_generated_code():
    compiled = chainrule.compile(_unused_dropout(chainrule))
    compiled(chainrule.ones(4, requires_grad=True))
    assert compiled.fallback_reasons == []
    assert "dropout_mask" in compiled.code


def _mixed_layout_programs(lib):
    return {
        "t_plus_c": lambda x, y: x * 2 + y,
        "c_plus_t": lambda x, y: y + x * 2,
        "maximum": lambda x, y: lib.maximum(x, y),
        "chain": lambda x, y: ((x - y) * 3 + x).tanh(),
        "broadcast_row": lambda x, y: x + y[0],
        "mul_sub": lambda x, y: x * y - y,
    }


@pytest.mark.parametrize("name", sorted(_mixed_layout_programs(torch)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_output_strides_on_mixed_layouts(name, dtype):
    base = np.linspace(-2, 2, 30, dtype=dtype).reshape(5, 6)
    other = np.linspace(1, 3, 30, dtype=dtype).reshape(6, 5)
    seen = {}
    for lib in ("torch", "eager", "compiled"):
        mod = torch if lib == "torch" else chainrule
        fn = _mixed_layout_programs(mod)[name]
        if lib == "compiled":
            fn = chainrule.compile(fn)
        x = mod.tensor(base, requires_grad=True)
        y = mod.tensor(other, requires_grad=True)
        out = fn(x.t(), y)
        out.sum().backward()
        seen[lib] = (out.stride(), out.detach().numpy().copy(), x.grad.numpy(), y.grad.numpy())
    for lib in ("eager", "compiled"):
        assert seen[lib][0] == seen["torch"][0], lib
        for k in (1, 2, 3):
            np.testing.assert_allclose(seen[lib][k], seen["torch"][k], rtol=1e-6, atol=1e-6)
    for k in (1, 2, 3):
        np.testing.assert_array_equal(seen["compiled"][k], seen["eager"][k])


def test_layout_fix_only_where_two_arrays_meet():
    compiled = chainrule.compile(lambda x, y: (x * 2 + y).exp())
    compiled(chainrule.ones(3, 4), chainrule.ones(3, 4))
    code = compiled.code
    assert "_layout(" in code
    one_d = chainrule.compile(lambda x, y: x * 2 + y)
    one_d(chainrule.ones(3), chainrule.ones(3))
    assert "_layout(" not in one_d.code  # (1-d results have one layout)


def _cross_entropy(a, t):
    return F.cross_entropy(a, t)


def test_cross_entropy_total_weight_runs_on_arrays():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((16, 5)).astype(np.float32)
    target = rng.integers(0, 5, 16)
    results = {}
    for lib in ("torch", "eager", "compiled"):
        mod = torch if lib == "torch" else chainrule
        fn = mod.nn.functional.cross_entropy if lib == "torch" else _cross_entropy
        if lib == "compiled":
            fn = chainrule.compile(fn)
            compiled = fn
        x = mod.tensor(logits, requires_grad=True)
        loss = fn(x, mod.tensor(target))
        loss.backward()
        results[lib] = (loss.item(), x.grad.numpy().copy())
    assert "call_nll_total_weight(" in compiled.code
    assert compiled.fallback_reasons == []
    assert results["compiled"][0] == results["eager"][0]
    np.testing.assert_array_equal(results["compiled"][1], results["eager"][1])
    assert results["compiled"][0] == pytest.approx(results["torch"][0], rel=1e-6)
    np.testing.assert_allclose(results["compiled"][1], results["torch"][1], rtol=1e-5, atol=1e-7)


def test_cross_entropy_target_out_of_bounds_message():
    compiled = chainrule.compile(lambda a, t: F.cross_entropy(a, t))
    compiled(chainrule.zeros(4, 3), chainrule.tensor([0, 1, 2, 0]))
    bad = [0, 1, 3, 0]
    with pytest.raises(IndexError) as theirs:
        torch.nn.functional.cross_entropy(torch.zeros(4, 3), torch.tensor(bad))
    with pytest.raises(IndexError) as ours:
        compiled(chainrule.zeros(4, 3), chainrule.tensor(bad))
    assert str(ours.value) == str(theirs.value)
