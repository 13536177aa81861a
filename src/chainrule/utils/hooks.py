"""``chainrule.utils.hooks``: hook handles and the machinery of module backward hooks, as
PyTorch's ``torch.utils.hooks``.

:class:`BackwardHook` is what ``nn.Module.__call__`` builds when a module has full backward
hooks or backward pre-hooks: the module's tensor inputs, and then its tensor outputs, pass
through the identity Function ``BackwardHookFunction`` (one ``BackwardHookFunctionBackward``
node each time). A post hook on the outputs' node captures ``grad_output`` (the backward
pre-hooks run there and may replace it); a post hook on the inputs' node runs once the
gradients of all the inputs are computed, and calls the full backward hooks with
``grad_input`` and the captured ``grad_output`` (a tuple they return replaces ``grad_input``).
When no input requires grad, the full hooks are called at the outputs' node instead, with a
warning, and ``grad_input`` all None.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from types import CodeType, FrameType
from typing import Any

from .._frames import is_ours
from .._tensor import Tensor
from ..autograd.engine import tensor_backward
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node, RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]

_F = Callable[..., Any]

NO_INPUT_REQUIRES_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


def unserializable_hook(f: _F) -> _F:
    """Mark a function as a hook that is not serialized (no warning when saving a tensor that
    has it)."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f


def warn_if_has_hooks(tensor: Tensor) -> None:
    """Warn, for each of ``tensor``'s hooks not marked :func:`unserializable_hook`, that
    saving the tensor will not save the hook."""
    found: list[Any] = []
    if tensor._grad_node is not None:
        node_hooks = tensor._grad_node._hooks
        if node_hooks is not None:
            found += [fn for nr, fn in node_hooks.tensor_pre.values() if nr == tensor._output_nr]
    elif tensor._hooks is not None:
        found += list(tensor._hooks.pre.values())
    for hook in found:
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                "expected, you can decorate the function with "
                "@chainrule.utils.hooks.unserializable_hook to suppress this warning",
                stacklevel=2,
            )


def _engine_caller_stacklevel() -> int:
    """The ``stacklevel`` PyTorch's hook warning has (5, from a hook the C++ engine calls): the
    user's ``t.backward()`` line, or the caller of the user's function that called
    ``autograd.backward`` / ``autograd.grad`` (one Python frame fewer lies between those and
    the engine)."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    entry: CodeType | None = None
    while frame is not None and is_ours(frame):
        entry = frame.f_code
        frame = frame.f_back
        level += 1
    if entry is not tensor_backward.__code__:
        level += 1
    return level


class BackwardHook:
    """Implements a module's full backward hooks and backward pre-hooks for one call.

    ``setup_input_hook(args)`` passes the tensors of ``args`` through ``BackwardHookFunction``
    and hooks its node; ``setup_output_hook(result)`` does the same for the module's result.
    Non-tensor arguments and outputs are None in ``grad_input`` / ``grad_output``.
    """

    def __init__(self, module: Any, user_hooks: list[_F], user_pre_hooks: list[_F]) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module

        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    def _pack_with_none(self, indices: Sequence[int], values: Sequence[Any],
                        size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for idx, val in zip(indices, values, strict=True):
            res[idx] = val
        return tuple(res)

    def _unpack_none(self, indices: Sequence[int], values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn: Node) -> None:
        def hook(grad_input: tuple[Any, ...], _: tuple[Any, ...]) -> tuple[Any, ...] | None:
            if self.grad_outputs is None:
                # The gradient reached the module's inputs without passing through its
                # outputs (e.g. in a double backward).
                return None
            if self.input_tensors_index is None:
                raise AssertionError("input_tensors_index should not be None in the input hook")
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn: Callable[[Node], None],
                          args: Any) -> tuple[Any, list[int] | None]:
        """Pass the tensors of ``args`` through ``BackwardHookFunction`` and call ``fn`` on its
        node; ``args`` with the results in place of the tensors, and the tensors' positions.
        Nothing is done (positions None) unless grad mode is on and a tensor requires grad."""
        from ..nn.modules._functions import BackwardHookFunction

        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad

        if not (requires_grad and is_grad_enabled()):
            return args, None

        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError(
                "Cannot set Module backward hook for a Module with no input Tensors."
            )
        grad_fn = next((t.grad_fn for t in new_tensors if t.grad_fn is not None
                        and t.grad_fn.name() == "BackwardHookFunctionBackward"), None)
        if grad_fn is None:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample "
                "to reproduce this."
            )
        fn(grad_fn)

        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors, strict=True):
            arg_list[idx] = val
        if type(args) is tuple:
            out: Any = tuple(arg_list)
        else:
            out = type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The module's positional arguments, with its tensors passed through the hooked node."""
        def fn(grad_fn: Node) -> None:
            self._set_user_hook(grad_fn)

        res, input_idx = self._apply_on_tensors(fn, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args: Any) -> Any:
        """The module's result (a tensor or a tuple), with its tensors passed through the
        hooked node."""
        def fn(grad_fn: Node) -> None:
            def hook(_: tuple[Any, ...], grad_output: tuple[Any, ...]) -> tuple[Any, ...] | None:
                if self.output_tensors_index is None:
                    raise AssertionError(
                        "output_tensors_index should not be None when grad_outputs is not None"
                    )
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs
                )
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {actual_len}, but expected {expected_len}"
                            )
                        self.grad_outputs = hook_grad_outputs

                # Cleared below, but returned.
                local_grad_outputs = self.grad_outputs

                # No input requires grad: the full hooks are called here.
                if self.input_tensors_index is None:
                    warnings.warn(NO_INPUT_REQUIRES_GRAD_WARNING,
                                  stacklevel=_engine_caller_stacklevel())
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(el is None for el in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None

                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False

        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx

        if not is_tuple:
            res = res[0]
        return res
