"""Anomaly mode: PyTorch's NaN error, and the forward traceback of the failing node."""

from __future__ import annotations

import warnings

import pytest

import chainrule

from .conftest import torch


def _nan_backward(lib, check_nan: bool = True) -> tuple[str | None, list[str]]:
    x = lib.tensor([-1.0, 4.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            y = x.sqrt()  # the forward line the warning must show
            try:
                y.sum().backward()
                error = None
            except RuntimeError as e:
                error = str(e)
    return error, [str(w.message) for w in caught if w.category is UserWarning]


def test_nan_in_backward_raises_pytorchs_error() -> None:
    ours, theirs = _nan_backward(chainrule), _nan_backward(torch)
    assert ours[0] == theirs[0] == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert ours[1][0] == theirs[1][0]  # "Anomaly Detection has been enabled. ..."
    error_warning = next(m for m in ours[1] if m.startswith("Error detected in SqrtBackward0"))
    assert "Traceback of forward call that caused the error:" in error_warning
    assert "y = x.sqrt()  # the forward line the warning must show" in error_warning
    assert "test_anomaly.py" in error_warning and "chainrule/ops" not in error_warning


def test_check_nan_false_lets_nan_through() -> None:
    ours, theirs = _nan_backward(chainrule, False), _nan_backward(torch, False)
    assert ours[0] is None and theirs[0] is None


def test_anomaly_switches() -> None:
    for lib in (chainrule, torch):
        assert not lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()


def test_errors_outside_anomaly_mode_have_no_traceback_warning() -> None:
    x = chainrule.tensor([-1.0, 4.0], requires_grad=True)
    y = x.sqrt()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.sum().backward()  # NaN gradient, no error without anomaly mode
    assert not [w for w in caught if "Error detected" in str(w.message)]
    assert chainrule.isnan(x.grad).tolist() == [True, False]


def test_modified_saved_tensor_under_anomaly_mode_names_the_node() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with chainrule.autograd.detect_anomaly():
            w = chainrule.tensor([1.0, 2.0], requires_grad=True)
            y = w.exp()
            y.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    assert any("Error detected in ExpBackward0" in str(w.message) for w in caught)


def _anomaly_across_threads(lib) -> list[tuple[bool, bool]]:
    """What other threads see of anomaly mode set in one: PyTorch's switch is process-wide."""
    import threading

    seen: list[tuple[bool, bool]] = []

    def look() -> None:
        seen.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))

    def in_thread(fn) -> None:
        thread = threading.Thread(target=fn)
        thread.start()
        thread.join()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            lib.autograd.set_detect_anomaly(True, check_nan=False)
            in_thread(look)  # set here, seen there
            lib.autograd.set_detect_anomaly(False)
            in_thread(lambda: lib.autograd.set_detect_anomaly(True))
            look()  # set there, seen here
            lib.autograd.set_detect_anomaly(False)
            entered, release = threading.Event(), threading.Event()

            def hold() -> None:
                with lib.autograd.detect_anomaly():
                    entered.set()
                    release.wait()

            thread = threading.Thread(target=hold)
            thread.start()
            entered.wait()
            look()  # while another thread is inside detect_anomaly()
            release.set()
            thread.join()
            look()
        finally:
            lib.autograd.set_detect_anomaly(False)
    return seen


def test_anomaly_mode_is_process_wide_as_pytorchs() -> None:
    ours, theirs = _anomaly_across_threads(chainrule), _anomaly_across_threads(torch)
    assert ours == theirs == [(True, False), (True, True), (True, True), (False, True)]


def test_a_node_made_in_another_thread_gets_its_forward_trace() -> None:
    """Anomaly mode turned on in the main thread records the traceback of a node created in a
    worker thread, so its failing backward names the forward line."""
    import threading

    made = []

    def forward() -> None:
        x = chainrule.tensor([-1.0], requires_grad=True)
        made.append(x.sqrt())  # the forward line the warning must show

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with chainrule.autograd.detect_anomaly():
            thread = threading.Thread(target=forward)
            thread.start()
            thread.join()
            with pytest.raises(RuntimeError, match="SqrtBackward0"):
                made[0].sum().backward()
    messages = [str(w.message) for w in caught if "Traceback of forward call" in str(w.message)]
    assert messages and "made.append(x.sqrt())" in messages[0]
