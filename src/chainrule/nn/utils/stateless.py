"""``nn.utils.stateless.functional_call``: PyTorch's older name (deprecated since 2.0) for
``func.functional_call``, which it calls after the FutureWarning PyTorch gives."""

from __future__ import annotations

import warnings
from typing import Any

from ..._dtype import REPR_NAMESPACE
from ..._tensor import Tensor
from ...func._functional_call import functional_call as _functional_call
from ..modules.module import Module

__all__ = ["functional_call"]


def functional_call(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with the given tensors in place of its parameters and
    buffers (deprecated: ``func.functional_call`` is the same call).

    Example:
        >>> out = functional_call(model, {"weight": w}, (x,))  # doctest: +SKIP
    """
    ns = REPR_NAMESPACE[0]
    warnings.warn(
        f"`{ns}.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
        "removed in a future version of PyTorch. "
        f"Please use `{ns}.func.functional_call` instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
