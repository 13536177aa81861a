"""``out=`` of element-wise functions (sin ... erf, add) against PyTorch: the values written,
out's dtype, shape and version afterwards, the resize warning, the cast errors, the refusal
when an argument requires grad, Tensor methods refusing ``out=``; within a forward-AD dual
level an out= call with a tangent writes ``out`` and then raises PyTorch's NotImplementedError
(also for mul and mm, which dropped the tangents silently); and a saved tensor overwritten
through ``out=`` under ``allow_mutation_on_saved_tensors`` keeps its saved value."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwad

import chainrule
import chainrule.autograd.forward_ad as cr_fwad

UNARY = [
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "expm1",
    "exp2",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "reciprocal",
    "erf",
]


def _pair(values: np.ndarray, dtype: str) -> tuple[Any, Any]:
    return (
        torch.tensor(values, dtype=getattr(torch, dtype)),
        chainrule.tensor(values, dtype=getattr(chainrule, dtype)),
    )


def _call(lib: Any, fn: Any) -> tuple[str, Any, list[str]]:
    """(outcome, value, warnings) of ``fn(lib)``: "ok" and the result, or the exception's
    type name and message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(lib)
            outcome = "ok"
        except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
            value, outcome = str(e), type(e).__name__
    return outcome, value, [str(w.message) for w in caught]


def _same_out(t_out: Any, c_out: Any) -> None:
    assert str(c_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    assert tuple(c_out.shape) == tuple(t_out.shape)
    assert c_out._version == t_out._version
    np.testing.assert_allclose(
        c_out.numpy().astype(np.float64),
        t_out.numpy().astype(np.float64),
        rtol=2e-6,
        atol=1e-6,
        equal_nan=True,
    )


# (input dtype, out dtype, out shape): same dtype, a wider one, an integer input into float,
# integer into integer (error), a float result into an integer out (error), resizes with the
# warning (twice when the dtype differs too, as PyTorch's) and of an empty out without it
CASES = [
    ("float32", "float32", (4,)),
    ("float32", "float64", (4,)),
    ("int64", "float32", (4,)),
    ("int64", "int64", (4,)),
    ("float32", "int64", (4,)),
    ("float64", "float64", (2, 3)),
    ("float64", "float64", (0,)),
    ("float32", "float16", (4,)),
    ("float32", "float64", (3,)),
]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("in_dtype,out_dtype,out_shape", CASES)
def test_unary_out_as_pytorch(
    name: str, in_dtype: str, out_dtype: str, out_shape: tuple[int, ...]
) -> None:
    values = np.array([0.25, 0.5, 2.0, -0.75]) if in_dtype != "int64" else np.array([0, 1, 2, 3])
    t_x, c_x = _pair(values, in_dtype)
    t_out = torch.zeros(out_shape, dtype=getattr(torch, out_dtype))
    c_out = chainrule.zeros(out_shape, dtype=getattr(chainrule, out_dtype))
    got = _call(chainrule, lambda lib: getattr(lib, name)(c_x, out=c_out))
    want = _call(torch, lambda lib: getattr(lib, name)(t_x, out=t_out))
    assert got[0] == want[0], (got, want)
    assert got[2] == want[2]
    if want[0] == "ok":
        assert got[1] is c_out
        _same_out(t_out, c_out)
    else:
        assert got[1] == want[1]
        assert c_out._version == t_out._version == 0


@pytest.mark.parametrize(
    "shapes,alpha,out_dtype",
    [
        (((3,), (3,)), 1, "float32"),
        (((2, 3), (3,)), 2.5, "float64"),
        (((3,), ()), 1, "int64"),
        (((3,), (3,)), -1, "float32"),
        (((2, 3), (3,)), 1, "float32"),
    ],
)
def test_add_out_as_pytorch(shapes: tuple, alpha: float, out_dtype: str) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes)
    t_a, c_a = _pair(a, "float32")
    t_b, c_b = _pair(b, "float32")
    t_out = torch.zeros(3, dtype=getattr(torch, out_dtype))
    c_out = chainrule.zeros(3, dtype=getattr(chainrule, out_dtype))
    got = _call(chainrule, lambda lib: lib.add(c_a, c_b, alpha=alpha, out=c_out))
    want = _call(torch, lambda lib: lib.add(t_a, t_b, alpha=alpha, out=t_out))
    assert (got[0], got[2]) == (want[0], want[2])
    if want[0] == "ok":
        assert got[1] is c_out
        _same_out(t_out, c_out)
    else:
        assert got[1] == want[1]


def test_add_out_integers_and_numbers() -> None:
    t = torch.add(torch.arange(3), 1, alpha=2, out=torch.empty(3, dtype=torch.long))
    c = chainrule.add(chainrule.arange(3), 1, alpha=2, out=chainrule.empty(3, dtype=chainrule.long))
    assert c.tolist() == t.tolist()
    assert c.dtype == chainrule.int64


@pytest.mark.parametrize("name", ["sin", "add"])
def test_out_refused_when_an_argument_requires_grad(name: str) -> None:
    def run(lib: Any, in_grad: bool) -> tuple:
        x = lib.ones(2, requires_grad=in_grad)
        out = lib.zeros(2, requires_grad=not in_grad)
        args = (x,) if name == "sin" else (x, x)
        result = _call(lib, lambda lib: getattr(lib, name)(*args, out=out))
        return result[:2], out.detach().tolist()

    for in_grad in (True, False):
        assert run(chainrule, in_grad) == run(torch, in_grad)
    # allowed under no_grad, as in PyTorch
    x = chainrule.ones(2, requires_grad=True)
    out = chainrule.zeros(2)
    with chainrule.no_grad():
        chainrule.sin(x, out=out)
    assert out.tolist() == pytest.approx([np.sin(1.0)] * 2)
    assert out.grad_fn is None


def test_tensor_method_refuses_out() -> None:
    x = chainrule.ones(2)
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'out'"):
        x.add(x, out=chainrule.zeros(2))
    with pytest.raises(TypeError):
        x.sin(out=chainrule.zeros(2))
    with pytest.raises(TypeError):
        torch.ones(2).sin(out=torch.zeros(2))


FORWARD_CASES = {
    "add-input": lambda lib, dual, plain: lib.add(dual, plain, out=plain),
    "add-out": lambda lib, dual, plain: lib.add(plain, plain, out=dual),
    "sin-input": lambda lib, dual, plain: lib.sin(dual, out=plain),
    "mul-input": lambda lib, dual, plain: lib.mul(dual, plain, out=plain),
    "mm-input": lambda lib, dual, plain: lib.mm(
        dual.reshape(1, 2), plain.reshape(2, 1), out=lib.zeros(1, 1)
    ),
}


@pytest.mark.parametrize("case", sorted(FORWARD_CASES))
def test_forward_ad_refuses_out_after_writing(case: str) -> None:
    fn = FORWARD_CASES[case]

    def run(lib: Any, fwad: Any) -> tuple:
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor([0.5, 1.0]), lib.tensor([1.0, 2.0]))
            plain = lib.tensor([1.0, 3.0])
            outcome = _call(lib, lambda lib: fn(lib, dual, plain))
            tangent = fwad.unpack_dual(dual).tangent
            return (
                outcome[:2],
                [round(v, 6) for v in plain.tolist()],
                plain._version,
                [round(v, 6) for v in dual.detach().tolist()],
                None if tangent is None else tangent.tolist(),
            )

    assert run(chainrule, cr_fwad) == run(torch, torch_fwad)


def test_forward_ad_out_without_tangents_runs() -> None:
    with cr_fwad.dual_level():
        out = chainrule.zeros(2)
        chainrule.add(chainrule.ones(2), chainrule.ones(2), out=out)
    assert out.tolist() == [2.0, 2.0]


def test_out_overwriting_a_saved_tensor_under_allow_mutation() -> None:
    def run(lib: Any) -> tuple:
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            a = lib.tensor([1.5], requires_grad=True)
            b = lib.tensor([2.0])
            c = lib.tensor([0.5])
            out = a * b
            lib.sin(c, out=b)
            out.backward()
        return a.grad.tolist(), b.tolist()

    got, want = run(chainrule), run(torch)
    assert got[0] == want[0]
    assert got[1] == pytest.approx(want[1])
