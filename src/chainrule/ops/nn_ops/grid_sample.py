"""``grid_sample``: an input read at the (normalised) points of a grid, by bilinear, nearest or
bicubic interpolation (``GridSampler2DBackward0`` / ``GridSampler3DBackward0``).

Every output point ``p`` reads a few input pixels (its *taps* ``t``): 4 (2-D bilinear), 8 (3-D
bilinear), 16 (bicubic) or 1 (nearest), each at a flat spatial index ``index[n, p, t]`` with a
weight ``w[n, p, t]`` that depends on the grid point only. So

    output[n, c, p] = sum_t w[n, p, t] * input[n, c, index[n, p, t]]

is linear in the input, and all of its derivatives are three kinds of sums over taps, with the
weights replaced by their derivatives in the grid coordinates contracted with *directions*
``d1, d2, d3`` (grid-shaped tensors; ``D^m w[d1..dm]``):

* ``gather(values, grid, d...)``: ``sum_t D^m w[d...] * values[index]`` (``m = 0``: the forward);
* ``scatter(grad, grid, d...)``: its adjoint in ``values``, summed back onto the input pixels;
* ``reduce(grad, values, grid, d...)``: ``sum_t D^(m+1) w[d..., e_l] * sum_c grad * values[index]``
  for each grid coordinate ``l``: the gradient of ``gather`` in the grid.

The gradient of each in every argument is again one of the three with one direction more, so
gradients of any order (PyTorch differentiates its grid sampler's backward again) come from
three ops. The weights are products of one-dimensional weights (linear for bilinear, PyTorch's
cubic convolution with ``A = -0.75`` for bicubic), whose derivatives in a grid coordinate are
those in the pixel coordinate times the slope of the unnormalisation and padding (``border``
clips, ``reflection`` folds: slope 0 or +-1; bicubic pads its taps, not the coordinate).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ._common import scalar_name, size_list

__all__ = ["grid_sample"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75
_MAX_DIRECTIONS = 3


# --- one axis: the pixel coordinate, its taps and their weights ------------------------------


def _unnormalize(
    coord: np.ndarray, size: int, align_corners: bool, nd: int
) -> tuple[np.ndarray, float]:
    """Grid coordinate in [-1, 1] -> pixel coordinate, and d(pixel)/d(coordinate), computed in
    the coordinate's type as PyTorch's kernels do (its 2-D kernel multiplies by a precomputed
    factor, its 3-D kernel divides), which decides the pixels read in half precision."""
    c = coord.dtype.type
    if align_corners:
        scale = (size - 1) / 2
        if nd == 2:
            return (coord + c(1)) * c(scale), scale
        return (coord + c(1)) / c(2) * c(size - 1), scale
    if nd == 2:
        return (coord + c(1)) * c(size / 2) - c(0.5), size / 2
    return ((coord + c(1)) * c(size) - c(1)) / c(2), size / 2


def _clip(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``x`` clipped to [0, size - 1] (NaN to 0, as PyTorch's kernel) and the slope of the clip
    (1 strictly inside, else 0)."""
    c = x.dtype.type
    high = c(size - 1)
    slope = ((x > 0) & (x < high)).astype(x.dtype)
    return np.where(x > 0, np.where(x < high, x, high), c(0)).astype(x.dtype), slope


def _reflect(x: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    """``x`` folded into [low, high] (low/high given doubled, as PyTorch), and the slope (+-1)."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    c = x.dtype.type
    low = c(twice_low / 2)
    span = c((twice_high - twice_low) / 2)
    sign = np.where(x < low, c(-1), c(1)).astype(x.dtype)
    distance = np.abs(x - low)
    extra = np.fmod(distance, span)
    flips = np.floor(distance / span)
    even = np.fmod(flips, c(2)) == 0
    folded = np.where(even, extra + low, span - extra + low).astype(x.dtype)
    return folded, np.where(even, sign, -sign)


def _pad_coordinate(
    x: np.ndarray, size: int, padding_mode: int, align_corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The pixel coordinate after ``border``/``reflection`` padding, and its slope."""
    if padding_mode == _BORDER:
        return _clip(x, size)
    if padding_mode == _REFLECTION:
        if align_corners:
            folded, sign = _reflect(x, 0, 2 * (size - 1))
        else:
            folded, sign = _reflect(x, -1, 2 * size - 1)
        clipped, slope = _clip(folded, size)
        return clipped, sign * slope
    return x, np.ones_like(x)


def _cubic_polynomials() -> list[np.poly1d]:
    """PyTorch's four cubic-convolution weights as polynomials in the fraction ``t``."""
    a = _CUBIC_A
    near = np.poly1d([a + 2, -(a + 3), 0, 1])  # |x| <= 1
    far = np.poly1d([a, -5 * a, 8 * a, -4 * a])  # 1 < |x| < 2
    t = np.poly1d([1, 0])
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


_CUBIC = _cubic_polynomials()


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """The four weights of fraction ``t``, evaluated as PyTorch's kernel does."""
    c = t.dtype.type
    a = c(_CUBIC_A)
    one, two = c(1), c(2)

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + two) * x - (a + c(3))) * x * x + one

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - c(5) * a) * x + c(8) * a) * x - c(4) * a

    return [far(t + one), near(t), near(one - t), far(two - t)]


def _axis_taps(
    coord: np.ndarray,
    size: int,
    mode: int,
    padding_mode: int,
    align_corners: bool,
    order: int,
    nd: int,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """One grid axis: the taps' pixel positions ``(N, P, J)`` (int), whether each is inside,
    and the weights' derivatives of orders ``0..order`` in the grid coordinate."""
    dtype = coord.dtype
    c = dtype.type
    x, scale = _unnormalize(coord, size, align_corners, nd)
    if mode != _BICUBIC:  # (bicubic pads its taps instead)
        x, slope = _pad_coordinate(x, size, padding_mode, align_corners)
    # A coordinate that is not finite reads nothing; its weights are NaN (as PyTorch's), except
    # nearest's.
    finite = np.isfinite(x)
    base = np.floor(np.where(finite, x, c(0)))
    if mode == _BICUBIC:
        t = x - np.floor(x)
        # (a coordinate that is not finite is padded as PyTorch's: border and reflection
        # read pixel 0 for NaN, so its NaN weights reach that pixel's gradient)
        positions = np.floor(x)[..., None] + np.arange(-1, 3).astype(dtype)
        if padding_mode != _ZEROS:
            positions, _ = _pad_coordinate(positions, size, padding_mode, align_corners)
        finite = np.isfinite(positions).all(-1)
        weights = [np.stack(_cubic_weights(t), axis=-1)]
        t64 = t.astype(np.float64)
        for k in range(1, order + 1):
            dk = [p.deriv(k)(t64) * scale**k if k <= 3 else np.zeros_like(t64) for p in _CUBIC]
            weights.append(np.stack(dk, axis=-1).astype(dtype))
    elif mode == _NEAREST:
        positions = np.rint(np.where(finite, x, c(0)))[..., None]
        weights = [np.ones_like(positions)] + [np.zeros_like(positions)] * order
    else:
        low = np.floor(x)
        # (PyTorch's weights: (x0 + 1) - x and x - x0)
        weights = [np.stack([(low + c(1)) - x, x - low], axis=-1)]
        positions = base[..., None] + np.arange(2).astype(dtype)
        if order >= 1:
            d = slope * c(scale)
            weights.append(np.stack([-d, d], axis=-1).astype(dtype))
        weights += [np.zeros_like(weights[0])] * (order - 1)
    inside = (positions >= 0) & (positions <= size - 1) & finite[..., None]
    index = np.where(inside, positions, 0).astype(np.int64)
    return index, inside, [w.astype(dtype, copy=False) for w in weights]


# --- all axes: taps as products ---------------------------------------------------------------


class _Taps:
    """The taps of every output point: flat index ``(N, P, T)``, inside mask, per-axis weight
    derivatives; :meth:`weights` contracts them with directions. Taps are ordered as PyTorch
    sums them: the last grid coordinate (the slowest spatial dimension) outermost."""

    def __init__(
        self,
        grid: np.ndarray,
        spatial: tuple[int, ...],
        mode: int,
        padding_mode: int,
        align_corners: bool,
        order: int,
    ) -> None:
        nd = len(spatial)
        n = grid.shape[0]
        flat_grid = grid.reshape(n, -1, nd)
        self.nd = nd
        self.mode = mode
        self.axis_weights: list[list[np.ndarray]] = []
        index = np.zeros((n, flat_grid.shape[1]) + (1,) * nd, np.int64)
        inside = np.ones(index.shape, bool)
        stride = 1
        for a in range(nd):  # grid coordinate a indexes spatial dimension nd - 1 - a
            size = spatial[nd - 1 - a]
            pos, ok, weights = _axis_taps(
                flat_grid[..., a], size, mode, padding_mode, align_corners, order, nd
            )
            index = index + self.along(pos, a) * stride
            inside = inside & self.along(ok, a)
            self.axis_weights.append(weights)
            stride *= size
        self.index = index.reshape(n, flat_grid.shape[1], -1)
        self.inside = inside.reshape(self.index.shape)

    def along(self, values: np.ndarray, axis: int) -> np.ndarray:
        """``(N, P, J)`` per-axis values placed on the tap axis of grid coordinate ``axis`` in
        ``(N, P, J_last, ..., J_0)``."""
        shape = values.shape[:2] + tuple(
            values.shape[2] if a == axis else 1 for a in reversed(range(self.nd))
        )
        return values.reshape(shape)

    def weights(self, directions: list[np.ndarray], axis: int | None = None) -> np.ndarray:
        """``D^m w[d1, ..., dm]`` of every tap, ``(N, P, T)``; each direction ``(N, P, nd)``;
        with ``axis``, differentiated once more in that grid coordinate (not as a one-hot
        direction, whose zeros would turn the NaN weights of another axis into NaN)."""
        fixed = () if axis is None else (axis,)
        total: np.ndarray | None = None
        for axes in itertools.product(range(self.nd), repeat=len(directions)):
            term: Any = None
            for d, a in zip(directions, axes, strict=True):
                factor = d[..., a][..., None]
                term = factor if term is None else term * factor
            product: Any = None
            # (in PyTorch's order, which rounds differently in half precision: its 2-D kernel
            # multiplies the y weight by the x weight, its 3-D kernel x by y, then by z)
            for a in reversed(range(self.nd)) if self.nd == 2 else range(self.nd):
                count = axes.count(a) + fixed.count(a)
                factor = self.along(self.axis_weights[a][count], a)
                product = factor if product is None else product * factor
            n, p = product.shape[:2]
            contribution = product.reshape(n, p, -1)
            if term is not None:
                contribution = term * contribution
            total = contribution if total is None else total + contribution
        assert total is not None
        if self.nd == 3:
            # (PyTorch's 3-D kernel skips the taps outside the input, where its 2-D kernel
            # multiplies their (NaN, for a coordinate that is not finite) weights by 0)
            total = np.where(self.inside, total, total.dtype.type(0))
        return total


def _directions(*dirs: np.ndarray | None) -> list[np.ndarray]:
    return [d for d in dirs if d is not None]


def _taps(grid, spatial, mode, padding_mode, align_corners, order) -> _Taps:
    # (half-precision coordinates and weights are computed in the half type, rounded at each
    # step as PyTorch's half kernels do: it decides which pixels are read)
    return _Taps(grid, tuple(spatial), mode, padding_mode, align_corners, order)


def _flat_directions(dirs: list[np.ndarray], n: int, dtype: np.dtype) -> list[np.ndarray]:
    return [d.astype(dtype, copy=False).reshape(n, -1, d.shape[-1]) for d in dirs]


def _read(values: np.ndarray, taps: _Taps) -> np.ndarray:
    """``values[n, c, index[n, p, t]]`` (0 at taps outside the input): ``(N, C, P, T)``."""
    n, c = values.shape[:2]
    flat = values.reshape(n, c, -1)
    read = np.take_along_axis(flat, taps.index.reshape(n, 1, -1), axis=2)
    read = read.reshape((n, c) + taps.index.shape[1:])
    return np.where(taps.inside[:, None], read, flat.dtype.type(0))


def _empty(*arrays: np.ndarray) -> bool:
    return any(a.size == 0 for a in arrays)


def _tap_sum(read: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_t read[..., t] * w[:, None, :, t]`` added tap after tap, as PyTorch's kernels."""
    total = read[..., 0] * w[:, None, :, 0]
    for t in range(1, read.shape[-1]):
        total = total + read[..., t] * w[:, None, :, t]
    return total


def _bicubic_sum(read: np.ndarray, taps: _Taps) -> np.ndarray:
    """Bicubic's forward as PyTorch's: each of the four rows interpolated in x, then the rows
    in y."""
    wx, wy = taps.axis_weights[0][0], taps.axis_weights[1][0]
    rows = read.reshape(read.shape[:3] + (4, 4))
    total = None
    for j in range(4):
        row = rows[..., j, 0] * wx[:, None, :, 0]
        for i in range(1, 4):
            row = row + rows[..., j, i] * wx[:, None, :, i]
        term = row * wy[:, None, :, j]
        total = term if total is None else total + term
    return total


def _gather(values, grid, directions, mode, padding_mode, align_corners):
    nd = grid.shape[-1]
    spatial = values.shape[2:]
    shape = values.shape[:2] + grid.shape[1 : 1 + nd]
    if (mode == _NEAREST and directions) or _empty(values, grid):
        # (nearest is constant in the grid: exact zeros)
        return np.zeros(shape, values.dtype)
    taps = _taps(grid, spatial, mode, padding_mode, align_corners, len(directions))
    read = _read(values, taps)
    if mode == _BICUBIC and not directions:
        out = _bicubic_sum(read, taps)
    else:
        out = _tap_sum(
            read, taps.weights(_flat_directions(directions, grid.shape[0], values.dtype))
        )
    return out.reshape(shape).astype(values.dtype, copy=False)


def _scatter(grad, grid, directions, mode, padding_mode, align_corners, spatial):
    dtype = grad.dtype
    n, c = grad.shape[:2]
    if (mode == _NEAREST and directions) or _empty(grad, grid):
        return np.zeros((n, c) + tuple(spatial), dtype)
    taps = _taps(grid, spatial, mode, padding_mode, align_corners, len(directions))
    w = taps.weights(_flat_directions(directions, n, dtype))
    w = np.where(taps.inside, w, dtype.type(0))
    size = math.prod(spatial)
    g = grad.reshape(n, c, -1)
    contributions = g[..., None] * w[:, None]  # (N, C, P, T)
    target = (np.arange(n)[:, None, None, None] * c + np.arange(c)[None, :, None, None]) * size
    target = target + taps.index[:, None]
    out = np.zeros(n * c * size, dtype)
    # (added point after point, tap after tap, in the gradient's type, as PyTorch's kernels)
    np.add.at(out, target.ravel(), contributions.ravel())
    return out.reshape((n, c) + tuple(spatial))


def _reduce(grad, values, grid, directions, mode, padding_mode, align_corners):
    dtype = grad.dtype
    n = grid.shape[0]
    nd = grid.shape[-1]
    if mode == _NEAREST or _empty(grad, values, grid):
        return np.zeros(grid.shape, dtype)
    taps = _taps(grid, values.shape[2:], mode, padding_mode, align_corners, len(directions) + 1)
    read = _read(values.astype(dtype, copy=False), taps)
    g = grad.reshape(grad.shape[0], grad.shape[1], -1)
    if mode == _BILINEAR and nd == 2 and not directions:
        return _bilinear_grid_gradient(read, g, taps).reshape(grid.shape)
    if mode == _BILINEAR and nd == 3 and not directions:
        return _trilinear_grid_gradient(read, g, taps).reshape(grid.shape)
    correlation = (read * g[..., None]).sum(1)  # (N, P, T)
    dirs = _flat_directions(directions, n, dtype)
    out = np.empty(taps.index.shape[:2] + (nd,), dtype)
    for axis in range(nd):
        out[..., axis] = (taps.weights(dirs, axis) * correlation).sum(-1)
    return out.reshape(grid.shape)


def _bilinear_grid_gradient(read: np.ndarray, grad: np.ndarray, taps: _Taps) -> np.ndarray:
    """The 2-D bilinear gradient in the grid as PyTorch's kernel computes it (differences of
    neighbours, summed channel after channel, then times the slopes): the same value, rounded
    as PyTorch's in half precision."""
    wx, wy = taps.axis_weights[0], taps.axis_weights[1]
    west, east = wx[0][..., 1], wx[0][..., 0]  # (x - x0, x0 + 1 - x)
    north, south = wy[0][..., 1], wy[0][..., 0]
    nw, ne, sw, se = (read[..., t] for t in range(4))  # (N, C, P)
    dtype = read.dtype
    gx = np.zeros(nw.shape[::2], dtype)
    gy = np.zeros(nw.shape[::2], dtype)
    for ch in range(read.shape[1]):
        g = grad[:, ch]
        gx = gx + ((ne[:, ch] - nw[:, ch]) * south + (se[:, ch] - sw[:, ch]) * north) * g
        gy = gy + ((sw[:, ch] - nw[:, ch]) * east + (se[:, ch] - ne[:, ch]) * west) * g
    # (the slopes: d(x)/d(coordinate), the x1 tap's first derivative)
    return np.stack([gx * wx[1][..., 1], gy * wy[1][..., 1]], axis=-1)


def _trilinear_grid_gradient(read: np.ndarray, grad: np.ndarray, taps: _Taps) -> np.ndarray:
    """The 3-D bilinear gradient in the grid as PyTorch's kernel computes it: for each channel,
    each corner's value times the other two axes' weights times the gradient, added to or
    subtracted from each coordinate's sum, then times the slopes (rounded as PyTorch's in half
    precision)."""
    weights = [taps.axis_weights[a][0] for a in range(3)]  # (N, P, 2) each: x, y, z
    slopes = [taps.axis_weights[a][1][..., 1] for a in range(3)]
    sums = [np.zeros(read.shape[::2][:2], read.dtype) for _ in range(3)]
    for ch in range(read.shape[1]):
        g = grad[:, ch]
        for k, j, i in itertools.product(range(2), repeat=3):  # (x fastest, as the taps)
            value = read[:, ch, :, 4 * k + 2 * j + i]
            corner = (i, j, k)
            for axis in range(3):
                others = [weights[b][..., corner[b]] for b in range(3) if b != axis]
                term = value * others[0] * others[1] * g
                term = np.where(taps.inside[..., 4 * k + 2 * j + i], term, term.dtype.type(0))
                sums[axis] = sums[axis] + term if corner[axis] else sums[axis] - term
    return np.stack([slopes[a] * sums[a] for a in range(3)], axis=-1)


# --- the ops ----------------------------------------------------------------------------------


def _sampler_op(nd: int) -> Any:
    @op(
        f"GridSampler{nd}DBackward0",
        inputs=("input", "grid"),
        name=f"grid_sampler_{nd}d",
        half_native=True,
    )
    def sampler(input, grid, interpolation_mode, padding_mode, align_corners):
        """``input`` read at ``grid`` (modes and paddings as ``torch.grid_sampler``'s codes)."""
        return _gather(input, grid, [], interpolation_mode, padding_mode, align_corners)

    @sampler.derivative("input")
    def _(ops, grad, grid, interpolation_mode, padding_mode, align_corners, input_shape):
        return _pick(ops, "scatter", nd)(
            grad,
            grid,
            None,
            None,
            None,
            interpolation_mode,
            padding_mode,
            align_corners,
            tuple(input_shape[2:]),
        )

    @sampler.derivative("grid")
    def _(ops, grad, input, grid, interpolation_mode, padding_mode, align_corners):
        return _pick(ops, "reduce", nd)(
            grad, input, grid, None, None, None, interpolation_mode, padding_mode, align_corners
        )

    return sampler


def _pick(ops: Any, kind: str, nd: int) -> Any:
    return getattr(ops, f"grid_sampler_{kind}_{nd}d")


def _others(dirs: tuple, i: int, extra: Any = None) -> list:
    """The directions but the ``i``-th (``i = -1``: all), with ``extra`` appended, padded with
    None to three."""
    kept = [d for j, d in enumerate(dirs) if j != i and d is not None]
    if extra is not None:
        kept.append(extra)
    if len(kept) > _MAX_DIRECTIONS:
        raise RuntimeError("grid_sampler: derivatives past the fourth order are not implemented")
    return kept + [None] * (_MAX_DIRECTIONS - len(kept))


def _backward_ops(nd: int) -> tuple[Any, Any, Any]:
    """``gather``, ``scatter`` and ``reduce`` for ``nd`` spatial dimensions, recorded as
    PyTorch's ``GridSampler{nd}DBackwardBackward0``."""
    node = f"GridSampler{nd}DBackwardBackward0"
    dir_names = ("d1", "d2", "d3")

    @op(node, inputs=("values", "grid") + dir_names, half_native=True)
    def gather(
        values,
        grid,
        d1=None,
        d2=None,
        d3=None,
        interpolation_mode=0,
        padding_mode=0,
        align_corners=False,
    ):
        """``sum_t D^m w[d...] * values[index]``: the forward (and its directional
        derivatives in the grid)."""
        return _gather(
            values, grid, _directions(d1, d2, d3), interpolation_mode, padding_mode, align_corners
        )

    @op(node, inputs=("grad", "grid") + dir_names, half_native=True)
    def scatter(
        grad,
        grid,
        d1=None,
        d2=None,
        d3=None,
        interpolation_mode=0,
        padding_mode=0,
        align_corners=False,
        spatial=(),
    ):
        """The adjoint of ``gather`` in ``values``: ``grad`` summed onto the input pixels."""
        return _scatter(
            grad,
            grid,
            _directions(d1, d2, d3),
            interpolation_mode,
            padding_mode,
            align_corners,
            spatial,
        )

    @op(node, inputs=("grad", "values", "grid") + dir_names, half_native=True)
    def reduce(
        grad,
        values,
        grid,
        d1=None,
        d2=None,
        d3=None,
        interpolation_mode=0,
        padding_mode=0,
        align_corners=False,
    ):
        """``sum_t D^(m+1) w[d..., e_l] * sum_c grad * values[index]``: ``gather``'s
        gradient in the grid."""
        return _reduce(
            grad,
            values,
            grid,
            _directions(d1, d2, d3),
            interpolation_mode,
            padding_mode,
            align_corners,
        )

    # gather(values, grid, d): <G, gather> = sum D^m w[d] <G, values[index]>
    @gather.derivative("values")
    def _(
        ops, grad, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners, values_shape
    ):
        return _pick(ops, "scatter", nd)(
            grad,
            grid,
            d1,
            d2,
            d3,
            interpolation_mode,
            padding_mode,
            align_corners,
            tuple(values_shape[2:]),
        )

    @gather.derivative("grid")
    def _(ops, grad, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners):
        return _pick(ops, "reduce", nd)(
            grad, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
        )

    # scatter(g, grid, d): <U, scatter> = sum D^m w[d] <g, U[index]>
    @scatter.derivative("grad")
    def _(ops, grad, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners):
        return _pick(ops, "gather", nd)(
            grad, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
        )

    @scatter.derivative("grid")
    def _(ops, grad_, grad, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners):
        # (grad_ is the cotangent of scatter's output; grad is scatter's own argument)
        return _pick(ops, "reduce", nd)(
            grad, grad_, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
        )

    # reduce(g, v, grid, d): <H, reduce> = sum D^(m+1) w[d, H] <g, v[index]>
    @reduce.derivative("grad")
    def _(ops, grad_, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners):
        dirs = _others((d1, d2, d3), -1, grad_)
        return _pick(ops, "gather", nd)(
            values, grid, *dirs, interpolation_mode, padding_mode, align_corners
        )

    @reduce.derivative("values")
    def _(
        ops,
        grad_,
        grad,
        grid,
        d1,
        d2,
        d3,
        interpolation_mode,
        padding_mode,
        align_corners,
        values_shape,
    ):
        dirs = _others((d1, d2, d3), -1, grad_)
        return _pick(ops, "scatter", nd)(
            grad,
            grid,
            *dirs,
            interpolation_mode,
            padding_mode,
            align_corners,
            tuple(values_shape[2:]),
        )

    @reduce.derivative("grid")
    def _(
        ops, grad_, grad, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
    ):
        dirs = _others((d1, d2, d3), -1, grad_)
        return _pick(ops, "reduce", nd)(
            grad, values, grid, *dirs, interpolation_mode, padding_mode, align_corners
        )

    for i, name in enumerate(dir_names):
        _direction_derivatives(gather, scatter, reduce, nd, i, name)
    return gather, scatter, reduce


def _direction_derivatives(
    gather: Any, scatter: Any, reduce: Any, nd: int, i: int, name: str
) -> None:
    """Each op is linear in each direction: its gradient there is ``reduce`` with that
    direction left out (and, for ``reduce``, the cotangent put in)."""

    def of_gather(
        ops, grad, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
    ):
        dirs = _others((d1, d2, d3), i)
        return _pick(ops, "reduce", nd)(
            grad, values, grid, *dirs, interpolation_mode, padding_mode, align_corners
        )

    def of_scatter(
        ops, grad_, grad, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
    ):
        dirs = _others((d1, d2, d3), i)
        return _pick(ops, "reduce", nd)(
            grad, grad_, grid, *dirs, interpolation_mode, padding_mode, align_corners
        )

    def of_reduce(
        ops, grad_, grad, values, grid, d1, d2, d3, interpolation_mode, padding_mode, align_corners
    ):
        dirs = _others((d1, d2, d3), i, grad_)
        return _pick(ops, "reduce", nd)(
            grad, values, grid, *dirs, interpolation_mode, padding_mode, align_corners
        )

    gather.derivative(name)(of_gather)
    scatter.derivative(name)(of_scatter)
    reduce.derivative(name)(of_reduce)


_SAMPLER_2D = _sampler_op(2)
_SAMPLER_3D = _sampler_op(3)
_GATHER_2D, _SCATTER_2D, _REDUCE_2D = _backward_ops(2)
_GATHER_3D, _SCATTER_3D, _REDUCE_3D = _backward_ops(3)


# --- the public functions ---------------------------------------------------------------------


def _check(input: Tensor, grid: Tensor, interpolation_mode: int, nd: int | None = None) -> None:
    """``torch.grid_sampler``'s argument checks, in its order."""
    in_shape, grid_shape = tuple(input.shape), tuple(grid.shape)
    if in_shape[:1] != grid_shape[:1]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {size_list(in_shape)} and grid with sizes {size_list(grid_shape)}"
        )
    if grid_shape[-1] != len(in_shape) - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {len(in_shape) - 2} in last dimension, "
            f"but got grid with sizes {size_list(grid_shape)}"
        )
    for i in range(2, len(in_shape)):
        if in_shape[i] <= 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {size_list(in_shape)} with dimension {i} being empty"
            )
    if nd is None:
        nd = 2 if len(in_shape) == 4 else 3
    if len(in_shape) != nd + 2 or len(grid_shape) != nd + 2:
        raise RuntimeError(
            f"grid_sampler(): expected {nd + 2}D input and grid with same number of dimensions, "
            f"but got input with sizes {size_list(in_shape)} and grid with sizes "
            f"{size_list(grid_shape)}"
        )
    if nd == 3 and interpolation_mode == _BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    kind = input._data.dtype.kind
    if kind not in "fV":
        kernel = "grid_sampler_2d_cpu_kernel_impl" if nd == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_name(input._data.dtype)}'"
        )
    if grid.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(input._data.dtype)} but found "
            f"{scalar_name(grid._data.dtype)}"
        )


def grid_sampler(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler``: :func:`grid_sample` with the modes as codes (interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    _check(input, grid, interpolation_mode)
    sampler = _SAMPLER_2D if input.dim() == 4 else _SAMPLER_3D
    return sampler(input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))


def grid_sampler_2d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_2d``: :func:`grid_sampler` of a 4-D input."""
    _check(input, grid, interpolation_mode, 2)
    return _SAMPLER_2D(input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))


def grid_sampler_3d(
    input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> Tensor:
    """``torch.grid_sampler_3d``: :func:`grid_sampler` of a 5-D input."""
    _check(input, grid, interpolation_mode, 3)
    return _SAMPLER_3D(input, grid, int(interpolation_mode), int(padding_mode), bool(align_corners))


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """``input`` (``(N, C, H, W)`` or ``(N, C, D, H, W)``) read at the points of ``grid``
    (``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``, x first, in [-1, 1] from the
    first to the last pixel), interpolated by ``mode`` ('bilinear', 'nearest', 'bicubic' (2-D
    only)); points outside read ``padding_mode`` ('zeros', 'border', 'reflection').
    Differentiable in the input and the grid, to any order.

    Example:
        >>> import chainrule as torch
        >>> x = torch.arange(4.0).reshape(1, 1, 2, 2)
        >>> grid = torch.tensor([[[[0.0, 0.0]]]])
        >>> torch.nn.functional.grid_sample(x, grid, align_corners=True)
        tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', "
            f"'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDINGS:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False "
            "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)


PRIMITIVES: dict[str, Any] = {
    "grid_sampler_2d": _SAMPLER_2D,
    "grid_sampler_3d": _SAMPLER_3D,
    "grid_sampler_gather_2d": _GATHER_2D,
    "grid_sampler_scatter_2d": _SCATTER_2D,
    "grid_sampler_reduce_2d": _REDUCE_2D,
    "grid_sampler_gather_3d": _GATHER_3D,
    "grid_sampler_scatter_3d": _SCATTER_3D,
    "grid_sampler_reduce_3d": _REDUCE_3D,
}
