"""``Tensor.storage()`` (PyTorch's deprecated ``TypedStorage``) compared with PyTorch: the
length of the whole storage in the tensor's element type (views, slices, expanded and
transposed tensors, a real view of complex memory), its start (``data_ptr``), sizes, elements
and text.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from .outcomes import same_outcome

MAKERS = {
    "slice": lambda lib: lib.arange(5.0)[:4],
    "offset_slice": lambda lib: lib.arange(5.0)[1:],
    "transposed": lambda lib: lib.ones(2, 3).t(),
    "empty": lambda lib: lib.ones(0),
    "expanded": lambda lib: lib.ones(3)[:1].expand(4),
    "strided": lambda lib: lib.ones(4, 4)[::2, 1:],
    "int": lambda lib: lib.arange(6).view(2, 3)[1],
    "complex": lambda lib: lib.zeros(2, 2, dtype=lib.cdouble),
    "imag": lambda lib: lib.zeros(2, 2, dtype=lib.cdouble).imag,
    "conj": lambda lib: lib.zeros(2, 2, dtype=lib.cdouble).conj(),
    "bool": lambda lib: lib.tensor([True, False]),
}


@pytest.mark.parametrize("name", MAKERS)
def test_storage_of(name: str) -> None:
    def program(lib: Any) -> Any:
        t = MAKERS[name](lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = t.storage()
        base = t._base if t._base is not None else t
        return (
            len(s),
            s.size(),
            s.dtype,
            str(s.device),
            s.nbytes(),
            s.element_size(),
            s.data_ptr() == base.storage().data_ptr(),
        )

    same_outcome(program)


def test_start_elements_and_text() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.5, 2.5, 3.5])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = x[1:].storage()
        return s.data_ptr() == x.data_ptr(), s[0], s.tolist(), list(s), repr(s)

    same_outcome(program)


def test_storage_warns_as_deprecated() -> None:
    # (PyTorch warns once per process: the message is compared when both warn here)
    import chainrule
    from chainrule import _strides

    _strides._TYPED_STORAGE_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chainrule.ones(2).storage()
        chainrule.ones(2).storage()
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    assert len(messages) == 1
    assert messages[0].startswith("TypedStorage is deprecated.")
