"""Lazy modules and uninitialized parameters against PyTorch: reprs before and after the first
call, the class each becomes, the inferred sizes, parameter and buffer types, errors of the
placeholders and of bad first inputs, state-dict loading into a lazy module, dtype casts
before materialising, and values and gradients once the weights are PyTorch's."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "linear": (lambda nn: nn.LazyLinear(4), (2, 3)),
    "linear_3d_no_bias": (lambda nn: nn.LazyLinear(2, bias=False), (2, 5, 3)),
    "conv1d": (lambda nn: nn.LazyConv1d(4, 3, stride=2, padding=1), (2, 3, 7)),
    "conv1d_unbatched": (lambda nn: nn.LazyConv1d(2, 2, bias=False), (3, 5)),
    "conv2d_groups": (lambda nn: nn.LazyConv2d(4, 2, groups=2), (1, 4, 5, 4)),
    "conv2d_reflect": (
        lambda nn: nn.LazyConv2d(2, 3, padding=1, padding_mode="reflect"),
        (1, 2, 4, 4),
    ),
    "conv3d": (lambda nn: nn.LazyConv3d(2, (1, 2, 2)), (1, 2, 3, 3, 3)),
    "conv_transpose1d": (lambda nn: nn.LazyConvTranspose1d(3, 2, stride=2), (2, 2, 4)),
    "conv_transpose2d": (
        lambda nn: nn.LazyConvTranspose2d(2, 3, stride=2, output_padding=1, groups=2),
        (1, 4, 3, 3),
    ),
    "conv_transpose3d": (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 2, 2)),
    "batch_norm1d": (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    "batch_norm1d_3d": (lambda nn: nn.LazyBatchNorm1d(momentum=None), (4, 3, 2)),
    "batch_norm2d": (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
    "batch_norm3d": (
        lambda nn: nn.LazyBatchNorm3d(track_running_stats=False, bias=False),
        (2, 2, 2, 2, 2),
    ),
    "instance_norm1d": (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    "instance_norm2d": (lambda nn: nn.LazyInstanceNorm2d(affine=False), (2, 3, 3, 4)),
    "instance_norm3d": (lambda nn: nn.LazyInstanceNorm3d(eps=1e-3), (1, 2, 2, 3, 2)),
}


def _describe(module: Any) -> tuple:
    params = [(n, type(p).__name__, tuple(p.size())) for n, p in module.named_parameters()]
    buffers = [(n, type(b).__name__, tuple(b.size())) for n, b in module.named_buffers()]
    return repr(module), type(module).__name__, params, buffers


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_lazy_layer_matches_torch(name: str) -> None:
    make, shape = LAYERS[name]
    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib in (torch, chainrule):
        module = make(lib.nn)
        before = _describe(module)
        assert module.has_uninitialized_params()
        module.initialize_parameters(lib.tensor(x, dtype=lib.float32))
        middle = _describe(module)  # materialised, still the lazy class
        results.append((before, middle, module))
    (t_before, t_middle, t_mod), (c_before, c_middle, c_mod) = results
    assert c_before == t_before
    assert c_middle == t_middle
    # PyTorch's weights (random draws differ), then the first call turns both eager.
    with torch.no_grad():
        state = {k: v.clone() for k, v in t_mod.state_dict().items()}
    c_mod.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in state.items()})
    out = []
    for lib, module in ((torch, t_mod), (chainrule, c_mod)):
        xt = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        y = module(xt)
        y.backward(lib.ones_like(y) * lib.arange(float(y.numel())).reshape(tuple(y.shape)))
        grads = [p.grad.numpy() for _, p in module.named_parameters()]
        out.append(
            (
                _describe(module),
                y.detach().numpy(),
                xt.grad.numpy(),
                grads,
                hasattr(module, "_initialize_hook"),
            )
        )
    t, c = out
    assert c[0] == t[0]
    np.testing.assert_allclose(c[1], t[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c[2], t[2], rtol=1e-5, atol=1e-5)
    for a, b in zip(c[3], t[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)
    assert c[4] == t[4] is False


def test_first_call_initialises_in_a_sequential() -> None:
    reprs = []
    for lib in (torch, chainrule):
        model = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        before = repr(model)
        model(lib.ones(1, 5))
        reprs.append((before, repr(model), [type(m).__name__ for m in model]))
    assert reprs[0] == reprs[1]


def test_dtype_cast_before_materialising() -> None:
    got = []
    for lib in (torch, chainrule):
        m = lib.nn.LazyLinear(3).double()
        kinds = (type(m.weight).__name__, str(m.weight.dtype))
        y = m(lib.ones(2, 2, dtype=lib.float64))
        got.append((kinds, str(m.weight.dtype), str(y.dtype), type(m).__name__))
    assert repr(got[0]).replace("torch", "chainrule") == repr(got[1])


def test_state_dict_loading_materialises_the_placeholders() -> None:
    out = []
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        m = lib.nn.LazyLinear(3)
        eager = lib.nn.Linear(5, 3)
        with lib.no_grad():
            eager.weight.copy_(lib.arange(15.0).reshape(3, 5))
            eager.bias.copy_(lib.arange(3.0))
        keys = list(m.state_dict())
        types = [type(v).__name__ for v in m.state_dict().values()]
        result = repr(m.load_state_dict(eager.state_dict()))
        out.append(
            (
                keys,
                types,
                result,
                repr(m),
                type(m).__name__,
                m.weight.detach().numpy(),
                m(lib.ones(1, 5)).detach().numpy(),
                type(m).__name__,
            )
        )
    t, c = out
    assert c[:5] == t[:5]
    np.testing.assert_array_equal(c[5], t[5])
    np.testing.assert_array_equal(c[6], t[6])
    assert c[7] == t[7]


def test_batch_norm_buffers_after_the_first_call() -> None:
    out = []
    for lib in (torch, chainrule):
        bn = lib.nn.LazyBatchNorm1d()
        bn(lib.arange(12.0).reshape(4, 3))
        out.append(
            (
                repr(bn),
                bn.running_mean.numpy(),
                bn.running_var.numpy(),
                int(bn.num_batches_tracked),
                type(bn.running_mean).__name__,
            )
        )
    t, c = out
    assert c[0] == t[0] and c[3:] == t[3:]
    np.testing.assert_allclose(c[1], t[1], rtol=1e-6)
    np.testing.assert_allclose(c[2], t[2], rtol=1e-6)


PLACEHOLDER_CASES: dict[str, Callable[[Any], Any]] = {
    "repr": lambda t: repr(t.nn.UninitializedParameter()),
    "buffer repr": lambda t: repr(t.nn.UninitializedBuffer()),
    "size": lambda t: t.nn.UninitializedParameter().size(),
    "dtype": lambda t: t.nn.UninitializedParameter(dtype=t.float64).dtype,
    "requires_grad": lambda t: t.nn.UninitializedParameter().requires_grad,
    "requires_grad False": lambda t: t.nn.UninitializedParameter(False).requires_grad,
    "buffer requires_grad": lambda t: t.nn.UninitializedBuffer().requires_grad,
    "buffer persistent": lambda t: t.nn.UninitializedBuffer(persistent=False).persistent,
    "is a Parameter": lambda t: isinstance(t.nn.UninitializedParameter(), t.nn.Parameter),
    "shape": lambda t: t.nn.UninitializedParameter().shape,
    "buffer shape": lambda t: t.nn.UninitializedBuffer().shape,
    "share_memory_": lambda t: t.nn.UninitializedParameter().share_memory_(),
    "double": lambda t: t.nn.UninitializedParameter().double(),
    "is_floating_point": lambda t: t.nn.UninitializedParameter().is_floating_point(),
    "buffer double type": lambda t: type(t.nn.UninitializedBuffer().double()).__name__,
    "materialize": lambda t: _materialized(t.nn.UninitializedParameter()),
    "materialize buffer": lambda t: _materialized(t.nn.UninitializedBuffer()),
    "deepcopy": lambda t: repr(copy.deepcopy(t.nn.UninitializedParameter(dtype=t.float64))),
    "pickle": lambda t: repr(pickle.loads(pickle.dumps(t.nn.UninitializedParameter()))),
    "lazy forward bad input": lambda t: t.nn.LazyLinear(3)(t.ones(())),
    "lazy conv dims": lambda t: t.nn.LazyConv2d(3, 2)(t.ones(2, 2)),
    "lazy conv groups": lambda t: t.nn.LazyConv2d(4, 2, groups=2)(t.ones(1, 3, 4, 4)),
    "lazy conv out groups": lambda t: t.nn.LazyConv2d(3, 2, groups=2)(t.ones(1, 3, 4, 4)),
    "lazy batch norm dims": lambda t: t.nn.LazyBatchNorm2d()(t.ones(3, 4, 4)),
    "load lazy into eager": lambda t: t.nn.Linear(5, 3).load_state_dict(
        t.nn.LazyLinear(3).state_dict()
    ),
    "unbatched instance norm": lambda t: t.nn.LazyInstanceNorm1d()(t.ones(3, 4, 5)).shape,
}


def _materialized(p: Any) -> tuple:
    p.materialize((2, 3))
    return type(p).__name__, tuple(p.shape), p.requires_grad


@pytest.mark.parametrize("name", sorted(PLACEHOLDER_CASES))
def test_placeholders_match_torch(name: str) -> None:
    same_outcome(PLACEHOLDER_CASES[name])


@pytest.mark.parametrize("op", ["add", "detach", "numel", "sum"])
def test_ops_on_a_placeholder_raise_valueerror(op: str) -> None:
    p = chainrule.nn.UninitializedParameter()
    call = {"add": lambda: p + 1, "detach": p.detach, "numel": p.numel, "sum": p.sum}[op]
    with pytest.raises(
        ValueError,
        match="Attempted to use an uninitialized parameter in .*"
        "This error happens when you are using a `LazyModule` or explicitly "
        "manipulating `torch.nn.parameter.UninitializedParameter` objects",
    ):
        call()
    q = torch.nn.UninitializedParameter()
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        {"add": lambda: q + 1, "detach": q.detach, "numel": q.numel, "sum": q.sum}[op]()


def test_initialize_parameters_not_implemented() -> None:
    from chainrule.nn.modules.lazy import LazyModuleMixin

    class Lazy(LazyModuleMixin, chainrule.nn.Module):
        pass

    with pytest.raises(
        NotImplementedError, match="initialize_parameters is not implemented for Lazy"
    ):
        Lazy()(chainrule.ones(1))
