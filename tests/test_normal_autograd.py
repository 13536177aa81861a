"""``torch.normal`` of tensors that require grad against PyTorch 2.13.

PyTorch records ``NormalBackward1`` (tensor mean, number std), ``NormalBackward2`` (number mean,
tensor std) and ``NormalBackward3`` (both tensors), whose gradients are zeros of each input's
shape (derivatives.yaml), with no graph behind them. Each case runs the same code with
``chainrule`` and ``torch`` as ``lib`` and compares what it reports: node names, edges, saved
sizes, gradients' values, shapes and dtypes, or the error's type and message. Sample values are
not compared (NumPy's stream is not PyTorch's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def both(case: Callable[[Any], Any]) -> None:
    got = attempt(lambda: case(chainrule))
    want = attempt(lambda: case(torch))
    assert got == want


def _name(fn: Any) -> Any:
    return None if fn is None else fn.name().split("::")[-1]


def _edges(t: Any) -> tuple:
    return tuple((_name(fn), nr) for fn, nr in t.grad_fn.next_functions)


def _grads(grads: tuple) -> tuple:
    return tuple(None if g is None else (tuple(g.shape), str(g.dtype).split(".")[-1], g.tolist(),
                                         g.requires_grad, g.grad_fn is None) for g in grads)


_ARGS: dict[str, Callable[[Any], tuple]] = {
    "mean": lambda lib: (lib.zeros(2, 3, requires_grad=True), 1.5),
    "mean_default_std": lambda lib: (lib.zeros(2, 3, requires_grad=True),),
    "mean_0d": lambda lib: (lib.tensor(0.5, requires_grad=True), 2.0),
    "mean_empty": lambda lib: (lib.zeros(0, 2, requires_grad=True), 1.0),
    "mean_view": lambda lib: (lib.zeros(4, 3, requires_grad=True)[1:3], 1.0),
    "mean_float64": lambda lib: (lib.zeros(3, dtype=lib.float64, requires_grad=True), 1.0),
    "std": lambda lib: (0.5, lib.ones(2, 3, requires_grad=True)),
    "std_0d": lambda lib: (0.5, lib.tensor(1.0, requires_grad=True)),
    "std_float16": lambda lib: (0.5, lib.ones(3, dtype=lib.float16, requires_grad=True)),
    "both": lambda lib: (lib.zeros(2, 3, requires_grad=True), lib.ones(2, 3, requires_grad=True)),
    "both_mean_only": lambda lib: (lib.zeros(2, 3, requires_grad=True), lib.ones(2, 3)),
    "both_std_only": lambda lib: (lib.zeros(2, 3), lib.ones(2, 3, requires_grad=True)),
    "broadcast_mean": lambda lib: (lib.zeros(3, requires_grad=True), lib.ones(2, 3)),
    "broadcast_std": lambda lib: (lib.zeros(2, 3), lib.ones(3, requires_grad=True)),
    "broadcast_both": lambda lib: (lib.zeros(2, 1, requires_grad=True),
                                   lib.ones(1, 3, requires_grad=True)),
    "scalar_mean_vector_std": lambda lib: (lib.tensor(0.0, requires_grad=True),
                                           lib.ones(2, requires_grad=True)),
    "mixed_f32_f64": lambda lib: (lib.zeros(2, requires_grad=True),
                                  lib.ones(2, dtype=lib.float64, requires_grad=True)),
    "mixed_f64_f32": lambda lib: (lib.zeros(2, dtype=lib.float64, requires_grad=True),
                                  lib.ones(2, requires_grad=True)),
    "mixed_bf16_f64": lambda lib: (lib.zeros(2, dtype=lib.bfloat16, requires_grad=True),
                                   lib.ones(2, dtype=lib.float64, requires_grad=True)),
    "int_std": lambda lib: (lib.zeros(2, requires_grad=True), lib.ones(2, dtype=lib.int64)),
    "keywords": lambda lib: {"mean": lib.zeros(2, requires_grad=True), "std": lib.ones(2)},
}


def _call(lib: Any, make: Callable[[Any], Any]) -> tuple[Any, list[Any]]:
    args = make(lib)
    if isinstance(args, dict):
        out = lib.normal(**args)
        values = list(args.values())
    else:
        out = lib.normal(*args)
        values = list(args)
    return out, [v for v in values if isinstance(v, lib.Tensor) and v.requires_grad]


@pytest.mark.parametrize("name", list(_ARGS))
def test_node_edges_and_result(name: str) -> None:
    def case(lib: Any) -> Any:
        out, _ = _call(lib, _ARGS[name])
        return (_name(out.grad_fn), _edges(out), tuple(out.shape), str(out.dtype).split(".")[-1],
                out.requires_grad, out.is_leaf, repr(out.grad_fn).split(" ")[0])

    both(case)


@pytest.mark.parametrize("name", list(_ARGS))
def test_gradients_are_zeros_of_each_input(name: str) -> None:
    def case(lib: Any) -> Any:
        out, inputs = _call(lib, _ARGS[name])
        first = lib.autograd.grad(out.sum(), inputs, retain_graph=True)
        graphed = lib.autograd.grad(out.sum() * 2, inputs, create_graph=True)
        return _grads(first), _grads(graphed)

    both(case)


@pytest.mark.parametrize("name", list(_ARGS))
def test_backward_accumulates_into_leaves(name: str) -> None:
    def case(lib: Any) -> Any:
        out, inputs = _call(lib, _ARGS[name])
        (out * 3).sum().backward()
        return tuple(None if t.grad is None else (t.grad.tolist(), tuple(t.grad.shape))
                     for t in inputs if t.is_leaf)

    both(case)


@pytest.mark.parametrize("name", ["mean", "std", "both", "both_mean_only", "broadcast_both"])
def test_saved_sizes(name: str) -> None:
    def case(lib: Any) -> Any:
        out, _ = _call(lib, _ARGS[name])
        node = out.grad_fn
        saved = sorted(a for a in dir(node) if a.startswith("_saved"))
        # (an input that does not require grad: chainrule does not keep its sizes, see below)
        needs = [n for n in ("mean", "std") if f"_saved_{n}_sym_sizes" in saved]
        return saved, [tuple(getattr(node, f"_saved_{n}_sym_sizes")) for n in needs
                       if name != "both_mean_only" or n == "mean"]

    both(case)


def test_saved_sizes_after_release() -> None:
    def case(lib: Any) -> Any:
        out, _ = _call(lib, _ARGS["both"])
        out.sum().backward()
        return out.grad_fn._saved_mean_sym_sizes

    both(case)


def test_nothing_packed_by_saved_tensor_hooks() -> None:
    def case(lib: Any) -> Any:
        packed: list[Any] = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            out = lib.normal(lib.zeros(2, requires_grad=True), lib.ones(2, requires_grad=True))
        out.sum().backward()
        return len(packed)

    both(case)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_no_node_outside_grad_mode(mode: str) -> None:
    def case(lib: Any) -> Any:
        context = {"no_grad": lib.no_grad, "inference_mode": lib.inference_mode,
                   "set_grad_enabled": lambda: lib.set_grad_enabled(False)}[mode]
        with context():
            out = lib.normal(lib.zeros(2, requires_grad=True), lib.ones(2, requires_grad=True))
        return out.requires_grad, out.grad_fn is None

    both(case)


def test_inside_a_graph_of_other_ops() -> None:
    def case(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.normal(x * 2, x.abs() * 0.0) + x ** 2
        y.sum().backward()
        return _edges(y), x.grad.tolist(), y.tolist()

    both(case)


def test_degenerate_samples_are_the_mean() -> None:
    def case(lib: Any) -> Any:
        m = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        return (lib.normal(m, 0.0).tolist(), lib.normal(m, lib.zeros(2)).tolist(),
                lib.normal(1.5, lib.zeros(2, 2, requires_grad=True)).tolist())

    both(case)


_ERRORS: dict[str, Callable[[Any], Any]] = {
    "out_requires_grad": lambda lib: lib.normal(lib.zeros(2, requires_grad=True), 1.0,
                                                out=lib.empty(2)),
    "out_std_requires_grad": lambda lib: lib.normal(0.0, lib.ones(2, requires_grad=True),
                                                    out=lib.empty(2)),
    "negative_std": lambda lib: lib.normal(lib.zeros(2, requires_grad=True), -1.0),
    "nan_std": lambda lib: lib.normal(lib.zeros(2, requires_grad=True), float("nan")),
    "negative_std_tensor": lambda lib: lib.normal(lib.zeros(2, requires_grad=True),
                                                  lib.tensor([1.0, -1.0], requires_grad=True)),
    "nan_std_tensor": lambda lib: lib.normal(0.0, lib.tensor([float("nan")],
                                                             requires_grad=True)),
    "nan_std_size": lambda lib: lib.normal(0.0, float("nan"), (2,)),
    "broadcast": lambda lib: lib.normal(lib.zeros(2, requires_grad=True), lib.ones(3)),
    "int_mean": lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), lib.ones(2)),
    "size_with_tensor": lambda lib: lib.normal(lib.zeros(2, requires_grad=True), 1.0, (2,)),
}


@pytest.mark.parametrize("name", list(_ERRORS))
def test_errors(name: str) -> None:
    both(lambda lib: _ERRORS[name](lib))


def test_normal_in_place_of_a_leaf_and_of_a_clone() -> None:
    def case(lib: Any) -> Any:
        x = lib.ones(3, requires_grad=True)
        refused = attempt(lambda: x.normal_())
        y = x.clone()
        y.normal_(0.5, 0.0)
        (g,) = lib.autograd.grad((y * x).sum(), x)
        return refused, _edges(y), _name(y.grad_fn), g.tolist(), y._version

    both(case)
