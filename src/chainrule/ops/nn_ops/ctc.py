"""Connectionist temporal classification: ``ctc_loss`` (``CtcLossBackward0``), the negative log
likelihood of a target sequence summed over every alignment of it to the input frames.

The target ``l`` (length ``S``) is extended with blanks, ``l' = (blank, l1, blank, l2, ...,
blank)`` (length ``2S + 1``). In log space, over frames ``t`` and positions ``s`` of ``l'``:

* forward: ``alpha[0, 0] = lp[0, blank]``, ``alpha[0, 1] = lp[0, l1]``, and
  ``alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2]) + lp[t, l'_s]``,
  the ``s - 2`` term only where ``l'_s`` is a label different from ``l'_(s-2)``;
* the loss: ``-logsumexp(alpha[T-1, 2S], alpha[T-1, 2S-1])`` (``T`` the input length);
* backward: ``beta`` the same recursion from the last frame (Graves et al., 2006).

The gradient in ``log_probs`` is PyTorch's: ``exp(lp) - exp(logsumexp_{s: l'_s = c}(alpha +
beta) + nll - lp)`` at frames before the input length, 0 after. (It is the gradient in the
logits of a ``log_softmax`` folded in, which is what PyTorch returns: composed with
``log_softmax`` it gives the same gradient as the exact one, ``-exp(...)``.) The recursions run
over frames, vectorised over the batch and the positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ..creation import tensor as _tensor
from ..pointwise import _not_implemented_node, where
from ._common import check_reduction, scalar_name

__all__ = ["ctc_loss"]

_ALLOCATE = " (while checking arguments for ctc_loss_allocate_outputs)"
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


# --- the recursions (NumPy) -------------------------------------------------------------------


def _padded_targets(targets: np.ndarray, target_lengths: Sequence[int]) -> np.ndarray:
    """``(N, S_max)`` labels from padded ``(N, S)`` or concatenated ``(sum S_n,)`` targets."""
    n = len(target_lengths)
    longest = max(target_lengths, default=0)
    if targets.ndim == 2:
        return targets[:, :longest].astype(np.int64)
    padded = np.zeros((n, longest), np.int64)
    start = 0
    for i, length in enumerate(target_lengths):
        padded[i, :length] = targets[start : start + length]
        start += length
    return padded


class _Lattice:
    """The extended labels of a batch and the log-probabilities along them."""

    def __init__(
        self,
        log_probs: np.ndarray,
        targets: np.ndarray,
        input_lengths: Sequence[int],
        target_lengths: Sequence[int],
        blank: int,
    ) -> None:
        labels = _padded_targets(targets, target_lengths)
        n, longest = labels.shape
        width = 2 * longest + 1
        extended = np.full((n, width), blank, np.int64)
        extended[:, 1::2] = labels
        self.extended = extended
        self.target_lengths = np.asarray(target_lengths, np.int64)
        self.input_lengths = np.asarray(input_lengths, np.int64)
        positions = np.arange(width)
        self.valid = positions[None, :] < (2 * self.target_lengths + 1)[:, None]
        # a position may be reached from two back when it is a label unlike the one there
        self.skip = np.zeros((n, width), bool)
        self.skip[:, 2:] = extended[:, 2:] != extended[:, :-2]
        classes = log_probs.shape[2]
        by_batch = np.swapaxes(log_probs, 0, 1)  # (N, T, C)
        index = np.clip(extended, 0, max(classes - 1, 0))[:, None, :]
        self.log_probs = by_batch
        self.along = (
            np.take_along_axis(
                by_batch, np.broadcast_to(index, (n, by_batch.shape[1], width)), axis=2
            )
            if classes
            else np.zeros((n, by_batch.shape[1], width), log_probs.dtype)
        )


def _log_sum_exp(*terms: np.ndarray) -> np.ndarray:
    """``log(sum(exp(terms)))`` as PyTorch's kernel: shifted by the largest, -inf if all are."""
    largest = terms[0]
    for term in terms[1:]:
        largest = np.maximum(largest, term)
    shift = np.where(largest == -np.inf, 0, largest).astype(largest.dtype)
    total = np.exp(terms[0] - shift)
    for term in terms[1:]:
        total = total + np.exp(term - shift)
    return np.log(total) + shift


def _shifted(values: np.ndarray, by: int) -> np.ndarray:
    """``values[:, s - by]`` (``by > 0``) or ``values[:, s + |by|]``, -inf where off the end."""
    out = np.full_like(values, -np.inf)
    if by > 0:
        out[:, by:] = values[:, :-by]
    else:
        out[:, :by] = values[:, -by:]
    return out


def _alpha(lattice: _Lattice) -> np.ndarray:
    """``log alpha``, ``(N, T, 2 S_max + 1)``."""
    n, frames, width = lattice.along.shape
    alpha = np.full((n, frames, width), -np.inf, lattice.along.dtype)
    if frames == 0:
        return alpha
    alpha[:, 0, 0] = lattice.along[:, 0, 0]
    has_label = lattice.target_lengths > 0
    if width > 1:
        alpha[has_label, 0, 1] = lattice.along[has_label, 0, 1]
    for t in range(1, frames):
        previous = alpha[:, t - 1]
        two_back = np.where(lattice.skip, _shifted(previous, 2), -np.inf)
        total = _log_sum_exp(previous, _shifted(previous, 1), two_back) + lattice.along[:, t]
        alpha[:, t] = np.where(lattice.valid, total, -np.inf)
    return alpha


def _beta(lattice: _Lattice) -> np.ndarray:
    """``log beta``, ``(N, T, 2 S_max + 1)`` (-inf at and after each input's length)."""
    n, frames, width = lattice.along.shape
    beta = np.full((n, frames, width), -np.inf, lattice.along.dtype)
    last = lattice.input_lengths - 1
    end = 2 * lattice.target_lengths  # the final blank
    rows = np.arange(n)
    skip_ahead = np.zeros_like(lattice.skip)
    skip_ahead[:, :-2] = lattice.skip[:, 2:]
    following = np.full((n, width), -np.inf, lattice.along.dtype)
    for t in range(frames - 1, -1, -1):
        two_ahead = np.where(skip_ahead, _shifted(following, -2), -np.inf)
        total = _log_sum_exp(following, _shifted(following, -1), two_ahead) + lattice.along[:, t]
        current = np.where(lattice.valid & (t < last)[:, None], total, -np.inf)
        starts = t == last
        current[rows[starts], end[starts]] = lattice.along[rows[starts], t, end[starts]]
        labelled = starts & (lattice.target_lengths > 0)
        current[rows[labelled], end[labelled] - 1] = lattice.along[
            rows[labelled], t, end[labelled] - 1
        ]
        beta[:, t] = current
        following = current
    return beta


def _negative_log_likelihood(alpha: np.ndarray, lattice: _Lattice) -> np.ndarray:
    n = alpha.shape[0]
    out = np.empty(n, alpha.dtype)
    for i in range(n):
        frames, length = lattice.input_lengths[i], lattice.target_lengths[i]
        if frames == 0:
            # (PyTorch: -0 for an empty target, no alignment of a non-empty one)
            out[i] = -0.0 if length == 0 else np.inf
        elif length == 0:
            out[i] = -alpha[i, frames - 1, 0]
        else:
            end = alpha[i, frames - 1, 2 * length - 1 : 2 * length + 1]
            out[i] = -_log_sum_exp(end[1:2], end[0:1])[0]
    return out


# --- the ops ----------------------------------------------------------------------------------


@op("CtcLossBackward0", inputs=("log_probs",), tensor_params=("targets",), name="_ctc_loss")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The negative log likelihood of each sequence of the batch, ``(N,)``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lattice = _Lattice(log_probs, targets, input_lengths, target_lengths, blank)
        return _negative_log_likelihood(_alpha(lattice), lattice)


@_ctc_loss.derivative("log_probs")
def _(ops, grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result):
    return ops.ctc_loss_backward(
        grad, log_probs, targets, result, input_lengths, target_lengths, blank, zero_infinity
    )


@op("NotImplemented", inputs=("grad", "log_probs"), tensor_params=("targets", "nll"))
def _ctc_loss_backward(
    grad, log_probs, targets, nll, input_lengths, target_lengths, blank, zero_infinity
):
    """PyTorch's gradient of ``ctc_loss`` in ``log_probs`` (see the module's docstring)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lattice = _Lattice(log_probs, targets, input_lengths, target_lengths, blank)
        both = _alpha(lattice) + _beta(lattice)  # (N, T, W)
        largest = both.max(axis=2, initial=-np.inf)
        shift = np.where(largest == -np.inf, 0, largest).astype(both.dtype)
        weights = np.exp(both - shift[..., None])
        classes = log_probs.shape[2]
        one_hot = (lattice.extended[..., None] == np.arange(classes)) & lattice.valid[..., None]
        summed = np.einsum("ntw,nwc->ntc", weights, one_hot.astype(both.dtype))
        log_posterior = np.log(summed) + shift[..., None]  # (N, T, C)
        lp = lattice.log_probs
        out = np.exp(lp) - np.exp(log_posterior + nll[:, None, None] - lp)
        out = out * grad[:, None, None]
        frames = np.arange(lp.shape[1])
        before_end = frames[None, :] < lattice.input_lengths[:, None]
        keep = before_end[..., None]
        if zero_infinity:
            keep = keep & (nll != np.inf)[:, None, None]
        out = np.where(keep, out, 0).astype(log_probs.dtype)
    return np.ascontiguousarray(np.swapaxes(out, 0, 1))


_not_implemented_node(_ctc_loss_backward, "_ctc_loss_backward")


# --- the public functions ---------------------------------------------------------------------


def _type_label(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, tuple):
        return "tuple of (" + ", ".join(_type_label(v) for v in value) + ")"
    if isinstance(value, list):
        return "list of [" + ", ".join(_type_label(v) for v in value) + "]"
    return type(value).__name__


def _no_overload(args: tuple) -> TypeError:
    """PyTorch's message when the lengths are neither both tensors nor both int lists."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    tail = "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)"
    lines = [
        f"ctc_loss() received an invalid combination of arguments - got ({got}), but "
        "expected one of:"
    ]
    for kind in ("tuple of ints", "Tensor"):
        lines.append(
            f" * (Tensor log_probs, Tensor targets, {kind} input_lengths, {kind} "
            f"target_lengths, {tail}"
        )
        marked = []
        for i, a in enumerate(args):
            label = _type_label(a)
            wrong = i >= 4 or (i >= 2 and (kind != "Tensor" or not isinstance(a, Tensor)))
            marked.append(f"!{label}!" if wrong else label)
        lines.append(
            "      didn't match because some of the arguments have invalid types: ("
            + ", ".join(marked)
            + ")"
        )
    return TypeError("\n".join(lines) + "\n")


def _lengths(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        if value._data.dtype.kind not in "iu":  # (bool is not integral here)
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(v) for v in value._data.reshape(-1))
    for v in value:
        if not isinstance(v, int | np.integer) or isinstance(v, bool):
            position = 2 if name == "input_lengths" else 3
            raise TypeError(
                f"ctc_loss(): argument '{name}' failed to unpack the object at pos {position} "
                f'with error "type must be tuple of ints,but got {type(v).__name__}"'
            )
    return tuple(int(v) for v in value)


def _check(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: tuple[int, ...],
    target_lengths: tuple[int, ...],
    blank: int,
) -> None:
    """``ctc_loss_allocate_outputs``'s checks, in its order (log_probs already batched)."""
    if log_probs.dim() != 3:
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
            f"tensor for argument #1 'log_probs'{_ALLOCATE}"
        )
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
            f"tensor for argument #2 'targets'{_ALLOCATE}"
        )
    batch, classes = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(
                "Expected target_lengths to have value at least 0, but got value "
                f"{length}{_ALLOCATE}"
            )
    longest = max(target_lengths, default=0)
    if targets.dim() == 1:
        if targets.shape[0] != sum(target_lengths):
            raise RuntimeError(
                f"Expected tensor to have size {sum(target_lengths)} at dimension "
                f"0, but got size {targets.shape[0]} for argument #2 'targets'"
                f"{_ALLOCATE}"
            )
    else:
        if targets.shape[0] != batch:
            raise RuntimeError(
                f"Expected tensor to have size {batch} at dimension 0, but got "
                f"size {targets.shape[0]} for argument #2 'targets'{_ALLOCATE}"
            )
        if targets.shape[1] < longest:
            raise RuntimeError(
                f"Expected tensor to have size at least {longest} at dimension 1, "
                f"but got size {targets.shape[1]} for argument #2 'targets'"
                f"{_ALLOCATE}"
            )
    frames = log_probs.shape[0]
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(
                "Expected input_lengths to have value at least 0, but got value "
                f"{length}{_ALLOCATE}"
            )
        if length > frames:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {frames}, but got "
                f"value {length}{_ALLOCATE}"
            )


def torch_ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
) -> Tensor:
    """``torch.ctc_loss``: :func:`ctc_loss` with the reduction as a code (0 none, 1 mean,
    2 sum)."""
    lengths_are_tensors = isinstance(input_lengths, Tensor), isinstance(target_lengths, Tensor)
    sequences = all(isinstance(v, list | tuple) for v in (input_lengths, target_lengths))
    if lengths_are_tensors != (True, True) and not sequences:
        raise _no_overload(
            (log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
        )
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    if log_probs._data.dtype.kind != "f" or log_probs._data.dtype == np.float16:
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{scalar_name(log_probs._data.dtype)}'"
        )
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    _check(log_probs, targets, il, tl, int(blank))
    loss = _ctc_loss(log_probs, targets, il, tl, int(blank), bool(zero_infinity))
    if zero_infinity:
        loss = where(loss == np.inf, 0.0, loss)
    if reduction == 1:
        divisor = (
            (target_lengths if isinstance(target_lengths, Tensor) else _tensor(tl))
            .clamp_min(1)
            .to(loss.dtype)
        )
        return (loss / divisor.reshape(loss.shape)).mean()
    if reduction == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` (``(T, N, C)`` or
    ``(T, C)``, log-probabilities of ``C`` classes, ``blank`` among them, at ``T`` frames) for
    ``targets`` (``(N, S)`` padded or the ``N`` sequences concatenated), over the first
    ``input_lengths[n]`` frames and ``target_lengths[n]`` labels (tensors or tuples of ints).
    ``reduction='mean'`` divides each loss by its target length, then averages;
    ``zero_infinity`` makes an impossible alignment's loss (and gradient) 0.

    Example:
        >>> import chainrule as torch
        >>> log_probs = torch.zeros(2, 1, 2).log_softmax(2)
        >>> torch.nn.functional.ctc_loss(log_probs, torch.tensor([[1]]), [2], [1])
        tensor(0.2877)
    """
    check_reduction(reduction)
    return torch_ctc_loss(
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        _REDUCTIONS[reduction],
        zero_infinity,
    )


PRIMITIVES: dict[str, Any] = {"ctc_loss_backward": _ctc_loss_backward}
