"""The small ``torch.func`` utilities: ``functionalize`` (chainrule runs mutations eagerly, so
the function is returned as it computes), ``debug_unwrap`` (the value under ``vmap``'s batched
tensors) and ``replace_all_batch_norm_modules_`` (batch norm without running statistics, for
``vmap`` over models)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ._batched import BatchedTensor

__all__ = ["debug_unwrap", "functionalize", "replace_all_batch_norm_modules_"]


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` with its in-place operations "removed" (PyTorch traces it into out-of-place
    operations and copies mutations of the inputs back). chainrule has no functionalization
    pass: the returned function runs ``func`` as it is, which gives the same results, inputs
    mutated the same way.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import functionalize
        >>> functionalize(lambda x: x.add_(1) * 2)(torch.ones(2))
        tensor([4., 4.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under a ``vmap`` batched tensor (with ``recurse``, under every level; else one
    level); any other tensor as it is.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import debug_unwrap, vmap
        >>> vmap(lambda x: debug_unwrap(x).shape and x)(torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    while type(tensor) is BatchedTensor:
        tensor = tensor._value
        if not recurse:
            break
    return tensor


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every batch-norm module in ``root`` use batch statistics only (no running mean and
    variance, ``track_running_stats=False``), in place; returns ``root``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.func import replace_all_batch_norm_modules_
        >>> m = replace_all_batch_norm_modules_(torch.nn.Sequential(torch.nn.BatchNorm1d(3)))
        >>> m[0].running_mean is None, m[0].track_running_stats
        (True, False)
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
