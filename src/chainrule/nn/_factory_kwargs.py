"""``nn.factory_kwargs``: the ``device``/``dtype``/``memory_format`` keyword arguments a module
passes on to the tensor factories, checked as PyTorch checks them."""

from __future__ import annotations

from typing import Any

__all__ = ["factory_kwargs"]

_SIMPLE_KEYS = ("device", "dtype", "memory_format")


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The factory keyword arguments among ``kwargs`` (those named directly and those in its
    ``factory_kwargs`` entry), as one dict; a TypeError for any other key or one given twice.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.factory_kwargs({"dtype": torch.float64})
        {'dtype': chainrule.float64}
    """
    if kwargs is None:
        return {}
    expected = set(_SIMPLE_KEYS) | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE_KEYS:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
