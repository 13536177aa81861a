"""The explorer page in a real headless Chromium: click, step, search, open groups, no errors.

Needs Debian's chromium (``/usr/bin/chromium``) and Graphviz's ``dot`` (``make test`` installs
both when it runs as root or with sudo; without them these tests skip, and in CI, with ``CI`` set,
they fail) and the ``playwright`` package, a dev dependency that drives the system Chromium (no
browser is downloaded).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

import chainrule
from chainrule import viz
from chainrule.autograd.stepping import backward_steps
from chainrule.viz.graph import walk

from .conftest import require_chromium, require_dot

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    chromium = require_chromium()
    require_dot()
    with sync_playwright() as p:
        # launch() gives the browser a fresh temporary profile.
        b = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A loaded explorer page, with every console error, page error and dialog collected."""

    def __init__(self, browser, path: Path) -> None:
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=15_000)

    def _console(self, message) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")

    def _dialog(self, dialog) -> None:
        self.errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def text(self, selector: str) -> str:
        return self.page.inner_text(selector)

    def ids(self, css_class: str) -> list[str]:
        return self.page.eval_on_selector_all(f"g.node.{css_class}", "els => els.map(e => e.id)")

    def close(self) -> None:
        self.page.close()
        assert self.errors == []


@pytest.fixture
def open_page(browser):
    pages: list[Page] = []

    def opener(path: Path) -> Page:
        pages.append(Page(browser, path))
        return pages[-1]

    yield opener
    for page in pages:
        page.close()


def seed():
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    return (w + x) * (w + 1), {"w": w, "x": x}


def test_click_shows_node_details(tmp_path, open_page):
    y, params = seed()
    page = open_page(viz.explore(y, tmp_path / "seed.html", params))
    page.page.click("#n1")
    details = page.text("#details")
    assert details.startswith("AddBackward0 #1")
    assert "AccumulateGrad #2" in details and "AccumulateGrad #3" in details
    assert page.ids("selected") == ["n1"]
    page.page.click("#n0")
    details = page.text("#details")
    assert "self" in details and "other" in details and "4 B" in details  # saved values
    page.page.click("#v2")  # the leaf's box selects its AccumulateGrad
    assert "w (1) float32, 4 B, no .grad yet" in page.text("#details")
    page.page.click("#details >> text=AddBackward0 #4")  # links move the selection
    assert page.ids("selected") == ["n4"]


def test_player_follows_the_engine_order(tmp_path, open_page):
    y, params = seed()
    graph = walk(y, params)
    expected = [graph.index[s.node] for s in backward_steps(y, retain_graph=True)]
    y, params = seed()  # a fresh graph (the one above was stepped through)
    page = open_page(viz.explore(y, tmp_path / "seed.html", params))
    assert page.text("#step-label") == "before step 1 of 5"
    seen = []
    for k in range(len(expected)):
        page.page.click("#next")
        (active,) = page.ids("active")
        seen.append(int(active[1:]))
        assert page.text("#step-label").startswith(f"step {k + 1} / 5")
        assert len(page.ids("done")) == k + 1
    assert seen == expected == [0, 4, 1, 2, 3]
    # The last step is the AccumulateGrad of x, which received dy/dx = 2.
    assert "received grad_output[0]: (1) float32 [2]" in page.text("#details")
    page.page.keyboard.press("ArrowLeft")
    assert page.ids("active") == ["n2"]
    assert "received grad_output[0]: (1) float32 [5]" in page.text("#details")  # dy/dw
    page.page.keyboard.press("Home")
    assert page.ids("done") == [] and page.ids("active") == []


def test_search_finds_nodes_and_parameters(tmp_path, open_page):
    y, params = seed()
    page = open_page(viz.explore(y, tmp_path / "seed.html", params))
    page.page.fill("#search", "accum")
    assert page.page.locator("#results li").count() == 2
    assert sorted(page.ids("match")) == ["n2", "n3"]
    page.page.fill("#search", "x")
    page.page.keyboard.press("Enter")
    assert page.ids("selected") == ["n3"]
    assert page.text("#details").startswith("AccumulateGrad #3")
    page.page.fill("#search", "")
    assert page.ids("match") == []


def test_names_cannot_inject_markup(tmp_path, open_page):
    nasty = '</script><script>alert("boom")</script><img src=x onerror=alert(1)>'
    p = chainrule.ones(2, requires_grad=True)
    path = viz.explore((p * 2).sum(), tmp_path / "nasty.html", {nasty: p}, title=nasty)
    html = path.read_text()
    assert html.count("<script") == 2  # the JSON data and our own script, nothing else
    page = open_page(path)
    page.page.click("#v2")
    assert nasty in page.text("#details")  # shown as text
    assert page.page.title() == nasty
    page.page.fill("#search", "boom")
    assert page.page.locator("#results li").count() == 1


def test_large_graph_stays_usable(tmp_path, open_page):
    # An unrolled recurrent cell: more than 10,000 nodes, one module call per step.
    cell = chainrule.nn.Linear(8, 8)
    h = chainrule.zeros(1, 8)
    bias = chainrule.ones(1, 8, requires_grad=True)
    with viz.record_modules(cell) as rec:
        for _ in range(2600):
            h = chainrule.tanh(cell(h) + bias)
    loss = h.sum()
    params = {"bias": bias, **dict(cell.named_parameters())}
    n = len(walk(loss))
    assert n > 10_000
    path = viz.explore(loss, tmp_path / "rnn.html", params, modules=rec)
    assert path.stat().st_size < 20_000_000
    page = open_page(path)
    top = page.page.eval_on_selector_all("#stage g.node", "els => els.map(e => e.id)")
    assert len(top) <= 5  # SumBackward0, the folded recurrence, the output
    chain = next(i for i in top if i.startswith("g"))
    assert "× 2600" in page.page.text_content(f"#{chain}")
    page.page.dblclick(f"#{chain}")
    assert page.page.locator("#stage #e").count() == 1  # the steps not drawn
    groups = page.page.eval_on_selector_all("#stage g.node.group", "els => els.map(e => e.id)")
    page.page.click(f"#{groups[0]}")
    assert "module call · 2 nodes" in page.text("#details")
    page.page.dblclick(f"#{groups[0]}")
    assert "AddmmBackward0" in page.page.text_content("#stage")
    assert page.text("#crumbs").count("›") == 2
    page.page.click("#crumbs button >> nth=0")  # back to the top level
    page.page.click("#last")
    assert page.text("#step-label").startswith(f"step {n} / {n}")
    page.page.fill("#search", "#5000")
    page.page.keyboard.press("Enter")
    assert page.text("#details").split("\n")[0].endswith("#5000")


def test_explore_result_shows_inline_as_in_a_notebook(tmp_path, browser):
    y, params = seed()
    page_path = viz.explore(y, tmp_path / "seed.html", params)
    assert isinstance(page_path, Path) and page_path.path == tmp_path / "seed.html"
    # What Jupyter puts in the output cell: the page in a sandboxed frame.
    notebook = tmp_path / "notebook.html"
    notebook.write_text(
        f"<!DOCTYPE html><html><body>{page_path._repr_html_()}</body></html>", encoding="utf-8"
    )
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(notebook.resolve().as_uri())
        frame = page.wait_for_selector("iframe.chainrule-explorer").content_frame()
        frame.wait_for_selector("body[data-ready=true]", timeout=15_000)
        ids = frame.eval_on_selector_all("g.node", "els => els.map(e => e.id)")
        assert "n1" in ids and "v2" in ids
        assert "AddBackward0 [#4]" in frame.text_content("#stage")
    finally:
        page.close()
    assert errors == []
