"""Selective activation checkpointing against PyTorch 2.13: ``CheckpointPolicy``,
``SelectiveCheckpointContext``, ``create_selective_checkpoint_contexts`` and the caching itself
(ops whose policy says save are kept in forward and handed back, not rerun, in the
recomputation; the policy runs in forward only), with PyTorch's errors for cached outputs
modified in place and for a second backward through the region. The contexts are dispatch modes
(tests/test_dispatch_modes.py tests those).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def both(case: Callable[[Any], Any]) -> None:
    got = attempt(lambda: case(chainrule))
    want = attempt(lambda: case(torch))
    assert got == want


def test_policy_members() -> None:
    def case(lib: Any) -> Any:
        policy = lib.utils.checkpoint.CheckpointPolicy
        return (
            [(m.name, m.value) for m in policy],
            policy.MUST_SAVE is policy(0),
            str(policy.PREFER_RECOMPUTE).split(".", 1)[1],
            policy.__mro__[1].__name__,
        )

    both(case)


def test_context_attributes() -> None:
    def case(lib: Any) -> Any:
        context = lib.utils.checkpoint.SelectiveCheckpointContext
        ctx = context(is_recompute=False)
        with_output = context(is_recompute=True, op_output=3)
        positional = attempt(lambda: context(False))
        return (
            ctx.is_recompute,
            ctx.op_output,
            with_output.is_recompute,
            with_output.op_output,
            positional[0],
        )

    both(case)


def test_exported_names() -> None:
    names = (
        "CheckpointPolicy",
        "SelectiveCheckpointContext",
        "create_selective_checkpoint_contexts",
    )
    assert set(names) <= set(torch.utils.checkpoint.__all__)
    assert set(names) <= set(chainrule.utils.checkpoint.__all__)


@pytest.mark.parametrize("policy", ["number", "none", "string", "tuple"])
def test_policy_that_is_neither_a_function_nor_a_list(policy: str) -> None:
    values = {"number": 3, "none": None, "string": "mm", "tuple": ()}
    both(lambda lib: lib.utils.checkpoint.create_selective_checkpoint_contexts(values[policy]))


@pytest.mark.parametrize("policy", ["function", "empty_list"])
def test_two_contexts(policy: str) -> None:
    def case(lib: Any) -> Any:
        checkpoint = lib.utils.checkpoint
        given = {
            "function": lambda ctx, op, *a, **k: checkpoint.CheckpointPolicy.MUST_SAVE,
            "empty_list": [],
        }[policy]
        contexts = checkpoint.create_selective_checkpoint_contexts(given)
        return type(contexts).__name__, len(contexts)

    both(case)


def _fn(lib: Any, x: Any, y: Any) -> Any:
    return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y


def _inputs(lib: Any, requires_grad: bool = True) -> tuple[Any, Any]:
    x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=requires_grad)
    y = lib.tensor([[1.5, 0.5], [-0.5, 1.0]], dtype=lib.float64, requires_grad=requires_grad)
    return x, y


def test_without_grad_mode_the_contexts_are_not_used() -> None:
    def case(lib: Any) -> Any:
        checkpoint = lib.utils.checkpoint
        calls: list[Any] = []

        def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(ctx.is_recompute)
            return checkpoint.CheckpointPolicy.MUST_SAVE

        x, y = _inputs(lib, requires_grad=False)
        with lib.no_grad():
            out = checkpoint.checkpoint(
                lambda a, b: _fn(lib, a, b),
                x,
                y,
                use_reentrant=False,
                context_fn=functools.partial(
                    checkpoint.create_selective_checkpoint_contexts, policy
                ),
            )
        return [round(v, 12) for v in out.reshape(-1).tolist()], calls

    both(case)


# ----------------------------------------------------------------------------------------------
# The caching. The op is identified by name (PyTorch passes torch.ops.aten.mm.default, whose str
# is "aten.mm.default", as chainrule's).


def _saved_mm_run(lib: Any, use_list: bool) -> Any:
    checkpoint = lib.utils.checkpoint
    counts = {"forward": 0, "recompute": 0}
    mm_calls: list[bool] = []

    def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
        counts["recompute" if ctx.is_recompute else "forward"] += 1
        if str(op) == "aten.mm.default":
            mm_calls.append(ctx.is_recompute)
            return checkpoint.CheckpointPolicy.MUST_SAVE
        return checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

    given = [lib.ops.aten.mm.default] if use_list else policy
    x, y = _inputs(lib)
    out = checkpoint.checkpoint(
        lambda a, b: _fn(lib, a, b),
        x,
        y,
        use_reentrant=False,
        context_fn=functools.partial(checkpoint.create_selective_checkpoint_contexts, given),
    )
    out.sum().backward()
    plain_x, plain_y = _inputs(lib)
    checkpoint.checkpoint(
        lambda a, b: _fn(lib, a, b), plain_x, plain_y, use_reentrant=False
    ).sum().backward()
    same_as_plain = (
        x.grad.tolist() == plain_x.grad.tolist() and y.grad.tolist() == plain_y.grad.tolist()
    )
    return (
        [round(v, 12) for v in x.grad.reshape(-1).tolist() + y.grad.reshape(-1).tolist()],
        same_as_plain,
        mm_calls if not use_list else None,
    )


@pytest.mark.parametrize("use_list", [False, True], ids=["policy_function", "op_list"])
def test_saved_mm_is_not_recomputed(use_list: bool) -> None:
    ours = _saved_mm_run(chainrule, use_list)
    theirs = _saved_mm_run(torch, use_list)
    assert ours == theirs
    assert theirs[2] in (None, [False, False])  # the policy runs in forward only


def _sac(lib: Any, fn: Callable[[Any], Any], policy: Any, x: Any, **options: Any) -> Any:
    checkpoint = lib.utils.checkpoint
    context_fn = functools.partial(
        checkpoint.create_selective_checkpoint_contexts, policy, **options
    )
    return checkpoint.checkpoint(fn, x, use_reentrant=False, context_fn=context_fn)


def _x(lib: Any) -> Any:
    return lib.tensor([0.5, -1.25, 2.0], dtype=lib.float64, requires_grad=True)


def _grad(x: Any) -> list[float]:
    return [round(v, 12) for v in x.grad.tolist()]


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "sin_chain": lambda x: x.sin().sin().sin(),
    "sin_cos_exp": lambda x: x.sin().cos().exp(),
    "products": lambda x: (x * 2 + x.cos()) * x.sin(),
    "var_mean": lambda x: (lambda vm: vm[0] * vm[1])(_var_mean(x)),
    "tanh_sum": lambda x: (x.tanh() * x).sum(0).exp(),
}


def _var_mean(x: Any) -> Any:
    lib = chainrule if isinstance(x, chainrule.Tensor) else torch
    return lib.var_mean(x)


SAVED = ("aten.sin.default", "aten.var_mean.correction", "aten.tanh.default", "aten.mul.Tensor")


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("kind", ["policy", "bool_policy", "op_list"])
def test_policy_calls_and_gradients(program: str, kind: str) -> None:
    """The policy sees each op once, in forward (is_recompute False, the op's output given), and
    the gradients are the plain ones."""

    def case(lib: Any) -> Any:
        checkpoint = lib.utils.checkpoint
        calls: list[tuple[bool, str, bool]] = []

        def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append((ctx.is_recompute, str(op), isinstance(ctx.op_output, lib.Tensor)))
            if kind == "bool_policy":
                return str(op) in SAVED
            return (
                checkpoint.CheckpointPolicy.MUST_SAVE
                if str(op) in SAVED
                else checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
            )

        given: Any = policy
        if kind == "op_list":
            aten = lib.ops.aten
            given = [aten.sin.default, aten.var_mean.correction, aten.tanh.default, aten.mul.Tensor]
        x = _x(lib)
        out = _sac(lib, PROGRAMS[program], given, x)
        forward_calls = list(calls)
        out.sum().backward()
        plain = _x(lib)
        PROGRAMS[program](plain).sum().backward()
        return forward_calls, calls == forward_calls, _grad(x), _grad(x) == _grad(plain)

    both(case)


class _Counter:
    """A dispatch mode counting the ops it sees (of the given names)."""

    @staticmethod
    def make(lib: Any, names: tuple[str, ...]) -> Any:
        if lib is torch:
            from torch.utils._python_dispatch import TorchDispatchMode
        else:
            from chainrule.utils._python_dispatch import TorchDispatchMode

        class Counter(TorchDispatchMode):
            def __init__(self) -> None:
                super().__init__()
                self.seen: list[str] = []

            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                if str(func) in names:
                    self.seen.append(str(func))
                return func(*args, **(kwargs or {}))

        return Counter()


@pytest.mark.parametrize(
    "saved",
    [(), ("aten.sin.default",), ("aten.exp.default",), ("aten.sin.default", "aten.exp.default")],
)
def test_saved_ops_are_not_recomputed(saved: tuple[str, ...]) -> None:
    """A mode entered around backward sees the ops the recomputation runs again: the saved ones
    are handed back from the cache instead."""

    def case(lib: Any) -> Any:
        checkpoint = lib.utils.checkpoint

        def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            return (
                checkpoint.CheckpointPolicy.PREFER_SAVE
                if str(op) in saved
                else checkpoint.CheckpointPolicy.MUST_RECOMPUTE
            )

        x = _x(lib)
        out = _sac(lib, lambda t: t.sin().exp().sin().exp(), policy, x)
        counter = _Counter.make(lib, ("aten.sin.default", "aten.exp.default"))
        with counter:
            out.sum().backward()
        return sorted(counter.seen), _grad(x)

    both(case)


@pytest.mark.parametrize("allow", [False, True])
def test_cached_output_modified_in_place(allow: bool) -> None:
    def case(lib: Any) -> Any:
        checkpoint = lib.utils.checkpoint

        def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> Any:
            return (
                checkpoint.CheckpointPolicy.MUST_SAVE
                if str(op) == "aten.sin.default"
                else checkpoint.CheckpointPolicy.PREFER_RECOMPUTE
            )

        x = _x(lib)
        out = _sac(
            lib, lambda t: t.sin().mul_(2).cos().exp(), policy, x, allow_cache_entry_mutation=allow
        )
        result = attempt(lambda: out.sum().backward())
        return result, _grad(x) if x.grad is not None else None

    both(case)


def test_second_backward_through_the_region_is_refused() -> None:
    def case(lib: Any) -> Any:
        x = _x(lib)
        out = _sac(lib, lambda t: t.sin().cos().exp(), [lib.ops.aten.sin.default], x)
        out.sum().backward(retain_graph=True)
        first = _grad(x)
        return first, attempt(lambda: out.sum().backward(retain_graph=True)), _grad(x)

    both(case)


def test_autograd_grad_and_a_second_checkpoint() -> None:
    def case(lib: Any) -> Any:
        x = _x(lib)
        ops = [lib.ops.aten.cos.default]
        out = _sac(lib, lambda t: _sac(lib, lambda u: u.cos().sin(), ops, t).exp().cos(), ops, x)
        (g,) = lib.autograd.grad(out.sum(), (x,))
        return [round(v, 12) for v in g.tolist()]

    both(case)


@pytest.mark.parametrize("given", ["number", "packet", "overload_and_number"])
def test_op_list_of_other_than_overloads(given: str) -> None:
    """PyTorch's ValueError; the message names the type, whose module differs
    (torch._ops against chainrule.ops._dispatch_modes): compared without it."""

    def case(lib: Any) -> Any:
        aten = lib.ops.aten
        values = {
            "number": [2],
            "packet": [aten.sin],
            "overload_and_number": [aten.sin.default, 3],
        }[given]
        kind, message = attempt(
            lambda: lib.utils.checkpoint.create_selective_checkpoint_contexts(values)
        )
        head, _, tail = message.partition(" of type ")
        return kind, head, tail.split(">", 1)[-1]

    both(case)
