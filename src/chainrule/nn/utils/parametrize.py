"""``nn.utils.parametrize``: a tensor of a module computed from other tensors on every access.

``register_parametrization(module, "weight", P())`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that returns
``P()(original)``. The property lives on a subclass made for that one module object
(``ParametrizedLinear``), so other instances of the class are untouched. Assigning to
``module.weight`` runs the parametrizations' ``right_inverse`` (last registered first) and writes
the result into the original tensor, in place.

Several parametrizations on one tensor are applied in registration order; ``cached()`` computes
each parametrized tensor once while it is active.
"""

from __future__ import annotations

import collections.abc
import contextlib
import copy
import copyreg
from collections.abc import Iterator, Sequence
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

# Depth of nested ``cached()`` blocks, and the values computed inside them, keyed by
# (id(module), tensor name). Both are module state, as in PyTorch (not thread-local).
_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once while the block runs (and drop the values after).

    Useful when a forward pass reads a parametrized tensor several times (an RNN's kernel).

    Example:
        >>> with cached():  # doctest: +SKIP
        ...     out = model(x)
    """
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _write_into(dest: Tensor, src: Tensor) -> None:
    """Make ``dest`` hold ``src``'s data (same object, as ``Tensor.set_``)."""
    dest.set_(src)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor(s) they start from.

    It is ``module.parametrizations[name]``. The first parametrization's ``right_inverse``
    decides what is stored: one tensor (``original``), or several (``original0``,
    ``original1`` ...) when it returns a sequence.
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape = original.shape
        original_dtype = original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            with no_grad():
                _write_into(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            self._register_originals(new, original)
        if not self.unsafe:
            self._check_result(original_dtype, original_shape)

    def _register_originals(self, tensors: Sequence[Any], original: Tensor) -> None:
        for i, tensor in enumerate(tensors):
            if not isinstance(tensor, Tensor):
                raise ValueError(
                    "'right_inverse' must return a Tensor or a Sequence of tensors "
                    "(list, tuple...). "
                    f"Got element {i} of the sequence with type {type(tensor).__name__}."
                )
            if isinstance(original, Parameter):
                tensor = Parameter(tensor, original.requires_grad)
            tensor.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", tensor)

    def _check_result(self, original_dtype: Any, original_shape: Any) -> None:
        result = self()
        if not isinstance(result, Tensor):
            raise ValueError(
                f"A parametrization must return a tensor. Got {type(result).__name__}."
            )
        if result.dtype != original_dtype:
            raise ValueError(
                "Registering a parametrization may not change the dtype of the tensor, unless "
                "`unsafe` flag is enabled.\n"
                f"unparametrized dtype: {original_dtype}\n"
                f"parametrized dtype: {result.dtype}"
            )
        if result.shape != original_shape:
            raise ValueError(
                "Registering a parametrization may not change the shape of the tensor, unless "
                "`unsafe` flag is enabled.\n"
                f"unparametrized shape: {original_shape}\n"
                f"parametrized shape: {result.shape}"
            )

    def right_inverse(self, value: Tensor) -> None:
        """Run the parametrizations' ``right_inverse`` (last first) on ``value`` and store the
        result in ``original`` (or ``original0``, ``original1`` ...), in place."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                self._store_one(value)
            else:
                self._store_several(value)

    def _store_one(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
        if value.dtype != self.original.dtype:
            raise ValueError(
                f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                f"while `original` has dtype {self.original.dtype}"
            )
        _write_into(self.original, value)

    def _store_several(self, value: Any) -> None:
        if not isinstance(value, collections.abc.Sequence):
            raise ValueError(
                f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
            )
        if len(value) != self.ntensors:
            raise ValueError(
                "'right_inverse' must return a sequence of tensors of length "
                f"{self.ntensors}. Got a sequence of length {len(value)}."
            )
        for i, tensor in enumerate(value):
            original_i = getattr(self, f"original{i}")
            if not isinstance(tensor, Tensor):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors or reference-type "
                    f"opaques. Got element {i} of type {type(tensor).__name__}."
                )
            if original_i.dtype != tensor.dtype:
                raise ValueError(
                    f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                    f"while `original{i}` has dtype {original_i.dtype}"
                )
            _write_into(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization on the original tensor(s), then
        each later one on the previous result."""
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _deepcopy_replica(self: Module, memo: dict[int, Any]) -> Module:
    """``copy.deepcopy`` of a parametrized module: a new object of the same (per-object) class
    with a deep copy of the state (the class itself is shared, as in PyTorch)."""
    found = memo.get(id(self))
    if found is not None:
        return found
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(type(self)):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def _give_own_class(module: Module) -> None:
    """Swap ``module``'s class for a subclass of it made for this object alone, where the
    properties of its parametrized tensors go."""
    cls = type(module)
    namespace: dict[str, Any] = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy_replica
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _add_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")
    key = (id(module), tensor_name)

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def _check_added_parametrization(module: Module, tensor_name: str, parametrization: Module) -> None:
    """What PyTorch checks when a second (third ...) parametrization joins a tensor's list:
    same dtype and shape out of the parametrization and out of its ``right_inverse``."""
    current = getattr(module, tensor_name)
    result = parametrization(current)
    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(result).__name__}.")
    if result.dtype != current.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, unless the "
            "`unsafe` flag is enabled.\n"
            f"module.{tensor_name}.dtype: {current.dtype}\n"
            f"parametrization(module.{tensor_name}).dtype: {result.dtype}"
        )
    if result.shape != current.shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, unless the "
            "`unsafe` flag is enabled.\n"
            f"module.{tensor_name}.shape: {current.shape}\n"
            f"parametrization(module.{tensor_name}).shape: {result.shape}"
        )
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        inverse = parametrization.right_inverse(result)
    except NotImplementedError:
        return
    if not isinstance(inverse, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(inverse).__name__}"
        )
    for what in ("dtype", "shape"):
        if getattr(inverse, what) != getattr(current, what):
            raise ValueError(
                "The tensor returned by parametrization.right_inverse must have the same "
                f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {getattr(current, what)}\n"
                f"returned {what}: {getattr(inverse, what)}"
            )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the value of ``parametrization`` on the original tensor.

    The original moves to ``module.parametrizations[tensor_name].original`` (a parameter stays
    a parameter, a buffer a buffer); reading ``module.<tensor_name>`` computes
    ``parametrization(original)``; assigning to it runs ``parametrization.right_inverse`` when
    the parametrization has one. Registering again on the same name chains the
    parametrizations. Unless ``unsafe=True``, a parametrization may not change the tensor's
    dtype or shape.

    Example:
        >>> class Symmetric(nn.Module):  # doctest: +SKIP
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).transpose(-1, -2)
        >>> layer = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added_parametrization(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _give_own_class(module)
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (on any tensor when None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Remove the parametrizations of ``module.<tensor_name>``.

    With ``leave_parametrized=True`` the tensor keeps its current (parametrized) value, written
    into the original tensor object; with ``False`` it goes back to the original value (only
    possible when the parametrization starts from one tensor). When no parametrization is left,
    the module gets its own class back.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _write_into(original, value)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                "parametrized in terms of a sequence of tensors."
            )
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization was registered on it."""
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or all) on
    ``to_module`` and make its originals the very tensors of ``from_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
