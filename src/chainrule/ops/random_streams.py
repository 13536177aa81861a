"""PyTorch's CPU random numbers, value for value: its mt19937 stream and how each of its CPU
kernels turns that stream into samples, so that ``manual_seed(s)`` followed by the same calls
gives the numbers PyTorch gives.

The engine is the 32-bit Mersenne Twister seeded with the seed's low 32 bits by the standard
initialisation (NumPy's ``MT19937._legacy_seeding`` does the same). From it:

* ``random()`` is one 32-bit output; ``random64()`` two of them, the first as the high half.
* uniform floats keep the low bits of an output and scale them: 24 bits of ``random()`` for
  float32 (and the half types, drawn as float32 then rounded), 53 bits of ``random64()`` for
  float64; ``x * (to - from) + from`` is one fused multiply-add in that precision.
* integers in ``[low, high)`` are ``output % range + low``, with ``random64()`` when the range
  reaches ``2**32`` (for int64 and the floating results) and ``random()`` otherwise.
* normal samples: a float32 tensor of 16 or more contiguous elements is filled with uniforms
  first, then turned 16 at a time by Box-Muller in single precision with the polynomial
  ``log``/``sincos`` of the AVX kernel PyTorch uses (``avx_mathfun``; its multiply-adds fused
  as the compiler fuses them); a ragged end redraws 16 uniforms for the last 16 elements.
  float64 tensors of 16 or more use the same scheme in double precision with the C library's
  ``log``/``cos``/``sin``. Anything smaller (or not contiguous) draws element by element from
  PyTorch's double-precision Box-Muller, which caches its second value in the generator
  (filled in memory order when not contiguous). Not reproduced: float16/bfloat16 tensors of
  16 or more normals (PyTorch's Box-Muller in half arithmetic; here the element-by-element
  draws).
* Bernoulli draws compare a uniform with ``p`` (float64 uniforms for a Python ``p`` or a
  float64 ``p`` tensor, float32 uniforms for a float32 one).
* ``randperm(n)`` swaps element ``i`` with ``i + random() % (n - i)`` for each ``i``.

The other samplers build on these: ``exponential_``, ``cauchy_``, ``geometric_`` and
``log_normal_`` (``serial_fill``), and in ``distribution_sampling.py`` ``multinomial``,
``_standard_gamma``, ``_sample_dirichlet``, ``poisson`` and ``binomial`` (PyTorch's scalar
samplers on ``uniform_unit64`` and ``scalar_normals``), so they give PyTorch's numbers too.
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "TorchMT19937",
    "random32",
    "random64",
    "uniform",
    "normal",
    "integers",
    "permutation",
    "bernoulli",
]

_F32 = np.float32
_F64 = np.float64
_U64 = np.uint64
_LOW53 = _U64((1 << 53) - 1)
_LOW53_INT = (1 << 53) - 1


class TorchMT19937(np.random.MT19937):
    """NumPy's MT19937 seeded as PyTorch seeds its CPU generator, with the generator's cached
    second normal sample (part of ``state``, so saving and restoring a state restores it)."""

    def __init__(self, seed: int = 67280421310721) -> None:
        super().__init__()
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """Seed with ``seed``'s low 32 bits and forget the cached normal samples."""
        self._legacy_seeding(int(seed) & 0xFFFFFFFF)
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None  # (kept in states; no kernel uses it)

    @property  # type: ignore[override]
    def state(self) -> dict[str, Any]:
        base = dict(np.random.MT19937.state.__get__(self))  # type: ignore[attr-defined]
        base["next_double_normal"] = self.next_double_normal
        return base

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        value = dict(value)
        cached = value.pop("next_double_normal", None)
        np.random.MT19937.state.__set__(self, value)  # type: ignore[attr-defined]
        self.next_double_normal = cached


def _bits(rng: np.random.Generator) -> Any:
    return rng.bit_generator


def random32(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` 32-bit outputs (as uint64)."""
    return _bits(rng).random_raw(n) if n else np.zeros(0, _U64)


def random64(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` 64-bit values, each two outputs (the first is the high half)."""
    raw = random32(rng, 2 * n)
    return (raw[0::2] << _U64(32)) | raw[1::2]


def _fma32(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (the float32 product is exact in float64)."""
    return (np.asarray(a, _F64) * _F64(_F32(b)) + _F64(_F32(c))).astype(_F32)


def fma64(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float64 with the product's rounding error added back (Dekker's exact
    product and a two-sum): a fused multiply-add but for rare double roundings."""
    a = np.asarray(a, _F64)
    b = _F64(b)
    c = _F64(c)
    p = a * b
    split = _F64(134217729.0)  # 2**27 + 1
    ta = split * a
    a_hi = ta - (ta - a)
    a_lo = a - a_hi
    tb = split * b
    b_hi = tb - (tb - b)
    b_lo = b - b_hi
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    bb = s - p
    s_err = (p - (s - bb)) + (c - bb)
    with np.errstate(invalid="ignore"):
        out = s + (s_err + p_err)
    return np.where(np.isfinite(out), out, p + c)


# ----------------------------------------------------------------------------------------------
# Uniform


def _unit(rng: np.random.Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` uniforms in ``[0, 1)`` as PyTorch's ``uniform_real_distribution`` draws them:
    float64 from 53 bits of ``random64()`` for float64, float32 from 24 bits of ``random()``
    otherwise (the half types are drawn as float32, then rounded)."""
    if dtype == np.float64:
        return (random64(rng, n) & _LOW53).astype(_F64) * _F64(2.0**-53)
    return (random32(rng, n) & _U64(0xFFFFFF)).astype(_F32) * _F32(2.0**-24)


def uniform_unit64(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` double uniforms in ``[0, 1)`` from 53 bits of ``random64()`` each (PyTorch's
    ``uniform_real_distribution<double>``)."""
    return _unit(rng, n, np.dtype(_F64))


def in_memory_order(shape: tuple[int, ...], strides: tuple[int, ...] | None, draw: Any):
    """``draw(shape)``'s values laid out as PyTorch's kernels write a tensor with ``strides``:
    element after element in memory order (outermost stride first), not in index order."""
    if strides is None or len(shape) < 2:
        return draw(shape)
    axes = sorted(range(len(shape)), key=lambda axis: -abs(strides[axis]))
    if axes == list(range(len(shape))):
        return draw(shape)
    values = draw(tuple(shape[axis] for axis in axes))
    return np.ascontiguousarray(values.transpose(np.argsort(axes)))


def uniform(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: Any,
    low: float,
    high: float,
    strides: tuple[int, ...] | None = None,
) -> np.ndarray:
    """Samples from ``[low, high)`` as PyTorch's ``uniform_`` kernel gives them (in memory
    order for a tensor with ``strides``): ``x * (high - low) + low`` in float64 for float64,
    in float32 otherwise (the half types round the float32 value once), and a value that
    rounds to ``high`` is ``low`` instead, so that ``high`` never appears. A complex tensor's
    real and imaginary parts are both drawn so (PyTorch fills ``view_as_real`` of it)."""
    if np.dtype(dtype).kind == "c":
        return _complex_from_parts(
            shape, np.dtype(dtype), strides, lambda s, d, st: uniform(rng, s, d, low, high, st)
        )
    if strides is not None:
        return in_memory_order(shape, strides, lambda s: uniform(rng, s, dtype, low, high))
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    x = _unit(rng, n, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == np.float64:
            values = fma64(x, _F64(high) - _F64(low), low)
        else:
            lo, hi = _F32(low), _F32(high)
            values = _fma32(x, hi - lo, lo)
        values = values.astype(dtype)
        top, bottom = np.asarray(high).astype(dtype), np.asarray(low).astype(dtype)
    values[values == top] = bottom
    return values.reshape(shape)


def _complex_from_parts(
    shape: tuple[int, ...], dtype: np.dtype, strides: tuple[int, ...] | None, draw: Any
) -> np.ndarray:
    """A complex array of ``shape`` whose real and imaginary parts are
    ``draw(shape + (2,), part_dtype, part_strides)``: the fill of ``view_as_real``."""
    part = np.dtype(_F32) if dtype == np.complex64 else np.dtype(_F64)
    part_strides = None if strides is None else (*strides, part.itemsize)
    parts = np.ascontiguousarray(draw((*shape, 2), part, part_strides))
    return parts.view(dtype).reshape(shape)


def serial_fill(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: Any,
    strides: tuple[int, ...] | None,
    transform: Any,
    normal: tuple[float, float] | None = None,
) -> np.ndarray:
    """A fill as PyTorch's serial CPU kernels of ``exponential_``, ``cauchy_``, ``geometric_``
    and ``log_normal_`` draw it: one double per element, in memory order for byte
    ``strides``, a uniform of 53 bits (or, with ``normal=(mean, std)``, a draw of
    ``normal_distribution<double>``), ``transform`` applied in double with the C library's
    functions, the result cast to ``dtype`` as ``static_cast`` does."""

    def draw(sizes: tuple[int, ...]) -> np.ndarray:
        n = math.prod(sizes)
        base = uniform_unit64(rng, n) if normal is None else scalar_normals(rng, n, *normal)
        with np.errstate(all="ignore"):
            values = transform(base)
        return cast_from_double(values, dtype).reshape(sizes)

    return in_memory_order(shape, strides, draw)


def exponential(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: Any,
    lambd: float = 1.0,
    strides: tuple[int, ...] | None = None,
) -> np.ndarray:
    """PyTorch's ``exponential_``: ``-1 / lambd * log1p(-u)`` of a double uniform ``u``."""
    scale = -1.0 / lambd
    return serial_fill(rng, shape, dtype, strides, lambda u: scale * libm(math.log1p, -u))


# ----------------------------------------------------------------------------------------------
# Normal

_LOG_P = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)


def _log_ps(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` in float32 (cephes' logf polynomial), with the multiply-adds
    the compiler fuses fused. Only positive finite inputs reach it here."""
    x = np.maximum(x, np.array(0x00800000, np.int32).view(_F32))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & ~0x7F800000) | np.array(0.5, _F32).view(np.int32)).view(_F32)
    below = x < _F32(0.707106781186547524)
    tmp = np.where(below, x, _F32(0))
    x = x - _F32(1)
    e = e - np.where(below, _F32(1), _F32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _F32(_LOG_P[0]))
    for coefficient in _LOG_P[1:]:
        y = _fma32(y, x, coefficient)
    y = y * x
    y = _fma32(y, z, e * _F32(-2.12194440e-4))
    y = _fma32(z, -0.5, y)
    x = x + y
    return _fma32(e, 0.693359375, x)


def _sincos_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps`` in float32 (cephes' sinf/cosf), multiply-adds fused."""
    negative = np.signbit(x)
    x = np.abs(x)
    j = (x * _F32(1.27323954473516)).astype(np.int32)  # 4 / pi, truncated
    j = (j + 1) & ~1
    y = j.astype(_F32)
    sin_flips = ((j & 4) != 0) ^ negative
    cos_flips = (~(j - 2) & 4) != 0
    sine_polynomial_is_cos = (j & 2) == 0
    x = _fma32(y, -0.78515625, x)
    x = _fma32(y, -2.4187564849853515625e-4, x)
    x = _fma32(y, -3.77489497744594108e-8, x)
    z = x * x
    yc = np.full_like(x, _F32(2.443315711809948e-005))
    yc = _fma32(yc, z, -1.388731625493765e-003)
    yc = _fma32(yc, z, 4.166664568298827e-002)
    yc = yc * z
    yc = _fma32(yc, z, -(z * _F32(0.5)))
    yc = yc + _F32(1)
    ys = np.full_like(x, _F32(-1.9515295891e-4))
    ys = _fma32(ys, z, 8.3321608736e-3)
    ys = _fma32(ys, z, -1.6666654611e-1)
    ys = ys * z
    ys = _fma32(ys, x, x)
    sin = np.where(sine_polynomial_is_cos, ys, yc)
    cos = np.where(sine_polynomial_is_cos, yc, ys)
    return np.where(sin_flips, -sin, sin), np.where(cos_flips, -cos, cos)


def _box_muller16_float32(data: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Rows of 16 uniforms into 16 normals (PyTorch's ``normal_fill_16_AVX2``)."""
    u1 = _F32(1) - data[:, :8]
    u2 = data[:, 8:]
    radius = np.sqrt(_F32(-2) * _log_ps(u1))
    theta = _F32(2.0 * math.pi) * u2
    sin, cos = _sincos_ps(theta)
    first = _fma32(radius * cos, std, mean)
    second = _fma32(radius * sin, std, mean)
    return np.concatenate([first, second], axis=1)


def _box_muller16_float64(data: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Rows of 16 double uniforms into 16 normals (PyTorch's scalar ``normal_fill_16``)."""
    u1 = 1.0 - data[:, :8]
    u2 = data[:, 8:]
    radius = np.sqrt(-2.0 * libm(math.log, u1))
    theta = (2.0 * math.pi) * u2
    first = fma64(radius * libm(math.cos, theta), std, mean)
    second = fma64(radius * libm(math.sin, theta), std, mean)
    return np.concatenate([first, second], axis=1)


def libm(function: Any, values: np.ndarray) -> np.ndarray:
    """The C library's double function element by element (NumPy's own may differ in the
    last bit)."""
    flat = [function(v) for v in values.ravel().tolist()]
    return np.array(flat, _F64).reshape(values.shape)


def _normal_fill(rng: np.random.Generator, n: int, dtype: np.dtype, mean: float, std: float):
    """PyTorch's ``normal_fill`` for ``n >= 16`` contiguous float32/float64 elements."""
    data = _unit(rng, n, dtype)
    box_muller = _box_muller16_float32 if dtype == np.float32 else _box_muller16_float64
    whole = n - n % 16
    out = np.empty(n, dtype)
    out[:whole] = box_muller(data[:whole].reshape(-1, 16), mean, std).ravel()
    if n % 16:
        out[whole:] = data[whole:]  # (drawn, then overwritten below as PyTorch's are)
        tail = _unit(rng, 16, dtype).reshape(1, 16)
        out[n - 16 :] = box_muller(tail, mean, std).ravel()
    return out


def scalar_uniform(rng: np.random.Generator) -> float:
    """One draw of PyTorch's ``uniform_real_distribution<double>`` on [0, 1) (53 bits of
    ``random64()``, as ``uniform_unit64``), as a Python float: the scalar samplers' draw,
    without NumPy's cost per call."""
    high, low = _bits(rng).random_raw(2).tolist()
    return ((high << 32 | low) & _LOW53_INT) * 2.0**-53


def scalar_normal(rng: np.random.Generator) -> float:
    """One draw of PyTorch's ``normal_distribution<double>(0, 1)``: Box-Muller on two double
    uniforms, the sine half cached in the generator for the next draw."""
    bits = _bits(rng)
    cached = getattr(bits, "next_double_normal", None)
    if cached is not None:
        bits.next_double_normal = None
        return cached
    u1 = scalar_uniform(rng)
    u2 = scalar_uniform(rng)
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = 2.0 * math.pi * u1
    if hasattr(bits, "next_double_normal"):
        bits.next_double_normal = r * math.sin(theta)
    return r * math.cos(theta)


def scalar_normals(rng: np.random.Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` draws of PyTorch's ``normal_distribution<double>(mean, std)``."""
    out = np.array([scalar_normal(rng) for _ in range(n)], _F64)
    return fma64(out, std, mean)


def normal(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: Any,
    mean: float = 0.0,
    std: float = 1.0,
    strides: tuple[int, ...] | None = None,
    serial: bool = False,
) -> np.ndarray:
    """Normal samples as PyTorch's ``normal_`` kernel gives them; a tensor with byte
    ``strides`` that is not contiguous is filled element by element in memory order (with
    ``serial``, element by element whatever its size: the memory of a tensor that is not
    contiguous, given in memory order). A
    complex tensor's parts are drawn as ``view_as_real`` of it, with ``std / sqrt(2)`` (so
    that the complex value's variance is ``std ** 2``)."""
    dtype = np.dtype(dtype)
    mean, std = float(mean), float(std)
    if dtype.kind == "c":
        part_std = std / math.sqrt(2.0)
        return _complex_from_parts(
            shape, dtype, strides, lambda s, d, st: normal(rng, s, d, mean, part_std, st, serial)
        )

    def one_by_one(sizes: tuple[int, ...]) -> np.ndarray:
        return cast_from_double(scalar_normals(rng, math.prod(sizes), mean, std), dtype).reshape(
            sizes
        )

    if strides is not None and not _c_contiguous(shape, strides, dtype.itemsize):
        return in_memory_order(shape, strides, one_by_one)
    n = math.prod(shape)
    if serial:
        return one_by_one(shape)
    if n >= 16 and dtype in _HALVES:
        return cast_from_double(_half_normal_fill(rng, n, mean, std), dtype).reshape(shape)
    if n < 16 or dtype not in (np.float32, np.float64):
        return one_by_one(shape)
    return cast_from_double(_normal_fill(rng, n, dtype, mean, std), dtype).reshape(shape)


_HALVES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _half_normal_fill(rng: np.random.Generator, n: int, mean: float, std: float) -> np.ndarray:
    """PyTorch's ``normal_`` of ``n >= 16`` contiguous float16/bfloat16 elements, in float32
    (rounded by the caller): uniforms for the whole blocks of 16 only, each block's
    Box-Muller, then 16 more uniforms for the last 16 elements when ``n`` is not a multiple
    of 16 (so it draws fewer numbers than the float32 kernel, which fills all ``n`` first)."""
    whole = n - n % 16
    out = np.empty(n, _F32)
    data = _unit(rng, whole, np.dtype(_F32))
    out[:whole] = _box_muller16_float32(data.reshape(-1, 16), mean, std).ravel()
    if n % 16:
        tail = _unit(rng, 16, np.dtype(_F32)).reshape(1, 16)
        out[n - 16 :] = _box_muller16_float32(tail, mean, std).ravel()
    return out


def cast_from_double(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``values`` cast to ``dtype`` as C++'s ``static_cast`` in PyTorch's kernels casts a double:
    float16 and bfloat16 through float32 (``c10::Half`` and ``c10::BFloat16`` are built from a
    float, so a double is rounded twice), integers of 32 bits or fewer through int32 and int64
    directly, a value out of the conversion's range giving its minimum (x86's ``cvttsd2si``)
    before the narrower types wrap it."""
    dtype = np.dtype(dtype)
    values = np.asarray(values, _F64)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype in _HALVES:
            return values.astype(_F32).astype(dtype)
        if dtype.kind in "iu":
            wide = np.int64 if dtype.itemsize == 8 else np.int32
            info = np.iinfo(wide)
            inside = (values >= info.min) & (values < -float(info.min))
            whole = np.where(inside, values, info.min).astype(wide)
            return whole.astype(dtype)
        return values.astype(dtype)


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Whether byte ``strides`` are C-contiguous for ``shape`` (sizes of 1 ignored)."""
    expected = itemsize
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


# ----------------------------------------------------------------------------------------------
# Integers, permutations, Bernoulli


def integers(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    low: int,
    high: int,
    dtype: Any,
    wide: bool = False,
) -> np.ndarray:
    """Integers from ``[low, high)`` as PyTorch's ``random_from_to`` kernel draws them (64-bit
    draws when the span needs them, or when ``wide``)."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    span = int(high) - int(low)
    wide = wide or span >= 1 << 32 and dtype.name in ("int64", "float64", "float32", "bfloat16")
    raw = random64(rng, n) if wide else random32(rng, n)
    offsets = raw % _U64(span)
    values = (offsets.astype(np.int64) + np.int64(low)) if span else offsets.astype(np.int64)
    with np.errstate(over="ignore"):
        return values.astype(dtype).reshape(shape)


def permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """PyTorch's CPU ``randperm(n)`` (int64): swap each ``i`` with ``i + random() % (n - i)``."""
    out = np.arange(n, dtype=np.int64)
    if n < 2:
        return out
    offsets = (random32(rng, n - 1) % np.arange(n, 1, -1, dtype=_U64)).astype(np.int64)
    values = out.tolist()
    for i, z in enumerate(offsets.tolist()):
        j = i + z
        values[i], values[j] = values[j], values[i]
    return np.array(values, np.int64)


def bernoulli(
    rng: np.random.Generator,
    probability: Any,
    shape: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
) -> np.ndarray:
    """A boolean mask, true where a uniform draw falls below ``probability`` (a number, or an
    array broadcast to ``shape``: float64 arrays and numbers draw double uniforms, the other
    floating types float uniforms compared in float). The uniforms are taken in the memory
    order of a tensor with byte ``strides`` (PyTorch's in-place kernel writes it so)."""
    p = np.asarray(probability)
    if p.dtype.kind == "f" and p.dtype != np.float64 or p.dtype in _HALVES:
        unit_dtype, p = np.dtype(_F32), p.astype(_F32)
    else:
        unit_dtype = np.dtype(_F64)

    def draw(sizes: tuple[int, ...]) -> np.ndarray:
        return _unit(rng, math.prod(sizes), unit_dtype).reshape(sizes)

    return in_memory_order(shape, strides, draw) < p
