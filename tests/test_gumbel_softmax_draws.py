"""gumbel_softmax's noise is PyTorch's: ``-empty_like(logits).exponential_().log()``.

chainrule drew NumPy's exponential sampler, so under a seed the soft and hard samples (and
the generator's state after them) differed from PyTorch's. The noise now comes from the
exponential_ kernel PyTorch uses; what remains are last-ulp differences of log/exp/softmax.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule


def _run(lib, dtype, hard, dim):
    lib.manual_seed(0)
    x = lib.linspace(-2, 2, 60, dtype=getattr(lib, dtype)).reshape(6, 10).requires_grad_()
    y = lib.nn.functional.gumbel_softmax(x, tau=0.7, hard=hard, dim=dim)
    (y * lib.arange(60.0, dtype=x.dtype).reshape(6, 10)).sum().backward()
    after = lib.rand(3, dtype=lib.float64)
    return y.detach().numpy(), x.grad.numpy(), after.numpy(), type(y.grad_fn).__name__


@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samples_and_gradients_as_pytorch(dtype, hard, dim):
    y, grad, after, node = _run(torch, dtype, hard, dim)
    ours_y, ours_grad, ours_after, ours_node = _run(chainrule, dtype, hard, dim)
    assert ours_node == node
    np.testing.assert_array_equal(ours_after, after)
    tight = {"float32": 1e-6, "float64": 1e-14}[dtype]
    np.testing.assert_allclose(ours_y, y, rtol=tight, atol=tight)
    scale = float(np.abs(grad).max())  # (softmax's gradient cancels: compare at its scale)
    np.testing.assert_allclose(ours_grad, grad, rtol=0, atol=scale * tight * 10)
    if hard:  # the same one-hot choice in every row/column
        np.testing.assert_array_equal(ours_y, y)
