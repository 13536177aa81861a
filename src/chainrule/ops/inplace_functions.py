"""The ``torch.<name>_(input, ...)`` functions: ``torch.exp_(x)`` is ``x.exp_()``.

PyTorch exposes many in-place methods at the top level too; each here calls the Tensor method
(looked up when called, so it is the one ops/__init__.py attached), after PyTorch's check that
``input`` is a tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor

# The in-place methods PyTorch also has as ``torch.<name>``.
_NAMES = (
    "abs_",
    "addmv_",
    "acos_",
    "acosh_",
    "arccos_",
    "arccosh_",
    "arcsin_",
    "arcsinh_",
    "arctan_",
    "arctanh_",
    "as_strided_",
    "asin_",
    "asinh_",
    "atan_",
    "atanh_",
    "ceil_",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "cos_",
    "cosh_",
    "deg2rad_",
    "detach_",
    "erf_",
    "erfc_",
    "exp2_",
    "exp_",
    "expm1_",
    "fill_",
    "fix_",
    "floor_",
    "frac_",
    "gcd_",
    "i0_",
    "lcm_",
    "ldexp_",
    "index_put_",
    "log10_",
    "log1p_",
    "log2_",
    "log_",
    "logit_",
    "nan_to_num_",
    "neg_",
    "negative_",
    "rad2deg_",
    "reciprocal_",
    "relu_",
    "resize_as_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sinc_",
    "sinh_",
    "sqrt_",
    "square_",
    "tan_",
    "tanh_",
    "trunc_",
    "xlogy_",
    "zero_",
)

__all__ = list(_NAMES)


def _function(name: str) -> Callable[..., Tensor]:
    def in_place(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    in_place.__name__ = in_place.__qualname__ = name
    in_place.__doc__ = f"``input.{name}(...)``: writes the result into ``input``."
    return in_place


globals().update({name: _function(name) for name in _NAMES})
