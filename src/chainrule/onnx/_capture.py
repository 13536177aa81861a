"""Recording one forward call of a model as ONNX nodes.

Two listeners run while the model is called once on the example arguments:

* forward hooks on every submodule keep the scope (the module path PyTorch writes into node
  names) and export the layers listed in ``_modules.MODULES`` whole, from their attributes;
* a ``TorchFunctionMode`` sees every public function and Tensor method called outside those
  layers and turns each into nodes with the handler ``HANDLERS`` has for its name.

Values are followed by identity: the inputs, the parameters and each recorded result are
named. A tensor the graph reads that is none of them is a constant, unless it has a
``grad_fn``: then it was computed from the inputs or parameters by a call the mode did not
see, and the export fails naming that operation rather than baking a value into the file (the
inputs are traced as tensors that require grad, so everything computed from them has one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._overrides import TorchFunctionMode
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ._builder import GraphBuilder, operator_of
from ._functions import FUNCTIONS, Handler
from ._layers import LAYER_FUNCTIONS
from ._modules import MODULES
from .errors import UnsupportedOperatorError

__all__ = ["trace", "function_name", "HANDLERS"]

#: The handler of each function name: element-wise, shape and reduction calls, and layers.
HANDLERS: dict[str, Handler] = {**FUNCTIONS, **LAYER_FUNCTIONS}


def function_name(func: Callable[..., Any]) -> str:
    """The name a handler is registered under (``__add__`` -> ``add``)."""
    name = getattr(func, "__name__", type(func).__name__)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    return name


def _flat(values: Any) -> list[Any]:
    found: list[Any] = []
    for value in values:
        if isinstance(value, tuple | list):
            found.extend(value)
        else:
            found.append(value)
    return found


def _flat_outputs(result: Any) -> list[Any]:
    """The leaves of a forward's result, in order: tuples, lists and dict values opened (an
    explicit stack, no recursion)."""
    found: list[Any] = []
    stack: list[Any] = [result]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        else:
            found.append(item)
    return found


class _Recorder(TorchFunctionMode):
    """Turns each public call on traced tensors into ONNX nodes (outside whole layers)."""

    def __init__(self, builder: GraphBuilder) -> None:
        super().__init__()
        self.builder = builder
        self.inside_layer = 0

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        builder = self.builder
        # (read before the call: an in-place op rebinds its input)
        reads = [v for v in _flat((*args, *kwargs.values())) if isinstance(v, Tensor)]
        result = func(*args, **kwargs)
        if self.inside_layer:
            return result
        if not any(builder.is_traced(v) for v in reads):
            for value in reads:  # (computed from the inputs where the recorder did not see it)
                _check_constant(builder, value)
            return result
        outputs = result if isinstance(result, tuple | list) else (result,)
        if not any(isinstance(out, Tensor) for out in outputs):
            return result  # (x.dim(), x.size(): Python values, baked in as PyTorch's tracer does)
        name = function_name(func)
        handler = HANDLERS.get(name)
        if handler is None or not isinstance(result, Tensor):
            raise UnsupportedOperatorError(f"aten::{name}", builder.opset, None)
        self.inside_layer += 1  # (what the handler calls on tensors is not the model's)
        try:
            handler(builder, args, kwargs, result)
        finally:
            self.inside_layer -= 1
        return result


def _check_constant(builder: GraphBuilder, tensor: Tensor) -> None:
    if tensor.grad_fn is not None and not builder.is_traced(tensor):
        raise UnsupportedOperatorError(operator_of(tensor), builder.opset, None)


def trace(
    builder: GraphBuilder, model: Any, args: tuple, kwargs: dict[str, Any], input_names: list[str]
) -> list[Tensor]:
    """Run ``model(*args, **kwargs)`` once, recording it into ``builder``; the output tensors.
    The tensors among ``args`` are the graph inputs, called ``input_names``."""
    traced_args = []
    names = iter(input_names)
    for arg in args:
        if isinstance(arg, Tensor):
            copy = arg.detach()
            if copy.dtype.is_floating_point:
                copy = copy.requires_grad_().clone()
            builder.bind(copy, next(names))
            traced_args.append(copy)
        else:
            traced_args.append(arg)
    recorder = _Recorder(builder)
    handles = []
    modules = model.named_modules() if hasattr(model, "named_modules") else []
    whole: list[bool] = []

    calls: dict[str, int] = {}  # (a module called again is scope ``fc_1``, ``fc_2``...)

    def before(qualified: str) -> Callable[..., None]:
        def hook(module: Any, inputs: tuple) -> None:
            if qualified:
                count = calls.get(qualified, 0)
                calls[qualified] = count + 1
                builder.scope.append(qualified if count == 0 else f"{qualified}_{count}")
            is_whole = type(module) in MODULES and not recorder.inside_layer
            whole.append(is_whole)
            if is_whole:
                for value in inputs:
                    if isinstance(value, Tensor):
                        _check_constant(builder, value)
                recorder.inside_layer += 1

        return hook

    def after(qualified: str) -> Callable[..., None]:
        def hook(module: Any, inputs: tuple, output: Any) -> None:
            if whole.pop():
                try:  # (still inside: what the handler calls is not the model's)
                    MODULES[type(module)](builder, module, inputs, output)
                finally:
                    recorder.inside_layer -= 1
            if qualified:
                builder.scope.pop()

        return hook

    for qualified, module in modules:
        handles.append(module.register_forward_pre_hook(before(qualified)))
        handles.append(module.register_forward_hook(after(qualified)))
    try:
        with enable_grad(), recorder:
            result = model(*traced_args, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    flat = [out for out in _flat_outputs(result) if out is not None]  # (None: dropped)
    for i, out in enumerate(flat):
        if isinstance(out, Tensor):
            _check_constant(builder, out)
        else:  # (a number: PyTorch's tracer refuses it; a tensor is a constant output)
            raise RuntimeError(
                f"output {i} of traced region did not have observable data dependence with "
                "trace inputs; this probably indicates your program cannot be understood by "
                "the tracer."
            )
    return flat
