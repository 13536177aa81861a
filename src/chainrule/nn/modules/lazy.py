"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d``, and their ``LazyModuleMixin``.

A lazy layer holds ``UninitializedParameter``/``UninitializedBuffer`` placeholders until its
first call: a forward pre-hook reads the input's feature size, materialises the placeholders,
initialises them as the eager layer does, and turns the module into that layer
(``cls_to_become``: a ``LazyLinear`` becomes a ``Linear``). Loading a state dict into a lazy
module materialises the placeholders with the loaded shapes first, as PyTorch does.

Example:
    >>> import chainrule as torch
    >>> layer = torch.nn.LazyLinear(4)
    >>> layer
    LazyLinear(in_features=0, out_features=4, bias=True)
    >>> layer(torch.ones(2, 3)).shape
    chainrule.Size([2, 4])
    >>> layer
    Linear(in_features=3, out_features=4, bias=True)
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from .linear import Linear
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
    _NormBase,
)

__all__ = [
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class LazyModuleMixin:
    """Infers a module's parameter shapes from its first input (``initialize_parameters``),
    then removes its hooks and becomes ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        module: Any = self
        self._initialize_hook = module.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        # An uninitialized placeholder is saved as itself (it has nothing to detach).
        module: Any = self
        for name, param in module._parameters.items():
            if param is not None:
                keep = is_lazy(param) or keep_vars
                destination[prefix + name] = param if keep else param.detach()
        for name, buf in module._buffers.items():
            if buf is not None and name not in module._non_persistent_buffers_set:
                keep = is_lazy(buf) or keep_vars
                destination[prefix + name] = buf if keep else buf.detach()

    def _upgrade_state_dict(
        self, state_dict: dict[str, Any], prefix: str, version: int | None
    ) -> None:
        # (PyTorch's _lazy_load_hook) placeholders take the shapes of the tensors being loaded
        module: Any = self
        for name, param in itertools.chain(module._parameters.items(), module._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value._data.shape)
        super()._upgrade_state_dict(state_dict, prefix, version)  # type: ignore[misc]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise and initialise the placeholders from the first input."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still an uninitialized placeholder."""
        module: Any = self
        values = itertools.chain(module._parameters.values(), module._buffers.values())
        return any(is_lazy(value) for value in values)

    def _infer_parameters(
        self, module: Any, args: tuple, kwargs: dict[str, Any] | None = None
    ) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore[attr-defined]
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a "
            "dummy forward pass to correctly initialize the modules"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last size of its first input.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.LazyLinear(2)(torch.ones(5, 7)).shape
        chainrule.Size([5, 2])
    """

    cls_to_become = Linear
    weight: Any
    bias: Any

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Linear's initialisation, once the shapes are known."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_features`` from ``input.shape[-1]``; weight and bias materialised and drawn."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input (its dimension 1, or 0 unbatched)."""

    _dims: int
    transposed: bool
    in_channels: int
    out_channels: int
    groups: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """The convolution's initialisation, once the shapes are known."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``in_channels`` from ``input``; weight and bias materialised and drawn."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        ndim = input._data.ndim
        if ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(
                f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}"
            )
        return int(input._data.shape[1] if ndim == unbatched + 1 else input._data.shape[0])


class _LazyConv(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        # (bias False and no sizes: the placeholders replace the parameters)
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            False,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device=device,
            dtype=dtype,
        )
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.LazyConv2d(8, 3)(torch.ones(1, 3, 5, 5)).shape
        chainrule.Size([1, 8, 3, 3])
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """``num_features`` from the first input's dimension 1."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        # (affine and the running statistics off: the placeholders replace them)
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = wrap(np.asarray(0, dtype=np.int64))

    def reset_parameters(self) -> None:
        """Running statistics reset, weight 1, bias 0, once the shapes are known."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        """``num_features`` from ``input.shape[1]``; parameters and statistics materialised."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            size = (self.num_features,)
            if self.affine:
                self.weight.materialize(size)
                if self.bias is not None:
                    self.bias.materialize(size)
            if self.track_running_stats:
                self.running_mean.materialize(size)
                self.running_var.materialize(size)
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm1d`` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm1d
    _expected_dims = (2, 3)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm2d`` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm2d
    _expected_dims = (4,)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A ``BatchNorm3d`` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm3d
    _expected_dims = (5,)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm1d`` (affine, tracking statistics) whose ``num_features`` comes from
    its first input."""

    cls_to_become = InstanceNorm1d
    _feature_dims = 1


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm2d`` (affine, tracking statistics) whose ``num_features`` comes from
    its first input."""

    cls_to_become = InstanceNorm2d
    _feature_dims = 2


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm3d`` (affine, tracking statistics) whose ``num_features`` comes from
    its first input."""

    cls_to_become = InstanceNorm3d
    _feature_dims = 3
