"""``torch.stft`` / ``torch.istft`` and the Tensor methods against PyTorch: values, the graph's
nodes, first- and second-order gradients in the signal and the window (complex ones too),
every option, the round trip, argument errors and warnings. (The OpInfos in
tests/opinfos/stft.py add the sweeps.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule
import chainrule.ops.stft as stft_module

from .conftest import torch


def _chain(t, depth: int = 20) -> list[str]:
    """The names of the nodes along the first non-leaf edge of each node."""
    names = []
    node = t.grad_fn
    while node is not None and depth:
        names.append(type(node).__name__)
        following = [
            n
            for n, _ in node.next_functions
            if n is not None and type(n).__name__ != "AccumulateGrad"
        ]
        node = following[0] if following else None
        depth -= 1
    return names


def _real(lib, t):
    return lib.view_as_real(t) if t.is_complex() else t


def _run(lib, signal: np.ndarray, window: np.ndarray | None, kw: dict, inverse: dict | None):
    """The transform, its graph, gradients of two orders, and the inverse with its gradients."""
    x = lib.tensor(signal, requires_grad=True)
    w = None if window is None else lib.tensor(window, requires_grad=True)
    leaves = [t for t in (x, w) if t is not None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spectrum = lib.stft(x, window=w, **kw)
        out: list = [spectrum, _chain(spectrum)]
        pairs = _real(lib, spectrum)
        weights = lib.tensor(np.linspace(-1, 1, pairs.numel()).reshape(pairs.shape))
        first = lib.autograd.grad((pairs * weights).sum(), leaves, create_graph=True)
        out += list(first)
        if all(g.requires_grad for g in first):
            total = sum((_real(lib, g) ** 2).sum() for g in first)
            out += list(lib.autograd.grad(total, leaves, allow_unused=True, retain_graph=True))
        if inverse is not None:
            complex_spectrum = spectrum if spectrum.is_complex() else lib.view_as_complex(spectrum)
            y = lib.istft(complex_spectrum, window=w, **inverse)
            out += [y, _chain(y)]
            pairs = _real(lib, y)
            weights = lib.tensor(np.linspace(-1, 1, pairs.numel()).reshape(pairs.shape))
            out += list(lib.autograd.grad((pairs * weights).sum(), leaves, allow_unused=True))
    return out


def _compare(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if isinstance(a, list):
            assert a == b, f"graph {i}"
            continue
        if a is None or b is None:
            assert a is None and b is None, f"result {i}"
            continue
        x, y = a.detach().resolve_conj().numpy(), b.detach().resolve_conj().numpy()
        assert x.shape == y.shape and x.dtype == y.dtype, f"result {i}"
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-10, err_msg=f"result {i}")


_CASES = {
    "hop": (
        {"n_fft": 16, "hop_length": 4, "return_complex": True},
        {"n_fft": 16, "hop_length": 4},
        16,
    ),
    "normalized": (
        {"n_fft": 16, "return_complex": True, "normalized": True},
        {"n_fft": 16, "normalized": True},
        16,
    ),
    "short_window": (
        {"n_fft": 16, "hop_length": 5, "win_length": 10, "return_complex": True},
        {"n_fft": 16, "hop_length": 5, "win_length": 10},
        10,
    ),
    "not_centred": (
        {"n_fft": 16, "hop_length": 4, "center": False, "return_complex": True},
        {"n_fft": 16, "hop_length": 4, "center": False},
        16,
    ),
    "two_sided": (
        {"n_fft": 16, "hop_length": 4, "onesided": False, "return_complex": True},
        {"n_fft": 16, "hop_length": 4, "onesided": False},
        16,
    ),
    "two_sided_complex_inverse": (
        {"n_fft": 16, "hop_length": 4, "onesided": False, "return_complex": True},
        {"n_fft": 16, "hop_length": 4, "onesided": False, "return_complex": True},
        16,
    ),
    "odd_n_fft_constant_pad_length": (
        {"n_fft": 15, "hop_length": 3, "pad_mode": "constant", "return_complex": True},
        {"n_fft": 15, "hop_length": 3, "length": 37},
        15,
    ),
    "replicate_real_output": (
        {"n_fft": 16, "hop_length": 4, "pad_mode": "replicate", "return_complex": False},
        None,
        16,
    ),
    "longer_length": (
        {"n_fft": 16, "hop_length": 4, "return_complex": True},
        {"n_fft": 16, "hop_length": 4, "length": 50},
        16,
    ),
    "aligned_window": (
        {
            "n_fft": 16,
            "hop_length": 4,
            "center": False,
            "win_length": 8,
            "align_to_window": True,
            "return_complex": True,
        },
        None,
        8,
    ),
    "not_aligned_window": (
        {
            "n_fft": 16,
            "hop_length": 4,
            "center": False,
            "win_length": 8,
            "align_to_window": False,
            "return_complex": True,
        },
        None,
        8,
    ),
}


@pytest.mark.parametrize("with_window", [True, False])
@pytest.mark.parametrize("shape", [(2, 40), (41,)])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_matches_pytorch(case: str, shape: tuple, with_window: bool) -> None:
    kw, inverse, win = _CASES[case]
    rng = np.random.default_rng(len(case))
    signal = rng.standard_normal(shape)
    window = rng.uniform(0.3, 1.2, win) if with_window else None
    _compare(_run(chainrule, signal, window, kw, inverse), _run(torch, signal, window, kw, inverse))


def test_complex_signal_and_window() -> None:
    rng = np.random.default_rng(1)
    signal = rng.standard_normal((2, 40)) + 1j * rng.standard_normal((2, 40))
    for window in (rng.uniform(0.3, 1.2, 16), rng.uniform(0.3, 1.2, 16) * (1 + 0.5j)):
        kw = {"n_fft": 16, "hop_length": 4}
        inverse = {"n_fft": 16, "hop_length": 4, "return_complex": True}
        _compare(
            _run(chainrule, signal, window, kw, inverse), _run(torch, signal, window, kw, inverse)
        )


def test_round_trip_and_float32() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 100)).astype(np.float32)
    results = []
    for lib in (chainrule, torch):
        window = lib.hann_window(32)
        spectrum = lib.tensor(x).stft(32, 8, window=window, return_complex=True)
        back = spectrum.istft(32, 8, window=window, length=100)
        results.append((spectrum.numpy(), back.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(results[0][1], x, rtol=1e-4, atol=1e-5)
    assert results[0][0].dtype == np.complex64 and results[0][1].dtype == np.float32


def test_complex_unfold_and_its_backward_match_pytorch() -> None:
    # (on the allowlist of complex autograd for istft's overlap-add)
    rng = np.random.default_rng(3)
    values = rng.standard_normal(10) + 1j * rng.standard_normal(10)
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, requires_grad=True)
        windows = x.unfold(0, 4, 2)
        weights = lib.tensor(np.linspace(-1, 1, 16).reshape(4, 4) * (1 - 2j))
        loss = (windows * windows * weights).sum().real
        (grad,) = lib.autograd.grad(loss, x, create_graph=True)
        (second,) = lib.autograd.grad((grad * grad.conj()).real.sum(), x)
        results.append([windows, grad, second])
    _compare(results[0], results[1])


def _error(lib, call) -> tuple[type, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            call(lib)
    return info.type, str(info.value)


def _signal(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


_BAD_CALLS = {
    "no_return_complex": lambda lib: lib.stft(_signal(lib, 2, 40), 16),
    "align_with_center": lambda lib: lib.stft(
        _signal(lib, 40), 16, return_complex=True, align_to_window=True
    ),
    "hop": lambda lib: lib.stft(_signal(lib, 2, 40), 16, hop_length=0, return_complex=True),
    "win_long": lambda lib: lib.stft(_signal(lib, 2, 40), 16, win_length=20, return_complex=True),
    "win_zero": lambda lib: lib.stft(_signal(lib, 40), 16, win_length=0, return_complex=True),
    "window_size": lambda lib: lib.stft(
        _signal(lib, 2, 40), 16, win_length=8, window=lib.ones(16), return_complex=True
    ),
    "window_2d": lambda lib: lib.stft(
        _signal(lib, 2, 40), 16, win_length=8, window=lib.ones(8, 2), return_complex=True
    ),
    "n_fft_long": lambda lib: lib.stft(_signal(lib, 2, 40), 50, center=False, return_complex=True),
    "n_fft_zero": lambda lib: lib.stft(_signal(lib, 2, 40), 0, return_complex=True),
    "3d": lambda lib: lib.stft(_signal(lib, 1, 2, 40), 16, return_complex=True),
    "integer": lambda lib: lib.stft(_signal(lib, 2, 40, dtype=lib.int32), 16, return_complex=True),
    "half": lambda lib: lib.stft(
        _signal(lib, 2, 40, dtype=lib.float16),
        16,
        window=lib.ones(16, dtype=lib.float16),
        return_complex=True,
    ),
    "pad_mode": lambda lib: lib.stft(_signal(lib, 40), 16, pad_mode="wrap", return_complex=True),
    "complex_onesided": lambda lib: lib.stft(
        _signal(lib, 40, dtype=lib.complex64), 16, onesided=True
    ),
    "complex_window_repr": lambda lib: lib.stft(
        _signal(lib, 2, 40, dtype=lib.float64),
        16,
        hop_length=0,
        normalized=True,
        window=lib.ones(16, dtype=lib.complex64),
        return_complex=True,
    ),
    "aligned_overflow": lambda lib: lib.stft(
        _signal(lib, 2, 41, dtype=lib.float64),
        16,
        4,
        win_length=9,
        center=False,
        window=lib.ones(9, dtype=lib.float64),
        align_to_window=True,
        return_complex=True,
    ),
    "istft_real": lambda lib: lib.istft(_signal(lib, 2, 9, 11, 2), 16),
    "istft_empty": lambda lib: lib.istft(_signal(lib, 2, 9, 0, dtype=lib.complex64), 16),
    "istft_dims": lambda lib: lib.istft(_signal(lib, 1, 2, 9, 11, dtype=lib.complex64), 16),
    "istft_onesided_size": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 18, window=lib.ones(18)
    ),
    "istft_two_sided_size": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, onesided=False
    ),
    "istft_hop": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex128),
        16,
        hop_length=0,
        onesided=True,
        length=3,
        window=lib.ones(16, dtype=lib.float64),
    ),
    "istft_win": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, win_length=20
    ),
    "istft_window_shape": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, window=lib.ones(8)
    ),
    "istft_onesided_complex": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, return_complex=True
    ),
    "istft_complex_window": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, window=lib.ones(16, dtype=lib.complex64)
    ),
    "istft_overlap": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, window=lib.zeros(16)
    ),
    "istft_not_centred_hann": lambda lib: lib.istft(
        _signal(lib, 2, 9, 11, dtype=lib.complex64), 16, window=lib.hann_window(16), center=False
    ),
}


@pytest.mark.parametrize("case", sorted(_BAD_CALLS))
def test_errors_as_pytorchs(case: str) -> None:
    assert _error(chainrule, _BAD_CALLS[case]) == _error(torch, _BAD_CALLS[case])


def test_warnings_once_as_pytorchs(monkeypatch: pytest.MonkeyPatch) -> None:
    # (PyTorch warns once per process: compare the texts, and that a second call is silent)
    monkeypatch.setattr(stft_module, "_WARNED", set())
    x = chainrule.ones(2, 40)
    calls = [
        lambda: chainrule.stft(x, 16, return_complex=True),
        lambda: chainrule.stft(x, 16, window=chainrule.ones(16), return_complex=False),
        lambda: chainrule.istft(
            chainrule.stft(x, 16, window=chainrule.ones(16), return_complex=True), 16
        ),
        lambda: chainrule.istft(
            chainrule.stft(x, 16, window=chainrule.ones(16), return_complex=True),
            16,
            window=chainrule.ones(16),
            length=50,
        ),
    ]
    expected = [
        "A window was not provided. A rectangular window will be applied,which",
        "stft with return_complex=False is deprecated.",
        "A window was not provided. A rectangular window will be applied.Please",
        "The length of signal is shorter than the length parameter.",
    ]
    for call, start in zip(calls, expected, strict=True):
        with warnings.catch_warnings(record=True) as first:
            warnings.simplefilter("always")
            call()
        with warnings.catch_warnings(record=True) as second:
            warnings.simplefilter("always")
            call()
        assert [str(w.message)[: len(start)] for w in first] == [start]
        assert second == []
    # the texts are PyTorch's (its own once-only flags may be spent: read them from a fresh
    # process-wide record when it still warns)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.stft(torch.ones(2, 40), 16, return_complex=True)
    if theirs:
        assert str(theirs[0].message) == stft_module._STFT_NO_WINDOW
