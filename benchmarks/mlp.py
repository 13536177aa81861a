"""mlp: one SGD training step of a 784-256-256-10 ReLU MLP with softmax cross-entropy.

Batch 128, float32, the same initial weights and data in every library. The step is forward,
loss, backward and an in-place SGD update; at these sizes the matrix products dominate, so all
three should land close to the BLAS-bound NumPy floor.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .harness import CHAINRULE, LIBRARIES, NUMPY, Config, import_library, interleaved, median
from .report import Row, Section, Target
from .torchlike import SGD, from_array, make_cross_entropy, parameters

__all__ = ["LAYERS", "NumpyMLP", "TorchLikeMLP", "check_losses", "init_arrays", "make_data",
           "profile_target", "run"]

LAYERS = (784, 256, 256, 10)
LR = 0.01
TARGETS = [Target("numpy", 1.1), Target("pytorch", 1.0)]


def init_arrays(layers: tuple[int, ...] = LAYERS, seed: int = 0) -> list[np.ndarray]:
    """``[W1, b1, W2, b2, ...]`` as ``nn.Linear`` initialises them: U(±1/sqrt(fan_in))."""
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for fan_in, fan_out in zip(layers[:-1], layers[1:], strict=True):
        bound = 1.0 / np.sqrt(fan_in)
        arrays.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        arrays.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return arrays


def make_data(batch: int, features: int = LAYERS[0], classes: int = LAYERS[-1],
              seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A batch of pixel-like inputs in [0, 1) and random labels."""
    rng = np.random.default_rng(seed)
    return (rng.random((batch, features), dtype=np.float32),
            rng.integers(0, classes, batch).astype(np.int64))


class TorchLikeMLP:
    """The MLP written once for chainrule and PyTorch (``lib`` is the module)."""

    def __init__(self, lib: ModuleType, arrays: list[np.ndarray], x: np.ndarray,
                 labels: np.ndarray) -> None:
        self.lib = lib
        self.params = parameters(lib, arrays)
        self.x = from_array(lib, x)
        self.loss_fn, self.loss_path = make_cross_entropy(lib, labels, arrays[-1].shape[0])
        self.optimizer = SGD(lib, self.params, LR)
        self.linear, self.relu = lib.nn.functional.linear, lib.nn.functional.relu

    def forward(self) -> object:
        """The logits of the batch."""
        linear, relu = self.linear, self.relu
        w1, b1, w2, b2, w3, b3 = self.params
        h = relu(linear(self.x, w1, b1))
        h = relu(linear(h, w2, b2))
        return linear(h, w3, b3)

    def step(self) -> object:
        """Forward, loss, backward, SGD update; returns the loss tensor."""
        loss = self.loss_fn(self.forward())
        loss.backward()  # type: ignore[attr-defined]
        self.optimizer.step()
        return loss

    def forward_no_grad(self) -> object:
        """Inference: the logits under ``no_grad`` (no graph is recorded)."""
        with self.lib.no_grad():
            return self.forward()

    @property
    def notes(self) -> list[str]:
        """How this library's loss and update were computed."""
        return [f"cross-entropy via {self.loss_path}", f"SGD via {self.optimizer.path}"]


class NumpyMLP:
    """The floor: the same step in NumPy with the backward pass derived by hand."""

    def __init__(self, arrays: list[np.ndarray], x: np.ndarray, labels: np.ndarray) -> None:
        self.params = [a.copy() for a in arrays]
        self.x = x.copy()
        self.labels = labels
        self.rows = np.arange(len(labels))

    def forward(self) -> tuple[np.ndarray, ...]:
        """Pre-activations, activations and logits (what backward needs)."""
        w1, b1, w2, b2, w3, b3 = self.params
        z1 = self.x @ w1.T
        z1 += b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2.T
        z2 += b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3.T
        logits += b3
        return z1, h1, z2, h2, logits

    def step(self) -> float:
        """Forward, loss, hand-derived backward, in-place SGD update; returns the loss."""
        w1, b1, w2, b2, w3, b3 = self.params
        x, rows, labels = self.x, self.rows, self.labels
        z1, h1, z2, h2, logits = self.forward()
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        total = exp.sum(axis=1, keepdims=True)
        loss = float(np.log(total[:, 0]).mean() - shifted[rows, labels].mean())
        grad = exp / total                   # d loss / d logits = (softmax - onehot) / batch
        grad[rows, labels] -= 1
        grad /= len(labels)
        grad_w3, grad_b3 = grad.T @ h2, grad.sum(axis=0)
        grad_h2 = grad @ w3
        grad_h2 *= z2 > 0                    # ReLU
        grad_w2, grad_b2 = grad_h2.T @ h1, grad_h2.sum(axis=0)
        grad_h1 = grad_h2 @ w2
        grad_h1 *= z1 > 0
        grad_w1, grad_b1 = grad_h1.T @ x, grad_h1.sum(axis=0)
        grads = (grad_w1, grad_b1, grad_w2, grad_b2, grad_w3, grad_b3)
        for p, g in zip(self.params, grads, strict=True):
            p -= LR * g
        return loss

    def forward_no_grad(self) -> np.ndarray:
        """Inference: only the logits are kept."""
        w1, b1, w2, b2, w3, b3 = self.params
        h = np.maximum(self.x @ w1.T + b1, 0)
        h = np.maximum(h @ w2.T + b2, 0)
        return h @ w3.T + b3


def build(name: str, batch: int) -> TorchLikeMLP | NumpyMLP:
    """The model of library ``name`` with the shared weights and a batch of ``batch``."""
    arrays = init_arrays()
    x, labels = make_data(batch)
    if name == NUMPY:
        return NumpyMLP(arrays, x, labels)
    return TorchLikeMLP(import_library(name), arrays, x, labels)


def _as_float(loss: object) -> float:
    """A loss (float or 0-d tensor) as a float, without PyTorch's requires-grad warning."""
    return float(loss.detach() if hasattr(loss, "detach") else loss)  # type: ignore[arg-type]


def check_losses(models: dict[str, Any], steps: int = 2) -> list[str]:
    """Run ``steps`` steps of every model; notes on failures and on disagreeing losses.

    A model whose step raises is removed from ``models`` (the rest still get timed). Equal
    losses after an update mean the gradients agree too, so the floor computes what the
    libraries compute.
    """
    notes: list[str] = []
    losses: dict[str, list[float]] = {}
    for name in list(models):
        try:
            losses[name] = [_as_float(models[name].step()) for _ in range(steps)]
        except Exception as error:  # a library mid-development: report it, time the others
            notes.append(f"{name} failed: {type(error).__name__}: {error}")
            del models[name]
    if not losses:
        return notes
    reference_name = NUMPY if NUMPY in losses else next(iter(losses))
    reference = losses[reference_name]
    notes += [f"{name} losses {np.round(values, 5).tolist()} differ from {reference_name}'s "
              f"{np.round(reference, 5).tolist()}"
              for name, values in losses.items()
              if not np.allclose(values, reference, rtol=1e-3, atol=1e-4)]
    return notes


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """Time ``config.mlp_iters`` training steps per repeat in every library, interleaved."""
    section = Section("mlp")
    models = {name: build(name, config.mlp_batch) for name in libraries}
    section.notes += check_losses(models)
    chainrule = models.get(CHAINRULE)
    if isinstance(chainrule, TorchLikeMLP):
        section.notes.append("chainrule " + ", ".join(chainrule.notes))
    samples = interleaved({n: m.step for n, m in models.items()}, config.mlp_iters,
                          config.repeat, config.warmup, config.settle)
    section.rows.append(Row(
        "mlp", f"batch {config.mlp_batch}", "s",
        {lib: median(samples[lib]) if lib in samples else None for lib in LIBRARIES},
        TARGETS, status={name: "failed" for name in libraries if name not in models},
        samples=samples, per="step",
    ))
    return section


def profile_target(config: Config) -> Callable[[], None]:
    """``config.mlp_iters`` chainrule training steps, for ``--profile mlp``."""
    model = build(CHAINRULE, config.mlp_batch)
    iters = config.mlp_iters

    def target() -> None:
        for _ in range(iters):
            model.step()

    return target
