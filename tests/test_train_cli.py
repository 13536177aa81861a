"""``python -m chainrule train``: the digits MLP reaches > 97% test accuracy with the default
settings; the CNN trains; weights and curve are written and reload; options and ``--help``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import chainrule
from chainrule.cli import train


@pytest.mark.slow
def test_default_mlp_run_exceeds_97_percent(tmp_path) -> None:
    result = train.run(out=str(tmp_path), quiet=True)
    assert result["model"] == "mlp" and result["epochs"] == train.DEFAULTS["mlp"]["epochs"]
    assert result["accuracy"] > 0.97
    assert result["test_size"] + result["train_size"] == 1797
    assert len(result["history"]["test_acc"]) == result["epochs"]
    with open(result["curve"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # The saved weights give the same test accuracy in a fresh model.
    model = train.build_model("mlp")
    model.load_state_dict(chainrule.load(result["weights"]))
    model.eval()
    images, labels = train.load_digits_tensors()
    split = chainrule.utils.data.random_split(
        chainrule.utils.data.TensorDataset(images, labels), [0.8, 0.2],
        generator=chainrule.Generator().manual_seed(0))
    index = np.asarray(split[1].indices)
    with chainrule.no_grad():
        predicted = model(images[chainrule.from_numpy(index)]).argmax(1)
    accuracy = float((predicted == labels[chainrule.from_numpy(index)]).float().mean())
    assert accuracy == pytest.approx(result["accuracy"])


@pytest.mark.slow
def test_cnn_command_line(tmp_path, capsys) -> None:
    code = train.main(["--model", "cnn", "--epochs", "4", "--out", str(tmp_path), "--quiet",
                       "--seed", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "cnn: test accuracy" in out and "after 4 epochs" in out
    assert f"weights: {tmp_path}/digits_cnn.safetensors" in out
    assert (tmp_path / "digits_cnn.safetensors").exists()
    assert (tmp_path / "digits_cnn_curve.png").exists()
    accuracy = float(out.split("test accuracy ")[1].split("%")[0])
    assert accuracy > 80  # 4 of the default 15 epochs (which reach about 99%)


@pytest.mark.slow
def test_runs_are_reproducible(tmp_path) -> None:
    first = train.run(epochs=2, out=str(tmp_path / "a"), quiet=True, seed=3)
    second = train.run(epochs=2, out=str(tmp_path / "b"), quiet=True, seed=3)
    assert first["history"] == second["history"]


def test_help_and_bad_options(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--epochs", "--lr", "--batch-size", "--model", "--seed", "--out"):
        assert option in text
    for argv in (["--model", "rnn"], ["--epochs", "0"], ["--lr", "-1"]):
        with pytest.raises(SystemExit) as exit_info:
            train.main(argv)
        assert exit_info.value.code == 2
    with pytest.raises(ValueError, match="unknown model 'rnn'"):
        train.build_model("rnn")


def test_python_m_chainrule_train_dispatches() -> None:
    done = subprocess.run([sys.executable, "-m", "chainrule", "train", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m chainrule train")


def test_missing_training_extra_says_what_to_install(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    assert train.main(["--epochs", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "tqdm" in err and "pip install 'chainrule[train]'" in err
    assert not list(tmp_path.iterdir())  # nothing trained, nothing written


def test_version_option() -> None:
    import importlib.metadata

    import chainrule

    done = subprocess.run([sys.executable, "-m", "chainrule", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout == f"chainrule {chainrule.__version__}\n"
    assert chainrule.__version__ == importlib.metadata.version("chainrule")
