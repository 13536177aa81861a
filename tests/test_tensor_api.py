"""The Tensor API against PyTorch: attributes, conversions, autograd flags, legacy classes.

This module also holds :func:`assert_same`, the differential check the core-semantics tests
(creation, promotion, errors, autograd) share: run one snippet with ``chainrule`` and with
``torch`` and require the same tensor (repr, dtype, shape, exact values, requires_grad) or the
same exception (type and message), and optionally the same warnings.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import normalise_output, torch

# ----------------------------------------------------------------------------------------------
# The differential check

_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\.\)")


def normalise(text: str) -> str:
    """Mask addresses, write ``torch.`` as ``chainrule.``, drop PyTorch's C++ source locations."""
    return _TRIGGERED.sub("", normalise_output(text))


class Outcome:
    """What running a snippet produced: a value or an exception, and the warnings raised."""

    def __init__(self, fn: Callable[[Any], Any], lib: Any) -> None:
        self.value: Any = None
        self.error: Exception | None = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.value = fn(lib)
            except Exception as error:  # noqa: BLE001 - the error is the result compared
                self.error = error
        self.warnings = [normalise(f"{w.category.__name__}: {w.message}") for w in caught]

    def describe_error(self) -> tuple[str, str] | None:
        if self.error is None:
            return None
        return type(self.error).__name__, normalise(str(self.error))


class Exactly:
    """An array compared bit for bit (NaN equal to NaN), shown in full when different."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Exactly):
            return NotImplemented
        a, b = self.array, other.array
        if a.shape != b.shape:
            return False
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            same_sign = np.array_equal(np.signbit(a), np.signbit(b))  # -0.0 is not 0.0
            return same_sign and bool(np.array_equal(a, b, equal_nan=True))
        if a.dtype.kind == "c" and b.dtype.kind == "c":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))

    def __repr__(self) -> str:
        return f"Exactly({self.array.tolist()!r})"


def describe(value: Any, values: bool = True) -> Any:
    """A comparable description of a result; tensors by repr, dtype, shape, requires_grad,
    is_leaf and (when ``values``) their exact elements."""
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        if isinstance(value, chainrule.Tensor):
            array = value.detach().numpy()
        elif value.dtype is torch.complex32:  # NumPy has no complex32
            array = value.detach().to(torch.complex64).numpy()
        else:
            array = value.detach().numpy()
        description: tuple = (
            "tensor",
            str(value.dtype).rsplit(".", 1)[-1],
            tuple(value.shape),
            value.requires_grad,
            value.is_leaf,
        )
        if values:
            description += (normalise(repr(value)), Exactly(np.array(array)))
        return description
    if isinstance(value, tuple | list) and not isinstance(value, chainrule.Size | torch.Size):
        return type(value).__name__, [describe(v, values) for v in value]
    return normalise(repr(value))


def assert_same(
    fn: Callable[[Any], Any], *, values: bool = True, check_warnings: bool = False
) -> Any:
    """``fn(chainrule)`` and ``fn(torch)`` give the same result or raise the same error.

    ``values=False`` compares tensors without their elements (random or uninitialised data).
    Returns chainrule's result.
    """
    ours, theirs = Outcome(fn, chainrule), Outcome(fn, torch)
    assert ours.describe_error() == theirs.describe_error(), (
        f"chainrule: {ours.describe_error() or describe(ours.value, values)!r}\n"
        f"torch:     {theirs.describe_error() or describe(theirs.value, values)!r}"
    )
    if theirs.error is None:
        assert describe(ours.value, values) == describe(theirs.value, values)
    if check_warnings:
        assert ours.warnings == theirs.warnings
    return ours.value


def assert_raises_same(fn: Callable[[Any], Any]) -> None:
    """Both libraries raise, with the same exception type and message."""
    theirs = Outcome(fn, torch)
    assert theirs.error is not None, "torch did not raise: the test case is wrong"
    assert_same(fn)


# ----------------------------------------------------------------------------------------------
# Tests


def _matrix(lib, requires_grad: bool = True):
    return lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=requires_grad)


def _set(obj, name: str, value):
    setattr(obj, name, value)
    return obj


ATTRIBUTE_CASES = {
    "shape": lambda lib: _matrix(lib).shape,
    "size()": lambda lib: _matrix(lib).size(),
    "size(1)": lambda lib: _matrix(lib).size(1),
    "size(-1)": lambda lib: _matrix(lib).size(-1),
    "size out of range": lambda lib: _matrix(lib).size(2),
    "dim": lambda lib: _matrix(lib).dim(),
    "ndim": lambda lib: _matrix(lib).ndim,
    "ndimension": lambda lib: _matrix(lib).ndimension(),
    "numel": lambda lib: (_matrix(lib).numel(), lib.ones(0, 3).numel(), lib.tensor(1.0).numel()),
    "nelement": lambda lib: _matrix(lib).nelement(),
    "dtype": lambda lib: _matrix(lib).dtype,
    "device": lambda lib: _matrix(lib).device,
    "is_cuda": lambda lib: _matrix(lib).is_cuda,
    "is_floating_point": lambda lib: (_matrix(lib).is_floating_point(),
                                      lib.tensor([1]).is_floating_point()),
    "element sizes": lambda lib: (_matrix(lib).element_size(), _matrix(lib).itemsize,
                                  _matrix(lib).nbytes),
    "stride": lambda lib: (_matrix(lib).stride(), _matrix(lib).T.stride(), _matrix(lib).stride(0)),
    "T 2-D": lambda lib: _matrix(lib).T,
    "mT 2-D": lambda lib: _matrix(lib).mT,
    "T 1-D": lambda lib: lib.ones(3).T,
    "mT 3-D": lambda lib: lib.ones(2, 3, 4).mT,
    "item float": lambda lib: _matrix(lib)[0, 1].item(),
    "item int": lambda lib: lib.tensor([7]).item(),
    "item bool": lambda lib: lib.tensor(True).item(),
    "item float16": lambda lib: lib.tensor(1.5, dtype=lib.float16).item(),
    "item of many": lambda lib: _matrix(lib).item(),
    "item of none": lambda lib: lib.tensor([]).item(),
    "tolist": lambda lib: _matrix(lib).tolist(),
    "tolist 0-d": lambda lib: lib.tensor(3).tolist(),
    "tolist bool": lambda lib: lib.tensor([True]).tolist(),
    "tolist float32 rounding": lambda lib: lib.tensor([0.1]).tolist(),
    "numpy dtype": lambda lib: _matrix(lib, False).numpy().dtype,
    "numpy requires grad": lambda lib: _matrix(lib).numpy(),
    "numpy non-leaf": lambda lib: (_matrix(lib) * 2).numpy(),
    "numpy force": lambda lib: _matrix(lib).numpy(force=True).tolist(),
    "__array__": lambda lib: np.asarray(_matrix(lib, False)).dtype,
    "__array__ requires grad": lambda lib: np.asarray(_matrix(lib)),
    "__array__ dtype": lambda lib: np.asarray(_matrix(lib, False), dtype=np.int32).tolist(),
    "len": lambda lib: len(_matrix(lib)),
    "len 0-d": lambda lib: len(lib.tensor(1.0)),
    "bool of one": lambda lib: (bool(lib.tensor([0.0])), bool(lib.tensor(2))),
    "bool of many": lambda lib: bool(lib.tensor([1.0, 2.0])),
    "float()": lambda lib: float(lib.tensor([2.5])),
    "int()": lambda lib: int(lib.tensor(2.7)),
    "float() of many": lambda lib: float(lib.ones(2)),
    "int() of many": lambda lib: int(lib.ones(2)),
    "index": lambda lib: [1, 2, 3][lib.tensor(1)],
    "index float": lambda lib: [1, 2, 3][lib.tensor(1.0)],
    "format 0-d": lambda lib: f"{lib.tensor(2.5):.2f}",
    "format": lambda lib: f"{lib.ones(2)}",
    "repr": lambda lib: repr(_matrix(lib)),
    "str non-leaf": lambda lib: str(_matrix(lib) * 2),
    "type()": lambda lib: (_matrix(lib).type(), lib.tensor([1]).type(),
                           lib.ones(1, dtype=lib.bool).type(), lib.ones(1, dtype=lib.uint8).type()),
    "type(dtype)": lambda lib: _matrix(lib).type(lib.float64),
    "type(name)": lambda lib: _matrix(lib).type(f"{lib.__name__}.DoubleTensor"),
    "output_nr": lambda lib: (_matrix(lib) * 2).output_nr,
}


@pytest.mark.parametrize("case", ATTRIBUTE_CASES, ids=str)
def test_attributes_match_torch(case: str) -> None:
    assert_same(ATTRIBUTE_CASES[case])


CONVERSION_CASES = {
    "to float64": lambda lib: _matrix(lib).to(lib.float64),
    "to same dtype is self": lambda lib: (lambda t: t.to(lib.float32) is t)(_matrix(lib)),
    "to dtype keyword": lambda lib: _matrix(lib).to(dtype=lib.float16),
    "to int64": lambda lib: _matrix(lib).to(lib.int64),
    "to copy same dtype": lambda lib: _matrix(lib).to(lib.float32, copy=True),
    "to copy positional": lambda lib: _matrix(lib).to(lib.float32, False, True),
    "to device": lambda lib: (lambda t: t.to("cpu") is t)(_matrix(lib)),
    "to device object": lambda lib: _matrix(lib).to(lib.device("cpu")),
    "to device copy": lambda lib: _matrix(lib).to("cpu", copy=True),
    "to like tensor": lambda lib: _matrix(lib).to(lib.ones(1, dtype=lib.float64)),
    "to like int tensor": lambda lib: _matrix(lib).to(lib.ones(1, dtype=lib.int32)),
    "to device and dtype": lambda lib: _matrix(lib).to("cpu", lib.float64),
    "to keywords": lambda lib: _matrix(lib).to(device="cpu", dtype=lib.float16),
    "to python int": lambda lib: _matrix(lib).to(int),
    "to python float": lambda lib: _matrix(lib).to(float),
    "to cuda": lambda lib: _matrix(lib).to("cuda"),
    "cuda()": lambda lib: _matrix(lib).cuda(),
    "cpu()": lambda lib: (lambda t: t.cpu() is t)(_matrix(lib)),
    "float()": lambda lib: lib.tensor([1, 2]).float(),
    "float() is self": lambda lib: (lambda t: t.float() is t)(_matrix(lib)),
    "double()": lambda lib: _matrix(lib).double(),
    "long() truncates": lambda lib: lib.tensor([-1.7, 2.9], requires_grad=True).long(),
    "int()": lambda lib: _matrix(lib).int(),
    "bool()": lambda lib: lib.tensor([0.0, 2.0]).bool(),
    "half()": lambda lib: _matrix(lib).half(),
    "double() grad_fn edges": lambda lib: type(
        _matrix(lib).double().grad_fn.next_functions[0][0]
    ).__name__,
    "clone": lambda lib: _matrix(lib).clone(),
    "clone of leaf without grad": lambda lib: _matrix(lib, False).clone(),
    "clone non-leaf": lambda lib: (_matrix(lib) * 2).clone().grad_fn.next_functions[0][0].name(),
    "clone copies": lambda lib: (lambda t: (t.clone().add_(1), t)[1])(_matrix(lib, False)),
    "contiguous is self": lambda lib: (lambda t: t.contiguous() is t)(_matrix(lib)),
    "contiguous of transpose": lambda lib: _matrix(lib).T.contiguous(),
    "is_contiguous": lambda lib: (_matrix(lib).T.is_contiguous(),
                                  _matrix(lib).T.contiguous().is_contiguous()),
    "detach": lambda lib: _matrix(lib).detach(),
    "detach non-leaf": lambda lib: (_matrix(lib) * 2).detach(),
    "detach shares data": lambda lib: (lambda t: (t.detach().add_(1), t)[1])(_matrix(lib, False)),
    "detach shares version": lambda lib: (lambda t: (t.detach().add_(1), t._version)[1])(
        _matrix(lib, False)
    ),
    "detach_ non-leaf": lambda lib: (lambda y: (y.detach_(), y.requires_grad, y.is_leaf,
                                               y.grad_fn))(_matrix(lib) * 2),
    "detach_ leaf": lambda lib: _matrix(lib).detach_(),
}


@pytest.mark.parametrize("case", CONVERSION_CASES, ids=str)
def test_conversions_match_torch(case: str) -> None:
    assert_same(CONVERSION_CASES[case])


AUTOGRAD_ATTRIBUTE_CASES = {
    "requires_grad_()": lambda lib: _matrix(lib, False).requires_grad_(),
    "requires_grad_(False)": lambda lib: _matrix(lib).requires_grad_(False),
    "requires_grad_ on int": lambda lib: lib.tensor([1]).requires_grad_(),
    "requires_grad_(False) on int": lambda lib: lib.tensor([1]).requires_grad_(False),
    "requires_grad_(False) on non-leaf": lambda lib: (_matrix(lib) * 2).requires_grad_(False),
    "requires_grad_(True) on non-leaf": lambda lib: (_matrix(lib) * 2).requires_grad_(True),
    "requires_grad = True": lambda lib: _set(_matrix(lib, False), "requires_grad", True),
    "is_leaf": lambda lib: (_matrix(lib).is_leaf, (_matrix(lib) * 2).is_leaf,
                            _matrix(lib, False).is_leaf, (_matrix(lib, False) * 2).is_leaf),
    "data": lambda lib: _matrix(lib).data,
    "data of non-leaf": lambda lib: (_matrix(lib) * 2).data,
    "data shares memory": lambda lib: (lambda t: (t.data.mul_(2), t)[1])(_matrix(lib)),
    "data set": lambda lib: _set(_matrix(lib), "data", lib.zeros(3)),
    "data set other dtype": lambda lib: _set(_matrix(lib), "data", lib.zeros(3, dtype=lib.float64)),
    "data set non-tensor": lambda lib: _set(_matrix(lib), "data", [1.0]),
    "grad of new leaf": lambda lib: _matrix(lib).grad,
    "grad set": lambda lib: _set(_matrix(lib), "grad", lib.ones(2, 3)).grad,
    "grad set on leaf without grad": lambda lib: _set(_matrix(lib, False), "grad",
                                                      lib.ones(2, 3)).grad,
    "grad set None": lambda lib: _set(_matrix(lib), "grad", None).grad,
    "grad set non-tensor": lambda lib: _set(_matrix(lib), "grad", [1.0]),
    "grad deleted": lambda lib: (lambda t: (_set(t, "grad", lib.ones(2, 3)), delattr(t, "grad"),
                                            t.grad)[2])(_matrix(lib)),
    "grad_fn": lambda lib: ((_matrix(lib) * 2).grad_fn.name(), _matrix(lib).grad_fn),
    "retain_grad": lambda lib: (lambda y: (y.retain_grad(), y.retains_grad, y.grad))(
        _matrix(lib) * 2
    ),
    "retains_grad of leaf": lambda lib: _matrix(lib).retains_grad,
    "retain_grad on leaf": lambda lib: (lambda t: (t.retain_grad(), t.retains_grad))(
        _matrix(lib)
    ),
    "retain_grad without grad": lambda lib: _matrix(lib, False).retain_grad(),
    "deepcopy leaf": lambda lib: copy.deepcopy(_matrix(lib)),
    "deepcopy non-leaf": lambda lib: copy.deepcopy(_matrix(lib) * 2),
    "deepcopy keeps grad": lambda lib: copy.deepcopy(_set(_matrix(lib), "grad",
                                                          lib.ones(2, 3))).grad,
}


@pytest.mark.parametrize("case", AUTOGRAD_ATTRIBUTE_CASES, ids=str)
def test_autograd_attributes_match_torch(case: str) -> None:
    assert_same(AUTOGRAD_ATTRIBUTE_CASES[case], check_warnings=True)


def test_grad_of_non_leaf_warns_like_torch() -> None:
    assert_same(lambda lib: (_matrix(lib) * 2).grad, check_warnings=True)


def test_grad_assignment_must_match_shape_and_dtype() -> None:
    x = chainrule.ones(2, 3, requires_grad=True)
    for bad in (chainrule.ones(3), chainrule.ones(2, 3, dtype=chainrule.float64)):
        with pytest.raises(RuntimeError):
            x.grad = bad
        assert x.grad is None


@pytest.mark.parametrize(
    "bad",
    [lambda lib: lib.ones(3), lambda lib: lib.ones(2, 3, dtype=lib.float64),
     lambda lib: lib.ones(2, 3, dtype=lib.int64)],
    ids=["shape", "float64", "int64"],
)
def test_grad_assignment_errors_match_torch(bad) -> None:
    assert_raises_same(lambda lib: _set(_matrix(lib), "grad", bad(lib)))


def test_requires_grad_setter_on_integer_tensor_matches_torch() -> None:
    assert_raises_same(lambda lib: _set(lib.tensor([1]), "requires_grad", True))


def test_size_with_non_int_dim_matches_torch() -> None:
    assert_raises_same(lambda lib: _matrix(lib).size("a"))


def test_mT_of_vector_matches_torch() -> None:
    assert_raises_same(lambda lib: lib.ones(3).mT)


_SCALAR_WARNINGS = {
    "float": """
plain = lib.tensor(2.0)
float(plain), int(plain), plain.item()
report("no grad")
leaf = lib.tensor(2.0, requires_grad=True)
y = leaf * 2
int(leaf), leaf.item(), int(y), y.item()
report("int and item")
float(leaf)
report("first float")
float(y), float(leaf), float(leaf * 3), lib.tensor([leaf])
report("later conversions")
""",
    "tensor() first": """
leaf = lib.tensor(2.0, requires_grad=True)
lib.tensor([leaf])
report("tensor([leaf])")
lib.tensor([leaf, leaf]), float(leaf)
report("later conversions")
""",
}
_SCALAR_WARNINGS_PRELUDE = """
import sys, warnings
lib = __import__(sys.argv[1])
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda message, category, filename, lineno, *rest: caught.append(
    (category.__name__, str(message).split(chr(10))[0], filename))
def report(what):
    print(what, caught)
"""


@pytest.mark.parametrize("program", _SCALAR_WARNINGS)
def test_scalar_conversion_warns_like_torch(program: str) -> None:
    """PyTorch warns once per process, from ``float()`` and ``tensor([t])`` (not ``int()`` nor
    ``item()``), for a tensor that requires grad, pointing at the user's line: each library
    runs in a fresh interpreter so the once-flag starts unset."""
    def run(name: str) -> str:
        code = _SCALAR_WARNINGS_PRELUDE + _SCALAR_WARNINGS[program]
        done = subprocess.run([sys.executable, "-c", code, name],
                              capture_output=True, text=True, check=True)
        return done.stdout

    ours, theirs = run("chainrule"), run("torch")
    assert "Converting a tensor with requires_grad=True" in theirs
    assert ours == theirs


def test_stride_of_empty_tensor_matches_torch() -> None:
    assert_same(lambda lib: (lib.zeros(0).stride(), lib.zeros(2, 0, 3).stride()))


_shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, dtype=st.sampled_from(["float32", "float64", "int64", "bool", "uint8"]))
def test_shape_attributes_for_any_shape(shape: list[int], dtype: str) -> None:
    def attributes(lib):
        t = lib.zeros(shape, dtype=getattr(lib, dtype))
        transposed = t.mT.shape if t.dim() >= 2 else None
        strides = t.stride()
        return (t.shape, t.size(), t.dim(), t.ndim, t.numel(), t.dtype, transposed, t.tolist(),
                strides, t.is_contiguous(), t.element_size())

    assert_same(attributes)


# ----------------------------------------------------------------------------------------------
# Size and device

SIZE_CASES = {
    "repr": lambda lib: lib.Size([2, 3]),
    "str of empty": lambda lib: str(lib.Size([])),
    "empty": lambda lib: lib.Size(),
    "slice": lambda lib: lib.Size([2, 3, 4])[1:],
    "reversed": lambda lib: lib.Size([2, 3])[::-1],
    "index": lambda lib: lib.Size([2, 3])[-1],
    "numel": lambda lib: lib.Size([2, 3]).numel(),
    "add tuple": lambda lib: lib.Size([2]) + (3,),
    "add Size": lambda lib: lib.Size([2]) + lib.Size([3]),
    "tuple add": lambda lib: (1,) + lib.Size([2]),
    "add list": lambda lib: lib.Size([2]) + [3],
    "multiply": lambda lib: lib.Size([2]) * 2,
    "multiply left": lambda lib: 3 * lib.Size([2]),
    "equals tuple": lambda lib: (lib.Size([2, 3]) == (2, 3), hash(lib.Size([2])) == hash((2,))),
    "count": lambda lib: lib.Size((2, 3)).count(2),
    "negative": lambda lib: lib.Size([-1]),
    "int": lambda lib: lib.Size(3),
}


@pytest.mark.parametrize("case", SIZE_CASES, ids=str)
def test_size_matches_torch(case: str) -> None:
    assert_same(SIZE_CASES[case])


DEVICE_CASES = {
    "cpu": lambda lib: (lib.device("cpu"), str(lib.device("cpu"))),
    "cpu index": lambda lib: (lib.device("cpu:0"), lib.device("cpu", 0), str(lib.device("cpu:0"))),
    "cuda can be named": lambda lib: (lib.device("cuda"), lib.device("cuda:1")),
    "equality": lambda lib: (lib.device("cpu") == lib.device("cpu"),
                             lib.device("cpu", 0) == lib.device("cpu")),
    "never equals a string": lambda lib: (lib.device("cpu") == "cpu", lib.device("cpu") != "cpu"),
    "unknown type": lambda lib: lib.device("foo"),
    "bad index": lambda lib: lib.device("cpu:x"),
    "negative index": lambda lib: lib.device("cuda", -1),
    "accelerator index": lambda lib: lib.device(3),
    "tensor device": lambda lib: lib.ones(2, device=lib.device("cpu")).device,
    "tensor on cuda": lambda lib: lib.ones(2, device="cuda"),
}


@pytest.mark.parametrize("case", DEVICE_CASES, ids=str)
def test_device_matches_torch(case: str) -> None:
    assert_same(DEVICE_CASES[case])


# ----------------------------------------------------------------------------------------------
# Legacy Variable and typed tensor classes

def _variable(lib):
    return lib.autograd.Variable


LEGACY_CASES = {
    "Variable": lambda lib: _variable(lib)(lib.tensor([1.0, 2.0])),
    "Variable requires_grad": lambda lib: _variable(lib)(lib.tensor([1.0, 2.0]),
                                                         requires_grad=True),
    "Variable isinstance": lambda lib: isinstance(lib.ones(1), _variable(lib)),
    "Variable of list": lambda lib: _variable(lib)([1.0, 2.0]),
    "Variable int requires_grad": lambda lib: _variable(lib)(lib.tensor([1]), requires_grad=True),
    "Variable shares data": lambda lib: (lambda t: (_variable(lib)(t).add_(1), t)[1])(lib.zeros(2)),
    "Variable shares version": lambda lib: (lambda t: (_variable(lib)(t).add_(1), t._version)[1])(
        lib.zeros(2)
    ),
    "Variable of non-leaf": lambda lib: _variable(lib)(lib.ones(2, requires_grad=True) * 2),
    "Variable of leaf": lambda lib: _variable(lib)(lib.ones(2, requires_grad=True)),
    "Variable volatile": lambda lib: _variable(lib)(lib.ones(2), volatile=True),
    "Variable volatile False": lambda lib: _variable(lib)(lib.ones(2), volatile=False),
    "Variable volatile and requires_grad": lambda lib: _variable(lib)(lib.ones(2), True, True),
    "Variable no data": lambda lib: _variable(lib)(),
    "Variable backward": lambda lib: (lambda v: ((v * v).sum().backward(), v.grad)[1])(
        _variable(lib)(lib.tensor([1.0, 3.0]), requires_grad=True)
    ),
    "FloatTensor list": lambda lib: lib.FloatTensor([1, 2]),
    "FloatTensor tuple is data": lambda lib: lib.FloatTensor((2, 3)),
    "FloatTensor sizes": lambda lib: lib.FloatTensor(2, 3).shape,
    "FloatTensor Size": lambda lib: lib.FloatTensor(lib.Size([2, 2])).shape,
    "FloatTensor numpy int size": lambda lib: lib.FloatTensor(np.int64(3)).shape,
    "FloatTensor empty": lambda lib: lib.FloatTensor(),
    "FloatTensor device": lambda lib: lib.FloatTensor(device="cpu"),
    "FloatTensor nested": lambda lib: lib.FloatTensor([[1, 2], [3, 4]]),
    "FloatTensor float tensor": lambda lib: lib.FloatTensor(lib.tensor([1.0, 2.0])),
    "FloatTensor shares tensor": lambda lib: (lambda t: (lib.FloatTensor(t).add_(1), t)[1])(
        lib.zeros(2)
    ),
    "FloatTensor numpy": lambda lib: lib.FloatTensor(np.array([1, 2])),
    "FloatTensor shares numpy": lambda lib: (lambda a: (lib.FloatTensor(a).add_(1), a)[1])(
        np.zeros(2, dtype=np.float32)
    ),
    "FloatTensor int tensor": lambda lib: lib.FloatTensor(lib.tensor([1, 2])),
    "DoubleTensor float tensor": lambda lib: lib.DoubleTensor(lib.ones(2)),
    "LongTensor half tensor": lambda lib: lib.LongTensor(lib.ones(2, dtype=lib.float16)),
    "ByteTensor bool tensor": lambda lib: lib.ByteTensor(lib.ones(2, dtype=lib.bool)),
    "FloatTensor float": lambda lib: lib.FloatTensor(2.5),
    "FloatTensor bool": lambda lib: lib.FloatTensor(True),
    "FloatTensor negative": lambda lib: lib.FloatTensor(-1),
    "FloatTensor float size": lambda lib: lib.FloatTensor(2, 3.5),
    "FloatTensor on cuda": lambda lib: lib.FloatTensor([1.0], device="cuda"),
    "DoubleTensor": lambda lib: lib.DoubleTensor([1, 2]),
    "LongTensor truncates": lambda lib: lib.LongTensor([1.5, -2.5]),
    "LongTensor size": lambda lib: lib.LongTensor(3).shape,
    "isinstance FloatTensor": lambda lib: (isinstance(lib.ones(1), lib.FloatTensor),
                                           isinstance(lib.ones(1, dtype=lib.float64),
                                                      lib.FloatTensor),
                                           isinstance(lib.tensor([1]), lib.LongTensor)),
    "class reprs": lambda lib: (repr(lib.FloatTensor), str(lib.DoubleTensor)),
    "Tensor list": lambda lib: lib.Tensor([1, 2]),
    "Tensor sizes": lambda lib: lib.Tensor(2, 3).shape,
    "Tensor empty": lambda lib: lib.Tensor(),
    "Tensor of int tensor": lambda lib: lib.Tensor(lib.tensor([1, 2])),
    "Tensor float": lambda lib: lib.Tensor(2.5),
    "Tensor isinstance": lambda lib: isinstance(lib.tensor([1]), lib.Tensor),
    "grad.data.zero_()": lambda lib: (lambda x: ((x * 2).sum().backward(), x.grad.data.zero_(),
                                                 x.grad)[2])(lib.ones(2, requires_grad=True)),
}


@pytest.mark.parametrize("case", LEGACY_CASES, ids=str)
def test_legacy_api_matches_torch(case: str) -> None:
    assert_same(LEGACY_CASES[case], check_warnings=True)


def test_typed_constructor_rejects_other_keywords() -> None:
    with pytest.raises(TypeError, match="new\\(\\) received an invalid combination"):
        chainrule.FloatTensor([1.0], requires_grad=True)


# ----------------------------------------------------------------------------------------------
# dtypes

DTYPE_NAMES = [
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
    "complex64", "complex128", "half", "float", "double", "short", "int", "long", "cfloat",
    "cdouble",
]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_attributes_match_torch(name: str) -> None:
    def attributes(lib):
        d = getattr(lib, name)
        return (repr(d), str(d), d.is_floating_point, d.is_signed, d.itemsize, d.is_complex,
                lib.zeros(1, dtype=d).dtype is d, lib.zeros(1, dtype=d).element_size())

    assert_same(attributes)


def test_dtype_aliases_and_conversions_match_torch() -> None:
    assert_same(lambda lib: (lib.float is lib.float32, lib.int is lib.int32,
                             lib.long is lib.int64, lib.double is lib.float64,
                             lib.half is lib.float16, lib.float32 == lib.float64,
                             lib.float32.to_complex(), lib.complex128.to_real(),
                             lib.float64.to_complex()))


def test_dtype_pickles_to_the_same_object() -> None:
    import pickle

    assert pickle.loads(pickle.dumps(chainrule.float64)) is chainrule.float64


def test_default_dtype_round_trip() -> None:
    def round_trip(lib):
        before = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        during = lib.get_default_dtype(), lib.tensor([1.5]).dtype, lib.zeros(1).dtype
        lib.set_default_dtype(lib.float32)
        return before, during, lib.get_default_dtype()

    assert_same(round_trip)
