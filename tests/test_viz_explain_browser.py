"""The chain rule in the explorer (issue 20): clicking an input of the forward view shows its
derivation, and stepping through backward lights each term once the nodes computing it ran.

Runs in headless Chromium as ``test_viz_browser.py`` does (its fixtures; skipped only where
Chromium or Graphviz cannot be installed, failing in CI).
"""

from __future__ import annotations

import json

import chainrule
from chainrule import viz

from .test_viz_browser import browser, open_page  # noqa: F401 - the pages' fixtures


def _box(page, label: str) -> str:
    ids = page.page.eval_on_selector_all(
        "#stage g.node",
        f"els => els.filter(e => e.querySelector('text').textContent === {label!r})"
        ".map(e => e.id)",
    )
    (key,) = ids
    return key


def _lit_terms(page) -> list[str]:
    return page.page.eval_on_selector_all(
        "#details li.term.done", "els => els.map(e => e.textContent)"
    )


def test_clicking_an_input_shows_its_derivation_lit_term_by_term(tmp_path, open_page):  # noqa: F811
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    a = chainrule.add(w, x)
    b = chainrule.add(w, 1)
    y = chainrule.mul(a, b)
    page = open_page(viz.explore(y, tmp_path / "seed.html"))
    data = json.loads(page.page.text_content("#graph-data"))
    steps = [s["node"] for s in data["steps"]]
    (derivation,) = [d for d in data["forward"]["explain"]["derivations"] if d["input"] == "w"]
    terms = {t["text"]: set(t["nodes"]) for t in derivation["terms"]}
    assert set(terms) == {"∂y/∂a · ∂a/∂w = b · 1", "∂y/∂b · ∂b/∂w = a · 1"}

    page.page.click("#show-forward")
    page.page.click(f"#{_box(page, 'w')}")
    details = page.text("#details")
    assert "CHAIN RULE" in details.upper()  # (section titles are set in capitals)
    assert "∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w" in details
    assert "      = 2·1 + 2 + 1\n      = 5" in details
    assert "✓ equals what backward computes: ∂y/∂w = 5" in details
    assert _lit_terms(page) == []  # before the pass
    seen_lit = []
    for k in range(len(steps)):
        page.page.click("#next")
        ran = set(steps[: k + 1])
        expected = sorted(text for text, nodes in terms.items() if nodes <= ran)
        assert sorted(_lit_terms(page)) == expected, (k, steps)
        seen_lit.append(len(expected))
    assert seen_lit[0] == 0 and seen_lit[-1] == 2 and 1 in seen_lit  # one term, then the other
    page.page.keyboard.press("Home")
    assert _lit_terms(page) == []
    # An intermediate has no derivation of its own; the output neither.
    page.page.click(f"#{_box(page, 'a')}")
    assert "CHAIN RULE" not in page.text("#details").upper()


def test_the_fourth_seed_in_the_explorer(tmp_path, open_page):  # noqa: F811
    a = chainrule.tensor(2.0, requires_grad=True)
    b = chainrule.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2  # noqa: N806
    page = open_page(viz.explore(Q, tmp_path / "q.html"))
    page.page.click("#show-forward")
    page.page.click(f"#{_box(page, 'a')}")
    details = page.text("#details")
    assert "∂Q/∂a = ∂(3a³ − b²)/∂a\n      = 9a²\n      = 9·2²\n      = 36" in details
    page.page.click(f"#{_box(page, 'b')}")
    assert "= −2b" in page.text("#details")
