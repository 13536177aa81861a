"""The integer shifts (``bitwise_left_shift``, ``bitwise_right_shift``, ``<<``, ``>>``, their
reflected and in-place forms) against PyTorch.

Values and dtypes over every pair of integer types (bool and uint8 included) at the edges: shift
by 0, by negative amounts, by the bit width and more, of negative values and of values that
overflow; numbers on either side (out-of-range ones wrap as PyTorch converts them); broadcasting;
in place. And PyTorch's errors: its kernels take no bool, floating, complex or uint16/32/64
result (``NotImplementedError``), an in-place result must fit ``self`` (shape, then dtype, then
the kernel's error), and arguments that match none of its overloads are a ``TypeError`` listing
them. A call that raises changes nothing.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome, same_outcome

INTEGERS = ["uint8", "int8", "int16", "int32", "int64"]
DTYPES = ["bool", *INTEGERS]


def _values(dtype: str) -> np.ndarray:
    """Edge values of ``dtype``: 0, ±1, small ones, the extremes and their neighbours."""
    if dtype == "bool":
        return np.array([False, True])
    info = np.iinfo(dtype)
    pool = [0, 1, 2, 3, 5, 7, -1, -2, -5, info.max, info.max - 1, info.min, info.min + 1,
            info.max // 2 + 1, info.min // 2]
    return np.array(sorted({v for v in pool if info.min <= v <= info.max}), dtype=dtype)


def _amounts(dtype: str) -> np.ndarray:
    """Shift amounts of ``dtype``: 0, inside the width, at and beyond every integer type's
    width, negative ones and the extremes."""
    if dtype == "bool":
        return np.array([False, True])
    info = np.iinfo(dtype)
    pool = [0, 1, 2, 3, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64, 65, 100, 127, 128, 255,
            -1, -2, -7, -8, -63, -64, -65, -128, info.max, info.min]
    return np.array(sorted({v for v in pool if info.min <= v <= info.max}), dtype=dtype)


def _grid(a_dtype: str, b_dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every edge value against every shift amount, as two flat arrays."""
    a, b = np.meshgrid(_values(a_dtype), _amounts(b_dtype), indexing="ij")
    return a.ravel(), b.ravel()


def _result(lib: Any, fn: Callable[[Any], Any]) -> tuple:
    """What ``fn(lib)`` gives, exactly: the dtype, values, shape and strides of a tensor (all
    elements, where ``str`` would elide them), or the exception's type and message."""
    try:
        value = fn(lib)
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error).replace("chainrule", "torch")
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        return ("ok", str(value.dtype).split(".")[-1], value.tolist(), tuple(value.shape),
                value.stride(), value.requires_grad)
    return "ok", repr(value).replace("chainrule", "torch")


def _same(fn: Callable[[Any], Any]) -> None:
    ours, theirs = _result(chainrule, fn), _result(torch, fn)
    assert ours == theirs


def _t(lib: Any, array: np.ndarray) -> Any:
    return lib.from_numpy(np.array(array, copy=True))


BINARY_FORMS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "torch.bitwise_left_shift": lambda lib, a, b: lib.bitwise_left_shift(a, b),
    "torch.bitwise_right_shift": lambda lib, a, b: lib.bitwise_right_shift(a, b),
    "Tensor.bitwise_left_shift": lambda lib, a, b: a.bitwise_left_shift(b),
    "Tensor.bitwise_right_shift": lambda lib, a, b: a.bitwise_right_shift(b),
    "<<": lambda lib, a, b: a << b,
    ">>": lambda lib, a, b: a >> b,
    "__rlshift__": lambda lib, a, b: b.__rlshift__(a),
    "__rrshift__": lambda lib, a, b: b.__rrshift__(a),
}


@pytest.mark.parametrize("form", BINARY_FORMS)
@pytest.mark.parametrize(("a_dtype", "b_dtype"), list(itertools.product(DTYPES, DTYPES)))
def test_values_and_dtypes_at_the_edges(form: str, a_dtype: str, b_dtype: str) -> None:
    """Every edge value shifted by every edge amount, each pair of types (promoted as PyTorch
    promotes: uint8 with int8 is int16; bool with bool is PyTorch's error)."""
    a, b = _grid(a_dtype, b_dtype)
    fn = BINARY_FORMS[form]
    _same(lambda lib: fn(lib, _t(lib, a), _t(lib, b)))


@pytest.mark.parametrize("dtype", INTEGERS)
@pytest.mark.parametrize("form", ["<<", ">>"])
def test_long_tensors_agree_with_pytorchs_vectorised_kernel(dtype: str, form: str) -> None:
    """PyTorch computes long contiguous tensors with SIMD code, short ones element by element:
    both paths at the edges, and with one side a broadcast number (another of its loops)."""
    a, b = _grid(dtype, dtype)
    a, b = np.tile(a, 17), np.tile(b, 17)
    fn = BINARY_FORMS[form]
    _same(lambda lib: fn(lib, _t(lib, a), _t(lib, b)))
    for amount in (0, 3, -1, 7, 8, 31, 64, 200):
        _same(lambda lib, n=amount: fn(lib, _t(lib, a), n))
    for value in (1, -1, 100, -128):
        _same(lambda lib, n=value: fn(lib, n, _t(lib, b)))


NUMBERS = [0, 1, 3, 7, 8, 15, 16, 31, 32, 63, 64, 65, 100, 255, 256, 257, 300, -1, -3, -8, -64,
           -256, 2**31, 2**32 + 1, 2**40 + 3, 2**63 - 1, -2**63, 2**63, 2**63 + 5, 2**64 - 1,
           2**64, -2**63 - 1, True, False, 1.0, 2.5, -1.5, 1j]


@pytest.mark.parametrize("number", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_number_on_either_side(dtype: str, number: Any) -> None:
    """A number is converted to the tensor's type, wrapping around (uint8 shifted by 257 is
    shifted by 1; ints from 2**63 to 2**64 - 1 are read as uint64); a float one makes the
    result Float, which no shift takes; beyond 2**64 it is PyTorch's OverflowError."""
    x = _values(dtype)
    _same(lambda lib: _t(lib, x) << number)
    _same(lambda lib: _t(lib, x) >> number)
    _same(lambda lib: lib.bitwise_left_shift(_t(lib, x), number))
    _same(lambda lib: lib.bitwise_right_shift(_t(lib, x), number))
    _same(lambda lib: _t(lib, x).bitwise_right_shift(number))
    amounts = _amounts(dtype)
    _same(lambda lib: number << _t(lib, amounts))
    _same(lambda lib: number >> _t(lib, amounts))
    _same(lambda lib: lib.bitwise_left_shift(number, _t(lib, amounts)))
    _same(lambda lib: lib.bitwise_right_shift(number, _t(lib, amounts)))


NUMPY_NUMBERS = [np.int64(3), np.int8(-1), np.uint8(200), np.int32(70), np.float32(2.0),
                 np.float64(1.0), np.bool_(True), np.bool_(False)]


@pytest.mark.parametrize("number", NUMPY_NUMBERS, ids=repr)
def test_numpy_numbers(number: Any) -> None:
    """NumPy scalars are numbers; PyTorch reads a NumPy bool as a float (so a shift by one is
    its "not implemented for 'Float'")."""
    x = _values("int16")
    _same(lambda lib: _t(lib, x) << number)
    _same(lambda lib: lib.bitwise_right_shift(_t(lib, x), number))
    _same(lambda lib: _t(lib, x).bitwise_left_shift(number))
    _same(lambda lib: lib.bitwise_left_shift(number, _t(lib, x)))
    _same(lambda lib: _t(lib, x).bitwise_right_shift_(number))
    _same(lambda lib: operator.ilshift(_t(lib, x), number))


def test_numpy_bools_are_float_numbers_in_other_ops_too() -> None:
    """(The promotion rule is shared: PyTorch reads a NumPy bool as a Python float.)"""
    same_outcome(lambda lib: lib.tensor([1, 2]) + np.bool_(True))
    same_outcome(lambda lib: lib.tensor([True]) * np.bool_(False))
    same_outcome(lambda lib: lib.result_type(lib.tensor([1]), np.bool_(True)))


def test_huge_numbers_wrap_in_other_integer_ops_too() -> None:
    """(Shared with every op: a Python int up to 2**64 - 1 is converted to the tensor's type,
    wrapping around; one beyond is PyTorch's OverflowError.)"""
    for number in (2**63, 2**64 - 1, 2**64, -2**63 - 1):
        same_outcome(lambda lib, n=number: lib.tensor([1, 3]) + n)
        same_outcome(lambda lib, n=number: lib.tensor([1, 3], dtype=lib.int8) & n)


SHAPES = [((3,), (3,)), ((2, 1), (1, 3)), ((), (4,)), ((4,), ()), ((), ()), ((2, 3), (3,)),
          ((3,), (2, 3)), ((0,), (1,)), ((2, 0), (2, 1)), ((2,), (3,)), ((2, 3), (2,))]


@pytest.mark.parametrize(("a_shape", "b_shape"), SHAPES, ids=str)
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int8", "uint8"), ("int32", "bool"),
                                    ("float32", "int64"), ("uint16", "uint8")], ids=str)
def test_broadcasting(a_shape: tuple, b_shape: tuple, dtypes: tuple[str, str]) -> None:
    """Shapes broadcast as in PyTorch; 0-d tensors take part in promotion below tensors with
    dimensions; shapes that do not broadcast are PyTorch's error, before any dtype error."""
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, a_shape).astype(dtypes[0])
    b = rng.integers(0, 20, b_shape).astype(dtypes[1])
    for fn in BINARY_FORMS.values():
        _same(lambda lib, f=fn: f(lib, _t(lib, a), _t(lib, b)))


def test_zero_dimensional_tensors_promote_below_dimensioned_ones() -> None:
    _same(lambda lib: lib.tensor([1, 2], dtype=lib.int8) << lib.tensor(7))
    _same(lambda lib: lib.tensor(1, dtype=lib.int8) << lib.tensor([7, 9]))
    _same(lambda lib: lib.tensor(1, dtype=lib.int8) << lib.tensor(9, dtype=lib.int32))
    _same(lambda lib: lib.tensor(1, dtype=lib.int8) << 9)
    _same(lambda lib: lib.tensor(True) << 3)
    _same(lambda lib: (lib.tensor(5) >> 1).item())


def test_layouts_follow_the_inputs() -> None:
    """Strides of the result, as PyTorch's TensorIterator lays it out (the first operand that
    orders two dimensions decides, when the operands disagree)."""
    _same(lambda lib: lib.arange(12).reshape(3, 4).T << 2)
    _same(lambda lib: lib.arange(12).reshape(3, 4).T >> lib.arange(12).reshape(3, 4).T)
    _same(lambda lib: 3 << lib.arange(24).reshape(2, 3, 4).permute(2, 0, 1))
    _same(lambda lib: lib.arange(12).reshape(3, 4)[:, ::2] >> lib.tensor([1, 2]))
    _same(lambda lib: lib.arange(12).reshape(3, 4).T << lib.arange(12).reshape(4, 3))
    _same(lambda lib: lib.arange(12).reshape(4, 3) >> lib.arange(12).reshape(3, 4).T)
    _same(lambda lib: lib.bitwise_right_shift(lib.arange(24).reshape(2, 3, 4).permute(2, 0, 1),
                                              lib.arange(24).reshape(4, 2, 3)))


INPLACE_FORMS: dict[str, Callable[[Any, Any], Any]] = {
    "bitwise_left_shift_": lambda a, b: a.bitwise_left_shift_(b),
    "bitwise_right_shift_": lambda a, b: a.bitwise_right_shift_(b),
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
}


def _in_place(form: str, a: np.ndarray, b: Any, tensor_b: bool = True) -> Callable[[Any], Any]:
    """``a <form> b`` in place: what it returns (the same tensor?), the tensor and its
    version afterwards, or the error and the tensor unchanged."""

    def run(lib: Any) -> Any:
        x = _t(lib, a)
        other = _t(lib, b) if tensor_b else b
        try:
            out = INPLACE_FORMS[form](x, other)
        except Exception as error:  # noqa: BLE001 - compared, with what is left of x
            return type(error).__name__, str(error), x.tolist(), x._version
        return out is x, x.dtype, x.tolist(), x._version

    return run


@pytest.mark.parametrize("form", INPLACE_FORMS)
@pytest.mark.parametrize(("a_dtype", "b_dtype"), list(itertools.product(DTYPES, DTYPES)))
def test_in_place(form: str, a_dtype: str, b_dtype: str) -> None:
    """Computed in the promoted type and cast into ``self`` (int32 shifted in place by an int64
    40 is int64's ``1 << 40`` wrapped to int32); a result type ``self`` cannot hold (bool
    shifted by an int) is PyTorch's cast error, and nothing is written."""
    a, b = _grid(a_dtype, b_dtype)
    same_outcome(_in_place(form, a, b))


@pytest.mark.parametrize("number", [0, 3, 9, 64, -1, 300, 2**63 + 1, True, 1.5, 1j], ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", INPLACE_FORMS)
def test_in_place_with_a_number(form: str, dtype: str, number: Any) -> None:
    same_outcome(_in_place(form, _values(dtype), number, tensor_b=False))


IN_PLACE_ERRORS: dict[str, tuple[np.ndarray, Any]] = {
    # The broadcast shape is not self's: PyTorch's error before the dtype's.
    "bigger shape": (np.array([1, 2]), np.array([[1, 2], [3, 4]])),
    "bigger shape, cannot cast": (np.array([True, False]), np.array([[1, 2], [3, 4]])),
    "bigger shape, float": (np.array([1.0, 2.0], dtype=np.float32), np.array([[1], [2]])),
    "0-d self": (np.array(5), np.array([1])),
    "no broadcast, float": (np.array([1.0, 2.0], dtype=np.float32), np.array([1, 2, 3])),
    "no broadcast, cannot cast": (np.array([1, 2]), np.array([1.0, 2.0, 3.0])),
    "no broadcast, uint16": (np.array([1, 2], dtype=np.uint16), np.array([1, 2, 3], np.uint8)),
    # The result's type cannot be cast to self's: PyTorch's error before the kernel's.
    "float into int": (np.array([1, 2]), np.array([1.0, 2.0])),
    "int into bool": (np.array([True]), np.array([1])),
    "uint16 with uint8": (np.array([1], dtype=np.uint16), np.array([1], dtype=np.uint8)),
    # The kernel's: no shift for these types.
    "bool": (np.array([True]), np.array([True])),
    "float": (np.array([1.0], dtype=np.float32), np.array([1])),
    "double": (np.array([1.0]), np.array([1.0])),
    "half": (np.array([1.0], dtype=np.float16), np.array([1])),
    "uint16": (np.array([1, 2], dtype=np.uint16), np.array([1, 1], dtype=np.uint16)),
    "uint64": (np.array([1, 2], dtype=np.uint64), np.array([1, 1], dtype=np.uint64)),
}


@pytest.mark.parametrize("form", INPLACE_FORMS)
@pytest.mark.parametrize("case", IN_PLACE_ERRORS)
def test_in_place_errors_change_nothing(form: str, case: str) -> None:
    a, b = IN_PLACE_ERRORS[case]
    assert _in_place(form, a, b)(chainrule)[2:] == (a.tolist(), 0)  # raised, wrote nothing
    same_outcome(_in_place(form, a, b))


def test_in_place_writes_through_views_and_bumps_the_shared_version() -> None:
    def view(lib: Any) -> Any:
        base = lib.tensor([[1, 2], [3, 4]])
        row = base[0]
        row.bitwise_left_shift_(2)
        column = base.T[1]
        column >>= lib.tensor([0, 1])
        return base.tolist(), base._version, row._version

    same_outcome(view)
    same_outcome(lambda lib: lib.tensor([[1, 2], [3, 4]]).T.bitwise_right_shift_(
        lib.tensor([0, 1])))


def test_in_place_returns_self() -> None:
    for lib in (chainrule, torch):
        x = lib.tensor([1, 2])
        assert x.bitwise_left_shift_(1) is x
        assert x.bitwise_right_shift_(x) is x
        y = x
        y <<= 3
        y >>= lib.tensor(1)
        assert y is x
        assert x._version == 4


KERNEL_ERRORS: dict[str, Callable[[Any], Any]] = {
    "float tensors": lambda lib: lib.ones(2) << lib.ones(2),
    "double tensors": lambda lib: lib.ones(2, dtype=lib.float64) >> 1,
    "half tensor": lambda lib: lib.bitwise_right_shift(lib.ones(2, dtype=lib.float16), 1),
    "complex tensor": lambda lib: lib.ones(2, dtype=lib.complex64) << 1,
    "an int by a float number": lambda lib: lib.tensor([1, 2]) << 1.5,
    "an int by a whole float": lambda lib: lib.tensor([1, 2]) >> 1.0,
    "a float number by an int": lambda lib: 2.0 << lib.tensor([1, 2]),
    "an int by a complex number": lambda lib: lib.tensor([1, 2]) << 1j,
    "an int by a float tensor": lambda lib: lib.tensor([1, 2]) >> lib.tensor([1.0]),
    "bools": lambda lib: lib.tensor([True]) << lib.tensor([False]),
    "a bool by True": lambda lib: lib.tensor([True]) >> True,
    "True by a bool": lambda lib: True << lib.tensor([True]),
    "uint16": lambda lib: lib.tensor([1], dtype=lib.uint16) << 1,
    "uint32": lambda lib: lib.tensor([1], dtype=lib.uint32) >> lib.tensor([1], dtype=lib.uint32),
    "uint64 by a float": lambda lib: lib.tensor([1], dtype=lib.uint64) << 1.5,
    "uint16 with uint8": lambda lib: lib.tensor([1], dtype=lib.uint16) << lib.tensor(
        [1], dtype=lib.uint8),
    "a float that requires grad": lambda lib: lib.ones(2, requires_grad=True) << 1,
    "a float that requires grad, shifting": lambda lib: 1 << lib.ones(2, requires_grad=True),
}


@pytest.mark.parametrize("case", KERNEL_ERRORS)
def test_types_no_shift_takes(case: str) -> None:
    """PyTorch's NotImplementedError names the kernel and the result's type (so an integer
    shifted by a float number is 'Float'); it comes before anything autograd would do."""
    same_outcome(KERNEL_ERRORS[case])


@pytest.mark.parametrize("form", BINARY_FORMS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128",
                                   "uint16", "uint32", "uint64"])
def test_every_form_refuses_these_types(form: str, dtype: str) -> None:
    """Each form, with a tensor of the type on either side and with numbers."""
    x = np.array([1, 2], dtype=dtype)
    fn = BINARY_FORMS[form]
    for other in (lambda lib: _t(lib, x), lambda lib: lib.tensor([1, 2]), lambda lib: 2,
                  lambda lib: 2.5):
        same_outcome(lambda lib, o=other: fn(lib, _t(lib, x), o(lib)))
        if form.startswith(("torch.", "__r")):
            same_outcome(lambda lib, o=other: fn(lib, o(lib), _t(lib, x)))


def test_no_gradient() -> None:
    """The shifts have no derivative: integer results never require grad, and a float input
    (which could) is the kernel's error. An integer tensor cannot require grad at all."""
    _same(lambda lib: lib.tensor([1, 2]) << lib.tensor([1, 2]))
    same_outcome(lambda lib: (lib.tensor([1]) << 1).grad_fn)
    same_outcome(lambda lib: lib.tensor([1, 2]).requires_grad_())
    same_outcome(lambda lib: lib.ones(2, requires_grad=True).bitwise_left_shift_(1))
    same_outcome(lambda lib: (lib.ones(2, requires_grad=True) * 1).bitwise_left_shift_(1))
    same_outcome(lambda lib: lib.tensor([1, 2]).bitwise_left_shift_(
        lib.ones(2, requires_grad=True)))
    with torch.no_grad(), chainrule.no_grad():
        same_outcome(lambda lib: lib.tensor([3, 4]) >> 1)
    with torch.inference_mode(), chainrule.inference_mode():
        same_outcome(lambda lib: lib.tensor([3, 4]) << lib.tensor([1, 70]))


class _Reflected:
    """An operand that knows how to shift and be shifted by a tensor."""

    def __rlshift__(self, other: Any) -> str:
        return "rlshift"

    def __rrshift__(self, other: Any) -> str:
        return "rrshift"

    def __lshift__(self, other: Any) -> str:
        return "lshift"

    def __rshift__(self, other: Any) -> str:
        return "rshift"


ARGUMENT_ERRORS = [
    # PyTorch's overloads of the function: (Tensor, Tensor), (Number self, Tensor),
    # (Tensor, Number); a number and a number is none of them.
    "lib.bitwise_left_shift(1, 2)", "lib.bitwise_right_shift(1.5, 2)",
    "lib.bitwise_left_shift(True, False)", "lib.bitwise_left_shift(np.int64(3), 2)",
    "lib.bitwise_left_shift('x', a)", "lib.bitwise_left_shift(a, 'x')",
    "lib.bitwise_left_shift(z, 'x')", "lib.bitwise_left_shift(None, a)",
    "lib.bitwise_left_shift(1, 'x')", "lib.bitwise_left_shift(a, None)",
    "lib.bitwise_left_shift([1], a)", "lib.bitwise_left_shift(a, [1, 2])",
    "lib.bitwise_left_shift(a, (1, 2))", "lib.bitwise_left_shift(a, ([1],))",
    "lib.bitwise_left_shift(a, [])", "lib.bitwise_left_shift(a, ())",
    "lib.bitwise_left_shift(a, [a])", "lib.bitwise_left_shift(a, {1: 2})",
    "lib.bitwise_left_shift(a, np.array([1]))", "lib.bitwise_left_shift(a, np.str_('x'))",
    "lib.bitwise_left_shift(a, a, a)", "lib.bitwise_left_shift(1, a, 2)",
    "lib.bitwise_left_shift(a)", "lib.bitwise_left_shift()",
    # Keywords: input/other, or self/other for a number first.
    "lib.bitwise_left_shift(input=a, other=a)", "lib.bitwise_left_shift(a, other=2)",
    "lib.bitwise_left_shift(self=1, other=a)", "lib.bitwise_right_shift(2, other=a)",
    "lib.bitwise_left_shift(other=1, input=a)", "lib.bitwise_left_shift(other=a, self=2)",
    "lib.bitwise_left_shift(input=a, other='x')", "lib.bitwise_left_shift(input=a)",
    "lib.bitwise_left_shift(self=1, other=2)", "lib.bitwise_left_shift(other=a)",
    "lib.bitwise_left_shift(input=a, other=1, alpha=2)", "lib.bitwise_left_shift(input=a, bad=1)",
    "lib.bitwise_left_shift(a, other='x')", "lib.bitwise_left_shift(1, other=2)",
    "lib.bitwise_left_shift('x', other=a)", "lib.bitwise_left_shift(a, 1, bad=None)",
    "lib.bitwise_left_shift(other=a, input=2)", "lib.bitwise_left_shift(other='x', self=2)",
    "lib.bitwise_left_shift(a, input=a)", "lib.bitwise_left_shift(1, self=a)",
    "lib.bitwise_right_shift(self=a, other=a)",
    # The methods' overloads: (Tensor other), (Number other).
    "a.bitwise_left_shift('x')", "a.bitwise_left_shift(None)", "a.bitwise_left_shift()",
    "a.bitwise_left_shift(a, a)", "a.bitwise_left_shift(1, 2)",
    "a.bitwise_left_shift(other='x')", "a.bitwise_left_shift(bad=1)",
    "a.bitwise_left_shift(other=2)", "a.bitwise_right_shift([1, 2])",
    "a.bitwise_left_shift(z)", "a.clone().bitwise_right_shift_('x')",
    "a.clone().bitwise_right_shift_(other=1)", "a.clone().bitwise_right_shift_()",
    "a.clone().bitwise_left_shift_(a, a)", "a.clone().bitwise_left_shift_([1])",
    # Operators give NotImplemented for an operand they do not take: Python tries the other
    # operand, then raises its own TypeError.
    "a << 'x'", "'x' << a", "a << [1, 2]", "a >> None", "None >> a", "a << R()", "a >> R()",
    "R() << a", "R() >> a", "a.__lshift__('x')", "a.__rshift__(None)", "a.__rlshift__('x')",
    "a.__rrshift__([1])", "a.__ilshift__('x')", "a.__irshift__(None)", "a.__rlshift__(2)",
    "a.__rrshift__(256)", "a.__rlshift__(a)",
]


@pytest.mark.parametrize("call", ARGUMENT_ERRORS)
def test_arguments(call: str) -> None:
    """Arguments that match no overload: PyTorch's TypeError, word for word (the overloads,
    and for those taking as many arguments as given, which did not match and why)."""

    def run(lib: Any) -> Any:
        a = lib.tensor([1, 3])
        return eval(call, {"lib": lib, "a": a, "z": lib.tensor(2), "np": np, "R": _Reflected})

    same_outcome(run)


@pytest.mark.parametrize("statement", ["x <<= 'x'", "x >>= None", "x <<= R()", "x <<= 2",
                                       "x >>= x", "x >>= 1.5"])
def test_augmented_assignment(statement: str) -> None:
    def run(lib: Any) -> Any:
        scope = {"x": lib.tensor([4, 8]), "R": _Reflected}
        exec(statement, scope)  # noqa: S102 - the statement is the test's own
        return scope["x"]

    same_outcome(run)


def test_only_pytorchs_names() -> None:
    """The shift names PyTorch has (its ``torch.__lshift__`` is not public), and no others."""
    assert [n for n in dir(chainrule.Tensor) if "shift" in n] == [
        n for n in dir(torch.Tensor) if "shift" in n]
    assert [n for n in dir(chainrule) if "shift" in n] == [n for n in dir(torch) if "shift" in n]


def test_out_is_not_supported() -> None:
    """(PyTorch's ``out=``: no op here writes into an ``out`` tensor; it is refused as by every
    other op.)"""
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        chainrule.bitwise_left_shift(chainrule.tensor([1]), 1, out=None)
    assert outcome(lambda lib: lib.bitwise_left_shift(lib.tensor([1]), 1), chainrule) == (
        "ok", "tensor([2])")
