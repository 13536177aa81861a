"""Creating tensors: from data, filled, ranges, identity, and random (with seeded generators)."""

from __future__ import annotations

import builtins
import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype, _strides
from .._dtype import dtype as DType
from .._dtype import to_dtype
from .._frames import user_stacklevel
from .._meta import MetaArray, logical_strides, meta_array
from .._size import DEFAULT_DEVICE, Size, targets_meta
from .._size import device as Device
from .._tensor import Tensor, _init, make_tensor, warn_scalar_conversion, wrap
from ..autograd.grad_mode import GRAD, mode_get
from . import random_streams
from ._registry import KEEP, op
from .scalar_conversion import check_integral_elements, check_number_argument, fill_value_for

__all__ = [
    "tensor",
    "as_tensor",
    "asarray",
    "from_numpy",
    "frombuffer",
    "scalar_tensor",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "arange",
    "range",
    "linspace",
    "logspace",
    "eye",
    "rand",
    "randn",
    "randint",
    "randperm",
    "normal",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "Generator",
    "default_generator",
    "legacy_new",
    "empty_strided",
    "tril_indices",
    "triu_indices",
]


# ----------------------------------------------------------------------------------------------
# From data. Nested Python data goes through PyTorch's three passes, each an explicit walk
# (no recursion): the shape comes from the first element at each depth, the dtype from promoting
# every leaf's own dtype, and storing checks every sequence against that shape. Their order
# decides which error a bad input gets, so it is kept.

_MAX_DIMS = 64
_NUMBER_TYPES = frozenset((float, int, bool))
_NDARRAY_LIST_WARNING = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider "
    "converting the list to a single numpy.ndarray with numpy.array() before converting to a "
    "tensor."
)
_warned_ndarray_list = [False]


def _is_sequence(obj: Any) -> bool:
    """Whether PyTorch reads ``obj`` as a sequence of elements (tensors and dicts are not)."""
    kind = type(obj)
    if kind is list or kind is tuple:
        return True
    if kind in _NUMBER_TYPES:
        return False
    return isinstance(obj, np.ndarray | str | bytes | Sequence) and not isinstance(obj, Tensor)


def _data_shape(data: Any) -> tuple[int, ...]:
    """The shape of nested sequences, read from the first element at each depth."""
    sizes: list[int] = []
    item = data
    while _is_sequence(item):
        length = len(item)  # a 0-d ndarray raises "len() of unsized object", as in PyTorch
        sizes.append(length)
        if len(sizes) > _MAX_DIMS:  # a str is a sequence of itself: it ends here
            raise ValueError(f"too many dimensions '{type(item).__name__}'")
        if length == 0:
            break
        item = item[0]
    return tuple(sizes)


def _python_number_dtype(kind: type) -> DType:
    if kind is float:
        return _dtype.get_default_dtype()
    if kind is bool:
        return _dtype.bool
    return _dtype.int64


def _leaf_dtype(item: Any) -> DType | None:
    """The dtype one element stands for (None for a sequence, whose elements are read)."""
    if isinstance(item, Tensor):
        return item.dtype
    if isinstance(item, np.ndarray | np.generic):
        return _dtype.from_numpy_dtype(item.dtype)
    kind = type(item)
    if kind in _NUMBER_TYPES:
        return _python_number_dtype(kind)
    if isinstance(item, builtins.complex):
        return _dtype.default_for_category(3)
    if isinstance(item, str | bytes):
        raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
    if _is_sequence(item):
        return None
    raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def _infer_dtype(data: Any) -> DType:
    """Promote the dtypes of all elements: Python floats count as the default dtype, ints as
    int64, tensors and NumPy values as their own dtype (``[np.float32(1), 2]`` is float32)."""
    table = _dtype._PAIR_TABLE
    result: DType | None = None
    stack = [data]
    while stack:
        item = stack.pop()
        kind = type(item)
        found = None if kind is list or kind is tuple else _leaf_dtype(item)
        if found is None:  # a sequence
            if len(item) == 0:
                found = _dtype.get_default_dtype()
            else:
                kinds = set(map(type, item)) if kind is list or kind is tuple else None
                if kinds is None or not kinds <= _NUMBER_TYPES:
                    stack.extend(reversed(item))
                    continue
                # A row of Python numbers (the common case): one dtype per distinct type.
                for number_kind in kinds:
                    found = _python_number_dtype(number_kind)
                    result = found if result is None else table[(result, found)]
                continue
        result = found if result is None else table[(result, found)]
    return result if result is not None else _dtype.get_default_dtype()


def _scalar_value(item: Any, target: DType) -> Any:
    """One element as a Python or NumPy number, with PyTorch's errors for anything else."""
    if isinstance(item, Tensor):
        if item._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if item._requires_grad:
            warn_scalar_conversion()
        return item._data.item()
    if isinstance(item, numbers.Number | np.generic):
        return item
    if isinstance(item, np.ndarray) and item.ndim == 0:
        return item.item()
    if target.is_floating_point:
        raise TypeError(f"must be real number, not {type(item).__name__}")
    raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as an integer")


def _flatten(data: Any, sizes: tuple[int, ...], target: DType) -> list[Any]:
    """The elements in row-major order, checking every sequence against ``sizes``."""
    ndim = len(sizes)
    flat: list[Any] = []
    stack = [(data, 0)]
    while stack:
        item, dim = stack.pop()
        if dim == ndim:
            flat.append(_scalar_value(item, target))
            continue
        if not _is_sequence(item):
            raise TypeError("not a sequence")
        if len(item) != sizes[dim]:
            raise ValueError(
                f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(item)})"
            )
        if isinstance(item, np.ndarray) and item.shape == sizes[dim:]:
            flat.extend(item.reshape(-1).tolist())
        elif (
            dim + 1 == ndim
            and type(item) in (list, tuple)
            and (set(map(type, item)) <= _NUMBER_TYPES)
        ):
            flat.extend(item)
        else:
            stack.extend((child, dim + 1) for child in reversed(item))
    return flat


def _array_from_data(data: Any, dtype: DType | None) -> np.ndarray:
    """A new array holding ``data`` (numbers, nested sequences, arrays, tensors), with PyTorch's
    dtype inference when ``dtype`` is None."""
    if isinstance(data, Tensor):
        return data._data.astype(dtype.np if dtype is not None else data._data.dtype)
    if isinstance(data, np.ndarray):
        _check_array(data)  # (PyTorch reads an array through from_numpy, with its errors)
        inferred = _dtype.from_numpy_dtype(data.dtype)
        return data.astype((dtype or inferred).np)
    kind = type(data)
    if kind in _NUMBER_TYPES:  # a Python number: a 0-d tensor
        target = dtype if dtype is not None else _python_number_dtype(kind)
        return _to_array([data], target).reshape(())
    if isinstance(data, str | bytes):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    sizes = _data_shape(data)
    target = dtype if dtype is not None else _infer_dtype(data)
    if sizes and sizes[0] and isinstance(data, list | tuple) and isinstance(data[0], np.ndarray):
        if not _warned_ndarray_list[0]:
            _warned_ndarray_list[0] = True
            warnings.warn(_NDARRAY_LIST_WARNING, UserWarning, stacklevel=user_stacklevel())
    if 0 in sizes:
        return np.empty(sizes, dtype=target.np)
    values = _flatten(data, sizes, target) if sizes else [_scalar_value(data, target)]
    return _to_array(values, target).reshape(sizes)


def _to_array(values: list[Any], target: DType) -> np.ndarray:
    """Convert elements as PyTorch stores them: through double (floats), int64 (integers, so
    ``-1`` wraps in uint8) or bool (non-zero), then to the target dtype."""
    if target.is_complex:
        wide = np.complex128
    elif target.is_floating_point:
        wide = np.float64
    elif target is _dtype.bool:
        wide = np.bool_
    else:
        wide = np.int64
        check_integral_elements(values, target.np)  # (PyTorch's overflow errors: not wrapped)
    try:
        array = np.array(values, dtype=wide)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    return array.astype(target.np, copy=False)


def _resolve_dtype(dtype: Any) -> DType | None:
    return None if dtype is None else to_dtype(dtype)


def _check_pin_memory(pin_memory: Any) -> None:
    """PyTorch's CPU build's error for ``pin_memory=True``: nothing can pin the memory."""
    if pin_memory:
        raise RuntimeError(
            "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
            "allocator is available on this system."
        )


def _check_device(device: Any) -> bool:
    """PyTorch's errors for an unavailable device; whether the factory makes a meta tensor
    (``device="meta"``, or none given under ``with torch.device("meta")``)."""
    return targets_meta(device)


def _as_meta(t: Tensor) -> Tensor:
    """``t`` (just made, nobody else holds it) made a meta tensor of its shape and dtype."""
    t._data = meta_array(t._data.shape, t._data.dtype)
    return t


def _meta_like(
    name: str, input: Tensor, dtype: Any, requires_grad: Any, memory_format: Any
) -> Tensor:
    """A ``*_like`` factory's meta result: ``input``'s shape, the dtype, and ``input``'s
    strides (as PyTorch's preserve_format keeps them for a dense layout) or the format's."""
    shape, d, grad = _like(name, input, dtype, requires_grad)
    strides = None
    if memory_format is None or memory_format == _strides.preserve_format:
        if type(input._data) is MetaArray:
            strides = logical_strides(input._data)
        else:  # (a CPU tensor's layout, as empty_like would give it)
            strides = _strides.element_strides(_empty_like_array(input._data, d.np, None))
    elif memory_format != _strides.contiguous_format:
        strides = _strides.memory_format_strides(shape, memory_format)
    return make_tensor(meta_array(shape, d.np, strides), grad)


def _like_is_meta(input: Any, device: Any) -> bool:
    if device is not None:
        return targets_meta(device)
    return isinstance(input, Tensor) and type(input._data) is MetaArray


def tensor(
    data: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (numbers, nested sequences, arrays).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
    """
    _check_pin_memory(pin_memory)
    if type(requires_grad) is not builtins.bool:
        _check_requires_grad("tensor", requires_grad, none_ok=False)
    if (
        type(data) is list
        and device is None
        and DEFAULT_DEVICE[0] is None
        and data
        and (dtype is None or dtype is _dtype.float32 or dtype is _dtype.float64)
        and (type(data[0]) is float if len(data) == 1 else all(type(v) is float for v in data))
    ):
        # The common case, a flat list of floats (in the default dtype or a given float32 or
        # float64): no inference needed, and the dtype is floating, so it may require grad.
        np_dtype = (_dtype.get_default_dtype() if dtype is None else dtype).np
        t = wrap(np.array(data, dtype=np_dtype))
        t._requires_grad = requires_grad
        return t
    meta = _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    array = _array_from_data(data, _resolve_dtype(dtype))
    if meta:
        return make_tensor(meta_array(array.shape, array.dtype), requires_grad)
    return make_tensor(array, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with ``data`` when it already is a tensor or array."""
    _check_device(device)
    d = _resolve_dtype(dtype)
    if isinstance(data, Tensor):
        if d is None or data._data.dtype == d.np:
            return data
        from .copying import to

        return to(data, d)
    if isinstance(data, np.ndarray):
        if d is None or data.dtype == d.np:
            _check_shareable(data)
            return wrap(data)
        return wrap(_array_from_data(data, d))
    return make_tensor(_array_from_data(data, d))


asarray = as_tensor


_NOT_WRITABLE_WARNING = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
    "This means writing to this tensor will result in undefined behavior. You may want to copy "
    "the array to protect its data or make it writable before converting it to a tensor. This "
    "type of warning will be suppressed for the rest of this program."
)
_warned_not_writable = [False]


def _check_shareable(array: np.ndarray) -> None:
    """PyTorch's checks before a tensor shares an array's memory, in its order."""
    _check_array(array)
    if not array.flags.writeable and not _warned_not_writable[0]:
        _warned_not_writable[0] = True
        warnings.warn(_NOT_WRITABLE_WARNING, UserWarning, stacklevel=user_stacklevel())


def _check_array(array: np.ndarray) -> None:
    """PyTorch's checks of an array it reads (``from_numpy``, ``tensor``, ``as_tensor``): its
    type, its steps and its byte order, in PyTorch's order and with its messages."""
    _dtype.from_numpy_dtype(array.dtype.newbyteorder("="))
    if any(step % array.itemsize for step in array.strides):
        raise ValueError(
            "given numpy array strides not a multiple of the element byte size. Copy the numpy "
            "array to reallocate the memory."
        )
    if any(step < 0 for step in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) "
        )
    if not array.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. Conversion "
            "between byte orders is currently not supported."
        )


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array (changes to one show in the other).

    Example:
        >>> import chainrule as torch, numpy as np
        >>> a = np.zeros(2)
        >>> t = torch.from_numpy(a)
        >>> a[0] = 5
        >>> t
        tensor([5., 0.], dtype=chainrule.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_shareable(ndarray)
    return wrap(ndarray)


_READ_ONLY_BUFFER_WARNED = [False]
_MISSING_DTYPE: Any = object()  # (frombuffer's dtype is keyword-only and required)


def frombuffer(
    buffer: Any,
    *,
    dtype: Any = _MISSING_DTYPE,
    count: int = -1,
    offset: int = 0,
    requires_grad: bool = False,
) -> Tensor:
    """A 1-D tensor over the memory of an object with the buffer protocol (``bytearray``,
    ``array.array``, ``memoryview`` ...): ``count`` elements of ``dtype`` (all that fit by
    default) from byte ``offset``. Writes through either show in the other. A read-only
    buffer (``bytes``) is copied, with PyTorch's warning that it is not writable.

    Example:
        >>> import chainrule as torch
        >>> torch.frombuffer(bytearray(b"\\x01\\x00\\x02\\x00"), dtype=torch.int16)
        tensor([1, 2], dtype=chainrule.int16)
    """
    if dtype is _MISSING_DTYPE:
        raise TypeError('frombuffer() missing 1 required positional arguments: "dtype"')
    if not isinstance(dtype, DType):
        raise TypeError(
            f"frombuffer(): argument 'dtype' must be torch.dtype, not {_type_name(dtype)}"
        )
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    length, size = view.nbytes, np.dtype(dtype.np).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0 and (length - offset) % size:
        raise ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({size})"
        )
    elements = (length - offset) // size if count < 0 else count
    if offset + elements * size > length:
        raise ValueError(
            f"requested buffer length ({elements} * {size} bytes) after offset ({offset} "
            f"bytes) must not be greater than actual buffer length ({length} bytes)"
        )
    data = np.frombuffer(view.cast("B"), dtype=dtype.np, count=elements, offset=offset)
    if view.readonly:
        if not _READ_ONLY_BUFFER_WARNED[0]:
            _READ_ONLY_BUFFER_WARNED[0] = True
            warnings.warn(
                "The given buffer is not writable, and PyTorch does not support non-writable "
                "tensors. This means you can write to the underlying (supposedly non-writable) "
                "buffer using the tensor. You may want to copy the buffer to protect its data "
                "or make it writable before converting it to a tensor. This type of warning "
                "will be suppressed for the rest of this program. (Triggered internally at "
                "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:1556.)",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        data = data.copy()  # (NumPy cannot write to read-only memory: a copy to write to)
    return make_tensor(data, _check_requires_grad("frombuffer", requires_grad, none_ok=False))


def scalar_tensor(
    s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A zero-dimensional tensor (default float dtype unless ``dtype`` is given)."""
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if isinstance(s, builtins.int | builtins.float):  # (a one-element fill: float16 takes 1e6)
        s = fill_value_for(s, d.np, numel=1)
    return make_tensor(np.array(s, dtype=d.np), requires_grad)


_LEGACY_SIGNATURES = (
    " * (*, chainrule.device device = None)\n"
    " * (chainrule.Storage storage)\n"
    " * (Tensor other)\n"
    " * (tuple of ints size, *, chainrule.device device = None)\n"
    " * (object data, *, chainrule.device device = None)\n"
)


def _tensor_options(d: DType) -> str:
    return (
        f"TensorOptions(dtype={_dtype.CPP_TYPE_NAMES[d]}, device=cpu, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))"
    )


def legacy_tensor(cls: type[Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Legacy constructor: ``Tensor(2, 3)`` (uninitialised) or ``Tensor([1, 2])`` (float)."""
    data = legacy_new(_dtype.get_default_dtype(), args, kwargs)
    t = object.__new__(cls)
    _init(t, data, False)
    return t


Tensor.__new__ = staticmethod(legacy_tensor)  # type: ignore[method-assign,assignment]


def legacy_new(
    default: DType, args: tuple, kwargs: dict[str, Any], strict: bool = False
) -> np.ndarray:
    """The array behind ``Tensor(...)`` / ``FloatTensor(...)``.

    Ints (or a ``Size``) give uninitialised memory of that shape; data (lists, tuples) is copied
    into ``default``; a tensor or NumPy array of that dtype is shared. ``strict`` (the typed
    classes) refuses a tensor of another dtype, as PyTorch does; ``Tensor(t)`` shares any.
    """
    unknown = [key for key in kwargs if key != "device"]
    if unknown:
        got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({', '.join(got)}), but "
            f"expected one of:\n{_LEGACY_SIGNATURES}"
        )
    where = kwargs.get("device")
    if where is not None and Device(where).type != "cpu":
        raise RuntimeError(
            f"legacy constructor expects device type: cpu but device type: {Device(where).type} "
            "was passed"
        )
    if not args:
        return np.empty((0,), dtype=default.np)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            if strict and data._data.dtype != default.np:
                raise TypeError(
                    f"expected {_tensor_options(default)} (got {_tensor_options(data.dtype)})"
                )
            return data._data
        if isinstance(data, np.ndarray):
            return data if data.dtype == default.np else _array_from_data(data, default)
        is_sizes = isinstance(data, Size) or (
            isinstance(data, int | np.integer) and not isinstance(data, builtins.bool | np.bool_)
        )
        if not is_sizes:
            if isinstance(data, numbers.Number | np.generic):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
            return _array_from_data(data, default)
        if isinstance(data, Size) and not data:
            return np.empty((), dtype=default.np)  # (an empty Size: a 0-d tensor, as PyTorch)
        args = tuple(data) if isinstance(data, Size) else (data,)
    return np.empty(_size_args("new", args), dtype=default.np)


# ----------------------------------------------------------------------------------------------
# Filled tensors


def _type_name(value: Any) -> str:
    """A type's name as PyTorch's argument errors spell it."""
    kind = type(value)
    if isinstance(value, Tensor):
        return "Tensor"
    if kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _check_requires_grad(name: str, value: Any, none_ok: bool = True) -> builtins.bool:
    """``requires_grad`` as a bool, or PyTorch's TypeError for anything else (1, numpy.bool).
    The factories (``zeros`` ...) take None as the default; ``tensor()`` does not."""
    if type(value) is builtins.bool:
        return value
    if value is None and none_ok:
        return False
    raise TypeError(f"{name}(): argument 'requires_grad' must be bool, not {_type_name(value)}")


def _is_int_like(value: Any) -> bool:
    """An int, a NumPy integer or an integer tensor of one element (bool counts, as in PyTorch)."""
    if isinstance(value, int | np.integer):
        return True
    return isinstance(value, Tensor) and value._data.size == 1 and value._data.dtype.kind in "iub"


def _size_args(name: str, size: tuple, position: int = 1) -> tuple[int, ...]:
    """Sizes given as ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])``, with PyTorch's errors."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    first = size[0]
    if len(size) == 1 and (isinstance(first, builtins.bool) or not _is_int_like(first)):
        if not isinstance(first, list | tuple):
            raise TypeError(
                f"{name}(): argument 'size' (position {position}) must be tuple of ints, not "
                f"{_type_name(first)}"
            )
        size = tuple(first)
    elif not _is_int_like(first):
        raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
    shape = []
    for i, s in enumerate(size):
        if not _is_int_like(s):
            if i == 0:
                raise TypeError(
                    f"{name}(): argument 'size' (position {position}) must be tuple of ints, but "
                    f"found element of type {_type_name(s)} at pos 0"
                )
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {_type_name(s)}"'
            )
        shape.append(int(s))
    if any(s < 0 for s in shape):
        if name == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        bad = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return tuple(shape)


def _filled(
    name: str, fill: Any, size: tuple, dtype: Any, requires_grad: bool, meta: bool = False
) -> Tensor:
    requires_grad = _check_requires_grad(name, requires_grad)
    shape = _size_args(name, size)
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if meta:
        array = meta_array(shape, d.np)
    elif fill is None:
        array = np.empty(shape, dtype=d.np)
    elif fill == 0:
        array = np.zeros(shape, dtype=d.np)
    else:
        array = np.full(shape, fill_value_for(fill, d.np, math.prod(shape)), dtype=d.np)
    return make_tensor(array, requires_grad)


def zeros(
    *size: Any,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """A tensor of zeros, e.g. ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    _strides.check_layout("zeros", layout)
    _check_pin_memory(pin_memory)
    meta = _check_device(device)
    return _filled("zeros", 0, _size_keyword(size, kwargs), dtype, requires_grad, meta)


def ones(
    *size: Any,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """A tensor of ones."""
    _strides.check_layout("ones", layout)
    _check_pin_memory(pin_memory)
    meta = _check_device(device)
    return _filled("ones", 1, _size_keyword(size, kwargs), dtype, requires_grad, meta)


def empty(
    *size: Any,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
    **kwargs: Any,
) -> Tensor:
    """An uninitialised tensor (laid out in ``memory_format``: ``channels_last`` for 4-d)."""
    _strides.check_layout("empty", layout)
    _check_pin_memory(pin_memory)
    _strides.check_memory_format("empty", memory_format)
    meta = _check_device(device)
    out = _filled("empty", None, _size_keyword(size, kwargs), dtype, requires_grad, meta)
    if memory_format is None or memory_format == _strides.contiguous_format or meta:
        return out
    if memory_format == _strides.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    shape = out._data.shape
    strides = _strides.memory_format_strides(shape, memory_format)  # (its error for the rank)
    laid_out = _strides.empty_in_memory_format(shape, out._data.dtype, memory_format)
    if not laid_out.size:  # (NumPy's strides of an empty array are not the format's)
        laid_out = _strides.with_strides(laid_out, shape, strides)
    return make_tensor(laid_out, out.requires_grad)


def _size_keyword(size: tuple, kwargs: dict[str, Any]) -> tuple:
    """``f(size=(2, 3))`` as ``f((2, 3))``; any other keyword is an error."""
    if "size" in kwargs:
        if size:
            raise TypeError("argument 'size' given by name and position")
        size = (kwargs.pop("size"),)
    if kwargs:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kwargs))}'")
    return size


def empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor (strides are chosen by NumPy)."""
    _strides.check_layout("empty_strided", layout)
    _check_pin_memory(pin_memory)
    if _check_device(device):
        shape = _size_args("empty_strided", (tuple(size),))
        d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
        requires_grad = _check_requires_grad("empty_strided", requires_grad)
        return make_tensor(meta_array(shape, d.np, tuple(stride)), requires_grad)
    return _filled("empty_strided", None, (tuple(size),), dtype, requires_grad)


def _fill_dtype(fill_value: Any) -> DType:
    """The dtype ``full`` infers from its value: Python bool, integer, complex, else float."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if type(fill_value) is builtins.bool:
        return _dtype.bool
    if isinstance(fill_value, int | np.integer) and not isinstance(fill_value, np.bool_):
        return _dtype.int64
    if isinstance(fill_value, builtins.complex | np.complexfloating):
        return _dtype.default_for_category(3)
    return _dtype.get_default_dtype()


def full(
    size: Sequence[int],
    fill_value: Any,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype follows the value unless given).

    Example:
        >>> import chainrule as torch
        >>> torch.full((2,), 7)
        tensor([7, 7])
    """
    _strides.check_layout("full", layout)
    _check_pin_memory(pin_memory)
    meta = _check_device(device)
    if not isinstance(size, list | tuple):
        raise TypeError(
            f"full(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}"
        )
    d = _resolve_dtype(dtype) or _fill_dtype(fill_value)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled("full", fill_value, (tuple(size),), d, requires_grad, meta)


def _check_like_input(name: str, x: Any) -> None:
    """PyTorch's TypeError for a ``*_like`` factory given no tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {_type_name(x)}"
        )


def _like(name: str, x: Tensor, dtype: Any, requires_grad: Any) -> tuple[Any, DType, bool]:
    """Shape, dtype and requires_grad of a ``*_like`` result (``name`` for errors)."""
    _check_like_input(name, x)
    return (
        x._data.shape,
        _resolve_dtype(dtype) or x.dtype,
        _check_requires_grad(name, requires_grad),
    )


def _empty_like_array(x: np.ndarray, dtype: np.dtype, memory_format: Any) -> np.ndarray:
    """An uninitialised array of ``x``'s shape in ``memory_format``: by default (PyTorch's
    ``preserve_format``) laid out as ``x`` (a transposed or channels-last tensor gives a
    transposed or channels-last result, as its ``clone()`` does)."""
    if type(x) is MetaArray:  # (to another device: contiguous memory of the meta's shape)
        x = np.empty(x.shape, x.dtype)
    if memory_format is None or memory_format == _strides.preserve_format:
        return _strides.empty_like_preserving(x, dtype)
    _strides.memory_format_strides(x.shape, memory_format)  # (PyTorch's error for the rank)
    return _strides.empty_in_memory_format(x.shape, dtype, memory_format)


def _drawn_like(
    draw: Any, input: Tensor, memory_format: Any, serial_draw: Any = None, **kwargs: Any
) -> Tensor:
    """``draw(shape, ...)`` laid out as ``input`` (``memory_format``), the samples taken in
    memory order, as PyTorch fills the strided result (so a seed gives PyTorch's values).
    ``serial_draw`` draws that memory when the result is not contiguous, for a kernel that
    fills such a tensor otherwise than a contiguous one (``normal_``: element by element)."""
    if not input._data.size and not PER_EXAMPLE_DRAWS:  # (nothing drawn: only the layout)
        drawn = draw(input._data.shape, **kwargs)
        laid_out = _empty_like_array(input._data, drawn._data.dtype, memory_format)
        return make_tensor(laid_out, bool(kwargs.get("requires_grad", False)))
    if PER_EXAMPLE_DRAWS or (
        input._data.flags.c_contiguous and memory_format in (None, _strides.preserve_format)
    ):
        return draw(input._data.shape, **kwargs)
    out = _empty_like_array(input._data, np.dtype(np.float32), memory_format)
    if out.flags.c_contiguous:
        return draw(input._data.shape, **kwargs)
    block = out if out.base is None else out.base  # (the memory, in its order)
    drawn = (serial_draw or draw)(block.shape, **kwargs)
    view = np.ndarray(
        out.shape,
        drawn._data.dtype,
        buffer=drawn._data,
        offset=0,
        strides=tuple(s // out.itemsize * drawn._data.itemsize for s in out.strides),
    )
    return make_tensor(view, bool(kwargs.get("requires_grad", False)))


def zeros_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Zeros with the shape (and dtype) of ``input``, laid out as it is (``memory_format``)."""
    _strides.check_layout("zeros_like", layout)
    _check_pin_memory(pin_memory)
    _strides.check_memory_format("zeros_like", memory_format)
    if _like_is_meta(input, device):
        return _meta_like("zeros_like", input, dtype, requires_grad, memory_format)
    _, d, requires_grad = _like("zeros_like", input, dtype, requires_grad)
    out = _empty_like_array(input._data, d.np, memory_format)
    out.fill(0)
    return make_tensor(out, requires_grad)


def ones_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Ones with the shape (and dtype) of ``input``, laid out as it is (``memory_format``)."""
    _strides.check_layout("ones_like", layout)
    _check_pin_memory(pin_memory)
    _strides.check_memory_format("ones_like", memory_format)
    if _like_is_meta(input, device):
        return _meta_like("ones_like", input, dtype, requires_grad, memory_format)
    _, d, requires_grad = _like("ones_like", input, dtype, requires_grad)
    out = _empty_like_array(input._data, d.np, memory_format)
    out.fill(1)
    return make_tensor(out, requires_grad)


def empty_like(
    input: Tensor,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """Uninitialised, with the shape (and dtype) of ``input``, laid out as it is
    (``memory_format``)."""
    _strides.check_layout("empty_like", layout)
    _check_pin_memory(pin_memory)
    _strides.check_memory_format("empty_like", memory_format)
    if _like_is_meta(input, device):
        return _meta_like("empty_like", input, dtype, requires_grad, memory_format)
    _, d, requires_grad = _like("empty_like", input, dtype, requires_grad)
    return make_tensor(_empty_like_array(input._data, d.np, memory_format), requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """``fill_value`` everywhere, with the shape (and dtype) of ``input``, laid out as it is
    (``memory_format``)."""
    _strides.check_layout("full_like", layout)
    _check_pin_memory(pin_memory)
    _strides.check_memory_format("full_like", memory_format)
    if _like_is_meta(input, device):
        return _meta_like("full_like", input, dtype, requires_grad, memory_format)
    shape, d, requires_grad = _like("full_like", input, dtype, requires_grad)
    out = _empty_like_array(input._data, d.np, memory_format)
    out[...] = np.full(shape, fill_value_for(fill_value, d.np, math.prod(shape)), dtype=d.np)
    return make_tensor(out, requires_grad)


# ----------------------------------------------------------------------------------------------
# Ranges and structured matrices
#
# PyTorch's CPU kernels compute ``start + step * i`` with a fused multiply-add (one rounding), so
# a value near zero comes out as 5.5511e-17 rather than 0 and prints in scientific notation.
# The values here are computed the same way, so they are PyTorch's to the last bit.

_VECTOR_BYTES = 32  # PyTorch's AVX2 kernels: one vector holds 4 doubles or 8 floats
_SPLIT = 134217729.0  # 2 ** 27 + 1, Veltkamp's splitting constant for float64


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a + b`` rounded, and its rounding error (exactly)."""
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a * b`` rounded, and its rounding error (exactly, by Veltkamp's splitting)."""
    product = a * b
    a_split = _SPLIT * a
    a_high = a_split - (a_split - a)
    a_low = a - a_high
    b_split = _SPLIT * b
    b_high = b_split - (b_split - b)
    b_low = b - b_high
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def _fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float64 with a single rounding.

    The exact value is split into double terms whose sum is exact; rounding their sum is
    correct except at a tie, which the smallest term decides.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    product, product_error = _two_product(a, b)
    total, sum_error = _two_sum(product, c)
    middle, tail = _two_sum(sum_error, product_error)
    result, error = _two_sum(total, middle)
    tie = (
        (error != 0)
        & (np.abs(error) == np.spacing(np.abs(result)) / 2)
        & (np.sign(tail) == np.sign(error))
    )
    result = np.where(tie, result + 2 * error, result)
    # Adding a zero would turn -0.0 into +0.0; an infinite operand or sum has no error terms
    # (they would be inf - inf, NaN): float16's arange past 65504 is inf, as PyTorch's.
    with np.errstate(invalid="ignore", over="ignore"):
        plain = a * b + c
    result = np.where(np.isfinite(plain), result, plain)
    return np.where(middle == 0, total, result)


def _fma_float32(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (``a``, ``c`` float32, ``b`` a small integer).

    The product is exact in float64 and the sum's rounding error is known, so only a float64
    sum landing exactly halfway between two float32 values needs care: the error says on which
    side the exact value lies.
    """
    product = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
    total, error = _two_sum(product, np.asarray(c, dtype=np.float64))
    rounded = total.astype(np.float32)
    wide = rounded.astype(np.float64)
    direction = np.where(total > wide, np.float32(np.inf), np.float32(-np.inf))
    neighbour = np.nextafter(rounded, direction)
    halfway = (total != wide) & (total == (wide + neighbour.astype(np.float64)) / 2)
    towards_neighbour = (error > 0) == (neighbour > rounded)
    fix = halfway & (error != 0)
    return np.where(fix, np.where(towards_neighbour, neighbour, rounded), rounded)


def _range_number(value: Any, what: str) -> Any:
    if isinstance(value, Tensor):
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"arange(): argument '{what}' must be Number, not {_type_name(value)}")
    return value


def _format_scalar(value: Any) -> str:
    """A number as PyTorch's messages print it (C++ stream formatting)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def arange(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` every ``step``.

    The dtype is int64 unless a bound or the step is a float (then the default dtype).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(1, 2.5, 0.5)
        tensor([1.0000, 1.5000, 2.0000])
    """
    _check_pin_memory(pin_memory)
    meta = _check_device(device)
    if end is None:
        start, end = 0, start
    start = _range_number(start, "start")
    end = _range_number(end, "end")
    step = _range_number(step, "step")
    d = _resolve_dtype(dtype)
    if d is None:
        any_float = any(isinstance(v, float) for v in (start, end, step))
        d = _dtype.get_default_dtype() if any_float else _dtype.int64
    _check_arange_numbers(start, end, step, d)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if d.is_floating_point or d.is_complex:
        if not (np.isfinite(start) and np.isfinite(end)):
            raise RuntimeError(
                f"unsupported range: {_format_scalar(start)} -> {_format_scalar(end)}"
            )
        _check_step_sign(start, end, step)
        count = int(np.ceil((float(end) - float(start)) / float(step)))
        values = _arange_values(float(start), float(step), count, d)
    else:
        values = _integer_arange(start, end, step, d)
    if meta:
        values = meta_array(values.shape, values.dtype)
    return make_tensor(values, requires_grad)


def _check_arange_numbers(start: Any, end: Any, step: Any, d: DType) -> None:
    """PyTorch's checks before an integer range: no bool kernel, finite ends, start and step
    read as int64 (the type its integer kernels count in; the values then wrap into the dtype:
    ``arange(0, 1000, 300, dtype=int8)`` ends with -124), the end too for int64."""
    if d.is_complex:
        raise _dtype.no_kernel("arange_cpu", d.np)
    if d.is_floating_point:
        return
    if d is _dtype.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if any(type(v) is float and not math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {_format_scalar(start)} -> {_format_scalar(end)}")
    for v in (start, step, end) if d is _dtype.int64 else (start, step):
        check_number_argument(v, _INT64)


_INT64 = np.dtype(np.int64)


def _check_range_bounds(start: Any, end: Any, step: Any) -> None:
    """PyTorch's checks of a range's numbers, made on them as doubles whatever the dtype
    (``arange(-0.7, dtype=int64)`` is refused though -0.7 counts as 0)."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(
            f"unsupported range: {_format_scalar(float(start))} -> {_format_scalar(float(end))}"
        )
    _check_step_sign(start, end, step)


def _check_step_sign(start: Any, end: Any, step: Any) -> None:
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _arange_values(start: float, step: float, count: int, d: DType) -> np.ndarray:
    """``start + step * i`` as PyTorch's vectorised kernel computes it: pairs of vectors of
    ``start + step * i0`` plus ``k * step`` (fused), the tail element by element."""
    index = np.arange(count, dtype=np.float64)
    width = _VECTOR_BYTES // d.itemsize
    vectorised = count - count % (2 * width)
    lane = np.arange(count) % width
    lane[vectorised:] = 0
    base_index = index - lane
    # Each vector's first element is rounded to the result dtype before the lanes are added.
    base = _fma(step, base_index, start).astype(d.np).astype(np.float64)
    values = np.where(lane == 0, base, _fma(lane, step, base))
    return values.astype(d.np)


def _integer_arange(start: Any, end: Any, step: Any, d: DType) -> np.ndarray:
    """Integer ranges: bounds and step truncated to integers, as PyTorch converts them."""
    first, last, stride = builtins.int(start), builtins.int(end), builtins.int(step)
    _check_step_sign(start, end, step)  # (on the numbers as given, as PyTorch's doubles)
    if d is _dtype.int64:
        if stride == 0:
            raise ValueError("step must be nonzero")
        _check_step_sign(first, last, stride)
        sign = 1 if stride > 0 else -1
        span = last - first + stride - sign
        count = abs(span) // abs(stride) * (1 if (span >= 0) == (stride > 0) else -1)
    else:
        _check_step_sign(start, end, step)
        count = int(np.ceil((float(end) - float(start)) / float(step)))
    return (first + stride * np.arange(max(count, 0), dtype=np.int64)).astype(d.np)


def range(
    start: Any = 0,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,  # noqa: A001
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Deprecated inclusive range (``torch.range``); default float dtype."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if d.is_complex or d is _dtype.bool:
        raise _dtype.no_kernel("range_cpu", d.np)
    # As PyTorch's kernel: the numbers read in the accumulation type (int64 for integer
    # dtypes, so 2.5 counts as 2; double otherwise), the size (end - start) / step + 1
    # truncated, each value start + step * i in that type.
    named = ((start, "start"), (end, "end"), (step, "step"))
    numbers = [_range_number(value, what) for value, what in named]
    _check_range_bounds(*numbers)
    if d.is_floating_point:
        # (float16 and bfloat16 count in float32)
        work = np.float32 if d.np in _dtype.REDUCED_FLOATS else np.float64
        first, last, stride = (work(v) for v in numbers)
        count = builtins.int((last - first) / stride + work(1))
        values = first + stride * np.arange(count, dtype=work)
    else:
        first, last, stride = (builtins.int(v) for v in numbers)
        count = (last - first) // stride + 1 if stride > 0 else (first - last) // -stride + 1
        values = first + stride * np.arange(count, dtype=np.int64)
    return make_tensor(values.astype(d.np), requires_grad)


_LINSPACE_SIGNATURES = "".join(
    f" * ({first} start, {second} end, int steps, *, Tensor out = None, chainrule.dtype dtype = "
    "None, chainrule.layout layout = None, chainrule.device device = None, bool pin_memory = "
    "False, bool requires_grad = False)\n"
    for first, second in (
        ("Tensor", "Tensor"),
        ("Number", "Tensor"),
        ("Tensor", "Number"),
        ("Number", "Number"),
    )
)


def linspace(
    start: Any,
    end: Any,
    steps: Any = None,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Example:
        >>> import chainrule as torch
        >>> torch.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    _check_pin_memory(pin_memory)
    if not isinstance(steps, int | np.integer) or isinstance(steps, builtins.bool):
        given = [_type_name(v) for v in (start, end, steps) if v is not None]
        raise TypeError(
            f"linspace() received an invalid combination of arguments - got ({', '.join(given)}), "
            f"but expected one of:\n{_LINSPACE_SIGNATURES}"
        )
    _check_device(device)
    steps = builtins.int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    d = _spaced_dtype("linspace", start, end, dtype)
    start, end = _range_ends("linspace_cpu", start, end, steps, d.np, wrap=True)
    return make_tensor(_linspace_values(start, end, steps, d), requires_grad)


def _spaced_dtype(name: str, start: Any, end: Any, dtype: Any) -> DType:
    """linspace's and logspace's result dtype: ``dtype``, else the default dtype, or its
    complex counterpart for a complex end; a complex end with a real ``dtype`` is refused."""
    d = _resolve_dtype(dtype)
    if not any(isinstance(v, complex | np.complexfloating) for v in (start, end)):
        return d or _dtype.get_default_dtype()
    double = _dtype.get_default_dtype() is _dtype.float64
    inferred = _dtype.complex128 if double else _dtype.complex64
    if d is None:
        return inferred
    if not d.is_complex:
        part = "double" if inferred is _dtype.complex128 else "float"
        raise RuntimeError(
            f"torch.{name}(): inferred dtype c10::complex<{part}> can't be safely cast to "
            f"passed dtype {_dtype.SCALAR_TYPE_NAMES[d]}"
        )
    return d


def _range_ends(
    kernel: str, start: Any, end: Any, steps: int, np_dtype: np.dtype, wrap: bool
) -> tuple[Any, Any]:
    """linspace's and logspace's ends read as Scalars of the result's type when there are two
    steps or more, as PyTorch's kernels read them: refused when the type cannot hold them
    ("value cannot be converted to type uint8_t without overflow"), a negative int into an
    unsigned type wrapped for linspace (``linspace(0, -1, 3, dtype=uint8)`` runs to 255); no
    bool kernel."""
    if np_dtype.kind == "b" and steps > 1:  # (one step is a fill, which bool has)
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if steps < 2 or np_dtype.kind == "c" or isinstance(start, complex) or isinstance(end, complex):
        return start, end
    if wrap:
        return fill_value_for(start, np_dtype), fill_value_for(end, np_dtype)
    start, end = check_number_argument(start, np_dtype), check_number_argument(end, np_dtype)
    if np_dtype.kind in "iu":  # (logspace(0, 2.5, 3, dtype=int64) is [1, 10, 100])
        return int(start), int(end)
    return start, end


def _linspace_values(start: Any, end: Any, steps: int, d: DType) -> np.ndarray:
    """PyTorch's kernel: the first half counts up from ``start``, the second half back from
    ``end`` (each value one fused multiply-add), in the dtype's own precision; integer dtypes
    step in double and truncate."""
    if steps == 0:
        return np.empty((0,), dtype=d.np)
    if steps == 1:
        wide = np.complex128 if isinstance(start, complex | np.complexfloating) else np.float64
        return np.array([start], dtype=wide).astype(d.np)
    if d.np in _dtype.REDUCED_FLOATS:
        return _half_linspace(start, end, steps, d.np)
    if d.is_complex:
        return _complex_linspace(start, end, steps, d.np)
    # The arithmetic type: float32 for float32, float64 otherwise.
    work = np.float32 if d is _dtype.float32 else np.float64
    if d.is_floating_point:
        first, last = work(start), work(end)
    else:
        first, last = np.float64(builtins.int(start)), np.float64(builtins.int(end))
    step = work((last - first) / work(steps - 1))
    index = np.arange(steps, dtype=np.float64)
    half = steps // 2
    fma = _fma_float32 if work is np.float32 else _fma
    up = fma(step, index, first)
    down = fma(-step, steps - 1 - index, last)
    values = np.where(index < half, up, down).astype(work)
    if not d.is_floating_point:
        values = np.trunc(values)
    return values.astype(d.np)


def _complex_linspace(start: Any, end: Any, steps: int, np_dtype: np.dtype) -> np.ndarray:
    """PyTorch's complex kernel gives, part by part, the values of its real kernel in the
    part's precision (its step divides by a real count and multiplies by a real index, which
    in complex arithmetic act on each part alone)."""
    part = _dtype.float32 if np_dtype == np.complex64 else _dtype.float64
    first, last = complex(start), complex(end)
    out = _linspace_values(first.real, last.real, steps, part).astype(np_dtype)
    if first.imag or last.imag:
        out.imag = _linspace_values(first.imag, last.imag, steps, part)
    return out


def _half_linspace(start: Any, end: Any, steps: int, half: np.dtype) -> np.ndarray:
    """float16 and bfloat16 arithmetic round after every operation (no fused multiply-add)."""

    def rounded(value: Any) -> np.ndarray:  # to the half type, and back to float32
        return np.asarray(value, np.float32).astype(half).astype(np.float32)

    first, last = rounded(start), rounded(end)
    step = rounded(rounded(last - first) / rounded(steps - 1))
    index = np.arange(steps)
    up = (first + rounded(step * rounded(index))).astype(half)
    down = (last - rounded(step * rounded(steps - 1 - index))).astype(half)
    return np.where(index < steps // 2, up, down)


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    _check_pin_memory(pin_memory)
    d = _spaced_dtype("logspace", start, end, dtype)
    start, end = _range_ends("logspace_cpu", start, end, steps, d.np, wrap=False)
    if d.is_complex:
        exponents = _linspace_values(start, end, steps, _dtype.complex128)
    else:
        exponents = _linspace_values(float(start), float(end), steps, _dtype.float64)
    return make_tensor(np.power(base, exponents).astype(d.np), requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """The ``n x m`` identity matrix (``m`` defaults to ``n``)."""
    _check_pin_memory(pin_memory)
    _check_device(device)
    for name, position, value in (("n", 1, n), ("m", 2, m)):
        if value is None:
            continue
        if not isinstance(value, int | np.integer) or isinstance(value, builtins.bool):
            raise TypeError(
                f"eye(): argument '{name}' (position {position}) must be int, not "
                f"{_type_name(value)}"
            )
        if value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    return make_tensor(np.eye(n, m, dtype=d.np), requires_grad)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """Indices of the lower triangle of a ``row x col`` matrix, as a ``2 x N`` tensor."""
    rows, cols = np.tril_indices(row, offset, col)
    return wrap(np.stack([rows, cols]).astype((_resolve_dtype(dtype) or _dtype.int64).np))


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """Indices of the upper triangle of a ``row x col`` matrix, as a ``2 x N`` tensor."""
    rows, cols = np.triu_indices(row, offset, col)
    return wrap(np.stack([rows, cols]).astype((_resolve_dtype(dtype) or _dtype.int64).np))


# ----------------------------------------------------------------------------------------------
# Random numbers


_MT_WORDS = 624
_U64_MASK = (1 << 64) - 1
#: PyTorch's ``CPUGeneratorImplState``: the legacy POD (seed, left, seeded, next, the 624
#: mt19937 words as 64-bit values, the old Box-Muller cache: only ``normal_y`` and its flag
#: are used, for the cached double normal sample) and the cached float normal sample.
_GENERATOR_STATE = np.dtype(
    [
        ("seed", "<u8"),
        ("left", "<i4"),
        ("seeded", "<i4"),
        ("next", "<u8"),
        ("state", "<u8", (_MT_WORDS,)),
        ("normal_x", "<f8"),
        ("normal_y", "<f8"),
        ("normal_rho", "<f8"),
        ("normal_is_valid", "<i4"),
        ("_padding", "V4"),
        ("next_float_normal", "<f4"),
        ("float_normal_is_valid", "u1"),
        ("_end_padding", "V3"),
    ]
)


class Generator:
    """A seeded source of random numbers: PyTorch's CPU generator (its mt19937 stream, seeded
    from the seed's low 32 bits), so ``manual_seed(s)`` gives PyTorch's numbers for ``rand``,
    ``randn``, ``randint``, ``randperm``, ``normal_``, ``uniform_``, ``bernoulli`` and dropout
    (``ops/random_streams.py``); other distributions draw from the same stream by NumPy's
    algorithms.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = Device(device)
        self._seed = 67280421310721
        self._rng = np.random.Generator(random_streams.TorchMT19937(self._seed))

    def __repr__(self) -> str:
        return f"<chainrule._C.Generator object at {hex(id(self))}>"

    def manual_seed(self, seed: int) -> Generator:
        """Reseed and return self. ``seed`` is a Python int in ``[-2**63, 2**64)``, kept as
        its 64-bit unsigned value (``initial_seed()`` of -1 is ``2**64 - 1``, as PyTorch's)."""
        if type(seed) is not int:
            if isinstance(seed, np.integer):
                raise TypeError("an integer is required")
            raise RuntimeError(f"manual_seed expected a long, but got {_type_name(seed)}")
        if not -(1 << 63) <= seed <= _U64_MASK:
            raise ValueError("Overflow when unpacking long long")
        seed &= _U64_MASK
        self._seed = seed
        self._rng = np.random.Generator(random_streams.TorchMT19937(seed))
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the new seed."""
        seed = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state as PyTorch's 5056-byte ``CPUGeneratorImplState`` (a uint8
        tensor): the seed, the mt19937 words and position, the cached normal samples. A state
        from PyTorch's ``torch.get_rng_state()`` restores here, and the other way round."""
        bits = self._rng.bit_generator
        inner = bits.state["state"]
        key = np.asarray(inner["key"], np.uint32)
        position = int(inner["pos"])
        record = np.zeros((), _GENERATOR_STATE)
        record["seed"] = self._seed & _U64_MASK
        record["seeded"] = 1
        if position >= _MT_WORDS:  # (the next draw regenerates the words)
            record["left"] = 1
            record["next"] = 0 if self._freshly_seeded(key) else _MT_WORDS
        else:
            record["left"] = _MT_WORDS + 1 - position
            record["next"] = position
        record["state"] = key
        cached = getattr(bits, "next_double_normal", None)
        if cached is not None:
            record["normal_is_valid"] = 1
            record["normal_y"] = cached
        cached_float = getattr(bits, "next_float_normal", None)
        if cached_float is not None:
            record["float_normal_is_valid"] = 1
            record["next_float_normal"] = cached_float
        return wrap(np.frombuffer(record.tobytes(), np.uint8).copy())

    def _freshly_seeded(self, key: np.ndarray) -> bool:
        seeded = random_streams.TorchMT19937(self._seed).state["state"]["key"]
        return bool(np.array_equal(key, seeded))

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (this library's or PyTorch's); a state that is
        not one raises PyTorch's error and changes nothing."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {_type_name(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        size = new_state._data.size
        if size != _GENERATOR_STATE.itemsize:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_GENERATOR_STATE.itemsize} but "
                f"found the input RNG state size to be {size}"
            )
        record = np.frombuffer(np.ascontiguousarray(new_state._data).tobytes(), _GENERATOR_STATE)[0]
        left, position = int(record["left"]), int(record["next"])
        if not (record["seeded"] and 0 < left <= _MT_WORDS and 0 <= position <= _MT_WORDS):
            raise RuntimeError("Invalid mt19937 state")
        bits = self._rng.bit_generator
        bits.state = {
            "bit_generator": type(bits).__name__,
            "state": {
                "key": record["state"].astype(np.uint32),
                "pos": _MT_WORDS if left == 1 else position,
            },
            "next_double_normal": float(record["normal_y"]) if record["normal_is_valid"] else None,
        }
        bits.next_float_normal = (
            float(record["next_float_normal"]) if record["float_normal_is_valid"] else None
        )
        self._seed = int(record["seed"])
        return self

    @property
    def rng(self) -> np.random.Generator:
        """The NumPy generator (for code that draws directly)."""
        return self._rng


default_generator = Generator()

#: Installed by ``chainrule.func`` while a ``vmap`` with ``randomness="different"`` runs: the
#: tensor-less random factories (``rand(3)``, ``randn``, ``randint``, ``randperm``, ``normal``
#: with a size) and the out-of-place random ops on tensors that are not batched (``normal``
#: with tensors, ``multinomial``, ``bernoulli``, the dropouts) hand their call to it, and it
#: draws one sample per example (a batched tensor).
PER_EXAMPLE_DRAWS: list[Any] = []


def _gen(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and return it); ``seed`` is anything ``int()`` takes."""
    return default_generator.manual_seed(builtins.int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state."""
    default_generator.set_state(new_state)


def _floating_or_raise(d: DType, kernel: str) -> None:
    """PyTorch has no uniform/normal sampling kernels for integer and bool dtypes."""
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dtype.SCALAR_TYPE_NAMES[d]}'"
        )


def rand(*args: Any, **kwargs: Any) -> Tensor:
    """Uniform samples from ``[0, 1)``: ``rand(2, 3)``, ``rand((2, 3))`` or
    ``rand(size=(2, 3))``."""
    if PER_EXAMPLE_DRAWS:
        return PER_EXAMPLE_DRAWS[-1](rand, args, kwargs)
    bound = _parse_overloads("rand", _sized_signatures("rand"), args, kwargs)
    _check_pin_memory(bound.get("pin_memory"))
    meta = _check_device(bound["device"])
    shape = _size_args("rand", (tuple(bound["size"]),))
    d = _resolve_dtype(bound["dtype"]) or _dtype.get_default_dtype()
    _floating_or_raise(d, "check_uniform_bounds")
    if meta:  # (no draws: the generator's state is left as it was, as PyTorch's)
        return make_tensor(meta_array(shape, d.np), builtins.bool(bound["requires_grad"]))
    return make_tensor(
        random_streams.uniform(_gen(bound.get("generator")), shape, d.np, 0.0, 1.0),
        builtins.bool(bound["requires_grad"]),
    )


def randn(*args: Any, **kwargs: Any) -> Tensor:
    """Standard normal samples: ``randn(2, 3)``, ``randn((2, 3))`` or ``randn(size=(2, 3))``."""
    if PER_EXAMPLE_DRAWS:
        return PER_EXAMPLE_DRAWS[-1](randn, args, kwargs)
    bound = _parse_overloads("randn", _sized_signatures("randn"), args, kwargs)
    _check_pin_memory(bound.get("pin_memory"))
    meta = _check_device(bound["device"])
    shape = _size_args("randn", (tuple(bound["size"]),))
    d = _resolve_dtype(bound["dtype"]) or _dtype.get_default_dtype()
    _floating_or_raise(d, "normal_kernel_cpu")
    if meta:
        return make_tensor(meta_array(shape, d.np), builtins.bool(bound["requires_grad"]))
    return make_tensor(
        random_streams.normal(_gen(bound.get("generator")), shape, d.np),
        builtins.bool(bound["requires_grad"]),
    )


def _randn_one_by_one(
    shape: tuple[int, ...], *, dtype: Any, requires_grad: bool, generator: Any, **_: Any
) -> Tensor:
    """``randn(shape)`` drawn element by element, as PyTorch's ``normal_`` fills a tensor that
    is not contiguous (``randn_like`` of a transposed or channels-last tensor)."""
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    _floating_or_raise(d, "normal_kernel_cpu")
    values = random_streams.normal(_gen(generator), shape, d.np, serial=True)
    return make_tensor(values, builtins.bool(requires_grad))


# ----------------------------------------------------------------------------------------------
# PyTorch's argument parser for the random factories with several signatures (``randint``,
# ``randint_like``, and ``rand``/``randn`` with a size keyword): each signature is tried in
# order; when none fits, the one signature whose argument count fits reports its own error,
# otherwise the "invalid combination" message lists them all.

_FACTORY_OPTIONS = (
    "chainrule.dtype dtype = None, chainrule.layout layout = None, "
    "chainrule.device device = None, bool pin_memory = False, "
    "bool requires_grad = False"
)


class _Param:
    """One parameter: ``kind`` is int, ints (a size), Tensor, Generator, dtype, layout, device,
    bool or memory_format; ``optional`` ones have a default; None is accepted where PyTorch's
    schema has ``?``."""

    __slots__ = ("name", "kind", "optional", "keyword_only", "allow_none")

    _TYPE_NAMES = {
        "int": "int",
        "ints": "tuple of ints",
        "Tensor": "Tensor",
        "Generator": "chainrule.Generator",
        "dtype": "chainrule.dtype",
        "layout": "chainrule.layout",
        "device": "chainrule.device",
        "bool": "bool",
        "memory_format": "chainrule.memory_format",
    }

    def __init__(
        self,
        name: str,
        kind: str,
        optional: bool = False,
        keyword_only: bool = False,
        allow_none: bool = False,
    ) -> None:
        self.name, self.kind, self.optional = name, kind, optional
        self.keyword_only, self.allow_none = keyword_only, allow_none

    @property
    def type_name(self) -> str:
        return self._TYPE_NAMES[self.kind]

    def check(self, value: Any) -> tuple[bool, int]:
        """Whether ``value`` fits, and for a size the index of its first bad element (-1)."""
        kind = self.kind
        if kind == "int":
            return _is_int_like(value) and not isinstance(value, builtins.bool), -1
        if kind == "ints":
            # As PyTorch, only the first element is checked here; the others when the size is
            # read (``_size_args``, with its own message).
            if not isinstance(value, list | tuple):
                return False, -1
            if value and (not _is_int_like(value[0]) or isinstance(value[0], builtins.bool)):
                return False, 0
            return True, -1
        if kind == "Tensor":
            return isinstance(value, Tensor), -1
        if kind == "Generator":
            return isinstance(value, Generator), -1
        if kind == "dtype":
            return isinstance(value, DType), -1
        if kind == "bool":
            return isinstance(value, builtins.bool), -1
        if kind == "device":
            return isinstance(value, str | int | Device), -1
        if kind == "layout":
            return isinstance(value, _strides.layout), -1
        return isinstance(value, _strides.memory_format), -1


class _Signature:
    """One overload, printed as PyTorch prints it in the invalid-combination message."""

    def __init__(self, name: str, text: str, params: list[_Param]) -> None:
        self.name, self.text, self.params = name, text, params
        self.min_args = builtins.sum(not p.optional for p in params)
        self.max_args = len(params)
        self.max_pos = builtins.sum(not p.keyword_only for p in params)

    def parse(self, args: tuple, kwargs: dict[str, Any], raise_error: bool) -> dict | None:
        """PyTorch's ``FunctionSignature::parse``: the bound arguments, or None (or its
        TypeError) when they do not fit. A single positional size also takes the positional
        arguments themselves (``rand(2, 3)``)."""
        name = self.name
        varargs = self.max_pos == 1 and self.params[0].kind == "ints"
        if varargs and args and _is_int_like(args[0]) and not isinstance(args[0], builtins.bool):
            args = (args,)
        if len(args) > self.max_pos:
            if not raise_error:
                return None
            if self.min_args != self.max_pos:
                raise TypeError(
                    f"{name}() takes from {self.min_args} to {self.max_pos} "
                    f"positional arguments but {len(args)} were given"
                )
            plural = "" if self.max_pos == 1 else "s"
            verb = "was" if len(args) == 1 else "were"
            raise TypeError(
                f"{name}() takes {self.max_pos} positional argument{plural} but "
                f"{len(args)} {verb} given"
            )
        bound: dict[str, Any] = {}
        used = 0
        for index, param in enumerate(self.params):
            keyword = index >= len(args)
            if not keyword:
                value = args[index]
            elif param.name in kwargs:
                value = kwargs[param.name]
                used += 1
            else:
                value = _MISSING
            if value is _MISSING and param.optional or value is None and param.allow_none:
                bound[param.name] = None
                continue
            if value is _MISSING:
                if not raise_error:
                    return None
                missing = [f'"{p.name}"' for p in self.params[index:] if not p.optional]
                # PyTorch's message puts the plural on a single missing argument.
                plural = "s" if len(missing) == 1 else ""
                raise TypeError(
                    f"{name}() missing {len(missing)} required positional "
                    f"argument{plural}: {', '.join(missing)}"
                )
            fits, bad = param.check(value)
            if not fits:
                if not raise_error:
                    return None
                if keyword:
                    raise TypeError(
                        f"{name}(): argument '{param.name}' must be "
                        f"{param.type_name}, not {_type_name(value)}"
                    )
                if bad >= 0:
                    raise TypeError(
                        f"{name}(): argument '{param.name}' (position {index + 1}) must be "
                        f"{param.type_name}, but found element of type "
                        f"{_type_name(value[bad])} at pos {bad}"
                    )
                raise TypeError(
                    f"{name}(): argument '{param.name}' (position {index + 1}) must "
                    f"be {param.type_name}, not {_type_name(value)}"
                )
            bound[param.name] = value
        if used < len(kwargs):
            if not raise_error:
                return None
            names = [p.name for p in self.params]
            for key in kwargs:
                if key not in names:
                    raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
                if names.index(key) < len(args):
                    raise TypeError(f"{name}() got multiple values for argument '{key}'")
        return bound


_MISSING = object()


def _arg_desc(args: tuple, kwargs: dict[str, Any]) -> str:
    """PyTorch's ``_argDesc``: positional types, then ``name=type`` for the keywords (in the
    order its hash map gives them back: reversed), the last ``", "`` dropped only after
    positional arguments."""
    text = "(" + "".join(f"{_type_name(a)}, " for a in args)
    text += "".join(f"{k}={_type_name(v)}, " for k, v in reversed(kwargs.items()))
    return (text[:-2] if args else text) + ")"


def _parse_overloads(
    name: str, signatures: Sequence[_Signature], args: tuple, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """PyTorch's ``PythonArgParser``: the first signature that fits, else its error."""
    for signature in signatures:
        bound = signature.parse(args, kwargs, False)
        if bound is not None:
            return bound
    count = len(args) + len(kwargs)
    plausible = [sig for sig in signatures if sig.min_args <= count <= sig.max_args]
    if len(plausible) == 1:
        plausible[0].parse(args, kwargs, True)
    options = "".join(f" * {sig.text}\n" for sig in signatures)
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got "
        f"{_arg_desc(args, kwargs)}, but expected one of:\n{options}"
    )


def _factory_params(
    with_generator: bool, first: tuple[_Param, ...], out: bool = True, memory_format: bool = False
) -> list[_Param]:
    params = list(first)
    if with_generator:
        params.append(_Param("generator", "Generator", keyword_only=True, allow_none=True))
    if memory_format:
        params.append(_Param("memory_format", "memory_format", True, True, True))
    if out:
        params.append(_Param("out", "Tensor", True, True, True))
    params += [
        _Param("dtype", "dtype", True, True, True),
        _Param("layout", "layout", True, True, True),
        _Param("device", "device", True, True, True),
        _Param("pin_memory", "bool", True, True),
        _Param("requires_grad", "bool", True, True),
    ]
    return params


def _randint_signatures() -> list[_Signature]:
    signatures = []
    for bounds in (("high",), ("low", "high")):
        for with_generator in (True, False):
            first = tuple(_Param(b, "int") for b in bounds) + (_Param("size", "ints"),)
            text = ", ".join(f"int {b}" for b in bounds) + ", tuple of ints size, *, "
            text += "chainrule.Generator generator, " if with_generator else ""
            signatures.append(
                _Signature(
                    "randint",
                    f"({text}Tensor out = None, {_FACTORY_OPTIONS})",
                    _factory_params(with_generator, first),
                )
            )
    return signatures


def _randint_like_signatures() -> list[_Signature]:
    signatures = []
    for bounds, kind in ((("low", "high"), "int"), (("high",), "Tensor"), (("high",), "int")):
        for with_generator in (True, False):
            first = (_Param("input", "Tensor"),) + tuple(_Param(b, kind) for b in bounds)
            text = "Tensor input, " + ", ".join(f"{kind} {b}" for b in bounds) + ", *, "
            text += "chainrule.Generator generator, " if with_generator else ""
            signatures.append(
                _Signature(
                    "randint_like",
                    f"({text}chainrule.memory_format memory_format = None, {_FACTORY_OPTIONS})",
                    _factory_params(with_generator, first, out=False, memory_format=True),
                )
            )
    return signatures


def _sized_signatures(name: str) -> list[_Signature]:
    """``rand``/``randn``: a size (also as separate ints), with or without a generator."""
    signatures = []
    for with_generator in (True, False):
        text = "tuple of ints size, *, "
        text += "chainrule.Generator generator, " if with_generator else ""
        signatures.append(
            _Signature(
                name,
                f"({text}Tensor out = None, {_FACTORY_OPTIONS})",
                _factory_params(with_generator, (_Param("size", "ints"),)),
            )
        )
    return signatures


_RANDINT = _randint_signatures()
_RANDINT_LIKE = _randint_like_signatures()

# Each dtype's name in PyTorch's random-bounds messages (C++ type names).
_CPP_NAMES = {
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
}


def _check_random_bounds(low: int, high: int, d: DType) -> None:
    """PyTorch's ``random_from_to`` checks: ``low < high``, both ends representable in the
    dtype (a warning past the floating types' exact integers)."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    np_dtype = d.np
    name = _CPP_NAMES.get(np_dtype.name, np_dtype.name)
    if np_dtype.kind in "fV":
        info = _dtype.finfo(np_dtype)
        lowest, highest, digits = builtins.float(info.min), builtins.float(info.max), info.nmant + 1
    elif np_dtype.kind == "b":
        lowest, highest, digits = 0, 1, None
    else:
        info = np.iinfo(np_dtype)
        lowest, highest, digits = info.min, info.max, None
    for value, what in ((low, "from"), (high - 1, "to - 1")):
        if value < lowest or value > highest:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if digits is not None:
        for value, what in ((low, "from"), (high - 1, "to - 1")):
            if value < -(1 << digits) or value > (1 << digits):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, "
                    "please fix the code in advance",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )


def randint(*args: Any, **kwargs: Any) -> Tensor:
    """Integers uniformly from ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``, any of them by keyword (int64 unless ``dtype`` is given).

    Example:
        >>> import chainrule as torch
        >>> torch.randint(3, 5, size=(4,)).dtype
        chainrule.int64
    """
    if PER_EXAMPLE_DRAWS:
        return PER_EXAMPLE_DRAWS[-1](randint, args, kwargs)
    bound = _parse_overloads("randint", _RANDINT, args, kwargs)
    _check_pin_memory(bound.get("pin_memory"))
    meta = _check_device(bound["device"])
    requires_grad = builtins.bool(bound["requires_grad"])
    low, high = builtins.int(bound.get("low") or 0), builtins.int(bound["high"])
    shape = _size_args("randint", (tuple(bound["size"]),))
    d = _resolve_dtype(bound["dtype"]) or _dtype.int64
    _check_random_bounds(low, high, d)
    if meta:
        return make_tensor(meta_array(shape, d.np), requires_grad)
    values = random_streams.integers(_gen(bound.get("generator")), shape, low, high, d.np)
    return make_tensor(values, requires_grad)


def rand_like(
    input: Tensor,
    *,
    dtype: Any = None,
    requires_grad: bool = False,
    generator: Generator | None = None,
    **_: Any,
) -> Tensor:
    """Uniform samples with the shape (and dtype) of ``input``, laid out as it is."""
    _strides.check_memory_format("rand_like", _.get("memory_format"))
    _check_pin_memory(_.get("pin_memory"))
    if _like_is_meta(input, _.get("device")):
        return _meta_like("rand_like", input, dtype, requires_grad, _.get("memory_format"))
    _check_like_input("rand_like", input)
    return _drawn_like(
        rand,
        input,
        _.get("memory_format"),
        dtype=dtype or input.dtype,
        requires_grad=requires_grad,
        generator=generator,
    )


def randn_like(
    input: Tensor,
    *,
    dtype: Any = None,
    requires_grad: bool = False,
    generator: Generator | None = None,
    **_: Any,
) -> Tensor:
    """Normal samples with the shape (and dtype) of ``input``, laid out as it is."""
    _strides.check_memory_format("randn_like", _.get("memory_format"))
    _check_pin_memory(_.get("pin_memory"))
    if _like_is_meta(input, _.get("device")):
        return _meta_like("randn_like", input, dtype, requires_grad, _.get("memory_format"))
    _check_like_input("randn_like", input)
    return _drawn_like(
        randn,
        input,
        _.get("memory_format"),
        _randn_one_by_one,
        dtype=dtype or input.dtype,
        requires_grad=requires_grad,
        generator=generator,
    )


def randint_like(*args: Any, **kwargs: Any) -> Tensor:
    """Random integers in ``[low, high)`` with the shape (and dtype) of ``input``:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    bound = _parse_overloads("randint_like", _RANDINT_LIKE, args, kwargs)
    _check_pin_memory(bound.get("pin_memory"))
    input = bound["input"]
    high = bound["high"]
    if isinstance(high, Tensor):
        high = high.item()
    low = bound.get("low") or 0

    def draw(shape: tuple[int, ...], **options: Any) -> Tensor:
        return randint(low, high, shape, **options)

    return _drawn_like(
        draw,
        input,
        bound.get("memory_format"),
        dtype=bound["dtype"] or input.dtype,
        requires_grad=builtins.bool(bound["requires_grad"]),
        generator=bound.get("generator"),
        device=bound["device"],
    )


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **_: Any,
) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    _check_pin_memory(_.get("pin_memory"))
    if PER_EXAMPLE_DRAWS:
        kwargs = dict(generator=generator, dtype=dtype, device=device, requires_grad=requires_grad)
        return PER_EXAMPLE_DRAWS[-1](randperm, (n,), kwargs)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = _resolve_dtype(dtype) or _dtype.int64
    return make_tensor(random_streams.permutation(_gen(generator), n).astype(d.np), requires_grad)


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, chainrule.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, chainrule.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, chainrule.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, chainrule.Generator generator = None, "
    "Tensor out = None, chainrule.dtype dtype = None, chainrule.layout layout = None, "
    "chainrule.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
)


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples: ``normal(mean_tensor, std)`` / ``normal(mean, std_tensor)`` (broadcast,
    the dtype of the tensor ``mean``, else of ``std``) or ``normal(mean, std, size)``.

    Example:
        >>> import chainrule as torch
        >>> torch.normal(2., 0., (3,))
        tensor([2., 2., 2.])
    """
    _check_pin_memory(pin_memory)
    tensor_mean, tensor_std = isinstance(mean, Tensor), isinstance(std, Tensor)
    if PER_EXAMPLE_DRAWS and (size is None) == (tensor_mean or tensor_std):
        kwargs = dict(
            generator=generator,
            out=out,
            dtype=dtype,
            layout=layout,
            device=device,
            pin_memory=pin_memory,
            requires_grad=requires_grad,
        )
        return PER_EXAMPLE_DRAWS[-1](normal, (mean, std, size), kwargs)
    if (size is None) == (not tensor_mean and not tensor_std):
        got = [_type_name(v) for v in (mean, std, size) if v is not None]
        raise TypeError(
            f"normal() received an invalid combination of arguments - got ({', '.join(got)}), "
            f"but expected one of:\n{_NORMAL_SIGNATURES}"
        )
    if tensor_std:
        if not np.all(std._data >= 0):  # (NaN too, as PyTorch's check)
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_format_scalar(std)}")
    if size is None:
        like = mean if tensor_mean else std
        d = like.dtype
        m = mean._data if tensor_mean else mean
        s = std._data if tensor_std else std
        if tensor_mean and tensor_std:
            from ._dispatch import broadcast_error

            error = broadcast_error(m, s)
            if error is not None:
                raise error
            shape = np.broadcast_shapes(m.shape, s.shape)
        else:
            shape = like._data.shape
    else:
        shape = _size_args("normal", (size,), position=3)
        d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
        m, s = mean, std
    _floating_or_raise(d, "normal_kernel_cpu")
    if size is None:
        if (
            out is not None
            and mode_get() & GRAD
            and ((tensor_mean and mean.requires_grad) or (tensor_std and std.requires_grad))
        ):
            raise RuntimeError(
                "normal(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        # Recorded as PyTorch's nodes: NormalBackward1 (tensor mean), 2 (tensor std), 3 (both).
        if tensor_mean and tensor_std:
            return _normal_tensors(mean, std, generator)
        if tensor_mean:
            return _normal_tensor_mean(mean, std, generator)
        return _normal_tensor_std(mean, std, generator)
    values = random_streams.normal(_gen(generator), shape, d.np, m, s)
    return make_tensor(values, requires_grad)


def _samples(mean: Any, std: Any, like: np.ndarray, generator: Generator | None) -> np.ndarray:
    """``mean + std * N(0, 1)`` at the broadcast shape, in ``like``'s dtype."""
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    # As PyTorch: standard draws (scaled by a number std in the kernel), then times a tensor
    # std, then plus the mean, each step in the result's dtype.
    number_std = not isinstance(std, np.ndarray)
    draws = random_streams.normal(
        _gen(generator), shape, like.dtype, 0.0, std if number_std else 1.0
    )
    if not number_std:
        draws = draws * std.astype(like.dtype)
    return np.asarray(draws + mean).astype(like.dtype)


# The gradient of a sample with respect to its mean and std is zero, as PyTorch defines it
# (derivatives.yaml: ``at::zeros(mean.sym_sizes(), grad.options())``): the nodes save the
# inputs' sizes only. (The engine sums a broadcast gradient down to the input's shape.)


@op("NormalBackward1", inputs=("mean",), promote=KEEP)
def _normal_tensor_mean(mean, std, generator=None):
    """Samples of ``N(mean, std**2)`` for a tensor ``mean`` and a number ``std``."""
    return _samples(mean, std, mean, generator)


@_normal_tensor_mean.derivative("mean")
def _(ops, grad, mean_shape):
    return ops.zeros_like(grad)


@op("NormalBackward2", inputs=("std",), promote=KEEP)
def _normal_tensor_std(mean, std, generator=None):
    """Samples of ``N(mean, std**2)`` for a number ``mean`` and a tensor ``std``."""
    return _samples(mean, std, std, generator)


@_normal_tensor_std.derivative("std")
def _(ops, grad, std_shape):
    return ops.zeros_like(grad)


@op("NormalBackward3", inputs=("mean", "std"), promote=KEEP)
def _normal_tensors(mean, std, generator=None):
    """Samples of ``N(mean, std**2)`` for tensors ``mean`` and ``std`` (broadcast; ``mean``'s
    dtype)."""
    return _samples(mean, std, mean, generator)


# Both read both shapes: PyTorch's NormalBackward3 saves both sizes whichever needs grad.
@_normal_tensors.derivative("mean")
def _(ops, grad, mean_shape, std_shape):
    return ops.zeros_like(grad)


@_normal_tensors.derivative("std")
def _(ops, grad, mean_shape, std_shape):
    return ops.zeros_like(grad)


