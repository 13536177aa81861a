"""nn.utils.stateless.functional_call against PyTorch: the deprecated name warns as PyTorch's
does, calls the module with the given tensors and leaves the module's own in place."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _run(lib: Any) -> tuple:
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2)).double()
    own = {k: v.detach().clone() for k, v in model.state_dict().items()}
    given = {k: lib.tensor(rng.standard_normal(tuple(v.shape))) for k, v in own.items()}
    given["1.num_batches_tracked"] = lib.tensor(0)
    given["1.running_var"] = given["1.running_var"].abs()
    x = lib.tensor(rng.standard_normal((4, 3)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lib.nn.utils.stateless.functional_call(model, given, (x,))
    kept = all(bool((model.state_dict()[k] == v).all()) for k, v in own.items())
    messages = [(w.category.__name__, str(w.message)) for w in caught]
    return out.detach().numpy(), kept, messages


def test_functional_call_matches_torch() -> None:
    theirs, ours = _run(torch), _run(chainrule)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1] == theirs[1] is True
    assert [(c, m.replace("chainrule", "torch")) for c, m in ours[2]] == theirs[2]


def test_errors_match_torch() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        same_outcome(
            lambda lib: lib.nn.utils.stateless.functional_call(
                lib.nn.Linear(2, 2), {"nothing": lib.ones(2)}, (lib.ones(2),), strict=True
            )
        )
