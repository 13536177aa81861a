"""``torch.compiler``'s functions around ``compile`` (missing before): ``is_compiling``
(True while a program is traced: a program branching on it compiles its compiled branch, as
under torch.compile), ``disable`` (runs eagerly, also inside a compiled program), ``reset``
(the next call compiles again), ``is_exporting``, ``allow_in_graph``,
``assume_constant_result``. Against torch.compile(backend="eager")."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

import chainrule

from .conftest import torch


def _compile(lib: Any, fn: Any) -> Any:
    return torch.compile(fn, backend="eager") if lib is torch else chainrule.compile(fn)


def _branching(lib: Any) -> Any:
    def branch(x: Any) -> Any:
        return x * 2 if lib.compiler.is_compiling() else x * 3

    return branch


def _with_helper(lib: Any) -> tuple[Any, Any, list]:
    calls: list[bool] = []

    @lib.compiler.disable
    def helper(x: Any) -> Any:
        calls.append(lib.compiler.is_compiling())
        return x + 1

    def program(x: Any) -> Any:
        return helper(x) * 2

    return helper, program, calls


def test_a_program_branching_on_is_compiling_runs_its_compiled_branch():
    seen = {}
    for lib in (torch, chainrule):
        branch = _branching(lib)
        x = lib.tensor([1.0, -2.0])
        seen[lib.__name__] = (
            _compile(lib, branch)(x).numpy(),
            branch(x).numpy(),
            lib.compiler.is_compiling(),
            lib.compiler.is_dynamo_compiling(),
            lib.compiler.is_exporting(),
        )
    for ours, theirs in zip(seen["chainrule"], seen["torch"], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_disable_runs_eagerly_also_inside_a_compiled_program():
    seen = {}
    for lib in (torch, chainrule):
        helper, program, calls = _with_helper(lib)
        compiled = _compile(lib, program)
        x = lib.tensor([1.0, 2.0])
        out = [compiled(x).numpy(), compiled(x).numpy()]
        seen[lib.__name__] = (out, list(calls), helper.__name__, str(inspect.signature(helper)))
        out.append(_compile(lib, helper)(x).numpy())
        partial = lib.compiler.disable(recursive=False)
        assert callable(partial) and partial(program)(x).tolist() == [4.0, 6.0]
    ours, theirs = seen["chainrule"], seen["torch"]
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_array_equal(a, b)
    assert ours[1:] == theirs[1:]


def test_reset_compiles_again_and_the_identity_decorators():
    fn = chainrule.compile(lambda x: x * 2)
    model = chainrule.compile(chainrule.nn.Linear(2, 2))
    x = chainrule.ones(1, 2)
    fn(x)
    model(x)
    assert fn.compile_count == 1 and model.compile_count == 1
    chainrule.compiler.reset()
    assert fn.compile_count == 0 and fn.code == ""
    fn(x)
    model(x)
    assert fn.compile_count == 1 and model.compile_count == 1 and "def forward" in fn.code
    assert torch.compiler.reset() is None and chainrule.compiler.reset() is None

    def square(x: Any) -> Any:
        return x * x

    for lib in (torch, chainrule):
        assert lib.compiler.allow_in_graph(square) is square
        assert lib.compiler.assume_constant_result(square) is square


def test_dynamo_config_graph_break_and_marks():
    for lib in (torch, chainrule):
        dynamo = lib._dynamo
        assert (dynamo.config.recompile_limit, dynamo.config.cache_size_limit) == (8, 8)
        assert (dynamo.config.suppress_errors, dynamo.config.verbose) == (False, False)
        try:
            dynamo.config.no_such_setting = 1
        except AttributeError as error:
            message = str(error).replace("chainrule.", "torch.")
        assert message == "torch._dynamo.config.no_such_setting does not exist"
        x = lib.ones(3)
        assert dynamo.mark_dynamic(x, 0) is None and dynamo.mark_static(x) is None
        assert dynamo.graph_break() is None
    old = chainrule._dynamo.config.recompile_limit
    chainrule._dynamo.config.cache_size_limit = 2
    try:
        fn = chainrule.compile(lambda x: x + 1)
        for n in range(1, 5):
            fn(chainrule.ones(n))
        assert fn.compile_count == 2  # (then eagerly, as torch.compile past its limit)
    finally:
        chainrule._dynamo.config.recompile_limit = old

    def broken(x: Any) -> Any:
        y = x * 2
        chainrule._dynamo.graph_break()
        return y + 1

    compiled = chainrule.compile(broken)
    assert compiled(chainrule.ones(2)).tolist() == [3.0, 3.0] and compiled.graph_breaks == 1
