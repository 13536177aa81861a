"""Where the user's code is on the call stack: the first frame outside this package.

Warnings point there (PyTorch's point at the user's line, not at library internals), and the
in-place error names the file and line of the write.
"""

from __future__ import annotations

import sys
from types import FrameType

_PACKAGE = __name__.rsplit(".", 1)[0] + "."


def _is_ours(frame: FrameType) -> bool:
    return frame.f_globals.get("__name__", "").startswith(_PACKAGE)


def user_frame() -> FrameType | None:
    """The innermost frame on the stack that is not chainrule's (None if there is none)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_ours(frame):
        frame = frame.f_back
    return frame


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` called by the caller of this
    function point at the user's frame."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_ours(frame):
        frame = frame.f_back
        level += 1
    return level


def is_ours(frame: FrameType) -> bool:
    """Whether ``frame`` runs chainrule's code."""
    return _is_ours(frame)
