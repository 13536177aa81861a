"""``resize_``, ``resize_as_``, ``set_`` and ``grad_fn=<Invalid>`` against PyTorch 2.13.

Each case runs the same code with ``chainrule`` and ``torch`` as ``lib`` and compares what it
reports: values (of kept elements: new ones are uninitialised in PyTorch), sizes, strides,
storage offsets, versions, reprs, or the error's type and message, and that a call that raises
leaves its tensor as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def state(t: Any) -> tuple:
    """What is compared of a tensor (its values up to ``numel``, which PyTorch keeps)."""
    return (tuple(t.shape), t.stride(), t.storage_offset(), t._version, t.tolist(),
            repr(t).replace("chainrule", "torch"))


def both(case: Callable[[Any], Any]) -> None:
    got = attempt(lambda: case(chainrule))
    want = attempt(lambda: case(torch))
    assert got == want


# ----------------------------------------------------------------------------------------------
# resize_


def _storage_size(t: Any) -> int:
    return t.untyped_storage().nbytes() // t.element_size()


def _after(fn: Callable[[Any], Any], make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn(make(lib))``'s result (or error) and the tensor's state after (of its values, those
    that were in its storage before: PyTorch leaves the others uninitialised)."""

    def state(x: Any, known: int) -> tuple:
        values = x.reshape(-1)[:max(0, min(x.numel(), known))].tolist()
        return tuple(x.shape), x.stride(), x.storage_offset(), x._version, values

    def case(lib: Any) -> Any:
        x = make(lib)
        known = _storage_size(x) - x.storage_offset()
        before = state(x, known)
        out = attempt(lambda: fn(x))
        if out[0] != "ok":
            # PyTorch may leave the sizes it refused; chainrule's call changes nothing.
            if lib is chainrule:
                assert state(x, known) == before
            return out
        return ("ok", out[1] is x), *state(x, known)

    return case


_MAKERS = {
    "row": lambda lib: lib.arange(6.),
    "matrix": lambda lib: lib.arange(12.).reshape(3, 4),
    "transposed": lambda lib: lib.arange(6.).reshape(2, 3).t(),
    "stepped": lambda lib: lib.arange(10.)[1::2],
    "expanded": lambda lib: lib.arange(3.).expand(2, 3),
    "empty": lambda lib: lib.zeros(0, 3),
    "empty_t": lambda lib: lib.zeros(2, 0).t(),
    "scalar": lambda lib: lib.tensor(5.),
}

_SHRINKING = {  # (no element beyond the storage: every value is PyTorch's)
    "same": lambda x: x.resize_(*x.shape),
    "tuple": lambda x: x.resize_(tuple(x.shape)),
    "smaller": lambda x: x.resize_(2),
    "two_d": lambda x: x.resize_([1, 2]),
    "to_empty": lambda x: x.resize_(2, 0),
    "to_scalar": lambda x: x.resize_(()),
    "size": lambda x: x.resize_(chainrule.Size([1]) if isinstance(x, chainrule.Tensor)
                                else torch.Size([1])),
    "contiguous_format": lambda x: x.resize_(*x.shape, memory_format=_lib(x).contiguous_format),
    "float": lambda x: x.resize_(2.0),
    "float_in_tuple": lambda x: x.resize_((2.0,)),
    "string": lambda x: x.resize_("a"),
    "nothing": lambda x: x.resize_(),
    "preserve": lambda x: x.resize_(2, memory_format=_lib(x).preserve_format),
    "channels_last_rank": lambda x: x.resize_(2, memory_format=_lib(x).channels_last),
    "format_int": lambda x: x.resize_(2, memory_format=3),
}


def _lib(x: Any) -> Any:
    return chainrule if isinstance(x, chainrule.Tensor) else torch


@pytest.mark.parametrize("maker", list(_MAKERS))
@pytest.mark.parametrize("call", list(_SHRINKING))
def test_resize_within_the_storage(maker: str, call: str) -> None:
    both(_after(_SHRINKING[call], _MAKERS[maker]))


@pytest.mark.parametrize("sizes", [(-1,), (2, -3), (2 ** 62, 4)])
def test_resize_to_sizes_with_too_many_elements(sizes: tuple[int, ...]) -> None:
    # (PyTorch leaves the tensor with the sizes it refused: only the error is compared)
    both(lambda lib: attempt(lambda: lib.arange(6.).resize_(*sizes)))


@pytest.mark.parametrize("maker", list(_MAKERS))
def test_resize_grows(maker: str) -> None:
    both(_after(lambda x: x.resize_(4, 5), _MAKERS[maker]))


def test_resize_view_grows_the_storage_shared_with_its_base() -> None:
    def case(lib: Any) -> Any:
        b = lib.arange(6.)
        v = b[1:3]
        v.resize_(5)
        first = (v.tolist(), b.tolist(), b._version, v.storage_offset())
        v.resize_(8)  # beyond the storage: it grows, and b still shares it
        v[0] = 100.
        return first, b.tolist(), v[:5].tolist(), b._version, v._version

    both(case)


def test_resize_grown_storage_stays_shared_with_detached_and_set_tensors() -> None:
    def case(lib: Any) -> Any:
        x = lib.arange(3.)
        d = x.detach()
        s = lib.zeros(1)
        s.set_(x)
        x.resize_(10)
        x[0] = 100.
        return d.tolist(), s.tolist(), d._version, s._version, x._version

    both(case)


def test_resize_channels_last() -> None:
    def case(lib: Any) -> Any:
        x = lib.arange(24.).reshape(2, 3, 2, 2)
        x.resize_(2, 3, 2, 2, memory_format=lib.channels_last)
        y = lib.arange(24.)
        y.resize_(2, 3, 2, 2, memory_format=lib.channels_last)
        return state(x), state(y)

    both(case)


@pytest.mark.parametrize("where", ["leaf", "same_size", "non_leaf", "no_grad", "no_grad_view"])
def test_resize_refuses_a_tensor_that_requires_grad(where: str) -> None:
    def case(lib: Any) -> Any:
        leaf = lib.ones(3, requires_grad=True)
        x = leaf * 2 if where == "non_leaf" else leaf
        if where == "no_grad":
            with lib.no_grad():
                out = attempt(lambda: x.resize_(2))
        elif where == "no_grad_view":
            with lib.no_grad():
                x = leaf[:2]
            out = attempt(lambda: x.resize_(1))
        else:
            out = attempt(lambda: x.resize_(3 if where == "same_size" else 2))
        return out, state(x), attempt(lambda: x.resize_(-1))

    both(case)


def test_resize_of_an_inference_tensor() -> None:
    def case(lib: Any) -> Any:
        with lib.inference_mode():
            x = lib.ones(3)
        return attempt(lambda: x.resize_(2)), attempt(lambda: x.resize_(3)), x.shape

    both(case)


@pytest.mark.parametrize("template", ["row", "transposed", "channels_last", "int", "grad",
                                      "number"])
@pytest.mark.parametrize("memory_format", [None, "preserve_format", "contiguous_format"])
def test_resize_as(template: str, memory_format: str | None) -> None:
    def case(lib: Any) -> Any:
        other: Any = {
            "row": lambda: lib.zeros(2),
            "transposed": lambda: lib.zeros(2, 3).t(),
            "channels_last": lambda: lib.zeros(2, 2, 2, 3).permute(0, 3, 1, 2),
            "int": lambda: lib.zeros(2, dtype=lib.int64),
            "grad": lambda: lib.zeros(2, requires_grad=True),
            "number": lambda: 3,
        }[template]()
        x = lib.arange(24.)
        kwargs = {} if memory_format is None else {"memory_format": getattr(lib, memory_format)}
        out = attempt(lambda: x.resize_as_(other, **kwargs) is x)
        return out, state(x)

    both(case)


def test_resize_as_refuses_a_tensor_that_requires_grad() -> None:
    both(lambda lib: attempt(lambda: lib.ones(2, requires_grad=True).resize_as_(lib.zeros(2))))


# ----------------------------------------------------------------------------------------------
# set_


_SOURCES = {
    "row": lambda lib: lib.arange(6.),
    "transposed": lambda lib: lib.arange(6.).reshape(2, 3).t(),
    "expanded": lambda lib: lib.arange(4.).expand(2, 4),
    "sliced": lambda lib: lib.arange(10.)[2:],
    "empty": lambda lib: lib.zeros(0, 3),
}


@pytest.mark.parametrize("source", list(_SOURCES))
def test_set_shares_the_source(source: str) -> None:
    def case(lib: Any) -> Any:
        s = _SOURCES[source](lib)
        x = lib.zeros(2)
        out = x.set_(s)
        before = state(x), s._version
        if x.numel() and source != "expanded":
            x.view(-1)[0] = 7. if x.is_contiguous() else 7.  # (written through x)
            x.reshape(-1)  # (no effect: the write above is the test)
        return out is x, before, s.tolist(), x._version, s._version

    both(case)


def test_set_shares_writes_both_ways() -> None:
    def case(lib: Any) -> Any:
        s = lib.arange(6.).reshape(2, 3).t()
        x = lib.zeros(2)
        x.set_(s)
        x[0, 0] = 7.
        s[1, 1] = 9.
        return x.tolist(), s.tolist(), x._version, s._version, x._base is None

    both(case)


def test_set_without_arguments_empties() -> None:
    def case(lib: Any) -> Any:
        x = lib.arange(6.).reshape(2, 3)
        return x.set_() is x, state(x)

    both(case)


@pytest.mark.parametrize("args", [
    (2, (2, 3), (1, 2)), (2, (2, 3)), (1, (3,)), (0, [2], [1]), (2, (20, 3), (1, 2)),
    (2, (2, 3), (-1, 2)), (-1, (2, 3), (1, 2)), (2, (2, -3), (1, 2)), (2, (2, 3), (1,)),
    (0, (0, 3)),
])
@pytest.mark.parametrize("source", ["row", "sliced", "transposed"])
def test_set_with_a_geometry(args: tuple, source: str) -> None:
    def case(lib: Any) -> Any:
        s = _SOURCES[source](lib)
        x = lib.zeros(2)
        known = _storage_size(s)
        out = attempt(lambda: x.set_(s, *args) is x)
        if out[0] != "ok":
            # (PyTorch may have given x the refused geometry: only the error is compared)
            return out, s.tolist()
        shape, stride = tuple(x.shape), x.stride()
        # (elements beyond the source's old storage are uninitialised in PyTorch)
        last = x.storage_offset() + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        inside = x.tolist() if last < known or not x.numel() else None
        return out, shape, stride, x.storage_offset(), x._version, s.tolist(), inside

    both(case)


@pytest.mark.parametrize("call", [
    lambda lib, x: x.set_(3),
    lambda lib, x: x.set_([1.0]),
    lambda lib, x: x.set_(lib.zeros(2, dtype=lib.float64)),
    lambda lib, x: x.set_(lib.zeros(10), storage_offset=1),
    lambda lib, x: x.set_(lib.ones(3), 0, (2,), (1,), 5),
    lambda lib, x: x.set_(lib.ones(3), 0, 2),
    lambda lib, x: x.set_(lib.ones(3), 0.5, (2,)),
    lambda lib, x: x.set_(source=lib.arange(3.)),
    lambda lib, x: x.set_(source=lib.arange(3.), storage_offset=1, size=(2,), stride=(1,)),
    lambda lib, x: x.set_(lib.ones(6)[::2], 0, (3,)),
    lambda lib, x: x.set_(x),
    lambda lib, x: x.set_(x[1:]),
])
def test_set_arguments_and_errors(call: Callable[[Any, Any], Any]) -> None:
    def case(lib: Any) -> Any:
        x = lib.arange(3.)
        out = attempt(lambda: call(lib, x) is x)
        return out, state(x)

    both(case)


def test_set_of_an_integer_tensor_to_another_dtype() -> None:
    both(lambda lib: attempt(lambda: lib.ones(2, dtype=lib.int64).set_(
        lib.ones(3, dtype=lib.int32))))


def _nodes(t: Any) -> Any:
    fn = t.grad_fn
    if fn is None:
        return None
    return type(fn).__name__, [None if f is None else type(f).__name__
                               for f, _ in fn.next_functions]


@pytest.mark.parametrize("how", ["source", "empty", "geometry"])
@pytest.mark.parametrize("who", ["leaf", "non_leaf", "plain_with_grad_source",
                                 "non_leaf_no_grad", "leaf_no_grad"])
def test_set_and_autograd(how: str, who: str) -> None:
    def case(lib: Any) -> Any:
        w = lib.ones(3, requires_grad=True)
        if who in ("leaf", "leaf_no_grad"):
            x = lib.ones(2, requires_grad=True)
        elif who == "plain_with_grad_source":
            x = lib.zeros(2)
        else:
            x = lib.ones(2, requires_grad=True) * 2
        source = w * 3 if who == "plain_with_grad_source" else lib.zeros(3)

        def run() -> Any:
            if how == "empty":
                return x.set_()
            if how == "geometry":
                return x.set_(source, 0, (2,), (1,))
            return x.set_(source)

        if who.endswith("no_grad"):
            with lib.no_grad():
                out = attempt(run, lambda t: t is x)
        else:
            out = attempt(run, lambda t: t is x)
        result = [out, state(x), _nodes(x), x.requires_grad, x.is_leaf]
        if x.grad_fn is not None and not who.endswith("no_grad"):
            # (under no_grad the history is kept at the old shape: the engine's error for the
            # mismatch names another node than PyTorch's, a matter outside set_)
            result.append(attempt(lambda: x.sum().backward()))
        return result

    both(case)


def test_set_of_an_inference_tensor() -> None:
    def case(lib: Any) -> Any:
        with lib.inference_mode():
            it = lib.ones(3)
        x = lib.ones(2)
        return attempt(lambda: it.set_(x)), attempt(lambda: x.set_(it) is x), x.is_inference()

    both(case)


# ----------------------------------------------------------------------------------------------
# grad_fn=<Invalid>: the repr of a view whose grad_fn cannot be read (PyTorch's repr catches
# the RuntimeError that reading it raises)


def _no_grad_view_modified_in_no_grad(lib: Any) -> Any:
    a = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        v = a[:2]
        v.mul_(2)
    return v


def _no_grad_view_base_modified(lib: Any) -> Any:
    b = lib.ones(3, requires_grad=True) * 1
    with lib.no_grad():
        v = b[:2]
    b.mul_(2)
    return v


def _split_base_modified(lib: Any) -> Any:
    b = lib.ones(4, requires_grad=True) * 1
    p, _ = b.split(2)
    b.mul_(2)
    return p


def _split_base_modified_in_no_grad(lib: Any) -> Any:
    b = lib.ones(4, requires_grad=True) * 1
    p, _ = b.split(2)
    with lib.no_grad():
        b.mul_(2)
    return p


def _unbind_sibling_modified(lib: Any) -> Any:
    b = lib.ones(2, 2, requires_grad=True).clone()
    u = b.unbind(0)
    with lib.no_grad():
        u[0].zero_()
    return u[1]


def _ordinary_view_base_modified(lib: Any) -> Any:
    b = lib.ones(3, requires_grad=True) * 1
    v = b[:2]
    b.mul_(2)
    return v


def _no_grad_view_of_leaf_modified(lib: Any) -> Any:
    a = lib.ones(3, requires_grad=True)
    with lib.no_grad():
        v = a[:2]
        a.mul_(2)
    return v


@pytest.mark.parametrize("make", [
    _no_grad_view_modified_in_no_grad, _no_grad_view_base_modified, _split_base_modified,
    _split_base_modified_in_no_grad, _unbind_sibling_modified, _ordinary_view_base_modified,
    _no_grad_view_of_leaf_modified,
], ids=lambda f: f.__name__.strip("_"))
def test_repr_of_a_view_whose_grad_fn_cannot_be_read(make: Callable[[Any], Any]) -> None:
    def case(lib: Any) -> Any:
        v = make(lib)
        shown = repr(v).replace("chainrule", "torch")
        with lib.no_grad():
            shown_no_grad = repr(v).replace("chainrule", "torch")
        return (shown, shown_no_grad, attempt(lambda: _nodes(v)), v.requires_grad,
                attempt(lambda: v.is_leaf))

    both(case)
