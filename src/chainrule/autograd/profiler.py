"""``torch.autograd.profiler``: time the functions a program calls.

    >>> import chainrule as torch
    >>> from chainrule.autograd.profiler import profile, record_function
    >>> x = torch.randn(10, 10)
    >>> with profile(record_shapes=True) as prof:
    ...     with record_function("scale"):
    ...         y = x * 2 + 4
    >>> [e.name for e in prof.function_events]
    ['scale', 'aten::mul', 'aten::add']

Within :class:`profile`, every call of a public function or Tensor method made in that thread
is an event named ``aten::<name>`` (with its input shapes if ``record_shapes``), and every
:class:`record_function` block an event of its own name; ``prof.function_events`` lists them
in order of their start, each with the events inside it as ``cpu_children``. The profiler sees
the functions the program calls, as a ``TorchFunctionMode`` at the bottom of the mode stack
would (hidden from ``torch.overrides``' mode-stack queries): the functions a public function
is built from, and the backward pass, are not events (PyTorch's profiler sees each ATen
operator, nested ones and those of the backward pass included).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import ops as _ops
from .._overrides import TorchFunctionMode
from .._tensor import Tensor
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, next_event_id

__all__ = [
    "profile",
    "record_function",
    "emit_itt",
    "emit_nvtx",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "kineto_available",
]

# The profilers collecting now (any thread), innermost last.
_ACTIVE: list[_Collector] = []
# Threads inside emit_itt.
_ITT = threading.local()


def _now_us() -> float:
    return time.perf_counter_ns() / 1000.0


def _is_profiler_enabled() -> bool:
    """Whether a profiler is collecting (``torch.autograd._profiler_enabled``)."""
    return bool(_ACTIVE) or getattr(_ITT, "on", False)


def kineto_available() -> bool:
    """False: chainrule has no Kineto (its profiler is this module's)."""
    return False


def _shape_of(value: Any) -> list[int]:
    return list(value.shape) if isinstance(value, Tensor) else []


def _op_name(func: Any) -> str:
    name = getattr(func, "__name__", None) or type(func).__name__
    if name.startswith("__") and name.endswith("__"):
        name = name.strip("_")
    return f"aten::{name}"


class _Collector:
    """The events of one profiler, from any thread."""

    def __init__(self, record_shapes: bool) -> None:
        self.record_shapes = record_shapes
        self.events: list[FunctionEvent] = []
        self.lock = threading.Lock()

    def add(self, event: FunctionEvent) -> None:
        with self.lock:
            self.events.append(event)


class _ProfilingMode(TorchFunctionMode):
    """Times each public function called while it is entered (the bottom of the mode stack:
    a user's mode entered inside the profiler is asked first, and its calls are timed)."""

    _hidden_mode = True  # (not reported by torch.overrides' mode-stack queries)

    def __init__(self, collector: _Collector) -> None:
        super().__init__()
        self.collector = collector

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: tuple,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        collector = self.collector
        shapes = None
        if collector.record_shapes:
            shapes = [_shape_of(a) for a in args] + [_shape_of(v) for v in kwargs.values()]
        sequence_nr = -1
        start = _now_us()
        try:
            result = func(*args, **kwargs)
            node = result.grad_fn if isinstance(result, Tensor) else None
            if node is not None:
                sequence_nr = node._sequence_nr()
        finally:
            end = _now_us()
            thread = threading.get_ident()
            collector.add(
                FunctionEvent(
                    id=next_event_id(),
                    name=_op_name(func),
                    thread=thread,
                    start_us=start,
                    end_us=end,
                    input_shapes=shapes,
                    sequence_nr=sequence_nr,
                    fwd_thread=thread,
                )
            )
        return result


class profile:  # noqa: N801 (PyTorch's name)
    """Context manager that collects the events of the code it runs (see the module's doc).

    Args: ``enabled`` (False: do nothing; ``with`` then gives None, as PyTorch's),
    ``record_shapes`` (each op's input shapes, one list per argument, ``[]`` for a
    non-tensor). The other arguments of PyTorch's profiler are accepted; the device ones
    (``use_cuda``, ``use_device``) warn that there is no device to profile, as PyTorch does
    without CUDA, and memory, flops, stacks and modules are not collected.

    After the block: ``function_events`` (an :class:`EventList`), :meth:`key_averages`,
    :meth:`table` (also ``str(prof)``), :meth:`export_chrome_trace`, ``self_cpu_time_total``.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Callable[[], str] | None = None,
        post_processing_timeout_s: float | None = None,
        activity_filters: Any = None,
    ) -> None:
        import warnings

        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, please use ``use_device = "
                "'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        if use_device is not None and use_device != "cpu":
            warnings.warn(
                f"{use_device.upper() if use_device == 'cuda' else use_device} is "
                f"not available, disabling {use_device.upper()} profiling",
                stacklevel=2,
            )
        self.use_device = None
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.function_events: EventList | None = None
        self.entered = False
        self._collector: _Collector | None = None
        self._mode: _ProfilingMode | None = None

    def __enter__(self) -> profile | None:
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._collector = _Collector(self.record_shapes)
        self._mode = _ProfilingMode(self._collector)
        self._mode.__enter__()
        _ACTIVE.append(self._collector)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        collector = self._collector
        assert collector is not None and self._mode is not None
        if collector in _ACTIVE:
            _ACTIVE.remove(collector)
        self._mode.__exit__(*exc)
        events = sorted(collector.events, key=lambda e: (e.time_range.start, -e.time_range.end))
        result = EventList(
            events,
            use_device=self.use_device,
            profile_memory=self.profile_memory,
            with_flops=self.with_flops,
        )
        result._build_tree()
        if self.acc_events and self.function_events is not None:
            self.function_events.extend(result)
            self.function_events.sort(key=lambda e: e.time_range.start)
        else:
            self.function_events = result
        self.entered = False

    def _events(self) -> EventList:
        return self.function_events if self.function_events is not None else EventList()

    def __repr__(self) -> str:
        return repr(self._events()) if self.function_events is not None else "<unfinished>"

    def __str__(self) -> str:
        return self.table()

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The events as a text table (:meth:`EventList.table`)."""
        return self._events().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
        )

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events added up by name (and input shapes ...: :meth:`EventList.key_averages`)."""
        return self._events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self) -> FunctionEventAvg:
        """All events added up."""
        return self._events().total_average()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events to ``path`` as a Chrome trace."""
        self._events().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the events' stacks to ``path`` (:meth:`EventList.export_stacks`)."""
        self._events().export_stacks(path, metric)

    @property
    def self_cpu_time_total(self) -> float:
        """The CPU time profiled (microseconds): the sum of the events' self times."""
        return self._events().self_cpu_time_total


class _RangeHandle:
    """An open :class:`record_function` range: its start, name and the profilers it goes to."""

    __slots__ = ("name", "args", "start", "collectors")

    def __init__(self, name: str, args: str | None) -> None:
        self.name = name
        self.args = args
        self.collectors = list(_ACTIVE)
        self.start = _now_us() if self.collectors else 0.0


def _record_function_enter(name: str, args: str | None = None) -> _RangeHandle:
    """Open a range named ``name`` (``torch.ops.profiler._record_function_enter``)."""
    return _RangeHandle(name, args)


def _record_function_exit(handle: _RangeHandle) -> None:
    """Close a range: an event for each profiler that was collecting when it opened and still
    is (``torch.ops.profiler._record_function_exit``)."""
    collectors = [c for c in handle.collectors if c in _ACTIVE]
    if not collectors:
        return
    end = _now_us()
    thread = threading.get_ident()
    for collector in collectors:
        collector.add(
            FunctionEvent(
                id=next_event_id(),
                name=handle.name,
                thread=thread,
                start_us=handle.start,
                end_us=end,
                input_shapes=[] if collector.record_shapes else None,
                is_user_annotation=True,
                fwd_thread=thread,
            )
        )


class _ContextDecorator:
    """A context manager that can also decorate a function (the same instance is entered
    at each call, as PyTorch's)."""

    def __enter__(self) -> Any:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapped


class record_function(_ContextDecorator):  # noqa: N801 (PyTorch's name)
    """Context manager (or decorator) that makes its block an event named ``name`` in the
    profilers collecting when it is entered (nothing when none is). Exiting ranges out of
    order is allowed.

        >>> with record_function("preprocess"):
        ...     y = x * 2
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record: _RangeHandle | None = None

    def __enter__(self) -> record_function:
        self.record = _record_function_enter(self.name, self.args)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.run_callbacks_on_exit:
            return
        record = self.record
        if record is None:
            raise RuntimeError("record_function exited before it was entered")
        _record_function_exit(record)


class emit_itt:  # noqa: N801 (PyTorch's name)
    """Context manager for Intel VTune's ITT ranges: chainrule emits none (it has no ITT), but
    the block runs with a profiler enabled, and entering it twice in a thread is PyTorch's
    error."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_itt:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("ITT annotation context manager is not reentrant")
        if getattr(_ITT, "on", False) or _ACTIVE:
            raise RuntimeError("Profiler is already enabled on this thread.")
        self.entered = True
        _ITT.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        _ITT.on = False
        self.entered = False


class emit_nvtx:  # noqa: N801 (PyTorch's name)
    """Context manager for NVIDIA's NVTX ranges: needs CUDA, which chainrule does not have
    (PyTorch's error without CUDA on entering)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_nvtx:
        if not self.enabled:
            return self
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, *exc: object) -> None:
        pass


def _install_ops_namespace() -> None:
    """``torch.ops.profiler._record_function_enter`` / ``_exit`` (and ``_new``)."""
    import types

    namespace = types.ModuleType("chainrule.ops.profiler")
    namespace._record_function_enter = _record_function_enter  # type: ignore[attr-defined]
    namespace._record_function_enter_new = _record_function_enter  # type: ignore[attr-defined]
    namespace._record_function_exit = _record_function_exit  # type: ignore[attr-defined]
    _ops.profiler = namespace  # type: ignore[attr-defined]


_install_ops_namespace()
