"""``TorchVersion``: a version string that compares as a version (``"2.13.0" > "2.9"``), as
``torch.__version__`` does, so PyTorch programs' version checks work under chainrule."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["PYTORCH_API_VERSION", "TorchVersion"]

#: The PyTorch release whose API and behaviour chainrule reproduces; ``torch.__version__``
#: under ``install_as_torch()`` / ``python -m chainrule run``.
PYTORCH_API_VERSION = "2.13.0+chainrule"

_VERSION = re.compile(
    r"^v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|b|rc|alpha|beta|c)[-_.]?(?P<pre_n>\d*))?"
    r"(?:[-_.]?post[-_.]?(?P<post>\d*))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


class _InvalidVersion(ValueError):
    pass


def _key(text: str) -> tuple:
    """A sort key ordering versions as PEP 440 does (dev < pre-release < release < post;
    a local label sorts after the same version without one)."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise _InvalidVersion(text)
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    if match["pre"] is not None:
        phase: tuple = (1, _PRE_RANK[match["pre"].lower()], int(match["pre_n"] or 0))
    elif match["post"] is not None:
        phase = (3, int(match["post"] or 0), 0)
    elif match["dev"] is not None:
        phase = (0, 0, 0)
    else:
        phase = (2, 0, 0)
    dev = int(match["dev"] or 0) if match["dev"] is not None else float("inf")
    local = tuple(
        (1, int(p), "") if p.isdigit() else (0, 0, p.lower())
        for p in re.split(r"[-_.]", match["local"] or "")
        if p
    )
    return (int(match["epoch"] or 0), tuple(release), phase, dev, local)


def _other_key(other: Any) -> tuple:
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, Iterable):
        return _key(".".join(str(item) for item in other))
    raise _InvalidVersion(other)


class TorchVersion(str):
    """A ``str`` whose comparisons with version strings or tuples compare versions.

    Example:
        >>> v = TorchVersion("2.13.0")
        >>> v >= "2.9", v >= (2, 13), v < "2.13.1"
        (True, True, True)
    """

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> Any:
        try:
            ours, theirs = _key(self), _other_key(other)
        except _InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(ours, method)(theirs)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, "__gt__")

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, "__lt__")

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, "__ge__")

    def __le__(self, other: Any) -> Any:
        return self._compare(other, "__le__")

    def __eq__(self, other: Any) -> Any:
        return self._compare(other, "__eq__")

    def __ne__(self, other: Any) -> Any:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = str.__hash__


__version__ = TorchVersion(PYTORCH_API_VERSION)
