"""Anomaly mode's records: the forward traceback of each node made while it is on, and the
warning that shows it when that node's backward fails."""

from __future__ import annotations

import os
import sys
import traceback
import warnings
import weakref

from .node import Node

__all__ = ["record_trace", "forward_trace", "warn_error_in"]

_TRACES: weakref.WeakKeyDictionary[Node, str] = weakref.WeakKeyDictionary()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record_trace(node: Node) -> None:
    """Remember where ``node`` was created: the user's frames, chainrule's own left out."""
    frames = [
        frame for frame in traceback.extract_stack()[:-1]
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)
    ]
    _TRACES[node] = "".join(traceback.format_list(frames))


def forward_trace(node: Node) -> str | None:
    """The forward traceback recorded for ``node``, if anomaly mode was on when it was made."""
    return _TRACES.get(node)


def warn_error_in(node: Node) -> None:
    """PyTorch's warning naming the node whose backward failed, with its forward traceback.
    When warnings are errors, it is printed to stderr instead, as PyTorch does, so that the
    backward's own error is the one raised."""
    trace = forward_trace(node)
    if trace is None:  # the node was made outside anomaly mode
        message = (
            f"Error detected in {node.name()}. No forward pass information available. Enable "
            "detect anomaly during forward pass for more information."
        )
    else:
        message = (
            f"Error detected in {node.name()}. Traceback of forward call that caused the "
            f"error:\n{trace}"
        )
    try:
        warnings.warn(message, UserWarning, stacklevel=2)
    except Warning as warning:
        print(f"{type(warning).__name__}: {warning}", file=sys.stderr)
