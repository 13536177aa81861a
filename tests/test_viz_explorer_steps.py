"""What the explorer page records of the backward pass, compared with PyTorch (issue 17).

The page shows every panel at the current step: the ``.grad`` a leaf has after its
``AccumulateGrad`` step, a retained ``.grad`` after its node's step, each tensor's gradient in
the forward view. These tests read the page's JSON (no browser) and compare with PyTorch's
gradients; tests/test_viz_browser.py checks what the page shows.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

import chainrule
from chainrule import viz
from chainrule.autograd.stepping import backward_steps
from chainrule.cli.train import build_model

requires_dot = pytest.mark.usefixtures("needs_dot")


def page_json(path) -> dict:
    text = path.read_text()
    return json.loads(re.search(r'id="graph-data">(.*?)</script>', text, re.DOTALL).group(1))


def program(lib, w0, x0):
    w = lib.tensor(w0, requires_grad=True)
    x = lib.tensor(x0, requires_grad=True)
    a = x * w  # broadcast: w (3,) against x (2, 3)
    a.retain_grad()
    y = (a.exp() + w).sum()
    return w, x, a, y


W0 = [0.5, -1.0, 2.0]
X0 = [[1.0, 2.0, 3.0], [-0.5, 0.25, 0.0]]


def leaf_after(data: dict, label: str) -> tuple[int, dict]:
    """(step number, the .grad that step left behind) of the leaf named ``label``."""
    for k, row in enumerate(data["steps"]):
        leaf = data["nodes"][str(row["node"])].get("leaf")
        if leaf is not None and leaf["name"] == label:
            return k, row["after"]["leaf"]
    raise KeyError(label)


@requires_dot
def test_leaf_and_retained_grads_after_their_steps_match_pytorch(tmp_path):
    w, x, a, y = program(chainrule, W0, X0)
    tw, tx, ta, ty = program(torch, W0, X0)
    ty.backward()
    # .grad already set before the page is written: the recorded pass starts from None and the
    # tensors keep what they had.
    w.grad = chainrule.full((3,), 100.0)
    a.grad = chainrule.full((2, 3), -7.0)
    data = page_json(viz.explore(y, tmp_path / "page.html", {"w": w, "x": x}))
    for label, expected in (("w", tw.grad), ("x", tx.grad)):
        k, after = leaf_after(data, label)
        assert after["shape"] == list(expected.shape) and after["dtype"] == "float32"
        np.testing.assert_allclose(
            after["values"], expected.reshape(-1).numpy(), rtol=1e-5
        )  # the page keeps 6 digits
        # The gradient the AccumulateGrad received is the .grad it left (the pass starts empty).
        assert data["steps"][k]["in"][0]["values"] == after["values"]
        assert "afterNow" not in data["steps"][k]
    (row,) = [r for r in data["steps"] if "retained" in r["after"]]
    assert data["nodes"][str(row["node"])]["name"] == "MulBackward0"
    np.testing.assert_allclose(
        row["after"]["retained"]["0"]["values"], ta.grad.reshape(-1), rtol=1e-5
    )
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 100.0))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), -7.0))
    assert x.grad is None


@requires_dot
def test_steps_run_before_the_page_read_grads_after_the_pass(tmp_path):
    w, x, a, y = program(chainrule, W0, X0)
    tw, tx, ta, ty = program(torch, W0, X0)
    ty.backward()
    steps = list(backward_steps(y))  # the user's own pass, already run: .grad set
    data = page_json(viz.explore(y, tmp_path / "given.html", {"w": w, "x": x}, steps=steps))
    k, after = leaf_after(data, "w")
    assert data["steps"][k]["afterNow"] is True
    np.testing.assert_allclose(
        after["values"], tw.grad.numpy(), rtol=1e-5
    )  # the page keeps 6 digits


@requires_dot
def test_forward_view_gradients_come_from_the_recorded_pass(tmp_path):
    w, x, a, y = program(chainrule, W0, X0)
    tw, tx, ta, ty = program(torch, W0, X0)
    ty.backward()
    path = viz.explore(y, tmp_path / "page.html", {"w": w, "x": x, "a": a, "y": y})
    data = page_json(path)
    nodes = {d["label"]: d for d in data["forward"]["nodes"]}
    assert set(nodes) >= {"w", "x", "a", "y"}
    assert nodes["a"]["value"]["values"] == pytest.approx((tx * tw).reshape(-1).tolist())
    html = path.read_text()
    svg = re.search(r'<template id="forward-view">(.*?)</template>', html, re.DOTALL).group(1)
    # The drawing reserves the final gradient line; the page hides it until the step is reached.
    w_grad = ", ".join(f"{v:.4g}" for v in tw.grad.tolist())
    assert f"grad [{w_grad}]" in svg
    edges = {(e["source"], e["target"]) for e in data["forward"]["edges"]}
    assert (nodes["x"]["id"], nodes["a"]["id"]) in edges


@requires_dot
def test_forward_view_limit_and_names_from_the_caller(tmp_path):
    p = chainrule.tensor([1.0, 2.0], requires_grad=True)
    q = p * 3
    out = q.sum()
    data = page_json(viz.explore(out, tmp_path / "auto.html"))
    assert {d["label"] for d in data["forward"]["nodes"]} == {"p", "q", "out"}
    data = page_json(viz.explore(out, tmp_path / "none.html", forward_limit=2))
    assert data["forward"] == {
        "note": "The forward graph is drawn for graphs of at most forward_limit=2 nodes; this "
        "one has 3."
    }


@requires_dot
def test_small_graphs_are_drawn_whole_with_their_modules_named(tmp_path):
    chainrule.manual_seed(0)
    net = build_model("mlp")
    with viz.record_modules(net) as rec:
        loss = net(chainrule.randn(2, 1, 8, 8)).sum()
    params = dict(net.named_parameters())
    whole = page_json(viz.explore(loss, tmp_path / "whole.html", params, modules=rec))
    assert whole["total"] < 40 and whole["groups"] == []
    assert whole["views"][0]["items"] == [f"n{i}" for i in range(whole["total"])]
    modules = {tuple(n.get("modules", ())) for n in whole["nodes"].values()}
    assert ("Sequential", "5 (Linear)") in modules and ("Sequential", "4 (ReLU)") in modules
    grouped = page_json(
        viz.explore(loss, tmp_path / "grouped.html", params, modules=rec, expand_below=0)
    )
    assert [g["label"] for g in grouped["groups"]][0] == "Sequential"
    assert grouped["views"][0]["items"][:1] == ["n0"] and "g0" in grouped["views"][0]["items"]


@requires_dot
def test_a_forward_graph_that_fails_leaves_a_note_and_the_backward_view(tmp_path, monkeypatch):
    from chainrule.viz import explorer

    def broken(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(explorer, "forward_graph", broken)
    w, x, a, y = program(chainrule, W0, X0)
    path = viz.explore(y, tmp_path / "page.html", {"w": w, "x": x})
    data = page_json(path)
    assert data["forward"] == {"note": "The forward graph could not be drawn: KeyError: 'boom'"}
    text = path.read_text()
    assert 'id="view-0"' in text and 'id="forward-view"' not in text
    assert len(data["steps"]) == len(walk_nodes(y))


def walk_nodes(y):
    return viz.walk(y).nodes
