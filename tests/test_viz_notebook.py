"""The graph pictures in Jupyter: a real notebook run by nbclient on an ipykernel kernel.

``viz.tree`` must display as preformatted text (not an escaped string), ``forward_graph`` and
``make_dot`` as SVG, and ``explore(...)`` as the page itself in a sandboxed frame (not as a
``PosixPath``), which then works in Chromium. nbclient and ipykernel are dev dependencies.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from playwright.sync_api import sync_playwright

from .conftest import require_chromium, require_dot

CELLS = [
    """\
import chainrule as torch
from chainrule import viz
x = torch.tensor([2.0], requires_grad=True)
w = torch.tensor([1.0], requires_grad=True)
a = x + w
b = w + 1
y = a * b""",
    "viz.tree(y, params={'x': x, 'w': w, 'a': a, 'b': b})",
    "viz.forward_graph(y, values=True, gradients=True, derivatives=True)",
    "viz.make_dot(y, params={'x': x, 'w': w})",
    "page = viz.explore(y, 'seed.html')\npage",
    "print(type(page).__name__, page.path.name, page.exists())",
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> list[list[dict]]:
    """The outputs of each cell of the notebook above, executed in a fresh kernel."""
    require_dot()
    where = tmp_path_factory.mktemp("notebook")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(where)}},
    )
    client.execute()
    nbformat.write(notebook, where / "viz.ipynb")
    return [cell.outputs for cell in notebook.cells]


def display(cell_outputs: list[dict]) -> dict:
    """The mime bundle of a cell's result (execute_result), as Jupyter received it."""
    (result,) = [o for o in cell_outputs if o["output_type"] == "execute_result"]
    return result["data"]


def test_tree_shows_as_preformatted_text(outputs):
    data = display(outputs[1])
    page = data["text/html"]
    assert page.startswith("<pre") and "MulBackward0" in page
    assert "AddBackward0 [#1] → a" in html.unescape(page)
    assert "\\n" not in page  # not the repr of a str
    plain = data["text/plain"]
    assert plain.splitlines()[1] == "└── MulBackward0 [#0]"  # the tree, not a str repr


def test_forward_graph_shows_as_svg(outputs):
    data = display(outputs[2])
    svg = data.get("image/svg+xml") or data["text/html"]
    assert "<svg" in svg and "&lt;svg" not in svg
    # The seed articles' third picture: values, gradients and local derivatives.
    for text in ("= 6", "grad 5", "∂y/∂a = b = 2"):
        assert text in html.unescape(svg), text


def test_make_dot_shows_as_svg(outputs):
    data = display(outputs[3])
    assert "<svg" in data["image/svg+xml"] and "AccumulateGrad" in data["image/svg+xml"]


def test_explore_shows_the_page_inline(outputs, tmp_path):
    data = display(outputs[4])
    frame = data["text/html"]
    assert frame.startswith('<iframe class="chainrule-explorer" srcdoc="')
    assert "PosixPath" not in frame and "PosixPath" not in data["text/plain"]
    assert data["text/plain"] == "ExplorerPage('seed.html')"
    (printed,) = [o for o in outputs[5] if o["output_type"] == "stream"]
    assert printed["text"] == "ExplorerPage seed.html True\n"
    srcdoc = html.unescape(re.search(r'srcdoc="([^"]*)"', frame).group(1))
    assert srcdoc.startswith("<!DOCTYPE html>") and 'id="graph-data"' in srcdoc
    # The output cell's HTML in Chromium: the page runs inside its frame.
    chromium = require_chromium()
    cell = tmp_path / "cell.html"
    cell.write_text(f"<!DOCTYPE html><html><body>{frame}</body></html>", encoding="utf-8")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(Path(cell).resolve().as_uri())
            inner = page.wait_for_selector("iframe.chainrule-explorer").content_frame()
            inner.wait_for_selector("body[data-ready=true]", timeout=15_000)
            inner.click("#show-forward")
            inner.click("#last")
            stage = inner.text_content("#stage")
            assert "∂y/∂a = b = 2" in stage and "grad 5" in stage  # names from the cell
        finally:
            browser.close()
    assert errors == []
