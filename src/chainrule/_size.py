"""``Size`` (a tuple of ints that prints like PyTorch's) and ``device`` (always the CPU here)."""

from __future__ import annotations

import math

__all__ = ["Size", "device", "CPU"]


class Size(tuple):
    """The shape of a tensor: a tuple of ints, e.g. ``chainrule.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"chainrule.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)

    def __getitem__(self, key):  # type: ignore[override]
        result = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other: tuple) -> Size:  # type: ignore[override]
        return Size(tuple.__add__(self, tuple(other)))


class device:  # noqa: N801 - PyTorch's public name
    """A device; only ``cpu`` exists in chainrule (the backend seam allows others later)."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        name = str(type)
        if ":" in name:
            name, _, idx = name.partition(":")
            index = int(idx)
        if name != "cpu":
            raise RuntimeError(
                f"chainrule runs on the CPU only; device '{name}' is not available"
            )
        self.type = name
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")
