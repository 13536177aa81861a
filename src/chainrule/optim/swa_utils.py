"""Stochastic weight averaging and exponential moving averages of a model's weights
(``torch.optim.swa_utils``): ``AveragedModel``, the ``SWALR`` schedule, ``update_bn``, and the
averaging functions."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Any], None]


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An in-place exponential moving average of lists of tensors:
    ``ema = lerp(ema, current, 1 - decay)`` (for floating tensors)."""

    def ema_update(ema_params: list[Tensor], current_params: list[Tensor], _: Any) -> None:
        for ema, current in zip(ema_params, current_params, strict=True):
            if ema.is_floating_point() or ema.is_complex():
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An in-place running mean of lists of tensors:
    ``avg += (current - avg) / (num_averaged + 1)``."""

    def swa_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        for avg, cur in zip(averaged, current, strict=True):
            avg.add_((cur - avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """``decay * ema + (1 - decay) * current`` (a new tensor)."""

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """``avg + (current - avg) / (num_averaged + 1)`` (a new tensor)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers with ``use_buffers``) are the running
    average (or ``avg_fn``/``multi_avg_fn``'s average) of ``model``'s, updated by
    :meth:`update_parameters`; calling it runs the copy. ``n_averaged`` counts the updates."""

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers with ``use_buffers``) in; with
        ``use_buffers=False`` the buffers are copied from ``model`` instead."""
        averaged_params: Iterable[Tensor] = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers else self.parameters())
        model_params: Iterable[Tensor] = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers else model.parameters())
        averaged_list: list[Tensor] = []
        model_list: list[Tensor] = []
        first = bool(self.n_averaged == 0)
        for averaged, current in zip(averaged_params, model_params, strict=False):
            current_ = current.detach()
            averaged_list.append(averaged.detach())
            model_list.append(current_)
            if first:
                averaged.detach().copy_(current_)
        if self.n_averaged > 0:
            with no_grad():
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged_list, model_list, self.n_averaged)
                else:
                    average = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                    for averaged, current in zip(averaged_list, model_list, strict=True):
                        averaged.copy_(average(averaged, current, self.n_averaged))
        if not self.use_buffers:
            for own, theirs in zip(self.module.buffers(), model.buffers(), strict=False):
                own.detach().copy_(theirs.detach())
        self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers from one pass over
    ``loader`` (each batch, or its first element, fed to ``model`` in training mode, the
    statistics a plain average: momentum None for the pass)."""
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    try:
        for batch in loader:
            if isinstance(batch, list | tuple):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    finally:  # (momenta and mode restored also when the loader or the model raises)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs (cosine or
    linear), then keep it there."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(
                f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        # (the groups change only once every argument is checked; PyTorch wrote swa_lr first)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        self._set_anneal_func(anneal_strategy)
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, strategy: str) -> None:
        self._anneal_strategy = strategy
        self.anneal_func = _cosine_anneal if strategy == "cos" else _linear_anneal

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        previous_alpha = self.anneal_func(previous_t)
        previous = [_initial_lr(group["lr"], group["swa_lr"], previous_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, previous, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the annealing function (rebuilt on load)."""
        state = super().state_dict()
        state.pop("anneal_func", None)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes and the annealing function."""
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)


def _linear_anneal(t: float) -> float:
    return t


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


def _initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
    """The learning rate before an annealing step of weight ``alpha`` (as PyTorch recovers it
    from the current one)."""
    if alpha == 1:
        return swa_lr
    return (lr - alpha * swa_lr) / (1 - alpha)
