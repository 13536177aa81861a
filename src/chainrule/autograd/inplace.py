"""Version counting of in-place writes, and the errors about tensors modified in place after
being saved for backward."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .._frames import user_frame
from .._tensor import refresh_view
from .node import Node

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["modified_error", "modified_output_error", "describe", "bump_version"]

_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def _caller_location() -> str:
    """``file:line`` of the first frame outside chainrule (where the user wrote the op)."""
    frame = user_frame()
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def bump_version(self: Tensor) -> None:
    """Count an in-place write (shared with views) and remember where it happened."""
    counter = self._vc
    counter[0] += 1
    location = _caller_location()
    if len(counter) == 1:
        counter.append(location)
    else:
        counter[1] = location


def describe(data: np.ndarray) -> str:
    """PyTorch's short description of a tensor, e.g. ``[chainrule.FloatTensor [3]]``."""
    from .._dtype import from_numpy_dtype
    from .._tensor import LEGACY_TYPE_NAMES

    name = LEGACY_TYPE_NAMES.get(from_numpy_dtype(data.dtype), "Tensor")
    dims = ", ".join(str(d) for d in data.shape)
    return f"[chainrule.{name} [{dims}]]"


def _op_name(node: Node) -> str:
    """PyTorch's name of the producing op: its node's without ``Backward`` and a trailing 0
    (``MulBackward0`` -> ``Mul``, ``ClampBackward1`` -> ``Clamp1``, ``TBackward1`` -> ``T1``)."""
    return re.sub(r"Backward(0?)(\d*)$", r"\2", node.name())


def _message(data: np.ndarray, producer: str, now: int, expected: int, where: str | None) -> str:
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {describe(data)}{producer} is at version {now}; expected version "
        f"{expected} instead. {_HINT}"
    )
    if where:
        # Beyond PyTorch: say where, so nobody has to re-run under anomaly mode to find it.
        message += f" The tensor was last modified in place at {where}."
    return message


def _where(counter: list[Any]) -> str | None:
    return counter[1] if len(counter) > 1 else None


def modified_error(t: Tensor, node: Node, now: int, expected: int) -> RuntimeError:
    """A saved input of ``node`` changed version since it was saved. A view names its current
    history, as PyTorch's message does (regenerated as ``AsStrided`` once its base changed)."""
    if t._base is not None:
        refresh_view(t, check=False)
    fn = t._grad_node
    producer = f", which is output {t._output_nr} of {_op_name(fn)}," if fn is not None else ""
    return RuntimeError(_message(t._data, producer, now, expected, _where(t._vc)))


def modified_output_error(
    data: np.ndarray, node: Node, now: int, expected: int, counter: list[Any] | None = None
) -> RuntimeError:
    """The saved output of ``node`` changed version since it was saved."""
    where = _where(counter) if counter is not None else None
    return RuntimeError(
        _message(data, f", which is output 0 of {_op_name(node)},", now, expected, where)
    )
