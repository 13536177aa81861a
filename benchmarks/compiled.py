"""chainrule.compile against eager chainrule, PyTorch eager and the NumPy floor.

Run: ``.venv/bin/python -m benchmarks.compiled``. Prints per-iteration times and ratios
from one run; no assertions (the issue's targets are printed next to the ratios).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import chainrule
from benchmarks.mlp import LAYERS, LR, NumpyMLP, init_arrays, make_data


def _per_call(fn: Callable[[], object], number: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def _seed_step(lib: object, run: Callable[..., object]) -> Callable[[], object]:
    """The seed articles' y = (w + x) * (w + 1), forward and backward."""
    w = lib.tensor([1.0], requires_grad=True)
    x = lib.tensor([2.0], requires_grad=True)

    def step() -> object:
        w.grad = x.grad = None
        y = run(w, x)
        y.backward()
        return w.grad

    return step


def seed(w: object, x: object) -> object:
    """The seed example's graph."""
    a = w + x
    b = w + 1
    return a * b


def mlp_step(model: chainrule.nn.Module, run: Callable[..., object]) -> Callable[[], object]:
    """One SGD step of the 784-256-256-10 MLP on a batch of 128 through ``run``."""
    x, labels = make_data(128)
    tx, tl = chainrule.tensor(x), chainrule.tensor(labels)
    opt = chainrule.optim.SGD(model.parameters(), lr=LR)

    def step() -> object:
        opt.zero_grad()
        loss = chainrule.nn.functional.cross_entropy(run(tx), tl)
        loss.backward()
        opt.step()
        return loss

    return step


def build_mlp() -> chainrule.nn.Module:
    """The benchmark MLP with benchmarks.mlp's weights."""
    nn = chainrule.nn
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )
    arrays = init_arrays(LAYERS)
    linears = [m for m in model if isinstance(m, nn.Linear)]
    for i, lin in enumerate(linears):
        lin.weight.data = chainrule.tensor(arrays[2 * i].copy())
        lin.bias.data = chainrule.tensor(arrays[2 * i + 1].copy())
    return model


def main() -> None:
    """Measure and print."""
    import torch

    rows = []
    t_torch = _per_call(_seed_step(torch, seed), 2000)
    t_eager = _per_call(_seed_step(chainrule, seed), 2000)
    t_comp = _per_call(_seed_step(chainrule, chainrule.compile(seed)), 2000)
    rows.append(("seed fwd+bwd: PyTorch eager", t_torch, 1.0))
    rows.append(("seed fwd+bwd: chainrule eager", t_eager, t_eager / t_torch))
    rows.append(
        ("seed fwd+bwd: chainrule.compile (target <= 0.1x PyTorch)", t_comp, t_comp / t_torch)
    )
    x, labels = make_data(128)
    floor = NumpyMLP(init_arrays(LAYERS), x, labels)
    t_floor = _per_call(floor.step, 20)
    model = build_mlp()
    t_meager = _per_call(mlp_step(model, model), 20)
    model = build_mlp()
    t_mcomp = _per_call(mlp_step(model, chainrule.compile(model)), 20)
    rows.append(("MLP step: NumPy floor", t_floor, 1.0))
    rows.append(("MLP step: chainrule eager", t_meager, t_meager / t_floor))
    rows.append(("MLP step: chainrule.compile (target <= 1.0x floor)", t_mcomp, t_mcomp / t_floor))
    width = max(len(r[0]) for r in rows)
    for name, t, ratio in rows:
        print(f"{name:<{width}}  {t * 1e6:10.1f} us  {ratio:6.2f}x")
    c = chainrule.compile(seed)
    c(chainrule.ones(1), chainrule.ones(1))
    print(c.code)


if __name__ == "__main__":
    main()
