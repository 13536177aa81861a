"""Resizing by interpolation: ``interpolate`` and its nodes (``UpsampleNearest2DBackward0``,
``UpsampleBilinear2DBackward0`` ...), one per mode and spatial rank, as PyTorch records them.

Every mode is separable: along each spatial axis an output position reads a few input
positions (1 for nearest, 2 for linear, 4 for cubic) with weights computed from PyTorch's index
formulas (``area_pixel_compute_source_index``, ``nearest_idx``, the cubic convolution with
``A = -0.75``). The forward gathers and weighs along the last axis first, then the others
(PyTorch's order of sums); the backward scatters the gradient back with the same weights, and
its own derivative (for double backward) is the forward again: both are linear.
Half precision is computed in float32 and rounded once.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._dtype import REDUCED_FLOATS
from ..._frames import user_stacklevel
from ..._tensor import Tensor
from .._registry import op
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_CUBIC_A = -0.75


def _work_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in REDUCED_FLOATS or dtype.kind != "f" else dtype


def _scale_value(scale: float | None, in_size: int, out_size: int, dtype: Any) -> Any:
    """``1 / scale`` when a positive scale factor was given, else ``in / out``."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size) / dtype(out_size)


def _taps(
    mode: str,
    in_size: int,
    out_size: int,
    scale: float | None,
    align_corners: bool,
    dtype: np.dtype,
    exact_shortcuts: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """For one axis: the input index of each (output, tap) and its weight (None: weight 1);
    ``exact_shortcuts``: the axis is one of a 2-d resampling's (see "nearest")."""
    dst = np.arange(out_size)
    if mode in ("nearest", "nearest-exact"):
        # PyTorch computes nearest indices in float32 whatever the dtype.
        f32 = np.float32
        s = _scale_value(scale, in_size, out_size, f32)
        if mode == "nearest":
            # PyTorch's 2-d kernel (upsample_nearest2d) maps out_size == in_size and
            # out_size == 2 * in_size exactly (i, i >> 1) even when a scale factor was given
            # (1.05, 2.05 ...); its 1-d and 3-d kernels use 1 / scale there too.
            if exact_shortcuts and out_size == in_size:
                index = dst
            elif exact_shortcuts and out_size == 2 * in_size:
                index = dst >> 1
            else:
                index = np.floor(dst.astype(f32) * s).astype(np.int64)
        else:
            index = np.floor((dst.astype(f32) + f32(0.5)) * s).astype(np.int64)
        return np.minimum(index, in_size - 1)[:, None], None
    t = dtype.type
    if align_corners:
        s = t(in_size - 1) / t(out_size - 1) if out_size > 1 else t(0)
        src = s * dst.astype(dtype)
    else:
        s = _scale_value(scale, in_size, out_size, t)
        src = s * (dst.astype(dtype) + t(0.5)) - t(0.5)
    if mode == "linear" and out_size == in_size:
        # PyTorch's compute_source_index_and_lambda copies an axis whose size is kept,
        # whatever the scale factor (1.05: the same size, but not scale 1)
        return np.stack([dst, dst], 1), np.stack(
            [np.ones(out_size, dtype), np.zeros(out_size, dtype)], 1
        )
    if mode == "linear":
        if not align_corners:
            src = np.maximum(src, t(0))
        i0 = src.astype(np.int64)
        i1 = i0 + (i0 < in_size - 1)
        lam1 = (src - i0.astype(dtype)).astype(dtype)
        lam0 = (t(1) - lam1).astype(dtype)
        return np.stack([i0, i1], 1), np.stack([lam0, lam1], 1)
    # cubic
    i = np.floor(src).astype(np.int64)
    x = (src - i.astype(dtype)).astype(dtype)
    a = t(_CUBIC_A)

    def near(v: np.ndarray) -> np.ndarray:  # |v| <= 1
        return ((a + t(2)) * v - (a + t(3))) * v * v + t(1)

    def far(v: np.ndarray) -> np.ndarray:  # 1 < |v| < 2
        return ((a * v - t(5) * a) * v + t(8) * a) * v - t(4) * a

    weights = np.stack([far(x + t(1)), near(x), near(t(1) - x), far(t(2) - x)], 1)
    index = np.clip(i[:, None] + np.arange(-1, 3), 0, in_size - 1)
    return index, weights.astype(dtype)


def _axis_taps(
    mode: str,
    in_shape: Sequence[int],
    output_size: Sequence[int],
    scales: Sequence[float | None],
    align_corners: bool,
    dtype: np.dtype,
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    spatial = in_shape[2:]
    return [
        _taps(mode, spatial[d], output_size[d], scales[d], align_corners, dtype, len(spatial) == 2)
        for d in range(len(spatial))
    ]


def _resample(
    x: np.ndarray,
    mode: str,
    output_size: Sequence[int],
    scales: Sequence[float | None],
    align_corners: bool,
) -> np.ndarray:
    work = _work_dtype(x.dtype)
    taps = _axis_taps(mode, x.shape, output_size, scales, align_corners, work)
    if mode == "cubic" and x.dtype in REDUCED_FLOATS:
        # PyTorch's cubic kernel keeps its weights in the half type (sums in float32).
        taps = [(index, w.astype(x.dtype).astype(work)) for index, w in taps]  # type: ignore
    y = x.astype(work, copy=False)
    for d in reversed(range(len(taps))):
        axis = 2 + d
        index, weights = taps[d]
        if weights is None:
            y = np.take(y, index[:, 0], axis=axis)
            continue
        shape = [1] * y.ndim
        shape[axis] = index.shape[0]
        total = None
        for k in range(index.shape[1]):
            term = np.take(y, index[:, k], axis=axis) * weights[:, k].reshape(shape)
            total = term if total is None else total + term
        y = total
    return np.ascontiguousarray(y.astype(x.dtype, copy=False))


def _resample_backward(
    grad: np.ndarray,
    mode: str,
    input_size: Sequence[int],
    scales: Sequence[float | None],
    align_corners: bool,
) -> np.ndarray:
    work = _work_dtype(grad.dtype)
    output_size = grad.shape[2:]
    taps = _axis_taps(mode, tuple(input_size), output_size, scales, align_corners, work)
    g = grad.astype(work, copy=False)
    for d in range(len(taps)):
        axis = 2 + d
        index, weights = taps[d]
        moved = np.moveaxis(g, axis, 0)
        out = np.zeros((input_size[axis],) + moved.shape[1:], work)
        for k in range(index.shape[1]):
            if weights is None:
                np.add.at(out, index[:, k], moved)
            else:
                w = weights[:, k].reshape((-1,) + (1,) * (moved.ndim - 1))
                np.add.at(out, index[:, k], moved * w)
        g = np.moveaxis(out, 0, axis)
    return np.ascontiguousarray(g.astype(grad.dtype, copy=False))


# ----------------------------------------------------------------------------------------------
# The nodes: one forward and one backward op per (mode, rank), each derivative the other.

_NAMES = {
    ("nearest", 1): "UpsampleNearest1D",
    ("nearest", 2): "UpsampleNearest2D",
    ("nearest", 3): "UpsampleNearest3D",
    ("nearest-exact", 1): "UpsampleNearestExact1D",
    ("nearest-exact", 2): "UpsampleNearestExact2D",
    ("nearest-exact", 3): "UpsampleNearestExact3D",
    ("linear", 1): "UpsampleLinear1D",
    ("linear", 2): "UpsampleBilinear2D",
    ("linear", 3): "UpsampleTrilinear3D",
    ("cubic", 2): "UpsampleBicubic2D",
}
_SCALE_NAMES = {
    1: ("scales",),
    2: ("scales_h", "scales_w"),
    3: ("scales_d", "scales_h", "scales_w"),
}


def _with_signature(fn: Any, names: Sequence[str]) -> Any:
    """``fn`` (taking ``*args``) shown with parameters ``names``: the op table reads parameter
    names to know what a derivative reads and what a node saves."""
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    fn.__signature__ = inspect.Signature(params)
    return fn


def _make_ops(mode: str, rank: int) -> tuple[Any, Any]:
    name = _NAMES[(mode, rank)]
    aligned = mode in ("linear", "cubic")
    scale_names = _SCALE_NAMES[rank]
    extra = ("output_size",) + (("align_corners",) if aligned else ()) + scale_names

    def unpack(args: tuple) -> tuple[Any, bool, tuple]:
        output_size = args[0]
        align = bool(args[1]) if aligned else False
        return output_size, align, tuple(args[2:] if aligned else args[1:])

    def forward(self: np.ndarray, *args: Any) -> np.ndarray:
        output_size, align, scales = unpack(args)
        return _resample(self, mode, output_size, scales, align)

    def backward(grad_output: np.ndarray, input_size: Any, *args: Any) -> np.ndarray:
        _, align, scales = unpack(args)
        return _resample_backward(grad_output, mode, input_size, scales, align)

    label = name.lower().replace("upsample", "upsample_")
    forward.__name__ = label
    backward.__name__ = label + "_backward"
    forward_op = op(f"{name}Backward0", half_native=True)(
        _with_signature(forward, ("self",) + extra)
    )
    backward_op = op(f"{name}BackwardBackward0", inputs=("grad_output",), half_native=True)(
        _with_signature(backward, ("grad_output", "input_size") + extra)
    )

    def grad_of_forward(ops: Any, grad: Any, *args: Any) -> Any:
        # args: the extra parameters, then self's shape
        return getattr(ops, backward.__name__)(grad, tuple(args[-1]), *args[:-1])

    def grad_of_backward(ops: Any, grad: Any, *args: Any) -> Any:
        return getattr(ops, forward.__name__)(grad, *args)

    forward_op.op.derivative("self")(
        _with_signature(grad_of_forward, ("ops", "grad") + extra + ("self_shape",))
    )
    backward_op.op.derivative("grad_output")(
        _with_signature(grad_of_backward, ("ops", "grad") + extra)
    )
    return forward_op, backward_op


_OPS = {key: _make_ops(*key) for key in _NAMES}
PRIMITIVES: dict[str, Any] = {}
for _forward, _backward in _OPS.values():
    PRIMITIVES[_forward.op.forward.__name__] = _forward
    PRIMITIVES[_backward.op.forward.__name__] = _backward


# ----------------------------------------------------------------------------------------------
# nn.functional.interpolate


_MODES_NEEDING = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _output_size(
    input: Tensor, size: Any, scale_factor: Any
) -> tuple[list[int] | None, list[Any] | None]:
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, list | tuple):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, int | np.integer) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(s) for s in size]}"
                )
            return [int(s) for s in size], None
        return [int(size)] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, list | tuple):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            return None, list(scale_factor)
        return None, [scale_factor] * dim
    raise ValueError("either size or scale_factor should be defined")


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dimensions of ``(N, C, *spatial)`` input to ``size``, or by
    ``scale_factor``, with ``mode`` ``nearest``, ``nearest-exact``, ``linear`` (3-d),
    ``bilinear``/``bicubic`` (4-d), ``trilinear`` (5-d) or ``area`` (adaptive average pooling).

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([[[1., 2.]]])
        >>> torch.nn.functional.interpolate(x, scale_factor=2, mode="linear")
        tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    output_size, scale_factors = _output_size(input, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and scale_factors is not None:
        output_size = [
            math.floor(float(input.shape[i + 2]) * scale_factors[i]) for i in range(input.dim() - 2)
        ]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
            "modes and requires a 4-D tensor as input"
        )
    rank = input.dim() - 2
    if mode == "area" and rank in (1, 2, 3):
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[rank - 1]
        return pool(input, output_size if rank > 1 else output_size[0])
    kind = {"nearest": "nearest", "nearest-exact": "nearest-exact", "bicubic": "cubic"}.get(
        mode, "linear" if mode in _MODES_NEEDING else None
    )
    needed = _MODES_NEEDING.get(mode, 4 if mode == "bicubic" else None)
    if (
        kind is not None
        and (needed is None or needed == input.dim())
        and rank in (1, 2, 3)
        and (kind, rank) in _OPS
    ):
        if antialias:
            raise NotImplementedError("chainrule: interpolate(antialias=True) is not implemented")
        return _upsample(input, kind, rank, output_size, scale_factors, bool(align_corners))
    if mode in _MODES_NEEDING and input.dim() in (3, 4, 5):
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {_MODES_NEEDING[mode]}D input"
        )
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})"
    )


def _upsample(
    input: Tensor,
    kind: str,
    rank: int,
    output_size: list[int] | None,
    scale_factors: list[Any] | None,
    align_corners: bool,
) -> Tensor:
    spatial = list(input.shape[2:])
    if output_size is None:
        output_size = [
            math.floor(spatial[i] * float(scale_factors[i]))  # type: ignore[index]
            for i in range(rank)
        ]
        scales: tuple = tuple(float(s) for s in scale_factors)  # type: ignore[union-attr]
    else:
        scales = (None,) * rank
    for o in output_size:
        if o <= 0:
            described_in = ", ".join(
                f"{d}: {s}" for d, s in zip("DHW"[-rank:], spatial, strict=True)
            )
            described_out = ", ".join(
                f"{d}: {s}" for d, s in zip("DHW"[-rank:], output_size, strict=True)
            )
            joint = " and" if rank == 1 else ""
            raise RuntimeError(
                "Input and output sizes should be greater than 0, but got input "
                f"({described_in}){joint} output ({described_out})"
            )
    forward_op, _ = _OPS[(kind, rank)]
    args: tuple = (tuple(output_size),)
    if kind in ("linear", "cubic"):
        args += (align_corners,)
    return forward_op(input, *args, *scales)


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`interpolate` (PyTorch warns)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=user_stacklevel(),
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')`` (PyTorch warns)."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=user_stacklevel(),
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` (PyTorch warns)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=user_stacklevel(),
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
