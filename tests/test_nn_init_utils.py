"""``nn.init`` (PyTorch's distributions, in place) and ``nn.utils`` (gradient clipping,
parameters <-> vector) against PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import chainrule
import chainrule.nn.init as init

from .conftest import torch


def test_calculate_gain_matches_torch() -> None:
    for name, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                        ("selu", None)]:
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for lib in (chainrule, torch):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.nn.init.calculate_gain("foo")


def test_fills_in_place_and_bumps_version() -> None:
    t = chainrule.empty(3, 4)
    version = t._version
    assert init.constant_(t, 0.5) is t
    assert t._version > version and (t.numpy() == 0.5).all()
    assert init.ones_(t).numpy().all() and not init.zeros_(t).numpy().any()
    np.testing.assert_array_equal(init.eye_(chainrule.empty(2, 3)).numpy(), np.eye(2, 3))
    d = init.dirac_(chainrule.empty(4, 2, 3, 3), groups=2).numpy()
    ref = torch.nn.init.dirac_(torch.empty(4, 2, 3, 3), groups=2).numpy()
    np.testing.assert_array_equal(d, ref)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(chainrule.empty(2))
    p = chainrule.nn.Parameter(chainrule.empty(3))
    init.uniform_(p, -1, 1)  # a leaf that requires grad: written without recording
    assert p.grad_fn is None and p.requires_grad


def _stats(fn, shape, seed=0):
    chainrule.manual_seed(seed)
    return fn(chainrule.empty(*shape)).numpy()


def test_distributions() -> None:
    shape = (300, 400)
    fan_in, fan_out = 400, 300
    u = _stats(lambda t: init.uniform_(t, -2, 3), shape)
    assert u.min() >= -2 and u.max() <= 3 and abs(u.mean() - 0.5) < 0.02
    n = _stats(lambda t: init.normal_(t, 1.0, 2.0), shape)
    assert abs(n.mean() - 1) < 0.02 and abs(n.std() - 2) < 0.02
    xu = _stats(lambda t: init.xavier_uniform_(t, gain=2.0), shape)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert xu.max() <= bound and xu.min() >= -bound and xu.max() > 0.99 * bound
    xn = _stats(init.xavier_normal_, shape)
    assert abs(xn.std() - math.sqrt(2 / (fan_in + fan_out))) < 0.001
    ku = _stats(lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), shape)
    assert abs(ku.max() - 1 / math.sqrt(fan_in)) < 1e-3 and ku.max() <= 1 / math.sqrt(fan_in)
    kn = _stats(lambda t: init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"), shape)
    assert abs(kn.std() - math.sqrt(2 / fan_out)) < 0.001
    tn = _stats(lambda t: init.trunc_normal_(t, 0, 1, -1, 1.5), shape)
    assert tn.min() >= -1 and tn.max() <= 1.5
    orth = _stats(lambda t: init.orthogonal_(t, gain=3), (4, 7))
    np.testing.assert_allclose(orth @ orth.T, 9 * np.eye(4), atol=1e-5)
    sparse = _stats(lambda t: init.sparse_(t, 0.5), (10, 6))
    assert ((sparse == 0).sum(axis=0) >= 5).all()
    with pytest.raises(ValueError, match="Mode fan_middle not supported"):
        init.kaiming_uniform_(chainrule.empty(2, 2), mode="fan_middle")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(chainrule.empty(3))


def _grads(lib, scale=1.0):
    params = []
    for k, shape in enumerate([(3, 4), (5,), (2, 2, 2)]):
        p = lib.nn.Parameter(lib.from_numpy(
            np.random.default_rng(k).standard_normal(shape).astype(np.float32)))
        p.grad = lib.from_numpy(
            (np.random.default_rng(10 + k).standard_normal(shape) * scale).astype(np.float32))
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type: float, max_norm: float) -> None:
    ours, theirs = _grads(chainrule), _grads(torch)
    a = chainrule.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    b = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
    assert str(a.dtype) == "chainrule.float32"
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_value_and_edge_cases() -> None:
    ours, theirs = _grads(chainrule, 3), _grads(torch, 3)
    chainrule.nn.utils.clip_grad_value_(ours, 1.5)
    torch.nn.utils.clip_grad_value_(theirs, 1.5)
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    p = chainrule.nn.Parameter(chainrule.ones(2))
    assert chainrule.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
    p.grad = chainrule.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from"):
        chainrule.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    single = chainrule.nn.Parameter(chainrule.ones(4))
    single.grad = chainrule.ones(4) * 2
    assert chainrule.nn.utils.clip_grad_norm_(single, 1.0).item() == pytest.approx(4.0)
    np.testing.assert_allclose(single.grad.numpy(), 0.5, rtol=1e-5)


def test_parameters_to_vector_and_back() -> None:
    model = chainrule.nn.Linear(3, 2)
    vec = chainrule.nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (8,) and vec.grad_fn is not None
    ref = torch.nn.Linear(3, 2)
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                         for k, v in model.state_dict().items()})
    np.testing.assert_array_equal(
        vec.detach().numpy(), torch.nn.utils.parameters_to_vector(ref.parameters()).detach()
    )
    chainrule.nn.utils.vector_to_parameters(chainrule.arange(8.0), model.parameters())
    assert model.weight.tolist() == [[0, 1, 2], [3, 4, 5]] and model.bias.tolist() == [6, 7]


_INIT_EDGES = {
    "uniform_ integer": lambda I, lib: I.uniform_(lib.empty(3, dtype=lib.int64)),
    "uniform_ bool": lambda I, lib: I.uniform_(lib.empty(3, dtype=lib.bool)),
    "uniform_ from > to": lambda I, lib: I.uniform_(lib.empty(3), 2.5, 1e-7),
    "normal_ integer": lambda I, lib: I.normal_(lib.empty(3, dtype=lib.int64)),
    "normal_ negative std": lambda I, lib: I.normal_(lib.empty(3), 0.0, -0.5),
    "xavier_uniform_ integer": lambda I, lib: I.xavier_uniform_(lib.empty(2, 3,
                                                                          dtype=lib.int64)),
    "xavier_normal_ integer": lambda I, lib: I.xavier_normal_(lib.empty(2, 3, dtype=lib.int64)),
    "kaiming_uniform_ integer": lambda I, lib: I.kaiming_uniform_(lib.empty(2, 3,
                                                                            dtype=lib.int64)),
    "kaiming_normal_ integer": lambda I, lib: I.kaiming_normal_(lib.empty(2, 3,
                                                                          dtype=lib.int64)),
    "trunc_normal_ integer": lambda I, lib: I.trunc_normal_(lib.empty(3, dtype=lib.int64)),
    "trunc_normal_ integer far mean": lambda I, lib: I.trunc_normal_(
        lib.empty(3, dtype=lib.int64), mean=10.0),
    "trunc_normal_ negative std": lambda I, lib: I.trunc_normal_(lib.empty(3), std=-1.0),
    "orthogonal_ integer": lambda I, lib: I.orthogonal_(lib.empty(3, 3, dtype=lib.int64)),
    "orthogonal_ float16": lambda I, lib: I.orthogonal_(lib.empty(3, 3, dtype=lib.float16)),
    "sparse_ integer": lambda I, lib: I.sparse_(lib.empty(3, 3, dtype=lib.int64), 0.5),
    "uniform (deprecated)": lambda I, lib: I.uniform(lib.empty(3)),
    "normal (deprecated)": lambda I, lib: I.normal(lib.empty(3)),
    "constant (deprecated)": lambda I, lib: I.constant(lib.empty(3), 1.0),
    "eye (deprecated)": lambda I, lib: I.eye(lib.empty(3, 3)),
    "dirac (deprecated)": lambda I, lib: I.dirac(lib.empty(3, 3, 3)),
    "xavier_uniform (deprecated)": lambda I, lib: I.xavier_uniform(lib.empty(2, 3)),
    "xavier_normal (deprecated)": lambda I, lib: I.xavier_normal(lib.empty(2, 3)),
    "kaiming_uniform (deprecated)": lambda I, lib: I.kaiming_uniform(lib.empty(2, 3)),
    "kaiming_normal (deprecated)": lambda I, lib: I.kaiming_normal(lib.empty(2, 3)),
    "orthogonal (deprecated)": lambda I, lib: I.orthogonal(lib.empty(3, 3)),
    "sparse (deprecated)": lambda I, lib: I.sparse(lib.empty(3, 3), 0.1),
}


def _init_outcome(lib, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = _INIT_EDGES[name](lib.nn.init, lib)
            result = (tuple(out.shape), str(out.dtype).split(".")[-1])
        except (RuntimeError, NotImplementedError, ValueError) as e:
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", sorted(_INIT_EDGES))
def test_init_errors_and_deprecated_names_like_torch(name: str) -> None:
    assert _init_outcome(chainrule, name) == _init_outcome(torch, name)


@pytest.mark.parametrize("mean,a,b", [(10.0, -2.0, 2.0), (0.5, -0.2, 0.1), (0.0, -2.0, 2.0)])
def test_trunc_normal_samples_inside_with_torch_moments(mean, a, b) -> None:
    """A mean far outside [a, b] is sampled as PyTorch does it (uniform proposals accepted by
    the density), instead of redrawing normal values until they land inside (forever)."""
    chainrule.manual_seed(0)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "mean is more than 2 std from [a, b]", in both
        ours = chainrule.nn.init.trunc_normal_(chainrule.empty(20000), mean, 1.0, a, b).numpy()
        theirs = torch.nn.init.trunc_normal_(torch.empty(20000), mean, 1.0, a, b).numpy()
    assert ours.min() >= a and ours.max() <= b
    assert abs(ours.mean() - theirs.mean()) < 0.03 * (b - a)
    assert abs(ours.std() - theirs.std()) < 0.03 * (b - a)
