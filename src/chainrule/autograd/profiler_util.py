"""The events a profiler collects and their summaries (``torch.autograd.profiler_util``):
:class:`FunctionEvent` (one timed range: an op call or a ``record_function`` block),
:class:`FunctionEventAvg` (events added up under one key) and :class:`EventList` (the
profiler's list: parent/child ranges, averages by key, the text table, a Chrome trace).

Times are in microseconds, measured on the CPU with ``time.perf_counter_ns``. chainrule runs on
the CPU only: the device columns of PyTorch's table are absent and device times are 0.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import Any

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


def _format_time(time_us: float) -> str:
    """``time_us`` microseconds as text in s, ms or us, three decimals (``'1.500ms'``)."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_time_us: float) -> str:
    """``time_us`` as a percentage of ``total_time_us`` (``'NaN'`` for a zero total)."""
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


class Interval:
    """A time range ``[start, end]`` in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        """The range's length."""
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


class _Times:
    """Formatted views of the time totals (shared by events and averages)."""

    count: int
    cpu_time_total: float
    self_cpu_time_total: float

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        """Always 0: chainrule runs on the CPU."""
        return 0.0

    device_time_total = 0.0
    self_device_time_total = 0.0
    cuda_time = 0.0

    @property
    def cpu_time_str(self) -> str:
        """:attr:`cpu_time`, formatted."""
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        """:attr:`cpu_time_total`, formatted."""
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        """:attr:`self_cpu_time_total`, formatted."""
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_Times):
    """One profiled range: an op call (``'aten::mul'``) or a ``record_function`` block.

    ``cpu_children`` are the ranges of the same thread directly inside it, ``cpu_parent`` the
    range directly around it (set by :meth:`EventList._populate_cpu_children`)."""

    def __init__(
        self,
        id: int,  # noqa: A002 (PyTorch's name)
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        overload_name: str | None = None,
        fwd_thread: int | None = None,
        input_shapes: list[Any] | None = None,
        stack: list[str] | None = None,
        scope: int = 0,
        use_device: str | None = None,
        cpu_memory_usage: int = 0,
        device_memory_usage: int = 0,
        is_async: bool = False,
        is_remote: bool = False,
        sequence_nr: int = -1,
        node_id: int = -1,
        device_type: Any = None,
        device_index: int = 0,
        device_resource_id: int | None = None,
        is_legacy: bool = False,
        flops: int | None = None,
        trace_name: str | None = None,
        concrete_inputs: list[Any] | None = None,
        kwinputs: dict[str, Any] | None = None,
        is_user_annotation: bool = False,
    ) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list[Any] = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self.kwinputs = kwinputs if kwinputs is not None else {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = device_resource_id if device_resource_id is not None else thread
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Record ``child`` as a range directly inside this one."""
        if not isinstance(child, FunctionEvent):
            raise TypeError(f"expected a FunctionEvent, got {type(child).__name__}")
        if child.id == self.id:
            raise ValueError("an event cannot be its own child")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        """Record ``parent`` as the range directly around this one."""
        if not isinstance(parent, FunctionEvent):
            raise TypeError(f"expected a FunctionEvent, got {type(parent).__name__}")
        if self.cpu_parent is not None:
            raise ValueError("the event already has a parent")
        self.cpu_parent = parent

    @property
    def self_cpu_memory_usage(self) -> int:
        """Memory this range allocated itself (not tracked: 0)."""
        return 0

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]
        """The range's length (microseconds)."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        """The range's length less that of its children."""
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def key(self) -> str:
        """What :meth:`EventList.key_averages` groups by: the name."""
        return self.name

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
            f"end_us={self.time_range.end} cpu_children={[c.id for c in self.cpu_children]} "
            f"input_shapes={self.input_shapes} sequence_nr={self.sequence_nr}>"
        )


class FunctionEventAvg(_Times):
    """Events added up under one key (:meth:`EventList.key_averages`): their count and time
    totals; the first one added gives the name, shapes and the other descriptive fields."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes: list[Any] | None = None
        self.overload_name: str | None = None
        self.stack: list[str] | None = None
        self.scope: int | None = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children: list[FunctionEvent] | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.device_type: Any = None
        self.is_legacy = False
        self.flops = 0

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Add ``other``'s counts and times (an event, or another average of the same key)."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
        if not isinstance(other, FunctionEvent | FunctionEventAvg):
            raise TypeError(f"expected a FunctionEvent or FunctionEventAvg, got {type(other)}")
        if other.key != self.key:
            raise ValueError(f"cannot add an event of key {other.key!r} to {self.key!r}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        if other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>"
        )


class EventList(list):
    """A profiler's events (a list), in order of their start."""

    def __init__(
        self,
        *args: Any,
        use_device: str | None = None,
        profile_memory: bool = False,
        with_flops: bool = False,
    ) -> None:
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Give each event its ``cpu_children`` and ``cpu_parent``: per thread, in order of
        start (the longer first when two start together), an event is a child of the nearest
        open event whose range holds it; an open event that does not hold the next one is
        closed."""
        threads: dict[int, list[FunctionEvent]] = {}
        for event in self:
            if not event.is_async:
                threads.setdefault(event.thread, []).append(event)
        for events in threads.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            open_events: list[FunctionEvent] = []
            for event in events:
                while open_events:
                    top = open_events[-1]
                    if (
                        top.time_range.start <= event.time_range.start
                        and event.time_range.end <= top.time_range.end
                    ):
                        top.append_cpu_child(event)
                        if event.cpu_parent is None:
                            event.set_cpu_parent(top)
                        break
                    open_events.pop()
                open_events.append(event)

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self CPU times: the time profiled."""
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events added up by name (and input shapes, the first ``group_by_stack_n``
        stack entries, the overload name, when asked), one :class:`FunctionEventAvg` per
        group, in order of first appearance."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            key: tuple = (event.key, event.node_id)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(event.stack[:group_by_stack_n])
            if group_by_overload_name:
                key += (event.overload_name,)
            groups.setdefault(key, FunctionEventAvg()).add(event)
        return EventList(
            groups.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )

    def total_average(self) -> FunctionEventAvg:
        """All events added up (key ``'Total'``)."""
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
            total.key = None
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The events as a text table: name, self CPU time (and share), total CPU time (and
        share), average, number of calls, and input shapes when recorded. ``sort_by`` names an
        attribute to sort by, largest first (``'self_cpu_time_total'``); ``row_limit`` < 0
        shows every row; ``top_level_events_only`` leaves out events inside others."""
        return _build_table(
            self,
            sort_by,
            row_limit,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
            time_unit,
        )

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events to ``path`` as a Chrome trace (JSON, ``chrome://tracing``)."""
        trace = [
            {
                "name": event.trace_name,
                "ph": "X",
                "ts": event.time_range.start,
                "dur": event.time_range.elapsed_us(),
                "tid": event.thread,
                "pid": "CPU functions",
                "args": {"Input Dims": event.input_shapes} if event.input_shapes else {},
            }
            for event in self
        ]
        with open(path, "w") as file:
            json.dump({"traceEvents": trace}, file)

    def supported_export_stacks_metrics(self) -> list[str]:
        """The metrics :meth:`export_stacks` can write."""
        return ["self_cpu_time_total"]

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write each event's stack (``with_stack=True``) and ``metric`` to ``path``, one line
        per stack, outermost frame first (the format flame graph tools read)."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(
                "metric should be one of: " + str(self.supported_export_stacks_metrics())
            )
        with open(path, "w") as file:
            for event in self:
                if event.stack:
                    frames = ";".join(reversed(event.stack)).replace(" ", "_")
                    file.write(f"{frames} {int(getattr(event, metric))}\n")


_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def _build_table(
    events: Iterable[Any],
    sort_by: str | None,
    row_limit: int,
    name_width_limit: int,
    shapes_width_limit: int,
    header: str | None,
    top_level_events_only: bool,
    time_unit: str | None,
) -> str:
    rows = list(events)
    if not rows:
        return ""
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if row_limit >= 0:
        rows = rows[:row_limit]
    all_events = list(events)
    # The total: every event's own time (children are counted in their parents' totals).
    self_total = sum(e.self_cpu_time_total for e in all_events)
    show_shapes = any(e.input_shapes for e in all_events)

    def time(value: float) -> str:
        if time_unit in _UNITS:
            return f"{value / _UNITS[time_unit]:.3f}{time_unit}"
        return _format_time(value)

    def clip(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 3] + "..."

    name_width = min(max(len(str(e.key)) for e in rows) + 4, name_width_limit)
    columns = [("Name", name_width)] + [
        (title, 12)
        for title in (
            "Self CPU %",
            "Self CPU",
            "CPU total %",
            "CPU total",
            "CPU time avg",
            "# of Calls",
        )
    ]
    shapes_width = 0
    if show_shapes:
        shapes_width = min(max(len(str(e.input_shapes)) for e in rows) + 4, shapes_width_limit)
        columns.append(("Input Shapes", max(shapes_width, len("Input Shapes"))))
    line = "".join("-" * width + "  " for _, width in columns)
    out = []
    if header is not None:
        out += ["=" * len(line), header]
    out += [line, "".join(f"{title:>{width}}  " for title, width in columns), line]
    for e in rows:
        cells = [
            clip(str(e.key), name_width),
            _format_time_share(e.self_cpu_time_total, self_total),
            time(e.self_cpu_time_total),
            _format_time_share(e.cpu_time_total, self_total),
            time(e.cpu_time_total),
            time(e.cpu_time),
            str(e.count),
        ]
        if show_shapes:
            cells.append(clip(str(e.input_shapes), shapes_width))
        out.append(
            "".join(f"{cell:>{width}}  " for cell, (_, width) in zip(cells, columns, strict=True))
        )
    out += [line, f"Self CPU time total: {time(self_total)}", ""]
    return "\n".join(out)


# Ids of the events the profiler makes.
next_event_id = itertools.count(1).__next__
