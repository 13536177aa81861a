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


# ---------------------------------------------------------------------------------------------
# untyped_storage(): PyTorch's UntypedStorage (chainrule returned its NumPy root array, so
# ``nbytes()``, ``data_ptr()``, byte indexing and the text were not PyTorch's)


# (a conjugate view's bytes: chainrule keeps the conjugated values in memory of their own,
# where PyTorch's conj() is a view with a conj bit over the base's bytes)
@pytest.mark.parametrize("name", [name for name in MAKERS if name != "conj"])
def test_untyped_storage_of(name: str) -> None:
    def program(lib: Any) -> Any:
        t = MAKERS[name](lib)
        s = t.untyped_storage()
        base = t._base if t._base is not None else t
        return (
            len(s),
            s.size(),
            s.nbytes(),
            s.element_size(),
            str(s.device),
            s.is_shared(),
            s.is_pinned(),
            s.is_cuda,
            s.data_ptr() == base.untyped_storage().data_ptr(),
            s is base.untyped_storage(),  # (one object per storage, as PyTorch keeps it)
            s.untyped() is s,
            s.tolist(),
            repr(s),
        )

    same_outcome(program)


def test_untyped_storage_bytes_read_and_write() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1, 2, 3], dtype=lib.int16)
        s = x[1:].untyped_storage()
        s[0] = 7  # (the first byte of the storage: x[0]'s low byte)
        s[5] = 257  # (wrapped to a byte)
        s[2:4] = -1
        before = (s[0], s[1], s[-1], list(s), s[1:3].tolist(), type(s[1:3]).__name__)
        return before, x.tolist(), s.data_ptr() == x.data_ptr()

    same_outcome(program)


@pytest.mark.parametrize("index", [6, -7, 100])
def test_untyped_storage_index_out_of_range(index: int) -> None:
    def program(lib: Any) -> Any:
        return lib.tensor([1, 2, 3], dtype=lib.int16).untyped_storage()[index]

    same_outcome(program)


def test_typed_storage_untyped_is_the_tensors() -> None:
    def program(lib: Any) -> Any:
        x = lib.arange(4.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = x[2:].storage()
        return typed.untyped() is x.untyped_storage(), typed.untyped().nbytes()

    same_outcome(program)


@pytest.mark.parametrize(("index", "value"), [(-1, 1), (6, 1), (0, 1.5), (0, "a")])
def test_untyped_storage_bad_writes(index: int, value: Any) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1, 2, 3], dtype=lib.int16)
        try:
            x.untyped_storage()[index] = value
        except RuntimeError as error:
            return "raised", str(error), x.tolist()
        return "wrote", x.tolist()

    same_outcome(program)
