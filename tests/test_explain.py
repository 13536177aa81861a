"""``autograd.explain``: the chain rule written out from a live graph, as the seed articles
derive it by hand (issue 20). Every derivation's number is compared with PyTorch's gradient of
the same program, and the seeds' two derivations come out term by term."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule
from chainrule.viz.explain import MAX_PATHS, Explanation

from .conftest import torch
from .test_random_programs import BINARY, UNARY, _to_shape, programs
from .test_viz_forward_graph import seed_program

_seed = seed_program  # y = (x + w) * (w + 1), written as the seed article writes it


def _block(explanation: Explanation, k: int) -> list[str]:
    (block,) = explanation.derivations[k].blocks
    return block


def test_seed_derivation_term_by_term() -> None:
    w, x, a, b, y = _seed(chainrule)
    e = chainrule.autograd.explain(y)
    assert [d.input for d in e.derivations] == ["w", "x"]
    assert _block(e, 0) == [
        "∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w",
        "b · 1 + a · 1",
        "(w + 1) + (w + x)",
        "2w + x + 1",
        "2·1 + 2 + 1",
        "5",
    ]
    assert _block(e, 1) == ["∂y/∂x = ∂y/∂a · ∂a/∂x", "b · 1", "w + 1", "1 + 1", "2"]
    assert e.derivations[0].locals[0][0] == "∂y/∂a = ∂(a·b)/∂a = b"
    assert "∂b/∂w = ∂(w + 1)/∂w = 1" in [text for text, _ in e.derivations[0].locals]
    assert e.definitions[0][0] == "a = w + x" and e.definitions[1][0] == "b = w + 1"
    assert e.all_match
    text = str(e)
    assert "∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w\n      = b · 1 + a · 1\n" in text
    assert "✓ equals what backward computes: ∂y/∂w = 5" in text
    # PyTorch's gradients of the same program are the derived numbers.
    tw, tx, *_, ty = _seed(torch)
    ty.backward()
    assert e.derivations[0].value.tolist() == tw.grad.tolist() == [5.0]
    assert e.derivations[1].value.tolist() == tx.grad.tolist() == [2.0]


def test_fourth_seed_folds_unnamed_steps() -> None:
    a = chainrule.tensor(2.0, requires_grad=True)
    b = chainrule.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2  # noqa: N806 - the article's name
    e = chainrule.autograd.explain(Q)
    assert _block(e, 0) == ["∂Q/∂a = ∂(3a³ − b²)/∂a", "9a²", "9·2²", "36"]
    assert _block(e, 1) == ["∂Q/∂b = ∂(3a³ − b²)/∂b", "−2b", "−2·6", "−12"]
    assert e.all_match
    ta = torch.tensor(2.0, requires_grad=True)
    tb = torch.tensor(6.0, requires_grad=True)
    (3 * ta**3 - tb**2).backward()
    assert [d.value.item() for d in e.derivations] == [ta.grad.item(), tb.grad.item()]


def test_latex_as_the_articles_typeset_it() -> None:
    w, x, a, b, y = _seed(chainrule)
    e = chainrule.autograd.explain(y, names={"w": w, "x": x, "a": a, "b": b, "y": y})
    latex = e.latex()
    assert latex.startswith(r"\begin{gathered}") and latex.endswith(r"\end{gathered}")
    assert (r"\frac{\partial y}{\partial w} &= \frac{\partial y}{\partial a} \cdot "
            r"\frac{\partial a}{\partial w}") in latex
    assert r"&= 2 w + x + 1 \\ &= 2 \cdot 1 + 2 + 1 \\ &= 5" in latex
    assert e._repr_latex_() == f"$${latex}$$"


def test_nothing_of_the_users_changes_and_backward_still_runs() -> None:
    w, x, a, b, y = _seed(chainrule)
    a.retain_grad()
    versions = [t._version for t in (w, x, a, b, y)]
    chainrule.autograd.explain(y)
    assert w.grad is None and x.grad is None and a.grad is None
    assert [t._version for t in (w, x, a, b, y)] == versions
    y.backward()  # the graph (and its saved values) is still there
    assert w.grad.tolist() == [5.0] and a.grad.tolist() == [2.0]


def test_after_backward_the_numbers_are_checked_against_grad() -> None:
    w, x, a, b, y = _seed(chainrule)
    y.backward()
    e = chainrule.autograd.explain(y)
    assert _block(e, 0)[-1] == "5" and e.all_match
    assert e.derivations[0].backward.tolist() == [5.0]


def test_a_wrong_number_would_be_reported() -> None:
    w, x, a, b, y = _seed(chainrule)
    y.backward()
    w.grad.fill_(4.0)  # what "backward computed", tampered with
    e = chainrule.autograd.explain(y)
    assert e.derivations[0].matches is False and not e.all_match
    assert "✗ differs from what backward computes" in str(e)


def test_tensors_as_vector_jacobian_products() -> None:
    rng = np.random.default_rng(0)
    x = chainrule.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    W = chainrule.tensor(rng.standard_normal((3, 3)), requires_grad=True)  # noqa: N806
    h = chainrule.tanh(x @ W)
    L = (h * h).sum()  # noqa: N806
    e = chainrule.autograd.explain(L, [x, W])
    assert [d.mode for d in e.derivations] == ["recurrence", "recurrence"]
    lines = [line for block in e.derivations[0].blocks for line in block]
    assert "ḡ_h·(1 − h²)" in lines
    assert "vjp[MmBackward0](ḡ_#3)" in lines
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tW = torch.tensor(W.detach().numpy(), requires_grad=True)  # noqa: N806
    (torch.tanh(tx @ tW) ** 2).sum().backward()
    np.testing.assert_allclose(e.derivations[0].value, tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(e.derivations[1].value, tW.grad.numpy(), rtol=1e-10)
    assert e.all_match


def test_small_tensors_element_by_element() -> None:
    x = chainrule.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=chainrule.float64, requires_grad=True)
    W = chainrule.tensor([[0.5, 1.0], [-1.0, 2.0]], dtype=chainrule.float64,  # noqa: N806
                         requires_grad=True)
    h = chainrule.tanh(x @ W)
    L = (h * h).sum()  # noqa: N806
    e = chainrule.autograd.explain(L, [W])
    assert [d.input for d in e.derivations] == ["W₁₁", "W₁₂", "W₂₁", "W₂₂"]
    first = _block(e, 0)
    assert first[:2] == ["∂L/∂W₁₁ = ∂L/∂h₁₁ · ∂h₁₁/∂W₁₁ + ∂L/∂h₂₁ · ∂h₂₁/∂W₁₁",
                         "2h₁₁ · x₁₁·(1 − h₁₁²) + 2h₂₁ · x₂₁·(1 − h₂₁²)"]
    assert "h₁₁ = tanh(W₁₁·x₁₁ + W₂₁·x₁₂)" in [text for text, _ in e.definitions]
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tW = torch.tensor(W.detach().numpy(), requires_grad=True)  # noqa: N806
    (torch.tanh(tx @ tW) ** 2).sum().backward()
    derived = [d.value.item() for d in e.derivations]
    np.testing.assert_allclose(derived, tW.grad.numpy().reshape(-1), rtol=1e-10)
    np.testing.assert_allclose(e.gradients()[0], tW.grad.numpy(), rtol=1e-10)
    assert e.all_match


def test_broadcasting_element_by_element_and_as_the_sum_that_undoes_it() -> None:
    w = chainrule.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = chainrule.tensor(0.5, requires_grad=True)
    e = chainrule.autograd.explain((w * c).sum(), [c], names={"w": w, "c": c})
    assert _block(e, 0) == ["∂output/∂c = ∂(c·w₁ + c·w₂ + c·w₃)/∂c", "w₁ + w₂ + w₃",
                            "1 + 2 + 3", "6"]
    w = chainrule.tensor(np.arange(1.0, 9.0), requires_grad=True)  # too many to list
    y = (w * c).sum()
    e = chainrule.autograd.explain(y, [c])
    lines = [line for block in e.derivations[0].blocks for line in block]
    assert any(line.startswith("sum_to[](") for line in lines), lines
    assert e.derivations[0].value.item() == 36.0 and e.all_match


def test_many_paths_give_the_per_variable_recurrence() -> None:
    h = chainrule.tensor(0.3, requires_grad=True)
    z = h
    for _ in range(5):
        z = z * z + z  # 3 uses per step: 3**5 paths
    e = chainrule.autograd.explain(z, [h])
    d = e.derivations[0]
    assert d.mode == "recurrence" and len(d.blocks) > MAX_PATHS
    th = torch.tensor(0.3, requires_grad=True)
    tz = th
    for _ in range(5):
        tz = tz * tz + tz
    tz.backward()
    assert d.value.item() == pytest.approx(th.grad.item(), rel=1e-5)
    assert d.matches


def test_errors() -> None:
    w, x, a, b, y = _seed(chainrule)
    with pytest.raises(TypeError, match="expects a Tensor output"):
        chainrule.autograd.explain(3.0)
    with pytest.raises(RuntimeError, match="not part of the graph"):
        chainrule.autograd.explain(y, [chainrule.tensor([1.0])])
    other = chainrule.tensor([1.0], requires_grad=True)  # requires grad, but y is not from it
    e = chainrule.autograd.explain(y, [w, other])
    assert e.derivations[1].blocks == [["∂y/∂other = 0"]] and e.derivations[1].matches
    assert "y does not depend on other" in str(e)
    with pytest.raises(ValueError, match="nothing to draw"):
        chainrule.autograd.explain(chainrule.tensor([1.0]))
    assert chainrule.autograd.explain is chainrule.viz.explain


# ----------------------------------------------------------------------------- random programs
@st.composite
def scalar_programs(draw):
    """Programs of one-element tensors (the derivation by paths), with random names."""
    n_inputs = draw(st.integers(1, 3))
    steps = []
    n_values = n_inputs
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))),
                          draw(st.integers(0, n_values - 1))))
        else:
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))),
                          draw(st.integers(0, n_values - 1)), draw(st.integers(0, n_values - 1))))
        n_values += 1
    named = draw(st.lists(st.booleans(), min_size=n_values, max_size=n_values))
    return n_inputs, steps, named, draw(st.integers(0, 2**16))


def _run_scalar(lib, program):
    n_inputs, steps, _, seed = program
    rng = np.random.default_rng(seed)
    values = [lib.tensor(float(rng.uniform(-1.5, 1.5)), dtype=lib.float64, requires_grad=True)
              for _ in range(n_inputs)]
    for step in steps:
        if step[0] == "unary":
            values.append(UNARY[step[1]](lib, values[step[2]]))
        else:
            values.append(BINARY[step[1]](lib, values[step[2]], values[step[3]]))
    return values


@settings(max_examples=40, deadline=None)
@given(scalar_programs())
def test_random_scalar_programs_derive_pytorchs_gradients(program) -> None:
    values = _run_scalar(chainrule, program)
    leaves = values[: program[0]]
    names = {f"v{k}": t for k, (t, keep) in enumerate(zip(values, program[2], strict=True))
             if keep or k < program[0]}
    out = values[-1]
    if not out.requires_grad:
        return
    e = chainrule.autograd.explain(out, leaves, names=names)
    t_values = _run_scalar(torch, program)
    expected = torch.autograd.grad(t_values[-1], t_values[: program[0]], allow_unused=True)
    for d, g in zip(e.derivations, expected, strict=True):
        want = 0.0 if g is None else g.item()
        if d.value is None:  # an input the output does not depend on
            assert want == 0.0
            continue
        assert d.value.item() == pytest.approx(want, rel=1e-6, abs=1e-9), str(e)
        assert d.matches, str(e)


@settings(max_examples=25, deadline=None)
@given(programs())
def test_random_tensor_programs_derive_pytorchs_gradients(program) -> None:
    inputs, steps, seed = program
    rng = np.random.default_rng(seed)
    leaves = [chainrule.tensor(rng.uniform(-1.5, 1.5, shape), requires_grad=True)
              for shape in inputs]
    # Rebuild the program on fresh leaves to know them (the same values as _run's).
    values = list(leaves)
    t_leaves = [torch.tensor(v.detach().numpy(), requires_grad=True) for v in leaves]
    t_values = list(t_leaves)
    for lib, vals in ((chainrule, values), (torch, t_values)):
        for step in steps:
            if step[0] == "unary":
                vals.append(UNARY[step[1]](lib, vals[step[2]]))
            elif step[0] == "binary":
                vals.append(BINARY[step[1]](lib, vals[step[2]], vals[step[3]]))
            elif step[0] == "reshape":
                vals.append(_to_shape(lib, vals[step[2]], step[1]))
            else:
                left = _to_shape(lib, vals[step[1]], (3, 4))
                right = _to_shape(lib, vals[step[2]], (3, 4))
                vals.append(lib.matmul(lib.matmul(left, right.t()).tanh(), left) / 4)
    loss, t_loss = values[-1].sum(), t_values[-1].sum()
    if not loss.requires_grad:
        return
    e = chainrule.autograd.explain(loss, leaves, names=None)
    expected = torch.autograd.grad(t_loss, t_leaves, allow_unused=True)
    for derived, g in zip(e.gradients(), expected, strict=True):
        if g is None:  # an input the output does not depend on: a zero derivation
            assert not derived.any(), str(e)
            continue
        np.testing.assert_allclose(derived, g.numpy(), rtol=1e-7, atol=1e-9, err_msg=str(e))
    assert e.all_match, str(e)


def test_the_demo_prints_both_seed_derivations(capsys) -> None:
    from chainrule.cli.demo import explain_seed_gradients

    explain_seed_gradients()
    out = capsys.readouterr().out
    assert "∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w\n      = b · 1 + a · 1\n" in out
    assert "      = 2·1 + 2 + 1\n      = 5\n" in out
    assert "∂Q/∂a = ∂(3a³ − b²)/∂a\n      = 9a²\n      = 9·2²\n      = 36\n" in out
    assert "∂Q/∂b = ∂(3a³ − b²)/∂b\n      = −2b\n      = −2·6\n      = −12\n" in out
    assert "  with ∂y/∂a = ∂(a·b)/∂a = b\n       ∂a/∂w = ∂(w + x)/∂w = 1\n" in out
    assert "✗" not in out
