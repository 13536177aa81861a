"""PyTorch's tensor printing, reproduced: ``tensor([6.], grad_fn=<MulBackward0>)``.

The rules (learned from PyTorch's behaviour): every element of a tensor is printed with one
shared format and width. Integer-valued floats print as ``5.``; floats switch to scientific
notation when the non-zero finite magnitudes span more than a factor 1000, exceed 1e8, or (for
non-integers) go below 1e-4; otherwise they get ``precision`` decimals. Tensors with more than
``threshold`` elements are summarised with ``...``, keeping ``edgeitems`` per edge, and the
format is chosen from the kept elements only. Lines wrap at ``linewidth``; nested brackets are
indented under the prefix. Suffixes (``size=``, ``dtype=``, ``grad_fn=``, ``requires_grad=``)
follow, on a new line when they would pass the line width.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["format_tensor", "set_printoptions", "get_printoptions", "printoptions"]


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (``torch.set_printoptions``); ``sci_mode`` is always assigned."""
    if profile is not None:
        for key, value in _PROFILES[profile].items():
            setattr(_OPTIONS, key, value)
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
    """The current print options as a dict."""
    return {
        "precision": _OPTIONS.precision,
        "threshold": _OPTIONS.threshold,
        "edgeitems": _OPTIONS.edgeitems,
        "linewidth": _OPTIONS.linewidth,
        "sci_mode": _OPTIONS.sci_mode,
    }


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ----------------------------------------------------------------------------------------------
# Choosing a format


class _Formatter:
    """One format for all the elements of a (real) tensor."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not self.floating:
            for value in flat.tolist():
                self.width = max(self.width, len(str(value)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return  # only zeros, infinities and NaNs: integer style, width from each element
        magnitudes = np.abs(finite.astype(np.float64))
        low = float(magnitudes.min())
        high = float(magnitudes.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8
        else:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        if _OPTIONS.sci_mode is not None:
            self.sci_mode = _OPTIONS.sci_mode
        # The width is that of the widest element in the format finally used.
        precision = _OPTIONS.precision
        values_list = finite.astype(np.float64).tolist()
        if self.sci_mode:
            self.width = max(len(f"{v:.{precision}e}") for v in values_list)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in values_list)
        else:
            self.width = max(len(f"{v:.{precision}f}") for v in values_list)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.width}.{_OPTIONS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{_OPTIONS.precision}f}"
        else:
            text = str(value)
        return " " * (self.width - len(text)) + text


# ----------------------------------------------------------------------------------------------
# Laying out elements


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (edge items of every dimension), for the format."""
    edge = _OPTIONS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return np.empty((0,) * values.ndim, values.dtype)
    rows = range(values.shape[0])
    if values.shape[0] > 2 * edge:
        rows = [*range(edge), *range(values.shape[0] - edge, values.shape[0])]
    return np.stack([_summarized(values[i]) for i in rows])


class _Layout:
    """Formats elements (real, or complex with a second formatter for imaginary parts)."""

    def __init__(self, real: _Formatter, imag: _Formatter | None) -> None:
        self.real = real
        self.imag = imag

    def element_width(self) -> int:
        width = self.real.width + 2
        if self.imag is not None:
            width += self.imag.width + 1
        return width

    def element(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        if imag[0] in "+-":
            return real + imag
        return real + "+" + imag

    def scalar(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        if imag[0] in "+-":
            return real + imag
        return real + "+" + imag

    def vector(self, values: np.ndarray, indent: int, summarize: bool) -> str:
        per_line = max(1, math.floor((_OPTIONS.linewidth - indent) / self.element_width()))
        edge = _OPTIONS.edgeitems
        if summarize and not edge:
            items = ["..."]
        elif summarize and values.shape[0] > 2 * edge:
            items = (
                [self.element(v) for v in values[:edge].tolist()]
                + [" ..."]
                + [self.element(v) for v in values[-edge:].tolist()]
            )
        else:
            items = [self.element(v) for v in values.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"

    def nested(self, values: np.ndarray, indent: int, summarize: bool) -> str:
        if values.ndim == 0:
            return self.scalar(values.item())
        if values.ndim == 1:
            return self.vector(values, indent, summarize)
        edge = _OPTIONS.edgeitems
        count = values.shape[0]
        if summarize and count > 2 * edge:
            parts = (
                [self.nested(values[i], indent + 1, summarize) for i in range(edge)]
                + ["..."]
                + [self.nested(values[i], indent + 1, summarize) for i in range(count - edge, count)]
            )
        else:
            parts = [self.nested(values[i], indent + 1, summarize) for i in range(count)]
        separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
        return "[" + separator.join(parts) + "]"


def _contents(data: np.ndarray, indent: int) -> str:
    if data.size == 0:
        return "[]"
    summarize = data.size > _OPTIONS.threshold
    if data.dtype == np.float16:
        data = data.astype(np.float32)
    if data.dtype.kind == "c":
        real = np.ascontiguousarray(data.real)
        imag = np.ascontiguousarray(data.imag)
        layout = _Layout(
            _Formatter(_summarized(real) if summarize else real),
            _Formatter(_summarized(imag) if summarize else imag),
        )
    else:
        layout = _Layout(_Formatter(_summarized(data) if summarize else data), None)
    return layout.nested(data, indent, summarize)


def _printed_length(suffix: str) -> int:
    """Length as PyTorch would print it: layout follows PyTorch's text, in which this
    package's name is ``torch``, so ``chainrule.float64`` wraps where ``torch.float64`` does."""
    return len(suffix) - suffix.count("chainrule.") * (len("chainrule.") - len("torch."))


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        length = _printed_length(suffix)
        if last_line + length + 2 > _OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + length
        else:
            parts.append(", " + suffix)
            last_line += length + 2
    parts.append(")")
    return "".join(parts)


_DEFAULT_COMPLEX = {"float32": "complex64", "float64": "complex128", "float16": "complex64"}


def format_tensor(
    data: np.ndarray,
    *,
    dtype_name: str,
    default_dtype_name: str = "float32",
    suffixes: Sequence[str] = (),
    prefix: str = "tensor(",
) -> str:
    """The repr PyTorch prints for a tensor holding ``data``, e.g. ``tensor([1., 2.])``.

    ``suffixes`` (``grad_fn=<...>`` or ``requires_grad=True``) come after ``size=``/``dtype=``.
    """
    indent = len(prefix)
    extra: list[str] = []
    if data.size == 0:
        if data.ndim != 1:
            extra.append("size=" + str(tuple(data.shape)))
        if dtype_name != default_dtype_name:
            extra.append(f"dtype=chainrule.{dtype_name}")
        text = "[]"
    else:
        if not _OPTIONS.edgeitems:
            extra.append("size=" + str(tuple(data.shape)))
        default_names = (default_dtype_name, _DEFAULT_COMPLEX.get(default_dtype_name), "int64", "bool")
        if dtype_name not in default_names:
            extra.append(f"dtype=chainrule.{dtype_name}")
        text = _contents(data, indent)
    return _add_suffixes(prefix + text, [*extra, *suffixes], indent)
