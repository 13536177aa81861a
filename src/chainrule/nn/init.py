"""``nn.init``: fill tensors in place with PyTorch's initialisation distributions.

Each function writes into the tensor's array under ``no_grad`` (bumping its version counter, as
an in-place op does) and returns the tensor. The distributions and the draws are PyTorch's:
after the same ``manual_seed`` the values are PyTorch's (``orthogonal_``'s QR aside, which is
LAPACK's through NumPy).

Example:
    >>> import chainrule as torch
    >>> w = torch.empty(2, 3)
    >>> torch.nn.init.constant_(w, 0.5)
    tensor([[0.5000, 0.5000, 0.5000],
            [0.5000, 0.5000, 0.5000]])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._overrides import handle_torch_function, has_torch_function_variadic
from .._tensor import Tensor
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ..ops import random_streams
from ..ops.creation import Generator, default_generator
from ..ops.inplace import bump_version
from ..ops.nn_ops._common import scalar_name
from .parameter import UninitializedTensorMixin

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]


def _rng(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator).rng


def _write(tensor: Tensor, values: Any) -> Tensor:
    if MUTATION_WATCH:
        clone_saved_before_write(tensor)  # (allow_mutation_on_saved_tensors)
    tensor._data[...] = values
    bump_version(tensor)
    return tensor


def _first_use(tensor: Tensor, method: str, *args: Any) -> None:
    """The Tensor method through which PyTorch's init function first reaches ``tensor``: on an
    uninitialized parameter or buffer it raises PyTorch's ValueError naming that method."""
    if isinstance(tensor, UninitializedTensorMixin):
        getattr(tensor, method)(*args)


def _sampled(tensor: Tensor, kernel: str) -> None:
    """PyTorch samples only floating tensors: its kernel's NotImplementedError otherwise."""
    kind = tensor._data.dtype.kind
    if kind not in "fcV":  # (V: bfloat16)
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_name(tensor._data.dtype)}'"
        )


def _number(value: float) -> str:
    """A double as PyTorch's messages print it (C++ stream: 6 significant digits)."""
    return format(value, "g")


def _uniform_values(tensor: Tensor, a: float, b: float, rng: np.random.Generator) -> Any:
    _sampled(tensor, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_number(a)} > "
            f"to={_number(b)}"
        )
    data = tensor._data
    return random_streams.uniform(rng, data.shape, data.dtype, a, b, data.strides)


def _normal_values(
    tensor: Tensor,
    mean: float,
    std: float,
    rng: np.random.Generator,
    shape: tuple[int, ...] | None = None,
) -> Any:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_number(std)}")
    _sampled(tensor, "normal_kernel_cpu")
    shape = tensor._data.shape if shape is None else shape
    strides = tensor._data.strides if shape == tensor._data.shape else None
    return random_streams.normal(rng, shape, tensor._data.dtype, mean, std, strides)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``relu``: sqrt(2), ``tanh``: 5/3 ...)."""
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    )
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int | float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with values from U(a, b)."""
    if has_torch_function_variadic(tensor):
        return handle_torch_function(
            uniform_, (tensor,), tensor=tensor, a=a, b=b, generator=generator
        )
    return _write(tensor, _uniform_values(tensor, a, b, _rng(generator)))


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill with values from N(mean, std^2)."""
    if has_torch_function_variadic(tensor):
        return handle_torch_function(
            normal_, (tensor,), tensor=tensor, mean=mean, std=std, generator=generator
        )
    return _write(tensor, _normal_values(tensor, mean, std, _rng(generator)))


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill with N(mean, std^2) values truncated to [a, b], sampled as PyTorch does: when the
    interval holds more than 30% of the mass, normal draws redrawn until inside; otherwise
    uniform draws on [a, b] accepted with the density's ratio to its peak (so a mean far
    outside [a, b] does not redraw forever)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=2,
        )
    rng = _rng(generator)

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    mass = cdf((b - mean) / std) - cdf((a - mean) / std)
    if mass > 0.3:
        _first_use(tensor, "new_tensor", a)
    else:
        _first_use(tensor, "uniform_")
    data = tensor._data
    dtype = data.dtype

    def normals() -> np.ndarray:
        return random_streams.normal(rng, data.shape, dtype, mean, std, data.strides)

    def uniforms(low: float, high: float) -> np.ndarray:
        return random_streams.uniform(rng, data.shape, dtype, low, high, data.strides)

    def log_density_over_peak(values: np.ndarray) -> np.ndarray:
        # PyTorch's in-place chain, each step computed in float32 (float64 for float64)
        # with the number unrounded, then rounded to the tensor's dtype:
        # sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        work = np.float64 if dtype == np.float64 else np.float32
        out = values
        for step in (
            lambda x: x - work(mean),
            lambda x: x / work(std),
            lambda x: x * x,
            lambda x: x * work(-0.5),
            lambda x: x - work(log_peak),
        ):
            out = step(out.astype(work)).astype(dtype)
        return out

    def rejected(candidates: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(uniforms(0.0, 1.0)) > log_density_over_peak(candidates)

    if mass > 0.3:
        # Normal draws, every rejected element redrawn from a whole new draw, as PyTorch's
        # torch.where(mask, empty_like(result).normal_(), result); the bounds in the tensor's
        # dtype, so the test agrees with the stored values.
        low, high = (np.asarray(bound, dtype).item() for bound in (a, b))
        _sampled(tensor, "normal_kernel_cpu")
        values = normals()
        outside = (values < low) | (values > high)
        while outside.any():
            values = np.where(outside, normals(), values)
            outside = (values < low) | (values > high)
        return _write(tensor, values)
    # Uniform candidates on [a, b], each accepted with the density's ratio to its peak.
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    values = _uniform_values(tensor, a, b, rng)
    pending = rejected(values)
    while pending.any():
        candidates = uniforms(a, b)
        values = np.where(pending, candidates, values)
        pending = np.where(pending, rejected(candidates), pending)
    return _write(tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    if has_torch_function_variadic(tensor):
        return handle_torch_function(constant_, (tensor,), tensor=tensor, val=val)
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    _first_use(tensor, "fill_", 1.0)
    return _write(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    _first_use(tensor, "zero_")
    return _write(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (2-D tensors)."""
    _first_use(tensor, "dim")
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor._data.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta (a convolution that keeps its input's channels)."""
    _first_use(tensor, "dim")
    dims = tensor._data.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._data.shape
    if sizes[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _write(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    _first_use(tensor, "dim")
    shape = tensor._data.shape
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He). ``Linear`` and ``Conv``
    initialise their weights with ``a=sqrt(5)``, which gives ``bound = 1 / sqrt(fan_in)``."""
    if has_torch_function_variadic(tensor):
        return handle_torch_function(
            kaiming_uniform_,
            (tensor,),
            tensor=tensor,
            a=a,
            mode=mode,
            nonlinearity=nonlinearity,
            generator=generator,
        )
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Generator | None = None,
) -> Tensor:
    """N(0, std^2) with ``std = gain / sqrt(fan)`` (He)."""
    if 0 in tensor.shape:  # (an uninitialized parameter's shape is PyTorch's RuntimeError)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one."""
    _first_use(tensor, "dim")
    shape = tensor._data.shape
    if len(shape) < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._data.size == 0:
        return tensor
    rows = shape[0]
    cols = tensor._data.size // rows
    flat = _normal_values(tensor, 0, 1, _rng(generator), (rows, cols))
    if tensor._data.dtype.itemsize == 2:  # PyTorch's QR has no float16/bfloat16 kernel
        raise NotImplementedError(
            f"\"geqrf_cpu\" not implemented for '{scalar_name(tensor._data.dtype)}'"
        )
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(shape))


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """N(0, std^2) values with a fraction ``sparsity`` of each column set to zero."""
    _first_use(tensor, "dim")
    if tensor._data.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    zeros = math.ceil(sparsity * rows)
    values = _normal_values(tensor, 0, std, _rng(generator))
    for col in range(cols):
        # (PyTorch draws the rows to zero from the default generator, whatever ``generator``)
        values[random_streams.permutation(default_generator.rng, rows)[:zeros], col] = 0
    return _write(tensor, values)


def _deprecated(method: Any) -> Any:
    """PyTorch's old name without the underscore: the same function, with its FutureWarning."""
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return method(*args, **kwargs)

    deprecated_init.__doc__ = f"``{new_name}`` under its deprecated name (a FutureWarning)."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
