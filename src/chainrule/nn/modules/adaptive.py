"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016) for large,
frequency-sorted label sets.

The labels below ``cutoffs[0]`` (the shortlist) are scored by the *head*, a linear layer that
also scores one entry per *cluster* of rarer labels; a label of cluster ``i`` is scored by the
cluster's entry in the head plus its own score in the cluster's *tail*, a projection to
``in_features // div_value ** (i + 1)`` features followed by a linear layer. Forward only
evaluates the tails of clusters that some target falls in.
"""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ..._tensor import Tensor
from ...ops.activation import log_softmax
from ...ops.reduction import argmax
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation: ``forward(input, target)`` returns the named tuple
    ``(output, loss)``, each target's log-probability and their mean negative;
    :meth:`log_prob` gives the full distribution, :meth:`predict` the most likely class.

    Example:
        >>> import chainrule as torch
        >>> asm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
        >>> asm.log_prob(torch.randn(3, 8)).exp().sum(1).round()
        tensor([1., 1., 1.], grad_fn=<RoundBackward0>)
    """

    in_features: int
    n_classes: int
    cutoffs: list[int]
    div_value: float
    head_bias: bool
    head: Linear
    tail: ModuleList

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        in_order = cutoffs == sorted(cutoffs) and len(set(cutoffs)) == len(cutoffs)
        in_range = min(cutoffs) > 0 and max(cutoffs) <= n_classes - 1
        if not (in_order and in_range and all(int(c) == c for c in cutoffs)):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **factory),
                    Linear(hidden, size, bias=False, **factory),
                )
            )

    def reset_parameters(self) -> None:
        """Initialise the head and the tails again, as ``__init__`` does."""
        self.head.reset_parameters()
        for projection, scores in self.tail:  # type: ignore[misc]
            projection.reset_parameters()
            scores.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        """The log-probability of each target (``(N,)`` or ``()``) and the mean negative
        log-likelihood, as ``_ASMoutput(output, loss)``."""
        target_dims = target_.dim()
        if target_dims == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{input_.size()}"
                )
        elif target_dims == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{input_.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_dims > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)
        output = input.new_zeros(batch)
        # the head entry each row reads: its label (shortlist) or its cluster's entry
        head_entry = target.new_empty(batch)
        covered = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            in_bucket = (target >= low) & (target < high)
            rows = in_bucket.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_entry.index_copy_(0, rows, target[in_bucket])
            else:
                local_target = target[in_bucket] - low
                scores = self.tail[i - 1](input.index_select(0, rows))
                head_entry.index_fill_(0, rows, self.shortlist_size + i - 1)
                local = log_softmax(scores, dim=1).gather(1, local_target.unsqueeze(1))
                output.index_copy_(0, rows, local.squeeze(1))
            covered += rows.numel()
        if covered != batch:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head = log_softmax(self.head(input), dim=1)
        output += head.gather(1, head_entry.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input: Tensor, head_scores: Tensor) -> Tensor:
        """Every class's log-probability from the head's scores: the shortlist's as they are,
        each cluster's its tail's plus the cluster's entry in the head."""
        out = input.new_empty((head_scores.size(0), self.n_classes))
        head = log_softmax(head_scores, dim=1)
        out[:, : self.shortlist_size] = head[:, : self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster = log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (``log_prob(input).argmax(1)``, computing the
        tails only for rows whose best head entry is a cluster)."""
        head_scores = self.head(input)
        best = argmax(head_scores, dim=1)
        in_clusters = best >= self.shortlist_size
        if not in_clusters.any():
            return best
        if in_clusters.all():
            return argmax(self._full_log_prob(input, head_scores), dim=1)
        full = self._full_log_prob(input[in_clusters], head_scores[in_clusters])
        best[in_clusters] = argmax(full, dim=1)
        return best
