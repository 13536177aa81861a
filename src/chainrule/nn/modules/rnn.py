"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells.

Parameters are named and laid out as in PyTorch (``weight_ih_l0``, gates stacked as
``(i, f, g, o)`` for LSTM and ``(r, z, n)`` for GRU), so state dicts are interchangeable. The
input projection of a whole sequence is one matrix product per layer; only the recurrence
itself loops over time steps. The graph is made of ordinary ops (PyTorch's CPU kernels have
fused nodes instead); values and gradients are PyTorch's.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ..._tensor import Tensor
from ...ops.creation import arange, empty, zeros
from ...ops.indexing import index_select
from ...ops.linalg import linear
from ...ops.nn_ops.dropout import dropout as dropout_fn
from ...ops.pointwise import _where, relu, sigmoid, tanh
from ...ops.shape import cat, chunk, stack, unbind
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ----------------------------------------------------------------------------------------------
# One time step of each cell, given the input projection ``xw = x @ W_ih.T + b_ih``


def _rnn_step(
    xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, nonlinearity: str
) -> Tensor:
    pre = xw + linear(h, w_hh, b_hh)
    return tanh(pre) if nonlinearity == "tanh" else relu(pre)


def _lstm_step(
    xw: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None
) -> tuple[Tensor, Tensor]:
    gates = xw + linear(h, w_hh, b_hh)
    i, f, g, o = chunk(gates, 4, -1)
    c_next = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h_next = sigmoid(o) * tanh(c_next)
    if w_hr is not None:
        h_next = linear(h_next, w_hr)
    return h_next, c_next


def _gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    x_r, x_z, x_n = chunk(xw, 3, -1)
    h_r, h_z, h_n = chunk(linear(h, w_hh, b_hh), 3, -1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


# ----------------------------------------------------------------------------------------------
# Multi-layer, optionally bidirectional recurrent layers


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: parameters, checks, the layer loop."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for name, shape in zip(names, shapes, strict=True):
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs weights for cuDNN here)."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks --------------------------------------------------------------------------------

    def _check_input(self, input: Tensor) -> None:
        weight = getattr(self, self._all_weights[0][0])
        if input.dtype != weight.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype})."
                f" Convert input: input.to({weight.dtype}), or convert model: "
                f"model.to({input.dtype})"
            )
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{input.size(-1)}"
            )

    def _check_hidden(
        self, hx: Tensor, batch: int, size: int, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # -- packed sequences ----------------------------------------------------------------------

    def _unpack(self, packed: PackedSequence, hx: Any) -> tuple[Tensor, Any, list[int]]:
        """A packed input as time-major padded steps (sequences longest first) and the hidden
        state(s) put in that order (``sorted_indices``), as PyTorch's ``permute_hidden``."""
        data, sizes = packed.data, [int(b) for b in packed.batch_sizes.tolist()]
        batch = sizes[0] if sizes else 0
        rows = []
        start = 0
        for size in sizes:
            step = data[start : start + size]
            if size < batch:
                step = cat([step, zeros(batch - size, data.shape[1], dtype=data.dtype)], 0)
            rows.append(step)
            start += size
        padded = stack(rows, 0)
        if hx is not None and packed.sorted_indices is not None:
            order = packed.sorted_indices
            hx = (
                tuple(index_select(h, 1, order) for h in hx)
                if isinstance(hx, tuple)
                else index_select(hx, 1, order)
            )
        return padded, hx, sizes

    def _repack(
        self, packed: PackedSequence, output: Tensor, states: Any, sizes: list[int]
    ) -> tuple[PackedSequence, Any]:
        """The padded output packed as the input was; the final states in the caller's order
        (``unsorted_indices``)."""
        data = cat([output[t, :size] for t, size in enumerate(sizes)], 0)
        if packed.unsorted_indices is not None:
            order = packed.unsorted_indices
            states = (
                tuple(index_select(h, 1, order) for h in states)
                if isinstance(states, tuple)
                else index_select(states, 1, order)
            )
        return PackedSequence(
            data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices
        ), states

    # -- the layer loop ------------------------------------------------------------------------

    def _prepare(self, input: Tensor, hx: Any) -> tuple[Tensor, Any, bool]:
        """Batch an unbatched input, put time first; hidden states unbatched alike."""
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D "
                "input instead"
            )
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
            if hx is not None:
                states = hx if isinstance(hx, tuple) else (hx,)
                for h in states:
                    if h.dim() != 2:
                        raise RuntimeError(
                            f"For unbatched 2-D input, hx should also be 2-D but got "
                            f"{h.dim()}-D tensor"
                        )
                hx = (
                    tuple(h.unsqueeze(1) for h in states)
                    if isinstance(hx, tuple)
                    else (hx.unsqueeze(1))
                )
        else:
            if self.batch_first:
                input = input.transpose(0, 1)
            if hx is not None:
                states = hx if isinstance(hx, tuple) else (hx,)
                for h in states:
                    if h.dim() != 3:
                        raise RuntimeError(
                            f"For batched 3-D input, hx should also be 3-D but got "
                            f"{h.dim()}-D tensor"
                        )
        return input, hx, batched

    def _finish(self, output: Tensor, states: Any, batched: bool) -> tuple[Tensor, Any]:
        if not batched:
            output = output.squeeze(1)
            states = (
                tuple(s.squeeze(1) for s in states)
                if isinstance(states, tuple)
                else states.squeeze(1)
            )
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, states

    def _take_input(self, input: Any, hx: Any) -> tuple[Any, Tensor, Any, Any, bool]:
        """The forward's input as ``(packed or None, x, hx, batch sizes, batched)``: a
        PackedSequence unpacked, a padded one prepared, then checked."""
        packed = input if isinstance(input, PackedSequence) else None
        sizes = None
        if packed is not None:
            x, hx, sizes = self._unpack(packed, hx)
            batched = True
        else:
            x, hx, batched = self._prepare(input, hx)
        self._check_input(x)
        return packed, x, hx, sizes, batched

    def _forward_one_state(self, input: Any, hx: Tensor | None) -> Any:
        """RNN's and GRU's forward (one state tensor per layer and direction): ``output,
        h_n`` for a padded sequence, or a packed one."""
        packed, x, hx, sizes, batched = self._take_input(input, hx)
        directions = 2 if self.bidirectional else 1
        batch = x.size(1)
        if hx is None:
            hx = zeros(self.num_layers * directions, batch, self.hidden_size, dtype=x.dtype)
        self._check_hidden(hx, batch, self.hidden_size)
        output, finals = self._run(x, [(h,) for h in unbind(hx, 0)], sizes)
        h_n = stack([f[0] for f in finals], 0)
        if packed is not None:
            return self._repack(packed, output, h_n, sizes)
        return self._finish(output, h_n, batched)

    def _run(
        self, input: Tensor, initial: list[tuple[Tensor, ...]], batch_sizes: list[int] | None = None
    ) -> tuple[Tensor, list[tuple[Tensor, ...]]]:
        """Every layer and direction over time-major ``input``; ``initial[k]`` holds the start
        state(s) of layer-direction ``k``. Returns the last layer's output and final states.
        With ``batch_sizes`` (a packed input, padded, longest sequence first) only the first
        ``batch_sizes[t]`` sequences take step ``t``; the others keep their state."""
        directions = 2 if self.bidirectional else 1
        finals: list[tuple[Tensor, ...]] = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                params = [getattr(self, name) for name in self._all_weights[k]]
                seq, final = self._run_direction(
                    layer_input, params, initial[k], direction == 1, batch_sizes
                )
                outputs.append(seq)
                finals.append(final)
            layer_input = outputs[0] if directions == 1 else cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = dropout_fn(layer_input, self.dropout, True)
        return layer_input, finals

    def _run_direction(
        self,
        input: Tensor,
        params: list[Parameter],
        state: tuple[Tensor, ...],
        reverse: bool,
        batch_sizes: list[int] | None = None,
    ) -> tuple[Tensor, tuple[Tensor, ...]]:
        w_ih, w_hh = params[0], params[1]
        b_ih = params[2] if self.bias else None
        b_hh = params[3] if self.bias else None
        w_hr = params[-1] if self.proj_size > 0 else None
        steps = unbind(linear(input, w_ih, b_ih), 0)  # the input projection, one product
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        outputs: list[Tensor | None] = [None] * len(steps)
        batch = input.shape[1]
        for t in order:
            stepped = self._step(steps[t], state, w_hh, b_hh, w_hr)
            if batch_sizes is not None and batch_sizes[t] < batch:
                # (sequences already ended, or not yet started backwards, keep their state)
                running = (arange(batch) < batch_sizes[t]).unsqueeze(1)
                stepped = tuple(
                    _where(running, new, old) for new, old in zip(stepped, state, strict=True)
                )
            state = stepped
            outputs[t] = state[0]
        return stack(outputs, 0), state  # type: ignore[arg-type]

    def _step(
        self,
        xw: Tensor,
        state: tuple[Tensor, ...],
        w_hh: Tensor,
        b_hh: Tensor | None,
        w_hr: Tensor | None,
    ) -> tuple[Tensor, ...]:
        raise NotImplementedError


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    Example:
        >>> import chainrule as torch
        >>> out, h = torch.nn.RNN(3, 4)(torch.zeros(5, 2, 3))
        >>> out.shape, h.shape
        (chainrule.Size([5, 2, 4]), chainrule.Size([1, 2, 4]))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        self.nonlinearity = nonlinearity
        super().__init__(
            mode,
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )

    def _step(
        self,
        xw: Tensor,
        state: tuple[Tensor, ...],
        w_hh: Tensor,
        b_hh: Tensor | None,
        w_hr: Tensor | None,
    ) -> tuple[Tensor, ...]:
        return (_rnn_step(xw, state[0], w_hh, b_hh, self.nonlinearity),)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward_one_state(input, hx)


class LSTM(RNNBase):
    """Long short-term memory: returns ``output, (h_n, c_n)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )

    def _step(
        self,
        xw: Tensor,
        state: tuple[Tensor, ...],
        w_hh: Tensor,
        b_hh: Tensor | None,
        w_hr: Tensor | None,
    ) -> tuple[Tensor, ...]:
        return _lstm_step(xw, state[0], state[1], w_hh, b_hh, w_hr)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        packed, x, hx, sizes, batched = self._take_input(input, hx)
        directions = 2 if self.bidirectional else 1
        batch = x.size(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = zeros(self.num_layers * directions, batch, real_hidden, dtype=x.dtype)
            c0 = zeros(self.num_layers * directions, batch, self.hidden_size, dtype=x.dtype)
        else:
            h0, c0 = hx
        self._check_hidden(h0, batch, real_hidden, "Expected hidden[0] size {}, got {}")
        self._check_hidden(c0, batch, self.hidden_size, "Expected hidden[1] size {}, got {}")
        starts = list(zip(unbind(h0, 0), unbind(c0, 0), strict=True))
        output, finals = self._run(x, starts, sizes)
        h_n = stack([f[0] for f in finals], 0)
        c_n = stack([f[1] for f in finals], 0)
        if packed is not None:
            return self._repack(packed, output, (h_n, c_n), sizes)
        return self._finish(output, (h_n, c_n), batched)


class GRU(RNNBase):
    """Gated recurrent unit: returns ``output, h_n``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            0,
            device,
            dtype,
        )

    def _step(
        self,
        xw: Tensor,
        state: tuple[Tensor, ...],
        w_hh: Tensor,
        b_hh: Tensor | None,
        w_hr: Tensor | None,
    ) -> tuple[Tensor, ...]:
        return (_gru_step(xw, state[0], w_hh, b_hh),)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward_one_state(input, hx)


# ----------------------------------------------------------------------------------------------
# Cells: one time step


class RNNCellBase(Module):
    """Parameters of a single-step cell: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batch(self, input: Tensor, hx: Any, name: str) -> tuple[Tensor, Any, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        for h in states:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, hx, batched = self._batch(input, hx, "RNNCell")
        if hx is None:
            hx = zeros(x.size(0), self.hidden_size, dtype=x.dtype)
        h = _rnn_step(
            linear(x, self.weight_ih, self.bias_ih),
            hx,
            self.weight_hh,
            self.bias_hh,
            self.nonlinearity,
        )
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, Tensor]:
        x, hx, batched = self._batch(input, hx, "LSTMCell")
        if hx is None:
            z = zeros(x.size(0), self.hidden_size, dtype=x.dtype)
            hx = (z, z)
        h, c = _lstm_step(
            linear(x, self.weight_ih, self.bias_ih),
            hx[0],
            hx[1],
            self.weight_hh,
            self.bias_hh,
            None,
        )
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, hx, batched = self._batch(input, hx, "GRUCell")
        if hx is None:
            hx = zeros(x.size(0), self.hidden_size, dtype=x.dtype)
        h = _gru_step(linear(x, self.weight_ih, self.bias_ih), hx, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
