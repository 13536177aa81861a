"""Forward grad mode (``torch._C._set_fwd_grad_enabled``, ``forward_ad._is_fwd_grad_enabled``
and ``forward_ad._set_fwd_grad_enabled``) compared with PyTorch: with the mode off no tangent
is made, read or carried, even within a dual level, and tangents made before come back when it
is on again.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest

from .outcomes import same_outcome


def _fw(lib: Any) -> Any:
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


@pytest.fixture(autouse=True)
def _mode_restored() -> Any:
    yield
    import chainrule

    from .conftest import torch

    for lib in (chainrule, torch):
        lib._C._set_fwd_grad_enabled(True)
        while _fw(lib)._current_level >= 0:
            _fw(lib).exit_dual_level()


def test_mode_is_on_by_default_and_switches() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        seen = [fw._is_fwd_grad_enabled(), lib._C._is_fwd_grad_enabled()]
        lib._C._set_fwd_grad_enabled(False)
        seen.append(fw._is_fwd_grad_enabled())
        lib._C._set_fwd_grad_enabled(True)
        seen.append(fw._is_fwd_grad_enabled())
        return seen

    same_outcome(program)


def test_make_dual_and_ops_without_tangents_when_off() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        lib._C._set_fwd_grad_enabled(False)
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.ones(2))
            y = x * 2
            return fw.unpack_dual(x).tangent, fw.unpack_dual(y)

    same_outcome(program)


def test_context_manager_switches_off_within_a_level() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        out = []
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
            with fw._set_fwd_grad_enabled(False):
                out += [
                    fw._is_fwd_grad_enabled(),
                    fw.unpack_dual(x.sin()).tangent,
                    fw.unpack_dual(x.view(2)).tangent,
                ]
                x.add_(1)  # (the tangent is not touched)
            out += [fw._is_fwd_grad_enabled(), fw.unpack_dual(x), fw.unpack_dual(x * 3).tangent]
        return out

    same_outcome(program)


def test_set_mode_takes_effect_at_construction() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        lib._C._set_fwd_grad_enabled(False)
        out = [fw._is_fwd_grad_enabled()]
        ctx = fw._set_fwd_grad_enabled(True)
        out.append(fw._is_fwd_grad_enabled())
        with ctx:
            out.append(fw._is_fwd_grad_enabled())
        out.append(fw._is_fwd_grad_enabled())
        return out

    same_outcome(program)


def test_decorated_function_fails_as_in_pytorch() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)

        @fw._set_fwd_grad_enabled(False)
        def tangent_of_double(x: Any) -> Any:
            return fw.unpack_dual(x * 2).tangent

        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.ones(2))
            return tangent_of_double(x), fw._is_fwd_grad_enabled(), fw.unpack_dual(x * 2).tangent

    same_outcome(program)


def test_level_entered_while_off_carries_tangents_once_on() -> None:
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        lib._C._set_fwd_grad_enabled(False)
        with fw.dual_level():
            a = fw.make_dual(lib.ones(2), lib.ones(2))  # (no tangent: made while off)
            lib._C._set_fwd_grad_enabled(True)
            b = fw.make_dual(lib.ones(2), lib.full((2,), 2.0))
            return fw.unpack_dual(a * 2).tangent, fw.unpack_dual(b.exp()).tangent

    same_outcome(program)


def test_inference_mode_turns_forward_grad_off() -> None:
    # As PyTorch's InferenceMode: off inside (no tangent made, read or carried; make_dual
    # inside gives none even after), on again in inference_mode(False), restored after.
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        out: list[Any] = []
        with lib.inference_mode():
            out.append(fw._is_fwd_grad_enabled())
            with lib.inference_mode(False):
                out.append(fw._is_fwd_grad_enabled())
        out.append(fw._is_fwd_grad_enabled())
        x = lib.tensor([1.0, 2.0])
        with fw.dual_level():
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            with lib.inference_mode():
                with lib.inference_mode(False):
                    out.append(fw.unpack_dual(d * 2).tangent)
                e = d * 3
                out.append(fw.unpack_dual(d).tangent)
                d2 = fw.make_dual(x, lib.ones(2))
            out += [fw.unpack_dual(e).tangent, fw.unpack_dual(d2).tangent]
            with lib.inference_mode():
                d.mul_(2)  # (the primal changes, the tangent does not)
            out += [fw.unpack_dual(d), fw.unpack_dual(d * 2).tangent]
        return out

    same_outcome(program)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.arange(5.0)[:4],
        lambda lib: lib.arange(6.0)[2:],
        lambda lib: lib.arange(6.0).view(2, 3).t(),
        lambda lib: lib.arange(4.0),
        lambda lib: lib.arange(8.0).view(2, 4)[:, ::2],
    ],
)
def test_make_dual_lays_the_tangent_out_as_the_primal(make: Any) -> None:
    # The tangent keeps its identity only with the primal's strides, storage offset and
    # storage size; else a copy laid out so (views reaching beyond the primal find it).
    def program(lib: Any) -> Any:
        fw = _fw(lib)
        primal = make(lib)
        tangent = lib.arange(float(primal.numel())).view(primal.shape) * 10
        with fw.dual_level():
            dual = fw.make_dual(primal, tangent)
            t = fw.unpack_dual(dual).tangent
            kept = t is tangent
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (TypedStorage is deprecated)
                layout = (t.stride(), t.storage_offset(), len(t.storage()))
            t *= 2  # (a copy: the given tangent is unchanged)
            whole = primal.storage_offset() + primal.numel()
            beyond = fw.unpack_dual(dual.as_strided((whole,), (1,), 0)).tangent
            return kept, layout, tangent, beyond

    same_outcome(program)
