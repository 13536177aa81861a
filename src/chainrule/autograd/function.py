"""Custom differentiable operations: ``autograd.Function``, as in PyTorch.

Subclass :class:`Function` with a static ``forward`` and ``backward``, then call ``apply``::

    import chainrule as torch

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)        # tensor([1.0000, 2.7183], grad_fn=<ExpBackward>)

How it fits the engine: each ``Function`` subclass gets a node class named ``<Name>Backward``
(:class:`BackwardCFunction`). ``apply`` creates one instance before running ``forward``; that
instance is the ``ctx`` the user's methods receive *and* the ``grad_fn`` of the outputs, exactly
as in PyTorch. The forward runs with grad mode off; afterwards the outputs are attached to the
node (``next_functions`` hold one edge per tensor argument) and what ``save_for_backward`` got is
saved with a version stamp. In backward the engine calls :meth:`BackwardCFunction.apply`, which
turns the engine's gradients (ndarrays, or Tensors under ``create_graph=True``) into Tensors,
calls the user's ``backward`` under the grad mode the engine set (so a backward written with
chainrule ops is differentiable again), checks what it returned like PyTorch does, and hands
one gradient per tensor input back. Broadcast gradients are reduced by the engine.

Forward mode (inside ``forward_ad.dual_level()``, when an argument has a tangent): ``forward``
runs on the primals (tangents suspended: its ops neither read nor make tangents), then the
user's ``jvp(ctx, *tangents)`` gets one tangent per argument (zeros for a floating tensor
without one, None for other arguments) with ``ctx.saved_tensors`` returning what
``save_for_forward`` got, and its results become the outputs' tangents, checked as PyTorch
checks them (count, size, None for non-differentiable outputs, a view of the input's tangent
for an output that is an input with a tangent or a view of one, the input's own tangent
modified in place for an input modified in place). Without ``jvp``, PyTorch's
NotImplementedError before ``forward`` runs. Inputs modified in place (``mark_dirty``) keep
their tangent, which ``jvp`` modified in place; views of them are not updated (in-place
forward mode is still to come).

A node never holds its own outputs (that would be a reference cycle): a saved output is kept as
its array and version counter, and re-attached to the node when ``saved_tensors`` is read.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .._tensor import (
    CUSTOM_FUNCTION_VIEW,
    MULTI_OUTPUT_VIEW,
    SPECIAL_VIEW,
    Tensor,
    check_not_inference_for_saving,
    grad_accumulator,
    gradient_edge,
    set_history,
    wrap,
)
from .forward_grad import DUAL, get_tangent, set_tangent, suspended
from .grad_mode import ANOMALY_STATE, GRAD, MODE, SAVED_HOOKS, mode_get
from .node import RELEASED, SECOND_BACKWARD_MESSAGE, Node, new_node, set_edges

__all__ = [
    "Function",
    "FunctionCtx",
    "BackwardCFunction",
    "FunctionMeta",
    "once_differentiable",
    "InplaceFunction",
]

_F = TypeVar("_F", bound=Callable[..., Any])

_AUTOGRAD_FUNCTION_COUNTER = itertools.count()

DIRTY_NOT_RETURNED_MESSAGE = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function."
)
DIRTY_LEAF_MESSAGE = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_VIEW_OF_LEAF_MESSAGE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
DIRTY_NOT_INPUT_WARNING = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
    "been mutated should be passed to ctx.mark_dirty()."
)
DIRTY_VIEW_MULTI_OUTPUT_MESSAGE = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one doing "
    "the inplace that returns a single Tensor and a second one that does the other operations). "
    "You can ask on the forum https://discuss.pytorch.org/ if you need help to do this change."
)
SAVED_INPUT_RETURNED_MESSAGE = (
    "An input that has been returned as-is as output is being saved for backward. This is not "
    "supported if you override setup_context. You should return and save a view of the input "
    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself."
)
ONCE_DIFFERENTIABLE_MESSAGE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)


# ----------------------------------------------------------------------------------------------
# What a node saved


class _SavedInput:
    """A saved tensor that is not an output of the node (an input, or an intermediate)."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.version = tensor._vc[0]

    def unpack(self, node: BackwardCFunction) -> Tensor:
        t = self.tensor
        if t._vc[0] != self.version:
            from .inplace import modified_error

            raise modified_error(t, node, t._vc[0], self.version)
        return t


class _SavedOutput:
    """A saved output of the node: its array and version counter, not the Tensor (which points
    back at the node)."""

    __slots__ = ("data", "counter", "version", "output_nr")

    def __init__(self, tensor: Tensor, output_nr: int) -> None:
        self.data = tensor._data
        self.counter = tensor._vc
        self.version = tensor._vc[0]
        self.output_nr = output_nr

    def unpack(self, node: BackwardCFunction) -> Tensor:
        counter = self.counter
        if counter[0] != self.version:
            from .inplace import modified_output_error

            raise modified_output_error(self.data, node, counter[0], self.version, counter)
        t = wrap(self.data)
        t._vc = counter
        t._requires_grad = True
        t._grad_node = node
        t._output_nr = self.output_nr
        return t


class _SavedNone:
    __slots__ = ()

    def unpack(self, node: BackwardCFunction) -> None:
        return None


_SAVED_NONE = _SavedNone()


class RawSavedFunctionTensor:
    """``grad_fn._raw_saved_tensors[i]`` of a custom Function: PyTorch's ``SavedTensor`` handle
    on the i-th value given to ``save_for_backward``. ``register_hooks(pack_hook,
    unpack_hook)`` packs the value now and unpacks it whenever it is used, as a
    ``saved_tensors_hooks`` pair would have (once; never on a None)."""

    __slots__ = ("_node", "_index")

    def __init__(self, node: BackwardCFunction, index: int) -> None:
        self._node = node
        self._index = index

    def register_hooks(self, *hooks: Any) -> None:
        """Pack the saved value with ``pack_hook`` now; ``unpack_hook`` gives it back."""
        if len(hooks) != 2 or not all(callable(h) for h in hooks):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types "
                "are supported:\n    1. (self: chainrule._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked "
                f"with: {self!r}, {', '.join(map(repr, hooks))}"
            )
        node = self._node
        saved = node._saved
        if saved is RELEASED or saved is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        entry = saved[self._index]
        if entry is _SAVED_NONE:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor with value None is forbidden"
            )
        if not isinstance(entry, _SavedInput | _SavedOutput):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time."
            )
        from .graph import pack_tensor

        packed = pack_tensor(entry.unpack(node), hooks, isinstance(entry, _SavedOutput))
        node._saved = saved[: self._index] + (packed,) + saved[self._index + 1 :]


# ----------------------------------------------------------------------------------------------
# ctx


class FunctionCtx:
    """The methods ``ctx`` offers inside ``forward`` / ``setup_context`` (PyTorch's names).

    Each call only records what it was given; :meth:`Function.apply` acts on it once the
    forward has returned (as PyTorch does), so the order of the calls does not matter.
    """

    __slots__ = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors (or None) for ``backward``, where ``ctx.saved_tensors`` returns them.

        Saved tensors are version-checked: modifying one in place before backward raises
        PyTorch's "one of the variables needed for gradient computation has been modified by an
        inplace operation" error. They are freed after a backward pass without
        ``retain_graph``.

        Example:
            >>> import chainrule as torch
            >>> class Square(torch.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.save_for_backward(x)
            ...         return x * x
            ...     @staticmethod
            ...     def backward(ctx, grad):
            ...         (x,) = ctx.saved_tensors
            ...         return 2 * x * grad
            >>> x = torch.tensor([3.0], requires_grad=True)
            >>> Square.apply(x).backward()
            >>> x.grad
            tensor([6.])
        """
        self.to_save = tensors  # type: ignore[attr-defined]

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors (or None) for ``jvp``, where ``ctx.saved_tensors`` returns them (and
        only them: what ``save_for_backward`` got is for ``backward``)."""
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should save "
                    "non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors  # type: ignore[attr-defined]

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned as outputs).

        Their version counter is bumped and their history rewritten to this node, as an
        in-place op would.
        """
        self.dirty_tensors = args  # type: ignore[attr-defined]

    def mark_shared_storage(self, *pairs: Any) -> None:
        """Deprecated no-op (tensors sharing storage are tracked automatically)."""
        warnings.warn(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
            "tracked. Note that calls to `set_()` are not tracked",
            FutureWarning,
            stacklevel=2,
        )

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that are not differentiable (they get ``requires_grad=False``;
        ``backward`` still receives a gradient for them: zeros)."""
        self.non_differentiable = args  # type: ignore[attr-defined]

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, the default) or None for outputs that
        got no gradient."""
        self.materialize_grads = value  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------------------------
# The node


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ``ctx``) of one application of a custom :class:`Function`.

    Each ``Function`` subclass ``Exp`` gets its own subclass ``ExpBackward`` of this class
    (``_forward_cls`` points back at ``Exp``). Users may set any attribute on ``ctx``.
    """

    __slots__ = (
        "_n_out",
        "_out_meta",
        "_saved",
        "_tensor_args",
        "needs_input_grad",
        "to_save",
        "dirty_tensors",
        "non_differentiable",
        "materialize_grads",
        "saved_for_forward",
        "__dict__",
    )

    def __call__(self, *grads: Any) -> Any:
        # PyTorch's nodes of custom Functions (Python classes) are not callable, its C++ nodes
        # are (Node.__call__).
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    _forward_cls: type[Function]

    def __repr__(self) -> str:
        return object.__repr__(self)  # <chainrule.autograd.function.ExpBackward object at 0x..>

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, version-checked (in ``jvp``: those given
        to ``save_for_forward``)."""
        if self.saved_for_forward is not None:  # (set only while jvp runs)
            return self.saved_for_forward
        saved = self._saved
        if saved is None:
            return ()
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        tensors = tuple(entry.unpack(self) for entry in saved)
        if self._forward_cls.clear_saved_tensors_on_access:
            self._saved = RELEASED
        return tensors

    @property
    def _raw_saved_tensors(self) -> tuple[RawSavedFunctionTensor, ...]:
        """One ``SavedTensor`` handle per value given to ``save_for_backward`` (None ones
        included), on which ``register_hooks(pack_hook, unpack_hook)`` can be called once."""
        saved = self._saved
        if saved is None:
            return ()
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        return tuple(RawSavedFunctionTensor(self, i) for i in range(len(saved)))

    @property
    def saved_variables(self) -> tuple[Tensor | None, ...]:
        """Deprecated alias of :attr:`saved_tensors`."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors

    def release(self) -> None:
        if self._saved is not None:
            self._saved = RELEASED

    def run_without_grad(self, grads: Any, create_graph: bool, release: bool) -> list[Any]:
        """No incoming gradient: as in PyTorch, ``backward`` still runs, on zeros (or Nones
        after ``set_materialize_grads(False)``)."""
        if grads is None and self._n_out != 1:
            grads = [None] * self._n_out
        return list(self.run_backward(grads, create_graph, release))

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        """Run the user's ``backward`` (called by the engine; see the module docstring)."""
        incoming = (grads,) if self._n_out == 1 else tuple(grads)
        grad_outputs = self._grad_outputs(incoming, create_graph)
        backward = _user_backward(self._forward_cls)
        if self._forward_cls.boxed_grads_call:
            result = backward(self, list(grad_outputs))
        else:
            result = backward(self, *grad_outputs)
        return self._check_result(result, incoming, create_graph)

    def _grad_outputs(self, incoming: tuple, create_graph: bool) -> list[Tensor | None]:
        """The engine's gradients as Tensors; zeros for tensor outputs that got none (unless
        ``set_materialize_grads(False)``), None for non-tensor outputs."""
        result: list[Tensor | None] = []
        for nr, (meta, g) in enumerate(zip(self._out_meta, incoming, strict=True)):
            if g is None:
                if (
                    meta is None
                    or not getattr(self, "materialize_grads", True)
                    or not self._materializes_non_differentiable(nr)
                ):
                    result.append(None)
                    continue
                g = wrap(np.zeros(meta[0], meta[1]))
            elif not create_graph:
                g = wrap(g)
            result.append(g)
        return result

    def _materializes_non_differentiable(self, nr: int) -> bool:
        """False for a non-differentiable output (marked so, or not of a floating type) when
        ``ctx._materialize_non_diff_grads`` is False (PyTorch's switch: its gradient is then
        None, not zeros)."""
        return getattr(self, "_materialize_non_diff_grads", True) or nr not in self.__dict__.get(
            "_non_differentiable_outputs", ()
        )

    def _check_result(self, result: Any, incoming: tuple, create_graph: bool) -> list[Any]:
        """PyTorch's checks of what ``backward`` returned; one gradient per tensor input."""
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self.needs_input_grad)
        if len(result) > n_inputs and all(g is None for g in result[n_inputs:]):
            result = result[:n_inputs]  # extra Nones are allowed
        if len(result) != n_inputs:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_inputs}, got {len(result)})"
            )
        grads: list[Any] = []
        positions = self._tensor_args
        k = 0
        for i, g in enumerate(result):
            if k < len(positions) and positions[k] == i:
                if g is not None and not isinstance(g, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
                if g is None:
                    grads.append(None)
                else:
                    # (A gradient for an input that needs none goes nowhere, the input having
                    # no edge; post hooks on the node see it, as in PyTorch.)
                    grads.append(g if create_graph else self._engine_array(g, incoming))
                k += 1
            elif g is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
        return grads

    def _engine_array(self, g: Tensor, incoming: tuple) -> np.ndarray:
        """The array to hand the engine on the fast path. A user's backward may return a
        tensor it keeps; the engine then sees the array's other references and copies it
        before it becomes a leaf's ``.grad`` (``engine._sole_owner``)."""
        return g._data


# ----------------------------------------------------------------------------------------------
# Function


class FunctionMeta(type):
    """Gives every ``Function`` subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"__slots__": (), "_forward_cls": cls, "__module__": __name__},
        )
        backward_cls._autograd_function_id = next(_AUTOGRAD_FUNCTION_COUNTER)  # type: ignore[attr-defined]
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (``torch.autograd.Function``).

    Override the static methods ``forward`` and ``backward`` (or ``forward`` without ``ctx``
    plus ``setup_context``), then call ``MyFunction.apply(*args)``. ``backward`` receives one
    gradient per output of ``forward`` (None for non-tensor outputs) and returns one gradient per
    argument of ``forward`` (None for non-tensors and inputs that need none).

    Example:
        >>> import chainrule as torch
        >>> class MulConstant(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(tensor, constant):
        ...         return tensor * constant
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         _, ctx.constant = inputs
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         return grad_output * ctx.constant, None
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> y = MulConstant.apply(x, 3.0)
        >>> y
        tensor([3., 6.], grad_fn=<MulConstantBackward>)
        >>> y.sum().backward()
        >>> x.grad
        tensor([3., 3.])
    """

    _backward_cls: type[BackwardCFunction]

    # Clear the saved tensors the first time ``ctx.saved_tensors`` is read.
    clear_saved_tensors_on_access = False
    # Call ``backward(ctx, grads)`` with one list instead of ``backward(ctx, *grads)``.
    boxed_grads_call = False
    # PyTorch's switch for a vmap rule derived from forward/backward (False: write ``vmap``).
    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The computation: ``forward(ctx, *args)``, or ``forward(*args)`` with
        ``setup_context``. Runs with grad mode off."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Fill ``ctx`` from the inputs and the output (when ``forward`` takes no ``ctx``)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients of the inputs from the gradients of the outputs (vector-Jacobian product)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward  # PyTorch's alias: implement one or the other

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """The batching rule of the Function under ``torch.func.vmap`` (``(output, out_dims)``
        from the batched arguments): not written by default."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The tangents of the outputs from those of the inputs (Jacobian-vector product), for
        forward-mode AD: one tangent per input (zeros for a tensor without one, None for other
        arguments), one (or None) per output returned."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, if grad mode is on and a tensor argument requires grad, record
        a ``<Name>Backward`` node as the outputs' ``grad_fn``."""
        uses_setup_context = cls.setup_context is not Function.setup_context
        if uses_setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if kwargs:
            args = _keywords_as_positional(cls.forward, args, kwargs, uses_setup_context)
            kwargs = {}
        tangents = None
        if DUAL[0] and any(get_tangent(a) is not None for a in args):
            if cls.jvp is Function.jvp:
                raise NotImplementedError(
                    "You must implement the jvp function for custom autograd.Function to use "
                    "it with forward mode AD."
                )
            tangents = _tangents_in(args)
        node = _new_node(cls._backward_cls)
        tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        needs = [False] * len(args)
        for i in tensor_positions:
            needs[i] = args[i].requires_grad
        node.needs_input_grad = tuple(needs)
        node._tensor_args = tensor_positions
        executable = bool(mode_get() & GRAD) and any(needs)
        if executable:
            edges = []
            metas = []
            for i in tensor_positions:
                t = args[i]
                if t._requires_grad:
                    edges.append(gradient_edge(t))
                    metas.append((t._data.shape, t._data.dtype))
                else:
                    edges.append((None, 0))
                    metas.append(None)
            set_edges(node, edges)
            node._in_meta = tuple(metas)

        token = MODE.set(MODE.get() & ~GRAD)
        try:
            # (forward runs on primals: its ops neither read nor make tangents, as PyTorch's)
            with suspended():
                if uses_setup_context:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(node, args, output)
                else:
                    output = cls.forward(node, *args, **kwargs)
        finally:
            MODE.reset(token)
        if tangents is None:
            node.saved_for_forward = None
            return _wrap_outputs(node, args, output, executable, uses_setup_context)
        differentiable = _differentiable_positions(output, node.non_differentiable)
        raw = output if isinstance(output, tuple) else (output,)
        # (outputs that are an input with a tangent, or a view of one: PyTorch wants a view
        # as their tangent)
        roots = {id(_root(a)) for a in args if isinstance(a, Tensor) and get_tangent(a) is not None}
        views = [isinstance(o, Tensor) and id(_root(o)) in roots for o in raw]
        dirty_ids = {id(t) for t in node.dirty_tensors or ()}
        # (for each output: the argument position of the input it is or views, or None)
        matching = [_matching_input(o, args, tangents) for o in raw]
        modified = [id(o) in dirty_ids for o in raw]
        results = _wrap_outputs(node, args, output, executable, uses_setup_context)
        _run_jvp(
            cls, node, tangents, results, differentiable, views, _JvpChecks(matching, modified)
        )
        return results


class InplaceFunction(Function):
    """Kept for backward compatibility with old code (use :class:`Function`)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _keywords_as_positional(
    forward: Callable[..., Any], args: tuple, kwargs: dict[str, Any], no_ctx: bool
) -> tuple:
    """PyTorch passes keyword arguments to ``forward`` as positional ones (so they count as
    inputs), filling no gap with a default."""
    params = list(inspect.signature(forward).parameters.values())[0 if no_ctx else 1 :]
    names = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    for key in kwargs:
        if key not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{key}'")
        if names.index(key) < len(args):
            raise TypeError(f"forward() got multiple values for argument '{key}'")
    values = list(args)
    for i in range(len(args), 1 + max(names.index(key) for key in kwargs)):
        if names[i] not in kwargs:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
        values.append(kwargs[names[i]])
    return tuple(values)


# ----------------------------------------------------------------------------------------------
# Forward mode: the user's jvp


def _tangents_in(args: tuple) -> list[Any]:
    """``jvp``'s arguments: each floating or complex tensor input's tangent (zeros when it has
    none, as PyTorch materializes them), None for the other arguments (integer and bool
    tensors among them, which cannot carry one)."""
    from ..ops.creation import zeros_like

    tangents: list[Any] = []
    for a in args:
        if not isinstance(a, Tensor) or a._data.dtype.kind not in "fcV":
            tangents.append(None)
            continue
        t = get_tangent(a)
        tangents.append(t if t is not None else zeros_like(a))
    return tangents


def _root(t: Tensor) -> Tensor:
    """The tensor whose memory ``t`` views (``t`` itself when it is no view)."""
    return t if t._base is None else t._base


def _differentiable_positions(output: Any, non_differentiable: Any) -> list[bool]:
    """For each output of ``forward`` (before wrapping): whether it can carry a tangent (a
    floating tensor not marked non-differentiable)."""
    raw = output if isinstance(output, tuple) else (output,)
    marked = {id(t) for t in non_differentiable or ()}
    return [
        isinstance(o, Tensor) and o._data.dtype.kind in "fcV" and id(o) not in marked for o in raw
    ]


def _matching_input(out: Any, args: tuple, tangents: list[Any]) -> int | None:
    """The position of the first tensor argument with a tangent that ``out`` is, or shares
    memory with (the same root), or None."""
    if not isinstance(out, Tensor):
        return None
    root = _root(out)
    for k, a in enumerate(args):
        if isinstance(a, Tensor) and tangents[k] is not None and _root(a) is root:
            return k
    return None


class _JvpChecks:
    """What :func:`_run_jvp` checks the tangents ``jvp`` returned against (PyTorch's custom
    Function rules): for each output the argument it is or views (:func:`_matching_input`),
    and whether ``forward`` modified it in place (``mark_dirty``)."""

    __slots__ = ("matching", "modified", "versions")

    def __init__(self, matching: list[int | None], modified: list[bool]) -> None:
        self.matching = matching
        self.modified = modified
        self.versions: list[int | None] = []

    def before(self, tangents: list[Any]) -> None:
        """Record the versions of the tangents of the inputs modified in place."""
        self.versions = [
            tangents[k]._vc[0] if m and k is not None else None
            for m, k in zip(self.modified, self.matching, strict=True)
        ]

    def check(self, i: int, t: Tensor, tangents: list[Any]) -> None:
        """PyTorch's errors for output ``i``'s tangent ``t``: an input modified in place needs
        its own tangent modified in place and returned as-is; a view of an input needs a view
        of that input's tangent (of the same base when that tangent is itself a view)."""
        k = self.matching[i]
        if k is None:
            return
        given = tangents[k]
        if self.modified[i]:
            if t._vc[0] == self.versions[i]:
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp "
                    "function must modify the corresponding gradient inplace."
                )
            if t is not given:
                raise RuntimeError(
                    "An inplace custom Function is not returning the forward mode gradients "
                    "as-is. If the forward is modifying an input inplace, then the jvp function "
                    "must modify the gradient inplace and return it as-is."
                )
            return
        if t._base is None:
            raise RuntimeError(
                "A custom Function's forward is returning a view (or an input as-is) but the "
                "jvp is not returning a view."
            )
        if given._base is not None:  # (a view's tangent: PyTorch's forward view of the input)
            if _root(t) is not _root(given):
                raise RuntimeError(
                    "A custom Function is returning a view but the jvp is not returning a view "
                    "of the same base as the given grad input."
                )
        elif _root(t) is not _root(given):
            raise RuntimeError(
                "A custom Function is returning a view but the jvp is not returning a view of "
                "the given grad input."
            )


def _run_jvp(
    cls: type[Function],
    node: BackwardCFunction,
    tangents: list[Any],
    results: Any,
    differentiable: list[bool],
    views: list[bool],
    checks: _JvpChecks,
) -> None:
    """Call ``cls.jvp(ctx, *tangents)`` (``ctx.saved_tensors``: what ``save_for_forward`` got)
    and give the outputs its tangents, with PyTorch's checks and errors."""
    node.saved_for_forward = tuple(node.saved_for_forward or ())
    checks.before(tangents)
    try:
        with suspended():
            returned = cls.jvp(node, *tangents)
    finally:
        node.saved_for_forward = None
    outputs = results if isinstance(results, tuple) else (results,)
    given = returned if isinstance(returned, tuple) else (returned,)
    if len(given) != len(outputs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outputs)} but got {len(given)})"
        )
    for i, (out, t) in enumerate(zip(outputs, given, strict=True)):
        if t is not None and not isinstance(t, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(t).__name__}) for grad output {i}."
            )
        if not differentiable[i]:
            if t is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the "
                    "corresponding forward output is not a differentiable Tensor.You should "
                    "return None at that position instead."
                )
            continue
        if t is None:
            raise RuntimeError(
                "(new_grad_base.is_floating_point() || new_grad_base.is_complex()) && "
                "(self_base.is_floating_point() || self_base.is_complex()) INTERNAL ASSERT "
                'FAILED at "/__w/pytorch/pytorch/torch/csrc/autograd/autograd_meta.cpp":159, '
                "please report a bug to PyTorch. Expected both tensor and its forward grad to "
                "be floating point or complex"
            )
        if t._data.shape != out._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(out._data.shape)} while the given forward gradient is of size "
                f"{list(t._data.shape)}."
            )
        if views[i]:
            checks.check(i, t, tangents)
        set_tangent(out, t)


def _new_node(node_cls: type[BackwardCFunction]) -> BackwardCFunction:
    node = new_node(node_cls)
    node._n_out = 1
    node._out_meta = ()
    node._saved = None
    node._tensor_args = ()
    node.needs_input_grad = ()
    node.to_save = None
    node.dirty_tensors = None
    node.non_differentiable = None
    node.saved_for_forward = None
    return node


def _user_backward(cls: type[Function]) -> Callable[..., Any]:
    backward = cls.backward
    vjp = cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


# ----------------------------------------------------------------------------------------------
# After forward: attach the outputs, save what was asked


def _wrap_outputs(
    node: BackwardCFunction, args: tuple, output: Any, executable: bool, uses_setup_context: bool
) -> Any:
    """Give the outputs their history, following PyTorch's rules for inputs returned as-is,
    inputs modified in place and non-differentiable outputs; then save for backward."""
    is_tuple = isinstance(output, tuple)
    raw = output if is_tuple else (output,)
    node._n_out = len(raw)
    input_ids = {id(args[i]) for i in node._tensor_args}
    dirty = node.dirty_tensors or ()
    dirty_ids = {id(t) for t in dirty}
    non_diff_ids = {id(t) for t in node.non_differentiable or ()}
    saved_ids = {id(t) for t in node.to_save or () if isinstance(t, Tensor)}
    output_ids = {id(o) for o in raw if isinstance(o, Tensor)}
    if any(id(t) not in output_ids for t in dirty):
        raise RuntimeError(DIRTY_NOT_RETURNED_MESSAGE)
    if dirty:
        from ..ops.inplace import bump_version

        for t in {id(t): t for t in dirty}.values():
            bump_version(t)

    results: list[Any] = []
    out_meta: list[tuple | None] = []
    views: list[Tensor] = []
    n_differentiable = 0
    for nr, out in enumerate(raw):
        if not isinstance(out, Tensor):
            results.append(out)
            out_meta.append(None)
            continue
        out_meta.append((out._data.shape, out._data.dtype))
        is_input = id(out) in input_ids
        is_modified = id(out) in dirty_ids
        differentiable = (
            executable and id(out) not in non_diff_ids and out._data.dtype.kind in "fcV"
        )
        if not differentiable:
            node.__dict__.setdefault("_non_differentiable_outputs", set()).add(nr)
            out = _non_differentiable_output(out, is_input, is_modified)
        elif is_modified:
            _rebase_modified(node, out, nr, is_input, len(raw))
        else:
            if is_input:
                if uses_setup_context and id(out) in saved_ids:
                    raise RuntimeError(SAVED_INPUT_RETURNED_MESSAGE)
                out = _view_of_self(out)
            out._grad_node = node
            out._output_nr = nr
            out._requires_grad = True
        if out._base is not None and not (is_input and is_modified):
            _mark_custom_function_view(out)
            views.append(out)
        n_differentiable += differentiable
        results.append(out)
    if n_differentiable > 1:
        # As PyTorch: with several differentiable outputs, the views among the outputs are
        # those of a function returning multiple views (refused in place with that message).
        for view in views:
            view._view_meta = MULTI_OUTPUT_VIEW
    node._out_meta = tuple(out_meta)
    node.dirty_tensors = None
    node.non_differentiable = None
    if executable:
        _save_for_backward(node, results)
        if ANOMALY_STATE.enabled:
            from .anomaly import record_trace

            record_trace(node)
    node.to_save = None
    return tuple(results) if is_tuple else results[0]


def _mark_custom_function_view(out: Tensor) -> None:
    """An output that is a view (made in forward, or an input returned as-is): PyTorch forbids
    modifying it in place, which would bypass the Function's backward."""
    out._view_meta = CUSTOM_FUNCTION_VIEW
    out._view_src_fn = SPECIAL_VIEW
    out._view_version = out._vc[0]


def _non_differentiable_output(out: Tensor, is_input: bool, is_modified: bool) -> Tensor:
    """An output that gets no history (grad mode off, marked non-differentiable, integral)."""
    if not out._requires_grad:
        if is_input and not is_modified:
            return _view_of_self(out)  # a new tensor object, never the input itself
        return out
    if is_input or is_modified:
        return out.detach()  # an alias; the input keeps its own history
    if out._base is not None:
        # A view (of an input, made in forward under no_grad) is left as it is, as PyTorch
        # leaves it: like ``y = x[:]`` under no_grad, it requires grad without a grad_fn.
        return out
    out._grad_node = None  # made inside forward under enable_grad: cut in place, as PyTorch does
    out._output_nr = 0
    out._requires_grad = False
    return out


def _rebase_modified(
    node: BackwardCFunction, out: Tensor, nr: int, is_input: bool, n_outputs: int
) -> None:
    """``ctx.mark_dirty(out)``: ``out`` itself now has ``node`` as its history."""
    from ..ops.inplace import _rebase_view

    base = out._base
    if base is None and out._grad_node is None and out._requires_grad:
        raise RuntimeError(DIRTY_LEAF_MESSAGE)
    if base is not None and base._grad_node is None and base._requires_grad:
        raise RuntimeError(DIRTY_VIEW_OF_LEAF_MESSAGE)
    if not is_input:
        warnings.warn(DIRTY_NOT_INPUT_WARNING, UserWarning, stacklevel=4)
    if base is not None:
        if n_outputs > 1:
            raise RuntimeError(DIRTY_VIEW_MULTI_OUTPUT_MESSAGE)
        if out._view_meta is not None:
            from ..ops.inplace import view_inplace_error

            raise view_inplace_error(out, indirect=False)
        # As PyTorch's CopySlices: the view must be the node's first tensor input.
        _rebase_view(out, base, node)
        return
    set_history(out, node, nr)


def _view_of_self(t: Tensor) -> Tensor:
    token = MODE.set(MODE.get() & ~GRAD)
    try:
        return t.view_as(t)
    finally:
        MODE.reset(token)


def _save_for_backward(node: BackwardCFunction, outputs: list[Any]) -> None:
    to_save = node.to_save
    if not to_save:
        return
    for i, t in enumerate(to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(t).__name__}"
            )
        check_not_inference_for_saving(t)
    own_outputs = {
        id(o): nr for nr, o in enumerate(outputs) if isinstance(o, Tensor) and o._grad_node is node
    }
    hooks = None
    if mode_get() & SAVED_HOOKS:
        from .graph import current_saved_tensors_hooks, pack_tensor

        hooks = current_saved_tensors_hooks()
    entries: list[Any] = []
    for t in to_save:
        if t is None:
            entries.append(_SAVED_NONE)
        elif hooks is not None:
            # (a graph.SavedTensor: unpacking it gives the tensor its history back)
            entries.append(pack_tensor(t, hooks, id(t) in own_outputs))
        elif id(t) in own_outputs:
            entries.append(_SavedOutput(t, own_outputs[id(t)]))
        else:
            entries.append(_SavedInput(t))
    node._saved = tuple(entries)


# ----------------------------------------------------------------------------------------------
# once_differentiable


class Error(Node):
    """A node whose backward raises (PyTorch's ``DelayedError`` makes one, named ``Error``):
    the history ``once_differentiable`` gives its results, so differentiating them again fails
    with PyTorch's message. Not an exception class."""

    __slots__ = ("message", "_n_out")

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        raise RuntimeError(self.message)

    def run_without_grad(self, grads: Any, create_graph: bool, release: bool) -> tuple[Any, ...]:
        """Raises, with or without a gradient (as PyTorch's ``Error`` node)."""
        raise RuntimeError(self.message)


def _delayed_error(outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    node = new_node(Error)
    node.message = ONCE_DIFFERENTIABLE_MESSAGE
    node._n_out = len(outputs)
    edges = []
    metas = []
    results = []
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            edges.append((None, 0))
            metas.append(None)
            results.append(out)
            continue
        # As PyTorch: the node's inputs are fresh leaves that require grad, so its outputs
        # require grad whatever produced them.
        leaf = wrap(out._data)
        leaf._requires_grad = True
        edges.append((grad_accumulator(leaf), 0))
        metas.append((out._data.shape, out._data.dtype))
        alias = wrap(out._data)
        alias._requires_grad = True
        alias._grad_node = node
        alias._output_nr = nr
        results.append(alias)
    set_edges(node, edges)
    node._in_meta = tuple(metas)
    return tuple(results)


def once_differentiable(fn: _F) -> _F:
    """Decorate a ``backward`` that is not differentiable itself (e.g. written with NumPy).

    It runs under ``no_grad``; when the backward pass is being recorded
    (``create_graph=True``) and a gradient it received requires grad, its results get a node
    that raises "trying to differentiate twice a function that was marked with
    @once_differentiable" if differentiated.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd.function import once_differentiable
        >>> class Twice(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 2
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, grad):
        ...         return grad * 2
        >>> x = torch.tensor([1.0], requires_grad=True)
        >>> Twice.apply(x).backward()
        >>> x.grad
        tensor([2.])
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        token = MODE.set(MODE.get() & ~GRAD)
        try:
            outputs = fn(ctx, *args, **kwargs)
        finally:
            MODE.reset(token)
        if not mode_get() & GRAD:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        wrapped = _delayed_error(outputs if isinstance(outputs, tuple) else (outputs,))
        return wrapped if len(wrapped) != 1 else wrapped[0]

    return wrapper  # type: ignore[return-value]
