"""``chainrule.onnx.export``: one forward call recorded (``_capture``), written as an ONNX model
with the ``onnx`` package (the ``onnx`` extra: ``pip install 'chainrule[onnx]'``)."""

from __future__ import annotations

import enum
import importlib.metadata
import inspect
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import IO, Any

import numpy as np

from .._tensor import Tensor
from ._builder import GraphBuilder, OnnxNode
from ._capture import trace
from ._folding import deduplicate_initializers, fold_batch_norms, fold_transposes
from .errors import OnnxExporterError

__all__ = ["export", "is_in_onnx_export", "TrainingMode", "DEFAULT_OPSET", "MIN_OPSET", "MAX_OPSET"]

#: PyTorch's TorchScript-based exporter: opset 20 by default, 23 at most.
DEFAULT_OPSET = 20
MAX_OPSET = 23
#: The oldest opset chainrule writes (PyTorch's goes down to 7: older opsets' Softmax, Squeeze
#: and reductions differ and are not written here).
MIN_OPSET = 13


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in (``torch.onnx.TrainingMode``): EVAL (the default: the
    model runs in eval mode, restored after), PRESERVE (as it is), TRAINING (in train mode; a
    layer whose training behaviour has no ONNX form here, dropout or batch statistics, is an
    ``UnsupportedOperatorError``)."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


# One entry per export running (in any thread): what is_in_onnx_export reads.
_EXPORTING: list[bool] = []


def is_in_onnx_export() -> bool:
    """True while :func:`export` runs the model (``torch.onnx.is_in_onnx_export``): a forward
    may take another path then."""
    return bool(_EXPORTING)


def _version() -> str:
    try:
        return importlib.metadata.version("chainrule")
    except importlib.metadata.PackageNotFoundError:
        return ""


def _import_onnx() -> Any:
    try:
        import onnx
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "chainrule.onnx.export needs the onnx package: pip install 'chainrule[onnx]'",
            name="onnx",
        ) from error
    return onnx


def _default_input_names(model: Any, count: int) -> list[str]:
    """The names of ``forward``'s parameters (``input_<i>`` past them)."""
    names: list[str] = []
    try:
        forward = model.forward if hasattr(model, "forward") else model
        for parameter in inspect.signature(forward).parameters.values():
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                names.append(parameter.name)
    except (TypeError, ValueError):
        pass
    return [names[i] if i < len(names) else f"input_{i}" for i in range(count)]


def _dynamic_axes(
    dynamic_axes: Mapping[str, Any] | None, valid_names: list[str]
) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` as ``{name: {axis: dim name}}`` (a list of axes gets PyTorch's automatic
    names ``<name>_dynamic_axes_<k>``), with PyTorch's warnings."""
    result: dict[str, dict[int, str]] = {}
    for key, value in (dynamic_axes or {}).items():
        if key not in valid_names:
            warnings.warn(
                f"Provided key {key} for dynamic axes is not a valid input/output name",
                stacklevel=3,
            )
        if isinstance(value, Mapping):
            result[key] = {int(axis): str(dim) for axis, dim in value.items()}
            continue
        warnings.warn(
            "No names were found for specified dynamic axes of provided input."
            f"Automatically generated names will be applied to each dynamic axes of input {key}",
            stacklevel=3,
        )
        axes: dict[int, str] = {}
        for k, axis in enumerate(value):
            if not isinstance(axis, int):
                raise ValueError("The type of axis index is expected to be an integer")
            axes[axis] = f"{key}_dynamic_axes_{k + 1}"
        result[key] = axes
    return result


def _value_info(onnx: Any, name: str, dtype: np.dtype, dims: Sequence[int | str | None]) -> Any:
    elem_type = onnx.helper.np_dtype_to_tensor_dtype(dtype)
    return onnx.helper.make_tensor_value_info(name, elem_type, list(dims))


def _dims(shape: tuple[int, ...], axes: dict[int, str]) -> list[int | str]:
    rank = len(shape)
    named = {axis + rank if axis < 0 else axis: dim for axis, dim in axes.items()}
    return [named.get(i, size) for i, size in enumerate(shape)]


def _node_proto(onnx: Any, node: OnnxNode) -> Any:
    attrs = {
        key: onnx.numpy_helper.from_array(value) if isinstance(value, np.ndarray) else value
        for key, value in node.attrs.items()
    }
    return onnx.helper.make_node(node.op_type, node.inputs, node.outputs, name=node.name, **attrs)


def _rename_outputs(
    builder: GraphBuilder, values: list[str], names: list[str], inputs: set[str]
) -> None:
    """Make the graph's outputs the values ``values`` under ``names``: a node output is renamed
    (everywhere it is read), an input, initializer or value output twice goes through an
    Identity node."""
    renamed: dict[str, str] = {}
    for value, name in zip(values, names, strict=True):
        producer = next((n for n in builder.nodes if value in n.outputs), None)
        if value == name and value not in renamed:
            renamed[value] = name
            continue
        if (
            producer is None
            or value in renamed
            or value in inputs
            or producer.op_type == "Constant"
        ):
            source = renamed.get(value, value)
            builder.nodes.append(
                OnnxNode("Identity", [source], [name], builder.node_name("Identity"))
            )
        else:
            renamed[value] = name
            producer.outputs = [name if out == value else out for out in producer.outputs]
            for node in builder.nodes:
                node.inputs = [name if n == value else n for n in node.inputs]
        builder.shapes[name] = builder.shapes[value]
        builder.dtypes[name] = builder.dtypes[value]


def export(
    model: Any,
    args: tuple[Any, ...] | Tensor = (),
    f: str | os.PathLike[str] | IO[bytes] | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    verbose: bool | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamo: bool = False,
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    dynamic_axes: Mapping[str, Mapping[int, str]] | Mapping[str, Sequence[int]] | None = None,
    training: TrainingMode = TrainingMode.EVAL,
    do_constant_folding: bool = True,
) -> None:
    """Write ``model`` as an ONNX file: the operations of one call ``model(*args, **kwargs)``,
    as ``torch.onnx.export(..., dynamo=False)`` (PyTorch's TorchScript-based exporter) writes
    them.

    ``f``: a path or a binary file-like object. ``input_names``/``output_names``: the graph's
    inputs (the tensors among ``args``) and outputs (default: ``forward``'s parameter names,
    and ``output``/``output_<i>``). Parameters and buffers are initializers named as in the
    ``state_dict`` (``fc1.weight``); with ``export_params=False`` they are graph inputs
    instead. ``dynamic_axes``: ``{"x": {0: "batch"}}`` or ``{"x": [0]}`` make those dimensions
    symbolic. ``opset_version``: 13 to 23 (default 20). ``do_constant_folding`` folds an
    inference BatchNorm into the convolution before it. The model runs in eval mode (restored
    after), as PyTorch's default ``training=TrainingMode.EVAL``. An operation with no ONNX
    form raises :class:`~chainrule.onnx.errors.UnsupportedOperatorError` naming it.

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> chainrule.onnx.export(model, (chainrule.randn(1, 4),), "mlp.onnx",
        ...                       input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    """
    onnx = _import_onnx()
    if not hasattr(model, "modules"):  # (a plain function: PyTorch's exporter fails so)
        raise AttributeError(f"'{type(model).__name__}' object has no attribute 'modules'")
    del dynamo  # (what PyTorch's dynamo=False writes is what chainrule writes)
    if f is None:
        raise ValueError("f must be a path or a binary file-like object")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset > MAX_OPSET:
        raise RuntimeError(f"Unsupported onnx_opset_version: {opset}")
    if opset < MIN_OPSET:
        raise OnnxExporterError(
            f"chainrule.onnx writes opset versions {MIN_OPSET} to {MAX_OPSET}, not {opset}"
        )
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    call_kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):  # (PyTorch: a trailing dict holds the kwargs)
        call_kwargs.update(args[-1])
        args = args[:-1]
    count = sum(isinstance(a, Tensor) for a in args)
    defaults = _default_input_names(model, count)
    given = list(input_names or [])
    in_names = [given[i] if i < len(given) else defaults[i] for i in range(count)]

    builder = GraphBuilder(opset)
    named: list[tuple[str, Tensor]] = []
    if hasattr(model, "state_dict"):
        named = list(model.state_dict(keep_vars=True).items())
        listed = {id(tensor) for _, tensor in named}
        for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
            if id(tensor) not in listed:  # (a buffer left out of the state_dict)
                named.append((name, tensor))
    for name, tensor in named:
        builder.add_parameter(name, tensor)
    modes = [(module, module.training) for module in model.modules()]
    mode = TrainingMode(training)
    if mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    _EXPORTING.append(True)
    try:
        outputs = trace(builder, model, args, call_kwargs, in_names)
    finally:
        _EXPORTING.pop()
        for module, was_training in modes:  # (each as it was: a frozen BatchNorm stays so)
            module.training = was_training

    values = [builder.value(out, "Identity") for out in outputs]
    # Initializers in state_dict order (PyTorch's graph inputs), not in the order of first use.
    rank = {name: i for i, (name, _) in enumerate(named)}
    builder.initializers = dict(
        sorted(builder.initializers.items(), key=lambda item: rank.get(item[0], len(rank)))
    )
    if do_constant_folding and export_params:
        fold_batch_norms(builder, values)
        fold_transposes(builder, values)
    if not keep_initializers_as_inputs:
        deduplicate_initializers(builder)
    renamed = builder.renumber()
    values = [renamed.get(value, value) for value in values]
    given_out = list(output_names or [])
    default_out = ["output"] if len(values) == 1 else [f"output_{i}" for i in range(len(values))]
    out_names = [given_out[i] if i < len(given_out) else default_out[i] for i in range(len(values))]
    _rename_outputs(builder, values, out_names, set(in_names) | set(builder.initializers))

    axes = _dynamic_axes(dynamic_axes, in_names + out_names)
    graph_inputs = [
        _value_info(
            onnx, name, builder.dtypes[name], _dims(builder.shapes[name], axes.get(name, {}))
        )
        for name in in_names
    ]
    initializers = []
    for name, array in builder.initializers.items():
        if export_params:
            initializers.append(onnx.numpy_helper.from_array(array, name))
        if keep_initializers_as_inputs or not export_params:
            graph_inputs.append(_value_info(onnx, name, array.dtype, array.shape))
    graph_outputs = []
    dynamic = any(axes.get(name) for name in in_names)
    for name in out_names:
        dims: list[int | str | None] = list(_dims(builder.shapes[name], axes.get(name, {})))
        if dynamic:  # (sizes that follow a symbolic input size: left to shape inference)
            dims = [d if isinstance(d, str) else None for d in dims]
        graph_outputs.append(_value_info(onnx, name, builder.dtypes[name], dims))
    graph = onnx.helper.make_graph(
        [_node_proto(onnx, node) for node in builder.nodes],
        "main_graph",
        graph_inputs,
        graph_outputs,
        initializers,
    )
    proto = onnx.helper.make_model(
        graph,
        opset_imports=[onnx.helper.make_opsetid("", opset)],
        producer_name="chainrule",
        producer_version=_version(),
    )
    # The IR version of the onnx release that brought the opset, as PyTorch writes it.
    proto.ir_version = min(row[1] for row in onnx.helper.VERSION_TABLE if row[2] == opset)
    if dynamic:
        _infer_output_shapes(onnx, proto)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    data = proto.SerializeToString()
    if isinstance(f, str | os.PathLike):
        with open(f, "wb") as file:
            file.write(data)
    else:
        f.write(data)


def _infer_output_shapes(onnx: Any, proto: Any) -> None:
    """Fill the outputs' dimensions left open with what ONNX shape inference finds (a size
    that follows a symbolic input size is that symbol)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception:  # noqa: BLE001 - the outputs keep their open dimensions then
        return
    found = {v.name: v for v in inferred.graph.output}
    for output in proto.graph.output:
        source = found.get(output.name)
        if source is None:
            continue
        dims = output.type.tensor_type.shape.dim
        new_dims = source.type.tensor_type.shape.dim
        if len(new_dims) != len(dims):
            continue
        for dim, new in zip(dims, new_dims, strict=True):
            if not dim.dim_param and not dim.HasField("dim_value"):
                if new.HasField("dim_value"):
                    dim.dim_value = new.dim_value
                elif new.dim_param:
                    dim.dim_param = new.dim_param
