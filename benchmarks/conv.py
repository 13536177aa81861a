"""conv: one SGD step of a small CNN: conv 3x3 (3→16, padding 1), ReLU, flatten, linear to 10.

Input 64×3×32×32 float32, softmax cross-entropy. chainrule's convolution may not exist yet (it is
being written): the workload then reports PyTorch and the NumPy floor alone and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .harness import (
    CHAINRULE,
    LIBRARIES,
    NUMPY,
    Config,
    Unavailable,
    import_library,
    interleaved,
    median,
)
from .mlp import check_losses
from .report import Row, Section, Target
from .torchlike import SGD, from_array, make_cross_entropy, parameters

__all__ = ["NumpyCNN", "TorchLikeCNN", "conv_path", "profile_target", "run"]

CHANNELS, FILTERS, SIDE, KERNEL, CLASSES = 3, 16, 32, 3, 10
LR = 0.01
TARGETS = [Target("pytorch", 1.3)]  # (issue 13)
UNAVAILABLE = "conv: chainrule.nn.Conv2d not available yet"


def conv_path(lib: ModuleType) -> str | None:
    """How ``lib`` convolves: ``nn.functional.conv2d``, ``nn.Conv2d``, or ``None`` (cannot)."""
    if hasattr(lib.nn.functional, "conv2d"):
        return "nn.functional.conv2d"
    if hasattr(lib.nn, "Conv2d"):
        return "nn.Conv2d"
    return None


def init_arrays(seed: int = 0) -> list[np.ndarray]:
    """``[conv weight, conv bias, linear weight, linear bias]``, PyTorch's default init bounds."""
    rng = np.random.default_rng(seed)
    conv_bound = 1.0 / np.sqrt(CHANNELS * KERNEL * KERNEL)
    linear_in = FILTERS * SIDE * SIDE
    linear_bound = 1.0 / np.sqrt(linear_in)
    shapes = [((FILTERS, CHANNELS, KERNEL, KERNEL), conv_bound), ((FILTERS,), conv_bound),
              ((CLASSES, linear_in), linear_bound), ((CLASSES,), linear_bound)]
    return [rng.uniform(-bound, bound, shape).astype(np.float32) for shape, bound in shapes]


def make_data(batch: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Images in [0, 1) and random labels."""
    rng = np.random.default_rng(seed)
    return (rng.random((batch, CHANNELS, SIDE, SIDE), dtype=np.float32),
            rng.integers(0, CLASSES, batch).astype(np.int64))


class TorchLikeCNN:
    """The CNN written once for chainrule and PyTorch."""

    def __init__(self, lib: ModuleType, arrays: list[np.ndarray], x: np.ndarray,
                 labels: np.ndarray) -> None:
        self.lib = lib
        self.params = parameters(lib, arrays)
        self.x = from_array(lib, x)
        self.loss_fn, self.loss_path = make_cross_entropy(lib, labels, CLASSES)
        self.conv = self._make_conv(lib)            # may swap in a module's parameters
        self.optimizer = SGD(lib, self.params, LR)
        functional = lib.nn.functional
        self.linear, self.relu = functional.linear, functional.relu

    def _make_conv(self, lib: ModuleType) -> Callable[[Any], Any]:
        weight, bias = self.params[0], self.params[1]
        path = conv_path(lib)
        if path == "nn.functional.conv2d":
            conv2d = lib.nn.functional.conv2d
            return lambda x: conv2d(x, weight, bias, 1, 1)
        if path == "nn.Conv2d":
            module = lib.nn.Conv2d(CHANNELS, FILTERS, KERNEL, padding=1)
            module.weight, module.bias = lib.nn.Parameter(weight), lib.nn.Parameter(bias)
            self.params[0], self.params[1] = module.weight, module.bias
            return module
        raise Unavailable(UNAVAILABLE)

    def step(self) -> object:
        """Forward, loss, backward, SGD update; returns the loss tensor."""
        h = self.relu(self.conv(self.x))
        logits = self.linear(h.flatten(1), self.params[2], self.params[3])
        loss = self.loss_fn(logits)
        loss.backward()
        self.optimizer.step()
        return loss


class NumpyCNN:
    """The floor: im2col convolution as one matrix product per sample, backward by hand.

    ``np.matmul`` over the batch of (16×27)·(27×1024) products: small products that OpenBLAS
    runs well (one big (65536×27)·(27×16) product was slower, and far worse on a busy machine).
    """

    def __init__(self, arrays: list[np.ndarray], x: np.ndarray, labels: np.ndarray) -> None:
        conv_w, self.conv_b, self.linear_w, self.linear_b = (a.copy() for a in arrays)
        self.conv_w = conv_w.reshape(FILTERS, -1)              # (16, 27): (c, kh, kw) order
        self.x = x.copy()
        self.labels = labels
        self.rows = np.arange(len(labels))

    def step(self) -> float:
        """Forward, loss, hand-derived backward, in-place SGD update; returns the loss."""
        batch, rows, labels = len(self.labels), self.rows, self.labels
        padded = np.pad(self.x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        windows = sliding_window_view(padded, (KERNEL, KERNEL), axis=(2, 3))  # b,c,h,w,kh,kw
        cols = windows.transpose(0, 1, 4, 5, 2, 3).reshape(batch, -1, SIDE * SIDE)
        z = np.matmul(self.conv_w, cols)                        # (b, 16, h*w)
        z += self.conv_b[:, None]
        h = np.maximum(z, 0).reshape(batch, -1)                 # flatten: (b, 16*h*w)
        logits = h @ self.linear_w.T
        logits += self.linear_b
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = float(np.log(total[:, 0]).mean() - shifted[rows, labels].mean())
        grad = exp / total                   # d loss / d logits = (softmax - onehot) / batch
        grad[rows, labels] -= 1
        grad /= batch
        grad_linear_w, grad_linear_b = grad.T @ h, grad.sum(axis=0)
        grad_z = (grad @ self.linear_w).reshape(z.shape)
        grad_z *= z > 0                      # ReLU
        grad_conv_w = np.matmul(grad_z, cols.transpose(0, 2, 1)).sum(axis=0)
        grad_conv_b = grad_z.sum(axis=(0, 2))
        self.conv_w -= LR * grad_conv_w
        self.conv_b -= LR * grad_conv_b
        self.linear_w -= LR * grad_linear_w
        self.linear_b -= LR * grad_linear_b
        return loss


def build(name: str, batch: int) -> TorchLikeCNN | NumpyCNN:
    """The CNN of library ``name`` with the shared weights and a batch of ``batch``."""
    arrays = init_arrays()
    x, labels = make_data(batch)
    if name == NUMPY:
        return NumpyCNN(arrays, x, labels)
    return TorchLikeCNN(import_library(name), arrays, x, labels)


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """Time ``config.conv_iters`` steps per repeat; without chainrule's conv, the others only."""
    section = Section("conv")
    row = Row("conv", f"batch {config.conv_batch}", "s", dict.fromkeys(LIBRARIES), TARGETS,
              per="step")
    section.rows.append(row)
    names = list(libraries)
    if CHAINRULE in names and conv_path(import_library(CHAINRULE)) is None:
        print(UNAVAILABLE, flush=True)
        section.notes.append("chainrule.nn.Conv2d / nn.functional.conv2d not available yet")
        row.status[CHAINRULE] = "n/a"
        names.remove(CHAINRULE)
    models = {name: build(name, config.conv_batch) for name in names}
    failures = check_losses(models)   # drops a model that raises (chainrule's conv is new)
    section.notes += failures
    row.status.update({name: "failed" for name in names if name not in models})
    chainrule = models.get(CHAINRULE)
    if isinstance(chainrule, TorchLikeCNN):
        section.notes.append(f"chainrule conv via {conv_path(chainrule.lib)}, cross-entropy via "
                             f"{chainrule.loss_path}, SGD via {chainrule.optimizer.path}")
    samples = interleaved({n: m.step for n, m in models.items()}, config.conv_iters,
                          config.repeat, config.warmup, config.settle)
    row.samples = samples
    row.values.update({name: median(values) for name, values in samples.items()})
    return section


def profile_target(config: Config) -> Callable[[], None]:
    """``config.conv_iters`` chainrule CNN steps, for ``--profile conv``."""
    if conv_path(import_library(CHAINRULE)) is None:
        raise Unavailable(UNAVAILABLE)
    model = build(CHAINRULE, config.conv_batch)
    iters = config.conv_iters

    def target() -> None:
        for _ in range(iters):
            model.step()

    return target
