"""Custom Functions in forward mode, the checks PyTorch makes on what ``jvp`` returns, against
PyTorch: an input modified in place (``mark_dirty``) needs its own tangent modified in place
and returned as-is (both of PyTorch's errors, decided by the tangent's version and identity);
an output that views an input needs a view of that input's tangent (of the same base when the
input's tangent is itself a view); integer inputs get None as their tangent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.autograd.forward_ad as torch_fwad

import chainrule
import chainrule.autograd.forward_ad as cr_fwad

LIBS = {"torch": (torch, torch_fwad), "chainrule": (chainrule, cr_fwad)}


def _dirty_fn(lib: Any, jvp: Callable[[Any], Any]) -> Any:
    class InplaceMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return 2 * g

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return jvp(t)

    return InplaceMul


def _modify_then_new(t: Any) -> Any:
    t.mul_(2)
    return t * 1


def _modify_then_clone(t: Any) -> Any:
    t.mul_(2)
    return t.clone()


def _new_modified_twice(t: Any) -> Any:
    r = t * 1
    r.mul_(2)
    r.add_(1)
    return r


DIRTY_JVPS: dict[str, Callable[[Any], Any]] = {
    "in-place, as-is": lambda t: t.mul_(2),
    "as-is, unmodified": lambda t: t,
    "new tensor": lambda t: t * 2,
    "modified, then a new tensor": _modify_then_new,
    "modified, then a clone": _modify_then_clone,
    "new tensor modified twice": _new_modified_twice,
    "modified view of it": lambda t: t.view_as(t).mul_(2),
}


def _run_dirty(name: str, jvp_key: str, bumps: int) -> tuple:
    lib, fwad = LIBS[name]
    with fwad.dual_level():
        tangent = lib.ones(2)
        for _ in range(bumps):  # (the check compares versions)
            tangent.add_(0)
        x = fwad.make_dual(lib.ones(2), tangent)
        try:
            out = _dirty_fn(lib, DIRTY_JVPS[jvp_key]).apply(x)
            outcome = ("ok", out is x)
        except RuntimeError as e:
            outcome = ("RuntimeError", str(e))
        now = fwad.unpack_dual(x).tangent
        return outcome, x.detach().tolist(), now.tolist(), now is tangent


@pytest.mark.parametrize("bumps", [0, 2])
@pytest.mark.parametrize("jvp_key", sorted(DIRTY_JVPS))
def test_mark_dirty_jvp_checks_as_pytorch(jvp_key: str, bumps: int) -> None:
    assert _run_dirty("chainrule", jvp_key, bumps) == _run_dirty("torch", jvp_key, bumps)


def test_mark_dirty_jvp_result_values() -> None:
    with cr_fwad.dual_level():
        tangent = chainrule.tensor([1.0, -3.0])
        x = cr_fwad.make_dual(chainrule.tensor([0.5, 2.0]), tangent)
        out = _dirty_fn(chainrule, lambda t: t.mul_(2)).apply(x)
        primal, out_tangent = cr_fwad.unpack_dual(out)
        assert out is x
        assert primal.tolist() == [1.0, 4.0]
        assert out_tangent is tangent
        assert out_tangent.tolist() == [2.0, -6.0]


def _view_fn(lib: Any, flag: str) -> Any:
    class NarrowFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, foo: Any) -> Any:
            return foo.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return lib.cat([g, g.new_zeros(2, 4)])

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            res = t.narrow(0, 0, 2)
            if flag != "ok":
                res = res.clone()
            if flag == "view of a copy":
                res = res.view_as(res)
            if flag == "view of another tensor":
                res = lib.zeros(4, 4, dtype=lib.float64).narrow(0, 0, 2)
            return res

    return NarrowFn


VIEW_FLAGS = ["ok", "not a view", "view of a copy", "view of another tensor"]


def _run_view(name: str, flag: str, input_is_view: bool) -> tuple:
    lib, fwad = LIBS[name]
    with fwad.dual_level():
        primal = lib.arange(16.0, dtype=lib.float64).reshape(4, 4)
        tangent = lib.arange(16.0, dtype=lib.float64).reshape(4, 4) / 10
        x = fwad.make_dual(primal, tangent)
        if input_is_view:
            x = x.view_as(x)
        try:
            out = _view_fn(lib, flag).apply(x)
            t = fwad.unpack_dual(out).tangent
            return "ok", t._base is tangent, t.tolist()
        except RuntimeError as e:
            return "RuntimeError", str(e)


@pytest.mark.parametrize("input_is_view", [False, True])
@pytest.mark.parametrize("flag", VIEW_FLAGS)
def test_view_output_jvp_checks_as_pytorch(flag: str, input_is_view: bool) -> None:
    got = _run_view("chainrule", flag, input_is_view)
    assert got == _run_view("torch", flag, input_is_view)


def _run_integer_input(name: str) -> tuple:
    lib, fwad = LIBS[name]
    seen: list[Any] = []

    class Func(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any, z: Any) -> Any:
            return x.clone(), y.clone(), z * 2

        @staticmethod
        def jvp(ctx: Any, xt: Any, yt: Any, zt: Any) -> Any:
            seen.append(tuple(None if t is None else t.tolist() for t in (xt, yt, zt)))
            return xt, None, zt

    with fwad.dual_level():
        x = fwad.make_dual(lib.tensor(2.0), lib.tensor(1.0))
        outs = Func.apply(x, lib.tensor(3), lib.tensor(4.0))
        tangents = [fwad.unpack_dual(o).tangent for o in outs]
        return seen, [None if t is None else t.tolist() for t in tangents]


def test_integer_input_gets_no_tangent() -> None:
    assert _run_integer_input("chainrule") == _run_integer_input("torch")
