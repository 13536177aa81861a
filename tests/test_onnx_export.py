"""chainrule.onnx.export: the exported file runs in onnxruntime and gives chainrule's outputs,
and has what PyTorch's own export (``torch.onnx.export(..., dynamo=False)``) of the same model
has: node types, node names, attributes, initializer names, the opset.

Models: an MLP, a CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d, AvgPool2d, Dropout, Flatten, Linear,
softmax) and the seed articles' example ``y = (w + x) * (w + 1)``."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
import torch

import chainrule
import chainrule.nn as cnn


def _mlp(nn, lib):
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 16)
            self.drop = nn.Dropout(0.5)
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return lib.log_softmax(self.fc2(self.drop(lib.relu(self.fc1(x)))), dim=1)

    return MLP()


def _cnn(nn, lib):
    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(2, 4, 3, padding=1),
                nn.BatchNorm2d(4),
                nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(4, 6, 3, stride=1, padding=1, bias=False),
                nn.BatchNorm2d(6),
                nn.ReLU(inplace=True),
                nn.AvgPool2d(2),
                nn.Dropout(0.3),
            )
            self.flat = nn.Flatten()
            self.fc = nn.Linear(6 * 2 * 2, 5)

        def forward(self, x):
            return self.fc(self.flat(self.features(x))).softmax(-1)

    return CNN()


def _seed(nn, lib):
    class Seed(nn.Module):
        def forward(self, w, x):
            a = lib.add(w, x)
            b = lib.add(w, 1)
            return lib.mul(a, b)

    return Seed()


def _pair(make, dtype=np.float32, seed=0):
    """The same model in chainrule and PyTorch (PyTorch's random parameters copied over;
    BatchNorm statistics made non-trivial), both in eval mode."""
    torch.manual_seed(seed)
    ref = make(torch.nn, torch)
    ours = make(cnn, chainrule)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for module in ref.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.copy_(torch.from_numpy(rng.uniform(-1, 1, module.num_features)))
                module.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 2, module.num_features)))
                module.weight.copy_(torch.from_numpy(rng.uniform(0.5, 2, module.num_features)))
                module.bias.copy_(torch.from_numpy(rng.uniform(-1, 1, module.num_features)))
    ref = ref.to(torch.float64 if dtype == np.float64 else torch.float32)
    state = {
        k: chainrule.from_numpy(v.detach().numpy().copy()) for k, v in ref.state_dict().items()
    }
    ours.load_state_dict(state)
    if dtype == np.float64:
        ours = ours.double()
    return ours.eval(), ref.eval()


def _export(model, args, **options) -> bytes:
    buffer = io.BytesIO()
    chainrule.onnx.export(model, args, buffer, **options)
    data = buffer.getvalue()
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    return data


def _export_torch(model, args, **options) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buffer, dynamo=False, **options)
    return buffer.getvalue()


def _run(data: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _run_reference(data: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnx's own reference evaluator (it runs float64 Conv, which onnxruntime's CPU kernels do
    not)."""
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(onnx.load_from_string(data)).run(None, feeds)


def _dims(value) -> list:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def _attributes(node) -> dict:
    found = {}
    for attribute in node.attribute:
        value = onnx.helper.get_attribute_value(attribute)
        found[attribute.name] = np.round(value, 6).tolist() if isinstance(value, float) else value
    return found


def _numbered(name: str) -> str:
    """``onnx::Conv_19`` -> ``onnx::Conv_#`` (the numbers are TorchScript's value ids)."""
    return re.sub(r"^(onnx::\w+?)_\d+$", r"\1_#", name)


MODELS = {
    "mlp": (_mlp, [(3, 6)]),
    "cnn": (_cnn, [(2, 2, 8, 8)]),
    "seed": (_seed, [(1,), (1,)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(MODELS))
def test_onnxruntime_gives_chainrules_outputs(name, dtype):
    make, shapes = MODELS[name]
    ours, _ = _pair(make, dtype)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    args = tuple(chainrule.from_numpy(a) for a in arrays)
    names = [f"in{i}" for i in range(len(args))]
    data = _export(ours, args, input_names=names)
    # (onnxruntime has no float64 Conv kernel: the reference evaluator runs that one)
    run = _run_reference if (name, dtype) == ("cnn", np.float64) else _run
    (got,) = run(data, dict(zip(names, arrays, strict=True)))
    expected = ours(*args).detach().numpy()
    assert got.dtype == expected.dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


def test_seed_example_values():
    """The seed articles' w = 1, x = 2: y = (w + x) * (w + 1) = 6."""
    ours, _ = _pair(_seed)
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    data = _export(ours, (w, x), input_names=["w", "x"], output_names=["y"])
    (y,) = _run(data, {"w": np.array([1.0], np.float32), "x": np.array([2.0], np.float32)})
    assert y.tolist() == [6.0]
    model = onnx.load_from_string(data)
    assert [n.op_type for n in model.graph.node if n.op_type != "Constant"] == ["Add", "Add", "Mul"]
    assert [o.name for o in model.graph.output] == ["y"]


@pytest.mark.parametrize("name", list(MODELS))
def test_same_graph_as_pytorchs_export(name):
    make, shapes = MODELS[name]
    ours, ref = _pair(make)
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    names = [f"in{i}" for i in range(len(arrays))]
    options = {"input_names": names, "output_names": ["out"]}
    data = _export(ours, tuple(chainrule.from_numpy(a) for a in arrays), **options)
    expected_data = _export_torch(ref, tuple(torch.from_numpy(a) for a in arrays), **options)
    mine, theirs = onnx.load_from_string(data), onnx.load_from_string(expected_data)
    assert [o.version for o in mine.opset_import] == [o.version for o in theirs.opset_import]
    assert mine.ir_version == theirs.ir_version
    assert [i.name for i in mine.graph.input] == [i.name for i in theirs.graph.input]
    assert [_dims(i) for i in mine.graph.input] == [_dims(i) for i in theirs.graph.input]
    assert [(o.name, _dims(o)) for o in mine.graph.output] == [
        (o.name, _dims(o)) for o in theirs.graph.output
    ]
    assert [_numbered(i.name) for i in mine.graph.initializer] == [
        _numbered(i.name) for i in theirs.graph.initializer
    ]

    def computing(model):
        return [n for n in model.graph.node if n.op_type != "Constant"]

    assert [(n.op_type, n.name) for n in computing(mine)] == [
        (n.op_type, n.name) for n in computing(theirs)
    ]
    for node, expected in zip(computing(mine), computing(theirs), strict=True):
        assert _attributes(node) == _attributes(expected), node.name
    # Both files compute the same values.
    feeds = dict(zip(names, arrays, strict=True))
    np.testing.assert_allclose(
        _run(data, feeds)[0], _run(expected_data, feeds)[0], rtol=1e-5, atol=1e-6
    )


def test_batch_norm_unfolded_without_constant_folding():
    ours, ref = _pair(_cnn)
    x = np.random.default_rng(3).standard_normal((2, 2, 8, 8)).astype(np.float32)
    options = {"input_names": ["x"], "output_names": ["y"], "do_constant_folding": False}
    data = _export(ours, (chainrule.from_numpy(x),), **options)
    model = onnx.load_from_string(data)
    theirs = onnx.load_from_string(_export_torch(ref, (torch.from_numpy(x),), **options))
    assert [n.op_type for n in model.graph.node].count("BatchNormalization") == 2
    initializers = [i.name for i in model.graph.initializer]
    assert "features.1.running_mean" in initializers
    assert set(initializers) == {i.name for i in theirs.graph.initializer}
    batch_norm = next(n for n in model.graph.node if n.op_type == "BatchNormalization")
    assert _attributes(batch_norm) == {"epsilon": 1e-05, "momentum": 0.9, "training_mode": 0}
    expected = ours(chainrule.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(_run(data, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_dynamic_axes_run_other_batch_sizes(name):
    make, shapes = MODELS[name]
    ours, ref = _pair(make)
    traced = np.random.default_rng(4).standard_normal(shapes[0]).astype(np.float32)
    options = {
        "input_names": ["x"],
        "output_names": ["y"],
        "dynamic_axes": {"x": {0: "batch"}, "y": {0: "batch"}},
    }
    data = _export(ours, (chainrule.from_numpy(traced),), **options)
    model = onnx.load_from_string(data)
    theirs = onnx.load_from_string(_export_torch(ref, (torch.from_numpy(traced),), **options))
    assert _dims(model.graph.input[0]) == _dims(theirs.graph.input[0])
    assert _dims(model.graph.output[0]) == _dims(theirs.graph.output[0])
    for batch in (1, 5, 17):
        x = np.random.default_rng(batch).standard_normal((batch, *shapes[0][1:]))
        x = x.astype(np.float32)
        (got,) = _run(data, {"x": x})
        expected = ours(chainrule.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_dynamic_axes_as_a_list_get_pytorchs_names_and_warning():
    ours, ref = _pair(_mlp)
    x = np.ones((3, 6), np.float32)
    options = {"input_names": ["x"], "output_names": ["y"], "dynamic_axes": {"x": [0], "y": [0]}}
    with pytest.warns(UserWarning, match="Automatically generated names will be applied"):
        data = _export(ours, (chainrule.from_numpy(x),), **options)
    model = onnx.load_from_string(data)
    theirs = onnx.load_from_string(_export_torch(ref, (torch.from_numpy(x),), **options))
    assert _dims(model.graph.input[0]) == _dims(theirs.graph.input[0]) == ["x_dynamic_axes_1", 6]
    assert _dims(model.graph.output[0]) == _dims(theirs.graph.output[0])


def test_unknown_dynamic_axes_key_warns_as_pytorch():
    ours, _ = _pair(_mlp)
    with pytest.warns(
        UserWarning, match="Provided key zz for dynamic axes is not a valid input/output name"
    ):
        _export(ours, (chainrule.ones(2, 6),), dynamic_axes={"zz": {0: "b"}})


def test_path_and_file_object(tmp_path):
    ours, _ = _pair(_mlp)
    x = chainrule.randn(2, 6)
    path = tmp_path / "model.onnx"
    assert chainrule.onnx.export(ours, (x,), str(path), input_names=["x"]) is None
    chainrule.onnx.export(ours, (x,), path.with_suffix(".2.onnx"), input_names=["x"])
    buffer = io.BytesIO()
    chainrule.onnx.export(ours, (x,), buffer, input_names=["x"])
    assert path.read_bytes() == path.with_suffix(".2.onnx").read_bytes() == buffer.getvalue()
    onnx.checker.check_model(str(path))
    (got,) = _run(path.read_bytes(), {"x": x.numpy()})
    np.testing.assert_allclose(got, ours(x).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_a_single_tensor_and_kwargs_as_args():
    ours, _ = _pair(_seed)
    w, x = chainrule.tensor([1.5]), chainrule.tensor([-2.0])
    data = _export(ours, (w, {"x": x}), input_names=["w"])
    model = onnx.load_from_string(data)
    # (a keyword tensor is not a graph input: PyTorch's tracer, too, bakes it in... as a constant)
    assert [i.name for i in model.graph.input] == ["w"]
    mlp, _ = _pair(_mlp)
    data = _export(mlp, chainrule.ones(2, 6), input_names=["x"])
    assert [i.name for i in onnx.load_from_string(data).graph.input] == ["x"]


def test_default_names():
    ours, _ = _pair(_seed)
    data = _export(ours, (chainrule.tensor([1.0]), chainrule.tensor([2.0])))
    model = onnx.load_from_string(data)
    assert [i.name for i in model.graph.input] == ["w", "x"]  # forward's parameters
    assert [o.name for o in model.graph.output] == ["output"]


def test_export_params_false_makes_parameters_inputs():
    ours, ref = _pair(_mlp)
    x = np.ones((2, 6), np.float32)
    data = _export(ours, (chainrule.from_numpy(x),), input_names=["x"], export_params=False)
    model = onnx.load_from_string(data)
    theirs = onnx.load_from_string(
        _export_torch(ref, (torch.from_numpy(x),), input_names=["x"], export_params=False)
    )
    assert [i.name for i in model.graph.input] == [i.name for i in theirs.graph.input]
    assert len(model.graph.initializer) == len(theirs.graph.initializer) == 0
    feeds = {"x": x} | {k: v.detach().numpy() for k, v in ours.named_parameters()}
    np.testing.assert_allclose(
        _run(data, feeds)[0], ours(chainrule.from_numpy(x)).detach().numpy(), rtol=1e-6
    )


def test_keep_initializers_as_inputs():
    ours, _ = _pair(_mlp)
    data = _export(
        ours, (chainrule.ones(2, 6),), input_names=["x"], keep_initializers_as_inputs=True
    )
    model = onnx.load_from_string(data)
    assert [i.name for i in model.graph.input] == [
        "x",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    assert len(model.graph.initializer) == 4


@pytest.mark.parametrize("opset", [13, 14, 17, 18, 20, 21, 23])
def test_opset_versions(opset):
    ours, _ = _pair(_cnn)
    x = np.random.default_rng(5).standard_normal((2, 2, 8, 8)).astype(np.float32)

    class Pooled(cnn.Module):
        def __init__(self):
            super().__init__()
            self.body = ours

        def forward(self, x):
            return self.body(x).mean(dim=1, keepdim=True) + x.sum((1, 2, 3)).unsqueeze(1)

    model = Pooled().eval()
    data = _export(model, (chainrule.from_numpy(x),), input_names=["x"], opset_version=opset)
    written = onnx.load_from_string(data)
    reference = onnx.load_from_string(
        _export_torch(_mlp(torch.nn, torch), (torch.ones(1, 6),), opset_version=opset)
    )
    assert [o.version for o in written.opset_import] == [opset]
    assert [o.version for o in reference.opset_import] == [opset]
    assert written.ir_version == reference.ir_version
    expected = model(chainrule.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(_run(data, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)


def test_training_model_is_exported_in_eval_mode_and_restored():
    ours, _ = _pair(_cnn)
    ours.train()
    x = chainrule.randn(2, 2, 8, 8)
    data = _export(ours, (x,), input_names=["x"])
    assert ours.training and all(m.training for m in ours.modules())
    (got,) = _run(data, {"x": x.numpy()})
    ours.eval()
    np.testing.assert_allclose(got, ours(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_verbose_prints_the_graph(capsys):
    ours, _ = _pair(_mlp)
    _export(ours, (chainrule.ones(1, 6),), input_names=["x"], verbose=True)
    printed = capsys.readouterr().out
    assert "Gemm" in printed and "main_graph" in printed


def _layers(nn):
    return nn.Sequential(
        nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2),
        nn.BatchNorm2d(8),
        nn.LeakyReLU(0.1),
        nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
        nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
        nn.Conv2d(8, 4, 3, padding="same", bias=False),
        nn.GELU(),
        nn.Sigmoid(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 6),
        nn.BatchNorm1d(6),
        nn.Tanh(),
        nn.Softmax(dim=1),
    )


@pytest.mark.parametrize("fold", [True, False], ids=["folded", "unfolded"])
def test_layer_attributes_and_deduplicated_initializers_as_pytorchs(fold):
    """Strides, dilation, groups, "same" padding, ceil_mode, count_include_pad, adaptive
    pooling, BatchNorm1d; fresh BatchNorms, whose running_var equals their weight (all ones):
    PyTorch keeps one initializer of equal ones and reads the others through Identity nodes."""
    torch.manual_seed(0)
    ref = _layers(torch.nn).eval()
    ours = _layers(cnn).eval()
    ours.load_state_dict(
        {k: chainrule.from_numpy(v.numpy().copy()) for k, v in ref.state_dict().items()}
    )
    x = np.random.default_rng(0).standard_normal((2, 4, 11, 11)).astype(np.float32)
    options = {"input_names": ["x"], "output_names": ["y"], "do_constant_folding": fold}
    data = _export(ours, (chainrule.from_numpy(x),), **options)
    expected_data = _export_torch(ref, (torch.from_numpy(x),), **options)
    mine, theirs = onnx.load_from_string(data), onnx.load_from_string(expected_data)
    assert [(n.op_type, n.name) for n in mine.graph.node] == [
        (n.op_type, n.name) for n in theirs.graph.node
    ]
    for node, expected in zip(mine.graph.node, theirs.graph.node, strict=True):
        assert _attributes(node) == _attributes(expected), node.name
        assert [_numbered(i) for i in node.input] == [_numbered(i) for i in expected.input]
    assert [_numbered(i.name) for i in mine.graph.initializer] == [
        _numbered(i.name) for i in theirs.graph.initializer
    ]
    got = _run(data, {"x": x})[0]
    np.testing.assert_allclose(got, _run(expected_data, {"x": x})[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        got, ours(chainrule.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6
    )


def _shared_values(nn):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.BatchNorm1d(3)
            self.b = nn.BatchNorm1d(3)
            self.c = nn.Linear(3, 3)

        def forward(self, x):
            return self.b(self.c(self.a(x)))  # (c's parameters used between a's and b's)

    return Model()


def test_deduplication_order_as_pytorchs():
    torch.manual_seed(0)
    ref = _shared_values(torch.nn).eval()
    with torch.no_grad():
        ref.c.bias.zero_()  # (equal to the BatchNorms' biases)
    ours = _shared_values(cnn).eval()
    ours.load_state_dict(
        {k: chainrule.from_numpy(v.numpy().copy()) for k, v in ref.state_dict().items()}
    )
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    mine = onnx.load_from_string(_export(ours, (chainrule.from_numpy(x),), input_names=["x"]))
    theirs = onnx.load_from_string(_export_torch(ref, (torch.from_numpy(x),), input_names=["x"]))

    def identities(model):
        return [
            (n.name, list(n.input), list(n.output))
            for n in model.graph.node
            if n.op_type == "Identity"
        ]

    assert identities(mine) == identities(theirs)
    assert len(identities(mine)) == 7
    assert [i.name for i in mine.graph.initializer] == [i.name for i in theirs.graph.initializer]


def test_nested_and_dict_outputs_flattened_as_pytorch():
    def make(nn):
        class Model(nn.Module):
            def forward(self, x):
                return {"b": x + 1, "a": (x * 2, None, [x - 1])}

        return Model()

    x = np.arange(3, dtype=np.float32)
    options = {"input_names": ["x"], "output_names": ["p", "q", "r"]}
    data = _export(make(cnn), (chainrule.from_numpy(x),), **options)
    theirs = onnx.load_from_string(_export_torch(make(torch.nn), (torch.from_numpy(x),), **options))
    mine = onnx.load_from_string(data)
    assert [o.name for o in mine.graph.output] == [o.name for o in theirs.graph.output]
    assert [n.op_type for n in mine.graph.node] == [n.op_type for n in theirs.graph.node]
    p, q, r = _run(data, {"x": x})
    assert p.tolist() == [1, 2, 3] and q.tolist() == [0, 2, 4] and r.tolist() == [-1, 0, 1]


def test_is_in_onnx_export():
    seen = []

    class Model(cnn.Module):
        def forward(self, x):
            seen.append(chainrule.onnx.is_in_onnx_export())
            return x + 1

    assert not chainrule.onnx.is_in_onnx_export() and not torch.onnx.is_in_onnx_export()
    _export(Model(), (chainrule.ones(2),))
    assert seen == [True]
    assert not chainrule.onnx.is_in_onnx_export()


def _lenet(nn, lib):
    """The PyTorch tutorial's network: layers called through nn.functional in forward."""
    F = nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, 16 * 5 * 5)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, 0.5, training=self.training)
            return self.fc3(F.relu(self.fc2(x)))

    return Net()


def _functional_cnn(nn, lib):
    """Layers as functions of the module's own parameters and buffers."""
    F = nn.functional

    class Functional(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.randn(4, 2, 3, 3) * 0.3)
            self.bias = nn.Parameter(lib.randn(4) * 0.1)
            self.register_buffer("mean", lib.linspace(-0.5, 0.5, 4))
            self.register_buffer("var", lib.linspace(0.5, 2.0, 4))

        def forward(self, x):
            y = F.conv2d(x, self.weight, self.bias, stride=1, padding=1, dilation=1, groups=1)
            y = F.batch_norm(y, self.mean, self.var, training=False, eps=1e-3)
            y = F.avg_pool2d(F.relu(y), 2, count_include_pad=False)
            y = F.max_pool2d(y, 3, stride=1, padding=1, ceil_mode=True)
            y = F.adaptive_avg_pool2d(y, 1)
            return F.log_softmax(y.view(y.size(0), -1), dim=1)

    return Functional()


@pytest.mark.parametrize("make", [_lenet, _functional_cnn], ids=["lenet", "functional"])
def test_functional_layers_as_pytorchs(make):
    ours, ref = _pair(make)
    shape = (2, 1, 32, 32) if make is _lenet else (2, 2, 8, 8)
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    options = {"input_names": ["x"], "output_names": ["y"]}
    mine = onnx.load_from_string(_export(ours, (chainrule.from_numpy(x),), **options))
    theirs = onnx.load_from_string(_export_torch(ref, (torch.from_numpy(x),), **options))
    # Every node, constants included (the functional BatchNorm folded into the Conv).
    assert [(n.op_type, n.name, [_numbered(i) for i in n.input]) for n in mine.graph.node] == [
        (n.op_type, n.name, [_numbered(i) for i in n.input]) for n in theirs.graph.node
    ]
    for node, expected in zip(mine.graph.node, theirs.graph.node, strict=True):
        if node.op_type != "Constant":
            assert _attributes(node) == _attributes(expected), node.name
    assert [_numbered(i.name) for i in mine.graph.initializer] == [
        _numbered(i.name) for i in theirs.graph.initializer
    ]
    # With a dynamic batch: other batch sizes (PyTorch's file computes x.size(0) at run
    # time, chainrule's Reshape copies the input's size: the same values).
    options["dynamic_axes"] = {"x": {0: "batch"}, "y": {0: "batch"}}
    data = _export(ours, (chainrule.from_numpy(x),), **options)
    expected_data = _export_torch(ref, (torch.from_numpy(x),), **options)
    for batch in (1, 2, 5):
        x = np.random.default_rng(batch).standard_normal((batch, *shape[1:])).astype(np.float32)
        got = _run(data, {"x": x})[0]
        np.testing.assert_allclose(got, _run(expected_data, {"x": x})[0], rtol=1e-5, atol=1e-5)
        expected = ours(chainrule.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _shared(nn, lib):
    """A module called three times, a ModuleList in a loop, Linear on a 3-d input."""

    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

        def forward(self, x):
            x = self.fc(self.fc(x))
            for block in self.blocks:
                x = lib.relu(block(x))
            return self.fc(x.unsqueeze(1)).squeeze(1)

    return Shared()


def _sequence_model(nn, lib):
    return nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2, bias=False))


@pytest.mark.parametrize("fold", [True, False], ids=["folded", "unfolded"])
@pytest.mark.parametrize(
    "make, shape", [(_shared, (3, 4)), (_sequence_model, (2, 3, 4))], ids=["shared", "3d"]
)
def test_repeated_modules_and_3d_linear_as_pytorchs(make, shape, fold):
    ours, ref = _pair(make)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    options = {"input_names": ["x"], "output_names": ["y"], "do_constant_folding": fold}
    data = _export(ours, (chainrule.from_numpy(x),), **options)
    expected_data = _export_torch(ref, (torch.from_numpy(x),), **options)
    mine, theirs = onnx.load_from_string(data), onnx.load_from_string(expected_data)
    assert [(n.op_type, n.name, [_numbered(i) for i in n.input]) for n in mine.graph.node] == [
        (n.op_type, n.name, [_numbered(i) for i in n.input]) for n in theirs.graph.node
    ]
    assert [_numbered(i.name) for i in mine.graph.initializer] == [
        _numbered(i.name) for i in theirs.graph.initializer
    ]
    got = _run(data, {"x": x})[0]
    np.testing.assert_allclose(got, _run(expected_data, {"x": x})[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        got, ours(chainrule.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-6
    )
