"""Complex random tensors and randn_like of strided inputs draw PyTorch's numbers.

A complex tensor's random fill is the fill of its ``view_as_real``: uniform_ draws both parts
from ``[from, to)``, normal_ both with ``std / sqrt(2)``. chainrule drew only the real part
and left every imaginary part 0 (``randn(3, dtype=complex64)`` was real: a silent wrong
distribution). ``randn_like`` of a transposed or channels-last tensor of 16+ elements is
PyTorch's ``normal_`` of a tensor that is not contiguous, which draws element by element in
memory order; chainrule used the vectorised contiguous fill (other numbers under a seed).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

CASES = {
    "randn complex64 (few)": lambda lib: lib.randn(5, dtype=lib.complex64),
    "randn complex64 (16+)": lambda lib: lib.randn(40, dtype=lib.complex64),
    "randn complex128 matrix": lambda lib: lib.randn(3, 7, dtype=lib.complex128),
    "rand complex64": lambda lib: lib.rand(5, dtype=lib.complex64),
    "rand complex128 (16+)": lambda lib: lib.rand(40, dtype=lib.complex128),
    "normal_ complex transposed": lambda lib: lib.empty(6, 4, dtype=lib.complex64)
    .t()
    .normal_(2.0, 3.0),
    "normal_ complex128": lambda lib: lib.empty(30, dtype=lib.complex128).normal_(-1.0, 0.5),
    "uniform_ complex transposed": lambda lib: lib.empty(6, 4, dtype=lib.complex64)
    .t()
    .uniform_(-2, 3),
    "randn_like complex transposed": lambda lib: lib.randn_like(
        lib.ones(6, 4, dtype=lib.complex64).t()
    ),
    "rand_like complex transposed": lambda lib: lib.rand_like(
        lib.ones(6, 4, dtype=lib.complex64).t()
    ),
    "normal(complex mean, number)": lambda lib: lib.normal(lib.zeros(20, dtype=lib.complex64), 1.0),
    "normal(complex mean, tensor)": lambda lib: lib.normal(
        lib.zeros(20, dtype=lib.complex64), lib.ones(20) * 2
    ),
    "normal(mean, std, size, complex)": lambda lib: lib.normal(
        0.0, 1.0, (20,), dtype=lib.complex64
    ),
    "init.normal_ complex": lambda lib: lib.nn.init.normal_(lib.empty(20, dtype=lib.complex64)),
    "init.xavier_normal_ complex": lambda lib: lib.nn.init.xavier_normal_(
        lib.empty(4, 5, dtype=lib.complex64)
    ),
    "randn_like transposed": lambda lib: lib.randn_like(lib.ones(6, 4).t()),
    "randn_like permuted": lambda lib: lib.randn_like(lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1)),
    "randn_like channels_last": lambda lib: lib.randn_like(
        lib.ones(2, 3, 4, 5), memory_format=lib.channels_last
    ),
    "randn_like float64 transposed": lambda lib: lib.randn_like(
        lib.ones(6, 4, dtype=lib.float64).t()
    ),
    "randn_like float16 transposed": lambda lib: lib.randn_like(
        lib.ones(6, 4, dtype=lib.float16).t()
    ),
    "randn_like stepped (contiguous result)": lambda lib: lib.randn_like(lib.ones(6, 4)[::2]),
    "randn_like contiguous_format": lambda lib: lib.randn_like(
        lib.ones(6, 4).t(), memory_format=lib.contiguous_format
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_draws_as_pytorch(case):
    results = []
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        out = CASES[case](lib)
        after = lib.rand(3, dtype=lib.float64)
        results.append((out.stride(), out.dtype, out.numpy().copy(), after.numpy()))
    (strides, dtype, values, after), (o_strides, o_dtype, ours, o_after) = results
    assert (o_strides, str(o_dtype).split(".")[1]) == (strides, str(dtype).split(".")[1])
    np.testing.assert_array_equal(ours, values)
    np.testing.assert_array_equal(o_after, after)


def test_complex_parts_both_random():
    chainrule.manual_seed(0)
    z = chainrule.randn(1000, dtype=chainrule.complex64)
    assert float((z.imag != 0).float().mean()) > 0.99
    # the complex value's variance is std ** 2, split evenly between the parts
    assert abs(float(z.real.var()) - 0.5) < 0.1 and abs(float(z.imag.var()) - 0.5) < 0.1


def test_randn_like_of_integer_tensor_raises_as_pytorch():
    for lib in (torch, chainrule):
        with pytest.raises(NotImplementedError) as info:
            lib.randn_like(lib.ones(6, 4, dtype=lib.int64).t())
        assert str(info.value) == "\"normal_kernel_cpu\" not implemented for 'Long'"
