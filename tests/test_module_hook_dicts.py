"""A module's hook dicts are OrderedDicts as PyTorch's: they print as ``OrderedDict()`` and
``OrderedDict([(id, fn)])``, keep registration order (``prepend=True`` first), and forget a
removed hook, against PyTorch."""

from __future__ import annotations

import collections
import re
from typing import Any

import torch

import chainrule

HOOK_DICTS = [
    "_backward_pre_hooks", "_backward_hooks", "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called", "_state_dict_pre_hooks", "_state_dict_hooks",
]  # fmt: skip


def _first(*args: Any) -> None:
    return None


def _second(*args: Any) -> None:
    return None


def _shown(lib: Any) -> list[str]:
    m = lib.nn.Linear(1, 1)
    seen = [f"{name}={getattr(m, name)!r}" for name in HOOK_DICTS]
    first = m.register_forward_pre_hook(_first)
    m.register_forward_pre_hook(_second, prepend=True)
    m.register_forward_hook(_first, with_kwargs=True, always_call=True)
    m.register_full_backward_hook(_second)
    seen += [f"{name}={getattr(m, name)!r}" for name in HOOK_DICTS]
    first.remove()
    seen.append(repr(m._forward_pre_hooks))
    seen.append(str(isinstance(m._forward_hooks, collections.OrderedDict)))
    # Hook ids come from one counter per process: number them in order of appearance.
    ids: dict[str, str] = {}
    text = "\n".join(seen)
    text = re.sub(r" at 0x[0-9a-f]+", "", text)
    return [
        re.sub(r"\((\d+),", lambda g: f"(#{ids.setdefault(g[1], str(len(ids)))},", line)
        for line in text.split("\n")
    ]


def test_hook_dicts_print_as_pytorch() -> None:
    assert _shown(chainrule) == _shown(torch)
