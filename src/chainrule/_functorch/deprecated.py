"""functorch's transforms: ``torch.func``'s, each warning first, as PyTorch's, that
``functorch.<name>`` is deprecated (a FutureWarning naming its replacement)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .. import func as _func
from . import make_functional as _nn_impl

__all__ = [
    "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
    "functionalize", "make_functional", "make_functional_with_buffers",
    "combine_state_for_ensemble",
]  # fmt: skip


def _warn(api: str, new_api: str | None = None) -> None:
    """PyTorch's FutureWarning for ``functorch.<api>``, pointing at the caller's caller."""
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
        "release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html",
        FutureWarning,
        stacklevel=3,
    )


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``torch.vmap`` (deprecated as ``functorch.vmap``)."""
    _warn("vmap", "torch.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """``torch.func.grad`` (deprecated as ``functorch.grad``)."""
    _warn("grad")
    return _func.grad(func, argnums, has_aux)


def grad_and_value(
    func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``torch.func.grad_and_value`` (deprecated as ``functorch.grad_and_value``)."""
    _warn("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``torch.func.vjp`` (deprecated as ``functorch.vjp``)."""
    _warn("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``torch.func.jvp`` (deprecated as ``functorch.jvp``)."""
    _warn("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(
    func: Callable[..., Any],
    argnums: Any = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """``torch.func.jacrev`` (deprecated as ``functorch.jacrev``)."""
    _warn("jacrev")
    return _func.jacrev(
        func,
        argnums,
        has_aux=has_aux,
        chunk_size=chunk_size,
        _preallocate_and_copy=_preallocate_and_copy,
    )


def jacfwd(
    func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable[..., Any]:
    """``torch.func.jacfwd`` (deprecated as ``functorch.jacfwd``)."""
    _warn("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """``torch.func.hessian`` (deprecated as ``functorch.hessian``)."""
    _warn("hessian")
    return _func.hessian(func, argnums=argnums)


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``torch.func.functionalize`` (deprecated as ``functorch.functionalize``)."""
    _warn("functionalize")
    return _func.functionalize(func, remove=remove)


def make_functional(model: Any, disable_autograd_tracking: bool = False) -> Any:
    """``(func, params)`` (deprecated: ``torch.func.functional_call``)."""
    _warn("make_functional", "torch.func.functional_call")
    return _nn_impl.make_functional(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Any, disable_autograd_tracking: bool = False) -> Any:
    """``(func, params, buffers)`` (deprecated: ``torch.func.functional_call``)."""
    _warn("make_functional_with_buffers", "torch.func.functional_call")
    return _nn_impl.make_functional_with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Any) -> Any:
    """``(func, params, buffers)`` for an ensemble (deprecated:
    ``torch.func.stack_module_state``)."""
    _warn("combine_state_for_ensemble", "torch.func.stack_module_state")
    return _nn_impl.combine_state_for_ensemble(models)
