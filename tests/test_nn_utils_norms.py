"""Weight norm, spectral norm and orthogonal parametrizations against PyTorch, in both APIs:
``nn.utils.parametrizations`` (weight_norm, spectral_norm, orthogonal) and the older hook-based
``nn.utils.weight_norm`` / ``spectral_norm`` with their ``remove_*``. Values, parameter and
buffer names, gradients of the stored tensors, power-iteration steps (vectors copied from
PyTorch, as their start is random), assignment, removal, warnings and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LIBS = (torch, chainrule)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy().copy()


def _layer(lib: Any, kind: str) -> Any:
    if kind == "linear":
        layer = lib.nn.Linear(3, 4)
    elif kind == "conv":
        layer = lib.nn.Conv2d(2, 3, 2)
    else:
        layer = lib.nn.ConvTranspose2d(2, 3, 2)
    layer = layer.double()
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for p in layer.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return layer


def _input(lib: Any, kind: str) -> Any:
    shape = (2, 3) if kind == "linear" else (1, 2, 3, 3)
    return lib.tensor(np.random.default_rng(3).standard_normal(shape))


def _compare(theirs: list[Any], ours: list[Any]) -> None:
    for a, b in zip(theirs, ours, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)
        else:
            assert b == a


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_parametrized_weight_norm(kind: str, dim: int | None) -> None:
    seen = []
    for lib in LIBS:
        layer = lib.nn.utils.parametrizations.weight_norm(_layer(lib, kind), dim=dim)
        plist = layer.parametrizations.weight
        out = layer(_input(lib, kind))
        (out**2).sum().backward()
        row = [
            _np(layer.weight),
            _np(out),
            _np(plist.original0),
            _np(plist.original0.grad),
            _np(plist.original1.grad),
            [n for n, _ in layer.named_parameters()],
            str(layer).replace("chainrule", "torch"),
        ]
        layer.weight = lib.ones_like(layer.weight) * 2
        row += [_np(plist.original0), _np(layer.weight)]
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
        row += [_np(layer.weight), type(layer).__name__]
        seen.append(row)
    _compare(*seen)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm(kind: str, dim: int | None) -> None:
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = lib.nn.utils.weight_norm(_layer(lib, kind), dim=dim)
        before = _np(layer.weight)
        with lib.no_grad():
            layer.weight_v.mul_(3)
            layer.weight_g.add_(1)
        out = layer(_input(lib, kind))
        (out**2).sum().backward()
        row = [
            [
                (type(w.message).__name__, str(w.message).replace("chainrule", "torch"))
                for w in caught
            ],
            before,
            _np(out),
            _np(layer.weight),
            _np(layer.weight_g.grad),
            _np(layer.weight_v.grad),
            list(layer.state_dict()),
            type(layer.weight).__name__,
        ]
        lib.nn.utils.remove_weight_norm(layer)
        row += [_np(layer.weight), list(layer.state_dict()), type(layer.weight).__name__]
        seen.append(row)
    _compare(*seen)


def _copy_vectors(source: Any, target: Any, names: tuple[str, str]) -> None:
    with chainrule.no_grad():
        for name in names:
            getattr(target, name).copy_(chainrule.tensor(getattr(source, name).numpy()))


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_transpose"])
def test_parametrized_spectral_norm(kind: str) -> None:
    layers = [_layer(lib, kind) for lib in LIBS]
    for layer, lib in zip(layers, LIBS, strict=True):
        lib.nn.utils.parametrizations.spectral_norm(layer, n_power_iterations=2)
    _copy_vectors(
        layers[0].parametrizations.weight[0], layers[1].parametrizations.weight[0], ("_u", "_v")
    )
    seen = []
    for layer, lib in zip(layers, LIBS, strict=True):
        snm = layer.parametrizations.weight[0]
        first = _np(layer.weight)  # a training-mode access: two power-iteration steps
        out = layer(_input(lib, kind))
        out.sum().backward()
        layer.eval()
        frozen = [_np(layer.weight), _np(layer.weight)]
        seen.append(
            [
                first,
                _np(out),
                _np(layer.parametrizations.weight.original.grad),
                *frozen,
                _np(snm._u),
                _np(snm._v),
                snm.dim,
                [n for n, _ in layer.named_buffers()],
                list(layer.state_dict()),
            ]
        )
    _compare(*seen)


def test_parametrized_spectral_norm_of_a_vector() -> None:
    seen = []
    for lib in LIBS:
        layer = lib.nn.utils.parametrizations.spectral_norm(_layer(lib, "linear"), "bias")
        seen.append([_np(layer.bias), [n for n, _ in layer.named_buffers()]])
    _compare(*seen)


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_transpose"])
def test_hook_spectral_norm(kind: str) -> None:
    layers = [_layer(lib, kind) for lib in LIBS]
    for layer, lib in zip(layers, LIBS, strict=True):
        lib.nn.utils.spectral_norm(layer, n_power_iterations=3)
    _copy_vectors(layers[0], layers[1], ("weight_u", "weight_v"))
    seen = []
    for layer, lib in zip(layers, LIBS, strict=True):
        out = layer(_input(lib, kind))
        out.sum().backward()
        row = [
            _np(out),
            _np(layer.weight),
            _np(layer.weight_orig.grad),
            _np(layer.weight_u),
            _np(layer.weight_v),
            list(layer.state_dict()),
        ]
        layer.eval()
        row.append(_np(layer(_input(lib, kind))))
        lib.nn.utils.remove_spectral_norm(layer)
        row += [_np(layer.weight), list(layer.state_dict()), type(layer.weight).__name__]
        seen.append(row)
    _compare(*seen)


def _matrix(lib: Any, rows: int, cols: int, batch: tuple[int, ...] = ()) -> Any:
    layer = lib.nn.Linear(cols, rows).double()
    values = np.random.default_rng(rows * 10 + cols).standard_normal((*batch, rows, cols))
    if batch:
        layer.weight = lib.nn.Parameter(lib.tensor(values))
    else:
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(values))
    return layer


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_without_trivialization(shape: tuple[int, ...], orthogonal_map: str) -> None:
    seen = []
    for lib in LIBS:
        layer = _matrix(lib, shape[-2], shape[-1], shape[:-2])
        lib.nn.utils.parametrizations.orthogonal(
            layer, orthogonal_map=orthogonal_map, use_trivialization=False
        )
        Q = layer.weight
        (Q * lib.arange(Q.numel(), dtype=Q.dtype).reshape(Q.shape)).sum().backward()
        seen.append(
            [
                _np(Q),
                _np(layer.parametrizations.weight.original),
                _np(layer.parametrizations.weight.original.grad),
                [n for n, _ in layer.named_buffers()],
            ]
        )
    _compare(*seen)


@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal_with_trivialization_square(orthogonal_map: str | None) -> None:
    Q0 = np.linalg.qr(np.random.default_rng(5).standard_normal((3, 3)))[0]
    seen = []
    for lib in LIBS:
        layer = lib.nn.utils.parametrizations.orthogonal(
            _matrix(lib, 3, 3), orthogonal_map=orthogonal_map
        )
        plist = layer.parametrizations.weight
        row = [_np(layer.weight), _np(plist[0].base), _np(plist.original)]
        layer.weight.sum().backward()
        row.append(_np(plist.original.grad))
        layer.weight = lib.tensor(Q0)  # an orthogonal matrix is taken as it is
        row += [_np(layer.weight), _np(plist[0].base)]
        seen.append(row)
    _compare(*seen)
    np.testing.assert_allclose(seen[1][-2], Q0, atol=1e-12)


def test_orthogonal_tall_with_trivialization_is_orthogonal() -> None:
    for lib in LIBS:
        layer = lib.nn.utils.parametrizations.orthogonal(_matrix(lib, 5, 3))
        Q = _np(layer.weight)
        np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)


def test_errors() -> None:
    same_outcome(lambda lib: lib.nn.utils.parametrizations.orthogonal(_layer(lib, "linear"), "x"))
    same_outcome(
        lambda lib: lib.nn.utils.parametrizations.orthogonal(_layer(lib, "linear"), "bias")
    )
    same_outcome(
        lambda lib: lib.nn.utils.parametrizations.orthogonal(
            _layer(lib, "linear"), orthogonal_map="qr"
        )
    )
    same_outcome(
        lambda lib: setattr(
            lib.nn.utils.parametrizations.orthogonal(
                _matrix(lib, 3, 3), orthogonal_map="cayley", use_trivialization=False
            ),
            "weight",
            lib.eye(3, dtype=lib.float64),
        )
    )
    same_outcome(
        lambda lib: setattr(
            lib.nn.utils.parametrizations.orthogonal(_matrix(lib, 3, 3)),
            "weight",
            lib.eye(2, dtype=lib.float64),
        )
    )
    same_outcome(
        lambda lib: lib.nn.utils.parametrizations.spectral_norm(_layer(lib, "linear"), dim=2)
    )
    same_outcome(
        lambda lib: lib.nn.utils.parametrizations.spectral_norm(
            _layer(lib, "linear"), n_power_iterations=0
        )
    )
    same_outcome(lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.ReLU()))
    same_outcome(
        lambda lib: lib.nn.utils.spectral_norm(_layer(lib, "linear"), n_power_iterations=0)
    )
    same_outcome(
        lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), "bias", dim=0).bias.shape
    )
    same_outcome(
        lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2)))
    )
    same_outcome(lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)))
    same_outcome(lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        same_outcome(
            lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))
        )


def test_normalize_writes_into_out() -> None:
    """The power iterations rely on ``F.normalize(..., out=buffer)`` updating the buffer."""
    x = np.random.default_rng(0).standard_normal((3, 4))
    seen = []
    for lib in LIBS:
        out = lib.zeros(3, 4, dtype=lib.float64)
        result = lib.nn.functional.normalize(lib.tensor(x), dim=0, out=out)
        seen.append([_np(out), result is out, out._version])
    _compare(*seen)
    same_outcome(
        lambda lib: lib.nn.functional.normalize(
            lib.ones(3, requires_grad=True), dim=0, out=lib.zeros(3)
        )
    )
