"""Grad mode against PyTorch: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` and
``inference_mode`` as context managers and as decorators (also of generator functions), the
restoring of the previous state (even on exceptions), and thread-locality."""

from __future__ import annotations

import threading

import pytest

import chainrule

from .test_tensor_api import assert_raises_same, assert_same


def _no_grad_block(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        y = x * 2
        inside = lib.is_grad_enabled()
        factory = lib.ones(2, requires_grad=True)  # factories still honour requires_grad
    return y, inside, lib.is_grad_enabled(), factory, y.grad_fn


def _no_grad_decorator(lib):
    @lib.no_grad()
    def double(x):
        """Docstring kept."""
        return x * 2, lib.is_grad_enabled()

    return double(lib.ones(2, requires_grad=True)), lib.is_grad_enabled(), double.__name__, (
        double.__doc__
    )


def _no_grad_generator(lib):
    @lib.no_grad()
    def steps():
        for _ in range(2):
            received = yield lib.is_grad_enabled()
            assert received is None or received == "ping"

    seen = []
    generator = steps()
    seen.append((next(generator), lib.is_grad_enabled()))
    seen.append((generator.send("ping"), lib.is_grad_enabled()))
    return seen


def _enable_grad_inside_no_grad(lib):
    with lib.no_grad():
        with lib.enable_grad():
            y = lib.ones(2, requires_grad=True) * 2
        return y.requires_grad, y.grad_fn is not None, lib.is_grad_enabled()


def _enable_grad_decorator(lib):
    @lib.enable_grad()
    def enabled():
        return lib.is_grad_enabled()

    with lib.no_grad():
        return enabled(), lib.is_grad_enabled()


def _set_grad_enabled_call(lib):
    lib.set_grad_enabled(False)
    off = lib.is_grad_enabled()
    y = lib.ones(2, requires_grad=True) * 2
    lib.set_grad_enabled(True)
    return off, y.requires_grad, lib.is_grad_enabled()


def _set_grad_enabled_block(lib):
    with lib.set_grad_enabled(False):
        inside = lib.is_grad_enabled()
    with lib.no_grad(), lib.set_grad_enabled(True):
        forced_on = lib.is_grad_enabled()
    return inside, forced_on, lib.is_grad_enabled()


def _set_grad_enabled_decorator(lib):
    @lib.set_grad_enabled(False)
    def disabled():
        return lib.is_grad_enabled()

    return lib.is_grad_enabled(), disabled(), lib.is_grad_enabled()


def _restored_after_exception(lib):
    try:
        with lib.no_grad():
            raise ValueError("inside")
    except ValueError:
        pass
    try:
        with lib.inference_mode():
            raise KeyError("inside")
    except KeyError:
        pass
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def _nested(lib):
    with lib.no_grad():
        with lib.no_grad():
            pass
        still_off = lib.is_grad_enabled()
    return still_off, lib.is_grad_enabled()


def _inference_mode_block(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        y = x * 2
        state = lib.is_grad_enabled(), lib.is_inference_mode_enabled()
    return y.requires_grad, state, lib.is_inference_mode_enabled()


def _inference_mode_off(lib):
    with lib.inference_mode(False):
        return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def _inference_mode_decorator(lib):
    @lib.inference_mode()
    def infer():
        return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

    return infer(), lib.is_inference_mode_enabled()


def _backward_of_no_grad_result(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        y = (x * 2).sum()
    y.backward()


def _in_place_on_leaf_under_no_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        x.mul_(3)
    (x * x).sum().backward()
    return x, x.grad, x.is_leaf


def _in_place_on_leaf_with_grad(lib):
    x = lib.ones(2, requires_grad=True)
    x.add_(1)


CASES = {
    "no_grad block": _no_grad_block,
    "no_grad decorator": _no_grad_decorator,
    "no_grad generator function": _no_grad_generator,
    "enable_grad inside no_grad": _enable_grad_inside_no_grad,
    "enable_grad decorator": _enable_grad_decorator,
    "set_grad_enabled call": _set_grad_enabled_call,
    "set_grad_enabled block": _set_grad_enabled_block,
    "set_grad_enabled decorator": _set_grad_enabled_decorator,
    "restored after an exception": _restored_after_exception,
    "nested": _nested,
    "inference_mode block": _inference_mode_block,
    "inference_mode(False)": _inference_mode_off,
    "inference_mode decorator": _inference_mode_decorator,
    "backward of a no_grad result": _backward_of_no_grad_result,
    "in-place on a leaf under no_grad": _in_place_on_leaf_under_no_grad,
    "in-place on a leaf with grad": _in_place_on_leaf_with_grad,
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_grad_mode_matches_torch(case: str) -> None:
    assert_same(CASES[case], check_warnings=True)


def test_generator_restores_grad_mode_between_steps() -> None:
    @chainrule.no_grad()
    def steps():
        yield chainrule.is_grad_enabled()
        yield chainrule.is_grad_enabled()

    generator = steps()
    assert next(generator) is False
    assert chainrule.is_grad_enabled() is True  # between steps the caller's mode holds
    assert next(generator) is False
    with pytest.raises(StopIteration):
        next(generator)
    assert chainrule.is_grad_enabled() is True


def test_generator_close_and_throw_run_under_the_mode() -> None:
    seen = []

    @chainrule.no_grad()
    def steps():
        try:
            yield 1
        except ValueError:
            seen.append(("throw", chainrule.is_grad_enabled()))
            yield 2
        finally:
            seen.append(("finally", chainrule.is_grad_enabled()))

    generator = steps()
    next(generator)
    assert generator.throw(ValueError("x")) == 2
    generator.close()
    assert seen == [("throw", False), ("finally", False)]
    assert chainrule.is_grad_enabled()


# ----------------------------------------------------------------------------------------------
# Thread-locality


def _threads(lib):
    """A thread that turns gradients off does not affect the main thread, and a new thread
    starts with gradients on even if its creator had them off."""
    seen = {}
    thread_in_no_grad = threading.Event()
    main_checked = threading.Event()

    def worker():
        seen["worker start"] = lib.is_grad_enabled()
        with lib.no_grad():
            thread_in_no_grad.set()
            main_checked.wait(5)
            seen["worker inside"] = lib.is_grad_enabled()
        seen["worker after"] = lib.is_grad_enabled()

    with lib.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        seen["main inside"] = lib.is_grad_enabled()
    thread_in_no_grad.wait(5)
    seen["main while worker is in no_grad"] = lib.is_grad_enabled()
    y = lib.ones(1, requires_grad=True) * 2
    seen["main records"] = y.requires_grad
    main_checked.set()
    thread.join(5)
    return sorted(seen.items())


def test_grad_mode_is_thread_local_like_torch() -> None:
    assert_same(_threads)
    result = dict(_threads(chainrule))
    assert result["main while worker is in no_grad"] is True
    assert result["main records"] is True
    assert result["worker start"] is True


def test_many_threads_toggling_do_not_interfere() -> None:
    errors = []
    barrier = threading.Barrier(4)

    def toggler(mode: bool) -> None:
        barrier.wait(5)
        for _ in range(200):
            with chainrule.set_grad_enabled(mode):
                if chainrule.is_grad_enabled() is not mode:
                    errors.append(mode)
                y = chainrule.ones(1, requires_grad=True) * 2
                if y.requires_grad is not mode:
                    errors.append(("requires_grad", mode))

    threads = [threading.Thread(target=toggler, args=(i % 2 == 0,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert errors == []
    assert chainrule.is_grad_enabled()


# ----------------------------------------------------------------------------------------------
# Gaps (grad_mode.py, _tensor.py)


def test_no_grad_decorator_without_parentheses() -> None:
    def decorated(lib):
        @lib.no_grad
        def double(x):
            return x * 2, lib.is_grad_enabled()

        return double(lib.ones(2, requires_grad=True)), lib.is_grad_enabled()

    assert_same(decorated)


def test_inference_mode_decorator_without_parentheses() -> None:
    def decorated(lib):
        @lib.inference_mode
        def infer():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        return infer()

    assert_same(decorated)


def test_set_grad_enabled_rejects_non_bool_like_torch() -> None:
    assert_raises_same(lambda lib: lib.set_grad_enabled(1))


def test_is_inference_matches_torch() -> None:
    def flags(lib):
        x = lib.ones(2)
        with lib.inference_mode():
            y = x * 2
        return x.is_inference(), y.is_inference()

    assert_same(flags)


def test_decorating_a_class_warns_like_torch() -> None:
    def decorate(lib):
        @lib.no_grad()
        class Model:
            def __init__(self, scale: float) -> None:
                self.grad_enabled = lib.is_grad_enabled()
                self.scale = scale

        model = Model(2.0)  # constructed inside the context, as PyTorch does
        return Model.__name__, type(model).__name__, model.grad_enabled, model.scale, (
            lib.is_grad_enabled()
        )

    assert_same(decorate, check_warnings=True)
