"""chainrule.onnx.export's errors: PyTorch's exception type and message for an operator with no
ONNX form (naming the operator), for an opset past the newest; nothing is written then, and a
model in training mode is left in training mode."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

import chainrule
import chainrule.nn as cnn


def _module(nn, body):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return body(self.fc(x))

    return Model()


def _torch_error(model, args, **options) -> Exception:
    with warnings.catch_warnings(), pytest.raises(Exception) as caught:
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, io.BytesIO(), dynamo=False, **options)
    return caught.value


UNSUPPORTED = {
    "cummax": (lambda lib: lambda x: lib.cummax(x, 0)[0], "aten::cummax"),
    "erfinv": (lambda lib: lambda x: lib.erfinv(x * 0.1), "aten::erfinv"),
    "logcumsumexp": (lambda lib: lambda x: lib.logcumsumexp(x, 1), "aten::logcumsumexp"),
}


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_unsupported_operator_names_it_as_pytorch(name):
    body, operator = UNSUPPORTED[name]
    expected = _torch_error(_module(torch.nn, body(torch)), (torch.randn(2, 3),))
    buffer = io.BytesIO()
    with pytest.raises(chainrule.onnx.errors.UnsupportedOperatorError) as caught:
        chainrule.onnx.export(_module(cnn, body(chainrule)), (chainrule.randn(2, 3),), buffer)
    assert type(expected).__name__ == "UnsupportedOperatorError"
    assert str(caught.value) == str(expected)
    assert f"'{operator}'" in str(caught.value)
    assert buffer.getvalue() == b""
    assert isinstance(caught.value, chainrule.onnx.OnnxExporterError)
    assert isinstance(caught.value, RuntimeError)


def test_unsupported_operator_message_names_the_opset():
    body, _ = UNSUPPORTED["cummax"]
    expected = _torch_error(_module(torch.nn, body(torch)), (torch.randn(2, 3),), opset_version=17)
    with pytest.raises(chainrule.onnx.UnsupportedOperatorError) as caught:
        chainrule.onnx.export(
            _module(cnn, body(chainrule)), (chainrule.randn(2, 3),), io.BytesIO(), opset_version=17
        )
    assert str(caught.value) == str(expected)


def test_an_operation_the_recorder_did_not_see_is_an_error_not_a_constant():
    """A value computed from the input by a call the recorder did not see (here with
    ``__torch_function__`` dispatch switched off) must not be baked into the file as a
    constant: the export fails, naming the operation (from its grad_fn)."""

    class Untraced(cnn.Module):
        def forward(self, x):
            with chainrule._C.DisableTorchFunction():
                y = chainrule.cumsum(x, 0)  # (computed with the recorder switched off)
            return y + 1

    with pytest.raises(chainrule.onnx.UnsupportedOperatorError, match="'aten::cumsum'"):
        chainrule.onnx.export(Untraced(), (chainrule.randn(3),), io.BytesIO())


def test_opset_past_the_newest():
    model = _module(cnn, lambda x: x)
    expected = _torch_error(_module(torch.nn, lambda x: x), (torch.randn(2, 3),), opset_version=24)
    with pytest.raises(RuntimeError) as caught:
        chainrule.onnx.export(model, (chainrule.randn(2, 3),), io.BytesIO(), opset_version=24)
    assert type(caught.value) is type(expected)
    assert str(caught.value) == str(expected) == "Unsupported onnx_opset_version: 24"


def test_opset_older_than_chainrule_writes():
    model = _module(cnn, lambda x: x)
    with pytest.raises(chainrule.onnx.OnnxExporterError, match="opset versions 13 to 23, not 11"):
        chainrule.onnx.export(model, (chainrule.randn(2, 3),), io.BytesIO(), opset_version=11)


def test_training_mode_restored_after_an_error():
    body, _ = UNSUPPORTED["cummax"]
    model = _module(cnn, body(chainrule)).train()
    with pytest.raises(chainrule.onnx.UnsupportedOperatorError):
        chainrule.onnx.export(model, (chainrule.randn(2, 3),), io.BytesIO())
    assert model.training and model.fc.training
    assert not model.fc._forward_hooks and not model.fc._forward_pre_hooks
    # The recorder is gone: the same model runs eagerly again.
    model(chainrule.randn(2, 3))


def test_errors_module_names_as_pytorchs():
    for name in ("OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError"):
        ours = getattr(chainrule.onnx.errors, name)
        theirs = getattr(torch.onnx.errors, name)
        assert [c.__name__ for c in ours.__mro__[1:-1]] == [
            c.__name__ for c in theirs.__mro__[1:-1]
        ]
    error = chainrule.onnx.errors.UnsupportedOperatorError("aten::foo", 18, 19)
    assert str(error) == str(torch.onnx.errors.UnsupportedOperatorError("aten::foo", 18, 19))


def test_a_plain_function_is_refused_as_by_pytorch():
    def seed(w, x):
        return (w + x) * (w + 1)

    expected = _torch_error(seed, (torch.tensor([1.0]), torch.tensor([2.0])))
    with pytest.raises(AttributeError) as caught:
        chainrule.onnx.export(
            seed, (chainrule.tensor([1.0]), chainrule.tensor([2.0])), io.BytesIO()
        )
    assert str(caught.value) == str(expected)


def test_an_output_that_is_a_number():
    expected = _torch_error(_module(torch.nn, lambda x: (x + 1, 3)), (torch.randn(2, 3),))
    with pytest.raises(RuntimeError) as caught:
        chainrule.onnx.export(
            _module(cnn, lambda x: (x + 1, 3)), (chainrule.randn(2, 3),), io.BytesIO()
        )
    assert type(caught.value) is type(expected)
    assert "of traced region did not have observable data dependence with trace inputs" in str(
        expected
    )
    assert str(caught.value).startswith("output 1 of traced region did not have observable")


def test_a_constant_tensor_output_is_written_as_a_constant():
    import numpy as np
    import onnxruntime

    model = _module(cnn, lambda x: (x + 1, chainrule.full((2,), 7.0)))
    buffer = io.BytesIO()
    chainrule.onnx.export(model, (chainrule.randn(2, 3),), buffer, input_names=["x"])
    session = onnxruntime.InferenceSession(buffer.getvalue(), providers=["CPUExecutionProvider"])
    x = np.ones((2, 3), np.float32)
    _, constant = session.run(None, {"x": x})
    assert constant.tolist() == [7.0, 7.0]


def test_training_mode_enum_as_pytorchs():
    for name in ("EVAL", "PRESERVE", "TRAINING"):
        ours, theirs = (
            getattr(chainrule.onnx.TrainingMode, name),
            getattr(torch.onnx.TrainingMode, name),
        )
        assert int(ours) == int(theirs) and repr(ours) == repr(theirs)


def test_training_mode_with_dropout_is_refused_and_modes_restored():
    model = cnn.Sequential(cnn.Linear(3, 3), cnn.Dropout(0.5), cnn.BatchNorm1d(3))
    model.eval()
    model[2].train()  # (a mixed state: restored module by module)
    for mode in (chainrule.onnx.TrainingMode.TRAINING, chainrule.onnx.TrainingMode.PRESERVE):
        with pytest.raises(chainrule.onnx.UnsupportedOperatorError, match="aten::"):
            chainrule.onnx.export(model, (chainrule.randn(2, 3),), io.BytesIO(), training=mode)
        assert [m.training for m in model.modules()] == [False, False, False, True]
    buffer = io.BytesIO()
    chainrule.onnx.export(model, (chainrule.randn(2, 3),), buffer)  # (EVAL: every layer)
    assert buffer.getvalue()
    assert [m.training for m in model.modules()] == [False, False, False, True]


def test_no_file_is_refused_before_anything_runs():
    calls = []

    class Model(cnn.Module):
        def forward(self, x):
            calls.append(1)
            return x + 1

    with pytest.raises(ValueError, match="f must be a path or a binary file-like object"):
        chainrule.onnx.export(Model(), (chainrule.ones(2),))
    assert calls == []


def test_without_the_onnx_package(monkeypatch):
    """chainrule.onnx imports without the optional package; exporting says how to get it."""
    import sys

    monkeypatch.setitem(sys.modules, "onnx", None)  # (import onnx raises ModuleNotFoundError)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'chainrule\[onnx\]'"):
        chainrule.onnx.export(cnn.Linear(2, 2), (chainrule.ones(1, 2),), io.BytesIO())
