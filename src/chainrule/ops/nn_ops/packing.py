"""The node of ``nn.utils.rnn.pack_padded_sequence``: the time steps of a padded batch
concatenated (``PackPaddedSequenceBackward0``), and its adjoint (the packed gradient scattered
back into the padded shape), each the other's derivative."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import op

__all__: list[str] = []


@op("PackPaddedSequenceBackward0", inputs=("input",), tensor_params=("batch_sizes",))
def _pack_padded_sequence(input, batch_sizes, batch_first):
    steps = input if not batch_first else np.swapaxes(input, 0, 1)
    packed = np.concatenate([steps[t, :n] for t, n in enumerate(batch_sizes)], axis=0)
    return np.ascontiguousarray(packed)  # (contiguous whatever the input's layout)


@_pack_padded_sequence.derivative("input")
def _(ops, grad, batch_sizes, batch_first, input_shape):
    return ops.pack_padded_sequence_backward(grad, tuple(input_shape), batch_first, batch_sizes)


@op("PackPaddedSequenceBackwardBackward0", inputs=("grad",), tensor_params=("batch_sizes",))
def _pack_padded_sequence_backward(grad, input_shape, batch_first, batch_sizes):
    out = np.zeros(input_shape, grad.dtype)
    steps = out if not batch_first else np.swapaxes(out, 0, 1)
    offset = 0
    for t, n in enumerate(batch_sizes):
        steps[t, :n] = grad[offset : offset + n]
        offset += n
    return out


@_pack_padded_sequence_backward.derivative("grad")
def _(ops, grad, batch_sizes, batch_first):
    return ops.pack_padded_sequence(grad, batch_sizes, batch_first)


PRIMITIVES: dict[str, Any] = {
    "pack_padded_sequence": _pack_padded_sequence,
    "pack_padded_sequence_backward": _pack_padded_sequence_backward,
}
