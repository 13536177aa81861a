"""``compile(module)`` returns an ``OptimizedModule``, as torch.compile: a module wrapping the
original as ``_orig_mod`` (state_dict keys ``_orig_mod.<name>``, so checkpoints of compiled
models load across the two libraries), ``training`` and other attributes read from and
written to the original, ``eval()`` returning the wrapper. Before, chainrule returned its
compiled-function object (no module: unprefixed state_dict keys, ``eval()`` returned the
original, no repr)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _model(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU())


def _compiled(lib: Any, model: Any) -> Any:
    if lib is torch:
        return torch.compile(model, backend="eager")
    return chainrule.compile(model)


def _describe(lib: Any) -> dict[str, Any]:
    model = _model(lib)
    compiled = _compiled(lib, model)
    seen: dict[str, Any] = {
        "type": type(compiled).__name__,
        "module": isinstance(compiled, lib.nn.Module),
        "state_dict": list(compiled.state_dict()),
        "parameters": [n for n, _ in compiled.named_parameters()],
        "buffers": [n for n, _ in compiled.named_buffers()],
        "children": [n for n, _ in compiled.named_children()],
        "repr": repr(compiled),
        "orig": compiled._orig_mod is model,
        "len": len(compiled),
        "eval_returns_self": compiled.eval() is compiled,
        "training_after_eval": (compiled.training, model.training),
    }
    compiled.train()
    compiled.extra_flag = 3
    seen["attribute_written_to_original"] = getattr(model, "extra_flag", None)
    seen["attribute_read"] = compiled.extra_flag
    try:
        compiled[0]
    except TypeError as error:
        seen["subscript"] = str(error)
    data = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    x = lib.tensor(data, requires_grad=True)  # (no batch-norm output at a tie with 0)
    out = compiled(x)
    out.sum().backward()
    seen["out"] = out.detach().numpy()
    seen["grad"] = x.grad.numpy()
    seen["running_mean"] = model[1].running_mean.numpy()
    return seen


def test_a_compiled_module_is_pytorchs_optimized_module():
    ours, theirs = _describe(chainrule), _describe(torch)
    for key in theirs:
        if key in ("out", "grad", "running_mean"):
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
        else:
            assert ours[key] == theirs[key], key


def test_its_program_is_compiled_and_checkpoints_cross_over():
    model = _model(chainrule)
    compiled = chainrule.compile(model)
    x = chainrule.ones(5, 3)
    compiled(x)
    assert compiled.fallback_reasons == [] and compiled.compile_count == 1
    assert "def forward" in compiled.code
    theirs = torch.compile(_model(torch), backend="eager")
    state = {k: torch.tensor(v.numpy()) for k, v in compiled.state_dict().items()}
    theirs.load_state_dict(state)
    back = {k: chainrule.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    compiled.load_state_dict(back)
    with pytest.raises(RuntimeError, match="Missing key"):
        compiled.load_state_dict(model.state_dict())


def test_a_compiled_function_is_no_module():
    fn = chainrule.compile(lambda x: x * 2)
    assert not isinstance(fn, chainrule.nn.Module)
    assert fn(chainrule.ones(2)).tolist() == [2.0, 2.0]


def test_a_compiled_function_looks_like_the_function():
    def scaled(x, factor=2):
        """Doubles x."""
        return x * factor

    seen = []
    for compiled in (torch.compile(scaled, backend="eager"), chainrule.compile(scaled)):
        seen.append(
            (
                compiled.__name__,
                compiled.__qualname__,
                compiled.__doc__,
                compiled.__module__,
                compiled.__wrapped__ is scaled,
                compiled._torchdynamo_orig_callable is scaled,
                str(inspect.signature(compiled)),
            )
        )
    assert seen[0] == seen[1]
