"""Variable-length sequences: padding them into one tensor (``pad_sequence``) and packing
them (``PackedSequence``: the time steps' batches concatenated, longest sequences first).

``pack_padded_sequence`` records PyTorch's ``PackPaddedSequenceBackward0`` (its gradient
scatters back into the padded shape); padding and unpadding are slice writes and reads
(``CopySlices``, ``SliceBackward0``), as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..._tensor import Tensor, wrap
from ...ops.creation import full
from ...ops.indexing import index_select
from ...ops.nn_ops.packing import _pack_padded_sequence

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence(NamedTuple):
    """A packed batch of sequences: ``data`` holds time step 0 of every sequence, then time
    step 1 of those still running ...; ``batch_sizes[t]`` is how many run at step ``t``;
    ``sorted_indices`` / ``unsorted_indices`` map between the caller's order and the
    longest-first order (None when the input was already sorted)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    @property
    def is_cuda(self) -> bool:
        """Always False (CPU only)."""
        return False

    def is_pinned(self) -> bool:
        """Always False."""
        return False

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)`` (the index tensors stay as they are)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=wrap(np.zeros(0, np.float32)).dtype)

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=wrap(np.zeros(0, np.float64)).dtype)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (None stays None)."""
    if permutation is None:
        return None
    order = permutation._data
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return wrap(inverse)


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return np.asarray(lengths._data, dtype=np.int64).reshape(-1)
    return np.asarray(list(lengths), dtype=np.int64)


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of
    the given ``lengths``; unless ``enforce_sorted``, the batch is sorted longest first and
    the permutation kept."""
    lens = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = wrap(order.astype(np.int64))
        lens = lens[order]
        input = index_select(input, 0 if batch_first else 1, sorted_indices)
    if lens.size and lens.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element "
            "in 'lengths' that is <= 0"
        )
    max_len = int(lens[0]) if lens.size else 0
    time_dim = 1 if batch_first else 0
    if max_len > input.shape[time_dim]:
        raise RuntimeError(
            f"Expected sequence length to be larger than or equal to {max_len}, "
            f"but got {input.shape[time_dim]}"
        )
    batch_sizes = np.array([(lens > t).sum() for t in range(max_len)], dtype=np.int64)
    data = _pack_padded_sequence(input, wrap(batch_sizes), bool(batch_first))
    return PackedSequence(
        data, wrap(batch_sizes), sorted_indices, invert_permutation(sorted_indices)
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Unpack into a padded batch ``(T, B, *)`` (or ``(B, T, *)``) and the lengths, in the
    caller's original order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes._data
    max_len = int(batch_sizes.size)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_len}"
            )
        max_len = total_length
    batch = int(batch_sizes[0]) if batch_sizes.size else 0
    trailing = tuple(data.shape[1:])
    out = full((max_len, batch) + trailing, padding_value, dtype=data.dtype)
    offset = 0
    for t, n in enumerate(batch_sizes):
        # a slice of the packed data, viewed as the step's batch (PyTorch's nodes)
        out[t, : int(n)] = data[offset : offset + int(n)].view((int(n),) + trailing)
        offset += int(n)
    lengths = np.array([(batch_sizes > b).sum() for b in range(batch)], dtype=np.int64)
    if batch_first:
        out = out.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        out = index_select(out, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices._data]
    return out, wrap(lengths)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack sequences of different lengths ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)``
    with ``batch_first``), padding with ``padding_value`` on ``padding_side``.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.nn.utils.rnn import pad_sequence
        >>> pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True)
        tensor([[1., 1.],
                [1., 0.]])
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in seqs)
    trailing = tuple(seqs[0].shape[1:])
    shape = ((len(seqs), max_len) if batch_first else (max_len, len(seqs))) + trailing
    out = full(shape, padding_value, dtype=seqs[0].dtype)
    for i, seq in enumerate(seqs):
        n = seq.shape[0]
        steps = slice(0, n) if padding_side == "right" else slice(max_len - n, max_len)
        if batch_first:
            out[i, steps] = seq
        else:
            out[steps, i] = seq
    return out


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_array(lengths)
    return [padded_sequences[i][wrap(np.arange(int(n)))] for i, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (longest first unless not ``enforce_sorted``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a :class:`PackedSequence` holds, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
