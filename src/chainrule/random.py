"""``torch.random``: the default generator's seed and state, and ``fork_rng``.

The functions are the package's own (``chainrule.manual_seed`` is
``chainrule.random.manual_seed``); ``fork_rng`` restores the generator's state when its block
ends, as PyTorch's does (this CPU-only library has no device generators to fork: the CUDA
module reports no devices, and asking for one raises its error, as PyTorch's CPU build does).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from . import cuda
from ._size import device as Device
from .ops.creation import (
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "set_rng_state",
    "get_rng_state",
    "manual_seed",
    "seed",
    "initial_seed",
    "fork_rng",
    "thread_safe_generator",
    "default_generator",
]


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[Any] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Run the block, then put the default generator back in the state it had before it.

    Example:
        >>> import chainrule as torch
        >>> _ = torch.manual_seed(0)
        >>> with torch.random.fork_rng():
        ...     inside = torch.rand(2)
        >>> bool((torch.rand(2) == inside).all())
        True
    """
    if device_type == "meta" or not enabled:
        yield
        return
    if device_type is not None and Device(device_type).type != "cuda":
        # (a device type this library has no generator for: only the CPU's state is forked;
        # an unknown type raises the device parser's error, as PyTorch's)
        chosen: list[Any] = []
    else:
        chosen = list(range(cuda.device_count())) if devices is None else list(devices)
    cpu_state = get_rng_state()
    device_states = [cuda.get_rng_state(device) for device in chosen]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for device, state in zip(chosen, device_states, strict=True):
            cuda.set_rng_state(state, device)


def thread_safe_generator() -> Any:
    """None: outside a DataLoader worker thread the default generator is used (PyTorch's
    answer in the main process and in worker processes)."""
    return None
