"""The ``new_*`` family, the tensor predicates (is_signed, is_nonzero, is_same_size, is_neg ...),
typename, the inverse hyperbolic aliases, multiply and the torch-level in-place functions
against PyTorch: values, dtypes, requires_grad, nodes, warnings and errors."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

nan = float("nan")


def _x(lib: Any) -> Any:
    return lib.arange(6.0).reshape(2, 3)


def _i(lib: Any) -> Any:
    return lib.arange(3)


def _meta(t: Any) -> tuple:
    """What an uninitialised tensor can be compared by."""
    return tuple(t.shape), str(t.dtype), t.stride(), t.requires_grad, t.is_leaf


CASES = {
    "new_ones": lambda lib: _x(lib).new_ones(2, 3),
    "new_ones_tuple": lambda lib: _x(lib).new_ones((2,)),
    "new_ones_size_kw": lambda lib: _x(lib).new_ones(size=(2,)),
    "new_ones_Size": lambda lib: _x(lib).new_ones(lib.Size([2, 1])),
    "new_ones_0d": lambda lib: _x(lib).new_ones(()),
    "new_ones_dtype": lambda lib: _x(lib).new_ones(2, dtype=lib.int32),
    "new_ones_grad": lambda lib: _x(lib).new_ones(2, requires_grad=True),
    "new_ones_int_grad": lambda lib: _i(lib).new_ones(2, requires_grad=True),
    "new_ones_grad_int_flag": lambda lib: _x(lib).new_ones(2, requires_grad=1),
    "new_ones_negative": lambda lib: _x(lib).new_ones(-1),
    "new_ones_str": lambda lib: _x(lib).new_ones("a"),
    "new_ones_no_size": lambda lib: _x(lib).new_ones(),
    "new_ones_bad_kw": lambda lib: _x(lib).new_ones(2, foo=1),
    "new_zeros_int": lambda lib: _i(lib).new_zeros([2]),
    "new_zeros_half": lambda lib: _x(lib).half().new_zeros(2),
    "new_zeros_f64_grad": lambda lib: _x(lib).new_zeros(2, dtype=lib.float64, requires_grad=True),
    "new_full": lambda lib: _x(lib).new_full((2,), 3),
    "new_full_int_truncates": lambda lib: _i(lib).new_full((2,), 2.7),
    "new_full_bool_value": lambda lib: _x(lib).new_full((2,), True),
    "new_full_big": lambda lib: _i(lib).new_full((1,), 1e10),
    "new_full_keywords": lambda lib: _x(lib).new_full(size=(2,), fill_value=1),
    "new_full_tensor_value": lambda lib: _x(lib).new_full((2,), lib.tensor(4)),
    "new_full_int_size": lambda lib: _x(lib).new_full(2, 3),
    "new_full_no_value": lambda lib: _x(lib).new_full((2,)),
    "new_tensor": lambda lib: _i(lib).new_tensor([1.5, 2]),
    "new_tensor_float_self": lambda lib: _x(lib).new_tensor([1, 2]),
    "new_tensor_number": lambda lib: _x(lib).new_tensor(5),
    "new_tensor_bool": lambda lib: _x(lib).new_tensor([True]),
    "new_tensor_grad": lambda lib: _x(lib).new_tensor([1, 2], requires_grad=True),
    "new_tensor_dtype": lambda lib: _x(lib).new_tensor([1, 2], dtype=lib.int16),
    "new_tensor_empty": lambda lib: _x(lib).new_tensor([]),
    "new_tensor_no_data": lambda lib: _x(lib).new_tensor(),
    "new_tensor_numpy": lambda lib: _x(lib).new_tensor(_i(lib).numpy()),
    "new_legacy_sizes": lambda lib: _x(lib).new(2, 3).shape,
    "new_legacy_data": lambda lib: _x(lib).new([1, 2]),
    "new_legacy_int_data": lambda lib: _i(lib).new([1.7, 2]),
    "new_legacy_empty": lambda lib: _x(lib).new(),
    "new_legacy_Size": lambda lib: _x(lib).new(lib.Size([2])).shape,
    "new_legacy_number": lambda lib: _x(lib).new(2.5),
    "new_legacy_other_dtype": lambda lib: _x(lib).new(_i(lib)),
    "new_empty": lambda lib: _meta(_x(lib).new_empty(3)),
    "new_empty_dtype": lambda lib: _meta(_x(lib).new_empty((2, 3), dtype=lib.float64)),
    "new_empty_strided": lambda lib: _meta(_x(lib).new_empty_strided((2, 3), (1, 2))),
    "new_empty_strided_grad": lambda lib: _meta(
        _x(lib).new_empty_strided((2, 3), (3, 1), requires_grad=True)
    ),
    "new_empty_strided_empty": lambda lib: _meta(_x(lib).new_empty_strided((0, 3), (3, 1))),
    "new_empty_strided_dims": lambda lib: _x(lib).new_empty_strided((2, 3), (1,)),
    "new_from_grad_tensor": lambda lib: _x(lib).requires_grad_().new_ones(2).requires_grad,
    "is_signed": lambda lib: [
        _x(lib).is_signed(),
        lib.is_signed(_i(lib)),
        lib.tensor([1], dtype=lib.uint8).is_signed(),
        lib.tensor([True]).is_signed(),
        _x(lib).half().is_signed(),
    ],
    "is_signed_number": lambda lib: lib.is_signed(3),
    "is_nonzero": lambda lib: [
        lib.tensor([0.0]).is_nonzero(),
        lib.tensor([[3]]).is_nonzero(),
        lib.tensor(nan).is_nonzero(),
        lib.is_nonzero(lib.tensor(-0.0)),
        lib.tensor([False]).is_nonzero(),
    ],
    "is_nonzero_empty": lambda lib: lib.tensor([]).is_nonzero(),
    "is_nonzero_many": lambda lib: _x(lib).is_nonzero(),
    "is_nonzero_number": lambda lib: lib.is_nonzero(3),
    "is_same_size": lambda lib: [
        lib.is_same_size(_x(lib), _x(lib)[None]),
        _x(lib).is_same_size(_x(lib) * 2),
        _x(lib).t().is_same_size(_x(lib).reshape(3, 2)),
    ],
    "is_same_size_number": lambda lib: lib.is_same_size(_x(lib), 3),
    "is_same_size_number_first": lambda lib: lib.is_same_size(3, _x(lib)),
    "is_neg": lambda lib: [_x(lib).is_neg(), lib.is_neg(-_x(lib))],
    "is_neg_number": lambda lib: lib.is_neg(3),
    "resolve_neg_number": lambda lib: lib.resolve_neg(3),
    "get_device": lambda lib: [_x(lib).get_device(), lib.get_device(_i(lib))],
    "get_device_number": lambda lib: lib.get_device(3),
    "is_cpu": lambda lib: _x(lib).is_cpu,
    "is_inference": lambda lib: lib.is_inference(_x(lib)),
    "is_inference_number": lambda lib: lib.is_inference(3),
    "typename": lambda lib: [
        lib.typename(_x(lib)),
        lib.typename(_i(lib)),
        lib.typename(_x(lib).double()),
        lib.typename(lib.tensor(True)),
        lib.typename(lib.tensor([1 + 1j])),
        lib.typename(_x(lib).half()),
        lib.typename(3),
        lib.typename(int),
        lib.typename("s"),
        lib.typename(None),
    ],
    "arcsinh": lambda lib: lib.arcsinh(_x(lib)),
    "arccosh": lambda lib: lib.arccosh(_x(lib) + 1),
    "arctanh": lambda lib: lib.arctanh(_x(lib) / 7),
    "arcsinh_method": lambda lib: (_x(lib) - 2).arcsinh(),
    "arccosh_in_place": lambda lib: (_x(lib) + 1).arccosh_(),
    "arctanh_in_place": lambda lib: (_x(lib) / 9).arctanh_(),
    "multiply": lambda lib: lib.multiply(_x(lib), 2),
    "multiply_method": lambda lib: _x(lib).multiply(_x(lib)),
    "multiply_in_place": lambda lib: _x(lib).multiply_(_i(lib)),
    "multiply_in_place_int": lambda lib: _i(lib).multiply_(1.5),
    "torch_abs_": lambda lib: lib.abs_(-_x(lib)),
    "torch_exp_": lambda lib: lib.exp_(_x(lib)),
    "torch_clamp_": lambda lib: lib.clamp_(_x(lib), min=0.5, max=3.5),
    "torch_clamp_none": lambda lib: lib.clamp_(_x(lib)),
    "torch_clip_": lambda lib: lib.clip_(_x(lib), 1, 2),
    "torch_nan_to_num_": lambda lib: lib.nan_to_num_(lib.tensor([nan, 1.0]), nan=3.0),
    "torch_xlogy_": lambda lib: lib.xlogy_(_x(lib), 2.0),
    "torch_zero_": lambda lib: lib.zero_(_x(lib)),
    "torch_fill_": lambda lib: lib.fill_(_x(lib), 3),
    "torch_round_": lambda lib: lib.round_(_x(lib) / 4, decimals=1),
    "torch_arcsinh_": lambda lib: lib.arcsinh_(_x(lib)),
    "torch_sqrt_int": lambda lib: lib.sqrt_(_i(lib)),
    "torch_abs_number": lambda lib: lib.abs_(3),
    "torch_exp_input_kw": lambda lib: lib.exp_(input=lib.ones(1)),
    "torch_index_put_": lambda lib: lib.index_put_(_x(lib), (lib.tensor([1]),), lib.tensor(9.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


IN_PLACE = [
    "abs_",
    "exp_",
    "sigmoid_",
    "tanh_",
    "neg_",
    "square_",
    "reciprocal_",
    "arcsinh_",
    "arccosh_",
    "arctanh_",
    "asinh_",
]


@pytest.mark.parametrize("name", IN_PLACE)
def test_torch_level_in_place_records_the_methods_node(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([0.25, 0.5], requires_grad=True)
        y = x * 1
        out = getattr(lib, name)(y)
        seen.append((out is y, out.grad_fn.name(), y._version))
    assert seen[0] == seen[1]


def test_new_results_are_new_leaves() -> None:
    for lib in (chainrule, torch):
        x = lib.ones(2, requires_grad=True)
        for out in (x.new_ones(2), x.new_zeros(2), x.new_full((2,), 1.0), x.new_empty(2)):
            assert out.is_leaf and not out.requires_grad and out.grad_fn is None


def test_new_tensor_from_tensor_warns_and_copies() -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.arange(3.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.arange(2).new_tensor(x * 1.5)
        assert caught[0].filename == __file__
        x.data[0] = 7  # a copy: the original's later changes do not show
        seen.append((str(out), out.requires_grad, [str(w.message) for w in caught]))
    assert seen[0] == seen[1]


def test_legacy_new_shares_memory_with_a_tensor_of_its_dtype() -> None:
    for lib in (chainrule, torch):
        x = lib.arange(3.0)
        y = x.new(x)
        y[0] = 5
        assert x[0].item() == 5


def test_multiply_records_mul() -> None:
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = lib.multiply(x, x)
        out.sum().backward()
        assert out.grad_fn.name() == "MulBackward0"
        assert x.grad.tolist() == [2.0, 4.0]


def test_detach_in_place_drops_the_forward_tangent() -> None:
    seen = []
    for lib in (chainrule, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(lib.ones(2), lib.ones(2)) * 1
            lib.detach_(y)
            seen.append(fw.unpack_dual(y).tangent)
    assert seen == [None, None]
