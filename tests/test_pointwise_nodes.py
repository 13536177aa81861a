"""Element-wise ops whose node, saved values or overloads are PyTorch's own: sgn, clamp and its
variants (and the signed zeros at their ties), heaviside, div with a rounding mode, floor_divide,
round, and the numbers and buffers activations save.

Each test runs the same calls in chainrule and in PyTorch and compares what a user can see: the
values, the node's name and ``next_functions``, the ``_saved_*`` attributes, what
``saved_tensors_hooks`` pack (and in which order), the gradients (first and second order) and
the exception raised, type and message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

NAN = math.nan


def _lib_name(lib: Any) -> str:
    return "chainrule" if lib is chainrule else "torch"


def _describe_edges(fn: Any) -> list[Any]:
    """``next_functions`` as names (None, or the node's name without its C++ namespace)."""
    out = []
    for node, nr in fn.next_functions:
        out.append(None if node is None else (type(node).__name__, nr))
    return out


def _saved(fn: Any) -> dict[str, Any]:
    """The node's ``_saved_*`` attributes, tensors as lists, numbers as they are."""
    out = {}
    for name in dir(fn):
        if name.startswith("_saved_") and not name.endswith("_sym_sizes"):
            value = getattr(fn, name)
            out[name] = value.tolist() if hasattr(value, "tolist") else value
    return out


def _record(lib: Any, make: Callable[[Any], tuple[Any, list[Any]]]) -> dict[str, Any]:
    """Run ``make(lib) -> (output, inputs needing grad)`` under a pack hook; what is visible."""
    packed: list[Any] = []

    def pack(t: Any) -> Any:
        packed.append(t.tolist())
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out, wrt = make(lib)
    fn = out.grad_fn
    record: dict[str, Any] = {
        "value": out.detach().tolist(),
        "dtype": str(out.dtype).split(".")[-1],
        "requires_grad": out.requires_grad,
        "node": None if fn is None else fn.name().split("::")[-1],
        "repr": repr(out).replace(_lib_name(lib), "LIB"),
    }
    if fn is None:
        return record
    record["edges"] = _describe_edges(fn)
    record["saved"] = _saved(fn)
    record["packed"] = packed
    cotangent = lib.ones_like(out)
    grads = lib.autograd.grad(out, wrt, cotangent, create_graph=True, allow_unused=True)
    record["grads"] = [None if g is None else _as_list(g) for g in grads]
    record["grad_requires_grad"] = [None if g is None else g.requires_grad for g in grads]
    return record


def _as_list(t: Any) -> Any:
    if isinstance(t, chainrule.Tensor):
        return t.detach().tolist()
    return t.detach().numpy(force=True).tolist()  # PyTorch's zero tensors need force


def _same(make: Callable[[Any], tuple[Any, list[Any]]]) -> None:
    ours, theirs = _record(chainrule, make), _record(torch, make)
    assert _nan_safe(ours) == _nan_safe(theirs)


def _nan_safe(value: Any) -> Any:
    """NaN compares equal to NaN (as the string 'nan'); -0.0 stays distinct from 0.0."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return (value, math.copysign(1.0, value))
    if isinstance(value, list | tuple):
        return [_nan_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_safe(v) for k, v in value.items()}
    return value


def _leaf(lib: Any, values: list[float], dtype: str = "float64", grad: bool = True) -> Any:
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=grad)


def _raises_same(call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(chainrule)
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------------------------------------
# sgn: SgnBackward0 (sign is SignBackward0)

X = [1.5, -2.0, 0.0, -0.0, NAN, math.inf, -math.inf]


@pytest.mark.parametrize("form", ["torch.sgn", "Tensor.sgn", "Tensor.sgn_", "torch.sign",
                                  "Tensor.sign_"])
def test_sgn_records_sgn_backward_with_self_and_result_saved(form: str) -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x = _leaf(lib, X)
        if form == "torch.sgn":
            return lib.sgn(x), [x]
        if form == "Tensor.sgn":
            return x.sgn(), [x]
        if form == "torch.sign":
            return lib.sign(x), [x]
        return getattr(x.clone(), form.split(".")[1])(), [x]

    _same(make)


def test_abs_backward_records_sgn_when_differentiated_again() -> None:
    # PyTorch's abs backward is grad * self.sgn(): create_graph records SgnBackward0.
    for lib in (chainrule, torch):
        x = _leaf(lib, [1.5, -2.0, 0.0])
        (g,) = lib.autograd.grad(x.abs().sum(), x, create_graph=True)
        assert type(g.grad_fn.next_functions[1][0]).__name__ == "SgnBackward0", lib


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "bool"])
def test_sgn_values_match_sign(dtype: str) -> None:
    values = [1.5, -2.0, 0.0, 3.0] if dtype != "bool" else [True, False, True, True]
    for lib in (chainrule, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype) if dtype != "bool" else lib.bool)
        assert lib.sgn(x).tolist() == torch.sgn(torch.tensor(x.tolist(), dtype=getattr(
            torch, dtype) if dtype != "bool" else torch.bool)).tolist()
        assert str(lib.sgn(x).dtype).split(".")[-1] == dtype


# ----------------------------------------------------------------------------------------------
# clamp, clip, clamp_min, clamp_max: every overload, node and saved value; ties; NaN bounds

XC = [-1.0, 0.0, 0.5, 1.0, 2.0, NAN, -0.0]
LOW = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # ties at x == 0 (and -0.)
HIGH = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # a tie at x == 1
NAN_BOUND = [NAN, 0.0, NAN, 1.0, NAN, 0.0, NAN]

_CLAMP_CALLS: dict[str, Callable[..., Any]] = {
    "clamp(min=t)": lambda lib, x, a, b: lib.clamp(x, min=a),
    "clamp(max=t)": lambda lib, x, a, b: lib.clamp(x, max=b),
    "clamp(t, t)": lambda lib, x, a, b: lib.clamp(x, a, b),
    "clamp(None, t)": lambda lib, x, a, b: lib.clamp(x, None, b),
    "clamp(t, None)": lambda lib, x, a, b: lib.clamp(x, a, None),
    "clamp crossed": lambda lib, x, a, b: lib.clamp(x, b, a),
    "clip(t, t)": lambda lib, x, a, b: lib.clip(x, a, b),
    "Tensor.clamp(min=t)": lambda lib, x, a, b: x.clamp(min=a),
    "Tensor.clip(max=t)": lambda lib, x, a, b: x.clip(max=b),
    "Tensor.clamp_(t, t)": lambda lib, x, a, b: x.clone().clamp_(a, b),
    "Tensor.clamp_(min=t)": lambda lib, x, a, b: x.clone().clamp_(min=a),
    "Tensor.clip_(max=t)": lambda lib, x, a, b: x.clone().clip_(max=b),
    "clamp_min(t)": lambda lib, x, a, b: lib.clamp_min(x, a),
    "clamp_max(t)": lambda lib, x, a, b: lib.clamp_max(x, b),
    "Tensor.clamp_min_(t)": lambda lib, x, a, b: x.clone().clamp_min_(a),
    "Tensor.clamp_max_(t)": lambda lib, x, a, b: x.clone().clamp_max_(b),
    "clamp(n, n)": lambda lib, x, a, b: lib.clamp(x, 0.0, 1.0),
    "clamp(min=n)": lambda lib, x, a, b: lib.clamp(x, min=0),
    "clamp(max=n)": lambda lib, x, a, b: lib.clamp(x, max=1.0),
    "clamp(nan, n)": lambda lib, x, a, b: lib.clamp(x, NAN, 1.0),
    "clamp(max=nan)": lambda lib, x, a, b: lib.clamp(x, max=NAN),
    "clamp crossed numbers": lambda lib, x, a, b: lib.clamp(x, 1.0, 0.0),
    "clamp_min(n)": lambda lib, x, a, b: lib.clamp_min(x, 0.0),
    "clamp_max(n)": lambda lib, x, a, b: lib.clamp_max(x, 1.0),
    "clamp_min(nan)": lambda lib, x, a, b: lib.clamp_min(x, NAN),
    "Tensor.clamp_(n, n)": lambda lib, x, a, b: x.clone().clamp_(0.0, 1.0),
}


@pytest.mark.parametrize("bounds", ["ties", "nan_low", "nan_high"])
@pytest.mark.parametrize("form", list(_CLAMP_CALLS))
def test_clamp_forms_match_torch(form: str, bounds: str) -> None:
    low = NAN_BOUND if bounds == "nan_low" else LOW
    high = NAN_BOUND if bounds == "nan_high" else HIGH

    def make(lib: Any) -> tuple[Any, list[Any]]:
        x, a, b = _leaf(lib, XC), _leaf(lib, low), _leaf(lib, high)
        return _CLAMP_CALLS[form](lib, x, a, b), [x, a, b]

    _same(make)


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
def test_clamp_saves_what_pytorch_saves(needs: tuple[bool, bool]) -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x, a = _leaf(lib, XC, grad=needs[0]), _leaf(lib, LOW, grad=needs[1])
        return lib.clamp(x, min=a), [t for t, n in zip((x, a), needs, strict=True) if n]

    _same(make)


def test_clamp_second_order_matches_torch() -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x, a = _leaf(lib, [-1.0, 0.5, 2.0]), _leaf(lib, [0.0, 1.0, 3.0])
        y = lib.clamp(x * x, min=a * a)
        gx, ga = lib.autograd.grad(y.sum(), [x, a], create_graph=True)
        return gx * ga, [x, a]

    _same(make)


@pytest.mark.parametrize("call", [
    lambda lib, x, t: lib.clamp(x, 0.0, t),
    lambda lib, x, t: lib.clamp(x, t, 1),
    lambda lib, x, t: lib.clamp(x, min=0.0, max=t),
    lambda lib, x, t: lib.clamp(x, max=0.0, min=t),
    lambda lib, x, t: lib.clamp(x, 1, max=t),
    lambda lib, x, t: lib.clamp(input=x, min=1, max=t),
    lambda lib, x, t: lib.clamp(x, np.float64(1.0), t),
    lambda lib, x, t: lib.clamp(x, True, t),
    lambda lib, x, t: lib.clamp(x, [1.0]),
    lambda lib, x, t: lib.clamp(x, "a"),
    lambda lib, x, t: lib.clip(x, 0.0, t),
    lambda lib, x, t: lib.clamp_min(x, None),
    lambda lib, x, t: lib.clamp_min(x, min=None),
    lambda lib, x, t: lib.clamp_max(x, None),
    lambda lib, x, t: lib.clamp_max(x, "a"),
    lambda lib, x, t: lib.clamp(x),
    lambda lib, x, t: lib.clamp(x, None, None),
], ids=lambda f: "")
def test_clamp_overload_errors_match_torch(call: Callable[..., Any]) -> None:
    """A number with a tensor bound, a bound of another type or a missing one: PyTorch's
    TypeError quoting the call (or its RuntimeError for no bound at all)."""
    _raises_same(lambda lib: call(lib, _leaf(lib, [-1.0, 0.5, 2.0]),
                                  _leaf(lib, [0.0, 0.0, 0.0], grad=False)))


def test_clamp_mixed_bounds_in_place_raises_and_changes_nothing() -> None:
    x = chainrule.tensor([-1.0, 0.5, 2.0])
    with pytest.raises(TypeError):
        x.clamp_(chainrule.zeros(3), 1.0)
    assert x.tolist() == [-1.0, 0.5, 2.0] and x._version == 0


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("float32", "int64"),
                                    ("float16", "float32"), ("float32", "float64")])
def test_clamp_tensor_bounds_promote_as_torch(dtypes: tuple[str, str]) -> None:
    for form in ("min", "max"):
        results = []
        for lib in (chainrule, torch):
            x = lib.tensor([-3, 0, 5]).to(getattr(lib, dtypes[0]))
            b = lib.tensor([0, 1, 2]).to(getattr(lib, dtypes[1]))
            y = lib.clamp(x, **{form: b})
            results.append((y.tolist(), str(y.dtype).split(".")[-1]))
        assert results[0] == results[1]


# ----------------------------------------------------------------------------------------------
# heaviside and floor_divide: no derivative, a NotImplemented node whose backward raises

XH = [-1.5, 0.0, -0.0, 2.0, NAN, math.inf, -math.inf, 1e-45]
VH = [0.5, 0.25, 0.75, 0.5, 0.5, 0.5, 0.5, NAN]


def _not_differentiable(lib: Any, make: Callable[[Any], tuple[Any, list[Any]]]
                        ) -> dict[str, Any]:
    out, wrt = make(lib)
    fn = out.grad_fn
    record: dict[str, Any] = {
        "value": _nan_safe(out.detach().tolist()),
        "dtype": str(out.dtype).split(".")[-1],
        "requires_grad": out.requires_grad,
        "repr": repr(out).replace(_lib_name(lib), "LIB"),
        "node": None if fn is None else fn.name().replace(_lib_name(lib), "LIB"),
        "node repr": None if fn is None else repr(fn).split(" object")[0],
    }
    if fn is None:
        return record
    record["edges"] = _describe_edges(fn)
    for what, run in (("backward", lambda: out.sum().backward()),
                      ("grad", lambda: lib.autograd.grad(out.sum(), wrt))):
        try:
            run()
            record[what] = "no error"
        except RuntimeError as error:
            record[what] = str(error)
    return record


def _same_not_differentiable(make: Callable[[Any], tuple[Any, list[Any]]]) -> None:
    assert _not_differentiable(chainrule, make) == _not_differentiable(torch, make)


_HEAVISIDE_CALLS: dict[str, Callable[..., Any]] = {
    "torch.heaviside": lambda lib, x, v: lib.heaviside(x, v),
    "Tensor.heaviside": lambda lib, x, v: x.heaviside(v),
    "keywords": lambda lib, x, v: lib.heaviside(input=x, values=v),
    "Tensor.heaviside_": lambda lib, x, v: x.clone().heaviside_(v),
    "0-d values": lambda lib, x, v: lib.heaviside(x, v[1]),
    "broadcast": lambda lib, x, v: lib.heaviside(x.reshape(2, 4), v.reshape(2, 4)[:1]),
    "float16": lambda lib, x, v: lib.heaviside(x.half(), v.half()),
    "float32": lambda lib, x, v: lib.heaviside(x.float(), v.float()),
}


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True), (False, False)])
@pytest.mark.parametrize("form", list(_HEAVISIDE_CALLS))
def test_heaviside_matches_torch(form: str, needs: tuple[bool, bool]) -> None:
    """Values (0 at NaN, ``values`` at -0.), a NotImplemented node with an edge for each input
    that requires grad, and PyTorch's error when a backward reaches it."""

    def make(lib: Any) -> tuple[Any, list[Any]]:
        x, v = _leaf(lib, XH, grad=needs[0]), _leaf(lib, VH, grad=needs[1])
        return _HEAVISIDE_CALLS[form](lib, x, v), [t for t, n in zip((x, v), needs,
                                                                       strict=True) if n]

    _same_not_differentiable(make)


def test_heaviside_of_a_view_in_place_matches_torch() -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x = _leaf(lib, XH)
        base = x.clone()
        base[2:].heaviside_(_leaf(lib, VH[2:], grad=False))
        return base, [x]

    _same_not_differentiable(make)


@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("bool", "bool"), ("int32", "int32"),
                                    ("float32", "float64"), ("int64", "float32")])
def test_heaviside_dtypes_match_torch(dtypes: tuple[str, str]) -> None:
    def call(lib: Any) -> Any:
        x = lib.tensor([-2, 0, 3, 0]).to(getattr(lib, dtypes[0]))
        v = lib.tensor([7, 1, 0, 1]).to(getattr(lib, dtypes[1]))
        return lib.heaviside(x, v)

    try:
        theirs = call(torch)
    except RuntimeError:
        _raises_same(call)
        return
    ours = call(chainrule)
    assert ours.tolist() == theirs.tolist()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda lib, x, v: lib.heaviside(x, 0.5),
    lambda lib, x, v: lib.heaviside(0.5, v),
    lambda lib, x, v: x.clone().heaviside_(0.5),
    lambda lib, x, v: x.clone().heaviside_(v.double()),
    lambda lib, x, v: x.clone().heaviside_(v.reshape(2, 4, 1)),
], ids=["number values", "number input", "in place number", "in place dtype",
        "in place broadcast"])
def test_heaviside_errors_match_torch(call: Callable[..., Any]) -> None:
    _raises_same(lambda lib: call(lib, _leaf(lib, XH, "float32", grad=False),
                                  _leaf(lib, VH, "float32", grad=False)))


_FLOOR_DIVIDE_CALLS: dict[str, Callable[..., Any]] = {
    "tensors": lambda lib, x, y: lib.floor_divide(x, y),
    "number": lambda lib, x, y: lib.floor_divide(x, 2.0),
    "operator": lambda lib, x, y: x // y,
    "number operator": lambda lib, x, y: x // 2,
    "reflected": lambda lib, x, y: 7 // x,
}


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("form", list(_FLOOR_DIVIDE_CALLS))
def test_floor_divide_node_matches_torch(form: str, needs: tuple[bool, bool]) -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x = _leaf(lib, [3.5, -2.0, 7.0, 0.5], grad=needs[0])
        y = _leaf(lib, [0.5, 0.75, -2.0, 0.0], grad=needs[1])
        return _FLOOR_DIVIDE_CALLS[form](lib, x, y), [t for t, n in zip((x, y), needs,
                                                                          strict=True) if n]

    _same_not_differentiable(make)


# ----------------------------------------------------------------------------------------------
# div with a rounding mode: DivBackward2

XD = [-3.5, 0.0, 2.5, 7.0, -0.0, 1e-45]
YD = [2.0, -1.5, 0.5, 0.0, 3.0, -2.5]

_DIV_CALLS: dict[str, Callable[..., Any]] = {
    "floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "trunc": lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
    "None": lambda lib, x, y: lib.div(x, y, rounding_mode=None),
    "no mode": lambda lib, x, y: lib.div(x, y),
    "floor number": lambda lib, x, y: lib.div(x, 2.5, rounding_mode="floor"),
    "trunc int": lambda lib, x, y: lib.div(x, -2, rounding_mode="trunc"),
    "None number": lambda lib, x, y: lib.div(x, 2.0, rounding_mode=None),
    "number by tensor": lambda lib, x, y: lib.div(2.0, y, rounding_mode="floor"),
    "Tensor.div": lambda lib, x, y: x.div(y, rounding_mode="trunc"),
    "divide": lambda lib, x, y: lib.divide(x, y, rounding_mode="floor"),
    "Tensor.div_": lambda lib, x, y: x.clone().div_(y, rounding_mode="floor"),
    "Tensor.div_ number": lambda lib, x, y: x.clone().div_(3, rounding_mode="trunc"),
    "Tensor.divide_ None": lambda lib, x, y: x.clone().divide_(y, rounding_mode=None),
}


def _div_cases() -> list[Any]:
    """Each form with each choice of inputs needing grad that leaves an output requiring it
    (a number divisor takes no gradient)."""
    cases = []
    for form in _DIV_CALLS:
        for needs in ((True, False), (False, True), (True, True)):
            number_divisor = "number" in form or "int" in form
            if number_divisor and not needs[0] or form.startswith("number") and not needs[1]:
                continue
            cases.append(pytest.param(form, needs, id=f"{form}-{needs}"))
    return cases


@pytest.mark.parametrize(("form", "needs"), _div_cases())
def test_div_rounding_matches_torch(form: str, needs: tuple[bool, bool]) -> None:
    """DivBackward2 whenever a rounding mode is given (None included): what it saves (other,
    then self, and the mode), zero gradients for floor and trunc with no graph behind them."""

    def make(lib: Any) -> tuple[Any, list[Any]]:
        x, y = _leaf(lib, XD, grad=needs[0]), _leaf(lib, YD, grad=needs[1])
        return _DIV_CALLS[form](lib, x, y), [t for t, n in zip((x, y), needs, strict=True)
                                             if n]

    _same(make)


@pytest.mark.parametrize("mode", ["bad", 3])
def test_div_rounding_mode_errors_match_torch(mode: Any) -> None:
    _raises_same(lambda lib: lib.div(_leaf(lib, XD), 2, rounding_mode=mode))


# ----------------------------------------------------------------------------------------------
# Signed zeros at ties: PyTorch's max(a, b) is ``a < b ? b : a``, so a tie keeps the input

_TIE_CALLS: dict[str, Callable[..., Any]] = {
    "clamp(min=t)": lambda lib, x, z: lib.clamp(x, min=z),
    "clamp(max=t)": lambda lib, x, z: lib.clamp(x, max=z),
    "clamp(t, t)": lambda lib, x, z: lib.clamp(x, z, z),
    "clamp(0., 1.)": lambda lib, x, z: lib.clamp(x, 0.0, 1.0),
    "clamp(-0., 1.)": lambda lib, x, z: lib.clamp(x, -0.0, 1.0),
    "clamp(max=0.)": lambda lib, x, z: lib.clamp(x, max=0.0),
    "clamp_min(t)": lambda lib, x, z: lib.clamp_min(x, z),
    "clamp_max(t)": lambda lib, x, z: lib.clamp_max(x, z),
    "clamp_min(0.)": lambda lib, x, z: lib.clamp_min(x, 0.0),
    "relu": lambda lib, x, z: lib.relu(x),
    "relu6": lambda lib, x, z: lib.nn.functional.relu6(x),
    "hardtanh(0, 1)": lambda lib, x, z: lib.nn.functional.hardtanh(x, 0.0, 1.0),
    "maximum": lambda lib, x, z: lib.maximum(x, z),
    "minimum": lambda lib, x, z: lib.minimum(x, z),
    "fmax": lambda lib, x, z: lib.fmax(x, z),
    "fmin": lambda lib, x, z: lib.fmin(x, z),
}


def _signs(t: Any) -> list[bool]:
    return np.signbit(t.detach().numpy()).tolist()


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("form", list(_TIE_CALLS))
def test_ties_at_signed_zeros_keep_the_input_as_torch(form: str, dtype: str,
                                                      contiguous: bool) -> None:
    """-0. against 0. and 0. against -0.: the result is the input, as PyTorch's scalar loop
    (``std::max``) gives it for any tensor it runs on: a non-contiguous one, or a contiguous
    one shorter than a pair of SIMD vectors (16 float32, 8 float64 elements here), so every
    small tensor a user prints (``relu(tensor([-0.]))`` is ``tensor([-0.])``).

    PyTorch is not consistent here: its vectorised loop, which runs on whole pairs of vectors
    of a contiguous tensor, returns the other operand at such ties (``clamp``, ``maximum``,
    ``relu`` ... on a long contiguous tensor give 0. at those elements, -0. in the tail).
    chainrule gives the scalar loop's answer everywhere; the long inputs below are compared
    with PyTorch's scalar loop (a strided input)."""
    n = 3 if contiguous else 37
    x_values, z_values = [-0.0, 0.0] * n, [0.0, -0.0] * n

    def make(lib: Any, values: list[float]) -> Any:
        kind = getattr(lib, dtype)
        if contiguous or lib is chainrule:
            return lib.tensor(values, dtype=kind)
        view = torch.zeros(2 * len(values), dtype=kind)[::2]
        view.copy_(torch.tensor(values, dtype=kind))
        return view

    ours = _TIE_CALLS[form](chainrule, make(chainrule, x_values), make(chainrule, z_values))
    theirs = _TIE_CALLS[form](torch, make(torch, x_values), make(torch, z_values))
    assert _signs(ours) == _signs(theirs)
    assert ours.tolist() == theirs.tolist()


# ----------------------------------------------------------------------------------------------
# Activations: the numbers and tensors their nodes save

_ACTIVATION_CALLS: dict[str, Callable[..., Any]] = {
    "elu": lambda lib, x: lib.nn.functional.elu(x),
    "elu alpha int": lambda lib, x: lib.nn.functional.elu(x, 2),
    "elu in place": lambda lib, x: lib.nn.functional.elu(x.clone(), inplace=True),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "selu in place": lambda lib, x: lib.nn.functional.selu(x.clone(), inplace=True),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
    "softplus beta": lambda lib, x: lib.nn.functional.softplus(x, 2.0),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "relu6 in place": lambda lib, x: lib.nn.functional.relu6(x.clone(), inplace=True),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
}


@pytest.mark.parametrize("form", list(_ACTIVATION_CALLS))
def test_activation_saved_numbers_match_torch(form: str) -> None:
    """``grad_fn._saved_*`` numbers as PyTorch keeps them: the integers 1 and 6 it passes
    internally (elu's scales, relu6's bounds, softplus's defaults) stay integers."""
    records = []
    for lib in (chainrule, torch):
        fn = _ACTIVATION_CALLS[form](lib, _leaf(lib, [0.5, -1.0, 7.0])).grad_fn
        saved = {k: v for k, v in _saved(fn).items() if not isinstance(v, list)}
        records.append((fn.name(), {k: (type(v).__name__, v) for k, v in saved.items()}))
    assert records[0] == records[1]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_logsigmoid_saves_its_buffer_as_torch(dtype: str) -> None:
    """LogSigmoidBackward0 saves the forward's buffer ``exp(-|x|)`` with ``self``; its backward
    (and the node recorded by create_graph) reads that buffer, in the input's dtype."""
    values = [0.5, -1.0, 0.0, -30.0, 20.0, NAN, math.inf, -math.inf]
    records, numbers = [], []
    for lib in (chainrule, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.logsigmoid(x)
        fn = y.grad_fn
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x)
        records.append({
            "saved": sorted(n for n in dir(fn) if n.startswith("_saved_")),
            "buffer dtype": str(fn._saved_buffer.dtype).split(".")[-1],
            "buffer requires grad": fn._saved_buffer.requires_grad,
            "grad node": g.grad_fn.name(),
        })
        numbers.append([np.array(t.tolist(), dtype=np.float64)
                        for t in (y, fn._saved_buffer, g, g2)])
    assert records[0] == records[1]
    ulp = float(np.finfo(dtype).eps)
    for ours, theirs in zip(*numbers, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=4 * ulp, atol=4 * ulp)


# ----------------------------------------------------------------------------------------------
# round: RoundBackward1 whenever decimals is given; integer and bool inputs as PyTorch's kernels


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.round(x),
    lambda lib, x: lib.round(x, decimals=0),
    lambda lib, x: lib.round(x, decimals=1),
    lambda lib, x: lib.round(x, decimals=-1),
    lambda lib, x: x.round(decimals=0),
    lambda lib, x: x.clone().round_(decimals=1),
], ids=["plain", "decimals=0", "decimals=1", "decimals=-1", "method", "in place"])
def test_round_matches_torch(call: Callable[..., Any]) -> None:
    def make(lib: Any) -> tuple[Any, list[Any]]:
        x = _leaf(lib, [1.25, -0.5, 2.5, -0.0, NAN, 15.0, -25.0, math.inf])
        return call(lib, x), [x]

    _same(make)


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "int32"])
@pytest.mark.parametrize("decimals", [None, 0, 2])
def test_round_of_integers_matches_torch(dtype: str, decimals: int | None) -> None:
    def call(lib: Any) -> Any:
        kind = lib.bool if dtype == "bool" else getattr(lib, dtype)
        x = lib.tensor([1, 0, 1]).to(kind)
        return lib.round(x) if decimals is None else lib.round(x, decimals=decimals)

    try:
        theirs = call(torch)
    except NotImplementedError:
        _raises_same(call)
        return
    ours = call(chainrule)
    assert ours.tolist() == theirs.tolist() and str(ours.dtype)[-5:] == str(theirs.dtype)[-5:]
