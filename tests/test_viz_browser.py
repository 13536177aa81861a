"""The explorer page in a real headless Chromium: click, step, search, open groups, no errors.

Needs Debian's chromium (``/usr/bin/chromium``) and Graphviz's ``dot`` (``make test`` installs
both when it runs as root or with sudo; without them these tests skip, and in CI, with ``CI`` set,
they fail) and the ``playwright`` package, a dev dependency that drives the system Chromium (no
browser is downloaded).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from playwright.sync_api import expect, sync_playwright

import chainrule
from chainrule import viz
from chainrule.autograd.stepping import backward_steps
from chainrule.viz.explorer import record_steps
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
    details = page.text("#details")
    assert "w (1) float32, 4 B" in details and "no .grad yet" in details
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


# ----------------------------------------------------------------------------------------------
# Truthful stepping, groups, the forward view (issue 17)


def screenshot_has_colour(page, selector: str, rgb: tuple[int, int, int], share: float) -> bool:
    """Whether at least ``share`` of the pixels of the element's screenshot are ``rgb``."""
    png = page.locator(selector).screenshot()
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    close = (np.abs(pixels - np.array(rgb, dtype=np.int16)).max(axis=-1) <= 6).sum()
    return bool(close >= share * pixels.shape[0] * pixels.shape[1])


ACTIVE_FILL = (0xFF, 0xD8, 0x4D)
DONE_FILL = (0xCD, 0xEC, 0xCD)


def digits_mlp(batch: int = 4):
    """The demo's digits MLP (16 backward nodes), one loss, with its module calls recorded."""
    from chainrule.cli.train import build_model

    chainrule.manual_seed(0)
    net = build_model("mlp")
    images = chainrule.randn(batch, 1, 8, 8)
    labels = chainrule.tensor([1, 2, 3, 4][:batch])
    with viz.record_modules(net) as rec:
        loss = chainrule.nn.functional.cross_entropy(net(images), labels)
    return loss, dict(net.named_parameters()), rec


def test_leaf_grad_appears_at_the_step_that_sets_it(tmp_path, open_page):
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    y = (w + x) * (w + 1)
    page = open_page(viz.explore(y, tmp_path / "seed.html", {"w": w, "x": x}))
    tw = torch.tensor([1.0], requires_grad=True)
    tx = torch.tensor([2.0], requires_grad=True)
    ((tw + tx) * (tw + 1)).backward()
    page.page.click("#v2")  # w's AccumulateGrad #2 runs at step 4 of [0, 4, 1, 2, 3]
    for _ in range(3):
        page.page.click("#next")
        page.page.click("#v2")
        details = page.text("#details")
        assert "no .grad yet" in details and ".grad =" not in details
    page.page.click("#next")  # step 4: w's gradient is accumulated
    assert page.ids("active") == ["n2"]
    details = page.text("#details")
    assert f".grad = (1) float32 [{tw.grad.item():g}]" in details  # 5, as PyTorch's
    assert "no .grad yet" not in details
    page.page.click("#last")
    page.page.click("#v3")
    assert f".grad = (1) float32 [{tx.grad.item():g}]" in page.text("#details")  # 2
    page.page.keyboard.press("Home")  # back before the pass: no .grad again
    page.page.click("#v3")
    assert "no .grad yet" in page.text("#details")
    assert w.grad is None and x.grad is None  # the page changed nothing


def test_gradients_panel_shows_what_arrived_by_the_current_step(tmp_path, open_page):
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    a = w + x
    a.retain_grad()
    y = a * (w + 1)
    page = open_page(viz.explore(y, tmp_path / "seed.html", {"w": w, "x": x}))
    page.page.click("#n1")  # a's AddBackward0, step 3
    details = page.text("#details")
    assert "Runs at engine step 3 of 5" in details and "No gradient has arrived yet" in details
    assert "received" not in details and "retained" not in details
    page.page.click("#next")  # MulBackward0 sends dy/da = w + 1 = 2 to #1
    page.page.click("#n1")
    details = page.text("#details")
    assert "Arrived so far:" in details
    assert "from MulBackward0 #0 at step 1: (1) float32 [2]" in details
    assert "received" not in details
    page.page.click("#next")
    page.page.click("#next")  # step 3: #1 runs
    details = page.text("#details")
    assert page.ids("active") == ["n1"]
    assert "Ran at engine step 3 of 5 (the current step)" in details
    assert "received grad_output[0]: (1) float32 [2]" in details
    assert "sent to AccumulateGrad #2: (1) float32 [2]" in details
    assert "retained .grad of output 0: (1) float32 [2]" in details  # a.retain_grad()
    assert a.grad is None


def test_stepping_opens_the_group_of_the_node_being_run(tmp_path, open_page):
    loss, params, rec = digits_mlp()
    path = viz.explore(loss, tmp_path / "digits.html", params, modules=rec, expand_below=0)
    page = open_page(path)
    groups = page.page.eval_on_selector_all("#stage g.node.group", "els => els.map(e => e.id)")
    assert groups == ["g0"]  # the folded Sequential
    graph = walk(loss, params)
    expected_step = {graph.index[s.node]: k for k, s in enumerate(record_steps(loss))}
    page.page.dblclick("#g0")  # the user opens it before stepping
    assert page.text("#crumbs") == "graph › Sequential"
    n_steps = int(page.text("#step-label").split()[-1])
    assert n_steps == 16
    lit_groups = 0
    crumbs_seen = set()
    for k in range(n_steps):
        page.page.click("#next")
        active = page.ids("active")
        assert len(active) == 1
        lit_groups += active[0].startswith("g")
        label = page.text("#step-label")
        assert label.startswith(f"step {k + 1} / 16: ") and label.endswith(f"#{active[0][1:]}")
        crumbs_seen.add(page.text("#crumbs"))
        if k in (2, 9):  # in the screenshot, the node's own box is lit, inside its group
            assert screenshot_has_colour(page.page, f"#{active[0]}", ACTIVE_FILL, 0.2)
        for stub in page.page.eval_on_selector_all(
            "#stage g.node.stub", "els => els.map(e => e.id)"
        ):
            # a dashed stub (a node of another level) is done once its node has run
            done = "done" in page.page.get_attribute(f"#{stub}", "class")
            assert done == (expected_step[int(stub[1:])] <= k)
    assert lit_groups == 0  # every step lights the node's own box, never the Sequential box
    assert "graph › Sequential › 5 (Linear)" in crumbs_seen
    assert "graph › Sequential › 1 (Linear)" in crumbs_seen
    # A group the user opens stays open while the steps run inside it.
    page.page.click("#first")
    page.page.click("#crumbs button >> nth=0")
    page.page.dblclick("#g0")
    page.page.dblclick("#g1")  # 5 (Linear), run right after the loss nodes
    assert page.text("#crumbs") == "graph › Sequential › 5 (Linear)"
    while not page.ids("active") or page.text("#crumbs") == "graph":
        page.page.click("#next")
    assert page.text("#crumbs") == "graph › Sequential › 5 (Linear)"
    assert "AddmmBackward0" in page.text("#step-label")


def test_small_graph_is_drawn_whole_and_plays_node_by_node(tmp_path, open_page):
    loss, params, rec = digits_mlp()
    page = open_page(viz.explore(loss, tmp_path / "digits.html", params, modules=rec))
    assert page.page.locator("#stage g.node.group").count() == 0  # 16 < expand_below=40
    assert "16 nodes." in page.text("#details")
    page.page.click("#play")
    # 16 steps at 0.7 s each (wait_for_function would evaluate a string, which the CSP forbids).
    expect(page.page.locator("#step-label")).to_have_text(
        re.compile(r"^step 16 / 16"), timeout=30_000
    )
    assert page.text("#play") == "play"  # stopped at the end
    assert len(page.ids("done")) == 16
    addmm = page.page.eval_on_selector_all(
        "#stage g.node", "els => els.filter(e => e.textContent.includes('Addmm')).map(e => e.id)"
    )
    page.page.click(f"#{addmm[0]}")
    assert " in Sequential › " in page.text("#details")  # the module still named


def test_groups_say_one_node_and_an_open_group_has_no_open_button(tmp_path, open_page):
    loss, params, rec = digits_mlp()
    path = viz.explore(loss, tmp_path / "digits.html", params, modules=rec, expand_below=0)
    page = open_page(path)
    page.page.dblclick("#g0")
    relu = page.page.eval_on_selector_all(
        "#stage g.node.group",
        "els => els.filter(e => e.textContent.includes('ReLU')).map(e => e.id)",
    )[0]
    assert "1 node:" in page.page.text_content(f"#{relu}")
    assert "1 nodes" not in page.page.text_content("#stage")
    page.page.click(f"#{relu}")
    details = page.text("#details")
    assert "module call · 1 node" in details and "1 nodes" not in details
    assert re.search(r"engine steps (\d+)–\1: not reached yet", details)
    assert page.page.locator("#details button.open").count() == 1
    page.page.click("#details button.open")
    assert page.text("#crumbs").endswith("(ReLU)")
    # The group is open now: its panel says so instead of offering to open it again.
    assert page.page.locator("#details button.open").count() == 0
    assert "Open: its drawing is shown." in page.text("#details")


def test_numbers_never_wrap_inside_a_number(tmp_path, open_page):
    p = chainrule.tensor(
        [-1.234567e-7, 3.3333333e9, -2.5e-30, 7.0, 1e-5, -9.87654321e12], requires_grad=True
    )
    y = (p * p).sum()
    page = open_page(viz.explore(y, tmp_path / "long.html", {"p": p}))
    page.page.click("#last")
    page.page.click("#n2")  # PowBackward0 / MulBackward0 of p: six long numbers per line
    numbers = page.page.eval_on_selector_all(
        "#details .num", "els => els.map(e => [e.textContent, e.getClientRects().length])"
    )
    assert len(numbers) >= 12
    assert all(rects == 1 for _, rects in numbers), numbers
    lines = page.page.eval_on_selector_all(
        "#details code", "els => Math.max(...els.map(e => e.getClientRects().length))"
    )
    assert lines > 1  # the values did wrap, between numbers


def test_legend_and_colours_in_a_screenshot(tmp_path, open_page):
    y, params = seed()
    page = open_page(viz.explore(y, tmp_path / "seed.html", params))
    legend = page.text("#legend")
    for entry in ("current step", "done", "group partly done", "selected", "search match"):
        assert entry in legend
    assert page.page.locator("#legend").is_visible()
    page.page.click("#next")
    page.page.click("#next")
    page.page.screenshot(path=tmp_path / "step2.png")
    assert (tmp_path / "step2.png").stat().st_size > 10_000
    assert screenshot_has_colour(page.page, "#n4", ACTIVE_FILL, 0.3)  # the current step
    assert screenshot_has_colour(page.page, "#n0", DONE_FILL, 0.3)  # done
    assert not screenshot_has_colour(page.page, "#n1", DONE_FILL, 0.05)  # not run yet
    assert screenshot_has_colour(page.page, "#legend .swatch.active", ACTIVE_FILL, 0.3)
    assert screenshot_has_colour(page.page, "#legend .swatch.done", DONE_FILL, 0.3)


def test_forward_view_shows_values_and_the_gradients_reached(tmp_path, open_page):
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    a = x + w
    b = w + 1
    y = a * b
    # params=None: the forward view names tensors by this function's variables (names="auto").
    page = open_page(viz.explore(y, tmp_path / "seed.html"))
    tw = torch.tensor([1.0], requires_grad=True)
    tx = torch.tensor([2.0], requires_grad=True)
    ta = tx + tw
    tb = tw + 1
    ta.retain_grad()
    tb.retain_grad()
    ty = ta * tb
    ty.backward()
    page.page.click("#show-forward")
    assert page.page.get_attribute("#show-forward", "aria-pressed") == "true"
    stage = page.page.text_content("#stage")
    assert "∂y/∂a = b = 2" in stage and "∂y/∂b = a = 3" in stage

    def box(label: str) -> str:
        ids = page.page.eval_on_selector_all(
            "#stage g.node",
            f"els => els.filter(e => e.querySelector('text').textContent === {label!r})"
            ".map(e => e.id)",
        )
        (key,) = ids
        return key

    def grad_text(label: str) -> str:
        texts = page.page.eval_on_selector_all(
            f"#{box(label)} text", "els => els.map(e => e.textContent)"
        )
        return next(t for t in texts if t.startswith("grad"))

    want = {
        "y": 1.0,
        "a": ta.grad.item(),
        "b": tb.grad.item(),
        "w": tw.grad.item(),
        "x": tx.grad.item(),
    }
    assert "= 3" in page.page.text_content(f"#{box('a')}")  # the value a = x + w
    assert all(grad_text(k) == "grad ·" for k in want)  # before the pass
    # The order the engine runs: y's node #0, b's #4, a's #1, then x's (#2) and w's leaf.
    reached_after = [
        ["y"],
        ["y", "b"],
        ["y", "b", "a"],
        ["y", "b", "a", "x"],
        ["y", "b", "a", "x", "w"],
    ]
    for names in reached_after:
        page.page.click("#next")
        for k, g in want.items():
            expected = f"grad {g:g}" if k in names else "grad ·"
            assert grad_text(k) == expected, (k, names)
        assert page.ids("active") == [box(names[-1])]
    assert screenshot_has_colour(page.page, f"#{box('w')}", ACTIVE_FILL, 0.2)
    page.page.click(f"#{box('w')}")
    details = page.text("#details")
    assert details.startswith("w (1) float32")
    assert f"complete since engine step 5: (1) float32 [{tw.grad.item():g}]" in details
    assert "accumulated by AccumulateGrad #" in details
    page.page.click(f"#{box('y')}")
    assert "∂y/∂a = b = (1) float32 [2]" in page.text("#details")
    page.page.keyboard.press("ArrowLeft")
    assert grad_text("w") == "grad ·" and grad_text("x") == f"grad {tx.grad.item():g}"
    # The data node's backward node: its link leads to the backward graph, and back.
    page.page.click(f"#{box('w')}")
    page.page.click("#details button.link")
    assert page.page.get_attribute("#show-backward", "aria-pressed") == "true"
    assert page.ids("selected") == ["n3"] and page.text("#details").startswith("AccumulateGrad #3")
    page.page.click("#show-forward")
    # Back to the backward graph, at the same step.
    page.page.click("#show-backward")
    assert page.page.get_attribute("#show-backward", "aria-pressed") == "true"
    assert page.ids("active") == ["n2"] and len(page.ids("done")) == 4


def test_forward_view_of_a_large_graph_says_why_it_is_missing(tmp_path, open_page):
    p = chainrule.ones(3, requires_grad=True)
    h = p
    for _ in range(30):
        h = h * 1.5 + 1
    page = open_page(viz.explore(h.sum(), tmp_path / "long.html", {"p": p}, forward_limit=10))
    page.page.click("#show-forward")
    assert "forward_limit=10" in page.text("#stage")
    page.page.click("#show-backward")
    assert page.page.locator("#stage svg").count() == 1
