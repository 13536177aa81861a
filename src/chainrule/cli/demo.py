"""``python -m chainrule demo`` (what ``make demo`` runs): the seed example, its graph, and a
short training run with an explorer page of one training step.

1. The computational-graph example of the seed articles, ``y = (x + w) * (w + 1)``, printed
   exactly as PyTorch prints it.
2. Its forward graph as the articles draw it, three times: bare, with the values, with the
   gradients and each edge's local derivative (``viz.forward_graph``); the same for the
   autograd tutorial's ``Q = 3*a**3 - b**2``.
3. Its backward graph: a text tree here, an SVG (Graphviz) and an interactive HTML page.
4. The chain rule written out for it and for the fourth article's ``Q = 3a³ − b²``, as the
   articles derive the gradients by hand (``autograd.explain``).
5. A small network trained on scikit-learn's handwritten digits, and an explorer page of one
   training step of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

from .static_demo import compare_static_and_dynamic

__all__ = ["main", "SEED_EXAMPLE"]

SEED_EXAMPLE = textwrap.dedent(
    """\
    import chainrule as torch

    w = torch.tensor([1.], requires_grad=True)
    x = torch.tensor([2.], requires_grad=True)

    a = torch.add(w, x)
    b = torch.add(w, 1)
    y = torch.mul(a, b)

    a.retain_grad()
    b.retain_grad()
    y.retain_grad()

    y.backward()
    print(w.grad)
    print("is_leaf:\\n", w.is_leaf, x.is_leaf, a.is_leaf, b.is_leaf, y.is_leaf)
    print("gradient:\\n", w.grad, x.grad, a.grad, b.grad, y.grad)
    print("grad_fn:\\n", w.grad_fn, x.grad_fn, a.grad_fn, b.grad_fn, y.grad_fn)
    """
)


def _heading(text: str) -> None:
    print()
    print(text)
    print("-" * len(text))


def run_seed_example() -> dict[str, Any]:
    """Run the seed example, printing its code and output; return its tensors."""
    _heading("1. The seed example: y = (x + w) * (w + 1)")
    print(textwrap.indent(SEED_EXAMPLE, "    "))
    print("Output (what PyTorch prints, object addresses aside):\n")
    scope: dict[str, Any] = {}
    exec(compile(SEED_EXAMPLE, "<seed example>", "exec"), scope)  # noqa: S102 - our own text
    return scope


def draw_seed_graph(out: Path) -> list[Path]:
    """The seed example's graph: the articles' three forward pictures (bare, with values, with
    gradients and local derivatives), and the backward graph as text, SVG and HTML (SVG files,
    or .dot sources without Graphviz)."""
    import chainrule as torch
    from chainrule import viz

    _heading("2. Its graph, as the articles draw it: tensors as nodes, operations as edges")
    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    a = torch.add(w, x)
    b = torch.add(w, 1)
    y = torch.mul(a, b)
    names = {"w": w, "x": x, "a": a, "b": b, "y": y}
    written = _write_forward_pictures(y, names, out, "seed_forward")
    has_dot = viz.has_dot()

    print("\nThe autograd tutorial's Q = 3*a**3 - b**2 (a = 2, b = 6), the same three pictures:")
    ta = torch.tensor(2.0, requires_grad=True)
    tb = torch.tensor(6.0, requires_grad=True)
    q = 3 * ta**3 - tb**2
    written += _write_forward_pictures(q, {"a": ta, "b": tb, "Q": q}, out, "tutorial_forward")

    _heading("3. Its backward graph (what autograd runs, as torchviz draws it)")
    print(viz.tree(y, params=names))
    drawing = viz.make_dot(y, params=names)
    if has_dot:
        written.append(Path(drawing.render(str(out / "seed_graph"), format="svg", cleanup=True)))
        written.append(viz.explore(y, out / "seed_graph.html", params=names))
    else:
        source = out / "seed_graph.dot"
        source.write_text(drawing.source, encoding="utf-8")
        written.append(source)
        print(
            "Graphviz's `dot` is not installed, so the graphs are written as DOT source only. "
            "Install it (Debian/Ubuntu: `sudo apt-get install graphviz`; macOS: "
            "`brew install graphviz`) to get the SVG and the interactive page."
        )
    return written


def _write_forward_pictures(output: Any, names: dict[str, Any], out: Path, stem: str) -> list[Path]:
    """The articles' three pictures of ``output``: bare, with values, with gradients and local
    derivatives; the last one printed. SVG files, or .dot sources without Graphviz."""
    from chainrule import viz

    pictures = {
        "bare": viz.forward_graph(output, names),
        "values": viz.forward_graph(output, names, values=True),
        "gradients": viz.forward_graph(
            output, names, values=True, gradients=True, derivatives=True
        ),
    }
    print(pictures["gradients"])
    written: list[Path] = []
    for kind, picture in pictures.items():
        if viz.has_dot():
            written.append(Path(picture.render(out / f"{stem}_{kind}.svg")))
        else:
            source = out / f"{stem}_{kind}.dot"
            source.write_text(picture.source, encoding="utf-8")
            written.append(source)
    return written


def explain_seed_gradients() -> None:
    """The chain rule written out, as the articles derive it: the seed example's ∂y/∂w and
    ∂y/∂x, and the fourth article's ∂Q/∂a and ∂Q/∂b."""
    import chainrule as torch

    _heading("4. The chain rule, written out as the articles derive it (autograd.explain)")
    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    a = torch.add(w, x)
    b = torch.add(w, 1)
    y = torch.mul(a, b)
    print("y = (x + w) * (w + 1):\n")
    print(torch.autograd.explain(y, names={"w": w, "x": x, "a": a, "b": b, "y": y}))
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(6.0, requires_grad=True)
    q = 3 * a**3 - b**2
    print("\nQ = 3a³ − b²:\n")
    print(torch.autograd.explain(q, names={"a": a, "b": b, "Q": q}))


def train_and_explore(out: Path, epochs: int | None, model: str) -> list[Path]:
    """Train on the digits; write an explorer page of one training step."""
    import chainrule as torch
    from chainrule import viz

    from .train import build_model, load_digits_tensors, missing_extras, run

    _heading(f"6. Training a small {model.upper()} on scikit-learn's handwritten digits")
    problem = missing_extras()
    if problem is not None:
        print(f"skipped: {problem}")
        return []
    result = run(epochs=epochs, model=model, out=str(out))
    print(
        f"test accuracy: {100 * result['accuracy']:.2f}% on {result['test_size']} images "
        f"({result['epochs']} epochs, {result['seconds']:.1f} s)"
    )
    written = [Path(result["weights"]), Path(result["curve"])]
    if viz.has_dot():
        torch.manual_seed(0)
        net = build_model(model)
        images, labels = load_digits_tensors()
        with viz.record_modules(net) as recorder:
            loss = torch.nn.functional.cross_entropy(net(images[:32]), labels[:32])
        page = viz.explore(
            loss,
            out / f"digits_{model}_step.html",
            dict(net.named_parameters()),
            modules=recorder,
            title=f"One training step of the digits {model.upper()}",
        )
        written.append(page)
    return written


def main(argv: list[str] | None = None) -> int:
    """Run the demo; print what was written where."""
    parser = argparse.ArgumentParser(
        prog="python -m chainrule demo",
        description="The seed example, its graph, and a short training run.",
    )
    parser.add_argument("--out", default="out", help="directory for the files (default: out)")
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="training epochs (default: the train command's default)",
    )
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    parser.add_argument("--no-train", action="store_true", help="skip the training run")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    run_seed_example()
    written = draw_seed_graph(out)
    explain_seed_gradients()
    _heading("5. Static versus dynamic: the seed example defined then run, and compiled")
    written += compare_static_and_dynamic(out)
    if not args.no_train:
        written += train_and_explore(out, args.epochs, args.model)

    _heading("Files written")
    for path in written:
        print(f"  {os.path.relpath(path)}")
    if shutil.which("dot") is None:
        print("  (install Graphviz for the SVG drawings and explorer pages)")
    return 0
