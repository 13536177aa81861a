"""``python -m chainrule train``: learn scikit-learn's handwritten digits with chainrule.

The 1,797 8x8 digit images ship with scikit-learn (``load_digits``, no download). The program
is ordinary PyTorch training code running on chainrule: ``TensorDataset`` + ``random_split`` +
``DataLoader``, an ``nn.Module``, ``CrossEntropyLoss``, ``optim.Adam`` with a cosine learning-rate
schedule. It shows a tqdm progress bar, reports the test accuracy, and writes the weights
(safetensors) and a loss/accuracy curve (PNG) into ``--out``.

``run(...)`` does the same from Python and returns what it measured, for ``chainrule demo``.

``--ranks N`` trains data-parallel on N processes (``chainrule.distributed`` on MPI, started
through ``mpiexec``): each rank reads its share of every shuffled epoch (``DistributedSampler``)
in batches of ``batch_size // N``, and ``DistributedDataParallel`` averages the gradients, so
that the N ranks together take the steps of one process on the whole batch; rank 0 reports and
saves.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

__all__ = ["run", "main", "build_model", "load_digits_tensors", "missing_extras", "DEFAULTS"]

PROG = "python -m chainrule train"

# Set in the ranks ``--ranks`` starts, so that they train instead of starting ranks again.
RANK_MARKER = "CHAINRULE_TRAIN_RANKS"

# Per model: epochs, learning rate, batch size (the defaults of ``--epochs`` & co.).
DEFAULTS: dict[str, dict[str, Any]] = {
    "mlp": {"epochs": 30, "lr": 2e-3, "batch_size": 32},
    "cnn": {"epochs": 15, "lr": 3e-3, "batch_size": 32},
}


# The optional libraries training uses (the ``train`` extra): import name -> distribution name.
TRAINING_EXTRAS = {
    "tqdm": "tqdm",
    "sklearn": "scikit-learn",
    "matplotlib": "matplotlib",
    "safetensors": "safetensors",
}


def missing_extras() -> str | None:
    """What to install to train, if one of the ``train`` extra's libraries is missing."""
    missing = []
    for module, distribution in TRAINING_EXTRAS.items():
        try:
            __import__(module)
        except ImportError:
            missing.append(distribution)
    if not missing:
        return None
    return (
        f"training needs {', '.join(missing)} (chainrule's 'train' extra): "
        "pip install 'chainrule[train]', or run `make demo` in a checkout, which installs it"
    )


def build_model(kind: str) -> Any:
    """The network: an MLP on the 64 pixels, or a small CNN on the 1x8x8 image."""
    from .. import nn

    if kind == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(64, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 2 * 2, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )
    raise ValueError(f"unknown model {kind!r} (expected 'mlp' or 'cnn')")


def load_digits_tensors() -> tuple[Any, Any]:
    """Images ``(1797, 1, 8, 8)`` scaled to [0, 1] (float32) and labels (int64)."""
    from sklearn.datasets import load_digits

    from .. import from_numpy

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    return from_numpy(images), from_numpy(digits.target.astype(np.int64))


def _accuracy(model: Any, loader: Any) -> tuple[float, float]:
    """Mean loss and accuracy of ``model`` over ``loader`` (evaluation mode, no grad)."""
    from .. import no_grad
    from ..nn import functional as F

    model.eval()
    correct = 0
    total = 0
    loss_sum = 0.0
    with no_grad():
        for images, labels in loader:
            logits = model(images)
            loss_sum += float(F.cross_entropy(logits, labels, reduction="sum"))
            correct += int((logits.argmax(1) == labels).sum())
            total += len(labels)
    model.train()
    return loss_sum / total, correct / total


def _plot(history: dict[str, list[float]], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], label="train")
    ax_loss.plot(epochs, history["test_loss"], label="test")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy")
    ax_loss.set_yscale("log")
    ax_loss.legend()
    ax_acc.plot(epochs, [100 * a for a in history["train_acc"]], label="train")
    ax_acc.plot(epochs, [100 * a for a in history["test_acc"]], label="test")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy (%)")
    ax_acc.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(
    epochs: int | None = None,
    lr: float | None = None,
    batch_size: int | None = None,
    model: str = "mlp",
    seed: int = 0,
    out: str = "out",
    quiet: bool = False,
    test_fraction: float = 0.2,
    distributed: bool = False,
) -> dict[str, Any]:
    """Train on the digits and return ``accuracy``, ``weights`` and ``curve`` paths, ``seconds``,
    ``history`` (per-epoch losses and accuracies) and the settings used.

    ``distributed=True`` (in each rank of an MPI job): join the process group and train
    data-parallel; only rank 0 shows progress and writes the files."""
    from tqdm import tqdm

    import chainrule as torch
    from chainrule.utils.data import DataLoader, TensorDataset, random_split
    from chainrule.utils.data.distributed import DistributedSampler

    rank, ranks = 0, 1
    if distributed:
        torch.distributed.init_process_group("mpi")
        rank, ranks = torch.distributed.get_rank(), torch.distributed.get_world_size()

    settings = dict(DEFAULTS[model]) if model in DEFAULTS else {}
    build_model(model)  # validates the name before any work
    epochs = settings["epochs"] if epochs is None else epochs
    lr = settings["lr"] if lr is None else lr
    batch_size = settings["batch_size"] if batch_size is None else batch_size
    start = time.perf_counter()
    torch.manual_seed(seed)
    images, labels = load_digits_tensors()
    dataset = TensorDataset(images, labels)
    split = torch.Generator().manual_seed(seed)
    train_set, test_set = random_split(dataset, [1 - test_fraction, test_fraction], generator=split)
    sampler = None
    if distributed:
        # Every rank shuffles alike (seed + epoch) and reads its share of each global batch.
        sampler = DistributedSampler(train_set, num_replicas=ranks, rank=rank, seed=seed + 1)
        train_loader = DataLoader(
            train_set, batch_size=max(1, batch_size // ranks), sampler=sampler
        )
    else:
        shuffle = torch.Generator().manual_seed(seed + 1)
        train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=shuffle)
    train_eval = DataLoader(train_set, batch_size=512)
    test_loader = DataLoader(test_set, batch_size=512)

    net = build_model(model)
    trained = net
    if distributed:
        trained = torch.nn.parallel.DistributedDataParallel(net)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(trained.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history: dict[str, list[float]] = {
        "train_loss": [],
        "test_loss": [],
        "train_acc": [],
        "test_acc": [],
    }
    bar = tqdm(
        total=epochs * len(train_loader),
        disable=quiet or rank != 0,
        unit="batch",
        desc=f"{model} on digits",
        file=sys.stderr,
        dynamic_ncols=True,
    )
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch_images, batch_labels in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(trained(batch_images), batch_labels)
            loss.backward()
            optimizer.step()
            bar.update(1)
        scheduler.step()
        train_loss, train_acc = _accuracy(net, train_eval)
        test_loss, test_acc = _accuracy(net, test_loader)
        history["train_loss"].append(train_loss)
        history["test_loss"].append(test_loss)
        history["train_acc"].append(train_acc)
        history["test_acc"].append(test_acc)
        bar.set_postfix(
            epoch=f"{epoch + 1}/{epochs}",
            loss=f"{train_loss:.4f}",
            test_acc=f"{100 * test_acc:.1f}%",
        )
    bar.close()
    seconds = time.perf_counter() - start

    weights = os.path.join(out, f"digits_{model}.safetensors")
    curve = os.path.join(out, f"digits_{model}_curve.png")
    if rank == 0:
        os.makedirs(out, exist_ok=True)
        torch.save(net.state_dict(), weights)
        title = f"chainrule {model.upper()} on scikit-learn digits"
        if ranks > 1:
            title += f", {ranks} ranks"
        _plot(history, curve, f"{title} (test accuracy {100 * history['test_acc'][-1]:.2f}%)")
    if distributed:
        torch.distributed.destroy_process_group()
    return {
        "rank": rank,
        "ranks": ranks,
        "model": model,
        "epochs": epochs,
        "lr": lr,
        "batch_size": batch_size,
        "seed": seed,
        "accuracy": history["test_acc"][-1],
        "test_size": len(test_set),
        "train_size": len(train_set),
        "weights": weights,
        "curve": curve,
        "seconds": seconds,
        "history": history,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Train a network on scikit-learn's handwritten digits (8x8 images, "
        "offline) with chainrule, report the test accuracy, and save the weights "
        "(safetensors) and a loss/accuracy curve (PNG).",
    )
    parser.add_argument(
        "--model",
        choices=("mlp", "cnn"),
        default="mlp",
        help="an MLP on the pixels, or a small convolutional net (default: mlp)",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="passes over the training set (default: 30 mlp, 15 cnn)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        default=None,
        help="Adam's learning rate, annealed by a cosine schedule (default: 2e-3 mlp, 3e-3 cnn)",
    )
    parser.add_argument("--batch-size", type=int, default=None, help="default: 32")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the weights, the train/test split and the shuffling (default: 0)",
    )
    parser.add_argument("--out", default="out", help="output directory (default: out/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--ranks",
        type=int,
        default=1,
        help="train data-parallel on this many processes (MPI ranks through "
        "mpiexec, pip install 'chainrule[dist]'; default: 1)",
    )
    return parser


def _start_ranks(ranks: int, argv: list[str]) -> int:
    """Run this command again on ``ranks`` MPI ranks; their exit status."""
    from ..distributed.run import mpiexec_command

    try:
        command = mpiexec_command(ranks, ["-m", "chainrule", "train", *argv])
    except FileNotFoundError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    return subprocess.call(command, env={**os.environ, RANK_MARKER: str(ranks)})


def main(argv: list[str] | None = None) -> int:
    """Parse the options, train, print the accuracy and where the files went."""
    args = _parser().parse_args(argv)
    for name in ("epochs", "batch_size"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            _parser().error(f"--{name.replace('_', '-')} must be positive")
    if args.lr is not None and args.lr <= 0:
        _parser().error("--lr must be positive")
    if args.ranks < 1:
        _parser().error("--ranks must be positive")
    problem = missing_extras()
    if problem is not None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    in_rank = os.environ.get(RANK_MARKER) == str(args.ranks)
    if args.ranks > 1 and not in_rank:
        return _start_ranks(args.ranks, sys.argv[1:] if argv is None else list(argv))
    result = run(
        epochs=args.epochs,
        lr=args.lr,
        batch_size=args.batch_size,
        model=args.model,
        seed=args.seed,
        out=args.out,
        quiet=args.quiet,
        distributed=in_rank,
    )
    if result["rank"] != 0:
        return 0
    correct = round(result["accuracy"] * result["test_size"])
    print(
        f"{result['model']}: test accuracy {100 * result['accuracy']:.2f}% "
        f"({correct}/{result['test_size']} digits) after {result['epochs']} epochs, "
        f"{result['seconds']:.1f} s" + (f" on {result['ranks']} ranks" if in_rank else "")
    )
    print(f"weights: {result['weights']}")
    print(f"curve:   {result['curve']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
