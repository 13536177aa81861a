"""chainrule.compile lowers max pooling (forward and backward in the joint graph, the
indices a graph node of their own) with eager's and PyTorch's values, indices and gradients."""

import numpy as np
import pytest
import torch

import chainrule

CASES = {
    "k2": dict(kernel_size=2),
    "k3_s2_p1_ceil": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    "k2_dil2": dict(kernel_size=2, stride=1, dilation=2),
    "k3_s1_p1": dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 1)),
    "overlap_ceil": dict(kernel_size=3, stride=2, ceil_mode=True),
}


def _input(shape, dtype, kind):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(dtype)
    if kind == "ties":
        x = np.round(x).astype(dtype)  # (many equal values in a window)
    elif kind == "special":
        flat = x.reshape(-1)
        flat[::7] = np.nan
        flat[3::11] = np.inf
        flat[5::13] = -np.inf
    return x


def _pool2d(lib, **options):
    pool = lib.nn.functional.max_pool2d

    def fn(x):
        return pool(x, **options)

    return fn


def _pool3d(lib):
    pool = lib.nn.functional.max_pool3d

    def fn(x):
        return pool(x, 2, stride=(1, 2, 2), padding=1, ceil_mode=True)

    return fn


def _run(lib, fn, data, layout):
    x = lib.tensor(data)
    if layout == "channels_last":
        x = x.contiguous(memory_format=lib.channels_last)
    x.requires_grad_()
    out = fn(x)
    values, indices = out if isinstance(out, tuple) else (out, None)
    weight = lib.tensor(np.linspace(-1, 1, values.numel(), dtype=data.dtype).reshape(values.shape))
    (values * weight).sum().backward()
    return values, indices, x.grad


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", ["random", "ties", "special"])
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool2d_compiled_as_eager_and_pytorch(case, kind, return_indices):
    data = _input((2, 3, 9, 8), np.float32, kind)
    seen = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        fn = _pool2d(lib, return_indices=return_indices, **CASES[case])
        if name == "compiled":
            fn = chainrule.compile(fn)
            compiled = fn
        seen[name] = _run(lib, fn, data, "contiguous")
    assert compiled.fallback_reasons == []
    assert "max_pool_indices" in compiled.code
    for name in ("eager", "compiled"):
        values, indices, grad = seen[name]
        np.testing.assert_array_equal(values.detach().numpy(), seen["torch"][0].detach().numpy())
        np.testing.assert_allclose(grad.numpy(), seen["torch"][2].numpy(), rtol=1e-6, atol=1e-6)
        assert values.stride() == seen["torch"][0].stride()
        if return_indices:
            np.testing.assert_array_equal(indices.numpy(), seen["torch"][1].numpy())
            assert indices.dtype == chainrule.int64
    np.testing.assert_array_equal(seen["compiled"][2].numpy(), seen["eager"][2].numpy())


@pytest.mark.parametrize(
    "shape, layout, dtype",
    [
        ((3, 7, 6), "contiguous", np.float32),
        ((2, 4, 6, 6), "channels_last", np.float32),
        ((2, 3, 6, 5), "contiguous", np.float64),
    ],
)
def test_max_pool2d_module_layouts_and_dtypes(shape, layout, dtype):
    data = _input(shape, dtype, "random")
    seen = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        pool = lib.nn.MaxPool2d(3, stride=2, padding=1, return_indices=True)
        fn = chainrule.compile(pool) if name == "compiled" else pool
        seen[name] = _run(lib, fn, data, layout)
        if name == "compiled":
            assert fn.fallback_reasons == []
            assert "max_pool_indices" in fn.code
    for name in ("eager", "compiled"):
        values, indices, grad = seen[name]
        np.testing.assert_array_equal(values.detach().numpy(), seen["torch"][0].detach().numpy())
        np.testing.assert_array_equal(indices.numpy(), seen["torch"][1].numpy())
        np.testing.assert_allclose(grad.numpy(), seen["torch"][2].numpy(), rtol=1e-12, atol=1e-7)
        assert values.stride() == seen["torch"][0].stride()
        assert indices.stride() == seen["torch"][1].stride()
        assert grad.stride() == seen["torch"][2].stride()


def test_max_pool3d_compiled():
    data = _input((1, 2, 5, 6, 4), np.float32, "random")
    seen = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        fn = _pool3d(lib)
        if name == "compiled":
            fn = chainrule.compile(fn)
            compiled = fn
        seen[name] = _run(lib, fn, data, "contiguous")
    assert compiled.fallback_reasons == []
    for name in ("eager", "compiled"):
        np.testing.assert_array_equal(
            seen[name][0].detach().numpy(), seen["torch"][0].detach().numpy()
        )
        np.testing.assert_allclose(seen[name][2].numpy(), seen["torch"][2].numpy(), rtol=1e-6)


def test_max_pool_new_input_each_call():
    """The indices are computed from each call's input, not kept from the first call."""
    compiled = chainrule.compile(lambda x: chainrule.nn.functional.max_pool2d(x, 2))
    for seed in range(3):
        data = _input((1, 2, 4, 4), np.float32, "random") * (seed + 1) - seed
        data = data[:, :, ::-1].copy() if seed == 1 else data
        x = chainrule.tensor(data, requires_grad=True)
        out = compiled(x)
        out.sum().backward()
        tx = torch.tensor(data, requires_grad=True)
        ref = torch.nn.functional.max_pool2d(tx, 2)
        ref.sum().backward()
        np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert compiled.compile_count == 1


def test_max_pool_bad_arguments_raise_as_eager():
    compiled = chainrule.compile(lambda x: chainrule.nn.functional.max_pool2d(x, 2, padding=2))
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.max_pool2d(torch.zeros(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(RuntimeError) as ours:
        compiled(chainrule.zeros(1, 1, 4, 4))
    assert str(ours.value) == str(theirs.value)
