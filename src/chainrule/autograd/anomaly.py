"""Anomaly mode's records: the forward traceback of each node made while it is on (and, for
a node made by a backward pass, the node whose backward made it: its parent), and the warnings
that show them when that node's backward fails."""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import traceback
import warnings
import weakref
from collections.abc import Iterator

from .node import Node

__all__ = ["record_trace", "forward_trace", "warn_error_in", "running"]

_TRACES: weakref.WeakKeyDictionary[Node, str] = weakref.WeakKeyDictionary()
_PARENTS: weakref.WeakKeyDictionary[Node, weakref.ref[Node]] = weakref.WeakKeyDictionary()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The node whose backward the engine is running in anomaly mode in this thread (None outside).
_RUNNING: contextvars.ContextVar[Node | None] = contextvars.ContextVar(
    "chainrule_anomaly_running_node", default=None
)


@contextlib.contextmanager
def running(node: Node) -> Iterator[None]:
    """While the engine runs ``node`` in anomaly mode: nodes made meanwhile get it as parent."""
    token = _RUNNING.set(node)
    try:
        yield
    finally:
        _RUNNING.reset(token)


def record_trace(node: Node) -> None:
    """Remember where ``node`` was created: the user's frames, chainrule's own left out."""
    frames = [
        frame for frame in traceback.extract_stack()[:-1]
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR)
    ]
    _TRACES[node] = "".join(traceback.format_list(frames))
    parent = _RUNNING.get()
    if parent is not None:
        _PARENTS[node] = weakref.ref(parent)


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
    _warn(message)
    # Then each node whose backward made the previous one (create_graph), as PyTorch does.
    seen = {id(node)}
    parent_ref = _PARENTS.get(node)
    parent = None if parent_ref is None else parent_ref()
    while parent is not None and id(parent) not in seen:
        seen.add(id(parent))
        trace = forward_trace(parent)
        if trace is None:
            _warn(
                f"\n\nPrevious calculation was induced by {parent.name()}. No forward pass "
                "information available. Enable detect anomaly during forward pass for more "
                "information."
            )
        else:
            _warn(
                f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward "
                f"call that induced the previous calculation:\n{trace}"
            )
        parent_ref = _PARENTS.get(parent)
        parent = None if parent_ref is None else parent_ref()


def _warn(message: str) -> None:
    try:
        warnings.warn(message, UserWarning, stacklevel=3)
    except Warning as warning:
        print(f"{type(warning).__name__}: {warning}", file=sys.stderr)
