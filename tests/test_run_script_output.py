"""``python -m chainrule run script.py`` prints what ``python script.py`` prints with PyTorch:
the script's absolute path in warnings and ``__file__``, tracebacks that start at the script's
own frames, exit status 1 on an uncaught exception; and ``torch.accelerator`` answers as on
PyTorch's CPU build."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import chainrule

SCRIPT = textwrap.dedent(
    """\
    import warnings
    import torch
    print(__file__)
    torch.manual_seed(0)
    print(torch.randn(3))
    warnings.warn("careful")
    print(torch.accelerator.is_available(), torch.accelerator.current_accelerator())

    def inner():
        return torch.ones(2) @ torch.ones(3)

    inner()
    """
)


def _run(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="default")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


def _script_frames(stderr: str) -> list[str]:
    """The traceback's header, the script's frames and the exception line (library frames
    differ between the two libraries and are left out)."""
    kept = []
    lines = stderr.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("  File "):
            if "script_under_test.py" in line:
                kept.append(line)
            i += 1
            while i < len(lines) and lines[i].startswith("    "):
                if "script_under_test.py" in line:
                    kept.append(lines[i])
                i += 1
            continue
        if line.startswith("Traceback") or not line.startswith(" "):
            kept.append(line)
        i += 1
    return kept


def test_script_output_warning_paths_and_traceback_as_python(tmp_path):
    script = tmp_path / "script_under_test.py"
    script.write_text(SCRIPT)
    expected = _run([script.name], str(tmp_path))
    got = _run(["-m", "chainrule", "run", script.name], str(tmp_path))
    assert expected.returncode == got.returncode == 1
    assert got.stdout == expected.stdout
    assert str(script) in got.stdout  # (__file__ is absolute)
    assert f"{script}:6: UserWarning: careful" in got.stderr
    assert got.stderr.splitlines()[-1] == expected.stderr.splitlines()[-1]
    ours = _script_frames(got.stderr)
    theirs = _script_frames(expected.stderr)
    assert [line for line in ours if "File" in line] == [line for line in theirs if "File" in line]
    assert "runpy" not in got.stderr and "chainrule/cli" not in got.stderr


NO_DEVICE = ["current_device_index", "synchronize", "get_device_capability", "empty_cache",
             "memory_allocated", "max_memory_allocated", "memory_reserved", "current_stream",
             "get_memory_info", "memory_stats", "reset_peak_memory_stats", "empty_host_cache",
             "max_memory_reserved", "reset_accumulated_memory_stats"]  # fmt: skip


def test_accelerator_answers():
    for lib in (torch, chainrule):
        assert lib.accelerator.is_available() is False
        assert lib.accelerator.device_count() == 0
        assert lib.accelerator.current_accelerator() is None
        assert lib.accelerator.current_accelerator(check_available=True) is None


@pytest.mark.parametrize("name", NO_DEVICE)
def test_accelerator_calls_needing_a_device_raise_as_pytorch(name):
    errors = []
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError) as info:
            getattr(lib.accelerator, name)()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_accelerator_set_device_index_and_deprecated_names():
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            lib.accelerator.set_device_index(0)
        with pytest.warns(FutureWarning, match="Use `current_device_index` instead."):
            with pytest.raises(RuntimeError):
                lib.accelerator.current_device_idx()
        with pytest.warns(FutureWarning, match="Use `set_device_index` instead."):
            with pytest.raises(RuntimeError):
                lib.accelerator.set_device_idx(0)


PRUNING = textwrap.dedent(
    """\
    import torch
    from torch import nn
    import torch.nn.utils.prune as prune

    class Custom(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            return default_mask

    torch.manual_seed(0)
    conv = nn.Conv2d(1, 2, 3)
    prune.random_unstructured(conv, name="weight", amount=0.3)
    prune.l1_unstructured(conv, name="weight", amount=2)
    prune.l1_unstructured(conv, name="bias", amount=1)
    print(conv._forward_pre_hooks)
    print(list(conv._forward_pre_hooks.values())[0]._pruning_methods)
    print(Custom())
    print(conv.weight_mask)
    """
)


def test_pruning_hooks_print_as_pytorch(tmp_path):
    script = tmp_path / "script_under_test.py"
    script.write_text(PRUNING)
    expected = _run([script.name], str(tmp_path))
    got = _run(["-m", "chainrule", "run", script.name], str(tmp_path))
    assert expected.returncode == got.returncode == 0, got.stderr

    def normalised(text):
        return re.sub(r"0x[0-9a-f]+", "0xADDR", text)

    assert normalised(got.stdout) == normalised(expected.stdout)
    assert "torch.nn.utils.prune.RandomUnstructured object at" in got.stdout


def test_pruning_method_repr_names_chainrule_when_not_run_as_torch():
    method = chainrule.nn.utils.prune.L1Unstructured(0.5)
    assert repr(method) == f"<chainrule.nn.utils.prune.L1Unstructured object at {hex(id(method))}>"
