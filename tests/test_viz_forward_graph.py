"""viz.forward_graph: the seed articles' pictures (data nodes, operation edges, values,
gradients, local derivatives) from a live graph, compared with what PyTorch computes."""

from __future__ import annotations

import html
import re
import shutil

import numpy as np
import pytest
import torch as real_torch

import chainrule as torch
from chainrule import viz


def seed_program(lib):
    w = lib.tensor([1.0], requires_grad=True)
    x = lib.tensor([2.0], requires_grad=True)
    a = lib.add(w, x)
    b = lib.add(w, 1)
    y = lib.mul(a, b)
    return w, x, a, b, y


def tutorial_program(lib):
    a = lib.tensor(2.0, requires_grad=True)
    b = lib.tensor(6.0, requires_grad=True)
    O = 3 * a**3  # noqa: N806 - the tutorial's names
    P = b**2  # noqa: N806
    Q = O - P  # noqa: N806
    return a, b, O, P, Q


def nodes_and_edges(source: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """``{id: label}`` and ``[(from label, to label, edge label)]`` of a DOT source."""
    nodes = dict(re.findall(r'^\s*(d\d+) \[label="([^"]*)"', source, re.M))
    edges = [
        (nodes[a], nodes[b], label)
        for a, b, label in re.findall(r'^\s*(d\d+) -> (d\d+) \[label="([^"]*)"', source, re.M)
    ]
    return nodes, edges


def torch_grads(outputs, tensors):
    """Gradients of ``outputs`` at ``tensors`` by real PyTorch (graph retained)."""
    return real_torch.autograd.grad(outputs, tensors, retain_graph=True)


# ---------------------------------------------------------------- the three seed pictures


def test_seed_bare_picture():
    w, x, a, b, y = seed_program(torch)
    source = viz.forward_graph(y).source
    nodes, edges = nodes_and_edges(source)
    assert sorted(nodes.values()) == ["a\\n(1)", "b\\n(1)", "w\\n(1)", "x\\n(1)", "y\\n(1)"]
    short = sorted((s.split("\\n")[0], t.split("\\n")[0], op) for s, t, op in edges)
    # An operation of two inputs draws both arrows into its output, as the articles do.
    assert short == [
        ("a", "y", "×"),
        ("b", "y", "×"),
        ("w", "a", "+"),
        ("w", "b", "+"),
        ("x", "a", "+"),
    ]
    assert "rankdir=LR" in source


def test_seed_values_picture_matches_pytorch():
    w, x, a, b, y = seed_program(torch)
    tw, tx, ta, tb, ty = seed_program(real_torch)
    g = viz.forward_graph(y, values=True)
    for name, t in zip("wxaby", (tw, tx, ta, tb, ty), strict=True):
        np.testing.assert_array_equal(g.node(name).value, t.detach().numpy())
    nodes, _ = nodes_and_edges(g.source)
    assert "a\\n(1)\\n= 3" in nodes.values() and "y\\n(1)\\n= 6" in nodes.values()
    assert "b (1) = w + (a number) = 2" in str(g)


def test_seed_gradients_picture_matches_pytorch():
    w, x, a, b, y = seed_program(torch)
    tw, tx, ta, tb, ty = seed_program(real_torch)
    ty.backward(retain_graph=True)
    y.backward(retain_graph=True)
    g = viz.forward_graph(y, values=True, gradients=True, derivatives=True)
    expected = torch_grads(ty, [tw, tx, ta, tb, ty])
    for name, grad in zip("wxaby", expected, strict=True):
        np.testing.assert_array_equal(g.node(name).grad, grad.numpy())
    # Local derivatives: dy/da = b = 2, dy/db = a = 3, da/dw = da/dx = db/dw = 1.
    assert g.edge("a", "y").formula == "b"
    np.testing.assert_array_equal(g.edge("a", "y").derivative, tb.detach().numpy())
    np.testing.assert_array_equal(g.edge("b", "y").derivative, ta.detach().numpy())
    for s, t in (("w", "a"), ("x", "a"), ("w", "b")):
        np.testing.assert_array_equal(g.edge(s, t).derivative, [1.0])
    _, edges = nodes_and_edges(g.source)
    assert ("a\\n(1)\\n= 3\\ngrad 2", "y\\n(1)\\n= 6\\ngrad 1", "×\\n∂y/∂a = b = 2") in edges
    assert "w (1) leaf = 1, grad 5" in str(g)
    assert not g.notes


def test_tutorial_q_pictures_match_pytorch():
    a, b, O, P, Q = tutorial_program(torch)  # noqa: N806
    ta, tb, tO, tP, tQ = tutorial_program(real_torch)  # noqa: N806
    bare = viz.forward_graph(Q)
    labels = sorted(d.label for d in bare.nodes)
    assert labels == sorted(["a", "b", "O", "P", "Q", f"#{bare.nodes[2].key[0]}"])
    assert [e.op for e in bare.edges].count("**") == 2
    g = viz.forward_graph(Q, values=True, gradients=True, derivatives=True)
    expected = torch_grads(tQ, [ta, tb, tO, tP])
    for name, t, grad in zip(("a", "b", "O", "P"), (ta, tb, tO, tP), expected, strict=True):
        np.testing.assert_array_equal(g.node(name).value, t.detach().numpy())
        np.testing.assert_array_equal(g.node(name).grad, grad.numpy())
    cube = g.nodes[2]  # a**3, unnamed: its value run again from a and the saved exponent
    assert cube.value == 8.0 and cube.grad == 3.0
    # dQ/da through a**3: 3*a**2 = 12 on the edge, gradient 36 at a (PyTorch: a.grad = 36).
    assert g.edge("a", cube.label).formula == "3*a**2"
    assert g.edge("a", cube.label).derivative == 12.0
    assert g.edge("b", "P").formula == "2*b" and g.edge("b", "P").derivative == 12.0
    np.testing.assert_array_equal(g.edge("P", "Q").derivative, -1.0)
    text = str(g)
    assert f"O () = {cube.label} × 3 = 24, grad 1" in text
    assert "P () = b ** 2 = 36, grad -1" in text
    tQ.backward()
    assert g.node("a").grad == ta.grad.item() and g.node("b").grad == tb.grad.item()


def test_one_line_q_unnamed_intermediates():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2  # noqa: N806
    g = viz.forward_graph(Q, values=True)
    assert sorted(float(d.value) for d in g.nodes) == [-12.0, 2.0, 6.0, 8.0, 24.0, 36.0]
    assert not g.notes


def test_value_not_kept_is_said():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = ((x + 0.5) + 0.5).sum()  # AddBackward0 keeps no number: (x + 0.5) is lost
    g = viz.forward_graph(out, names=None, values=True)
    assert [format(d.value is None) for d in g.nodes] == ["False", "True", "True", "False"]
    assert g.notes == [
        "value not kept for #2, #1: name the tensor (names='auto' finds the caller's variables)"
        " to show it"
    ]
    named = (x + 0.5) + 0.5
    assert viz.forward_graph(named.sum(), values=True).notes != []


# ---------------------------------------------------------------- names


def test_names_auto_explicit_and_none():
    w, x, a, b, y = seed_program(torch)
    auto = viz.forward_graph(y)
    assert [d.label for d in auto.nodes] == ["w", "x", "a", "b", "y"]
    given = viz.forward_graph(y, names={"first": a, "weight": w})
    labels = {d.key: d.label for d in given.nodes}
    assert labels[given.node("first").key] == "first"
    assert given.node("weight").kind == "leaf"
    assert given.node("output").kind == "output"  # unnamed output
    bare = viz.forward_graph(y, names=None)
    assert [d.label for d in bare.nodes][2:] == ["#1", "#4", "output"]
    with pytest.raises(ValueError, match="names must be 'auto'"):
        viz.forward_graph(y, names="yes")


def test_names_auto_inside_a_function():
    def model(inp):
        hidden = inp.exp()
        return hidden.sum(), hidden

    x = torch.ones(3, requires_grad=True)
    out, hidden = model(x)
    g = viz.forward_graph(out, values=True)
    assert [d.label for d in g.nodes] == ["x", "hidden", "out"]
    assert [e.op for e in g.edges] == ["exp", "sum"]


# ---------------------------------------------------------------- nothing changes


def test_nothing_of_the_user_changes():
    w, x, a, b, y = seed_program(torch)
    a.retain_grad()
    calls = []
    b.register_hook(lambda grad: calls.append(1))
    before = [(t._grad, t.requires_grad, t._version, t.grad_fn) for t in (w, x, a, b, y)]
    viz.forward_graph(y, values=True, gradients=True, derivatives=True)
    after = [(t._grad, t.requires_grad, t._version, t.grad_fn) for t in (w, x, a, b, y)]
    assert before == after
    y.backward()  # the graph is still whole: backward works once, with PyTorch's values
    assert w.grad.item() == 5.0 and a.grad.item() == 2.0


def test_after_backward_that_freed_the_graph():
    w, x, a, b, y = seed_program(torch)
    a.retain_grad()
    y.backward()
    g = viz.forward_graph(y, values=True, gradients=True, derivatives=True)
    assert g.node("w").grad == 5.0 and g.node("a").grad == 2.0 and g.node("y").grad == 1.0
    assert g.node("b").grad is None
    assert any("retain_graph=True" in note and "b" in note for note in g.notes)
    assert g.edge("a", "y").derivative is None  # MulBackward0's saved a and b are freed
    assert "note: gradient not available for b" in str(g)
    assert w.grad.item() == 5.0


def test_non_scalar_and_broadcast():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = torch.tensor([0.5], requires_grad=True)
    h = x * s
    out = h.sum()
    tx = real_torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    ts = real_torch.tensor([0.5], requires_grad=True)
    th = tx * ts
    tout = th.sum()
    g = viz.forward_graph(out, values=True, gradients=True, derivatives=True)
    expected = torch_grads(tout, [tx, ts, th])
    for name, grad in zip(("x", "s", "h"), expected, strict=True):
        np.testing.assert_array_equal(g.node(name).grad, grad.numpy())
    np.testing.assert_array_equal(g.node("h").value, th.detach().numpy())
    # The vector-Jacobian product with ones, reduced to the input's shape.
    np.testing.assert_array_equal(g.edge("s", "h").derivative, [10.0])
    assert "[0.5, 1, 1.5, 2]" in str(g)


# ---------------------------------------------------------------- deep graphs


def test_ten_thousand_ops_without_recursion():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x
    for _ in range(10_000):
        h = h * 1.0  # MulBackward0 saves the number: every value is run again from x
    out = h.sum()
    g = viz.forward_graph(out, names=None, values=True, gradients=True, derivatives=True)
    assert len(g.nodes) == 10_002 and len(g.edges) == 10_001
    np.testing.assert_array_equal(g.nodes[-2].value, [1.0, 2.0])
    np.testing.assert_array_equal(g.nodes[0].grad, [1.0, 1.0])
    assert g.source.count("->") == 10_001
    assert len(str(g).splitlines()) > 10_000
    assert x.grad is None


# ---------------------------------------------------------------- rendering


needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot is not installed (CI installs it)"
)


@needs_dot
def test_render_svg_png_and_notebook(tmp_path):
    w, x, a, b, y = seed_program(torch)
    g = viz.forward_graph(y, values=True, gradients=True, derivatives=True)
    svg_path = g.render(tmp_path / "seed.svg")
    assert svg_path.endswith("seed.svg")
    svg = (tmp_path / "seed.svg").read_text()
    assert "∂y/∂a = b = 2" in svg and 'class="node data leaf"' in svg
    png_path = g.render(tmp_path / "seed", format="png")
    assert png_path.endswith("seed.png")
    assert (tmp_path / "seed.png").read_bytes()[:4] == b"\x89PNG"
    assert g._repr_svg_().lstrip().startswith("<?xml") or "<svg" in g._repr_svg_()
    assert "<svg" in g._repr_html_()


def test_html_repr_without_graphviz(monkeypatch):
    w, x, a, b, y = seed_program(torch)
    g = viz.forward_graph(y, values=True)
    monkeypatch.setenv("PATH", "")
    html = g._repr_html_()
    assert html.startswith("<pre>") and "a (1) = w + x = 3" in html
    assert g._repr_svg_() is None


# ---------------------------------------------------------------- params= any tensor, node ids


def test_make_dot_and_tree_name_intermediates_and_show_ids():
    w, x, a, b, y = seed_program(torch)
    params = {"w": w, "x": x, "a": a, "b": b}
    source = viz.make_dot(y, params).source
    # The two AddBackward0 boxes are told apart by their ids, and carry the tensor they made.
    assert 'n1 [label="AddBackward0 [#1]\\n→ a"' in source
    assert 'n4 [label="AddBackward0 [#4]\\n→ b"' in source
    assert 'n0 [label="MulBackward0 [#0]"' in source
    assert 'v2 [label="w\\n(1)"' in source
    text = str(viz.tree(y, params))
    assert "├── AddBackward0 [#1] → a" in text and "└── AddBackward0 [#4] → b" in text
    named_output = viz.make_dot(y, {"y": y}).source
    assert 'out0 [label="y\\n(1)"' in named_output
    # A tensor of another graph names nothing.
    other = torch.tensor([1.0], requires_grad=True) * 2
    assert "→" not in viz.make_dot(y, {"other": other}).source


def test_params_with_multi_output_node():
    x = torch.arange(4.0, requires_grad=True)
    first, second = x.split(2)
    y = (first * second).sum()
    text = str(viz.tree(y, {"first": first, "second": second}))
    assert "→ first, second" in text
    g = viz.forward_graph(y, values=True)
    assert [d.label for d in g.nodes] == ["x", "first", "second", "#1", "y"]
    np.testing.assert_array_equal(g.node("second").value, [2.0, 3.0])
    assert [e.op for e in g.edges] == ["split", "split", "×", "×", "sum"]


def test_local_derivatives_match_pytorch():
    def program(lib):
        p = lib.tensor([1.5, -2.0], requires_grad=True)
        q = lib.tensor([0.5, 4.0], requires_grad=True)
        r = p / q
        s = lib.sub(r, p, alpha=2)
        t = s.exp()
        return p, q, r, s, t

    p, q, r, s, t = program(torch)
    tp, tq, tr, ts, tt = program(real_torch)
    g = viz.forward_graph(t, values=True, gradients=True, derivatives=True)
    # Each edge's derivative is d(out)/d(in) with the other inputs held: PyTorch's gradient of
    # the node's output alone, seeded with ones.
    local = {
        ("p", "r"): real_torch.autograd.grad(tp / tq.detach(), tp, real_torch.ones(2)),
        ("q", "r"): real_torch.autograd.grad(tp.detach() / tq, tq, real_torch.ones(2)),
        ("r", "s"): (real_torch.ones(2),),
        ("p", "s"): (-2 * real_torch.ones(2),),
        ("s", "t"): (tt.detach(),),
    }
    for (src, dst), (expected,) in local.items():
        np.testing.assert_allclose(g.edge(src, dst).derivative, expected.numpy(), rtol=1e-6)
    assert g.edge("p", "r").formula == "1/q" and g.edge("q", "r").formula == "-p/q**2"
    assert g.edge("p", "s").formula == "-2"
    expected = torch_grads(tt.sum(), [tp, tq, tr, ts])
    for name, grad in zip("pqrs", expected, strict=True):
        np.testing.assert_allclose(g.node(name).grad, grad.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(g.node("t").value, tt.detach().numpy())


def test_leaf_written_in_place_after_use_is_noted():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    with torch.no_grad():
        w.add_(1.0)  # an optimizer step
    g = viz.forward_graph(y, values=True)
    np.testing.assert_array_equal(g.node("w").value, [2.0, 3.0])
    assert g.notes[1:] == [
        "w was modified in place after the graph used it (version 0 -> 1): the value shown is "
        "its value now"
    ]
    assert g.nodes[1].label == "#1" and g.nodes[1].value is None  # not run again from stale w


def test_leaf_as_output_and_several_outputs():
    w = torch.tensor([3.0], requires_grad=True)
    g = viz.forward_graph(w, values=True, gradients=True)
    assert [(d.label, d.kind) for d in g.nodes] == [("w", "output")] and g.edges == []
    assert g.node("w").grad == 1.0

    x = torch.tensor([2.0, 3.0], requires_grad=True)
    h = x * x
    first = h.sum()
    second = (h * 2).mean()
    tx = real_torch.tensor([2.0, 3.0], requires_grad=True)
    th = tx * tx
    g = viz.forward_graph({"first": first, "second": second}, values=True, gradients=True)
    assert [d.label for d in g.nodes] == ["x", "h", "first", "#4", "second"]
    assert g.title == "first, second"
    # Each output seeded with ones, as backward on both would.
    expected = torch_grads([th.sum(), (th * 2).mean()], [tx, th])
    np.testing.assert_array_equal(g.node("x").grad, expected[0].numpy())
    np.testing.assert_array_equal(g.node("h").grad, expected[1].numpy())
    assert x.grad is None


def test_demo_writes_the_three_seed_pictures(tmp_path, capsys):
    from chainrule.cli.demo import draw_seed_graph

    written = [p.name for p in draw_seed_graph(tmp_path)]
    suffix = ".svg" if shutil.which("dot") else ".dot"
    for kind in ("bare", "values", "gradients"):
        assert f"seed_forward_{kind}{suffix}" in written
    assert "∂y/∂a = b = 2" in (tmp_path / f"seed_forward_gradients{suffix}").read_text()
    printed = capsys.readouterr().out
    assert "y (1) = a × b = 6, grad 1" in printed and "AddBackward0 [#4] → b" in printed
    # The fourth article's Q = 3*a**3 - b**2: PyTorch's a.grad = 9 a**2 = 36, b.grad = -2 b.
    for kind in ("bare", "values", "gradients"):
        assert f"tutorial_forward_{kind}{suffix}" in written
    a = real_torch.tensor(2.0, requires_grad=True)
    b = real_torch.tensor(6.0, requires_grad=True)
    (3 * a**3 - b**2).backward()
    assert f"a () leaf = 2, grad {a.grad.item():g}" in printed  # 36
    assert f"b () leaf = 6, grad {b.grad.item():g}" in printed  # -12
    assert "Q () = " in printed and "= -12, grad 1" in printed
    picture = html.unescape((tmp_path / f"tutorial_forward_gradients{suffix}").read_text())
    assert "∂Q/∂#4 = -1" in picture and "= 3*a**2 = 12" in picture


def test_names_auto_prefers_names_without_underscore():
    w = torch.tensor([1.0], requires_grad=True)
    _ = h = w * 2  # IPython's last output holds the tensor the user named h
    out = h.sum()
    assert [d.label for d in viz.forward_graph(out).nodes] == ["w", "h", "out"]
    assert _ is h


def test_tree_displays_as_preformatted_text_in_notebooks():
    w, x, a, b, y = seed_program(torch)
    text = viz.tree(y, {"w": w, "x": x, "a": a, "b": b})
    shown = text._repr_html_()
    assert shown.startswith('<pre class="chainrule-tree">') and shown.endswith("</pre>")
    assert "└── AddBackward0 [#4] → b" in shown and "\\n" not in shown
    bad = torch.tensor([1.0], requires_grad=True)
    assert "&lt;b&gt;" in viz.tree(bad * 2, {"<b>": bad})._repr_html_()


def conv_program(lib):
    lib.manual_seed(0)
    image = lib.arange(2 * 1 * 5 * 5, dtype=lib.float32).reshape(2, 1, 5, 5) / 50
    weight = lib.arange(3 * 1 * 3 * 3, dtype=lib.float32).reshape(3, 1, 3, 3) / 20 - 0.5
    weight.requires_grad_()
    bias = lib.tensor([0.1, -0.2, 0.3], requires_grad=True)
    feature = lib.nn.functional.conv2d(image, weight, bias, padding=1)
    pooled = lib.nn.functional.max_pool2d(lib.relu(feature), 2).flatten(1)
    linear = lib.linspace(-1, 1, 2 * 12).reshape(2, 12).requires_grad_()
    out = lib.nn.functional.linear(pooled, linear, bias[:2]).sum()  # addmm
    return weight, bias, feature, out


def test_forward_graph_of_a_convolution_net():
    # An addmm node keeps more than (shape, dtype) of its inputs (issue 17: the digits CNN's
    # forward graph failed to build).
    weight, bias, feature, out = conv_program(torch)
    tw, tb, tfeature, tout = conv_program(real_torch)
    tout.backward()
    g = viz.forward_graph(out, values=True, gradients=True, derivatives=True)
    assert g.node("feature").shape == (2, 3, 5, 5)
    assert "convolution(" in str(g) and "addmm(" in str(g)
    np.testing.assert_allclose(g.node("feature").value, tfeature.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.node("out").value, tout.item(), rtol=1e-6)
    np.testing.assert_allclose(g.node("weight").grad, tw.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(g.node("bias").grad, tb.grad.numpy(), rtol=1e-5)
    assert weight.grad is None
