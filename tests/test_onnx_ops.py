"""The element-wise, matrix, reduction, reshape and indexing calls chainrule.onnx.export
writes: each small program is exported, run in onnxruntime and compared with chainrule's eager
result, at the traced batch size and (with a dynamic first axis) at others; the node types are
those PyTorch's exporter writes for the same call."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

import chainrule


def _program(fn):
    """A chainrule and a PyTorch module computing ``fn(lib, x, y)``."""

    def make(nn, lib):
        class Program(nn.Module):
            def forward(self, x, y):
                return fn(lib, x, y)

        return Program()

    return make(chainrule.nn, chainrule), make(torch.nn, torch)


PROGRAMS = {
    "add_sub_alpha": lambda t, x, y: t.add(x, y, alpha=2) - t.sub(y, x, alpha=0.5),
    "reflected": lambda t, x, y: (2 - x) * (1 / (y.abs() + 1)) + 3 ** (x * 0.1) + x**2,
    "mul_div_scalar": lambda t, x, y: x * 3 / 2 + y / x.abs().add(1),
    "unary": lambda t, x, y: t.exp(x).log() + t.sigmoid(y) - t.tanh(x).neg() + t.sqrt(y.abs()),
    "activations": lambda t, x, y: (
        t.relu(x) + t.nn.functional.leaky_relu(y, 0.2) + t.nn.functional.gelu(x)
    ),
    "matmul": lambda t, x, y: t.matmul(x, y.t()) + (x @ y.transpose(0, 1)).exp().sum(),
    "linear_3d": lambda t, x, y: t.nn.functional.linear(x.unsqueeze(0), y[:3], y[0, :3]),
    "softmax": lambda t, x, y: t.softmax(x, dim=1) + t.log_softmax(y, -1),
    "reductions": lambda t, x, y: (
        x.sum(1, keepdim=True) + y.mean(dim=(1,), keepdim=True) + x.sum() + y.mean()
    ),
    "reshape": lambda t, x, y: (
        x.view(x.shape[0], 2, -1).reshape(x.shape[0], -1).flatten() + y.flatten()
    ),
    "permute_squeeze": lambda t, x, y: x.unsqueeze(1).permute(2, 1, 0).squeeze(1).t() + y,
    "cat_clamp": lambda t, x, y: t.cat([x.clamp(min=-0.5), y.clamp(-1, 1), x.clamp(max=0.2)], 1),
    "indexing": lambda t, x, y: (
        x[:, 1:3] + y[:, -2:] + x[..., 0:1] + y[:, 3].unsqueeze(1) + x[None, -1, ::2].squeeze(0)[:2]
    ),
    "comparisons": lambda t, x, y: (
        t.where(x > y, x, y)
        + (x < 0.5).float()
        + (x == y).to(x.dtype)
        + (x >= y).float()
        + (x <= y).float()
        + (x != y).float()
        + t.where(y.ge(0), 1.0, y)
    ),
    "extremes": lambda t, x, y: (
        t.maximum(x, y)
        - t.minimum(x, y)
        + x.amax(1, keepdim=True)
        + y.amin(dim=1, keepdim=True)
        + x.max()
        + y.min()
        + x.prod(1, keepdim=True)
    ),
    "arg_extremes": lambda t, x, y: (
        x.argmax(1).unsqueeze(1).to(x.dtype)
        + y.argmin(dim=1, keepdim=True).to(x.dtype)
        + x.argmax().to(x.dtype)
    ),
    "expand": lambda t, x, y: x[:, :1].expand(-1, 4) + y[:1].expand(x.shape[0], 4),
    "in_place": lambda t, x, y: x.clone().mul_(2).add_(y).relu_(),
}


def _export(model, args, **options) -> bytes:
    buffer = io.BytesIO()
    chainrule.onnx.export(model, args, buffer, **options)
    data = buffer.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


def _torch_node_types(model, args, **options) -> list[str]:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buffer, dynamo=False, **options)
    return [n.op_type for n in onnx.load_from_string(buffer.getvalue()).graph.node]


def _run(data: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def _run_reference(data: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(onnx.load_from_string(data)).run(None, feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_round_trip(name, dtype):
    ours, _ = _program(PROGRAMS[name])
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4, 4)).astype(dtype) for _ in range(2))
    options = {"input_names": ["x", "y"], "dynamic_axes": {"x": {0: "b"}, "y": {0: "b"}}}
    data = _export(ours, (chainrule.from_numpy(x), chainrule.from_numpy(y)), **options)
    tolerance = 2e-6 if dtype == np.float32 else 1e-12
    fixed = ("matmul", "linear_3d", "permute_squeeze", "expand", "arg_extremes")
    shapes = [4] if name in fixed else [4, 1, 7]
    for batch in shapes:
        x, y = (rng.standard_normal((batch, 4)).astype(dtype) for _ in range(2))
        # (onnxruntime has no float64 LeakyRelu: onnx's reference evaluator runs that one)
        # (whose Gelu is good to ~1e-8 only: its tolerance is wider)
        run = _run_reference if (name, dtype) == ("activations", np.float64) else _run
        if run is _run_reference:
            tolerance = 1e-7
        (got,) = run(data, {"x": x, "y": y})
        expected = ours(chainrule.from_numpy(x), chainrule.from_numpy(y)).detach().numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize(
    "name",
    [
        "add_sub_alpha",
        "reflected",
        "mul_div_scalar",
        "unary",
        "activations",
        "softmax",
        "matmul",
        "reductions",
        "permute_squeeze",
        "cat_clamp",
        "comparisons",
        "extremes",
        "arg_extremes",
        "in_place",
    ],
)
def test_node_types_as_pytorchs(name):
    ours, theirs = _program(PROGRAMS[name])
    x = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    data = _export(ours, (chainrule.from_numpy(x), chainrule.from_numpy(x + 1)))
    mine = [n.op_type for n in onnx.load_from_string(data).graph.node]
    expected = _torch_node_types(theirs, (torch.from_numpy(x), torch.from_numpy(x + 1)))
    # (constants: PyTorch writes some as initializers or folds them; the computing nodes agree)
    assert [t for t in mine if t != "Constant"] == [t for t in expected if t != "Constant"]


def test_integer_input_promoted_as_pytorch():
    ours, _ = _program(lambda t, x, y: x * 1.5 + y)
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    data = _export(ours, (chainrule.from_numpy(x), chainrule.from_numpy(y)), input_names=["x", "y"])
    (got,) = _run(data, {"x": x, "y": y})
    expected = ours(chainrule.from_numpy(x), chainrule.from_numpy(y)).numpy()
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_several_outputs_and_an_input_returned():
    class Two(chainrule.nn.Module):
        def forward(self, x, y):
            s = x + y
            return s, x, s

    x, y = chainrule.randn(2, 3), chainrule.randn(2, 3)
    data = _export(Two(), (x, y), input_names=["x", "y"], output_names=["s", "same_x", "s2"])
    model = onnx.load_from_string(data)
    assert [o.name for o in model.graph.output] == ["s", "same_x", "s2"]
    s, same_x, s2 = _run(data, {"x": x.numpy(), "y": y.numpy()})
    np.testing.assert_array_equal(s, (x + y).numpy())
    np.testing.assert_array_equal(same_x, x.numpy())
    np.testing.assert_array_equal(s2, s)
