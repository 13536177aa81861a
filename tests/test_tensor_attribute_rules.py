"""What PyTorch refuses on a tensor's attributes, compared with PyTorch: deleting ``data``,
``requires_grad``, ``_grad_fn`` or ``_backward_hooks`` (``del x.grad`` is allowed and clears
the gradient), and setting ``data`` of a tensor that requires grad to an integer tensor.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


@pytest.mark.parametrize("name", ["data", "requires_grad", "_grad_fn", "_backward_hooks"])
def test_deleting_a_protected_attribute_is_refused(name: str) -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        try:
            delattr(y, name)
        finally:
            # the tensor is untouched: it still backpropagates
            y.sum().backward()
        return x.grad

    same_outcome(program)


def test_deleting_grad_clears_it() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        (x * 3).sum().backward()
        del x.grad
        return x.grad, x.requires_grad

    same_outcome(program)


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("new", ["int64", "bool", "float64", "complex64"])
def test_setting_data_to_another_dtype(requires_grad: bool, new: str) -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=requires_grad)
        x.data = lib.tensor([1, 0]).to(getattr(lib, new))
        return x.dtype, x.requires_grad, x.tolist()

    same_outcome(program)


def test_setting_data_to_a_non_tensor() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2)
        x.data = None

    same_outcome(program)


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
def test_every_name_dir_lists_can_be_read(view: bool) -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(3, 3)
        if view:
            x = x[1:]
        keys = dir(x)
        unreadable = []
        for key in keys:
            if key == "imag":
                continue
            if not hasattr(x, key):
                unreadable.append(key)
        return "shape" in keys, "imag" in keys, unreadable

    same_outcome(program)
    same_outcome(lambda lib: hasattr(lib.randn(2), "imag"))
