"""``chainrule.utils.dlpack``: tensors to and from DLPack, zero-copy, as ``torch.utils.dlpack``.

>>> import chainrule as torch, numpy as np
>>> a = np.arange(3.0)
>>> t = torch.from_dlpack(a)      # shares a's memory
>>> a[0] = 5.0
>>> t
tensor([5., 1., 2.], dtype=chainrule.float64)
>>> np.from_dlpack(t) is not None # and back, still the same memory
True
"""

from __future__ import annotations

from typing import Any

from .._dlpack import DLDeviceType, export, import_array
from .._size import device as Device
from .._tensor import Tensor, wrap
from ..autograd.node import type_name

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (``torch.utils.dlpack.to_dlpack``).

    Unlike ``tensor.__dlpack__()``, it exports a tensor that requires grad (its data), as
    PyTorch's does. The capsule can be consumed once.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not {type_name(tensor)}"
        )
    return export(tensor._data)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of a DLPack producer (a NumPy array, a PyTorch or JAX
    tensor, anything with ``__dlpack__``) or of a capsule from ``to_dlpack``.

    The tensor is a new leaf that does not require grad; writes to it show in the producer's
    array and the other way round, unless ``copy=True``. bfloat16, bool, float16 and complex
    data come through with their types.

    Example:
        >>> import chainrule as torch, numpy as np
        >>> torch.from_dlpack(np.array([True, False]))
        tensor([ True, False])
    """
    if device is not None:
        target = Device(device) if not isinstance(device, Device) else device
        if target.type == "cuda":
            raise AssertionError("Torch not compiled with CUDA enabled")
        if target.type != "cpu":
            raise BufferError(f"Cannot pack tensors on {target.type}")
    return wrap(import_array(ext_tensor, copy=copy))
