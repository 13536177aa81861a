"""In-place ops against PyTorch where they used to differ: the unrecorded arithmetic fast path
(values and dtypes as the out-of-place op), zero gradients of the ops that overwrite their input,
``CopyBackwards``' name, the in-place inverse hyperbolic functions, views rewritten through their
base, and what in-place ops pack under saved-tensor hooks."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_tensor_api import assert_same

# ----------------------------------------------------------------------------------------------
# The unrecorded fast path of add_/sub_/mul_/div_ gives the out-of-place op's values


DTYPES = ("float16", "float32", "float64", "int64", "int32", "int8", "uint8")
VALUES = [1.0, 3.0, 1000.0, 65504.0, 0.1, -7.0, 0.0, 6.0]
OTHERS = [0.3, 7.0, 1.5, 2.0, 0.7, 3.0, -2.5, 0.25]

# (method, argument, keyword arguments); "T" is a tensor of the same dtype as self.
CALLS = [
    ("mul_", 0.1, {}), ("mul_", 1e-8, {}), ("mul_", 3, {}), ("mul_", 1e5, {}),
    ("div_", 120000, {}), ("div_", 3, {}), ("div_", 0.1, {}),
    ("add_", 0.1, {}), ("sub_", 0.1, {}), ("add_", 3, {}),
    ("add_", "T", {}), ("sub_", "T", {}), ("mul_", "T", {}), ("div_", "T", {}),
    ("add_", "T", {"alpha": 0.1}), ("sub_", "T", {"alpha": 3}), ("add_", "T", {"alpha": 3}),
    ("add_", 3, {"alpha": 0.1}), ("add_", 1, {"alpha": 2}), ("sub_", 0.5, {"alpha": -3}),
]


def _operands(lib: Any, dtype: str, argument: Any) -> tuple[Any, Any]:
    self = lib.tensor(np.array(VALUES).astype(dtype))
    other = lib.tensor(np.array(OTHERS).astype(dtype)) if argument == "T" else argument
    return self, other


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("method", "argument", "kwargs"), CALLS,
                         ids=[f"{m}-{a}-{k}" for m, a, k in CALLS])
def test_inplace_arithmetic_gives_the_out_of_place_result(
    dtype: str, method: str, argument: Any, kwargs: dict[str, Any]
) -> None:
    """In place is the out-of-place op written back: the same values to the bit when its dtype
    is self's, else PyTorch's error (checked for chainrule against itself, every combination;
    against PyTorch below)."""
    self, other = _operands(chainrule, dtype, argument)
    try:
        expected = getattr(self, method[:-1])(other, **kwargs)
    except (RuntimeError, TypeError, OverflowError) as error:
        with pytest.raises(type(error)):
            getattr(self, method)(other, **kwargs)
        return
    if expected.dtype != self.dtype:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            getattr(self, method)(other, **kwargs)
        return
    out = getattr(self, method)(other, **kwargs)
    assert out is self
    np.testing.assert_array_equal(self.numpy(), expected.numpy())
    assert np.array_equal(np.signbit(self.numpy()), np.signbit(expected.numpy()))


TORCH_CALLS = [
    ("float16", "mul_", 0.1, {}), ("float16", "mul_", 1e-8, {}), ("float16", "mul_", 1e5, {}),
    ("float16", "div_", 120000, {}),
]
# float32 add_/sub_ with alpha: within an ulp of PyTorch's fused multiply-add
# (tests/test_add_alpha.py), not bit for bit.


@pytest.mark.parametrize(("dtype", "method", "argument", "kwargs"), TORCH_CALLS,
                         ids=[f"{d}-{m}-{a}-{k}" for d, m, a, k in TORCH_CALLS])
def test_inplace_arithmetic_under_no_grad_matches_pytorch(
    dtype: str, method: str, argument: Any, kwargs: dict[str, Any]
) -> None:
    def run(lib: Any) -> Any:
        self, other = _operands(lib, dtype, argument)
        with lib.no_grad():
            return getattr(self, method)(other, **kwargs)

    assert_same(run)


def test_mul_and_div_in_place_take_no_alpha() -> None:
    for method in ("mul_", "div_"):
        def run(lib: Any, method: str = method) -> Any:
            with lib.no_grad():
                return getattr(lib.ones(3), method)(2, alpha=1)

        with pytest.raises(TypeError, match=re.escape("alpha")):
            run(chainrule)
        with pytest.raises(TypeError, match=re.escape("alpha")):
            run(torch)


# ----------------------------------------------------------------------------------------------
# Ops that overwrite their input send it a zero gradient, zero also where the cotangent is not
# finite (PyTorch's zeros_like, not grad * 0)

OVERWRITES = {
    "fill_": lambda lib, t: t.fill_(2.0),
    "fill_tensor": lambda lib, t: t.fill_(lib.tensor(2.0)),
    "zero_": lambda lib, t: t.zero_(),
    "uniform_": lambda lib, t: t.uniform_(0.5, 0.5),
    "normal_": lambda lib, t: t.normal_(0.25, 0.0),
    "copy_": lambda lib, t: t.copy_(lib.ones(4)),
    "fill_view": lambda lib, t: (t[1:3].fill_(5.0), t)[1],
    "zero_view": lambda lib, t: (t[1:3].zero_(), t)[1],
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(OVERWRITES))
def test_overwritten_input_gets_zeros_for_non_finite_cotangents(
    name: str, create_graph: bool
) -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = OVERWRITES[name](lib, x.clone())
        cotangent = lib.tensor([float("inf"), -float("inf"), float("nan"), 1.0])
        (g,) = lib.autograd.grad(y, x, cotangent, create_graph=create_graph)
        return g.detach()

    assert_same(run)


# ----------------------------------------------------------------------------------------------
# CopyBackwards is named as PyTorch's C++ node


def test_copy_backwards_name_and_reprs() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.zeros(2).copy_(x)
        fn = y.grad_fn
        return (fn.name().replace("torch::", "chainrule::"), repr(fn).split(" object")[0],
                repr(y), type(fn).__name__)

    assert_same(run)


# ----------------------------------------------------------------------------------------------
# In-place acosh_/asinh_/atanh_: PyTorch records *Backward1, whose backward raises

INVERSE_HYPERBOLIC = {"acosh": [1.5, 3.0], "asinh": [-1.0, 0.5], "atanh": [0.3, -0.5]}


@pytest.mark.parametrize("name", sorted(INVERSE_HYPERBOLIC))
def test_inverse_hyperbolic_in_place_records_a_node_whose_backward_raises(name: str) -> None:
    def recorded(lib: Any) -> Any:
        x = lib.tensor(INVERSE_HYPERBOLIC[name], requires_grad=True)
        y = getattr(x.clone(), name + "_")()
        fn = y.grad_fn
        saved = [a for a in dir(fn) if a.startswith("_saved")]
        # (values to 5 places: NumPy's and PyTorch's float32 acosh may differ in the last bit)
        values = [round(v, 5) for v in y.tolist()]
        return values, repr(y).split("grad_fn=")[1], fn.name(), type(
            fn.next_functions[0][0]).__name__, saved

    assert_same(recorded)

    def backward(lib: Any) -> Any:
        x = lib.tensor(INVERSE_HYPERBOLIC[name], requires_grad=True)
        getattr(x.clone(), name + "_")().sum().backward()

    def through_view(lib: Any) -> Any:
        x = lib.tensor(INVERSE_HYPERBOLIC[name], requires_grad=True)
        y = x * 1
        getattr(y[:1], name + "_")()
        return lib.autograd.grad(y.sum(), x, create_graph=True)

    def out_of_place(lib: Any) -> Any:  # keeps its derivative
        x = lib.tensor(INVERSE_HYPERBOLIC[name], dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(x)
        return y.grad_fn.name(), lib.autograd.grad(y.sum(), x)

    assert_same(out_of_place)
    for program in (backward, through_view):
        assert_same(program)
        with pytest.raises(NotImplementedError, match=re.escape(
            f"the derivative for 'inplace version of {name}' is not implemented."
        )):
            program(chainrule)


# ----------------------------------------------------------------------------------------------
# A view whose memory was written in place (also under no_grad, through its base or another
# view) gets a regenerated history: AsStridedBackward0 of its base's current history


def _node_names(fn: Any) -> tuple:
    return fn.name(), [(None if n is None else type(n).__name__, i) for n, i in fn.next_functions]


def _written_under_no_grad(how: str) -> Any:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 2
        v = b[1:3]
        with lib.no_grad():
            {"base": lambda: b.mul_(2), "view": lambda: v.mul_(2),
             "other_view": lambda: b[0:2].mul_(2), "detached": lambda: b.detach().add_(1),
             "base_zero": lambda: b.zero_()}[how]()
        names = _node_names(v.grad_fn)
        return names, repr(v), v._version, lib.autograd.grad((v * v).sum(), x)

    return program


@pytest.mark.parametrize("how", ["base", "view", "other_view", "detached", "base_zero"])
def test_view_written_under_no_grad_gets_as_strided_history(how: str) -> None:
    assert_same(_written_under_no_grad(how))


def test_view_of_a_leaf_written_under_no_grad() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        v = x[1:3]
        with lib.no_grad():
            x.mul_(2)
        return _node_names(v.grad_fn), lib.autograd.grad((v * v).sum(), x)

    assert_same(run)


def test_view_of_a_view_and_of_reshapes_are_regenerated_from_the_root_base() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 1
        row, flat, column = b[1], b.view(4), b.unsqueeze(0)
        w = row[0:1]
        with lib.no_grad():
            b.add_(1)
        return ([_node_names(t.grad_fn) for t in (w, flat, column)],
                lib.autograd.grad(w.sum() + flat[3] + column.sum(), x))

    assert_same(run)


def test_view_history_is_regenerated_once_per_write() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        v = b[1:3]
        before = v.grad_fn
        with lib.no_grad():
            b.mul_(2)
        first, again = v.grad_fn, v.grad_fn
        with lib.no_grad():
            b.mul_(2)
        return before is first, first is again, again is v.grad_fn, v.grad_fn is not first

    assert_same(run)


def test_hooks_of_a_view_stay_with_its_old_history_and_retain_grad_moves() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        v = b[1:3]
        seen: list[Any] = []
        v.register_hook(lambda g: seen.append(g.clone()))
        v.retain_grad()
        with lib.no_grad():
            b.mul_(2)
        (v * 3).sum().backward()
        return seen, v.grad, x.grad

    assert_same(run)


def test_view_of_a_base_that_starts_requiring_grad_after_a_write() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0, 4.0])
        v = x[1:3]
        x.mul_(2)
        x.requires_grad_()
        return v.requires_grad, _node_names(v.grad_fn), lib.autograd.grad(v.sum(), x)

    assert_same(run)


# ----------------------------------------------------------------------------------------------
# Writing an op's result in place under saved_tensors_hooks (inplace_call, for nn's inplace=True
# activations and dropout): what is packed is what PyTorch's in-place op packs

INPLACE_FORMS = {
    # name: (chainrule's out-of-place function and arguments, PyTorch's in-place call)
    "hardtanh": (lambda F: (F.hardtanh, -0.5, 1.0), lambda F, t: F.hardtanh_(t, -0.5, 1.0)),
    "silu": (lambda F: (F.silu,), lambda F, t: F.silu(t, inplace=True)),
    "mish": (lambda F: (F.mish,), lambda F, t: F.mish(t, inplace=True)),
    "hardsigmoid": (lambda F: (F.hardsigmoid,), lambda F, t: F.hardsigmoid(t, inplace=True)),
    "hardswish": (lambda F: (F.hardswish,), lambda F, t: F.hardswish(t, inplace=True)),
    "relu": (lambda F: (F.relu,), lambda F, t: F.relu_(t)),
    "mul_mask": (lambda F: (chainrule.mul, chainrule.tensor([0.0, 2.0, 2.0]).double()),
                 lambda F, t: t.mul_(torch.tensor([0.0, 2.0, 2.0]).double())),
}


@pytest.mark.parametrize("name", sorted(INPLACE_FORMS))
def test_inplace_call_packs_what_pytorch_packs(name: str) -> None:
    ours_args, theirs_call = INPLACE_FORMS[name]
    from chainrule.ops.inplace import inplace_call

    def run(lib: Any) -> Any:
        packed: list[Any] = []

        def pack(t: Any) -> Any:
            fn = t.grad_fn
            packed.append((t.tolist(), t.requires_grad, None if fn is None else fn.name()))
            return t

        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.clone()
            if lib is chainrule:
                fn, *args = ours_args(chainrule.nn.functional)
                z = inplace_call(y, fn, *args)
            else:
                z = theirs_call(torch.nn.functional, y)
        rounded = [([round(v, 5) for v in values], rg, fn) for values, rg, fn in packed]
        (g,) = lib.autograd.grad(z.sum(), x)  # (to 10 places: mish's is an ulp off PyTorch's)
        return z is y, y._version, z.grad_fn.name(), rounded, [round(v, 10) for v in g.tolist()]

    assert_same(run)
