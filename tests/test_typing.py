"""Type checkers accept PyTorch-style code written against chainrule, and still catch errors.

Most of ``Tensor``'s methods and operators are attached at import time; the generated stub
``chainrule/_tensor_methods.pyi`` declares them (see ``chainrule/_stubgen.py``). These tests
check that the committed stub is the one the generator writes now, and run mypy and pyright
(both installed by ``make test``, offline) on a sample program written as PyTorch users write
it, and on one with genuine errors that must still be reported.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import chainrule
from chainrule import _stubgen

SRC = Path(chainrule.__file__).resolve().parent.parent

# The way PyTorch users write it (it also runs, under chainrule and under PyTorch: see
# test_sample_runs). ``assert_type`` lines make an all-``Any`` stub fail the type checkers.
SAMPLE = '''\
from typing import assert_type

import chainrule as torch
import chainrule.nn as nn
import chainrule.nn.functional as F
from chainrule import optim

torch.manual_seed(0)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float32, requires_grad=True)
y = x + 1
z = 2 * y - x / 3 + y * y - 1.5
loss = (z ** 2).mean() + z.sum()
assert_type(loss, torch.Tensor)
loss.backward()
g = x.grad
assert_type(g, torch.Tensor | None)
assert g is not None
assert_type(g.shape, torch.Size)
assert_type(x.shape[0], int)
assert_type(x.size(), torch.Size)
assert_type(x.size(1), int)
rows: int = x.shape[0] + x.size(1) + x.dim() + x.numel()
value: float = x.sum().item()
flag: bool = x.requires_grad and x.is_leaf

a = torch.randn(3, 4)
b = torch.zeros(2, 4)
c = torch.cat([a, b])
c = torch.cat([a, b], dim=0)
assert_type(c, torch.Tensor)
first = a[0]
assert_type(first, torch.Tensor)
corner = a[:2, 1:]
a[0, 0] = 5.0
a.add_(1)
a.mul_(2).relu_()
a -= 0.5
mask = (a > 0) & (a < 10)
masked = a.masked_fill(~mask, 0.0)
m = a.mean(dim=1, keepdim=True)
v = a @ a.T
p = -a.abs() ** 2
values, indices = a.max(dim=1)
best = a.max(1).indices
assert_type(best, torch.Tensor)
parts = a.split(2)
assert_type(parts, tuple[torch.Tensor, ...])
for part in parts:
    part.exp()
q = a.view(-1).reshape(2, 6).permute(1, 0).contiguous()
q = a.to(torch.float64).float().detach().clone()
q = a.unsqueeze(0).squeeze(0).transpose(0, 1).t()
s = a.softmax(dim=-1).log_softmax(-1)
same = bool((a == a).all())

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
layer = nn.Linear(4, 8, bias=False)
out = model(a)
h = F.relu(layer(a))
h = nn.functional.relu(h)
target = torch.ones(3, 1)
mse = F.mse_loss(out, target)
opt = optim.SGD(model.parameters(), lr=0.1)
opt.zero_grad()
mse.backward()
opt.step()
with torch.no_grad():
    for param in model.parameters():
        assert_type(param, nn.Parameter)
        assert_type(param.add_(0), nn.Parameter)
adam = optim.Adam(model.parameters(), lr=1e-3)

w = torch.tensor([1.0, 2.0], requires_grad=True)
f = (w * w).sum()
(gw,) = torch.autograd.grad(f, w, create_graph=True)
assert_type(gw, torch.Tensor)
gw.sum().backward()
with torch.no_grad():
    w.sub_(0.1 * gw)
    w -= 1
w.grad = None
print(torch.is_grad_enabled(), w.requires_grad, w.grad_fn, w.dtype, w.device)
'''

# Genuine errors: mypy must report exactly these (line, error code), pyright these lines.
BAD = '''\
import chainrule as torch
import chainrule.nn as nn

t = torch.ones(2, 3)
t.no_such_method()  # E: attr-defined
u = t + "1"  # E: operator
v = t.view_as("a")  # E: arg-type
n: int = t.sum()  # E: assignment
rows: str = t.shape[0]  # E: assignment
layer = nn.Linear("4", 8)  # E: arg-type
first, second = t.split(1)
first.no_such_attribute  # E: attr-defined
'''


def _expected_errors(source: str) -> set[tuple[int, str]]:
    return {
        (number, match.group(1))
        for number, line in enumerate(source.splitlines(), 1)
        if (match := re.search(r"# E: ([\w-]+)", line))
    }


def _write(tmp_path: Path) -> tuple[Path, Path]:
    good = tmp_path / "sample_good.py"
    bad = tmp_path / "sample_bad.py"
    good.write_text(SAMPLE)
    bad.write_text(BAD)
    return good, bad


# ----------------------------------------------------------------------------------------------
# the stub


def test_stub_is_up_to_date() -> None:
    expected = _stubgen.generate()
    current = _stubgen.STUB_PATH.read_text(encoding="utf-8")
    if current != expected:
        diff = "".join(list(difflib.unified_diff(
            current.splitlines(keepends=True), expected.splitlines(keepends=True),
            "committed", "generated",
        ))[:60])
        pytest.fail(
            f"{_stubgen.STUB_PATH.name} is out of date (an op was added or changed?): run "
            f"`{_stubgen.COMMAND}` and commit the result.\n{diff}"
        )


def test_stub_declares_every_runtime_member() -> None:
    tree = ast.parse(_stubgen.STUB_PATH.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorMethods")
    declared = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    declared |= {n.target.id for n in cls.body
                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    declared |= _stubgen.static_names()
    runtime = {
        name for name in vars(chainrule.Tensor)
        if (not name.startswith("_") or (name.startswith("__") and name.endswith("__")))
        and name not in ("__doc__", "__module__", "__weakref__", "__slots__", "__dict__")
    }
    assert runtime - declared == set()
    # and nothing the stub declares is missing at run time
    assert {n for n in declared if not hasattr(chainrule.Tensor, n)} == set()


def test_stub_is_for_type_checkers_only() -> None:
    code = textwrap.dedent('''
        import sys
        import chainrule
        print(sorted(m for m in ("chainrule._stubgen", "chainrule._tensor_methods", "mypy")
                     if m in sys.modules))
        print(chainrule.Tensor.__mro__ == (chainrule.Tensor, object))
    ''')
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert result.stdout.split("\n")[:2] == ["[]", "True"], result.stdout + result.stderr


def test_package_all_lists_match_their_modules() -> None:
    """``nn.modules`` and ``ops.nn_ops`` spell ``__all__`` out (mypy reads only literal lists):
    they must list what their modules export."""
    from chainrule.nn import modules
    from chainrule.ops import nn_ops

    layers = ["Module"]
    for name in ("activation", "adaptive", "attention", "container", "conv", "distance", "dropout",
                 "flatten", "fold", "lazy", "linear", "local_norms", "loss", "margin_losses",
                 "normalization", "padding", "pooling", "random_activations", "rnn",
                 "shuffle", "sparse", "transformer", "unpooling", "upsampling"):
        layers += getattr(modules, name).__all__
    assert modules.__all__ == layers
    ops = [name for module in nn_ops._MODULES for name in module.__all__]
    assert nn_ops.__all__ == ops


def test_sample_runs() -> None:
    """The sample is real code: it runs under chainrule, and under PyTorch as it is."""
    import torch

    states = chainrule.get_rng_state(), torch.get_rng_state()  # (the sample seeds both)
    try:
        exec(compile(SAMPLE, "sample_good.py", "exec"), {})
        torch_sample = SAMPLE.replace("chainrule", "torch")
        exec(compile(torch_sample, "sample_good_torch.py", "exec"), {})
    finally:
        chainrule.set_rng_state(states[0])
        torch.set_rng_state(states[1])


# ----------------------------------------------------------------------------------------------
# the type checkers


def test_mypy(tmp_path: Path) -> None:
    try:
        from mypy import api
    except ImportError as error:
        pytest.fail(f"mypy is not installed ({error}): `make test` installs the dev extra")
    good, bad = _write(tmp_path)
    config = tmp_path / "mypy.ini"
    # chainrule found on mypy_path (this tree's sources) and checked as an installed package
    # is: its own code's errors are not reported, only the samples'.
    config.write_text(textwrap.dedent(f"""\
        [mypy]
        mypy_path = {SRC}
        python_version = 3.11
        cache_dir = {tmp_path / "cache"}
        show_error_codes = True
        [mypy-chainrule.*]
        follow_imports = silent
    """))
    stdout, stderr, status = api.run(
        ["--config-file", str(config), "--no-error-summary", str(good), str(bad)]
    )
    lines = [line for line in stdout.splitlines() if ": error: " in line]
    good_errors = [line for line in lines if line.startswith(str(good))]
    assert good_errors == [], "\n".join(good_errors) + stderr
    reported = set()
    for line in lines:
        if line.startswith(str(bad)):
            match = re.match(r".*?:(\d+): error: .*\[([\w-]+)\]$", line)
            assert match, line
            reported.add((int(match.group(1)), match.group(2)))
    assert reported == _expected_errors(BAD), stdout + stderr
    assert status == 1


def test_pyright(tmp_path: Path) -> None:
    try:
        import pyright  # noqa: F401 - the package that runs the bundled pyright
    except ImportError as error:
        pytest.fail(f"pyright is not installed ({error}): `make test` installs the dev extra")
    good, bad = _write(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "include": [good.name, bad.name],
        "extraPaths": [str(SRC)],
        "pythonVersion": "3.11",
        "typeCheckingMode": "standard",
    }))
    # --outputjson: no version check over the network; the wheel bundles pyright itself and
    # (the nodejs extra) a Node.js runtime, so nothing is downloaded.
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable,
         "-p", str(tmp_path / "pyrightconfig.json")],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run: {result.stdout}\n{result.stderr}")
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    good_errors = [d for d in errors if Path(d["file"]).name == good.name]
    assert good_errors == [], json.dumps(good_errors, indent=1)
    bad_lines = {
        d["range"]["start"]["line"] + 1 for d in errors if Path(d["file"]).name == bad.name
    }
    assert bad_lines == {line for line, _ in _expected_errors(BAD)}, json.dumps(errors, indent=1)
