"""``F.ctc_loss`` / ``nn.CTCLoss`` / ``torch.ctc_loss`` against PyTorch: losses and gradients
in ``log_probs`` over random batches (padded and concatenated targets, repeated labels, any
blank, empty targets and inputs, impossible alignments, lengths as tensors or lists, every
reduction, ``zero_infinity``), unbatched input, the graph, errors; and finite differences for
the exact part of the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _random_case(rng: np.random.Generator, trial: int) -> dict:
    frames, batch, classes = rng.integers(1, 9), rng.integers(1, 4), rng.integers(2, 6)
    longest = int(rng.integers(0, 5))
    blank = int(rng.integers(0, classes))
    labels = [c for c in range(classes) if c != blank]
    target_lengths = rng.integers(0, longest + 1, batch)
    input_lengths = rng.integers(0, frames + 1, batch)
    padded = rng.choice(labels, (batch, longest)) if longest else np.zeros((batch, 0), np.int64)
    if trial % 3 == 0 and longest > 1:
        padded[:, 1:] = padded[:, :-1]  # (repeated labels need a blank between them)
    if trial % 2:
        targets = np.concatenate([padded[i, : target_lengths[i]] for i in range(batch)])
    else:
        targets = padded
    logits = rng.standard_normal((frames, batch, classes))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    if trial % 4 == 0:
        log_probs = logits  # (not normalised: PyTorch's gradient formula shows through)
    return {
        "log_probs": log_probs,
        "targets": targets.astype(np.int64),
        "input_lengths": input_lengths,
        "target_lengths": target_lengths,
        "blank": blank,
    }


def _run(lib, case: dict, reduction: str, zero_infinity: bool, as_tensors: bool, dtype: str):
    x = lib.tensor(case["log_probs"].astype(dtype), requires_grad=True)
    targets = lib.tensor(case["targets"])
    if as_tensors:
        il, tl = lib.tensor(case["input_lengths"]), lib.tensor(case["target_lengths"])
    else:
        il, tl = [int(v) for v in case["input_lengths"]], [int(v) for v in case["target_lengths"]]
    loss = lib.nn.functional.ctc_loss(
        x, targets, il, tl, blank=case["blank"], reduction=reduction, zero_infinity=zero_infinity
    )
    (grad,) = lib.autograd.grad(loss.sum(), x)
    return loss.detach().numpy(), grad.numpy(), type(loss.grad_fn).__name__


_SETTINGS = [
    ("none", False, True, "float64"),
    ("none", True, False, "float64"),
    ("mean", True, False, "float64"),
    ("mean", False, True, "float32"),
    ("sum", False, False, "float32"),
    ("sum", True, True, "float64"),
]


@pytest.mark.parametrize("trial", range(24))
def test_random_batches_match_pytorch(trial: int) -> None:
    case = _random_case(np.random.default_rng(trial), trial)
    for reduction, zero_infinity, as_tensors, dtype in _SETTINGS:
        ours = _run(chainrule, case, reduction, zero_infinity, as_tensors, dtype)
        theirs = _run(torch, case, reduction, zero_infinity, as_tensors, dtype)
        tol = 1e-10 if dtype == "float64" else 1e-4
        what = f"{reduction} zero_infinity={zero_infinity} {dtype}"
        np.testing.assert_allclose(ours[0], theirs[0], rtol=tol, atol=tol, err_msg=what)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=tol, atol=tol, err_msg=what)
        assert ours[0].dtype == theirs[0].dtype and ours[2] == theirs[2], what


def test_impossible_alignments_and_empty_lengths() -> None:
    # target [1, 1] needs 3 frames; 2 frames cannot align it; empty input and target; empty
    # input with a target
    log_probs = np.log(np.full((3, 4, 3), 1 / 3))
    targets = np.array([[1, 1], [1, 1], [2, 0], [1, 2]])
    input_lengths, target_lengths = [3, 2, 0, 0], [2, 2, 0, 1]
    case = {
        "log_probs": log_probs,
        "targets": targets,
        "input_lengths": np.array(input_lengths),
        "target_lengths": np.array(target_lengths),
        "blank": 0,
    }
    for zero_infinity in (False, True):
        ours = _run(chainrule, case, "none", zero_infinity, False, "float64")
        theirs = _run(torch, case, "none", zero_infinity, False, "float64")
        np.testing.assert_array_equal(np.signbit(ours[0]), np.signbit(theirs[0]))  # (-0.)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, equal_nan=True)
        assert ours[2] == theirs[2]  # (zero_infinity: WhereBackward0)


def test_exact_gradient_part_against_finite_differences() -> None:
    # PyTorch's gradient is exp(lp) - posterior; the loss's own derivative in log_probs is
    # -posterior. Check that one by finite differences (so the recursions are right).
    rng = np.random.default_rng(7)
    case = _random_case(rng, 1)
    case["input_lengths"] = np.maximum(case["input_lengths"], 4)
    case["log_probs"] = rng.standard_normal((6, len(case["input_lengths"]), 4))
    case["input_lengths"] = np.minimum(case["input_lengths"], 6)
    case["target_lengths"] = np.minimum(case["target_lengths"], 2)
    case["blank"] = 0
    padded = np.array([[1, 2], [3, 3], [2, 1]])[: len(case["input_lengths"])]
    case["targets"] = padded
    x = chainrule.tensor(case["log_probs"], requires_grad=True)
    args = (
        chainrule.tensor(padded),
        [int(v) for v in case["input_lengths"]],
        [int(v) for v in case["target_lengths"]],
    )
    loss = chainrule.nn.functional.ctc_loss(x, *args, reduction="sum")
    (grad,) = chainrule.autograd.grad(loss, x)
    exact = grad.numpy() - np.exp(case["log_probs"]) * (
        np.arange(6)[:, None, None] < case["input_lengths"][None, :, None]
    )
    eps = 1e-6
    numeric = np.zeros_like(case["log_probs"])
    for index in np.ndindex(*case["log_probs"].shape):
        shifted = []
        for sign in (1, -1):
            lp = case["log_probs"].copy()
            lp[index] += sign * eps
            value = chainrule.nn.functional.ctc_loss(chainrule.tensor(lp), *args, reduction="sum")
            shifted.append(float(value))
        numeric[index] = (shifted[0] - shifted[1]) / (2 * eps)
    np.testing.assert_allclose(exact, numeric, rtol=1e-5, atol=1e-7)


def test_module_and_torch_function() -> None:
    rng = np.random.default_rng(3)
    case = _random_case(rng, 2)
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(case["log_probs"], requires_grad=True)
        il, tl = lib.tensor(case["input_lengths"]), lib.tensor(case["target_lengths"])
        module = lib.nn.CTCLoss(blank=case["blank"], reduction="sum", zero_infinity=True)
        a = module(x, lib.tensor(case["targets"]), il, tl)
        b = lib.ctc_loss(x, lib.tensor(case["targets"]), il, tl, case["blank"], 0, True)
        results.append(
            (
                repr(module),
                a.detach().numpy(),
                b.detach().numpy(),
                module.blank,
                module.reduction,
                module.zero_infinity,
            )
        )
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    assert results[0][3:] == results[1][3:]


def test_unbatched_input() -> None:
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((5, 4))
    for reduction in ("none", "mean", "sum"):
        for lengths in (([5], [3]), "tensors"):
            results = []
            for lib in (chainrule, torch):
                x = lib.tensor(logits, requires_grad=True)
                lp = x.log_softmax(-1)
                il, tl = (lib.tensor(5), lib.tensor(3)) if lengths == "tensors" else lengths
                loss = lib.nn.functional.ctc_loss(
                    lp, lib.tensor([1, 2, 2]), il, tl, reduction=reduction
                )
                (grad,) = lib.autograd.grad(loss, x)
                results.append((loss, grad, type(loss.grad_fn).__name__))
            assert tuple(results[0][0].shape) == tuple(results[1][0].shape)
            np.testing.assert_allclose(
                results[0][0].detach().numpy(), results[1][0].detach().numpy(), rtol=1e-12
            )
            np.testing.assert_allclose(
                results[0][1].numpy(), results[1][1].numpy(), rtol=1e-10, atol=1e-12
            )
            assert results[0][2] == results[1][2]


def test_graph_nodes_and_double_backward_refusal() -> None:
    names = []
    for lib in (chainrule, torch):
        x = lib.randn(4, 2, 3, dtype=lib.float64).log_softmax(2).detach().requires_grad_()
        targets = lib.tensor([[1, 2], [2, 2]])
        loss = lib.nn.functional.ctc_loss(x, targets, [4, 4], [2, 1], reduction="none")
        mean = lib.nn.functional.ctc_loss(x, targets, [4, 4], [2, 1])
        (grad,) = lib.autograd.grad(loss.sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as error:
            lib.autograd.grad(grad.sum(), x)
        names.append(
            (
                type(loss.grad_fn).__name__,
                [type(f).__name__ for f, _ in loss.grad_fn.next_functions],
                type(mean.grad_fn).__name__,
                type(mean.grad_fn.next_functions[0][0]).__name__,
                loss.grad_fn._saved_blank,
                loss.grad_fn._saved_zero_infinity,
                grad.requires_grad,
                str(error.value),
            )
        )
    assert names[0] == names[1]


def _error(lib, call) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        call(lib)
    return info.type, str(info.value)


def _call(lp_shape=(5, 2, 4), targets=((1, 2, 2), (3, 1, 0)), il=(5, 4), tl=(3, 2), **kw):
    def call(lib):
        lp = lib.zeros(lp_shape, dtype=kw.pop("dtype", lib.float32)).log_softmax(-1)
        t = lib.tensor(targets)
        lengths = [lib.tensor(v) if isinstance(v, np.ndarray) else v for v in (il, tl)]
        return lib.nn.functional.ctc_loss(lp, t, *lengths, **kw)

    return call


_BAD_CALLS = {
    "input_too_long": _call(il=[6, 4], tl=[3, 2]),
    "target_too_long": _call(il=[5, 4], tl=[4, 2]),
    "negative_target_length": _call(il=[5, 4], tl=[-1, 2]),
    "negative_input_length": _call(il=[5, -1], tl=[3, 2]),
    "input_lengths_size": _call(il=[5], tl=[3, 2]),
    "target_lengths_size": _call(il=[5, 4], tl=[3]),
    "concatenated_size": _call(targets=(1, 2, 2, 3), il=[5, 4], tl=[3, 2]),
    "batch_size": _call(targets=((1, 2, 2),), il=[5, 4], tl=[3, 2]),
    "blank": _call(il=[5, 4], tl=[3, 2], blank=4),
    "negative_blank": _call(il=[5, 4], tl=[3, 2], blank=-1),
    "reduction": _call(il=[5, 4], tl=[3, 2], reduction="avg"),
    "tuple_and_tensor": _call(il=(5, 4), tl=np.array([3, 2])),
    "tensor_and_list": _call(il=np.array([5, 4]), tl=[3, 2.0]),
    "float_in_tuple": _call(il=(5, 4.0), tl=(3, 2)),
    "float_tensor_lengths": _call(il=np.array([5.0, 4.0]), tl=np.array([3, 2])),
    "float_target_lengths": _call(il=np.array([5, 4]), tl=np.array([3.0, 2.0])),
    "bool_input_lengths": _call(il=np.array([True, True]), tl=np.array([1, 1])),
    "ints": _call(lp_shape=(5, 4), targets=(1, 2), il=5, tl=2),
    "log_probs_4d": _call(lp_shape=(1, 5, 2, 4), il=[5, 4], tl=[3, 2]),
    "log_probs_1d": _call(lp_shape=(4,), targets=(1,), il=[1], tl=[1]),
    "targets_3d": _call(targets=(((1,),),), il=[5], tl=[1], lp_shape=(5, 1, 4)),
}


@pytest.mark.parametrize("case", sorted(_BAD_CALLS))
def test_errors_as_pytorchs(case: str) -> None:
    assert _error(chainrule, _BAD_CALLS[case]) == _error(torch, _BAD_CALLS[case])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_unsupported_dtypes(dtype: str) -> None:
    def call(lib):
        lp = lib.zeros(5, 2, 4).to(getattr(lib, dtype))
        return lib.nn.functional.ctc_loss(lp, lib.tensor([[1], [2]]), [5, 4], [1, 1])

    assert _error(chainrule, call) == _error(torch, call)
