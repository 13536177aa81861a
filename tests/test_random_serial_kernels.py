"""exponential_, cauchy_, geometric_ and log_normal_ draw PyTorch's numbers.

PyTorch's CPU kernels of these four fill a tensor element by element in memory order: one
double per element (a 53-bit uniform, or for log_normal_ a draw of its double normal
distribution), transformed in double with the C library's functions, then cast to the
dtype (the half types through float32, integers through int32/int64). chainrule drew
NumPy's own samplers, so a seeded program got other numbers than under PyTorch. The same
double-to-half rounding also decides normal_ of fewer than 16 half elements.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

FILLS = [
    ("exponential_", (1.0,)),
    ("exponential_", (2.5,)),
    ("cauchy_", (0.0, 1.0)),
    ("cauchy_", (0.3, 1.7)),
    ("geometric_", (0.3,)),
    ("geometric_", (0.05,)),
    ("log_normal_", (1.0, 2.0)),
    ("log_normal_", (0.2, 0.9)),
]
FLOATS = ["float64", "float32", "float16", "bfloat16"]
LAYOUTS = {
    "contiguous": lambda lib, dt: lib.empty(37, dtype=dt),
    "matrix": lambda lib, dt: lib.empty(5, 7, dtype=dt),
    "transposed": lambda lib, dt: lib.empty(7, 5, dtype=dt).t(),
    "stepped": lambda lib, dt: lib.empty(4, 12, dtype=dt)[:, ::3],
    "empty": lambda lib, dt: lib.empty(0, 3, dtype=dt),
}


def _filled(lib, layout, dtype, name, args, seed=0, generator=False):
    lib.manual_seed(seed)
    t = LAYOUTS[layout](lib, getattr(lib, dtype))
    kwargs = {}
    if generator:
        kwargs["generator"] = lib.Generator().manual_seed(seed + 1)
    out = getattr(t, name)(*args, **kwargs)
    assert out is t
    # the default generator's state after the fill (the next draw) must agree too
    return t.double().numpy(), lib.rand(3, dtype=lib.float64).numpy()


def _same(expected, actual):
    assert expected[0].shape == actual[0].shape
    np.testing.assert_array_equal(actual[0], expected[0])
    np.testing.assert_array_equal(actual[1], expected[1])


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("name", "args"), FILLS)
def test_fill_draws_pytorchs_numbers(name, args, dtype, layout):
    for seed in (0, 7):
        expected = _filled(torch, layout, dtype, name, args, seed)
        _same(expected, _filled(chainrule, layout, dtype, name, args, seed))


@pytest.mark.parametrize(("name", "args"), FILLS[::2])
def test_fill_with_a_generator(name, args):
    expected = _filled(torch, "transposed", "float32", name, args, 3, generator=True)
    _same(expected, _filled(chainrule, "transposed", "float32", name, args, 3, generator=True))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("p", [0.3, 1e-4, 1e-12])
def test_geometric_of_integer_tensors_casts_as_pytorch(dtype, p):
    # p=1e-4 gives values past int8's range (they wrap); p=1e-12 past int32's (x86's
    # conversion gives INT32_MIN, which the narrower types wrap to 0)
    expected = _filled(torch, "matrix", dtype, "geometric_", (p,))
    _same(expected, _filled(chainrule, "matrix", dtype, "geometric_", (p,)))


@pytest.mark.parametrize(("name", "args"), [("cauchy_", (0.0, 1e4)), ("log_normal_", (20.0, 1.0))])
def test_half_overflow_gives_inf_as_pytorch(name, args):
    expected = _filled(torch, "contiguous", "float16", name, args)
    assert np.isinf(expected[0]).any()
    _same(expected, _filled(chainrule, "contiguous", "float16", name, args))


@pytest.mark.parametrize("seed", [1482, 2044, 2723, 2825])
def test_normal_of_few_half_elements_rounds_through_float(seed):
    # fewer than 16 elements: one double normal per element, cast double -> float -> half;
    # cast directly, these seeds gave one element an ulp off
    out = []
    for lib in (torch, chainrule):
        lib.manual_seed(seed)
        out.append(lib.empty(15, dtype=lib.float16).normal_(0.3, 1.7).numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("exponential_", (0.0,), "exponential_ expects lambda > 0.0, but found lambda=0"),
        ("cauchy_", (0.0, -1.0), "cauchy_ expects sigma > 0.0, but found sigma=-1"),
        ("geometric_", (1.0,), "geometric_ expects p to be in (0, 1), but got p=1"),
        ("log_normal_", (0.0, 0.0), "log_normal_ expects std > 0.0, but found std=0"),
    ],
)
def test_bad_arguments_raise_and_change_nothing(name, args, message):
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        t = lib.ones(3)
        with pytest.raises(RuntimeError) as info:
            getattr(t, name)(*args)
        assert str(info.value) == message
        assert t.tolist() == [1.0, 1.0, 1.0]
    torch.manual_seed(0)
    chainrule.manual_seed(0)
    np.testing.assert_array_equal(chainrule.rand(4).numpy(), torch.rand(4).numpy())
