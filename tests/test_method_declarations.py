"""Tensor methods are declared where their function is defined (``@op(..., method=True,
inplace=True)``, ``@tensor_method``) and ops/__init__.py attaches exactly what was declared.

The declarations here go to an empty registry (``monkeypatch``), so nothing reaches ``Tensor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule
from chainrule.ops import _registry, pointwise, special_ops
from chainrule.ops._registry import declare_methods, declared_methods, op, tensor_method


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_METHODS", {})
    monkeypatch.setattr(_registry, "_IN_PLACE", {})


def test_every_declaration_is_attached() -> None:
    methods, in_place = declared_methods()
    assert len(methods) > 190 and len(in_place) > 95
    for name in methods:
        assert name in vars(chainrule.Tensor), name
    for name in in_place:
        method = vars(chainrule.Tensor)[name + "_"]
        assert method.__name__ == name + "_", name


def test_the_declarations_say_what_is_written_in_place() -> None:
    methods, in_place = declared_methods()
    assert methods["add"] is pointwise.add and in_place["add"] is pointwise.add
    assert methods["subtract"] is pointwise.sub and in_place["subtract"] is pointwise.sub
    # a method that is another callable, an in-place op recorded as a node of its own
    assert methods["polygamma"] is not special_ops.polygamma
    assert in_place["polygamma"] is special_ops.polygamma_in_place_op
    assert in_place["gt"] is in_place["greater"] and in_place["gt"] is not pointwise.gt
    assert in_place["addmm"] == "method"
    assert "rsub" not in methods and "linear" not in methods  # functions, not methods


def test_tensor_method_declares_names_and_aliases(registry: None) -> None:
    def other(self: Any) -> Any: ...

    def in_place(self: Any) -> Any: ...

    @tensor_method(inplace=True, aliases=("my_alias",))
    def my_fn(input: Any) -> Any: ...

    @tensor_method
    def plain(input: Any) -> Any: ...

    @tensor_method(name="renamed", method=other, inplace=in_place)
    def function(input: Any) -> Any: ...

    @tensor_method(method=False, inplace=True)
    def only_in_place(input: Any) -> Any: ...

    methods, inplace = declared_methods()
    assert methods == {"my_fn": my_fn, "my_alias": my_fn, "plain": plain, "renamed": other}
    assert inplace == {"my_fn": my_fn, "my_alias": my_fn, "renamed": in_place,
                       "only_in_place": only_in_place}


def test_op_declares_under_its_name(registry: None) -> None:
    @op("MyOpBackward0", method=True, inplace=True, aliases=("my_op_alias",))
    def my_op(self):
        return np.negative(self)

    @op("MyOtherBackward0", name="shown_name", method=True)
    def _forward(self):
        return self

    methods, inplace = declared_methods()
    assert methods == {"my_op": my_op, "my_op_alias": my_op, "shown_name": _forward}
    assert inplace == {"my_op": my_op, "my_op_alias": my_op}
    with pytest.raises(TypeError, match="aliases= without method= or inplace="):
        op("MyThirdBackward0", aliases=("x",))


def test_a_name_declared_twice_is_an_error(registry: None) -> None:
    declare_methods("twice", method=len, inplace=len)
    with pytest.raises(ValueError, match=r"Tensor\.twice is declared twice"):
        declare_methods("twice", method=len)
    with pytest.raises(ValueError, match=r"Tensor\.twice_ is declared twice"):
        declare_methods("twice", inplace=len)


def test_inconsistent_declarations_are_refused(registry: None) -> None:
    declare_methods("clash", inplace=len)
    declare_methods("clash_", method=len)
    with pytest.raises(ValueError, match=r"Tensor\.clash_ is declared both"):
        declared_methods()


def test_in_place_of_the_method_needs_the_method(registry: None) -> None:
    declare_methods("lonely", inplace="method")
    with pytest.raises(ValueError, match=r"Tensor\.lonely is not declared"):
        declared_methods()
