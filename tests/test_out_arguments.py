"""``out=`` of the matrix products (matmul, mm, bmm, mv, dot, vdot, addmm, addmv, addr,
baddbmm, addbmm, outer/ger) and mul, against PyTorch: the values written, out's dtype, shape,
strides and version afterwards, the resize warning, the dtype errors of each op's rule, the
refusal when an argument requires grad, Tensor methods refusing ``out=``, and a refused call
leaving ``out`` as it was."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

# name -> (function name in both libraries, argument shapes)
CASES: dict[str, tuple[str, list[tuple[int, ...]]]] = {
    "matmul-2d": ("matmul", [(2, 3), (3, 4)]),
    "matmul-1d": ("matmul", [(3,), (3,)]),
    "matmul-1d2d": ("matmul", [(3,), (3, 4)]),
    "matmul-2d1d": ("matmul", [(2, 3), (3,)]),
    "matmul-3d2d": ("matmul", [(5, 2, 3), (3, 4)]),
    "matmul-3d1d": ("matmul", [(4, 2, 3), (3,)]),
    "matmul-1d3d": ("matmul", [(3,), (4, 3, 2)]),
    "matmul-bcast": ("matmul", [(2, 1, 2, 3), (4, 3, 2)]),
    "mm": ("mm", [(2, 3), (3, 4)]),
    "bmm": ("bmm", [(2, 2, 3), (2, 3, 4)]),
    "mv": ("mv", [(2, 3), (3,)]),
    "dot": ("dot", [(3,), (3,)]),
    "vdot": ("vdot", [(3,), (3,)]),
    "addmm": ("addmm", [(2, 4), (2, 3), (3, 4)]),
    "addmv": ("addmv", [(2,), (2, 3), (3,)]),
    "addr": ("addr", [(2, 3), (2,), (3,)]),
    "baddbmm": ("baddbmm", [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "addbmm": ("addbmm", [(2, 4), (2, 2, 3), (2, 3, 4)]),
    "outer": ("outer", [(2,), (3,)]),
    "ger": ("ger", [(2,), (3,)]),
    "mul": ("mul", [(2, 3), (2, 3)]),
    "mul-transposed": ("mul", [(3, 2), (3, 2)]),
}

# out tensors: (shape, dtype name, transposed)
OUTS = {
    "empty": ((0,), "float32", False),
    "right": (None, "float32", False),
    "wrong-nonempty": ((7,), "float32", False),
    "long": ((0,), "int64", False),
    "double": ((0,), "float64", False),
    "right-long": (None, "int64", False),
}


def _inputs(lib: Any, shapes: list[tuple[int, ...]], dtype: str, transposed: bool) -> list[Any]:
    made = []
    for i, shape in enumerate(shapes):
        n = int(np.prod(shape))
        values = (np.arange(n, dtype=np.float64).reshape(shape) * 0.5 - i).tolist()
        if transposed and len(shape) == 2:
            t = lib.tensor(values, dtype=getattr(lib, dtype)).reshape(shape[::-1]).t()
        else:
            t = lib.tensor(values, dtype=getattr(lib, dtype))
        made.append(t)
    return made


def _state(t: Any) -> tuple[Any, ...]:
    return (
        tuple(t.shape),
        str(t.dtype).split(".")[-1],
        t.stride(),
        t._version,
        t.requires_grad,
        t.detach().double().tolist(),
    )


def _run(lib: Any, case: str, out_kind: str, in_dtype: str = "float32") -> tuple[Any, ...]:
    name, shapes = CASES[case]
    args = _inputs(lib, shapes, in_dtype, case.endswith("transposed"))
    shape, out_dtype, _ = OUTS[out_kind]
    if shape is None:
        shape = tuple(getattr(torch, name)(*_inputs(torch, shapes, in_dtype, False)).shape)
    out = lib.full(
        shape, 9.0 if out_dtype.startswith("float") else 9, dtype=getattr(lib, out_dtype)
    )
    before = _state(out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = getattr(lib, name)(*args, out=out)
        except Exception as e:  # noqa: BLE001 (type and message are compared)
            # (PyTorch's dot resizes out before refusing its dtype; chainrule changes nothing)
            assert lib is torch or _state(out) == before, "a refused call changed out"
            return ("error", type(e).__name__, str(e).replace("chainrule", "torch"))
    messages = [str(w.message) for w in caught]
    return ("ok", result is out, _state(out), messages)


@pytest.mark.parametrize("out_kind", list(OUTS))
@pytest.mark.parametrize("case", list(CASES))
def test_out_as_pytorch(case: str, out_kind: str) -> None:
    assert _run(chainrule, case, out_kind) == _run(torch, case, out_kind)


@pytest.mark.parametrize(
    "case",
    [
        "matmul-2d",
        "matmul-1d",
        "mm",
        "dot",
        "addmv",
        "addr",
        "mul",
        "addbmm",
        "matmul-3d1d",
        "baddbmm",
    ],
)
def test_out_with_integer_inputs(case: str) -> None:
    for out_kind in ("empty", "long"):
        assert _run(chainrule, case, out_kind, "int64") == _run(torch, case, out_kind, "int64")


def _grad_refusal(lib: Any, case: str, which: str, grad_mode: bool) -> tuple[Any, ...]:
    name, shapes = CASES[case]
    args = _inputs(lib, shapes, "float32", False)
    out = lib.zeros(0)
    if which == "out":
        out.requires_grad_()
    else:
        args[0].requires_grad_()
    try:
        with lib.set_grad_enabled(grad_mode):
            result = getattr(lib, name)(*args, out=out)
    except RuntimeError as e:
        return ("error", str(e))
    return ("ok", result is out, _state(out))


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("which", ["input", "out"])
@pytest.mark.parametrize(
    "case",
    [
        "matmul-2d",
        "matmul-1d",
        "mm",
        "bmm",
        "mv",
        "dot",
        "addmm",
        "addr",
        "outer",
        "mul",
        "baddbmm",
        "addbmm",
    ],
)
def test_requires_grad_refused_in_grad_mode(case: str, which: str, grad_mode: bool) -> None:
    assert _grad_refusal(chainrule, case, which, grad_mode) == _grad_refusal(
        torch, case, which, grad_mode
    )


def _outcome(run: Callable[[], Any]) -> tuple[str, str]:
    try:
        run()
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e).replace("chainrule", "torch"))
    return ("ok", "")


@pytest.mark.parametrize("name", ["matmul", "mm", "mul", "outer", "dot"])
def test_tensor_methods_refuse_out(name: str) -> None:
    def call(lib: Any) -> Callable[[], Any]:
        a = lib.ones(3, 3) if name != "outer" and name != "dot" else lib.ones(3)
        return lambda: getattr(a, name)(a, out=lib.empty(0))

    assert _outcome(call(chainrule)) == _outcome(call(torch))


@pytest.mark.parametrize("name", ["matmul", "mm"])
def test_out_that_is_not_a_tensor(name: str) -> None:
    def call(lib: Any) -> Callable[[], Any]:
        a = lib.ones(2, 2)
        return lambda: getattr(lib, name)(a, a, out=3)

    assert _outcome(call(chainrule)) == _outcome(call(torch))


def test_out_none_is_an_ordinary_call() -> None:
    a = chainrule.ones(2, 3, requires_grad=True)
    r = chainrule.matmul(a, chainrule.ones(3, 2), out=None)
    assert r.grad_fn is not None
    r = chainrule.mm(a, chainrule.ones(3, 2), out=None)
    assert r.grad_fn.name() == "MmBackward0"


def _layouts(lib: Any) -> list[Any]:
    a = lib.arange(6.0).reshape(2, 3)
    b = lib.arange(12.0).reshape(3, 4)
    seen = []
    transposed_out = lib.zeros(4, 2).t()  # the right shape: written through its strides
    lib.mm(a, b, out=transposed_out)
    seen.append((transposed_out.stride(), transposed_out.tolist()))
    base = lib.zeros(3, 4)
    lib.matmul(a, b, out=base[:2])  # a view: its base sees the result
    seen.append(base.tolist())
    e = lib.empty(0)
    lib.mul(a.t(), a.t(), out=e)  # resized to the operands' layout
    seen.append((e.stride(), e.tolist()))
    return seen


def test_layouts_and_aliasing() -> None:
    assert _layouts(chainrule) == _layouts(torch)


def test_out_that_is_an_input_is_computed_before_writing() -> None:
    # (PyTorch's own answer here depends on its BLAS: MKL zeroes the output first on an AMD
    # EPYC, [[0, 0], [0, 0]], and multiplies first elsewhere; chainrule gives the product)
    square = chainrule.arange(4.0).reshape(2, 2)
    chainrule.mm(square, square, out=square)
    assert square.tolist() == [[2.0, 3.0], [6.0, 11.0]]


def test_half_and_bfloat16_out() -> None:
    for dtype in ("float16", "bfloat16", "float64"):

        def run(lib: Any, dtype: str = dtype) -> Any:
            a = lib.arange(6.0, dtype=getattr(lib, dtype)).reshape(2, 3) / 8
            out = lib.empty(0, dtype=getattr(lib, dtype))
            lib.mm(a, a.t(), out=out)
            return out.double().tolist(), str(out.dtype).split(".")[-1]

        assert run(chainrule) == run(torch)


def test_resize_warning_points_at_the_caller() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chainrule.matmul(chainrule.ones(2, 3), chainrule.ones(3, 4), out=chainrule.zeros(3))
    assert len(caught) == 1
    assert caught[0].category is UserWarning
    assert caught[0].filename == __file__
