"""``Size`` (a tuple of ints that prints like PyTorch's) and ``device`` (always the CPU here)."""

from __future__ import annotations

import math
from typing import Any, SupportsIndex, overload

from ._dtype import REPR_NAMESPACE

__all__ = [
    "Size", "device", "CPU", "META_DEVICE", "check_available", "DEFAULT_DEVICE", "targets_meta",
]


class Size(tuple[int, ...]):
    """The shape of a tensor: a tuple of ints, e.g. ``chainrule.Size([2, 3])``.

    Slicing, ``+`` and ``*`` give a ``Size`` again, as in PyTorch. (Elements are not checked
    to be ints: ``tensor.shape`` builds one per call, and a check would triple its cost.)

    Example:
        >>> import chainrule as torch
        >>> torch.Size([2, 3]) + (4,)
        chainrule.Size([2, 3, 4])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{REPR_NAMESPACE[0]}.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> Size: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | Size:
        result: Any = tuple.__getitem__(self, key)
        return Size(result) if isinstance(key, slice) else result

    def __add__(self, other: tuple) -> Size:  # type: ignore[override]
        if not isinstance(other, tuple):
            raise TypeError(
                f"can only concatenate tuple (not {type(other).__name__}) to chainrule.Size"
            )
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, times: Any) -> Size:  # type: ignore[override]
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__


# Device types PyTorch knows (only "cpu" can hold chainrule tensors).
_DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
    "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)


class device:  # noqa: N801 - PyTorch's public name
    """A device such as ``device('cpu')``; tensors can only live on the CPU in chainrule (the
    backend seam allows others later), but any device PyTorch knows can be named.

    Example:
        >>> import chainrule as torch
        >>> torch.device("cpu:0")
        device(type='cpu', index=0)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if isinstance(type, int):  # an accelerator index, as in device(0)
            raise RuntimeError("Cannot access accelerator device when none is available.")
        name = str(type)
        if ":" in name:
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in _DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
                f"string: {name}"
            )
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = name
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        # As in PyTorch, a device never equals a string: ``device('cpu') == 'cpu'`` is False.
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device("meta"):`` makes it the default device of the factories inside
        (``torch.ones(2)``, a module's parameters), as PyTorch's device context."""
        check_available(self)
        _ENTERED.append(DEFAULT_DEVICE[0])
        DEFAULT_DEVICE[0] = self
        return self

    def __exit__(self, *exc_info: Any) -> None:
        DEFAULT_DEVICE[0] = _ENTERED.pop() if _ENTERED else None


CPU = device("cpu")
META_DEVICE = device("meta")

#: The device factories make tensors on when given none (None: the CPU), set by
#: ``set_default_device`` and ``with torch.device(...)``.
DEFAULT_DEVICE: list[device | None] = [None]
_ENTERED: list[device | None] = []


def targets_meta(where: Any) -> bool:
    """Whether a factory given ``device=where`` makes a meta tensor (``where`` None: the
    default device's); raises PyTorch's errors for a device that is not available."""
    if where is None:
        where = DEFAULT_DEVICE[0]
        if where is None:
            return False
    if where is CPU or where == "cpu":
        return False
    if where is META_DEVICE or where == "meta":
        return True
    check_available(where)
    return device(where).type == "meta"


def check_available(where: Any) -> None:
    """Raise unless ``where`` (a device or its name) is the CPU or the meta device, with
    PyTorch's error for CUDA."""
    if where is None or where is CPU:
        return
    kind = device(where).type
    if kind == "cpu" or kind == "meta":
        return
    if kind == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    raise RuntimeError(f"chainrule runs on the CPU only; device '{kind}' is not available")
