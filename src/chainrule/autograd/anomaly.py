"""Anomaly mode's records: the forward traceback of each node made while it is on."""

from __future__ import annotations

import traceback
import weakref

from .node import Node

__all__ = ["record_trace", "forward_trace"]

_TRACES: weakref.WeakKeyDictionary[Node, str] = weakref.WeakKeyDictionary()


def record_trace(node: Node) -> None:
    """Remember where ``node`` was created (called by the op machinery in anomaly mode)."""
    _TRACES[node] = "".join(traceback.format_stack()[:-3])


def forward_trace(node: Node) -> str | None:
    """The forward traceback recorded for ``node``, if anomaly mode was on when it was made."""
    return _TRACES.get(node)
