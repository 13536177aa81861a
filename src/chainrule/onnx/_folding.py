"""Constant folding and initializer deduplication at export.

Folding (``do_constant_folding=True``) (``do_constant_folding=True``): a ``BatchNormalization`` in
inference mode right after a ``Conv`` is folded into the convolution's weight and bias, as
PyTorch's exporter does. The new initializers are called ``onnx::Conv_<n>``.

With ``s = scale / sqrt(var + eps)``: ``W' = W * s`` (per output channel) and
``b' = (b - mean) * s + shift`` (``b`` is 0 for a convolution without bias).
"""

from __future__ import annotations

import numpy as np

from ._builder import GraphBuilder, OnnxNode

__all__ = ["fold_batch_norms", "fold_transposes", "deduplicate_initializers"]


def _readers(nodes: list[OnnxNode], name: str) -> list[OnnxNode]:
    return [node for node in nodes if name in node.inputs]


def fold_batch_norms(builder: GraphBuilder, graph_outputs: list[str]) -> None:
    """Fold each foldable Conv -> BatchNormalization pair of ``builder`` in place."""
    inits = builder.initializers
    for bn in [node for node in builder.nodes if node.op_type == "BatchNormalization"]:
        conv = next((n for n in builder.nodes if bn.inputs[0] in n.outputs), None)
        if conv is None or conv.op_type != "Conv" or conv.outputs[0] in graph_outputs:
            continue
        if len(_readers(builder.nodes, conv.outputs[0])) != 1:
            continue
        constants = _constants(builder)
        if not all(name in constants for name in (*conv.inputs[1:], *bn.inputs[1:])):
            continue
        weight = constants[conv.inputs[1]]
        dtype = weight.dtype
        scale, shift, mean, var = (constants[name].astype(np.float64) for name in bn.inputs[1:])
        factor = scale / np.sqrt(var + bn.attrs["epsilon"])
        bias = constants[conv.inputs[2]].astype(np.float64) if len(conv.inputs) > 2 else 0.0
        shape = (-1,) + (1,) * (weight.ndim - 1)
        new_weight = (weight.astype(np.float64) * factor.reshape(shape)).astype(dtype)
        new_bias = ((bias - mean) * factor + shift).astype(dtype)
        names = []
        for array in (new_weight, new_bias):
            name = f"onnx::Conv_{builder.next_constant_number()}"
            inits[name] = array
            names.append(name)
        conv.inputs = [conv.inputs[0], *names]
        builder.nodes.remove(bn)
        # The readers of the normalized value read the convolution's output instead.
        for node in builder.nodes:
            node.inputs = [conv.outputs[0] if n == bn.outputs[0] else n for n in node.inputs]
        if bn.outputs[0] in graph_outputs:
            graph_outputs[graph_outputs.index(bn.outputs[0])] = conv.outputs[0]
    used = {name for node in builder.nodes for name in node.inputs} | set(graph_outputs)
    for name in [name for name in inits if name not in used]:
        del inits[name]
    builder.nodes = [
        node for node in builder.nodes if node.op_type != "Constant" or node.outputs[0] in used
    ]


def _constants(builder: GraphBuilder) -> dict[str, np.ndarray]:
    """The values known before the graph runs: initializers and Constant nodes' outputs."""
    found = dict(builder.initializers)
    for node in builder.nodes:
        if node.op_type == "Constant":
            found[node.outputs[0]] = node.attrs["value"]
    return found


def fold_transposes(builder: GraphBuilder, graph_outputs: list[str]) -> None:
    """A ``Transpose`` of an initializer (a Linear's weight on a 3-d input) becomes a
    transposed initializer ``onnx::<Reader>_<n>``, as PyTorch's constant folding writes it."""
    for node in [n for n in builder.nodes if n.op_type == "Transpose"]:
        source = node.inputs[0]
        if source not in builder.initializers or node.outputs[0] in graph_outputs:
            continue
        readers = _readers(builder.nodes, node.outputs[0])
        if not readers:
            continue
        array = np.ascontiguousarray(np.transpose(builder.initializers[source], node.attrs["perm"]))
        name = f"onnx::{readers[0].op_type}_{builder.next_constant_number()}"
        builder.initializers[name] = array
        builder.nodes.remove(node)
        for reader in readers:
            reader.inputs = [name if n == node.outputs[0] else n for n in reader.inputs]
    used = {name for node in builder.nodes for name in node.inputs} | set(graph_outputs)
    for name in [name for name in builder.initializers if name not in used]:
        del builder.initializers[name]


def deduplicate_initializers(builder: GraphBuilder) -> None:
    """Keep one initializer of each set of equal ones (same dtype, shape and values), as
    PyTorch's exporter does for a model in eval mode: a later one becomes ``Identity`` of the
    first, in nodes ``Identity_0``, ``Identity_1``... at the start of the graph, the last one
    found first (a freshly made BatchNorm's ``running_var`` is its ``weight``, all ones).
    Initializers are looked at in their order in the file (``state_dict`` order)."""
    kept: list[tuple[str, np.ndarray]] = []
    identities: list[OnnxNode] = []
    for name, array in list(builder.initializers.items()):
        same = next(
            (
                first
                for first, other in kept
                if other.dtype == array.dtype
                and other.shape == array.shape
                and np.array_equal(other, array)
            ),
            None,
        )
        if same is None:
            kept.append((name, array))
            continue
        del builder.initializers[name]
        identities.append(OnnxNode("Identity", [same], [name], ""))
    # (each is put first in the graph as it is found, so they end up in reverse order)
    identities.reverse()
    for k, node in enumerate(identities):
        node.name = f"Identity_{k}"
    builder.nodes[:0] = identities
