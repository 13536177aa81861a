"""Drawings: torchviz-like DOT, rendered by Graphviz's dot; escaping; no Graphviz; the CLI."""

from __future__ import annotations

import json
import re
import warnings

import pytest

import chainrule
from chainrule import viz
from chainrule.cli import graph as graph_cli
from chainrule.viz.dot import GraphvizMissingWarning

from .conftest import require_dot

NASTY = '<script>alert("x")</script>\\l & </svg>'

requires_dot = pytest.mark.usefixtures("needs_dot")


def seed():
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    return (w + x) * (w + 1), {"w": w, "x": x}


def node_lines(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if "[label=" in line]


def test_seed_drawing_like_torchviz():
    y, params = seed()
    source = viz.make_dot(y, params).source
    boxes = node_lines(source)
    assert [b.split(" ")[0] for b in boxes] == ["n0", "n1", "n2", "v2", "n3", "v3", "n4", "out0"]
    assert 'v2 [label="w\\n(1)"' in source and "fillcolor=lightblue" in source
    edges = re.findall(r"^\t(\w+) -> (\w+)", source, re.MULTILINE)
    # Arrows point forward (as torchviz draws them): leaf -> AccumulateGrad -> ... -> output.
    assert edges == [
        ("v2", "n2"),
        ("v3", "n3"),
        ("n1", "n0"),
        ("n4", "n0"),
        ("n2", "n1"),
        ("n3", "n1"),
        ("n2", "n4"),
        ("n0", "out0"),
    ]
    again, again_params = seed()
    assert viz.make_dot(again, again_params).source == source  # same program, same drawing


def test_show_saved_and_attrs():
    y, params = seed()
    source = viz.make_dot(y, params, show_saved=True, show_attrs=True).source
    assert 'label="self\\n(1) float32"' in source and "fillcolor=orange" in source
    assert "other: [saved tensor] (1) float32" in source
    assert "n0 -> s0 [dir=none]" in source


def test_saved_leaf_is_drawn_as_its_leaf_box():
    w = chainrule.ones(3, requires_grad=True)
    y = (w * w).sum()
    source = viz.make_dot(y, {"w": w}, show_saved=True).source
    assert "n1 -> v2 [dir=none]" in source  # MulBackward0 saved w (twice: one edge per save)
    assert "fillcolor=orange" not in source


def test_labels_are_escaped():
    p = chainrule.ones(2, requires_grad=True)
    source = viz.make_dot((p * 2).sum(), {NASTY: p}).source
    assert '<script>alert(\\"x\\")</script>\\\\l & </svg>' in source  # a quoted string, not HTML
    assert "label=<" not in source


@requires_dot
def test_escaped_label_renders_as_text():
    p = chainrule.ones(2, requires_grad=True)
    svg = viz.make_dot((p * 2).sum(), {NASTY: p}).pipe(format="svg", encoding="utf-8")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\l &amp; &lt;/svg&gt;" in svg
    assert "<script" not in svg


@requires_dot
@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_render_formats(tmp_path, fmt):
    y, params = seed()
    path = viz.make_dot(y, params).render(tmp_path / "seed", format=fmt)
    assert path == str(tmp_path / f"seed.{fmt}")
    head = (tmp_path / f"seed.{fmt}").read_bytes()[:8]
    assert head.startswith({"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF"}[fmt])


@requires_dot
def test_svg_has_one_element_per_node_with_our_ids():
    y, params = seed()
    svg = viz.make_dot(y, params).pipe(format="svg", encoding="utf-8")
    ids = re.findall(r'<g id="(\w+)" class="node', svg)
    assert sorted(ids) == ["n0", "n1", "n2", "n3", "n4", "out0", "v2", "v3"]
    assert ">MulBackward0 [#0]</text>" in svg


@requires_dot
def test_jupyter_display():
    y, params = seed()
    dot = viz.make_dot(y, params)
    assert dot._repr_svg_().lstrip().startswith("<?xml")
    assert "image/svg+xml" in dot._repr_mimebundle_()


def test_without_graphviz_the_source_is_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    y, params = seed()
    dot = viz.make_dot(y, params)
    with pytest.warns(GraphvizMissingWarning, match="apt-get install graphviz"):
        path = dot.render(tmp_path / "seed", format="svg")
    assert path == str(tmp_path / "seed")
    assert (tmp_path / "seed").read_text().startswith("digraph {")
    assert not viz.has_dot()
    bundle = dot._repr_mimebundle_()
    assert "Install Graphviz" in bundle["text/plain"]
    with pytest.raises(viz.GraphvizNotFoundError, match="Install Graphviz"):
        viz.explore(y, tmp_path / "page.html", params, record=False)


def test_modules_drawn_as_clusters():
    class Net(chainrule.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = chainrule.nn.Linear(3, 4)
            self.fc2 = chainrule.nn.Linear(4, 1)

        def forward(self, x):
            return self.fc2(chainrule.relu(self.fc1(x)))

    net = Net()
    with viz.record_modules(net) as rec:
        loss = net(chainrule.ones(2, 3)).sum()
    source = viz.make_dot(loss, dict(net.named_parameters()), modules=rec).source
    assert source.count("subgraph cluster_") == 3
    assert 'label="fc1 (Linear)"' in source
    collapsed = viz.make_dot(loss, dict(net.named_parameters()), modules=rec, collapse=True)
    assert [b.split(" ")[0] for b in node_lines(collapsed.source)] == ["n0", "g0", "out0"]


SCRIPT = """
import chainrule as torch
model = torch.nn.Linear(3, 2)
w = torch.ones(2, requires_grad=True)
loss = (model(torch.ones(4, 3)) * w).sum()
"""


@pytest.mark.parametrize("suffix", [".dot", ".txt", ".svg", ".html"])
def test_cli_graph(tmp_path, capsys, suffix):
    if suffix in (".svg", ".html"):
        require_dot()
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"graph{suffix}"
    assert graph_cli.main([str(script), "--var", "loss", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    text = out.read_text()
    if suffix == ".txt":
        assert "← model.weight (2, 3) float32" in text and "← w (2) float32" in text
    elif suffix == ".html":
        data = re.search(r'id="graph-data">(.*?)</script>', text, re.DOTALL).group(1)
        assert len(json.loads(data)["steps"]) == 7  # every node of the graph ran once
    else:
        assert "model.bias" in text


def test_cli_graph_errors(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    assert graph_cli.main([str(script), "--var", "nope", "--out", "-"]) == 2
    assert "tensors defined by s.py: loss, w" in capsys.readouterr().err
    assert graph_cli.main([str(tmp_path / "missing.py")]) == 2


def test_cli_dispatcher_lists_graph():
    from chainrule.__main__ import COMMANDS

    assert "graph" in COMMANDS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert graph_cli.build_parser().parse_args(["s.py"]).out == "graph.svg"


def page_json(path) -> dict:
    text = path.read_text()
    return json.loads(re.search(r'id="graph-data">(.*?)</script>', text, re.DOTALL).group(1))


@requires_dot
def test_explore_a_freed_graph(tmp_path):
    from chainrule.autograd.stepping import backward_steps

    y, params = seed()
    steps = list(backward_steps(y))  # runs the backward pass and frees the graph
    data = page_json(viz.explore(y, tmp_path / "given.html", params, steps=steps))
    assert [s["node"] for s in data["steps"]] == [0, 4, 1, 2, 3]
    assert data["nodes"]["0"]["released"] is True
    assert data["steps"][0]["out"][0]["values"] == [2.0]  # dy/da = b = 2
    y, params = seed()
    y.backward()
    data = page_json(viz.explore(y, tmp_path / "freed.html", params))
    assert data["steps"] == [] and "could not be recorded" in data["note"]
    assert params["w"].grad.item() == 5.0  # untouched by the failed recording
