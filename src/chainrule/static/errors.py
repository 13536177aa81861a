"""TensorFlow's run-time errors (``tf.errors``): an ``OpError`` names the node that failed."""

from __future__ import annotations

from typing import Any

__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError", "NotFoundError"]


class OpError(Exception):
    """An error raised while a session ran the graph; ``op`` is the operation that failed."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(OpError):
    """An operation got an argument it cannot take (an unfed placeholder, a bad shape)."""


class FailedPreconditionError(OpError):
    """The graph's state does not allow the operation (an uninitialized variable)."""


class NotFoundError(OpError):
    """Something the operation looks up does not exist."""
