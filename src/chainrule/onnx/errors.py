"""The ONNX exporter's errors and warning, as ``torch.onnx.errors`` names them."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings in the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (the base class of its errors)."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator the exporter cannot write: PyTorch's message, naming the operator
    (``aten::<name>``) and the opset version."""

    def __init__(self, name: str, version: int, supported_version: int | None = None) -> None:
        if supported_version is not None:
            message = (
                f"Exporting the operator '{name}' to ONNX opset version {version} "
                "is not supported. Support for this operator was added in version "
                f"{supported_version}, try exporting with this version"
            )
        else:
            message = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
            )
        super().__init__(message)
