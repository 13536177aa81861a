"""Sampling from tensors that may require grad: ``bernoulli`` and its in-place forms.

The draws replay PyTorch's kernels (``random_streams.bernoulli``: a seed gives PyTorch's values,
in memory order for a tensor filled in place), and the graph is PyTorch's:
``torch.bernoulli(x)`` records ``BernoulliBackward0`` (a zero derivative),
``x.bernoulli(p)`` with a number ``p`` the autograd fallback's ``NotImplemented``, and
``bernoulli_`` records ``BernoulliBackward1`` (tensor ``p``) or ``BernoulliBackward2`` (number).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import inplace, random_streams
from ._registry import KEEP, op, tensor_method, zero_derivative
from .creation import PER_EXAMPLE_DRAWS, Generator, _format_scalar, _gen
from .pointwise import _edges_of_inputs_needing_grad, _not_implemented_node
from .shape import _expanded_shape

__all__ = ["bernoulli"]

_PROBABILITY_MESSAGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _draw(
    shape: tuple[int, ...],
    probability: Any,
    generator: Any,
    dtype: np.dtype,
    strides: tuple[int, ...] | None = None,
) -> np.ndarray:
    """1 where a uniform draw falls below ``probability``, else 0, in ``dtype``; with the
    byte ``strides`` of a tensor filled in place, the draws are taken in its memory order."""
    mask = random_streams.bernoulli(_gen(generator), probability, shape, strides)
    return mask.astype(dtype)


def _check_probabilities(p: np.ndarray, kernel: str) -> None:
    if p.dtype.kind not in "fcV":
        from .._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype

        name = SCALAR_TYPE_NAMES[from_numpy_dtype(p.dtype)]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    # (NaN fails the check, as in PyTorch)
    if p.size and not bool(np.all((p >= 0) & (p <= 1))):
        raise RuntimeError(_PROBABILITY_MESSAGE)


def _check_probability(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_format_scalar(p)}")


@op("BernoulliBackward0", promote=KEEP)
def _bernoulli(self, generator):
    _check_probabilities(self, "bernoulli_tensor_cpu_p_")
    return _draw(self.shape, self, generator, self.dtype)


_bernoulli.derivative("self")(zero_derivative)


@op("NotImplemented", promote=KEEP)
def _bernoulli_number(self, p, generator):
    _check_probability(p)
    return _draw(self.shape, p, generator, self.dtype)


_not_implemented_node(_bernoulli_number, "bernoulli")


@tensor_method
def bernoulli(
    input: Tensor, p: float | None = None, *, generator: Generator | None = None
) -> Tensor:
    """1 with probability ``input`` (or ``p``), else 0, in ``input``'s dtype.

    Its derivative is zero (``BernoulliBackward0``); with a number ``p`` it is not implemented,
    as in PyTorch.
    """
    if PER_EXAMPLE_DRAWS:  # (vmap with "different" randomness: a draw per example)
        return PER_EXAMPLE_DRAWS[-1](bernoulli, (input, p), {"generator": generator})
    if p is None:
        return _bernoulli(input, generator)
    return _edges_of_inputs_needing_grad(_bernoulli_number(input, p, generator))


@op("BernoulliBackward1", inputs=("self", "p"), promote=KEEP)
def _bernoulli_tensor_in_place(self, p, generator):
    _check_probabilities(p, "bernoulli_tensor_cpu_p_")
    _expanded_shape(p.shape, self.shape, p.dtype)  # (PyTorch's error when p cannot expand)
    return _draw(self.shape, p, generator, self.dtype, self.strides)


_bernoulli_tensor_in_place.derivative("self")(zero_derivative)
_bernoulli_tensor_in_place.derivative("p")(zero_derivative)


@op("BernoulliBackward2", promote=KEEP)
def _bernoulli_number_in_place(self, p, generator):
    # (in place, with a zero derivative: the out-of-place form's draw in self's memory order)
    _check_probability(p)
    return _draw(self.shape, p, generator, self.dtype, self.strides)


_bernoulli_number_in_place.derivative("self")(zero_derivative)


@tensor_method
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with 1 (probability ``p``, a number or a tensor broadcast to ``self``)
    or 0; returns ``self``."""
    inplace.check_inplace_draw()
    if isinstance(p, Tensor):
        return inplace.inplace_call(self, _bernoulli_tensor_in_place, p, generator)
    return inplace.inplace_call(self, _bernoulli_number_in_place, p, generator)
