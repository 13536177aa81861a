"""chainrule.compile of training-mode batch norm: the batch statistics, the update of the
running statistics and ``num_batches_tracked`` are nodes of the compiled graph (run at each
call, exactly once), the backward is the joint graph's; values, gradients and buffers are
eager chainrule's to the bit, and PyTorch's within rounding (eager's own agreement with
PyTorch is tests/test_nn_batch_norm.py's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

WEIGHT = [0.5, 1.5, -2.0, 1.0]
BIAS = [0.1, -0.2, 0.3, 0.0]


def _model(lib: Any, dtype: str, twod: bool, **options: Any) -> Any:
    lib.manual_seed(0)
    norm = (lib.nn.BatchNorm2d if twod else lib.nn.BatchNorm1d)(4, **options)
    linear = lib.nn.Linear(3, 4)
    with lib.no_grad():
        linear.weight.copy_(lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3)))
        linear.bias.copy_(lib.tensor(np.linspace(0.5, -0.5, 4)))
        if norm.affine:
            norm.weight.copy_(lib.tensor(WEIGHT))
            norm.bias.copy_(lib.tensor(BIAS))
    if twod:
        # (N, 3, H, W) -> channels through a 1x1 convolution's equivalent: permute, linear
        body = [_Permuted(lib, linear), norm]
    else:
        body = [linear, norm]
    return lib.nn.Sequential(*body).to(getattr(lib, dtype))


def _Permuted(lib: Any, linear: Any) -> Any:
    class Permuted(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = linear

        def forward(self, x: Any) -> Any:
            return self.linear(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    return Permuted()


def _steps(
    lib: Any, model: Any, fn: Any, dtype: str, twod: bool, layout: str, no_grad_step: bool = False
) -> list[np.ndarray]:
    """Three training steps (inputs requiring grad, a non-uniform output gradient), then one
    in evaluation mode: what each gives, and the buffers after each."""
    rng = np.random.default_rng(7)
    shape = (5, 3, 2, 3) if twod else (6, 3)
    seen: list[np.ndarray] = []
    for step in range(4):
        if step == 3:
            model.eval()
        data = (rng.standard_normal(shape) * (step + 1) + step).astype(dtype)
        if layout == "transposed":
            x = lib.tensor(np.ascontiguousarray(data.T)).permute(*reversed(range(data.ndim)))
        else:
            x = lib.tensor(data)
        x.requires_grad_(True)
        if no_grad_step and step == 1:
            with lib.no_grad():
                out = fn(x)
            assert out.grad_fn is None and not out.requires_grad
            seen.append(out.numpy().copy())
        else:
            out = fn(x)
            grad = np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(dtype)
            out.backward(lib.tensor(grad))
            seen += [out.detach().numpy().copy(), x.grad.numpy().copy()]
            seen += [p.grad.numpy().copy() for p in model.parameters()]
            for p in model.parameters():
                p.grad = None
        seen += [b.numpy().copy() for b in model.buffers()]
    return seen


def _compare(ours: list[np.ndarray], reference: list[np.ndarray], exact: bool, dtype: str) -> None:
    assert len(ours) == len(reference)
    for i, (a, b) in enumerate(zip(ours, reference, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        if exact:
            np.testing.assert_array_equal(a, b, err_msg=f"entry {i}")
        else:
            rtol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-2}[dtype]
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"entry {i}")


CASES = [
    # (dtype, twod, layout, module options)
    ("float32", False, "contiguous", {}),
    ("float64", False, "contiguous", {}),
    ("float16", False, "contiguous", {}),
    ("float32", True, "contiguous", {}),
    ("float64", True, "transposed", {}),
    ("float32", False, "transposed", {}),
    ("float32", False, "contiguous", {"affine": False}),
    ("float32", True, "contiguous", {"track_running_stats": False}),
    ("float64", False, "contiguous", {"momentum": 0.0}),
    ("float32", False, "contiguous", {"momentum": 1.0, "eps": 1e-2}),
]


@pytest.mark.parametrize(("dtype", "twod", "layout", "options"), CASES)
def test_training_batch_norm_compiles_and_gives_eagers_numbers(dtype, twod, layout, options):
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        if dtype == "float16" and name == "torch":
            continue
        model = _model(lib, dtype, twod, **options)
        fn = chainrule.compile(model) if name == "compiled" else model
        results[name] = _steps(lib, model, fn, dtype, twod, layout)
        if name == "compiled":
            assert fn.fallback_reasons == [] and fn.graph_breaks == 0
            assert fn.compile_count == 2  # (training, then evaluation)
    _compare(results["compiled"], results["eager"], True, dtype)
    if "torch" in results:
        _compare(results["compiled"], results["torch"], False, dtype)


def test_the_generated_code_updates_the_buffers_at_each_call():
    model = _model(chainrule, "float32", False)
    c = chainrule.compile(model)
    c(chainrule.randn(6, 3, requires_grad=True)).sum().backward()
    code = c.code
    assert "call_counted_batch(" in code and "call_update_running_statistics(" in code
    assert "call_batch_norm_statistics(" in code
    assert "backward" in code and "derivative_NativeBatchNormBackward0_input" in code
    for calls in range(1, 4):
        assert int(model[1].num_batches_tracked) == calls
        c(chainrule.randn(6, 3))


def test_no_grad_calls_update_the_statistics_without_a_backward():
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        model = _model(lib, "float64", False)
        fn = chainrule.compile(model) if name == "compiled" else model
        results[name] = _steps(lib, model, fn, "float64", False, "contiguous", no_grad_step=True)
    _compare(results["compiled"], results["eager"], True, "float64")
    _compare(results["compiled"], results["torch"], False, "float64")


def _twice(lib: Any) -> tuple[Any, Any]:
    lib.manual_seed(0)
    norm = lib.nn.BatchNorm1d(3).double()

    def twice(x: Any) -> Any:
        return norm(norm(x) * 2)

    return norm, twice


def test_a_layer_applied_twice_counts_and_updates_twice():
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        norm, twice = _twice(lib)
        fn = chainrule.compile(twice) if name == "compiled" else twice
        x = lib.tensor(np.linspace(-2, 3, 15).reshape(5, 3) ** 2, requires_grad=True)
        out = fn(x)
        out.backward(lib.tensor(np.sin(np.arange(15.0)).reshape(5, 3)))
        results[name] = [out.detach().numpy(), x.grad.numpy(), norm.weight.grad.numpy()]
        results[name] += [b.numpy().copy() for b in norm.buffers()]
        if name == "compiled":
            assert fn.fallback_reasons == []
    assert int(results["compiled"][-1]) == 2
    _compare(results["compiled"], results["eager"], True, "float64")
    _compare(results["compiled"], results["torch"], False, "float64")


def _functional(lib: Any) -> tuple[Any, Any, Any]:
    mean, var = lib.zeros(3), lib.ones(3)

    def norm(x: Any) -> Any:
        return lib.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.3)

    return mean, var, norm


def test_functional_batch_norm_with_captured_statistics():
    stats = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        mean, var, norm = _functional(lib)
        fn = chainrule.compile(norm) if name == "compiled" else norm
        rng = np.random.default_rng(3)
        outs = []
        for _ in range(3):
            outs.append(fn(lib.tensor(rng.standard_normal((4, 3, 5)).astype(np.float32))))
        stats[name] = [o.numpy() for o in outs] + [mean.numpy(), var.numpy()]
        if name == "compiled":
            assert fn.fallback_reasons == []
    _compare(stats["compiled"], stats["eager"], True, "float32")
    _compare(stats["compiled"], stats["torch"], False, "float32")


def test_a_layer_compiled_on_its_own_is_traced_as_one_call():
    results = {}
    for name in ("eager", "compiled"):
        norm = chainrule.nn.BatchNorm2d(2)
        fn = chainrule.compile(norm) if name == "compiled" else norm
        x = chainrule.tensor(
            np.arange(24.0, dtype=np.float32).reshape(3, 2, 2, 2) ** 1.5, requires_grad=True
        )
        out = fn(x)
        out.backward(chainrule.ones_like(out) * chainrule.arange(24.0).reshape(3, 2, 2, 2))
        results[name] = [
            out.detach().numpy(),
            x.grad.numpy(),
            norm.weight.grad.numpy(),
            norm.running_var.numpy(),
        ]
        if name == "compiled":
            assert fn.fallback_reasons == [] and fn.graph_breaks == 0
            with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
                fn(chainrule.ones(2, 2, 2))
    _compare(results["compiled"], results["eager"], True, "float32")


def test_cumulative_momentum_runs_eagerly_as_pytorchs_graph_break():
    # PyTorch's torch.compile breaks the graph at float(num_batches_tracked) too.
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        model = _model(lib, "float64", False, momentum=None)
        fn = chainrule.compile(model) if name == "compiled" else model
        results[name] = _steps(lib, model, fn, "float64", False, "contiguous")
        if name == "compiled":
            assert fn.fallback_reasons[0] == "'__float__' reads a tensor's values into Python"
    _compare(results["compiled"], results["eager"], True, "float64")
    _compare(results["compiled"], results["torch"], False, "float64")


def test_statistics_passed_as_arguments_are_updated_once_per_call():
    stats = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule

        def norm(x, mean, var, lib=lib):
            return lib.nn.functional.batch_norm(x, mean, var, training=True, momentum=0.5)

        fn = chainrule.compile(norm) if name == "compiled" else norm
        mean, var = lib.zeros(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)
        for step in range(3):
            x = lib.tensor(np.linspace(-1, 2, 12).reshape(3, 2, 2) ** (step + 1))
            out = fn(x, mean, var)
        stats[name] = [out.numpy(), mean.numpy(), var.numpy()]
        if name == "compiled":
            assert fn.fallback_reasons == []
    _compare(stats["compiled"], stats["eager"], True, "float64")
    _compare(stats["compiled"], stats["torch"], False, "float64")
