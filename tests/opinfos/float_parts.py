"""ldexp (integer and fractional exponents, with a gradient for a floating ``other``) and
frexp's mantissa."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _exponents(lib: Any) -> Any:
    return lib.tensor([[3], [-2], [0]])


# PyTorch's gradient of ldexp with an integer exponent computes 2 ** other in integers: 0 for a
# negative exponent. chainrule gives PyTorch's; finite differences cannot agree there.
_INTEGER_POWER = {"gradcheck": False}


OPS = [
    OpInfo("ldexp", lambda lib, x: lib.ldexp(x, _exponents(lib)), [((3, 4),)], **_INTEGER_POWER),
    OpInfo("ldexp_float_exponent", lambda lib, x, e: lib.ldexp(x, e), [((3, 4), (3, 4))]),
    OpInfo("Tensor.ldexp", lambda lib, x: x.ldexp(_exponents(lib)), [((3, 4),)], **_INTEGER_POWER),
    OpInfo(
        "Tensor.ldexp_",
        lambda lib, x: x.clone().ldexp_(_exponents(lib)),
        [((3, 4),)],
        **_INTEGER_POWER,
    ),
    OpInfo(
        "torch.ldexp_",
        lambda lib, x: lib.ldexp_(x.clone(), _exponents(lib)),
        [((3, 4),)],
        **_INTEGER_POWER,
    ),
    OpInfo("frexp", lambda lib, x: lib.frexp(x * 5), [((3, 4),), ((),)], gradcheck=False),
    OpInfo("Tensor.frexp", lambda lib, x: x.frexp().mantissa, [((3, 4),)], gradcheck=False),
    OpInfo("nextafter", lambda lib, x, y: lib.nextafter(x, y), [((3, 4), (3, 4)), ((3, 1), (4,))]),
    OpInfo("Tensor.nextafter_", lambda lib, x, y: x.clone().nextafter_(y), [((3, 4), (4,))]),
    OpInfo("Tensor.nextafter", lambda lib, x, y: x.nextafter(y), [((3, 4), (3, 4))]),
]
