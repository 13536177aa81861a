"""``torch.autograd.profiler`` compared with PyTorch's: the events of the functions a program
calls (``aten::<name>``, in order, with input shapes), ``record_function`` ranges and their
children, ``_profiler_enabled``, the summaries (``key_averages``, ``table`` and ``str``, the
Chrome trace), ``torch.ops.profiler``'s legacy range functions, and the errors of
``emit_nvtx`` and ``emit_itt``.

chainrule's events are the public functions called; PyTorch's profiler also records the ATen
operators they are built from (``aten::to`` inside ``aten::mul`` ...). The comparisons read
PyTorch's top-level events: those not inside another, or directly inside a
``record_function`` range.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from typing import Any

import pytest

import chainrule

from .conftest import torch

LIBS = {"chainrule": chainrule, "torch": torch}


def _profiler(lib: Any) -> Any:
    return importlib.import_module(lib.__name__ + ".autograd.profiler")


def _top(events: Any) -> list[Any]:
    """Events not inside another, or directly inside a record_function range."""
    return [e for e in events if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")]


def _both(program: Any) -> None:
    seen = {name: program(lib) for name, lib in LIBS.items()}
    assert seen["chainrule"] == seen["torch"]


def test_events_of_operators_and_methods() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(10, 10)
        with _profiler(lib).profile() as p:
            enabled = lib.autograd._profiler_enabled()
            y = x * 2 + 4
            y.sum(0).exp()
            lib.matmul(x, y)
        return enabled, lib.autograd._profiler_enabled(), [e.name for e in _top(p.function_events)]

    _both(program)


def test_record_function_ranges_hold_their_events() -> None:
    def program(lib: Any) -> Any:
        prof = _profiler(lib)
        x = lib.randn(10, 10)
        with prof.profile() as p:
            with prof.record_function("outer"):
                y = x * 2 + 4
                with prof.record_function("inner"):
                    y = y - 1
            y = y / 1
        top = _top(p.function_events)
        outer = next(e for e in top if e.name == "outer")
        children = [c.name for c in outer.cpu_children]
        return [e.name for e in top], children, outer.cpu_parent, outer.count

    _both(program)


def test_record_function_as_decorator_and_in_the_table() -> None:
    def program(lib: Any) -> Any:
        prof = _profiler(lib)

        @prof.record_function("my_func")
        def f(a: Any, b: Any) -> Any:
            return a + b

        with prof.profile() as p:
            r = f(1, 2)
        return r, "my_func" in str(p), str(p) == p.table()

    _both(program)


def test_record_function_outside_a_profiler_and_out_of_order_exit() -> None:
    def program(lib: Any) -> Any:
        prof = _profiler(lib)
        rf = prof.record_function("outer")
        rf.__enter__()
        with prof.record_function("inner"):
            rf.__exit__(None, None, None)
        with prof.record_function("inner"):
            rf.__enter__()
        rf.__exit__(None, None, None)
        return rf.name, rf.args

    _both(program)


def test_input_shapes() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        layer1, layer2 = lib.nn.Linear(20, 30), lib.nn.Linear(30, 40)
        with _profiler(lib).profile(record_shapes=True) as p:
            layer2(layer1(lib.randn(128, 20)))
        return [e.input_shapes for e in p.function_events if e.name == "aten::linear"]

    _both(program)


def test_key_averages_count_calls() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(4)
        with _profiler(lib).profile(record_shapes=True) as p:
            for _ in range(3):
                x = x * 2
            x = lib.ones(2, 2) * 2
        averages = p.key_averages(group_by_input_shape=True)
        muls = sorted((a.count, str(a.input_shapes)) for a in averages if a.key == "aten::mul")
        by_name = {a.key: a.count for a in p.key_averages()}
        return muls, by_name["aten::mul"]

    _both(program)


def test_table_options_and_chrome_trace() -> None:
    def program(lib: Any) -> Any:
        with _profiler(lib).profile(record_shapes=True) as p:
            lib.einsum("i->", lib.randn(1024))
        tables = [
            p.table(sort_by="self_cpu_time_total", row_limit=10, header="TEST"),
            p.key_averages(group_by_input_shape=True).table(
                sort_by="self_cpu_time_total", row_limit=10, top_level_events_only=True
            ),
        ]
        with tempfile.NamedTemporaryFile(suffix=".json") as trace_file:
            p.export_chrome_trace(trace_file.name)
            with open(trace_file.name) as f:
                names = {e["name"] for e in json.load(f)["traceEvents"]}
        return (
            str(p) == p.table(),
            tables[0].splitlines()[1],
            "aten::einsum" in tables[1],
            "Self CPU time total" in tables[1],
            "aten::einsum" in names,
            p.self_cpu_time_total > 0,
        )

    _both(program)


def test_legacy_range_functions() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(10, 10)
        with _profiler(lib).profile() as p:
            handle = lib.ops.profiler._record_function_enter("bar", None)
            try:
                x * 2 + 4
            finally:
                lib.ops.profiler._record_function_exit(handle)
        bar = next(e for e in p.function_events if "bar" in e.name)
        # (PyTorch's enter records an aten::empty of its own)
        names = sorted(c.name for c in bar.cpu_children if c.name != "aten::empty")
        return bar.count, names

    _both(program)


def test_disabled_profiler_gives_none() -> None:
    def program(lib: Any) -> Any:
        with _profiler(lib).profile(enabled=False) as p:
            lib.ones(2) + 1
            enabled = lib.autograd._profiler_enabled()
        return p, enabled

    _both(program)


def test_not_reentrant() -> None:
    def program(lib: Any) -> Any:
        p = _profiler(lib).profile()
        with p:
            try:
                with p:
                    pass
            except RuntimeError as error:
                return str(error)
        return "no error"

    _both(program)


def test_emit_nvtx_needs_cuda_and_emit_itt_is_not_reentrant() -> None:
    def program(lib: Any) -> Any:
        prof = _profiler(lib)
        out = []
        try:
            with prof.emit_nvtx():
                pass
        except AssertionError as error:
            out.append(str(error))
        with prof.emit_itt():
            lib.ones(3).add(1.0)
            try:
                with prof.emit_itt():
                    pass
            except RuntimeError as error:
                out.append(str(error))
        return out

    _both(program)


def test_gradients_unchanged_under_the_profiler() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        with _profiler(lib).profile():
            y = (x.sin() * x).sum()
            y.backward()
        return x.grad.numpy().round(6).tolist(), float(y)

    _both(program)


def test_user_mode_inside_the_profiler_sees_calls() -> None:
    def program(lib: Any) -> Any:
        seen: list[str] = []

        class Logging(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
                seen.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with _profiler(lib).profile() as p:
            depth = lib._C._len_torch_function_stack()
            with Logging():
                x.mul(3)
        return seen, depth, [e.name for e in _top(p.function_events)]

    _both(program)


@pytest.mark.parametrize("value", [0.5, 1500.0, 2.5e6])
def test_format_time(value: float) -> None:
    from chainrule.autograd.profiler_util import _format_time

    real = importlib.import_module("torch.autograd.profiler_util")
    assert _format_time(value) == real._format_time(value)


def test_children_of_fake_events() -> None:
    # PyTorch's own example: per thread, a range that does not hold the next one is closed.
    seen = {}
    for name, lib in LIBS.items():
        util = importlib.import_module(lib.__name__ + ".autograd.profiler_util")
        events = util.EventList()
        ranges = [(1, [(0, 1, 1), (1, 2, 2)]), (0, [(0, 2, 3), (1, 2, 4), (1, 3, 5)])]
        for thread, spans in ranges:
            for start, end, id_ in spans:
                events.append(
                    util.FunctionEvent(
                        id=id_, node_id=0, name="", thread=thread, start_us=start, end_us=end
                    )
                )
        events._populate_cpu_children()
        seen[name] = [[c.id for c in e.cpu_children] for e in events]
    assert seen["chainrule"] == seen["torch"]


def test_function_event_avg() -> None:
    seen = {}
    for name, lib in LIBS.items():
        util = importlib.import_module(lib.__name__ + ".autograd.profiler_util")
        avg = util.FunctionEventAvg()
        avg.add(util.FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
        avg.add(util.FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
        avg.add(avg)
        seen[name] = (avg.key, avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.cpu_time)
    assert seen["chainrule"] == seen["torch"]
