"""The graph being exported: ONNX nodes as plain records, value names, initializers.

The exporter records into a :class:`GraphBuilder` while the model runs one forward call
(``_capture``); ``_model`` turns it into an ``onnx.ModelProto`` at the end. Names follow PyTorch's
TorchScript-based exporter: a node is ``<scope>/<OpType>`` (``/fc1/Gemm``, ``/Relu_1``), its
output ``<node name>_output_<i>``, a parameter keeps its ``state_dict`` name (``fc1.weight``), a
folded initializer is ``onnx::<Consumer>_<n>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._tensor import Tensor

__all__ = ["OnnxNode", "GraphBuilder", "operator_of"]


def operator_of(tensor: Tensor) -> str:
    """``aten::<name>`` of the operation that made ``tensor`` (from its grad_fn's name)."""
    node_name = re.sub(r"Backward\d*$", "", tensor.grad_fn.name())  # type: ignore[union-attr]
    return "aten::" + re.sub(r"(?<!^)(?=[A-Z])", "_", node_name).lower()


@dataclass
class OnnxNode:
    """One ONNX node: ``op_type`` applied to the values named ``inputs`` ("" for an omitted
    optional input), giving ``outputs``; ``attrs`` its attributes (an ndarray attribute is a
    tensor, as a Constant's ``value``)."""

    op_type: str
    inputs: list[str]
    outputs: list[str]
    name: str
    attrs: dict[str, Any] = field(default_factory=dict)


class GraphBuilder:
    """Nodes, initializers and the names of the tensors seen while tracing."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[OnnxNode] = []
        #: Initializers (parameters and buffers the graph reads), by name, in first-use order.
        self.initializers: dict[str, np.ndarray] = {}
        #: Values' shapes and NumPy dtypes at trace time, by name.
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.dtypes: dict[str, np.dtype] = {}
        self.scope: list[str] = []  # qualified names of the modules being run
        self._names: dict[int, str] = {}  # id(tensor) -> value name
        self._alive: list[Tensor] = []  # (keeps the traced tensors, so their ids stay theirs)
        self._params: dict[int, tuple[str, Tensor]] = {}  # id -> (state_dict name, tensor)
        self._node_names: dict[str, int] = {}
        self._constants = 0

    # -- tensors and names -------------------------------------------------------------------

    def add_parameter(self, name: str, tensor: Tensor) -> None:
        """Make ``tensor`` a parameter called ``name``: an initializer once the graph reads it."""
        self._params.setdefault(id(tensor), (name, tensor))

    def bind(self, tensor: Tensor, name: str) -> None:
        """The value called ``name`` is ``tensor`` from now on (also after an in-place op)."""
        self._names[id(tensor)] = name
        self._alive.append(tensor)
        self.shapes[name] = tuple(tensor.shape)
        self.dtypes[name] = tensor._data.dtype

    def is_traced(self, value: Any) -> bool:
        """True for a tensor the graph computes or reads (an input, parameter or result)."""
        return isinstance(value, Tensor) and (id(value) in self._names or id(value) in self._params)

    def value(self, tensor: Tensor, consumer: str) -> str:
        """The name of ``tensor`` in the graph: an input's, a result's, a parameter's (added as
        an initializer on first use), or a new constant read by an op of type ``consumer``."""
        name = self._names.get(id(tensor))
        if name is not None:
            return name
        param = self._params.get(id(tensor))
        if param is not None:
            name, tensor = param
            self.initializers[name] = np.array(tensor._data)
            self.bind(tensor, name)
            return name
        if tensor.grad_fn is not None:
            # Computed from the inputs or parameters by a call nobody recorded: exporting its
            # value as a constant would be silently wrong for other inputs.
            from .errors import UnsupportedOperatorError

            raise UnsupportedOperatorError(operator_of(tensor), self.opset, None)
        return self.constant(np.array(tensor._data), consumer)

    def next_constant_number(self) -> int:
        """The ``<n>`` of the next ``onnx::<Op>_<n>`` name."""
        self._constants += 1
        return self._constants - 1

    def constant(self, array: np.ndarray, consumer: str) -> str:
        """A Constant node holding ``array`` (``<scope>/Constant``, as PyTorch names the
        constants of a traced call); ``consumer``: the type of the node reading it."""
        del consumer
        (name,) = self.emit("Constant", [], value=np.asarray(array))
        self.shapes[name] = tuple(np.shape(array))
        self.dtypes[name] = np.asarray(array).dtype
        return name

    def ints(self, values: Any, consumer: str) -> str:
        """A constant int64 vector (the shape of a Reshape, the axes of a reduction)."""
        return self.constant(np.asarray(list(values), dtype=np.int64), consumer)

    # -- nodes -------------------------------------------------------------------------------

    def node_name(self, op_type: str) -> str:
        """``<scope>/<op_type>``, with ``_1``, ``_2``... for the second, third... of that name."""
        base = ("/" + "/".join(self.scope) if self.scope else "") + "/" + op_type
        count = self._node_names.get(base, 0)
        self._node_names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def emit(self, op_type: str, inputs: list[str], outputs: int = 1, **attrs: Any) -> list[str]:
        """Add a node; its output names."""
        name = self.node_name(op_type)
        names = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(OnnxNode(op_type, list(inputs), names, name, attrs))
        return names

    def emit_for(self, result: Tensor, op_type: str, inputs: list[str], **attrs: Any) -> str:
        """Add a node whose only output is ``result``."""
        (name,) = self.emit(op_type, inputs, **attrs)
        self.bind(result, name)
        return name

    def renumber(self) -> dict[str, str]:
        """Number the scoped node names again (``/Constant``, ``/Constant_1``...) after folding
        removed nodes, as PyTorch names its nodes once the graph is final; output names follow
        (``<node name>_output_<i>``). The value names changed, old to new."""
        counts: dict[str, int] = {}
        renamed: dict[str, str] = {}
        for node in self.nodes:
            if not node.name.startswith("/"):
                continue
            base = re.sub(r"_\d+$", "", node.name)
            count = counts.get(base, 0)
            counts[base] = count + 1
            new = base if count == 0 else f"{base}_{count}"
            if new == node.name:
                continue
            for i, output in enumerate(node.outputs):
                if output == f"{node.name}_output_{i}":
                    renamed[output] = f"{new}_output_{i}"
            node.name = new
        if not renamed:
            return renamed
        for node in self.nodes:
            node.outputs = [renamed.get(n, n) for n in node.outputs]
            node.inputs = [renamed.get(n, n) for n in node.inputs]
        for old, new in renamed.items():
            if old in self.shapes:
                self.shapes[new] = self.shapes.pop(old)
            if old in self.dtypes:
                self.dtypes[new] = self.dtypes.pop(old)
        return renamed

    def cast(self, name: str, dtype: np.dtype) -> str:
        """``name`` converted to ``dtype`` (itself when it has that dtype already)."""
        if self.dtypes.get(name) == dtype:
            return name
        from onnx import helper  # (the optional dependency, imported when exporting)

        (out,) = self.emit("Cast", [name], to=int(helper.np_dtype_to_tensor_dtype(dtype)))
        self.dtypes[out] = dtype
        if name in self.shapes:
            self.shapes[out] = self.shapes[name]
        return out
