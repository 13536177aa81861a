"""torch.fft against PyTorch: every transform over real, complex, integer and half inputs,
with ``n``/``s`` padding and cutting, ``dim`` choices, the three norms, errors (type and
message, in PyTorch's order of checks), node names, first- and second-order gradients, and the
frequency and shift helpers. The OpInfo sweep (tests/opinfos/fft.py) adds random samples,
gradchecks and layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIM = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "rfftn", "irfft2", "irfftn", "hfft2",
         "hfftn", "ihfft2", "ihfftn"]
ONE_DIM_ARGS = [{}, {"n": 6}, {"n": 3}, {"n": 1}, {"dim": 0}, {"norm": "ortho"},
                {"norm": "forward"}, {"norm": "backward"}, {"n": 0}, {"n": -2}, {"dim": 2},
                {"norm": "bad"}, {"n": 5, "dim": -1, "norm": "ortho"}]
N_DIM_ARGS = [{}, {"s": (3, 5)}, {"s": (4,)}, {"dim": (0,)}, {"dim": (-1, 0)},
              {"norm": "ortho"}, {"norm": "forward"}, {"s": (2, -1), "dim": (0, 1)},
              {"dim": ()}, {"dim": (0, 0)}, {"s": (2, 2, 2, 2)}, {"s": (2,), "dim": (0, 1)},
              {"s": (0, 2)}, {"dim": (5,)}, {"norm": "bad"}]
SHAPES = [(5,), (4,), (3, 4), (2, 3, 4), (1,), ()]
DTYPES = ["float64", "float32", "complex128", "complex64", "int64", "bool", "float16",
          "bfloat16"]


def _array(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype == "int64":
        return rng.integers(-3, 4, shape)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.standard_normal(shape).astype("float32" if dtype == "bfloat16" else dtype)


def _tensor(lib: Any, values: np.ndarray, dtype: str, requires_grad: bool = False) -> Any:
    t = lib.tensor(values.copy(), requires_grad=requires_grad)
    return t.to(lib.bfloat16) if dtype == "bfloat16" else t


def _numpy(t: Any) -> np.ndarray:
    # (both libraries' detach() keeps the conjugate bit: numpy() refuses it unresolved)
    return t.detach().resolve_conj().numpy()


def _same(fn: Callable[[Any], Any], what: str, rtol: float = 1e-10,
          atol: float = 1e-10) -> tuple[Any, Any] | None:
    try:
        theirs = fn(torch)
    except Exception as error:  # noqa: BLE001 - any error of PyTorch's must be chainrule's too
        with pytest.raises(type(error)) as caught:
            fn(chainrule)
        assert str(caught.value) == str(error), what
        return None
    ours = fn(chainrule)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    assert ours.is_conj() == theirs.is_conj(), what
    np.testing.assert_allclose(_numpy(ours), _numpy(theirs), rtol=rtol, atol=atol, err_msg=what)
    return ours, theirs


def _tolerance(dtype: str) -> tuple[float, float]:
    return (1e-10, 1e-10) if dtype in ("float64", "complex128") else (2e-5, 2e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ONE_DIM)
def test_one_dimensional_transforms(name: str, dtype: str) -> None:
    for shape in SHAPES:
        values = _array(shape, dtype)
        for args in ONE_DIM_ARGS:
            _same(lambda lib, a=args, v=values: getattr(lib.fft, name)(_tensor(lib, v, dtype), **a),
                  f"{name} {dtype} {shape} {args}", *_tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", N_DIM)
def test_n_dimensional_transforms(name: str, dtype: str) -> None:
    for shape in SHAPES:
        values = _array(shape, dtype)
        for args in N_DIM_ARGS:
            _same(lambda lib, a=args, v=values: getattr(lib.fft, name)(_tensor(lib, v, dtype), **a),
                  f"{name} {dtype} {shape} {args}", *_tolerance(dtype))


def _real_loss(lib: Any, out: Any, weights: np.ndarray) -> Any:
    parts = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
    return (parts * lib.tensor(weights)).sum()


GRADIENT_CASES = [(name, args) for name in ONE_DIM for args in
                  ({}, {"n": 7}, {"n": 3}, {"dim": 0}, {"norm": "ortho"}, {"norm": "forward"})]
GRADIENT_CASES += [(name, args) for name in N_DIM for args in
                   ({}, {"s": (3, 5)}, {"dim": (0,)}, {"dim": (-1, 0)}, {"norm": "ortho"},
                    {"norm": "forward"}, {"s": (2, -1), "dim": (0, 1)})]


# (rfft* and ihfft* take real input only: their error for complex input is in the tests above)
GRADIENT_CASES = [(name, args, dtype) for name, args in GRADIENT_CASES
                  for dtype in ("float64", "complex128")
                  if dtype == "float64" or not name.startswith(("rfft", "ihfft"))]


@pytest.mark.parametrize(("name", "args", "dtype"), GRADIENT_CASES,
                         ids=[f"{n}-{a}-{d}" for n, a, d in GRADIENT_CASES])
def test_gradients_first_and_second_order(name: str, args: dict[str, Any], dtype: str) -> None:
    shape = (5,) if name in ONE_DIM else (2, 3, 4)
    if name in ONE_DIM and "dim" in args:
        shape = (3, 4)
    values = _array(shape, dtype, seed=2)
    theirs_out = getattr(torch.fft, name)(torch.tensor(values), **args)
    rng = np.random.default_rng(5)
    out_weights = rng.standard_normal(tuple(theirs_out.shape) + (
        (2,) if theirs_out.is_complex() else ()))
    in_weights = rng.standard_normal(shape + ((2,) if dtype == "complex128" else ()))
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(values.copy(), requires_grad=True)
        out = getattr(lib.fft, name)(x, **args)
        v = lib.tensor(out_weights, requires_grad=True)
        parts = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
        (grad,) = lib.autograd.grad((parts * v).sum(), x, create_graph=True)
        (grad_of_grad,) = lib.autograd.grad(_real_loss(lib, grad, in_weights), v)
        results.append((out.grad_fn.name(), grad, grad_of_grad))
    (their_node, their_grad, their_gg), (our_node, our_grad, our_gg) = results
    assert our_node == their_node
    assert str(our_grad.dtype).split(".")[-1] == str(their_grad.dtype).split(".")[-1]
    np.testing.assert_allclose(_numpy(our_grad), _numpy(their_grad), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_numpy(our_gg), _numpy(their_gg), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fft", "rfft", "ifft", "irfft", "fft2", "rfftn", "hfftn"])
def test_float32_gradients_keep_the_precision(name: str) -> None:
    values = _array((3, 4), "float32", seed=4)
    grads = []
    for lib in (torch, chainrule):
        x = lib.tensor(values.copy(), requires_grad=True)
        out = getattr(lib.fft, name)(x)
        _real_loss(lib, out, np.ones(tuple(out.shape) + ((2,) if out.is_complex() else ()),
                                     np.float32)).backward()
        grads.append(x.grad)
    assert str(grads[1].dtype).split(".")[-1] == str(grads[0].dtype).split(".")[-1]
    np.testing.assert_allclose(_numpy(grads[1]), _numpy(grads[0]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies(name: str) -> None:
    for n in (1, 4, 5, 8):
        for d in (1.0, 0.25):
            _same(lambda lib, k=n, s=d: getattr(lib.fft, name)(k, s), name)
            _same(lambda lib, k=n, s=d: getattr(lib.fft, name)(k, s, dtype=lib.float64), name)
    for lib in (torch, chainrule):
        assert getattr(lib.fft, name)(5, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name: str) -> None:
    for shape in [(5,), (4,), (3, 4), (2, 3, 5)]:
        values = _array(shape, "float64")
        for dim in (None, 0, -1, (0, -1)):
            result = _same(lambda lib, d=dim, v=values: getattr(lib.fft, name)(
                lib.tensor(v.copy(), requires_grad=True), dim=d), name)
            assert result is not None
            assert result[0].grad_fn.name() == result[1].grad_fn.name()


def test_round_trips() -> None:
    x = chainrule.randn(4, 6, dtype=chainrule.float64)
    assert chainrule.allclose(chainrule.fft.ifft(chainrule.fft.fft(x)).real, x)
    assert chainrule.allclose(chainrule.fft.irfftn(chainrule.fft.rfftn(x), s=(4, 6)), x)
    assert chainrule.allclose(chainrule.fft.hfft(chainrule.fft.ihfft(x), n=6), x)


@pytest.mark.parametrize("name", ONE_DIM + N_DIM)
def test_non_finite_inputs(name: str) -> None:
    """Infinities and NaN reach the same outputs as in PyTorch, and the other outputs agree
    (whether a reached output is NaN or +-inf depends on the FFT algorithm's order of
    butterflies: PyTorch's MKL and chainrule's pocketfft differ there)."""
    values = np.array([[0.0, -0.0, 1.0, -1.0, 0.5], [-2.5, np.inf, -np.inf, 3.0, 1e-30],
                       [np.nan, 2.0, 3.0, -1.0, 0.25], [1.0, 2.0, 3.0, 4.0, 5.0]])
    inputs = [values]
    if not name.startswith(("rfft", "ihfft")):
        inputs.append(values + 1j * np.roll(values, 1))
    for x in inputs:
        for args in ({}, {"norm": "ortho"}, {"norm": "forward"}, {"dim": 0}):
            if name in N_DIM and "dim" in args:
                args = {"dim": (0,)}
            a = _numpy(getattr(chainrule.fft, name)(chainrule.tensor(x), **args))
            b = _numpy(getattr(torch.fft, name)(torch.tensor(x), **args))
            np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
            finite = np.isfinite(b)
            np.testing.assert_allclose(a[finite], b[finite], rtol=1e-10, atol=1e-10)
