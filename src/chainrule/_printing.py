"""Tensor printing that reproduces PyTorch's ``repr`` character for character.

The only intended difference from PyTorch is the dtype prefix: ``dtype=chainrule.int32`` where
PyTorch prints ``dtype=torch.int32``. The rules, learned by comparing against PyTorch:

* Every element of a tensor is printed in one shared style, right-aligned to one shared width.
  The style and width are chosen from the *shown* elements only (see summarisation below).
* Floating tensors: the style is picked from the finite, non-zero values. If they are all
  integers, the tensor prints in "integer mode" (``5.``, ``-0.``); otherwise with ``precision``
  decimals. Scientific notation is chosen when max/min of the magnitudes exceeds 1000, the
  maximum exceeds 1e8, or the minimum is below 1e-4; the ``sci_mode`` option overrides that.
  The width is that of the widest finite non-zero value, at least 1: zeros, ``inf`` and ``nan``
  do not widen it (so ``tensor([0., inf, -inf])`` is not aligned).
* Integer and bool tensors print ``str(value)`` right-aligned (``tensor([ True, False])``).
* Complex tensors format real and imaginary parts with separate styles, ``1.+2.j``.
* Tensors with more than ``threshold`` elements are summarised: each dimension longer than
  ``2 * edgeitems`` shows only its first and last ``edgeitems`` entries around ``...``.
* One-dimensional rows wrap to fit ``linewidth``; continuation lines, nested brackets and
  suffixes are indented by the length of the prefix (``tensor(``). Slices of a 3-d or deeper
  tensor are separated by ``ndim - 2`` blank lines.
* Suffixes follow the values: ``size=`` (empty tensors that are not 1-d, or ``edgeitems=0``),
  ``dtype=`` (when not implied), then the caller's (``grad_fn=<...>``, ``requires_grad=True``).
  A suffix that would pass the line width goes on its own line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._dtype import REPR_NAMESPACE
from ._meta import MetaArray

__all__ = ["format_tensor", "get_printoptions", "printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    """The global print options, with PyTorch's defaults (the field order is PyTorch's too)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()

_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

# PyTorch's layout decisions are made on its own text, where the dtype prefix is "torch."
# (ours is REPR_NAMESPACE's: "chainrule.", or "torch." under install_as_torch()).
_TORCH_PREFIX = "torch."


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options for printing tensors, exactly like ``torch.set_printoptions``.

    Args:
        precision: Number of decimals for floating point output (default 4).
        threshold: Element count above which a tensor is summarised (default 1000).
        edgeitems: Items kept at the start and end of each summarised dimension (default 3).
        linewidth: Characters per line before rows wrap (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``: resets the four options above
            before any explicitly given ones apply. Other names are ignored, as in PyTorch.
        sci_mode: ``True``/``False`` force or forbid scientific notation; ``None`` lets the
            values decide. Unlike the other options it is always assigned, so every call
            without ``sci_mode`` resets it to ``None``.
    """
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(_OPTIONS, name, value)
    if precision is not None:
        _OPTIONS.precision = precision
    if threshold is not None:
        _OPTIONS.threshold = threshold
    if edgeitems is not None:
        _OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTIONS.linewidth = linewidth
    _OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`.

    The keys and values are those of ``torch._tensor_str.get_printoptions()``:
    ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and ``sci_mode``.
    """
    return dataclasses.asdict(_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Context manager that applies :func:`set_printoptions` and restores the old options."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ----------------------------------------------------------------------------------------------
# The shared style of the elements


class _ElementFormat:
    """One style and width for all the elements of a real (non-complex) tensor.

    Built from the elements that will be shown; formats any one element as a padded string.
    """

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind in "fV"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = shown.reshape(-1)
        if self.floating:
            self._choose_float_style(flat)
        elif flat.size:
            # The printed length of an int or bool depends only on the value: measure each once.
            self.width = max(len(str(value)) for value in np.unique(flat).tolist())

    def _choose_float_style(self, flat: np.ndarray) -> None:
        values = flat.astype(np.float64)
        values = np.unique(values[np.isfinite(values) & (values != 0)])
        if values.size == 0:
            return  # only zeros, infinities and NaNs: integer mode, width 1
        magnitudes = np.abs(values)
        smallest = float(magnitudes.min())
        largest = float(magnitudes.max())
        self.int_mode = bool(np.all(values == np.ceil(values)))
        if _OPTIONS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = _OPTIONS.sci_mode
        precision = _OPTIONS.precision
        if self.sci_mode:
            texts = [f"{value:.{precision}e}" for value in values.tolist()]
        elif self.int_mode:
            texts = [f"{value:.0f}." for value in values.tolist()]
        else:
            texts = [f"{value:.{precision}f}" for value in values.tolist()]
        self.width = max(len(text) for text in texts)

    def format(self, value: Any) -> str:
        """``value`` (a Python scalar) in the shared style, right-aligned to the shared width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{_OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{_OPTIONS.precision}f}"
        return text.rjust(self.width)


class _ElementPrinter:
    """Prints single elements, real or complex (a second style for the imaginary parts)."""

    def __init__(self, real: _ElementFormat, imag: _ElementFormat | None) -> None:
        self.real = real
        self.imag = imag

    def slot_width(self) -> int:
        """The room one element takes in a row, with its ``", "`` separator (for wrapping)."""
        width = self.real.width + 2
        if self.imag is not None:
            width += self.imag.width + 1  # the imaginary part and its "j"
        return width

    def __call__(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        if imag[0] not in "+-":  # a sign is already there for negatives (and -0.)
            imag = "+" + imag
        return real + imag


# ----------------------------------------------------------------------------------------------
# Laying out the elements


def _shown_sample(values: np.ndarray) -> np.ndarray:
    """The elements a summarised tensor shows: the edge items of every long dimension."""
    edge = _OPTIONS.edgeitems
    for axis, length in enumerate(values.shape):
        if length > 2 * edge:
            kept = [*range(edge), *range(length - edge, length)]
            values = np.take(values, kept, axis=axis)
    return values


def _shown_indices(length: int, summarize: bool) -> list[int | None]:
    """Indices shown along a dimension, with ``None`` where the ``...`` goes."""
    edge = _OPTIONS.edgeitems
    if summarize and length > 2 * edge:
        return [*range(edge), None, *range(length - edge, length)]
    return list(range(length))


class _Layout:
    """Arranges the printed elements into PyTorch's nested, wrapped brackets."""

    def __init__(self, printer: _ElementPrinter, summarize: bool) -> None:
        self.printer = printer
        self.summarize = summarize

    def block(self, values: np.ndarray, indent: int) -> str:
        """The text of ``values``, whose first line starts at column ``indent``."""
        if values.ndim == 0:
            return self.printer(values.item())
        if values.ndim == 1:
            return self.row(values, indent)
        parts = [
            "..." if index is None else self.block(values[index], indent + 1)
            for index in _shown_indices(values.shape[0], self.summarize)
        ]
        separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
        return "[" + separator.join(parts) + "]"

    def row(self, values: np.ndarray, indent: int) -> str:
        """A 1-d tensor, wrapped so that each line fits the line width."""
        if self.summarize and _OPTIONS.edgeitems == 0:
            items = ["..."]  # nothing but the ellipsis, without its usual leading space
        else:
            elements = values.tolist()
            items = [
                " ..." if index is None else self.printer(elements[index])
                for index in _shown_indices(values.shape[0], self.summarize)
            ]
        per_line = max(1, math.floor((_OPTIONS.linewidth - indent) / self.printer.slot_width()))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_values(data: np.ndarray, indent: int) -> str:
    """The bracketed values of a non-empty tensor."""
    summarize = data.size > _OPTIONS.threshold
    shown = _shown_sample(data) if summarize else data
    if data.dtype.kind == "c":
        printer = _ElementPrinter(_ElementFormat(shown.real), _ElementFormat(shown.imag))
    else:
        printer = _ElementPrinter(_ElementFormat(shown), None)
    return _Layout(printer, summarize).block(data, indent)


def _torch_length(text: str) -> int:
    """The length ``text`` has in PyTorch's output, where ``chainrule.`` reads ``torch.``."""
    ours = REPR_NAMESPACE[0] + "."
    return len(text) - text.count(ours) * (len(ours) - len(_TORCH_PREFIX))


def _append_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """Close the repr, adding ``", suffix"`` or, past the line width, ``",\\n   suffix"``."""
    parts = [text]
    # PyTorch's measure of the last line, which counts two more characters than it holds.
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        length = _torch_length(suffix)
        if line_length + length + 2 > _OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_length = indent + length
        else:
            parts.append(", " + suffix)
            line_length += length + 2
    parts.append(")")
    return "".join(parts)


def _implied_dtypes(default_dtype_name: str) -> tuple[str, ...]:
    """Dtypes a non-empty tensor's repr leaves out: the defaults for Python scalars."""
    default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
    return (default_dtype_name, default_complex, "int64", "bool")


def format_tensor(
    data: np.ndarray,
    *,
    dtype_name: str,
    default_dtype_name: str = "float32",
    suffixes: Sequence[str] = (),
    prefix: str = "tensor(",
) -> str:
    """The repr PyTorch prints for a tensor holding ``data``.

    For example ``tensor([6.], grad_fn=<MulBackward0>)`` or
    ``tensor([1, 2], dtype=chainrule.int32)``.

    Args:
        data: The values: float16/32/64, complex64/128, int8/16/32/64, uint8 or bool, of any
            shape, including 0-d and empty.
        dtype_name: The tensor's dtype name (``"float32"``, ``"int64"``, ``"bool"``, ...),
            printed as ``dtype=chainrule.<name>`` unless implied.
        default_dtype_name: The current default floating dtype. ``dtype=`` is left out for it,
            its complex counterpart, ``int64`` and ``bool``; for an empty tensor, only for it.
        suffixes: Extra ``key=value`` texts (``grad_fn=<MulBackward0>``,
            ``requires_grad=True``) to append after ``size=`` and ``dtype=``.
        prefix: The text before the values. Continuation lines are indented by the length of
            its last line, so ``"Parameter containing:\\ntensor("`` indents like ``"tensor("``.

    Returns:
        The full repr; ``str()`` of a tensor is the same text.
    """
    indent = len(prefix) - (prefix.rfind("\n") + 1)
    dtype_suffix = f"dtype={REPR_NAMESPACE[0]}.{dtype_name}"
    if type(data) is MetaArray:  # no values: the device, the size and any dtype but the default
        extra = ["device='meta'", f"size={tuple(data.shape)}"]
        if dtype_name != default_dtype_name:
            extra.append(dtype_suffix)
        return _append_suffixes(prefix + "...", [*extra, *suffixes], indent)
    data = np.asarray(data)
    extra: list[str] = []
    if data.size == 0:
        # Nothing shows the shape or the dtype, so both are spelled out (1-d shape excepted).
        if data.ndim != 1:
            extra.append(f"size={tuple(data.shape)}")
        if dtype_name != default_dtype_name:
            extra.append(dtype_suffix)
        body = "[]"
    else:
        if _OPTIONS.edgeitems == 0:
            extra.append(f"size={tuple(data.shape)}")
        if dtype_name not in _implied_dtypes(default_dtype_name):
            extra.append(dtype_suffix)
        body = _format_values(data, indent)
    return _append_suffixes(prefix + body, [*extra, *suffixes], indent)
