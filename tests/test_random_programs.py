"""Random programs built from the op table: the same values and the same first- and second-order
gradients as PyTorch, in float64 and float32.

A program is a random sequence of steps over a growing list of intermediate tensors; each step
takes one or two earlier values (any of them, so values are reused and the graph branches) and
applies an op. Shapes are kept broadcast-compatible by construction: every value has shape
``(3, 4)``, ``(4,)``, ``(3, 1)`` or ``()``, and shape-changing steps map between them.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import torch

SHAPES = [(3, 4), (4,), (3, 1), ()]

# Unary steps keep the shape; "bounded" ones get inputs squashed by tanh first.
UNARY = {
    "exp": lambda lib, a: lib.exp(lib.tanh(a)),
    "tanh": lambda lib, a: lib.tanh(a),
    "sin": lambda lib, a: lib.sin(a),
    "sigmoid": lambda lib, a: lib.sigmoid(a),
    "square": lambda lib, a: a * a,
    "softplus": lambda lib, a: lib.log1p(lib.exp(lib.tanh(a))),
    "sqrt": lambda lib, a: lib.sqrt(a * a + 1),
    "neg_scale": lambda lib, a: -2.5 * a + 0.5,
    "pow3": lambda lib, a: lib.tanh(a) ** 3,
    "rdiv": lambda lib, a: 1 / (a * a + 1),
}
BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / (b * b + 1),
    "maximum_soft": lambda lib, a, b: lib.logsumexp(lib.stack([a + 0 * b, b + 0 * a]), 0),
    "atan2": lambda lib, a, b: lib.atan2(a, b * b + 1),
    "where": lambda lib, a, b: lib.where(a > b, a * b, a - b),
}


def _to_shape(lib, a, shape):
    """Map any of SHAPES to ``shape`` with reductions, views and broadcasting."""
    if tuple(a.shape) == shape:
        return a
    if shape == ():
        return a.mean() if a.dim() else a
    full = a.expand(3, 4) if a.dim() == 2 else a.reshape(1, -1).expand(3, 4) if a.dim() else \
        a.reshape(1, 1).expand(3, 4)
    if shape == (3, 4):
        return full * 1.0
    if shape == (4,):
        return full.sum(0)
    return full.amax(1, keepdim=True)


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 3))
    inputs = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    steps = []
    n_values = n_inputs
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reshape", "matmul"]))
        a = draw(st.integers(0, n_values - 1))
        b = draw(st.integers(0, n_values - 1))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), a))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), a, b))
        elif kind == "reshape":
            steps.append(("reshape", draw(st.sampled_from(SHAPES)), a))
        else:
            steps.append(("matmul", a, b))
        n_values += 1
    seed = draw(st.integers(0, 2**16))
    return inputs, steps, seed


def _run(lib, program, dtype):
    inputs, steps, seed = program
    rng = np.random.default_rng(seed)
    leaves = [lib.tensor(rng.uniform(-1.5, 1.5, shape).astype(dtype), requires_grad=True)
              for shape in inputs]
    values = list(leaves)
    for step in steps:
        if step[0] == "unary":
            values.append(UNARY[step[1]](lib, values[step[2]]))
        elif step[0] == "binary":
            values.append(BINARY[step[1]](lib, values[step[2]], values[step[3]]))
        elif step[0] == "reshape":
            values.append(_to_shape(lib, values[step[2]], step[1]))
        else:
            left = _to_shape(lib, values[step[1]], (3, 4))
            right = _to_shape(lib, values[step[2]], (3, 4))
            values.append(lib.matmul(lib.matmul(left, right.t()).tanh(), left) / 4)
    out = values[-1]
    weights = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(dtype))
    loss = (out * weights).sum()
    grads = lib.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    probe = [lib.tensor(rng.standard_normal(tuple(x.shape)).astype(dtype)) for x in leaves]
    total = sum((g * p).sum() for g, p in zip(grads, probe, strict=True) if g is not None)
    second = (
        lib.autograd.grad(total, leaves, allow_unused=True)
        if isinstance(total, lib.Tensor) and total.requires_grad else [None] * len(leaves)
    )
    return out, grads, second


def _np(t):
    return None if t is None else t.detach().numpy().astype(np.float64)


def _check(program, dtype, tolerance):
    ours = _run(chainrule, program, dtype)
    theirs = _run(torch, program, dtype)
    np.testing.assert_allclose(_np(ours[0]), _np(theirs[0]), rtol=tolerance, atol=tolerance)
    for kind, a_list, b_list in (("grad", ours[1], theirs[1]), ("grad-grad", ours[2], theirs[2])):
        for i, (a, b) in enumerate(zip(a_list, b_list, strict=True)):
            a_values = np.zeros_like(_np(b)) if a is None and b is not None else _np(a)
            b_values = np.zeros_like(_np(a)) if b is None and a is not None else _np(b)
            if a_values is None:
                continue
            np.testing.assert_allclose(a_values, b_values, rtol=tolerance, atol=tolerance,
                                       err_msg=f"{kind} of input {i}: {program}")


@settings(max_examples=120, deadline=None)
@given(programs())
def test_random_programs_float64(program) -> None:
    _check(program, "float64", 1e-9)


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_programs_float32(program) -> None:
    _check(program, "float32", 2e-4)
