"""Named tuples returned by reductions with indices: ``chainrule.return_types.max`` and co.

PyTorch returns ``torch.return_types.max(values=..., indices=...)`` from ``max(dim)``: a tuple
subclass (it unpacks, indexes and slices like a tuple) whose fields are also attributes, printed
as::

    torch.return_types.max(
    values=tensor([5., 6.]),
    indices=tensor([1, 2]))

The types here behave and print the same way, with ``chainrule.`` in place of ``torch.``. This
module is also importable as ``chainrule.return_types``.

Example:
    >>> import chainrule as torch
    >>> values, indices = torch.tensor([[1., 5.], [4., 2.]]).max(1)
    >>> indices
    tensor([1, 0])
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__all__ = [
    "max", "min", "median", "aminmax", "cummax", "cummin", "frexp", "nanmedian", "mode",
]

_MODULE = "chainrule.return_types"


class _StructSeq(tuple):
    """Base of the return types: a tuple whose items are also named attributes."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> _StructSeq:
        # CPython's struct sequences: ``(sequence, dict=None)``, and their argument errors.
        given = len(args) + len(kwargs)
        if given > 2:
            raise TypeError(f"structseq() takes at most 2 arguments ({given} given)")
        params = dict(zip(("sequence", "dict"), args, strict=False))
        for key in ("sequence", "dict"):
            if key in kwargs:
                if key in params:
                    raise TypeError(
                        f"argument for structseq() given by name ('{key}') and position "
                        f"({1 if key == 'sequence' else 2})"
                    )
                params[key] = kwargs[key]
        if "sequence" not in params:
            raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
        for key in kwargs:
            if key not in ("sequence", "dict"):
                raise TypeError(f"'{key}' is an invalid keyword argument for structseq()")
        sequence = params["sequence"]
        extra = params.get("dict")
        if extra is not None and not isinstance(extra, dict):
            raise TypeError(f"{_MODULE}.{cls.__name__}() takes a dict as second arg, if any")
        if isinstance(sequence, str | bytes) or not hasattr(sequence, "__iter__"):
            raise TypeError("constructor requires a sequence")
        items = tuple(sequence)
        if len(items) != len(cls._fields):
            raise TypeError(
                f"{_MODULE}.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(items)}-sequence given)"
            )
        return super().__new__(cls, items)

    @property
    def n_fields(self) -> int:
        """Number of fields (as PyTorch's struct sequences expose it)."""
        return len(self._fields)

    n_sequence_fields = n_fields

    @property
    def n_unnamed_fields(self) -> int:
        """Always 0: every field has a name."""
        return 0

    def __repr__(self) -> str:
        body = ",\n".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)
        )
        return f"{_MODULE}.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple[Any, tuple[tuple[Any, ...]]]:
        return (type(self), (tuple(self),))


def _field(index: int, name: str) -> property:
    def get(self: _StructSeq) -> Any:
        return tuple.__getitem__(self, index)

    return property(get, doc=f"Field {index} ({name}).")


def _make(name: str, fields: tuple[str, ...]) -> type[_StructSeq]:
    namespace: dict[str, Any] = {"__slots__": (), "_fields": fields, "__module__": _MODULE}
    for index, field in enumerate(fields):
        namespace[field] = _field(index, field)
    cls = type(name, (_StructSeq,), namespace)
    cls.__qualname__ = name
    return cls


if TYPE_CHECKING:
    # What ``_make`` builds, spelled out for type checkers (``values, indices = x.max(1)`` and
    # ``x.max(1).indices`` type-check; the Tensor stub returns these).
    from ._tensor import Tensor

    class _ValuesIndices(tuple[Tensor, Tensor]):
        @property
        def values(self) -> Tensor: ...
        @property
        def indices(self) -> Tensor: ...

    class max(_ValuesIndices): ...

    class min(_ValuesIndices): ...

    class median(_ValuesIndices): ...

    class sort(_ValuesIndices): ...

    class topk(_ValuesIndices): ...

    class kthvalue(_ValuesIndices): ...

    class nanmedian(_ValuesIndices): ...

    class mode(_ValuesIndices): ...

    class cummax(_ValuesIndices): ...

    class cummin(_ValuesIndices): ...

    class frexp(tuple[Tensor, Tensor]):
        @property
        def mantissa(self) -> Tensor: ...
        @property
        def exponent(self) -> Tensor: ...

    class aminmax(tuple[Tensor, Tensor]):
        @property
        def min(self) -> Tensor: ...
        @property
        def max(self) -> Tensor: ...

    class histogram(tuple[Tensor, Tensor]):
        @property
        def hist(self) -> Tensor: ...
        @property
        def bin_edges(self) -> Tensor: ...

    class histogramdd(tuple[Tensor, tuple[Tensor, ...]]):
        @property
        def hist(self) -> Tensor: ...
        @property
        def bin_edges(self) -> tuple[Tensor, ...]: ...

else:
    max = _make("max", ("values", "indices"))  # noqa: A001 - PyTorch's type name
    min = _make("min", ("values", "indices"))  # noqa: A001 - PyTorch's type name
    median = _make("median", ("values", "indices"))
    sort = _make("sort", ("values", "indices"))
    topk = _make("topk", ("values", "indices"))
    kthvalue = _make("kthvalue", ("values", "indices"))
    nanmedian = _make("nanmedian", ("values", "indices"))
    mode = _make("mode", ("values", "indices"))
    aminmax = _make("aminmax", ("min", "max"))
    histogram = _make("histogram", ("hist", "bin_edges"))
    histogramdd = _make("histogramdd", ("hist", "bin_edges"))
    cummax = _make("cummax", ("values", "indices"))
    cummin = _make("cummin", ("values", "indices"))
    frexp = _make("frexp", ("mantissa", "exponent"))

# ``import chainrule.return_types`` works as ``import torch.return_types`` does.
sys.modules.setdefault(_MODULE, sys.modules[__name__])
