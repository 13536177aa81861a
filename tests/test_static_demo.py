"""The demo's static-versus-dynamic comparison (``python -m chainrule demo``, section 5)."""

from __future__ import annotations

from chainrule.cli.static_demo import compare_static_and_dynamic


def test_the_seed_example_three_ways_gives_the_same_numbers(tmp_path, capsys):
    written = compare_static_and_dynamic(tmp_path, number=5)
    text = capsys.readouterr().out
    assert 'Tensor("Mul:0", shape=(), dtype=float32)\n    6.0' in text
    assert (
        "y, dy/dw, dy/dx: Session.run [6.0, 5.0, 2.0] | eager [6.0, 5.0, 2.0] "
        "| compiled [6.0, 5.0, 2.0]"
    ) in text
    assert "    def backward(add_1, add, grad_mul):\n        grad_add = grad_mul * add_1" in text
    for label in ("static: Session.run", "dynamic: eager", "compiled: forward + backward"):
        assert label in text
    assert [p.stem for p in written] == ["static_seed_graph", "compiled_seed_joint_graph"]
    assert all(p.exists() for p in written)
