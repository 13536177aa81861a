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

import importlib as _importlib
import math as _math
import types as _types

from . import (
    _C,
    _dtype,
    _overrides,
    autograd,
    backends,
    cuda,
    linalg,
    nn,
    optim,
    overrides,
    random,
    testing,
    utils,
)
from . import _return_types as return_types
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
    uint16,
    uint32,
    uint64,
)
from ._finfo import finfo, iinfo
from ._flags import (
    get_float32_matmul_precision,
    has_lapack,
    has_mkl,
    has_openmp,
    has_spectral,
    init_num_threads,
    is_warn_always_enabled,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_warn_always,
)
from ._printing import get_printoptions, printoptions, set_printoptions
from ._runtime import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_deterministic_debug_mode,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_deterministic_debug_mode,
    set_num_interop_threads,
    set_num_threads,
    use_deterministic_algorithms,
)
from ._size import Size, device
from ._tensor import Tensor
from .autograd import _functions as _autograd_functions  # Tensor.resize, resize_as
from .autograd import c_bindings as _c_bindings  # noqa: F401 (installs torch._C's autograd names)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .autograd.variable import legacy_tensor_type as _legacy
from .autograd.variable import set_default_tensor_type
from .nn._torch_namespace import *  # noqa: F403 - conv2d, batch_norm, max_pool2d, dropout ...
from .ops.activation import log_softmax, softmax
from .ops.combinatorics import *  # noqa: F403 - combinations, vander
from .ops.combining import *  # noqa: F403 - meshgrid, block_diag, broadcast_tensors ...
from .ops.complex_ops import *  # noqa: F403 - complex, polar, view_as_real, angle ...
from .ops.conjugate import *  # noqa: F403 - conj, is_conj, resolve_conj
from .ops.contractions import *  # noqa: F403 - einsum, tensordot, kron
from .ops.copying import clone
from .ops.counting import *  # noqa: F403 - unique, bincount, histc, searchsorted ...
from .ops.counting import _unique  # (PyTorch's private unique ops)
from .ops.counting import unique_all as _unique2
from .ops.covariance import *  # noqa: F403 - cov, corrcoef
from .ops.creation import *  # noqa: F403 - tensor(), zeros(), rand(), manual_seed() ...
from .ops.cumulative import *  # noqa: F403 - cummax, cummin, logcumsumexp
from .ops.differences import *  # noqa: F403 - diff, trapezoid, cumulative_trapezoid
from .ops.distances import *  # noqa: F403 - cdist
from .ops.distribution_sampling import *  # noqa: F403 - poisson, binomial, _standard_gamma ...
from .ops.divisibility import *  # noqa: F403 - gcd, lcm
from .ops.filling import *  # noqa: F403 - fill
from .ops.float_parts import *  # noqa: F403 - ldexp, frexp
from .ops.fused_products import *  # noqa: F403 - addmv, addr, baddbmm, addbmm
from .ops.histograms import *  # noqa: F403 - histogram, histogramdd
from .ops.index_reductions import *  # noqa: F403 - scatter_reduce, index_reduce
from .ops.index_writes import *  # noqa: F403 - index_copy, index_fill
from .ops.indexing import *  # noqa: F403
from .ops.inplace_functions import *  # noqa: F403 - abs_, exp_, clamp_ ... (torch.<name>_)
from .ops.linalg import *  # noqa: F403 - mm, matmul, ...
from .ops.linalg_decomp import *  # noqa: F403 - det, inverse, slogdet, matrix_power ...
from .ops.lookup import *  # noqa: F403 - isin, unravel_index
from .ops.masked_writes import *  # noqa: F403 - masked_scatter
from .ops.min_max import *  # noqa: F403 - aminmax
from .ops.order_statistics import *  # noqa: F403 - nanmedian, mode
from .ops.pointwise import *  # noqa: F403 - add, mul, exp, where, ...
from .ops.quantiles import *  # noqa: F403 - quantile, nanquantile
from .ops.queries import *  # noqa: F403 - is_signed, is_nonzero, typename ...
from .ops.rearranging import *  # noqa: F403 - rot90, take_along_dim, repeat_interleave ...
from .ops.reduction import *  # noqa: F403 - sum, mean, ...
from .ops.renorm import *  # noqa: F403 - renorm
from .ops.sampling import *  # noqa: F403 - bernoulli
from .ops.scatter_views import *  # noqa: F403 - select_scatter, slice_scatter ...
from .ops.shape import *  # noqa: F403 - reshape, transpose, cat, ...
from .ops.special_ops import *  # noqa: F403 - erfinv, lgamma, digamma, polygamma
from .ops.stft import *  # noqa: F403 - stft, istft
from .ops.unsafe_splits import *  # noqa: F403 - unsafe_split, unsafe_chunk ...
from .ops.view_copies import *  # noqa: F403 - t_copy, transpose_copy ...
from .ops.windows import *  # noqa: F403 - hann_window, hamming_window ...
from .serialization import load, save
from .utils.dlpack import from_dlpack

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None

__version__ = "0.1.0"

FloatTensor = _legacy("FloatTensor", float32)
DoubleTensor = _legacy("DoubleTensor", float64)
HalfTensor = _legacy("HalfTensor", float16)
BFloat16Tensor = _legacy("BFloat16Tensor", bfloat16)
LongTensor = _legacy("LongTensor", int64)
IntTensor = _legacy("IntTensor", int32)
ShortTensor = _legacy("ShortTensor", int16)
CharTensor = _legacy("CharTensor", int8)
ByteTensor = _legacy("ByteTensor", uint8)
BoolTensor = _legacy("BoolTensor", bool)

from ._strides import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)


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


builtins_bool = type(True)  # noqa: UP003 - `bool` is chainrule.bool in this module
builtins_int = type(0)  # noqa: UP003 - `int` is chainrule.int in this module

# The hand-written public functions hand a call with a __torch_function__ argument to it.
_overrides.make_namespace_overridable(globals(), list(globals()))

# torch.fft, torch.func, torch.special, torch.distributions: they need the namespace above
from . import _VF, distributions, fft, func, special  # noqa: E402
from ._torch_alias import install_as_torch  # noqa: E402
from .func import vmap  # noqa: E402 - torch.vmap is torch.func.vmap


def __getattr__(name: str) -> _types.ModuleType:
    """A subpackage not imported yet (``chainrule.viz``, ``chainrule.tools`` ...), imported on
    first use, as ``torch`` loads its lazy submodules; ``compile`` is chainrule.compiler's."""
    if name == "compile":
        from .compiler import compile

        return compile  # type: ignore[return-value]
    if not name.startswith("_") or name == "_dynamo":  # (PyTorch loads torch._dynamo lazily)
        try:
            return _importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
