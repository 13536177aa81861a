"""Questions about a tensor: ``is_signed``, ``is_nonzero``, ``is_same_size``, ``is_neg``,
``get_device``, ``is_inference``, ``typename``; and ``resolve_neg`` (chainrule has no lazy
negation bit, so there is never anything to resolve).

Each is a ``torch.<name>(input)`` function and, except ``typename``, a Tensor method.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ._registry import tensor_method

__all__ = [
    "is_signed",
    "is_nonzero",
    "is_same_size",
    "is_neg",
    "resolve_neg",
    "get_device",
    "is_distributed",
    "is_inference",
    "typename",
]


def _check_tensor(name: str, value: Any, argument: str = "input", position: int = 1) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): argument '{argument}' (position {position}) must be Tensor, not "
            f"{type(value).__name__}"
        )


@tensor_method
def is_signed(input: Tensor) -> bool:
    """Whether ``input``'s dtype holds negative values (False for bool and unsigned types).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1], dtype=torch.uint8).is_signed()
        False
    """
    _check_tensor("is_signed", input)
    return input._data.dtype.kind not in "bu"


@tensor_method
def is_nonzero(input: Tensor) -> bool:
    """Whether the single value of ``input`` is not zero (NaN counts as nonzero)."""
    _check_tensor("is_nonzero", input)
    size = input._data.size
    if size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


@tensor_method
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape."""
    _check_tensor("is_same_size", input)
    _check_tensor("is_same_size", other, "other", 2)
    return input._data.shape == other._data.shape


@tensor_method
def is_neg(input: Tensor) -> bool:
    """Whether ``input`` has PyTorch's lazy negation bit set: never, in chainrule."""
    _check_tensor("is_neg", input)
    return False


@tensor_method
def resolve_neg(input: Tensor) -> Tensor:
    """``input`` with its negation bit materialised: ``input`` itself (no tensor has one)."""
    _check_tensor("resolve_neg", input)
    return input


@tensor_method
def get_device(input: Tensor) -> int:
    """The index of ``input``'s device: -1 for the CPU, as in PyTorch."""
    _check_tensor("get_device", input)
    return -1


@tensor_method
def is_distributed(input: Tensor) -> bool:
    """False: chainrule tensors are never distributed."""
    _check_tensor("is_distributed", input)
    return False


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` was created in inference mode (``input.is_inference()``)."""
    _check_tensor("is_inference", input)
    return input.is_inference()


def typename(obj: Any) -> str:
    """The type name of ``obj`` as PyTorch spells it: ``x.type()`` for a tensor
    (``torch.FloatTensor``), ``module.QualifiedName`` for other objects, builtins unqualified.

    Example:
        >>> import chainrule as torch
        >>> torch.typename(3)
        'int'
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"
