"""``batch_norm`` under ``vmap`` against ``torch.func``: every example normalised with its own
statistics (training), running statistics of each example updated in place, unbatched running
statistics read in eval mode and refused in training (PyTorch's error), and the model-ensembling
tutorial's program with BatchNorm models made vmap-ready by ``replace_all_batch_norm_modules_``
(values and per-model gradients)."""

from __future__ import annotations

from copy import deepcopy

import numpy as np
import pytest

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(13)
X = RNG.standard_normal((3, 5, 4, 2))  # (vmap batch, N, C, L)
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
MEAN = RNG.standard_normal((3, 4))
VAR = RNG.uniform(0.5, 2.0, (3, 4))


def _t(lib, a, dtype="float64"):
    return lib.tensor(np.ascontiguousarray(a).astype(dtype))


def _run(lib, case, dtype="float64"):
    F = lib.nn.functional
    x, w, b = _t(lib, X, dtype), _t(lib, W, dtype), _t(lib, B, dtype)
    mean, var = _t(lib, MEAN, dtype), _t(lib, VAR, dtype)
    vmap = lib.func.vmap
    if case == "training_batched_params":
        out = vmap(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True))(x, w, b)
        return (out,)
    if case == "training_unbatched_input":
        out = vmap(
            lambda x, w: F.batch_norm(x, None, None, w, None, training=True), in_dims=(None, 0)
        )(x[0], w)
        return (out,)
    if case == "training_running_stats":
        out = vmap(lambda x, m, v: F.batch_norm(x, m, v, training=True, momentum=0.3))(x, mean, var)
        return out, mean, var
    if case == "running_stats_not_contiguous":
        mean_t, var_t = _t(lib, MEAN.T, dtype), _t(lib, VAR.T, dtype)
        out = vmap(lambda x, m, v: F.batch_norm(x, m, v, training=True), in_dims=(0, 1, 1))(
            x, mean_t, var_t
        )
        return out, mean_t, var_t
    if case == "eval_unbatched_stats":
        out = vmap(lambda x: F.batch_norm(x, mean[0], var[0], w[0], b[0], training=False))(x)
        return (out,)
    if case == "eval_batched_stats":
        out = vmap(lambda x, m, v: F.batch_norm(x, m, v, training=False))(x, mean, var)
        return (out,)
    if case == "image_input":
        images = _t(lib, RNG.standard_normal((2, 3, 4, 3, 3)), dtype)
        out = vmap(lambda x, w: F.batch_norm(x, None, None, w, training=True), in_dims=(0, 0))(
            images, w[:2]
        )
        return (out,)
    if case == "per_example_gradients":

        def loss(w, b, x):
            y = F.batch_norm(x, None, None, w, b, training=True)
            return (y.sin() * x).sum()

        return lib.func.vmap(lib.func.grad(loss, argnums=(0, 1, 2)))(w, b, x)
    raise AssertionError(case)


CASES = [
    "training_batched_params",
    "training_unbatched_input",
    "training_running_stats",
    "running_stats_not_contiguous",
    "eval_unbatched_stats",
    "eval_batched_stats",
    "image_input",
    "per_example_gradients",
]


@pytest.mark.parametrize("case", CASES)
def test_batch_norm_under_vmap(case: str) -> None:
    global RNG
    RNG = np.random.default_rng(3)
    theirs = _run(torch, case)
    RNG = np.random.default_rng(3)
    FALLBACK_COUNTS.clear()
    ours = _run(chainrule, case)
    assert not FALLBACK_COUNTS, FALLBACK_COUNTS
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_batch_norm_float32() -> None:
    ours = _run(chainrule, "training_running_stats", "float32")
    theirs = _run(torch, "training_running_stats", "float32")
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


def _unbatched_running_stats_error(lib):
    F = lib.nn.functional
    mean, var = _t(lib, MEAN[0]), _t(lib, VAR[0])
    try:
        lib.func.vmap(lambda x: F.batch_norm(x, mean, var, training=True))(_t(lib, X))
    except RuntimeError as error:
        return normalise_output(str(error)), mean.tolist()
    return None


def test_unbatched_running_stats_in_training_are_refused() -> None:
    theirs = _unbatched_running_stats_error(torch)
    assert theirs is not None
    assert _unbatched_running_stats_error(chainrule) == theirs


def ensembling_with_batch_norm(torch, data, weights_from=None):
    """The model-ensembling tutorial's program with models that use BatchNorm, patched with
    ``replace_all_batch_norm_modules_`` as functorch's docs say; per-model gradients too."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.bn2d = nn.BatchNorm2d(4)
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(4 * 4 * 4, 5)
            self.bn1d = nn.BatchNorm1d(5)

        def forward(self, x):
            x = self.bn2d(self.conv(x)).relu()
            return self.bn1d(self.fc(self.flatten(x)))

    models = [Net() for _ in range(3)]
    for k, model in enumerate(models):
        torch.func.replace_all_batch_norm_modules_(model)
        if weights_from is not None:
            with torch.no_grad():
                for p, q in zip(model.parameters(), weights_from[k].parameters(), strict=True):
                    p.copy_(torch.tensor(q.detach().numpy()))
    params, buffers = torch.func.stack_module_state(models)
    base = deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return torch.func.functional_call(base, (params, buffers), (x,))

    minibatches = torch.tensor(data)
    minibatch = minibatches[0]
    loop = torch.stack([model(minibatch) for model in models])
    same_data = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert torch.allclose(same_data, loop, atol=1e-4, rtol=1e-4)
    different_data = torch.vmap(fmodel)(params, buffers, minibatches)

    def loss(params, buffers, x):
        return (fmodel(params, buffers, x) ** 2).mean()

    grads = torch.func.vmap(torch.func.grad(loss), in_dims=(0, 0, None))(params, buffers, minibatch)
    return models, [same_data, different_data, *grads.values()]


def test_model_ensembling_with_batch_norm() -> None:
    data = np.random.default_rng(4).standard_normal((3, 6, 1, 6, 6)).astype(np.float32)
    theirs_models, theirs = ensembling_with_batch_norm(torch, data)
    FALLBACK_COUNTS.clear()
    _, ours = ensembling_with_batch_norm(chainrule, data, theirs_models)
    assert not FALLBACK_COUNTS, FALLBACK_COUNTS
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def _ensemble_tracking_running_stats(torch, data, weights_from=None, training=True):
    """An ensemble of BatchNorm models that keep running statistics (no patching): under vmap
    each model's stacked buffers are updated in place, num_batches_tracked counted per model."""
    nn = torch.nn
    models = [nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)) for _ in range(2)]
    for k, model in enumerate(models):
        if weights_from is not None:
            with torch.no_grad():
                for p, q in zip(model.parameters(), weights_from[k].parameters(), strict=True):
                    p.copy_(torch.tensor(q.detach().numpy()))
        model.train(training)
    params, buffers = torch.func.stack_module_state(models)
    base = deepcopy(models[0]).to("meta")

    def fmodel(p, b, x):
        return torch.func.functional_call(base, (p, b), (x,))

    out = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, torch.tensor(data))
    return models, [out, *buffers.values()]


@pytest.mark.parametrize("training", [True, False])
def test_ensemble_with_running_statistics(training: bool) -> None:
    data = np.random.default_rng(6).standard_normal((5, 3)).astype(np.float32)
    theirs_models, theirs = _ensemble_tracking_running_stats(torch, data, training=training)
    ours_models, ours = _ensemble_tracking_running_stats(
        chainrule, data, theirs_models, training=training
    )
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        assert_close(a, b, rtol=1e-5, atol=1e-6)
