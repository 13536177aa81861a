"""``func.rearrange``: ``einops.rearrange`` patterns (``"b (h w) c -> b c h w"``) as a reshape,
a permutation and a reshape, with the errors ``torch.func.rearrange`` gives.

A pattern names the input's axes on the left and the output's on the right; parentheses group
axes into one dimension (split on the left, merged on the right), ``...`` stands for the axes
not named, and ``1`` is an axis of size 1 (dropped on the left, added on the right). Lengths
that a split cannot infer are given as keywords (``h=2``).
"""

from __future__ import annotations

import keyword
import math
import warnings
from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor
from ..ops.shape import stack

__all__ = ["DimensionBindError", "rearrange"]

_ELLIPSIS = "\u2026"  # (one character for "...", as einops parses it)


class DimensionBindError(Exception):
    """The sizes given or implied for a pattern's axes do not fit the tensor (the class of
    PyTorch's first-class-dimension errors, raised by ``torch.func.rearrange``)."""


class _Side:
    """One side of a pattern: ``composition`` lists each dimension as a list of axis names (a
    group; an empty list for ``1``) or the ellipsis."""

    def __init__(self, expression: str) -> None:
        self.has_ellipsis = False
        self.ellipsis_in_group = False
        self.identifiers: set[str] = set()
        self.non_unit_anonymous = False
        self.composition: list[list[str] | str] = []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise ValueError(
                    "Expression may contain dots only inside ellipsis (...); only one ellipsis "
                    "for tensor "
                )
            expression = expression.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group: list[str] | None = None
        current = ""
        for char in expression + " ":
            if char in "() ":
                if current:
                    self._add(current, group)
                current = ""
                if char == "(":
                    if group is not None:
                        raise ValueError(
                            "Axis composition is one-level (brackets inside brackets not allowed)"
                        )
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                current += char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")

    def _add(self, name: str, group: list[str] | None) -> None:
        if name in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        if name == _ELLIPSIS:
            self.identifiers.add(name)
            if group is None:
                self.composition.append(name)
            else:
                group.append(name)
                self.ellipsis_in_group = True
            return
        if name.isdecimal():
            if int(name) == 1:
                if group is None:
                    self.composition.append([])
                return
            if int(name) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(name)}")
            self.non_unit_anonymous = True
            anonymous = f"{name}-axis#{len(self.composition)}"  # (never equal to another)
            self.identifiers.add(anonymous)
            if group is None:
                self.composition.append([anonymous])
            else:
                group.append(anonymous)
            return
        reason = _invalid_name_reason(name)
        if reason:
            raise ValueError(f"Invalid axis identifier: {name}\n{reason}")
        self.identifiers.add(name)
        if group is None:
            self.composition.append([name])
        else:
            group.append(name)


def _invalid_name_reason(name: str) -> str:
    if not name.isidentifier():
        return "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        return "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        warnings.warn(
            f"It is discouraged to use axes names that are keywords: {name}",
            RuntimeWarning,
            stacklevel=5,
        )
    if name == "axis":
        warnings.warn(
            "It is discouraged to use 'axis' as an axis name and will raise an error in future",
            FutureWarning,
            stacklevel=5,
        )
    return ""


def _parse(pattern: str, axes_lengths: dict[str, Any]) -> tuple[_Side, _Side]:
    try:
        left_text, right_text = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left, right = _Side(left_text), _Side(right_text)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unit_anonymous or right.non_unit_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(
            "Identifiers only on one side of rearrange expression (should be on both): "
            f"{difference}"
        )
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {set(unmatched)}")
    return left, right


def _pack(names: Sequence[str]) -> str:
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """``tensor`` rearranged by an ``einops``-style ``pattern`` (a list of tensors is stacked
    first); ``axes_lengths`` give the sizes a split cannot infer.

    Example:
        >>> import chainrule as torch
        >>> images = torch.zeros(8, 30, 40, 3)
        >>> torch.func.rearrange(images, "b h w c -> b c h w").shape
        chainrule.Size([8, 3, 30, 40])
        >>> torch.func.rearrange(images, "b (h h2) w c -> (b h2) h w c", h2=2).shape
        chainrule.Size([16, 15, 40, 3])
    """
    if not isinstance(tensor, Tensor):
        tensor = stack(list(tensor))
    left, right = _parse(pattern, axes_lengths)
    shape = tuple(tensor.shape)
    ndim = len(shape)
    unit_count = sum(1 for dim in left.composition if dim == [])
    if left.has_ellipsis:
        ellipsis_dims = ndim - (len(left.composition) - 1)
        pattern_ndim = unit_count + len(left.identifiers) - 1
        if pattern_ndim > ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({pattern_ndim}) must be less than or equal to "
                f"the number of dimensions in the tensor ({ndim})"
            )
    else:
        ellipsis_dims = 0
        if len(left.composition) != ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the "
                f"number of dimensions in the tensor ({ndim})"
            )
    if ndim == 0 and not left.composition:
        return tensor
    # Every elementary axis of the left side, named as PyTorch's first-class dims (d0, d1 ...)
    # in the order of the left side: its size, and which axis (name, ellipsis part) it is.
    dim_of: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    units: list[str] = []
    order: list[str] = []
    position = 0
    for entry in left.composition:
        if entry == _ELLIPSIS:
            names = [f"d{len(order) + j}" for j in range(ellipsis_dims)]
            dim_of[_ELLIPSIS] = names
            for j, name in enumerate(names):
                sizes[name] = shape[position + j]
            order.extend(names)
            position += ellipsis_dims
            continue
        names = []
        for identifier in entry or [None]:
            name = f"d{len(order)}"
            order.append(name)
            names.append(name)
            if identifier is None:
                units.append(name)
            else:
                dim_of[identifier] = [name]
                if identifier in axes_lengths:
                    sizes[name] = axes_lengths[identifier]
        _bind_sizes(names, shape[position], sizes)
        position += 1
    x = tensor.reshape(*(sizes[name] for name in order)) if order else tensor
    if units:  # (PyTorch sums its size-1 anonymous axes away)
        x = x.sum(tuple(order.index(name) for name in units))
        order = [name for name in order if name not in units]
    target: list[str] = []
    groups: list[list[str]] = []
    for entry in right.composition:
        if entry == _ELLIPSIS:
            for name in dim_of[_ELLIPSIS]:
                groups.append([name])
            target.extend(dim_of[_ELLIPSIS])
            continue
        group = [name for identifier in entry for name in dim_of[identifier]]
        groups.append(group)
        target.extend(group)
    if target:
        x = x.permute(*(order.index(name) for name in target))
    return x.reshape(*(math.prod(sizes[name] for name in group) for group in groups))


def _bind_sizes(names: list[str], size: int, sizes: dict[str, int]) -> None:
    """Give the axes of one left dimension their sizes: those not given are inferred (one at
    most); PyTorch's errors where they cannot be."""
    unknown = [name for name in names if name not in sizes]
    if len(unknown) > 1:
        raise DimensionBindError(
            f"cannot infer the sizes of two dimensions at once {unknown[0]} and {unknown[1]}"
        )
    known = math.prod(sizes[name] for name in names if name in sizes)
    if unknown:
        if known == 0 or size % known:
            given = tuple("?" if name in unknown else sizes[name] for name in names)
            raise DimensionBindError(
                f"inferred dimension does not evenly fit into larger dimension: {size} vs {given}"
            )
        sizes[unknown[0]] = size // known
    elif known != size:
        raise DimensionBindError(
            f"Dimension sizes to do not match ({size} != {known}) when matching dimension pack "
            f"{_pack(names)}"
        )
