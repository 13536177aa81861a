"""The process-wide switches of chainrule/_flags.py against PyTorch: matmul precision (values,
the warning for an unknown one, type errors), warn-always, init_num_threads, is_distributed;
has_* are booleans; set_flush_denormal reports no support (NumPy cannot flush denormals)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def _precision_round_trip(L: Any) -> list:
    seen = [L.get_float32_matmul_precision()]
    try:
        for value in ("high", "medium", "highest"):
            L.set_float32_matmul_precision(value)
            seen.append(L.get_float32_matmul_precision())
    finally:
        L.set_float32_matmul_precision("highest")
    return seen


def _warn_always(L: Any) -> list:
    seen = [L.is_warn_always_enabled()]
    try:
        L.set_warn_always(True)
        seen.append(L.is_warn_always_enabled())
    finally:
        L.set_warn_always(False)
    seen.append(L.is_warn_always_enabled())
    return seen


CASES: dict[str, Any] = {
    "precision": _precision_round_trip,
    "precision_type": lambda L: L.set_float32_matmul_precision(1),
    "warn_always": _warn_always,
    "warn_always_type": lambda L: L.set_warn_always(1),
    "init_num_threads": lambda L: L.init_num_threads(),
    "is_distributed": lambda L: L.is_distributed(L.ones(2)),
    "is_distributed_number": lambda L: L.is_distributed(3),
    "is_distributed_method": lambda L: L.ones(2).is_distributed(),
    "has_types": lambda L: [type(getattr(L, n)) for n in ("has_lapack", "has_spectral")],
    "has_lapack": lambda L: (L.has_lapack, L.has_spectral),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(CASES[name], lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


def test_unknown_precision_warns_and_changes_nothing() -> None:
    seen = []
    for L in (chainrule, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.set_float32_matmul_precision("foo")
        messages = [str(w.message).split(" (Triggered")[0] for w in caught]
        seen.append((messages, L.get_float32_matmul_precision()))
    assert seen[0] == seen[1]


def test_flush_denormal_reports_no_support() -> None:
    assert chainrule.set_flush_denormal(True) is False
    assert chainrule.set_flush_denormal(False) is False
    tiny = chainrule.tensor([1e-45])
    assert tiny.item() != 0.0  # (denormals are kept)


def test_build_flags_are_booleans() -> None:
    """(chainrule's own build has neither MKL nor OpenMP kernels: has_mkl and has_openmp are
    False, whatever libraries the process loaded.)"""
    flags = [chainrule.has_lapack, chainrule.has_spectral, chainrule.has_mkl, chainrule.has_openmp]
    assert flags == [True, True, False, False]
