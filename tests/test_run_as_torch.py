"""Running PyTorch code unchanged: ``python -m chainrule run script.py`` and
``chainrule.install_as_torch()`` make ``import torch`` give chainrule's own modules, and every
subpackage of chainrule is an attribute of the package, imported on first use.

The scripts run in subprocesses (a fresh interpreter in which the real PyTorch is never
imported); a script's output under chainrule is compared with its output under PyTorch.
"""

from __future__ import annotations

import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import chainrule

ROOT = Path(__file__).resolve().parent.parent

# A small PyTorch program as users write it: a module class, a data loader, an optimizer,
# functional ops, autograd.grad, argparse, printed tensors.
TRAINING_SCRIPT = """
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset
import torch.linalg
import torch.autograd.functional
from torch import autograd


class Net(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--hidden", type=int, default=3)
args = parser.parse_args()
print("argv", sys.argv[1:], __name__)

x = torch.linspace(-1, 1, 16).reshape(8, 2)
y = (x[:, :1] * 2 - x[:, 1:]).sin()
model = Net(args.hidden)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) * 0.1 - 0.2 * i)
opt = optim.Adam(model.parameters(), lr=0.05)
loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)
for epoch in range(args.epochs):
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
    print(epoch, f"{loss.item():.5f}")
print(model)
print(model.fc1.weight)
print(isinstance(model.fc1.weight, torch.Tensor), isinstance(model.fc1.weight, nn.Parameter))
print(torch.linalg.norm(torch.tensor([3.0, 4.0])))
print(torch.autograd.functional.jacobian(lambda t: t ** 2, torch.tensor([1.0, 2.0])))
w = torch.tensor(3.0, requires_grad=True)
print(autograd.grad(w ** 3, w))
print(F.softmax(torch.tensor([[1.0, 2.0], [0.5, -1.0]]), dim=1))
# reprs name torch: dtypes, sizes, float64 and empty tensors, legacy type names
d = torch.arange(3, dtype=torch.float64) / 3
print(d, d.dtype, d.shape, x.size(), d.type(), torch.zeros(0, 2, dtype=torch.int32))
print(torch.ones(2, 2, dtype=torch.float16) * 1e-5, [torch.int64, torch.bool])
sys.exit(3)
"""


def _run(
    args: list[str], cwd: Path, code_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    env.update(code_env or {})
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_run_gives_the_script_pytorchs_output(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAINING_SCRIPT)
    args = ["--epochs", "3", "--hidden", "4"]
    ours = _run(["-m", "chainrule", "run", str(script), *args], tmp_path)
    theirs = _run([str(script), *args], tmp_path)
    assert theirs.returncode == 3, theirs.stderr
    assert ours.returncode == 3, ours.stderr
    assert ours.stdout == theirs.stdout
    assert "argv ['--epochs', '3', '--hidden', '4'] __main__" in ours.stdout


CHECK_SCRIPT = """
import sys
import chainrule
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim
import torch.linalg
import torch.autograd.functional
import torch.utils.data
from torch.utils.data import DataLoader
from torch.nn import Linear

assert torch is chainrule, torch
assert nn is chainrule.nn and F is chainrule.nn.functional
assert torch.optim is chainrule.optim and torch.linalg is chainrule.linalg
assert torch.autograd.functional is chainrule.autograd.functional
assert DataLoader is chainrule.utils.data.DataLoader and Linear is chainrule.nn.Linear
assert sys.modules["torch.nn.functional"] is chainrule.nn.functional
assert isinstance(chainrule.ones(1), torch.Tensor)
assert isinstance(chainrule.nn.Linear(1, 1).weight, torch.nn.Parameter)
real = [name for name, module in sys.modules.items()
        if "site-packages/torch/" in (getattr(module, "__file__", None) or "")]
assert not real, real
try:
    import torch.no_such_module
except ModuleNotFoundError as e:
    print("missing:", type(e).__name__, e, e.name)
print("ok", __name__, sys.argv[1:])
"""


def test_run_aliases_chainrule_modules_and_never_imports_real_torch(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text(CHECK_SCRIPT)
    done = _run(["-m", "chainrule", "run", str(script), "x", "-y"], tmp_path)
    assert done.returncode == 0, done.stderr
    # PyTorch's own message for a module it does not have
    assert done.stdout.splitlines() == [
        "missing: ModuleNotFoundError No module named 'torch.no_such_module' torch.no_such_module",
        "ok __main__ ['x', '-y']",
    ]


def test_run_reports_a_missing_script_and_usage(tmp_path: Path) -> None:
    missing = _run(["-m", "chainrule", "run", "nope.py"], tmp_path)
    theirs = _run(["nope.py"], tmp_path)
    assert missing.returncode == theirs.returncode == 2
    assert missing.stderr.split(": ", 1)[1] == theirs.stderr.split(": ", 1)[1]
    assert _run(["-m", "chainrule", "run"], tmp_path).returncode == 2
    helped = _run(["-m", "chainrule", "run", "--help"], tmp_path)
    assert helped.returncode == 0 and "run script.py" in helped.stdout


def test_run_a_module_and_a_failing_script(tmp_path: Path) -> None:
    (tmp_path / "pkgmod.py").write_text(
        "import sys, torch\nprint(torch.ones(2) * 2, sys.argv[1:], __name__)\n"
    )
    done = _run(
        ["-m", "chainrule", "run", "-m", "pkgmod", "a"],
        tmp_path,
        {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{tmp_path}"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "tensor([2., 2.]) ['a'] __main__\n"
    (tmp_path / "bad.py").write_text("import torch\ntorch.ones(2) @ torch.ones(3)\n")
    failed = _run(["-m", "chainrule", "run", "bad.py"], tmp_path)
    theirs = _run(["bad.py"], tmp_path)
    assert failed.returncode == theirs.returncode == 1
    assert failed.stderr.strip().splitlines()[-1] == theirs.stderr.strip().splitlines()[-1]


INSTALL_SCRIPT = """
import sys
import chainrule
chainrule.install_as_torch()
chainrule.install_as_torch()  # a second call changes nothing
assert sys.meta_path.count(sys.meta_path[0]) == 1
import torch.nn.functional as F
from torch.utils.data import DataLoader
import torch
assert torch is chainrule and F is chainrule.nn.functional
assert DataLoader is chainrule.utils.data.DataLoader
assert chainrule._torch_alias.is_installed_as_torch()
print("installed")
"""

REAL_FIRST_SCRIPT = """
import torch
import chainrule
try:
    chainrule.install_as_torch()
except RuntimeError as e:
    print(type(e).__name__, str(e).split(";")[0].split(" (")[0])
import torch as again
assert again.__file__.endswith("site-packages/torch/__init__.py"), again.__file__
"""


def test_install_as_torch_in_a_process(tmp_path: Path) -> None:
    done = _run(["-c", INSTALL_SCRIPT], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "installed\n"
    refused = _run(["-c", REAL_FIRST_SCRIPT], tmp_path)
    assert refused.returncode == 0, refused.stderr
    assert refused.stdout == (
        "RuntimeError install_as_torch(): the real 'torch' is already imported\n"
    )


LAZY_SCRIPT = """
import sys
import chainrule
assert "chainrule.viz" not in sys.modules
assert "chainrule.tools" not in sys.modules
viz = chainrule.viz
assert "chainrule.viz" in sys.modules and viz is sys.modules["chainrule.viz"]
from chainrule import tools
assert tools is chainrule.tools
try:
    chainrule.no_such_name
except AttributeError as e:
    print(e)
print(hasattr(chainrule, "_no_such_private"), hasattr(chainrule, "no_such_name"))
"""


def test_subpackages_load_lazily_on_first_attribute_access(tmp_path: Path) -> None:
    done = _run(["-c", LAZY_SCRIPT], tmp_path)
    assert done.returncode == 0, done.stderr
    try:
        torch.no_such_name  # noqa: B018
    except AttributeError as e:
        theirs = str(e).replace("torch", "chainrule")
    assert done.stdout.splitlines() == [theirs, "False False"]


def test_every_subpackage_is_an_attribute() -> None:
    names = [m.name for m in pkgutil.iter_modules(chainrule.__path__) if not m.name.startswith("_")]
    assert {"nn", "optim", "utils", "viz", "func", "linalg", "autograd"} <= set(names)
    for name in names:
        module = getattr(chainrule, name)
        assert module is sys.modules[f"chainrule.{name}"], name


def test_a_missing_dependency_inside_a_subpackage_is_not_hidden(monkeypatch) -> None:
    # A subpackage that exists but fails to import reports its own error, not "no attribute".
    import importlib

    def failing(name: str) -> None:
        raise ModuleNotFoundError("No module named 'graphviz_x'", name="graphviz_x")

    monkeypatch.setattr(importlib, "import_module", failing)
    try:
        chainrule.__getattr__("viz_like")
    except ModuleNotFoundError as e:
        assert e.name == "graphviz_x"
    else:
        raise AssertionError("the dependency's error was swallowed")


def test_import_time_of_the_package_stays_small() -> None:
    """Lazy subpackages add nothing to ``import chainrule``: viz and tools stay unimported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import chainrule"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert "chainrule" in imported
    assert not {"chainrule.viz", "chainrule.tools", "chainrule.cli"} & imported


SEEDS = sorted((Path(__file__).parent / "seed_examples").glob("s*.py"))


def _exception_line(stderr: str) -> str:
    """The ``SomeError: message`` line of a traceback (its first line)."""
    lines = [
        line for line in stderr.splitlines() if re.match(r"^[A-Za-z_.]+(Error|Exception)", line)
    ]
    return lines[-1].replace("chainrule.", "torch.") if lines else ""


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.stem)
def test_the_seed_articles_run_unchanged(path: Path, tmp_path: Path) -> None:
    """The seed articles' PyTorch code, as written (``import torch``), prints under
    ``python -m chainrule run`` what it prints under PyTorch (object addresses aside), and
    stops with the same exception where it stops."""
    ours = _run(["-m", "chainrule", "run", str(path)], tmp_path)
    theirs = _run([str(path)], tmp_path)
    assert ours.returncode == theirs.returncode, ours.stderr[-2000:]

    def address_free(text: str) -> str:
        return re.sub(r"0x[0-9a-f]+", "0x", text)

    assert address_free(ours.stdout) == address_free(theirs.stdout)
    assert _exception_line(ours.stderr) == _exception_line(theirs.stderr)


def test_the_script_sees_python_script_py_s_sys_path(tmp_path: Path) -> None:
    folder = tmp_path / "scripts"
    folder.mkdir()
    (folder / "helper.py").write_text("VALUE = 'found next to the script'\n")
    (folder / "main.py").write_text(
        "import sys, helper, torch\nprint(sys.path[0], helper.VALUE, torch.tensor([1.5]))\n"
    )
    ours = _run(["-m", "chainrule", "run", "scripts/main.py"], tmp_path)
    theirs = _run(["scripts/main.py"], tmp_path)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
