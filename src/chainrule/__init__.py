"""chainrule: PyTorch's dynamic computational graph and autograd, as readable Python on NumPy.

Use it as you would use PyTorch::

    import chainrule as torch

    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)
    y = torch.mul(torch.add(w, x), torch.add(w, 1))
    y.backward()
    print(w.grad)        # tensor([5.])
"""

from __future__ import annotations

from . import _dtype, autograd, nn  # noqa: E402, I001 - after the ops they use
from ._dtype import (
    bfloat16,
    bool,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from ._size import Size, device
from ._tensor import Tensor
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.variable import legacy_tensor_type as _legacy
from .ops import activation as _activation
from .ops import copying as _copying
from .ops import linalg as _linalg
from .ops import pointwise as _pointwise
from .ops import reduction as _reduction
from .ops import shape as _shape
from .ops.activation import log_softmax, softmax
from .ops.copying import clone
from .ops.creation import (
    Generator,
    arange,
    as_tensor,
    asarray,
    bernoulli,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    scalar_tensor,
    seed,
    set_rng_state,
    tensor,
    tril_indices,
    triu_indices,
    zeros,
    zeros_like,
)
from .ops.linalg import addmm, bmm, dot, inner, matmul, mm, mv, outer, vdot
from .ops.pointwise import *  # noqa: F403 - the element-wise ops are torch's top-level names
from .ops.reduction import mean, sum
from .ops.shape import (
    broadcast_to,
    flatten,
    moveaxis,
    movedim,
    permute,
    reshape,
    squeeze,
    swapaxes,
    swapdims,
    t,
    transpose,
    unflatten,
    unsqueeze,
)

__version__ = "0.1.0"

FloatTensor = _legacy("FloatTensor", float32)
DoubleTensor = _legacy("DoubleTensor", float64)
HalfTensor = _legacy("HalfTensor", float16)
LongTensor = _legacy("LongTensor", int64)
IntTensor = _legacy("IntTensor", int32)
ShortTensor = _legacy("ShortTensor", int16)
CharTensor = _legacy("CharTensor", int8)
ByteTensor = _legacy("ByteTensor", uint8)
BoolTensor = _legacy("BoolTensor", bool)

strided = "chainrule.strided"
contiguous_format = "chainrule.contiguous_format"
preserve_format = "chainrule.preserve_format"
channels_last = "chainrule.channels_last"


def is_tensor(obj: object) -> builtins_bool:
    """Whether ``obj`` is a chainrule Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> builtins_int:
    """The number of elements of ``input``."""
    return input.numel()


def is_floating_point(input: Tensor) -> builtins_bool:
    """Whether ``input`` has a floating dtype."""
    return input.is_floating_point()


def is_complex(input: Tensor) -> builtins_bool:
    """Whether ``input`` has a complex dtype."""
    return input.is_complex()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``."""
    return input.detach()


builtins_bool = type(True)
builtins_int = type(0)
