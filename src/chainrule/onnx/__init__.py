"""``torch.onnx``: models exported as ONNX files (``chainrule.onnx.export``).

One forward call is recorded (the layers of ``chainrule.nn`` from their attributes, the other
calls through a ``TorchFunctionMode``) and written with the ``onnx`` package, as PyTorch's
TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``) writes it: opset 20,
parameters as initializers under their ``state_dict`` names, nodes named by module path
(``/fc1/Gemm``), dynamic axes as symbolic dimensions. The ``onnx`` package is optional (the
``onnx`` extra); importing this module does not need it, exporting does.

    >>> import chainrule as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Softmax(dim=1))
    >>> torch.onnx.export(model, (torch.randn(2, 4),), "model.onnx", input_names=["x"],
    ...                   output_names=["probs"], dynamic_axes={"x": {0: "batch"}})
"""

from __future__ import annotations

from . import errors
from ._export import TrainingMode, export, is_in_onnx_export
from .errors import OnnxExporterError, OnnxExporterWarning, UnsupportedOperatorError

__all__ = [
    "export",
    "is_in_onnx_export",
    "TrainingMode",
    "errors",
    "OnnxExporterError",
    "OnnxExporterWarning",
    "UnsupportedOperatorError",
]
