"""``functorch``, the package PyTorch installs next to ``torch`` (its deprecated transforms and
``make_functional`` / ``make_functional_with_buffers`` / ``combine_state_for_ensemble``), as
``chainrule._functorch``: ``python -m chainrule run`` answers ``import functorch`` with it
(before, the real functorch was imported and failed on ``torch._functorch``). Compared with
PyTorch's functorch: values, gradients, the FutureWarnings (text, category, the line they
point at) and the errors."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import functorch as theirs
import numpy as np
import pytest

import chainrule
from chainrule import _functorch as ours

from .conftest import torch

ROOT = Path(__file__).resolve().parent.parent


def _model(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(), lib.nn.Linear(4, 2)
    )


def _copy_state(source: Any, target: Any) -> None:
    target.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in source.state_dict().items()})


def _caught(fn: Any, *args: Any) -> tuple[Any, list[Any]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    # (FutureWarnings only: PyTorch's first transforms import modules that warn otherwise)
    return result, [
        (w.category, str(w.message), Path(w.filename).name)
        for w in caught
        if w.category is FutureWarning
    ]


def _grad(ft: Any, loss: Any, *args: Any) -> Any:
    return ft.grad(loss)(*args)


def _vmapped(ft: Any, func: Any, *args: Any) -> Any:
    return ft.vmap(func, (0, 0, None))(*args)


def test_make_functional_with_buffers_and_grad():
    results = {}
    data = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    target = np.cos(np.arange(10, dtype=np.float32)).reshape(5, 2)
    torch_model = _model(torch)
    for lib, ft in ((torch, theirs), (chainrule, ours)):
        model = _model(lib)
        if lib is chainrule:
            _copy_state(torch_model, model)
        (func, params, buffers), made = _caught(ft.make_functional_with_buffers, model)
        x, t = lib.tensor(data), lib.tensor(target)

        def loss(params, buffers, x, t, lib=lib, func=func):
            return lib.nn.functional.mse_loss(func(params, buffers, x), t)

        grads, graded = _caught(_grad, ft, loss, params, buffers, x, t)
        out = func(params, buffers, x)
        results[lib.__name__] = dict(
            out=out.detach().numpy(),
            grads=[g.detach().numpy() for g in grads],
            grads_require=[g.requires_grad for g in grads],
            kinds=[type(p).__name__ for p in params] + [p.requires_grad for p in params],
            buffers=[b.numpy() for b in buffers],
            model_params=[p.device.type for p in func.stateless_model.parameters()],
            warnings=made + graded,
            fresh=[p is not q for p, q in zip(params, model.parameters(), strict=True)],
        )
    mine, reference = results["chainrule"], results["torch"]
    np.testing.assert_allclose(mine["out"], reference["out"], rtol=1e-6)
    for a, b in zip(mine["grads"], reference["grads"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # (a bias before batch norm: ~0)
    for a, b in zip(mine["buffers"], reference["buffers"], strict=True):
        # (running statistics of a 2-d batch: within ulps, tests/test_nn_batch_norm.py)
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for key in ("kinds", "model_params", "warnings", "fresh", "grads_require"):
        assert mine[key] == reference[key], key
    assert reference["warnings"][0][2] == Path(__file__).name


def test_make_functional_of_tied_weights_and_its_errors():
    for lib, ft in ((torch, theirs), (chainrule, ours)):
        lib.manual_seed(0)
        first = lib.nn.Linear(2, 2)
        model = lib.nn.Sequential(first, lib.nn.ReLU(), first)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func, params = ft.make_functional(model)
            assert len(params) == 2
            x = lib.ones(1, 2)
            doubled = [p * 2 for p in params]
            weight, bias = 2 * first.weight, 2 * first.bias
            expected = lib.relu(x @ weight.t() + bias) @ weight.t() + bias
            np.testing.assert_allclose(
                func(doubled, x).detach().numpy(), expected.detach().numpy(), rtol=1e-6
            )
            _, frozen = ft.make_functional(model, disable_autograd_tracking=True)
            assert not any(p.requires_grad for p in frozen)
            with pytest.raises(RuntimeError) as error:
                ft.make_functional(lib.nn.BatchNorm1d(2))
            assert str(error.value) == (
                "make_functional(model): `model` has buffers. Please use "
                "make_functional_with_buffers(model) instead."
            )
            for models, message in (
                ([], "combine_state_for_ensemble: Expected at least one model, got 0."),
                (
                    [lib.nn.Linear(1, 1), lib.nn.Linear(1, 1).eval()],
                    "combine_state_for_ensemble: Expected all models to have the same "
                    "training/eval mode.",
                ),
                (
                    [lib.nn.Linear(1, 1), lib.nn.ReLU()],
                    "combine_state_for_ensemble: Expected all models to be of the same class.",
                ),
            ):
                with pytest.raises(RuntimeError) as error:
                    ft.combine_state_for_ensemble(models)
                assert str(error.value) == message


def test_combine_state_for_ensemble_with_vmap():
    results = {}
    data = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    for lib, ft in ((torch, theirs), (chainrule, ours)):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(3)]
        if lib is chainrule:
            for mine, reference in zip(models, results["torch"]["models"], strict=True):
                _copy_state(reference, mine)
        (func, params, buffers), w1 = _caught(ft.combine_state_for_ensemble, models)
        out, w2 = _caught(_vmapped, ft, func, params, buffers, lib.tensor(data))
        results[lib.__name__] = dict(
            models=models,
            out=out.detach().numpy(),
            shapes=[tuple(p.shape) for p in params],
            leaves=[(p.requires_grad, p.grad_fn is None) for p in params],
            warnings=w1 + w2,
        )
    mine, reference = results["chainrule"], results["torch"]
    np.testing.assert_allclose(mine["out"], reference["out"], rtol=1e-5)
    for key in ("shapes", "leaves", "warnings"):
        assert mine[key] == reference[key], key


def test_the_transforms_warn_as_pytorchs():
    x = np.linspace(0.1, 1, 4)
    for name, call in (
        (
            "jvp",
            lambda ft, lib: ft.jvp(lib.sin, (lib.tensor(x),), (lib.ones(4, dtype=lib.float64),)),
        ),
        ("vjp", lambda ft, lib: ft.vjp(lib.sin, lib.tensor(x))[0]),
        ("jacrev", lambda ft, lib: ft.jacrev(lib.sin)(lib.tensor(x))),
        ("jacfwd", lambda ft, lib: ft.jacfwd(lib.sin)(lib.tensor(x))),
        ("hessian", lambda ft, lib: ft.hessian(lambda y: y.sin().sum())(lib.tensor(x))),
        (
            "grad_and_value",
            lambda ft, lib: ft.grad_and_value(lambda y: y.sin().sum())(lib.tensor(x)),
        ),
        ("functionalize", lambda ft, lib: ft.functionalize(lambda y: y * 2)(lib.tensor(x))),
    ):
        got = {}
        for lib, ft in ((torch, theirs), (chainrule, ours)):
            value, caught = _caught(call, ft, lib)
            flat = value if isinstance(value, tuple) else (value,)
            got[lib.__name__] = ([np.asarray(item.detach().numpy()) for item in flat], caught)
        for a, b in zip(got["chainrule"][0], got["torch"][0], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=name)
        assert got["chainrule"][1] == got["torch"][1], name


def test_chainrule_run_answers_import_functorch(tmp_path):
    script = tmp_path / "uses_functorch.py"
    script.write_text(
        "import sys\n"
        "import torch\n"
        "import functorch as ft\n"
        "from functorch import make_functional\n"
        "assert 'site-packages/functorch' not in ft.__file__, ft.__file__\n"
        "model = torch.nn.Linear(2, 1)\n"
        "func, params = make_functional(model)\n"
        "print(func(params, torch.ones(1, 2)).shape, ft.__version__ == torch.__version__)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "chainrule", "run", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "torch.Size([1, 1]) True\n"
