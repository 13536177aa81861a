"""Complex autograd against PyTorch: leaves that require grad, the allowlisted ops (values,
gradients, node names, ``.grad`` dtypes), special values, broadcasting, real/complex mixes,
errors, and random compositions.

PyTorch's convention: the gradient of a real loss with respect to ``z = x + iy`` is
``dL/dx + i dL/dy`` (the conjugate Wirtinger derivative, doubled); a complex gradient reaching a
real input contributes its real part.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (chainrule, torch)
INF, NAN = math.inf, math.nan


def _np(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    return np.asarray(t.detach()._data)


def _leaf(lib: Any, values: np.ndarray) -> Any:
    return lib.tensor(values.copy(), requires_grad=True)


def _real_loss(lib: Any, out: Any, seed: int = 7) -> Any:
    """A real scalar of ``out`` that weighs every real and imaginary part differently."""
    rng = np.random.default_rng(seed)
    if out.is_complex():
        w = rng.uniform(-1, 1, tuple(out.shape) + (2,))
        parts = lib.view_as_real(out.resolve_conj())
        return (parts * lib.tensor(w, dtype=parts.dtype)).sum()
    w = rng.uniform(-1, 1, tuple(out.shape))
    return (out * lib.tensor(w, dtype=out.dtype)).sum()


def _close(ours: Any, theirs: Any, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    a, b = _np(ours), _np(theirs)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _compare(fn: Callable[..., Any], *arrays: np.ndarray, rtol: float = 1e-6,
             atol: float = 1e-7, node: str | None = None) -> None:
    """``fn(lib, *leaves)`` in both libraries: values, node name, gradients of a real loss
    (and their dtypes) of every leaf."""
    results = []
    for lib in LIBS:
        leaves = [_leaf(lib, a) for a in arrays]
        out = fn(lib, *leaves)
        _real_loss(lib, out).backward()
        results.append((out, leaves))
    (ours, our_leaves), (theirs, their_leaves) = results
    _close(ours, theirs, rtol, atol)
    assert ours.is_conj() == theirs.is_conj()
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    if node is not None:
        assert type(ours.grad_fn).__name__ == node
    for a, b in zip(our_leaves, their_leaves, strict=True):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert str(a.grad.dtype).split(".")[-1] == str(b.grad.dtype).split(".")[-1]
            _close(a.grad, b.grad, rtol, atol)


RNG = np.random.default_rng(0)


def _c(*shape: int, dtype: Any = np.complex128) -> np.ndarray:
    return (RNG.uniform(-2, 2, shape) + 1j * RNG.uniform(-2, 2, shape)).astype(dtype)


def _r(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.uniform(-2, 2, shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# Leaves


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_leaves_require_grad_and_get_gradients_of_their_dtype(dtype: str) -> None:
    for lib in LIBS:
        d = getattr(lib, dtype)
        a = lib.tensor([1 + 2j, 3 - 1j], dtype=d, requires_grad=True)
        b = lib.zeros(2, dtype=d).requires_grad_()
        c = lib.randn(2, dtype=d, requires_grad=True)
        assert a.requires_grad and b.requires_grad and c.requires_grad and a.is_leaf
        (a * b + c).abs().sum().backward()
        assert a.grad.dtype == d and b.grad.dtype == d and c.grad.dtype == d
    _compare(lambda lib, z: z.abs(), _c(3, dtype=getattr(np, dtype)))


def test_integer_tensors_still_refuse_grad() -> None:
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
            lib.tensor([1, 2]).requires_grad_()


# ----------------------------------------------------------------------------------------------
# The allowlisted ops, one by one

Z, W, X = _c(3), _c(3), _r(3)
M1, M2 = _c(2, 3), _c(3, 4)

CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "add": (lambda lib, z, w: z + w, (Z, W)),
    "add_alpha": (lambda lib, z, w: lib.add(z, w, alpha=2.5), (Z, W)),
    "add_complex_alpha": (lambda lib, z, w: lib.add(z, w, alpha=1 - 2j), (Z, W)),
    "sub": (lambda lib, z, w: z - w, (Z, W)),
    "sub_complex_alpha": (lambda lib, z, w: lib.sub(z, w, alpha=0.5 + 1j), (Z, W)),
    "mul": (lambda lib, z, w: z * w, (Z, W)),
    "mul_self": (lambda lib, z: z * z, (Z,)),
    "div": (lambda lib, z, w: z / w, (Z, W)),
    "neg": (lambda lib, z: -z, (Z,)),
    "conj": (lambda lib, z: z.conj(), (Z,)),
    "conj_twice": (lambda lib, z: z.conj().conj(), (Z,)),
    "conj_times": (lambda lib, z: z.conj() * z, (Z,)),
    "resolve_conj": (lambda lib, z: z.conj().resolve_conj(), (Z,)),
    "real": (lambda lib, z: z.real, (Z,)),
    "imag": (lambda lib, z: z.imag, (Z,)),
    "real_of_conj": (lambda lib, z: z.conj().real * 2, (Z,)),
    "imag_of_conj": (lambda lib, z: z.conj().imag * 2, (Z,)),
    "torch_real_imag": (lambda lib, z: lib.real(z) * lib.imag(z), (Z,)),
    "abs": (lambda lib, z: z.abs(), (Z,)),
    "angle": (lambda lib, z: z.angle(), (Z,)),
    "angle_real": (lambda lib, x: x.angle(), (X,)),
    "sgn": (lambda lib, z: z.sgn(), (Z,)),
    "sgn_real": (lambda lib, x: x.sgn() * x, (X,)),
    "where": (lambda lib, z, w: lib.where(z.real > 0, z, w), (Z, W)),
    "exp": (lambda lib, z: z.exp(), (Z,)),
    "sum": (lambda lib, z: z.sum(), (_c(2, 3),)),
    "sum_dim": (lambda lib, z: z.sum(1), (_c(2, 3),)),
    "mean": (lambda lib, z: z.mean(), (_c(2, 3),)),
    "mean_dim": (lambda lib, z: z.mean(0, keepdim=True), (_c(2, 3),)),
    "mm": (lambda lib, a, b: lib.mm(a, b), (M1, M2)),
    "mm_transposed": (lambda lib, a, b: a @ b.t(), (M1, _c(4, 3))),
    "matmul_1d_1d": (lambda lib, a, b: a @ b, (_c(3), _c(3))),
    "matmul_2d_1d": (lambda lib, a, b: a @ b, (M1, _c(3))),
    "matmul_1d_2d": (lambda lib, a, b: a @ b, (_c(2), M1)),
    "matmul_batched": (lambda lib, a, b: a @ b, (_c(2, 2, 3), _c(2, 3, 4))),
    "matmul_broadcast": (lambda lib, a, b: a @ b, (_c(2, 2, 3), _c(3, 4))),
    "matmul_folded": (lambda lib, a, b: a @ b, (_c(3, 2), _c(2, 2, 3))),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), (_c(2, 2, 3), _c(2, 3, 4))),
    "mv": (lambda lib, a, b: lib.mv(a, b), (M1, _c(3))),
    "dot": (lambda lib, a, b: lib.dot(a, b), (_c(3), _c(3))),
    "vdot": (lambda lib, a, b: lib.vdot(a, b), (_c(3), _c(3))),
    "mH": (lambda lib, a: a.mH, (M1,)),
    "H": (lambda lib, a: a.H @ a, (M1,)),
    "adjoint": (lambda lib, a: a.adjoint() * 2, (M1,)),
    "view_as_real": (lambda lib, z: lib.view_as_real(z), (Z,)),
    "view_as_complex": (lambda lib, x: lib.view_as_complex(x), (_r(3, 2),)),
    "view_as_complex_of_real": (
        lambda lib, z: lib.view_as_complex(lib.view_as_real(z) * 2), (Z,)),
    "complex": (lambda lib, x, y: lib.complex(x, y), (X, _r(3))),
    "complex_broadcast": (lambda lib, x, y: lib.complex(x, y), (_r(2, 1), _r(3))),
    "polar": (lambda lib, r, a: lib.polar(r, a), (np.abs(X) + 0.1, _r(3))),
    "to_complex": (lambda lib, x: x.to(lib.complex128) * (1 + 1j), (X,)),
    "clone": (lambda lib, z: z.clone(), (Z,)),
    "views": (lambda lib, z: z.reshape(2, 3).t().unsqueeze(0).squeeze(0).transpose(0, 1)
              .permute(1, 0).expand(2, 3, 2)[1, 0], (_c(6),)),
    "view": (lambda lib, z: z.view(3, 2).contiguous() * 1j, (_c(6),)),
    "select": (lambda lib, z: z[1], (_c(2, 3),)),
    "real_times_complex": (lambda lib, x: x * (1 + 2j), (X,)),
    "complex_number_times_real": (lambda lib, x: (2 - 1j) * x, (X,)),
    "real_plus_complex_tensor": (lambda lib, x, z: x + z, (X, Z)),
    "real_times_complex_tensor": (lambda lib, x, z: x * z, (X, Z)),
    "real_over_complex_tensor": (lambda lib, x, z: x / z, (X, Z)),
    "complex_over_real_tensor": (lambda lib, z, x: z / x, (Z, X)),
    "complex_over_number": (lambda lib, z: z / (2 + 1j), (Z,)),
    "number_minus_complex": (lambda lib, z: (3 - 1j) - z, (Z,)),
    "number_over_complex": (lambda lib, z: (3 - 1j) / z, (Z,)),
    "rsub_alpha": (lambda lib, z, w: lib.rsub(z, w, alpha=1 + 1j), (Z, W)),
    "reciprocal": (lambda lib, z: z.reciprocal(), (Z,)),
    "complex_exp_of_real": (lambda lib, x: (x * 1j).exp(), (X,)),
    "abs_of_rotated": (lambda lib, x: (x * 1j).abs(), (X,)),
    "broadcast_mul": (lambda lib, z, w: z * w, (_c(3, 1), _c(4))),
    "broadcast_real_complex": (lambda lib, x, z: x * z, (_r(3, 1), _c(4))),
    "broadcast_div": (lambda lib, z, x: z / x, (_c(3, 1), _r(4))),
    "complex64": (lambda lib, z, w: (z * w.conj()).exp() / w,
                  (_c(3, dtype=np.complex64), _c(3, dtype=np.complex64))),
    "complex64_with_float32": (lambda lib, z, x: z * x,
                               (_c(3, dtype=np.complex64), _r(3, dtype=np.float32))),
    "complex128_with_float32": (lambda lib, z, x: z * x,
                                (_c(3), _r(3, dtype=np.float32))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_allowlisted_op_matches_pytorch(name: str) -> None:
    fn, arrays = CASES[name]
    loose = any(a.dtype in (np.complex64, np.float32) for a in arrays)
    _compare(fn, *arrays, rtol=1e-5 if loose else 1e-6, atol=1e-6 if loose else 1e-7)


@pytest.mark.parametrize(("fn", "node"), [
    (lambda lib, z: z.conj(), "ConjBackward0"),
    (lambda lib, z: z.real, "SelectBackward0"),
    (lambda lib, z: z.imag, "SelectBackward0"),
    (lambda lib, z: lib.view_as_real(z), "ViewAsRealBackward0"),
    (lambda lib, z: z.angle(), "AngleBackward0"),
    (lambda lib, z: z.abs(), "AbsBackward0"),
    (lambda lib, z: z.conj().resolve_conj(), "CloneBackward0"),
    (lambda lib, z: lib.complex(z.real, z.imag), "ComplexBackward0"),
    (lambda lib, z: lib.polar(z.abs(), z.angle()), "PolarBackward0"),
], ids=["conj", "real", "imag", "view_as_real", "angle", "abs", "resolve_conj", "complex",
        "polar"])
def test_node_names_and_edges(fn: Any, node: str) -> None:
    names = []
    for lib in LIBS:
        out = fn(lib, _leaf(lib, Z))
        chain, fn_ = [], out.grad_fn
        while fn_ is not None:  # (the first edge of each node, down to the leaf)
            chain.append(type(fn_).__name__)
            fn_ = fn_.next_functions[0][0] if fn_.next_functions else None
        names.append(chain)
    assert names[0] == names[1] and names[0][0] == node


def test_views_share_memory_and_version_with_their_base() -> None:
    z = chainrule.tensor([1 + 2j, 3 - 4j])
    r, i, v = z.real, z.imag, chainrule.view_as_real(z)
    assert r._base is z and i._base is z and v._base is z
    z.mul_(2)
    assert r.tolist() == [2.0, 6.0] and i.tolist() == [4.0, -8.0] and r._version == 1
    x = chainrule.zeros(3, 2)
    c = chainrule.view_as_complex(x)
    c.add_(1j)
    assert x.tolist() == [[0.0, 1.0]] * 3 and c._base is x
    z.real = chainrule.tensor([5.0, 6.0])  # (the setter copies into the view, as PyTorch's)
    assert z.tolist() == [5 + 4j, 6 - 8j]


def test_conj_flag_as_pytorch() -> None:
    for lib in LIBS:
        z = lib.tensor([1 + 2j], requires_grad=True)
        x = lib.tensor([1.0], requires_grad=True)
        assert z.conj().is_conj() and not z.conj().conj().is_conj()
        assert not z.conj().clone().is_conj() and not (z.conj() * 2).is_conj()
        assert not z.conj().resolve_conj().is_conj() and z.resolve_conj() is z
        assert x.conj() is x and not x.conj().is_conj() and x.real is x
        assert lib.is_conj(z.conj()) and not lib.is_conj(z)
        assert z.detach().mH.is_conj() if z.dim() >= 2 else True


# ----------------------------------------------------------------------------------------------
# Special values: 0 (abs, angle, sgn), inf, nan

SPECIAL = np.array([0j, 1 + 1j, -0.0 + 0j, complex(INF, 0), complex(0, -INF), complex(NAN, 1),
                    complex(INF, INF), 1e-30 + 0j, -2 + 0j, complex(1, NAN)])


@pytest.mark.parametrize("name", ["abs", "angle", "exp", "div_by", "div_into", "mul", "sgn",
                                  "polar_back", "abs_real_part"])
def test_special_values(name: str) -> None:
    fns = {
        "abs": lambda lib, z: z.abs(),
        "angle": lambda lib, z: z.angle(),
        "exp": lambda lib, z: z.exp(),
        "div_by": lambda lib, z: (1 + 1j) / z,
        "div_into": lambda lib, z: z / (1 - 2j),
        "mul": lambda lib, z: z * z.conj(),
        "sgn": lambda lib, z: z.sgn(),
        "polar_back": lambda lib, z: lib.polar(z.abs(), z.angle()),
        "abs_real_part": lambda lib, z: z.real.abs() + z.imag,
    }
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _compare(fns[name], SPECIAL)


def test_special_values_of_real_angle() -> None:
    _compare(lambda lib, x: x.angle(), np.array([-1.0, 0.0, -0.0, 2.0, NAN, -INF, INF]))


# ----------------------------------------------------------------------------------------------
# backward and its errors


def test_backward_of_a_complex_scalar_is_refused_as_in_pytorch() -> None:
    messages = []
    for lib in LIBS:
        z = lib.tensor([1 + 2j], requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            (z * 2).sum().backward()
        messages.append(str(info.value))
        assert z.grad is None
    assert messages[0].replace("chainrule", "torch") == messages[1]
    assert "grad can be implicitly created only for real scalar outputs" in messages[0]


def test_backward_of_a_complex_output_with_a_gradient() -> None:
    grads = []
    for lib in LIBS:
        z = lib.tensor([1 + 2j, -1j], requires_grad=True)
        (z * (2 - 1j)).backward(lib.tensor([1 - 1j, 2j]))
        grads.append(z.grad)
    _close(*grads)
    for lib in LIBS:
        z = lib.tensor([1 + 2j], requires_grad=True)
        with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output"):
            (z * 2).backward(lib.tensor([1.0]))


def test_autograd_grad_and_second_order() -> None:
    results = []
    for lib in LIBS:
        z = _leaf(lib, Z)
        w = _leaf(lib, W)
        loss = _real_loss(lib, (z * w.conj()).exp() / w)
        gz, = lib.autograd.grad(loss, z, create_graph=True)
        second = lib.autograd.grad(_real_loss(lib, gz * w), (z, w))
        results.append((gz, *second))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["abs", "angle", "polar", "sgn"])
def test_second_order_of_abs_angle_polar_sgn(name: str) -> None:
    fns = {"abs": lambda lib, z: z.abs(), "angle": lambda lib, z: z.angle(),
           "polar": lambda lib, z: lib.polar(z.real.abs() + 0.5, z.imag), "sgn": lambda lib, z:
           z.sgn()}
    results = []
    for lib in LIBS:
        z = _leaf(lib, Z)
        g, = lib.autograd.grad(_real_loss(lib, fns[name](lib, z)), z, create_graph=True)
        results.append((g, *lib.autograd.grad(_real_loss(lib, g * z, 3), z)))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_complex_gradient_into_a_real_leaf_takes_the_real_part() -> None:
    # The engine's cast, as PyTorch's handle_r_to_c (no ComplexWarning).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _compare(lambda lib, x, z: (x.to(z.dtype) * z + x * 1j).exp(), X, Z)


def test_accumulation_of_real_and_complex_paths() -> None:
    _compare(lambda lib, z: z * z + z.abs() + z.real * 3 - z.imag * 1j, Z)


def test_custom_function_with_complex_output() -> None:
    results = []
    for lib in LIBS:
        class Rotate(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, z: Any) -> Any:
                return z * 1j

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                return grad * -1j

        z = _leaf(lib, Z)
        out = Rotate.apply(z)
        _real_loss(lib, out.abs() * out.real).backward()
        results.append(z.grad)
    _close(*results)


# ----------------------------------------------------------------------------------------------
# Errors of the new functions


@pytest.mark.parametrize("fn", [
    lambda lib: lib.view_as_real(lib.tensor([1.0])),
    lambda lib: lib.view_as_real(lib.tensor([1j]).conj()),
    lambda lib: lib.view_as_complex(lib.ones(2, 3)),
    lambda lib: lib.view_as_complex(lib.ones(3, 2).t()),
    lambda lib: lib.view_as_complex(lib.tensor([[1, 2]])),
    lambda lib: lib.view_as_complex(lib.ones(2, dtype=lib.bfloat16)),
    lambda lib: lib.complex(lib.ones(1), lib.ones(1, dtype=lib.float64)),
    lambda lib: lib.complex(lib.ones(1), lib.tensor([1])),
    lambda lib: lib.complex(lib.ones(1), 1.0),
    lambda lib: lib.polar(lib.tensor([1]), lib.tensor([1])),
    lambda lib: lib.tensor([1.0]).imag,
], ids=["vr_real", "vr_conj", "vc_last", "vc_stride", "vc_int", "vc_bf16", "complex_dtypes",
        "complex_int", "complex_number", "polar_int", "imag_real"])
def test_errors_as_pytorch(fn: Any) -> None:
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]).replace("chainrule", "torch") == str(errors[1])


def test_values_without_grad_as_pytorch() -> None:
    specials = [np.array([0.0, INF, -1.0, NAN]), np.array([INF, 0.0, NAN, 2.0])]
    for fn in (lambda lib, a, b: lib.complex(a, b), lambda lib, a, b: lib.polar(a, b)):
        with np.errstate(all="ignore"):
            _close(fn(chainrule, *map(chainrule.tensor, specials)),
                   fn(torch, *map(torch.tensor, specials)))
    _close(chainrule.tensor(SPECIAL).sgn(), torch.tensor(SPECIAL).sgn())


# ----------------------------------------------------------------------------------------------
# Random compositions of allowlisted ops

UNARY: list[Callable[[Any, Any], Any]] = [
    lambda lib, a: a.conj(), lambda lib, a: -a, lambda lib, a: (a * 0.3).exp(),
    lambda lib, a: a * (0.5 - 1j), lambda lib, a: a / (1 + a.abs()),
    lambda lib, a: lib.complex(a.real, a.imag * 2), lambda lib, a: a.angle() * a,
    lambda lib, a: lib.view_as_complex(lib.view_as_real(a) * 0.5),
    lambda lib, a: lib.polar(a.abs() + 0.5, a.angle()), lambda lib, a: a.resolve_conj() - 1j,
    lambda lib, a: a.t().t(), lambda lib, a: a.mean(0, keepdim=True) + a,
]
BINARY: list[Callable[[Any, Any, Any], Any]] = [
    lambda lib, a, b: a + b, lambda lib, a, b: a - b * 2, lambda lib, a, b: a * b.conj(),
    lambda lib, a, b: a / (b.abs() + 1), lambda lib, a, b: (a @ b.mH) @ b,
    lambda lib, a, b: a * b.real,
]


@pytest.mark.parametrize("seed", range(12))
def test_random_compositions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    steps = [(int(rng.integers(2)), int(rng.integers(12))) for _ in range(6)]
    a0 = (rng.uniform(-1, 1, (3, 3)) + 1j * rng.uniform(-1, 1, (3, 3)))
    b0 = (rng.uniform(-1, 1, (3, 3)) + 1j * rng.uniform(-1, 1, (3, 3)))
    x0 = rng.uniform(-1, 1, (3, 3))

    def composed(lib: Any, a: Any, b: Any, x: Any) -> Any:
        out = a * x
        for kind, k in steps:
            if kind == 0:
                out = UNARY[k % len(UNARY)](lib, out)
            else:
                out = BINARY[k % len(BINARY)](lib, out, b)
        return out

    _compare(composed, a0, b0, x0, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------------------------
# gradcheck of complex functions: PyTorch's checks of the real and imaginary parts, its message


class _MissingConjugate:
    """A custom Function whose backward forgets the conjugate: gradcheck must catch it."""

    @staticmethod
    def make(lib: Any) -> Any:
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, z: Any) -> Any:
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (z,) = ctx.saved_tensors
                return g * 2 * z  # (PyTorch's convention wants g * 2 * z.conj())

        return Square


def test_complex_gradcheck_passes_and_fails_as_pytorch() -> None:
    values = np.array([0.3 + 0.4j, -1.2 + 0.7j])
    messages = []
    for lib in LIBS:
        z = lib.tensor(values, requires_grad=True)
        x = lib.tensor(values.real.copy(), requires_grad=True)
        assert lib.autograd.gradcheck(lambda z: z.sin() * z.conj(), (z,))
        assert lib.autograd.gradcheck(lambda z: z.abs(), (z,))
        assert lib.autograd.gradcheck(lambda x: x * (1 + 2j), (x,))
        assert lib.autograd.gradcheck(lambda z: z.exp(), (z,), fast_mode=True)
        with pytest.raises(RuntimeError) as info:  # (GradcheckError, a RuntimeError)
            lib.autograd.gradcheck(_MissingConjugate.make(lib).apply, (z,))
        assert type(info.value).__name__ == "GradcheckError"
        messages.append(str(info.value).replace("chainrule.", "torch."))
    assert messages[0] == messages[1]
    assert messages[0].startswith("While considering the imaginary part of complex outputs only")
