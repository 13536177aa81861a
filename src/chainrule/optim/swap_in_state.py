"""``optim.swap_in_optimizer_params_and_state``: run an optimizer, for the length of a ``with``
block, on other parameter tensors and another state (given as an ``optimizer.state_dict()``),
then put its own back.

The given state is keyed by packed parameter ids (0, 1, ... in ``param_groups`` order) and its
groups carry the hyperparameters to use; per-parameter state dicts are shallow-copied, so
in-place updates of their tensors reach the caller's dict while new entries stay local.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any, NamedTuple

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


class _GroupSwap(NamedTuple):
    """One parameter group: the live dict (edited in place), the swap-in group (its
    hyperparameters and packed ids) and the tensors that stand in for its parameters."""

    live_group: dict[str, Any]
    swapin_group: dict[str, Any]
    swapin_params: list[Tensor]


def _checked_state(state: Any) -> dict[Any, Any]:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids."
        )
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_NAME} requires per-parameter optimizer state entries to be dictionaries."
        )
    return state


def _checked_groups(optimizer: Optimizer, groups: Any) -> list[dict[str, Any]]:
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
            f"dicts, got {type(groups).__name__}."
        )
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    return groups


def _checked_ids(index: int, live: dict[str, Any], swapin: Any) -> list[int]:
    """The packed ids of one swap-in group, after checking it matches the live group."""
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
            "keyed by packed parameter ids."
        )
    if len(live["params"]) != len(ids):
        raise RuntimeError(
            f"swapin_optim_state param group {index} has a different number of params than "
            "the live optimizer param group."
        )
    swapin_only = [k for k in swapin if k not in live]
    live_only = [k for k in live if k not in swapin]
    if swapin_only or live_only:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {index}. "
            f"Keys only in swap-in: {swapin_only}. Keys only in live: {live_only}."
        )
    return ids


def _prepare(
    optimizer: Optimizer, parameters: dict[str, Tensor], optim_state: Any
) -> tuple[dict[Any, Any], list[_GroupSwap]]:
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _checked_state(optim_state.get("state"))
    groups = _checked_groups(optimizer, optim_state.get("param_groups"))
    flat = list(parameters.values())
    offset = 0
    seen: set[int] = set()
    swaps = []
    for index, (live, swapin) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        ids = _checked_ids(index, live, swapin)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(flat):
            raise RuntimeError(
                f"{_NAME} requires the explicit parameter state to match "
                "optimizer.param_groups ordering."
            )
        swaps.append(_GroupSwap(live, swapin, flat[offset:end]))
        offset = end
    extra = [key for key in state if key not in seen]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed "
            f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}."
        )
    return state, swaps


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer,
    swapin_parameters: dict[str, Tensor],
    swapin_optim_state: dict[str, Any],
) -> Iterator[None]:
    """Inside the block ``optimizer`` works on ``swapin_parameters`` (in ``param_groups``
    order) with the state and hyperparameters of ``swapin_optim_state`` (an
    ``optimizer.state_dict()``-shaped dict); its own parameters, groups and state come back
    on exit. The optimizer's state must already be initialized.

    Example:
        >>> sd = opt.state_dict()  # doctest: +SKIP
        >>> with swap_in_optimizer_params_and_state(opt, params, sd):  # doctest: +SKIP
        ...     opt.step()
    """
    state, swaps = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    # Shallow copies: the very ``params`` list object comes back (callers compare with ``is``).
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for swap in swaps:
            swap.live_group["params"] = swap.swapin_params
            for key, value in swap.swapin_group.items():
                if key != "params":
                    swap.live_group[key] = value
            for param, param_id in zip(
                swap.swapin_params, swap.swapin_group["params"], strict=True
            ):
                swapped[param] = dict(state.get(param_id, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
