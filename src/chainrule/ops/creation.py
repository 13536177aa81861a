"""Creating tensors: from data, filled, ranges, identity, and random (with seeded generators)."""

from __future__ import annotations

import json
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._dtype import dtype as DType
from .._dtype import to_dtype
from .._size import device as Device
from .._tensor import Tensor, make_tensor, wrap

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "scalar_tensor", "zeros", "ones", "full",
    "empty", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
    "randint_like", "arange", "range", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "randperm", "normal", "bernoulli", "multinomial", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "Generator", "default_generator", "legacy_new",
    "empty_strided", "tril_indices", "triu_indices", "complex", "polar",
]


# ----------------------------------------------------------------------------------------------
# From data

def _infer_array(data: Any, dtype: DType | None) -> np.ndarray:
    """Convert Python data to an array with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        array = data._data.copy()
        return array if dtype is None else array.astype(dtype.np)
    if isinstance(data, np.ndarray):
        array = np.array(data, copy=True)
        if dtype is None:
            _dtype.from_numpy_dtype(array.dtype)
            if array.dtype.kind == "u" and array.dtype != np.uint8:
                array = array.astype(np.int64)
        return array if dtype is None else array.astype(dtype.np)
    if isinstance(data, np.generic):
        array = np.array(data)
        return array if dtype is None else array.astype(dtype.np)
    if isinstance(data, str | bytes):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    _check_nested(data)
    try:
        array = np.array(data)
    except ValueError as error:
        raise ValueError(str(error)) from None
    if array.dtype == object or array.dtype.kind in "USV":
        bad = _first_bad_leaf(data)
        raise TypeError(f"new(): invalid data type '{type(bad).__name__}'")
    if dtype is not None:
        return array.astype(dtype.np)
    kind = array.dtype.kind
    if kind == "f":
        if _has_tensor_leaf(data):
            return array
        return array.astype(_dtype.get_default_dtype().np)
    if kind in "iu":
        return array.astype(np.int64)
    if kind == "c":
        return array.astype(_dtype.default_for_category(3).np)
    return array


def _check_nested(data: Any) -> None:
    """PyTorch's message for ragged nested sequences (checked without recursion)."""
    stack = [(data, 0)]
    while stack:
        item, dim = stack.pop()
        if isinstance(item, list | tuple):
            length = None
            for child in item:
                if isinstance(child, list | tuple):
                    if length is None:
                        length = len(child)
                    elif len(child) != length:
                        raise ValueError(
                            f"expected sequence of length {length} at dim {dim + 1} "
                            f"(got {len(child)})"
                        )
                    stack.append((child, dim + 1))
            kinds = {isinstance(child, list | tuple) for child in item}
            if len(kinds) > 1:
                raise TypeError(f"new(): invalid data type '{type(item[0]).__name__}'")


def _first_bad_leaf(data: Any) -> Any:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif not isinstance(item, numbers.Number | np.generic | Tensor):
            return item
    return data


def _has_tensor_leaf(data: Any) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            return item._data.dtype != np.float32 or _dtype.get_default_dtype() is not _dtype.float32
        if isinstance(item, np.generic) and item.dtype.kind == "f":
            return True
        if isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _resolve_dtype(dtype: Any) -> DType | None:
    return None if dtype is None else to_dtype(dtype)


def _check_device(device: Any) -> None:
    if device is not None:
        Device(device)


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
    if (
        type(data) is list and dtype is None and device is None
        and (type(data[0]) is float if len(data) == 1 else all(type(v) is float for v in data))
    ):
        # The common case, a flat list of floats: no inference needed.
        return make_tensor(np.array(data, dtype=_dtype.get_default_dtype().np), requires_grad)
    _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    array = _infer_array(data, _resolve_dtype(dtype))
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
            _dtype.from_numpy_dtype(data.dtype)
            return wrap(data)
        return wrap(data.astype(d.np))
    return make_tensor(_infer_array(data, d))


asarray = as_tensor


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return wrap(ndarray)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A zero-dimensional tensor (default float dtype unless ``dtype`` is given)."""
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    return make_tensor(np.array(s, dtype=d.np), requires_grad)


def legacy_new(default: DType, args: tuple, kwargs: dict[str, Any]) -> np.ndarray:
    """``Tensor(...)`` / ``FloatTensor(...)``: sizes give uninitialised memory, data is copied."""
    kwargs = dict(kwargs)
    kwargs.pop("device", None)
    if not args:
        return np.empty((0,), dtype=default.np)
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        data = args[0]
        if isinstance(data, Tensor):
            return data._data.astype(default.np, copy=False)
        if isinstance(data, np.ndarray):
            return np.array(data, dtype=default.np)
        return _infer_array(data, default)
    if all(isinstance(a, int | np.integer) for a in args):
        return np.empty(tuple(int(a) for a in args), dtype=default.np)
    raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")


# ----------------------------------------------------------------------------------------------
# Filled tensors

def _size_args(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], Sequence | np.ndarray):
        size = tuple(size[0])
    result = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, int | np.integer):
            raise TypeError(
                f"empty(): argument 'size' (position 1) must be tuple of ints, but found element "
                f"of type {type(s).__name__} at pos {len(result)}"
            )
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
        result.append(int(s))
    return tuple(result)


def _filled(fill: Any, size: tuple, dtype: Any, requires_grad: bool) -> Tensor:
    shape = _size_args(size)
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    if fill is None:
        array = np.empty(shape, dtype=d.np)
    elif fill == 0:
        array = np.zeros(shape, dtype=d.np)
    else:
        array = np.full(shape, fill, dtype=d.np)
    return make_tensor(array, requires_grad)


def zeros(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros, e.g. ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    _check_device(device)
    return _filled(0, size, dtype, requires_grad)


def ones(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ones."""
    _check_device(device)
    return _filled(1, size, dtype, requires_grad)


def empty(*size: Any, out: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: bool = False, pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """An uninitialised tensor."""
    _check_device(device)
    return _filled(None, size, dtype, requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (strides are chosen by NumPy)."""
    return _filled(None, (tuple(size),), dtype, requires_grad)


def full(size: Sequence[int], fill_value: Any, *, out: Any = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype follows the value unless given)."""
    _check_device(device)
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dtype.bool
        elif isinstance(fill_value, int):
            dtype = _dtype.int64
        elif isinstance(fill_value, complex):
            dtype = _dtype.default_for_category(3)
    if isinstance(size, int):
        size = (size,)
    return _filled(fill_value, (tuple(size),), dtype, requires_grad)


def _like(x: Tensor, dtype: Any) -> tuple[tuple[int, ...], DType]:
    return x._data.shape, _resolve_dtype(dtype) or x.dtype


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros with the shape (and dtype) of ``input``."""
    shape, d = _like(input, dtype)
    return make_tensor(np.zeros(shape, dtype=d.np), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones with the shape (and dtype) of ``input``."""
    shape, d = _like(input, dtype)
    return make_tensor(np.ones(shape, dtype=d.np), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Uninitialised, with the shape (and dtype) of ``input``."""
    shape, d = _like(input, dtype)
    return make_tensor(np.empty(shape, dtype=d.np), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """``fill_value`` everywhere, with the shape (and dtype) of ``input``."""
    shape, d = _like(input, dtype)
    return make_tensor(np.full(shape, fill_value, dtype=d.np), requires_grad)


# ----------------------------------------------------------------------------------------------
# Ranges and structured matrices

def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Any = None, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` every ``step``."""
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    d = _resolve_dtype(dtype)
    if d is None:
        is_float = any(isinstance(v, float) for v in values)
        d = _dtype.get_default_dtype() if is_float else _dtype.int64
    start, end, step = values
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    count = max(0, int(np.ceil((end - start) / step)))
    array = (start + step * np.arange(count, dtype=np.float64)).astype(d.np) if d.is_floating_point else np.arange(start, end, step).astype(d.np)
    return make_tensor(array, requires_grad)


def range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Deprecated inclusive range (``torch.range``); default float dtype."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    count = int(np.floor((end - start) / step)) + 1
    return make_tensor((start + step * np.arange(count)).astype(d.np), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, out: Any = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    values = _symmetric_linspace(float(start), float(end), steps)
    if not d.is_floating_point:
        values = np.trunc(values)
    return make_tensor(values.astype(d.np), requires_grad)


def _symmetric_linspace(start: float, end: float, steps: int) -> np.ndarray:
    """PyTorch fills the first half from ``start`` and the second half back from ``end``."""
    if steps == 1:
        return np.array([start])
    step = (end - start) / (steps - 1)
    index = np.arange(steps, dtype=np.float64)
    half = steps // 2
    return np.where(index < half, start + step * index, end - step * (steps - 1 - index))


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    values = np.power(base, _symmetric_linspace(float(start), float(end), steps))
    return make_tensor(values.astype(d.np), requires_grad)


def eye(n: int, m: int | None = None, *, out: Any = None, dtype: Any = None, layout: Any = None,
        device: Any = None, requires_grad: bool = False) -> Tensor:
    """The ``n x m`` identity matrix."""
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    return make_tensor(np.eye(n, m, dtype=d.np), requires_grad)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """Indices of the lower triangle of a ``row x col`` matrix, as a ``2 x N`` tensor."""
    rows, cols = np.tril_indices(row, offset, col)
    return wrap(np.stack([rows, cols]).astype((_resolve_dtype(dtype) or _dtype.int64).np))


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """Indices of the upper triangle of a ``row x col`` matrix, as a ``2 x N`` tensor."""
    rows, cols = np.triu_indices(row, offset, col)
    return wrap(np.stack([rows, cols]).astype((_resolve_dtype(dtype) or _dtype.int64).np))


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """A complex tensor from real and imaginary parts."""
    return wrap(real._data + 1j * imag._data)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor from magnitude and angle."""
    return wrap(abs._data * np.exp(1j * angle._data))


# ----------------------------------------------------------------------------------------------
# Random numbers

class Generator:
    """A seeded source of random numbers (NumPy's PCG64 underneath).

    chainrule's random streams are reproducible with ``manual_seed`` but are not PyTorch's
    streams: the same seed gives different numbers than in PyTorch.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = Device(device)
        self._seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Reseed and return self."""
        seed = int(seed)
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed & ((1 << 128) - 1)))
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
        """The generator's state as a uint8 tensor (restorable with ``set_state``)."""
        state = json.dumps({"seed": self._seed, "state": self._rng.bit_generator.state})
        return wrap(np.frombuffer(state.encode(), dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state returned by ``get_state``."""
        payload = json.loads(bytes(new_state._data.astype(np.uint8)).decode())
        self._seed = payload["seed"]
        self._rng.bit_generator.state = payload["state"]
        return self

    @property
    def rng(self) -> np.random.Generator:
        """The NumPy generator (for code that draws directly)."""
        return self._rng


default_generator = Generator()


def _gen(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (and return it)."""
    return default_generator.manual_seed(seed)


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


def rand(*size: Any, generator: Generator | None = None, out: Any = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False,
         pin_memory: bool = False) -> Tensor:
    """Uniform samples from ``[0, 1)``."""
    shape = _size_args(size)
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    return make_tensor(_gen(generator).random(shape).astype(d.np), requires_grad)


def randn(*size: Any, generator: Generator | None = None, out: Any = None, dtype: Any = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False,
          pin_memory: bool = False) -> Tensor:
    """Standard normal samples."""
    shape = _size_args(size)
    d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    return make_tensor(_gen(generator).standard_normal(shape).astype(d.np), requires_grad)


def randint(*args: Any, generator: Generator | None = None, out: Any = None, dtype: Any = None,
            layout: Any = None, device: Any = None, requires_grad: bool = False,
            size: Any = None, low: int | None = None, high: int | None = None) -> Tensor:
    """Integers uniformly from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``."""
    positional = list(args)
    if size is None:
        size = positional.pop()
    if high is None:
        high = positional.pop()
    if low is None:
        low = positional.pop() if positional else 0
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    d = _resolve_dtype(dtype) or _dtype.int64
    shape = _size_args((size,))
    return make_tensor(_gen(generator).integers(low, high, shape).astype(d.np), requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, requires_grad: bool = False,
              generator: Generator | None = None, **_: Any) -> Tensor:
    """Uniform samples with the shape of ``input``."""
    return rand(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                generator=generator)


def randn_like(input: Tensor, *, dtype: Any = None, requires_grad: bool = False,
               generator: Generator | None = None, **_: Any) -> Tensor:
    """Normal samples with the shape of ``input``."""
    return randn(input._data.shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                 generator=generator)


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, dtype: Any = None,
                 **_: Any) -> Tensor:
    """Random integers with the shape of ``input``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    d = _resolve_dtype(dtype) or _dtype.int64
    return make_tensor(_gen(generator).permutation(n).astype(d.np), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Any = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Normal samples; ``mean`` and ``std`` may be tensors (broadcast) or numbers with ``size``."""
    rng = _gen(generator)
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    if size is None:
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        like = mean if isinstance(mean, Tensor) else std
        d = _resolve_dtype(dtype) or (like.dtype if isinstance(like, Tensor) else _dtype.get_default_dtype())
    else:
        shape = _size_args((size,))
        d = _resolve_dtype(dtype) or _dtype.get_default_dtype()
    values = m + s * rng.standard_normal(shape)
    return make_tensor(np.asarray(values).astype(d.np), requires_grad)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (or ``p``), else 0, in ``input``'s dtype."""
    prob = input._data if p is None else p
    draws = _gen(generator).random(input._data.shape) < prob
    return wrap(draws.astype(input._data.dtype))


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Indices drawn from the categorical distribution(s) in the rows of ``input``."""
    rng = _gen(generator)
    probs = np.atleast_2d(input._data.astype(np.float64))
    rows = []
    for row in probs:
        p = row / row.sum()
        rows.append(rng.choice(len(p), size=num_samples, replace=replacement, p=p))
    result = np.array(rows, dtype=np.int64)
    return wrap(result if input._data.ndim == 2 else result[0])
