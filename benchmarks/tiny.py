"""tiny: the seed example, per iteration: create two leaves, three ops, ``backward()``; written
with ``add``/``mul`` and as users write it (operators, ``dtype=``, reading ``.grad``).

Pure per-op overhead: every tensor holds one float, so the time is the engine, not the math.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .harness import CHAINRULE, LIBRARIES, NUMPY, Config, import_library, interleaved, median
from .report import Row, Section, Target

__all__ = ["make_numpy_step", "make_step", "make_user_step", "profile_target", "run"]

TARGETS = [Target("pytorch", 0.25)]  # (issue 13; aim 0.2)
#: d(y)/dw and d(y)/dx of y = (w + x) * (w + 1) at w = 1, x = 2.
EXPECTED_GRADS = (5.0, 2.0)


def make_step(lib: ModuleType) -> Callable[[], tuple[object, object]]:
    """One iteration of the seed example in chainrule or PyTorch; returns the leaves."""
    tensor, add, mul = lib.tensor, lib.add, lib.mul

    def step() -> tuple[object, object]:
        w = tensor([1.0], requires_grad=True)
        x = tensor([2.0], requires_grad=True)
        a = add(w, x)
        b = add(w, 1)
        y = mul(a, b)
        y.backward()
        return w, x

    return step


def make_user_step(lib: ModuleType) -> Callable[[], tuple[object, object]]:
    """The same iteration written as users write it: operators, ``dtype=`` given, and the
    gradients read back (``.grad``), so the conversions a real program pays are timed too."""
    tensor, float32 = lib.tensor, lib.float32

    def step() -> tuple[object, object]:
        w = tensor([1.0], dtype=float32, requires_grad=True)
        x = tensor([2.0], dtype=float32, requires_grad=True)
        a = w + x
        b = w + 1
        y = a * b
        y.backward()
        w.grad, x.grad  # noqa: B018 (read, as a training loop reads them)
        return w, x

    return step


def make_numpy_step() -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """The floor: the same arithmetic on 1-element arrays, gradients derived by hand."""
    array, float32 = np.array, np.float32
    ones = np.ones

    def step() -> tuple[np.ndarray, np.ndarray]:
        w = array([1.0], dtype=float32)
        x = array([2.0], dtype=float32)
        a = w + x
        b = w + 1
        y = a * b
        grad_y = ones(y.shape, y.dtype)
        grad_a = grad_y * b            # y = a * b
        grad_b = grad_y * a
        return grad_a + grad_b, grad_a  # a = w + x, b = w + 1

    return step


def _grads(lib_name: str, leaves: tuple[Any, Any]) -> tuple[float, float]:
    """The two gradients an iteration produced, as floats."""
    w, x = leaves
    if lib_name != NUMPY:
        w, x = w.grad.numpy(), x.grad.numpy()
    return float(w[0]), float(x[0])


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """Time ``config.tiny_iters`` iterations per repeat in every library, interleaved: the
    function-call way (``add``, ``mul``) and the user's way (operators, ``dtype=``, ``.grad``),
    each against the same NumPy floor."""
    section = Section("tiny")
    for label, make in (("tiny", make_step), ("tiny (user style)", make_user_step)):
        steps: dict[str, Callable[[], object]] = {}
        for name in libraries:
            step = make_numpy_step() if name == NUMPY else make(import_library(name))
            grads = _grads(name, step())
            if grads != EXPECTED_GRADS:
                section.notes.append(
                    f"{label}: {name} computed gradients {grads}, expected {EXPECTED_GRADS}")
            steps[name] = step
        samples = interleaved(steps, config.tiny_iters, config.repeat, config.warmup,
                              config.settle)
        section.rows.append(Row(
            label, f"{config.tiny_iters} iters", "s",
            {lib: median(samples[lib]) if lib in samples else None for lib in LIBRARIES},
            TARGETS, samples=samples, per="iter",
        ))
    return section


def profile_target(config: Config) -> Callable[[], None]:
    """``config.tiny_iters`` chainrule iterations, for ``--profile tiny``."""
    step = make_step(import_library(CHAINRULE))
    iters = config.tiny_iters

    def target() -> None:
        for _ in range(iters):
            step()

    return target
