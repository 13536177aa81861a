"""torch.set_default_tensor_type (deprecated, still in PyTorch 2.13) and torch.BFloat16Tensor.

chainrule had neither (AttributeError): old training scripts start with
``torch.set_default_tensor_type(torch.DoubleTensor)`` or its string form.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import chainrule

from .outcomes import same_outcome

ARGUMENTS = {
    "DoubleTensor": lambda lib: lib.DoubleTensor,
    "its name": lambda lib: "torch.DoubleTensor",
    "HalfTensor": lambda lib: lib.HalfTensor,
    "BFloat16Tensor": lambda lib: lib.BFloat16Tensor,
    "FloatTensor by name": lambda lib: "torch.FloatTensor",
    "LongTensor": lambda lib: lib.LongTensor,
    "IntTensor by name": lambda lib: "torch.IntTensor",
    "a dtype": lambda lib: lib.float64,
    "an int": lambda lib: 3,
}


@pytest.mark.parametrize("argument", list(ARGUMENTS))
def test_set_default_tensor_type(argument: str) -> None:
    def program(lib: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type(ARGUMENTS[argument](lib))
            return lib.get_default_dtype(), lib.ones(1).dtype, lib.tensor([1.5]).dtype
        finally:
            lib.set_default_dtype(lib.float32)

    same_outcome(program)


def test_warns_once_that_it_is_deprecated() -> None:
    from chainrule.autograd import variable

    variable._DEFAULT_TYPE_WARNED[0] = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            chainrule.set_default_tensor_type(chainrule.DoubleTensor)
            chainrule.set_default_tensor_type(chainrule.FloatTensor)
    finally:
        chainrule.set_default_dtype(chainrule.float32)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert messages[0].startswith("torch.set_default_tensor_type() is deprecated as of PyTorch")
    assert caught[0].filename == __file__


def test_bfloat16_legacy_type() -> None:
    same_outcome(
        lambda lib: (
            lib.BFloat16Tensor([1.5, 2.25]),
            lib.BFloat16Tensor.dtype,
            isinstance(lib.ones(2, dtype=lib.bfloat16), lib.BFloat16Tensor),
            lib.ones(2).type(lib.BFloat16Tensor).dtype,
        )
    )
