"""``resize_`` growing a storage looks for the tensors on it among the live objects: it reads
only Tensor's own ``_data`` slot, so a live object whose attribute access raises (a Tensor
subclass with its own ``__getattribute__``, a proxy whose ``__class__`` raises) neither breaks
the resize nor runs; the tensors on the grown storage move with it, as PyTorch's share it."""

from __future__ import annotations

from typing import Any

import chainrule

from .conftest import torch


class _Proxy:
    """An object whose every attribute access (``__class__`` included) raises while armed."""

    armed = False

    def __getattribute__(self, name: str) -> Any:
        if type.__getattribute__(_Proxy, "armed"):
            raise RuntimeError(f"touched {name}")
        return object.__getattribute__(self, name)


def _run(lib) -> tuple[Any, ...]:
    class Watched(lib.Tensor):
        armed = False

        def __getattribute__(self, name: str) -> Any:
            if type.__getattribute__(Watched, "armed"):
                raise RuntimeError(f"touched {name}")
            return super().__getattribute__(name)

    watched = lib.ones(2).as_subclass(Watched)
    proxy = _Proxy()
    x = lib.tensor([1.0, 2.0])
    view = x[1:]
    Watched.armed = _Proxy.armed = True
    try:
        x.resize_(6)
    finally:
        Watched.armed = _Proxy.armed = False
    x[1] = 5.0  # (the view shares the grown storage)
    return x[:2].tolist(), view.tolist(), watched.tolist(), type(proxy).__name__


def test_resize_reads_only_tensor_slots() -> None:
    assert _run(chainrule) == _run(torch)
