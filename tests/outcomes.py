"""Run the same code under chainrule and PyTorch and compare what happened: the value's text,
or the exception's type and message (``chainrule`` read as ``torch``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chainrule

from .conftest import normalise_output, torch


def outcome(fn: Callable[[Any], Any], lib: Any) -> tuple[str, str]:
    """``("ok", str(value))`` or ``(exception type, message)`` of ``fn(lib)``."""
    try:
        value = fn(lib)
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error).replace("chainrule", "torch")
    return "ok", str(value).replace("chainrule", "torch")


def same_outcome(fn: Callable[[Any], Any]) -> None:
    """``fn(chainrule)`` does what ``fn(torch)`` does: same value, or same error."""
    assert outcome(fn, chainrule) == outcome(fn, torch)


def attempt(run: Callable[[], Any], describe: Callable[[Any], Any] = lambda value: value) -> tuple:
    """``("ok", describe(run()))``, or ``(exception type, message)`` with chainrule's names read
    as torch's (for comparing one library's run with the other's)."""
    try:
        value = run()
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, normalise_output(str(error))
    return "ok", describe(value)
