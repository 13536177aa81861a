"""Matrix products: ``matmul`` for every rank combination (batch dimensions broadcast),
``mm bmm mv dot vdot inner outer addmm`` and ``nn.functional.linear`` with and without a bias.

The products are bilinear, so their second-order gradients are the cross terms (the gradient
of one input depends on the other), which the sweep checks too.
"""

from __future__ import annotations

from . import OpInfo

# (first operand shape, second operand shape) for every rank case matmul distinguishes.
MATMUL_SHAPES = {
    "1-1": ((3,), (3,)),
    "2-1": ((2, 3), (3,)),
    "1-2": ((3,), (3, 4)),
    "2-2": ((2, 3), (3, 4)),
    "3-2": ((2, 2, 3), (3, 4)),
    "2-3": ((2, 3), (5, 3, 4)),
    "3-1": ((2, 2, 3), (3,)),
    "1-3": ((3,), (2, 3, 4)),
    "3-3": ((2, 2, 3), (2, 3, 4)),
    "3-3 broadcast": ((1, 2, 3), (4, 3, 2)),
    "4-3": ((2, 1, 2, 3), (3, 3, 4)),
    "4-2": ((2, 3, 2, 3), (3, 1)),
    "1-4": ((3,), (2, 1, 3, 2)),
    "empty inner": ((2, 0), (0, 3)),
    "empty batch": ((0, 2, 3), (3, 4)),
}

# Input shapes of linear: 1-D, 2-D and 3-D inputs (weight (4, 3), bias (4,)).
LINEAR_INPUTS = {"1-D": (3,), "2-D": (2, 3), "3-D": (2, 2, 3)}


def _matmul(lib, a, b):
    return lib.matmul(a, b)


def _matmul_operator(lib, a, b):
    return a @ b


def _addmm_scaled(lib, bias, m1, m2):
    return lib.addmm(bias, m1, m2, beta=0.5, alpha=2.0)


def _addmm_method(lib, bias, m1, m2):
    return bias.addmm(m1, m2, alpha=-1.5)


def _linear_bias(lib, x, w, b):
    return lib.nn.functional.linear(x, w, b)


def _linear_no_bias(lib, x, w):
    return lib.nn.functional.linear(x, w)


OPS = [
    OpInfo("matmul", _matmul, list(MATMUL_SHAPES.values())),
    OpInfo("matmul_operator", _matmul_operator,
           [MATMUL_SHAPES["2-1"], MATMUL_SHAPES["3-3 broadcast"]]),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b), [((2, 3), (3, 4)), ((1, 1), (1, 5))]),
    OpInfo("mm_method", lambda lib, a, b: a.mm(b), [((3, 2), (2, 2))]),
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b),
           [((2, 2, 3), (2, 3, 4)), ((1, 3, 1), (1, 1, 2))]),
    OpInfo("mv", lambda lib, a, v: lib.mv(a, v), [((2, 3), (3,)), ((1, 4), (4,))]),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b), [((3,), (3,)), ((1,), (1,))]),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), [((3,), (4,)), ((1,), (2,))]),
    OpInfo("addmm", lambda lib, s, a, b: lib.addmm(s, a, b),
           [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)), ((1, 1), (2, 3), (3, 4))]),
    OpInfo("addmm_scaled", _addmm_scaled, [((2, 4), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4))]),
    OpInfo("addmm_method", _addmm_method, [((2, 4), (2, 3), (3, 4))]),
    # inner: PyTorch's tensordot graph (mm, dot, or a size-1 contracted dim summed first);
    # 0-d operands multiply.
    OpInfo("inner", lambda lib, a, b: lib.inner(a, b),
           [((4,), (4,)), ((3, 4), (5, 4)), ((2, 3, 4), (4,)), ((3, 1), (2, 1)), ((1,), (1,)),
            ((), (3, 2)), ((2, 0), (3, 0))]),
    OpInfo("Tensor.inner", lambda lib, a, b: a.inner(b), [((3, 4), (2, 4))]),
    OpInfo("vdot", lambda lib, a, b: lib.vdot(a, b), [((3,), (3,)), ((1,), (1,))]),
    OpInfo("Tensor.vdot", lambda lib, a, b: a.vdot(b), [((4,), (4,))]),
    OpInfo("linear", _linear_bias, [(shape, (4, 3), (4,)) for shape in LINEAR_INPUTS.values()]),
    OpInfo("linear_no_bias", _linear_no_bias,
           [(shape, (4, 3)) for shape in LINEAR_INPUTS.values()]),
]
