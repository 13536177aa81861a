"""What every op sweep does the same way: sample an OpInfo, run it in both libraries, take
first-order gradients of both with the same cotangents, and mark known differences.

The sweeps (``test_op_sweep*.py``) differ in how they build inputs (fresh, strided, special
values, float16) and how they compare; this module holds the rest once.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .opinfos import OpInfo


def sample_inputs(info: OpInfo, index: int, dtype: str, seed: int = 0) -> list[np.ndarray]:
    """The arrays of sample ``index`` of ``info`` (random in its domain, or its own choice)."""
    rng = np.random.default_rng(seed + 7919 * index)
    shapes = info.shapes[index]
    if info.make_inputs is not None:
        return [np.asarray(a) for a in info.make_inputs(rng, shapes, dtype)]
    return [rng.uniform(info.low, info.high, size=s).astype(dtype) for s in shapes]


def requires_grad_flags(info: OpInfo, arrays: Sequence[np.ndarray]) -> list[bool]:
    """Which inputs require grad: floating ones the entry differentiates."""
    wanted = range(len(arrays)) if info.grad_inputs is None else info.grad_inputs
    return [info.grad and i in wanted and a.dtype.kind in "fV" for i, a in enumerate(arrays)]


def flat_outputs(out: Any) -> list[Any]:
    """The tensors an op returned (a tuple's tensor members, or the one tensor)."""
    if isinstance(out, tuple | list):
        return [o for o in out if hasattr(o, "requires_grad")]
    return [out]


@contextlib.contextmanager
def PYTORCH_OWN_HALF_CONVOLUTION() -> Iterator[None]:  # noqa: N802 - reads as the setting
    """PyTorch's own float16 convolution kernels (which chainrule follows) instead of oneDNN's,
    which PyTorch picks on CPUs with AVX512-FP16 or AMX and which accumulate in another order:
    oneDNN turned off (without the TF32 notice PyTorch prints on every switch)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="TF32 acceleration on top of oneDNN")
        with torch.backends.mkldnn.flags(enabled=False):
            yield


BFLOAT16 = np.dtype("bfloat16")  # ml_dtypes' (chainrule imports it)


def torch_from_numpy(a: np.ndarray) -> Any:
    """A PyTorch tensor holding a copy of ``a``; bfloat16 arrays (ml_dtypes', which PyTorch
    does not read) through their bits."""
    if a.dtype == BFLOAT16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


def torch_to_numpy(t: Any) -> np.ndarray:
    """A PyTorch tensor's values as an array (bfloat16 as ml_dtypes' bfloat16, bit for bit)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.clone().view(torch.int16).numpy().view(BFLOAT16)
    return t.numpy(force=True)


def leaves(lib: Any, arrays: Sequence[np.ndarray], requires: Sequence[bool]) -> list[Any]:
    """Fresh tensors of ``lib`` holding copies of ``arrays``."""
    make = torch_from_numpy if lib is torch else (
        lambda a: lib.from_numpy(np.array(a, copy=True)))
    return [make(a).requires_grad_(r) for a, r in zip(arrays, requires, strict=True)]


def both_vjps(ours: Sequence[Any], theirs: Sequence[Any], ours_x: Sequence[Any],
              theirs_x: Sequence[Any], cotangents: Sequence[np.ndarray], **options: Any
              ) -> list[tuple[Any, Any]]:
    """``autograd.grad`` of the differentiable outputs in both libraries, with the same
    cotangents; pairs of (chainrule's, PyTorch's) gradient per input (None when unused)."""
    g_ours = chainrule.autograd.grad(
        list(ours), list(ours_x), [chainrule.from_numpy(np.array(c, copy=True))
                                   for c in cotangents], allow_unused=True, **options)
    g_theirs = torch.autograd.grad(
        list(theirs), list(theirs_x), [torch_from_numpy(c) for c in cotangents],
        allow_unused=True, **options)
    return list(zip(g_ours, g_theirs, strict=True))


def differentiable_pairs(ours: Sequence[Any], theirs: Sequence[Any]) -> list[tuple[Any, Any]]:
    """The (ours, theirs) output pairs PyTorch can differentiate."""
    return [(a, b) for a, b in zip(ours, theirs, strict=True) if b.requires_grad]


def selected(values: Iterable[Any], requires: Sequence[bool]) -> list[Any]:
    """The members of ``values`` whose flag in ``requires`` is set."""
    return [v for v, r in zip(values, requires, strict=True) if r]


def mark_known(cases: list[Any], known: frozenset[str], reason: str) -> list[Any]:
    """``cases`` with the ids in ``known`` marked as strict xfails (fixing one fails its test
    until it is taken off the list)."""
    return [pytest.param(*case.values, id=case.id,
                         marks=pytest.mark.xfail(strict=True, reason=reason))
            if case.id in known else case for case in cases]


def compare_with_torch(
    info: OpInfo,
    arrays: Sequence[np.ndarray],
    requires: Sequence[bool],
    check_output: Callable[[Any, Any, str], None],
    check_grad: Callable[[Any, Any, str], None],
    cotangents_for: Callable[[Sequence[Any]], list[np.ndarray]],
    errors: tuple[type[BaseException], ...] = (RuntimeError,),
    reference: Sequence[np.ndarray] | None = None,
) -> None:
    """Run ``info`` on ``arrays`` in both libraries and compare, with the given checks, each
    output and each first-order gradient (taken with ``cotangents_for(torch's outputs)``).

    PyTorch runs on ``reference`` instead when given (the same values in a wider dtype, where
    PyTorch's own kernel is the thing not to trust). Where PyTorch raises one of ``errors``
    (in the forward or in the backward), chainrule must raise the same type. A gradient that is
    None on one side must be all zeros (or None) on the other.
    """
    theirs_in = leaves(torch, arrays if reference is None else reference, requires)
    try:
        theirs = flat_outputs(info.fn(torch, *theirs_in))
    except errors as error:
        with pytest.raises(type(error)):
            info.fn(chainrule, *leaves(chainrule, arrays, requires))
        return
    ours_in = leaves(chainrule, arrays, requires)
    ours = flat_outputs(info.fn(chainrule, *ours_in))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        check_output(a.detach(), b.detach(), f"{info.name} output {i}")
    diff = differentiable_pairs(ours, theirs)
    if not any(requires) or not diff:
        return
    cotangents = cotangents_for([b for _, b in diff])
    ours_x, theirs_x = selected(ours_in, requires), selected(theirs_in, requires)
    try:  # (a backward kernel may have no loop for the dtype: i1_backward in float16)
        torch.autograd.grad([b for _, b in diff], theirs_x,
                            [torch_from_numpy(c) for c in cotangents], allow_unused=True,
                            retain_graph=True)
    except errors as error:
        with pytest.raises(type(error)):
            both_vjps([a for a, _ in diff], [b for _, b in diff], ours_x, theirs_x, cotangents)
        return
    grads = both_vjps([a for a, _ in diff], [b for _, b in diff], ours_x, theirs_x, cotangents)
    for i, (a, b) in enumerate(grads):
        what = f"{info.name} grad {i}"
        if a is None or b is None:
            other = b if a is None else a
            assert other is None or not np.any(
                other._data if hasattr(other, "_data") else torch_to_numpy(other)), what
            continue
        check_grad(a, b, what)
