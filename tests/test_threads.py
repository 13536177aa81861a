"""Grad mode is per thread; independent graphs backpropagate correctly in parallel threads."""

from __future__ import annotations

import threading

import numpy as np

import chainrule


def test_grad_mode_is_thread_local() -> None:
    seen: dict[str, bool] = {}
    ready = threading.Event()
    done = threading.Event()

    def other() -> None:
        seen["start"] = chainrule.is_grad_enabled()
        ready.set()
        done.wait(5)
        seen["end"] = chainrule.is_grad_enabled()

    thread = threading.Thread(target=other)
    with chainrule.no_grad():
        thread.start()
        ready.wait(5)
        assert not chainrule.is_grad_enabled()
        done.set()
        thread.join(5)
    assert not thread.is_alive()
    assert seen == {"start": True, "end": True}


def test_concurrent_backward_on_independent_graphs() -> None:
    errors: list[BaseException] = []
    results: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        try:
            for _ in range(50):
                w = chainrule.tensor(np.arange(1.0, 4.0) * k, requires_grad=True)
                y = ((w * w).exp() * 0.001 + w.sin()).sum()
                y.backward()
            results[k] = w.grad.numpy()
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert not errors
    assert sorted(results) == [1, 2, 3, 4]  # every thread got its result
    for k, grad in results.items():
        w = np.arange(1.0, 4.0) * k
        expected = 2 * w * np.exp(w * w) * 0.001 + np.cos(w)
        np.testing.assert_allclose(grad, expected, rtol=1e-5)


def test_no_grad_in_one_thread_does_not_stop_recording_in_another() -> None:
    recorded: list[bool] = []
    barrier = threading.Barrier(2)

    def recorder() -> None:
        barrier.wait(5)
        x = chainrule.ones(2, requires_grad=True)
        recorded.append((x * 2).requires_grad)

    thread = threading.Thread(target=recorder)
    thread.start()
    with chainrule.no_grad():
        barrier.wait(5)
        thread.join(5)
    assert not thread.is_alive()
    assert recorded == [True]
