"""Ops off the allowlist of complex autograd refuse, rather than differentiate complex values.

Complex tensors can require grad, but only ops declared ``complex_ok`` (their formulas made
PyTorch's for complex values and tested in test_complex_autograd.py) record a node when an
input or the result is complex. Before the guard, real formulas ran on complex values:
``(x * 1j).abs().sum().backward()`` gave ``x.grad == -1`` where PyTorch gives ``1``. Every other
op raises chainrule's RuntimeError before anything changes; without grad, complex values
compute as PyTorch's.

The sweep runs every OpInfo of the op table on complex inputs that require grad: each call
either raises, or computes a graph made only of allowlisted ops whose gradients equal
PyTorch's.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule
from chainrule.ops._opnode import OpNode

from .conftest import torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs

MESSAGE = "chainrule does not differentiate complex tensors"


def _complex_inputs(info: OpInfo, index: int) -> tuple[list[np.ndarray], list[bool]]:
    arrays = sample_inputs(info, index, "float64")
    requires = requires_grad_flags(info, arrays)
    rng = np.random.default_rng(5)
    out = [a + 1j * rng.uniform(-0.5, 0.5, a.shape) if r else a
           for a, r in zip(arrays, requires, strict=True)]
    return out, requires


def _complex_graph_ops(outputs: list[Any]) -> set[Any]:
    """The op-table entries of the nodes behind ``outputs`` that see a complex value (an input
    or their output), by an explicit walk."""
    found = set()
    seen: set[tuple[int, bool]] = set()
    stack = [(o.grad_fn, o.is_complex()) for o in outputs if o.grad_fn is not None]
    while stack:
        node, complex_out = stack.pop()
        if node is None or (id(node), complex_out) in seen:
            continue
        seen.add((id(node), complex_out))
        metas = getattr(node, "_in_meta", None) or ()
        kinds = [m[1].kind if m is not None else "f" for m in metas]
        if isinstance(node, OpNode) and (complex_out or "c" in kinds):
            found.add(node._op)
        for i, (fn, _) in enumerate(node.next_functions):
            stack.append((fn, i < len(kinds) and kinds[i] == "c"))
    return found


def _cases() -> list[Any]:
    return [pytest.param(info, index, id=f"{info.name}-{index}")
            for info in ALL_OPS if info.grad for index in range(len(info.shapes))]


@pytest.mark.parametrize(("info", "index"), _cases())
def test_every_op_refuses_or_follows_pytorch_on_complex_inputs(info: OpInfo, index: int) -> None:
    arrays, requires = _complex_inputs(info, index)
    if not any(requires):
        pytest.skip("no input to differentiate")
    xs = [chainrule.tensor(a, requires_grad=r) for a, r in zip(arrays, requires, strict=True)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = info.fn(chainrule, *xs)
        except Exception as error:  # refused (or an error PyTorch may share): nothing computed
            if isinstance(error, RuntimeError) and MESSAGE in str(error):
                assert all(x.grad is None for x in xs)
            return
    outputs = [o for o in flat_outputs(out) if o.requires_grad]
    off_list = sorted(op.name for op in _complex_graph_ops(outputs) if not op.complex_ok)
    assert not off_list, f"{info.name}: recorded complex values through {off_list}"
    if not outputs:
        return
    # Computed: then it follows PyTorch (values and gradients of a real loss).
    ts = [torch.tensor(a, requires_grad=r) for a, r in zip(arrays, requires, strict=True)]
    try:
        theirs = [o for o in flat_outputs(info.fn(torch, *ts)) if o.requires_grad]
    except (RuntimeError, NotImplementedError) as error:
        # A forward difference, not autograd's: PyTorch has no kernel for complex values
        # there (comparisons: "gt_cpu" not implemented for 'ComplexDouble').
        pytest.xfail(f"PyTorch refuses complex inputs where chainrule computes: {error}")
    assert len(theirs) == len(outputs)
    ours_loss = sum(_loss(chainrule, o, k) for k, o in enumerate(outputs))
    theirs_loss = sum(_loss(torch, o, k) for k, o in enumerate(theirs))
    try:
        theirs_loss.backward()
    except RuntimeError as error:  # (a loss PyTorch's backward refuses: the phases of complex
        # eigenvectors or singular vectors) is refused with the same message
        with pytest.raises(RuntimeError) as ours_error:
            ours_loss.backward()
        assert str(ours_error.value) == str(error)
        return
    ours_loss.backward()
    for x, t in zip(xs, ts, strict=True):
        if t.grad is None:
            continue
        np.testing.assert_allclose(x.grad._data, t.grad.resolve_conj().numpy(), rtol=1e-7,
                                   atol=1e-9)


def _loss(lib: Any, out: Any, k: int) -> Any:
    rng = np.random.default_rng(11 + k)
    if out.is_complex():
        parts = lib.view_as_real(out.resolve_conj())
        return (parts * lib.tensor(rng.uniform(-1, 1, tuple(parts.shape)))).sum()
    return (out * lib.tensor(rng.uniform(-1, 1, tuple(out.shape)), dtype=out.dtype)).sum()


# ----------------------------------------------------------------------------------------------
# The guard itself: complex results of real tensors, complex inputs with real results


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.renorm(x.view(1, 2).expand(2, 2) * lib.eye(2) * 1j + 1, 2, 0, 1),
    lambda lib, x: lib.renorm(x.view(2, 1) * 1j + 1, 2, 1, 1.5),
], ids=["renorm", "renorm_dim1"])
def test_complex_results_off_the_allowlist_are_refused(fn: Any) -> None:
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        fn(chainrule, x)
    with chainrule.no_grad():  # the same values as PyTorch's without a graph
        ours = fn(chainrule, x)
    theirs = fn(torch, torch.tensor([1.0, 2.0]))
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda z: chainrule.renorm(z.view(1, 2) * z.view(2, 1), 2, 0, 1),
    lambda z: chainrule.renorm(z.view(1, 2) * z.view(2, 1) + 1, 2, 1, 1.5),
], ids=["renorm", "renorm_dim1"])
def test_complex_leaves_through_ops_off_the_allowlist_are_refused(fn: Any) -> None:
    z = chainrule.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        fn(z)


def test_a_refused_in_place_op_changes_nothing() -> None:
    z = chainrule.tensor([1j, 2j])
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        z.copy_(chainrule.renorm(x.view(1, 2) * x.view(2, 1) * 1j, 2, 0, 1)[0])
    assert z._version == 0 and z.tolist() == [1j, 2j]


def test_in_place_changes_of_views_of_another_dtype_are_refused_in_a_graph() -> None:
    z = chainrule.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    y = z * 1
    r = y.real
    with pytest.raises(RuntimeError, match=MESSAGE):
        r.mul_(2)
    assert y.tolist() == [1 + 1j, 2 - 1j]
    with pytest.raises(RuntimeError, match=MESSAGE):
        y.imag.zero_()
    y.mul_(2)  # the base may change; its real view cannot be regenerated and refuses
    with pytest.raises(RuntimeError, match=MESSAGE):
        r.sum()
    # Without a graph they are views as PyTorch's.
    w = chainrule.tensor([1 + 1j])
    w.real.mul_(3)
    assert w.tolist() == [3 + 1j]


def test_conj_results_cannot_be_written_in_place() -> None:
    # PyTorch's conj() is a lazy view writing through to its input; chainrule's is a copy.
    c = chainrule.tensor([1 + 1j]).conj()
    with pytest.raises(RuntimeError, match="conj"):
        c.add_(1)
    assert c.tolist() == [1 - 1j]
