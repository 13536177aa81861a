"""``chainrule.x``, ``Tensor.x`` and ``Tensor.x_`` exist exactly where PyTorch has them.

Generated from chainrule's own namespace: every public function it shares with ``torch`` must be
a Tensor method and have an in-place method just when PyTorch's has, and the Tensor class has no
public name PyTorch's lacks. (That each of them computes what PyTorch computes is the op sweep's
job: tests/test_op_coverage.py checks that the sweep calls them all.)
"""

from __future__ import annotations

import inspect

import pytest
import torch

import chainrule


def _shared_functions() -> list[str]:
    names = []
    for name in dir(chainrule):
        value = getattr(chainrule, name)
        if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        if callable(value) and callable(getattr(torch, name, None)):
            names.append(name)
    return names


SHARED = _shared_functions()


def test_the_namespace_is_large_enough_to_mean_something() -> None:
    assert len(SHARED) > 200


@pytest.mark.parametrize("name", SHARED)
def test_method_exists_where_pytorch_has_one(name: str) -> None:
    assert hasattr(chainrule.Tensor, name) == hasattr(torch.Tensor, name), name


@pytest.mark.parametrize("name", SHARED)
def test_in_place_method_exists_where_pytorch_has_one(name: str) -> None:
    assert hasattr(chainrule.Tensor, name + "_") == hasattr(torch.Tensor, name + "_"), name + "_"


def test_tensor_has_no_public_name_pytorch_lacks() -> None:
    extra = [n for n in dir(chainrule.Tensor) if not n.startswith("_")
             and not hasattr(torch.Tensor, n)]
    assert extra == []


def test_in_place_methods_return_self_and_bump_the_version() -> None:
    """Every in-place method of a shared function returns ``self`` and counts a write (but
    ``detach_``, which writes nothing), as PyTorch's do."""
    failures = []
    for name in SHARED:
        method = getattr(chainrule.Tensor, name + "_", None)
        if method is None:
            continue
        args = _ARGUMENTS.get(name, ())
        if name in _INTEGER_ONLY:
            x = chainrule.tensor([[1, 2], [3, 4]])
        else:  # (float_power_ writes float64 only, as in PyTorch)
            x = chainrule.tensor([[0.25, 0.5], [0.75, 0.125]], dtype=chainrule.float64)
        if name in _SELF:  # (addmv_ writes a vector, baddbmm_ a batch of matrices)
            x = _SELF[name](x)
        before = x._version
        try:
            out = method(x, *args)
        except Exception as error:  # noqa: BLE001 - collected and reported together
            failures.append(f"{name}_: {type(error).__name__}: {error}")
            continue
        if out is not x or (x._version <= before) != (name == "detach"):
            failures.append(f"{name}_: returned another tensor or did not bump the version")
    assert failures == []


def _ones(*shape: int) -> chainrule.Tensor:
    return chainrule.ones(*shape, dtype=chainrule.float64)


# Arguments for in-place methods that need some (the others take none or a number).
_ARGUMENTS: dict[str, tuple] = {
    "add": (1.0,), "sub": (1.0,), "subtract": (1.0,), "mul": (2.0,), "multiply": (2.0,),
    "div": (2.0,), "divide": (2.0,), "true_divide": (2.0,), "floor_divide": (2.0,),
    "remainder": (2.0,), "fmod": (2.0,), "pow": (2.0,), "float_power": (2.0,),
    "atan2": (_ones(2, 2),), "arctan2": (_ones(2, 2),),
    "hypot": (_ones(2, 2),), "xlogy": (2.0,), "copysign": (-1.0,),
    "lerp": (_ones(2, 2), 0.5), "addcmul": (_ones(2), _ones(2, 1)),
    "addcdiv": (_ones(2), _ones(2, 1)), "clamp": (0.2,), "clip": (0.2,), "clamp_min": (0.2,),
    "clamp_max": (0.2,), "eq": (0.5,), "ne": (0.5,), "lt": (0.5,), "le": (0.5,), "gt": (0.5,),
    "ge": (0.5,), "greater": (0.5,), "greater_equal": (0.5,), "less": (0.5,),
    "less_equal": (0.5,), "not_equal": (0.5,), "fill": (1.0,), "polygamma": (1,),
    "cumsum": (0,), "cumprod": (1,), "transpose": (0, 1), "swapaxes": (0, 1),
    "swapdims": (0, 1), "unsqueeze": (0,), "as_strided": ((2,), (1,)),
    "addmm": (_ones(2, 2), _ones(2, 2)), "addmv": (_ones(2, 3), _ones(3)),
    "addr": (_ones(2), _ones(2)), "baddbmm": (_ones(1, 2, 3), _ones(1, 3, 2)),
    "addbmm": (_ones(4, 2, 3), _ones(4, 3, 2)),
    "logical_and": (_ones(2, 2),), "logical_or": (_ones(2, 2),),
    "logical_xor": (_ones(2, 2),), "masked_fill": (_ones(2, 2) > 0, 1.0),
    "index_add": (0, chainrule.tensor([1]), _ones(1, 2)),
    "index_fill": (0, chainrule.tensor([1]), 1.0),
    "index_put": ((chainrule.tensor([1]),), _ones(2)),
    "put": (chainrule.tensor([1]), _ones(1)),
    "scatter": (0, chainrule.tensor([[1, 0]]), _ones(1, 2)),
    "scatter_add": (0, chainrule.tensor([[1, 0]]), _ones(1, 2)),
    "scatter_reduce": (0, chainrule.tensor([[1, 0]]), _ones(1, 2), "sum"),
    "index_reduce": (0, chainrule.tensor([1]), _ones(1, 2), "prod"),
    "index_copy": (0, chainrule.tensor([1]), _ones(1, 2)),
    "masked_scatter": (_ones(2, 2) > 0, _ones(4)),
    "renorm": (2, 0, 1.0), "bernoulli": (0.5,), "sgn": (), "heaviside": (_ones(2, 2),),
    "ldexp": (_ones(2, 2),), "nextafter": (_ones(2, 2),),
    "logit": (), "mvlgamma": (1,), "fmax": (_ones(2, 2),), "igamma": (_ones(2, 2),),
    "igammac": (_ones(2, 2),),
    "bitwise_and": (6,), "bitwise_or": (6,), "bitwise_xor": (6,), "bitwise_left_shift": (2,),
    "bitwise_right_shift": (1,), "gcd": (chainrule.tensor([[4, 6], [9, 2]]),),
    "lcm": (chainrule.tensor([[4, 6], [9, 2]]),),
}
# In-place ops whose self is no matrix.
_SELF = {"addmv": lambda x: x[0].clone(), "baddbmm": lambda x: x[None].clone()}
# Integer-only in-place ops: run on an int64 tensor.
_INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
                 "bitwise_right_shift", "gcd", "lcm"}
