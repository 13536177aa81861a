"""``ctx._materialize_non_diff_grads = False`` in a custom Function, compared with PyTorch: the
backward then gets None (not zeros) for the gradient of every non-differentiable output
(marked with ``mark_non_differentiable``, or of an integer or boolean type) that received none,
while differentiable outputs that received none still get zeros.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


@pytest.mark.parametrize("materialize_non_diff", [True, False, None])
@pytest.mark.parametrize("which", [0, 2])
def test_non_differentiable_outputs_get_none(materialize_non_diff: bool | None, which: int) -> None:
    def program(lib: Any) -> Any:
        seen = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                marked = x.clone()
                ctx.mark_non_differentiable(marked)
                if materialize_non_diff is not None:
                    ctx._materialize_non_diff_grads = materialize_non_diff
                return x.clone(), marked, (x > 0).long(), x * 2

            @staticmethod
            def backward(ctx: Any, g0: Any, g1: Any, g2: Any, g3: Any) -> Any:
                seen.append([None if g is None else g.tolist() for g in (g0, g1, g2, g3)])
                return g0 + g3

        a = lib.tensor([1.0, -1.0], requires_grad=True)
        outs = Func.apply(a)
        chosen = outs[0] if which == 0 else outs[3]
        chosen.sum().backward()
        return seen, a.grad

    same_outcome(program)


def test_with_set_materialize_grads_false_everything_is_none() -> None:
    def program(lib: Any) -> Any:
        seen = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.set_materialize_grads(False)
                ctx._materialize_non_diff_grads = True
                out = x.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out, x.clone()

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                seen.append([None if g is None else g.tolist() for g in grads])
                return grads[0]

        a = lib.tensor([1.0], requires_grad=True)
        Func.apply(a)[0].sum().backward()
        return seen

    same_outcome(program)
