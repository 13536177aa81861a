"""``Work``: the handle of a collective started with ``async_op=True``."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from .._tensor import Tensor
from .process_group import _mpi

__all__ = ["Work"]


class Work:
    """A running collective: MPI requests, and what to do once they complete (copy gathered
    values into the output tensors, divide an average ...).

    ``wait()`` blocks until the operation is done (raising RuntimeError after the group's
    timeout, so a rank whose peers died or never joined fails instead of hanging);
    ``is_completed()`` asks without blocking and lets MPI make progress.

    Example:
        >>> work = dist.all_reduce(t, async_op=True)  # doctest: +SKIP
        >>> work.wait()  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        requests: list[Any],
        name: str,
        timeout: timedelta,
        finish: Callable[[], None] | None = None,
        outputs: list[Tensor] | None = None,
    ) -> None:
        self._requests = requests
        self._name = name
        self._timeout = timeout
        self._finish = finish
        self._outputs = outputs or []
        self._done = False
        self._statuses: list[Any] = []

    def _complete(self) -> None:
        self._done = True
        self._requests = []
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self) -> bool:
        """Whether the operation has finished (a non-blocking test that also progresses it)."""
        if self._done:
            return True
        if _mpi().Request.Testall(self._requests, self._status_list()):
            self._complete()
        return self._done

    def _status_list(self) -> list[Any]:
        if not self._statuses:
            status = _mpi().Status
            self._statuses = [status() for _ in self._requests]
        return self._statuses

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the operation is done; True. RuntimeError once ``timeout`` (the
        group's, 30 minutes by default) has passed."""
        if self._done:
            return True
        limit = (timeout or self._timeout).total_seconds()
        deadline = time.monotonic() + limit
        testall = _mpi().Request.Testall
        requests = self._requests
        statuses = self._status_list()
        spins = 0
        while not testall(requests, statuses):
            spins += 1
            if spins % 64 == 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"Timed out after {limit:g} s waiting for {self._name} to complete: "
                        "another rank failed or did not call it"
                    )
                # Spin at first (collectives are usually quick), then let other ranks on
                # the same cores run.
                time.sleep(0 if spins < 4096 else 0.0002)
        self._complete()
        return True

    def result(self) -> list[Tensor]:
        """The output tensors of the operation."""
        return list(self._outputs)

    def is_success(self) -> bool:
        """True once completed (MPI errors abort instead)."""
        return self.is_completed()

    def exception(self) -> None:
        """None: a failed MPI operation raises or aborts rather than being stored."""
        return None

    def source_rank(self) -> int:
        """For a receive from any rank: the sender's rank in the group."""
        if not self._done or not self._statuses:
            raise RuntimeError("source_rank is only available for a completed receive")
        return int(self._statuses[0].Get_source())

    def synchronize(self) -> None:
        """Wait (PyTorch's name for a device-stream barrier; the same on CPU)."""
        self.wait()
