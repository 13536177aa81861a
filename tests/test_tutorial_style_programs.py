"""Programs written in the style of the official PyTorch tutorials (parametrizations, weight
and spectral norm, ``import torch.functional``, Muon), run unchanged with
``python -m chainrule run`` and with the real PyTorch in subprocesses: the printed output must
be the same. Plus ``torch.functional``'s names and ``broadcast_shapes`` against PyTorch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import chainrule
import chainrule.functional

from .conftest import torch
from .outcomes import same_outcome

ROOT = Path(__file__).resolve().parent.parent

# Deterministic: weights are set from arange, outputs rounded where float32 sums may differ in
# the last bit.
PARAMETRIZE_PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parametrizations


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu(1)


layer = nn.Linear(3, 3)
with torch.no_grad():
    layer.weight.copy_(torch.arange(9.0).reshape(3, 3) / 10)
    layer.bias.zero_()
parametrize.register_parametrization(layer, "weight", Symmetric())
print(layer)
print(layer.weight)
print(sorted(dict(layer.named_parameters())))
print(parametrize.is_parametrized(layer), parametrize.type_before_parametrizations(layer).__name__)
out = layer(torch.ones(2, 3))
out.sum().backward()
print(layer.parametrizations.weight.original.grad)
with parametrize.cached():
    print(layer.weight is layer.weight)
parametrize.remove_parametrizations(layer, "weight")
print(type(layer).__name__, layer.weight)

cnn = nn.Conv2d(2, 2, 2)
parametrize.register_parametrization(cnn, "weight", Skew())
cnn.weight = torch.zeros(2, 2, 2, 2)
print(cnn.weight.abs().sum())

wn = parametrizations.weight_norm(nn.Linear(4, 2))
print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)
sn = parametrizations.spectral_norm(nn.Linear(4, 2))
print(sorted(sn.state_dict()))
old = torch.nn.utils.spectral_norm(nn.Linear(4, 2))
print(sorted(old.state_dict()))
orth = parametrizations.orthogonal(nn.Linear(3, 3))
Q = orth.weight
print(torch.dist(Q.T @ Q, torch.eye(3)) < 1e-5)
"""

FUNCTIONAL_AND_MUON_PROGRAM = """
import torch
import torch.functional as F

print(F.broadcast_shapes((2, 1), (3,)))
print(F.einsum("ij,j->i", torch.arange(6.0).reshape(2, 3), torch.ones(3)))
print(F.split(torch.arange(5), 2))
print(torch.functional.unique(torch.tensor([3, 1, 3])))

w = torch.nn.Parameter(torch.arange(6.0).reshape(3, 2) / 6)
opt = torch.optim.Muon([w], lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
print(w.round(decimals=3))
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "program", [PARAMETRIZE_PROGRAM, FUNCTIONAL_AND_MUON_PROGRAM], ids=["parametrize", "muon"]
)
def test_program_prints_what_pytorch_prints(program: str, tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(program)
    theirs = _run([str(script)], tmp_path)
    assert theirs.returncode == 0, theirs.stderr
    ours = _run(["-m", "chainrule", "run", str(script)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


def test_torch_functional_names() -> None:
    import torch.functional as theirs

    missing = {"istft", "stft", "pca_lowrank", "svd_lowrank"}  # not in chainrule yet
    assert set(chainrule.functional.__all__) == set(theirs.__all__) - missing
    for name in chainrule.functional.__all__:
        if name != "broadcast_shapes":
            assert getattr(chainrule.functional, name) is getattr(chainrule, name), name


@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 3), (4,)),
        ((2, 1), (1, 3), 5),
        ((-1,),),
        ("a",),
        ((2,), (1, 2)),
        (),
        ((2,), None, [3, 1]),
        ((0,), (1,)),
        ((3,), (0,)),
        (3, 3),
        ((1, 3), 4.0),
    ],
)
def test_broadcast_shapes_matches_torch(shapes: tuple) -> None:
    same_outcome(lambda lib: lib.functional.broadcast_shapes(*shapes))


def test_torch_functional_is_importable_as_in_pytorch() -> None:
    assert torch.functional.broadcast_shapes((1,), (2,)) == (2,)
    assert chainrule.functional.broadcast_shapes((1,), (2,)) == (2,)


VERSION_PROGRAM = """
import torch

v = torch.__version__
print(type(v).__name__, v.split("+")[0], v >= "2.0", v >= (2, 13), v < "2.14", v > "2.13.0rc1")
print(torch.version.cuda, torch.version.hip, isinstance(v, str))
print(torch.version.__version__ == v, torch.torch_version.TorchVersion is type(v))
"""


def test_version_checks_behave_as_under_pytorch(tmp_path: Path) -> None:
    script = tmp_path / "version.py"
    script.write_text(VERSION_PROGRAM)
    theirs = _run([str(script)], tmp_path)
    ours = _run(["-m", "chainrule", "run", str(script)], tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


@pytest.mark.parametrize(
    "other",
    [
        "2.13",
        "2.14",
        "2.13.0",
        "2.13.1a0",
        "2.9",
        "10.0",
        (2, 13),
        (2, 13, 0),
        "2.13.0rc1",
        "2.13.0.post1",
        "2.13.0.dev20240101",
        "abc",
        "2.13.0+zzz",
        "2.13.0+aaa",
        "1!2.0",
    ],
)
def test_torch_version_compares_as_pytorchs(other: object) -> None:
    from torch.torch_version import TorchVersion as TheirTorchVersion

    from chainrule.torch_version import PYTORCH_API_VERSION, TorchVersion

    ours, theirs = TorchVersion(PYTORCH_API_VERSION), TheirTorchVersion(PYTORCH_API_VERSION)
    for compare in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
        assert getattr(ours, compare)(other) == getattr(theirs, compare)(other), compare
    assert str(ours) == str(theirs) and hash(ours) == hash(theirs)
