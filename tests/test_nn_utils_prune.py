"""nn.utils.prune against PyTorch: masks of the deterministic methods (L1 unstructured, Ln
structured, custom masks, global L1) and of iterated pruning (PruningContainer), the
parameter/buffer/hook bookkeeping, outputs and gradients of pruned layers, ``remove``, the
random methods' counts, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LIBS = (torch, chainrule)

# PyTorch loads nn.utils.prune only when asked (chainrule's nn.utils imports it).
import torch.nn.utils.prune  # noqa: E402


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy().copy()


def _net(lib: Any) -> Any:
    net = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.Flatten(), lib.nn.Linear(16, 5))
    net = net.double()
    rng = np.random.default_rng(11)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return net


def _x(lib: Any) -> Any:
    return lib.tensor(np.random.default_rng(2).standard_normal((2, 1, 4, 4)))


def _hook_names(module: Any) -> list[str]:
    return [type(h).__name__ for h in module._forward_pre_hooks.values()]


def _program(lib: Any) -> list[Any]:
    prune = lib.nn.utils.prune
    net = _net(lib)
    conv, fc = net[0], net[2]
    prune.l1_unstructured(conv, "weight", amount=0.3)
    prune.l1_unstructured(conv, "bias", amount=2)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    prune.ln_structured(fc, "weight", amount=2, n=1, dim=1)
    prune.l1_unstructured(fc, "weight", amount=10)
    mask = lib.tensor(np.arange(5) % 2)
    prune.custom_from_mask(fc, "bias", mask)
    out = net(_x(lib))
    out.sum().backward()
    container = next(h for h in conv._forward_pre_hooks.values() if h._tensor_name == "weight")
    seen = [
        _np(conv.weight_mask),
        _np(conv.bias_mask),
        _np(fc.weight_mask),
        _np(fc.bias_mask),
        _np(conv.weight),
        _np(out),
        _np(conv.weight_orig.grad),
        _np(fc.weight_orig.grad),
        [n for n, _ in net.named_parameters()],
        [n for n, _ in net.named_buffers()],
        list(net.state_dict()),
        _hook_names(conv),
        _hook_names(fc),
        [type(m).__name__ for m in container],
        len(container),
        prune.is_pruned(net),
        type(conv.weight).__name__,
    ]
    prune.remove(conv, "weight")
    prune.remove(fc, "bias")
    seen += [
        _np(conv.weight),
        type(conv.weight).__name__,
        [n for n, _ in net.named_parameters()],
        _hook_names(conv),
        prune.is_pruned(net),
    ]
    return seen


def _compare(theirs: list[Any], ours: list[Any]) -> None:
    for a, b in zip(theirs, ours, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
        else:
            assert b == a


def test_deterministic_pruning_program() -> None:
    _compare(_program(torch), _program(chainrule))


def _global(lib: Any) -> list[Any]:
    prune = lib.nn.utils.prune
    net = _net(lib)
    prune.l1_unstructured(net[2], "weight", amount=0.25)
    params = [(net[0], "weight"), (net[2], "weight"), (net[2], "bias")]
    scores = {(net[2], "bias"): lib.ones(5, dtype=lib.float64) * 100}
    prune.global_unstructured(
        params, pruning_method=prune.L1Unstructured, importance_scores=scores, amount=0.4
    )
    return [_np(getattr(m, n + "_mask")) for m, n in params] + [_hook_names(net[2])]


def test_global_unstructured() -> None:
    _compare(_global(torch), _global(chainrule))


def _random_counts(lib: Any) -> list[Any]:
    prune = lib.nn.utils.prune
    net = _net(lib)
    prune.random_unstructured(net[2], "weight", amount=0.3)
    prune.random_structured(net[0], "weight", amount=2, dim=0)
    prune.random_unstructured(net[2], "weight", amount=7)
    conv_channels = (net[0].weight_mask.sum(dim=(1, 2, 3)) != 0).sum().item()
    return [int((net[2].weight_mask == 0).sum()), conv_channels, _hook_names(net[2])]


def test_random_methods_prune_the_right_counts() -> None:
    assert _random_counts(chainrule) == _random_counts(torch)


def _custom(lib: Any) -> list[Any]:
    prune = lib.nn.utils.prune

    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.flatten()[::2] = 0
            return mask

    fc = _net(lib)[2]
    FooBarPruningMethod.apply(fc, "bias")
    FooBarPruningMethod.apply(fc, "bias")
    method = prune.L1Unstructured(amount=0.5)
    pruned = method.prune(lib.tensor([3.0, -1.0, 2.0, 0.5]))
    identity = prune.identity(lib.nn.Linear(2, 2), "weight")
    return [_np(fc.bias_mask), _np(pruned), _np(identity.weight_mask), _hook_names(fc)]


def test_custom_method_and_prune() -> None:
    _compare(_custom(torch), _custom(chainrule))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", "x"),
        lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 1.5),
        lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", -1),
        lambda lib: lib.nn.utils.prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", 5),
        lambda lib: lib.nn.utils.prune.ln_structured(lib.nn.Linear(2, 2), "bias", 1, 2, 0),
        lambda lib: lib.nn.utils.prune.ln_structured(lib.nn.Linear(2, 2), "weight", 1, 2, 3),
        lambda lib: lib.nn.utils.prune.random_structured(lib.nn.Linear(2, 2), "weight", 3, 0),
        lambda lib: lib.nn.utils.prune.remove(lib.nn.Linear(2, 2), "weight"),
        lambda lib: lib.nn.utils.prune.l1_unstructured(
            lib.nn.Linear(2, 2), "weight", 1, importance_scores=lib.ones(3)
        ),
        lambda lib: lib.nn.utils.prune.global_unstructured(
            [(lib.nn.Linear(2, 2), "weight")], lib.nn.utils.prune.LnStructured, amount=1, n=1
        ),
        lambda lib: lib.nn.utils.prune.global_unstructured(3, lib.nn.utils.prune.Identity),
        lambda lib: lib.nn.utils.prune.global_unstructured(
            [], lib.nn.utils.prune.Identity, importance_scores=[]
        ),
        lambda lib: lib.nn.utils.prune.PruningContainer().add_pruning_method(3),
    ],
)
def test_errors(call: Any) -> None:
    same_outcome(call)


def test_failed_pruning_leaves_the_parameter() -> None:
    seen = []
    for lib in LIBS:
        layer = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError):
            lib.nn.utils.prune.l1_unstructured(layer, "weight", 5)
        names = [n for n, _ in layer.named_parameters()]
        seen.append((names, list(layer._buffers), lib.nn.utils.prune.is_pruned(layer)))
    assert seen[1] == seen[0]
